"""How much data a claim needs: test samples or readings per sample for a
target interval width, and test samples to tell two models apart (user guide:
:ref:`planning_sample_size`)."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import ndtr, ndtri

from .._noisy_score import NoisyScore
from ..metrics import get_metric_info, get_metric_names
from ..utils._validation import check_level
from ._planning import _check_plan, _Frozen, _majority_error

__all__ = [
    "ComparisonSizePlan",
    "SampleSizePlan",
    "plan_comparison_size",
    "plan_sample_size",
]

#: The sampling rules whose variance falls as 1/n: exactly for a mean of
#: per-sample terms, to first order for the delta method.
_SCALED = ("per_sample_terms", "delta")

#: The largest readings (annotations) per sample the search tries.
_MAX_READINGS = 2**40


@dataclass(frozen=True, repr=False, eq=False)
class SampleSizePlan(_Frozen):
    """Result of :func:`plan_sample_size`: widths of the normal interval of the
    truth estimate, from the label noise and the test-set sampling together.

    Attributes
    ----------
    metric : str
        The metric planned for.
    target_width : float
        The width asked for.
    confidence_level : float
        Level of the interval.
    n_samples : int
        Test samples of the pilot.
    width : float
        The pilot's width.
    label_std, sampling_std : float
        The pilot's SDs from the label noise and from the test-set sampling.
    n_samples_needed : int
        Test samples for ``target_width`` with the pilot's readings per sample.
    n_readings_needed : int or None
        Readings (annotations) per sample for ``target_width`` at the pilot's
        ``n_samples``; None when ``width_floor >= target_width``.
    readings_added : int or None
        New readings (annotations) ``n_readings_needed`` takes in total.
    width_floor : float
        The width at ``n_samples`` of the test-set sampling alone.

    Examples
    --------
    See :func:`plan_sample_size`.
    """

    metric: str
    target_width: float
    confidence_level: float
    n_samples: int
    width: float
    label_std: float
    sampling_std: float
    n_samples_needed: int
    n_readings_needed: int | None
    readings_added: int | None
    width_floor: float

    def __repr__(self) -> str:
        flips = get_metric_info(self.metric).noise == "flips"
        unit = "annotations" if flips else "readings"
        if self.n_readings_needed is None:
            readings = (
                f"unreachable by {unit} (test-set sampling alone: width "
                f"{self.width_floor:.4g})"
            )
        else:
            unit = unit[:-1] if self.n_readings_needed == 1 else unit
            readings = (
                f"{self.n_readings_needed} {unit} per sample (+{self.readings_added})"
            )
        return (
            f"SampleSizePlan(metric={self.metric!r}, width {self.width:.4g} at "
            f"n={self.n_samples} -> target {self.target_width:.4g} "
            f"({100 * self.confidence_level:g} %):\n  n_samples_needed="
            f"{self.n_samples_needed}; at n={self.n_samples}: {readings})"
        )


@dataclass(frozen=True, repr=False, eq=False)
class ComparisonSizePlan(_Frozen):
    """Result of :func:`plan_comparison_size`, if the true difference is the
    pilot's estimate and its variances per sample stay the pilot's.

    Attributes
    ----------
    metric : str
        The difference's metric, e.g. ``"mean_squared_error_difference"``.
    power : float
        The probability asked for that the interval excludes 0.
    confidence_level : float
        Level of the interval (the test's ``1 − α``).
    n_samples : int
        Test samples of the pilot.
    difference : float
        The pilot's estimate of the difference.
    std : float
        Its SD, from the label noise and the test-set sampling.
    power_now : float
        The power at ``n_samples``.
    n_samples_needed : int or None
        Test samples for ``power``; None when the difference is 0.
    n_samples_conservative : int or None
        The same for the end of the pilot's interval nearer 0; None when the
        interval holds 0.
    power_limit_readings : float
        The power at ``n_samples`` without any label noise.
    n_readings_needed : int or None
        With ``n_readings``: the readings per sample for ``power`` at
        ``n_samples``; None when not asked for or out of reach.

    Examples
    --------
    See :func:`plan_comparison_size`.
    """

    metric: str
    power: float
    confidence_level: float
    n_samples: int
    difference: float
    std: float
    power_now: float
    n_samples_needed: int | None
    n_samples_conservative: int | None
    power_limit_readings: float
    n_readings_needed: int | None = None

    def __repr__(self) -> str:
        readings = ""
        if self.n_readings_needed is not None:
            readings = f", {self.n_readings_needed} readings per sample"
        return (
            f"ComparisonSizePlan(metric={self.metric!r}, difference "
            f"{self.difference:.4g} (std {self.std:.4g}) at n={self.n_samples}: "
            f"power {self.power_now:.3g};\n  n_samples_needed="
            f"{self.n_samples_needed} for power {self.power:g} "
            f"(conservative: {self.n_samples_conservative}); power without "
            f"label noise at n={self.n_samples}: {self.power_limit_readings:.3g}"
            f"{readings})"
        )


def _samples_for(per_sample: float, bound: float) -> int:
    """The least ``n >= 2`` with ``per_sample/n <= bound``."""
    return max(2, math.ceil(per_sample / bound * (1.0 - 1e-12)))


def _first_met(variance, bound: float, start: int) -> int | None:
    """The least count ``k >= start`` with ``variance(k) <= bound``,
    ``variance`` non-increasing in ``k``: doubling, then bisection; None
    beyond :data:`_MAX_READINGS`."""
    if variance(start) <= bound:
        return start
    low, high = start, 2 * start
    while variance(high) > bound:
        if high >= _MAX_READINGS:
            return None
        low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        if variance(middle) <= bound:
            high = middle
        else:
            low = middle
    return high


def plan_sample_size(
    y: Any,
    y_pred: Any,
    *,
    target_width: float,
    metric: str = "mean_squared_error",
    sigma: Any = None,
    n_readings: Any = None,
    q: Any = None,
    n_annotations: Any = None,
    sample_weight: Any = None,
    confidence_level: float = 0.95,
) -> SampleSizePlan:
    """Test samples, or readings per sample, for a target interval width.

    From a pilot evaluation, the number of test samples whose interval of the
    truth estimate of ``metric`` (label noise and test-set sampling together)
    has width ``target_width``, and the readings per sample that reach it at
    the pilot's size, or the limit of the test-set sampling where they
    cannot. Read more, with the derivation, in the
    :ref:`User Guide <planning_sample_size>`.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        The pilot's labels: means of readings (regression) or binary classes.
    y_pred : array-like of shape (n_samples,)
        Predictions, made out of fold.
    target_width : float
        Width of the interval to reach, in the metric's units.
    metric : {"mean_squared_error", "root_mean_squared_error", "accuracy"}, \
default="mean_squared_error"
        The metric, whose truth estimand is planned for.
    sigma : float or array-like of shape (n_samples,), default=None
        Standard error of each label (of the mean of its ``n_readings``).
        Exactly one of ``sigma`` and ``q``.
    n_readings : int or array-like of int of shape (n_samples,), default=None
        Readings each label averages now; None means 1.
    q : float or array-like of shape (n_samples,), default=None
        Probability that one annotation is wrong, in ``[0, 0.5)``.
    n_annotations : int or array-like of int of shape (n_samples,), default=None
        Annotations each label is the majority of now; None means 1.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights; new samples are taken to be weighted
        alike.
    confidence_level : float, default=0.95
        Level of the interval.

    Returns
    -------
    plan : SampleSizePlan
        ``n_samples_needed``, ``n_readings_needed`` (None when unreachable by
        readings) and the floor ``width_floor``.

    See Also
    --------
    plan_comparison_size : Test samples to tell two models apart.
    plan_remeasurement : Where to spend a budget of new readings.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_noisy.model_selection import plan_sample_size
    >>> rng = np.random.default_rng(0)
    >>> mu = rng.normal(size=200)
    >>> y = mu + rng.normal(scale=0.5, size=200)    # one reading each
    >>> y_pred = mu + rng.normal(scale=0.3, size=200)
    >>> plan = plan_sample_size(y, y_pred, sigma=0.5, target_width=0.1)
    >>> plan.n_samples_needed, plan.n_readings_needed, plan.readings_added
    (449, 3, 400)
    """
    if not isinstance(target_width, numbers.Real) or isinstance(target_width, bool):
        raise TypeError(
            f"target_width must be a positive number; got {target_width!r}."
        )
    if not (math.isfinite(target_width) and target_width > 0.0):
        raise ValueError(
            f"target_width must be positive and finite; got {target_width!r}."
        )
    target_width = float(target_width)
    given = dict(n_readings=n_readings, n_annotations=n_annotations)
    y, y_pred, noise, counts, _, std = _check_plan(
        metric, y, y_pred, sample_weight, confidence_level, sigma=sigma, q=q, **given
    )
    n = y.shape[0]
    if n < 2:
        raise ValueError(
            f"y must hold at least 2 samples for the test-set sampling variance; "
            f"got {n}."
        )
    info = get_metric_info(metric)
    if q is not None:  # the q of the library's truth accuracy: the majority's
        noise = _majority_error(noise, counts)
    options = dict(
        sample_weight=sample_weight, estimand="truth", test_set_sampling=True
    )
    score = info.function(y, y_pred, **{info.noise_parameter: noise}, **options)
    label, sampling = score.variance, score.sampling_variance
    if not (math.isfinite(label) and math.isfinite(sampling)):
        raise ValueError(
            f"The pilot's {metric} has no finite label-noise and sampling "
            f"variances (got {label!r} and {sampling!r}); check y and y_pred."
        )
    z = float(ndtri(0.5 + 0.5 * confidence_level))
    bound = (target_width / (2.0 * z)) ** 2

    def variance(k: int) -> float:
        return std(np.maximum(k - counts, 0)) ** 2 + sampling

    start = int(counts.min())  # at the least count nothing is added
    k = None if sampling >= bound else _first_met(variance, bound, start)
    return SampleSizePlan(
        metric=metric,
        target_width=target_width,
        confidence_level=float(confidence_level),
        n_samples=n,
        width=2.0 * z * math.sqrt(label + sampling),
        label_std=math.sqrt(label),
        sampling_std=math.sqrt(sampling),
        n_samples_needed=_samples_for(n * (label + sampling), bound),
        n_readings_needed=k,
        readings_added=None if k is None else int(np.maximum(k - counts, 0).sum()),
        width_floor=2.0 * z * math.sqrt(sampling),
    )


# ---------------------------------------------------------------- two models
def plan_comparison_size(
    difference: NoisyScore,
    *,
    power: float = 0.8,
    confidence_level: float = 0.95,
    n_readings: int | None = None,
) -> ComparisonSizePlan:
    """Test samples to tell two models apart with a stated probability.

    From a pilot's paired difference ``d`` of a metric between two models,
    with its label-noise and test-set sampling variances, the number of test
    samples at which the interval of the difference at ``confidence_level``
    excludes 0 with probability ``power``, if the true difference is ``d``;
    with ``n_readings``, also the readings per sample that reach ``power`` at
    the pilot's size. Read more, with the formulas and how to plan for
    ``probability_better``, in the :ref:`User Guide <planning_sample_size>`.

    Parameters
    ----------
    difference : NoisyScore
        The pilot's difference with its ``sampling_variance``:
        ``compare_estimators(...).differences[(a, b)][metric]``, or
        :func:`~sklearn_noisy.metrics.expected_paired_difference` with
        ``test_set_sampling=True``.
    power : float, default=0.8
        Probability that the interval excludes 0, in (0, 1).
    confidence_level : float, default=0.95
        Level of the interval, ``1 − α``.
    n_readings : int, default=None
        Readings each pilot label averages (the same for every sample), for
        ``n_readings_needed``; a metric with Gaussian label noise (``sigma``)
        only. None: no readings answer.

    Returns
    -------
    plan : ComparisonSizePlan
        ``n_samples_needed``, the conservative ``n_samples_conservative``,
        the power now and the power without label noise.

    See Also
    --------
    plan_sample_size : Test samples or readings for an interval width.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_noisy.metrics import expected_paired_difference
    >>> from sklearn_noisy.model_selection import plan_comparison_size
    >>> rng = np.random.default_rng(0)
    >>> mu = rng.normal(size=300)
    >>> y = mu + rng.normal(scale=0.5, size=300)
    >>> a = mu + rng.normal(scale=0.4, size=300)
    >>> b = mu + rng.normal(scale=0.6, size=300)
    >>> d = expected_paired_difference(y, a, b, metric="mean_squared_error",
    ...                                sigma=0.5, test_set_sampling=True)
    >>> plan = plan_comparison_size(d, power=0.8)
    >>> plan.n_samples_needed, plan.n_samples_conservative, round(plan.power_now, 2)
    (185, 908, 0.95)
    """
    if not isinstance(difference, NoisyScore):
        raise TypeError(
            "difference must be a NoisyScore, e.g. compare_estimators(...)"
            ".differences[(a, b)][metric]; got "
            f"{type(difference).__name__}."
        )
    if not isinstance(power, numbers.Real) or isinstance(power, bool):
        raise TypeError(f"power must be a float in (0, 1); got {power!r}.")
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1); got {power!r}.")
    check_level(confidence_level)
    sampling, label = difference.sampling_variance, difference.variance
    if difference.sampling_method not in _SCALED or not (
        math.isfinite(sampling)
        and math.isfinite(label)
        and math.isfinite(difference.expected)
    ):
        raise ValueError(
            "difference needs a finite estimate, label-noise variance and a sampling "
            "variance from per-sample terms or the delta method (test_set_sampling"
            f"=True); got variance={label!r}, sampling_variance={sampling!r} "
            f"({difference.sampling_method!r})."
        )
    if n_readings is not None:
        if not isinstance(n_readings, numbers.Integral) or isinstance(n_readings, bool):
            raise TypeError(
                f"n_readings must be an integer or None; got {n_readings!r}."
            )
        name = difference.metric.removesuffix("_difference")
        if n_readings < 1 or name not in get_metric_names(noise="sigma"):
            raise ValueError(
                "n_readings must be >= 1, for a metric with Gaussian label noise "
                f"(sigma); got {n_readings!r} for {difference.metric!r}."
            )
    n = difference.n_samples
    d = abs(difference.expected)
    total = label + sampling
    z = float(ndtri(0.5 + 0.5 * confidence_level))
    z_power = float(ndtri(power))

    def power_at(variance: float) -> float:
        if variance <= 0.0:
            return 1.0 if d > 0.0 else 0.0
        return float(ndtr(d / math.sqrt(variance) - z))

    def needed(gap: float) -> int | None:
        if gap <= 0.0:
            return None
        if total <= 0.0 or z + z_power <= 0.0:
            return 2
        return _samples_for(n * total, (gap / (z + z_power)) ** 2)

    k = None
    bound = (d / (z + z_power)) ** 2 if z + z_power > 0.0 else math.inf
    if n_readings is not None and d > 0.0 and sampling < bound:
        # the least k >= n_readings with label · n_readings/k + sampling <= bound
        ratio = label * n_readings / (bound - sampling)
        k = max(int(n_readings), math.ceil(ratio * (1.0 - 1e-12)))
    return ComparisonSizePlan(
        metric=difference.metric,
        power=float(power),
        confidence_level=float(confidence_level),
        n_samples=n,
        difference=difference.expected,
        std=math.sqrt(total),
        power_now=power_at(total),
        n_samples_needed=needed(d),
        n_samples_conservative=needed(d - z * math.sqrt(total)),
        power_limit_readings=power_at(sampling),
        n_readings_needed=k,
    )
