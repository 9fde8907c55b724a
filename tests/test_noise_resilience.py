"""Tests of noise_resilience_score (Viaña & Cohen; NOISE_RESILIENCE.md §7).

The curve and its display are tested in test_noise_resilience_curve.py.
"""

import dataclasses
import doctest
import json
import math
import pickle
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import UndefinedMetricWarning

from sklearn_noisy.metrics import NoiseResilienceResult, noise_resilience_score

# ---------------------------------------------------------------------------
# The hand-computed example: two regions of five samples.
#
# Region 0, x = 0, 1, 2, 3, 4 (x̄ = 2, x − x̄ = -2, -1, 0, 1, 2, Σ(x − x̄)² = 10):
#   ε_y = y − μ   =  1, -1,  2,  0, -2   mean 0, Σ(ε_y − ε̄_y)² = 1+1+4+0+4 = 10
#   ε_ŷ = ŷ − μ   =  0,  1,  0,  1,  3   mean 1, deviations -1, 0, -1, 0, 2,
#                                        Σ(ε_ŷ − ε̄_ŷ)² = 1+0+1+0+4 = 6
#   NR_0 = 1 − (6/4)/(10/4) = 0.4                                          [37]
#   λ = ε_y − ε_ŷ =  1, -2,  2, -1, -5   (Σλ = -5: not 0, [27] fails here)
#   S1 = Σ(x − x̄)λ = -2 + 2 + 0 - 1 - 10 = -11                           [30]
#   S2 = Σλ² = 1 + 4 + 4 + 1 + 25 = 35                                     [31]
#   α (least squares) = Σ(x − x̄)ε_ŷ / 10 = (0 - 1 + 0 + 1 + 6)/10 = 0.6
#   α (endpoints, [9]) = (ε_ŷ(4) − ε_ŷ(0)) / (4 − 0) = 3/4
#   B = S2 / (2|S1|) = 35/22                                               [33]
#   condition: 2·0.6·(-11) + 35 = 21.8 ≥ 0 holds (endpoints: 18.5)         [31]
#   nr_linear = 21.8 / 10 = 2.18 (endpoints 1.85): far from NR_0 = 0.4, as
#   ε_ŷ is not linear and Σλ ≠ 0. The exact identity of §3 holds instead:
#   λ − λ̄ = 2, -1, 3, 0, -4; 2Σ(ε_ŷ − ε̄_ŷ)(λ − λ̄) + Σ(λ − λ̄)² =
#   2·(-2 + 0 - 3 + 0 - 8) + 30 = 4 = (N − 1)(s_y − s_ŷ) = 10 − 6.
#   Confidence γ = 1, 2, 3, 1, 5 (γ_min 1, γ_max 5, x_c = 2):
#   w = 0, 1/(4·2), 2/(4·1), 0, 4/(4·3) = 0, 1/8, 1/2, 0, 1/3
#   G = Σ wλ = -2/8 + 2/2 - 5/3 = -11/12 [10]; Σw = 23/24, mean -22/23.
#
# Region 1, x = 5, ..., 9 (x − x̄ = -2, ..., 2):
#   ε_y as in region 0; ε_ŷ = 3(x − 7) = -6, -3, 0, 3, 6: linear, α = 3
#   (both slopes), Σ(ε_ŷ − ε̄_ŷ)² = 90, NR_1 = 1 − 90/10 = -8
#   λ = 7, 2, 2, -3, -8 (Σλ = 0); S1 = -14 - 2 + 0 - 3 - 16 = -35;
#   S2 = 49 + 4 + 4 + 9 + 64 = 130; B = 130/70 = 13/7 < |α| with
#   sign(α) ≠ sign(S1): the condition fails, 2·3·(-35) + 130 = -80 < 0, and
#   nr_linear = -80/10 = -8 = NR_1 (linear, Σλ = 0). γ constant: G = NaN.
#
# NR = (0.4 - 8)/2 = -3.8; the condition holds in 1 of 2 regions.
# ---------------------------------------------------------------------------
E_Y = [1.0, -1.0, 2.0, 0.0, -2.0]


def _hand_example():
    x = np.arange(10.0)
    y_ref = np.array([3.0, -1.0, 4.0, 1.0, 5.0, -9.0, 2.0, 6.0, -5.0, 3.0])
    y = y_ref + np.array(E_Y + E_Y)
    y_pred = y_ref + np.array([0.0, 1.0, 0.0, 1.0, 3.0, -6.0, -3.0, 0.0, 3.0, 6.0])
    confidence = np.array([1.0, 2.0, 3.0, 1.0, 5.0, 2.0, 2.0, 2.0, 2.0, 2.0])
    return x, y, y_pred, y_ref, confidence


def test_hand_computed_regions():
    x, y, y_pred, y_ref, confidence = _hand_example()
    with pytest.warns(UndefinedMetricWarning, match="constant in 1 of the 2"):
        result = noise_resilience_score(
            x, y, y_pred, y_ref, n_regions=2, confidence=confidence
        )
    assert isinstance(result, NoiseResilienceResult)
    assert result.score == pytest.approx(-3.8, abs=1e-14)
    np.testing.assert_allclose(result.nr, [0.4, -8.0], rtol=0, atol=1e-14)
    np.testing.assert_allclose(result.alpha, [0.6, 3.0], rtol=1e-14)
    np.testing.assert_allclose(result.S1, [-11.0, -35.0], rtol=1e-14)
    np.testing.assert_allclose(result.S2, [35.0, 130.0], rtol=1e-14)
    np.testing.assert_allclose(result.bound, [35 / 22, 13 / 7], rtol=1e-14)
    np.testing.assert_allclose(result.nr_linear, [2.18, -8.0], rtol=1e-14)
    assert result.condition.tolist() == [True, False]
    assert result.fraction_satisfied == 0.5
    assert result.n_samples.tolist() == [5, 5]
    assert result.x_min.tolist() == [0.0, 5.0]
    assert result.x_max.tolist() == [4.0, 9.0]
    assert result.G[0] == pytest.approx(-11 / 12, rel=1e-14)
    assert math.isnan(result.G[1])
    assert (result.mode, result.slope, result.n_omitted) == (
        "partition",
        "least_squares",
        0,
    )
    assert result.group_labels is None

    with pytest.warns(UndefinedMetricWarning, match="constant"):
        ends = noise_resilience_score(
            x, y, y_pred, y_ref, n_regions=2, slope="endpoints",
            confidence=confidence, compensation="mean",
        )  # fmt: skip
    np.testing.assert_allclose(ends.alpha, [0.75, 3.0], rtol=1e-14)
    np.testing.assert_allclose(ends.nr_linear, [1.85, -8.0], rtol=1e-14)
    np.testing.assert_array_equal(ends.nr, result.nr)  # [37] needs no slope
    assert ends.G[0] == pytest.approx(-22 / 23, rel=1e-14)
    assert ends.slope == "endpoints"


def test_condition_is_table_1():
    # [31] ⇔ sign(α) = sign(S1) or |α| ≤ B ([34], Table 1), on random regions.
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1, 600)
    y_ref = np.cos(4 * x)
    y = y_ref + rng.normal(0, 0.2, 600)
    y_pred = y_ref + rng.normal(0, 0.2, 600) + rng.normal(0, 3) * x
    for kwargs in (
        {"n_regions": 100},
        {"window": 5},
        {"n_regions": 100, "slope": "endpoints"},
    ):
        result = noise_resilience_score(x, y, y_pred, y_ref, **kwargs)
        table_1 = (np.sign(result.alpha) == np.sign(result.S1)) | (
            np.abs(result.alpha) <= result.bound
        )
        np.testing.assert_array_equal(result.condition, table_1)
        assert 0 < result.fraction_satisfied < 1


def _linear_error(x, y_ref, y, region, slopes, columns=None):
    """ŷ with ŷ − μ = α_j·x + β_j in region j and Σλ = 0 there."""
    x2 = x[:, None] if x.ndim == 1 else x
    error = np.einsum("ij,ij->i", x2, slopes[region])
    y_pred = y_ref + error
    for j in np.unique(region):
        members = region == j
        shift = np.mean(y[members] - y_pred[members])
        y_pred[members] += shift
    return y_pred


@pytest.mark.parametrize("slope", ["least_squares", "endpoints"])
def test_linear_error_nr_linear_equals_nr(slope):
    rng = np.random.default_rng(4)
    n, n_regions = 400, 8
    x = np.sort(rng.uniform(-3, 5, n))
    y_ref = x**3 - x
    y = y_ref + rng.normal(0, 1.5, n)
    region = np.repeat(np.arange(n_regions), n // n_regions)
    slopes = rng.normal(0, 8.0, (n_regions, 1))
    y_pred = _linear_error(x, y_ref, y, region, slopes)
    result = noise_resilience_score(
        x, y, y_pred, y_ref, n_regions=n_regions, slope=slope
    )
    np.testing.assert_allclose(result.nr_linear, result.nr, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(result.condition, result.nr >= 0)
    assert 0 < result.fraction_satisfied < 1  # both cases occur
    np.testing.assert_allclose(result.alpha, slopes[:, 0], rtol=1e-10)
    # The same regions given as groups, in shuffled order.
    perm = rng.permutation(n)
    grouped = noise_resilience_score(
        x[perm], y[perm], y_pred[perm], y_ref[perm], groups=region[perm], slope=slope
    )
    np.testing.assert_allclose(grouped.nr, result.nr, rtol=0, atol=1e-13)
    assert grouped.group_labels.tolist() == list(range(n_regions))


def _two_feature_problem(seed=5, n=900):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 2))
    y_ref = np.sin(2 * X[:, 0]) + X[:, 1] ** 2
    y = y_ref + rng.normal(0, 0.3, n)
    groups = (X[:, 0] > 0).astype(int) + 2 * (X[:, 1] > 0) + 4 * (X[:, 0] > 0.5)
    return X, y, y_ref, groups


def test_multi_input_gradient_and_condition():
    X, y, y_ref, groups = _two_feature_problem()
    rng = np.random.default_rng(6)
    labels = np.unique(groups)
    slopes = rng.normal(0, 1.5, (labels.size, 2))
    y_pred = _linear_error(X, y_ref, y, np.searchsorted(labels, groups), slopes)
    result = noise_resilience_score(X, y, y_pred, y_ref, groups=groups)
    assert result.mode == "groups" and result.bound is None
    assert result.alpha.shape == result.S1.shape == result.x_min.shape == (6, 2)
    np.testing.assert_allclose(result.alpha, slopes, rtol=1e-10)
    np.testing.assert_allclose(result.nr_linear, result.nr, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(result.condition, result.nr >= 0)
    assert 0 < result.fraction_satisfied < 1
    # A noisier prediction: α, S1 and NR_j against direct computations.
    y_pred = y_ref + 0.5 * X[:, 0] + rng.normal(0, 0.2, y.size)
    result = noise_resilience_score(X, y, y_pred, y_ref, groups=groups)
    for j, label in enumerate(labels):
        m = groups == label
        Xc = X[m] - X[m].mean(axis=0)
        alpha = np.linalg.lstsq(Xc, y_pred[m] - y_ref[m], rcond=None)[0]
        lam = y[m] - y_pred[m]
        nr = 1 - np.var(y_pred[m] - y_ref[m], ddof=1) / np.var(y[m] - y_ref[m], ddof=1)
        np.testing.assert_allclose(result.alpha[j], alpha, rtol=1e-10)
        np.testing.assert_allclose(result.S1[j], Xc.T @ lam, rtol=1e-10, atol=1e-12)
        assert result.S2[j] == pytest.approx(lam @ lam, rel=1e-12)
        assert result.nr[j] == pytest.approx(nr, rel=1e-12, abs=1e-12)
        linear = 2 * alpha @ (Xc.T @ lam) + lam @ lam
        assert result.condition[j] == (linear >= 0)
        np.testing.assert_array_equal(result.x_min[j], X[m].min(axis=0))
    assert result.score == pytest.approx(np.mean(result.nr), rel=1e-15)


def test_offset_scores_one_and_copy_scores_zero():
    rng = np.random.default_rng(7)
    x = rng.integers(0, 1000, 300).astype(float)
    y_ref = rng.integers(-50, 50, 300).astype(float)
    y = y_ref + rng.integers(-5, 6, 300)
    groups = rng.integers(0, 4, 300)
    X = np.column_stack([x, rng.normal(size=300)])
    for x_, kwargs in [
        (x, {}),
        (x, {"n_regions": 7}),
        (x, {"window": 25}),
        (x, {"slope": "endpoints"}),
        (X, {"groups": groups}),
    ]:
        assert noise_resilience_score(x_, y, y_ref + 3.0, y_ref, **kwargs).score == 1.0
        assert noise_resilience_score(x_, y, y, y_ref, **kwargs).score == 0.0
    # With rounding in ŷ − μ (0.1 is not exact), to the last digits.
    y_ref = rng.normal(size=300)
    y = y_ref + rng.normal(size=300)
    score = noise_resilience_score(x, y, y_ref + 0.1, y_ref).score
    assert score == pytest.approx(1.0, abs=1e-12)


def _random_problem(seed, n=120):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, n)
    y_ref = np.exp(x)
    y = y_ref + rng.normal(0, 0.1, n)
    y_pred = y_ref + 0.3 * (x - 0.5) ** 2 + rng.normal(0, 0.05, n)
    return x, y, y_pred, y_ref


_COMPARED = ("nr", "nr_linear", "alpha", "bound", "condition")


@pytest.mark.parametrize("kwargs", [{"n_regions": 6}, {"window": 15}])
@pytest.mark.parametrize("scale", [1e-300, 1e300])
def test_invariant_to_shift_and_common_rescaling(kwargs, scale):
    x, y, y_pred, y_ref = _random_problem(8)
    reference = noise_resilience_score(x, y, y_pred, y_ref, **kwargs)
    shifted = noise_resilience_score(x + 1000.0, y, y_pred, y_ref, **kwargs)
    scaled = noise_resilience_score(
        scale * x, scale * y, scale * y_pred, scale * y_ref, **kwargs
    )
    for other in (shifted, scaled):
        assert other.score == pytest.approx(reference.score, rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(other.nr, reference.nr, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(other.nr_linear, reference.nr_linear, rtol=1e-11)
        np.testing.assert_allclose(other.alpha, reference.alpha, rtol=1e-9)
        np.testing.assert_allclose(other.bound, reference.bound, rtol=1e-9)
        np.testing.assert_array_equal(other.condition, reference.condition)
    # S1 and S2 carry the units: beyond the float range they are 0 or inf.
    expected = np.inf if scale > 1 else 0.0
    np.testing.assert_array_equal(scaled.S2, expected)
    # x alone rescaled: NR unchanged, α in units of y per x.
    stretched = noise_resilience_score(scale * x, y, y_pred, y_ref, **kwargs)
    np.testing.assert_allclose(stretched.nr, reference.nr, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(stretched.alpha * scale, reference.alpha, rtol=1e-9)


def test_multi_input_scale_invariance():
    X, y, y_ref, groups = _two_feature_problem(9, 300)
    y_pred = y_ref + 0.2 * X[:, 1] + np.random.default_rng(9).normal(0, 0.1, y.size)
    reference = noise_resilience_score(X, y, y_pred, y_ref, groups=groups)
    for scale in (1e-300, 1e300):
        X_scaled = X * [scale, 1.0]  # the columns in different units
        other = noise_resilience_score(
            X_scaled, scale * y, scale * y_pred, scale * y_ref, groups=groups
        )
        np.testing.assert_allclose(other.nr, reference.nr, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(other.condition, reference.condition)
        np.testing.assert_allclose(
            other.alpha, reference.alpha * [1.0, scale], rtol=1e-9
        )


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    x_exponent=st.integers(-900, 900),
    y_exponent=st.integers(-900, 900),
    mode=st.sampled_from([{"n_regions": 4}, {"window": 6}, {"slope": "endpoints"}]),
)
def test_powers_of_two_and_order_change_nothing(seed, x_exponent, y_exponent, mode):
    # Rescaling by a power of two is exact, and so is the result, bit for bit;
    # so is reordering the samples (ties in x included).
    rng = np.random.default_rng(seed)
    x = rng.permutation(np.r_[np.arange(21.0), 1.0, 1.0, 5.0])  # with ties
    y_ref = rng.normal(size=24)
    y = y_ref + rng.normal(size=24)
    y_pred = y_ref + rng.normal(size=24) * rng.uniform(0, 2)
    reference = noise_resilience_score(x, y, y_pred, y_ref, **mode)
    perm = rng.permutation(24)
    sx, sy = 2.0**x_exponent, 2.0**y_exponent
    other = noise_resilience_score(
        sx * x[perm], sy * y[perm], sy * y_pred[perm], sy * y_ref[perm], **mode
    )
    assert other.score == reference.score
    np.testing.assert_array_equal(other.nr, reference.nr)
    np.testing.assert_array_equal(other.nr_linear, reference.nr_linear)
    np.testing.assert_array_equal(other.condition, reference.condition)


def test_sliding_window_matches_brute_force():
    x, y, y_pred, y_ref = _random_problem(10, 40)
    window = 7
    confidence = np.random.default_rng(10).uniform(1, 2, 40)
    result = noise_resilience_score(
        x, y, y_pred, y_ref, window=window, confidence=confidence
    )
    assert result.mode == "window" and result.n_regions == 40 - window + 1
    order = np.argsort(x)
    for k in range(result.n_regions):
        idx = order[k : k + window]
        e_y, e_pred, lam = (
            y[idx] - y_ref[idx],
            y_pred[idx] - y_ref[idx],
            y[idx] - y_pred[idx],
        )
        dx = x[idx] - x[idx].mean()
        alpha = np.polyfit(x[idx], e_pred, 1)[0]
        nr = 1 - np.var(e_pred, ddof=1) / np.var(e_y, ddof=1)
        gamma = confidence[idx]
        centre = (x[idx].min() + x[idx].max()) / 2
        w = (gamma - gamma.min()) / (np.ptp(gamma) * (1 + np.abs(centre - x[idx])))
        assert result.nr[k] == pytest.approx(nr, rel=1e-12, abs=1e-13)
        assert result.alpha[k] == pytest.approx(alpha, rel=1e-9)
        assert result.S1[k] == pytest.approx(dx @ lam, rel=1e-10, abs=1e-14)
        assert result.S2[k] == pytest.approx(lam @ lam, rel=1e-13)
        assert result.G[k] == pytest.approx(w @ lam, rel=1e-12, abs=1e-15)
        assert (result.x_min[k], result.x_max[k]) == (x[idx].min(), x[idx].max())
    assert result.score == pytest.approx(np.mean(result.nr), rel=1e-15)
    whole = noise_resilience_score(x, y, y_pred, y_ref, window=40)
    one = noise_resilience_score(x, y, y_pred, y_ref, n_regions=1)
    assert whole.score == one.score


def test_zero_variance_regions():
    x = np.arange(9.0)
    y_ref = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
    y = y_ref + np.array([0.5, 0.5, 0.5, 1.0, -1.0, 0.0, 2.0, 0.0, 1.0])  # 0: constant
    y_pred = y_ref + np.array([0.0, 0.5, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    with pytest.raises(ValueError, match=r"zero variance in 1 of the 3 regions"):
        noise_resilience_score(x, y, y_pred, y_ref, n_regions=3)
    with pytest.warns(UndefinedMetricWarning, match="1 of the 3 regions.*left out"):
        result = noise_resilience_score(
            x, y, y_pred, y_ref, n_regions=3, zero_variance="omit",
            confidence=np.arange(9.0),
        )  # fmt: skip
    assert result.n_omitted == 1 and result.n_regions == 2
    assert result.x_min.tolist() == [3.0, 6.0] and result.G.shape == (2,)
    # NR_1 = 1 - (1/3)/1, NR_2 = 1 - (1/3)/1 (variances of ε_ŷ and ε_y).
    np.testing.assert_allclose(result.nr, [2 / 3, 2 / 3], rtol=1e-14)
    assert result.score == pytest.approx(2 / 3, rel=1e-14)
    with pytest.raises(ValueError, match="zero variance in 3 of the 3"):
        noise_resilience_score(
            x, y_ref, y_pred, y_ref, n_regions=3, zero_variance="omit"
        )


def test_repeated_measurements_reference_excludes_the_scored_reading():
    # K readings per sample, σ = 1; a prediction with error variance v,
    # independent of the readings (as out-of-fold predictions are). With
    # y_ref = mean of the K − 1 other readings, both variances grow by
    # σ²/(K − 1): E NR ≈ (1 − v)(K − 1)/K, the sign of the truth's NR. With
    # the mean of all K readings, y_ref shares the noise of y: E NR ≈
    # (K − 2 − K v)/(K − 1), 0 for a perfect model at K = 2.
    rng = np.random.default_rng(11)
    n, n_regions, K, v = 20000, 40, 3, 0.5
    x = np.sort(rng.uniform(0, 1, n))
    mu = np.sin(3 * x)
    readings = mu[:, None] + rng.standard_normal((n, K))
    y = readings[:, 0]
    y_pred = mu + math.sqrt(v) * rng.standard_normal(n)
    others = readings[:, 1:].mean(axis=1)
    every = readings.mean(axis=1)
    for y_ref, expected in [
        (mu, 1 - v),
        (others, (1 - v) * (K - 1) / K),
        (every, (K - 2 - K * v) / (K - 1)),
    ]:
        result = noise_resilience_score(x, y, y_pred, y_ref, n_regions=n_regions)
        se = np.std(result.nr, ddof=1) / math.sqrt(n_regions)
        assert abs(result.score - expected) < 5 * se, (result.score, expected, se)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"n_regions": 2, "window": 3}, ValueError, "not both"),
        ({"n_regions": 4}, ValueError, r"n_regions must be an integer in \[1, 3\]"),
        ({"n_regions": 0}, ValueError, "n_regions"),
        ({"n_regions": True}, ValueError, "n_regions"),
        ({"n_regions": 2.0}, ValueError, "n_regions"),
        (
            {"window": 2},
            ValueError,
            r"window must be an integer in \[3, n_samples=10\]",
        ),
        ({"window": 11}, ValueError, "window"),
        ({"groups": [0] * 10, "n_regions": 2}, ValueError, "groups, or n_regions"),
        ({"groups": [0] * 8 + [1] * 2}, ValueError, r"group 1 with 2"),
        ({"groups": [0] * 9}, ValueError, "groups must be 1-D with one label"),
        ({"groups": [0.0] * 9 + [np.nan]}, ValueError, "groups must be finite"),
        ({"slope": "ols"}, ValueError, "slope must be one of"),
        ({"compensation": "avg"}, ValueError, "compensation must be one of"),
        ({"zero_variance": "ignore"}, ValueError, "zero_variance must be one of"),
        ({"confidence": [1.0] * 9}, ValueError, "confidence must have the same"),
        ({"confidence": [np.inf] * 10}, ValueError, "confidence must be finite"),
    ],
)
def test_bad_options(kwargs, error, match):
    x, y, y_pred, y_ref, _ = _hand_example()
    with pytest.raises(error, match=match):
        noise_resilience_score(x, y, y_pred, y_ref, **kwargs)


def test_bad_inputs():
    x, y, y_pred, y_ref, _ = _hand_example()
    with pytest.raises(ValueError, match="x and y must have the same number"):
        noise_resilience_score(x, y[:-1], y_pred, y_ref)
    with pytest.raises(ValueError, match=r"x is constant .* within 1 region"):
        noise_resilience_score(np.r_[np.ones(5), x[5:]], y, y_pred, y_ref, n_regions=2)
    with pytest.raises(ValueError, match="y_pred must be finite"):
        noise_resilience_score(x, y, np.full(10, np.nan), y_ref)
    with pytest.raises(ValueError, match="x must be finite"):
        noise_resilience_score(np.r_[x[:-1], np.inf], y, y_pred, y_ref)
    with pytest.raises(ValueError, match="at least 3 samples"):
        noise_resilience_score(x[:2], y[:2], y_pred[:2], y_ref[:2])
    with pytest.raises(ValueError, match="at least 3 samples"):
        noise_resilience_score([], [], [], [], groups=[])
    with pytest.raises(ValueError, match=r"x has 2 columns.*need groups"):
        noise_resilience_score(np.ones((10, 2)), y, y_pred, y_ref)
    with pytest.raises(ValueError, match="y_ref must be 1-D"):
        noise_resilience_score(x, y, y_pred, np.ones((10, 2)))
    with pytest.raises(TypeError, match="y must hold real numbers"):
        noise_resilience_score(x, ["a"] * 10, y_pred, y_ref)
    X = np.column_stack([x, 2 * x])  # collinear columns
    with pytest.raises(ValueError, match="collinear"):
        noise_resilience_score(X, y, y_pred, y_ref, groups=[0] * 10)
    with pytest.raises(ValueError, match="slope='endpoints' needs one input"):
        noise_resilience_score(
            np.column_stack([x, x**2]), y, y_pred, y_ref, groups=[0] * 10,
            slope="endpoints",
        )  # fmt: skip
    with pytest.raises(ValueError, match="at least 3 samples"):  # p + 1 = 3 too
        noise_resilience_score(
            np.column_stack([x, x**2]), y, y_pred, y_ref, groups=[0] * 8 + [1] * 2
        )


def test_result_object():
    pd = pytest.importorskip("pandas")
    x, y, y_pred, y_ref, confidence = _hand_example()
    inputs = [a.copy() for a in (x, y, y_pred, y_ref, confidence)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        result = noise_resilience_score(
            x, y, y_pred, y_ref, n_regions=2, confidence=confidence
        )
    for before, after in zip(inputs, (x, y, y_pred, y_ref, confidence), strict=True):
        np.testing.assert_array_equal(before, after)  # inputs not modified
    frame = result.to_frame()
    assert isinstance(frame, pd.DataFrame) and frame.shape == (2, 11)
    assert frame["nr"].tolist() == pytest.approx([0.4, -8.0])
    loaded = json.loads(json.dumps(result.to_dict(), allow_nan=True))
    assert loaded["score"] == pytest.approx(-3.8) and loaded["n_regions"] == 2
    assert loaded["regions"]["S2"] == pytest.approx([35.0, 130.0])
    assert float(result) == result.score and "score=-3.8" in repr(result)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.score = 1.0
    with pytest.raises(ValueError, match="read-only"):
        result.nr[0] = 1.0
    restored = pickle.loads(pickle.dumps(result))
    for name in ("nr", "alpha", "S1", "condition", "n_samples"):
        np.testing.assert_array_equal(getattr(restored, name), getattr(result, name))
        assert not getattr(restored, name).flags.writeable
    np.testing.assert_array_equal(restored.G, result.G)
    X, y2, y_ref2, groups = _two_feature_problem(12, 120)
    grouped = noise_resilience_score(
        X, y2, y_ref2 + 0.1 * X[:, 0], y_ref2, groups=groups
    )
    frame = grouped.to_frame()
    assert {"group", "alpha_0", "alpha_1", "S1_1", "x_max_0"} <= set(frame.columns)
    assert "bound" not in frame.columns
    restored = pickle.loads(pickle.dumps(grouped))
    np.testing.assert_array_equal(restored.group_labels, grouped.group_labels)


def test_user_guide_examples():
    """The ``>>>`` examples of the user-guide page print what they say."""
    page = Path(__file__).resolve().parents[1] / "docs/user_guide/noise_resilience.rst"
    result = doctest.testfile(
        str(page),
        module_relative=False,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        verbose=False,
        report=True,
    )
    assert result.attempted >= 20
    assert result.failed == 0, f"{result.failed} doctest failure(s) in {page.name}"


def test_units_beyond_the_float_range():
    # y at ~1e300, x at ~1e-300 (powers of two, exact): α = 0 stays 0 (it was
    # 0 · inf = NaN before the units were restored by exact powers of two),
    # B = S2/(2|S1|) ~ 1e600 is inf, and the dimensionless results are those of
    # the unscaled data.
    x, y, _, y_ref = _random_problem(13, 30)
    y, y_ref = np.round(y * 1024) / 1024, np.round(y_ref * 1024) / 1024
    offset = y_ref + 0.25  # exact: ŷ − μ is exactly constant
    reference = noise_resilience_score(x, y, offset, y_ref, n_regions=3)
    big, small = 2.0**997, 2.0**-997
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = noise_resilience_score(
            small * x, big * y, big * offset, big * y_ref, n_regions=3
        )
    assert result.score == reference.score == 1.0
    np.testing.assert_array_equal(result.alpha, 0.0)
    np.testing.assert_array_equal(result.bound, np.inf)
    np.testing.assert_array_equal(result.S1, reference.S1)  # 2**997 · 2**-997
    np.testing.assert_array_equal(result.nr_linear, reference.nr_linear)
    np.testing.assert_array_equal(result.condition, reference.condition)


def test_string_group_labels():
    X, y, y_ref, groups = _two_feature_problem(14, 300)
    names = np.array(["north", "south", "east", "west", "up", "down", "in", "out"])
    labels = names[groups]
    y_pred = y_ref + 0.1 * X[:, 1]
    result = noise_resilience_score(X, y, y_pred, y_ref, groups=labels)
    by_number = noise_resilience_score(X, y, y_pred, y_ref, groups=groups)
    assert result.group_labels.tolist() == sorted(set(labels.tolist()))
    order = np.argsort(names[np.unique(groups)])  # regions follow sorted labels
    np.testing.assert_array_equal(result.nr, by_number.nr[order])


def test_compensation_of_several_features_uses_the_euclidean_distance():
    rng = np.random.default_rng(3)
    X = rng.uniform(-1.0, 1.0, (40, 2))
    groups = np.arange(40) % 2
    y_ref = X.sum(axis=1)
    y = y_ref + rng.normal(size=40)
    y_pred = y_ref + 0.5 * rng.normal(size=40)
    gamma = rng.uniform(1.0, 2.0, 40)
    result = noise_resilience_score(
        X, y, y_pred, y_ref, groups=groups, confidence=gamma
    )
    for k in range(2):
        m = groups == k
        centre = (X[m].min(axis=0) + X[m].max(axis=0)) / 2
        g = gamma[m]
        distance = np.linalg.norm(X[m] - centre, axis=1)
        w = (g - g.min()) / ((g.max() - g.min()) * (1.0 + distance))
        assert result.G[k] == pytest.approx(w @ (y - y_pred)[m], rel=1e-12)


def test_sliding_windows_computed_by_chunks():
    """More windows than one chunk holds: the windows on both sides of a chunk
    boundary are each their own region."""
    rng = np.random.default_rng(4)
    n, window = 25_000, 4  # two chunks of 16384 windows
    x = rng.uniform(size=n)
    y_ref = np.sin(6.0 * x)
    y, y_pred = y_ref + rng.normal(size=n), y_ref + 0.5 * rng.normal(size=n)
    result = noise_resilience_score(x, y, y_pred, y_ref, window=window)
    order = np.argsort(x)
    for k in (0, 16383, 16384, n - window):
        idx = order[k : k + window]
        e_y, e_pred = y[idx] - y_ref[idx], y_pred[idx] - y_ref[idx]
        nr = 1 - np.var(e_pred, ddof=1) / np.var(e_y, ddof=1)
        assert result.nr[k] == pytest.approx(nr, rel=1e-12, abs=1e-13)
    assert result.n_regions == n - window + 1
