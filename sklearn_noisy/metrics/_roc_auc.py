"""The area under the ROC curve when binary labels flip (:ref:`roc_auc`)."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.metrics import roc_auc_score

from .._noisy_score import NoisyScore
from ..utils._arrays import as_float_array, check_finite
from ..utils._labels import as_label_array
from ..utils._noise import FlipNoise
from ..utils._validation import check_estimand, supports_estimands
from ..utils._warnings import warn
from ._roc_auc_kernels import (
    EXACT_BUDGET,
    auc_moments_delta,
    auc_moments_exact,
    centered_ranks,
    exact_cost,
    tie_groups,
)
from ._test_set_sampling import with_test_set_sampling

__all__ = ["expected_roc_auc_score"]

_METRIC = "roc_auc"
_METHODS = ("auto", "exact", "delta")
#: Above this probability that one class is missing, the moments warn.
_UNDEFINED_WARNING = 1e-3


def _check_inputs(
    y_true: Any, y_score: Any, labels: Any
) -> tuple[np.ndarray, np.ndarray, list]:
    """``(is_positive, scores, [negative, positive])`` of a binary problem."""
    y_true = as_label_array(y_true, name="y_true")
    scores = as_float_array(y_score, name="y_score")
    if scores.ndim == 2 and scores.shape[1] == 1:
        scores = scores[:, 0]
    if scores.ndim != 1:
        raise ValueError(
            "y_score must be 1-D: the score of the positive (greater) class for "
            f"binary labels; got shape {scores.shape}. Multiclass ROC AUC under "
            "label noise is not available."
        )
    if y_true.shape[0] != scores.shape[0]:
        raise ValueError(
            "y_true and y_score must have the same number of samples; got "
            f"{y_true.shape[0]} and {scores.shape[0]}."
        )
    if y_true.shape[0] == 0:
        raise ValueError("y_true is empty: at least one sample is required.")
    check_finite(scores, name="y_score")
    if labels is None:
        classes = np.unique(y_true).tolist()
    else:
        classes = np.asarray(labels).tolist()
        if np.asarray(labels).ndim != 1 or len(classes) != 2:
            raise ValueError(
                "labels must list the two classes [negative, positive]; got "
                f"{labels!r}."
            )
        extra = sorted(set(np.unique(y_true).tolist()) - set(classes), key=str)
        if extra:
            raise ValueError(f"y_true has labels that are not in `labels`: {extra}.")
    if len(classes) > 2:
        raise ValueError(
            f"y_true has {len(classes)} classes {classes[:5]}: the ROC AUC under "
            "label noise is defined for binary labels only."
        )
    if len(classes) < 2:
        raise ValueError(
            f"Only one class present in y_true ({classes}): pass both classes as "
            "labels=[negative, positive] so that the flips are defined."
        )
    return np.asarray(y_true == classes[1], dtype=bool), scores, classes


def _flip_law(
    positive: np.ndarray, q: Any, transition_matrix: Any
) -> tuple[np.ndarray, np.ndarray, FlipNoise]:
    """``(t0, t1)``: P(observed positive | negative, positive) per sample."""
    noise = FlipNoise.from_params(
        q, transition_matrix, n_samples=positive.size, n_classes=2
    )
    if noise.matrix is not None:
        t0 = np.full(positive.size, noise.matrix[0, 1])
        t1 = np.full(positive.size, noise.matrix[1, 1])
    else:
        keep, flip = noise.keep_flip()
        t0 = np.broadcast_to(np.asarray(flip, dtype=np.float64), positive.shape)
        t1 = np.broadcast_to(np.asarray(keep, dtype=np.float64), positive.shape)
    return t0, t1, noise


def _nominal(positive: np.ndarray, scores: np.ndarray) -> float:
    if positive.all() or not positive.any():
        return float("nan")
    return float(roc_auc_score(positive, scores))


def _forward(
    positive: np.ndarray, scores: np.ndarray, t0: np.ndarray, t1: np.ndarray,
    method: str,
) -> tuple[float, float, str]:  # fmt: skip
    p = np.where(positive, t1, t0)
    if method == "auto":
        method = "exact" if exact_cost(p) <= EXACT_BUDGET else "delta"
    kernel = auc_moments_exact if method == "exact" else auc_moments_delta
    moments = kernel(p, scores)
    missing = 1.0 - moments.p_defined
    if moments.p_defined <= 0.0:
        raise ValueError(
            "Every draw of the labels has a single class: the ROC AUC is undefined."
        )
    if missing > _UNDEFINED_WARNING:
        warn(
            f"With this label noise one class is missing in {missing:.3g} of the "
            "draws, where the ROC AUC is undefined; the expectation and variance "
            "are conditional on both classes being present.",
            UserWarning,
        )
    return moments.mean, moments.variance, method


def _truth(
    positive: np.ndarray, scores: np.ndarray, t0: np.ndarray, t1: np.ndarray
) -> tuple[float, float]:
    """De-noised AUC ``Û / D̂`` and its delta variance (user guide: truth estimate)."""
    n_samples = positive.size
    scale = t1 - t0
    u = (positive - t0) / scale
    ranks = centered_ranks(tie_groups(scores))
    total = float(u.sum())
    cross = total * total - float(np.dot(u, u))
    count = float(np.dot(u, ranks)) - 0.5 * cross
    pairs = (n_samples - 1) * total - cross
    if not pairs > 0.0:
        warn(
            "The de-noised number of positive-negative pairs is <= 0: the labels "
            "carry no information on both classes; the truth AUC is undefined.",
            UserWarning,
        )
        return float("nan"), float("nan")
    estimate = count / pairs
    rest = total - u
    gradient = (ranks - rest - estimate * ((n_samples - 1) - 2.0 * rest)) / pairs
    # Var(u_i) = π_i (1 − π_i) / (t1 − t0)², estimated without bias and kept
    # within its two possible values.
    low, high = t0 * (1.0 - t0), t1 * (1.0 - t1)
    spread = np.clip(
        low + u * (high - low), np.minimum(low, high), np.maximum(low, high)
    )
    variance = float(np.sum(gradient * gradient * spread / (scale * scale)))
    return estimate, variance


@with_test_set_sampling()
@supports_estimands("forward", "truth")
def expected_roc_auc_score(
    y_true: Any,
    y_score: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    method: str = "auto",
    estimand: str = "forward",
) -> NoisyScore:
    """Expected ROC AUC, and its variance, when binary labels flip.

    The scores are held fixed; the moments are conditional on both classes
    being present. Read more in the :ref:`User Guide <formula_roc_auc>`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        The reference labels (``estimand="forward"``) or the observed noisy
        labels (``"truth"``). Two classes; the greater is positive, as in
        :func:`sklearn.metrics.roc_auc_score`.

    y_score : array-like of shape (n_samples,)
        Scores of the positive class (probabilities or decision values).

    q : float or array-like of shape (n_samples,), default=None
        Probability in [0, 1] that each observed label is the other class.
        Exactly one of ``q`` and ``transition_matrix`` is required.

    transition_matrix : array-like of shape (2, 2), default=None
        ``T[j, k]``: probability that a sample of class ``labels[j]`` is
        observed as ``labels[k]``.

    labels : array-like of shape (2,), default=None
        The classes ``[negative, positive]``; by default the sorted classes of
        ``y_true``. Needed when ``y_true`` holds one class only.

    method : {"auto", "exact", "delta"}, default="auto"
        Exact conditional moments, or a delta expansion in the number of
        positives; ``"auto"`` is exact up to 5·10⁶ terms. Truth uses delta.

    estimand : {"forward", "truth"}, default="forward"
        The AUC over flips of exact labels ``y_true``, or an estimate of the
        AUC against the unknown true classes (:ref:`estimands`).

    Returns
    -------
    NoisyScore
        ``nominal`` is scikit-learn's ROC AUC of ``y_true`` (NaN when it holds
        one class).

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_roc_auc_score
    >>> y = [0, 0, 1, 1, 0, 1, 0, 1, 1, 0]
    >>> score = [0.1, 0.4, 0.35, 0.8, 0.2, 0.7, 0.3, 0.6, 0.9, 0.5]
    >>> result = expected_roc_auc_score(y, score, q=0.1)
    >>> round(result.nominal, 4), round(result.expected, 4), round(result.std, 4)
    (0.92, 0.847, 0.1083)
    """
    if not isinstance(method, str) or method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}; got {method!r}.")
    estimand = check_estimand(
        estimand, metric=_METRIC, supported=expected_roc_auc_score.estimands
    )
    positive, scores, _ = _check_inputs(y_true, y_score, labels)
    t0, t1, noise = _flip_law(positive, q, transition_matrix)
    nominal = _nominal(positive, scores)
    n_samples = positive.size
    if not (np.any(t0 > 0.0) or np.any(t1 < 1.0)):
        if np.isnan(nominal):
            raise ValueError(
                "Only one class present in y_true. ROC AUC score is not defined "
                "in that case."
            )
        return NoisyScore(_METRIC, nominal, 0.0, nominal, n_samples, "exact", estimand)
    if estimand == "truth":
        noise.check_invertible()
        expected, variance = _truth(positive, scores, t0, t1)
        return NoisyScore(
            _METRIC, expected, variance, nominal, n_samples, "delta", "truth"
        )
    expected, variance, used = _forward(positive, scores, t0, t1, method)
    return NoisyScore(_METRIC, expected, variance, nominal, n_samples, used)
