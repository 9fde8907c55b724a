"""plan_sample_size and plan_comparison_size: closed forms, the library's
intervals, and simulations of the test sets they recommend."""

from __future__ import annotations

import dataclasses
import math
import pickle

import numpy as np
import pytest
from scipy.stats import binom, norm

from sklearn_noisy import NoisyScore
from sklearn_noisy.metrics import (
    expected_accuracy_score,
    expected_mean_squared_error,
    expected_paired_difference,
)
from sklearn_noisy.model_selection import (
    ComparisonSizePlan,
    SampleSizePlan,
    plan_comparison_size,
    plan_sample_size,
)


def _population(rng, n):
    """x ~ N(0, 1), truth μ = 1.5x + 0.3, model ŷ = x (truth MSE 0.34), and
    one reading's SD 0.3 + 0.3|x|."""
    x = rng.normal(size=n)
    return x, 1.5 * x + 0.3, 0.3 + 0.3 * np.abs(x)


def _width(y, y_pred, sigma):
    """The library's reported normal interval (both sources), its width."""
    score = expected_mean_squared_error(
        y, y_pred, sigma=sigma, estimand="truth", test_set_sampling=True
    )
    low, high = score.confidence_interval(0.95, method="normal", source="both")
    return high - low


def _check_width(target, n_replicates, seed, n_pilot=200_000):
    """Plan from a large pilot, then draw ``n_replicates`` test sets of the
    planned size from the population: their mean reported width is the
    target within 5 SE, the SE that of the simulation and of the pilot (the
    per-sample terms' kurtosis κ: a relative SE of √((κ − 1)/n)/2 for the
    width)."""
    rng = np.random.default_rng(seed)
    x, mu, s = _population(rng, n_pilot)
    y = mu + s * rng.normal(size=n_pilot)
    plan = plan_sample_size(y, x, sigma=s, target_width=target)
    h = (y - x) ** 2 - s**2
    kurtosis = np.mean((h - h.mean()) ** 4) / np.var(h) ** 2
    se_pilot = 0.5 * math.sqrt((kurtosis - 1) / n_pilot) * target
    n = plan.n_samples_needed
    widths = []
    for _ in range(n_replicates):
        x, mu, s = _population(rng, n)
        widths.append(_width(mu + s * rng.normal(size=n), x, s))
    mean = np.mean(widths)
    se = math.hypot(np.std(widths, ddof=1) / math.sqrt(n_replicates), se_pilot)
    print(f"n={n}: mean width {mean:.5f} (SE {se:.5f}) for target {target}")
    assert abs(mean - target) < 5 * se
    assert abs(mean / target - 1) < 0.03


def test_width_simulation_small():
    _check_width(0.055, 100, 0)  # n above 5000: no bootstrap-t pivot, fast


@pytest.mark.slow
def test_width_simulation():
    for target, seed in ((0.3, 1), (0.055, 2)):
        _check_width(target, 1000, seed, n_pilot=1_000_000)


def _check_readings(n_samples, n_replicates, seed):
    """A fixed test set, one reading each, planned for a width 30 % of the way
    from the test-set sampling's floor to the pilot's width; then re-measured
    with ``k − 1`` and ``k`` readings per sample (``n_replicates`` each): the
    mean width at ``k`` is at most the target and at ``k − 1`` above it, up
    to 5 SE and the pilot's own error (3 %: at one reading the floor is a
    difference of two estimates, its SD 4.7 % over 30 pilots of 100 000)."""
    rng = np.random.default_rng(seed)
    x, mu, s = _population(rng, n_samples)
    y = mu + s * rng.normal(size=n_samples)
    now = plan_sample_size(y, x, sigma=s, target_width=1.0)
    target = now.width_floor + 0.3 * (now.width - now.width_floor)
    plan = plan_sample_size(y, x, sigma=s, target_width=target)
    k = plan.n_readings_needed
    assert k is not None and k >= 2
    assert plan.readings_added == n_samples * (k - 1)
    mean, se = {}, {}
    for m in (k - 1, k):
        sd = s / math.sqrt(m)
        widths = [
            _width(mu + sd * rng.normal(size=n_samples), x, sd)
            for _ in range(n_replicates)
        ]
        mean[m] = np.mean(widths)
        se[m] = np.std(widths, ddof=1) / math.sqrt(n_replicates)
    print(
        f"target {target:.6f}: k={k}: {mean[k]:.6f} (SE {se[k]:.6f}); "
        f"k-1: {mean[k - 1]:.6f} (SE {se[k - 1]:.6f})"
    )
    assert mean[k] < 1.03 * target + 5 * se[k]
    assert mean[k - 1] > 0.97 * target - 5 * se[k - 1]


def test_readings_simulation_small():
    _check_readings(100_000, 3, 3)


@pytest.mark.slow
def test_readings_simulation():
    for seed in (4, 5, 6):
        _check_readings(100_000, 20, seed)


def _power_experiment(power, n_replicates, seed):
    """Models ŷ_a = x and ŷ_b = x + 0.25 (true MSE difference 0.0875), a
    pilot of 200 000 samples, then ``n_replicates`` test sets of the planned
    size: (n, fraction whose interval excludes 0)."""
    rng = np.random.default_rng(seed)

    def difference(n):
        x, mu, s = _population(rng, n)
        y = mu + s * rng.normal(size=n)
        return expected_paired_difference(
            y, x, x + 0.25, metric="mean_squared_error", sigma=s,
            estimand="truth", test_set_sampling=True,
        )  # fmt: skip

    plan = plan_comparison_size(difference(200_000), power=power)
    n = plan.n_samples_needed
    separated = 0
    for _ in range(n_replicates):
        low, high = difference(n).confidence_interval(
            0.95, method="normal", source="both"
        )
        separated += low > 0.0 or high < 0.0
    return n, separated / n_replicates


def _check_power(power, n_replicates, seed):
    n, fraction = _power_experiment(power, n_replicates, seed)
    se = math.sqrt(power * (1 - power) / n_replicates)
    print(f"power {power}: n={n}, separated {fraction:.4f} (SE {se:.4f})")
    assert abs(fraction - power) < 5 * se


def test_power_simulation_small():
    _check_power(0.8, 100, 7)


@pytest.mark.slow
def test_power_simulation():
    for power, seed in ((0.5, 8), (0.8, 9), (0.95, 10)):
        _check_power(power, 2000, seed)


def _check_comparison_readings(n_replicates, seed):
    """The pilot of ``_power_experiment`` rescaled to 120 samples (its
    variances times 200 000/120: a pilot of 120 with the population's
    variances), one reading each; then experiments of 120 fresh samples with
    ``k`` and ``k − 1`` readings each: the models are told apart in at least
    ``power`` of them at ``k`` and in fewer at ``k − 1`` (within 5 SE)."""
    rng = np.random.default_rng(seed)

    def difference(n, k):
        x, mu, s = _population(rng, n)
        sd = s / math.sqrt(k)
        return expected_paired_difference(
            mu + sd * rng.normal(size=n), x, x + 0.25,
            metric="mean_squared_error", sigma=sd, estimand="truth",
            test_set_sampling=True,
        )  # fmt: skip

    pilot = difference(200_000, 1)
    scale = 200_000 / 120
    pilot = dataclasses.replace(
        pilot,
        n_samples=120,
        variance=pilot.variance * scale,
        sampling_variance=pilot.sampling_variance * scale,
    )
    plan = plan_comparison_size(pilot, power=0.8, n_readings=1)
    k = plan.n_readings_needed
    assert k >= 2
    fractions = {}
    for m in (k - 1, k):
        separated = 0
        for _ in range(n_replicates):
            low, high = difference(120, m).confidence_interval(
                0.95, method="normal", source="both"
            )
            separated += low > 0.0 or high < 0.0
        fractions[m] = separated / n_replicates
    se = math.sqrt(0.8 * 0.2 / n_replicates)
    print(f"k={k}: separated {fractions[k]:.4f}, k-1: {fractions[k - 1]:.4f} "
          f"(SE {se:.4f})")  # fmt: skip
    assert fractions[k] > 0.8 - 5 * se
    assert fractions[k - 1] < 0.8 + 5 * se


def test_comparison_readings_simulation_small():
    _check_comparison_readings(80, 17)


@pytest.mark.slow
def test_comparison_readings_simulation():
    _check_comparison_readings(2000, 18)


def _votes(rng, truth, k, q=0.2):
    """The majority of ``k`` annotations of each truth, each wrong with
    probability ``q``, ties broken at random."""
    wrong = rng.binomial(k, q, size=truth.size)
    tie = (2 * wrong == k) & (rng.random(truth.size) < 0.5)
    return np.where((2 * wrong > k) | tie, 1 - truth, truth)


def _accuracy_width(y, y_pred, k, q=0.2):
    """The library's normal interval (both sources) of the truth accuracy of
    labels that are majorities of ``k`` annotations."""
    q_k = binom.sf(k // 2, k, q) + (0.5 * binom.pmf(k // 2, k, q) if k % 2 == 0 else 0)
    score = expected_accuracy_score(
        y, y_pred, q=q_k, estimand="truth", test_set_sampling=True
    )
    low, high = score.confidence_interval(0.95, method="normal", source="both")
    return high - low


def _check_accuracy(n_replicates, seed, n_pilot=200_000, n_fixed=100_000):
    """Binary truths, a model wrong on 15 %, annotations wrong on 20 %. Test
    samples: a pilot of 200 000 with one annotation, a target of 0.02, then
    fresh test sets of the planned size. Annotations: a fixed set of 100 000,
    a target 30 % of the way from the floor to the pilot's width, then
    re-annotated with ``k`` and ``k − 2`` (the odd count below)."""
    rng = np.random.default_rng(seed)

    def draw(n):
        truth = rng.integers(0, 2, n)
        return truth, np.where(rng.random(n) < 0.15, 1 - truth, truth)

    truth, y_pred = draw(n_pilot)
    plan = plan_sample_size(
        _votes(rng, truth, 1), y_pred, metric="accuracy", q=0.2, target_width=0.02
    )
    n = plan.n_samples_needed
    widths = []
    for _ in range(n_replicates):
        truth, y_pred = draw(n)
        widths.append(_accuracy_width(_votes(rng, truth, 1), y_pred, 1))
    mean, se = np.mean(widths), np.std(widths, ddof=1) / math.sqrt(n_replicates)
    print(f"accuracy: n={n}: mean width {mean:.6f} (SE {se:.6f}) for 0.02")
    assert abs(mean / 0.02 - 1) < 0.03

    truth, y_pred = draw(n_fixed)
    y = _votes(rng, truth, 1)
    now = plan_sample_size(y, y_pred, metric="accuracy", q=0.2, target_width=1.0)
    target = now.width_floor + 0.3 * (now.width - now.width_floor)
    k = plan_sample_size(
        y, y_pred, metric="accuracy", q=0.2, target_width=target
    ).n_readings_needed
    assert k % 2 == 1
    at, below = (
        np.mean(
            [
                _accuracy_width(_votes(rng, truth, m), y_pred, m)
                for _ in range(n_replicates // 5 + 1)
            ]
        )
        for m in (k, k - 2)
    )
    print(f"target {target:.6f}: k={k}: {at:.6f}; k-2: {below:.6f}")
    assert below > 0.97 * target and at < 1.03 * target


def test_accuracy_simulation_small():
    _check_accuracy(3, 15, n_pilot=50_000, n_fixed=30_000)


@pytest.mark.slow
def test_accuracy_simulation():
    _check_accuracy(400, 16)


def test_widths_are_the_library_intervals_and_scale_as_one_over_n():
    rng = np.random.default_rng(11)
    x, mu, s = _population(rng, 400)
    y = mu + s * rng.normal(size=400)
    plan = plan_sample_size(y, x, sigma=s, target_width=0.1)
    score = expected_mean_squared_error(
        y, x, sigma=s, estimand="truth", test_set_sampling=True
    )
    for source, width in (("both", plan.width), ("sampling", plan.width_floor)):
        low, high = score.confidence_interval(0.95, method="normal", source=source)
        assert width == pytest.approx(high - low, rel=1e-12)
    assert plan.label_std == pytest.approx(score.std, rel=1e-12)
    # at the pilot's own width: its own size; half the width: four times it
    again = plan_sample_size(y, x, sigma=s, target_width=plan.width)
    assert again.n_samples_needed == 400
    assert again.n_readings_needed == 1 and again.readings_added == 0
    half = plan_sample_size(y, x, sigma=s, target_width=plan.width / 2)
    assert half.n_samples_needed == 1600


def test_unreachable_by_readings_gives_the_floor():
    rng = np.random.default_rng(12)
    x, mu, s = _population(rng, 300)
    y = mu + s * rng.normal(size=300)
    floor = plan_sample_size(y, x, sigma=s, target_width=1.0).width_floor
    plan = plan_sample_size(y, x, sigma=s, target_width=0.99 * floor)
    assert plan.n_readings_needed is None and plan.readings_added is None
    assert plan.width_floor == pytest.approx(floor)
    assert plan.n_samples_needed > 300
    assert "unreachable" in repr(plan)
    # just above the floor: reachable, with many readings
    plan = plan_sample_size(y, x, sigma=s, target_width=1.01 * floor)
    assert plan.n_readings_needed > 10


def test_accuracy_annotations_match_the_library_at_the_majority_q():
    """The width at k annotations, from the library's truth accuracy with the
    majority vote's q_k (label-free variance) and the pilot's sampling part:
    the plan's k is the least that reaches the target, and never even (a tie
    adds nothing to an odd count)."""
    rng = np.random.default_rng(13)
    n, q = 400, 0.2
    truth = rng.integers(0, 2, n)
    y_pred = np.where(rng.random(n) < 0.15, 1 - truth, truth)
    y = np.where(rng.random(n) < q, 1 - truth, truth)
    pilot = expected_accuracy_score(
        y, y_pred, q=q, estimand="truth", test_set_sampling=True
    )

    def width(k):
        q_k = binom.sf(k // 2, k, q) + (
            0.5 * binom.pmf(k // 2, k, q) if k % 2 == 0 else 0
        )
        score = expected_accuracy_score(y, y_pred, q=q_k, estimand="truth")
        return 2 * norm.ppf(0.975) * math.sqrt(score.variance + pilot.sampling_variance)

    target = 0.5 * (width(3) + width(5))
    plan = plan_sample_size(y, y_pred, metric="accuracy", q=q, target_width=target)
    assert plan.n_readings_needed == 5
    assert plan.readings_added == 4 * n
    assert plan.width == pytest.approx(width(1), rel=1e-9)


def test_power_formula_textbook_case():
    """A difference of half a per-sample SD, α = 0.05, power 0.8: the
    textbook n = (1.96 + 0.8416)²/0.25 = 31.4 -> 32."""
    score = NoisyScore(
        "mean_squared_error_difference", expected=-0.05, variance=0.3 / 100,
        nominal=-0.05, n_samples=100, estimand="truth",
        sampling_variance=0.7 / 100, sampling_method="per_sample_terms",
    )  # fmt: skip
    plan = plan_comparison_size(score, power=0.8)
    # per-sample SD 1, |d| = 0.05: n = (2.8016/0.05)² = 3139.6
    assert plan.n_samples_needed == 3140
    assert plan.power_now == pytest.approx(norm.cdf(0.05 / 0.1 - 1.959964))
    assert plan.power_limit_readings == pytest.approx(
        norm.cdf(0.05 / math.sqrt(0.007) - 1.959964)
    )
    assert plan.n_samples_conservative is None  # the interval holds 0
    big = dataclasses.replace(score, expected=0.5)
    plan = plan_comparison_size(big, power=0.8)
    assert plan.n_samples_needed == 32
    # the interval's end nearer 0: 0.5 − 1.96·0.1
    z, z_power = norm.ppf(0.975), norm.ppf(0.8)
    gap = 0.5 - z * 0.1
    assert plan.n_samples_conservative == math.ceil(((z + z_power) / gap) ** 2)
    # readings at n = 100: 0.003/k + 0.007 <= (d/2.8016)²
    for d, k in ((0.5, 1), (0.25, 4), (0.2, None)):
        plan = plan_comparison_size(
            dataclasses.replace(score, expected=d), power=0.8, n_readings=1
        )
        assert plan.n_readings_needed == k
        assert (plan.power_limit_readings < 0.8) == (k is None)


def test_results_frozen_pickle_and_inputs_untouched():
    rng = np.random.default_rng(14)
    x, mu, s = _population(rng, 50)
    y = mu + s * rng.normal(size=50)
    y_copy, s_copy = y.copy(), s.copy()
    plan = plan_sample_size(y, x, sigma=s, target_width=0.5)
    assert isinstance(plan, SampleSizePlan)
    np.testing.assert_array_equal(y, y_copy)
    np.testing.assert_array_equal(s, s_copy)
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.n_samples_needed = 3
    assert pickle.loads(pickle.dumps(plan)).to_dict() == plan.to_dict()
    d = expected_paired_difference(
        y, x, 1.2 * x, metric="mean_squared_error", sigma=s, test_set_sampling=True
    )
    comparison = plan_comparison_size(d)
    assert isinstance(comparison, ComparisonSizePlan)
    assert pickle.loads(pickle.dumps(comparison)).to_dict() == comparison.to_dict()


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"target_width": 0.0, "sigma": 1.0}, ValueError, "target_width"),
        ({"target_width": "1", "sigma": 1.0}, TypeError, "target_width"),
        ({"target_width": 1.0}, TypeError, "exactly one noise model"),
        ({"target_width": 1.0, "sigma": 1.0, "metric": "r2"}, ValueError, "metric"),
        (
            {"target_width": 1.0, "sigma": 1.0, "confidence_level": 1.0},
            ValueError,
            "confidence_level",
        ),
        (
            {"target_width": 1.0, "sigma": 1.0, "n_readings": 0},
            ValueError,
            "n_readings",
        ),
    ],
)
def test_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        plan_sample_size([1.0, 2.0, 3.0], [1.0, 2.5, 2.0], **kwargs)


def test_errors_of_the_comparison():
    with pytest.raises(ValueError, match="at least 2 samples"):
        plan_sample_size([1.0], [1.0], sigma=1.0, target_width=1.0)
    with pytest.raises(TypeError, match="NoisyScore"):
        plan_comparison_size(0.1)
    d = expected_paired_difference(
        [1.0, 2.0, 3.0], [1.0, 2.5, 2.0], [1.5, 2.0, 3.0],
        metric="mean_squared_error", sigma=0.5, test_set_sampling=False,
    )  # fmt: skip
    with pytest.raises(ValueError, match="test_set_sampling"):
        plan_comparison_size(d)
    d = dataclasses.replace(d, sampling_variance=0.01, sampling_method="delta")
    for power in (0.0, 1.0):
        with pytest.raises(ValueError, match="power"):
            plan_comparison_size(d, power=power)
    with pytest.raises(ValueError, match="n_readings"):
        plan_comparison_size(d, n_readings=0)
    with pytest.raises(TypeError, match="n_readings"):
        plan_comparison_size(d, n_readings=1.5)
    flips = dataclasses.replace(d, metric="accuracy_difference")
    with pytest.raises(ValueError, match="Gaussian"):
        plan_comparison_size(flips, n_readings=1)
