"""Expected metrics and their variance under label measurement error."""

from ._classification import NoisyConfusionMatrix, expected_confusion_matrix
from ._engines.monte_carlo import MonteCarloScore, monte_carlo_score
from ._noise_resilience import NoiseResilienceResult, noise_resilience_score
from ._paired import expected_paired_difference
from ._percentage import (
    mean_squared_percentage_error,
    root_mean_squared_percentage_error,
)
from ._plot.confusion_matrix import NoisyConfusionMatrixDisplay
from ._plot.roc_curve import NoisyRocCurveDisplay
from ._rates import (
    false_negative_rate,
    false_positive_rate,
    negative_predictive_value,
    specificity_score,
)
from ._registry import MetricInfo, get_metric_info, get_metric_names
from ._registry import metric_functions as _metric_functions
from ._reliability import LabelReliability, label_reliability
from ._scorer import (
    NoisyScorer,
    get_noisy_scorer,
    get_noisy_scorer_names,
    make_noisy_scorer,
)
from ._scorer_checks import MissingNoiseError

#: The ``expected_*`` function of every metric of the registry, exported from
#: its record: a new metric needs no line here.
_METRIC_FUNCTIONS = _metric_functions()
globals().update(_METRIC_FUNCTIONS)

__all__ = [
    "LabelReliability",
    "MetricInfo",
    "MissingNoiseError",
    "MonteCarloScore",
    "NoiseResilienceResult",
    "NoisyConfusionMatrix",
    "NoisyConfusionMatrixDisplay",
    "NoisyRocCurveDisplay",
    "NoisyScorer",
    "expected_confusion_matrix",
    "expected_paired_difference",
    "false_negative_rate",
    "false_positive_rate",
    "get_metric_info",
    "get_metric_names",
    "get_noisy_scorer",
    "get_noisy_scorer_names",
    "label_reliability",
    "make_noisy_scorer",
    "mean_squared_percentage_error",
    "monte_carlo_score",
    "negative_predictive_value",
    "noise_resilience_score",
    "root_mean_squared_percentage_error",
    "specificity_score",
]
__all__ += sorted(_METRIC_FUNCTIONS)
