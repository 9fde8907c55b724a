"""Feldman and Cousins's unified interval for a Gaussian estimate near a bound
(Phys. Rev. D 57, 3873, 1998; user guide: :ref:`bounded_intervals`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from scipy.optimize import brentq
from scipy.special import ndtr, ndtri


def _root(function: Callable[[float], float], low: float, high: float) -> float:
    """The root of ``function`` in ``[low, high]``, to the last digits."""
    return brentq(function, low, high, xtol=1e-14, rtol=1e-14)


def _acceptance(mu: float, confidence: float) -> tuple[float, float]:
    """Acceptance interval ``[x1, x2]`` of ``x ~ N(mu, 1)``, ``mu >= 0``."""
    z = float(ndtri(0.5 + confidence / 2))
    if mu <= 0.0:
        return -math.inf, float(ndtri(confidence))
    if mu >= z:
        return mu - z, mu + z

    def upper(x1: float) -> float:
        # x1 < 0 has ratio exp(x1 mu - mu²/2); x2 > mu has the same ratio.
        return mu + math.sqrt(mu * mu - 2.0 * x1 * mu)

    def excess(x1: float) -> float:
        return float(ndtr(upper(x1) - mu) - ndtr(x1 - mu)) - confidence

    low = -1.0
    while excess(low) < 0.0:
        low *= 2.0
    x1 = _root(excess, low, 0.0)
    return x1, upper(x1)


def unified_normal_mean(x0: float, confidence: float) -> tuple[float, float]:
    """Feldman and Cousins's interval of ``mu >= 0`` for ``x0 ~ N(mu, 1)``: the
    set whose acceptance interval holds ``x0``."""
    z = float(ndtri(0.5 + confidence / 2))
    if x0 >= 0.0:
        high = x0 + z
    else:
        high = _root(lambda mu: _acceptance(mu, confidence)[0] - x0, 1e-300, z)
    if x0 <= _acceptance(0.0, confidence)[1]:
        low = 0.0
    elif x0 >= 2.0 * z:
        low = x0 - z
    else:
        low = _root(lambda mu: _acceptance(mu, confidence)[1] - x0, 0.0, z)
    return low, high


def near_bound(
    estimate: float, sd: float, lower: float, upper: float, confidence: float
) -> bool:
    """Whether the unified interval differs from ``estimate ± z·sd``: the
    estimate lies within ``2z`` SDs of a bound (or beyond it)."""
    z = float(ndtri(0.5 + confidence / 2))
    return bool(min(estimate - lower, upper - estimate) < 2.0 * z * sd)


def unified_interval(
    estimate: float,
    sd: float,
    *,
    lower: float = -math.inf,
    upper: float = math.inf,
    confidence: float = 0.95,
    ends: tuple[float, float] | None = None,
) -> tuple[float, float]:
    """Interval in ``[lower, upper]`` from an unbiased Gaussian ``estimate`` of SD
    ``sd``: ``estimate ± z·sd`` far from both bounds, the unified one near one.

    With ``ends``, the interval ``[estimate − ends[0], estimate + ends[1]]``
    (a studentized one), widened near a bound to hold the unified one.

    Examples
    --------
    >>> from sklearn_noisy.utils._unified_interval import unified_interval
    >>> low, high = unified_interval(-0.5, 1.0, lower=0.0)
    >>> print(f"{low:.3f} {high:.3f}")
    0.000 1.493
    """
    if not (math.isfinite(estimate) and math.isfinite(sd)) or sd <= 0.0:
        if math.isnan(estimate) or math.isnan(sd):
            return math.nan, math.nan
        point = min(max(estimate, lower), upper)
        return point, point
    z = float(ndtri(0.5 + confidence / 2))
    below, above = (estimate - lower) / sd, (upper - estimate) / sd
    if below <= above and below < 2.0 * z:
        a, b = unified_normal_mean(below, confidence)
        low, high = lower + a * sd, lower + b * sd
    elif above < below and above < 2.0 * z:
        a, b = unified_normal_mean(above, confidence)
        low, high = upper - b * sd, upper - a * sd
    else:
        low, high = estimate - z * sd, estimate + z * sd
    low, high = max(low, lower), min(high, upper)
    if ends is None:
        return low, high
    low_t = min(max(estimate - ends[0], lower), upper)
    high_t = max(min(estimate + ends[1], upper), lower)
    if near_bound(estimate, sd, lower, upper, confidence):
        return min(low, low_t), max(high, high_t)
    return low_t, high_t


@dataclass(frozen=True)
class SquareRootInterval:
    """The interval of ``√θ``: the square roots of the unified interval of ``θ``
    (``estimate``), whose SD is the root's times ``factor = dθ/d√θ``."""

    estimate: float
    factor: float
    #: ``NoisyScore.interval_method`` of the root metric.
    method: ClassVar[str] = "unified_sqrt"

    def interval(
        self,
        confidence_level: float,
        sd: float,
        ends: tuple[float, float] | None = None,
    ) -> tuple[float, float, float]:
        """``(low, high, nan)`` for the root's SD ``sd``; ``ends``: the square's
        studentized ends (widened to the unified interval's near 0)."""
        square_sd = sd * self.factor
        if ends is not None:
            ends = (square_sd * ends[0], square_sd * ends[1])
        low, high = unified_interval(
            self.estimate, square_sd, lower=0.0, confidence=confidence_level, ends=ends
        )
        return math.sqrt(low), math.sqrt(high), math.nan
