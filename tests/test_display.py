"""Tests of NoisyCVDisplay: rendering with the Agg backend, contents, errors."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import KFold

from sklearn_noisy import NoisyCrossValidator, NoisyCVDisplay

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


@pytest.fixture(scope="module")
def fitted_cv():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 2))
    sigma = rng.uniform(0.1, 0.8, size=80)
    y = X @ [1.0, -1.0] + rng.normal(scale=sigma)
    cv = NoisyCrossValidator(
        Ridge(),
        scoring=["mean_squared_error", "mean_absolute_error"],
        cv=KFold(4),
        confidence_level=0.9,
    )
    return cv.fit(X, y, sigma=sigma)


def test_display_renders_png(fitted_cv, tmp_path):
    display = NoisyCVDisplay.from_cv_results(fitted_cv, metric="mean_absolute_error")
    path = tmp_path / "cv.png"
    display.figure_.savefig(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.stat().st_size > 1000
    plt.close(display.figure_)


def test_display_contents(fitted_cv):
    display = NoisyCVDisplay.from_cv_results(fitted_cv, estimand="forward")
    assert display.metric == "mean_squared_error"
    results = fitted_cv.cv_results_
    np.testing.assert_array_equal(
        display.fold_expected, results["mean_squared_error_forward"]
    )
    np.testing.assert_allclose(
        display.fold_std**2, results["mean_squared_error_forward_variance"], rtol=1e-12
    )
    # the error bars span the 90% label-noise interval of each fold
    x, y = display.errorbar_.lines[0].get_data()
    np.testing.assert_array_equal(x, [1, 2, 3, 4])
    np.testing.assert_array_equal(y, results["mean_squared_error_forward"])
    np.testing.assert_array_equal(
        display.nominal_.get_ydata(), results["mean_squared_error_nominal"]
    )
    pooled = fitted_cv.pooled_estimates_["mean_squared_error"]["forward"]
    assert display.pooled_line_.get_ydata()[0] == pooled.expected
    low, high = pooled.confidence_interval(0.9)
    band = display.pooled_band_.get_extents()  # display coordinates
    assert band.height > 0
    y_low, y_high = display.ax_.get_ylim()
    assert y_low <= low and high <= y_high
    assert "lower is better" in display.ax_.get_ylabel()
    assert display.forward_ is None
    plt.close(display.figure_)


def test_display_leads_with_the_truth_estimate(fitted_cv):
    display = NoisyCVDisplay.from_cv_results(fitted_cv)
    results = fitted_cv.cv_results_
    assert display.estimand == "truth"
    np.testing.assert_array_equal(
        display.fold_expected, results["mean_squared_error_truth"]
    )
    truth = fitted_cv.pooled_estimates_["mean_squared_error"]["truth"]
    assert display.pooled_line_.get_ydata()[0] == truth.expected
    np.testing.assert_array_equal(
        display.forward_.get_ydata(), results["mean_squared_error_forward"]
    )
    labels = display.ax_.get_legend_handles_labels()[1]
    assert "truth ± 90 % label-noise interval" in labels
    assert "forward (if y_true were exact)" in labels
    assert "nominal (labels as given)" in labels
    plt.close(display.figure_)
    # MAE offers no truth estimate here: forward, and no separate markers
    display = NoisyCVDisplay.from_cv_results(fitted_cv, "mean_absolute_error")
    assert display.estimand == fitted_cv.estimands_["mean_absolute_error"]["lead"]
    plt.close(display.figure_)
    with pytest.raises(ValueError, match="estimand must be one of"):
        NoisyCVDisplay.from_cv_results(fitted_cv, estimand="remeasurement")


def test_display_from_estimator_on_given_axes():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(90, 2))
    y = (X[:, 0] > 0).astype(int)
    fig, ax = plt.subplots()
    display = NoisyCVDisplay.from_estimator(
        LogisticRegression(), X, y, q=0.1, cv=3, metric="accuracy", ax=ax
    )
    assert display.ax_ is ax and display.figure_ is fig
    assert display.fold_expected.shape == (3,)
    assert "higher is better" in ax.get_ylabel()
    plt.close(fig)


def test_display_errors(fitted_cv, monkeypatch):
    with pytest.raises(ValueError, match="metric must be one of"):
        NoisyCVDisplay.from_cv_results(fitted_cv, metric="r2")
    with pytest.raises(TypeError, match="NoisyCrossValidator"):
        NoisyCVDisplay.from_cv_results(Ridge())
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"sklearn-noisy\[plot\]"):
        NoisyCVDisplay.from_cv_results(fitted_cv)


def test_display_without_pooled_score():
    from sklearn.model_selection import ShuffleSplit

    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 2))
    y = X[:, 0] + rng.normal(scale=0.2, size=40)
    cv = NoisyCrossValidator(
        Ridge(),
        scoring=["mean_squared_error"],
        cv=ShuffleSplit(3, test_size=0.5, random_state=0),
    )
    with pytest.warns(UserWarning, match="overlap"):
        cv.fit(X, y, sigma=0.2)
    display = NoisyCVDisplay.from_cv_results(cv)
    assert display.pooled is None and display.pooled_line_ is None
    assert display.pooled_band_ is None
    plt.close(display.figure_)
