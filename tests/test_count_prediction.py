"""The skew of the two-class count metrics' prediction interval
(``metrics/_engines/counts/prediction.py``): the third cumulant of the estimate
less a new test set's metric, ``D = T − M``, against the exact one of a
population enumerated over its states; the interval it gives."""

from __future__ import annotations

import itertools
import math
import pickle

import numpy as np
import pytest

from sklearn_noisy.metrics import expected_accuracy_score
from sklearn_noisy.metrics._engines.counts.prediction import (
    difference_cumulants,
    flip_cumulants,
)
from sklearn_noisy.utils._noise import FlipNoise

#: Class 1 with probability 0.4, the model right with probability 0.85, flips
#: q = 0.05 on predicted negatives and 0.25 on predicted positives: the label
#: noise's variance then moves with the correctness, and the term
#: 3 E[(h − h̄) V] is not zero.
P_POSITIVE, P_RIGHT, Q_BY_PRED = 0.4, 0.85, (0.05, 0.25)


def _terms(y, pred, o, estimand):
    """The accuracy's per-sample terms ``h`` and a new test set's ``m``."""
    q = np.asarray(Q_BY_PRED)[pred]
    if estimand == "truth":  # the de-noised weight of the predicted class
        u = (o - q) / (1.0 - 2.0 * q)
        return np.where(pred == 1, u, 1.0 - u), (y == pred).astype(float)
    return np.where(y == pred, 1.0 - q, q), (o == pred).astype(float)


def _third(values, probabilities):
    mean = probabilities @ values
    return float(probabilities @ (values - mean) ** 3)


def _exact(estimand):
    """``n² κ₃(D) = κ₃(h) − κ₃(m)`` over the population's states ``(y, ŷ, o)``."""
    states = np.array(list(itertools.product((0, 1), repeat=3)))
    y, pred, o = states.T
    q = np.asarray(Q_BY_PRED)[pred]
    weight = np.where(y == 1, P_POSITIVE, 1.0 - P_POSITIVE)
    weight = weight * np.where(pred == y, P_RIGHT, 1.0 - P_RIGHT)
    weight = weight * np.where(o == y, 1.0 - q, q)
    h, m = _terms(y, pred, o, estimand)
    return _third(h, weight) - _third(m, weight)


@pytest.mark.parametrize(("estimand", "sign"), [("truth", 1.0), ("forward", -1.0)])
def test_difference_cumulant(estimand, sign):
    """The estimated ``n² κ₃(D)`` of one large test set within 5 of its SEs of
    the exact value (truth −0.267, forward +0.064)."""
    rng = np.random.default_rng(7)
    n = 200_000
    y = (rng.random(n) < P_POSITIVE).astype(int)
    pred = np.where(rng.random(n) < P_RIGHT, y, 1 - y)
    q = np.asarray(Q_BY_PRED)[pred]
    o = np.where(rng.random(n) < q, 1 - y, y)
    h, _ = _terms(y, pred, o, estimand)
    slope = 2.0 * pred - 1.0
    observed = o if estimand == "truth" else y
    noise = FlipNoise.from_params(q, None, n_samples=n, n_classes=2)
    variance, third = flip_cumulants(noise, observed, estimand)
    cumulant, _ = difference_cumulants(h, slope, variance, third, sign)
    per_sample = 3.0 * (h - h.mean()) * variance + third * slope
    se = float(np.std(per_sample)) / math.sqrt(n)
    exact = _exact(estimand)
    assert abs(exact) > 10 * se  # the skew is there to find
    assert abs(cumulant - exact) < 5 * se, (cumulant, exact, se)


def test_prediction_interval_skew():
    """The truth accuracy's prediction interval follows its skew (the label
    noise's right tail), survives pickling, and the symmetric one does not."""
    rng = np.random.default_rng(0)
    y = (rng.random(100) < P_POSITIVE).astype(int)
    pred = np.where(rng.random(100) < P_RIGHT, y, 1 - y)
    q = rng.uniform(0.0, 0.3, 100)
    noisy = np.where(rng.random(100) < q, 1 - y, y)
    score = expected_accuracy_score(noisy, pred, q=q, estimand="truth")
    interval = score.prediction_interval(0.95)
    assert interval.method == "cornish_fisher"
    assert pickle.loads(pickle.dumps(score)).prediction_interval(0.95) == interval
    low, high = interval
    assert low < score.expected < high
    unweighted = expected_accuracy_score(
        noisy, pred, q=q, estimand="truth", sample_weight=np.full(100, 2.0)
    )
    assert unweighted.prediction_interval(0.95).method == "arcsine"
