"""Multiclass averages of specificity and the negative predictive value.

Class ``k`` against the rest has the counts ``TP_k, FP_k, FN_k, TN_k`` of
:func:`sklearn.metrics.multilabel_confusion_matrix`; specificity is the
recall of "not ``k``", the negative predictive value its precision. Which
forward results are exact and which Monte Carlo: user guide :ref:`rates`;
``"truth"`` and ``"remeasurement"`` go through the confusion matrix
(:mod:`~sklearn_noisy.metrics._engines.counts.estimands`) with the
gradients of the definitions.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any

import numpy as np
from sklearn.metrics import multilabel_confusion_matrix

from ...._noisy_score import NoisyScore
from ....utils._arrays import check_sample_weight, chunks
from ....utils._labels import encode_labels
from ....utils._noise import FlipNoise
from ..._definitions.counts import COUNT_METRICS, nanaverage
from .binary_moments import CountLaws, exact_moments
from .confusion_draws import confusion_counts
from .estimands import (
    denoised_confusion,
    observed_confusion,
    second_order_bias,
    truth_metric,
)
from .multiclass import (
    NEGLIGIBLE,
    _class_set,
    _mc_variance,
    _monte_carlo,
    _per_class,
    _Problem,
    is_identity,
)

__all__ = ["multiclass_rate_score", "rate_nominal"]


def rate_of_counts(
    metric: str, tn: Any, fp: Any, fn: Any, support: Any, *, average: Any, zero: float
) -> Any:
    """The rate from one-vs-rest counts, with scikit-learn's arithmetic.

    ``tn``, ``fp``, ``fn`` and ``support`` (the true count of each class) as
    in :func:`sklearn.metrics.multilabel_confusion_matrix`, along the last
    axis; ``average`` as in scikit-learn (``None``: one value per class). The
    rate is its definition's ratio of the negative class: ``TN`` over the true
    negatives (specificity) or the predicted ones (NPV).
    """
    tn, fp, fn = (np.asarray(a) for a in (tn, fp, fn))
    if average == "micro":
        tn, fp, fn = (a.sum(-1, keepdims=True) for a in (tn, fp, fn))
    values = COUNT_METRICS[metric].ratio.of_sums(tn, tn + fp, tn + fn, zero)
    if average is None:
        return values
    mean = nanaverage(values, np.asarray(support) if average == "weighted" else None)
    return float(mean) if np.ndim(mean) == 0 else mean  # one matrix: a float


def rate_nominal(
    metric: str, y_true: Any, y_pred: Any, *, labels: Any, average: Any,
    sample_weight: Any, zero: float,
) -> Any:  # fmt: skip
    """The rate of ``y_true`` from scikit-learn's multilabel confusion matrix."""
    counts = multilabel_confusion_matrix(
        y_true, y_pred, sample_weight=sample_weight, labels=labels
    )
    tn, fp, fn, tp = (counts[:, i // 2, i % 2] for i in range(4))
    return rate_of_counts(metric, tn, fp, fn, fn + tp, average=average, zero=zero)


# ------------------------------------------------------- forward moments
def _reflect(law: tuple[int, np.ndarray], total: int) -> tuple[int, np.ndarray]:
    """The window of ``total − X`` from that of ``X``."""
    offset, pmf = law
    return total - (offset + pmf.size - 1), pmf[::-1]


def _negative_laws(law: CountLaws) -> CountLaws:
    """The laws of ``(TN_k, FP_k)`` from those of ``(TP_k, FN_k)`` of class ``k``.

    ``TN_k = n_N − FN_k`` and ``FP_k = n_P − TP_k``: the recall of this law is
    the specificity of class ``k``, its precision the negative predictive value.
    """
    n_neg = law.n_samples - law.n_pred_pos
    offset, pmf = law.fn
    mean_fn = float((offset + np.arange(pmf.size)) @ pmf)
    return CountLaws(
        _reflect(law.fn, n_neg),
        _reflect(law.tp, law.n_pred_pos),
        n_neg - mean_fn,
        n_neg,
        law.n_samples,
    )


def _micro(problem: _Problem) -> tuple[float, float]:
    """``Σ_k TN_k / ((K − 1) W) = ((K − 2) W + Σ w [correct]) / ((K − 1) W)``."""
    mean, square, total = problem.correct_probability_sums()
    scale = (problem.n_classes - 1) * total
    return ((problem.n_classes - 2) * total + mean) / scale, square / scale**2


def _specificity(
    problem: _Problem, options: dict, nominal: Any, mc: dict
) -> NoisyScore | list[NoisyScore]:
    """Unweighted specificity: exact per class, exact expectations of averages."""
    average, zero = options["average"], options["zero_division"]
    index = options["label_index"]
    index = np.arange(problem.n_classes) if index is None else index
    laws = [_negative_laws(problem.class_laws(k)) for k in index]
    undefined = np.array([law.probability_observed(0) for law in laws])
    if math.isnan(zero) and np.any(
        (undefined > NEGLIGIBLE)
        & ((undefined < 1.0 - NEGLIGIBLE) | (average == "weighted"))
    ):
        return _monte_carlo("specificity", problem, options, nominal, mc)
    moments = np.array(
        [exact_moments(("recall",), law, zero_division=zero)["recall"] for law in laws]
    )
    m = problem.n_samples
    if average is None:
        return _per_class("specificity", *moments.T, nominal, m, "exact")
    if average == "weighted":  # (S_k/M) f_k = f_k − ((M − S_k)/M) f_k
        rest = [
            exact_moments(("recall",), law, zero_division=zero, support_weighted=True)
            for law in laws
        ]
        expected = float(np.sum(moments[:, 0] - [r["recall"][0] for r in rest]))
    else:
        defined = ~np.isnan(moments[:, 0])
        if not defined.any():
            return NoisyScore("specificity", math.nan, math.nan, nominal, m, "exact")
        expected = float(moments[defined, 0].mean())
    variance = _mc_variance("specificity", problem, options, mc)
    return NoisyScore("specificity", expected, variance, nominal, m, "monte_carlo")


def _npv_sums(problem: _Problem) -> dict:
    """Per class: the fixed denominators and the first moments of ``TN_k``, ``S_k``.

    ``n[k] = Σ_{ŷ_i ≠ k} w_i``, ``tn[k] = E[TN_k]``, ``var[k] = Var[TN_k] =
    −Cov(S_k, TN_k)`` and ``support[k] = E[S_k]``.
    """
    k = problem.n_classes
    sums = {key: np.zeros(k) for key in ("n", "tn", "var", "support")}
    for rows in chunks(problem.n_samples):
        true, pred = problem.encoded.indices(rows)
        p = problem.noise.observation_rows(true, rows)
        w = np.ones(true.shape[0]) if problem.weight is None else problem.weight[rows]
        other = (pred[:, None] != np.arange(k)) * w[:, None]
        sums["n"] += other.sum(axis=0)
        sums["tn"] += ((1.0 - p) * other).sum(axis=0)
        sums["var"] += (p * (1.0 - p) * other * w[:, None]).sum(axis=0)
        sums["support"] += w @ p
    return sums


def _npv_macro_variance(
    problem: _Problem, n: np.ndarray, averaged: np.ndarray
) -> float:
    """Exact: sample ``i`` adds ``−w_i [o ≠ ŷ_i, o averaged] / n_o`` (``o`` its label).

    The rest of its term is fixed; ``averaged`` marks the classes averaged
    (those of ``labels`` that are not NaN), and the result is divided by their
    number². A class with ``n_o = 0`` is the constant ``zero_division``.
    """
    varying = averaged & (n > 0)
    a = np.where(varying, 1.0 / np.where(varying, n, 1.0), 0.0)
    total = 0.0
    for rows in chunks(problem.n_samples):
        true, pred = problem.encoded.indices(rows)
        p = problem.noise.observation_rows(true, rows)
        w = np.ones(true.shape[0]) if problem.weight is None else problem.weight[rows]
        values = np.broadcast_to(a, p.shape).copy()
        values[np.arange(pred.shape[0]), pred] = 0.0
        mean = np.einsum("ik,ik->i", p, values)
        second = np.einsum("ik,ik->i", p, values * values)
        total += float((w * w) @ np.maximum(second - mean * mean, 0.0))
    return total / averaged.sum() ** 2


def _npv(
    problem: _Problem, options: dict, nominal: Any, mc: dict
) -> NoisyScore | list[NoisyScore]:
    """The negative predictive value: fixed denominators, exact but the weighted Var."""
    average, zero = options["average"], options["zero_division"]
    sums = _npv_sums(problem)
    n = sums["n"]
    defined = n > 0
    safe = np.where(defined, n, 1.0)
    expected_k = np.where(defined, sums["tn"] / safe, zero)
    variance_k = np.where(defined, sums["var"] / safe**2, 0.0)
    index = options["label_index"]
    index = np.arange(problem.n_classes) if index is None else index
    m, name = problem.n_samples, "negative_predictive_value"
    if average is None:
        return _per_class(
            name, expected_k[index], variance_k[index], nominal, m, "exact"
        )
    chosen = np.zeros(problem.n_classes, dtype=bool)
    chosen[index] = True
    if average == "macro":
        averaged = chosen & ~np.isnan(expected_k)
        if not averaged.any():
            return NoisyScore(name, math.nan, math.nan, nominal, m, "exact")
        variance = _npv_macro_variance(problem, n, averaged)
        return NoisyScore(
            name, expected_k[averaged].mean(), variance, nominal, m, "exact"
        )
    if math.isnan(zero) and not defined.all():  # random weights of defined classes
        return _monte_carlo(name, problem, options, nominal, mc)
    # E[S_k TN_k] = E[S_k] E[TN_k] + Cov(S_k, TN_k), Cov = −var[k]
    total = float(np.sum(sums["support"]))
    joint = sums["support"] * sums["tn"] - sums["var"]
    terms = np.where(defined, joint / safe, sums["support"] * zero) / total
    variance = _mc_variance(name, problem, options, mc)
    return NoisyScore(name, float(terms.sum()), variance, nominal, m, "monte_carlo")


def _forward(metric: str, problem: _Problem, options: dict, nominal: Any, mc: dict):
    average, subset = options["average"], options["label_index"] is not None
    if average == "micro" and not subset:
        expected, variance = _micro(problem)
        return NoisyScore(
            metric, expected, variance, nominal, problem.n_samples, "exact"
        )
    if subset and average in ("micro", "weighted"):  # random sums of some classes
        return _monte_carlo(metric, problem, options, nominal, mc)
    if COUNT_METRICS[metric].fixed_denominator:  # NPV: over predicted negatives
        return _npv(problem, options, nominal, mc)
    if problem.weight is not None:  # counts that are not integers
        return _monte_carlo(metric, problem, options, nominal, mc)
    return _specificity(problem, options, nominal, mc)


# ------------------------------------------------ truth and remeasurement
def _estimand(
    metric: str, encoded: Any, noise: FlipNoise, weight: Any, options: dict,
    nominal: Any, estimand: str,
) -> NoisyScore:  # fmt: skip
    """The truth or remeasurement estimate, through the confusion matrix."""
    average = options["average"]
    if average is None or options["label_index"] is not None:
        raise ValueError(
            f"estimand={estimand!r} needs one average over every class: choose "
            "average='micro', 'macro' or 'weighted' and pass every class in "
            "labels (average=None and a subset of labels are available for "
            "estimand='forward' only)."
        )
    true, pred = encoded.indices(slice(None))
    observed = np.asarray(true, dtype=np.intp)
    pred = np.asarray(pred, dtype=np.intp)
    rate = partial(
        COUNT_METRICS[metric].gradient,
        average=average,
        zero_division=options["zero_division"],
    )
    # Linear in C with fixed denominators: the micro averages, the macro NPV.
    linear = COUNT_METRICS[metric].is_linear(average)
    if estimand == "truth":
        confusion = denoised_confusion(observed, pred, noise, weight)
        expected, variance = truth_metric(rate, confusion)
        if not linear:
            expected -= second_order_bias(rate, confusion)
    else:
        confusion = observed_confusion(observed, pred, noise, weight)
        _, variance = truth_metric(rate, confusion)
        expected = nominal
    method = "exact" if linear else "delta"
    m = observed.shape[0]
    return NoisyScore(
        metric, expected, max(variance, 0.0), nominal, m, method, estimand
    )


# ------------------------------------------------------------ entry point
def multiclass_rate_score(
    metric: str, y_true: Any, y_pred: Any, options: dict, zero: float
) -> NoisyScore | list[NoisyScore]:
    """Specificity or NPV with ``average`` None, micro, macro or weighted.

    ``options``: the public function's, checked but the labels, the flip model
    and the weights; ``zero`` is ``zero_division`` as a number.
    """
    q, transition_matrix = options["q"], options["transition_matrix"]
    labels, average = options["labels"], options["average"]
    sample_weight, estimand = options["sample_weight"], options["estimand"]
    classes, label_index = _class_set(
        "recall", y_true, y_pred, labels, transition_matrix
    )
    encoded = encode_labels(y_true, y_pred, classes)
    m, k = encoded.n_samples, encoded.n_classes
    noise = FlipNoise.from_params(q, transition_matrix, n_samples=m, n_classes=k)
    weight = check_sample_weight(sample_weight, m)
    cells = confusion_counts(encoded.indices, m, k)
    if sample_weight is None:  # integer counts: exact from the confusion matrix
        nominal = COUNT_METRICS[metric].value(
            cells, average=average, zero_division=zero, label_index=label_index
        )
    else:
        nominal = rate_nominal(
            metric, y_true, y_pred, labels=labels, average=average,
            sample_weight=sample_weight, zero=zero,
        )  # fmt: skip
    nominal = list(np.asarray(nominal, float)) if average is None else float(nominal)
    engine = {"average": average, "zero_division": zero, "label_index": label_index}
    if is_identity(noise) and estimand == "forward":
        if average is None:
            zeros = [0.0] * len(nominal)
            return _per_class(metric, nominal, zeros, nominal, m, "exact")
        return NoisyScore(metric, nominal, 0.0, nominal, m, "exact")
    noise.require_two_classes(encoded.classes)
    if weight is not None and weight.min() == weight.max():
        weight = None  # equal weights: every rate is a ratio of counts
    if estimand != "forward":
        return _estimand(metric, encoded, noise, weight, engine, nominal, estimand)
    problem = _Problem(encoded, noise, weight, cells)
    mc = {"n_draws": options["n_draws"], "random_state": options["random_state"]}
    return _forward(metric, problem, engine, nominal, mc)
