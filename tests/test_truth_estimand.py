"""estimand="truth": unbiased estimates of the metric against the true labels.

Each test fixes true labels, simulates noisy observations of them, calls the
metric with ``estimand="truth"`` on every draw and checks, within 5 Monte Carlo
standard errors, that the estimates average to the metric on the true labels and
that the reported variance is their variance (exact) or averages to it
(estimated).
"""

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, brier_score_loss, log_loss

from sklearn_noisy import (
    expected_accuracy_score,
    expected_brier_score_loss,
    expected_log_loss,
    expected_mean_squared_error,
)
from sklearn_noisy.utils._validation import check_estimand

N_DRAWS = 1500


def draw_labels(rng, k, n_classes, *, q=None, matrix=None, n_draws=N_DRAWS):
    k = np.asarray(k)
    if matrix is not None:
        cumulative = np.cumsum(matrix, axis=1)[k]
        u = rng.random((n_draws, k.size, 1))
        return np.minimum((u > cumulative).sum(axis=2), n_classes - 1)
    flip = rng.random((n_draws, k.size)) < np.asarray(q)
    shift = rng.integers(1, n_classes, size=(n_draws, k.size))
    return np.where(flip, (k + shift) % n_classes, k)


def check_unbiased(scores, target, *, exact_variance=None):
    """Estimates average to ``target``; variance exact or unbiased on average."""
    estimates = np.array([s.expected for s in scores])
    reported = np.array([s.variance for s in scores])
    n = estimates.size
    mean = estimates.mean()
    centred = estimates - mean
    mc_var = centred.var()
    se_mean = np.sqrt(mc_var / n)
    se_var = np.sqrt(max(np.mean(centred**4) - mc_var**2, 0.0) / n)
    z_mean = (mean - target) / se_mean
    assert abs(z_mean) <= 5, (mean, target, se_mean)
    if exact_variance is not None:
        np.testing.assert_allclose(reported, exact_variance, rtol=1e-12)
        assert abs(mc_var - exact_variance) <= 5 * se_var, (mc_var, exact_variance)
    else:
        se_reported = reported.std() / np.sqrt(n)
        tolerance = 5 * np.hypot(se_var, se_reported)
        assert abs(mc_var - reported.mean()) <= tolerance, (mc_var, reported.mean())
    return z_mean


# --------------------------------------------------------------------------- #
# Accuracy
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("per_sample", [False, True])
def test_accuracy_binary_unbiased_with_exact_variance(per_sample):
    rng = np.random.default_rng(100 + per_sample)
    m = 40
    truth = rng.integers(0, 2, m)
    pred = np.where(rng.random(m) < 0.75, truth, 1 - truth)
    q = rng.uniform(0.0, 0.4, m) if per_sample else 0.2
    weight = rng.uniform(0.5, 2.0, m) if per_sample else None
    observed = draw_labels(rng, truth, 2, q=q)
    scores = [
        expected_accuracy_score(
            obs, pred, q=q, labels=[0, 1], sample_weight=weight, estimand="truth"
        )
        for obs in observed
    ]
    w = np.ones(m) if weight is None else weight
    qs = np.broadcast_to(q, (m,))
    exact = np.sum(w**2 * qs * (1 - qs) / (1 - 2 * qs) ** 2) / w.sum() ** 2
    check_unbiased(
        scores, accuracy_score(truth, pred, sample_weight=weight), exact_variance=exact
    )
    # constant q: (a_obs - q)/(1 - 2q); nominal is the naive observed accuracy
    if not per_sample:
        first = scores[0]
        a_obs = accuracy_score(observed[0], pred)
        assert first.nominal == pytest.approx(a_obs, abs=1e-15)
        assert first.expected == pytest.approx((a_obs - 0.2) / 0.6, abs=1e-14)


@pytest.mark.parametrize("setting", ["uniform_q", "matrix"])
def test_accuracy_multiclass_unbiased(setting):
    rng = np.random.default_rng(110 + (setting == "matrix"))
    m, n_classes = 40, 3
    truth = rng.integers(0, n_classes, m)
    pred = np.where(rng.random(m) < 0.6, truth, rng.integers(0, n_classes, m))
    q = matrix = None
    if setting == "uniform_q":
        q = rng.uniform(0.0, 0.4, m)
    else:
        matrix = np.array([[0.8, 0.15, 0.05], [0.1, 0.7, 0.2], [0.1, 0.2, 0.7]])
    names = np.array(["x", "y", "z"])
    observed = draw_labels(rng, truth, n_classes, q=q, matrix=matrix)
    scores = [
        expected_accuracy_score(
            names[obs],
            names[pred],
            q=q,
            transition_matrix=matrix,
            labels=names,
            estimand="truth",
        )
        for obs in observed
    ]
    check_unbiased(scores, accuracy_score(truth, pred))


def test_accuracy_truth_inverts_measurement():
    # With a_ref and its forward expectation, the truth estimator maps the
    # forward expectation back to a_ref (constant binary q).
    y_true = np.r_[np.ones(85), np.zeros(15)].astype(int)
    y_pred = np.ones(100, dtype=int)
    forward = expected_accuracy_score(
        y_true, y_pred, q=0.05, estimand="forward"
    ).expected
    truth = expected_accuracy_score(y_true, y_pred, q=0.05, estimand="truth")
    assert truth.expected == pytest.approx((0.85 - 0.05) / 0.9, abs=1e-14)
    assert (forward - 0.05) / 0.9 == pytest.approx(0.85, abs=1e-14)
    assert truth.variance == pytest.approx(0.05 * 0.95 / 100 / 0.81, rel=1e-12)


# --------------------------------------------------------------------------- #
# Brier score and log-loss
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("metric", ["brier", "log"])
def test_probabilistic_binary_unbiased_with_exact_variance(metric):
    rng = np.random.default_rng(120 + (metric == "log"))
    m = 30
    truth = rng.integers(0, 2, m)
    p = np.clip(np.where(truth == 1, 0.7, 0.3) + rng.normal(0, 0.2, m), 0.01, 0.99)
    q = rng.uniform(0.0, 0.35, m)
    fn = expected_brier_score_loss if metric == "brier" else expected_log_loss
    reference = brier_score_loss if metric == "brier" else log_loss
    observed = draw_labels(rng, truth, 2, q=q)
    scores = [fn(obs, p, q=q, labels=[0, 1], estimand="truth") for obs in observed]
    if metric == "brier":
        jump = 1 - 2 * p
    else:
        jump = np.log(p) - np.log1p(-p)
    exact = np.sum(jump**2 * q * (1 - q) / (1 - 2 * q) ** 2) / m**2
    check_unbiased(scores, reference(truth, p, labels=[0, 1]), exact_variance=exact)


@pytest.mark.parametrize("metric", ["brier", "log"])
@pytest.mark.parametrize("setting", ["uniform_q", "matrix"])
def test_probabilistic_multiclass_unbiased(metric, setting):
    rng = np.random.default_rng(130 + 2 * (metric == "log") + (setting == "matrix"))
    m, n_classes = 30, 3
    truth = rng.integers(0, n_classes, m)
    proba = rng.dirichlet(np.ones(n_classes), m)
    proba[np.arange(m), truth] += 1.0
    proba /= proba.sum(axis=1, keepdims=True)
    q = matrix = None
    if setting == "uniform_q":
        q = rng.uniform(0.0, 0.4, m)
    else:
        matrix = np.array([[0.75, 0.2, 0.05], [0.1, 0.8, 0.1], [0.15, 0.15, 0.7]])
    weight = rng.uniform(0.5, 1.5, m)
    fn = expected_brier_score_loss if metric == "brier" else expected_log_loss
    reference = brier_score_loss if metric == "brier" else log_loss
    observed = draw_labels(rng, truth, n_classes, q=q, matrix=matrix)
    scores = [
        fn(
            obs,
            proba,
            q=q,
            transition_matrix=matrix,
            labels=[0, 1, 2],
            sample_weight=weight,
            estimand="truth",
        )
        for obs in observed
    ]
    target = reference(truth, proba, labels=[0, 1, 2], sample_weight=weight)
    check_unbiased(scores, target)


# --------------------------------------------------------------------------- #
# MSE
# --------------------------------------------------------------------------- #
def test_mse_unbiased_and_variance_estimate_unbiased():
    rng = np.random.default_rng(140)
    m = 25
    true_values = rng.normal(0, 2, m)
    pred = true_values + rng.normal(0, 1.5, m)
    sigma = rng.uniform(0.1, 0.6, m)
    weight = rng.uniform(0.5, 2.0, m)
    d = true_values - pred
    observed = true_values + sigma * rng.standard_normal((N_DRAWS, m))
    for w in (None, weight):
        scores = [
            expected_mean_squared_error(
                obs, pred, sigma=sigma, sample_weight=w, estimand="truth"
            )
            for obs in observed
        ]
        ww = np.ones(m) if w is None else w
        target = np.sum(ww * d**2) / ww.sum()
        assert all(s.variance > 0 for s in scores)  # no clipping in this setting
        check_unbiased(scores, target)
        exact = np.sum(ww**2 * (2 * sigma**4 + 4 * d**2 * sigma**2)) / ww.sum() ** 2
        reported = np.array([s.variance for s in scores])
        se = reported.std() / np.sqrt(reported.size)
        assert abs(reported.mean() - exact) <= 5 * se  # E[V̂] = Var, FORMULAS §4
        assert scores[0].nominal == pytest.approx(
            np.sum(ww * (observed[0] - pred) ** 2) / ww.sum(), rel=1e-12
        )


def test_mse_truth_closed_form_and_clipping():
    y_obs = np.array([1.0, 2.0, 3.0])
    pred = np.array([1.2, 2.0, 2.9])
    sigma = np.array([0.5, 0.1, 1.0])
    score = expected_mean_squared_error(y_obs, pred, sigma=sigma, estimand="truth")
    e = y_obs - pred
    assert score.expected == pytest.approx(np.mean(e**2 - sigma**2), abs=1e-15)
    v_hat = np.sum(4 * sigma**2 * e**2 - 2 * sigma**4) / 9
    assert v_hat < 0  # the unbiased variance estimate can be negative...
    # ...and is then floored at the lower bound Σ 2σ⁴/M² of the variance
    assert score.variance == pytest.approx(np.sum(2 * sigma**4) / 9, rel=1e-14)
    # an estimate above the bound is reported as is
    score = expected_mean_squared_error([3.0], [0.0], sigma=0.5, estimand="truth")
    assert score.expected == pytest.approx(9.0 - 0.25)
    assert score.variance == pytest.approx(4 * 0.25 * 9 - 2 * 0.0625)
    raw = expected_mean_squared_error(
        np.c_[y_obs, y_obs + 5],
        np.c_[pred, pred],
        sigma=0.2,
        estimand="truth",
        multioutput="raw_values",
    )
    assert len(raw) == 2 and all(s.variance > 0 for s in raw)


# --------------------------------------------------------------------------- #
# No information, unsupported values
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "call",
    [
        lambda: expected_accuracy_score([0, 1, 1], [0, 1, 0], q=0.5, estimand="truth"),
        lambda: expected_accuracy_score(
            [0, 1, 1], [0, 1, 0], q=[0.1, 0.5, 0.2], estimand="truth"
        ),
        lambda: expected_accuracy_score(
            [0, 1, 2], [0, 1, 0], q=2 / 3, estimand="truth"
        ),
        lambda: expected_brier_score_loss([0, 1], [0.2, 0.7], q=0.5, estimand="truth"),
        lambda: expected_log_loss(
            [0, 1, 2], np.full((3, 3), 1 / 3), q=[0.1, 2 / 3, 0.2], estimand="truth"
        ),
    ],
)
def test_uninformative_flips_raise(call):
    with pytest.raises(ValueError, match=r"no unbiased estimator.*information"):
        call()


def test_multiclass_q_one_half_is_fine_but_singular_matrix_raises():
    # K = 3: q = 0.5 leaves the labels informative (the singular value is 2/3)
    score = expected_accuracy_score([0, 1, 2], [0, 1, 0], q=0.5, estimand="truth")
    r, scale = 0.25, 0.25
    assert score.expected == pytest.approx(np.mean([(1 - r), (1 - r), -r]) / scale)
    singular = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
    for fn, pred in (
        (expected_accuracy_score, [0, 1, 0]),
        (expected_log_loss, np.full((3, 3), 1 / 3)),
        (expected_brier_score_loss, np.full((3, 3), 1 / 3)),
    ):
        with pytest.raises(ValueError, match="invertible transition_matrix"):
            fn([0, 1, 2], pred, transition_matrix=singular, estimand="truth")
        # the measurement estimand is fine with a singular matrix
        fn([0, 1, 2], pred, transition_matrix=singular, estimand="forward")


@pytest.mark.parametrize(
    "fn, args",
    [
        (expected_accuracy_score, ([0, 1], [0, 1])),
        (expected_brier_score_loss, ([0, 1], [0.2, 0.8])),
        (expected_log_loss, ([0, 1], [0.2, 0.8])),
    ],
)
@pytest.mark.parametrize("estimand", ["Truth", "noisy", None, 1])
def test_unknown_estimand(fn, args, estimand):
    with pytest.raises(ValueError, match="estimand must be one of"):
        fn(*args, q=0.1, estimand=estimand)
    with pytest.raises(ValueError, match="estimand must be one of"):
        expected_mean_squared_error([1.0], [0.0], sigma=0.1, estimand=estimand)


def test_check_estimand_wording():
    assert (
        check_estimand("truth", metric="m", supported=("forward", "truth")) == "truth"
    )
    assert check_estimand("forward", metric="m", supported=("forward",)) == "forward"
    with pytest.raises(ValueError) as info:
        check_estimand(
            "truth",
            metric="mean_absolute_error",
            supported=("forward", "remeasurement"),
            reason="E|e| is analytic in d but |d| has a kink",
        )
    assert str(info.value) == (
        "mean_absolute_error has no unbiased estimator against the true labels "
        "because E|e| is analytic in d but |d| has a kink; use "
        "estimand='forward' or estimand='remeasurement'."
    )
    with pytest.raises(ValueError) as info:
        check_estimand("remeasurement", metric="m", supported=("forward",))
    assert str(info.value) == (
        "m does not offer estimand='remeasurement'; use estimand='forward'."
    )
