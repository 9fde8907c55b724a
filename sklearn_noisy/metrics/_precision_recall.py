"""The public ``expected_*`` function of every count metric, from its definition.

Its body is :func:`~sklearn_noisy.metrics._engines.counts.score.count_score`.
"""

from __future__ import annotations

import functools
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

_RETURNS = """\
    score : NoisyScore
        ``nominal`` is the metric on ``y_true`` with the same options, to the
        last bit; ``method`` is ``"exact"``, ``"delta"`` or ``"monte_carlo"``."""


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


@functools.cache
def count_metric_function(definition: CountMetric) -> Callable[..., Any]:
    """The public function of a count metric (one per definition): its options,
    name and docstring from the definition, exported from ``sklearn_noisy.metrics``."""
    name = definition.function_name
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
    score.__module__ = "sklearn_noisy.metrics"  # exported there, pickled from there
    score.__doc__ = definition.doc or None
    if definition.averaged:
        score = fill_doc(parameters=AVERAGED_PARAMETERS, returns=AVERAGED_RETURNS)(
            score
        )
    else:
        score = fill_doc(parameters=UNAVERAGED_PARAMETERS, returns=_RETURNS)(score)
    score = supports_estimands("forward", "truth", "remeasurement")(score)
    return with_test_set_sampling(
        count_sampling(definition), method="delta", label_arguments=("y_true", "y_pred")
    )(score)


#: The function of every count metric that has one, by name.
_FUNCTIONS = {
    d.function_name: count_metric_function(d)
    for d in COUNT_METRICS.values()
    if d.function_name
}
globals().update(_FUNCTIONS)
__all__ = ["count_metric_function", *_FUNCTIONS]
