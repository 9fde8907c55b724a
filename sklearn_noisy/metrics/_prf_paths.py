"""The computation paths of precision, recall, F1, balanced accuracy and MCC.

:mod:`._precision_recall` holds the public functions; here their options are
checked and each call is sent to the binary path (:mod:`._binary_average`) or
the multiclass one (:mod:`._multiclass_average`). Samples of weight 0 are
left out first (they enter no count), so that the remaining weights are often
all equal and the exact algorithm applies.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .._noisy_score import NoisyScore
from ..utils._labels import as_label_array, check_classification_labels
from ..utils._validation import check_estimand
from ._binary_average import (
    _METHODS,
    _binary_estimand,
    _binary_present_labels,
    _binary_problem,
    _binary_score,
    _check_option,
    check_zero_division,
)
from ._count_definitions import COUNT_METRICS
from ._multiclass_average import (
    _multiclass_score,
    adjust_balanced_accuracy,
    is_identity,
    sklearn_value,
)
from ._prf_multilabel import is_multilabel, multilabel_score

#: The estimands of the five metrics.
_ESTIMANDS = ("forward", "truth", "remeasurement")

_AVERAGES = ("binary", "micro", "macro", "weighted", "samples", None)


def _check_common(metric: str, method: Any, estimand: Any, n_draws: Any) -> None:
    _check_option(method, _METHODS, name="method")
    check_estimand(estimand, metric=metric, supported=_ESTIMANDS)
    if (
        isinstance(n_draws, bool)
        or not isinstance(n_draws, (int, np.integer))
        or (n_draws < 2)
    ):
        raise ValueError(f"n_draws must be an integer >= 2; got {n_draws!r}.")


def _without_zero_weights(y_true: Any, y_pred: Any, noise: dict, weight: Any) -> Any:
    """The samples of positive weight (they alone enter every count).

    Returns ``(y_true, y_pred, noise, weight)`` restricted to them, with
    ``labels`` fixed to the classes of all samples so that the set of classes
    stays scikit-learn's; None when no weight is 0.
    """
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
    noise = dict(noise)
    if noise["labels"] is None:
        _, _, noise["labels"] = check_classification_labels(y_true, y_pred)
    q = noise["q"]
    if q is not None and np.ndim(q) == 1 and len(q) == keep.size:
        noise["q"] = np.asarray(q)[keep]
    return y_true[keep], y_pred[keep], noise, weight[keep]


def _count_all_samples(score: Any, n_samples: int) -> Any:
    if isinstance(score, list):
        return [_count_all_samples(s, n_samples) for s in score]
    return dataclasses.replace(score, n_samples=n_samples)


def _binary_path(
    metric: str,
    y_true: Any,
    y_pred: Any,
    *,
    noise: dict,
    pos_label: Any,
    sample_weight: Any,
    zero_division: Any,
    adjusted: bool,
    method: str,
    estimand: str,
    mc: dict,
) -> NoisyScore:
    """Binary labels (and balanced accuracy and MCC on two classes)."""
    zero = check_zero_division(zero_division)
    kept = _without_zero_weights(y_true, y_pred, noise, sample_weight)
    if kept is not None:
        score = _binary_path(
            metric,
            *kept[:2],
            noise=kept[2],
            pos_label=pos_label,
            sample_weight=kept[3],
            zero_division=zero_division,
            adjusted=adjusted,
            method=method,
            estimand=estimand,
            mc=mc,
        )
        return _count_all_samples(score, len(sample_weight))
    problem = _binary_problem(
        y_true, y_pred, pos_label=pos_label, sample_weight=sample_weight, **noise
    )
    if sample_weight is None:
        nominal = problem.nominal(metric, zero_division=zero, adjusted=adjusted)
    else:
        definition = COUNT_METRICS[metric]
        kwargs: dict[str, Any] = {"sample_weight": sample_weight}
        kwargs.update(definition.sklearn_options(adjusted=adjusted))
        if definition.averaged:
            kwargs.update(pos_label=pos_label, zero_division=zero_division)
        nominal = float(sklearn_value(metric, y_true, y_pred, **kwargs))
    m = problem.n_samples
    if estimand != "forward":
        score = _binary_estimand(
            metric, problem, estimand, nominal=nominal, zero_division=zero
        )
        return adjust_balanced_accuracy(score, 2, adjusted)
    if is_identity(problem.noise):
        return NoisyScore(metric, nominal, 0.0, nominal, m, "exact")
    return _binary_score(
        metric,
        problem,
        method,
        nominal=nominal,
        zero_division=zero,
        adjusted=adjusted,
        mc=mc,
    )


def _prf_score(
    metric: str,
    y_true: Any,
    y_pred: Any,
    *,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    pos_label: Any,
    average: Any,
    sample_weight: Any,
    zero_division: Any,
    method: Any,
    estimand: Any,
    n_draws: int,
    random_state: Any,
) -> NoisyScore | list[NoisyScore]:
    """Check the options and compute precision, recall or F1 by the right path."""
    if average is not None:
        _check_option(average, _AVERAGES[:-1], name="average")
    _check_common(metric, method, estimand, n_draws)
    zero = check_zero_division(zero_division)
    noise = {"q": q, "transition_matrix": transition_matrix, "labels": labels}
    mc = {"n_draws": n_draws, "random_state": random_state}
    if is_multilabel(y_true, y_pred):
        if method == "delta":
            raise ValueError(
                "method='delta' is not available for multilabel targets, whose "
                "results are exact (or Monte Carlo, see the result's method)."
            )
        options = {"average": average, "sample_weight": sample_weight}
        options.update(zero_division=zero_division, zero_value=zero)
        return multilabel_score(
            metric, y_true, y_pred, **noise, **options, estimand=estimand, mc=mc
        )
    if average == "samples":
        raise ValueError(
            "average='samples' is meaningful only for multilabel targets (one "
            "column per label), as in scikit-learn; these labels are one column."
        )
    kept = _without_zero_weights(y_true, y_pred, noise, sample_weight)
    if kept is not None and average != "binary":
        y_true, y_pred, noise, weight = kept
        score = _prf_score(
            metric,
            y_true,
            y_pred,
            **noise,
            pos_label=pos_label,
            average=average,
            sample_weight=weight,
            zero_division=zero_division,
            method=method,
            estimand=estimand,
            **mc,
        )
        return _count_all_samples(score, len(sample_weight))
    if average != "binary":
        if method == "delta":
            raise ValueError(
                "method='delta' is available for average='binary' only; with "
                f"average={average!r} the expectation is exact and the variance "
                "exact or Monte Carlo (see the result's method)."
            )
        return _multiclass_score(
            metric,
            y_true,
            y_pred,
            **noise,
            average=average,
            sample_weight=sample_weight,
            zero_division=zero_division,
            zero_value=zero,
            estimand=estimand,
            **mc,
        )
    return _binary_path(
        metric,
        y_true,
        y_pred,
        noise=noise,
        pos_label=pos_label,
        sample_weight=sample_weight,
        zero_division=zero_division,
        adjusted=False,
        method=method,
        estimand=estimand,
        mc=mc,
    )


def _ba_mcc_score(
    metric: str,
    y_true: Any,
    y_pred: Any,
    *,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    sample_weight: Any,
    adjusted: bool,
    method: Any,
    estimand: Any,
    n_draws: int,
    random_state: Any,
    parameters: dict | None = None,
) -> NoisyScore:
    """Check the options; binary labels are exact, multiclass see the module.

    ``parameters``: the definition's own options (checked by it), which the
    multiclass engines take; the binary forms are those of two classes.
    """
    _check_common(metric, method, estimand, n_draws)
    definition = COUNT_METRICS[metric]
    parameters = {
        name: (parameters or {}).get(name, default)
        for name, default in definition.parameters
    }
    if definition.check_parameters is not None:
        definition.check_parameters(**parameters)
    if not isinstance(adjusted, (bool, np.bool_)):
        raise ValueError(f"adjusted must be True or False; got {adjusted!r}.")
    mc = {"n_draws": n_draws, "random_state": random_state}
    classes = _binary_present_labels(y_true, y_pred, labels)
    noise = {"q": q, "transition_matrix": transition_matrix, "labels": labels}
    kept = _without_zero_weights(y_true, y_pred, noise, sample_weight)
    if kept is not None and classes is None:
        y_true, y_pred, noise, weight = kept
        score = _ba_mcc_score(
            metric,
            y_true,
            y_pred,
            **noise,
            sample_weight=weight,
            adjusted=adjusted,
            method=method,
            estimand=estimand,
            **mc,
            parameters=parameters,
        )
        return _count_all_samples(score, len(sample_weight))
    if classes is None:
        if method == "delta":
            raise ValueError(
                "method='delta' is available for binary labels only; multiclass "
                f"{metric} has an exact expectation where it is an average of "
                "classes, and is Monte Carlo otherwise."
            )
        return _multiclass_score(
            metric,
            y_true,
            y_pred,
            q=q,
            transition_matrix=transition_matrix,
            labels=labels,
            average="macro",
            sample_weight=sample_weight,
            adjusted=bool(adjusted),
            estimand=estimand,
            **mc,
            parameters=parameters,
        )
    # Balanced accuracy and MCC are symmetric in the two classes: any of them
    # can play the positive one.
    return _binary_path(
        metric,
        y_true,
        y_pred,
        noise={"q": q, "transition_matrix": transition_matrix, "labels": labels},
        pos_label=classes[-1],
        sample_weight=sample_weight,
        zero_division=0.0,
        adjusted=bool(adjusted),
        method=method,
        estimand=estimand,
        mc=mc,
    )
