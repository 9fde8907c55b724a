"""Moments of the ROC AUC when the binary labels are independent Bernoulli draws.

With scores ``s`` held fixed and each label observed positive with probability
``π_i``, the AUC of one draw ``Z`` is ``U / (N (M - N))`` with

* ``U = Σ_{i≠j} h_ij Z_i (1 - Z_j)``, ``h_ij = 1`` if ``s_i > s_j``, ``1/2`` on a
  tie, ``0`` otherwise (the Mann-Whitney count);
* ``N = Σ Z_i`` the number of positives, itself random.

The AUC is undefined when ``N`` is 0 or ``M`` (one class); the moments are
conditional on both classes being present.

**Exact moments** (user guide: :ref:`formula_roc_auc`). With the generating
polynomial ``G(z) = Π (1 - π_l + π_l z)``, ``a_i(z) = π_i z / (1 - π_i + π_i z)``
and ``b_j(z) = (1 - π_j) / (1 - π_j + π_j z)``,

    E[U; N = n]  = [z^n] G(z) A(z),   A = Σ_{i≠j} h_ij a_i b_j,
    E[U²; N = n] = [z^n] G(z) Q(z),

where ``Q`` is ``A²`` with the index collisions of ``U²`` put right
(``Z_i² = Z_i``, ``Z_i (1 - Z_i) = 0``); every sum in ``A`` and ``Q`` is a prefix
sum over the samples sorted by score, so one evaluation costs ``O(M)``. The
coefficients come from an inverse DFT over the window of counts that carries
the probability of ``N`` (outside it below 1e-60), and
``E[AUC^k] = Σ_n E[U^k; N = n] / (n (M - n))^k / P(0 < N < M)``.

**Delta method** (large ``M``): the unconditional ``E[U]``, ``E[U²] = Q(1)``,
``Cov(U, N) = A'(1)`` and the moments of ``N`` in a second-order expansion of
``U / (N (M - N))`` around ``E[N]``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import fft as sp_fft

from ._poisson_binomial import poisson_binomial_window

__all__ = ["AucMoments", "auc_moments_delta", "auc_moments_exact", "tie_groups"]

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
    new_group = np.empty(ranked.size, dtype=bool)
    new_group[:1] = True
    np.not_equal(ranked[1:], ranked[:-1], out=new_group[1:])
    starts = np.flatnonzero(new_group)
    sizes = np.diff(np.append(starts, ranked.size))
    start = np.repeat(starts, sizes)
    return TieGroups(order, start, start + np.repeat(sizes, sizes))


def _below(values: np.ndarray, groups: TieGroups, tie: float) -> np.ndarray:
    """``Σ_{j: s_j < s_i} v_j + tie · Σ_{j ≠ i, s_j = s_i} v_j`` along the last axis.

    ``values`` are in sorted order; so is the result.
    """
    cum = np.cumsum(values, axis=-1)
    zero = np.zeros((*values.shape[:-1], 1), dtype=cum.dtype)
    cum = np.concatenate([zero, cum], axis=-1)
    lower = cum[..., groups.start]
    group = cum[..., groups.stop] - lower
    return lower + tie * (group - values)


def _above(values: np.ndarray, groups: TieGroups, tie: float) -> np.ndarray:
    """``Σ_{j: s_j > s_i} v_j + tie · Σ_{j ≠ i, s_j = s_i} v_j`` (sorted order)."""
    cum = np.cumsum(values, axis=-1)
    zero = np.zeros((*values.shape[:-1], 1), dtype=cum.dtype)
    cum = np.concatenate([zero, cum], axis=-1)
    total = cum[..., -1:]
    upper = total - cum[..., groups.stop]
    group = cum[..., groups.stop] - cum[..., groups.start]
    return upper + tie * (group - values)


def _tie_pairs(values: np.ndarray, groups: TieGroups) -> np.ndarray:
    """``Σ over tied pairs i ≠ j of v_i v_j`` (ordered pairs), along the last axis."""
    cum = np.cumsum(values, axis=-1)
    cum2 = np.cumsum(values * values, axis=-1)
    zero = np.zeros((*values.shape[:-1], 1), dtype=cum.dtype)
    cum = np.concatenate([zero, cum], axis=-1)
    cum2 = np.concatenate([zero, cum2], axis=-1)
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
    evaluation point). With ``R_i = Σ_j h_ij b_j``, ``C_j = Σ_i h_ij a_i`` and
    the tie-weighted (1/4) sums of squares,

        Q = A² − Σ a²R² − Σ b²C² − 2 Σ a b R C + Σ a² R¼(b²) + ¼ Σ_ties a_i b_i a_j b_j
            + Σ a (R² − R¼(b²)) + Σ b (C² − C¼(a²)) + Σ a R¼(b)

    (the terms of ``U²`` whose four indices are distinct, then those with
    ``i = k``, with ``j = l``, and with both).
    """
    r = _below(b, groups, 0.5)
    c = _above(a, groups, 0.5)
    first = (a * r).sum(axis=-1)
    r_b2 = _below(b * b, groups, 0.25)
    c_a2 = _above(a * a, groups, 0.25)
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


def _window_size(p: np.ndarray) -> tuple[int, int]:
    offset, pmf = poisson_binomial_window(p)
    return offset, int(pmf.size)


def exact_cost(p: np.ndarray) -> int:
    """Number of (evaluation point × sample) terms :func:`auc_moments_exact` needs."""
    _, width = _window_size(p)
    n_fft = sp_fft.next_fast_len(width + 2, real=True)
    return (n_fft // 2 + 1) * p.size


def _conditional(moments: np.ndarray, offset: int, n_samples: int) -> AucMoments:
    """Divide the windowed ``E[U^k; N = n]`` by ``(n (M - n))^k`` and condition."""
    pmf, first, second = moments
    counts = offset + np.arange(pmf.size, dtype=np.float64)
    defined = (counts > 0) & (counts < n_samples)
    scale = np.zeros_like(counts)
    scale[defined] = 1.0 / (counts[defined] * (n_samples - counts[defined]))
    p_defined = float(pmf[defined].sum())
    if p_defined <= 0.0:
        return AucMoments(np.nan, np.nan, 0.0)
    mean = float((first * scale).sum()) / p_defined
    second_moment = float((second * scale * scale).sum()) / p_defined
    variance = max(second_moment - mean * mean, 0.0)
    return AucMoments(mean, variance, p_defined)


def auc_moments_exact(p: np.ndarray, scores: np.ndarray) -> AucMoments:
    """Exact conditional mean and variance of the AUC (see the module docstring).

    Parameters
    ----------
    p : ndarray of shape (n_samples,)
        Probability that each label is observed positive.
    scores : ndarray of shape (n_samples,)
        The scores, held fixed.
    """
    n_samples = p.size
    groups = tie_groups(scores)
    ps = p[groups.order]
    offset, pmf = poisson_binomial_window(p)
    width = pmf.size
    # DFT length: the window, with room so that no count aliases onto another.
    n_fft = sp_fft.next_fast_len(width + 2, real=True)
    n_points = n_fft // 2 + 1
    angles = 2.0 * np.pi * np.arange(n_points) / n_fft
    z = np.exp(1j * angles)
    # Shift the window to the origin: multiply by z^-offset.
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
        values[0, lo : lo + block] = g
        values[1, lo : lo + block] = g * first
        values[2, lo : lo + block] = g * second
    coefficients = sp_fft.hfft(values, n_fft, axis=-1)[:, :width] / n_fft
    # The count probabilities themselves come exact from the Poisson-binomial.
    coefficients[0] = pmf
    return _conditional(coefficients, offset, n_samples)


def centered_ranks(groups: TieGroups) -> np.ndarray:
    """``r_i = Σ_{j ≠ i} h_ij``: the samples scored below, ties counted half.

    In input order.
    """
    n_samples = groups.order.size
    sorted_ranks = 0.5 * (groups.start + groups.stop - 1).astype(np.float64)
    ranks = np.empty(n_samples)
    ranks[groups.order] = sorted_ranks
    return ranks


def _ratio_derivatives(mean_n: float, n_samples: int) -> tuple[float, float, float]:
    """``F(μ), F'(μ), F''(μ)`` for ``F(n) = 1 / (n (M - n))``."""
    g = mean_n * (n_samples - mean_n)
    dg = n_samples - 2.0 * mean_n
    return 1.0 / g, -dg / g**2, (2.0 * dg * dg + 2.0 * g) / g**3


def auc_moments_delta(p: np.ndarray, scores: np.ndarray) -> AucMoments:
    """Mean and variance of the AUC by a delta expansion in ``N`` (large ``M``).

    ``U`` and ``N`` keep their exact unconditional moments (``A(1)``, ``Q(1)``,
    ``Cov(U, N) = A'(1)``); only ``1 / (N (M - N))`` is expanded, to second
    order for the mean and first order for the variance. The probability that
    one class is missing is computed exactly.
    """
    n_samples = p.size
    groups = tie_groups(scores)
    ps = p[groups.order]
    keep = 1.0 - ps
    first, second = _first_second(ps, keep, groups)
    spread = ps * keep
    cov_un = float(
        (spread * _below(keep, groups, 0.5)).sum()
        - (spread * _above(ps, groups, 0.5)).sum()
    )
    mean_u, var_u = float(first), float(second - first * first)
    mean_n, var_n = float(p.sum()), float(spread.sum())
    f, df, d2f = _ratio_derivatives(mean_n, n_samples)
    mean = mean_u * f + df * cov_un + 0.5 * mean_u * d2f * var_n
    variance = (
        f * f * var_u + 2.0 * f * df * mean_u * cov_un + df * df * mean_u**2 * var_n
    )
    p_defined = 1.0 - float(np.prod(keep)) - float(np.prod(ps))
    return AucMoments(mean, max(variance, 0.0), p_defined)
