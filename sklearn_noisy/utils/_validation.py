"""Input validation of the regression metrics, the level of an interval, and the
policies of every entry point: the estimand and the test-set sampling."""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

import numpy as np

from ._arrays import (
    NonNumericError,
    WeightSumError,
    as_float_array,
    check_finite,
    check_same_length,
    check_sample_weight,
)
from ._noise import GaussianNoise, check_sigma
from ._sklearn_compat import InvalidParameterError

F = TypeVar("F", bound=Callable[..., Any])


def check_level(value: Any, name: str = "confidence_level") -> float:
    """``value`` of ``name`` as a float in the open interval (0, 1).

    Raises scikit-learn's ``InvalidParameterError`` (a ``ValueError`` and a
    ``TypeError``), as its ``Interval(Real, 0, 1, closed="neither")`` does.
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not 0.0 < value < 1.0
    ):
        raise InvalidParameterError(
            f"{name} must be a float in the open interval (0, 1); got {value!r}."
        )
    return float(value)


def check_regression_target(value: Any, *, name: str) -> np.ndarray:
    """``value`` as a non-empty 1-D or 2-D float64 array (finiteness not checked)."""
    array = as_float_array(value, name=name, error=NonNumericError)
    if array.ndim not in (1, 2):
        raise ValueError(
            f"{name} must be 1-D or 2-D (n_samples, n_outputs); got shape "
            f"{array.shape}."
        )
    if array.shape[0] == 0:
        raise ValueError(f"{name} is empty: at least one sample is required.")
    return array


def check_regression_inputs(
    y_true: Any,
    y_pred: Any,
    *,
    sigma: Any,
    sample_weight: Any = None,
    multioutput: Any = "uniform_average",
    ensure_finite: bool = True,
    multioutput_rules: MultioutputRules | None = None,
) -> tuple[np.ndarray, np.ndarray, Any, np.ndarray | None, Any]:
    """``(y_true, y_pred, sigma, sample_weight, multioutput)`` of a regression
    metric, the labels 2-D; ``ensure_finite=False`` skips the NaN/inf scans."""
    y_true = check_regression_target(y_true, name="y_true")
    y_pred = check_regression_target(y_pred, name="y_pred")
    y_true, y_pred = (y[:, None] if y.ndim == 1 else y for y in (y_true, y_pred))
    check_same_length(y_true, y_pred)
    if y_true.shape[1] != y_pred.shape[1]:
        raise ValueError(
            "y_true and y_pred must have the same number of outputs; got "
            f"{y_true.shape[1]} and {y_pred.shape[1]}."
        )
    if ensure_finite:
        check_finite(y_true, name="y_true")
        check_finite(y_pred, name="y_pred")
    shape = y_true.shape
    sigma = _check_regression_sigma(sigma, shape, ensure_finite=ensure_finite)
    weight = check_sample_weight(sample_weight, shape[0], allow_negative=True)
    if weight is not None and weight.min() < 0.0 and has_noise(sigma):
        raise ValueError(
            "sample_weight must be non-negative when a label is noisy (sigma > "
            "0): with negative weights the metric is not a mean of losses and "
            "has no distribution over the label noise. Negative weights are "
            "accepted at sigma = 0, as in scikit-learn."
        )
    multioutput = _check_multioutput(
        multioutput, shape[1], multioutput_rules or MultioutputRules()
    )
    return y_true, y_pred, sigma, weight, multioutput


def has_noise(sigma: Any) -> bool:
    """Whether a validated ``sigma`` (a float or an array) has a positive entry."""
    if isinstance(sigma, float):
        return sigma > 0.0
    return bool(np.any(sigma > 0.0))


def _check_regression_sigma(
    sigma: Any, shape: tuple[int, int], *, ensure_finite: bool
) -> Any:
    """``sigma`` as :func:`check_sigma` returns it for 2-D labels of ``shape``
    (a validated ``GaussianNoise`` of a fitting shape as it is)."""
    if isinstance(sigma, GaussianNoise):
        sigma = sigma.sigma
        if isinstance(sigma, float):
            return sigma
        column = sigma[:, None] if sigma.ndim == 1 else sigma
        if column.shape in ((shape[0], 1), shape):
            return column
    return check_sigma(sigma, shape, ensure_finite=ensure_finite)


#: ``multioutput`` strings of every regression metric, and R²'s extra one.
_MULTIOUTPUT = ("raw_values", "uniform_average")


class MultioutputRules(NamedTuple):
    """scikit-learn's ``multioutput`` rules of one regression metric: whether
    ``"variance_weighted"`` (R²) and output weights for one output are accepted."""

    variance_weighted: bool = False
    one_output_weights: bool = True


def _check_multioutput(
    multioutput: Any, n_outputs: int, rules: MultioutputRules
) -> Any:
    if rules.variance_weighted and multioutput is None:  # scikit-learn: uniform
        return "uniform_average"
    if isinstance(multioutput, str):
        allowed = _MULTIOUTPUT + (
            ("variance_weighted",) if rules.variance_weighted else ()
        )
        if multioutput not in allowed:
            extra = (
                ""
                if rules.variance_weighted
                else " ('variance_weighted' is offered by R² only, as in scikit-learn.)"
            )
            raise ValueError(
                f"multioutput must be one of {allowed} or an array of output "
                f"weights; got {multioutput!r}.{extra}"
            )
        return multioutput
    weights = as_float_array(multioutput, name="multioutput", error=NonNumericError)
    if n_outputs == 1 and not rules.one_output_weights:
        raise ValueError(
            "multioutput weights are useful only with several outputs; y_true "
            "has one (as in scikit-learn, use a string)."
        )
    if weights.shape != (n_outputs,):
        raise ValueError(
            f"multioutput weights must have shape ({n_outputs},); got {weights.shape}."
        )
    check_finite(weights, name="multioutput")
    if weights.sum() == 0.0:  # negative weights are allowed, as in scikit-learn
        raise WeightSumError(
            "multioutput weights must have a non-zero sum; they sum to zero."
        )
    return weights


#: The three questions a metric's result can answer (user guide: estimands).
ESTIMANDS = ("forward", "truth", "remeasurement")

#: The values of every ``estimand=`` option: ``"auto"`` or one of the three.
ESTIMAND_CHOICES = ("auto", *ESTIMANDS)


def resolve_estimand(estimand: str, offered: tuple[str, ...]) -> str | None:
    """The first of truth, remeasurement, forward offered from ``estimand``
    on (``"auto"``: from truth), or None (user guide: :ref:`estimands`)."""
    order = ("truth", "remeasurement", "forward")
    start = order.index("truth" if estimand == "auto" else estimand)
    return next((e for e in order[start:] if e in offered), None)


#: The default ``test_set_sampling=`` of every entry point (user guide:
#: :ref:`estimand_policy`): the sampling part in closed form where the metric
#: has one, none where it has none (no bootstrap unless asked for).
TEST_SET_SAMPLING = "auto"


def check_test_set_sampling(value: Any) -> str | bool:
    """``value`` of a ``test_set_sampling=`` option (a NumPy bool as a bool)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str) and value in ("auto", "bootstrap"):
        return value
    raise (ValueError if isinstance(value, str) else TypeError)(
        f"test_set_sampling must be 'auto', True, 'bootstrap' or False; got {value!r}."
    )


def supports_estimands(*estimands: str) -> Callable[[F], F]:
    """Decorator: set ``function.estimands``, the estimands a metric offers
    (``"forward"`` first, then any of ``ESTIMANDS``)."""

    def decorate(function: F) -> F:
        function.estimands = tuple(estimands)  # type: ignore[attr-defined]
        return function

    return decorate


def check_estimand(
    estimand: Any, *, metric: str, supported: tuple[str, ...], reason: str | None = None
) -> str:
    """Validate ``estimand`` against the ``supported`` ones of ``metric``;
    ``reason`` says why the metric offers no estimator of ``"truth"``."""
    if not isinstance(estimand, str) or estimand not in ESTIMAND_CHOICES:
        raise ValueError(
            f"estimand must be one of {ESTIMAND_CHOICES}; got {estimand!r}."
        )
    if estimand == "auto":
        return resolve_estimand(estimand, supported)
    if estimand not in supported:
        instead = " or ".join(f"estimand={value!r}" for value in supported)
        if estimand != "truth":
            raise ValueError(
                f"{metric} does not offer estimand={estimand!r}; use {instead}."
            )
        if reason is None:
            reason = (
                "its expectation over the label noise is not a linear function "
                "of the per-sample label distributions, so no correction of the "
                "noisy labels can remove the bias"
            )
        raise ValueError(
            f"{metric} has no unbiased estimator against the true labels because "
            f"{reason}; use {instead}."
        )
    return estimand


def check_generator(random_state: Any) -> np.random.Generator:
    """A Generator from ``random_state``; a RandomState seeds one with one draw."""
    if isinstance(random_state, np.random.RandomState):
        seed = random_state.randint(0, np.iinfo(np.int64).max, dtype=np.int64)
        return np.random.default_rng(int(seed))
    if random_state is None or isinstance(
        random_state, (numbers.Integral, np.random.SeedSequence, np.random.Generator)
    ):
        if isinstance(random_state, numbers.Integral) and random_state < 0:
            raise ValueError(
                f"random_state must be a non-negative int; got {random_state!r}."
            )
        return np.random.default_rng(random_state)
    raise TypeError(
        "random_state must be None, an int, a numpy Generator, SeedSequence or "
        f"RandomState; got {random_state!r}."
    )


def check_positive_int(value: Any, *, name: str, minimum: int) -> int:
    """``value`` as an int >= ``minimum`` (TypeError for a non-integer)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int >= {minimum}; got {value!r}.")
    if value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}; got {value!r}.")
    return int(value)
