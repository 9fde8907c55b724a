"""NoisyCVDisplay as a reader sees it: names, title, legend, nothing clipped."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import KFold

from sklearn_noisy import NoisyCrossValidator, NoisyCVDisplay
from sklearn_noisy.model_selection._report import metric_label

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.text import Text  # noqa: E402


@pytest.fixture(scope="module")
def fitted_cv():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(100, 3))
    sigma = rng.uniform(0.1, 0.6, size=100)
    y = X @ [1.0, -0.5, 0.2] + rng.normal(scale=sigma)
    cv = NoisyCrossValidator(
        Ridge(),
        scoring=["root_mean_squared_error", "r2", "mean_absolute_error"],
        cv=KFold(5),
    )
    return cv.fit(X, y, sigma=sigma)


def _texts_outside(figure):
    """The drawn texts of ``figure`` that are not wholly inside it.

    The tight bounding box covers every artist that is drawn (tick labels
    beyond the view limits are not); it must lie inside the figure.
    """
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    tight = figure.get_tightbbox(renderer).transformed(figure.dpi_scale_trans)
    box = figure.bbox
    if (
        tight.x0 >= box.x0 - 0.5
        and tight.y0 >= box.y0 - 0.5
        and tight.x1 <= box.x1 + 0.5
        and tight.y1 <= box.y1 + 0.5
    ):
        return []
    return [
        text.get_text()
        for text in figure.findobj(Text)
        if text.get_visible()
        and text.get_text().strip()
        and not (
            box.contains(*text.get_window_extent(renderer).min)
            and box.contains(*text.get_window_extent(renderer).max)
        )
    ] or [f"tight bbox {tight} outside {box}"]


def _overlaps(a, b):
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


@pytest.mark.parametrize("metric", ["root_mean_squared_error", "r2"])
def test_new_figure_has_everything_inside_and_legend_outside_axes(fitted_cv, metric):
    display = NoisyCVDisplay.from_cv_results(
        fitted_cv, metric, data_name="simulated sensor"
    )
    figure = display.figure_
    assert _texts_outside(figure) == []
    (legend,) = figure.legends
    renderer = figure.canvas.get_renderer()
    assert not _overlaps(
        legend.get_window_extent(renderer), display.ax_.get_window_extent(renderer)
    )
    assert display.ax_.get_legend() is None  # one legend, not one per axes
    plt.close(figure)


def test_names_title_and_markers(fitted_cv):
    display = NoisyCVDisplay.from_cv_results(
        fitted_cv, "root_mean_squared_error", data_name="simulated sensor"
    )
    assert display.ax_.get_title() == (
        "RMSE of Ridge on simulated sensor, per fold and pooled"
    )
    assert display.ax_.get_ylabel() == "RMSE\n(lower is better)"
    (legend,) = display.figure_.legends
    labels = [text.get_text() for text in legend.get_texts()]
    # the truth RMSE is 0 here: its pooled interval starts at 0, a limit with
    # no line, as some folds
    assert labels == [
        "truth ± 95 % label-noise interval",
        "95 % limit (from the metric's bound)",
        "forward (if y_true were exact)",
        "nominal (labels as given)",
        "pooled 95 % interval",
        "pooled, with test-set sampling",
    ]
    plt.close(display.figure_)
    display = NoisyCVDisplay.from_cv_results(
        fitted_cv, "r2", name="ridge, alpha=1", estimand="forward"
    )
    assert display.ax_.get_title() == "R² of ridge, alpha=1, per fold and pooled"
    assert display.ax_.get_ylabel() == "R²\n(higher is better)"
    labels = display.legend_entries()[1]
    assert labels[0] == "forward ± 95 % label-noise interval"
    assert "forward (if y_true were exact)" not in labels
    plt.close(display.figure_)


def test_given_axes_get_a_legend_outside_that_fits(fitted_cv):
    figure, ax = plt.subplots()
    display = NoisyCVDisplay.from_cv_results(fitted_cv, "r2", ax=ax)
    assert display.ax_ is ax and display.figure_ is figure
    assert _texts_outside(figure) == []
    renderer = figure.canvas.get_renderer()
    legend = ax.get_legend()
    assert not _overlaps(
        legend.get_window_extent(renderer), ax.get_window_extent(renderer)
    )
    plt.close(figure)


def test_shared_figure_legend_for_several_panels(fitted_cv):
    keys = list(fitted_cv.scorers_)
    figure, axes = plt.subplots(len(keys), 1, figsize=(6.4, 8), layout="constrained")
    displays = [
        NoisyCVDisplay.from_cv_results(fitted_cv, key, ax=ax, legend=False)
        for key, ax in zip(keys, axes, strict=True)
    ]
    assert all(ax.get_legend() is None for ax in axes)
    figure.legend(*displays[0].legend_entries(), loc="outside lower center", ncols=2)
    assert _texts_outside(figure) == []
    plt.close(figure)


def test_classification_display_and_unknown_metric_names():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(90, 2))
    y = (X[:, 0] + 0.3 * rng.normal(size=90) > 0).astype(int)
    display = NoisyCVDisplay.from_estimator(
        LogisticRegression(), X, y, q=0.1, cv=3, metric="balanced_accuracy"
    )
    assert display.ax_.get_ylabel() == "Balanced accuracy\n(higher is better)"
    assert display.ax_.get_title().startswith("Balanced accuracy of LogisticRegression")
    assert _texts_outside(display.figure_) == []
    plt.close(display.figure_)
    assert metric_label("my_custom_score") == "my custom score"


def test_the_clipping_check_sees_a_clipped_label():
    figure, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="a line")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))  # no layout engine
    assert _texts_outside(figure) != []
    plt.close(figure)


def test_command_line_plot_has_one_legend_and_fits(fitted_cv, tmp_path, monkeypatch):
    from sklearn_noisy.cli._evaluate import _save_plot

    kept, close = [], plt.close
    monkeypatch.setattr(plt, "close", kept.append)
    title = "Ridge on a simulated sensor with a long name that has to wrap: " * 2
    _save_plot(fitted_cv, str(tmp_path / "cv.png"), title)
    (figure,) = kept
    assert len(figure.legends) == 1
    assert all(ax.get_legend() is None for ax in figure.axes)
    assert [ax.get_title() for ax in figure.axes] == ["RMSE", "R²", "MAE"]
    assert _texts_outside(figure) == []
    labels = [text.get_text() for text in figure.legends[0].get_texts()]
    assert len(labels) == len(set(labels))
    close(figure)


def test_noise_resilience_display_fits_its_figure():
    from sklearn.linear_model import LinearRegression

    from sklearn_noisy.datasets import load_oxygen_sensor
    from sklearn_noisy.model_selection import NoiseResilienceDisplay

    sensor = load_oxygen_sensor()
    display = NoiseResilienceDisplay.from_estimator(
        LinearRegression(), sensor.data, sensor.target_true, [0.2, 1.0, 3.0],
        n_repeats=2, random_state=0, feature=1, cv=3, name="linear",
    )  # fmt: skip
    assert _texts_outside(display.figure_) == []
    plt.close(display.figure_)
