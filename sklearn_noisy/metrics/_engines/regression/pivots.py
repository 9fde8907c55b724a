"""The label-noise pivots of the regression estimates: the quantiles of the
studentized estimate at :data:`~sklearn_noisy._noisy_score.PIVOT_PROBABILITIES`
that make an interval follow its skew (user guide: :ref:`error_budget_intervals`).
Each pivot names its construction (``method``), which the interval reports.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import stdtrit

from ...._noisy_score import PIVOT_PROBABILITIES, cornish_fisher_pivot
from .sums import R2Sums, weighted

__all__ = [
    "FiducialPivot",
    "StudentPivot",
    "fiducial_pivots",
    "log_r2_pivots",
    "skew_pivots",
    "student_pivot",
]


def skew_pivots(
    totals: np.ndarray, w_sum: float, variance: np.ndarray
) -> list[tuple[float, ...] | None]:
    """Each output's Cornish–Fisher pivot over the label noise of the truth or
    nominal MSE from its :func:`~.sums.skew_sums` (user guide: :ref:`skewed
    estimates <truth_skew>`)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = w_sum**3 * variance**1.5
        skew, covariance = totals[0] / scale, totals[1] / scale
    return [
        cornish_fisher_pivot(float(g), float(c))
        for g, c in zip(skew, covariance, strict=True)
    ]


class FiducialPivot(tuple):
    """A label pivot from the fiducial distribution of ``τ²``."""

    method = "fiducial"


def _through(a: Any, b: Any, c: Any, tau2: np.ndarray) -> Any:
    """The quadratic in ``τ²`` through ``a, b, c`` at ``τ² = 0, 1, 2``."""
    curve = (a - 2.0 * b + c) / 2.0
    return a + (b - a - curve) * tau2 + curve * tau2**2


def fiducial_pivots(
    estimate: np.ndarray,
    variance: np.ndarray,
    sums_at: Callable[..., tuple],
    shared: Any,
    truth: Callable[..., np.ndarray] | None = None,
) -> list[tuple[float, ...] | None]:
    """Each output's truth pivot when ``τ²`` was estimated in a one-way analysis
    (``sums_at(shared=...)``: the estimate's sums at known offsets, each
    quadratic in ``τ²``: three evaluations), ``τ²`` drawn from Weerahandi's
    generalized pivotal quantity (seeded, 20,000 draws; user guide:
    :ref:`shared_offsets`). ``truth(sums, τ², Z)``: the truth at each draw from
    the sums there (default the MSE's ``A − τ² − Z √V(τ²)``, ``V`` floored)."""
    fits = []
    for t in (0.0, 1.0, 2.0):
        known = dataclasses.replace(
            shared, tau2=np.full_like(shared.tau2, t), dof=None, fiducial=None
        )
        fits.append(sums_at(shared=known))
    rng = np.random.default_rng(0)
    tau2 = shared.fiducial_tau2(rng, 20000)[:, None]
    z = rng.standard_normal(tau2.shape)
    if truth is None:
        (w_sum, d2, s2, *low), (_, _, _, *one), (_, _, _, *two) = (f[:5] for f in fits)
        spread = [_through(*v, tau2) for v in zip(low, one, two, strict=True)]
        draws = (d2 - s2) / w_sum - tau2 - z * np.sqrt(np.maximum(*spread)) / w_sum
    else:
        sums = type(fits[0])(*(_through(*v, tau2) for v in zip(*fits, strict=True)))
        draws = truth(sums, tau2, z)
    quantiles = np.quantile(draws, 1.0 - np.asarray(PIVOT_PROBABILITIES), axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        pivots = (estimate - quantiles) / np.sqrt(variance)
    return [
        FiducialPivot(p) if np.all(np.isfinite(p)) else None for p in pivots.T.tolist()
    ]


class StudentPivot(tuple):
    """Student's quantiles: the pivot of an estimate whose variance has
    estimated parts (Welch–Satterthwaite's degrees of freedom); ``both_dof``:
    those of the part of the variance that the test-set sampling's terms do not
    hold, for the interval with both sources (``NoisyScore._dof``)."""

    method = "t"
    both_dof = math.inf


def student_pivot(dof: float, both_dof: float = math.inf) -> StudentPivot:
    """Student's quantiles at ``PIVOT_PROBABILITIES`` for ``dof``."""
    pivot = StudentPivot(float(t) for t in stdtrit(dof, PIVOT_PROBABILITIES))
    pivot.both_dof = float(both_dof)
    return pivot


def log_r2_pivots(
    y: np.ndarray, y_pred: np.ndarray, sigma: Any, w: np.ndarray | None, sums: R2Sums
) -> list[tuple[float, ...] | None]:
    """Each output's Cornish–Fisher pivot over the label noise of ``log(A/B)``,
    the truth ``1 − R²`` on the log scale, from its third cumulant (σ known;
    user guide: :ref:`error_budget_new_set`)."""
    a, b = sums.sse_truth, sums.sst_truth
    w_sum = float(y.shape[0]) if w is None else float(w.sum())
    s2 = np.broadcast_to(np.square(sigma), y.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1.0 / a - 1.0 / b
        v = (y - y_pred) / a - (y - weighted(y, w) / w_sum) / b
        v2 = v * v
        k2 = weighted(4.0 * s2 * v2 - 2.0 * alpha**2 * s2 * s2, w, 2)
        k3 = weighted(24.0 * alpha * s2 * s2 * v2 - 16.0 * alpha**3 * s2**3, w, 3)
        skew = k3 / k2**1.5
    return [cornish_fisher_pivot(float(g), 0.0) for g in skew]
