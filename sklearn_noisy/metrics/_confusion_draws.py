"""Monte Carlo over observed confusion matrices, for the count metrics.

Where no exact method is affordable (the variance of the macro and weighted
averages, multiclass MCC, sample weights that are not all equal), the count
metrics are averaged over redrawn labels. Every one of them is a function of
the observed confusion matrix ``N[l, j]`` (rows: observed class, columns:
prediction), so only that matrix is drawn:

* with a flip model shared by all samples and no weights, the observed
  classes of the ``C[k, j]`` samples of true class ``k`` predicted ``j`` are
  multinomial with the probabilities ``T[k, :]``: a draw costs ``O(K³)``,
  whatever the number of samples;
* otherwise each sample is drawn (:meth:`~sklearn_noisy.utils._noise.FlipNoise.sampler`)
  chunk by chunk, and the weighted matrix is accumulated by ``bincount``.

:func:`confusion_scores` computes scikit-learn's metrics on a stack of such
matrices, vectorised over the draws, with scikit-learn's conventions
(``zero_division``, the classes averaged by balanced accuracy, MCC's 0).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..utils._arrays import chunks
from ..utils._noise import FlipNoise

__all__ = ["confusion_counts", "confusion_scores", "draw_confusions", "draw_moments"]

#: Random draws of single labels generated at a time (bounds the memory).
_BLOCK = 1 << 20

#: Class positions ``(true, pred)`` of a chunk of samples.
IndexFn = Callable[[slice], tuple[np.ndarray, np.ndarray]]


def confusion_counts(indices: IndexFn, n_samples: int, n_classes: int) -> np.ndarray:
    """``C[k, j]``: the number of samples of class ``k`` predicted ``j``."""
    cells = np.zeros(n_classes * n_classes, dtype=np.int64)
    for rows in chunks(n_samples):
        true, pred = indices(rows)
        pair = true.astype(np.intp) * n_classes + pred
        cells += np.bincount(pair, minlength=n_classes * n_classes)
    return cells.reshape(n_classes, n_classes)


def draw_confusions(
    indices: IndexFn,
    n_samples: int,
    noise: FlipNoise,
    *,
    weight: np.ndarray | None,
    n_draws: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """``n_draws`` observed confusion matrices, shape ``(n_draws, K, K)``."""
    k = noise.n_classes
    matrix = noise.shared_matrix()
    if matrix is not None and weight is None:
        cells = confusion_counts(indices, n_samples, k)
        out = np.zeros((n_draws, k, k))
        for true, pred in zip(*np.nonzero(cells), strict=True):
            out[:, :, pred] += rng.multinomial(
                cells[true, pred], matrix[true], size=n_draws
            )
        return out
    if noise.matrix is None:
        return _draw_flips(indices, n_samples, noise, weight, n_draws, rng)
    out = np.zeros(n_draws * k * k)
    classes = np.arange(k)
    for rows in chunks(n_samples):
        true, pred = indices(rows)
        size = true.shape[0]
        sampler = noise.take(rows).sampler(true.astype(np.intp), classes)
        w = np.ones(size) if weight is None else weight[rows]
        batch = max(1, _BLOCK // max(size, 1))
        for start in range(0, n_draws, batch):
            stop = min(start + batch, n_draws)
            observed = sampler.draw(rng, stop - start)
            draw = np.arange(start, stop)[:, None]
            flat = (draw * k + observed) * k + pred
            out += np.bincount(
                flat.ravel(),
                weights=np.broadcast_to(w, observed.shape).ravel(),
                minlength=out.size,
            )
    return out.reshape(n_draws, k, k)


def _draw_flips(
    indices: IndexFn,
    n_samples: int,
    noise: FlipNoise,
    weight: np.ndarray | None,
    n_draws: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """Per-sample flips: only the flipped samples are moved in each draw.

    One uniform ``u`` per sample and draw: the label flips when ``u < q_i``,
    and then ``u/q_i``, uniform on (0, 1), picks one of the ``K - 1`` other
    classes. The matrix of a draw is the confusion matrix of ``y_true``
    minus the flipped samples' cells plus their new ones.
    """
    k = noise.n_classes
    out = np.zeros((n_draws, k * k))
    for rows in chunks(n_samples):
        true, pred = indices(rows)
        true = true.astype(np.intp)
        size = true.shape[0]
        w = np.ones(size) if weight is None else weight[rows]
        out += np.bincount(true * k + pred, weights=w, minlength=k * k)
        q = np.broadcast_to(np.asarray(noise.q, dtype=np.float64)[()], (n_samples,))
        q = q[rows]
        batch = max(1, _BLOCK // max(size, 1))
        for start in range(0, n_draws, batch):
            stop = min(start + batch, n_draws)
            u = rng.random((stop - start, size))
            draw, sample = np.nonzero(u < q)
            shift = (u[draw, sample] / q[sample] * (k - 1)).astype(np.intp)
            new = (true[sample] + 1 + np.minimum(shift, k - 2)) % k
            column = pred[sample]
            base = (draw + start) * (k * k)
            moved = w[sample]
            out.ravel()[:] += np.bincount(
                np.concatenate(
                    [base + true[sample] * k + column, base + new * k + column]
                ),
                weights=np.concatenate([-moved, moved]),
                minlength=out.size,
            )
    return out.reshape(n_draws, k, k)


def _divide(numerator: np.ndarray, denominator: np.ndarray, zero: float) -> np.ndarray:
    """``numerator/denominator``, ``zero`` where the denominator is 0."""
    safe = np.where(denominator == 0, 1.0, denominator)
    return np.where(denominator == 0, zero, numerator / safe)


def _nanaverage(values: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """scikit-learn's ``_nanaverage`` along the last axis (NaN entries ignored)."""
    defined = ~np.isnan(values)
    clean = np.where(defined, values, 0.0)
    count = defined.sum(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(count > 0, clean.sum(-1) / np.maximum(count, 1), np.nan)
        if weights is None:
            return mean
        w = np.where(defined, weights, 0.0)
        total = w.sum(-1)
        weighted = (clean * w).sum(-1) / np.where(total > 0, total, 1.0)
    # All weights zero: scikit-learn falls back to the unweighted mean.
    return np.where(total > 0, weighted, mean)


def _balanced_accuracy(tp: np.ndarray, true_sum: np.ndarray, adjusted: bool) -> Any:
    """Mean recall over the observed classes; adjusted: rescaled from chance."""
    with np.errstate(divide="ignore", invalid="ignore"):
        per_class = np.where(
            true_sum > 0, tp / np.where(true_sum > 0, true_sum, 1), np.nan
        )
    score = _nanaverage(per_class, None)
    if adjusted:
        n_present = (true_sum > 0).sum(-1)
        chance = 1.0 / n_present
        with np.errstate(divide="ignore", invalid="ignore"):
            score = np.where(n_present > 1, (score - chance) / (1.0 - chance), np.nan)
    return score


def _matthews(confusion: np.ndarray, tp: np.ndarray) -> np.ndarray:
    """scikit-learn's multiclass MCC of each matrix."""
    t_sum = confusion.sum(-1)
    p_sum = confusion.sum(-2)
    n_correct = tp.sum(-1)
    n = p_sum.sum(-1)
    cov_ytyp = n_correct * n - (t_sum * p_sum).sum(-1)
    cov_ypyp = n * n - (p_sum * p_sum).sum(-1)
    cov_ytyt = n * n - (t_sum * t_sum).sum(-1)
    product = cov_ypyp * cov_ytyt
    return np.where(
        product == 0, 0.0, cov_ytyp / np.sqrt(np.where(product == 0, 1, product))
    )


def confusion_scores(
    metric: str,
    confusion: np.ndarray,
    *,
    average: str | None,
    zero_division: float = 0.0,
    adjusted: bool = False,
    pos_index: int | None = None,
    label_index: np.ndarray | None = None,
) -> np.ndarray:
    """scikit-learn's ``metric`` on each matrix of ``confusion`` (``(D, K, K)``).

    Returns shape ``(D,)``, or ``(D, K)`` for ``average=None``.
    ``label_index`` restricts precision, recall and F1 to some classes
    (scikit-learn's ``labels`` as a subset).
    """
    tp = np.diagonal(confusion, axis1=-2, axis2=-1)
    true_sum = confusion.sum(-1)
    if metric == "balanced_accuracy":
        return _balanced_accuracy(tp, true_sum, adjusted)
    if metric == "matthews_corrcoef":
        return _matthews(confusion, tp)
    pred_sum = confusion.sum(-2)
    if label_index is not None:
        tp, true_sum = tp[..., label_index], true_sum[..., label_index]
        pred_sum = pred_sum[..., label_index]
    if average == "binary":
        tp, true_sum, pred_sum = (
            tp[:, pos_index],
            true_sum[:, pos_index],
            pred_sum[:, pos_index],
        )
    elif average == "micro":
        tp, true_sum, pred_sum = tp.sum(-1), true_sum.sum(-1), pred_sum.sum(-1)
    if metric == "precision":
        values = _divide(tp, pred_sum, zero_division)
    elif metric == "recall":
        values = _divide(tp, true_sum, zero_division)
    else:
        values = _divide(2.0 * tp, true_sum + pred_sum, zero_division)
    if average in ("macro", "weighted"):
        return _nanaverage(values, true_sum if average == "weighted" else None)
    return values


def draw_moments(values: np.ndarray) -> tuple[Any, Any]:
    """Mean and variance (``ddof=1``) of Monte Carlo values along axis 0."""
    return values.mean(axis=0), values.var(axis=0, ddof=1)
