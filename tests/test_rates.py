"""Specificity, FPR, FNR and NPV under label flips.

Zero noise equals the rates of scikit-learn's confusion matrix; under noise
the moments agree with seeded Monte Carlo within 5 standard errors, and the
complements mirror their rate exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import confusion_matrix
from sklearn.model_selection import KFold, cross_validate

from sklearn_noisy.metrics import (
    expected_false_negative_rate,
    expected_false_positive_rate,
    expected_negative_predictive_value,
    expected_recall_score,
    expected_specificity_score,
    false_negative_rate,
    false_positive_rate,
    make_noisy_scorer,
    negative_predictive_value,
    specificity_score,
)

EXPECTED = {
    "specificity": expected_specificity_score,
    "npv": expected_negative_predictive_value,
    "fpr": expected_false_positive_rate,
    "fnr": expected_false_negative_rate,
}
NOMINAL = {
    "specificity": specificity_score,
    "npv": negative_predictive_value,
    "fpr": false_positive_rate,
    "fnr": false_negative_rate,
}


def _rates(y, y_pred, weight=None):
    tn, fp, fn, tp = confusion_matrix(y, y_pred, sample_weight=weight).ravel()
    return {
        "specificity": tn / (tn + fp),
        "npv": tn / (tn + fn),
        "fpr": fp / (fp + tn),
        "fnr": fn / (fn + tp),
    }


@pytest.mark.parametrize("name", list(EXPECTED))
@pytest.mark.parametrize("weighted", [False, True])
def test_zero_noise_is_the_confusion_matrix_rate(name, weighted):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 50)
    y_pred = np.where(rng.random(50) < 0.75, y, 1 - y)
    weight = rng.integers(1, 4, 50).astype(float) if weighted else None
    reference = _rates(y, y_pred, weight)[name]
    result = EXPECTED[name](y, y_pred, q=0.0, sample_weight=weight, estimand="forward")
    assert result.expected == pytest.approx(reference, rel=1e-14)
    assert result.nominal == pytest.approx(reference, rel=1e-14)
    assert result.variance == 0.0
    assert NOMINAL[name](y, y_pred, sample_weight=weight) == pytest.approx(
        reference, rel=1e-14
    )
    # string labels with pos_label
    names = np.where(y == 1, "sick", "well")
    names_pred = np.where(y_pred == 1, "sick", "well")
    same = EXPECTED[name](
        names,
        names_pred,
        q=0.0,
        pos_label="sick",
        sample_weight=weight,
        estimand="forward",
    )
    assert same.expected == pytest.approx(reference, rel=1e-14)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_monte_carlo(name):
    rng = np.random.default_rng(7)
    m = 30
    y = rng.integers(0, 2, m)
    y_pred = np.where(rng.random(m) < 0.8, y, 1 - y)
    q = rng.uniform(0.0, 0.3, m)
    result = EXPECTED[name](y, y_pred, q=q, estimand="forward")
    draws = np.where(rng.random((40_000, m)) < q, 1 - y, y)
    values = []
    for z in draws:
        tn = np.sum((z == 0) & (y_pred == 0))
        fp = np.sum((z == 0) & (y_pred == 1))
        fn = np.sum((z == 1) & (y_pred == 0))
        tp = np.sum((z == 1) & (y_pred == 1))
        rates = {
            "specificity": tn / (tn + fp) if tn + fp else 0.0,
            "npv": tn / (tn + fn) if tn + fn else 0.0,
            "fpr": 1.0 - (tn / (tn + fp) if tn + fp else 0.0),
            "fnr": 1.0 - (tp / (tp + fn) if tp + fn else 0.0),
        }
        values.append(rates[name])
    values = np.array(values)
    se = values.std() / np.sqrt(values.size)
    centred = values - values.mean()
    se_var = np.sqrt((np.mean(centred**4) - values.var() ** 2) / values.size)
    assert abs(result.expected - values.mean()) < 5 * se
    assert abs(result.variance - values.var()) < 5 * se_var


def test_complements_mirror_their_rate():
    y = [0, 1, 1, 0, 1, 0, 1, 1, 0, 0]
    y_pred = [0, 1, 0, 0, 1, 1, 1, 0, 0, 1]
    matrix = [[0.85, 0.15], [0.2, 0.8]]
    for estimand in ("forward", "truth", "remeasurement"):
        spec = expected_specificity_score(
            y, y_pred, transition_matrix=matrix, labels=[0, 1], estimand=estimand
        )
        fpr = expected_false_positive_rate(
            y, y_pred, transition_matrix=matrix, labels=[0, 1], estimand=estimand
        )
        assert fpr.expected == pytest.approx(1.0 - spec.expected, abs=1e-15)
        assert fpr.variance == spec.variance and fpr.estimand == estimand
        assert fpr.metric == "false_positive_rate"
        low, high = fpr.confidence_interval(0.95)
        assert 0.0 <= low <= high <= 1.0


def test_complement_intervals_mirror_their_rate_under_flips():
    # the skewed label-noise intervals (Fieller's for the truth, Cornish–Fisher's
    # for the remeasurement) of 1 − recall are 1 minus recall's, reversed: the
    # pivot's quantiles negated in reverse order (they were recall's own)
    rng = np.random.default_rng(3)
    y = (rng.random(200) < 0.4).astype(int)
    y_pred = np.where(rng.random(200) < 0.85, y, 1 - y)
    q = rng.uniform(0.0, 0.3, 200)
    y_obs = np.where(rng.random(200) < q, 1 - y, y)
    for estimand in ("truth", "remeasurement"):
        pairs = (
            (expected_recall_score, expected_false_negative_rate),
            (expected_specificity_score, expected_false_positive_rate),
        )
        for rate, complement in pairs:
            low, high = rate(
                y_obs, y_pred, q=q, estimand=estimand
            ).confidence_interval()
            mirrored = complement(y_obs, y_pred, q=q, estimand=estimand)
            assert mirrored.confidence_interval() == pytest.approx(
                (1.0 - high, 1.0 - low), abs=1e-12
            )


@pytest.mark.parametrize(
    ("y", "kwargs", "match"),
    [
        ([0, 1, 2, 1], {}, "binary problem|multiclass"),
        ([0, 1, 1, 0], {"average": "mean"}, "average must be one of"),
    ],
)
def test_errors(y, kwargs, match):
    for function in EXPECTED.values():
        with pytest.raises(ValueError, match=match):
            function(y, [1, 1, 1, 1], q=0.1, **kwargs)


def test_one_class_needs_the_negative_class_named():
    # the negative class's rates need to know which class is negative
    for name in ("specificity", "npv", "fpr"):
        with pytest.raises(ValueError, match="labels=\\[negative, positive\\]"):
            EXPECTED[name]([1, 1, 1, 1], [1, 1, 1, 1], q=0.1, estimand="forward")
        result = EXPECTED[name](
            [1, 1, 1, 1], [1, 1, 1, 1], q=0.1, labels=[0, 1], estimand="forward"
        )
        assert 0.0 <= result.expected <= 1.0


def test_scorer_in_cross_validate():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(90, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=90) > 0).astype(int)
    scores = cross_validate(
        LogisticRegression(), X, y, cv=KFold(3),
        scoring=make_noisy_scorer("specificity", q=0.1, estimand="forward"),
    )["test_score"]  # fmt: skip
    reference = []
    for train, test in KFold(3).split(X):
        model = LogisticRegression().fit(X[train], y[train])
        reference.append(
            expected_specificity_score(
                y[test],
                model.predict(X[test]),
                q=0.1,
                labels=model.classes_,
                estimand="forward",
            ).expected
        )
    np.testing.assert_allclose(scores, reference, rtol=1e-12)
