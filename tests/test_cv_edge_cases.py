"""NoisyCrossValidator at the edges (issues 15 and 16): single-class and tiny
folds, LeaveOneOut, one-column 2-D targets, infinite moments in the summaries,
metrics never dropped from ``pooled_``, and scikit-learn's estimator checks."""

from __future__ import annotations

import math
import warnings
from typing import ClassVar

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import accuracy_score, mean_squared_error, r2_score
from sklearn.model_selection import KFold, LeaveOneOut, cross_val_predict
from sklearn.utils.estimator_checks import estimator_checks_generator

from sklearn_noisy import make_noisy_scorer
from sklearn_noisy.metrics import (
    expected_accuracy_score,
    expected_mean_squared_error,
    expected_r2_score,
)
from sklearn_noisy.model_selection import NoisyCrossValidator
from sklearn_noisy.model_selection._report import interval

_RNG = np.random.RandomState(11)
X = _RNG.normal(size=(20, 3))
Y = X @ np.array([1.0, 2.0, 3.0]) + _RNG.normal(size=20)
SIGMA = _RNG.uniform(0.1, 0.5, size=20)
Y_CLF = (X[:, 0] + 0.3 * _RNG.normal(size=20) > 0).astype(int)


# --------------------------------------------------------- class sets of folds
def _imbalanced():
    rng = np.random.RandomState(3)
    X = rng.normal(size=(100, 2))
    y = np.zeros(100, dtype=int)
    y[[0, 1, 20, 21, 40]] = 1  # test folds 4 and 5 of KFold(5) hold class 0 only
    X[y == 1] += 3.0
    return X, y


def test_single_class_folds_keep_accuracy_pooled():
    # Issue 15: accuracy failed on the single-class folds and was dropped from
    # pooled_ without a word.
    X_imb, y = _imbalanced()
    cv = NoisyCrossValidator(
        LogisticRegression(), scoring=["accuracy"], cv=KFold(5), estimand="forward"
    )
    cv.fit(X_imb, y, q=0.0)
    oof = cross_val_predict(LogisticRegression(), X_imb, y, cv=KFold(5))
    assert cv.pooled_["accuracy"].nominal == accuracy_score(y, oof)
    assert cv.pooled_["accuracy"].expected == accuracy_score(y, oof)
    for k, (_, test) in enumerate(KFold(5).split(X_imb)):
        fold = cv.cv_results_["accuracy_nominal"][k]
        assert fold == accuracy_score(y[test], oof[test])
    q = 0.2
    cv.fit(X_imb, y, q=q)
    closed_form = np.mean(np.where(oof == y, 1.0 - q, q))
    assert cv.pooled_["accuracy"].expected == pytest.approx(closed_form, rel=1e-12)


def test_folds_are_scored_over_all_classes_of_y():
    rng = np.random.RandomState(5)
    y = np.repeat([0, 1, 2], 10)
    X3 = np.eye(3)[y] + rng.normal(scale=0.8, size=(30, 3))
    splits = [
        (np.flatnonzero(y != 2)[::2], np.flatnonzero(y != 2)[1::2]),  # no 2 in test
        (np.flatnonzero(y != 2)[1::2], np.flatnonzero(y == 2)),
    ]
    cv = NoisyCrossValidator(
        LogisticRegression(), scoring=["accuracy"], cv=splits, estimand="forward"
    )
    cv.fit(X3, y, q=0.3)
    train, test = splits[0]
    model = LogisticRegression().fit(X3[train], y[train])
    y_pred = model.predict(X3[test])
    assert set(y[test]) | set(y_pred) == {0, 1} and np.any(y_pred != y[test])
    # Flips go to each of the 2 other classes of y with probability q / 2.
    closed_form = np.mean(np.where(y_pred == y[test], 0.7, 0.15))
    assert cv.fold_scores_["accuracy"][0].expected == pytest.approx(
        closed_form, rel=1e-12
    )


def test_metric_failing_on_a_fold_is_still_pooled():
    # A q source that fails on the smallest fold: the metric is pooled over
    # all the out-of-fold predictions, with a warning for the fold.
    def q_source(X, y):
        if len(y) < 5:
            raise ValueError("too few samples for this q source")
        return np.full(len(y), 0.1)

    splits = [(np.arange(3, 20), np.arange(3)), (np.arange(3), np.arange(3, 20))]
    scorer = make_noisy_scorer("accuracy", q=q_source)
    cv = NoisyCrossValidator(LogisticRegression(), scoring=[scorer], cv=splits)
    with pytest.warns(UserWarning, match="failed on 1 of 2 folds"):
        cv.fit(X, Y_CLF)
    assert cv.fold_scores_["accuracy"][0] is None
    oof = cv.oof_predictions_
    reference = expected_accuracy_score(Y_CLF, oof, q=0.1, labels=[0, 1])
    assert cv.pooled_["accuracy"].expected == pytest.approx(
        reference.expected, rel=1e-12
    )


class _NaNOnSmallFolds(Ridge):
    def predict(self, X):
        prediction = super().predict(X)
        return np.full_like(prediction, np.nan) if len(X) < 5 else prediction


def test_metric_that_cannot_be_pooled_is_not_dropped_silently():
    splits = [(np.arange(3, 20), np.arange(3)), (np.arange(3), np.arange(3, 20))]
    cv = NoisyCrossValidator(
        _NaNOnSmallFolds(), scoring=["mean_squared_error"], cv=splits
    )
    with pytest.warns(UserWarning, match="'mean_squared_error' could not be pooled"):
        cv.fit(X, Y, sigma=0.3)
    assert "mean_squared_error" not in cv.pooled_


# --------------------------------------------------- one prediction per fold
class _CountingLogistic(LogisticRegression):
    calls: ClassVar[dict[str, int]] = {"predict": 0, "predict_proba": 0}

    def predict(self, X):
        type(self).calls["predict"] += 1
        return super().predict(X)

    def predict_proba(self, X):
        type(self).calls["predict_proba"] += 1
        return super().predict_proba(X)


def test_cross_validator_predicts_once_per_fold_and_method():
    # Issue 15: every noisy scorer is fed the fold's one prediction, also the
    # further estimands of each metric; pooling reuses the recorded responses.
    _CountingLogistic.calls = {"predict": 0, "predict_proba": 0}
    scoring = ["accuracy", "balanced_accuracy", "f1", "precision", "log_loss"]
    cv = NoisyCrossValidator(_CountingLogistic(), scoring=scoring, cv=4)
    cv.fit(X, Y_CLF, q=0.1)
    assert _CountingLogistic.calls == {"predict": 4, "predict_proba": 4}
    assert set(cv.pooled_) == set(scoring)


# -------------------------------------------------------- one-column 2-D target
@pytest.mark.parametrize("sigma", [0.3, SIGMA])
def test_one_column_2d_target(sigma):
    # Issue 15: any per-sample sigma failed for y = df[["y"]].
    frame = pd.DataFrame({"y": Y})
    cv_2d = NoisyCrossValidator(Ridge(), cv=4).fit(X, frame[["y"]], sigma=sigma)
    cv_1d = NoisyCrossValidator(Ridge(), cv=4).fit(X, frame["y"], sigma=sigma)
    assert cv_2d.oof_predictions_.shape == (20,)
    assert set(cv_2d.pooled_) == set(cv_1d.pooled_) == set(cv_1d.scorers_)
    for key, score in cv_1d.pooled_.items():
        assert cv_2d.pooled_[key] == score
    reference = expected_mean_squared_error(Y, cv_1d.oof_predictions_, sigma=sigma)
    assert cv_2d.pooled_["mean_squared_error"].expected == pytest.approx(
        reference.expected, rel=1e-12
    )


# --------------------------------------------------------- LeaveOneOut, tiny folds
def test_leave_one_out_regression():
    # Issue 16: "Scoring 'r2' failed on every fold".
    with pytest.warns(UndefinedMetricWarning, match="R² is not defined on fewer"):
        cv = NoisyCrossValidator(Ridge(), cv=LeaveOneOut(), estimand="forward").fit(
            X, Y, sigma=0.3
        )
    assert cv.n_splits_ == 20
    # Per fold R² is NaN, as scikit-learn's r2_score on one sample.
    assert np.all(np.isnan(cv.cv_results_["r2_nominal"]))
    assert np.all(np.isnan(cv.cv_results_["r2_expected"]))
    oof = cross_val_predict(Ridge(), X, Y, cv=LeaveOneOut())
    np.testing.assert_allclose(cv.oof_predictions_, oof, rtol=1e-12)
    pooled = cv.pooled_["r2"]
    assert pooled.n_samples == 20
    assert pooled.nominal == pytest.approx(r2_score(Y, oof), rel=1e-12)
    reference = expected_r2_score(Y, oof, sigma=0.3, estimand="forward")
    assert pooled.expected == pytest.approx(reference.expected, rel=1e-12)
    assert pooled.variance == pytest.approx(reference.variance, rel=1e-12)
    mse = cv.pooled_["mean_squared_error"]
    assert mse.nominal == pytest.approx(mean_squared_error(Y, oof), rel=1e-12)
    assert mse.expected == pytest.approx(mean_squared_error(Y, oof) + 0.09, rel=1e-12)
    assert set(cv.pooled_estimates_["r2"]) == set(cv.estimands_["r2"]["shown"])


def test_leave_one_out_classification():
    cv = NoisyCrossValidator(LogisticRegression(), cv=LeaveOneOut(), estimand="forward")
    cv.fit(X, Y_CLF, q=0.1)
    assert set(cv.pooled_) == {"accuracy", "balanced_accuracy", "f1", "log_loss"}
    oof = cross_val_predict(LogisticRegression(), X, Y_CLF, cv=LeaveOneOut())
    closed_form = np.mean(np.where(oof == Y_CLF, 0.9, 0.1))
    assert cv.pooled_["accuracy"].expected == pytest.approx(closed_form, rel=1e-12)
    assert np.all(np.isfinite(cv.cv_results_["accuracy_expected"]))


def test_two_sample_folds_fold_summary_and_summary():
    # Issue 16: with 2-sample folds mean_nominal and between_fold_sd were NaN
    # although every fold's nominal R² is finite; summary() gave (-inf, NaN)
    # intervals and RuntimeWarnings.
    cv = NoisyCrossValidator(Ridge(), scoring=["r2"], cv=KFold(10), estimand="forward")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the metric's own notes
        cv.fit(X, Y, sigma=0.3)
    nominal = cv.cv_results_["r2_nominal"]
    assert np.all(np.isfinite(nominal))
    summary = cv.fold_summary_["r2"]
    assert summary["mean_nominal"] == pytest.approx(np.mean(nominal), rel=1e-12)
    assert summary["between_fold_sd"] == pytest.approx(
        np.std(nominal, ddof=1), rel=1e-12
    )
    expected = cv.cv_results_["r2_expected"]
    variance = cv.cv_results_["r2_variance"]
    for value in summary.values():
        assert not math.isnan(value)
    if np.any(np.isinf(variance)):
        assert summary["mean_label_noise_variance"] == math.inf
        assert summary["excess_variance"] == 0.0
    if np.all(expected == -np.inf):
        assert summary["mean_expected"] == -math.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = cv.summary()
        cv.to_json(allow_nan=False)
        text = str(cv)
    assert not table[["ci_low", "ci_high"]].isna().to_numpy().any()
    infinite = np.isinf(table["sd"].to_numpy())
    assert np.all(table["ci_low"].to_numpy()[infinite] == -np.inf)
    # clipped to the range of R² (issue 16): at most 1
    assert np.all(table["ci_high"].to_numpy()[infinite] == 1.0)
    assert "nan" not in text


@pytest.mark.parametrize("estimand", ["forward", "truth"])
def test_interval_of_infinite_moments(estimand):
    z = 1.959963984540054
    assert interval("", estimand, -math.inf, math.inf, 0.95) == (-math.inf, math.inf)
    assert interval("", estimand, 0.5, math.inf, 0.95) == (-math.inf, math.inf)
    assert interval("", estimand, -math.inf, 0.25, 0.95) == (-math.inf, -math.inf)
    low, high = interval("", estimand, math.nan, 0.25, 0.95)
    assert math.isnan(low) and math.isnan(high)
    assert interval("", estimand, 1.0, 0.25, 0.95) == pytest.approx(
        (1.0 - z * 0.5, 1.0 + z * 0.5), rel=1e-14
    )


# ----------------------------------------------------- scikit-learn's checks
def _estimator_checks():
    """scikit-learn's checks of the cross-validator, with a constant-noise scorer.

    All apply except ``check_array_api_input``, which scikit-learn runs only
    when the environment variable ``SCIPY_ARRAY_API`` is set (the estimator
    has no array API support to check); it is left out rather than skipped.
    """
    estimators = [
        NoisyCrossValidator(
            Ridge(),
            scoring=make_noisy_scorer("mean_squared_error", sigma=0.1),
            refit=True,
            cv=2,
        ),
        NoisyCrossValidator(
            LogisticRegression(),
            scoring=make_noisy_scorer("accuracy", q=0.1),
            refit=True,
            cv=2,
        ),
    ]
    for k, estimator in enumerate(estimators):
        for instance, check in estimator_checks_generator(estimator):
            name = getattr(check, "func", check).__name__
            if name != "check_array_api_input":
                yield pytest.param(instance, check, id=f"{k}-{name}")


@pytest.mark.parametrize(("estimator", "check"), _estimator_checks())
def test_sklearn_estimator_checks(estimator, check):
    # Issue 15: n_features_in_ was never set, and sparse input was accepted
    # although the tags said it was not (the tags are the estimator's now).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check(estimator)
