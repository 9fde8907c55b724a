"""Chunked accumulators of the regression metrics.

:func:`squared_error_sums` takes the sums of the MSE family's engines in one
pass, :func:`accumulate` runs a per-sample kernel (the MAE's,
:func:`absolute_error_kernel`) on a few threads, and :func:`nominal_r2_sums` gives
scikit-learn's sums of ``r2_score`` (user guide: :ref:`formula_mse`,
:ref:`formula_mae`). Their exact distributions are in :mod:`.distributions`.
"""

from __future__ import annotations

import functools
import math
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import joblib
import numpy as np
from scipy.special import erfc

from ....utils._arrays import CHUNK_SIZE, chunk_of, chunks, weighted_sum
from ..test_set_sampling import term_moments

__all__ = [
    "R2Sums",
    "SquaredErrorSums",
    "absolute_error_kernel",
    "absolute_error_offsets",
    "accumulate",
    "bounded_root",
    "folded_moments",
    "nominal_r2_sums",
    "offset_sums",
    "output_column",
    "r2_from_sums",
    "rescaled_squared_error_sums",
    "squared_error_sums",
    "squared_terms",
]

_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)
_INV_SQRT_2 = 1.0 / np.sqrt(2.0)
#: Beyond t = |d|/sigma = 40 the linear-loss function g(t) is below 1e-300.
T_MAX = 40.0

#: ``kernel(d, sigma, w)``: a chunk's per-output sums of the nominal loss, the
#: expected loss (weighted by ``w``) and its variance (by ``w²``).
_Kernel = Callable[[np.ndarray, Any, "np.ndarray | None"], tuple[np.ndarray, ...]]


def _n_threads() -> int:
    """Threads for the heavy kernels: ``OMP_NUM_THREADS`` if set, else CPUs, ≤ 4."""
    value = os.environ.get("OMP_NUM_THREADS", "")
    try:
        n_threads = int(value)
    except ValueError:
        n_threads = _cpu_count()
    return max(1, min(n_threads, 4))


@functools.cache
def _cpu_count() -> int:
    """``joblib.cpu_count()`` (it honours cgroup quotas), read once: it is slow."""
    return joblib.cpu_count()


_WORKSPACE = threading.local()


def _work(slot: int, shape: tuple[int, ...]) -> np.ndarray:
    """A reusable, uninitialised float64 work array of this thread (slot 0: ``d``).

    Reusing the chunk temporaries avoids page-faulting new memory per chunk.
    """
    pool = getattr(_WORKSPACE, "pool", None)
    if pool is None:
        pool = _WORKSPACE.pool = {}
    size = math.prod(shape)
    buffer = pool.get(slot)
    if buffer is None or buffer.size < size:
        buffer = pool[slot] = np.empty(max(size, CHUNK_SIZE))
    return buffer[:size].reshape(shape)


def accumulate(
    kernel: _Kernel,
    y_true: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    weight: np.ndarray | None,
    *,
    parallel: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weighted per-output means ``(nominal, expected, variance)`` of a kernel,
    ``CHUNK_SIZE`` rows at a time (``parallel``: on threads, added in chunk order)."""
    n_samples, n_outputs = y_true.shape

    def chunk_totals(rows: slice) -> np.ndarray:
        chunk = y_true[rows]
        d = np.subtract(chunk, y_pred[rows], out=_work(0, chunk.shape))
        w = None if weight is None else weight[rows]
        return np.stack(kernel(d, chunk_of(sigma, rows), w))

    blocks = list(chunks(n_samples))
    n_threads = min(_n_threads(), len(blocks)) if parallel and len(blocks) > 1 else 1
    totals = np.zeros((3, n_outputs))
    if n_threads > 1:
        with ThreadPoolExecutor(n_threads) as executor:
            for block_totals in executor.map(chunk_totals, blocks):
                totals += block_totals
    else:
        for rows in blocks:
            totals += chunk_totals(rows)
    w_sum = float(n_samples) if weight is None else float(weight.sum())
    nominal = totals[0] / w_sum
    expected = totals[1] / w_sum
    variance = totals[2] / (w_sum * w_sum)
    return nominal, expected, variance


def output_column(sigma: Any, j: int) -> Any:
    """Column ``j`` of a validated sigma (a float, or 1 or n_outputs columns)."""
    if isinstance(sigma, float):
        return sigma
    return sigma[:, min(j, sigma.shape[1] - 1)]


def _columns(d: np.ndarray, s: Any) -> list[tuple[np.ndarray, Any]]:
    """Split a chunk into 1-D columns ``(d_j, s_j)`` for the per-output kernels."""
    return [(d[:, j], output_column(s, j)) for j in range(d.shape[1])]


class SquaredErrorSums(NamedTuple):
    """``W``, ``Σ w d²``, ``Σ w σ²``, ``Σ w² σ² d²``, ``Σ w² σ⁴``, ``Σ w² σ⁴ / (ν + 2)``
    per output; the batch offsets' sums (:func:`offset_sums`); the terms' moments
    and the skew sums of :func:`squared_error_sums`."""

    weight: float
    d2: np.ndarray
    s2: np.ndarray
    s2d2: np.ndarray
    s4: np.ndarray
    s4_dof: np.ndarray
    t2: Any = 0.0
    t2d2: Any = 0.0
    t2s2: Any = 0.0
    t4: Any = 0.0
    batch_products: Any = 0.0
    terms: Any = None
    skew: Any = None

    def forward(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(nominal, E, Var)`` of the MSE: ``E = Σ w (d² + σ² + τ²) / W``,
        ``Var = [Σ w² (2σ⁴ + 4σ²d²) + Σ_g τ² (4 (Σ_g w d)² + 4 Σ_g w² σ²
        + 2 τ² W_g²)] / W²``."""
        w_sum = self.weight
        nominal = self.d2 / w_sum
        variance = 2.0 * self.s4 + 4.0 * self.s2d2
        s2 = self.s2
        if not isinstance(self.t4, float):  # batch offsets (floats 0: none)
            variance = variance + 4.0 * (self.t2d2 + self.t2s2) + 2.0 * self.t4
            s2 = s2 + self.t2
        return nominal, nominal + s2 / w_sum, variance / w_sum**2


class R2Sums(NamedTuple):
    """Per-output ``X``, ``Y`` of ``1 - X/Y``, their truth versions ``A``, ``B``, the
    label-noise (co)variances, σ̂'s part of them and their σ⁴ floors."""

    sse: np.ndarray
    sst: np.ndarray
    sse_truth: np.ndarray
    sst_truth: np.ndarray
    var_sse: np.ndarray
    var_sst: np.ndarray
    cov: np.ndarray
    var_sse_sigma: np.ndarray
    var_sst_sigma: np.ndarray
    cov_sigma: np.ndarray
    floor_sse: np.ndarray
    floor_sst: np.ndarray
    floor_cov: np.ndarray


def offset_sums(
    shared: Any,
    weight: np.ndarray | None,
    sigma: Any,
    *columns: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[np.ndarray]]:
    """Per-batch ``(τ², W_g, Σ_g w² σ², [Σ_g w x for x in columns])``; ``τ²`` and
    ``W_g`` of shape ``(G, 1)``, the others ``(G, n_outputs)``."""
    n_samples = shared.codes.shape[0]
    w = np.ones(n_samples) if weight is None else weight
    s2 = np.square(np.asarray(sigma, dtype=float))
    if s2.ndim == 0:
        s2 = np.full((n_samples, 1), s2)
    totals = [shared.group_sum(x * w[:, None]) for x in columns]
    return (
        shared.tau2[:, None],
        shared.group_sum(w)[:, None],
        shared.group_sum(s2 * np.square(w)[:, None]),
        totals,
    )


def squared_error_sums(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    weight: np.ndarray | None,
    sigma_dof: Any = None,
    *,
    scale: tuple[float, float] | None = None,
    shared: Any = None,
    terms: tuple[float, Any] | None = None,
    skew: bool | None = None,
) -> SquaredErrorSums:
    """The :class:`SquaredErrorSums` of validated inputs in one chunked pass:
    ``scale=(S_d, S_σ)`` sums ``d/S_d``, ``σ/S_σ``; ``shared``: batch offsets;
    ``terms=(sign, multioutput)``: the moments of the :func:`squared_terms`;
    ``skew``: the sums of :func:`skew_sums` (truth or nominal)."""
    n_samples, n_outputs = y_true.shape
    totals = np.zeros((5, n_outputs))
    parts, kept, skews = [], None, np.zeros((3, n_outputs))
    for rows in chunks(n_samples):
        chunk = y_true[rows]
        s = chunk_of(sigma, rows)
        w = None if weight is None else weight[rows]
        dof = None if sigma_dof is None else chunk_of(sigma_dof, rows)
        if skew is not None:
            skews += skew_sums(chunk - y_pred[rows], s, dof, w, truth=skew)
        if scale is None:
            d = np.subtract(chunk, y_pred[rows], out=_work(0, chunk.shape))
        else:
            d = chunk / scale[0] - y_pred[rows] / scale[0]
            s = np.divide(s, scale[1])
        d2 = np.square(d, out=d)
        s2 = None  # σ² once, for the terms and for the sums of one output
        if not isinstance(s, float) and (terms is not None or d2.shape[1] == 1):
            s2 = np.square(s, out=_work(1, s.shape))
        if terms is not None:
            h = squared_terms(d2, s, terms[0], out=_work(2, d2.shape), s2=s2)
            h = output_mean(h, terms[1])
            if n_samples <= CHUNK_SIZE:  # the terms, for the pivot
                kept = h.copy()
        _squared_error_chunk(d2, s, w, dof, totals, s2 if d2.shape[1] == 1 else None)
        if terms is not None:  # d² is spent: its work array holds r² (less cache)
            parts.append(term_moments(h, w, _work(0, h.shape)))
    w_sum = float(n_samples) if weight is None else float(weight.sum())
    extra = {"skew": skews if skew is not None else None}
    if terms is not None:
        extra["terms"] = (parts, kept)
    if shared is None:
        return SquaredErrorSums(w_sum, *totals, **extra)
    d = y_true - y_pred
    tau2, w_g, s2_g, (d_g,) = offset_sums(shared, weight, sigma, d)
    return SquaredErrorSums(
        w_sum,
        *totals,
        t2=(tau2 * w_g).sum(axis=0),
        t2d2=(tau2 * np.square(d_g)).sum(axis=0),
        t2s2=(tau2 * s2_g).sum(axis=0),
        t4=(np.square(tau2 * w_g)).sum(axis=0),
        batch_products=batch_products(shared, weight, sigma, (d, d), (tau2, w_g))[0],
        **extra,
    )


def squared_terms(
    d2: np.ndarray,
    s: Any,
    sign: float,
    out: np.ndarray | None = None,
    s2: np.ndarray | None = None,
) -> np.ndarray:
    """The MSE's per-sample terms ``d² + sign σ²`` (``sign`` 1, -1 or 0: ``d²``;
    ``s2``: ``σ²`` if already squared)."""
    if out is None:
        out = np.empty(d2.shape)
    if sign == 0.0:
        out[...] = d2
        return out
    if s2 is None:
        s2 = np.square(s, out=None if isinstance(s, float) else _work(1, s.shape))
    return (np.add if sign > 0.0 else np.subtract)(d2, s2, out=out)


def output_mean(h: np.ndarray, multioutput: Any) -> np.ndarray:
    """Per-sample terms ``(n, n_outputs)`` averaged as ``multioutput`` says."""
    if h.shape[1] == 1:  # one output: its terms (a mean over one is slow)
        return h[:, 0]
    if isinstance(multioutput, str):
        return h.mean(axis=1)
    return h @ multioutput / np.sum(multioutput)


def skew_sums(
    d: np.ndarray, s: Any, dof: Any, w: np.ndarray | None, *, truth: bool
) -> np.ndarray:
    """A chunk's ``Σ w³ (a σ⁶ + b σ⁴d²)`` of the third cumulant of the truth or
    nominal MSE and of its covariance with the variance estimate, unbiased in σ̂,
    and ``Σ w⁴`` of the variance of the variance estimate's terms
    ``4σ̂²d̃² − k σ̂⁴``: over σ̂ (d̃ held), or over the labels where σ is known
    (user guide: :ref:`skewed estimates <truth_skew>`)."""
    d2 = np.square(d)
    inverse = 0.0 if dof is None else 1.0 / dof
    if isinstance(inverse, np.ndarray):
        inverse = inverse[:, :1]
    w3 = None if w is None else w**3
    w4 = None if w is None else w**4
    if truth:
        k3 = (8.0 - 8.0 * inverse**2, 24.0)
        cov = (8.0 - 8.0 * inverse + 8.0 * (inverse - inverse**2), 16.0 - 8.0 * inverse)
    else:
        k3, cov = (8.0, 24.0), (8.0, 16.0)
    c4 = 1.0 + 2.0 * inverse  # E σ̂⁴ = c4 σ⁴, E σ̂⁶ = c6 σ⁶, E σ̂⁸ = c8 σ⁸
    c6 = c4 * (1.0 + 4.0 * inverse)
    c8 = c6 * (1.0 + 6.0 * inverse)
    k = 2.0 * (1.0 - inverse) / c4 if truth else 2.0 / c4  # σ̂⁴'s coefficient
    s2 = np.square(s)  # every output at once: σ has 1 or n_outputs columns
    e6 = s2 * s2 * s2 / c6
    e4d2 = s2 * s2 * d2 / c4 - e6
    # Var over σ̂² of 4σ̂²b − kσ̂⁴ at b = d̃²: 16b² Var σ̂² − 8kb Cov(σ̂², σ̂⁴)
    # + k² Var σ̂⁴, each σ power estimated without bias; σ known: over d̃,
    # 16σ⁴ Var d̃² = 64σ⁶ E d̃² − 32σ⁸
    own = 32.0 * inverse * d2 * d2 * s2 * s2 / c4 - 32.0 * k * inverse * d2 * e6 * c4
    own = own + k * k * (c8 - c4 * c4) * (s2**4 / c8)
    if dof is None:
        own = own + 64.0 * s2**3 * d2 - 32.0 * s2**4
    totals = np.stack(
        [
            weighted(k3[0] * e6 + k3[1] * e4d2, w3),
            weighted(cov[0] * e6 + cov[1] * e4d2, w3),
            weighted(np.broadcast_to(own, d2.shape), w4),
        ]
    )
    return totals


def weighted(values: np.ndarray, w: np.ndarray | None, power: int = 1) -> np.ndarray:
    """Per-output ``Σ w^power x`` of a chunk ``x`` of shape ``(n, n_outputs)``."""
    return values.sum(axis=0) if w is None else (w**power) @ values


def batch_products(
    shared: Any,
    weight: np.ndarray | None,
    sigma: Any,
    forms: tuple[np.ndarray, np.ndarray],
    batch: tuple[np.ndarray, np.ndarray],
) -> list[np.ndarray]:
    """Estimates of ``Σ_g τ² (Σ_g w x)(Σ_g w x')`` of the true forms ``(d, c)``
    (pairs ``dd, cc, cd``) from the noisy ones, per output, less the batch sums'
    noise: a common part of ``d`` and deviations not correlated within a batch,
    each product unbiased (user guide: :ref:`shared_offsets`)."""
    d, c = forms
    tau2, w_g = batch
    w = np.ones(d.shape[0]) if weight is None else weight
    w_sum = float(w.sum())
    s2 = np.broadcast_to(np.square(np.asarray(sigma, dtype=float)), d.shape)
    tau_i = shared.per_sample()[:, None]
    beta = float((tau2 * w_g * w_g).sum())
    spread = (np.square(w) @ s2 + beta) / w_sum**2
    # the noise covariance of a deviation from the weighted mean, per sample
    shares = (w[:, None] * s2 + tau_i * w_g[shared.codes]) / w_sum
    noise = s2 + tau_i - 2.0 * shares + spread
    common = w @ d / w_sum  # 0 for the centred residuals
    deviation = d - common  # its noise is that of c̃: ε − ε̄
    # E(Σ_g w δ)² of deviations δ = C η, η uncorrelated: Σ_j w_j² δ_j² κ_j
    batch_i = w_g[shared.codes] / w_sum
    weights = np.square(w)[:, None] * (tau_i * (1.0 - 2.0 * batch_i) + beta / w_sum**2)
    products = [
        (weights * (x * x_ - noise)).sum(axis=0)
        for x, x_ in ((deviation, deviation), (c, c), (c, deviation))
    ]
    products[0] = products[0] + (np.square(common) - spread) * beta
    return products


def _squared_error_chunk(
    d: np.ndarray,
    s: Any,
    w: np.ndarray | None,
    dof: Any,
    totals: np.ndarray,
    s2: np.ndarray | None = None,
) -> None:
    """Add a chunk's sums of ``d²`` to ``totals`` (pairwise, no BLAS); overwrites it
    (and ``s2``, the one output's ``σ²`` if already squared)."""
    dof_column = dof[:, 0] if isinstance(dof, np.ndarray) else dof
    for j, (d2, sj) in enumerate(_columns(d, s)):
        wd2 = d2 if w is None else np.multiply(d2, w, out=d2)  # w d²
        sum_d2 = float(wd2.sum())
        if isinstance(sj, float):
            s2 = sj * sj
            if w is None:
                w_sum = w2_sum = float(d2.shape[0])
                w2d2 = sum_d2
            else:
                w_sum = float(w.sum())
                w2_sum = float(np.square(w).sum())
                w2d2 = float(np.multiply(wd2, w, out=wd2).sum())
            sums = (sum_d2, s2 * w_sum, s2 * w2d2, s2 * s2 * w2_sum)
            if isinstance(dof_column, np.ndarray):
                w2 = np.ones(d2.shape[0]) if w is None else np.square(w)
                s4_dof = s2 * s2 * float((w2 / (dof_column + 2.0)).sum())
            elif dof_column is not None:
                s4_dof = sums[3] / (dof_column + 2.0)
        else:
            ws2 = np.square(sj, out=_work(1, sj.shape)) if s2 is None else s2[:, 0]
            if w is not None:
                ws2 *= w  # w σ²
            sum_s2 = float(ws2.sum())
            wd2 *= ws2  # w² σ² d²
            ws2 *= ws2  # (w σ²)²
            sums = (sum_d2, sum_s2, float(wd2.sum()), float(ws2.sum()))
            if dof_column is not None:
                s4_dof = float(np.divide(ws2, dof_column + 2.0, out=ws2).sum())
        totals[:4, j] += sums
        if dof_column is not None:
            totals[4, j] += s4_dof


def rescaled_squared_error_sums(
    y_true: np.ndarray, y_pred: np.ndarray, sigma: Any, weight: np.ndarray | None
) -> SquaredErrorSums:
    """The sums in units of the largest residual and sigma, multiplied back (where
    the plain sums overflowed: a sum is inf only where its true value is)."""
    with np.errstate(invalid="ignore"):
        s_d = max(float(np.max(np.abs(y_true))), float(np.max(np.abs(y_pred))))
        s_s = float(sigma) if isinstance(sigma, float) else float(np.max(sigma))
    s_d = s_d if np.isfinite(s_d) and s_d > 0.0 else 1.0
    s_s = s_s if np.isfinite(s_s) and s_s > 0.0 else 1.0
    sums = squared_error_sums(y_true, y_pred, sigma, weight, scale=(s_d, s_s))

    def times(value: np.ndarray, factor: float) -> np.ndarray:
        return np.where(value == 0.0, 0.0, value * factor)

    with np.errstate(over="ignore"):  # inf where the true value overflows
        return sums._replace(
            d2=times(sums.d2, s_d * s_d),
            s2=times(sums.s2, s_s * s_s),
            s2d2=times(sums.s2d2, (s_d * s_s) * (s_d * s_s)),
            s4=times(sums.s4, s_s * s_s * (s_s * s_s)),
        )


def linear_loss_of_negative(u: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``g(-u) = φ(u) + u Φ(u)`` for ``u <= 0`` into ``out`` (work slot 3);
    ``g(40) = 0`` exactly (:ref:`formula_numerics`)."""
    g = np.multiply(u, u, out=out)
    g *= -0.5
    np.exp(g, out=g)
    g *= _INV_SQRT_2PI
    tail = np.multiply(u, -_INV_SQRT_2, out=_work(3, u.shape))
    erfc(tail, out=tail)
    tail *= 0.5
    tail *= u
    g += tail
    return g


@np.errstate(over="ignore", invalid="ignore")
def absolute_error_kernel(
    d: np.ndarray, s: Any, w: np.ndarray | None
) -> tuple[np.ndarray, ...]:
    """The MAE's chunk sums: ``E|e| = |d| + 2G``, ``Var|e| = σ² − 4G(|d| + G)``.

    ``G = σ g(|d|/σ)``; every sum has non-negative terms. Overwrites ``d``.
    """
    totals = np.empty((3, d.shape[1]))
    for j, (dj, sj) in enumerate(_columns(d, s)):
        neg_abs = np.copysign(dj, -1.0, out=dj)  # −|d|
        nominal = -float(neg_abs.sum() if w is None else np.multiply(neg_abs, w).sum())
        if isinstance(sj, float) and sj == 0.0:
            totals[:, j] = nominal, nominal, 0.0
            continue
        # u = −t = max(−|d|/σ, −40); −inf (σ = 0 < |d|) and NaN (σ = |d| = 0)
        # are deliberately replaced by −40 (fmax drops NaN).
        u = _work(1, neg_abs.shape)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            np.divide(neg_abs, sj, out=u)
        np.fmax(u, -T_MAX, out=u)
        big_g = linear_loss_of_negative(u, out=_work(2, u.shape))  # g, to G below
        big_g *= sj
        if w is not None:
            weighted_g = np.multiply(big_g, w, out=u)  # u is free from here on
            bias = float(weighted_g.sum())
        else:
            bias = float(big_g.sum())
        # neg_abs <- w² G (|d| + G), in place.
        np.subtract(big_g, neg_abs, out=neg_abs)
        if w is None:
            neg_abs *= big_g
        else:
            neg_abs *= weighted_g
            neg_abs *= w
        removed = 4.0 * float(neg_abs.sum())
        if isinstance(sj, float):
            w2_sum = float(dj.shape[0]) if w is None else float(np.square(w).sum())
            total = sj * sj * w2_sum
        else:
            ws = sj if w is None else np.multiply(w, sj, out=big_g)
            total = float(np.square(ws, out=u).sum())
        variance = math.inf if math.isinf(total) else max(total - removed, 0.0)
        totals[:, j] = nominal, nominal + 2.0 * bias, variance
    return totals[0], totals[1], totals[2]


#: Gauss–Hermite nodes over a batch offset (the MAE under shared offsets).
_OFFSET_NODES = 64


def bounded_root(
    mean: np.ndarray, variance: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Moments of ``√X`` from the mean ``m`` and variance ``v`` of ``X ≥ 0``.

    The delta method held inside the bounds ``√m/√(1 + c) ≤ E √X ≤ √m`` and
    ``Var √X ≤ m c/(1 + c)``, ``c = v/m²``; ``bounded`` says where it left
    them (user guide: :ref:`formula_percentage`). ``m = 0`` gives 0 and 0.
    """
    mean = np.asarray(mean, dtype=float)
    variance = np.maximum(np.asarray(variance, dtype=float), 0.0)
    positive = mean > 0.0
    safe = np.where(positive, mean, 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        c = np.where(positive, variance / safe / safe, 0.0)
        root = np.sqrt(safe)
        delta = root - variance / (8.0 * safe**1.5)
        lower = root / np.sqrt(1.0 + c)
        delta_variance = variance / (4.0 * safe)
        upper_variance = safe * (c / (1.0 + c))
    bounded = positive & ((delta < lower) | (delta_variance > upper_variance))
    expected = np.where(positive, np.maximum(delta, lower), 0.0)
    root_variance = np.where(positive, np.minimum(delta_variance, upper_variance), 0.0)
    return expected, root_variance, bounded


def folded_moments(x: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``E|x + e|`` and ``Var|x + e|``, ``e ~ N(0, s²)``, per entry (stable forms)."""
    h = np.abs(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.fmax(-h / s, -T_MAX)  # s = 0: G = 0 below
    big_g = s * linear_loss_of_negative(u, out=np.empty(u.shape))
    return h + 2.0 * big_g, np.maximum(s * s - 4.0 * big_g * (h + big_g), 0.0)


def absolute_error_offsets(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    weight: np.ndarray | None,
    shared: Any,
    *,
    estimated: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The MAE's ``(nominal, E, Var)`` per output under batch offsets: ``E`` exact,
    ``Var`` by Gauss–Hermite quadrature over the offsets; ``estimated``: ``Var`` of
    the true residuals estimated from these noisy ones, the between-batch part at
    the batch-centred residuals with the common shift's noise deconvolved
    (:ref:`shared_offsets`)."""
    n_samples = y_true.shape[0]
    w = np.ones(n_samples) if weight is None else weight
    w_sum = float(w.sum())
    d = y_true - y_pred
    s = np.broadcast_to(np.asarray(sigma, dtype=float), d.shape)
    tau2 = shared.per_sample()[:, None]
    tau = np.sqrt(tau2)
    nominal = w @ np.abs(d) / w_sum
    expected = w @ folded_moments(d, np.sqrt(s * s + tau * tau))[0] / w_sum
    if estimated:
        w_g = shared.group_sum(w)[shared.codes][:, None]
        w_g = np.where(w_g > 0.0, w_g, 1.0)  # a batch of zero weights adds 0
        a_g = shared.group_sum(np.square(w[:, None] * s))[shared.codes]
        batch_mean = shared.group_sum(w[:, None] * d)[shared.codes] / w_g
        r = d - batch_mean + w @ d / w_sum  # the batch's shift → the common one
        s_b = np.sqrt(np.maximum(2.0 * w[:, None] * s * s / w_g - a_g / w_g**2, 0.0))
        beta = float(shared.tau2 @ np.square(shared.group_sum(w)))
        kappa = np.minimum((np.square(w) @ (s * s) + beta) / w_sum**2, tau2)
    nodes, probabilities = np.polynomial.hermite_e.hermegauss(_OFFSET_NODES)
    probabilities = probabilities / probabilities.sum()
    within = np.zeros(d.shape[1])
    batch = np.zeros((_OFFSET_NODES, shared.n_groups, d.shape[1]))
    for k, (z, p) in enumerate(zip(nodes, probabilities, strict=True)):
        mean, variance = folded_moments(d + tau * z, s)
        within += p * (np.square(w) @ variance)
        if estimated:
            mean = folded_moments(r + np.sqrt(tau2 - kappa) * z, s_b)[0]
        batch[k] = shared.group_sum(mean * w[:, None])
    centre = np.tensordot(probabilities, batch, axes=1)
    between = np.tensordot(probabilities, np.square(batch - centre), axes=1)
    if estimated:  # the common shift's variance κ, at the mean slope of each batch
        scale = np.sqrt(s_b * s_b + tau2)
        u = np.divide(r, scale, out=np.zeros(r.shape), where=scale > 0.0)
        slope = shared.group_sum(
            w[:, None] * np.sqrt(kappa) * (1.0 - erfc(u * _INV_SQRT_2))
        )
        between = between + np.square(slope)
    return nominal, expected, (within + between.sum(axis=0)) / (w_sum * w_sum)


def nominal_r2_sums(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    weight: np.ndarray | None,
    *,
    centred: bool = False,
) -> tuple[float, float, float]:
    """scikit-learn's ``Σ w d²`` (``centred``: of ``d − d̄_w``) and ``Σ w (y − ȳ_w)²``
    of one output in units of ``scale`` (1 unless they overflow); 0 if constant."""
    w_total = float(y_true.shape[0]) if weight is None else float(weight.sum())
    kept = slice(None) if weight is None else weight != 0
    scale = 1.0
    for _ in range(2):
        with np.errstate(over="ignore", invalid="ignore"):
            mean = weighted_sum(y_true, weight) / w_total / scale
            y = y_true / scale
            d = y - y_pred / scale
            residuals = d[kept]
            if centred:
                d = d - weighted_sum(d, weight) / w_total
            numerator = weighted_sum(d * d, weight)
            c = y - mean
            denominator = weighted_sum(c * c, weight)
        if np.isfinite(numerator) and np.isfinite(denominator):
            break
        scale = max(float(np.max(np.abs(y_true))), float(np.max(np.abs(y_pred))), 1.0)
    labels = y[kept]
    if labels.size and labels.min() == labels.max():
        denominator = 0.0
    if centred and residuals.size and residuals.min() == residuals.max():
        numerator = 0.0
    return numerator, denominator, scale


def r2_from_sums(numerator: float, denominator: float, *, force_finite: bool) -> float:
    """``1 - numerator/denominator`` with scikit-learn's ``force_finite`` rule."""
    if force_finite:
        if numerator == 0.0:
            return 1.0
        if denominator == 0.0:
            return 0.0
    elif denominator == 0.0:
        return math.nan if numerator == 0.0 else -math.inf
    return 1.0 - numerator / denominator
