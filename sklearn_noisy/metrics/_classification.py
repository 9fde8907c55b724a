"""Expected accuracy and confusion matrix under label flips (FORMULAS.md §3, §4).

Each observed label is drawn around the reference label ``y_true_i``: with a
flip probability ``q`` (scalar or per sample; binary labels flip to the other
class, multiclass labels flip uniformly to one of the ``K - 1`` other classes)
or from a row-stochastic transition matrix ``T`` (``T[j, k]`` is the
probability that a sample of reference class ``labels[j]`` is observed as
``labels[k]``). Samples are independent; ``y_pred`` is fixed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._noisy_score import NoisyScore
from ..utils._labels import EncodedLabels, encode_labels
from ..utils._validation import (
    CHUNK_SIZE,
    check_estimand,
    check_flip_probability,
    check_noise_model,
    check_sample_weight,
    check_transition_matrix,
)

__all__ = [
    "NoisyConfusionMatrix",
    "expected_accuracy_score",
    "expected_confusion_matrix",
]

#: A flip model whose inverse would be scaled by more than 1e12 is treated as
#: singular for ``estimand="truth"``.
_SINGULAR_TOL = 1e-12


def _check_flip_classes(encoded: EncodedLabels) -> None:
    if encoded.n_classes < 2:
        raise ValueError(
            "Only one class is present in y_true and y_pred "
            f"({encoded.classes.tolist()}): with a flip probability q a label "
            "flips to another class, so the set of classes must be known. Pass "
            "all the classes through `labels`."
        )


def _chunks(n_samples: int) -> Iterator[slice]:
    for start in range(0, n_samples, CHUNK_SIZE):
        yield slice(start, start + CHUNK_SIZE)


def _chunk_of(value: Any, rows: slice) -> Any:
    return value if isinstance(value, float) else value[rows]


def _weighted_totals(
    weight: np.ndarray | None, rows: slice, *values: np.ndarray
) -> list[float]:
    """``[Σ w x for x in values[:-1]] + [Σ w² values[-1]]`` over a chunk."""
    if weight is None:
        return [float(np.sum(x)) for x in values]
    w = weight[rows]
    totals = [float(w @ x) for x in values[:-1]]
    totals.append(float((w * w) @ values[-1]))
    return totals


def _check_invertible_flips(q: Any, n_classes: int) -> None:
    """Reject flip probabilities for which the labels carry no information."""
    singular_q = (n_classes - 1) / n_classes
    q_array = np.asarray(q)
    scale = 1.0 - q_array * (n_classes / (n_classes - 1))
    if np.any(np.abs(scale) <= _SINGULAR_TOL):
        where = (
            ""
            if q_array.ndim == 0
            else f" (first at index {int(np.argmax(np.abs(scale) <= _SINGULAR_TOL))})"
        )
        raise ValueError(
            f"estimand='truth' has no unbiased estimator when q = {singular_q:g}"
            f"{where}: with K = {n_classes} classes a label flipped with this "
            "probability is uniformly distributed whatever the true class, so it "
            "carries no information about it (the flip matrix is singular). Use "
            "estimand='measurement', or labels with q != "
            f"{singular_q:g}."
        )


def _inverse_transition_matrix(matrix: np.ndarray) -> np.ndarray:
    """``T⁻¹``, or a ValueError when ``T`` is (numerically) singular."""
    singular_values = np.linalg.svd(matrix, compute_uv=False)
    if not singular_values[-1] > _SINGULAR_TOL * singular_values[0]:
        raise ValueError(
            "estimand='truth' needs an invertible transition_matrix: this one is "
            "singular (smallest singular value "
            f"{singular_values[-1]:.3g}), so the observed labels do not determine "
            "the distribution of the true labels and no unbiased estimator exists. "
            "Use estimand='measurement'."
        )
    return np.linalg.inv(matrix)


# --------------------------------------------------------------------------- #
# Accuracy
# --------------------------------------------------------------------------- #
def _accuracy_measurement(
    encoded: EncodedLabels, q: Any, matrix: np.ndarray | None, weight: np.ndarray | None
) -> tuple[float, float, float]:
    """Weighted totals ``(Σ w o, Σ w P, Σ w² P(1−P))`` with ``o`` the nominal hit."""
    n_samples = encoded.n_samples
    if matrix is None and isinstance(q, float):
        # P = 1 − q on correct predictions, q/(K−1) on wrong ones: only the
        # (weighted) number of correct predictions is needed.
        r = q / (encoded.n_classes - 1)
        hits = hits_sq = 0.0
        for rows in _chunks(n_samples):
            correct = encoded.correct(rows)
            if weight is None:
                hits += float(np.count_nonzero(correct))
            else:
                w = weight[rows]
                hits += float(w @ correct)
                hits_sq += float((w * w) @ correct)
        if weight is None:
            total, total_sq, hits_sq = float(n_samples), float(n_samples), hits
        else:
            total, total_sq = float(weight.sum()), float(weight @ weight)
        expected = hits * (1.0 - q) + (total - hits) * r
        variance = hits_sq * q * (1.0 - q) + (total_sq - hits_sq) * r * (1.0 - r)
        return hits, expected, variance
    totals = np.zeros(3)
    for rows in _chunks(n_samples):
        if matrix is None:
            correct = encoded.correct(rows)
            q_rows = q[rows]
            r_rows = q_rows / (encoded.n_classes - 1)
            prob = np.where(correct, 1.0 - q_rows, r_rows)
            var = np.where(correct, q_rows * (1.0 - q_rows), r_rows * (1.0 - r_rows))
        else:
            true_index, pred_index = encoded.indices(rows)
            correct = true_index == pred_index
            prob = matrix[true_index, pred_index]
            var = prob * (1.0 - prob)
        totals += _weighted_totals(weight, rows, correct, prob, var)
    return float(totals[0]), float(totals[1]), float(totals[2])


def _accuracy_truth(
    encoded: EncodedLabels, q: Any, matrix: np.ndarray | None, weight: np.ndarray | None
) -> tuple[float, float, float]:
    """Weighted totals ``(Σ w o, Σ w ĉ, Σ w² v)`` of the de-noised hits ``ĉ``.

    ``v`` is the exact, label-free variance ``q(1−q)/(1−2q)²`` for binary flips
    and the unbiased per-sample estimate ``ĉ² − ĉ`` otherwise (FORMULAS.md §4).
    """
    n_classes = encoded.n_classes
    n_samples = encoded.n_samples
    inverse = None if matrix is None else _inverse_transition_matrix(matrix)
    if matrix is None:
        _check_invertible_flips(q, n_classes)
    totals = np.zeros(3)
    for rows in _chunks(n_samples):
        if inverse is None:
            observed = encoded.correct(rows)
            q_rows = _chunk_of(q, rows)
            r_rows = q_rows / (n_classes - 1)
            scale = 1.0 - q_rows - r_rows  # 1 − 2q for binary labels
            c_hat = (observed - r_rows) / scale
            if n_classes == 2:
                var = np.broadcast_to(
                    q_rows * (1.0 - q_rows) / (scale * scale), c_hat.shape
                )
            else:
                var = c_hat * (c_hat - 1.0)
        else:
            true_index, pred_index = encoded.indices(rows)
            observed = true_index == pred_index
            c_hat = inverse[true_index, pred_index]
            var = c_hat * (c_hat - 1.0)
        totals += _weighted_totals(weight, rows, observed, c_hat, var)
    return float(totals[0]), float(totals[1]), float(totals[2])


def expected_accuracy_score(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    sample_weight: Any = None,
    estimand: str = "measurement",
) -> NoisyScore:
    """Expected accuracy, and its variance, under label flips.

    With ``estimand="measurement"`` (default) the labels ``y_true`` are the
    reference classes and the observed labels are redrawn around them. Sample
    ``i`` is observed as correct with probability ``P_i = T[k_i, ŷ_i]``: for a
    flip probability ``q_i`` this is ``1 - q_i`` when ``ŷ_i = k_i`` and
    ``q_i/(K-1)`` otherwise (FORMULAS.md §3). Exactly::

        E[acc]   = (1/M) Σ P_i           (binary, constant q: a + q(1 - 2a))
        Var[acc] = (1/M²) Σ P_i (1 - P_i) (binary: (1/M²) Σ q_i(1 - q_i))

    where ``a`` is the accuracy on ``y_true``; ``M · acc`` is Poisson-binomial.
    The source paper prints ``Var = q(1 - q)``, the variance of a single sample:
    it is too large by the factor ``M`` (erratum E6, :ref:`errata`).

    With ``estimand="truth"``, ``y_true`` holds single noisy observations and the
    result estimates the accuracy against the unknown true labels without bias
    (FORMULAS.md §4): each hit ``o_i = 1[ỹ_i = ŷ_i]`` is replaced by
    ``ĉ_i = T⁻¹[ỹ_i, ŷ_i]``, which for flips is ``(o_i - r_i)/(1 - q_i - r_i)``
    with ``r_i = q_i/(K-1)`` (binary: ``(o_i - q_i)/(1 - 2q_i)``). The estimate
    can fall outside [0, 1]. Its variance is exact and label-free for binary
    flips, ``(1/M²) Σ q_i(1 - q_i)/(1 - 2q_i)²``; otherwise it depends on the
    unknown labels and the unbiased estimate ``(1/M²) Σ (ĉ_i² - ĉ_i)`` is
    reported, clipped at 0 (it can be negative).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Reference class of each sample (``estimand="measurement"``) or its
        single observed label (``estimand="truth"``). Any label values that
        scikit-learn accepts: integers, strings, ...

    y_pred : array-like of shape (n_samples,)
        Predicted classes.

    q : float or array-like of shape (n_samples,), default=None
        Probability that a label is flipped. Binary labels flip to the other
        class; with ``K > 2`` classes a flip goes to each other class with
        probability ``q/(K-1)``. Exactly one of ``q`` and ``transition_matrix``
        is required.

    transition_matrix : array-like of shape (n_classes, n_classes), default=None
        Row-stochastic matrix, ``T[j, k]`` the probability that a sample of
        class ``labels[j]`` is observed as ``labels[k]``.

    labels : array-like of shape (n_classes,), default=None
        The classes, which fixes ``K`` and the order of ``transition_matrix``.
        Default: the sorted union of the labels in ``y_true`` and ``y_pred``.
        Required with ``q`` when only one class is present.

    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights: the accuracy is ``Σ w_i o_i / Σ w_i`` and its variance
        ``Σ w_i² Var[o_i] / (Σ w_i)²``.

    estimand : {"measurement", "truth"}, default="measurement"
        What ``expected`` describes: the accuracy observed against labels
        redrawn around ``y_true``, or an unbiased estimate of the accuracy
        against the unknown true labels of which ``y_true`` are noisy
        observations. ``"truth"`` needs labels that carry information: q = 0.5
        for binary labels (``(K-1)/K`` for ``K`` classes) or a singular
        ``transition_matrix`` raise a ``ValueError``.

    Returns
    -------
    score : NoisyScore
        ``nominal`` is :func:`sklearn.metrics.accuracy_score` on ``y_true``;
        ``method`` is ``"exact"``.

    See Also
    --------
    sklearn.metrics.accuracy_score : The metric on exact labels.
    expected_confusion_matrix : Expected counts of every (label, prediction) pair.

    Examples
    --------
    The worked example of the source paper: accuracy 0.85, flip probability
    0.05.

    >>> import numpy as np
    >>> from sklearn_noisy.metrics import expected_accuracy_score
    >>> y_true = np.r_[np.ones(85), np.zeros(15)].astype(int)
    >>> y_pred = np.ones(100, dtype=int)
    >>> score = expected_accuracy_score(y_true, y_pred, q=0.05)
    >>> round(score.expected, 12), score.nominal
    (0.815, 0.85)
    >>> round(score.variance, 12)  # q(1 - q)/M, not the paper's q(1 - q)
    0.000475

    An unbiased estimate of the accuracy against the true labels:

    >>> truth = expected_accuracy_score(y_true, y_pred, q=0.05, estimand="truth")
    >>> round(truth.expected, 12)
    0.888888888889
    """
    check_estimand(estimand, metric="accuracy", supports_truth=True)
    check_noise_model(q, transition_matrix)
    encoded = encode_labels(y_true, y_pred, labels)
    n_samples = encoded.n_samples
    weight = check_sample_weight(sample_weight, n_samples)
    matrix = None
    if transition_matrix is not None:
        matrix = check_transition_matrix(transition_matrix, encoded.n_classes)
    else:
        q = check_flip_probability(q, n_samples)
        _check_flip_classes(encoded)
    compute = _accuracy_measurement if estimand == "measurement" else _accuracy_truth
    hits, expected, variance = compute(encoded, q, matrix, weight)
    total = float(n_samples) if weight is None else float(weight.sum())
    return NoisyScore(
        "accuracy",
        expected=expected / total,
        variance=max(variance, 0.0) / (total * total),
        nominal=hits / total,
        n_samples=n_samples,
        method="exact",
    )


# --------------------------------------------------------------------------- #
# Confusion matrix
# --------------------------------------------------------------------------- #
def _read_only(array: Any, dtype: Any = None) -> np.ndarray:
    array = np.array(array, dtype=dtype, copy=True)
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False, repr=False)
class NoisyConfusionMatrix:
    """Expected confusion matrix, and the variance of each count, under label flips.

    Returned by :func:`expected_confusion_matrix`. Rows are the observed label
    and columns the prediction, in the order of ``labels``, as in
    :func:`sklearn.metrics.confusion_matrix`. The arrays are read-only.

    Parameters
    ----------
    expected : ndarray of shape (n_classes, n_classes)
        Expected (weighted) count of samples observed with label ``labels[j]``
        and predicted as ``labels[k]``.
    variance : ndarray of shape (n_classes, n_classes)
        Variance of each count over the label noise. Counts in the same column
        are dependent (a sample observed in one row is not in the others); their
        covariances are not reported.
    nominal : ndarray of shape (n_classes, n_classes)
        :func:`sklearn.metrics.confusion_matrix` on the labels as given.
    labels : ndarray of shape (n_classes,)
        The classes, in row and column order.
    n_samples : int
        Number of samples.

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_confusion_matrix
    >>> cm = expected_confusion_matrix([0, 1, 1], [0, 1, 0], q=0.1)
    >>> cm.std
    array([[0.42426407, 0.3       ],
           [0.42426407, 0.3       ]])
    """

    expected: np.ndarray
    variance: np.ndarray
    nominal: np.ndarray
    labels: np.ndarray
    n_samples: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "expected", _read_only(self.expected, float))
        object.__setattr__(self, "variance", _read_only(self.variance, float))
        object.__setattr__(self, "nominal", _read_only(self.nominal))
        object.__setattr__(self, "labels", _read_only(self.labels))
        object.__setattr__(self, "n_samples", int(self.n_samples))

    @property
    def std(self) -> np.ndarray:
        """Standard deviation of each count."""
        return np.sqrt(self.variance)

    def __repr__(self) -> str:
        return (
            f"NoisyConfusionMatrix(labels={self.labels.tolist()!r}, "
            f"n_samples={self.n_samples},\n"
            f"  expected=\n{self.expected!r},\n  std=\n{self.std!r})"
        )


def expected_confusion_matrix(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    sample_weight: Any = None,
) -> NoisyConfusionMatrix:
    """Expected confusion matrix, and the variance of its counts, under label flips.

    The count in row ``j`` (observed label) and column ``k`` (prediction) is
    ``C[j, k] = Σ_{i: ŷ_i = k} w_i 1[ỹ_i = j]``, a sum of independent
    (weighted) Bernoulli variables with ``p_ij = P(ỹ_i = j) = T[k_i, j]``
    (for flips: ``1 - q_i`` if ``j = k_i``, ``q_i/(K-1)`` otherwise). Exactly::

        E[C[j, k]]   = Σ_{i: ŷ_i = k} w_i p_ij
        Var[C[j, k]] = Σ_{i: ŷ_i = k} w_i² p_ij (1 - p_ij)

    With a shared ``T`` this is ``E = Tᵀ N`` where ``N`` is the confusion matrix
    on ``y_true``. Each column sums to its fixed number of predictions.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Reference class of each sample.

    y_pred : array-like of shape (n_samples,)
        Predicted classes.

    q : float or array-like of shape (n_samples,), default=None
        Flip probability (binary: to the other class; ``K > 2``: uniformly to
        one of the ``K - 1`` others). Exactly one of ``q`` and
        ``transition_matrix`` is required.

    transition_matrix : array-like of shape (n_classes, n_classes), default=None
        Row-stochastic, ``T[j, k]`` the probability that a sample of class
        ``labels[j]`` is observed as ``labels[k]``.

    labels : array-like of shape (n_classes,), default=None
        Classes in row/column order; default the sorted union of the labels in
        ``y_true`` and ``y_pred``. Unlike scikit-learn, labels outside ``labels``
        are an error (a flipped label must land in a known class).

    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights, counted as in scikit-learn.

    Returns
    -------
    NoisyConfusionMatrix
        ``expected``, ``variance``, ``nominal`` and ``labels``.

    See Also
    --------
    sklearn.metrics.confusion_matrix : The matrix on exact labels.
    expected_accuracy_score : The expected trace divided by the total.

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_confusion_matrix
    >>> cm = expected_confusion_matrix(["a", "b", "b"], ["a", "b", "a"], q=0.1)
    >>> cm.labels
    array(['a', 'b'], dtype='<U1')
    >>> cm.expected
    array([[1. , 0.1],
           [1. , 0.9]])
    >>> cm.variance
    array([[0.18, 0.09],
           [0.18, 0.09]])
    >>> cm.nominal
    array([[1, 0],
           [1, 1]])
    """
    check_noise_model(q, transition_matrix)
    encoded = encode_labels(y_true, y_pred, labels)
    n_samples, n_classes = encoded.n_samples, encoded.n_classes
    weight = check_sample_weight(sample_weight, n_samples)
    matrix = None
    if transition_matrix is not None:
        matrix = check_transition_matrix(transition_matrix, n_classes)
    else:
        q = check_flip_probability(q, n_samples)
        _check_flip_classes(encoded)
        if isinstance(q, float):  # a constant flip is a shared T
            r = q / (n_classes - 1)
            matrix = np.full((n_classes, n_classes), r)
            np.fill_diagonal(matrix, 1.0 - q)
    size = n_classes * n_classes
    # Sums over the samples of each (reference class, prediction) cell:
    # counts, squared weights and, for per-sample q, the flip terms.
    n_sums = 2 if matrix is not None else 6
    sums = np.zeros((n_sums, size))
    for rows in _chunks(n_samples):
        true_index, pred_index = encoded.indices(rows)
        cell = true_index * n_classes + pred_index
        w = None if weight is None else weight[rows]
        w2 = None if w is None else w * w
        sums[0] += np.bincount(cell, weights=w, minlength=size)
        sums[1] += np.bincount(cell, weights=w2, minlength=size)
        if matrix is None:
            q_rows = q[rows]
            r_rows = q_rows / (n_classes - 1)
            keep = 1.0 - q_rows if w is None else w * (1.0 - q_rows)
            flip = r_rows if w is None else w * r_rows
            keep_var = q_rows * (1.0 - q_rows)
            flip_var = r_rows * (1.0 - r_rows)
            if w2 is not None:
                keep_var, flip_var = w2 * keep_var, w2 * flip_var
            for row, values in enumerate((keep, flip, keep_var, flip_var), start=2):
                sums[row] += np.bincount(cell, weights=values, minlength=size)
    sums = sums.reshape(n_sums, n_classes, n_classes)
    counts, counts_sq = sums[0], sums[1]
    if matrix is not None:
        expected = matrix.T @ counts
        variance = (matrix * (1.0 - matrix)).T @ counts_sq
    else:
        # Row j of column k: the samples of class j keep their label, those of
        # every other class c flip to j; (J − I) sums over c ≠ j exactly.
        others = np.ones((n_classes, n_classes)) - np.eye(n_classes)
        expected = sums[2] + others @ sums[3]
        variance = sums[4] + others @ sums[5]
    # dtype as scikit-learn: integer counts unless the weights are fractional
    integer_weights = sample_weight is None or (
        np.asarray(sample_weight).dtype.kind in "iub"
    )
    nominal = np.rint(counts).astype(np.int64) if integer_weights else counts
    return NoisyConfusionMatrix(
        expected=expected,
        variance=variance,
        nominal=nominal,
        labels=encoded.classes,
        n_samples=n_samples,
    )
