"""Specificity, false positive and false negative rates, negative predictive value.

The rates of the binary confusion matrix that scikit-learn has no function for,
under label flips, through the exact machinery of precision and recall:

* specificity (TNR) ``TN / (TN + FP)`` is the recall of the negative class;
* the negative predictive value ``TN / (TN + FN)`` is its precision;
* the false positive rate is ``1 − specificity`` and the false negative rate
  ``1 − recall``: the same variance, the expectation and nominal value mirrored.

Each takes the options of :func:`expected_recall_score` (``pos_label``,
``labels``, ``sample_weight``, ``zero_division``, ``method``, ``estimand``) for
a binary problem (``average="binary"``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from sklearn.metrics import precision_score, recall_score

from .._noisy_score import NoisyScore
from ..utils._docstring import fill_doc
from ..utils._labels import encode_labels
from ..utils._validation import supports_estimands
from ._precision_recall import expected_precision_score, expected_recall_score
from ._sampling import with_test_set_sampling

__all__ = [
    "expected_false_negative_rate",
    "expected_false_positive_rate",
    "expected_negative_predictive_value",
    "expected_specificity_score",
    "false_negative_rate",
    "false_positive_rate",
    "negative_predictive_value",
    "specificity_score",
]


def _negative_label(y_true: Any, y_pred: Any, labels: Any, pos_label: Any) -> Any:
    """The other class of a binary problem: the one that is not ``pos_label``."""
    if labels is not None:
        classes = np.asarray(labels).tolist()
    else:  # the one label encoder (integer labels without a sort or a copy)
        classes = encode_labels(y_true, y_pred, None).classes.tolist()
    others = [c for c in classes if c != pos_label]
    if len(others) != 1 or len(classes) > 2:
        raise ValueError(
            "The rates of the negative class need a binary problem: two classes, "
            f"one of them pos_label={pos_label!r}; found {classes[:5]}. Pass "
            "labels=[negative, positive] when y_true and y_pred show one class."
        )
    return others[0]


def _check_average(average: Any) -> None:
    if average != "binary":
        raise ValueError(
            "average must be 'binary': specificity, the false positive and false "
            "negative rates and the negative predictive value are defined here for "
            f"a binary problem (its pos_label); got {average!r}."
        )


def _negative_class_score(
    function: Any, name: str, y_true: Any, y_pred: Any, kwargs: dict
) -> NoisyScore:
    """``function`` (recall or precision) of the negative class, renamed."""
    _check_average(kwargs.pop("average", "binary"))
    pos_label = kwargs.pop("pos_label", 1)
    negative = _negative_label(y_true, y_pred, kwargs.get("labels"), pos_label)
    score = function(y_true, y_pred, pos_label=negative, **kwargs)
    return dataclasses.replace(score, metric=name)


def _complement(score: NoisyScore, name: str) -> NoisyScore:
    """``1 − score``: the same variance; no exact distribution is kept."""
    return dataclasses.replace(
        score,
        metric=name,
        expected=1.0 - score.expected,
        nominal=1.0 - score.nominal,
        distribution=None,
    )


_PARAMETERS_DOC = """\
    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Reference labels (``estimand="forward"``) or observed labels (``"truth"``,
        ``"remeasurement"``), two classes.
    y_pred : array-like of shape (n_samples,)
        Predicted labels, held fixed.
    q, transition_matrix, labels, pos_label, sample_weight, zero_division, \
method, estimand, n_draws, random_state
        As in :func:`expected_recall_score` (exactly one of ``q`` and
        ``transition_matrix``; ``pos_label`` names the positive class, the
        other one is the negative class).
    average : {"binary"}, default="binary"
        Only the binary problem is offered.

    Returns
    -------
    NoisyScore
        ``nominal`` is the rate on ``y_true`` (the function of the same name
        without ``expected_``).
"""


@with_test_set_sampling(label_arguments=("y_true", "y_pred"))
@fill_doc(parameters=_PARAMETERS_DOC)
@supports_estimands("forward", "truth", "remeasurement")
def expected_specificity_score(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    pos_label: Any = 1,
    average: str = "binary",
    sample_weight: Any = None,
    zero_division: Any = "warn",
    method: str = "exact",
    estimand: str = "forward",
    n_draws: int = 1000,
    random_state: Any = 0,
) -> NoisyScore:
    """Expected specificity (true negative rate), and its variance, under flips.

    ``TN / (TN + FP)``, the recall of the negative class: exact by the recall's
    algorithm (user guide: :ref:`rates`).

    {parameters}
    """
    kwargs = dict(
        q=q, transition_matrix=transition_matrix, labels=labels,
        pos_label=pos_label, average=average, sample_weight=sample_weight,
        zero_division=zero_division, method=method, estimand=estimand,
        n_draws=n_draws, random_state=random_state,
    )  # fmt: skip
    return _negative_class_score(
        expected_recall_score, "specificity", y_true, y_pred, kwargs
    )


@with_test_set_sampling(label_arguments=("y_true", "y_pred"))
@fill_doc(parameters=_PARAMETERS_DOC)
@supports_estimands("forward", "truth", "remeasurement")
def expected_negative_predictive_value(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    pos_label: Any = 1,
    average: str = "binary",
    sample_weight: Any = None,
    zero_division: Any = "warn",
    method: str = "exact",
    estimand: str = "forward",
    n_draws: int = 1000,
    random_state: Any = 0,
) -> NoisyScore:
    """Expected negative predictive value, and its variance, under flips.

    ``TN / (TN + FN)``, the precision of the negative class: the predicted
    negatives are fixed, so it is a mean of per-sample terms with a closed form
    (user guide: :ref:`rates`).

    {parameters}
    """
    kwargs = dict(
        q=q, transition_matrix=transition_matrix, labels=labels,
        pos_label=pos_label, average=average, sample_weight=sample_weight,
        zero_division=zero_division, method=method, estimand=estimand,
        n_draws=n_draws, random_state=random_state,
    )  # fmt: skip
    return _negative_class_score(
        expected_precision_score, "negative_predictive_value", y_true, y_pred, kwargs
    )


@with_test_set_sampling(label_arguments=("y_true", "y_pred"))
@fill_doc(parameters=_PARAMETERS_DOC)
@supports_estimands("forward", "truth", "remeasurement")
def expected_false_positive_rate(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    pos_label: Any = 1,
    average: str = "binary",
    sample_weight: Any = None,
    zero_division: Any = "warn",
    method: str = "exact",
    estimand: str = "forward",
    n_draws: int = 1000,
    random_state: Any = 0,
) -> NoisyScore:
    """Expected false positive rate ``FP / (FP + TN)`` = 1 − specificity, under flips.

    The variance is the specificity's (user guide: :ref:`rates`).

    {parameters}
    """
    kwargs = dict(
        q=q, transition_matrix=transition_matrix, labels=labels,
        pos_label=pos_label, average=average, sample_weight=sample_weight,
        zero_division=zero_division, method=method, estimand=estimand,
        n_draws=n_draws, random_state=random_state,
    )  # fmt: skip
    return _complement(
        expected_specificity_score(y_true, y_pred, **kwargs), "false_positive_rate"
    )


@with_test_set_sampling(label_arguments=("y_true", "y_pred"))
@fill_doc(parameters=_PARAMETERS_DOC)
@supports_estimands("forward", "truth", "remeasurement")
def expected_false_negative_rate(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    pos_label: Any = 1,
    average: str = "binary",
    sample_weight: Any = None,
    zero_division: Any = "warn",
    method: str = "exact",
    estimand: str = "forward",
    n_draws: int = 1000,
    random_state: Any = 0,
) -> NoisyScore:
    """Expected false negative rate ``FN / (FN + TP)`` = 1 − recall, under flips.

    The variance is the recall's (user guide: :ref:`rates`).

    {parameters}
    """
    _check_average(average)
    kwargs = dict(
        q=q, transition_matrix=transition_matrix, labels=labels,
        pos_label=pos_label, average=average, sample_weight=sample_weight,
        zero_division=zero_division, method=method, estimand=estimand,
        n_draws=n_draws, random_state=random_state,
    )  # fmt: skip
    score = expected_recall_score(y_true, y_pred, **kwargs)
    return _complement(score, "false_negative_rate")


# ------------------------------------------------------------- nominal rates
def specificity_score(
    y_true: Any, y_pred: Any, *, pos_label: Any = 1, labels: Any = None,
    sample_weight: Any = None, zero_division: Any = "warn",
) -> float:  # fmt: skip
    """Specificity ``TN / (TN + FP)``: scikit-learn's recall of the negative class.

    Examples
    --------
    >>> from sklearn_noisy.metrics import specificity_score
    >>> specificity_score([0, 0, 1, 1], [0, 1, 1, 1])
    0.5
    """
    negative = _negative_label(y_true, y_pred, labels, pos_label)
    return float(
        recall_score(
            y_true, y_pred, pos_label=negative, labels=labels,
            sample_weight=sample_weight, zero_division=zero_division,
        )
    )  # fmt: skip


def negative_predictive_value(
    y_true: Any, y_pred: Any, *, pos_label: Any = 1, labels: Any = None,
    sample_weight: Any = None, zero_division: Any = "warn",
) -> float:  # fmt: skip
    """Negative predictive value ``TN / (TN + FN)``: the negative class's precision.

    Examples
    --------
    >>> from sklearn_noisy.metrics import negative_predictive_value
    >>> negative_predictive_value([0, 0, 1, 1], [0, 1, 1, 1])
    1.0
    """
    negative = _negative_label(y_true, y_pred, labels, pos_label)
    return float(
        precision_score(
            y_true, y_pred, pos_label=negative, labels=labels,
            sample_weight=sample_weight, zero_division=zero_division,
        )
    )  # fmt: skip


def false_positive_rate(
    y_true: Any, y_pred: Any, *, pos_label: Any = 1, labels: Any = None,
    sample_weight: Any = None, zero_division: Any = "warn",
) -> float:  # fmt: skip
    """False positive rate ``FP / (FP + TN)`` = 1 − :func:`specificity_score`.

    Examples
    --------
    >>> from sklearn_noisy.metrics import false_positive_rate
    >>> false_positive_rate([0, 0, 1, 1], [0, 1, 1, 1])
    0.5
    """
    return 1.0 - specificity_score(
        y_true, y_pred, pos_label=pos_label, labels=labels,
        sample_weight=sample_weight, zero_division=zero_division,
    )  # fmt: skip


def false_negative_rate(
    y_true: Any, y_pred: Any, *, pos_label: Any = 1, labels: Any = None,
    sample_weight: Any = None, zero_division: Any = "warn",
) -> float:  # fmt: skip
    """False negative rate ``FN / (FN + TP)`` = 1 − scikit-learn's recall.

    Examples
    --------
    >>> from sklearn_noisy.metrics import false_negative_rate
    >>> false_negative_rate([0, 0, 1, 1], [0, 0, 0, 1])
    0.5
    """
    return 1.0 - float(
        recall_score(
            y_true, y_pred, pos_label=pos_label, labels=labels,
            sample_weight=sample_weight, zero_division=zero_division,
        )
    )  # fmt: skip
