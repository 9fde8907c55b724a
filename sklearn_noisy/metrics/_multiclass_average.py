"""Multiclass labels: the micro average exactly, the others by Monte Carlo.

``estimand="forward"``: the micro-averaged precision, recall and F1 all equal
the accuracy, whose moments are exact (user guide: :ref:`formula_accuracy`).
The macro and weighted averages, and multiclass balanced accuracy and MCC, are
computed by :func:`~sklearn_noisy.metrics.monte_carlo_score` around
scikit-learn's metric. ``"truth"`` and ``"remeasurement"`` go through the
confusion matrix (:mod:`._count_estimands`; user guide: :ref:`formula_truth`).
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from typing import Any

import numpy as np
from sklearn.exceptions import UndefinedMetricWarning

from .._noisy_score import NoisyScore
from ..utils._labels import check_classification_labels
from ..utils._noise import FlipNoise
from ._count_estimands import count_estimand_score
from ._monte_carlo import monte_carlo_score

#: The Monte Carlo parameters of the docstrings of the binary count metrics.
_MC_PARAMETERS = """\
    n_draws : int, default=1000
        Monte Carlo redraws, used only where the result is Monte Carlo.
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the Monte Carlo redraws."""


def _quiet(metric: Any, /, **kwargs: Any) -> Any:
    """Wrap a scikit-learn metric so that Monte Carlo draws do not warn."""
    return functools.partial(_call_quietly, metric, kwargs)


def _call_quietly(metric: Any, kwargs: dict, y_true: Any, y_pred: Any) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        warnings.simplefilter("ignore", UserWarning)
        return metric(y_true, y_pred, **kwargs)


def _sklearn_metric(metric: str) -> Any:
    """The scikit-learn counterpart of ``metric``, from its registry record.

    The registry imports the metric functions, so it is read when a score is
    computed, not when this module is imported.
    """
    from ._registry import get_metric_info

    return get_metric_info(metric).sklearn_function


def _micro_average(
    metric: str,
    true_index: np.ndarray,
    pred_index: np.ndarray,
    classes: np.ndarray,
    q: Any,
    transition_matrix: Any,
) -> NoisyScore:
    """The micro average: the accuracy, exactly."""
    n_samples = true_index.size
    noise = FlipNoise.from_params(
        q, transition_matrix, n_samples=n_samples, n_classes=classes.size
    )
    noise.require_two_classes(classes)
    nominal = float(np.mean(true_index == pred_index))
    p_correct = noise.probability(true_index, pred_index, slice(None))
    expected = float(p_correct.mean())
    variance = float((p_correct * (1.0 - p_correct)).sum() / n_samples**2)
    return NoisyScore(metric, expected, variance, nominal, n_samples, "exact")


def _sklearn_options(metric: str, labels: Any, average: str | None) -> dict:
    """The options of the scikit-learn metric that match ours."""
    kwargs: dict[str, Any] = {} if average is None else {"average": average}
    if metric in ("precision", "recall", "f1"):
        kwargs["zero_division"] = 0
        if labels is not None:
            kwargs["labels"] = labels
    return kwargs


def _multiclass_estimand(
    metric: str,
    y_true: Any,
    y_pred: Any,
    *,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    average: str | None,
    estimand: str,
) -> NoisyScore:
    """The truth or remeasurement estimate for multiclass labels.

    Through the confusion matrix of the observed labels
    (:func:`~._count_estimands.count_estimand_score`); ``average=None`` for
    balanced accuracy and MCC.
    """
    true_index, pred_index, classes = check_classification_labels(
        y_true, y_pred, labels=labels
    )
    noise = FlipNoise.from_params(
        q, transition_matrix, n_samples=true_index.size, n_classes=classes.size
    )
    noise.require_two_classes(classes)
    sklearn_metric = _quiet(
        _sklearn_metric(metric), **_sklearn_options(metric, labels, average)
    )
    return count_estimand_score(
        metric,
        true_index,
        pred_index,
        noise,
        estimand=estimand,
        nominal=float(sklearn_metric(y_true, y_pred)),
        average="binary" if average is None else average,
    )


def _multiclass_score(
    metric: str,
    y_true: Any,
    y_pred: Any,
    *,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    average: str | None,
    n_draws: int,
    random_state: Any,
    estimand: str = "forward",
) -> NoisyScore:
    """Micro average: exact (it is the accuracy). Otherwise Monte Carlo.

    The other estimands go through :func:`_multiclass_estimand`.
    """
    if estimand != "forward":
        return _multiclass_estimand(
            metric,
            y_true,
            y_pred,
            q=q,
            transition_matrix=transition_matrix,
            labels=labels,
            average=average,
            estimand=estimand,
        )
    true_index, pred_index, classes = check_classification_labels(
        y_true, y_pred, labels=labels
    )
    if average == "micro":
        return _micro_average(
            metric, true_index, pred_index, classes, q, transition_matrix
        )
    kwargs = _sklearn_options(metric, labels, average)
    score = monte_carlo_score(
        _quiet(_sklearn_metric(metric), **kwargs),
        y_true,
        y_pred,
        q=q,
        transition_matrix=transition_matrix,
        labels=classes if labels is None else labels,
        n_draws=n_draws,
        random_state=random_state,
    )
    return dataclasses.replace(score, metric=metric)
