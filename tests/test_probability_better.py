"""The probability that one model is truly better (issue 24, first item).

The unit tests check the formula and where ``compare_estimators`` reports it;
the calibration tests simulate whole comparisons with a known truth: among the
comparisons reported at *p*, A must be truly better in a fraction *p* of them.
``python tests/test_probability_better.py`` prints the reliability table
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

from sklearn_noisy import NoisyScore
from sklearn_noisy.metrics import expected_paired_difference
from sklearn_noisy.model_selection import compare_estimators
from sklearn_noisy.model_selection._comparison import (
    PROBABILITY_METHODS,
    _probability_better,
    _split_variance,
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
    p, method = _probability_better(_score(-0.02, 0.01**2), greater_is_better=False)
    assert p == pytest.approx(stats.norm.cdf(2.0), rel=1e-12)
    assert method == PROBABILITY_METHODS["label_noise"]
    assert "label noise only" in method
    p, _ = _probability_better(_score(-0.02, 0.01**2), greater_is_better=True)
    assert p == pytest.approx(stats.norm.cdf(-2.0), rel=1e-12)
    # with the sampling: Student's t, Satterthwaite's degrees of freedom
    score = _score(0.03, 0.01**2, sampling=0.02**2, dof=12.0)
    p, method = _probability_better(score, greater_is_better=True)
    total = 0.01**2 + 0.02**2
    dof = total**2 / (0.02**4 / 12.0)
    assert p == pytest.approx(stats.t.cdf(0.03 / math.sqrt(total), dof), rel=1e-10)
    assert method == PROBABILITY_METHODS["sampling"]
    # and the between-split variance, its own degrees of freedom
    p, method = _probability_better(score, True, split_variance=0.015**2, split_dof=4)
    total += 0.015**2
    dof = total**2 / (0.02**4 / 12.0 + 0.015**4 / 4.0)
    assert p == pytest.approx(stats.t.cdf(0.03 / math.sqrt(total), dof), rel=1e-10)
    assert method == PROBABILITY_METHODS["splits"]
    # the sampling variance without its estimate's uncertainty: the normal
    p, _ = _probability_better(_score(0.03, 0.0, sampling=0.01**2), True)
    assert p == pytest.approx(stats.norm.cdf(3.0), rel=1e-12)


def test_probability_edge_cases():
    assert math.isnan(_probability_better(_score(0.1, math.inf), True)[0])
    assert math.isnan(_probability_better(_score(0.1, math.nan), True)[0])
    assert math.isnan(
        _probability_better(_score(0.1, 0.01, sampling=math.inf), True)[0]
    )
    # no variance at all: certain, or even
    assert _probability_better(_score(0.1, 0.0), True)[0] == 1.0
    assert _probability_better(_score(0.1, 0.0), False)[0] == 0.0
    assert _probability_better(_score(0.0, 0.0), True)[0] == 0.5


def test_split_variance_by_hand():
    pooled = _score(0.05, 0.0004, sampling=0.0001)
    folds = [NoisyScore("d", e, 0.0005, e, 20) for e in (0.01, 0.09, 0.02, 0.11, 0.02)]
    variance, dof = _split_variance(pooled, folds, n_train=80.0, n_test=20.0)
    s2 = np.var([0.01, 0.09, 0.02, 0.11, 0.02], ddof=1)
    within = 0.0005 + 0.0001 * 100 / 20
    assert s2 > within
    assert variance == pytest.approx((1 / 5 + 20 / 80) * (s2 - within), rel=1e-12)
    assert dof == 4.0
    # per-fold spread below the label noise and sampling: no split variance
    same = [NoisyScore("d", 0.05, 0.002, 0.05, 20) for _ in range(5)]
    assert _split_variance(pooled, same, 80.0, 20.0) == (0.0, 4.0)
    # Monte Carlo folds (NaN variance) or no sampling: not available
    nan_folds = [NoisyScore("d", 0.05, math.nan, 0.05, 20) for _ in range(5)]
    assert math.isnan(_split_variance(pooled, nan_folds, 80.0, 20.0)[0])
    assert math.isnan(_split_variance(_score(0.05, 0.0004), folds, 80.0, 20.0)[0])


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
    # the MSE: exact, with the sampling and the between-split variance
    diff = result.differences[("ols", "ridge")][MSE]
    p = result.probability_better[("ols", "ridge")][MSE]
    assert (
        result.probability_method[("ols", "ridge")][MSE]
        == (PROBABILITY_METHODS["splits"])
    )
    folds = result.fold_differences[("ols", "ridge")][MSE]
    split = _split_variance(diff, folds, 120.0, 30.0)
    assert p == _probability_better(diff, False, *split)[0]
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
    assert PROBABILITY_METHODS["splits"] in text
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
    ``compare_estimators`` would report from it (no between-split variance:
    the predictors are fixed). A is truly better when ``δ < 0``.
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
        diff = expected_paired_difference(
            y,
            slope_a * x + icpt_a,
            slope_b * x + icpt_b,
            metric=MSE,
            sigma=sigma,
            estimand="truth",
            test_set_sampling=True,
        )
        reported[r] = _probability_better(diff, greater_is_better=False)[0]
        truly[r] = delta < 0.0
        z[r] = (diff.expected - delta) / diff.total_std
        shifted = dataclasses.replace(diff, expected=diff.expected - delta)
        pit[r] = _probability_better(shifted, greater_is_better=False)[0]
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
    # SD ≈ 0.013); with the label noise alone it would be about 1.3
    assert abs(np.std(sim["z"]) - 1.0) < 0.05
    assert abs(np.mean(sim["z"])) < 0.08
    assert stats.kstest(sim["pit"], "uniform").pvalue > 0.001


@pytest.mark.slow
def test_calibration_full():
    """100000 replicates (about 30 s): the user guide's reliability table."""
    sim = simulate(100000)
    rows = reliability(sim["reported"], sim["truly"])
    print("\n" + format_table(rows))
    _check(rows, min_count=400)
    assert abs(np.std(sim["z"]) - 1.0) < 0.03
    assert stats.kstest(sim["pit"], "uniform").pvalue > 0.001


if __name__ == "__main__":  # pragma: no cover - prints the user guide's table
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    start = time.perf_counter()
    sim = simulate(n)
    print(format_table(reliability(sim["reported"], sim["truly"])))
    print(f"SD of (d − δ)/SD: {np.std(sim['z']):.3f}, mean {np.mean(sim['z']):.3f}")
    print(f"KS p-value of the PIT: {stats.kstest(sim['pit'], 'uniform').pvalue:.3g}")
    print(f"{n} replicates in {time.perf_counter() - start:.1f} s")
