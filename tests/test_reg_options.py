"""scikit-learn's options of the regression metrics under noise (issue 15).

``force_finite`` and ``multioutput="variance_weighted"`` of R², and a
one-column 2-D target with a one-column per-sample ``sigma``: all rejected
before.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from sklearn_noisy.metrics import (
    expected_mean_absolute_error,
    expected_mean_squared_error,
    expected_r2_score,
    expected_root_mean_squared_error,
)

METRICS = [
    expected_mean_squared_error,
    expected_mean_absolute_error,
    expected_root_mean_squared_error,
    expected_r2_score,
]


def _r2_draws(y_true, y_pred, sigma, rng, n_draws):
    labels = y_true + sigma * rng.standard_normal((n_draws, *y_true.shape))
    sse = ((labels - y_pred) ** 2).sum(axis=1)
    sst = ((labels - labels.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    return sse, sst


@pytest.mark.parametrize("metric", METRICS)
def test_one_column_target_with_one_column_sigma(metric):
    rng = np.random.default_rng(2)
    y_true = rng.normal(size=12)
    y_pred = y_true + rng.normal(size=12)
    sigma = rng.uniform(0.1, 0.5, 12)
    reference = metric(y_true, y_pred, sigma=sigma)
    for shape in ((12, 1), (12,)):
        for y_shape in ((12, 1), (12,)):
            score = metric(
                y_true.reshape(y_shape),
                y_pred.reshape(y_shape),
                sigma=sigma.reshape(shape),
            )
            assert score.expected == reference.expected
            assert score.variance == reference.variance


def test_force_finite_only_matters_where_the_total_is_identically_zero():
    rng = np.random.default_rng(3)
    y_true = rng.normal(size=10)
    y_pred = y_true + rng.normal(size=10)
    for sigma in (0.3, np.linspace(0.0, 1.0, 10)):
        finite = expected_r2_score(y_true, y_pred, sigma=sigma, estimand="forward")
        raw = expected_r2_score(
            y_true, y_pred, sigma=sigma, force_finite=False, estimand="forward"
        )
        assert (finite.expected, finite.variance) == (raw.expected, raw.variance)
    # A constant y_true with noise: the total sum of squares is positive almost
    # surely, so both conventions give the same finite moments.
    constant = expected_r2_score([1.0] * 10, y_pred, sigma=0.5, estimand="forward")
    raw = expected_r2_score(
        [1.0] * 10, y_pred, sigma=0.5, force_finite=False, estimand="forward"
    )
    assert (constant.nominal, raw.nominal) == (0.0, -np.inf)
    assert constant.expected == raw.expected and np.isfinite(raw.expected)


def test_force_finite_must_be_a_bool():
    with pytest.raises(TypeError, match="force_finite"):
        expected_r2_score([1.0, 2.0, 3.0], [1.0, 2.0, 2.0], sigma=0.1, force_finite=1)


@pytest.mark.parametrize("estimand", ["truth", "remeasurement"])
def test_estimands_reject_options_they_do_not_model(estimand):
    y = np.arange(12.0).reshape(6, 2)
    with pytest.raises(ValueError, match="force_finite"):
        expected_r2_score(y, y + 1, sigma=0.1, estimand=estimand, force_finite=False)
    with pytest.raises(ValueError, match="variance_weighted"):
        expected_r2_score(
            y, y + 1, sigma=0.1, estimand=estimand, multioutput="variance_weighted"
        )


def test_variance_weighted_single_output_is_the_exact_r2():
    rng = np.random.default_rng(4)
    y_true = rng.normal(size=9)
    y_pred = y_true + rng.normal(size=9)
    weighted = expected_r2_score(
        y_true, y_pred, sigma=0.4, multioutput="variance_weighted", estimand="forward"
    )
    plain = expected_r2_score(y_true, y_pred, sigma=0.4, estimand="forward")
    assert weighted == plain and weighted.method == "exact"


def _vw_draws(y_true, y_pred, sigma, seed, n_draws=200_000):
    sse, sst = _r2_draws(y_true, y_pred, sigma, np.random.default_rng(seed), n_draws)
    return 1.0 - sse.sum(axis=1) / sst.sum(axis=1)


@pytest.mark.parametrize("n_samples, n_outputs", [(40, 3), (6, 2), (4, 3)])
def test_variance_weighted_monte_carlo(n_samples, n_outputs):
    # 1 - Σ_k SSE_k / Σ_k SST_k over independent outputs, exact quadrature.
    # With (4, 3) no output alone has a variance (rank 3 each), the combined
    # ratio has (rank 9): no warning.
    rng = np.random.default_rng(n_samples)
    scales = np.array([1.0, 3.0, 0.5])[:n_outputs]
    y_true = rng.normal(size=(n_samples, n_outputs)) * scales
    y_pred = y_true + rng.normal(size=(n_samples, n_outputs)) * scales / 2
    sigma = rng.uniform(0.2, 0.8, (n_samples, n_outputs))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        score = expected_r2_score(
            y_true,
            y_pred,
            sigma=sigma,
            multioutput="variance_weighted",
            estimand="forward",
        )
    assert score.method == "exact"
    draws = _vw_draws(y_true, y_pred, sigma, seed=n_samples + 1)
    se_mean = draws.std() / math.sqrt(draws.size)
    se_var = ((draws - draws.mean()) ** 2).std() / math.sqrt(draws.size)
    assert abs(score.expected - draws.mean()) < 5 * se_mean
    assert abs(score.variance - draws.var()) < 5 * se_var
    delta = expected_r2_score(
        y_true,
        y_pred,
        sigma=sigma,
        multioutput="variance_weighted",
        method="delta",
        estimand="forward",
    )
    assert delta.method == "delta"
    if n_samples == 40:  # the delta method converges to it
        assert delta.variance == pytest.approx(score.variance, rel=0.02)


def test_variance_weighted_existence_sums_the_ranks():
    # Three noisy samples per output: rank 2 each, 4 in all; the mean exists
    # (r > 2), the variance does not (r <= 4).
    y = np.array([[1.0, 2.0], [2.0, 0.0], [4.0, 1.0]])
    with pytest.warns(UserWarning, match="variance of the variance-weighted R²"):
        score = expected_r2_score(
            y, y + 0.5, sigma=0.3, multioutput="variance_weighted", estimand="forward"
        )
    assert np.isfinite(score.expected) and score.variance == np.inf
    with pytest.warns(UserWarning, match="expected value of the variance-weighted"):
        score = expected_r2_score(
            y[:2],
            y[:2] + 0.5,
            sigma=0.3,
            multioutput="variance_weighted",
            estimand="forward",
        )
    assert score.expected == -np.inf


def test_variance_weighted_with_an_exact_constant_output():
    # An output with exact, constant labels has Y_k = 0: weight 0, as in
    # scikit-learn; the rest is the R² of the other output, exactly.
    rng = np.random.default_rng(7)
    y_true = np.column_stack([rng.normal(size=30), np.full(30, 2.0)])
    y_pred = np.column_stack([y_true[:, 0] + rng.normal(size=30), np.full(30, 2.5)])
    sigma = np.column_stack([np.full(30, 0.3), np.zeros(30)])
    both = expected_r2_score(
        y_true, y_pred, sigma=sigma, multioutput="variance_weighted", estimand="forward"
    )
    first = expected_r2_score(y_true[:, 0], y_pred[:, 0], sigma=0.3, estimand="forward")
    assert both.expected == pytest.approx(first.expected, rel=1e-13)
    assert both.variance == pytest.approx(first.variance, rel=1e-10)


@pytest.mark.parametrize("metric", METRICS)
def test_negative_sample_weight_only_without_noise(metric):
    # scikit-learn accepts negative weights (rejected before at any sigma);
    # with a noisy label the metric has no distribution over the noise.
    y_true, y_pred = [1.0, 2.0, 4.0, 7.0], [1.5, 2.0, 3.0, 8.0]
    weight = [1.0, -0.5, 2.0, 1.0]
    exact = metric(y_true, y_pred, sigma=0.0, sample_weight=weight)
    assert exact.variance == 0.0 and exact.expected == exact.nominal
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        metric(y_true, y_pred, sigma=[0.0, 0.0, 0.1, 0.0], sample_weight=weight)
