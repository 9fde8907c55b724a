"""Exact and delta-method moments of the binary count metrics, affine in TP
given ``S = TP + FN`` (user guide: :ref:`formula_binary_counts`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..._definitions.counts import COUNT_METRICS
from .poisson_binomial import fft_convolve, poisson_binomial_window

#: Convolutions with a factor at most this long are computed directly.
_DIRECT_CONVOLUTION_MAX = 64


@dataclass(frozen=True)
class CountLaws:
    """The laws ``(offset, pmf)`` of TP and FN, ``E[TP]``, ``n_P`` and ``M``."""

    tp: tuple[int, np.ndarray]
    fn: tuple[int, np.ndarray]
    mean_tp: float
    n_pred_pos: int
    n_samples: int

    @classmethod
    def of(cls, pi: np.ndarray, pred_pos: np.ndarray) -> CountLaws:
        """The laws of per-sample probabilities ``π_i`` of an observed positive."""
        pi_pos = pi[pred_pos]
        return cls(
            poisson_binomial_window(pi_pos),
            poisson_binomial_window(pi[~pred_pos]),
            float(pi_pos.sum()),
            int(np.count_nonzero(pred_pos)),
            int(pi.size),
        )

    def probability_observed(self, n: int) -> float:
        """``P(S = n)``, S = TP + FN the number of observed positives."""
        (o_t, p_t), (o_f, p_f) = self.tp, self.fn
        k = np.arange(p_t.size)
        j = n - o_t - o_f - k
        valid = (j >= 0) & (j < p_f.size)
        return float(p_t[valid] @ p_f[j[valid]])


def exact_moments(
    metrics: tuple[str, ...],
    laws: CountLaws,
    *,
    zero_division: float = 0.0,
    adjusted: bool = False,
    support_weighted: bool = False,
) -> dict[str, tuple[float, float]]:
    """Exact ``(E, Var)`` of each metric from the centred convolutions
    ``G_r = ((TP − μ_T)^r p_T) * p_F``; ``support_weighted`` multiplies it by
    ``S/M``; NaN where it is undefined with positive probability."""
    (offset_tp, p_tp), (offset_fn, p_fn) = laws.tp, laws.fn
    mean_tp = laws.mean_tp
    centred = (offset_tp - mean_tp) + np.arange(p_tp.size, dtype=np.float64)
    factors = (p_tp, centred * p_tp, centred * centred * p_tp)
    if min(p_tp.size, p_fn.size) <= _DIRECT_CONVOLUTION_MAX:
        g0, g1, g2 = (np.convolve(f, p_fn) for f in factors)
    else:  # G0 and G2 convolve non-negative arrays: clip the FFT round-off
        g0, g1, g2 = fft_convolve(p_fn, *factors)
        g0, g2 = np.maximum(g0, 0.0), np.maximum(g2, 0.0)
    n = offset_tp + offset_fn + np.arange(g0.size, dtype=np.float64)
    mass = g0.sum()
    results = {}
    for metric in metrics:
        alpha, beta = COUNT_METRICS[metric].affine(
            n,
            laws.n_pred_pos,
            laws.n_samples,
            zero_division=zero_division,
            adjusted=adjusted,
        )
        undefined = ~np.isfinite(alpha)
        if undefined.any():
            if g0[undefined].sum() > 1e-18 * mass:  # see NEGLIGIBLE
                results[metric] = (math.nan, math.nan)
                continue
            alpha = np.where(undefined, 0.0, alpha)
            beta = np.where(undefined, 0.0, beta)
        if support_weighted:
            alpha, beta = alpha * (n / laws.n_samples), beta * (n / laws.n_samples)
        alpha = alpha + beta * mean_tp  # metric = α' + β (TP - μ_T)
        expected = float((alpha @ g0 + beta @ g1) / mass)
        dev = alpha - expected
        variance = float(
            (dev * dev @ g0 + 2.0 * (dev * beta) @ g1 + (beta * beta) @ g2) / mass
        )
        results[metric] = (expected, max(variance, 0.0))
    return results
