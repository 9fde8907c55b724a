"""Re-measurement planning: which labels to measure again, for a fixed budget
(user guide: :ref:`planning_remeasurements`)."""

from __future__ import annotations

import functools
import heapq
import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
from scipy.stats import binom, norm

from ..metrics import get_metric_info, get_metric_names
from ..metrics._engines.regression.estimands import truth_root_variance
from ..utils._arrays import (
    as_float_array,
    check_finite,
    check_per_sample,
    check_sample_weight,
    read_only,
)
from ..utils._noise import check_flip_probability, check_sigma, check_sigma_dof
from ..utils._validation import check_level

__all__ = ["RemeasurementPlan", "plan_remeasurement"]

_METHOD_GREEDY = "greedy (separable, convex: exact optimum, pooled residual)"
_METHOD_POOLED = (
    "greedy (separable, convex: exact optimum, pooled residual; sigma estimated "
    "(sigma_dof): pooled SD of one reading over sqrt(readings))"
)
_METHOD_PAIRS = "greedy on pairs of annotations (separable, convex in pairs: exact)"
_METHOD_MIXED = (
    "greedy per annotation, pairs after an even count's first one (heuristic)"
)


class _Frozen:
    """``to_dict`` and pickling of the frozen results of the plans."""

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), tuple(getattr(self, f.name) for f in fields(self))

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict of the fields (None where unreachable)."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        return {
            k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in data.items()
        }


@dataclass(frozen=True, repr=False, eq=False)
class RemeasurementPlan(_Frozen):
    """Result of :func:`plan_remeasurement` (arrays read-only).

    Every SD is the label-noise SD of the truth estimate of ``metric``.

    Attributes
    ----------
    metric : str
        The metric whose truth estimate the plan sharpens.
    readings : ndarray of int of shape (n_samples,)
        Readings to add per sample (for ``"accuracy"``: annotations to add).
    readings_even : ndarray of int of shape (n_samples,)
        The same budget spread as evenly as possible (the baseline).
    std_before : float
        SD of the truth estimate now.
    std_after : float
        SD after carrying out the plan.
    std_even : float
        SD after the even allocation ``readings_even``.
    budget : int
        Readings (annotations) available.
    confidence_level : float
        Level of the half-widths.
    method : str
        The allocation rule, whether it is the exact optimum, and whether σ
        was pooled (``sigma_dof``).

    Examples
    --------
    See :func:`plan_remeasurement`.
    """

    metric: str
    readings: np.ndarray
    readings_even: np.ndarray
    std_before: float
    std_after: float
    std_even: float
    budget: int
    confidence_level: float
    method: str

    def __post_init__(self) -> None:
        for name in ("readings", "readings_even"):
            object.__setattr__(self, name, read_only(getattr(self, name), np.int64))
        for name in ("std_before", "std_after", "std_even", "confidence_level"):
            object.__setattr__(self, name, float(getattr(self, name)))
        object.__setattr__(self, "budget", int(self.budget))

    @property
    def _z(self) -> float:
        return float(norm.ppf(0.5 + 0.5 * self.confidence_level))

    @property
    def half_width_before(self) -> float:
        """Half-width ``z·std_before`` of the normal interval at the level."""
        return self._z * self.std_before

    @property
    def half_width_after(self) -> float:
        """Half-width ``z·std_after`` of the normal interval after the plan."""
        return self._z * self.std_after

    @property
    def half_width_even(self) -> float:
        """Half-width ``z·std_even`` after the even allocation."""
        return self._z * self.std_even

    @property
    def n_added(self) -> int:
        """Readings (annotations) the plan adds: ``readings.sum()``."""
        return int(self.readings.sum())

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict of the fields and the half-widths."""
        data = super().to_dict()
        for name in ("half_width_before", "half_width_after", "half_width_even"):
            data[name] = getattr(self, name)
        return data

    def __repr__(self) -> str:
        flips = get_metric_info(self.metric).noise == "flips"
        unit = "annotations" if flips else "readings"
        touched = int(np.count_nonzero(self.readings))
        level = f"{100 * self.confidence_level:g} %"
        return (
            f"RemeasurementPlan(metric={self.metric!r}, {self.n_added} of "
            f"{self.budget} {unit} added to {touched} of {self.readings.size} "
            f"samples;\n  std {self.std_before:.4g} -> {self.std_after:.4g} "
            f"(even: {self.std_even:.4g}); {level} half-width "
            f"{self.half_width_before:.4g} -> {self.half_width_after:.4g} "
            f"(even: {self.half_width_even:.4g});\n  method={self.method!r})"
        )


def _check_counts(value: Any, n_samples: int, *, name: str) -> np.ndarray:
    """Positive integer counts, a scalar or one per sample, as an int array."""
    array = np.broadcast_to(check_per_sample(value, n_samples, name=name), n_samples)
    check_finite(array, name=name)
    bad = array[(array < 1) | (array != np.round(array))]
    if bad.size:
        raise ValueError(f"{name} must hold integers >= 1; got {float(bad[0])!r}.")
    return array.astype(np.int64)


def _check_budget(budget: Any) -> int:
    if not isinstance(budget, numbers.Integral) or isinstance(budget, bool):
        raise TypeError(
            "budget must be an integer, the number of readings (annotations) to "
            f"add; got {budget!r} of type {type(budget).__name__}."
        )
    if budget < 0:
        raise ValueError(f"budget must be >= 0; got {budget!r}.")
    return int(budget)


def pool_sigma(
    sigma: Any, sigma_dof: Any, n_readings: Any
) -> tuple[np.ndarray, float | None]:
    """Each estimated σ (finite ``sigma_dof``) replaced by the pooled SD of one
    reading over √readings, ``s/√n_i`` with ``s² = Σ ν_i n_i σ_i² / Σ ν_i`` over
    them; a known σ (``inf``) kept. Returns the σ and ``s`` (None: none pooled).
    """
    sigma, dof = np.broadcast_arrays(np.asarray(sigma, float), np.asarray(sigma_dof))
    own = np.isfinite(dof) & (dof > 0)
    if not np.any(own):
        return sigma, None
    n = np.broadcast_to(np.asarray(n_readings, float), sigma.shape)
    pooled = float(
        np.sqrt(np.sum(dof[own] * n[own] * sigma[own] ** 2) / dof[own].sum())
    )
    return np.where(np.isfinite(dof), pooled / np.sqrt(n), sigma), pooled


def _check_targets(y: Any, y_pred: Any, *, gaussian: bool) -> tuple[Any, Any]:
    arrays = []
    for name, value in (("y", y), ("y_pred", y_pred)):
        if gaussian:
            array = as_float_array(value, name=name)
            if array.ndim == 1:
                check_finite(array, name=name)
        else:
            array = np.asarray(value)
        if array.ndim != 1 or array.shape[0] == 0:
            raise ValueError(
                f"{name} must be a non-empty 1-D array (one output); got shape "
                f"{array.shape}."
            )
        arrays.append(array)
    if arrays[0].shape[0] != arrays[1].shape[0]:
        raise ValueError(
            "y and y_pred must have the same number of samples; got "
            f"{arrays[0].shape[0]} and {arrays[1].shape[0]}."
        )
    if not gaussian:
        classes = np.union1d(arrays[0], arrays[1])
        if classes.size > 2:
            raise ValueError(
                "metric='accuracy' plans binary labels (a flip probability q); "
                f"y and y_pred hold {classes.size} classes."
            )
    return arrays[0], arrays[1]


# -------------------------------------------------------------------- greedy
def _greedy(
    variance: Callable[[int, int], float],
    start: np.ndarray,
    budget: int,
    cost: Callable[[int], int],
) -> np.ndarray:
    """Counts added by the greedy rule (a max-heap of each sample's next step of
    ``cost(m)`` readings, by the reduction of ``variance(i, m)`` per reading)."""
    counts = start.copy()
    heap: list[tuple[float, int, int]] = []

    def push(i: int, m: int) -> None:
        step = cost(m)
        gain = variance(i, m) - variance(i, m + step)
        if gain > 0.0:
            heapq.heappush(heap, (-gain / step, i, step))

    for i, m in enumerate(start.tolist()):
        push(i, m)
    remaining = budget
    while heap and remaining > 0:
        _, i, step = heapq.heappop(heap)
        if step > remaining:
            continue
        counts[i] += step
        remaining -= step
        push(i, int(counts[i]))
    return counts - start


def _even(start: np.ndarray, budget: int, cost: Callable[[int], int]) -> np.ndarray:
    """The budget spread in rounds over the samples, in index order, each round
    giving every sample its next useful step (one reading; for flips the
    annotation or pair that changes its majority vote)."""
    counts = start.copy()
    remaining = budget
    while True:
        steps = np.array([cost(m) for m in counts.tolist()])
        if steps.sum() > remaining:
            break
        counts += steps
        remaining -= int(steps.sum())
    for i, step in enumerate(steps.tolist()):
        if step <= remaining:
            counts[i] += step
            remaining -= step
    return counts - start


# ------------------------------------------------------------ variance terms
def _regression_terms(y, y_pred, sigma, n_readings, weight, root):
    """``(term, std)`` of the truth MSE (its root with ``root``): ``term(i, m)``
    sample i's variance term at ``m`` readings with the pooled ``D = max(T̂, 0)``,
    ``std(extra)`` the library's label-noise SD after ``extra`` more readings
    (user guide: :ref:`planning_remeasurements`)."""
    sigma2 = np.broadcast_to(np.square(sigma), y.shape)
    d2 = np.square(y - y_pred) - sigma2  # unbiased for the squared true residual
    s2_reading = sigma2 * n_readings  # one reading's variance
    w2, w_sum = weight * weight, float(weight.sum())
    estimate = float(weight @ d2) / w_sum  # the truth MSE T̂
    pooled = 4.0 * max(estimate, 0.0)
    s2_l, w2_l = s2_reading.tolist(), w2.tolist()

    def term(i: int, m: int) -> float:
        s2 = s2_l[i] / m
        return w2_l[i] * s2 * (pooled + 2.0 * s2)

    def std(extra: np.ndarray) -> float:
        s2 = s2_reading / (n_readings + extra)
        variance = max(
            float(w2 @ (s2 * (4.0 * d2 + 2.0 * s2))), float(w2 @ (2 * s2 * s2))
        )
        variance /= w_sum * w_sum
        if not root:
            return math.sqrt(variance)
        spread = truth_root_variance(np.array([estimate]), np.array([variance]))
        return math.sqrt(float(spread[0]))

    return term, std


def _majority_error(q: Any, m: Any) -> Any:
    """``q_m``: a majority of ``m`` annotations wrong with probability ``q`` each,
    ties broken at random."""
    m = np.asarray(m)
    half = m // 2
    tie = np.where(m % 2 == 0, 0.5 * binom.pmf(half, m, q), 0.0)
    return binom.sf(half, m, q) + tie


def _vote_variance(q_m: Any) -> Any:
    """``q_m (1 − q_m)/(1 − 2 q_m)²``: the de-noised hit's variance."""
    return q_m * (1.0 - q_m) / (1.0 - 2.0 * q_m) ** 2


@functools.lru_cache(maxsize=65536)
def _flip_variance(q: float, m: int) -> float:
    return float(_vote_variance(_majority_error(q, m)))


def _flip_step(m: int) -> int:
    """An even count's next annotation breaks its ties; an odd one needs two."""
    return 1 if m % 2 == 0 else 2


def _flip_terms(q, n_annotations, weight):
    """``(term, std)`` of the de-noised binary accuracy, as
    :func:`_regression_terms` with annotations."""
    q_all = np.broadcast_to(q, n_annotations.shape).astype(np.float64)
    q_l = q_all.tolist()
    w2, w_sum = weight * weight, float(weight.sum())
    w2_l = w2.tolist()

    def term(i: int, m: int) -> float:
        return w2_l[i] * _flip_variance(q_l[i], m)

    def std(extra: np.ndarray) -> float:
        variances = _vote_variance(_majority_error(q_all, n_annotations + extra))
        return math.sqrt(float(w2 @ variances)) / w_sum

    return term, std


def _check_plan(metric, y, y_pred, sample_weight, level, *, sigma, q, **options):
    """The checked inputs of a plan: ``(y, y_pred, noise, counts, term, std)``,
    ``noise`` the validated ``sigma`` (pooled where ``sigma_dof`` says it was
    estimated, :func:`pool_sigma`) or ``q``, readings (annotations) ``counts``."""
    planned = [name for name in get_metric_names() if get_metric_info(name).planned]
    if not isinstance(metric, str) or metric not in planned:
        raise ValueError(
            f"metric must be one of {planned}: the "
            "metrics whose truth variance is a sum over samples of a known "
            f"function of each sample's readings; got {metric!r}."
        )
    if (sigma is None) == (q is None):
        raise TypeError(
            "Pass exactly one noise model: sigma (the standard error of each "
            "regression label) or q (the flip probability of one annotation); "
            f"got {'both' if sigma is not None else 'neither'}."
        )
    gaussian = get_metric_info(metric).noise == "sigma"
    if gaussian == (sigma is None):
        wanted, given = ("sigma", "q") if gaussian else ("q", "sigma")
        raise ValueError(f"metric={metric!r} needs {wanted}, not {given}.")
    n_readings, n_annotations = options.get("n_readings"), options.get("n_annotations")
    sigma_dof = options.get("sigma_dof")
    if (n_annotations if gaussian else n_readings) is not None:
        raise TypeError(
            "n_annotations applies to q (flips); use n_readings."
            if gaussian
            else "n_readings applies to sigma; use n_annotations."
        )
    if not gaussian and sigma_dof is not None:
        raise TypeError("sigma_dof applies to sigma (regression), not to q.")
    check_level(level)
    y, y_pred = _check_targets(y, y_pred, gaussian=gaussian)
    n = y.shape[0]
    weight = check_sample_weight(sample_weight, n)
    weight = np.ones(n) if weight is None else weight
    name = "n_readings" if gaussian else "n_annotations"
    counts = n_readings if gaussian else n_annotations
    counts = _check_counts(1 if counts is None else counts, n, name=name)
    if gaussian:
        noise = check_sigma(sigma, (n,))
        if sigma_dof is not None:
            noise = pool_sigma(noise, check_sigma_dof(sigma_dof, n), counts)[0]
        root = get_metric_info(metric).definition.unit_power == 1
        term, std = _regression_terms(y, y_pred, noise, counts, weight, root)
        return y, y_pred, noise, counts, term, std
    noise = check_flip_probability(q, n)
    if np.max(noise) >= 0.5:
        raise ValueError(
            "q must be below 0.5: at q = 0.5 an annotation carries no "
            "information and the truth accuracy has no unbiased estimate "
            f"(above it, q is usually the probability of being right); got "
            f"max q = {float(np.max(noise))!r}."
        )
    return y, y_pred, noise, counts, *_flip_terms(noise, counts, weight)


def plan_remeasurement(
    y: Any,
    y_pred: Any,
    *,
    sigma: Any = None,
    n_readings: Any = None,
    budget: int,
    metric: str = "mean_squared_error",
    q: Any = None,
    n_annotations: Any = None,
    sample_weight: Any = None,
    confidence_level: float = 0.95,
    sigma_dof: Any = None,
) -> RemeasurementPlan:
    """Plan where to spend ``budget`` new readings to sharpen a truth estimate.

    Chooses how many readings (for ``"accuracy"``: annotations, majority vote)
    to add to each sample so that the label-noise SD of the truth estimate of
    ``metric`` is smallest, in expectation over the new readings, and compares
    it with spreading the budget evenly. The SDs are those of the library's
    truth estimate with σ (``q``) known, the labels being the means (majority)
    of all of a sample's readings. Read more, with the derivation and when the
    greedy plan is exact, in the :ref:`User Guide <planning_remeasurements>`.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        The labels: means of readings (regression) or binary classes.
    y_pred : array-like of shape (n_samples,)
        Predictions, made out of fold.
    sigma : float or array-like of shape (n_samples,), default=None
        Standard error of each label (of the mean of its ``n_readings``).
        Exactly one of ``sigma`` and ``q``.
    n_readings : int or array-like of int of shape (n_samples,), default=None
        Readings each label averages now; None means 1.
    budget : int
        Readings (annotations) to add in total, ``>= 0``.
    metric : {"mean_squared_error", "root_mean_squared_error", "accuracy"}, \
default="mean_squared_error"
        The metric whose truth estimate is to be sharpened.
    q : float or array-like of shape (n_samples,), default=None
        Probability that one annotation is wrong, in ``[0, 0.5)``.
    n_annotations : int or array-like of int of shape (n_samples,), default=None
        Annotations each label is the majority of now; None means 1.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights.
    confidence_level : float, default=0.95
        Level of the normal half-widths ``z·std`` of the result.
    sigma_dof : float or array-like of shape (n_samples,), default=None
        Degrees of freedom of each ``sigma`` estimated from a few readings
        (``inf``: known), as the metrics take it. Each estimated σ is then
        replaced by the pooled SD of one reading over √``n_readings`` (weights
        ``sigma_dof``): a plan on each sample's own σ would chase the samples
        whose few readings disagree by chance. None: σ known, as given.

    Returns
    -------
    plan : RemeasurementPlan
        ``readings`` to add per sample, the SDs before, after and with the
        even allocation, and the ``method``.

    See Also
    --------
    plan_sample_size : Test samples or readings for an interval width.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_noisy.model_selection import plan_remeasurement
    >>> y = np.array([0.1, 1.9, 3.2, 4.0])
    >>> y_pred = np.array([0.0, 2.0, 2.0, 4.1])
    >>> plan = plan_remeasurement(y, y_pred, sigma=[0.1, 0.1, 0.6, 0.3],
    ...                           n_readings=2, budget=6)
    >>> plan.readings
    array([0, 0, 5, 1])
    >>> print(f"{plan.std_before:.3f} -> {plan.std_after:.3f} "
    ...       f"(even {plan.std_even:.3f})")
    0.336 -> 0.168 (even 0.267)
    """
    budget = _check_budget(budget)
    noise = dict(
        n_readings=n_readings, n_annotations=n_annotations, sigma_dof=sigma_dof
    )
    *_, counts, term, std = _check_plan(
        metric, y, y_pred, sample_weight, confidence_level, sigma=sigma, q=q, **noise
    )
    if sigma is not None:
        pooled = sigma_dof is not None and np.any(np.isfinite(sigma_dof))
        cost, method = (lambda m: 1), _METHOD_POOLED if pooled else _METHOD_GREEDY
    else:
        odd = bool(np.all(counts % 2 == 1))
        cost, method = _flip_step, _METHOD_PAIRS if odd else _METHOD_MIXED
    added = _greedy(term, counts, budget, cost)
    even = _even(counts, budget, cost)
    return RemeasurementPlan(
        metric=metric,
        readings=added,
        readings_even=even,
        std_before=std(np.zeros(counts.shape[0], dtype=np.int64)),
        std_after=std(added),
        std_even=std(even),
        budget=budget,
        confidence_level=confidence_level,
        method=method,
    )
