"""The truth and remeasurement estimands of the classification metrics.

Hand-computed small cases; exact labels (every estimand is scikit-learn's
metric, variance 0); exact enumeration of every noisy-label outcome of small
samples (unbiased estimates and unbiased variance estimates where the method
is "exact"); and the end-to-end simulation of ESTIMANDS §5 with known true
classes and fixed predictions (:mod:`_classification_simulation`), small in
the default run and full with ``--run-slow``.
"""

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn import metrics as sk

from sklearn_noisy.metrics import (
    expected_accuracy_score,
    expected_balanced_accuracy_score,
    expected_brier_score_loss,
    expected_confusion_matrix,
    expected_f1_score,
    expected_log_loss,
    expected_matthews_corrcoef,
    expected_precision_score,
    expected_recall_score,
)

sys.path.insert(0, str(Path(__file__).parent))
from _classification_simulation import T3, format_table, simulate

T2 = np.array([[0.9, 0.1], [0.2, 0.8]])


# --------------------------------------------------------------------------- #
# Hand-computed cases
# --------------------------------------------------------------------------- #
def test_accuracy_remeasurement_by_hand():
    # binary flips: the variance q(1 - q) per sample is label-free
    score = expected_accuracy_score(
        [0, 1, 1, 0], [0, 1, 0, 0], q=0.1, estimand="remeasurement"
    )
    assert (score.expected, score.nominal) == (0.75, 0.75)
    assert score.variance == pytest.approx(4 * 0.09 / 16, abs=1e-15)
    assert (score.method, score.estimand) == ("exact", "remeasurement")
    # three classes, q = 0.3: h = q(1-q) if the true class is ŷ, r(1-r) else,
    # estimated by r(1-r) + ĉ (q(1-q) - r(1-r)) with ĉ = T⁻¹[ỹ, ŷ]
    q, r = 0.3, 0.15
    c_hat = np.array([0.85, 0.85, -0.15]) / 0.55
    h_hat = r * (1 - r) + c_hat * (q * (1 - q) - r * (1 - r))
    score = expected_accuracy_score([0, 1, 2], [0, 1, 0], q=q, estimand="remeasurement")
    assert score.variance == pytest.approx(h_hat.sum() / 9, abs=1e-15)


def test_brier_remeasurement_by_hand():
    y_true, y_proba = [0, 1, 1, 0], [0.1, 0.9, 0.8, 0.3]
    score = expected_brier_score_loss(y_true, y_proba, q=0.1, estimand="remeasurement")
    assert score.expected == score.nominal == pytest.approx(0.0375, abs=1e-15)
    # binary: Σ (1 - 2p)² q(1 - q) / M², label-free
    assert score.variance == pytest.approx(0.010125, abs=1e-15)


def test_recall_truth_by_hand():
    # u_i = (ỹ_i - q)/(1 - 2q), v = q(1 - q)/(1 - 2q)² per sample
    q = 0.1
    v = q * (1 - q) / (1 - 2 * q) ** 2
    u = (np.array([1, 1, 1, 0]) - q) / (1 - 2 * q)
    tp, fn = u[0] + u[1], u[2] + u[3]  # predicted positive: samples 0 and 1
    s = tp + fn
    variance = (fn**2 + tp**2) / s**4 * 2 * v  # delta: TP and FN independent
    bias = 0.5 * (-2 * fn / s**3 * 2 * v + 2 * tp / s**3 * 2 * v)
    score = expected_recall_score([1, 1, 1, 0], [1, 1, 0, 0], q=q, estimand="truth")
    assert score.expected == pytest.approx(tp / s - bias, rel=1e-7)
    assert score.variance == pytest.approx(variance, rel=1e-12)
    assert (score.method, score.estimand) == ("delta", "truth")


def test_confusion_matrix_truth_and_remeasurement_by_hand():
    v = 0.09 / 0.64
    truth = expected_confusion_matrix([0, 1, 1], [0, 1, 0], q=0.1, estimand="truth")
    np.testing.assert_allclose(truth.expected, [[1.0, -0.125], [1.0, 1.125]])
    np.testing.assert_allclose(truth.variance, [[2 * v, v], [2 * v, v]])
    assert truth.estimand == "truth" and "estimand='truth'" in repr(truth)
    again = expected_confusion_matrix(
        [0, 1, 1], [0, 1, 0], q=0.1, estimand="remeasurement"
    )
    np.testing.assert_allclose(again.expected, again.nominal)
    np.testing.assert_allclose(again.variance, [[0.18, 0.09], [0.18, 0.09]])
    assert (
        expected_confusion_matrix([0, 1], [0, 1], q=0.1, estimand="forward").estimand
        == "forward"
    )


# --------------------------------------------------------------------------- #
# Exact labels
# --------------------------------------------------------------------------- #
def _count_cases(n_classes):
    labels = list(range(n_classes))
    cases = []
    for average in ("binary",) if n_classes == 2 else ("micro", "macro", "weighted"):
        for ours, theirs in (
            (expected_precision_score, sk.precision_score),
            (expected_recall_score, sk.recall_score),
            (expected_f1_score, sk.f1_score),
        ):
            options = {"average": average}
            if average != "binary":
                options["labels"] = labels
            cases.append((ours, theirs, options))
    cases += [
        (expected_accuracy_score, sk.accuracy_score, {}),
        (expected_balanced_accuracy_score, sk.balanced_accuracy_score, {}),
        (expected_matthews_corrcoef, sk.matthews_corrcoef, {}),
    ]
    return cases


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("estimand", ["truth", "remeasurement"])
def test_exact_labels_are_scikit_learn(n_classes, estimand):
    rng = np.random.default_rng(n_classes)
    y = rng.integers(0, n_classes, 50)
    p = np.where(rng.random(50) < 0.7, y, rng.integers(0, n_classes, 50))
    for noise in (
        {"q": 0.0},
        {"q": np.zeros(50)},
        {"transition_matrix": np.eye(n_classes)},
    ):
        for ours, theirs, options in _count_cases(n_classes):
            score = ours(y, p, estimand=estimand, **noise, **options)
            kwargs = {k: v for k, v in options.items() if k != "labels"}
            if "average" in options:
                kwargs["zero_division"] = 0
            reference = theirs(y, p, **kwargs)
            assert score.expected == pytest.approx(reference, abs=1e-12)
            assert score.nominal == pytest.approx(reference, abs=1e-12)
            assert score.variance == pytest.approx(0.0, abs=1e-12)
            assert score.estimand == estimand
        cm = expected_confusion_matrix(y, p, estimand=estimand, **noise)
        np.testing.assert_allclose(cm.expected, sk.confusion_matrix(y, p), atol=1e-12)
        np.testing.assert_allclose(cm.variance, 0.0, atol=1e-12)


# --------------------------------------------------------------------------- #
# Exact enumeration of every noisy-label outcome
# --------------------------------------------------------------------------- #
def _outcomes(true, matrix):
    """Every labelling and its probability, for the flip matrix ``matrix``."""
    n_classes = matrix.shape[0]
    for labels in itertools.product(range(n_classes), repeat=true.size):
        labels = np.array(labels)
        yield labels, float(np.prod(matrix[true, labels]))


def _enumerate(true, matrix, compute):
    """E and Var of ``compute(labels)``'s (estimate, variance) over the noise."""
    values, weights = [], []
    for labels, probability in _outcomes(true, matrix):
        values.append(compute(labels))
        weights.append(probability)
    values, weights = np.array(values), np.array(weights)
    mean = weights @ values
    spread = weights @ (values - mean) ** 2
    return mean, spread, values


LINEAR_CASES = {
    2: [
        ("accuracy", lambda y, p, pr, **k: expected_accuracy_score(y, p, **k)),
        ("precision", lambda y, p, pr, **k: expected_precision_score(y, p, **k)),
        ("brier", lambda y, p, pr, **k: expected_brier_score_loss(y, pr[:, 1], **k)),
        ("log_loss", lambda y, p, pr, **k: expected_log_loss(y, pr, **k)),
    ],
    3: [
        ("accuracy", lambda y, p, pr, **k: expected_accuracy_score(y, p, **k)),
        (
            "precision macro",
            lambda y, p, pr, **k: expected_precision_score(y, p, average="macro", **k),
        ),
        (
            "recall micro",
            lambda y, p, pr, **k: expected_recall_score(y, p, average="micro", **k),
        ),
        ("brier", lambda y, p, pr, **k: expected_brier_score_loss(y, pr, **k)),
        ("log_loss", lambda y, p, pr, **k: expected_log_loss(y, pr, **k)),
    ],
}


@pytest.mark.parametrize("n_classes", [2, 3])
def test_enumeration_unbiased_where_exact(n_classes):
    """E[estimate] = target and E[variance estimate] = variance, exactly."""
    matrix = T2 if n_classes == 2 else T3
    true = np.array([0, 1, 1, 0, 1, 0]) if n_classes == 2 else np.array([0, 1, 2, 2, 1])
    pred = np.array([0, 1, 0, 1, 1, 0]) if n_classes == 2 else np.array([0, 1, 2, 0, 2])
    proba = np.random.default_rng(3).dirichlet(np.ones(n_classes), true.size)
    labels = list(range(n_classes))
    noise = {"transition_matrix": matrix, "labels": labels}
    for name, function in LINEAR_CASES[n_classes]:

        def score(labels_, estimand, function=function, name=name):
            result = function(labels_, pred, proba, estimand=estimand, **noise)
            assert result.method == "exact", name
            return result.expected, result.variance

        # the forward moments of the macro average are Monte Carlo: not compared
        target = (
            None
            if name == "precision macro"
            else function(true, pred, proba, estimand="forward", **noise)
        )
        exact = function(
            true,
            pred,
            proba,
            transition_matrix=np.eye(n_classes),
            labels=labels,
            estimand="forward",
        )
        mean, spread, values = _enumerate(true, matrix, lambda y: score(y, "truth"))
        assert mean[0] == pytest.approx(exact.expected, abs=1e-12), name
        # The unbiased variance estimate, floored at the exact lower bound of
        # the variance (tests/test_acc_variance_floor.py checks the unbiased
        # part): never 0, and on average at least the variance.
        assert values[:, 1].min() > 0, name
        assert mean[1] >= spread[0] * (1 - 1e-9), name
        mean, spread, values = _enumerate(
            true, matrix, lambda y: score(y, "remeasurement")
        )
        if target is not None:  # θ_R, and the exact forward moments agree
            assert mean[0] == pytest.approx(target.expected, abs=1e-12), name
            assert spread[0] == pytest.approx(target.variance, rel=1e-9), name
        if values[:, 1].min() > 0:
            assert mean[1] == pytest.approx(spread[0], rel=1e-9), name


@pytest.mark.parametrize("n_classes", [2, 3])
def test_enumeration_confusion_matrix(n_classes):
    matrix = T2 if n_classes == 2 else T3
    true = np.array([0, 1, 1, 0, 1, 0]) if n_classes == 2 else np.array([0, 1, 2, 2, 1])
    pred = np.array([0, 1, 0, 1, 1, 0]) if n_classes == 2 else np.array([0, 1, 2, 0, 2])
    labels = list(range(n_classes))

    def cells(labels_, estimand):
        cm = expected_confusion_matrix(
            labels_, pred, transition_matrix=matrix, labels=labels, estimand=estimand
        )
        return np.concatenate([cm.expected.ravel(), cm.variance.ravel()])

    size = n_classes * n_classes
    forward = expected_confusion_matrix(
        true, pred, transition_matrix=matrix, labels=labels, estimand="forward"
    )
    for estimand in ("truth", "remeasurement"):
        mean, spread, values = _enumerate(
            true, matrix, lambda y, e=estimand: cells(y, e)
        )
        target = (
            sk.confusion_matrix(true, pred, labels=labels).ravel()
            if estimand == "truth"
            else forward.expected.ravel()
        )
        np.testing.assert_allclose(mean[:size], target, atol=1e-12)
        if estimand == "remeasurement":  # unbiased, clipped at 0
            unclipped = values[:, size:].min(axis=0) > 0
            np.testing.assert_allclose(
                mean[size:][unclipped], spread[:size][unclipped], rtol=1e-9, atol=1e-12
            )
        else:  # unbiased, floored at the exact lower bound: never 0
            assert values[:, size:].min() > 0
            assert np.all(mean[size:] >= spread[:size] * (1 - 1e-9))


# --------------------------------------------------------------------------- #
# Errors
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "call",
    [
        lambda: expected_accuracy_score(
            [0, 1], [0, 1], q=0.5, estimand="remeasurement"
        ),
        lambda: expected_f1_score([0, 1], [0, 1], q=0.5, estimand="remeasurement"),
        lambda: expected_log_loss([0, 1], [0.2, 0.8], q=0.5, estimand="remeasurement"),
        lambda: expected_matthews_corrcoef(
            [0, 1, 2], [0, 1, 1], q=2 / 3, estimand="remeasurement"
        ),
        lambda: expected_confusion_matrix(
            [0, 1],
            [0, 1],
            transition_matrix=np.full((2, 2), 0.5),
            estimand="remeasurement",
        ),
    ],
)
def test_remeasurement_needs_an_invertible_model(call):
    with pytest.raises(ValueError, match=r"estimand='remeasurement'.*invertible"):
        call()


def test_recall_truth_with_uninformative_flips_raises():
    with pytest.raises(ValueError, match="no unbiased estimator"):
        expected_recall_score([0, 1], [0, 1], q=0.5, estimand="truth")
    with pytest.raises(ValueError, match="invertible transition_matrix"):
        expected_balanced_accuracy_score(
            [0, 1, 2],
            [0, 1, 1],
            transition_matrix=np.full((3, 3), 1 / 3),
            estimand="truth",
        )


# --------------------------------------------------------------------------- #
# End to end (ESTIMANDS §5): known true classes, fixed predictions
# --------------------------------------------------------------------------- #
def _check(rows, *, bias, sd, coverage):
    failures = [
        row
        for row in rows
        if not (
            abs(row["bias/sd"]) < bias
            and abs(row["sd ratio"] - 1) < sd
            and coverage[0] <= row["coverage"] <= coverage[1]
        )
    ]
    assert not failures, format_table(failures)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_end_to_end_small(n_classes):
    """Seeded and small: looser bounds for the larger Monte Carlo error."""
    rows = simulate(n_classes, n_samples=200, n_replicates=120, n_target=800, seed=5)
    _check(rows, bias=0.3, sd=0.25, coverage=(0.88, 0.995))


@pytest.mark.slow
@pytest.mark.parametrize("n_classes", [2, 3])
def test_end_to_end_full(n_classes):
    """M = 300, 1000 replicates: the bounds of ESTIMANDS §5."""
    rows = simulate(n_classes, n_samples=300, n_replicates=1000, n_target=4000)
    print(format_table(rows))
    _check(rows, bias=0.1, sd=0.15, coverage=(0.93, 0.97))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_adjusted_balanced_accuracy_truth_and_remeasurement(n_classes):
    """scikit-learn's adjusted score at zero noise; under flips the truth
    estimate averages to the adjusted score of the true labels (5 SE)."""
    rng = np.random.default_rng(n_classes)
    true = rng.integers(0, n_classes, 400)
    pred = np.where(rng.random(400) < 0.7, true, rng.integers(0, n_classes, 400))
    reference = sk.balanced_accuracy_score(true, pred, adjusted=True)
    for estimand in ("truth", "remeasurement"):
        score = expected_balanced_accuracy_score(
            true, pred, q=0.0, adjusted=True, estimand=estimand
        )
        assert score.expected == pytest.approx(reference, abs=1e-12)
        assert score.variance == pytest.approx(0.0, abs=1e-12)
    q, estimates, spreads = 0.1, [], []
    for _ in range(150):
        flip = rng.random(true.size) < q
        shift = rng.integers(1, n_classes, true.size) if n_classes > 2 else 1
        noisy = np.where(flip, (true + shift) % n_classes, true)
        truth = expected_balanced_accuracy_score(noisy, pred, q=q, adjusted=True)
        remeasured = expected_balanced_accuracy_score(
            noisy, pred, q=q, adjusted=True, estimand="remeasurement"
        )
        assert (
            remeasured.expected
            == remeasured.nominal
            == pytest.approx(
                sk.balanced_accuracy_score(noisy, pred, adjusted=True), abs=1e-12
            )
        )
        estimates.append(truth.expected)
        spreads.append(truth.variance)
    estimates = np.array(estimates)
    assert truth.estimand == "truth"
    se = estimates.std(ddof=1) / np.sqrt(estimates.size)
    assert abs(estimates.mean() - reference) < 5 * se
    # the variance estimates are of the spread of the estimates (150 draws:
    # the sample variance's SE is about 12 %)
    assert np.mean(spreads) == pytest.approx(estimates.var(ddof=1), rel=0.5)
