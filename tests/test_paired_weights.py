"""expected_paired_difference: sample_weight, label checks, names, chunking.

Issue 15: the paired difference lacked ``sample_weight``, accepted continuous
labels for accuracy and named ``y_pred`` for a NaN in ``y_pred_b``; its kernels
now stream the samples in chunks (checked here across chunk boundaries against
the unchunked formulas).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import (
    accuracy_score,
    brier_score_loss,
    log_loss,
    mean_absolute_error,
    mean_squared_error,
    precision_score,
    r2_score,
)

from sklearn_noisy.metrics import (
    expected_accuracy_score,
    expected_brier_score_loss,
    expected_log_loss,
    expected_mean_absolute_error,
    expected_mean_squared_error,
    expected_paired_difference,
)
from sklearn_noisy.metrics._paired import _monte_carlo_difference
from sklearn_noisy.metrics._registry import get_metric_info
from sklearn_noisy.utils._arrays import CHUNK_SIZE


@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(3)
    n = 50
    y = rng.normal(size=n)
    a = y + rng.normal(scale=0.5, size=n)
    b = y + rng.normal(scale=0.7, size=n)
    b[:5] = a[:5]
    sigma = rng.uniform(0.1, 1.0, n)
    sigma[5:8] = 0.0
    weight = rng.uniform(0.0, 3.0, n)
    weight[8] = 0.0
    return y, a, b, sigma, weight


@pytest.fixture(scope="module")
def classification():
    rng = np.random.default_rng(4)
    n = 60
    y = rng.integers(0, 2, n)
    a = np.where(rng.random(n) < 0.8, y, 1 - y)
    b = np.where(rng.random(n) < 0.3, 1 - a, a)
    q = rng.uniform(0.0, 0.3, n)
    weight = rng.uniform(0.0, 2.0, n)
    return y, a, b, q, weight


def _within_monte_carlo(exact, mc):
    assert abs(exact.expected - mc.expected) < 5 * mc.standard_error
    assert abs(exact.variance - mc.variance) < 5 * mc.variance_standard_error


@pytest.mark.parametrize(
    "metric, single, sklearn_metric",
    [
        ("mean_squared_error", expected_mean_squared_error, mean_squared_error),
        ("mean_absolute_error", expected_mean_absolute_error, mean_absolute_error),
    ],
)
def test_weighted_regression_differences(regression, metric, single, sklearn_metric):
    y, a, b, sigma, weight = regression
    d = expected_paired_difference(
        y, a, b, metric=metric, sigma=sigma, sample_weight=weight, estimand="forward"
    )
    assert d.method == "exact"
    singles = [
        single(y, p, sigma=sigma, sample_weight=weight, estimand="forward")
        for p in (a, b)
    ]
    assert d.expected == pytest.approx(
        singles[0].expected - singles[1].expected, rel=1e-12
    )
    reference = sklearn_metric(y, a, sample_weight=weight) - sklearn_metric(
        y, b, sample_weight=weight
    )
    assert d.nominal == pytest.approx(reference, rel=1e-12)
    if metric == "mean_squared_error":  # 4 Σ w² σ² (a − b)² / W²
        closed = 4 * np.sum(weight**2 * sigma**2 * (a - b) ** 2) / weight.sum() ** 2
        assert d.variance == pytest.approx(closed, rel=1e-13)
    mc = _monte_carlo_difference(
        get_metric_info(metric),
        {},
        y,
        a,
        b,
        sigma=sigma,
        q=None,
        transition_matrix=None,
        labels=None,
        classes=None,
        n_draws=4000,
        random_state=5,
        sample_weight=weight,
    )
    _within_monte_carlo(d, mc)


def test_weighted_accuracy_and_precision(classification):
    y, a, b, q, weight = classification
    d = expected_paired_difference(
        y, a, b, metric="accuracy", q=q, sample_weight=weight, estimand="forward"
    )
    singles = [
        expected_accuracy_score(y, p, q=q, sample_weight=weight, estimand="forward")
        for p in (a, b)
    ]
    assert d.expected == pytest.approx(
        singles[0].expected - singles[1].expected, abs=1e-15
    )
    assert d.nominal == pytest.approx(
        accuracy_score(y, a, sample_weight=weight)
        - accuracy_score(y, b, sample_weight=weight),
        abs=1e-15,
    )
    differ = a != b  # binary: 4 q(1−q) w² per disagreement, over W²
    closed = np.sum(4 * q * (1 - q) * weight**2 * differ) / weight.sum() ** 2
    assert d.variance == pytest.approx(closed, rel=1e-13)

    p = expected_paired_difference(
        y, a, b, metric="precision", q=q, sample_weight=weight, estimand="forward"
    )
    assert p.method == "exact"
    assert p.nominal == pytest.approx(
        precision_score(y, a, sample_weight=weight)
        - precision_score(y, b, sample_weight=weight),
        abs=1e-14,
    )
    rng = np.random.default_rng(6)
    flips = rng.random((40_000, y.size)) < q
    Y = np.where(flips, 1 - y, y)
    draws = (Y * (weight * (a == 1))).sum(1) / (weight * (a == 1)).sum() - (
        Y * (weight * (b == 1))
    ).sum(1) / (weight * (b == 1)).sum()
    se = draws.std(ddof=1) / math.sqrt(draws.size)
    assert abs(p.expected - draws.mean()) < 5 * se
    m4 = np.mean((draws - draws.mean()) ** 4)
    var = draws.var(ddof=1)
    assert abs(p.variance - var) < 5 * math.sqrt((m4 - var**2) / draws.size)


@pytest.mark.parametrize("metric", ["brier_score_loss", "log_loss"])
def test_weighted_probabilistic_differences(classification, metric):
    y, _, _, q, weight = classification
    rng = np.random.default_rng(7)
    proba_a = np.clip(0.7 * y + 0.15 + 0.1 * rng.normal(size=y.size), 0.01, 0.99)
    proba_b = np.clip(0.5 * y + 0.25 + 0.1 * rng.normal(size=y.size), 0.01, 0.99)
    d = expected_paired_difference(
        y,
        proba_a,
        proba_b,
        metric=metric,
        q=q,
        sample_weight=weight,
        estimand="forward",
    )
    single = expected_brier_score_loss if metric == "brier_score_loss" else None
    sklearn_metric = brier_score_loss if single else log_loss
    single = single or expected_log_loss
    singles = [
        single(y, p, q=q, sample_weight=weight, estimand="forward")
        for p in (proba_a, proba_b)
    ]
    assert d.expected == pytest.approx(
        singles[0].expected - singles[1].expected, abs=1e-13
    )
    assert d.nominal == pytest.approx(
        sklearn_metric(y, proba_a, sample_weight=weight)
        - sklearn_metric(y, proba_b, sample_weight=weight),
        abs=1e-13,
    )
    mc = _monte_carlo_difference(
        get_metric_info(metric),
        {},
        y,
        proba_a,
        proba_b,
        sigma=None,
        q=q,
        transition_matrix=None,
        labels=np.arange(2),
        classes=np.arange(2),
        n_draws=3000,
        random_state=8,
        sample_weight=weight,
    )
    _within_monte_carlo(d, mc)


def test_weighted_truth_and_monte_carlo_paths(regression, classification):
    y, a, b, sigma, weight = regression
    truth = expected_paired_difference(
        y, a, b, metric="mean_squared_error", sigma=sigma, sample_weight=weight,
        estimand="truth",
    )  # fmt: skip
    assert truth.expected == pytest.approx(
        mean_squared_error(y, a, sample_weight=weight)
        - mean_squared_error(y, b, sample_weight=weight),
        rel=1e-12,
    )
    # R² goes through the joint Monte Carlo, which now takes the weights: the
    # nominal is scikit-learn's weighted R² difference
    d = expected_paired_difference(
        y,
        a,
        b,
        metric="r2",
        sigma=sigma,
        sample_weight=weight,
        n_draws=50,
        estimand="forward",
    )
    assert d.method == "monte_carlo"
    assert d.nominal == pytest.approx(
        r2_score(y, a, sample_weight=weight) - r2_score(y, b, sample_weight=weight),
        rel=1e-12,
    )
    c, ca, cb, q, cw = classification
    t = expected_paired_difference(
        c, ca, cb, metric="accuracy", q=q, sample_weight=cw, estimand="truth"
    )
    differ = ca != cb  # binary q: exact 4q(1−q)/(1−2q)² per disagreement
    closed = np.sum(cw**2 * differ * 4 * q * (1 - q) / (1 - 2 * q) ** 2) / cw.sum() ** 2
    assert t.variance == pytest.approx(closed, rel=1e-12)


def test_sample_weight_is_checked(regression):
    y, a, b, sigma, _ = regression
    with pytest.raises(ValueError, match="sample_weight"):
        expected_paired_difference(
            y,
            a,
            b,
            metric="mean_squared_error",
            sigma=sigma,
            sample_weight=[1.0],
            estimand="forward",
        )
    with pytest.raises(ValueError, match="non-negative"):
        expected_paired_difference(
            y, a, b, metric="mean_squared_error", sigma=sigma,
            sample_weight=-np.ones(y.size), estimand="forward",
        )  # fmt: skip


def test_continuous_labels_rejected_for_accuracy():
    # scikit-learn: ValueError "continuous is not supported"
    with pytest.raises(ValueError):
        accuracy_score([0.5, 1.2, 2.0], [0.5, 1.2, 2.0])
    for metric in ("accuracy", "precision", "f1"):
        with pytest.raises(ValueError, match="continuous"):
            expected_paired_difference(
                [0.5, 1.2, 2.0],
                [0.5, 1.2, 2.0],
                [0.5, 1.0, 2.0],
                metric=metric,
                q=0.1,
                estimand="forward",
            )
    # integral floats are class labels, as in scikit-learn
    d = expected_paired_difference(
        [0.0, 1.0, 1.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0],
        metric="accuracy",
        q=0.0,
        estimand="forward",
    )
    assert d.expected == pytest.approx(1 / 3, abs=1e-15)


@pytest.mark.parametrize(
    "metric, noise, good, bad",
    [
        ("mean_squared_error", {"sigma": 1.0}, [1.0, 2.0], [1.0, np.nan]),
        ("mean_absolute_error", {"sigma": 1.0}, [1.0, 2.0], [np.inf, 1.0]),
        ("accuracy", {"q": 0.1}, [0.0, 1.0], [1.0, np.nan]),
        ("precision", {"q": 0.1}, [0.0, 1.0], [1.0, np.nan]),
        ("log_loss", {"q": 0.1}, [0.2, 0.7], [0.3, np.nan]),
    ],
)
def test_nan_is_named_after_the_argument(metric, noise, good, bad):
    y = [0.0, 1.0] if "q" in noise else [1.0, 2.0]
    with pytest.raises(ValueError, match="y_pred_b must be finite"):
        expected_paired_difference(
            y, good, bad, metric=metric, **{"estimand": "forward", **noise}
        )
    with pytest.raises(ValueError, match="y_pred_a must be finite"):
        expected_paired_difference(
            y, bad, good, metric=metric, **{"estimand": "forward", **noise}
        )
    with pytest.raises(ValueError, match="y_true and y_pred_b must have the same"):
        expected_paired_difference(
            y, good, good[:1], metric=metric, **{"estimand": "forward", **noise}
        )


def test_label_outside_labels_names_the_argument():
    with pytest.raises(ValueError, match="y_pred_b contains labels"):
        expected_paired_difference(
            [0, 1, 2],
            [0, 1, 2],
            [0, 1, 5],
            metric="accuracy",
            q=0.1,
            labels=[0, 1, 2],
            estimand="forward",
        )


def test_chunked_kernels_match_the_unchunked_formulas():
    # Two and a bit chunks, with per-sample noise and weights.
    n = 2 * CHUNK_SIZE + 123
    rng = np.random.default_rng(9)
    y = rng.normal(size=n)
    a = y + 0.5 * rng.normal(size=n)
    b = y + 0.6 * rng.normal(size=n)
    sigma = rng.uniform(0.0, 1.0, n)
    weight = rng.uniform(0.5, 1.5, n)
    d = expected_paired_difference(
        y,
        a,
        b,
        metric="mean_squared_error",
        sigma=sigma,
        sample_weight=weight,
        estimand="forward",
    )
    W = weight.sum()
    assert d.expected == pytest.approx(
        np.sum(weight * ((y - a) ** 2 - (y - b) ** 2)) / W, rel=1e-11
    )
    assert d.variance == pytest.approx(
        4 * np.sum(weight**2 * sigma**2 * (a - b) ** 2) / W**2, rel=1e-12
    )
    mae = expected_paired_difference(
        y, a, b, metric="mean_absolute_error", sigma=sigma, estimand="forward"
    )
    singles = [
        expected_mean_absolute_error(y, p, sigma=sigma, estimand="forward")
        for p in (a, b)
    ]
    assert mae.expected == pytest.approx(
        singles[0].expected - singles[1].expected, rel=1e-10
    )
    c = rng.integers(0, 3, n)
    ca = np.where(rng.random(n) < 0.7, c, rng.integers(0, 3, n))
    cb = np.where(rng.random(n) < 0.7, c, rng.integers(0, 3, n))
    q = rng.uniform(0.0, 0.4, n)
    acc = expected_paired_difference(
        c, ca, cb, metric="accuracy", q=q, estimand="forward"
    )
    p_a = np.where(ca == c, 1 - q, q / 2)
    p_b = np.where(cb == c, 1 - q, q / 2)
    differ = ca != cb
    assert acc.expected == pytest.approx(np.sum((p_a - p_b) * differ) / n, abs=1e-15)
    per = p_a * (1 - p_a) + p_b * (1 - p_b) + 2 * p_a * p_b
    assert acc.variance == pytest.approx(np.sum(per * differ) / n**2, rel=1e-12)
    assert acc.nominal == (np.sum(ca == c) - np.sum(cb == c)) / n
    # strings take the chunked sorted path: the same numbers
    names = np.array(["x", "y", "z"])
    same = expected_paired_difference(
        names[c], names[ca], names[cb], metric="accuracy", q=q, estimand="forward"
    )
    assert (same.expected, same.variance, same.nominal) == (
        acc.expected,
        acc.variance,
        acc.nominal,
    )


def test_singular_flip_found_in_a_later_chunk():
    # check_invertible now scans q chunk by chunk; the index is global
    n = CHUNK_SIZE + 500
    q = np.full(n, 0.1)
    q[CHUNK_SIZE + 7] = 0.5
    c = np.arange(n) % 2
    with pytest.raises(ValueError, match=f"first at index {CHUNK_SIZE + 7}"):
        expected_paired_difference(
            c, c, 1 - c, metric="accuracy", q=q, estimand="truth"
        )


def test_chunked_probabilistic_precision_and_truth_kernels():
    n = CHUNK_SIZE + 321
    rng = np.random.default_rng(10)
    c = rng.integers(0, 2, n)
    ca = np.where(rng.random(n) < 0.8, c, 1 - c)
    cb = np.where(rng.random(n) < 0.7, c, 1 - c)
    q = rng.uniform(0.0, 0.3, n)
    proba_a = np.clip(0.6 * c + 0.2 + 0.1 * rng.normal(size=n), 0.01, 0.99)
    proba_b = np.clip(0.5 * c + 0.25 + 0.1 * rng.normal(size=n), 0.01, 0.99)
    for metric, single in (
        ("brier_score_loss", expected_brier_score_loss),
        ("log_loss", expected_log_loss),
    ):
        d = expected_paired_difference(
            c, proba_a, proba_b, metric=metric, q=q, estimand="forward"
        )
        scores = [single(c, p, q=q, estimand="forward") for p in (proba_a, proba_b)]
        assert d.expected == pytest.approx(
            scores[0].expected - scores[1].expected, abs=1e-13
        )
        assert d.nominal == pytest.approx(
            scores[0].nominal - scores[1].nominal, abs=1e-13
        )
    p = expected_paired_difference(
        c, ca, cb, metric="precision", q=q, estimand="forward"
    )
    pi = np.where(c == 1, 1 - q, q)
    coef = (ca == 1) / np.sum(ca == 1) - (cb == 1) / np.sum(cb == 1)
    assert p.expected == pytest.approx(coef @ pi, abs=1e-14)
    assert p.variance == pytest.approx((coef**2) @ (pi * (1 - pi)), rel=1e-12)
    t = expected_paired_difference(c, ca, cb, metric="accuracy", q=q, estimand="truth")
    differ = ca != cb
    assert t.variance == pytest.approx(
        np.sum(differ * 4 * q * (1 - q) / (1 - 2 * q) ** 2) / n**2, rel=1e-12
    )
    hit = lambda p: np.where(c == p, 1 - q, -q) / (1 - 2 * q)  # noqa: E731
    assert t.expected == pytest.approx(np.sum(hit(ca) - hit(cb)) / n, abs=1e-14)
