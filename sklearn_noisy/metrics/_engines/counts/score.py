"""The one computation path of the count metrics' public functions: checks, then
the binary, multiclass or multilabel engine."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from sklearn.exceptions import UndefinedMetricWarning

from ...._noisy_score import NoisyScore
from ....utils._labels import (
    as_label_array,
    check_classification_labels,
    check_targets,
    class_totals,
    encode_labels,
)
from ....utils._validation import check_positive_int
from ....utils._warnings import warn
from ..._definitions.counts import CountMetric, mirror
from .binary import (
    _METHODS,
    _binary_present_labels,
    binary_score,
    check_zero_division,
)
from .checks import check_option
from .multiclass import (
    multiclass_score,
)
from .multilabel import _as_2d, is_multilabel, multilabel_score

_AVERAGES = ("binary", "micro", "macro", "weighted", "samples", None)

_SAMPLES_ONLY_MULTILABEL = (
    "average='samples' is meaningful only for multilabel targets (one column per "
    "label), as in scikit-learn; these labels are one column."
)


def _check_common(method: Any, n_draws: Any) -> None:
    """``estimand`` is checked by the public function (all three are offered)."""
    check_option(method, _METHODS, name="method")
    check_positive_int(n_draws, name="n_draws", minimum=2)


def _without_zero_weights(y_true: Any, y_pred: Any, options: dict) -> Any:
    """``(y_true, y_pred, options)`` of the samples of positive weight, ``labels``
    fixed to scikit-learn's classes of all samples; None when no weight is 0."""
    weight = options["sample_weight"]
    if weight is None:
        return None
    weight = np.asarray(weight)
    if weight.ndim != 1 or weight.dtype.kind not in "biuf" or np.all(weight != 0):
        return None
    if not np.any(weight != 0):
        return None  # all zero: the weights' own check names the problem
    keep = weight != 0
    y_true = as_label_array(y_true, name="y_true")
    y_pred = as_label_array(y_pred, name="y_pred")
    if y_true.shape != keep.shape or y_pred.shape != keep.shape:
        return None  # the usual checks will name the problem
    kept = {"sample_weight": weight[keep]}
    if options["labels"] is None:
        kept["labels"] = check_classification_labels(y_true, y_pred)[2]
    q = options["q"]
    if q is not None and np.ndim(q) == 1 and len(q) == keep.size:
        kept["q"] = np.asarray(q)[keep]
    return y_true[keep], y_pred[keep], {**options, **kept}


def _replaced(score: Any, **changes: Any) -> Any:
    """The score with ``changes`` (functions of it where callable); each score
    of a list (``average=None``)."""
    if isinstance(score, list):
        return [_replaced(s, **changes) for s in score]
    new = {k: v(score) if callable(v) else v for k, v in changes.items()}
    return dataclasses.replace(score, **new)


def _class_score(
    definition: CountMetric, y_true: Any, y_pred: Any, options: dict
) -> NoisyScore | list[NoisyScore]:
    """Check the options and compute the metric of the classes as given: binary
    with ``average="binary"``, or for the metrics not averaged (symmetric in
    the classes) with two classes; else multiclass."""
    metric, averaged, method = definition.name, definition.averaged, options["method"]
    average = options.get("average")
    if averaged and average is not None:
        check_option(average, _AVERAGES[:-1], name="average")
    _check_common(method, options["n_draws"])
    zero_division = options.get("zero_division", 0.0)
    zero = check_zero_division(zero_division)
    parameters = {n: options[n] for n, _ in definition.parameters}
    if averaged:
        if is_multilabel(y_true, y_pred):
            if method == "delta":
                raise ValueError(
                    "method='delta' is not available for multilabel targets, whose "
                    "results are exact (or Monte Carlo, see the result's method)."
                )
            return multilabel_score(metric, y_true, y_pred, options, zero)
        if average == "samples":
            raise ValueError(_SAMPLES_ONLY_MULTILABEL)
        binary, pos_label = average == "binary", options["pos_label"]
    else:
        if definition.check_parameters is not None:
            definition.check_parameters(**parameters)
        adjusted = options.get("adjusted", False)
        if not isinstance(adjusted, (bool, np.bool_)):
            raise ValueError(f"adjusted must be True or False; got {adjusted!r}.")
        classes = _binary_present_labels(y_true, y_pred, options["labels"])
        binary, average = classes is not None, "macro"
        pos_label = classes[-1] if binary else None
    kept = _without_zero_weights(y_true, y_pred, options)
    if kept is not None:
        score = _class_score(definition, *kept)
        return _replaced(score, n_samples=len(options["sample_weight"]))
    options = {**options, "average": average, "pos_label": pos_label, "zero": zero}
    engine = binary_score if binary else multiclass_score
    return engine(definition, y_true, y_pred, options)


# ----------------------------------------------------- the one entry point
def count_score(
    definition: CountMetric, y_true: Any, y_pred: Any, options: dict
) -> NoisyScore | list[NoisyScore]:
    """The body of a count metric's public function; ``options`` all its options."""
    if definition.complement:  # 1 − specificity, 1 − recall
        if not definition.negative:
            _check_average(options["average"], y_true, y_pred, weighted_multilabel=True)
        base = mirror(definition, negative=definition.negative)
        return _replaced(  # the same variance; no exact distribution is kept
            count_score(base, y_true, y_pred, options),
            metric=definition.name,
            expected=lambda s: 1.0 - s.expected,
            nominal=lambda s: 1.0 - s.nominal,
            distribution=None,
            label_pivot=lambda s: _mirrored(s.label_pivot),
        )
    if definition.negative:  # recall or precision of the negative class
        return _negative_class_score(definition, y_true, y_pred, options)
    y_true, y_pred = check_targets(y_true, y_pred)
    score = _class_score(definition, y_true, y_pred, options)
    if definition.averaged:
        _warn_zero_division(definition, score, y_true, y_pred, **options)
    elif definition.present_classes:
        _warn_unseen_classes(y_true, y_pred, options["sample_weight"])
    return score


def _mirrored(pivot: Any) -> Any:
    """The label pivot of ``1 − T``: the quantiles of ``(T − θ)/ŝ`` negated, in
    reverse order (the probabilities are symmetric)."""
    return None if pivot is None else type(pivot)(-v for v in reversed(pivot))


# ------------------------------------------------------------------- rates
def _negative_label(y_true: Any, y_pred: Any, labels: Any, pos_label: Any) -> Any:
    """The other class of a binary problem: the one that is not ``pos_label``."""
    if labels is not None:
        classes = np.asarray(labels).tolist()
    else:  # the one label encoder (integer labels without a sort or a copy)
        classes = encode_labels(y_true, y_pred, None).classes.tolist()
    others = [c for c in classes if c != pos_label]
    if len(others) != 1 or len(classes) > 2:
        raise ValueError(
            "average='binary' needs a binary problem: two classes, one of them "
            f"pos_label={pos_label!r}; found {classes[:5]}. Pass "
            "labels=[negative, positive] when y_true and y_pred show one class, "
            "or choose average=None, 'micro', 'macro' or 'weighted' (each class "
            "against the rest)."
        )
    return others[0]


def _check_average(
    average: Any, y_true: Any, y_pred: Any, *, weighted_multilabel: bool = False
) -> bool:
    """Check a rate's ``average`` (``"weighted"`` offered for multilabel targets
    with ``weighted_multilabel``); whether the targets are multilabel."""
    if average is not None:
        check_option(average, _AVERAGES[:-1], name="average")
    if is_multilabel(y_true, y_pred):
        if average == "weighted" and not weighted_multilabel:
            raise ValueError(
                "average='weighted' is not offered for the specificity and the "
                "negative predictive value of multilabel targets (each label "
                "would be weighted by its positives, a random total under the "
                "flips); choose average=None, 'micro', 'macro' or 'samples'."
            )
        return True
    if average == "samples":
        raise ValueError(_SAMPLES_ONLY_MULTILABEL)
    return False


def _swap_indicator(y: Any) -> Any:
    """``1 − y`` of a multilabel indicator matrix (anything else as it is)."""
    array = _as_2d(y)
    return y if array is None else 1 - array


def _negative_class_score(
    definition: CountMetric, y_true: Any, y_pred: Any, options: dict
) -> NoisyScore | list[NoisyScore]:
    """Specificity or NPV: recall or precision of the negative class (multilabel:
    of ``1 − y``; other averages than "binary": each class against the rest)."""
    name, average = definition.name, options["average"]
    positive = mirror(definition, negative=False)
    if _check_average(average, y_true, y_pred):
        swapped = (_swap_indicator(y_true), _swap_indicator(y_pred))
        matrix = options["transition_matrix"]
        if matrix is not None and np.ndim(matrix) == 2:
            matrix = np.asarray(matrix)[::-1, ::-1]
        options = {**options, "transition_matrix": matrix}
        return _replaced(count_score(positive, *swapped, options), metric=name)
    if average != "binary":
        _check_common(options["method"], options["n_draws"])
        zero = check_zero_division(options["zero_division"])
        return multiclass_score(definition, y_true, y_pred, {**options, "zero": zero})
    negative = _negative_label(y_true, y_pred, options["labels"], options["pos_label"])
    score = count_score(positive, y_true, y_pred, {**options, "pos_label": negative})
    return _replaced(score, metric=name)


# ---------------------------------------------------------------- warnings
def _warn_zero_division(
    definition: CountMetric,
    score: Any,
    y_true: Any,
    y_pred: Any,
    *,
    labels: Any,
    pos_label: Any,
    average: Any,
    sample_weight: Any,
    zero_division: Any,
    **_: Any,
) -> None:
    """scikit-learn's ``UndefinedMetricWarning`` for a nominal ratio 0/0 with
    ``zero_division="warn"`` (such a ratio is 0: the counts are looked at only
    when a value is 0 or the score is an average)."""
    if not isinstance(zero_division, str) or zero_division != "warn":
        return
    values = [s.nominal for s in score] if isinstance(score, list) else [score.nominal]
    if average in ("binary", "micro", None) and all(v != 0 for v in values):
        return
    ratio = definition.ratio
    if ratio.true and ratio.predicted and labels is None and sample_weight is None:
        if average not in ("binary", "samples") and np.ndim(y_true) == 1:
            return  # every class present is in y_true or y_pred: d_k > 0
    true_sum, pred_sum = _prf_totals(
        _dense(y_true), _dense(y_pred), labels, pos_label, average, sample_weight
    )
    denominator = ratio.denominator(true_sum, pred_sum)
    if not np.any(denominator == 0):
        return
    start, modifier = definition.ill_defined
    axis0, axis1 = ("label", "sample") if average == "samples" else ("sample", "label")
    where = "due to" if denominator.size == 1 else f"in {axis1}s with"
    warn(
        f"{start} ill-defined and being set to 0.0 {where} no {modifier} "
        f"{axis0}s. Use `zero_division` parameter to control this behavior.",
        UndefinedMetricWarning,
    )


def _dense(y: Any) -> np.ndarray:
    """A label array, a sparse indicator matrix made dense."""
    return np.asarray(y.toarray() if hasattr(y, "toarray") else y)


def _prf_totals(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    labels: Any,
    pos_label: Any,
    average: Any,
    sample_weight: Any,
) -> tuple[np.ndarray, np.ndarray]:
    """The true and predicted (weighted) counts that scikit-learn divides by."""
    weight = None if sample_weight is None else np.asarray(sample_weight, float)
    if y_true.ndim == 2 and y_true.shape[1] > 1:  # multilabel indicators
        columns = slice(None) if labels is None else np.asarray(labels)
        true, pred = y_true[:, columns], y_pred[:, columns]
        if average == "samples":
            true_sum, pred_sum = true.sum(axis=1), pred.sum(axis=1)
        elif weight is None:
            true_sum, pred_sum = true.sum(axis=0), pred.sum(axis=0)
        else:
            true_sum, pred_sum = weight @ true, weight @ pred
    else:
        labels = [pos_label] if average == "binary" else labels
        y_true, y_pred = y_true.reshape(-1), y_pred.reshape(-1)
        _, true_sum, pred_sum = class_totals(y_true, y_pred, labels, weight)
    if average == "micro":
        return np.sum(true_sum, keepdims=True), np.sum(pred_sum, keepdims=True)
    return np.asarray(true_sum, float), np.asarray(pred_sum, float)


def _warn_unseen_classes(y_true: Any, y_pred: Any, sample_weight: Any) -> None:
    """scikit-learn's warning of balanced accuracy: a class absent from ``y_true``."""
    weight = None if sample_weight is None else np.asarray(sample_weight, float)
    y_true, y_pred = np.asarray(y_true).reshape(-1), np.asarray(y_pred).reshape(-1)
    if np.any(class_totals(y_true, y_pred, None, weight, count_pred=False)[1] == 0):
        warn("y_pred contains classes not in y_true")
