"""Which noisy scorers a cross-validation runs: the defaults and ``scoring``."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import numpy as np
from sklearn.base import is_classifier
from sklearn.utils.multiclass import type_of_target

from ..metrics import (
    NoisyScorer,
    get_metric_info,
    get_metric_names,
    get_noisy_scorer,
    get_noisy_scorer_names,
    make_noisy_scorer,
)

__all__ = [
    "check_noisy_scoring",
    "check_scorers_noise",
    "default_metrics",
    "default_scoring",
]


def default_metrics(estimator: Any, y: Any) -> list[str]:
    """The metrics that ``scoring="default"`` reports for ``estimator`` on ``y``:
    the records whose ``default_targets`` hold the target type, one on
    probabilities only for an estimator with ``predict_proba``."""
    if not is_classifier(estimator):
        target = "continuous"
    else:
        target = "binary" if type_of_target(y) == "binary" else "multiclass"
    infos = [get_metric_info(name) for name in get_metric_names()]
    proba = hasattr(estimator, "predict_proba")
    return [
        info.name
        for info in infos
        if target in info.default_targets
        and (proba or info.response_method != "predict_proba")
    ]


def default_scoring(metrics: list[str], y: Any) -> list[Any]:
    """Default metric names as scoring entries for the target ``y``; a metric
    taking ``pos_label`` (F1) is scored for the larger of two labels when neither
    is 1."""
    classes = np.unique(np.asarray(y))
    if classes.size != 2 or any(c == 1 for c in classes.tolist()):
        return list(metrics)
    return [
        make_noisy_scorer(name, pos_label=classes[-1])
        if "pos_label" in inspect.signature(get_metric_info(name).function).parameters
        else name
        for name in metrics
    ]


def _build_scorer(item: Any) -> Any:
    """A NoisyScorer from a scorer, a named scorer or a metric name."""
    if isinstance(item, str) and item not in get_noisy_scorer_names():
        return make_noisy_scorer(item)
    if isinstance(item, (str, NoisyScorer)):
        return get_noisy_scorer(item)  # a scorer as it is
    raise TypeError(
        "scoring entries must be metric names (e.g. 'mean_squared_error') or "
        f"NoisyScorer objects from make_noisy_scorer; got {item!r}."
    )


def check_noisy_scoring(scoring: Any, estimator: Any, y: Any) -> dict[str, Any]:
    """``scoring`` as an ordered dict ``{result key: NoisyScorer}``; keys are the
    scorers' metric names unless a dict gives them."""
    if isinstance(scoring, str) and scoring == "default":
        scoring = default_scoring(default_metrics(estimator, y), y)
    if isinstance(scoring, (str, NoisyScorer)):
        scoring = [scoring]
    if isinstance(scoring, Mapping):
        if not scoring:
            raise ValueError("scoring must not be an empty dict.")
        for key in scoring:
            if not isinstance(key, str):
                raise TypeError(f"scoring dict keys must be strings; got {key!r}.")
        return {key: _build_scorer(item) for key, item in scoring.items()}
    if not isinstance(scoring, (list, tuple)) or not scoring:
        raise TypeError(
            "scoring must be 'default', a metric name, a NoisyScorer, a non-empty "
            f"list of them or a dict {{name: scorer}}; got {scoring!r}."
        )
    scorers: dict[str, Any] = {}
    for scorer in map(_build_scorer, scoring):
        if scorer.metric in scorers:
            raise ValueError(
                f"scoring lists the metric {scorer.metric!r} twice; pass a dict "
                "{name: scorer} to give each scorer its own name."
            )
        scorers[scorer.metric] = scorer
    return scorers


def check_scorers_noise(scorers: dict[str, Any], noise: str | None) -> None:
    """Reject noise of the wrong kind for a scorer, or none where one is needed;
    ``noise``: the keyword given to ``fit`` or None."""
    for key, scorer in scorers.items():
        takes = scorer.requires_noise
        keywords = "sigma" if takes == "sigma" else "q or transition_matrix"
        if scorer._counts and noise is not None:
            raise TypeError(
                f"The {key!r} scorer takes count labels (noise='poisson'), "
                f"whose variance is the count itself: do not pass {noise}."
            )
        routed = getattr(scorer, takes) is None and scorer.transition_matrix is None
        if noise is None and routed and not scorer._counts:
            fix = "fit(X, y, sigma=sigma)"
            if takes == "q":
                fix = "fit(X, y, q=q) or fit(X, y, transition_matrix=T)"
            raise ValueError(
                f"The {key!r} metric takes the label noise from fit: pass {fix}, "
                "or give its scorer a source of its own, "
                f"make_noisy_scorer({scorer.metric!r}, {takes}=...)."
            )
        if noise is not None and (noise == "sigma") != (takes == "sigma"):
            kind = "regression" if takes == "sigma" else "classification"
            raise TypeError(
                f"The {key!r} metric is a {kind} metric (noise {keywords}), but "
                f"{noise} was given: pass {keywords}."
            )
