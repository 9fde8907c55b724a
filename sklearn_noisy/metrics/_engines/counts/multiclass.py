"""Multiclass labels: exact per-class laws and averages, Monte Carlo variances
(user guide: :ref:`formula_multiclass`, :ref:`rates`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from sklearn.metrics import confusion_matrix, multilabel_confusion_matrix
from sklearn.utils.multiclass import unique_labels

from ...._noisy_score import NoisyScore
from ....utils._arrays import chunks
from ....utils._labels import EncodedLabels, encode_labels, encode_labels_subset
from ....utils._noise import FlipNoise
from ..._definitions.counts import (
    COUNT_METRICS,
    CountMetric,
    average_ratio,
    mirror,
    sklearn_from_confusion,
)
from .binary_moments import CountLaws, exact_moments
from .checks import varying_weight
from .confusion_draws import confusion_counts, draw_confusions, draw_moments
from .estimands import count_estimand_score
from .poisson_binomial import poisson_binomial_groups, poisson_binomial_stream

#: Events less likely than this are ignored: the metrics are bounded by 1 in
#: absolute value, so the expectation moves by less than its round-off.
NEGLIGIBLE = 1e-18

#: Samples per piece of the streamed Poisson-binomial laws (2 MB of floats).
_STREAM = 1 << 18


def sklearn_value(
    definition: CountMetric, y_true: Any, y_pred: Any, *, sample_weight: Any = None,
    **options: Any,
) -> Any:  # fmt: skip
    """scikit-learn's metric of the labels without its warnings ("warn" is 0;
    unaveraged metrics: the definition's value of its confusion matrix);
    ``options`` may hold others than its own."""
    kwargs = definition.sklearn_options(**options)
    with np.errstate(all="ignore"):
        if not definition.averaged:
            labels = kwargs.pop("labels", None)  # where it takes them (kappa)
            if unique_labels(y_true, y_pred).shape[0] == 1:
                total = len(y_true) if sample_weight is None else np.sum(sample_weight)
                confusion = np.array([[total]])  # its (1, 1) matrix warns
            else:
                confusion = confusion_matrix(
                    y_true, y_pred, labels=labels, sample_weight=sample_weight
                )
            return definition.value(confusion, **kwargs)
        if isinstance(kwargs.get("zero_division"), str):  # "warn"
            kwargs["zero_division"] = 0.0
        if definition.negative:  # one class against the rest
            counts = multilabel_confusion_matrix(
                y_true, y_pred, sample_weight=sample_weight, labels=kwargs["labels"]
            )
            tn, fp, fn, tp = (counts[:, i // 2, i % 2] for i in range(4))
            return rate_of_counts(
                definition.name, tn, fp, fn, fn + tp, average=kwargs["average"],
                zero=kwargs["zero_division"],
            )  # fmt: skip
        return definition.sklearn_function(
            y_true, y_pred, sample_weight=sample_weight, **kwargs
        )


def rate_of_counts(
    metric: str, tn: Any, fp: Any, fn: Any, support: Any, *, average: Any, zero: float
) -> Any:
    """A rate of one-vs-rest counts (along the last axis), scikit-learn's average."""
    parts = tuple(np.asarray(a) for a in (tn, fp, fn, support))
    values = average_ratio(
        COUNT_METRICS[metric].ratio, parts, negative=True, average=average,
        zero_division=zero,
    )  # fmt: skip
    return float(values) if average is not None and np.ndim(values) == 0 else values


def is_identity(noise: FlipNoise) -> bool:
    """Whether the observed labels are ``y_true`` itself (no flip at all)."""
    if noise.matrix is not None:
        return bool(np.array_equal(noise.matrix, np.eye(noise.n_classes)))
    return bool(np.all(np.asarray(noise.q) == 0.0))


def _reflect(law: tuple[int, np.ndarray], total: int) -> tuple[int, np.ndarray]:
    """The window ``(offset, pmf)`` of ``total − X`` from that of ``X``."""
    offset, pmf = law
    return total - (offset + pmf.size - 1), pmf[::-1]


@dataclass(eq=False)
class _Problem:
    """Encoded labels, the flip model, the weights and ``cells[k, j]``, the
    number of samples of class ``k`` predicted ``j``."""

    encoded: EncodedLabels
    noise: FlipNoise
    weight: Any
    cells: Any

    @property
    def n_samples(self) -> int:
        return self.encoded.n_samples

    @property
    def n_classes(self) -> int:
        return self.encoded.n_classes

    def class_laws(self, k: int, negative: bool = False) -> CountLaws:
        """The laws of ``TP_k`` and ``FN_k`` of class ``k`` against the rest
        (``negative``: of ``TN_k`` and ``FP_k``, those of "not ``k``")."""
        if negative:  # TN_k = n_N − FN_k, FP_k = n_P − TP_k
            law = self.class_laws(k)
            n_neg = law.n_samples - law.n_pred_pos
            offset, pmf = law.fn
            mean_fn = float((offset + np.arange(pmf.size)) @ pmf)
            tn, fp = _reflect(law.fn, n_neg), _reflect(law.tp, law.n_pred_pos)
            return CountLaws(tn, fp, n_neg - mean_fn, n_neg, law.n_samples)
        matrix = self.noise.shared_matrix()
        cells = self.cells
        n_pred = int(cells[:, k].sum())
        if matrix is not None:
            column = matrix[:, k]
            tp = poisson_binomial_groups(column, cells[:, k])
            fn = poisson_binomial_groups(column, cells.sum(axis=1) - cells[:, k])
            mean_tp = float(column @ cells[:, k])
            return CountLaws(tp, fn, mean_tp, n_pred, self.n_samples)
        mean_tp = 0.0

        def pieces() -> Any:
            nonlocal mean_tp
            for start in range(0, self.n_samples, _STREAM):
                rows = slice(start, start + _STREAM)
                true, pred = self.encoded.indices(rows)
                pi = self.noise.probability(true, np.full(true.shape, k), rows)
                predicted = pred == k
                mean_tp += float(pi[predicted].sum())
                yield pi[predicted], pi[~predicted]

        tp, fn = poisson_binomial_stream(pieces())
        return CountLaws(tp, fn, mean_tp, n_pred, self.n_samples)

    def correct_probability_sums(self) -> tuple[float, float, float]:
        """``(Σ w p, Σ w² p (1 - p), Σ w)``, ``p_i = P(observed = ŷ_i)``."""
        totals = np.zeros(3)
        for rows in chunks(self.n_samples):
            true, pred = self.encoded.indices(rows)
            p = self.noise.probability(true, pred, rows)
            w = np.ones(p.shape) if self.weight is None else self.weight[rows]
            totals += [w @ p, (w * w) @ (p * (1.0 - p)), w.sum()]
        return float(totals[0]), float(totals[1]), float(totals[2])


def _per_class(
    metric: str, expected: Any, variance: Any, nominal: Any, m: int, method: str
) -> NoisyScore | list[NoisyScore]:
    """One score per class when ``nominal`` is a list, else one score."""
    if not isinstance(nominal, list):
        return NoisyScore(metric, expected, variance, nominal, m, method)
    return [
        NoisyScore(metric, e, v, n, m, method)
        for e, v, n in zip(expected, variance, nominal, strict=True)
    ]


def _draw(metric: str, problem: _Problem, options: dict, mc: dict) -> tuple:
    """``(E, Var, "monte_carlo")`` from redrawn confusion matrices."""
    confusions = draw_confusions(
        problem.encoded.indices, problem.n_samples, problem.noise,
        weight=problem.weight, n_draws=mc["n_draws"],
        rng=np.random.default_rng(mc["random_state"]),
    )  # fmt: skip
    values = COUNT_METRICS[metric].value(confusions, **options)
    return (*draw_moments(values), "monte_carlo")


def defined_mean(expected_k: Any, variance_k: Any) -> tuple[float, float]:
    """The mean of the classes not NaN, and its variance (independent classes)."""
    e, v = np.asarray(expected_k), np.asarray(variance_k)
    defined = ~np.isnan(e)
    if not defined.any():
        return math.nan, math.nan
    return float(e[defined].mean()), float(v[defined].sum() / defined.sum() ** 2)


def _class_average(metric: str, problem: _Problem, options: dict, mc: dict) -> tuple:
    """Unweighted counts: exact per-class laws, exact expectations."""
    average, zero = options["average"], options["zero_division"]
    index = np.arange(problem.n_classes)
    index = index if options["label_index"] is None else options["label_index"]
    definition = COUNT_METRICS[metric]
    negative = definition.negative  # specificity: the recall of "not k"
    laws = [problem.class_laws(j, negative) for j in index]
    if definition.present_classes:  # the mean recall over the classes present
        absent = np.array([law.probability_observed(0) for law in laws])
        if np.any((absent > NEGLIGIBLE) & (absent < 1.0 - NEGLIGIBLE)):
            return _draw(metric, problem, options, mc)
        keep = [law for law, a in zip(laws, absent, strict=True) if a <= NEGLIGIBLE]
        name = definition.class_metric
        expected = float(
            np.mean([exact_moments((name,), law)[name][0] for law in keep])
        )
        if options["adjusted"]:
            chance = 1.0 / len(keep)
            expected = (
                (expected - chance) / (1.0 - chance) if len(keep) > 1 else math.nan
            )
        return expected, float(_draw(metric, problem, options, mc)[1]), "monte_carlo"
    undefined = np.array(
        [
            definition.ratio.undefined_probability(
                law.n_pred_pos, law.probability_observed(0)
            )
            for law in laws
        ]
    )
    weighted = average == "weighted"
    if math.isnan(zero):
        partial = (undefined > NEGLIGIBLE) & (undefined < 1.0 - NEGLIGIBLE)
        # an undefined class of positive weight makes the weights random (the
        # support of an undefined specificity is every sample)
        weighs = negative or (
            definition.fixed_denominator & (problem.cells.sum(axis=1)[index] > 0)
        )
        random_weight = weighted and np.any((undefined > NEGLIGIBLE) & weighs)
        if partial.any() or random_weight:
            return _draw(metric, problem, options, mc)
    name = mirror(definition, negative=False).name if negative else metric

    def moments(law: CountLaws, support_weighted: bool) -> tuple[float, float]:
        return exact_moments(
            (name,), law, zero_division=zero, support_weighted=support_weighted
        )[name]

    per_class = [moments(law, weighted and not negative) for law in laws]
    expected_k, variance_k = (np.array(v) for v in zip(*per_class, strict=True))
    if weighted:
        if negative:  # (S_k/M) f_k = f_k − ((M − S_k)/M) f_k
            expected_k = expected_k - [moments(law, True)[0] for law in laws]
        expected = float(np.nansum(expected_k))
    elif average is None:
        return expected_k, variance_k, "exact"
    else:  # exact with independent classes (precision)
        expected, variance = defined_mean(expected_k, variance_k)
        if definition.fixed_denominator or math.isnan(expected):
            return expected, variance, "exact"
    return expected, float(_draw(metric, problem, options, mc)[1]), "monte_carlo"


def _fixed_sums(problem: _Problem, negative: bool) -> np.ndarray:
    """Per class ``k``, over the samples predicted ``k`` (``negative``: not
    ``k``): ``Σ w``, ``Σ w P(observed is (not) k)``, ``Σ w² p_k (1 − p_k)``; and
    ``Σ w p_k`` over every sample (``E[S_k]``)."""
    k = problem.n_classes
    sums = np.zeros((4, k))
    for rows in chunks(problem.n_samples):
        true, pred = problem.encoded.indices(rows)
        p = problem.noise.observation_rows(true, rows)
        w = np.ones(true.shape[0]) if problem.weight is None else problem.weight[rows]
        chosen = ((pred[:, None] == np.arange(k)) != negative) * w[:, None]
        sums[0] += chosen.sum(axis=0)
        sums[1] += ((1.0 - p if negative else p) * chosen).sum(axis=0)
        sums[2] += (p * (1.0 - p) * chosen * w[:, None]).sum(axis=0)
        sums[3] += w @ p
    return sums


def _npv_macro_variance(
    problem: _Problem, n: np.ndarray, averaged: np.ndarray
) -> float:
    """Exact: sample ``i`` adds ``−w_i [o ≠ ŷ_i, o averaged] / n_o`` (``o`` its
    label) to the mean of the ``averaged`` classes; ``n_o = 0`` is constant."""
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


def _fixed_denominator(name: str, problem: _Problem, options: dict, mc: dict) -> tuple:
    """Weighted precision and the NPV: fixed denominators, exact but the
    variance of the weighted NPV."""
    negative = COUNT_METRICS[name].negative
    average, zero = options["average"], options["zero_division"]
    n, mean, var, support = _fixed_sums(problem, negative)
    defined = n > 0
    safe = np.where(defined, n, 1.0)
    expected_k = np.where(defined, mean / safe, zero)
    variance_k = np.where(defined, var / safe**2, 0.0)
    index = options["label_index"]
    index = np.arange(problem.n_classes) if index is None else index
    if average is None:
        return expected_k[index], variance_k[index], "exact"
    if average == "macro":
        expected, variance = defined_mean(expected_k[index], variance_k[index])
        if negative and not math.isnan(expected):
            averaged = np.isin(np.arange(problem.n_classes), index)
            averaged &= ~np.isnan(expected_k)
            variance = _npv_macro_variance(problem, n, averaged)
        return expected, variance, "exact"
    if math.isnan(zero) and not defined.all():  # random weights of defined classes
        return _draw(name, problem, options, mc)
    # E[S_k TN_k] = E[S_k] E[TN_k] + Cov(S_k, TN_k), Cov = −var[k]
    joint = support * mean - var
    terms = np.where(defined, joint / safe, support * zero) / float(np.sum(support))
    return (
        float(terms.sum()),
        float(_draw(name, problem, options, mc)[1]),
        "monte_carlo",
    )


def _forward(metric: str, problem: _Problem, options: dict, mc: dict) -> tuple:
    """``(E, Var, method)`` of a multiclass metric, exact where possible."""
    average = options["average"]
    definition = COUNT_METRICS[metric]
    if options["label_index"] is not None and average in ("micro", "weighted"):
        return _draw(metric, problem, options, mc)
    if average in definition.accuracy_averages:  # linear in the accuracy
        mean, square, total = problem.correct_probability_sums()
        # the rates: Σ_k TN_k / ((K − 1) W), Σ_k TN_k = (K − 2) W + Σ w [correct]
        rest = problem.n_classes - 2 if definition.negative else 0
        scale = (rest + 1) * total
        return (rest * total + mean) / scale, square / scale**2, "exact"
    if definition.fixed_denominator and (
        definition.negative or (problem.weight is not None and average != "weighted")
    ):
        return _fixed_denominator(metric, problem, options, mc)
    if problem.weight is None and (definition.averaged or definition.present_classes):
        return _class_average(metric, problem, options, mc)
    return _draw(metric, problem, options, mc)


def multiclass_score(
    definition: CountMetric, y_true: Any, y_pred: Any, options: dict
) -> NoisyScore | list[NoisyScore]:
    """A multiclass average (or per-class scores for ``average=None``);
    ``options``: the public function's, ``zero``: ``zero_division`` as a number."""
    average, zero = options["average"], options["zero"]
    parameters = {n: options[n] for n, _ in definition.parameters}
    if options["method"] == "delta":
        if definition.averaged:
            raise ValueError(
                "method='delta' is available for average='binary' only; with "
                f"average={average!r} the expectation is exact and the variance "
                "exact or Monte Carlo (see the result's method)."
            )
        raise ValueError(
            "method='delta' is available for binary labels only; multiclass "
            f"{definition.name} has an exact expectation where it is an average "
            "of classes, and is Monte Carlo otherwise."
        )
    metric, labels, estimand = definition.name, options["labels"], options["estimand"]
    transition_matrix = options["transition_matrix"]
    sample_weight = options["sample_weight"]
    adjusted = bool(options.get("adjusted", False))
    label_index = None  # the positions of ``labels`` when they leave out classes
    if labels is None or transition_matrix is not None or not definition.averaged:
        encoded = encode_labels(y_true, y_pred, labels)
    else:  # the flips move labels among every class present too
        encoded, shown = encode_labels_subset(y_true, y_pred, labels)
        if shown < encoded.n_classes:
            label_index = np.arange(shown)
    m, k = encoded.n_samples, encoded.n_classes
    noise = FlipNoise.from_params(
        options["q"], transition_matrix, n_samples=m, n_classes=k
    )
    weight = varying_weight(sample_weight, m)
    settings = {
        "average": average,
        "zero_division": zero,
        "adjusted": adjusted,
        "label_index": label_index,
        **parameters,
    }
    cells = confusion_counts(encoded.indices, m, k)
    if sample_weight is None:
        nominal = sklearn_from_confusion(metric, cells, encoded.classes, **settings)
    else:  # weighted sums: scikit-learn's own order of summation
        nominal = sklearn_value(
            definition, y_true, y_pred, sample_weight=sample_weight, labels=labels,
            average=average, adjusted=adjusted, **parameters,
            zero_division=options.get("zero_division", 0.0),
        )  # fmt: skip
    if average is None and definition.averaged:
        nominal = list(np.asarray(nominal, dtype=np.float64))
    else:
        nominal = float(nominal)
    if is_identity(noise) and estimand == "forward":
        zeros = [0.0] * len(nominal) if isinstance(nominal, list) else 0.0
        return _per_class(metric, nominal, zeros, nominal, m, "exact")
    noise.require_two_classes(encoded.classes)
    if estimand == "forward":
        problem = _Problem(encoded, noise, weight, cells)
        mc = {"n_draws": options["n_draws"], "random_state": options["random_state"]}
        expected, variance, method = _forward(metric, problem, settings, mc)
        return _per_class(metric, expected, variance, nominal, m, method)
    if definition.negative and (average is None or label_index is not None):
        raise ValueError(
            f"estimand={estimand!r} needs one average over every class: choose "
            "average='micro', 'macro' or 'weighted' and pass every class in "
            "labels (average=None and a subset of labels are available for "
            "estimand='forward' only)."
        )
    if label_index is not None:
        raise ValueError(
            f"labels leaving out classes present in the data is available "
            f"for estimand='forward' only; with estimand={estimand!r} pass "
            "every class."
        )
    if average is None and definition.averaged:
        raise ValueError(
            f"average=None is available for estimand='forward' only; with "
            f"estimand={estimand!r} choose 'micro', 'macro' or 'weighted'."
        )
    true, pred = encoded.indices(slice(None))
    score = count_estimand_score(
        metric,
        np.asarray(true, dtype=np.intp),
        np.asarray(pred, dtype=np.intp),
        noise,
        estimand=estimand,
        nominal=nominal,
        average=average if definition.averaged else "binary",
        zero_division=zero,
        weight=weight,
        **parameters,
    )
    return adjust_balanced_accuracy(score, k, adjusted)


def adjust_balanced_accuracy(
    score: NoisyScore, n_classes: int, adjusted: bool
) -> NoisyScore:
    """``(BA - 1/K)/(1 - 1/K)`` of a truth or remeasurement estimate."""
    if not adjusted:
        return score
    scale = 1.0 - 1.0 / n_classes
    if score.estimand == "truth":
        expected = (score.expected - 1.0 / n_classes) / scale
    else:  # remeasurement: the nominal, already adjusted by scikit-learn
        expected = score.nominal
    return replace(score, expected=expected, variance=score.variance / scale**2)
