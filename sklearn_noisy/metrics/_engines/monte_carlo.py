"""Monte Carlo expected value and variance of any metric under label noise."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..._noisy_score import NoisyScore
from ...utils._arrays import as_array, check_finite, check_sample_weight, read_only
from ...utils._labels import check_classification_labels
from ...utils._noise import FlipNoise, GaussianNoise
from ...utils._sklearn_compat import _num_samples
from ...utils._validation import (
    check_generator,
    check_positive_int,
    check_regression_target,
)
from ...utils._warnings import warn

__all__ = ["MonteCarloScore", "monte_carlo_score"]

#: Default size of one batch of drawn labels (and their random numbers), bytes.
_BATCH_BYTES = 8 * 2**20


@dataclass(frozen=True, repr=False, eq=False)  # NoisyScore's __eq__ and __hash__
class MonteCarloScore(NoisyScore):
    """A :class:`~sklearn_noisy.NoisyScore` estimated by Monte Carlo.

    ``expected`` is the mean of the metric over the label draws of
    :func:`~sklearn_noisy.metrics.monte_carlo_score`, ``variance`` their sample
    variance (``ddof=1``).

    Parameters
    ----------
    metric, expected, variance, nominal, n_samples, method
        As in :class:`~sklearn_noisy.NoisyScore`.
    n_draws : int
        Number of label draws.
    standard_error, variance_standard_error : float
        Monte Carlo standard errors of ``expected`` and ``variance``.
    draws : ndarray of shape (n_draws,)
        The metric on each draw (read-only; not in the repr nor in comparisons).

    Examples
    --------
    >>> from sklearn.metrics import mean_squared_error
    >>> from sklearn_noisy.metrics import monte_carlo_score
    >>> score = monte_carlo_score(mean_squared_error, [1.0, 2.0, 3.0],
    ...                           [1.5, 2.0, 2.0], sigma=0.1, n_draws=200,
    ...                           random_state=0)
    >>> score.n_draws, score.draws.shape
    (200, (200,))
    """

    n_draws: int = 0
    standard_error: float = math.nan
    variance_standard_error: float = math.nan
    draws: np.ndarray | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "n_draws", int(self.n_draws))
        for name in ("standard_error", "variance_standard_error"):
            object.__setattr__(self, name, float(getattr(self, name)))
        if self.draws is not None:  # a private copy
            object.__setattr__(self, "draws", read_only(self.draws, np.float64))

    def __repr__(self) -> str:
        return (
            f"MonteCarloScore(metric={self.metric!r}, expected={self.expected:.6g}, "
            f"std={self.std:.4g}, nominal={self.nominal:.6g}, "
            f"n_samples={self.n_samples}, n_draws={self.n_draws}, "
            f"standard_error={self.standard_error:.2g}, estimand={self.estimand!r})"
        )

    def to_dict(self) -> dict[str, float | int | str]:
        """Return the fields (without ``draws``) and ``std`` as a JSON-ready dict."""
        names = ("n_draws", "standard_error", "variance_standard_error")
        return {**super().to_dict(), **{name: getattr(self, name) for name in names}}


def _is_label_vector(y_pred: Any) -> bool:
    """Whether ``y_pred`` holds class labels rather than probabilities."""
    array = as_array(y_pred)
    array = array[:, 0] if array.ndim == 2 and array.shape[1] == 1 else array
    if array.ndim == 1 and array.dtype.kind == "f":
        return bool(np.all(np.isfinite(array)) and np.all(array == np.round(array)))
    return array.ndim == 1 and array.dtype.kind in "biuUSO"


def monte_carlo_score(
    metric: Callable[..., Any],
    y_true: Any,
    y_pred: Any,
    *,
    sigma: Any = None,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    n_draws: int = 1000,
    random_state: Any = None,
    batch_size: int | None = None,
    sample_weight: Any = None,
) -> MonteCarloScore:
    """Expected value and variance of any metric by redrawing the labels.

    ``metric(y_draw, y_pred)`` over ``n_draws`` redraws of the labels around
    ``y_true`` from one noise model. Read more in the
    :ref:`User Guide <verification>`.

    Parameters
    ----------
    metric : callable
        ``metric(y_true, y_pred)`` returning a number, e.g. a scikit-learn metric.
    y_true : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Best-known labels: values (``sigma``) or class labels (flips).
    y_pred : array-like
        Predictions, passed to ``metric`` as given.
    sigma : float or array-like of shape (n_samples,) or (n_samples, n_outputs)
        Standard error of each label.
    q : float or array-like of shape (n_samples,)
        Flip probability of each label (uniform over the other classes).
    transition_matrix : array-like of shape (n_classes, n_classes)
        Row-stochastic matrix in the order of ``labels``.
    labels : array-like of shape (n_classes,), default=None
        The classes; default: those of ``y_true`` and (labels) ``y_pred``.
    n_draws : int, default=1000
        Number of label draws, at least 2.
    random_state : None, int, numpy Generator, SeedSequence or RandomState
        Seed of the draws; they do not depend on ``batch_size``.
    batch_size : int, default=None
        Draws generated at a time; default: as many as fit in about 8 MB.
    sample_weight : array-like of shape (n_samples,), default=None
        Passed to every call of ``metric``.

    Returns
    -------
    score : MonteCarloScore
        The mean and sample variance of the draws; ``nominal`` is
        ``metric(y_true, y_pred)``.

    Examples
    --------
    >>> from sklearn.metrics import accuracy_score
    >>> from sklearn_noisy.metrics import monte_carlo_score
    >>> y_true = [0, 1, 1, 0, 1, 0, 1, 1]
    >>> y_pred = [0, 1, 0, 0, 1, 1, 1, 1]
    >>> score = monte_carlo_score(accuracy_score, y_true, y_pred, q=0.1,
    ...                           n_draws=500, random_state=0)
    >>> score.metric, score.nominal, score.method
    ('accuracy', 0.75, 'monte_carlo')
    """
    if not callable(metric):
        raise TypeError(f"metric must be callable; got {metric!r}.")
    noise = {"sigma": sigma, "q": q, "transition_matrix": transition_matrix}
    given = [name for name, value in noise.items() if value is not None]
    if len(given) != 1:
        raise TypeError(
            "Pass exactly one noise model: sigma (regression), q or "
            f"transition_matrix (classification); got {given or 'none'}."
        )
    n_draws = check_positive_int(n_draws, name="n_draws", minimum=2)
    if batch_size is not None:
        batch_size = check_positive_int(batch_size, name="batch_size", minimum=1)
    rng = check_generator(random_state)

    if sigma is not None:
        values = check_regression_target(y_true, name="y_true")
        check_finite(values, name="y_true")
        sampler: Any = GaussianNoise.from_params(sigma, values.shape).sampler(values)
        n_samples = values.shape[0]
    else:
        other = y_pred if _is_label_vector(y_pred) else y_true
        index, _, classes = check_classification_labels(y_true, other, labels=labels)
        n_samples = index.size
        sampler = FlipNoise.from_params(
            q, transition_matrix, n_samples=n_samples, n_classes=classes.size
        ).sampler(index, classes)
    n_pred = _num_samples(y_pred)
    if n_pred != n_samples:
        raise ValueError(
            "y_true and y_pred must have the same number of samples; got "
            f"{n_samples} and {n_pred}."
        )
    weight = check_sample_weight(sample_weight, n_samples)
    kwargs = {} if weight is None else {"sample_weight": weight}

    if batch_size is None:
        bytes_per_draw = 8 * max(sampler.floats_per_draw, 1) * 2
        batch_size = max(1, min(n_draws, _BATCH_BYTES // bytes_per_draw))

    nominal = _call(metric, y_true, y_pred, kwargs)
    draws = np.empty(n_draws)
    for start in range(0, n_draws, batch_size):
        stop = min(start + batch_size, n_draws)
        draws[start:stop] = [  # the batch of labels is freed after each
            _call(metric, y_draw, y_pred, kwargs)
            for y_draw in sampler.draw(rng, stop - start)
        ]

    name = getattr(metric, "__name__", None)
    if not isinstance(name, str) or not name.isidentifier():  # lambdas, partials
        name = "custom"
    return _from_draws(name.removesuffix("_score") or name, nominal, n_samples, draws)


def _call(
    metric: Callable[..., Any], y: Any, y_pred: Any, kwargs: dict[str, Any]
) -> float:
    value = metric(y, y_pred, **kwargs)
    if isinstance(value, NoisyScore):
        return value.expected
    if np.ndim(value) != 0:
        raise TypeError(
            "metric must return a single number; got a value of shape "
            f"{np.shape(value)} (for multioutput metrics pick one output or "
            "average them in the callable)."
        )
    try:
        return float(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"metric must return a number; got {value!r}.") from exc


def _from_draws(
    metric: str, nominal: float, n_samples: int, draws: np.ndarray
) -> MonteCarloScore:
    """The :class:`MonteCarloScore` of the metric on its label ``draws``: their
    mean, variance (ddof=1) and the Monte Carlo standard errors of both."""
    n_draws = draws.size
    finite = np.isfinite(draws)
    if not finite.all():
        warn(
            f"The metric was not finite on {int(n_draws - finite.sum())} of "
            f"{n_draws} label draws; the Monte Carlo mean and variance are not "
            "finite either.",
            UserWarning,
        )
        with np.errstate(invalid="ignore", over="ignore"):  # inf - inf is NaN
            moments = float(np.mean(draws)), float(np.var(draws, ddof=1))
        errors = math.nan, math.nan
    elif draws.min() == draws.max():  # no noise: exactly no variance
        moments, errors = (float(draws[0]), 0.0), (0.0, 0.0)
    else:
        expected = float(np.mean(draws))
        centred = draws - expected
        centred *= centred
        variance = float(np.mean(centred)) * n_draws / (n_draws - 1)
        m4 = float(np.mean(centred * centred))
        moments = expected, variance
        errors = (
            math.sqrt(variance / n_draws),
            math.sqrt(max(m4 - variance * variance, 0.0) / n_draws),
        )
    return MonteCarloScore(
        metric,
        *moments,
        nominal,
        n_samples,
        "monte_carlo",
        n_draws=n_draws,
        standard_error=errors[0],
        variance_standard_error=errors[1],
        draws=draws,
    )
