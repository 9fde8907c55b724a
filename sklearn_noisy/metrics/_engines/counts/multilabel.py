"""Precision, recall and F1 of multilabel indicator targets, entries flipping
on their own (user guide: :ref:`formula_multiclass`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...._noisy_score import NoisyScore
from ....utils._arrays import as_float_array
from ....utils._noise import FlipNoise
from ..._definitions.counts import COUNT_METRICS, average_ratio
from .binary_moments import CountLaws, exact_moments
from .checks import varying_weight
from .confusion_draws import draw_moments
from .multiclass import NEGLIGIBLE, _per_class, defined_mean, sklearn_value
from .poisson_binomial import bernoulli_table

__all__ = ["is_multilabel", "multilabel_score"]

#: Samples whose per-sample law tables are built at a time.
_SAMPLE_BLOCK = 2048


def _as_2d(y: Any) -> np.ndarray | None:
    if hasattr(y, "toarray"):  # a scipy.sparse matrix
        y = y.toarray()
    if hasattr(y, "to_numpy") and not isinstance(y, np.ndarray):
        y = y.to_numpy()
    try:
        array = np.asarray(y)
    except (TypeError, ValueError):
        return None
    return array if array.ndim == 2 and array.shape[1] > 1 else None


def is_multilabel(y_true: Any, y_pred: Any) -> bool:
    """Whether either target is a 2-D indicator-like array with several columns."""
    return _as_2d(y_true) is not None or _as_2d(y_pred) is not None


def _indicator(y: Any, name: str) -> np.ndarray:
    array = _as_2d(y)
    if (
        array is None
        or array.dtype.kind not in "biuf"
        or not np.all((array == 0) | (array == 1))
    ):
        raise ValueError(
            f"{name} must be a multilabel indicator matrix (n_samples, n_labels) of "
            "0 and 1 like the other target; scikit-learn does not mix multilabel "
            "and multiclass targets either."
        )
    return array.astype(bool)


def indicators(y_true: Any, y_pred: Any) -> tuple[np.ndarray, np.ndarray]:
    """Both targets as boolean indicator matrices of the same shape."""
    truth, pred = _indicator(y_true, "y_true"), _indicator(y_pred, "y_pred")
    if truth.shape != pred.shape:
        raise ValueError(
            f"y_true and y_pred must have the same shape; got {truth.shape} and "
            f"{pred.shape}."
        )
    return truth, pred


def _positive_probability(
    y_true: np.ndarray, q: Any, transition_matrix: Any, target: Any = True
) -> np.ndarray:
    """``π[i, l]``, the probability that entry ``(i, l)`` is observed as
    ``target[i, l]`` (by default 1)."""
    shape = y_true.shape
    same = y_true == target
    if transition_matrix is not None or np.ndim(q) < 2:
        noise = FlipNoise.from_params(
            q, transition_matrix, n_samples=shape[0], n_classes=2
        )
        if noise.matrix is not None:
            columns = np.asarray(target).astype(np.intp)
            return noise.matrix[y_true.astype(np.intp), columns]
        flip = np.asarray(noise.q, dtype=np.float64)
        flip = flip if flip.ndim == 0 else flip[:, None]
        return np.where(same, 1.0 - flip, flip)
    flip = as_float_array(q, name="q")
    if flip.shape != shape:
        raise ValueError(
            f"q must be a scalar, one value per sample or one per entry of shape "
            f"{shape}; got shape {flip.shape}."
        )
    if not np.all((flip >= 0.0) & (flip <= 1.0)):
        raise ValueError("q must hold probabilities in [0, 1].")
    return np.where(same, 1.0 - flip, flip)


def _label_moments(pi: np.ndarray, pred: np.ndarray, metric: str, zero: float):
    """Exact ``(E, Var)`` of a binary metric with trials ``pi`` (any shape)."""
    pi, pred = pi.ravel(), pred.ravel()
    return exact_moments((metric,), CountLaws.of(pi, pred), zero_division=zero)[metric]


def _count_table(pi: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """PMFs, one row per sample, of the number of observed 1s among ``mask``."""
    return bernoulli_table(np.where(mask, pi, 0.0).T).T


def _sample_moments(pi: np.ndarray, pred: np.ndarray, metric: str, zero: float):
    """Exact ``(E_i, Var_i, P_i(undefined))`` of each sample's metric."""
    ratio = COUNT_METRICS[metric].ratio
    means, variances, undefined = [], [], []
    n_labels = pi.shape[1]
    counts = np.arange(n_labels + 1, dtype=np.float64)
    for start in range(0, pi.shape[0], _SAMPLE_BLOCK):
        rows = slice(start, start + _SAMPLE_BLOCK)
        p_tp = _count_table(pi[rows], pred[rows])
        p_fn = _count_table(pi[rows], ~pred[rows])
        joint = p_tp[:, :, None] * p_fn[:, None, :]
        n_pred = pred[rows].sum(axis=1).astype(np.float64)[:, None, None]
        tp, fn = counts[None, :, None], counts[None, None, :]
        values = ratio.of_sums(tp, tp + fn, n_pred, 0.0 if math.isnan(zero) else zero)
        expected = (joint * values).sum(axis=(1, 2))
        means.append(expected)
        variances.append((joint * (values - expected[:, None, None]) ** 2).sum((1, 2)))
        flag = ratio.denominator(tp + fn, n_pred) == 0
        undefined.append((joint * flag).sum(axis=(1, 2)))
    return np.concatenate(means), np.concatenate(variances), np.concatenate(undefined)


def _monte_carlo(
    metric: str,
    pi: np.ndarray,
    pred: np.ndarray,
    weight: np.ndarray | None,
    average: Any,
    zero: float,
    options: dict,
) -> tuple[Any, Any]:
    """Mean and variance over ``n_draws`` redrawn indicator matrices."""
    ratio, zero = COUNT_METRICS[metric].ratio, {"zero_division": zero}
    rng = np.random.default_rng(options["random_state"])
    n, n_labels = pi.shape
    w = np.ones(n) if weight is None else weight
    values = []
    batch = max(1, (1 << 20) // pi.size)
    for start in range(0, options["n_draws"], batch):
        size = min(batch, options["n_draws"] - start)
        observed = rng.random((size, n, n_labels)) < pi
        hits = observed & pred
        if average == "samples":  # the mean of the samples' ratios, weighted
            s = observed.sum(axis=2)
            parts = (hits.sum(axis=2), s, pred.sum(axis=1), w)
            values.append(average_ratio(ratio, parts, average="weighted", **zero))
            continue
        tp = np.einsum("i,dil->dl", w, hits.astype(np.float64))
        s = np.einsum("i,dil->dl", w, observed.astype(np.float64))
        parts = (tp, s, w @ pred, s)
        values.append(average_ratio(ratio, parts, average=average, **zero))
    return draw_moments(np.concatenate(values))


def _exact(
    metric: str,
    pi: np.ndarray,
    pred: np.ndarray,
    weight: Any,
    average: Any,
    zero: float,
) -> tuple[Any, Any] | None:
    """Exact moments where the entries' independence gives them; else None."""
    if average == "samples":
        mean, var, undefined = _sample_moments(pi, pred, metric, zero)
        if math.isnan(zero):
            if np.any((undefined > NEGLIGIBLE) & (undefined < 1.0 - NEGLIGIBLE)):
                return None
            keep = undefined <= NEGLIGIBLE
            mean, var = mean[keep], var[keep]
            weight = None if weight is None else weight[keep]
            if mean.size == 0:
                return math.nan, math.nan
        w = np.ones(mean.size) if weight is None else weight
        return (w @ mean) / w.sum(), (w * w) @ var / w.sum() ** 2
    if weight is not None or average == "weighted":
        return None
    if average == "micro":
        return _label_moments(pi, pred, metric, zero)
    moments = np.array(
        [_label_moments(pi[:, k], pred[:, k], metric, zero) for k in range(pi.shape[1])]
    )
    if average is None:
        return moments[:, 0], moments[:, 1]
    return defined_mean(moments[:, 0], moments[:, 1])


def multilabel_score(
    metric: str, y_true: Any, y_pred: Any, options: dict, zero: float
) -> NoisyScore | list[NoisyScore]:
    """Precision, recall or F1 of multilabel targets; ``options``: the public
    function's, ``zero``: ``zero_division`` as a number."""
    average, labels = options["average"], options["labels"]
    truth, pred = indicators(y_true, y_pred)
    if average == "binary":
        raise ValueError(
            "Target is multilabel-indicator but average='binary'. Please choose "
            "another average setting, one of [None, 'micro', 'macro', 'weighted', "
            "'samples']."
        )
    if options["estimand"] != "forward":
        raise ValueError(
            "Multilabel targets support estimand='forward' only: the truth and "
            "remeasurement estimates de-noise a confusion matrix of one label."
        )
    nominal = sklearn_value(
        COUNT_METRICS[metric],
        truth.astype(int),
        pred.astype(int),
        labels=labels,
        average=average,
        sample_weight=options["sample_weight"],
        zero_division=options["zero_division"],
    )
    columns = np.arange(truth.shape[1]) if labels is None else np.asarray(labels)
    pi = _positive_probability(truth, options["q"], options["transition_matrix"])
    pi = pi[:, columns]
    truth, pred = truth[:, columns], pred[:, columns]
    weight = varying_weight(options["sample_weight"], truth.shape[0])
    m = truth.shape[0]
    if np.all((pi == 0.0) | (pi == 1.0)) and np.array_equal(pi == 1.0, truth):
        result: tuple[Any, Any] | None = (nominal, np.zeros(np.shape(nominal)))
    else:
        result = _exact(metric, pi, pred, weight, average, zero)
    method = "exact" if result is not None else "monte_carlo"
    if result is None:
        result = _monte_carlo(metric, pi, pred, weight, average, zero, options)
    nominal = list(np.asarray(nominal)) if average is None else nominal
    return _per_class(metric, *result, nominal, m, method)
