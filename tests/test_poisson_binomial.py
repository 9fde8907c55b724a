"""Poisson-binomial PMF (FORMULAS.md §8): divide-and-conquer FFT vs exact references."""

import numpy as np
import pytest
from scipy.stats import binom

from sklearn_noisy.metrics._engines.counts import poisson_binomial as pb
from sklearn_noisy.metrics._engines.counts.poisson_binomial import (
    poisson_binomial_window,
)


def poisson_binomial_pmf(p):
    """``pmf[k] = P(X = k)`` for ``k = 0..n``: the window of every count."""
    p = np.asarray(p, dtype=np.float64).ravel()
    offset, window = poisson_binomial_window(p)
    pmf = np.zeros(p.size + 1)
    pmf[offset : offset + window.size] = window
    return pmf


def dp_pmf(p):
    """The O(n²) recurrence, in extended precision where the platform has it.

    In float64 the recurrence itself accumulates up to ~1e-15 of round-off over
    3000 trials with p near 0.9; the 80-bit long double keeps it below 1e-17.
    """
    pmf = np.zeros(len(p) + 1, dtype=np.longdouble)
    pmf[0] = 1.0
    for j, x in enumerate(np.asarray(p, dtype=np.longdouble)):
        pmf[1 : j + 2] = pmf[1 : j + 2] * (1 - x) + pmf[: j + 1] * x
        pmf[0] *= 1 - x
    return pmf.astype(np.float64)


@pytest.mark.parametrize("n", [1, 2, 15, 16, 17, 33, 100, 257, 1000, 3000])
def test_matches_dynamic_programming(n):
    rng = np.random.default_rng(n)
    p = rng.uniform(0.0, 1.0, n)
    got = poisson_binomial_pmf(p)
    expected = dp_pmf(p)
    assert got.shape == (n + 1,)
    assert np.abs(got - expected).max() < 1e-15
    assert got.min() >= 0.0
    assert got.sum() == pytest.approx(1.0, abs=1e-14)


@pytest.mark.parametrize("n", [500, 3000])
def test_small_probabilities_and_certain_trials(n):
    # Small q (narrow windows, trimming active) mixed with exact labels.
    rng = np.random.default_rng(7)
    p = rng.uniform(0.0, 0.05, n)
    p[rng.random(n) < 0.2] = 0.0
    p[rng.random(n) < 0.1] = 1.0
    p[rng.random(n) < 0.1] = rng.uniform(0.95, 1.0)
    got = poisson_binomial_pmf(p)
    assert np.abs(got - dp_pmf(p)).max() < 1e-15


@pytest.mark.parametrize("n, prob", [(1, 0.3), (50, 0.2), (500, 0.05), (5000, 0.4)])
def test_identical_trials_are_binomial(n, prob):
    expected = binom.pmf(np.arange(n + 1), n, prob)
    assert np.abs(poisson_binomial_pmf(np.full(n, prob)) - expected).max() < 1e-15
    # The FFT product tree itself (the binomial shortcut bypassed).
    offset, window = pb._product_tree(np.full(n, prob))
    got = np.zeros(n + 1)
    got[offset : offset + window.size] = window / window.sum()
    assert np.abs(got - expected).max() < 1e-15


def test_degenerate_inputs():
    assert poisson_binomial_pmf([]).tolist() == [1.0]
    assert poisson_binomial_pmf([0.0, 0.0]).tolist() == [1.0, 0.0, 0.0]
    assert poisson_binomial_pmf([1.0, 1.0, 0.0]).tolist() == [0.0, 0.0, 1.0, 0.0]
    offset, window = poisson_binomial_window(np.array([1.0, 0.0, 1.0]))
    assert (offset, window.tolist()) == (2, [1.0])


@pytest.mark.parametrize("n", [20_000, 200_000])
def test_large_n_moments_and_window(n):
    # Far beyond the DP: the window holds all the mass, the moments are exact.
    rng = np.random.default_rng(n)
    p = rng.uniform(0.0, 0.3, n)
    offset, window = poisson_binomial_window(p)
    assert window.min() >= 0.0
    assert window.sum() == pytest.approx(1.0, abs=1e-13)
    k = offset + np.arange(window.size)
    mean = window @ k
    var = window @ (k - mean) ** 2
    assert mean == pytest.approx(p.sum(), rel=1e-12)
    assert var == pytest.approx((p * (1 - p)).sum(), rel=1e-10)
    # The window is much narrower than n but wide enough: ≥ 10 sd each side.
    sd = np.sqrt((p * (1 - p)).sum())
    assert window.size < n / 5
    assert offset < p.sum() - 10 * sd and offset + window.size > p.sum() + 10 * sd
    # Its edges hold only FFT round-off (the true tails there are < 1e-60).
    assert max(window[0], window[-1]) < 1e-15 * window.max()


@pytest.mark.parametrize("values", [[0.1, 0.9], [0.05, 0.3, 0.5, 0.97]])
def test_few_distinct_probabilities(values):
    # A constant flip probability gives two distinct success probabilities:
    # handled as a product of binomials, checked against the recurrence.
    rng = np.random.default_rng(len(values))
    p = rng.choice(values, 3000)
    assert pb.few_distinct(p) is not None
    assert np.abs(poisson_binomial_pmf(p) - dp_pmf(p)).max() < 1e-15
    # Many distinct values take the product tree.
    assert pb.few_distinct(rng.uniform(0, 1, 3000)) is None
