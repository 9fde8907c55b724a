"""Specificity, false positive and false negative rates, negative predictive value.

The rates of the binary confusion matrix that scikit-learn has no function
for, and their expectation under label flips (user guide: :ref:`rates`).
Specificity ``TN / (TN + FP)`` is the recall of the negative class and the
negative predictive value ``TN / (TN + FN)`` its precision; the false
positive and false negative rates are ``1 −`` specificity and ``1 −``
recall. With another ``average`` than ``"binary"``, each class against the
rest, as :func:`sklearn.metrics.multilabel_confusion_matrix` counts it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._definitions.counts import COUNT_METRICS, CountMetric, mirror
from ._engines.counts.binary import check_zero_division
from ._engines.counts.multiclass import rate_nominal
from ._engines.counts.score import _check_average, _negative_label, _swap_indicator
from ._precision_recall import count_metric_function, metric_doc

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


def _rate_function(metric: str, name: str, doc: str) -> Any:
    return count_metric_function(
        COUNT_METRICS[metric], name=name, doc=doc, module=__name__
    )


expected_specificity_score = _rate_function(
    "specificity",
    "expected_specificity_score",
    metric_doc(
        "Expected specificity (true negative rate), and its variance, under flips.",
        """``TN / (TN + FP)``, the recall of the negative class: exact by the recall's
    algorithm. With a multiclass ``average``, ``spec_k = TN_k / (TN_k + FP_k)``:
    exact per class and for ``"micro"``; the expectations of ``"macro"`` and
    ``"weighted"`` are exact, their variances Monte Carlo.
    Read more in the :ref:`User Guide <rates>`.""",
        "",
        """expected_specificity_score
    >>> expected_specificity_score([0, 0, 1, 1, 0], [0, 1, 1, 1, 0], q=0.1,
    ...     estimand="forward").expected
    0.6299...""",
    ),
)

expected_negative_predictive_value = _rate_function(
    "negative_predictive_value",
    "expected_negative_predictive_value",
    metric_doc(
        "Expected negative predictive value, and its variance, under flips.",
        """``TN / (TN + FN)``, the precision of the negative class: the predicted
    negatives are fixed, so its moments are exact. With a multiclass
    ``average``, ``NPV_k = TN_k / (TN_k + FN_k)``: exact but the variance of
    ``"weighted"`` (Monte Carlo).
    Read more in the :ref:`User Guide <rates>`.""",
        "",
        """expected_negative_predictive_value
    >>> y_true = [0, 1, 2, 2, 1, 0]
    >>> y_pred = [0, 2, 2, 1, 1, 0]
    >>> expected_negative_predictive_value(y_true, y_pred, q=0.1, average="macro",
    ...     estimand="forward")
    NoisyScore(metric='negative_predictive_value', expected=0.808333, \
std=0.05621, nominal=0.833333, n_samples=6, method='exact', estimand='forward', \
sampling_std=0.1026)""",
    ),
)

expected_false_positive_rate = _rate_function(
    "false_positive_rate",
    "expected_false_positive_rate",
    metric_doc(
        "Expected false positive rate ``FP/(FP + TN)`` (1 − specificity) under flips.",
        """The variance is the specificity's; an undefined rate is
    ``1 − zero_division``.
    Read more in the :ref:`User Guide <rates>`.""",
        "",
        """expected_false_positive_rate
    >>> expected_false_positive_rate([0, 0, 1, 1, 0], [0, 1, 1, 1, 0], q=0.1,
    ...     estimand="forward").expected
    0.3700...""",
    ),
)

expected_false_negative_rate = _rate_function(
    "false_negative_rate",
    "expected_false_negative_rate",
    metric_doc(
        "Expected false negative rate ``FN / (FN + TP)`` = 1 − recall, under flips.",
        """The variance is the recall's; with a multiclass ``average`` it is
    ``1 − recall_k`` averaged as recall (multilabel targets too).
    Read more in the :ref:`User Guide <rates>`.""",
        "",
        """expected_false_negative_rate
    >>> expected_false_negative_rate([0, 0, 1, 1, 0], [0, 1, 1, 0, 0], q=0.1,
    ...     estimand="forward").expected
    0.5211...""",
    ),
)


def _nominal_rate(
    definition: CountMetric, y_true: Any, y_pred: Any, options: dict
) -> Any:
    """The rate of the labels as given, for every ``average``.

    Binary: scikit-learn's recall or precision of the negative class;
    multilabel: of ``1 − y``; otherwise one-vs-rest (:func:`rate_nominal`).
    """
    average = options["average"]
    function = definition.sklearn_function  # of the negative class
    if definition.complement and definition.negative:
        specificity = mirror(definition, negative=True)
        return 1.0 - _nominal_rate(specificity, y_true, y_pred, options)
    if definition.complement:
        _check_average(average, y_true, y_pred, weighted_multilabel=True)
        recall = function(y_true, y_pred, **options)
        return 1.0 - (float(recall) if average is not None else np.asarray(recall))
    if _check_average(average, y_true, y_pred):
        swapped = (_swap_indicator(y_true), _swap_indicator(y_pred))
        value = function(*swapped, **options)
        return value if average is None else float(value)
    if average != "binary":
        zero = check_zero_division(options["zero_division"])
        return rate_nominal(
            definition.name, y_true, y_pred, labels=options["labels"],
            average=average, sample_weight=options["sample_weight"],
            zero_division=zero,
        )  # fmt: skip
    options = dict(options)
    del options["average"]
    negative = _negative_label(y_true, y_pred, options["labels"], options["pos_label"])
    return float(function(y_true, y_pred, **{**options, "pos_label": negative}))


def _nominal_function(metric: str, name: str, doc: str) -> Callable[..., Any]:
    """The function of a rate on the labels as given (scikit-learn's options)."""
    definition = COUNT_METRICS[metric]

    def rate(
        y_true: Any, y_pred: Any, *, pos_label: Any = 1, labels: Any = None,
        average: str | None = "binary", sample_weight: Any = None,
        zero_division: Any = "warn",
    ) -> Any:  # fmt: skip
        options = {"pos_label": pos_label, "labels": labels, "average": average}
        options.update(sample_weight=sample_weight, zero_division=zero_division)
        return _nominal_rate(definition, y_true, y_pred, options)

    rate.__name__ = rate.__qualname__ = name
    rate.__doc__ = doc
    return rate


specificity_score = _nominal_function(
    "specificity",
    "specificity_score",
    """Specificity ``TN / (TN + FP)``: scikit-learn's recall of the negative class.

    With ``average`` other than ``"binary"``: each class against the rest,
    averaged as in :func:`expected_specificity_score` (``None``: an array, one
    value per class).

    Examples
    --------
    >>> from sklearn_noisy.metrics import specificity_score
    >>> specificity_score([0, 0, 1, 1], [0, 1, 1, 1])
    0.5
    >>> specificity_score([0, 1, 2, 2], [0, 2, 2, 1], average="macro")
    0.7222...
    """,
)

negative_predictive_value = _nominal_function(
    "negative_predictive_value",
    "negative_predictive_value",
    """Negative predictive value ``TN / (TN + FN)``: the negative class's precision.

    With ``average`` other than ``"binary"``: each class against the rest,
    averaged as in :func:`expected_negative_predictive_value`.

    Examples
    --------
    >>> from sklearn_noisy.metrics import negative_predictive_value
    >>> negative_predictive_value([0, 0, 1, 1], [0, 1, 1, 1])
    1.0
    """,
)

false_positive_rate = _nominal_function(
    "false_positive_rate",
    "false_positive_rate",
    """False positive rate ``FP / (FP + TN)`` = 1 − :func:`specificity_score`.

    Examples
    --------
    >>> from sklearn_noisy.metrics import false_positive_rate
    >>> false_positive_rate([0, 0, 1, 1], [0, 1, 1, 1])
    0.5
    """,
)

false_negative_rate = _nominal_function(
    "false_negative_rate",
    "false_negative_rate",
    """False negative rate ``FN / (FN + TP)`` = 1 − scikit-learn's recall.

    Examples
    --------
    >>> from sklearn_noisy.metrics import false_negative_rate
    >>> false_negative_rate([0, 0, 1, 1], [0, 0, 0, 1])
    0.5
    """,
)
