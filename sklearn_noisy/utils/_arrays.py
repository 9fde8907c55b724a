"""Array conversion, finiteness and weight checks, and the chunked-sum helpers.

The lowest layer of the package: it imports nothing of the package, and never
writes into the caller's arrays.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

#: Rows processed at a time by the chunked kernels: bounds their temporary memory.
CHUNK_SIZE = 1 << 16


class InputOverflowError(ValueError, OverflowError):
    """A number beyond the float64 range: ``ValueError`` and ``OverflowError``."""


class NonNumericError(ValueError, TypeError):
    """Values that are not real numbers: ``ValueError`` and ``TypeError``."""


class WeightSumError(ValueError, ZeroDivisionError):
    """Weights that sum to zero: ``ValueError`` and ``ZeroDivisionError``."""


def as_array(value: Any) -> np.ndarray:
    """``value`` as a NumPy array, a pandas object through its ``to_numpy``."""
    if hasattr(value, "to_numpy") and not isinstance(value, np.ndarray):
        value = value.to_numpy()
    return np.asarray(value)


def as_float_array(
    value: Any, *, name: str, error: type[Exception] = TypeError
) -> np.ndarray:
    """``value`` as a float64 array (no copy when it is one); ``error`` for
    values that are not real numbers."""
    try:
        array = as_array(value)
    except (TypeError, ValueError) as exc:  # ragged lists and the like
        raise error(f"{name} must be array-like of numbers; got {value!r}.") from exc
    if array.dtype.kind == "O":  # Python ints beyond int64, Decimals, None
        try:
            array = array.astype(np.float64)
        except OverflowError as exc:
            raise InputOverflowError(
                f"{name} holds a number beyond the float64 range (about "
                "±1.8e308); rescale it."
            ) from exc
        except (TypeError, ValueError) as exc:
            raise error(
                f"{name} must hold real numbers; got an array of objects."
            ) from exc
    if array.dtype.kind not in "biuf":
        raise error(
            f"{name} must hold real numbers; got an array of dtype {array.dtype}."
        )
    return array.astype(np.float64, copy=False)


def check_finite(array: np.ndarray, *, name: str) -> None:
    """Raise ``ValueError`` if ``array`` holds NaN or infinity (one sum if not)."""
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


def check_per_sample(
    value: Any, n_samples: int, *, name: str, shapes: str | None = None
) -> np.ndarray:
    """``value`` as a float64 scalar or an array of shape ``(n_samples,)``.

    ``shapes`` describes the accepted shapes in the error message.
    """
    array = as_float_array(value, name=name)
    if array.ndim > 1:
        shapes = shapes or f"a scalar or an array of shape ({n_samples},)"
        raise ValueError(f"{name} must be {shapes}; got shape {array.shape}.")
    if array.ndim == 1:
        _check_length(array, n_samples, name=name)
    return array


def encode_groups(
    groups: Any, n_samples: int, *, name: str = "groups"
) -> tuple[np.ndarray, np.ndarray]:
    """``(labels, codes)``: the sorted group labels, each sample's index in them."""
    groups = as_array(groups)
    if groups.ndim != 1 or groups.shape[0] != n_samples:
        raise ValueError(
            f"{name} must be 1-D with one label per sample ({n_samples}); got "
            f"shape {groups.shape}."
        )
    if groups.dtype.kind == "f":
        check_finite(groups, name=name)
    try:
        labels, codes = np.unique(groups, return_inverse=True)
    except TypeError as exc:  # mixed types that do not sort
        raise TypeError(f"{name} must hold labels of one sortable type: {exc}") from exc
    return labels, codes.reshape(-1).astype(np.intp)


def take_samples(values: Any, indices: Any) -> Any:
    """Rows ``indices`` of a per-sample array; scalars and None pass through."""
    if isinstance(values, np.ndarray) and values.ndim > 0:
        return values[indices]
    return values


def check_same_length(y_true: Any, other: Any, name: str = "y_pred") -> None:
    """Raise ``ValueError`` unless ``y_true`` and ``other`` have as many samples."""
    if y_true.shape[0] != other.shape[0]:
        raise ValueError(
            f"y_true and {name} must have the same number of samples; got "
            f"{y_true.shape[0]} and {other.shape[0]}."
        )


def check_sample_weight(
    sample_weight: Any, n_samples: int, *, allow_negative: bool = False
) -> np.ndarray | None:
    """Validate ``sample_weight`` (negative ones with ``allow_negative``);
    weights far from 1 are divided by the largest magnitude."""
    if sample_weight is None:
        return None
    weight = as_float_array(sample_weight, name="sample_weight", error=NonNumericError)
    if weight.ndim != 1:
        raise ValueError(
            f"sample_weight must be 1-D; got an array of shape {weight.shape}."
        )
    _check_length(weight, n_samples, name="sample_weight")
    check_finite(weight, name="sample_weight")
    negative = weight.min() < 0
    if negative and not allow_negative:
        raise ValueError("sample_weight must be non-negative.")
    if not negative and not weight.sum() > 0:
        raise ValueError("sample_weight must have a positive sum.")
    if negative and weight.sum() == 0:
        raise WeightSumError("sample_weight must not sum to zero.")
    largest = float(np.max(np.abs(weight)))
    if not 1e-100 <= largest <= 1e100:
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
    """``[Σ w x for x in values[:-1]] + [Σ w² values[-1]]`` over a chunk."""
    if weight is None:
        return [float(np.sum(x)) for x in values]
    w = weight[rows]
    totals = [float(w @ x) for x in values[:-1]]
    totals.append(float((w * w) @ values[-1]))
    return totals


def weighted_sum(values: Any, weight: np.ndarray | None) -> float:
    """``Σ w_i v_i`` by pairwise summation: its rounding does not depend on BLAS."""
    return float(np.sum(values if weight is None else weight * values))


def read_only(array: Any, dtype: Any = None) -> np.ndarray:
    """A read-only copy of ``array`` (for the arrays of frozen result objects)."""
    array = np.array(array, dtype=dtype, copy=True)
    array.setflags(write=False)
    return array
