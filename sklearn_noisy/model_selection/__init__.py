"""Noise-aware cross-validation, paired model comparison and re-measurement planning."""

from ._comparison import EstimatorComparison, compare_estimators
from ._cross_validator import NoisyCrossValidator
from ._noise_resilience_curve import NoiseResilienceCurveResult, noise_resilience_curve
from ._noise_resilience_plot import NoiseResilienceDisplay
from ._pair_statistics import CorrectedTTest
from ._planning import RemeasurementPlan, plan_remeasurement
from ._plot import NoisyCVDisplay
from ._refit import refit_within_noise
from ._sample_size import (
    ComparisonSizePlan,
    SampleSizePlan,
    plan_comparison_size,
    plan_sample_size,
)

__all__ = [
    "ComparisonSizePlan",
    "CorrectedTTest",
    "EstimatorComparison",
    "NoiseResilienceCurveResult",
    "NoiseResilienceDisplay",
    "NoisyCVDisplay",
    "NoisyCrossValidator",
    "RemeasurementPlan",
    "SampleSizePlan",
    "compare_estimators",
    "noise_resilience_curve",
    "plan_comparison_size",
    "plan_remeasurement",
    "plan_sample_size",
    "refit_within_noise",
]
