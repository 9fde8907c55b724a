"""The probability that one model is truly better (issue 24, first item).

The unit tests check the formula and where ``compare_estimators`` reports it;
the calibration tests simulate whole comparisons with a known truth: among the
comparisons reported at *p*, A must be truly better in a fraction *p* of them.
``python tests/test_probability_better.py`` prints the tables
of the user guide ("Probability that one model is truly better").
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import time

import numpy as np
import pytest
from scipy import stats
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.model_selection import KFold

from sklearn_noisy import NoisyScore
from sklearn_noisy.metrics import (
    expected_mean_squared_error,
    expected_paired_difference,
)
from sklearn_noisy.metrics._engines.test_set_sampling import (
    mean_total_variance,
    sampling_terms,
    with_term_moments,
)
from sklearn_noisy.model_selection import compare_estimators
from sklearn_noisy.model_selection._pair_statistics import (
    PROBABILITY_METHODS,
    probability_better,
)

MSE = "mean_squared_error"


def _score(expected, variance, sampling=math.nan, dof=math.inf):
    return NoisyScore(
        "mean_squared_error_difference",
        expected,
        variance,
        expected,
        100,
        sampling_variance=sampling,
        sampling_method=None if math.isnan(sampling) else "per_sample_terms",
        sampling_dof=dof,
    )


def test_probability_formula_and_direction():
    # label noise only: Φ(d/SD), d in the better direction
    p, method = probability_better(_score(-0.02, 0.01**2), greater_is_better=False)
    assert p == pytest.approx(stats.norm.cdf(2.0), rel=1e-12)
    assert method == PROBABILITY_METHODS["label_noise"]
    assert "label noise only" in method
    p, _ = probability_better(_score(-0.02, 0.01**2), greater_is_better=True)
    assert p == pytest.approx(stats.norm.cdf(-2.0), rel=1e-12)
    # with the sampling: Student's t, Satterthwaite's degrees of freedom
    score = _score(0.03, 0.01**2, sampling=0.02**2, dof=12.0)
    p, method = probability_better(score, greater_is_better=True)
    total = 0.01**2 + 0.02**2
    dof = total**2 / (0.02**4 / 12.0)
    assert p == pytest.approx(stats.t.cdf(0.03 / math.sqrt(total), dof), rel=1e-10)
    assert method == PROBABILITY_METHODS["sampling"]
    # the sampling variance without its estimate's uncertainty: the normal
    p, _ = probability_better(_score(0.03, 0.0, sampling=0.01**2), True)
    assert p == pytest.approx(stats.norm.cdf(3.0), rel=1e-12)


def test_probability_edge_cases():
    assert math.isnan(probability_better(_score(0.1, math.inf), True)[0])
    assert math.isnan(probability_better(_score(0.1, math.nan), True)[0])
    assert math.isnan(probability_better(_score(0.1, 0.01, sampling=math.inf), True)[0])
    # no variance at all: certain, or even
    assert probability_better(_score(0.1, 0.0), True)[0] == 1.0
    assert probability_better(_score(0.1, 0.0), False)[0] == 0.0
    assert probability_better(_score(0.0, 0.0), True)[0] == 0.5


@pytest.fixture(scope="module")
def comparison():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 3))
    y = X @ [1.0, -1.0, 0.2] + rng.normal(scale=0.5, size=150)
    return compare_estimators(
        {
            "ols": LinearRegression(),
            "ridge": Ridge(alpha=20.0),
            "mean": DummyRegressor(),
        },
        X,
        y,
        sigma=0.5,
        scoring=[MSE, "r2"],
    )


def test_compare_reports_probability(comparison):
    result = comparison
    for (a, b), per_metric in result.probability_better.items():
        for key, p in per_metric.items():
            assert 0.0 <= p <= 1.0
            assert result.probability_better[(b, a)][key] == pytest.approx(1.0 - p)
            method = result.probability_method[(a, b)][key]
            assert method == result.probability_method[(b, a)][key]
    # the MSE: exact, with the label noise and the test-set sampling
    diff = result.differences[("ols", "ridge")][MSE]
    p = result.probability_better[("ols", "ridge")][MSE]
    method = result.probability_method[("ols", "ridge")][MSE]
    assert method == PROBABILITY_METHODS["sampling"]
    assert p == probability_better(diff, False)[0]
    total = diff.variance + diff.sampling_variance
    dof = diff.sampling_dof * (total / diff.sampling_variance) ** 2
    assert p == pytest.approx(stats.t.cdf(-diff.expected / math.sqrt(total), dof))
    # lower is better: a negative MSE difference means ols is likely better
    assert (p > 0.5) == (diff.expected < 0.0)
    assert result.probability_better[("ols", "mean")][MSE] > 0.999
    # R²: a Monte Carlo difference, higher is better, label noise only
    r2 = result.differences[("ols", "mean")]["r2"]
    assert (
        result.probability_method[("ols", "mean")]["r2"]
        == (PROBABILITY_METHODS["label_noise"])
    )
    assert result.probability_better[("ols", "mean")]["r2"] == pytest.approx(
        stats.norm.cdf(r2.expected / r2.std), abs=1e-12
    )


def test_compare_prints_and_serialises_probability(comparison):
    result = comparison
    text = str(result)
    assert "P(a better): probability that a is truly better" in text
    assert PROBABILITY_METHODS["sampling"] in text
    assert PROBABILITY_METHODS["label_noise"] in text
    assert "ols − mean:" in text and "P(a better)>0.999" in text
    rows = json.loads(result.to_json())["differences"]
    for row in rows:
        pair = (row["estimator_a"], row["estimator_b"])
        assert row["probability_better"] == pytest.approx(
            result.probability_better[pair][row["metric"]]
        )
        assert (
            row["probability_method"] == result.probability_method[pair][row["metric"]]
        )
    table = result.pairwise_summary()
    assert "probability_better" in table and "probability_method" in table


# --------------------------------------------------------------------------
# Calibration: simulated comparisons with a known truth
# --------------------------------------------------------------------------

M = 300  # test-set size
SPREAD = 0.15  # true MSE differences drawn from U(-SPREAD, SPREAD)


def _line(rng: np.random.Generator, mse: float) -> tuple[float, float]:
    """A line whose MSE against ``mu = 1.5 x + 0.3``, ``x ~ N(0, 1)``, is ``mse``.

    ``E[(mu − s x − c)²] = (1.5 − s)² + (0.3 − c)²``: the error ``sqrt(mse)``
    split between the slope and the intercept at a random angle.
    """
    angle = rng.uniform(0.0, 2.0 * np.pi)
    root = math.sqrt(mse)
    return 1.5 - root * math.cos(angle), 0.3 - root * math.sin(angle)


def _paired_truth_difference(y, pred_a, pred_b, sigma, *, check: bool) -> NoisyScore:
    """``expected_paired_difference(..., test_set_sampling=True)`` without its
    bootstrap-t quantiles, which the probability does not read and which cost
    ten times the rest: the per-sample terms of the two models' truth MSEs,
    their difference's variance and degrees of freedom, as the library's.
    ``check`` compares them with the public call."""
    kwargs = {"sigma": sigma, "estimand": "truth"}
    diff = expected_paired_difference(y, pred_a, pred_b, metric=MSE, **kwargs)
    (h_a, weight, method), (h_b, _, _) = (
        sampling_terms(
            expected_mean_squared_error,
            expected_mean_squared_error(y, pred, **kwargs),
            y,
            pred,
            **kwargs,
        )
        for pred in (pred_a, pred_b)
    )
    moments = mean_total_variance(h_a - h_b, weight)
    diff = with_term_moments(diff, moments, None, weight, method)
    if check:
        public = expected_paired_difference(
            y, pred_a, pred_b, metric=MSE, test_set_sampling=True, **kwargs
        )
        assert public.expected == diff.expected
        assert public.sampling_variance == pytest.approx(diff.sampling_variance)
        assert public.sampling_dof == pytest.approx(diff.sampling_dof)
        assert public.sampling_method == diff.sampling_method
    return diff


def simulate(n_replicates: int, *, seed: int = 0) -> dict[str, np.ndarray]:
    """The reported probabilities that A is better, whether A truly is, the
    standardised errors ``(d − δ)/SD`` of the differences and the probability
    integral transform ``pit``: the same function's probability that the
    difference is below the true one, uniform where the probabilities are
    calibrated at every threshold, not only at 0.

    Each replicate: two fixed lines A and B with population MSEs
    ``m0 ± δ/2`` (``m0 ~ U(0.125, 0.475)``, the true difference
    ``δ ~ U(−0.15, 0.15)``); a test set of ``M`` samples ``x ~ N(0, 1)`` with
    labels ``mu + e``, ``e ~ N(0, σ²)``, ``σ = 0.1 + 0.15|x|`` known; the paired
    truth difference with its test-set sampling, and the probability
    ``compare_estimators`` would report from it. A is truly better when
    ``δ < 0``.
    """
    rng = np.random.default_rng(seed)
    reported, z, pit = (np.empty(n_replicates) for _ in range(3))
    truly = np.empty(n_replicates, dtype=bool)
    for r in range(n_replicates):
        middle = rng.uniform(SPREAD / 2 + 0.05, SPREAD / 2 + 0.4)
        delta = rng.uniform(-SPREAD, SPREAD)
        slope_a, icpt_a = _line(rng, middle + delta / 2)
        slope_b, icpt_b = _line(rng, middle - delta / 2)
        x = rng.normal(size=M)
        sigma = 0.1 + 0.15 * np.abs(x)
        y = 1.5 * x + 0.3 + sigma * rng.normal(size=M)
        diff = _paired_truth_difference(
            y, slope_a * x + icpt_a, slope_b * x + icpt_b, sigma, check=r < 5
        )
        reported[r] = probability_better(diff, greater_is_better=False)[0]
        truly[r] = delta < 0.0
        z[r] = (diff.expected - delta) / diff.total_std
        shifted = dataclasses.replace(diff, expected=diff.expected - delta)
        pit[r] = probability_better(shifted, greater_is_better=False)[0]
    return {"reported": reported, "truly": truly, "z": z, "pit": pit}


def reliability(reported: np.ndarray, truly: np.ndarray, n_bins: int = 10) -> list:
    """Per bin of the reported probability: count, mean p, fraction truly better
    and the binomial SE of that fraction (at the mean p)."""
    bins = np.minimum((reported * n_bins).astype(int), n_bins - 1)
    rows = []
    for k in range(n_bins):
        inside = bins == k
        count = int(inside.sum())
        if count == 0:
            continue
        mean_p = float(reported[inside].mean())
        rows.append(
            {
                "low": k / n_bins,
                "high": (k + 1) / n_bins,
                "count": count,
                "mean_p": mean_p,
                "observed": float(truly[inside].mean()),
                "se": math.sqrt(mean_p * (1.0 - mean_p) / count),
            }
        )
    return rows


def format_table(rows: list) -> str:
    lines = [
        f"{'reported p':<12}{'count':>7}{'mean p':>9}{'truly better':>14}{'SE':>8}"
    ]
    for row in rows:
        lines.append(
            f"{row['low']:.1f}–{row['high']:.1f}{'':<5}{row['count']:>7}"
            f"{row['mean_p']:>9.3f}{row['observed']:>14.3f}{row['se']:>8.3f}"
        )
    return "\n".join(lines)


def _check(rows: list, min_count: int) -> None:
    checked = [row for row in rows if row["count"] >= min_count]
    assert len(checked) == 10, format_table(rows)
    for row in checked:
        bound = max(0.05, 3.0 * row["se"])
        assert abs(row["observed"] - row["mean_p"]) <= bound, format_table(rows)


def test_calibration_small():
    """3000 seeded replicates (about 2 s): every bin within max(0.05, 3 SE)."""
    sim = simulate(3000, seed=1)
    assert np.all((sim["reported"] >= 0.0) & (sim["reported"] <= 1.0))
    _check(reliability(sim["reported"], sim["truly"]), min_count=50)
    # the SD behind the probabilities: the errors are standard (SE of the
    # SD ≈ 0.013)
    assert abs(np.std(sim["z"]) - 1.0) < 0.05
    assert abs(np.mean(sim["z"])) < 0.08
    assert stats.kstest(sim["pit"], "uniform").pvalue > 0.001


@pytest.mark.slow
def test_calibration_full():
    """100000 replicates (about 30 s): the user guide's reliability table."""
    sim = simulate(100000)
    rows = reliability(sim["reported"], sim["truly"])
    print("\n" + format_table(rows))
    print(f"SD of (d − δ)/SD: {np.std(sim['z']):.3f}, mean {np.mean(sim['z']):.3f}")
    print(f"KS p-value of the PIT: {stats.kstest(sim['pit'], 'uniform').pvalue:.3g}")
    _check(rows, min_count=400)
    assert abs(np.std(sim["z"]) - 1.0) < 0.03
    assert stats.kstest(sim["pit"], "uniform").pvalue > 0.001


# --------------------------------------------------------------------------
# End to end: compare_estimators, the fitted models against the truth
# --------------------------------------------------------------------------

BETA = np.array([1.0, -1.0, 0.5, 0.2, 0.0])
# n, σ, Ridge's alpha (ordinary least squares against a shrunk fit)
CV_SETTINGS = [(100, 0.5, 30.0), (100, 0.1, 30.0), (60, 0.3, 10.0), (300, 1.0, 30.0)]
K = 5


def _population_mse(model) -> float:
    """A linear model's MSE against ``mu = X β`` for ``X ~ N(0, I)``."""
    return float(np.sum((model.coef_ - BETA) ** 2) + model.intercept_**2)


def _models(alpha: float):
    return {"ols": LinearRegression(), "ridge": Ridge(alpha=alpha)}


def procedure_difference(n_train: int, sigma: float, alpha: float) -> float:
    """The procedures' expected truth-MSE difference at ``n_train`` (4000 fits)."""
    rng = np.random.default_rng(12345)
    total = 0.0
    for _ in range(4000):
        X = rng.normal(size=(n_train, BETA.size))
        y = X @ BETA + sigma * rng.normal(size=n_train)
        ols, ridge = (m.fit(X, y) for m in _models(alpha).values())
        total += _population_mse(ols) - _population_mse(ridge)
    return total / 4000


def simulate_cv(
    n_replicates: int, n: int, sigma: float, alpha: float, *, seed: int = 0
) -> dict[str, np.ndarray]:
    """``compare_estimators`` of OLS and Ridge on ``n`` samples, ``K`` folds.

    Per replicate: ``X ~ N(0, I)``, labels ``X β + e`` with known ``σ``; the
    reported probability, the pooled truth difference ``d`` and its SD, and the
    target it describes, ``δ_models``: the fold-size-weighted mean of the
    population truth-MSE differences of the ``K`` pairs of models fitted in
    the cross-validation. ``pit`` is the same function's probability that the
    difference is below ``δ_models`` (uniform if calibrated). For the
    learning procedures' expected difference, the corrected t-test's standard
    error and a between-split variance ``(1/K + n_test/n_train)
    max(s² − w̄, 0)`` (``s²`` of the per-fold differences, ``w̄`` their mean
    label-noise and sampling variance) are kept too.
    """
    rng = np.random.default_rng(seed)
    keys = ("reported", "check", "d", "sd", "delta_models", "pit", "t_se", "split")
    out = {key: np.empty(n_replicates) for key in keys}
    n_test = n / K
    for r in range(n_replicates):
        X = rng.normal(size=(n, BETA.size))
        y = X @ BETA + sigma * rng.normal(size=n)
        result = compare_estimators(
            _models(alpha), X, y, sigma=sigma, scoring=[MSE], cv=KFold(K)
        )
        diff = result.differences[("ols", "ridge")][MSE]
        delta = 0.0
        for train, test in KFold(K).split(X):
            ols, ridge = (m.fit(X[train], y[train]) for m in _models(alpha).values())
            delta += test.size / n * (_population_mse(ols) - _population_mse(ridge))
        folds = result.fold_differences[("ols", "ridge")][MSE]
        spread = np.var([f.expected for f in folds], ddof=1)
        within = np.mean([f.variance + diff.sampling_variance * K for f in folds])
        shifted = dataclasses.replace(diff, expected=diff.expected - delta)
        values = {
            "reported": result.probability_better[("ols", "ridge")][MSE],
            "check": probability_better(diff, greater_is_better=False)[0],
            "d": diff.expected,
            "sd": diff.total_std,
            "delta_models": delta,
            "pit": probability_better(shifted, greater_is_better=False)[0],
            "t_se": result.t_tests[("ols", "ridge")][MSE].corrected_std_error,
            "split": (1 / K + n_test / (n - n_test)) * max(spread - within, 0.0),
        }
        for key, value in values.items():
            out[key][r] = value
    return out


def _check_cv(sim: dict[str, np.ndarray], sd_tolerance: float) -> None:
    """The reported probability is the function's; the SD of the standardised
    errors is near 1; the PIT's distribution function is within 0.05 of the
    uniform one plus the Kolmogorov–Smirnov noise (its 99 % quantile): under a
    flat prior on the true difference, that distance is the largest gap
    between a reported probability and the fraction truly better."""
    np.testing.assert_array_equal(sim["reported"], sim["check"])
    z = (sim["d"] - sim["delta_models"]) / sim["sd"]
    assert abs(np.std(z) - 1.0) < sd_tolerance, np.std(z)
    distance = stats.kstest(sim["pit"], "uniform").statistic
    assert distance < 0.05 + 1.63 / math.sqrt(z.size), distance


def test_calibration_compare_estimators_small():
    """300 seeded comparisons (about 4 s): calibrated for the fitted models."""
    _check_cv(simulate_cv(300, *CV_SETTINGS[0], seed=3), sd_tolerance=0.12)


@pytest.mark.slow
@pytest.mark.parametrize("setting", CV_SETTINGS)
# a fold's truth MSE of a near-perfect fit can fall below 0 (σ = 0.1)
@pytest.mark.filterwarnings("ignore:The mean_squared_error against the true values")
def test_calibration_compare_estimators_full(setting):
    """1000 comparisons per setting (about 15 s each); ``-s`` prints the user
    guide's row (n, σ, SD of the standardised error, KS D, SD(δ_models)/SD)."""
    sim = simulate_cv(1000, *setting)
    print("\n" + _cv_row(sim, *setting[:2]))
    _check_cv(sim, sd_tolerance=0.15)


def _cv_row(sim: dict[str, np.ndarray], n: int, sigma: float) -> str:
    """The first columns of :func:`format_cv_table` for one setting."""
    return (
        f"{n:>4}{sigma:>5}"
        f"{np.std((sim['d'] - sim['delta_models']) / sim['sd']):>14.3f}"
        f"{stats.kstest(sim['pit'], 'uniform').statistic:>8.3f}"
        f"{np.std(sim['delta_models']) / np.median(sim['sd']):>17.2f}"
    )


def format_cv_table(n_replicates: int) -> str:
    """Per setting: calibration for the fitted models, and the spread of the
    pooled difference around the procedures' expected difference in units of
    three candidate SDs."""
    lines = [
        f"{'n':>4}{'σ':>5}{'SD(z) models':>14}{'KS D':>8}{'SD(δ_models)/SD':>17}"
        f"{'z procs':>9}{'+ splits':>10}{'t-test SE':>11}"
    ]
    for n, sigma, alpha in CV_SETTINGS:
        sim = simulate_cv(n_replicates, n, sigma, alpha)
        target = procedure_difference(n - n // K, sigma, alpha)
        error = sim["d"] - target
        lines.append(
            _cv_row(sim, n, sigma) + f"{np.std(error / sim['sd']):>9.2f}"
            f"{np.std(error / np.sqrt(sim['sd'] ** 2 + sim['split'])):>10.2f}"
            f"{np.std(error / sim['t_se']):>11.2f}"
        )
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover - prints the user guide's table
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    start = time.perf_counter()
    sim = simulate(n)
    print(format_table(reliability(sim["reported"], sim["truly"])))
    print(f"SD of (d − δ)/SD: {np.std(sim['z']):.3f}, mean {np.mean(sim['z']):.3f}")
    print(f"KS p-value of the PIT: {stats.kstest(sim['pit'], 'uniform').pvalue:.3g}")
    print(f"{n} replicates in {time.perf_counter() - start:.1f} s")
    start = time.perf_counter()
    print(format_cv_table(1000))
    print(
        f"compare_estimators, 1000 replicates per setting in "
        f"{time.perf_counter() - start:.1f} s"
    )
