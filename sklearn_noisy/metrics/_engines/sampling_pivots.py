"""The skewed pivots of the test-set sampling part (user guide:
:ref:`error_budget_intervals`).

The studentized bootstrap (bootstrap-t) of a mean of per-sample terms, the
MSE's on the square-root scale, widened by Student's t at the terms' degrees of
freedom, and R²'s on the scale of ``log(1 − R²)``, with the forward R²'s pivot
for a new test set; :class:`DeferredPivot` draws them when an interval first
reads them.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.special import ndtri, stdtrit

from ..._noisy_score import (
    PIVOT_MAX_SAMPLES,
    PIVOT_PROBABILITIES,
    ConfidenceInterval,
    NoisyScore,
    _pivot_quantiles,
)

__all__ = ["DeferredPivot", "new_set_dof"]

#: Resamples of the studentized mean of the per-sample terms.
N_PIVOT_RESAMPLES = 999


def studentized_quantiles(
    h: np.ndarray, weight: np.ndarray | None
) -> tuple[float, ...] | None:
    """Quantiles at :data:`PIVOT_PROBABILITIES` of ``(m* − m)/se*``, the
    studentized weighted mean of ``h`` over seeded resamples of the samples
    (the bootstrap-t; user guide: :ref:`error_budget_intervals`); None above
    :data:`PIVOT_MAX_SAMPLES` samples or below 10."""
    n = h.shape[0]
    if not 10 <= n <= PIVOT_MAX_SAMPLES or not np.all(np.isfinite(h)):
        return None
    w = None if weight is None else np.asarray(weight, dtype=np.float64)
    rng = np.random.default_rng(0)
    pivots = np.empty(N_PIVOT_RESAMPLES)
    centre = float(np.mean(h)) if w is None else float(w @ h) / float(w.sum())
    rows = max(1, 2_000_000 // n)
    for start in range(0, N_PIVOT_RESAMPLES, rows):
        size = min(rows, N_PIVOT_RESAMPLES - start)
        index = rng.integers(0, n, (size, n))
        hw = h[index]
        if w is None:  # unit weights: no gather of them (the default's cost)
            totals = np.full(size, float(n))
            means = hw.sum(axis=1) / totals
            spread = np.subtract(hw, means[:, None], out=hw)
        else:
            ww = w[index]
            totals = ww.sum(axis=1)
            means = np.einsum("ij,ij->i", ww, hw) / totals
            spread = ww * (hw - means[:, None])
        se = np.sqrt(np.einsum("ij,ij->i", spread, spread) * n / (n - 1.0)) / totals
        with np.errstate(divide="ignore", invalid="ignore"):
            pivots[start : start + size] = (means - centre) / se
    pivots = pivots[np.isfinite(pivots)]
    if pivots.size < N_PIVOT_RESAMPLES // 2:
        return None
    return tuple(float(v) for v in np.quantile(pivots, PIVOT_PROBABILITIES))


def _root_ends(estimate: float, sd: float, q: np.ndarray) -> np.ndarray:
    """``(√T − q·sd/(2√T))²``, 0 below 0: the ends at the pivot's ``q`` on the
    square-root scale of a positive estimate ``T`` of SD ``sd``."""
    root = math.sqrt(estimate)
    return np.square(np.maximum(root - sd / (2.0 * root) * np.asarray(q), 0.0))


class RootPivot(tuple):
    """The MSE's pivot (:func:`root_pivot`); ``student``: the quantiles ``q`` of
    :meth:`prediction` (the upper end's widened for the truth's new test set).
    The interval with both sources keeps it where the terms spread no more than
    the label noise (a sampling variance of 0: else the label-noise interval)."""

    method = "sqrt_bootstrap_t"
    zero_source = "both"
    student: tuple[float, ...] = ()

    def prediction(
        self, estimate: float, sd: float, level: float
    ) -> ConfidenceInterval | None:
        """The prediction interval on the square-root scale at the quantiles."""
        tail = (1.0 - level) / 2.0
        if not (PIVOT_PROBABILITIES[0] <= tail and estimate > 0.0 < sd < math.inf):
            return None
        q = np.interp([1.0 - tail, tail], PIVOT_PROBABILITIES, self.student)
        return ConfidenceInterval(*_root_ends(estimate, sd, q), self.method)


def student_factors(dof: float, upper_dof: float) -> list[np.ndarray]:
    """Student's ``t_ν(p)/z_p`` at :data:`PIVOT_PROBABILITIES` for ``ν`` each of
    ``dof`` and ``upper_dof``: the widening of a bootstrap-t's quantiles for the
    degrees of freedom of its variance estimate (:func:`root_pivot`)."""
    p = np.asarray(PIVOT_PROBABILITIES)
    return [stdtrit(v, p) / ndtri(p) for v in (dof, upper_dof)]


def root_pivot(
    quantiles: tuple[float, ...],
    dof: float,
    estimate: float,
    sd: float,
    upper_dof: float,
) -> tuple[float, ...]:
    """The MSE's bootstrap-t ``quantiles`` each times Student's ``t_dof(p)/z(p)``
    (``dof``: the terms' Satterthwaite degrees of freedom), taken on the
    square-root scale of the ``estimate`` (SD ``sd``): a :class:`RootPivot` of
    ``(T − (√T − q·sd/(2√T))²)/sd``; the plain quantiles for ``T <= 0``. Its
    ``student``, the prediction interval's, widens those of its upper end (below
    0.5) at ``upper_dof`` instead (:func:`with_term_moments`)."""
    if not (estimate > 0.0 and 0.0 < sd < math.inf):
        return quantiles
    p = np.asarray(PIVOT_PROBABILITIES)
    t = student_factors(dof, upper_dof)
    q = np.asarray(quantiles) * t[0]
    ends = _root_ends(estimate, sd, q)
    # an end at 0 an SD beyond it: clipped there whatever the SD's last digits
    pivot = RootPivot(
        (np.where(ends > 0.0, estimate - ends, estimate + sd) / sd).tolist()
    )
    pivot.student = tuple((q * np.where(p < 0.5, t[1] / t[0], 1.0)).tolist())
    return pivot


def new_set_dof(dof: float, label: float, sampling: float, total: float) -> float:
    """``dof·min((V_L + 2V_S)/(2V), 1)²``: the terms' degrees of freedom ``dof``
    for the end of a prediction interval that a new test set's tail widens (a
    label part ``V_L``, sampling ``V_S``, ``V`` the variance with both sources)."""
    return dof * min((label + 2.0 * sampling) / (2.0 * total), 1.0) ** 2


class RatioPivot(tuple):
    """R²'s pivot on the scale of ``log(1 − R²)`` (:func:`log_ratio_quantiles`);
    ``quantiles_new``: the forward prediction interval's (:func:`new_set_quantiles`).
    The interval with both sources keeps it where the terms spread no more than
    the label noise (a sampling variance of 0: else the label-noise interval)."""

    method = "log_bootstrap_t"
    zero_source = "both"
    quantiles_new: tuple[float, ...] = ()

    def new_set(self, level: float) -> tuple:
        """``(quantiles, "bootstrap_t")`` of the prediction interval at ``level``
        for ``NoisyScore._log_complement``, or ``()`` (not the forward R²)."""
        ends = _pivot_quantiles(self.quantiles_new, level)
        return () if ends is None else (ends, "bootstrap_t")

    @staticmethod
    def log(
        score: NoisyScore,
        pivot: tuple[float, float] | None,
        variance: float,
        level: float,
        dof: float,
    ) -> ConfidenceInterval | None:
        """The interval with both sources of ``score`` at ``pivot``, the pair of
        quantiles on R²'s scale, ``(e^{cx} − 1)/c``, taken onto the log scale of
        ``1 − R²`` from ``1.5t`` SDs below 1 (:meth:`NoisyScore._log_complement`,
        whose unified interval holds it nearer), each end at least at the
        estimate; None there or without ``pivot``."""
        if pivot is None:
            return None
        c = math.sqrt(variance) / (1.0 - score.expected)
        x = np.log1p(c * np.asarray(pivot)) / c
        q = (-max(float(x[1]), 0.0), -min(float(x[0]), 0.0))
        return score._log_complement(variance, level, 1.5, dof, q, "bootstrap_t")


def _log_ratio(
    d: np.ndarray, q: np.ndarray, w: np.ndarray | None, index: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``log(Ā/B̄)`` of each row of resampled ``index``, less the whole test set's,
    and its SE from the linearized terms ``a/Ā − b/B̄``: from ``q = b/B̄₀`` and
    ``d = a/Ā₀ − q`` (``Ā₀, B̄₀`` of the whole set), both times the weights ``w``;
    the spread expanded in ``d`` has no cancellation."""
    x, y = d.take(index), q.take(index)
    n = index.shape[1]
    total = np.full(index.shape[0], float(n)) if w is None else w.take(index).sum(1)
    mean_b = y.sum(axis=1) / total
    mean_a = x.sum(axis=1) / total + mean_b
    k = 1.0 / mean_a - 1.0 / mean_b
    xx, xy, yy = (np.einsum("ij,ij->i", *pair) for pair in ((x, x), (x, y), (y, y)))
    spread = xx / mean_a**2 + 2.0 * k * xy / mean_a + k * k * yy
    se = np.sqrt(np.maximum(spread, 0.0) * n / (n - 1.0)) / total
    return np.log(mean_a / mean_b), se


def log_ratio_quantiles(
    a: np.ndarray,
    b: np.ndarray,
    u: float,
    root: float,
    widen: tuple[float, float, float],
    new_set: tuple[float, float] | None,
    weight: np.ndarray | None,
) -> RatioPivot | None:
    """R²'s bootstrap-t on the scale of ``log(1 − R²) = log Ā − log B̄`` (terms
    ``a, b``; each resample studentized by its linearized terms): quantiles at
    :data:`PIVOT_PROBABILITIES` of ``x = −T``, ``log(u_population/u)`` in SEs,
    given on R²'s scale as ``(e^{cx} − 1)/c``, ``c``: the interval's SD ``root``
    over ``u = 1 − R²`` (user guide: :ref:`error_budget_intervals`), each
    times Student's ``t/z`` (:func:`student_factors`) at ``widen[0]`` degrees
    of freedom, those above 0.5 (R²'s lower limit) at ``widen[1]`` and times
    ``widen[2]``. None where the log is undefined or the test set is outside
    ``[10,`` :data:`PIVOT_MAX_SAMPLES` ``]``. ``new_set``: the forward estimand's
    label variance and :func:`new_set_dof`, for :func:`new_set_quantiles`."""
    n = a.shape[0]
    w = None if weight is None else np.asarray(weight, dtype=np.float64)
    means = [float(np.mean(v) if w is None else w @ v / w.sum()) for v in (a, b)]
    c = root / u if u > 0.0 and min(means) > 0.0 else 0.0
    if not (10 <= n <= PIVOT_MAX_SAMPLES and 0.0 < c < math.inf):
        return None
    q = b / means[1]
    d = a / means[0] - q
    if w is not None:
        d, q = w * d, w * q
    theta, _ = _log_ratio(d, q, w, np.arange(n)[None])
    rng = np.random.default_rng(0)
    draws = np.empty((2, N_PIVOT_RESAMPLES))
    rows = max(1, 50_000 // n)  # small blocks: 2.5 times faster at n = 100
    for start in range(0, N_PIVOT_RESAMPLES, rows):
        index = rng.integers(0, n, (min(rows, N_PIVOT_RESAMPLES - start), n))
        draws[:, start : start + index.shape[0]] = _log_ratio(d, q, w, index)
    x = (theta - draws[0]) / draws[1]
    x = x[np.isfinite(x)]
    if x.size < N_PIVOT_RESAMPLES // 2 or not np.isfinite(theta[0]):
        return None
    p = np.asarray(PIVOT_PROBABILITIES)
    t = student_factors(*widen[:2])
    x = np.quantile(x, p) * np.where(p > 0.5, t[1] * widen[2], t[0])
    pivot = RatioPivot(float(v) for v in np.expm1(c * x) / c)
    if new_set is not None:
        label = math.sqrt(new_set[0]) / u  # the new labels' SD of log(1 − R²)
        pivot.quantiles_new = new_set_quantiles(draws, label, new_set[1], rng)
    return pivot


def new_set_quantiles(
    draws: np.ndarray, label: float, dof: float, rng: np.random.Generator
) -> tuple[float, ...]:
    """The forward R²'s prediction pivot on the log scale: quantiles at
    :data:`PIVOT_PROBABILITIES` of ``−(θ*_{b−1} − θ*_b + label·Z)/√(label² + 2
    se*_b²)`` (``θ*, se*``: the resamples' ``log(1 − R²)`` and SE, ``draws``; one
    resample stands for the new test set, the next for this one, ``Z`` a normal
    for the new labels), those below 0.5 (a new set's R² low) times Student's
    ``t_dof(p)/z(p)`` (user guide: :ref:`error_budget_new_set`)."""
    theta, se = draws
    pivot = (np.roll(theta, 1) - theta + label * rng.standard_normal(theta.size)) / (
        np.sqrt(label * label + 2.0 * se * se)
    )
    pivot = -pivot[np.isfinite(pivot)]
    p = np.asarray(PIVOT_PROBABILITIES)  # at least Cauchy's tails
    widen = np.where(p < 0.5, student_factors(max(dof, 1.0), 1.0)[0], 1.0)
    return tuple((np.quantile(pivot, p) * widen).tolist())


class DeferredPivot(Sequence):
    """:func:`studentized_quantiles` of ``(h, weight)``, drawn when first read
    (only the intervals with both sources read them), or R²'s
    :func:`log_ratio_quantiles` of ``ratio`` (``(a, b, u, SD)``) where they exist,
    or the MSE's :func:`root_pivot` of them and ``root`` (``(dof, T, SD,
    upper dof)``);
    pickled as the tuple."""

    __slots__ = ("_lock", "_terms", "_values")

    def __init__(
        self,
        h: np.ndarray,
        weight: np.ndarray | None,
        ratio: tuple | None = None,
        root: tuple | None = None,
    ) -> None:
        weight = None if weight is None else weight.copy()
        self._terms: tuple | None = (h, weight, ratio, root)
        self._values: tuple[float, ...] = ()
        self._lock = threading.Lock()

    def _quantiles(self) -> tuple[float, ...]:
        with self._lock:
            if self._terms is not None:
                h, weight, ratio, root = self._terms
                with np.errstate(all="ignore"):
                    found = ratio and log_ratio_quantiles(*ratio, weight)
                    found = found or studentized_quantiles(h, weight)
                    self._values = (root and found and root_pivot(found, *root)) or (
                        found or ()
                    )
                self._terms = None
        return self._values

    def __getattr__(self, name: str) -> Any:  # R²'s method
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._quantiles(), name)

    def __len__(self) -> int:
        return len(self._quantiles())

    def __getitem__(self, index: Any) -> Any:
        return self._quantiles()[index]

    def __reduce__(self) -> tuple:
        values = self._quantiles()
        return (type(values), (tuple(values),), getattr(values, "__dict__", None))

    def __repr__(self) -> str:
        return repr(self._quantiles())
