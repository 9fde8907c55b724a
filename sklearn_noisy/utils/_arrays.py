"""Array conversion, finiteness and weight checks, and the chunked-sum helpers.

The lowest layer of the package: every other module may import from here, and
this module imports nothing of the package. None of the checks writes into the
caller's arrays: conversions return new arrays or views, and the helpers only
ever read from them.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = [
    "CHUNK_SIZE",
    "as_float_array",
    "check_finite",
    "check_sample_weight",
    "chunk_of",
    "chunks",
    "read_only",
    "weighted_sum",
    "weighted_totals",
]

#: Rows processed at a time by the chunked kernels: bounds the temporary memory
#: of every metric to a few arrays of this length, whatever the input size.
CHUNK_SIZE = 1 << 16


def _is_scalar(value: Any) -> bool:
    return isinstance(value, numbers.Real) or (
        isinstance(value, np.ndarray) and value.ndim == 0
    )


def as_float_array(value: Any, *, name: str) -> np.ndarray:
    """Convert ``value`` to a float64 array without copying when it already is one.

    Accepts lists, tuples, numpy arrays, pandas Series and one-column objects.
    Raises a ``TypeError`` naming ``name`` when the values are not numeric.
    """
    if hasattr(value, "to_numpy") and not isinstance(value, np.ndarray):
        value = value.to_numpy()
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged lists and the like
        raise TypeError(
            f"{name} must be array-like of numbers; got {value!r}."
        ) from exc
    if array.dtype.kind == "O":  # Python numbers beyond int64, as scikit-learn
        array = _object_as_float(array, name=name)
    if array.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} must hold real numbers; got an array of dtype {array.dtype}."
        )
    return array.astype(np.float64, copy=False)


def _object_as_float(array: np.ndarray, *, name: str) -> np.ndarray:
    """An object array of real numbers as float64 (else returned unchanged)."""
    if not all(
        isinstance(v, numbers.Real) and not isinstance(v, bool) for v in array.flat
    ):
        return array
    try:
        return array.astype(np.float64)
    except OverflowError:
        raise ValueError(
            f"{name} holds an integer too large for a float64 (beyond 1.8e308)."
        ) from None


def check_finite(array: np.ndarray, *, name: str) -> None:
    """Raise ``ValueError`` if ``array`` holds NaN or infinity.

    As scikit-learn does, the common case costs a single sum: only when the sum
    is not finite are the offending entries looked for.
    """
    if array.size == 0:
        return
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.sum(array)
    if np.isfinite(total):
        return
    bad = ~np.isfinite(array)
    if not bad.any():  # the sum overflowed on large finite values
        return
    first = np.argwhere(bad)[0]
    where = tuple(int(i) for i in first) if array.ndim > 1 else int(first[0])
    raise ValueError(
        f"{name} must be finite; it contains {int(bad.sum())} NaN or infinite "
        f"value(s), the first at index {where} ({float(array[tuple(first)])!r})."
    )


def _check_length(array: np.ndarray, n_samples: int, *, name: str) -> None:
    if array.shape[0] != n_samples:
        raise ValueError(
            f"{name} must have one entry per sample: expected length {n_samples}, "
            f"got {array.shape[0]}."
        )


def check_sample_weight(sample_weight: Any, n_samples: int) -> np.ndarray | None:
    """Validate ``sample_weight``: finite, non-negative, one per sample, sum > 0.

    Weights far from 1 (largest outside [1e-100, 1e100]) are returned divided by
    their largest value, which leaves every weighted mean unchanged.
    """
    if sample_weight is None:
        return None
    weight = as_float_array(sample_weight, name="sample_weight")
    if weight.ndim != 1:
        raise ValueError(
            f"sample_weight must be 1-D; got an array of shape {weight.shape}."
        )
    _check_length(weight, n_samples, name="sample_weight")
    check_finite(weight, name="sample_weight")
    if weight.min() < 0:
        raise ValueError("sample_weight must be non-negative.")
    if not weight.sum() > 0:
        raise ValueError("sample_weight must have a positive sum.")
    largest = weight.max()
    if not 1e-100 <= largest <= 1e100:
        # Only ratios of weights matter to a weighted mean; squares of weights
        # this small or large would underflow or overflow in the variance.
        weight = weight / largest
    return weight


def chunks(n_samples: int) -> Iterator[slice]:
    """Slices of at most :data:`CHUNK_SIZE` rows covering ``range(n_samples)``."""
    for start in range(0, n_samples, CHUNK_SIZE):
        yield slice(start, start + CHUNK_SIZE)


def chunk_of(value: Any, rows: slice) -> Any:
    """``value[rows]`` for a per-sample array; a Python float passes through."""
    return value if isinstance(value, float) else value[rows]


def weighted_totals(
    weight: np.ndarray | None, rows: slice, *values: np.ndarray
) -> list[float]:
    """``[Σ w x for x in values[:-1]] + [Σ w² values[-1]]`` over a chunk.

    The first values are means' numerators (weighted by ``w``), the last a
    variance's (weighted by ``w²``); ``weight=None`` is unit weights.
    """
    if weight is None:
        return [float(np.sum(x)) for x in values]
    w = weight[rows]
    totals = [float(w @ x) for x in values[:-1]]
    totals.append(float((w * w) @ values[-1]))
    return totals


def weighted_sum(values: Any, weight: np.ndarray | None) -> float:
    """``Σ w_i v_i`` (``Σ v_i`` for ``weight=None``) by pairwise summation.

    The products are summed with :func:`numpy.sum` rather than a BLAS dot
    product (as :func:`weighted_totals` does): the pairwise sum is as accurate,
    and its rounding does not depend on the BLAS build.
    """
    return float(np.sum(values if weight is None else weight * values))


def read_only(array: Any, dtype: Any = None) -> np.ndarray:
    """A read-only copy of ``array`` (for the arrays of frozen result objects)."""
    array = np.array(array, dtype=dtype, copy=True)
    array.setflags(write=False)
    return array
