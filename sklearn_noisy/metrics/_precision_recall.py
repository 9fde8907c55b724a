"""Expected precision, recall, F1, balanced accuracy and MCC under label flips.

The public functions of the binary count metrics. Binary labels are exact
(:mod:`._binary_average`; user guide: :ref:`formula_binary_counts`):
precision in closed form, the others by the Poisson-binomial algorithm of
:mod:`._binary_counts` or, with ``method="delta"``, the second-order delta
method. Multiclass labels go through :mod:`._multiclass_average`: the micro
average of precision, recall and F1 equals the accuracy and is exact; the
macro and weighted averages, and multiclass balanced accuracy and MCC, are
Monte Carlo. Balanced accuracy and MCC are symmetric in the two classes.
That is ``estimand="forward"``; ``"truth"`` and ``"remeasurement"`` go through
the confusion matrix (:mod:`._count_estimands`; user guide:
:ref:`estimands`).
"""

from __future__ import annotations

from typing import Any

from .._noisy_score import NoisyScore
from ..utils._docstring import fill_doc
from ..utils._validation import check_estimand, supports_estimands
from ._binary_average import (
    _METHODS,
    _NOISE_PARAMETERS,
    _binary_estimand,
    _binary_present_labels,
    _binary_problem,
    _binary_score,
    _check_option,
    _precision_measurement,
)
from ._binary_counts import _DELTA_NOTES, _METHOD_PARAMETER
from ._count_estimands import ESTIMAND_PARAMETER, TRUTH_NOTES
from ._multiclass_average import _MC_PARAMETERS, _multiclass_score

__all__ = [
    "expected_balanced_accuracy_score",
    "expected_f1_score",
    "expected_matthews_corrcoef",
    "expected_precision_score",
    "expected_recall_score",
]

_AVERAGES = ("binary", "micro", "macro", "weighted")


def _prf_score(
    metric: str,
    y_true: Any,
    y_pred: Any,
    *,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    pos_label: Any,
    average: Any,
    method: Any,
    estimand: Any,
    n_draws: int,
    random_state: Any,
) -> NoisyScore:
    """Check the options and compute precision, recall or F1 by the right path."""
    _check_option(average, _AVERAGES, name="average")
    _check_option(method, _METHODS, name="method")
    check_estimand(estimand, metric=metric, supported=_PUBLIC[metric].estimands)
    if average != "binary" and method == "delta":
        raise ValueError(
            "method='delta' is available for average='binary' only; with "
            f"average={average!r} the result is exact (micro) or Monte Carlo."
        )
    if average != "binary":
        return _multiclass_score(
            metric,
            y_true,
            y_pred,
            q=q,
            transition_matrix=transition_matrix,
            labels=labels,
            average=average,
            n_draws=n_draws,
            random_state=random_state,
            estimand=estimand,
        )
    problem = _binary_problem(
        y_true,
        y_pred,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        pos_label=pos_label,
    )
    if estimand != "forward":
        return _binary_estimand(metric, problem, estimand)
    if metric == "precision":
        return _precision_measurement(problem)
    return _binary_score(metric, problem, method)


_PRF_PARAMETERS = (
    _NOISE_PARAMETERS
    + """
    labels : array-like, default=None
        The classes, in the order of the rows of ``transition_matrix``; by
        default the sorted labels present in ``y_true`` and ``y_pred``. With
        ``average="macro"`` or ``"weighted"`` it is also passed to the
        scikit-learn metric, as there.
    pos_label : int, float, bool or str, default=1
        The positive class for ``average="binary"``, as in scikit-learn.
    average : {"binary", "micro", "macro", "weighted"}, default="binary"
        ``"binary"``: exact (``method="exact"``). ``"micro"``: equal to the
        accuracy, exact (user guide: :ref:`formula_accuracy`). ``"macro"`` and
        ``"weighted"``: Monte Carlo over ``n_draws`` redraws of the labels
        (:func:`~sklearn_noisy.metrics.monte_carlo_score`; ``NoisyScore.method``
        is then ``"monte_carlo"``)."""
    + _METHOD_PARAMETER
    + ESTIMAND_PARAMETER
)


@supports_estimands("forward", "truth", "remeasurement")
@fill_doc(
    parameters=_PRF_PARAMETERS,
    mc_parameters=_MC_PARAMETERS,
    delta_notes=_DELTA_NOTES,
    truth_notes=TRUTH_NOTES,
)
def expected_precision_score(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    pos_label: Any = 1,
    average: str = "binary",
    method: str = "exact",
    estimand: str = "forward",
    n_draws: int = 1000,
    random_state: Any = None,
) -> NoisyScore:
    """Expected precision, and its variance, under label flips.

    Precision ``TP / n_P`` has a denominator fixed by the predictions, so it is
    linear in the labels and its moments have a closed form (user guide:
    :ref:`formula_binary_counts`)::

        E[precision]   = (1/n_P) Σ_{i∈P} π_i
        Var[precision] = (1/n_P²) Σ_{i∈P} π_i (1 - π_i)

    where ``P`` are the ``n_P`` samples predicted positive and ``π_i`` is the
    probability that sample ``i`` is observed positive. With no predicted
    positive the precision is 0, as scikit-learn's default
    ``zero_division="warn"`` returns (no warning is emitted here). These are
    the moments of the ``"forward"`` estimand; see ``estimand`` for the
    others (user guide: :ref:`estimands`).

    Against the truth (``estimand="truth"``, user guide:
    :ref:`formula_truth`) the binary precision with flips ``q`` is the
    unbiased ``(1/n_P) Σ_{i∈P} (ỹ_i - q_i)/(1 - 2q_i)`` with its exact
    variance ``(1/n_P²) Σ_{i∈P} q_i (1 - q_i)/(1 - 2q_i)²``; with a
    transition matrix, and for the micro and macro averages, it is the same
    linear function of the de-noised confusion matrix, unbiased with an
    unbiased variance estimate (``method="exact"``). The weighted average
    divides by estimated class supports and is consistent
    (``method="delta"``, as the ratio metrics: see
    :func:`expected_recall_score`). The estimate can leave [0, 1].

    Parameters
    ----------
    {parameters}
    {mc_parameters}

    Returns
    -------
    score : NoisyScore
        ``nominal`` is :func:`sklearn.metrics.precision_score` on ``y_true``
        (with ``zero_division=0``, computed from the counts). ``method`` is
        ``"exact"`` (the delta method of a linear metric is exact) or
        ``"monte_carlo"`` for ``average="macro"``/``"weighted"`` with
        ``estimand="forward"``; ``"delta"`` for the weighted average of the
        other estimands.

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
    >>> expected_precision_score(y_true, y_pred, q=0.1, estimand="truth").expected
    0.8125
    """
    return _prf_score(
        "precision",
        y_true,
        y_pred,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        pos_label=pos_label,
        average=average,
        method=method,
        estimand=estimand,
        n_draws=n_draws,
        random_state=random_state,
    )


@supports_estimands("forward", "truth", "remeasurement")
@fill_doc(
    parameters=_PRF_PARAMETERS,
    mc_parameters=_MC_PARAMETERS,
    delta_notes=_DELTA_NOTES,
    truth_notes=TRUTH_NOTES,
)
def expected_recall_score(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    pos_label: Any = 1,
    average: str = "binary",
    method: str = "exact",
    estimand: str = "forward",
    n_draws: int = 1000,
    random_state: Any = None,
) -> NoisyScore:
    """Expected recall, and its variance, under label flips.

    Recall ``TP / S`` divides by the number ``S`` of observed positives, which
    itself depends on the labels. Given ``S = n`` it is ``TP / n``, affine in
    TP, so the exact moments are finite sums over the joint law of TP and FN,
    two independent Poisson-binomial counts (user guide:
    :ref:`formula_binary_counts`, O(M log² M)). With no observed positive the
    recall is 0, as scikit-learn's default ``zero_division="warn"`` returns (no
    warning is emitted here).
    These are the moments of ``estimand="forward"``, which takes ``y_true`` as
    exact; ``estimand`` chooses the question (user guide: :ref:`estimands`).

    Parameters
    ----------
    {parameters}
    {mc_parameters}

    Returns
    -------
    score : NoisyScore
        ``nominal`` is :func:`sklearn.metrics.recall_score` on ``y_true``.
        ``method`` is ``"exact"``, ``"delta"`` or ``"monte_carlo"`` (``average=
        "macro"``/``"weighted"``).

    See Also
    --------
    sklearn.metrics.recall_score : The metric on exact labels.
    expected_f1_score : The expected F1 score.

    Notes
    -----
    {truth_notes}

    With ``estimand="forward"`` and ``method="delta"``:

    {delta_notes}

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_recall_score
    >>> y_true = [0, 1, 1, 0, 1, 1]
    >>> y_pred = [0, 1, 0, 1, 1, 1]
    >>> score = expected_recall_score(y_true, y_pred, q=0.1)
    >>> score
    NoisyScore(metric='recall', expected=0.739034, std=0.1082, nominal=0.75, \
n_samples=6, method='exact')
    >>> expected_recall_score(y_true, y_pred, q=0.1, method="delta").method
    'delta'
    """
    return _prf_score(
        "recall",
        y_true,
        y_pred,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        pos_label=pos_label,
        average=average,
        method=method,
        estimand=estimand,
        n_draws=n_draws,
        random_state=random_state,
    )


@supports_estimands("forward", "truth", "remeasurement")
@fill_doc(
    parameters=_PRF_PARAMETERS,
    mc_parameters=_MC_PARAMETERS,
    delta_notes=_DELTA_NOTES,
    truth_notes=TRUTH_NOTES,
)
def expected_f1_score(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    pos_label: Any = 1,
    average: str = "binary",
    method: str = "exact",
    estimand: str = "forward",
    n_draws: int = 1000,
    random_state: Any = None,
) -> NoisyScore:
    """Expected F1 score, and its variance, under label flips.

    ``F1 = 2 TP / (n_P + S)``; given the number ``S = n`` of observed positives
    it is affine in TP, so the moments are exact sums over the law of (TP, FN)
    (user guide: :ref:`formula_binary_counts`, O(M log² M)). When
    ``n_P + S = 0`` the F1 score is 0, as scikit-learn's default
    ``zero_division="warn"`` returns (no warning is emitted here).
    These are the moments of ``estimand="forward"``, which takes ``y_true`` as
    exact; ``estimand`` chooses the question (user guide: :ref:`estimands`).

    Parameters
    ----------
    {parameters}
    {mc_parameters}

    Returns
    -------
    score : NoisyScore
        ``nominal`` is :func:`sklearn.metrics.f1_score` on ``y_true``.
        ``method`` is ``"exact"``, ``"delta"`` or ``"monte_carlo"`` (``average=
        "macro"``/``"weighted"``).

    See Also
    --------
    sklearn.metrics.f1_score : The metric on exact labels.

    Notes
    -----
    {truth_notes}

    With ``estimand="forward"`` and ``method="delta"``:

    {delta_notes}

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_f1_score
    >>> y_true = [0, 1, 1, 0, 1, 1]
    >>> y_pred = [0, 1, 0, 1, 1, 1]
    >>> expected_f1_score(y_true, y_pred, q=0.1).expected
    0.7118...
    """
    return _prf_score(
        "f1",
        y_true,
        y_pred,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        pos_label=pos_label,
        average=average,
        method=method,
        estimand=estimand,
        n_draws=n_draws,
        random_state=random_state,
    )


def _ba_mcc_score(
    metric: str,
    y_true: Any,
    y_pred: Any,
    *,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    method: Any,
    estimand: Any,
    n_draws: int,
    random_state: Any,
) -> NoisyScore:
    """Check the options; binary labels are exact, multiclass Monte Carlo."""
    _check_option(method, _METHODS, name="method")
    check_estimand(estimand, metric=metric, supported=_PUBLIC[metric].estimands)
    classes = _binary_present_labels(y_true, y_pred, labels)
    if classes is None:
        if method == "delta":
            raise ValueError(
                "method='delta' is available for binary labels only; multiclass "
                f"{metric} is computed by Monte Carlo."
            )
        return _multiclass_score(
            metric,
            y_true,
            y_pred,
            q=q,
            transition_matrix=transition_matrix,
            labels=labels,
            average=None,
            n_draws=n_draws,
            random_state=random_state,
            estimand=estimand,
        )
    # Balanced accuracy and MCC are symmetric in the two classes: any of them
    # can play the positive one.
    problem = _binary_problem(
        y_true,
        y_pred,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        pos_label=classes[-1],
    )
    if estimand != "forward":
        return _binary_estimand(metric, problem, estimand)
    return _binary_score(metric, problem, method)


_BA_MCC_PARAMETERS = (
    _NOISE_PARAMETERS
    + """
    labels : array-like, default=None
        The classes, in the order of the rows of ``transition_matrix``; by
        default the sorted labels present in ``y_true`` and ``y_pred``. More
        than two classes make the problem multiclass (Monte Carlo)."""
    + _METHOD_PARAMETER
    + ESTIMAND_PARAMETER
    + "\n"
    + _MC_PARAMETERS
)


@supports_estimands("forward", "truth", "remeasurement")
@fill_doc(
    parameters=_BA_MCC_PARAMETERS, delta_notes=_DELTA_NOTES, truth_notes=TRUTH_NOTES
)
def expected_balanced_accuracy_score(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    method: str = "exact",
    estimand: str = "forward",
    n_draws: int = 1000,
    random_state: Any = None,
) -> NoisyScore:
    """Expected balanced accuracy, and its variance, under label flips.

    ``BA = ½ (TP/S + TN/(M - S))`` with ``S`` the number of observed positives.
    Given ``S = n`` it is affine in TP, so the moments are exact sums over the
    law of (TP, FN) (user guide: :ref:`formula_binary_counts`, O(M log² M)). As
    in scikit-learn, when the observed labels hold a single class only that
    class's recall is averaged (``BA = n_N/M`` with no observed positive,
    ``TP/M`` with no observed negative); no warning is emitted. Binary labels
    are exact; multiclass labels are computed by Monte Carlo
    (:func:`~sklearn_noisy.metrics.monte_carlo_score`).
    These are the moments of ``estimand="forward"``, which takes ``y_true`` as
    exact; ``estimand`` chooses the question (user guide: :ref:`estimands`).

    Parameters
    ----------
    {parameters}

    Returns
    -------
    score : NoisyScore
        ``nominal`` is :func:`sklearn.metrics.balanced_accuracy_score` on
        ``y_true``. ``method`` is ``"exact"``, ``"delta"`` or
        ``"monte_carlo"`` (multiclass).

    See Also
    --------
    sklearn.metrics.balanced_accuracy_score : The metric on exact labels.

    Notes
    -----
    {truth_notes}

    With ``estimand="forward"`` and ``method="delta"``:

    {delta_notes}

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_balanced_accuracy_score
    >>> y_true = [0, 1, 0, 0, 1, 0]
    >>> y_pred = [0, 1, 0, 0, 0, 1]
    >>> expected_balanced_accuracy_score(y_true, y_pred, q=0.0).expected
    0.625
    >>> expected_balanced_accuracy_score(y_true, y_pred, q=0.1).expected
    0.6030...
    """
    return _ba_mcc_score(
        "balanced_accuracy",
        y_true,
        y_pred,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        method=method,
        estimand=estimand,
        n_draws=n_draws,
        random_state=random_state,
    )


@supports_estimands("forward", "truth", "remeasurement")
@fill_doc(
    parameters=_BA_MCC_PARAMETERS, delta_notes=_DELTA_NOTES, truth_notes=TRUTH_NOTES
)
def expected_matthews_corrcoef(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    method: str = "exact",
    estimand: str = "forward",
    n_draws: int = 1000,
    random_state: Any = None,
) -> NoisyScore:
    """Expected Matthews correlation coefficient, and its variance, under flips.

    ``MCC = (M·TP - n_P S) / √(n_P n_N S (M - S))`` with ``S`` the number of
    observed positives. Given ``S = n`` it is affine in TP, so the moments are
    exact sums over the law of (TP, FN) (user guide:
    :ref:`formula_binary_counts`, O(M log² M)). Where the denominator vanishes
    the MCC is 0, as in scikit-learn. Binary labels are exact; multiclass labels
    are computed by Monte Carlo
    (:func:`~sklearn_noisy.metrics.monte_carlo_score`).
    These are the moments of ``estimand="forward"``, which takes ``y_true`` as
    exact; ``estimand`` chooses the question (user guide: :ref:`estimands`).

    Parameters
    ----------
    {parameters}

    Returns
    -------
    score : NoisyScore
        ``nominal`` is :func:`sklearn.metrics.matthews_corrcoef` on ``y_true``.
        ``method`` is ``"exact"``, ``"delta"`` or ``"monte_carlo"``
        (multiclass).

    See Also
    --------
    sklearn.metrics.matthews_corrcoef : The metric on exact labels.

    Notes
    -----
    {truth_notes}

    With ``estimand="forward"`` and ``method="delta"``:

    {delta_notes}

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_matthews_corrcoef
    >>> y_true = [1, 1, 1, 0]
    >>> y_pred = [1, 0, 1, 1]
    >>> expected_matthews_corrcoef(y_true, y_pred, q=0.0).expected
    -0.3333...
    >>> expected_matthews_corrcoef(y_true, y_pred, q=0.2).expected
    -0.1914...
    """
    return _ba_mcc_score(
        "matthews_corrcoef",
        y_true,
        y_pred,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        method=method,
        estimand=estimand,
        n_draws=n_draws,
        random_state=random_state,
    )


#: The public functions, whose ``estimands`` the shared paths check against.
_PUBLIC = {
    "precision": expected_precision_score,
    "recall": expected_recall_score,
    "f1": expected_f1_score,
    "balanced_accuracy": expected_balanced_accuracy_score,
    "matthews_corrcoef": expected_matthews_corrcoef,
}
