"""R²'s skewed interval: ``1 − R²`` on the log scale (``"log_complement"``)."""

import math
import pickle

import numpy as np
import pytest
from _interval_coverage import Task, run_task
from scipy import stats

from sklearn_noisy import NoisyScore
from sklearn_noisy._noisy_score import PIVOT_PROBABILITIES
from sklearn_noisy.metrics import expected_r2_score

#: The heavy-tailed population of the coverage grid, truth R², n = 100, label
#: noise only: the symmetric interval missed 4.35 % below at this seed (4.45 %
#: at 2000 replicates of seed 1, 4.10 % at seed 2); the log scale 2.05 % below,
#: 2.90 % above (user guide: verification, "Coverage in each tail"); with its
#: Cornish–Fisher quantiles 2.6 % and 2.8 % (Gaussian population: 2.5 % and
#: 3.8 % on the log scale, 2.9 % and 2.8 % with them).
REPLICATES = 4000


@pytest.mark.parametrize("population", ["heavy", "gaussian"])
def test_truth_r2_interval_holds_its_lower_tail(population):
    task = Task(population, 100, "r2", "truth", REPLICATES, 0, 400, 1, math.inf, True)
    rows, notes, _ = run_task(task)
    assert not notes, notes
    row = next(row for row in rows if row["source"] == "label_noise")
    assert row["replicates"] == REPLICATES
    se_coverage = math.sqrt(0.95 * 0.05 / REPLICATES)
    se_tail = math.sqrt(0.025 * 0.975 / REPLICATES)
    assert abs(row["coverage"] - 0.95) <= 5 * se_coverage, row
    assert row["below"] <= 0.025 + 5 * se_tail, row
    assert row["above"] <= 0.025 + 5 * se_tail, row


def _score(expected, **kwargs):
    return NoisyScore(
        "r2", expected=expected, variance=0.0004, nominal=expected, n_samples=100,
        **{"estimand": "truth", **kwargs},
    )  # fmt: skip


def test_log_complement_is_wider_below_and_one_sided():
    score = _score(0.8)
    low, high = two = score.confidence_interval(0.95)
    assert two.method == "log_complement"
    # log-symmetric around 1 - R² = 0.2: (1 - low)(1 - high) = 0.2², and the
    # lower end further from the estimate than the upper one
    assert (1 - low) * (1 - high) == pytest.approx(0.04, rel=1e-12)
    assert 0.8 - low > high - 0.8 > 0.0
    ninety = score.confidence_interval(0.90)
    less = score.confidence_interval(0.95, alternative="less")
    greater = score.confidence_interval(0.95, alternative="greater")
    assert less == (-math.inf, ninety.high) and less.method == "log_complement"
    assert greater == (ninety.low, 1.0) and greater.method == "log_complement"


def test_near_or_beyond_one_stays_unified():
    # within 2z SDs of 1, or a truth estimate above 1: the unified interval
    for expected in (0.97, 1.01):
        interval = _score(expected).confidence_interval(0.95)
        assert interval.method == "unified" and interval.high <= 1.0
        assert interval.low < min(expected, 1.0)


def test_forward_label_noise_and_other_metrics_keep_their_interval():
    assert _score(0.8, estimand="forward").confidence_interval(0.95).method == "normal"
    score = NoisyScore(
        "explained_variance", expected=0.8, variance=0.0004, nominal=0.8,
        n_samples=100, estimand="truth",
    )  # fmt: skip
    assert score.confidence_interval(0.95).method == "normal"


def test_truth_r2_pivot_has_the_label_noise_skew_of_its_log_expansion():
    # the skewness the Cornish–Fisher quantiles hold, γ = 3 (q₀.₉₇₅ + q₀.₀₂₅) /
    # (z² − 1), averaged over 200 noisy test sets, against that of the first-
    # order expansion (Â − A)/A − (B̂ − B)/B of log(Â/B̂) over 20000 of them
    rng = np.random.default_rng(3)
    x = rng.standard_normal(100)
    exact, pred = x + 0.3 + 0.3 * x**2, x
    sigma = 0.3 + 0.2 * np.abs(x)
    draws = exact + sigma * rng.standard_normal((20000, 100))
    a = np.sum((draws - pred) ** 2 - sigma**2, axis=1)
    b = np.sum((draws - draws.mean(axis=1, keepdims=True)) ** 2, axis=1)
    b -= np.sum(sigma**2) * (1.0 - 1.0 / 100)
    observed = stats.skew(
        a / np.sum((exact - pred) ** 2) - b / np.sum((exact - exact.mean()) ** 2)
    )
    grid, z = list(PIVOT_PROBABILITIES), 1.959963984540054
    skews = []
    for y in draws[:200]:
        score = expected_r2_score(y, pred, sigma=sigma, estimand="truth")
        q = score.label_pivot
        skews.append(3.0 * (q[grid.index(0.975)] + q[grid.index(0.025)]) / (z * z - 1))
    se = math.hypot(np.std(skews) / math.sqrt(200), math.sqrt(6.0 / 20000))
    assert abs(np.mean(skews) - observed) < 5.0 * se, (np.mean(skews), observed, se)


def test_interval_with_both_sources_is_a_bootstrap_t_of_log_one_minus_r2():
    # the heavy-tailed design: 999 resamples (seed 0) of log(Σa/Σb), a = r²,
    # b = (y − ȳ)², each studentized by the SD of a/Ā − b/B̄, taken onto
    # 1 − R² = u·exp(c·x) with c the interval's SD over u (user guide:
    # error_budget, "Intervals with both sources")
    rng = np.random.default_rng(5)
    x = rng.standard_normal(100)
    y = x + 0.3 + 0.3 * x**2 + (0.3 + 0.2 * np.abs(x)) * rng.standard_normal(100)
    sigma = 0.3 + 0.2 * np.abs(x)
    score = expected_r2_score(
        y, x, sigma=sigma, estimand="remeasurement", test_set_sampling=True
    )
    a, b = (y - x) ** 2, (y - y.mean()) ** 2
    index = np.random.default_rng(0).integers(0, 100, (999, 100))
    theta = np.log(a[index].mean(axis=1) / b[index].mean(axis=1))
    terms = a[index] / a[index].mean(axis=1, keepdims=True)
    terms -= b[index] / b[index].mean(axis=1, keepdims=True)
    se = np.sqrt(np.sum(terms**2, axis=1) / 99.0 / 100.0)
    pivot = np.quantile((np.log(a.mean() / b.mean()) - theta) / se, [0.025, 0.975])
    # each widened by Student's t/z at the terms' Satterthwaite dof 2n/(κ − 1),
    # the upper end of 1 − R² at ν·min((V_L + 2 V_S)/(2 V_tot), 1)² and at a
    # sampling part of at least V_tot·√(2/ν)/2
    h = a / a.mean() - b / b.mean()
    h -= h.mean()
    nu = 200.0 / (np.mean(h**4) / np.mean(h**2) ** 2 - 1.0)
    total = score.total_variance  # V_tot: the sampling part is positive here
    assert score.sampling_variance > 0.0
    low_nu = nu * min((total + score.sampling_variance) / (2.0 * total), 1.0) ** 2
    floor = max(score.sampling_variance, total * np.sqrt(0.5 / nu))
    z = stats.norm.ppf(0.975)
    pivot *= [
        stats.t.ppf(0.975, nu) / z,
        stats.t.ppf(0.975, low_nu) / z * np.sqrt((score.variance + floor) / total),
    ]
    assert low_nu < nu < 30.0
    u = 1.0 - score.expected
    c = score.total_std / u
    interval = score.confidence_interval(0.95, source="both")
    assert interval.method == "log_bootstrap_t"
    expected = 1.0 - u * np.exp(c * pivot[::-1])
    np.testing.assert_allclose(interval, expected, rtol=1e-12)
    assert score.expected - interval.low > interval.high - score.expected > 0.0
    # unit weights take the weighted route to the same pivot; a pickle keeps it
    weighted = expected_r2_score(
        y, x, sigma=sigma, estimand="remeasurement", test_set_sampling=True,
        sample_weight=np.ones(100),
    )  # fmt: skip
    again = pickle.loads(pickle.dumps(weighted)).confidence_interval(
        0.95, source="both"
    )
    assert again.method == "log_bootstrap_t"
    np.testing.assert_allclose(again, interval, rtol=1e-12)


@pytest.mark.parametrize("estimand", ["truth", "remeasurement"])
def test_both_sources_without_a_sampling_part_keep_the_bootstrap_t(estimand):
    # a test set whose terms spread less than the label noise alone: its
    # sampling variance is 0, and the interval with both sources keeps the
    # widened bootstrap-t at the label-noise SD, 1 − u·exp(c·x) (the Gaussian
    # design, seed 1); the label-noise interval alone made the heavy-tailed
    # truth's miss 21 % below in such test sets (a fifth of them)
    rng = np.random.default_rng(1)
    x = rng.standard_normal(100)
    sigma = 0.2 + 0.3 * np.abs(x)
    y = 1.5 * x + 0.3 + sigma * rng.standard_normal(100)
    score = expected_r2_score(
        y, x, sigma=sigma, estimand=estimand, test_set_sampling=True
    )
    assert score.sampling_variance == 0.0
    u = 1.0 - score.expected
    c = score.std / u
    for level in (0.95, 0.9):
        both = score.confidence_interval(level, source="both")
        assert both.method == "log_bootstrap_t"
        tail = (1.0 - level) / 2.0
        q = np.interp([tail, 1.0 - tail], PIVOT_PROBABILITIES, score.sampling_pivot)
        x_ends = np.log1p(c * q) / c  # R²'s scale: the ends are R̂² − SD·q
        np.testing.assert_allclose(both, 1.0 - u * np.exp(c * x_ends[::-1]), rtol=1e-9)


def test_prediction_interval_takes_the_log_scale_from_one_and_a_half_t_sds():
    # u = 1 − R² = 0.1 with the prediction SD 0.03 (label 0.0004 + 2 × 0.00025,
    # Student's t for sampling_dof 30 × (0.0009/0.0005)²): u lies 1.67 t SDs
    # from 1, inside the confidence interval's unified region (2t) but on the
    # log scale for a new test set, whose R² cannot pass 1
    score = _score(
        0.9, sampling_variance=0.00025, sampling_method="delta", sampling_dof=30.0
    )
    t = stats.t.ppf(0.975, 30.0 * (0.0009 / 0.0005) ** 2)
    interval = score.prediction_interval(0.95)
    assert interval.method == "log_complement"
    expected = 1.0 - 0.1 * np.exp([t * 0.3, -t * 0.3])
    np.testing.assert_allclose(interval, expected, rtol=1e-12)
    assert 1.5 * t * 0.03 < 0.1 < 2.0 * t * 0.03  # (the design: between the two)


def _k2(y, pred, sigma):
    """The unbiased first-order ``Var log(X/Y)`` of the remeasurement R²."""
    x, total = np.sum((y - pred) ** 2), np.sum((y - y.mean()) ** 2)
    v = (y - pred) / x - (y - y.mean()) / total
    return np.sum(4 * sigma**2 * v**2) - 2 * (1 / x - 1 / total) ** 2 * np.sum(sigma**4)


def test_remeasurement_pivot_is_student_at_the_dof_of_its_variance_estimate():
    # the Gaussian design: the pivot of log(X/Y) is Student's quantiles at
    # 2k²/Var k̂₂ (k the reported variance over u², Var k̂₂ = Σ σ_j² (∂k̂₂/∂y_j)²,
    # here by central differences) less √k/2, the log's bias
    rng = np.random.default_rng(7)
    x = rng.standard_normal(100)
    sigma = 0.2 + 0.3 * np.abs(x)
    y = 1.5 * x + 0.3 + sigma * rng.standard_normal(100)
    score = expected_r2_score(y, x, sigma=sigma, estimand="remeasurement")
    step = 1e-5
    grad = [
        (_k2(y + step * e, x, sigma) - _k2(y - step * e, x, sigma)) / (2 * step)
        for e in np.eye(100)
    ]
    k = score.variance / (1.0 - score.expected) ** 2
    dof = 2.0 * k * k / np.sum(sigma**2 * np.square(grad))
    expected = stats.t.ppf(PIVOT_PROBABILITIES, dof) - math.sqrt(k) / 2.0
    np.testing.assert_allclose(score.label_pivot, expected, rtol=1e-6)
    interval = score.confidence_interval(0.95)
    assert interval.method == "log_t"
    q = np.interp([0.025, 0.975], PIVOT_PROBABILITIES, expected)
    u = 1.0 - score.expected
    ends = 1.0 - u * np.exp(-score.std / u * q)
    np.testing.assert_allclose(interval, ends, rtol=1e-12)
    # weights of 1 give the same pivot
    again = expected_r2_score(
        y, x, sigma=sigma, estimand="remeasurement", sample_weight=np.ones(100)
    )
    np.testing.assert_allclose(again.label_pivot, score.label_pivot, rtol=1e-9)
    # the prediction interval's Student quantile counts that dof for the two
    # label parts (Welch–Satterthwaite with the sampling part's)
    sampled = expected_r2_score(
        y, x, sigma=sigma, estimand="remeasurement", test_set_sampling=True
    )
    label, sampling = 2.0 * sampled.variance, 2.0 * sampled.sampling_variance
    welch = (label + sampling) ** 2 / (
        sampling**2 / sampled.sampling_dof + label**2 / dof
    )
    half = stats.t.ppf(0.975, welch) * math.sqrt(label + sampling) / u
    expected = 1.0 - u * np.exp([half, -half])
    np.testing.assert_allclose(sampled.prediction_interval(0.95), expected, rtol=1e-9)


def test_remeasurement_r2_interval_holds_each_tail():
    # the Gaussian population of the coverage grid, label noise only (seed 1,
    # 1000 replicates; at 2000: 95.9 %, 1.35 / 2.8 % below / above; seed 0,
    # 95.2 %, 2.2 / 2.6): the symmetric log_complement interval missed 3.45 %
    # below at seed 0, 2000 replicates
    task = Task("gaussian", 100, "r2", "remeasurement", 1000, 0, 400, 1, math.inf, True)
    rows, notes, _ = run_task(task)
    assert not notes, notes
    row = next(row for row in rows if row["source"] == "label_noise")
    se_coverage = math.sqrt(0.95 * 0.05 / 1000)
    se_tail = math.sqrt(0.025 * 0.975 / 1000)
    assert abs(row["coverage"] - 0.95) <= 5 * se_coverage, row
    assert row["below"] <= 0.025 + 5 * se_tail, row
    assert row["above"] <= 0.025 + 5 * se_tail, row
