"""``sklearn-noisy plan``: the re-measurement plan on ``evaluate``'s predictions.

Each run's CSV and gain lines are checked against ``plan_remeasurement``
called directly on the same out-of-fold predictions (``cross_val_predict`` with
the command's model and folds); user errors exit 2 with one line before any
model is fitted.
"""

from __future__ import annotations

import csv
import io
import re
from importlib import resources

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_predict

from sklearn_noisy.cli import main
from sklearn_noisy.cli._model import _default_estimator
from sklearn_noisy.datasets import load_wheat_protein
from sklearn_noisy.model_selection import plan_remeasurement
from sklearn_noisy.preprocessing import summarize_repeats

DIAGNOSIS = str(
    resources.files("sklearn_noisy.datasets") / "data" / "noisy_diagnosis.csv"
)


def _run(capsys, *args):
    code = main(["plan", "--quiet", *args])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out, captured.err


def _rows(text):
    return list(csv.DictReader(io.StringIO(text)))


def _gain(err):
    """The SDs (now, plan, even) and half-widths printed on stderr."""
    sd = re.search(r"SD.*: (\S+) now, (\S+) after the plan, (\S+) after", err)
    width = re.search(r"half-width: (\S+) now, (\S+) after the plan, (\S+) ", err)
    return [float(v) for v in sd.groups()], [float(v) for v in width.groups()]


def _pooled(readings):
    """The pooled SD of one reading over sqrt(readings), from the readings."""
    n = np.sum(np.isfinite(readings), axis=1)
    residuals = readings - np.nanmean(readings, axis=1, keepdims=True)
    pooled = np.sqrt(np.nansum(residuals**2) / np.sum(n - 1))
    return pooled / np.sqrt(n), pooled


def _check_against(plan, out, err, *, unit="readings"):
    """The CSV and the gain lines are the plan's numbers."""
    rows = _rows(out)
    index = np.array([int(r["index"]) for r in rows])
    np.testing.assert_array_equal(index, np.flatnonzero(plan.readings))
    added = np.array([int(r[f"add_{unit}"]) for r in rows])
    np.testing.assert_array_equal(added, plan.readings[index])
    sds, widths = _gain(err)
    np.testing.assert_allclose(
        sds, [plan.std_before, plan.std_after, plan.std_even], rtol=5e-4
    )
    np.testing.assert_allclose(
        widths,
        [plan.half_width_before, plan.half_width_after, plan.half_width_even],
        rtol=5e-4,
    )
    return rows


def test_plan_on_the_embedded_data(capsys):
    out, err = _run(capsys, "--budget", "40")
    wheat = load_wheat_protein()
    estimator, _ = _default_estimator("regression", wheat.data, 0)
    y_pred = cross_val_predict(
        estimator, wheat.data, wheat.target, cv=KFold(5, shuffle=True, random_state=0)
    )
    # sigma from 2 to 4 readings: the plan takes the pooled SD of one reading
    sigma, pooled = _pooled(wheat.repeats)
    plan = plan_remeasurement(
        wheat.target, y_pred, sigma=sigma, n_readings=wheat.n_repeats, budget=40
    )
    rows = _check_against(plan, out, err)
    assert sum(int(r["add_readings"]) for r in rows) == 40 == plan.n_added
    assert list(rows[0]) == ["index", "label", "sigma", "n_readings", "add_readings"]
    index = [int(r["index"]) for r in rows]
    np.testing.assert_allclose(
        [float(r["label"]) for r in rows], wheat.target[index], rtol=1e-5
    )
    np.testing.assert_allclose(
        [float(r["sigma"]) for r in rows], sigma[index], rtol=1e-5
    )
    assert [int(r["n_readings"]) for r in rows] == wheat.n_repeats[index].tolist()
    # the plan beats the even spread, which beats nothing (label noise, % protein)
    assert plan.std_after < plan.std_even < plan.std_before
    assert "in (% protein)²" in err and "degree-3 polynomial ridge" in err
    assert f"pooled SD of one reading, {pooled:.4g}" in err


def test_plan_of_repeats_with_ids_to_a_file(capsys, tmp_path):
    rng = np.random.default_rng(3)
    n = 30
    x = rng.normal(size=(n, 2))
    readings = (x @ [1.5, -1.0])[:, None] + rng.uniform(0.1, 0.9, (n, 1)) * (
        rng.normal(size=(n, 3))
    )
    readings[::4, 2] = np.nan  # some samples have 2 readings
    path = tmp_path / "runs.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["sample", "x1", "x2", "r1", "r2", "r3"])
        for i in range(n):
            cells = ["" if np.isnan(v) else f"{v:.6f}" for v in readings[i]]
            writer.writerow([f"S{i:02d}", f"{x[i, 0]:.6f}", f"{x[i, 1]:.6f}", *cells])
    output = tmp_path / "plan.csv"
    out, err = _run(
        capsys, "--budget", "9", "--data", str(path), "--repeats", "r1,r2,r3",
        "--id", "sample", "--estimator", "LinearRegression",
        "--metric", "root_mean_squared_error", "--output", str(output),
    )  # fmt: skip
    assert out == ""
    with pytest.warns(UserWarning, match="fewer than 5 repeats"):
        summary = summarize_repeats(np.round(readings, 6))
    X = np.round(x, 6)
    y_pred = cross_val_predict(
        LinearRegression(), X, summary.y_mean, cv=KFold(5, shuffle=True, random_state=0)
    )
    plan = plan_remeasurement(
        summary.y_mean, y_pred, sigma=_pooled(np.round(readings, 6))[0],
        n_readings=summary.n_repeats,
        budget=9, metric="root_mean_squared_error",
    )  # fmt: skip
    rows = _check_against(plan, output.read_text(), err)
    assert list(rows[0])[:2] == ["index", "sample"]
    assert [r["sample"] for r in rows] == [f"S{int(r['index']):02d}" for r in rows]
    assert [int(r["n_readings"]) for r in rows] == [
        int(summary.n_repeats[int(r["index"])]) for r in rows
    ]
    assert "RMSE against the true values" in err


def test_plan_of_flips(capsys):
    out, err = _run(
        capsys, "--budget", "25", "--data", DIAGNOSIS, "--target", "label",
        "--q", "flip_probability", "--estimator", "LogisticRegression",
    )  # fmt: skip
    data = np.genfromtxt(DIAGNOSIS, delimiter=",", names=True)
    X = np.column_stack([data[f"marker_{k}"] for k in range(1, 5)])
    y = data["label"].astype(int)
    splitter = StratifiedKFold(5, shuffle=True, random_state=0)
    y_pred = cross_val_predict(LogisticRegression(), X, y, cv=splitter)
    plan = plan_remeasurement(
        y, y_pred, q=data["flip_probability"], budget=25, metric="accuracy"
    )
    rows = _check_against(plan, out, err, unit="annotations")
    # one annotation each now: the plan adds pairs, one annotation stays unused
    assert {r["add_annotations"] for r in rows} <= {"2", "4", "6", "8"}
    assert plan.n_added == 24 and "1 of the annotations left unused" in err
    assert "each label is taken as one reading" in err


FLIPS = ["--data", DIAGNOSIS, "--target", "label", "--q", "flip_probability"]
SIGMA = ["--data", DIAGNOSIS, "--target", "marker_1", "--sigma", "0.1"]
REPEATS = ["--data", DIAGNOSIS, "--repeats", "marker_1,marker_2"]
CLASSES = ["--data", "THREE_CLASSES", "--target", "label", "--q", "0.1"]


@pytest.mark.parametrize(
    "args, match",
    [
        ([], "required: --budget"),
        (["--budget", "0"], "--budget: expected a positive integer"),
        (["--budget", "2.5"], "--budget: expected a positive integer"),
        (["--budget", "5", "--metric", "r2"], "metric must be one of"),
        (["--budget", "5", "--metric", "accuracy"], "needs q, not sigma"),
        (["--budget", "5", "--id", "sample"], "--id need(s) --data"),
        (["--budget", "5", "--output", "/nonexistent/plan.csv"], "no such directory"),
        (["--budget", "5", *FLIPS, "--id", "nope"], "--id: unknown column 'nope'"),
        (["--budget", "5", *SIGMA, "--n-readings", "0"], "integers >= 1; got 0.0"),
        (["--budget", "5", *REPEATS, "--repeat-sigma", "std"], "--repeat-sigma sem"),
        (["--budget", "5", *CLASSES], "y and y_pred hold 3 classes"),
    ],
)
def test_plan_errors_exit_2_before_fitting(capsys, monkeypatch, tmp_path, args, match):
    from sklearn_noisy import NoisyCrossValidator

    three = tmp_path / "three.csv"
    three.write_text("x,label\n" + "".join(f"{i},{'abc'[i % 3]}\n" for i in range(9)))
    args = [str(three) if arg == "THREE_CLASSES" else arg for arg in args]

    def fail(*args, **kwargs):
        raise AssertionError("fitted before the error")

    monkeypatch.setattr(NoisyCrossValidator, "fit", fail)
    assert main(["plan", *args]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "error" in lines[0], captured.err
    assert match in lines[0] and captured.out == ""
