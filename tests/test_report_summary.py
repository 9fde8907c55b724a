"""The cross-validator's report: the summary, limits at a bound, units, folds.

The simulated data sets have a known truth at the metrics' bounds: the model
predicts the true values exactly (truth MSE 0, truth R² 1) and the labels are the
truth plus N(0, σ²) with σ known. Every interval the report, the summary table
and the plot show must hold its point, or show a limit and no point.
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.linear_model import Ridge
from sklearn.model_selection import KFold

from sklearn_noisy import NoisyCrossValidator, NoisyCVDisplay
from sklearn_noisy._noisy_score import METRIC_RANGES
from sklearn_noisy.model_selection._report import (
    _between_folds_line,
    interval,
    shown,
)

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SIGMA = 0.3
NUMBER = r"-?\d+(?:\.\d+)?"


class Oracle(RegressorMixin, BaseEstimator):
    """Predicts the first feature: the true value of the simulated target."""

    def fit(self, X, y):
        return self

    def predict(self, X):
        return np.asarray(X)[:, 0]


def _fit_at_the_bound(seed, **options):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(90, 2))
    y = X[:, 0] + rng.normal(scale=SIGMA, size=90)
    cv = NoisyCrossValidator(
        Oracle(), cv=KFold(3, shuffle=True, random_state=seed), **options
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the truth RMSE's clip at 0
        return cv.fit(X, y, sigma=SIGMA)


def _check_table(cv):
    """summary(): a point lies in its interval, or the row is a limit at a bound."""
    for row in cv.summary().to_dict("records"):
        lower, upper = METRIC_RANGES[cv.scorers_[row["metric"]].metric]
        low, high, point = row["ci_low"], row["ci_high"], row["estimate"]
        assert lower <= low <= high <= upper
        if row["limit"] == "<":
            assert math.isnan(point) and low == lower
        elif row["limit"] == ">":
            assert math.isnan(point) and high == upper
        else:
            assert low <= point <= high and point == row[row["estimand"]]


def _check_text(text, n_metrics, n_splits):
    """The text report: each lead cell, and each summary line, inside its interval."""
    lead_cells = re.compile(rf"^\s*(\d+|pooled)\s+\d+\s+{NUMBER}\s+([<>] )?({NUMBER})")
    rows = 0
    for line in text.splitlines():
        match = lead_cells.match(line)
        if match is None:
            continue
        rows += 1
        limit, value = match.group(2), float(match.group(3))
        low, high = map(float, re.search(rf"\[({NUMBER}), ({NUMBER})\]", line).groups())
        if limit == "< ":
            assert value == high
        elif limit == "> ":
            assert value == low
        else:
            assert low <= value <= high, line
    assert rows == n_metrics * (n_splits + 1)
    summary = text.split("Summary, ")[1].split("\n\n")[0].splitlines()[1:]
    assert len(summary) == n_metrics
    for line in summary:
        found = re.search(rf":\s+({NUMBER}).*interval \[({NUMBER}), ({NUMBER})\]", line)
        if found is None:
            assert re.search(rf":\s+[<>] {NUMBER}.* at 95 %; not resolved", line), line
        else:
            value, low, high = map(float, found.groups())
            assert low <= value <= high, line
    for line in text.splitlines():
        if line.strip().startswith("between folds:"):
            _check_between_folds(line)


def _check_between_folds(line):
    """No part larger than the whole: the label noise's SD at most the folds'."""
    total = float(re.search(rf"varies with SD ({NUMBER}|inf)", line).group(1))
    part = re.search(rf"explains SD ({NUMBER}) of it", line)
    if part is not None:
        assert float(part.group(1)) <= total, line
    else:
        less = re.search(rf"less than the ({NUMBER}|inf) that label noise alone", line)
        assert float(less.group(1)) >= total, line  # rounded: may be equal


def _check_plot(cv):
    """The plot: points inside their bars; limits drawn from the bound, no point."""
    for key, scorer in cv.scorers_.items():
        display = NoisyCVDisplay.from_cv_results(cv, key)
        lower, upper = METRIC_RANGES[scorer.metric]
        lead = cv.estimands_[key]["lead"]
        expected = cv.cv_results_[f"{key}_{lead}"]
        variance = cv.cv_results_[f"{key}_{lead}_variance"]
        _, points = display.errorbar_.lines[0].get_data()
        limits = [] if display.limits_ is None else display.limits_.get_segments()
        bounds = []
        for k, point in enumerate(points):
            score = cv.fold_estimates_[key][lead][k]  # a root metric's own
            low, high = interval(
                scorer.metric, lead, expected[k], variance[k], 0.95, score
            )
            if math.isnan(point):  # a limit: a bar from the bound
                (bar,) = [bar for bar in limits if bar[0, 0] == k + 1]
                assert sorted(bar[:, 1]) == pytest.approx([low, high])
                bounds.append(low == lower or high == upper)
            else:
                assert low <= point <= high and point == expected[k]
        assert all(bounds)
        if display.pooled_line_ is not None:
            (line_y, *_) = display.pooled_line_.get_ydata()
            band = display.pooled_band_.get_path().get_extents()
            assert band.y0 <= line_y <= band.y1
        plt.close(display.figure_)


def _coverage(seeds, plot):
    """The share of label-noise intervals holding the true value at the bound:
    the pooled truth MSE (0) and truth R² (1) of a model that predicts the truth.
    """
    covered = []
    for seed in seeds:
        cv = _fit_at_the_bound(seed)
        _check_table(cv)
        _check_text(str(cv), len(cv.scorers_), cv.n_splits_)
        if plot:
            _check_plot(cv)
        table = cv.summary()
        pooled = table[table["fold"] == "pooled"].set_index("metric")
        covered.append(
            (
                pooled.loc["mean_squared_error", "ci_low"] == 0.0,
                pooled.loc["r2", "ci_high"] == 1.0,
            )
        )
    return np.mean(covered, axis=0)


def test_no_point_outside_its_interval_at_the_bound():
    mse, r2 = _coverage(range(3), plot=True)
    assert mse == r2 == 1.0  # three draws, each inside the 95 % interval


@pytest.mark.slow
def test_no_point_outside_its_interval_at_the_bound_sweep():
    mse, r2 = _coverage(range(200), plot=False)
    # Feldman and Cousins's intervals at the bound: 95 % nominal, SE 1.5 %
    print(f"coverage at the bound: MSE {mse:.3f}, R² {r2:.3f} (200 data sets)")
    assert mse >= 0.92 and r2 >= 0.92


def test_main_job_shows_no_point_outside_its_interval(capsys, monkeypatch):
    from sklearn_noisy.cli import main

    fitted = []
    fit = NoisyCrossValidator.fit

    def spy(self, X, y, **kwargs):
        fitted.append(fit(self, X, y, **kwargs))
        return fitted[-1]

    monkeypatch.setattr(NoisyCrossValidator, "fit", spy)
    for dataset in ("wheat_protein", "oxygen_sensor"):
        assert main(["evaluate", "--quiet", "--dataset", dataset]) == 0
        out = capsys.readouterr().out
        cv = fitted[-1]
        # the summary first, before the legend and the tables
        assert (
            out.index("Summary, ")
            < out.index("Legend")
            < out.index("\nmean_squared_error (")
        )
        _check_text(out, 4, 5)
        _check_table(cv)
        _check_plot(cv)
    # the oxygen sensor's model is better than its labels resolve: limits
    assert "MSE against the true values:  < 0.0123 (% O2)² at 95 %; not resolved" in out
    assert "R² against the true values:   > 0.99965 at 95 %; not resolved" in out


def test_display_rule():
    # MSE in [0, inf): an interval from 0 is an upper limit, whatever the estimate
    assert shown("mean_squared_error", -0.0148, 0.0, 0.0145) == (pytest.approx(
        math.nan, nan_ok=True), "<")  # fmt: skip
    assert shown("mean_squared_error", 0.02, 0.001, 0.04) == (0.02, "")
    point, limit = shown("r2", 1.0004, 0.9996, 1.0)
    assert math.isnan(point) and limit == ">"
    # no bound, no limit
    assert shown("no_such_metric", -5.0, -6.0, -4.0) == (-5.0, "")
    # the truth interval is NoisyScore's unified interval, the forward clipped
    low, high = interval("mean_squared_error", "truth", -0.5, 1.0, 0.95)
    assert (low, round(high, 3)) == (0.0, 1.493)
    assert interval("mean_squared_error", "forward", 1.0, 1.0, 0.95) == (
        0.0,
        pytest.approx(1.0 + 1.959963984540054),
    )


@pytest.mark.parametrize(
    ("total", "noise", "excess"), [(0.0056, 0.0172, 0.0), (0.05, 0.03, 0.04)]
)
def test_between_folds_part_never_exceeds_the_whole(total, noise, excess):
    summary = {
        "between_fold_sd": total,
        "mean_label_noise_variance": noise**2,
        "excess_sd": excess,
    }
    line = _between_folds_line(summary, 4)
    _check_between_folds(line)
    if total < noise:
        assert line == (
            "between folds: the nominal metric varies with SD 0.0056, less than the "
            "0.0172 that label noise alone (the labels measured again, same models) "
            "predicts: nothing is left to attribute to the splits and refits"
        )
    else:
        assert (
            "explains SD 0.0300 of it, the splits and refits the other 0.0400" in line
        )
    summary["between_fold_sd"] = math.nan
    assert _between_folds_line(summary, 4).endswith("(fewer than two folds scored)")


def test_unit_in_the_summary_tables_and_plot():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = X @ [3.0, -2.0] + rng.normal(scale=0.5, size=60)
    cv = NoisyCrossValidator(Ridge(), cv=3, unit="mg/L").fit(X, y, sigma=0.5)
    text = str(cv)
    summary = text.split("Summary, ")[1].split("\n\n")[0].splitlines()
    assert re.search(r"MSE against the true values: .*\(mg/L\)²", summary[1])
    assert re.search(r"RMSE against the true values: .* mg/L", summary[2])
    assert re.search(r"MAE on a re-measurement: .* mg/L", summary[3])
    assert "mg/L" not in summary[4]  # R² has no unit
    assert "\nmean_squared_error (lower is better), in (mg/L)²\n" in text
    assert "\nroot_mean_squared_error (lower is better), in mg/L\n" in text
    assert "\nr2 (higher is better)\n" in text
    assert cv.to_dict()["metrics"]["mean_absolute_error"]["report_this"] == (
        " ".join(summary[3].split())
    )
    labels = {}
    for key in ("mean_squared_error", "r2"):
        display = NoisyCVDisplay.from_cv_results(cv, key)
        labels[key] = display.ax_.get_ylabel()
        plt.close(display.figure_)
    assert labels == {
        "mean_squared_error": "MSE in (mg/L)²\n(lower is better)",
        "r2": "R²\n(higher is better)",
    }
    assert NoisyCrossValidator(Ridge(), unit="K").get_params()["unit"] == "K"
    with pytest.raises(TypeError, match="unit must be a string or None"):
        NoisyCrossValidator(Ridge(), unit=3).fit(X, y, sigma=0.5)


def test_cli_unit_option(capsys, tmp_path):
    from sklearn_noisy.cli import main

    rng = np.random.default_rng(1)
    path = tmp_path / "data.csv"
    X = rng.normal(size=(40, 2))
    y = X @ [1.0, 2.0] + rng.normal(scale=0.2, size=40)
    rows = ["x1,x2,y"] + [
        f"{a:.6f},{b:.6f},{c:.6f}" for (a, b), c in zip(X, y, strict=True)
    ]
    path.write_text("\n".join(rows) + "\n")
    code = main(
        ["evaluate", "--data", str(path), "--target", "y", "--sigma", "0.2",
         "--estimator", "Ridge", "--metrics", "root_mean_squared_error",
         "--unit", "K", "--quiet"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert re.search(r"  RMSE against the true values: .* K", out)
    assert "root_mean_squared_error (lower is better), in K" in out


def test_tables_take_the_interval_of_the_score():
    """A truth MSE row's interval is its score's (Cornish–Fisher), not a
    symmetric one rebuilt from the estimate and variance."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 2))
    y = X[:, 0] + rng.normal(scale=1.0, size=200)
    cv = NoisyCrossValidator(Ridge(), scoring=["mean_squared_error"], cv=4)
    cv.fit(X, y, sigma=0.5)
    rows = cv.summary().to_dict("records")
    scores = [
        *cv.fold_estimates_["mean_squared_error"]["truth"],
        cv.pooled_["mean_squared_error"],
    ]
    assert [row["fold"] for row in rows] == [1, 2, 3, 4, "pooled"]
    for row, score in zip(rows, scores, strict=True):
        assert row["estimand"] == score.estimand == "truth"
        low, high = score.confidence_interval(cv.confidence_level)
        assert (row["ci_low"], row["ci_high"]) == (low, high)
        assert (low, high) != tuple(score.confidence_interval(method="normal"))
        assert f"[{low:.3f}, {high:.3f}]" in str(cv)
