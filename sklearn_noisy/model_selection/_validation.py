"""Running the folds of a noisy cross-validation (estimands, failures,
progress) and pooling them into one score per metric (:ref:`formula_pooling`):
the out-of-fold predictions scored at once, the forward scores of additive
metrics pooled from the folds' (no second pass)."""

from __future__ import annotations

import contextvars
import copy
import dataclasses
import math
import sys
import time
from collections import Counter
from contextlib import nullcontext
from functools import partial
from traceback import format_exc
from typing import Any, NamedTuple, TextIO

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.exceptions import FitFailedWarning, UndefinedMetricWarning
from sklearn.utils.validation import column_or_1d

from .._noisy_score import NoisyScore
from ..metrics import get_metric_info
from ..utils._arrays import weighted_totals
from ..utils._noise import FlipNoise, GaussianNoise
from ..utils._sklearn_compat import (
    _check_method_params,
    _get_feature_names,
    _num_features,
    _num_samples,
    _safe_indexing,
    get_tags,
)
from ..utils._validation import resolve_estimand
from ..utils._warnings import quiet, warn
from ._report import _std

__all__: list[str] = []

#: The label noise of a cross-validation: Gaussian errors, flips or none given.
Noise = GaussianNoise | FlipNoise | None


class EstimandPlan(NamedTuple):
    """The estimands ``shown`` for a metric, the ``lead`` and the ``requested``."""

    shown: tuple[str, ...]
    lead: str
    requested: str


def plan_estimands(scorer: Any, estimand: str) -> EstimandPlan:
    """The estimands reported for ``scorer``: truth when offered, the lead
    (:func:`~sklearn_noisy.utils._validation.resolve_estimand`'s) and forward."""
    offered = scorer.estimands
    lead = resolve_estimand(estimand, offered)
    wanted = {"truth", "forward", lead, scorer.estimand}
    order = ("truth", "remeasurement", "forward")
    shown = tuple(e for e in order if e in wanted and e in offered)
    return EstimandPlan(shown, lead, "truth" if estimand == "auto" else estimand)


def _check_noise(
    sigma: Any,
    q: Any,
    transition_matrix: Any,
    y: Any,
    sigma_dof: Any,
    offsets: tuple[Any, Any, Any],
) -> Noise:
    """The label noise validated once, before any fold is fitted; ``offsets``:
    ``(groups, sigma_shared, sigma_shared_dof)`` (groups used with sigma_shared)."""
    groups, sigma_shared, sigma_shared_dof = offsets
    n_samples = _num_samples(y)
    if sigma_shared is not None and sigma is None:
        raise TypeError(
            "sigma_shared (the SD of a batch's shared offset) needs sigma, the "
            "labels' own standard errors, and groups, their batches."
        )
    if sigma_dof is not None and sigma is None:
        raise TypeError(
            "sigma_dof (the degrees of freedom of sigma) needs sigma: pass both, "
            "e.g. sigma=summary.sigma, sigma_dof=summary.sigma_dof."
        )
    if sigma is not None and (q is not None or transition_matrix is not None):
        raise TypeError(
            "Pass sigma (regression: Gaussian label errors) or q / "
            "transition_matrix (classification: label flips), not both."
        )
    if sigma is not None:
        return GaussianNoise.from_params(
            sigma,
            (n_samples, *np.shape(y)[1:2]),
            sigma_dof=sigma_dof,
            groups=None if sigma_shared is None else groups,
            sigma_shared=sigma_shared,
            sigma_shared_dof=sigma_shared_dof,
        )
    if q is not None or transition_matrix is not None:
        return FlipNoise.from_params(
            q, transition_matrix, n_samples=n_samples, n_classes=None
        )
    return None


def check_batches_in_folds(noise: Noise, splits: list[tuple[Any, Any]]) -> None:
    """Warn when test folds cut through batches with shared offsets
    (:ref:`shared_offsets`)."""
    shared = getattr(noise, "shared", None)
    if shared is None:
        return
    seen = np.zeros(shared.n_groups, dtype=int)
    for _, test in splits:
        seen[np.unique(shared.codes[test])] += 1
    if np.any(seen > 1):
        warn(
            f"{int(np.sum(seen > 1))} batch(es) of groups fall in several test "
            "folds: their shared offset correlates the folds' label errors, and "
            "the model was trained on labels sharing a test batch's offset. Split "
            "on the batches with cv=GroupKFold(...) and groups=."
        )


def _noise_name(noise: Noise) -> str | None:
    """The keyword the noise was given by: ``sigma``, ``q``, ``transition_matrix``."""
    if isinstance(noise, GaussianNoise):
        return "sigma"
    if isinstance(noise, FlipNoise):
        return "q" if noise.matrix is None else "transition_matrix"
    return None


def score_estimands(
    scorer: Any, estimands: tuple[str, ...], data: dict[str, Any], **options: Any
) -> dict[str, Any]:
    """``{estimand: NoisyScore or the exception}`` from one scorer call on
    ``data``: ``y``, ``X``, ``responses``, ``classes`` and the validated noise
    (``sigma`` as the GaussianNoise)."""
    noise = data["noise"]
    if scorer.requires_noise == "q" and isinstance(noise, FlipNoise):
        options.update(q=noise.q, transition_matrix=noise.matrix)
    elif scorer.requires_noise != "q" and isinstance(noise, GaussianNoise):
        options.update(sigma=noise, sigma_dof=noise.sigma_dof)
    y_pred = data["responses"][scorer.response_method]
    return scorer._score_estimands(
        data["y"], y_pred, estimands, X=data["X"], classes=data["classes"], **options
    )


def _scoring_target(y: Any, classifier: bool) -> Any:
    """``y`` as the metrics take it: one column as 1-D, a regressor's objects
    as floats."""
    shape = np.shape(y)
    if len(shape) == 2 and shape[1] == 1:
        y = column_or_1d(y)
    if not classifier and np.asarray(y).dtype == np.dtype(object):
        try:
            y = np.asarray(y, dtype=float)
        except (TypeError, ValueError):  # not numbers: the metric says so
            pass
    return y


def _delegated_tags(tags: Any, estimator: Any) -> Any:
    """The cross-validator's tags: its inputs and predictions are the estimator's."""
    inner = get_tags(estimator)
    tags.input_tags.sparse = inner.input_tags.sparse
    tags.input_tags.allow_nan = inner.input_tags.allow_nan
    tags.classifier_tags = copy.deepcopy(inner.classifier_tags)
    tags.regressor_tags = copy.deepcopy(inner.regressor_tags)
    return tags


def _column(scores: list, field: str, missing: float) -> np.ndarray:
    return np.array([missing if s is None else getattr(s, field) for s in scores])


def _fold_tables(
    results: list[dict], scorers: dict[str, Any], plans: dict, error_score: Any
) -> tuple[dict, dict, dict, dict]:
    """``cv_results_``, ``fold_scores_``, ``estimands_`` and ``fold_estimates_``
    (a failed fold: ``error_score``, variances NaN)."""
    error = error_score if error_score != "raise" else np.nan
    cv_results = {
        name: np.array([r[name] for r in results])
        for name in ("fit_time", "score_time", "n_test")
    }
    found = {key: [r["scores"][key] or {} for r in results] for key in scorers}
    fold_scores = {
        key: [f.get(scorer.estimand) for f in found[key]]
        for key, scorer in scorers.items()
    }
    fields = (("expected", error), ("variance", np.nan), ("nominal", error))
    for key, scores in fold_scores.items():
        for field, missing in fields:
            cv_results[f"{key}_{field}"] = _column(scores, field, missing).astype(float)
    estimands, estimates = {}, {}
    for key, plan in plans.items():
        notes = []
        if plan.lead != plan.requested:
            notes.append(
                f"{key} offers no {plan.requested} estimate: {plan.lead} leads instead."
            )
        estimates[key] = {e: [f.get(e) for f in found[key]] for e in plan.shown}
        for estimand, scores in estimates[key].items():
            errors = [
                r["notes"][key, estimand]
                for r in results
                if (key, estimand) in r["notes"]
            ]
            if errors:
                notes.append(f"{estimand} failed on {len(errors)} fold(s): {errors[0]}")
            cv_results[f"{key}_{estimand}"] = _column(scores, "expected", np.nan)
            cv_results[f"{key}_{estimand}_variance"] = _column(
                scores, "variance", np.nan
            )
        estimands[key] = {"shown": plan.shown, "lead": plan.lead, "notes": notes}
    return cv_results, fold_scores, estimands, estimates


def _store_input_attributes(estimator: Any, X: Any) -> None:
    """Record ``n_features_in_`` and ``feature_names_in_`` as scikit-learn does."""
    for name in ("n_features_in_", "feature_names_in_"):
        if hasattr(estimator, name):
            delattr(estimator, name)
    try:
        estimator.n_features_in_ = _num_features(X)
    except TypeError:
        pass
    names = _get_feature_names(X)
    if names is not None:
        estimator.feature_names_in_ = names


def _get_response(
    estimator: Any, method: str, X: Any, classes: np.ndarray | None, y_test: Any
) -> np.ndarray:
    """Response of a fitted estimator, class columns aligned to ``classes``,
    one-column predictions of a 1-D target raveled."""
    if not hasattr(estimator, method):
        raise AttributeError(
            f"{type(estimator).__name__} has none of the response methods "
            f"{[method]} that the scorer needs."
        )
    response = np.asarray(getattr(estimator, method)(X))
    if method == "predict" and response.ndim == 2 and np.ndim(y_test) == 1:
        return response.ravel() if response.shape[1] == 1 else response
    if (
        method == "predict_proba"
        and classes is not None
        and response.ndim == 2
        and hasattr(estimator, "classes_")
        and response.shape[1] != classes.shape[0]
    ):
        # A class absent from this training fold: give it probability 0, as
        # cross_val_predict does, so that folds can be concatenated.
        full = np.zeros((response.shape[0], classes.shape[0]), dtype=response.dtype)
        full[:, np.searchsorted(classes, estimator.classes_)] = response
        response = full
    return response


def _as_estimand(score: NoisyScore, estimand: str) -> NoisyScore:
    """``score`` labelled ``estimand`` (the metric may name it otherwise)."""
    if score.estimand == estimand:
        return score
    return dataclasses.replace(score, estimand=estimand)


#: The fold (0-based) being fitted or scored in this thread or task, for the
#: command line's warnings; None outside one.
CURRENT_FOLD: contextvars.ContextVar[int | None] = contextvars.ContextVar(
    "sklearn_noisy_fold", default=None
)


def _fit_and_score_fold(*args: Any, fold: int) -> dict[str, Any]:
    """:func:`_fold_result` with :data:`CURRENT_FOLD` set (one joblib task)."""
    token = CURRENT_FOLD.set(fold)
    try:
        return _fold_result(*args)
    finally:
        CURRENT_FOLD.reset(token)


def _fold_result(
    estimator: Any,
    X: Any,
    y: tuple[Any, Any],
    train: np.ndarray,
    test: np.ndarray,
    setup: dict[str, Any],
) -> dict[str, Any]:
    """Fit on ``y[0]`` of one training set, score its test set against ``y[1]``;
    failures are recorded, not raised."""
    scorers, error_score, n_test = setup["scorers"], setup["error_score"], len(test)
    result = dict(fit_error=None, errors={}, notes={}, n_test=n_test, test=test)
    result.update(responses={}, scores=dict.fromkeys(scorers), score_time=0.0)
    fit_params = _check_method_params(X, params=setup["fit_params"], indices=train)
    start = time.perf_counter()
    try:
        estimator.fit(
            _safe_indexing(X, train), _safe_indexing(y[0], train), **fit_params
        )
    except Exception:
        if error_score == "raise":
            raise
        result["fit_error"] = format_exc()
    result["fit_time"] = time.perf_counter() - start
    if setup["return_estimator"]:
        result["estimator"] = estimator
    if result["fit_error"] is not None:
        return result
    X_test, y_test = _safe_indexing(X, test), _safe_indexing(y[1], test)
    noise = None if setup["noise"] is None else setup["noise"].take(test)
    classes, responses, nan = setup["classes"], result["responses"], math.nan
    data = dict(y=y_test, X=X_test, responses=responses, noise=noise, classes=classes)
    for key, scorer in scorers.items():
        own, metric, method = scorer.estimand, scorer.metric, scorer.response_method
        others = [e for e in setup["plans"][key].shown if e != own]
        estimands = (own, *others)
        try:
            if method not in responses:
                responses[method] = _get_response(
                    estimator, method, X_test, classes, y_test
                )
            if n_test < get_metric_info(metric).min_samples:  # NaN scores
                scores = {
                    e: NoisyScore(metric, nan, nan, nan, n_test, estimand=e)
                    for e in estimands
                }
            else:
                scores = score_estimands(scorer, estimands, data)
            if isinstance(scores[own], Exception):
                raise scores[own]
        except Exception:
            if error_score == "raise":
                raise
            result["errors"][key] = format_exc()
            continue
        for estimand in others:  # a failed one is reported as a note
            score = scores[estimand]
            if isinstance(score, Exception):
                result["notes"][key, estimand] = f"{type(score).__name__}: {score}"
                scores[estimand] = None
            else:
                scores[estimand] = _as_estimand(score, estimand)
        result["scores"][key] = scores
    if "predict" not in responses and hasattr(estimator, "predict"):
        responses["predict"] = _get_response(
            estimator, "predict", X_test, classes, y_test
        )
    result["score_time"] = time.perf_counter() - start - result["fit_time"]
    return result


def _raise_or_warn_failures(
    results: list[dict], scorers: dict[str, Any], error_score: Any
) -> None:
    """As scikit-learn: a warning when some fits (or scores of a metric) failed,
    an error when all did; one warning per metric undefined on small folds."""
    fit_errors = [r["fit_error"] for r in results if r["fit_error"] is not None]
    if fit_errors:
        delimiter = "-" * 80 + "\n"
        details = "error_score='raise'.\n\nBelow are more details about the failures:\n"
        details += "\n".join(
            f"{delimiter}{n} fits failed with the following error:\n{error}"
            for error, n in Counter(fit_errors).items()
        )
        if len(fit_errors) == len(results):
            raise ValueError(
                f"\nAll the {len(results)} fits failed.\nIt is very likely that your "
                "model is misconfigured.\nYou can try to debug the error by setting "
                + details
            )
        warn(
            f"\n{len(fit_errors)} fits failed out of a total of {len(results)}.\nThe "
            f"scores on these train-test partitions will be set to {error_score}.\nIf "
            "these failures are not expected, you can try to debug them by setting "
            + details,
            FitFailedWarning,
        )
    fitted = [r for r in results if r["fit_error"] is None]
    for key in scorers:
        errors = [r["errors"][key] for r in fitted if key in r["errors"]]
        if errors and len(errors) == len(fitted):
            raise ValueError(
                f"Scoring {key!r} failed on every fold. The first error was:\n"
                f"{errors[0]}"
            )
        if errors:
            warn(
                f"Scoring {key!r} failed on {len(errors)} of {len(fitted)} folds; its "
                "scores there are set to error_score. The first error was:\n"
                f"{errors[0]}",
                UserWarning,
            )
    for key, scorer in scorers.items():
        info = get_metric_info(scorer.metric)
        n_folds = sum(
            r["n_test"] < info.min_samples and key not in r["errors"] for r in fitted
        )
        if n_folds:
            warn(
                f"{info.display_name} is not defined on fewer than {info.min_samples} "
                f"samples: {key!r} is NaN on {n_folds} of {len(results)} folds (as "
                "scikit-learn's metric is); pooled_ scores it over all the "
                "out-of-fold predictions.",
                UndefinedMetricWarning,
            )


def run_folds(
    cv: Any, X: Any, y: tuple[Any, Any], splits: list[tuple], setup: dict[str, Any]
) -> list[dict]:
    """Fit and score every split in parallel, print the fold lines as they
    finish; warn or raise on failures. ``y``: (as given, as scored)."""
    parallel = Parallel(
        n_jobs=cv.n_jobs,
        verbose=max(cv.verbose - 1, 0),
        pre_dispatch="2*n_jobs",
        return_as="generator",
    )
    tasks = parallel(
        delayed(_fit_and_score_fold)(
            clone(cv.estimator), X, y, train, test, setup, fold=k
        )
        for k, (train, test) in enumerate(splits)
    )
    progress = FoldProgress(len(splits))
    results = []
    for result in tasks:
        results.append(result)
        if cv.verbose > 0:
            progress.update(result)
    progress.close()
    _raise_or_warn_failures(results, setup["scorers"], cv.error_score)
    return results


def _pool_additive(scores: list[NoisyScore]) -> NoisyScore:
    """Pool per-sample-additive fold scores: ``Σ w_k E_k`` and ``Σ w_k² V_k``."""
    n = np.array([s.n_samples for s in scores], dtype=float)
    columns = ("expected", "nominal", "variance")
    values = [_column(scores, c, np.nan).astype(float) for c in columns]
    expected, nominal, variance = weighted_totals(n / n.sum(), slice(None), *values)
    method = scores[0].method if len({s.method for s in scores}) == 1 else "delta"
    first = scores[0]
    return NoisyScore(
        first.metric, expected, variance, nominal, int(n.sum()), method, first.estimand
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


def pool_scores(
    results: list[dict], oof: OutOfFold, X: Any, y: Any, setup: dict, sampling: Any
) -> tuple[dict[str, NoisyScore], dict[str, dict[str, NoisyScore]]]:
    """``pooled_`` and ``pooled_estimates_``: the estimands not pooled from the
    folds scored on the out-of-fold predictions in one call, with their sampling."""
    if oof.indices is None:  # overlapping test sets: nothing is pooled
        return {}, {}
    fitted = [r for r in results if r["fit_error"] is None]
    noise = setup["noise"]
    if oof.indices.shape[0] != _num_samples(y):  # not a partition: the tested
        X, y = _safe_indexing(X, oof.indices), _safe_indexing(y, oof.indices)
        noise = None if noise is None else noise.take(oof.indices)
    data = dict(y=y, X=X, responses=oof.responses, noise=noise)
    data["classes"] = setup["classes"]
    pooled: dict[str, NoisyScore] = {}
    estimates: dict[str, dict[str, NoisyScore]] = {}
    for key, scorer in setup["scorers"].items():
        own, shown = scorer.estimand, setup["plans"][key].shown
        folds = [(r["scores"][key] or {}).get("forward") for r in fitted]
        folded = {}
        # the forward score of an additive metric pooled from complete folds (not
        # truth or remeasurement: their floored fold variances would add up too
        # much); the rest scored once on all the out-of-fold predictions, also
        # when the metric failed on (or is not defined for) some fold
        info = get_metric_info(scorer.metric)
        additive = info.additive and not scorer.metric_kwargs and None not in folds
        if "forward" in shown and additive:
            folded = {"forward": _pool_additive(folds)}
        score = partial(score_estimands, scorer, data=data)
        scores = _score_oof(score, key, shown, folded, sampling)
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
                estimates[key][estimand] = _as_estimand(found, estimand)
    return pooled, estimates


def _score_oof(
    score: partial, key: str, shown: tuple, folded: dict, sampling: Any
) -> dict[str, Any]:
    """``shown`` on the out-of-fold predictions, the ``folded`` ones (pooled from
    the folds) given: each with its test-set sampling, else without it and a
    warning (the folds' warnings, again, silenced for the folded)."""
    scores, rest = {}, tuple(e for e in shown if e not in folded)
    for estimands, known in ((rest, None), (tuple(folded), folded)):
        if not estimands or (known and sampling is False):
            continue
        options = {} if known is None else {"known": known}
        try:
            with quiet() if known else nullcontext():
                found = score(
                    estimands=estimands, test_set_sampling=sampling, **options
                )
        except Exception as exc:  # common to every estimand
            found = dict.fromkeys(estimands, exc)
            if known is None:  # none is pooled
                scores.update(found)
                continue
        failed = tuple(e for e in estimands if isinstance(found[e], Exception))
        if sampling is not False and failed:
            again = known or score(estimands=failed, test_set_sampling=False)
            for estimand in failed:
                if isinstance(again[estimand], NoisyScore):
                    warn(
                        f"The test-set sampling variance of the pooled {key!r} "
                        f"({estimand}) could not be computed: "
                        f"{type(found[estimand]).__name__}: {found[estimand]}",
                        UserWarning,
                    )
                    found[estimand] = again[estimand]
        scores.update(found)
    return scores | (folded if sampling is False else {})


_BAR_WIDTH = 24


def format_seconds(seconds: float) -> str:
    """``"0.4 s"``, ``"12 s"``, ``"3 min 05 s"``, ``"1 h 02 min"``."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _end_message(result: dict, fold: int, n_folds: int) -> str:
    """One progress line per finished fold, like scikit-learn's ``[CV] END``."""
    body = " fit failed;"
    if result["fit_error"] is None:
        parts = []
        for key, scores in result["scores"].items():
            s = None if scores is None else next(iter(scores.values()))  # the lead
            parts.append(
                f" {key}: failed"
                if s is None
                else f" {key}: {s.estimand} {s.expected:.4g}±{_std(s.variance):.2g}"
            )
        body = ";".join(parts) + ";"
    total = result["fit_time"] + result["score_time"]
    tail = f" n_test={result['n_test']}, total time={total:.3g}s"
    return f"[CV {fold}/{n_folds}] END{body}{tail}"


class FoldProgress:
    """Report ``n_folds`` finished folds to ``stream`` (``sys.stdout`` at each
    write by default)."""

    def __init__(self, n_folds: int, stream: TextIO | None = None) -> None:
        self.n_folds, self.stream, self.done = n_folds, stream, 0
        self.start = time.perf_counter()
        self._bar_shown = False

    def _out(self) -> TextIO:
        return sys.stdout if self.stream is None else self.stream

    def update(self, result: dict[str, Any]) -> None:
        """Print the line of a finished fold (``result`` of one fold)."""
        self.done += 1  # the folds come back in order: this is fold self.done
        elapsed = time.perf_counter() - self.start
        left = self.n_folds - self.done
        timing = format_seconds(elapsed)
        if left:
            timing += f", about {format_seconds(elapsed / self.done * left)} left"
        line = _end_message(result, self.done, self.n_folds) + f"; elapsed {timing}\n"
        out = self._out()
        isatty = getattr(out, "isatty", None)
        if isatty and isatty():
            filled = round(_BAR_WIDTH * self.done / self.n_folds)
            bar = "#" * filled + "." * (_BAR_WIDTH - filled)
            line = f"\r\033[K{line}[{bar}] {self.done}/{self.n_folds} folds, {timing}"
            self._bar_shown = True
        out.write(line)
        out.flush()

    def close(self) -> None:
        """Clear the live bar, if one is shown."""
        if self._bar_shown:
            self._out().write("\r\033[K")
            self._out().flush()
            self._bar_shown = False
