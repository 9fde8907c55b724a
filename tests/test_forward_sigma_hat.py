"""The forward estimand with σ estimated from few readings (``sigma_dof``):
the interval is one for the metric on labels drawn with the true σ, over both
the label draw and σ̂'s error (user guide: estimands, "σ estimated from a few
readings"; verification, the forward table's two-readings rows)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from sklearn_noisy.metrics import (
    expected_mean_absolute_error,
    expected_mean_squared_error,
    expected_root_mean_squared_error,
)
from sklearn_noisy.metrics._engines.regression.forward_sigma import folded_sigma_hat
from sklearn_noisy.metrics._engines.regression.sums import folded_moments


def _design(rng, reps, n=100):
    """The coverage grid's two-readings design (``few``): exact values 1.5x + 0.3,
    model 1.3x + 0.2, σ = 0.2 + 0.3|x|, σ̂ = |r₁ − r₂|/2 ~ σ|Z| (ν = 1)."""
    x = rng.standard_normal((reps, n))
    sigma = 0.2 + 0.3 * np.abs(x)
    readings = rng.standard_normal((reps, n, 2)) * math.sqrt(2.0) * sigma[..., None]
    sigma_hat = np.abs(readings[..., 0] - readings[..., 1]) / 2.0
    return 1.5 * x + 0.3, 1.3 * x + 0.2, sigma, sigma_hat


@pytest.mark.parametrize("nu", [1.0, 3.5])
def test_folded_sigma_hat_is_unbiased(nu):
    """``E g(d, σ̂) = E|d + σZ|`` over ``σ̂² ~ σ² χ²_ν/ν`` (quadrature), with
    ``g = max(|d|, σ̂)`` at ν = 1, where the plug-in ``E|d + σ̂Z|`` is low."""
    d = np.array([0.0, 0.6, 2.0])[:, None]
    exact = folded_moments(d[:, 0], np.ones(3))[0]

    def mean_of(function):  # over σ̂ at the χ² quantiles (σ = 1)
        x = np.linspace(0.0, 1.0, 40_001)[1:-1]
        s = np.broadcast_to(np.sqrt(stats.chi2.ppf(x, nu) / nu), (3, x.size))
        return integrate.simpson(function(s), x=x, axis=1)

    g = mean_of(lambda s: folded_sigma_hat(np.broadcast_to(d, s.shape), s, nu)[0])
    np.testing.assert_allclose(g, exact, rtol=2e-4)
    s = np.array([0.4, 1.7])
    g, _ = folded_sigma_hat(np.array([0.5, 0.5]), s, np.array([1.0, 1.0]))
    np.testing.assert_allclose(g, np.maximum(0.5, s), rtol=1e-12)
    plug_in = mean_of(lambda s: folded_moments(np.broadcast_to(d, s.shape), s)[0])
    if nu == 1.0:  # E σ̂ = 0.80 σ
        assert plug_in[0] < 0.81 * exact[0]


def _coverage(function, source, reps=100, draws=150, seed=0):
    """Per replicate, the hit fractions of its 95 % interval over ``draws``
    targets: fresh labels around the exact values with the true σ
    (``label_noise``), or new test sets' noisy labels (``prediction``)."""
    rng = np.random.default_rng(seed)
    exact, pred, sigma, sigma_hat = _design(rng, reps)
    below, above = np.empty(reps), np.empty(reps)
    for r in range(reps):
        score = function(
            exact[r],
            pred[r],
            sigma=sigma_hat[r],
            sigma_dof=1,
            estimand="forward",
            test_set_sampling=source == "prediction",
        )
        if source == "label_noise":
            interval = score.confidence_interval(0.95)
            assert interval.method == "log_t"
            labels = exact[r] + sigma[r] * rng.standard_normal((draws, exact.shape[1]))
            error = labels - pred[r]
        else:
            interval = score.prediction_interval(0.95)
            new_exact, new_pred, new_sigma, _ = _design(rng, draws)
            labels = new_exact + new_sigma * rng.standard_normal(new_exact.shape)
            error = labels - new_pred
        absolute = function is expected_mean_absolute_error
        values = np.abs(error).mean(1) if absolute else np.square(error).mean(1)
        below[r], above[r] = (
            np.mean(values < interval[0]),
            np.mean(values > interval[1]),
        )
    se = np.std(1.0 - below - above, ddof=1) / math.sqrt(reps)
    se_tail = max(np.std(below, ddof=1), np.std(above, ddof=1)) / math.sqrt(reps)
    return 1.0 - below.mean() - above.mean(), below.mean(), above.mean(), se, se_tail


@pytest.mark.parametrize(
    ("function", "source"),
    [
        (expected_mean_absolute_error, "label_noise"),
        (expected_mean_absolute_error, "prediction"),
        (expected_mean_squared_error, "prediction"),
    ],
)
def test_two_readings_forward_coverage(function, source):
    """Before, σ̂ taken as σ: the MAE's label-noise interval covered 73.6 %
    (26.2 % above: E σ̂ = 0.80 σ), its prediction interval 92.1 % (7.9 %
    above), the MSE's prediction interval 99.6 % (E σ̂⁴ = 3σ⁴)."""
    coverage, below, above, se, se_tail = _coverage(function, source)
    assert abs(coverage - 0.95) <= 5 * se, (coverage, below, above, se)
    assert max(below, above) <= 0.025 + 5 * se_tail, (coverage, below, above)


def test_sigma_known_is_unchanged():
    """``sigma_dof`` infinite (σ known) gives the exact forward result; a
    finite one the prediction interval, which is no exact distribution."""
    rng = np.random.default_rng(3)
    exact, pred, _, sigma_hat = _design(rng, 1, 6)
    for function in (
        expected_mean_absolute_error,
        expected_mean_squared_error,
        expected_root_mean_squared_error,
    ):
        known = function(exact[0], pred[0], sigma=sigma_hat[0], estimand="forward")
        same = function(
            exact[0],
            pred[0],
            sigma=sigma_hat[0],
            sigma_dof=math.inf,
            estimand="forward",
        )
        assert same == known
        assert same.interval_method == known.interval_method != "normal"
        estimated = function(
            exact[0], pred[0], sigma=sigma_hat[0], sigma_dof=2.0, estimand="forward"
        )
        low, high = estimated.confidence_interval()
        assert 0.0 <= low < estimated.expected < high
        assert estimated.interval_method != "exact"  # the RMSE's: the MSE's root
        assert estimated.confidence_interval().method == "log_t"
        with pytest.raises(ValueError, match="not available"):
            estimated.confidence_interval(method="exact")
