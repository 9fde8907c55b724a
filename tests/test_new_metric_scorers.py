"""ROC AUC and the percentage errors through scikit-learn's machinery.

Named scorers in ``cross_validate`` and ``GridSearchCV`` (noise from metadata
routing) and ``NoisyCrossValidator``: the scores equal the ``expected_*``
functions on the same folds, and at zero noise scikit-learn's own scorers.
"""

from __future__ import annotations

import numpy as np
import pytest
import sklearn
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GridSearchCV, KFold, cross_validate

from sklearn_noisy import NoisyCrossValidator
from sklearn_noisy.metrics import (
    expected_mean_absolute_percentage_error,
    expected_roc_auc_score,
    get_noisy_scorer,
    make_noisy_scorer,
)


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def _classification(seed=0, n=120):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _regression(seed=0, n=120):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = 50.0 + X @ [3.0, -2.0, 1.0] + rng.normal(size=n)
    return X, y, np.full(n, 0.5)


def test_roc_auc_scorer_at_zero_noise_is_scikit_learns():
    X, y = _classification()
    ours = cross_validate(
        LogisticRegression(), X, y, cv=KFold(4),
        scoring=make_noisy_scorer("roc_auc", q=0.0),
    )["test_score"]  # fmt: skip
    theirs = cross_validate(LogisticRegression(), X, y, cv=KFold(4), scoring="roc_auc")[
        "test_score"
    ]
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-15)


def test_roc_auc_scorer_equals_the_function_on_each_fold(routing):
    X, y = _classification(1)
    q = np.full(y.size, 0.1)
    scorer = get_noisy_scorer("expected_roc_auc").set_score_request(q=True)
    search = GridSearchCV(
        LogisticRegression(), {"C": [0.1, 1.0]}, cv=KFold(3), scoring=scorer
    ).fit(X, y, q=q)
    model = LogisticRegression(C=search.best_params_["C"])
    scores = []
    for train, test in KFold(3).split(X):
        model.fit(X[train], y[train])
        proba = model.predict_proba(X[test])[:, 1]
        scores.append(expected_roc_auc_score(y[test], proba, q=0.1).expected)
    best = search.best_index_
    assert search.cv_results_["mean_test_score"][best] == pytest.approx(
        np.mean(scores), rel=1e-12
    )


def test_mape_scorer_and_cross_validator():
    X, y, sigma = _regression()
    scorer = make_noisy_scorer("mean_absolute_percentage_error", sigma=0.5)
    scores = cross_validate(Ridge(), X, y, cv=KFold(4), scoring=scorer)["test_score"]
    expected = []
    for train, test in KFold(4).split(X):
        y_pred = Ridge().fit(X[train], y[train]).predict(X[test])
        result = expected_mean_absolute_percentage_error(y[test], y_pred, sigma=0.5)
        expected.append(-result.expected)  # a loss: negated, as scikit-learn's
    np.testing.assert_allclose(scores, expected, rtol=1e-13)
    cv = NoisyCrossValidator(
        Ridge(), scoring=["mean_absolute_percentage_error"], cv=KFold(4)
    ).fit(X, y, sigma=sigma)
    pooled = cv.pooled_["mean_absolute_percentage_error"]
    assert pooled.expected == pytest.approx(-np.mean(expected), rel=1e-12)
    assert cv.estimands_["mean_absolute_percentage_error"]["lead"] == "forward"


def test_roc_auc_in_the_cross_validator_pools_out_of_fold():
    X, y = _classification(2)
    cv = NoisyCrossValidator(
        LogisticRegression(), scoring=["roc_auc"], cv=KFold(4)
    ).fit(X, y, q=0.05)
    pooled = cv.pooled_["roc_auc"]
    assert 0.5 < pooled.expected < 1.0 and pooled.variance > 0.0
    assert cv.cv_results_["roc_auc_expected"].shape == (4,)
