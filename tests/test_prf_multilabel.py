"""Multilabel indicator targets: each entry a binary label with its own flips.

Reference: exact enumeration of all 2^(n·L) observed indicator matrices with
scikit-learn's metric on each (exact results to 1e-12, Monte Carlo ones
within 5 standard errors), and scikit-learn itself at q = 0.
"""

import functools
import itertools
import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import sparse
from sklearn import metrics as skm

from sklearn_noisy import (
    NoisyScore,
    expected_f1_score,
    expected_precision_score,
    expected_recall_score,
)

PRF = {
    "precision": (expected_precision_score, skm.precision_score),
    "recall": (expected_recall_score, skm.recall_score),
    "f1": (expected_f1_score, skm.f1_score),
}
AVERAGES = [None, "micro", "macro", "weighted", "samples"]
N_DRAWS = 4000

Y = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0]])
P = np.array([[1, 0, 0], [0, 1, 1], [0, 1, 1]])
Q = np.array([[0.1, 0.2, 0.05], [0.3, 0.1, 0.2], [0.15, 0.25, 0.1]])


def _quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


@functools.cache
def enumerate_law(average):
    """``{metric: (mean, variance, 4th moment)}`` over all 2^9 labellings."""
    values, weights = [], []
    flat_y, flat_q = Y.ravel(), Q.ravel()
    for flips in itertools.product([0, 1], repeat=flat_y.size):
        flips = np.array(flips)
        weights.append(np.prod(np.where(flips == 1, flat_q, 1.0 - flat_q)))
        observed = (flat_y ^ flips).reshape(Y.shape)
        p, r, f, _ = _quiet(
            skm.precision_recall_fscore_support, observed, P, average=average
        )
        values.append(np.array([p, r, f], dtype=float))
    values, weights = np.array(values), np.array(weights)
    out = {}
    for k, name in enumerate(PRF):
        v = values[:, k]
        mean = np.tensordot(weights, v, axes=1)
        variance = np.tensordot(weights, (v - mean) ** 2, axes=1)
        m4 = np.tensordot(weights, (v - mean) ** 4, axes=1)
        out[name] = (mean, variance, m4)
    return out


def _fields(score):
    if isinstance(score, list):
        return (
            np.array([s.expected for s in score]),
            np.array([s.variance for s in score]),
        )
    return score.expected, score.variance


@pytest.mark.parametrize("average", AVERAGES)
@pytest.mark.parametrize("name", list(PRF))
def test_multilabel_by_enumeration(name, average):
    ours, _ = PRF[name]
    mean, variance, m4 = enumerate_law(average)[name]
    score = ours(
        Y, P, q=Q, average=average, n_draws=N_DRAWS, random_state=2, estimand="forward"
    )
    expected, var = _fields(score)
    method = score[0].method if isinstance(score, list) else score.method
    if average == "weighted":
        assert method == "monte_carlo"
        assert abs(expected - mean) < 5 * math.sqrt(variance / N_DRAWS)
        assert abs(var - variance) < 5 * math.sqrt((m4 - variance**2) / N_DRAWS)
    else:
        assert method == "exact"
        np.testing.assert_allclose(expected, mean, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(var, variance, rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("zero_division", ["warn", 0.0, 1.0, np.nan])
@pytest.mark.parametrize("average", AVERAGES)
def test_multilabel_zero_noise_equals_scikit_learn(average, zero_division):
    y_true = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [1, 1, 0, 0], [0, 0, 0, 1]])
    y_pred = np.array([[1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 0], [0, 0, 0, 1]])
    weight = np.array([1.0, 2.0, 0.5, 3.0])
    for (ours, theirs), w in itertools.product(PRF.values(), [None, weight]):
        options = {"average": average, "zero_division": zero_division}
        expected = _quiet(theirs, y_true, y_pred, sample_weight=w, **options)
        score = ours(
            y_true, y_pred, q=0.0, sample_weight=w, **{"estimand": "forward", **options}
        )
        got, variance = _fields(score)
        np.testing.assert_array_equal(got, expected)  # NaN == NaN here
        np.testing.assert_array_equal(variance, np.zeros(np.shape(expected)))


def test_multilabel_containers_noise_shapes_and_pickle():
    reference = expected_f1_score(Y, P, q=0.2, average="macro", estimand="forward")
    for container in (
        Y.tolist(),
        pd.DataFrame(Y),
        sparse.csr_matrix(Y),
        Y.astype(np.float32),
    ):
        assert (
            expected_f1_score(container, P, q=0.2, average="macro", estimand="forward")
            == reference
        )
    per_sample = expected_f1_score(
        Y, P, q=[0.2, 0.2, 0.2], average="macro", estimand="forward"
    )
    per_entry = expected_f1_score(
        Y, P, q=np.full(Y.shape, 0.2), average="macro", estimand="forward"
    )
    matrix = expected_f1_score(
        Y,
        P,
        transition_matrix=[[0.8, 0.2], [0.2, 0.8]],
        average="macro",
        estimand="forward",
    )
    for other in (per_sample, per_entry, matrix):
        assert other.expected == pytest.approx(reference.expected, rel=1e-14)
    scores = expected_f1_score(Y, P, q=0.2, average=None, estimand="forward")
    assert all(isinstance(s, NoisyScore) for s in scores)
    assert pickle.loads(pickle.dumps(scores)) == scores
    subset = expected_f1_score(
        Y, P, q=0.2, average=None, labels=[2, 0], estimand="forward"
    )
    assert [s.expected for s in subset] == [scores[2].expected, scores[0].expected]


def test_multilabel_errors():
    with pytest.raises(ValueError, match="multilabel-indicator but average='binary'"):
        expected_f1_score(Y, P, q=0.1, estimand="forward")
    with pytest.raises(ValueError, match="estimand='forward' only"):
        expected_f1_score(Y, P, q=0.1, average="micro", estimand="truth")
    with pytest.raises(ValueError, match="method='delta'"):
        expected_f1_score(
            Y, P, q=0.1, average="micro", method="delta", estimand="forward"
        )
    with pytest.raises(ValueError, match="indicator matrix"):
        expected_f1_score(Y * 2, P, q=0.1, average="micro", estimand="forward")
    with pytest.raises(ValueError, match="indicator matrix"):
        expected_f1_score([0, 1, 1], P, q=0.1, average="micro", estimand="forward")
    with pytest.raises(ValueError, match="q must"):
        expected_f1_score(
            Y, P, q=np.full((3, 2), 0.1), average="micro", estimand="forward"
        )


def test_samples_average_with_nan_zero_division():
    """A sample that predicts no label is left out (precision: exact); a sample
    whose observed row may be empty makes recall Monte Carlo."""
    y_pred = np.array([[1, 0, 0], [0, 0, 0], [0, 1, 1]])
    values, weights = [], []
    for flips in itertools.product([0, 1], repeat=Y.size):
        flips = np.array(flips)
        weights.append(np.prod(np.where(flips == 1, Q.ravel(), 1.0 - Q.ravel())))
        observed = (Y.ravel() ^ flips).reshape(Y.shape)
        values.append(
            [
                _quiet(
                    theirs, observed, y_pred, average="samples", zero_division=np.nan
                )
                for _, theirs in (PRF["precision"], PRF["recall"])
            ]
        )
    values, weights = np.array(values), np.array(weights)
    precision = expected_precision_score(
        Y, y_pred, q=Q, average="samples", zero_division=np.nan, estimand="forward"
    )
    mean = weights @ values[:, 0]
    assert precision.method == "exact"
    assert precision.expected == pytest.approx(mean, rel=1e-12)
    assert precision.variance == pytest.approx(
        weights @ (values[:, 0] - mean) ** 2, rel=1e-10
    )
    recall = expected_recall_score(
        Y, y_pred, q=Q, average="samples", zero_division=np.nan,
        n_draws=N_DRAWS, random_state=3, estimand="forward",
    )  # fmt: skip
    defined = ~np.isnan(values[:, 1])
    w = weights[defined] / weights[defined].sum()
    mean = w @ values[defined, 1]
    variance = w @ (values[defined, 1] - mean) ** 2
    assert recall.method == "monte_carlo"
    assert abs(recall.expected - mean) < 5 * math.sqrt(variance / N_DRAWS)
