"""Precision, recall, F1, balanced accuracy and MCC at zero noise: scikit-learn's.

Over scikit-learn's argument grid (``average``, ``zero_division``,
``sample_weight``, ``labels``, ``pos_label``, ``adjusted``) and input types
(lists, arrays, Series of every dtype, float32, read-only, non-contiguous),
``q=0`` gives scikit-learn's number to the last bit, variance 0, no sampling.
"""

import itertools
import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm

from sklearn_noisy import (
    NoisyScore,
    expected_balanced_accuracy_score,
    expected_f1_score,
    expected_matthews_corrcoef,
    expected_precision_score,
    expected_recall_score,
)

PRF = {
    "precision": (expected_precision_score, skm.precision_score),
    "recall": (expected_recall_score, skm.recall_score),
    "f1": (expected_f1_score, skm.f1_score),
}
ZERO_DIVISION = ["warn", 0.0, 1.0, np.nan]

RNG = np.random.default_rng(5)
BINARY_TRUE = RNG.integers(0, 2, 23)
BINARY_PRED = np.where(RNG.random(23) < 0.7, BINARY_TRUE, 1 - BINARY_TRUE)
MULTI_TRUE = RNG.integers(0, 4, 31)
MULTI_PRED = np.where(RNG.random(31) < 0.6, MULTI_TRUE, RNG.integers(0, 4, 31))
MULTI_PRED[MULTI_PRED == 3] = 2  # class 3 never predicted: precision is 0/0
WEIGHTS = {"binary": RNG.uniform(0.1, 3.0, 23), "multi": RNG.uniform(0.1, 3.0, 31)}
NAMES = np.array(["ant", "bee", "cat", "dog"])


def _container(kind, values):
    """``values`` (integer class codes) in the container ``kind``."""
    values = np.asarray(values)
    if kind == "list":
        return values.tolist()
    if kind == "int32":
        return values.astype(np.int32)
    if kind == "float32":
        return values.astype(np.float32)
    if kind == "float64":
        return values.astype(np.float64)
    if kind == "read_only":
        out = values.copy()
        out.setflags(write=False)
        return out
    if kind == "non_contiguous":
        return np.repeat(values, 2)[::2]
    if kind == "column":
        return values.reshape(-1, 1)
    if kind == "series_int":
        return pd.Series(values)
    if kind == "series_bool":
        return (
            pd.Series(values.astype(bool)) if values.max() <= 1 else pd.Series(values)
        )
    if kind == "numpy_str":
        return NAMES[values]
    if kind == "object":
        return NAMES[values].astype(object)
    if kind == "series_str":
        return pd.Series(NAMES[values], dtype="str")
    if kind == "series_string":
        return pd.Series(NAMES[values], dtype="string")
    if kind == "category":
        return pd.Series(NAMES[values], dtype="category")
    return values


CONTAINERS = [
    "ndarray",
    "list",
    "int32",
    "float32",
    "float64",
    "read_only",
    "non_contiguous",
    "column",
    "series_int",
    "series_bool",
    "numpy_str",
    "object",
    "series_str",
    "series_string",
    "category",
]
STRING_CONTAINERS = {"numpy_str", "object", "series_str", "series_string", "category"}


def _same(ours, theirs):
    if isinstance(theirs, np.ndarray):
        assert isinstance(ours, list)
        assert len(ours) == theirs.size
        for score, value in zip(ours, theirs, strict=True):
            _same(score, float(value))
        return
    assert isinstance(ours, NoisyScore)
    assert ours.method == "exact"
    if math.isnan(theirs):
        assert math.isnan(ours.expected) and math.isnan(ours.nominal)
        return
    assert ours.expected == theirs  # to the last bit
    assert ours.nominal == theirs
    assert ours.variance == 0.0


def _sklearn(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


def _pred_container(kind, values):
    # Predictions from a model are plain arrays; string labels as numpy str.
    if kind in STRING_CONTAINERS:
        return NAMES[np.asarray(values)]
    return _container(kind, values)


@pytest.mark.parametrize("kind", CONTAINERS)
@pytest.mark.parametrize("data", ["binary", "multi"])
def test_prf_zero_noise_equals_scikit_learn(kind, data):
    codes_true, codes_pred = (
        (BINARY_TRUE, BINARY_PRED) if data == "binary" else (MULTI_TRUE, MULTI_PRED)
    )
    y_true = _container(kind, codes_true)
    y_pred = _pred_container(kind, codes_pred)
    averages = ["binary", "micro", "macro", "weighted", None]
    if data == "multi":
        averages.remove("binary")
    pos_label = "bee" if kind in STRING_CONTAINERS else 1
    if kind == "series_bool" and data == "binary":
        pos_label = True
    # The full grid on two containers, the options that matter to the input
    # type on the others.
    full = kind in ("ndarray", "numpy_str")
    zero_divisions = ZERO_DIVISION if full else [np.nan]
    weights = [None, "w"] if full or kind == "list" else [None]
    grid = itertools.product(PRF.values(), averages, zero_divisions, weights)
    for (ours, theirs), average, zero_division, weight in grid:
        options = {"average": average, "zero_division": zero_division}
        if weight is not None:
            options["sample_weight"] = WEIGHTS[data]
        if average == "binary":
            options["pos_label"] = pos_label
        expected = _sklearn(theirs, y_true, y_pred, **options)
        _same(
            ours(y_true, y_pred, q=0.0, **{"estimand": "forward", **options}), expected
        )


@pytest.mark.parametrize("kind", CONTAINERS)
@pytest.mark.parametrize("data", ["binary", "multi"])
def test_ba_mcc_zero_noise_equals_scikit_learn(kind, data):
    codes_true, codes_pred = (
        (BINARY_TRUE, BINARY_PRED) if data == "binary" else (MULTI_TRUE, MULTI_PRED)
    )
    y_true = _container(kind, codes_true)
    y_pred = _pred_container(kind, codes_pred)
    for weight, adjusted in itertools.product([None, WEIGHTS[data]], [False, True]):
        expected = _sklearn(
            skm.balanced_accuracy_score,
            y_true,
            y_pred,
            sample_weight=weight,
            adjusted=adjusted,
        )
        score = expected_balanced_accuracy_score(
            y_true,
            y_pred,
            q=0.0,
            sample_weight=weight,
            adjusted=adjusted,
            estimand="forward",
        )
        _same(score, expected)
        expected = _sklearn(skm.matthews_corrcoef, y_true, y_pred, sample_weight=weight)
        _same(
            expected_matthews_corrcoef(
                y_true, y_pred, q=0.0, sample_weight=weight, estimand="forward"
            ),
            expected,
        )


@pytest.mark.parametrize("average", ["micro", "macro", "weighted"])
@pytest.mark.parametrize("labels", [[2, 0], [3, 1, 5], [1]])
def test_labels_subset_equals_scikit_learn(labels, average):
    for ours, theirs in PRF.values():
        options = {"labels": labels, "average": average}
        expected = _sklearn(theirs, MULTI_TRUE, MULTI_PRED, **options)
        _same(
            ours(MULTI_TRUE, MULTI_PRED, q=0.0, **{"estimand": "forward", **options}),
            expected,
        )
        weight = WEIGHTS["multi"]
        expected = _sklearn(
            theirs, MULTI_TRUE, MULTI_PRED, sample_weight=weight, **options
        )
        _same(
            ours(
                MULTI_TRUE,
                MULTI_PRED,
                q=0.0,
                sample_weight=weight,
                **{"estimand": "forward", **options},
            ),
            expected,
        )


def test_labels_order_and_per_class_lists():
    labels = [2, 0, 3, 1]
    for name, (ours, theirs) in PRF.items():
        expected = _sklearn(theirs, MULTI_TRUE, MULTI_PRED, labels=labels, average=None)
        scores = ours(
            MULTI_TRUE,
            MULTI_PRED,
            q=0.0,
            labels=labels,
            average=None,
            estimand="forward",
        )
        _same(scores, expected)
        assert pickle.loads(pickle.dumps(scores)) == scores
        noisy = ours(
            MULTI_TRUE,
            MULTI_PRED,
            q=0.1,
            labels=labels,
            average=None,
            estimand="forward",
        )
        assert [s.metric for s in noisy] == [name] * 4
        assert all(s.method == "exact" for s in noisy)


def test_last_bit_cases_of_the_issue():
    """Issue 15: 0.6000000000000001 and 0.9999999999999999 before."""
    score = expected_f1_score([1] * 7, [1, 0, 0, 0, 0, 1, 1], q=0, estimand="forward")
    assert score.expected == 0.6 == skm.f1_score([1] * 7, [1, 0, 0, 0, 0, 1, 1])
    rng = np.random.default_rng(0)
    for m in (2, 3, 7, 10, 33, 100):
        y = rng.integers(0, 2, m)
        y[:2] = [0, 1]
        assert (
            expected_matthews_corrcoef(y, y, q=0.0, estimand="forward").expected == 1.0
        )
        assert (
            expected_balanced_accuracy_score(y, y, q=0.0, estimand="forward").expected
            == 1.0
        )
        assert (
            expected_matthews_corrcoef(y, 1 - y, q=0.0, estimand="forward").expected
            == -1.0
        )


@pytest.mark.parametrize("average", ["binary", "micro", "macro", "weighted"])
def test_single_class_fold(average):
    """Issue 15: one class in y_true and y_pred behaves as scikit-learn."""
    for ours, theirs in PRF.values():
        expected = _sklearn(theirs, [0, 0, 0], [0, 0, 0], average=average)
        _same(
            ours([0, 0, 0], [0, 0, 0], q=0, average=average, estimand="forward"),
            expected,
        )
        _same(
            ours(
                [0, 0, 0], [0, 0, 0], q=[0.0] * 3, average=average, estimand="forward"
            ),
            expected,
        )
    _same(
        expected_balanced_accuracy_score([0, 0, 0], [0, 0, 0], q=0, estimand="forward"),
        1.0,
    )
    _same(
        expected_matthews_corrcoef([0, 0, 0], [0, 0, 0], q=0, estimand="forward"), 0.0
    )


def test_zero_noise_does_not_sample():
    """No randomness at zero noise: any random_state gives the same numbers."""
    for ours, _ in PRF.values():
        first = ours(
            MULTI_TRUE,
            MULTI_PRED,
            q=0.0,
            average="macro",
            random_state=None,
            estimand="forward",
        )
        second = ours(
            MULTI_TRUE,
            MULTI_PRED,
            q=0.0,
            average="macro",
            random_state=1,
            estimand="forward",
        )
        assert first == second
    identity = np.eye(4)
    score = expected_matthews_corrcoef(
        MULTI_TRUE,
        MULTI_PRED,
        transition_matrix=identity,
        random_state=None,
        estimand="forward",
    )
    assert score.method == "exact"
    assert score.expected == skm.matthews_corrcoef(MULTI_TRUE, MULTI_PRED)


def test_options_without_meaning_are_errors():
    with pytest.raises(ValueError, match="zero_division"):
        expected_f1_score([0, 1], [0, 1], q=0.1, zero_division=0.5, estimand="forward")
    with pytest.raises(ValueError, match="zero_division"):
        expected_f1_score(
            [0, 1], [0, 1], q=0.1, zero_division="nan", estimand="forward"
        )
    with pytest.raises(ValueError, match="multilabel"):
        expected_f1_score([0, 1], [0, 1], q=0.1, average="samples", estimand="forward")
    with pytest.raises(ValueError, match="n_draws"):
        expected_f1_score(
            [0, 1, 2], [0, 1, 1], q=0.1, average="macro", n_draws=1, estimand="forward"
        )
    with pytest.raises(ValueError, match="adjusted"):
        expected_balanced_accuracy_score(
            [0, 1], [0, 1], q=0.1, adjusted="yes", estimand="forward"
        )
    with pytest.raises(ValueError, match="sample_weight"):
        expected_recall_score(
            [0, 1], [0, 1], q=0.1, sample_weight=[1.0], estimand="forward"
        )
    with pytest.raises(ValueError, match="average=None"):
        expected_recall_score(
            [0, 1, 2], [0, 1, 1], q=0.1, average=None, estimand="truth"
        )
    with pytest.raises(TypeError, match="mix label types"):
        expected_matthews_corrcoef(
            np.array(["a", "b"], dtype=object), [0, 1], q=0.1, estimand="forward"
        )
