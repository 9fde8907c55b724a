"""The truth variances of the classification metrics: unbiased, floored, covering.

The unbiased variance estimates can be negative; they are reported floored at
the exact, label-free lower bound ``Σ w² min_c Var(term_i | c_i = c)``
(user guide: :ref:`variance_floor`), so an interval never has zero width
while labels can flip.
"""

import numpy as np
import pytest

from sklearn_noisy.metrics import (
    expected_accuracy_score,
    expected_brier_score_loss,
    expected_confusion_matrix,
    expected_log_loss,
    expected_precision_score,
)
from sklearn_noisy.metrics._classification import _accuracy_totals
from sklearn_noisy.utils._labels import encode_labels
from sklearn_noisy.utils._noise import FlipNoise

# T⁻¹[1, 0] = 0.6 lies in (0, 1): the per-sample estimate ĉ² − ĉ is negative.
T3 = np.array([[0.6, 0.0, 0.4], [0.1, 0.5, 0.4], [0.2, 0.3, 0.5]])


def _floor_by_hand(matrix, column):
    """min over the true class c of Var(T⁻¹[c̃, column] | c), c̃ ~ T[c]."""
    values = np.linalg.inv(matrix)[:, column]
    means = matrix @ values
    return float(np.min(matrix @ values**2 - means**2))


def test_negative_unbiased_estimate_gives_the_floor_not_zero():
    y_obs, y_pred = [1] * 10, [0] * 10
    encoded = encode_labels(y_obs, y_pred, [0, 1, 2])
    noise = FlipNoise(None, T3, 3)
    _, _, raw, floor = _accuracy_totals("truth", encoded, noise, None)
    assert raw == pytest.approx(10 * 0.6 * (0.6 - 1.0), rel=1e-12)  # -2.4 < 0
    assert floor == pytest.approx(10 * _floor_by_hand(T3, 0), rel=1e-12)
    assert floor == pytest.approx(16.4, rel=1e-12)
    score = expected_accuracy_score(
        y_obs, y_pred, transition_matrix=T3, labels=[0, 1, 2], estimand="truth"
    )
    assert score.variance == pytest.approx(0.164, rel=1e-12)  # was 0
    low, high = score.confidence_interval(0.95)
    assert high - low > 0.5  # the whole range [0, 1] here: clipped, not zero
    # the same floor for the count metrics (de-noised confusion matrix)
    precision = expected_precision_score(
        y_obs,
        y_pred,
        transition_matrix=T3,
        labels=[0, 1, 2],
        average="micro",
        estimand="truth",
    )
    assert precision.variance == pytest.approx(score.variance, rel=1e-12)
    cm = expected_confusion_matrix(
        y_obs, y_pred, transition_matrix=T3, labels=[0, 1, 2], estimand="truth"
    )
    assert cm.variance[0, 0] == pytest.approx(16.4, rel=1e-12)
    assert np.all(cm.variance[:, 0] > 0)


@pytest.mark.parametrize(
    "noise",
    [{"transition_matrix": T3}, {"q": 0.3}, {"q": np.linspace(0.05, 0.4, 12)}],
    ids=["matrix", "q", "per-sample-q"],
)
def test_floor_is_a_lower_bound_and_the_estimate_unbiased(noise):
    """Exact enumeration over every labelling of six samples."""
    rng = np.random.default_rng(4)
    true = rng.integers(0, 3, 6)
    pred = rng.integers(0, 3, 6)
    if "q" in noise and np.ndim(noise["q"]):
        noise = {"q": noise["q"][:6]}
    flip = FlipNoise.from_params(
        noise.get("q"), noise.get("transition_matrix"), n_samples=6, n_classes=3
    )
    matrices = [
        flip.shared_matrix()
        if flip.is_constant
        else np.full((3, 3), q / 2) + np.eye(3) * (1 - 1.5 * q)
        for q in (flip.q if not flip.is_constant else [None] * 6)
    ]
    estimates, raws, floors, probabilities = [], [], [], []
    for outcome in np.ndindex(*(3,) * 6):
        outcome = np.array(outcome)
        p = np.prod([m[t, o] for m, t, o in zip(matrices, true, outcome, strict=True)])
        encoded = encode_labels(outcome, pred, [0, 1, 2])
        _, estimate, raw, floor = _accuracy_totals("truth", encoded, flip, None)
        estimates.append(estimate)
        raws.append(raw)
        floors.append(floor)
        probabilities.append(p)
    p = np.array(probabilities)
    estimates, raws, floors = map(np.array, (estimates, raws, floors))
    mean = p @ estimates
    variance = p @ (estimates - mean) ** 2
    assert mean == pytest.approx(np.sum(true == pred), abs=1e-12)  # unbiased
    assert p @ raws == pytest.approx(variance, rel=1e-12)  # unbiased variance
    assert np.all(floors <= variance * (1 + 1e-12))  # a lower bound, always
    assert np.all(floors > 0)


@pytest.mark.parametrize("metric", ["brier", "log_loss"])
def test_probabilistic_truth_variance_is_floored(metric):
    rng = np.random.default_rng(2)
    y_obs = np.array([1] * 8)
    proba = rng.dirichlet(np.ones(3), 8)
    function = expected_brier_score_loss if metric == "brier" else expected_log_loss
    score = function(
        y_obs, proba, transition_matrix=T3, labels=[0, 1, 2], estimand="truth"
    )
    loss = (
        np.sum(proba**2, axis=1, keepdims=True) - proba**2 + (1 - proba) ** 2
        if metric == "brier"
        else -np.log(proba)
    )
    inverse = np.linalg.inv(T3)
    u = loss @ inverse.T  # u[i, l] = ℓ̂_i if the label is l
    floor = np.min(u**2 @ T3.T - loss**2, axis=1)  # min_c Var(ℓ̂_i | c)
    raw = np.sum(u[:, 1] ** 2 - (loss**2 @ inverse.T)[:, 1])
    assert score.variance == pytest.approx(max(raw, floor.sum()) / 64, rel=1e-12)
    assert score.variance > 0


def _coverage(n_samples, *, noise, n_classes, n_draws, seed):
    """Share of truth intervals (95 %) covering the true accuracy."""
    rng = np.random.default_rng(seed)
    true = rng.integers(0, n_classes, n_samples)
    pred = np.where(rng.random(n_samples) < 0.7, true, rng.integers(0, 3, n_samples))
    target = np.mean(true == pred)
    matrix = noise.get("transition_matrix")
    if matrix is None:
        q = noise["q"]
        matrix = np.full((n_classes, n_classes), q / (n_classes - 1))
        np.fill_diagonal(matrix, 1 - q)
    cumulative = np.cumsum(matrix, axis=1)[true]
    hits, zero_width = 0, 0
    for _ in range(n_draws):
        u = rng.random((n_samples, 1))
        observed = np.minimum((u > cumulative).sum(axis=1), n_classes - 1)
        score = expected_accuracy_score(
            observed, pred, labels=list(range(n_classes)), estimand="truth", **noise
        )
        low, high = score.confidence_interval(0.95)
        hits += low <= target <= high
        zero_width += high == low
    return hits / n_draws, zero_width


@pytest.mark.parametrize("n_samples", [20, 50, 200])
@pytest.mark.parametrize(
    "noise",
    [{"transition_matrix": T3}, {"q": 0.2}],
    ids=["matrix", "q"],
)
def test_truth_interval_coverage(n_samples, noise):
    """Seeded coverage of the 95 % truth interval of accuracy, 3 classes.

    Measured (2,000 draws): matrix 0.955 / 0.952 / 0.953 and q = 0.2
    0.945 / 0.950 / 0.948 at M = 20 / 50 / 200 (docs: verification).
    """
    coverage, zero_width = _coverage(
        n_samples, noise=noise, n_classes=3, n_draws=400, seed=n_samples
    )
    assert zero_width == 0
    # 400 draws: the binomial SD of a 95 % coverage is 0.011
    assert 0.90 <= coverage <= 0.99, coverage
