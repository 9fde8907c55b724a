"""Specificity, false positive and false negative rates, negative predictive value.

The rates of the confusion matrix that scikit-learn has no function for, of
the labels as given and expected under label flips (user guide: :ref:`rates`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._definitions.counts import COUNT_METRICS, CountMetric, mirror
from ._engines.counts.binary import check_zero_division
from ._engines.counts.multiclass import rate_nominal
from ._engines.counts.score import _check_average, _negative_label, _swap_indicator
from ._precision_recall import count_metric_function


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


def _nominal_function(definition: CountMetric) -> Callable[..., Any]:
    """The function of a rate on the labels as given (scikit-learn's options)."""

    def rate(
        y_true: Any, y_pred: Any, *, pos_label: Any = 1, labels: Any = None,
        average: str | None = "binary", sample_weight: Any = None,
        zero_division: Any = "warn",
    ) -> Any:  # fmt: skip
        options = {"pos_label": pos_label, "labels": labels, "average": average}
        options.update(sample_weight=sample_weight, zero_division=zero_division)
        return _nominal_rate(definition, y_true, y_pred, options)

    rate.__name__ = rate.__qualname__ = definition.function_name[len("expected_") :]
    rate.__doc__ = definition.nominal_doc
    return rate


#: The expected and the nominal function of every rate, by name.
_FUNCTIONS = {
    f.__name__: f
    for d in COUNT_METRICS.values()
    if d.nominal_doc
    for f in (count_metric_function(d), _nominal_function(d))
}
globals().update(_FUNCTIONS)
__all__ = sorted(_FUNCTIONS)
