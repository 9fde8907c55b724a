"""The noise-resilience score NR of Viaña & Cohen, its local conditions and G.

Equations in brackets are the paper's; the specification, with the errors of
the print and how every region is computed in its own units, is the user guide
page :ref:`noise_resilience`.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from sklearn.exceptions import UndefinedMetricWarning

from .._noisy_score import _check_choice
from ..utils._arrays import (
    CHUNK_SIZE,
    as_float_array,
    check_finite,
    encode_groups,
    read_only,
)
from ..utils._warnings import warn

__all__ = ["NoiseResilienceResult", "noise_resilience_score"]

#: Smallest number of samples in a region: a slope and a spread need at least 3.
MIN_REGION_SIZE = 3


@dataclass(frozen=True, repr=False, eq=False)
class NoiseResilienceResult:
    """Result of :func:`noise_resilience_score`: NR and its per-region table.

    The arrays are read-only, one entry (row) per region, in the order of ``x``
    or of the sorted group labels; the quantities are defined in the
    :ref:`User Guide <noise_resilience>` (numbers in brackets: the paper's).

    Attributes
    ----------
    score : float
        NR [37], the mean of ``nr`` over the regions, in ``(-inf, 1]``.
    n_samples : ndarray of int
        The number of samples in each region.
    x_min, x_max, nr, nr_linear, alpha, S1, S2, bound, condition, G : ndarray
        Per region: the range of ``x``, NR_j, its closed form [40], the slope α
        [8], ``S1`` [30], ``S2`` [31], the bound ``B`` [33] (None for several
        features), the local condition [31] and the compensation [10] (None
        without ``confidence``). ``x_min``, ``x_max``, ``alpha`` and ``S1`` have
        one column per feature when ``x`` has several.
    mode : {"partition", "window", "groups"}
        How the regions were formed.
    slope : {"least_squares", "endpoints"}
        How α was computed.
    group_labels : ndarray or None
        The group of each region (``groups`` mode), else None.
    n_omitted : int
        Regions left out because the data error had zero variance there.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_noisy.metrics import noise_resilience_score
    >>> x = np.arange(8.0)
    >>> y = np.array([1.0, -1.0, 1.0, -1.0, 2.0, -2.0, 2.0, -2.0])
    >>> result = noise_resilience_score(x, y, 0.5 * y, np.zeros(8), n_regions=2)
    >>> result.score, result.nr
    (0.75, array([0.75, 0.75]))
    """

    score: float
    n_samples: np.ndarray
    x_min: np.ndarray
    x_max: np.ndarray
    nr: np.ndarray
    nr_linear: np.ndarray
    alpha: np.ndarray
    S1: np.ndarray
    S2: np.ndarray
    bound: np.ndarray | None
    condition: np.ndarray
    G: np.ndarray | None = None
    mode: str = "partition"
    slope: str = "least_squares"
    group_labels: np.ndarray | None = None
    n_omitted: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "score", float(self.score))
        object.__setattr__(self, "n_omitted", int(self.n_omitted))
        for name in (*_REGION_FIELDS, "group_labels"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, read_only(value))

    def __reduce__(self) -> tuple[Any, ...]:
        # Through the constructor, so that the arrays are read-only again.
        return type(self), tuple(getattr(self, f.name) for f in fields(self))

    @property
    def n_regions(self) -> int:
        """Number of regions (windows, groups) in the score."""
        return int(self.nr.shape[0])

    @property
    def fraction_satisfied(self) -> float:
        """Fraction of the regions where the condition ``2 α·S1 + S2 >= 0`` holds."""
        return float(np.mean(self.condition))

    def _columns(self) -> dict[str, np.ndarray]:
        columns = {} if self.group_labels is None else {"group": self.group_labels}
        for name in _REGION_FIELDS:
            value = getattr(self, name)
            if value is not None and value.ndim == 2:
                columns.update({f"{name}_{k}": v for k, v in enumerate(value.T)})
            elif value is not None:
                columns[name] = value
        return columns

    def to_frame(self) -> Any:
        """The per-region table as a pandas DataFrame (``alpha_0``, ... per feature)."""
        import pandas as pd

        frame = pd.DataFrame(self._columns())
        frame.index.name = "region"
        return frame

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable summary: the score and the per-region table."""
        names = ("score", "mode", "slope", "n_regions", "n_omitted")
        summary = {name: getattr(self, name) for name in names}
        summary["fraction_satisfied"] = self.fraction_satisfied
        summary["regions"] = {name: v.tolist() for name, v in self._columns().items()}
        return summary

    def __float__(self) -> float:
        return self.score

    def __repr__(self) -> str:
        return (
            f"NoiseResilienceResult(score={self.score:.6g}, mode={self.mode!r}, "
            f"n_regions={self.n_regions}, "
            f"fraction_satisfied={self.fraction_satisfied:.3g})"
        )


#: The per-region arrays of a result (``n_samples`` to ``G``), in table order.
_REGION_FIELDS = tuple(f.name for f in fields(NoiseResilienceResult))[1:12]


def _power_of_two(values: np.ndarray) -> np.ndarray:
    """Largest power of two ``<= |values|`` (1 where ``values`` is 0)."""
    _, exponent = np.frexp(values)
    scale = np.ldexp(1.0, exponent - 1)
    return np.where(values == 0, 1.0, scale)


class _Segments:
    """Sums, extrema and broadcasts over regions, runs ``[start, start + count)``."""

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


def _statistics(
    seg: _Segments, x: np.ndarray, residuals: list[np.ndarray], slope: str
) -> dict[str, Any]:
    """The per-region quantities (user guide :ref:`noise_resilience`).

    ``residuals`` are ``y − y_ref``, ``y_pred − y_ref`` and ``y − y_pred``. Each
    region is computed in its own units (exact powers of two), the quantities
    with units scaled back at the end; ``ss_y`` is 0 exactly where ``e_y`` is
    constant, ``singular`` where α is undefined.
    """
    stacked = np.stack(residuals, axis=1)
    r_scale = _power_of_two(seg.max(np.abs(stacked)).max(axis=1))
    a, b, lam_s = (stacked / seg.spread(r_scale)[:, None]).T
    a, b = seg.centred(a), seg.centred(b)
    ss_y, ss_pred = seg.sum(a * a), seg.sum(b * b)

    x_scaled, x_scale = seg.scaled(x)
    dx = seg.centred(x_scaled)
    d, dx_scale = seg.scaled(dx)
    # x = 2**x_exp · d + const and residual = 2**r_exp · scaled, per region
    x_exp = np.frexp(x_scale)[1] + np.frexp(dx_scale)[1] - 2
    r_exp = np.frexp(r_scale)[1] - 1
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


def _compensation(
    seg: _Segments, x: np.ndarray, lam: np.ndarray, gamma: np.ndarray, normalize: bool
) -> np.ndarray:
    """The compensation G [10] per region (NaN where γ is constant)."""
    g, _ = seg.scaled(gamma)  # the weights depend on ratios of γ only
    low, high = seg.min(g), seg.max(g)
    constant = high == low
    span = np.where(constant, 1.0, high - low)
    with np.errstate(over="ignore", under="ignore"):
        centre = seg.min(x) / 2 + seg.max(x) / 2
        distance = np.hypot.reduce(np.abs(x - seg.spread(centre)), axis=1)
        weight = (g - seg.spread(low)) / (seg.spread(span) * (1.0 + distance))
        lam_s, r_scale = seg.scaled(lam)
        total = seg.sum(weight * lam_s)
        if normalize:
            total_weight = seg.sum(weight)
            total = total / np.where(total_weight > 0, total_weight, 1.0)
        result = total * r_scale
    return np.where(constant, np.nan, result)


def _as_column(value: Any, name: str, n_samples: int) -> np.ndarray:
    array = as_float_array(value, name=name)
    array = array[:, 0] if array.ndim == 2 and array.shape[1] == 1 else array
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got an array of shape {array.shape}.")
    if array.shape[0] != n_samples:
        raise ValueError(
            f"x and {name} must have the same number of samples; got "
            f"{n_samples} and {array.shape[0]}."
        )
    check_finite(array, name=name)
    return array


def _check_regions(n_samples: int, n_regions: Any, window: Any) -> tuple[str, int]:
    if n_regions is not None and window is not None:
        raise ValueError("Pass n_regions or window, not both.")
    if window is not None:
        name, value, low, high = "window", window, MIN_REGION_SIZE, n_samples
        bounds = f"[{MIN_REGION_SIZE}, n_samples={n_samples}]"
    else:
        name, low, high = "n_regions", 1, n_samples // MIN_REGION_SIZE
        value = max(1, min(10, n_samples // 10)) if n_regions is None else n_regions
        bounds = (
            f"[1, {high}] so that every region has at least {MIN_REGION_SIZE} of "
            f"the {n_samples} samples"
        )
    integer = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if not (integer and low <= value <= high):
        raise ValueError(f"{name} must be an integer in {bounds}; got {value!r}.")
    return ("partition" if window is None else "window"), int(value)


def _x_range(stats: dict[str, Any], regions: np.ndarray) -> str:
    """``"x from a to b"`` of the first of the ``regions`` (a mask)."""
    k = int(np.flatnonzero(regions)[0])
    return f"x from {stats['x_min'][k].tolist()} to {stats['x_max'][k].tolist()}"


def noise_resilience_score(
    x: Any,
    y: Any,
    y_pred: Any,
    y_ref: Any,
    *,
    n_regions: int | None = None,
    window: int | None = None,
    groups: Any = None,
    slope: str = "least_squares",
    confidence: Any = None,
    compensation: str = "sum",
    zero_variance: str = "raise",
) -> NoiseResilienceResult:
    """Noise-resilience score NR of Viaña & Cohen, with its local conditions.

    NR is the mean over regions of ``1 − s(y_pred − y_ref) / s(y − y_ref)``
    (``s`` the sample variance), in ``(-inf, 1]``. Read more in the
    :ref:`User Guide <noise_resilience>`.

    Parameters
    ----------
    x : array-like of shape (n_samples,) or (n_samples, n_features)
        The input variable. Several columns need ``groups``.
    y : array-like of shape (n_samples,)
        The observations the regressor was trained on (noisy).
    y_pred : array-like of shape (n_samples,)
        The regressor's out-of-sample predictions.
    y_ref : array-like of shape (n_samples,)
        The ground truth, or an estimate of it independent of ``y``.
    n_regions : int, default=None
        Regions of (almost) equal counts along sorted ``x``, at least 3 samples
        each; by default ``n_samples // 10`` clipped to ``[1, 10]``.
    window : int, default=None
        Instead: a sliding window of this many consecutive samples.
    groups : array-like of shape (n_samples,), default=None
        Instead: one region per group label.
    slope : {"least_squares", "endpoints"}, default="least_squares"
        α as the least-squares slope in the region, or the paper's slope
        between its end samples (one input variable only).
    confidence : array-like of shape (n_samples,), default=None
        A confidence γ per sample, for the compensation ``G``.
    compensation : {"sum", "mean"}, default="sum"
        G as printed in the paper (a weighted sum), or the weighted mean.
    zero_variance : {"raise", "omit"}, default="raise"
        Where ``y − y_ref`` has zero variance: raise, or omit the region.

    Returns
    -------
    result : NoiseResilienceResult
        ``result.score`` (NR) and the per-region arrays.

    References
    ----------
    J. Viaña and K. Cohen, "Evaluation Criteria for Noise Resilience in
    Regression Algorithms", University of Cincinnati.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_noisy.metrics import noise_resilience_score
    >>> x = np.arange(5.0)
    >>> y_ref = np.array([3.0, -1.0, 4.0, 1.0, 5.0])
    >>> y = y_ref + [1.0, -1.0, 2.0, 0.0, -2.0]
    >>> y_pred = y_ref + [0.0, 1.0, 0.0, 1.0, 3.0]
    >>> noise_resilience_score(x, y, y_pred, y_ref, n_regions=1).score
    0.4
    """
    _check_choice("slope", slope, ("least_squares", "endpoints"))
    _check_choice("compensation", compensation, ("sum", "mean"))
    _check_choice("zero_variance", zero_variance, ("raise", "omit"))
    x2 = as_float_array(x, name="x")
    x2 = x2[:, None] if x2.ndim == 1 else x2
    if x2.ndim != 2 or x2.shape[1] == 0:
        raise ValueError(
            f"x must be 1-D or 2-D (n_samples, n_features); got shape {x2.shape}."
        )
    if x2.shape[1] > 1 and groups is None:
        raise ValueError(
            f"x has {x2.shape[1]} columns: regions along several input "
            "variables need groups (for example KMeans labels of x); without "
            "groups x must be 1-D."
        )
    check_finite(x2, name="x")
    n_samples = x2.shape[0]
    if n_samples < MIN_REGION_SIZE:
        raise ValueError(
            f"noise_resilience_score needs at least {MIN_REGION_SIZE} samples; got "
            f"{n_samples}."
        )
    named = {"y": y, "y_pred": y_pred, "y_ref": y_ref, "confidence": confidence}
    arrays = [_as_column(v, k, n_samples) for k, v in named.items() if v is not None]
    gamma = None if confidence is None else arrays.pop()
    group_labels = group_index = None
    if groups is not None:
        if n_regions is not None or window is not None:
            raise ValueError("Pass groups, or n_regions/window, not both.")
        group_labels, group_index = encode_groups(groups, n_samples)
        sizes = np.bincount(group_index, minlength=group_labels.size)
        smallest = max(MIN_REGION_SIZE, x2.shape[1] + 1)
        small = np.flatnonzero(sizes < smallest)
        if small.size:
            k = int(small[0])
            raise ValueError(
                f"every group needs at least {smallest} samples (a slope over "
                f"{x2.shape[1]} feature(s) and a spread); {small.size} group(s) "
                f"have fewer, e.g. group {group_labels[k].tolist()!r} with "
                f"{int(sizes[k])}."
            )
        mode, size = "groups", group_labels.size
    else:
        mode, size = _check_regions(n_samples, n_regions, window)
    if slope == "endpoints" and x2.shape[1] > 1:
        raise ValueError(
            "slope='endpoints' needs one input variable; x has "
            f"{x2.shape[1]} columns. Use slope='least_squares'."
        )

    # a canonical order: by group, then x, ties broken by the other values
    primary = [*x2.T[::-1], *([] if group_index is None else [group_index])]
    order = np.lexsort(primary)
    if np.logical_and.reduce([k[order][1:] == k[order][:-1] for k in primary]).any():
        secondary = arrays[::-1] if gamma is None else [gamma, *arrays[::-1]]
        order = np.lexsort(secondary + primary)
    x2, arrays = x2[order], [a[order] for a in arrays]
    gamma = None if gamma is None else gamma[order]
    largest = max(float(np.max(np.abs(a))) for a in arrays)
    if largest >= 2.0**1022:  # halving is exact here and makes room for a difference
        arrays = [a / 2 for a in arrays]
    residuals = [arrays[0] - arrays[2], arrays[1] - arrays[2], arrays[0] - arrays[1]]
    if mode == "window":  # the starts and lengths of the regions
        starts = np.arange(n_samples - size + 1)
    elif mode == "groups":
        starts = np.flatnonzero(np.r_[True, np.diff(group_index[order]) != 0])
    else:
        starts = np.floor(np.linspace(0, n_samples, size + 1)[:-1] + 0.5)
        starts = starts.astype(np.intp)
    sliding = mode == "window"
    counts = (
        np.full(starts.size, size) if sliding else np.diff(np.r_[starts, n_samples])
    )
    # the statistics of the regions, overlapping windows by chunks
    overlapping = bool(np.any(np.diff(starts) < counts[:-1]))
    step = max(1, CHUNK_SIZE // int(counts.max())) if overlapping else starts.size
    parts = []
    for first in range(0, starts.size, step):
        chunk = slice(first, first + step)
        rows, local = slice(None), starts
        if overlapping:  # sliding windows, all of the same width
            rows = (starts[chunk, None] + np.arange(int(counts[0]))).ravel()
            local = np.r_[0, np.cumsum(counts[chunk])[:-1]]
        seg = _Segments(local, counts[chunk])
        part = _statistics(seg, x2[rows], [a[rows] for a in residuals], slope)
        if gamma is not None:
            lam, g = residuals[2][rows], gamma[rows]
            part["G"] = _compensation(seg, x2[rows], lam, g, compensation == "mean")
        parts.append(part)
    stats = {
        key: None if value is None else np.concatenate([p[key] for p in parts])
        for key, value in parts[0].items()
    }
    singular = stats["singular"]
    if singular.any():
        raise ValueError(
            f"x is constant (or its columns are collinear) within {singular.sum()} "
            f"region(s), the first with {_x_range(stats, singular)}: no slope alpha "
            "can be fitted there. Use fewer regions, a larger window or other groups."
        )
    keep = stats["ss_y"] > 0
    n_omitted = int(starts.size - keep.sum())
    if n_omitted:
        where = (
            f"{n_omitted} of the {starts.size} regions (the first has "
            f"{_x_range(stats, ~keep)})"
        )
        if zero_variance == "raise" or n_omitted == starts.size:
            raise ValueError(
                f"The data error y - y_ref has zero variance in {where}: NR_j = "
                "1 - s_pred/s_y is undefined there. Use larger regions, or pass "
                "zero_variance='omit' to leave such regions out of the score."
            )
        warn(
            f"The data error y - y_ref has zero variance in {where}; they were left "
            "out of the score (zero_variance='omit').",
            UndefinedMetricWarning,
        )
    table = {name: stats[name] for name in _REGION_FIELDS[1:] if name in stats}
    table = {name: None if v is None else v[keep] for name, v in table.items()}
    if x2.shape[1] == 1:
        for name in ("x_min", "x_max", "alpha", "S1"):
            table[name] = table[name][:, 0]
    n_constant = 0 if gamma is None else int(np.isnan(table["G"]).sum())
    if n_constant:
        warn(
            f"The confidence is constant in {n_constant} of the {keep.sum()} regions: "
            "the weights of the compensation G are undefined there and G is NaN.",
            UndefinedMetricWarning,
        )
    return NoiseResilienceResult(
        score=float(np.mean(table["nr"])),
        n_samples=counts[keep],
        mode=mode,
        slope=slope,
        group_labels=None if group_labels is None else group_labels[keep],
        n_omitted=n_omitted,
        **table,
    )
