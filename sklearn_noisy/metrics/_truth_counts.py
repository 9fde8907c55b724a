"""De-noised confusion counts and the classification metrics built on them.

The ``"truth"`` estimand of the count-based classification metrics
(user guide: :ref:`formula_truth`). Sample ``i`` has an unknown true class
``c_i``, an observed (noisy) label ``c̃_i`` drawn from row ``c_i`` of the flip
model ``T`` and a fixed prediction ``ŷ_i``. The row ``r_i = T⁻¹[c̃_i, :]`` is
unbiased for the one-hot vector of ``c_i``, so the de-noised confusion matrix::

    C[k, j] = Σ_{i: ŷ_i = j} w_i r_i[k]     (rows: true class, columns: prediction)

is unbiased for the (weighted) confusion matrix of the true labels. Its columns
are sums over disjoint sets of independent samples, hence independent, with
covariance ``Σ_{i: ŷ_i = j} w_i² Cov(r_i)``. That covariance is estimated
without bias by ``Ĉov_i = r_i r_iᵀ − diag(r_i)``: given ``c_i = c``,
``E[r rᵀ] = M_c = Σ_l T[c, l] T⁻¹[l, :]ᵀ T⁻¹[l, :]`` and ``E[diag(r)] = e_c e_cᵀ``.
This is the same quantity as ``Σ_k r_i[k] M_k − diag(r_i)``, since
``Σ_k r_i[k] T[k, :] = e_{c̃_i}`` makes ``Σ_k r_i[k] M_k = r_i r_iᵀ``. For binary
flips the covariance is known exactly and does not depend on the labels:
``Cov(r_i) = v_i [[1, −1], [−1, 1]]`` with ``v_i = q_i(1 − q_i)/(1 − 2q_i)²``.

Every metric here is a function ``f(C)`` with an analytic gradient. Its truth
estimate is ``f(Ĉ)`` and its variance, by the delta method over the independent
per-sample terms, ``Σ_j ∇_jᵀ [Σ_{i: ŷ_i = j} w_i² Ĉov_i] ∇_j`` with
``∇_j = ∂f/∂C[:, j]``. Accuracy and precision are linear in ``C`` with fixed
denominators (column sums of ``C`` are the fixed prediction totals): for them the
estimate is unbiased and the variance estimate is unbiased for the exact
variance. Recall, F1, balanced accuracy, MCC and specificity are consistent
(``method="delta"``): their plug-in ``f(Ĉ)`` has a bias of order ``1/M``,
which :func:`second_order_bias` estimates (``½ Σ_j tr(H_j Ĉov_j)``) so that the
public metrics subtract it. The variance estimate is unbiased, not non-negative: it
can be negative on small samples. It is reported floored at its exact lower
bound (user guide: :ref:`variance floor <variance_floor>`): the variance of
sample ``i``'s term
``r_i·∇_j`` given its true class ``c`` is known for every ``c``
(:meth:`~sklearn_noisy.utils._noise.FlipNoise.variance_floor`), and
``Σ_j Σ_{i: ŷ_i = j} w_i² min_c`` of it bounds the variance whatever the
classes (:meth:`DenoisedConfusion.variance_floor`).

The inputs are validated by the caller: ``observed`` and ``pred`` are integer
class positions in ``0 .. K−1``, ``noise`` a
:class:`~sklearn_noisy.utils._noise.FlipNoise` with ``K`` classes, ``weight``
None or non-negative floats with a positive sum.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..utils._arrays import chunks, read_only
from ..utils._noise import FlipNoise
from ._count_definitions import COUNT_METRICS

__all__ = [
    "AVERAGES",
    "TRUTH_METRICS",
    "DenoisedConfusion",
    "denoised_confusion",
    "metric_gradient",
    "second_order_bias",
    "truth_metric",
]

#: The averages of recall, precision and F1, as in scikit-learn.
AVERAGES = ("binary", "micro", "macro", "weighted")

#: ``Cov(r_i) / v_i`` for binary flips: ``r_i = (1 − u_i, u_i)``.
_BINARY_PATTERN = np.array([[1.0, -1.0], [-1.0, 1.0]])


# --------------------------------------------------------------------------- #
# The de-noised confusion matrix
# --------------------------------------------------------------------------- #
@dataclass(frozen=True, eq=False)
class DenoisedConfusion:
    """An unbiased confusion matrix of the true labels, with its covariance.

    Parameters
    ----------
    counts : ndarray of shape (n_classes, n_classes)
        ``C[k, j]``: the estimated (weighted) number of samples of true class
        ``k`` predicted as ``j``, as in :func:`sklearn.metrics.confusion_matrix`.
        Entries can be negative or exceed the column total; each column sums to
        the fixed total weight of its predictions.
    covariance : ndarray of shape (n_classes, n_classes, n_classes)
        ``covariance[j]``: the unbiased estimate of the covariance matrix of the
        column ``C[:, j]``. Different columns are independent.
    noise, observed, pred, weight : optional
        The flip model, the class positions of the observed labels and of the
        predictions, and the weights the matrix was built from: with them the
        variances are floored at their exact lower bound
        (:meth:`variance_floor`); without (None), they are not.
    """

    counts: np.ndarray
    covariance: np.ndarray
    noise: FlipNoise | None = None
    observed: np.ndarray | None = None
    pred: np.ndarray | None = None
    weight: np.ndarray | None = None

    @property
    def n_classes(self) -> int:
        """``K``, the number of classes."""
        return int(self.counts.shape[0])

    @property
    def cell_variance(self) -> np.ndarray:
        """The estimated variance of each count ``C[k, j]``, shape ``(K, K)``.

        Unbiased, and floored at the exact lower bound of each cell's variance
        (:meth:`variance_floor` with the gradient of the cell) when the flip
        model is known (:func:`denoised_confusion`).
        """
        variance = np.diagonal(self.covariance, axis1=1, axis2=2).T.copy()
        if self.noise is None:
            return variance
        n_classes = self.n_classes
        floor = np.empty_like(variance)
        for k in range(n_classes):
            cell = np.zeros((n_classes, n_classes))
            cell[k] = 1.0
            floor[k] = self._column_floors(cell)
        return np.maximum(variance, floor)

    def variance(self, gradient: np.ndarray) -> float:
        """``Σ_j ∇_jᵀ covariance[j] ∇_j``: the delta-method variance of ``f(C)``.

        ``gradient`` is ``∂f/∂C``, of the shape of :attr:`counts`. The
        unbiased estimate, which can be negative; :func:`truth_metric` floors
        it with :meth:`variance_floor`.
        """
        return float(np.einsum("kj,jkl,lj->", gradient, self.covariance, gradient))

    def variance_floor(self, gradient: np.ndarray) -> float:
        """The exact lower bound of the delta-method variance, label-free.

        ``Σ_j Σ_{i: ŷ_i = j} w_i² min_c Var(r_i·∇_j | c_i = c)`` (see
        :meth:`~sklearn_noisy.utils._noise.FlipNoise.variance_floor`): whatever
        the unknown true classes, the variance is at least this. 0 when the
        flip model is not attached (no floor known).
        """
        if self.noise is None:
            return 0.0
        return float(self._column_floors(gradient).sum())

    def _column_floors(self, gradient: np.ndarray) -> np.ndarray:
        """Per column ``j``: ``Σ_{i: ŷ_i = j} w_i² min_c Var(r_i·∇_j | c)``."""
        noise, pred, weight = self.noise, self.pred, self.weight
        n_classes = self.n_classes
        inverse = None if noise.matrix is None else noise.inverse_matrix()
        if noise.is_constant:  # one bound per column, times Σ w² of the column
            bounds = noise.variance_floor(gradient.T, slice(None), inverse)
            squares = None if weight is None else weight * weight
            return bounds * np.bincount(pred, weights=squares, minlength=n_classes)
        floors = np.zeros(n_classes)
        for rows in chunks(pred.shape[0]):
            column = pred[rows]
            w = _weights(weight, rows, column.shape[0])
            bounds = noise.variance_floor(gradient.T[column], rows, inverse)
            floors += np.bincount(column, weights=w * w * bounds, minlength=n_classes)
        return floors


def denoised_confusion(
    observed: np.ndarray,
    pred: np.ndarray,
    noise: FlipNoise,
    weight: np.ndarray | None = None,
) -> DenoisedConfusion:
    """The de-noised confusion matrix of the true labels and its covariance.

    ``C[k, j] = Σ_{i: ŷ_i = j} w_i (T⁻¹)[c̃_i, k]`` (user guide:
    :ref:`formula_truth`), with ``covariance[j] = Σ_{i: ŷ_i = j} w_i² Ĉov_i``
    (see the module docstring). A shared model (a matrix or a scalar ``q``)
    needs only the weighted counts of the pairs ``(c̃_i, ŷ_i)``; binary flips
    use their exact, label-free variance; a per-sample ``q`` with ``K > 2``
    classes is handled sample by sample, chunk by chunk.

    Parameters
    ----------
    observed : ndarray of shape (n_samples,)
        Class position ``c̃_i`` of each observed (noisy) label.
    pred : ndarray of shape (n_samples,)
        Class position ``ŷ_i`` of each prediction.
    noise : FlipNoise
        The flip model, with ``noise.n_classes`` classes.
    weight : ndarray of shape (n_samples,) or None, default=None
        Sample weights; None is unit weights.

    Returns
    -------
    DenoisedConfusion
        The counts and the per-column covariance.

    Raises
    ------
    ValueError
        When the flip model is singular (no unbiased estimator exists).
    """
    if noise.matrix is not None:
        inverse = noise.inverse_matrix()
    else:
        noise.check_invertible()
        inverse = None
    if noise.q is not None and noise.n_classes == 2:
        counts, covariance = _binary_flip_totals(observed, pred, noise, weight)
    elif noise.is_constant:
        if inverse is None:
            every_class = np.arange(noise.n_classes)
            inverse = noise.inverse_rows(every_class, slice(None), None)
        counts, covariance = _shared_totals(observed, pred, inverse, weight)
    else:
        counts, covariance = _per_sample_totals(observed, pred, noise, weight)
    return DenoisedConfusion(
        read_only(counts), read_only(covariance), noise, observed, pred, weight
    )


def _weights(weight: np.ndarray | None, rows: slice, size: int) -> np.ndarray:
    return np.ones(size) if weight is None else weight[rows]


def _column_sums(pred: np.ndarray, values: np.ndarray, n_classes: int) -> np.ndarray:
    """``out[k, j] = Σ_{i: pred_i = j} values[i, k]``."""
    return np.stack(
        [
            np.bincount(pred, weights=values[:, k], minlength=n_classes)
            for k in range(n_classes)
        ]
    )


def _binary_flip_totals(
    observed: np.ndarray,
    pred: np.ndarray,
    noise: FlipNoise,
    weight: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Counts and covariance for binary flips, with ``v_i = q_i(1−q_i)/(1−2q_i)²``."""
    counts = np.zeros((2, 2))
    flip_variance = np.zeros(2)
    for rows in chunks(observed.shape[0]):
        index = pred[rows]
        w = _weights(weight, rows, index.shape[0])
        rows_inverse = noise.inverse_rows(observed[rows], rows, None)
        q, scale = noise.flip_scale(rows)  # with K = 2: (q_i, 1 − 2q_i)
        v = np.broadcast_to(q * (1.0 - q) / (scale * scale), index.shape)
        counts += _column_sums(index, w[:, None] * rows_inverse, 2)
        flip_variance += np.bincount(index, weights=w * w * v, minlength=2)
    return counts, flip_variance[:, None, None] * _BINARY_PATTERN


def _shared_totals(
    observed: np.ndarray,
    pred: np.ndarray,
    inverse: np.ndarray,
    weight: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Counts and covariance from the weighted counts of the pairs ``(c̃, ŷ)``.

    With ``N[l, j] = Σ w`` and ``N2[l, j] = Σ w²`` over the samples observed as
    ``l`` and predicted as ``j``: ``C = T⁻ᵀ N`` and ``covariance[j] =
    Σ_l N2[l, j] R_lᵀ R_l − diag(Σ_l N2[l, j] R_l)`` with ``R_l = T⁻¹[l, :]``.
    """
    n_classes = inverse.shape[0]
    first = np.zeros(n_classes * n_classes)
    second = np.zeros(n_classes * n_classes)
    for rows in chunks(observed.shape[0]):
        pair = observed[rows] * n_classes + pred[rows]
        w = _weights(weight, rows, pair.shape[0])
        first += np.bincount(pair, weights=w, minlength=n_classes * n_classes)
        second += np.bincount(pair, weights=w * w, minlength=n_classes * n_classes)
    first = first.reshape(n_classes, n_classes)
    second = second.reshape(n_classes, n_classes)
    covariance = np.einsum("lk,lj,lm->jkm", inverse, second, inverse)
    diagonal = inverse.T @ second  # [k, j] = Σ_l N2[l, j] R_l[k]
    index = np.arange(n_classes)
    covariance[:, index, index] -= diagonal.T
    return inverse.T @ first, covariance


def _per_sample_totals(
    observed: np.ndarray,
    pred: np.ndarray,
    noise: FlipNoise,
    weight: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """Counts and covariance summed sample by sample (a per-sample ``q``, K > 2)."""
    n_classes = noise.n_classes
    counts = np.zeros((n_classes, n_classes))
    covariance = np.zeros((n_classes, n_classes, n_classes))
    index = np.arange(n_classes)
    for rows in chunks(observed.shape[0]):
        column = pred[rows]
        w = _weights(weight, rows, column.shape[0])
        rows_inverse = noise.inverse_rows(observed[rows], rows, None)
        counts += _column_sums(column, w[:, None] * rows_inverse, n_classes)
        squared = (w * w)[:, None] * rows_inverse
        for j in range(n_classes):
            mine = column == j
            covariance[j] += squared[mine].T @ rows_inverse[mine]
            covariance[j, index, index] -= squared[mine].sum(axis=0)
    return counts, covariance


# --------------------------------------------------------------------------- #
# Metrics of the confusion matrix, with their gradients (their definitions)
# --------------------------------------------------------------------------- #
#: The metrics :func:`truth_metric` knows by name: every count definition.
TRUTH_METRICS = tuple(sorted(COUNT_METRICS))


def metric_gradient(
    name: str,
    counts: np.ndarray,
    *,
    pos_index: int | None = None,
    average: str = "binary",
    zero_division: float = 0.0,
    **parameters: Any,
) -> tuple[float, np.ndarray]:
    """A metric of a confusion matrix and its gradient ``∂f/∂C``.

    ``name`` is one of :data:`TRUTH_METRICS` (read from its definition,
    :mod:`._count_definitions`) or a function ``counts -> (value, gradient)``.
    ``counts`` has rows the true classes; ``pos_index`` (the positive class)
    is needed by ``average="binary"`` and by ``"specificity"`` (two classes);
    ``average`` is scikit-learn's, over all the classes, for the ratios;
    ``zero_division`` the value of a ratio whose denominator is zero;
    ``parameters`` the definition's own options (kappa's ``weights``).
    Returns the value and the gradient, of the shape of ``counts``.
    """
    if callable(name):  # another metric of C: ``name(counts) -> (value, ∂/∂C)``
        return name(counts)
    if name not in TRUTH_METRICS:
        raise ValueError(f"name must be one of {TRUTH_METRICS}; got {name!r}.")
    definition = COUNT_METRICS[name]
    if definition.averaged:
        if definition.negative or average == "binary":
            if pos_index is None:
                raise ValueError(
                    f"{name} needs pos_index, the positive class position."
                )
        if definition.negative:  # binary here; one-vs-rest in ._rates_average
            if counts.shape[0] != 2:
                raise ValueError(
                    f"{name} is defined for two classes; got {counts.shape[0]}."
                )
            average = "binary"
        if average not in AVERAGES:
            raise ValueError(f"average must be one of {AVERAGES}; got {average!r}.")
    return definition.gradient(
        counts,
        pos_index=pos_index,
        average=average,
        zero_division=zero_division,
        **parameters,
    )


def truth_metric(
    name: str,
    confusion: DenoisedConfusion,
    *,
    pos_index: int | None = None,
    average: str = "binary",
    zero_division: float = 0.0,
    **parameters: Any,
) -> tuple[float, float]:
    """The truth estimate of a metric and its delta-method variance.

    ``f(C)`` on the de-noised counts and ``Σ_j ∇_jᵀ covariance[j] ∇_j`` (user
    guide: :ref:`formula_truth`). For accuracy and precision (linear with fixed
    denominators) the estimate is unbiased and the variance estimate unbiased
    for the exact variance; the others are consistent. Being unbiased rather
    than non-negative, the estimate can be negative: it is returned floored at
    the exact lower bound :meth:`DenoisedConfusion.variance_floor` (0 for a
    matrix without its flip model, such as the remeasurement's).
    The parameters are those of :func:`metric_gradient`.

    Returns
    -------
    estimate : float
    variance : float
    """
    value, gradient = metric_gradient(
        name,
        confusion.counts,
        pos_index=pos_index,
        average=average,
        zero_division=zero_division,
        **parameters,
    )
    variance = confusion.variance(gradient)
    return value, max(variance, confusion.variance_floor(gradient))


def second_order_bias(
    name: str,
    confusion: DenoisedConfusion,
    *,
    pos_index: int | None = None,
    average: str = "binary",
    zero_division: float = 0.0,
    **parameters: Any,
) -> float:
    """``½ Σ_j tr(H_j Ĉov_j)``: the estimated second-order bias of ``f(Ĉ)``.

    ``H_j`` is the Hessian of ``f`` in the column ``C[:, j]``, taken by central
    differences of the analytic gradient (a step of ``10⁻⁴`` of the total
    weight: truncation error about ``10⁻⁸`` relative); the columns of ``Ĉ`` are
    independent, so there are no cross-column terms. Subtracting it from
    ``f(Ĉ)`` removes the bias of order ``1/M`` (user guide:
    :ref:`formula_truth`). The parameters are those of :func:`metric_gradient`.
    """
    counts = confusion.counts
    n_classes = counts.shape[0]
    step = 1e-4 * max(float(abs(counts.sum())), 1.0)
    options = {"pos_index": pos_index, "average": average, **parameters}
    bias = 0.0
    for j in range(n_classes):
        hessian = np.empty((n_classes, n_classes))
        for row in range(n_classes):
            shifted = []
            for sign in (1.0, -1.0):
                moved = counts.copy()
                moved[row, j] += sign * step
                _, gradient = metric_gradient(
                    name, moved, zero_division=zero_division, **options
                )
                shifted.append(gradient[:, j])
            hessian[:, row] = (shifted[0] - shifted[1]) / (2.0 * step)
        bias += 0.5 * float(np.sum(hessian * confusion.covariance[j].T))
    return bias
