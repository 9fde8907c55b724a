"""The sums of the squared-error estimands when the labels are Poisson counts.

The truth and remeasurement kernels of :mod:`.estimands` reduce these sums as
they reduce the Gaussian ones: a count ``ỹ ~ Poisson(λ)`` is an unbiased
estimate of its own variance, so the point estimates are the Gaussian ones with
``σ̂² = ỹ``, and the label variances of their per-sample terms are estimated
without bias from the count (:meth:`PoissonNoise.variance_parts`; user guide:
:ref:`poisson_noise`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ....utils._arrays import chunks
from ....utils._noise import PoissonNoise
from .pivots import second_order_log_pivots
from .sums import R2Sums, weighted

__all__ = [
    "count_log_r2_pivots",
    "count_mse_forward",
    "count_paired_truth",
    "count_r2_sums",
    "count_squared_error_sums",
    "quadratic_cumulants",
]


def count_squared_error_sums(
    y: np.ndarray,
    y_pred: np.ndarray,
    noise: PoissonNoise,
    weight: np.ndarray | None,
    *,
    truth: bool,
    skew: bool = False,
) -> tuple[float, np.ndarray, np.ndarray, np.ndarray, np.ndarray, Any]:
    """``(W, Σ w d̃², Σ w ỹ, variance sum, floor sum, skew sums)`` per output of
    counts: ``Σ w² (4ỹ (d̃ − s)² − 2 ỹ(ỹ − 1))``, ``s = 1`` truth, ``1/2``
    nominal; with ``skew`` the :func:`~.pivots.skew_pivots` rows of the
    :func:`quadratic_cumulants` of the terms ``ỹ² − (2ŷ + 1)ỹ`` (truth) or
    ``ỹ² − 2ŷỹ`` (their variance estimates are those cumulants' ``k2``), else
    None."""
    n_samples, n_outputs = y.shape
    totals = np.zeros((7, n_outputs))
    for rows in chunks(n_samples):
        w = None if weight is None else weight[rows]
        s2, s4, shift = noise.variance_parts(rows, truth=truth)
        d = y[rows] - y_pred[rows]
        totals[0] += weighted(d * d, w)
        totals[1] += weighted(s2, w)
        if skew:
            beta = -2.0 * y_pred[rows] - (1.0 if truth else 0.0)
            _, *moments = quadratic_cumulants(s2, 1.0, beta)
            for i, values in enumerate(moments):
                totals[4 + i] += weighted(values, w, 3 + i // 2)
        d -= shift
        totals[2] += weighted(4.0 * s2 * d * d - 2.0 * s4, w, 2)
        totals[3] += weighted(2.0 * s4, w, 2)
    w_sum = float(n_samples) if weight is None else float(weight.sum())
    return w_sum, *totals[:4], totals[4:] if skew else None


def count_mse_forward(
    y: np.ndarray, y_pred: np.ndarray, weight: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(nominal, E, Var)`` of the MSE of counts around exact rates ``λ = y``:
    ``E = Σ w (d² + λ) / W``, ``Var = Σ w² (λ(2d + 1)² + 2λ²) / W²``."""
    d = y - y_pred
    w_sum = float(y.shape[0]) if weight is None else float(weight.sum())
    nominal = weighted(d * d, weight) / w_sum
    expected = nominal + weighted(y, weight) / w_sum
    terms = y * np.square(2.0 * d + 1.0) + 2.0 * y * y
    return nominal, expected, weighted(terms, weight, 2) / (w_sum * w_sum)


def count_r2_sums(
    y: np.ndarray,
    y_pred: np.ndarray,
    noise: PoissonNoise,
    weight: np.ndarray | None,
    *,
    truth: bool,
    centred: bool = False,
) -> R2Sums:
    """The :class:`~.sums.R2Sums` of counts, in two passes, the
    means held fixed (first order); σ's own uncertainty is in them (fields 0)."""
    n_samples, n_outputs = y.shape
    w_sum = float(n_samples) if weight is None else float(weight.sum())
    mean = weighted(y, weight) / w_sum
    shift = weighted(y - y_pred, weight) / w_sum if centred else 0.0
    # Rows: X, Y, Σ w ỹ, Σ w² ỹ, then Σ w² of 4ỹ d_s², 4ỹ c_s², 4ỹ d_s c_s, 2 s4.
    totals = np.zeros((8, n_outputs))
    for rows in chunks(n_samples):
        w = None if weight is None else weight[rows]
        s2, s4, s = noise.variance_parts(rows, truth=truth)
        d = y[rows] - y_pred[rows] - shift
        c = y[rows] - mean
        totals[0] += weighted(d * d, w)
        totals[1] += weighted(c * c, w)
        totals[2] += weighted(s2, w)
        totals[3] += weighted(s2, w, 2)
        d -= s
        c -= s
        totals[4] += weighted(4.0 * s2 * d * d, w, 2)
        totals[5] += weighted(4.0 * s2 * c * c, w, 2)
        totals[6] += weighted(4.0 * s2 * d * c, w, 2)
        totals[7] += weighted(2.0 * s4, w, 2)
    sse, sst, s2_sum, w2s2_sum, vd, vc, vdc, floor = totals
    centring = w2s2_sum / w_sum
    truths = (sse - s2_sum + (centring if centred else 0.0), sst - s2_sum + centring)
    variances = (vd - floor, vc - floor, vdc - floor)
    zeros = (np.zeros(n_outputs),) * 3
    return R2Sums(sse, sst, *truths, *variances, *zeros, *(floor,) * 3)


def quadratic_cumulants(y: np.ndarray, alpha: Any, beta: Any) -> tuple[np.ndarray, ...]:
    """Unbiased estimates from a count ``ỹ ~ Poisson(λ)`` (factorial moments) of
    the variance ``k2`` and third cumulant of ``u = αỹ² + βỹ``, and of ``u``'s
    covariance with ``k2`` and ``k2``'s own variance (:ref:`poisson_noise`)."""
    k2 = alpha**2 * y * ((4.0 * y - 6.0) * y + 3.0) + beta**2 * y
    k2 += alpha * beta * y * (4.0 * y - 2.0)
    k3 = alpha**3 * y * (((32.0 * y - 124.0) * y + 176.0) * y - 83.0)
    k3 += alpha**2 * beta * y * ((36.0 * y - 72.0) * y + 39.0)
    k3 += alpha * beta**2 * y * (12.0 * y - 9.0) + beta**3 * y
    cov = alpha**3 * y * (((24.0 * y - 84.0) * y + 110.0) * y - 49.0)
    cov += alpha**2 * beta * y * ((28.0 * y - 52.0) * y + 27.0)
    cov += alpha * beta**2 * y * (10.0 * y - 7.0) + beta**3 * y
    quartic = (((144.0 * y - 864.0) * y + 2136.0) * y - 2424.0) * y + 1009.0
    v = alpha**4 * y * quartic + beta**4 * y
    v += alpha**3 * beta * y * (((192.0 * y - 720.0) * y + 976.0) * y - 444.0)
    v += alpha**2 * beta**2 * y * ((88.0 * y - 176.0) * y + 94.0)
    v += alpha * beta**3 * y * (16.0 * y - 12.0)
    return k2, k3, cov, v


def count_log_r2_pivots(
    y: np.ndarray, y_pred: np.ndarray, weight: np.ndarray | None, sums: R2Sums
) -> list[tuple[float, ...] | None]:
    """Each output's Cornish–Fisher pivot of the truth ``log(A/B)`` (``R² = 1 −
    A/B``) over the counts, to second order: ``L``, its first-order expansion,
    has the :func:`quadratic_cumulants` of its terms ``αỹ² + βỹ``, ``α = 1/A −
    1/B``, ``β = −2(ŷ/A − ȳ/B) − α`` (as :func:`~.pivots.r2_label_cumulants`
    for Gaussian labels); the log's curvature adds ``3 gᵀΣHΣg`` to ``κ₃`` and
    the bias ``tr(HΣ)/2``, and the SD on the log scale, ``√V̂/(A/B)``, moves with
    ``A`` and ``B`` too (:ref:`poisson_noise`)."""
    a, b = sums.sse_truth, sums.sst_truth
    w_sum = float(y.shape[0]) if weight is None else float(weight.sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1.0 / a - 1.0 / b
        beta = -2.0 * (y_pred / a - weighted(y, weight) / w_sum / b) - alpha
    return second_order_log_pivots(quadratic_cumulants(y, alpha, beta), weight, sums)


def count_paired_truth(
    difference: Callable[..., np.ndarray],
    y: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    noise: PoissonNoise,
    weight: np.ndarray | None,
) -> tuple[float, float, float] | None:
    """``(expected, variance, nominal)`` of ``metric(A) − metric(B)`` against the
    true rates by the delta method on the definition's ``streamed_difference``
    (gradient by the complex step); None where undefined (user guide:
    :ref:`poisson_noise`)."""
    n_samples, n_outputs = y.shape
    w_sum = float(n_samples) if weight is None else float(weight.sum())
    mean = weighted(y, weight) / w_sum
    totals = np.zeros((5, n_outputs))  # SSE_A, SSE_B, SST, Σ w ỹ, Σ w² ỹ
    for rows in chunks(n_samples):
        w = None if weight is None else weight[rows]
        for i, values in enumerate((y[rows] - a[rows], y[rows] - b[rows])):
            totals[i] += weighted(values * values, w)
        totals[2] += weighted(np.square(y[rows] - mean), w)
        totals[3] += weighted(y[rows], w)
        totals[4] += weighted(y[rows], w, 2)
    nominal = difference(*totals[:3], w_sum)
    sums = totals[:3] - totals[3]
    sums[2] += totals[4] / w_sum
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = difference(*sums, w_sum)
    if not (np.all(sums[2] > 0.0) and np.all(np.isfinite(expected))):
        return None
    gradient = np.empty((3, n_outputs))
    for j in range(3):  # complex step: exact to rounding for analytic functions
        step = sums.astype(complex)
        step[j] += 1e-30j * sums[j]
        gradient[j] = difference(*step, w_sum).imag / (1e-30 * sums[j])
    variance, floor = np.zeros(n_outputs), np.zeros(n_outputs)
    k = gradient.sum(axis=0)
    for rows in chunks(n_samples):
        w = None if weight is None else weight[rows]
        s2, s4, shift = noise.variance_parts(rows, truth=True)
        v = gradient[0] * (y[rows] - a[rows]) + gradient[1] * (y[rows] - b[rows])
        v += gradient[2] * (y[rows] - mean) - shift * k
        variance += weighted(4.0 * s2 * v * v - 2.0 * k * k * s4, w, 2)
        floor += weighted(2.0 * k * k * s4, w, 2)
    variance = np.maximum(variance, floor).sum() / n_outputs**2
    return float(expected.mean()), float(variance), float(nominal.mean())
