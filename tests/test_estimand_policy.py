"""One estimand and one test-set sampling policy for every entry point (user
guide: estimands).

The same data through each entry point with its defaults: every one leads with
the same estimand and the same number (MSE: truth; MAE: remeasurement;
accuracy: truth), and carries the same test-set sampling variance.
"""

from __future__ import annotations

import inspect
import json

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_predict

from sklearn_noisy import make_noisy_scorer
from sklearn_noisy.cli import main
from sklearn_noisy.metrics import (
    expected_accuracy_score,
    expected_mean_absolute_error,
    expected_mean_squared_error,
    get_noisy_scorer,
)
from sklearn_noisy.model_selection import NoisyCrossValidator, compare_estimators
from sklearn_noisy.utils._validation import (
    TEST_SET_SAMPLING,
    check_test_set_sampling,
    resolve_estimand,
)

LEADS = {"mean_squared_error": "truth", "mean_absolute_error": "remeasurement"}


def _regression(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    sigma = rng.uniform(0.2, 0.6, n)
    y = X @ [1.0, -2.0, 0.5] + rng.normal(scale=0.3, size=n) + rng.normal(0, sigma)
    return X, y, sigma


def _classification(n=160, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    true = (X @ [1.5, -1.0] + rng.normal(scale=0.7, size=n) > 0).astype(int)
    q = 0.1
    y = np.where(rng.random(n) < q, 1 - true, true)
    return X, y, q


def test_resolve_estimand_is_the_one_rule():
    every = ("forward", "truth", "remeasurement")
    assert resolve_estimand("auto", every) == "truth"
    assert resolve_estimand("auto", ("forward", "remeasurement")) == "remeasurement"
    assert resolve_estimand("auto", ("forward",)) == "forward"
    assert resolve_estimand("truth", ("forward", "remeasurement")) == "remeasurement"
    assert resolve_estimand("remeasurement", ("forward", "truth")) == "forward"
    assert resolve_estimand("forward", every) == "forward"


def test_one_test_set_sampling_default():
    assert TEST_SET_SAMPLING == "auto"
    for entry in (
        expected_mean_squared_error,
        expected_accuracy_score,
        make_noisy_scorer,
        NoisyCrossValidator,
        compare_estimators,
    ):
        default = inspect.signature(entry).parameters["test_set_sampling"].default
        assert default == TEST_SET_SAMPLING, entry
    assert make_noisy_scorer("accuracy").test_set_sampling == "auto"
    assert check_test_set_sampling(np.True_) is True
    with pytest.raises(ValueError, match="'auto', True, 'bootstrap' or False"):
        check_test_set_sampling("closed_form")
    with pytest.raises(TypeError, match="test_set_sampling must be"):
        make_noisy_scorer("accuracy", test_set_sampling=None)


def _same_sampling(scores, reference):
    """Every score carries ``reference``'s sampling variance (to 1e-12)."""
    assert reference.sampling_method in ("per_sample_terms", "delta")
    assert reference.sampling_variance > 0
    assert all(s.sampling_method == reference.sampling_method for s in scores)
    np.testing.assert_allclose(
        [s.sampling_variance for s in scores], reference.sampling_variance, rtol=1e-12
    )


def test_regression_entry_points_lead_alike(tmp_path):
    X, y, sigma = _regression()
    folds = KFold(5, shuffle=True, random_state=0)
    oof = cross_val_predict(LinearRegression(), X, y, cv=folds)
    functions = {
        "mean_squared_error": expected_mean_squared_error(y, oof, sigma=sigma),
        "mean_absolute_error": expected_mean_absolute_error(y, oof, sigma=sigma),
    }
    cv = NoisyCrossValidator(LinearRegression(), scoring=list(LEADS), cv=folds)
    cv.fit(X, y, sigma=sigma)
    comparison = compare_estimators(
        {"linear": LinearRegression(), "first": LinearRegression()},
        X,
        y,
        scoring=list(LEADS),
        cv=folds,
        sigma=sigma,
    )
    path = tmp_path / "data.csv"
    table = np.column_stack([X, y, sigma])
    np.savetxt(path, table, delimiter=",", header="a,b,c,y,s", comments="")
    out = tmp_path / "out.json"
    argv = ["evaluate", "--data", str(path), "--target", "y", "--sigma", "s"]
    argv += ["--estimator", "LinearRegression", "--metrics", ",".join(LEADS)]
    assert main([*argv, "--features", "a,b,c", "--quiet", "--json", str(out)]) == 0
    cli = json.loads(out.read_text())["pooled"]
    for metric, lead in LEADS.items():
        score = functions[metric]
        assert score.estimand == lead and f"estimand='{lead}'" in repr(score)
        scorer = make_noisy_scorer(metric)
        assert scorer.estimand == lead and f"estimand='{lead}'" in repr(scorer)
        assert get_noisy_scorer(f"neg_expected_{metric}").estimand == lead
        assert scorer.score_predictions(y, oof, sigma=sigma) == score
        others = [
            cv.pooled_[metric],
            comparison.pooled["linear"][metric],
            comparison.summary(metric).iloc[0],
        ]
        assert cv.estimands_[metric]["lead"] == lead
        assert [cv.pooled_[metric].estimand, cli[metric]["estimand"]] == [lead] * 2
        assert comparison.summary(metric).iloc[0][f"{metric}_estimand"] == lead
        assert f"estimand='{lead}'" in repr(cv.pooled_[metric])
        numbers = [others[0].expected, others[1].expected, others[2][metric]]
        numbers.append(cli[metric]["expected"])
        np.testing.assert_allclose(numbers, score.expected, rtol=1e-12)
        # the same test-set sampling part by default, everywhere
        _same_sampling(
            [
                scorer.score_predictions(y, oof, sigma=sigma),
                cv.pooled_[metric],
                comparison.pooled["linear"][metric],
            ],
            score,
        )
        sampling_sd = cli[metric]["estimands"][lead]["sampling_sd"]
        assert sampling_sd == pytest.approx(score.sampling_std, rel=1e-12)
    mse = functions["mean_squared_error"]
    # truth MSE: the nominal less the mean label variance, exactly
    assert mse.expected == pytest.approx(mse.nominal - np.mean(sigma**2), rel=1e-12)
    mae = functions["mean_absolute_error"]
    assert mae.expected == mae.nominal  # remeasurement: the nominal MAE


def test_classification_entry_points_lead_alike():
    X, y, q = _classification()
    folds = StratifiedKFold(5, shuffle=True, random_state=0)
    oof = cross_val_predict(LogisticRegression(), X, y, cv=folds)
    score = expected_accuracy_score(y, oof, q=q)
    # truth accuracy with a constant q: (nominal - q) / (1 - 2 q), exactly
    assert score.estimand == "truth"
    assert score.expected == pytest.approx((score.nominal - q) / (1 - 2 * q))
    scorer = make_noisy_scorer("accuracy")
    assert scorer.estimand == "truth"
    assert scorer.score_predictions(y, oof, q=q) == score
    cv = NoisyCrossValidator(LogisticRegression(), scoring=["accuracy"], cv=folds)
    cv.fit(X, y, q=q)
    comparison = compare_estimators(
        {"logreg": LogisticRegression(), "again": LogisticRegression()},
        X,
        y,
        scoring=["accuracy"],
        cv=folds,
        q=q,
    )
    pooled = [cv.pooled_["accuracy"], comparison.pooled["logreg"]["accuracy"]]
    for each in pooled:
        assert each.estimand == "truth"
        assert each.expected == pytest.approx(score.expected, rel=1e-12)
    _same_sampling(pooled, score)
    assert comparison.estimands["accuracy"] == "truth"  # the paired difference
    forward = expected_accuracy_score(y, oof, q=q, estimand="forward")
    assert forward.expected == pytest.approx(
        score.nominal + q * (1 - 2 * score.nominal)
    )


class _Column(ClassifierMixin, BaseEstimator):
    """Predicts column ``column`` of X: fixed predictions for every fold."""

    def __init__(self, column=0):
        self.column = column

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return np.asarray(X)[:, self.column].astype(int)


def test_compare_estimators_ranks_by_truth_where_forward_reverses():
    # 40 labels with q = 0.2, 60 exact ones. A agrees with the labels on 36
    # of the first and 36 of the second, B on 20 and 60. Per sample the truth
    # term of an agreement is (1 - q)/(1 - 2q), of a disagreement -q/(1 - 2q);
    # forward: 1 - q and q. Truth: A 0.8267 > B 0.80; forward: B 0.80 > A 0.656.
    y = np.tile([0, 1], 50)
    q = np.r_[np.full(40, 0.2), np.zeros(60)]
    agree_a = np.r_[np.arange(40) < 36, np.arange(60) < 36]
    agree_b = np.r_[np.arange(40) < 20, np.ones(60, bool)]
    X = np.column_stack([np.where(agree_a, y, 1 - y), np.where(agree_b, y, 1 - y)])
    models = {"A": _Column(0), "B": _Column(1)}
    options = dict(scoring=["accuracy"], cv=KFold(4), q=q)
    truth = compare_estimators(models, X, y, **options, estimand="truth")
    forward = compare_estimators(models, X, y, **options, estimand="forward")
    assert truth.ranking() == ["A", "B"] and forward.ranking() == ["B", "A"]
    expected = {
        name: expected_accuracy_score(y, X[:, k], q=q, estimand="truth").expected
        for k, name in enumerate("AB")
    }
    assert expected["A"] == pytest.approx((36 * 4 / 3 - 4 / 3 + 36) / 100)
    assert expected["B"] == pytest.approx(0.80)
    table = truth.summary()
    assert list(table["estimator"]) == ["A", "B"]
    assert list(table["accuracy_estimand"]) == ["truth", "truth"]
    np.testing.assert_allclose(table["accuracy"], [expected["A"], expected["B"]])
    text = str(truth)
    for rank, name in enumerate("AB", start=1):
        assert f"  {rank}. {name:<20} truth" in text
        assert f"{expected[name]:11.5g}" in text
    assert truth.estimands["accuracy"] == "truth"
    assert truth.differences["A", "B"]["accuracy"].expected == pytest.approx(
        expected["A"] - expected["B"]
    )


def test_json_top_level_is_the_lead_with_forward_nested():
    X, y, sigma = _regression(n=80)
    cv = NoisyCrossValidator(LinearRegression(), scoring=list(LEADS), cv=4)
    results = json.loads(cv.fit(X, y, sigma=sigma).to_json())
    for metric, lead in LEADS.items():
        pooled, estimates = results["pooled"][metric], cv.pooled_estimates_[metric]
        assert pooled["estimand"] == lead
        assert pooled["expected"] == pytest.approx(estimates[lead].expected)
        nested = pooled["estimands"][lead]
        assert (pooled["ci_low"], pooled["ci_high"]) == (
            nested["ci_low"],
            nested["ci_high"],
        )
        nested = pooled["estimands"]["forward"]["estimate"]
        assert nested == pytest.approx(estimates["forward"].expected)
        assert nested != pytest.approx(pooled["expected"])
        for k, fold in enumerate(results["folds"]):
            entry = fold["metrics"][metric]
            score = cv.fold_estimates_[metric][lead][k]
            assert entry["estimand"] == lead
            assert entry["expected"] == pytest.approx(score.expected)
            assert entry["ci_low"] == entry["estimands"][lead]["ci_low"]
            assert entry["ci_high"] == entry["estimands"][lead]["ci_high"]
            forward = cv.fold_estimates_[metric]["forward"][k].expected
            assert entry["estimands"]["forward"]["estimate"] == pytest.approx(forward)
