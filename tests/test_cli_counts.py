"""``sklearn-noisy evaluate --noise poisson``: count labels on the command line
(user guide: poisson_noise). The CLI's pooled numbers equal the library's on
the same out-of-fold predictions; its errors are one line, exit code 2."""

import json

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import KFold, cross_val_predict

from sklearn_noisy.cli import main
from sklearn_noisy.metrics import (
    expected_mean_squared_error,
    expected_r2_score,
    expected_root_mean_squared_error,
)

LIBRARY = {
    "mean_squared_error": expected_mean_squared_error,
    "root_mean_squared_error": expected_root_mean_squared_error,
    "r2": expected_r2_score,
}


@pytest.fixture(scope="module")
def counts_csv(tmp_path_factory):
    rng = np.random.default_rng(3)
    X = rng.uniform(0.0, 1.0, (60, 2))
    y = rng.poisson(2.0 + 20.0 * X[:, 0] ** 2 + 6.0 * X[:, 1])
    path = tmp_path_factory.mktemp("counts") / "counts.csv"
    rows = [f"{a:.6f},{b:.6f},{c}" for (a, b), c in zip(X, y, strict=True)]
    path.write_text("x1,x2,y\n" + "\n".join(rows) + "\n")
    X = np.array([[float(v) for v in r.split(",")[:2]] for r in rows])
    return str(path), X, y.astype(float)


def test_cli_counts_equal_the_library(capsys, counts_csv):
    path, X, y = counts_csv
    code = main(
        ["evaluate", "--data", path, "--target", "y", "--noise", "poisson",
         "--estimator", "LinearRegression", "--quiet", "--json", "-"]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0, captured.err
    pooled = json.loads(captured.out)["pooled"]
    assert sorted(pooled) == sorted(LIBRARY)
    splitter = KFold(5, shuffle=True, random_state=0)
    y_pred = cross_val_predict(LinearRegression(), X, y, cv=splitter)
    for name, function in LIBRARY.items():
        reference = function(y, y_pred, noise="poisson", estimand="truth")
        truth = pooled[name]["estimands"]["truth"]
        assert pooled[name]["estimand"] == "truth"
        assert truth["estimate"] == pytest.approx(reference.expected, rel=1e-9)
        assert truth["variance"] == pytest.approx(reference.variance, rel=1e-9)


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        (["--target", "y", "--sigma", "1"], "do not combine it with --sigma"),
        (["--target", "y", "--groups", "x1"], "--groups or --sigma-shared"),
        (["--target", "x1"], "must hold counts"),
        (["--repeats", "x1,x2"], "not --repeats"),
        (["--target", "y", "--metrics", "mean_absolute_error"], "count labels"),
    ],
)
def test_cli_counts_errors(capsys, counts_csv, extra, match):
    code = main(["evaluate", "--data", counts_csv[0], "--noise", "poisson", *extra])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and match in err[0], err
    assert main(["evaluate", "--noise", "poisson"]) == 2
    assert "--noise need(s) --data" in capsys.readouterr().err
