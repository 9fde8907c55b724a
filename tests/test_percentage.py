"""MAPE, MSPE and RMSPE under Gaussian label error.

The per-sample moments are checked against adaptive quadrature (scipy's
``quad`` on the same integrals, split at the floor and at ŷ, in log scale near
0), the metrics against scikit-learn at zero noise and against seeded Monte
Carlo within 5 standard errors where the floor plays no part, and the floor
warning against the samples whose moments it sets.
"""

from __future__ import annotations

import itertools
import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate
from scipy.special import ndtr
from sklearn.metrics import mean_absolute_percentage_error

from sklearn_noisy.metrics import (
    expected_mean_absolute_percentage_error,
    expected_mean_squared_percentage_error,
    expected_root_mean_squared_percentage_error,
    mean_squared_percentage_error,
    root_mean_squared_percentage_error,
)
from sklearn_noisy.metrics._engines.regression.relative_error import (
    EPSILON,
    floor_sensitivity,
    relative_error_moments,
)

_EXPECTED = {
    "mape": expected_mean_absolute_percentage_error,
    "mspe": expected_mean_squared_percentage_error,
    "rmspe": expected_root_mean_squared_percentage_error,
}


def _quad_moment(mu, sigma, y_pred, function):
    """``E[function(g)]`` by adaptive quadrature over ``μ ± 40σ``."""

    def integrand(y):
        g = abs(y - y_pred) / max(abs(y), EPSILON)
        return function(g) * math.exp(-0.5 * ((y - mu) / sigma) ** 2)

    low, high = mu - 40 * sigma, mu + 40 * sigma
    cuts = {low, high, *(v for v in (-EPSILON, EPSILON, y_pred, mu) if low < v < high)}
    cuts = sorted(cuts)
    total = 0.0
    for a, b in itertools.pairwise(cuts):
        options = {"epsabs": 0.0, "epsrel": 1e-13, "limit": 500}
        if a >= EPSILON:  # log scale: y = e^t
            value = integrate.quad(
                lambda t: integrand(math.exp(t)) * math.exp(t),
                math.log(a), math.log(b), **options,
            )[0]  # fmt: skip
        elif b <= -EPSILON:
            value = integrate.quad(
                lambda t: integrand(-math.exp(t)) * math.exp(t),
                math.log(-b), math.log(-a), **options,
            )[0]  # fmt: skip
        else:
            value = integrate.quad(integrand, a, b, **options)[0]
        total += value
    return total / (sigma * math.sqrt(2.0 * math.pi))


_CASES = [
    (5.0, 0.1, 4.7),  # far from 0 in σ units? no: 50σ, the kink inside
    (5.0, 0.1, 5.3),
    (-5.0, 0.1, -4.9),
    (-5.0, 0.1, 3.0),
    (100.0, 1.0, 100.0),  # ŷ = μ
    (41.0, 1.0, 60.0),
    (20.0, 1.0, 20.5),  # near path, floor negligible for g, not for g²
    (5.0, 1.0, 4.7),  # the floor sets the variance
    (0.0, 1.0, 0.5),  # the label at 0
    (0.3, 2.0, -1.0),
    (1e-20, 1e-17, 1e-19),  # inside the floor's scale
]


@pytest.mark.parametrize(("mu", "sigma", "y_pred"), _CASES)
def test_per_sample_moments_equal_quadrature(mu, sigma, y_pred):
    m = relative_error_moments(np.array([mu]), np.array([sigma]), np.array([y_pred]))
    c = float(m.center[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        # centred moments, as the library computes them, so that variances
        # small against the mean keep their digits in the reference too
        d1 = _quad_moment(mu, sigma, y_pred, lambda g: g - c)
        d1_sq = _quad_moment(mu, sigma, y_pred, lambda g: (g - c) ** 2)
        d2 = _quad_moment(mu, sigma, y_pred, lambda g: g * g - c * c)
        d2_sq = _quad_moment(mu, sigma, y_pred, lambda g: (g * g - c * c) ** 2)
    assert m.d1[0] + c == pytest.approx(d1 + c, rel=1e-11)
    assert m.d1_sq[0] - m.d1[0] ** 2 == pytest.approx(d1_sq - d1**2, rel=1e-9)
    assert m.d2[0] + c * c == pytest.approx(d2 + c * c, rel=1e-11)
    assert m.d2_sq[0] - m.d2[0] ** 2 == pytest.approx(d2_sq - d2**2, rel=1e-9)


@pytest.mark.parametrize(("mu", "sigma", "y_pred"), [(3.0, 1.0, 3.0), (8.0, 1.0, 8.5)])
def test_floor_estimate_matches_the_variance_it_sets(mu, sigma, y_pred):
    m = relative_error_moments(np.array([mu]), np.array([sigma]), np.array([y_pred]))
    for square, mean, sq in ((False, m.d1, m.d1_sq), (True, m.d2, m.d2_sq)):
        _, floor = floor_sensitivity(
            np.array([mu]), np.array([sigma]), np.array([y_pred]), square=square
        )
        assert floor[0] == pytest.approx(sq[0] - mean[0] ** 2, rel=1e-4)


@pytest.mark.parametrize(
    "convert", [list, np.asarray, pd.Series, lambda v: np.asarray(v, np.float32)]
)
def test_zero_noise_is_scikit_learn(convert):
    rng = np.random.default_rng(0)
    y = rng.uniform(-3, 3, 30)
    y[0] = 0.0  # the floor
    y_pred = y + rng.normal(size=30)
    weight = rng.uniform(0.5, 2.0, 30)
    result = expected_mean_absolute_percentage_error(
        convert(y), convert(y_pred), sigma=0.0, sample_weight=weight
    )
    sk = mean_absolute_percentage_error(
        convert(y), convert(y_pred), sample_weight=weight
    )
    assert result.expected == result.nominal == sk
    assert result.variance == 0.0
    mspe = expected_mean_squared_percentage_error(y, y_pred, sigma=0.0)
    g = np.abs(y - y_pred) / np.maximum(np.abs(y), EPSILON)
    assert expected_mean_absolute_percentage_error(y, y_pred, sigma=0.0).expected == (
        mean_absolute_percentage_error(y, y_pred)
    )
    assert mspe.expected == mspe.nominal == pytest.approx(np.mean(g**2), rel=1e-15)
    assert mspe.nominal == mean_squared_percentage_error(y, y_pred)
    root = expected_root_mean_squared_percentage_error(y, y_pred, sigma=0.0)
    assert (
        root.expected == root.nominal == root_mean_squared_percentage_error(y, y_pred)
    )


def test_multioutput_as_scikit_learn():
    rng = np.random.default_rng(1)
    y = rng.uniform(5, 10, (20, 2))
    y_pred = y + rng.normal(size=(20, 2))
    raw = expected_mean_absolute_percentage_error(
        y, y_pred, sigma=0.0, multioutput="raw_values"
    )
    sk = mean_absolute_percentage_error(y, y_pred, multioutput="raw_values")
    assert [r.expected for r in raw] == sk.tolist()
    weighted = expected_mean_absolute_percentage_error(
        y, y_pred, sigma=[0.1, 0.2] * np.ones((20, 2)), multioutput=[0.3, 0.7]
    )
    each = expected_mean_absolute_percentage_error(
        y, y_pred, sigma=[0.1, 0.2] * np.ones((20, 2)), multioutput="raw_values"
    )
    assert weighted.expected == pytest.approx(
        0.3 * each[0].expected + 0.7 * each[1].expected, rel=1e-14
    )
    assert weighted.variance == pytest.approx(
        0.09 * each[0].variance + 0.49 * each[1].variance, rel=1e-14
    )


@pytest.mark.parametrize("n_samples", [5, 40])
@pytest.mark.parametrize("metric", ["mape", "mspe", "rmspe"])
def test_monte_carlo_where_the_floor_plays_no_part(n_samples, metric):
    rng = np.random.default_rng(n_samples)
    y = rng.uniform(5, 20, n_samples) * rng.choice([-1, 1], n_samples)
    sigma = rng.uniform(0.02, 0.25, n_samples)  # |y|/σ ≥ 20
    y_pred = y + rng.normal(scale=0.5, size=n_samples)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no floor warning here
        result = _EXPECTED[metric](y, y_pred, sigma=sigma)
    draws = y + sigma * rng.normal(size=(200_000, n_samples))
    g = np.abs(draws - y_pred) / np.abs(draws)
    values = {"mape": g.mean(1), "mspe": (g * g).mean(1)}
    values["rmspe"] = np.sqrt(values["mspe"])
    sample = values[metric]
    se = sample.std() / np.sqrt(sample.size)
    centred = sample - sample.mean()
    se_var = np.sqrt((np.mean(centred**4) - sample.var() ** 2) / sample.size)
    if metric == "rmspe":  # delta method: its error, measured, well below 5 %
        assert abs(result.expected - sample.mean()) < 0.02 * sample.std() + 5 * se
        assert result.std == pytest.approx(sample.std(), rel=0.05)
        return
    assert abs(result.expected - sample.mean()) < 5 * se
    assert abs(result.variance - sample.var()) < 5 * se_var


def test_floor_warning_names_the_labels_near_zero():
    # zero_margin=0: the unconditional moments with scikit-learn's floor
    y = np.array([10.0, 12.0, 3.0, 9.0])
    y_pred = np.array([10.5, 11.0, 3.2, 9.4])
    sigma = np.array([0.1, 0.1, 1.0, 0.1])  # the third label is 3σ from 0
    with pytest.warns(UserWarning, match="For 1 label"):
        result = expected_mean_absolute_percentage_error(
            y, y_pred, sigma=sigma, zero_margin=0.0
        )
    assert result.variance > 1e10  # set by the floor, as the warning says
    sigma[2] = 0.1
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        expected_mean_absolute_percentage_error(y, y_pred, sigma=sigma, zero_margin=0.0)
    # MSPE's variance holds ε^-3: the floor matters further out (15σ here)
    y = np.array([5.7457729, 10.0])
    with pytest.warns(UserWarning, match="For 1 label"):
        expected_mean_squared_percentage_error(
            y, [5.1630317, 10.0], sigma=[0.38013599, 0.1], zero_margin=0.0
        )


@given(
    st.lists(st.floats(2.0, 50.0), min_size=2, max_size=6),
    st.floats(1e-3, 1e3),
    st.randoms(use_true_random=False),
)
def test_invariant_to_order_and_common_scale(values, scale, random):
    y = np.asarray(values)
    y_pred = y * 1.1 + 0.3
    sigma = y / 40.0  # 40σ from 0: no floor
    order = list(range(y.size))
    random.shuffle(order)
    base = expected_mean_absolute_percentage_error(y, y_pred, sigma=sigma)
    shuffled = expected_mean_absolute_percentage_error(
        y[order], y_pred[order], sigma=sigma[order]
    )
    scaled = expected_mean_absolute_percentage_error(
        y * scale, y_pred * scale, sigma=sigma * scale
    )
    for other in (shuffled, scaled):
        assert other.expected == pytest.approx(base.expected, rel=1e-12)
        assert other.variance == pytest.approx(base.variance, rel=1e-10)


def test_errors_estimands_and_pickling():
    with pytest.raises(ValueError, match="no unbiased estimator"):
        expected_mean_absolute_percentage_error(
            [1.0], [1.0], sigma=0.1, estimand="truth"
        )
    with pytest.raises(ValueError, match="sigma"):
        expected_mean_squared_percentage_error([1.0, 2.0], [1.0, 2.0], sigma=-1.0)
    with pytest.raises(ValueError, match="same number of samples"):
        expected_mean_absolute_percentage_error([1.0, 2.0], [1.0], sigma=0.1)
    y = np.array([10.0, 12.0])
    y.setflags(write=False)
    result = expected_mean_absolute_percentage_error(y, [9.0, 13.0], sigma=0.2)
    assert pickle.loads(pickle.dumps(result)) == result


# --------------------------------------------------------------------------- #
# Labels near 0 (issue 23): moments given |y| >= zero_margin * sigma
# --------------------------------------------------------------------------- #
def _quad_conditional(mu, sigma, y_pred, margin, function):
    """``E[function(g) | |Y| ≥ margin·σ]`` by adaptive quadrature (no floor)."""

    def integrand(y):
        g = abs(y - y_pred) / abs(y)
        return function(g) * math.exp(-0.5 * ((y - mu) / sigma) ** 2)

    total = 0.0
    for a, b in ((margin * sigma, mu + 30 * sigma), (mu - 30 * sigma, -margin * sigma)):
        if b > a:
            points = [y_pred] if a < y_pred < b else None
            total += integrate.quad(
                integrand, a, b, points=points, epsabs=0.0, epsrel=1e-13, limit=500
            )[0]
    z = abs(mu) / sigma
    kept = ndtr(z - margin) + ndtr(-z - margin)
    return total / (sigma * math.sqrt(2.0 * math.pi) * kept)


@pytest.mark.parametrize("margin", [1.0, 0.01, 3.0])
@pytest.mark.parametrize(
    ("mu", "sigma", "y_pred"),
    [(5.0, 1.0, 4.7), (0.0, 1.0, 0.5), (0.3, 2.0, -1.0), (2.0, 0.4, 2.3),
     (-3.0, 1.0, 2.0), (12.0, 1.0, 12.5), (20.0, 1.0, 20.5)],
)  # fmt: skip
def test_conditional_moments_equal_quadrature(mu, sigma, y_pred, margin):
    m = relative_error_moments(
        np.array([mu]), np.array([sigma]), np.array([y_pred]), margin
    )
    assert m.center[0] == 0.0  # raw moments near 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        reference = [
            _quad_conditional(mu, sigma, y_pred, margin, f)
            for f in (lambda g: g, lambda g: g * g, lambda g: g**4)
        ]
    assert m.d1[0] == pytest.approx(reference[0], rel=1e-12)
    assert m.d1_sq[0] == pytest.approx(reference[1], rel=1e-12)
    assert m.d2[0] == pytest.approx(reference[1], rel=1e-12)
    assert m.d2_sq[0] == pytest.approx(reference[2], rel=1e-12)


@pytest.mark.parametrize("margin", [5.0, 20.0])
@pytest.mark.parametrize(("mu", "y_pred"), [(0.3, 0.5), (-2.0, 3.0)])
def test_conditional_moments_of_labels_inside_the_margin(mu, y_pred, margin):
    # the conditional law sits just beyond the margin, decaying fast
    m = relative_error_moments(
        np.array([mu]), np.array([1.0]), np.array([y_pred]), margin
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        mean = _quad_conditional(mu, 1.0, y_pred, margin, lambda g: g)
        square = _quad_conditional(mu, 1.0, y_pred, margin, lambda g: g * g)
    assert m.d1[0] == pytest.approx(mean, rel=1e-12)
    assert m.d1_sq[0] == pytest.approx(square, rel=1e-12)
    with pytest.raises(ValueError, match="zero_margin=50 leaves out every draw"):
        relative_error_moments(np.array([mu]), np.array([1.0]), np.array([1.0]), 50.0)


def _near_zero_design(seed: int, sigma_max: float):
    """Issue 23's design: 100 labels in [2, 5], σ up to ``sigma_max``."""
    rng = np.random.default_rng(seed)
    y = rng.uniform(2.0, 5.0, 100)
    sigma = rng.uniform(0.0, sigma_max, 100)
    return rng, y, y + rng.normal(scale=0.3, size=100), sigma


@pytest.mark.parametrize("sigma_max", [0.4, 0.25])
def test_near_zero_sd_agrees_with_monte_carlo(sigma_max):
    # With the floor (zero_margin=0) the MAPE's variance here is about 1e6,
    # carried by draws of probability 1e-20; given |y| >= σ it is the spread
    # that redraws show. σ <= 0.25: every label 8σ or more from 0, the
    # left-out draws below 1e-9 (no warning).
    rng, y, y_pred, sigma = _near_zero_design(0, sigma_max)
    excluded = 1.0 - np.prod(1.0 - (ndtr(1.0 - y / sigma) - ndtr(-1.0 - y / sigma)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mape = expected_mean_absolute_percentage_error(y, y_pred, sigma=sigma)
        mspe = expected_mean_squared_percentage_error(y, y_pred, sigma=sigma)
        rmspe = expected_root_mean_squared_percentage_error(y, y_pred, sigma=sigma)
    messages = [str(w.message) for w in caught]
    if sigma_max == 0.4:
        assert 1e-9 < excluded < 1e-4
        assert len(messages) == 3
        assert all(f"total probability {excluded:.3g}" in m for m in messages)
        assert mape.method == mspe.method == "conditional"
        with pytest.warns(UserWarning, match="owes to the floor"):
            floored = expected_mean_absolute_percentage_error(
                y, y_pred, sigma=sigma, zero_margin=0.0
            )
        assert floored.variance > 1e3
    else:
        assert excluded < 1e-9
        assert messages == []
    draws = y + sigma * rng.normal(size=(20_000, y.size))
    g = np.abs(draws - y_pred) / np.abs(draws)
    assert mape.std == pytest.approx(g.mean(axis=1).std(), rel=0.1)
    assert mspe.std == pytest.approx((g * g).mean(axis=1).std(), rel=0.1)
    assert 0.0 <= rmspe.expected <= math.sqrt(mspe.expected)


def test_rmspe_stays_in_its_range_and_interval():
    # issue 23: expected -1.5e22 with the floor; the truth (Monte Carlo) 0.078,
    # the bound √E[MSPE] 0.102
    for margin in (1.0, 0.0):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            root = expected_root_mean_squared_percentage_error(
                [12.0], [12.5], sigma=1.0, zero_margin=margin
            )
            mspe = expected_mean_squared_percentage_error(
                [12.0], [12.5], sigma=1.0, zero_margin=margin
            )
        assert 0.0 <= root.expected <= math.sqrt(mspe.expected) <= 0.1025
        low, high = root.confidence_interval(0.95)
        assert low <= root.expected <= high
        assert root.variance <= mspe.expected
    assert root.method == "delta_bounded"  # the floor's variance: held at the bound


@given(st.floats(1e-6, 1e6), st.floats(0.0, 1e8))
def test_bounded_root_inside_the_bounds(m, cv2):
    from sklearn_noisy.metrics._engines.regression.sums import bounded_root

    v = cv2 * m * m
    expected, variance, bounded = bounded_root(np.array([m]), np.array([v]))
    lower = math.sqrt(m) / math.sqrt(1.0 + cv2)
    assert lower * (1 - 1e-12) <= expected[0] <= math.sqrt(m) * (1 + 1e-12)
    assert 0.0 <= variance[0] <= m - lower * lower + 1e-12 * m
    if cv2 <= 3.0:  # the delta method, untouched
        assert not bounded[0]
        assert expected[0] == math.sqrt(m) - v / (8.0 * m**1.5)
        assert variance[0] == v / (4.0 * m)


@pytest.mark.parametrize("metric", ["mape", "mspe", "rmspe"])
def test_far_from_zero_the_margin_changes_nothing(metric):
    rng = np.random.default_rng(5)
    y = rng.uniform(5, 20, 60) * rng.choice([-1, 1], 60)
    sigma = np.abs(y) / rng.uniform(20.0, 200.0, 60)  # 20σ or more from 0
    y_pred = y + rng.normal(scale=0.5, size=60)
    base = _EXPECTED[metric](y, y_pred, sigma=sigma, zero_margin=0.0)
    for margin in (1.0, 3.0):
        other = _EXPECTED[metric](y, y_pred, sigma=sigma, zero_margin=margin)
        assert other.expected == pytest.approx(base.expected, rel=1e-12)
        assert other.variance == pytest.approx(base.variance, rel=1e-12)
        assert other.method == base.method


@pytest.mark.parametrize("metric", ["mape", "mspe", "rmspe"])
def test_zero_margin_in_the_test_set_sampling(metric):
    y = np.array([0.5, 1.0, 2.0, 3.0, 4.0, 6.0])
    y_pred = y + np.array([0.2, -0.1, 0.3, 0.1, -0.4, 0.2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        results = [
            _EXPECTED[metric](
                y, y_pred, sigma=0.3, zero_margin=margin, test_set_sampling=True
            )
            for margin in (1.0, 2.0)
        ]
    assert all(np.isfinite(r.sampling_variance) for r in results)
    assert results[0].sampling_variance != results[1].sampling_variance


def test_zero_margin_validation():
    with pytest.raises(TypeError, match="zero_margin"):
        expected_mean_absolute_percentage_error(
            [1.0], [1.0], sigma=0.1, zero_margin="1"
        )
    for bad in (-1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="zero_margin"):
            expected_mean_squared_percentage_error(
                [1.0], [1.0], sigma=0.1, zero_margin=bad
            )


@pytest.mark.parametrize("metric", ["mape", "mspe", "rmspe"])
def test_extreme_scales_without_raw_runtime_warnings(metric):
    # issue 23: numpy's RuntimeWarnings leaked at sigma=1e-300 and near 1e300
    y = np.array([1.0, -1.5, 1.7e8])
    y_pred = np.array([1.1, -1.0, 1.0e8])
    sigma = np.array([0.1, 0.1, 1e7])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        base = _EXPECTED[metric](y, y_pred, sigma=sigma)
        for scale in (1e300, 1e-300):
            scaled = _EXPECTED[metric](y * scale, y_pred * scale, sigma=sigma * scale)
            assert scaled.expected == pytest.approx(base.expected, rel=1e-12)
            assert scaled.variance == pytest.approx(base.variance, rel=1e-10)
        tiny = _EXPECTED[metric](y, y_pred, sigma=1e-300)
        assert tiny.expected == pytest.approx(tiny.nominal, rel=1e-14)
        huge = _EXPECTED[metric](y * 1e300, y_pred * 1e300, sigma=1e299)
        assert np.isfinite([huge.expected, huge.variance]).all()
    # With the floor (zero_margin=0) the relative error inside it, |ŷ|/ε, is
    # beyond the float64 range at this scale: the package's warning, no other.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _EXPECTED[metric](y * 1e300, y_pred * 1e300, sigma=1e299, zero_margin=0.0)
    runtime = [w for w in caught if issubclass(w.category, RuntimeWarning)]
    assert all("overflowed" in str(w.message) for w in runtime)
    # a label at 0 with sigma = 1e-300: the variance exceeds the float64 range
    with pytest.warns(RuntimeWarning, match="overflowed") as caught:
        warnings.simplefilter("ignore", UserWarning)
        _EXPECTED[metric]([0.0, 1.0], [2.9, 1.0], sigma=1e-300)
    assert all("overflowed" in str(w.message) for w in caught)
