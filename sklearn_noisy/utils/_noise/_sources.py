"""Where a scorer finds the noise: a constant, a column of X, a callable or metadata."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ._flips import check_flip_probability
from ._gaussian import check_sigma, check_sigma_dof


def _source_repr(value: Any) -> str:
    if callable(value) and not isinstance(value, str):
        return getattr(value, "__qualname__", None) or repr(value)
    return repr(value)


def check_noise_source(value: Any, *, key: str) -> Any:
    """Validate a noise source (``key``): None, a constant, a column or a callable."""
    if value is None or isinstance(value, str) or callable(value):
        return value
    if key == "sigma_shared" and isinstance(value, dict):  # {batch: SD}
        return dict(value)
    if key == "sigma_shared" and hasattr(value, "batch_size"):  # a summary: whole
        return value
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        if key in ("sigma", "sigma_shared"):
            return check_sigma(float(value), (1,), name=key)
        if key in ("sigma_dof", "sigma_shared_dof"):
            return check_sigma_dof(float(value), 1, name=key)
        return check_flip_probability(float(value), 1, name="q")
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return check_noise_source(value.item(), key=key)
    raise TypeError(
        f"{key} must be a constant (a real number), the name of a column of X (a "
        f"str), a callable (X, y) -> array with one value per sample, or None to "
        f"take {key} from routed metadata; got {type(value).__name__}. A per-sample "
        f"array cannot be fixed in the scorer because each cross-validation fold "
        f"scores different samples: pass it as metadata instead, e.g. "
        f"cross_val_score(..., params={{'{key}': {key}}})."
    )


def resolve_noise_source(
    key: str, source: Any, given: Any, X: Any, y: Any, *, missing: str
) -> Any:
    """The noise values from a validated ``source``, or the ``given`` metadata.

    ``source=None`` takes ``given``, raising ``ValueError(missing)`` without it.
    """
    if source is None:
        if given is None:
            raise ValueError(missing)
        return given
    if given is not None:
        raise TypeError(
            f"This scorer reads {key} from its own source ({key}="
            f"{_source_repr(source)}); do not also pass {key}."
        )
    if isinstance(source, str):
        if X is None:
            raise TypeError(f"{key}={source!r} names a column of X, so X is required.")
        columns = getattr(X, "columns", None)
        if columns is None:
            raise TypeError(
                f"{key}={source!r} names a column of X, but X is a "
                f"{type(X).__name__} without column names: pass X as a pandas "
                f"DataFrame, or use a constant, a callable or routed {key}."
            )
        if source not in list(columns):
            raise ValueError(
                f"{key}={source!r} names a column that X does not have; the "
                f"columns of X are {[str(c) for c in columns]}."
            )
        column = X[source]
        return column.to_numpy() if hasattr(column, "to_numpy") else column
    if callable(source):
        return source(X, y)
    return source
