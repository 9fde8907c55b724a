"""Exact moments of RMSE = √MSE under Gaussian label error (FORMULAS.md §5).

With ``p_i = w_i / Σ w`` (``1/M`` without weights), ``MSE = Σ p_i e_i²`` and
``e_i ~ N(d_i, σ_i²)``. The identity ``√x = (1/(2√π)) ∫₀^∞ (1 − e^{−tx}) t^{−3/2} dt``
gives, with ``m = E[MSE]``,

    b := √m − E[√MSE] = (1/(2√π)) ∫₀^∞ [L(t) − e^{−tm}] t^{−3/2} dt ≥ 0,
    L(t) = E e^{−t·MSE} = Π_i (1 + a_i)^{−1/2} exp(−t p_i d_i² / (1 + a_i)),
    a_i = 2 t p_i σ_i²,

so that ``E[RMSE] = √m − b`` and ``Var[RMSE] = m − E[RMSE]² = 2√m b − b²`` (no
cancellation). With ``Λ(t) = log L(t) + t m = Σ ½(a_i − log1p a_i) + t p_i d_i²
a_i/(1 + a_i) ≥ 0`` the integrand is ``e^{−tm} expm1(Λ) t^{−3/2}``.

The integral is taken in ``x = log(t m)`` by adaptive Gauss–Kronrod (7/15
points) on panels of ``[−40, 40]``; the part beyond the point where the
rigorous bound ``L(t₀)/√(π t₀)`` of the remaining tail (``L`` decreases) is
negligible is dropped. Each node costs ``O(M)`` in principle. To make it
``O(1)`` for most nodes, the samples are grouped by the size of ``s_i = a_i/A``
(``A = max_i a_i``): the samples with ``a_i ≤ 1/8`` enter through the
convergent power series of ``a − log1p(a)`` and ``a/(1 + a)``, whose
coefficients are power sums ``Σ q_i s_i^n`` computed once; only the few
samples with a large ``a_i`` are evaluated one by one. The machinery
(:class:`BucketedPowerSums`, :func:`gauss_kronrod`) is shared with the R²
quadrature.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "BucketedPowerSums",
    "direct_groups",
    "gauss_kronrod",
    "rmse_moments",
    "rmse_moments_delta",
]

# Gauss–Kronrod 7/15 nodes on [-1, 1] (QUADPACK qk15): the Kronrod nodes in
# increasing order; the Gauss nodes are those at odd positions.
_XK = np.array(
    [
        0.991455371120812639206854697526329,
        0.949107912342758524526189684047851,
        0.864864423359769072789712788640926,
        0.741531185599394439863864773280788,
        0.586087235467691130294144845693013,
        0.405845151377397166906606412076961,
        0.207784955007898467600689403773245,
        0.000000000000000000000000000000000,
    ]
)
_WK = np.array(
    [
        0.022935322010529224963732008058970,
        0.063092092629978553290700663189204,
        0.104790010322250183839876322541518,
        0.140653259715525918745189590510238,
        0.169004726639267902826583426598550,
        0.190350578064785409913256402421014,
        0.204432940075298892414161999234649,
        0.209482141084727828012999174891714,
    ]
)
_WG = np.array(
    [
        0.129484966168869693270611432679082,
        0.279705391489276667901467771423780,
        0.381830050505118944950369775488975,
        0.417959183673469387755102040816327,
    ]
)
GK_NODES = np.concatenate([-_XK[:-1], _XK[::-1]])
GK_WEIGHTS = np.concatenate([_WK[:-1], _WK[::-1]])
# Gauss weights on the 15 Kronrod nodes (zero on the Kronrod-only nodes).
G_WEIGHTS = np.zeros(15)
G_WEIGHTS[1::2] = np.concatenate([_WG[:-1], _WG[::-1]])

#: Samples with ``a_i <= _SERIES_RADIUS`` enter through power series.
_SERIES_RADIUS = 0.125
#: Series terms: (1/8)^26 * C(28, 2) < 1e-21, far below double precision.
_SERIES_TERMS = 26
_INV_2_SQRT_PI = 0.5 / math.sqrt(math.pi)
#: Rows per block in the one-off power sums (fits in cache).
_CHUNK = 4096


def gauss_kronrod(
    func: Callable[[np.ndarray], np.ndarray],
    lower: float,
    upper: float,
    *,
    n_panels: int,
    atol: np.ndarray,
    rtol: Any = 1e-14,
    max_depth: int = 12,
    max_panels: int = 3000,
) -> np.ndarray:
    """Adaptive Gauss–Kronrod (7/15) quadrature of a vector-valued integrand.

    ``func`` maps a 1-D array of nodes to an array ``(n_components, n_nodes)``;
    all active panels are evaluated in one call. The error of a panel is
    QUADPACK's estimate ``resasc·min(1, (200|K15 − G7|/resasc)^{3/2})``. A panel
    is accepted when, for every component, this is below its share
    (proportional to its width) of ``max(atol, rtol·|integral|)``, or once it
    has been bisected ``max_depth`` times (the integrand's own rounding noise
    then dominates); otherwise it is bisected. ``max_panels`` bounds the total
    work.
    """
    edges = np.linspace(lower, upper, n_panels + 1)
    lo, hi = edges[:-1], edges[1:]
    depth = np.zeros(n_panels, dtype=int)
    total_width = upper - lower
    atol = np.asarray(atol, dtype=float)
    rtol = np.broadcast_to(np.asarray(rtol, dtype=float), atol.shape)
    result = np.zeros_like(atol)
    n_done = 0
    while lo.size:
        half = 0.5 * (hi - lo)
        mid = 0.5 * (hi + lo)
        nodes = mid[:, None] + half[:, None] * GK_NODES
        values = np.asarray(func(nodes.ravel())).reshape(atol.size, lo.size, 15)
        kronrod = (values @ GK_WEIGHTS) * half
        gauss = (values @ G_WEIGHTS) * half
        mean = kronrod / (2.0 * half)
        resasc = (np.abs(values - mean[:, :, None]) @ GK_WEIGHTS) * half
        error = np.abs(kronrod - gauss)
        with np.errstate(divide="ignore", invalid="ignore"):
            scaled = np.where(
                resasc > 0,
                resasc * np.minimum(1.0, (200.0 * error / resasc) ** 1.5),
                error,
            )
        current = result + kronrod.sum(axis=1)
        tol = np.maximum(atol, rtol * np.abs(current))
        share = tol[:, None] * (2.0 * half / total_width)
        n_done += lo.size
        accept = np.all(scaled <= share, axis=0) | (depth >= max_depth)
        if n_done >= max_panels:
            accept[:] = True
        result += kronrod[:, accept].sum(axis=1)
        split = ~accept
        lo, mid_s, hi, depth = lo[split], mid[split], hi[split], depth[split] + 1
        lo, hi = np.concatenate([lo, mid_s]), np.concatenate([mid_s, hi])
        depth = np.concatenate([depth, depth])
    return result


class BucketedPowerSums:
    """Per-sample weights ``q_{f,i}`` and scales ``s_i ∈ (0, 1]`` grouped by size.

    The samples are sorted into buckets of ``s`` within a factor 8 (bucket
    ``j`` holds ``top_j/8 ≤ s < top_j`` with ``top_j = 2^{1−3j}``) and, for every
    bucket, the normalised power sums ``Σ_i q_{f,i} (s_i/top_j)^n``
    (``n = 0..n_terms``) are accumulated once; they neither overflow nor
    underflow. For a scale ``A``, :meth:`split` returns how many leading
    (largest-``s``) samples may have ``A·s_i`` above the series radius 1/8,
    and for every bucket the factor ``A·top_j`` (0 for those leading buckets):
    every other sample has ``A·s_i ≤ 1/8``.
    """

    def __init__(
        self,
        s: np.ndarray,
        base: np.ndarray,
        n_terms: int,
        families: Callable[[np.ndarray], np.ndarray],
    ) -> None:
        # ``families`` maps rows of ``base`` (n, B) to the weights q (n, F); it
        # is applied block by block so that q is never held for every sample.
        self._families = families
        self._q = np.zeros((0, 0))
        n_families = families(base[:1]).shape[1]
        self.compressed = bool(s.size and s.min() == s.max())
        if self.compressed:  # one distinct scale: one entry
            q_total = sum(
                families(base[i : i + _CHUNK]).sum(axis=0)
                for i in range(0, s.size, _CHUNK)
            )
            s = s[:1].copy()
            base = np.zeros((1, base.shape[1]))
            self._q = np.asarray(q_total)[None, :]
        _, exponent = np.frexp(s)  # s = mantissa * 2**exponent, exponent <= 1
        bucket = ((1 - exponent) // 3).astype(np.int16)
        if bucket.size > 1 and bucket.min() < bucket.max():
            order = np.argsort(bucket, kind="stable")
            bucket = bucket[order]
            self.s = s[order]
            self.base = base[order]
        else:
            self.s, self.base = s, base
        starts = np.concatenate([[0], np.flatnonzero(bucket[1:] != bucket[:-1]) + 1])
        ids = bucket[starts]
        self.bucket_ids = ids.astype(np.int64)
        self.starts = np.append(starts, s.size).astype(np.int64)
        self.tops = np.ldexp(1.0, 1 - 3 * self.bucket_ids)
        n_buckets = ids.size
        self.sums = np.zeros((n_buckets, n_families, n_terms + 1))
        powers = np.empty((n_terms + 1, _CHUNK))
        for start in range(0, s.size, _CHUNK):
            stop = min(start + _CHUNK, s.size)
            block = powers[:, : stop - start]
            block[0] = 1.0
            q = (
                self._q[start:stop]
                if self.compressed
                else families(self.base[start:stop])
            )
            first = np.searchsorted(self.starts, start, side="right") - 1
            last = np.searchsorted(self.starts, stop, side="left")
            for j in range(first, last):
                lo = max(start, self.starts[j])
                hi = min(stop, self.starts[j + 1])
                # s / top of its bucket lies in [1/8, 1): the powers never
                # under- or overflow.
                sub = block[:, lo - start : hi - start]
                np.ldexp(self.s[lo:hi], 3 * int(self.bucket_ids[j]) - 1, out=sub[1])
                for n in range(2, n_terms + 1):
                    np.multiply(sub[n - 1], sub[1], out=sub[n])
                self.sums[j] += (sub @ q[lo - start : hi - start]).T

    def q(self, stop: int) -> np.ndarray:
        """The weights ``q`` of the ``stop`` leading samples (cached)."""
        if self._q.shape[0] < stop:
            self._q = self._families(self.base[: max(stop, min(2 * stop, self.s.size))])
        return self._q[:stop]

    def split(self, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For each scale ``A`` (1-D array): the number of leading samples to
        evaluate one by one, the factors ``A·top_j`` of the series buckets
        (``(n_scales, n_buckets)``, 0 for the leading buckets) and the mask of
        the series buckets."""
        factor = scale[:, None] * self.tops[None, :]
        # The leading buckets are those with a factor above the radius; the
        # factors decrease along the buckets, so they form a prefix.
        lead = factor > _SERIES_RADIUS
        factor[lead] = 0.0
        return self.starts[np.count_nonzero(lead, axis=1)], factor, ~lead


def direct_groups(n_direct: np.ndarray) -> list[tuple[np.ndarray, int]]:
    """Nodes grouped by their number of leading samples, ``(nodes, stop)``.

    Groups are split so that a ``nodes × stop`` block has at most ~1e6
    entries; nodes without leading samples are left out.
    """
    groups = []
    for stop in np.unique(n_direct[n_direct > 0]):
        nodes = np.flatnonzero(n_direct == stop)
        size = max(1, (1 << 20) // int(stop))
        groups.extend(
            (nodes[i : i + size], int(stop)) for i in range(0, nodes.size, size)
        )
    return groups


def _half_a_minus_log1p(a: np.ndarray) -> np.ndarray:
    """``½(a − log1p a)`` without cancellation (5-term series below 1e-3)."""
    out = np.empty_like(a)
    small = a < 1e-3
    x = a[small]
    out[small] = 0.5 * x * x * (0.5 - x * (1 / 3 - x * (0.25 - x * (0.2 - x / 6))))
    y = a[~small]
    out[~small] = 0.5 * (y - np.log1p(y))
    return out


def _rmse_families(base: np.ndarray) -> np.ndarray:
    """``q = (1, k)`` from ``base = k``."""
    return np.concatenate([np.ones((base.shape[0], 1)), base], axis=1)


class _RMSEIntegrand:
    """``Λ``, ``log L`` and the integrand of ``b/√m`` in ``x = log(t m)`` (``m = 1``).

    ``c_i = 2 p_i σ_i²/m`` and ``k_i = p_i d_i²/m`` for the noisy samples and
    ``k₀ = Σ_exact p_i d_i²/m`` (so ``k₀ + Σ k + Σ c/2 = 1``); at ``t m = eˣ``:
    ``a_i = eˣ c_i``, ``Λ = Σ ½(a_i − log1p a_i) + eˣ Σ k_i a_i/(1 + a_i)`` and
    ``log L = Λ − eˣ``. Where ``Λ > 1`` the integrand is ``L − e^{−eˣ}``; there
    ``log L`` is summed directly, ``−eˣ k₀ + Σ [−½ log1p a_i − eˣ k_i/(1 + a_i)]``
    (for the series samples ``Λ_i − eˣ(k_i + c_i/2)``, with ``Λ_i ≤ a_i ·…``),
    because ``Λ − eˣ`` would cancel when the noisy samples carry most of ``m``.
    """

    def __init__(self, c: np.ndarray, k: np.ndarray, k_exact: float) -> None:
        self.c_max = float(c.max())
        self.k_exact = k_exact
        self.sums = BucketedPowerSums(
            c / self.c_max, k[:, None], _SERIES_TERMS, _rmse_families
        )
        n = np.arange(_SERIES_TERMS + 1)
        sign = np.where(n % 2 == 0, 1.0, -1.0)
        # ½ Σ_{n≥2} (−1)^n a^n / n   and   Σ_{n≥1} (−1)^{n−1} a^n
        self.log_coef = np.where(n >= 2, 0.5 * sign / np.maximum(n, 1), 0.0)
        self.frac_coef = np.where(n >= 1, -sign, 0.0)
        # Σ_bucket (k_i + c_i/2): the share of m of each bucket.
        self.bucket_m = self.sums.sums[:, 1, 0] + 0.5 * self.c_max * (
            self.sums.tops * self.sums.sums[:, 0, 1]
        )

    def parts(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(Λ, log L)`` at the nodes ``x``."""
        x = np.asarray(x, dtype=float)
        et = np.exp(x)
        scale = et * self.c_max
        n_direct, factor, series = self.sums.split(scale)
        powers = factor[:, :, None] ** np.arange(_SERIES_TERMS + 1)
        lam = np.einsum("kjn,jn->k", powers * self.log_coef, self.sums.sums[:, 0])
        lam += et * np.einsum(
            "kjn,jn->k", powers * self.frac_coef, self.sums.sums[:, 1]
        )
        log_l = lam - et * (self.k_exact + series @ self.bucket_m)
        for nodes, stop in direct_groups(n_direct):
            a = scale[nodes, None] * self.sums.s[:stop]
            q = self.sums.q(stop)
            lam[nodes] += _half_a_minus_log1p(a) @ q[:, 0] + et[nodes] * (
                (a / (1.0 + a)) @ q[:, 1]
            )
            log_l[nodes] -= 0.5 * (np.log1p(a) @ q[:, 0]) + et[nodes] * (
                (1.0 / (1.0 + a)) @ q[:, 1]
            )
        return lam, log_l

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        et = np.exp(x)
        lam, log_l = self.parts(x)
        out = np.empty_like(lam)
        small = lam <= 1.0
        out[small] = np.exp(-et[small]) * np.expm1(lam[small])
        big = ~small
        out[big] = np.exp(np.minimum(log_l[big], 0.0)) - np.exp(-et[big])
        return (out * np.exp(-0.5 * x))[None, :]


def _prepare(
    d: np.ndarray, sigma: Any, weight: np.ndarray | None
) -> tuple[float, np.ndarray, np.ndarray, float, float, float]:
    """Scale-free inputs ``(S, c, k, k₀, m̃, cv2)`` of one output.

    ``S = max(|d|, σ)`` keeps every square representable (σ ~ 1e-300 or
    1e200); with ``d̃ = d/S``, ``σ̃ = σ/S``: ``m̃ = Σ p(d̃² + σ̃²)``,
    ``c = 2pσ̃²/m̃``, ``k = pd̃²/m̃`` and ``cv2 = Var[MSE]/E[MSE]²``. ``c`` and
    ``k`` are returned for the samples with ``c > 0`` only; ``k₀`` sums ``k``
    over the others.
    """
    n = d.shape[0]
    scalar = isinstance(sigma, float)
    sigma_max = sigma if scalar else float(sigma.max())
    scale = max(float(d.max()), -float(d.min()), sigma_max)
    if scale == 0.0:
        return 0.0, np.zeros(0), np.zeros(0), 0.0, 0.0, 0.0
    d2 = d / scale
    np.multiply(d2, d2, out=d2)
    if scalar:
        s2 = np.full(n, (sigma / scale) ** 2)
    else:
        s2 = sigma / scale
        np.multiply(s2, s2, out=s2)
    if weight is None:
        d2 *= 1.0 / n
        s2 *= 1.0 / n
    else:
        p = weight / weight.sum()
        d2 *= p
        s2 *= p
    m = float(d2.sum() + s2.sum())
    noisy = s2 > 0.0
    if noisy.all():
        c, k, k_exact = s2, d2, 0.0
    else:
        c, k, k_exact = s2[noisy], d2[noisy], float(d2[~noisy].sum()) / m
    c *= 2.0 / m
    k *= 1.0 / m
    cv2 = float(np.sum(c * (0.5 * c + 2.0 * k)))  # Var[MSE]/E[MSE]²
    return scale, c, k, k_exact, m, cv2


def rmse_moments(
    d: np.ndarray, sigma: Any, weight: np.ndarray | None
) -> tuple[float, float]:
    """Exact ``(E[RMSE], Var[RMSE])`` for one output.

    ``d = y_true − y_pred`` (1-D), ``sigma`` a float or a 1-D array, ``weight``
    None or 1-D non-negative weights.
    """
    scale, c, k, k_exact, m, cv2 = _prepare(d, sigma, weight)
    if scale == 0.0:
        return 0.0, 0.0
    root_m = scale * math.sqrt(m)
    if c.size == 0:  # every label exact: no quadrature
        return root_m, 0.0
    integrand = _RMSEIntegrand(c, k, k_exact)
    # Delta-method b/√m sets the absolute tolerance.
    atol = 1e-15 * (cv2 / 8.0)
    # Drop the tail beyond x where L(t)/√(π t) (a bound on it) is negligible.
    upper = 40.0
    for block in (np.arange(0.0, 8.0, 2.0), np.arange(8.0, 40.0, 2.0)):
        log_l = integrand.parts(block)[1]
        small = log_l - 0.5 * block - 0.5 * math.log(math.pi) < math.log(1e-3 * atol)
        if small.any():
            upper = float(block[np.argmax(small)])
            break
    n_panels = max(4, math.ceil((upper + 40.0) / 2.5))
    beta = _INV_2_SQRT_PI * float(
        gauss_kronrod(
            integrand,
            -40.0,
            upper,
            n_panels=n_panels,
            atol=np.array([atol / _INV_2_SQRT_PI]),
        )[0]
    )
    expected = root_m * (1.0 - beta)
    variance = scale * scale * m * beta * (2.0 - beta)
    return expected, variance


def rmse_moments_delta(
    d: np.ndarray, sigma: Any, weight: np.ndarray | None
) -> tuple[float, float]:
    """Standard delta method (FORMULAS.md §5): ``E ≈ √m − v/(8 m^{3/2})``,
    ``Var ≈ v/(4m)``."""
    scale, _, _, _, m, cv2 = _prepare(d, sigma, weight)
    if scale == 0.0 or m == 0.0:
        return 0.0, 0.0
    root_m = scale * math.sqrt(m)
    return root_m * (1.0 - cv2 / 8.0), scale * scale * m * cv2 / 4.0
