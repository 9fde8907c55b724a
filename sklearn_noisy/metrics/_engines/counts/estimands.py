"""The truth and remeasurement estimands of the count metrics: ``f`` of the
de-noised confusion matrix, delta-method variances (:ref:`formula_truth`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...._noisy_score import NoisyScore, cornish_fisher_pivot
from ....utils._arrays import chunks, read_only
from ....utils._noise import FlipNoise
from ..._definitions.counts import COUNT_METRICS
from .confusion_draws import pair_sums
from .fieller import as_pivot, count_fieller, ratio_masks, widen

#: The averages of recall, precision and F1, as in scikit-learn.
AVERAGES = ("binary", "micro", "macro", "weighted")

#: The metrics :func:`truth_metric` knows by name: every count definition.
TRUTH_METRICS = tuple(sorted(COUNT_METRICS))


def _weights(weight: np.ndarray | None, rows: slice, size: int) -> np.ndarray:
    return np.ones(size) if weight is None else weight[rows]


@dataclass(frozen=True, eq=False)
class DenoisedConfusion:
    """An estimated confusion matrix ``counts`` (rows the class, columns the
    prediction) and the unbiased covariance estimate of each column; with the
    flip model and the data it was built from, variances have a floor."""

    counts: np.ndarray
    covariance: np.ndarray
    noise: FlipNoise | None = None
    observed: np.ndarray | None = None
    pred: np.ndarray | None = None
    weight: np.ndarray | None = None

    @property
    def n_classes(self) -> int:
        return int(self.counts.shape[0])

    @property
    def cell_variance(self) -> np.ndarray:
        """The variance of each count ``C[k, j]``, floored when the model is known."""
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
        """``Σ_j ∇_jᵀ covariance[j] ∇_j``, the delta-method variance of ``f(C)``
        (unbiased, so possibly negative)."""
        return float(np.einsum("kj,jkl,lj->", gradient, self.covariance, gradient))

    def variance_floor(self, gradient: np.ndarray) -> float:
        """``Σ_j Σ_{i: ŷ_i = j} w_i² min_c Var(r_i·∇_j | c)``, the exact lower bound."""
        if self.noise is None:
            return 0.0
        return float(self._column_floors(gradient).sum())

    def _column_floors(self, gradient: np.ndarray) -> np.ndarray:
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
    """The de-noised confusion matrix of the true labels and its covariance,
    from class positions; a singular flip model raises a ``ValueError``."""
    if noise.matrix is not None:
        inverse = noise.inverse_matrix()
    else:
        noise.check_invertible()
        inverse = None
    n_classes = noise.n_classes
    if noise.q is not None and (n_classes == 2 or not noise.is_constant):
        # Σ w r and Σ w² (r rᵀ − diag r) by column, r the row of T⁻¹ of a sample;
        # two classes: r rᵀ − diag r = q(1−q)/(1−2q)² [[1, −1], [−1, 1]]
        counts = np.zeros((n_classes, n_classes))
        covariance = np.zeros((n_classes, n_classes, n_classes))
        flip_variance = np.zeros(2)
        index = np.arange(n_classes)
        for rows in chunks(observed.shape[0]):
            column = pred[rows]
            w = _weights(weight, rows, column.shape[0])
            rows_inverse = noise.inverse_rows(observed[rows], rows, None)
            for k in range(n_classes):
                counts[k] += np.bincount(
                    column, weights=w * rows_inverse[:, k], minlength=n_classes
                )
            if n_classes == 2:
                q, scale = noise.flip_scale(rows)  # (q_i, 1 − 2q_i)
                v = np.broadcast_to(q * (1.0 - q) / (scale * scale), column.shape)
                flip_variance += np.bincount(column, weights=w * w * v, minlength=2)
                continue
            squared = (w * w)[:, None] * rows_inverse
            for j in range(n_classes):
                mine = column == j
                covariance[j] += squared[mine].T @ rows_inverse[mine]
                covariance[j, index, index] -= squared[mine].sum(axis=0)
        if n_classes == 2:
            covariance = flip_variance[:, None, None] * np.array([[1, -1], [-1, 1]])
    else:  # from N[l, j] = Σ w and N2[l, j] = Σ w² over (c̃, ŷ) = (l, j): C = T⁻ᵀ N
        if inverse is None:
            inverse = noise.inverse_rows(np.arange(n_classes), slice(None), None)
        first, second = pair_sums(
            lambda rows: (observed[rows], pred[rows]), len(observed), n_classes, weight
        )
        counts, covariance = inverse.T @ first, column_covariances(inverse, second)
    return DenoisedConfusion(
        read_only(counts), read_only(covariance), noise, observed, pred, weight
    )


def column_covariances(rows: np.ndarray, second: np.ndarray) -> np.ndarray:
    """``[j] = Σ_l N2[l, j] (R_l R_lᵀ − diag(R_l))``, ``R_l`` the rows of class
    ``l`` (minus: a multinomial column's covariance, ``R = T``)."""
    covariance = np.einsum("lk,lj,lm->jkm", rows, second, rows)
    index = np.arange(rows.shape[0])
    covariance[:, index, index] -= (rows.T @ second).T
    return covariance


def check_remeasurable(noise: FlipNoise) -> np.ndarray | None:
    """``T⁻¹`` (None for flips ``q``), or a ``ValueError`` for a singular model."""
    try:
        if noise.matrix is not None:
            return noise.inverse_matrix()
        noise.check_invertible()
    except ValueError as exc:
        raise ValueError(
            "estimand='remeasurement' estimates the spread of the metric over "
            "fresh labels from one set of labels, which needs an invertible flip "
            f"model, as estimand='truth' does: {exc}"
        ) from exc
    return None


def observation_matrices(noise: FlipNoise, rows: slice, size: int) -> np.ndarray:
    """The flip matrices ``T_i[k, j] = P(c̃_i = j | c_i = k)`` of a chunk."""
    n_classes = noise.n_classes
    if noise.matrix is not None:
        return np.broadcast_to(noise.matrix, (size, n_classes, n_classes))
    return np.stack(
        [
            noise.observation_rows(np.full(size, k, dtype=np.intp), rows)
            for k in range(n_classes)
        ],
        axis=1,
    )


def class_function_estimate(
    noise: FlipNoise,
    observed: np.ndarray,
    rows: slice,
    inverse: np.ndarray | None,
    values: np.ndarray,
) -> np.ndarray:
    """``Σ_k T⁻¹[c̃_i, k] values[i, k]``: unbiased for ``values[i, c_i]``."""
    inverse_rows = noise.inverse_rows(observed, rows, inverse)
    return np.einsum("ik,ik->i", inverse_rows, values)


def observed_confusion(
    observed: np.ndarray,
    pred: np.ndarray,
    noise: FlipNoise,
    weight: np.ndarray | None = None,
) -> DenoisedConfusion:
    """The observed confusion matrix and the unbiased estimate of its covariance,
    ``Σ w_i² (diag(e_{c̃_i}) − Σ_k T⁻¹[c̃_i, k] T_i[k, :]ᵀ T_i[k, :])``."""
    inverse = check_remeasurable(noise)
    n_classes = noise.n_classes
    counts = np.zeros((n_classes, n_classes))
    covariance = np.zeros((n_classes, n_classes, n_classes))
    for rows in chunks(observed.shape[0]):
        label, column = observed[rows], pred[rows]
        size = label.shape[0]
        w = _weights(weight, rows, size)
        matrices = observation_matrices(noise, rows, size)
        inverse_rows = noise.inverse_rows(label, rows, inverse)
        second = np.einsum(
            "ik,ika,ikb->iab", (w * w)[:, None] * inverse_rows, matrices, matrices
        )
        np.add.at(counts, (label, column), w)
        np.add.at(covariance, (column, label, label), w * w)
        for j in range(n_classes):
            covariance[j] -= second[column == j].sum(axis=0)
    return DenoisedConfusion(read_only(counts), read_only(covariance))


def metric_gradient(
    name: str,
    counts: np.ndarray,
    *,
    pos_index: int | None = None,
    average: str = "binary",
    zero_division: float = 0.0,
    **parameters: Any,
) -> tuple[float, np.ndarray]:
    """A metric (one of :data:`TRUTH_METRICS`) of a confusion matrix, and ``∂f/∂C``."""
    if name not in TRUTH_METRICS:
        raise ValueError(f"name must be one of {TRUTH_METRICS}; got {name!r}.")
    definition = COUNT_METRICS[name]
    if definition.averaged:
        if average == "binary" and pos_index is None:
            raise ValueError(f"{name} needs pos_index, the positive class position.")
        if definition.negative and average == "binary" and counts.shape[0] != 2:
            raise ValueError(
                f"{name} is defined for two classes; got {counts.shape[0]}."
            )
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
    name: str, confusion: DenoisedConfusion, **options: Any
) -> tuple[float, float]:
    """``f(C)`` and its delta-method variance, floored at its exact lower bound."""
    value, gradient = metric_gradient(name, confusion.counts, **options)
    variance = confusion.variance(gradient)
    return value, max(variance, confusion.variance_floor(gradient))


def second_order_bias(name: str, confusion: DenoisedConfusion, **options: Any) -> float:
    """``½ Σ_j tr(H_j Ĉov_j)``, the estimated second-order bias of ``f(Ĉ)``, the
    Hessians by central differences of the gradient."""
    counts = confusion.counts
    n_classes = counts.shape[0]
    step = 1e-4 * max(float(abs(counts.sum())), 1.0)
    bias = 0.0
    for j in range(n_classes):
        hessian = np.empty((n_classes, n_classes))
        for row in range(n_classes):
            shifted = []
            for sign in (1.0, -1.0):
                moved = counts.copy()
                moved[row, j] += sign * step
                shifted.append(metric_gradient(name, moved, **options)[1][:, j])
            hessian[:, row] = (shifted[0] - shifted[1]) / (2.0 * step)
        bias += 0.5 * float(np.sum(hessian * confusion.covariance[j].T))
    return bias


def count_estimand_score(
    metric: str,
    observed: np.ndarray,
    pred: np.ndarray,
    noise: FlipNoise,
    *,
    estimand: str,
    nominal: float,
    average: str = "binary",
    weight: np.ndarray | None = None,
    **options: Any,
) -> NoisyScore:
    """The truth or remeasurement score of a count metric from class positions;
    ``options`` go to :func:`metric_gradient`."""
    options = {"average": average, **options}
    linear = COUNT_METRICS[metric].is_linear(average)
    if estimand == "truth":
        confusion = denoised_confusion(observed, pred, noise, weight)
        estimate, variance = truth_metric(metric, confusion, **options)
        if not linear:
            estimate -= second_order_bias(metric, confusion, **options)
    else:
        confusion = observed_confusion(observed, pred, noise, weight)
        estimate, variance = nominal, truth_metric(metric, confusion, **options)[1]
    method = "exact" if linear else "delta"
    variance = max(variance, 0.0)
    pivot = None
    if noise.n_classes == 2 and noise.q is not None and variance > 0.0:
        moments = flip_moments(observed, pred, noise, weight, estimand == "truth")
        pivot = flip_pivot(metric, confusion.counts, *moments, variance, options)
        masks = ratio_masks(COUNT_METRICS[metric], options.get("pos_index"), pred.size)
        if estimand == "truth" and masks and weight is None and average == "binary":
            ends = count_fieller(masks, noise, observed, pred, COUNT_METRICS[metric])
            pivot = as_pivot(estimate, math.sqrt(variance), ends("label")) or pivot
    n_samples = observed.shape[0]
    return NoisyScore(
        metric, estimate, variance, nominal, n_samples, method, estimand,
        label_pivot=pivot,
    )  # fmt: skip


def flip_moments(
    observed: np.ndarray,
    pred: np.ndarray,
    noise: FlipNoise,
    weight: np.ndarray | None,
    truth: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Two classes, flips ``q``: each column ``j`` of the (de-noised) confusion
    matrix moves along ``(−1, 1)`` by ``S_j = Σ_{ŷ_i = j} w_i x_i``, ``x_i = (o_i −
    q_i)/p_i`` (truth, ``p_i = 1 − 2q_i``) or ``o_i`` (``p_i = 1``), ``o_i`` the
    observed positive. The variance ``V = q(1 − q)/p²`` and the unbiased
    estimate ``q(1 − q)(1 − 2o)/p³`` of the third cumulant of each term, summed
    by column, and the covariance ``−2 V²`` of the two: ``(Var S_j, κ₃(S_j),
    Cov_j)``."""
    second, third, moved = np.zeros(2), np.zeros(2), np.zeros(2)
    for rows in chunks(observed.shape[0]):
        column = pred[rows]
        w = _weights(weight, rows, column.shape[0])
        q, scale = noise.flip_scale(rows)
        p = scale if truth else 1.0
        v = np.broadcast_to(q * (1.0 - q) / (p * p), column.shape)
        second += np.bincount(column, weights=w * w * v, minlength=2)
        skewed = w**3 * v * (1.0 - 2.0 * observed[rows]) / p
        third += np.bincount(column, weights=skewed, minlength=2)
        moved -= np.bincount(column, weights=2.0 * (w * w * v) ** 2, minlength=2)
    return second, third, moved


def flip_pivot(
    metric: str,
    counts: np.ndarray,
    second: np.ndarray,
    third: np.ndarray,
    estimated: np.ndarray,
    variance: float,
    options: dict,
) -> tuple[float, ...] | None:
    """The Cornish–Fisher pivot of ``f(C)`` from the column sums of
    :func:`flip_moments`: with ``g_j`` and ``H_jl`` the first and second
    derivatives of ``f`` along the columns' moves, ``κ₃(f) = Σ g_j³ κ₃(S_j) +
    3Q`` and ``Cov(f, ŝ²) = 2Q``, ``Q = Σ g_j g_l H_jl Var S_j Var S_l``,
    widened for the skewness's estimate (:func:`.fieller.widen`; user guide:
    :ref:`formula_truth`)."""
    move = np.array([-1.0, 1.0])
    g = move @ metric_gradient(metric, counts, **options)[1]
    step = 1e-4 * max(float(abs(counts.sum())), 1.0)
    hessian = np.empty((2, 2))
    for column in range(2):
        shifted = []
        for sign in (1.0, -1.0):
            moved = counts.copy()
            moved[:, column] += sign * step * move
            shifted.append(move @ metric_gradient(metric, moved, **options)[1])
        hessian[:, column] = (shifted[0] - shifted[1]) / (2.0 * step)
    spread = g * second
    quadratic = float(spread @ hessian @ spread)
    scale = variance**1.5
    skew = (float(g**3 @ third) + 3.0 * quadratic) / scale
    pivot = cornish_fisher_pivot(skew, 2.0 * quadratic / scale)
    return widen(pivot, float(g**4 @ estimated) / variance**2)
