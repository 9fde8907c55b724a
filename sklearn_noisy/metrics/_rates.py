"""Specificity, false positive and false negative rates, negative predictive value.

The rates of the confusion matrix that scikit-learn has no function for, of
the labels as given and expected under label flips (user guide: :ref:`rates`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._definitions.counts import COUNT_METRICS, CountMetric
from ._precision_recall import count_metric_function


def _nominal_function(definition: CountMetric) -> Callable[..., Any]:
    """The function of a rate on the labels as given (scikit-learn's options):
    the nominal value of its expected function."""

    def rate(
        y_true: Any, y_pred: Any, *, pos_label: Any = 1, labels: Any = None,
        average: str | None = "binary", sample_weight: Any = None,
        zero_division: Any = "warn",
    ) -> Any:  # fmt: skip
        score = count_metric_function(definition)(
            y_true, y_pred, q=0.0, labels=labels, pos_label=pos_label,
            average=average, sample_weight=sample_weight,
            zero_division=zero_division, estimand="forward", test_set_sampling=False,
        )  # fmt: skip
        if isinstance(score, list):
            return np.array([s.nominal for s in score])
        return score.nominal

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
