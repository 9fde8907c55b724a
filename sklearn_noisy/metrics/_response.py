"""A model's response as a metric takes it, and the metric on it: shared by the
scorers and the paired Monte Carlo, below both."""

from __future__ import annotations

import inspect
from functools import partial
from typing import Any

import numpy as np
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.utils.multiclass import type_of_target

from .._noisy_score import NoisyScore
from ..utils._sklearn_compat import _cached_call, _num_samples
from ..utils._warnings import warn
from ._registry import MetricInfo

#: Key of the full ``predict_proba`` matrix in scikit-learn's scoring cache, which
#: keeps a binary problem's positive-class column only under ``"predict_proba"``.
_FULL_PROBA_KEY = ("sklearn_noisy", "predict_proba")


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


def cached_response(method_caller: Any, estimator: Any, method: str, X: Any) -> Any:
    """``estimator.<method>(X)``, once per fold of scikit-learn's multimetric
    scoring (the full ``predict_proba`` matrix under a key of its own)."""
    if method == "predict" and method_caller is not None:
        return method_caller(estimator, "predict", X, pos_label=None)
    cache = None
    if isinstance(method_caller, partial) and method_caller.func is _cached_call:
        cache = method_caller.args[0] if method_caller.args else None
    if not isinstance(cache, dict):
        return getattr(estimator, method)(X)
    classes = getattr(estimator, "classes_", None)
    # scikit-learn's cache holds a multiclass problem's matrix as it is: shared
    key = _FULL_PROBA_KEY
    if classes is not None and type_of_target(classes) != "binary":
        key = method
    if key not in cache:
        cache[key] = getattr(estimator, method)(X)
    return cache[key]
