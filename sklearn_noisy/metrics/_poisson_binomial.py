"""Probability mass function of a Poisson-binomial distribution.

The number of successes among independent Bernoulli trials with success
probabilities ``p_1, ..., p_n`` has the generating polynomial
``prod_i (1 - p_i + p_i z)``. :func:`poisson_binomial_pmf` multiplies these
factors along a balanced divide-and-conquer tree:

* the leaves are blocks of :data:`_LEAF_SIZE` trials, whose PMFs are built by the
  exact O(block²) recurrence, vectorised over all blocks at once;
* while the polynomials are short, sibling pairs are multiplied by direct
  convolution (vectorised over all pairs of a level); above
  :data:`_FFT_MIN_LENGTH` coefficients the products use batched real FFTs, and
  the round-off negatives they leave are clipped to 0 (user guide:
  :ref:`formula_numerics`);
* every node keeps only the window of counts that carries probability: by
  Bernstein's inequality the mass outside ``mean ± t`` is below
  :data:`_TAIL_MASS` (1e-60), far below the float64 round-off of the retained
  values, so the trimming loses nothing that the FFT would not lose anyway, and
  it makes the upper levels of the tree, where the FFTs are long, cost
  ``O(sqrt(n))`` instead of ``O(n)``.

Trials with ``p_i = 0`` or ``p_i = 1`` are certain: they shift the distribution
and never enter the products. The result is renormalised to sum to one.

The counts of the binary metrics are Poisson-binomial (user guide:
:ref:`formula_binary_counts`); :func:`fft_convolve` is the package's one FFT
convolution.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
from scipy import fft as sp_fft
from scipy.stats import binom

__all__ = [
    "fft_convolve",
    "poisson_binomial_groups",
    "poisson_binomial_pmf",
    "poisson_binomial_stream",
    "poisson_binomial_window",
]

#: Trials per leaf block (PMF by the exact recurrence).
_LEAF_SIZE = 16
#: Polynomials at least this long are multiplied by FFT, shorter ones directly.
_FFT_MIN_LENGTH = 64
#: Bound on the probability mass a node may drop outside its window.
_TAIL_MASS = 1e-60
#: At most this many distinct probabilities are handled as a product of binomials.
_MAX_GROUPS = 64
_LOG_TAIL = math.log(2.0 / _TAIL_MASS)


def _bernstein_halfwidth(variance: np.ndarray) -> np.ndarray:
    """Half-width t with P(|X - mean| >= t) <= _TAIL_MASS (Bernstein's inequality).

    For a sum of independent Bernoulli trials with variance ``v`` (each trial
    within 1 of its mean), P(|X - mean| >= t) <= 2 exp(-t² / (2 (v + t/3))).
    Solving ``t² / (2 (v + t/3)) = L`` gives ``t = L/3 + sqrt(L²/9 + 2 L v)``.
    """
    third = _LOG_TAIL / 3.0
    return third + np.sqrt(third * third + 2.0 * _LOG_TAIL * variance)


def _windows(
    mean: np.ndarray, variance: np.ndarray, count: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Integer count windows [low, high] holding all but _TAIL_MASS of each node."""
    half = _bernstein_halfwidth(variance)
    low = np.maximum(np.floor(mean - half), 0.0).astype(np.int64)
    high = np.minimum(np.ceil(mean + half), count).astype(np.int64)
    return low, np.maximum(high, low)


def _leaf_pmfs(p: np.ndarray) -> np.ndarray:
    """PMFs of consecutive blocks of ``_LEAF_SIZE`` trials, one column per block."""
    n_blocks = -(-p.size // _LEAF_SIZE)
    padded = np.zeros(n_blocks * _LEAF_SIZE)
    padded[: p.size] = p
    trials = padded.reshape(n_blocks, _LEAF_SIZE).T.copy()
    pmf = np.zeros((_LEAF_SIZE + 1, n_blocks))
    pmf[0] = 1.0
    for j in range(_LEAF_SIZE):
        success = trials[j]
        # new[m] = old[m] (1 - p) + old[m - 1] p, for m = 0..j+1 (exact, no FFT).
        head = pmf[: j + 1] * success
        pmf[: j + 1] *= 1.0 - success
        pmf[1 : j + 2] += head
    return pmf


def fft_convolve(kernel: np.ndarray, *factors: np.ndarray) -> list[np.ndarray]:
    """Full linear convolutions ``factor * kernel`` along axis 0, by real FFTs.

    The spectrum of ``kernel`` is computed once for all ``factors``, which share
    one length along axis 0 (2-D arrays convolve column by column). The results
    are not clipped: a convolution of non-negative arrays can hold round-off
    negatives of the order of 1e-16 times its largest value.
    """
    size = kernel.shape[0] + factors[0].shape[0] - 1
    n_fft = sp_fft.next_fast_len(size, real=True)
    spectrum = sp_fft.rfft(kernel, n_fft, axis=0)
    products = (sp_fft.rfft(factor, n_fft, axis=0) * spectrum for factor in factors)
    return [sp_fft.irfft(product, n_fft, axis=0)[:size] for product in products]


def _multiply_pairs(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Column-wise products of polynomials ``left[:, k] * right[:, k]``.

    Coefficients run along axis 0 (one column per node), so that the direct
    convolution works on contiguous rows.
    """
    width, n_nodes = left.shape
    out_width = 2 * width - 1
    if width < _FFT_MIN_LENGTH:
        out = np.zeros((out_width, n_nodes))
        for j in range(width):
            out[j : j + width] += left[j] * right
        return out
    (out,) = fft_convolve(right, left)
    # Clip the FFT round-off negatives (user guide: formula_numerics).
    np.maximum(out, 0.0, out=out)
    return out


def _product_tree(p: np.ndarray) -> tuple[int, np.ndarray]:
    """Window ``(offset, pmf)`` of the number of successes of trials ``0 < p < 1``."""
    pmf = _leaf_pmfs(p)
    n_blocks = pmf.shape[1]
    # Per-node bookkeeping: offset of row 0, number of trials, mean, variance.
    padded = np.zeros(n_blocks * _LEAF_SIZE)
    padded[: p.size] = p
    blocks = padded.reshape(n_blocks, _LEAF_SIZE)
    mean = blocks.sum(axis=1)
    variance = (blocks * (1.0 - blocks)).sum(axis=1)
    count = np.full(n_blocks, _LEAF_SIZE, dtype=np.int64)
    count[-1] = p.size - _LEAF_SIZE * (n_blocks - 1)
    offset = np.zeros(n_blocks, dtype=np.int64)
    pmf, offset = _trim(pmf, offset, mean, variance, count)
    while pmf.shape[1] > 1:
        if pmf.shape[1] % 2:  # an identity node (no trials) pairs with the last
            identity = np.zeros((pmf.shape[0], 1))
            identity[0, 0] = 1.0
            pmf = np.hstack([pmf, identity])
            offset = np.append(offset, 0)
            mean = np.append(mean, 0.0)
            variance = np.append(variance, 0.0)
            count = np.append(count, 0)
        pmf = _multiply_pairs(pmf[:, 0::2], pmf[:, 1::2])
        offset = offset[0::2] + offset[1::2]
        mean = mean[0::2] + mean[1::2]
        variance = variance[0::2] + variance[1::2]
        count = count[0::2] + count[1::2]
        pmf, offset = _trim(pmf, offset, mean, variance, count)
    return int(offset[0]), pmf[:, 0]


def _trim(
    pmf: np.ndarray,
    offset: np.ndarray,
    mean: np.ndarray,
    variance: np.ndarray,
    count: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Cut every column to a common-height window that holds its probability mass."""
    low, high = _windows(mean, variance, count)
    width = pmf.shape[0]
    start = np.clip(low - offset, 0, width - 1)
    stop = np.clip(high - offset, start, width - 1)
    new_width = int((stop - start).max()) + 1
    if new_width == width:
        return pmf, offset
    start = np.minimum(start, width - new_width)
    if np.all(start == start[0]):
        s = int(start[0])
        return np.ascontiguousarray(pmf[s : s + new_width]), offset + s
    rows = start + np.arange(new_width)[:, None]
    return np.take_along_axis(pmf, rows, axis=0), offset + start


def _few_distinct(p: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(values, counts)`` when ``p`` holds at most :data:`_MAX_GROUPS` values.

    A sample of the values is looked at first, so that inputs with many
    distinct probabilities do not pay for a full sort.
    """
    if p.size > 4 * _MAX_GROUPS and np.unique(p[:: max(1, p.size // 1024)]).size > (
        _MAX_GROUPS
    ):
        return None
    values, counts = np.unique(p, return_counts=True)
    if values.size > _MAX_GROUPS or values.size * _LEAF_SIZE > p.size:
        return None
    return values, counts


def _convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Full convolution of two PMFs: direct when short, else FFT (clipped at 0)."""
    if min(a.size, b.size) < _FFT_MIN_LENGTH:
        return np.convolve(a, b)
    (out,) = fft_convolve(b, a)
    return np.maximum(out, 0.0)


def _binomial_product(values: np.ndarray, counts: np.ndarray) -> tuple[int, np.ndarray]:
    """Window of a sum of binomials ``Σ_g Binomial(counts[g], values[g])``.

    Each factor is scipy's binomial PMF (Boost, accurate to a few ulp) on its
    Bernstein window; the factors are convolved (directly or by FFT).
    """
    offset, pmf = 0, np.ones(1)
    for prob, n in zip(values, counts, strict=True):
        n = int(n)
        if n == 0 or prob <= 0.0:
            continue
        if prob >= 1.0:
            offset += n
            continue
        low, high = _windows(
            np.array([n * prob]), np.array([n * prob * (1.0 - prob)]), np.array([n])
        )
        factor = binom.pmf(np.arange(low[0], high[0] + 1), n, prob)
        offset, pmf = offset + int(low[0]), _convolve(pmf, factor)
    pmf = np.asarray(pmf, dtype=np.float64)
    return offset, pmf / pmf.sum()


def poisson_binomial_groups(values: Any, counts: Any) -> tuple[int, np.ndarray]:
    """Window ``(offset, pmf)`` of trials that share a few probabilities.

    ``counts[g]`` trials have the success probability ``values[g]``: a
    constant flip probability or a transition matrix gives one probability
    per true class, so the law needs no per-sample array at all.
    """
    values = np.asarray(values, dtype=np.float64).ravel()
    counts = np.asarray(counts).ravel()
    return _binomial_product(values, counts)


def _trim_window(
    offset: int, pmf: np.ndarray, mean: float, variance: float, count: int
) -> tuple[int, np.ndarray]:
    """Cut a running product to the Bernstein window of its mean and variance."""
    low, high = _windows(np.array([mean]), np.array([variance]), np.array([count]))
    start = max(int(low[0]) - offset, 0)
    stop = min(int(high[0]) - offset, pmf.size - 1)
    if start == 0 and stop == pmf.size - 1:
        return offset, pmf
    return offset + start, pmf[start : stop + 1]


class _RunningProduct:
    """The law of the trials seen so far, trimmed to its Bernstein window."""

    def __init__(self) -> None:
        self.offset, self.pmf = 0, np.ones(1)
        self.mean = self.variance = 0.0
        self.count = 0

    def add(self, p: np.ndarray) -> None:
        if p.size == 0:
            return
        chunk_offset, chunk_pmf = poisson_binomial_window(p)
        self.mean += float(p.sum())
        self.variance += float(np.dot(p, 1.0 - p))
        self.count += p.size
        self.offset, self.pmf = _trim_window(
            self.offset + chunk_offset,
            _convolve(self.pmf, chunk_pmf),
            self.mean,
            self.variance,
            self.count,
        )

    def window(self) -> tuple[int, np.ndarray]:
        return self.offset, self.pmf / self.pmf.sum()


def poisson_binomial_stream(
    chunks: Iterable[tuple[np.ndarray, ...]],
) -> list[tuple[int, np.ndarray]]:
    """Windows ``(offset, pmf)`` of several counts whose trials come in chunks.

    Each item of ``chunks`` holds one array of success probabilities per
    count (the same number every time). Each chunk's law is computed on its
    own (:func:`poisson_binomial_window`) and multiplied into the count's
    running product, trimmed to its Bernstein window after every step: the
    memory is that of one chunk and the windows, whatever the number of
    trials.
    """
    products: list[_RunningProduct] = []
    for arrays in chunks:
        while len(products) < len(arrays):
            products.append(_RunningProduct())
        for product, p in zip(products, arrays, strict=True):
            product.add(np.asarray(p, dtype=np.float64))
    return [product.window() for product in products]


def poisson_binomial_window(p: np.ndarray) -> tuple[int, np.ndarray]:
    """PMF of a Poisson-binomial count on the window of counts that carry mass.

    Parameters
    ----------
    p : ndarray of shape (n,)
        Success probabilities in [0, 1].

    Returns
    -------
    offset : int
        The count that ``pmf[0]`` refers to.
    pmf : ndarray
        ``pmf[j] = P(X = offset + j)``, non-negative and summing to 1. Counts
        outside the window have probability below 1e-60 in total.
    """
    p = np.asarray(p, dtype=np.float64)
    certain = int(np.count_nonzero(p >= 1.0))
    uncertain = p[(p > 0.0) & (p < 1.0)]
    if uncertain.size == 0:
        return certain, np.ones(1)
    groups = _few_distinct(uncertain)
    if groups is None:
        offset, pmf = _product_tree(uncertain)
        pmf = np.asarray(pmf, dtype=np.float64)
        pmf /= pmf.sum()
    else:
        # Few distinct probabilities (a constant flip probability gives two):
        # a product of binomial PMFs (scipy/Boost, accurate to a few ulp).
        offset, pmf = _binomial_product(*groups)
    return offset + certain, pmf


def poisson_binomial_pmf(p: np.ndarray) -> np.ndarray:
    """PMF of the number of successes of independent Bernoulli(p_i) trials.

    Parameters
    ----------
    p : array-like of shape (n,)
        Success probabilities in [0, 1].

    Returns
    -------
    pmf : ndarray of shape (n + 1,)
        ``pmf[k] = P(X = k)``; counts whose probability is below 1e-60 in total
        are returned as 0.

    Examples
    --------
    >>> from sklearn_noisy.metrics._poisson_binomial import poisson_binomial_pmf
    >>> poisson_binomial_pmf([0.5, 0.5]).tolist()
    [0.25, 0.5, 0.25]
    >>> poisson_binomial_pmf([1.0, 0.2]).round(12).tolist()
    [0.0, 0.8, 0.2]
    """
    p = np.asarray(p, dtype=np.float64).ravel()
    offset, window = poisson_binomial_window(p)
    pmf = np.zeros(p.size + 1)
    pmf[offset : offset + window.size] = window
    return pmf
