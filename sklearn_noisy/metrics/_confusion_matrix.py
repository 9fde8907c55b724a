"""Expected confusion matrix under label flips, raw or normalised.

The formulas are in the user guide (:ref:`classification_metrics`) and, for
``estimand="truth"``, :ref:`formula_truth`. Each count ``C[j, k]`` (row: the
label, column: the prediction) is a sum over the samples predicted as ``k`` of
independent per-sample terms, so different columns are independent and the
covariance within a column is a sum of per-sample covariances.

Normalised matrices (scikit-learn's ``normalize``) divide the counts by row
sums (``"true"``), column sums (``"pred"``) or the total (``"all"``). A column
sum over every class is the fixed (weighted) number of predictions of that
class, and the total is the fixed total weight: those ratios are linear in the
counts and their moments are exact. A row sum (the number of samples observed
with a label) is random, and so is a column sum or a total over a subset of
the classes (``labels=``): those ratios use the delta method
(``method="delta"``), with the covariances of the counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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
from ._count_distributions import confusion_distribution, confusion_intervals
from ._truth_counts import denoised_confusion, observed_confusion
from ._weights import weights_and_scale

__all__ = [
    "NORMALIZE_OPTIONS",
    "NoisyConfusionMatrix",
    "expected_confusion_matrix",
]

#: scikit-learn's ``normalize`` options of ``confusion_matrix``.
NORMALIZE_OPTIONS = (None, "true", "pred", "all")


@dataclass(frozen=True, eq=False, repr=False)
class NoisyConfusionMatrix:
    """A confusion matrix under label flips, and the variance of each count.

    Returned by :func:`expected_confusion_matrix`. Columns are the prediction
    and rows the label, in the order of ``labels``, as in
    :func:`sklearn.metrics.confusion_matrix`: the observed label for
    ``estimand="forward"`` and ``"remeasurement"``, the true class for
    ``"truth"``. The arrays are read-only, also after pickling.

    Parameters
    ----------
    expected : ndarray of shape (n_classes, n_classes)
        The (weighted) count of samples with label ``labels[j]`` and predicted
        as ``labels[k]`` (or its normalised value): its expectation over labels
        redrawn around ``y_true`` (``"forward"``), the estimate of the matrix
        of the true classes (``"truth"``) or the observed matrix, unbiased for
        the one a re-measurement gives on average (``"remeasurement"``).
        int64 where scikit-learn's matrix is (no normalisation, no or
        integer weights) and the noise is zero; float64 otherwise.
    variance : ndarray of shape (n_classes, n_classes)
        Variance of each entry over the label noise: exact (``"forward"``,
        ``method="exact"``), by the delta method (``method="delta"``), or
        estimated without bias, floored at its exact lower bound
        (``"truth"``; :ref:`variance floor <variance_floor>`) or clipped at 0
        (``"remeasurement"``). Entries in the same column are dependent;
        their covariances are not reported.
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
        The exact distribution of every count (forward counts over all
        classes, without ``sample_weight``, one flip model shared by all
        samples), used by :meth:`confidence_interval`; left out of the repr.

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
        check_estimand(self.estimand, metric="confusion matrix", supported=ESTIMANDS)
        if self.method not in ("exact", "delta"):
            raise ValueError(f"method must be 'exact' or 'delta'; got {self.method!r}.")
        _check_normalize(self.normalize)

    def __reduce__(self) -> tuple:
        # Rebuild through the constructor: the arrays stay read-only.
        return (
            type(self),
            (
                self.expected,
                self.variance,
                self.nominal,
                self.labels,
                self.n_samples,
                self.estimand,
                self.method,
                self.normalize,
                self.distribution,
            ),
        )

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

        Forward counts without ``sample_weight`` and with one flip model for
        all samples: each cell is a sum of binomials and the interval is its
        equal-tailed exact one, of probability at least ``confidence_level``
        (user guide: :ref:`exact_intervals`). Otherwise ``expected ± z·std``
        clipped to ``[0, column total]`` (to ``[0, 1]`` when normalised).

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


# --------------------------------------------------------------------------- #
# Counts and their covariances
# --------------------------------------------------------------------------- #
def _pair_sums(
    encoded: EncodedLabels, weight: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """``N[c, k] = Σ w`` and ``N2[c, k] = Σ w²`` over the pairs (label, prediction)."""
    n_classes = encoded.n_classes
    size = n_classes * n_classes
    sums = np.zeros((2, size))
    for rows in chunks(encoded.n_samples):
        true_index, pred_index = encoded.indices(rows)
        cell = true_index * n_classes + pred_index
        w = None if weight is None else weight[rows]
        sums[0] += np.bincount(cell, weights=w, minlength=size)
        sums[1] += np.bincount(
            cell, weights=None if w is None else w * w, minlength=size
        )
    return sums.reshape(2, n_classes, n_classes)


def _forward_moments(
    encoded: EncodedLabels,
    noise: FlipNoise,
    weight: np.ndarray | None,
    covariance: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(E[C], Var[C], column covariances or None)`` over labels redrawn.

    Sample ``i`` of class ``k_i`` is observed as ``j`` with ``p_ij =
    T_i[k_i, j]``; column ``ŷ_i`` gets ``w_i e_{c̃_i}``, of mean ``w_i p_i``
    and covariance ``w_i² (diag(p_i) − p_i p_iᵀ)``.
    """
    n_classes = encoded.n_classes
    matrix = noise.shared_matrix()  # a constant flip is a shared T
    if matrix is not None:
        counts, counts_sq = _pair_sums(encoded, weight)
        expected = matrix.T @ counts
        variance = (matrix * (1.0 - matrix)).T @ counts_sq
        if not covariance:
            return expected, variance, None
        # Σ_c N2[c, k] (diag(T[c]) − T[c]ᵀ T[c])
        cov = -np.einsum("ck,ca,cb->kab", counts_sq, matrix, matrix)
        index = np.arange(n_classes)
        cov[:, index, index] += (matrix.T @ counts_sq).T
        return expected, variance, cov
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


# --------------------------------------------------------------------------- #
# Normalisation
# --------------------------------------------------------------------------- #
def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``N / D`` with 0 where ``D = 0``, as scikit-learn (``nan_to_num``)."""
    with np.errstate(all="ignore"):
        return np.nan_to_num(numerator / denominator)


def _normalise_nominal(counts: np.ndarray, normalize: str | None) -> np.ndarray:
    """scikit-learn's normalisation of a confusion matrix, operation for operation."""
    with np.errstate(all="ignore"):
        if normalize == "true":
            counts = counts / counts.sum(axis=1, keepdims=True)
        elif normalize == "pred":
            counts = counts / counts.sum(axis=0, keepdims=True)
        elif normalize == "all":
            counts = counts / counts.sum()
    return np.nan_to_num(counts) if normalize is not None else counts


def _denominator_moments(
    normalize: str, variance: np.ndarray, covariance: np.ndarray | None, shown: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(Cov(C[j, k], D), Var D)`` broadcastable to the shown matrix."""
    if normalize == "true":  # D_j = Σ_k C[j, k]: one cell per (independent) column
        return variance, variance.sum(axis=1, keepdims=True)
    block = covariance[:shown, :shown, :shown]  # [k, j, j'] for shown k, j, j'
    with_column = block.sum(axis=2).T  # [j, k] = Cov(C[j, k], D_k)
    column_variance = with_column.sum(axis=0, keepdims=True)
    if normalize == "pred":
        return with_column, column_variance
    return with_column, column_variance.sum()


def _normalised(
    counts: np.ndarray,
    variance: np.ndarray,
    covariance: np.ndarray | None,
    fixed: np.ndarray | None,
    *,
    normalize: str,
    shown: int,
    bias_sign: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Moments of the normalised matrix: exact for a fixed denominator, else delta.

    ``fixed`` is the fixed denominator (column sums or total) or None. With a
    random ``D``, ``R = N/D`` has ``Var R ≈ (Var N − 2ρ Cov(N, D) + ρ² Var D)/D²``
    and ``E R ≈ ρ + (ρ Var D − Cov(N, D))/D²``, ``ρ = N/D``; ``bias_sign`` is
    +1 to add that second-order term (forward moments), −1 to remove it from
    an estimate (truth).
    """
    sub, sub_variance = counts[:shown, :shown], variance[:shown, :shown]
    if fixed is not None:
        return _ratio(sub, fixed), _ratio(sub_variance, fixed * fixed)
    if normalize == "true":
        denominator = sub.sum(axis=1, keepdims=True)
    elif normalize == "pred":
        denominator = sub.sum(axis=0, keepdims=True)
    else:
        denominator = sub.sum()
    cross, denominator_variance = _denominator_moments(
        normalize, sub_variance, covariance, shown
    )
    rho = _ratio(sub, denominator)
    square = denominator * denominator
    ratio_variance = _ratio(
        sub_variance - 2.0 * rho * cross + rho * rho * denominator_variance, square
    )
    bias = _ratio(rho * denominator_variance - cross, square)
    return rho + bias_sign * bias, np.maximum(ratio_variance, 0.0)


# --------------------------------------------------------------------------- #
# The public function
# --------------------------------------------------------------------------- #
def _encode(
    y_true: Any, y_pred: Any, labels: Any, transition_matrix: Any
) -> tuple[EncodedLabels, int]:
    """The encoded labels and the number of classes shown (``labels``' length).

    With ``q`` the flips move labels among every class, those of ``labels``
    and any other in the data, and the matrix shows the rows and columns of
    ``labels`` (scikit-learn drops the other samples). A transition matrix is
    indexed by ``labels``, which must then hold every class.
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


def _is_identity(noise: FlipNoise) -> bool:
    """Whether nothing flips (every ``q_i = 0``, or ``T = I``)."""
    if noise.matrix is not None:
        return bool(np.array_equal(noise.matrix, np.eye(noise.n_classes)))
    return not np.any(np.asarray(noise.q) > 0)


def _moments(
    encoded: EncodedLabels,
    noise: FlipNoise,
    weight: np.ndarray | None,
    estimand: str,
    need_covariance: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray]:
    """``(counts, cell variances, column covariances, nominal counts)``."""
    nominal = _pair_sums(encoded, weight)[0]
    if estimand == "forward":
        expected, variance, cov = _forward_moments(
            encoded, noise, weight, need_covariance
        )
        return expected, variance, cov, nominal
    observed, pred_index = encoded.indices(slice(None))
    if estimand == "truth":
        confusion = denoised_confusion(observed, pred_index, noise, weight)
    else:
        confusion = observed_confusion(observed, pred_index, noise, weight)
    variance = np.maximum(confusion.cell_variance, 0.0)
    return np.array(confusion.counts), variance, confusion.covariance, nominal


def _integer_counts(encoded: EncodedLabels, sample_weight: Any) -> np.ndarray:
    """The counts of integer weights summed in int64, as scikit-learn sums them.

    Exact below 2⁶³ and wrapping around beyond, as scikit-learn's int64 sum
    does (float64 counts are exact only below 2⁵³).
    """
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
    estimand: str = "forward",
) -> NoisyConfusionMatrix:
    """Expected confusion matrix, and the variance of its entries, under label flips.

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
    estimates of its cell variances (user guide: :ref:`formula_truth`),
    unbiased and floored at their exact lower bound
    (:ref:`variance floor <variance_floor>`). Cells can be negative. With
    ``"remeasurement"`` the result is the observed matrix, unbiased for the
    matrix a fresh labelling gives on average, with unbiased estimates of the
    cell variances over such re-measurements, clipped at 0. Both need an invertible flip
    model (else a ``ValueError``).

    ``normalize`` divides by the row sums (``"true"``), the column sums
    (``"pred"``) or the total (``"all"``), as scikit-learn does (0 where a sum
    is 0). Column sums over every class are the fixed numbers of predictions
    and the total is the fixed total weight: ``"pred"`` and ``"all"`` are then
    exact (``method="exact"``). Row sums, and column sums or totals over a
    subset of the classes, are random: the ratio's moments use the delta method
    (``method="delta"``), second order for the expectation (and, for
    ``"truth"``, its second-order bias removed).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Reference class of each sample (``"forward"``) or its observed label.

    y_pred : array-like of shape (n_samples,)
        Predicted classes.

    q : float or array-like of shape (n_samples,), default=None
        Flip probability (binary: to the other class; ``K > 2``: uniformly to
        one of the ``K - 1`` others, ``K`` counting the classes of ``labels``
        and any other class in the data). Exactly one of ``q`` and
        ``transition_matrix`` is required. With a single class and no
        ``labels``, only ``q = 0`` is defined (nothing can flip).

    transition_matrix : array-like of shape (n_classes, n_classes), default=None
        Row-stochastic, ``T[j, k]`` the probability that a sample of class
        ``labels[j]`` is observed as ``labels[k]``; ``labels`` must then list
        every class of the data.

    labels : array-like of shape (n_classes,), default=None
        Classes in row/column order; default the sorted union of the labels in
        ``y_true`` and ``y_pred``. As in scikit-learn, a subset shows only its
        rows and columns (with ``q``: samples observed or predicted outside it
        are not counted), and at least one of them must occur in ``y_true``.

    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights, counted as in scikit-learn.

    normalize : {"true", "pred", "all"}, default=None
        Normalisation over rows, columns or the whole matrix, as in
        scikit-learn; see above for the moments.

    estimand : {"forward", "truth", "remeasurement"}, default="forward"
        The question answered: see above.

    Returns
    -------
    NoisyConfusionMatrix
        ``expected``, ``variance``, ``nominal``, ``labels``, ``estimand``,
        ``method`` and ``normalize``. ``expected`` is int64, as scikit-learn's
        matrix, when nothing can flip (``q = 0`` or ``T = I``), there is no
        ``normalize`` and the weights are integers (or absent); float64
        otherwise.

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
    >>> expected_confusion_matrix([0, 1, 1], [0, 1, 1], q=0).expected
    array([[1, 0],
           [0, 2]])
    """
    check_estimand(
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
    ).for_classes(encoded.classes)
    fixed = None
    if normalize in ("pred", "all") and shown == n_classes:
        fixed = np.asarray(0.0)  # set below from the nominal counts
    need_covariance = normalize in ("pred", "all") and fixed is None
    expected, variance, covariance, counts = _moments(
        encoded, noise, weight, estimand, need_covariance
    )
    # dtype as scikit-learn: integer counts unless the weights are fractional
    integer_weights = sample_weight is None or (
        np.asarray(sample_weight).dtype.kind in "iub"
    )
    counts = counts * scale
    if integer_weights and sample_weight is not None and np.abs(counts).max() >= 2**53:
        nominal = _integer_counts(encoded, sample_weight)  # beyond float64's ints
    else:
        nominal = np.rint(counts).astype(np.int64) if integer_weights else counts
    identity = _is_identity(noise)
    method = "exact"
    sub = (slice(0, shown), slice(0, shown))
    if normalize is None:
        expected, variance = expected[sub] * scale, variance[sub] * (scale * scale)
        if identity and integer_weights:
            expected = nominal[sub]
    else:
        if fixed is not None:
            column = counts.sum(axis=0, keepdims=True) / scale
            fixed = column if normalize == "pred" else column.sum()
        elif not identity:
            method = "delta"
        expected, variance = _normalised(
            expected,
            variance,
            covariance,
            fixed,
            normalize=normalize,
            shown=shown,
            bias_sign=-1.0 if estimand == "truth" else 1.0,
        )
        if estimand == "remeasurement" or identity:
            expected = _normalise_nominal(nominal[sub], normalize)
    return NoisyConfusionMatrix(
        expected=expected,
        variance=variance,
        nominal=_normalise_nominal(nominal[sub], normalize),
        labels=encoded.classes[:shown],
        n_samples=n_samples,
        estimand=estimand,
        method=method,
        normalize=normalize,
        distribution=confusion_distribution(noise, weight, counts)
        if estimand == "forward" and normalize is None and shown == n_classes
        else None,
    )
