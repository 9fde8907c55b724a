"""Monte Carlo over observed confusion matrices: multinomial per cell with a
shared flip model and no weights, else sample by sample."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ....utils._arrays import chunks
from ....utils._noise import FlipNoise

#: Random draws of single labels generated at a time (bounds the memory).
_BLOCK = 1 << 20

#: Class positions ``(true, pred)`` of a chunk of samples.
IndexFn = Callable[[slice], tuple[np.ndarray, np.ndarray]]


def confusion_counts(
    indices: IndexFn, n_samples: int, n_classes: int, n_columns: int | None = None
) -> np.ndarray:
    """``C[k, j]``: the number of samples of class ``k`` predicted ``j`` (``j`` one
    of ``n_columns``, by default ``n_classes``)."""
    n_columns = n_columns or n_classes
    cells = np.zeros(n_classes * n_columns, dtype=np.int64)
    for rows in chunks(n_samples):
        true, pred = indices(rows)
        pair = true.astype(np.intp) * n_columns + pred
        cells += np.bincount(pair, minlength=n_classes * n_columns)
    return cells.reshape(n_classes, n_columns)


def pair_sums(
    indices: IndexFn, n_samples: int, n_classes: int, weight: np.ndarray | None
) -> np.ndarray:
    """``[N, N2]``: ``N[k, j] = Σ w`` and ``N2[k, j] = Σ w²`` over the samples of
    class ``k`` predicted ``j``."""
    size = n_classes * n_classes
    sums = np.zeros((2, size))
    for rows in chunks(n_samples):
        true, pred = indices(rows)
        cell = true.astype(np.intp) * n_classes + pred
        w = None if weight is None else weight[rows]
        sums[0] += np.bincount(cell, weights=w, minlength=size)
        squares = None if w is None else w * w
        sums[1] += np.bincount(cell, weights=squares, minlength=size)
    return sums.reshape(2, n_classes, n_classes)


def draw_confusions(
    indices: IndexFn,
    n_samples: int,
    noise: FlipNoise,
    *,
    weight: np.ndarray | None,
    n_draws: int,
    rng: np.random.Generator,
    n_columns: int | None = None,
) -> np.ndarray:
    """``n_draws`` observed confusion matrices, shape ``(n_draws, K, n_columns)``
    (the predictions: any ``n_columns`` column positions, by default ``K``)."""
    k = noise.n_classes
    c = n_columns or k
    matrix = noise.shared_matrix()
    if matrix is not None and weight is None:
        cells = confusion_counts(indices, n_samples, k, c)
        out = np.zeros((n_draws, k, c))
        for true, pred in zip(*np.nonzero(cells), strict=True):
            out[:, :, pred] += rng.multinomial(
                cells[true, pred], matrix[true], size=n_draws
            )
        return out
    if noise.matrix is None:
        return _draw_flips(indices, n_samples, noise, weight, n_draws, rng, c)
    out = np.zeros(n_draws * k * c)
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
            flat = (draw * k + observed) * c + pred
            out += np.bincount(
                flat.ravel(),
                weights=np.broadcast_to(w, observed.shape).ravel(),
                minlength=out.size,
            )
    return out.reshape(n_draws, k, c)


def _draw_flips(
    indices: IndexFn,
    n_samples: int,
    noise: FlipNoise,
    weight: np.ndarray | None,
    n_draws: int,
    rng: np.random.Generator,
    c: int,
) -> np.ndarray:
    """Per-sample flips: one uniform ``u`` per sample and draw flips the label
    when ``u < q_i``, and ``u/q_i`` picks one of the ``K - 1`` other classes;
    only the flipped samples move from the matrix of ``y_true``."""
    k = noise.n_classes
    out = np.zeros((n_draws, k * c))
    for rows in chunks(n_samples):
        true, pred = indices(rows)
        true = true.astype(np.intp)
        size = true.shape[0]
        w = np.ones(size) if weight is None else weight[rows]
        out += np.bincount(true * c + pred, weights=w, minlength=k * c)
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
            base = (draw + start) * (k * c)
            moved = w[sample]
            out.ravel()[:] += np.bincount(
                np.concatenate(
                    [base + true[sample] * c + column, base + new * c + column]
                ),
                weights=np.concatenate([-moved, moved]),
                minlength=out.size,
            )
    return out.reshape(n_draws, k, c)


def draw_moments(values: np.ndarray) -> tuple[Any, Any]:
    """Mean and variance (``ddof=1``) along axis 0; NaN if a value is not finite."""
    values = np.where(np.isfinite(values), values, np.nan)
    return values.mean(axis=0), values.var(axis=0, ddof=1)
