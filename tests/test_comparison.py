"""Tests of the paired differences (FORMULAS §9) and compare_estimators."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.dummy import DummyClassifier
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.model_selection import KFold, ShuffleSplit
from sklearn.tree import DecisionTreeClassifier

from sklearn_noisy import compare_estimators, make_noisy_scorer
from sklearn_noisy.metrics import (
    expected_accuracy_score,
    expected_brier_score_loss,
    expected_log_loss,
    expected_mean_absolute_error,
    expected_mean_squared_error,
    expected_paired_difference,
    expected_precision_score,
)
from sklearn_noisy.metrics._engines.paired import _clipped_normal_moments
from sklearn_noisy.metrics._paired import _monte_carlo_difference
from sklearn_noisy.metrics._registry import get_metric_info
from sklearn_noisy.model_selection._pair_statistics import corrected_t_test


def _mc_check(draws: np.ndarray, score) -> tuple[float, float]:
    """z-scores of the exact mean and variance against Monte Carlo draws."""
    n = draws.size
    mean = draws.mean()
    var = draws.var(ddof=1)
    m4 = np.mean((draws - mean) ** 4)
    z_mean = (score.expected - mean) / math.sqrt(var / n)
    z_var = (score.variance - var) / math.sqrt((m4 - var * var) / n)
    return z_mean, z_var


@pytest.fixture(scope="module")
def regression_pair():
    rng = np.random.default_rng(10)
    n = 60
    y = rng.normal(size=n)
    a = y + rng.normal(scale=0.6, size=n)
    b = a + rng.normal(scale=0.3, size=n)
    b[:6] = a[:6]  # ties: zero contribution
    sigma = rng.uniform(0.05, 1.2, size=n)
    sigma[6:10] = 0.0  # exact labels
    return y, a, b, sigma


# ----------------------------------------------------------- exact formulas
def test_paired_mse_variance_is_exact(regression_pair):
    y, a, b, sigma = regression_pair
    d = expected_paired_difference(
        y, a, b, metric="mean_squared_error", sigma=sigma, estimand="forward"
    )
    m = y.size
    assert d.method == "exact"
    assert d.variance == pytest.approx(
        4 * np.sum(sigma**2 * (a - b) ** 2) / m**2, rel=1e-14
    )
    score_a = expected_mean_squared_error(y, a, sigma=sigma, estimand="forward")
    score_b = expected_mean_squared_error(y, b, sigma=sigma, estimand="forward")
    assert d.expected == pytest.approx(score_a.expected - score_b.expected, rel=1e-12)
    assert d.nominal == pytest.approx(score_a.nominal - score_b.nominal, rel=1e-12)
    # Var_A + Var_B − 2 Cov with Cov = (1/M²) Σ (2σ⁴ + 4 d_A d_B σ²) (FORMULAS §1)
    cov = np.sum(2 * sigma**4 + 4 * (y - a) * (y - b) * sigma**2) / m**2
    assert d.variance == pytest.approx(
        score_a.variance + score_b.variance - 2 * cov, rel=1e-9
    )


def test_paired_mae_against_monte_carlo(regression_pair):
    y, a, b, sigma = regression_pair
    d = expected_paired_difference(
        y, a, b, metric="mean_absolute_error", sigma=sigma, estimand="forward"
    )
    rng = np.random.default_rng(11)
    n_draws = 40_000
    draws = np.empty(n_draws)
    for start in range(0, n_draws, 10_000):
        Y = y + sigma * rng.standard_normal((10_000, y.size))
        draws[start : start + 10_000] = np.abs(Y - a).mean(1) - np.abs(Y - b).mean(1)
    z_mean, z_var = _mc_check(draws, d)
    assert abs(z_mean) < 5 and abs(z_var) < 5
    score_a = expected_mean_absolute_error(y, a, sigma=sigma, estimand="forward")
    score_b = expected_mean_absolute_error(y, b, sigma=sigma, estimand="forward")
    assert d.expected == pytest.approx(score_a.expected - score_b.expected, rel=1e-10)
    assert d.nominal == pytest.approx(score_a.nominal - score_b.nominal, rel=1e-12)


def test_clipped_normal_limits():
    # deep inside the clip: the variance is tau²; far outside: zero, mean = ±w
    mean, var = _clipped_normal_moments(
        np.array([0.0, 50.0, -50.0, 0.0]),
        np.array([1e-3, 1.0, 1.0, 1e-300]),
        np.array([1.0, 1.0, 1.0, 1.0]),
    )
    np.testing.assert_allclose(mean, [0.0, 1.0, -1.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(var[0], 1e-6, rtol=1e-12)
    assert var[1] == 0.0 and var[2] == 0.0 and var[3] == 0.0
    # w → ∞ gives the normal itself; Var D ≤ w² always
    mean, var = _clipped_normal_moments(
        np.array([0.3]), np.array([0.7]), np.array([1e6])
    )
    np.testing.assert_allclose([mean[0], var[0]], [0.3, 0.49], rtol=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    mu=st.floats(-20, 20),
    tau=st.floats(1e-3, 10),
    w=st.floats(1e-3, 10),
)
def test_clipped_normal_bounds(mu, tau, w):
    mean, var = _clipped_normal_moments(np.array([mu]), np.array([tau]), np.array([w]))
    assert -w <= mean[0] <= w
    assert 0.0 <= var[0] <= w * w * (1 + 1e-12)
    assert var[0] <= tau * tau * (1 + 1e-9)  # clipping is a contraction


def test_paired_accuracy_binary_closed_form_and_monte_carlo():
    rng = np.random.default_rng(12)
    n = 80
    y = rng.integers(0, 2, n)
    a = np.where(rng.random(n) < 0.8, y, 1 - y)
    b = np.where(rng.random(n) < 0.2, 1 - a, a)
    q = rng.uniform(0.0, 0.4, n)
    d = expected_paired_difference(y, a, b, metric="accuracy", q=q, estimand="forward")
    differ = a != b
    assert d.variance == pytest.approx(
        4 * np.sum(q[differ] * (1 - q[differ])) / n**2, rel=1e-12
    )
    score_a = expected_accuracy_score(y, a, q=q, estimand="forward")
    score_b = expected_accuracy_score(y, b, q=q, estimand="forward")
    assert d.expected == pytest.approx(score_a.expected - score_b.expected, abs=1e-15)
    flips = rng.random((50_000, n)) < q
    Y = np.where(flips, 1 - y, y)
    draws = (Y == a).mean(1) - (Y == b).mean(1)
    z_mean, z_var = _mc_check(draws, d)
    assert abs(z_mean) < 5 and abs(z_var) < 5
    # constant q: paired / unpaired = 2 × the disagreement rate (FORMULAS §9)
    d_const = expected_paired_difference(
        y, a, b, metric="accuracy", q=0.1, estimand="forward"
    )
    unpaired = 2 * 0.1 * 0.9 / n
    assert d_const.variance / unpaired == pytest.approx(2 * differ.mean(), rel=1e-12)


def test_paired_accuracy_multiclass_transition_matrix_monte_carlo():
    rng = np.random.default_rng(13)
    n, k = 70, 3
    T = np.array([[0.7, 0.2, 0.1], [0.1, 0.75, 0.15], [0.05, 0.25, 0.7]])
    labels = np.array(["a", "b", "c"])
    y = labels[rng.integers(0, k, n)]
    a = labels[rng.integers(0, k, n)]
    b = np.where(rng.random(n) < 0.6, a, labels[rng.integers(0, k, n)])
    d = expected_paired_difference(
        y,
        a,
        b,
        metric="accuracy",
        transition_matrix=T,
        labels=labels,
        estimand="forward",
    )
    index = np.searchsorted(labels, y)
    cdf = np.cumsum(T, axis=1)[index, :-1]
    draws = np.empty(40_000)
    for start in range(0, 40_000, 10_000):
        u = rng.random((10_000, n, 1))
        Y = labels[(u > cdf[None]).sum(axis=2)]
        draws[start : start + 10_000] = (Y == a).mean(1) - (Y == b).mean(1)
    z_mean, z_var = _mc_check(draws, d)
    assert abs(z_mean) < 5 and abs(z_var) < 5
    # uniform multiclass flips q: P = 1−q on the reference class, q/(K−1) elsewhere
    d_q = expected_paired_difference(
        y, a, b, metric="accuracy", q=0.3, labels=labels, estimand="forward"
    )
    score_a = expected_accuracy_score(y, a, q=0.3, labels=labels, estimand="forward")
    score_b = expected_accuracy_score(y, b, q=0.3, labels=labels, estimand="forward")
    assert d_q.expected == pytest.approx(score_a.expected - score_b.expected, abs=1e-15)


def test_paired_binary_precision_exact():
    rng = np.random.default_rng(16)
    n = 70
    y = rng.integers(0, 2, n)
    a = np.where(rng.random(n) < 0.8, y, 1 - y)
    b = np.where(rng.random(n) < 0.25, 1 - a, a)
    q = rng.uniform(0.0, 0.3, n)
    d = expected_paired_difference(y, a, b, metric="precision", q=q, estimand="forward")
    assert d.method == "exact"
    single = [expected_precision_score(y, p, q=q, estimand="forward") for p in (a, b)]
    assert d.expected == pytest.approx(
        single[0].expected - single[1].expected, abs=1e-14
    )
    assert d.nominal == pytest.approx(single[0].nominal - single[1].nominal, abs=1e-14)
    flips = rng.random((40_000, n)) < q
    Y = np.where(flips, 1 - y, y)
    draws = (Y * (a == 1)).sum(1) / (a == 1).sum() - (Y * (b == 1)).sum(1) / (
        b == 1
    ).sum()
    z_mean, z_var = _mc_check(draws, d)
    assert abs(z_mean) < 5 and abs(z_var) < 5
    # a model without predicted positives has precision 0
    none = expected_paired_difference(
        y, a, np.zeros(n, int), metric="precision", q=q, estimand="forward"
    )
    assert none.expected == pytest.approx(single[0].expected, abs=1e-14)


@pytest.mark.parametrize("metric", ["brier_score_loss", "log_loss"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_paired_probabilistic_losses_exact(metric, n_classes):
    rng = np.random.default_rng(15 + n_classes)
    n = 60
    y = rng.integers(0, n_classes, n)
    logits = rng.normal(size=(n, n_classes))
    logits[np.arange(n), y] += 1.0
    proba_a = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    proba_b = proba_a + 0.1 * rng.dirichlet(np.ones(n_classes), n)
    proba_b /= proba_b.sum(1, keepdims=True)
    proba_a[0] = np.eye(n_classes)[(y[0] + 1) % n_classes]  # a clipped p = 0
    q = rng.uniform(0.0, 0.3, n)
    d = expected_paired_difference(
        y, proba_a, proba_b, metric=metric, q=q, estimand="forward"
    )
    assert d.method == "exact"
    # expected and nominal: differences of the exact single-model metrics
    function = (
        expected_brier_score_loss
        if metric == "brier_score_loss"
        else (expected_log_loss)
    )
    columns = {"labels": np.arange(n_classes)}
    if metric == "brier_score_loss" and n_classes == 2:
        single = [
            function(y, p[:, 1], q=q, estimand="forward") for p in (proba_a, proba_b)
        ]
    else:
        single = [
            function(y, p, q=q, estimand="forward", **columns)
            for p in (proba_a, proba_b)
        ]
    assert d.expected == pytest.approx(
        single[0].expected - single[1].expected, abs=1e-12
    )
    assert d.nominal == pytest.approx(single[0].nominal - single[1].nominal, abs=1e-12)
    # the variance against a seeded Monte Carlo of the shared label noise
    score = _monte_carlo_difference(
        get_metric_info(metric),
        {},
        y,
        proba_a,
        proba_b,
        sigma=None,
        q=q,
        transition_matrix=None,
        labels=np.arange(n_classes),
        classes=np.arange(n_classes),
        n_draws=1500,
        random_state=1,
    )
    assert abs(score.expected - d.expected) < 5 * score.standard_error
    assert abs(score.variance - d.variance) < 5 * score.variance_standard_error


def test_joint_monte_carlo_path_matches_exact_mse(regression_pair):
    y, a, b, sigma = regression_pair
    exact = expected_paired_difference(
        y, a, b, metric="mean_squared_error", sigma=sigma
    )
    mc = _monte_carlo_difference(
        get_metric_info("mean_squared_error"),
        {},
        y,
        a,
        b,
        sigma=sigma,
        q=None,
        transition_matrix=None,
        labels=None,
        classes=None,
        n_draws=1500,
        random_state=0,
    )
    assert mc.method == "monte_carlo"
    assert abs(mc.expected - exact.expected) < 5 * mc.standard_error
    assert abs(mc.variance - exact.variance) < 5 * mc.variance_standard_error


def test_monte_carlo_path_for_f1_is_seeded_and_sensible():
    rng = np.random.default_rng(14)
    n = 60
    y = rng.integers(0, 2, n)
    a = np.where(rng.random(n) < 0.85, y, 1 - y)
    b = np.where(rng.random(n) < 0.7, y, 1 - y)
    d1 = expected_paired_difference(y, a, b, metric="f1", q=0.1, n_draws=300)
    d2 = expected_paired_difference(y, a, b, metric="f1", q=0.1, n_draws=300)
    assert d1.method == "monte_carlo" and d1.expected == d2.expected
    assert d1.variance > 0


def test_paired_difference_errors():
    with pytest.raises(TypeError, match="metric"):
        expected_paired_difference([1.0], [1.0], [1.0], metric=3, sigma=1.0)
    with pytest.raises(TypeError, match="sigma"):
        expected_paired_difference([1.0], [1.0], [1.0], metric="accuracy", sigma=1.0)
    with pytest.raises(TypeError, match="regression"):
        expected_paired_difference(
            [1.0], [1.0], [1.0], metric="mean_squared_error", q=0.1
        )
    with pytest.raises(ValueError, match="estimand"):
        expected_paired_difference(
            [1.0, 2.0],
            [1.0, 2.0],
            [1.0, 2.5],
            metric="mean_squared_error",
            sigma=1.0,
            estimand="remeasurement",
        )
    # a scorer gives its metric and options, not its estimand: the difference's
    scorer = make_noisy_scorer("mean_squared_error", estimand="forward")
    for estimand in ("auto", "truth", "forward"):
        by_scorer = expected_paired_difference(
            [1.0, 2.0], [1.0, 2.0], [1.0, 2.5], metric=scorer, sigma=1.0,
            estimand=estimand,
        )  # fmt: skip
        assert by_scorer.estimand == ("forward" if estimand == "forward" else "truth")
    with pytest.raises(ValueError, match="same number"):
        expected_paired_difference(
            [1.0, 2.0], [1.0, 2.0], [1.0], metric="mean_squared_error", sigma=1.0
        )


# ------------------------------------------------------------ compare_estimators
@pytest.fixture(scope="module")
def regression_data():
    rng = np.random.default_rng(20)
    X = rng.normal(size=(100, 3))
    sigma = rng.uniform(0.1, 1.0, size=100)
    y = X @ np.array([1.0, 0.5, -1.0]) + rng.normal(scale=sigma)
    return X, y, sigma


@pytest.fixture(scope="module")
def regression_comparison(regression_data):
    X, y, sigma = regression_data
    return compare_estimators(
        {"ols": LinearRegression(), "ridge": Ridge(alpha=30.0)},
        X,
        y,
        scoring=["mean_squared_error", "mean_absolute_error", "r2"],
        cv=KFold(5, shuffle=True, random_state=0),
        sigma=sigma,
        n_draws=400,
        estimand="forward",  # the tests below check forward pooled numbers
    )


def test_compare_paired_mse_exact_on_oof(regression_data, regression_comparison):
    _, y, sigma = regression_data
    result = regression_comparison
    a = result.cv_results["ols"].oof_predictions_
    b = result.cv_results["ridge"].oof_predictions_
    diff = result.differences[("ols", "ridge")]["mean_squared_error"]
    m = y.size
    assert diff.method == "exact"
    assert diff.variance == pytest.approx(
        4 * np.sum(sigma**2 * (a - b) ** 2) / m**2, rel=1e-12
    )
    pooled_a = result.pooled["ols"]["mean_squared_error"]
    pooled_b = result.pooled["ridge"]["mean_squared_error"]
    assert diff.expected == pytest.approx(
        pooled_a.expected - pooled_b.expected, rel=1e-10
    )
    # the pairing matters: far below Var_A + Var_B for these similar models
    assert diff.variance < 0.2 * (pooled_a.variance + pooled_b.variance)
    reverse = result.differences[("ridge", "ols")]["mean_squared_error"]
    assert reverse.expected == -diff.expected and reverse.variance == diff.variance


def test_compare_fold_differences_and_corrected_t_test(regression_comparison):
    result = regression_comparison
    ols, ridge = result.cv_results["ols"], result.cv_results["ridge"]
    folds = result.fold_differences[("ols", "ridge")]["mean_squared_error"]
    assert len(folds) == 5
    d = (
        ols.cv_results_["mean_squared_error_expected"]
        - (ridge.cv_results_["mean_squared_error_expected"])
    )
    np.testing.assert_allclose([f.expected for f in folds], d, rtol=1e-10)
    for k, fold in enumerate(folds):
        test = ols.test_indices_[k]
        assert fold.n_samples == test.size and fold.method == "exact"
    # Nadeau–Bengio by hand: n_test/n_train = 20/80
    t = d.mean() / math.sqrt((1 / 5 + 20 / 80) * d.var(ddof=1))
    test = result.t_tests[("ols", "ridge")]["mean_squared_error"]
    assert test.statistic == pytest.approx(t, rel=1e-9)
    assert test.pvalue == pytest.approx(2 * stats.t.sf(abs(t), 4), rel=1e-9)
    assert test.df == 4
    # non-exact metrics: exact expected differences, joint Monte Carlo variance
    r2 = result.differences[("ols", "ridge")]["r2"]
    assert r2.method == "monte_carlo" and r2.variance > 0
    assert r2.expected == pytest.approx(
        result.pooled["ols"]["r2"].expected - result.pooled["ridge"]["r2"].expected
    )
    r2_folds = result.fold_differences[("ols", "ridge")]["r2"]
    assert all(math.isnan(f.variance) for f in r2_folds)


def test_compare_summary_and_json(regression_comparison):
    result = regression_comparison
    table = result.summary()
    assert list(table["estimator"]) == result.ranking()
    assert table["rank"].tolist() == [1, 2]
    best = result.ranking()[0]
    other = result.ranking()[1]
    row = table[table["estimator"] == other]
    assert row["difference"].item() == pytest.approx(
        result.differences[(other, best)]["mean_squared_error"].expected
    )
    pairs = result.pairwise_summary()
    assert len(pairs) == 3 and set(pairs["metric"]) == set(result.metrics)
    loaded = json.loads(result.to_json())
    assert loaded["estimators"] == ["ols", "ridge"] and len(loaded["differences"]) == 3
    text = str(result)
    assert "ols − ridge" in text and "corrected t-test" in text
    with pytest.raises(ValueError, match="metric must be one of"):
        result.ranking("accuracy")


def test_compare_classifiers_default_scoring():
    rng = np.random.default_rng(21)
    X = rng.normal(size=(90, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=90) > 0).astype(int)
    q = np.full(90, 0.1)
    result = compare_estimators(
        {
            "logistic": LogisticRegression(),
            "stump": DecisionTreeClassifier(max_depth=1, random_state=0),
            "prior": DummyClassifier(),
        },
        X,
        y,
        q=q,
        cv=3,
        n_draws=100,
        estimand="forward",
    )
    assert result.metrics == ["accuracy", "balanced_accuracy", "f1", "log_loss"]
    assert result.ranking("accuracy")[-1] == "prior"
    acc = result.differences[("logistic", "stump")]["accuracy"]
    a = result.cv_results["logistic"].oof_predictions_
    b = result.cv_results["stump"].oof_predictions_
    assert acc.variance == pytest.approx(
        4 * 0.1 * 0.9 * np.count_nonzero(a != b) / 90**2, rel=1e-12
    )
    assert len(result.differences) == 6  # every ordered pair
    log_loss = result.differences[("logistic", "prior")]["log_loss"]
    assert log_loss.method == "exact"
    assert log_loss.expected == pytest.approx(
        result.pooled["logistic"]["log_loss"].expected
        - result.pooled["prior"]["log_loss"].expected,
        abs=1e-12,
    )
    assert result.differences[("logistic", "stump")]["f1"].method == "monte_carlo"


def test_compare_errors(regression_data):
    X, y, sigma = regression_data
    with pytest.raises(ValueError, match="at least two"):
        compare_estimators({"a": Ridge()}, X, y, sigma=sigma)
    with pytest.raises(TypeError, match="dict"):
        compare_estimators([Ridge(), Ridge()], X, y, sigma=sigma)
    with pytest.raises(ValueError, match="mixes"):
        compare_estimators({"a": Ridge(), "b": LogisticRegression()}, X, y, sigma=sigma)
    with pytest.raises(ValueError, match="overlap"), pytest.warns(UserWarning):
        compare_estimators(
            {"a": Ridge(), "b": LinearRegression()},
            X,
            y,
            sigma=sigma,
            scoring=["mean_squared_error"],
            cv=ShuffleSplit(3, random_state=0),
        )


def test_corrected_t_test_degenerate_cases():
    assert corrected_t_test([0.0, 0.0, 0.0], 8, 2).pvalue == 1.0
    test = corrected_t_test([0.1, 0.1, 0.1], 8, 2)
    assert test.statistic == math.inf and test.pvalue == 0.0
    assert math.isnan(corrected_t_test([0.1], 8, 2).statistic)


# ------------------------------------------------------------------ estimands
def test_truth_paired_mse_is_the_closed_form():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(90, 3))
    sigma = rng.uniform(0.1, 0.9, size=90)
    y = X @ [1.0, -1.0, 0.5] + rng.normal(scale=sigma)
    models = {"ridge": Ridge(alpha=1.0), "linear": LinearRegression()}
    forward = compare_estimators(
        models,
        X,
        y,
        scoring=["mean_squared_error"],
        cv=KFold(3),
        sigma=sigma,
        estimand="forward",
    )
    truth = compare_estimators(
        models,
        X,
        y,
        scoring=["mean_squared_error"],
        cv=KFold(3),
        sigma=sigma,
        estimand="truth",
    )
    assert truth.estimands == {"mean_squared_error": "truth"} and not truth.notes
    a = truth.cv_results["ridge"].oof_predictions_
    b = truth.cv_results["linear"].oof_predictions_
    diff = truth.differences[("ridge", "linear")]["mean_squared_error"]
    # σ² cancels: the truth difference is the nominal one, with variance
    # 4 Σ σ² (a − b)² / M²
    assert diff.estimand == "truth" and diff.method == "exact"
    assert diff.expected == pytest.approx(
        np.mean((y - a) ** 2) - np.mean((y - b) ** 2), rel=1e-12
    )
    assert diff.nominal == pytest.approx(diff.expected, rel=1e-12)
    assert diff.variance == pytest.approx(
        4.0 * np.sum(sigma**2 * (a - b) ** 2) / y.size**2, rel=1e-12
    )
    for k, (_, test) in enumerate(KFold(3).split(X)):
        fold = truth.fold_differences[("ridge", "linear")]["mean_squared_error"][k]
        assert fold.variance == pytest.approx(
            4.0 * np.sum(sigma[test] ** 2 * (a[test] - b[test]) ** 2) / test.size**2,
            rel=1e-12,
        )
    reverse = truth.differences[("linear", "ridge")]["mean_squared_error"]
    assert reverse.expected == -diff.expected and reverse.estimand == "truth"
    # the forward numbers are unchanged by the option
    assert forward.estimands == {"mean_squared_error": "forward"}
    forward_diff = forward.differences[("ridge", "linear")]["mean_squared_error"]
    assert forward_diff.estimand == "forward"
    assert "(truth)" in str(truth) and "(forward)" in str(forward)
    payload = truth.to_dict()
    assert payload["differences"][0]["estimand"] == "truth"


def test_truth_paired_accuracy_and_fallback():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(120, 2))
    y = (X[:, 0] + 0.7 * rng.normal(size=120) > 0).astype(int)
    q = rng.uniform(0.0, 0.3, size=120)
    models = {"logistic": LogisticRegression(), "tree": DecisionTreeClassifier(
        max_depth=2, random_state=0)}  # fmt: skip
    with pytest.warns(UserWarning, match="no paired truth difference for f1"):
        result = compare_estimators(
            models, X, y, scoring=["accuracy", "f1"], cv=3, q=q, estimand="truth"
        )
    assert result.estimands == {"accuracy": "truth", "f1": "forward"}
    assert "forward difference" in result.notes["f1"]
    assert "note: no paired truth difference for f1" in str(result)
    a = result.cv_results["logistic"].oof_predictions_
    b = result.cv_results["tree"].oof_predictions_
    hits = (y == a).astype(float) - (y == b).astype(float)
    diff = result.differences[("logistic", "tree")]["accuracy"]
    assert diff.expected == pytest.approx(np.mean(hits / (1 - 2 * q)), rel=1e-12)
    assert diff.nominal == pytest.approx(np.mean(hits), rel=1e-12)
    assert diff.variance == pytest.approx(
        np.sum((a != b) * 4 * q * (1 - q) / (1 - 2 * q) ** 2) / y.size**2, rel=1e-12
    )
    # unbiased for the difference of the true hits: exact enumeration on 3 samples
    true = np.array([1, 0, 1])
    pa, pb, qs = np.array([1, 1, 0]), np.array([0, 1, 1]), np.array([0.1, 0.2, 0.3])
    mean = 0.0
    for flips in np.ndindex(2, 2, 2):
        flips = np.array(flips, dtype=bool)
        weight = np.prod(np.where(flips, qs, 1 - qs))
        observed = np.where(flips, 1 - true, true)
        mean += (
            weight
            * expected_paired_difference(
                observed, pa, pb, metric="accuracy", q=qs, estimand="truth"
            ).expected
        )
    hits = (true == pa).astype(float) - (true == pb).astype(float)
    assert mean == pytest.approx(np.mean(hits), abs=1e-12)


def test_estimand_option_errors():
    rng = np.random.default_rng(9)
    X, y = rng.normal(size=(30, 2)), rng.normal(size=30)
    sigma = np.full(30, 0.2)
    with pytest.raises(ValueError, match="estimand must be one of"):
        compare_estimators(
            {"a": Ridge(), "b": LinearRegression()},
            X,
            y,
            sigma=sigma,
            estimand="nominal",
        )


def test_paired_truth_accuracy_any_flip_model_is_unbiased():
    # Exact enumeration over every labelling of 3 samples with a 3-class T:
    # the mean of the estimates is the difference of the true hits, and the
    # mean of the variance estimates (before the floor) is the variance.
    matrix = np.array([[0.8, 0.15, 0.05], [0.1, 0.7, 0.2], [0.1, 0.2, 0.7]])
    true = np.array([0, 1, 2])
    pa, pb = np.array([0, 2, 2]), np.array([1, 1, 2])
    estimates, variances, weights = [], [], []
    for observed in np.ndindex(3, 3, 3):
        observed = np.array(observed)
        weights.append(np.prod(matrix[true, observed]))
        score = expected_paired_difference(
            observed,
            pa,
            pb,
            metric="accuracy",
            transition_matrix=matrix,
            labels=[0, 1, 2],
            estimand="truth",
        )
        assert score.estimand == "truth" and score.method == "exact"
        estimates.append(score.expected)
        variances.append(score.variance)
    weights, estimates = np.array(weights), np.array(estimates)
    hits = (true == pa).astype(float) - (true == pb).astype(float)
    mean = weights @ estimates
    assert mean == pytest.approx(np.mean(hits), abs=1e-12)
    actual = weights @ (estimates - mean) ** 2
    assert weights @ np.array(variances) >= actual - 1e-12  # floored at 0


def test_paired_truth_errors():
    with pytest.raises(ValueError, match="f1 has no paired truth difference"):
        expected_paired_difference(
            [0, 1, 1], [0, 1, 0], [1, 1, 0], metric="f1", q=0.1, estimand="truth"
        )
    with pytest.raises(ValueError, match="with options"):
        expected_paired_difference(
            [0, 1, 1],
            [0, 1, 0],
            [1, 1, 0],
            metric=make_noisy_scorer("accuracy", labels=[0, 1]),
            q=0.1,
            estimand="truth",
        )
    with pytest.raises(ValueError, match="'forward' or 'truth'"):
        expected_paired_difference(
            [1.0], [1.0], [2.0], metric="mean_squared_error", sigma=0.1,
            estimand="remeasurement",
        )  # fmt: skip
    mse = expected_paired_difference(
        [1.0, 2.0], [1.5, 2.0], [1.0, 2.5], metric="mean_squared_error",
        sigma=[0.1, 0.2], estimand="truth",
    )  # fmt: skip
    assert mse.expected == mse.nominal == 0.0
    assert mse.variance == pytest.approx(4 * (0.01 * 0.25 + 0.04 * 0.25) / 4)


@pytest.mark.parametrize(
    "dof",
    [
        {"sigma_dof": 2.0},
        {"groups": np.arange(60) % 4, "sigma_shared": 0.2, "sigma_shared_dof": 3.0},
    ],
)
@pytest.mark.filterwarnings("ignore:.*batch.*fall in several test folds")
@pytest.mark.filterwarnings("ignore:The groups parameter is ignored")
def test_estimated_noise_dof_reach_the_paired_differences(dof):
    """σ or τ estimated: the pooled truth difference is the paired difference of
    the out-of-fold predictions with the same degrees of freedom (Student's)."""
    from sklearn.dummy import DummyRegressor
    from sklearn.model_selection import cross_val_predict

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = X @ [1.0, 2.0] + rng.normal(0.0, 0.5, 60)
    models = {"linear": LinearRegression(), "mean": DummyRegressor()}
    result = compare_estimators(
        models, X, y, scoring=["mean_squared_error"], cv=KFold(4), sigma=0.3, **dof
    )
    pooled = result.differences[("linear", "mean")]["mean_squared_error"]
    a, b = (cross_val_predict(m, X, y, cv=KFold(4)) for m in models.values())
    direct = expected_paired_difference(
        y, a, b, metric="mean_squared_error", sigma=0.3, estimand="truth", **dof
    )
    assert pooled.expected == pytest.approx(direct.expected, rel=1e-12)
    interval = pooled.confidence_interval(0.95)
    assert interval.method == "t"
    assert interval == pytest.approx(direct.confidence_interval(0.95), rel=1e-12)
    known = compare_estimators(
        models, X, y, scoring=["mean_squared_error"], cv=KFold(4), sigma=0.3,
        **{k: v for k, v in dof.items() if not k.endswith("dof")},
    )  # fmt: skip
    plain = known.differences[("linear", "mean")]["mean_squared_error"]
    assert plain.expected == pooled.expected
    low, high = plain.confidence_interval(0.95)
    assert interval.high - interval.low > high - low
