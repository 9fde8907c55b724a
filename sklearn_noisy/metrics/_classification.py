"""Expected accuracy and confusion matrix under label flips.

The formulas are in the user guide: :ref:`formula_accuracy` and, for
``estimand="truth"``, :ref:`formula_truth`.

Each observed label is drawn around the reference label ``y_true_i``: with a
flip probability ``q`` (scalar or per sample; binary labels flip to the other
class, multiclass labels flip uniformly to one of the ``K - 1`` other classes)
or from a row-stochastic transition matrix ``T`` (``T[j, k]`` is the
probability that a sample of reference class ``labels[j]`` is observed as
``labels[k]``). Samples are independent; ``y_pred`` is fixed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._noisy_score import NoisyScore
from ..utils._arrays import check_sample_weight, chunks, read_only, weighted_totals
from ..utils._labels import EncodedLabels, encode_labels
from ..utils._noise import FlipNoise
from ..utils._validation import ESTIMANDS, check_estimand, supports_estimands
from ._count_distributions import (
    accuracy_distribution,
    confusion_distribution,
    confusion_intervals,
)
from ._remeasurement import (
    check_remeasurable,
    class_function_estimate,
    observation_matrices,
    observed_confusion,
)
from ._truth_counts import denoised_confusion

__all__ = [
    "NoisyConfusionMatrix",
    "expected_accuracy_score",
    "expected_confusion_matrix",
]


# --------------------------------------------------------------------------- #
# Accuracy
# --------------------------------------------------------------------------- #
def _accuracy_measurement(
    encoded: EncodedLabels, noise: FlipNoise, weight: np.ndarray | None
) -> tuple[float, float, float]:
    """Weighted totals ``(Σ w o, Σ w P, Σ w² P(1−P))`` with ``o`` the nominal hit."""
    n_samples = encoded.n_samples
    if noise.matrix is None and noise.is_constant:
        # P = 1 − q on correct predictions, q/(K−1) on wrong ones: only the
        # (weighted) number of correct predictions is needed.
        hits = hits_sq = 0.0
        for rows in chunks(n_samples):
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
        keep, r = noise.keep_flip()
        expected = hits * keep + (total - hits) * r
        variance = hits_sq * noise.q * keep + (total_sq - hits_sq) * r * (1.0 - r)
        return hits, expected, variance
    totals = np.zeros(3)
    for rows in chunks(n_samples):
        if noise.matrix is None:
            correct = encoded.correct(rows)
            prob = np.where(correct, *noise.keep_flip(rows))
            var = np.where(correct, *noise.keep_flip_variance(rows))
        else:
            true_index, pred_index = encoded.indices(rows)
            correct = true_index == pred_index
            prob = noise.probability(true_index, pred_index, rows)
            var = prob * (1.0 - prob)
        totals += weighted_totals(weight, rows, correct, prob, var)
    return float(totals[0]), float(totals[1]), float(totals[2])


def _accuracy_truth(
    encoded: EncodedLabels, noise: FlipNoise, weight: np.ndarray | None
) -> tuple[float, float, float]:
    """Weighted totals ``(Σ w o, Σ w ĉ, Σ w² v)`` of the de-noised hits ``ĉ``.

    ``v`` is the exact, label-free variance ``q(1−q)/(1−2q)²`` for binary flips
    and the unbiased per-sample estimate ``ĉ² − ĉ`` otherwise (user guide:
    :ref:`formula_truth`).
    """
    noise.check_invertible()
    inverse = None if noise.matrix is None else noise.inverse_matrix()
    totals = np.zeros(3)
    for rows in chunks(encoded.n_samples):
        if inverse is None:
            observed = encoded.correct(rows)
            r, scale = noise.flip_scale(rows)  # scale = 1 − 2q for binary labels
            c_hat = (observed - r) / scale
            if noise.n_classes == 2:
                keep_variance, _ = noise.keep_flip_variance(rows)
                var = np.broadcast_to(keep_variance / (scale * scale), c_hat.shape)
            else:
                var = c_hat * (c_hat - 1.0)
        else:
            true_index, pred_index = encoded.indices(rows)
            observed = true_index == pred_index
            c_hat = inverse[true_index, pred_index]
            var = c_hat * (c_hat - 1.0)
        totals += weighted_totals(weight, rows, observed, c_hat, var)
    return float(totals[0]), float(totals[1]), float(totals[2])


def _accuracy_remeasurement(
    encoded: EncodedLabels, noise: FlipNoise, weight: np.ndarray | None
) -> tuple[float, float, float]:
    """Weighted totals ``(Σ w o, Σ w o, Σ w² ĥ)``: the nominal and its variance.

    The hit ``o_i`` has variance ``h(c_i) = P(1−P)`` with ``P = T[c_i, ŷ_i]``;
    ``ĥ_i = Σ_k T⁻¹[c̃_i, k] h(k)`` is unbiased for it (user guide:
    :ref:`estimands`). Label-free, ``q_i(1−q_i)``, for binary flips.
    """
    inverse = check_remeasurable(noise)
    totals = np.zeros(3)
    for rows in chunks(encoded.n_samples):
        observed, pred_index = encoded.indices(rows)
        size = observed.shape[0]
        matrices = observation_matrices(noise, rows, size)
        hit = matrices[np.arange(size)[:, None], :, pred_index[:, None]][:, 0, :]
        var = class_function_estimate(noise, observed, rows, inverse, hit * (1.0 - hit))
        correct = observed == pred_index
        totals += weighted_totals(weight, rows, correct, correct, var)
    return float(totals[0]), float(totals[1]), float(totals[2])


_ACCURACY_KERNELS = {
    "forward": _accuracy_measurement,
    "truth": _accuracy_truth,
    "remeasurement": _accuracy_remeasurement,
}


@supports_estimands("forward", "truth", "remeasurement")
def expected_accuracy_score(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    sample_weight: Any = None,
    estimand: str = "forward",
) -> NoisyScore:
    """Expected accuracy, and its variance, under label flips.

    ``estimand`` chooses the question the result answers (user guide:
    :ref:`estimands`).

    With ``estimand="forward"`` (default) ``y_true`` is taken as exact and the
    observed labels are redrawn around it: the paper's moments, right for exact
    references, not what a re-measurement of noisy labels shows. Sample ``i``
    is observed as correct with probability ``P_i = T[k_i, ŷ_i]``: for a flip
    probability ``q_i`` this is ``1 - q_i`` when ``ŷ_i = k_i`` and
    ``q_i/(K-1)`` otherwise (user guide: :ref:`formula_accuracy`). Exactly::

        E[acc]   = (1/M) Σ P_i           (binary, constant q: a + q(1 - 2a))
        Var[acc] = (1/M²) Σ P_i (1 - P_i) (binary: (1/M²) Σ q_i(1 - q_i))

    where ``a`` is the accuracy on ``y_true``; ``M · acc`` is Poisson-binomial.
    The source paper prints ``Var = q(1 - q)``, the variance of a single sample:
    it is too large by the factor ``M`` (erratum E6, :ref:`errata`). Applied to
    labels that are themselves noisy, ``a + q(1 - 2a)`` counts the flips twice
    (erratum E7).

    With ``estimand="truth"``, ``y_true`` holds the noisy labels and the
    result estimates the accuracy against the unknown true labels without bias
    (user guide: :ref:`formula_truth`): each hit ``o_i = 1[ỹ_i = ŷ_i]`` is
    replaced by ``ĉ_i = T⁻¹[ỹ_i, ŷ_i]``, which for flips is
    ``(o_i - r_i)/(1 - q_i - r_i)`` with ``r_i = q_i/(K-1)`` (binary:
    ``(o_i - q_i)/(1 - 2q_i)``). The estimate can fall outside [0, 1]. Its
    variance is exact and label-free for binary flips,
    ``(1/M²) Σ q_i(1 - q_i)/(1 - 2q_i)²``; otherwise it depends on the unknown
    labels and the unbiased estimate ``(1/M²) Σ (ĉ_i² - ĉ_i)`` is reported,
    clipped at 0 (it can be negative).

    With ``estimand="remeasurement"``, ``y_true`` holds the noisy labels and
    the result is the nominal accuracy, exactly unbiased for the accuracy
    expected when the samples are labelled again the same way. Its variance
    over such re-measurements, ``(1/M²) Σ P_i(1 - P_i)`` with ``P_i =
    T[c_i, ŷ_i]`` for the unknown true class ``c_i``, is estimated without
    bias by replacing each ``h(c_i) = P_i(1 - P_i)`` with
    ``Σ_k T⁻¹[ỹ_i, k] h(k)`` (exact and label-free, ``q_i(1 - q_i)``, for
    binary flips), clipped at 0.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Reference class of each sample (``estimand="forward"``) or its
        single observed label (``"truth"``, ``"remeasurement"``). Any label
        values that scikit-learn accepts: integers, strings, ...

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

    estimand : {"forward", "truth", "remeasurement"}, default="forward"
        What ``expected`` describes (user guide: :ref:`estimands`): the
        accuracy over labels redrawn around an exact ``y_true``; an unbiased
        estimate of the accuracy against the unknown true labels of which
        ``y_true`` are noisy observations; or the accuracy expected when the
        samples are labelled again, with its spread. ``"truth"`` and
        ``"remeasurement"`` need labels that carry information: q = 0.5 for
        binary labels (``(K-1)/K`` for ``K`` classes) or a singular
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
    check_estimand(
        estimand, metric="accuracy", supported=expected_accuracy_score.estimands
    )
    encoded = encode_labels(y_true, y_pred, labels)
    n_samples = encoded.n_samples
    weight = check_sample_weight(sample_weight, n_samples)
    noise = FlipNoise.from_params(
        q, transition_matrix, n_samples=n_samples, n_classes=encoded.n_classes
    )
    noise.require_two_classes(encoded.classes)
    hits, expected, variance = _ACCURACY_KERNELS[estimand](encoded, noise, weight)
    total = float(n_samples) if weight is None else float(weight.sum())
    return NoisyScore(
        "accuracy",
        expected=expected / total,
        variance=max(variance, 0.0) / (total * total),
        nominal=hits / total,
        n_samples=n_samples,
        method="exact",
        estimand=estimand,
        distribution=None
        if estimand != "forward"
        else accuracy_distribution(encoded, noise, weight, hits),
    )


# --------------------------------------------------------------------------- #
# Confusion matrix
# --------------------------------------------------------------------------- #
@dataclass(frozen=True, eq=False, repr=False)
class NoisyConfusionMatrix:
    """A confusion matrix under label flips, and the variance of each count.

    Returned by :func:`expected_confusion_matrix`. Columns are the prediction
    and rows the label, in the order of ``labels``, as in
    :func:`sklearn.metrics.confusion_matrix`: the observed label for
    ``estimand="forward"`` and ``"remeasurement"``, the true class for
    ``"truth"``. The arrays are read-only.

    Parameters
    ----------
    expected : ndarray of shape (n_classes, n_classes)
        The (weighted) count of samples with label ``labels[j]`` and predicted
        as ``labels[k]``: its expectation over labels redrawn around ``y_true``
        (``"forward"``), the unbiased estimate of the matrix of the true
        classes (``"truth"``) or the observed matrix, unbiased for the one a
        re-measurement gives on average (``"remeasurement"``).
    variance : ndarray of shape (n_classes, n_classes)
        Variance of each count over the label noise: exact (``"forward"``) or
        estimated without bias and clipped at 0. Counts in the same column are
        dependent (a sample in one row is not in the others); their covariances
        are not reported.
    nominal : ndarray of shape (n_classes, n_classes)
        :func:`sklearn.metrics.confusion_matrix` on the labels as given.
    labels : ndarray of shape (n_classes,)
        The classes, in row and column order.
    n_samples : int
        Number of samples.
    estimand : {"forward", "truth", "remeasurement"}, default="forward"
        The question ``expected`` answers (:ref:`estimands`).

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
    estimand: str = "forward"
    distribution: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "expected", read_only(self.expected, float))
        object.__setattr__(self, "variance", read_only(self.variance, float))
        object.__setattr__(self, "nominal", read_only(self.nominal))
        object.__setattr__(self, "labels", read_only(self.labels))
        object.__setattr__(self, "n_samples", int(self.n_samples))
        check_estimand(self.estimand, metric="confusion matrix", supported=ESTIMANDS)

    @property
    def std(self) -> np.ndarray:
        """Standard deviation of each count."""
        return np.sqrt(self.variance)

    @property
    def interval_method(self) -> str:
        """``"exact"`` (Poisson-binomial cells) or ``"normal"`` (see below)."""
        return "normal" if self.distribution is None else "exact"

    def confidence_interval(
        self, confidence_level: float = 0.95
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` arrays: an interval for every count.

        Forward, without ``sample_weight`` and with one flip model for all
        samples, each cell is a sum of binomials and the interval is its
        equal-tailed exact one, of probability at least ``confidence_level``
        (user guide: :ref:`exact_intervals`); otherwise ``expected ± z·std``
        clipped to ``[0, column total]``.
        """
        return confusion_intervals(
            self.distribution,
            self.expected,
            self.variance,
            self.nominal.sum(axis=0),
            confidence_level,
        )

    def __repr__(self) -> str:
        return (
            f"NoisyConfusionMatrix(labels={self.labels.tolist()!r}, "
            f"n_samples={self.n_samples},"
            + ("" if self.estimand == "forward" else f" estimand={self.estimand!r},")
            + "\n"
            f"  expected=\n{self.expected!r},\n  std=\n{self.std!r})"
        )


def _confusion_forward(
    encoded: EncodedLabels, noise: FlipNoise, weight: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(E[C], Var[C], N)`` with ``N`` the (weighted) matrix of ``y_true``."""
    n_samples, n_classes = encoded.n_samples, encoded.n_classes
    matrix = noise.shared_matrix()  # a constant flip is a shared T
    size = n_classes * n_classes
    # Sums over the samples of each (reference class, prediction) cell:
    # counts, squared weights and, for per-sample q, the flip terms.
    n_sums = 2 if matrix is not None else 6
    sums = np.zeros((n_sums, size))
    for rows in chunks(n_samples):
        true_index, pred_index = encoded.indices(rows)
        cell = true_index * n_classes + pred_index
        w = None if weight is None else weight[rows]
        w2 = None if w is None else w * w
        sums[0] += np.bincount(cell, weights=w, minlength=size)
        sums[1] += np.bincount(cell, weights=w2, minlength=size)
        if matrix is None:
            keep, flip = noise.keep_flip(rows)
            keep_var, flip_var = noise.keep_flip_variance(rows)
            if w is not None:
                keep, flip = w * keep, w * flip
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
    return expected, variance, counts


def _confusion_estimand(
    encoded: EncodedLabels,
    noise: FlipNoise,
    weight: np.ndarray | None,
    estimand: str,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(Ĉ, cell variances clipped at 0, N)`` for the truth or remeasurement."""
    observed, pred_index = encoded.indices(slice(None))
    if estimand == "truth":
        confusion = denoised_confusion(observed, pred_index, noise, weight)
    else:
        confusion = observed_confusion(observed, pred_index, noise, weight)
    counts = np.zeros((encoded.n_classes, encoded.n_classes))
    np.add.at(counts, (observed, pred_index), 1.0 if weight is None else weight)
    return confusion.counts, np.maximum(confusion.cell_variance, 0.0), counts


@supports_estimands("forward", "truth", "remeasurement")
def expected_confusion_matrix(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    sample_weight: Any = None,
    estimand: str = "forward",
) -> NoisyConfusionMatrix:
    """Expected confusion matrix, and the variance of its counts, under label flips.

    ``estimand`` chooses the question (user guide: :ref:`estimands`). With
    ``"forward"`` (default) ``y_true`` is taken as exact and the labels are
    redrawn around it. The count in row ``j`` (observed label) and column
    ``k`` (prediction) is
    ``C[j, k] = Σ_{i: ŷ_i = k} w_i 1[ỹ_i = j]``, a sum of independent
    (weighted) Bernoulli variables with ``p_ij = P(ỹ_i = j) = T[k_i, j]``
    (for flips: ``1 - q_i`` if ``j = k_i``, ``q_i/(K-1)`` otherwise). Exactly::

        E[C[j, k]]   = Σ_{i: ŷ_i = k} w_i p_ij
        Var[C[j, k]] = Σ_{i: ŷ_i = k} w_i² p_ij (1 - p_ij)

    With a shared ``T`` this is ``E = Tᵀ N`` where ``N`` is the confusion matrix
    on ``y_true``. Each column sums to its fixed number of predictions.

    With ``"truth"``, ``y_true`` holds the noisy labels and the result is the
    unbiased estimate of the confusion matrix of the unknown true classes
    (rows: true class), ``Ĉ[k, j] = Σ_{i: ŷ_i = j} w_i T⁻¹[ỹ_i, k]``, with
    the unbiased estimates of its cell variances (user guide:
    :ref:`formula_truth`). Cells can be negative. With ``"remeasurement"``
    the result is the observed matrix, unbiased for the matrix a fresh
    labelling gives on average, with unbiased estimates of the cell variances
    over such re-measurements. Variance estimates are clipped at 0; both
    need an invertible flip model (else a ``ValueError``).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Reference class of each sample (``"forward"``) or its observed label.

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

    estimand : {"forward", "truth", "remeasurement"}, default="forward"
        The question answered: see above.

    Returns
    -------
    NoisyConfusionMatrix
        ``expected``, ``variance``, ``nominal``, ``labels`` and ``estimand``.

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
    check_estimand(
        estimand,
        metric="confusion matrix",
        supported=expected_confusion_matrix.estimands,
    )
    encoded = encode_labels(y_true, y_pred, labels)
    n_samples, n_classes = encoded.n_samples, encoded.n_classes
    weight = check_sample_weight(sample_weight, n_samples)
    noise = FlipNoise.from_params(
        q, transition_matrix, n_samples=n_samples, n_classes=n_classes
    )
    noise.require_two_classes(encoded.classes)
    if estimand == "forward":
        expected, variance, counts = _confusion_forward(encoded, noise, weight)
    else:
        expected, variance, counts = _confusion_estimand(
            encoded, noise, weight, estimand
        )
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
        estimand=estimand,
        distribution=None
        if estimand != "forward"
        else confusion_distribution(noise, weight, counts),
    )
