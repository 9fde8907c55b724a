"""What a scorer takes: its noise keywords and metric options, checked, and the
error raised when the noise it takes from metadata is missing."""

from __future__ import annotations

import copy
import inspect
from typing import Any

import sklearn

from ..utils._noise import check_shared_offsets
from ._registry import MetricInfo

#: The noise sources of a scorer: a constant, a column of X, a callable or routed.
SOURCES = ("sigma", "q", "sigma_dof", "sigma_shared", "sigma_shared_dof")
#: The keywords of each kind of label noise (besides the shared batch offsets).
_KINDS = {
    "sigma": ("regression", ("sigma", "sigma_dof")),
    "q": ("classification", ("q", "transition_matrix")),
}
OFFSETS = ("groups", "sigma_shared", "sigma_shared_dof")
#: Keyword arguments of the metric that the scorer itself fills in.
_RESERVED = frozenset(
    (*SOURCES, *OFFSETS, "transition_matrix", "sample_weight", "estimand")
).union(("y_true", "y_pred", "y_proba", "test_set_sampling"))


class MissingNoiseError(ValueError):
    """A scorer that takes its noise from metadata was called without it.

    A :class:`ValueError`: in scikit-learn's cross-validation and searches,
    ``error_score`` decides (:ref:`metadata_routing`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import Ridge
    >>> from sklearn_noisy.metrics import MissingNoiseError, make_noisy_scorer
    >>> X, y = np.arange(8.0).reshape(4, 2), np.arange(4.0)
    >>> scorer = make_noisy_scorer("mean_squared_error")
    >>> try:
    ...     scorer(Ridge().fit(X, y), X, y)
    ... except MissingNoiseError as exc:
    ...     print(str(exc)[:60])
    make_noisy_scorer('mean_squared_error', greater_is_better=Fa
    """


def takes(info: MetricInfo, parameter: str) -> bool:
    return parameter in inspect.signature(info.function).parameters


def routing_enabled() -> bool:
    return bool(sklearn.get_config().get("enable_metadata_routing", False))


def check_noise_key(info: MetricInfo, key: str) -> None:
    """Raise a TypeError for a noise keyword ``key`` that the metric does not take."""
    kind = info.noise_parameter
    if key in OFFSETS:
        if not takes(info, "sigma_shared"):
            raise TypeError(
                f"The {info.name!r} metric does not model shared batch offsets, "
                f"so it takes no {key}."
            )
    elif key not in _KINDS[kind][1]:
        other = _KINDS["q" if kind == "sigma" else "sigma"][0]
        raise TypeError(
            f"{info.name!r} is a {_KINDS[kind][0]} metric: it takes {kind}, not "
            f"{key} ({key} applies to {other} metrics only)."
        )


def check_summary_source(sigma_shared: Any, sigma_shared_dof: Any) -> None:
    """A ``BatchOffsetSummary`` as the scorer's ``sigma_shared``: the metric's own
    checks (its analysis present, no ``sigma_shared_dof`` beside it)."""
    if hasattr(sigma_shared, "batch_size"):
        check_shared_offsets([0], sigma_shared, 1, sigma_shared_dof)


def check_metric_kwargs(info: MetricInfo, metric_kwargs: Any) -> dict[str, Any]:
    """A private copy of the metric's further keyword arguments, checked."""
    metric_kwargs = copy.deepcopy(dict(metric_kwargs or {}))
    parameters = set(inspect.signature(info.function).parameters)
    if _RESERVED.intersection(metric_kwargs):
        raise TypeError(
            f"{sorted(_RESERVED.intersection(metric_kwargs))} cannot be passed as "
            "metric keyword arguments: the scorer fills them in (the noise from its "
            "source or from metadata, sample_weight from metadata, estimand and "
            "test_set_sampling from its own parameters)."
        )
    if set(metric_kwargs) - parameters:
        raise TypeError(
            f"{info.function.__name__} got unexpected keyword argument(s) "
            f"{sorted(set(metric_kwargs) - parameters)}; it accepts "
            f"{sorted(parameters - _RESERVED)}."
        )
    multioutput = metric_kwargs.get("multioutput")
    if (isinstance(multioutput, str) and multioutput == "raw_values") or (
        "average" in metric_kwargs and metric_kwargs["average"] is None
    ):
        raise ValueError(
            "multioutput='raw_values' and average=None give one score per output "
            "or class, but a scorer must return a single value."
        )
    return metric_kwargs


def missing_noise_error(scorer: Any) -> MissingNoiseError:
    """Why ``scorer`` got no routed noise, and what to do."""
    key = scorer.requires_noise
    alias = scorer._score_request.get(key)
    name = alias if isinstance(alias, str) and alias.isidentifier() else key
    message = f"{scorer!r} takes {key} from metadata, but it was called without {key}. "
    if alias is False or alias is None:
        message += (
            f"Its request for {key} is set to {alias}, so scikit-learn never "
            f"passes {key} to it: call set_score_request({key}=True). "
        )
    else:
        if not routing_enabled():
            message += (
                "Metadata routing is disabled, so scikit-learn passes no metadata "
                "to scorers: enable it with sklearn.set_config("
                "enable_metadata_routing=True), then "
            )
        message += (
            f"pass {name} with the data, e.g. cross_val_score(..., params="
            f"{{'{name}': {name}}}) or GridSearchCV(...).fit(X, y, {name}={name}). "
        )
    alternatives = f"{key}=0.1 (a constant), {key}='<column of X>' or {key}=callable"
    if key == "q":
        alternatives += " or transition_matrix=T"
    return MissingNoiseError(
        f"{message}A direct call takes scorer(estimator, X, y, {key}={key}) (or "
        f"pass {key}= to score_predictions). Alternatively give the scorer its own "
        f"source: make_noisy_scorer({scorer.metric!r}, {alternatives})."
    )
