"""The command line keeps the label out of the features, and says what it chose.

Issue 22: the readings a label was averaged from, a copy of the label, the
label itself or a flip-probability column were taken as features; a 0/1 target
ran silently as a regression; a CSV file got another default model than the
embedded data; fold warnings did not name the fold.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from sklearn.linear_model import Ridge

from sklearn_noisy import NoisyCrossValidator
from sklearn_noisy.cli import main

LINEAR = "sklearn.linear_model.LinearRegression"
MSE = ["--metrics", "mean_squared_error"]


@pytest.fixture(scope="module")
def readings(tmp_path_factory):
    """Features x1, x2; y the mean of r1..r6 (some missing), y_sem; y_copy = 2y + 1."""
    rng = np.random.default_rng(0)
    n = 60
    x1, x2 = rng.normal(size=(2, n))
    truth = 50 + 30 * x1 - 20 * x2
    reads = truth[:, None] + 8 * rng.normal(size=(n, 6))
    reads[::7, 5] = np.nan
    y = np.array([np.nanmean(row) for row in reads])
    count = np.isfinite(reads).sum(axis=1)
    sem = np.nanstd(reads, axis=1, ddof=1) / np.sqrt(count)
    path = tmp_path_factory.mktemp("leaks") / "readings.csv"
    lines = ["x1,x2,y,y_sem,r1,r2,r3,r4,r5,r6,y_copy"]
    for i in range(n):
        cells = ["" if np.isnan(v) else f"{v:.4f}" for v in reads[i]]
        lines.append(
            f"{x1[i]:.4f},{x2[i]:.4f},{y[i]:.4f},{sem[i]:.4f},{','.join(cells)},"
            f"{2 * y[i] + 1:.4f}"
        )
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _run(capsys, args):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _json(capsys, args):
    code, out, err = _run(capsys, [*args, "--json", "-"])
    assert code == 0, err
    return json.loads(out), err


def test_readings_and_copies_of_the_target_are_never_default_features(capsys, readings):
    base = ["evaluate", "--data", readings, "--target", "y", "--sigma", "y_sem",
            "--estimator", LINEAR, *MSE, "--cv", "3"]  # fmt: skip
    payload, err = _json(capsys, base)
    assert payload["features"] == ["x1", "x2"]
    assert payload["left_out"] == {
        "y_copy": "an affine copy of the target, |corr| > 0.9999",
        **dict.fromkeys(
            ["r1", "r2", "r3", "r4", "r5", "r6"],
            "readings whose row mean is the target",
        ),
    }
    (line,) = [line for line in err.splitlines() if "left out" in line]
    assert "y_copy (an affine copy" in line
    assert "r1, r2, r3, r4, r5, r6 (readings" in line
    # asked for by name they are used, with a one-line warning (the default
    # model handles the missing readings)
    leaked, err = _json(
        capsys, [*base[:-6], *MSE, "--cv", "3", "--features", "x1,x2,r1,r2,r3,r4,r5,r6"]
    )
    assert leaked["features"] == ["x1", "x2", "r1", "r2", "r3", "r4", "r5", "r6"]
    warned = [line for line in err.splitlines() if "warning" in line]
    assert len(warned) == 1 and "--features includes r1, r2" in warned[0]


def test_readings_named_unalike_are_found(capsys, tmp_path):
    rng = np.random.default_rng(1)
    x = rng.normal(size=40)
    morning, noon, evening = x + 0.5 * rng.normal(size=(3, 40))
    y = (morning + noon + evening) / 3
    path = tmp_path / "unalike.csv"
    rows = ["x,morning,y,noon,evening,other"] + [
        f"{x[i]:.6f},{morning[i]:.6f},{y[i]:.6f},{noon[i]:.6f},{evening[i]:.6f},"
        f"{rng.normal():.6f}"
        for i in range(40)
    ]
    path.write_text("\n".join(rows) + "\n")
    base = ["evaluate", "--data", str(path), "--target", "y", "--sigma", "0.1",
            "--estimator", LINEAR, *MSE, "--cv", "3", "--quiet"]  # fmt: skip
    payload, _ = _json(capsys, base)
    assert payload["features"] == ["x", "other"]
    assert set(payload["left_out"]) == {"morning", "noon", "evening"}
    # as features they give the label away: the MSE collapses
    leaked, _ = _json(capsys, [*base, "--features", "x,morning,noon,evening"])
    honest = payload["pooled"]["mean_squared_error"]["nominal"]
    assert leaked["pooled"]["mean_squared_error"]["nominal"] < 1e-6 * honest


def test_the_target_among_explicit_features_is_an_error(capsys, readings, monkeypatch):
    fitted = []
    monkeypatch.setattr(NoisyCrossValidator, "fit", lambda *a, **k: fitted.append(1))
    code, out, err = _run(
        capsys,
        ["evaluate", "--data", readings, "--target", "y", "--sigma", "y_sem",
         "--features", "x1,y"],
    )  # fmt: skip
    assert code == 2 and out == "" and not fitted
    (line,) = err.strip().splitlines()
    assert "--features: 'y' is the target" in line


def test_a_binary_target_given_sigma_warns_and_q_is_no_feature(capsys, tmp_path):
    rng = np.random.default_rng(2)
    x1, x2 = rng.normal(size=(2, 50))
    label = (x1 + 0.5 * rng.normal(size=50) > 0).astype(int)
    path = tmp_path / "binary.csv"
    rows = ["x1,x2,y,q"]
    rows += [f"{x1[i]:.4f},{x2[i]:.4f},{label[i]},0.1" for i in range(50)]
    path.write_text("\n".join(rows) + "\n")
    payload, err = _json(
        capsys,
        ["evaluate", "--data", str(path), "--target", "y", "--sigma", "0.1",
         "--estimator", LINEAR, *MSE, "--cv", "3", "--quiet"],
    )  # fmt: skip
    assert payload["features"] == ["x1", "x2"]
    (line,) = [line for line in err.splitlines() if "warning" in line]
    assert "holds only the integers 0, 1" in line and "--q" in line
    assert "continuous measurements" in line


def _first_line(capsys, args):
    code, out, err = _run(capsys, [*args, *MSE, "--cv", "3", "--quiet"])
    assert code == 0, err
    return out.splitlines()[0]


def test_one_default_model_rule_stated_first(capsys, readings, tmp_path):
    embedded = _first_line(capsys, ["evaluate"])
    on_csv = _first_line(
        capsys, ["evaluate", "--data", readings, "--target", "y", "--sigma", "y_sem"]
    )
    assert embedded == on_csv
    payload, _ = _json(capsys, ["evaluate", *MSE, "--cv", "3", "--quiet"])
    assert payload["model"] == embedded.removeprefix("model: ")
    assert embedded.startswith("model: degree-3 polynomial ridge, the default")
    with_missing = _first_line(
        capsys,
        ["evaluate", "--data", readings, "--target", "y", "--sigma", "y_sem",
         "--features", "x1,x2,r6"],
    )  # fmt: skip
    assert with_missing.startswith(
        "model: HistGradientBoostingRegressor, the default for regression with "
        "missing cells"
    )
    given = _first_line(
        capsys,
        ["evaluate", "--data", readings, "--target", "y", "--sigma", "y_sem",
         "--estimator", LINEAR],
    )  # fmt: skip
    assert given == f"model: {LINEAR}, from --estimator"


class OddWarner(Ridge):
    """A ridge that warns when it is fitted on an odd number of samples."""

    def fit(self, X, y, sample_weight=None):
        if len(y) % 2:
            warnings.warn("odd training set", UserWarning, stacklevel=2)
        return super().fit(X, y, sample_weight=sample_weight)


def test_fold_warnings_name_their_folds_once(capsys, readings):
    # 60 samples in 7 folds: tests of 9, 9, 9, 9, 8, 8, 8, trains of 51 (odd)
    # in folds 1 to 4
    code, _, err = _run(
        capsys,
        ["evaluate", "--data", readings, "--target", "y", "--sigma", "y_sem",
         "--estimator", "test_cli_leaks.OddWarner", *MSE, "--cv", "7"],
    )  # fmt: skip
    assert code == 0, err
    warned = [line for line in err.splitlines() if "odd training set" in line]
    assert warned == [
        "sklearn-noisy: warning: fold 1, 2, 3, 4: UserWarning: odd training set"
    ]
    # printed after the folds ran, before the table
    assert err.index("[CV 7/7]") < err.index(warned[0])
