"""Scorers on real folds (issue 15): the model's classes, one prediction per fold
shared by all scorers, and a missing noise source that stops a search."""

from __future__ import annotations

import numpy as np
import pytest
import sklearn
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import accuracy_score
from sklearn.model_selection import (
    GridSearchCV,
    KFold,
    LeaveOneOut,
    StratifiedKFold,
    cross_val_predict,
    cross_val_score,
    cross_validate,
)

from sklearn_noisy import make_noisy_scorer
from sklearn_noisy.metrics import (
    MissingNoiseError,
    expected_accuracy_score,
    expected_f1_score,
)

_RNG = np.random.RandomState(7)
X_REG = _RNG.normal(size=(48, 3))
Y_REG = X_REG @ np.array([1.0, -2.0, 0.5]) + _RNG.normal(scale=0.4, size=48)
SIGMA = _RNG.uniform(0.1, 0.5, size=48)

X_CLF = _RNG.normal(size=(60, 3))
Y_CLF = (X_CLF[:, 0] + 0.5 * _RNG.normal(size=60) > 0).astype(int)


def _three_class_fold():
    """A 3-class model and a fold of it whose labels and predictions are {0, 1}."""
    rng = np.random.RandomState(0)
    centres = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0]])
    y = np.repeat([0, 1, 2], 30)
    X = centres[y] + rng.normal(scale=0.9, size=(90, 2))
    model = LogisticRegression().fit(X, y)
    y_pred = model.predict(X)
    fold = (y < 2) & (y_pred < 2)
    return model, X[fold], y[fold], y_pred[fold]


# ------------------------------------------------------------ model's classes
def test_accuracy_scorer_uses_the_models_classes():
    model, X_fold, y_fold, y_pred = _three_class_fold()
    assert set(y_fold) | set(y_pred) == {0, 1}
    q = 0.3
    scorer = make_noisy_scorer("accuracy", q=q, estimand="forward")
    # A label flips to each of the other K - 1 = 2 classes of the model with
    # probability q / 2: the closed form of the expected accuracy.
    correct = y_fold == y_pred
    closed_form = np.mean(np.where(correct, 1.0 - q, q / 2.0))
    assert scorer(model, X_fold, y_fold) == pytest.approx(closed_form, rel=1e-12)
    # The fold alone (two classes, flips to the one other class) differs.
    fold_local = np.mean(np.where(correct, 1.0 - q, q))
    assert abs(fold_local - closed_form) > 0.01
    # At q = 0 it is scikit-learn's accuracy.
    exact = make_noisy_scorer("accuracy", q=0.0, estimand="forward")
    assert exact(model, X_fold, y_fold) == accuracy_score(y_fold, y_pred)


def test_macro_f1_scorer_uses_the_models_classes():
    model, X_fold, y_fold, y_pred = _three_class_fold()
    q = 0.3
    options = {"average": "macro", "random_state": 0}
    scorer = make_noisy_scorer("f1", q=q, **options)
    over_model = expected_f1_score(y_fold, y_pred, q=q, labels=[0, 1, 2], **options)
    fold_local = expected_f1_score(y_fold, y_pred, q=q, **options)
    value = scorer(model, X_fold, y_fold)
    assert value == pytest.approx(over_model.expected, rel=1e-12)
    assert abs(value - fold_local.expected) > 0.05


def test_labels_unseen_in_training_are_kept():
    # A test label the model never saw is appended to its classes, so the
    # metric accepts the fold (scikit-learn's accuracy does too).
    model = LogisticRegression().fit(X_CLF, Y_CLF)
    y = Y_CLF.copy()
    y[:3] = 5
    scorer = make_noisy_scorer("accuracy", q=0.0)
    assert scorer(model, X_CLF, y) == accuracy_score(y, model.predict(X_CLF))
    noisy = make_noisy_scorer("accuracy", q=0.2)
    reference = expected_accuracy_score(
        y, model.predict(X_CLF), q=0.2, labels=[0, 1, 5]
    )
    assert noisy(model, X_CLF, y) == pytest.approx(reference.expected, rel=1e-12)


def test_single_class_folds_score_as_scikit_learn():
    # Issue 15: [nan nan 0.95 ...] where scikit-learn gives every fold.
    rng = np.random.RandomState(3)
    X = rng.normal(size=(100, 2))
    y = np.zeros(100, dtype=int)
    y[[0, 1, 20, 21, 40]] = 1  # test folds 4 and 5 hold class 0 only
    X[y == 1] += 3.0
    cv = KFold(5)
    ours = cross_val_score(
        LogisticRegression(),
        X,
        y,
        cv=cv,
        scoring=make_noisy_scorer("accuracy", q=0.0, estimand="forward"),
    )
    theirs = cross_val_score(LogisticRegression(), X, y, cv=cv, scoring="accuracy")
    np.testing.assert_array_equal(ours, theirs)
    noisy = cross_val_score(
        LogisticRegression(),
        X,
        y,
        cv=cv,
        scoring=make_noisy_scorer("accuracy", q=0.1, estimand="forward"),
    )
    # Binary model: a flip is to the other class, E = (1 - q) acc + q (1 - acc).
    np.testing.assert_allclose(noisy, 0.9 * theirs + 0.1 * (1 - theirs), rtol=1e-12)


# --------------------------------------------------- one prediction per fold
class _CountingRidge(Ridge):
    calls = 0

    def predict(self, X):
        type(self).calls += 1
        return super().predict(X)


class _CountingLogistic(LogisticRegression):
    proba_calls = 0

    def predict_proba(self, X):
        type(self).proba_calls += 1
        return super().predict_proba(X)


_REGRESSION_METRICS = (
    "mean_squared_error",
    "root_mean_squared_error",
    "mean_absolute_error",
    "r2",
)


def test_multimetric_cross_validate_predicts_once_per_fold():
    scoring = {m: make_noisy_scorer(m, sigma=0.3) for m in _REGRESSION_METRICS}
    scoring["sklearn_mse"] = "neg_mean_squared_error"
    _CountingRidge.calls = 0
    cv = KFold(5, shuffle=True, random_state=0)
    results = cross_validate(_CountingRidge(), X_REG, Y_REG, cv=cv, scoring=scoring)
    assert _CountingRidge.calls == 5  # was 20 + 5: one per scorer and fold
    # The shared prediction gives the numbers of each scorer alone.
    for k, (train, test) in enumerate(cv.split(X_REG)):
        model = Ridge().fit(X_REG[train], Y_REG[train])
        for metric in _REGRESSION_METRICS:
            alone = scoring[metric](model, X_REG[test], Y_REG[test])
            assert results[f"test_{metric}"][k] == alone


def test_multimetric_search_with_routed_noise_predicts_once_per_fold():
    scoring = {m: make_noisy_scorer(m) for m in _REGRESSION_METRICS}
    _CountingRidge.calls = 0
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(
            _CountingRidge(),
            {"alpha": [0.1, 10.0]},
            scoring=scoring,
            refit=False,
            cv=KFold(3),
        ).fit(X_REG, Y_REG, sigma=SIGMA)
    assert _CountingRidge.calls == 2 * 3
    for k, (train, test) in enumerate(KFold(3).split(X_REG)):
        model = Ridge(alpha=0.1).fit(X_REG[train], Y_REG[train])
        alone = scoring["r2"](model, X_REG[test], Y_REG[test], sigma=SIGMA[test])
        assert search.cv_results_[f"split{k}_test_r2"][0] == alone


@pytest.mark.parametrize("n_classes", [2, 3])
def test_probability_scorers_share_one_predict_proba(n_classes):
    y = Y_CLF if n_classes == 2 else np.digitize(X_CLF[:, 0], [-0.4, 0.4])
    scoring = {
        "log_loss": make_noisy_scorer("log_loss", q=0.1),
        "accuracy": make_noisy_scorer("accuracy", q=0.1),
    }
    if n_classes == 2:
        scoring["brier"] = make_noisy_scorer("brier_score_loss", q=0.1)
    else:
        # scikit-learn keeps the same matrix for a multiclass problem: shared.
        scoring["sklearn_log_loss"] = "neg_log_loss"
    _CountingLogistic.proba_calls = 0
    cv = StratifiedKFold(4, shuffle=True, random_state=0)
    results = cross_validate(_CountingLogistic(), X_CLF, y, cv=cv, scoring=scoring)
    assert _CountingLogistic.proba_calls == 4
    for k, (train, test) in enumerate(cv.split(X_CLF, y)):
        model = LogisticRegression().fit(X_CLF[train], y[train])
        for name, scorer in scoring.items():
            if not isinstance(scorer, str):
                alone = scorer(model, X_CLF[test], y[test])
                assert results[f"test_{name}"][k] == alone
    if n_classes == 3:
        np.testing.assert_array_equal(
            results["test_sklearn_log_loss"],
            cross_validate(
                LogisticRegression(), X_CLF, y, cv=cv, scoring="neg_log_loss"
            )["test_score"],
        )


# ---------------------------------------------------- missing noise source
def _search(multimetric, n_jobs, **options):
    scorer = make_noisy_scorer("r2")
    scoring = {"r2": scorer, "mse": make_noisy_scorer("mean_squared_error")}
    return GridSearchCV(
        Ridge(),
        {"alpha": [0.1, 10.0]},
        scoring=scoring if multimetric else scorer,
        refit=False,
        cv=3,
        n_jobs=n_jobs,
        **options,
    )


@pytest.mark.parametrize("multimetric", [False, True])
@pytest.mark.parametrize("n_jobs", [None, 2])
def test_missing_noise_stops_a_search_with_error_score_raise(multimetric, n_jobs):
    # Issue 15: a missing noise source must not pass unnoticed; MissingNoiseError
    # is a ValueError, so error_score decides, and "raise" stops the search.
    search = _search(multimetric, n_jobs, error_score="raise")
    with pytest.raises(MissingNoiseError) as info:
        search.fit(X_REG, Y_REG)
    message = str(info.value)
    assert "make_noisy_scorer('r2'" in message  # names the scorer
    assert "enable_metadata_routing=True" in message  # and the fix
    assert isinstance(info.value, ValueError)  # ``except Exception`` catches it


@pytest.mark.parametrize("multimetric", [False, True])
def test_missing_noise_with_error_score_nan_warns_with_the_message(multimetric):
    # The default error_score=nan: NaN scores, and scikit-learn's warnings say
    # why (the documented behaviour of MissingNoiseError).
    with pytest.warns(UserWarning) as record:
        search = _search(multimetric, None).fit(X_REG, Y_REG)
    key = "mean_test_r2" if multimetric else "mean_test_score"
    assert np.isnan(search.cv_results_[key]).all()
    messages = [str(w.message) for w in record]
    assert any("Scoring failed" in m and "MissingNoiseError" in m for m in messages)
    assert any("make_noisy_scorer('r2'" in m for m in messages)


def test_missing_noise_with_routing_enabled_stops_cross_val_score():
    with sklearn.config_context(enable_metadata_routing=True):
        with pytest.raises(MissingNoiseError, match=r"params=\{'sigma': sigma\}"):
            cross_val_score(
                Ridge(),
                X_REG,
                Y_REG,
                scoring=make_noisy_scorer("r2"),
                error_score="raise",
            )


# ------------------------------------------------------------ tiny test sets
def test_r2_scorer_on_one_sample_is_nan_as_scikit_learn():
    # Issue 16: scikit-learn's r2 is NaN (with a warning) on a 1-sample fold;
    # the noisy scorer raised, so error_score="raise" stopped the run.
    scoring = {
        "r2": make_noisy_scorer("r2", sigma=0.3, estimand="forward"),
        "mse": make_noisy_scorer("mean_squared_error", sigma=0.3, estimand="forward"),
        "sklearn_r2": "r2",
    }
    with pytest.warns(UndefinedMetricWarning, match="R² is not defined on fewer"):
        results = cross_validate(
            Ridge(),
            X_REG[:8],
            Y_REG[:8],
            cv=LeaveOneOut(),
            scoring=scoring,
            error_score="raise",
        )
    assert np.all(np.isnan(results["test_sklearn_r2"]))
    assert np.all(np.isnan(results["test_r2"]))
    oof = cross_val_predict(Ridge(), X_REG[:8], Y_REG[:8], cv=LeaveOneOut())
    np.testing.assert_allclose(
        results["test_mse"], -((Y_REG[:8] - oof) ** 2 + 0.09), rtol=1e-12
    )
