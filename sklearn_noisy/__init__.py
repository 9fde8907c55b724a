"""Expected metrics and their variance under known label measurement error.

sklearn-noisy reports, for each metric, its expected value and its variance over
the noise of the labels (Gaussian errors ``sigma`` for regression, flip
probabilities ``q`` or a transition matrix for classification), per
cross-validation fold and pooled across folds.
"""

from ._noisy_score import ConfidenceInterval, NoisyScore
from .metrics import (
    expected_mean_absolute_error,
    expected_mean_squared_error,
)
from .preprocessing import RepeatSummary, summarize_repeats

__version__ = "0.1.0.dev0"

__all__ = [
    "ConfidenceInterval",
    "NoisyScore",
    "RepeatSummary",
    "__version__",
    "expected_mean_absolute_error",
    "expected_mean_squared_error",
    "summarize_repeats",
]
