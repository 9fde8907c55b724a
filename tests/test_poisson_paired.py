"""Paired differences of count labels, ``noise="poisson"`` (user guide:
poisson_noise): the MSE difference is linear in the count, so its truth
estimate is exact with label variance ``4λ(a − b)²``; the truth RMSE and R²
differences by the delta method, the forward ones by a joint Monte Carlo of
Poisson counts. Checked against seeded Poisson simulations (5 SE) and, through
``compare_estimators``, by the coverage of the difference's interval over
whole simulated experiments (a small seeded twin by default, 1000 with
``--run-slow``).
"""

import numpy as np
import pytest
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import LinearRegression
from sklearn.metrics import mean_squared_error, r2_score, root_mean_squared_error
from sklearn.model_selection import KFold

from sklearn_noisy import make_noisy_scorer
from sklearn_noisy.metrics import expected_paired_difference
from sklearn_noisy.model_selection import compare_estimators

SKLEARN = {
    "mean_squared_error": mean_squared_error,
    "root_mean_squared_error": root_mean_squared_error,
    "r2": r2_score,
}


def _case(seed=0, n=150):
    rng = np.random.default_rng(seed)
    lam = rng.uniform(1.0, 25.0, n)
    a = lam + rng.normal(0.0, 4.0, n)
    b = 0.8 * lam + rng.normal(0.0, 3.0, n)
    return rng, lam, a, b


def _true_difference(metric, lam, a, b):
    return SKLEARN[metric](lam, a) - SKLEARN[metric](lam, b)


def _within(value, reference, se, k=5.0):
    assert abs(value - reference) <= k * se, (value, reference, se)


@pytest.mark.parametrize("metric", list(SKLEARN))
def test_truth_difference_against_poisson_simulation(metric):
    # Counts drawn around fixed rates: the estimate is unbiased (MSE: exactly,
    # with the exact variance Σ w² 4λ(a − b)² / W²) or nearly so (the delta
    # method), and its reported variance is the simulated spread's.
    rng, lam, a, b = _case()
    weight = rng.uniform(0.5, 2.0, lam.size) if metric != "r2" else None
    draws = 600
    estimates, reported = np.empty((2, draws))
    for r in range(draws):
        score = expected_paired_difference(
            rng.poisson(lam), a, b, metric=metric, noise="poisson",
            sample_weight=weight,
        )  # fmt: skip
        estimates[r], reported[r] = score.expected, score.variance
    assert score.estimand == "truth"
    assert score.method == ("exact" if metric == "mean_squared_error" else "delta")
    spread = estimates.std(ddof=1)
    if metric == "mean_squared_error":
        w = np.ones(lam.size) if weight is None else weight
        truth = w @ ((lam - a) ** 2 - (lam - b) ** 2) / w.sum()
        exact = w**2 @ (4.0 * lam * (a - b) ** 2) / w.sum() ** 2
        squares = (estimates - estimates.mean()) ** 2
        _within(squares.mean(), exact, squares.std() / np.sqrt(draws))
        _within(reported.mean(), exact, reported.std() / np.sqrt(draws))
    else:
        truth = _true_difference(metric, lam, a, b)
        assert abs(reported.mean() / spread**2 - 1.0) < 0.15
    _within(estimates.mean(), truth, spread / np.sqrt(draws))


@pytest.mark.parametrize("metric", list(SKLEARN))
def test_forward_difference_against_poisson_simulation(metric):
    # y_true are exact rates; fresh counts are drawn around them.
    rng, lam, a, b = _case(1, n=60)
    score = expected_paired_difference(
        lam, a, b, metric=metric, noise="poisson", estimand="forward", n_draws=2000
    )
    counts = rng.poisson(lam, size=(2000, lam.size))
    sse = [np.square(counts - p).sum(axis=1) for p in (a, b)]
    draws = {
        "mean_squared_error": (sse[0] - sse[1]) / lam.size,
        "root_mean_squared_error": np.sqrt(sse[0] / lam.size)
        - np.sqrt(sse[1] / lam.size),
        "r2": (sse[1] - sse[0]) / (counts.var(axis=1) * lam.size),
    }[metric]
    assert score.method == (
        "exact" if metric == "mean_squared_error" else "monte_carlo"
    )
    se = np.hypot(draws.std(), score.std) / np.sqrt(2000)
    _within(score.expected, draws.mean(), se)
    assert abs(score.std / draws.std() - 1.0) < 0.1
    assert score.nominal == pytest.approx(_true_difference(metric, lam, a, b))


def test_errors_and_the_scorers_noise():
    _, lam, a, b = _case(n=10)
    counts = np.round(lam)
    scorer = make_noisy_scorer("r2", noise="poisson")
    by_scorer = expected_paired_difference(counts, a, b, metric=scorer)
    by_name = expected_paired_difference(counts, a, b, metric="r2", noise="poisson")
    assert by_scorer == by_name and by_scorer.method == "delta"
    with pytest.raises(TypeError, match="not both"):
        expected_paired_difference(
            counts, a, b, metric="mean_squared_error", noise="poisson", sigma=1.0
        )
    with pytest.raises(ValueError, match="mean squared error, its root and R²"):
        expected_paired_difference(
            counts, a, b, metric="mean_absolute_error", noise="poisson"
        )
    with pytest.raises(ValueError, match="whole-number"):
        expected_paired_difference(lam, a, b, metric="r2", noise="poisson")
    with pytest.raises(ValueError, match="noise must be one of"):
        expected_paired_difference(counts, a, b, metric="r2", noise="counts")
    with pytest.raises(ValueError, match="no metric options"):
        expected_paired_difference(
            counts, a, b, noise="poisson",
            metric=make_noisy_scorer("r2", noise="poisson", force_finite=True),
        )  # fmt: skip
    with pytest.warns(UserWarning, match="not estimable"):
        nan = expected_paired_difference(
            counts, counts + 0.1, b, metric="root_mean_squared_error", noise="poisson"
        )
    assert np.isnan(nan.expected) and np.isnan(nan.variance)


def _experiment(rng, n=120):
    X = rng.uniform(0.0, 1.0, (n, 1))
    lam = 2.0 + 12.0 * X[:, 0] + 10.0 * np.sin(5.0 * X[:, 0]) ** 2
    return X, lam, rng.poisson(lam).astype(float)


def _coverage(replicates, seed, metrics):
    # Whole experiments: rates, counts, two models cross-validated on them;
    # the target is the difference of the fitted models' metric against the
    # true rates on the out-of-fold predictions.
    rng = np.random.default_rng(seed)
    scoring = {m: make_noisy_scorer(m, noise="poisson") for m in metrics}
    hits = dict.fromkeys(metrics, 0)
    for _ in range(replicates):
        X, lam, counts = _experiment(rng)
        result = compare_estimators(
            {"linear": LinearRegression(), "mean": DummyRegressor()},
            X, counts, scoring=scoring, cv=KFold(5, shuffle=True, random_state=0),
        )  # fmt: skip
        cv = result.cv_results
        oof = cv["linear"].oof_indices_
        for metric in metrics:
            diff = result.differences["linear", "mean"][metric]
            truth = _true_difference(
                metric,
                lam[oof],
                cv["linear"].oof_responses_["predict"],
                cv["mean"].oof_responses_["predict"],
            )
            hits[metric] += abs(diff.expected - truth) <= 1.96 * diff.std
    return {m: h / replicates for m, h in hits.items()}


def test_compare_estimators_coverage_small():
    coverage = _coverage(20, 0, ["mean_squared_error", "r2"])
    assert min(coverage.values()) >= 0.8, coverage


@pytest.mark.slow
def test_compare_estimators_coverage_full():
    # 1000 experiments: 94.6, 93.7 and 93.9 % (SE 0.8) for MSE, RMSE and R².
    coverage = _coverage(1000, 2, list(SKLEARN))
    print(coverage)
    assert all(0.93 <= c <= 0.97 for c in coverage.values()), coverage


def test_count_differences_refuse_shared_batch_offsets():
    y, a, b = [3.0, 5.0, 2.0, 7.0], [2.5, 4.0, 2.0, 6.0], [3.5, 5.0, 1.0, 6.5]
    with pytest.raises(TypeError, match="noise='poisson' does not model shared"):
        expected_paired_difference(
            y, a, b, metric="mean_squared_error", noise="poisson",
            groups=[0, 0, 1, 1], sigma_shared=0.5,
        )  # fmt: skip
