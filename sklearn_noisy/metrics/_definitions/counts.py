"""The count metrics, each defined once as a function of a confusion matrix.

A :class:`CountMetric` holds the value (scikit-learn's bits), the gradient
(the delta method's derivatives in ``(TP, FN)`` follow from it) and the affine
form given the observed positives that the exact binary engine needs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from sklearn import metrics as sk

from . import count_docs as docs
from .count_docs import function_doc


def nanaverage(values: Any, weights: Any, *, drop: bool | None = None) -> Any:
    """scikit-learn's ``_nanaverage`` along the last axis, to the last bit
    (``drop``, default with ``weights``: the NaN entries of one row removed)."""
    values = np.asarray(values, dtype=np.float64)
    defined = ~np.isnan(values)
    if (weights is not None if drop is None else drop) and values.size:
        rows = defined.reshape(-1, values.shape[-1])
        if rows.shape[0] == 1:
            values, defined = values[..., rows[0]], defined[..., rows[0]]
            weights = None if weights is None else np.asarray(weights)[..., rows[0]]
    clean = np.where(defined, values, 0.0)
    count = defined.sum(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.where(count > 0, clean.sum(-1) / np.maximum(count, 1), np.nan)
        if weights is None:
            return mean
        w = np.where(defined, weights, 0)
        total = w.sum(-1)
        weighted = (clean * w).sum(-1) / np.where(total > 0, total, 1)
    return np.where(total > 0, weighted, mean)


def _safe_reciprocal(denominator: np.ndarray) -> np.ndarray:
    """``1/denominator`` where it is positive, 0 elsewhere."""
    out = np.zeros_like(denominator, dtype=np.float64)
    np.divide(1.0, denominator, out=out, where=denominator > 0)
    return out


def _sums(confusion: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(diagonal, row sums, column sums)`` of a stack of matrices."""
    tp = np.diagonal(confusion, axis1=-2, axis2=-1)
    return tp, confusion.sum(-1), confusion.sum(-2)


@dataclass(frozen=True)
class Ratio:
    """``scale · C[k, k] / d_k``, ``d_k`` the row sum (``true``), the column sum
    (``predicted``) or both: recall, precision, F1."""

    scale: float
    true: bool
    predicted: bool

    def denominator(self, true_sum: Any, pred_sum: Any) -> Any:
        """``d`` of per-class sums, in scikit-learn's order (broadcast)."""
        true_sum = 1 * true_sum if self.true else 0 * true_sum
        return true_sum + (pred_sum if self.predicted else 0 * pred_sum)

    def of_sums(self, tp: Any, true_sum: Any, pred_sum: Any, zero: float) -> Any:
        """The ratio of per-class sums (broadcast), ``zero`` where the
        denominator is 0 (scikit-learn's ``_prf_divide``)."""
        numerator = self.scale * np.asarray(tp, dtype=np.float64)
        denominator = np.asarray(self.denominator(true_sum, pred_sum), np.float64)
        undefined = denominator == 0
        safe = np.where(undefined, 1.0, denominator)
        return np.where(undefined, zero, numerator / safe)

    def undefined_probability(self, n_pred_pos: float, p_no_positive: float) -> float:
        """``P(d = 0)`` given the predicted total and ``P(no observed positive)``."""
        if self.predicted and n_pred_pos > 0:
            return 0.0
        return p_no_positive if self.true else 1.0


def _ratio_value(ratio: Ratio, confusion: np.ndarray, **options: Any) -> Any:
    """A ratio of each matrix with scikit-learn's ``average``; ``negative``: of
    each class's negatives against the rest (``multilabel_confusion_matrix``)."""
    tp, true_sum, pred_sum = _sums(confusion)
    if options.get("negative"):
        fp, fn = pred_sum - tp, true_sum - tp
        tn = true_sum.sum(-1)[..., None] - tp - fp - fn
        return average_ratio(ratio, (tn, fp, fn, true_sum), **options)
    return average_ratio(ratio, (tp, true_sum, pred_sum, true_sum), **options)


def average_ratio(
    ratio: Ratio,
    parts: tuple,
    *,
    negative: bool = False,
    average: Any = None,
    zero_division: float = 0.0,
    pos_index: int | None = None,
    label_index: Any = None,
    **_: Any,
) -> Any:
    """The ratio of per-class ``parts``, ``(TP, true, predicted, support)`` or
    ``(TN, FP, FN, support)`` (``negative``), averaged as scikit-learn."""
    if label_index is not None:  # scikit-learn's labels as a subset
        parts = tuple(a[..., label_index] for a in parts)
    if average == "binary":
        parts = tuple(a[..., pos_index] for a in parts)
    elif average == "micro":
        parts = tuple(a.sum(-1) for a in parts)
    numerator, first, second, support = parts
    if negative:
        first, second = numerator + first, numerator + second
    values = ratio.of_sums(numerator, first, second, zero_division)
    if average in ("macro", "weighted"):
        return nanaverage(values, support if average == "weighted" else None)
    return values


def _ratio_gradient(
    ratio: Ratio,
    counts: np.ndarray,
    *,
    pos_index: Any,
    average: str,
    zero: float,
    negative: bool = False,
) -> tuple[float, np.ndarray]:
    """The ratio ``N_k / D_k`` of one matrix (``negative``: ``N_k = TN_k``) with
    ``average`` (``"present"``: the classes of non-zero support), and ``∂f/∂C``."""
    n_classes = counts.shape[0]
    mine = np.eye(n_classes) if not negative else 1.0 - np.eye(n_classes)
    rows, columns = mine[:, :, None], mine[:, None, :]
    d_numerator = (1.0 if negative else ratio.scale) * rows * columns
    d_denominator = ratio.denominator(rows, columns)
    true_sum = counts.sum(axis=1)
    if negative:  # TN_k over TN_k + FP_k (or + FN_k)
        numerator = np.einsum("kab,ab->k", d_numerator, counts)
        denominator = np.einsum("kab,ab->k", d_denominator, counts)
    else:
        numerator = ratio.scale * np.diagonal(counts)
        denominator = ratio.denominator(true_sum, counts.sum(axis=0))
    values = _RECALL.of_sums(numerator, denominator, 0.0, zero)
    if average == "micro":
        pooled = denominator.sum()
        if pooled == 0:
            return float(zero), np.zeros_like(counts)
        value = numerator.sum() / pooled
        gradient = d_numerator.sum(axis=0) - value * d_denominator.sum(axis=0)
        return float(value), gradient / pooled
    defined = denominator != 0
    safe = np.where(defined, denominator, 1.0)[:, None, None]
    gradients = (d_numerator - values[:, None, None] * d_denominator) / safe
    gradients[~defined] = 0.0
    if average == "binary":
        return float(values[pos_index]), gradients[pos_index]
    if average == "macro":
        return float(values.mean()), gradients.mean(axis=0)
    if average == "present":
        present = true_sum != 0
        return float(values[present].mean()), gradients[present].mean(axis=0)
    total = true_sum.sum()  # weighted
    value = float(true_sum @ values / total)
    gradient = np.einsum("k,kij->ij", true_sum, gradients) + values[:, None]
    return value, (gradient - value) / total


_PRECISION = Ratio(1.0, False, True)
_RECALL = Ratio(1.0, True, False)
_F1 = Ratio(2.0, True, True)


def _balanced_accuracy_value(
    confusion: np.ndarray, *, adjusted: bool = False, **_: Any
) -> Any:
    """Mean recall of the classes present, ``adjusted`` as scikit-learn's."""
    tp, true_sum, _ = _sums(confusion)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_class = np.where(
            true_sum > 0, tp / np.where(true_sum > 0, true_sum, 1), np.nan
        )
    score = nanaverage(per_class, None, drop=True)
    if adjusted:
        chance = 1.0 / (true_sum > 0).sum(-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            score = (score - chance) / (1.0 - chance)
    return score


def _balanced_accuracy_affine(
    n: np.ndarray, n_pos: float, m: float, zero: float, *, adjusted: bool = False
):
    n_neg = m - n_pos
    inv_neg = _safe_reciprocal(m - n)
    inv_pos = _safe_reciprocal(n)
    alpha = 0.5 * (n_neg - n) * inv_neg
    beta = 0.5 * (inv_pos + inv_neg)
    single = (n == 0) | (n == m)
    if adjusted:  # undefined with a single class observed
        return np.where(single, np.nan, 2.0 * alpha - 1.0), 2.0 * beta
    # Only one class observed: BA is the recall of that class alone.
    alpha = np.where(n == 0, n_neg / m, np.where(n == m, 0.0, alpha))
    beta = np.where(n == 0, 0.0, np.where(n == m, 1.0 / m, beta))
    return alpha, beta


def _matthews_parts(confusion: np.ndarray) -> tuple:
    """``(c n − t·p, n² − p·p, n² − t·t)`` and the sums, scikit-learn's order."""
    tp, t_sum, p_sum = _sums(confusion)
    n_correct = tp.sum(-1)
    n = p_sum.sum(-1)
    cov_ytyp = n_correct * n - (t_sum * p_sum).sum(-1)
    cov_ypyp = n * n - (p_sum * p_sum).sum(-1)
    cov_ytyt = n * n - (t_sum * t_sum).sum(-1)
    return cov_ytyp, cov_ypyp, cov_ytyt, n_correct, n, t_sum, p_sum


def _matthews_value(confusion: np.ndarray, **_: Any) -> Any:
    """scikit-learn's MCC, 0 where the product under the root is not positive
    (it can be negative for de-noised counts)."""
    cov_ytyp, cov_ypyp, cov_ytyt = _matthews_parts(np.asarray(confusion, float))[:3]
    product = cov_ypyp * cov_ytyt
    positive = product > 0
    return np.where(positive, cov_ytyp / np.sqrt(np.where(positive, product, 1.0)), 0.0)


def _matthews_gradient(counts: np.ndarray, **_: Any) -> tuple[float, np.ndarray]:
    _, spread_pred, spread_true, correct, total, true, predicted = _matthews_parts(
        counts
    )
    value = float(_matthews_value(counts))
    if not spread_pred * spread_true > 0:
        return 0.0, np.zeros_like(counts)
    d_covariance = total * np.eye(counts.shape[0]) + correct
    d_covariance -= predicted[:, None] + true[None, :]
    d_spread_pred = 2.0 * (total - predicted)[None, :]
    d_spread_true = 2.0 * (total - true)[:, None]
    gradient = d_covariance / np.sqrt(spread_pred * spread_true) - 0.5 * value * (
        d_spread_pred / spread_pred + d_spread_true / spread_true
    )
    return value, gradient


def _matthews_affine(n: np.ndarray, n_pos: float, m: float, zero: float, **_: Any):
    inv_d = _safe_reciprocal(np.sqrt(n_pos * (m - n_pos)) * np.sqrt(n * (m - n)))
    return -n_pos * n * inv_d, m * inv_d


def _accuracy_value(confusion: np.ndarray, **_: Any) -> Any:
    return np.trace(confusion, axis1=-2, axis2=-1) / confusion.sum((-2, -1))


def _accuracy_gradient(counts: np.ndarray, **_: Any) -> tuple[float, np.ndarray]:
    total = counts.sum()
    value = np.trace(counts) / total
    return float(value), (np.eye(counts.shape[0]) - value) / total


_KAPPA_WEIGHTS = (None, "linear", "quadratic")


def _check_kappa(*, weights: Any = None) -> None:
    if not (
        weights is None or (isinstance(weights, str) and weights in _KAPPA_WEIGHTS)
    ):
        raise ValueError(
            f"weights must be None, 'linear' or 'quadratic'; got {weights!r}."
        )


def _kappa_weights(n_classes: int, weights: Any) -> np.ndarray:
    """scikit-learn's disagreement weights: 1 off the diagonal, |i−j| or (i−j)²."""
    if weights is None:
        w = np.ones((n_classes, n_classes))
        w.flat[:: n_classes + 1] = 0.0
        return w
    w = np.zeros((n_classes, n_classes)) + np.arange(n_classes)
    return np.abs(w - w.T) if weights == "linear" else (w - w.T) ** 2


def _kappa_value(confusion: np.ndarray, *, weights: Any = None, **_: Any) -> Any:
    """``1 − Σ w C / Σ w E``, ``E = c rᵀ / n`` in scikit-learn's order; NaN
    where ``Σ w E = 0``."""
    confusion = np.asarray(confusion, dtype=np.float64)
    sum0 = confusion.sum(-2)
    sum1 = confusion.sum(-1)
    total = sum0.sum(-1)[..., None, None]
    w = _kappa_weights(confusion.shape[-1], weights)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = (sum0[..., :, None] * sum1[..., None, :]) / total
        numerator = (w * confusion).sum((-2, -1))
        denominator = (w * expected).sum((-2, -1))
        defined = (denominator != 0) & (total[..., 0, 0] != 0)
        return np.where(defined, 1 - numerator / denominator, np.nan)


def _kappa_gradient(counts: np.ndarray, *, weights: Any = None, **_: Any) -> tuple:
    """``κ = 1 − A/B``, ``A = Σ w C``, ``B = cᵀ W r / n``: ``∂κ = (A ∂B − B ∂A)/B²``."""
    w = _kappa_weights(counts.shape[0], weights)
    columns, rows, total = counts.sum(axis=0), counts.sum(axis=1), counts.sum()
    a = float(np.sum(w * counts))
    b = float(columns @ w @ rows) / total if total != 0 else 0.0
    value = float(_kappa_value(counts, weights=weights))
    if b == 0:
        return value, np.zeros_like(counts)
    d_b = ((w @ rows)[None, :] + (w.T @ columns)[:, None] - b) / total
    return value, (a * d_b - b * w) / (b * b)


def _kappa_affine(n: np.ndarray, n_pos: float, m: float, zero: float, **_: Any):
    """``κ = 1 − (n_P + n − 2 TP)/B(n)``, ``B(n) = ((M − n_P) n + n_P (M − n))/M``."""
    b = ((m - n_pos) * n + n_pos * (m - n)) / m
    inverse = _safe_reciprocal(b)  # B(n) >= 0
    alpha = np.where(b != 0, 1.0 - (n_pos + n) * inverse, np.nan)
    return alpha, 2.0 * inverse


_KAPPA_DOC = function_doc(
    "expected_cohen_kappa_score",
    "Expected Cohen's kappa, and its variance, under label flips.",
    """Binary labels are exact, multiclass labels Monte Carlo; where it is
    undefined it is NaN, as in scikit-learn. Read more in the
    :ref:`User Guide <formula_kappa>`.""",
    """>>> y_true, y_pred = [0, 1, 0, 0, 1, 0], [0, 1, 0, 0, 0, 1]
    >>> expected_cohen_kappa_score(y_true, y_pred, q=0.1, estimand="forward").expected
    0.1961...""",
    "cohen_kappa_score",
    """
    weights : {"linear", "quadratic"} or None, default=None
        As in scikit-learn: a disagreement between the ``i``-th and ``j``-th
        classes weighs ``|i − j|`` or ``(i − j)²``; None weighs each 1.""",
)


@dataclass(frozen=True)
class CountMetric:
    """One count metric: everything an engine needs to know about it.

    ``sklearn_function``: the scikit-learn function it equals at zero noise
    (the rates: the one they mirror). ``ratio``: the sums a per-class ratio
    divides by (it then takes ``average`` and ``labels``).
    ``linear_averages``: the averages under which it is linear in ``C`` with
    fixed denominators; ``accuracy_averages``: those under which it is the
    accuracy (the rates: affine in it). ``negative``: a ratio of each class's
    negatives (the rates); ``complement``: ``1 −`` it; ``adjustable``: takes
    ``adjusted``;
    ``present_classes``: averages the classes present in ``y_true``;
    ``labelled``: takes ``labels`` without averaging (kappa). ``parameters``:
    the metric's own options and defaults, checked by ``check_parameters``.
    ``function_name`` and ``doc``: of the public function built from it;
    ``nominal_doc``: of the function of the labels as given (the rates).
    ``ill_defined``: scikit-learn's words for a zero denominator (the name
    and what the denominator counts); ``class_metric``: the metric of each
    class whose mean it is (balanced accuracy).
    """

    name: str
    sklearn_function: Callable[..., Any]
    range: tuple[float, float] = (0.0, 1.0)
    ratio: Ratio | None = None
    linear_averages: tuple[str, ...] = ()
    accuracy_averages: tuple[str, ...] = ()
    negative: bool = False
    complement: bool = False
    adjustable: bool = False
    present_classes: bool = False
    labelled: bool = False
    parameters: tuple[tuple[str, Any], ...] = ()
    check_parameters: Callable[..., None] | None = None
    function_name: str = ""
    doc: str = ""
    nominal_doc: str = ""
    ill_defined: tuple[str, str] = ("", "")
    class_metric: str = ""
    _value: Callable[..., Any] | None = None
    _gradient: Callable[..., Any] | None = None
    _affine: Callable[..., Any] | None = None

    @property
    def averaged(self) -> bool:
        """Whether it takes scikit-learn's ``average`` (and ``labels``)."""
        return self.ratio is not None

    def value(self, confusion: Any, **options: Any) -> Any:
        """The metric of each matrix of ``confusion`` (``(..., K, K)``), one more
        axis of classes for ``average=None``."""
        confusion = np.asarray(confusion)
        if self._value is not None:
            return self._value(confusion, **options)
        values = _ratio_value(self.ratio, confusion, negative=self.negative, **options)
        return 1.0 - values if self.complement else values

    def gradient(
        self,
        counts: np.ndarray,
        *,
        pos_index: int | None = None,
        average: str = "binary",
        zero_division: float = 0.0,
        **options: Any,
    ) -> tuple[float, np.ndarray]:
        """The metric of one matrix and ``∂f/∂C``; ``options``: the ``parameters``."""
        if self._gradient is not None:
            return self._gradient(counts, **options)
        value, gradient = _ratio_gradient(
            self.ratio,
            counts,
            pos_index=pos_index,
            average=average,
            zero=zero_division,
            negative=self.negative,
        )
        return (1.0 - value, -gradient) if self.complement else (value, gradient)

    def affine(
        self,
        n: Any,
        n_pred_pos: float,
        n_samples: float,
        *,
        zero_division: float = 0.0,
        adjusted: bool = False,
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(α(n), β(n))`` with ``metric = α(n) + β(n) TP`` given ``n`` observed
        positives (NaN where undefined)."""
        n = np.asarray(n, dtype=np.float64)
        if self._affine is None:  # a ratio: scale · TP / d(n, n_P)
            d = self.ratio.denominator(n, np.full_like(n, n_pred_pos))
            beta = self.ratio.scale * _safe_reciprocal(d)
            return np.where(d > 0, 0.0, zero_division), beta
        return self._affine(
            n, float(n_pred_pos), float(n_samples), zero_division, adjusted=adjusted
        )

    def delta(
        self, t: float, f: float, n_pred_pos: float, n_samples: float
    ) -> tuple[float, float, float, float, float]:
        """``(f, ∂f/∂TP, ∂f/∂FN, ∂²f/∂TP², ∂²f/∂FN²)`` at ``(TP, FN) = (t, f)``
        from :meth:`gradient`: the second derivatives by central differences
        of it, Richardson-extrapolated."""

        def slopes(tp: float, fn: float) -> tuple[float, float, float]:
            fp, tn = n_pred_pos - tp, (n_samples - n_pred_pos) - fn
            value, g = self.gradient(np.array([[tn, fp], [fn, tp]]), pos_index=1)
            return value, g[1, 1] - g[0, 1], g[1, 0] - g[0, 0]

        def second(axis: int) -> float:  # small against S and M − S, never 0
            step = max(1e-3 * min(t + f, n_samples - (t + f)), 1e-6)
            at, move = np.array([t, f]), np.eye(2)[axis - 1]
            d = [
                (slopes(*(at + h * move))[axis] - slopes(*(at - h * move))[axis])
                / (2.0 * h)
                for h in (step, step / 2.0)
            ]
            return (4.0 * d[1] - d[0]) / 3.0

        value, d_t, d_f = slopes(t, f)
        d_tt, d_ff = second(1), second(2)
        return value, float(d_t), float(d_f), float(d_tt), float(d_ff)

    @property
    def exact_binary(self) -> bool:
        """Whether the exact binary engine serves it (a ratio of the positive
        class, or ``_affine``)."""
        plain = self.ratio is not None and not (self.negative or self.complement)
        return plain or self._affine is not None

    @property
    def fixed_denominator(self) -> bool:
        """Whether it is a ratio over a prediction total alone (fixed)."""
        return self.ratio is not None and self.ratio.predicted and not self.ratio.true

    def is_linear(self, average: Any) -> bool:
        """Linear in ``C`` with fixed denominators under ``average``."""
        return average in self.linear_averages

    def sklearn_options(self, **options: Any) -> dict:
        """The keyword arguments of :attr:`sklearn_function` among ``options``."""
        if self.averaged:
            names: tuple[str, ...] = ("labels", "pos_label", "average", "zero_division")
        else:
            names = ("adjusted",) if self.adjustable else ()
            names += ("labels",) if self.labelled else ()
        names += tuple(name for name, _ in self.parameters)
        return {name: options[name] for name in names if name in options}


_ALL = ("binary", "micro", "macro", "weighted", None)

COUNT_METRICS: dict[str, CountMetric] = {
    d.name: d
    for d in (
        CountMetric(
            "accuracy",
            sk.accuracy_score,
            linear_averages=_ALL,
            _value=_accuracy_value,
            _gradient=_accuracy_gradient,
        ),
        CountMetric(
            "precision",
            sk.precision_score,
            ratio=_PRECISION,
            linear_averages=("binary", "macro", "micro"),
            accuracy_averages=("micro",),
            ill_defined=("Precision is", "predicted"),
            function_name="expected_precision_score",
            doc=docs.PRECISION_DOC,
        ),
        CountMetric(
            "recall",
            sk.recall_score,
            ratio=_RECALL,
            linear_averages=("micro", "weighted"),
            accuracy_averages=("micro", "weighted"),
            ill_defined=("Recall is", "true"),
            function_name="expected_recall_score",
            doc=docs.RECALL_DOC,
        ),
        CountMetric(
            "f1",
            sk.f1_score,
            ratio=_F1,
            linear_averages=("micro",),
            accuracy_averages=("micro",),
            ill_defined=("F-score is", "true nor predicted"),
            function_name="expected_f1_score",
            doc=docs.F1_DOC,
        ),
        CountMetric(
            "balanced_accuracy",
            sk.balanced_accuracy_score,
            adjustable=True,
            present_classes=True,
            class_metric="recall",
            function_name="expected_balanced_accuracy_score",
            doc=docs.BALANCED_ACCURACY_DOC,
            _value=_balanced_accuracy_value,
            _gradient=partial(
                _ratio_gradient, _RECALL, pos_index=None, average="present", zero=0.0
            ),
            _affine=_balanced_accuracy_affine,
        ),
        CountMetric(
            "matthews_corrcoef",
            sk.matthews_corrcoef,
            range=(-1.0, 1.0),
            function_name="expected_matthews_corrcoef",
            doc=docs.MATTHEWS_DOC,
            _value=_matthews_value,
            _gradient=_matthews_gradient,
            _affine=_matthews_affine,
        ),
        CountMetric(
            "cohen_kappa",
            sk.cohen_kappa_score,
            range=(-1.0, 1.0),
            labelled=True,
            parameters=(("weights", None),),
            check_parameters=_check_kappa,
            function_name="expected_cohen_kappa_score",
            doc=_KAPPA_DOC,
            _value=_kappa_value,
            _gradient=_kappa_gradient,
            _affine=_kappa_affine,
        ),
        CountMetric(
            "specificity",
            sk.recall_score,
            ratio=_RECALL,
            linear_averages=("micro",),
            accuracy_averages=("micro",),
            negative=True,
            function_name="expected_specificity_score",
            doc=docs.SPECIFICITY_DOC,
            nominal_doc=docs.SPECIFICITY_NOMINAL,
        ),
        CountMetric(
            "negative_predictive_value",
            sk.precision_score,
            ratio=_PRECISION,
            linear_averages=("micro", "macro"),
            accuracy_averages=("micro",),
            negative=True,
            function_name="expected_negative_predictive_value",
            doc=docs.NPV_DOC,
            nominal_doc=docs.NPV_NOMINAL,
        ),
        CountMetric(
            "false_positive_rate",
            sk.recall_score,
            ratio=_RECALL,
            linear_averages=("micro",),
            negative=True,
            complement=True,
            function_name="expected_false_positive_rate",
            doc=docs.FPR_DOC,
            nominal_doc=docs.FPR_NOMINAL,
        ),
        CountMetric(
            "false_negative_rate",
            sk.recall_score,
            ratio=_RECALL,
            linear_averages=("micro", "weighted"),
            complement=True,
            function_name="expected_false_negative_rate",
            doc=docs.FNR_DOC,
            nominal_doc=docs.FNR_NOMINAL,
        ),
    )
}


#: The accuracy, whose public function is written by hand.
ACCURACY = COUNT_METRICS["accuracy"]


def mirror(definition: CountMetric, *, negative: bool) -> CountMetric:
    """The ratio of the same sums, of the negative class or not, not ``1 −``."""
    return next(
        d
        for d in COUNT_METRICS.values()
        if d.ratio == definition.ratio and d.negative == negative and not d.complement
    )


def sklearn_from_confusion(
    metric: str, confusion: np.ndarray, classes: np.ndarray, **options: Any
) -> Any:
    """scikit-learn's ``metric`` of the labels whose confusion matrix over
    ``classes`` is given (the others than ratios and kappa: over the sorted
    classes present)."""
    definition = COUNT_METRICS[metric]
    if not (definition.averaged or definition.labelled):
        order = np.argsort(classes, kind="stable")
        confusion = confusion[np.ix_(order, order)]
        present = (confusion.sum(axis=0) + confusion.sum(axis=1)) > 0
        confusion = confusion[np.ix_(present, present)]
    return definition.value(confusion, **options)
