"""The configuration of a noise-aware scorer: which metric, which noise, which options.

Everything :class:`~sklearn_noisy.metrics.NoisyScorer` checks when it is built:
the metric (a name or an ``expected_*`` function, looked up in the metric
registry), the sign and response conventions, the noise source (``sigma`` for
regression, ``q`` or a constant ``transition_matrix`` for classification), the
estimand, the output and the further keyword arguments of the metric, against
the metric's own signature.
"""

from __future__ import annotations

import copy
import inspect
from typing import Any

import numpy as np
from sklearn.exceptions import UndefinedMetricWarning

from .._noisy_score import NoisyScore
from ..utils._noise import _source_repr, check_noise_source, check_transition_matrix
from ..utils._validation import ESTIMANDS
from ..utils._warnings import warn
from ._registry import MetricInfo, get_metric_info, get_metric_names

__all__ = [
    "OUTPUTS",
    "RESERVED",
    "accepts_sample_weight",
    "check_estimand_option",
    "check_greater_is_better",
    "check_metric_kwargs",
    "check_noise_options",
    "check_output",
    "check_response_method",
    "check_sigma_dof_option",
    "check_signature_options",
    "metric_parameters",
    "named_scorers",
    "require_sample_weight",
    "scorer_metric_info",
    "scorer_repr",
    "takes_labels",
    "takes_sigma_dof",
    "undefined_score",
]

#: What a call of a scorer returns: the expected value, or expected, variance
#: and nominal values.
OUTPUTS = ("expected", "all")
#: Keyword arguments of the metric that the scorer itself fills in.
RESERVED = frozenset(
    {
        "y_true",
        "y_pred",
        "y_proba",
        "sigma",
        "sigma_dof",
        "q",
        "transition_matrix",
        "sample_weight",
        "estimand",
    }
)


def named_scorers() -> dict[str, str]:
    """Scorer name (after scikit-learn's scorer names) -> canonical metric name."""
    return {get_metric_info(name).scorer_name: name for name in get_metric_names()}


def scorer_metric_info(metric: Any) -> MetricInfo:
    """The registry record of a metric name or of one of our ``expected_*`` functions.

    Raises
    ------
    ValueError
        For a str that is not a metric name (with a hint for a scorer name).
    TypeError
        For any other object.
    """
    names = sorted(get_metric_names())
    if isinstance(metric, str):
        if metric in names:
            return get_metric_info(metric)
        hint = ""
        scorers = named_scorers()
        if metric in scorers:
            hint = (
                f" {metric!r} is a scorer name: use get_noisy_scorer({metric!r}) or "
                f"make_noisy_scorer({scorers[metric]!r})."
            )
        raise ValueError(
            f"metric must be one of {names} or one of sklearn_noisy's "
            f"expected_* functions; got {metric!r}.{hint}"
        )
    if callable(metric):
        try:
            return get_metric_info(metric)
        except TypeError:
            pass
    raise TypeError(
        "metric must be a metric name (one of "
        f"{names}) or one of sklearn_noisy's expected_* functions; got "
        f"{metric!r}. For another metric use sklearn.metrics.make_scorer, or "
        "sklearn_noisy.metrics.monte_carlo_score to get its moments by simulation."
    )


def check_greater_is_better(greater_is_better: Any, info: MetricInfo) -> bool:
    """The sign convention: the metric's own for None, else a bool."""
    if greater_is_better is None:
        greater_is_better = info.greater_is_better
    if not isinstance(greater_is_better, (bool, np.bool_)):
        raise TypeError(
            f"greater_is_better must be True, False or None; got {greater_is_better!r}."
        )
    return bool(greater_is_better)


def check_response_method(response_method: Any, info: MetricInfo) -> str:
    """The estimator method to score: the metric's own, the only one accepted."""
    if response_method is None:
        response_method = info.response_method
    if response_method != info.response_method:
        takes = (
            "probabilities"
            if info.response_method == "predict_proba"
            else "predictions"
        )
        raise ValueError(
            f"response_method for the {info.name!r} metric must be "
            f"{info.response_method!r} (the metric takes {takes}); got "
            f"{response_method!r}."
        )
    return response_method


def check_noise_options(
    info: MetricInfo, *, sigma: Any, q: Any, transition_matrix: Any
) -> tuple[Any, np.ndarray | None]:
    """The validated noise source and constant transition matrix of a scorer.

    Returns
    -------
    source : None, float, str or callable
        The source of ``sigma`` (regression) or ``q`` (classification).
    transition_matrix : ndarray of shape (n_classes, n_classes) or None
        A read-only copy of the constant transition matrix.
    """
    key = info.noise_parameter
    other = "q" if key == "sigma" else "sigma"
    if (sigma if other == "sigma" else q) is not None:
        kind = "a regression" if key == "sigma" else "a classification"
        raise TypeError(
            f"{info.name!r} is {kind} metric: its label noise is {key}, not {other}."
        )
    if key == "sigma" and transition_matrix is not None:
        raise TypeError(
            f"{info.name!r} is a regression metric: transition_matrix applies to "
            "classification metrics only."
        )
    source = check_noise_source(sigma if key == "sigma" else q, key=key)
    if transition_matrix is None:
        return source, None
    if source is not None:
        raise TypeError(
            "Pass either q or transition_matrix, not both: they are two "
            "descriptions of the label noise."
        )
    # A copy: the scorer must not change when the caller's array does.
    matrix = check_transition_matrix(transition_matrix).copy()
    matrix.setflags(write=False)
    return None, matrix


def check_sigma_dof_option(info: MetricInfo, sigma_dof: Any) -> Any:
    """The validated source of the degrees of freedom of σ (regression only).

    None (routed metadata, optional), a constant, a column name or a callable.
    """
    if sigma_dof is not None and info.noise_parameter != "sigma":
        raise TypeError(
            f"{info.name!r} is a classification metric: sigma_dof applies to "
            "regression metrics (noise sigma) only."
        )
    return check_noise_source(sigma_dof, key="sigma_dof")


def takes_sigma_dof(info: MetricInfo) -> bool:
    """Whether the metric's function accepts ``sigma_dof``."""
    return "sigma_dof" in metric_parameters(info)


def takes_labels(info: MetricInfo) -> bool:
    """Whether the metric's function accepts ``labels`` (the list of classes)."""
    return "labels" in metric_parameters(info)


def check_output(output: Any) -> str:
    """What a call of the scorer returns: ``"expected"`` or ``"all"``."""
    if not isinstance(output, str) or output not in OUTPUTS:
        raise ValueError(
            f"output must be one of {OUTPUTS}: 'expected' returns a float, "
            f"'all' a dict of expected, variance and nominal; got {output!r}."
        )
    return output


def check_estimand_option(estimand: Any) -> str:
    """The estimand passed to the metric: one of ``ESTIMANDS``."""
    if not isinstance(estimand, str) or estimand not in ESTIMANDS:
        raise ValueError(f"estimand must be one of {ESTIMANDS}; got {estimand!r}.")
    return estimand


def check_metric_kwargs(metric_kwargs: dict[str, Any] | None) -> dict[str, Any]:
    """A private copy of the metric's further keyword arguments, checked.

    A scorer returns one value, so options giving one score per output or per
    class are rejected, as are the arguments the scorer fills in itself.
    """
    # A private copy: the scorer must not change when the caller's arrays do.
    metric_kwargs = copy.deepcopy(dict(metric_kwargs or {}))
    reserved = RESERVED.intersection(metric_kwargs)
    if reserved:
        raise TypeError(
            f"{sorted(reserved)} cannot be passed as metric keyword arguments: "
            "the scorer fills them in (the noise from its source or from "
            "metadata, sample_weight from metadata, estimand from its own "
            "parameter)."
        )
    if metric_kwargs.get("multioutput") == "raw_values":
        raise ValueError(
            "multioutput='raw_values' gives one score per output, but a scorer "
            "must return a single value; use 'uniform_average' or output weights."
        )
    if "average" in metric_kwargs and metric_kwargs["average"] is None:
        raise ValueError(
            "average=None gives one score per class, but a scorer must return "
            "a single value; use 'binary', 'macro', 'micro' or 'weighted'."
        )
    return metric_kwargs


def metric_parameters(info: MetricInfo) -> dict[str, inspect.Parameter]:
    """The parameters of the metric's function, by name."""
    return dict(inspect.signature(info.function).parameters)


def check_signature_options(
    info: MetricInfo,
    metric_kwargs: dict[str, Any],
    transition_matrix: Any,
    estimand: str,
) -> None:
    """Check the options of a scorer against its metric's signature."""
    parameters = metric_parameters(info)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return
    function = info.function.__name__
    unknown = sorted(set(metric_kwargs) - set(parameters))
    if unknown:
        raise TypeError(
            f"{function} got unexpected keyword argument(s) {unknown}; it "
            f"accepts {sorted(set(parameters) - RESERVED)}."
        )
    if transition_matrix is not None and "transition_matrix" not in parameters:
        raise TypeError(
            f"{function} does not accept a transition_matrix; use q (a flip "
            "probability, constant or per sample)."
        )
    if estimand != "forward" and "estimand" not in parameters:
        raise ValueError(
            f"{function} has no estimand option: only estimand='forward' "
            "is available for this metric."
        )


def accepts_sample_weight(info: MetricInfo) -> bool:
    """Whether the metric's function takes ``sample_weight``."""
    return "sample_weight" in metric_parameters(info)


def require_sample_weight(info: MetricInfo) -> None:
    """Raise TypeError when the metric takes no ``sample_weight``."""
    if not accepts_sample_weight(info):
        raise TypeError(f"{info.function.__name__} does not accept sample_weight.")


def _value_repr(value: Any) -> str:
    """Repr of an option that evaluates back to an equivalent value."""
    if isinstance(value, np.ndarray):
        return repr(value.tolist())
    if isinstance(value, np.generic):
        return repr(value.item())
    return repr(value)


def scorer_repr(scorer: Any) -> str:
    """The repr of a scorer: the ``make_noisy_scorer`` call that rebuilds it."""
    parts = [repr(scorer.metric)]
    if scorer.greater_is_better != scorer._info.greater_is_better or not (
        scorer.greater_is_better
    ):
        parts.append(f"greater_is_better={scorer.greater_is_better}")
    if scorer.sigma is not None:
        parts.append(f"sigma={_source_repr(scorer.sigma)}")
    if scorer.q is not None:
        parts.append(f"q={_source_repr(scorer.q)}")
    if scorer.transition_matrix is not None:
        parts.append(f"transition_matrix={scorer.transition_matrix.tolist()!r}")
    if scorer.estimand != "forward":
        parts.append(f"estimand={scorer.estimand!r}")
    if scorer.output != "expected":
        parts.append(f"output={scorer.output!r}")
    if scorer.sigma_dof is not None:
        parts.append(f"sigma_dof={_source_repr(scorer.sigma_dof)}")
    parts.extend(
        f"{key}={_value_repr(value)}" for key, value in scorer.metric_kwargs.items()
    )
    return f"make_noisy_scorer({', '.join(parts)})"


def undefined_score(info: MetricInfo, estimand: str, n_samples: int) -> NoisyScore:
    """NaN, with a warning, for a metric on fewer samples than it is defined on.

    As scikit-learn's scorers: ``r2_score`` of one sample is NaN with an
    :class:`~sklearn.exceptions.UndefinedMetricWarning`, so that
    ``cross_validate(..., cv=LeaveOneOut())`` reports NaN folds.
    """
    warn(
        f"{info.display_name} is not defined on fewer than {info.min_samples} "
        f"samples; got {n_samples}: the score is NaN, as scikit-learn's.",
        UndefinedMetricWarning,
    )
    nan = float("nan")
    return NoisyScore(
        info.name,
        expected=nan,
        variance=nan,
        nominal=nan,
        n_samples=n_samples,
        estimand=estimand,
    )
