"""Quadrature machinery shared by the RMSE and R² moments.

:func:`gauss_kronrod` integrates a vector-valued integrand by adaptive
Gauss–Kronrod (7/15 points); :class:`BucketedPowerSums` holds the power sums
through which the samples with a small tilt enter the integrands, so that a
quadrature node costs ``O(1)`` apart from the few samples evaluated one by one
(user guide: :ref:`formula_rmse`, :ref:`formula_r2`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "CHUNK_ROWS",
    "SERIES_TERMS",
    "BucketedPowerSums",
    "ChunkSource",
    "gauss_kronrod",
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


#: A chunk source: ``chunk(start, stop)`` returns ``(s, base)`` for the noisy
#: samples among rows ``start:stop``: their scales ``s`` in (0, 1] and the rows
#: ``base`` (n, B) from which the families ``q`` are computed.
ChunkSource = Callable[[int, int], tuple[np.ndarray, np.ndarray]]


def _bucket_of(s: np.ndarray) -> np.ndarray:
    """Bucket id ``j`` with ``top_j/8 ≤ s < top_j``, ``top_j = 2^{1−3j}``."""
    _, exponent = np.frexp(s)  # s = mantissa * 2**exponent, exponent <= 1
    return ((1 - exponent) // 3).astype(np.int16)


def _power_sums(
    s: np.ndarray, q: np.ndarray, bucket: np.ndarray, n_terms: int, out: np.ndarray
) -> None:
    """Add ``Σ q (s/top_j)^n`` per bucket ``j`` to ``out[j]`` (``(n_ids, F, n+1)``)."""
    order = np.argsort(bucket, kind="stable")
    bucket, s, q = bucket[order], s[order], q[order]
    edges = np.flatnonzero(bucket[1:] != bucket[:-1]) + 1
    starts = np.concatenate([[0], edges])
    stops = np.concatenate([edges, [s.size]])
    powers = np.empty((n_terms + 1, s.size))
    powers[0] = 1.0
    for lo, hi in zip(starts, stops, strict=True):
        j = int(bucket[lo])
        block = powers[:, lo:hi]
        # s / top_j lies in [1/8, 1): the powers never under- or overflow.
        np.ldexp(s[lo:hi], 3 * j - 1, out=block[1])
        for n in range(2, n_terms + 1):
            np.multiply(block[n - 1], block[1], out=block[n])
        out[j] += (block @ q[lo:hi]).T


class BucketedPowerSums:
    """Power sums of per-sample weights ``q_{f,i}`` over scales ``s_i ∈ (0, 1]``.

    The samples are grouped into buckets of ``s`` within a factor 8 (bucket
    ``j`` holds ``top_j/8 ≤ s < top_j`` with ``top_j = 2^{1−3j}``) and, for
    every bucket, the normalised power sums ``Σ_i q_{f,i} (s_i/top_j)^n``
    (``n = 0..n_terms``) are accumulated in one streaming pass over the chunks
    of the data; they neither overflow nor underflow. The rows of the
    largest-``s`` buckets are also kept, up to ``keep`` rows, for the direct
    evaluation of the few samples that a node puts outside the series radius;
    rarer nodes that need more stream the data again. Memory is bounded by the
    chunk size and ``keep``, whatever the number of samples.

    For a scale ``A``, :meth:`split` returns the factors ``A·top_j`` of the
    buckets in which every ``A·s_i ≤ 1/32`` (series) and :meth:`direct` sums a
    per-sample function over the samples of the other ("leading") buckets.
    """

    def __init__(
        self,
        source: ChunkSource,
        n_rows: int,
        n_terms: int,
        families: Callable[[np.ndarray], np.ndarray],
        *,
        uniform: bool = False,
        keep: int = 1 << 17,
        chunk: int = 1 << 15,
    ) -> None:
        self._source = source
        self._families = families
        self._n_rows = n_rows
        self._chunk = chunk
        n_ids = 360  # bucket ids of positive doubles are 0..358
        sums = None
        kept: dict[int, list[tuple[np.ndarray, np.ndarray]]] = {}
        n_kept = 0
        threshold = n_ids  # keep the rows of the buckets with id < threshold
        s_uniform, base_total = None, None
        for start in range(0, n_rows, chunk):
            s, base = source(start, min(start + chunk, n_rows))
            if s.size == 0:
                continue
            q = families(base)
            if sums is None:
                sums = np.zeros((n_ids, q.shape[1], n_terms + 1))
            if uniform:  # one distinct scale: keep the total weight only
                s_uniform = s[0]
                total = q.sum(axis=0)
                base_total = total if base_total is None else base_total + total
                continue
            bucket = _bucket_of(s)
            _power_sums(s, q, bucket, n_terms, sums)
            for j in np.unique(bucket[bucket < threshold]):
                mask = bucket == j
                kept.setdefault(int(j), []).append((s[mask], base[mask]))
                n_kept += int(np.count_nonzero(mask))
            while n_kept > keep and kept:  # drop the smallest-s buckets first
                j = max(kept)
                n_kept -= sum(part[0].size for part in kept.pop(j))
                threshold = j
        if uniform and s_uniform is not None:
            bucket = _bucket_of(np.array([s_uniform]))
            sums = np.zeros((n_ids, base_total.size, n_terms + 1))
            q = base_total[None, :]
            _power_sums(np.array([s_uniform]), q, bucket, n_terms, sums)
            self._kept_s = np.array([s_uniform])
            self._kept_q = q
            threshold = n_ids
            present = np.array([int(bucket[0])])
        else:
            present = np.flatnonzero(np.any(sums != 0.0, axis=(1, 2)))
            parts = [part for j in sorted(kept) for part in kept[j]]
            if parts:
                self._kept_s = np.concatenate([part[0] for part in parts])
                self._kept_q = families(np.concatenate([part[1] for part in parts]))
            else:  # even the largest bucket exceeds `keep`: always stream
                self._kept_s = np.zeros(0)
                self._kept_q = np.zeros((0, sums.shape[1]))
        self.bucket_ids = present.astype(np.int64)
        self.tops = np.ldexp(1.0, 1 - 3 * self.bucket_ids)
        self.sums = sums[present]
        # Kept rows are ordered by bucket; kept_stops[b] ends bucket position b.
        kept_ids = _bucket_of(self._kept_s) if self._kept_s.size else np.zeros(0)
        self._n_kept_buckets = int(np.count_nonzero(self.bucket_ids < threshold))
        self._kept_stops = np.searchsorted(
            kept_ids, self.bucket_ids[: self._n_kept_buckets], side="right"
        )

    def split(self, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each scale ``A`` (1-D array): the number of leading buckets and
        the factors ``A·top_j`` (``(n_scales, n_buckets)``, 0 for the leading
        buckets, whose samples :meth:`direct` evaluates)."""
        factor = scale[:, None] * self.tops[None, :]
        # The leading buckets are those with a factor above the radius; the
        # factors decrease along the buckets, so they form a prefix.
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
        """``Σ_i func(A, s_i, q_i)`` over the leading buckets' samples, per node.

        ``func(A (K,), s (p,), q (p, F))`` returns ``(K, width)`` sums over
        the given samples. Nodes are grouped by their number of leading
        buckets; nodes beyond the kept rows stream the data once per call.
        """
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
                    s, base = self._source(
                        start, min(start + self._chunk, self._n_rows)
                    )
                    ids = _bucket_of(s)
                    mask = (ids >= low) & (ids < high)
                    if mask.any():
                        out[nodes] += func(
                            scale[nodes], s[mask], self._families(base[mask])
                        )
        return out
