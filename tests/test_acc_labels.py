"""Label handling: one-class folds, string labels of every array type, overflow."""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn.metrics as sk
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold, cross_val_score

from sklearn_noisy.metrics import (
    expected_accuracy_score,
    expected_balanced_accuracy_score,
    expected_brier_score_loss,
    expected_confusion_matrix,
    expected_f1_score,
    expected_log_loss,
    expected_matthews_corrcoef,
    expected_mean_squared_error,
    expected_precision_score,
    expected_recall_score,
    make_noisy_scorer,
)
from sklearn_noisy.utils._labels import LabelTypeError, as_label_array

ESTIMANDS = ["forward", "truth", "remeasurement"]


# --------------------------------------------------------------------------- #
# A fold with one class
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("estimand", ESTIMANDS)
@pytest.mark.parametrize(
    "noise",
    [{"q": 0}, {"q": 0.0}, {"q": np.zeros(3)}, {"transition_matrix": [[1.0]]}],
    ids=["int", "float", "per-sample", "matrix"],
)
def test_one_class_is_scikit_learn(estimand, noise):
    score = expected_accuracy_score([0, 0, 0], [0, 0, 0], estimand=estimand, **noise)
    assert (score.expected, score.variance, score.nominal) == (1.0, 0.0, 1.0)
    with pytest.warns(UserWarning, match="single label"):
        cm = expected_confusion_matrix(["a"] * 3, ["a"] * 3, estimand=estimand, **noise)
    reference = sk.confusion_matrix(["a"] * 3, ["a"] * 3)
    np.testing.assert_array_equal(cm.expected, reference)
    assert cm.expected.dtype == reference.dtype == np.int64


def test_one_class_with_flips_needs_the_classes():
    with pytest.raises(
        ValueError, match=r"flip probability q.*Pass all the classes.*labels"
    ):
        expected_accuracy_score([0, 0, 0], [0, 0, 0], q=0.1, estimand="forward")
    with pytest.raises(ValueError, match=r"flip probability q.*labels"):
        expected_accuracy_score(
            [0, 0, 0], [0, 0, 0], q=[0.0, 0.1, 0.0], estimand="forward"
        )
    # with the classes known the flips are defined: 1 - q, exactly
    score = expected_accuracy_score(
        [0, 0, 0], [0, 0, 0], q=0.1, labels=[0, 1], estimand="forward"
    )
    assert score.expected == pytest.approx(0.9, abs=1e-15)
    assert score.variance == pytest.approx(0.09 / 3, abs=1e-15)
    # a transition matrix names its classes through labels too
    matrix = [[0.8, 0.2], [0.3, 0.7]]
    score = expected_accuracy_score(
        [1, 1], [1, 1], transition_matrix=matrix, labels=[0, 1], estimand="forward"
    )
    assert score.expected == pytest.approx(0.7, abs=1e-15)
    with pytest.raises(ValueError, match="1 x 1"):
        expected_accuracy_score(
            [1, 1], [1, 1], transition_matrix=matrix, estimand="forward"
        )


def test_one_class_folds_in_cross_validation():
    """The issue's imbalanced example: no NaN folds at q = 0."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 2))
    y = np.r_[np.zeros(95, dtype=int), np.ones(5, dtype=int)]
    scorer = make_noisy_scorer("accuracy", q=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no failed fold
        ours = cross_val_score(LogisticRegression(), X, y, cv=5, scoring=scorer)
    theirs = cross_val_score(LogisticRegression(), X, y, cv=5, scoring="accuracy")
    assert not np.isnan(ours).any()
    np.testing.assert_array_equal(ours, theirs)
    stratified = StratifiedKFold(5)
    assert not np.isnan(
        cross_val_score(LogisticRegression(), X, y, cv=stratified, scoring=scorer)
    ).any()


# --------------------------------------------------------------------------- #
# String labels held in different array types
# --------------------------------------------------------------------------- #
Y_TRUE = np.array(["cat", "dog", "dog", "cat", "bird", "dog", "cat", "cat"])
Y_PRED = np.array(["cat", "dog", "cat", "cat", "bird", "bird", "dog", "cat"])
BINARY_TRUE = np.array(["no", "yes", "yes", "no", "yes", "no", "no", "yes"])
BINARY_PRED = np.array(["no", "yes", "no", "no", "yes", "yes", "no", "yes"])


def _forms(values):
    series = pd.Series(values)
    return {
        "numpy": values,
        "str": series.astype("str"),
        "string": series.astype("string"),
        "category": series.astype("category"),
        "object": values.astype(object),
        "object-series": series.astype(object),
    }


FORM_PAIRS = [
    (a, b)
    for a in ("numpy", "str", "string", "category", "object", "object-series")
    for b in ("numpy", "str", "category", "object")
    if a != b
]


def _count_metrics(binary):
    """(ours, scikit-learn's, options) for every count metric."""
    options = {"pos_label": "yes"} if binary else {"average": "macro"}
    return [
        (expected_accuracy_score, sk.accuracy_score, {}),
        (expected_precision_score, sk.precision_score, options),
        (expected_recall_score, sk.recall_score, options),
        (expected_f1_score, sk.f1_score, options),
        (expected_balanced_accuracy_score, sk.balanced_accuracy_score, {}),
        (expected_matthews_corrcoef, sk.matthews_corrcoef, {}),
    ]


@pytest.mark.parametrize("true_form, pred_form", FORM_PAIRS)
@pytest.mark.parametrize("binary", [True, False], ids=["binary", "multiclass"])
def test_string_labels_of_different_array_types(true_form, pred_form, binary):
    y_true, y_pred = (BINARY_TRUE, BINARY_PRED) if binary else (Y_TRUE, Y_PRED)
    true, pred = _forms(y_true)[true_form], _forms(y_pred)[pred_form]
    metrics = _count_metrics(binary)
    if not binary:  # every metric's labels go through the binary case above;
        # the multiclass averages, BA and MCC draw Monte Carlo samples today
        # (seconds per call), so multiclass checks accuracy and the matrix
        metrics = metrics[:1]
    for ours, theirs, options in metrics:
        reference = theirs(true, pred, **options)
        exact = ours(true, pred, q=0.0, **options)
        assert exact.expected == pytest.approx(reference, abs=1e-12), ours
        assert exact.nominal == pytest.approx(reference, abs=1e-12), ours
        if binary or ours is expected_accuracy_score:  # exact: no Monte Carlo
            noisy = ours(true, pred, q=0.1, **options)
            plain = ours(y_true, y_pred, q=0.1, **options)
            assert noisy.expected == pytest.approx(plain.expected, rel=1e-12), ours
            assert noisy.variance == pytest.approx(plain.variance, rel=1e-12), ours
    cm = expected_confusion_matrix(true, pred, q=0.1)
    plain = expected_confusion_matrix(y_true, y_pred, q=0.1)
    np.testing.assert_array_equal(cm.expected, plain.expected)
    np.testing.assert_array_equal(cm.labels, plain.labels)


@pytest.mark.parametrize("form", ["numpy", "str", "category", "object"])
def test_string_labels_for_the_probabilistic_losses(form):
    y_true = _forms(BINARY_TRUE)[form]
    proba = np.linspace(0.1, 0.9, BINARY_TRUE.size)
    brier = expected_brier_score_loss(y_true, proba, q=0.0, pos_label="yes")
    assert brier.expected == sk.brier_score_loss(BINARY_TRUE, proba, pos_label="yes")
    two = np.c_[1 - proba, proba]
    loss = expected_log_loss(y_true, two, q=0.0)
    assert loss.expected == sk.log_loss(BINARY_TRUE, two)


def test_labels_from_a_fitted_model_on_a_series():
    """Object predictions of a model fitted on a pandas Series of strings."""
    X = np.arange(8.0)[:, None]
    y = pd.Series(BINARY_TRUE, dtype="str")
    model = LogisticRegression().fit(X, y)
    pred = model.predict(X)
    assert pred.dtype == object
    for ours, theirs, options in _count_metrics(True):
        score = ours(BINARY_TRUE, pred, q=0.0, labels=model.classes_, **options)
        assert score.expected == pytest.approx(
            theirs(BINARY_TRUE, pred, **options), abs=1e-12
        )


def test_label_arrays_are_canonical():
    assert (
        as_label_array(np.array(["a", "b"], dtype=object), name="y").dtype.kind == "U"
    )
    assert as_label_array(pd.Series([3, 1], dtype=object), name="y").dtype == np.int64
    big = np.array([2**63 + 5, 1], dtype=object)
    assert as_label_array(big, name="y").dtype == np.uint64
    long_strings = np.array(["x" * 100, "y"], dtype=object)  # kept as object
    assert as_label_array(long_strings, name="y").dtype == object
    with pytest.raises(LabelTypeError, match="mix label types") as info:
        expected_accuracy_score(["a", "b"], [0, 1], q=0.1)
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)
    error = pickle.loads(pickle.dumps(info.value))
    assert isinstance(error, LabelTypeError)


# --------------------------------------------------------------------------- #
# Numbers beyond the float or int64 range
# --------------------------------------------------------------------------- #
HUGE = 2**1100


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: expected_accuracy_score([2**70, 1], [1, 1], q=0.1), "y_true.*64-bit"),
        (lambda: expected_accuracy_score([1, 1], [HUGE, 1], q=0.1), "y_pred.*64-bit"),
        (
            lambda: expected_confusion_matrix([0, 1], [0, 1], q=0.1, labels=[HUGE, 0]),
            "labels.*64-bit",
        ),
        (
            lambda: expected_accuracy_score([0, 1], [0, 1], q=HUGE),
            "q holds a number beyond the float64 range",
        ),
        (
            lambda: expected_accuracy_score([0, 1], [0, 1], q=[HUGE, 0]),
            "q holds a number beyond the float64 range",
        ),
        (
            lambda: expected_accuracy_score(
                [0, 1], [0, 1], q=0, sample_weight=[HUGE, 1]
            ),
            "sample_weight holds a number beyond the float64 range",
        ),
        (
            lambda: expected_log_loss([0, 1], [0.2, 0.6], q=0, sample_weight=[HUGE, 1]),
            "sample_weight holds a number beyond the float64 range",
        ),
        (
            lambda: expected_mean_squared_error([0.0, 1.0], [0.0, 1.0], sigma=HUGE),
            "sigma holds a number beyond the float64 range",
        ),
    ],
)
def test_numbers_beyond_range_are_a_clear_value_error(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_python_int_weights_within_float_range_are_accepted_as_sklearn():
    weight = [2**70, 1, 3]
    y_true, y_pred = [0, 1, 1], [0, 1, 0]
    score = expected_accuracy_score(y_true, y_pred, q=0, sample_weight=weight)
    assert score.expected == sk.accuracy_score(y_true, y_pred, sample_weight=weight)


def test_float32_transition_matrix_is_accepted():
    matrix = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4]])
    y_true, y_pred = [0, 1, 2, 2, 1], [0, 1, 1, 2, 0]
    single = expected_accuracy_score(
        y_true, y_pred, transition_matrix=matrix.astype(np.float32)
    )
    double = expected_accuracy_score(y_true, y_pred, transition_matrix=matrix)
    # rows that sum to 1 in float32 are off by ~1e-8 in float64: accepted
    assert single.expected == pytest.approx(double.expected, rel=1e-6)
    assert single.variance == pytest.approx(double.variance, rel=1e-6)
