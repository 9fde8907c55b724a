"""A model's response as a metric takes it, and the metric on it: shared by the
scorers and the paired Monte Carlo, below both."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
from sklearn.exceptions import UndefinedMetricWarning

from .._noisy_score import NoisyScore
from ..utils._sklearn_compat import _num_samples
from ..utils._warnings import warn
from ._registry import MetricInfo


def _scoring_labels(classes: Any, y_true: Any, y_pred: Any) -> np.ndarray:
    """The model's ``classes``, with any other label of the fold appended."""
    known = np.asarray(classes).tolist()
    extra: list = []
    for array in (y_true, y_pred):
        for value in np.unique(np.ravel(array)).tolist():
            if value not in known and value not in extra:
                extra.append(value)
    if not extra:
        return np.asarray(classes)
    try:
        return np.asarray(sorted(known + extra))
    except TypeError:  # labels of types that do not sort together
        return np.asarray(known + extra, dtype=object)


def prepare_response(
    info: MetricInfo, y_true: Any, y_pred: Any, classes: Any, kwargs: dict[str, Any]
) -> Any:
    """A model's response as the metric takes it (a ``predict_proba`` response by
    the record's ``binary_proba``); completes ``kwargs`` with ``labels`` from the
    model's ``classes`` (or ``pos_label``). Shared with the scorers."""
    if info.response_method != "predict_proba":
        takes = "labels" in inspect.signature(info.function).parameters
        if classes is not None and "labels" not in kwargs and takes:
            kwargs["labels"] = _scoring_labels(classes, y_true, y_pred)
        return y_pred
    proba = np.asarray(y_pred)
    if classes is None and kwargs.get("labels") is not None:
        classes = kwargs["labels"]
    binary = proba.ndim == 2 and proba.shape[1] == 2
    if binary and info.binary_proba == "pos_label":  # the pos_label column
        if classes is None:
            classes = np.unique(np.asarray(y_true))
            if classes.size != 2:
                raise ValueError(
                    "y_pred has two probability columns but y_true does not show "
                    "both classes: pass classes (the estimator's classes_)."
                )
        classes = np.asarray(classes).tolist()
        pos_label = kwargs.get("pos_label")
        pos_label = classes[-1] if pos_label is None else pos_label
        if len(classes) != 2 or pos_label not in classes:
            raise ValueError(
                f"y_pred has 2 probability columns: pos_label={pos_label!r} must be "
                f"one of its 2 classes; the classes are {classes}."
            )
        kwargs.pop("labels", None)
        kwargs["pos_label"] = plain_value(pos_label)
        return proba[:, classes.index(pos_label)]
    labelled = {"matrix": True, "pos_label": proba.ndim == 2, "greater_class": binary}
    if labelled[info.binary_proba] and classes is not None and "labels" not in kwargs:
        kwargs["labels"] = np.asarray(classes)
    return proba[:, 1] if binary and info.binary_proba == "greater_class" else proba


def plain_value(value: Any) -> Any:
    """A NumPy array or scalar as Python lists and numbers."""
    return value.tolist() if isinstance(value, (np.ndarray, np.generic)) else value


def metric_score(
    info: MetricInfo,
    y_true: Any,
    y_pred: Any,
    kwargs: dict,
    estimand: str,
    sampling: Any,
) -> NoisyScore:
    """The metric of ``estimand`` on a prepared response (:func:`prepare_response`);
    NaN with a warning below the metric's ``min_samples``, as scikit-learn's
    ``r2_score`` of one sample. Shared with the scorers."""
    n_samples = _num_samples(y_true)
    if n_samples < info.min_samples:
        warn(
            f"{info.display_name} is not defined on fewer than {info.min_samples} "
            f"samples; got {n_samples}: the score is NaN, as scikit-learn's.",
            UndefinedMetricWarning,
        )
        nan = float("nan")
        return NoisyScore(info.name, nan, nan, nan, n_samples, estimand=estimand)
    return info.function(
        y_true, y_pred, **kwargs, estimand=estimand, test_set_sampling=sampling
    )
