"""Paired difference of a metric between two models scored on the same noisy labels.

Both models are scored against the *same* draw of the labels, so their metrics
are correlated and ``Var[m_A − m_B] ≠ Var[m_A] + Var[m_B]`` (user guide:
:ref:`formula_paired`). :func:`expected_paired_difference` returns the expected
difference and its variance over the label noise: exact where the metric's
record in the registry has a paired kernel
(:attr:`~sklearn_noisy.metrics.MetricInfo.paired`, the kernels of
:mod:`~sklearn_noisy.metrics._paired_kernels`: MSE, MAE, accuracy, binary
precision, Brier score, log-loss), otherwise (RMSE, R², recall, F1, balanced
accuracy, MCC, and metric options the kernel does not cover) by a *joint*
Monte Carlo, in which both models are scored on the same label draws
(streamed over the samples by :mod:`~sklearn_noisy.metrics._paired_streaming`
where the metric is a function of per-draw sums, else
:func:`~sklearn_noisy.metrics.monte_carlo_score`); ``method="monte_carlo"``.
The R² difference is first checked for moments that do not exist
(:mod:`~sklearn_noisy.metrics._paired_existence`).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any

import numpy as np

from .._noisy_score import NoisyScore
from ..utils._arrays import check_finite, check_sample_weight
from ..utils._validation import check_regression_inputs
from ..utils._warnings import quiet, warn
from ._monte_carlo import (
    _check_generator,
    _check_positive_int,
    _from_draws,
    monte_carlo_score,
)
from ._paired_kernels import pair_classes
from ._paired_streaming import streamed_difference_draws
from ._registry import MetricInfo, get_metric_info, get_metric_names
from ._test_set_sampling import with_test_set_sampling

__all__ = ["expected_paired_difference"]


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


def _plain_scorer(scorer: Any) -> Any:
    """A scorer of the same metric and options that takes the noise as given."""
    from ._scorer import make_noisy_scorer  # the scorers build on the metrics

    return make_noisy_scorer(scorer.metric, **dict(scorer.metric_kwargs))


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
    """Joint Monte Carlo: both models scored on the same label draws.

    Each draw of the labels is scored for A and for B with the classical metric
    (the scorer's ``nominal`` on noise-free labels, so every option of the scorer
    applies) and the difference is recorded. The noise is of the metric's kind
    (checked by the caller): the other parameters are None.
    """
    plain = _plain_scorer(scorer)
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
    n = len(y_true)
    # y_pred is passed through to the callable untouched: an empty 2-D
    # placeholder with one row per sample (the predictions are closed over).
    score = monte_carlo_score(
        difference,
        y_true,
        np.zeros((n, 0)),
        sigma=sigma,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        n_draws=n_draws,
        random_state=random_state,
        sample_weight=sample_weight,
    )
    return dataclasses.replace(score, metric=f"{scorer.metric}_difference")


def _streamed_difference(
    name: str,
    options: dict[str, Any],
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    *,
    n_draws: int,
    random_state: Any,
    **kwargs: Any,
) -> NoisyScore | None:
    """The joint Monte Carlo streamed over the samples, where it is offered.

    (:mod:`~sklearn_noisy.metrics._paired_streaming`); None elsewhere. Without
    random labels the difference is its nominal value, exactly.
    """
    n_draws = _check_positive_int(n_draws, name="n_draws", minimum=2)
    rng = _check_generator(random_state)
    result = streamed_difference_draws(
        get_metric_info(name), y_true, y_pred_a, y_pred_b, options=options,
        n_draws=n_draws, rng=rng, **kwargs,
    )  # fmt: skip
    if result is None:
        return None
    nominal, draws = result
    n = _n_rows(y_true, "y_true")
    metric = f"{name}_difference"
    if draws.size == 0:
        return NoisyScore(metric, nominal, 0.0, nominal, n, "exact")
    return _from_draws(metric, nominal, n, draws)


def _joint_monte_carlo(
    name: str,
    scorer: Any,
    options: dict[str, Any],
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    *,
    classes: Any,
    **kwargs: Any,
) -> NoisyScore:
    """The joint Monte Carlo: streamed where offered, else scorer by scorer."""
    streamed = _streamed_difference(name, options, y_true, y_pred_a, y_pred_b, **kwargs)
    if streamed is not None:
        return streamed
    return _monte_carlo_difference(
        scorer, y_true, y_pred_a, y_pred_b, classes=classes, **kwargs
    )


def _without_moments(
    existence_rule: Any,
    scorer: Any,
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    *,
    sigma: Any,
    sample_weight: Any,
    monte_carlo: Any,
) -> NoisyScore | None:
    """The difference where its mean or variance does not exist, else None.

    ``existence_rule`` is the definition's ``paired_existence`` (R²'s:
    :mod:`~sklearn_noisy.metrics._paired_existence`).
    A mean that does not exist is reported as ``±inf`` or NaN, a variance as
    ``inf``, with a warning. Where only the variance does not exist the mean is
    ``E[R²_A] − E[R²_B]``, exact, when both exist (otherwise the joint Monte
    Carlo mean, whose standard error is then infinite).
    """
    y, a, s, weight, multioutput = check_regression_inputs(
        y_true,
        y_pred_a,
        sigma=sigma,
        sample_weight=sample_weight,
        multioutput=scorer.metric_kwargs.get("multioutput", "uniform_average"),
    )
    _, b, _, _, _ = check_regression_inputs(y_true, y_pred_b, sigma=sigma)
    existence = existence_rule(
        y, a, b, s, weight, None if isinstance(multioutput, str) else multioutput
    )
    if existence.variance_exists:
        return None
    warn(existence.message, UserWarning)
    plain = _plain_scorer(scorer)
    with quiet():  # the single models' own warnings
        scores = [
            plain.score_predictions(y_true, p, sigma=sigma, sample_weight=sample_weight)
            for p in (y_pred_a, y_pred_b)
        ]
    nominal = scores[0].nominal - scores[1].nominal
    name, n = f"{scorer.metric}_difference", y.shape[0]
    if not existence.mean_exists:
        return NoisyScore(name, existence.expected, math.inf, nominal, n, "exact")
    expected = scores[0].expected - scores[1].expected
    if math.isfinite(expected):
        return NoisyScore(name, expected, math.inf, nominal, n, "exact")
    score = monte_carlo()
    return dataclasses.replace(
        score,
        variance=math.inf,
        standard_error=math.inf,
        variance_standard_error=math.nan,
    )


def _truth_difference(
    info: MetricInfo,
    options: dict[str, Any],
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    **noise: Any,
) -> NoisyScore:
    """The truth estimand of the paired difference (the record's ``paired_truth``)."""
    name, kernel = info.name, info.paired_truth
    result = None
    if kernel is not None:
        result = kernel(
            y_true, y_pred_a, y_pred_b, classes=None, options=options, **noise
        )
    if result is None:
        offered = " and ".join(
            repr(m) for m in get_metric_names() if get_metric_info(m).paired_truth
        )
        detail = f" with options {sorted(options)}" if kernel is not None else ""
        raise ValueError(
            f"{name}{detail} has no paired truth difference: estimand='truth' is "
            f"offered for {offered} without metric options; use "
            "estimand='forward'."
        )
    expected, variance, nominal, n_samples = result
    return NoisyScore(
        f"{name}_difference",
        expected,
        variance,
        nominal,
        n_samples,
        "exact",
        estimand="truth",
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

    The two models are scored against the same noisy labels, so the label noise
    is shared and the variance of the difference is not the sum of the two
    variances. The moments are exact for MSE, MAE, accuracy, binary precision,
    Brier score and log-loss; every other metric goes through a joint Monte
    Carlo that scores both models on the same label draws. Read more in the
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
        (``pos_label``, ``average``, ...) are then used.

    sigma : float or array-like of shape (n_samples,), default=None
        Standard error of each regression label.

    q : float or array-like of shape (n_samples,), default=None
        Flip probability of each class label (uniform over the other classes).

    transition_matrix : array-like of shape (n_classes, n_classes), default=None
        Row-stochastic label transition matrix in the order of ``labels``.

    labels : array-like, default=None
        The classes (for ``q`` with more than two classes, and for the order of
        ``transition_matrix``); by default the sorted union of the labels in
        ``y_true``, ``y_pred_a`` and ``y_pred_b``.

    classes : array-like, default=None
        The classes in the order of the probability columns, for Brier score
        and log-loss (default: ``labels``, or the classes of ``y_true``).

    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights, as in scikit-learn's metrics.

    n_draws : int, default=1000
        Label draws of the Monte Carlo path.

    random_state : int, Generator or None, default=0
        Seed of the Monte Carlo path (fixed by default, for reproducibility).

    estimand : {"forward", "truth"}, default="forward"
        ``"forward"`` takes ``y_true`` as exact; ``"truth"`` estimates the
        difference against the true values (:ref:`estimands`), offered for
        ``"mean_squared_error"`` and ``"accuracy"`` only.

    Returns
    -------
    score : NoisyScore
        ``metric`` is ``"<metric>_difference"``; ``expected`` and ``variance``
        are the mean and variance of ``metric(A) − metric(B)`` over the label
        noise and ``nominal`` the difference on the labels as given.
        ``method`` is ``"exact"`` or ``"monte_carlo"``.

    See Also
    --------
    sklearn_noisy.model_selection.compare_estimators : Paired comparison of
        cross-validated estimators.

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_paired_difference
    >>> y = [1.0, 2.0, 3.0, 4.0]
    >>> a = [1.1, 2.1, 2.8, 4.2]
    >>> b = [1.0, 2.3, 3.1, 3.6]
    >>> d = expected_paired_difference(y, a, b, metric="mean_squared_error",
    ...                                sigma=0.5)
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
    noise = {"sigma": sigma, "q": q, "transition_matrix": transition_matrix}
    if estimand == "truth":
        return _truth_difference(
            info,
            options,
            y_true,
            y_pred_a,
            y_pred_b,
            labels=labels,
            sample_weight=sample_weight,
            **noise,
        )
    if info.paired is not None:
        result = info.paired(
            y_true,
            y_pred_a,
            y_pred_b,
            labels=labels,
            classes=classes,
            sample_weight=sample_weight,
            options=options,
            **noise,
        )
        if result is not None:
            expected, variance, nominal, n_samples = result
            return NoisyScore(
                f"{name}_difference", expected, variance, nominal, n_samples, "exact"
            )
    if scorer is None:
        from ._scorer import make_noisy_scorer  # the scorers build on the metrics

        scorer = make_noisy_scorer(name)

    monte_carlo = functools.partial(
        _joint_monte_carlo,
        name,
        scorer,
        options,
        y_true,
        y_pred_a,
        y_pred_b,
        labels=labels,
        classes=classes,
        sample_weight=sample_weight,
        n_draws=n_draws,
        random_state=random_state,
        **noise,
    )
    if info.definition is not None and info.definition.paired_existence is not None:
        result = _without_moments(
            info.definition.paired_existence,
            scorer,
            y_true,
            y_pred_a,
            y_pred_b,
            sigma=sigma,
            sample_weight=sample_weight,
            monte_carlo=monte_carlo,
        )
        if result is not None:
            return result
    return monte_carlo()
