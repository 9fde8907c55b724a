"""The test-set sampling variance of a count metric from its influence function,
``h_i = f + W ∇f · (m_i − C/W)`` (user guide: :ref:`error_budget`)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ...._noisy_score import PIVOT_MAX_SAMPLES, cornish_fisher_pivot
from ....utils._arrays import check_sample_weight
from ....utils._labels import encode_labels
from ....utils._noise import FlipNoise
from ..._definitions.counts import CountMetric
from ..test_set_sampling import mean_total_variance
from .fieller import count_fieller, fieller_sampling_pivot, ratio_masks
from .multilabel import is_multilabel
from .prediction import flip_cumulants, prediction_pivot

__all__ = ["count_sampling"]


def _class_rows(noise: FlipNoise, estimand: str, index: np.ndarray) -> np.ndarray:
    """The rows of class weights of the classes ``index`` under ``estimand``."""
    if estimand == "forward":
        return noise.observation_rows(index, slice(None))
    if estimand == "truth":
        inverse = None if noise.matrix is None else noise.inverse_matrix()
        return noise.inverse_rows(index, slice(None), inverse)
    return np.eye(noise.n_classes)[index]


def _terms(
    definition: CountMetric, arguments: dict[str, Any], score: Any
) -> tuple[np.ndarray, np.ndarray | None, float] | None:
    """``(h, weight, 1, None, None, None, pivot)``, the per-sample terms of a count
    metric's call and their prediction pivot (two classes, flips ``q``), or None
    where the bootstrap stays (per-class results, multilabel targets, a
    ``labels`` subset)."""
    y_true, y_pred = arguments["y_true"], arguments["y_pred"]
    average = arguments.get("average", "binary") if definition.averaged else "macro"
    labels = arguments.get("labels")
    if (
        isinstance(score, list)
        or average not in ("binary", "micro", "macro", "weighted")
        or is_multilabel(y_true, y_pred)
    ):
        return None
    encoded = encode_labels(y_true, y_pred, None)
    if labels is not None:
        if not np.isin(encoded.classes, labels).all():
            return None
        encoded = encode_labels(y_true, y_pred, labels)
    classes, k = encoded.classes, encoded.n_classes
    true_index, pred_index = encoded.indices(slice(None))
    options: dict[str, Any] = {"average": average}
    if definition.averaged:
        zero = arguments.get("zero_division", "warn")
        options["zero_division"] = 0.0 if isinstance(zero, str) else float(zero)
        if average == "binary":
            position = np.flatnonzero(classes == arguments.get("pos_label", 1))
            if k != 2 or position.size != 1:
                return None
            options["pos_index"] = int(position[0])
    if k < 2:  # one class: no flip model to draw the rows from
        return None
    options.update({n: arguments.get(n, d) for n, d in definition.parameters})
    n = true_index.shape[0]
    noise = FlipNoise.from_params(
        arguments.get("q"), arguments.get("transition_matrix"), n_samples=n,
        n_classes=k,
    )  # fmt: skip
    weight = check_sample_weight(arguments.get("sample_weight"), n)
    if noise.is_constant:  # one row per class: K x K tables, one gather
        table = _class_rows(noise, score.estimand, np.arange(k))
        cells = np.bincount(true_index * k + pred_index, weight, k * k)
        counts = table.T @ cells.reshape(k, k)
    else:
        table = _class_rows(noise, score.estimand, true_index)
        w = np.ones(n) if weight is None else weight
        counts = np.stack(
            [np.bincount(pred_index, w * table[:, c], k) for c in range(k)]
        )
    value, gradient = definition.gradient(counts, **options)
    if noise.is_constant:
        influence = (table @ gradient)[true_index, pred_index]
    else:
        influence = np.einsum("ik,ki->i", table, gradient[:, pred_index])
    total = float(counts.sum())
    h = value + total * (influence - float(np.sum(gradient * counts)) / total)
    adjusted = 1.0
    if arguments.get("adjusted", False):  # (f − 1/K) / (1 − 1/K)
        h = (h - 1.0 / k) / (1.0 - 1.0 / k)
        adjusted = 1.0 / (1.0 - 1.0 / k)
    pivot = None
    two = k == 2 and noise.q is not None and 10 <= n <= PIVOT_MAX_SAMPLES
    if two and weight is None:
        of = functools.partial(definition.gradient, **options)
        rows = table if table.shape[0] == n else table[true_index]
        slope = (gradient[1] - gradient[0])[pred_index] * total * adjusted
        spread = flip_cumulants(noise, true_index, score.estimand)
        pivot = _pivots(of, counts, rows, pred_index, h, adjusted, slope, spread, score)
        masks = ratio_masks(definition, options.get("pos_index"), n)
        if score.estimand == "truth" and average == "binary" and masks:
            ends = count_fieller(masks, noise, true_index, pred_index, definition)
            total = mean_total_variance(h, None)[0]
            pivot = fieller_sampling_pivot(ends, score, total) or pivot
    return h, weight, 1.0, None, None, None, pivot


def _pivots(
    gradient_of: Callable[..., Any],
    counts: np.ndarray,
    rows: np.ndarray,
    pred: np.ndarray,
    h: np.ndarray,
    scale: float,
    slope: np.ndarray,
    spread: tuple[np.ndarray, np.ndarray],
    score: Any,
) -> Any:
    """The Cornish–Fisher pivots of two classes under flips: of the estimate
    ``T`` for the interval with both sources, ``(T − θ)/ŝ`` with ``κ₃ = (m₃ +
    3bᵀHb)/n²``, ``Cov(T, ŝ²) = (m₃ + 2bᵀHb)/n²`` and the bias ``tr(HΣ)/2n`` of
    ``f`` less the estimate's own correction; and the prediction interval's
    (:mod:`.prediction`). ``H``: the Hessian of ``f`` (times ``scale``) in the
    counts, ``m_i`` each sample's cell weights (``rows`` in the column
    ``pred``), ``Σ`` their covariance, ``b = Σ_i m_i (h_i − h̄)``, ``m₃`` the
    terms' third central moment (user guide: :ref:`error_budget_intervals`)."""
    n, size = h.shape[0], counts.size
    cells = np.zeros((n, *counts.shape))
    cells[np.arange(n), :, pred] = rows
    cells = cells.reshape(n, size)
    step = 1e-4 * max(float(np.abs(counts).sum()), 1.0)
    hessian = np.empty((size, size))
    for cell in range(size):
        moved = np.zeros(size)
        moved[cell] = step
        moved = moved.reshape(counts.shape)
        difference = gradient_of(counts + moved)[1] - gradient_of(counts - moved)[1]
        hessian[:, cell] = scale * difference.ravel() / (2.0 * step)
    a = h - float(np.mean(h))
    b, flat = cells.T @ a, counts.ravel()
    m2, m3, quadratic = float(a @ a) / n, float(a @ a**2) / n, float(b @ hessian @ b)
    trace = n * float(np.einsum("ia,ab,ib->", cells, hessian, cells))
    trace -= float(flat @ hessian @ flat)
    root, cube = math.sqrt(m2 / (n - 1.0)), m2**1.5 * math.sqrt(n)
    both = None
    if m2 > 0.0:  # else no spread: the terms' bootstrap-t (none)
        both = cornish_fisher_pivot(
            (m3 + 3 * quadratic) / cube, (m3 + 2 * quadratic) / cube
        )
    if both is not None:
        shift = (0.5 * trace / n - float(np.mean(h)) + score.expected) / root
        both = tuple(v + shift for v in both)

    def curvature(_: np.ndarray, labelled: np.ndarray) -> tuple[float, float, float]:
        c = np.bincount(pred, labelled, counts.shape[0])
        c = np.stack([-c, c]).ravel()
        return quadratic, float(b @ hessian @ c), float(c @ hessian @ c)

    return prediction_pivot(h, slope, *spread, score, curvature, both)


def count_sampling(definition: CountMetric) -> Callable[..., Any]:
    """The test-set sampling terms of ``definition``'s public function."""
    return functools.partial(_terms, definition)
