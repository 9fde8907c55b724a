"""Percentage errors under Gaussian label error: MAPE, MSPE and RMSPE.

The relative error of a sample is ``g = |y − ŷ| / max(|y|, ε)`` with
scikit-learn's floor ``ε``; the MAPE is the weighted mean of ``g``, the MSPE
that of ``g²`` and the RMSPE its root (user guide: :ref:`formula_percentage`).
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from sklearn.metrics import mean_absolute_percentage_error

from ..utils._validation import check_regression_inputs
from ..utils._warnings import warn
from ._definitions.regression import (
    MEAN_ABSOLUTE_PERCENTAGE_ERROR,
    MEAN_SQUARED_PERCENTAGE_ERROR,
    ROOT_MEAN_SQUARED_PERCENTAGE_ERROR,
    RegressionLoss,
)
from ._engines.regression.estimands import aggregate_outputs
from ._engines.regression.relative_error import (
    excluded_probability,
    floor_sensitivity,
    relative_error_terms,
    relative_errors,
)
from ._engines.regression.sums import bounded_root
from ._float_range import check_finite_results
from ._regression import regression_function

__all__ = [
    "expected_mean_absolute_percentage_error",
    "expected_mean_squared_percentage_error",
    "expected_root_mean_squared_percentage_error",
    "mean_squared_percentage_error",
    "root_mean_squared_percentage_error",
]

#: Above these shares the floor ε is said to drive the result (zero_margin=0).
_MEAN_SHARE, _VARIANCE_SHARE = 1e-3, 1e-2
#: Above this probability of the excluded draws the functions warn.
_EXCLUDED_WARNING = 1e-9

_CLASSICAL_DOC = """\
{summary}.

    As a fraction (no factor 100), with scikit-learn's MAPE floor ``ε``: the
    nominal value of :func:`expected_{function}`.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Labels and predictions.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights.
    multioutput : {{"raw_values", "uniform_average"}} or array-like, \
default="uniform_average"
        How to combine outputs, as in scikit-learn.

    Returns
    -------
    float or ndarray
        The {name}, or one per output with ``"raw_values"``.

    Examples
    --------
    >>> from sklearn_noisy.metrics import {function}
    >>> {function}([2.0, 4.0], [1.0, 5.0])
    {value}
"""


def _classical(root: bool) -> Any:
    """The classical MSPE, or with ``root`` the RMSPE (per output, then averaged)."""

    def score(
        y_true: Any,
        y_pred: Any,
        *,
        sample_weight: Any = None,
        multioutput: Any = "uniform_average",
    ) -> float | np.ndarray:
        y_true, y_pred, _, weight, checked = check_regression_inputs(
            y_true,
            y_pred,
            sigma=0.0,
            sample_weight=sample_weight,
            multioutput="raw_values" if root else multioutput,
        )
        per_output = np.average(
            relative_errors(y_true, y_pred) ** 2, axis=0, weights=weight
        )
        if root:
            per_output = np.sqrt(per_output)
        else:
            multioutput = checked
        if isinstance(multioutput, str) and multioutput == "raw_values":
            return per_output
        weights = None if isinstance(multioutput, str) else np.asarray(multioutput)
        return float(np.average(per_output, weights=weights))

    name = f"{'root_' if root else ''}mean_squared_percentage_error"
    score.__name__ = score.__qualname__ = name
    score.__module__ = __name__
    score.__doc__ = _CLASSICAL_DOC.format(
        summary="Root mean squared relative error, per output then averaged"
        if root
        else "Mean squared relative error ``mean((y − ŷ)² / max(|y|, ε)²)``",
        name="RMSPE" if root else "MSPE",
        function=name,
        value="0.3952847075210474" if root else "0.15625",
    )
    return score


mean_squared_percentage_error = _classical(root=False)
root_mean_squared_percentage_error = _classical(root=True)


def _warn_floor(
    metric: str, y_true: np.ndarray, sigma: np.ndarray, y_pred: np.ndarray,
    mean: np.ndarray, variance: np.ndarray, square: bool,
) -> None:  # fmt: skip
    """Warn when the floor ε, not the data, drives a sample's mean or variance."""
    mean_part, variance_part = floor_sensitivity(y_true, sigma, y_pred, square=square)
    driven = (mean_part > _MEAN_SHARE * np.abs(mean)) | (
        variance_part > _VARIANCE_SHARE * variance
    )
    if driven.any():
        warn(
            f"For {int(np.count_nonzero(driven))} label(s) the noise reaches 0, "
            f"where the relative error's denominator vanishes: the expected {metric} "
            "(more than 0.1 %) or its variance (more than 1 %) then owes to the "
            "floor max(|y|, eps) of scikit-learn's MAPE (eps = 2.2e-16), not to "
            "the data; without the floor they do not exist. Consider an absolute "
            "error instead.",
            UserWarning,
        )


def _warn_excluded(metric: str, excluded: np.ndarray, margin: float) -> float:
    """The probability of the excluded draws; warn above ``_EXCLUDED_WARNING``."""
    with np.errstate(divide="ignore"):  # a label excluded for sure: total 1
        total = float(-np.expm1(np.sum(np.log1p(-excluded))))
    if total > _EXCLUDED_WARNING:
        count = int(np.count_nonzero(excluded > _EXCLUDED_WARNING * 1e-3))
        warn(
            f"For {count} label(s) the noise reaches 0, where the relative error's "
            f"denominator vanishes and the {metric}'s moments do not exist: the "
            f"expected {metric} and its variance are conditional on every noisy "
            f"label staying at |y| >= zero_margin * sigma (zero_margin={margin:g}), "
            f"which leaves out draws of total probability {total:.3g}. Consider "
            "an absolute error instead.",
            UserWarning,
        )
    return total


def _moments(
    definition: RegressionLoss, inputs: tuple, square: bool, margin: float
) -> tuple:
    """Per-output ``(nominal, expected, variance, method)`` of the mean of ``g``
    or ``g²``; ``method="conditional"`` where the left-out draws have a
    probability that float64 resolves."""
    y_true, y_pred, sigma, weight, _ = inputs
    metric = definition.label
    sigma = np.broadcast_to(np.asarray(sigma, dtype=np.float64), y_true.shape)
    terms = relative_error_terms(y_true, y_pred, sigma, square, margin)
    center, mean, spread, nominal_terms = terms
    total = y_true.shape[0] if weight is None else weight.sum()
    w = np.ones(y_true.shape[0]) if weight is None else weight
    # Beyond the float64 range: inf or NaN, reported below with a warning.
    with np.errstate(over="ignore", invalid="ignore"):
        expected = (w @ center + w @ mean) / total
        variance_i = np.maximum(spread - mean * mean, 0.0)
        variance = (w * w) @ variance_i / total**2
        if square:
            nominal = np.average(nominal_terms, axis=0, weights=weight)
        else:
            nominal = np.atleast_1d(
                mean_absolute_percentage_error(
                    y_true, y_pred, sample_weight=weight, multioutput="raw_values"
                )
            )
    if not np.any(sigma > 0.0):  # exact labels: scikit-learn's number, bit for bit
        return nominal, nominal.copy(), np.zeros_like(nominal), "exact"
    check_finite_results(definition.name, (y_true, y_pred, sigma), (expected, variance))
    if margin > 0.0:
        excluded = excluded_probability(y_true.ravel(), sigma.ravel(), margin)
        total = _warn_excluded(metric, excluded, margin)
        method = "conditional" if 1.0 - total < 1.0 else "exact"
        return nominal, expected, variance, method
    with np.errstate(over="ignore", invalid="ignore"):
        _warn_floor(metric, y_true, sigma, y_pred, center + mean, variance_i, square)
    return nominal, expected, variance, "exact"


def _forward(
    definition: RegressionLoss,
    inputs: tuple,
    zero_margin: float,
    *,
    square: bool,
    root: bool = False,
) -> Any:
    """The forward MAPE (MSPE with ``square``; with ``root`` too the RMSPE, the
    MSPE's moments through :func:`bounded_root`)."""
    nominal, expected, variance, method = _moments(
        definition, inputs, square, zero_margin
    )
    if root:
        expected, variance, bounded = bounded_root(expected, variance)
        nominal, method = np.sqrt(nominal), "delta"
        if bounded.any():
            method = "delta_bounded"
    return aggregate_outputs(
        definition.name,
        nominal,
        expected,
        variance,
        inputs[0].shape[0],
        inputs[4],
        method=method,
    )


expected_mean_absolute_percentage_error = regression_function(
    MEAN_ABSOLUTE_PERCENTAGE_ERROR,
    functools.partial(_forward, square=False),
    module=__name__,
)
expected_mean_squared_percentage_error = regression_function(
    MEAN_SQUARED_PERCENTAGE_ERROR,
    functools.partial(_forward, square=True),
    module=__name__,
)
expected_root_mean_squared_percentage_error = regression_function(
    ROOT_MEAN_SQUARED_PERCENTAGE_ERROR,
    functools.partial(_forward, square=True, root=True),
    root_of=expected_mean_squared_percentage_error,
    module=__name__,
)
