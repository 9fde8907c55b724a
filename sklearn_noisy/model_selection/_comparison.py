"""Paired comparison of estimators on the same folds and labels, and its result."""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
from collections.abc import Iterator, Mapping
from functools import partial
from itertools import combinations
from typing import Any

import numpy as np
from sklearn.base import is_classifier
from sklearn.model_selection import check_cv

from .._noisy_score import NoisyScore
from ..metrics import expected_paired_difference, get_metric_info
from ..metrics._engines.test_set_sampling import add_test_set_sampling
from ..utils._noise import take_samples
from ..utils._sklearn_compat import _safe_indexing
from ..utils._validation import (
    TEST_SET_SAMPLING,
    check_test_set_sampling,
    resolve_estimand,
)
from ..utils._warnings import warn
from ._cross_validator import NoisyCrossValidator
from ._pair_statistics import (
    CorrectedTTest,
    corrected_t_test,
    probability_better,
    probability_text,
)
from ._report import _as_table, _json_ready, _level
from ._scoring import check_noisy_scoring, default_metrics, default_scoring

__all__ = ["EstimatorComparison", "compare_estimators"]


class EstimatorComparison:
    """Result of :func:`compare_estimators`; the parameters are its attributes.

    Read more in the :ref:`User Guide <paired_comparison>`.

    Parameters
    ----------
    names : list of str
        The estimators' names, in the order given.
    metrics : list of str
        The result keys of the metrics.
    greater_is_better : dict of bool
        Per metric, whether larger is better.
    cv_results : dict of NoisyCrossValidator
        The fitted cross-validation of every estimator (same splits).
    differences : dict of dict of NoisyScore
        ``differences[(a, b)][metric]``: ``metric_a − metric_b`` pooled over
        the out-of-fold predictions, with its paired variance; ``(b, a)`` is
        its negation.
    fold_differences : dict of dict of list of NoisyScore
        The same per fold (variance NaN where only a Monte Carlo gives it).
    t_tests : dict of dict of CorrectedTTest
        ``t_tests[(a, b)][metric]``: the corrected resampled t-test.
    confidence_level : float
        Level of the intervals in the summaries.
    estimands : dict of str, default=None
        Per metric, the estimand of its paired difference (``"forward"``).
    notes : dict of str, default=None
        Per metric, why the requested estimand was not available.

    Attributes
    ----------
    probability_better : dict of dict of float
        ``probability_better[(a, b)][metric]``: the probability that ``a`` is
        truly better than ``b`` (:ref:`probability_better`).
    probability_method : dict of dict of str
        How each probability was computed.
    pooled : dict of dict of NoisyScore
        ``pooled[name][metric]``: each estimator's pooled lead score.
    n_splits : int
        Number of folds.

    Examples
    --------
    See :func:`compare_estimators`.
    """

    def __init__(
        self,
        *,
        names: list[str],
        metrics: list[str],
        greater_is_better: dict[str, bool],
        cv_results: dict[str, NoisyCrossValidator],
        differences: dict[tuple[str, str], dict[str, NoisyScore]],
        fold_differences: dict[tuple[str, str], dict[str, list[NoisyScore]]],
        t_tests: dict[tuple[str, str], dict[str, CorrectedTTest]],
        confidence_level: float,
        estimands: dict[str, str] | None = None,
        notes: dict[str, str] | None = None,
    ) -> None:
        self.names = names
        self.metrics = metrics
        self.greater_is_better = greater_is_better
        self.cv_results = cv_results
        self.pooled = {name: dict(cv.pooled_) for name, cv in cv_results.items()}
        self.differences = differences
        self.fold_differences = fold_differences
        self.t_tests = t_tests
        self.n_splits = next(iter(cv_results.values())).n_splits_
        self.confidence_level = confidence_level
        self.estimands = estimands or dict.fromkeys(metrics, "forward")
        self.notes = notes or {}
        self.probability_better: dict[tuple[str, str], dict[str, float]] = {}
        self.probability_method: dict[tuple[str, str], dict[str, str]] = {}
        for pair, diffs in differences.items():
            results = {
                key: probability_better(diff, greater_is_better[key])
                for key, diff in diffs.items()
            }
            self.probability_better[pair] = {k: r[0] for k, r in results.items()}
            self.probability_method[pair] = {k: r[1] for k, r in results.items()}

    def ranking(self, metric: str | None = None) -> list[str]:
        """Estimator names from best to worst by the pooled expected ``metric``.

        ``metric`` defaults to the first metric.
        """
        metric = self.metrics[0] if metric is None else metric
        if metric not in self.metrics:
            raise ValueError(f"metric must be one of {self.metrics}; got {metric!r}.")
        sign = -1.0 if self.greater_is_better[metric] else 1.0
        return sorted(
            self.names, key=lambda name: sign * self.pooled[name][metric].expected
        )

    def summary(self, metric: str | None = None) -> Any:
        """Estimators ranked by the pooled lead estimate of ``metric`` (the first).

        Returns
        -------
        table : pandas.DataFrame or list of dict
            One row per estimator, best first: ``rank``, ``estimator``,
            ``<metric>``, ``<metric>_std`` and ``<metric>_estimand`` for every
            metric, then versus the best estimator ``difference``,
            ``difference_std`` and ``pvalue``.
        """
        metric = self.metrics[0] if metric is None else metric
        order = self.ranking(metric)
        rows = []
        for rank, name in enumerate(order, start=1):
            row: dict[str, Any] = {"rank": rank, "estimator": name}
            for key in self.metrics:
                row[key] = self.pooled[name][key].expected
                row[f"{key}_std"] = self.pooled[name][key].std
                row[f"{key}_estimand"] = self.pooled[name][key].estimand
            if name == order[0]:
                row.update(difference=0.0, difference_std=0.0, pvalue=math.nan)
            else:
                diff = self.differences[(name, order[0])][metric]
                row["difference"] = diff.expected
                row["difference_std"] = diff.std
                row["pvalue"] = self.t_tests[(name, order[0])][metric].pvalue
            rows.append(row)
        return _as_table(rows)

    def _pairs(self) -> Iterator[tuple[str, str, str, NoisyScore, CorrectedTTest]]:
        """``(a, b, metric, difference, t-test)`` for every pair ``a < b``."""
        for a, b in combinations(self.names, 2):
            for key in self.metrics:
                test = self.t_tests[(a, b)][key]
                yield a, b, key, self.differences[(a, b)][key], test

    def _pair_rows(self, full: bool) -> list[dict[str, Any]]:
        """One row per pair ``a < b`` and metric: the difference (its interval,
        or with ``full`` its variances, estimand and fold values), its t-test."""
        rows = []
        for a, b, key, diff, test in self._pairs():
            row = {"estimator_a": a, "estimator_b": b, "metric": key}
            row["expected"] = diff.expected
            if full:
                row.update(variance=diff.variance, nominal=diff.nominal)
                row.update(method=diff.method, sampling_variance=diff.sampling_variance)
                row["sampling_method"] = diff.sampling_method
                row["estimand"] = self.estimands[key]
                folds = self.fold_differences[(a, b)][key]
                row["fold_expected"] = [d.expected for d in folds]
            else:
                low, high = diff.confidence_interval(self.confidence_level)
                row.update(std=diff.std, ci_low=low, ci_high=high)
                row.update(nominal=diff.nominal, method=diff.method)
            row.update(t_statistic=test.statistic, pvalue=test.pvalue, df=test.df)
            row["probability_better"] = self.probability_better[(a, b)][key]
            row["probability_method"] = self.probability_method[(a, b)][key]
            rows.append(row)
        return rows

    def pairwise_summary(self) -> Any:
        """Every pair ``a < b`` (in the given order) and metric, one row each:
        ``metric_a − metric_b``, its interval, t-test and ``probability_better``
        (that ``a`` is truly better)."""
        return _as_table(self._pair_rows(False))

    def to_dict(self) -> dict[str, Any]:
        """All results as a JSON-serialisable dict (non-finite numbers as None)."""
        return _json_ready(
            {
                "estimators": list(self.names),
                "metrics": list(self.metrics),
                "n_splits": int(self.n_splits),
                "confidence_level": float(self.confidence_level),
                "cross_validation": {
                    name: cv.to_dict() for name, cv in self.cv_results.items()
                },
                "differences": self._pair_rows(True),
                "notes": dict(self.notes),
            }
        )

    def to_json(self, **kwargs: Any) -> str:
        """:meth:`to_dict` as a JSON string; ``kwargs`` go to :func:`json.dumps`."""
        return json.dumps(self.to_dict(), **kwargs)

    def __repr__(self) -> str:
        return (
            f"EstimatorComparison(names={self.names!r}, metrics={self.metrics!r}, "
            f"n_splits={self.n_splits})"
        )

    def __str__(self) -> str:
        level = self.confidence_level
        lines = [
            f"Comparison of {len(self.names)} estimators on the same "
            f"{self.n_splits} folds"
        ]
        pairs = list(self._pairs())
        for key in self.metrics:
            direction = "higher" if self.greater_is_better[key] else "lower"
            lines += [
                "",
                f"{key} ({direction} is better), pooled over folds: estimand, "
                "estimate ± SD (label noise)",
            ]
            for rank, name in enumerate(self.ranking(key), start=1):
                score = self.pooled[name][key]
                lines.append(
                    f"  {rank}. {name:<20} {score.estimand:<13} "
                    f"{score.expected:11.5g} ± {score.std:.3g}"
                )
            lines.append(
                f"  pairwise a − b ({self.estimands[key]}): estimate ± SD (paired "
                f"label noise), {_level(level)} interval; corrected t-test "
                "across folds"
            )
            methods = {self.probability_method[p[:2]][key] for p in pairs}
            lines.append(
                "  P(a better): probability that a is truly better, "
                + "; ".join(sorted(methods))
            )
            if key in self.notes:
                lines.append(f"  note: {self.notes[key]}")
            for a, b, _, diff, test in (p for p in pairs if p[2] == key):
                low, high = diff.confidence_interval(level)
                better = self.probability_better[(a, b)][key]
                lines.append(
                    f"  {a} − {b}: {diff.expected:.5g} ± {diff.std:.3g} "
                    f"[{low:.5g}, {high:.5g}] ({diff.method}); "
                    f"t={test.statistic:.3g}, p={test.pvalue:.3g}, df={test.df}; "
                    f"P(a better){probability_text(better)}"
                )
                if not math.isnan(diff.sampling_variance):
                    low, high = diff.confidence_interval(level, source="both")
                    lines.append(
                        f"    with test-set sampling (SD {diff.sampling_std:.3g},"
                        f" {diff.sampling_method}): [{low:.5g}, {high:.5g}]"
                    )
        return "\n".join(lines)


def _negate(score: NoisyScore) -> NoisyScore:
    def flip(pivot: tuple[float, ...] | None) -> tuple[float, ...] | None:
        # quantiles at probabilities symmetric about ½, a pivot's method kept
        if pivot is None:
            return None
        flipped = tuple(-q for q in pivot[::-1])
        if isinstance(pivot, tuple) and hasattr(pivot, "__dict__"):
            flipped = type(pivot)(flipped)
            vars(flipped).update(vars(pivot))  # e.g. a Student pivot's dof
        return flipped

    return dataclasses.replace(
        score,
        expected=-score.expected,
        nominal=-score.nominal,
        distribution=None,
        sampling_pivot=flip(score.sampling_pivot),
        label_pivot=flip(score.label_pivot),
    )


def _resolve_noise(scorer: Any, X: Any, y: Any, noise: dict[str, Any]) -> dict:
    """The noise values a scorer uses on all of ``X`` (the folds checked them)."""
    values = scorer._noise_kwargs(**noise, X=X, y=y)
    return {
        key: value
        if key == "transition_matrix" or value is None or np.isscalar(value)
        else np.asarray(value, dtype=np.float64)
        for key, value in values.items()
    }


def _check_estimators(estimators: Any) -> dict[str, Any]:
    if not isinstance(estimators, Mapping):
        raise TypeError(
            "estimators must be a dict {name: estimator}; got "
            f"{type(estimators).__name__}."
        )
    if len(estimators) < 2:
        raise ValueError(
            f"estimators must hold at least two estimators; got {len(estimators)}."
        )
    for name, estimator in estimators.items():
        if not isinstance(name, str):
            raise TypeError(f"estimator names must be strings; got {name!r}.")
        if not hasattr(estimator, "fit"):
            raise TypeError(
                f"estimators[{name!r}] must have a fit method; got {estimator!r}."
            )
    kinds = {is_classifier(estimator) for estimator in estimators.values()}
    if len(kinds) > 1:
        raise ValueError(
            "estimators mixes classifiers and regressors; compare like with like."
        )
    return dict(estimators)


def compare_estimators(
    estimators: Mapping[str, Any],
    X: Any,
    y: Any,
    *,
    scoring: Any = "default",
    cv: Any = 5,
    sigma: Any = None,
    q: Any = None,
    transition_matrix: Any = None,
    groups: Any = None,
    n_jobs: int | None = None,
    confidence_level: float = 0.95,
    n_draws: int = 1000,
    random_state: Any = 0,
    sigma_dof: Any = None,
    estimand: str = "auto",
    sigma_shared: Any = None,
    test_set_sampling: Any = TEST_SET_SAMPLING,
    sigma_shared_dof: Any = None,
) -> EstimatorComparison:
    """Compare estimators on the same folds, with the paired label-noise variance.

    For every pair ``(a, b)`` and metric: ``metric_a − metric_b`` pooled over
    the folds with its paired label-noise variance, and the corrected
    resampled t-test of the per-fold differences. Read more in the
    :ref:`User Guide <paired_comparison>`.

    Parameters
    ----------
    estimators : dict of str to estimator
        At least two named estimators, all regressors or all classifiers.
    X : array-like or DataFrame of shape (n_samples, n_features)
        Input data.
    y : array-like of shape (n_samples,)
        Best-known labels.
    scoring : "default", str, NoisyScorer, list or dict, default="default"
        As in :class:`NoisyCrossValidator`; ``"default"``: the default metrics
        common to all estimators.
    cv : int, cross-validation generator or iterable, default=5
        The splitter; its test sets must not overlap.
    sigma, q, transition_matrix, groups, sigma_dof : default=None
        The label noise and the groups, as in :meth:`NoisyCrossValidator.fit`.
    sigma_shared : float, dict, array-like of shape (n_samples,) or \
BatchOffsetSummary, default=None
        SD of an offset shared by a batch of labels (:ref:`shared_offsets`).
        A :class:`~sklearn_noisy.preprocessing.BatchOffsetSummary` reaches
        each estimator's folds and pooled score whole (their truth intervals
        are the fiducial ones); the paired differences take its
        ``sigma_shared`` and ``sigma_shared_dof``: the offsets' variance
        cancels from a difference's expectation, its uncertainty enters the
        variance only, through the degrees of freedom (Student's interval).
    sigma_shared_dof : float, dict or array-like, default=None
        Degrees of freedom of an estimated ``sigma_shared``, as in
        :meth:`NoisyCrossValidator.fit`: they widen each estimator's pooled
        estimate; the paired differences' truth intervals take both degrees
        of freedom (Student's, Welch–Satterthwaite's).
    n_jobs : int, default=None
        Folds fitted in parallel (per estimator).
    confidence_level : float, default=0.95
        Level of the intervals in the summaries.
    n_draws : int, default=1000
        Label draws of the joint Monte Carlo (metrics without an exact paired
        variance).
    random_state : int, Generator or None, default=0
        Seed of that Monte Carlo.
    estimand : {"auto", "truth", "remeasurement", "forward"}, default="auto"
        The estimate that ranks the estimators, as the cross-validator's; the
        differences are of the truth where the metric has a paired truth
        difference, else forward, with a note.
    test_set_sampling : "auto", bool or "bootstrap", default="auto"
        The test-set sampling part of the pooled estimates and differences
        (:ref:`estimand_policy`).

    Returns
    -------
    EstimatorComparison
        The differences, t-tests, rankings and probabilities that one
        estimator is better.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.dummy import DummyRegressor
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn_noisy.model_selection import compare_estimators
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2))
    >>> y = X @ [1.0, -1.0] + rng.normal(scale=0.3, size=60)
    >>> result = compare_estimators(
    ...     {"linear": LinearRegression(), "mean": DummyRegressor()},
    ...     X, y, scoring=["mean_squared_error"], sigma=0.3)
    >>> result.ranking()
    ['linear', 'mean']
    >>> result.t_tests[("linear", "mean")]["mean_squared_error"].df
    4
    """
    estimators = _check_estimators(estimators)
    test_set_sampling = check_test_set_sampling(test_set_sampling)
    names = list(estimators)
    scorers = _check_comparison_scoring(scoring, estimators, y, n_draws)
    splitter = check_cv(cv, y, classifier=is_classifier(estimators[names[0]]))
    splits = [
        (np.asarray(tr), np.asarray(te)) for tr, te in splitter.split(X, y, groups)
    ]
    noise = {"sigma": sigma, "q": q, "transition_matrix": transition_matrix}
    options = dict(scoring=scorers, cv=splits, n_jobs=n_jobs, error_score="raise")
    options.update(confidence_level=confidence_level, estimand=estimand)
    options["test_set_sampling"] = test_set_sampling
    fit_params = dict(noise, sigma_dof=sigma_dof, groups=groups)
    fit_params.update(sigma_shared=sigma_shared, sigma_shared_dof=sigma_shared_dof)
    cv_results = {}
    for name, estimator in estimators.items():
        runner = NoisyCrossValidator(estimator, **options)
        cv_results[name] = runner.fit(X, y, **fit_params)
        if runner.oof_indices_ is None:
            raise ValueError(
                "compare_estimators needs test sets that do not overlap (KFold, "
                "StratifiedKFold, GroupKFold, ...); the splitter given repeats "
                "samples across test sets."
            )
    reference = cv_results[names[0]]
    oof = reference.oof_indices_
    y_oof = y if oof.shape[0] == reference.n_samples_ else _safe_indexing(y, oof)
    folds = {  # (samples, labels) of all the out-of-fold rows, then of each fold
        "oof": (oof, y_oof),
        "tests": [(test, _safe_indexing(y, test)) for _, test in splits],
        "rows": [np.searchsorted(oof, test) for _, test in splits],
        "classes": reference.labels_,
        "n_draws": n_draws,
        "random_state": random_state,
        "test_set_sampling": test_set_sampling,
    }
    n_train = float(np.mean([train.shape[0] for train, _ in splits]))
    n_test = float(np.mean([test.shape[0] for _, test in splits]))
    kinds, notes = _difference_estimands(reference.scorers_, estimand)
    pairs = [p for a, b in combinations(names, 2) for p in ((a, b), (b, a))]
    differences, fold_differences, t_tests = ({p: {} for p in pairs} for _ in "abc")
    for key, scorer in reference.scorers_.items():
        values = _resolve_noise(scorer, X, y, noise)
        if scorer.requires_noise == "sigma" and not scorer._counts:
            dof = scorer._noise_values("sigma_dof", sigma_dof, X, y)
            if dof is not None:
                values["sigma_dof"] = dof if np.isscalar(dof) else np.asarray(dof)
        if sigma_shared is not None:  # the paired differences' batch offsets
            values["groups"] = np.asarray(groups)
            if hasattr(sigma_shared, "batch_size"):  # a summary: its estimate, dof
                values["sigma_shared"] = sigma_shared.sigma_shared
                values["sigma_shared_dof"] = sigma_shared.sigma_shared_dof or None
            else:
                values["sigma_shared"] = (
                    sigma_shared
                    if isinstance(sigma_shared, dict) or np.isscalar(sigma_shared)
                    else np.asarray(sigma_shared, dtype=np.float64)
                )
                values["sigma_shared_dof"] = sigma_shared_dof
        for a, b in combinations(names, 2):
            pooled, per_fold = _paired_difference(
                cv_results[a], cv_results[b], key, folds, values, kinds[key]
            )
            test = corrected_t_test([d.expected for d in per_fold], n_train, n_test)
            differences[a, b][key], differences[b, a][key] = pooled, _negate(pooled)
            fold_differences[a, b][key] = per_fold
            fold_differences[b, a][key] = list(map(_negate, per_fold))
            t_tests[a, b][key] = test
            t_tests[b, a][key] = test._replace(
                statistic=-test.statistic, mean_difference=-test.mean_difference
            )
    return EstimatorComparison(
        names=names,
        metrics=list(reference.scorers_),
        greater_is_better={
            k: bool(s.greater_is_better) for k, s in reference.scorers_.items()
        },
        cv_results=cv_results,
        differences=differences,
        fold_differences=fold_differences,
        t_tests=t_tests,
        confidence_level=confidence_level,
        estimands=kinds,
        notes=notes,
    )


def _check_comparison_scoring(
    scoring: Any, estimators: dict[str, Any], y: Any, n_draws: Any
) -> dict[str, Any]:
    """The scorers of a comparison: the defaults common to all estimators."""
    first = next(iter(estimators.values()))
    if isinstance(scoring, str) and scoring == "default":
        common = [set(default_metrics(est, y)) for est in estimators.values()]
        scoring = default_scoring(
            [m for m in default_metrics(first, y) if all(m in c for c in common)], y
        )
    if (
        not (isinstance(n_draws, numbers.Integral) and not isinstance(n_draws, bool))
        or n_draws < 2
    ):
        raise ValueError(f"n_draws must be an int >= 2; got {n_draws!r}.")
    return check_noisy_scoring(scoring, first, y)


def _difference_of(
    scorer: Any, score_a: NoisyScore, score_b: NoisyScore, variance: float, n: int
) -> NoisyScore:
    """The exact difference of two scores' expectations, with a given variance."""
    expected = score_a.expected - score_b.expected
    nominal = score_a.nominal - score_b.nominal
    metric = f"{scorer.metric}_difference"
    return NoisyScore(metric, expected, variance, nominal, n, "monte_carlo")


def _paired_difference(
    cv_a: NoisyCrossValidator,
    cv_b: NoisyCrossValidator,
    key: str,
    folds: dict[str, Any],
    noise: dict[str, Any],
    estimand: str,
) -> tuple[NoisyScore, list[NoisyScore]]:
    """``metric_a − metric_b`` pooled and per fold: exact (or delta), else the
    difference of the expectations with the joint Monte Carlo variance."""
    scorer = cv_a.scorers_[key]
    method = scorer.response_method
    responses = cv_a.oof_responses_[method], cv_b.oof_responses_[method]
    classes = folds["classes"]
    options = dict(
        metric=scorer,
        labels=classes if scorer.requires_noise == "q" else None,
        classes=classes if method == "predict_proba" else None,
        n_draws=folds["n_draws"],
        random_state=folds["random_state"],
        estimand=estimand,
    )

    def call(function: Any, rows: Any, *args: Any, **kwargs: Any) -> NoisyScore:
        """``function`` on the noise of ``rows``."""
        noise_rows = {
            name: value if name == "transition_matrix" else take_samples(value, rows)
            for name, value in noise.items()
        }
        return function(*args, **options, **noise_rows, **kwargs)

    rows, y = folds["oof"]
    paired = partial(call, expected_paired_difference, test_set_sampling=False)
    pooled = paired(rows, y, *responses)
    if pooled.method == "monte_carlo":
        folds_ab = zip(cv_a.fold_scores_[key], cv_b.fold_scores_[key], strict=True)
        per_fold = [
            _difference_of(scorer, a, b, math.nan, a.n_samples) for a, b in folds_ab
        ]
        pooled_a = cv_a.pooled_estimates_[key][estimand]
        pooled_b = cv_b.pooled_estimates_[key][estimand]
        variance, n = pooled.variance, pooled.n_samples
        return _difference_of(scorer, pooled_a, pooled_b, variance, n), per_fold
    sampling = folds["test_set_sampling"]  # the error budget, without a second pass
    function = partial(add_test_set_sampling, expected_paired_difference, pooled)
    pooled = call(function, rows, y, *responses, test_set_sampling=sampling)
    per_fold = [
        paired(test, y_test, *(response[rows] for response in responses))
        for (test, y_test), rows in zip(folds["tests"], folds["rows"], strict=True)
    ]
    return pooled, per_fold


def _difference_estimands(
    scorers: dict[str, Any], estimand: str
) -> tuple[dict[str, str], dict[str, str]]:
    """Per metric the estimand of its paired difference, and why it is not truth."""
    kinds, notes = {}, {}
    for key, scorer in scorers.items():
        options = getattr(scorer, "metric_kwargs", None)
        offered = get_metric_info(scorer.metric).paired_estimands(options)
        kinds[key] = resolve_estimand(estimand, offered)
        if kinds[key] == "truth" or estimand not in ("auto", "truth"):
            continue
        why = f"{scorer.metric} with options {sorted(options)}" if options else ""
        notes[key] = (
            f"no paired truth difference for {why or scorer.metric}: the forward "
            "difference (the paper's, if y_true were exact) is reported"
        )
        if estimand == "truth":
            warn(f"{key}: {notes[key]}.", UserWarning)
    return kinds, notes
