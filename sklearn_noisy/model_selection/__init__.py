"""Noise-aware cross-validation and paired model comparison."""

from ._cross_validator import NoisyCrossValidator
from ._noise_resilience_curve import (
    NoiseResilienceCurveResult,
    NoiseResilienceDisplay,
    noise_resilience_curve,
)

__all__ = [
    "NoiseResilienceCurveResult",
    "NoiseResilienceDisplay",
    "NoisyCrossValidator",
    "noise_resilience_curve",
]
