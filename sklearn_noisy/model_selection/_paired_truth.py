"""The truth estimand of a paired difference ``metric_a − metric_b``.

For labels that are measurements the question is how much better one model
predicts the *true* values than the other. Two metrics have an unbiased paired
estimate with an exact variance (user guide: :ref:`formula_paired` and
:ref:`formula_truth`):

- MSE: the label noise adds the same ``σ_i²`` to both models' squared errors,
  so the truth difference is the nominal difference, and its variance over the
  noise is ``4 Σ w_i² σ_i² (a_i − b_i)² / W²`` (exact; σ's own uncertainty
  does not enter, since ``σ²`` cancels);
- binary accuracy with a flip probability ``q``: the difference of the
  de-noised hits ``(1[c̃_i = a_i] − 1[c̃_i = b_i]) / (1 − 2 q_i)``, unbiased
  for the difference of the true hits, with variance
  ``Σ_{a_i ≠ b_i} 4 q_i (1 − q_i) / (1 − 2 q_i)² / M²`` (exact, as q is known).

The other metrics (and accuracy with more than two classes or a transition
matrix) have no paired kernel here: :func:`truth_unavailable` says why, and the
comparison reports their forward difference with that note.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .._noisy_score import NoisyScore

__all__ = ["difference_estimands", "paired_truth_difference", "truth_unavailable"]


def truth_unavailable(
    scorer: Any, y: Any, classes: np.ndarray | None, noise: dict[str, Any]
) -> str | None:
    """Why the paired truth difference is not available, or None when it is."""
    if getattr(scorer, "metric_kwargs", None):
        return f"{scorer.metric} with options {sorted(scorer.metric_kwargs)}"
    if scorer.metric == "mean_squared_error":
        if np.ndim(y) != 1:
            return "mean_squared_error with several outputs"
        return None
    if scorer.metric == "accuracy":
        if "q" not in noise:
            return "accuracy with a transition matrix"
        if classes is None or len(classes) != 2:
            return "accuracy with more than two classes"
        return None
    return scorer.metric


def difference_estimands(
    scorers: dict[str, Any],
    y: Any,
    classes: np.ndarray | None,
    noise: dict[str, dict[str, Any]],
    estimand: str,
) -> tuple[dict[str, str], dict[str, str]]:
    """Per metric the estimand of its paired difference, and why not truth.

    ``noise[key]`` holds the noise values of the scorer of ``key``. A metric
    without a paired truth kernel keeps ``"forward"``, with a note and a
    :class:`UserWarning`.
    """
    kinds, notes = {}, {}
    for key, scorer in scorers.items():
        why = truth_unavailable(scorer, y, classes, noise[key])
        if estimand != "truth" or why is None:
            kinds[key] = estimand
            continue
        kinds[key] = "forward"
        notes[key] = (
            f"no paired truth difference for {why}: the forward difference (the "
            "paper's, if y_true were exact) is reported"
        )
        warnings.warn(f"{key}: {notes[key]}.", UserWarning, stacklevel=3)
    return kinds, notes


def paired_truth_difference(
    scorer: Any, y: Any, pred_a: Any, pred_b: Any, noise: dict[str, Any]
) -> NoisyScore:
    """``metric_a − metric_b`` against the true values, with its exact variance.

    Only for the cases :func:`truth_unavailable` accepts (MSE; binary accuracy
    with ``q``). ``noise`` holds ``sigma`` or ``q`` for these samples.
    """
    y = np.asarray(y)
    n = y.shape[0]
    if scorer.metric == "mean_squared_error":
        y, a, b = (np.asarray(v, dtype=np.float64) for v in (y, pred_a, pred_b))
        nominal = float(np.mean((y - a) ** 2 - (y - b) ** 2))
        sigma2 = np.broadcast_to(np.square(noise["sigma"]), y.shape)
        variance = 4.0 * float(np.sum(sigma2 * (a - b) ** 2)) / n**2
        expected = nominal
    else:
        q = np.broadcast_to(np.asarray(noise["q"], dtype=np.float64), y.shape)
        if np.any(q >= 0.5):
            raise ValueError(
                "The truth estimate of accuracy needs q < 0.5 for every sample "
                "(at q = 0.5 the labels carry no information)."
            )
        hits = (y == np.asarray(pred_a)).astype(np.float64) - (
            y == np.asarray(pred_b)
        ).astype(np.float64)
        scale = 1.0 - 2.0 * q
        nominal = float(np.mean(hits))
        expected = float(np.mean(hits / scale))
        disagree = np.asarray(pred_a) != np.asarray(pred_b)
        variance = float(
            np.sum(np.where(disagree, 4.0 * q * (1.0 - q) / scale**2, 0.0)) / n**2
        )
    return NoisyScore(
        f"{scorer.metric}_difference",
        expected,
        variance,
        nominal,
        n,
        "exact",
        estimand="truth",
    )
