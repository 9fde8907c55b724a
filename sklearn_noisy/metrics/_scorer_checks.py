"""The checks of a noise-aware scorer: its options when it is built, its metadata.

Everything :class:`~sklearn_noisy.metrics.NoisyScorer` checks when it is built:
the sign and response conventions, the noise source (``sigma`` for regression,
``q`` or a constant ``transition_matrix`` for classification), the estimand, the
output and the further keyword arguments of the metric, against the metric's own
signature. And its metadata routing: a scorer whose noise source is left at
``None`` requests ``sigma`` (or ``q``) from its ``score`` method, so that
scikit-learn routes it, sliced to each test fold (see :ref:`metadata_routing` in
the scikit-learn User Guide); the requests are held as ``{param: alias}`` and
turned into scikit-learn's :class:`~sklearn.utils.metadata_routing.MetadataRequest`
on demand. The checks take the metric's registry record and plain values, not
the scorer.
"""

from __future__ import annotations

import copy
import inspect
from typing import Any

import numpy as np
import sklearn
from sklearn.utils.metadata_routing import UNCHANGED, MetadataRequest

from ..utils._noise import _source_repr, check_noise_source, check_transition_matrix
from ..utils._validation import ESTIMANDS
from ._registry import MetricInfo

__all__ = [
    "MissingNoiseError",
    "check_estimand_option",
    "check_greater_is_better",
    "check_metric_kwargs",
    "check_noise_options",
    "check_output",
    "check_response_method",
    "check_sigma_dof_option",
    "check_signature_options",
    "missing_noise_message",
    "require_sample_weight",
    "score_routing",
    "takes",
    "updated_score_request",
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


def takes(info: MetricInfo, parameter: str) -> bool:
    """Whether the metric's function accepts ``parameter`` (e.g. ``"labels"``)."""
    return parameter in metric_parameters(info)


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


def require_sample_weight(info: MetricInfo) -> None:
    """Raise TypeError when the metric takes no ``sample_weight``."""
    if not takes(info, "sample_weight"):
        raise TypeError(f"{info.function.__name__} does not accept sample_weight.")


class MissingNoiseError(ValueError):
    """A scorer that takes its noise from metadata was called without it.

    Raised by :class:`~sklearn_noisy.metrics.NoisyScorer` when it is called on
    an estimator without the ``sigma`` (or ``q``) it requests, e.g. because
    metadata routing is disabled or the noise was not passed to
    ``cross_validate`` or a search. The message names the scorer and the fix.

    A :class:`ValueError`, so ``except ValueError`` and ``except Exception``
    catch it. In ``cross_val_score``, ``cross_validate`` and the searches,
    scikit-learn's ``error_score`` decides what happens: with
    ``error_score="raise"`` it stops the run at the first fold; with the
    default ``error_score=np.nan`` scikit-learn records NaN scores and warns
    "Scoring failed" with this message in the details, and a search warns
    that its test scores are non-finite. Pass ``error_score="raise"`` to make
    a missing noise source stop a search instead of ranking NaNs.

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


def routing_enabled() -> bool:
    """Whether scikit-learn's metadata routing is enabled."""
    return bool(sklearn.get_config().get("enable_metadata_routing", False))


def score_routing(
    owner: Any, score_request: dict[str, Any], accepts_sample_weight: bool
) -> MetadataRequest:
    """The routing of a scorer whose ``score`` method makes ``score_request``.

    ``sample_weight``, when the metric accepts it and nothing was requested, is
    left unset as in scikit-learn's scorers: an error if passed.
    """
    request = MetadataRequest(owner=owner)
    requests = dict(score_request)
    if "sample_weight" not in requests and accepts_sample_weight:
        # As scikit-learn's scorers: an error if passed without a request.
        requests["sample_weight"] = None
    for param, alias in requests.items():
        request.score.add_request(param=param, alias=alias)
    return request


def _check_request(info: MetricInfo, sources: dict[str, Any], key: str) -> None:
    """Raise when a scorer with these ``sources`` cannot take ``key`` from metadata.

    ``sources`` maps ``"sigma"``, ``"q"``, ``"transition_matrix"`` and
    ``"sigma_dof"`` to the scorer's own sources (None where it has none).
    """
    takes = info.noise_parameter
    if key == "sigma_dof" and takes != "sigma":
        raise TypeError(
            f"The {info.name!r} scorer takes q; sigma_dof applies to "
            "regression metrics only."
        )
    if key in ("sigma", "q") and key != takes:
        raise TypeError(f"The {info.name!r} scorer takes {takes}, not {key}.")
    if key != "sigma_dof" and sources["transition_matrix"] is not None:
        raise ValueError(
            "This scorer uses a constant transition_matrix, so it takes no "
            "q from metadata; build it without transition_matrix to route q."
        )
    if sources[key] is not None:
        raise ValueError(
            f"This scorer reads {key} from its own source ({key}="
            f"{_source_repr(sources[key])}), so it cannot also take {key} from "
            f"metadata; build it with {key}=None to route {key}."
        )


def updated_score_request(
    owner: Any,
    requests: dict[str, Any],
    changes: dict[str, Any],
    *,
    info: MetricInfo,
    sources: dict[str, Any],
) -> dict[str, Any]:
    """The ``score`` requests after ``set_score_request(**changes)``.

    ``requests`` are the current ones; ``changes`` maps ``"sigma"``, ``"q"``,
    ``"sigma_dof"`` and ``"sample_weight"`` to ``UNCHANGED``, True, False, None
    or an alias; the aliases are validated by scikit-learn. ``owner`` names the
    scorer in scikit-learn's messages; ``sources`` as for :func:`_check_request`.
    """
    if not routing_enabled():
        raise RuntimeError(
            "set_score_request is only available when metadata routing is "
            "enabled: call sklearn.set_config(enable_metadata_routing=True) "
            "(or use `with sklearn.config_context(enable_metadata_routing="
            "True):`)."
        )
    changes = {k: v for k, v in changes.items() if v is not UNCHANGED}
    for key in sorted(changes, key=("sigma", "q", "sigma_dof", "sample_weight").index):
        if key == "sample_weight":
            require_sample_weight(info)
        else:
            _check_request(info, sources, key)
    requests = dict(requests)
    probe = MetadataRequest(owner=owner)  # validates the aliases
    for param, alias in changes.items():
        probe.score.add_request(param=param, alias=alias)
    requests.update(probe.score.requests)
    return requests


def missing_noise_message(scorer_repr: str, metric: str, key: str, alias: Any) -> str:
    """Why a scorer called without its routed ``key`` got none, and what to do.

    ``scorer_repr`` names the scorer, ``alias`` is its request for ``key``.
    """
    name = alias if isinstance(alias, str) and alias.isidentifier() else key
    message = (
        f"{scorer_repr} takes {key} from metadata, but it was called without {key}. "
    )
    if alias is False or alias is None:
        message += (
            f"Its request for {key} is set to {alias}, so scikit-learn never "
            f"passes {key} to it: call set_score_request({key}=True). "
        )
    elif not routing_enabled():
        message += (
            "Metadata routing is disabled, so scikit-learn passes no metadata to "
            "scorers: enable it with sklearn.set_config("
            "enable_metadata_routing=True) (or inside `with "
            "sklearn.config_context(enable_metadata_routing=True):`), then "
        )
    else:
        message += "With metadata routing enabled, "
    if alias is not False and alias is not None:
        message += (
            f"pass {name} with the data, e.g. cross_val_score(..., "
            f"params={{'{name}': {name}}}), cross_validate(..., params="
            f"{{'{name}': {name}}}) or GridSearchCV(...).fit(X, y, "
            f"{name}={name}); a direct call takes scorer(estimator, X, y, "
            f"{key}={key}). "
        )
    alternatives = f"{key}=0.1 (a constant), {key}='<column of X>' or {key}=callable"
    if key == "q":
        alternatives += " or transition_matrix=T"
    message += (
        "Alternatively give the scorer its own source: make_noisy_scorer("
        f"{metric!r}, {alternatives})."
    )
    return message
