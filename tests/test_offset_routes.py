"""A ``BatchOffsetSummary`` (``summarize_batches``) given as ``sigma_shared`` to
a scorer (its constant or routed metadata), ``NoisyCrossValidator``,
``compare_estimators`` and the command line reaches the metric whole: each
reports the direct metric call's estimate and fiducial interval on the same
data (1e-12), and the paired differences its estimate with its degrees of
freedom."""

import csv
import json
import pickle

import numpy as np
import pytest
import sklearn
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.model_selection import GroupKFold, cross_validate

from sklearn_noisy import NoisyCrossValidator, make_noisy_scorer
from sklearn_noisy.cli import main
from sklearn_noisy.metrics import (
    expected_mean_squared_error,
    expected_root_mean_squared_error,
)
from sklearn_noisy.model_selection import compare_estimators
from sklearn_noisy.preprocessing import BatchOffsetSummary, summarize_batches

SIGMA = 0.3
METRICS = {
    "mean_squared_error": expected_mean_squared_error,
    "root_mean_squared_error": expected_root_mean_squared_error,
}


@pytest.fixture(scope="module")
def lab():
    """48 labels in six runs of eight with offsets of SD 0.3 (as large as the
    labels' own errors), a model that misses a curvature (truth MSE ~ 0.5),
    and τ estimated from five reference runs of three readings."""
    rng = np.random.default_rng(3)
    runs = np.repeat([f"r{k}" for k in range(6)], 8)
    X = rng.normal(size=(48, 2))
    truth = X @ [1.0, -1.0] + 0.5 * X[:, 0] ** 2
    offsets = dict(zip(np.unique(runs), rng.normal(size=6) * 0.3, strict=True))
    y = truth + np.array([offsets[r] for r in runs]) + rng.normal(size=48) * SIGMA
    reference_runs = np.repeat([f"r{k}" for k in range(5)], 3)
    readings = 10.0 + np.repeat(rng.normal(size=5) * 0.3, 3)
    readings = readings + rng.normal(size=15) * SIGMA
    summary = summarize_batches(readings, reference_runs)
    assert summary.tau2 > 0
    return X, y, runs, summary, (readings, reference_runs)


def _assert_same(score, reference):
    """The same estimate and variance, the same fiducial interval (1e-12)."""
    assert score.expected == pytest.approx(reference.expected, rel=1e-12, abs=1e-12)
    assert score.variance == pytest.approx(reference.variance, rel=1e-12, abs=1e-12)
    interval, wanted = score.confidence_interval(), reference.confidence_interval()
    assert interval.method == wanted.method == "fiducial"
    np.testing.assert_allclose(interval, wanted, rtol=0, atol=1e-12)


def test_a_scorer_takes_a_summary_as_its_constant_or_as_metadata(lab):
    X, y, runs, summary, _ = lab
    model = LinearRegression().fit(X, y)
    offsets = dict(sigma=SIGMA, groups=runs, sigma_shared=summary, estimand="truth")
    for metric, function in METRICS.items():
        direct = function(y, model.predict(X), **offsets)
        assert direct.confidence_interval().low > 0
        fixed = make_noisy_scorer(metric, sigma=SIGMA, sigma_shared=summary)
        _assert_same(fixed.noisy_score(model, X, y, groups=runs), direct)
        _assert_same(pickle.loads(pickle.dumps(fixed)).noisy_score(
            model, X, y, groups=runs), direct)  # fmt: skip
        assert fixed(model, X, y, groups=runs) == -direct.expected
        routed = make_noisy_scorer(metric, sigma=SIGMA)
        given = dict(groups=runs, sigma_shared=summary)
        _assert_same(routed.noisy_score(model, X, y, **given), direct)
    message = (
        "sigma_shared is a BatchOffsetSummary, which holds its degrees of "
        "freedom: do not also pass sigma_shared_dof."
    )
    with pytest.raises(TypeError, match=message):
        make_noisy_scorer(
            "mean_squared_error", sigma=SIGMA, sigma_shared=summary, sigma_shared_dof=3
        )
    with pytest.raises(ValueError, match="needs its batch_dof and batch_size"):
        make_noisy_scorer(
            "mean_squared_error",
            sigma=SIGMA,
            sigma_shared=BatchOffsetSummary(0.3, 4.0, 0.09, 0.2, 10, 5, 1, 20),
        )


def test_scikit_learn_routes_a_summary_whole_to_every_fold(lab):
    """``cross_validate`` with routing: the summary, as the scorer's constant
    or routed, gives each fold the direct call's estimate and variance; also
    with exactly ten samples, as many as the summary has fields."""
    X, y, runs, summary, _ = lab
    for n, splitter in ((48, GroupKFold(3)), (10, GroupKFold(2))):
        _routes_whole(X[:n], y[:n], runs[:n], summary, splitter)


def _routes_whole(X, y, runs, summary, splitter):
    with sklearn.config_context(enable_metadata_routing=True):
        fixed = make_noisy_scorer(
            "mean_squared_error", sigma=SIGMA, sigma_shared=summary, output="all"
        )
        routed = make_noisy_scorer("mean_squared_error", sigma=SIGMA, output="all")
        routed.set_score_request(groups=True, sigma_shared=True)
        for scorer, params in (
            (fixed, {"groups": runs}),
            (routed, {"groups": runs, "sigma_shared": summary}),
        ):
            result = cross_validate(
                LinearRegression(), X, y, cv=splitter, scoring=scorer,
                params=params, return_estimator=True, return_indices=True,
            )  # fmt: skip
            tests = result["indices"]["test"]
            for k, test in enumerate(tests):
                direct = expected_mean_squared_error(
                    y[test], result["estimator"][k].predict(X[test]), sigma=SIGMA,
                    groups=runs[test], sigma_shared=summary, estimand="truth",
                )  # fmt: skip
                assert result["test_expected"][k] == pytest.approx(
                    -direct.expected, rel=1e-12
                )
                assert result["test_variance"][k] == pytest.approx(
                    direct.variance, rel=1e-12
                )


def test_cross_validator_and_comparison_carry_the_summary(lab):
    """Every fold and the pooled score equal the direct call on their
    predictions; the paired differences equal those of the summary's
    ``sigma_shared`` with its ``sigma_shared_dof``."""
    X, y, runs, summary, _ = lab
    splitter = GroupKFold(3)
    options = dict(sigma=SIGMA, groups=runs, sigma_shared=summary)
    estimators = {"linear": LinearRegression(), "ridge": Ridge(alpha=5.0)}
    comparison = compare_estimators(
        estimators, X, y, scoring=list(METRICS), cv=splitter, **options
    )
    point = dict(sigma_shared=summary.sigma_shared)
    point["sigma_shared_dof"] = summary.sigma_shared_dof
    estimate = compare_estimators(
        estimators, X, y, scoring=list(METRICS), cv=splitter,
        sigma=SIGMA, groups=runs, **point,
    )  # fmt: skip
    for name in estimators:
        cv = comparison.cv_results[name]
        rows = cv.oof_indices_
        for key, function in METRICS.items():
            pooled = cv.pooled_estimates_[key]["truth"]
            direct = function(
                y[rows], cv.oof_predictions_, sigma=SIGMA, groups=runs[rows],
                sigma_shared=summary, estimand="truth",
            )  # fmt: skip
            _assert_same(pooled, direct)
            assert pooled.expected == estimate.cv_results[name].pooled_[key].expected
            for k, test in enumerate(cv.test_indices_):
                fold = cv.fold_estimates_[key]["truth"][k]
                predicted = cv.oof_predictions_[np.searchsorted(rows, test)]
                _assert_same(fold, function(
                    y[test], predicted, sigma=SIGMA, groups=runs[test],
                    sigma_shared=summary, estimand="truth",
                ))  # fmt: skip
    pair = ("linear", "ridge")
    for key in METRICS:
        got, wanted = comparison.differences[pair][key], estimate.differences[pair][key]
        assert (got.expected, got.variance) == (wanted.expected, wanted.variance)
        assert got.confidence_interval() == wanted.confidence_interval()
    cv = NoisyCrossValidator(LinearRegression(), scoring=["mean_squared_error"])
    cv.set_params(cv=splitter)
    with pytest.raises(TypeError, match="holds its degrees of freedom"):
        cv.fit(X, y, **options, sigma_shared_dof=3.0)


def _write(path, header, rows):
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return str(path)


def test_command_line_reference_readings(lab, tmp_path, capsys):
    """``--reference-readings``: the pooled truth MSE and its interval are the
    library's with the summary of the same readings; user errors: one line,
    exit code 2, before any fit."""
    X, y, runs, summary, (readings, reference_runs) = lab
    data = _write(tmp_path / "runs.csv", ["x1", "x2", "run", "y"], zip(
        X[:, 0], X[:, 1], runs, y, strict=True))  # fmt: skip
    references = _write(tmp_path / "ref.csv", ["batch", "sample", "value"], zip(
        reference_runs, ["std"] * 15, readings, strict=True))  # fmt: skip
    out = tmp_path / "out.json"
    common = ["evaluate", "--data", data, "--target", "y", "--sigma", str(SIGMA)]
    common += ["--groups", "run", "--quiet"]
    code = main(
        [*common, "--reference-readings", references, "--estimator",
         "sklearn.linear_model.LinearRegression", "--cv", "3", "--metrics",
         "mean_squared_error", "--json", str(out)]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    payload = json.loads(out.read_text())
    pooled = payload["pooled"]["mean_squared_error"]
    # what the readings gave is printed above the report and written out
    assert payload["sigma_shared"]["tau2"] == pytest.approx(summary.tau2, rel=1e-12)
    assert payload["sigma_shared"]["n_batches"] == 5
    dof = f"on {summary.sigma_shared_dof:.3g} dof, from 15 readings in 5 batches"
    assert dof in capsys.readouterr().out
    splitter = GroupKFold(3, shuffle=True, random_state=0)
    cv = NoisyCrossValidator(LinearRegression(), scoring=["mean_squared_error"])
    cv.set_params(cv=splitter).fit(X, y, sigma=SIGMA, groups=runs, sigma_shared=summary)
    rows = cv.oof_indices_
    direct = expected_mean_squared_error(
        y[rows], cv.oof_predictions_, sigma=SIGMA, groups=runs[rows],
        sigma_shared=summary, estimand="truth",
    )  # fmt: skip
    interval = direct.confidence_interval()
    assert interval.method == pooled["ci_method"] == "fiducial" and interval.low > 0
    assert pooled["expected"] == pytest.approx(direct.expected, rel=1e-12)
    assert pooled["ci_low"] == pytest.approx(interval.low, rel=0, abs=1e-12)
    assert pooled["ci_high"] == pytest.approx(interval.high, rel=0, abs=1e-12)

    one_batch = _write(tmp_path / "one.csv", ["batch", "value"], [["a", 1.0]] * 3)
    no_value = _write(tmp_path / "cols.csv", ["batch", "reading"], [["a", 1.0]])
    text = _write(tmp_path / "text.csv", ["batch", "value"], [["a", "high"]])
    missing = str(tmp_path / "none.csv")
    option = "--reference-readings"
    for extra, message in (
        ([option, missing], f"{option}: no such file: {missing!r}"),
        (
            [option, no_value],
            f"{option}: {no_value!r} needs the columns batch and value (and "
            "sample with several reference samples); its columns are ['batch', "
            "'reading']",
        ),
        (
            [option, one_batch],
            f"{option}: summarize_batches needs at least two batches and more "
            "readings than references + batches - 1 (1); got 1 batch(es) and 3 "
            "readings.",
        ),
        ([option, text], f"{option}: column 'value' is not numeric (row 1: 'high')"),
        (
            [option, references, "--sigma-shared", "0.3"],
            f"{option} estimates sigma_shared and its uncertainty: do not combine "
            "it with --sigma-shared or --sigma-shared-dof",
        ),
    ):
        assert main([*common, *extra]) == 2
        err = capsys.readouterr().err
        assert err == f"sklearn-noisy evaluate: error: {message}\n"
    assert main([*common[:7], "--quiet", option, references]) == 2
    err = capsys.readouterr().err
    assert err.endswith(f"error: {option} needs --groups (the batch of each label)\n")
