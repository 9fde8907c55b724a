"""expected_cohen_kappa_score: Cohen's kappa through the count engines.

At zero noise it is scikit-learn's ``cohen_kappa_score`` to the last bit
(binary, multiclass, ``weights``, ``labels``, sample weights); its exact binary
moments equal a full enumeration of the flip patterns; its multiclass moments
and paired difference match a seeded Monte Carlo within 5 standard errors; its
truth estimate is unbiased for the kappa of the true labels in an end-to-end
simulation; its scorer runs in ``cross_validate``.
"""

from __future__ import annotations

import itertools
import pickle
import warnings

import numpy as np
import pytest
from sklearn import config_context
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import cohen_kappa_score, confusion_matrix
from sklearn.model_selection import KFold, cross_validate

import sklearn_noisy
from sklearn_noisy.metrics import (
    expected_cohen_kappa_score,
    expected_paired_difference,
    get_metric_info,
    get_noisy_scorer,
    make_noisy_scorer,
)
from sklearn_noisy.metrics._definitions.counts import COUNT_METRICS

KAPPA = expected_cohen_kappa_score
DEFINITION = COUNT_METRICS["cohen_kappa"]
WEIGHTS = (None, "linear", "quadratic")


def _sklearn(y, p, **options):
    with warnings.catch_warnings():  # the undefined cases warn: NaN
        warnings.simplefilter("ignore")
        return cohen_kappa_score(y, p, **options)


def _labels(n, n_classes, seed, agree=0.7):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    p = np.where(rng.random(n) < agree, y, rng.integers(0, n_classes, n))
    return y, p


def _flip(y, q, n_classes, rng, size):
    """``size`` redraws of ``y``: each label to one of the others with ``q``."""
    flip = rng.random((size, y.size)) < q
    shift = rng.integers(1, n_classes, (size, y.size))
    return np.where(flip, (y + shift) % n_classes, y)


def _kappa_rows(observed, p, n_classes, weights=None):
    """scikit-learn's kappa of each row of ``observed`` (the definition's bits)."""
    index = observed * n_classes + p
    cells = np.stack(
        [np.bincount(row, minlength=n_classes**2) for row in index]
    ).reshape(-1, n_classes, n_classes)
    return DEFINITION.value(cells, weights=weights)


def test_registry_export_scorer_and_pickle():
    info = get_metric_info("cohen_kappa")
    assert info.function is KAPPA is sklearn_noisy.expected_cohen_kappa_score
    assert "expected_cohen_kappa_score" in sklearn_noisy.__all__
    assert "expected_cohen_kappa_score" in sklearn_noisy.metrics.__all__
    assert info.sklearn_function is cohen_kappa_score
    assert info.scorer_name == "expected_cohen_kappa"
    assert info.greater_is_better and info.noise == "flips"
    assert info.estimands == ("forward", "truth", "remeasurement")
    assert info.value_range == (-1.0, 1.0)
    assert pickle.loads(pickle.dumps(KAPPA)) is KAPPA
    score = KAPPA([0, 1, 1, 0, 1], [0, 1, 0, 0, 1], q=0.1, estimand="forward")
    assert pickle.loads(pickle.dumps(score)) == score


@pytest.mark.parametrize("n_classes", [2, 3, 5])
@pytest.mark.parametrize("weighted", [False, True])
def test_zero_noise_is_scikit_learn_bit_for_bit(n_classes, weighted):
    y, p = _labels(50, n_classes, seed=n_classes)
    weight = np.random.default_rng(1).uniform(0.2, 3.0, 50) if weighted else None
    labels_options = (
        None,
        list(range(n_classes))[::-1],
        list(range(n_classes + 1)),
        [0, n_classes, *range(1, n_classes)],  # an absent class moves the weights
    )
    for weights, labels in itertools.product(WEIGHTS, labels_options):
        options = {"weights": weights, "labels": labels, "sample_weight": weight}
        reference = _sklearn(y, p, **options)
        for q in (0.0, 0.15):
            score = KAPPA(y, p, q=q, **{"estimand": "forward", **options})
            assert score.nominal == reference  # the same bits
        assert (
            score.nominal
            == KAPPA(y, p, q=0.0, **{"estimand": "forward", **options}).expected
        )
        for estimand in ("truth", "remeasurement"):
            score = KAPPA(y, p, q=0.0, estimand=estimand, **options)
            assert score.expected == pytest.approx(reference, rel=0, abs=1e-12)
            assert score.variance == pytest.approx(0.0, abs=1e-20)


def test_value_is_scikit_learn_on_random_matrices():
    """Stacks of matrices, every weighting: scikit-learn's bits, NaN where undefined."""
    rng = np.random.default_rng(0)
    for k in (2, 3, 4, 9, 12):
        cases = [_labels(int(rng.integers(1, 80)), k, seed=s) for s in range(20)]
        cases.append((np.zeros(5, int), np.zeros(5, int)))  # one class: undefined
        for weights in WEIGHTS:
            cells = np.stack(
                [confusion_matrix(y, p, labels=np.arange(k)) for y, p in cases]
            )
            reference = [
                _sklearn(y, p, weights=weights, labels=np.arange(k)) for y, p in cases
            ]
            np.testing.assert_array_equal(
                DEFINITION.value(cells, weights=weights), reference
            )


def test_undefined_kappa_is_nan_and_bad_options_raise():
    score = KAPPA([1, 1, 1], [1, 1, 1], q=0.0, estimand="forward")
    assert np.isnan(score.nominal) and np.isnan(_sklearn([1, 1, 1], [1, 1, 1]))
    with pytest.raises(ValueError, match="weights must be"):
        KAPPA([0, 1, 1], [0, 1, 0], q=0.1, weights="cubic", estimand="forward")
    with pytest.raises(ValueError, match="weights must be"):
        KAPPA([0, 1, 2], [0, 1, 0], q=0.1, weights=2, estimand="forward")
    with pytest.raises(ValueError, match="not in `labels`"):  # a subset of them
        KAPPA([0, 1, 2, 2], [0, 1, 2, 1], q=0.1, labels=[0, 1], estimand="forward")
    with pytest.raises(TypeError, match="unexpected keyword argument 'adjusted'"):
        KAPPA([0, 1, 1], [0, 1, 0], q=0.1, adjusted=True, estimand="forward")


@pytest.mark.parametrize("zero", [0.0, 1.0])
def test_affine_form_is_the_value(zero):
    """``α(n) + β(n) TP`` equals the value on every binary matrix of M = 7."""
    m = 7
    n = np.arange(m + 1)
    for n_pred_pos in range(m + 1):
        alpha, beta = DEFINITION.affine(n, n_pred_pos, m, zero_division=zero)
        for observed in range(m + 1):
            for tp in range(
                max(0, n_pred_pos + observed - m), 1 + min(n_pred_pos, observed)
            ):
                fp, fn = n_pred_pos - tp, observed - tp
                cells = np.array([[m - tp - fp - fn, fp], [fn, tp]], dtype=float)
                value = float(DEFINITION.value(cells))
                affine = alpha[observed] + beta[observed] * tp
                if np.isnan(value):  # a single class in both
                    assert np.isnan(alpha[observed])
                    assert n_pred_pos == observed and observed in (0, m)
                else:
                    assert affine == pytest.approx(value, abs=1e-12)


def test_delta_and_gradient_are_the_derivatives():
    n_pos, m, t, f, h = 30.0, 100.0, 12.0, 9.0, 1e-3

    def value(t, f):
        return float(DEFINITION.value(np.array([[m - n_pos - f, n_pos - t], [f, t]])))

    v, d_t, d_f, d_tt, d_ff = DEFINITION.delta(t, f, n_pos, m)
    assert v == pytest.approx(value(t, f), rel=1e-12)
    assert d_t == pytest.approx((value(t + h, f) - value(t - h, f)) / (2 * h), rel=1e-6)
    assert d_f == pytest.approx((value(t, f + h) - value(t, f - h)) / (2 * h), rel=1e-6)
    second_t = (value(t + h, f) - 2 * v + value(t - h, f)) / h**2
    second_f = (value(t, f + h) - 2 * v + value(t, f - h)) / h**2
    assert d_tt == pytest.approx(second_t, rel=1e-3, abs=1e-6)
    assert d_ff == pytest.approx(second_f, rel=1e-3, abs=1e-6)
    counts = np.array([[7.0, 2.0, 1.0], [3.0, 6.0, -0.5], [1.0, 2.0, 9.0]])
    for weights in WEIGHTS:
        value_c, gradient = DEFINITION.gradient(counts, weights=weights)
        assert value_c == float(DEFINITION.value(counts, weights=weights))
        numeric = np.empty_like(counts)
        for cell in np.ndindex(counts.shape):
            step = np.zeros_like(counts)
            step[cell] = 1e-6
            up = DEFINITION.value(counts + step, weights=weights)
            down = DEFINITION.value(counts - step, weights=weights)
            numeric[cell] = (up - down) / 2e-6
        np.testing.assert_allclose(gradient, numeric, rtol=0, atol=1e-8)


@pytest.mark.parametrize("case", range(4))
def test_exact_binary_moments_equal_full_enumeration(case):
    """Every flip pattern of M = 9 samples, each with its probability."""
    rng = np.random.default_rng(case)
    m = 9
    y = rng.integers(0, 2, m)
    p = rng.integers(0, 2, m)
    p[:2] = (0, 1)  # both classes predicted: kappa is defined on every pattern
    q = rng.uniform(0.02, 0.4, m) if case % 2 else 0.2
    flips = np.array(list(itertools.product((0, 1), repeat=m)), dtype=bool)
    q_i = np.broadcast_to(q, (m,))
    probability = np.prod(np.where(flips, q_i, 1.0 - q_i), axis=1)
    values = np.array([_sklearn(np.where(f, 1 - y, y), p) for f in flips])
    expected = probability @ values
    variance = probability @ (values - expected) ** 2
    score = KAPPA(y, p, q=q, estimand="forward")
    assert score.method == "exact"
    assert score.expected == pytest.approx(expected, rel=1e-12, abs=1e-14)
    assert score.variance == pytest.approx(variance, rel=1e-12, abs=1e-14)
    # the weighted delta method and the weights options agree with it roughly
    for weights in WEIGHTS:
        assert (
            KAPPA(y, p, q=q, weights=weights, estimand="forward").expected
            == score.expected
        )
    delta = KAPPA(y, p, q=q, method="delta", estimand="forward")
    assert delta.method == "delta" and abs(delta.expected - expected) < 0.5


@pytest.mark.parametrize("weights", WEIGHTS)
def test_multiclass_forward_matches_monte_carlo(weights):
    n, k, q = 80, 4, 0.15
    y, p = _labels(n, k, seed=11)
    score = KAPPA(
        y, p, q=q, weights=weights, n_draws=4000, random_state=5, estimand="forward"
    )
    assert score.method == "monte_carlo"
    draws = _kappa_rows(_flip(y, q, k, np.random.default_rng(7), 40_000), p, k, weights)
    se = np.sqrt(draws.var() / 40_000 + score.variance / 4000)
    assert abs(score.expected - draws.mean()) < 5.0 * se
    np.testing.assert_allclose(score.variance, draws.var(), rtol=0.12)


@pytest.mark.parametrize(
    ("n_classes", "weights"), [(2, None), (3, None), (3, "quadratic")]
)
def test_truth_estimate_is_unbiased_end_to_end(n_classes, weights):
    """Known true classes, fixed predictions, noisy labels drawn from them."""
    n, q, replicates = 300, 0.12, 600
    truth_labels, p = _labels(n, n_classes, seed=21 + n_classes, agree=0.6)
    truth = _sklearn(truth_labels, p, weights=weights)
    rng = np.random.default_rng(99)
    noisy = _flip(truth_labels, q, n_classes, rng, replicates)
    estimates, variances, remeasured = [], [], []
    for observed in noisy:
        options = {"q": q, "weights": weights, "labels": np.arange(n_classes)}
        score = KAPPA(observed, p, estimand="truth", **options)
        estimates.append(score.expected)
        variances.append(score.variance)
        remeasured.append(KAPPA(observed, p, estimand="remeasurement", **options))
    estimates = np.asarray(estimates)
    se = estimates.std() / np.sqrt(replicates)
    assert abs(estimates.mean() - truth) < 4.0 * se
    nominal = np.array([s.nominal for s in remeasured])
    assert truth - nominal.mean() > 10.0 * se  # the flips pull kappa down
    # the delta-method variances match the spreads they describe
    np.testing.assert_allclose(np.mean(variances), estimates.var(), rtol=0.2)
    np.testing.assert_allclose(
        np.mean([s.variance for s in remeasured]), nominal.var(), rtol=0.2
    )
    assert all(s.expected == s.nominal for s in remeasured)


def test_test_set_sampling_and_paired_difference():
    y, p = _labels(60, 2, seed=8)
    other = np.where(np.random.default_rng(2).random(60) < 0.8, y, 1 - y)
    score = KAPPA(y, p, q=0.1, test_set_sampling=True, estimand="forward")
    plain = KAPPA(y, p, q=0.1, estimand="forward")
    assert (score.expected, score.variance) == (plain.expected, plain.variance)
    assert 0.0 < score.sampling_variance < np.inf
    difference = expected_paired_difference(
        y, p, other, metric="cohen_kappa", q=0.1, n_draws=4000, estimand="forward"
    )
    flipped = _flip(y, 0.1, 2, np.random.default_rng(3), 40_000)
    draws = _kappa_rows(flipped, p, 2) - _kappa_rows(flipped, other, 2)
    assert abs(difference.expected - draws.mean()) < 5.0 * difference.standard_error
    assert difference.nominal == pytest.approx(
        _sklearn(y, p) - _sklearn(y, other), rel=1e-12
    )


def test_scorer_in_cross_validate():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 3))
    y = (X[:, 0] + rng.normal(size=120) > 0).astype(int)
    q = np.full(120, 0.1)
    cv = KFold(3)
    plain = cross_validate(
        LogisticRegression(),
        X,
        y,
        cv=cv,
        scoring=make_noisy_scorer("cohen_kappa", q=0.1),
    )["test_score"]
    scorer = get_noisy_scorer("expected_cohen_kappa")
    assert scorer.metric == "cohen_kappa"
    with config_context(enable_metadata_routing=True):
        routed = cross_validate(
            LogisticRegression(), X, y, cv=cv, scoring=scorer, params={"q": q}
        )["test_score"]
    expected = []
    for train, test in cv.split(X):
        model = LogisticRegression().fit(X[train], y[train])
        expected.append(KAPPA(y[test], model.predict(X[test]), q=0.1).expected)
    np.testing.assert_allclose(plain, expected, rtol=1e-12)
    np.testing.assert_allclose(routed, expected, rtol=1e-12)
