"""R² under batch offsets shared within a batch (``groups``, ``sigma_shared``):
the offsets' terms of the quadratic forms' (co)variances of ``1 − N/D`` and
its third cumulant, and the MSE's fiducial pivot (user guide:
:ref:`shared_offsets`)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import gammainc, ndtr, ndtri

from ...._noisy_score import PIVOT_PROBABILITIES
from ....utils._unified_interval import unified_normal_mean
from .pivots import FiducialPivot, UnifiedFiducialPivot
from .sums import R2Sums, batch_products, offset_sums

__all__ = [
    "offsets_cube_trace",
    "offsets_mse_pivots",
    "offsets_third_cumulant",
    "unified_targets",
    "with_offsets",
]


def with_offsets(
    sums: R2Sums,
    shared: Any,
    weight: np.ndarray | None,
    sigma: Any,
    forms: tuple[np.ndarray, np.ndarray],
    w2s2_sum: np.ndarray,
    centred: bool,
    exact_batches: bool,
) -> R2Sums:
    """``sums`` with the batch offsets' terms of the quadratic forms' (co)variances;
    unless ``exact_batches``, the true batch products estimated as for the MSE
    (user guide: :ref:`shared_offsets`)."""
    d, c = forms
    tau2, w_g, s2_g, (d_g, c_g) = offset_sums(shared, weight, sigma, d, c)
    w_sum = float(w_g.sum())
    t2 = (tau2 * w_g).sum(axis=0)
    beta = (tau2 * w_g * w_g).sum(axis=0)
    t1 = (tau2 * (2.0 * s2_g + tau2 * w_g * w_g)).sum(axis=0)
    t2_ = (tau2 * w_g * (2.0 * s2_g + tau2 * w_g * w_g)).sum(axis=0)
    tr_dd = t1
    tr_dc = t1 - t2_ / w_sum
    tr_cc = t1 - 2.0 * t2_ / w_sum + (2.0 * beta * w2s2_sum + beta * beta) / w_sum**2
    b_dd = (tau2 * d_g * d_g).sum(axis=0)
    b_cc = (tau2 * c_g * c_g).sum(axis=0)
    b_cd = (tau2 * c_g * d_g).sum(axis=0)
    if not exact_batches:
        spread = (w2s2_sum + beta) / w_sum**2
        a_g = s2_g + tau2 * w_g * w_g
        batch_cc = a_g * (1.0 - 2.0 * w_g / w_sum) + w_g * w_g * spread
        noises = (batch_cc,) * 3
        if not centred:
            noises = (a_g, batch_cc, a_g * (1.0 - w_g / w_sum))
        products = batch_products(shared, weight, sigma, forms, (tau2, w_g))
        b_dd, b_cc, b_cd = (
            p + (tau2 * noise).sum(axis=0)
            for p, noise in zip(products, noises, strict=True)
        )
    # the truth sums subtract Σ_g a_g τ̂² (SSE) and Σ_g c_g τ̂² (SST)
    c = w_g - w_g * w_g / w_sum
    a = c if centred else w_g
    sigma_parts = (
        shared.tau2_covariance(a, a),
        shared.tau2_covariance(c, c),
        shared.tau2_covariance(a, c),
    )
    if centred:  # X is a C-form too
        tr_dd = tr_dc = tr_cc
    return sums._replace(
        sse_truth=sums.sse_truth - (t2 - beta / w_sum if centred else t2),
        sst_truth=sums.sst_truth - (t2 - beta / w_sum),
        var_sse=sums.var_sse + 4.0 * b_dd - 2.0 * tr_dd,
        var_sst=sums.var_sst + 4.0 * b_cc - 2.0 * tr_cc,
        cov=sums.cov + 4.0 * b_cd - 2.0 * tr_dc,
        floor_sse=sums.floor_sse + 2.0 * tr_dd,
        floor_sst=sums.floor_sst + 2.0 * tr_cc,
        floor_cov=sums.floor_cov + 2.0 * tr_dc,
        var_sse_sigma=sums.var_sse_sigma + sigma_parts[0],
        var_sst_sigma=sums.var_sst_sigma + sigma_parts[1],
        cov_sigma=sums.cov_sigma + sigma_parts[2],
    )


def offsets_cube_trace(shared: Any, weight: np.ndarray | None, sigma: Any) -> Any:
    """The batch offsets' part of ``tr((PΣ)³)``, ``P = diag(w)``, per output: the
    MSE's third cumulant is ``8 tr((PΣ)³)/W³`` and linear terms in ``d``."""
    n_samples = shared.codes.shape[0]
    w = (np.ones(n_samples) if weight is None else weight)[:, None]
    s2 = np.square(np.asarray(sigma, dtype=float))
    s2 = np.full((n_samples, 1), s2) if s2.ndim == 0 else s2
    tau, w_g, s2_g, _ = offset_sums(shared, weight, sigma)
    cubic = tau * w_g * (3.0 * s2_g + tau * w_g * w_g)
    return (tau * (3.0 * shared.group_sum(w**3 * s2 * s2) + cubic)).sum(axis=0)


def offsets_third_cumulant(
    shared: Any, weight: np.ndarray | None, sigma: Any, ratio: Any, centred: bool
) -> np.ndarray:
    """The batch offsets' part of ``κ₃ = E[(N − ρD)² (D − δ)]`` of ``1 − N/D``'s
    noise: ``8 tr(MΣMΣQΣ)`` (``M = P − ρQ``, ``P = diag(w)``, or ``Q`` if
    ``centred``; ``Q = diag(w) − wwᵀ/W``) less its value at ``τ = 0``; the
    linear terms are left out (user guide: :ref:`shared_offsets`)."""
    n_samples = shared.codes.shape[0]
    w = (np.ones(n_samples) if weight is None else weight)[:, None]
    s2 = np.square(np.asarray(sigma, dtype=float))
    s2 = np.full((n_samples, 1), s2) if s2.ndim == 0 else s2
    tau2, w_g, _, _ = offset_sums(shared, weight, sigma)
    r = w / math.sqrt(float(w_g.sum()))  # Q = diag(w) − r rᵀ

    def traces(tau: Any) -> tuple[np.ndarray, ...]:
        """The three products of ``tr((PΣ)³)`` with ``r``, ``P = diag(w)``."""
        r_g = shared.group_sum(r)
        x = s2 * r + (tau * r_g)[shared.codes]  # Σ r
        r_r = (s2 * r * r).sum(axis=0) + (tau * r_g * r_g).sum(axis=0)
        one = (w * w * s2 * x * x).sum(axis=0)
        one = one + (tau * shared.group_sum(w * x) ** 2).sum(axis=0)
        return one, r_r * (w * x * x).sum(axis=0), r_r**3

    (f1, f2, f3), (g1, g2, g3) = traces(tau2), traces(0.0 * tau2)
    f0 = offsets_cube_trace(shared, weight, sigma)
    a, b = 1.0 - ratio, (ratio - 1.0 if centred else ratio)  # M = a P + b r rᵀ
    return 8.0 * (
        a * a * f0
        + (2.0 * a * b - a * a) * (f1 - g1)
        + (b * b - 2.0 * a * b) * (f2 - g2)
        - b * b * (f3 - g3)
    )


#: The probabilities of the estimated ``τ²``'s quantiles that
#: :func:`offsets_mse_pivots` averages over.
QUANTILE_NODES = (np.arange(200) + 0.5) / 200


def unified_targets(p0: float, grid: np.ndarray) -> np.ndarray:
    """The probabilities ``P(S ≤ s | T)`` at the ends of the intervals at
    ``grid`` (pairs ``q``, ``1 − q``) when ``P(S ≤ s | 0) = p0``: Feldman and
    Cousins's ordering on the normal score ``x = Φ⁻¹(p0)``, the ends ``Φ(x − μ)``
    at their unified interval ``μ`` of ``N(μ, 1)``, ``μ ≥ 0``; ``grid`` itself
    (the central ends) from ``x ≥ 2z``; NaN if ``p0 = 0``."""
    x, targets = float(ndtri(p0)), grid.copy()
    for k, q in enumerate(grid[grid < 0.5]):
        z = -float(ndtri(q))
        if not x >= 2.0 * z:
            ends = (
                unified_normal_mean(x, 1.0 - 2.0 * q)
                if x > -math.inf
                else (math.nan,) * 2
            )
            targets[[k, -1 - k]] = ndtr(x - ends[1]), ndtr(x - ends[0])
    return targets


def _pearson_below(
    residuals: np.ndarray, sigma: Any, weight: np.ndarray | None, shared: Any, base: Any
) -> list[Callable[[Any, Any], np.ndarray]]:
    """Per output, ``below(t, c)``: ``P(S ≤ Σ w r²)`` at the truth ``t`` and
    the offsets' variances ``c·base`` (per batch), ``S = Σ w d̃²`` taken as
    Pearson's type III with its exact three cumulants; the residuals at ``t``
    are the observed within-batch part (shrunk to its unbiased size) plus the
    batch means scaled to make up ``W t``, so each cumulant is a polynomial in
    ``c`` and the two scales (user guide: :ref:`shared_offsets`)."""
    w = (np.ones(residuals.shape[0]) if weight is None else weight)[:, None]
    s2 = np.square(np.asarray(sigma, dtype=float))
    s2 = np.broadcast_to(s2[:, None] if s2.ndim == 1 else s2, residuals.shape)
    _, w_g, _, _ = offset_sums(shared, weight, sigma)
    b = np.asarray(base, dtype=float).reshape(-1, 1)
    g_sum, ws2 = shared.group_sum, w * s2
    means = g_sum(w * residuals) / w_g
    within = residuals - means[shared.codes]
    u, v = w * within, w * means[shared.codes]  # x = α u + β v
    size, spread = (w * within**2).sum(0), (w_g * means**2).sum(0)
    noise = ws2.sum(0) - (g_sum(w * ws2) / w_g).sum(0)
    known = np.maximum(size - noise, 0.0)
    wsu, wsv, v_g = g_sum(ws2 * u), g_sum(ws2 * v), g_sum(v)
    coefficients = np.array(
        [
            (s2 * u * u).sum(0),  # x'Σx: α², αβ, β², β² c
            2.0 * (s2 * u * v).sum(0),
            (s2 * v * v).sum(0),
            (b * v_g**2).sum(0),
            (ws2 * s2 * u * u).sum(0),  # Σ w (Σx)²: α², αβ, β², αβ c, β² c, β² c²
            2.0 * (ws2 * s2 * u * v).sum(0),
            (ws2 * s2 * v * v).sum(0),
            2.0 * (b * v_g * wsu).sum(0),
            2.0 * (b * v_g * wsv).sum(0),
            (b * b * w_g * v_g**2).sum(0),
            (ws2**2).sum(0),  # tr((PΣ)²): 1, c, c²
            2.0 * (b * g_sum(w * ws2)).sum(0),
            np.broadcast_to((b * b * w_g * w_g).sum(0), size.shape),
            (ws2**3).sum(0),  # tr((PΣ)³): 1, c, c², c³
            3.0 * (b * g_sum(w * ws2**2)).sum(0),
            3.0 * (b * b * w_g * g_sum(w * ws2)).sum(0),
            np.broadcast_to((b**3 * w_g**3).sum(0), size.shape),
            ws2.sum(0),  # E S at t = 0: 1, c
            np.broadcast_to((b * w_g).sum(0), size.shape),
        ]
    )
    w_sum, observed = float(w.sum()), (w * residuals**2).sum(0)

    def below(t: Any, c: Any, j: int) -> np.ndarray:
        p = coefficients[:, j]
        part = np.minimum(known[j], w_sum * t)
        a2 = part / max(size[j], 1e-300)
        b2 = (w_sum * t - part) / max(spread[j], 1e-300)
        ab = np.sqrt(a2 * b2)
        form = a2 * p[0] + ab * p[1] + b2 * (p[2] + c * p[3])
        cross = a2 * p[4] + ab * (p[5] + c * p[7]) + b2 * (p[6] + c * (p[8] + c * p[9]))
        k2 = 2.0 * (p[10] + c * (p[11] + c * p[12])) + 4.0 * form
        k3 = 8.0 * (p[13] + c * (p[14] + c * (p[15] + c * p[16]))) + 24.0 * cross
        shape = 4.0 * k2**3 / (k3 * k3)  # Pearson III: 4 / skewness²
        z = (observed[j] - p[17] - c * p[18] - w_sum * t) / np.sqrt(k2)
        return gammainc(shape, np.maximum(shape + z * np.sqrt(shape), 0.0))

    return [functools.partial(below, j=j) for j in range(observed.size)]


def offsets_mse_pivots(
    residuals: np.ndarray,
    sigma: Any,
    weight: np.ndarray | None,
    shared: Any,
    estimate: np.ndarray,
    variance: np.ndarray,
) -> list[FiducialPivot | None]:
    """Each output's truth MSE pivot under batch offsets: the fiducial
    quantiles of ``T`` from ``S = Σ w d̃²`` (:func:`_pearson_below`),
    ``estimate``: the truth MSE's. Where ``τ²`` was estimated in a one-way
    analysis, ``P(S ≤ Σ w d̃²)`` is averaged over 200 quantiles of 20,000
    seeded draws of Weerahandi's generalized pivotal quantity (the central
    ends); with ``τ²`` known the ends are ordered by :func:`unified_targets`
    (central far from 0), None where ``P(S ≤ Σ w d̃²)`` is 0 at ``T = 0`` (the
    unified interval)."""
    base, scales = shared.tau2, np.ones(1)
    if shared.fiducial is not None:
        draws = shared.fiducial_tau2(np.random.default_rng(0), 20000)
        base, scales = np.ones(shared.n_groups), np.quantile(draws, QUANTILE_NODES)
    pivots, grid = [], np.asarray(PIVOT_PROBABILITIES)
    for j, below in enumerate(_pearson_below(residuals, sigma, weight, shared, base)):

        def mixed(t: np.ndarray, below: Any = below) -> np.ndarray:
            return below(t[:, None], scales).mean(axis=1)

        targets = grid  # an estimated τ²: the central ends (user guide)
        if shared.fiducial is None:
            targets = unified_targets(float(mixed(np.zeros(1))[0]), grid)
        low = np.zeros(grid.size)
        high = low + max(estimate[j], 0.0) + 40.0 * math.sqrt(variance[j])
        for _ in range(60):  # bisection: P(S ≤ Σ w d̃²) falls with T
            t = 0.5 * (low + high)
            above = mixed(t) > targets
            low, high = np.where(above, t, low), np.where(above, high, t)
        with np.errstate(divide="ignore", invalid="ignore"):
            pivot = (estimate[j] - low) / math.sqrt(variance[j])
        kind = FiducialPivot if (targets == grid).all() else UnifiedFiducialPivot
        valid = np.isfinite(targets).all() and np.isfinite(pivot).all()
        pivots.append(kind(pivot.tolist()) if valid else None)
    return pivots
