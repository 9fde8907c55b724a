"""The ROC AUC (:ref:`roc_auc`) and the vertically averaged ROC curve of the
display (:ref:`roc_curve_display`) when binary labels flip.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from sklearn.metrics import roc_auc_score

from .._noisy_score import NoisyScore, _check_choice
from ..utils._arrays import (
    as_float_array,
    check_finite,
    check_same_length,
    check_sample_weight,
)
from ..utils._labels import as_label_array
from ..utils._noise import FlipNoise
from ..utils._validation import check_estimand, supports_estimands
from ..utils._warnings import warn
from ._definitions.probabilistic import ROC_AUC
from ._engines.counts.multiclass import is_identity
from ._engines.counts.multilabel import _indicator, _positive_probability
from ._engines.monte_carlo import monte_carlo_score
from ._engines.roc_auc import (
    EXACT_BUDGET,
    auc_moments_delta,
    auc_moments_exact,
    auc_sampling_terms,
    auc_truth_pivot,
    centered_ranks,
    tie_groups,
)
from ._engines.test_set_sampling import with_test_set_sampling

__all__ = ["NoisyRocCurve", "expected_roc_auc_score", "noisy_roc_curve"]

_METHODS = ("auto", "exact", "delta")
#: Above this probability that one class is missing, the moments warn.
_UNDEFINED_WARNING = 1e-3
#: Label (or grid) entries per batch of redraws (bounds the memory of a batch).
_BATCH_ELEMENTS = 1_000_000
#: Redraws with a single class are discarded; give up after this many times
#: ``n_draws`` attempts.
_MAX_ATTEMPTS = 100


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
    check_same_length(y_true, scores, "y_score")
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
    ones = np.ones(positive.size, dtype=np.intp)
    t0, t1 = (noise.probability(true, ones, slice(None)) for true in (ones - 1, ones))
    return t0, t1, noise


def _forward(problems: list, method: str) -> tuple[np.ndarray, np.ndarray, str]:
    """Means and variances of binary problems ``(p, scores)``; one warning for all."""
    moments, used = [], set()
    budget = EXACT_BUDGET if method == "auto" else np.inf
    for p, scores in problems:
        exact = None if method == "delta" else auc_moments_exact(p, scores, budget)
        moments.append(auc_moments_delta(p, scores) if exact is None else exact)
        used.add("delta" if exact is None else "exact")
    mean, variance, p_defined = np.array(moments).T
    if np.any(p_defined <= 0.0):
        raise ValueError(
            "Every draw of the labels has a single class: the ROC AUC is undefined."
        )
    missing = 1.0 - p_defined.min()
    if missing > _UNDEFINED_WARNING:
        warn(
            f"With this label noise one class is missing in {missing:.3g} of the "
            "draws, where the ROC AUC is undefined; the expectation and variance "
            "are conditional on both classes being present.",
            UserWarning,
        )
    return mean, variance, "delta" if "delta" in used else "exact"


def _exact(
    nominal: Any, n_samples: int, estimand: str = "forward"
) -> NoisyScore | list[NoisyScore]:
    """The score(s) scikit-learn gives, without noise."""
    if np.ndim(nominal):
        return [_exact(value, n_samples) for value in nominal]  # type: ignore[misc]
    return NoisyScore(ROC_AUC, nominal, 0.0, nominal, n_samples, "exact", estimand)


def _monte_carlo(
    value: Callable[[np.ndarray], Any],
    y: np.ndarray,
    noise: dict,
    n_samples: int,
    n_outputs: int | None,
    mc: dict,
) -> NoisyScore | list[NoisyScore]:
    """scikit-learn's AUC ``value(y_draw)`` over redrawn labels ``y``, seeded."""

    def run(output: int | None) -> NoisyScore:
        def metric(y_draw: np.ndarray, _: Any) -> float:
            result = value(y_draw)
            return result if output is None else result[output]

        score = monte_carlo_score(metric, y, y, **noise, **mc)
        return dataclasses.replace(score, metric=ROC_AUC, n_samples=n_samples)

    return run(None) if n_outputs is None else [run(o) for o in range(n_outputs)]


def _flipped(
    truth: np.ndarray, pi: np.ndarray, scores: np.ndarray, nominal: Any,
    options: dict, method: str, mc: dict,
) -> NoisyScore | list[NoisyScore]:  # fmt: skip
    """The AUC of fixed ``scores`` (a column per binary problem) when the 0/1
    ``truth`` of their shape is observed positive with probabilities ``pi``."""
    n_samples, shape, average = truth.shape[0], scores.shape, options["average"]
    truth, pi, scores = (a.reshape(n_samples, -1) for a in (truth, pi, scores))
    keep, weight = _weights(options["sample_weight"], n_samples)
    if (
        _partial(options["max_fpr"])
        or average == "weighted"
        or (weight is not None and average != "samples")
    ):

        def value(y_draw: np.ndarray) -> Any:
            y_draw, y_score = y_draw.reshape(shape), scores.reshape(shape)
            return roc_auc_score(y_draw, y_score, **options)

        noise = {"q": np.where(truth, 1.0 - pi, pi).ravel(), "labels": [0, 1]}
        outputs = None if average is not None else truth.shape[1]
        y = truth.ravel().astype(np.int64)
        return _monte_carlo(value, y, noise, n_samples, outputs, mc)
    pi, scores = pi[keep], scores[keep]
    if average == "micro":
        problems, w = [(pi.ravel(), scores.ravel())], np.ones(1)
    elif average == "samples":
        problems = list(zip(pi, scores, strict=True))
        w = np.ones(len(problems)) if weight is None else weight
    else:
        problems, w = list(zip(pi.T, scores.T, strict=True)), np.ones(pi.shape[1])
    mean, variance, used = _forward(problems, method)
    if average is None:
        return [
            NoisyScore(ROC_AUC, m, v, n, n_samples, used)
            for m, v, n in zip(mean, variance, nominal, strict=True)
        ]
    expected = float(w @ mean) / w.sum()
    return NoisyScore(
        ROC_AUC, expected, (w * w) @ variance / w.sum() ** 2, nominal, n_samples, used
    )


def _multiclass(
    y_true: Any, y_score: Any, q: Any, transition_matrix: Any, options: dict, mc: dict
) -> NoisyScore | list[NoisyScore]:
    """Multiclass targets (one-vs-rest or one-vs-one): Monte Carlo under noise."""
    nominal = roc_auc_score(y_true, y_score, **options)
    y = as_label_array(y_true, name="y_true")
    labels = options["labels"]
    classes = np.unique(y) if labels is None else np.asarray(labels)
    noise = FlipNoise.from_params(
        q, transition_matrix, n_samples=y.size, n_classes=classes.size
    )
    if is_identity(noise):
        return _exact(nominal, y.size)
    fixed = {**options, "labels": classes}
    flips = {"q": q, "transition_matrix": transition_matrix, "labels": classes}
    outputs = None if np.ndim(nominal) == 0 else classes.size
    return _monte_carlo(
        lambda y_draw: roc_auc_score(y_draw, y_score, **fixed),
        y,
        flips,
        y.size,
        outputs,
        mc,
    )


def _weights(sample_weight: Any, n_samples: int) -> tuple[Any, np.ndarray | None]:
    """The samples of non-zero weight, and their weights (None when all equal)."""
    weight = check_sample_weight(sample_weight, n_samples)
    if weight is None:
        return slice(None), None
    keep = weight > 0
    return keep, weight[keep] if np.ptp(weight[keep]) > 0 else None


def _partial(max_fpr: Any) -> bool:
    return max_fpr is not None and max_fpr != 1


def _kind(y_true: Any, y_score: Any) -> str:
    """``"binary"``, ``"multiclass"`` or ``"multilabel"`` as scikit-learn reads them."""
    if np.ndim(y_true) == 2 and np.shape(y_true)[1] > 1:
        return "multilabel"
    if np.ndim(y_score) == 2 and np.shape(y_score)[1] > 1:
        columns = np.shape(y_score)[1]
        if columns > 2 or np.unique(as_label_array(y_true, name="y_true")).size > 2:
            return "multiclass"
    return "binary"


def _truth(
    positive: np.ndarray, scores: np.ndarray, t0: np.ndarray, t1: np.ndarray
) -> tuple[float, float, tuple[float, ...] | None]:
    """De-noised AUC ``Û / D̂``, its delta variance and its label-noise pivot
    (user guide: truth estimate)."""
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
        return float("nan"), float("nan"), None
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
    pivot = auc_truth_pivot(u, gradient, estimate, pairs, t0, t1, variance)
    return estimate, variance, pivot


def _sampling_terms(arguments: dict[str, Any], score: Any) -> tuple | None:
    """DeLong's terms of a binary AUC with equal weights (else None: bootstrap)."""
    y_true, y_score = arguments["y_true"], arguments["y_score"]
    if (
        isinstance(score, list)
        or _kind(y_true, y_score) != "binary"
        or _partial(arguments.get("max_fpr"))
    ):
        return None
    positive, scores, _ = _check_inputs(y_true, y_score, arguments.get("labels"))
    t0, t1, _ = _flip_law(
        positive, arguments.get("q"), arguments.get("transition_matrix")
    )
    keep, weight = _weights(arguments.get("sample_weight"), positive.size)
    if weight is not None:
        return None
    positive, t0, t1 = positive[keep], t0[keep], t1[keep]
    truth = score.estimand == "truth"
    u = (positive - t0) / (t1 - t0) if truth else np.where(positive, t1, t0)
    return auc_sampling_terms(u, scores[keep]), None, 1.0


@with_test_set_sampling(_sampling_terms, method="delta")
@supports_estimands("forward", "truth")
def expected_roc_auc_score(
    y_true: Any,
    y_score: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    average: str | None = "macro",
    sample_weight: Any = None,
    max_fpr: float | None = None,
    multi_class: str = "raise",
    labels: Any = None,
    method: str = "auto",
    estimand: str = "auto",
    n_draws: int = 1000,
    random_state: Any = 0,
) -> NoisyScore | list[NoisyScore]:
    """Expected ROC AUC, and its variance, when labels flip.

    The scores are held fixed; the moments are conditional on both classes
    being present. Read more in the :ref:`User Guide <roc_auc>`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, n_labels)
        The reference labels (``estimand="forward"``) or the observed noisy
        labels (``"truth"``), or a multilabel indicator matrix.
    y_score : array-like of shape (n_samples,) or (n_samples, n_classes)
        Scores, as in :func:`sklearn.metrics.roc_auc_score`.
    q : float or array-like of shape (n_samples,), default=None
        Probability that each observed label is another class (indicator: a
        scalar, one per sample or one per entry). Exactly one of ``q`` and
        ``transition_matrix`` is required.
    transition_matrix : array-like of shape (n_classes, n_classes), default=None
        ``T[j, k]``: probability that class ``labels[j]`` is observed as
        ``labels[k]`` (2 × 2 for each entry of an indicator).
    average, sample_weight, max_fpr, multi_class
        As in :func:`sklearn.metrics.roc_auc_score`; ``average=None`` returns a
        list.
    labels : array-like, default=None
        Binary: the classes ``[negative, positive]`` (needed when ``y_true``
        holds one class). Multiclass: as in scikit-learn.
    method : {"auto", "exact", "delta"}, default="auto"
        Exact conditional moments, or a delta expansion in the number of
        positives; ``"auto"`` is exact up to 5·10⁶ terms. Truth uses delta.
    estimand : {"auto", "truth", "forward"}, default="auto"
        ``"truth"`` (``"auto"``; binary only): the AUC against the unknown
        true classes; ``"forward"``: over flips of exact ``y_true``
        (:ref:`estimands`).
    n_draws : int, default=1000
        Label draws of the Monte Carlo cases.
    random_state : int, numpy Generator or None, default=0
        Seed of the Monte Carlo cases.

    Returns
    -------
    NoisyScore or list of NoisyScore
        ``nominal`` is scikit-learn's ROC AUC of ``y_true`` (NaN when binary
        ``y_true`` holds one class).

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_roc_auc_score
    >>> y = [0, 0, 1, 1, 0, 1, 0, 1, 1, 0]
    >>> score = [0.1, 0.4, 0.35, 0.8, 0.2, 0.7, 0.3, 0.6, 0.9, 0.5]
    >>> result = expected_roc_auc_score(y, score, q=0.1, estimand="forward")
    >>> round(result.nominal, 4), round(result.expected, 4), round(result.std, 4)
    (0.92, 0.847, 0.1083)
    """
    _check_choice("method", method, _METHODS)
    estimand = check_estimand(
        estimand, metric=ROC_AUC, supported=expected_roc_auc_score.estimands
    )
    options = {
        "average": average,
        "sample_weight": sample_weight,
        "max_fpr": max_fpr,
        "multi_class": multi_class,
        "labels": labels,
    }
    mc = {"n_draws": n_draws, "random_state": random_state}
    kind = _kind(y_true, y_score)
    if estimand == "truth" and kind != "binary":
        raise ValueError(
            "estimand='truth' (the default, 'auto') is supported for binary labels "
            "only; pass estimand='forward' if y_true is exact."
        )
    if kind == "multiclass":
        return _multiclass(y_true, y_score, q, transition_matrix, options, mc)
    if kind == "multilabel":
        nominal = roc_auc_score(y_true, y_score, **options)
        truth = _indicator(y_true, "y_true")
        pi = _positive_probability(truth, q, transition_matrix)
        scores = as_float_array(y_score, name="y_score")
        if np.array_equal(pi, truth):
            return _exact(nominal, truth.shape[0])
        return _flipped(truth, pi, scores, nominal, options, method, mc)
    positive, scores, _ = _check_inputs(y_true, y_score, labels)
    t0, t1, noise = _flip_law(positive, q, transition_matrix)
    n_samples = positive.size
    keep, weight = _weights(sample_weight, n_samples)
    options["labels"] = None
    nominal = float("nan")
    if positive.any() and not positive.all():
        nominal = float(roc_auc_score(positive, scores, **options))
    if not (np.any(t0 > 0.0) or np.any(t1 < 1.0)):
        if np.isnan(nominal):
            raise ValueError(
                "Only one class present in y_true. ROC AUC score is not defined "
                "in that case."
            )
        return _exact(nominal, n_samples, estimand)
    if estimand == "forward":
        options["average"] = "macro"
        pi = np.where(positive, t1, t0)
        return _flipped(positive, pi, scores, nominal, options, method, mc)
    if _partial(max_fpr) or weight is not None:
        raise ValueError(
            "estimand='truth' is supported without max_fpr and with equal "
            "sample weights only."
        )
    noise.check_invertible()
    expected, variance, pivot = _truth(positive[keep], scores[keep], t0[keep], t1[keep])
    return NoisyScore(
        ROC_AUC, expected, variance, nominal, n_samples, "delta", "truth",
        label_pivot=pivot,
    )  # fmt: skip


class NoisyRocCurve(NamedTuple):
    """The vertically averaged ROC curve of the redrawn labels on a grid."""

    fpr_grid: np.ndarray
    tpr_expected: np.ndarray
    tpr_std: np.ndarray
    tpr_low: np.ndarray
    tpr_high: np.ndarray
    method: str


def _tpr_on_grid(labels: np.ndarray, ends: np.ndarray, n_grid: int) -> np.ndarray:
    """TPR of each draw's curve at ``FPR = j / (n_grid - 1)``, in integers (the
    highest TPR of a vertical step); ``labels`` (a row per draw) by decreasing
    score, ``ends`` one past each group of tied scores."""
    counts = np.cumsum(labels, axis=1, dtype=np.int64)[:, ends - 1]
    tp = np.concatenate([np.zeros((labels.shape[0], 1), np.int64), counts], axis=1)
    fp = np.concatenate([[0], ends]).astype(np.int64)[None, :] - tp
    n_rows, n_points = tp.shape
    steps = n_grid - 1
    negatives = fp[:, -1]
    positives = tp[:, -1]
    stride = int(fp[0, -1] + tp[0, -1]) * steps + 1
    offset = np.arange(n_rows, dtype=np.int64)[:, None] * stride
    keys = (fp * steps + offset).ravel()
    target = np.arange(n_grid, dtype=np.int64)[None, :] * negatives[:, None]
    index = np.searchsorted(keys, (target + offset).ravel(), side="right")
    index = index.reshape(n_rows, n_grid) - 1 - np.arange(n_rows)[:, None] * n_points
    after = np.minimum(index + 1, n_points - 1)
    rows = np.arange(n_rows)[:, None]
    fp_at, fp_next = fp[rows, index], fp[rows, after]
    tp_at, tp_next = tp[rows, index], tp[rows, after]
    width = (fp_next - fp_at) * steps
    rise = np.zeros(target.shape)
    moving = width > 0
    rise[moving] = (target - fp_at * steps)[moving] / width[moving]
    return (tp_at + rise * (tp_next - tp_at)) / positives[:, None]


def _summary(
    values: np.ndarray, n_grid: int, level: float, method: str
) -> NoisyRocCurve:
    grid = np.arange(n_grid) / (n_grid - 1)
    expected = values.mean(axis=0)
    std = values.std(axis=0, ddof=1) if values.shape[0] > 1 else np.zeros(n_grid)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail], axis=0)
    return NoisyRocCurve(grid, expected, std, low, high, method)


def noisy_roc_curve(
    positive: np.ndarray,
    scores: np.ndarray,
    q: Any,
    transition_matrix: Any,
    n_draws: int,
    n_grid: int,
    confidence_level: float,
    rng: np.random.Generator,
) -> NoisyRocCurve:
    """The vertically averaged ROC curve of the flipped labels and its band."""
    order = np.argsort(-scores, kind="stable")
    ranked = scores[order]
    ends = np.append(np.flatnonzero(ranked[1:] != ranked[:-1]) + 1, ranked.size)
    index = positive[order].astype(np.intp)
    t0, t1, noise = _flip_law(positive, q, transition_matrix)
    if not (np.any(t0 > 0.0) or np.any(t1 < 1.0)):
        values = _tpr_on_grid(index[None, :], ends, n_grid)
        return _summary(values, n_grid, confidence_level, "exact")
    sampler = noise.take(order).sampler(index, np.array([0, 1]))
    batch = max(1, min(n_draws, _BATCH_ELEMENTS // max(positive.size, n_grid)))
    kept: list[np.ndarray] = []
    found, attempts = 0, 0
    while found < n_draws:
        if attempts >= _MAX_ATTEMPTS * n_draws:
            raise ValueError(
                f"Only {found} of {attempts} redraws of the labels hold both "
                f"classes: n_draws={n_draws} curves cannot be drawn."
            )
        labels = sampler.draw(rng, batch)
        attempts += batch
        n_positive = labels.sum(axis=1)
        labels = labels[(n_positive > 0) & (n_positive < positive.size)]
        labels = labels[: n_draws - found]
        found += labels.shape[0]
        if labels.shape[0]:
            kept.append(_tpr_on_grid(labels, ends, n_grid))
    return _summary(np.concatenate(kept), n_grid, confidence_level, "monte_carlo")
