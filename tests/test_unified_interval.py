"""Feldman and Cousins's unified interval: the paper's table, coverage, limits."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import norm

from sklearn_noisy.utils._unified_interval import unified_interval

# Feldman and Cousins (1998), Table X: 90 % intervals for the mean of a unit
# Gaussian known to be non-negative, by the measured x0.
TABLE_X = [
    (-3.0, 0.00, 0.26),
    (-2.0, 0.00, 0.40),
    (-1.0, 0.00, 0.81),
    (0.0, 0.00, 1.64),
    (0.5, 0.00, 2.14),
    (1.0, 0.00, 2.64),
    (1.5, 0.22, 3.14),
    (2.0, 0.58, 3.64),
    (3.0, 1.37, 4.64),
    (4.0, 2.36, 5.64),
]


@pytest.mark.parametrize("x0, low, high", TABLE_X)
def test_paper_table(x0, low, high):
    got = unified_interval(x0, 1.0, lower=0.0, confidence=0.90)
    assert got == pytest.approx((low, high), abs=0.005)


def _belt_by_enumeration(mu_grid, x_grid, confidence):
    """Acceptance sets built as the paper does: rank x by the likelihood ratio."""
    dx = x_grid[1] - x_grid[0]
    best = np.maximum(x_grid, 0.0)
    accepted = np.zeros((mu_grid.size, x_grid.size), dtype=bool)
    for i, mu in enumerate(mu_grid):
        density = norm.pdf(x_grid, mu)
        ratio = density / norm.pdf(x_grid, best)
        order = np.argsort(-ratio, kind="stable")
        mass = np.cumsum(density[order] * dx)
        accepted[i, order[: np.searchsorted(mass, confidence) + 1]] = True
    return accepted


def test_matches_the_belt_built_by_enumeration():
    mu_grid = np.linspace(0.0, 5.0, 501)
    x_grid = np.linspace(-8.0, 10.0, 18001)
    accepted = _belt_by_enumeration(mu_grid, x_grid, 0.95)
    for x0 in (-2.5, -1.0, 0.0, 1.0, 2.0, 3.0):
        column = accepted[:, np.searchsorted(x_grid, x0)]
        low, high = unified_interval(x0, 1.0, lower=0.0)
        assert low == pytest.approx(mu_grid[column].min(), abs=0.02)
        assert high == pytest.approx(mu_grid[column].max(), abs=0.02)


@pytest.mark.parametrize("mu", [0.0, 0.3, 1.0, 2.5, 6.0])
def test_coverage_at_and_near_the_bound(mu):
    rng = np.random.default_rng(0)
    n = 4000
    covered = 0
    for x in rng.normal(mu, 1.0, n):
        low, high = unified_interval(float(x), 1.0, lower=0.0)
        covered += low <= mu <= high
    se = math.sqrt(0.95 * 0.05 / n)
    # Coverage is 95 % by construction for every mu (at least, on the belt's edges).
    assert covered / n > 0.95 - 5 * se
    assert covered / n < 0.95 + 5 * se + 0.01


def test_upper_bound_mirrors_lower_bound():
    low, high = unified_interval(1.02, 0.01, upper=1.0)
    mlow, mhigh = unified_interval(-0.02, 0.01, lower=0.0)
    assert (low, high) == pytest.approx((1.0 - mhigh, 1.0 - mlow), abs=1e-12)
    assert high == 1.0


def test_far_from_bounds_is_the_normal_interval():
    z = norm.ppf(0.975)
    assert unified_interval(10.0, 1.0, lower=0.0) == pytest.approx(
        (10.0 - z, 10.0 + z), abs=1e-12
    )
    expected = (0.5 - 0.01 * z, 0.5 + 0.01 * z)
    assert unified_interval(0.5, 0.01) == pytest.approx(expected)


def test_degenerate_inputs():
    assert unified_interval(-1.0, 0.0, lower=0.0) == (0.0, 0.0)
    assert all(math.isnan(v) for v in unified_interval(math.nan, 1.0, lower=0.0))


@given(
    x=st.floats(-50, 50),
    sd=st.floats(1e-3, 10),
    confidence=st.sampled_from([0.68, 0.9, 0.95, 0.99]),
)
def test_interval_is_inside_the_range_and_ordered(x, sd, confidence):
    low, high = unified_interval(x, sd, lower=0.0, upper=100.0, confidence=confidence)
    assert 0.0 <= low <= high <= 100.0
    # An upper limit (lower end at the bound) exactly when the estimate is low.
    if x <= norm.ppf(confidence) * sd:
        assert low == 0.0
