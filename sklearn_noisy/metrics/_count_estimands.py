"""The truth and remeasurement estimands of the confusion-matrix metrics.

One entry point, :func:`count_estimand_score`, for accuracy, precision, recall,
F1, balanced accuracy and MCC (binary and the multiclass averages), given the
class positions of the observed labels and of the predictions and the flip
model (user guide: :ref:`estimands`, :ref:`formula_truth`):

* ``"truth"``: the metric of the de-noised confusion matrix ``Ĉ``
  (:func:`~._truth_counts.denoised_confusion`). For the metrics that are linear
  in ``C`` with a fixed denominator (the definition's ``is_linear``: the column
  sums of ``C``, the prediction totals, are fixed) it is unbiased and its
  variance estimate is unbiased (``method="exact"``). For the others (ratios of
  random counts) it is ``f(Ĉ) − ½ Σ_j tr(H_j Ĉov_j)``, the plug-in minus its
  estimated second-order bias: consistent, its bias of a smaller order than
  ``1/M`` (``method="delta"``).
* ``"remeasurement"``: the nominal metric, exactly unbiased for the metric
  expected over fresh labels; its variance is the delta method over the
  observed confusion matrix with its unbiased covariance estimate
  (:func:`~._remeasurement.observed_confusion`), exact for the linear metrics.

The variance estimates are unbiased (or consistent), not non-negative: a
negative value, possible for exotic flip matrices or tiny samples, is reported
as 0.
"""

from __future__ import annotations

import numpy as np

from .._noisy_score import NoisyScore
from ..utils._noise import FlipNoise
from ._count_definitions import COUNT_METRICS
from ._remeasurement import observed_confusion
from ._truth_counts import denoised_confusion, second_order_bias, truth_metric

__all__ = ["count_estimand_score"]


def count_estimand_score(
    metric: str,
    observed: np.ndarray,
    pred: np.ndarray,
    noise: FlipNoise,
    *,
    estimand: str,
    nominal: float,
    pos_index: int | None = None,
    average: str = "binary",
    zero_division: float = 0.0,
    weight: np.ndarray | None = None,
    parameters: dict | None = None,
) -> NoisyScore:
    """The truth or remeasurement estimate of a confusion-matrix metric.

    Parameters
    ----------
    metric : str
        A name of :data:`~._truth_counts.TRUTH_METRICS`.
    observed, pred : ndarray of shape (n_samples,)
        Class positions of the observed labels and of the predictions.
    noise : FlipNoise
        The flip model, with as many classes as the positions.
    estimand : {"truth", "remeasurement"}
        The question answered.
    nominal : float
        The metric on the labels as given (the remeasurement estimate).
    pos_index, average, zero_division
        As for :func:`~._truth_counts.metric_gradient`.
    weight : ndarray of shape (n_samples,) or None, default=None
        Sample weights.
    parameters : dict or None, default=None
        The definition's own options (kappa's ``weights``).

    Returns
    -------
    NoisyScore
        With ``method`` ``"exact"`` for the linear metrics, ``"delta"``
        otherwise, and the variance clipped at 0.
    """
    options = {
        "pos_index": pos_index,
        "average": average,
        "zero_division": zero_division,
        **(parameters or {}),
    }
    linear = COUNT_METRICS[metric].is_linear(average)
    if estimand == "truth":
        confusion = denoised_confusion(observed, pred, noise, weight)
        estimate, variance = truth_metric(metric, confusion, **options)
        if not linear:
            estimate -= second_order_bias(metric, confusion, **options)
    else:
        confusion = observed_confusion(observed, pred, noise, weight)
        _, variance = truth_metric(metric, confusion, **options)
        estimate = nominal
    return NoisyScore(
        metric,
        expected=estimate,
        variance=max(variance, 0.0),
        nominal=nominal,
        n_samples=observed.shape[0],
        method="exact" if linear else "delta",
        estimand=estimand,
    )


#: The ``estimand`` parameter of the confusion-matrix metrics' docstrings.
ESTIMAND_PARAMETER = """
    estimand : {"forward", "truth", "remeasurement"}, default="forward"
        Which question ``expected`` answers (user guide: :ref:`estimands`).
        ``"forward"``: ``y_true`` is taken as exact and the result is the
        paper's distribution of the metric over labels flipped around it,
        right for exact references (a gold standard, a simulation's ground
        truth); it is not what a re-measurement of noisy labels shows.
        ``"truth"``: ``y_true`` holds the noisy labels and the result
        estimates the metric against the unknown true classes, from the
        de-noised confusion matrix (user guide: :ref:`formula_truth`; see
        Notes). ``"remeasurement"``: ``y_true`` holds the noisy labels and the
        result is the nominal metric, exactly unbiased for the metric expected
        when the samples are labelled again the same way, with an estimate of
        its spread over such re-measurements (the delta method over the
        observed confusion matrix, whose covariance is estimated without
        bias; ``method="exact"`` where the metric is linear in the matrix).
        Both need an invertible flip model (``q != (K-1)/K``, a non-singular
        ``transition_matrix``), else a ``ValueError``; their variance
        estimates, unbiased or consistent rather than non-negative, are
        reported clipped at 0. The ``method`` option applies to
        ``"forward"`` only."""
