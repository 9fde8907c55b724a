"""The command line at the extremes: each bad input is one line, exit code 2.

Cases from issue 15: long CSV fields, non-UTF-8 files, a negative seed, an
estimator path without a module, and output paths that cannot be written
(checked before any fitting), plus ``--json -`` for standard output.
"""

import json
import sys

import numpy as np
import pytest

from sklearn_noisy.cli import main

LINEAR = "sklearn.linear_model.LinearRegression"


def _one_line_error(capsys, args, match):
    assert main(args) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert "error" in lines[0] and "Traceback" not in captured.err
    assert "internal error" not in captured.err
    assert match in lines[0], lines[0]
    assert captured.out == ""
    return lines[0]


def _write_table(path, n=30, note=""):
    rng = np.random.default_rng(1)
    x = rng.normal(size=n)
    y = 2.0 * x + 0.1 * rng.normal(size=n)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("x,y,note\n")
        for i in range(n):
            handle.write(f"{x[i]:.6f},{y[i]:.6f},{note if i == 0 else 'n'}\n")
    return path


def test_long_csv_field_is_read(capsys, tmp_path):
    # A field over 131,072 characters (csv's default limit) exited 1 with
    # "internal error"; it is now read like any other cell.
    path = _write_table(tmp_path / "long.csv", note="z" * 200_000)
    args = ["evaluate", "--data", str(path), "--target", "y", "--sigma", "0.1",
            "--features", "x", "--estimator", LINEAR, "--cv", "3", "--quiet",
            "--metrics", "mean_squared_error"]  # fmt: skip
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "mean_squared_error" in captured.out
    import csv

    assert csv.field_size_limit() == 131_072  # the limit is restored


def test_non_utf8_file_names_the_file_and_the_encoding(capsys, tmp_path):
    path = tmp_path / "latin1.csv"
    path.write_bytes("x,y,city\n1,2,Zürich\n2,4,Köln\n".encode("latin-1"))
    line = _one_line_error(
        capsys,
        ["evaluate", "--data", str(path), "--target", "y", "--sigma", "0.1"],
        "is not UTF-8",
    )
    assert str(path) in line and "--data" in line and "0xfc" in line
    assert "UnicodeDecodeError" not in line


@pytest.mark.parametrize("seed", ["-1", str(2**32)])
def test_seed_out_of_range_names_the_option(capsys, seed):
    line = _one_line_error(capsys, ["evaluate", "--seed", seed], "--seed")
    assert seed in line and "4294967295" in line


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--n-jobs", "0"], "--n-jobs must not be 0"),
        (["--cv", "301"], "--cv 301 exceeds the number of samples (300)"),
        (["--estimator", "sklearn.pipeline.Pipeline"], "cannot create"),
        (["--estimator", "sklearn.linear_model.ridge_regression"], "is not a class"),
    ],
)
def test_unusable_model_options_fail_before_any_fit(capsys, args, match):
    # one line naming the option, not joblib's or the splitter's own error
    # after the progress lines
    _one_line_error(capsys, ["evaluate", *args], match)


@pytest.mark.parametrize("path", [".", "sklearn.", ".Ridge", "sklearn..Ridge", "a b"])
def test_estimator_path_names_the_option_and_the_form(capsys, path):
    line = _one_line_error(capsys, ["evaluate", "--estimator", path], "--estimator")
    assert "dotted path" in line and "Empty module name" not in line


@pytest.mark.parametrize("option", ["--json", "--plot"])
def test_unwritable_output_fails_before_fitting(capsys, tmp_path, option, monkeypatch):
    # Nothing may be loaded or fitted before the paths are checked.
    def no_load(args):
        raise AssertionError("the data was loaded before the output path was checked")

    monkeypatch.setattr("sklearn_noisy.cli._model._load", no_load)
    _one_line_error(
        capsys, ["evaluate", option, "/sys/sklearn_noisy_out"], "cannot write"
    )
    _one_line_error(capsys, ["evaluate", option, str(tmp_path)], "is a directory")
    missing = str(tmp_path / "missing" / "out")
    _one_line_error(capsys, ["evaluate", option, missing], "no such directory")
    # a file in the way of the directory
    blocker = tmp_path / "file"
    blocker.write_text("x")
    _one_line_error(
        capsys, ["evaluate", option, str(blocker / "out")], "no such directory"
    )


def test_writable_probe_leaves_no_file(capsys, tmp_path, monkeypatch):
    def stop(args):
        raise SystemExit(7)

    monkeypatch.setattr("sklearn_noisy.cli._model._load", stop)
    target = tmp_path / "out.json"
    with pytest.raises(SystemExit):
        main(["evaluate", "--json", str(target)])
    assert not target.exists()
    target.write_text("keep")
    with pytest.raises(SystemExit):
        main(["evaluate", "--json", str(target)])
    assert target.read_text() == "keep"


def test_plot_without_matplotlib_fails_early(capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)

    def no_load(args):
        raise AssertionError("the data was loaded before matplotlib was checked")

    monkeypatch.setattr("sklearn_noisy.cli._model._load", no_load)
    _one_line_error(
        capsys, ["evaluate", "--plot", str(tmp_path / "p.png")], "needs matplotlib"
    )


def test_json_dash_writes_json_to_stdout(capsys):
    args = ["evaluate", "--json", "-", "--quiet", "--cv", "3",
            "--metrics", "mean_squared_error"]  # fmt: skip
    assert main(args) == 0
    captured = capsys.readouterr()
    payload = json.loads(captured.out)  # stdout is the JSON and nothing else
    assert payload["pooled"]["mean_squared_error"]["n_samples"] == 300
    assert "mean_squared_error (" in captured.err  # the table went to stderr
    assert not (__import__("pathlib").Path("-").exists())


def test_output_into_a_closed_pipe_exits_quietly(tmp_path):
    # ``sklearn-noisy evaluate | head -3`` ended with a one-line BrokenPipeError
    # and exit code 2. The reader's end is closed here before the first write.
    import subprocess

    path = _write_table(tmp_path / "t.csv")
    process = subprocess.Popen(
        [sys.executable, "-m", "sklearn_noisy", "evaluate", "--data", str(path),
         "--target", "y", "--sigma", "0.1", "--features", "x", "--estimator",
         LINEAR, "--cv", "2", "--quiet", "--metrics", "mean_squared_error"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )  # fmt: skip
    process.stdout.close()
    stderr = process.stderr.read()
    assert process.wait(timeout=120) == 141 and stderr == b""


@pytest.mark.parametrize("text", ["\n", "\nx,y\n1,2\n", " , \n1,2\n"])
def test_blank_header_line_is_one_line_error(capsys, tmp_path, text):
    path = tmp_path / "blank.csv"
    path.write_text(text)
    line = _one_line_error(
        capsys,
        ["evaluate", "--data", str(path), "--target", "y", "--sigma", "0.1"],
        "first line",
    )
    assert "must name the columns" in line
