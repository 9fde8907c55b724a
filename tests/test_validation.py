"""Tests of the shared input validation in :mod:`sklearn_noisy.utils._validation`."""

import inspect
import warnings

import numpy as np
import pytest

from sklearn_noisy import (
    expected_accuracy_score,
    expected_mean_absolute_error,
    expected_mean_squared_error,
)
from sklearn_noisy.metrics import get_metric_info, get_metric_names
from sklearn_noisy.utils._arrays import (
    as_float_array,
    check_finite,
    check_sample_weight,
)
from sklearn_noisy.utils._labels import check_classification_labels
from sklearn_noisy.utils._noise import (
    check_flip_probability,
    check_noise_model,
    check_sigma,
    check_transition_matrix,
)
from sklearn_noisy.utils._validation import (
    check_estimand,
    check_level,
    check_regression_inputs,
)

REGRESSION_METRICS = [expected_mean_squared_error, expected_mean_absolute_error]


# --- numbers and finiteness -----------------------------------------------------


@pytest.mark.parametrize("value", [0, 1, 1.5, -0.1, np.nan, True, "0.9", None])
def test_check_level_as_scikit_learn(value):
    # validate_params' Interval(Real, 0, 1, closed="neither") raises its
    # InvalidParameterError, a ValueError and a TypeError, for every bad value.
    with pytest.raises(ValueError, match="power must be a float") as info:
        check_level(value, "power")
    assert isinstance(info.value, TypeError)
    assert check_level(np.float32(0.5)) == 0.5


def test_as_float_array_conversions():
    plain = np.array([1.0, 2.0])
    assert as_float_array(plain, name="x") is plain  # no copy for float64
    converted = as_float_array([1, 2], name="x")
    assert converted.dtype == np.float64
    assert as_float_array(np.array([1, 0], dtype=bool), name="x").dtype == np.float64
    single = as_float_array(np.float32([0.1]), name="x")
    assert single.dtype == np.float64 and single[0] == np.float64(np.float32(0.1))


def test_as_float_array_rejects_non_numbers():
    with pytest.raises(TypeError, match="y_true must hold real numbers"):
        as_float_array(["a", "b"], name="y_true")
    with pytest.raises(TypeError, match="y_pred must hold real numbers"):
        as_float_array([1 + 2j], name="y_pred")
    with pytest.raises(TypeError, match="sigma must be array-like of numbers"):
        as_float_array([[1.0], [1.0, 2.0]], name="sigma")


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_check_finite_names_the_parameter_and_index(bad):
    values = np.array([1.0, 2.0, bad, 4.0])
    with pytest.raises(ValueError, match=r"y_pred must be finite.*index 2"):
        check_finite(values, name="y_pred")
    matrix = np.ones((3, 2))
    matrix[1, 1] = bad
    with pytest.raises(ValueError, match=r"T must be finite.*index \(1, 1\)"):
        check_finite(matrix, name="T")


def test_check_finite_accepts_sums_that_overflow():
    check_finite(np.array([1e308, 1e308, -1e308]), name="x")  # no error
    check_finite(np.array([]), name="x")


# --- sample weights, sigma ------------------------------------------------------


@pytest.mark.parametrize(
    "weight, match",
    [
        ([[1.0, 1.0, 1.0]], "sample_weight must be 1-D"),
        ([1.0, 1.0], "sample_weight must have one entry per sample"),
        ([1.0, np.nan, 1.0], "sample_weight must be finite"),
        ([1.0, -1.0, 1.0], "sample_weight must be non-negative"),
        ([0.0, 0.0, 0.0], "sample_weight must have a positive sum"),
    ],
)
def test_check_sample_weight_errors(weight, match):
    with pytest.raises(ValueError, match=match):
        check_sample_weight(weight, 3)
    for metric in REGRESSION_METRICS:
        with pytest.raises(ValueError, match=match):
            metric([1.0, 2.0, 3.0], [1.0, 2.0, 2.0], sigma=1.0, sample_weight=weight)


def test_check_sample_weight_none_and_types():
    assert check_sample_weight(None, 3) is None
    # ValueError, as scikit-learn raises for the same input.
    with pytest.raises(ValueError, match="sample_weight must hold real numbers"):
        check_sample_weight(["a", "b", "c"], 3)


@pytest.mark.parametrize(
    "sigma, error, match",
    [
        (None, TypeError, "sigma is required"),
        (-0.5, ValueError, "sigma must be non-negative"),
        (np.nan, ValueError, "sigma must be finite"),
        (np.inf, ValueError, "sigma must be finite"),
        (np.array(-1.0), ValueError, "sigma must be non-negative"),
        ([1.0, 1.0], ValueError, "sigma must have one entry per sample"),
        ([1.0, np.nan, 1.0], ValueError, "sigma must be finite"),
        ([1.0, np.inf, 1.0], ValueError, "sigma must be finite"),
        ([1.0, -1e-9, 1.0], ValueError, r"sigma must be non-negative.*index 1"),
        (np.ones((3, 1, 1)), ValueError, "sigma must be a scalar"),
        (["a", "b", "c"], TypeError, "sigma must hold real numbers"),
    ],
)
def test_check_sigma_errors(sigma, error, match):
    with pytest.raises(error, match=match):
        check_sigma(sigma, (3,))
    for metric in REGRESSION_METRICS:
        with pytest.raises(error, match=match):
            metric([1.0, 2.0, 3.0], [1.0, 2.0, 2.0], sigma=sigma)


def test_check_sigma_shapes():
    assert check_sigma(2, (3,)) == 2.0 and isinstance(check_sigma(2, (3,)), float)
    assert isinstance(check_sigma(np.array(0.5), (3,)), float)
    assert isinstance(check_sigma(np.float32(0.5), (3,)), float)
    assert check_sigma([1, 2, 3], (3,)).shape == (3,)
    assert check_sigma([1, 2, 3], (3, 2)).shape == (3, 1)
    assert check_sigma(np.ones((3, 2)), (3, 2)).shape == (3, 2)
    with pytest.raises(ValueError, match=r"sigma must be a scalar.*\(3, 4\)"):
        check_sigma(np.ones((3, 4)), (3, 2))


# --- regression inputs ----------------------------------------------------------


@pytest.mark.parametrize(
    "y_true, y_pred, match",
    [
        (np.ones((2, 2, 2)), np.ones((2, 2, 2)), "y_true must be 1-D or 2-D"),
        ([1.0, 2.0], np.ones((2, 1, 1)), "y_pred must be 1-D or 2-D"),
        ([], [], "y_true is empty"),
        ([1.0, 2.0, 3.0], [1.0, 2.0], "same number of samples"),
        (np.ones((3, 2)), np.ones((3, 3)), "same number of outputs"),
        ([1.0, np.nan, 3.0], [1.0, 2.0, 3.0], "y_true must be finite"),
        ([1.0, 2.0, 3.0], [1.0, 2.0, np.inf], "y_pred must be finite"),
    ],
)
def test_regression_input_errors(y_true, y_pred, match):
    with pytest.raises(ValueError, match=match):
        check_regression_inputs(y_true, y_pred, sigma=1.0)
    for metric in REGRESSION_METRICS:
        with pytest.raises(ValueError, match=match):
            metric(y_true, y_pred, sigma=1.0)


@pytest.mark.parametrize(
    "multioutput, match",
    [
        ("variance_weighted", "'variance_weighted' is offered by R² only"),
        ("mean", "multioutput must be one of"),
        ([1.0, 2.0, 3.0], r"multioutput weights must have shape \(2,\)"),
        ([1.0, np.nan], "multioutput must be finite"),
        ([0.0, 0.0], "multioutput weights must have a non-zero sum"),
    ],
)
def test_multioutput_errors(multioutput, match):
    for metric in REGRESSION_METRICS:
        with pytest.raises(ValueError, match=match):
            metric(
                np.ones((3, 2)), np.zeros((3, 2)), sigma=1.0, multioutput=multioutput
            )


def test_regression_inputs_shapes_and_no_copy():
    y_true = np.arange(4.0)
    y_pred = np.ones((4, 1))
    t, p, s, w, m = check_regression_inputs(y_true, y_pred, sigma=[1, 2, 3, 4])
    assert t.shape == p.shape == s.shape == (4, 1)
    assert np.shares_memory(t, y_true)  # a view, never written to
    assert w is None and m == "uniform_average"


# --- estimand -------------------------------------------------------------------


def test_check_estimand():
    assert check_estimand("forward", metric="mae", supported=("forward",)) == "forward"
    assert check_estimand("truth", metric="mse", supported=("forward", "truth")) == (
        "truth"
    )
    with pytest.raises(ValueError, match="estimand must be one of"):
        check_estimand("true", metric="mse", supported=("forward", "truth"))
    with pytest.raises(ValueError, match="estimand must be one of"):
        check_estimand("measurement", metric="mse", supported=("forward", "truth"))
    with pytest.raises(ValueError, match=r"mae has no unbiased estimator.*'forward'"):
        check_estimand("truth", metric="mae", supported=("forward",))


# --- classification noise -------------------------------------------------------


@pytest.mark.parametrize(
    "q, match",
    [
        (-0.1, "q must be a probability in"),
        (1.5, "q must be a probability in"),
        (np.nan, "q must be a probability in"),
        (np.ones((3, 1)) * 0.1, "q must be a scalar or a 1-D array"),
        ([0.1, 0.2], "q must have one entry per sample"),
        ([0.1, np.nan, 0.2], "q must be finite"),
        ([0.1, 1.2, 0.2], r"q must hold probabilities in \[0, 1\].*index 1"),
        ([0.1, 0.2, -0.01], r"q must hold probabilities.*index 2"),
    ],
)
def test_check_flip_probability_errors(q, match):
    with pytest.raises(ValueError, match=match):
        check_flip_probability(q, 3)


def test_check_flip_probability_values():
    assert check_flip_probability(0, 3) == 0.0
    assert check_flip_probability(1, 3) == 1.0
    np.testing.assert_array_equal(check_flip_probability([0, 0.5, 1], 3), [0, 0.5, 1])


@pytest.mark.parametrize(
    "matrix, match",
    [
        (np.ones(3) / 3, "transition_matrix must be a square 2-D array"),
        (np.ones((2, 3)) / 3, "transition_matrix must be a square 2-D array"),
        (np.eye(3), "transition_matrix must be 2 x 2"),
        ([[1.0, np.nan], [0.0, 1.0]], "transition_matrix must be finite"),
        ([[1.2, -0.2], [0.0, 1.0]], "entries must be probabilities"),
        ([[0.5, 0.4], [0.0, 1.0]], r"row-stochastic.*row 0 sums to 0.9"),
        ([[1.0, 0.0], [0.5, 0.6]], r"row-stochastic.*row 1 sums to 1.1"),
    ],
)
def test_check_transition_matrix_errors(matrix, match):
    with pytest.raises(ValueError, match=match):
        check_transition_matrix(matrix, 2)


def test_check_transition_matrix_accepts_round_off():
    matrix = np.array([[0.1, 0.2, 0.7], [1 / 3, 1 / 3, 1 / 3], [0.0, 0.0, 1.0]])
    assert check_transition_matrix(matrix, 3) is matrix


def test_check_noise_model():
    check_noise_model(0.1, None)
    check_noise_model(None, np.eye(2))
    with pytest.raises(TypeError, match="Pass the label noise: q"):
        check_noise_model(None, None)
    with pytest.raises(TypeError, match="either q or transition_matrix, not both"):
        check_noise_model(0.1, np.eye(2))


# --- class labels ---------------------------------------------------------------


def test_labels_encoded_in_sorted_union():
    true_index, pred_index, classes = check_classification_labels(
        ["b", "a", "c"], ["a", "d", "c"]
    )
    assert classes.tolist() == ["a", "b", "c", "d"]
    assert true_index.tolist() == [1, 0, 2]
    assert pred_index.tolist() == [0, 3, 2]


def test_labels_in_given_order():
    true_index, pred_index, classes = check_classification_labels(
        [2, 0, 1], [1, 1, 2], labels=[2, 0, 1]
    )
    assert classes.tolist() == [2, 0, 1]
    assert true_index.tolist() == [0, 1, 2]
    assert pred_index.tolist() == [2, 2, 0]


def test_float_labels_that_are_integers_are_accepted():
    _, _, classes = check_classification_labels([0.0, 1.0], [1, 0])
    assert classes.tolist() == [0.0, 1.0]


@pytest.mark.parametrize(
    "y_true, y_pred, labels, error, match",
    [
        ([[0, 1], [1, 0]], [0, 1], None, ValueError, "y_true must be a 1-D array"),
        ([0, 1], np.zeros((2, 2)), None, ValueError, "y_pred must be a 1-D array"),
        ([], [], None, ValueError, "y_true is empty"),
        ([0, 1, 1], [0, 1], None, ValueError, "same number of samples"),
        ([0, 1], ["a", "b"], None, TypeError, "mix label types"),
        ([0.5, 1.0], [0.0, 1.0], None, ValueError, "continuous values"),
        ([0.0, np.nan], [0.0, 1.0], None, ValueError, "y_true must be finite"),
        ([0, 1], [0, 1], [[0, 1]], ValueError, "labels must be a non-empty 1-D"),
        ([0, 1], [0, 1], [], ValueError, "labels must be a non-empty 1-D"),
        ([0, 1], [0, 1], [0, 1, 1], ValueError, "labels must not contain duplicates"),
        ([0, 2], [0, 1], [0, 1], ValueError, r"y_true contains labels.*\[2\]"),
        ([0, 1], [0, 5], [0, 1], ValueError, r"y_pred contains labels.*\[5\]"),
    ],
)
def test_classification_label_errors(y_true, y_pred, labels, error, match):
    with pytest.raises(error, match=match):
        check_classification_labels(y_true, y_pred, labels=labels)


# --- the caller's data ----------------------------------------------------------


def _read_only(*arrays):
    copies = []
    for array in arrays:
        array.flags.writeable = False
        copies.append(array.copy())
    return copies


@pytest.mark.parametrize("metric", REGRESSION_METRICS)
@pytest.mark.parametrize("n_samples", [7, 70_000])  # one chunk, and several
def test_inputs_are_never_written(metric, n_samples):
    rng = np.random.default_rng(0)
    y_true = rng.normal(size=(n_samples, 2))
    y_pred = rng.normal(size=(n_samples, 2))
    sigma = rng.uniform(0, 1, n_samples)
    weight = rng.uniform(0, 1, n_samples)
    copies = _read_only(y_true, y_pred, sigma, weight)
    for noise in (sigma, 0.5, 0.0):
        for output in ("raw_values", "uniform_average", np.array([0.3, 0.7])):
            metric(
                y_true, y_pred, sigma=noise, sample_weight=weight, multioutput=output
            )
            metric(y_true[:, 0], y_pred[:, 0], sigma=noise)
    for array, copy in zip((y_true, y_pred, sigma, weight), copies, strict=True):
        np.testing.assert_array_equal(array, copy)


def test_float32_inputs_use_float64_arithmetic():
    rng = np.random.default_rng(1)
    y_true = rng.normal(size=500).astype(np.float32)
    y_pred = rng.normal(size=500).astype(np.float32)
    sigma = rng.uniform(0, 1, 500).astype(np.float32)
    for metric in REGRESSION_METRICS:
        low = metric(y_true, y_pred, sigma=sigma)
        high = metric(
            y_true.astype(np.float64),
            y_pred.astype(np.float64),
            sigma=sigma.astype(np.float64),
        )
        assert low == high
        assert isinstance(low.expected, float)


def test_lists_and_pandas_series_are_accepted():
    pd = pytest.importorskip("pandas")
    y_true = [3.0, -0.5, 2.0, 7.0]
    y_pred = [2.5, 0.0, 2.0, 8.0]
    sigma = [0.5, 0.1, 0.0, 1.0]
    weight = [1.0, 2.0, 1.0, 0.5]
    for metric in REGRESSION_METRICS:
        reference = metric(
            np.array(y_true),
            np.array(y_pred),
            sigma=np.array(sigma),
            sample_weight=np.array(weight),
        )
        as_lists = metric(y_true, y_pred, sigma=sigma, sample_weight=weight)
        as_series = metric(
            pd.Series(y_true, index=[10, 11, 12, 13]),
            pd.Series(y_pred),
            sigma=pd.Series(sigma),
            sample_weight=pd.Series(weight),
        )
        frame = metric(
            pd.DataFrame({"a": y_true}),
            pd.DataFrame({"b": y_pred}),
            sigma=sigma,
            sample_weight=weight,
        )
        assert as_lists == reference == as_series == frame
    _, _, classes = check_classification_labels(pd.Series(["x", "y"]), ["y", "y"])
    assert classes.tolist() == ["x", "y"]


def test_validation_raises_no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_finite(np.array([1e308, 1e308]), name="x")
        for metric in REGRESSION_METRICS:
            metric([0.0, 1e150, 1.0], [0.0, -1e150, 1.0], sigma=[0.0, 1e-320, 0.0])


_WEIGHTED_COUNT_METRICS = [
    name
    for name in get_metric_names(noise="flips")
    if "sample_weight" in inspect.signature(get_metric_info(name).function).parameters
]


@pytest.mark.parametrize("name", _WEIGHTED_COUNT_METRICS)
def test_all_zero_weights_name_the_weights(name):
    # Every classification metric says what is wrong with all-zero weights
    # (not that y_true is empty), as the accuracy, the MSE and the log-loss do.
    info = get_metric_info(name)
    if info.response_method == "predict":
        y_true, y_pred = [0, 1, 2, 2], [0, 1, 2, 0]
    else:
        y_true, y_pred = [0, 1, 1, 0], [0.2, 0.7, 0.4, 0.1]
    parameters = inspect.signature(info.function).parameters
    options = {"average": "macro"} if "average" in parameters else {}
    with pytest.raises(ValueError, match="sample_weight must have a positive sum"):
        info.function(y_true, y_pred, sample_weight=[0, 0, 0, 0], q=0.1, **options)
    if "average" in parameters:  # the binary path too
        with pytest.raises(ValueError, match="sample_weight must have a positive"):
            info.function([0, 1, 1, 0], [0, 1, 0, 0], sample_weight=[0] * 4, q=0.1)


def test_flip_probability_above_one_half_warns():
    # Labels more often wrong than right: usually q given as 1 - q.
    with pytest.warns(UserWarning, match="q is above 0.5") as record:
        expected_accuracy_score([0, 1, 1, 0], [0, 1, 0, 0], q=0.6, estimand="forward")
    assert record[0].filename == __file__  # points at the caller's line
    with pytest.warns(UserWarning, match="q is above 0.5"):
        expected_accuracy_score(
            [0, 1, 1, 0], [0, 1, 0, 0], q=[0.1, 0.1, 0.7, 0.1], estimand="forward"
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        expected_accuracy_score([0, 1, 1, 0], [0, 1, 0, 0], q=0.5, estimand="forward")
