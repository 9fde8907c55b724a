"""The moments of the binary count metrics: exact algorithm and delta method.

For binary labels, let ``P`` be the samples predicted positive (``n_P`` of them,
``n_N = M - n_P`` predicted negative) and ``π_i`` the probability that sample
``i`` is observed positive. The true-positive count ``TP`` and the
false-negative count ``FN`` are independent Poisson-binomial variables;
``S = TP + FN`` is the number of observed positives (user guide:
:ref:`formula_binary_counts`).

* Given ``S = n``, precision, recall, F1, balanced accuracy and MCC are all
  affine in TP, ``metric = α(n) + β(n) TP`` (:func:`_affine_coefficients`).
  With the PMFs ``p_T`` and ``p_F`` of TP and FN (:mod:`._poisson_binomial`,
  O(M log² M)) and the convolutions ``G_r = ((a - μ_T)^r p_T) * p_F``,
  ``r = 0, 1, 2``, the mean and the centred variance are finite sums over
  ``n``: exact up to float64 round-off (:func:`_exact_moments`).
* :func:`_delta_moments` is the second-order delta method in ``(TP, FN)``,
  accurate for large M (:data:`_DELTA_NOTES`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._poisson_binomial import fft_convolve, poisson_binomial_window
from ._sklearn_arithmetic import ba_mcc_of_confusion

#: Convolutions with a factor at most this long are computed directly.
_DIRECT_CONVOLUTION_MAX = 64

#: The description of the ``method`` option of the metrics that offer it.
_METHOD_PARAMETER = """
    method : {"exact", "delta"}, default="exact"
        ``"exact"``: the Poisson-binomial algorithm (user guide:
        :ref:`formula_binary_counts`). ``"delta"``: the second-order delta
        method in (TP, FN), for very large samples (see Notes); binary only."""

#: The Notes section of the metrics that offer ``method="delta"``.
_DELTA_NOTES = """\
    The delta method ignores zero-division events, which carry the whole
    variance when few positives are observed. Its accuracy against the exact
    algorithm, worst case over recall, F1, balanced accuracy and MCC and over
    balanced labels, 5 % positives, a single positive and no positive
    (``benchmarks/delta_accuracy.py``; user guide:
    :ref:`formula_binary_counts`)::

        M      q: 0.05 / 0.2 / per-sample U(0, 0.3)
               max |error of E| / SD      max relative error of Var
        10     0.18 / 0.08 / 0.08         +42 % / -60 % / -56 %
        20     0.07 / 0.04 / 0.07         +48 % / -60 % / -63 %
        50     0.10 / 0.01 / 0.03         -66 % / -33 % / -48 %
        200    0.03 / 1e-3 / 2e-3         -43 % / -9 % / -11 %
        500    8e-3 / 2e-4 / 6e-4         -19 % / -4 % / -5 %
        5000   1e-4 / 7e-6 / 1e-5         -2 % / -0.4 % / -0.5 %

    The worst case was always a single positive label (recall, or balanced
    accuracy): the error is governed by the expected number of observed
    positives, not by M, and is below 1 % only when it reaches a few
    hundred. A constant prediction leaves balanced accuracy at 1/2 except
    where a single class is observed; the delta method cannot see those
    events, so there the exact algorithm is used (``method="exact"`` in the
    result). The exact method costs O(M log² M) (about 0.1 s at M = 10⁵ and
    1 s at M = 10⁶), so the delta method is only needed for M well above
    10⁶."""


# --------------------------------------------------------------------------
# The metrics as affine functions of TP given S = n
# (user guide: formula_binary_counts, the table)
# --------------------------------------------------------------------------


def _safe_reciprocal(denominator: np.ndarray) -> np.ndarray:
    """``1/denominator`` where it is positive, 0 elsewhere."""
    out = np.zeros_like(denominator, dtype=np.float64)
    np.divide(1.0, denominator, out=out, where=denominator > 0)
    return out


def _affine_coefficients(
    metric: str,
    n: np.ndarray,
    n_pred_pos: float,
    n_samples: float,
    *,
    zero_division: float = 0.0,
    adjusted: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """``(α(n), β(n))`` with ``metric = α(n) + β(n) TP`` given ``S = n``.

    ``metric`` is ``"precision"``, ``"recall"``, ``"f1"``,
    ``"balanced_accuracy"`` or ``"matthews_corrcoef"``. Where the metric is
    undefined, precision, recall and F1 take ``zero_division`` (``α = z``,
    ``β = 0``; NaN stays NaN); balanced accuracy averages only the classes
    present in the observed labels (as scikit-learn) and, with ``adjusted``,
    is NaN when a single class is observed; MCC is 0 when undefined.
    """
    n = np.asarray(n, dtype=np.float64)
    m = float(n_samples)
    n_pos = float(n_pred_pos)
    n_neg = m - n_pos
    zeros = np.zeros_like(n)
    if metric == "precision":
        if n_pos > 0:
            return zeros, np.full_like(n, 1.0 / n_pos)
        return np.full_like(n, zero_division), zeros
    if metric == "recall":
        return np.where(n > 0, 0.0, zero_division), _safe_reciprocal(n)
    if metric == "f1":
        return np.where(n_pos + n > 0, 0.0, zero_division), 2.0 * _safe_reciprocal(
            n_pos + n
        )
    if metric == "balanced_accuracy":
        inv_neg = _safe_reciprocal(m - n)  # 1/(M - n), 0 at n = M
        inv_pos = _safe_reciprocal(n)  # 1/n, 0 at n = 0
        alpha = 0.5 * (n_neg - n) * inv_neg
        beta = 0.5 * (inv_pos + inv_neg)
        single = (n == 0) | (n == m)
        if adjusted:  # (BA - 1/2) / (1/2) with two classes; 1/0 with one
            return np.where(single, np.nan, 2.0 * alpha - 1.0), 2.0 * beta
        # Only one class observed: BA is the recall of that class alone.
        alpha = np.where(n == 0, n_neg / m, np.where(n == m, 0.0, alpha))
        beta = np.where(n == 0, 0.0, np.where(n == m, 1.0 / m, beta))
        return alpha, beta
    # matthews_corrcoef
    inv_d = _safe_reciprocal(np.sqrt(n_pos * n_neg) * np.sqrt(n * (m - n)))
    return -n_pos * n * inv_d, m * inv_d


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

    The same operations in the same order as :mod:`sklearn.metrics` on the
    confusion matrix, so that the result agrees to the last bit (an F1 of
    ``2·3/(7 + 3)`` is 0.6, not 0.6000000000000001).
    """
    tp, s, n_pos, m = float(tp), float(n_obs_pos), float(n_pred_pos), float(n_samples)
    if metric == "precision":
        return tp / n_pos if n_pos else float(zero_division)
    if metric == "recall":
        return tp / s if s else float(zero_division)
    if metric == "f1":
        denominator = 1.0 * s + n_pos
        return 2.0 * tp / denominator if denominator else float(zero_division)
    tn = (m - n_pos) - (s - tp)
    confusion = np.array([[tn, n_pos - tp], [s - tp, tp]])
    return ba_mcc_of_confusion(metric, confusion, adjusted=adjusted)


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
        alpha, beta = _affine_coefficients(
            metric,
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
    m = float(n_samples)
    n_pos = float(n_pred_pos)
    n_neg = m - n_pos
    s = t + f
    if metric == "recall":
        value = t / s
        d_t, d_f = f / s**2, -t / s**2
        d_tt, d_ff = -2.0 * f / s**3, 2.0 * t / s**3
    elif metric == "f1":
        d = n_pos + s
        value = 2.0 * t / d
        d_t, d_f = 2.0 * (n_pos + f) / d**2, -2.0 * t / d**2
        d_tt, d_ff = -4.0 * (n_pos + f) / d**3, 4.0 * t / d**3
    elif metric == "balanced_accuracy":
        u, w = n_neg - f, m - s
        value = 0.5 * (t / s + u / w)
        d_t = 0.5 * (f / s**2 + u / w**2)
        d_f = 0.5 * (-t / s**2 - (n_pos - t) / w**2)
        d_tt = 0.5 * (-2.0 * f / s**3 + 2.0 * u / w**3)
        d_ff = 0.5 * (2.0 * t / s**3 - 2.0 * (n_pos - t) / w**3)
    else:  # matthews_corrcoef
        if n_pos == 0 or n_neg == 0:  # D = 0 for every labelling: MCC = 0
            return 0.0, 0.0
        c = np.sqrt(n_pos * n_neg)
        h = s * (m - s)
        w0 = h**-0.5
        w1 = -0.5 * h**-1.5 * (m - 2.0 * s)
        w2 = 0.75 * h**-2.5 * (m - 2.0 * s) ** 2 + h**-1.5
        num = n_neg * t - n_pos * f
        value = num * w0 / c
        d_t, d_f = (n_neg * w0 + num * w1) / c, (-n_pos * w0 + num * w1) / c
        d_tt = (2.0 * n_neg * w1 + num * w2) / c
        d_ff = (-2.0 * n_pos * w1 + num * w2) / c
    expected = value + 0.5 * (d_tt * v_t + d_ff * v_f)
    variance = d_t * d_t * v_t + d_f * d_f * v_f
    return float(expected), float(variance)
