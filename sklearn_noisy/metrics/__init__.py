"""Expected metrics and their variance under label measurement error."""

from ._classification import (
    NoisyConfusionMatrix,
    expected_accuracy_score,
    expected_confusion_matrix,
)
from ._monte_carlo import MonteCarloScore, monte_carlo_score
from ._noise_resilience import NoiseResilienceResult, noise_resilience_score
from ._paired import expected_paired_difference
from ._percentage import (
    expected_mean_absolute_percentage_error,
    expected_mean_squared_percentage_error,
    expected_root_mean_squared_percentage_error,
    mean_squared_percentage_error,
    root_mean_squared_percentage_error,
)
from ._plot_confusion_matrix import NoisyConfusionMatrixDisplay
from ._plot_roc_curve import NoisyRocCurveDisplay
from ._precision_recall import (
    expected_balanced_accuracy_score,
    expected_f1_score,
    expected_matthews_corrcoef,
    expected_precision_score,
    expected_recall_score,
)
from ._probabilistic import expected_brier_score_loss, expected_log_loss
from ._rates import (
    expected_false_negative_rate,
    expected_false_positive_rate,
    expected_negative_predictive_value,
    expected_specificity_score,
    false_negative_rate,
    false_positive_rate,
    negative_predictive_value,
    specificity_score,
)
from ._registry import MetricInfo, get_metric_info, get_metric_names
from ._regression import (
    expected_mean_absolute_error,
    expected_mean_squared_error,
    expected_r2_score,
    expected_root_mean_squared_error,
)
from ._roc_auc import expected_roc_auc_score
from ._scorer import (
    MissingNoiseError,
    NoisyScorer,
    get_noisy_scorer,
    get_noisy_scorer_names,
    make_noisy_scorer,
)

__all__ = [
    "MetricInfo",
    "MissingNoiseError",
    "MonteCarloScore",
    "NoiseResilienceResult",
    "NoisyConfusionMatrix",
    "NoisyConfusionMatrixDisplay",
    "NoisyRocCurveDisplay",
    "NoisyScorer",
    "expected_accuracy_score",
    "expected_balanced_accuracy_score",
    "expected_brier_score_loss",
    "expected_confusion_matrix",
    "expected_f1_score",
    "expected_false_negative_rate",
    "expected_false_positive_rate",
    "expected_log_loss",
    "expected_matthews_corrcoef",
    "expected_mean_absolute_error",
    "expected_mean_absolute_percentage_error",
    "expected_mean_squared_error",
    "expected_mean_squared_percentage_error",
    "expected_negative_predictive_value",
    "expected_paired_difference",
    "expected_precision_score",
    "expected_r2_score",
    "expected_recall_score",
    "expected_roc_auc_score",
    "expected_root_mean_squared_error",
    "expected_root_mean_squared_percentage_error",
    "expected_specificity_score",
    "false_negative_rate",
    "false_positive_rate",
    "get_metric_info",
    "get_metric_names",
    "get_noisy_scorer",
    "get_noisy_scorer_names",
    "make_noisy_scorer",
    "mean_squared_percentage_error",
    "monte_carlo_score",
    "negative_predictive_value",
    "noise_resilience_score",
    "root_mean_squared_percentage_error",
    "specificity_score",
]
