"""The error budget in the cross-validator, its reports and the command line."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import KFold, StratifiedKFold

from sklearn_noisy import NoisyCrossValidator
from sklearn_noisy.cli import main
from sklearn_noisy.metrics import (
    expected_accuracy_score,
    expected_mean_squared_error,
    expected_r2_score,
)


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 3))
    sigma = rng.uniform(0.1, 0.6, size=150)
    y = X @ [1.0, -1.0, 0.5] + 0.4 * X[:, 0] ** 2 + rng.normal(scale=sigma)
    return X, y, sigma


@pytest.fixture(scope="module")
def classification():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(160, 2))
    y = (X[:, 0] + rng.normal(size=160) > 0).astype(int)
    q = rng.uniform(0.0, 0.2, size=160)
    return X, y, q


def test_pooled_estimates_carry_the_metric_functions_sampling(regression):
    X, y, sigma = regression
    cv = NoisyCrossValidator(
        Ridge(), scoring=["mean_squared_error", "r2"], cv=KFold(5)
    ).fit(X, y, sigma=sigma)
    oof = cv.oof_predictions_
    for estimand in ("truth", "forward"):
        pooled = cv.pooled_estimates_["mean_squared_error"][estimand]
        direct = expected_mean_squared_error(
            y, oof, sigma=sigma, estimand=estimand, test_set_sampling=True
        )
        assert pooled.sampling_method == "per_sample_terms"
        assert pooled.sampling_variance == pytest.approx(
            direct.sampling_variance, rel=1e-12
        )
        assert pooled.expected == pytest.approx(direct.expected, rel=1e-12)
        # its Student's t degrees of freedom too (the "both" interval uses them)
        assert math.isfinite(pooled.sampling_dof)
        assert pooled.sampling_dof == pytest.approx(direct.sampling_dof, rel=1e-12)
    r2 = cv.pooled_estimates_["r2"]["truth"]
    direct = expected_r2_score(
        y, oof, sigma=sigma, estimand="truth", test_set_sampling=True
    )
    assert r2.sampling_method == "delta"
    assert r2.sampling_variance == pytest.approx(direct.sampling_variance, rel=1e-9)
    # pooled_ holds the scorer's own estimand, with its sampling too
    assert cv.pooled_["mean_squared_error"].sampling_method == "per_sample_terms"


def test_the_report_shows_both_sources(classification):
    X, y, q = classification
    cv = NoisyCrossValidator(
        LogisticRegression(), scoring=["accuracy"], cv=StratifiedKFold(4)
    ).fit(X, y, q=q)
    truth = cv.pooled_estimates_["accuracy"]["truth"]
    direct = expected_accuracy_score(
        y, cv.oof_predictions_, q=q, estimand="truth", test_set_sampling=True
    )
    assert truth.sampling_variance == pytest.approx(direct.sampling_variance)
    text = str(cv)
    low, high = truth.confidence_interval(0.95, source="both")
    summary = text.split("Summary, ")[1].splitlines()
    assert summary[0].endswith(
        "intervals cover the label noise and the test-set sampling):"
    )
    decimals = len(summary[1].split("[")[1].split(",")[0].split(".")[1])
    both = f"[{low:.{decimals}f}, {high:.{decimals}f}]"
    assert summary[1] == (
        f"  Accuracy against the true values: {truth.expected:.{decimals}f}, "
        f"95 % interval {both}"
    )
    budget = next(line for line in text.splitlines() if "error budget" in line)
    assert f"SD {truth.std:.{decimals}f} from the label noise" in budget
    assert f"{truth.sampling_std:.{decimals}f} from the test-set sampling" in budget
    assert "  sampling:" in text  # the legend says what it is
    assert "error budget of the pooled truth" in cv._repr_html_()
    row = cv.summary().iloc[-1]
    assert row["fold"] == "pooled"
    assert row["sampling_sd"] == pytest.approx(truth.sampling_std)
    assert row["total_sd"] == pytest.approx(truth.total_std)
    assert (row["both_ci_low"], row["both_ci_high"]) == (
        pytest.approx(low),
        pytest.approx(high),
    )
    assert math.isnan(cv.summary().iloc[0]["sampling_sd"])  # folds: label noise


def test_without_test_set_sampling(classification):
    X, y, q = classification
    cv = NoisyCrossValidator(
        LogisticRegression(),
        scoring=["accuracy"],
        cv=StratifiedKFold(4),
        test_set_sampling=False,
    ).fit(X, y, q=q)
    truth = cv.pooled_estimates_["accuracy"]["truth"]
    assert truth.sampling_method is None and math.isnan(truth.sampling_variance)
    text = str(cv)
    assert "error budget" not in text and "  sampling:" not in text
    assert "intervals cover the label noise only" in text
    payload = json.loads(cv.to_json(allow_nan=False))
    entry = payload["pooled"]["accuracy"]["estimands"]["truth"]
    assert entry["sampling_sd"] is None and entry["both_ci_low"] is None
    assert "sampling" not in payload["legend"]


@pytest.mark.parametrize(
    "value, error", [(1, TypeError), ("yes", ValueError), (None, TypeError)]
)
def test_test_set_sampling_must_be_one_of_the_choices(classification, value, error):
    X, y, q = classification
    cv = NoisyCrossValidator(LogisticRegression(), test_set_sampling=value)
    message = "test_set_sampling must be 'auto', True, 'bootstrap' or False"
    with pytest.raises(error, match=message):
        cv.fit(X, y, q=q)


def test_command_line_json_has_the_budget(tmp_path, capsys):
    out = tmp_path / "run.json"
    assert main(["evaluate", "--quiet", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "error budget of the pooled truth" in printed
    pooled = json.loads(out.read_text())["pooled"]["mean_squared_error"]
    assert pooled["sampling_method"] == "per_sample_terms"
    assert pooled["estimands"]["truth"]["sampling_sd"] is not None
    assert (
        main(["evaluate", "--quiet", "--no-test-set-sampling", "--json", str(out)]) == 0
    )
    assert "error budget" not in capsys.readouterr().out
    pooled = json.loads(out.read_text())["pooled"]["mean_squared_error"]
    assert pooled["sampling_method"] is None


def test_paired_difference_sampling_is_the_spread_of_the_differences():
    # At zero noise the difference of accuracies is the mean of o_A − o_B: its
    # sampling variance is s²/n of those, the difference of the two models'
    # per-sample terms.
    from sklearn_noisy.metrics import expected_paired_difference

    rng = np.random.default_rng(5)
    n = 400
    c = rng.integers(0, 2, n)
    a = np.where(rng.random(n) < 0.8, c, 1 - c)
    b = np.where(rng.random(n) < 0.7, c, 1 - c)
    score = expected_paired_difference(
        c, a, b, metric="accuracy", q=0.0, test_set_sampling=True
    )
    h = (a == c).astype(float) - (b == c)
    assert score.sampling_method == "per_sample_terms"
    assert score.sampling_variance == pytest.approx(np.var(h, ddof=1) / n, rel=1e-12)
    assert score.variance == 0.0


@pytest.mark.parametrize("test_set_sampling", [False, True])
def test_warnings_point_at_the_callers_line(test_set_sampling):
    # The decorator that adds test_set_sampling adds a frame; the warnings
    # find the first frame outside the package, so they still point here.
    from sklearn_noisy.metrics import expected_mean_absolute_percentage_error

    y = np.array([0.0, 1.0, 2.0, 3.0])
    with pytest.warns(UserWarning, match="the noise reaches 0") as caught:
        expected_mean_absolute_percentage_error(
            y, y + 0.5, sigma=0.1, test_set_sampling=test_set_sampling
        )
    assert {w.filename for w in caught} == {__file__}


def test_display_draws_the_pooled_interval_with_both_sources(regression):
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from sklearn_noisy.model_selection import NoisyCVDisplay

    X, y, sigma = regression
    cv = NoisyCrossValidator(Ridge(), scoring=["mean_squared_error"]).fit(
        X, y, sigma=sigma
    )
    display = NoisyCVDisplay.from_cv_results(cv, "mean_squared_error")
    pooled = cv.pooled_estimates_["mean_squared_error"]["truth"]
    low, high = pooled.confidence_interval(0.95, source="both")
    band = display.pooled_both_band_  # a Rectangle in data units along y
    assert (band.get_y(), band.get_y() + band.get_height()) == (
        pytest.approx(low),
        pytest.approx(high),
    )
    assert display.pooled_both_band_.get_label() == "pooled, with test-set sampling"
    plt.close(display.figure_)
    cv.set_params(test_set_sampling=False).fit(X, y, sigma=sigma)
    display = NoisyCVDisplay.from_cv_results(cv, "mean_squared_error")
    assert display.pooled_both_band_ is None
    plt.close(display.figure_)


def test_comparison_differences_carry_their_test_set_sampling(regression):
    from sklearn.tree import DecisionTreeRegressor

    from sklearn_noisy.model_selection import compare_estimators

    X, y, sigma = regression
    result = compare_estimators(
        {"ridge": Ridge(), "tree": DecisionTreeRegressor(max_depth=3, random_state=0)},
        X,
        y,
        sigma=sigma,
        scoring=["mean_squared_error"],
        cv=KFold(5),
    )
    diff = result.differences[("ridge", "tree")]["mean_squared_error"]
    assert diff.sampling_method == "per_sample_terms"
    # per-sample terms d_A² − d_B² (σ² cancels): s²/n, less the label part of
    # the truth difference
    a = result.cv_results["ridge"].oof_predictions_
    b = result.cv_results["tree"].oof_predictions_
    h = (y - a) ** 2 - (y - b) ** 2
    assert diff.estimand == "truth"
    total = np.var(h, ddof=1) / y.size
    assert diff.sampling_variance == pytest.approx(total - diff.variance, rel=1e-9)
    reverse = result.differences[("tree", "ridge")]["mean_squared_error"]
    assert reverse.sampling_variance == diff.sampling_variance
    assert reverse.confidence_interval(source="both") == pytest.approx(
        tuple(-x for x in diff.confidence_interval(source="both")[::-1])
    )
    assert "with test-set sampling (SD" in str(result)
    pair = result.to_dict()["differences"][0]
    assert pair["sampling_method"] == "per_sample_terms"
    assert pair["sampling_variance"] == diff.sampling_variance
