"""expected_confusion_matrix: labels as a subset, normalize, dtype, weights."""

import pickle

import numpy as np
import pytest
import sklearn.metrics as sk

from sklearn_noisy.metrics import expected_accuracy_score, expected_confusion_matrix

N_DRAWS = 4000


def _draw(rng, true, q, n_classes, n_draws=N_DRAWS):
    flip = rng.random((n_draws, true.size)) < q
    shift = rng.integers(1, n_classes, size=(n_draws, true.size))
    return np.where(flip, (true + shift) % n_classes, true)


def _monte_carlo(observed, pred, *, labels=None, normalize=None):
    """scikit-learn's confusion matrix of every draw, by one vectorised count.

    Bit for bit ``sk.confusion_matrix(o, pred, labels=labels,
    normalize=normalize)`` for each draw ``o`` (checked on the first draws):
    integer counts of the pairs whose both labels are in ``labels``, divided as
    scikit-learn divides them.
    """
    options = {"labels": labels, "normalize": normalize}
    if labels is None:
        labels = np.unique(np.r_[observed.ravel(), pred])
    labels = np.asarray(labels)
    n_labels = labels.size
    lookup = np.full(max(observed.max(), pred.max(), labels.max()) + 1, -1)
    lookup[labels] = np.arange(n_labels)
    true_index, pred_index = lookup[observed], lookup[pred][None, :]
    keep = (true_index >= 0) & (pred_index >= 0)
    draw = np.arange(observed.shape[0])[:, None]
    cell = (draw * n_labels + true_index) * n_labels + pred_index
    counts = np.bincount(cell[keep], minlength=observed.shape[0] * n_labels**2)
    cm = counts.reshape(-1, n_labels, n_labels)
    with np.errstate(all="ignore"):
        if normalize == "true":
            cm = cm / cm.sum(axis=2, keepdims=True)
        elif normalize == "pred":
            cm = cm / cm.sum(axis=1, keepdims=True)
        elif normalize == "all":
            cm = cm / cm.sum(axis=(1, 2), keepdims=True)
        cm = np.nan_to_num(cm)
    for o, mine in zip(observed[:20], cm[:20], strict=True):
        theirs = sk.confusion_matrix(o, pred, **options)
        np.testing.assert_array_equal(mine, theirs)
        assert mine.dtype == theirs.dtype
    return cm


def _setting(seed=0, n_samples=300):
    rng = np.random.default_rng(seed)
    true = rng.integers(0, 4, n_samples)
    pred = np.where(rng.random(n_samples) < 0.6, true, rng.integers(0, 4, n_samples))
    q = rng.uniform(0.05, 0.3, n_samples)
    return rng, true, pred, q


@pytest.mark.parametrize(
    "labels, normalize, method",
    [
        (None, "pred", "exact"),
        (None, "all", "exact"),
        ([0, 1, 2, 3], "pred", "exact"),
        (None, "true", "delta"),
        ([2, 0], None, "exact"),
        ([2, 0], "pred", "delta"),
        ([2, 0, 3], "all", "delta"),
        ([3, 1], "true", "delta"),
    ],
)
def test_normalised_and_subset_matrices_against_monte_carlo(labels, normalize, method):
    rng, true, pred, q = _setting()
    options = {"labels": labels, "normalize": normalize}
    cm = expected_confusion_matrix(
        true, pred, q=q, **{"estimand": "forward", **options}
    )
    assert cm.method == method
    assert cm.normalize == normalize
    samples = _monte_carlo(_draw(rng, true, q, 4), pred, **options)
    mean, var = samples.mean(axis=0), samples.var(axis=0)
    se_mean = np.sqrt(var / N_DRAWS)
    centred = samples - mean
    se_var = np.sqrt(np.maximum(np.mean(centred**4, axis=0) - var**2, 0) / N_DRAWS)
    # exact moments: 5 standard errors; the delta method (denominators of
    # ~75 samples) adds its own error, a few per cent of the variance
    slack = 0.0 if method == "exact" else 0.05
    assert np.all(np.abs(cm.expected - mean) <= 5 * se_mean + 1e-12 + slack * se_var)
    assert np.all(np.abs(cm.variance - var) <= 5 * se_var + 1e-15 + slack * var)


def test_exact_normalisations_are_scaled_counts():
    _, true, pred, q = _setting(1)
    raw = expected_confusion_matrix(true, pred, q=q, estimand="forward")
    columns = np.bincount(pred, minlength=4)
    pred_norm = expected_confusion_matrix(
        true, pred, q=q, normalize="pred", estimand="forward"
    )
    np.testing.assert_allclose(pred_norm.expected, raw.expected / columns, rtol=1e-14)
    np.testing.assert_allclose(
        pred_norm.variance, raw.variance / columns**2, rtol=1e-14
    )
    every = expected_confusion_matrix(
        true, pred, q=q, normalize="all", estimand="forward"
    )
    np.testing.assert_allclose(every.expected, raw.expected / true.size, rtol=1e-14)


def test_truth_estimate_of_a_normalised_matrix_is_unbiased_where_exact():
    rng, true, pred, q = _setting(2, n_samples=100)
    target = sk.confusion_matrix(true, pred, normalize="pred")
    observed = _draw(rng, true, q, 4, n_draws=2000)
    estimates = np.array(
        [
            expected_confusion_matrix(
                o, pred, q=q, normalize="pred", estimand="truth"
            ).expected
            for o in observed
        ]
    )
    se = estimates.std(axis=0) / np.sqrt(estimates.shape[0])
    assert np.all(np.abs(estimates.mean(axis=0) - target) <= 5 * se + 1e-12)


def test_subset_with_q_counts_the_flips_of_every_class():
    """K counts the classes outside labels: q/(K-1) to each other class."""
    y_true, y_pred = [0, 1, 2, 2], [0, 1, 2, 0]
    cm = expected_confusion_matrix(
        y_true, y_pred, q=0.3, labels=[0, 2], estimand="forward"
    )
    full = expected_confusion_matrix(y_true, y_pred, q=0.3, estimand="forward")
    np.testing.assert_array_equal(cm.expected, full.expected[np.ix_([0, 2], [0, 2])])
    np.testing.assert_array_equal(cm.variance, full.variance[np.ix_([0, 2], [0, 2])])
    np.testing.assert_array_equal(cm.labels, [0, 2])
    # a class of labels absent from the data still counts in K
    wider = expected_confusion_matrix(
        y_true, y_pred, q=0.3, labels=[0, 1, 2, 3], estimand="forward"
    )
    # column 0: two predictions, each observed as 3 with 0.3/(4 - 1)
    assert wider.expected[3, 0] == pytest.approx(0.2, abs=1e-15)


def test_dtype_is_scikit_learns_at_zero_noise_only():
    y_true, y_pred = [0, 1, 2, 2], [0, 1, 1, 2]
    reference = sk.confusion_matrix(y_true, y_pred)
    for noise in ({"q": 0}, {"q": np.zeros(4)}, {"transition_matrix": np.eye(3)}):
        for estimand in ("forward", "truth", "remeasurement"):
            cm = expected_confusion_matrix(y_true, y_pred, estimand=estimand, **noise)
            assert cm.expected.dtype == np.int64
            np.testing.assert_array_equal(cm.expected, reference)
    assert (
        expected_confusion_matrix(
            y_true, y_pred, q=0.1, estimand="forward"
        ).expected.dtype
        == float
    )
    weighted = expected_confusion_matrix(
        y_true, y_pred, q=0, sample_weight=[1.5] * 4, estimand="forward"
    )
    assert weighted.expected.dtype == float


@pytest.mark.parametrize("size", [1e-150, 1e120])
def test_weights_far_from_one_keep_their_counts(size):
    y_true, y_pred = [0, 1, 1, 0], [0, 1, 0, 0]
    weight = np.array([1.0, 2.0, 3.0, 4.0]) * size
    cm = expected_confusion_matrix(
        y_true, y_pred, q=0.1, sample_weight=weight, estimand="forward"
    )
    base = expected_confusion_matrix(
        y_true, y_pred, q=0.1, sample_weight=weight / size, estimand="forward"
    )
    np.testing.assert_allclose(cm.expected, base.expected * size, rtol=1e-14)
    np.testing.assert_allclose(cm.nominal, base.nominal * size, rtol=1e-14)
    np.testing.assert_allclose(cm.variance, base.variance * size**2, rtol=1e-14)
    count = expected_accuracy_score(
        y_true, y_pred, q=0.1, sample_weight=weight, normalize=False, estimand="forward"
    )
    assert count.expected == pytest.approx(np.trace(cm.expected), rel=1e-14)
    assert count.nominal == sk.accuracy_score(
        y_true, y_pred, sample_weight=weight, normalize=False
    )


def test_accuracy_count_is_the_trace():
    _, true, pred, q = _setting(3)
    count = expected_accuracy_score(
        true, pred, q=q, normalize=False, estimand="forward"
    )
    cm = expected_confusion_matrix(true, pred, q=q, estimand="forward")
    assert count.expected == pytest.approx(np.trace(cm.expected), rel=1e-13)
    rate = expected_accuracy_score(true, pred, q=q, estimand="forward")
    assert count.variance == pytest.approx(rate.variance * true.size**2, rel=1e-13)
    assert count.nominal == sk.accuracy_score(true, pred, normalize=False)


def test_read_only_after_pickling():
    cm = expected_confusion_matrix(
        [0, 1, 2], [0, 2, 2], q=0.1, normalize="true", estimand="forward"
    )
    clone = pickle.loads(pickle.dumps(cm))
    for field in ("expected", "variance", "nominal", "labels"):
        assert not getattr(clone, field).flags.writeable
        np.testing.assert_array_equal(getattr(clone, field), getattr(cm, field))
    assert (clone.method, clone.normalize) == ("delta", "true")
    assert "normalize='true'" in repr(clone)


def test_normalize_and_labels_errors_as_sklearn():
    with pytest.raises(ValueError, match="normalize must be one of"):
        expected_confusion_matrix(
            [0, 1], [0, 1], q=0.1, normalize="rows", estimand="forward"
        )
    with pytest.raises(ValueError, match="At least one label"):
        expected_confusion_matrix([0, 1], [0, 1], q=0.1, labels=[5], estimand="forward")
    with pytest.raises(ValueError, match="non-empty"):
        expected_confusion_matrix([0, 1], [0, 1], q=0.1, labels=[], estimand="forward")
