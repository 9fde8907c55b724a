"""Percentage errors under Gaussian label error: MAPE, MSPE and RMSPE.

The relative error of a sample is ``g = |y − ŷ| / max(|y|, ε)`` with
scikit-learn's floor ``ε`` (the float64 machine epsilon):
:func:`expected_mean_absolute_percentage_error` is the weighted mean of
``g`` (scikit-learn's :func:`~sklearn.metrics.mean_absolute_percentage_error`,
a fraction, not a percentage), :func:`expected_mean_squared_percentage_error`
the weighted mean of ``g²`` and :func:`expected_root_mean_squared_percentage_error`
its square root. The per-sample moments come from
:mod:`._percentage_kernels` (user guide: :ref:`formula_percentage`).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any

import numpy as np
from sklearn.metrics import mean_absolute_percentage_error

from .._noisy_score import NoisyScore
from ..utils._docstring import fill_doc
from ..utils._validation import (
    check_estimand,
    check_regression_inputs,
    supports_estimands,
)
from ..utils._warnings import warn
from ._percentage_kernels import (
    ZERO_MARGIN,
    excluded_probability,
    floor_sensitivity,
    relative_error_terms,
    relative_errors,
)
from ._regression import _check_finite_results
from ._regression_definitions import (
    MEAN_ABSOLUTE_PERCENTAGE_ERROR,
    MEAN_SQUARED_PERCENTAGE_ERROR,
    ROOT_MEAN_SQUARED_PERCENTAGE_ERROR,
    RegressionLoss,
)
from ._regression_estimands import REGRESSION_PARAMETERS_DOC, aggregate_outputs
from ._regression_sampling import bounded_root, loss_terms, root_sampling
from ._test_set_sampling import with_test_set_sampling

__all__ = [
    "expected_mean_absolute_percentage_error",
    "expected_mean_squared_percentage_error",
    "expected_root_mean_squared_percentage_error",
    "mean_squared_percentage_error",
    "root_mean_squared_percentage_error",
]

#: The percentage errors answer the forward question only (no unbiased
#: estimator of a ratio with the noisy label in its denominator exists).
_ESTIMANDS = ("forward",)
#: Above these shares the floor ε is said to drive the result (zero_margin=0).
_MEAN_SHARE, _VARIANCE_SHARE = 1e-3, 1e-2
#: Above this probability of the excluded draws the functions warn.
_EXCLUDED_WARNING = 1e-9

ZERO_MARGIN_DOC = """\
    zero_margin : float, default=1.0
        The neighbourhood of 0 left out, in units of each label's ``sigma``:
        the moments are those conditional on every noisy label staying at
        ``|y| >= zero_margin * sigma`` (``method="conditional"`` where the
        left-out draws have a probability float64 resolves, with a warning
        giving it above 1e-9); without such a condition they do not exist.
        ``0`` gives the unconditional moments with scikit-learn's floor
        ``max(|y|, eps)`` instead, which the floor sets wherever the noise
        reaches 0 (user guide: :ref:`formula_percentage`)."""


def _check_zero_margin(zero_margin: Any) -> float:
    """``zero_margin`` as a float ``>= 0``, or the usual errors naming it."""
    if isinstance(zero_margin, bool) or not isinstance(zero_margin, numbers.Real):
        raise TypeError(
            f"zero_margin must be a real number; got {type(zero_margin).__name__}."
        )
    if not (math.isfinite(zero_margin) and zero_margin >= 0.0):
        raise ValueError(
            f"zero_margin must be a finite number >= 0; got {zero_margin!r}."
        )
    return float(zero_margin)


def _sampling_rule(definition: RegressionLoss) -> Any:
    """The test-set sampling rule of MAPE or MSPE at the call's ``zero_margin``."""

    def terms(arguments: dict[str, Any], score: NoisyScore) -> tuple:
        margin = _check_zero_margin(arguments.get("zero_margin", ZERO_MARGIN))
        forward = definition.terms["forward"]
        bound = dataclasses.replace(
            definition, terms={"forward": lambda y, p, s: forward(y, p, s, margin)}
        )
        return loss_terms(bound)(arguments, score)

    return terms


def mean_squared_percentage_error(
    y_true: Any, y_pred: Any, *, sample_weight: Any = None,
    multioutput: Any = "uniform_average",
) -> float | np.ndarray:  # fmt: skip
    """Mean squared relative error ``mean((y − ŷ)² / max(|y|, ε)²)``.

    The classical MSPE, as a fraction (no factor 100), with scikit-learn's
    MAPE floor ``ε``; the nominal value of
    :func:`expected_mean_squared_percentage_error`.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Labels and predictions.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights.
    multioutput : {"raw_values", "uniform_average"} or array-like, \
default="uniform_average"
        How to combine outputs, as in scikit-learn.

    Returns
    -------
    float or ndarray
        The MSPE, or one per output with ``"raw_values"``.

    Examples
    --------
    >>> from sklearn_noisy.metrics import mean_squared_percentage_error
    >>> mean_squared_percentage_error([2.0, 4.0], [1.0, 5.0])
    0.15625
    """
    y_true, y_pred, _, weight, multioutput = check_regression_inputs(
        y_true, y_pred, sigma=0.0, sample_weight=sample_weight,
        multioutput=multioutput,
    )  # fmt: skip
    per_output = np.average(
        relative_errors(y_true, y_pred) ** 2, axis=0, weights=weight
    )
    if isinstance(multioutput, str) and multioutput == "raw_values":
        return per_output
    weights = None if isinstance(multioutput, str) else multioutput
    return float(np.average(per_output, weights=weights))


def root_mean_squared_percentage_error(
    y_true: Any, y_pred: Any, *, sample_weight: Any = None,
    multioutput: Any = "uniform_average",
) -> float | np.ndarray:  # fmt: skip
    """Root mean squared relative error, per output then averaged (as RMSE).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Labels and predictions.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights.
    multioutput : {"raw_values", "uniform_average"} or array-like, \
default="uniform_average"
        How to combine outputs, as in scikit-learn.

    Returns
    -------
    float or ndarray
        The RMSPE, or one per output with ``"raw_values"``.

    Examples
    --------
    >>> from sklearn_noisy.metrics import root_mean_squared_percentage_error
    >>> root_mean_squared_percentage_error([2.0, 4.0], [1.0, 5.0])
    0.3952847075210474
    """
    per_output = np.sqrt(
        mean_squared_percentage_error(
            y_true, y_pred, sample_weight=sample_weight, multioutput="raw_values"
        )
    )
    if isinstance(multioutput, str) and multioutput == "raw_values":
        return per_output
    weights = None if isinstance(multioutput, str) else np.asarray(multioutput)
    return float(np.average(per_output, weights=weights))


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
    definition: RegressionLoss, metric: str, y_true: Any, y_pred: Any,
    sigma: Any, sample_weight: Any, multioutput: Any, estimand: Any, square: bool,
    zero_margin: Any,
) -> tuple:  # fmt: skip
    """Per-output nominal, expected and variance of the mean of ``g`` or ``g²``.

    ``metric`` is the loss's short name in warnings. Also returns the method:
    ``"conditional"`` where the left-out draws have a probability that
    float64 resolves (``1 − P < 1``), else ``"exact"``.
    """
    margin = _check_zero_margin(zero_margin)
    check_estimand(
        estimand,
        metric=definition.name,
        supported=_ESTIMANDS,
        reason=definition.truth_reason,
    )
    y_true, y_pred, sigma, weight, multioutput = check_regression_inputs(
        y_true, y_pred, sigma=sigma, sample_weight=sample_weight,
        multioutput=multioutput, multioutput_rules=definition.multioutput,
    )  # fmt: skip
    sigma = np.broadcast_to(np.asarray(sigma, dtype=np.float64), y_true.shape)
    terms = relative_error_terms(y_true, y_pred, sigma, square, margin)
    center, mean, spread, nominal_terms = terms
    shape = y_true.shape
    total = shape[0] if weight is None else weight.sum()
    w = np.ones(shape[0]) if weight is None else weight
    # Beyond the float64 range: inf or NaN, reported below with the package's
    # warning (as the other regression metrics do).
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
        zero = np.zeros_like(nominal)
        return nominal, nominal.copy(), zero, shape[0], multioutput, "exact"
    _check_finite_results(
        definition.name, (y_true, y_pred, sigma), (expected, variance)
    )
    if margin > 0.0:
        excluded = excluded_probability(y_true.ravel(), sigma.ravel(), margin)
        total = _warn_excluded(metric, excluded, margin)
        method = "conditional" if 1.0 - total < 1.0 else "exact"
        return nominal, expected, variance, shape[0], multioutput, method
    with np.errstate(over="ignore", invalid="ignore"):
        _warn_floor(metric, y_true, sigma, y_pred, center + mean, variance_i, square)
    return nominal, expected, variance, shape[0], multioutput, "exact"


@with_test_set_sampling(_sampling_rule(MEAN_ABSOLUTE_PERCENTAGE_ERROR))
@fill_doc(parameters=REGRESSION_PARAMETERS_DOC, zero_margin=ZERO_MARGIN_DOC)
@supports_estimands(*_ESTIMANDS)
def expected_mean_absolute_percentage_error(
    y_true: Any,
    y_pred: Any,
    *,
    sigma: Any,
    sample_weight: Any = None,
    multioutput: Any = "uniform_average",
    estimand: str = "forward",
    zero_margin: float = ZERO_MARGIN,
) -> NoisyScore | list[NoisyScore]:
    """Expected MAPE, and its variance, under Gaussian label error.

    scikit-learn's :func:`~sklearn.metrics.mean_absolute_percentage_error`
    (a fraction) with each label drawn as ``N(y_true_i, sigma_i²)`` and the
    predictions fixed. The relative error's denominator ``max(|y|, ε)`` is
    itself noisy: without the floor ``ε`` the expectation would not exist, and
    for a label whose noise reaches 0 (within about 9 σ) the variance is set
    by the floor; the function then warns. The moments are computed by
    quadrature accurate to about 1e-14 relative (``method="exact"``; user
    guide: :ref:`formula_percentage`).

    Parameters
    ----------
    {parameters}

    estimand : {"forward"}, default="forward"
        Only the forward question (``y_true`` exact, then measured) is
        answered: no unbiased estimator of the percentage error against the
        true values exists when the label is in the denominator.

    {zero_margin}

    Returns
    -------
    NoisyScore or list of NoisyScore
        ``nominal`` is scikit-learn's MAPE of ``y_true``.

    See Also
    --------
    sklearn.metrics.mean_absolute_percentage_error : The metric on exact labels.

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_mean_absolute_percentage_error
    >>> score = expected_mean_absolute_percentage_error(
    ...     [10.0, 20.0], [11.0, 18.0], sigma=0.5)
    >>> round(score.nominal, 6), round(score.expected, 6), round(score.std, 6)
    (0.1, 0.101478, 0.02933)
    """
    results = _moments(
        MEAN_ABSOLUTE_PERCENTAGE_ERROR, "MAPE", y_true, y_pred, sigma,
        sample_weight, multioutput, estimand, square=False, zero_margin=zero_margin,
    )  # fmt: skip
    nominal, expected, variance, n_samples, multioutput, method = results
    return aggregate_outputs(
        MEAN_ABSOLUTE_PERCENTAGE_ERROR.name, nominal, expected, variance, n_samples,
        multioutput, method=method,
    )  # fmt: skip


@with_test_set_sampling(_sampling_rule(MEAN_SQUARED_PERCENTAGE_ERROR))
@fill_doc(parameters=REGRESSION_PARAMETERS_DOC, zero_margin=ZERO_MARGIN_DOC)
@supports_estimands(*_ESTIMANDS)
def expected_mean_squared_percentage_error(
    y_true: Any,
    y_pred: Any,
    *,
    sigma: Any,
    sample_weight: Any = None,
    multioutput: Any = "uniform_average",
    estimand: str = "forward",
    zero_margin: float = ZERO_MARGIN,
) -> NoisyScore | list[NoisyScore]:
    """Expected MSPE, and its variance, under Gaussian label error.

    The weighted mean of ``(y − ŷ)² / max(|y|, ε)²`` (see
    :func:`mean_squared_percentage_error`) with each label drawn as
    ``N(y_true_i, sigma_i²)``. As for the MAPE, the floor ``ε`` keeps the
    moments finite and sets them when a label's noise reaches 0 (with a
    warning). Quadrature, ``method="exact"`` (:ref:`formula_percentage`).

    Parameters
    ----------
    {parameters}

    estimand : {"forward"}, default="forward"
        Only the forward question is answered (see
        :func:`expected_mean_absolute_percentage_error`).

    {zero_margin}

    Returns
    -------
    NoisyScore or list of NoisyScore

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_mean_squared_percentage_error
    >>> score = expected_mean_squared_percentage_error(
    ...     [10.0, 20.0], [11.0, 18.0], sigma=0.5)
    >>> round(score.nominal, 6), round(score.expected, 6)
    (0.01, 0.012023)
    """
    results = _moments(
        MEAN_SQUARED_PERCENTAGE_ERROR, "MSPE", y_true, y_pred, sigma,
        sample_weight, multioutput, estimand, square=True, zero_margin=zero_margin,
    )  # fmt: skip
    nominal, expected, variance, n_samples, multioutput, method = results
    return aggregate_outputs(
        MEAN_SQUARED_PERCENTAGE_ERROR.name, nominal, expected, variance, n_samples,
        multioutput, method=method,
    )  # fmt: skip


@with_test_set_sampling(hook=root_sampling(expected_mean_squared_percentage_error))
@fill_doc(parameters=REGRESSION_PARAMETERS_DOC, zero_margin=ZERO_MARGIN_DOC)
@supports_estimands(*_ESTIMANDS)
def expected_root_mean_squared_percentage_error(
    y_true: Any,
    y_pred: Any,
    *,
    sigma: Any,
    sample_weight: Any = None,
    multioutput: Any = "uniform_average",
    estimand: str = "forward",
    zero_margin: float = ZERO_MARGIN,
) -> NoisyScore | list[NoisyScore]:
    """Expected RMSPE, and its variance, under Gaussian label error (delta method).

    The square root of :func:`expected_mean_squared_percentage_error`, per
    output: with the MSPE's mean ``m`` and variance ``v`` (conditional as
    ``zero_margin`` says), ``E ≈ √m − v / (8 m^{3/2})`` and ``Var ≈ v / (4m)``
    (``method="delta"``; accurate when ``v ≪ m²``). Both are held inside the
    bounds ``m`` and ``v`` put on them, ``√m / √(1 + v/m²) ≤ E ≤ √m`` and
    ``Var ≤ m − (√m / √(1 + v/m²))²``; where the delta method leaves them
    (``v > 3m²``) the bound is returned and ``method="delta_bounded"``.

    Parameters
    ----------
    {parameters}

    estimand : {"forward"}, default="forward"
        Only the forward question is answered (see
        :func:`expected_mean_absolute_percentage_error`).

    {zero_margin}

    Returns
    -------
    NoisyScore or list of NoisyScore

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_root_mean_squared_percentage_error
    >>> score = expected_root_mean_squared_percentage_error(
    ...     [10.0, 20.0], [11.0, 18.0], sigma=0.5)
    >>> round(score.nominal, 6), round(score.expected, 6), score.method
    (0.1, 0.105077, 'delta')
    """
    results = _moments(
        ROOT_MEAN_SQUARED_PERCENTAGE_ERROR, "RMSPE", y_true, y_pred, sigma,
        sample_weight, multioutput, estimand, square=True, zero_margin=zero_margin,
    )  # fmt: skip
    nominal, mean, variance, n_samples, multioutput, _ = results
    expected, root_variance, bounded = bounded_root(mean, variance)
    return aggregate_outputs(
        ROOT_MEAN_SQUARED_PERCENTAGE_ERROR.name, np.sqrt(nominal), expected,
        root_variance, n_samples, multioutput,
        method="delta_bounded" if bounded.any() else "delta",
    )  # fmt: skip
