"""Per-region statistics of the noise-resilience score of Viaña & Cohen.

The samples of every region are stored consecutively in "gathered" arrays; a
region is a run ``[start, start + count)`` of them. Partitions and groups
gather each sample once, sliding windows once per window (chunk by chunk).

Every region is computed in its own units: the residuals are divided by a power
of two close to their largest magnitude in the region, and each column of ``x``
is shifted and divided in the same way. Powers of two divide exactly, so the
dimensionless results (``nr``, ``nr_linear``, ``condition``) do not depend on
the scale of the data, from 1e-300 to 1e300; the quantities with units
(``alpha``, ``S1``, ``S2``, ``bound``) are converted back at the end, where a
value beyond the float range becomes ``inf`` or ``0``, as the true value would.
Constants are removed by subtracting the region's first value before the mean,
so that a constant error has a variance of exactly zero.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..utils._arrays import CHUNK_SIZE

__all__ = [
    "region_bounds",
    "region_compensation",
    "region_statistics",
    "statistics_of_regions",
]


def _power_of_two(values: np.ndarray) -> np.ndarray:
    """Largest power of two ``<= |values|`` (1 where ``values`` is 0)."""
    _, exponent = np.frexp(values)
    scale = np.ldexp(1.0, exponent - 1)
    return np.where(values == 0, 1.0, scale)


def _exponent(power_of_two: np.ndarray) -> np.ndarray:
    """``e`` with ``power_of_two == 2**e``."""
    return np.frexp(power_of_two)[1] - 1


class _Segments:
    """Sums, extrema and broadcasts over the consecutive runs of gathered arrays."""

    def __init__(self, starts: np.ndarray, counts: np.ndarray) -> None:
        self.starts = starts
        self.counts = counts
        self.lasts = starts + counts - 1

    def sum(self, values: np.ndarray) -> np.ndarray:
        return np.add.reduceat(values, self.starts, axis=0)

    def max(self, values: np.ndarray) -> np.ndarray:
        return np.maximum.reduceat(values, self.starts, axis=0)

    def min(self, values: np.ndarray) -> np.ndarray:
        return np.minimum.reduceat(values, self.starts, axis=0)

    def spread(self, per_region: np.ndarray) -> np.ndarray:
        """Each region's value repeated for each of its samples."""
        return np.repeat(per_region, self.counts, axis=0)

    def scaled(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``values`` divided by a per-region power of two; also the divisors."""
        scale = _power_of_two(self.max(np.abs(values)))
        return values / self.spread(scale), scale

    def centred(self, values: np.ndarray) -> np.ndarray:
        """``values`` minus their region mean (after removing the first value)."""
        shifted = values - self.spread(values[self.starts])
        counts = self.counts.reshape((-1,) + (1,) * (values.ndim - 1))
        return shifted - self.spread(self.sum(shifted) / counts)


def _slopes(
    seg: _Segments, d: np.ndarray, b: np.ndarray, slope: str
) -> tuple[np.ndarray, np.ndarray]:
    """The slope α of ``b`` on the columns of ``d`` per region, in scaled units.

    Also returns a boolean mask of the regions where it is not defined (``x``
    constant, or its columns collinear, inside the region).
    """
    if slope == "endpoints":  # one column, sorted by x inside each region
        run = d[seg.lasts, 0] - d[seg.starts, 0]
        singular = run == 0
        alpha = (b[seg.lasts] - b[seg.starts]) / np.where(singular, 1.0, run)
        return alpha[:, None], singular
    gram = seg.sum(d[:, :, None] * d[:, None, :])
    rhs = seg.sum(d * b[:, None])
    singular = np.linalg.matrix_rank(gram) < d.shape[1]
    safe = np.where(singular[:, None, None], np.eye(d.shape[1]), gram)
    return np.linalg.solve(safe, rhs[:, :, None])[:, :, 0], singular


def region_statistics(
    x: np.ndarray,
    e_y: np.ndarray,
    e_pred: np.ndarray,
    lam: np.ndarray,
    starts: np.ndarray,
    counts: np.ndarray,
    *,
    slope: str,
) -> dict[str, Any]:
    """The per-region quantities of NOISE_RESILIENCE.md §2–§3 and §6.

    Parameters
    ----------
    x : ndarray of shape (n_gathered, n_features)
        The input variable(s), gathered region by region.
    e_y, e_pred, lam : ndarray of shape (n_gathered,)
        ``y − y_ref``, ``y_pred − y_ref`` and ``y − y_pred``, gathered alike.
    starts, counts : ndarray of shape (n_regions,)
        First position and length of each region in the gathered arrays.
    slope : {"least_squares", "endpoints"}
        How α is computed (``"endpoints"``: one column, sorted by ``x``).

    Returns
    -------
    stats : dict
        ``ss_y`` (the centred sum of squares of ``e_y`` in the region's scaled
        units, 0 exactly when ``e_y`` is constant there), ``nr``, ``nr_linear``,
        ``condition``, ``alpha`` and ``S1`` of shape (n_regions, n_features),
        ``S2``, ``bound`` (``S2 / (2 |S1|)`` for one feature, else None),
        ``x_min``, ``x_max`` and ``singular`` (α undefined).
    """
    seg = _Segments(starts, counts)
    stacked = np.stack([e_y, e_pred, lam], axis=1)
    r_scale = _power_of_two(seg.max(np.abs(stacked)).max(axis=1))
    a, b, lam_s = (stacked / seg.spread(r_scale)[:, None]).T
    a, b = seg.centred(a), seg.centred(b)
    ss_y, ss_pred = seg.sum(a * a), seg.sum(b * b)

    x_scaled, x_scale = seg.scaled(x)
    dx = seg.centred(x_scaled)
    d, dx_scale = seg.scaled(dx)
    # x = 2**x_exp · d + const and residual = 2**r_exp · scaled, per region:
    # the results with units are scaled back by exact powers of two (ldexp),
    # so that 0 stays 0 and only a value beyond the float range overflows.
    x_exp = _exponent(x_scale) + _exponent(dx_scale)
    r_exp = _exponent(r_scale)
    alpha, singular = _slopes(seg, d, b, slope)
    s1 = seg.sum(d * lam_s[:, None])
    s2 = seg.sum(lam_s * lam_s)
    linear = 2.0 * np.sum(alpha * s1, axis=1) + s2
    defined = ss_y > 0
    denominator = np.where(defined, ss_y, 1.0)
    with np.errstate(over="ignore", under="ignore"):
        stats: dict[str, Any] = {
            "ss_y": ss_y,
            "nr": np.where(defined, 1.0 - ss_pred / denominator, np.nan),
            "nr_linear": np.where(defined, linear / denominator, np.nan),
            "condition": linear >= 0,
            "alpha": np.ldexp(alpha, r_exp[:, None] - x_exp),
            "S1": np.ldexp(s1, x_exp + r_exp[:, None]),
            "S2": np.ldexp(s2, 2 * r_exp),
            "bound": None,
            "x_min": seg.min(x),
            "x_max": seg.max(x),
            "singular": singular,
        }
        if x.shape[1] == 1:
            s1_abs = np.abs(s1[:, 0])
            ratio = s2 / (2.0 * np.where(s1_abs > 0, s1_abs, 1.0))
            stats["bound"] = np.where(
                s1_abs > 0, np.ldexp(ratio, r_exp - x_exp[:, 0]), np.inf
            )
    return stats


def region_compensation(
    x: np.ndarray,
    lam: np.ndarray,
    gamma: np.ndarray,
    starts: np.ndarray,
    counts: np.ndarray,
    *,
    normalize: bool,
) -> np.ndarray:
    """The compensation G of [10] per region (NaN where γ is constant).

    ``w = (γ − γ_min) / ((γ_max − γ_min)(1 + |x_c − x|))`` with ``x_c`` the
    centre of the region's range of ``x`` (the Euclidean distance for several
    columns) and ``G = Σ w λ``, or ``Σ w λ / Σ w`` with ``normalize``.
    """
    seg = _Segments(starts, counts)
    g, _ = seg.scaled(gamma)  # the weights depend on ratios of γ only
    low, high = seg.min(g), seg.max(g)
    constant = high == low
    span = np.where(constant, 1.0, high - low)
    with np.errstate(over="ignore", under="ignore"):
        centre = seg.min(x) / 2 + seg.max(x) / 2
        offset = x - seg.spread(centre)
        if x.shape[1] == 1:
            distance = np.abs(offset[:, 0])
        else:
            distance = np.hypot.reduce(offset, axis=1)
        weight = (g - seg.spread(low)) / (seg.spread(span) * (1.0 + distance))
        lam_s, r_scale = seg.scaled(lam)
        total = seg.sum(weight * lam_s)
        if normalize:
            total_weight = seg.sum(weight)
            total = total / np.where(total_weight > 0, total_weight, 1.0)
        result = total * r_scale
    return np.where(constant, np.nan, result)


def region_bounds(
    mode: str, size: int, n_samples: int, group_index: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Starts and lengths of the regions in the sorted samples."""
    if mode == "window":
        starts = np.arange(n_samples - size + 1)
        return starts, np.full(starts.size, size)
    if mode == "groups":
        assert group_index is not None
        starts = np.flatnonzero(np.r_[True, np.diff(group_index) != 0])
    else:
        starts = np.floor(np.linspace(0, n_samples, size + 1)[:-1] + 0.5)
        starts = starts.astype(np.intp)
    return starts, np.diff(np.r_[starts, n_samples])


def statistics_of_regions(
    x: np.ndarray,
    residuals: tuple[np.ndarray, ...],
    gamma: np.ndarray | None,
    regions: tuple[np.ndarray, np.ndarray],
    *,
    slope: str,
    normalize: bool,
) -> dict[str, Any]:
    """:func:`region_statistics` (and G) of the regions ``(starts, counts)``.

    Overlapping regions (sliding windows, all of one width) are gathered a
    chunk at a time, so that the memory stays bounded whatever the window.
    """
    starts, counts = regions
    overlapping = bool(np.any(np.diff(starts) < counts[:-1]))
    step = max(1, CHUNK_SIZE // int(counts.max())) if overlapping else starts.size
    parts = []
    for first in range(0, starts.size, step):
        chunk = slice(first, first + step)
        if overlapping:
            # Sliding windows, all of the same width.
            width = int(counts[0])
            rows = (starts[chunk, None] + np.arange(width)).ravel()
            local = np.r_[0, np.cumsum(counts[chunk])[:-1]]
        else:
            rows, local = slice(None), starts
        args = (x[rows], *(a[rows] for a in residuals))
        part = region_statistics(*args, local, counts[chunk], slope=slope)
        if gamma is not None:
            part["G"] = region_compensation(
                x[rows], residuals[2][rows], gamma[rows], local, counts[chunk],
                normalize=normalize,
            )  # fmt: skip
        parts.append(part)
    if len(parts) == 1:
        return parts[0]
    return {
        key: None if value is None else np.concatenate([p[key] for p in parts])
        for key, value in parts[0].items()
    }
