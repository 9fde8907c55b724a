"""Expected precision, recall, F1, balanced accuracy and MCC under label flips.

The public functions of the binary count metrics. Binary labels are exact
(:mod:`._binary_average`; user guide: :ref:`formula_binary_counts`):
precision in closed form, the others by the Poisson-binomial algorithm of
:mod:`._binary_counts` or, with ``method="delta"``, the second-order delta
method. Multiclass labels go through :mod:`._multiclass_average`: the micro
average of precision, recall and F1 equals the accuracy and is exact; the
macro and weighted averages, and multiclass balanced accuracy and MCC, are
Monte Carlo. Balanced accuracy and MCC are symmetric in the two classes.
The functions of MCC and Cohen's kappa are built from their definitions
(:func:`count_metric_function`).
That is ``estimand="forward"``; ``"truth"`` and ``"remeasurement"`` go through
the confusion matrix (:mod:`._truth_counts`; user guide:
:ref:`estimands`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.exceptions import UndefinedMetricWarning

from .._noisy_score import NoisyScore
from ..utils._docstring import fill_doc
from ..utils._labels import check_targets, class_totals
from ..utils._validation import supports_estimands
from ..utils._warnings import warn
from ._binary_average import _NOISE_PARAMETERS
from ._binary_counts import _METHOD_PARAMETER
from ._count_definitions import COUNT_METRICS, CountMetric
from ._multiclass_average import _MC_PARAMETERS
from ._prf_paths import _ba_mcc_score, _prf_score
from ._test_set_sampling import with_test_set_sampling
from ._truth_counts import ESTIMAND_PARAMETER

__all__ = [
    "count_metric_function",
    "expected_balanced_accuracy_score",
    "expected_f1_score",
    "expected_precision_score",
    "expected_recall_score",
]

_PRF_PARAMETERS = (
    _NOISE_PARAMETERS
    + """
    labels : array-like, default=None
        The classes, in the order of the rows of ``transition_matrix`` and of
        the per-class results of ``average=None``; by default the sorted
        labels present in ``y_true`` and ``y_pred``. As in scikit-learn it
        may leave out classes present (they are then not averaged, but a
        flip with ``q`` still goes to them: the classes are ``labels``
        followed by the others present; the micro and weighted averages over
        such a subset are Monte Carlo) or name absent ones (a flip with
        ``q`` can reach them). With a ``transition_matrix`` it names every
        class, in the matrix's order. For multilabel targets: the columns to
        use, as in scikit-learn.
    pos_label : int, float, bool or str, default=1
        The positive class for ``average="binary"``, as in scikit-learn.
    average : {"binary", "micro", "macro", "weighted", "samples"} or None, \
default="binary"
        As in scikit-learn. ``"binary"``: exact (``method="exact"``).
        ``"micro"``: equal to the accuracy, exact (user guide:
        :ref:`formula_accuracy`). ``None``: one :class:`NoisyScore` per class,
        each exact. ``"macro"`` and ``"weighted"``: the expectation is exact
        (user guide: :ref:`formula_multiclass`); so is the variance of the
        macro precision and the weighted recall, and the other variances are
        Monte Carlo over ``n_draws`` redrawn confusion matrices
        (``method="monte_carlo"``). The classes averaged are ``labels``
        (all of them) in every draw, as scikit-learn with ``labels=``.
        ``"samples"`` (multilabel targets only, as in scikit-learn): exact.
        Multilabel indicator targets, shape ``(n_samples, n_labels)``, flip
        entry by entry (``q`` a scalar, one per sample or one per entry; or
        a 2 × 2 ``transition_matrix``); ``None``, ``"micro"``, ``"macro"``
        and ``"samples"`` are exact, ``"weighted"`` Monte Carlo (user guide:
        :ref:`formula_multiclass`).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights, as in scikit-learn. With unequal weights
        the counts are not integers: precision, and the micro averages
        (the weighted accuracy), stay exact; the other results are Monte
        Carlo with ``method="exact"`` and the weighted delta method with
        ``method="delta"`` (binary only).
    zero_division : {"warn", 0.0, 1.0, np.nan}, default="warn"
        The value of a ratio whose denominator is 0, as in scikit-learn
        (``"warn"`` is 0, with scikit-learn's ``UndefinedMetricWarning`` when
        a ratio of the nominal metric is 0/0; none for the draws under
        noise). Under noise the ratio can be 0/0 in some draws only: a
        number enters the expectation with the probability of that event;
        with ``np.nan`` the expectation is NaN when the event has a positive
        probability (a binary metric, or a class of ``average=None``), and
        the macro average ignores undefined classes draw by draw, as
        scikit-learn's (Monte Carlo where that makes the set of classes
        random)."""
    + _METHOD_PARAMETER
    + ESTIMAND_PARAMETER
)

_PRF_RETURNS = """    score : NoisyScore or list of NoisyScore
        One :class:`~sklearn_noisy.NoisyScore`, or with ``average=None`` a
        list with one per class in the order of ``labels`` (scikit-learn's
        array is ``[s.expected for s in score]`` at zero noise). ``nominal``
        is the scikit-learn metric on ``y_true`` with the same options, to
        the last bit. ``method`` is ``"exact"``, ``"delta"`` or
        ``"monte_carlo"`` (see ``average`` and ``sample_weight``). With no
        noise at all (``q=0``) nothing is sampled: ``expected`` is
        ``nominal`` and the variance 0."""

#: The arguments that hold class labels (the bootstrap fixes ``labels``).
_LABEL_ARGUMENTS = ("y_true", "y_pred")


@with_test_set_sampling(label_arguments=_LABEL_ARGUMENTS)
@supports_estimands("forward", "truth", "remeasurement")
@fill_doc(
    parameters=_PRF_PARAMETERS,
    mc_parameters=_MC_PARAMETERS,
    returns=_PRF_RETURNS,
)
def expected_precision_score(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    pos_label: Any = 1,
    average: str | None = "binary",
    sample_weight: Any = None,
    zero_division: Any = "warn",
    method: str = "exact",
    estimand: str = "forward",
    n_draws: int = 1000,
    random_state: Any = 0,
) -> NoisyScore | list[NoisyScore]:
    """Expected precision, and its variance, under label flips.

    Precision ``TP / n_P`` has a denominator fixed by the predictions, so it is
    linear in the labels and its moments are exact::

        E[precision]   = (1/n_P) Σ_{i∈P} π_i
        Var[precision] = (1/n_P²) Σ_{i∈P} π_i (1 - π_i)

    with ``P`` the samples predicted positive and ``π_i`` the probability that
    sample ``i`` is observed positive. Read more in the
    :ref:`User Guide <formula_binary_counts>`.

    Parameters
    ----------
    {parameters}
    {mc_parameters}

    Returns
    -------
    {returns}

    See Also
    --------
    sklearn.metrics.precision_score : The metric on exact labels.
    expected_recall_score : The expected recall.

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_precision_score
    >>> y_true = [0, 1, 1, 0, 1, 1]
    >>> y_pred = [0, 1, 0, 1, 1, 1]
    >>> expected_precision_score(y_true, y_pred, q=0.1)
    NoisyScore(metric='precision', expected=0.7, std=0.15, nominal=0.75, \
    n_samples=6, method='exact')
    """
    y_true, y_pred = check_targets(y_true, y_pred)
    score = _prf_score(
        "precision",
        y_true,
        y_pred,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        pos_label=pos_label,
        average=average,
        sample_weight=sample_weight,
        zero_division=zero_division,
        method=method,
        estimand=estimand,
        n_draws=n_draws,
        random_state=random_state,
    )
    _warn_zero_division(
        "precision", score, y_true, y_pred, labels, pos_label, average, sample_weight,
        zero_division,
    )  # fmt: skip
    return score


@with_test_set_sampling(label_arguments=_LABEL_ARGUMENTS)
@supports_estimands("forward", "truth", "remeasurement")
@fill_doc(
    parameters=_PRF_PARAMETERS,
    mc_parameters=_MC_PARAMETERS,
    returns=_PRF_RETURNS,
)
def expected_recall_score(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    pos_label: Any = 1,
    average: str | None = "binary",
    sample_weight: Any = None,
    zero_division: Any = "warn",
    method: str = "exact",
    estimand: str = "forward",
    n_draws: int = 1000,
    random_state: Any = 0,
) -> NoisyScore | list[NoisyScore]:
    """Expected recall, and its variance, under label flips.

    Recall ``TP / S`` divides by the number ``S`` of observed positives, which
    depends on the labels; the moments are exact sums over the joint law of TP
    and FN, in ``O(M log² M)``, or a delta-method approximation. Read more in
    the :ref:`User Guide <formula_binary_counts>` (other estimands:
    :ref:`formula_truth`).

    Parameters
    ----------
    {parameters}
    {mc_parameters}

    Returns
    -------
    {returns}

    See Also
    --------
    sklearn.metrics.recall_score : The metric on exact labels.
    expected_f1_score : The expected F1 score.

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_recall_score
    >>> y_true = [0, 1, 1, 0, 1, 1]
    >>> y_pred = [0, 1, 0, 1, 1, 1]
    >>> expected_recall_score(y_true, y_pred, q=0.1)
    NoisyScore(metric='recall', expected=0.739034, std=0.1082, nominal=0.75, \
    n_samples=6, method='exact')
    """
    y_true, y_pred = check_targets(y_true, y_pred)
    score = _prf_score(
        "recall",
        y_true,
        y_pred,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        pos_label=pos_label,
        average=average,
        sample_weight=sample_weight,
        zero_division=zero_division,
        method=method,
        estimand=estimand,
        n_draws=n_draws,
        random_state=random_state,
    )
    _warn_zero_division(
        "recall", score, y_true, y_pred, labels, pos_label, average, sample_weight,
        zero_division,
    )  # fmt: skip
    return score


@with_test_set_sampling(label_arguments=_LABEL_ARGUMENTS)
@supports_estimands("forward", "truth", "remeasurement")
@fill_doc(
    parameters=_PRF_PARAMETERS,
    mc_parameters=_MC_PARAMETERS,
    returns=_PRF_RETURNS,
)
def expected_f1_score(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    pos_label: Any = 1,
    average: str | None = "binary",
    sample_weight: Any = None,
    zero_division: Any = "warn",
    method: str = "exact",
    estimand: str = "forward",
    n_draws: int = 1000,
    random_state: Any = 0,
) -> NoisyScore | list[NoisyScore]:
    """Expected F1 score, and its variance, under label flips.

    ``F1 = 2 TP / (n_P + S)`` with ``S`` the number of observed positives; the
    moments are exact sums over the joint law of TP and FN, in
    ``O(M log² M)``, or a delta-method approximation. Read more in the
    :ref:`User Guide <formula_binary_counts>` (other estimands:
    :ref:`formula_truth`).

    Parameters
    ----------
    {parameters}
    {mc_parameters}

    Returns
    -------
    {returns}

    See Also
    --------
    sklearn.metrics.f1_score : The metric on exact labels.

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_f1_score
    >>> y_true = [0, 1, 1, 0, 1, 1]
    >>> y_pred = [0, 1, 0, 1, 1, 1]
    >>> expected_f1_score(y_true, y_pred, q=0.1).expected
    0.7118...
    """
    y_true, y_pred = check_targets(y_true, y_pred)
    score = _prf_score(
        "f1",
        y_true,
        y_pred,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        pos_label=pos_label,
        average=average,
        sample_weight=sample_weight,
        zero_division=zero_division,
        method=method,
        estimand=estimand,
        n_draws=n_draws,
        random_state=random_state,
    )
    _warn_zero_division(
        "f1", score, y_true, y_pred, labels, pos_label, average, sample_weight,
        zero_division,
    )  # fmt: skip
    return score


_BA_MCC_PARAMETERS = (
    _NOISE_PARAMETERS
    + """
    labels : array-like, default=None
        The classes, in the order of the rows of ``transition_matrix``; by
        default the sorted labels present in ``y_true`` and ``y_pred``. More
        than two classes make the problem multiclass (user guide:
        :ref:`formula_binary_counts`).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights, as in scikit-learn. With unequal weights
        the counts are not integers: ``method="exact"`` is then Monte Carlo
        and ``method="delta"`` the weighted delta method (binary only)."""
    + _METHOD_PARAMETER
    + ESTIMAND_PARAMETER
    + "\n"
    + _MC_PARAMETERS
)


_ADJUSTED = """\
    adjusted : bool, default=False
        Rescale so that chance scores 0 and perfect 1, as in scikit-learn."""


@with_test_set_sampling(label_arguments=_LABEL_ARGUMENTS)
@supports_estimands("forward", "truth", "remeasurement")
@fill_doc(
    parameters=_BA_MCC_PARAMETERS,
    adjusted=_ADJUSTED,
)
def expected_balanced_accuracy_score(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    sample_weight: Any = None,
    adjusted: bool = False,
    method: str = "exact",
    estimand: str = "forward",
    n_draws: int = 1000,
    random_state: Any = 0,
) -> NoisyScore:
    """Expected balanced accuracy, and its variance, under label flips.

    ``BA = ½ (TP/S + TN/(M - S))`` with ``S`` the number of observed positives.
    Binary labels are exact (sums over the joint law of TP and FN); for
    multiclass labels the expectation is exact and the variance Monte Carlo. As
    in scikit-learn, when the observed labels hold one class only, that class's
    recall is averaged, and the nominal warns as scikit-learn's when
    ``y_pred`` has a class that ``y_true`` has not. Read more in the
    :ref:`User Guide <formula_binary_counts>` (multiclass:
    :ref:`formula_multiclass`; other estimands: :ref:`formula_truth`).

    Parameters
    ----------
    {parameters}
    {adjusted}

    Returns
    -------
    score : NoisyScore
        ``nominal`` is :func:`sklearn.metrics.balanced_accuracy_score` on
        ``y_true``. ``method`` is ``"exact"``, ``"delta"`` or
        ``"monte_carlo"`` (multiclass).

    See Also
    --------
    sklearn.metrics.balanced_accuracy_score : The metric on exact labels.

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_balanced_accuracy_score
    >>> y_true = [0, 1, 0, 0, 1, 0]
    >>> y_pred = [0, 1, 0, 0, 0, 1]
    >>> expected_balanced_accuracy_score(y_true, y_pred, q=0.1).expected
    0.6030...
    """
    y_true, y_pred = check_targets(y_true, y_pred)
    score = _ba_mcc_score(
        "balanced_accuracy",
        y_true,
        y_pred,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        sample_weight=sample_weight,
        adjusted=adjusted,
        method=method,
        estimand=estimand,
        n_draws=n_draws,
        random_state=random_state,
    )
    _warn_unseen_classes(y_true, y_pred, sample_weight)
    return score


def count_metric_function(definition: CountMetric) -> Callable[..., Any]:
    """The public function of a count metric that is not averaged over classes.

    The options and the engines are those of MCC (exact binary, multiclass
    Monte Carlo, truth, remeasurement, test-set sampling), plus the
    definition's own ``parameters`` (keyword-only, after ``labels``, as in
    scikit-learn); its name and docstring are the definition's
    (``function_name``, ``doc``, whose ``{parameters}`` line takes the common
    options). The registry builds it from the record's definition.
    """
    own = dict(definition.parameters)

    def score(
        y_true: Any,
        y_pred: Any,
        *,
        q: Any = None,
        transition_matrix: Any = None,
        labels: Any = None,
        sample_weight: Any = None,
        method: str = "exact",
        estimand: str = "forward",
        n_draws: int = 1000,
        random_state: Any = 0,
        **parameters: Any,
    ) -> NoisyScore:
        unknown = sorted(set(parameters) - set(own))
        if unknown:
            raise TypeError(
                f"{definition.function_name}() got an unexpected keyword "
                f"argument {unknown[0]!r}."
            )
        y_true, y_pred = check_targets(y_true, y_pred)
        return _ba_mcc_score(
            definition.name,
            y_true,
            y_pred,
            q=q,
            transition_matrix=transition_matrix,
            labels=labels,
            sample_weight=sample_weight,
            adjusted=False,
            method=method,
            estimand=estimand,
            n_draws=n_draws,
            random_state=random_state,
            parameters=parameters,
        )

    signature = inspect.signature(score)
    fields = list(signature.parameters.values())[:-1]
    keyword = inspect.Parameter.KEYWORD_ONLY
    fields[5:5] = [inspect.Parameter(n, keyword, default=d) for n, d in own.items()]
    score.__signature__ = signature.replace(parameters=fields)
    score.__name__ = score.__qualname__ = definition.function_name
    score.__module__ = "sklearn_noisy.metrics"  # exported there, pickled from there
    score.__doc__ = definition.doc or None
    score = fill_doc(parameters=_BA_MCC_PARAMETERS)(score)
    score = supports_estimands("forward", "truth", "remeasurement")(score)
    return with_test_set_sampling(label_arguments=_LABEL_ARGUMENTS)(score)


#: scikit-learn's words for a ratio with a zero denominator: the name and what
#: the denominator counts.
_ILL_DEFINED = {
    "precision": ("Precision is", "predicted"),
    "recall": ("Recall is", "true"),
    "f1": ("F-score is", "true nor predicted"),
}


def _warn_zero_division(
    metric: str,
    score: Any,
    y_true: Any,
    y_pred: Any,
    labels: Any,
    pos_label: Any,
    average: Any,
    sample_weight: Any,
    zero_division: Any,
) -> None:
    """scikit-learn's ``UndefinedMetricWarning`` for a nominal ratio 0/0.

    Only with ``zero_division="warn"``, when a ratio of the nominal metric has
    a zero denominator: the (weighted) predicted count for precision, the
    true count for recall, both for F1, of a class of ``labels`` (or of
    ``pos_label``; the totals for ``average="micro"``, each sample's for
    ``"samples"``). The message is scikit-learn's. Such a ratio is 0, so the
    counts are looked at only when a value of the score is 0 or it is an
    average over classes.
    """
    if not isinstance(zero_division, str) or zero_division != "warn":
        return
    values = [s.nominal for s in score] if isinstance(score, list) else [score.nominal]
    if average in ("binary", "micro", None) and all(v != 0 for v in values):
        return
    ratio = COUNT_METRICS[metric].ratio
    if ratio.true and ratio.predicted and labels is None and sample_weight is None:
        if average not in ("binary", "samples") and np.ndim(y_true) == 1:
            return  # every class present is in y_true or y_pred: d_k > 0
    true_sum, pred_sum = _prf_totals(
        _dense(y_true),
        _dense(y_pred),
        labels,
        pos_label,
        average,
        sample_weight,
    )
    denominator = ratio.denominator(true_sum, pred_sum)
    if not np.any(denominator == 0):
        return
    start, modifier = _ILL_DEFINED[metric]
    axis0, axis1 = ("label", "sample") if average == "samples" else ("sample", "label")
    where = "due to" if denominator.size == 1 else f"in {axis1}s with"
    warn(
        f"{start} ill-defined and being set to 0.0 {where} no {modifier} "
        f"{axis0}s. Use `zero_division` parameter to control this behavior.",
        UndefinedMetricWarning,
    )


def _dense(y: Any) -> np.ndarray:
    """A label array, a sparse indicator matrix made dense."""
    return np.asarray(y.toarray() if hasattr(y, "toarray") else y)


def _prf_totals(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    labels: Any,
    pos_label: Any,
    average: Any,
    sample_weight: Any,
) -> tuple[np.ndarray, np.ndarray]:
    """The true and predicted (weighted) counts that scikit-learn divides by."""
    weight = None if sample_weight is None else np.asarray(sample_weight, float)
    if y_true.ndim == 2 and y_true.shape[1] > 1:  # multilabel indicators
        columns = slice(None) if labels is None else np.asarray(labels)
        true, pred = y_true[:, columns], y_pred[:, columns]
        if average == "samples":
            true_sum, pred_sum = true.sum(axis=1), pred.sum(axis=1)
        elif weight is None:
            true_sum, pred_sum = true.sum(axis=0), pred.sum(axis=0)
        else:
            true_sum, pred_sum = weight @ true, weight @ pred
    else:
        labels = [pos_label] if average == "binary" else labels
        y_true, y_pred = y_true.reshape(-1), y_pred.reshape(-1)
        _, true_sum, pred_sum = class_totals(y_true, y_pred, labels, weight)
    if average == "micro":
        return np.sum(true_sum, keepdims=True), np.sum(pred_sum, keepdims=True)
    return np.asarray(true_sum, float), np.asarray(pred_sum, float)


def _warn_unseen_classes(y_true: Any, y_pred: Any, sample_weight: Any) -> None:
    """scikit-learn's warning of balanced accuracy: a class absent from ``y_true``.

    Its recall is 0/0 and left out of the mean, as scikit-learn does.
    """
    weight = None if sample_weight is None else np.asarray(sample_weight, float)
    y_true, y_pred = np.asarray(y_true).reshape(-1), np.asarray(y_pred).reshape(-1)
    if np.any(class_totals(y_true, y_pred, None, weight, count_pred=False)[1] == 0):
        warn("y_pred contains classes not in y_true")
