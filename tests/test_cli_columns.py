"""The command line's choice of feature columns, --drop, --min-repeats, progress.

A label-like column (``label_true``, ``y_err``, ``flip_probability``...) would
leak the answer into the features: it is never a feature unless asked for.
"""

from __future__ import annotations

import json
import re
from importlib import resources

import numpy as np
import pytest

from sklearn_noisy.cli import main
from sklearn_noisy.cli._data import _looks_like_label
from sklearn_noisy.model_selection._validation import FoldProgress, format_seconds

DIAGNOSIS = str(
    resources.files("sklearn_noisy.datasets") / "data" / "noisy_diagnosis.csv"
)
LOGISTIC = "sklearn.linear_model.LogisticRegression"


@pytest.mark.parametrize(
    ("name", "label_like"),
    [
        ("label_true", True), ("y_err", True), ("flip_probability", True),
        ("o2_true", True), ("target", True), ("sigma_y", True), ("TRUTH", True),
        ("marker_1", False), ("temperature_c", False), ("x", False),
        ("y", False), ("truthiness", False), ("errand", False),
    ],
)  # fmt: skip
def test_label_like_names(name, label_like):
    assert _looks_like_label(name) is label_like


def _json_of(capsys, args):
    code = main(args)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out), captured.err


def test_truth_column_of_the_embedded_data_is_never_a_feature(capsys):
    base = ["evaluate", "--data", DIAGNOSIS, "--target", "label", "--q", "0.1",
            "--estimator", LOGISTIC, "--metrics", "accuracy", "--cv", "3",
            "--json", "-"]  # fmt: skip
    payload, err = _json_of(capsys, base)
    assert payload["features"] == ["marker_1", "marker_2", "marker_3", "marker_4"]
    assert "features: marker_1, marker_2, marker_3, marker_4" in err
    assert "left out: label_true, flip_probability" in err
    # asked for by name, it is used (and nothing is left out)
    payload, err = _json_of(capsys, [*base, "--features", "marker_1,label_true"])
    assert payload["features"] == ["marker_1", "label_true"]
    assert "left out" not in err
    # the truth as a feature makes accuracy jump: why it is left out
    leaked = payload["pooled"]["accuracy"]["nominal"]
    honest, _ = _json_of(capsys, base)
    assert leaked > honest["pooled"]["accuracy"]["nominal"] + 0.1


def test_drop_removes_default_features(capsys):
    args = ["evaluate", "--data", DIAGNOSIS, "--target", "label", "--q",
            "flip_probability", "--estimator", LOGISTIC, "--metrics", "accuracy",
            "--cv", "3", "--json", "-", "--drop", "marker_2,marker_4"]  # fmt: skip
    payload, err = _json_of(capsys, args)
    assert payload["features"] == ["marker_1", "marker_3"]
    assert "left out: label_true" in err


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--features", "marker_1", "--drop", "marker_2"], "--features or --drop"),
        (["--drop", "nope"], "--drop: unknown column 'nope'"),
        (["--min-repeats", "3"], "--min-repeats needs --repeats"),
        (["--drop", "marker_1,marker_2,marker_3,marker_4"], "no feature columns left"),
    ],
)
def test_column_option_errors(capsys, extra, match):
    args = ["evaluate", "--data", DIAGNOSIS, "--target", "label", "--q", "0.1",
            "--estimator", LOGISTIC, *extra]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and match in err[0]


def test_drop_and_min_repeats_need_data(capsys):
    for extra in (["--drop", "x"], ["--min-repeats", "2"]):
        assert main(["evaluate", *extra]) == 2
        assert "need(s) --data" in capsys.readouterr().err


def test_min_repeats_is_passed_to_summarize_repeats(capsys, tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "repeats.csv"
    rows = ["x1,r1,r2,r3"]
    for _ in range(30):
        x = rng.normal()
        cells = [f"{x + 0.2 * rng.normal():.5f}" for _ in range(3)]
        rows.append(f"{x:.5f}," + ",".join(cells))
    path.write_text("\n".join(rows) + "\n")
    base = ["evaluate", "--data", str(path), "--repeats", "r1,r2,r3",
            "--estimator", "sklearn.linear_model.Ridge", "--metrics",
            "mean_squared_error", "--cv", "3", "--json", "-"]  # fmt: skip
    # every sample has 3 readings: with --min-repeats 4 none has enough, so
    # each falls back to --instrument-sigma (known: infinite degrees of freedom)
    payload, _ = _json_of(
        capsys, [*base, "--min-repeats", "4", "--instrument-sigma", "0.2"]
    )
    fallback = payload["pooled"]["mean_squared_error"]
    payload, _ = _json_of(capsys, base)
    own = payload["pooled"]["mean_squared_error"]
    assert fallback["expected"] != own["expected"]
    assert (
        main([*base, "--min-repeats", "4"]) == 2
    )  # no instrument_sigma to fall back on
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--repeats" in err[0]


def test_progress_lines_have_elapsed_time_and_time_left(capsys):
    args = ["evaluate", "--data", DIAGNOSIS, "--target", "label", "--q", "0.1",
            "--estimator", LOGISTIC, "--metrics", "accuracy", "--cv", "4"]  # fmt: skip
    assert main(args) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("[CV")]
    assert [line[:8] for line in lines] == [
        "[CV 1/4]",
        "[CV 2/4]",
        "[CV 3/4]",
        "[CV 4/4]",
    ]
    assert all(re.search(r"elapsed \d", line) for line in lines)
    assert all("left" in line for line in lines[:-1]) and "left" not in lines[-1]
    assert "[Parallel" not in err  # joblib's own lines only with --verbose


class _Terminal:
    def __init__(self):
        self.text = ""

    def write(self, text):
        self.text += text

    def flush(self):
        pass

    def isatty(self):
        return True


def test_live_bar_on_a_terminal():
    terminal = _Terminal()
    progress = FoldProgress(2, stream=terminal)
    result = {"fit_error": None, "scores": {}, "n_test": 5, "fit_time": 0.1,
              "score_time": 0.0, "leads": {}, "estimates": {}}  # fmt: skip
    progress.update(result)
    assert (
        "1/2 folds" in terminal.text and "[############............]" in terminal.text
    )
    progress.update(result)
    progress.close()
    assert terminal.text.endswith("\r\033[K")
    assert "[CV 2/2] END" in terminal.text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.42, "0.4 s"), (12.3, "12 s"), (185, "3 min 05 s"), (3725, "1 h 02 min")],
)
def test_format_seconds(seconds, text):
    assert format_seconds(seconds) == text
