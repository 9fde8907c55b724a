"""Fieller's intervals of a ratio ``θ = N/D`` of two linear forms of the true
confusion counts (recall, specificity, F1), two classes under flips ``q``
(user guide: :ref:`error_budget_intervals`).

``θ ≤ r`` exactly when ``N − rD ≤ 0``: the interval is the set of ``r`` at which
the linear statistic ``Σ z_i(r)``, ``z_i(r) = (a − r b)·m_i`` of each sample's
de-noised cell weights ``m_i``, lies within the Cornish–Fisher quantiles of its
own law, which at a fixed ``r`` is a sum of independent terms: no ratio's
plug-in variance (``1/D̂²`` over a noisy de-noised ``D̂``). Three laws: over
the label noise given the true labels (``Var`` and ``κ₃`` of each ``u_i``
known), over the test-set draw (the studentized mean of the ``z_i``) and that
less the same sum on a new test set's true labels (the prediction interval).
Each ``z_i`` is linear in ``r``, their moments polynomials: evaluated on a
grid of ``r`` over the metric's range, the crossings interpolated. The label
law's third cumulant is estimated from the observed labels, which the
statistic moves with: :func:`widen` (also for the other two-class pivots).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.polynomial import polynomial
from scipy.special import ndtri, stdtrit

from ...._noisy_score import PIVOT_MAX_SAMPLES, PIVOT_PROBABILITIES
from ....utils._noise import FlipNoise
from .prediction import flip_cumulants, restore_quantiles

__all__ = [
    "FiellerPivot",
    "as_pivot",
    "count_fieller",
    "fieller_sampling_pivot",
    "ratio_masks",
    "widen",
]

#: Points of the grid of ``r`` over the metric's range.
_GRID = 1001
_Z = ndtri(np.asarray(PIVOT_PROBABILITIES))
#: ``z (z² − 1) / 6``: the quantiles' move per unit covariance of a statistic
#: and its estimated skewness.
_WIDEN = _Z * (_Z * _Z - 1.0) / 6.0


class FiellerPivot(tuple):
    """Quantiles ``(T − r_p)/ŝ`` of Fieller's ends ``r_p``, read as a pivot."""

    method = "fieller"


def ratio_masks(
    definition: Any, pos_index: int | None, n_samples: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """``(a, b)``: ``N = a·C`` and ``D = b·C`` of a binary ratio of the true
    counts (rows the class), or None (no ratio, a fixed denominator, ``1 −``,
    no positive class, more than :data:`PIVOT_MAX_SAMPLES` samples)."""
    ratio = definition.ratio
    if ratio is None or not ratio.true or definition.complement:
        return None
    if pos_index is None or n_samples > PIVOT_MAX_SAMPLES:
        return None
    k = 1 - pos_index if definition.negative else pos_index  # TN_k: the other's
    a, b = np.zeros((2, 2)), np.zeros((2, 2))
    a[k, k] = 1.0 if definition.negative else ratio.scale
    b[k, :] += 1.0
    if ratio.predicted:
        b[:, k] += 1.0
    return a, b


def _product(*factors: np.ndarray) -> np.ndarray:
    """The per-sample product of polynomials in ``r`` (each ``(n, degree + 1)``,
    ascending)."""
    out = factors[0]
    for f in factors[1:]:
        new = np.zeros((out.shape[0], out.shape[1] + f.shape[1] - 1))
        for j in range(f.shape[1]):
            new[:, j : j + out.shape[1]] += out * f[:, j : j + 1]
        out = new
    return out


def _mean(*factors: np.ndarray, weight: Any = 1.0) -> np.ndarray:
    """The coefficients of the (weighted) mean of the factors' product."""
    return np.mean(_product(*factors) * np.reshape(weight, (-1, 1)), axis=0)


def _quantiles(
    skew: np.ndarray, covariance: np.ndarray, moved: Any = 0.0
) -> np.ndarray:
    """``cornish_fisher_pivot`` on arrays: ``(grid, probabilities)``; ``moved``
    the covariance of the statistic and its estimated skewness (:func:`widen`)."""
    z = _Z  # as cornish_fisher_pivot
    limit = 0.45 / float(z[-1])
    quadratic = np.clip((skew - 3.0 * covariance) / 6.0, -limit, limit)
    wide = z - np.reshape(moved, (-1, 1)) * _WIDEN
    return wide - covariance[:, None] / 2.0 + quadratic[:, None] * (z * z - 1.0)


def widen(quantiles: Any, moved: float) -> tuple[float, ...] | None:
    """A Cornish–Fisher pivot's ``quantiles`` (or None) whose skewness is
    estimated with a covariance ``moved`` with the standardized statistic:
    ``− z (z² − 1) moved / 6`` each (wider for ``moved < 0``)."""
    if quantiles is None:
        return None
    return tuple(float(v) for v in np.asarray(quantiles) - moved * _WIDEN)


def _ends(grid: np.ndarray, stat: np.ndarray, quantile: np.ndarray) -> np.ndarray:
    """Fieller's end ``r_p`` at each probability: the largest ``r`` with the
    statistic above its ``p`` quantile (``p < ½``: an upper end), the smallest
    below it (a lower end), interpolated; the range's bound if none."""
    ends = np.empty(quantile.shape[1])
    with np.errstate(invalid="ignore"):
        gap = stat[:, None] - quantile
    for p, column in enumerate(gap.T):
        upper = PIVOT_PROBABILITIES[p] < 0.5
        inside = column > 0.0 if upper else column < 0.0
        found = np.flatnonzero(inside)
        if found.size == 0:
            ends[p] = grid[0] if upper else grid[-1]
            continue
        i = found[-1] if upper else found[0]
        j = i + 1 if upper else i - 1
        if not 0 <= j < grid.size:
            ends[p] = grid[i]
            continue
        t = column[i] / (column[i] - column[j])
        ends[p] = grid[i] + (t if np.isfinite(t) else 0.0) * (grid[j] - grid[i])
    return ends


def as_pivot(estimate: float, sd: float, ends: np.ndarray) -> FiellerPivot | None:
    """The ends as the quantiles of ``(T − θ)/ŝ`` (None without a spread)."""
    if not (sd > 0.0 and math.isfinite(estimate)) or np.any(np.diff(ends) > 1e-9):
        return None  # no spread, or crossed ends
    return FiellerPivot(float(v) for v in (estimate - ends) / sd)


def count_fieller(
    masks: tuple[np.ndarray, np.ndarray],
    noise: FlipNoise,
    observed: np.ndarray,
    pred: np.ndarray,
    definition: Any,
) -> Callable[[str], np.ndarray]:
    """``ends(kind)``: Fieller's ends at :data:`PIVOT_PROBABILITIES` for
    ``kind`` ``"label"``, ``"both"`` or ``"prediction"`` of a count ratio's truth
    estimate from the classes ``observed`` and ``pred`` (positions) and ``(a,
    b)`` of :func:`ratio_masks`: ``z_i(r) = Σ_c u_ic (a − r b)[c, ŷ_i]``, ``u_i``
    the sample's de-noised class weights ``(1 − u, u)``."""
    rows = noise.inverse_rows(observed, slice(None), None)
    variance, third = flip_cumulants(noise, observed, "truth")  # of each u
    a, b = masks  # each class's weight in z_i(r), as polynomials c + d r
    lines = [np.stack([a[c, pred], -b[c, pred]], axis=1) for c in range(2)]
    n = rows.shape[0]
    z = rows[:, :1] * lines[0] + rows[:, 1:] * lines[1]
    centred = z - z.mean(axis=0)
    grid = np.linspace(*definition.range, _GRID)

    def at(coefficients: np.ndarray) -> np.ndarray:
        return polynomial.polyval(grid, coefficients)

    mean = at(z.mean(axis=0))

    def ends(kind: str) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            if kind == "label":  # given the true labels: Var, κ₃ known
                slope = lines[1] - lines[0]
                spread = at(_mean(slope, slope, weight=variance))
                cumulant = at(_mean(slope, slope, slope, weight=third))
                stat = mean * np.sqrt(n / spread)
                skew = cumulant / (spread**1.5 * math.sqrt(n))
                # Cov(u_i, κ̂_i) = −2 V_i²: the skew's estimate moves with u
                fourth = at(_mean(slope, slope, slope, slope, weight=variance**2))
                moved = -2.0 * fourth / (n * spread**2)
                return _ends(grid, stat, _quantiles(skew, 0.0 * skew, moved))
            m2, m3 = at(_mean(centred, centred)), at(_mean(centred, centred, centred))
            spread, cumulant, covariance = m2, m3, m3  # the studentized mean
            if kind == "prediction":  # less the same on a new set's true labels
                pairs = list(zip(lines, rows.T, strict=True))  # (z's line, weight)
                e2 = at(sum(_mean(x, x, weight=w) for x, w in pairs))
                e3 = at(sum(_mean(x, x, x, weight=w) for x, w in pairs))
                squares = sum(w[:, None] * _product(x, x) for x, w in pairs)
                spread = m2 + np.maximum(e2 - mean**2, 0.0)
                cumulant = m3 - (e3 - 3.0 * e2 * mean + 2.0 * mean**3)
                moved = at(_mean(centred, squares - squares.mean(axis=0)))
                covariance = m3 + moved - 2.0 * mean * m2
            stat = mean / np.sqrt(spread / (n - 1.0))
            scale = spread**1.5 * math.sqrt(n)
            student = stdtrit(n - 1.0, np.asarray(PIVOT_PROBABILITIES)) / _Z
            quantiles = _quantiles(cumulant / scale, covariance / scale)
            return _ends(grid, stat, quantiles * student)

    return ends


def fieller_sampling_pivot(
    ends: Callable[[str], np.ndarray], score: Any, total: float
) -> Any:
    """The pivot of the interval with both sources (the label part and the
    test-set sampling, total variance ``max(total, variance)``) and, as its
    ``skew``, the prediction interval's (``variance + 2 sampling``); each holds
    the one before (label noise, both sources, prediction)."""
    label, upper = score.variance, np.asarray(PIVOT_PROBABILITIES) < 0.5
    wider, pivots = ends("label"), []
    for kind, variance in (
        ("both", max(total, label)),
        ("prediction", label + 2.0 * max(total - label, 0.0)),
    ):
        found = ends(kind)
        wider = np.where(upper, np.maximum(found, wider), np.minimum(found, wider))
        pivots.append(as_pivot(score.expected, math.sqrt(variance), wider))
    if None in pivots:
        return None
    return restore_quantiles(
        tuple(pivots[0]), tuple(pivots[1]), score.metric, "fieller"
    )
