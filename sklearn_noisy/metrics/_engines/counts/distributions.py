"""Exact distributions of the count metrics over label flips, for intervals
(user guide: :ref:`exact_intervals`)."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from scipy.special import ndtri

from ....utils._noise import FlipNoise
from ..._definitions.counts import COUNT_METRICS
from .poisson_binomial import few_distinct, poisson_binomial_window

#: Per-sample probabilities are kept for at most this many samples (8 MB).
MAX_STORED_SAMPLES = 2**20
#: The accuracy's per-sample probabilities, which take a second pass over the
#: labels, are computed up to this many samples (a constant q: any size).
MAX_ACCURACY_SAMPLES = 2**16
#: The (TP, FN) grid of the two-count metrics is built up to this many cells.
MAX_GRID_CELLS = 10**7
#: The Brier score and log-loss keep their per-sample losses up to this many samples.
MAX_LOSS_SAMPLES = 4096
#: ... and enumerate their distribution up to this many atoms.
MAX_LOSS_ATOMS = 2**20
#: Up to this many probabilities are grouped only when an interval is asked for.
_GROUP_LATER = 4096
#: Probability dropped from each end of a count's PMF before the grid is built.
_TAIL = 1e-15
#: Atoms closer than this (relative to max(1, |value|)) are one value: the same
#: rational number computed in two ways can differ in the last bits.
_TIE = 1e-12


def _merge(values: np.ndarray, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct atoms, those within :data:`_TIE` of each other merged."""
    order = np.argsort(values, kind="stable")
    v, p = values[order], probs[order]
    if v.size > 1:
        new = np.empty(v.size, dtype=bool)
        new[0] = True
        new[1:] = np.diff(v) > _TIE * np.maximum(1.0, np.abs(v[1:]))
        starts = np.flatnonzero(new)
        v, p = v[starts], np.add.reduceat(p, starts)
    return v, p


def discrete_interval(
    values: np.ndarray, probs: np.ndarray, confidence_level: float
) -> tuple[float, float, float]:
    """``(low, high, content)``: the equal-tailed interval whose tails each hold
    at most ``(1 - confidence_level)/2``."""
    v, p = _merge(values, probs)
    p = p / p.sum()
    half = 0.5 * (1.0 - confidence_level)
    below = np.cumsum(p)  # P(X <= v_j)
    above = np.concatenate([np.cumsum(p[::-1])[::-1][1:], [0.0]])  # P(X > v_j)
    low = min(int(np.searchsorted(below, half, side="right")), v.size - 1)
    high = int(np.argmax(above <= half))
    high = max(high, low)
    content = float(p[low : high + 1].sum())
    return float(v[low]), float(v[high]), content


class _Tabled:
    """A discrete distribution tabulated on demand as ``_table = (values, probs)``."""

    _table: tuple[np.ndarray, np.ndarray]

    def interval(self, confidence_level: float) -> tuple[float, float, float]:
        """Equal-tailed exact interval (:func:`discrete_interval`)."""
        return discrete_interval(*self._table, confidence_level)


@dataclass(frozen=True, eq=False, repr=False)
class _Counts:
    """A Poisson-binomial count: its probabilities ``values`` with their
    multiplicities ``counts`` (None: one trial each)."""

    values: np.ndarray
    counts: np.ndarray | None = None

    @classmethod
    def of(cls, p: np.ndarray) -> _Counts | None:
        """The compact form of ``p`` (small: grouped when tabled), or None when
        it is too large to keep."""
        p = np.asarray(p, dtype=np.float64).ravel()
        if p.size <= _GROUP_LATER:
            return cls(p.copy())
        groups = few_distinct(p)
        if groups is not None:
            return cls(*groups)
        if p.size > MAX_STORED_SAMPLES:
            return None
        return cls(p.copy())

    def width(self) -> float:
        """An upper estimate of the number of counts that carry probability."""
        n = float(self.values.size if self.counts is None else self.counts.sum())
        spread = self.values * (1.0 - self.values)
        variance = spread.sum() if self.counts is None else spread @ self.counts
        return min(n + 1.0, 18.0 * math.sqrt(float(variance)) + 3.0)

    def window(self) -> tuple[int, np.ndarray]:
        """``(offset, pmf)`` with ``_TAIL`` trimmed from each end."""
        groups = few_distinct(self.values) if self.counts is None else None
        if groups is None:
            groups = (self.values, self.counts)
        p = self.values if groups[1] is None else np.repeat(*groups)
        offset, pmf = poisson_binomial_window(p)
        below = np.cumsum(pmf)
        above = np.cumsum(pmf[::-1])[::-1]
        start = int(np.searchsorted(below, _TAIL, side="right"))
        stop = pmf.size - int(np.searchsorted(above[::-1], _TAIL, side="right"))
        start, stop = min(start, pmf.size - 1), max(stop, start + 1)
        return offset + start, pmf[start:stop]


@dataclass(frozen=True, eq=False, repr=False)
class CountDistribution(_Tabled):
    """The distribution of ``X / denominator``, ``X`` a Poisson-binomial count."""

    counts: _Counts
    denominator: int

    @cached_property
    def _table(self) -> tuple[np.ndarray, np.ndarray]:
        offset, pmf = self.counts.window()
        return (offset + np.arange(pmf.size)) / self.denominator, pmf


@dataclass(frozen=True, eq=False, repr=False)
class TwoCountDistribution(_Tabled):
    """A binary metric as a function of the independent counts TP and FN."""

    metric: str
    tp: _Counts
    fn: _Counts
    n_pred_pos: int
    n_samples: int

    @cached_property
    def _table(self) -> tuple[np.ndarray, np.ndarray]:
        offset_t, p_t = self.tp.window()
        offset_f, p_f = self.fn.window()
        t = offset_t + np.arange(p_t.size, dtype=np.float64)
        n = offset_t + offset_f + np.arange(p_t.size + p_f.size - 1, dtype=np.float64)
        alpha, beta = COUNT_METRICS[self.metric].affine(
            n, self.n_pred_pos, self.n_samples
        )
        # Cell (i, j) has TP = t_i and S = TP + FN = n_{i + j}.
        index = np.arange(p_t.size)[:, None] + np.arange(p_f.size)[None, :]
        values = alpha[index] + beta[index] * t[:, None]
        probs = p_t[:, None] * p_f[None, :]
        return values.ravel(), probs.ravel()


def count_metric_distribution(
    metric: str, problem: Any, *, zero_division: float = 0.0, adjusted: bool = False
) -> CountDistribution | TwoCountDistribution | None:
    """The exact distribution of the plain binary metric of an unweighted
    ``_BinaryProblem``, or None when too large."""
    if (
        problem.weight is not None
        or adjusted
        or zero_division != 0.0
        or problem.n_samples > MAX_STORED_SAMPLES
    ):
        return None
    pi, pred_pos = problem.pi(), problem.pred_pos
    n_pred_pos = int(np.count_nonzero(pred_pos))
    tp = _Counts.of(pi[pred_pos])
    if COUNT_METRICS[metric].fixed_denominator:  # TP over a fixed total
        if tp is None or n_pred_pos == 0:
            return None
        return CountDistribution(tp, n_pred_pos)
    fn = _Counts.of(pi[~pred_pos])
    if tp is None or fn is None or tp.width() * fn.width() > MAX_GRID_CELLS:
        return None
    return TwoCountDistribution(metric, tp, fn, n_pred_pos, int(pi.size))


def accuracy_distribution(
    n_samples: int, noise: FlipNoise, hits: float, terms: list | None
) -> CountDistribution | None:
    """The exact distribution of the unweighted forward accuracy: ``hits`` with
    a constant flip, else the hit probabilities ``terms`` (None: too many)."""
    if n_samples == 0:
        return None
    if noise.matrix is None and noise.is_constant:
        keep, flip = noise.keep_flip()
        n_hits = round(hits)
        counts = _Counts(
            np.array([float(flip), float(keep)]), np.array([n_samples - n_hits, n_hits])
        )
        return CountDistribution(counts, n_samples)
    if terms is None:
        return None
    counts = _Counts.of(np.concatenate(terms))
    return None if counts is None else CountDistribution(counts, n_samples)


@dataclass(frozen=True, eq=False, repr=False)
class LossSumDistribution(_Tabled):
    """A sum of independent per-sample losses ``losses[i, j]`` (already times
    ``w_i / W``) of probabilities ``probs[i, j]``, plus the fixed ``shift``;
    its support is enumerated sample after sample."""

    losses: np.ndarray
    probs: np.ndarray
    shift: float = 0.0

    @cached_property
    def _table(self) -> tuple[np.ndarray, np.ndarray]:
        values, probs = np.full(1, self.shift), np.ones(1)
        for loss, prob in zip(self.losses, self.probs, strict=True):
            keep = prob > 0.0
            values = (values[:, None] + loss[keep][None, :]).ravel()
            probs = (probs[:, None] * prob[keep][None, :]).ravel()
            values, probs = _merge(values, probs)
        return values, probs


def loss_distribution(
    losses: np.ndarray, probs: np.ndarray, weight: np.ndarray | None
) -> LossSumDistribution | None:
    """The exact distribution of a mean loss (Brier score, log-loss), or None
    beyond :data:`MAX_LOSS_SAMPLES` samples or :data:`MAX_LOSS_ATOMS` atoms."""
    n_samples = losses.shape[0]
    if n_samples == 0 or n_samples > MAX_LOSS_SAMPLES:
        return None
    scale = (
        np.full(n_samples, 1.0 / n_samples) if weight is None else weight / weight.sum()
    )
    scaled = losses * scale[:, None]
    possible = probs > 0.0
    random = (possible.sum(axis=1) > 1) & (scale > 0.0)
    fixed = float((probs * scaled)[~random].sum())
    rows, counts = np.unique(
        np.concatenate([scaled[random], probs[random]], axis=1),
        axis=0,
        return_counts=True,
    )
    n_classes = (rows[:, losses.shape[1] :] > 0.0).sum(axis=1)
    log_atoms = sum(
        math.log(math.comb(int(n) + int(k) - 1, int(k) - 1))
        for n, k in zip(counts, n_classes, strict=True)
    )
    if log_atoms > math.log(MAX_LOSS_ATOMS):
        return None
    return LossSumDistribution(scaled[random], probs[random], fixed)


@dataclass(frozen=True, eq=False, repr=False)
class ConfusionDistribution:
    """The cells of a confusion matrix under a shared transition matrix: cell
    ``(j, k)`` is ``Σ_r Binomial(N[r, k], T[r, j])``, ``N`` the nominal matrix."""

    counts: np.ndarray
    matrix: np.ndarray

    def cell(self, j: int, k: int) -> CountDistribution:
        """The distribution of cell ``(j, k)``."""
        return CountDistribution(_Counts(self.matrix[:, j], self.counts[:, k]), 1)


def confusion_distribution(
    noise: FlipNoise, weight: np.ndarray | None, counts: np.ndarray
) -> ConfusionDistribution | None:
    """The exact cell distributions of a forward confusion matrix, or None
    (with ``sample_weight`` or a per-sample ``q``)."""
    matrix = noise.shared_matrix()
    if matrix is None or weight is not None:
        return None
    return ConfusionDistribution(np.rint(counts).astype(np.int64), np.asarray(matrix))


def confusion_intervals(
    distribution: ConfusionDistribution | None,
    expected: np.ndarray,
    variance: np.ndarray,
    column_totals: np.ndarray,
    confidence_level: float,
) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` of every cell: exact (:func:`discrete_interval`), else
    ``expected ± z·std`` clipped to ``[0, column total]``."""
    if not 0.0 < confidence_level < 1.0:
        raise ValueError(
            "confidence_level must be a number in the open interval (0, 1); "
            f"got {confidence_level!r}."
        )
    if distribution is None:
        half_width = float(ndtri(0.5 + confidence_level / 2.0)) * np.sqrt(variance)
        high_bound = np.broadcast_to(column_totals, expected.shape)
        low = np.clip(expected - half_width, 0.0, high_bound)
        return low, np.clip(expected + half_width, low, high_bound)
    n_classes = expected.shape[0]
    low, high = np.empty((2, n_classes, n_classes))
    for j, k in itertools.product(range(n_classes), repeat=2):
        low[j, k], high[j, k], _ = distribution.cell(j, k).interval(confidence_level)
    return low, high
