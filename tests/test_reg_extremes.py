"""The regression metrics at the extremes of the float64 range (issue 15).

Each test failed before its fix: a sigma far above the residuals zeroed the
nominal RMSE and overflowed its delta method, the MAE variance was NaN with raw
numpy warnings, R²'s variance lost its digits (and depended on the sample
order) at tiny sigma, Python ints beyond the float range raised the wrong
errors, and ``summarize_repeats`` lost tiny spreads and ignored a bad unused
``instrument_sigma``.
"""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest
from sklearn.metrics import (
    explained_variance_score,
    mean_absolute_error,
    mean_squared_error,
    r2_score,
    root_mean_squared_error,
)

from sklearn_noisy.metrics import (
    expected_explained_variance_score,
    expected_mean_absolute_error,
    expected_mean_squared_error,
    expected_r2_score,
    expected_root_mean_squared_error,
)
from sklearn_noisy.preprocessing import summarize_repeats

Y_TRUE = [3.0, -0.5, 2.0, 7.0]
Y_PRED = [2.5, 0.0, 2.0, 8.0]

METRICS = [
    (expected_mean_squared_error, mean_squared_error),
    (expected_mean_absolute_error, mean_absolute_error),
    (expected_root_mean_squared_error, root_mean_squared_error),
    (expected_r2_score, r2_score),
]


@pytest.mark.parametrize("method", ["exact", "delta"])
@pytest.mark.parametrize("big", [1e100, 1e155, 1e160, 1e200, 1e300])
def test_rmse_nominal_does_not_depend_on_sigma(big, method):
    # Before: nominal 0 at sigma 1e200 (scikit-learn: 0.612), and OverflowError
    # from method="delta" at 1e160.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        score = expected_root_mean_squared_error(
            Y_TRUE,
            Y_PRED,
            sigma=[0.5, 0.5, 0.5, big],
            method=method,
            estimand="forward",
        )
    # no raw numpy warning; the package's own where the variance overflows
    messages = [str(w.message) for w in caught]
    assert all("overflowed" in message for message in messages)
    assert bool(messages) == (score.variance == math.inf)
    assert score.nominal == root_mean_squared_error(Y_TRUE, Y_PRED)
    assert round(score.nominal, 3) == 0.612
    # RMSE is about big |z| / 2: E = big/√(2π) (the delta method, with
    # CV² = 2 for one χ²₁ term: big/2 · (1 - 2/8)); variance big² (1/4 - 1/(2π)).
    if method == "exact":
        assert score.expected == pytest.approx(big / math.sqrt(2 * math.pi), rel=1e-12)
    else:
        assert score.expected == pytest.approx(0.375 * big, rel=1e-12)
    assert not np.isnan(score.variance)
    if big >= 1e160:
        assert score.variance == np.inf


def test_rmse_nominal_of_tiny_and_huge_residuals():
    # Residuals whose squares under- or overflow: the nominal stays exact.
    for scale in (1e-170, 1e170):
        y_true = np.array(Y_TRUE) * scale
        y_pred = np.array(Y_PRED) * scale
        score = expected_root_mean_squared_error(
            y_true, y_pred, sigma=0.0, estimand="forward"
        )
        expected = root_mean_squared_error(Y_TRUE, Y_PRED) * scale
        assert score.nominal == pytest.approx(expected, rel=1e-15)


def test_mae_variance_overflows_to_inf_without_numpy_warnings():
    # Before: variance NaN, and numpy's "overflow encountered in multiply".
    for y_true, y_pred, sigma in (
        (Y_TRUE, Y_PRED, [0.5, 0.5, 0.5, 1e200]),
        ([1e300, -1e300], [0.0, 0.0], 1e300),
    ):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            score = expected_mean_absolute_error(
                y_true, y_pred, sigma=sigma, estimand="forward"
            )
        assert score.variance == np.inf
        assert np.isfinite(score.nominal)
        assert [str(w.message).split(" ")[0] for w in caught] == ["mean_absolute_error"]
        assert all(w.filename == __file__ for w in caught)


def test_mae_variance_just_below_overflow_is_finite():
    score = expected_mean_absolute_error([0.0, 0.0], [0.0, 0.0], sigma=1e150)
    assert score.variance == pytest.approx((1 - 2 / math.pi) * 1e300 / 2, rel=1e-14)


@pytest.mark.parametrize("scale", [1e-9, 1e-12, 1e-15, 1e-18, 1e-30, 1e-100])
def test_r2_variance_at_tiny_sigma_is_accurate_and_order_free(scale):
    # Before: relative errors of 1e-8 at 1e-12, a factor 5000 (or 0) at 1e-18,
    # changing with the sample order. The second-order delta method is exact
    # to a relative O(CV²) there, far below double precision.
    rng = np.random.default_rng(0)
    y_true = rng.normal(size=12)
    y_pred = y_true + 0.5 * rng.normal(size=12)
    sigma = scale * rng.uniform(0.5, 2.0, 12)
    reference = expected_r2_score(
        y_true, y_pred, sigma=sigma, method="delta", estimand="forward"
    )
    variances = []
    for _ in range(5):
        order = rng.permutation(12)
        score = expected_r2_score(
            y_true[order], y_pred[order], sigma=sigma[order], estimand="forward"
        )
        assert score.method == "exact"
        variances.append(score.variance)
    assert np.allclose(variances, reference.variance, rtol=1e-14, atol=0)


def test_r2_variance_between_quadrature_and_delta_is_continuous():
    # Near the switch (CV² = 1e-15) the quadrature and the delta method agree
    # to the double precision that both have there.
    rng = np.random.default_rng(1)
    y_true = rng.normal(size=30)
    y_pred = y_true + 0.5 * rng.normal(size=30)
    base = rng.uniform(0.5, 2.0, 30)
    values = [
        expected_r2_score(y_true, y_pred, sigma=s * base).variance / s**2
        for s in (3e-8, 1e-8, 3e-9)
    ]
    assert np.ptp(values) / np.mean(values) < 1e-6  # a smooth function of s²


@pytest.mark.parametrize("ours, theirs", METRICS)
@pytest.mark.parametrize("argument", ["y_true", "y_pred", "sample_weight"])
def test_python_ints_beyond_float_range(ours, theirs, argument):
    # scikit-learn raises OverflowError; ours is that and a ValueError naming
    # the argument (before: TypeError "must hold real numbers").
    arguments = {"y_true": [1, 2, 3], "y_pred": [1, 2, 2], "sample_weight": None}
    arguments[argument] = [10**400, 1, 2]
    y_true, y_pred = arguments.pop("y_true"), arguments.pop("y_pred")
    with pytest.raises(OverflowError):
        theirs(y_true, y_pred, **arguments)
    with pytest.raises(OverflowError, match=argument) as info:
        ours(y_true, y_pred, sigma=0.0, **arguments)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("ours", [m[0] for m in METRICS])
@pytest.mark.parametrize("sigma", [10**400, [10**400, 1, 1]])
def test_python_int_sigma_beyond_float_range(ours, sigma):
    # Before: a bare OverflowError (scalar) or TypeError (list).
    with pytest.raises(ValueError, match="sigma") as info:
        ours([1.0, 2.0, 3.0], [1.0, 2.0, 2.0], sigma=sigma)
    assert isinstance(info.value, OverflowError)


@pytest.mark.parametrize("ours, theirs", METRICS)
def test_python_ints_beyond_int64_are_accepted(ours, theirs):
    # numpy makes an object array of them; scikit-learn converts it (before:
    # TypeError "must hold real numbers").
    y_true, y_pred = [10**20, 1, 2, 5], [10**20, 1, 3, 4]
    score = ours(y_true, y_pred, sigma=0.0)
    assert score.nominal == pytest.approx(theirs(y_true, y_pred), rel=1e-12)


@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1.0, 1e150, 1e200])
def test_summarize_repeats_keeps_tiny_and_huge_spreads(scale):
    # Before: sigma 0 for repeats at the 1e-300 scale (the squares underflow).
    repeats = np.array([[1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 2.5, 1.5, 2.2, 1.8]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        summary = summarize_repeats(repeats * scale)
    reference = repeats.std(axis=1, ddof=1) / math.sqrt(5)
    np.testing.assert_allclose(summary.sigma, reference * scale, rtol=1e-14)


def test_summarize_repeats_constant_repeats_still_have_zero_spread():
    summary = summarize_repeats([[1e-300] * 5, [3.0] * 5])
    np.testing.assert_array_equal(summary.sigma, [0.0, 0.0])


@pytest.mark.parametrize(
    "instrument_sigma, match",
    [
        (-1.0, "instrument_sigma must be finite and non-negative"),
        (np.nan, "instrument_sigma must be finite and non-negative"),
        ([0.1, 0.2, 0.3], r"instrument_sigma must be a scalar or have one value"),
    ],
)
def test_summarize_repeats_validates_an_unused_instrument_sigma(
    instrument_sigma, match
):
    # Every sample has enough repeats, so instrument_sigma is not used; before,
    # a bad value passed silently.
    Y = [[1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 3.0, 4.0, 5.0, 6.0]]
    with pytest.raises(ValueError, match=match):
        summarize_repeats(Y, instrument_sigma=instrument_sigma)


@pytest.mark.parametrize(
    "y_scale, sigma, variance",
    [
        (1e160, 0.0, 0.0),  # exact labels: 0, not 0·inf = NaN
        (1e160, [0.0, 0.0, 0.0, 0.0], 0.0),
        (1e150, 1e-150, None),  # 4 d² σ² in range although d² and σ² are not
        (1e200, 1.0, np.inf),  # 4 d² σ² beyond the range
    ],
)
def test_mse_moments_beyond_the_squares_range(y_scale, sigma, variance):
    # Before: variance NaN wherever a squared residual overflowed.
    y_true = np.array(Y_TRUE) * y_scale
    y_pred = np.array(Y_PRED) * y_scale
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        score = expected_mean_squared_error(
            y_true, y_pred, sigma=sigma, estimand="forward"
        )
    if variance is None:  # Σ 4 d_i² σ² / M² with d in units of y_scale
        d = np.array(Y_TRUE) - np.array(Y_PRED)
        variance = float(np.sum(4.0 * d * d) / 16.0)
        assert score.variance == pytest.approx(variance, rel=1e-14)
    else:
        assert score.variance == variance


@pytest.mark.parametrize("ratio", [1e-160, 1e-200, 1e-300])
def test_rmse_noise_far_below_the_residuals(ratio):
    # Before: "math domain error" (the quadrature's tolerance underflowed).
    score = expected_root_mean_squared_error(Y_TRUE, Y_PRED, sigma=ratio)
    assert score.expected == pytest.approx(root_mean_squared_error(Y_TRUE, Y_PRED))
    assert score.variance >= 0.0 and np.isfinite(score.variance)


@pytest.mark.parametrize("offset", [1e6, 1e9, 1e12, 1e13, 1e15])
def test_r2_ignores_a_common_offset(offset):
    # R² and explained variance ignore a common offset of y and ŷ; their sums
    # are taken about y's mean, so the offset costs only what float64 loses
    # in y + offset itself, and a warning says when that exceeds 1e-6
    rng = np.random.default_rng(0)
    y = rng.normal(5.0, 2.0, 200)
    p = y + rng.normal(0.0, 1.0, 200)
    sigma = np.full(200, 0.5)
    for metric, sk in (
        (expected_r2_score, r2_score),
        (expected_explained_variance_score, explained_variance_score),
    ):
        base = metric(y, p, sigma=sigma, estimand="truth")
        coarse = np.spacing(offset) > 1e-6 * 2.0
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            shifted = metric(y + offset, p + offset, sigma=sigma, estimand="truth")
            forward = metric(y + offset, p + offset, sigma=0.0)
        said = [w for w in caught if "Subtract the offset" in str(w.message)]
        assert bool(said) == coarse
        # scikit-learn loses the same digits (in another order)
        tolerance = 10 * np.spacing(offset) / 2.0 if coarse else 1e-9
        assert forward.nominal == pytest.approx(
            sk(y + offset, p + offset), rel=tolerance
        )
        if not coarse:
            assert shifted.expected == pytest.approx(base.expected, rel=1e-6)
            assert shifted.variance == pytest.approx(base.variance, rel=1e-6)
        else:
            assert math.isfinite(shifted.expected)


@pytest.mark.parametrize("sigma", [1.5e154, 1e200])
def test_sigma_beyond_float64_squares_warns_instead_of_overflow_error(sigma):
    # a scalar sigma whose square overflows: the same inf and the package's
    # warning as the array form, never a bare OverflowError; the RMSE's moments
    # in range (σ = 1.5e154: RMSE ≈ σ √(χ²₂/2), variance σ² (1 − π/4)) exact
    for metric in (expected_mean_squared_error, expected_root_mean_squared_error):
        results = []
        finite = metric is expected_root_mean_squared_error and sigma < 1e155
        for given in (sigma, [sigma, sigma]):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                results.append(
                    metric([1.0, 2.0], [1.5, 2.5], sigma=given, estimand="forward")
                )
            assert [str(w.message).split(" ")[1] for w in caught] == (
                [] if finite else ["overflowed:"]
            )
        if finite:
            variance = sigma * (1.0 - math.pi / 4.0) * sigma
            assert results[0].variance == pytest.approx(variance, rel=1e-6)
        else:
            assert results[0].variance == results[1].variance == math.inf
        assert results[0].variance == results[1].variance
        assert results[0].expected == results[1].expected


@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1e200, 1e300])
def test_r2_ignores_a_common_scale(scale):
    # before: nominal 1.0 and NaN with raw numpy warnings at 1e-300 (true
    # 0.9857), OverflowError at 1e300; R² is dimensionless
    y = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
    p = np.array([1.2, 1.8, 3.3, 3.9, 5.4, 6.3, 6.6, 8.1])
    for estimand in ("forward", "truth"):
        base = expected_r2_score(y, p, sigma=0.3, estimand=estimand)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            scaled = expected_r2_score(
                y * scale, p * scale, sigma=0.3 * scale, estimand=estimand
            )
        for field in ("expected", "variance", "nominal"):
            assert getattr(scaled, field) == pytest.approx(
                getattr(base, field), rel=1e-12
            )
    assert base.nominal == pytest.approx(r2_score(y, p), rel=1e-15)


#: The extreme-scale sweep of issue 23: sigma far above labels of scale 1, and
#: y, ŷ, σ all scaled by c (y0, p0: 20 labels of scale 1)
_RNG = np.random.default_rng(0)
_Y0 = _RNG.normal(size=20)
_P0 = _Y0 + _RNG.normal(size=20)
_SWEEP = [("sigma", s, False) for s in (1e100, 1.5e154, 1e200)]
_SWEEP += [("sigma", 1e300, True)]
_SWEEP += [("scale", c, False) for c in (1e150, 1e200, 1e-150, 1e-300)]
_POWERS = {
    expected_mean_squared_error: 2,
    expected_root_mean_squared_error: 1,
    expected_mean_absolute_error: 1,
    expected_r2_score: 0,
    expected_explained_variance_score: 0,
}


#: Every metric, estimand and point, but the explained variance's forward
#: result (a second each) at two points only
_CASES = [
    (metric, estimand, *point)
    for metric in _POWERS
    for estimand in ("truth", "remeasurement", "forward")
    for point in _SWEEP
    if metric is not expected_explained_variance_score
    or estimand != "forward"
    or point[1] in (1.5e154, 1e200)
]


@pytest.mark.parametrize("metric, estimand, kind, size, array", _CASES)
def test_extreme_scales_give_numbers_or_the_package_warning(
    metric, estimand, kind, size, array
):
    # Before: bare OverflowErrors (MAE remeasurement, R² forward), raw numpy
    # warnings, NaN std/intervals/sampling std without a warning, inf without
    # one (185 such cases). Now: finite numbers, inf with the package's
    # "overflowed" warning, or NaN with its "not estimable" one; at a common
    # scale c the unscaled result times c^p (p: the metric's unit power)
    y, p, sigma = _Y0, _P0, np.full(20, size) if array else size
    if kind == "scale":
        y, p, sigma = _Y0 * size, _P0 * size, 0.5 * size
    # R²'s sampling pivot takes a second: its sampling at two points only
    sampling = _POWERS[metric] > 0 or (
        estimand == "forward" and size in (1.5e154, 1e200) and not array
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            score = metric(
                y, p, sigma=sigma, estimand=estimand, test_set_sampling=sampling
            )
        except ValueError as error:  # the package's: R² truth at sigma > spread
            assert "estimator against the true" in str(error)
            return
        # (R²'s exact forward interval takes a second: its normal one)
        exact = _POWERS[metric] > 0 or estimand != "forward"
        interval = score.confidence_interval(0.95, method="auto" if exact else "normal")
    values = [score.expected, score.std, *interval]
    values += [score.sampling_std] if sampling else []
    messages = [str(w.message) for w in caught]
    assert not [m for m in messages if "encountered" in m]
    if any(math.isnan(v) for v in values):
        assert any("not estimable" in m or "float64 cannot" in m for m in messages)
    overflowed = any("overflowed" in m for m in messages)
    assert overflowed == any(math.isinf(v) for v in values)
    if kind == "scale":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            base = metric(_Y0, _P0, sigma=0.5, estimand=estimand)
        power = _POWERS[metric]
        for got, want, k in (
            (score.expected, base.expected, power),
            (score.nominal, base.nominal, power),
            (score.variance, base.variance, 2 * power),
        ):
            exponent = math.log10(abs(want)) + k * math.log10(size) if want else 0
            if want and exponent > 308.3:
                assert got == math.copysign(math.inf, want)
            elif want == 0 or exponent > -290:
                assert got == pytest.approx(
                    want * 10.0**exponent / abs(want) if want else 0.0, rel=1e-9
                )


@pytest.mark.parametrize("scale", [1e200, 1e-150])
@pytest.mark.parametrize(
    "metric",
    [
        expected_mean_absolute_error,
        expected_mean_squared_error,
        expected_root_mean_squared_error,
    ],
)
def test_exact_interval_at_a_common_scale(metric, scale):
    # the exact forward interval at scale c is the unscaled one times c^p
    # (the MSE's ends at 1e200: beyond the range, inf), and survives a pickle
    base = metric(_Y0, _P0, sigma=0.5, estimand="forward").confidence_interval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the MSE's "overflowed"
        score = metric(_Y0 * scale, _P0 * scale, sigma=0.5 * scale, estimand="forward")
    interval = score.confidence_interval()
    assert interval.method == base.method == "exact"
    power = _POWERS[metric]
    for got, want in zip(interval, base, strict=True):
        exponent = math.log10(want) + power * math.log10(scale)
        expected = (
            math.inf
            if exponent > 308.3
            else want * 10.0 ** (exponent - math.log10(want))
        )
        assert got == pytest.approx(expected, rel=1e-9)
    assert pickle.loads(pickle.dumps(score)).confidence_interval() == interval
