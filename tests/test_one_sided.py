"""One-sided limits: ``confidence_interval(alternative="less" | "greater")``."""

import math

import numpy as np
import pytest
from scipy.stats import norm

from sklearn_noisy import NoisyScore
from sklearn_noisy.metrics import expected_accuracy_score


def test_far_from_a_bound_each_end_is_the_normal_quantile():
    score = NoisyScore(
        "explained_variance", expected=0.5, variance=0.01, nominal=0.5, n_samples=50,
        estimand="truth",
    )  # fmt: skip
    z = norm.ppf(0.95)
    low, high = score.confidence_interval(0.95, alternative="less")
    assert low == -math.inf and high == pytest.approx(0.5 + z * 0.1, rel=1e-12)
    low, high = score.confidence_interval(0.95, alternative="greater")
    assert low == pytest.approx(0.5 - z * 0.1, rel=1e-12) and high == 1.0


def test_an_upper_limit_starts_at_the_bound():
    # a truth MSE estimate below 0: the upper limit is positive, never empty
    score = NoisyScore(
        "mean_squared_error", expected=-0.3, variance=0.01, nominal=0.1,
        n_samples=10, estimand="truth",
    )  # fmt: skip
    low, high = score.confidence_interval(0.95, alternative="less")
    assert low == 0.0 and 0.0 < high < 0.1


def test_exact_one_sided_interval_holds_its_tail():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 80)
    pred = np.where(rng.random(80) < 0.8, y, 1 - y)
    score = expected_accuracy_score(y, pred, q=0.1, estimand="forward")
    assert score.interval_method == "exact"
    high = score.confidence_interval(0.9, alternative="less").high
    low = score.confidence_interval(0.9, alternative="greater").low
    flips = rng.random((20000, 80)) < 0.1
    draws = np.mean(np.where(flips, 1 - y, y) == pred, axis=1)
    se = math.sqrt(0.1 * 0.9 / draws.size)
    assert np.mean(draws > high) <= 0.1 + 5 * se
    assert np.mean(draws < low) <= 0.1 + 5 * se
    # and not needlessly wide: the next lattice point inside would miss more
    assert np.mean(draws >= high) > 0.1 - 5 * se


def test_bad_alternative_and_level():
    score = NoisyScore("accuracy", expected=0.8, variance=0.001, nominal=0.8,
                       n_samples=100)  # fmt: skip
    with pytest.raises(ValueError, match="alternative"):
        score.confidence_interval(0.95, alternative="upper")
    with pytest.raises(ValueError, match=r"confidence_level > 0\.5"):
        score.confidence_interval(0.4, alternative="less")
