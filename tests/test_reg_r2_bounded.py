"""R²'s existence rules recognise bounded ratios (issue 16).

When every exact label (``sigma = 0``) has the same value ``v`` and every
prediction equals ``v``, both sums of squares are quadratic forms in
``y - v`` without linear terms and the total sum of squares is positive
definite on the noisy labels: ``X/Y`` is bounded and every moment of R²
exists, whatever the number of noisy labels. R² then depends only on the
direction of ``y - v``, which gives an independent exact reference: an
integral over the circle or sphere of directions, with the Gaussian's radial
integral in closed form.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import integrate

from sklearn_noisy.metrics import expected_r2_score


def _r2_of_noise(y, y_pred, sigma, z):
    """R² for the noise draws ``z`` (rows), as scikit-learn computes it."""
    labels = np.asarray(y, float) + np.asarray(z) * np.asarray(sigma, float)
    sse = ((labels - np.asarray(y_pred, float)) ** 2).sum(axis=-1)
    sst = ((labels - labels.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1)
    return 1.0 - sse / sst


def _radial_weight(direction, mean, sd):
    """``∫₀^∞ p(r u) r^{n-1} dr`` for the Gaussian ``N(mean, diag(sd²))``.

    With ``a = uᵀΣ⁻¹u``, ``b = uᵀΣ⁻¹μ``, ``c = μᵀΣ⁻¹μ`` and ``t = b/√a`` the
    integral is ``(2π)^{-n/2} |Σ|^{-1/2} e^{-(c - t²)/2} a^{-n/2} J_{n-1}(t)``
    with ``J_k(t) = ∫₀^∞ x^k e^{-(x-t)²/2} dx``: ``J_0 = √(2π) Φ(t)``,
    ``J_1 = e^{-t²/2} + t J_0``, ``J_2 = t J_1 + J_0``.
    """
    n = direction.size
    precision = 1.0 / sd**2
    a = float(np.sum(direction * direction * precision))
    b = float(np.sum(direction * mean * precision))
    c = float(np.sum(mean * mean * precision))
    t = b / math.sqrt(a)
    j0 = math.sqrt(2 * math.pi) * 0.5 * math.erfc(-t / math.sqrt(2))
    j1 = math.exp(-0.5 * t * t) + t * j0
    j = (j0, j1, t * j1 + j0)[n - 1]
    log_front = -0.5 * n * math.log(2 * math.pi) - float(np.sum(np.log(sd)))
    return math.exp(log_front - 0.5 * (c - t * t)) * a ** (-0.5 * n) * j


def _direction_moments(y, y_pred, sigma, noisy):
    """Exact E and Var of R² where X/Y is homogeneous of degree 0 in ``e = y - v``.

    The noisy ``e`` is Gaussian, ``N(y_true - v, diag(σ²))``; R² depends on its
    direction only, so its moments are integrals over the unit circle (two
    noisy labels) or sphere (three) of R² times the radial weight.
    """
    y = np.asarray(y, float)
    sigma = np.asarray(sigma, float)
    v = float(np.asarray(y_pred)[0])
    mean, sd = y[noisy] - v, sigma[noisy]

    def r2_and_weight(direction):
        labels = np.full(y.size, v)
        labels[noisy] = v + direction
        sse = float(np.sum((labels - np.asarray(y_pred, float)) ** 2))
        sst = float(np.sum((labels - labels.mean()) ** 2))
        return 1.0 - sse / sst, _radial_weight(direction, mean, sd)

    if len(noisy) == 2:

        def average(power, centre):
            def integrand(theta):
                direction = np.array([math.cos(theta), math.sin(theta)])
                value, weight = r2_and_weight(direction)
                return (value - centre) ** power * weight

            return integrate.quad(
                integrand, 0.0, 2 * math.pi, epsabs=0.0, epsrel=1e-13, limit=400
            )[0]

    else:

        def average(power, centre):
            def integrand(phi, theta):
                direction = np.array(
                    [
                        math.sin(theta) * math.cos(phi),
                        math.sin(theta) * math.sin(phi),
                        math.cos(theta),
                    ]
                )
                value, weight = r2_and_weight(direction)
                return (value - centre) ** power * weight * math.sin(theta)

            return integrate.dblquad(
                integrand, 0.0, math.pi, 0.0, 2 * math.pi, epsabs=0.0, epsrel=1e-10
            )[0]

    total = average(0, 0.0)  # 1 up to the quadrature error
    expected = average(1, 0.0) / total
    return expected, average(2, expected) / total


def _score(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # bounded: no existence warning
        return expected_r2_score(*args, **{"estimand": "forward", **kwargs})


def test_issue_example_three_samples_matches_exact_circle_quadrature():
    # Before: E = -inf, V = inf and a warning that the mean does not exist.
    y, y_pred, sigma = [1.0, 3.0, 5.0], [1.0, 1.0, 1.0], [0.0, 0.5, 0.7]
    score = _score(y, y_pred, sigma=sigma)
    mean, variance = _direction_moments(y, y_pred, sigma, [1, 2])
    assert score.method == "exact"
    assert score.expected == pytest.approx(mean, rel=1e-12)
    assert score.variance == pytest.approx(variance, rel=1e-10)
    assert round(score.expected, 5) == -1.49234
    assert round(score.variance, 5) == 0.07594


def test_issue_example_four_samples_matches_exact_sphere_quadrature():
    # Before: E right (rank 3 > 2) but V = inf.
    y, y_pred, sigma = [1.0, 3.0, 5.0, 0.0], [1.0] * 4, [0.0, 0.5, 0.7, 1.0]
    score = _score(y, y_pred, sigma=sigma)
    mean, variance = _direction_moments(y, y_pred, sigma, [1, 2, 3])
    assert score.expected == pytest.approx(mean, rel=1e-9)
    assert score.variance == pytest.approx(variance, rel=1e-8)
    assert round(score.expected, 6) == -0.498358
    assert round(score.variance, 4) == 0.1228


@pytest.mark.parametrize(
    "y, y_pred, sigma",
    [
        ([1.0, 3.0, 5.0], [1.0] * 3, [0.0, 0.5, 0.7]),
        ([2.0, 3.0, 5.0, 0.0, 2.0], [2.0] * 5, [0.0, 0.5, 0.7, 1.0, 0.0]),
        ([-1.0, 4.0, 0.5, 2.0], [-1.0] * 4, [0.0, 2.0, 0.1, 0.3]),
    ],
)
def test_bounded_ratio_monte_carlo(y, y_pred, sigma):
    n_draws = 200_000
    rng = np.random.default_rng(16)
    draws = _r2_of_noise(y, y_pred, sigma, rng.standard_normal((n_draws, len(y))))
    score = _score(y, y_pred, sigma=sigma)
    se_mean = draws.std() / math.sqrt(n_draws)
    se_var = ((draws - draws.mean()) ** 2).std() / math.sqrt(n_draws)
    assert abs(score.expected - draws.mean()) < 5 * se_mean
    assert abs(score.variance - draws.var()) < 5 * se_var
    # Every draw within the bounds the quadratic forms allow.
    assert draws.max() < 1.0 and np.isfinite(draws).all()


def test_one_noisy_label_gives_a_constant():
    # Two samples, one exact and equal to both predictions: R² = 1 - 2 exactly.
    score = _score([1.0, 3.0], [1.0, 1.0], sigma=[0.0, 0.5])
    assert score.expected == pytest.approx(-1.0, abs=1e-13)
    assert score.variance == pytest.approx(0.0, abs=1e-12)


def test_zero_weight_rows_do_not_break_the_bound():
    y = [1.0, 3.0, 5.0, 9.0]
    y_pred = [1.0, 1.0, 1.0, 4.0]  # the last row has weight 0
    weighted = _score(y, y_pred, sigma=[0.0, 0.5, 0.7, 2.0], sample_weight=[1, 1, 1, 0])
    plain = _score(y[:3], y_pred[:3], sigma=[0.0, 0.5, 0.7])
    assert weighted.expected == pytest.approx(plain.expected, rel=1e-13)
    assert weighted.variance == pytest.approx(plain.variance, rel=1e-11)


@pytest.mark.parametrize(
    "y_pred", [[1.0, 1.0, 1.0 + 1e-9], [1.5, 1.5, 1.5], [1.0, 1.0, 2.0]]
)
def test_unbounded_ratio_still_has_no_mean(y_pred):
    # Not every prediction equals the exact label: X stays positive where Y
    # reaches 0, so with rank 2 the mean of R² does not exist.
    with pytest.warns(UserWarning, match="expected value of R² does not exist"):
        score = expected_r2_score(
            [1.0, 3.0, 5.0], y_pred, sigma=[0.0, 0.5, 0.7], estimand="forward"
        )
    assert score.expected == -np.inf and score.variance == np.inf


def test_two_distinct_exact_labels_unaffected():
    # The other bounded case (Y >= c > 0) keeps working.
    score = _score([1.0, 3.0, 5.0], [1.0, 1.0, 1.0], sigma=[0.0, 0.0, 0.7])
    mean, variance = None, None
    rng = np.random.default_rng(3)
    draws = _r2_of_noise(
        [1.0, 3.0, 5.0], [1.0] * 3, [0.0, 0.0, 0.7], rng.standard_normal((100_000, 3))
    )
    mean, variance = draws.mean(), draws.var()
    assert abs(score.expected - mean) < 5 * draws.std() / math.sqrt(draws.size)
    assert score.variance == pytest.approx(variance, rel=0.05)
