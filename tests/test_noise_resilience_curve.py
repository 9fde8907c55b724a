"""Tests of noise_resilience_curve and NoiseResilienceDisplay."""

import dataclasses
import json
import pickle
import sys

import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import KFold, cross_val_predict
from sklearn.utils import check_random_state

from sklearn_noisy.datasets import load_oxygen_sensor
from sklearn_noisy.metrics import noise_resilience_score
from sklearn_noisy.model_selection import (
    NoiseResilienceCurveResult,
    NoiseResilienceDisplay,
    noise_resilience_curve,
)


@pytest.fixture(scope="module")
def sensor():
    return load_oxygen_sensor()


def test_curve_on_embedded_data(sensor):
    kwargs = dict(n_repeats=2, random_state=0, feature=1, cv=3)
    levels = [0.2, 1.0, 3.0]
    curve = noise_resilience_curve(
        LinearRegression(), sensor.data, sensor.target_true, levels, **kwargs
    )
    assert isinstance(curve, NoiseResilienceCurveResult)
    assert curve.scores.shape == curve.fraction_satisfied.shape == (3, 2)
    assert np.all(curve.scores <= 1.0)
    assert np.all((curve.fraction_satisfied >= 0) & (curve.fraction_satisfied <= 1))
    mse = curve.metrics["mean_squared_error"]
    # Exact: E[MSE] = nominal + sigma^2 with sigma = the noise level (FORMULAS §1).
    np.testing.assert_allclose(
        mse["expected"], mse["nominal"] + np.square(levels)[:, None], rtol=1e-12
    )
    assert np.all(mse["truth"] > 0) and np.all(mse["std"] > 0)
    # A linear model on this nonlinear problem: its error is fixed while the
    # noise grows, so its error scatters less and less against the data's.
    assert curve.score_mean[0] < curve.score_mean[1] < curve.score_mean[2]
    again = noise_resilience_curve(
        LinearRegression(), sensor.data, sensor.target_true, levels, **kwargs
    )
    np.testing.assert_array_equal(again.scores, curve.scores)
    loaded = json.loads(json.dumps(curve.to_dict()))
    assert loaded["noise_levels"] == levels
    assert loaded["fraction_satisfied"] == curve.fraction_satisfied.tolist()
    frame = curve.to_frame()
    assert frame.shape[0] == 6 and "fraction_satisfied" in frame
    restored = pickle.loads(pickle.dumps(curve))
    np.testing.assert_array_equal(restored.scores, curve.scores)
    assert not restored.scores.flags.writeable
    assert not restored.metrics["mean_squared_error"]["expected"].flags.writeable
    with pytest.raises(dataclasses.FrozenInstanceError):
        curve.scores = None


def test_curve_is_the_score_of_each_draw(sensor):
    # One level, one repeat: the same draws as the curve, scored directly.
    X, y_ref = sensor.data, sensor.target_true
    curve = noise_resilience_curve(
        LinearRegression(), X, y_ref, [0.7], n_repeats=1, random_state=4, cv=4,
        feature=0, window=30, metrics=[],
    )  # fmt: skip
    rng = check_random_state(4)
    folds = KFold(4, shuffle=True, random_state=rng.randint(2**31 - 1))
    y = y_ref + 0.7 * rng.standard_normal(y_ref.size)
    y_pred = cross_val_predict(LinearRegression(), X, y, cv=folds)
    score = noise_resilience_score(X[:, 0], y, y_pred, y_ref, window=30)
    assert curve.scores[0, 0] == score.score
    assert curve.fraction_satisfied[0, 0] == score.fraction_satisfied


def test_curve_with_groups_over_two_features(sensor):
    X, y_ref = sensor.data, sensor.target_true
    groups = KMeans(4, n_init=3, random_state=0).fit_predict(X[:, :2])
    curve = noise_resilience_curve(
        LinearRegression(), X, y_ref, [0.5, 2.0], n_repeats=1, random_state=1,
        feature=[0, 1], groups=groups, cv=3, metrics=[],
    )  # fmt: skip
    assert curve.scores.shape == (2, 1)
    assert np.all(np.isin(curve.fraction_satisfied * 4, [0, 1, 2, 3, 4]))
    with pytest.raises(ValueError, match="several input variables need groups"):
        noise_resilience_curve(LinearRegression(), X, y_ref, [1.0], feature=[0, 1])


def test_curve_feature_by_name(sensor):
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(sensor.data, columns=["phase", "temperature", "pressure"])
    kwargs = dict(n_repeats=1, random_state=0, cv=3, metrics=[])
    by_name = noise_resilience_curve(
        LinearRegression(), frame, sensor.target_true, [1.0], feature="temperature",
        **kwargs,
    )  # fmt: skip
    by_index = noise_resilience_curve(
        LinearRegression(), sensor.data, sensor.target_true, [1.0], feature=-2,
        **kwargs,
    )  # fmt: skip
    # The model is fitted on a DataFrame in one case: equal to rounding.
    np.testing.assert_allclose(by_name.scores, by_index.scores, rtol=1e-12)


@pytest.mark.parametrize(
    "X_kind, feature, error, match",
    [
        ("array", 3, ValueError, r"feature=3 is out of range: X has 3 column"),
        ("array", -4, ValueError, r"index must be in \[-3, 3\)"),
        ("array", "phase", ValueError, "is a column name, but X is not a pandas"),
        ("array", 1.0, TypeError, "feature must be an integer column index"),
        ("array", True, TypeError, "feature must be an integer column index"),
        ("array", [], ValueError, "feature must name at least one column"),
        ("frame", "oxygen", ValueError, "feature='oxygen' is not a column of X"),
        ("frame", 5, ValueError, "feature=5 is out of range"),
        ("1d", 0, ValueError, r"X must be 2-D \(n_samples, n_features\)"),
        ("short", 0, ValueError, "X and y_ref must have the same number"),
    ],
)
def test_curve_bad_feature(sensor, X_kind, feature, error, match):
    # Issue 15: these raised IndexError (or KeyError) before.
    X = sensor.data
    if X_kind == "frame":
        pd = pytest.importorskip("pandas")
        X = pd.DataFrame(X, columns=["phase", "temperature", "pressure"])
    elif X_kind == "1d":
        X = X[:, 0]
    elif X_kind == "short":
        X = X[:-1]
    with pytest.raises(error, match=match):
        noise_resilience_curve(
            LinearRegression(), X, sensor.target_true, [1.0], feature=feature
        )


def test_curve_on_sparse_and_list_inputs(sensor):
    sparse = pytest.importorskip("scipy.sparse")
    kwargs = dict(n_repeats=1, random_state=0, cv=3, metrics=[], feature=1)
    dense = noise_resilience_curve(
        LinearRegression(), sensor.data, sensor.target_true, [1.0], **kwargs
    )
    for X in (sparse.csr_matrix(sensor.data), sensor.data.tolist()):
        other = noise_resilience_curve(
            LinearRegression(), X, sensor.target_true, [1.0], **kwargs
        )
        np.testing.assert_allclose(other.scores, dense.scores, rtol=1e-12)


def test_curve_errors(sensor):
    X, y_ref = sensor.data, sensor.target_true
    with pytest.raises(ValueError, match="must all be > 0"):
        noise_resilience_curve(LinearRegression(), X, y_ref, [0.0, 1.0])
    with pytest.raises(ValueError, match="metrics must hold"):
        noise_resilience_curve(LinearRegression(), X, y_ref, [1.0], metrics=["f1"])
    with pytest.raises(TypeError, match="regressor"):
        noise_resilience_curve(LogisticRegression(), X, y_ref, [1.0])
    with pytest.raises(ValueError, match="n_repeats"):
        noise_resilience_curve(LinearRegression(), X, y_ref, [1.0], n_repeats=0)
    with pytest.raises(ValueError, match="slope must be one of"):
        noise_resilience_curve(LinearRegression(), X, y_ref, [1.0], slope="x")


def test_display_renders_png(sensor, tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curve = noise_resilience_curve(
        LinearRegression(), sensor.data, sensor.target_true, [0.5, 2.0],
        n_repeats=1, random_state=0, feature=1, cv=3,
    )  # fmt: skip
    display = NoiseResilienceDisplay.from_cv_results(curve, name="linear")
    assert display.metric_ax_.get_ylabel() == "MSE"  # the registry's short name
    np.testing.assert_allclose(display.ax_.lines[0].get_ydata(), curve.score_mean)
    np.testing.assert_allclose(
        display.fraction_line_.get_ydata(), curve.fraction_satisfied_mean
    )
    assert "2α·S1 + S2 ≥ 0" in display.fraction_line_.get_label()
    path = tmp_path / "nr.png"
    display.figure_.savefig(path)
    assert path.read_bytes()[:4] == b"\x89PNG"
    unplotted = pickle.loads(pickle.dumps(NoiseResilienceDisplay(curve, name="m")))
    np.testing.assert_array_equal(unplotted.result.scores, curve.scores)
    alone = NoiseResilienceDisplay(curve, metric=None).plot()
    assert alone.metric_ax_ is not None  # the first metric by default
    with pytest.raises(ValueError, match="not in the result"):
        NoiseResilienceDisplay.from_results(curve, metric="r2")
    with pytest.raises(TypeError, match="NoiseResilienceCurveResult"):
        NoiseResilienceDisplay.from_results({"scores": 1})
    plt.close("all")


def test_display_without_matplotlib(monkeypatch):
    curve = NoiseResilienceCurveResult(
        noise_levels=np.array([1.0]),
        scores=np.array([[0.5]]),
        fraction_satisfied=np.array([[1.0]]),
        estimator_name="m",
    )
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match="NoiseResilienceDisplay needs matplotlib"):
        NoiseResilienceDisplay.from_results(curve)
