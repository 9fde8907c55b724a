"""The moments of the binary count metrics: exact algorithm and delta method.

For binary labels, let ``P`` be the samples predicted positive (``n_P`` of them,
``n_N = M - n_P`` predicted negative) and ``π_i`` the probability that sample
``i`` is observed positive. The true-positive count ``TP`` and the
false-negative count ``FN`` are independent Poisson-binomial variables;
``S = TP + FN`` is the number of observed positives (user guide:
:ref:`formula_binary_counts`).

* Given ``S = n``, precision, recall, F1, balanced accuracy and MCC are all
  affine in TP, ``metric = α(n) + β(n) TP`` (their definitions' ``affine``).
  With the PMFs ``p_T`` and ``p_F`` of TP and FN (:mod:`._poisson_binomial`,
  O(M log² M)) and the convolutions ``G_r = ((a - μ_T)^r p_T) * p_F``,
  ``r = 0, 1, 2``, the mean and the centred variance are finite sums over
  ``n``: exact up to float64 round-off (:func:`_exact_moments`).
* :func:`_delta_moments` is the second-order delta method in ``(TP, FN)``,
  accurate for large M (its accuracy: user guide, :ref:`formula_binary_counts`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._count_definitions import COUNT_METRICS
from ._poisson_binomial import fft_convolve, poisson_binomial_window

#: Convolutions with a factor at most this long are computed directly.
_DIRECT_CONVOLUTION_MAX = 64

#: The description of the ``method`` option of the metrics that offer it.
_METHOD_PARAMETER = """
    method : {"exact", "delta"}, default="exact"
        ``"exact"``: the Poisson-binomial algorithm (user guide:
        :ref:`formula_binary_counts`). ``"delta"``: the second-order delta
        method in (TP, FN), for very large samples (its accuracy is in the same
        section); binary only."""


def metric_value(
    metric: str,
    tp: float,
    n_obs_pos: float,
    n_pred_pos: float,
    n_samples: float,
    *,
    zero_division: float = 0.0,
    adjusted: bool = False,
) -> float:
    """The metric on one labelling, with scikit-learn's own arithmetic.

    Its definition's value of the confusion matrix ``[[TN, FP], [FN, TP]]``,
    so that the result agrees to the last bit (an F1 of ``2·3/(7 + 3)`` is
    0.6, not 0.6000000000000001).
    """
    tp, s, n_pos, m = float(tp), float(n_obs_pos), float(n_pred_pos), float(n_samples)
    definition = COUNT_METRICS[metric]
    if definition.ratio is not None and not (
        definition.negative or definition.complement
    ):
        return definition.ratio.of_counts(tp, s, n_pos, zero_division)  # no arrays
    confusion = np.array([[(m - n_pos) - (s - tp), n_pos - tp], [s - tp, tp]])
    value = definition.value(
        confusion,
        average="binary",
        pos_index=1,
        zero_division=zero_division,
        adjusted=adjusted,
    )
    return float(value)


# --------------------------------------------------------------------------
# Exact algorithm and delta method
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class CountLaws:
    """The laws of TP and FN of one binary problem, on their windows.

    ``tp = (offset, pmf)`` and ``fn = (offset, pmf)`` as returned by
    :func:`~._poisson_binomial.poisson_binomial_window`; ``mean_tp`` is
    ``E[TP]``; ``n_pred_pos`` and ``n_samples`` are ``n_P`` and ``M``.
    """

    tp: tuple[int, np.ndarray]
    fn: tuple[int, np.ndarray]
    mean_tp: float
    n_pred_pos: int
    n_samples: int

    def probability_observed(self, n: int) -> float:
        """``P(S = n)``, S = TP + FN the number of observed positives."""
        (o_t, p_t), (o_f, p_f) = self.tp, self.fn
        k = np.arange(p_t.size)
        j = n - o_t - o_f - k
        valid = (j >= 0) & (j < p_f.size)
        return float(p_t[valid] @ p_f[j[valid]])


def _convolve_moments(
    counts: np.ndarray, p_tp: np.ndarray, p_fn: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``G_r = (counts^r p_tp) * p_fn`` for r = 0, 1, 2 (FFT of p_fn shared)."""
    factors = (p_tp, counts * p_tp, counts * counts * p_tp)
    if min(p_tp.size, p_fn.size) <= _DIRECT_CONVOLUTION_MAX:
        g0, g1, g2 = (np.convolve(f, p_fn) for f in factors)
        return g0, g1, g2
    g0, g1, g2 = fft_convolve(p_fn, *factors)
    # G0 and G2 are convolutions of non-negative arrays: clip FFT round-off.
    return np.maximum(g0, 0.0), g1, np.maximum(g2, 0.0)


def exact_moments(
    metrics: tuple[str, ...],
    laws: CountLaws,
    *,
    zero_division: float = 0.0,
    adjusted: bool = False,
    support_weighted: bool = False,
) -> dict[str, tuple[float, float]]:
    """Exact ``(E, Var)`` of each metric from the laws of TP and FN.

    The three convolutions are shared by all ``metrics``. TP is centred on
    its mean ``μ_T`` before the convolutions, so that the conditional terms
    of the variance are of the order of the metric's own spread and the
    centred sum loses no digits. ``support_weighted`` multiplies the metric
    by ``S/M`` (a class's term of scikit-learn's ``average="weighted"``).
    A metric that is undefined (NaN) with positive probability has NaN
    moments.
    """
    (offset_tp, p_tp), (offset_fn, p_fn) = laws.tp, laws.fn
    mean_tp = laws.mean_tp
    centred = (offset_tp - mean_tp) + np.arange(p_tp.size, dtype=np.float64)
    g0, g1, g2 = _convolve_moments(centred, p_tp, p_fn)
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
            alpha, beta = (
                np.where(undefined, 0.0, alpha),
                np.where(undefined, 0.0, beta),
            )
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


def _exact_moments(
    metrics: tuple[str, ...], pi: np.ndarray, pred_pos: np.ndarray
) -> dict[str, tuple[float, float]]:
    """Exact ``(E, Var)`` from the per-sample probabilities ``π_i``."""
    pi_pos = pi[pred_pos]
    laws = CountLaws(
        poisson_binomial_window(pi_pos),
        poisson_binomial_window(pi[~pred_pos]),
        float(pi_pos.sum()),
        int(np.count_nonzero(pred_pos)),
        int(pi.size),
    )
    return exact_moments(metrics, laws)


def _delta_moments(
    metric: str,
    sums: tuple[float, float, float, float],
    n_pred_pos: float,
    n_samples: float,
) -> tuple[float, float]:
    """Second-order delta method in (TP, FN).

    ``sums`` are ``(E[TP], E[FN], Var[TP], Var[FN])`` (weighted counts with
    sample weights: then ``n_pred_pos`` and ``n_samples`` are weight totals).
    ``E ≈ f + ½ (f_TT V_T + f_FF V_F)`` and ``Var ≈ f_T² V_T + f_F² V_F`` at
    the means; TP and FN are independent, so there are no cross terms.
    """
    t, f, v_t, v_f = sums
    value, d_t, d_f, d_tt, d_ff = COUNT_METRICS[metric].delta(
        t, f, n_pred_pos, n_samples
    )
    expected = value + 0.5 * (d_tt * v_t + d_ff * v_f)
    variance = d_t * d_t * v_t + d_f * d_f * v_f
    return float(expected), float(variance)
