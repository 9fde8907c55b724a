"""Gaussian label errors ``ỹ = y + e``, ``e ~ N(0, σ²)``: σ, its degrees of freedom."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._arrays import (
    _check_length,
    as_float_array,
    check_finite,
    check_per_sample,
    take_samples,
)
from ._shared_offsets import SharedOffsets, check_shared_offsets


def check_sigma(
    sigma: Any,
    shape: tuple[int, ...],
    *,
    name: str = "sigma",
    ensure_finite: bool = True,
) -> Any:
    """The label standard errors as a Python float or a float64 array of shape
    ``(n_samples,)`` (a column for a 2-D ``shape``) or ``shape``."""
    if sigma is None:
        raise TypeError(
            f"{name} is required: pass the standard error of each label (a scalar "
            "or one value per sample; 0 means the label is exact)."
        )
    array = as_float_array(sigma, name=name)
    n_samples = shape[0]
    if array.ndim == 0:
        value = float(array)
        if not np.isfinite(value):
            raise ValueError(f"{name} must be finite; got {value!r}.")
        if value < 0:
            raise ValueError(f"{name} must be non-negative; got {value!r}.")
        return value
    if array.ndim > 2 or (array.ndim == 2 and array.shape != shape):
        raise ValueError(
            f"{name} must be a scalar, an array of shape ({n_samples},) or "
            f"{shape}; got shape {array.shape}."
        )
    _check_length(array, n_samples, name=name)
    if ensure_finite:
        check_finite(array, name=name)
    if array.min() < 0:
        raise ValueError(
            f"{name} must be non-negative (0 means an exact label); the smallest "
            f"value is {float(array.min())!r} at index {int(np.argmin(array))}."
        )
    if len(shape) == 2 and array.ndim == 1:
        array = array[:, None]
    return array


def check_sigma_dof(sigma_dof: Any, n_samples: int, name: str = "sigma_dof") -> Any:
    """Validate the degrees of freedom of σ: None (σ known), a float or an array."""
    if sigma_dof is None:
        return None
    array = check_per_sample(sigma_dof, n_samples, name=name)
    bad = np.ravel(array)[~(np.ravel(array) > 0)]
    if bad.size:
        raise ValueError(
            f"{name} must be positive (inf: {name[:-4]} known); got {float(bad[0])!r}."
        )
    return float(array) if array.ndim == 0 else array


@dataclass(frozen=True, eq=False)
class GaussianNoise:
    """Gaussian label errors ``ỹ = y + e``, ``e ~ N(0, σ²)``, with the degrees of
    freedom of σ (None: known) and the batch offsets ``shared`` (or None)."""

    sigma: Any
    sigma_dof: Any = None
    shared: SharedOffsets | None = None

    @classmethod
    def from_params(
        cls,
        sigma: Any,
        shape: tuple[int, ...],
        *,
        sigma_dof: Any = None,
        groups: Any = None,
        sigma_shared: Any = None,
        sigma_shared_dof: Any = None,
    ) -> GaussianNoise:
        """Validate ``sigma`` for labels of ``shape``, ``sigma_dof`` and the batch
        offsets."""
        return cls(
            check_sigma(sigma, shape),
            check_sigma_dof(sigma_dof, shape[0]),
            check_shared_offsets(groups, sigma_shared, shape[0], sigma_shared_dof),
        )

    @property
    def is_constant(self) -> bool:
        """Whether every label has the same standard error (a scalar σ)."""
        return isinstance(self.sigma, float)

    def take(self, indices: Any) -> GaussianNoise:
        """The noise of the samples ``indices`` (a cross-validation fold)."""
        return GaussianNoise(
            take_samples(self.sigma, indices),
            take_samples(self.sigma_dof, indices),
            None if self.shared is None else self.shared.take(indices),
        )

    def sampler(self, y_true: np.ndarray) -> GaussianSampler:
        """A Monte Carlo sampler of labels drawn around ``y_true``."""
        return GaussianSampler(y_true, self.sigma, self.shared)


class GaussianSampler:
    """Draws ``y ~ N(y_true, sigma²)``: one normal per label entry."""

    def __init__(
        self, y_true: np.ndarray, sigma: Any, shared: SharedOffsets | None = None
    ) -> None:
        self.y_true = y_true
        self.sigma = sigma
        self.shared = shared
        self.floats_per_draw = y_true.size

    def draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        block = rng.standard_normal((n, *self.y_true.shape))
        block *= self.sigma
        block += self.y_true
        if self.shared is not None:  # then the batches' offsets
            block += self.shared.draw(rng, block.shape)
        return block
