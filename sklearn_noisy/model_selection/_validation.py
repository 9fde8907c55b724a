"""Running the folds of a noisy cross-validation: estimands, progress, failures."""

from __future__ import annotations

import copy
import sys
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from traceback import format_exc
from typing import Any, NamedTuple, TextIO

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.exceptions import FitFailedWarning, UndefinedMetricWarning
from sklearn.utils.validation import column_or_1d

from .._noisy_score import NoisyScore
from ..metrics import get_metric_info
from ..utils._noise import FlipNoise, GaussianNoise
from ..utils._sklearn_compat import (
    _check_method_params,
    _get_feature_names,
    _num_features,
    _safe_indexing,
    get_tags,
)
from ..utils._validation import resolve_estimand
from ..utils._warnings import warn
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
    n_samples: int,
    sigma_dof: Any = None,
    offsets: tuple[Any, Any, Any] = (None, None, None),
) -> Noise:
    """The label noise validated once, before any fold is fitted; ``offsets``:
    ``(groups, sigma_shared, sigma_shared_dof)`` (groups used with sigma_shared)."""
    groups, sigma_shared, sigma_shared_dof = offsets
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
        y_shape = np.shape(y)
        shape = (n_samples,) if len(y_shape) < 2 else (n_samples, y_shape[1])
        return GaussianNoise.from_params(
            sigma,
            shape,
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


def _noise_kwargs(scorer: Any, noise: Noise) -> dict[str, Any]:
    """The noise keywords a scorer takes; ``sigma`` as the validated GaussianNoise."""
    if scorer.requires_noise == "q":
        if not isinstance(noise, FlipNoise):
            return {}
        return {"q": noise.q, "transition_matrix": noise.matrix}
    if not isinstance(noise, GaussianNoise):
        return {}
    return {"sigma": noise, "sigma_dof": noise.sigma_dof}


def score_estimands(
    scorer: Any,
    y: Any,
    responses: dict[str, Any],
    X: Any,
    *,
    estimands: tuple[str, ...],
    noise: Noise,
    classes: np.ndarray | None,
    **options: Any,
) -> dict[str, Any]:
    """``{estimand: NoisyScore or the exception}`` from one scorer call."""
    return scorer._score_estimands(
        y,
        responses[scorer.response_method],
        estimands,
        X=X,
        classes=classes,
        **options,
        **_noise_kwargs(scorer, noise),
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


def _fold_tables(
    results: list[dict],
    scorers: dict[str, Any],
    plans: dict[str, EstimandPlan],
    error_score: Any,
) -> tuple[dict, dict, dict, dict]:
    """``cv_results_``, ``fold_scores_``, ``estimands_`` and ``fold_estimates_``
    (a failed fold: ``error_score``, variances NaN)."""
    error = error_score if error_score != "raise" else np.nan
    cv_results = {
        name: np.array([r[name] for r in results])
        for name in ("fit_time", "score_time", "n_test")
    }
    fold_scores = {key: [r["scores"][key] for r in results] for key in scorers}
    fields = (("expected", error), ("variance", np.nan), ("nominal", error))
    for key, scores in fold_scores.items():
        for field, missing in fields:
            cv_results[f"{key}_{field}"] = np.array(
                [missing if s is None else getattr(s, field) for s in scores],
                dtype=float,
            )
    estimands, estimates = {}, {}
    for key, scorer in scorers.items():
        plan = plans[key]
        notes = []
        if plan.lead != plan.requested:
            notes.append(
                f"{key} offers no {plan.requested} estimate: {plan.lead} leads instead."
            )
        folds: dict[str, list] = {}
        for estimand in plan.shown:
            if estimand == scorer.estimand:
                folds[estimand] = list(fold_scores[key])
            else:
                scores = [r["estimates"].get(key, {}).get(estimand) for r in results]
                folds[estimand] = [
                    s
                    if s is None or s.estimand == estimand
                    else replace(s, estimand=estimand)
                    for s in scores
                ]
                errors = [
                    r["estimand_errors"][key, estimand]
                    for r in results
                    if (key, estimand) in r["estimand_errors"]
                ]
                if errors:
                    notes.append(
                        f"{estimand} failed on {len(errors)} fold(s): {errors[0]}"
                    )
            cv_results[f"{key}_{estimand}"] = np.array(
                [np.nan if s is None else s.expected for s in folds[estimand]]
            )
            cv_results[f"{key}_{estimand}_variance"] = np.array(
                [np.nan if s is None else s.variance for s in folds[estimand]]
            )
        estimates[key] = folds
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


def _undefined_score(scorer: Any, n_test: int, estimand: str) -> NoisyScore | None:
    """A NaN score where the metric is not defined on ``n_test`` samples, else None."""
    metric = scorer.metric
    if n_test >= get_metric_info(metric).min_samples:
        return None
    nan = float("nan")
    return NoisyScore(metric, nan, nan, nan, n_samples=n_test, estimand=estimand)


def _get_response(
    estimator: Any, method: str, X: Any, classes: np.ndarray | None, y_test: Any
) -> np.ndarray:
    """Response of a fitted estimator, class columns aligned to ``classes``,
    one-column predictions of a 1-D target raveled."""
    response = np.asarray(getattr(estimator, method)(X))
    if (
        method == "predict"
        and response.ndim == 2
        and response.shape[1] == 1
        and np.ndim(y_test) == 1
    ):
        response = response.ravel()
    if (
        classes is not None
        and method == "predict_proba"
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


def _fit_and_score_fold(
    estimator: Any,
    X: Any,
    y: Any,
    y_score: Any,
    train: np.ndarray,
    test: np.ndarray,
    *,
    scorers: dict[str, Any],
    noise: Noise,
    classes: np.ndarray | None,
    fit_params: dict,
    error_score: Any,
    return_estimator: bool,
    split_progress: tuple[int, int],
    plans: dict[str, Any],
) -> dict[str, Any]:
    """Fit on ``y`` of one training set, score its test set against ``y_score``;
    failures are recorded, not raised (one joblib task)."""
    fit_params = _check_method_params(X, params=fit_params, indices=train)
    result: dict[str, Any] = {
        "fit_error": None,
        "score_errors": {},
        "undefined": set(),
        "n_test": int(test.shape[0]),
        "test": test,
        "responses": {},
        "scores": dict.fromkeys(scorers),
        "estimates": {},
        "estimand_errors": {},
        "score_time": 0.0,
    }
    start = time.perf_counter()
    try:
        estimator.fit(_safe_indexing(X, train), _safe_indexing(y, train), **fit_params)
    except Exception:
        if error_score == "raise":
            raise
        result["fit_error"] = format_exc()
    result["fit_time"] = time.perf_counter() - start
    if return_estimator:
        result["estimator"] = estimator
    if result["fit_error"] is not None:
        return result
    X_test, y_test = _safe_indexing(X, test), _safe_indexing(y_score, test)
    noise = None if noise is None else noise.take(test)
    responses, n_test = result["responses"], result["n_test"]
    for key, scorer in scorers.items():
        own = scorer.estimand
        others = tuple(e for e in plans[key].shown if e != own)
        try:
            method = scorer.response_method
            if not hasattr(estimator, method):
                raise AttributeError(
                    f"{type(estimator).__name__} has none of the response methods "
                    f"{[method]} that the scorer needs."
                )
            if method not in responses:
                responses[method] = _get_response(
                    estimator, method, X_test, classes, y_test
                )
            undefined = _undefined_score(scorer, n_test, own)
            if undefined is not None:
                result["scores"][key] = undefined
                result["undefined"].add(key)
                result["estimates"][key] = {
                    e: _undefined_score(scorer, n_test, e) for e in others
                }
                continue
            scores = score_estimands(
                scorer,
                y_test,
                responses,
                X_test,
                estimands=(own, *others),
                noise=noise,
                classes=classes,
            )
            score = scores.pop(own)
            if isinstance(score, Exception):
                raise score
            result["scores"][key] = score
        except Exception:
            if error_score == "raise":
                raise
            result["score_errors"][key] = format_exc()
            continue
        estimates = result["estimates"].setdefault(key, {})
        for estimand, score in scores.items():
            failed = isinstance(score, Exception)
            estimates[estimand] = None if failed else score
            if failed:  # reported as a note; the metric stays
                error = f"{type(score).__name__}: {score}"
                result["estimand_errors"][key, estimand] = error
    if "predict" not in responses and hasattr(estimator, "predict"):
        responses["predict"] = _get_response(
            estimator, "predict", X_test, classes, y_test
        )
    result["score_time"] = time.perf_counter() - start - result["fit_time"]
    return result


def _raise_or_warn_fit_failures(results: list[dict], error_score: Any) -> None:
    """As scikit-learn: a warning when some fits failed, an error when all did."""
    fit_errors = [r["fit_error"] for r in results if r["fit_error"] is not None]
    if not fit_errors:
        return
    delimiter = "-" * 80 + "\n"
    details = "\n".join(
        f"{delimiter}{n} fits failed with the following error:\n{error}"
        for error, n in Counter(fit_errors).items()
    )
    details = (
        "error_score='raise'.\n\nBelow are more details about the failures:\n" + details
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


def _raise_or_warn_score_failures(results: list[dict], keys: Iterable[str]) -> None:
    """Warn for a metric that failed on some folds; raise if it failed on all."""
    fitted = [r for r in results if r["fit_error"] is None]
    for key in keys:
        errors = [r["score_errors"][key] for r in fitted if key in r["score_errors"]]
        if not errors:
            continue
        if len(errors) == len(fitted):
            raise ValueError(
                f"Scoring {key!r} failed on every fold. The first error was:\n"
                f"{errors[0]}"
            )
        warn(
            f"Scoring {key!r} failed on {len(errors)} of {len(fitted)} folds; its "
            f"scores there are set to error_score. The first error was:\n{errors[0]}",
            UserWarning,
        )


def _warn_undefined_scores(results: list[dict], scorers: dict[str, Any]) -> None:
    """One warning per metric that is NaN on folds too small for it."""
    for key, scorer in scorers.items():
        n_folds = sum(key in r["undefined"] for r in results)
        if not n_folds:
            continue
        info = get_metric_info(scorer.metric)
        warn(
            f"{info.display_name} is not defined on fewer than {info.min_samples} "
            f"samples: {key!r} is NaN on {n_folds} of {len(results)} folds (as "
            "scikit-learn's metric is); pooled_ scores it over all the "
            "out-of-fold predictions.",
            UndefinedMetricWarning,
        )


def run_folds(
    cv: Any,
    X: Any,
    y: tuple[Any, Any],
    splits: list[tuple[np.ndarray, np.ndarray]],
    scorers: dict[str, Any],
    noise: Noise,
    classes: np.ndarray | None,
    fit_params: dict,
    plans: dict[str, Any],
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
            clone(cv.estimator),
            X,
            *y,
            train,
            test,
            scorers=scorers,
            noise=noise,
            classes=classes,
            fit_params=fit_params,
            error_score=cv.error_score,
            return_estimator=cv.return_estimator,
            split_progress=(k, len(splits)),
            plans=plans,
        )
        for k, (train, test) in enumerate(splits)
    )
    progress = FoldProgress(len(splits)) if cv.verbose > 0 else None
    results = []
    for result in tasks:
        results.append(result)
        if progress is not None:
            progress.update(result)
    if progress is not None:
        progress.close()
    _raise_or_warn_fit_failures(results, cv.error_score)
    _raise_or_warn_score_failures(results, scorers)
    _warn_undefined_scores(results, scorers)
    return results


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


def _end_message(result: dict, split_progress: tuple[int, int]) -> str:
    """One progress line per finished fold, like scikit-learn's ``[CV] END``."""
    head = f"[CV {split_progress[0] + 1}/{split_progress[1]}] END"
    if result["fit_error"] is not None:
        body = " fit failed;"
    else:
        parts = [
            f" {key}: failed"
            if s is None
            else f" {key}: {s.estimand} {s.expected:.4g}±{_std(s.variance):.2g}"
            for key, s in result["scores"].items()
        ]
        body = ";".join(parts) + ";"
    total = result["fit_time"] + result["score_time"]
    return f"{head}{body} n_test={result['n_test']}, total time={total:.3g}s"


class FoldProgress:
    """Report ``n_folds`` finished folds to ``stream`` (``sys.stdout`` at each
    write by default)."""

    def __init__(self, n_folds: int, stream: TextIO | None = None) -> None:
        self.n_folds = n_folds
        self.stream = stream
        self.done = 0
        self.start = time.perf_counter()
        self._bar_shown = False

    def update(self, result: dict[str, Any]) -> None:
        """Print the line of a finished fold (``result`` of one fold)."""
        self.done += 1  # the folds come back in order: this is fold self.done
        elapsed = time.perf_counter() - self.start
        left = self.n_folds - self.done
        timing = format_seconds(elapsed)
        if left:
            timing += f", about {format_seconds(elapsed / self.done * left)} left"
        line = _end_message(result, (self.done - 1, self.n_folds))
        line += f"; elapsed {timing}\n"
        out = sys.stdout if self.stream is None else self.stream
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
            out = sys.stdout if self.stream is None else self.stream
            out.write("\r\033[K")
            out.flush()
            self._bar_shown = False
