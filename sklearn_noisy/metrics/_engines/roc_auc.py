"""Moments of the ROC AUC of fixed scores when the labels are Bernoulli draws.

The exact method (generating functions, an inverse DFT over the window of the
number of positives) and the delta method are derived in the user guide
(:ref:`formula_roc_auc`); the moments are conditional on both classes present.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import fft as sp_fft

from ..._noisy_score import cornish_fisher_pivot
from .counts.poisson_binomial import poisson_binomial_window

__all__ = [
    "AucMoments",
    "auc_moments_delta",
    "auc_moments_exact",
    "auc_sampling_terms",
    "auc_truth_pivot",
    "tie_groups",
]

#: Largest number of (evaluation point × sample) terms of the exact method.
EXACT_BUDGET = 5_000_000
#: Evaluation points per block (bounds the memory of the exact method).
_BLOCK_ELEMENTS = 1_000_000


class AucMoments(NamedTuple):
    """Conditional moments of the AUC and the probability that it is defined."""

    mean: float
    variance: float
    p_defined: float


class TieGroups(NamedTuple):
    """The samples sorted by score and the bounds of each group of tied scores."""

    order: np.ndarray
    start: np.ndarray  # per sorted sample: first position of its tie group
    stop: np.ndarray  # per sorted sample: one past the last position


def tie_groups(scores: np.ndarray) -> TieGroups:
    """Sort ``scores`` and locate the groups of equal scores."""
    order = np.argsort(scores, kind="stable")
    ranked = scores[order]
    starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]])
    sizes = np.diff(np.append(starts, ranked.size))
    start = np.repeat(starts, sizes)
    return TieGroups(order, start, start + np.repeat(sizes, sizes))


def _prefix(values: np.ndarray) -> np.ndarray:
    """Cumulative sums along the last axis, with a leading 0."""
    cum = np.cumsum(values, axis=-1)
    zero = np.zeros((*values.shape[:-1], 1), dtype=cum.dtype)
    return np.concatenate([zero, cum], axis=-1)


def _below(
    values: np.ndarray, groups: TieGroups, tie: float, above: bool = False
) -> np.ndarray:
    """``Σ_{j: s_j < s_i} v_j + tie · Σ_{j ≠ i, s_j = s_i} v_j`` (sorted order);
    ``s_j > s_i`` with ``above``."""
    cum = _prefix(values)
    group = cum[..., groups.stop] - cum[..., groups.start]
    outside = cum[..., -1:] - cum[..., groups.stop] if above else cum[..., groups.start]
    return outside + tie * (group - values)


def _tie_pairs(values: np.ndarray, groups: TieGroups) -> np.ndarray:
    """``Σ over tied pairs i ≠ j of v_i v_j`` (ordered pairs), along the last axis."""
    cum, cum2 = _prefix(values), _prefix(values * values)
    first = np.flatnonzero(np.r_[True, groups.start[1:] != groups.start[:-1]])
    start, stop = groups.start[first], groups.stop[first]
    sums = cum[..., stop] - cum[..., start]
    squares = cum2[..., stop] - cum2[..., start]
    return (sums * sums - squares).sum(axis=-1)


def _first_second(
    a: np.ndarray, b: np.ndarray, groups: TieGroups
) -> tuple[np.ndarray, np.ndarray]:
    """``A = Σ h_ij a_i b_j`` and ``Q``, the collision-corrected ``A²``.

    ``a`` and ``b`` are in sorted order along the last axis (one row per
    evaluation point); ``Q`` sums the terms of ``U²`` with four distinct
    indices, then those with ``i = k``, with ``j = l`` and with both.
    """
    r = _below(b, groups, 0.5)
    c = _below(a, groups, 0.5, above=True)
    first = (a * r).sum(axis=-1)
    r_b2 = _below(b * b, groups, 0.25)
    c_a2 = _below(a * a, groups, 0.25, above=True)
    a2, b2, ab = a * a, b * b, a * b
    distinct = (
        first * first
        - (a2 * r * r).sum(axis=-1)
        - (b2 * c * c).sum(axis=-1)
        - 2.0 * (ab * r * c).sum(axis=-1)
        + (a2 * r_b2).sum(axis=-1)
        + 0.25 * _tie_pairs(ab, groups)
    )
    same_i = (a * (r * r - r_b2)).sum(axis=-1)
    same_j = (b * (c * c - c_a2)).sum(axis=-1)
    same_both = (a * _below(b, groups, 0.25)).sum(axis=-1)
    return first, distinct + same_i + same_j + same_both


def auc_moments_exact(
    p: np.ndarray, scores: np.ndarray, budget: float = np.inf
) -> AucMoments | None:
    """Exact conditional mean and variance of the AUC of fixed ``scores`` when
    each label is observed positive with probability ``p``; None if that takes
    more than ``budget`` (evaluation point × sample) terms."""
    n_samples = p.size
    offset, pmf = poisson_binomial_window(p)
    width = pmf.size
    n_fft = sp_fft.next_fast_len(width + 2, real=True)
    n_points = n_fft // 2 + 1
    if n_points * n_samples > budget:
        return None
    groups = tie_groups(scores)
    ps = p[groups.order]
    angles = 2.0 * np.pi * np.arange(n_points) / n_fft
    z = np.exp(1j * angles)
    shift = np.exp(-1j * angles * offset)
    values = np.zeros((3, n_points), dtype=np.complex128)
    block = max(1, _BLOCK_ELEMENTS // max(n_samples, 1))
    keep = 1.0 - ps
    for lo in range(0, n_points, block):
        zb = z[lo : lo + block, None]
        factor = keep + ps * zb
        with np.errstate(divide="ignore"):
            log_g = np.log(factor).sum(axis=-1)
        g = np.exp(log_g) * shift[lo : lo + block]
        a = ps * zb / factor
        b = keep / factor
        first, second = _first_second(a, b, groups)
        values[:, lo : lo + block] = g, g * first, g * second
    _, first, second = sp_fft.hfft(values, n_fft, axis=-1)[:, :width] / n_fft
    # divide the windowed E[U^k; N = n] by (n (M − n))^k and condition
    counts = offset + np.arange(width, dtype=np.float64)
    defined = (counts > 0) & (counts < n_samples)
    scale = np.zeros_like(counts)
    scale[defined] = 1.0 / (counts[defined] * (n_samples - counts[defined]))
    p_defined = float(pmf[defined].sum())
    if p_defined <= 0.0:
        return AucMoments(np.nan, np.nan, 0.0)
    mean = float((first * scale).sum()) / p_defined
    second_moment = float((second * scale * scale).sum()) / p_defined
    return AucMoments(mean, max(second_moment - mean * mean, 0.0), p_defined)


def centered_ranks(groups: TieGroups) -> np.ndarray:
    """``r_i = Σ_{j ≠ i} h_ij``: the samples scored below (ties half), input order."""
    ranks = np.empty(groups.order.size)
    ranks[groups.order] = 0.5 * (groups.start + groups.stop - 1).astype(np.float64)
    return ranks


def auc_moments_delta(p: np.ndarray, scores: np.ndarray) -> AucMoments:
    """Mean and variance of the AUC by a delta expansion of ``1 / (N (M - N))``."""
    n_samples = p.size
    groups = tie_groups(scores)
    ps = p[groups.order]
    keep = 1.0 - ps
    first, second = _first_second(ps, keep, groups)
    spread = ps * keep
    cov_un = float(
        (spread * _below(keep, groups, 0.5)).sum()
        - (spread * _below(ps, groups, 0.5, above=True)).sum()
    )
    mean_u, var_u = float(first), float(second - first * first)
    mean_n, var_n = float(p.sum()), float(spread.sum())
    # F(μ), F'(μ), F''(μ) of F(n) = 1 / (n (M − n))
    g, dg = mean_n * (n_samples - mean_n), n_samples - 2.0 * mean_n
    f, df, d2f = 1.0 / g, -dg / g**2, (2.0 * dg * dg + 2.0 * g) / g**3
    mean = mean_u * f + df * cov_un + 0.5 * mean_u * d2f * var_n
    variance = (
        f * f * var_u + 2.0 * f * df * mean_u * cov_un + df * df * mean_u**2 * var_n
    )
    p_defined = 1.0 - float(np.prod(keep)) - float(np.prod(ps))
    return AucMoments(mean, max(variance, 0.0), p_defined)


def auc_sampling_terms(u: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """Per-sample terms ``h = θ + 2 (φ_i − θ ψ_i)/ψ̄`` of the AUC of soft labels
    ``u``: DeLong's structural components (:ref:`error_budget`)."""
    groups = tie_groups(scores)
    a = u[groups.order]
    b = 1.0 - a
    phi = 0.5 * (a * _below(b, groups, 0.5) + b * _below(a, groups, 0.5, above=True))
    psi = 0.5 * (a * (b.sum() - b) + b * (a.sum() - a))
    theta = phi.sum() / psi.sum()
    h = np.empty(u.size)
    h[groups.order] = theta + 2.0 * (phi - theta * psi) / psi.mean()
    return h


def auc_truth_pivot(
    u: np.ndarray,
    gradient: np.ndarray,
    estimate: float,
    pairs: float,
    t0: np.ndarray,
    t1: np.ndarray,
    variance: float,
) -> tuple[float, ...] | None:
    """The Cornish–Fisher pivot of the de-noised AUC ``Û / D̂`` (a ratio of
    quadratics in the independent ``u_i = (o_i − t0_i)/(t1_i − t0_i)``, of
    ``gradient`` ``g``): ``κ₃ = Σ g_i³ κ₃(u_i) + 3Q`` and ``Cov(T, ŝ²) = 2Q +
    Σ g_i³ V_i ∂V_i/∂u_i``, ``Q = aᵀHa``, ``a = g·V``, ``H = ((2T − 1)(J − I) −
    ∇D̂ gᵀ − g ∇D̂ᵀ)/D̂``; the variances and third cumulants of the ``u_i``
    estimated without bias (user guide: truth estimate)."""
    if not variance > 0.0:
        return None
    scale = t1 - t0
    low, high = t0 * (1.0 - t0), t1 * (1.0 - t1)
    v = (low + u * (high - low)) / scale**2
    k0, k1 = low * (1.0 - 2.0 * t0), high * (1.0 - 2.0 * t1)
    third = (k0 + u * (k1 - k0)) / scale**3
    a = gradient * v
    d_pairs = (u.size - 1) - 2.0 * (u.sum() - u)
    quadratic = (
        (2.0 * estimate - 1.0) * (a.sum() ** 2 - a @ a)
        - 2.0 * (d_pairs @ a) * (gradient @ a)
    ) / pairs
    cube = gradient**3
    s3 = variance**1.5
    skew = (float(cube @ third) + 3.0 * quadratic) / s3
    moving = float(cube @ (v * (high - low) / scale**2))
    return cornish_fisher_pivot(skew, (2.0 * quadratic + moving) / s3)
