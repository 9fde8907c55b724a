"""Small argument checks shared by the classification metrics."""

from __future__ import annotations

from typing import Any

import numpy as np

from ....utils._arrays import as_float_array, check_sample_weight
from ....utils._sklearn_compat import InvalidParameterError


def check_bool(value: Any, *, name: str) -> bool:
    """A Python or NumPy bool, as scikit-learn's parameter validation requires."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InvalidParameterError(f"{name} must be a bool; got {value!r}.")


def check_option(value: Any, options: tuple, *, name: str) -> Any:
    """``value`` if it is one of ``options`` (compared by type and value)."""
    for option in options:
        if type(value) is type(option) and value == option:
            return value
        if isinstance(value, np.bool_) and isinstance(option, bool):
            if bool(value) == option:
                return option
    raise InvalidParameterError(f"{name} must be one of {options}; got {value!r}.")


def weights_and_scale(
    sample_weight: Any, n_samples: int
) -> tuple[np.ndarray | None, float]:
    """Validated weights and the factor that undoes their rescaling (by
    :func:`~sklearn_noisy.utils._arrays.check_sample_weight`) in a count."""
    weight = check_sample_weight(sample_weight, n_samples)
    if weight is None:
        return None, 1.0
    largest = float(np.max(as_float_array(sample_weight, name="sample_weight")))
    return weight, largest / float(np.max(weight))


def varying_weight(sample_weight: Any, n_samples: int) -> np.ndarray | None:
    """Validated weights, None when all are equal (a count metric is then a
    ratio of counts)."""
    weight = check_sample_weight(sample_weight, n_samples)
    return None if weight is not None and weight.min() == weight.max() else weight
