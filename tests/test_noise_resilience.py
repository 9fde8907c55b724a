"""Tests for noise_resilience_score, noise_resilience_curve and its display."""

import json
import math
import pickle
import sys
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression

from sklearn_noisy.datasets import load_oxygen_sensor
from sklearn_noisy.metrics import NoiseResilienceResult, noise_resilience_score
from sklearn_noisy.model_selection import (
    NoiseResilienceCurveResult,
    NoiseResilienceDisplay,
    noise_resilience_curve,
)


def _hand_example():
    # Region 0: x = 0, 1, 2 (Sxx = 2); noise 1, -1, 1 (s = 1, B = 1/sqrt(2));
    #   prediction error 0, 0.5, 1 (alpha = 0.5): local 1 - 0.25 / 0.5 = 0.5.
    # Region 1: x = 3, 4, 5 (Sxx = 2); noise 2, 0, -2 (s^2 = 8/3, B^2 = 4/3,
    #   data slope -2); prediction error 1, 1, 1 (alpha = 0): local 1.
    x = np.arange(6.0)
    y_ref = np.array([3.0, -1.0, 4.0, 1.0, -5.0, 9.0])
    y = y_ref + np.array([1.0, -1.0, 1.0, 2.0, 0.0, -2.0])
    y_pred = y_ref + np.array([0.0, 0.5, 1.0, 1.0, 1.0, 1.0])
    return x, y, y_pred, y_ref


def test_hand_computed_example():
    x, y, y_pred, y_ref = _hand_example()
    result = noise_resilience_score(x, y, y_pred, y_ref, n_regions=2)
    assert isinstance(result, NoiseResilienceResult)
    assert result.score == pytest.approx(0.75, abs=1e-15)
    first, second = result.regions
    assert first["slope"] == pytest.approx(0.5, abs=1e-15)
    assert first["bound"] == pytest.approx(1 / math.sqrt(2), abs=1e-15)
    assert first["data_slope"] == pytest.approx(0.0, abs=1e-15)
    assert second["slope"] == pytest.approx(0.0, abs=1e-15)
    assert second["bound"] == pytest.approx(math.sqrt(4 / 3), abs=1e-15)
    assert second["data_slope"] == pytest.approx(-2.0, abs=1e-15)
    assert second["noise_rms"] == pytest.approx(math.sqrt(8 / 3), abs=1e-15)
    assert (first["x_min"], first["x_max"], first["n_samples"]) == (0.0, 2.0, 3)
    assert first["condition"] and second["condition"]
    assert result.fraction_satisfied == 1.0
    # A steeper error in region 0, alpha = 2: local 1 - 4 / 0.5 = -7, condition fails.
    y_pred = y_ref + np.array([0.0, 2.0, 4.0, 1.0, 1.0, 1.0])
    result = noise_resilience_score(x, y, y_pred, y_ref, n_regions=2)
    assert result.score == pytest.approx((-7.0 + 1.0) / 2, abs=1e-14)
    assert result.table["condition"].tolist() == [False, True]
    assert result.fraction_satisfied == 0.5
    # Input order does not matter: regions are formed along sorted x.
    perm = np.array([4, 0, 5, 2, 1, 3])
    shuffled = noise_resilience_score(
        x[perm], y[perm], y_pred[perm], y_ref[perm], n_regions=2
    )
    assert shuffled.score == pytest.approx(result.score, abs=1e-14)


def test_score_is_one_at_perfect_recovery():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 10, 200)
    y_ref = np.sin(x)
    y = y_ref + rng.normal(0, 0.3, 200)
    for kwargs in ({}, {"n_regions": 7}, {"window": 25}):
        assert noise_resilience_score(x, y, y_ref, y_ref, **kwargs).score == 1.0
    # Also for a constant offset (NR sees local slopes only).
    assert noise_resilience_score(x, y, y_ref + 3.0, y_ref).score == pytest.approx(1.0)


def test_sliding_window_matches_brute_force():
    rng = np.random.default_rng(1)
    n, window = 40, 7
    x = rng.uniform(0, 1, n)
    y_ref = x**2
    y = y_ref + rng.normal(0, 0.1, n)
    y_pred = y_ref + rng.normal(0, 0.05, n)
    result = noise_resilience_score(x, y, y_pred, y_ref, window=window)
    assert result.mode == "window" and result.n_regions == n - window + 1
    order = np.argsort(x)
    local = []
    for start in range(n - window + 1):
        idx = order[start : start + window]
        alpha = np.polyfit(x[idx], y_pred[idx] - y_ref[idx], 1)[0]
        dx = x[idx] - x[idx].mean()
        bound = math.sqrt(np.mean((y[idx] - y_ref[idx]) ** 2) / (dx @ dx))
        local.append(1 - (alpha / bound) ** 2)
    np.testing.assert_allclose(result.table["local_score"], local, rtol=1e-9)
    assert result.score == pytest.approx(np.mean(local), rel=1e-9)
    # One window covering everything equals one region.
    whole = noise_resilience_score(x, y, y_pred, y_ref, window=n)
    one = noise_resilience_score(x, y, y_pred, y_ref, n_regions=1)
    assert whole.score == pytest.approx(one.score, rel=1e-13)


def test_reproducing_the_noisy_data_scores_zero_on_average():
    # For y_pred = y and Gaussian noise, (alpha/B)^2 has expectation exactly 1.
    rng = np.random.default_rng(2)
    n, draws = 30, 1500
    x = np.linspace(0, 1, n)
    y_ref = np.exp(x)
    scores = np.empty(draws)
    for k in range(draws):
        y = y_ref + rng.normal(0, 0.2, n)
        scores[k] = noise_resilience_score(x, y, y, y_ref, n_regions=3).score
    se = scores.std(ddof=1) / math.sqrt(draws)
    assert abs(scores.mean()) < 5 * se


def test_noise_free_region():
    x = np.arange(6.0)
    y_ref = np.zeros(6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert noise_resilience_score(x, y_ref, y_ref, y_ref, n_regions=2).score == 1.0
        result = noise_resilience_score(x, y_ref, 0.1 * x, y_ref, n_regions=2)
    assert result.score == -math.inf
    assert not result.table["condition"].any()


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_regions": 2, "window": 3}, "not both"),
        ({"n_regions": 3}, r"n_regions must be an integer in \[1, 2\]"),
        ({"n_regions": 0}, "n_regions"),
        ({"window": 2}, r"window must be an integer in \[3, n_samples=6\]"),
        ({"window": 7}, "window"),
    ],
)
def test_bad_regions(kwargs, match):
    x, y, y_pred, y_ref = _hand_example()
    with pytest.raises(ValueError, match=match):
        noise_resilience_score(x, y, y_pred, y_ref, **kwargs)


def test_bad_inputs():
    x, y, y_pred, y_ref = _hand_example()
    with pytest.raises(ValueError, match="same number of samples"):
        noise_resilience_score(x, y[:-1], y_pred, y_ref)
    with pytest.raises(ValueError, match="constant within"):
        noise_resilience_score(np.ones(6), y, y_pred, y_ref, n_regions=2)
    with pytest.raises(ValueError, match="finite"):
        noise_resilience_score(x, y, np.full(6, np.nan), y_ref)
    with pytest.raises(ValueError, match="at least 3 samples"):
        noise_resilience_score(x[:2], y[:2], y_pred[:2], y_ref[:2])
    with pytest.raises(ValueError, match="1-D"):
        noise_resilience_score(np.ones((6, 2)), y, y_pred, y_ref)


def test_result_table_exports():
    pd = pytest.importorskip("pandas")
    result = noise_resilience_score(*_hand_example(), n_regions=2)
    frame = result.to_frame()
    assert isinstance(frame, pd.DataFrame) and frame.shape == (2, 11)
    assert frame["local_score"].tolist() == pytest.approx([0.5, 1.0])
    loaded = json.loads(json.dumps(result.to_dict()))
    assert loaded["score"] == pytest.approx(0.75) and len(loaded["regions"]) == 2
    assert float(result) == result.score and "score=0.75" in repr(result)
    restored = pickle.loads(pickle.dumps(result))
    assert restored.score == result.score and restored.regions == result.regions


def test_curve_on_embedded_data():
    sensor = load_oxygen_sensor()
    kwargs = dict(n_repeats=2, random_state=0, feature=1, cv=3)
    levels = [0.2, 1.0, 3.0]
    curve = noise_resilience_curve(
        LinearRegression(), sensor.data, sensor.target_true, levels, **kwargs
    )
    assert isinstance(curve, NoiseResilienceCurveResult)
    assert curve.scores.shape == (3, 2) and np.all(curve.scores <= 1.0)
    mse = curve.metrics["mean_squared_error"]
    # Exact: E[MSE] = nominal + sigma^2 with sigma = the noise level (FORMULAS §1).
    np.testing.assert_allclose(
        mse["expected"], mse["nominal"] + np.square(levels)[:, None], rtol=1e-12
    )
    assert np.all(mse["truth"] > 0) and np.all(mse["std"] > 0)
    # A linear model on this nonlinear problem: its error trend is fixed while the
    # noise grows, so NR rises with the noise level.
    assert curve.score_mean[0] < curve.score_mean[-1]
    again = noise_resilience_curve(
        LinearRegression(), sensor.data, sensor.target_true, levels, **kwargs
    )
    np.testing.assert_array_equal(again.scores, curve.scores)
    assert json.loads(json.dumps(curve.to_dict()))["noise_levels"] == levels
    assert curve.to_frame().shape[0] == 6
    restored = pickle.loads(pickle.dumps(curve))
    np.testing.assert_array_equal(restored.scores, curve.scores)


def test_curve_errors():
    sensor = load_oxygen_sensor()
    X, y_ref = sensor.data, sensor.target_true
    with pytest.raises(ValueError, match="must all be > 0"):
        noise_resilience_curve(LinearRegression(), X, y_ref, [0.0, 1.0])
    with pytest.raises(ValueError, match="metrics must hold"):
        noise_resilience_curve(LinearRegression(), X, y_ref, [1.0], metrics=["f1"])
    with pytest.raises(TypeError, match="regressor"):
        noise_resilience_curve(LogisticRegression(), X, y_ref, [1.0])
    with pytest.raises(ValueError, match="n_repeats"):
        noise_resilience_curve(LinearRegression(), X, y_ref, [1.0], n_repeats=0)


def test_display_renders_png(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sensor = load_oxygen_sensor()
    curve = noise_resilience_curve(
        LinearRegression(), sensor.data, sensor.target_true, [0.5, 2.0],
        n_repeats=1, random_state=0, feature=1, cv=3,
    )  # fmt: skip
    display = NoiseResilienceDisplay.from_results(curve, name="linear")
    assert display.metric_ax_.get_ylabel() == "mean_squared_error"
    np.testing.assert_allclose(display.ax_.lines[0].get_ydata(), curve.score_mean)
    path = tmp_path / "nr.png"
    display.figure_.savefig(path)
    assert path.read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(ValueError, match="not in the result"):
        NoiseResilienceDisplay.from_results(curve, metric="r2")
    with pytest.raises(TypeError, match="NoiseResilienceCurveResult"):
        NoiseResilienceDisplay.from_results({"scores": 1})
    plt.close("all")


def test_display_without_matplotlib(monkeypatch):
    curve = NoiseResilienceCurveResult(
        noise_levels=np.array([1.0]), scores=np.array([[0.5]]), estimator_name="m"
    )
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match="NoiseResilienceDisplay needs matplotlib"):
        NoiseResilienceDisplay.from_results(curve)
