"""At zero noise, the boundary raises and warns as scikit-learn on the same input.

The classes of divergence that scikit-learn's own metric tests found
(``benchmarks/sklearn_metric_tests.py``): the exception type for mixed,
continuous, byte and legacy multi-label targets; the ``UndefinedMetricWarning``
of a ratio 0/0 with ``zero_division="warn"``; balanced accuracy's warning for a
class of ``y_pred`` absent from ``y_true``; the int64 sums of the confusion
matrix. Each test runs scikit-learn on the same input and asserts that ours
does the same: no message is restated here.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.metrics as skm
from sklearn.exceptions import UndefinedMetricWarning

import sklearn_noisy.metrics as ours

#: (scikit-learn's function, ours, options), at zero noise ``q=0``.
COUNT_METRICS = {
    "accuracy": (skm.accuracy_score, ours.expected_accuracy_score, {}),
    "precision": (skm.precision_score, ours.expected_precision_score, {}),
    "recall_macro": (
        skm.recall_score,
        ours.expected_recall_score,
        {"average": "macro"},
    ),
    "f1_micro": (skm.f1_score, ours.expected_f1_score, {"average": "micro"}),
    "balanced_accuracy": (
        skm.balanced_accuracy_score,
        ours.expected_balanced_accuracy_score,
        {},
    ),
    "mcc": (skm.matthews_corrcoef, ours.expected_matthews_corrcoef, {}),
    "confusion_matrix": (skm.confusion_matrix, ours.expected_confusion_matrix, {}),
}

#: Targets that scikit-learn's ``_check_targets`` rejects.
REJECTED = {
    "strings and numbers": (["a", "b", "a"], [0, 1, 1]),
    "numbers and strings": (np.array([0, 1, 1]), np.array(["a", "b", "a"])),
    "object strings and numbers": (
        np.array(["spam", "eggs", "spam"], dtype=object),
        np.array([0, 1, 1]),
    ),
    "strings and continuous": (["a", "b", "a"], [0.1, 0.2, 0.3]),
    "continuous": ([0.5, 1.5, 0.5], [0.5, 1.5, 1.5]),
    "binary and continuous": ([0, 1, 0], [0.1, 0.2, 0.3]),
    "legacy multilabel, object array": (
        np.array([[], [1, 2]], dtype=object),
        np.array([[], [1, 2]], dtype=object),
    ),
    "legacy multilabel, ragged": ([[1], [2], [0, 1]], [[1], [2], [0, 1]]),
    "None": ([None, 1, 1], [None, 1, 0]),
    "bytes": (np.array([b"a", b"b"]), np.array([b"a", b"a"])),
}


def _error(function, *args, **kwargs) -> Exception:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as info:
            function(*args, **kwargs)
    return info.value


@pytest.mark.parametrize("metric", COUNT_METRICS)
@pytest.mark.parametrize("case", REJECTED)
def test_rejected_targets_raise_scikit_learns_exception_type(metric, case):
    theirs, function, options = COUNT_METRICS[metric]
    y_true, y_pred = REJECTED[case]
    expected = _error(theirs, y_true, y_pred, **options)
    error = _error(function, y_true, y_pred, q=0.0, estimand="forward", **options)
    assert isinstance(error, type(expected)), (type(expected), error)


def _warnings_of(function, *args, **kwargs) -> list[tuple[type, str]]:
    """The UndefinedMetricWarning and UserWarning raised by a call, in order."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        function(*args, **kwargs)
    return [
        (w.category, str(w.message))
        for w in record
        if w.category in (UndefinedMetricWarning, UserWarning)
    ]


#: Inputs with a ratio 0/0 (or none), for precision, recall and F1.
ZERO_DIVISION = {
    "binary, never predicted": ([0, 0, 1], [0, 0, 0], {}),
    "binary, one class": ([0, 0], [0, 0], {}),
    "binary, all positive": ([1, 1], [1, 1], {}),
    "binary, weighted": ([0, 1, 1], [0, 1, 0], {"sample_weight": [1, 0, 1]}),
    "labels absent": ([0, 1, 1], [0, 1, 0], {"labels": [0, 1, 2], "average": None}),
    "macro": ([0, 1, 2, 2], [0, 1, 1, 1], {"average": "macro"}),
    "weighted": ([0, 1, 2, 2], [0, 1, 1, 1], {"average": "weighted"}),
    "micro, labels subset": ([0, 1, 1], [0, 0, 0], {"average": "micro", "labels": [1]}),
    "multilabel micro": (
        np.array([[1, 1], [1, 1]]),
        np.array([[0, 0], [0, 0]]),
        {"average": "micro"},
    ),
    "multilabel samples": (
        np.array([[1, 0], [0, 0]]),
        np.array([[1, 0], [0, 0]]),
        {"average": "samples"},
    ),
    "multilabel None": (
        np.array([[1, 0], [1, 0]]),
        np.array([[1, 0], [0, 0]]),
        {"average": None},
    ),
    "well defined": ([0, 1, 1], [0, 1, 0], {}),
    "zero_division=0": ([0, 0], [0, 0], {"zero_division": 0}),
    "zero_division=nan": ([0, 0, 1], [0, 0, 0], {"zero_division": np.nan}),
}

PRF = {
    "precision": (skm.precision_score, ours.expected_precision_score),
    "recall": (skm.recall_score, ours.expected_recall_score),
    "f1": (skm.f1_score, ours.expected_f1_score),
}


@pytest.mark.parametrize("metric", PRF)
@pytest.mark.parametrize("case", ZERO_DIVISION)
def test_zero_division_warnings_are_scikit_learns(metric, case):
    theirs, function = PRF[metric]
    y_true, y_pred, options = ZERO_DIVISION[case]
    expected = _warnings_of(theirs, y_true, y_pred, **options)
    found = _warnings_of(function, y_true, y_pred, q=0.0, estimand="forward", **options)
    assert found == expected
    if (metric, case) == ("precision", "binary, never predicted"):
        assert expected  # the cases warn at all


@pytest.mark.parametrize(
    "y_true, y_pred, sample_weight",
    [
        ([0, 0, 0], [0, 0, 1], None),
        (["a", "b", "a"], ["a", "c", "b"], None),
        ([0, 1, 1, 2], [0, 1, 2, 2], [1.0, 1.0, 1.0, 0.0]),
        ([0, 1, 1], [0, 1, 0], None),
    ],
)
def test_balanced_accuracy_warns_of_unseen_classes_as_scikit_learn(
    y_true, y_pred, sample_weight
):
    expected = _warnings_of(
        skm.balanced_accuracy_score, y_true, y_pred, sample_weight=sample_weight
    )
    found = _warnings_of(
        ours.expected_balanced_accuracy_score,
        y_true,
        y_pred,
        q=0.0,
        sample_weight=sample_weight,
    )
    assert found == expected


@pytest.mark.parametrize(
    "weight",
    [
        np.full(3, np.iinfo(np.int64).max, dtype=np.int64),
        np.full(3, np.iinfo(np.uint32).max, dtype=np.uint32),
        np.full(3, 2**53 + 1, dtype=np.int64),
        np.ones(3, dtype=bool),
        np.full(3, 2.5),
    ],
    ids=["int64 max", "uint32 max", "2**53 + 1", "bool", "float"],
)
def test_confusion_matrix_sums_integer_weights_as_scikit_learn(weight):
    y = [0, 1, 1]
    expected = skm.confusion_matrix(y, y, sample_weight=weight)
    nominal = ours.expected_confusion_matrix(
        y, y, q=0.0, sample_weight=weight, estimand="forward"
    ).nominal
    assert nominal.dtype == expected.dtype
    np.testing.assert_array_equal(nominal, expected)


def _multilabel_case():
    rng = np.random.default_rng(0)
    y_true = rng.integers(0, 2, (40, 3))
    y_pred = np.where(rng.random((40, 3)) < 0.8, y_true, 1 - y_true)
    return y_true, y_pred, rng.random(40)


@pytest.mark.parametrize("normalize", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("container", [np.asarray, sp.csr_matrix])
def test_subset_accuracy_is_scikit_learns(normalize, weighted, container):
    y_true, y_pred, weight = _multilabel_case()
    options = {"normalize": normalize, "sample_weight": weight if weighted else None}
    expected = skm.accuracy_score(container(y_true), container(y_pred), **options)
    score = ours.expected_accuracy_score(
        container(y_true),
        container(y_pred),
        q=0.0,
        **{"estimand": "forward", **options},
    )
    assert score.nominal == expected  # bit for bit
    assert score.expected == pytest.approx(expected, rel=1e-12)
    assert score.variance == 0.0


@pytest.mark.parametrize(
    "noise",
    [
        {"q": 0.2},
        {"q": [0.1, 0.3, 0.0]},
        {"q": [[0.1, 0.2], [0.3, 0.0], [0.5, 0.25]]},
        {"transition_matrix": [[0.9, 0.1], [0.3, 0.7]]},
    ],
    ids=["scalar", "per sample", "per entry", "transition matrix"],
)
def test_subset_accuracy_forward_moments_by_enumeration(noise):
    """Every observed indicator matrix of 3 × 2 entries, with its probability."""
    y_true = np.array([[1, 0], [0, 0], [1, 1]])
    y_pred = np.array([[1, 0], [0, 1], [0, 1]])
    weight = np.array([1.0, 2.0, 0.5])
    if "q" in noise:
        flip = np.broadcast_to(
            np.reshape(noise["q"], (3, -1) if np.ndim(noise["q"]) else ()), (3, 2)
        )
        p_one = np.where(y_true == 1, 1.0 - flip, flip)
    else:
        matrix = np.asarray(noise["transition_matrix"])
        p_one = matrix[y_true, 1]
    values, probabilities = [], []
    for bits in range(2**6):
        observed = np.array([(bits >> k) & 1 for k in range(6)]).reshape(3, 2)
        probabilities.append(np.prod(np.where(observed == 1, p_one, 1.0 - p_one)))
        values.append(skm.accuracy_score(observed, y_pred, sample_weight=weight))
    values, probabilities = np.array(values), np.array(probabilities)
    mean = probabilities @ values
    score = ours.expected_accuracy_score(
        y_true, y_pred, sample_weight=weight, **{"estimand": "forward", **noise}
    )
    assert score.expected == pytest.approx(mean, rel=1e-12)
    assert score.variance == pytest.approx(
        probabilities @ (values - mean) ** 2, rel=1e-12
    )


def test_subset_accuracy_offers_the_forward_estimand_only():
    y_true, y_pred, _ = _multilabel_case()
    with pytest.raises(ValueError, match="forward"):
        ours.expected_accuracy_score(y_true, y_pred, q=0.1, estimand="truth")
    with pytest.raises(ValueError, match="indicator"):
        ours.expected_accuracy_score(
            y_true, y_pred[:, 0] * 2, q=0.1, estimand="forward"
        )
