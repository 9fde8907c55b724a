"""The Brier score and the log-loss, each defined once, and their inputs' validation.

The exact engine (:mod:`~sklearn_noisy.metrics._probabilistic`) and the paired
kernel read a :class:`ProbabilisticLoss`, which the registry record points at
(``MetricInfo.definition``); the probabilities, the classes and the binary
problem of a 1-D ``y_proba`` are validated here with scikit-learn's rules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ...utils._arrays import as_float_array, check_finite
from ...utils._labels import (
    check_classification_labels,
    check_labels,
    encode_labels,
)
from ...utils._warnings import warn

__all__ = [
    "BRIER_SCORE_LOSS",
    "LOG_LOSS",
    "ROC_AUC",
    "ProbabilisticLoss",
    "_binary_problem",
    "_check_proba",
    "_classes_of",
]

#: ``L[i, j]``, the loss of sample ``i`` if its label is the ``j``-th class.
Loss = Callable[[np.ndarray], np.ndarray]


def _brier_loss(eps: float) -> Loss:
    """The Brier loss table (no clipping: ``eps`` is unused)."""
    return _brier_table


def _brier_table(proba: np.ndarray) -> np.ndarray:
    if proba.ndim == 1:  # binary: (y − p)², y ∈ {0, 1}
        return np.stack((proba * proba, (1.0 - proba) ** 2), axis=1)
    # Σ_c (p_c − 1[c = j])² = Σ_{c≠j} p_c² + (1 − p_j)²; halved for 2 classes
    squares = proba * proba
    loss = squares.sum(axis=1, keepdims=True) - squares + (1.0 - proba) ** 2
    if proba.shape[1] == 2:
        loss *= 0.5
    return loss


def _log_loss(eps: float) -> Loss:
    def loss(proba: np.ndarray) -> np.ndarray:
        clipped = np.clip(proba, eps, 1.0 - eps)
        if proba.ndim == 1:  # −log(1 − p), −log p: logit p = log p − log1p(−p)
            return np.stack((-np.log1p(-clipped), -np.log(clipped)), axis=1)
        return -np.log(clipped)

    return loss


def _log_loss_entry(eps: float) -> Loss:
    def loss(proba: np.ndarray) -> np.ndarray:
        return np.stack((0.0 * proba, -np.log(np.clip(proba, eps, 1.0 - eps))), axis=1)

    return loss


@dataclass(frozen=True)
class ProbabilisticLoss:
    """One loss of predicted probabilities, as the engines read it.

    ``loss(eps)`` returns the table ``proba -> L`` (1-D ``proba``: of the
    positive class), ``eps`` the clipping bound of the probabilities' dtype.
    ``pos_label``: a 1-D ``y_proba`` is that of ``pos_label`` with
    scikit-learn's rules (Brier), else of the greater class (log-loss).
    ``scale_by_half``: the metric takes scikit-learn's option of that name.
    ``entry(eps)``: the table ``p -> [ℓ(0), ℓ(1)]`` of one entry of a multilabel
    indicator ``y_true`` (scikit-learn's loss sums the entries of a row).
    """

    #: The paired comparison asks these of every definition: none here.
    streamed_difference: ClassVar[Any] = None
    paired_existence: ClassVar[Any] = None

    name: str
    loss: Callable[[float], Loss]
    entry: Callable[[float], Loss]
    pos_label: bool = False
    scale_by_half: bool = False


#: The Brier score: ``Σ_c (p_c − 1[c = y])²``, halved for two classes.
BRIER_SCORE_LOSS = ProbabilisticLoss(
    "brier_score_loss", _brier_loss, _brier_loss, pos_label=True, scale_by_half=True
)
#: The log-loss: ``−log p_y``, the probabilities clipped at the dtype's eps.
LOG_LOSS = ProbabilisticLoss("log_loss", _log_loss, _log_loss_entry)
#: The ROC AUC's name (a ranking of the scores, not a loss: engines/roc_auc.py).
ROC_AUC = "roc_auc"


def _check_proba(y_proba: Any) -> tuple[np.ndarray, float]:
    """``y_proba`` as float64 (1-D or 2-D) and the clipping eps of its dtype."""
    array = as_float_array(y_proba, name="y_proba")
    float32 = np.asarray(y_proba).dtype == np.float32
    eps = float(np.finfo(np.float32 if float32 else np.float64).eps)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim not in (1, 2):
        raise ValueError(
            "y_proba must be 1-D (probability of the positive class) or 2-D "
            f"(n_samples, n_classes); got shape {array.shape}."
        )
    if array.shape[0] == 0:
        raise ValueError("y_proba is empty: at least one sample is required.")
    check_finite(array, name="y_proba")
    if array.max() > 1.0:
        raise ValueError(f"y_proba contains values greater than 1: {array.max()!r}.")
    if array.min() < 0.0:
        raise ValueError(f"y_proba contains values lower than 0: {array.min()!r}.")
    if array.ndim == 2:
        row_sums = array.sum(axis=1)
        if np.max(np.abs(row_sums - 1.0)) > np.sqrt(eps):
            warn(
                "The y_prob values do not sum to one. Make sure to pass probabilities.",
                UserWarning,
            )
    return array, eps


def _sorted_labels(labels: Any) -> tuple[np.ndarray, np.ndarray]:
    """``labels`` sorted as the columns of ``y_proba`` (scikit-learn), and the order."""
    classes = check_labels(labels)
    order = np.argsort(classes, kind="stable")
    if np.any(order != np.arange(classes.size)):
        warn(
            f"Labels passed were {classes.tolist()}. But this function assumes "
            "labels are ordered lexicographically. Pass the ordered "
            f"labels={classes[order].tolist()} and ensure that the columns of "
            "y_prob correspond to this ordering. transition_matrix stays in the "
            "order of `labels`, not sorted.",
            UserWarning,
        )
    return classes[order], order


def _class_index(y_true: np.ndarray, classes: np.ndarray | None) -> tuple:
    """Positions of ``y_true`` in ``classes`` (default: its sorted classes), read
    a chunk at a time as ``index[rows]``; and the classes."""
    if classes is None:
        encoded = encode_labels(y_true, y_true, None)
        return encoded, encoded.classes
    index, _, classes = check_classification_labels(y_true, y_true, labels=classes)
    return index, classes


def _classes_of(y_true: np.ndarray, labels: Any) -> tuple:
    """``(index, classes, order)``: ``y_true``'s positions in the sorted ``labels``.

    ``order`` sorts ``labels``; one class is an error, as in scikit-learn.
    """
    classes, order = (None, None) if labels is None else _sorted_labels(labels)
    index, classes = _class_index(y_true, classes)
    order = np.arange(classes.size) if order is None else order
    if classes.size == 1:
        raise ValueError(
            f"y_true contains only one label ({classes[0]!r}). Please provide "
            "the list of all expected class labels explicitly through the "
            "labels argument."
        )
    return index, classes, order


def _binary_pos_label(classes: np.ndarray, pos_label: Any) -> Any:
    """scikit-learn's default positive class for a 1-D ``y_proba`` (Brier)."""
    if pos_label is not None:
        return pos_label
    if classes.dtype.kind in "OUS":
        raise ValueError(
            f"y_true takes value in {classes.tolist()} and pos_label is not "
            "specified: either make y_true take value in {0, 1} or {-1, 1} or "
            "pass pos_label explicitly."
        )
    values = set(classes.tolist())
    if values <= {0, 1} or values <= {-1, 1}:
        return 1
    return classes[-1]


def _binary_problem(
    y_true: np.ndarray,
    *,
    pos_label_rules: bool,
    labels: Any,
    pos_label: Any,
    need_pair: bool,
) -> tuple[np.ndarray, np.ndarray | None]:
    """The positive indicator (0/1) of a binary problem with a 1-D ``y_proba``.

    With ``need_pair``, also the indices of ``[negative, positive]`` in
    ``labels``. ``pos_label_rules``: ``y_proba`` is that of ``pos_label``
    (Brier), else of the greater class (log-loss), as in scikit-learn.
    """
    if not pos_label_rules:
        _, classes, order = _classes_of(y_true, labels)
        if classes.size != 2:
            raise ValueError(
                "y_proba is 1-D (a binary problem) but there are "
                f"{classes.size} classes: {classes.tolist()}. Pass a 2-D y_proba "
                "with one column per class."
            )
        indicator = np.asarray(y_true == classes[1]).view(np.int8)
        return indicator, (order if need_pair else None)
    if labels is not None:
        classes = np.asarray(labels)
        if classes.ndim != 1 or classes.size != 2 or np.unique(classes).size != 2:
            raise ValueError(
                "With a 1-D y_proba, labels must list the two classes; got "
                f"{classes.tolist()!r}."
            )
        _class_index(y_true, classes)
    else:
        _, classes = _class_index(y_true, None)
        if classes.size > 2:
            raise ValueError(
                "The type of the target inferred from y_true is multiclass "
                f"({classes.size} classes) but should be binary according to the "
                "shape of y_proba."
            )
    pos_label = _binary_pos_label(np.sort(classes), pos_label)
    indicator = np.asarray(y_true == pos_label).view(np.int8)
    if not need_pair:
        return indicator, None
    if labels is None and not np.any(classes == pos_label):
        classes = np.union1d(classes, np.asarray([pos_label]))
    positive = np.flatnonzero(classes == pos_label)
    if classes.size != 2 or positive.size != 1:
        raise ValueError(
            "transition_matrix needs the two classes of the binary problem: pass "
            "them through `labels` (with pos_label among them); found "
            f"{classes.tolist()!r} for pos_label={pos_label!r}."
        )
    return indicator, np.array([1 - positive[0], positive[0]])
