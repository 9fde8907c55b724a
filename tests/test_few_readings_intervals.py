"""Intervals with σ estimated from few readings (``sigma_dof``): the truth
MSE's, RMSE's and R²'s prediction intervals and the remeasurement MAE's
label-noise pivot (user guide: error_budget, "The metric of a new test set";
estimands, "σ estimated from a few readings")."""

from __future__ import annotations

import dataclasses
import math
import pickle

import numpy as np
import pytest
from scipy import integrate, stats

from sklearn_noisy.metrics import (
    expected_mean_absolute_error,
    expected_mean_squared_error,
    expected_r2_score,
    expected_root_mean_squared_error,
)
from sklearn_noisy.metrics._engines.regression.estimands import _cube_bias


def _two_readings(seed, n=100):
    """The coverage grid's two-readings design: truth 1.5x + 0.3, model
    1.3x + 0.2, σ = 0.2 + 0.3|x|, labels the mean of two readings."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n)
    exact, sigma = 1.5 * x + 0.3, 0.2 + 0.3 * np.abs(x)
    readings = exact[:, None] + math.sqrt(2.0) * sigma[:, None] * (
        rng.standard_normal((n, 2))
    )
    sigma_hat = np.abs(readings[:, 0] - readings[:, 1]) / 2.0
    return readings.mean(axis=1), 1.3 * x + 0.2, sigma_hat


def _scores(function, seeds, **kwargs):
    for seed in seeds:
        y, pred, sigma_hat = _two_readings(seed)
        yield function(
            y,
            pred,
            sigma=sigma_hat,
            sigma_dof=1,
            estimand="truth",
            test_set_sampling=True,
            **kwargs,
        )


def test_cube_bias_is_the_chi_square_moment():
    for nu in (1.0, 2.0, 5.0, 40.0):
        moment, _ = integrate.quad(
            lambda x, nu=nu: (x / nu) ** 1.5 * stats.chi2.pdf(x, nu), 0.0, math.inf
        )
        assert abs(_cube_bias(1.0 / nu) * moment - 1.0) < 1e-8
    assert abs(_cube_bias(0.0) - 1.0) < 1e-6


def test_prediction_with_no_sampling_part_is_the_interval_with_both():
    """Where the terms spread no more than the label noise the prediction's
    variance is the label variance: the interval with both sources."""
    zero = positive = 0
    for score in _scores(expected_mean_squared_error, range(12)):
        prediction = score.prediction_interval(0.95)
        both = score.confidence_interval(0.95, source="both")
        if score.sampling_variance == 0.0:
            zero += 1
            assert prediction == score.confidence_interval(0.95) == both
        else:  # Student's t at the terms' degrees of freedom, not the pivot
            positive += 1
            assert prediction.method in ("t", "unified", "log_t")
    assert zero and positive


@pytest.mark.filterwarnings("ignore:The truth estimate of the MSE")
def test_rmse_prediction_is_the_root_of_the_mse_s():
    rows = zip(
        _scores(expected_mean_squared_error, range(4)),
        _scores(expected_root_mean_squared_error, range(4)),
        strict=True,
    )
    for mse, rmse in rows:
        square = mse.prediction_interval(0.9)
        root = rmse.prediction_interval(0.9)
        assert np.allclose(np.square(root), square, rtol=1e-9, atol=1e-12)


def test_sigma_hat_scores_pickle_with_their_prediction_interval():
    for function in (expected_mean_squared_error, expected_r2_score):
        for score in _scores(function, (3, 4)):
            copy = pickle.loads(pickle.dumps(score))
            assert copy.prediction_interval(0.95) == score.prediction_interval(0.95)
            assert copy.confidence_interval(
                0.95, source="both"
            ) == score.confidence_interval(0.95, source="both")


def test_r2_prediction_takes_the_unbiased_label_sd():
    """With no sampling part R²'s prediction interval is the one at the label
    variance times its pivot's unbiased share (< 1: the floored delta-method
    variance), inside the one at the reported variance."""
    checked = 0
    for score in _scores(expected_r2_score, range(6)):
        if score.sampling_variance != 0.0:
            continue
        plain = dataclasses.replace(score, sampling_pivot=None)
        low, high = score.prediction_interval(0.95)
        wide_low, wide_high = plain.prediction_interval(0.95)
        assert wide_low <= low < high <= wide_high
        if score.label_pivot.unbiased < 0.99:
            assert wide_low < low
            checked += 1
    assert checked


def test_mae_sigma_dof_pivot():
    y, pred, sigma_hat = _two_readings(7)
    known = expected_mean_absolute_error(
        y, pred, sigma=sigma_hat, estimand="remeasurement"
    )
    limit = expected_mean_absolute_error(
        y, pred, sigma=sigma_hat, sigma_dof=math.inf, estimand="remeasurement"
    )
    assert np.allclose(limit.confidence_interval(), known.confidence_interval())
    few = expected_mean_absolute_error(
        y, pred, sigma=sigma_hat, sigma_dof=1, estimand="remeasurement"
    )
    interval = few.confidence_interval(0.95)
    assert interval.method == "cornish_fisher"
    assert interval.low < few.expected < interval.high
    # σ̂'s uncertainty: Student's base widens it beyond the normal interval
    normal = few.confidence_interval(0.95, method="normal")
    assert interval.high - interval.low > normal.high - normal.low
