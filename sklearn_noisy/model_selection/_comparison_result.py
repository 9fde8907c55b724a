"""The result of :func:`compare_estimators`: differences, per-fold values, t-tests."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any, NamedTuple

from .._noisy_score import NoisyScore
from ._cross_validator import NoisyCrossValidator
from ._report import _as_table, _json_number

__all__ = ["CorrectedTTest", "EstimatorComparison"]


class CorrectedTTest(NamedTuple):
    """Nadeau–Bengio corrected resampled t-test of the per-fold differences.

    Read more in the :ref:`User Guide <paired_comparison>`.

    Parameters
    ----------
    statistic : float
        ``mean / sqrt((1/K + n_test/n_train) s²)``, ``s²`` the sample variance
        of the ``K`` per-fold differences.
    pvalue : float
        Two-sided p-value from Student's t with ``df`` degrees of freedom.
    df : int
        Degrees of freedom, ``K − 1``.
    mean_difference : float
        Mean of the per-fold differences.
    corrected_std_error : float
        ``sqrt((1/K + n_test/n_train) s²)``.

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

    differences, fold_differences, t_tests : dict
        The pairwise results (see Attributes).

    confidence_level : float
        Level of the intervals in the summaries.

    estimands : dict of str, default=None
        Per metric, the estimand of its paired difference (``"forward"`` when
        None).

    notes : dict of str, default=None
        Per metric, why the requested estimand was not available.

    Attributes
    ----------
    pooled : dict of dict of NoisyScore
        ``pooled[name][metric]``: the pooled score of each estimator.

    differences : dict of dict of NoisyScore
        ``differences[(a, b)][metric]``: ``metric_a − metric_b`` on the
        out-of-fold predictions, with its paired label-noise variance and,
        where exact, its ``sampling_variance``; ``(b, a)`` is its negation.

    fold_differences : dict of dict of list of NoisyScore
        The same per fold (variance NaN where only a Monte Carlo gives it).

    t_tests : dict of dict of CorrectedTTest
        ``t_tests[(a, b)][metric]``: the corrected resampled t-test on the
        per-fold expected differences.

    n_splits : int
        Number of folds.

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
    >>> result.t_tests[("linear", "mean")]["mean_absolute_error"].df
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
            One row per estimator, best first: ``rank``, ``estimator``,
            ``<metric>`` and ``<metric>_std`` for every metric, then versus the
            best estimator ``difference``, ``difference_std`` and ``pvalue``.
        """
        metric = self.metrics[0] if metric is None else metric
        order = self.ranking(metric)
        rows = []
        for rank, name in enumerate(order, start=1):
            row: dict[str, Any] = {"rank": rank, "estimator": name}
            for key in self.metrics:
                row[key] = self.pooled[name][key].expected
                row[f"{key}_std"] = self.pooled[name][key].std
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
        for i, a in enumerate(self.names):
            for b in self.names[i + 1 :]:
                for key in self.metrics:
                    test = self.t_tests[(a, b)][key]
                    yield a, b, key, self.differences[(a, b)][key], test

    def pairwise_summary(self) -> Any:
        """Every pair ``a < b`` (in the given order) and metric, one row each.

        Columns: ``estimator_a``, ``estimator_b``, ``metric``, ``expected``
        (of ``metric_a − metric_b``), ``std``, ``ci_low``, ``ci_high``,
        ``nominal``, ``method``, ``t_statistic``, ``pvalue`` and ``df``.
        """
        rows = []
        for a, b, key, diff, test in self._pairs():
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
        pairs = [
            {
                "estimator_a": a,
                "estimator_b": b,
                "metric": key,
                "expected": _json_number(diff.expected),
                "variance": _json_number(diff.variance),
                "nominal": _json_number(diff.nominal),
                "method": diff.method,
                "sampling_variance": _json_number(diff.sampling_variance),
                "sampling_method": diff.sampling_method,
                "estimand": self.estimands[key],
                "fold_expected": [
                    _json_number(d.expected) for d in self.fold_differences[(a, b)][key]
                ],
                "t_statistic": _json_number(test.statistic),
                "pvalue": _json_number(test.pvalue),
                "df": test.df,
            }
            for a, b, key, diff, test in self._pairs()
        ]
        return {
            "estimators": list(self.names),
            "metrics": list(self.metrics),
            "n_splits": int(self.n_splits),
            "confidence_level": float(self.confidence_level),
            "cross_validation": {
                name: cv.to_dict() for name, cv in self.cv_results.items()
            },
            "differences": pairs,
            "notes": dict(self.notes),
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
        pairs = list(self._pairs())
        for key in self.metrics:
            direction = "higher" if self.greater_is_better[key] else "lower"
            lines += ["", f"{key} ({direction} is better), pooled over folds:"]
            for rank, name in enumerate(self.ranking(key), start=1):
                score = self.pooled[name][key]
                lines.append(
                    f"  {rank}. {name:<20} {score.expected:11.5g} ± {score.std:.3g}"
                )
            lines.append(
                f"  pairwise a − b ({self.estimands[key]}): estimate ± SD (paired "
                f"label noise), {level * 100:.4g} % interval; corrected t-test "
                "across folds"
            )
            if key in self.notes:
                lines.append(f"  note: {self.notes[key]}")
            for a, b, _, diff, test in (p for p in pairs if p[2] == key):
                low, high = diff.confidence_interval(level)
                lines.append(
                    f"  {a} − {b}: {diff.expected:.5g} ± {diff.std:.3g} "
                    f"[{low:.5g}, {high:.5g}] ({diff.method}); "
                    f"t={test.statistic:.3g}, p={test.pvalue:.3g}, df={test.df}"
                )
                if diff.sampling_method is not None:
                    low, high = diff.confidence_interval(level, source="both")
                    lines.append(
                        f"    with test-set sampling (SD {diff.sampling_std:.3g},"
                        f" {diff.sampling_method}): [{low:.5g}, {high:.5g}]"
                    )
        return "\n".join(lines)
