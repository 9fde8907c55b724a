"""Tests of the expected MSE and MAE (FORMULAS.md §1, §2, Part III.1, Part IV)."""

import math
import warnings

import numpy as np
import pytest
from _formulas_settings import formulas_setting
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import stats
from scipy.special import erf, erfc
from sklearn.metrics import mean_absolute_error, mean_squared_error

from sklearn_noisy import (
    NoisyScore,
    expected_mean_absolute_error,
    expected_mean_squared_error,
)
from sklearn_noisy.utils._arrays import CHUNK_SIZE

METRICS = [
    (expected_mean_squared_error, mean_squared_error),
    (expected_mean_absolute_error, mean_absolute_error),
]


# --- sigma = 0 is scikit-learn's metric ----------------------------------------


@pytest.mark.parametrize("ours, theirs", METRICS)
@pytest.mark.parametrize("n_outputs", [1, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_zero_sigma_equals_scikit_learn(ours, theirs, n_outputs, weighted):
    rng = np.random.default_rng(n_outputs)
    shape = (57,) if n_outputs == 1 else (57, n_outputs)
    y_true = rng.normal(0, 3, shape)
    y_pred = y_true + rng.normal(0, 1, shape)
    weight = rng.uniform(0, 2, 57) if weighted else None
    outputs = ["uniform_average", "raw_values"]
    if n_outputs > 1:
        outputs.append(np.array([0.2, 0.5, 1.3]))
    for multioutput in outputs:
        reference = np.atleast_1d(
            theirs(y_true, y_pred, sample_weight=weight, multioutput=multioutput)
        )
        for sigma in (0.0, np.zeros(57), np.zeros(shape)):
            result = ours(
                y_true,
                y_pred,
                sigma=sigma,
                sample_weight=weight,
                multioutput=multioutput,
                estimand="forward",
            )
            scores = result if isinstance(result, list) else [result]
            assert len(scores) == reference.size
            for score, value in zip(scores, reference, strict=True):
                assert isinstance(score, NoisyScore)
                assert score.method == "exact" and score.n_samples == 57
                assert score.expected == pytest.approx(value, rel=1e-12, abs=1e-15)
                assert score.nominal == pytest.approx(value, rel=1e-12, abs=1e-15)
                assert score.variance == 0.0


def test_metric_names():
    assert expected_mean_squared_error(
        [1.0], [0.0], sigma=1, estimand="forward"
    ).metric == ("mean_squared_error")
    assert expected_mean_absolute_error(
        [1.0], [0.0], sigma=1, estimand="forward"
    ).metric == ("mean_absolute_error")


def test_closed_forms_small_example():
    d = np.array([0.5, -0.5, 0.0, -1.0])
    sigma = np.array([0.5, 0.1, 2.0, 0.0])
    mse = expected_mean_squared_error(d, np.zeros(4), sigma=sigma, estimand="forward")
    assert mse.expected == pytest.approx(np.mean(d**2 + sigma**2), rel=1e-15)
    assert mse.variance == pytest.approx(
        np.sum(2 * sigma**4 + 4 * d**2 * sigma**2) / 16, rel=1e-15
    )


# --- Monte Carlo agreement, FORMULAS.md Part V settings A-G --------------------


def _monte_carlo(y_true, y_pred, sigma, n_draws, seed, weight=None):
    """Per-draw MSE and MAE of labels drawn from N(y_true, sigma²), in blocks."""
    rng = np.random.default_rng(seed)
    d = y_true - y_pred
    weight = np.ones_like(d) if weight is None else weight
    mse, mae = [], []
    block = max(1, 2_000_000 // d.size)
    for start in range(0, n_draws, block):
        e = d + sigma * rng.standard_normal((min(block, n_draws - start), d.size))
        mse.append(np.average(e * e, axis=1, weights=weight))
        mae.append(np.average(np.abs(e), axis=1, weights=weight))
    return np.concatenate(mse), np.concatenate(mae)


def _z_scores(samples, expected, variance):
    n = samples.size
    mean = samples.mean()
    var = samples.var(ddof=1)
    m4 = np.mean((samples - mean) ** 4)
    z_mean = (mean - expected) / math.sqrt(var / n)
    z_var = (var - variance) / math.sqrt((m4 - var**2) / n)
    return z_mean, z_var


@pytest.mark.parametrize("name", list("ABCDEFG"))
def test_monte_carlo_agreement(name):
    y_true, y_pred, sigma = formulas_setting(name)
    n_draws = 20_000 if y_true.size <= 1000 else 2_000
    mse_draws, mae_draws = _monte_carlo(y_true, y_pred, sigma, n_draws, seed=1)
    for metric, draws in (
        (expected_mean_squared_error, mse_draws),
        (expected_mean_absolute_error, mae_draws),
    ):
        score = metric(y_true, y_pred, sigma=sigma, estimand="forward")
        z_mean, z_var = _z_scores(draws, score.expected, score.variance)
        assert abs(z_mean) < 5, (metric.__name__, z_mean)
        assert abs(z_var) < 5, (metric.__name__, z_var)


def test_monte_carlo_agreement_weighted():
    y_true, y_pred, sigma = formulas_setting("D")
    weight = np.random.default_rng(5).integers(0, 5, y_true.size).astype(float)
    mse_draws, mae_draws = _monte_carlo(
        y_true, y_pred, sigma, 20_000, seed=2, weight=weight
    )
    for metric, draws in (
        (expected_mean_squared_error, mse_draws),
        (expected_mean_absolute_error, mae_draws),
    ):
        score = metric(
            y_true, y_pred, sigma=sigma, sample_weight=weight, estimand="forward"
        )
        z_mean, z_var = _z_scores(draws, score.expected, score.variance)
        assert abs(z_mean) < 5 and abs(z_var) < 5, (z_mean, z_var)


def test_multioutput_combines_outputs():
    rng = np.random.default_rng(3)
    y_true = rng.normal(size=(40, 2))
    y_pred = rng.normal(size=(40, 2))
    sigma = rng.uniform(0, 1, (40, 2))
    for metric, _ in METRICS:
        raw = metric(
            y_true, y_pred, sigma=sigma, multioutput="raw_values", estimand="forward"
        )
        single = [
            metric(y_true[:, k], y_pred[:, k], sigma=sigma[:, k], estimand="forward")
            for k in (0, 1)
        ]
        for a, b in zip(raw, single, strict=True):
            assert a.expected == pytest.approx(b.expected, rel=1e-14)
            assert a.variance == pytest.approx(b.variance, rel=1e-14)
        mean = metric(y_true, y_pred, sigma=sigma, estimand="forward")
        assert mean.expected == pytest.approx((raw[0].expected + raw[1].expected) / 2)
        assert mean.variance == pytest.approx((raw[0].variance + raw[1].variance) / 4)
        weighted = metric(
            y_true, y_pred, sigma=sigma, multioutput=[1.0, 3.0], estimand="forward"
        )
        assert weighted.expected == pytest.approx(
            (raw[0].expected + 3 * raw[1].expected) / 4
        )
        assert weighted.variance == pytest.approx(
            (raw[0].variance + 9 * raw[1].variance) / 16
        )
        shared = metric(
            y_true,
            y_pred,
            sigma=sigma[:, 0],
            multioutput="raw_values",
            estimand="forward",
        )
        alone = metric(
            y_true[:, 1], y_pred[:, 1], sigma=sigma[:, 0], estimand="forward"
        )
        assert shared[1].variance == pytest.approx(alone.variance, rel=1e-14)


def test_several_chunks_and_threads_match_direct_formula(monkeypatch):
    rng = np.random.default_rng(4)
    m = 2 * CHUNK_SIZE + 3
    d = rng.normal(0, 2, m)
    sigma = rng.uniform(0, 2, m)
    sigma[::7] = 0.0
    weight = rng.uniform(0, 1, m)
    mse = expected_mean_squared_error(
        d, np.zeros(m), sigma=sigma, sample_weight=weight, estimand="forward"
    )
    w = weight / weight.sum()
    assert mse.expected == pytest.approx(np.sum(w * (d**2 + sigma**2)), rel=1e-12)
    assert mse.variance == pytest.approx(
        np.sum(w**2 * (2 * sigma**4 + 4 * d**2 * sigma**2)), rel=1e-12
    )
    mean = np.array(
        [
            stats.foldnorm(abs(x) / s, scale=s).mean() if s else abs(x)
            for x, s in zip(d[:300], sigma[:300], strict=True)
        ]
    )
    head = expected_mean_absolute_error(
        d[:300], np.zeros(300), sigma=sigma[:300], estimand="forward"
    )
    assert head.expected == pytest.approx(mean.mean(), rel=1e-12)
    results = []
    for threads in ("1", "2", "3"):
        monkeypatch.setenv("OMP_NUM_THREADS", threads)
        results.append(
            expected_mean_absolute_error(
                d, np.zeros(m), sigma=sigma, sample_weight=weight, estimand="forward"
            )
        )
    assert results[0] == results[1] == results[2]  # bit for bit


# --- errata: FORMULAS.md Part IV, table V.5 -----------------------------------

# (mu, sigma, E correct, Var correct) from FORMULAS.md V.5.
FOLDED = [
    (0.0, 1.0, 0.79788, 0.36338),
    (0.3, 2.0, 1.61369, 1.48601),
    (1.0, 1.0, 1.16663, 0.63897),
    (2.0, 0.5, 2.00001, 0.24997),
    (-1.5, 1.0, 1.55861, 0.82072),
    (5.0, 1.0, 5.00000, 1.00000),
]


def _paper_variants(mu, sigma):
    """The paper's printed (wrong) folded-normal formulas, Part IV E1-E3, E5."""
    a = sigma * math.sqrt(2 / math.pi) * math.exp(-(mu**2) / (2 * sigma**2))
    z = mu / (sigma * math.sqrt(2))
    correct_mean = a + mu * erf(z)
    e1_mean = mu * math.sqrt(2 / math.pi) * math.exp(-(mu**2) / (2 * sigma**2)) + (
        mu * erf(z)
    )
    e2_var = mu**2 + sigma**2 - (a - mu * erf(z)) ** 2
    e3_var = mu**2 + sigma**2 - (a + mu * erfc(z)) ** 2
    e5_mean = a + mu * (1 - erfc(abs(mu) / (math.sqrt(2) * mu))) if mu else a
    return correct_mean, e1_mean, e2_var, e3_var, e5_mean


@pytest.mark.parametrize("mu, sigma, mean, variance", FOLDED)
def test_folded_normal_pins(mu, sigma, mean, variance):
    score = expected_mean_absolute_error([mu], [0.0], sigma=sigma, estimand="forward")
    assert score.expected == pytest.approx(mean, abs=6e-6)
    assert score.variance == pytest.approx(variance, abs=6e-6)
    reference = stats.foldnorm(abs(mu) / sigma, scale=sigma)
    assert score.expected == pytest.approx(reference.mean(), rel=1e-13)
    assert score.variance == pytest.approx(reference.var(), rel=1e-10)
    # The sign of d does not matter, nor which of y_true / y_pred holds it.
    flipped = expected_mean_absolute_error([0.0], [mu], sigma=sigma, estimand="forward")
    assert (flipped.expected, flipped.variance) == (score.expected, score.variance)


def test_paper_misprints_give_the_wrong_numbers():
    # E1: mu instead of sigma in the first term of E|X|: 0 instead of 0.79788.
    _, e1, _, _, _ = _paper_variants(0.0, 1.0)
    assert e1 == 0.0
    assert expected_mean_absolute_error(
        [0.0], [0.0], sigma=1.0, estimand="forward"
    ).expected == (pytest.approx(0.79788, abs=6e-6))
    # E1 at mu = -1.5: 0.91103 printed vs 1.55861.
    correct, e1, _, _, _ = _paper_variants(-1.5, 1.0)
    assert e1 == pytest.approx(0.91103, abs=1e-5)
    assert correct == pytest.approx(1.55861, abs=1e-5)
    # E2: a minus inside the square: 1.96050 printed vs 0.63897 at mu = sigma = 1.
    _, _, e2, _, _ = _paper_variants(1.0, 1.0)
    assert e2 == pytest.approx(1.96050, abs=1e-5)
    ours = expected_mean_absolute_error([1.0], [0.0], sigma=1.0, estimand="forward")
    assert ours.variance == pytest.approx(0.63897, abs=6e-6)
    # E3: erfc for erf: 4.25 vs 0.24997 at mu = 2, sigma = 0.5; negative at -1.5.
    _, _, _, e3, _ = _paper_variants(2.0, 0.5)
    assert e3 == pytest.approx(4.25, abs=1e-5)
    assert expected_mean_absolute_error(
        [2.0], [0.0], sigma=0.5, estimand="forward"
    ).variance == (pytest.approx(0.24997, abs=6e-6))
    assert _paper_variants(-1.5, 1.0)[3] == pytest.approx(-3.20436, abs=1e-5)
    # E5: erfc(|d| / (sqrt(2) d)) has the argument 1/sqrt(2) whatever sigma:
    # the printed form gives the same d-term for sigma = 0.1 and sigma = 10.
    for sigma in (0.1, 10.0):
        _, _, _, _, e5 = _paper_variants(2.0, sigma)
        a = sigma * math.sqrt(2 / math.pi) * math.exp(-2.0 / sigma**2)
        assert e5 - a == pytest.approx(2.0 * erf(1 / math.sqrt(2)), rel=1e-14)
    small = expected_mean_absolute_error(
        [2.0], [0.0], sigma=0.1, estimand="forward"
    ).expected
    large = expected_mean_absolute_error(
        [2.0], [0.0], sigma=10.0, estimand="forward"
    ).expected
    assert small == pytest.approx(2.0, rel=1e-15)
    assert large == pytest.approx(stats.foldnorm(0.2, scale=10.0).mean(), rel=1e-13)


def test_textbook_form_agrees_where_it_is_accurate():
    rng = np.random.default_rng(6)
    d = rng.normal(0, 2, 200)
    sigma = rng.uniform(0.3, 3, 200)
    a = sigma * np.sqrt(2 / np.pi) * np.exp(-(d**2) / (2 * sigma**2))
    mean = a + d * erf(d / (sigma * np.sqrt(2)))
    var = d**2 + sigma**2 - mean**2
    for i in range(0, 200, 20):
        score = expected_mean_absolute_error(
            [d[i]], [0.0], sigma=sigma[i], estimand="forward"
        )
        assert score.expected == pytest.approx(mean[i], rel=1e-13)
        assert score.variance == pytest.approx(var[i], rel=1e-9)


# --- numerically extreme inputs (Part III.1) -----------------------------------


@pytest.mark.parametrize("ratio", [1e8, 1e12, 1e100])
def test_mae_huge_distance_over_sigma(ratio):
    for sigma in (1.0, 3.5e-5):
        d = ratio * sigma
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            score = expected_mean_absolute_error(
                [d], [0.0], sigma=sigma, estimand="forward"
            )
        assert score.expected == d  # E -> |d| exactly
        assert score.variance == sigma**2  # Var -> sigma² exactly
    # The textbook d² + σ² − E² loses everything here (FORMULAS.md §2).
    assert 1e8**2 + 1.0 - 1e8**2 == 0.0


@pytest.mark.parametrize(
    "d, sigma",
    [
        (1.0, 1e-300),
        (1.0, 1e-320),
        (1e-300, 1e-300),
        (0.0, 1e-300),
        (0.0, 1e-320),
        (1e-310, 1e-320),
        (0.0, 0.0),
        (1.0, 0.0),
        (-2.5, 0.0),
    ],
)
def test_mae_tiny_sigma_and_exact_labels(d, sigma):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mae = expected_mean_absolute_error([d], [0.0], sigma=sigma, estimand="forward")
        mse = expected_mean_squared_error([d], [0.0], sigma=sigma, estimand="forward")
    for score in (mae, mse):
        assert math.isfinite(score.expected) and math.isfinite(score.variance)
        assert score.variance >= 0.0
    assert mae.expected >= abs(d)
    assert mae.expected <= abs(d) + sigma  # 2 σ g(t) <= 2 σ φ(0) < σ
    assert mae.variance <= sigma**2
    if sigma == 0.0 or abs(d) >= 1e6 * sigma:
        assert mae.expected == abs(d)
    if d == 0.0:
        assert mae.expected == pytest.approx(sigma * math.sqrt(2 / math.pi), rel=1e-6)
    if d == sigma == 0.0:
        assert (mae.expected, mae.variance) == (0.0, 0.0)
        assert (mse.expected, mse.variance) == (0.0, 0.0)


def test_mae_zero_distance_closed_form():
    score = expected_mean_absolute_error(
        [1.0, -3.0], [1.0, -3.0], sigma=[2.0, 0.5], estimand="forward"
    )
    assert score.expected == pytest.approx(
        (2.0 + 0.5) * math.sqrt(2 / math.pi) / 2, rel=1e-15
    )
    assert score.variance == pytest.approx(
        (4.0 + 0.25) * (1 - 2 / math.pi) / 4, rel=1e-14
    )


# --- properties ----------------------------------------------------------------

_values = arrays(
    np.float64,
    st.integers(1, 30),
    elements=st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False),
)


@st.composite
def _problems(draw):
    y_true = draw(_values)
    n = y_true.size
    y_pred = draw(arrays(np.float64, n, elements=st.floats(-1e3, 1e3)))
    sigma = draw(
        st.one_of(
            st.floats(0, 100),
            arrays(np.float64, n, elements=st.floats(0, 100)),
        )
    )
    return y_true, y_pred, sigma


@settings(max_examples=60, deadline=None)
@given(_problems())
def test_expected_is_at_least_nominal(problem):
    y_true, y_pred, sigma = problem
    for metric, _ in METRICS:
        score = metric(y_true, y_pred, sigma=sigma, estimand="forward")
        assert score.expected >= score.nominal * (1 - 1e-15)
        assert score.variance >= 0.0


@settings(max_examples=40, deadline=None)
@given(_problems(), st.randoms(use_true_random=False))
def test_invariant_to_sample_order(problem, random):
    y_true, y_pred, sigma = problem
    order = np.arange(y_true.size)
    random.shuffle(order)
    shuffled_sigma = sigma if np.ndim(sigma) == 0 else sigma[order]
    for metric, _ in METRICS:
        a = metric(y_true, y_pred, sigma=sigma, estimand="forward")
        b = metric(
            y_true[order], y_pred[order], sigma=shuffled_sigma, estimand="forward"
        )
        for field in ("expected", "variance", "nominal"):
            assert getattr(b, field) == pytest.approx(
                getattr(a, field), rel=1e-12, abs=1e-300
            )


@settings(max_examples=40, deadline=None)
@given(_values, st.floats(1e-3, 10))
def test_mae_limits_in_sigma(d, scale):
    zeros = np.zeros_like(d)
    spread = 1.0 + np.max(np.abs(d))
    tiny = 1e-12 * spread * scale
    small = expected_mean_absolute_error(d, zeros, sigma=tiny, estimand="forward")
    assert small.expected == pytest.approx(small.nominal, rel=1e-11, abs=tiny)
    assert small.variance <= tiny**2
    huge = 1e9 * spread * scale
    large = expected_mean_absolute_error(d, zeros, sigma=huge, estimand="forward")
    assert large.expected / huge == pytest.approx(math.sqrt(2 / math.pi), rel=1e-6)
    assert large.variance * d.size / huge**2 == pytest.approx(1 - 2 / math.pi, 1e-6)


@settings(max_examples=40, deadline=None)
@given(_values, st.floats(0, 50), st.floats(0, 50))
def test_monotone_in_sigma(d, s1, s2):
    low, high = sorted((s1, s2))
    zeros = np.zeros_like(d)
    for metric, _ in METRICS:
        a = metric(d, zeros, sigma=low, estimand="forward")
        b = metric(d, zeros, sigma=high, estimand="forward")
        assert b.expected >= a.expected * (1 - 1e-14)
        assert b.variance >= a.variance * (1 - 1e-12)


@settings(max_examples=40, deadline=None)
@given(_problems(), st.data())
def test_integer_weights_equal_repetition(problem, data):
    y_true, y_pred, sigma = problem
    n = y_true.size
    weight = data.draw(arrays(np.int64, n, elements=st.integers(0, 4)))
    if weight.sum() == 0:
        weight[0] = 1
    sigma_array = np.broadcast_to(sigma, (n,))
    repeated = {
        "y_true": np.repeat(y_true, weight),
        "y_pred": np.repeat(y_pred, weight),
        "sigma": np.repeat(sigma_array, weight),
    }
    for metric, _ in METRICS:
        weighted = metric(
            y_true, y_pred, sigma=sigma, sample_weight=weight, estimand="forward"
        )
        copies = metric(
            repeated["y_true"],
            repeated["y_pred"],
            sigma=repeated["sigma"],
            estimand="forward",
        )
        assert weighted.expected == pytest.approx(
            copies.expected, rel=1e-12, abs=1e-300
        )
        assert weighted.nominal == pytest.approx(copies.nominal, rel=1e-12, abs=1e-300)
        # Not the variance: a weight w counts ONE noisy label w times (variance
        # Σ w² v / (Σ w)²), repetition draws w independent labels (Σ w v / (Σ w)²).
        assert weighted.variance >= copies.variance * (1 - 1e-12)
        per_sample = [
            metric([t], [p], sigma=s, estimand="forward").variance
            for t, p, s in zip(y_true, y_pred, sigma_array, strict=True)
        ]
        w = weight.astype(float)
        assert weighted.variance == pytest.approx(
            np.sum(w**2 * per_sample) / w.sum() ** 2, rel=1e-12, abs=1e-300
        )
        assert copies.variance == pytest.approx(
            np.sum(w * per_sample) / w.sum() ** 2, rel=1e-12, abs=1e-300
        )


def test_mse_overflow_warns_and_non_finite_inputs_raise():
    with pytest.warns(RuntimeWarning, match="overflowed"):
        score = expected_mean_squared_error(
            [1e200, 0.0], [-1e200, 0.0], sigma=1.0, estimand="forward"
        )
    assert score.expected == math.inf
    with pytest.warns(RuntimeWarning, match="overflowed"):
        expected_mean_squared_error(
            [0.0, 0.0], [0.0, 0.0], sigma=[0.0, 1e160], estimand="forward"
        )
    for y_true, y_pred, sigma, name in (
        ([np.inf, 0.0], [np.inf, 0.0], 1.0, "y_true"),
        ([0.0, 1.0], [0.0, -np.inf], 1.0, "y_pred"),
        ([0.0, 1.0], [0.0, np.nan], [1.0, 1.0], "y_pred"),
        ([0.0, 1.0], [0.0, 1.0], [np.nan, 1.0], "sigma"),
        ([0.0, 1.0], [0.0, 1.0], [1.0, np.inf], "sigma"),
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(ValueError, match=f"{name} must be finite.*index"):
                expected_mean_squared_error(
                    y_true,
                    y_pred,
                    sigma=sigma,
                    sample_weight=[0.0, 1.0],
                    estimand="forward",
                )


@pytest.mark.parametrize("scale", [1e-180, 1e-30, 1.0, 1e40, 1e200])
@pytest.mark.parametrize(
    "metric", [expected_mean_squared_error, expected_mean_absolute_error]
)
def test_sample_weight_scale_does_not_matter(metric, scale):
    # Only ratios of weights enter a weighted mean; tiny or huge weights must
    # neither underflow nor overflow in the variance's squared weights.
    y_true = np.array([1.0, 2.0, 3.0, -1.0])
    y_pred = np.array([0.0, 2.0, 4.0, 0.5])
    sigma = np.array([0.1, 0.2, 0.3, 0.0])
    weight = np.array([1.0, 2.0, 1.0, 3.0])
    reference = metric(
        y_true, y_pred, sigma=sigma, sample_weight=weight, estimand="forward"
    )
    scaled = metric(
        y_true, y_pred, sigma=sigma, sample_weight=weight * scale, estimand="forward"
    )
    assert scaled.expected == pytest.approx(reference.expected, rel=1e-14)
    assert scaled.variance == pytest.approx(reference.variance, rel=1e-14)
    assert scaled.nominal == pytest.approx(reference.nominal, rel=1e-14)
