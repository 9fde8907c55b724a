"""scikit-learn's metric values from a confusion matrix, with its own arithmetic.

The nominal multiclass precision, recall, F1, balanced accuracy and MCC are
computed from the integer confusion matrix that the expected metrics count
anyway, with the same floating-point operations in the same order as
:mod:`sklearn.metrics` (its ``_prf_divide``, ``_nanaverage`` and
``numpy.average``; ``confusion_matrix`` over the sorted classes), so that the
result agrees to the last bit without calling scikit-learn, whose label
handling copies and sorts the labels (a memory peak of several label arrays
at M = 10⁷). ``tests/test_prf_parity.py`` checks the agreement bit for bit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["sklearn_from_confusion"]


def _prf_divide(numerator: np.ndarray, denominator: np.ndarray, zero: float) -> Any:
    mask = denominator == 0
    denominator = np.asarray(denominator, dtype=np.float64).copy()
    denominator[mask] = 1
    result = np.asarray(numerator, dtype=np.float64) / denominator
    result[mask] = zero
    return result


def _nanaverage(values: np.ndarray, weights: np.ndarray | None) -> float:
    if values.shape[0] == 0:
        return math.nan
    mask = np.isnan(values)
    if np.all(mask):
        return math.nan
    if weights is None:
        return float(np.nanmean(values))
    values, weights = values[~mask], weights[~mask]
    try:
        return float(np.average(values, weights=weights))
    except ZeroDivisionError:  # all weights zero: scikit-learn ignores them
        return float(np.average(values))


def _prf(
    metric: str, confusion: np.ndarray, average: Any, zero: float, index: Any
) -> Any:
    tp_sum = np.diagonal(confusion).copy()
    pred_sum = confusion.sum(axis=0)
    true_sum = confusion.sum(axis=1)
    if index is not None:  # scikit-learn's labels as a subset of the classes
        tp_sum, pred_sum, true_sum = tp_sum[index], pred_sum[index], true_sum[index]
    if average == "micro":
        tp_sum = np.reshape(np.sum(tp_sum), (1,))
        pred_sum = np.reshape(np.sum(pred_sum), (1,))
        true_sum = np.reshape(np.sum(true_sum), (1,))
    if metric == "precision":
        values = _prf_divide(tp_sum, pred_sum, zero)
    elif metric == "recall":
        values = _prf_divide(tp_sum, true_sum, zero)
    else:
        denominator = 1 * true_sum.astype(np.float64) + pred_sum.astype(np.float64)
        values = _prf_divide((1 + 1) * tp_sum.astype(np.float64), denominator, zero)
    if average is None:
        return values
    return _nanaverage(values, true_sum if average == "weighted" else None)


def sklearn_from_confusion(
    metric: str,
    confusion: np.ndarray,
    classes: np.ndarray,
    *,
    average: Any = None,
    zero_division: float = 0.0,
    adjusted: bool = False,
    label_index: Any = None,
) -> Any:
    """scikit-learn's ``metric`` of the labels whose confusion matrix is given.

    ``confusion[k, j]`` counts the samples of class ``classes[k]`` predicted
    ``classes[j]`` (integers, rows the true class). Precision, recall and F1
    follow ``classes`` (scikit-learn's ``labels``); balanced accuracy and MCC
    use the sorted classes present, as scikit-learn's ``confusion_matrix``.
    ``label_index`` selects the classes of precision, recall and F1.
    """
    if metric in ("precision", "recall", "f1"):
        return _prf(metric, confusion, average, zero_division, label_index)
    order = np.argsort(classes, kind="stable")
    confusion = confusion[np.ix_(order, order)]
    present = (confusion.sum(axis=0) + confusion.sum(axis=1)) > 0
    confusion = confusion[np.ix_(present, present)]
    return ba_mcc_of_confusion(metric, confusion, adjusted=adjusted)


def ba_mcc_of_confusion(
    metric: str, confusion: np.ndarray, *, adjusted: bool = False
) -> float:
    """Balanced accuracy or MCC of a confusion matrix, as scikit-learn computes.

    ``confusion`` holds the classes present, rows the true class; the same
    operations in the same order as :mod:`sklearn.metrics`, so that results
    agree to the last bit.
    """
    if metric == "balanced_accuracy":
        with np.errstate(divide="ignore", invalid="ignore"):
            per_class = np.diagonal(confusion) / np.sum(confusion, axis=1)
        per_class = per_class[~np.isnan(per_class)]
        score = np.mean(per_class)
        if adjusted:
            chance = 1 / per_class.shape[0]
            with np.errstate(divide="ignore", invalid="ignore"):
                score -= chance
                score /= 1 - chance
        return float(score)
    t_sum = confusion.sum(axis=1, dtype=np.float64)
    p_sum = confusion.sum(axis=0, dtype=np.float64)
    n_correct = np.trace(confusion, dtype=np.float64)
    n_samples = p_sum.sum()
    cov_ytyp = n_correct * n_samples - np.dot(t_sum, p_sum)
    cov_ypyp = n_samples**2 - np.dot(p_sum, p_sum)
    cov_ytyt = n_samples**2 - np.dot(t_sum, t_sum)
    product = cov_ypyp * cov_ytyt
    return 0.0 if product == 0 else float(cov_ytyp / np.sqrt(product))
