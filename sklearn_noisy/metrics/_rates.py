"""Specificity, false positive and false negative rates, negative predictive value.

The rates of the binary confusion matrix that scikit-learn has no function for,
under label flips, through the exact machinery of precision and recall:

* specificity (TNR) ``TN / (TN + FP)`` is the recall of the negative class;
* the negative predictive value ``TN / (TN + FN)`` is its precision;
* the false positive rate is ``1 − specificity`` and the false negative rate
  ``1 − recall``: the same variance, the expectation and nominal value mirrored.

Each takes the options of :func:`expected_recall_score` (``pos_label``,
``labels``, ``average``, ``sample_weight``, ``zero_division``, ``method``,
``estimand``). ``average="binary"`` is the binary problem of ``pos_label``;
the other averages take each class against the rest (one-vs-rest, as
:func:`sklearn.metrics.multilabel_confusion_matrix`) and are computed in
:mod:`._rates_average` (specificity, NPV; FPR and FNR are their complements
and recall's).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from sklearn.metrics import recall_score

from .._noisy_score import NoisyScore
from ..utils._docstring import fill_doc
from ..utils._labels import encode_labels
from ..utils._validation import supports_estimands
from ._binary_average import _check_option, check_zero_division
from ._count_definitions import COUNT_METRICS
from ._precision_recall import expected_precision_score, expected_recall_score
from ._prf_multilabel import _as_2d, is_multilabel
from ._prf_paths import _AVERAGES, _check_common
from ._rates_average import multiclass_rate_score, rate_nominal
from ._test_set_sampling import with_test_set_sampling

__all__ = [
    "expected_false_negative_rate",
    "expected_false_positive_rate",
    "expected_negative_predictive_value",
    "expected_specificity_score",
    "false_negative_rate",
    "false_positive_rate",
    "negative_predictive_value",
    "specificity_score",
]


def _negative_label(y_true: Any, y_pred: Any, labels: Any, pos_label: Any) -> Any:
    """The other class of a binary problem: the one that is not ``pos_label``."""
    if labels is not None:
        classes = np.asarray(labels).tolist()
    else:  # the one label encoder (integer labels without a sort or a copy)
        classes = encode_labels(y_true, y_pred, None).classes.tolist()
    others = [c for c in classes if c != pos_label]
    if len(others) != 1 or len(classes) > 2:
        raise ValueError(
            "average='binary' needs a binary problem: two classes, one of them "
            f"pos_label={pos_label!r}; found {classes[:5]}. Pass "
            "labels=[negative, positive] when y_true and y_pred show one class, "
            "or choose average=None, 'micro', 'macro' or 'weighted' (each class "
            "against the rest)."
        )
    return others[0]


def _check_average(
    average: Any, y_true: Any, y_pred: Any, *, weighted_multilabel: bool = False
) -> bool:
    """The averages of the precision family; whether the targets are multilabel.

    ``"samples"`` needs multilabel targets, as in scikit-learn.
    ``weighted_multilabel``: whether ``"weighted"`` is offered for them (by the
    false negative rate, ``1 −`` recall).
    """
    if average is not None:
        _check_option(average, _AVERAGES[:-1], name="average")
    if is_multilabel(y_true, y_pred):
        if average == "weighted" and not weighted_multilabel:
            raise ValueError(
                "average='weighted' is not offered for the specificity and the "
                "negative predictive value of multilabel targets (each label "
                "would be weighted by its positives, a random total under the "
                "flips); choose average=None, 'micro', 'macro' or 'samples'."
            )
        return True
    if average == "samples":
        raise ValueError(
            "average='samples' is meaningful only for multilabel targets (one "
            "column per label), as in scikit-learn; these labels are one column."
        )
    return False


def _swap_indicator(y: Any) -> Any:
    """``1 − y`` of a multilabel indicator matrix (anything else as it is)."""
    array = _as_2d(y)
    return y if array is None else 1 - array


def _swap_noise(kwargs: dict) -> dict:
    """The flip model of the swapped entries: a 2 × 2 matrix reversed."""
    matrix = kwargs["transition_matrix"]
    if matrix is not None and np.ndim(matrix) == 2:
        kwargs = {**kwargs, "transition_matrix": np.asarray(matrix)[::-1, ::-1]}
    return kwargs


def _averaged(name: str, y_true: Any, y_pred: Any, kwargs: dict) -> Any:
    """Specificity or NPV with a multiclass average (:mod:`._rates_average`)."""
    method = kwargs.pop("method")
    _check_common(name, method, kwargs["estimand"], kwargs["n_draws"])
    if method == "delta":
        raise ValueError(
            "method='delta' is available for average='binary' only; with "
            f"average={kwargs['average']!r} the expectation is exact and the "
            "variance exact or Monte Carlo (see the result's method)."
        )
    zero = check_zero_division(kwargs.pop("zero_division"))
    kwargs.pop("pos_label")  # ignored, as scikit-learn, unless average='binary'
    return multiclass_rate_score(name, y_true, y_pred, zero=zero, **kwargs)


def _negative_class_score(
    function: Any, name: str, y_true: Any, y_pred: Any, kwargs: dict
) -> NoisyScore | list[NoisyScore]:
    """``function`` (recall or precision) of the negative class, renamed.

    Multilabel targets: ``function`` of ``1 − y`` (each label's 0 entries).
    """
    if _check_average(kwargs["average"], y_true, y_pred):
        swapped = (_swap_indicator(y_true), _swap_indicator(y_pred))
        return _renamed(function(*swapped, **_swap_noise(kwargs)), name)
    if kwargs["average"] != "binary":
        return _averaged(name, y_true, y_pred, kwargs)
    kwargs.pop("average")
    pos_label = kwargs.pop("pos_label", 1)
    negative = _negative_label(y_true, y_pred, kwargs.get("labels"), pos_label)
    score = function(y_true, y_pred, pos_label=negative, **kwargs)
    return _renamed(score, name)


def _renamed(score: Any, name: str) -> Any:
    if isinstance(score, list):  # average=None: one score per class
        return [_renamed(s, name) for s in score]
    return dataclasses.replace(score, metric=name)


def _complement(score: Any, name: str) -> Any:
    """``1 − score``: the same variance; no exact distribution is kept."""
    if isinstance(score, list):  # average=None: one score per class
        return [_complement(s, name) for s in score]
    return dataclasses.replace(
        score,
        metric=name,
        expected=1.0 - score.expected,
        nominal=1.0 - score.nominal,
        distribution=None,
    )


_PARAMETERS_DOC = """\
    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Reference labels (``estimand="forward"``) or observed labels (``"truth"``,
        ``"remeasurement"``).
    y_pred : array-like of shape (n_samples,)
        Predicted labels, held fixed.
    q, transition_matrix, labels, pos_label, sample_weight, zero_division, \
method, estimand, n_draws, random_state
        As in :func:`expected_recall_score` (exactly one of ``q`` and
        ``transition_matrix``; ``pos_label`` names the positive class of
        ``average="binary"``, the other one is the negative class, and is
        ignored by the other averages, as in scikit-learn). ``method="delta"``
        is for ``average="binary"`` only.
    average : {"binary", "micro", "macro", "weighted"} or None, \
default="binary"
        ``"binary"``: the two-class problem of ``pos_label``. Otherwise each
        class ``k`` of ``labels`` against the rest, from its one-vs-rest counts
        ``TP_k, FP_k, FN_k, TN_k`` (those of
        :func:`sklearn.metrics.multilabel_confusion_matrix`): ``None`` gives
        one :class:`~sklearn_noisy.NoisyScore` per class, ``"macro"`` their
        unweighted mean, ``"weighted"`` their mean weighted by each class's
        true support ``TP_k + FN_k`` (as scikit-learn's recall), ``"micro"``
        the rate of the counts summed over the classes. Which results are
        exact and which Monte Carlo over ``n_draws`` redrawn confusion
        matrices (``method="monte_carlo"``): user guide :ref:`rates`.
        Multilabel indicator targets: each label's specificity and NPV are
        the recall and precision of its 0 entries (of ``1 − y``, with the
        flips of :func:`expected_recall_score`; ``"samples"`` averages over
        each sample's labels); ``"weighted"`` is offered by the false negative
        rate only.

    Returns
    -------
    NoisyScore or list of NoisyScore
        One per class for ``average=None``. ``nominal`` is the rate on
        ``y_true`` (the function of the same name without ``expected_``).
"""


@with_test_set_sampling(label_arguments=("y_true", "y_pred"))
@fill_doc(parameters=_PARAMETERS_DOC)
@supports_estimands("forward", "truth", "remeasurement")
def expected_specificity_score(
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
    """Expected specificity (true negative rate), and its variance, under flips.

    ``TN / (TN + FP)``, the recall of the negative class: exact by the recall's
    algorithm (user guide: :ref:`rates`). With a multiclass ``average``, class
    ``k`` against the rest: ``spec_k = TN_k / (TN_k + FP_k)``, exact per class
    (``average=None``) and for ``"micro"`` (``(K − 2 + accuracy)/(K − 1)``);
    the expectations of ``"macro"`` and ``"weighted"`` are exact, their
    variances Monte Carlo.

    {parameters}
    """
    kwargs = dict(
        q=q, transition_matrix=transition_matrix, labels=labels,
        pos_label=pos_label, average=average, sample_weight=sample_weight,
        zero_division=zero_division, method=method, estimand=estimand,
        n_draws=n_draws, random_state=random_state,
    )  # fmt: skip
    return _negative_class_score(
        expected_recall_score, "specificity", y_true, y_pred, kwargs
    )


@with_test_set_sampling(label_arguments=("y_true", "y_pred"))
@fill_doc(parameters=_PARAMETERS_DOC)
@supports_estimands("forward", "truth", "remeasurement")
def expected_negative_predictive_value(
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
    """Expected negative predictive value, and its variance, under flips.

    ``TN / (TN + FN)``, the precision of the negative class: the predicted
    negatives are fixed, so it is a mean of per-sample terms with a closed form
    (user guide: :ref:`rates`). With a multiclass ``average``, class ``k``
    against the rest: ``NPV_k = TN_k / (TN_k + FN_k)``, exact per class and
    for ``"micro"`` and ``"macro"`` (also with sample weights); ``"weighted"``
    (by the true support ``S_k``) has an exact expectation and a Monte Carlo
    variance.

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_negative_predictive_value
    >>> y_true = [0, 1, 2, 2, 1, 0]
    >>> y_pred = [0, 2, 2, 1, 1, 0]
    >>> expected_negative_predictive_value(y_true, y_pred, q=0.1, average="macro")
    NoisyScore(metric='negative_predictive_value', expected=0.808333, \
std=0.05621, nominal=0.833333, n_samples=6, method='exact')

    {parameters}
    """
    kwargs = dict(
        q=q, transition_matrix=transition_matrix, labels=labels,
        pos_label=pos_label, average=average, sample_weight=sample_weight,
        zero_division=zero_division, method=method, estimand=estimand,
        n_draws=n_draws, random_state=random_state,
    )  # fmt: skip
    return _negative_class_score(
        expected_precision_score, "negative_predictive_value", y_true, y_pred, kwargs
    )


@with_test_set_sampling(label_arguments=("y_true", "y_pred"))
@fill_doc(parameters=_PARAMETERS_DOC)
@supports_estimands("forward", "truth", "remeasurement")
def expected_false_positive_rate(
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
    """Expected false positive rate ``FP / (FP + TN)`` = 1 − specificity, under flips.

    The variance is the specificity's (user guide: :ref:`rates`); with a
    multiclass ``average``, ``FPR_k = 1 − spec_k`` (an undefined rate is
    ``1 − zero_division``).

    {parameters}
    """
    kwargs = dict(
        q=q, transition_matrix=transition_matrix, labels=labels,
        pos_label=pos_label, average=average, sample_weight=sample_weight,
        zero_division=zero_division, method=method, estimand=estimand,
        n_draws=n_draws, random_state=random_state,
    )  # fmt: skip
    return _complement(
        expected_specificity_score(y_true, y_pred, **kwargs), "false_positive_rate"
    )


@with_test_set_sampling(label_arguments=("y_true", "y_pred"))
@fill_doc(parameters=_PARAMETERS_DOC)
@supports_estimands("forward", "truth", "remeasurement")
def expected_false_negative_rate(
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
    """Expected false negative rate ``FN / (FN + TP)`` = 1 − recall, under flips.

    The variance is the recall's (user guide: :ref:`rates`); with a multiclass
    ``average``, ``FNR_k = 1 − recall_k`` averaged as recall (over every
    class the micro and weighted FNR are ``1 −`` accuracy). Multilabel targets, and
    ``average="samples"``, are those of :func:`expected_recall_score`.

    {parameters}
    """
    _check_average(average, y_true, y_pred, weighted_multilabel=True)
    kwargs = dict(
        q=q, transition_matrix=transition_matrix, labels=labels,
        pos_label=pos_label, average=average, sample_weight=sample_weight,
        zero_division=zero_division, method=method, estimand=estimand,
        n_draws=n_draws, random_state=random_state,
    )  # fmt: skip
    score = expected_recall_score(y_true, y_pred, **kwargs)
    return _complement(score, "false_negative_rate")


# ------------------------------------------------------------- nominal rates
def _nominal_rate(
    name: str, y_true: Any, y_pred: Any, *, pos_label: Any, labels: Any,
    average: Any, sample_weight: Any, zero_division: Any,
) -> Any:  # fmt: skip
    """Specificity or NPV of the labels as given, for every ``average``.

    Binary: scikit-learn's recall or precision of the negative class;
    multilabel: of ``1 − y``; otherwise one-vs-rest (:func:`rate_nominal`).
    """
    function = COUNT_METRICS[name].sklearn_function  # of the negative class
    if _check_average(average, y_true, y_pred):
        value = function(
            _swap_indicator(y_true), _swap_indicator(y_pred), pos_label=pos_label,
            labels=labels, average=average, sample_weight=sample_weight,
            zero_division=zero_division,
        )  # fmt: skip
        return value if average is None else float(value)
    if average != "binary":
        zero = check_zero_division(zero_division)
        return rate_nominal(
            name, y_true, y_pred, labels=labels, average=average,
            sample_weight=sample_weight, zero=zero,
        )  # fmt: skip
    negative = _negative_label(y_true, y_pred, labels, pos_label)
    return float(
        function(
            y_true, y_pred, pos_label=negative, labels=labels,
            sample_weight=sample_weight, zero_division=zero_division,
        )
    )  # fmt: skip


def specificity_score(
    y_true: Any, y_pred: Any, *, pos_label: Any = 1, labels: Any = None,
    average: str | None = "binary", sample_weight: Any = None,
    zero_division: Any = "warn",
) -> Any:  # fmt: skip
    """Specificity ``TN / (TN + FP)``: scikit-learn's recall of the negative class.

    With ``average`` other than ``"binary"``: each class against the rest,
    averaged as in :func:`expected_specificity_score` (``None``: an array, one
    value per class).

    Examples
    --------
    >>> from sklearn_noisy.metrics import specificity_score
    >>> specificity_score([0, 0, 1, 1], [0, 1, 1, 1])
    0.5
    >>> specificity_score([0, 1, 2, 2], [0, 2, 2, 1], average="macro")
    0.7222...
    """
    return _nominal_rate(
        "specificity", y_true, y_pred, pos_label=pos_label, labels=labels,
        average=average, sample_weight=sample_weight, zero_division=zero_division,
    )  # fmt: skip


def negative_predictive_value(
    y_true: Any, y_pred: Any, *, pos_label: Any = 1, labels: Any = None,
    average: str | None = "binary", sample_weight: Any = None,
    zero_division: Any = "warn",
) -> Any:  # fmt: skip
    """Negative predictive value ``TN / (TN + FN)``: the negative class's precision.

    With ``average`` other than ``"binary"``: each class against the rest,
    averaged as in :func:`expected_negative_predictive_value`.

    Examples
    --------
    >>> from sklearn_noisy.metrics import negative_predictive_value
    >>> negative_predictive_value([0, 0, 1, 1], [0, 1, 1, 1])
    1.0
    """
    return _nominal_rate(
        "negative_predictive_value", y_true, y_pred, pos_label=pos_label,
        labels=labels, average=average, sample_weight=sample_weight,
        zero_division=zero_division,
    )  # fmt: skip


def false_positive_rate(
    y_true: Any, y_pred: Any, *, pos_label: Any = 1, labels: Any = None,
    average: str | None = "binary", sample_weight: Any = None,
    zero_division: Any = "warn",
) -> Any:  # fmt: skip
    """False positive rate ``FP / (FP + TN)`` = 1 − :func:`specificity_score`.

    Examples
    --------
    >>> from sklearn_noisy.metrics import false_positive_rate
    >>> false_positive_rate([0, 0, 1, 1], [0, 1, 1, 1])
    0.5
    """
    return 1.0 - specificity_score(
        y_true, y_pred, pos_label=pos_label, labels=labels, average=average,
        sample_weight=sample_weight, zero_division=zero_division,
    )  # fmt: skip


def false_negative_rate(
    y_true: Any, y_pred: Any, *, pos_label: Any = 1, labels: Any = None,
    average: str | None = "binary", sample_weight: Any = None,
    zero_division: Any = "warn",
) -> Any:  # fmt: skip
    """False negative rate ``FN / (FN + TP)`` = 1 − scikit-learn's recall.

    Examples
    --------
    >>> from sklearn_noisy.metrics import false_negative_rate
    >>> false_negative_rate([0, 0, 1, 1], [0, 0, 0, 1])
    0.5
    """
    _check_average(average, y_true, y_pred, weighted_multilabel=True)
    recall = recall_score(
        y_true, y_pred, pos_label=pos_label, labels=labels, average=average,
        sample_weight=sample_weight, zero_division=zero_division,
    )  # fmt: skip
    return 1.0 - (float(recall) if average is not None else np.asarray(recall))
