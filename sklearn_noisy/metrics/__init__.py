"""Expected metrics and their variance under label measurement error."""

from ._regression import (
    expected_mean_absolute_error,
    expected_mean_squared_error,
)

__all__ = [
    "expected_mean_absolute_error",
    "expected_mean_squared_error",
]
