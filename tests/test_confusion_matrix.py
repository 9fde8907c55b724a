"""expected_confusion_matrix: scikit-learn at q = 0, closed forms, Monte Carlo."""

import pickle

import numpy as np
import pytest
from sklearn.metrics import confusion_matrix

from sklearn_noisy import (
    NoisyConfusionMatrix,
    expected_accuracy_score,
    expected_confusion_matrix,
)


def draw_labels(rng, k, n_classes, *, q=None, matrix=None, n_draws=10_000):
    k = np.asarray(k)
    if matrix is not None:
        cumulative = np.cumsum(matrix, axis=1)[k]
        u = rng.random((n_draws, k.size, 1))
        return np.minimum((u > cumulative).sum(axis=2), n_classes - 1)
    flip = rng.random((n_draws, k.size)) < np.asarray(q)
    shift = rng.integers(1, n_classes, size=(n_draws, k.size))
    return np.where(flip, (k + shift) % n_classes, k)


def mc_counts(obs, pred, n_classes, weight=None):
    """Confusion matrices of every draw, shape (n_draws, K, K)."""
    n_draws, m = obs.shape
    cell = obs * n_classes + pred[None, :]
    w = np.ones(m) if weight is None else weight
    out = np.zeros((n_draws, n_classes * n_classes))
    rows = np.repeat(np.arange(n_draws), m)
    np.add.at(out, (rows, cell.ravel()), np.tile(w, n_draws))
    return out.reshape(n_draws, n_classes, n_classes)


def assert_counts_agree(samples, expected, variance):
    n = samples.shape[0]
    mean = samples.mean(axis=0)
    centred = samples - mean
    mc_var = centred.var(axis=0)
    m4 = np.mean(centred**4, axis=0)
    se_mean = np.sqrt(mc_var / n)
    se_var = np.sqrt(np.maximum(m4 - mc_var**2, 0.0) / n)
    assert np.all(np.abs(mean - expected) <= 5 * se_mean + 1e-9), (mean, expected)
    assert np.all(np.abs(mc_var - variance) <= 5 * se_var + 1e-9), (mc_var, variance)


@pytest.mark.parametrize(
    "y_true, y_pred, labels",
    [
        ([0, 1, 1, 0, 1], [0, 1, 0, 0, 1], None),
        (["cat", "dog", "dog", "bird"], ["cat", "dog", "bird", "bird"], None),
        (
            ["cat", "dog", "dog", "bird"],
            ["cat", "dog", "bird", "bird"],
            ["dog", "bird", "cat"],
        ),
        ([2, 0, 2, 2, 0, 1], [0, 0, 2, 2, 0, 2], [2, 1, 0]),
        ([1, 1, 1], [1, 1, 1], [0, 1]),
    ],
)
def test_q_zero_equals_sklearn(y_true, y_pred, labels):
    cm = expected_confusion_matrix(y_true, y_pred, q=0.0, labels=labels)
    reference = confusion_matrix(y_true, y_pred, labels=labels)
    np.testing.assert_array_equal(cm.nominal, reference)
    assert cm.nominal.dtype == reference.dtype
    np.testing.assert_allclose(cm.expected, reference, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(cm.variance, 0.0)
    np.testing.assert_array_equal(
        cm.labels, labels if labels is not None else np.unique(np.r_[y_true, y_pred])
    )


def test_q_zero_with_weights_and_per_sample_q_equals_sklearn():
    rng = np.random.default_rng(0)
    y_true = rng.integers(0, 4, 5000)
    y_pred = rng.integers(0, 4, 5000)
    weight = rng.uniform(0.1, 2.0, 5000)
    reference = confusion_matrix(y_true, y_pred, sample_weight=weight)
    for q in (0.0, np.zeros(5000)):
        cm = expected_confusion_matrix(
            y_true, y_pred, q=q, sample_weight=weight, estimand="forward"
        )
        np.testing.assert_allclose(cm.nominal, reference, rtol=1e-12)
        np.testing.assert_allclose(cm.expected, reference, rtol=1e-12)
        np.testing.assert_array_equal(cm.variance, 0.0)


def test_integer_weights_give_integer_counts_as_sklearn():
    y_true, y_pred, weight = [0, 1, 1, 2], [0, 1, 2, 2], [1, 2, 3, 4]
    cm = expected_confusion_matrix(y_true, y_pred, q=0.1, sample_weight=weight)
    reference = confusion_matrix(y_true, y_pred, sample_weight=weight)
    assert cm.nominal.dtype == reference.dtype
    np.testing.assert_array_equal(cm.nominal, reference)


def test_binary_closed_form():
    y_true = np.array([1, 1, 0, 0, 1])
    y_pred = np.array([1, 0, 0, 1, 1])
    q = 0.2
    cm = expected_confusion_matrix(y_true, y_pred, q=q, estimand="forward")
    n = confusion_matrix(y_true, y_pred)  # rows: label, columns: prediction
    flipped = np.array([[1 - q, q], [q, 1 - q]])
    np.testing.assert_allclose(cm.expected, flipped.T @ n, rtol=1e-14)
    np.testing.assert_allclose(
        cm.variance, q * (1 - q) * n.sum(axis=0)[None, :] * np.ones((2, 1)), rtol=1e-14
    )
    # each column keeps its number of predictions
    np.testing.assert_allclose(cm.expected.sum(axis=0), n.sum(axis=0), rtol=1e-14)


def test_consistent_with_expected_accuracy():
    rng = np.random.default_rng(1)
    y_true = rng.integers(0, 3, 300)
    y_pred = rng.integers(0, 3, 300)
    q = rng.uniform(0.0, 0.5, 300)
    weight = rng.uniform(0.5, 2.0, 300)
    cm = expected_confusion_matrix(y_true, y_pred, q=q, sample_weight=weight)
    acc = expected_accuracy_score(y_true, y_pred, q=q, sample_weight=weight)
    assert np.trace(cm.expected) / weight.sum() == pytest.approx(
        acc.expected, rel=1e-12
    )
    np.testing.assert_allclose(
        cm.expected.sum(axis=0), np.bincount(y_pred, weights=weight), rtol=1e-12
    )


@pytest.mark.parametrize("kind", ["binary_q", "per_sample_q", "multiclass_q", "matrix"])
def test_monte_carlo(kind):
    rng = np.random.default_rng(
        ["binary_q", "per_sample_q", "multiclass_q", "matrix"].index(kind)
    )
    m = 30
    n_classes = 2 if kind in ("binary_q", "per_sample_q") else 3
    k = rng.integers(0, n_classes, m)
    pred = np.where(rng.random(m) < 0.6, k, rng.integers(0, n_classes, m))
    weight = rng.uniform(0.5, 2.0, m) if kind in ("per_sample_q", "matrix") else None
    matrix = q = None
    if kind == "binary_q":
        q = 0.2
    elif kind == "per_sample_q":
        q = rng.uniform(0.0, 0.5, m)
    elif kind == "multiclass_q":
        q = rng.uniform(0.0, 0.6, m)
    else:
        matrix = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.1, 0.6]])
    cm = expected_confusion_matrix(
        k,
        pred,
        q=q,
        transition_matrix=matrix,
        sample_weight=weight,
        labels=range(n_classes),
        estimand="forward",
    )
    obs = draw_labels(rng, k, n_classes, q=q, matrix=matrix)
    assert_counts_agree(
        mc_counts(obs, pred, n_classes, weight), cm.expected, cm.variance
    )


def test_string_labels_and_label_order():
    labels = np.array(["b", "c", "a"])
    matrix = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.1, 0.6]])
    y_true = np.array(["a", "b", "c", "c", "a", "b", "b"])
    y_pred = np.array(["a", "c", "c", "b", "a", "a", "b"])
    cm = expected_confusion_matrix(
        y_true, y_pred, transition_matrix=matrix, labels=labels
    )
    np.testing.assert_array_equal(cm.labels, labels)
    np.testing.assert_array_equal(
        cm.nominal, confusion_matrix(y_true, y_pred, labels=labels)
    )
    # the same model in sorted order gives the same matrix, permuted
    order = np.argsort(labels)
    sorted_cm = expected_confusion_matrix(
        y_true, y_pred, transition_matrix=matrix[np.ix_(order, order)]
    )
    np.testing.assert_allclose(
        sorted_cm.expected, cm.expected[np.ix_(order, order)], rtol=1e-14
    )
    np.testing.assert_allclose(
        sorted_cm.variance, cm.variance[np.ix_(order, order)], rtol=1e-14
    )


def test_result_object_is_frozen_read_only_and_pickles():
    cm = expected_confusion_matrix([0, 1, 2, 1], [0, 2, 2, 1], q=0.1)
    assert isinstance(cm, NoisyConfusionMatrix)
    with pytest.raises(AttributeError):
        cm.expected = np.zeros((3, 3))
    with pytest.raises(ValueError):
        cm.expected[0, 0] = 1.0
    np.testing.assert_allclose(cm.std, np.sqrt(cm.variance))
    clone = pickle.loads(pickle.dumps(cm))
    for field in ("expected", "variance", "nominal", "labels"):
        np.testing.assert_array_equal(getattr(clone, field), getattr(cm, field))
    assert clone.n_samples == 4
    assert "NoisyConfusionMatrix" in repr(cm)
    fields = dict(expected=cm.expected, variance=cm.variance, nominal=cm.nominal)
    fields.update(labels=cm.labels, n_samples=4)
    with pytest.raises(ValueError, match="estimand must be one of"):
        NoisyConfusionMatrix(**fields, estimand="true")
    with pytest.raises(ValueError, match="method must be 'exact' or 'delta'"):
        NoisyConfusionMatrix(**fields, method="normal")


def test_errors_and_no_mutation():
    with (
        pytest.raises(ValueError, match="labels"),
        pytest.warns(UserWarning, match="single label"),
    ):
        expected_confusion_matrix([1, 1], [1, 1], q=0.1)
    # a subset of the classes is scikit-learn's labels=, but a transition
    # matrix is indexed by labels and needs every class
    with pytest.raises(ValueError, match="not in `labels`"):
        expected_confusion_matrix(
            [0, 1, 2], [0, 1, 1], transition_matrix=np.eye(2), labels=[0, 1]
        )
    with pytest.raises(ValueError, match="3 x 3"):
        expected_confusion_matrix([0, 1, 2], [0, 1, 1], transition_matrix=np.eye(2))
    with pytest.raises(TypeError):
        expected_confusion_matrix([0, 1], [0, 1])
    y_true = np.array([0, 1, 2, 1])
    y_pred = np.array([0, 2, 2, 1])
    q = np.array([0.1, 0.2, 0.3, 0.4])
    before = [a.copy() for a in (y_true, y_pred, q)]
    expected_confusion_matrix(y_true, y_pred, q=q)
    for a, b in zip((y_true, y_pred, q), before, strict=True):
        np.testing.assert_array_equal(a, b)
