"""Existence of the moments of a paired R² difference (issue 16).

``R²_A − R²_B = L(y)/Y`` with ``L`` affine in the labels and ``Y`` the shared
total sum of squares (``_paired_existence``). Before, M = 2 returned a seed-
dependent Monte Carlo mean (7030 or 25039) and 5 noisy labels a finite
variance; both moments do not exist there.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from sklearn_noisy.metrics import expected_paired_difference, expected_r2_score
from sklearn_noisy.metrics._engines.paired import r2_difference_existence


def _difference(y, a, b, sigma, **kwargs):
    with pytest.warns(UserWarning, match="R² difference does not exist") as caught:
        d = expected_paired_difference(y, a, b, metric="r2", sigma=sigma, **kwargs)
    return d, str(caught[0].message)


def _existence(y, a, b, sigma, weight=None):
    col = [np.asarray(v, dtype=float)[:, None] for v in (y, a, b)]
    s = np.asarray(sigma, dtype=float)
    s = s[:, None] if s.ndim else float(s)
    return r2_difference_existence(*col, s, weight)


def test_two_noisy_labels_have_no_mean_whatever_the_seed():
    y, a, b = [1.0, 2.0], [1.1, 2.2], [0.9, 2.4]
    results = []
    for seed in (0, 1):
        d, message = _difference(y, a, b, 1.0, random_state=seed)
        results.append(d)
        assert "expected value" in message and "r = 1" in message
    # all labels noisy, Σ(a − b) ≠ 0: L(c) changes sign along y = c: undefined
    assert math.isnan(results[0].expected) and math.isnan(results[1].expected)
    assert results[0].variance == math.inf
    assert results[0].nominal == pytest.approx(
        (1 - 0.05 / 0.5) - (1 - 0.17 / 0.5), rel=1e-12
    )


def test_five_noisy_labels_have_a_mean_but_no_variance():
    rng = np.random.default_rng(0)
    y = rng.normal(size=5)
    a = y + 0.3 * rng.normal(size=5)
    b = y + 0.5 * rng.normal(size=5)
    d, message = _difference(y, a, b, 1.0)
    assert "variance" in message and "r = 4" in message and "r > 4" in message
    assert d.variance == math.inf and d.method == "exact"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        single = [
            expected_r2_score(y, p, sigma=1.0, estimand="forward") for p in (a, b)
        ]
    assert d.expected == single[0].expected - single[1].expected
    assert math.isfinite(d.expected)
    # six noisy labels: r = 5, both moments exist, the joint Monte Carlo as before
    y6, a6, b6 = (np.append(v, v[0] + 1.0) for v in (y, a, b))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d6 = expected_paired_difference(
            y6, a6, b6, metric="r2", sigma=1.0, estimand="forward"
        )
    assert d6.method == "monte_carlo" and math.isfinite(d6.variance)


def test_one_exact_label_gives_an_infinite_mean_of_the_sign_of_l_at_v():
    # exact label v = 0; at y = (0, 0, 0): SSE_B − SSE_A = (1 + 4 + 9) − (0 + 1 + 4)
    y, a = [0.0, 1.0, 2.0], [0.0, 1.0, 2.0]
    b = [1.0, 2.0, 3.0]
    d, message = _difference(y, a, b, [0.0, 1.0, 1.0])
    assert d.expected == math.inf and d.variance == math.inf
    assert "r = 2" in message
    d, _ = _difference(y, b, a, [0.0, 1.0, 1.0])
    assert d.expected == -math.inf
    # two exact labels with distinct values: every moment exists
    e = _existence([0.0, 1.0, 2.0], a, b, [0.0, 0.0, 1.0])
    assert e.mean_exists and e.variance_exists


def test_all_noisy_with_equal_sums_of_a_and_b():
    # Σ(a − b) = 0, Σ(a² − b²) = 2 ≠ 0: L(c) = −2 on the whole line: −inf
    d, _ = _difference([0.0, 1.0], [0.0, 2.0], [1.0, 1.0], 0.5)
    assert d.expected == -math.inf
    # L = 0 on the line y = c (b a permutation of a): |L| ~ ρ, order k exists iff
    # r > k; M = 3 gives r = 2: the mean exists, the variance does not
    e = _existence([0.0, 1.0, 3.0], [1.0, 2.0, 3.0], [2.0, 1.0, 3.0], 1.0)
    assert e.mean_exists and not e.variance_exists
    e = _existence([0.0, 1.0], [1.0, 2.0], [2.0, 1.0], 1.0)
    assert not e.mean_exists and math.isnan(e.expected)


def test_linear_vanishing_at_the_exact_value():
    # exact v = 0, a = 1 and b = −1 everywhere: L(v) = 0 but L moves with the
    # noisy labels, so with r = 2 the mean exists and the variance does not.
    y, a, b = [0.0, 0.5, -0.3], [1.0, 1.0, 1.0], [-1.0, -1.0, -1.0]
    d, message = _difference(y, a, b, [0.0, 1.0, 1.0], n_draws=400)
    assert "variance" in message and "vanishes there only linearly" in message
    # each single R² has no mean here, so the joint Monte Carlo mean is reported,
    # with an infinite variance and standard error
    assert d.method == "monte_carlo" and math.isfinite(d.expected)
    assert d.variance == math.inf and d.standard_error == math.inf
    # b = a on the noisy labels: the difference is 0 on every draw
    e = _existence(y, a, [-1.0, 1.0, 1.0], [0.0, 1.0, 1.0])
    assert e.mean_exists and e.variance_exists


def test_the_zero_tests_are_exact():
    # b is a permutation of a: Σ(a − b) and Σ(a² − b²) are exactly 0 although
    # their float sums need not be; the rule is then r > k (mean exists at r = 2)
    a = np.array([0.1, 0.7, 0.3])
    b = a[[2, 0, 1]]
    assert _existence([0.0, 1.0, 2.0], a, b, 1.0).mean_exists
    # a sum that is not exactly 0, however small, keeps the r > 2k rule
    b2 = b.copy()
    b2[0] = np.nextafter(b2[0], 1.0)
    assert not _existence([0.0, 1.0, 2.0], a, b2, 1.0).mean_exists


def test_weights_and_outputs():
    # a zero weight takes a label out of both R²: 3 positive, all noisy: r = 2
    y, a, b = [0.0, 1.0, 2.0, 5.0], [0.1, 1.2, 1.8, 0.0], [0.3, 0.8, 2.5, 9.0]
    e = _existence(y, a, b, [1.0, 1.0, 1.0, 1.0], np.array([1.0, 1.0, 1.0, 0.0]))
    assert not e.variance_exists and e.mean_exists is False
    e = _existence(y, a, b, [1.0, 1.0, 1.0, 1.0], np.ones(4))  # r = 3
    assert e.mean_exists and not e.variance_exists
    # two outputs: the one with too few noisy labels decides, and is named
    Y = np.column_stack([y, y])
    A = np.column_stack([a, a])
    B = np.column_stack([b, b])
    S = np.array([[0.0, 1.0], [0.0, 1.0], [1.0, 1.0], [1.0, 1.0]])
    with pytest.warns(UserWarning, match=r"variance .* does not exist \(output 1\)"):
        d = expected_paired_difference(
            Y, A, B, metric="r2", sigma=S, estimand="forward"
        )
    # output 0 has two distinct exact labels; output 1 is all noisy with r = 3
    assert d.variance == math.inf and math.isfinite(d.expected)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        single = [
            expected_r2_score(Y, P, sigma=S, estimand="forward").expected
            for P in (A, B)
        ]
    assert d.expected == single[0] - single[1]
