"""Poisson-binomial PMFs by a trimmed product tree (user guide:
:ref:`formula_numerics`)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
from scipy import fft as sp_fft
from scipy.stats import binom

#: Trials per leaf block (PMF by the exact recurrence).
_LEAF_SIZE = 16
#: Polynomials at least this long are multiplied by FFT, shorter ones directly.
_FFT_MIN_LENGTH = 64
#: Bound on the probability mass a node may drop outside its window.
_TAIL_MASS = 1e-60
#: At most this many distinct probabilities are handled as a product of binomials.
_MAX_GROUPS = 64
_LOG_TAIL = math.log(2.0 / _TAIL_MASS)


def _windows(
    mean: np.ndarray, variance: np.ndarray, count: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Integer windows ``[low, high]`` holding all but ``_TAIL_MASS`` of each count
    (Bernstein: ``2 exp(-t² / (2 (v + t/3)))`` at ``t = L/3 + sqrt(L²/9 + 2 L v)``)."""
    third = _LOG_TAIL / 3.0
    half = third + np.sqrt(third * third + 2.0 * _LOG_TAIL * variance)
    low = np.maximum(np.floor(mean - half), 0.0).astype(np.int64)
    high = np.minimum(np.ceil(mean + half), count).astype(np.int64)
    return low, np.maximum(high, low)


def bernoulli_table(trials: np.ndarray) -> np.ndarray:
    """PMFs of the successes of the trials ``trials[j, c]`` (``j`` the trial),
    one column ``c`` per count, by the exact recurrence."""
    pmf = np.zeros((trials.shape[0] + 1, trials.shape[1]))
    pmf[0] = 1.0
    for j, success in enumerate(trials):
        head = pmf[: j + 1] * success
        pmf[: j + 1] *= 1.0 - success
        pmf[1 : j + 2] += head
    return pmf


def _leaf_pmfs(p: np.ndarray) -> np.ndarray:
    """PMFs of consecutive blocks of ``_LEAF_SIZE`` trials, one column per block."""
    n_blocks = -(-p.size // _LEAF_SIZE)
    padded = np.zeros(n_blocks * _LEAF_SIZE)
    padded[: p.size] = p
    return bernoulli_table(padded.reshape(n_blocks, _LEAF_SIZE).T.copy())


def fft_convolve(kernel: np.ndarray, *factors: np.ndarray) -> list[np.ndarray]:
    """Full convolutions ``factor * kernel`` along axis 0 by real FFTs, the
    spectrum of ``kernel`` shared (not clipped: round-off negatives remain)."""
    size = kernel.shape[0] + factors[0].shape[0] - 1
    n_fft = sp_fft.next_fast_len(size, real=True)
    spectrum = sp_fft.rfft(kernel, n_fft, axis=0)
    products = (sp_fft.rfft(factor, n_fft, axis=0) * spectrum for factor in factors)
    return [sp_fft.irfft(product, n_fft, axis=0)[:size] for product in products]


def _multiply_pairs(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Column-wise products of polynomials ``left[:, k] * right[:, k]``."""
    width, n_nodes = left.shape
    if width < _FFT_MIN_LENGTH:
        out = np.zeros((2 * width - 1, n_nodes))
        for j in range(width):
            out[j : j + width] += left[j] * right
        return out
    (out,) = fft_convolve(right, left)
    np.maximum(out, 0.0, out=out)
    return out


def _product_tree(p: np.ndarray) -> tuple[int, np.ndarray]:
    """Window ``(offset, pmf)`` of the number of successes of trials ``0 < p < 1``."""
    pmf = _leaf_pmfs(p)
    n_blocks = pmf.shape[1]
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
            nodes = (np.append(a, 0) for a in (offset, mean, variance, count))
            offset, mean, variance, count = nodes
        pmf = _multiply_pairs(pmf[:, 0::2], pmf[:, 1::2])
        nodes = (a[0::2] + a[1::2] for a in (offset, mean, variance, count))
        offset, mean, variance, count = nodes
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


def few_distinct(p: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """``(values, counts)`` when ``p`` holds at most 64 values, in O(M) (the
    candidates are those of a sample: a value it misses gives None)."""
    if p.size == 0:
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    candidates = np.unique(p[:: max(1, p.size // 1024)])
    if candidates.size > _MAX_GROUPS:
        return None
    index = np.minimum(np.searchsorted(candidates, p), candidates.size - 1)
    if not np.array_equal(candidates[index], p):
        return None
    return candidates, np.bincount(index, minlength=candidates.size)


def _convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Full convolution of two PMFs: direct when short, else FFT (clipped at 0)."""
    if min(a.size, b.size) < _FFT_MIN_LENGTH:
        return np.convolve(a, b)
    (out,) = fft_convolve(b, a)
    return np.maximum(out, 0.0)


def poisson_binomial_groups(values: Any, counts: Any) -> tuple[int, np.ndarray]:
    """Window ``(offset, pmf)`` of ``counts[g]`` trials of probability ``values[g]``:
    a product of scipy's binomial PMFs (accurate to a few ulp)."""
    values = np.asarray(values, dtype=np.float64).ravel()
    offset, pmf = 0, np.ones(1)
    for prob, n in zip(values, np.asarray(counts).ravel(), strict=True):
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


def poisson_binomial_stream(
    chunks: Iterable[tuple[np.ndarray, ...]],
) -> list[tuple[int, np.ndarray]]:
    """Windows ``(offset, pmf)`` of several counts whose trials come in chunks
    (one array per count each), multiplied and trimmed chunk by chunk."""
    laws: list[list] = []  # per count: offset, pmf, mean, variance, number
    for arrays in chunks:
        laws += [[0, np.ones(1), 0.0, 0.0, 0] for _ in arrays[len(laws) :]]
        for law, p in zip(laws, arrays, strict=True):
            p = np.asarray(p, dtype=np.float64)
            if p.size == 0:
                continue
            offset, pmf = poisson_binomial_window(p)
            law[2] += float(p.sum())
            law[3] += float(np.dot(p, 1.0 - p))
            law[4] += p.size
            pmf, start = _trim(
                _convolve(law[1], pmf)[:, None],
                np.array([law[0] + offset]),
                *(np.array([v]) for v in law[2:]),
            )
            law[0], law[1] = int(start[0]), pmf[:, 0]
    return [(offset, pmf / pmf.sum()) for offset, pmf, *_ in laws]


def poisson_binomial_window(p: np.ndarray) -> tuple[int, np.ndarray]:
    """``(offset, pmf)``, ``pmf[j] = P(X = offset + j)`` of the successes of trials
    ``p``, on the window outside which less than 1e-60 lies."""
    p = np.asarray(p, dtype=np.float64)
    certain = int(np.count_nonzero(p >= 1.0))
    uncertain = p[(p > 0.0) & (p < 1.0)]
    if uncertain.size == 0:
        return certain, np.ones(1)
    groups = few_distinct(uncertain)
    if groups is None or groups[0].size * _LEAF_SIZE > uncertain.size:
        offset, pmf = _product_tree(uncertain)
        pmf = np.asarray(pmf, dtype=np.float64)
        pmf /= pmf.sum()
    else:  # e.g. a constant flip probability: a product of binomials
        offset, pmf = poisson_binomial_groups(*groups)
    return offset + certain, pmf
