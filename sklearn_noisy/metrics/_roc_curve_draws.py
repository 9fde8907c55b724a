"""The ROC curve of redrawn labels, vertically averaged on a grid of FPRs.

:func:`noisy_roc_curve`: seeded Monte Carlo redraws of the flipped labels of
:func:`~sklearn_noisy.metrics.expected_roc_auc_score`'s model, each draw's ROC
curve read at the false positive rates ``j / (n_grid - 1)``, their mean, SD and
equal-tailed quantiles (user guide: :ref:`roc_curve_display`). Drawn by
:class:`~sklearn_noisy.metrics.NoisyRocCurveDisplay`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ._roc_auc import _flip_law

__all__ = ["NoisyRocCurve", "noisy_roc_curve"]

#: Label (or grid) entries per batch of redraws (bounds the memory of a batch).
_BATCH_ELEMENTS = 1_000_000
#: Redraws of a label vector with a single class are discarded (the ROC curve
#: is undefined there); after this many times ``n_draws`` attempts, give up.
_MAX_ATTEMPTS = 100


class NoisyRocCurve(NamedTuple):
    """The vertically averaged ROC curve of the redrawn labels on a grid."""

    fpr_grid: np.ndarray
    tpr_expected: np.ndarray
    tpr_std: np.ndarray
    tpr_low: np.ndarray
    tpr_high: np.ndarray
    method: str


def _curve_points(labels: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, ...]:
    """Cumulative ``(TP, FP)`` at each distinct threshold, from the corner (0, 0).

    ``labels`` (one row per draw, 0/1) are sorted by decreasing score; ``ends``
    are the positions one past the last sample of each group of tied scores.
    """
    counts = np.cumsum(labels, axis=1, dtype=np.int64)[:, ends - 1]
    tp = np.concatenate([np.zeros((labels.shape[0], 1), np.int64), counts], axis=1)
    fp = np.concatenate([[0], ends]).astype(np.int64)[None, :] - tp
    return tp, fp


def _tpr_on_grid(tp: np.ndarray, fp: np.ndarray, n_grid: int) -> np.ndarray:
    """TPR of each draw at ``FPR = j / (n_grid - 1)``, ``j = 0 .. n_grid - 1``.

    Each draw's ROC curve is the broken line through its points (scikit-learn's
    curve, the one :func:`~sklearn.metrics.auc` integrates). Where it rises
    vertically at a grid FPR the highest TPR is taken (the curve is
    right-continuous). The comparisons are in integers,
    ``FP · G <= j · n_negatives``, so no grid point is misplaced by rounding.
    """
    n_rows, n_points = tp.shape
    steps = n_grid - 1
    negatives = fp[:, -1]
    positives = tp[:, -1]
    stride = int(fp[0, -1] + tp[0, -1]) * steps + 1
    offset = np.arange(n_rows, dtype=np.int64)[:, None] * stride
    keys = (fp * steps + offset).ravel()
    target = np.arange(n_grid, dtype=np.int64)[None, :] * negatives[:, None]
    index = np.searchsorted(keys, (target + offset).ravel(), side="right")
    index = index.reshape(n_rows, n_grid) - 1 - np.arange(n_rows)[:, None] * n_points
    after = np.minimum(index + 1, n_points - 1)
    rows = np.arange(n_rows)[:, None]
    fp_at, fp_next = fp[rows, index], fp[rows, after]
    tp_at, tp_next = tp[rows, index], tp[rows, after]
    width = (fp_next - fp_at) * steps
    rise = np.zeros(target.shape)
    moving = width > 0
    rise[moving] = (target - fp_at * steps)[moving] / width[moving]
    return (tp_at + rise * (tp_next - tp_at)) / positives[:, None]


def _summary(
    values: np.ndarray, n_grid: int, level: float, method: str
) -> NoisyRocCurve:
    grid = np.arange(n_grid) / (n_grid - 1)
    expected = values.mean(axis=0)
    std = values.std(axis=0, ddof=1) if values.shape[0] > 1 else np.zeros(n_grid)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail], axis=0)
    return NoisyRocCurve(grid, expected, std, low, high, method)


def noisy_roc_curve(
    positive: np.ndarray,
    scores: np.ndarray,
    q: Any,
    transition_matrix: Any,
    *,
    n_draws: int,
    n_grid: int,
    confidence_level: float,
    rng: np.random.Generator,
) -> NoisyRocCurve:
    """The vertically averaged ROC curve of the flipped labels and its band.

    ``positive`` marks the positive samples of the labels as given, ``q`` or
    ``transition_matrix`` (classes ``[negative, positive]``) their flips, as
    in :func:`~sklearn_noisy.metrics.expected_roc_auc_score`. Without any
    flip, the curve of the labels as given (exact).
    """
    order = np.argsort(-scores, kind="stable")
    ranked = scores[order]
    ends = np.append(np.flatnonzero(ranked[1:] != ranked[:-1]) + 1, ranked.size)
    index = positive[order].astype(np.intp)
    t0, t1, noise = _flip_law(positive, q, transition_matrix)
    if not (np.any(t0 > 0.0) or np.any(t1 < 1.0)):
        values = _tpr_on_grid(*_curve_points(index[None, :], ends), n_grid)
        return _summary(values, n_grid, confidence_level, "exact")
    sampler = noise.take(order).sampler(index, np.array([0, 1]))
    batch = max(1, min(n_draws, _BATCH_ELEMENTS // max(positive.size, n_grid)))
    kept: list[np.ndarray] = []
    found, attempts = 0, 0
    while found < n_draws:
        if attempts >= _MAX_ATTEMPTS * n_draws:
            raise ValueError(
                f"Only {found} of {attempts} redraws of the labels hold both "
                f"classes: n_draws={n_draws} curves cannot be drawn."
            )
        labels = sampler.draw(rng, batch)
        attempts += batch
        n_positive = labels.sum(axis=1)
        labels = labels[(n_positive > 0) & (n_positive < positive.size)]
        labels = labels[: n_draws - found]
        found += labels.shape[0]
        if labels.shape[0]:
            kept.append(_tpr_on_grid(*_curve_points(labels, ends), n_grid))
    return _summary(np.concatenate(kept), n_grid, confidence_level, "monte_carlo")
