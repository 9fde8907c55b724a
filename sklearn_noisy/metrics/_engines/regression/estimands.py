"""Truth and remeasurement estimates of the regression losses, and their results.

The kernels take validated inputs: ``y`` and ``y_pred`` float64 ``(n_samples,
n_outputs)``, ``sigma`` a float or columns (or a
:class:`~sklearn_noisy.utils._noise.PoissonNoise`: counts, whose sums are
:mod:`.counts`'), ``sigma_dof`` None (σ known) or
``ν > 0`` (``inf``: known), ``weight`` None or 1-D. With ``σ̂² ~ σ² χ²_ν/ν``,
``s4 = σ̂⁴ ν/(ν + 2)`` is unbiased for ``σ⁴``. Every variance is floored at an
unbiased estimate of its lower bound, the ``σ⁴`` part of the quadratic form
(user guide: :ref:`formula_truth`, :ref:`variance_floor`, :ref:`sigma_dof`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from scipy.special import gammaln, ndtr

from ...._noisy_score import PIVOT_MAX_SAMPLES, NoisyScore
from ....utils._arrays import chunk_of, chunks
from ....utils._noise import PoissonNoise, check_sigma_dof
from ....utils._unified_interval import SquareRootInterval
from ....utils._warnings import warn
from ..test_set_sampling import total_variance, with_term_moments
from .counts import count_log_r2_pivots, count_r2_sums, count_squared_error_sums
from .pivots import (
    fiducial_pivots,
    folded_cumulants,
    log_r2_pivots,
    remeasurement_r2_pivots,
    skew_pivots,
)
from .quadrature import LEGENDRE_64
from .r2_offsets import (
    offsets_cube_trace,
    offsets_mse_pivots,
    offsets_third_cumulant,
    with_offsets,
)
from .sums import (
    T_MAX,
    R2Sums,
    absolute_error_offsets,
    r2_from_sums,
    squared_error_sums,
    weighted,
)

#: A RegressionLoss: the definitions import this engine, not the reverse.
RegressionLoss = Any

__all__ = [
    "R2Sums",
    "RegressionEstimate",
    "aggregate_outputs",
    "check_regression_sigma_dof",
    "delta_numerator",
    "estimand_score",
    "mae_remeasurement",
    "mse_remeasurement",
    "mse_truth",
    "r2_remeasurement",
    "r2_sums",
    "r2_truth",
    "rmse_remeasurement",
    "rmse_truth",
    "truth_root_variance",
]


class RegressionEstimate(NamedTuple):
    """Per-output ``estimate``, ``variance``, ``nominal``, degenerate ``flag``,
    for a root metric each output's :class:`SquareRootInterval`, and each
    output's label-noise pivot (``NoisyScore.label_pivot``)."""

    estimate: np.ndarray
    variance: np.ndarray
    nominal: np.ndarray
    flag: np.ndarray
    intervals: list[SquareRootInterval] | None = None
    pivots: list[tuple[float, ...] | None] | None = None
    sampling: Any = None


def _squared_error_sums(
    y: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    sigma_dof: Any,
    weight: np.ndarray | None,
    *,
    k: float,
    floor_k: float,
    shared: Any = None,
    **parts: Any,
) -> tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray, Any]:
    """``(W, Σ w d̃², Σ w (σ̂² + τ²), variance sum, floor sum, sums)`` per output:
    the variance sum unbiased for the truth MSE's (``k = 3``) or the nominal's
    (``k = 2``), the floor sum for their lower bounds (user guide:
    :ref:`formula_truth`, :ref:`shared_offsets`); ``parts``: more sums."""
    sums = squared_error_sums(
        y, y_pred, sigma, weight, sigma_dof, shared=shared, **parts
    )
    variance = 4.0 * sums.s2d2 - 2.0 * sums.s4 + 2.0 * k * sums.s4_dof
    floor = 2.0 * sums.s4 - 2.0 * floor_k * sums.s4_dof
    if shared is not None:
        # the first sum holds 4 Σ w² σ² τ² already (E d̃² = d² + σ² + τ²)
        variance = variance + 4.0 * sums.batch_products + 2.0 * sums.t4
        floor = floor + 4.0 * sums.t2s2 + 2.0 * sums.t4
        if k == 3.0:  # truth: it subtracts Σ_g τ̂² W_g, with τ̂²'s own variance
            w_g = shared.group_sum(np.ones(y.shape[0]) if weight is None else weight)
            uncertainty = shared.tau2_covariance(w_g[:, None], w_g[:, None])
            variance, floor = variance + uncertainty, floor + uncertainty
    return sums.weight, sums.d2, sums.s2 + sums.t2, variance, floor, sums


def _mse(
    y: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    sigma_dof: Any = None,
    weight: np.ndarray | None = None,
    *,
    truth: bool,
    shared: Any = None,
    terms: Any = None,
) -> RegressionEstimate:
    """The truth MSE ``Σ w (d̃² − σ̂² − τ²) / W`` (unbiased), or the nominal
    MSE, exactly unbiased for its remeasurement (new batch offsets); with their
    variances; ``terms``: the moments of the per-sample terms too."""
    small = y.shape[0] <= PIVOT_MAX_SAMPLES
    if isinstance(sigma, PoissonNoise):
        *sums, skew = count_squared_error_sums(
            y, y_pred, sigma, weight, truth=truth, skew=small
        )
        sums = (*sums, None)
    else:
        # The pivot is measured for independent Gaussian errors: under batch
        # offsets a fiducial inversion of Σ w d̃² (offsets_mse_pivots).
        skew = shared is None
        sums = _squared_error_sums(
            y,
            y_pred,
            sigma,
            sigma_dof,
            weight,
            k=3.0 if truth else 2.0,
            floor_k=1.0 if truth else 2.0,
            shared=shared,
            terms=terms,
            skew=truth if skew and small else None,
        )
    w_sum, nominal, s2_sum, raw, floor, parts = sums
    estimate = (nominal - s2_sum) / w_sum if truth else nominal / w_sum
    variance = np.maximum(raw, floor) / (w_sum * w_sum)
    skew = skew if parts is None else parts.skew
    pivots, studentized = None, truth and sigma_dof is not None
    if skew is not None:
        known = sigma_dof is None and not isinstance(sigma, PoissonNoise)
        pivots = skew_pivots(
            skew, w_sum, variance, raw, studentized=studentized, known=known
        )
    estimated = truth and getattr(shared, "fiducial", None) is not None
    known_offsets = shared is not None and shared.dof is None and any(shared.tau2)
    if estimated and sigma_dof is not None:
        data = (y, y_pred, sigma, sigma_dof, weight)
        sums_at = functools.partial(_squared_error_sums, *data, k=3.0, floor_k=1.0)
        pivots = fiducial_pivots(estimate, variance, sums_at, shared)
    elif sigma_dof is None and (estimated or known_offsets):
        truth_estimate = (nominal - s2_sum) / w_sum
        pivots = offsets_mse_pivots(
            y - y_pred, sigma, weight, shared, truth_estimate, variance
        )
    return RegressionEstimate(
        estimate,
        variance,
        nominal / w_sum,
        np.zeros(nominal.shape, dtype=bool),
        pivots=pivots,
        sampling=None if parts is None else parts.terms,
    )


def _root_spread(rho: np.ndarray) -> np.ndarray:
    """``Var g(Z)``, ``Z ~ N(ρ, 1)``, ``g`` the truth RMSE at ``V = 1``, by
    Gauss–Legendre quadrature centred at ``g(max(ρ, 1))``."""
    nodes, weights = LEGENDRE_64
    rho = rho[:, None]
    centre = np.maximum(rho, 1.0)
    root_c = np.sqrt(centre)
    c = root_c + 0.125 / centre**1.5
    u = 0.5 * (nodes + 1.0)  # (0, 1): z = u², dz = 2u du
    z = u * u
    inner = np.exp(-0.5 * (z - rho) ** 2) * u * weights  # 2u · ½ (the map)
    low = np.maximum(rho - 10.0, 1.0)
    half = 0.5 * np.maximum(rho + 10.0 - low, 0.0)
    z = low + half * (nodes + 1.0)
    outer = np.exp(-0.5 * (z - rho) ** 2) * half * weights
    root_z = np.sqrt(z)
    shift = (z - centre) / (root_z + root_c) + 0.125 * (z**-1.5 - centre**-1.5)
    first = second = 0.0
    for value, mass in ((u + 0.125 - c, inner), (shift, outer)):
        first = first + (value * mass).sum(axis=1)
        second = second + (value * value * mass).sum(axis=1)
    below = ndtr(-rho[:, 0])  # g = 0 there: g − c = −c
    first = first / math.sqrt(2.0 * math.pi) - below * c[:, 0]
    second = second / math.sqrt(2.0 * math.pi) + below * c[:, 0] ** 2
    return np.maximum(second - first * first, 0.0)


def truth_root_variance(estimate: np.ndarray, variance: np.ndarray) -> np.ndarray:
    """The truth RMSE's variance from the MSE's ``T̂`` and ``V``: that of the
    estimator at ``T̂ ~ N(max(T̂, 0), V)`` (:func:`_root_spread`), else delta."""
    variance = np.maximum(variance, 0.0)
    scale = np.maximum(estimate, np.sqrt(variance))
    delta = np.where(
        scale > 0.0, variance / (4.0 * np.where(scale > 0.0, scale, 1.0)), 0.0
    )
    sd = np.sqrt(np.where(variance > 0.0, variance, 1.0))
    rho = np.where(variance > 0.0, np.maximum(estimate, 0.0) / sd, 1.0)
    spread = np.where(variance > 0.0, sd * _root_spread(rho), 0.0)
    return np.where(spread > 0.0, spread, delta)


def _rmse(*data: Any, truth: bool, shared: Any = None) -> RegressionEstimate:
    """The RMSE from the MSE estimate ``T̂`` of ``data``: truth ``√T̂ + V/(8 s^{3/2})``,
    ``s = max(T̂, √V)``, or the nominal; the interval is the square root of the MSE's."""
    mse = _mse(*data, truth=truth, shared=shared)
    variance = np.maximum(mse.variance, 0.0)
    scale = np.maximum(mse.estimate, np.sqrt(variance))
    positive = scale > 0.0
    safe = np.where(positive, scale, 1.0)
    flag = mse.estimate <= 0.0
    estimate = nominal = np.sqrt(mse.nominal)
    root_variance = np.where(positive, variance / (4.0 * safe), 0.0)
    factor = 2.0 * np.sqrt(np.where(positive, scale, 0.0))  # dT/d√T
    if truth:
        correction = np.where(positive, variance / (8.0 * safe * np.sqrt(safe)), 0.0)
        root = np.sqrt(np.maximum(mse.estimate, 0.0))
        estimate = np.where(flag, 0.0, root + correction)
        root_variance = truth_root_variance(mse.estimate, variance)
        # the interval stays the square root of the MSE's: √V / root SD
        exact = (root_variance > 0.0) & (variance > 0.0)
        ratio = variance / np.where(exact, root_variance, 1.0)
        factor = np.where(exact, np.sqrt(ratio), factor)
    elif shared is not None and np.any(shared.tau2 > 0.0):
        # the offsets' skew κ₃ (its quadratic part): −κ₃/(8s²) in the root's
        # variance, as exp(−κ₃/(2sV)); the interval stays the MSE's (shared_offsets)
        y, _, sigma, _, weight = data
        w_sum = float(y.shape[0]) if weight is None else float(weight.sum())
        kappa = 8.0 * offsets_cube_trace(shared, weight, sigma) / w_sum**3
        spread = np.where(positive & (variance > 0.0), safe * variance, np.inf)
        skew = np.exp(-kappa / (2.0 * spread))
        root_variance, factor = root_variance * skew, factor / np.sqrt(skew)
    intervals = [
        SquareRootInterval(float(t), float(f))
        for t, f in zip(mse.estimate, factor, strict=True)
    ]
    return RegressionEstimate(
        estimate, root_variance, nominal, flag, intervals, mse.pivots
    )


mse_truth = functools.partial(_mse, truth=True)
mse_remeasurement = functools.partial(_mse, truth=False)
rmse_truth = functools.partial(_rmse, truth=True)
rmse_remeasurement = functools.partial(_rmse, truth=False)


def _folded_variance_estimate(t: np.ndarray) -> np.ndarray:
    """``h(t) - h''(t)/2``, ``h(t) = Var|t + Z|``: the MAE's variance in σ² units."""
    phi = np.exp(-0.5 * t * t) / np.sqrt(2.0 * np.pi)
    upper = ndtr(-t)
    g = phi - t * upper
    slope = 1.0 - 2.0 * upper
    k = slope * slope + 2.0 * (t + 2.0 * g) * phi - 4.0 * g * (t + g)
    return np.maximum(k, 0.0)


def _folded_derivatives(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``k'(t)`` and ``k''(t)``, ``k`` of :func:`_folded_variance_estimate`."""
    phi = np.exp(-0.5 * t * t) / np.sqrt(2.0 * np.pi)
    upper = ndtr(-t)
    g = phi - t * upper
    slope = 1.0 - 2.0 * upper
    first = 6.0 * slope * phi - 2.0 * t * (t + 2.0 * g) * phi + 4.0 * upper * t
    first += 8.0 * upper * g - 4.0 * g
    second = 12.0 * phi * phi - 6.0 * t * slope * phi - 8.0 * t * phi
    second += (2.0 * t**3 - 12.0 * g + 4.0 * t * upper + 4.0 * t * t * g) * phi
    second += 8.0 * upper * (1.0 - upper)
    return first, second


def _cube_bias(inverse: Any) -> Any:
    """``σ³ / E σ̂³`` for ``σ̂² ~ σ² χ²_ν/ν``, ``inverse = 1/ν`` (1 at 0)."""
    half = 0.5 / np.maximum(inverse, 1e-8)
    return half**1.5 * np.exp(gammaln(half) - gammaln(half + 1.5))


def mae_remeasurement(
    y: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    sigma_dof: Any = None,
    weight: np.ndarray | None = None,
    shared: Any = None,
) -> RegressionEstimate:
    """The nominal MAE and its variance, floored at ``Σ w² σ̂² (1 - 2/π) / W²``
    (batch offsets: the forward variance estimated, :ref:`shared_offsets`).

    With ``sigma_dof`` ``ν`` each term ``g(σ̂²) = σ̂² k(|d̃|/σ̂)``, concave in
    ``σ̂²``, is corrected to second order for ``σ̂²``'s own variance (estimated
    without bias by ``2σ̂⁴/(ν + 2)``): ``− g''(σ̂²) σ̂⁴/(ν + 2)``. Each output's
    Cornish–Fisher pivot from the terms' third cumulant and their covariance
    with the variance estimate, at ``|d̃|/σ̂``; with ``sigma_dof`` both times
    ``σ³/E σ̂³ · ν/(ν + 1)``, on Student's base at half the Satterthwaite degrees
    of freedom of the variance estimate's σ̂ part, ``Σ w⁴ g'² σ̂⁴ 2/ν``
    (user guide: :ref:`sigma_dof`)."""
    n_samples, n_outputs = y.shape
    if shared is not None:
        nominal, _, variance = absolute_error_offsets(
            y, y_pred, sigma, weight, shared, estimated=True
        )
        flag = np.zeros(n_outputs, dtype=bool)
        return RegressionEstimate(nominal, variance, nominal, flag)
    skew = n_samples <= PIVOT_MAX_SAMPLES
    unit = (float(np.max(sigma)) or 1.0) if skew else 1.0  # the pivot's σ scale
    totals = np.zeros((6, n_outputs))
    for rows in chunks(n_samples):
        d = np.abs(y[rows] - y_pred[rows])
        w = None if weight is None else weight[rows]
        s = chunk_of(sigma, rows)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.fmin(d / s, T_MAX)
        s2 = np.broadcast_to(np.square(s), d.shape)
        k = _folded_variance_estimate(t)
        if sigma_dof is not None:  # t (k' − t k''): −4 s²/σ̂² ∂²k/∂s², s = σ̂²
            first, second = _folded_derivatives(t)
            curvature = t * (first - t * second)
            k = k + curvature / (4.0 * (chunk_of(sigma_dof, rows) + 2.0))
        totals[0] += weighted(d, w)
        totals[1] += weighted(s2 * k, w, 2)
        totals[2] += weighted(s2, w, 2)
        if skew:
            s3 = np.broadcast_to((s / unit) ** 3, d.shape)
            third, covariance = folded_cumulants(t, _folded_variance_estimate)
            if sigma_dof is not None:
                inverse = 1.0 / chunk_of(sigma_dof, rows)
                s3 = s3 * _cube_bias(inverse) / (1.0 + inverse)
                slope = k - t * first / 2.0  # g' = k − t k'/2, g = σ̂² k(|d̃|/σ̂)
                own = 4.0 * inverse * np.square(s2 / unit**2 * slope)
                totals[5] += weighted(np.broadcast_to(own, d.shape), w, 4)
            totals[3:5] += [weighted(s3 * f, w, 3) for f in (third, covariance)]
    total = float(n_samples) if weight is None else float(weight.sum())
    variance = np.maximum(totals[1], (1.0 - 2.0 / np.pi) * totals[2])
    nominal = totals[0] / total
    variance = variance / (total * total)
    pivots = None
    if skew:
        scaled = variance / unit**2
        pivots = skew_pivots(totals[3:], total, scaled, scaled * total**2)
    flag = np.zeros(n_outputs, dtype=bool)
    return RegressionEstimate(nominal, variance, nominal, flag, pivots=pivots)


def r2_sums(
    y: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    sigma_dof: Any = None,
    weight: np.ndarray | None = None,
    *,
    centred: bool = False,
    shared: Any = None,
    exact_batches: bool = False,
) -> R2Sums:
    """The :class:`R2Sums` of validated inputs, in two passes (user guide:
    :ref:`formula_r2`); ``centred``: explained variance; ``shared``: batch offsets."""
    n_samples, n_outputs = y.shape
    w_sum = float(n_samples) if weight is None else float(weight.sum())
    mean = weighted(y, weight) / w_sum
    shift = weighted(y - y_pred, weight) / w_sum if centred else 0.0
    # Rows: X, Y, Σw²σ̂²d̃², Σw²σ̂²c̃², Σw²σ̂²c̃d̃, then those of _sigma_sums.
    totals = np.zeros((13, n_outputs))
    for rows in chunks(n_samples):
        w = None if weight is None else weight[rows]
        c = np.subtract(y[rows], mean)
        d = np.subtract(y[rows], y_pred[rows])
        if centred:
            d -= shift
        s2 = np.square(chunk_of(sigma, rows))
        square = np.multiply(d, d)
        totals[0] += weighted(square, w)
        totals[2] += weighted(np.multiply(square, s2, out=square), w, 2)
        np.multiply(c, c, out=square)
        totals[1] += weighted(square, w)
        totals[3] += weighted(np.multiply(square, s2, out=square), w, 2)
        c *= d
        totals[4] += weighted(np.multiply(c, s2, out=c), w, 2)
        dof = None if sigma_dof is None else chunk_of(sigma_dof, rows)
        totals[5:] += _sigma_sums(chunk_of(sigma, rows), dof, w, d.shape[0])
    sse, sst, s2d2, s2c2, s2cd = totals[:5]
    s2_sum, w2s2_sum, s4_2, s4_3, s4_4, g_2, g_3, g_4 = totals[5:]
    square = w2s2_sum * w2s2_sum + s4_4  # unbiased (Σ w²σ²)²

    def pair(second: Any, third: Any, fourth: Any, k: int) -> Any:
        """A product of two forms, ``k`` of them centred (``C = I − 1wᵀ/W``)."""
        value = second - k * third / w_sum
        return value + fourth / (w_sum * w_sum) if k == 2 else value

    # the SSE's form is centred too for the explained variance; the SST's always
    kinds = (2, 2, 2) if centred else (0, 2, 1)
    fourth = [pair(s4_2, s4_3, square, k) for k in kinds]
    centring = w2s2_sum / w_sum
    sums = R2Sums(
        sse,
        sst,
        sse - s2_sum + centring if centred else sse - s2_sum,
        sst - s2_sum + centring,
        *(4.0 * x - 2.0 * f for x, f in zip((s2d2, s2c2, s2cd), fourth, strict=True)),
        *(pair(g_2, g_3, g_4, k) for k in kinds),
        *(2.0 * f for f in fourth),
    )
    if shared is None:
        return sums
    d = np.subtract(y, y_pred) - shift
    return with_offsets(
        sums, shared, weight, sigma, (d, y - mean), w2s2_sum, centred, exact_batches
    )


def _sigma_sums(sigma: Any, sigma_dof: Any, w: np.ndarray | None, n: int) -> np.ndarray:
    """A chunk's ``Σ w σ̂², Σ w² σ̂², Σ w^{2,3} s4, Σ w⁴ (s4 − σ̂⁴), Σ w^{2,3,4} g``.

    ``s4`` is unbiased for ``σ⁴``, ``g = 2 s4/ν`` (0 where σ is known).
    """
    if np.ndim(sigma) == 0:
        sigma = np.full((n, 1), sigma)
    s2 = np.square(sigma)
    s4 = s2 * s2 if sigma_dof is None else s2 * s2 / (1.0 + 2.0 / sigma_dof)
    s2, s4 = np.broadcast_arrays(s2, s4)
    sums = [weighted(s2, w), weighted(s2, w, 2)]
    sums += [weighted(s4, w, 2), weighted(s4, w, 3), weighted(s4 - s2 * s2, w, 4)]
    if sigma_dof is None:
        return np.array(sums + [0.0 * sums[0]] * 3)
    g = np.broadcast_to(2.0 * s4 / sigma_dof, s2.shape)
    return np.array(sums + [weighted(g, w, power) for power in (2, 3, 4)])


def delta_numerator(ratio: Any, var_n: Any, var_d: Any, cov: Any) -> Any:
    """``D² Var[N/D]`` by the delta method: ``Var N − 2ρ Cov + ρ² Var D``."""
    return var_n - 2.0 * ratio * cov + ratio * ratio * var_d


def _ratio_variance(
    ratio: np.ndarray, denominator: np.ndarray, sums: R2Sums, *, truth: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Delta method for ``N/D``, ``(Var N − 2ρ Cov + ρ² Var D) / D²``, floored,
    and the unbiased one (not floored).

    ``N, D`` are ``A, B`` (``truth``, with σ's own uncertainty) or ``X, Y``.
    """
    var_n, var_d, cov = sums.var_sse, sums.var_sst, sums.cov
    floor = delta_numerator(ratio, sums.floor_sse, sums.floor_sst, sums.floor_cov)
    if truth:
        sigma = (sums.var_sse_sigma, sums.var_sst_sigma, sums.cov_sigma)
        var_n, var_d, cov = var_n + sigma[0], var_d + sigma[1], cov + sigma[2]
        floor = floor + delta_numerator(ratio, *sigma)
    raw = delta_numerator(ratio, var_n, var_d, cov)
    raw = raw / np.square(denominator)
    return np.maximum(raw, np.maximum(floor, 0.0) / np.square(denominator)), raw


def _fraction(
    y: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    sigma_dof: Any = None,
    weight: np.ndarray | None = None,
    *,
    truth: bool,
    centred: bool = False,
    shared: Any = None,
) -> RegressionEstimate:
    """``1 − A/B`` against the true values (NaN and ``flag`` where ``B <= 0``),
    or the nominal ``1 − X/Y`` (``flag`` and variance 0 where ``Y = 0``)."""
    if isinstance(sigma, PoissonNoise):
        sums = count_r2_sums(y, y_pred, sigma, weight, truth=truth, centred=centred)
    else:
        sums = r2_sums(
            y, y_pred, sigma, sigma_dof, weight, centred=centred, shared=shared
        )
    flag = ~((sums.sst_truth if truth else sums.sst) > 0.0)
    denominator = np.where(flag, 1.0, sums.sst_truth if truth else sums.sst)
    ratio = (sums.sse_truth if truth else sums.sse) / denominator
    variance, raw = _ratio_variance(ratio, denominator, sums, truth=truth)
    if shared is not None and np.any(shared.tau2 > 0.0):
        # the ratio's third-order term −2κ₃/D³, as exp(−2κ₃/(D³V)) (shared_offsets)
        kappa = offsets_third_cumulant(shared, weight, sigma, ratio, centred)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            shrink = np.exp(-2.0 * kappa / (variance * denominator**3))
        variance = np.where(variance > 0.0, variance * shrink, variance)
    pairs = zip(sums.sse, sums.sst, strict=True)  # scikit-learn's 1 − X/Y
    with np.errstate(invalid="ignore"):  # inf/inf: NaN, as scikit-learn's
        nominal = np.array([r2_from_sums(x, y, force_finite=True) for x, y in pairs])
    pivots = None
    simple = shared is None and not isinstance(sigma, PoissonNoise)
    simple = simple and not centred and y.shape[0] <= PIVOT_MAX_SAMPLES
    if not truth:
        if simple and sigma_dof is None:
            pivots = remeasurement_r2_pivots(y, y_pred, sigma, weight, sums, variance)
        variance = np.where(flag, 0.0, variance)
        return RegressionEstimate(nominal, variance, nominal, flag, pivots=pivots)
    estimate = np.where(flag, np.nan, 1.0 - ratio)
    if simple:
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(raw > 0.0, raw / variance, 1.0)  # the unbiased SD's
        pivots = log_r2_pivots(
            y, y_pred, sigma, weight, sums, sigma_dof, share, variance
        )
    if isinstance(sigma, PoissonNoise) and y.shape[0] <= PIVOT_MAX_SAMPLES:
        pivots = count_log_r2_pivots(y, y_pred, weight, sums)
    variance = np.where(flag, np.nan, variance)
    if shared is not None and shared.fiducial is not None:
        data = (y, y_pred, sigma, sigma_dof, weight)
        sums_at = functools.partial(r2_sums, *data, centred=centred)
        pivots = fiducial_pivots(estimate, variance, sums_at, shared, _r2_draws)
    return RegressionEstimate(estimate, variance, nominal, flag, pivots=pivots)


def _r2_draws(sums: R2Sums, tau2: np.ndarray, z: np.ndarray) -> np.ndarray:
    """The truth R² at the fiducial draws of ``τ²`` (the sums there):
    ``1 − ρ exp(−Z SD/ρ)``, ``ρ = A/B`` and ``SD`` its delta-method SD, on the log
    scale of ``1 − R²`` as :func:`~.pivots.log_r2_pivots`; where ``B <= 0``
    (R² unbounded below) −1e300, a finite −∞ that ``np.quantile`` interpolates
    (an interval end there is −∞)."""
    positive = sums.sst_truth > 0.0
    denominator = np.where(positive, sums.sst_truth, 1.0)
    ratio = sums.sse_truth / denominator
    sd = np.sqrt(_ratio_variance(ratio, denominator, sums, truth=True)[0])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        u = np.where(ratio > 0.0, ratio * np.exp(-z * sd / ratio), 0.0)
    return np.where(positive, 1.0 - u, -1e300)


r2_truth = functools.partial(_fraction, truth=True)
r2_remeasurement = functools.partial(_fraction, truth=False)


def check_regression_sigma_dof(sigma_dof: Any, n_samples: int) -> Any:
    """``sigma_dof`` validated, a per-sample array as a column ``(n, 1)``."""
    dof = check_sigma_dof(sigma_dof, n_samples)
    if isinstance(dof, np.ndarray):
        dof = dof[:, None]
    return dof


def _outputs(flags: np.ndarray) -> str:
    """`` (outputs [..])`` naming the flagged outputs of several, else ""."""
    return "" if flags.size == 1 else f" (outputs {np.flatnonzero(flags).tolist()})"


#: A truth estimate this many SDs outside the metric's range is not chance.
_BEYOND_RANGE_SDS = 3.0


def _warn_truth(definition: RegressionLoss, result: RegressionEstimate) -> None:
    """Warn where a truth estimate is degenerate, or several SDs out of range."""
    if result.flag.any():
        warn(definition.degenerate.format(outputs=_outputs(result.flag)), UserWarning)
    low, high = definition.range
    with np.errstate(invalid="ignore", divide="ignore"):
        excess = np.fmax(low - result.estimate, result.estimate - high) / np.sqrt(
            result.variance
        )
    far = np.asarray(excess > _BEYOND_RANGE_SDS)
    if far.any():
        worst = float(np.nanmax(np.where(far, excess, np.nan)))
        warn(
            f"The {definition.name} against the true values is estimated "
            f"{worst:.3g} SD outside its range [{low:g}, {high:g}]{_outputs(far)}: "
            "sigma looks overstated, or the predictions reproduce the noisy "
            "labels (features that contain the label, or its readings)."
        )


def aggregate_outputs(
    metric: str,
    nominal: np.ndarray,
    expected: np.ndarray,
    variance: np.ndarray,
    n_samples: int,
    multioutput: Any,
    method: str = "exact",
    estimand: str = "forward",
    distributions: list[Any] | None = None,
    pivots: list[tuple[float, ...] | None] | None = None,
) -> NoisyScore | list[NoisyScore]:
    """Combine per-output results as scikit-learn's ``multioutput`` does, with
    variance ``Σ a_k² V_k / (Σ a_k)²`` (independent outputs)."""
    dists = distributions or [None] * len(expected)
    pivots = pivots or [None] * len(expected)
    if isinstance(multioutput, str) and multioutput == "raw_values":
        return [
            NoisyScore(
                metric, e, v, m, n_samples, method, estimand, dist, label_pivot=pivot
            )
            for m, e, v, dist, pivot in zip(
                nominal, expected, variance, dists, pivots, strict=True
            )
        ]
    if len(expected) == 1 and isinstance(multioutput, str):  # the same numbers
        values = (float(expected[0]), float(variance[0]), float(nominal[0]))
    else:
        weights = (
            np.ones_like(expected) if isinstance(multioutput, str) else multioutput
        )
        total = weights.sum()  # non-zero: checked by check_regression_inputs
        values = (
            float(weights @ expected / total),
            float((weights * weights) @ variance / (total * total)),
            float(weights @ nominal / total),
        )
    return NoisyScore(
        metric,
        *values,
        n_samples=n_samples,
        method=method,
        estimand=estimand,
        distribution=dists[0] if len(dists) == 1 else None,
        label_pivot=pivots[0] if len(pivots) == 1 else None,
    )


def estimand_score(
    definition: RegressionLoss,
    estimand: str,
    inputs: tuple[np.ndarray, np.ndarray, Any, np.ndarray | None, Any],
    sigma_dof: Any,
    check: Callable[[tuple[np.ndarray, ...]], None] | None = None,
    **offsets: Any,
) -> NoisyScore | list[NoisyScore]:
    """The truth or remeasurement result of a loss on validated ``inputs``, or
    the forward one with σ̂ (``definition.sigma_hat``); ``check``: the deferred
    NaN/inf check; ``offsets``: ``shared`` and ``terms``."""
    y_true, y_pred, sigma, weight, multioutput = inputs
    dof = check_regression_sigma_dof(sigma_dof, y_true.shape[0])
    own = definition.sigma_hat if estimand == "forward" else None
    kernel, method = own or definition.estimands[estimand]
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):  # checked
        result = kernel(y_true, y_pred, sigma, dof, weight, **offsets)
        if estimand == "truth":
            _warn_truth(definition, result)
    if check is not None:
        check((result.nominal, result.estimate, result.variance))
    score = aggregate_outputs(
        definition.name,
        result.nominal,
        result.estimate,
        result.variance,
        y_true.shape[0],
        multioutput,
        method,
        estimand,
        result.intervals,
        result.pivots,
    )
    # the forward terms d² + σ̂² hold σ̂'s noise: the square-root scale's pivot
    root_scale = dof is None or own is not None
    return with_sampling(score, result.sampling, weight, root_scale=root_scale)


def with_sampling(
    score: Any, sampling: Any, weight: np.ndarray | None, root_scale: bool = True
) -> Any:
    """``score`` with the sampling part of the accumulated term moments
    ``(chunks, terms)`` (:func:`~.sums.squared_error_sums`), if any; the pivot
    on the square-root scale unless ``root_scale`` is False (σ estimated: the
    label variance holds σ̂'s own, which the terms do not show)."""
    if sampling is None:
        return score
    with np.errstate(all="ignore"):
        moments = total_variance(sampling[0])
        return with_term_moments(
            score, moments, *sampling[1:], weight, root_scale=root_scale
        )
