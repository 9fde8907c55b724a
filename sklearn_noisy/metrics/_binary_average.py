"""Binary labels: validation, the law of the observed labels, and the scores.

Precision, recall and F1 with ``average="binary"``, and balanced accuracy and
MCC on two classes, start here: :func:`_binary_problem` validates the labels
and the flip model and gives each sample's probability ``π_i`` of being
observed positive (``1 - q_i`` if ``y_true_i`` is the positive label, ``q_i``
otherwise, or ``T[y_true_i, pos_label]`` for a transition matrix). Precision
``TP / n_P`` is linear in the labels and has a closed form; the other metrics
go through the exact count algorithm or the delta method (user guide:
:ref:`formula_binary_counts`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._noisy_score import NoisyScore
from ..utils._labels import as_label_array
from ..utils._noise import FlipNoise
from ._binary_counts import _delta_moments, _exact_moments, _metric_from_counts
from ._count_distributions import count_metric_distribution
from ._count_estimands import count_estimand_score

#: The ways to compute the moments of a binary metric.
_METHODS = ("exact", "delta")

#: The first parameters of the docstrings of the binary count metrics.
_NOISE_PARAMETERS = """\
    y_true : array-like of shape (n_samples,)
        The reference labels, taken as exact, around which the labels flip
        (``estimand="forward"``), or the observed noisy labels (``"truth"``,
        ``"remeasurement"``). Any label values; ``pos_label`` selects the
        positive one.
    y_pred : array-like of shape (n_samples,)
        Predicted labels, held fixed.
    q : float or array-like of shape (n_samples,), default=None
        Probability in [0, 1] that each observed label differs from ``y_true``
        (a constant or one per sample). For multiclass labels a flip is
        uniform over the other ``K - 1`` classes. Exactly one of ``q`` and
        ``transition_matrix`` is required.
    transition_matrix : array-like of shape (n_classes, n_classes), default=None
        Row-stochastic matrix: ``T[j, k]`` is the probability that a sample of
        class ``labels[j]`` is observed as ``labels[k]``. For binary labels pass
        ``labels=[negative, positive]`` unless both classes occur in the data."""


# --------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------


def _check_option(value: Any, allowed: tuple, *, name: str) -> None:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}; got {value!r}.")


# --------------------------------------------------------------------------
# Labels
# --------------------------------------------------------------------------


def _label_arrays(y_true: Any, y_pred: Any) -> tuple[np.ndarray, np.ndarray]:
    """``y_true`` and ``y_pred`` as 1-D label arrays of one non-zero length."""
    y_true = as_label_array(y_true, name="y_true")
    y_pred = as_label_array(y_pred, name="y_pred")
    n_samples = y_true.shape[0]
    if n_samples == 0:
        raise ValueError("y_true is empty: at least one sample is required.")
    if y_pred.shape[0] != n_samples:
        raise ValueError(
            "y_true and y_pred must have the same number of samples; got "
            f"{n_samples} and {y_pred.shape[0]}."
        )
    return y_true, y_pred


def _distinct_values(y: np.ndarray, skip: np.ndarray) -> np.ndarray:
    """The distinct values of ``y[~skip]`` (at most two of them when numeric)."""
    rest = y[~skip]
    if rest.size == 0:
        return rest
    if y.dtype.kind in "biuf":  # O(M) instead of a sort: min and max suffice
        low, high = rest.min(), rest.max()
        if low == high:
            return np.array([low])
        middle = rest[(rest != low) & (rest != high)]
        return np.array([low, high] if middle.size == 0 else [low, middle[0], high])
    return np.unique(rest)


def _label_kind(y: np.ndarray) -> str:
    return "number" if y.dtype.kind in "biuf" else y.dtype.kind


def _present_labels(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    true_pos: np.ndarray,
    pred_pos: np.ndarray,
    pos_label: Any,
) -> list:
    """The sorted labels of ``y_true`` and ``y_pred`` (two or three when numeric).

    ``true_pos`` and ``pred_pos`` mark the samples known to hold ``pos_label``,
    which are not searched again.
    """
    if _label_kind(y_true) != _label_kind(y_pred):
        raise TypeError(
            f"y_true and y_pred mix label types ({y_true.dtype} and {y_pred.dtype})."
        )
    others = np.union1d(
        _distinct_values(y_true, true_pos), _distinct_values(y_pred, pred_pos)
    ).tolist()
    if true_pos.any() or pred_pos.any():
        return sorted([*others, pos_label])
    return others


def _binary_present_labels(y_true: Any, y_pred: Any, labels: Any) -> list | None:
    """The classes of a binary problem, or None when it is multiclass."""
    if labels is not None:
        labels = np.asarray(labels)
        if labels.ndim != 1 or labels.size == 0:
            raise ValueError("labels must be a non-empty 1-D list of class labels.")
        return labels.tolist() if labels.size <= 2 else None
    y_true, y_pred = _label_arrays(y_true, y_pred)
    nowhere = np.zeros(y_true.shape[0], dtype=bool)
    present = _present_labels(y_true, y_pred, nowhere, nowhere, None)
    return present if len(present) <= 2 else None


def _binary_classes(
    y_true: Any, y_pred: Any, *, labels: Any, pos_label: Any
) -> tuple[np.ndarray, np.ndarray, list]:
    """``(true_pos, pred_pos, classes)``: which samples hold ``pos_label``.

    ``classes`` are ``labels`` or the labels present in ``y_true`` and
    ``y_pred``; more than two of them is an error.
    """
    y_true, y_pred = _label_arrays(y_true, y_pred)
    n_samples = y_true.shape[0]
    true_pos = np.asarray(y_true == pos_label, dtype=bool)
    pred_pos = np.asarray(y_pred == pos_label, dtype=bool)
    if true_pos.shape != y_true.shape:  # comparison of incompatible types
        true_pos = np.zeros(n_samples, dtype=bool)
        pred_pos = np.zeros(n_samples, dtype=bool)
    present = _present_labels(y_true, y_pred, true_pos, pred_pos, pos_label)
    if labels is not None:
        labels = np.asarray(labels)
        if labels.ndim != 1 or labels.size == 0:
            raise ValueError("labels must be a non-empty 1-D list of class labels.")
        if labels.size > 2:
            raise ValueError(
                f"average='binary' needs two classes, but labels has {labels.size}; "
                "choose average='macro', 'micro' or 'weighted' for multiclass labels."
            )
        missing = [v for v in present if v not in labels.tolist()]
        if missing:
            raise ValueError(
                f"y_true and y_pred contain labels that are not in `labels`: {missing}."
            )
    if len(present) > 2:
        raise ValueError(
            "Target is multiclass but average='binary'. Please choose another "
            "average setting, one of ['micro', 'macro', 'weighted']; labels found: "
            f"{present[:5]}."
        )
    if len(present) == 2 and pos_label not in present:
        raise ValueError(
            f"pos_label={pos_label!r} is not a valid label. It should be one of "
            f"{present}."
        )
    return true_pos, pred_pos, present if labels is None else labels.tolist()


# --------------------------------------------------------------------------
# The law of the observed labels
# --------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _BinaryProblem:
    """A validated binary problem and the law of its observed labels.

    Parameters
    ----------
    true_pos, pred_pos : ndarray of bool
        Whether ``y_true`` (``y_pred``) is the positive label.
    pi : ndarray
        ``π_i``, the probability that the observed label is positive.
    var : float or ndarray
        The variance of the indicator "observed positive": ``q_i (1 - q_i)``
        (a float for a scalar ``q``) or ``π_i (1 - π_i)`` for a matrix.
    noise : FlipNoise
        The validated flip model.
    """

    true_pos: np.ndarray
    pred_pos: np.ndarray
    pi: np.ndarray
    var: Any
    noise: FlipNoise

    @property
    def n_samples(self) -> int:
        return int(self.pi.size)

    @property
    def n_pred_pos(self) -> int:
        return int(np.count_nonzero(self.pred_pos))

    def nominal(self, metric: str) -> float:
        """The metric on ``y_true`` itself."""
        return _metric_from_counts(
            metric,
            int(np.count_nonzero(self.true_pos & self.pred_pos)),
            int(np.count_nonzero(self.true_pos)),
            self.n_pred_pos,
            self.n_samples,
        )


def _binary_problem(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    pos_label: Any,
) -> _BinaryProblem:
    """Validate binary labels and the flip model; ``π_i`` of every sample."""
    true_pos, pred_pos, classes = _binary_classes(
        y_true, y_pred, labels=labels, pos_label=pos_label
    )
    if transition_matrix is not None and (
        len(classes) != 2 or pos_label not in classes
    ):
        raise ValueError(
            "With a 2 x 2 transition_matrix pass labels=[negative, positive] "
            f"(the classes of its rows and columns) including pos_label="
            f"{pos_label!r}; found the classes {classes}."
        )
    noise = FlipNoise.from_params(
        q, transition_matrix, n_samples=true_pos.size, n_classes=2
    )
    if noise.matrix is not None:  # the classes as [negative, positive]
        positive = classes.index(pos_label)
        noise = noise.permute(np.array([1 - positive, positive]))
    # π_i = P(observed as class 1 | class true_pos_i)
    if noise.matrix is not None:
        pi = noise.probability(true_pos.view(np.int8), 1, slice(None))
        var = pi * (1.0 - pi)
    else:  # 1 - q_i on the positives, q_i on the others; variance q_i (1 - q_i)
        pi = np.where(true_pos, *noise.keep_flip())
        var, _ = noise.keep_flip_variance()
    return _BinaryProblem(true_pos, pred_pos, pi, var, noise)


# --------------------------------------------------------------------------
# Scores
# --------------------------------------------------------------------------


def _binary_score(metric: str, problem: _BinaryProblem, method: str) -> NoisyScore:
    """Recall, F1, balanced accuracy or MCC: exact or by the delta method."""
    pi, pred_pos = problem.pi, problem.pred_pos
    if method == "exact":
        expected, variance = _exact_moments((metric,), pi, pred_pos)[metric]
    else:
        var = problem.var
        if not isinstance(var, np.ndarray):
            var = np.full(pi.size, float(var))
        expected, variance = _delta_moments(metric, pi, var, pred_pos)
    nominal = problem.nominal(metric)
    return NoisyScore(
        metric,
        expected,
        variance,
        nominal,
        pi.size,
        method,
        distribution=count_metric_distribution(metric, pi, pred_pos),
    )


def _precision_measurement(problem: _BinaryProblem) -> NoisyScore:
    """Closed form: E = Σ_P π_i / n_P, Var = Σ_P π_i (1 - π_i) / n_P²."""
    n_samples, n_pred_pos = problem.n_samples, problem.n_pred_pos
    if n_pred_pos == 0:
        return NoisyScore("precision", 0.0, 0.0, 0.0, n_samples, "exact")
    pred_pos = problem.pred_pos
    nominal = int(np.count_nonzero(problem.true_pos & pred_pos)) / n_pred_pos
    expected = float(problem.pi[pred_pos].sum()) / n_pred_pos
    if isinstance(problem.var, float):
        variance = problem.var / n_pred_pos
    else:
        variance = float(problem.var[pred_pos].sum()) / float(n_pred_pos) ** 2
    return NoisyScore(
        "precision",
        expected,
        variance,
        nominal,
        n_samples,
        "exact",
        distribution=count_metric_distribution("precision", problem.pi, pred_pos),
    )


def _precision_truth(problem: _BinaryProblem) -> NoisyScore:
    """Unbiased precision against the unknown true labels (flips ``q`` only).

    (User guide: :ref:`formula_truth`.)
    """
    pred_pos, n_pred_pos = problem.pred_pos, problem.n_pred_pos
    # Only the predicted positives enter the precision.
    noise = problem.noise.take(pred_pos)
    q_pos = noise.q
    if np.any(np.asarray(q_pos) == 0.5):
        raise ValueError(
            "estimand='truth' needs q != 0.5 for every predicted positive: at "
            "q = 0.5 the observed label carries no information about the true one."
        )
    nominal = problem.nominal("precision")
    n_samples = problem.n_samples
    if n_pred_pos == 0:
        return NoisyScore("precision", 0.0, 0.0, nominal, n_samples, "exact", "truth")
    shrink = 1.0 - 2.0 * np.asarray(q_pos, dtype=np.float64)
    observed = problem.true_pos[pred_pos]
    estimate = np.sum((observed - q_pos) / shrink) / n_pred_pos
    keep_variance, _ = noise.keep_flip_variance()
    variance = np.sum(keep_variance / shrink**2)
    if noise.is_constant:
        variance = variance * n_pred_pos
    variance /= float(n_pred_pos) ** 2
    return NoisyScore(
        "precision", estimate, variance, nominal, n_samples, "exact", "truth"
    )


def _binary_estimand(metric: str, problem: _BinaryProblem, estimand: str) -> NoisyScore:
    """The truth or remeasurement estimate of a binary metric.

    Precision against the truth with flips ``q`` keeps its closed form
    (:func:`_precision_truth`); everything else goes through the confusion
    matrix of the classes ``[negative, positive]``
    (:func:`~._count_estimands.count_estimand_score`).
    """
    if metric == "precision" and estimand == "truth" and problem.noise.q is not None:
        return _precision_truth(problem)
    return count_estimand_score(
        metric,
        problem.true_pos.view(np.int8).astype(np.intp),
        problem.pred_pos.view(np.int8).astype(np.intp),
        problem.noise,
        estimand=estimand,
        nominal=problem.nominal(metric),
        pos_index=1,
    )
