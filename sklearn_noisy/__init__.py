"""Expected metrics and their variance under known label measurement error.

sklearn-noisy reports, for each metric, its expected value and its variance over
the noise of the labels (Gaussian errors ``sigma`` for regression, flip
probabilities ``q`` or a transition matrix for classification), per
cross-validation fold and pooled across folds.
"""

from ._noisy_score import ConfidenceInterval, NoisyScore
from .metrics import (
    _METRIC_FUNCTIONS,  # every metric's expected_* function
    MonteCarloScore,
    NoiseResilienceResult,
    NoisyConfusionMatrix,
    NoisyConfusionMatrixDisplay,
    NoisyRocCurveDisplay,
    NoisyScorer,
    expected_confusion_matrix,
    expected_paired_difference,
    get_noisy_scorer,
    get_noisy_scorer_names,
    make_noisy_scorer,
    monte_carlo_score,
    noise_resilience_score,
)
from .model_selection import (
    CorrectedTTest,
    EstimatorComparison,
    NoiseResilienceCurveResult,
    NoiseResilienceDisplay,
    NoisyCrossValidator,
    NoisyCVDisplay,
    compare_estimators,
    noise_resilience_curve,
)
from .preprocessing import RepeatSummary, summarize_repeats

globals().update(_METRIC_FUNCTIONS)

__version__ = "0.1.0.dev0"

__all__ = [
    "ConfidenceInterval",
    "CorrectedTTest",
    "EstimatorComparison",
    "MonteCarloScore",
    "NoiseResilienceCurveResult",
    "NoiseResilienceDisplay",
    "NoiseResilienceResult",
    "NoisyCVDisplay",
    "NoisyConfusionMatrix",
    "NoisyConfusionMatrixDisplay",
    "NoisyCrossValidator",
    "NoisyRocCurveDisplay",
    "NoisyScore",
    "NoisyScorer",
    "RepeatSummary",
    "__version__",
    "compare_estimators",
    "expected_confusion_matrix",
    "expected_paired_difference",
    "get_noisy_scorer",
    "get_noisy_scorer_names",
    "make_noisy_scorer",
    "monte_carlo_score",
    "noise_resilience_curve",
    "noise_resilience_score",
    "summarize_repeats",
]
__all__ += sorted(_METRIC_FUNCTIONS)
