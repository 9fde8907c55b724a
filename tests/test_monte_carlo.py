"""Tests of the Monte Carlo engine :func:`sklearn_noisy.metrics.monte_carlo_score`."""

import functools
import json
import pickle
import tracemalloc

import numpy as np
import pytest
from sklearn.metrics import (
    accuracy_score,
    log_loss,
    mean_absolute_error,
    mean_squared_error,
    r2_score,
)

import sklearn_noisy
from sklearn_noisy import MonteCarloScore, NoisyScore, monte_carlo_score
from sklearn_noisy.metrics import (
    expected_mean_absolute_error,
    expected_mean_squared_error,
)


def _regression_setting(n_samples, seed=0):
    rng = np.random.default_rng(seed)
    y_true = rng.normal(0.0, 3.0, n_samples)
    y_pred = y_true + rng.normal(0.0, 1.0, n_samples)
    sigma = rng.uniform(0.2, 2.0, n_samples)
    sigma[::4] = 0.0
    return y_true, y_pred, sigma


# Plain-numpy metrics for the agreement tests: the same numbers as scikit-learn's,
# without its per-call validation cost (thousands of draws per test).
def _mse(y, y_pred):
    return np.mean((y - y_pred) ** 2)


def _mae(y, y_pred):
    return np.mean(np.abs(y - y_pred))


def _accuracy(y, y_pred):
    return np.mean(y == y_pred)


def _assert_agrees(mc, expected, variance, n_se=5.0):
    """Exact (expected, variance) within ``n_se`` MC standard errors of ``mc``."""
    z_mean = (mc.expected - expected) / mc.standard_error
    z_var = (mc.variance - variance) / mc.variance_standard_error
    assert abs(z_mean) < n_se, (mc.expected, expected, z_mean)
    assert abs(z_var) < n_se, (mc.variance, variance, z_var)


# --- public API and the result object -------------------------------------------


def test_public_names():
    assert sklearn_noisy.monte_carlo_score is monte_carlo_score
    assert sklearn_noisy.metrics.MonteCarloScore is MonteCarloScore
    assert "monte_carlo_score" in sklearn_noisy.__all__
    assert "MonteCarloScore" in sklearn_noisy.metrics.__all__


def test_result_fields_and_standard_errors():
    y_true, y_pred, sigma = _regression_setting(20)
    score = monte_carlo_score(
        mean_squared_error, y_true, y_pred, sigma=sigma, n_draws=300, random_state=3
    )
    assert isinstance(score, MonteCarloScore)
    assert isinstance(score, NoisyScore)
    assert score.method == "monte_carlo"
    assert score.metric == "mean_squared_error"
    assert score.n_samples == 20
    assert score.n_draws == 300
    draws = score.draws
    assert draws.shape == (300,)
    assert not draws.flags.writeable
    assert score.expected == pytest.approx(np.mean(draws), rel=1e-14)
    assert score.variance == pytest.approx(np.var(draws, ddof=1), rel=1e-12)
    assert score.standard_error == pytest.approx(np.sqrt(score.variance / 300))
    m4 = np.mean((draws - draws.mean()) ** 4)
    assert score.variance_standard_error == pytest.approx(
        np.sqrt((m4 - score.variance**2) / 300), rel=1e-10
    )
    assert score.nominal == pytest.approx(mean_squared_error(y_true, y_pred), 1e-15)


def test_result_repr_pickle_frozen_and_dict():
    score = monte_carlo_score(
        mean_absolute_error,
        [1.0, 2.0, 4.0],
        [1.5, 2.0, 3.0],
        sigma=0.3,
        n_draws=50,
        random_state=0,
    )
    text = repr(score)
    assert text.startswith("MonteCarloScore(metric='mean_absolute_error'")
    assert "n_draws=50" in text
    assert "draws=" not in text.replace("n_draws=", "")
    assert len(text) < 200
    clone = pickle.loads(pickle.dumps(score))
    assert clone == score
    np.testing.assert_array_equal(clone.draws, score.draws)
    assert clone.n_draws == 50 and clone.standard_error == score.standard_error
    with pytest.raises(AttributeError):
        score.expected = 0.0
    with pytest.raises(AttributeError):
        score.draws = None
    data = json.loads(json.dumps(score.to_dict()))
    assert data["n_draws"] == 50
    assert data["method"] == "monte_carlo"
    assert data["variance_standard_error"] == score.variance_standard_error
    assert "draws" not in data
    assert float(score) == score.expected


@pytest.mark.parametrize(
    "metric, name",
    [
        (mean_squared_error, "mean_squared_error"),
        (r2_score, "r2"),
        (lambda a, b: mean_squared_error(a, b), "custom"),
        (functools.partial(mean_squared_error), "custom"),
    ],
)
def test_metric_name(metric, name):
    score = monte_carlo_score(
        metric, [1.0, 2.0, 3.0], [1.0, 2.5, 2.0], sigma=0.1, n_draws=5, random_state=0
    )
    assert score.metric == name


def test_metric_returning_noisy_score_uses_expected():
    def metric(a, b):
        return expected_mean_squared_error(a, b, sigma=0.0, estimand="forward")

    score = monte_carlo_score(
        metric, [1.0, 2.0], [0.0, 0.0], sigma=0.5, n_draws=20, random_state=1
    )
    plain = monte_carlo_score(
        mean_squared_error,
        [1.0, 2.0],
        [0.0, 0.0],
        sigma=0.5,
        n_draws=20,
        random_state=1,
    )
    np.testing.assert_allclose(score.draws, plain.draws, rtol=1e-14)


# --- reproducibility and batching ----------------------------------------------


def _draw_cases():
    y_true, y_pred, sigma = _regression_setting(37)
    binary = np.array([0, 1, 1, 0, 1, 0, 0, 1, 1, 1] * 3)
    multi = np.array(["a", "b", "c", "a", "c", "b"] * 5)
    matrix = [[0.8, 0.2, 0.0], [0.1, 0.7, 0.2], [0.0, 0.5, 0.5]]
    return [
        (_mse, y_true, y_pred, {"sigma": sigma}),
        (_mse, y_true, y_pred, {"sigma": 0.7}),
        (_accuracy, binary, binary[::-1], {"q": 0.2}),
        (_accuracy, binary, binary[::-1], {"q": np.linspace(0, 0.5, 30)}),
        (_accuracy, multi, multi[::-1], {"q": 0.3}),
        (_accuracy, multi, multi[::-1], {"transition_matrix": matrix}),
    ]


@pytest.mark.parametrize("case", range(6))
def test_reproducible_and_independent_of_batch_size(case):
    metric, y_true, y_pred, noise = _draw_cases()[case]
    reference = monte_carlo_score(
        metric, y_true, y_pred, n_draws=60, random_state=42, **noise
    )
    again = monte_carlo_score(
        metric, y_true, y_pred, n_draws=60, random_state=42, **noise
    )
    np.testing.assert_array_equal(reference.draws, again.draws)
    for batch_size in (1, 7, 60, 1000):
        other = monte_carlo_score(
            metric,
            y_true,
            y_pred,
            n_draws=60,
            random_state=42,
            batch_size=batch_size,
            **noise,
        )
        np.testing.assert_array_equal(reference.draws, other.draws)
        assert other.expected == reference.expected
        assert other.variance == reference.variance
    different = monte_carlo_score(
        metric, y_true, y_pred, n_draws=60, random_state=43, **noise
    )
    assert not np.array_equal(different.draws, reference.draws)


def test_random_state_kinds():
    y_true, y_pred, sigma = _regression_setting(10)
    args = (mean_squared_error, y_true, y_pred)
    by_int = monte_carlo_score(*args, sigma=sigma, n_draws=30, random_state=5)
    by_gen = monte_carlo_score(
        *args, sigma=sigma, n_draws=30, random_state=np.random.default_rng(5)
    )
    np.testing.assert_array_equal(by_int.draws, by_gen.draws)
    # A Generator is advanced: a second call continues the stream.
    rng = np.random.default_rng(5)
    first = monte_carlo_score(*args, sigma=sigma, n_draws=30, random_state=rng)
    second = monte_carlo_score(*args, sigma=sigma, n_draws=30, random_state=rng)
    assert not np.array_equal(first.draws, second.draws)
    # A RandomState seeds a Generator reproducibly.
    a = monte_carlo_score(
        *args, sigma=sigma, n_draws=30, random_state=np.random.RandomState(1)
    )
    b = monte_carlo_score(
        *args, sigma=sigma, n_draws=30, random_state=np.random.RandomState(1)
    )
    np.testing.assert_array_equal(a.draws, b.draws)
    with pytest.raises(TypeError, match="random_state"):
        monte_carlo_score(*args, sigma=sigma, n_draws=30, random_state="seed")
    with pytest.raises(ValueError, match="random_state"):
        monte_carlo_score(*args, sigma=sigma, n_draws=30, random_state=-1)


# --- agreement with the exact formulas ----------------------------------------


@pytest.mark.parametrize("n_samples", [5, 30, 100])
def test_agrees_with_exact_mse_and_mae(n_samples):
    y_true, y_pred, sigma = _regression_setting(n_samples, seed=n_samples)
    for metric, exact in (
        (_mse, expected_mean_squared_error),
        (_mae, expected_mean_absolute_error),
    ):
        mc = monte_carlo_score(
            metric, y_true, y_pred, sigma=sigma, n_draws=4000, random_state=n_samples
        )
        reference = exact(y_true, y_pred, sigma=sigma, estimand="forward")
        _assert_agrees(mc, reference.expected, reference.variance)
        assert mc.nominal == pytest.approx(reference.nominal, rel=1e-12)


def test_agrees_with_exact_weighted_multioutput_mse():
    rng = np.random.default_rng(7)
    y_true = rng.normal(size=(40, 2))
    y_pred = y_true + rng.normal(size=(40, 2))
    sigma = rng.uniform(0.1, 1.5, size=(40, 2))
    weight = rng.integers(1, 4, 40).astype(float)

    def weighted_mse(y, y_hat, sample_weight):
        return np.average((y - y_hat) ** 2, weights=sample_weight, axis=0).mean()

    mc = monte_carlo_score(
        weighted_mse,
        y_true,
        y_pred,
        sigma=sigma,
        sample_weight=weight,
        n_draws=4000,
        random_state=0,
    )
    exact = expected_mean_squared_error(
        y_true, y_pred, sigma=sigma, sample_weight=weight, estimand="forward"
    )
    _assert_agrees(mc, exact.expected, exact.variance)
    assert mc.nominal == pytest.approx(exact.nominal, rel=1e-12)


def _accuracy_moments(correct_probability):
    p = np.asarray(correct_probability, dtype=float)
    return p.mean(), np.sum(p * (1 - p)) / p.size**2


def test_binary_flips_agree_with_accuracy_formula():
    rng = np.random.default_rng(11)
    y_true = rng.integers(0, 2, 50)
    y_pred = np.where(rng.random(50) < 0.8, y_true, 1 - y_true)
    q = rng.uniform(0.0, 0.4, 50)
    correct = y_pred == y_true
    # FORMULAS.md §3: P_i = 1 - q_i if correct, q_i if wrong.
    expected, variance = _accuracy_moments(np.where(correct, 1 - q, q))
    mc = monte_carlo_score(_accuracy, y_true, y_pred, q=q, n_draws=4000, random_state=1)
    _assert_agrees(mc, expected, variance)


def test_multiclass_uniform_flips_agree_with_accuracy_formula():
    rng = np.random.default_rng(12)
    classes = np.array(["cat", "dog", "eel", "fox"])
    y_true = classes[rng.integers(0, 4, 60)]
    y_pred = np.where(rng.random(60) < 0.6, y_true, classes[rng.integers(0, 4, 60)])
    q = 0.3
    correct = y_pred == y_true
    # A wrong prediction is observed correct only if the flip hits it: q/(K-1).
    expected, variance = _accuracy_moments(np.where(correct, 1 - q, q / 3))
    mc = monte_carlo_score(_accuracy, y_true, y_pred, q=q, n_draws=4000, random_state=2)
    _assert_agrees(mc, expected, variance)


def test_multiclass_flip_targets_are_uniform():
    y_true = np.zeros(3000, dtype=int)
    counts = []

    def record(y, _):
        counts.append(np.bincount(y, minlength=4))
        return 0.0

    monte_carlo_score(
        record, y_true, y_true, q=0.6, labels=[0, 1, 2, 3], n_draws=20, random_state=0
    )
    total = np.sum(counts[1:], axis=0) / (3000 * 20)  # counts[0]: the nominal call
    # P(0) = 0.4, each other class 0.2; SE ~ sqrt(.2 * .8 / 60000) = 0.0016.
    np.testing.assert_allclose(total, [0.4, 0.2, 0.2, 0.2], atol=0.01)


def test_transition_matrix_agrees_and_respects_zero_entries():
    rng = np.random.default_rng(13)
    labels = [2, 0, 1]  # T is in this order, not sorted
    matrix = np.array([[0.7, 0.3, 0.0], [0.0, 0.9, 0.1], [0.25, 0.25, 0.5]])
    y_true = rng.choice(labels, 80)
    y_pred = rng.choice(labels, 80)
    row = {label: i for i, label in enumerate(labels)}
    p = np.array([matrix[row[t], row[s]] for t, s in zip(y_true, y_pred, strict=True)])
    expected, variance = _accuracy_moments(p)
    seen = []

    def record(y, y_hat):
        seen.append(y.copy())
        return _accuracy(y, y_hat)

    mc = monte_carlo_score(
        record,
        y_true,
        y_pred,
        transition_matrix=matrix,
        labels=labels,
        n_draws=3000,
        random_state=3,
    )
    _assert_agrees(mc, expected, variance)
    seen = np.array(seen)
    # T[class 2 -> class 1] = 0 and T[class 0 -> class 2] = 0 are never drawn.
    assert not np.any(seen[:, y_true == 2] == 1)
    assert not np.any(seen[:, y_true == 0] == 2)


def test_probability_predictions_pass_through_log_loss():
    rng = np.random.default_rng(14)
    y_true = rng.integers(0, 3, 40)
    proba = rng.dirichlet(np.ones(3), 40)
    q = 0.2
    # E[log-loss] = -(1/M) Σ_i Σ_k P(observed = k) log p_ik (linear in the label).
    observed = np.full((40, 3), q / 2)
    observed[np.arange(40), y_true] = 1 - q
    per_sample = -np.sum(observed * np.log(proba), axis=1)
    second = np.sum(observed * np.log(proba) ** 2, axis=1)
    expected = per_sample.mean()
    variance = np.sum(second - per_sample**2) / 40**2
    calls = []

    def metric(y, p):
        calls.append(p)
        return -np.mean(np.log(p[np.arange(y.size), y]))

    mc = monte_carlo_score(metric, y_true, proba, q=q, n_draws=3000, random_state=4)
    _assert_agrees(mc, expected, variance)
    assert all(p is proba for p in calls)
    with_sklearn = monte_carlo_score(
        functools.partial(log_loss, labels=[0, 1, 2]),
        y_true,
        proba,
        q=q,
        n_draws=30,
        random_state=4,
    )
    np.testing.assert_allclose(with_sklearn.draws, mc.draws[:30], rtol=1e-12)


def test_binary_probability_vector_uses_y_true_classes():
    y_true = np.array([0, 1, 1, 0, 1])
    proba = np.array([0.2, 0.7, 0.6, 0.1, 0.9])
    score = monte_carlo_score(
        lambda y, p: np.mean((p - y) ** 2),
        y_true,
        proba,
        q=0.1,
        n_draws=200,
        random_state=0,
    )
    # Brier under flips: E = (1/M) Σ [(1-q)(p - c)² + q(p - (1-c))²].
    expected = np.mean(0.9 * (proba - y_true) ** 2 + 0.1 * (proba - 1 + y_true) ** 2)
    assert abs(score.expected - expected) < 5 * score.standard_error


# --- degenerate noise and memory ------------------------------------------------


def test_zero_noise_gives_zero_variance():
    y_true, y_pred, _ = _regression_setting(25)
    score = monte_carlo_score(
        mean_squared_error, y_true, y_pred, sigma=0.0, n_draws=10, random_state=0
    )
    assert score.variance == 0.0 and score.expected == score.nominal
    assert score.standard_error == 0.0 and score.variance_standard_error == 0.0
    labels = np.array([0, 1, 2, 1, 0, 2])
    for noise in ({"q": 0.0}, {"q": np.zeros(6)}, {"transition_matrix": np.eye(3)}):
        score = monte_carlo_score(
            accuracy_score, labels, labels[::-1], n_draws=10, random_state=0, **noise
        )
        assert score.variance == 0.0
        assert score.expected == score.nominal == accuracy_score(labels, labels[::-1])


def test_single_class_without_flips():
    score = monte_carlo_score(
        accuracy_score, [1, 1, 1], [1, 0, 1], q=0.0, n_draws=5, random_state=0
    )
    assert score.expected == pytest.approx(2 / 3) and score.variance == 0.0
    with pytest.raises(ValueError, match="two classes"):
        monte_carlo_score(
            lambda y, p: 0.0, [1, 1, 1], np.ones((3, 2)) / 2, q=0.1, n_draws=5
        )


def test_draws_are_fed_one_at_a_time():
    y_true, y_pred, sigma = _regression_setting(1000)
    shapes = []

    def record(y, y_hat):
        shapes.append(np.shape(y))
        return float(np.mean(y))

    monte_carlo_score(
        record, y_true, y_pred, sigma=sigma, n_draws=50, batch_size=8, random_state=0
    )
    assert shapes == [(1000,)] * 51  # nominal + 50 draws, each one label vector


def test_memory_is_bounded_by_the_batch():
    n_samples, n_draws = 20_000, 200
    y_true = np.zeros(n_samples)
    full = n_draws * n_samples * 8  # 32 MB if every draw were held at once
    tracemalloc.start()
    try:
        monte_carlo_score(
            lambda y, p: float(y[0]),
            y_true,
            y_true,
            sigma=1.0,
            n_draws=n_draws,
            batch_size=10,
            random_state=0,
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 12 * n_samples * 8 + 2**20  # one batch of 10 draws, plus slack
    assert peak < full / 10


def test_default_batch_is_about_8_mb():
    n_samples = 200_000
    y_true = np.zeros(n_samples)
    tracemalloc.start()
    try:
        monte_carlo_score(
            lambda y, p: 0.0, y_true, y_true, sigma=1.0, n_draws=40, random_state=0
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 12 * 2**20
    assert peak < 40 * n_samples * 8


def test_non_finite_metric_warns():
    with pytest.warns(UserWarning, match="not finite on"):
        score = monte_carlo_score(
            lambda y, p: np.inf if y[0] > 0 else 0.0,
            [0.0, 1.0],
            [0.0, 1.0],
            sigma=1.0,
            n_draws=40,
            random_state=0,
        )
    assert not np.isfinite(score.expected)


def test_inputs_not_mutated():
    y_true, y_pred, sigma = _regression_setting(30)
    for array in (y_true, y_pred, sigma):
        array.flags.writeable = False
    copies = [y_true.copy(), y_pred.copy(), sigma.copy()]
    monte_carlo_score(
        mean_squared_error, y_true, y_pred, sigma=sigma, n_draws=20, random_state=0
    )
    for array, copy in zip((y_true, y_pred, sigma), copies, strict=True):
        np.testing.assert_array_equal(array, copy)


def test_float32_lists_and_series():
    pd = pytest.importorskip("pandas")
    y_true, y_pred, sigma = _regression_setting(12)
    y32 = y_true.astype(np.float32)
    a = monte_carlo_score(
        mean_squared_error, y32, y_pred, sigma=sigma, n_draws=30, random_state=0
    )
    b = monte_carlo_score(
        mean_squared_error,
        y32.astype(np.float64),
        y_pred,
        sigma=sigma,
        n_draws=30,
        random_state=0,
    )
    np.testing.assert_array_equal(a.draws, b.draws)
    c = monte_carlo_score(
        mean_squared_error,
        pd.Series(y32.astype(float)),
        list(y_pred),
        sigma=list(sigma),
        n_draws=30,
        random_state=0,
    )
    np.testing.assert_allclose(c.draws, b.draws, rtol=1e-13)


# --- validation -----------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({}, TypeError, "exactly one noise model"),
        ({"sigma": 1.0, "q": 0.1}, TypeError, "exactly one noise model"),
        ({"sigma": -1.0}, ValueError, "sigma must be non-negative"),
        ({"sigma": [1.0, np.nan, 1.0]}, ValueError, "sigma must be finite"),
        ({"sigma": [1.0, 1.0]}, ValueError, "sigma must have one entry"),
        ({"sigma": 1.0, "n_draws": 1}, ValueError, "n_draws"),
        ({"sigma": 1.0, "n_draws": 10.5}, TypeError, "n_draws"),
        ({"sigma": 1.0, "batch_size": 0}, ValueError, "batch_size"),
        ({"sigma": 1.0, "sample_weight": [1, 1]}, ValueError, "sample_weight"),
    ],
)
def test_regression_validation(kwargs, error, match):
    with pytest.raises(error, match=match):
        monte_carlo_score(
            mean_squared_error, [1.0, 2.0, 3.0], [1.0, 2.0, 2.0], **kwargs
        )


def test_other_validation_errors():
    with pytest.raises(TypeError, match="metric must be callable"):
        monte_carlo_score("mse", [1.0], [1.0], sigma=1.0)
    with pytest.raises(ValueError, match="y_true must be finite"):
        monte_carlo_score(mean_squared_error, [1.0, np.inf], [1.0, 2.0], sigma=1.0)
    with pytest.raises(ValueError, match="empty"):
        monte_carlo_score(mean_squared_error, [], [], sigma=1.0)
    with pytest.raises(ValueError, match="same number of samples"):
        monte_carlo_score(mean_squared_error, [1.0, 2.0], [1.0], sigma=1.0)
    with pytest.raises(ValueError, match="q must be a probability"):
        monte_carlo_score(accuracy_score, [0, 1], [0, 1], q=1.5)
    with pytest.raises(ValueError, match="q must hold probabilities"):
        monte_carlo_score(accuracy_score, [0, 1], [0, 1], q=[0.1, -0.1])
    with pytest.raises(ValueError, match="row-stochastic"):
        monte_carlo_score(
            accuracy_score, [0, 1], [0, 1], transition_matrix=[[0.5, 0.4], [0.0, 1.0]]
        )
    with pytest.raises(ValueError, match="transition_matrix must be 3 x 3"):
        monte_carlo_score(
            accuracy_score, [0, 1, 2], [0, 1, 2], transition_matrix=np.eye(2)
        )
    with pytest.raises(ValueError, match="not in `labels`"):
        monte_carlo_score(accuracy_score, [0, 1, 2], [0, 1, 2], q=0.1, labels=[0, 1])
    with pytest.raises(ValueError, match="continuous"):
        monte_carlo_score(accuracy_score, [0.5, 1.5], [0, 1], q=0.1)
    with pytest.raises(TypeError, match="single number"):
        monte_carlo_score(
            lambda y, p: np.array([1.0, 2.0]),
            [1.0, 2.0],
            [1.0, 2.0],
            sigma=1.0,
            n_draws=3,
        )


def test_a_metric_that_returns_no_number_raises():
    with pytest.raises(TypeError, match="metric must return a number"):
        monte_carlo_score(lambda a, b: "x", [1.0, 2.0], [1.0, 2.0], sigma=1.0)
