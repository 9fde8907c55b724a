"""Tests of NoisyCrossValidator: fold values, pooling, results API, errors."""

from __future__ import annotations

import json
import math
import pickle
import warnings

import numpy as np
import pytest
import sklearn
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.dummy import DummyClassifier
from sklearn.exceptions import FitFailedWarning
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.metrics import mean_squared_error
from sklearn.model_selection import (
    GroupKFold,
    KFold,
    ShuffleSplit,
    StratifiedKFold,
    cross_validate,
)

from sklearn_noisy import NoisyCrossValidator, make_noisy_scorer
from sklearn_noisy.metrics import (
    expected_accuracy_score,
    expected_f1_score,
    expected_log_loss,
    expected_mean_absolute_error,
    expected_mean_squared_error,
    expected_r2_score,
    expected_root_mean_squared_error,
)


@pytest.fixture(scope="module")
def regression_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 4))
    sigma = rng.uniform(0.0, 1.0, size=120)
    sigma[:5] = 0.0
    y = X @ np.array([1.0, -2.0, 0.5, 0.0]) + rng.normal(scale=sigma)
    return X, y, sigma


@pytest.fixture(scope="module")
def binary_data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(150, 3))
    y = (X[:, 0] + rng.normal(size=150) > 0).astype(int)
    q = rng.uniform(0.0, 0.3, size=150)
    return X, y, q


@pytest.fixture(scope="module")
def multiclass_data():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(150, 3))
    y = np.digitize(X[:, 0] + 0.5 * rng.normal(size=150), [-0.5, 0.5])
    T = np.array([[0.8, 0.15, 0.05], [0.1, 0.8, 0.1], [0.05, 0.15, 0.8]])
    return X, y, T


def test_pooled_regression_equals_metric_on_concatenated_oof(regression_data):
    X, y, sigma = regression_data
    cv = NoisyCrossValidator(  # forward: the additive pooling of the folds
        Ridge(),
        scoring=["mean_squared_error", "mean_absolute_error"],
        cv=KFold(4),
        estimand="forward",
    ).fit(X, y, sigma=sigma)
    assert np.array_equal(cv.oof_indices_, np.arange(y.size))
    for key, function in (
        ("mean_squared_error", expected_mean_squared_error),
        ("mean_absolute_error", expected_mean_absolute_error),
    ):
        reference = function(y, cv.oof_predictions_, sigma=sigma, estimand="forward")
        pooled = cv.pooled_[key]
        assert pooled.n_samples == y.size
        np.testing.assert_allclose(pooled.expected, reference.expected, rtol=1e-12)
        np.testing.assert_allclose(pooled.variance, reference.variance, rtol=1e-12)
        np.testing.assert_allclose(pooled.nominal, reference.nominal, rtol=1e-12)
        # and the additive pooling of FORMULAS §10: Σ w_k E_k, Σ w_k² V_k
        w = cv.cv_results_["n_test"] / y.size
        np.testing.assert_allclose(
            pooled.expected, w @ cv.cv_results_[f"{key}_expected"], rtol=1e-12
        )
        np.testing.assert_allclose(
            pooled.variance, (w * w) @ cv.cv_results_[f"{key}_variance"], rtol=1e-12
        )


@pytest.mark.parametrize(
    ("name", "function"),
    [
        ("root_mean_squared_error", expected_root_mean_squared_error),
        ("r2", expected_r2_score),
    ],
)
def test_pooled_non_additive_regression_is_metric_of_concatenation(
    regression_data, name, function
):
    X, y, sigma = regression_data
    cv = NoisyCrossValidator(Ridge(), scoring=[name], cv=KFold(3)).fit(
        X, y, sigma=sigma
    )
    reference = function(y, cv.oof_predictions_, sigma=sigma)
    np.testing.assert_allclose(
        cv.pooled_[name].expected, reference.expected, rtol=1e-12
    )
    np.testing.assert_allclose(
        cv.pooled_[name].variance, reference.variance, rtol=1e-12
    )


def test_pooled_classification_equals_metric_on_concatenated_oof(binary_data):
    X, y, q = binary_data
    cv = NoisyCrossValidator(
        LogisticRegression(), scoring=["accuracy", "f1", "log_loss"], cv=5
    ).fit(X, y, q=q)
    pred = cv.oof_predictions_
    proba = cv.oof_responses_["predict_proba"]
    references = {
        "accuracy": expected_accuracy_score(y, pred, q=q),
        "f1": expected_f1_score(y, pred, q=q),
        "log_loss": expected_log_loss(y, proba, q=q, labels=[0, 1]),
    }
    for key, reference in references.items():
        pooled = cv.pooled_[key]
        np.testing.assert_allclose(pooled.expected, reference.expected, rtol=1e-12)
        np.testing.assert_allclose(pooled.variance, reference.variance, rtol=1e-12)
        np.testing.assert_allclose(pooled.nominal, reference.nominal, rtol=1e-12)
    # the out-of-fold predictions are those of cross_val_predict
    from sklearn.model_selection import cross_val_predict

    expected_pred = cross_val_predict(LogisticRegression(), X, y, cv=5)
    np.testing.assert_array_equal(pred, expected_pred)


def test_fold_values_equal_cross_validate_with_our_scorers(regression_data):
    X, y, sigma = regression_data
    splitter = KFold(5, shuffle=True, random_state=3)
    cv = NoisyCrossValidator(
        LinearRegression(),
        scoring=["mean_squared_error", "mean_absolute_error"],
        cv=splitter,
    ).fit(X, y, sigma=sigma)
    with sklearn.config_context(enable_metadata_routing=True):
        for key in ("mean_squared_error", "mean_absolute_error"):
            scorer = make_noisy_scorer(key, output="all")
            reference = cross_validate(
                LinearRegression(),
                X,
                y,
                cv=splitter,
                scoring=scorer,
                params={"sigma": sigma},
            )
            # the scorer follows scikit-learn's sign convention: losses negated
            np.testing.assert_allclose(
                cv.cv_results_[f"{key}_expected"],
                -reference["test_expected"],
                rtol=1e-12,
            )
            np.testing.assert_allclose(
                cv.cv_results_[f"{key}_variance"],
                reference["test_variance"],
                rtol=1e-12,
            )
            np.testing.assert_allclose(
                cv.cv_results_[f"{key}_nominal"], -reference["test_nominal"], rtol=1e-12
            )


def test_fold_values_equal_cross_validate_classification(binary_data):
    X, y, q = binary_data
    cv = NoisyCrossValidator(LogisticRegression(), scoring=["accuracy"], cv=4).fit(
        X, y, q=q
    )
    with sklearn.config_context(enable_metadata_routing=True):
        reference = cross_validate(
            LogisticRegression(),
            X,
            y,
            cv=StratifiedKFold(4),
            scoring=make_noisy_scorer("accuracy", output="all"),
            params={"q": q},
        )
    np.testing.assert_allclose(
        cv.cv_results_["accuracy_expected"], reference["test_expected"], rtol=1e-12
    )
    np.testing.assert_allclose(
        cv.cv_results_["accuracy_variance"], reference["test_variance"], rtol=1e-12
    )


def test_zero_noise_nominal_equals_sklearn(regression_data):
    X, y, _ = regression_data
    cv = NoisyCrossValidator(Ridge(), scoring=["mean_squared_error"], cv=KFold(5)).fit(
        X, y, sigma=0.0
    )
    reference = cross_validate(
        Ridge(), X, y, cv=KFold(5), scoring="neg_mean_squared_error"
    )
    np.testing.assert_allclose(
        cv.cv_results_["mean_squared_error_expected"],
        -reference["test_score"],
        rtol=1e-12,
    )
    np.testing.assert_array_equal(cv.cv_results_["mean_squared_error_variance"], 0.0)
    np.testing.assert_allclose(
        cv.pooled_["mean_squared_error"].expected,
        mean_squared_error(y, cv.oof_predictions_),
        rtol=1e-12,
    )


def test_transition_matrix_multiclass(multiclass_data):
    X, y, T = multiclass_data
    cv = NoisyCrossValidator(
        LogisticRegression(), scoring=["accuracy", "log_loss"], cv=3
    ).fit(X, y, transition_matrix=T)
    reference = expected_accuracy_score(y, cv.oof_predictions_, transition_matrix=T)
    np.testing.assert_allclose(
        cv.pooled_["accuracy"].expected, reference.expected, rtol=1e-12
    )
    np.testing.assert_allclose(
        cv.pooled_["accuracy"].variance, reference.variance, rtol=1e-12
    )
    proba = cv.oof_responses_["predict_proba"]
    reference = expected_log_loss(y, proba, transition_matrix=T, labels=[0, 1, 2])
    np.testing.assert_allclose(
        cv.pooled_["log_loss"].expected, reference.expected, rtol=1e-12
    )


def test_default_scoring(binary_data, multiclass_data, regression_data):
    X, y, q = binary_data
    cv = NoisyCrossValidator(LogisticRegression(), cv=3).fit(X, y, q=q)
    assert list(cv.scorers_) == ["accuracy", "balanced_accuracy", "f1", "log_loss"]
    # string labels: F1 of the larger label (the default pos_label=1 cannot apply)
    labels = np.where(y == 1, "yes", "no")
    cv = NoisyCrossValidator(LogisticRegression(), cv=3).fit(X, labels, q=q)
    reference = expected_f1_score(labels, cv.oof_predictions_, q=q, pos_label="yes")
    assert cv.pooled_["f1"].expected == pytest.approx(reference.expected, rel=1e-12)
    X, y, T = multiclass_data
    cv = NoisyCrossValidator(DummyClassifier(strategy="prior"), cv=3)
    cv.fit(X, y, transition_matrix=T)
    # Balanced accuracy is a default for multiclass targets too (issue 16: it
    # was dropped although the docstring lists it).
    assert list(cv.scorers_) == ["accuracy", "balanced_accuracy", "log_loss"]
    assert set(cv.pooled_) == set(cv.scorers_)
    X, y, sigma = regression_data
    cv = NoisyCrossValidator(Ridge(), cv=3).fit(X, y, sigma=sigma)
    assert list(cv.scorers_) == [
        "mean_squared_error",
        "root_mean_squared_error",
        "mean_absolute_error",
        "r2",
    ]
    assert all(key in cv.pooled_ for key in cv.scorers_)


def test_results_layout_and_fold_summary(regression_data):
    X, y, sigma = regression_data
    cv = NoisyCrossValidator(Ridge(), scoring="mean_squared_error", cv=KFold(6)).fit(
        X, y, sigma=sigma
    )
    results = cv.cv_results_
    assert set(results) == {
        "fit_time",
        "score_time",
        "n_test",
        "mean_squared_error_expected",
        "mean_squared_error_variance",
        "mean_squared_error_nominal",
        "mean_squared_error_truth",
        "mean_squared_error_truth_variance",
        "mean_squared_error_forward",
        "mean_squared_error_forward_variance",
    }
    assert all(values.shape == (6,) for values in results.values())
    # expected/variance are the lead's (truth, the default estimand="auto")
    np.testing.assert_array_equal(
        results["mean_squared_error_truth"], results["mean_squared_error_expected"]
    )
    assert results["n_test"].sum() == y.size
    summary = cv.fold_summary_["mean_squared_error"]
    nominal = results["mean_squared_error_nominal"]
    variance = results["mean_squared_error_forward_variance"]  # the between-folds noise
    s_b2 = np.var(nominal, ddof=1)
    np.testing.assert_allclose(summary["between_fold_sd"], np.sqrt(s_b2), rtol=1e-12)
    np.testing.assert_allclose(
        summary["mean_label_noise_variance"], variance.mean(), rtol=1e-12
    )
    np.testing.assert_allclose(
        summary["excess_variance"], max(s_b2 - variance.mean(), 0.0), rtol=1e-12
    )
    np.testing.assert_allclose(
        summary["mean_expected"], results["mean_squared_error_expected"].mean()
    )
    # MSE in its own units and sign, per fold: truth = nominal - mean σ² and
    # forward = nominal + mean σ²
    for k, test in enumerate(cv.test_indices_):
        for estimand, sign in (("expected", -1.0), ("forward", 1.0)):
            np.testing.assert_allclose(
                results[f"mean_squared_error_{estimand}"][k]
                - results["mean_squared_error_nominal"][k],
                sign * np.mean(sigma[test] ** 2),
                rtol=1e-10,
            )


def test_summary_str_and_json_round_trip(regression_data):
    X, y, sigma = regression_data
    cv = NoisyCrossValidator(
        Ridge(),
        scoring=["mean_squared_error", "mean_absolute_error"],
        cv=KFold(3),
        confidence_level=0.9,
    ).fit(X, y, sigma=sigma)
    table = cv.summary()
    assert len(table) == 2 * (3 + 1)
    assert list(table["fold"][:4]) == [1, 2, 3, "pooled"]
    pooled = table[
        (table["fold"] == "pooled") & (table["metric"] == "mean_squared_error")
    ]
    score = cv.pooled_estimates_["mean_squared_error"]["forward"]
    truth = cv.pooled_estimates_["mean_squared_error"]["truth"]
    assert cv.pooled_["mean_squared_error"] == truth  # pooled_ holds the lead
    # the tables' interval: the score's own (unified near 0, Cornish–Fisher)
    low, high = truth.confidence_interval(0.9)
    assert pooled["estimand"].item() == "truth"
    # the interval starts at 0: an upper limit, no point shown; the raw estimate
    # stays in its own column
    assert low == 0.0 and pooled["limit"].item() == "<"
    assert math.isnan(pooled["estimate"].item())
    assert pooled["truth"].item() == truth.expected
    assert pooled["forward"].item() == score.expected
    assert pooled["forward_sd"].item() == score.std
    np.testing.assert_allclose(pooled["ci_low"].item(), low)
    np.testing.assert_allclose(pooled["ci_high"].item(), high)
    text = str(cv)
    assert "mean_squared_error (lower is better)" in text
    assert "pooled" in text and "90 % interval" in text
    assert "between folds: the nominal metric varies with SD" in text
    loaded = json.loads(json.dumps(cv.to_dict(), allow_nan=False))
    assert loaded["n_splits"] == 3
    assert [fold["fold"] for fold in loaded["folds"]] == [1, 2, 3]
    top = loaded["pooled"]["mean_squared_error"]  # the lead; forward nested
    assert top["expected"] == truth.expected and top["estimand"] == "truth"
    assert top["estimands"]["forward"]["estimate"] == score.expected
    assert (
        loaded["folds"][1]["metrics"]["mean_absolute_error"]["variance"]
        == (cv.cv_results_["mean_absolute_error_variance"][1])
    )
    assert json.loads(cv.to_json()) == loaded


def test_summary_without_pandas(regression_data, monkeypatch):
    X, y, sigma = regression_data
    cv = NoisyCrossValidator(Ridge(), scoring=["mean_squared_error"], cv=3).fit(
        X, y, sigma=sigma
    )
    monkeypatch.setitem(__import__("sys").modules, "pandas", None)
    rows = cv.summary()
    assert isinstance(rows, list) and rows[-1]["fold"] == "pooled"


def test_clone_get_params_set_params_pickle(regression_data):
    X, y, sigma = regression_data
    cv = NoisyCrossValidator(Ridge(alpha=2.0), scoring=["mean_squared_error"], cv=3)
    params = cv.get_params()
    assert params["estimator__alpha"] == 2.0
    assert params["cv"] == 3 and params["refit"] is False
    cv.set_params(estimator__alpha=5.0, confidence_level=0.8)
    assert cv.estimator.alpha == 5.0 and cv.confidence_level == 0.8
    copy = clone(cv)
    assert copy.get_params()["estimator__alpha"] == 5.0
    assert copy.estimator is not cv.estimator
    fitted = pickle.loads(pickle.dumps(cv.fit(X, y, sigma=sigma)))
    assert fitted.pooled_["mean_squared_error"] == cv.pooled_["mean_squared_error"]


def test_refit_predict_and_return_estimator(binary_data):
    X, y, q = binary_data
    cv = NoisyCrossValidator(
        LogisticRegression(),
        scoring=["accuracy"],
        cv=3,
        refit=True,
        return_estimator=True,
    ).fit(X, y, q=q)
    reference = LogisticRegression().fit(X, y)
    np.testing.assert_array_equal(cv.predict(X), reference.predict(X))
    np.testing.assert_allclose(cv.predict_proba(X), reference.predict_proba(X))
    np.testing.assert_array_equal(cv.classes_, [0, 1])
    assert len(cv.estimators_) == 3
    assert all(hasattr(est, "coef_") for est in cv.estimators_)
    no_refit = NoisyCrossValidator(LogisticRegression(), scoring=["accuracy"], cv=3)
    no_refit.fit(X, y, q=q)
    with pytest.raises(AttributeError, match="refit=True"):
        no_refit.predict(X)
    assert not hasattr(no_refit, "estimators_")
    assert not hasattr(NoisyCrossValidator(Ridge()), "predict_proba")


class _FailingRegressor(RegressorMixin, BaseEstimator):
    """Fails to fit when the training set holds sample 0 (so on all folds but one)."""

    def __init__(self, fail_on: float = np.inf):
        self.fail_on = fail_on

    def fit(self, X, y):
        if np.any(X[:, 0] == self.fail_on):
            raise ValueError("deliberate failure")
        self.mean_ = float(np.mean(y))
        return self

    def predict(self, X):
        return np.full(X.shape[0], self.mean_)


def test_error_score(regression_data):
    X, y, sigma = regression_data
    marker = X[0, 0]
    cv = NoisyCrossValidator(
        _FailingRegressor(fail_on=marker), scoring=["mean_squared_error"], cv=KFold(4)
    )
    with pytest.warns(FitFailedWarning, match="3 fits failed out of a total of 4"):
        cv.fit(X, y, sigma=sigma)
    expected = cv.cv_results_["mean_squared_error_expected"]
    assert np.isnan(expected[1:]).all() and np.isfinite(expected[0])
    assert cv.fold_scores_["mean_squared_error"][1] is None
    # strict JSON: the NaN of a failed fold is written as null
    payload = json.loads(json.dumps(cv.to_dict(), allow_nan=False))
    assert payload["folds"][1]["metrics"]["mean_squared_error"]["expected"] is None
    # pooled over the folds that were fitted only
    assert cv.pooled_["mean_squared_error"].n_samples == cv.cv_results_["n_test"][0]
    cv.set_params(error_score=-1.0)
    with pytest.warns(FitFailedWarning):
        cv.fit(X, y, sigma=sigma)
    assert (cv.cv_results_["mean_squared_error_expected"][1:] == -1.0).all()
    cv.set_params(error_score="raise")
    with pytest.raises(ValueError, match="deliberate failure"):
        cv.fit(X, y, sigma=sigma)
    all_fail = NoisyCrossValidator(
        _FailingRegressor(fail_on=0.0), scoring=["mean_squared_error"], cv=KFold(2)
    )
    X_zero = np.zeros((10, 1))
    with pytest.raises(ValueError, match="All the 2 fits failed"):
        all_fail.fit(X_zero, np.arange(10.0), sigma=0.1)


def test_missing_noise_raises_clear_error(regression_data, binary_data):
    X, y, _ = regression_data
    cv = NoisyCrossValidator(Ridge(), scoring=["mean_squared_error"], cv=3)
    with pytest.raises(ValueError, match="sigma") as info:
        cv.fit(X, y)
    # One clear error before any fold, naming the public keyword (not the
    # internal score_predictions, nor an embedded traceback).
    message = str(info.value)
    assert r"fit(X, y, sigma=sigma)" in message
    assert "score_predictions" not in message and "Traceback" not in message
    X, y, _ = binary_data
    with pytest.raises(ValueError, match=r"fit\(X, y, q=q\)") as info:
        NoisyCrossValidator(LogisticRegression(), cv=3).fit(X, y)
    assert "transition_matrix=T" in str(info.value)
    assert "Traceback" not in str(info.value)
    # A scorer with its own source needs nothing from fit.
    own = make_noisy_scorer("accuracy", q=0.1)
    NoisyCrossValidator(LogisticRegression(), scoring=own, cv=3).fit(X, y)


def test_scorer_with_column_source(regression_data):
    pd = pytest.importorskip("pandas")
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline

    X, y, sigma = regression_data
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"]).assign(sig=sigma)
    model = make_pipeline(
        ColumnTransformer([("drop", "drop", ["sig"])], remainder="passthrough"),
        Ridge(),
    )
    scorer = make_noisy_scorer("mean_squared_error", sigma="sig")
    from_column = NoisyCrossValidator(model, scoring=[scorer], cv=KFold(3)).fit(
        frame, y
    )
    from_keyword = NoisyCrossValidator(
        Ridge(), scoring=["mean_squared_error"], cv=KFold(3)
    ).fit(X, y, sigma=sigma)
    np.testing.assert_allclose(
        from_column.cv_results_["mean_squared_error_variance"],
        from_keyword.cv_results_["mean_squared_error_variance"],
        rtol=1e-12,
    )
    assert from_column.pooled_["mean_squared_error"].expected == pytest.approx(
        from_keyword.pooled_["mean_squared_error"].expected, rel=1e-12
    )


def test_groups_and_fit_params(regression_data):
    X, y, sigma = regression_data
    groups = np.arange(y.size) % 4
    weight = np.linspace(0.5, 2.0, y.size)
    cv = NoisyCrossValidator(
        Ridge(), scoring=["mean_squared_error"], cv=GroupKFold(4), return_estimator=True
    ).fit(X, y, sigma=sigma, groups=groups, sample_weight=weight)
    for test, estimator in zip(cv.test_indices_, cv.estimators_, strict=True):
        assert np.unique(groups[test]).size == 1
        train = np.setdiff1d(np.arange(y.size), test)
        reference = Ridge().fit(X[train], y[train], sample_weight=weight[train])
        np.testing.assert_allclose(estimator.coef_, reference.coef_, rtol=1e-12)


def test_overlapping_test_sets_are_not_pooled(regression_data):
    X, y, sigma = regression_data
    cv = NoisyCrossValidator(
        Ridge(),
        scoring=["mean_squared_error"],
        cv=ShuffleSplit(n_splits=4, test_size=0.5, random_state=0),
    )
    with pytest.warns(UserWarning, match="overlap"):
        cv.fit(X, y, sigma=sigma)
    assert cv.pooled_ == {} and cv.oof_predictions_ is None
    assert cv.cv_results_["mean_squared_error_expected"].shape == (4,)
    assert "pooled" not in str(cv).split("mean_squared_error")[1].split("between")[0]


def test_verbose_prints_one_line_per_fold(regression_data, capsys):
    X, y, sigma = regression_data
    NoisyCrossValidator(
        Ridge(), scoring=["mean_squared_error"], cv=KFold(3), verbose=1
    ).fit(X, y, sigma=sigma)
    lines = [
        line for line in capsys.readouterr().out.splitlines() if line.startswith("[CV")
    ]
    assert len(lines) == 3
    assert lines[0].startswith("[CV 1/3] END mean_squared_error:")


@pytest.mark.parametrize(
    ("params", "fit_kwargs", "error", "match"),
    [
        ({"confidence_level": 1.5}, {"sigma": 0.1}, ValueError, "confidence_level"),
        ({"error_score": "ignore"}, {"sigma": 0.1}, ValueError, "error_score"),
        ({"verbose": -1}, {"sigma": 0.1}, ValueError, "verbose"),
        ({"scoring": ["nope"]}, {"sigma": 0.1}, ValueError, "metric must be"),
        ({"scoring": [3]}, {"sigma": 0.1}, TypeError, "scoring"),
        (
            {"scoring": ["mean_squared_error", "mean_squared_error"]},
            {"sigma": 0.1},
            ValueError,
            "twice",
        ),
        ({}, {"sigma": 0.1, "q": 0.1}, TypeError, "not both"),
        ({}, {"sigma": -1.0}, ValueError, "sigma"),
        ({}, {"q": 0.1}, TypeError, "regression metric"),
        ({"scoring": ["accuracy"]}, {"sigma": 0.1}, TypeError, "classification"),
        ({}, {"sigma": np.ones(3)}, ValueError, "sigma"),
    ],
)
def test_bad_parameters(regression_data, params, fit_kwargs, error, match):
    X, y, _ = regression_data
    cv = NoisyCrossValidator(Ridge(), **{"scoring": ["mean_squared_error"], **params})
    with pytest.raises(error, match=match):
        cv.fit(X, y, **fit_kwargs)


def test_inputs_not_mutated_and_lists_accepted(regression_data):
    X, y, sigma = regression_data
    X_copy, y_copy, sigma_copy = X.copy(), y.copy(), sigma.copy()
    cv = NoisyCrossValidator(LinearRegression(), scoring=["mean_squared_error"], cv=3)
    cv.fit(X.tolist(), y.tolist(), sigma=sigma.astype(np.float32).tolist())
    np.testing.assert_array_equal(X, X_copy)
    np.testing.assert_array_equal(y, y_copy)
    np.testing.assert_array_equal(sigma, sigma_copy)
    assert np.isfinite(cv.pooled_["mean_squared_error"].expected)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        str(cv)


def test_two_loky_workers_match_serial(binary_data):
    X, y, q = binary_data
    scoring = ["accuracy", "f1", "log_loss"]
    serial = NoisyCrossValidator(LogisticRegression(), scoring=scoring, cv=4)
    parallel = NoisyCrossValidator(
        LogisticRegression(), scoring=scoring, cv=4, n_jobs=2
    )
    serial.fit(X, y, q=q)
    parallel.fit(X, y, q=q)
    for key, values in serial.cv_results_.items():
        if not key.endswith("_time"):
            np.testing.assert_array_equal(values, parallel.cv_results_[key])
    assert serial.pooled_ == parallel.pooled_


# ------------------------------------------------------------------ estimands


def _expected_lead(metric, requested):
    """The estimand that leads for ``metric``: read from the registry."""
    from sklearn_noisy.metrics import get_metric_info

    offered = get_metric_info(metric).estimands
    wanted = "truth" if requested == "auto" else requested
    if wanted in offered:
        return wanted
    if wanted == "truth" and "remeasurement" in offered:
        return "remeasurement"
    return "forward"


def test_truth_estimand_per_fold_and_pooled(regression_data):
    X, y, sigma = regression_data
    cv = NoisyCrossValidator(
        Ridge(), scoring=["mean_squared_error", "r2"], cv=KFold(4)
    ).fit(X, y, sigma=sigma)
    assert cv.estimand == "auto"
    assert cv.estimands_["mean_squared_error"]["lead"] == "truth"
    assert cv.estimands_["mean_squared_error"]["shown"] == ("truth", "forward")
    assert cv.estimands_["r2"]["lead"] == _expected_lead("r2", "auto")
    results = cv.cv_results_
    oof = cv.oof_predictions_
    for k, test in enumerate(cv.test_indices_):
        truth = expected_mean_squared_error(
            y[test], oof[test], sigma=sigma[test], estimand="truth"
        )
        assert results["mean_squared_error_truth"][k] == pytest.approx(
            truth.expected, rel=1e-12, abs=1e-15
        )
        assert results["mean_squared_error_truth_variance"][k] == pytest.approx(
            truth.variance, rel=1e-12
        )
    # the pooled truth is the truth estimate on all the out-of-fold predictions:
    # for MSE the weighted mean of the folds' estimates; its variance has one
    # floor, at most the sum of the folds' floored variances
    weights = results["n_test"] / results["n_test"].sum()
    pooled = cv.pooled_estimates_["mean_squared_error"]["truth"]
    assert pooled.estimand == "truth"
    assert all(
        s.estimand == "truth" for s in cv.fold_estimates_["mean_squared_error"]["truth"]
    )
    assert pooled.expected == pytest.approx(
        np.sum(weights * results["mean_squared_error_truth"]), rel=1e-12
    )
    assert pooled.variance <= np.sum(
        weights**2 * results["mean_squared_error_truth_variance"]
    ) * (1 + 1e-12)
    whole = expected_mean_squared_error(y, oof, sigma=sigma, estimand="truth")
    assert pooled.expected == pytest.approx(whole.expected, rel=1e-10)
    assert pooled.variance == pytest.approx(whole.variance, rel=1e-10)
    # pooled_ and the expected columns hold the lead, truth
    assert pooled is cv.pooled_["mean_squared_error"]
    np.testing.assert_array_equal(
        results["mean_squared_error_truth"], results["mean_squared_error_expected"]
    )


def test_truth_of_a_non_additive_metric_is_scored_on_the_pooled_oof(binary_data):
    from sklearn_noisy.metrics import expected_precision_score

    X, y, q = binary_data
    cv = NoisyCrossValidator(
        LogisticRegression(), scoring=["precision", "accuracy"], cv=3
    ).fit(X, y, q=q)
    oof = cv.oof_predictions_
    pooled = cv.pooled_estimates_["precision"]["truth"]
    reference = expected_precision_score(y, oof, q=q, estimand="truth")
    assert pooled.expected == reference.expected
    assert pooled.variance == reference.variance
    accuracy = cv.pooled_estimates_["accuracy"]["truth"]
    reference = expected_accuracy_score(y, oof, q=q, estimand="truth")
    assert accuracy.expected == pytest.approx(reference.expected, rel=1e-12)


@pytest.mark.parametrize("estimand", ["auto", "truth", "remeasurement", "forward"])
def test_estimand_option_chooses_the_lead(regression_data, estimand):
    X, y, sigma = regression_data
    cv = NoisyCrossValidator(
        Ridge(),
        scoring=["mean_squared_error", "mean_absolute_error"],
        cv=3,
        estimand=estimand,
    ).fit(X, y, sigma=sigma)
    for key in cv.scorers_:
        info = cv.estimands_[key]
        lead = _expected_lead(key, estimand)
        assert info["lead"] == lead
        assert "forward" in info["shown"] and lead in info["shown"]
        requested = "truth" if estimand == "auto" else estimand
        if lead != requested:
            assert info["notes"] == [
                f"{key} offers no {requested} estimate: {lead} leads instead."
            ]
        else:
            assert info["notes"] == []
        row = cv.summary()
        pooled = row[(row["metric"] == key) & (row["fold"] == "pooled")]
        assert pooled["estimand"].item() == lead
        assert pooled[lead].item() == cv.pooled_estimates_[key][lead].expected
        shown = pooled["estimate"].item()
        assert (
            shown == pooled[lead].item()
            if not pooled["limit"].item()
            else (math.isnan(shown))
        )


def test_estimand_validation(regression_data):
    X, y, sigma = regression_data
    with pytest.raises(ValueError, match="estimand must be one of"):
        NoisyCrossValidator(Ridge(), estimand="measurement").fit(X, y, sigma=sigma)
    with pytest.raises(
        TypeError, match=r"sigma_dof \(the degrees of freedom of sigma\) needs sigma"
    ):
        NoisyCrossValidator(Ridge()).fit(X, y, sigma_dof=3)
    with pytest.raises(ValueError, match="sigma_dof must be positive"):
        NoisyCrossValidator(Ridge()).fit(X, y, sigma=sigma, sigma_dof=-1)
    with pytest.raises(ValueError, match="sigma_dof"):
        NoisyCrossValidator(Ridge()).fit(X, y, sigma=sigma, sigma_dof=np.ones(3))


def test_sigma_dof_is_sliced_per_fold(regression_data, monkeypatch):
    from sklearn_noisy import NoisyScorer

    X, y, sigma = regression_data
    dof = np.arange(y.size, dtype=float) % 6 + 2.0
    calls = []
    score_estimands = NoisyScorer._score_estimands

    def spy(self, *args, **kwargs):
        calls.append(np.asarray(kwargs["sigma_dof"]))
        return score_estimands(self, *args, **kwargs)

    monkeypatch.setattr(NoisyScorer, "_score_estimands", spy)
    cv = NoisyCrossValidator(Ridge(), scoring=["r2"], cv=KFold(3)).fit(
        X, y, sigma=sigma, sigma_dof=dof
    )
    assert len(calls) > 3  # one call per fold, then the pooled scores
    for given, test in zip(calls[:3], cv.test_indices_, strict=True):
        np.testing.assert_array_equal(given, dof[test])
    # r2 is not additive: its pooled scores get every out-of-fold sample
    assert all(np.array_equal(given, dof) for given in calls[3:])


def test_sigma_dof_widens_the_truth_interval(regression_data):
    X, y, sigma = regression_data
    dof = np.full(y.size, 3.0)
    known = NoisyCrossValidator(Ridge(), scoring=["mean_squared_error"], cv=3)
    known.fit(X, y, sigma=sigma)
    estimated = clone(known).fit(X, y, sigma=sigma, sigma_dof=dof)
    truth = estimated.pooled_estimates_["mean_squared_error"]["truth"]
    reference = expected_mean_squared_error(
        y, estimated.oof_predictions_, sigma=sigma, sigma_dof=dof, estimand="truth"
    )
    assert truth.variance == pytest.approx(reference.variance, rel=1e-12)
    assert (
        truth.variance > known.pooled_estimates_["mean_squared_error"]["truth"].variance
    )


def test_report_text_and_json(regression_data):
    X, y, sigma = regression_data
    cv = NoisyCrossValidator(
        Ridge(), scoring=["mean_squared_error", "r2"], cv=KFold(4)
    ).fit(X, y, sigma=sigma)
    text = str(cv)
    lines = text.splitlines()
    assert lines[2].startswith("Summary, the numbers to report (pooled; 95 %")
    assert lines[3].startswith("  MSE against the true values: ")
    assert lines[4].startswith("  R² against the true values:  ")
    assert lines[6].startswith("Legend (SD and 95 % interval: label noise only")
    assert any(
        line.strip().startswith("truth:")
        and "the metric against the true values" in line
        for line in lines
    )
    forward = [line for line in lines if line.strip().startswith("forward:")]
    assert forward and "if y_true were exact" in forward[0]
    assert "not what a re-measurement shows" in forward[0]
    columns = ["fold", "n_test", "nominal"]
    header = next(line for line in lines if line.split()[:3] == columns)
    assert header.split()[3:7] == ["truth", "SD", "95", "%"]
    folds = [line.split()[0] for line in lines if line[:6].strip().isdigit()]
    assert folds[:4] == ["1", "2", "3", "4"]
    # numbers rounded to the precision of the SD: two significant figures of
    # the smallest SD of the block
    truth = cv.pooled_estimates_["mean_squared_error"]["truth"]
    pooled_line = next(line for line in lines if line.startswith("pooled"))
    decimals = len(pooled_line.split()[2].split(".")[1])
    smallest = min(
        np.sqrt(cv.cv_results_["mean_squared_error_truth_variance"]).min(),
        truth.std,
    )
    assert decimals == 1 - int(np.floor(np.log10(smallest)))
    payload = json.loads(cv.to_json(allow_nan=False))
    assert payload["estimand"] == "auto"
    assert set(payload["legend"]) == {
        "nominal", "truth", "forward", "sampling", "< x, > x"
    }  # fmt: skip
    metric = payload["metrics"]["mean_squared_error"]
    assert metric["lead"] == "truth" and metric["estimands"] == ["truth", "forward"]
    assert metric["report_this"] == lines[3].strip()
    pooled = payload["pooled"]["mean_squared_error"]["estimands"]
    assert set(pooled["truth"]) == {
        "estimate", "variance", "sd", "ci_low", "ci_high", "ci_method", "limit",
        "sampling_sd", "total_sd", "both_ci_low", "both_ci_high", "both_ci_method",
    }  # fmt: skip
    assert set(pooled["forward"]) == {
        "estimate", "variance", "sd", "sampling_sd", "total_sd"
    }  # fmt: skip
    assert pooled["truth"]["estimate"] == truth.expected
    # the error budget: the MSE's per-sample terms on the out-of-fold predictions
    assert truth.sampling_method == "per_sample_terms"
    assert pooled["truth"]["sampling_sd"] == pytest.approx(truth.sampling_std)
    both = truth.confidence_interval(0.95, source="both")
    assert (pooled["truth"]["both_ci_low"], pooled["truth"]["both_ci_high"]) == (
        pytest.approx(both.low),
        pytest.approx(both.high),
    )
    assert pooled["truth"]["both_ci_method"] == both.method
    assert pooled["truth"]["ci_method"] == truth.confidence_interval(0.95).method
    assert "95 %" in metric["report_this"]
    assert text.count("error budget of the pooled truth: SD ") == 2
    fold = payload["folds"][0]
    assert fold["fold"] == 1
    assert (
        fold["metrics"]["mean_squared_error"]["estimands"]["truth"]["estimate"]
        == (cv.cv_results_["mean_squared_error_truth"][0])
    )


@pytest.mark.filterwarnings("ignore:The truth estimate of the MSE is <= 0")
@pytest.mark.parametrize("estimand", ["truth", "remeasurement"])
def test_pooled_rmse_interval_is_the_root_of_the_mse_interval(
    regression_data, estimand
):
    X, y, sigma = regression_data
    names = ["mean_squared_error", "root_mean_squared_error"]
    cv = NoisyCrossValidator(
        Ridge(), scoring=names, cv=KFold(3), estimand=estimand
    ).fit(X, y, sigma=sigma)
    mse, rmse = (cv.pooled_estimates_[name][estimand] for name in names)
    assert rmse.interval_method == "unified_sqrt" and rmse.sampling_method
    for source in ("label_noise", "both"):
        np.testing.assert_allclose(
            rmse.confidence_interval(0.95, source=source),
            np.sqrt(mse.confidence_interval(0.95, source=source)),
            rtol=0,
            atol=1e-9,
        )
