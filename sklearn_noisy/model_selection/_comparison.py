"""Paired comparison of several estimators on the same folds and the same noisy labels.

:func:`compare_estimators` cross-validates every estimator on identical splits
with :class:`NoisyCrossValidator`, then compares each pair twice over:

- against the **label noise**: the difference of the pooled metrics with its
  exact paired variance (FORMULAS.md §9; both models are scored on the same
  noisy labels, so the noise is shared);
- against the **split variability**: the Nadeau–Bengio corrected resampled
  t-test on the per-fold differences.
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np
from scipy import stats
from sklearn.base import is_classifier
from sklearn.model_selection import check_cv
from sklearn.utils import _safe_indexing

from .._noisy_score import NoisyScore
from ..metrics._paired import expected_paired_difference
from ._cross_validator import (
    NoisyCrossValidator,
    _json_number,
    _pooled_method,
    _take,
    check_noisy_scoring,
    default_metrics,
    default_scoring,
)

__all__ = ["CorrectedTTest", "EstimatorComparison", "compare_estimators"]


class CorrectedTTest(NamedTuple):
    """Nadeau–Bengio corrected resampled t-test of the per-fold differences.

    ``statistic = mean / sqrt((1/K + n_test/n_train) s²)`` with ``s²`` the
    sample variance of the ``K`` per-fold differences and ``df = K − 1``;
    ``pvalue`` is two-sided. The correction term ``n_test/n_train`` accounts
    for the overlap of the training sets (Nadeau & Bengio, 2003); the test is
    still approximate.

    Parameters
    ----------
    statistic : float
        The corrected t statistic.
    pvalue : float
        Two-sided p-value from Student's t with ``df`` degrees of freedom.
    df : int
        Degrees of freedom, ``K − 1``.
    mean_difference : float
        Mean of the per-fold differences.
    corrected_std_error : float
        ``sqrt((1/K + n_test/n_train) s²)``.

    See Also
    --------
    compare_estimators : Where these tests are computed.

    Examples
    --------
    >>> from sklearn_noisy.model_selection import CorrectedTTest
    >>> CorrectedTTest(2.0, 0.116, 4, 0.02, 0.01).df
    4
    """

    statistic: float
    pvalue: float
    df: int
    mean_difference: float
    corrected_std_error: float


def corrected_t_test(differences: Any, n_train: float, n_test: float) -> CorrectedTTest:
    """Nadeau & Bengio (2003) corrected resampled t-test.

    Parameters
    ----------
    differences : array-like of shape (n_folds,)
        Per-fold differences of a metric between two models.
    n_train, n_test : float
        Training and test set sizes (their mean over the folds).

    Returns
    -------
    CorrectedTTest
        The statistic, the two-sided p-value with ``K − 1`` degrees of freedom,
        the mean difference and the corrected standard error. When all
        differences are equal the statistic is 0 (p = 1) if they are 0 and
        ``±inf`` (p = 0) otherwise.

    Examples
    --------
    >>> from sklearn_noisy.model_selection._comparison import corrected_t_test
    >>> test = corrected_t_test([0.02, 0.03, 0.01, 0.04, 0.02], 80, 20)
    >>> round(test.statistic, 4), test.df
    (3.1379, 4)
    """
    d = np.asarray(differences, dtype=np.float64)
    d = d[np.isfinite(d)]
    k = d.size
    if k < 2:
        return CorrectedTTest(math.nan, math.nan, max(k - 1, 0), math.nan, math.nan)
    mean = float(np.mean(d))
    # identical differences: exactly no spread (np.var would leave round-off)
    s2 = 0.0 if d.max() == d.min() else float(np.var(d, ddof=1))
    se = math.sqrt((1.0 / k + n_test / n_train) * s2)
    if se > 0.0:
        t = mean / se
        p = float(2.0 * stats.t.sf(abs(t), k - 1))
    elif mean == 0.0:
        t, p = 0.0, 1.0
    else:
        t, p = math.copysign(math.inf, mean), 0.0
    return CorrectedTTest(float(t), p, k - 1, mean, se)


def _negate(score: NoisyScore) -> NoisyScore:
    return NoisyScore(
        score.metric,
        -score.expected,
        score.variance,
        -score.nominal,
        score.n_samples,
        score.method,
    )


def _resolve_noise(
    scorer: Any, X: Any, y: Any, sigma: Any, q: Any, transition_matrix: Any
) -> dict[str, Any]:
    """The noise values a scorer uses on all of ``X``: its own source or the given."""
    if scorer.requires_noise == "sigma":
        source, given, key = scorer.sigma, sigma, "sigma"
    else:
        if getattr(scorer, "transition_matrix", None) is not None:
            return {"transition_matrix": scorer.transition_matrix}
        if transition_matrix is not None and scorer.q is None:
            return {"transition_matrix": transition_matrix}
        source, given, key = scorer.q, q, "q"
    if source is None:
        value = given
    elif isinstance(source, str):
        column = X[source]
        value = column.to_numpy() if hasattr(column, "to_numpy") else column
    elif callable(source):
        value = source(X, y)
    else:
        value = source
    if value is not None and not np.isscalar(value):
        value = np.asarray(value, dtype=np.float64)
    return {key: value}


def _slice_noise(noise: dict[str, Any], rows: np.ndarray) -> dict[str, Any]:
    return {
        key: value if key == "transition_matrix" else _take(value, rows)
        for key, value in noise.items()
    }


class EstimatorComparison:
    """Result of :func:`compare_estimators`.

    Created by :func:`compare_estimators`; the parameters are stored as the
    attributes of the same names.

    Parameters
    ----------
    names : list of str
        The estimators' names.
    metrics : list of str
        The metrics' result keys.
    greater_is_better : dict of bool
        Per metric, whether larger is better.
    cv_results : dict of NoisyCrossValidator
        The fitted cross-validations.
    differences, fold_differences, t_tests : dict
        The pairwise results described below.
    confidence_level : float
        Level of the intervals.

    Attributes
    ----------
    names : list of str
        The estimators' names, in the order given.
    metrics : list of str
        The result keys of the metrics (canonical metric names).
    greater_is_better : dict of bool
        Per metric, whether larger is better.
    cv_results : dict of NoisyCrossValidator
        The fitted cross-validation of every estimator (same splits).
    pooled : dict of dict of NoisyScore
        ``pooled[name][metric]``: the pooled score of each estimator.
    differences : dict of dict of NoisyScore
        ``differences[(name_a, name_b)][metric]``: ``metric_a − metric_b`` pooled
        over the folds, i.e. on the concatenated out-of-fold predictions of both
        models, with its paired label-noise variance. Exact for MSE, MAE,
        accuracy, binary precision, Brier score and log-loss
        (``method="exact"``). For the other
        metrics ``expected`` and ``nominal`` are the exact differences of the
        two pooled scores and the variance comes from a joint Monte Carlo in
        which both models are scored on the same label draws
        (``method="monte_carlo"``). Every ordered pair is present; ``(b, a)`` is
        the negation of ``(a, b)``.
    fold_differences : dict of dict of list of NoisyScore
        The same per fold. For metrics without an exact paired variance the
        per-fold ``variance`` is NaN (only the pooled difference gets the joint
        Monte Carlo); ``expected`` and ``nominal`` are exact.
    t_tests : dict of dict of CorrectedTTest
        ``t_tests[(name_a, name_b)][metric]``: the Nadeau–Bengio corrected
        resampled t-test on the per-fold *expected* differences. It addresses
        split and training-set variability, which the label-noise variance
        does not; it is approximate (folds share training data).
    n_splits : int
        Number of folds.
    confidence_level : float
        Level of the intervals in :meth:`summary` and :meth:`pairwise_summary`.

    See Also
    --------
    compare_estimators : Builds this object.

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
    ...     X, y, scoring=["mean_absolute_error"], sigma=0.3, cv=3)
    >>> result.n_splits, result.metrics
    (3, ['mean_absolute_error'])
    >>> test = result.t_tests[("linear", "mean")]["mean_absolute_error"]
    >>> test.df
    2
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
        """Estimators ranked by the pooled expected ``metric`` (default: the first).

        Returns
        -------
        table : pandas.DataFrame or list of dict
            One row per estimator, best first: ``rank``, ``estimator`` and for
            every metric ``<metric>`` (pooled expected value) and
            ``<metric>_std`` (its label-noise standard deviation); then, versus
            the best estimator, ``difference`` in the ranking metric, its paired
            ``difference_std`` and the corrected t-test ``pvalue``.
        """
        metric = self.metrics[0] if metric is None else metric
        order = self.ranking(metric)
        best = order[0]
        rows = []
        for rank, name in enumerate(order, start=1):
            row: dict[str, Any] = {"rank": rank, "estimator": name}
            for key in self.metrics:
                score = self.pooled[name][key]
                row[key] = score.expected
                row[f"{key}_std"] = score.std
            if name == best:
                row["difference"], row["difference_std"], row["pvalue"] = (
                    0.0,
                    0.0,
                    math.nan,
                )
            else:
                diff = self.differences[(name, best)][metric]
                row["difference"] = diff.expected
                row["difference_std"] = diff.std
                row["pvalue"] = self.t_tests[(name, best)][metric].pvalue
            rows.append(row)
        return _as_table(rows)

    def pairwise_summary(self) -> Any:
        """Every pair ``a < b`` (in the given order) and metric, one row each.

        Columns: ``estimator_a``, ``estimator_b``, ``metric``, ``expected``
        (of ``metric_a − metric_b``), ``std`` (paired label noise), ``ci_low``,
        ``ci_high``, ``nominal``, ``method``, ``t_statistic``, ``pvalue`` and
        ``df`` (corrected resampled t-test across folds).
        """
        rows = []
        for i, a in enumerate(self.names):
            for b in self.names[i + 1 :]:
                for key in self.metrics:
                    diff = self.differences[(a, b)][key]
                    test = self.t_tests[(a, b)][key]
                    low, high = diff.confidence_interval(self.confidence_level)
                    rows.append(
                        {
                            "estimator_a": a,
                            "estimator_b": b,
                            "metric": key,
                            "expected": diff.expected,
                            "std": diff.std,
                            "ci_low": low,
                            "ci_high": high,
                            "nominal": diff.nominal,
                            "method": diff.method,
                            "t_statistic": test.statistic,
                            "pvalue": test.pvalue,
                            "df": test.df,
                        }
                    )
        return _as_table(rows)

    def to_dict(self) -> dict[str, Any]:
        """All results as a JSON-serialisable dict (non-finite numbers as None)."""
        pairs = []
        for i, a in enumerate(self.names):
            for b in self.names[i + 1 :]:
                for key in self.metrics:
                    diff = self.differences[(a, b)][key]
                    test = self.t_tests[(a, b)][key]
                    pairs.append(
                        {
                            "estimator_a": a,
                            "estimator_b": b,
                            "metric": key,
                            "expected": _json_number(diff.expected),
                            "variance": _json_number(diff.variance),
                            "nominal": _json_number(diff.nominal),
                            "method": diff.method,
                            "fold_expected": [
                                _json_number(d.expected)
                                for d in self.fold_differences[(a, b)][key]
                            ],
                            "t_statistic": _json_number(test.statistic),
                            "pvalue": _json_number(test.pvalue),
                            "df": test.df,
                        }
                    )
        return {
            "estimators": list(self.names),
            "metrics": list(self.metrics),
            "n_splits": int(self.n_splits),
            "confidence_level": float(self.confidence_level),
            "cross_validation": {
                name: cv.to_dict() for name, cv in self.cv_results.items()
            },
            "differences": pairs,
        }

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
        for key in self.metrics:
            direction = "higher" if self.greater_is_better[key] else "lower"
            lines += ["", f"{key} ({direction} is better), pooled over folds:"]
            for rank, name in enumerate(self.ranking(key), start=1):
                score = self.pooled[name][key]
                lines.append(
                    f"  {rank}. {name:<20} {score.expected:11.5g} ± {score.std:.3g}"
                )
            lines.append(
                f"  pairwise a − b: expected ± std (paired label noise), "
                f"{level:.0%} CI; corrected t-test across folds"
            )
            for i, a in enumerate(self.names):
                for b in self.names[i + 1 :]:
                    diff = self.differences[(a, b)][key]
                    test = self.t_tests[(a, b)][key]
                    low, high = diff.confidence_interval(level)
                    lines.append(
                        f"  {a} − {b}: {diff.expected:.5g} ± {diff.std:.3g} "
                        f"[{low:.5g}, {high:.5g}] ({diff.method}); "
                        f"t={test.statistic:.3g}, p={test.pvalue:.3g}, df={test.df}"
                    )
        return "\n".join(lines)


def _as_table(rows: list[dict]) -> Any:
    try:
        import pandas as pd
    except ImportError:
        return rows
    return pd.DataFrame(rows)


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
) -> EstimatorComparison:
    """Compare estimators on the same folds, with the paired label-noise variance.

    Every estimator is cross-validated by :class:`NoisyCrossValidator` on the
    *same* splits. For every pair ``(a, b)`` and metric the result holds the
    difference ``metric_a − metric_b`` pooled over the folds (on the
    concatenated out-of-fold predictions) with its variance over the label
    noise. Both models are scored on the same noisy labels, so the noise is
    shared and the variance of the difference is exact and paired
    (FORMULAS.md §9), e.g. for MSE ``4 Σ σ_i² (a_i − b_i)² / M²``; it is usually
    far smaller than ``Var_A + Var_B`` for similar models (but not always:
    for binary accuracy the ratio is twice the disagreement rate).

    The label-noise variance says whether the difference would survive a
    re-measurement of the labels, for these fitted models. Whether it would
    survive another training set is a different question: the result also
    holds, per pair and metric, the Nadeau–Bengio corrected resampled t-test
    on the per-fold expected differences (``t = mean / sqrt((1/K +
    n_test/n_train) s²)``, ``K − 1`` degrees of freedom), the usual remedy for
    the overlap of cross-validation training sets. Report both.

    Parameters
    ----------
    estimators : dict of str to estimator
        At least two named estimators, all regressors or all classifiers.

    X : array-like or DataFrame of shape (n_samples, n_features)
        Input data.

    y : array-like of shape (n_samples,)
        Best-known labels.

    scoring : "default", str, NoisyScorer, list or dict, default="default"
        As in :class:`NoisyCrossValidator`; ``"default"`` takes the default
        metrics common to all estimators (log-loss only if every classifier
        has ``predict_proba``).

    cv : int, cross-validation generator or iterable, default=5
        The splitter; its splits are computed once and shared. The test sets
        must not overlap.

    sigma : float or array-like of shape (n_samples,), default=None
        Standard error of each regression label.

    q : float or array-like of shape (n_samples,), default=None
        Flip probability of each class label.

    transition_matrix : array-like of shape (n_classes, n_classes), default=None
        Row-stochastic label transition matrix, in sorted label order.

    groups : array-like of shape (n_samples,), default=None
        Group labels for group splitters.

    n_jobs : int, default=None
        Folds fitted in parallel (per estimator), as in
        :class:`NoisyCrossValidator`.

    confidence_level : float, default=0.95
        Level of the intervals in the summaries.

    n_draws : int, default=1000
        Label draws of the joint Monte Carlo used for the metrics without an
        exact paired variance (RMSE, R², F1, ...).

    random_state : int, Generator or None, default=0
        Seed of that Monte Carlo (fixed by default: reproducible results).

    Returns
    -------
    EstimatorComparison
        With ``differences``, ``fold_differences``, ``t_tests``, ``pooled``,
        :meth:`~EstimatorComparison.summary` (ranking) and
        :meth:`~EstimatorComparison.pairwise_summary`.

    See Also
    --------
    sklearn_noisy.metrics.expected_paired_difference : The paired difference
        of two prediction vectors.

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
    >>> diff = result.differences[("linear", "mean")]["mean_squared_error"]
    >>> diff.method, diff.expected < 0
    ('exact', True)
    """
    estimators = _check_estimators(estimators)
    names = list(estimators)
    first = estimators[names[0]]
    classifier = is_classifier(first)
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
    scoring = check_noisy_scoring(scoring, first, y)
    for key, scorer in scoring.items():
        estimand = getattr(scorer, "estimand", "measurement")
        if estimand != "measurement":
            raise ValueError(
                f"The {key!r} scorer uses estimand={estimand!r}; paired "
                "differences are computed for the 'measurement' estimand only."
            )
    splitter = check_cv(cv, y, classifier=classifier)
    splits = [
        (np.asarray(train), np.asarray(test))
        for train, test in splitter.split(X, y, groups)
    ]
    cv_results = {}
    for name, estimator in estimators.items():
        runner = NoisyCrossValidator(
            estimator,
            scoring=scoring,
            cv=splits,
            n_jobs=n_jobs,
            confidence_level=confidence_level,
            error_score="raise",
        )
        runner._fit_splits(
            X,
            y,
            splits,
            classifier=classifier,
            sigma=sigma,
            q=q,
            transition_matrix=transition_matrix,
            fit_params={},
        )
        if runner.oof_indices_ is None:
            raise ValueError(
                "compare_estimators needs test sets that do not overlap (KFold, "
                "StratifiedKFold, GroupKFold, ...); the splitter given repeats "
                "samples across test sets."
            )
        cv_results[name] = runner
    reference = cv_results[names[0]]
    scorers = reference.scorers_
    metrics = list(scorers)
    classes = reference._classes
    oof = reference.oof_indices_
    n_train = float(np.mean([train.shape[0] for train, _ in splits]))
    n_test = float(np.mean([test.shape[0] for _, test in splits]))
    y_oof = y if oof.shape[0] == reference.n_samples_ else _safe_indexing(y, oof)
    fold_rows = [np.searchsorted(oof, test) for _, test in splits]
    fold_y = [_safe_indexing(y, test) for _, test in splits]

    differences: dict[tuple[str, str], dict[str, NoisyScore]] = {}
    fold_differences: dict[tuple[str, str], dict[str, list[NoisyScore]]] = {}
    t_tests: dict[tuple[str, str], dict[str, CorrectedTTest]] = {}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            differences[(a, b)], fold_differences[(a, b)], t_tests[(a, b)] = (
                {},
                {},
                {},
            )
            for key, scorer in scorers.items():
                method = _pooled_method(scorer, cv_results[a].oof_responses_)
                response_a = cv_results[a].oof_responses_[method]
                response_b = cv_results[b].oof_responses_[method]
                noise = _resolve_noise(scorer, X, y, sigma, q, transition_matrix)
                options = {
                    "metric": scorer,
                    "labels": classes if scorer.requires_noise == "q" else None,
                    "classes": classes if method == "predict_proba" else None,
                    "n_draws": n_draws,
                    "random_state": random_state,
                }
                pooled = expected_paired_difference(
                    y_oof,
                    response_a,
                    response_b,
                    **_slice_noise(noise, oof),
                    **options,
                )
                exact = pooled.method == "exact"
                score_a = cv_results[a].pooled_[key]
                score_b = cv_results[b].pooled_[key]
                if not exact:  # exact expectations, joint Monte Carlo variance
                    pooled = NoisyScore(
                        f"{scorer.metric}_difference",
                        score_a.expected - score_b.expected,
                        pooled.variance,
                        score_a.nominal - score_b.nominal,
                        pooled.n_samples,
                        "monte_carlo",
                    )
                per_fold = []
                for k, (_, test) in enumerate(splits):
                    fold_a = cv_results[a].fold_scores_[key][k]
                    fold_b = cv_results[b].fold_scores_[key][k]
                    if exact:
                        rows = fold_rows[k]
                        per_fold.append(
                            expected_paired_difference(
                                fold_y[k],
                                response_a[rows],
                                response_b[rows],
                                **_slice_noise(noise, test),
                                **options,
                            )
                        )
                    else:
                        per_fold.append(
                            NoisyScore(
                                f"{scorer.metric}_difference",
                                fold_a.expected - fold_b.expected,
                                math.nan,
                                fold_a.nominal - fold_b.nominal,
                                fold_a.n_samples,
                                "monte_carlo",
                            )
                        )
                differences[(a, b)][key] = pooled
                fold_differences[(a, b)][key] = per_fold
                t_tests[(a, b)][key] = corrected_t_test(
                    [d.expected for d in per_fold], n_train, n_test
                )
            differences[(b, a)] = {
                key: _negate(score) for key, score in differences[(a, b)].items()
            }
            fold_differences[(b, a)] = {
                key: [_negate(s) for s in scores]
                for key, scores in fold_differences[(a, b)].items()
            }
            t_tests[(b, a)] = {
                key: CorrectedTTest(
                    -t.statistic,
                    t.pvalue,
                    t.df,
                    -t.mean_difference,
                    t.corrected_std_error,
                )
                for key, t in t_tests[(a, b)].items()
            }
    return EstimatorComparison(
        names=names,
        metrics=metrics,
        greater_is_better={k: bool(s.greater_is_better) for k, s in scorers.items()},
        cv_results=cv_results,
        differences=differences,
        fold_differences=fold_differences,
        t_tests=t_tests,
        confidence_level=confidence_level,
    )
