"""Tests for the sklearn-noisy command line.

Two runs go through a real subprocess (``python -m sklearn_noisy``: the default
run and an error's exit code); the CSV runs and the error paths are checked
in-process through ``main(argv)``, which is the same code and much faster than
one interpreter start per case.
"""

import csv
import json
import re
import subprocess
import sys

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import KFold, cross_val_predict

from sklearn_noisy import __version__
from sklearn_noisy.cli import main
from sklearn_noisy.metrics import expected_mean_squared_error
from sklearn_noisy.preprocessing import repeat_reliability, summarize_repeats

LINEAR = "sklearn.linear_model.LinearRegression"


def _run(*args):
    return subprocess.run(
        [sys.executable, "-m", "sklearn_noisy", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _assert_one_line_error(stderr):
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "error" in lines[0] and "Traceback" not in stderr


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """A CSV file: features x1, x2, a text column, y with y_err, 4 repeat columns."""
    rng = np.random.default_rng(0)
    n = 40
    x = rng.normal(size=(n, 2))
    truth = 2.0 * x[:, 0] - x[:, 1]
    y_err = rng.uniform(0.1, 0.5, n)
    y = truth + y_err * rng.normal(size=n)
    repeats = truth[:, None] + 0.3 * rng.normal(size=(n, 4))
    path = tmp_path_factory.mktemp("cli") / "data.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["x1", "x2", "site", "y", "y_err", "r1", "r2", "r3", "r4"])
        for i in range(n):
            cells = [f"{v:.6f}" for v in repeats[i]]
            if i % 3 == 0:
                cells[3] = ""  # a missing repeat
            writer.writerow(
                [f"{x[i, 0]:.6f}", f"{x[i, 1]:.6f}", f"s{i % 2}", f"{y[i]:.6f}",
                 f"{y_err[i]:.6f}", *cells]
            )  # fmt: skip
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    X = np.array([[float(r["x1"]), float(r["x2"])] for r in rows])
    reps = np.array([[float(r[c]) if r[c] else np.nan for c in ("r1", "r2", "r3", "r4")]
                     for r in rows])  # fmt: skip
    return {
        "path": str(path),
        "X": X,
        "y": np.array([float(r["y"]) for r in rows]),
        "y_err": np.array([float(r["y_err"]) for r in rows]),
        "repeats": reps,
    }


def _oof_mse(X, y, sigma, seed=0, n_splits=5, **options):
    splitter = KFold(n_splits, shuffle=True, random_state=seed)
    y_pred = cross_val_predict(LinearRegression(), X, y, cv=splitter)
    return expected_mean_squared_error(y, y_pred, sigma=sigma, **options)


def test_default_run_prints_the_table():
    result = _run("evaluate")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for metric in ("mean_squared_error", "mean_absolute_error", "r2"):
        assert f"\n{metric} (" in out
    assert out.count("pooled") >= 4 and "300 samples" in out
    # Progress per fold goes to stderr, never into the table.
    assert "[CV 5/5]" in result.stderr and "[CV" not in out


def test_csv_sigma_column_with_json(capsys, table, tmp_path):
    out_json = tmp_path / "out.json"
    code = main(
        ["evaluate", "--data", table["path"], "--target", "y", "--sigma", "y_err",
         "--features", "x1,x2", "--estimator", LINEAR, "--metrics",
         "mean_squared_error,mean_absolute_error", "--json", str(out_json)]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "mean_squared_error" in captured.out
    loaded = json.loads(out_json.read_text())
    pooled = loaded["pooled"]["mean_squared_error"]
    reference = _oof_mse(table["X"], table["y"], table["y_err"])
    assert pooled["expected"] == pytest.approx(reference.expected, rel=1e-12)
    assert pooled["variance"] == pytest.approx(reference.variance, rel=1e-12)
    assert pooled["n_samples"] == 40 and len(loaded["folds"]) == 5
    assert loaded["features"] == ["x1", "x2"]


def test_csv_repeats(capsys, table, tmp_path):
    out_json = tmp_path / "repeats.json"
    code = main(
        ["evaluate", "--data", table["path"], "--repeats", "r1,r2,r3,r4",
         "--features", "x1,x2", "--estimator", LINEAR, "--cv", "4",
         "--seed", "3", "--metrics", "mean_squared_error", "--json", str(out_json),
         "--quiet"]
    )  # fmt: skip
    stderr = capsys.readouterr().err
    assert code == 0, stderr
    # 3-4 repeats: one summarize_repeats warning, as a single line.
    assert stderr.count("\n") == 1 and "UserWarning" in stderr
    with pytest.warns(UserWarning, match="fewer than 5 repeats"):
        summary = summarize_repeats(table["repeats"])
    reference = _oof_mse(  # the truth, the JSON's top level, with sigma's dof
        table["X"], summary.y_mean, summary.sigma, seed=3, n_splits=4,
        sigma_dof=summary.sigma_dof,
    )  # fmt: skip
    pooled = json.loads(out_json.read_text())["pooled"]["mean_squared_error"]
    assert pooled["expected"] == pytest.approx(reference.expected, rel=1e-12)
    assert pooled["variance"] == pytest.approx(reference.variance, rel=1e-12)


def test_subprocess_error_exits_2_with_one_line():
    result = _run("evaluate", "--data", "/nonexistent/file.csv", "--target", "y")
    assert result.returncode == 2
    _assert_one_line_error(result.stderr)
    assert "no such file" in result.stderr and result.stdout == ""


@pytest.mark.parametrize(
    "args, match",
    [
        (["evaluate", "--data", "/nonexistent.csv", "--target", "y"], "no such file"),
        (["evaluate", "--target", "y"], "need(s) --data"),
        (["evaluate", "--cv", "1"], "--cv must be at least 2"),
        (["evaluate", "--cv", "x"], "invalid int value"),
        (["evaluate", "--bogus"], "unrecognized arguments"),
        ([], "required"),
        (["evaluate", "--estimator", "sklearn.linear_model.NoSuch"], "has no"),
        (["evaluate", "--estimator", "no_such_module.Model"], "cannot import"),
        (["evaluate", "--estimator", "NoSuchEstimator"], "unknown estimator"),
        (["evaluate", "--estimator", "LogisticRegression"], "not a regressor"),
        (["evaluate", "--param", "alpha"], "expected name=value"),
        (["evaluate", "--param", "no_such_param=1"], "--param"),
        (["evaluate", "--metrics", "no_such_metric"], "no_such_metric"),
        (["evaluate", "--json", "/nonexistent/dir/out.json"], "no such directory"),
        (
            ["evaluate", "--dataset", "wheat"],
            "invalid choice: 'wheat' (choose from 'wheat_protein', 'oxygen_sensor')",
        ),
        (
            ["evaluate", "--dataset", "oxygen_sensor", "--data", "x.csv"],
            "--dataset names embedded data: do not combine it with --data",
        ),
    ],
)
def test_errors_in_process(capsys, args, match):
    assert main(args) == 2
    captured = capsys.readouterr()
    _assert_one_line_error(captured.err)
    assert match in captured.err
    assert captured.out == ""


@pytest.mark.parametrize(
    "extra, match",
    [
        (["--target", "nope", "--sigma", "0.1"], "unknown column 'nope'"),
        (["--target", "site", "--sigma", "0.1"], "'site' is not numeric"),
        (["--target", "y", "--sigma", "0.1"], "'site' is not numeric"),  # feature
        (["--target", "y", "--sigma", "abc"], "neither a number nor a column"),
        (["--target", "y"], "give the label noise"),
        (["--target", "y", "--sigma", "0.1", "--q", "0.1"], "not both"),
        (["--repeats", "r1,r9"], "unknown column 'r9'"),
        (["--repeats", "r1", "--target", "y"], "do not combine"),
        (["--repeats", "r1,r4", "--features", "x1"], "fewer than min_repeats"),
        ([], "needs --target"),
        (["--target", "y", "--q", "0.1", "--features", "x1"], "not a classifier"),
    ],
)
def test_csv_errors_in_process(capsys, table, extra, match):
    args = ["evaluate", "--data", table["path"], "--estimator", LINEAR, *extra]
    assert main(args) == 2
    captured = capsys.readouterr()
    _assert_one_line_error(captured.err)
    assert match in captured.err


def test_version_and_classification_in_process(capsys, table, tmp_path):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"sklearn-noisy {__version__}"
    # Classification: labels from the sign of y, constant q, a --param literal.
    path = tmp_path / "labels.csv"
    with open(path, "w") as handle:
        handle.write("x1,x2,label\n")
        for (a, b), y in zip(table["X"], table["y"], strict=True):
            handle.write(f"{a},{b},{'pos' if y > 0 else 'neg'}\n")
    code = main(
        ["evaluate", "--data", str(path), "--target", "label", "--q", "0.1",
         "--estimator", "sklearn.linear_model.LogisticRegression", "--param",
         "C=0.5", "--metrics", "accuracy", "--cv", "3", "--quiet"]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "accuracy (higher is better)" in captured.out
    assert "C=0.5" in captured.out


def test_plot(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "folds.png"
    code = main(
        ["evaluate", "--metrics", "mean_squared_error", "--plot", str(png), "--quiet"]
    )
    assert code == 0, capsys.readouterr().err
    assert png.read_bytes()[:4] == b"\x89PNG"


# ------------------------------------------------------------------ estimands
def test_default_run_leads_with_the_truth_estimate(capsys, monkeypatch):
    from sklearn_noisy import NoisyCrossValidator
    from sklearn_noisy.datasets import load_wheat_protein

    given = {}
    fit = NoisyCrossValidator.fit

    def spy(self, X, y, **kwargs):
        given.update(kwargs)
        return fit(self, X, y, **kwargs)

    monkeypatch.setattr(NoisyCrossValidator, "fit", spy)
    assert main(["evaluate", "--quiet"]) == 0
    out = capsys.readouterr().out
    wheat = load_wheat_protein()
    np.testing.assert_array_equal(given["sigma"], wheat.target_sigma)
    np.testing.assert_array_equal(given["sigma_dof"], wheat.n_repeats - 1)
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if "leading estimand" in line)
    assert lines[header].endswith(
        "leading estimand: truth where offered, else remeasurement, else forward"
    )
    # the summary first: one line per metric, leading estimate or limit, unit
    assert lines[header + 1].startswith("Summary, the numbers to report (pooled; 95 %")
    summary = lines[header + 2 : header + 6]
    assert [line.split(":")[0].strip() for line in summary] == [
        "MSE against the true values", "RMSE against the true values",
        "MAE on a re-measurement", "R² against the true values",
    ]  # fmt: skip
    assert "(% protein)², " in summary[0] and "% protein, " in summary[2]
    assert "protein" not in summary[3]
    assert lines[header + 6] == "" and lines[header + 7].startswith("Legend")
    legend = lines[header + 8 : header + 12]
    assert [line.split(":")[0].strip() for line in legend] == [
        "nominal", "truth", "remeasurement", "forward"
    ]  # fmt: skip
    block = lines[
        lines.index("mean_squared_error (lower is better), in (% protein)²") :
    ]
    assert block[1].split()[:4] == ["fold", "n_test", "nominal", "truth"]
    # one precision per table: every number of its rows has as many decimals
    rows = block[2:8]
    decimals = {len(cell.split(".")[1]) for row in rows for cell in
                re.findall(r"-?\d+\.\d+", row)}  # fmt: skip
    assert len(decimals) == 1 and "e+" not in "".join(rows)
    assert not any(line.startswith("  report this") for line in lines)
    # no line calls the forward value what a re-measurement shows
    claims = ("what a re-measurement shows", "measured again")
    for line in lines:
        if "forward" in line:
            for claim in claims:
                if claim in line:
                    assert f"not {claim}" in line, line


def test_estimand_option_and_sigma_dof_column(capsys, table, tmp_path, monkeypatch):
    from sklearn_noisy import NoisyCrossValidator

    path = tmp_path / "dof.csv"
    with open(table["path"]) as source, open(path, "w") as target:
        for i, line in enumerate(source):
            target.write(
                line.rstrip("\n") + (",dof\n" if i == 0 else f",{i % 4 + 2}\n")
            )
    given = {}
    fit = NoisyCrossValidator.fit

    def spy(self, X, y, **kwargs):
        given.update(kwargs, estimand=self.estimand, n_features=X.shape[1])
        return fit(self, X, y, **kwargs)

    monkeypatch.setattr(NoisyCrossValidator, "fit", spy)
    args = ["evaluate", "--data", str(path), "--target", "y", "--sigma", "y_err",
            "--sigma-dof", "dof", "--features", "x1,x2", "--estimator", LINEAR,
            "--metrics", "mean_squared_error", "--quiet",
            "--estimand", "forward"]  # fmt: skip
    assert main(args) == 0
    out = capsys.readouterr().out
    assert given["estimand"] == "forward" and given["n_features"] == 2
    np.testing.assert_array_equal(given["sigma_dof"], np.arange(1, 41) % 4 + 2)
    assert "leading estimand: forward" in out
    assert "MSE forward (y_true exact): " in out
    assert "valid only if y_true is exact" in out
    # --repeats passes summarize_repeats' sigma_dof through
    args = ["evaluate", "--data", table["path"], "--repeats", "r1,r2,r3,r4",
            "--features", "x1,x2", "--estimator", LINEAR, "--metrics",
            "mean_squared_error", "--quiet"]  # fmt: skip
    assert main(args) == 0
    with pytest.warns(UserWarning, match="fewer than 5 repeats"):
        summary = summarize_repeats(table["repeats"])
    np.testing.assert_array_equal(given["sigma_dof"], summary.sigma_dof)
    assert "  MSE against the true values: " in capsys.readouterr().out


@pytest.mark.parametrize(
    "extra, match",
    [
        (["--target", "y", "--q", "0.1", "--sigma-dof", "3"], "--sigma-dof needs"),
        (["--repeats", "r1,r2", "--sigma-dof", "3"], "do not combine"),
        (["--target", "y", "--sigma", "y_err", "--sigma-dof", "nope"], "--sigma-dof"),
        (["--target", "y", "--sigma", "0.1", "--estimand", "paper"], "invalid choice"),
    ],
)
def test_estimand_and_sigma_dof_errors(capsys, table, extra, match):
    args = ["evaluate", "--data", table["path"], "--estimator", LINEAR, *extra]
    assert main(args) == 2
    captured = capsys.readouterr()
    _assert_one_line_error(captured.err)
    assert match in captured.err
    assert main(["evaluate", "--sigma-dof", "3"]) == 2
    assert "need(s) --data" in capsys.readouterr().err


# ------------------------------------------------------------ embedded data
def _main_job(capsys, *extra):
    """The pooled and per-fold MSE, RMSE and R² of the main job, from its JSON."""
    code = main(["evaluate", "--quiet", "--json", "-", *extra])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def test_main_job_default_data_make_the_label_noise_matter(capsys):
    """On the default data the truth, nominal and forward values are apart.

    Pooled, each pair differs by more than three times the larger SD (label
    noise and test-set sampling), in every fold by more than one SD; and the
    conclusion changes: the nominal RMSE fails the dataset's stated requirement
    (at most 0.20 % protein against the truth) while the truth RMSE's upper 95 %
    limit meets it, and its interval holds the RMSE against ``target_true``.
    """
    from sklearn_noisy.cli._model import _default_estimator
    from sklearn_noisy.datasets import load_wheat_protein

    payload = _main_job(capsys)
    assert payload["data"] == "embedded wheat protein (load_wheat_protein)"
    pooled = payload["pooled"]
    shown = {}
    for name in ("mean_squared_error", "root_mean_squared_error", "r2"):
        entry = pooled[name]
        truth, forward = entry["estimands"]["truth"], entry["estimands"]["forward"]
        values = (truth["estimate"], entry["nominal"], forward["estimate"])
        shown[name] = values
        sd = max(truth["total_sd"], forward["total_sd"])
        gaps = np.abs(np.diff(values))
        assert np.all(gaps > 3 * sd), (name, values, sd)
        for fold in payload["folds"]:
            fold = fold["metrics"][name]
            ft, ff = fold["estimands"]["truth"], fold["estimands"]["forward"]
            gaps = np.abs(np.diff([ft["estimate"], fold["nominal"], ff["estimate"]]))
            assert np.all(gaps > max(ft["sd"], ff["sd"])), (name, fold)
    np.testing.assert_allclose(
        shown["mean_squared_error"], (0.02545, 0.05586, 0.08627), rtol=1e-3
    )
    np.testing.assert_allclose(
        shown["root_mean_squared_error"], (0.1602, 0.2363, 0.2935), rtol=1e-3
    )
    np.testing.assert_allclose(shown["r2"], (0.9939, 0.9867, 0.9796), atol=2e-4)
    # The conclusion: fails on the labels, meets the requirement on the truth.
    rmse = pooled["root_mean_squared_error"]
    low, high = (rmse["estimands"]["truth"][k] for k in ("both_ci_low", "both_ci_high"))
    assert low < high < 0.20 < rmse["nominal"]
    # The truth that the simulation knows lies in the reported interval.
    wheat = load_wheat_protein()
    estimator, _ = _default_estimator("regression", wheat.data, 0)
    splitter = KFold(5, shuffle=True, random_state=0)
    y_pred = cross_val_predict(estimator, wheat.data, wheat.target, cv=splitter)
    actual = np.sqrt(np.mean((y_pred - wheat.target_true) ** 2))
    assert actual == pytest.approx(0.1406, abs=1e-4) and low < actual < high
    # Model or measurements?: the labels' reliability from σ, beside the one the
    # repeats of the embedded data give, and the model's nominal R² and r
    section = payload["model_or_measurements"]
    labels, from_repeats = section["labels"], section["repeats"]
    icc = repeat_reliability(wheat.repeats)
    assert from_repeats["icc"]["estimate"] == pytest.approx(icc.estimate)
    for estimate in (from_repeats["icc"], from_repeats["split_half"]):
        assert estimate["ci_low"] < labels["reliability"] < estimate["ci_high"]
    assert labels["reliability"] == pytest.approx(0.9928, abs=1e-4)
    assert section["model"]["r2"] == pytest.approx(pooled["r2"]["nominal"])
    r = np.corrcoef(y_pred, wheat.target)[0, 1]
    assert section["model"]["correlation"] == pytest.approx(r, rel=1e-9)


def test_dataset_option_runs_the_oxygen_sensor(capsys):
    payload = _main_job(
        capsys, "--dataset", "oxygen_sensor", "--metrics", "mean_squared_error"
    )
    assert payload["data"] == "embedded oxygen sensor (load_oxygen_sensor)"
    assert payload["features"] == ["phase_deg", "intensity_counts", "temperature_c"]
    # the second example: a model better than its labels can resolve
    truth = payload["pooled"]["mean_squared_error"]["estimands"]["truth"]
    assert truth["ci_low"] == 0.0 and truth["estimate"] < truth["sd"]


def test_sigma_shared_dof_reaches_the_metric(capsys, tmp_path, runs_csv):
    """--sigma-shared-dof: the pooled truth MSE equals the library's on the
    out-of-fold predictions with the same degrees of freedom; checked first."""
    from sklearn.model_selection import GroupKFold

    rng = np.random.default_rng(25)
    X = rng.normal(size=(40, 2))
    runs = np.repeat(["r1", "r2", "r3", "r4", "r5"], 8)
    y = X @ [1.0, -1.0] + np.repeat(rng.normal(size=5) * 0.3, 8)
    y = y + rng.normal(size=40) * 0.3
    path = runs_csv(X, runs, y)
    out = tmp_path / "out.json"
    common = ["evaluate", "--data", str(path), "--target", "y", "--sigma", "0.3"]
    common += ["--groups", "run", "--sigma-shared", "0.3"]
    code = main(
        [*common, "--sigma-shared-dof", "4", "--estimator",
         "sklearn.linear_model.LinearRegression", "--cv", "5", "--metrics",
         "mean_squared_error", "--json", str(out), "--quiet"]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    pooled = json.loads(out.read_text())["pooled"]["mean_squared_error"]
    splitter = GroupKFold(5, shuffle=True, random_state=0)
    oof = cross_val_predict(LinearRegression(), X, y, cv=splitter, groups=runs)
    shared = dict(sigma=0.3, groups=runs, sigma_shared=0.3)
    reference = expected_mean_squared_error(y, oof, **shared, sigma_shared_dof=4.0)
    assert pooled["expected"] == pytest.approx(reference.expected, rel=1e-9)
    assert pooled["variance"] == pytest.approx(reference.variance, rel=1e-9)
    known = expected_mean_squared_error(y, oof, **shared)
    assert pooled["variance"] > 1.1 * known.variance
    for extra, message in (
        (["--sigma-shared-dof", "0"], "must be a positive number"),
        (["--sigma-shared-dof", "x"], "must be a positive number"),
    ):
        assert main([*common, *extra]) == 2
        assert message in capsys.readouterr().err
    assert main([*common[:-2], "--sigma-shared-dof", "4"]) == 2
    assert "--sigma-shared-dof needs --sigma-shared" in capsys.readouterr().err
