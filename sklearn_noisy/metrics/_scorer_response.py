"""The response a scorer scores, and the class options the metric needs with it.

A scorer gets its response from the estimator once per fold: scikit-learn's
multimetric scoring hands every scorer a caching ``method_caller``
(:func:`cached_response` shares it). What a metric takes of a binary problem's
two probability columns is its registry record's ``binary_proba``: the full
matrix with its columns in ``labels`` order (log-loss), the ``pos_label`` column
(Brier score) or the greater class's (ROC AUC). A scorer knows the estimator's
``classes_``: :func:`prepare_probabilities` puts the probabilities and the
class options together, and :func:`scoring_labels` gives the metrics on
predictions the classes the labels can flip between, those of the fitted
model rather than only those a fold happens to hold.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
from sklearn.utils.multiclass import type_of_target

from ..utils._sklearn_compat import _cached_call

__all__ = ["cached_response", "prepare_probabilities", "scoring_labels"]

#: Key of the full ``predict_proba`` matrix in scikit-learn's scoring cache.
#: scikit-learn's own scorers keep the positive-class column of a binary
#: problem under ``"predict_proba"``, so the full matrix needs its own key.
_FULL_PROBA_KEY = ("sklearn_noisy", "predict_proba")


def _shared_cache(method_caller: Any) -> dict | None:
    """The response cache of scikit-learn's multimetric scoring, if any."""
    if (
        isinstance(method_caller, partial)
        and method_caller.func is _cached_call
        and method_caller.args
        and isinstance(method_caller.args[0], dict)
    ):
        return method_caller.args[0]
    return None


def cached_response(method_caller: Any, estimator: Any, method: str, X: Any) -> Any:
    """``estimator.<method>(X)``, computed once per multimetric scoring call.

    ``method_caller`` is the caller scikit-learn's ``_MultimetricScorer`` passes
    to each scorer (a cache shared by all scorers of one fold), or None for a
    direct call. ``predict`` goes through it as for scikit-learn's own scorers,
    so their predictions and ours are computed once; the full ``predict_proba``
    matrix is kept under a key of its own, and shared with scikit-learn's
    scorers where theirs is the same matrix (not a binary problem, for which
    they keep the positive column only: there each side calls it once).
    """
    if method_caller is None:
        return getattr(estimator, method)(X)
    if method == "predict":
        return method_caller(estimator, "predict", X, pos_label=None)
    cache = _shared_cache(method_caller)
    if cache is None:
        return getattr(estimator, method)(X)
    if _FULL_PROBA_KEY not in cache:
        # scikit-learn keeps a binary problem's positive column only, and
        # other problems' matrices as they are: those it can share.
        classes = getattr(estimator, "classes_", None)
        as_is = classes is not None and type_of_target(classes) != "binary"
        if as_is and method in cache:
            cache[_FULL_PROBA_KEY] = cache[method]
        else:
            cache[_FULL_PROBA_KEY] = getattr(estimator, method)(X)
            if as_is:
                cache[method] = cache[_FULL_PROBA_KEY]
    return cache[_FULL_PROBA_KEY]


def _unique_values(*arrays: Any) -> list:
    """The distinct values of label arrays, as Python objects."""
    values: list = []
    for array in arrays:
        if hasattr(array, "to_numpy") and not isinstance(array, np.ndarray):
            array = array.to_numpy()
        for value in np.unique(np.asarray(array).ravel()).tolist():
            if value not in values:
                values.append(value)
    return values


def scoring_labels(classes: Any, y_true: Any, y_pred: Any) -> np.ndarray:
    """The classes a metric on predictions is computed over.

    The fitted model's ``classes`` (its ``classes_``): a fold that holds only
    some of them is still a problem over all of them, and a label flips to any
    of them. Labels of ``y_true`` or ``y_pred`` that ``classes`` lacks (a class
    unseen in training) are appended, so that the metric accepts the fold.
    """
    classes = np.asarray(classes)
    known = classes.tolist()
    extra = [v for v in _unique_values(y_true, y_pred) if v not in known]
    if not extra:
        return classes
    try:
        return np.asarray(sorted(known + extra))
    except TypeError:  # labels of types that do not sort together
        return np.asarray(known + extra, dtype=object)


def _positive_column(
    y_true: Any, proba: np.ndarray, classes: Any, kwargs: dict[str, Any]
) -> np.ndarray:
    """The positive-class column of two probability columns, for Brier score.

    Sets ``kwargs["pos_label"]`` and drops ``kwargs["labels"]``.
    """
    if classes is None:
        classes = np.unique(np.asarray(y_true))
        if classes.size != 2:
            raise ValueError(
                "y_pred has two probability columns but y_true does not show "
                "both classes: pass classes (the estimator's classes_)."
            )
    classes = np.asarray(classes)
    if classes.size != 2:
        raise ValueError(
            f"y_pred has 2 probability columns but classes has {classes.size} entries."
        )
    pos_label = kwargs.get("pos_label")
    if pos_label is None:
        pos_label = classes[-1]
    matches = [i for i, c in enumerate(classes.tolist()) if c == pos_label]
    if not matches:
        raise ValueError(
            f"pos_label={pos_label!r} is not one of the classes {classes.tolist()}."
        )
    position = matches[0]
    kwargs.pop("labels", None)
    kwargs["pos_label"] = (
        pos_label.item() if isinstance(pos_label, np.generic) else pos_label
    )
    return proba[:, position]


def prepare_probabilities(
    binary_proba: str, y_true: Any, y_proba: Any, classes: Any, kwargs: dict[str, Any]
) -> Any:
    """Turn a ``predict_proba`` response into the input of a metric.

    Parameters
    ----------
    binary_proba : {"matrix", "pos_label", "greater_class"}
        The metric's registry field of that name: what the two columns of a
        binary problem become (the matrix, the ``pos_label`` column or the
        greater class's column).
    y_true : array-like
        Best-known labels, whose classes stand in for missing ``classes``.
    y_proba : array-like or DataFrame
        The probabilities.
    classes : array-like or None
        Class labels in the order of the columns (an estimator's ``classes_``);
        None for the metric's ``labels`` option, if any.
    kwargs : dict
        The metric's keyword arguments, completed in place with ``labels`` (or,
        for ``"pos_label"`` on a binary problem, ``pos_label``).

    Returns
    -------
    y_proba : ndarray
        The probabilities the metric takes.
    """
    proba = y_proba
    if hasattr(proba, "to_numpy") and not isinstance(proba, np.ndarray):
        proba = proba.to_numpy()
    proba = np.asarray(proba)
    if classes is None and kwargs.get("labels") is not None:
        classes = kwargs["labels"]
    binary = proba.ndim == 2 and proba.shape[1] == 2
    if binary and binary_proba == "pos_label":
        return _positive_column(y_true, proba, classes, kwargs)
    labelled = {
        "matrix": True,
        "pos_label": proba.ndim == 2,
        "greater_class": binary,
    }[binary_proba]
    if labelled and classes is not None and "labels" not in kwargs:
        kwargs["labels"] = np.asarray(classes)
    return proba[:, 1] if binary and binary_proba == "greater_class" else proba
