"""NoisyRocCurveDisplay: scikit-learn's curve at zero noise, Monte Carlo, layout."""

from __future__ import annotations

import pickle
import sys
from math import gcd

import numpy as np
import pytest
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import RocCurveDisplay, roc_curve
from sklearn.svm import LinearSVC

from sklearn_noisy.metrics import NoisyRocCurveDisplay, expected_roc_auc_score

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from test_confusion_display import _inside  # noqa: E402

Y = np.array([0, 0, 1, 1, 0, 1, 0, 1, 1, 0, 1, 0])
SCORE = np.array([0.1, 0.4, 0.35, 0.8, 0.2, 0.7, 0.3, 0.6, 0.9, 0.5, 0.4, 0.6])


def _curve_at(fpr, tpr, f):
    """TPR of the broken line through ``(fpr, tpr)`` at ``f``; highest on a step."""
    on_step = fpr == f
    if on_step.any():
        return tpr[on_step].max()
    return np.interp(f, fpr, tpr)


def _setting(seed, n_samples):
    rng = np.random.default_rng(seed)
    y = (rng.random(n_samples) < 0.45).astype(int)
    score = np.round(y + rng.normal(scale=0.8, size=n_samples), 1)  # with ties
    q = rng.uniform(0.0, 0.3, size=n_samples)
    return y, score, q


def test_zero_noise_is_scikit_learns_display():
    ours = NoisyRocCurveDisplay.from_predictions(Y, SCORE, q=0.0, n_grid=41)
    theirs = RocCurveDisplay.from_predictions(Y, SCORE)
    np.testing.assert_array_equal(ours.fpr, theirs.fpr)
    np.testing.assert_array_equal(ours.tpr, theirs.tpr)
    assert ours.roc_auc == theirs.roc_auc
    assert ours.score.expected == ours.score.nominal == theirs.roc_auc
    assert ours.score.variance == 0.0
    assert ours.method == "exact" and ours.pos_label == theirs.pos_label == 1
    np.testing.assert_array_equal(ours.tpr_low, ours.tpr_high)
    np.testing.assert_array_equal(ours.tpr_low, ours.tpr_expected)
    np.testing.assert_array_equal(ours.tpr_std, 0.0)
    np.testing.assert_array_equal(ours.tpr_standard_error, 0.0)
    fpr, tpr, _ = roc_curve(Y, SCORE, drop_intermediate=False)
    grid = np.arange(41) / 40
    np.testing.assert_array_equal(ours.fpr_grid, grid)
    expected = [_curve_at(fpr, tpr, f) for f in grid]
    np.testing.assert_allclose(ours.tpr_expected, expected, rtol=0, atol=1e-15)
    # 1/6 of the negatives is not on the grid, 0.5 is: the step is taken at its top
    assert ours.tpr_expected[20] == max(tpr[fpr == 0.5])
    plt.close(theirs.figure_)
    plt.close(ours.figure_)


def test_zero_noise_with_string_classes_and_a_transition_matrix():
    y = np.where(Y == 1, "sick", "well")
    ours = NoisyRocCurveDisplay.from_predictions(
        y, SCORE, transition_matrix=np.eye(2), pos_label="well"
    )
    theirs = RocCurveDisplay.from_predictions(y, SCORE, pos_label="well")
    np.testing.assert_array_equal(ours.fpr, theirs.fpr)
    np.testing.assert_array_equal(ours.tpr, theirs.tpr)
    assert ours.roc_auc == theirs.roc_auc == ours.score.expected
    assert ours.method == "exact" and ours.pos_label == "well"
    assert ours.ax_.get_xlabel() == "False Positive Rate (Positive label: well)"
    plt.close("all")


def _redrawn_tpr(y, score, p, grid, n_draws, seed):
    """TPR at ``grid`` of independent redraws, with both classes present.

    The draws are those of a loop of ``rng.random(y.size)`` (drawn by blocks:
    the same stream); the curve of every draw is counted at once: the scores
    are the same in every draw, so one ordering and one cumulative sum give
    each draw's (FPR, TPR) at every distinct threshold, scikit-learn's
    ``roc_curve(labels, score, drop_intermediate=False)``. The first draws
    are checked against ``roc_curve`` itself.
    """
    rng = np.random.default_rng(seed)
    blocks, n_kept = [], 0
    while n_kept < n_draws:
        labels = (rng.random((n_draws, y.size)) < p).astype(int)
        labels = labels[(labels.sum(axis=1) > 0) & (labels.sum(axis=1) < y.size)]
        blocks.append(labels)
        n_kept += len(labels)
    labels = np.concatenate(blocks)[:n_draws]
    order = np.argsort(score, kind="mergesort")[::-1]
    ordered = score[order]
    ends = np.r_[np.flatnonzero(np.diff(ordered)), ordered.size - 1]
    tps = np.cumsum(labels[:, order], axis=1)[:, ends]
    fps = (ends + 1)[None, :] - tps
    zero = np.zeros((len(labels), 1))
    tpr = np.hstack([zero, tps / tps[:, -1:]])
    fpr = np.hstack([zero, fps / fps[:, -1:]])
    values = np.array([np.interp(grid, f, t) for f, t in zip(fpr, tpr, strict=True)])
    for row, value in zip(labels[:20], values[:20], strict=True):
        sk_fpr, sk_tpr, _ = roc_curve(row, score)
        np.testing.assert_allclose(value, np.interp(grid, sk_fpr, sk_tpr), rtol=1e-12)
    return values


@pytest.mark.parametrize("noise", ["q", "transition_matrix"])
def test_mean_curve_and_band_against_independent_redraws(noise):
    y, score, q = _setting(0, 30)
    if noise == "q":
        kwargs = {"q": q}
        p = np.where(y == 1, 1.0 - q, q)
    else:
        matrix = np.array([[0.85, 0.15], [0.25, 0.75]])
        kwargs = {"transition_matrix": matrix}
        p = matrix[y, 1]
    display = NoisyRocCurveDisplay.from_predictions(
        y, score, n_draws=4000, random_state=0, **kwargs
    )
    assert display.method == "monte_carlo" and display.n_draws == 4000
    # Grid points j/200 in lowest terms have a denominator above 30: never on a
    # step of a redrawn curve, where np.interp would be ambiguous.
    index = np.array([7, 23, 61, 99, 151, 187])
    assert all(200 // gcd(int(j), 200) > y.size for j in index)
    grid = display.fpr_grid[index]
    draws = _redrawn_tpr(y, score, p, grid, 20000, seed=12345)
    mean, se = draws.mean(axis=0), draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
    z = (display.tpr_expected[index] - mean) / np.hypot(
        display.tpr_standard_error[index], se
    )
    assert np.all(np.abs(z) < 5), z
    np.testing.assert_allclose(
        display.tpr_std[index], draws.std(axis=0, ddof=1), rtol=0.1
    )
    # The band holds at least 95 % of the redrawn curves at each grid point.
    inside = (draws >= display.tpr_low[index]) & (draws <= display.tpr_high[index])
    content = inside.mean(axis=0)
    assert np.all(content >= 0.95 - 5 * np.sqrt(0.95 * 0.05 / 4000)), content
    # The area under the mean curve is the expected AUC, up to the grid.
    area = np.trapezoid(display.tpr_expected, display.fpr_grid)
    exact = expected_roc_auc_score(
        y, score, **{"estimand": "forward", **kwargs}, test_set_sampling=False
    )
    assert display.score == exact
    assert abs(area - exact.expected) < 5 * exact.std / np.sqrt(4000) + 1 / 200
    plt.close(display.figure_)


def test_per_sample_q_equal_values_match_the_scalar_and_zeros_are_exact():
    y, score, _ = _setting(1, 25)
    scalar = NoisyRocCurveDisplay.from_predictions(y, score, q=0.1, n_draws=50)
    array = NoisyRocCurveDisplay.from_predictions(
        y, score, q=np.full(25, 0.1), n_draws=50
    )
    for key in ("tpr_expected", "tpr_std", "tpr_low", "tpr_high"):
        np.testing.assert_array_equal(getattr(scalar, key), getattr(array, key))
    assert scalar.score == array.score
    zeros = NoisyRocCurveDisplay.from_predictions(y, score, q=np.zeros(25))
    exact = NoisyRocCurveDisplay.from_predictions(y, score, q=0.0)
    assert zeros.method == exact.method == "exact"
    np.testing.assert_array_equal(zeros.tpr_expected, exact.tpr_expected)
    # One sample that can flip makes it random.
    q = np.zeros(25)
    q[3] = 0.2
    one = NoisyRocCurveDisplay.from_predictions(y, score, q=q, n_draws=200)
    assert one.method == "monte_carlo"
    assert np.any(one.tpr_low < one.tpr_high)
    again = NoisyRocCurveDisplay.from_predictions(y, score, q=q, n_draws=200)
    np.testing.assert_array_equal(one.tpr_expected, again.tpr_expected)
    other = NoisyRocCurveDisplay.from_predictions(
        y, score, q=q, n_draws=200, random_state=1
    )
    assert not np.array_equal(one.tpr_expected, other.tpr_expected)
    plt.close("all")


def test_legend_labels_and_a_single_legend_inside_the_figure():
    display = NoisyRocCurveDisplay.from_predictions(
        Y, SCORE, q=0.1, name="model A", plot_chance_level=True
    )
    (legend,) = display.figure_.legends
    assert display.ax_.get_legend() is None
    expected = display.score
    assert [text.get_text() for text in legend.get_texts()] == [
        f"model A (labels as given, AUC = {display.roc_auc:.2f})",
        f"under flips: AUC = {expected.expected:.2f} ± "
        f"{expected.std:.2f} (label noise)",
        "95 % pointwise band under flips",
        "Chance level (AUC = 0.5)",
    ]
    assert _inside(display.figure_)
    plt.close(display.figure_)
    display = NoisyRocCurveDisplay.from_predictions(
        Y, SCORE, q=0.01, confidence_level=0.9, legend=False
    )
    assert display.figure_.legends == [] and display.ax_.get_legend() is None
    assert display.band_.get_label() == "90 % pointwise band under flips"
    # An SD of 0.0x shows three decimals.
    assert display.expected_line_.get_label().endswith(
        f"{display.score.expected:.3f} ± {display.score.std:.3f} (label noise)"
    )
    plt.close(display.figure_)


def test_given_axes_are_reused_with_one_legend_inside_them():
    figure, ax = plt.subplots()
    first = NoisyRocCurveDisplay.from_predictions(Y, SCORE, q=0.1, ax=ax, name="A")
    assert first.ax_ is ax and first.figure_ is figure
    assert figure.legends == [] and figure.get_layout_engine() is None
    assert _inside(figure)
    renderer = figure.canvas.get_renderer()
    legend = ax.get_legend().get_window_extent(renderer)
    axes = ax.get_window_extent(renderer)
    assert axes.contains(legend.x0, legend.y0) and axes.contains(legend.x1, legend.y1)
    second = NoisyRocCurveDisplay.from_predictions(
        Y, SCORE[::-1], q=0.1, ax=ax, name="B", curve_kwargs={"color": "red"}
    )
    assert second.ax_ is ax
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert len(labels) == 6
    assert labels[0].startswith("A (") and labels[3].startswith("B (")
    # Each display in its own colour: the next of the cycle, or the one given.
    to_rgb = matplotlib.colors.to_rgb
    assert to_rgb(first.expected_line_.get_color()) == to_rgb("C0")
    assert to_rgb(first.line_.get_color()) == to_rgb("C0")
    assert second.line_.get_color() == second.expected_line_.get_color() == "red"
    plt.close(figure)


def test_from_estimator_equals_from_predictions():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] + rng.normal(scale=0.8, size=60) > 0).astype(int)
    q = rng.uniform(0, 0.2, size=60)
    model = LogisticRegression().fit(X, y)
    cases = [
        (model, {}, model.predict_proba(X)[:, 1], 1),
        (model, {"pos_label": 0}, model.predict_proba(X)[:, 0], 0),
        (LinearSVC().fit(X, y), {}, None, 1),
    ]
    for estimator, options, score, pos_label in cases:
        if score is None:
            score = estimator.decision_function(X)
        ours = NoisyRocCurveDisplay.from_estimator(
            estimator, X, y, q=q, n_draws=100, **options
        )
        direct = NoisyRocCurveDisplay.from_predictions(
            y, score, q=q, n_draws=100, pos_label=pos_label
        )
        assert ours.name == type(estimator).__name__ and direct.name == "Classifier"
        assert ours.pos_label == pos_label
        assert ours.score == direct.score
        for key in ("fpr", "tpr", "tpr_expected", "tpr_low", "tpr_high"):
            np.testing.assert_array_equal(getattr(ours, key), getattr(direct, key))
        theirs = RocCurveDisplay.from_estimator(estimator, X, y, **options)
        np.testing.assert_array_equal(ours.fpr, theirs.fpr)
        np.testing.assert_array_equal(ours.tpr, theirs.tpr)
        plt.close("all")


@pytest.mark.parametrize(
    "y, score, kwargs, match",
    [
        ([0, 1, 2, 1], [0.1, 0.2, 0.3, 0.4], {}, "y_true"),
        ([0, 0.5, 1], [0.1, 0.2, 0.3], {}, "y_true"),
        ([0, 1, 1], [0.1, 0.2], {}, "same number of samples"),
        (["a", "b", "b"], [0.1, 0.2, 0.3], {}, "pos_label"),
    ],
)
def test_bad_labels_raise_as_scikit_learn(y, score, kwargs, match):
    with pytest.raises(ValueError):
        RocCurveDisplay.from_predictions(y, score, **kwargs)
    with pytest.raises(ValueError, match=match):
        NoisyRocCurveDisplay.from_predictions(y, score, q=0.1, **kwargs)
    plt.close("all")


@pytest.mark.parametrize(
    "y, kwargs, match",
    [([0, 1, 1], {"pos_label": 2}, "pos_label=2"), ([1, 1, 1], {}, "both classes")],
)
def test_undefined_nominal_curve_raises(y, kwargs, match):
    # scikit-learn warns and draws NaN; the flips need both classes named.
    with pytest.warns(UndefinedMetricWarning):
        display = RocCurveDisplay.from_predictions(y, [0.1, 0.2, 0.3], **kwargs)
    assert np.isnan(display.roc_auc)
    with pytest.raises(ValueError, match=match):
        NoisyRocCurveDisplay.from_predictions(y, [0.1, 0.2, 0.3], q=0.1, **kwargs)
    plt.close("all")


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({}, TypeError, "q"),
        ({"q": 1.5}, ValueError, "q must be"),
        ({"q": [0.1, 0.2]}, ValueError, "q"),
        ({"q": 0.1, "transition_matrix": np.eye(2)}, TypeError, "not both"),
        ({"transition_matrix": [[0.9, 0.2], [0.1, 0.9]]}, ValueError, "row-stoch"),
        ({"q": 0.1, "n_draws": 1}, ValueError, "n_draws"),
        ({"q": 0.1, "n_draws": 2.5}, TypeError, "n_draws"),
        ({"q": 0.1, "n_grid": 1}, ValueError, "n_grid"),
        ({"q": 0.1, "confidence_level": 1.0}, ValueError, "confidence_level"),
        ({"q": 0.1, "confidence_level": "0.9"}, TypeError, "confidence_level"),
        ({"q": 0.1, "random_state": "x"}, TypeError, "random_state"),
        ({"q": 0.1, "curve_kwargs": [1]}, TypeError, "curve_kwargs"),
    ],
)
def test_bad_options_name_the_parameter(kwargs, error, match):
    with pytest.raises(error, match=match):
        NoisyRocCurveDisplay.from_predictions(Y, SCORE, **kwargs)
    plt.close("all")


def test_labels_that_almost_never_hold_both_classes_raise():
    with pytest.warns(UserWarning, match="one class is missing"):
        with pytest.raises(ValueError, match="n_draws=5"):
            NoisyRocCurveDisplay.from_predictions(
                [0, 1], [0.1, 0.9], q=[0.0, 1.0 - 1e-9], n_draws=5
            )
    plt.close("all")


def test_bad_scores_and_estimators_raise_as_scikit_learn():
    bad_scores = [np.r_[SCORE[:-1], np.nan], np.c_[SCORE, SCORE]]
    for score in bad_scores:
        with pytest.raises(ValueError):
            RocCurveDisplay.from_predictions(Y, score)
        with pytest.raises(ValueError, match="y_score"):
            NoisyRocCurveDisplay.from_predictions(Y, score, q=0.1)
    X = SCORE[:, None]
    for estimator in (LinearRegression().fit(X, Y), LogisticRegression()):
        with pytest.raises(Exception) as theirs:
            RocCurveDisplay.from_estimator(estimator, X, Y)
        with pytest.raises(theirs.type):
            NoisyRocCurveDisplay.from_estimator(estimator, X, Y, q=0.1)
    with pytest.raises(TypeError, match="NoisyScore"):
        NoisyRocCurveDisplay(
            fpr=[0, 1], tpr=[0, 1], roc_auc=0.5, score=0.5, fpr_grid=[0, 1],
            tpr_expected=[0, 1], tpr_std=[0, 0], tpr_low=[0, 1], tpr_high=[0, 1],
            method="exact", n_draws=2,
        )  # fmt: skip
    plt.close("all")


def test_inputs_are_not_mutated_and_read_only_inputs_work():
    y, score, q = _setting(3, 40)
    copies = [y.copy(), score.copy(), q.copy()]
    for array in (y, score, q):
        array.setflags(write=False)
    display = NoisyRocCurveDisplay.from_predictions(y, score, q=q, n_draws=50)
    for array, copy in zip((y, score, q), copies, strict=True):
        np.testing.assert_array_equal(array, copy)
    plt.close(display.figure_)


def test_pickles_and_needs_matplotlib_only_to_plot(monkeypatch):
    display = NoisyRocCurveDisplay.from_predictions(Y, SCORE, q=0.1, n_draws=50)
    copy = pickle.loads(pickle.dumps(display))
    assert copy.score == display.score and copy.method == "monte_carlo"
    np.testing.assert_array_equal(copy.tpr_expected, display.tpr_expected)
    assert copy.line_.get_label() == display.line_.get_label()
    plt.close(display.figure_)
    plt.close(copy.figure_)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"sklearn-noisy\[plot\]"):
        display.plot()
    with pytest.raises(ImportError, match=r"sklearn-noisy\[plot\]"):
        NoisyRocCurveDisplay.from_predictions(Y, SCORE, q=0.1)


def test_small_sample_against_the_exact_sum_over_all_draws(monkeypatch):
    """M = 5: every label vector enumerated, single-class draws left out."""
    from itertools import product

    from sklearn_noisy.metrics import _roc_auc as _roc_curve_draws

    y = np.array([0, 1, 1, 0, 1])
    score = np.array([0.2, 0.9, 0.4, 0.4, 0.7])
    q = np.array([0.3, 0.1, 0.25, 0.05, 0.4])
    p = np.where(y == 1, 1.0 - q, q)
    index = np.array([7, 31, 53, 77, 101, 113])  # j/120: denominators above 5
    grid = index / 120
    mean, second, total = np.zeros(grid.size), np.zeros(grid.size), 0.0
    for labels in product([0, 1], repeat=5):
        labels = np.array(labels)
        if not 0 < labels.sum() < 5:
            continue
        weight = np.prod(np.where(labels == 1, p, 1.0 - p))
        fpr, tpr, _ = roc_curve(labels, score)
        values = np.interp(grid, fpr, tpr)
        mean += weight * values
        second += weight * values**2
        total += weight
    mean, std = mean / total, np.sqrt(second / total - (mean / total) ** 2)
    with pytest.warns(UserWarning, match="one class is missing in 0.0127"):
        display = NoisyRocCurveDisplay.from_predictions(
            y, score, q=q, n_draws=20000, n_grid=121
        )
    z = (display.tpr_expected[index] - mean) / display.tpr_standard_error[index]
    assert np.all(np.abs(z) < 5), z
    np.testing.assert_allclose(display.tpr_std[index], std, rtol=0.05)
    plt.close(display.figure_)
    # Batches of one draw give the same draws, hence the same curve.
    kwargs = {"q": q, "n_draws": 300}
    with pytest.warns(UserWarning):
        big = NoisyRocCurveDisplay.from_predictions(y, score, **kwargs)
    monkeypatch.setattr(_roc_curve_draws, "_BATCH_ELEMENTS", 1)
    with pytest.warns(UserWarning):
        small = NoisyRocCurveDisplay.from_predictions(y, score, **kwargs)
    np.testing.assert_array_equal(big.tpr_expected, small.tpr_expected)
    np.testing.assert_array_equal(big.tpr_low, small.tpr_low)
    plt.close("all")
