"""The joint Monte Carlo of a paired difference, streamed over the samples.

The metrics without an exact paired kernel (RMSE, R², recall, F1, balanced
accuracy, MCC) are functions of a few sums over the samples: per draw and
output, the two sums of squared errors and the first two moments of the labels
(RMSE and R²), or, for binary labels, the (weighted) number of observed
positives and the observed positives among each model's predicted positives
(recall, F1, balanced accuracy, MCC, from which TP, FN, FP and TN of both
models follow). :func:`streamed_difference_draws` draws the labels chunk by
chunk of :data:`~sklearn_noisy.utils._arrays.CHUNK_SIZE` samples for a batch of
draws at a time and accumulates those sums, so that no drawn label vector is
ever held whole: the memory does not grow with the number of samples. The
metric of each draw is then computed from its sums with scikit-learn's
conventions (the affine forms of
:mod:`~sklearn_noisy.metrics._count_definitions`, ``affine``).

Both models see the same drawn labels, as in the scorer-based joint Monte Carlo
of :func:`~sklearn_noisy.metrics.expected_paired_difference`, which remains the
path for metric options, multiclass labels and transition matrices over more
than two classes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..utils._arrays import CHUNK_SIZE, check_sample_weight, chunk_of, chunks
from ..utils._noise import FlipNoise
from ..utils._validation import check_regression_inputs
from ._count_definitions import COUNT_METRICS
from ._paired_kernels import _encode_chunk, _label_arrays, pair_classes
from ._registry import MetricInfo
from ._regression_definitions import RegressionLoss

__all__ = ["STREAMED_COUNT_METRICS", "streamed_difference_draws"]

#: The count metrics whose paired Monte Carlo is streamed: those of the exact
#: binary engine, but precision, whose paired kernel is exact (the regression
#: losses say so by their definition's ``streamed_difference``).
STREAMED_COUNT_METRICS = tuple(
    name
    for name, definition in COUNT_METRICS.items()
    if definition.exact_binary and not definition.fixed_denominator
)


#: Random numbers drawn at a time (one batch of draws over one chunk).
_BATCH_FLOATS = 2**19


def _batches(n_draws: int, width: int) -> list[int]:
    """Sizes of the batches of draws, each of at most ``_BATCH_FLOATS`` numbers."""
    size = max(1, min(n_draws, _BATCH_FLOATS // max(width, 1)))
    return [min(size, n_draws - start) for start in range(0, n_draws, size)]


def _weights(weight: np.ndarray | None, rows: slice, size: int) -> np.ndarray:
    return np.ones(size) if weight is None else weight[rows]


def _regression_sums(
    data: tuple[np.ndarray, ...], centre: np.ndarray, size: int, rng: Any
) -> np.ndarray:
    """``(SSE_A, SSE_B, Σ w(y−c), Σ w(y−c)²)`` per draw and output.

    ``rng=None``: one draw without noise (the labels as given).
    """
    y, a, b, s, weight = data
    sums = np.zeros((4, size, y.shape[1]))
    for rows in chunks(y.shape[0]):
        w = _weights(weight, rows, y[rows].shape[0])
        labels = np.empty((size, *y[rows].shape))
        if rng is None:
            labels[:] = 0.0
        else:
            labels[:] = rng.standard_normal(labels.shape)
            labels *= chunk_of(s, rows)
        labels += y[rows] - centre
        for i, values in enumerate((a[rows] - centre, b[rows] - centre)):
            error = labels - values
            error *= error
            sums[i] += np.einsum("dik,i->dk", error, w)
        sums[2] += np.einsum("dik,i->dk", labels, w)
        labels *= labels
        sums[3] += np.einsum("dik,i->dk", labels, w)
    return sums


def _regression_draws(
    definition: RegressionLoss,
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    sigma: Any,
    sample_weight: Any,
    n_draws: int,
    rng: np.random.Generator,
) -> tuple[float, np.ndarray]:
    """``(nominal, draws)`` of a streamed loss (RMSE, R²) of A minus that of B."""
    y, a, s, weight, _ = check_regression_inputs(
        y_true, y_pred_a, sigma=sigma, sample_weight=sample_weight
    )
    _, b, _, _, _ = check_regression_inputs(y_true, y_pred_b, sigma=sigma)
    n, k = y.shape
    w_total = float(n) if weight is None else float(weight.sum())
    centre = np.zeros(k)  # the labels' weighted mean: the sums do not cancel
    for rows in chunks(n):
        centre += _weights(weight, rows, y[rows].shape[0]) @ y[rows]
    centre /= w_total
    data = (y, a, b, s, weight)

    def difference(sums: np.ndarray) -> np.ndarray:
        sst = sums[3] - sums[2] * sums[2] / w_total
        per_output = definition.streamed_difference(sums[0], sums[1], sst, w_total)
        return per_output.mean(axis=1)

    nominal = float(difference(_regression_sums(data, centre, 1, None))[0])
    if (s if isinstance(s, float) else float(np.max(s))) == 0.0:
        return nominal, np.empty(0)
    draws = np.empty(n_draws)
    start = 0
    for size in _batches(n_draws, min(n, CHUNK_SIZE) * k):
        sums = _regression_sums(data, centre, size, rng)
        draws[start : start + size] = difference(sums)
        start += size
    return nominal, draws


def _binary_sums(data: tuple[Any, ...], size: int, rng: Any) -> tuple[np.ndarray, bool]:
    """Per draw: ``Σ w·pos``, the same over A's and B's predicted positives, and
    the numbers of positively weighted samples observed negative and positive;
    and whether any label is random. ``rng=None``: the labels as given."""
    y, a, b, classes, pos, noise, weight = data
    sums = np.zeros((5, size))
    random = False
    for rows in chunks(y.shape[0]):
        true_index, a_index, b_index = _encode_chunk(y, a, b, rows, classes)
        w = _weights(weight, rows, true_index.shape[0])
        if rng is None:
            positive = (true_index == pos)[None, :]
            pi = noise.probability(true_index, np.full_like(true_index, pos), rows)
            random = random or bool(np.any((pi > 0.0) & (pi < 1.0)))
        else:
            pi = noise.probability(true_index, np.full_like(true_index, pos), rows)
            positive = rng.random((size, true_index.shape[0])) < pi
        counted = (w > 0.0).astype(np.float64)
        positive = positive.astype(np.float64)  # matmul with BLAS, not bool loops
        sums[0] += positive @ w
        sums[1] += positive @ (w * (a_index == pos))
        sums[2] += positive @ (w * (b_index == pos))
        observed = positive @ counted
        sums[3] += counted.sum() - observed
        sums[4] += observed
    return sums, random


def _binary_draws(
    metric: str,
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    noise_params: dict[str, Any],
    labels: Any,
    pos_label: Any,
    sample_weight: Any,
    n_draws: int,
    rng: np.random.Generator,
) -> tuple[float, np.ndarray] | None:
    """``(nominal, draws)`` of a binary count metric of A minus that of B.

    None unless the labels are binary with ``pos_label`` among them.
    """
    y, a, b = _label_arrays(y_true, y_pred_a, y_pred_b)
    classes = pair_classes(y, a, b, labels)
    matches = [i for i, c in enumerate(classes.tolist()) if c == pos_label]
    if classes.size != 2 or not matches:
        return None
    n = y.shape[0]
    weight = check_sample_weight(sample_weight, n)
    noise = FlipNoise.from_params(**noise_params, n_samples=n, n_classes=2)
    data = (y, a, b, classes, matches[0], noise, weight)
    w_total = float(n) if weight is None else float(weight.sum())
    given, random = _binary_sums(data, 1, None)
    predicted = _predicted_positives(data)

    def difference(sums: np.ndarray) -> np.ndarray:
        # exact ends: no observed negative (positive) means S = W (S = 0)
        observed = np.where(sums[3] == 0, w_total, np.where(sums[4] == 0, 0.0, sums[0]))
        values = []
        for tp, n_pred in ((sums[1], predicted[0]), (sums[2], predicted[1])):
            alpha, beta = COUNT_METRICS[metric].affine(observed, n_pred, w_total)
            values.append(alpha + beta * tp)
        return values[0] - values[1]

    nominal = float(difference(given)[0])
    if not random:
        return nominal, np.empty(0)
    draws = np.empty(n_draws)
    start = 0
    for size in _batches(n_draws, min(n, CHUNK_SIZE)):
        draws[start : start + size] = difference(_binary_sums(data, size, rng)[0])
        start += size
    return nominal, draws


def _predicted_positives(data: tuple[Any, ...]) -> tuple[float, float]:
    """The (weighted) numbers of samples A and B predict positive."""
    y, a, b, classes, pos, _, weight = data
    totals = np.zeros(2)
    for rows in chunks(y.shape[0]):
        _, a_index, b_index = _encode_chunk(y, a, b, rows, classes)
        w = _weights(weight, rows, a_index.shape[0])
        predicted = np.stack((a_index == pos, b_index == pos)).astype(np.float64)
        totals += predicted @ w
    return float(totals[0]), float(totals[1])


def streamed_difference_draws(
    info: MetricInfo,
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    *,
    sigma: Any,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    options: dict[str, Any],
    sample_weight: Any,
    n_draws: int,
    rng: np.random.Generator,
) -> tuple[float, np.ndarray] | None:
    """``(nominal, draws)`` of ``metric(A) − metric(B)``, streamed.

    Offered for the regression losses whose definition has a
    ``streamed_difference`` and for :data:`STREAMED_COUNT_METRICS`, without
    metric options (``pos_label`` excepted), for binary labels where the
    metric counts; None elsewhere. ``nominal`` is the difference on the labels
    as given (from the same sums); ``draws`` is empty when no label is random
    (the difference is then its nominal value, exactly).
    """
    if info.definition is not None:
        if options or info.definition.streamed_difference is None:
            return None
        return _regression_draws(
            info.definition, y_true, y_pred_a, y_pred_b, sigma, sample_weight,
            n_draws, rng,
        )  # fmt: skip
    if info.name not in STREAMED_COUNT_METRICS or not set(options) <= {"pos_label"}:
        return None
    return _binary_draws(
        info.name,
        y_true,
        y_pred_a,
        y_pred_b,
        {"q": q, "transition_matrix": transition_matrix},
        labels,
        options.get("pos_label", 1),
        sample_weight,
        n_draws,
        rng,
    )
