"""Chunked accumulators of the regression metrics, and their exact distributions.

:func:`squared_error_sums` takes the sums of the MSE family's engines in one
pass, :func:`accumulate` runs a per-sample kernel (the MAE's,
:func:`absolute_error_kernel`) on a few threads, and :func:`r2_sums` gives
scikit-learn's sums of ``r2_score`` (user guide: :ref:`formula_mse`,
:ref:`formula_mae`). The exact distributions of MSE, RMSE, R² (one quadratic
form, diagonal plus rank one) and MAE (folded normals) come from Gil-Pelaez
inversion of their characteristic functions (:ref:`exact_intervals`).
"""

from __future__ import annotations

import functools
import itertools
import math
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, NamedTuple

import joblib
import numpy as np
from scipy import integrate, optimize
from scipy.special import erfc, wofz
from scipy.stats import ncx2

from ....utils._arrays import CHUNK_SIZE, chunk_of, chunks, weighted_sum

__all__ = [
    "MAX_FORM_SAMPLES",
    "SquaredErrorSums",
    "absolute_error_kernel",
    "accumulate",
    "gil_pelaez_cdf",
    "mae_distribution",
    "mse_distribution",
    "output_column",
    "output_distributions",
    "r2_distribution",
    "r2_from_sums",
    "r2_sums",
    "rescaled_squared_error_sums",
    "squared_error_sums",
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
    """Weighted per-output means ``(nominal, expected, variance)`` of a kernel.

    ``CHUNK_SIZE`` rows at a time; ``parallel`` runs the chunks on a few threads
    and adds their sums in chunk order (the result does not depend on threads).
    """
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
    """``W = Σ w``, ``Σ w d²``, ``Σ w σ²``, ``Σ w² σ² d²``, ``Σ w² σ⁴`` and
    ``Σ w² σ⁴ / (ν + 2)`` (0 when σ is known), per output."""

    weight: float
    d2: np.ndarray
    s2: np.ndarray
    s2d2: np.ndarray
    s4: np.ndarray
    s4_dof: np.ndarray

    def forward(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(nominal, E, Var)`` of the MSE: ``E = Σ w (d² + σ²) / W``,
        ``Var = Σ w² (2σ⁴ + 4σ²d²) / W²``."""
        w_sum = self.weight
        nominal = self.d2 / w_sum
        variance = (2.0 * self.s4 + 4.0 * self.s2d2) / (w_sum * w_sum)
        return nominal, nominal + self.s2 / w_sum, variance


def squared_error_sums(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    weight: np.ndarray | None,
    sigma_dof: Any = None,
    *,
    scale: tuple[float, float] | None = None,
) -> SquaredErrorSums:
    """The :class:`SquaredErrorSums` of validated inputs, in one chunked pass.

    ``scale=(S_d, S_σ)`` sums ``d/S_d`` and ``σ/S_σ`` instead.
    """
    n_samples, n_outputs = y_true.shape
    totals = np.zeros((5, n_outputs))
    for rows in chunks(n_samples):
        chunk = y_true[rows]
        s = chunk_of(sigma, rows)
        if scale is None:
            d = np.subtract(chunk, y_pred[rows], out=_work(0, chunk.shape))
        else:
            d = chunk / scale[0] - y_pred[rows] / scale[0]
            s = np.divide(s, scale[1])
        w = None if weight is None else weight[rows]
        dof = None if sigma_dof is None else chunk_of(sigma_dof, rows)
        _squared_error_chunk(d, s, w, dof, totals)
    w_sum = float(n_samples) if weight is None else float(weight.sum())
    return SquaredErrorSums(w_sum, *totals)


def _squared_error_chunk(
    d: np.ndarray, s: Any, w: np.ndarray | None, dof: Any, totals: np.ndarray
) -> None:
    """Add a chunk's sums to ``totals`` (pairwise sums, no BLAS); overwrites ``d``."""
    dof_column = dof[:, 0] if isinstance(dof, np.ndarray) else dof
    for j, (dj, sj) in enumerate(_columns(d, s)):
        d2 = np.square(dj, out=dj)
        wd2 = d2 if w is None else np.multiply(d2, w, out=d2)  # w d²
        sum_d2 = float(wd2.sum())
        if isinstance(sj, float):
            s2 = sj * sj
            if w is None:
                w_sum = w2_sum = float(dj.shape[0])
                w2d2 = sum_d2
            else:
                w_sum = float(w.sum())
                w2_sum = float(np.square(w).sum())
                w2d2 = float(np.multiply(wd2, w, out=wd2).sum())
            sums = (sum_d2, s2 * w_sum, s2 * w2d2, s2 * s2 * w2_sum)
            if isinstance(dof_column, np.ndarray):
                w2 = np.ones(dj.shape[0]) if w is None else np.square(w)
                s4_dof = s2 * s2 * float((w2 / (dof_column + 2.0)).sum())
            elif dof_column is not None:
                s4_dof = sums[3] / (dof_column + 2.0)
        else:
            ws2 = np.square(sj, out=_work(1, sj.shape))
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
    """The sums in units of the largest residual and sigma, multiplied back.

    The slow path where the plain sums overflowed: a sum is inf only where its
    true value is.
    """
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
    """``g(-u) = φ(u) + u Φ(u)`` for ``u <= 0`` into ``out`` (work slot 3).

    ``g`` is the normal linear-loss function (:ref:`formula_numerics`), with
    ``Φ`` from :func:`scipy.special.erfc` directly; ``g(40) = 0`` exactly.
    """
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


def absolute_error_kernel(
    d: np.ndarray, s: Any, w: np.ndarray | None
) -> tuple[np.ndarray, ...]:
    """The MAE's chunk sums: ``E|e| = |d| + 2G``, ``Var|e| = σ² − 4G(|d| + G)``.

    ``G = σ g(|d|/σ)``; every sum has non-negative terms. Overwrites ``d``.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return _absolute_error_totals(d, s, w)


def _absolute_error_totals(
    d: np.ndarray, s: Any, w: np.ndarray | None
) -> tuple[np.ndarray, ...]:
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


def r2_sums(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    weight: np.ndarray | None,
    *,
    centred: bool = False,
) -> tuple[float, float, float]:
    """scikit-learn's numerator and denominator of ``r2_score``, and their scale.

    ``Σ w (y - ŷ)²`` (``centred``: ``Σ w (d - d̄_w)²``) and ``Σ w (y - ȳ_w)²`` of
    one output in units of ``scale`` (1.0 unless the squares overflow); exactly
    0 for a constant ``y_true`` (or residual, ``centred``).
    """
    n_samples = y_true.shape[0]
    w_total = float(n_samples) if weight is None else float(weight.sum())
    blocks = [
        (rows, None if weight is None else weight[rows]) for rows in chunks(n_samples)
    ]
    scale = 1.0
    for _ in range(2):
        with np.errstate(over="ignore", invalid="ignore"):
            total = sum(weighted_sum(y_true[rows], w) for rows, w in blocks)
            mean = total / w_total / scale
            shift = 0.0
            if centred:
                shift = sum(
                    weighted_sum(y_true[rows] / scale - y_pred[rows] / scale, w)
                    for rows, w in blocks
                )
                shift /= w_total
            numerator = denominator = 0.0
            low, high = np.inf, -np.inf
            d_low, d_high = np.inf, -np.inf
            for rows, w in blocks:
                y = y_true[rows] / scale
                d = y - y_pred[rows] / scale
                if centred:
                    kept = d if w is None else d[w != 0]
                    if kept.size:
                        d_low = min(d_low, float(kept.min()))
                        d_high = max(d_high, float(kept.max()))
                    d = d - shift
                numerator += weighted_sum(d * d, w)
                c = y - mean
                denominator += weighted_sum(c * c, w)
                positive = y if w is None else y[w != 0]
                if positive.size:
                    low = min(low, float(positive.min()))
                    high = max(high, float(positive.max()))
        if np.isfinite(numerator) and np.isfinite(denominator):
            break
        scale = max(float(np.max(np.abs(y_true))), float(np.max(np.abs(y_pred))), 1.0)
    if low == high:
        denominator = 0.0
    if centred and d_low == d_high:
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


#: The inversion is offered up to this many noisy samples.
MAX_FORM_SAMPLES = 4096
#: Absolute accuracy asked of each integral (the CDF is a probability).
_EPSABS = 1e-11
_SQRT_HALF = math.sqrt(0.5)
#: The search for a quantile gives up after this many doublings of its bracket
#: and returns the end of the support (a conservative interval).
_MAX_DOUBLINGS = 48
#: A shift below this (in standard deviations) is the round-off of 0.
_TINY_SHIFT = 1e-9
#: scipy's ncx2 is accurate up to this non-centrality (NaN at 1e12); beyond,
#: the MSE is normal to within its skewness, about 1e-5.
_MAX_NONCENTRALITY = 1e9
#: ``|φ|`` below ``exp(-_DAMPED)`` is negligible (1e-17).
_DAMPED = 40.0


def _quad(
    function: Callable[[float], float], a: float, b: float, **options: Any
) -> float:
    """:func:`scipy.integrate.quad`'s value, without its ``IntegrationWarning``."""
    return float(integrate.quad(function, a, b, full_output=1, **options)[0])


def _inversion_integrand(
    phi: Callable[[float], complex], y: float
) -> Callable[[float], float]:
    """``u -> Im[e^{-iuy} φ(u)] / u``, the Gil-Pelaez integrand."""

    def integrand(u: float) -> float:
        return (phi(u) * complex(math.cos(u * y), -math.sin(u * y))).imag / u

    return integrand


def gil_pelaez_cdf(phi: Callable[[float], complex], y: float) -> float:
    """``P(X - c <= y)`` from ``phi(u) = E exp(iu(X - c))``, ``X`` of SD about 1.

    ``c`` is the linear phase of ``X``'s characteristic function. The head runs
    to ``u = 1/|y|`` in decades; QAWF takes the oscillating rest.
    """
    head = _inversion_integrand(phi, y)
    split = 1.0 if abs(y) < _TINY_SHIFT else max(1.0, 1.0 / abs(y))
    edges = [0.0, *np.geomspace(1.0, split, max(1, math.ceil(math.log10(split))) + 1)]
    total = sum(
        _quad(head, a, b, limit=200, epsabs=_EPSABS)
        for a, b in itertools.pairwise(edges)
        if b > a
    )
    if abs(y) < _TINY_SHIFT:  # no oscillation: the shift is round-off
        tail = _quad(lambda u: phi(u).imag / u, 1.0, np.inf, limit=200, epsabs=_EPSABS)
    else:
        options = {"wvar": abs(y), "limlst": 200, "epsabs": _EPSABS}
        cosine = _quad(
            lambda u: phi(u).imag / u, split, np.inf, weight="cos", **options
        )
        sine = _quad(lambda u: phi(u).real / u, split, np.inf, weight="sin", **options)
        tail = cosine - (sine if y > 0.0 else -sine)
    return min(max(0.5 - (total + tail) / math.pi, 0.0), 1.0)


def _finite_range_cdf(phi: Callable[[float], complex], y: float, end: float) -> float:
    """``P(X <= y)`` from ``phi(u) = E exp(iuX)``, negligible beyond ``end``."""
    total = _quad(_inversion_integrand(phi, y), 0.0, end, limit=1000, epsabs=_EPSABS)
    return min(max(0.5 - total / math.pi, 0.0), 1.0)


def _quantile(
    cdf: Callable[[float], float],
    p: float,
    start: float,
    step: float,
    lower: float,
    upper: float,
) -> float:
    """The ``x`` in ``[lower, upper]`` with ``cdf(x) = p`` (Brent), bracket doubling."""
    low, high = max(start - step, lower), min(start + step, upper)
    for _ in range(_MAX_DOUBLINGS):
        if low == lower or cdf(low) <= p:
            break
        step *= 2.0
        low = max(start - step, lower)
    else:  # not bracketed within 2^64 steps: the support's end, conservatively
        return lower
    for _ in range(_MAX_DOUBLINGS):
        if high == upper or cdf(high) >= p:
            break
        step *= 2.0
        high = min(start + step, upper)
    else:
        return upper
    if math.isinf(low) or cdf(low) >= p:
        return low
    if math.isinf(high) or cdf(high) <= p:
        return high
    scale = max(abs(low), abs(high), 1e-300)
    return float(
        optimize.brentq(lambda x: cdf(x) - p, low, high, xtol=1e-11 * scale, rtol=1e-10)
    )


@dataclass(frozen=True, eq=False, repr=False)
class _QuadraticForm:
    """``Q = Z'(diag(d) + ρ v v')Z + 2 b'Z + k``, ``Z`` standard normal, ρ >= 0."""

    d: np.ndarray
    rho: float
    v: np.ndarray
    b: np.ndarray
    k: float

    def scaled(self, s: float) -> _QuadraticForm:
        return _QuadraticForm(self.d / s, self.rho / s, self.v, self.b / s, self.k / s)

    def shift(self) -> float:
        """The linear phase ``k - b'B⁻¹b`` of the characteristic function."""
        with np.errstate(divide="ignore", invalid="ignore"):
            db = np.where(self.d != 0.0, self.b / self.d, 0.0)
            dv = np.where(self.d != 0.0, self.v / self.d, 0.0)
        correction = float(self.b @ db)
        if self.rho > 0.0:
            denominator = 1.0 + self.rho * float(self.v @ dv)
            if denominator != 0.0:
                correction -= self.rho * float(self.v @ db) ** 2 / denominator
        return self.k - correction

    def phi(self, c: float) -> Callable[[float], complex]:
        """``u -> E exp(iu(Q - c))`` (matrix determinant lemma, Sherman–Morrison)."""
        d, rho, v, b, k = self.d, self.rho, self.v, self.b, self.k

        def phi(u: float) -> complex:
            factor = 1.0 - 2j * u * d
            r = 1.0 / factor
            log_det = np.log(factor).sum()
            quadratic = complex((b * b) @ r)
            if rho > 0.0:
                vr = v * r
                rank_one = 1.0 - 2j * u * rho * complex(vr @ v)
                log_det += np.log(rank_one)
                quadratic += 2j * u * rho * complex(vr @ b) ** 2 / rank_one
            log_phi = -0.5 * log_det + 1j * u * (k - c) - 2.0 * u * u * quadratic
            return complex(np.exp(log_phi))

        return phi

    def cdf(self, x: float) -> float:
        """``P(Q <= x)``: over the finite range where ``|φ|`` is not negligible
        if the non-central part damps it below ``e^{-40}``, else shifted."""
        with np.errstate(divide="ignore", invalid="ignore"):
            limit = np.where(
                self.d != 0.0,
                self.b**2 / (2.0 * self.d**2),
                np.where(self.b != 0, np.inf, 0.0),
            )
        total = float(limit.sum())
        if total <= _DAMPED:
            c = self.shift()
            return gil_pelaez_cdf(self.phi(c), x - c)
        # |φ(u)| <= exp(-Σ 2u²b²/(1 + 4u²d²)): double the range until that
        # exponent passes _DAMPED (its limit, total, is larger).
        target = min(_DAMPED + 5.0, 0.5 * (_DAMPED + total))
        b2, d2, end = self.b**2, self.d**2, 1.0
        for _ in range(_MAX_DOUBLINGS):
            if float((2.0 * end * end * b2 / (1.0 + 4.0 * end * end * d2)).sum()) >= (
                target
            ):
                break
            end *= 2.0
        return _finite_range_cdf(self.phi(0.0), x, end)


@dataclass(frozen=True, eq=False, repr=False)
class _Continuous:
    """A continuous metric in units of ``unit`` (about one SD): ``centre`` and
    the support ``lower``/``upper`` in those units, quantiles of ``cdf``."""

    unit: float
    centre: float
    lower: float
    upper: float

    def cdf(self, x: float) -> float:  # pragma: no cover - every subclass has one
        raise NotImplementedError

    def _transform(self, x: float) -> float:
        return x * self.unit

    def interval(self, confidence_level: float) -> tuple[float, float, float]:
        """Equal-tailed exact interval: the ``α/2`` and ``1 - α/2`` quantiles."""
        half = 0.5 * (1.0 - confidence_level)
        low, high = (
            self._transform(
                _quantile(self.cdf, p, self.centre, 2.0, self.lower, self.upper)
            )
            for p in (half, 1.0 - half)
        )
        return low, high, confidence_level


@dataclass(frozen=True, eq=False, repr=False)
class MSEDistribution(_Continuous):
    """MSE (RMSE with ``root``): a quadratic form, or ``unit`` times a
    non-central χ² ``(dof, nc)`` plus ``offset`` (``ncx2_params``)."""

    form: _QuadraticForm | None = None
    ncx2_params: tuple[float, float] | None = None
    root: bool = False

    def cdf(self, x: float) -> float:
        if self.ncx2_params is not None:
            dof, nc, offset = self.ncx2_params
            return float(ncx2.cdf(x - offset, dof, nc))
        return self.form.cdf(x)

    def _transform(self, x: float) -> float:
        x = max(float(x) * self.unit, 0.0)
        return math.sqrt(x) if self.root else x

    def interval(self, confidence_level: float) -> tuple[float, float, float]:
        if self.ncx2_params is None:
            return super().interval(confidence_level)
        half = 0.5 * (1.0 - confidence_level)
        dof, nc, offset = self.ncx2_params
        low, high = offset + ncx2.ppf([half, 1.0 - half], dof, nc)
        return self._transform(low), self._transform(high), confidence_level


def _noisy(sigma: Any, weight: np.ndarray | None, n: int) -> tuple | None:
    """``(mask, σ)`` of the noisy, positively weighted samples, or None when
    there are none or more than :data:`MAX_FORM_SAMPLES`."""
    s = np.broadcast_to(np.asarray(sigma, dtype=np.float64), (n,))
    mask = s > 0.0 if weight is None else (s > 0.0) & (weight > 0.0)
    return (mask, s) if 0 < np.count_nonzero(mask) <= MAX_FORM_SAMPLES else None


def _weights(n: int, weight: np.ndarray | None) -> np.ndarray:
    return np.full(n, 1.0 / n) if weight is None else weight / weight.sum()


def mse_distribution(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    weight: np.ndarray | None,
    *,
    nominal_mse: float,
    root: bool = False,
) -> MSEDistribution | None:
    """The exact distribution of one output's MSE (RMSE with ``root``), or None.

    None when no label is noisy, or more than :data:`MAX_FORM_SAMPLES` are
    (except with one σ and no weights: a scaled non-central χ², any size).
    """
    n = y_true.shape[0]
    if not (math.isfinite(nominal_mse) and n > 0):
        return None
    if weight is None and isinstance(sigma, float):
        if sigma == 0.0:
            return None
        unit = sigma * sigma / n  # inf, not OverflowError, where σ² overflows
        nc = nominal_mse / unit if 0.0 < unit < math.inf else math.inf
        if not nc <= _MAX_NONCENTRALITY:  # σ² under/overflows, or residuals dwarf it
            return None
        params = (float(n), nc, 0.0)
        return MSEDistribution(unit, n + nc, 0.0, math.inf, None, params, root)
    found = _noisy(sigma, weight, n)
    if found is None:
        return None
    noisy, s = found
    a = _weights(n, weight)
    d = y_true - y_pred
    lam = a[noisy] * s[noisy] ** 2
    b = a[noisy] * s[noisy] * d[noisy]
    unit = math.sqrt(float(2.0 * lam @ lam + 4.0 * b @ b))
    if not (0.0 < unit < math.inf):  # σ² underflows or overflows
        return None
    k = float(a @ (d * d))
    centre = (k + float(lam.sum())) / unit
    if np.all(lam == lam[0]):  # equal weights σ²: λ times a non-central χ²
        nc = float((b * b).sum()) / (lam[0] * lam[0])
        if nc <= _MAX_NONCENTRALITY:
            fixed = k - float((b * b).sum()) / lam[0]  # the exact labels
            params = (float(lam.size), nc, max(fixed, 0.0) / lam[0])
            centre *= unit / float(lam[0])
            unit = float(lam[0])
            return MSEDistribution(unit, centre, 0.0, math.inf, None, params, root)
    form = _QuadraticForm(lam, 0.0, np.zeros(lam.size), b, k)
    return MSEDistribution(unit, centre, 0.0, math.inf, form.scaled(unit), None, root)


@dataclass(frozen=True, eq=False, repr=False)
class R2Distribution(_Continuous):
    """R² ``= 1 - SSE/SST``: ``P(R² <= r) = P(SSE - (1 - r) SST >= 0)``.

    ``v = wσ``, ``sigma``, ``mu`` and ``pred`` of the noisy samples; ``sums =
    (W, Σwμ, Σwμ², Σwŷμ, Σwŷ²)`` over all samples.
    """

    v: np.ndarray = None  # type: ignore[assignment]
    sigma: np.ndarray = None  # type: ignore[assignment]
    mu: np.ndarray = None  # type: ignore[assignment]
    pred: np.ndarray = None  # type: ignore[assignment]
    sums: tuple[float, float, float, float, float] = (0.0,) * 5
    step: float = 1.0

    def form(self, c: float) -> _QuadraticForm:
        """``SSE - c SST`` as a quadratic form in the standard normal Z."""
        total, s_mu, s_mu2, s_pred_mu, s_pred2 = self.sums
        rho = c / total
        b = self.v * ((1.0 - c) * self.mu - self.pred + rho * s_mu)
        k = (1.0 - c) * s_mu2 - 2.0 * s_pred_mu + s_pred2 + rho * s_mu * s_mu
        d = (1.0 - c) * self.v * self.sigma
        vv = float(self.v @ self.v)
        scale = math.sqrt(
            2.0 * float(d @ d + 2.0 * rho * d @ (self.v * self.v))
            + 2.0 * (rho * vv) ** 2
            + 4.0 * float(b @ b)
        )
        return _QuadraticForm(d, rho, self.v, b, k).scaled(scale)

    def cdf(self, x: float) -> float:
        c = 1.0 - x
        if c == 1.0:  # the diagonal vanishes: move off the singular point
            c = 1.0 - 1e-12
        return 1.0 - self.form(c).cdf(0.0)

    def interval(self, confidence_level: float) -> tuple[float, float, float]:
        half = 0.5 * (1.0 - confidence_level)
        low, high = (
            _quantile(self.cdf, p, self.centre, self.step, -math.inf, 1.0)
            for p in (half, 1.0 - half)
        )
        return low, high, confidence_level


def r2_distribution(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    weight: np.ndarray | None,
    *,
    nominal: float,
) -> R2Distribution | None:
    """The exact distribution of one output's R², or None (as for the MSE)."""
    n = y_true.shape[0]
    found = _noisy(sigma, weight, n)
    if found is None:
        return None
    noisy, s = found
    w = np.ones(n) if weight is None else weight
    mu, pred = y_true, y_pred
    sums = (
        float(w.sum()),
        float(w @ mu),
        float(w @ (mu * mu)),
        float(w @ (pred * mu)),
        float(w @ (pred * pred)),
    )
    if not all(math.isfinite(x) for x in sums) or not np.isfinite(s).all():
        return None
    s2 = s[noisy] ** 2
    if not (np.isfinite(s2).all() and np.all(s2 > 0.0)):  # over- or underflow
        return None
    # A first step of the order of the SD of R²: 2 Σ wσ² |d| / SST, at least 0.01.
    sst = sums[2] - sums[1] ** 2 / sums[0]
    guess = 2.0 * math.sqrt(float((w[noisy] * s2) @ (w[noisy] * (s2 + sst / sums[0]))))
    step = min(max(guess / sst, 0.01), 1.0) if sst > 0 else 1.0
    return R2Distribution(
        1.0,
        min(float(nominal), 1.0) if math.isfinite(nominal) else 0.0,
        -math.inf,
        1.0,
        w[noisy] * s[noisy],
        s[noisy].copy(),
        mu[noisy].copy(),
        pred[noisy].copy(),
        sums,
        step,
    )


def _folded_phi(a: np.ndarray, d: np.ndarray, sigma: np.ndarray) -> Callable:
    """``u -> Π E exp(iu a_i |d_i + σ_i Z_i|)``, closed forms in ``wofz``."""
    t = np.abs(d) / sigma
    ad = a * np.abs(d)
    damp = 0.5 * np.exp(-0.5 * t * t)
    it = 1j * t * _SQRT_HALF

    def phi(u: float) -> complex:
        su = a * sigma * u
        gauss = np.exp(1j * u * ad - 0.5 * su * su)
        x = su * _SQRT_HALF
        value = gauss + damp * (wofz(x + it) - wofz(-x + it))
        return complex(np.prod(value))

    return phi


@dataclass(frozen=True, eq=False, repr=False)
class MAEDistribution(_Continuous):
    """MAE ``= shift + Σ a_i |d_i + σ_i Z_i|`` over the noisy samples."""

    a: np.ndarray = None  # type: ignore[assignment]
    d: np.ndarray = None  # type: ignore[assignment]
    sigma: np.ndarray = None  # type: ignore[assignment]
    shift: float = 0.0

    def cdf(self, x: float) -> float:
        phi = _folded_phi(self.a / self.unit, self.d, self.sigma)
        return gil_pelaez_cdf(phi, x - self.shift / self.unit)


def mae_distribution(
    y_true: np.ndarray, y_pred: np.ndarray, sigma: Any, weight: np.ndarray | None
) -> MAEDistribution | None:
    """The exact distribution of one output's MAE, or None (as for the MSE)."""
    n = y_true.shape[0]
    found = _noisy(sigma, weight, n)
    d = y_true - y_pred
    if found is None or not np.all(np.isfinite(d)):
        return None
    noisy, s = found
    a = _weights(n, weight)
    shift = float(a[~noisy] @ np.abs(d[~noisy]))
    an, dn, sn = a[noisy], d[noisy], s[noisy]
    unit = math.sqrt(float((an * sn) @ (an * sn)))
    if not (0.0 < unit < math.inf):
        return None
    centre = (shift + float(an @ np.abs(dn))) / unit
    return MAEDistribution(
        unit, centre, 0.0, math.inf, an.copy(), dn.copy(), sn.copy(), shift
    )


def output_distributions(
    builder: Callable[..., Any],
    y_true: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    weight: np.ndarray | None,
    **options: Any,
) -> list[Any]:
    """``builder`` applied to each output column; array ``options`` per output."""
    with np.errstate(all="ignore"):  # each builder checks what it computes
        return [
            builder(
                y_true[:, j],
                y_pred[:, j],
                output_column(sigma, j),
                weight,
                **{
                    key: float(value[j]) if isinstance(value, np.ndarray) else value
                    for key, value in options.items()
                },
            )
            for j in range(y_true.shape[1])
        ]
