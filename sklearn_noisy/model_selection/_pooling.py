"""Pooling the folds of a cross-validation into one score per metric
(:ref:`formula_pooling`): the out-of-fold predictions scored at once, the
forward scores of additive metrics pooled from the folds' (no second pass)."""

from __future__ import annotations

import dataclasses
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from .._noisy_score import NoisyScore
from ..metrics import get_metric_info
from ..utils._arrays import weighted_totals
from ..utils._sklearn_compat import _num_samples, _safe_indexing
from ..utils._warnings import quiet, warn
from ._validation import score_estimands

__all__ = ["pool_scores"]


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


class OutOfFold(NamedTuple):
    """The out-of-fold responses by sorted sample index (None: tests overlap)."""

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


def _warn_sampling(key: str, estimand: str, exc: Exception) -> None:
    warn(
        f"The test-set sampling variance of the pooled {key!r} ({estimand}) "
        f"could not be computed: {type(exc).__name__}: {exc}",
        UserWarning,
    )


def pool_scores(
    results: list[dict], oof: OutOfFold, X: Any, y: Any, setup: dict, sampling: Any
) -> tuple[dict[str, NoisyScore], dict[str, dict[str, NoisyScore]]]:
    """``pooled_`` and ``pooled_estimates_``: the estimands not pooled from the
    folds scored on the out-of-fold predictions in one call, with their sampling."""
    fitted = [r for r in results if r["fit_error"] is None]
    noise = setup["noise"]
    if oof.indices.shape[0] != _num_samples(y):  # not a partition: the tested
        X, y = _safe_indexing(X, oof.indices), _safe_indexing(y, oof.indices)
        noise = None if noise is None else noise.take(oof.indices)
    pooled: dict[str, NoisyScore] = {}
    estimates: dict[str, dict[str, NoisyScore]] = {}
    for key, scorer in setup["scorers"].items():
        own, shown = scorer.estimand, setup["plans"][key].shown
        score = partial(
            score_estimands,
            scorer,
            y,
            oof.responses,
            X,
            noise=noise,
            classes=setup["classes"],
        )
        folded = {}
        info = get_metric_info(scorer.metric)
        if "forward" in shown and info.additive and not scorer.metric_kwargs:
            # the forward score of an additive metric pooled from complete folds
            # (not truth or remeasurement: their floored fold variances would
            # add up too much)
            folds = [(r["scores"][key] or {}).get("forward") for r in fitted]
            if all(s is not None for s in folds):
                folded = {"forward": _pool_additive(folds)}
        # Scored once on all the out-of-fold predictions, also when the
        # metric failed on (or is not defined for) some fold.
        rest = tuple(e for e in shown if e not in folded)
        scores = _score_oof(score, key, rest, sampling)
        if sampling is not False:
            folded = _add_sampling(score, key, folded, sampling)
        scores.update(folded)
        if isinstance(scores.get(own), Exception):
            exc = scores[own]
            warn(
                f"{key!r} could not be pooled over the out-of-fold predictions, "
                f"so pooled_ has no entry for it: {type(exc).__name__}: {exc}",
                UserWarning,
            )
        elif isinstance(scores.get(own), NoisyScore):
            pooled[key] = scores[own]
        estimates[key] = {}
        for estimand in shown:
            found = scores.get(estimand)
            if isinstance(found, Exception):
                if estimand != own and not isinstance(
                    found, (ValueError, ArithmeticError)
                ):
                    raise found
            elif found is not None:  # else the folds' notes say why
                estimates[key][estimand] = (
                    found
                    if found.estimand == estimand
                    else dataclasses.replace(found, estimand=estimand)
                )
    return pooled, estimates


def _score_oof(
    score: partial, key: str, estimands: tuple[str, ...], sampled: Any
) -> dict[str, Any]:
    """``estimands`` on the out-of-fold predictions; a failed sampling warns."""
    if not estimands:
        return {}
    try:
        scores = score(estimands=estimands, test_set_sampling=sampled)
    except Exception as exc:  # common to every estimand: none is pooled
        return dict.fromkeys(estimands, exc)
    failed = tuple(e for e in estimands if isinstance(scores[e], Exception))
    if sampled is not False and failed:
        for estimand, again in score(estimands=failed, test_set_sampling=False).items():
            if isinstance(again, NoisyScore):
                _warn_sampling(key, estimand, scores[estimand])
                scores[estimand] = again
    return scores


def _add_sampling(
    score: partial, key: str, known: dict[str, NoisyScore], option: Any
) -> dict[str, NoisyScore]:
    """The fold-pooled ``known`` scores with their test-set sampling (their
    warnings, the folds' again, silenced)."""
    if not known:
        return known
    try:
        with quiet():
            sampled = score(
                estimands=tuple(known), test_set_sampling=option, known=known
            )
    except Exception as exc:
        sampled = dict.fromkeys(known, exc)
    for estimand, found in sampled.items():
        if isinstance(found, Exception):
            _warn_sampling(key, estimand, found)
            sampled[estimand] = known[estimand]
    return sampled
