"""The forward estimand with σ estimated (``sigma_dof``): a prediction interval.

The forward target, the metric on labels drawn around ``y_true`` with the true
σ, is random given the test set. With ``σ̂² ~ σ² χ²_ν/ν`` in place of σ its
interval is one for a new value over both the label draw and σ̂'s error: the
centre unbiased in σ̂, the variance the label noise's plus σ̂'s own (each
estimated without bias), and Student's quantiles on the log scale at the
degrees of freedom of that variance estimate, half Welch–Satterthwaite's as the
truth's :class:`~.pivots.SigmaHatPivot` (user guide: :ref:`sigma_dof`). The
kernels take the truth kernels' arguments (:mod:`.estimands`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import betainc, gammaln, stdtrit

from ...._noisy_score import PIVOT_PROBABILITIES
from ....utils._unified_interval import SquareRootInterval
from .estimands import RegressionEstimate
from .pivots import StudentizedPivot
from .sums import bounded_root, folded_moments, squared_error_sums, weighted

__all__ = [
    "LogTPivot",
    "folded_sigma_hat",
    "mae_forward",
    "mse_forward",
    "rmse_forward",
]


class LogTPivot(StudentizedPivot):
    """Student's quantiles on the log scale, as a pivot of the estimate;
    ``prediction_share``: the share of the variance that a new test set's
    prediction interval takes as its label part (σ̂'s own variance is in the
    test-set terms' spread already)."""

    method = "log_t"
    prediction_share = 1.0


def _degrees(
    raw: np.ndarray,
    own: np.ndarray,
    covariance: np.ndarray,
    spread: np.ndarray,
    mean: np.ndarray,
    weight: np.ndarray | None,
    w_sum: float,
) -> tuple[np.ndarray, np.ndarray]:
    """The degrees of freedom of the interval's two ends from the per-sample
    variance terms' own variances ``own`` over σ̂ (``raw = Σ w² v̂``), their
    covariances with the centre's terms and those terms' variances ``spread``
    (``mean``: the centre): for the upper end, half Welch–Satterthwaite's of
    ``V̂``, as the truth's :class:`~.pivots.SigmaHatPivot`: a low σ̂ lowers the
    centre and ``V̂`` together, and the interval misses above; for the lower
    end, Satterthwaite's of the log scale's ``V̂/m̂²`` (delta method), which
    varies less, ``V̂`` and ``m̂`` moving together."""
    with np.errstate(divide="ignore", invalid="ignore"):
        relative = weighted(own, weight, 4) / (raw * raw)
        scale = w_sum * mean
        ratio = relative - 4.0 * weighted(covariance, weight, 3) / (raw * scale)
        ratio = ratio + 4.0 * weighted(spread, weight, 2) / (scale * scale)
        return 1.0 / relative, np.where(ratio > 0.0, 2.0 / ratio, np.inf)


def _log_t_pivots(
    estimate: np.ndarray,
    variance: np.ndarray,
    dof: tuple[np.ndarray, np.ndarray],
    share: np.ndarray,
) -> list[LogTPivot | None]:
    """Each output's :class:`LogTPivot`: the ends ``m exp(∓t SD/m)``, ``t``
    Student's at the upper and lower end's degrees of freedom ``dof``
    (:func:`_degrees`)."""
    pivots = []
    for m, v, f, f_low, p in zip(estimate, variance, *dof, share, strict=True):
        if not (m > 0.0 and 0.0 < v < math.inf and f > 0.0 and f_low > 0.0):
            pivots.append(None)
            continue
        p_grid = np.asarray(PIVOT_PROBABILITIES)  # below 0.5: the upper end's
        t = np.where(p_grid < 0.5, stdtrit(f, p_grid), stdtrit(f_low, p_grid))
        ends = m * np.exp(-t * math.sqrt(v) / m)  # m − SD·pivot at each probability
        pivot = LogTPivot(((m - ends) / math.sqrt(v)).tolist())
        pivot.prediction_share = float(p)
        pivots.append(pivot if np.all(np.isfinite(pivot)) else None)
    return pivots


def _squared(
    y: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    sigma_dof: Any,
    weight: np.ndarray | None,
    terms: Any,
) -> tuple[Any, ...]:
    """The forward MSE with σ̂: ``(sums, estimate, variance, dof, share, known)``,
    ``known`` the label noise's variance alone.

    ``Σ w (d² + σ̂²) / W``; its error's variance ``Σ w² (4 d² σ² + 2 σ⁴ + 2 σ⁴/ν)``
    by ``4 d² σ̂² + 2 σ̂⁴ (ν + 1)/(ν + 2)``; that estimate's own variance from
    ``E σ̂^{2k} = σ^{2k} c_k``, ``c_k = Π_{j<k} (1 + 2j/ν)``; a new test set's
    label part ``4 d² σ² + 2 σ⁴ − 2 σ⁴/ν``."""
    sums = squared_error_sums(y, y_pred, sigma, weight, sigma_dof, terms=terms)
    w_sum = sums.weight
    estimate = (sums.d2 + sums.s2) / w_sum
    raw = 4.0 * sums.s2d2 + 2.0 * (sums.s4 - sums.s4_dof)
    label = np.maximum(4.0 * sums.s2d2 + 2.0 * sums.s4 - 6.0 * sums.s4_dof, 0.0)
    d2 = np.square(y - y_pred)
    s2 = np.broadcast_to(np.square(sigma), d2.shape)
    i = 1.0 / np.asarray(sigma_dof, dtype=float)
    c4 = 1.0 + 2.0 * i
    c6 = c4 * (1.0 + 4.0 * i)
    c8 = c6 * (1.0 + 6.0 * i)
    c = (1.0 + i) / c4  # (ν + 1)/(ν + 2)
    # Var(4 d² σ̂² + 2c σ̂⁴), its covariance with σ̂², Var σ̂², each power of σ
    # by its unbiased estimate
    s4, s6 = s2 * s2 / c4, s2**3 / c6
    own = 32.0 * i * d2 * d2 * s4 + 64.0 * c * i * d2 * s6 * c4
    own = own + 4.0 * c * c * (c8 - c4 * c4) * s2**4 / c8
    covariance = 8.0 * i * (d2 * s4 + c * c4 * s6)
    dof = _degrees(raw, own, covariance, 2.0 * i * s4, estimate, weight, w_sum)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(raw > 0.0, label / raw, 1.0)
    known = weighted(4.0 * d2 * s2 + 2.0 * s4, weight, 2) / w_sum**2
    return sums, estimate, raw / w_sum**2, dof, share, known


def mse_forward(
    y: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    sigma_dof: Any,
    weight: np.ndarray | None = None,
    *,
    shared: Any = None,
    terms: Any = None,
) -> RegressionEstimate:
    """The forward MSE with σ̂ (:func:`_squared`) and its :class:`LogTPivot`."""
    sums, estimate, variance, dof, share, _ = _squared(
        y, y_pred, sigma, sigma_dof, weight, terms
    )
    pivots = _log_t_pivots(estimate, variance, dof, share)
    nominal, flag = sums.d2 / sums.weight, np.zeros(estimate.shape, dtype=bool)
    return RegressionEstimate(
        estimate, variance, nominal, flag, pivots=pivots, sampling=sums.terms
    )


def rmse_forward(
    y: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    sigma_dof: Any,
    weight: np.ndarray | None = None,
    *,
    shared: Any = None,
    terms: Any = None,
) -> RegressionEstimate:
    """The forward RMSE with σ̂: the root of the MSE's (:func:`bounded_root`, for
    the label noise's curvature), its interval the square roots of the MSE's
    ends (a :class:`SquareRootInterval` with the MSE's pivot), as the truth's."""
    sums, estimate, variance, dof, share, known = _squared(
        y, y_pred, sigma, sigma_dof, weight, None
    )
    root, _, _ = bounded_root(estimate, known)
    _, root_variance, _ = bounded_root(estimate, variance)
    exact = root_variance > 0.0
    factor = np.sqrt(np.where(exact, variance / np.where(exact, root_variance, 1.0), 0))
    intervals = [
        SquareRootInterval(float(t), float(f))
        for t, f in zip(estimate, factor, strict=True)
    ]
    pivots = _log_t_pivots(estimate, variance, dof, share)
    nominal = np.sqrt(sums.d2 / sums.weight)
    flag = np.zeros(estimate.shape, dtype=bool)
    return RegressionEstimate(root, root_variance, nominal, flag, intervals, pivots)


def folded_sigma_hat(
    d: np.ndarray, s: np.ndarray, nu: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``g = E|d + σ̂ √ν B|`` and ``∂g/∂σ̂``: ``B`` is a coordinate of a point
    uniform on the sphere of ``R^ν`` (density ``∝ (1 − b²)^{(ν−3)/2}``), so
    ``σ̂ √ν B ~ N(0, σ²)`` and ``E g = E|d + σZ|``, for ``ν ≥ 1`` (below, as 1).
    At ``ν = 1`` ``g = max(|d|, σ̂)``; ``ν = ∞``: the folded normal mean at σ̂."""
    nu = np.broadcast_to(np.maximum(nu, 1.0), d.shape)
    finite = np.isfinite(nu)
    v = np.where(finite, nu, 1.0)
    a = s * np.sqrt(v)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(a > 0.0, 1.0 - np.square(d / a), 0.0)
        kernel = np.exp(gammaln(v / 2.0) - gammaln((v + 1.0) / 2.0))
        slope = np.where(
            x > 0.0, np.sqrt(v / math.pi) * kernel * x ** ((v - 1.0) / 2.0), 0.0
        )
        below = np.where(x > 0.0, betainc((v - 1.0) / 2.0, 0.5, np.maximum(x, 0.0)), 0)
    g = d * (1.0 - below) + s * slope
    mean = folded_moments(d, s)[0]
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        density = np.where(s > 0.0, np.exp(-0.5 * np.square(d / s)), 0.0)
    density = density * math.sqrt(2.0 / math.pi)  # ∂ E|d + sZ| / ∂s = 2 φ(d/s)
    return np.where(finite, g, mean), np.where(finite, slope, density)


def mae_forward(
    y: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    sigma_dof: Any,
    weight: np.ndarray | None = None,
    *,
    shared: Any = None,
    terms: Any = None,
) -> RegressionEstimate:
    """The forward MAE with σ̂: ``Σ w g / W`` (:func:`folded_sigma_hat`, unbiased);
    the variance of its error ``Σ w² (Var|d + σZ| + Var g)`` by ``d² + σ̂² + g² −
    2 f²`` (``f`` the folded mean at σ̂, ``f²`` unbiased at ``d = 0``), at least
    ``(1 − 2/π) Σ w² σ̂²``; that estimate's variance to first order in σ̂²
    (``Var σ̂² = 2σ⁴/ν`` by ``2σ̂⁴/(ν + 2)``); a new test set's label part
    ``Var|d + σZ| − Var g`` by ``d² + σ̂² − g²``."""
    d = np.abs(y - y_pred)
    s = np.broadcast_to(np.asarray(sigma, dtype=float), d.shape)
    nu = np.broadcast_to(np.asarray(sigma_dof, dtype=float), d.shape)
    g, slope = folded_sigma_hat(d, s, nu)
    f = folded_moments(d, s)[0]
    s2 = s * s
    w_sum = float(d.shape[0]) if weight is None else float(weight.sum())
    raw = weighted(d * d + s2 + g * g - 2.0 * f * f, weight, 2)
    raw = np.maximum(raw, (1.0 - 2.0 / math.pi) * weighted(s2, weight, 2))
    label = np.maximum(weighted(d * d + s2 - g * g, weight, 2), 0.0)
    with np.errstate(divide="ignore", invalid="ignore", under="ignore"):
        phi = np.where(s > 0.0, np.exp(-0.5 * np.square(d / s)), 0.0)
        grad = np.where(
            s > 0.0, (g * slope - 4.0 * f * phi / math.sqrt(2 * math.pi)) / s, 0
        )
        # Var σ̂² by 2σ̂⁴/(ν + 2); ∂g/∂σ̂² = slope/(2σ̂)
        own = np.square(1.0 + grad) * 2.0 * s2 * s2 / (nu + 2.0)
        covariance = (1.0 + grad) * slope * s * s2 / (nu + 2.0)
        share = np.where(raw > 0.0, label / raw, 1.0)
    estimate = weighted(g, weight) / w_sum
    spread = g * g - f * f  # Var g at σ̂: unbiased at d = 0
    dof = _degrees(raw, own, covariance, spread, estimate, weight, w_sum)
    variance = raw / w_sum**2
    pivots = _log_t_pivots(estimate, variance, dof, share)
    nominal = weighted(d, weight) / w_sum
    flag = np.zeros(estimate.shape, dtype=bool)
    return RegressionEstimate(estimate, variance, nominal, flag, pivots=pivots)
