"""Noise-aware cross-validation and paired model comparison."""

from ._comparison import CorrectedTTest, EstimatorComparison, compare_estimators
from ._cross_validator import NoisyCrossValidator
from ._noise_resilience_curve import NoiseResilienceCurveResult, noise_resilience_curve
from ._noise_resilience_plot import NoiseResilienceDisplay
from ._plot import NoisyCVDisplay

__all__ = [
    "CorrectedTTest",
    "EstimatorComparison",
    "NoiseResilienceCurveResult",
    "NoiseResilienceDisplay",
    "NoisyCVDisplay",
    "NoisyCrossValidator",
    "compare_estimators",
    "noise_resilience_curve",
]
