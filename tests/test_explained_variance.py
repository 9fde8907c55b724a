"""expected_explained_variance_score: R²'s engines with the residuals centred.

At zero noise it is scikit-learn's ``explained_variance_score`` (weights, every
``multioutput``, ``force_finite``, constant labels); under noise its forward
mean and variance match a seeded Monte Carlo within 5 standard errors, and its
truth estimate is unbiased for the explained variance of the true values in
an end-to-end simulation.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from sklearn import config_context
from sklearn.linear_model import Ridge
from sklearn.metrics import explained_variance_score
from sklearn.model_selection import KFold, cross_val_score

import sklearn_noisy
from sklearn_noisy.metrics import (
    expected_explained_variance_score,
    expected_paired_difference,
    get_metric_info,
    get_noisy_scorer,
)
from sklearn_noisy.metrics._engines.regression.estimands import r2_sums

EV = expected_explained_variance_score


def _data(n, n_outputs=1, seed=0, offset=0.7):
    rng = np.random.default_rng(seed)
    y = rng.normal(size=(n, n_outputs)) * 2.0
    pred = y + rng.normal(size=(n, n_outputs)) * 0.8 + offset
    sigma = rng.uniform(0.2, 0.9, size=(n, n_outputs))
    weight = rng.uniform(0.5, 2.0, size=n)
    if n_outputs == 1:
        return y[:, 0], pred[:, 0], sigma[:, 0], weight
    return y, pred, sigma, weight


def _ev_draws(y_draws, pred, weight):
    """Explained variance of each row of ``y_draws`` (n_draws, n), vectorised."""
    w = np.ones(y_draws.shape[1]) if weight is None else weight
    d = y_draws - pred
    d = d - (d @ w / w.sum())[:, None]
    c = y_draws - (y_draws @ w / w.sum())[:, None]
    return 1.0 - (d * d) @ w / ((c * c) @ w)


def test_registry_export_scorer_and_pickle():
    info = get_metric_info("explained_variance")
    assert info.function is EV is sklearn_noisy.expected_explained_variance_score
    assert "expected_explained_variance_score" in sklearn_noisy.__all__
    assert "expected_explained_variance_score" in sklearn_noisy.metrics.__all__
    assert info.sklearn_function is explained_variance_score
    assert info.scorer_name == "expected_explained_variance"
    assert info.greater_is_better and info.estimands == (
        "forward",
        "truth",
        "remeasurement",
    )
    assert info.value_range == (-np.inf, 1.0)
    assert pickle.loads(pickle.dumps(EV)) is EV
    y, pred, _, _ = _data(8)
    score = EV(y, pred, sigma=0.3, estimand="forward")
    assert pickle.loads(pickle.dumps(score)) == score


# scikit-learn's own 1 - 0/0 and x/0 of force_finite=False
@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize(
    "multioutput", ["raw_values", "uniform_average", "variance_weighted", "array"]
)
@pytest.mark.parametrize("force_finite", [True, False])
def test_zero_noise_equals_scikit_learn(weighted, multioutput, force_finite):
    y, pred, _, weight = _data(25, n_outputs=3)
    y[:, 2] = 1.5  # a constant output: force_finite's case
    weight = weight if weighted else None
    options = {
        "multioutput": np.array([0.2, 0.5, 0.3])
        if multioutput == "array"
        else multioutput,
        "force_finite": force_finite,
    }
    expected = explained_variance_score(y, pred, sample_weight=weight, **options)
    for method in ("exact", "delta"):
        ours = EV(
            y,
            pred,
            sigma=0.0,
            sample_weight=weight,
            method=method,
            **{"estimand": "forward", **options},
        )
        ours = ours if isinstance(ours, list) else [ours]
        values = np.atleast_1d(expected)
        for score, value in zip(ours, values, strict=True):
            np.testing.assert_allclose(score.nominal, value, rtol=1e-12, atol=0)
            np.testing.assert_allclose(score.expected, value, rtol=1e-12, atol=0)
            assert score.variance == 0.0


@pytest.mark.parametrize("estimand", ["forward", "truth", "remeasurement"])
def test_zero_noise_estimands_and_special_cases(estimand):
    y, pred, _, weight = _data(30)
    cases = [
        (y, pred, None),
        (y, pred, weight),
        (y, y + 3.0, weight),  # perfect up to a constant: 1.0
        (np.full(30, 2.0), pred, None),  # constant y_true: 0.0
        (np.full(30, 2.0), np.full(30, 2.0), None),  # both: 1.0
    ]
    for y_true, y_pred, w in cases:
        theirs = explained_variance_score(y_true, y_pred, sample_weight=w)
        if estimand == "truth" and np.ptp(y_true) == 0.0:
            # as R²'s: no variance above the noise, the truth is not estimable
            with pytest.warns(UserWarning, match="not estimable"):
                ours = EV(y_true, y_pred, sigma=0.0, estimand=estimand)
            assert np.isnan(ours.expected) and ours.nominal == theirs
            continue
        ours = EV(y_true, y_pred, sigma=0.0, sample_weight=w, estimand=estimand)
        np.testing.assert_allclose(ours.nominal, theirs, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(ours.expected, theirs, rtol=1e-12, atol=1e-15)
    # One sample: scikit-learn's 1.0 (NaN without force_finite), whatever the noise
    assert EV([1.0], [2.0], sigma=0.5, estimand="forward").expected == 1.0
    assert np.isnan(
        EV([1.0], [2.0], sigma=0.0, force_finite=False, estimand="forward").nominal
    )


@pytest.mark.parametrize(
    ("n", "weighted", "per_sample"),
    [(7, False, False), (12, True, True), (40, True, True), (40, False, True)],
)
def test_forward_moments_match_monte_carlo(n, weighted, per_sample):
    y, pred, sigma, weight = _data(n, seed=n)
    sigma = sigma if per_sample else 0.6
    weight = weight if weighted else None
    score = EV(y, pred, sigma=sigma, sample_weight=weight, estimand="forward")
    assert score.method == "exact"
    rng = np.random.default_rng(12345 + n)
    n_draws = 400_000
    draws = _ev_draws(y + rng.normal(size=(n_draws, n)) * sigma, pred, weight)
    mean, var = draws.mean(), draws.var()
    se_mean = draws.std() / np.sqrt(n_draws)
    centred = (draws - mean) ** 2
    se_var = centred.std() / np.sqrt(n_draws)
    assert abs(score.expected - mean) < 5.0 * se_mean
    assert abs(score.variance - var) < 5.0 * se_var
    # the delta method is close, the exact value is what the draws say
    delta = EV(
        y, pred, sigma=sigma, sample_weight=weight, method="delta", estimand="forward"
    )
    assert abs(delta.expected - score.expected) < 0.05


def test_variance_weighted_outputs_match_monte_carlo():
    y, pred, sigma, weight = _data(15, n_outputs=2, seed=3)
    score = EV(
        y,
        pred,
        sigma=sigma,
        sample_weight=weight,
        multioutput="variance_weighted",
        estimand="forward",
    )
    rng = np.random.default_rng(7)
    n_draws = 200_000
    w = weight
    num = den = 0.0
    for k in range(2):
        draws_k = y[:, k] + rng.normal(size=(n_draws, 15)) * sigma[:, k]
        d = draws_k - pred[:, k]
        d = d - (d @ w / w.sum())[:, None]
        c = draws_k - (draws_k @ w / w.sum())[:, None]
        num = num + (d * d) @ w
        den = den + (c * c) @ w
    draws = 1.0 - num / den
    assert abs(score.expected - draws.mean()) < 5.0 * draws.std() / np.sqrt(n_draws)
    se_var = ((draws - draws.mean()) ** 2).std() / np.sqrt(n_draws)
    assert abs(score.variance - draws.var()) < 5.0 * se_var


def test_explained_variance_differs_from_r2_by_the_centring():
    y, pred, sigma, weight = _data(30, offset=0.0)
    ev = EV(y, pred, sigma=sigma, sample_weight=weight, estimand="forward")
    r2 = sklearn_noisy.expected_r2_score(
        y, pred, sigma=sigma, sample_weight=weight, estimand="forward"
    )
    shifted = sklearn_noisy.expected_r2_score(
        y,
        pred + np.average(y - pred, weights=weight),
        sigma=sigma,
        sample_weight=weight,
        estimand="forward",
    )
    assert ev.expected >= r2.expected  # centring can only lower X
    # The centring uses the noisy residuals, so EV is not R² of a shifted ŷ
    assert ev.expected != pytest.approx(shifted.expected, rel=1e-9)


def test_numerator_bias_is_the_denominators():
    """``E Σw(r̃ − r̃̄_w)² = Σw(r − r̄_w)² + Σ wσ²(1 − w/W)``, per-sample σ and w."""
    y, pred, sigma, weight = _data(9, seed=5)
    rng = np.random.default_rng(11)
    n_draws = 400_000
    noisy = y + rng.normal(size=(n_draws, 9)) * sigma
    d = noisy - pred
    d = d - (d @ weight / weight.sum())[:, None]
    values = (d * d) @ weight
    r = (y - pred) - np.average(y - pred, weights=weight)
    truth = np.sum(weight * r * r)
    bias = np.sum(weight * sigma**2 * (1.0 - weight / weight.sum()))
    assert abs(values.mean() - truth - bias) < 5.0 * values.std() / np.sqrt(n_draws)
    # and r2_sums(centred=True) corrects it by exactly that estimate
    sums = r2_sums(
        y[:, None], pred[:, None], sigma[:, None], None, weight, centred=True
    )
    np.testing.assert_allclose(sums.sse_truth - sums.sse, -bias, rtol=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_truth_estimate_is_unbiased_end_to_end(weighted):
    """True values μ, fixed ŷ: the truth estimate from noisy labels, simulated."""
    n = 60
    y, pred, sigma, weight = _data(n, seed=21)
    weight = weight if weighted else None
    truth = explained_variance_score(y, pred, sample_weight=weight)
    rng = np.random.default_rng(99)
    estimates, variances = [], []
    for _ in range(3000):
        noisy = y + rng.normal(size=n) * sigma
        score = EV(noisy, pred, sigma=sigma, sample_weight=weight, estimand="truth")
        estimates.append(score.expected)
        variances.append(score.variance)
    estimates = np.asarray(estimates)
    se = estimates.std() / np.sqrt(estimates.size)
    assert abs(estimates.mean() - truth) < 4.0 * se
    # the nominal is biased low by the noise: the truth estimate removes it
    nominal = _ev_draws(y + rng.normal(size=(3000, n)) * sigma, pred, weight)
    assert truth - nominal.mean() > 10.0 * se
    # its delta-method variance matches the spread of the estimates
    np.testing.assert_allclose(np.mean(variances), estimates.var(), rtol=0.15)


def test_remeasurement_is_the_nominal_with_its_variance():
    """From noisy labels: the nominal, and an estimate of its noise variance."""
    y, pred, sigma, weight = _data(80, seed=4)
    rng = np.random.default_rng(5)
    noisy = y + rng.normal(size=(500, 80)) * sigma
    variances = []
    for labels in noisy:
        score = EV(
            labels, pred, sigma=sigma, sample_weight=weight, estimand="remeasurement"
        )
        assert score.expected == score.nominal
        variances.append(score.variance)
    draws = _ev_draws(y + rng.normal(size=(200_000, 80)) * sigma, pred, weight)
    # the delta-method variance, averaged, is the variance of the nominal
    np.testing.assert_allclose(np.mean(variances), draws.var(), rtol=0.1)


def test_truth_rejects_force_finite_false_and_flags_no_signal():
    y, pred, _, _ = _data(20)
    with pytest.raises(ValueError, match="force_finite=True"):
        EV(y, pred, sigma=0.1, estimand="truth", force_finite=False)
    flat = np.full(20, 1.0) + 0.01 * np.arange(20)
    with pytest.warns(UserWarning, match="explained variance against the true"):
        score = EV(flat, pred, sigma=1.0, estimand="truth")
    assert np.isnan(score.expected)


def test_test_set_sampling_and_paired_difference():
    y, pred, sigma, weight = _data(50, seed=8)
    score = EV(
        y,
        pred,
        sigma=sigma,
        sample_weight=weight,
        test_set_sampling=True,
        estimand="forward",
    )
    plain = EV(y, pred, sigma=sigma, sample_weight=weight, estimand="forward")
    assert (score.expected, score.variance) == (plain.expected, plain.variance)
    assert 0.0 < score.sampling_variance < np.inf
    rng = np.random.default_rng(2)
    other = y + rng.normal(size=50) * 1.2
    difference = expected_paired_difference(
        y,
        pred,
        other,
        metric="explained_variance",
        sigma=sigma,
        n_draws=4000,
        estimand="forward",
    )
    draws = _ev_draws(
        y + np.random.default_rng(3).normal(size=(40_000, 50)) * sigma, pred, None
    ) - _ev_draws(
        y + np.random.default_rng(3).normal(size=(40_000, 50)) * sigma, other, None
    )
    assert abs(difference.expected - draws.mean()) < 5.0 * difference.standard_error
    np.testing.assert_allclose(
        difference.nominal,
        explained_variance_score(y, pred) - explained_variance_score(y, other),
        rtol=1e-12,
    )


def test_named_scorer_with_routed_sigma():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + rng.normal(size=60) * 0.5
    sigma = np.full(60, 0.5)
    scorer = get_noisy_scorer("expected_explained_variance")
    assert scorer.metric == "explained_variance"
    with config_context(enable_metadata_routing=True):
        scores = cross_val_score(
            Ridge(), X, y, cv=KFold(3), scoring=scorer, params={"sigma": sigma}
        )
    expected = []
    for train, test in KFold(3).split(X):
        model = Ridge().fit(X[train], y[train])
        expected.append(EV(y[test], model.predict(X[test]), sigma=sigma[test]).expected)
    np.testing.assert_allclose(scores, expected, rtol=1e-12)
