"""Paired difference of a metric between two models scored on the same noisy labels.

:func:`expected_paired_difference` returns the mean and variance of
``metric(A) − metric(B)`` over the shared label noise (user guide:
:ref:`formula_paired`): exact where the metric's registry record has a paired
kernel (:mod:`~sklearn_noisy.metrics._paired_kernels`), otherwise by a joint
Monte Carlo that scores both models on the same label draws, streamed over the
samples where the metric is a function of per-draw sums.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._noisy_score import NoisyScore
from ..utils._arrays import (
    CHUNK_SIZE,
    check_finite,
    check_sample_weight,
    chunk_of,
    chunks,
)
from ..utils._warnings import quiet, warn
from ._count_definitions import COUNT_METRICS
from ._monte_carlo import (
    MonteCarloScore,
    _check_generator,
    _check_positive_int,
    _summarise,
    monte_carlo_score,
)
from ._paired_kernels import _encode_chunk, flip_pair, pair_classes, regression_pair
from ._registry import MetricInfo, get_metric_info, get_metric_names
from ._regression_definitions import RegressionLoss
from ._test_set_sampling import with_test_set_sampling

__all__ = ["expected_paired_difference"]

#: The count metrics whose paired Monte Carlo is streamed: those of the exact
#: binary engine but precision, whose paired kernel is exact.
_STREAMED_COUNT_METRICS = tuple(
    name
    for name, definition in COUNT_METRICS.items()
    if definition.exact_binary and not definition.fixed_denominator
)
#: Random numbers drawn at a time (one batch of draws over one chunk).
_BATCH_FLOATS = 2**19


def _resolve_metric(metric: Any) -> tuple[str, Any, dict[str, Any]]:
    """``(name, scorer or None, metric options)`` of a metric name or a scorer."""
    if hasattr(metric, "score_predictions"):
        estimand = getattr(metric, "estimand", "forward")
        if estimand != "forward":
            raise ValueError(
                "Paired differences are computed for the 'forward' estimand "
                f"(the paper's formulas, y_true taken as exact); the scorer uses "
                f"estimand={estimand!r}. Pass a scorer with the default estimand."
            )
        return metric.metric, metric, dict(getattr(metric, "metric_kwargs", None) or {})
    if isinstance(metric, str):
        return metric, None, {}
    raise TypeError(
        "metric must be a metric name such as 'mean_squared_error' or a "
        f"NoisyScorer; got {metric!r}."
    )


def _check_noise(info: MetricInfo, sigma: Any, q: Any, transition_matrix: Any) -> None:
    """The noise must be of the metric's kind: ``sigma``, or ``q`` or ``T``."""
    if info.noise == "sigma":
        if q is not None or transition_matrix is not None:
            raise TypeError(f"{info.name!r} is a regression metric: pass sigma, not q.")
        return
    if sigma is not None:
        raise TypeError(f"{info.name!r} is a classification metric: pass q, not sigma.")
    if (q is None) == (transition_matrix is None):
        raise TypeError("Pass exactly one of q and transition_matrix.")


def _n_rows(value: Any, name: str) -> int:
    array = value.to_numpy() if hasattr(value, "to_numpy") else np.asarray(value)
    if array.ndim == 0:
        raise ValueError(f"{name} must be array-like with one entry per sample.")
    return int(array.shape[0])


def _check_predictions(y_true: Any, y_pred_a: Any, y_pred_b: Any) -> None:
    """Both predictions finite (where numeric) and one per sample, by name."""
    n = _n_rows(y_true, "y_true")
    for value, name in ((y_pred_a, "y_pred_a"), (y_pred_b, "y_pred_b")):
        array = value.to_numpy() if hasattr(value, "to_numpy") else np.asarray(value)
        if array.dtype.kind == "f":
            check_finite(array, name=name)
        if _n_rows(array, name) != n:
            raise ValueError(
                f"y_true and {name} must have the same number of samples; got "
                f"{n} and {_n_rows(array, name)}."
            )


def _plain_scorer(name: str, options: dict[str, Any]) -> Any:
    """A scorer of the metric and options that takes the noise as given."""
    from ._scorer import make_noisy_scorer  # the scorers build on the metrics

    return make_noisy_scorer(name, **options)


def _monte_carlo_difference(
    scorer: Any,
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    *,
    sigma: Any,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    classes: Any,
    n_draws: int,
    random_state: Any,
    sample_weight: Any = None,
) -> NoisyScore:
    """Joint Monte Carlo: each label draw scored for A and for B by the scorer.

    The scorer's ``nominal`` on noise-free labels applies all its options.
    """
    plain = _plain_scorer(scorer.metric, dict(scorer.metric_kwargs))
    zero = {"sigma": 0.0} if plain.requires_noise == "sigma" else {"q": 0.0}
    extra = {} if classes is None else {"classes": classes}

    def difference(y: Any, _placeholder: Any, **weight: Any) -> float:
        score_a = plain.score_predictions(y, y_pred_a, **zero, **extra, **weight)
        score_b = plain.score_predictions(y, y_pred_b, **zero, **extra, **weight)
        return score_a.nominal - score_b.nominal

    if plain.requires_noise == "q" and labels is None:
        labels = classes
        if labels is None:
            a, b = np.asarray(y_pred_a), np.asarray(y_pred_b)
            if a.ndim == 1 and b.ndim == 1:
                labels = pair_classes(y_true, a, b)
    # y_pred reaches the callable untouched: an empty placeholder per sample.
    score = monte_carlo_score(
        difference,
        y_true,
        np.zeros((len(y_true), 0)),
        sigma=sigma,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        n_draws=n_draws,
        random_state=random_state,
        sample_weight=sample_weight,
    )
    return dataclasses.replace(score, metric=f"{scorer.metric}_difference")


def _weights(weight: np.ndarray | None, rows: slice, size: int) -> np.ndarray:
    return np.ones(size) if weight is None else weight[rows]


def _draws(
    sums: Callable[[int, Any], np.ndarray],
    difference: Callable[[np.ndarray], np.ndarray],
    n_draws: int,
    width: int,
    rng: np.random.Generator,
) -> np.ndarray:
    """``difference(sums)`` of ``n_draws`` label draws, a batch at a time."""
    size = max(1, min(n_draws, _BATCH_FLOATS // max(width, 1)))
    draws = np.empty(n_draws)
    for start in range(0, n_draws, size):
        stop = min(start + size, n_draws)
        draws[start:stop] = difference(sums(stop - start, rng))
    return draws


def _regression_draws(
    definition: RegressionLoss,
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    noise: dict[str, Any],
    n_draws: int,
    rng: np.random.Generator,
) -> tuple[float, np.ndarray]:
    """``(nominal, draws)`` of a loss of A minus that of B from per-draw sums.

    The sums are ``SSE_A``, ``SSE_B``, ``Σ w(y−c)`` and ``Σ w(y−c)²`` per
    output, with ``c`` the labels' weighted mean (so that they do not cancel).
    """
    y, a, b, s, weight, _ = regression_pair(
        y_true, y_pred_a, y_pred_b, noise["sigma"], noise["sample_weight"]
    )
    n, k = y.shape
    w_total = float(n) if weight is None else float(weight.sum())
    centre = np.zeros(k)
    for rows in chunks(n):
        centre += _weights(weight, rows, y[rows].shape[0]) @ y[rows]
    centre /= w_total

    def sums(size: int, rng: Any) -> np.ndarray:
        """The sums of ``size`` draws (``rng=None``: of the labels as given)."""
        out = np.zeros((4, size, k))
        for rows in chunks(n):
            w = _weights(weight, rows, y[rows].shape[0])
            labels = np.empty((size, *y[rows].shape))
            if rng is None:
                labels[:] = 0.0
            else:
                labels[:] = rng.standard_normal(labels.shape)
                labels *= chunk_of(s, rows)
            labels += y[rows] - centre
            for i, values in enumerate((a[rows] - centre, b[rows] - centre)):
                error = labels - values
                error *= error
                out[i] += np.einsum("dik,i->dk", error, w)
            out[2] += np.einsum("dik,i->dk", labels, w)
            labels *= labels
            out[3] += np.einsum("dik,i->dk", labels, w)
        return out

    def difference(sums: np.ndarray) -> np.ndarray:
        sst = sums[3] - sums[2] * sums[2] / w_total
        per_output = definition.streamed_difference(sums[0], sums[1], sst, w_total)
        return per_output.mean(axis=1)

    nominal = float(difference(sums(1, None))[0])
    if (s if isinstance(s, float) else float(np.max(s))) == 0.0:
        return nominal, np.empty(0)
    return nominal, _draws(sums, difference, n_draws, min(n, CHUNK_SIZE) * k, rng)


def _binary_draws(
    metric: str,
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    noise: dict[str, Any],
    pos_label: Any,
    n_draws: int,
    rng: np.random.Generator,
) -> tuple[float, np.ndarray] | None:
    """``(nominal, draws)`` of a binary count metric of A minus that of B.

    Per draw: the (weighted) observed positives overall and among A's and B's
    predicted positives, and the positively weighted samples observed negative
    and positive. None unless the labels are binary with ``pos_label`` among
    them.
    """
    pair = flip_pair(
        y_true, y_pred_a, y_pred_b, **noise, pos_label=pos_label, n_classes=(2,)
    )
    if pair is None:
        return None
    y, a, b, classes, weight, flips, pos = pair
    n = y.shape[0]
    w_total = float(n) if weight is None else float(weight.sum())

    def sums(size: int, rng: Any) -> np.ndarray:
        """The sums of ``size`` draws (``rng=None``: of the labels as given),
        then (the same in every draw) A's and B's predicted positives and the
        number of random labels."""
        out = np.zeros((8, size))
        for rows in chunks(n):
            true_index, a_index, b_index = _encode_chunk(y, a, b, rows, classes)
            w = _weights(weight, rows, true_index.shape[0])
            pi = flips.probability(true_index, np.full_like(true_index, pos), rows)
            if rng is None:
                positive = (true_index == pos)[None, :]
            else:
                positive = rng.random((size, true_index.shape[0])) < pi
            counted = (w > 0.0).astype(np.float64)
            positive = positive.astype(np.float64)  # matmul with BLAS
            out[0] += positive @ w
            out[1] += positive @ (w * (a_index == pos))
            out[2] += positive @ (w * (b_index == pos))
            observed = positive @ counted
            out[3] += counted.sum() - observed
            out[4] += observed
            predicted = np.stack((a_index == pos, b_index == pos))
            out[5:7] += (predicted.astype(np.float64) @ w)[:, None]
            out[7] += np.count_nonzero((pi > 0.0) & (pi < 1.0))
        return out

    given = sums(1, None)
    predicted = given[5:7, 0]

    def difference(sums: np.ndarray) -> np.ndarray:
        # exact ends: no observed negative (positive) means S = W (S = 0)
        observed = np.where(sums[3] == 0, w_total, np.where(sums[4] == 0, 0.0, sums[0]))
        values = []
        for tp, n_pred in ((sums[1], predicted[0]), (sums[2], predicted[1])):
            alpha, beta = COUNT_METRICS[metric].affine(observed, n_pred, w_total)
            values.append(alpha + beta * tp)
        return values[0] - values[1]

    nominal = float(difference(given)[0])
    if given[7, 0] == 0:
        return nominal, np.empty(0)
    return nominal, _draws(sums, difference, n_draws, min(n, CHUNK_SIZE), rng)


def _joint_monte_carlo(
    info: MetricInfo,
    scorer: Any,
    options: dict[str, Any],
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    *,
    n_draws: int,
    random_state: Any,
    **noise: Any,
) -> NoisyScore:
    """The joint Monte Carlo, streamed over the samples where it is offered.

    Streamed: the losses with a ``streamed_difference`` and the binary count
    metrics, without options but ``pos_label``; else scorer by scorer. Without
    random labels the difference is its nominal value, exactly.
    """
    n_draws = _check_positive_int(n_draws, name="n_draws", minimum=2)
    rng = _check_generator(random_state)
    result = None
    if getattr(info.definition, "streamed_difference", None) is not None:
        if not options:
            result = _regression_draws(
                info.definition, y_true, y_pred_a, y_pred_b, noise, n_draws, rng
            )
    elif info.name in _STREAMED_COUNT_METRICS and set(options) <= {"pos_label"}:
        result = _binary_draws(
            info.name, y_true, y_pred_a, y_pred_b, noise, options.get("pos_label", 1),
            n_draws, rng,
        )  # fmt: skip
    if result is None:
        return _monte_carlo_difference(
            scorer, y_true, y_pred_a, y_pred_b, n_draws=n_draws,
            random_state=random_state, **noise,
        )  # fmt: skip
    nominal, draws = result
    n, metric = _n_rows(y_true, "y_true"), f"{info.name}_difference"
    if draws.size == 0:
        return NoisyScore(metric, nominal, 0.0, nominal, n, "exact")
    expected, variance, standard_error, variance_se = _summarise(draws)
    return MonteCarloScore(
        metric=metric,
        expected=expected,
        variance=variance,
        nominal=nominal,
        n_samples=n,
        method="monte_carlo",
        n_draws=n_draws,
        standard_error=standard_error,
        variance_standard_error=variance_se,
        draws=draws,
    )


def _without_moments(
    existence_rule: Callable[..., Any],
    name: str,
    options: dict[str, Any],
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    *,
    sigma: Any,
    sample_weight: Any,
    monte_carlo: Callable[[], NoisyScore],
) -> NoisyScore | None:
    """The difference where its mean or variance does not exist, else None.

    ``existence_rule`` is the definition's ``paired_existence``. A mean that
    does not exist is ``±inf`` or NaN, a variance ``inf``, with a warning.
    Where only the variance does not exist the mean is ``E[R²_A] − E[R²_B]``
    when both exist, else the joint Monte Carlo mean.
    """
    y, a, b, s, weight, multioutput = regression_pair(
        y_true,
        y_pred_a,
        y_pred_b,
        sigma,
        sample_weight,
        options.get("multioutput", "uniform_average"),
    )
    existence = existence_rule(
        y, a, b, s, weight, None if isinstance(multioutput, str) else multioutput
    )
    if existence.variance_exists:
        return None
    warn(existence.message, UserWarning)
    plain = _plain_scorer(name, options)
    with quiet():  # the single models' own warnings
        scores = [
            plain.score_predictions(y_true, p, sigma=sigma, sample_weight=sample_weight)
            for p in (y_pred_a, y_pred_b)
        ]
    nominal = scores[0].nominal - scores[1].nominal
    metric, n = f"{name}_difference", y.shape[0]
    if not existence.mean_exists:
        return NoisyScore(metric, existence.expected, math.inf, nominal, n, "exact")
    expected = scores[0].expected - scores[1].expected
    if math.isfinite(expected):
        return NoisyScore(metric, expected, math.inf, nominal, n, "exact")
    return dataclasses.replace(
        monte_carlo(),
        variance=math.inf,
        standard_error=math.inf,
        variance_standard_error=math.nan,
    )


@with_test_set_sampling(label_arguments=("y_true",), data_arguments=3)
def expected_paired_difference(
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    *,
    metric: Any,
    sigma: Any = None,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    classes: Any = None,
    sample_weight: Any = None,
    n_draws: int = 1000,
    random_state: Any = 0,
    estimand: str = "forward",
) -> NoisyScore:
    """Expected difference ``metric(A) − metric(B)`` of two models on the same labels.

    The label noise is shared, so the variance of the difference is not the
    sum of the two variances. The moments are exact for MSE, MAE, accuracy,
    binary precision, Brier score and log-loss; the other metrics go through a
    joint Monte Carlo on the same label draws. Read more in the
    :ref:`User Guide <formula_paired>`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Best-known labels.

    y_pred_a, y_pred_b : array-like
        The two models' responses: predictions, or class probabilities for
        Brier score and log-loss.

    metric : str or NoisyScorer
        A canonical metric name (``"mean_squared_error"``, ``"accuracy"``, ...)
        or a :class:`~sklearn_noisy.metrics.NoisyScorer`, whose metric options
        are then used.

    sigma : float or array-like of shape (n_samples,), default=None
        Standard error of each regression label.

    q : float or array-like of shape (n_samples,), default=None
        Flip probability of each class label (uniform over the other classes).

    transition_matrix : array-like of shape (n_classes, n_classes), default=None
        Row-stochastic label transition matrix in the order of ``labels``.

    labels : array-like, default=None
        The classes (default: the sorted union of the labels in ``y_true``,
        ``y_pred_a`` and ``y_pred_b``).

    classes : array-like, default=None
        The classes of the probability columns, for Brier score and log-loss
        (default: ``labels``, or the classes of ``y_true``).

    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights, as in scikit-learn's metrics.

    n_draws : int, default=1000
        Label draws of the Monte Carlo path.

    random_state : int, Generator or None, default=0
        Seed of the Monte Carlo path.

    estimand : {"forward", "truth"}, default="forward"
        ``"forward"`` takes ``y_true`` as exact; ``"truth"`` estimates the
        difference against the true values (:ref:`estimands`), offered for
        ``"mean_squared_error"`` and ``"accuracy"``.

    Returns
    -------
    score : NoisyScore
        ``metric`` is ``"<metric>_difference"``; ``nominal`` is the difference
        on the labels as given, ``method`` ``"exact"`` or ``"monte_carlo"``.

    See Also
    --------
    sklearn_noisy.model_selection.compare_estimators : Paired comparison of
        cross-validated estimators.

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_paired_difference
    >>> d = expected_paired_difference([1.0, 2.0, 3.0, 4.0], [1.1, 2.1, 2.8, 4.2],
    ...     [1.0, 2.3, 3.1, 3.6], metric="mean_squared_error", sigma=0.5)
    >>> round(d.expected, 6), round(d.variance, 6)
    (-0.04, 0.03125)
    """
    if estimand not in ("forward", "truth"):
        raise ValueError(
            "estimand must be 'forward' or 'truth' for a paired difference; got "
            f"{estimand!r}."
        )
    name, scorer, options = _resolve_metric(metric)
    info = get_metric_info(name)
    _check_noise(info, sigma, q, transition_matrix)
    _check_predictions(y_true, y_pred_a, y_pred_b)
    check_sample_weight(sample_weight, _n_rows(y_true, "y_true"))
    noise = {
        "sigma": sigma,
        "q": q,
        "transition_matrix": transition_matrix,
        "labels": labels,
        "sample_weight": sample_weight,
    }
    kernel = info.paired_truth if estimand == "truth" else info.paired
    result = None
    if kernel is not None:
        result = kernel(
            y_true, y_pred_a, y_pred_b, classes=classes, options=options, **noise
        )
    if result is not None:
        expected, variance, nominal, n_samples = result
        return NoisyScore(
            f"{name}_difference",
            expected,
            variance,
            nominal,
            n_samples,
            "exact",
            estimand=estimand,
        )
    if estimand == "truth":
        offered = " and ".join(
            repr(m) for m in get_metric_names() if get_metric_info(m).paired_truth
        )
        detail = f" with options {sorted(options)}" if kernel is not None else ""
        raise ValueError(
            f"{name}{detail} has no paired truth difference: estimand='truth' is "
            f"offered for {offered} without metric options; use "
            "estimand='forward'."
        )
    monte_carlo = functools.partial(
        _joint_monte_carlo,
        info,
        _plain_scorer(name, {}) if scorer is None else scorer,
        options,
        y_true,
        y_pred_a,
        y_pred_b,
        classes=classes,
        n_draws=n_draws,
        random_state=random_state,
        **noise,
    )
    existence_rule = getattr(info.definition, "paired_existence", None)
    if existence_rule is not None:
        result = _without_moments(
            existence_rule,
            name,
            options,
            y_true,
            y_pred_a,
            y_pred_b,
            sigma=sigma,
            sample_weight=sample_weight,
            monte_carlo=monte_carlo,
        )
    return monte_carlo() if result is None else result
