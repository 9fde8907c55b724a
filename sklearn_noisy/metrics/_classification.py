"""Expected accuracy under label flips (user guide: :ref:`formula_accuracy`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._noisy_score import NoisyScore
from ..utils._arrays import (
    check_sample_weight,
    chunks,
    weighted_sum,
    weighted_totals,
)
from ..utils._labels import EncodedLabels, check_targets, encode_labels
from ..utils._noise import FlipNoise
from ..utils._validation import check_estimand, supports_estimands
from ._confusion_matrix import NoisyConfusionMatrix, expected_confusion_matrix
from ._definitions.counts import ACCURACY
from ._engines.counts import distributions
from ._engines.counts.checks import check_bool, weights_and_scale
from ._engines.counts.multilabel import _as_2d, _positive_probability, indicators
from ._engines.counts.prediction import flip_cumulants, prediction_pivot
from ._engines.test_set_sampling import with_test_set_sampling
from ._probabilistic import estimand_inverse, table_terms, totals_score

__all__ = [
    "NoisyConfusionMatrix",
    "expected_accuracy_score",
    "expected_confusion_matrix",
]


# --------------------------------------------------------------------------- #
# Accuracy
# --------------------------------------------------------------------------- #
def _accuracy_totals(
    estimand: str,
    encoded: EncodedLabels,
    noise: FlipNoise,
    weight: np.ndarray | None,
    terms: list | None = None,
) -> tuple[float, float, float, float]:
    """Weighted totals ``(Σ w o, Σ w h, Σ w² v, floor)`` of the estimand's terms.

    ``o`` is the nominal hit, ``h`` the estimand's term (:func:`_sample_terms`,
    appended to ``terms`` if given), ``v`` its variance and ``floor`` the
    exact lower bound of the truth estimate's variance (0 for the others).
    """
    n_samples = encoded.n_samples
    if estimand == "forward" and noise.matrix is None and noise.is_constant:
        # P = 1 − q on correct predictions, q/(K−1) on wrong ones: only the
        # (weighted) number of correct predictions is needed.
        hits = hits_sq = 0.0
        for rows in chunks(n_samples):
            correct = encoded.correct(rows)
            if weight is None:
                hits += float(np.count_nonzero(correct))
            else:
                w = weight[rows]
                hits += float(np.sum(w * correct))
                hits_sq += float((w * w) @ correct)
        if weight is None:
            total, total_sq, hits_sq = float(n_samples), float(n_samples), hits
        else:
            total, total_sq = float(np.sum(weight)), float(weight @ weight)
        keep, r = noise.keep_flip()
        expected = hits * keep + (total - hits) * r
        variance = hits_sq * noise.q * keep + (total_sq - hits_sq) * r * (1.0 - r)
        return hits, expected, variance, 0.0
    inverse = estimand_inverse(estimand, noise)
    totals = np.zeros(4)
    for rows in chunks(n_samples):
        correct, term, var, floor = _sample_terms(
            estimand, encoded, noise, inverse, rows
        )
        if terms is not None:
            terms.append(term)
        sums = weighted_totals(weight, rows, correct, term, var)
        if weight is not None:  # np.average: a pairwise sum of w·o, not a dot
            sums[0] = weighted_sum(correct, weight[rows])
        totals[:3] += sums
        if floor is not None:
            totals[3] += weighted_totals(weight, rows, floor)[0]
    return tuple(float(t) for t in totals)


def _sample_terms(
    estimand: str,
    encoded: EncodedLabels,
    noise: FlipNoise,
    inverse: np.ndarray | None,
    rows: slice,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """``(o, h, v, floor)`` of ``rows``: the hit, the estimand's term, its variance
    (:func:`~sklearn_noisy.metrics._probabilistic.table_terms` of a 0/1 loss)."""
    if estimand == "forward" and noise.matrix is None:
        correct = encoded.correct(rows)
        prob = np.where(correct, *noise.keep_flip(rows))
        return correct, prob, np.where(correct, *noise.keep_flip_variance(rows)), None
    true_index, pred_index = encoded.indices(rows)
    hits = np.zeros((pred_index.shape[0], noise.n_classes))
    hits[np.arange(pred_index.shape[0]), pred_index] = 1.0
    return table_terms(estimand, hits, true_index, noise, inverse, rows)


def _subset_accuracy(
    y_true: Any,
    y_pred: Any,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    normalize: bool,
    sample_weight: Any,
    estimand: str,
) -> NoisyScore:
    """The accuracy of multilabel indicator targets: a hit is a whole row.

    Row ``i`` is a hit with probability ``P_i = Π_l P(entry (i, l) observed
    as ŷ_il)``; the moments are the accuracy's with this ``P_i``.
    """
    truth, pred = indicators(y_true, y_pred)
    if estimand != "forward" or labels is not None:
        raise ValueError(
            "Multilabel targets support estimand='forward' and labels=None only "
            "(their entries are binary, with the flips of q or a 2 x 2 "
            "transition_matrix)."
        )
    n_samples = truth.shape[0]
    weight = check_sample_weight(sample_weight, n_samples)
    probability = _positive_probability(truth, q, transition_matrix, target=pred)
    hit = np.prod(probability, axis=1)
    score = (truth == pred).all(axis=1)
    w = np.ones(n_samples) if weight is None else weight
    nominal = weighted_sum(score, weight)  # np.average's pairwise sum
    divisor = float(n_samples) if weight is None else float(np.sum(weight))
    if not normalize:
        divisor = 1.0
        if weight is not None:  # scikit-learn: np.dot(score, sample_weight)
            nominal = float(np.dot(score, weight))
    totals = (nominal, float(w @ hit), float((w * w) @ (hit * (1.0 - hit))), 0.0)
    return totals_score(
        ACCURACY.name, totals, 1.0, divisor, n_samples=n_samples, estimand=estimand
    )


def accuracy_inputs(
    y_true: Any,
    y_pred: Any,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    sample_weight: Any,
) -> tuple[EncodedLabels, np.ndarray | None, float, FlipNoise]:
    """Validated ``(encoded labels, weight, scale, noise)`` of the accuracy."""
    encoded = encode_labels(y_true, y_pred, labels)
    n_samples = encoded.n_samples
    weight, scale = weights_and_scale(sample_weight, n_samples)
    noise = FlipNoise.from_params(
        q, transition_matrix, n_samples=n_samples, n_classes=encoded.n_classes
    ).for_classes(encoded.classes)
    return encoded, weight, scale, noise


def accuracy_terms(
    arguments: dict[str, Any], score: NoisyScore
) -> tuple[np.ndarray, np.ndarray | None, float] | None:
    """The accuracy's per-sample terms, weights and scale (test-set sampling);
    None (no closed form here) for label-indicator targets."""
    if any(np.ndim(arguments[a]) != 1 for a in ("y_true", "y_pred")):
        return None
    encoded, weight, _, noise = accuracy_inputs(
        arguments["y_true"],
        arguments["y_pred"],
        arguments.get("q"),
        arguments.get("transition_matrix"),
        arguments.get("labels"),
        arguments.get("sample_weight"),
    )
    estimand = arguments.get("estimand", "forward")
    inverse = estimand_inverse(estimand, noise)
    h = np.empty(encoded.n_samples)
    for rows in chunks(encoded.n_samples):
        h[rows] = _sample_terms(estimand, encoded, noise, inverse, rows)[1]
    scale = 1.0
    if not arguments.get("normalize", True):
        sample_weight = arguments.get("sample_weight")
        scale = (
            float(encoded.n_samples)
            if sample_weight is None
            else math.fsum(np.asarray(sample_weight, dtype=float))
        )
    two = encoded.n_classes == 2 and noise.q is not None
    pivot = None  # the skew of its prediction interval
    if two and weight is None and scale == 1.0:
        true_index, pred_index = encoded.indices(slice(None))
        spread = flip_cumulants(noise, true_index, score.estimand)
        pivot = prediction_pivot(h, 2.0 * pred_index - 1.0, *spread, score)
    return h, weight, scale, None, None, None, pivot


@with_test_set_sampling(accuracy_terms, label_arguments=("y_true", "y_pred"))
@supports_estimands("forward", "truth", "remeasurement")
def expected_accuracy_score(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    normalize: bool = True,
    sample_weight: Any = None,
    estimand: str = "auto",
) -> NoisyScore:
    """Expected accuracy, and its variance, under label flips.

    Exact for every estimand. Read more in the
    :ref:`User Guide <formula_accuracy>`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, n_labels)
        Reference labels (``estimand="forward"``) or the observed labels
        (``"truth"``, ``"remeasurement"``). A 0/1 indicator matrix is a
        multilabel target: the subset accuracy, as in scikit-learn, with
        entries that flip independently (``estimand="forward"`` only).
    y_pred : array-like of shape (n_samples,) or (n_samples, n_labels)
        Predicted labels, held fixed.
    q : float or array-like of shape (n_samples,), default=None
        Probability that a label is flipped (uniformly to the ``K - 1`` other
        classes). Exactly one of ``q`` and ``transition_matrix`` is required.
    transition_matrix : array-like of shape (n_classes, n_classes), default=None
        Row-stochastic matrix, ``T[j, k]`` the probability that a sample of
        class ``labels[j]`` is observed as ``labels[k]``.
    labels : array-like of shape (n_classes,), default=None
        The classes, in the order of ``transition_matrix``; by default the
        sorted labels present.
    normalize : bool, default=True
        As in scikit-learn: the fraction of correct predictions, or with
        ``False`` their (weighted) number.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights.
    estimand : {"auto", "truth", "remeasurement", "forward"}, default="auto"
        ``"auto"`` is ``"truth"``: an unbiased estimate against the unknown
        true labels; ``"remeasurement"``: the accuracy expected when the
        samples are labelled again (these two need an invertible noise model);
        ``"forward"``: ``y_true`` taken as exact (:ref:`estimands`).

    Returns
    -------
    score : NoisyScore
        ``nominal`` is :func:`sklearn.metrics.accuracy_score` on ``y_true``;
        ``method`` is ``"exact"``.

    See Also
    --------
    sklearn.metrics.accuracy_score : The metric on exact labels.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_noisy.metrics import expected_accuracy_score
    >>> y_true = np.r_[np.ones(85), np.zeros(15)].astype(int)
    >>> y_pred = np.ones(100, dtype=int)
    >>> score = expected_accuracy_score(y_true, y_pred, q=0.05, estimand="forward")
    >>> round(score.expected, 12), round(score.variance, 12), score.nominal
    (0.815, 0.000475, 0.85)
    """
    estimand = check_estimand(
        estimand, metric=ACCURACY.name, supported=expected_accuracy_score.estimands
    )
    normalize = check_bool(normalize, name="normalize")
    y_true, y_pred = check_targets(y_true, y_pred)
    if _as_2d(y_true) is not None or _as_2d(y_pred) is not None:
        return _subset_accuracy(
            y_true, y_pred, q, transition_matrix, labels, normalize, sample_weight,
            estimand,
        )  # fmt: skip
    encoded, weight, scale, noise = accuracy_inputs(
        y_true, y_pred, q, transition_matrix, labels, sample_weight
    )
    n_samples = encoded.n_samples
    # the exact distribution is of the fraction of hits (normalize=True)
    exact = estimand == "forward" and normalize and weight is None
    small = n_samples <= distributions.MAX_ACCURACY_SAMPLES
    terms: list | None = [] if exact and small else None
    totals = _accuracy_totals(estimand, encoded, noise, weight, terms)
    hits = totals[0]
    divisor = 1.0
    if normalize:  # divided, not multiplied by 1/W: scikit-learn's last bit
        divisor = float(n_samples) if weight is None else float(np.sum(weight))
        scale = 1.0
    elif weight is not None:  # scikit-learn: np.dot(hits, sample_weight)
        hits = sum(float(encoded.correct(r) @ weight[r]) for r in chunks(n_samples))
    return totals_score(
        ACCURACY.name,
        (hits, *totals[1:]),
        scale,
        divisor,
        n_samples=n_samples,
        estimand=estimand,
        distribution=distributions.accuracy_distribution(n_samples, noise, hits, terms)
        if exact
        else None,
    )
