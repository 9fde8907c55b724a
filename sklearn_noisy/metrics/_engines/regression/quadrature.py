"""Adaptive quadrature and bucketed power sums shared by the RMSE and R²
moments, and the RMSE's (user guide: :ref:`formula_rmse`, :ref:`formula_r2`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "CHUNK_ROWS",
    "LEGENDRE_64",
    "SERIES_TERMS",
    "BucketedPowerSums",
    "ChunkSource",
    "gauss_kronrod",
    "rmse_moments",
    "rmse_nominal",
    "tilt_integral",
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
GK_NODES = np.concatenate([-_XK[:-1], _XK[::-1]])
GK_WEIGHTS = np.concatenate([_WK[:-1], _WK[::-1]])
#: Gauss–Legendre nodes and weights on [-1, 1], 64 points.
LEGENDRE_64 = np.polynomial.legendre.leggauss(64)
# Gauss weights on the 15 Kronrod nodes (zero on the Kronrod-only nodes).
G_WEIGHTS = np.zeros(15)
G_WEIGHTS[1::2] = np.polynomial.legendre.leggauss(7)[1]

#: Samples with ``a_i <= _SERIES_RADIUS`` enter through power series.
_SERIES_RADIUS = 1.0 / 32.0
#: Series terms: the first omitted term of (1 + a)^{-3} is below
#: C(17, 2) (1/32)^15 < 1e-20 relative, far below double precision.
SERIES_TERMS = 14
#: Rows per block when reading the samples (bounds the temporary memory).
CHUNK_ROWS = 1 << 15


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
    """Adaptive Gauss–Kronrod (7/15) quadrature of ``func(nodes) -> (n_components,
    n_nodes)``, a panel accepted on QUADPACK's error estimate or at ``max_depth``."""
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


#: ``chunk(start, stop) -> (s, q)``: the noisy rows' scales in (0, 1] and their
#: families ``q`` (n, F).
ChunkSource = Callable[[int, int], tuple[np.ndarray, np.ndarray]]


def _bucket_of(s: np.ndarray) -> np.ndarray:
    """Bucket id ``j`` with ``top_j/8 ≤ s < top_j``, ``top_j = 2^{1−3j}``."""
    _, exponent = np.frexp(s)  # s = mantissa * 2**exponent, exponent <= 1
    return ((1 - exponent) // 3).astype(np.int16)


class BucketedPowerSums:
    """Power sums ``Σ_i q_{f,i} (s_i/top_j)^n`` by bucket ``top_j/8 ≤ s < top_j``
    (``top_j = 2^{1−3j}``), one pass; the largest-``s`` rows (up to ``keep``) are
    kept for :meth:`direct`, which streams the data again for more. ``uniform``:
    one distinct ``s``, summed to one row."""

    def __init__(
        self,
        source: ChunkSource,
        n_rows: int,
        n_terms: int,
        *,
        uniform: bool = False,
        keep: int = 1 << 17,
        chunk: int = 1 << 15,
    ) -> None:
        self._source, self._n_rows, self._chunk = source, n_rows, chunk
        self._n_terms, self._keep = n_terms, keep
        self._sums = None
        self._kept: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
        self._n_kept, threshold = 0, 360  # bucket ids of positive doubles: 0..358
        blocks = (source(i, min(i + chunk, n_rows)) for i in range(0, n_rows, chunk))
        if uniform:  # one distinct scale: the total weight only
            total = 0.0
            for s, q in blocks:
                if s.size:
                    one, total = s[:1], total + q.sum(axis=0)
            blocks = [(one, total[None, :])]
        for s, q in blocks:
            threshold = self._add(s, q, threshold)
        sums = self._sums
        present = np.flatnonzero(np.any(sums != 0.0, axis=(1, 2)))
        parts = [part for j in sorted(self._kept) for part in self._kept[j]]
        # Kept rows are ordered by bucket (none when the largest bucket exceeds
        # `keep`: always stream); kept_stops[b] ends bucket position b.
        self._kept_s = np.concatenate([np.zeros(0)] + [s for s, _ in parts])
        self._kept_q = np.concatenate(
            [np.zeros((0, sums.shape[1]))] + [q for _, q in parts]
        )
        self.bucket_ids = present.astype(np.int64)
        self.tops = np.ldexp(1.0, 1 - 3 * self.bucket_ids)
        self.sums = sums[present]
        self._n_kept_buckets = int(np.count_nonzero(self.bucket_ids < threshold))
        self._kept_stops = np.searchsorted(
            _bucket_of(self._kept_s),
            self.bucket_ids[: self._n_kept_buckets],
            side="right",
        )

    def _add(self, s: np.ndarray, q: np.ndarray, threshold: int) -> int:
        """Add one block's power sums; keep its rows of the buckets below
        ``threshold``, then drop the smallest-``s`` buckets beyond ``keep``."""
        if self._sums is None:
            self._sums = np.zeros((360, q.shape[1], self._n_terms + 1))
        bucket = _bucket_of(s)
        order = np.argsort(bucket, kind="stable")
        bucket, s_sorted, q_sorted = bucket[order], s[order], q[order]
        ids, starts = np.unique(bucket, return_index=True)
        stops = np.append(starts[1:], s.size)
        powers = np.empty((self._n_terms + 1, s.size))
        powers[0] = 1.0
        for j, lo, hi in zip(ids, starts, stops, strict=True):
            block = powers[:, lo:hi]
            # s / top_j lies in [1/8, 1): the powers never under- or overflow.
            np.ldexp(s_sorted[lo:hi], 3 * int(j) - 1, out=block[1])
            for n in range(2, self._n_terms + 1):
                np.multiply(block[n - 1], block[1], out=block[n])
            self._sums[j] += (block @ q_sorted[lo:hi]).T
            if j < threshold:
                self._kept.setdefault(int(j), []).append(
                    (s_sorted[lo:hi], q_sorted[lo:hi])
                )
                self._n_kept += int(hi - lo)
        while self._n_kept > self._keep and self._kept:
            threshold = max(self._kept)
            self._n_kept -= sum(part[0].size for part in self._kept.pop(threshold))
        return threshold

    def split(self, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per scale ``A``: the number of leading buckets and the series factors
        ``A·top_j`` (0 for the leading ones)."""
        factor = scale[:, None] * self.tops[None, :]
        lead = factor > _SERIES_RADIUS
        factor[lead] = 0.0
        return np.count_nonzero(lead, axis=1), factor

    def direct(
        self,
        scale: np.ndarray,
        n_lead: np.ndarray,
        func: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
        width: int,
    ) -> np.ndarray:
        """``Σ_i func(A (K,), s_i, q_i) -> (K, width)`` over the leading buckets."""
        out = np.zeros((scale.size, width))
        n_kept = self._n_kept_buckets
        for lead in np.unique(n_lead[n_lead > 0]):
            nodes = np.flatnonzero(n_lead == lead)
            stop = int(self._kept_stops[min(lead, n_kept) - 1]) if n_kept else 0
            if stop:
                size = max(1, (1 << 20) // stop)
                for i in range(0, nodes.size, size):
                    sub = nodes[i : i + size]
                    out[sub] += func(
                        scale[sub], self._kept_s[:stop], self._kept_q[:stop]
                    )
            if lead > n_kept:  # stream the buckets that were not kept
                low = self.bucket_ids[n_kept]
                high = self.bucket_ids[lead] if lead < self.bucket_ids.size else 1 << 15
                for start in range(0, self._n_rows, self._chunk):
                    s, q = self._source(start, min(start + self._chunk, self._n_rows))
                    ids = _bucket_of(s)
                    mask = (ids >= low) & (ids < high)
                    if mask.any():
                        out[nodes] += func(scale[nodes], s[mask], q[mask])
        return out


def tilt_integral(
    integrand: Callable[[np.ndarray], np.ndarray],
    stop: Callable[[np.ndarray], np.ndarray],
    blocks: tuple[np.ndarray, ...],
    cap: float,
    cap_code: int,
    *,
    atol: np.ndarray,
    rtol: Any = 1e-14,
) -> tuple[np.ndarray, float, int]:
    """``(∫ integrand dx, upper, code)`` over ``x = log t`` in ``[-40, upper]``:
    ``upper`` the first node of ``blocks`` with a non-zero ``stop(block)`` code,
    else ``cap`` (code ``cap_code``); panels of about 2.5."""
    upper, code = cap, cap_code
    for block in blocks:
        codes = stop(block)
        if codes.any():
            first = int(np.argmax(codes != 0))
            upper, code = float(block[first]), int(codes[first])
            break
    n_panels = max(4, math.ceil((upper + 40.0) / 2.5))
    integral = gauss_kronrod(
        integrand, -40.0, upper, n_panels=n_panels, atol=atol, rtol=rtol
    )
    return integral, upper, code


_INV_2_SQRT_PI = 0.5 / math.sqrt(math.pi)
#: Below this ``CV² = Var[MSE]/E[MSE]²`` the delta method is exact to double
#: precision (its relative error is of order ``CV``).
_CV2_DELTA_EXACT = 1e-32


def _half_a_minus_log1p(a: np.ndarray) -> np.ndarray:
    """``½(a − log1p a)`` without cancellation (5-term series below 1e-3)."""
    out = np.empty_like(a)
    small = a < 1e-3
    x = a[small]
    out[small] = 0.5 * x * x * (0.5 - x * (1 / 3 - x * (0.25 - x * (0.2 - x / 6))))
    y = a[~small]
    out[~small] = 0.5 * (y - np.log1p(y))
    return out


class _RMSEIntegrand:
    """``Λ``, ``log L`` and the integrand of ``b/√m`` in ``x = log(t m)``, from
    ``c_i = 2 p_i σ_i²/m``, ``k_i = p_i d_i²/m`` and the exact samples' ``k₀``."""

    def __init__(self, sums: BucketedPowerSums, c_max: float, k_exact: float) -> None:
        self.c_max, self.k_exact, self.sums = c_max, k_exact, sums
        n = np.arange(SERIES_TERMS + 1)
        sign = np.where(n % 2 == 0, 1.0, -1.0)
        # ½ Σ_{n≥2} (−1)^n a^n / n   and   Σ_{n≥1} (−1)^{n−1} a^n
        self.log_coef = np.where(n >= 2, 0.5 * sign / np.maximum(n, 1), 0.0)
        self.frac_coef = np.where(n >= 1, -sign, 0.0)
        # Σ_bucket (k_i + c_i/2): the share of m of each bucket.
        self.bucket_m = sums.sums[:, 1, 0] + 0.5 * c_max * (
            sums.tops * sums.sums[:, 0, 1]
        )

    def _direct(self, a_scale: np.ndarray, s: np.ndarray, q: np.ndarray) -> np.ndarray:
        a = a_scale[:, None] * s
        e = a_scale / self.c_max
        lam_part = _half_a_minus_log1p(a) @ q[:, 0] + e * ((a / (1.0 + a)) @ q[:, 1])
        log_part = -0.5 * (np.log1p(a) @ q[:, 0]) - e * ((1.0 / (1.0 + a)) @ q[:, 1])
        return np.stack([lam_part, log_part], axis=1)

    def parts(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(Λ, log L)`` at the nodes ``x``."""
        et = np.exp(x)
        scale = et * self.c_max
        n_lead, factor = self.sums.split(scale)
        powers = factor[:, :, None] ** np.arange(SERIES_TERMS + 1)
        lam = np.einsum("kjn,jn->k", powers * self.log_coef, self.sums.sums[:, 0])
        lam += et * np.einsum(
            "kjn,jn->k", powers * self.frac_coef, self.sums.sums[:, 1]
        )
        log_l = lam - et * (self.k_exact + (factor > 0.0) @ self.bucket_m)
        extra = self.sums.direct(scale, n_lead, self._direct, 2)
        return lam + extra[:, 0], log_l + extra[:, 1]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        et = np.exp(x)
        lam, log_l = self.parts(x)
        small = lam <= 1.0
        out = np.exp(np.minimum(log_l, 0.0)) - np.exp(-et)
        out[small] = np.exp(-et[small]) * np.expm1(lam[small])
        return (out * np.exp(-0.5 * x))[None, :]


def rmse_moments(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    weight: np.ndarray | None,
    method: str = "exact",
) -> tuple[float, float]:
    """``(E[RMSE], Var[RMSE])`` of one output with a noisy label: ``b = √m −
    E[√MSE]`` by quadrature (``E = √m − b``, ``Var = 2√m b − b²``), or the delta
    method; ``(0, 0)`` where the noise vanishes (the caller's nominal)."""
    n = y_true.shape[0]
    blocks = range(0, n, CHUNK_ROWS)
    scalar = isinstance(sigma, float)

    def residual(i: int) -> np.ndarray:
        return y_true[i : i + CHUNK_ROWS] - y_pred[i : i + CHUNK_ROWS]

    # In units of ``max(|d|, σ)``: ``p d̃²`` and ``p σ̃²`` per block.
    d_max = max(float(np.max(np.abs(residual(i)))) for i in blocks)
    scale = max(d_max, sigma if scalar else float(np.max(sigma)))
    if scale == 0.0:
        return 0.0, 0.0
    w_total = float(n) if weight is None else float(weight.sum())

    def squares(i: int) -> tuple[np.ndarray, np.ndarray]:
        d2 = residual(i) / scale
        d2 *= d2
        if scalar:
            s2 = np.full(d2.shape, (sigma / scale) ** 2)
        else:
            s2 = sigma[i : i + CHUNK_ROWS] / scale
            s2 *= s2
        p = 1.0 / n if weight is None else weight[i : i + CHUNK_ROWS] / w_total
        d2 *= p
        s2 *= p
        return d2, s2

    sum_d2 = sum_s2 = sum_var = k_exact = 0.0
    c_max, c_min, n_noisy = 0.0, math.inf, 0
    for i in blocks:
        d2, s2 = squares(i)
        noisy = s2 > 0.0
        sum_d2 += float(d2.sum())
        sum_s2 += float(s2.sum())
        sum_var += float(np.sum(s2 * (2.0 * s2 + 4.0 * d2)))
        k_exact += float(d2[~noisy].sum())
        if noisy.any():
            c_max = max(c_max, float(s2[noisy].max()))
            c_min = min(c_min, float(s2[noisy].min()))
            n_noisy += int(np.count_nonzero(noisy))
    if n_noisy == 0:  # only zero-weight rows are noisy, or σ² underflows
        return 0.0, 0.0
    uniform = c_min == c_max
    m = sum_d2 + sum_s2
    root_m = scale * math.sqrt(m)
    cv2 = sum_var / (m * m)  # Var[MSE]/E[MSE]²
    if method == "delta" or cv2 < _CV2_DELTA_EXACT:
        # Products of Python floats give inf beyond the float64 range (** raises).
        return root_m * (1.0 - cv2 / 8.0), scale * scale * (m * cv2 / 4.0)
    c_max = 2.0 * c_max / m

    def source(start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """``(s = c/c_max, q = (1, k))`` of the noisy samples of rows ``start:stop``."""
        d2, s2 = squares(start)
        d2, s2 = d2[: stop - start], s2[: stop - start]
        noisy = s2 > 0.0
        s = np.minimum(s2[noisy] * (2.0 / (m * c_max)), 1.0)
        return s, np.column_stack([np.ones(s.size), d2[noisy] / m])

    sums = BucketedPowerSums(source, n, SERIES_TERMS, uniform=uniform, chunk=CHUNK_ROWS)
    integrand = _RMSEIntegrand(sums, c_max, k_exact / m)
    # Delta-method b/√m sets the absolute tolerance.
    atol = 1e-15 * (cv2 / 8.0)

    def stop(block: np.ndarray) -> np.ndarray:  # L(t)/√(π t) bounds the integrand
        log_l = integrand.parts(block)[1]
        small = log_l - 0.5 * block - 0.5 * math.log(math.pi) < math.log(1e-3 * atol)
        return small.astype(int)

    blocks = (np.arange(0.0, 8.0, 2.0), np.arange(8.0, 40.0, 2.0))
    integral = tilt_integral(
        integrand, stop, blocks, 40.0, 1, atol=np.array([atol / _INV_2_SQRT_PI])
    )[0]
    beta = _INV_2_SQRT_PI * float(integral[0])
    return root_m * (1.0 - beta), scale * scale * m * beta * (2.0 - beta)


#: Mean squared errors in this range are summed without scaling: neither the
#: squares nor their sum left the normal float64 range.
_MSE_NORMAL = (1e-290, 1e300)


def rmse_nominal(
    y_true: np.ndarray, y_pred: np.ndarray, weight: np.ndarray | None, mse: float
) -> float:
    """``√mse`` as scikit-learn computes it; outside the normal range, summed again
    in units of the largest residual."""
    in_range = _MSE_NORMAL[0] < mse < _MSE_NORMAL[1]
    if in_range or (mse == 0.0 and not np.any(y_true != y_pred)):
        return math.sqrt(mse)
    if mse < 0.0:  # negative sample weights: scikit-learn's sqrt gives NaN
        return math.nan
    n = y_true.shape[0]
    d_max = max(
        float(np.max(np.abs(y_true[i : i + CHUNK_ROWS] - y_pred[i : i + CHUNK_ROWS])))
        for i in range(0, n, CHUNK_ROWS)
    )
    total = 0.0
    for i in range(0, n, CHUNK_ROWS):
        d = (y_true[i : i + CHUNK_ROWS] - y_pred[i : i + CHUNK_ROWS]) / d_max
        d *= d
        total += float(np.sum(d if weight is None else d * weight[i : i + CHUNK_ROWS]))
    w_total = float(n) if weight is None else float(weight.sum())
    return d_max * math.sqrt(total / w_total)
