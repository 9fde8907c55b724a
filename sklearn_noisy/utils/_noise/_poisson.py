"""Count labels ``ỹ_i ~ Poisson(λ_i)``, whose variance is their mean."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._arrays import check_finite


@dataclass(frozen=True, eq=False)
class PoissonNoise:
    """Count labels ``ỹ_i ~ Poisson(λ_i)``: the observed ``counts`` (truth,
    remeasurement) or the exact rates (forward), ``(n_samples, n_outputs)``
    (:ref:`poisson_noise`)."""

    counts: np.ndarray

    @classmethod
    def from_labels(
        cls, y: np.ndarray, *, counts: bool = True, name: str = "y_true"
    ) -> PoissonNoise:
        """Validate labels ``y`` (2-D float64): finite, ``>= 0``, and whole
        numbers where they are ``counts`` (not exact rates)."""
        check_finite(y, name=name)
        if y.size and y.min() < 0.0:
            raise ValueError(
                f"{name} must be non-negative with noise='poisson' (counts or "
                f"rates); the smallest value is {float(y.min())!r}."
            )
        if counts:
            fractional = y != np.round(y)
            if np.any(fractional):
                bad = np.ravel(y)[np.argmax(np.ravel(fractional))]
                raise ValueError(
                    f"{name} must hold whole-number counts with noise='poisson' "
                    f"(the count estimates its own variance); got {float(bad)!r}. "
                    "Exact rates are labels of estimand='forward' only."
                )
        return cls(y)

    def variance_parts(
        self, rows: slice, *, truth: bool
    ) -> tuple[np.ndarray, np.ndarray, float]:
        """``(σ̂², s4, shift)`` of a chunk: ``σ̂² = ỹ``, ``s4 = ỹ(ỹ − 1)`` (unbiased
        for ``λ²``) and the shift of the variance estimates (:ref:`poisson_noise`)."""
        y = self.counts[rows]
        return y, y * (y - 1.0), 1.0 if truth else 0.5
