"""The label-noise pivots of the regression estimates: the quantiles of the
studentized estimate at :data:`~sklearn_noisy._noisy_score.PIVOT_PROBABILITIES`
that make an interval follow its skew (user guide: :ref:`error_budget_intervals`).
Each pivot names its construction (``method``), which the interval reports.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy.special import ndtri, stdtrit

from ...._noisy_score import (
    PIVOT_PROBABILITIES,
    ConfidenceInterval,
    NoisyScore,
    cornish_fisher_pivot,
)
from ....utils._unified_interval import near_bound, unified_interval
from .quadrature import LEGENDRE_64
from .sums import R2Sums, weighted

__all__ = [
    "EstimatedSigmaPivot",
    "FiducialPivot",
    "LogPivot",
    "SigmaHatPivot",
    "StudentPivot",
    "StudentizedPivot",
    "UnifiedFiducialPivot",
    "fiducial_pivots",
    "folded_cumulants",
    "log_r2_pivots",
    "r2_label_cumulants",
    "remeasurement_r2_pivots",
    "second_order_log_pivots",
    "skew_pivots",
    "student_pivot",
]


def skew_pivots(
    totals: np.ndarray,
    w_sum: float,
    variance: np.ndarray,
    raw: np.ndarray,
    *,
    studentized: bool = False,
    known: bool = False,
) -> list[tuple[float, ...] | None]:
    """Each output's Cornish–Fisher pivot over the label noise of the truth or
    nominal MSE from its :func:`~.sums.skew_sums` (user guide: :ref:`skewed
    estimates <truth_skew>`): for the unbiased variance estimate ``raw / W²``
    (where positive; the reported ``variance`` is floored), on Student's base
    at the Satterthwaite degrees of freedom ``2 raw² / totals[2]`` of its σ̂
    part (σ ``known``: of its part over the labels, with the reported
    ``variance``, at least the floor, for ``raw``), rescaled to ``variance``;
    if ``studentized`` (the truth with σ̂) half those, as R²'s, not rescaled: a
    :class:`SigmaHatPivot`."""
    estimated = (totals[2] > 0.0) & (raw > 0.0)
    unbiased = np.where(estimated, raw / w_sum**2, variance)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = w_sum**3 * unbiased**1.5
        skew, covariance = totals[0] / scale, totals[1] / scale
        spread = variance * w_sum**2 if known else raw
        factor = 1.0 if studentized else 2.0
        dof = np.where(estimated, factor * spread * spread / totals[2], np.inf)
        ratio = unbiased / variance
    base = stdtrit(dof[:, None], PIVOT_PROBABILITIES) - ndtri(PIVOT_PROBABILITIES)
    pivots = []
    rows = zip(skew, covariance, base, ratio, estimated, strict=True)
    for g, c, shift, r, own in rows:
        pivot = cornish_fisher_pivot(float(g), float(c))
        if pivot is not None and own and np.isfinite(shift).all():
            unit = 1.0 if studentized else math.sqrt(r)  # or at ``variance``
            kind = SigmaHatPivot if studentized else StudentizedPivot
            pivot = kind(((np.asarray(pivot) + shift) * unit).tolist())
            pivot.unbiased = float(r) if studentized else 1.0
        pivots.append(pivot)
    return pivots


class StudentizedPivot(tuple):
    """A pivot of the estimate studentized by its unbiased variance estimate,
    ``unbiased`` times the reported (floored) variance: the interval takes its
    ends, and its unified one near a bound, at that SD."""

    unbiased = 1.0


class SigmaHatPivot(StudentizedPivot):
    """A truth estimate's pivot with σ̂ (``sigma_dof``), whose sampling pivot
    is an :class:`EstimatedSigmaPivot` (``test_set_sampling``)."""

    @staticmethod
    def sampling_pivot(
        quantiles: Any, score: NoisyScore, sampling: float, dof: float
    ) -> EstimatedSigmaPivot:
        return EstimatedSigmaPivot(quantiles, score, sampling, dof)


def folded_cumulants(
    t: np.ndarray, estimate: Callable[[np.ndarray], np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """The third cumulant of ``|t + Z|``, ``Z ~ N(0, 1)``, and its covariance
    with ``estimate(|t + Z|)``, elementwise: Gauss–Legendre quadrature of the
    folded density ``φ(a − t) + φ(a + t)`` on ``[0, t + 10]``."""
    nodes, weights = LEGENDRE_64
    half = (t[..., None] + 10.0) / 2.0
    folded = half * (nodes + 1.0)
    density = np.exp(-0.5 * (folded - t[..., None]) ** 2)
    density = density + np.exp(-0.5 * (folded + t[..., None]) ** 2)
    mass = half * weights * density / math.sqrt(2.0 * math.pi)
    centred = folded - (folded * mass).sum(axis=-1, keepdims=True)
    k = estimate(folded)
    k = k - (k * mass).sum(axis=-1, keepdims=True)
    return (centred**3 * mass).sum(axis=-1), (centred * k * mass).sum(axis=-1)


class FiducialPivot(tuple):
    """A label pivot from the fiducial distribution of ``τ²``."""

    method = "fiducial"


class UnifiedFiducialPivot(FiducialPivot):
    """The known offsets' fiducial pivot of the MSE whose ends near 0 follow
    Feldman and Cousins's ordering (``offsets_mse_pivots``)."""

    method = "fiducial_unified"


def _through(a: Any, b: Any, c: Any, tau2: np.ndarray) -> Any:
    """The quadratic in ``τ²`` through ``a, b, c`` at ``τ² = 0, 1, 2``."""
    curve = (a - 2.0 * b + c) / 2.0
    return a + (b - a - curve) * tau2 + curve * tau2**2


def fiducial_pivots(
    estimate: np.ndarray,
    variance: np.ndarray,
    sums_at: Callable[..., tuple],
    shared: Any,
    truth: Callable[..., np.ndarray] | None = None,
) -> list[tuple[float, ...] | None]:
    """Each output's truth pivot when ``τ²`` was estimated in a one-way analysis
    (``sums_at(shared=...)``: the estimate's sums at known offsets, each
    quadratic in ``τ²``: three evaluations), ``τ²`` drawn from Weerahandi's
    generalized pivotal quantity (seeded, 20,000 draws; user guide:
    :ref:`shared_offsets`). ``truth(sums, τ², Z)``: the truth at each draw from
    the sums there (default the MSE's ``A − τ² − Z √V(τ²)``, ``V`` floored)."""
    fits = []
    for t in (0.0, 1.0, 2.0):
        known = dataclasses.replace(
            shared, tau2=np.full_like(shared.tau2, t), dof=None, fiducial=None
        )
        fits.append(sums_at(shared=known))
    rng = np.random.default_rng(0)
    tau2 = shared.fiducial_tau2(rng, 20000)[:, None]
    z = rng.standard_normal(tau2.shape)
    if truth is None:
        (w_sum, d2, s2, *low), (_, _, _, *one), (_, _, _, *two) = (f[:5] for f in fits)
        spread = [_through(*v, tau2) for v in zip(low, one, two, strict=True)]
        draws = (d2 - s2) / w_sum - tau2 - z * np.sqrt(np.maximum(*spread)) / w_sum
    else:
        sums = type(fits[0])(*(_through(*v, tau2) for v in zip(*fits, strict=True)))
        draws = truth(sums, tau2, z)
    quantiles = np.quantile(draws, 1.0 - np.asarray(PIVOT_PROBABILITIES), axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        pivots = (estimate - quantiles) / np.sqrt(variance)
    return [
        FiducialPivot(p) if np.all(np.isfinite(p)) else None for p in pivots.T.tolist()
    ]


class StudentPivot(tuple):
    """Student's quantiles: the pivot of an estimate whose variance has
    estimated parts (Welch–Satterthwaite's degrees of freedom); ``both_dof``:
    those of the part of the variance that the test-set sampling's terms do not
    hold, for the interval with both sources (``NoisyScore._dof``);
    ``prediction_dof``: the prediction interval's where not those."""

    method = "t"
    both_dof = math.inf
    prediction_dof: float | None = None


def student_pivot(dof: float, both_dof: float = math.inf) -> StudentPivot:
    """Student's quantiles at ``PIVOT_PROBABILITIES`` for ``dof``."""
    pivot = StudentPivot(float(t) for t in stdtrit(dof, PIVOT_PROBABILITIES))
    pivot.both_dof = float(both_dof)
    return pivot


class LogPivot(SigmaHatPivot):
    """The pivot of ``log(1 − R²)``; ``linear``: that of R² itself (near 1, off
    the log scale), or None."""

    linear: tuple[float, ...] | None = None


def r2_label_cumulants(
    y: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    w: np.ndarray | None,
    sums: R2Sums,
    sigma_dof: Any = None,
) -> tuple[np.ndarray, ...]:
    """Over the label noise, σ known (``sigma_dof`` None): the per-sample terms
    of ``L``, the first-order expansion of ``log(A/B)`` (for
    :func:`second_order_log_pivots`). With ``sigma_dof`` (``ν``, ``σ̂² ~ σ²
    χ²_ν/ν``), per output, each unbiased in σ̂: ``Var L``, the skewness of
    ``L``, σ̂'s part of ``Cov(L, V̂)/Var(L)^1.5`` (``V̂``: the
    variance estimate), the skewness of ``A/B`` and its covariance with the
    delta-method variance with the ratio's second-order terms, and the
    Satterthwaite degrees of freedom of σ̂'s part of ``V̂`` (user guide:
    :ref:`error_budget_new_set`)."""
    a, b = sums.sse_truth, sums.sst_truth
    w_sum = float(y.shape[0]) if w is None else float(w.sum())
    s2 = np.broadcast_to(np.square(sigma), y.shape)
    i = 0.0 if sigma_dof is None else 1.0 / np.asarray(sigma_dof, dtype=float)
    c4 = 1.0 + 2.0 * i  # σ̂⁴ / c4 and σ̂⁶ / c6 are unbiased for σ⁴ and σ⁶
    c6 = c4 * (1.0 + 4.0 * i)
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1.0 / a - 1.0 / b
        c = y - weighted(y, w) / w_sum
        v = (y - y_pred) / a - c / b
        v2 = v * v
        if sigma_dof is None:  # 2σv·ε + ασ²(ε² − 1): d̃² = 4σ²ṽ², e = ασ²
            d2, e = 4.0 * s2 * v2, alpha * s2
            e2 = e * e  # κ₂, κ₃, Cov(·, κ̂₂), Var κ̂₂: unbiased from ṽ
            terms = d2 - 2.0 * e2, (6.0 * d2 - 16.0 * e2) * e, (4.0 * d2 - 8.0 * e2) * e
            return (*terms, (16.0 * d2 - 32.0 * e2) * e2)
        k2 = weighted(4.0 * s2 * v2 - 2.0 * alpha**2 * s2 * s2 * (1.0 - i) / c4, w, 2)
        s6 = s2**3 / c6
        k3 = weighted(
            24.0 * alpha * s2 * s2 * v2 / c4 - (16.0 + 8.0 * i * i) * alpha**3 * s6,
            w,
            3,
        )
        s4v2 = alpha * s2 * s2 * v2 / c4
        scale = k2**1.5
        noise = weighted(16.0 * s4v2 - 8.0 * alpha**3 * s6, w, 3) / scale
        own = weighted(8.0 * i * ((1.0 - i) * alpha**3 * s6 - s4v2), w, 3) / scale
        # r = Cov(L, B)/(B SD L): −6 r in the skewness, −4 r in the covariance
        r = weighted(4.0 * s2 * v * c - 2.0 * alpha * s2 * s2 * (1.0 - i) / c4, w, 2)
        r = r / (b * np.sqrt(k2))
        sign = np.sign(a)  # L's terms carry 1/A: those of A/B whatever A's sign
        dof = k2 * k2 / weighted(32.0 * i * s2 * s2 * v2 * v2 / c4, w, 4)
        ratio = sign * (k3 / scale - 6.0 * r), sign * (noise + own - 4.0 * r)
        return k2, k3 / scale, own, *ratio, dof


def log_r2_pivots(
    y: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    w: np.ndarray | None,
    sums: R2Sums,
    sigma_dof: Any = None,
    unbiased: np.ndarray | None = None,
    variance: np.ndarray | None = None,
) -> list[tuple[float, ...] | None]:
    """Each output's Cornish–Fisher pivot of the truth ``log(1 − R²)``. σ known:
    :func:`second_order_log_pivots` of :func:`r2_label_cumulants`' terms, with,
    where ``u = A/B`` is at least its SD ``√variance`` (``a = SD/u ≤ 1``), a
    ``linear`` one of R² that is the same interval, ``expm1(−a q)/a`` (within
    ``2z`` SDs of 1 the unified interval is widened to hold it). With
    ``sigma_dof``: the first-order skewness, σ̂'s covariance term and Student's
    quantiles at the Satterthwaite degrees of freedom for the base, and a
    ``linear`` pivot of R² itself (near 1) from ``A/B``'s second-order
    skewness and covariance (user guide: :ref:`error_budget_new_set`)."""
    if sigma_dof is None:
        terms = r2_label_cumulants(y, y_pred, sigma, w, sums)
        pivots = second_order_log_pivots(terms, w, sums)
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.sqrt(variance) * sums.sst_truth / sums.sse_truth
        for index, (pivot, scale) in enumerate(zip(pivots, a, strict=True)):
            if pivot is not None and 0.0 < scale <= 1.0:
                pivot = pivots[index] = StudentizedPivot(pivot)
                linear = np.expm1(-scale * np.array(pivot[::-1])) / scale
                pivot.linear = tuple(linear.tolist())
        return pivots
    *_, skew, own, ratio, covariance, dof = r2_label_cumulants(
        y, y_pred, sigma, w, sums, sigma_dof
    )
    z = ndtri(np.asarray(PIVOT_PROBABILITIES))
    pivots = []
    unbiased = np.ones(len(dof)) if unbiased is None else unbiased
    for cumulants in zip(skew, own, ratio, covariance, dof, unbiased, strict=True):
        g, c, g_ratio, c_ratio, f, share = (float(x) for x in cumulants)
        log = cornish_fisher_pivot(g, c)
        linear = cornish_fisher_pivot(-g_ratio, -c_ratio)  # R² = 1 − A/B
        if log is None or linear is None or not f > 0.0:
            pivots.append(None)
            continue
        # V̂'s own variance: Student's base, on both scales (the unified
        # interval near 1 is at the unbiased SD)
        shift = np.asarray(student_pivot(f)) - z
        pivot = LogPivot(np.add(log, shift).tolist())
        pivot.linear, pivot.unbiased = tuple(np.add(linear, shift).tolist()), share
        pivots.append(pivot)
    return pivots


def second_order_log_pivots(
    terms: Sequence[np.ndarray], w: np.ndarray | None, sums: R2Sums
) -> list[tuple[float, ...] | None]:
    """Each output's Cornish–Fisher pivot of the truth ``log(A/B)`` (``R² = 1 −
    A/B``) to second order, on Student's base: ``terms`` are the per-sample
    ``κ₂``, ``κ₃``, covariance with the variance estimate and its variance of
    ``L``, the first-order expansion, each unbiased; the log's curvature adds
    ``3 gᵀΣHΣg`` to ``κ₃`` and the bias ``tr(HΣ)/2``, and the SD on the log
    scale, ``√V̂/(A/B)``, moves with ``A`` and ``B`` too (user guide:
    :ref:`poisson_noise`, :ref:`error_budget_new_set`)."""
    a, b = sums.sse_truth, sums.sst_truth
    with np.errstate(divide="ignore", invalid="ignore"):
        k2, k3, cov, v = (
            weighted(t, w, p) for t, p in zip(terms, (2, 3, 3, 4), strict=True)
        )
        va, vb, c = sums.var_sse, sums.var_sst, sums.cov
        p_a, p_b = va / a - c / b, c / a - vb / b  # Cov(L, A), Cov(L, B)
        k3 = k3 + 3.0 * (p_b * p_b / b**2 - p_a * p_a / a**2)
        cov = cov + 2.0 * p_a * (c / (a * a * b) - va / a**3)
        cov = cov + 2.0 * p_b * (c / (a * b * b) - vb / b**3)
        rows = np.stack([k3, cov, v])
        shift = (vb / b**2 - va / a**2) / (2.0 * np.sqrt(k2))
    pivots = skew_pivots(rows, 1.0, k2, k2)
    return [
        p if p is None else type(p)(np.add(p, s).tolist())
        for p, s in zip(pivots, shift, strict=True)
    ]


def remeasurement_r2_pivots(
    y: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    w: np.ndarray | None,
    sums: R2Sums,
    variance: np.ndarray,
) -> list[tuple[float, ...] | None]:
    """Each output's pivot of the remeasurement ``log(1 − R²) = log(X/Y)`` over
    the label noise, σ known: Student's quantiles at the Satterthwaite degrees
    of freedom ``2k²/Var k̂₂`` of its variance estimate, ``k`` the reported
    ``variance`` (at least the σ⁴ floor) over ``(X/Y)²``, ``Var k̂₂`` of the
    unbiased first-order ``Var log(X/Y)`` by the delta method in the labels
    (through ``X``, ``Y`` and the mean), less ``√k/2``: ``log(X/Y)`` is centred
    ``k/2`` below ``log E(X/Y)``; those degrees of freedom also count in the
    prediction interval's, ``prediction_dof`` (user guide:
    :ref:`error_budget_new_set`)."""
    s2 = np.broadcast_to(np.square(sigma), y.shape)
    ones = np.ones(y.shape[0]) if w is None else w
    x, total, wj = sums.sse, sums.sst, ones[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        r, c = y - y_pred, y - weighted(y, w) / ones.sum()
        alpha, v = 1.0 / x - 1.0 / total, r / x - c / total
        s4 = weighted(s2 * s2, w, 2)
        # ∂k̂₂/∂y_j: through v_j, the labels' mean, X and Y
        grad = 8.0 * wj * s2 * v * alpha + 8.0 * weighted(s2 * v, w, 2) / (
            ones.sum() * total
        )
        grad -= 2.0 * r / x**2 * (weighted(8.0 * s2 * v * r, w, 2) - 4.0 * alpha * s4)
        grad += (
            2.0 * c / total**2 * (weighted(8.0 * s2 * v * c, w, 2) - 4.0 * alpha * s4)
        )
        k = variance * np.square(total / x)
        dof = 2.0 * k * k / weighted(s2 * (wj * grad) ** 2, None)
    pivots = []
    for f, half in zip(dof, np.sqrt(k) / 2.0, strict=True):
        pivot = StudentPivot(np.subtract(student_pivot(float(f)), half).tolist())
        pivot.prediction_dof = float(f)  # the plug-in's (NoisyScore._dof)
        pivots.append(pivot if f > 0.0 and np.isfinite(pivot).all() else None)
    return pivots


class EstimatedSigmaPivot(Sequence):
    """The sampling pivot of a truth estimate with σ̂ (``sigma_dof``): the
    terms' bootstrap-t ``quantiles`` for the interval with both sources, and the
    prediction interval (user guide: :ref:`error_budget_new_set`). The label
    variance and the terms' spread share σ̂'s noise: the prediction's ``variance
    + 2 sampling_variance`` keeps the terms' degrees of freedom ``dof``, those
    of the interval with both sources. The MSE's is that interval where the
    ``sampling`` variance is 0, the label-noise one of ``score``; R²'s (near 1,
    where it is asked: off its log scale) takes the label part at its unbiased
    SD, as its label-noise interval."""

    def __init__(self, quantiles: Any, score: NoisyScore, sampling: float, dof: float):
        self.quantiles, self.score = quantiles, score
        self.sampling, self.dof = sampling, dof

    def __len__(self) -> int:
        return len(self.quantiles)

    def __getitem__(self, index: Any) -> Any:
        return self.quantiles[index]

    def __reduce__(self) -> tuple:
        return (type(self), (tuple(self), self.score, self.sampling, self.dof))

    def prediction(
        self, estimate: float, sd: float, level: float
    ) -> ConfidenceInterval | None:
        """The prediction interval (the RMSE's: of the MSE, then its root)."""
        score, (lower, upper) = self.score, self.score._range
        dof = self.dof if self.sampling > 0.0 else math.inf
        if isinstance(score.label_pivot, LogPivot):  # near 1 (else the log scale)
            label = score.variance * score.label_pivot.unbiased
            sd = math.sqrt(label + 2.0 * self.sampling)
        elif self.sampling == 0.0:
            return score.confidence_interval(level)
        t = float(stdtrit(dof, 0.5 + level / 2.0))
        if lower == 0.0 and estimate > t * sd:  # Student's t on the log scale
            half = t * sd / estimate
            return ConfidenceInterval(*(estimate * np.exp([-half, half])), "log_t")
        sd_t = sd * t / float(ndtri(0.5 + level / 2.0))
        ends = unified_interval(
            estimate, sd_t, lower=lower, upper=upper, confidence=level
        )
        method = "unified" if near_bound(estimate, sd_t, lower, upper, level) else "t"
        return ConfidenceInterval(*ends, method)
