"""Expected precision, recall, F1 and balanced accuracy under label flips.

The public function of every count metric is built from its definition by
:func:`count_metric_function`; its body is
:func:`~sklearn_noisy.metrics._engines.counts.score.count_score`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from .._noisy_score import NoisyScore
from ..utils._docstring import fill_doc
from ..utils._validation import ESTIMANDS, check_estimand, supports_estimands
from ._definitions.counts import COUNT_METRICS, CountMetric
from ._engines.counts.sampling import count_sampling
from ._engines.counts.score import count_score
from ._engines.test_set_sampling import with_test_set_sampling

__all__ = [
    "count_metric_function",
    "expected_balanced_accuracy_score",
    "expected_f1_score",
    "expected_precision_score",
    "expected_recall_score",
]

#: The parameters of every count metric: ``{options}`` the metric's own.
_PARAMETERS = """\
    y_true : array-like of shape (n_samples,)
        The reference labels, taken as exact, around which the labels flip
        (``estimand="forward"``), or the observed noisy labels (``"truth"``,
        ``"remeasurement"``). Any label values.
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
        ``labels=[negative, positive]`` unless both classes occur in the data.
{options}
    method : {{"exact", "delta"}}, default="exact"
        ``"exact"``: the Poisson-binomial algorithm (user guide:
        :ref:`formula_binary_counts`). ``"delta"``: the second-order delta
        method in (TP, FN), for very large samples (its accuracy is in the same
        section); binary only.
    estimand : {{"auto", "truth", "remeasurement", "forward"}}, default="auto"
        Which question ``expected`` answers (user guide: :ref:`estimands`);
        ``"auto"`` is ``"truth"``.
        ``"forward"``: ``y_true`` is exact and the labels flip around it.
        ``"truth"``: ``y_true`` holds the noisy labels and the result
        estimates the metric against the unknown true classes, from the
        de-noised confusion matrix (:ref:`formula_truth`).
        ``"remeasurement"``: ``y_true`` holds the noisy labels and the result
        is the nominal metric, unbiased for the metric of a fresh labelling,
        with its spread over such labellings. Both need an invertible flip
        model, else a ``ValueError``; their variance estimates are clipped at
        0. The ``method`` option applies to ``"forward"`` only.
    n_draws : int, default=1000
        Monte Carlo redraws, used only where the result is Monte Carlo.
    random_state : int, numpy.random.Generator or None, default=0
        Seed of the Monte Carlo redraws; the default makes every result
        reproducible (None draws fresh entropy)."""

#: The options of the metrics averaged over classes (precision, recall, F1
#: and the rates).
AVERAGED_PARAMETERS = _PARAMETERS.format(
    options="""\
    labels : array-like, default=None
        The classes, in the order of ``transition_matrix`` and of the results
        of ``average=None``; by default the sorted labels present. As in
        scikit-learn it may leave out classes present or name absent ones.
    pos_label : int, float, bool or str, default=1
        The positive class of ``average="binary"``, as in scikit-learn.
    average : {"binary", "micro", "macro", "weighted", "samples"} or None, \
default="binary"
        As in scikit-learn (the rates: each class against the rest; which
        results are exact: user guide :ref:`formula_multiclass`). Multilabel
        indicator targets flip entry by entry.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights, as in scikit-learn.
    zero_division : {"warn", 0.0, 1.0, np.nan}, default="warn"
        The value of a ratio whose denominator is 0, as in scikit-learn;
        under noise it enters the expectation with the probability of that
        event."""
)

#: The options of the count metrics not averaged over classes.
UNAVERAGED_PARAMETERS = _PARAMETERS.format(
    options="""\
    labels : array-like, default=None
        The classes, in the order of ``transition_matrix``; by default the
        sorted labels present. More than two make the problem multiclass.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights, as in scikit-learn."""
)

AVERAGED_RETURNS = """\
    score : NoisyScore or list of NoisyScore
        One :class:`~sklearn_noisy.NoisyScore`, or one per class in the order
        of ``labels`` for ``average=None``. ``nominal`` is the metric on
        ``y_true`` with the same options, to the last bit; ``method`` is
        ``"exact"``, ``"delta"`` or ``"monte_carlo"``."""


def _averaged(
    y_true: Any, y_pred: Any, *, q: Any = None, transition_matrix: Any = None,
    labels: Any = None, pos_label: Any = 1, average: str | None = "binary",
    sample_weight: Any = None, zero_division: Any = "warn", method: str = "exact",
    estimand: str = "auto", n_draws: int = 1000, random_state: Any = 0,
) -> NoisyScore | list[NoisyScore]:  # fmt: skip
    """The signature of the metrics averaged over classes."""


def _unaveraged(
    y_true: Any, y_pred: Any, *, q: Any = None, transition_matrix: Any = None,
    labels: Any = None, sample_weight: Any = None, adjusted: bool = False,
    method: str = "exact", estimand: str = "auto", n_draws: int = 1000,
    random_state: Any = 0,
) -> NoisyScore:  # fmt: skip
    """The signature of the others: their own ``parameters`` go after ``labels``."""


def _signature(definition: CountMetric) -> inspect.Signature:
    if definition.averaged:
        return inspect.signature(_averaged)
    signature = inspect.signature(_unaveraged)
    fields = [
        p
        for p in signature.parameters.values()
        if p.name != "adjusted" or definition.adjustable
    ]
    keyword = inspect.Parameter.KEYWORD_ONLY
    own = [inspect.Parameter(n, keyword, default=d) for n, d in definition.parameters]
    return signature.replace(parameters=[*fields[:5], *own, *fields[5:]])


def count_metric_function(
    definition: CountMetric,
    *,
    name: str = "",
    doc: str = "",
    module: str = "sklearn_noisy.metrics",
) -> Callable[..., Any]:
    """The public ``expected_*`` function of a count metric, from its definition.

    Its options are scikit-learn's (``average`` and ``zero_division`` for the
    metrics averaged over classes, the definition's own ``parameters`` and
    ``adjusted`` for the others), the flip model's and the engines'; its body
    is :func:`~sklearn_noisy.metrics._engines.counts.score.count_score`.
    ``name`` and ``doc`` default to the
    definition's ``function_name`` and ``doc`` (whose ``{parameters}`` line
    takes the common options); ``module`` is where it is exported.
    """
    name = name or definition.function_name
    signature = _signature(definition)
    defaults = {p.name: p.default for p in list(signature.parameters.values())[2:]}

    def score(y_true: Any, y_pred: Any, **options: Any) -> Any:
        for key in options:
            if key not in defaults:
                raise TypeError(f"{name}() got an unexpected keyword argument {key!r}")
        options = {**defaults, **options}
        options["estimand"] = check_estimand(
            options["estimand"], metric=definition.name, supported=ESTIMANDS
        )
        return count_score(definition, y_true, y_pred, options)

    score.__signature__ = signature  # type: ignore[attr-defined]
    score.__name__ = score.__qualname__ = name
    score.__module__ = module  # exported there, pickled from there
    score.__doc__ = doc or definition.doc or None
    parameters = AVERAGED_PARAMETERS if definition.averaged else UNAVERAGED_PARAMETERS
    score = fill_doc(parameters=parameters, returns=AVERAGED_RETURNS)(score)
    score = supports_estimands("forward", "truth", "remeasurement")(score)
    return with_test_set_sampling(
        count_sampling(definition), method="delta", label_arguments=("y_true", "y_pred")
    )(score)


def metric_doc(summary: str, body: str, sklearn_name: str, example: str) -> str:
    """The docstring of a count metric: ``{parameters}`` and ``{returns}`` filled."""
    see_also = (
        f"""
    See Also
    --------
    sklearn.metrics.{sklearn_name} : The metric on exact labels.
"""
        if sklearn_name
        else ""
    )
    return f"""{summary}

    {body}

    Parameters
    ----------
    {{parameters}}

    Returns
    -------
    {{returns}}
{see_also}
    Examples
    --------
    >>> from sklearn_noisy.metrics import {example}
    """


expected_precision_score = count_metric_function(
    COUNT_METRICS["precision"],
    name="expected_precision_score",
    module=__name__,
    doc=metric_doc(
        "Expected precision, and its variance, under label flips.",
        """Precision ``TP / n_P`` has a denominator fixed by the predictions: it is
    linear in the labels and its moments are exact. Read more in the
    :ref:`User Guide <formula_binary_counts>`.""",
        "precision_score",
        """expected_precision_score
    >>> y_true, y_pred = [0, 1, 1, 0, 1, 1], [0, 1, 0, 1, 1, 1]
    >>> expected_precision_score(y_true, y_pred, q=0.1, estimand="forward")
    NoisyScore(metric='precision', expected=0.7, std=0.15, nominal=0.75, \
    n_samples=6, method='exact', estimand='forward', sampling_std=0.1897)""",
    ),
)

expected_recall_score = count_metric_function(
    COUNT_METRICS["recall"],
    name="expected_recall_score",
    module=__name__,
    doc=metric_doc(
        "Expected recall, and its variance, under label flips.",
        """Recall ``TP / S`` divides by the number ``S`` of observed positives; the
    moments are exact sums over the joint law of TP and FN, or a delta-method
    approximation. Read more in the :ref:`User Guide <formula_binary_counts>`.""",
        "recall_score",
        """expected_recall_score
    >>> y_true, y_pred = [0, 1, 1, 0, 1, 1], [0, 1, 0, 1, 1, 1]
    >>> expected_recall_score(y_true, y_pred, q=0.1, estimand="forward")
    NoisyScore(metric='recall', expected=0.739034, std=0.1082, nominal=0.75, \
    n_samples=6, method='exact', estimand='forward', sampling_std=0.2259)""",
    ),
)

expected_f1_score = count_metric_function(
    COUNT_METRICS["f1"],
    name="expected_f1_score",
    module=__name__,
    doc=metric_doc(
        "Expected F1 score, and its variance, under label flips.",
        """``F1 = 2 TP / (n_P + S)`` with ``S`` the number of observed positives; the
    moments are exact sums over the joint law of TP and FN, or a delta-method
    approximation. Read more in the :ref:`User Guide <formula_binary_counts>`.""",
        "f1_score",
        """expected_f1_score
    >>> y_true, y_pred = [0, 1, 1, 0, 1, 1], [0, 1, 0, 1, 1, 1]
    >>> expected_f1_score(y_true, y_pred, q=0.1, estimand="forward").expected
    0.7118...""",
    ),
)

expected_balanced_accuracy_score = count_metric_function(
    COUNT_METRICS["balanced_accuracy"],
    name="expected_balanced_accuracy_score",
    module=__name__,
    doc="""Expected balanced accuracy, and its variance, under label flips.

    ``BA = ½ (TP/S + TN/(M - S))`` with ``S`` the number of observed positives:
    exact for binary labels; for multiclass labels the expectation is exact and
    the variance Monte Carlo. As in scikit-learn, a class absent from the
    observed labels is left out of the mean. Read more in the
    :ref:`User Guide <formula_binary_counts>`.

    Parameters
    ----------
    {parameters}
    adjusted : bool, default=False
        Rescale so that chance scores 0 and perfect 1, as in scikit-learn.

    Returns
    -------
    score : NoisyScore
        ``nominal`` is :func:`sklearn.metrics.balanced_accuracy_score` on
        ``y_true``; ``method`` is ``"exact"``, ``"delta"`` or ``"monte_carlo"``.

    See Also
    --------
    sklearn.metrics.balanced_accuracy_score : The metric on exact labels.

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_balanced_accuracy_score
    >>> y_true = [0, 1, 0, 0, 1, 0]
    >>> y_pred = [0, 1, 0, 0, 0, 1]
    >>> expected_balanced_accuracy_score(y_true, y_pred, q=0.1,
    ...     estimand="forward").expected
    0.6030...
    """,
)
