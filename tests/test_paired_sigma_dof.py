"""``sigma_dof`` and ``sigma_shared_dof`` of the paired difference: the moments
unchanged, the truth interval Student's with Welch–Satterthwaite's degrees of
freedom, and an end-to-end simulation with σ estimated from 2–3 readings."""

import dataclasses
import pickle

import numpy as np
import pytest
from scipy.stats import t as student

from sklearn_noisy.metrics import expected_paired_difference

Y = np.array([1.0, 2.0, 3.0, 4.0, 2.5, 0.5])
A = np.array([1.1, 2.1, 2.8, 4.2, 2.4, 0.9])
B = np.array([1.0, 2.3, 3.1, 3.6, 2.4, 0.2])
SIGMA = np.array([0.5, 0.3, 0.4, 0.6, 0.2, 0.5])
DOF = np.array([1.0, 2.0, 1.0, np.inf, 2.0, 1.0])


def _mse(**kwargs):
    return expected_paired_difference(
        Y, A, B, metric="mean_squared_error", sigma=SIGMA, **kwargs
    )


@pytest.mark.parametrize(
    "metric", ["mean_squared_error", "mean_absolute_error", "r2", "accuracy"]
)
def test_the_moments_do_not_change(metric):
    # MSE: A − B subtracts no σ̂²; MAE and R²: forward at the given σ
    noise = {"q": 0.1} if metric == "accuracy" else {"sigma": SIGMA}
    y, a, b = (np.round(v) for v in (Y, A, B)) if metric == "accuracy" else (Y, A, B)
    without = expected_paired_difference(y, a, b, metric=metric, **noise)
    if metric == "accuracy":
        with pytest.raises(TypeError, match="pass q, not sigma_dof"):
            expected_paired_difference(y, a, b, metric=metric, sigma_dof=2.0, **noise)
        return
    with_dof = expected_paired_difference(
        y, a, b, metric=metric, sigma_dof=DOF, **noise
    )
    assert with_dof == without  # every number, bit for bit
    forward = [
        expected_paired_difference(
            y, a, b, metric=metric, estimand="forward", sigma_dof=dof, **noise
        ).confidence_interval()
        for dof in (None, DOF)
    ]
    assert forward[0] == forward[1]  # the forward interval is at the given σ


def test_truth_interval_is_students_with_satterthwaite_dof():
    score = _mse(sigma_dof=DOF, estimand="truth")
    c = 4.0 * SIGMA**2 * (A - B) ** 2 / Y.size**2  # the variance's parts
    assert score.variance == pytest.approx(c.sum(), rel=1e-14)
    nu = c.sum() ** 2 / np.sum(c * c / DOF)
    low, high = score.confidence_interval(0.95)
    half = student.ppf(0.975, nu) * np.sqrt(c.sum())
    assert (low, high) == pytest.approx((score.expected - half, score.expected + half))
    assert score.confidence_interval(0.95).method == "t"
    assert pickle.loads(pickle.dumps(score)).confidence_interval(0.95).method == "t"
    assert nu == pytest.approx(4.8804, abs=1e-4)  # few dof: 1.32 times z's width
    assert (high - low) / (2 * 1.959964 * score.std) == pytest.approx(1.3213, abs=1e-4)
    # σ known everywhere: the normal interval, as without the dof
    known = _mse(sigma_dof=np.inf, estimand="truth")
    assert known.confidence_interval() == _mse(estimand="truth").confidence_interval()


def test_shared_offsets_dof_enters_the_between_batch_part():
    groups = np.array([0, 0, 0, 1, 1, 1])
    shared = dict(groups=groups, sigma_shared=0.4, estimand="truth")
    score = _mse(sigma_dof=3.0, sigma_shared_dof=4.0, **shared)
    assert score == _mse(**shared)
    within = 4.0 * SIGMA**2 * (A - B) ** 2  # MSE: linear in the offset
    between = 0.4**2 * np.bincount(groups, 2.0 * (B - A)) ** 2
    total = within.sum() + between.sum()
    assert score.variance == pytest.approx(total / Y.size**2, rel=1e-12)
    # one τ̂² for both batches (a scalar sigma_shared): one part
    nu = total**2 / (np.sum(within**2) / 3.0 + between.sum() ** 2 / 4.0)
    low, high = score.confidence_interval(0.95)
    half = student.ppf(0.975, nu) * score.std
    assert (low, high) == pytest.approx((score.expected - half, score.expected + half))


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"sigma_dof": 0.0}, ValueError, r"sigma_dof must be positive \(inf: sigma"),
        ({"sigma_dof": [1.0, 2.0]}, ValueError, "sigma_dof must have one entry"),
        ({"sigma_shared_dof": 2.0}, TypeError, "needs sigma_shared and groups"),
        (
            {"sigma_shared_dof": [1.0], "groups": [0] * 6, "sigma_shared": 0.1},
            ValueError,
            "sigma_shared_dof must be one number",
        ),
        ({"sigma_dof": 2.0, "noise": "poisson"}, TypeError, "Pass sigma or noise"),
    ],
)
def test_the_dof_are_validated_as_by_the_single_model_metrics(kwargs, error, match):
    with pytest.raises(error, match=match):
        _mse(**kwargs)


def test_count_labels_take_no_sigma_dof():
    with pytest.raises(TypeError, match="Pass sigma_dof or noise='poisson'"):
        expected_paired_difference(
            [3, 5, 2, 8], [3, 4, 2, 7], [2, 5, 3, 8], metric="mean_squared_error",
            noise="poisson", sigma_dof=2.0,
        )  # fmt: skip


def _coverage(m, differ, reps, seed=1):
    """Two-sided 95 % misses (below, above) of the truth MSE difference, with σ
    from 2–3 readings per label, without and with ``sigma_dof``."""
    rng = np.random.default_rng(seed)
    mu = 2.0 * rng.standard_normal(m)
    s = 0.3 + 0.4 * rng.random(m)  # the SD of one reading
    n = rng.integers(2, 4, m)  # 2 or 3 readings
    a = mu + 0.3 * rng.standard_normal(m)
    b = a + 0.3 * rng.standard_normal(m)
    if differ < m:  # the models agree on the other samples
        keep = rng.permutation(m)[differ:]
        b[keep] = a[keep]
    target = np.mean((mu - a) ** 2) - np.mean((mu - b) ** 2)
    misses = np.zeros((2, 2))
    mask = np.arange(3) < n[:, None]
    rng = np.random.default_rng(seed + 100)
    for _ in range(reps):
        readings = mu[:, None] + s[:, None] * rng.standard_normal((m, 3))
        y = (readings * mask).sum(1) / n
        var = ((readings - y[:, None]) ** 2 * mask).sum(1) / (n - 1)
        for row, dof in enumerate((None, n - 1.0)):
            score = expected_paired_difference(
                y, a, b, metric="mean_squared_error", sigma=np.sqrt(var / n),
                sigma_dof=dof, estimand="truth", test_set_sampling=False,
            )  # fmt: skip
            low, high = score.confidence_interval(0.95)
            misses[row] += (target < low, target > high)
    return misses / reps


def test_estimated_sigma_coverage_seeded():
    # 30 samples, 3000 replicates (about 1 s): without the dof 91.3 %
    misses = _coverage(30, 30, 3000)
    np.testing.assert_allclose(misses, [[0.0453, 0.0417], [0.0283, 0.0253]], atol=5e-5)
    assert 1.0 - misses[0].sum() < 0.93 <= 1.0 - misses[1].sum() <= 0.97


@pytest.mark.slow
@pytest.mark.parametrize(
    "m, differ, without, with_dof",
    [(100, 100, 0.9430, 0.9555), (30, 30, 0.9165, 0.9480), (100, 6, 0.8772, 0.9720)],
)
def test_estimated_sigma_coverage_full(m, differ, without, with_dof):
    misses = _coverage(m, differ, 4000)  # SE of a coverage: 0.0035
    coverage = 1.0 - misses.sum(axis=1)
    assert coverage == pytest.approx([without, with_dof], abs=1e-4)  # as measured
    assert 0.93 <= coverage[1] <= (0.975 if differ < m else 0.97)
    assert misses[1].max() <= 0.035
    assert coverage[0] < 0.945  # without the dof, too short


@pytest.mark.slow
def test_estimated_sigma_shared_coverage_full():
    # 4 batches of 25, τ̂² with 3 dof (2000 replicates, about 1 min)
    rng = np.random.default_rng(3)
    groups = np.repeat(np.arange(4), 25)
    mu = 2.0 * rng.standard_normal(100)
    a = mu + 0.3 * rng.standard_normal(100)
    b = a + 0.3 * rng.standard_normal(100) + 0.2  # B shifted: the offsets matter
    target = np.mean((mu - a) ** 2) - np.mean((mu - b) ** 2)
    misses = np.zeros((2, 2))
    for _ in range(2000):
        y = mu + 0.3 * rng.standard_normal(4)[groups] + 0.3 * rng.standard_normal(100)
        tau = 0.3 * np.sqrt(rng.chisquare(3) / 3)
        for row, dof in enumerate((None, 3.0)):
            score = expected_paired_difference(
                y, a, b, metric="mean_squared_error", sigma=0.3, groups=groups,
                sigma_shared=tau, sigma_shared_dof=dof, estimand="truth",
                test_set_sampling=False,
            )  # fmt: skip
            low, high = score.confidence_interval(0.95)
            misses[row] += (target < low, target > high)
    coverage = 1.0 - misses.sum(axis=1) / 2000
    print(coverage, misses / 2000)
    assert coverage[0] < 0.92 and 0.93 <= coverage[1] <= 0.97
    assert misses[1].max() / 2000 <= 0.035


def test_both_sources_dof_take_the_batches_part_not_sigmas():
    # with batches and tau-hat^2 on 4 dof, the interval with test-set sampling
    # takes Welch–Satterthwaite's dof over the sampling part and the label part,
    # whose estimated part outside the per-sample terms is the batches' one
    y = np.array([0.7, 1.6, 0.7, -2.6, 1.8, 0.9, -1.1, 1.2, 0.7, 0.6, 0.1, 1.1])
    a = np.array([0.3, 1.5, 0.5, -2.3, 1.8, 0.8, -1.5, 1.1, 0.7, 0.5, 0.7, 1.6])
    b = np.array([-1.5, 0.1, 0.6, -2.9, 2.0, 1.1, 0.6, 0.3, 0.4, 2.2, 0.6, 1.6])
    groups = np.repeat(np.arange(3), 4)
    shared = dict(groups=groups, sigma_shared=0.3, estimand="truth")
    score = expected_paired_difference(
        y, a, b, metric="mean_squared_error", sigma=0.3, sigma_dof=2.0,
        sigma_shared_dof=4.0, **shared,
    )  # fmt: skip
    within = 4.0 * 0.3**2 * (a - b) ** 2
    between = 0.3**2 * np.bincount(groups, 2.0 * (b - a)) ** 2
    label = (within.sum() + between.sum()) / y.size**2
    assert score.variance == pytest.approx(label, rel=1e-12)
    sampling, nu_s = score.sampling_variance, score.sampling_dof
    assert sampling > score.variance > 0.0
    # sigma_dof does not enter: only the one between-batch part, on 4 dof;
    # the sampling part is the terms' variance less the within part, so its
    # dof are the terms' scaled by (S / V_terms)² (Satterthwaite)
    nu_label = label**2 / ((between.sum() / y.size**2) ** 2 / 4.0)
    total = label + sampling
    nu = total**2 / (sampling**2 / nu_s + label**2 / nu_label)
    assert nu == pytest.approx(11.4779, abs=1e-4)
    half = student.ppf(0.975, nu) * np.sqrt(total)
    t = score.confidence_interval(0.95, source="both", method="t")
    assert (t.low, t.high) == pytest.approx(
        (score.expected - half, score.expected + half)
    )
    # auto: the bootstrap-t widened by t(ν)/t(ν with the label part known)
    known = nu_s * (total / sampling) ** 2
    auto = score.confidence_interval(0.95, source="both")
    plain = dataclasses.replace(score, label_pivot=None).confidence_interval(
        0.95, source="both"
    )
    assert (auto.method, plain.method) == ("bootstrap_t_welch", "bootstrap_t")
    copy = pickle.loads(pickle.dumps(score))
    assert copy.confidence_interval(0.95, source="both") == auto
    widen = student.ppf(0.975, nu) / student.ppf(0.975, known)
    assert widen == pytest.approx(1.0150, abs=1e-4)
    assert score.expected - auto.low == pytest.approx(
        widen * (score.expected - plain.low), rel=1e-12
    )
    assert auto.high - score.expected == pytest.approx(
        widen * (plain.high - score.expected), rel=1e-12
    )
    # tau known, or sigma's dof alone: the interval is that of known labels
    # (sigma-hat^2 cancels from the difference and from its total variance)
    for kwargs in ({"sigma_dof": 2.0}, {}):
        alone = expected_paired_difference(
            y, a, b, metric="mean_squared_error", sigma=0.3, **kwargs, **shared
        )
        assert alone.confidence_interval(0.95, source="both") == plain
    negated = expected_paired_difference(
        y, b, a, metric="mean_squared_error", sigma=0.3, sigma_shared_dof=4.0,
        **shared,
    ).confidence_interval(0.95, source="both", method="t")  # fmt: skip
    assert (-negated.high, -negated.low) == pytest.approx((t.low, t.high))
    # the prediction interval: the same rule, the sampling part counted twice
    pred = score.prediction_interval(0.95)
    both = label + 2.0 * sampling
    nu = both**2 / ((2.0 * sampling) ** 2 / nu_s + label**2 / nu_label)
    half = student.ppf(0.975, nu) * np.sqrt(both)
    assert (pred.low, pred.high) == pytest.approx(
        (score.expected - half, score.expected + half)
    )


def _both_coverage(m, n_batches, reps, readings=True, seed=5):
    """Misses (below, above) of the population's truth MSE difference (−0.13)
    by the 95 % interval with test-set sampling, as before (the label part
    known) and now, in the whole experiment: ``m`` samples drawn in
    ``n_batches`` batches (offsets of SD 0.3, τ̂² on 3 dof), σ from 2–3
    readings (``readings``) or known, 0.3."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n_batches), m // n_batches)
    misses = np.zeros((2, 2))
    for _ in range(reps):
        mu = 2.0 * rng.standard_normal(m)
        a = mu + 0.3 * rng.standard_normal(m)
        b = a + 0.3 * rng.standard_normal(m) + 0.2
        if readings:
            s = 0.3 + 0.4 * rng.random(m)  # the SD of one reading
            n = rng.integers(2, 4, m)  # 2 or 3 readings
            mask = np.arange(3) < n[:, None]
        offsets = 0.3 * rng.standard_normal(n_batches)[groups]
        if readings:
            values = (mu + offsets)[:, None] + s[:, None] * rng.standard_normal((m, 3))
            y = (values * mask).sum(1) / n
            var = ((values - y[:, None]) ** 2 * mask).sum(1) / (n - 1)
            sigma = dict(sigma=np.sqrt(var / n), sigma_dof=n - 1.0)
        else:
            y, sigma = mu + offsets + 0.3 * rng.standard_normal(m), dict(sigma=0.3)
        score = expected_paired_difference(
            y, a, b, metric="mean_squared_error", groups=groups,
            sigma_shared=0.3 * np.sqrt(rng.chisquare(3) / 3), sigma_shared_dof=3.0,
            estimand="truth", **sigma,
        )  # fmt: skip
        before = dataclasses.replace(score, label_pivot=None)
        for row, result in enumerate((before, score)):
            low, high = result.confidence_interval(0.95, source="both")
            misses[row] += (-0.13 < low, -0.13 > high)
    return misses / reps


def test_both_sources_coverage_seeded():
    # 3 batches of 10, σ from readings, 60 replicates (about 2 s)
    misses = _both_coverage(30, 3, 60) * 60
    np.testing.assert_array_equal(misses, [[4, 1], [1, 1]])  # as measured
    assert misses[1].sum() < misses[0].sum()


@pytest.mark.slow
@pytest.mark.parametrize(
    "m, n_batches, readings, before, after, tail",
    [
        (100, 4, True, 0.9185, 0.9445, 0.035),
        (30, 3, True, 0.9245, 0.9495, 0.035),
        (100, 4, False, 0.8995, 0.9360, 0.035),
        # the bootstrap-t of 30 samples: 4.05 % below with τ known too (3.85 %
        # before a sampling variance of 0 gave the label-noise interval)
        (30, 3, False, 0.9110, 0.9370, 0.0405),
    ],
)
def test_both_sources_coverage_full(m, n_batches, readings, before, after, tail):
    # 2000 replicates (SE of a coverage 0.005), 25-80 s each
    misses = _both_coverage(m, n_batches, 2000, readings)
    coverage = 1.0 - misses.sum(axis=1)
    assert coverage == pytest.approx([before, after], abs=1e-4)  # as measured
    assert 0.93 <= coverage[1] <= 0.97 and misses[1].max() <= tail
    assert coverage[0] < 0.93  # the label part taken as known: too short
