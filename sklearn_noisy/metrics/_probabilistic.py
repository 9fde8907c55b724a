"""Expected Brier score and log-loss under label flips.

Each sample's loss ``L[i, j]`` is known for every label ``j`` it can be
observed with, so the moments over the flips are exact sums over the samples
(user guide: :ref:`formula_probabilistic`; for ``estimand="truth"``,
:ref:`formula_truth`).
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np

from .._noisy_score import NoisyScore
from ..utils._arrays import as_array, check_same_length, chunks, weighted_totals
from ..utils._docstring import fill_doc
from ..utils._labels import EncodedLabels, as_label_array
from ..utils._noise import FlipNoise
from ..utils._validation import ESTIMANDS, check_estimand, supports_estimands
from ._definitions.probabilistic import (
    BRIER_SCORE_LOSS,
    LOG_LOSS,
    Loss,
    ProbabilisticLoss,
    _binary_problem,
    _check_proba,
    _classes_of,
)
from ._engines.counts.checks import check_bool, check_option, weights_and_scale
from ._engines.counts.distributions import MAX_LOSS_SAMPLES, loss_distribution
from ._engines.counts.estimands import (
    check_remeasurable,
    class_function_estimate,
    observation_matrices,
)
from ._engines.test_set_sampling import with_test_set_sampling

__all__ = ["expected_brier_score_loss", "expected_log_loss"]


class _Problem(NamedTuple):
    """Validated inputs of one call; the metric is ``scale · Σ w ℓ / divisor``."""

    loss: Loss
    proba: np.ndarray
    index: EncodedLabels | np.ndarray
    noise: FlipNoise
    weight: np.ndarray | None
    scale: float
    divisor: float


def _label_indicator(y_true: Any) -> np.ndarray | None:
    """A 2-D ``y_true`` as a 0/1 label-indicator matrix (None for 1-D labels)."""
    array = as_array(y_true)
    if array.ndim != 2 or array.shape[1] < 2:
        return None
    if array.dtype.kind not in "biuf" or not np.isin(array, (0, 1)).all():
        raise ValueError(
            "A 2-D y_true must be a label-indicator matrix of 0 and 1 (one "
            f"column per class); got shape {array.shape} with other values."
        )
    return array.astype(np.int8)


def _problem(definition: ProbabilisticLoss, arguments: dict[str, Any]) -> _Problem:
    """Validate the ``arguments`` of a call (missing ones take their defaults).

    An indicator ``y_true`` with one 1 per row is read as the columns' classes;
    else it is multilabel: one binary sample per entry, each flipped on its own
    with its row's ``q`` (scikit-learn's loss of a row sums its entries).
    """
    y_true, labels = arguments["y_true"], arguments.get("labels")
    transition_matrix = arguments.get("transition_matrix")
    indicator = _label_indicator(y_true)
    multilabel = indicator is not None and np.any(indicator.sum(axis=1) != 1)
    if indicator is not None and not multilabel:
        y_true = indicator.argmax(axis=1)
        labels = np.arange(indicator.shape[1]) if labels is None else labels
    proba, eps = _check_proba(arguments["y_proba"])
    half = arguments.get("scale_by_half", "auto")
    if multilabel:
        if proba.shape != indicator.shape:
            raise ValueError(
                f"y_proba must have the shape of the label-indicator y_true "
                f"{indicator.shape}; got {proba.shape}."
            )
        if transition_matrix is not None or labels is not None:
            raise ValueError(
                "A multilabel y_true (rows with other than one 1) takes q, each "
                "entry flipped on its own; transition_matrix and labels apply to "
                "class labels."
            )
        (n_samples, n_labels), n_classes = indicator.shape, 2
        index, order = indicator.ravel(), None
        factor = 0.5 if (n_labels == 2 if half == "auto" else half) else 1.0
    else:
        y_true = as_label_array(y_true, name="y_true")
        n_samples, n_labels = proba.shape[0], 1
        check_same_length(y_true, proba, "y_proba")
        if proba.ndim == 1:
            n_classes = 2
            index, order = _binary_problem(
                y_true,
                pos_label_rules=definition.pos_label,
                labels=labels,
                pos_label=arguments.get("pos_label"),
                need_pair=transition_matrix is not None,
            )
        else:
            n_classes = proba.shape[1]
            index, classes, order = _classes_of(y_true, labels)
            if classes.size != n_classes:
                raise ValueError(
                    f"y_proba has {n_classes} columns but there are {classes.size} "
                    f"classes ({classes.tolist()}"
                    + (" found in y_true" if labels is None else " in labels")
                    + "). Pass all the classes through `labels`, in the order of "
                    "the columns of y_proba (sorted)."
                )
        factor = 1.0
        if half != "auto":
            factor = (1.0 if half else 2.0) if n_classes == 2 else 0.5**half
    weight, scale = weights_and_scale(arguments.get("sample_weight"), n_samples)
    noise = FlipNoise.from_params(
        arguments.get("q"), transition_matrix, n_samples=n_samples, n_classes=n_classes
    )
    if order is not None:
        noise = noise.permute(order)
    if multilabel and not noise.is_constant:
        noise = FlipNoise(np.repeat(noise.q, n_labels), None, 2)
    divisor = 1.0
    if arguments.get("normalize", True):  # divided, not times 1/W: scikit-learn's bit
        scale, divisor = 1.0, float(n_samples if weight is None else weight.sum())
    if definition.scale_by_half:
        scale *= factor
    if multilabel:
        proba, loss = proba.ravel(), definition.entry(eps)
        weight = None if weight is None else np.repeat(weight, n_labels)
    else:
        loss = definition.loss(eps)
    return _Problem(loss, proba, index, noise, weight, scale, divisor)


def estimand_inverse(estimand: str, noise: FlipNoise) -> np.ndarray | None:
    """The inverse flip matrix the estimand's terms need (None for flips, forward)."""
    if estimand == "truth":
        noise.check_invertible()
        return None if noise.matrix is None else noise.inverse_matrix()
    return check_remeasurable(noise) if estimand == "remeasurement" else None


def table_terms(
    estimand: str,
    losses: np.ndarray,
    k: np.ndarray,
    noise: FlipNoise,
    inverse: np.ndarray | None,
    rows: slice,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """``(nominal ℓ, E_i, V_i, floor_i or None)`` of a chunk whose sample ``i``
    has the loss ``losses[i, j]`` if observed as class ``j`` (``k``: its label)."""
    nominal = losses[np.arange(k.shape[0]), k]
    if estimand == "forward":
        weights = noise.observation_rows(k, rows)
        expected = np.einsum("ij,ij->i", weights, losses)
        centred = losses - expected[:, None]
        return nominal, expected, np.einsum("ij,ij->i", weights, centred**2), None
    if estimand == "truth":
        weights = noise.inverse_rows(k, rows, inverse)
        expected = np.einsum("ij,ij->i", weights, losses)
        if noise.matrix is None and noise.n_classes == 2:
            # exact: ℓ̂ = A + B ĉ with Var ĉ = q(1−q)/(1−2q)²
            _, scale = noise.flip_scale(rows)
            keep_variance, _ = noise.keep_flip_variance(rows)
            jump = losses[:, 1] - losses[:, 0]
            variance = keep_variance / (scale * scale) * jump * jump
        else:  # unbiased: ℓ̂² − the backward-corrected ℓ²
            squares = np.einsum("ij,ij->i", weights, losses * losses)
            variance = expected * expected - squares
        return nominal, expected, variance, noise.variance_floor(losses, rows, inverse)
    # Σ_c T⁻¹[c̃, c] h(c), h(c) the loss's variance given class c
    matrices = observation_matrices(noise, rows, k.shape[0])
    means = np.einsum("icj,ij->ic", matrices, losses)
    centred = losses[:, None, :] - means[:, :, None]
    spread = np.einsum("icj,icj->ic", matrices, centred * centred)
    return (
        nominal,
        nominal,
        class_function_estimate(noise, k, rows, inverse, spread),
        None,
    )


def _loss_totals(
    problem: _Problem, estimand: str, terms: np.ndarray | None = None
) -> tuple[float, ...]:
    """Weighted totals ``(Σ w ℓ_nominal, Σ w E_i, Σ w² V_i, Σ w² floor_i)`` by
    chunks (:ref:`variance_floor`); ``terms``, if given, receives the ``E_i``."""
    loss, proba, index, noise, weight = problem[:5]
    inverse = estimand_inverse(estimand, noise)
    totals = np.zeros(4)
    for rows in chunks(index.shape[0]):
        *sums, floor = table_terms(
            estimand, loss(proba[rows]), index[rows], noise, inverse, rows
        )
        totals[:3] += weighted_totals(weight, rows, *sums)
        if floor is not None:
            totals[3] += weighted_totals(weight, rows, floor)[0]  # Σ w² floor
        if terms is not None:
            terms[rows] = sums[1]
    return tuple(float(t) for t in totals)


def totals_score(
    name: str, totals: tuple, scale: float, divisor: float, **fields: Any
) -> NoisyScore:
    """The exact :class:`NoisyScore` ``scale · Σ / divisor`` of totals
    ``(Σ w ℓ_nominal, Σ w E_i, Σ w² V_i, Σ w² floor_i)``."""
    nominal, expected, variance, floor = totals
    return NoisyScore(
        name,
        expected=expected * scale / divisor,
        variance=max(variance, floor, 0.0) * (scale * scale) / (divisor * divisor),
        nominal=nominal * scale / divisor,
        method="exact",
        **fields,
    )


def _expected_loss(definition: ProbabilisticLoss, arguments: dict) -> NoisyScore:
    """The public metric of ``definition`` for the call's ``arguments``."""
    estimand = arguments["estimand"]
    estimand = check_estimand(estimand, metric=definition.name, supported=ESTIMANDS)
    arguments = {
        **arguments,
        "normalize": check_bool(arguments.get("normalize", True), name="normalize"),
        "scale_by_half": check_option(
            arguments.get("scale_by_half", "auto"),
            ("auto", True, False),
            name="scale_by_half",
        ),
    }
    problem = _problem(definition, arguments)
    loss, proba, index, noise, weight, scale, divisor = problem
    distribution = None
    if estimand == "forward" and index.shape[0] <= MAX_LOSS_SAMPLES:
        table = noise.observation_rows(index[slice(None)], slice(None))
        distribution = loss_distribution(loss(proba), table, weight)
    return totals_score(
        definition.name,
        _loss_totals(problem, estimand),
        scale,
        divisor,
        n_samples=np.shape(arguments["y_true"])[0],
        estimand=estimand,
        distribution=distribution,
    )


def _loss_terms(
    definition: ProbabilisticLoss, arguments: dict[str, Any], score: NoisyScore
) -> tuple[np.ndarray, np.ndarray | None, float]:
    """The per-sample terms ``E_i`` of :func:`_loss_totals` (the sampling rule)."""
    problem = _problem(definition, arguments)
    n_samples, weight = np.shape(arguments["y_true"])[0], problem.weight
    h = np.empty(problem.index.shape[0])
    _loss_totals(problem, arguments.get("estimand", "forward"), h)
    h = h.reshape(n_samples, -1).sum(axis=1)  # a multilabel row: its entries
    if weight is not None:
        weight = weight.reshape(n_samples, -1)[:, 0]
    w_sum = float(n_samples) if weight is None else float(np.sum(weight))
    return h, weight, problem.scale * w_sum / problem.divisor


_Y_TRUE_DOC = """\
    y_true : array-like of shape (n_samples,) or (n_samples, n_classes)
        Reference class of each sample (``estimand="forward"``) or its
        single observed label (``"truth"``, ``"remeasurement"``); or a 0/1
        label-indicator matrix, as in scikit-learn: read as class labels when
        every row has one 1, else as multilabel, each entry flipped on its own
        with its sample's ``q``."""

_COMMON_PARAMETERS_DOC = """\
    q : float or array-like of shape (n_samples,), default=None
        Probability that a label is flipped: to the other class for binary
        problems, uniformly to one of the ``K - 1`` other classes otherwise.
        Exactly one of ``q`` and ``transition_matrix`` is required.

    transition_matrix : array-like of shape (n_classes, n_classes), default=None
        Row-stochastic, ``T[j, k]`` the probability that a sample of class
        ``labels[j]`` is observed as ``labels[k]``, in the order of ``labels``
        (default: the sorted classes).

    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights: the loss is ``Σ w_i ℓ_i / Σ w_i`` and its variance
        ``Σ w_i² Var[ℓ_i] / (Σ w_i)²``.

    estimand : {"auto", "truth", "remeasurement", "forward"}, default="auto"
        ``"auto"`` is ``"truth"``: an unbiased estimate of the loss against the
        unknown true labels (backward correction, :ref:`formula_truth`);
        ``"remeasurement"``: the loss expected when the samples are labelled
        again (these two need an invertible flip model); ``"forward"``:
        ``y_true`` taken as exact (:ref:`estimands`)."""


@with_test_set_sampling(
    functools.partial(_loss_terms, BRIER_SCORE_LOSS), label_arguments=("y_true",)
)
@supports_estimands("forward", "truth", "remeasurement")
@fill_doc(y_true=_Y_TRUE_DOC, common=_COMMON_PARAMETERS_DOC)
def expected_brier_score_loss(
    y_true: Any,
    y_proba: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    pos_label: Any = None,
    labels: Any = None,
    sample_weight: Any = None,
    scale_by_half: Any = "auto",
    estimand: str = "auto",
) -> NoisyScore:
    """Expected Brier score loss, and its variance, under label flips.

    The loss is that of :func:`sklearn.metrics.brier_score_loss`; its moments
    over the flips are exact. Read more in the
    :ref:`User Guide <formula_probabilistic>`.

    Parameters
    ----------
    {y_true}

    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities: of the positive class (1-D), or of each class
        with the columns in sorted label order, as in scikit-learn.

    {common}

    pos_label : int, float, bool or str, default=None
        Positive class for a 1-D ``y_proba``, inferred as scikit-learn does.

    labels : array-like of shape (n_classes,), default=None
        The classes: the order of the columns of a 2-D ``y_proba`` (needed when
        ``y_true`` misses a class), or the two classes of a 1-D one.

    scale_by_half : bool or "auto", default="auto"
        As in scikit-learn: halve the loss; ``"auto"`` halves it for two
        classes.

    Returns
    -------
    score : NoisyScore
        ``nominal`` is :func:`sklearn.metrics.brier_score_loss` on ``y_true``;
        ``method`` is ``"exact"``.

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_brier_score_loss
    >>> score = expected_brier_score_loss([0, 1, 1, 0], [0.1, 0.9, 0.8, 0.3], q=0.1,
    ...     estimand="forward")
    >>> round(score.nominal, 12), round(score.expected, 12), round(score.variance, 12)
    (0.0375, 0.1025, 0.010125)
    """
    return _expected_loss(BRIER_SCORE_LOSS, locals())


@with_test_set_sampling(
    functools.partial(_loss_terms, LOG_LOSS), label_arguments=("y_true",)
)
@supports_estimands("forward", "truth", "remeasurement")
@fill_doc(y_true=_Y_TRUE_DOC, common=_COMMON_PARAMETERS_DOC)
def expected_log_loss(
    y_true: Any,
    y_proba: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    normalize: bool = True,
    sample_weight: Any = None,
    labels: Any = None,
    estimand: str = "auto",
) -> NoisyScore:
    """Expected log-loss, and its variance, under label flips.

    The loss is that of :func:`sklearn.metrics.log_loss` (probabilities clipped
    as there); its moments over the flips are exact. Read more in the
    :ref:`User Guide <formula_probabilistic>`.

    Parameters
    ----------
    {y_true}

    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
        Predicted probabilities: of the greater of the two classes (1-D), or of
        each class with the columns in sorted label order, as in scikit-learn.

    {common}

    normalize : bool, default=True
        As in scikit-learn: the mean loss, or with ``False`` the (weighted)
        sum of the losses.

    labels : array-like of shape (n_classes,), default=None
        The classes, as in scikit-learn: inferred from ``y_true`` when not
        given; the columns of ``y_proba`` follow the sorted labels.

    Returns
    -------
    score : NoisyScore
        ``nominal`` is :func:`sklearn.metrics.log_loss` on ``y_true``;
        ``method`` is ``"exact"``.

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_log_loss
    >>> y_true = ["spam", "ham", "ham", "spam"]
    >>> y_proba = [[0.1, 0.9], [0.9, 0.1], [0.8, 0.2], [0.35, 0.65]]
    >>> score = expected_log_loss(y_true, y_proba, q=0.1, estimand="forward")
    >>> round(score.nominal, 6), round(score.expected, 6)
    (0.216162, 0.376156)
    """
    return _expected_loss(LOG_LOSS, locals())
