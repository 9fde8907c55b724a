"""Pooling the folds of a cross-validation into one score per metric.

Over disjoint test sets the out-of-fold predictions are concatenated and every
metric is scored on them (user guide: :ref:`formula_pooling`). The
per-sample-additive regression losses (the registry's ``additive`` records)
are pooled from the fold results instead, which is the same number without a
second pass over the data.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, NamedTuple

import numpy as np

from .._noisy_score import NoisyScore
from ..metrics import get_metric_info, get_metric_names
from ..utils._arrays import weighted_totals
from ..utils._sklearn_compat import _safe_indexing
from ..utils._warnings import quiet, warn
from ._validation import Noise, _classes_kwarg, _noise_kwargs, _take_noise

__all__ = ["add_test_set_sampling"]


def _pool_additive(scores: list[NoisyScore]) -> NoisyScore:
    """Pool per-sample-additive fold scores: ``Σ w_k E_k`` and ``Σ w_k² V_k``."""
    n = np.array([s.n_samples for s in scores], dtype=float)
    total = float(n.sum())
    expected, nominal, variance = weighted_totals(
        n / total,
        slice(None),
        np.array([s.expected for s in scores], dtype=float),
        np.array([s.nominal for s in scores], dtype=float),
        np.array([s.variance for s in scores], dtype=float),
    )
    methods = {s.method for s in scores}
    return NoisyScore(
        scores[0].metric,
        expected=expected,
        variance=variance,
        nominal=nominal,
        n_samples=int(total),
        method=methods.pop() if len(methods) == 1 else "delta",
        estimand=scores[0].estimand,
    )


def _pools_from_folds(scorer: Any) -> bool:
    """Whether a scorer's pooled score is the weighted sum of its fold scores.

    Only forward scores of additive metrics: a sum of floored per-fold variances
    would overstate the pooled variance.
    """
    metric = scorer.metric
    return (
        getattr(scorer, "estimand", "forward") == "forward"
        and metric in get_metric_names()
        and get_metric_info(metric).additive
        and not getattr(scorer, "metric_kwargs", None)
    )


def _pooled_method(scorer: Any, responses: dict[str, np.ndarray]) -> str:
    """The recorded out-of-fold response a scorer takes (its response method)."""
    methods = (
        [scorer.response_method]
        if isinstance(scorer.response_method, str)
        else list(scorer.response_method)
    )
    for method in methods:
        if method in responses:
            return method
    raise ValueError(
        f"No out-of-fold {methods} responses were recorded for {scorer.metric!r}."
    )


class OutOfFold(NamedTuple):
    """The out-of-fold responses of a cross-validation, sorted by sample index.

    ``indices`` is None (and ``responses`` empty) when the test sets overlap.
    """

    indices: np.ndarray | None
    responses: dict[str, np.ndarray]


def _out_of_fold(results: list[dict]) -> OutOfFold:
    """Concatenate the responses of the fitted folds, in sample order."""
    fitted = [r for r in results if r["fit_error"] is None]
    indices = np.concatenate([r["test"] for r in fitted])
    order = np.argsort(indices, kind="stable")
    indices = indices[order]
    if indices.shape[0] > 1 and bool(np.any(indices[1:] == indices[:-1])):
        warn(
            "The test sets of the cross-validation overlap (e.g. ShuffleSplit "
            "or repeated splits), so the out-of-fold predictions cannot be "
            "pooled: pooled_ is empty and oof_predictions_ is None. Use a "
            "splitter whose test sets are disjoint (KFold, StratifiedKFold, "
            "GroupKFold, ...) to get pooled scores.",
            UserWarning,
        )
        return OutOfFold(None, {})
    methods = set(fitted[0]["responses"]).intersection(
        *(r["responses"] for r in fitted[1:])
    )
    responses = {
        method: np.concatenate([r["responses"][method] for r in fitted])[order]
        for method in methods
    }
    return OutOfFold(indices, responses)


def _oof_data(
    oof: OutOfFold, X: Any, y: Any, noise: Noise, n_samples: int
) -> tuple[Any, Any, Noise]:
    """``X``, ``y`` and the noise of the out-of-fold samples, in their order."""
    if oof.indices.shape[0] == n_samples:  # a partition: no copy of X or y
        X_oof, y_oof = X, y
    else:
        X_oof, y_oof = _safe_indexing(X, oof.indices), _safe_indexing(y, oof.indices)
    return X_oof, y_oof, _take_noise(noise, oof.indices)


def _pool_scores(
    results: list[dict],
    oof: OutOfFold,
    X: Any,
    y: Any,
    *,
    n_samples: int,
    scorers: dict[str, Any],
    noise: Noise,
    classes: np.ndarray | None,
) -> dict[str, NoisyScore]:
    """One pooled score per metric that succeeded on every fitted fold."""
    fitted = [r for r in results if r["fit_error"] is None]
    responses = oof.responses
    X_oof, y_oof, noise_oof = _oof_data(oof, X, y, noise, n_samples)
    pooled = {}
    for key, scorer in scorers.items():
        scores = [r["scores"][key] for r in fitted]
        complete = all(
            r["scores"][key] is not None and key not in r.get("undefined", ())
            for r in fitted
        )
        if complete and _pools_from_folds(scorer):
            pooled[key] = _pool_additive(scores)
            continue
        # Scored once on all the out-of-fold predictions, also when the
        # metric failed on (or is not defined for) some fold.
        method = _pooled_method(scorer, responses)
        pooled[key] = scorer.score_predictions(
            y_oof,
            responses[method],
            X=X_oof,
            **_noise_kwargs(scorer, noise_oof),
            **_classes_kwarg(method, classes),
        )
    return pooled


def _pool_or_warn(results: list[dict], oof: OutOfFold, X: Any, y: Any, **kwargs: Any):
    """:func:`_pool_scores` metric by metric; a metric that cannot be pooled warns.

    Never drops a metric silently: the warning names it and gives the error.
    """
    pooled = {}
    for key, scorer in kwargs.pop("scorers").items():
        try:
            pooled.update(
                _pool_scores(results, oof, X, y, scorers={key: scorer}, **kwargs)
            )
        except Exception as exc:  # reported: the fold results stay
            warn(
                f"{key!r} could not be pooled over the out-of-fold predictions, "
                f"so pooled_ has no entry for it: {type(exc).__name__}: {exc}",
                UserWarning,
            )
    return pooled


def _tagged(score: NoisyScore, estimand: str) -> NoisyScore:
    """``score`` labelled with the estimand it was computed for."""
    if score.estimand == estimand:
        return score
    return dataclasses.replace(score, estimand=estimand)


def _estimand_view(results: list[dict], key: str, estimand: str) -> list[dict]:
    """The fold results as if ``key`` had been scored for ``estimand`` only."""
    return [
        {
            "fit_error": r["fit_error"],
            "scores": {key: r["estimates"].get(key, {}).get(estimand)},
        }
        for r in results
    ]


def _pool_estimates(
    results: list[dict],
    oof: OutOfFold,
    X: Any,
    y: Any,
    *,
    n_samples: int,
    scorers: dict[str, Any],
    plans: dict[str, Any],
    pooled: dict[str, NoisyScore],
    noise: Noise,
    classes: np.ndarray | None,
) -> dict[str, dict[str, NoisyScore]]:
    """Every shown estimand of every metric, pooled (:ref:`formula_pooling`)."""
    estimates: dict[str, dict[str, NoisyScore]] = {}
    for key, scorer in scorers.items():
        estimates[key] = {}
        for estimand in plans[key].shown:
            if estimand == scorer.estimand:
                score = pooled.get(key)
            else:
                try:
                    score = _pool_scores(
                        _estimand_view(results, key, estimand),
                        oof,
                        X,
                        y,
                        n_samples=n_samples,
                        scorers={key: plans[key].variants[estimand]},
                        noise=noise,
                        classes=classes,
                    ).get(key)
                except (ValueError, ArithmeticError):  # the folds' notes say why
                    score = None
            if score is not None:
                estimates[key][estimand] = _tagged(score, estimand)
    return estimates


def _sampling_scorer(scorer: Any) -> Any:
    """A copy of ``scorer`` whose metric also estimates the test-set sampling."""
    sampling = copy.copy(scorer)
    sampling.metric_kwargs = {**scorer.metric_kwargs, "test_set_sampling": True}
    return sampling


def add_test_set_sampling(
    estimates: dict[str, dict[str, NoisyScore]],
    pooled: dict[str, NoisyScore],
    oof: OutOfFold,
    X: Any,
    y: Any,
    *,
    n_samples: int,
    scorers: dict[str, Any],
    plans: dict[str, Any],
    noise: Noise,
    classes: np.ndarray | None,
) -> None:
    """Give every pooled estimate its test-set sampling variance, in place.

    ``estimates`` is ``pooled_estimates_``; ``pooled`` (``pooled_``, each
    scorer's own estimand) receives the same scores.

    Each is scored again on the concatenated out-of-fold predictions with
    ``test_set_sampling=True`` (user guide: :ref:`error_budget`); its own
    numbers stay, the sampling variance and its method are added. A metric
    whose sampling variance fails warns and keeps its estimate without it.
    """
    responses = oof.responses
    X_oof, y_oof, noise_oof = _oof_data(oof, X, y, noise, n_samples)
    for key, scorer in scorers.items():
        for estimand, score in estimates.get(key, {}).items():
            own = estimand == scorer.estimand
            variant = scorer if own else plans[key].variants.get(estimand)
            if variant is None or not hasattr(variant, "metric_kwargs"):
                continue
            method = _pooled_method(variant, responses)
            try:
                with quiet():  # the pooled estimate warned
                    sampled = _sampling_scorer(variant).score_predictions(
                        y_oof,
                        responses[method],
                        X=X_oof,
                        **_noise_kwargs(variant, noise_oof),
                        **_classes_kwarg(method, classes),
                    )
            except Exception as exc:  # reported: the estimate stays
                warn(
                    f"The test-set sampling variance of the pooled {key!r} "
                    f"({estimand}) could not be computed: {type(exc).__name__}: "
                    f"{exc}",
                    UserWarning,
                )
                continue
            estimates[key][estimand] = dataclasses.replace(
                score,
                sampling_variance=sampled.sampling_variance,
                sampling_method=sampled.sampling_method,
                sampling_dof=sampled.sampling_dof,
            )
            if own and key in pooled:
                pooled[key] = estimates[key][estimand]
