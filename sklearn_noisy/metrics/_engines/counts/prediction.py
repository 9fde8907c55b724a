"""The skew of a prediction interval: the estimate ``T`` less the metric ``M`` of
a new test set, ``D = T − M``, for a metric of two classes under flips (user
guide: :ref:`error_budget_intervals`).

With ``h`` the per-sample terms (``T ≈ mean h``), ``s`` their slope along each
sample's label ``u`` (the positive class's weight), ``V`` and ``κ`` the variance
and third cumulant of ``u`` over the label noise: ``κ₃(D) = ±(3 E[(h − h̄) s² V]
+ E[s³ κ])/n²`` (truth +: ``T`` holds the label noise, ``M`` the true labels'
metric does not; forward −: the reverse; remeasurement 0: ``T`` and ``M`` are
alike) and ``Cov(D, ŝ²) = 2 E[(h − h̄)³]/n²``, each with the curvature of the
metric; the pivot's quantiles are Cornish–Fisher's, widened to Student's for
the degrees of freedom of the interval's variance, but for the truth: there the
de-noised labels carry both ``D`` and most of that variance's spread, so
``D/SD`` self-normalizes (the widening left 1.0–1.9 % in a tail).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy.special import ndtr, ndtri, stdtrit

from ...._noisy_score import (
    PIVOT_MAX_SAMPLES,
    PIVOT_PROBABILITIES,
    ConfidenceInterval,
    NoisyScore,
    _pivot_quantiles,
    clip_to_range,
    cornish_fisher_pivot,
)
from ....utils._noise import FlipNoise
from ..sampling_pivots import DeferredPivot
from ..test_set_sampling import mean_total_variance

__all__ = ["difference_cumulants", "flip_cumulants", "prediction_pivot"]


class _Skewed:
    """``prediction(estimate, sd, level)``: the interval at the quantiles
    ``skew`` of ``D/SD``, which ``NoisyScore.prediction_interval`` reads."""

    skew: tuple[float, ...] | None = None
    metric = ""
    #: The interval with both sources: ``"bootstrap_t"`` or ``"cornish_fisher"``.
    method = "bootstrap_t"

    @property
    def zero_source(self) -> str:
        """The interval with both sources at a sampling variance of 0: Fieller's
        own (it holds the sampling), else the label noise's."""
        return "both" if self.method == "fieller" else "label_noise"

    def prediction(self, estimate: float, sd: float, level: float) -> Any:
        ends = _pivot_quantiles(self.skew, level)
        if ends is None:
            return None
        low, high = estimate - sd * np.array(ends[::-1])
        method = "fieller" if self.method == "fieller" else "cornish_fisher"
        return ConfidenceInterval(*clip_to_range(self.metric, low, high), method)


class PredictionPivot(_Skewed, DeferredPivot):
    """:class:`DeferredPivot` (the bootstrap-t of the terms) with ``skew``."""

    __slots__ = ("method", "metric", "skew")

    def __reduce__(self) -> tuple:
        return (restore_quantiles, (tuple(self), self.skew, self.metric, self.method))


class _Quantiles(_Skewed, tuple):
    """A pickled :class:`PredictionPivot`."""


def restore_quantiles(
    values: tuple, skew: tuple | None, metric: str, method: str
) -> Any:
    pivot = _Quantiles(values)
    pivot.skew, pivot.metric, pivot.method = skew, metric, method
    return pivot


def flip_cumulants(
    noise: FlipNoise, observed: np.ndarray, estimand: str
) -> tuple[np.ndarray, np.ndarray]:
    """``(V, κ)`` of each sample's label ``u`` under flips ``q``: ``q(1 − q)/p²``
    and the unbiased ``q(1 − q)(1 − 2o)/p³`` of ``u = (o − q)/p``, ``p = 1 − 2q``
    (truth, ``o`` observed); ``q(1 − q)`` and ``q(1 − q)(1 − 2o)p`` of a fresh
    ``u = o`` about an exact class ``o`` (forward; remeasurement has none)."""
    q, p = noise.flip_scale(slice(None))
    variance = q * (1.0 - q)
    if estimand == "truth":
        variance = variance / (p * p)
        return variance, variance * (1.0 - 2.0 * observed) / p
    return variance, variance * (1.0 - 2.0 * observed) * p


def difference_cumulants(
    h: np.ndarray,
    slope: np.ndarray,
    variance: np.ndarray,
    third: np.ndarray,
    sign: float,
    curvature: Callable[..., tuple[float, float, float]] | None = None,
) -> tuple[float, float]:
    """``n² κ₃(D)`` and ``n² Cov(D, ŝ²)`` (module docstring; ``sign`` +1 truth,
    −1 forward, 0 remeasurement)."""
    a = h - float(np.mean(h))
    cumulant = sign * float(np.mean(3.0 * a * variance * slope**2 + third * slope**3))
    covariance = 2.0 * float(np.mean(a**3))
    if curvature is not None:
        bb, bc, cc = curvature(a, slope * variance)
        cumulant += 3.0 * sign * (2.0 * bc - sign * cc)
        covariance += 4.0 * bb - 2.0 * sign * bc
    return cumulant, covariance


def prediction_pivot(
    h: np.ndarray,
    slope: np.ndarray,
    variance: np.ndarray,
    third: np.ndarray,
    score: NoisyScore,
    curvature: Callable[..., tuple[float, float, float]] | None = None,
    both: tuple[float, ...] | None = None,
) -> Sequence[float] | None:
    """The pivot of ``D/SD`` (module docstring) with the bootstrap-t of ``h``
    for the other intervals; ``curvature(a, s V) -> (bᵀHb, bᵀHc, cᵀHc)`` the
    metric's second derivatives; ``both``: the quantiles of the interval with
    both sources where the caller has them (else the bootstrap-t of ``h``);
    None below 10 samples or above :data:`PIVOT_MAX_SAMPLES` (the arcsine
    scale)."""
    n = h.shape[0]
    if not 10 <= n <= PIVOT_MAX_SAMPLES:
        return None
    total, dof = mean_total_variance(h, None)
    sign = {"truth": 1.0, "forward": -1.0}.get(score.estimand, 0.0)
    if sign > 0.0:  # Var T + Var M: the label part and twice the sampling part
        spread = score.variance + 2.0 * max(total - score.variance, 0.0)
    else:
        spread = score.variance + 2.0 * total if sign else 2.0 * total
    cumulant, covariance = difference_cumulants(
        h, slope, variance, third, sign, curvature
    )
    if not (spread > 0.0 and total > 0.0):
        return None
    cube = spread**1.5 * n * n
    quantiles = cornish_fisher_pivot(cumulant / cube, covariance / cube)
    dof *= (spread / (2.0 * total)) ** 2
    if quantiles is None or not math.isfinite(dof):
        return None
    z = ndtri(np.asarray(PIVOT_PROBABILITIES))
    widening = 1.0 if sign > 0.0 else stdtrit(dof, ndtr(z)) / z
    pivot = PredictionPivot(h, None) if both is None else _Quantiles(both)
    pivot.skew = tuple(float(v) for v in np.array(quantiles) * widening)
    pivot.metric = score.metric
    pivot.method = "bootstrap_t" if both is None else "cornish_fisher"
    return pivot
