"""De-noised confusion counts: the "truth" estimates of the count metrics.

Pinned by scikit-learn at q = 0, a hand-computed case, exact expectations over
every noisy-label outcome of small samples, agreement with the library's
existing unbiased truth estimators, and an end-to-end Monte Carlo with known
true classes.
"""

import itertools

import numpy as np
import pytest
from sklearn import metrics as sk

from sklearn_noisy.metrics import expected_accuracy_score, expected_precision_score
from sklearn_noisy.metrics._definitions.counts import COUNT_METRICS
from sklearn_noisy.metrics._engines.counts.estimands import (
    TRUTH_METRICS,
    denoised_confusion,
    metric_gradient,
    second_order_bias,
    truth_metric,
)
from sklearn_noisy.utils._noise import FlipNoise

T3 = np.array([[0.85, 0.10, 0.05], [0.08, 0.80, 0.12], [0.05, 0.15, 0.80]])

#: (name, average) of every metric and average, for the generic checks.
ALL_METRICS = [
    (name, average)
    for name in TRUTH_METRICS
    for average in (
        ("binary", "micro", "macro", "weighted")
        if name in ("recall", "precision", "f1")
        else ("binary",)
    )
]


def metrics_for(n_classes):
    """The (name, average) pairs defined for ``n_classes`` classes."""
    binary_only = {
        (name, "binary") for name in TRUTH_METRICS if COUNT_METRICS[name].averaged
    }
    return [pair for pair in ALL_METRICS if n_classes == 2 or pair not in binary_only]


def sklearn_value(name, average, y, p, n_classes, weight):
    definition = COUNT_METRICS[name]
    if definition.negative or definition.complement:  # the rates, from the cells
        (tn, fp), (fn, tp) = sk.confusion_matrix(
            y, p, labels=[0, 1], sample_weight=weight
        )
        return {
            "specificity": tn / (tn + fp),
            "negative_predictive_value": tn / (tn + fn),
            "false_positive_rate": fp / (fp + tn),
            "false_negative_rate": fn / (fn + tp),
        }[name]
    if definition.averaged:
        return definition.sklearn_function(
            y,
            p,
            labels=list(range(n_classes)),
            average=average,
            pos_label=1,
            sample_weight=weight,
            zero_division=0,
        )
    return definition.sklearn_function(y, p, sample_weight=weight)


# --------------------------------------------------------------------------- #
# Exact labels, hand-computed case, gradients
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("n_classes", [2, 3, 4])
@pytest.mark.parametrize("weighted", [False, True])
def test_q_zero_is_scikit_learn(n_classes, weighted):
    rng = np.random.default_rng(n_classes)
    y = rng.integers(0, n_classes, 60)
    p = rng.integers(0, n_classes, 60)
    weight = rng.uniform(0.2, 3.0, 60) if weighted else None
    for noise in (
        FlipNoise(0.0, None, n_classes),
        FlipNoise(np.zeros(60), None, n_classes),
        FlipNoise(None, np.eye(n_classes), n_classes),
    ):
        confusion = denoised_confusion(y, p, noise, weight)
        expected = sk.confusion_matrix(
            y, p, labels=list(range(n_classes)), sample_weight=weight
        )
        np.testing.assert_allclose(confusion.counts, expected, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(confusion.cell_variance, 0.0)
        for name, average in metrics_for(n_classes):
            estimate, variance = truth_metric(
                name, confusion, pos_index=1, average=average
            )
            reference = sklearn_value(name, average, y, p, n_classes, weight)
            assert estimate == pytest.approx(reference, rel=0, abs=1e-12), name
            assert variance == 0.0


def test_hand_computed_binary_case():
    # q = 0.1: an observed 1 de-noises to u = 0.9/0.8 = 1.125, a 0 to -0.125.
    observed = np.array([1, 1, 0, 1])
    pred = np.array([1, 1, 0, 0])
    confusion = denoised_confusion(observed, pred, FlipNoise(0.1, None, 2))
    # Column ŷ = 1: samples 0 and 1, rows (1 - u, u) = (-0.125, 1.125) each.
    # Column ŷ = 0: sample 2 (1.125, -0.125) and sample 3 (-0.125, 1.125).
    np.testing.assert_allclose(confusion.counts, [[1.0, -0.25], [1.0, 2.25]])
    v = 0.1 * 0.9 / 0.8**2  # 0.140625, the same for every sample
    np.testing.assert_allclose(confusion.cell_variance, np.full((2, 2), 2 * v))
    # Recall a/(a + b) with a = C[1, 1] = 2.25, b = C[1, 0] = 1: the gradient is
    # b/s² on C[1, 1] and -a/s² on C[1, 0] (s = a + b = 3.25); each column has
    # covariance 2v [[1, -1], [-1, 1]], so Var = 2v (b² + a²)/s⁴.
    estimate, variance = truth_metric("recall", confusion, pos_index=1)
    assert estimate == pytest.approx(2.25 / 3.25, abs=1e-15)
    assert variance == pytest.approx(2 * v * (1.0 + 2.25**2) / 3.25**4, rel=1e-13)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_gradients_match_finite_differences(n_classes):
    rng = np.random.default_rng(5)
    counts = rng.uniform(1.0, 6.0, (n_classes, n_classes))
    counts[0, 1] = -0.5  # de-noised counts can be negative
    h = 1e-6
    for name, average in metrics_for(n_classes):
        _, gradient = metric_gradient(name, counts, pos_index=1, average=average)
        numeric = np.empty_like(counts)
        for cell in np.ndindex(counts.shape):
            step = np.zeros_like(counts)
            step[cell] = h
            up = metric_gradient(name, counts + step, pos_index=1, average=average)
            down = metric_gradient(name, counts - step, pos_index=1, average=average)
            numeric[cell] = (up[0] - down[0]) / (2 * h)
        np.testing.assert_allclose(gradient, numeric, rtol=0, atol=1e-8)


def test_zero_division_gives_its_value_and_no_variance():
    observed = np.array([0, 1, 1, 0])
    pred = np.zeros(4, dtype=int)  # no predicted positive
    confusion = denoised_confusion(observed, pred, FlipNoise(0.2, None, 2))
    for zero_division in (0.0, 1.0):
        estimate, variance = truth_metric(
            "precision", confusion, pos_index=1, zero_division=zero_division
        )
        assert (estimate, variance) == (zero_division, 0.0)


def test_covariance_is_the_sum_over_true_classes_of_second_moments():
    # Σ_k S_j[k] M_k − diag(S_j), M_c = Σ_l T[c, l] T⁻¹[l]ᵀ T⁻¹[l]: the form of
    # the specification, equal to the pair-count form the kernel uses.
    rng = np.random.default_rng(2)
    observed = rng.integers(0, 3, 40)
    pred = rng.integers(0, 3, 40)
    weight = rng.uniform(0.5, 2.0, 40)
    confusion = denoised_confusion(observed, pred, FlipNoise(None, T3, 3), weight)
    inverse = np.linalg.inv(T3)
    second = np.einsum("cl,lk,lm->ckm", T3, inverse, inverse)
    for j in range(3):
        rows = inverse[observed[pred == j]]
        s = (weight[pred == j] ** 2) @ rows
        expected = np.einsum("k,kab->ab", s, second) - np.diag(s)
        np.testing.assert_allclose(confusion.covariance[j], expected, atol=1e-12)


def test_per_sample_and_shared_flips_agree():
    rng = np.random.default_rng(3)
    observed = rng.integers(0, 3, 50)
    pred = rng.integers(0, 3, 50)
    weight = rng.uniform(0.5, 2.0, 50)
    shared = denoised_confusion(observed, pred, FlipNoise(0.2, None, 3), weight)
    per_sample = denoised_confusion(
        observed, pred, FlipNoise(np.full(50, 0.2), None, 3), weight
    )
    np.testing.assert_allclose(per_sample.counts, shared.counts, atol=1e-12)
    np.testing.assert_allclose(per_sample.covariance, shared.covariance, atol=1e-12)


# --------------------------------------------------------------------------- #
# Exact expectations over every noisy-label outcome
# --------------------------------------------------------------------------- #
def enumerate_outcomes(true, noise):
    """Every observed-label vector with its probability (M ≤ 6)."""
    n_classes = noise.n_classes
    outcomes = np.array(list(itertools.product(range(n_classes), repeat=true.size)))
    probability = np.ones(len(outcomes))
    for i, c in enumerate(true):
        if noise.matrix is not None:
            row = noise.matrix[c]
        else:
            q = noise.q if isinstance(noise.q, float) else noise.q[i]
            row = np.full(n_classes, q / (n_classes - 1))
            row[c] = 1.0 - q
        probability *= row[outcomes[:, i]]
    return outcomes, probability


@pytest.mark.parametrize(
    "noise",
    [
        FlipNoise(np.array([0.05, 0.3, 0.12, 0.2, 0.4, 0.01]), None, 2),
        FlipNoise(np.array([0.05, 0.3, 0.12, 0.2, 0.4, 0.01]), None, 3),
        FlipNoise(None, T3, 3),
    ],
    ids=["binary-per-sample-q", "3-class-per-sample-q", "3-class-T"],
)
def test_exact_expectation_over_every_outcome(noise):
    n_classes = noise.n_classes
    true = np.array([0, 1, 1, 2, 0, 2]) % n_classes
    pred = np.array([0, 1, 0, 2, 2, 1]) % n_classes
    weight = np.array([1.0, 0.5, 2.0, 1.5, 1.0, 0.7])
    outcomes, probability = enumerate_outcomes(true, noise)
    np.testing.assert_allclose(probability.sum(), 1.0, rtol=1e-14)
    results = [denoised_confusion(o, pred, noise, weight) for o in outcomes]
    counts = np.array([r.counts for r in results])
    covariance = np.array([r.covariance for r in results])
    mean = np.einsum("n,nkj->kj", probability, counts)
    reference = sk.confusion_matrix(
        true, pred, labels=list(range(n_classes)), sample_weight=weight
    )
    np.testing.assert_allclose(mean, reference, rtol=0, atol=1e-12)
    # The covariance estimate of every column is unbiased for its covariance.
    centred = counts - mean
    exact = np.einsum("n,nkj,nlj->jkl", probability, centred, centred)
    expected = np.einsum("n,njkl->jkl", probability, covariance)
    np.testing.assert_allclose(expected, exact, rtol=0, atol=1e-12)
    # Accuracy and precision are linear with fixed denominators: the estimate
    # is unbiased and the variance estimate unbiased for its exact variance.
    linear = [("accuracy", "binary"), ("precision", "macro"), ("precision", "micro")]
    linear += [("precision", "binary")] if n_classes == 2 else []
    # The reported variance is that estimate floored at the exact, label-free
    # lower bound of the variance: never below it, never below the estimate.
    for name, average in linear:
        options = {"pos_index": 1, "average": average}
        pairs = np.array([truth_metric(name, r, **options) for r in results])
        gradients = [metric_gradient(name, r.counts, **options)[1] for r in results]
        raw = np.array([r.variance(g) for r, g in zip(results, gradients, strict=True)])
        floors = np.array(
            [r.variance_floor(g) for r, g in zip(results, gradients, strict=True)]
        )
        target = metric_gradient(name, reference, **options)[0]
        estimate_mean = probability @ pairs[:, 0]
        exact_variance = probability @ (pairs[:, 0] - estimate_mean) ** 2
        assert estimate_mean == pytest.approx(target, rel=0, abs=1e-12), name
        assert probability @ raw == pytest.approx(exact_variance, rel=0, abs=1e-12), (
            name
        )
        np.testing.assert_array_equal(pairs[:, 1], np.maximum(raw, floors))
        assert np.all(floors <= exact_variance * (1 + 1e-12)), name
        assert np.all(floors > 0), name


# --------------------------------------------------------------------------- #
# Agreement with the existing unbiased truth estimators
# --------------------------------------------------------------------------- #
def small_case(n_classes, seed):
    rng = np.random.default_rng(seed)
    observed = rng.integers(0, n_classes, 80)
    pred = np.where(rng.random(80) < 0.7, observed, rng.integers(0, n_classes, 80))
    return rng, observed, pred


@pytest.mark.parametrize(
    "setting", ["binary-q", "binary-per-sample-q", "3-class-per-sample-q", "3-class-T"]
)
def test_accuracy_agrees_with_expected_accuracy_score(setting):
    n_classes = 2 if setting.startswith("binary") else 3
    rng, observed, pred = small_case(n_classes, 11)
    weight = rng.uniform(0.1, 4.0, observed.size)
    if setting == "3-class-T":
        params = {"transition_matrix": T3}
    elif "per-sample" in setting:
        params = {"q": rng.uniform(0.0, 0.4, observed.size)}
    else:
        params = {"q": 0.15}
    for w in (None, weight):
        score = expected_accuracy_score(
            observed, pred, sample_weight=w, estimand="truth", **params
        )
        noise = FlipNoise.from_params(
            params.get("q"),
            params.get("transition_matrix"),
            n_samples=observed.size,
            n_classes=n_classes,
        )
        confusion = denoised_confusion(observed, pred, noise, w)
        estimate, variance = truth_metric("accuracy", confusion)
        assert estimate == pytest.approx(score.expected, rel=0, abs=1e-12)
        assert variance == pytest.approx(score.variance, rel=0, abs=1e-12)


@pytest.mark.parametrize("per_sample", [False, True])
def test_precision_agrees_with_expected_precision_score(per_sample):
    for seed in range(4):
        rng, observed, pred = small_case(2, seed)
        q = rng.uniform(0.0, 0.45, observed.size) if per_sample else 0.05 * (seed + 1)
        score = expected_precision_score(observed, pred, q=q, estimand="truth")
        confusion = denoised_confusion(observed, pred, FlipNoise(q, None, 2))
        estimate, variance = truth_metric("precision", confusion, pos_index=1)
        assert estimate == pytest.approx(score.expected, rel=0, abs=1e-12)
        assert variance == pytest.approx(score.variance, rel=0, abs=1e-12)


# --------------------------------------------------------------------------- #
# End to end: known true classes, noisy labels drawn from them
# --------------------------------------------------------------------------- #
BINARY_METRICS = [
    ("recall", "binary"),
    ("f1", "binary"),
    ("balanced_accuracy", "binary"),
    ("matthews_corrcoef", "binary"),
    ("specificity", "binary"),
]
MULTICLASS_METRICS = [
    ("recall", "macro"),
    ("f1", "macro"),
    ("f1", "weighted"),
    ("balanced_accuracy", "binary"),
    ("matthews_corrcoef", "binary"),
]


def simulate(n_classes, noise_of, class_share, metrics, *, seed, n_replicates):
    """Bias/SD, reported/empirical SD and 95 % coverage of each metric."""
    rng = np.random.default_rng(seed)
    n_samples = 300
    true = rng.choice(n_classes, n_samples, p=class_share)
    wrong = rng.random(n_samples) < 0.2
    shift = rng.integers(1, n_classes, n_samples)
    pred = np.where(wrong, (true + shift) % n_classes, true)
    noise = noise_of(rng, n_samples)
    reference = sk.confusion_matrix(true, pred, labels=list(range(n_classes)))
    observed = noise.sampler(true, np.arange(n_classes)).draw(rng, n_replicates)
    pairs = np.empty((n_replicates, len(metrics), 2))
    for r in range(n_replicates):
        confusion = denoised_confusion(observed[r], pred, noise)
        for m, (name, average) in enumerate(metrics):
            pairs[r, m] = truth_metric(name, confusion, pos_index=1, average=average)
    table = {}
    for m, (name, average) in enumerate(metrics):
        estimate, variance = pairs[:, m, 0], pairs[:, m, 1]
        target = metric_gradient(name, reference, pos_index=1, average=average)[0]
        spread = estimate.std(ddof=1)
        assert np.all(variance > 0)
        reported = np.sqrt(variance)
        covered = np.abs(estimate - target) <= 1.959964 * reported
        table[name, average] = (
            (estimate.mean() - target) / spread,
            reported.mean() / spread,
            covered.mean(),
        )
    return table


@pytest.mark.parametrize(
    "n_classes, noise_of, class_share, metrics",
    [
        (
            2,
            lambda rng, n: FlipNoise(rng.uniform(0.02, 0.3, n), None, 2),
            [0.6, 0.4],
            BINARY_METRICS,
        ),
        (
            3,
            lambda rng, n: FlipNoise(None, T3, 3),
            [0.4, 0.35, 0.25],
            MULTICLASS_METRICS,
        ),
    ],
    ids=["binary-per-sample-q", "3-class-T"],
)
def test_end_to_end_bias_spread_and_coverage(n_classes, noise_of, class_share, metrics):
    # M = 300, 2000 replicates. Monte Carlo standard errors: 0.022 on bias/SD,
    # 0.5 % on the coverage. The estimators are consistent, not unbiased: the
    # ratio bias of recall grows with small classes (a class of 20 % under T3
    # gives bias/SD 0.10 for macro recall, measured over 20 000 replicates).
    table = simulate(
        n_classes, noise_of, class_share, metrics, seed=1234, n_replicates=2000
    )
    for metric, (bias, sd_ratio, coverage) in table.items():
        assert abs(bias) < 0.1, (metric, bias)
        assert 0.85 < sd_ratio < 1.15, (metric, sd_ratio)
        assert 0.93 <= coverage <= 0.97, (metric, coverage)


# --------------------------------------------------------------------------- #
# Errors
# --------------------------------------------------------------------------- #
def test_singular_noise_raises():
    observed = np.array([0, 1, 1])
    with pytest.raises(ValueError, match="no unbiased estimator"):
        denoised_confusion(observed, observed, FlipNoise(0.5, None, 2))
    with pytest.raises(ValueError, match="invertible"):
        denoised_confusion(observed, observed, FlipNoise(None, np.full((2, 2), 0.5), 2))


def test_invalid_metric_requests_raise():
    counts = np.eye(3)
    with pytest.raises(ValueError, match="name must be one of"):
        metric_gradient("roc_auc", counts)
    with pytest.raises(ValueError, match="pos_index"):
        metric_gradient("recall", counts)
    with pytest.raises(ValueError, match="two classes"):
        metric_gradient("specificity", counts, pos_index=1)
    with pytest.raises(ValueError, match="average must be"):
        metric_gradient("f1", counts, average="samples")


def test_second_order_bias():
    """Zero for the linear metrics; the ratio formula for the binary recall."""
    rng = np.random.default_rng(11)
    y = rng.integers(0, 3, 200)
    p = np.where(rng.random(200) < 0.7, y, rng.integers(0, 3, 200))
    confusion = denoised_confusion(y, p, FlipNoise(None, T3, 3))
    for name, average in (("accuracy", "binary"), ("precision", "macro")):
        bias = second_order_bias(name, confusion, average=average)
        assert bias == pytest.approx(0.0, abs=1e-9)
    assert second_order_bias("recall", confusion, average="macro") != 0.0
    # Binary recall N/D with N = C[1, 1], D = C[1, 0] + C[1, 1]: the bias of
    # N̂/D̂ is (f Var D - Cov(N, D))/D² to second order.
    y2, p2 = y % 2, p % 2
    confusion = denoised_confusion(y2, p2, FlipNoise(0.15, None, 2))
    counts, cov = confusion.counts, confusion.covariance
    numerator, denominator = counts[1, 1], counts[1].sum()
    value = numerator / denominator
    var_d = cov[0, 1, 1] + cov[1, 1, 1]  # C[1, 0] and C[1, 1]: different columns
    cov_nd = cov[1, 1, 1]
    expected = (value * var_d - cov_nd) / denominator**2
    bias = second_order_bias("recall", confusion, pos_index=1)
    assert bias == pytest.approx(expected, rel=1e-6)
