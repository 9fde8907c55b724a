"""Expected confusion matrix under label flips, raw or normalised (user guide:
:ref:`classification_metrics`)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from ..utils._arrays import chunks, read_only
from ..utils._labels import (
    EncodedLabels,
    check_targets,
    encode_labels,
    encode_labels_subset,
)
from ..utils._noise import FlipNoise
from ..utils._validation import ESTIMANDS, check_estimand, supports_estimands
from ..utils._warnings import warn
from ._engines.counts.checks import weights_and_scale
from ._engines.counts.confusion_draws import pair_sums
from ._engines.counts.distributions import confusion_distribution, confusion_intervals
from ._engines.counts.estimands import (
    column_covariances,
    denoised_confusion,
    observed_confusion,
)
from ._engines.counts.multiclass import is_identity

__all__ = ["NORMALIZE_OPTIONS", "NoisyConfusionMatrix", "expected_confusion_matrix"]

#: scikit-learn's ``normalize`` options of ``confusion_matrix``.
NORMALIZE_OPTIONS = (None, "true", "pred", "all")


@dataclass(frozen=True, eq=False, repr=False)
class NoisyConfusionMatrix:
    """A confusion matrix under label flips, and the variance of each count.

    Returned by :func:`expected_confusion_matrix`; rows are the label (observed,
    or the true class for ``estimand="truth"``) and columns the prediction, in
    the order of ``labels``, as in :func:`sklearn.metrics.confusion_matrix`.
    The arrays are read-only, also after pickling.

    Parameters
    ----------
    expected : ndarray of shape (n_classes, n_classes)
        The expected (weighted) count of each cell, or its normalised value:
        int64 where scikit-learn's matrix is and nothing flips.
    variance : ndarray of shape (n_classes, n_classes)
        Variance of each entry over the label noise (covariances within a
        column are not reported).
    nominal : ndarray of shape (n_classes, n_classes)
        :func:`sklearn.metrics.confusion_matrix` on the labels as given.
    labels : ndarray of shape (n_classes,)
        The classes, in row and column order.
    n_samples : int
        Number of samples.
    estimand : {"forward", "truth", "remeasurement"}, default="forward"
        The question ``expected`` answers (:ref:`estimands`).
    method : {"exact", "delta"}, default="exact"
        How ``expected`` and ``variance`` were computed.
    normalize : {None, "true", "pred", "all"}, default=None
        The normalisation, as in scikit-learn.
    distribution : object, default=None
        The exact distribution of every count, when known (used by
        :meth:`confidence_interval`).

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_confusion_matrix
    >>> cm = expected_confusion_matrix([0, 1, 1], [0, 1, 0], q=0.1, estimand="forward")
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
    method: str = "exact"
    normalize: str | None = None
    distribution: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        expected = np.asarray(self.expected)
        dtype = np.int64 if expected.dtype.kind in "iu" else float
        object.__setattr__(self, "expected", read_only(expected, dtype))
        object.__setattr__(self, "variance", read_only(self.variance, float))
        object.__setattr__(self, "nominal", read_only(self.nominal))
        object.__setattr__(self, "labels", read_only(self.labels))
        object.__setattr__(self, "n_samples", int(self.n_samples))
        _check_normalize(self.normalize)
        if self.estimand not in ESTIMANDS:
            raise ValueError(
                f"estimand must be one of {ESTIMANDS}; got {self.estimand!r}."
            )
        if self.method not in ("exact", "delta"):
            raise ValueError(f"method must be 'exact' or 'delta'; got {self.method!r}.")

    def __reduce__(self) -> tuple:
        # Through the constructor, so that the arrays are read-only again.
        return type(self), tuple(getattr(self, f.name) for f in fields(self))

    @property
    def std(self) -> np.ndarray:
        """Standard deviation of each entry."""
        return np.sqrt(self.variance)

    @property
    def interval_method(self) -> str:
        """``"exact"`` (cells that are sums of binomials) or ``"normal"``."""
        return "normal" if self.distribution is None else "exact"

    def confidence_interval(
        self, confidence_level: float = 0.95
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` arrays: an interval for every entry.

        Exact where the distribution is known (:ref:`exact_intervals`), else
        ``expected ± z·std`` clipped to the range of the cell.

        Parameters
        ----------
        confidence_level : float, default=0.95
            Probability of each interval, in (0, 1).

        Returns
        -------
        low, high : ndarray of shape (n_classes, n_classes)
        """
        totals = (
            np.asarray(self.nominal, dtype=float).sum(axis=0)
            if self.normalize is None
            else np.ones(self.expected.shape[1])
        )
        return confusion_intervals(
            self.distribution, self.expected, self.variance, totals, confidence_level
        )

    def __repr__(self) -> str:
        options = "" if self.estimand == "forward" else f" estimand={self.estimand!r},"
        if self.normalize is not None:
            options += f" normalize={self.normalize!r}, method={self.method!r},"
        return (
            f"NoisyConfusionMatrix(labels={self.labels.tolist()!r}, "
            f"n_samples={self.n_samples},{options}\n"
            f"  expected=\n{self.expected!r},\n  std=\n{self.std!r})"
        )


def _check_normalize(normalize: Any) -> None:
    if normalize is not None and (
        not isinstance(normalize, str) or normalize not in NORMALIZE_OPTIONS
    ):
        raise ValueError(
            f"normalize must be one of {NORMALIZE_OPTIONS}; got {normalize!r}."
        )


def _forward_moments(
    encoded: EncodedLabels,
    noise: FlipNoise,
    weight: np.ndarray | None,
    covariance: bool,
    sums: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(E[C], Var[C], column covariances or None)`` over labels redrawn;
    ``sums``: :func:`pair_sums` of the labels."""
    n_classes = encoded.n_classes
    matrix = noise.shared_matrix()  # a constant flip is a shared T
    if matrix is not None:
        counts, counts_sq = sums
        cov = -column_covariances(matrix, counts_sq) if covariance else None
        return matrix.T @ counts, (matrix * (1.0 - matrix)).T @ counts_sq, cov
    expected = np.zeros((n_classes, n_classes))
    cov = np.zeros((n_classes, n_classes, n_classes))
    variance = np.zeros((n_classes, n_classes))
    for rows in chunks(encoded.n_samples):
        true_index, pred_index = encoded.indices(rows)
        p = noise.observation_rows(true_index, rows)
        w = np.ones(p.shape[0]) if weight is None else weight[rows]
        w2 = w * w
        for k in range(n_classes):
            mine = pred_index == k
            expected[:, k] += w[mine] @ p[mine]
            variance[:, k] += w2[mine] @ (p[mine] * (1.0 - p[mine]))
            if covariance:
                cov[k] -= (w2[mine, None] * p[mine]).T @ p[mine]
                cov[k][np.diag_indices(n_classes)] += w2[mine] @ p[mine]
    return expected, variance, (cov if covariance else None)


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``N / D`` with 0 where ``D = 0``, as scikit-learn (``nan_to_num``)."""
    with np.errstate(all="ignore"):
        return np.nan_to_num(numerator / denominator)


def _normalised(
    normalize: str | None,
    counts: np.ndarray,
    variance: np.ndarray | None = None,
    covariance: np.ndarray | None = None,
    bias_sign: float = 1.0,
) -> Any:
    """scikit-learn's normalisation of ``counts``; with their ``variance`` also
    the moments of the ratio by the delta method (``bias_sign`` +1 adds its
    second-order term to forward moments, −1 removes it from a truth estimate)."""
    if normalize is None:
        return counts
    axis = {"true": 1, "pred": 0, "all": None}[normalize]
    denominator = counts.sum(axis=axis, keepdims=True)
    rho = _ratio(counts, denominator)
    if variance is None:
        return rho
    if normalize == "true":  # D_j = Σ_k C[j, k]: one cell per (independent) column
        cross, denominator_variance = variance, variance.sum(axis=1, keepdims=True)
    else:  # [k, j, j'] for the shown k, j, j'
        block = covariance[: len(counts), : len(counts), : len(counts)]
        cross = block.sum(axis=2).T  # [j, k] = Cov(C[j, k], D_k)
        denominator_variance = cross.sum(axis=0, keepdims=True)
        if normalize == "all":
            denominator_variance = denominator_variance.sum()
    square = denominator * denominator
    ratio_variance = _ratio(
        variance - 2.0 * rho * cross + rho * rho * denominator_variance, square
    )
    bias = _ratio(rho * denominator_variance - cross, square)
    return rho + bias_sign * bias, np.maximum(ratio_variance, 0.0)


def _encode(
    y_true: Any, y_pred: Any, labels: Any, transition_matrix: Any
) -> tuple[EncodedLabels, int]:
    """The encoded labels and the number of classes shown (``labels``' length).

    With ``q`` the flips move labels among every class of the data; a
    transition matrix is indexed by ``labels``, which must hold every class.
    """
    if labels is None:
        encoded = encode_labels(y_true, y_pred, None)
        if encoded.n_classes == 1:
            warn(
                "A single label was found in 'y_true' and 'y_pred'. For the "
                "confusion matrix to have the correct shape, use the 'labels' "
                "parameter to pass all known labels.",
                UserWarning,
            )
        return encoded, encoded.n_classes
    if transition_matrix is not None:
        encoded = encode_labels(y_true, y_pred, labels)
        shown = encoded.n_classes
    else:
        encoded, shown = encode_labels_subset(y_true, y_pred, labels)
    true_index, _ = encoded.indices(slice(None))
    if not np.any(true_index < shown):
        raise ValueError("At least one label specified must be in y_true.")
    return encoded, shown


def _integer_counts(encoded: EncodedLabels, sample_weight: Any) -> np.ndarray:
    """The counts of integer weights summed in int64, as scikit-learn sums them."""
    k = encoded.n_classes
    weight = np.asarray(sample_weight).astype(np.int64)
    counts = np.zeros(k * k, dtype=np.int64)
    for rows in chunks(encoded.n_samples):
        true_index, pred_index = encoded.indices(rows)
        np.add.at(counts, true_index.astype(np.intp) * k + pred_index, weight[rows])
    return counts.reshape(k, k)


@supports_estimands("forward", "truth", "remeasurement")
def expected_confusion_matrix(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    sample_weight: Any = None,
    normalize: str | None = None,
    estimand: str = "auto",
) -> NoisyConfusionMatrix:
    """Expected confusion matrix, and the variance of its entries, under label flips.

    Rows are the true class (``estimand="truth"``, the default) or the observed
    label, columns the prediction. Read more in the
    :ref:`User Guide <classification_metrics>`.

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
        ``labels[j]`` is observed as ``labels[k]``; ``labels`` must then list
        every class of the data.
    labels : array-like of shape (n_classes,), default=None
        Classes in row/column order; default the sorted union of the labels in
        ``y_true`` and ``y_pred``. As in scikit-learn, a subset shows only its
        rows and columns.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights, counted as in scikit-learn.
    normalize : {"true", "pred", "all"}, default=None
        Normalisation over rows, columns or the whole matrix, as in
        scikit-learn; over a random denominator the moments are the delta
        method's.
    estimand : {"auto", "truth", "remeasurement", "forward"}, default="auto"
        The question answered (:ref:`estimands`); ``"auto"`` is ``"truth"``.

    Returns
    -------
    NoisyConfusionMatrix
        The expected matrix, its variances and scikit-learn's matrix.

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_confusion_matrix
    >>> cm = expected_confusion_matrix(["a", "b", "b"], ["a", "b", "a"], q=0.1,
    ...     estimand="forward")
    >>> cm.expected
    array([[1. , 0.1],
           [1. , 0.9]])
    >>> cm.variance
    array([[0.18, 0.09],
           [0.18, 0.09]])
    >>> expected_confusion_matrix([0, 1, 1], [0, 1, 1], q=0,
    ...     estimand="forward").expected
    array([[1, 0],
           [0, 2]])
    """
    estimand = check_estimand(
        estimand,
        metric="confusion matrix",
        supported=expected_confusion_matrix.estimands,
    )
    _check_normalize(normalize)
    y_true, y_pred = check_targets(y_true, y_pred)
    encoded, shown = _encode(y_true, y_pred, labels, transition_matrix)
    n_samples, n_classes = encoded.n_samples, encoded.n_classes
    weight, scale = weights_and_scale(sample_weight, n_samples)
    noise = FlipNoise.from_params(
        q, transition_matrix, n_samples=n_samples, n_classes=n_classes
    )
    noise = noise.for_classes(encoded.classes)
    # a fixed denominator: the column sums or the total of the nominal counts
    fixed = normalize in ("pred", "all") and shown == n_classes
    sums = pair_sums(encoded.indices, n_samples, n_classes, weight)
    if estimand == "forward":
        need_covariance = normalize in ("pred", "all") and not fixed
        expected, variance, covariance = _forward_moments(
            encoded, noise, weight, need_covariance, sums
        )
    else:
        estimate = denoised_confusion if estimand == "truth" else observed_confusion
        confusion = estimate(*encoded.indices(slice(None)), noise, weight)
        expected, covariance = np.array(confusion.counts), confusion.covariance
        variance = np.maximum(confusion.cell_variance, 0.0)
    integer_weights = sample_weight is None or (
        np.asarray(sample_weight).dtype.kind in "iub"
    )
    counts = sums[0] * scale
    if integer_weights and sample_weight is not None and np.abs(counts).max() >= 2**53:
        nominal = _integer_counts(encoded, sample_weight)  # beyond float64's ints
    else:
        nominal = np.rint(counts).astype(np.int64) if integer_weights else counts
    identity = is_identity(noise)
    nominal = _normalised(normalize, nominal[:shown, :shown])
    expected, variance = expected[:shown, :shown], variance[:shown, :shown]
    if normalize is None:
        expected, variance = expected * scale, variance * (scale * scale)
        if identity and integer_weights:
            expected = nominal
    elif fixed:
        column = counts.sum(axis=0, keepdims=True) / scale
        denominator = column if normalize == "pred" else column.sum()
        expected = _ratio(expected, denominator)
        variance = _ratio(variance, denominator * denominator)
    else:
        bias_sign = -1.0 if estimand == "truth" else 1.0
        expected, variance = _normalised(
            normalize, expected, variance, covariance, bias_sign
        )
    if normalize is not None and (estimand == "remeasurement" or identity):
        expected = nominal
    return NoisyConfusionMatrix(
        expected=expected,
        variance=variance,
        nominal=nominal,
        labels=encoded.classes[:shown],
        n_samples=n_samples,
        estimand=estimand,
        method="delta" if normalize and not (fixed or identity) else "exact",
        normalize=normalize,
        distribution=confusion_distribution(noise, weight, counts)
        if estimand == "forward" and normalize is None and shown == n_classes
        else None,
    )
