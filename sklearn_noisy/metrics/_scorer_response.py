"""From a ``predict_proba`` response to the input of a probabilistic metric.

Brier score takes, for a binary problem, the probability of the positive class
(one column); log-loss takes the full matrix with its columns in ``labels``
order. A scorer knows the estimator's ``classes_``; these helpers put the
probabilities and the class options the metric needs together.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["prepare_probabilities"]


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
    metric: str, y_true: Any, y_proba: Any, classes: Any, kwargs: dict[str, Any]
) -> Any:
    """Turn a ``predict_proba`` response into the input of ``metric``.

    Parameters
    ----------
    metric : {"brier_score_loss", "log_loss"}
        The canonical name of the metric.
    y_true : array-like
        Best-known labels, whose classes stand in for missing ``classes``.
    y_proba : array-like or DataFrame
        The probabilities.
    classes : array-like or None
        Class labels in the order of the columns (an estimator's ``classes_``);
        None for the metric's ``labels`` option, if any.
    kwargs : dict
        The metric's keyword arguments, completed in place with ``labels`` (or,
        for a binary Brier score, ``pos_label``).

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
    if metric == "log_loss":
        if classes is not None and "labels" not in kwargs:
            kwargs["labels"] = np.asarray(classes)
        return proba
    # Brier score: the binary metric takes the positive-class column.
    if proba.ndim == 2 and proba.shape[1] == 2:
        return _positive_column(y_true, proba, classes, kwargs)
    if proba.ndim == 2 and classes is not None and "labels" not in kwargs:
        kwargs["labels"] = np.asarray(classes)
    return proba
