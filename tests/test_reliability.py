"""The labels' reliability, the noise ceilings and the report's "Model or
measurements?" section (issue 24).

Closed forms: labels whose noise has exactly its expected sums give scikit-learn's
R² and numpy's correlation of a perfect model. Monte Carlo: the σ-based
reliability (σ = the SEM of the repeats), ICC(1,k) and the split-half agree and
find the known truth ``var(truth) / (var(truth) + σ²/k)`` within 5 SE, with 2 to
10 repeats; the ceilings match a perfect model's R² and correlation.
"""

import json
import math
import pickle
from dataclasses import replace

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score

from sklearn_noisy.datasets import load_wheat_protein
from sklearn_noisy.metrics import LabelReliability, label_reliability
from sklearn_noisy.model_selection import NoisyCrossValidator
from sklearn_noisy.preprocessing import repeat_reliability, summarize_repeats
from sklearn_noisy.utils._warnings import quiet


def _typical_noise(n, sigma, rng):
    """Truth t, labels t + e, predictions t + d, where e has exactly its expected
    sums: Σe² = nσ², Σ(e − ē)² = (n − 1)σ², e ⟂ (t − t̄) and e − ē ⟂ d."""
    t, d = rng.normal(size=n), rng.normal(scale=0.3, size=n)
    basis, _ = np.linalg.qr(np.column_stack([np.ones(n), t, d, rng.normal(size=n)]))
    u = basis[:, 3] * sigma * math.sqrt(n - 1)
    return t, t + sigma / math.sqrt(n) + u, t + d


def test_ceilings_are_a_perfect_models_r2_and_correlation():
    rng = np.random.default_rng(0)
    n, sigma = 40, 0.6
    t, y, pred = _typical_noise(n, sigma, rng)
    result = label_reliability(y, sigma=sigma)
    assert result.noise_variance == pytest.approx(sigma**2)
    assert result.label_variance == pytest.approx(np.var(y, ddof=1))
    # at the plug-in ρ = 1 − mean σ² / var(y), without the small-sample factor
    plug_in = replace(result, estimate=1 - sigma**2 / np.var(y, ddof=1))
    assert plug_in.r2_ceiling == pytest.approx(r2_score(y, t), rel=1e-12)
    assert plug_in.correlation_ceiling == pytest.approx(np.corrcoef(t, y)[0, 1])
    corrected = plug_in.disattenuate(np.corrcoef(pred, y)[0, 1])
    assert corrected == pytest.approx(np.corrcoef(pred, t)[0, 1], rel=1e-12)
    assert plug_in.r2_ceiling < plug_in.estimate < result.estimate
    assert pickle.loads(pickle.dumps(result)) == result
    json.dumps(result.to_dict())


def test_exact_labels_and_weights():
    y = np.array([1.0, 2.0, 4.0, 7.0, 11.0])
    exact = label_reliability(y, sigma=0.0)
    assert (exact.estimate, exact.ci_low, exact.ci_high) == (1.0, 1.0, 1.0)
    assert exact.r2_ceiling == 1.0 and exact.disattenuate(0.8) == 0.8
    # equal weights change nothing; a zero weight drops the sample
    sigma = np.array([0.5, 0.2, 0.4, 0.3, 0.6])
    plain = label_reliability(y[:4], sigma=sigma[:4])
    weighted = label_reliability(y, sigma=sigma, sample_weight=[2, 2, 2, 2, 0.0])
    assert weighted.estimate == pytest.approx(plain.estimate, rel=1e-12)
    assert weighted.n_samples == pytest.approx(4.0)


def test_noise_larger_than_the_spread_is_a_limit():
    rng = np.random.default_rng(1)
    y = rng.normal(scale=1.0, size=30)  # the labels are noise only
    result = label_reliability(y, sigma=1.2)
    assert result.estimate < 0 and result.limit == "<" and result.ci_low == 0.0
    assert 0 < result.ci_high < 1
    assert math.isnan(result.reliability) and math.isnan(result.r2_ceiling)
    icc = repeat_reliability(rng.normal(size=(30, 3)))  # no signal: ρ = 0
    assert icc.limit == "<" and 0 < icc.ci_high < 1 and math.isnan(icc.reliability)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: label_reliability([[1.0, 2.0]] * 3, sigma=0.1), ValueError, "1-D"),
        (lambda: label_reliability([1.0, 2, 3], sigma=0.1), ValueError, "4 samples"),
        (lambda: label_reliability([2.0] * 4, sigma=0.1), ValueError, "spread"),
        (lambda: label_reliability([1.0, 2, 3, 4], sigma=-1.0), ValueError, "sigma"),
        (lambda: label_reliability([1.0, 2, 3, 4], sigma=None), TypeError, "sigma"),
        (
            lambda: label_reliability([1.0, 2, 4], sigma=0.1, confidence_level=1.0),
            ValueError,
            "confidence_level",
        ),
        (lambda: repeat_reliability([[1.0, 2.0]], method="x"), ValueError, "method"),
        (lambda: repeat_reliability([[1.0], [2.0], [3], [4]]), ValueError, "two or"),
        (lambda: repeat_reliability([[1.0, 1.0]] * 4), ValueError, "no spread"),
    ],
)
def test_errors_name_the_parameter(call, error, match):
    with pytest.raises(error, match=match):
        call()


def _repeats_simulation(k, n, replications, seed, counts=None):
    """σ-based, ICC and split-half estimates over simulated repeats, the truth."""
    rng = np.random.default_rng(seed)
    estimates, covered = [], []
    n_i = np.full(n, k) if counts is None else counts
    truth = 1.0 / (1.0 + np.mean(1.0 / n_i))  # τ = σ_w = 1
    for _ in range(replications):
        Y = rng.normal(size=(n, 1)) + rng.normal(size=(n, n_i.max()))
        Y[np.arange(n_i.max()) >= n_i[:, None]] = np.nan
        with quiet():
            summary = summarize_repeats(Y)
        found = (
            label_reliability(
                summary.y_mean, sigma=summary.sigma, sigma_dof=summary.sigma_dof
            ),
            repeat_reliability(Y),
            repeat_reliability(Y, method="split_half"),
        )
        estimates.append([r.estimate for r in found])
        covered.append([r.ci_low <= truth <= r.ci_high for r in found])
    return np.array(estimates), np.mean(covered, axis=0), truth


def _check_repeats(k, n, replications, seed, counts=None):
    estimates, coverage, truth = _repeats_simulation(k, n, replications, seed, counts)
    se = estimates.std(axis=0, ddof=1) / math.sqrt(replications)
    means = estimates.mean(axis=0)
    print(  # the user guide's table: pytest --run-slow -s -k slow
        k or "2-4",
        f"{truth:.4f}",
        *(f"{m:.4f} ± {e:.4f}" for m, e in zip(means, se, strict=True)),
        *(f"{c:.3f}" for c in coverage),
        sep=" | ",
    )
    assert np.all(np.abs(estimates.mean(axis=0) - truth) < 5 * se), (
        estimates.mean(axis=0),
        se,
        truth,
    )
    if counts is None:  # equal counts: the σ-based estimate is ICC(1,k) itself
        np.testing.assert_allclose(estimates[:, 0], estimates[:, 1], atol=1e-12)
    else:  # paired: the σ-based estimate against ICC(1,k)
        diff = estimates[:, 0] - estimates[:, 1]
        assert abs(diff.mean()) <= 5 * diff.std(ddof=1) / math.sqrt(replications)
    return coverage


@pytest.mark.parametrize("k", [2, 3, 5, 10])
def test_repeats_reliability_finds_the_truth(k):
    _check_repeats(k, n=100, replications=60, seed=k)


def test_unequal_counts_like_the_embedded_data():
    counts = np.random.default_rng(7).integers(2, 5, size=120)
    _check_repeats(0, n=120, replications=80, seed=8, counts=counts)


@pytest.mark.slow
@pytest.mark.parametrize("k", [2, 3, 5, 10, 0])
def test_repeats_reliability_finds_the_truth_slow(k):
    """The table of the user guide: 2000 replications of 200 samples (k = 0: 2
    to 4 readings, as the embedded data); the intervals cover the truth at 95 %
    within 5 SE of the simulation."""
    counts = np.random.default_rng(7).integers(2, 5, size=200) if k == 0 else None
    coverage = _check_repeats(k, 200, 2000, seed=100 + k, counts=counts)
    se = math.sqrt(0.95 * 0.05 / 2000)
    assert np.all(np.abs(coverage - 0.95) < 5 * se), coverage


def _ceiling_simulation(n, replications, seed):
    """Per replication: a perfect model's R² and correlation minus the ceilings,
    and the corrected correlation of a model minus its correlation with the truth."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(replications):
        t = rng.normal(size=n)
        sigma = 0.5 * rng.uniform(0.5, 1.5, size=n)
        y = t + rng.normal(size=n) * sigma
        pred = t + rng.normal(scale=0.5, size=n)
        result = label_reliability(y, sigma=sigma)
        rows.append(
            (
                r2_score(y, t) - result.r2_ceiling,
                np.corrcoef(t, y)[0, 1] - result.correlation_ceiling,
                result.disattenuate(np.corrcoef(pred, y)[0, 1])
                - np.corrcoef(pred, t)[0, 1],
            )
        )
    return np.array(rows)


@pytest.mark.parametrize(
    ("replications", "seed"),
    [pytest.param(150, 0), pytest.param(2000, 1, marks=pytest.mark.slow)],
)
def test_ceilings_match_a_perfect_model_on_average(replications, seed):
    rows = _ceiling_simulation(300, replications, seed)
    se = rows.std(axis=0, ddof=1) / math.sqrt(replications)
    print(*(f"{m:+.5f} ± {e:.5f}" for m, e in zip(rows.mean(0), se, strict=True)))
    assert np.all(np.abs(rows.mean(axis=0)) < 5 * se), (rows.mean(axis=0), se)


def test_report_section_and_json():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 3))
    sigma = np.full(120, 0.4)
    y = X @ [1.0, 0.5, -1.0] + rng.normal(scale=sigma)
    cv = NoisyCrossValidator(LinearRegression(), scoring=["r2"])
    cv.fit(X, y, sigma=sigma)
    found = cv.model_or_measurements_
    labels = found["labels"]
    assert labels.estimate == label_reliability(y, sigma=sigma).estimate
    oof = cv.oof_predictions_
    assert found["r2"] == pytest.approx(r2_score(y, oof), rel=1e-12)
    assert found["r2"] == pytest.approx(cv.pooled_["r2"].nominal, rel=1e-12)
    text = str(cv)
    section = text[text.index("Model or measurements?") :].splitlines()
    assert f"{labels.reliability:.4f}" in section[1]
    assert f"R² {labels.r2_ceiling:.4f}" in section[2]
    corrected = labels.disattenuate(found["correlation"])
    assert f"{found['r2']:.4f}" in section[3] and f"{corrected:.4f}" in section[3]
    assert "improve the" in section[4]
    payload = json.loads(cv.to_json())["model_or_measurements"]
    assert payload["model"]["corrected_correlation"] == pytest.approx(corrected)
    assert "Model or measurements?" in cv._repr_html_inner()
    # no section without sigma
    classes = (y > 0).astype(int)
    from sklearn.linear_model import LogisticRegression

    classifier = NoisyCrossValidator(LogisticRegression(), scoring=["accuracy"])
    classifier.fit(X, classes, q=0.05)
    assert classifier.model_or_measurements_ is None
    assert "Model or measurements?" not in str(classifier)


def test_embedded_wheat_repeats_agree_with_sigma():
    """The σ-based reliability of the embedded labels (σ = the SEM of 2 to 4
    readings) and the ICC and split-half of their repeats agree well within
    their intervals, and each interval holds the reliability of the data's
    known truth."""
    wheat = load_wheat_protein()
    sigma_based = label_reliability(
        wheat.target, sigma=wheat.target_sigma, sigma_dof=wheat.n_repeats - 1
    )
    icc = repeat_reliability(wheat.repeats)
    split = repeat_reliability(wheat.repeats, method="split_half")
    np.testing.assert_allclose(
        [sigma_based.estimate, icc.estimate, split.estimate],
        [0.99282, 0.99263, 0.99262],
        atol=1e-5,
    )
    width = icc.ci_high - icc.ci_low
    assert abs(sigma_based.estimate - icc.estimate) < width / 4
    truth_variance = np.var(wheat.target_true, ddof=1)  # the simulation's truth
    noise_variance = np.mean((wheat.target - wheat.target_true) ** 2)
    known = truth_variance / (truth_variance + noise_variance)
    for result in (sigma_based, icc, split):
        assert result.ci_low < known < result.ci_high
    assert isinstance(icc, LabelReliability)
