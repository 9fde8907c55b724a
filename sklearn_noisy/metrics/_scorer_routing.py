"""Metadata routing of a noise-aware scorer: what it requests, and what to say when
the noise it requests does not arrive.

A :class:`~sklearn_noisy.metrics.NoisyScorer` whose noise source is left at
``None`` requests ``sigma`` (or ``q``) from its ``score`` method, so that
scikit-learn routes it, sliced to each test fold (see :ref:`metadata_routing` in
the scikit-learn User Guide). The requests are held as ``{param: alias}`` and
turned into scikit-learn's public
:class:`~sklearn.utils.metadata_routing.MetadataRequest` on demand.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import sklearn
from sklearn.utils.metadata_routing import UNCHANGED, MetadataRequest

from ..utils._noise import _source_repr
from ._scorer_options import require_sample_weight

if TYPE_CHECKING:
    from ._noisy_scorer import NoisyScorer

__all__ = [
    "MissingNoiseError",
    "check_score_metadata",
    "missing_noise_message",
    "routing_enabled",
    "score_routing",
    "updated_score_request",
]


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


def _check_noise_request(scorer: NoisyScorer, key: str) -> None:
    """Raise when the scorer cannot take ``key`` from routed metadata."""
    if key != scorer.requires_noise:
        raise TypeError(
            f"The {scorer.metric!r} scorer takes {scorer.requires_noise}, not {key}."
        )
    if scorer.transition_matrix is not None:
        raise ValueError(
            "This scorer uses a constant transition_matrix, so it takes no "
            "q from metadata; build it without transition_matrix to route q."
        )
    source = scorer.sigma if key == "sigma" else scorer.q
    if source is not None:
        raise ValueError(
            f"This scorer reads {key} from its own source ({key}="
            f"{_source_repr(source)}), so it cannot also take {key} from "
            f"metadata; build it with {key}=None to route {key}."
        )


def _check_sigma_dof_request(scorer: NoisyScorer) -> None:
    """Raise when the scorer cannot take ``sigma_dof`` from routed metadata."""
    if scorer.requires_noise != "sigma":
        raise TypeError(
            f"The {scorer.metric!r} scorer takes q; sigma_dof applies to "
            "regression metrics only."
        )
    if scorer.sigma_dof is not None:
        raise ValueError(
            "This scorer reads sigma_dof from its own source (sigma_dof="
            f"{_source_repr(scorer.sigma_dof)}), so it cannot also take sigma_dof "
            "from metadata; build it with sigma_dof=None to route sigma_dof."
        )


def updated_score_request(
    scorer: NoisyScorer, changes: dict[str, Any]
) -> dict[str, Any]:
    """The scorer's ``score`` requests after ``set_score_request(**changes)``.

    ``changes`` maps ``"sigma"``, ``"q"``, ``"sigma_dof"`` and ``"sample_weight"`` to
    ``UNCHANGED``, True, False, None or an alias; the aliases are validated by
    scikit-learn.
    """
    if not routing_enabled():
        raise RuntimeError(
            "set_score_request is only available when metadata routing is "
            "enabled: call sklearn.set_config(enable_metadata_routing=True) "
            "(or use `with sklearn.config_context(enable_metadata_routing="
            "True):`)."
        )
    changes = {k: v for k, v in changes.items() if v is not UNCHANGED}
    for key in ("sigma", "q"):
        if key in changes:
            _check_noise_request(scorer, key)
    if "sigma_dof" in changes:
        _check_sigma_dof_request(scorer)
    if "sample_weight" in changes:
        require_sample_weight(scorer._info)
    requests = dict(scorer._score_request)
    probe = MetadataRequest(owner=scorer)  # validates the aliases
    for param, alias in changes.items():
        probe.score.add_request(param=param, alias=alias)
    requests.update(probe.score.requests)
    return requests


def missing_noise_message(scorer: NoisyScorer, key: str) -> str:
    """Why a scorer called without its routed ``key`` got none, and what to do."""
    alias = scorer._score_request.get(key)
    name = alias if isinstance(alias, str) and alias.isidentifier() else key
    message = f"{scorer!r} takes {key} from metadata, but it was called without {key}. "
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
        f"{scorer.metric!r}, {alternatives})."
    )
    return message


def check_score_metadata(scorer: NoisyScorer, metadata: dict[str, Any]) -> None:
    """Check the metadata a scorer is called with on an estimator.

    Raises
    ------
    TypeError
        For metadata the scorer does not take.
    MissingNoiseError
        When the scorer takes its noise from metadata and none was given.
    """
    key = scorer.requires_noise
    allowed = {key, "sample_weight"}
    if key == "sigma":
        allowed.add("sigma_dof")
    unknown = sorted(set(metadata) - allowed)
    if unknown:
        raise TypeError(
            f"{scorer!r} got unexpected metadata {unknown}; it accepts "
            f"{sorted(allowed)}."
        )
    source = scorer.sigma if key == "sigma" else scorer.q
    routed = source is None and scorer.transition_matrix is None
    if routed and metadata.get(key) is None:
        raise MissingNoiseError(missing_noise_message(scorer, key))
