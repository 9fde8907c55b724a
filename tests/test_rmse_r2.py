"""Exact RMSE and R² under Gaussian label error (FORMULAS.md §5, §6).

Monte Carlo checks use a tolerance of 5 standard errors derived from the draws
(for a variance, SE ≈ sqrt((m4 − var²)/N) from the sample 4th moment).
"""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest
from _formulas_settings import formulas_setting
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, special, stats
from sklearn.metrics import r2_score, root_mean_squared_error

from sklearn_noisy import (
    NoisyScore,
    expected_mean_squared_error,
    expected_r2_score,
    expected_root_mean_squared_error,
)
from sklearn_noisy.metrics import (
    expected_r2_score as metrics_r2,
)
from sklearn_noisy.metrics import (
    expected_root_mean_squared_error as metrics_rmse,
)

Z_TOL = 5.0


def _monte_carlo(y_true, y_pred, sigma, metric, n_draws, weight=None, seed=0):
    """Draws of the metric, in batches (never an n_draws × n_samples array)."""
    rng = np.random.default_rng(seed)
    m = y_true.shape[0]
    w = np.ones(m) if weight is None else np.asarray(weight, dtype=float)
    batch = max(1, min(n_draws, 2_000_000 // m))
    values = []
    for start in range(0, n_draws, batch):
        size = min(batch, n_draws - start)
        y = y_true + rng.standard_normal((size, m)) * sigma
        sse = ((y - y_pred) ** 2) @ w
        if metric == "rmse":
            values.append(np.sqrt(sse / w.sum()))
        else:
            centred = y - (y @ w / w.sum())[:, None]
            values.append(1.0 - sse / ((centred**2) @ w))
    return np.concatenate(values)


def _z_scores(draws: np.ndarray, score: NoisyScore) -> tuple[float, float]:
    n = draws.size
    mean = draws.mean()
    centred = draws - mean
    var = centred @ centred / (n - 1)
    m4 = np.mean(centred**4)
    z_mean = (mean - score.expected) / math.sqrt(var / n)
    z_var = (var - score.variance) / math.sqrt((m4 - var * var) / n)
    return float(z_mean), float(z_var)


# --------------------------------------------------------------------------- RMSE


@pytest.mark.parametrize(
    "name, n_draws",
    [("A", 40_000), ("B", 40_000), ("C", 20_000), ("D", 20_000), ("E", 4000),
     ("F", 1500), ("G", 1500)],
)  # fmt: skip
def test_rmse_monte_carlo(name, n_draws):
    y_true, y_pred, sigma = formulas_setting(name)
    score = expected_root_mean_squared_error(
        y_true, y_pred, sigma=sigma, estimand="forward"
    )
    draws = _monte_carlo(y_true, y_pred, sigma, "rmse", n_draws, seed=ord(name))
    z_mean, z_var = _z_scores(draws, score)
    assert abs(z_mean) < Z_TOL, (z_mean, score)
    assert abs(z_var) < Z_TOL, (z_var, score)
    assert score.method == "exact"
    assert score.nominal == pytest.approx(
        root_mean_squared_error(y_true, y_pred), rel=1e-12
    )


def test_rmse_weighted_monte_carlo():
    rng = np.random.default_rng(7)
    y_true, y_pred, sigma = formulas_setting("D")
    weight = rng.uniform(0.0, 3.0, y_true.size)
    score = expected_root_mean_squared_error(
        y_true, y_pred, sigma=sigma, sample_weight=weight, estimand="forward"
    )
    draws = _monte_carlo(y_true, y_pred, sigma, "rmse", 20_000, weight=weight, seed=1)
    z_mean, z_var = _z_scores(draws, score)
    assert abs(z_mean) < Z_TOL and abs(z_var) < Z_TOL, (z_mean, z_var)
    assert score.nominal == pytest.approx(
        root_mean_squared_error(y_true, y_pred, sample_weight=weight), rel=1e-12
    )


@pytest.mark.parametrize("n_samples, sigma", [(5, 0.8), (30, 0.8), (10_000, 1.5)])
def test_rmse_matches_noncentral_chi(n_samples, sigma):
    """Constant σ: M·MSE/σ² ~ χ'²_M(λ), E[RMSE] = (σ/√M) E[χ'_M(λ)]."""
    rng = np.random.default_rng(n_samples)
    y_true = rng.normal(0.0, 3.0, n_samples)
    y_pred = y_true + rng.normal(0.0, 1.0, n_samples)
    d = y_true - y_pred
    score = expected_root_mean_squared_error(
        y_true, y_pred, sigma=sigma, estimand="forward"
    )
    lam = float(d @ d) / sigma**2
    mean_chi = stats.ncx2(n_samples, lam).expect(np.sqrt)
    expected = sigma / math.sqrt(n_samples) * mean_chi
    mse = float(d @ d) / n_samples + sigma**2
    assert score.expected == pytest.approx(expected, rel=1e-12, abs=0)
    # The reference variance m − E² itself loses ~1e-11 to cancellation.
    assert score.variance == pytest.approx(mse - expected**2, rel=1e-9)


def test_rmse_zero_residual_tiny_sigma_is_scaled_chi():
    """d = 0 and σ = 1e-300: E[RMSE] = σ √(2/M) Γ((M+1)/2)/Γ(M/2), no underflow."""
    n_samples, sigma = 7, 1e-300
    y = np.linspace(-1.0, 1.0, n_samples)
    score = expected_root_mean_squared_error(y, y, sigma=sigma)
    ratio = math.exp(
        special.gammaln((n_samples + 1) / 2) - special.gammaln(n_samples / 2)
    )
    expected = sigma * math.sqrt(2.0 / n_samples) * ratio
    assert score.expected == pytest.approx(expected, rel=1e-13)
    assert score.variance == pytest.approx(sigma**2 - expected**2, rel=1e-11, abs=0)
    assert score.nominal == 0.0


@pytest.mark.parametrize("d, sigma", [(-1.0, 0.5), (3.0, 0.1), (0.0, 1.0), (2.0, 1e-9)])
def test_rmse_single_noisy_sample_is_folded_normal(d, sigma):
    """Only one noisy label, the others exact with zero residual: then
    RMSE = |e|/√M with e ~ N(d, σ²), a folded normal (FORMULAS.md §2). The
    noisy sample carries all of E[MSE], the case where ``Λ − tm`` cancels."""
    m = 6
    y_pred = np.zeros(m)
    y_true = np.zeros(m)
    y_true[-1] = d
    sigmas = np.zeros(m)
    sigmas[-1] = sigma
    score = expected_root_mean_squared_error(
        y_true, y_pred, sigma=sigmas, estimand="forward"
    )
    mean_abs = sigma * math.sqrt(2 / math.pi) * math.exp(
        -(d * d) / (2 * sigma * sigma)
    ) + d * math.erf(d / (sigma * math.sqrt(2)))
    assert score.expected == pytest.approx(mean_abs / math.sqrt(m), rel=1e-13)
    var_abs = d * d + sigma * sigma - mean_abs**2
    assert score.variance == pytest.approx(var_abs / m, rel=1e-9 if d == 2.0 else 1e-12)


def test_rmse_large_signal_to_noise_agrees_with_delta():
    """|d|/σ ~ 1e8: no overflow; the delta method is then exact to ~CV²."""
    rng = np.random.default_rng(3)
    y_true = rng.normal(0.0, 3.0, 50)
    y_pred = y_true + rng.normal(0.0, 1.0, 50)
    sigma = np.abs(y_true - y_pred) * 1e-8
    exact = expected_root_mean_squared_error(y_true, y_pred, sigma=sigma)
    delta = expected_root_mean_squared_error(
        y_true, y_pred, sigma=sigma, method="delta"
    )
    assert math.isfinite(exact.variance) and exact.variance > 0
    assert exact.expected == pytest.approx(delta.expected, rel=1e-15)
    assert exact.variance == pytest.approx(delta.variance, rel=1e-6)


def _cumulant_ratios(y_true, y_pred, sigma):
    d = y_true - y_pred
    m = np.mean(d * d + sigma**2)
    n = d.size
    v = np.sum(2 * sigma**4 + 4 * d * d * sigma**2) / n**2
    k3 = np.sum(8 * sigma**6 + 24 * d * d * sigma**4) / n**3
    return v / m**2, k3 / (2 * m * v)


@pytest.mark.parametrize("name", ["A", "B", "C", "D", "E", "F", "G"])
def test_rmse_delta_within_documented_error(name):
    """FORMULAS.md §5: E within 1 %; Var off by ≈ ½·skew·CV − (7/8)·CV²."""
    y_true, y_pred, sigma = formulas_setting(name)
    exact = expected_root_mean_squared_error(
        y_true, y_pred, sigma=sigma, estimand="forward"
    )
    delta = expected_root_mean_squared_error(
        y_true, y_pred, sigma=sigma, method="delta", estimand="forward"
    )
    assert delta.method == "delta"
    assert abs(delta.expected / exact.expected - 1) < 0.01
    cv2, skew_term = _cumulant_ratios(y_true, y_pred, sigma)
    predicted = skew_term - 0.875 * cv2
    error = delta.variance / exact.variance - 1
    if name in ("A", "B"):  # M = 5: +9 % and +18 % in the reference settings
        assert 0.0 < error < 0.25
    else:  # the a-priori diagnostic is good to about one percentage point
        assert abs(error - predicted) < 0.01 + 0.5 * cv2, (error, predicted)


def test_rmse_sigma_zero_equals_sklearn():
    rng = np.random.default_rng(11)
    y_true = rng.normal(size=(40, 3))
    y_pred = y_true + rng.normal(size=(40, 3))
    weight = rng.uniform(0.5, 2.0, 40)
    for kwargs in ({}, {"sample_weight": weight}):
        raw = expected_root_mean_squared_error(
            y_true, y_pred, sigma=0.0, multioutput="raw_values", **kwargs
        )
        reference = root_mean_squared_error(
            y_true, y_pred, multioutput="raw_values", **kwargs
        )
        for score, ref in zip(raw, reference, strict=True):
            assert score.variance == 0.0
            assert score.expected == score.nominal
            assert score.expected == pytest.approx(ref, rel=1e-12, abs=1e-15)
        mean = expected_root_mean_squared_error(y_true, y_pred, sigma=0.0, **kwargs)
        assert mean.expected == pytest.approx(
            root_mean_squared_error(y_true, y_pred, **kwargs), rel=1e-12
        )


def test_rmse_multioutput_combines_independent_outputs():
    rng = np.random.default_rng(5)
    y_true = rng.normal(size=(30, 2))
    y_pred = y_true + rng.normal(size=(30, 2))
    sigma = rng.uniform(0.1, 1.0, (30, 2))
    raw = expected_root_mean_squared_error(
        y_true, y_pred, sigma=sigma, multioutput="raw_values"
    )
    single = [
        expected_root_mean_squared_error(
            y_true[:, j], y_pred[:, j], sigma=sigma[:, j], test_set_sampling=False
        )
        for j in range(2)
    ]
    for a, b in zip(raw, single, strict=True):
        assert a == b
    weights = np.array([1.0, 3.0])
    avg = expected_root_mean_squared_error(
        y_true, y_pred, sigma=sigma, multioutput=weights
    )
    assert avg.expected == pytest.approx(
        (raw[0].expected + 3 * raw[1].expected) / 4, rel=1e-14
    )
    assert avg.variance == pytest.approx(
        (raw[0].variance + 9 * raw[1].variance) / 16, rel=1e-14
    )


# ---------------------------------------------------------------------------- R²


def test_r2_multioutput_and_warning_prefix():
    rng = np.random.default_rng(16)
    y_true = rng.normal(0.0, 3.0, (12, 2))
    y_pred = y_true + rng.normal(0.0, 1.0, (12, 2))
    sigma = rng.uniform(0.2, 1.0, (12, 2))
    raw = expected_r2_score(
        y_true, y_pred, sigma=sigma, multioutput="raw_values", estimand="forward"
    )
    for j in range(2):
        single = expected_r2_score(
            y_true[:, j],
            y_pred[:, j],
            sigma=sigma[:, j],
            estimand="forward",
            test_set_sampling=False,
        )
        assert raw[j] == single
    avg = expected_r2_score(y_true, y_pred, sigma=sigma, estimand="forward")
    assert avg.expected == pytest.approx((raw[0].expected + raw[1].expected) / 2)
    assert avg.variance == pytest.approx((raw[0].variance + raw[1].variance) / 4)
    # Output 1 has only four noisy labels (rank 4): its variance is infinite.
    sigma[4:, 1] = 0.0
    y_true[4:, 1] = 2.0
    with pytest.warns(UserWarning, match=r"^Output 1: The variance of R²"):
        raw = expected_r2_score(
            y_true, y_pred, sigma=sigma, multioutput="raw_values", estimand="forward"
        )
    assert math.isfinite(raw[0].variance) and raw[1].variance == math.inf


def _r2_dense_reference(y_true, y_pred, sigma, weight=None, upper=30.0):
    """E and Var of R² from dense-matrix tilted moments (independent of the kernel)."""
    m = y_true.size
    w = np.ones(m) if weight is None else np.asarray(weight, dtype=float)
    big_w = np.diag(w)
    centring = big_w - np.outer(w, w) / w.sum()
    values, vectors = np.linalg.eigh(centring)
    root_c = vectors @ np.diag(np.sqrt(np.clip(values, 0, None))) @ vectors.T
    s = np.diag(sigma)
    mu_y = y_true @ centring @ y_true + np.trace(centring @ s @ s)

    def moments(t):
        k = np.eye(m) + 2 * t * s @ centring @ s
        g = s @ np.linalg.inv(k) @ s
        b = np.eye(m) + 2 * t * root_c @ s @ s @ root_c
        cu = root_c @ y_true
        lik = math.exp(-0.5 * np.linalg.slogdet(k)[1] - t * cu @ np.linalg.solve(b, cu))
        v = y_true - 2 * t * g @ centring @ y_true - y_pred
        mean_x = v @ big_w @ v + np.trace(big_w @ g)
        var_x = 2 * np.trace(big_w @ g @ big_w @ g) + 4 * v @ big_w @ g @ big_w @ v
        return lik, mean_x, var_x

    def first(x):
        t = math.exp(x) / mu_y
        lik, mean_x, _ = moments(t)
        return t * lik * mean_x

    def second(x):
        t = math.exp(x) / mu_y
        lik, mean_x, var_x = moments(t)
        return t * t * lik * (var_x + mean_x**2)

    options = {"limit": 400, "epsabs": 0.0, "epsrel": 1e-11}
    e1 = integrate.quad(first, -40.0, upper, **options)[0]
    e2 = integrate.quad(second, -40.0, upper, **options)[0]
    return 1.0 - e1, e2 - e1 * e1


@pytest.mark.parametrize(
    "n_samples, n_exact, weighted",
    [(8, 2, False), (12, 0, False), (10, 3, True), (9, 0, True), (7, 1, True)],
)
def test_r2_matches_dense_reference(n_samples, n_exact, weighted):
    rng = np.random.default_rng(100 + n_samples)
    y_true = rng.normal(0.0, 3.0, n_samples)
    y_pred = y_true + rng.normal(0.0, 1.0, n_samples)
    sigma = rng.uniform(0.2, 2.0, n_samples)
    sigma[:n_exact] = 0.0
    weight = rng.integers(1, 4, n_samples).astype(float) if weighted else None
    score = expected_r2_score(
        y_true, y_pred, sigma=sigma, sample_weight=weight, estimand="forward"
    )
    expected, variance = _r2_dense_reference(y_true, y_pred, sigma, weight)
    assert score.expected == pytest.approx(expected, rel=1e-11)
    assert score.variance == pytest.approx(variance, rel=1e-8)


def test_r2_power_law_tail_rank_five():
    """Six noisy labels (rank 5): Var[R²] exists but its integrand decays only
    like e^{-x/2} in x = log t. The kernel adds that tail analytically; the
    dense reference, cut at x = 26 and x = 30, is extrapolated with the same
    rate (Richardson) to the full integral."""
    rng = np.random.default_rng(31)
    y_true = rng.normal(0.0, 3.0, 6)
    y_pred = y_true + rng.normal(0.0, 1.0, 6)
    sigma = rng.uniform(1.0, 2.5, 6)
    score = expected_r2_score(y_true, y_pred, sigma=sigma, estimand="forward")
    (_, v26), (e30, v30) = (
        _r2_dense_reference(y_true, y_pred, sigma, upper=upper)
        for upper in (26.0, 30.0)
    )
    ratio = math.exp(-2.0)
    assert score.expected == pytest.approx(e30, rel=1e-12)
    assert score.variance == pytest.approx(
        v30 + (v30 - v26) * ratio / (1 - ratio), rel=1e-8
    )
    assert abs(score.variance / v30 - 1) > 1e-7  # the tail matters at this precision


def _r2_setting(name):
    if name == "H":  # M = 5 with two distinct exact labels: all moments exist
        rng = np.random.default_rng(9)
        y_true = rng.normal(0.0, 3.0, 5)
        y_pred = y_true + rng.normal(0.0, 1.0, 5)
        sigma = np.array([0.0, 0.0, 1.0, 1.5, 0.7])
        return y_true, y_pred, sigma
    return formulas_setting(name)


@pytest.mark.parametrize(
    "name, n_draws",
    [("C", 40_000), ("D", 20_000), ("E", 3000), ("F", 1000), ("H", 40_000)],
)
def test_r2_monte_carlo(name, n_draws):
    y_true, y_pred, sigma = _r2_setting(name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        score = expected_r2_score(y_true, y_pred, sigma=sigma, estimand="forward")
    assert math.isfinite(score.variance)
    draws = _monte_carlo(y_true, y_pred, sigma, "r2", n_draws, seed=ord(name))
    z_mean, z_var = _z_scores(draws, score)
    assert abs(z_mean) < Z_TOL, (z_mean, score)
    assert abs(z_var) < Z_TOL, (z_var, score)
    assert score.nominal == pytest.approx(r2_score(y_true, y_pred), rel=1e-12)
    # Noise attenuates R² (FORMULAS.md §6).
    assert score.expected < score.nominal


def test_r2_weighted_monte_carlo():
    rng = np.random.default_rng(8)
    y_true, y_pred, sigma = formulas_setting("D")
    weight = rng.uniform(0.0, 3.0, y_true.size)
    score = expected_r2_score(
        y_true, y_pred, sigma=sigma, sample_weight=weight, estimand="forward"
    )
    draws = _monte_carlo(y_true, y_pred, sigma, "r2", 20_000, weight=weight, seed=2)
    z_mean, z_var = _z_scores(draws, score)
    assert abs(z_mean) < Z_TOL and abs(z_var) < Z_TOL, (z_mean, z_var)
    assert score.nominal == pytest.approx(
        r2_score(y_true, y_pred, sample_weight=weight), rel=1e-12
    )


def test_r2_variance_infinite_with_five_noisy_samples():
    y_true, y_pred, sigma = formulas_setting("B")
    y_pred = y_true + np.array([0.3, -0.2, 0.5, 0.1, -0.4])
    with pytest.warns(UserWarning, match=r"all 5 labels are noisy.*r > 4") as record:
        score = expected_r2_score(y_true, y_pred, sigma=sigma, estimand="forward")
    assert all(not issubclass(w.category, RuntimeWarning) for w in record)
    assert score.variance == math.inf
    assert math.isfinite(score.expected)
    # The normal interval is unbounded (clipped at R² <= 1); the default is
    # the exact one, from the distribution of R², which exists.
    assert score.confidence_interval(method="normal") == (-math.inf, 1.0)
    low, high = score.confidence_interval()
    assert math.isfinite(low) and low < score.expected < high < 1.0
    # One exact label: rank 4 again (setting A).
    y_true, y_pred, sigma = formulas_setting("A")
    with pytest.warns(UserWarning, match=r"4 of the 5 labels are noisy"):
        score = expected_r2_score(y_true, y_pred, sigma=sigma, estimand="forward")
    assert score.variance == math.inf and math.isfinite(score.expected)
    # The delta method gives a number but still warns.
    with pytest.warns(UserWarning, match="delta method"):
        delta = expected_r2_score(
            y_true, y_pred, sigma=sigma, method="delta", estimand="forward"
        )
    assert math.isfinite(delta.variance)


def test_r2_mean_infinite_with_rank_two():
    y_true = np.array([1.0, 2.0, 4.0])
    y_pred = np.array([1.5, 2.0, 3.0])
    with pytest.warns(UserWarning, match=r"expected value of R² does not exist"):
        score = expected_r2_score(y_true, y_pred, sigma=0.5, estimand="forward")
    assert score.expected == -math.inf and score.variance == math.inf


def test_r2_finite_with_two_distinct_exact_samples():
    y_true = np.array([0.0, 1.0, 2.0, 3.0])
    y_pred = np.array([0.2, 0.9, 2.3, 2.8])
    sigma = np.array([0.0, 0.0, 1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        score = expected_r2_score(y_true, y_pred, sigma=sigma, estimand="forward")
    assert math.isfinite(score.expected) and 0 < score.variance < math.inf
    expected, variance = _r2_dense_reference(y_true, y_pred, sigma)
    assert score.expected == pytest.approx(expected, rel=1e-11)
    assert score.variance == pytest.approx(variance, rel=1e-9)
    # Two exact samples with the same value do not bound Y away from 0.
    with pytest.warns(UserWarning, match="rank r = 2"):
        expected_r2_score(
            y_true, y_pred, sigma=sigma, sample_weight=[1, 0, 1, 1], estimand="forward"
        )


def test_r2_sigma_zero_equals_sklearn():
    rng = np.random.default_rng(12)
    y_true = rng.normal(size=(20, 3))
    y_pred = y_true + rng.normal(size=(20, 3))
    y_true[:, 2] = 1.5  # constant target: sklearn's force_finite convention
    weight = rng.uniform(0.5, 2.0, 20)
    for kwargs in ({}, {"sample_weight": weight}):
        raw = expected_r2_score(
            y_true,
            y_pred,
            sigma=0.0,
            multioutput="raw_values",
            **{"estimand": "forward", **kwargs},
        )
        reference = r2_score(y_true, y_pred, multioutput="raw_values", **kwargs)
        if kwargs:
            # scikit-learn's weighted mean of the constant column is rounded,
            # which leaves a tiny SST and a huge negative R²; we detect the
            # constant exactly and apply its force_finite value, 0.0.
            assert reference[2] < -1e10
            reference[2] = 0.0
        for score, ref in zip(raw, reference, strict=True):
            assert score.variance == 0.0 and score.expected == score.nominal
            assert score.expected == pytest.approx(ref, rel=1e-12, abs=1e-15)
    exact_constant = expected_r2_score(
        [2.0, 2.0, 2.0], [2.0, 2.0, 2.0], sigma=0.0, estimand="forward"
    )
    assert exact_constant.expected == 1.0 == r2_score([2.0] * 3, [2.0] * 3)


def test_r2_delta_within_documented_error():
    """M = 1000, high signal: delta E within 0.01 sd, Var within 1 % (§6)."""
    rng = np.random.default_rng(21)
    y_true = rng.normal(0.0, 3.0, 1000)
    y_pred = y_true + rng.normal(0.0, 1.0, 1000)
    sigma = rng.uniform(0.1, 2.0, 1000)
    sigma[:200] = 0.0
    exact = expected_r2_score(y_true, y_pred, sigma=sigma)
    delta = expected_r2_score(y_true, y_pred, sigma=sigma, method="delta")
    assert delta.method == "delta"
    assert abs(delta.expected - exact.expected) < 0.01 * exact.std
    assert abs(delta.variance / exact.variance - 1) < 0.01


def test_r2_extreme_sigmas_are_stable():
    """σ ~ 1e-300 and |d|/σ ~ 1e8 go through the same path without warnings."""
    y_true = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    y_pred = y_true + np.array([0.1, -0.2, 0.3, 0.0, -0.1, 0.2, 0.1, -0.3])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tiny = expected_r2_score(y_true, y_pred, sigma=1e-300)
        huge_snr = expected_r2_score(y_true, y_pred, sigma=1e-9)
    assert tiny.expected == pytest.approx(tiny.nominal, rel=1e-14)
    assert huge_snr.expected == pytest.approx(huge_snr.nominal, rel=1e-9)
    assert 0.0 <= huge_snr.variance < 1e-15


# ------------------------------------------------------------------- properties


_values = st.floats(-10.0, 10.0, allow_nan=False, allow_infinity=False)


@settings(max_examples=25, deadline=None)
@given(
    data=st.lists(
        st.tuples(_values, _values, st.floats(0.0, 3.0)), min_size=6, max_size=25
    ),
    seed=st.integers(0, 2**16),
)
def test_order_invariance_and_jensen(data, seed):
    y_true, y_pred, sigma = (np.array(column) for column in zip(*data, strict=True))
    order = np.random.default_rng(seed).permutation(y_true.size)
    rmse = expected_root_mean_squared_error(
        y_true, y_pred, sigma=sigma, estimand="forward"
    )
    shuffled = expected_root_mean_squared_error(
        y_true[order], y_pred[order], sigma=sigma[order], estimand="forward"
    )
    assert shuffled.expected == pytest.approx(rmse.expected, rel=1e-12, abs=1e-300)
    assert shuffled.variance == pytest.approx(rmse.variance, rel=1e-9, abs=1e-300)
    mse = expected_mean_squared_error(y_true, y_pred, sigma=sigma, estimand="forward")
    # Jensen: E[√MSE] ≤ √E[MSE], with Var[RMSE] = E[MSE] − E[RMSE]².
    # (MSE underflows below 1e-308 where RMSE, computed in scaled units, does not.)
    assert rmse.expected <= math.sqrt(mse.expected) * (1 + 1e-12) + 1e-150
    assert rmse.variance >= 0.0
    assert rmse.variance == pytest.approx(
        mse.expected - rmse.expected**2, rel=1e-9, abs=1e-12 * mse.expected + 1e-300
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        r2 = expected_r2_score(y_true, y_pred, sigma=sigma, estimand="forward")
        r2_shuffled = expected_r2_score(
            y_true[order], y_pred[order], sigma=sigma[order], estimand="forward"
        )
    if math.isfinite(r2.expected):
        assert r2_shuffled.expected == pytest.approx(r2.expected, rel=1e-9, abs=1e-12)
    if math.isfinite(r2.variance):
        assert r2_shuffled.variance == pytest.approx(r2.variance, rel=1e-7, abs=1e-14)


def test_integer_weights_equal_repeated_samples():
    """A weight w_i counts the sample's (single) noisy label w_i times. So
    integer weights equal repeated rows when the repeated rows are exact
    (σ = 0) and the noisy rows have weight 0 or 1: then both describe the same
    distribution, and E and Var must agree."""
    rng = np.random.default_rng(4)
    n = 14
    y_true = rng.normal(0.0, 3.0, n)
    y_pred = y_true + rng.normal(0.0, 1.0, n)
    sigma = rng.uniform(0.2, 1.5, n)
    sigma[:5] = 0.0
    counts = np.concatenate([rng.integers(1, 4, 5), rng.integers(0, 2, n - 5)])
    counts[5:7] = 1
    repeat = np.repeat(np.arange(n), counts)
    for function in (expected_root_mean_squared_error, expected_r2_score):
        weighted = function(y_true, y_pred, sigma=sigma, sample_weight=counts)
        repeated = function(y_true[repeat], y_pred[repeat], sigma=sigma[repeat])
        assert weighted.nominal == pytest.approx(repeated.nominal, rel=1e-12)
        assert weighted.expected == pytest.approx(repeated.expected, rel=1e-11)
        assert weighted.variance == pytest.approx(repeated.variance, rel=1e-9)
    # With σ = 0 everywhere any integer weights equal repeated rows.
    counts = rng.integers(1, 4, n)
    repeat = np.repeat(np.arange(n), counts)
    for function in (expected_root_mean_squared_error, expected_r2_score):
        weighted = function(y_true, y_pred, sigma=0.0, sample_weight=counts)
        repeated = function(y_true[repeat], y_pred[repeat], sigma=0.0)
        assert weighted.expected == pytest.approx(repeated.expected, rel=1e-12)


# ----------------------------------------------------------- validation, misc


@pytest.mark.parametrize(
    "function", [expected_root_mean_squared_error, expected_r2_score]
)
def test_input_validation(function):
    y = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    with pytest.raises(ValueError, match="method"):
        function(y, y, sigma=1.0, method="taylor")
    with pytest.raises(ValueError, match="sigma"):
        function(y, y, sigma=-1.0)
    with pytest.raises(TypeError, match="sigma"):
        function(y, y, sigma=None)
    with pytest.raises(ValueError, match="same number of samples"):
        function(y, y[:-1], sigma=1.0)
    with pytest.raises(ValueError, match="y_true"):
        function([1.0, np.nan, 2.0, 3.0], [1.0, 2.0, 2.0, 3.0], sigma=1.0)
    with pytest.raises(ValueError, match="sample_weight"):
        function(y, y, sigma=1.0, sample_weight=[1.0] * 5)
    if function is expected_root_mean_squared_error:  # R² offers it
        with pytest.raises(ValueError, match="multioutput"):
            function(y, y, sigma=1.0, multioutput="variance_weighted")


def test_noise_only_on_zero_weight_rows_is_no_noise():
    y_true = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    sigma = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
    weight = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 0.0])
    for y_pred in (y_true, y_true + 0.5):
        for function in (expected_root_mean_squared_error, expected_r2_score):
            score = function(y_true, y_pred, sigma=sigma, sample_weight=weight)
            reference = function(y_true[:5], y_pred[:5], sigma=0.0)
            assert score.variance == 0.0
            assert score.expected == pytest.approx(reference.expected, rel=1e-15)


def test_r2_fewer_than_two_samples_is_nan_as_in_scikit_learn():
    # scikit-learn: NaN and an UndefinedMetricWarning (this raised before).
    from sklearn.exceptions import UndefinedMetricWarning

    for sigma in (0.0, 1.0):
        with pytest.warns(UndefinedMetricWarning, match="two samples"):
            score = expected_r2_score([1.0], [1.0], sigma=sigma, estimand="forward")
        assert np.isnan(score.expected) and np.isnan(score.nominal)
    with pytest.warns(UndefinedMetricWarning):
        assert np.isnan(r2_score([1.0], [1.0]))


def test_r2_one_positive_weight_is_scikit_learns_constant():
    # One sample carries all the weight: the total sum of squares is 0, so
    # scikit-learn gives 1.0 (perfect) or 0.0 (force_finite), NaN or -inf
    # without; under noise the residual is positive almost surely (this raised).
    y, p, w = [1.0, 2.0, 3.0], [1.0, 2.0, 2.0], [0, 1, 0]
    for force_finite in (True, False):
        exact = expected_r2_score(
            y,
            p,
            sigma=0.0,
            sample_weight=w,
            force_finite=force_finite,
            estimand="forward",
        )
        with np.errstate(divide="ignore", invalid="ignore"):  # scikit-learn's 0/0
            reference = r2_score(y, p, sample_weight=w, force_finite=force_finite)
        np.testing.assert_equal(exact.nominal, reference)  # NaN == NaN here
        np.testing.assert_equal(exact.expected, reference)
        assert exact.variance == 0.0
    noisy = expected_r2_score(y, p, sigma=1.0, sample_weight=w, estimand="forward")
    assert (noisy.expected, noisy.variance, noisy.nominal) == (0.0, 0.0, 1.0)
    noisy = expected_r2_score(
        y, p, sigma=1.0, sample_weight=w, force_finite=False, estimand="forward"
    )
    assert noisy.expected == -np.inf and np.isnan(noisy.variance)


def test_inputs_unchanged_and_float32_lists_series():
    pandas = pytest.importorskip("pandas")
    rng = np.random.default_rng(6)
    y_true = rng.normal(size=20).astype(np.float32)
    y_pred = (y_true + rng.normal(size=20)).astype(np.float32)
    sigma = rng.uniform(0.0, 1.0, 20).astype(np.float32)
    weight = rng.uniform(0.5, 1.0, 20)
    copies = [a.copy() for a in (y_true, y_pred, sigma, weight)]
    for function in (expected_root_mean_squared_error, expected_r2_score):
        from_arrays = function(y_true, y_pred, sigma=sigma, sample_weight=weight)
        from_lists = function(
            y_true.tolist(), y_pred.tolist(), sigma=sigma.tolist(), sample_weight=weight
        )
        from_series = function(
            pandas.Series(y_true), pandas.Series(y_pred), sigma=pandas.Series(sigma),
            sample_weight=weight,
        )  # fmt: skip
        assert from_arrays == from_lists == from_series
        for original, copy in zip((y_true, y_pred, sigma, weight), copies, strict=True):
            np.testing.assert_array_equal(original, copy)
    assert y_true.dtype == np.float32


def test_results_pickle_and_public_names():
    y_true, y_pred, sigma = formulas_setting("C")
    for function in (expected_root_mean_squared_error, expected_r2_score):
        score = function(y_true, y_pred, sigma=sigma)
        assert pickle.loads(pickle.dumps(score)) == score
    assert metrics_rmse is expected_root_mean_squared_error
    assert metrics_r2 is expected_r2_score
    import sklearn_noisy
    import sklearn_noisy.metrics

    for module in (sklearn_noisy, sklearn_noisy.metrics):
        assert "expected_r2_score" in module.__all__
        assert "expected_root_mean_squared_error" in module.__all__


def test_streaming_paths_agree(monkeypatch):
    """Small blocks and no kept rows (every direct evaluation streams the data
    again) give the same numbers as the default, in-memory path."""
    from sklearn_noisy.metrics._engines.regression import quadrature as _rmse_quadrature
    from sklearn_noisy.metrics._engines.regression import r2_tilt as _r2_quadrature

    rng = np.random.default_rng(15)
    y_true = rng.normal(0.0, 3.0, 300)
    y_pred = y_true + rng.normal(0.0, 1.0, 300)
    sigma = np.exp(rng.normal(-0.5, 1.0, 300))
    sigma[:40] = 0.0
    weight = rng.uniform(0.5, 2.0, 300)
    functions = (expected_root_mean_squared_error, expected_r2_score)
    before = [
        f(y_true, y_pred, sigma=sigma, sample_weight=weight, estimand="forward")
        for f in functions
    ]

    original = _rmse_quadrature.BucketedPowerSums

    class NoKeep(original):
        def __init__(self, *args, **kwargs):
            kwargs["keep"] = 0
            super().__init__(*args, **kwargs)

    for module in (_rmse_quadrature, _r2_quadrature):
        monkeypatch.setattr(module, "BucketedPowerSums", NoKeep)
        monkeypatch.setattr(module, "CHUNK_ROWS", 64)
    after = [
        f(y_true, y_pred, sigma=sigma, sample_weight=weight, estimand="forward")
        for f in functions
    ]
    for a, b in zip(before, after, strict=True):
        assert b.expected == pytest.approx(a.expected, rel=1e-12)
        assert b.variance == pytest.approx(a.variance, rel=1e-10)


@pytest.mark.parametrize("sigma", [1e-150, 1e-153, 1e-155, 1e-160, 1e-165])
def test_r2_sigma_at_the_edge_of_underflow(sigma):
    # (σ/S)² subnormal used to turn the quadrature's ratios into NaN (found by
    # hypothesis at σ = 1.2e-153); such labels are exact for the numerics.
    rng = np.random.default_rng(0)
    y = rng.normal(size=20)
    p = y + 0.3 * rng.normal(size=20)
    score = expected_r2_score(y, p, sigma=sigma, estimand="forward")
    assert score.expected == score.nominal == r2_score(y, p)
    assert score.variance == 0.0
    mixed = np.full(20, 0.3)
    exact = mixed.copy()
    mixed[:5], exact[:5] = sigma, 0.0
    assert expected_r2_score(
        y, p, sigma=mixed, estimand="forward"
    ) == expected_r2_score(y, p, sigma=exact, estimand="forward")
