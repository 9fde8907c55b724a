"""Tests for the noise-aware scorers: scoring=, metadata routing, searches."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.compose import ColumnTransformer
from sklearn.exceptions import UnsetMetadataPassedError
from sklearn.linear_model import Ridge
from sklearn.metrics import get_scorer
from sklearn.model_selection import (
    GridSearchCV,
    KFold,
    RandomizedSearchCV,
    StratifiedKFold,
    cross_val_score,
    cross_validate,
)
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import sklearn_noisy
from sklearn_noisy import (
    NoisyScore,
    NoisyScorer,
    expected_mean_squared_error,
    get_noisy_scorer,
    get_noisy_scorer_names,
    make_noisy_scorer,
)
from sklearn_noisy.metrics import MissingNoiseError, get_metric_info, get_metric_names

# The regression data hold labels near 0, where the percentage errors warn
# that scikit-learn's floor sets their moments (tested in test_percentage.py).
pytestmark = pytest.mark.filterwarnings(
    r"ignore:For \d+ label\(s\) the noise reaches 0:UserWarning"
)

# Scorer name -> canonical metric, from the metric registry.
_NAMED_SCORERS = {get_metric_info(m).scorer_name: m for m in get_metric_names()}

# --------------------------------------------------------------------------- data
_RNG = np.random.RandomState(42)
N_REG = 60
X_REG = _RNG.normal(size=(N_REG, 3))
Y_REG = X_REG @ np.array([1.5, -2.0, 0.5]) + _RNG.normal(scale=0.5, size=N_REG)
SIGMA = _RNG.uniform(0.1, 0.6, size=N_REG)
CV_REG = KFold(n_splits=4, shuffle=True, random_state=0)

N_CLF = 80
X_CLF = _RNG.normal(size=(N_CLF, 3))
Y_CLF = (
    X_CLF[:, 0] - 0.5 * X_CLF[:, 1] + _RNG.normal(scale=0.8, size=N_CLF) > 0
).astype(int)
Q = _RNG.uniform(0.0, 0.2, size=N_CLF)
CV_CLF = StratifiedKFold(n_splits=4, shuffle=True, random_state=0)

# scikit-learn's scorer for each canonical metric (the sigma = 0 / q = 0 limit).
SKLEARN_SCORERS = {
    "mean_squared_error": "neg_mean_squared_error",
    "mean_absolute_error": "neg_mean_absolute_error",
    "root_mean_squared_error": "neg_root_mean_squared_error",
    "r2": "r2",
    "accuracy": "accuracy",
    "balanced_accuracy": "balanced_accuracy",
    "precision": "precision",
    "recall": "recall",
    "f1": "f1",
    "matthews_corrcoef": "matthews_corrcoef",
    "brier_score_loss": "neg_brier_score",
    "log_loss": "neg_log_loss",
}


def _sigma_from_target(X, y):
    """A callable noise source (module level, so that it pickles)."""
    return 0.1 + 0.05 * np.abs(np.asarray(y))


def _setup(metric):
    """Estimator, X, y, per-sample noise, constant noise and splitter of a metric."""
    if get_metric_info(metric).noise_parameter == "sigma":
        return Ridge(alpha=1.0), X_REG, Y_REG, SIGMA, 0.3, CV_REG
    return GaussianNB(), X_CLF, Y_CLF, Q, 0.1, CV_CLF


def _function(metric):
    return get_metric_info(metric).function


def _reference_fold_scores(metric, estimator, X, y, noise, cv, **kwargs):
    """The functional metric on each test fold, computed by hand."""
    function = _function(metric)
    key = get_metric_info(metric).noise_parameter
    scores = []
    for train, test in cv.split(X, y):
        model = clone(estimator).fit(X[train], y[train])
        fold_noise = noise[test] if isinstance(noise, np.ndarray) else noise
        if metric == "brier_score_loss":
            proba = model.predict_proba(X[test])[:, 1]
            score = function(
                y[test], proba, pos_label=model.classes_[1], **{key: fold_noise}
            )
        elif metric == "roc_auc":
            proba = model.predict_proba(X[test])[:, 1]
            score = function(y[test], proba, labels=model.classes_, **{key: fold_noise})
        elif metric == "log_loss":
            proba = model.predict_proba(X[test])
            score = function(
                y[test], proba, labels=model.classes_, **{key: fold_noise}, **kwargs
            )
        else:
            score = function(
                y[test], model.predict(X[test]), **{key: fold_noise}, **kwargs
            )
        scores.append(score)
    return scores


def _signed(metric, values):
    sign = 1.0 if get_metric_info(metric).greater_is_better else -1.0
    return sign * np.asarray(values)


# ------------------------------------------------------------------ named scorers
def test_named_scorers_list():
    names = get_noisy_scorer_names()
    assert names == sorted(names)
    # One name per metric of the registry, read from its record: scikit-learn's
    # form (``neg_`` for losses) unless the record says otherwise.
    records = [get_metric_info(name) for name in get_metric_names()]
    assert set(names) == {info.scorer_name for info in records}
    for info in records:
        sign = "" if info.greater_is_better else "neg_"
        assert info.scorer_name.startswith(f"{sign}expected_")
    # The names scikit-learn users know stay.
    assert set(names) >= {
        "neg_expected_mean_squared_error",
        "neg_expected_mean_absolute_error",
        "neg_expected_root_mean_squared_error",
        "expected_r2",
        "expected_accuracy",
        "expected_balanced_accuracy",
        "expected_precision",
        "expected_recall",
        "expected_f1",
        "expected_matthews_corrcoef",
        "neg_expected_brier_score",
        "neg_expected_log_loss",
        "expected_roc_auc",
        "expected_specificity",
        "expected_negative_predictive_value",
        "neg_expected_false_positive_rate",
        "neg_expected_false_negative_rate",
        "neg_expected_mean_absolute_percentage_error",
        "neg_expected_mean_squared_percentage_error",
        "neg_expected_root_mean_squared_percentage_error",
    }
    first = get_noisy_scorer("expected_r2")
    second = get_noisy_scorer("expected_r2")
    assert first is not second
    assert isinstance(first, NoisyScorer)
    assert get_noisy_scorer(first) is first


@pytest.mark.parametrize("name", sorted(_NAMED_SCORERS))
def test_named_scorer_routed_matches_functional(name):
    metric = _NAMED_SCORERS[name]
    estimator, X, y, noise, _, cv = _setup(metric)
    scorer = get_noisy_scorer(name)
    key = get_metric_info(metric).noise_parameter
    assert scorer.metric == metric
    assert scorer.requires_noise == key
    assert scorer.greater_is_better == (not name.startswith("neg_"))
    assert scorer.response_method == (
        "predict_proba"
        if metric in ("brier_score_loss", "log_loss", "roc_auc")
        else "predict"
    )
    with sklearn.config_context(enable_metadata_routing=True):
        scores = cross_val_score(
            estimator,
            X,
            y,
            cv=cv,
            error_score="raise",
            scoring=scorer,
            params={key: noise},
        )
    reference = _reference_fold_scores(metric, estimator, X, y, noise, cv)
    np.testing.assert_allclose(
        scores, _signed(metric, [s.expected for s in reference]), rtol=1e-12, atol=0
    )
    # The label noise moves the score: a test that ignored sigma / q would fail.
    nominal = _signed(metric, [s.nominal for s in reference])
    if metric != "mean_absolute_error":  # its default, remeasurement, is nominal
        assert np.all(np.abs(scores - nominal) > 1e-6)


@pytest.mark.parametrize("name", sorted(_NAMED_SCORERS))
def test_named_scorer_constant_source_matches_functional(name):
    metric = _NAMED_SCORERS[name]
    estimator, X, y, _, constant, cv = _setup(metric)
    key = get_metric_info(metric).noise_parameter
    scorer = make_noisy_scorer(metric, **{key: constant}, output="all")
    assert key not in scorer.get_metadata_routing().score.requests
    result = cross_validate(
        estimator, X, y, cv=cv, error_score="raise", scoring=scorer
    )  # no routing
    reference = _reference_fold_scores(metric, estimator, X, y, constant, cv)
    np.testing.assert_allclose(
        result["test_expected"],
        _signed(metric, [s.expected for s in reference]),
        rtol=1e-12,
        atol=0,
    )
    np.testing.assert_allclose(
        result["test_variance"], [s.variance for s in reference], rtol=1e-12, atol=0
    )
    assert np.all(result["test_variance"] > 0)
    np.testing.assert_allclose(
        result["test_nominal"],
        _signed(metric, [s.nominal for s in reference]),
        rtol=1e-12,
        atol=0,
    )


@pytest.mark.parametrize("metric", sorted(SKLEARN_SCORERS))
def test_zero_noise_equals_sklearn_scorer(metric):
    estimator, X, y, _, _, cv = _setup(metric)
    key = get_metric_info(metric).noise_parameter
    ours = cross_val_score(
        estimator,
        X,
        y,
        cv=cv,
        error_score="raise",
        scoring=make_noisy_scorer(metric, **{key: 0.0}),
    )
    theirs = cross_val_score(
        estimator,
        X,
        y,
        cv=cv,
        error_score="raise",
        scoring=get_scorer(SKLEARN_SCORERS[metric]),
    )
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    # Routed zeros give the same numbers.
    with sklearn.config_context(enable_metadata_routing=True):
        routed = cross_val_score(
            estimator,
            X,
            y,
            cv=cv,
            error_score="raise",
            scoring=make_noisy_scorer(metric),
            params={key: np.zeros(len(y))},
        )
    np.testing.assert_allclose(routed, theirs, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("metric", ["accuracy", "log_loss", "brier_score_loss"])
def test_multiclass_zero_noise_equals_sklearn_scorer(metric):
    rng = np.random.RandomState(3)
    X = rng.normal(size=(90, 3))
    y = np.argmax(X + rng.normal(scale=0.7, size=X.shape), axis=1)
    cv = StratifiedKFold(n_splits=3, shuffle=True, random_state=1)
    ours = cross_val_score(
        GaussianNB(),
        X,
        y,
        cv=cv,
        error_score="raise",
        scoring=make_noisy_scorer(metric, q=0.0),
    )
    theirs = cross_val_score(
        GaussianNB(),
        X,
        y,
        cv=cv,
        error_score="raise",
        scoring=get_scorer(SKLEARN_SCORERS[metric]),
    )
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


# -------------------------------------------------------- model-selection tools
def test_cross_validate_all_output_routed():
    scorer = make_noisy_scorer("mean_squared_error", output="all")
    with sklearn.config_context(enable_metadata_routing=True):
        result = cross_validate(
            Ridge(), X_REG, Y_REG, cv=CV_REG, scoring=scorer, params={"sigma": SIGMA}
        )
    reference = _reference_fold_scores(
        "mean_squared_error", Ridge(), X_REG, Y_REG, SIGMA, CV_REG
    )
    np.testing.assert_allclose(
        result["test_expected"], [-s.expected for s in reference], rtol=1e-12
    )
    np.testing.assert_allclose(
        result["test_variance"], [s.variance for s in reference], rtol=1e-12
    )
    np.testing.assert_allclose(
        result["test_nominal"], [-s.nominal for s in reference], rtol=1e-12
    )
    # Train scores get the train rows of sigma.
    with sklearn.config_context(enable_metadata_routing=True):
        with_train = cross_validate(
            Ridge(),
            X_REG,
            Y_REG,
            cv=CV_REG,
            scoring=scorer,
            params={"sigma": SIGMA},
            return_train_score=True,
        )
    for fold, (train, _) in enumerate(CV_REG.split(X_REG)):
        model = Ridge().fit(X_REG[train], Y_REG[train])
        score = expected_mean_squared_error(
            Y_REG[train],
            model.predict(X_REG[train]),
            sigma=SIGMA[train],
        )
        assert with_train["train_expected"][fold] == pytest.approx(
            -score.expected, rel=1e-12
        )
        assert with_train["train_variance"][fold] == pytest.approx(
            score.variance, rel=1e-12
        )
    # Closed form of the truth (the default) on the first fold:
    # E = mean(d² − σ²), Var = Σ(4d²σ² − 2σ⁴)/M².
    train, test = next(CV_REG.split(X_REG))
    d = Y_REG[test] - Ridge().fit(X_REG[train], Y_REG[train]).predict(X_REG[test])
    s2 = SIGMA[test] ** 2
    assert result["test_expected"][0] == pytest.approx(-np.mean(d**2 - s2), rel=1e-12)
    assert result["test_variance"][0] == pytest.approx(
        np.sum(4 * d**2 * s2 - 2 * s2**2) / len(test) ** 2, rel=1e-12
    )


@pytest.mark.parametrize("search", ["grid", "random"])
def test_search_refit_on_expected_with_routed_sigma(search):
    scorer = make_noisy_scorer("mean_absolute_error", output="all")
    grid = {"alpha": [0.01, 10.0, 300.0]}
    if search == "grid":
        searcher = GridSearchCV(
            Ridge(), grid, cv=CV_REG, scoring=scorer, refit="expected"
        )
    else:
        searcher = RandomizedSearchCV(
            Ridge(),
            grid,
            n_iter=3,
            cv=CV_REG,
            scoring=scorer,
            refit="expected",
            random_state=0,
        )
    with sklearn.config_context(enable_metadata_routing=True):
        searcher.fit(X_REG, Y_REG, sigma=SIGMA)
    results = searcher.cv_results_
    for index, params in enumerate(results["params"]):
        reference = _reference_fold_scores(
            "mean_absolute_error", Ridge(**params), X_REG, Y_REG, SIGMA, CV_REG
        )
        for fold, score in enumerate(reference):
            assert results[f"split{fold}_test_expected"][index] == pytest.approx(
                -score.expected, rel=1e-12
            )
            assert results[f"split{fold}_test_variance"][index] == pytest.approx(
                score.variance, rel=1e-12
            )
            assert results[f"split{fold}_test_nominal"][index] == pytest.approx(
                -score.nominal, rel=1e-12
            )
    best = int(np.argmax(results["mean_test_expected"]))
    assert searcher.best_index_ == best
    assert searcher.best_params_ == results["params"][best]
    assert searcher.best_score_ == results["mean_test_expected"][best]
    assert searcher.best_estimator_.alpha == results["params"][best]["alpha"]
    # The search's own score routes sigma to the scorer and reports "expected".
    with sklearn.config_context(enable_metadata_routing=True):
        held_out = searcher.score(X_REG, Y_REG, sigma=SIGMA)
    reference = _function("mean_absolute_error")(
        Y_REG, searcher.best_estimator_.predict(X_REG), sigma=SIGMA
    )
    assert held_out == -reference.expected


def test_grid_search_single_score_routed_q():
    scorer = get_noisy_scorer("expected_accuracy")
    searcher = GridSearchCV(
        GaussianNB(), {"var_smoothing": [1e-9, 1.0]}, cv=CV_CLF, scoring=scorer
    )
    with sklearn.config_context(enable_metadata_routing=True):
        searcher.fit(X_CLF, Y_CLF, q=Q)
    for index, params in enumerate(searcher.cv_results_["params"]):
        reference = _reference_fold_scores(
            "accuracy", GaussianNB(**params), X_CLF, Y_CLF, Q, CV_CLF
        )
        np.testing.assert_allclose(
            [searcher.cv_results_[f"split{k}_test_score"][index] for k in range(4)],
            [s.expected for s in reference],
            rtol=1e-12,
        )


def test_pipeline_with_routed_sigma():
    model = make_pipeline(StandardScaler(), Ridge(alpha=3.0))
    scorer = get_noisy_scorer("neg_expected_mean_squared_error")
    with sklearn.config_context(enable_metadata_routing=True):
        scores = cross_val_score(
            model, X_REG, Y_REG, cv=CV_REG, scoring=scorer, params={"sigma": SIGMA}
        )
    reference = _reference_fold_scores(
        "mean_squared_error", model, X_REG, Y_REG, SIGMA, CV_REG
    )
    np.testing.assert_allclose(scores, [-s.expected for s in reference], rtol=1e-12)


def test_column_transformer_drops_sigma_column():
    frame = pd.DataFrame(X_REG, columns=["a", "b", "c"]).assign(sigma=SIGMA)
    model = make_pipeline(
        ColumnTransformer([("drop", "drop", ["sigma"])], remainder="passthrough"),
        Ridge(),
    )
    scorer = make_noisy_scorer("mean_squared_error", sigma="sigma", output="all")
    result = cross_validate(model, frame, Y_REG, cv=CV_REG, scoring=scorer)
    # The model never saw sigma: it equals Ridge on the three features.
    reference = _reference_fold_scores(
        "mean_squared_error", Ridge(), X_REG, Y_REG, SIGMA, CV_REG
    )
    np.testing.assert_allclose(
        result["test_expected"], [-s.expected for s in reference], rtol=1e-12
    )
    np.testing.assert_allclose(
        result["test_variance"], [s.variance for s in reference], rtol=1e-12
    )


def test_callable_source():
    scorer = make_noisy_scorer("mean_absolute_error", sigma=_sigma_from_target)
    scores = cross_val_score(Ridge(), X_REG, Y_REG, cv=CV_REG, scoring=scorer)
    reference = _reference_fold_scores(
        "mean_absolute_error",
        Ridge(),
        X_REG,
        Y_REG,
        _sigma_from_target(None, Y_REG),
        CV_REG,
    )
    np.testing.assert_allclose(scores, [-s.expected for s in reference], rtol=1e-12)


def test_n_jobs_2_matches_sequential():
    # numpy-only data keeps the loky workers' start-up (imports) short.
    scoring = {
        "routed": make_noisy_scorer("mean_squared_error"),
        "constant": make_noisy_scorer("mean_squared_error", sigma=0.3, output="all"),
    }
    with sklearn.config_context(enable_metadata_routing=True):
        parallel = cross_validate(
            Ridge(),
            X_REG,
            Y_REG,
            cv=CV_REG,
            scoring=scoring["routed"],
            params={"sigma": SIGMA},
            n_jobs=2,
        )
        constant = GridSearchCV(
            Ridge(),
            {"alpha": [1.0]},
            cv=CV_REG,
            scoring=scoring["constant"],
            refit="expected",
            n_jobs=2,
        ).fit(X_REG, Y_REG)
    reference = _reference_fold_scores(
        "mean_squared_error", Ridge(), X_REG, Y_REG, SIGMA, CV_REG
    )
    np.testing.assert_allclose(
        parallel["test_score"], [-s.expected for s in reference], rtol=1e-12
    )
    reference = _reference_fold_scores(
        "mean_squared_error", Ridge(), X_REG, Y_REG, 0.3, CV_REG
    )
    np.testing.assert_allclose(
        [constant.cv_results_[f"split{k}_test_variance"][0] for k in range(4)],
        [s.variance for s in reference],
        rtol=1e-12,
    )


def test_sample_weight_routing():
    weights = np.linspace(0.5, 2.0, N_REG)
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = make_noisy_scorer("mean_squared_error").set_score_request(
            sample_weight=True
        )
        assert scorer.get_metadata_routing().score.requests == {
            "sigma": True,
            "sigma_dof": True,
            "sample_weight": True,
        }
        unweighted_fit = Ridge().set_fit_request(sample_weight=False)
        scores = cross_val_score(
            unweighted_fit,
            X_REG,
            Y_REG,
            cv=CV_REG,
            scoring=scorer,
            params={"sigma": SIGMA, "sample_weight": weights},
        )
        # Not requested: scikit-learn refuses to guess.
        with pytest.raises(UnsetMetadataPassedError, match="set_score_request"):
            cross_val_score(
                unweighted_fit,
                X_REG,
                Y_REG,
                cv=CV_REG,
                scoring=make_noisy_scorer("mean_squared_error"),
                params={"sigma": SIGMA, "sample_weight": weights},
            )
    expected = []
    for train, test in CV_REG.split(X_REG):
        model = Ridge().fit(X_REG[train], Y_REG[train])
        expected.append(
            -expected_mean_squared_error(
                Y_REG[test],
                model.predict(X_REG[test]),
                sigma=SIGMA[test],
                sample_weight=weights[test],
            ).expected
        )
    np.testing.assert_allclose(scores, expected, rtol=1e-12)


def test_alias_request():
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = make_noisy_scorer("mean_squared_error").set_score_request(
            sigma="label_error"
        )
        scores = cross_val_score(
            Ridge(),
            X_REG,
            Y_REG,
            cv=CV_REG,
            scoring=scorer,
            params={"label_error": SIGMA},
        )
        with pytest.raises(MissingNoiseError, match="label_error"):
            cross_val_score(
                Ridge(), X_REG, Y_REG, cv=CV_REG, scoring=scorer, error_score="raise"
            )
    reference = _reference_fold_scores(
        "mean_squared_error", Ridge(), X_REG, Y_REG, SIGMA, CV_REG
    )
    np.testing.assert_allclose(scores, [-s.expected for s in reference], rtol=1e-12)


def test_transition_matrix_source():
    T = np.array([[0.9, 0.1], [0.2, 0.8]])
    scorer = make_noisy_scorer("accuracy", transition_matrix=T)
    assert "q" not in scorer.get_metadata_routing().score.requests
    scores = cross_val_score(GaussianNB(), X_CLF, Y_CLF, cv=CV_CLF, scoring=scorer)
    function = _function("accuracy")
    expected = []
    for train, test in CV_CLF.split(X_CLF, Y_CLF):
        model = GaussianNB().fit(X_CLF[train], Y_CLF[train])
        expected.append(
            function(
                Y_CLF[test], model.predict(X_CLF[test]), transition_matrix=T
            ).expected
        )
    np.testing.assert_allclose(scores, expected, rtol=1e-12)


# ------------------------------------------------------------- direct use, API
def test_direct_call_noisy_score_and_score_predictions():
    model = Ridge().fit(X_REG, Y_REG)
    scorer = make_noisy_scorer("mean_squared_error", output="all")
    score = scorer.noisy_score(model, X_REG, Y_REG, sigma=SIGMA)
    reference = expected_mean_squared_error(Y_REG, model.predict(X_REG), sigma=SIGMA)
    assert isinstance(score, NoisyScore)
    assert score.expected == reference.expected > 0
    result = scorer(model, X_REG, Y_REG, sigma=SIGMA)  # works without routing
    assert result == {
        "expected": -reference.expected,
        "variance": reference.variance,
        "nominal": -reference.nominal,
    }
    predicted = scorer.score_predictions(Y_REG, model.predict(X_REG), sigma=SIGMA)
    assert predicted.expected == reference.expected
    assert predicted.variance == reference.variance
    # greater_is_better=True keeps the loss positive.
    positive = make_noisy_scorer("mean_squared_error", greater_is_better=True)
    assert positive(model, X_REG, Y_REG, sigma=SIGMA) == reference.expected


def test_score_predictions_probabilities_and_transition_matrix():
    model = GaussianNB().fit(X_CLF, Y_CLF)
    proba = model.predict_proba(X_CLF)
    log_loss_scorer = get_noisy_scorer("neg_expected_log_loss")
    from_estimator = log_loss_scorer.noisy_score(model, X_CLF, Y_CLF, q=Q)
    from_predictions = log_loss_scorer.score_predictions(
        Y_CLF, proba, q=Q, classes=model.classes_
    )
    assert from_predictions.expected == from_estimator.expected
    assert from_predictions.variance == from_estimator.variance
    accuracy = get_noisy_scorer("expected_accuracy")
    T = np.array([[0.95, 0.05], [0.1, 0.9]])
    got = accuracy.score_predictions(Y_CLF, model.predict(X_CLF), transition_matrix=T)
    want = _function("accuracy")(Y_CLF, model.predict(X_CLF), transition_matrix=T)
    assert got.expected == want.expected
    assert got.variance == want.variance


def test_metric_given_as_function():
    scorer = make_noisy_scorer(
        expected_mean_squared_error, sigma=0.2, estimand="forward"
    )
    assert scorer.metric == "mean_squared_error"
    assert repr(scorer) == (
        "make_noisy_scorer('mean_squared_error', greater_is_better=False, sigma=0.2, "
        "estimand='forward')"
    )


def test_metadata_routing_requests():
    requests = make_noisy_scorer("mean_squared_error").get_metadata_routing()
    assert requests.score.requests == {
        "sigma": True,
        "sigma_dof": True,
        "sample_weight": None,
    }
    requests = make_noisy_scorer("accuracy", q="q").get_metadata_routing()
    assert requests.score.requests == {"sample_weight": None}
    assert make_noisy_scorer("f1").get_metadata_routing().score.requests == {
        "q": True,
        "sample_weight": None,
    }
    requests = make_noisy_scorer("f1", q="q").get_metadata_routing().score.requests
    assert requests == {"sample_weight": None}


# ------------------------------------------------------------- repr and pickle
REPR_CASES = [
    ("mean_squared_error", {"sigma": "sigma_col", "output": "all"}),
    ("mean_squared_error", {"greater_is_better": True, "sigma": 0.25}),
    ("log_loss", {}),
    ("f1", {"pos_label": 0, "method": "delta"}),
    ("accuracy", {"transition_matrix": [[0.9, 0.1], [0.2, 0.8]]}),
    ("accuracy", {"greater_is_better": False, "q": 0.05}),
    ("mean_absolute_error", {"sigma": 0.1, "multioutput": "uniform_average"}),
]


def test_repr_shows_how_to_rebuild():
    scorer = make_noisy_scorer("mean_squared_error", sigma="sigma_col", output="all")
    assert repr(scorer) == (  # the default estimand, resolved
        "make_noisy_scorer('mean_squared_error', greater_is_better=False, "
        "sigma='sigma_col', estimand='truth', output='all')"
    )
    assert repr(make_noisy_scorer("accuracy", q=0.1, estimand="forward")) == (
        "make_noisy_scorer('accuracy', q=0.1, estimand='forward')"
    )


@pytest.mark.parametrize(("metric", "options"), REPR_CASES)
def test_repr_round_trip(metric, options):
    scorer = make_noisy_scorer(metric, **options)
    rebuilt = eval(repr(scorer), vars(sklearn_noisy))
    assert isinstance(rebuilt, NoisyScorer)
    assert repr(rebuilt) == repr(scorer)
    assert rebuilt.greater_is_better == scorer.greater_is_better
    assert rebuilt.get_metadata_routing().score.requests == (
        scorer.get_metadata_routing().score.requests
    )
    estimator, X, y, noise, _, _ = _setup(metric)
    if options.get("sigma") == "sigma_col":
        X = pd.DataFrame(X, columns=["a", "b", "c"]).assign(sigma_col=noise)
        model = make_pipeline(
            ColumnTransformer([("d", "drop", ["sigma_col"])], remainder="passthrough"),
            clone(estimator),
        ).fit(X, y)
    else:
        model = clone(estimator).fit(X, y)
    metadata = {}
    if scorer.requires_noise in scorer.get_metadata_routing().score.requests:
        metadata = {scorer.requires_noise: noise}
    assert rebuilt(model, X, y, **metadata) == scorer(model, X, y, **metadata)


def test_pickle_round_trip():
    model = Ridge().fit(X_REG, Y_REG)
    with sklearn.config_context(enable_metadata_routing=True):
        routed = make_noisy_scorer(
            "mean_squared_error", estimand="forward"
        ).set_score_request(sigma="err")
    scorers = [
        routed,
        make_noisy_scorer(
            "mean_absolute_error",
            sigma=_sigma_from_target,
            output="all",
            estimand="forward",
        ),
        get_noisy_scorer("neg_expected_mean_squared_error"),
    ]
    for scorer in scorers:
        for clone_ in (pickle.loads(pickle.dumps(scorer)), copy.deepcopy(scorer)):
            assert repr(clone_) == repr(scorer)
            assert clone_.get_metadata_routing().score.requests == (
                scorer.get_metadata_routing().score.requests
            )
            metadata = {} if scorer.sigma is not None else {"sigma": SIGMA}
            assert clone_(model, X_REG, Y_REG, **metadata) == scorer(
                model, X_REG, Y_REG, **metadata
            )
    assert repr(scorers[1]) == (
        "make_noisy_scorer('mean_absolute_error', greater_is_better=False, "
        "sigma=_sigma_from_target, estimand='forward', output='all')"
    )


# ------------------------------------------------------------------ error paths
def test_error_routed_sigma_missing_with_routing_enabled():
    scorer = make_noisy_scorer("mean_squared_error")
    with sklearn.config_context(enable_metadata_routing=True):
        with pytest.raises(
            MissingNoiseError, match=r"params=\{'sigma': sigma\}"
        ) as info:
            cross_val_score(
                Ridge(), X_REG, Y_REG, cv=CV_REG, scoring=scorer, error_score="raise"
            )
    message = str(info.value)
    assert "fit(X, y, sigma=sigma)" in message
    assert "a constant" in message and "column of X" in message


def test_error_routed_sigma_missing_with_routing_disabled():
    scorer = make_noisy_scorer("mean_squared_error")
    with pytest.raises(MissingNoiseError, match="enable_metadata_routing=True") as info:
        cross_val_score(
            Ridge(), X_REG, Y_REG, cv=CV_REG, scoring=scorer, error_score="raise"
        )
    assert "Metadata routing is disabled" in str(info.value)
    assert isinstance(info.value, ValueError)  # ``except Exception`` catches it
    # With scikit-learn's default error_score=nan, NaN scores and scikit-learn's
    # "Scoring failed" warning, which carries the message (as documented).
    with pytest.warns(UserWarning, match="Scoring failed") as record:
        scores = cross_val_score(Ridge(), X_REG, Y_REG, cv=CV_REG, scoring=scorer)
    assert np.isnan(scores).all()
    assert any("enable_metadata_routing=True" in str(w.message) for w in record)
    # A direct call names the direct way as well.
    with pytest.raises(MissingNoiseError, match=r"scorer\(estimator, X, y, sigma="):
        scorer(Ridge().fit(X_REG, Y_REG), X_REG, Y_REG)
    with pytest.raises(ValueError, match="pass sigma= to score_predictions"):
        scorer.score_predictions(Y_REG, Y_REG)


def test_error_metadata_passed_while_routing_disabled():
    # scikit-learn hands the metadata to the estimator's fit, which rejects it;
    # the scorer's documentation says what to do.
    scorer = make_noisy_scorer("mean_squared_error")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(ValueError, match="unexpected keyword argument 'sigma'"):
            cross_val_score(
                Ridge(),
                X_REG,
                Y_REG,
                cv=CV_REG,
                scoring=scorer,
                params={"sigma": SIGMA},
            )
    assert "enable_metadata_routing=True" in NoisyScorer.__doc__
    assert "unexpected keyword argument 'sigma'" in NoisyScorer.__doc__
    with pytest.raises(RuntimeError, match="enable_metadata_routing=True"):
        scorer.set_score_request(sigma=True)


def test_error_missing_column():
    frame = pd.DataFrame(X_REG, columns=["a", "b", "c"])
    scorer = make_noisy_scorer("mean_squared_error", sigma="sigma")
    model = Ridge().fit(frame, Y_REG)
    with pytest.raises(ValueError, match=r"columns of X are \['a', 'b', 'c'\]"):
        scorer(model, frame, Y_REG)
    with pytest.raises(TypeError, match="pass X as a pandas DataFrame"):
        scorer(Ridge().fit(X_REG, Y_REG), X_REG, Y_REG)


def test_error_request_set_to_false():
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = make_noisy_scorer("mean_squared_error").set_score_request(sigma=False)
        with pytest.raises(MissingNoiseError, match=r"set_score_request\(sigma=True\)"):
            cross_val_score(
                Ridge(), X_REG, Y_REG, cv=CV_REG, scoring=scorer, error_score="raise"
            )
        with pytest.raises(TypeError, match="not routed to any object"):
            cross_val_score(
                Ridge(),
                X_REG,
                Y_REG,
                cv=CV_REG,
                scoring=scorer,
                params={"sigma": SIGMA},
            )
        with pytest.raises(ValueError, match="its own source"):
            make_noisy_scorer("mean_squared_error", sigma=0.1).set_score_request(
                sigma=True
            )
        with pytest.raises(TypeError, match="takes sigma, not q"):
            make_noisy_scorer("mean_squared_error").set_score_request(q=True)
        with pytest.raises(ValueError, match="valid identifier"):
            make_noisy_scorer("mean_squared_error").set_score_request(sigma="a b")


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: make_noisy_scorer("mse"), ValueError, "metric must be one of"),
        (
            lambda: make_noisy_scorer("neg_expected_mean_squared_error"),
            ValueError,
            "get_noisy_scorer",
        ),
        (lambda: make_noisy_scorer(np.mean), TypeError, "make_scorer"),
        (lambda: make_noisy_scorer("accuracy", sigma=0.1), TypeError, "q, not sigma"),
        (lambda: make_noisy_scorer("r2", q=0.1), TypeError, "sigma, not q"),
        (
            lambda: make_noisy_scorer("r2", transition_matrix=np.eye(2)),
            TypeError,
            "classification metrics only",
        ),
        (lambda: make_noisy_scorer("r2", sigma=SIGMA), TypeError, "params="),
        (lambda: make_noisy_scorer("r2", sigma=-1.0), ValueError, "non-negative"),
        (lambda: make_noisy_scorer("f1", q=1.5), ValueError, r"\[0, 1\]"),
        (lambda: make_noisy_scorer("r2", output="both"), ValueError, "output"),
        (lambda: make_noisy_scorer("r2", estimand="true"), ValueError, "estimand"),
        (
            lambda: make_noisy_scorer("r2", response_method="predict_proba"),
            ValueError,
            "response_method",
        ),
        (
            lambda: make_noisy_scorer("r2", greater_is_better="yes"),
            TypeError,
            "greater_is_better",
        ),
        (
            lambda: make_noisy_scorer("mean_squared_error", sample_weight=[1.0]),
            TypeError,
            "sample_weight",
        ),
        (
            lambda: make_noisy_scorer("mean_squared_error", squared=False),
            TypeError,
            "squared",
        ),
        (
            lambda: make_noisy_scorer("mean_squared_error", multioutput="raw_values"),
            ValueError,
            "single value",
        ),
        (
            lambda: make_noisy_scorer(
                "accuracy", q=0.1, transition_matrix=np.eye(2) * 0.5 + 0.25
            ),
            TypeError,
            "not both",
        ),
        (
            lambda: make_noisy_scorer(
                "accuracy", transition_matrix=[[0.9, 0.2], [0.1, 0.8]]
            ),
            ValueError,
            "row-stochastic",
        ),
        (lambda: get_noisy_scorer("mse"), ValueError, "not a noise-aware scorer"),
        (lambda: get_noisy_scorer("accuracy"), ValueError, "make_noisy_scorer"),
        (lambda: get_noisy_scorer(3), TypeError, "scorer name"),
    ],
)
def test_construction_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_call_errors():
    model = Ridge().fit(X_REG, Y_REG)
    constant = make_noisy_scorer("mean_squared_error", sigma=0.1)
    with pytest.raises(TypeError, match="do not also pass sigma"):
        constant(model, X_REG, Y_REG, sigma=SIGMA)
    with pytest.raises(TypeError, match="unexpected metadata"):
        constant(model, X_REG, Y_REG, groups=np.zeros(N_REG))
    with pytest.raises(TypeError, match="takes sigma, not q"):
        constant.score_predictions(Y_REG, Y_REG, q=0.1)
    with pytest.raises(TypeError, match="does not have"):
        make_noisy_scorer("log_loss", q=0.1)(model, X_REG, Y_REG)


def test_set_score_request_sample_weight_f1():
    # F1 takes sample_weight since issue 15 (it raised "does not accept" before).
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = make_noisy_scorer("f1").set_score_request(sample_weight=True)
        requests = scorer.get_metadata_routing().score.requests
        assert requests["sample_weight"] is True


def test_transition_matrix_is_copied():
    T = np.array([[0.9, 0.1], [0.2, 0.8]])
    scorer = make_noisy_scorer("accuracy", transition_matrix=T)
    T[0] = [0.5, 0.5]
    assert scorer.transition_matrix.tolist() == [[0.9, 0.1], [0.2, 0.8]]


_FITTED_RIDGE = Ridge().fit(X_REG, Y_REG)


@settings(max_examples=25, deadline=None)
@given(
    sigma=st.floats(0.0, 5.0),
    metric=st.sampled_from(["mean_squared_error", "mean_absolute_error", "r2"]),
    greater_is_better=st.sampled_from([None, True, False]),
)
def test_signs_property(sigma, metric, greater_is_better):
    scorer = make_noisy_scorer(
        metric,
        sigma=sigma,
        greater_is_better=greater_is_better,
        output="all",
        estimand="forward",
    )
    score = scorer.noisy_score(_FITTED_RIDGE, X_REG, Y_REG)
    result = scorer(_FITTED_RIDGE, X_REG, Y_REG)
    sign = 1.0 if scorer.greater_is_better else -1.0
    assert scorer.greater_is_better == (
        get_metric_info(metric).greater_is_better
        if greater_is_better is None
        else greater_is_better
    )
    assert result["expected"] == sign * score.expected
    assert result["nominal"] == sign * score.nominal
    assert result["variance"] == score.variance >= 0.0
    reference = _function(metric)(
        Y_REG, _FITTED_RIDGE.predict(X_REG), sigma=sigma, estimand="forward"
    )
    assert score.expected == reference.expected
    assert score.variance == reference.variance


def test_repr_of_array_options_round_trips():
    scorer = make_noisy_scorer(
        "precision",
        q=0.1,
        labels=np.array([0, 1]),
        pos_label=np.int64(0),
        estimand="forward",
    )
    assert repr(scorer) == (
        "make_noisy_scorer('precision', q=0.1, estimand='forward', labels=[0, 1], "
        "pos_label=0)"
    )
    rebuilt = eval(repr(scorer), vars(sklearn_noisy))
    model = GaussianNB().fit(X_CLF, Y_CLF)
    assert rebuilt(model, X_CLF, Y_CLF) == scorer(model, X_CLF, Y_CLF)


# --------------------------------------------------------------- sigma_dof
DOF_REG = np.arange(N_REG, dtype=float) % 5 + 2.0  # 2 to 6 degrees of freedom


def _record_sigma_dof(monkeypatch):
    """Record the ``sigma_dof`` the MSE function receives from every scorer.

    The MSE record's function is replaced by one that takes ``sigma_dof``
    (as every regression metric does once issue 11 lands), records it and
    computes the MSE without it.
    """
    calls = []
    info = get_metric_info("mean_squared_error")

    def function(*args, sigma_dof=None, **kwargs):
        calls.append(sigma_dof)
        return info.function(*args, **kwargs)

    spied = dataclasses.replace(info, function=function)
    monkeypatch.setattr(
        NoisyScorer,
        "_info",
        property(lambda self: spied if self.metric == info.name else info),
    )
    return calls


def test_sigma_dof_is_requested_and_routed_per_fold(monkeypatch):
    calls = _record_sigma_dof(monkeypatch)
    scorer = make_noisy_scorer("mean_squared_error")
    assert scorer.get_metadata_routing().score.requests["sigma_dof"] is True
    params = {"sigma": SIGMA, "sigma_dof": DOF_REG}
    tests = [test for _, test in CV_REG.split(X_REG)]
    with sklearn.config_context(enable_metadata_routing=True):
        cross_val_score(Ridge(), X_REG, Y_REG, cv=CV_REG, scoring=scorer, params=params)
        for k, test in enumerate(tests):
            np.testing.assert_array_equal(calls[k], DOF_REG[test])
        calls.clear()
        GridSearchCV(
            Ridge(), {"alpha": [0.1, 1.0]}, cv=CV_REG, scoring=scorer, refit=False
        ).fit(X_REG, Y_REG, **params)
    assert len(calls) == 8
    for k, test in enumerate(tests):  # every split of one candidate, then the next
        np.testing.assert_array_equal(calls[k], DOF_REG[test])
        np.testing.assert_array_equal(calls[4 + k], DOF_REG[test])
    # sigma_dof is optional: without it the metric gets none (sigma known)
    calls.clear()
    with sklearn.config_context(enable_metadata_routing=True):
        cross_val_score(
            Ridge(), X_REG, Y_REG, cv=CV_REG, scoring=scorer, params={"sigma": SIGMA}
        )
    assert calls == [None] * 4


def test_sigma_dof_sources(monkeypatch):
    calls = _record_sigma_dof(monkeypatch)
    model = Ridge().fit(X_REG, Y_REG)
    constant = make_noisy_scorer(
        "mean_squared_error", sigma=0.3, sigma_dof=4, estimand="forward"
    )
    assert repr(constant) == (
        "make_noisy_scorer('mean_squared_error', greater_is_better=False, "
        "sigma=0.3, estimand='forward', sigma_dof=4.0)"
    )
    assert "sigma_dof" not in constant.get_metadata_routing().score.requests
    constant(model, X_REG, Y_REG)
    assert calls == [4.0]
    frame = pd.DataFrame(X_REG, columns=["a", "b", "c"]).assign(dof=DOF_REG)
    model = make_pipeline(
        ColumnTransformer([("drop", "drop", ["dof"])], remainder="passthrough"),
        Ridge(),
    ).fit(frame, Y_REG)
    make_noisy_scorer(
        "mean_squared_error", sigma=0.3, sigma_dof="dof", estimand="forward"
    )(model, frame, Y_REG)
    np.testing.assert_array_equal(calls[1], DOF_REG)
    make_noisy_scorer(
        "mean_squared_error",
        sigma=0.3,
        sigma_dof=lambda X, y: np.full(len(y), 7.0),
        estimand="forward",
    )(model, frame, Y_REG)
    np.testing.assert_array_equal(calls[2], np.full(N_REG, 7.0))
    direct = make_noisy_scorer(
        "mean_squared_error", estimand="forward"
    ).score_predictions(Y_REG, model.predict(frame), sigma=SIGMA, sigma_dof=DOF_REG)
    assert calls[3] is DOF_REG and direct.n_samples == N_REG


def test_sigma_dof_errors():
    constant = make_noisy_scorer("mean_squared_error", sigma=0.3, sigma_dof=4)
    with pytest.raises(TypeError, match="regression metrics"):
        make_noisy_scorer("accuracy", sigma_dof=3)
    with pytest.raises(TypeError, match="per-sample array"):
        make_noisy_scorer("mean_squared_error", sigma_dof=DOF_REG)
    with pytest.raises(ValueError, match="sigma_dof must be positive"):
        make_noisy_scorer("mean_squared_error", sigma_dof=0)
    with pytest.raises(TypeError, match="unexpected metadata"):
        make_noisy_scorer("accuracy").noisy_score(
            GaussianNB().fit(X_CLF, Y_CLF), X_CLF, Y_CLF, q=0.1, sigma_dof=3
        )
    with pytest.raises(TypeError, match="own source"):
        constant.score_predictions(Y_REG, Y_REG, sigma_dof=DOF_REG)
    with sklearn.config_context(enable_metadata_routing=True):
        aliased = make_noisy_scorer("mean_squared_error").set_score_request(
            sigma_dof="label_dof"
        )
        assert aliased.get_metadata_routing().score.requests["sigma_dof"] == (
            "label_dof"
        )
        with pytest.raises(TypeError, match="regression metrics only"):
            make_noisy_scorer("accuracy").set_score_request(sigma_dof=True)
        with pytest.raises(ValueError, match="own source"):
            constant.set_score_request(sigma_dof=True)


def test_sigma_dof_reaches_the_metric():
    model = Ridge().fit(X_REG, Y_REG)
    scorer = make_noisy_scorer("mean_squared_error", estimand="truth", output="all")
    known = scorer(model, X_REG, Y_REG, sigma=SIGMA)
    estimated = scorer(model, X_REG, Y_REG, sigma=SIGMA, sigma_dof=DOF_REG)
    reference = sklearn_noisy.metrics.expected_mean_squared_error(
        Y_REG, model.predict(X_REG), sigma=SIGMA, sigma_dof=DOF_REG, estimand="truth"
    )
    assert estimated["variance"] == reference.variance
    assert estimated["variance"] > known["variance"]


def test_with_estimand():
    scorer = make_noisy_scorer("mean_squared_error", sigma=0.2, estimand="forward")
    truth = scorer.with_estimand("truth")
    assert truth.estimand == "truth" and scorer.estimand == "forward"
    assert truth.sigma == 0.2 and "truth" in scorer.estimands
    model = Ridge().fit(X_REG, Y_REG)
    expected = sklearn_noisy.metrics.expected_mean_squared_error(
        Y_REG, model.predict(X_REG), sigma=0.2, estimand="truth"
    )
    assert truth.noisy_score(model, X_REG, Y_REG).expected == expected.expected
    missing = [e for e in ("forward", "truth", "remeasurement") if e not in
               get_metric_info("f1").estimands]  # fmt: skip
    for estimand in missing:
        with pytest.raises(ValueError, match=r"does not offer|no unbiased estimator"):
            make_noisy_scorer("f1", estimand="forward").with_estimand(estimand)


@pytest.mark.parametrize(
    ("metric", "estimand", "reason"),
    [
        ("mean_absolute_error", "truth", "kink"),
        ("mean_absolute_percentage_error", "truth", "denominator"),
        ("roc_auc", "remeasurement", "does not offer"),
    ],
)
def test_scorer_refuses_an_estimand_its_metric_lacks_at_construction(
    metric, estimand, reason
):
    # Accepted before, then every fold scored NaN and a search ranked the
    # NaNs: GridSearchCV picked the worst candidate. Now the reason comes first.
    info = get_metric_info(metric)
    noise = {info.noise_parameter: 0.1}
    with pytest.raises(ValueError, match=reason) as direct:
        info.function([1.0, 0.0], [1.0, 0.0], estimand=estimand, **noise)
    with pytest.raises(ValueError, match=reason) as built:
        make_noisy_scorer(metric, estimand=estimand)
    assert str(built.value) == str(direct.value)  # the metric's own message
    with pytest.raises(ValueError, match=reason):
        make_noisy_scorer(metric).with_estimand(estimand)


def test_scorer_routes_sigma_shared_dof():
    """An estimated offset SD's degrees of freedom reach the metric, routed or
    the scorer's own: every fold's truth variance equals the metric's with it
    (and exceeds the one without, which ignores tau²'s own uncertainty)."""
    from sklearn.linear_model import LinearRegression
    from sklearn.model_selection import GroupKFold, cross_validate

    from sklearn_noisy.metrics import expected_mean_squared_error

    rng = np.random.default_rng(31)
    X = rng.normal(size=(60, 2))
    groups = np.repeat(np.arange(6), 10)
    y = X @ [1.0, -1.0] + rng.normal(size=6)[groups] * 0.4 + rng.normal(size=60) * 0.3
    splits = list(GroupKFold(3).split(X, y, groups))
    with_dof, without = [], []
    for train, test in splits:
        pred = LinearRegression().fit(X[train], y[train]).predict(X[test])
        common = dict(sigma=0.3, groups=groups[test], sigma_shared=0.4)
        with_dof.append(
            expected_mean_squared_error(y[test], pred, **common, sigma_shared_dof=3.0)
        )
        without.append(expected_mean_squared_error(y[test], pred, **common))
    assert all(
        a.variance > 1.1 * b.variance for a, b in zip(with_dof, without, strict=True)
    )
    with sklearn.config_context(enable_metadata_routing=True):
        routed = make_noisy_scorer("mean_squared_error", output="all")
        routed.set_score_request(groups=True, sigma_shared=True, sigma_shared_dof=True)
        own = make_noisy_scorer(
            "mean_squared_error", sigma=0.3, sigma_shared=0.4, sigma_shared_dof=3,
            output="all",
        )  # fmt: skip
        assert "sigma_shared_dof=3.0" in repr(own)
        routed_params = {"sigma": np.full(60, 0.3), "sigma_shared": 0.4}
        routed_params["sigma_shared_dof"] = 3.0
        for scorer, params in ((routed, routed_params), (own, {})):
            result = cross_validate(
                LinearRegression(), X, y, cv=splits, scoring=scorer,
                params={"groups": groups, **params},
            )  # fmt: skip
            np.testing.assert_allclose(
                result["test_variance"], [s.variance for s in with_dof], rtol=1e-12
            )
            np.testing.assert_allclose(
                -result["test_expected"], [s.expected for s in with_dof], rtol=1e-12
            )
        with pytest.raises(ValueError, match="own source"):
            own.set_score_request(sigma_shared_dof=True)
    with pytest.raises(ValueError, match="sigma_shared_dof must be positive"):
        make_noisy_scorer("mean_squared_error", sigma_shared=0.4, sigma_shared_dof=0)
    with pytest.raises(TypeError, match="shared batch offsets"):
        make_noisy_scorer("mean_absolute_percentage_error", sigma_shared_dof=3)
