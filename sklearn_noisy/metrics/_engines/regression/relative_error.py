"""Moments of a relative error ``|Y − ŷ| / max(|Y|, ε)`` with a Gaussian label
``Y`` by quadrature (user guide: :ref:`formula_percentage`)."""

from __future__ import annotations

import itertools
import math
from typing import NamedTuple

import numpy as np
from scipy.special import ndtr

__all__ = [
    "EPSILON",
    "ZERO_MARGIN",
    "RelativeErrorMoments",
    "excluded_probability",
    "relative_error_moments",
    "relative_error_terms",
    "relative_errors",
]

#: scikit-learn's floor of the denominator.
EPSILON = float(np.finfo(np.float64).eps)
#: The default neighbourhood ``|y| < ZERO_MARGIN·σ`` of 0 left out of the moments.
ZERO_MARGIN = 1.0
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(16)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
#: Half-width of the far-from-zero window, in σ (density below 1e-42 outside).
_FAR_HALF_WIDTH = 14.0
#: Half-width of the window near zero, in σ (density below 1e-348 outside).
_NEAR_HALF_WIDTH = 40.0
_FAR_PIECES = 7  # pieces of at most 2σ over one side of μ ± 14σ
#: Gauss–Hermite rule of the smooth part far from 0 (weights sum to 1).
_HERMITE_NODES, _HERMITE_WEIGHTS = np.polynomial.hermite_e.hermegauss(48)
_HERMITE_WEIGHTS = _HERMITE_WEIGHTS / _SQRT_2PI
_CHUNK = 4096
#: Conditional moments near 0: window ``μ ± 10σ`` (density below 2e-22 of its
#: peak outside) and pieces of at most 4σ above the geometric ones.
_CONDITIONAL_HALF_WIDTH, _CONDITIONAL_PIECE = 10.0, 5.0


class RelativeErrorMoments(NamedTuple):
    """Per-sample ``E[(g − c)^k]`` and ``E[(g² − c²)^k]``; ``c = g(μ)``, 0 near 0."""

    center: np.ndarray
    d1: np.ndarray  # E[g − c]
    d1_sq: np.ndarray  # E[(g − c)²]
    d2: np.ndarray  # E[g² − c²]
    d2_sq: np.ndarray  # E[(g² − c²)²]


def relative_errors(y_true: np.ndarray, y_pred: np.ndarray) -> np.ndarray:
    return np.abs(y_pred - y_true) / np.maximum(np.abs(y_true), EPSILON)


def _legendre(start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Legendre nodes and weights ``(..., 16)`` on the pieces ``[start, end]``."""
    half = 0.5 * (end - start)[..., None]
    return start[..., None] + half * (_NODES + 1.0), half * _WEIGHTS


def _segment(a: float, b: float, n_pieces: int, log: bool) -> tuple:
    """Nodes and weights of ``n_pieces`` pieces on ``[a, b]`` (in ``log y`` with
    ``log``, ``0 < a``)."""
    ends = (math.log(a), math.log(b)) if log else (a, b)
    edges = np.linspace(*ends, n_pieces + 1)
    nodes, weights = _legendre(edges[:-1], edges[1:])
    if log:
        nodes = np.exp(nodes)
        weights = weights * nodes
    return nodes.ravel(), np.broadcast_to(weights, nodes.shape).ravel()


def _far(
    mu: np.ndarray, sigma: np.ndarray, y_pred: np.ndarray, center: np.ndarray
) -> np.ndarray:
    """Moments far from 0: Gauss–Hermite of ``u = ±(Y − ŷ)/Y``, corrected by
    ``K = E[u; u < 0]`` where ``ŷ`` lies in the window."""
    # s = sign of h(μ) (sign(μ) when ŷ = μ): u < 0 below ŷ exactly when μ ≥ ŷ
    sign = np.where(mu >= y_pred, 1.0, -1.0) * np.sign(mu)
    x = _HERMITE_NODES
    y = mu[:, None] + sigma[:, None] * x
    # u − c = s ŷ (Y − μ) / (μ Y), without cancellation
    d1 = (sign * y_pred)[:, None] * (sigma[:, None] * x) / (mu[:, None] * y)
    d2 = d1 * (d1 + 2.0 * center[:, None])
    smooth = np.stack([d1, d1 * d1, d2, d2 * d2]) @ _HERMITE_WEIGHTS
    # K over the far side of ŷ in z = (Y − μ)/σ, t = (ŷ − μ)/σ: [−14, t] if
    # ŷ ≤ μ, else [t, 14]; only where ŷ is in the window.
    t = (y_pred - mu) / sigma
    kinked = np.abs(t) < _FAR_HALF_WIDTH
    kink = np.zeros(mu.size)
    if kinked.any():
        below = (mu >= y_pred)[kinked]
        tk = t[kinked]
        low = np.where(below, -_FAR_HALF_WIDTH, tk)
        high = np.where(below, tk, _FAR_HALF_WIDTH)
        edges = np.linspace(low, high, _FAR_PIECES + 1, axis=1)
        z, weights = _legendre(edges[:, :-1], edges[:, 1:])
        sk, muk, sigk = (v[kinked, None, None] for v in (sign, mu, sigma))
        # u = s (Y − ŷ)/Y with Y − ŷ = σ (z − t), Y = μ + σ z
        u = sk * sigk * (z - tk[:, None, None]) / (muk + sigk * z)
        density = np.exp(-0.5 * z * z) / _SQRT_2PI
        kink[kinked] = (np.minimum(u, 0.0) * density * weights).sum(axis=(1, 2))
    smooth[0] -= 2.0 * kink
    smooth[1] += 4.0 * center * kink
    return smooth


def _near_one(mu: float, sigma: float, y_pred: float, center: float) -> np.ndarray:
    """Moments of one sample whose window ``μ ± 40σ`` reaches near 0: pieces cut
    at ``±ε`` and ``ŷ``, geometric below σ/8 on each side."""
    low, high = mu - _NEAR_HALF_WIDTH * sigma, mu + _NEAR_HALF_WIDTH * sigma
    cuts = sorted(
        {low, high, *(v for v in (-EPSILON, EPSILON, y_pred) if low < v < high)}
    )
    parts = []
    for a, b in itertools.pairwise(cuts):
        if b <= -EPSILON or a >= EPSILON:  # one sign, |y| ≥ ε: mirror to y > 0
            sign = 1.0 if a >= EPSILON else -1.0
            lo, hi = sorted((abs(a), abs(b)))
            knee = min(hi, max(lo, sigma / 8.0))
            if knee > lo:  # log(knee) − log(lo): knee/lo itself may overflow
                n_log = max(1, math.ceil(math.log(knee) - math.log(lo)))
                x, w = _segment(lo, knee, n_log, True)
                parts.append((sign * x, w))
            if hi > knee:
                n_lin = max(1, math.ceil((hi - knee) / (0.5 * sigma)))
                x, w = _segment(knee, hi, n_lin, False)
                parts.append((sign * x, w))
        else:  # inside the floor: the denominator is ε
            parts.append(
                _segment(a, b, max(1, min(40, math.ceil((b - a) / sigma))), False)
            )
    y = np.concatenate([x for x, _ in parts])
    z = (y - mu) / sigma
    density = np.exp(-0.5 * z * z) / (sigma * _SQRT_2PI)
    g = relative_errors(y, y_pred)
    d1 = g - center
    d2 = d1 * (g + center)
    values = np.stack([d1, d1 * d1, d2, d2 * d2]) * density
    return (values * np.concatenate([w for _, w in parts])).sum(axis=-1)


def _conditional_near(
    mu: np.ndarray, sigma: np.ndarray, y_pred: np.ndarray, margin: float
) -> np.ndarray:
    """``∫ φ·[g, g², g², g⁴]`` over ``|Y| ≥ margin·σ`` per sample near 0 (each side
    in ``t = Y/σ``, cut at ``ŷ``, geometric pieces below ``t = 2``)."""
    z, p = mu / sigma, y_pred / sigma
    flip = np.array([1.0, -1.0])[:, None]
    zs, ps = flip * z, flip * p
    # A side d > 1 standard errors beyond the label: its density decays like
    # exp(−d·(t − k)), so the pieces shrink with 1/d; for a label inside the
    # margin, the window past it too (density left below 1e-17).
    d = np.maximum(margin - zs, 1.0)
    a = np.maximum(margin, zs - _CONDITIONAL_HALF_WIDTH)
    b = np.where(
        np.abs(z) < margin,  # the label itself inside: both sides beyond it
        margin + np.minimum(_CONDITIONAL_HALF_WIDTH, 40.0 / d),
        zs + _CONDITIONAL_HALF_WIDTH,
    )
    c = np.clip(ps, a, b)
    # Per side (flip) and part ([a, c], [c, b]) of each sample: the kept parts.
    lo, hi = np.stack([a, c], axis=1), np.stack([c, b], axis=1)
    keep = hi > lo
    row = np.broadcast_to(np.arange(mu.size), keep.shape)[keep]
    side = np.broadcast_to(flip[:, :, None], keep.shape)[keep]
    width = np.broadcast_to((_CONDITIONAL_PIECE / d)[:, None], keep.shape)[keep]
    lo, hi = lo[keep], hi[keep]
    # pieces: geometric on [lo, min(hi, 2)], linear (width ≤ 5/d) above
    knee = np.clip(2.0, lo, hi)
    n_log = np.where(knee > lo, np.ceil(np.log(knee / lo)), 0).astype(np.int64)
    n_lin = np.ceil((hi - knee) / width).astype(np.int64)
    counts = n_log + n_lin
    part = np.repeat(np.arange(row.size), counts)
    j = np.arange(part.size) - np.repeat(np.cumsum(counts) - counts, counts)
    nl, lo_p, knee_p = n_log[part], lo[part], knee[part]
    geometric = j < nl
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.log(knee_p / lo_p) / np.where(nl > 0, nl, 1)
        step = (hi[part] - knee_p) / np.where(n_lin > 0, n_lin, 1)[part]
    start = np.where(geometric, lo_p * np.exp(ratio * j), knee_p + step * (j - nl))
    end = np.where(geometric, lo_p * np.exp(ratio * (j + 1)), start + step)
    end = np.where(geometric & (j + 1 == nl), knee_p, end)
    t, weights = _legendre(start, end)
    sample, sign = row[part], side[part]
    density = np.exp(-0.5 * np.square(t - (sign * z[sample])[:, None]))
    g = np.abs(t - (sign * p[sample])[:, None]) / t
    term = g * density * (weights / _SQRT_2PI)
    first = term.sum(axis=-1)
    term *= g
    second = term.sum(axis=-1)
    fourth = (term * (g * g)).sum(axis=-1)
    return np.stack(
        [
            np.bincount(sample, values, minlength=mu.size)
            for values in (first, second, second, fourth)
        ]
    )


def excluded_probability(
    mu: np.ndarray, sigma: np.ndarray, margin: float
) -> np.ndarray:
    """``P(|Y| < margin·σ)`` per sample, ``Y ~ N(μ, σ²)`` (0 where ``σ = 0``)."""
    noisy = sigma > 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(noisy, np.abs(mu) / np.where(noisy, sigma, 1.0), np.inf)
    # Φ(m − z) − Φ(−m − z), both tails below the mean: no cancellation
    return np.where(noisy, ndtr(margin - z) - ndtr(-margin - z), 0.0)


def relative_error_moments(
    mu: np.ndarray, sigma: np.ndarray, y_pred: np.ndarray, margin: float = 0.0
) -> RelativeErrorMoments:
    """Per-sample moments of ``g = |Y − ŷ| / max(|Y|, ε)``, ``Y ~ N(μ, σ²)``
    (``margin > 0``: conditional on ``|Y| ≥ margin·σ`` near 0)."""
    mu, sigma, y_pred = np.broadcast_arrays(
        *(np.asarray(v, dtype=np.float64) for v in (mu, sigma, y_pred))
    )
    noisy = sigma > 0.0
    far = noisy & (np.abs(mu) - _NEAR_HALF_WIDTH * sigma > EPSILON)
    if margin > 0.0:  # the floor plays no part: far also in σ units (tiny scales)
        width = max(_NEAR_HALF_WIDTH, _FAR_HALF_WIDTH + margin)
        far = noisy & (
            (np.abs(mu) - width * sigma > EPSILON) | (np.abs(mu) > 2.0 * width * sigma)
        )
    else:  # a window μ ± 40σ that float64 cannot resolve: the label is exact
        noisy &= far | (mu - _NEAR_HALF_WIDTH * sigma != mu + _NEAR_HALF_WIDTH * sigma)
    # Centre at g(μ) where g is smooth around μ (far from 0, or exact labels):
    # the variances then keep their digits. Near 0 the moments are raw.
    center = np.where(noisy & ~far, 0.0, relative_errors(mu, y_pred))
    moments = np.zeros((4, mu.size))
    index = np.flatnonzero(far)
    for start in range(0, index.size, _CHUNK):
        rows = index[start : start + _CHUNK]
        # g is invariant to a common scale of μ, σ and ŷ: a power of 2 that
        # brings max(|μ|, σ) into [1/2, 1) (exact) keeps the products of the
        # far path inside the float64 range at any scale of the labels
        _, exponent = np.frexp(np.maximum(np.abs(mu[rows]), sigma[rows]))
        scaled = (np.ldexp(v[rows], -exponent) for v in (mu, sigma, y_pred))
        moments[:, rows] = _far(*scaled, center[rows])
    near = np.flatnonzero(noisy & ~far)
    if margin == 0.0:
        for i in near:
            moments[:, i] = _near_one(mu[i], sigma[i], y_pred[i], center[i])
        return RelativeErrorMoments(center, *moments)
    for start in range(0, near.size, _CHUNK):
        rows = near[start : start + _CHUNK]
        z = np.abs(mu[rows]) / sigma[rows]
        kept = ndtr(z - margin) + ndtr(-z - margin)  # P(|Y| ≥ kσ), no cancellation
        if not np.all(kept > 1e-300):
            raise ValueError(
                f"zero_margin={margin:g} leaves out every draw of a label "
                f"{np.min(margin - z):.3g} standard errors inside it; choose a "
                "smaller zero_margin."
            )
        raw = _conditional_near(mu[rows], sigma[rows], y_pred[rows], margin)
        moments[:, rows] = raw / kept
    return RelativeErrorMoments(center, *moments)


def floor_sensitivity(
    mu: np.ndarray, sigma: np.ndarray, y_pred: np.ndarray, *, square: bool
) -> tuple[np.ndarray, np.ndarray]:
    """How much each sample's mean and variance owe to the floor ε (user guide's
    table, :ref:`formula_percentage`)."""
    positive = sigma > 0.0
    safe = np.where(positive, sigma, 1.0)
    z = np.where(positive, mu / safe, np.inf)
    density = np.where(positive, np.exp(-0.5 * z * z) / (safe * _SQRT_2PI), 0.0)
    a = np.abs(y_pred)
    if square:
        return 4.0 * a**2 * density / EPSILON, 8.0 * a**4 * density / (3.0 * EPSILON**3)
    return 2.0 * a * density, 4.0 * a**2 * density / EPSILON


def relative_error_terms(
    y_true: np.ndarray, y_pred: np.ndarray, sigma: np.ndarray, square: bool,
    margin: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """Per sample and output: ``(g(μ), E[g − g(μ)], E[(g − g(μ))²], nominal g)``,
    ``g`` the relative error or its square (``square``)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        moments = relative_error_moments(
            y_true.ravel(), sigma.ravel(), y_pred.ravel(), margin
        )
        center = moments.center.reshape(y_true.shape)
        nominal_terms = relative_errors(y_true, y_pred)
        mean, spread = moments.d1, moments.d1_sq
        if square:
            mean, spread = moments.d2, moments.d2_sq
            nominal_terms, center = nominal_terms**2, center**2
    return (
        center,
        mean.reshape(y_true.shape),
        spread.reshape(y_true.shape),
        nominal_terms,
    )
