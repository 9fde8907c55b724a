"""Binary labels: validation, the law of the observed labels and the scores
(user guide: :ref:`formula_binary_counts`)."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...._noisy_score import NoisyScore, cornish_fisher_pivot
from ....utils._arrays import chunks
from ....utils._labels import _family, check_label_pair
from ....utils._noise import FlipNoise
from ..._definitions.counts import COUNT_METRICS, CountMetric
from .binary_moments import CountLaws, exact_moments
from .checks import varying_weight
from .confusion_draws import confusion_counts
from .distributions import count_metric_distribution
from .estimands import count_estimand_score
from .fieller import widen
from .multiclass import (
    _draw,
    _Problem,
    adjust_balanced_accuracy,
    is_identity,
    sklearn_value,
)

#: The ways to compute the moments of a binary metric.
_METHODS = ("exact", "delta")
#: Below this many labels one sort finds the distinct values faster than scans.
_SORT_BELOW = 256


def _distinct_values(y: np.ndarray, skip: np.ndarray) -> np.ndarray:
    """The distinct values of ``y[~skip]``, at most three when numeric (scanned
    chunk by chunk: minimum, maximum and one value in between, no copy)."""
    if y.dtype.kind not in "biuf":
        return np.unique(y[~skip])
    if y.shape[0] <= _SORT_BELOW:  # small: the same values, sorted at once
        rest = y[~skip]
        found = np.unique(rest)
        if found.size <= 3:
            return found
        inside = rest[(rest != found[0]) & (rest != found[-1])]
        return np.array([found[0], inside[0], found[-1]], dtype=y.dtype)
    found: list = []
    for rows in chunks(y.shape[0]):
        rest = y[rows][~skip[rows]]
        if rest.size == 0:
            continue
        values = [rest.min(), rest.max(), *found]
        low, high = min(values), max(values)
        middle = [v for v in found if low < v < high]
        if not middle:
            inside = rest[(rest != low) & (rest != high)]
            middle = [inside[0]] if inside.size else []
        found = sorted({low, high, *middle[:1]})
    return np.array(found, dtype=y.dtype)


def _present_labels(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    true_pos: np.ndarray,
    pred_pos: np.ndarray,
    pos_label: Any,
) -> list:
    """The sorted labels of ``y_true`` and ``y_pred`` (two or three when numeric);
    the samples ``true_pos`` and ``pred_pos`` hold ``pos_label``."""
    mixed = "y_true and y_pred mix label types ({} and {})."  # built on error only
    if _family(y_true) != _family(y_pred):
        raise TypeError(mixed.format(y_true.dtype, y_pred.dtype))
    try:
        others = np.union1d(
            _distinct_values(y_true, true_pos), _distinct_values(y_pred, pred_pos)
        ).tolist()
    except TypeError as exc:  # e.g. an object array mixing numbers and str
        raise TypeError(mixed.format(y_true.dtype, y_pred.dtype)) from exc
    if true_pos.any() or pred_pos.any():
        return sorted([*others, pos_label])
    return others


def _check_labels(labels: Any) -> np.ndarray:
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.size == 0:
        raise ValueError("labels must be a non-empty 1-D list of class labels.")
    return labels


def _binary_present_labels(y_true: Any, y_pred: Any, labels: Any) -> list | None:
    """The classes of a binary problem, or None when it is multiclass."""
    if labels is not None:
        labels = _check_labels(labels)
        return labels.tolist() if labels.size <= 2 else None
    y_true, y_pred = check_label_pair(y_true, y_pred)
    nowhere = np.zeros(y_true.shape[0], dtype=bool)
    present = _present_labels(y_true, y_pred, nowhere, nowhere, None)
    return present if len(present) <= 2 else None


def _binary_classes(
    y_true: Any, y_pred: Any, *, labels: Any, pos_label: Any
) -> tuple[np.ndarray, np.ndarray, list]:
    """``(true_pos, pred_pos, classes)``; more than two classes is an error."""
    y_true, y_pred = check_label_pair(y_true, y_pred)
    n_samples = y_true.shape[0]
    true_pos = np.asarray(y_true == pos_label, dtype=bool)
    pred_pos = np.asarray(y_pred == pos_label, dtype=bool)
    if true_pos.shape != y_true.shape:  # comparison of incompatible types
        true_pos = np.zeros(n_samples, dtype=bool)
        pred_pos = np.zeros(n_samples, dtype=bool)
    present = _present_labels(y_true, y_pred, true_pos, pred_pos, pos_label)
    if labels is not None:
        labels = _check_labels(labels)
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


def check_zero_division(zero_division: Any) -> float:
    """scikit-learn's ``zero_division`` as a number: "warn" is 0 (no warning)."""
    if isinstance(zero_division, str):
        if zero_division == "warn":
            return 0.0
    elif isinstance(zero_division, numbers.Real) and (
        zero_division in (0, 1) or math.isnan(zero_division)
    ):
        return float(zero_division)
    raise ValueError(
        "zero_division must be 'warn', 0.0, 1.0 or np.nan, as in scikit-learn; "
        f"got {zero_division!r}."
    )


def _value(
    definition: CountMetric, tp: float, s: float, n_pos: float, m: float, **options: Any
) -> float:
    """The metric of the matrix ``[[TN, FP], [FN, TP]]``, scikit-learn's bits."""
    confusion = np.array([[(m - n_pos) - (s - tp), n_pos - tp], [s - tp, tp]])
    return float(definition.value(confusion, average="binary", pos_index=1, **options))


@dataclass(frozen=True, eq=False)
class _BinaryProblem:
    """Whether ``y_true`` and ``y_pred`` are positive, the flip model with the
    classes ``[negative, positive]`` and the weights (None: all equal)."""

    true_pos: np.ndarray
    pred_pos: np.ndarray
    noise: FlipNoise
    weight: np.ndarray | None = None
    n_classes = 2  # the class positions: 0 negative, 1 positive

    @property
    def n_samples(self) -> int:
        return int(self.true_pos.size)

    @property
    def n_pred_pos(self) -> int:
        return int(np.count_nonzero(self.pred_pos))

    def indices(self, rows: slice) -> tuple[np.ndarray, np.ndarray]:
        """Class positions ``(true, pred)`` of a chunk, 1 the positive class."""
        return self.true_pos[rows].view(np.int8), self.pred_pos[rows].view(np.int8)

    def pi(self, rows: slice = slice(None)) -> np.ndarray:
        """``π_i``, the probability that the observed label is positive."""
        return self.noise.probability(self.indices(rows)[0], 1, rows)

    def laws(self) -> CountLaws:
        """The laws of TP and FN, streamed: no per-sample array is built."""
        cells = confusion_counts(self.indices, self.n_samples, 2)
        return _Problem(self, self.noise, None, cells).class_laws(1)

    def sums(self) -> tuple[float, float, float, float, float, float]:
        """``(E[TP], E[FN], Var[TP], Var[FN], n_P, M)``, weighted by ``w``."""
        totals = np.zeros(6)
        for rows in chunks(self.n_samples):
            pi, pred = self.pi(rows), self.pred_pos[rows]
            mean, var = pi, pi * (1.0 - pi)
            if self.weight is None:
                n_pred, n_all = np.count_nonzero(pred), pi.size
            else:
                w = self.weight[rows]
                mean, var = pi * w, var * w * w
                n_pred, n_all = w[pred].sum(), w.sum()
            totals += [
                mean[pred].sum(),
                mean[~pred].sum(),
                var[pred].sum(),
                var[~pred].sum(),
                n_pred,
                n_all,
            ]
        return tuple(float(v) for v in totals)


def _binary_problem(y_true: Any, y_pred: Any, options: dict) -> _BinaryProblem:
    """Validate binary labels, the flip model and the sample weights."""
    pos_label, matrix = options["pos_label"], options["transition_matrix"]
    true_pos, pred_pos, classes = _binary_classes(
        y_true, y_pred, labels=options["labels"], pos_label=pos_label
    )
    if matrix is not None and (len(classes) != 2 or pos_label not in classes):
        raise ValueError(
            "With a 2 x 2 transition_matrix pass labels=[negative, positive] "
            f"(the classes of its rows and columns) including pos_label="
            f"{pos_label!r}; found the classes {classes}."
        )
    noise = FlipNoise.from_params(
        options["q"], matrix, n_samples=true_pos.size, n_classes=2
    )
    if noise.matrix is not None:  # the classes as [negative, positive]
        positive = classes.index(pos_label)
        noise = noise.permute(np.array([1 - positive, positive]))
    weight = varying_weight(options["sample_weight"], true_pos.size)
    return _BinaryProblem(true_pos, pred_pos, noise, weight)


def binary_score(
    definition: CountMetric, y_true: Any, y_pred: Any, options: dict
) -> NoisyScore:
    """Binary labels (balanced accuracy, MCC and kappa on two classes too):
    precision in closed form, the others exact, delta or Monte Carlo (unequal
    weights); ``options`` hold the ``pos_label`` and the number ``zero``."""
    metric, pos_label, zero = definition.name, options["pos_label"], options["zero"]
    sample_weight, estimand = options["sample_weight"], options["estimand"]
    adjusted = bool(options.get("adjusted", False))
    problem = _binary_problem(y_true, y_pred, options)
    kwargs = {"zero_division": zero, "adjusted": adjusted}
    m = problem.n_samples
    if sample_weight is None:
        tp = int(np.count_nonzero(problem.true_pos & problem.pred_pos))
        s_obs = int(np.count_nonzero(problem.true_pos))
        nominal = _value(definition, tp, s_obs, problem.n_pred_pos, m, **kwargs)
    else:
        nominal = float(sklearn_value(
            definition, y_true, y_pred, sample_weight=sample_weight, adjusted=adjusted,
            pos_label=pos_label, zero_division=options.get("zero_division", 0.0),
        ))  # fmt: skip
    if estimand != "forward":
        score = _binary_estimand(
            metric, problem, estimand, nominal=nominal, zero_division=zero
        )
        return adjust_balanced_accuracy(score, 2, adjusted)
    if is_identity(problem.noise):
        return NoisyScore(metric, nominal, 0.0, nominal, m, "exact")
    if definition.fixed_denominator:  # Σ_P w π / Σ_P w
        t, _, v_t, _, n_pred_pos, _ = problem.sums()
        if n_pred_pos == 0:
            return NoisyScore(metric, zero, 0.0, nominal, m, "exact")
        return NoisyScore(
            metric, t / n_pred_pos, v_t / n_pred_pos**2, nominal, m, "exact",
            distribution=count_metric_distribution(metric, problem, **kwargs),
        )  # fmt: skip
    flips = problem.noise.matrix if problem.noise.q is None else problem.noise.q
    if np.all(np.isin(flips, (0.0, 1.0))) and problem.weight is None:
        tp, fn = problem.sums()[:2]  # sums of 0/1 probabilities: the counts
        value = _value(definition, tp, tp + fn, problem.n_pred_pos, m, **kwargs)
        return NoisyScore(metric, value, 0.0, nominal, m, "exact")
    distribution = count_metric_distribution(metric, problem, **kwargs)
    if options["method"] == "delta":
        t, f, v_t, v_f, n_pred_pos, total = problem.sums()
        # A constant prediction leaves balanced accuracy 1/2 but where a single
        # class is observed: events the delta method cannot see.
        degenerate = n_pred_pos in (0.0, total) and definition.present_classes
        if not (degenerate or adjusted or math.isnan(zero) or v_t + v_f == 0.0):
            value, d_t, d_f, d_tt, d_ff = definition.delta(t, f, n_pred_pos, total)
            expected = value + 0.5 * (d_tt * v_t + d_ff * v_f)
            variance = d_t * d_t * v_t + d_f * d_f * v_f
            return NoisyScore(
                metric, expected, variance, nominal, m, "delta",
                distribution=distribution,
            )  # fmt: skip
    if problem.weight is not None:
        draws = _Problem(problem, problem.noise, problem.weight, None)
        mc = {"n_draws": options["n_draws"], "random_state": options["random_state"]}
        kwargs.update(average="binary", pos_index=1)
        return NoisyScore(
            metric, *_draw(metric, draws, kwargs, mc)[:2], nominal, m, "monte_carlo"
        )
    expected, variance = exact_moments((metric,), problem.laws(), **kwargs)[metric]
    return NoisyScore(
        metric, expected, variance, nominal, m, "exact", distribution=distribution
    )


def _binary_estimand(
    metric: str,
    problem: _BinaryProblem,
    estimand: str,
    *,
    nominal: float,
    zero_division: float = 0.0,
) -> NoisyScore:
    """The truth or remeasurement estimate, through the confusion matrix of
    ``[negative, positive]``; precision against the truth with flips ``q``
    and no weights in closed form (user guide: :ref:`formula_truth`)."""
    if not (
        COUNT_METRICS[metric].fixed_denominator
        and estimand == "truth"
        and problem.noise.q is not None
        and problem.weight is None
    ):
        return count_estimand_score(
            metric,
            problem.true_pos.view(np.int8).astype(np.intp),
            problem.pred_pos.view(np.int8).astype(np.intp),
            problem.noise,
            estimand=estimand,
            nominal=nominal,
            pos_index=1,
            zero_division=zero_division,
            weight=problem.weight,
        )
    pred_pos, n_pred_pos = problem.pred_pos, problem.n_pred_pos
    noise = problem.noise.take(pred_pos)  # only the predicted positives count
    q_pos = noise.q
    if np.any(np.asarray(q_pos) == 0.5):
        raise ValueError(
            "estimand='truth' needs q != 0.5 for every predicted positive: at "
            "q = 0.5 the observed label carries no information about the true one."
        )
    score = (metric, zero_division, 0.0, nominal, problem.n_samples, "exact")
    if n_pred_pos == 0:
        return NoisyScore(*score, "truth")
    shrink = 1.0 - 2.0 * np.asarray(q_pos, dtype=np.float64)
    observed = problem.true_pos[pred_pos]
    estimate = np.sum((observed - q_pos) / shrink) / n_pred_pos
    keep_variance, _ = noise.keep_flip_variance()
    variance = np.sum(keep_variance / shrink**2)
    if noise.is_constant:
        variance = variance * n_pred_pos
    variance /= float(n_pred_pos) ** 2
    # the terms' third cumulants q(1 − q)(1 − 2c)/(1 − 2q)³, c estimated by o
    third = np.sum(keep_variance * (1.0 - 2.0 * observed) / shrink**3)
    pivot = None
    if variance > 0.0:  # Cov(u_i, its third cumulant's estimate) = −2 V_i²
        pivot = cornish_fisher_pivot(float(third) / n_pred_pos**3 / variance**1.5, 0.0)
        fourth = np.sum(np.broadcast_to(keep_variance**2 / shrink**4, observed.shape))
        pivot = widen(pivot, -2.0 * fourth / (variance * n_pred_pos**2) ** 2)
    return NoisyScore(
        metric, estimate, variance, *score[3:], "truth", label_pivot=pivot
    )
