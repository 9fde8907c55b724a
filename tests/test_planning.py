"""plan_remeasurement: the greedy plans, their SDs and an end-to-end simulation."""

from __future__ import annotations

import itertools
import pickle

import numpy as np
import pytest
from scipy.stats import binom

from sklearn_noisy.metrics import (
    expected_accuracy_score,
    expected_mean_squared_error,
    expected_root_mean_squared_error,
)
from sklearn_noisy.model_selection import RemeasurementPlan, plan_remeasurement


def _compositions(total, parts):
    """Every vector of ``parts`` non-negative integers summing to ``total``."""
    for bars in itertools.combinations(range(total + parts - 1), parts - 1):
        edges = (-1, *bars, total + parts - 1)
        yield np.array([b - a - 1 for a, b in itertools.pairwise(edges)])


def _mse_objective(y, y_pred, sigma, n, w, added):
    """The plan's objective, written out: Σ w² σ'² (4 max(T̂, 0) + 2 σ'²)."""
    t_hat = np.sum(w * ((y - y_pred) ** 2 - sigma**2)) / w.sum()
    s2 = sigma**2 * n / (n + added)
    return np.sum(w**2 * s2 * (4 * max(t_hat, 0.0) + 2 * s2))


def test_greedy_equals_brute_force_mse():
    rng = np.random.default_rng(0)
    for _ in range(5):
        y, y_pred = rng.normal(size=4), rng.normal(size=4)
        sigma = rng.uniform(0.1, 1.5, 4)
        n = rng.integers(1, 4, 4)
        w = rng.uniform(0.5, 2.0, 4)
        plan = plan_remeasurement(
            y, y_pred, sigma=sigma, n_readings=n, budget=5, sample_weight=w
        )
        assert plan.readings.sum() == 5
        best = min(
            _mse_objective(y, y_pred, sigma, n, w, k) for k in _compositions(5, 4)
        )
        got = _mse_objective(y, y_pred, sigma, n, w, plan.readings)
        assert got == pytest.approx(best, rel=1e-12)
        assert plan.method.startswith("greedy")


def _majority_error(q, m):
    m = np.asarray(m)
    tie = np.where(m % 2 == 0, binom.pmf(m // 2, m, q), 0.0)
    return binom.sf(m // 2, m, q) + 0.5 * tie


def _flip_objective(q, counts):
    q_m = _majority_error(q, counts)
    return np.sum(q_m * (1 - q_m) / (1 - 2 * q_m) ** 2)


def test_flip_plan_exact_for_odd_counts_and_close_for_even():
    rng = np.random.default_rng(1)
    worst = 1.0
    for start in ([1, 1, 3, 1], [2, 1, 2, 3]):
        for _ in range(5):
            q = rng.uniform(0.02, 0.45, 4)
            plan = plan_remeasurement(
                [0, 1, 1, 0],
                [0, 1, 0, 0],
                q=q,
                n_annotations=start,
                budget=5,
                metric="accuracy",
            )
            best = min(
                _flip_objective(q, np.add(start, k))
                for budget in range(6)
                for k in _compositions(budget, 4)
            )
            got = _flip_objective(q, np.add(start, plan.readings))
            assert plan.std_after == pytest.approx(np.sqrt(got) / 4, rel=1e-12)
            if start == [1, 1, 3, 1]:
                assert "exact" in plan.method
                assert plan.readings.sum() == 4  # pairs: one annotation unused
                assert got == pytest.approx(best, rel=1e-12)
            else:
                assert "heuristic" in plan.method
                worst = max(worst, got / best)
    # Exact on these draws (worst 1.0); over 300 random problems (counts 1-4,
    # budgets 1-6) 92.7 % were exact and the worst variance was 15 % above.
    assert worst < 1.2


def test_flip_variance_convex_in_pairs():
    """The greedy-on-pairs plan is exact because v(q_{2j-1}) is convex in j."""
    q = np.concatenate([np.linspace(1e-4, 0.49, 60), 0.5 - np.logspace(-6, -2, 10)])
    m = 2 * np.arange(1, 201) - 1
    q_m = _majority_error(q[:, None], m[None, :])
    v = q_m * (1 - q_m) / (1 - 2 * q_m) ** 2
    decrement = v[:, :-1] - v[:, 1:]
    assert np.all(decrement[:, :-1] >= decrement[:, 1:] * (1 - 1e-9))


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize(
    "metric, function",
    [
        ("mean_squared_error", expected_mean_squared_error),
        ("root_mean_squared_error", expected_root_mean_squared_error),
    ],
)
def test_std_before_is_the_library_truth_std(metric, function):
    rng = np.random.default_rng(2)
    y, y_pred = rng.normal(size=50), rng.normal(size=50)
    sigma, w = rng.uniform(0.1, 1.0, 50), rng.uniform(0.5, 2.0, 50)
    near = y_pred + 0.01 * rng.normal(size=50)  # the floor binds here
    for labels in (y, near):
        for weight in (None, w):
            plan = plan_remeasurement(
                labels,
                y_pred,
                sigma=sigma,
                n_readings=3,
                budget=0,
                metric=metric,
                sample_weight=weight,
            )
            score = function(
                labels, y_pred, sigma=sigma, sample_weight=weight, estimand="truth"
            )
            assert plan.std_before == pytest.approx(score.std, rel=1e-10)
            assert plan.std_after == plan.std_even == plan.std_before
            assert not plan.readings.any()


@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_accuracy_std_before_is_the_library_truth_std(m):
    rng = np.random.default_rng(3)
    y, y_pred = rng.integers(0, 2, 40), rng.integers(0, 2, 40)
    q, w = rng.uniform(0.0, 0.4, 40), rng.uniform(0.5, 2.0, 40)
    plan = plan_remeasurement(
        y, y_pred, q=q, n_annotations=m, budget=0, metric="accuracy", sample_weight=w
    )
    score = expected_accuracy_score(
        y, y_pred, q=_majority_error(q, m), sample_weight=w, estimand="truth"
    )
    assert plan.std_before == pytest.approx(score.std, rel=1e-10)


@pytest.mark.parametrize("q", [0.05, 0.2, 0.35, 0.45])
def test_majority_error_against_monte_carlo(q):
    """q_m of the plan against majority votes drawn with random tie-breaking."""
    rng = np.random.default_rng(4)
    n_draws = 40_000
    for m in range(1, 7):
        wrong = (rng.random((n_draws, m)) < q).sum(axis=1)
        tie = 2 * wrong == m
        vote_wrong = (2 * wrong > m) | (tie & (rng.random(n_draws) < 0.5))
        q_mc = vote_wrong.mean()
        se = np.sqrt(q_mc * (1 - q_mc) / n_draws)
        plan = plan_remeasurement(
            [1], [1], q=q, n_annotations=m, budget=0, metric="accuracy"
        )
        q_m = _majority_error(q, m)
        assert abs(q_mc - q_m) < 5 * se
        assert plan.std_before == pytest.approx(
            np.sqrt(q_m * (1 - q_m)) / (1 - 2 * q_m), rel=1e-12
        )


def _remeasure(rng, y, mu, s, n0, added):
    """New labels: the mean of the old ``n0`` and ``added`` new readings."""
    new = rng.standard_normal(y.size) * np.sqrt(added) * s + added * mu
    n = n0 + added
    return (n0 * y + new) / n, s / np.sqrt(n)


def test_end_to_end_simulation():
    """Plan, draw the new readings, and read the library's truth-MSE SD."""
    rng = np.random.default_rng(5)
    n_samples, n0, budget = 200, 2, 200
    rows = []
    for _ in range(100):
        x = rng.standard_normal(n_samples)
        mu, y_pred = 1.5 * x + 0.3, x
        s = 0.2 + 0.8 * np.abs(x)  # per-reading SD, largest where the error is
        y = mu + s / np.sqrt(n0) * rng.standard_normal(n_samples)
        plan = plan_remeasurement(
            y, y_pred, sigma=s / np.sqrt(n0), n_readings=n0, budget=budget
        )
        row = [plan.std_after, plan.std_even]
        for added in (plan.readings, plan.readings_even):
            assert added.sum() == budget
            y_new, sigma_new = _remeasure(rng, y, mu, s, n0, added)
            score = expected_mean_squared_error(
                y_new, y_pred, sigma=sigma_new, estimand="truth"
            )
            row += [score.std, score.expected]
        rows.append(row)
    after, even, std_plan, est_plan, std_even, est_even = np.array(rows).T
    assert np.mean(std_plan / after) == pytest.approx(1.0, abs=0.1)
    assert np.mean(std_even / even) == pytest.approx(1.0, abs=0.1)
    assert std_plan.mean() < 0.8 * std_even.mean()
    # The plan does not bias the truth MSE (population value 0.34).
    for estimates in (est_plan, est_even):
        assert abs(estimates.mean() - 0.34) < 4 * estimates.std() / 10


def test_readings_go_where_sigma_is_large_and_not_to_exact_labels():
    plan = plan_remeasurement(
        [0.0, 1.0, 2.0, 3.0],
        [0.5, 1.5, 2.5, 3.5],
        sigma=[0.0, 0.1, 1.0, 0.1],
        budget=10,
    )
    assert plan.readings[0] == 0
    assert plan.readings[2] == plan.readings.max()
    exact = plan_remeasurement([1.0, 2.0], [1.0, 1.0], sigma=0.0, budget=3)
    assert exact.n_added == 0 and exact.std_after == 0.0
    assert exact.readings_even.sum() == 3


def test_result_is_frozen_pickles_and_inputs_untouched():
    y, y_pred = np.array([1.0, 2.0, 3.0]), np.array([1.5, 2.0, 1.0])
    sigma = np.array([0.3, 0.2, 0.5])
    copies = [a.copy() for a in (y, y_pred, sigma)]
    plan = plan_remeasurement(y, y_pred, sigma=sigma, budget=4, confidence_level=0.9)
    for array, copy in zip((y, y_pred, sigma), copies, strict=True):
        np.testing.assert_array_equal(array, copy)
    clone = pickle.loads(pickle.dumps(plan))
    assert isinstance(clone, RemeasurementPlan)
    np.testing.assert_array_equal(clone.readings, plan.readings)
    assert clone.std_after == plan.std_after
    assert not clone.readings.flags.writeable
    with pytest.raises(AttributeError):
        plan.budget = 3
    assert plan.half_width_after == pytest.approx(1.6448536 * plan.std_after)
    text = repr(plan)
    assert "RemeasurementPlan(metric='mean_squared_error'" in text
    assert "90 % half-width" in text and "method=" in text
    assert plan.to_dict()["readings"] == plan.readings.tolist()


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"sigma": 0.1, "budget": -1}, ValueError, "budget"),
        ({"sigma": 0.1, "budget": 2.5}, TypeError, "budget"),
        ({"sigma": [0.1, 0.2], "budget": 1}, ValueError, "sigma"),
        ({"sigma": 0.1, "budget": 1, "n_readings": [1, 2]}, ValueError, "n_readings"),
        ({"sigma": 0.1, "budget": 1, "n_readings": 0}, ValueError, "n_readings"),
        ({"sigma": 0.1, "budget": 1, "sample_weight": [1, 1]}, ValueError, "sample"),
        ({"sigma": 0.1, "budget": 1, "metric": "r2"}, ValueError, "accuracy"),
        ({"sigma": 0.1, "q": 0.1, "budget": 1}, TypeError, "both"),
        ({"budget": 1}, TypeError, "neither"),
        ({"q": 0.1, "budget": 1}, ValueError, "needs sigma"),
        ({"sigma": 0.1, "budget": 1, "confidence_level": 1.0}, ValueError, "level"),
        ({"sigma": 0.1, "budget": 1, "n_annotations": 3}, TypeError, "n_annot"),
    ],
)
def test_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        plan_remeasurement([1.0, 2.0, 3.0], [1.0, 2.0, 2.5], **kwargs)


def test_errors_of_the_flip_model():
    with pytest.raises(ValueError, match="y and y_pred"):
        plan_remeasurement([0, 1], [0, 1, 1], q=0.1, budget=1, metric="accuracy")
    with pytest.raises(ValueError, match=r"below 0\.5"):
        plan_remeasurement([0, 1], [0, 1], q=0.5, budget=1, metric="accuracy")
    with pytest.raises(ValueError, match="binary"):
        plan_remeasurement([0, 1, 2], [0, 1, 1], q=0.1, budget=1, metric="accuracy")
    with pytest.raises(ValueError, match="needs q"):
        plan_remeasurement([0, 1], [0, 1], sigma=0.1, budget=1, metric="accuracy")
