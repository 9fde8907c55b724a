"""Regression metrics at the edges of float64's range.

The losses take only the residuals and ``sigma`` (a dimensionless metric also
``y``'s spread), so a common offset and a common power-of-two scale of ``y``,
``ŷ`` and ``σ`` change nothing but the units of the result: here the inputs
are shifted and rescaled where float64 would lose them, the result is given
back in the inputs' units, and a result beyond the range is reported once, by
:func:`check_finite_results` (user guide: :ref:`regression_metrics`).
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._noisy_score import NoisyScore
from ..utils._arrays import check_finite
from ..utils._unified_interval import SquareRootInterval
from ..utils._warnings import _QUIET, quiet, warn
from ._definitions.regression import RegressionLoss

__all__ = ["at_unit_scale", "centred_inputs", "check_finite_results"]


#: Within a rescaled call (:func:`at_unit_scale`): whether the overflow
#: warning was given (a list, empty until it was); None elsewhere.
_OVERFLOW_WARNED: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "sklearn_noisy_overflow_warned", default=None
)


def check_finite_results(
    metric: str, inputs: tuple[Any, Any, Any], results: tuple[np.ndarray, ...]
) -> None:
    """Where a result is not finite: raise on a NaN/inf input, else warn.

    The deferred check of ``check_regression_inputs(ensure_finite=False)``.
    """
    if all(np.isfinite(values).all() for values in results):
        return
    for name, array in zip(("y_true", "y_pred", "sigma"), inputs, strict=True):
        if isinstance(array, np.ndarray):
            check_finite(array[:, 0] if array.shape[1] == 1 else array, name=name)
    warned = _OVERFLOW_WARNED.get()
    if warned:
        return
    if warned is not None and not _QUIET.get():  # given, not left out
        warned.append(metric)
    warn(
        f"{metric} overflowed: the errors or their moments exceed the float64 "
        "range, so part of the result is inf. Rescale y_true, y_pred and sigma.",
        RuntimeWarning,
    )


def centred_inputs(definition: RegressionLoss, inputs: tuple) -> tuple:
    """``inputs`` shifted by ``y``'s first row, rescaled at extreme scales.

    The loss ignores a common offset and a common scale of ``y``, ``ŷ`` and
    ``σ``: the sums are taken about ``y[0]`` (a warning says when float64 held
    the labels too coarsely, next to their spread, to resolve 1e-6), and
    divided by a power of two (exact) when the spread is beyond 1e±100.
    """
    y, y_pred, sigma = inputs[:3]
    with np.errstate(all="ignore"):
        offset = y[0].copy()
        if not np.all(np.isfinite(offset)):
            return inputs
        y, y_pred = y - offset, y_pred - offset
        largest = max(
            float(np.max(np.abs(values), initial=0.0)) for values in (y, y_pred, sigma)
        )
        scale = 1.0
        if 0.0 < largest < math.inf and not 1e-100 < largest < 1e100:
            scale = 2.0 ** math.floor(math.log2(largest))
            y, y_pred, sigma = y / scale, y_pred / scale, sigma / scale
        spread = np.sqrt(np.mean(y * y, axis=0)) * scale
    resolution = np.spacing(np.abs(offset))
    coarse = resolution > 1e-6 * spread
    if np.any(coarse & (spread > 0)):
        k = int(np.argmax(np.where(spread > 0, resolution / spread, 0.0)))
        warn(
            f"y_true lies at {offset[k]:.3g} with a spread of {spread[k]:.3g}: "
            f"float64 holds it only to {resolution[k]:.2g}, so the "
            f"{definition.label or definition.name} is resolved only to about "
            f"{resolution[k] / spread[k]:.1g}. Subtract the offset from y_true "
            "and y_pred first.",
            UserWarning,
        )
    return (y, y_pred, sigma, *inputs[3:])


#: Inputs whose largest magnitude (residuals, sigma; for a dimensionless
#: metric y's spread too) lies outside 2^±200 are rescaled by a power of two,
#: exact: a loss's to put its largest and smallest size as far from 1, a
#: dimensionless metric's largest to [1/2, 1) (as :func:`centred_inputs`). The powers
#: (up to the pivots' eighth) then stay in float64's range where they can.
_UNIT_EXPONENT = 200


def _sizes(definition: RegressionLoss, arguments: dict[str, Any]) -> list[float]:
    """The largest residual and, for a dimensionless metric, ``y``'s largest
    deviation from its first value."""
    with np.errstate(all="ignore"):
        y = np.asarray(arguments["y_true"], dtype=float)
        sizes = [np.max(np.abs(y - np.asarray(arguments["y_pred"], dtype=float)))]
        if definition.unit_power == 0:
            sizes.append(np.max(np.abs(y - y.flat[0])))
    return [float(size) for size in sizes]


def _unit_exponent(definition: RegressionLoss, arguments: dict[str, Any]) -> int:
    """The power of two ``k`` that ``y_true``, ``y_pred`` and ``sigma`` are
    divided by (0: ordinary scales, or inputs the validation will refuse)."""
    options = ("groups", "sigma_shared", "sigma_shared_dof")
    if (
        arguments.get("sigma") is None
        or any(arguments.get(name) is not None for name in options)
        or arguments.get("noise", "gaussian") != "gaussian"
    ):
        return 0
    try:  # the residuals are at most twice the largest |y|, |ŷ|: one pass each
        extremes = [np.asarray(arguments[n]) for n in ("y_true", "y_pred", "sigma")]
        if any(a.dtype.kind not in "biuf" for a in extremes):
            return 0  # the validation's error (complex, strings, objects)
        magnitude = max(
            max(abs(float(a.max())), abs(float(a.min()))) for a in extremes if a.size
        )
        if 2.0 ** (1 - _UNIT_EXPONENT) <= magnitude <= 2.0 ** (_UNIT_EXPONENT - 1):
            return 0
        sizes = _sizes(definition, arguments)
        sigma = np.asarray(arguments["sigma"], dtype=float)
        sizes.append(float(np.max(sigma)) if sigma.size else 0.0)
    except (TypeError, ValueError, OverflowError):
        return 0
    largest = max(sizes)
    if not (0.0 < largest < math.inf and np.isfinite(sizes).all()):
        return 0
    exponent = math.frexp(largest)[1]
    if abs(exponent) <= _UNIT_EXPONENT or definition.unit_power == 0:
        return 0 if abs(exponent) <= _UNIT_EXPONENT else exponent
    # a loss: its largest and smallest size as far from 1 on either side (the
    # cross terms d²σ²), the largest never raised beyond 2^100 (its eighth
    # power in range) nor raised at all from above it
    balanced = (exponent + math.frexp(min(x for x in sizes if x > 0.0))[1]) // 2
    return max(balanced, min(0, exponent - 100))


def _not_finite(result: NoisyScore | list[NoisyScore]) -> bool:
    """Whether a result holds an inf."""
    scores = result if isinstance(result, list) else [result]
    return any(
        np.isinf([s.expected, s.variance, s.nominal, s.sampling_variance]).any()
        for s in scores
    )


def _sampling_resolved(
    definition: RegressionLoss, result: NoisyScore | list[NoisyScore], constant: bool
) -> NoisyScore | list[NoisyScore]:
    """``result`` where a test-set sampling variance of two or more samples is
    NaN: inf where ``sigma`` varies (its terms' spread overflowed), else (the
    terms ``d² ± σ²`` lost ``d²`` to float64's resolution) NaN with a warning."""
    scores = result if isinstance(result, list) else [result]
    lost = [
        s.sampling_method is not None
        and s.n_samples > 1
        and math.isnan(s.sampling_variance)
        for s in scores
    ]
    if not any(lost):
        return result
    if constant:
        warn(
            f"float64 cannot resolve the test-set sampling variance of the "
            f"{definition.label}: sigma is so far above the residuals that the "
            "per-sample terms hold nothing of their spread, so sampling_variance "
            "is NaN.",
            RuntimeWarning,
        )
        return result
    scores = [
        dataclasses.replace(s, sampling_variance=math.inf) if bad else s
        for s, bad in zip(scores, lost, strict=True)
    ]
    return scores if isinstance(result, list) else scores[0]


def _scaled_score(score: NoisyScore, power: int, nominal: Any) -> NoisyScore:
    """``score`` of inputs divided by ``2^k`` in the units of the given ones:
    the metric times ``2^power`` (``power = k × unit_power``), its variances
    times ``2^(2 power)`` (inf where they overflow), its pivots unchanged;
    ``nominal``: the nominal computed on the given inputs, or None."""
    with np.errstate(all="ignore"):
        values = {
            name: float(np.ldexp(getattr(score, name), 2 * power if var else power))
            for name, var in (
                ("expected", False),
                ("nominal", False),
                ("variance", True),
                ("sampling_variance", True),
            )
        }
    if nominal is not None:
        values["nominal"] = nominal.nominal
    if math.isnan(values["variance"]) and math.isfinite(score.expected):
        values["variance"] = math.inf  # inf − inf of moments beyond the range
    distribution = score.distribution
    if isinstance(distribution, SquareRootInterval):
        with np.errstate(over="ignore"):
            distribution = SquareRootInterval(
                float(np.ldexp(distribution.estimate, 2 * power)),
                float(np.ldexp(distribution.factor, power)),
            )
    elif distribution is not None and power != 0:
        distribution = _ScaledDistribution(distribution, power)
    return dataclasses.replace(score, distribution=distribution, **values)


class _ScaledDistribution:
    """An exact distribution of the metric of rescaled inputs, read in the
    given inputs' units (its ``interval`` times ``2^power``)."""

    def __init__(self, distribution: Any, power: int) -> None:
        self.distribution, self.power = distribution, power

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or "distribution" not in self.__dict__:
            raise AttributeError(name)  # pickle's and copy's probes
        return getattr(self.__dict__["distribution"], name)

    def interval(self, confidence_level: float) -> tuple[float, float, float]:
        low, high, content = self.distribution.interval(confidence_level)
        with np.errstate(over="ignore"):
            low, high = np.ldexp([low, high], self.power)
        return float(low), float(high), content


def at_unit_scale(
    definition: RegressionLoss, function: Callable[..., Any]
) -> Callable[..., Any]:
    """``function`` that computes at extreme scales on the inputs rescaled by a
    power of two and gives the result in the inputs' units: the loss takes only
    the residuals and ``sigma`` (and, dimensionless, ``y``'s spread), so their
    common scale is exact; a result beyond float64 is inf, with the warning of
    :func:`check_finite_results`. The nominal is the given inputs' where the
    rescaled residuals lose their squares' digits (``sigma`` far above them)."""

    @functools.wraps(function)
    def scaled(*args: Any, **kwargs: Any) -> Any:
        positional = dict(zip(("y_true", "y_pred"), args, strict=False))
        arguments = {**positional, **kwargs}
        if len(args) > 2 or len(arguments) < len(positional) + len(kwargs):
            return function(*args, **kwargs)  # its own TypeError
        if "y_true" not in arguments or "y_pred" not in arguments:
            return function(*args, **kwargs)
        k = _unit_exponent(definition, arguments)
        if k == 0:
            return function(*args, **kwargs)
        given = {name: arguments[name] for name in ("y_true", "y_pred", "sigma")}
        for name, value in given.items():
            arguments[name] = np.ldexp(np.asarray(value, dtype=float), -k)
        token = _OVERFLOW_WARNED.set([])  # one warning for the call
        try:
            result = function(**arguments)
            nominal = None
            if min(_sizes(definition, arguments)) < 2.0**-400:  # squares underflow
                options = ("sample_weight", "multioutput")
                with quiet(), np.errstate(all="ignore"):
                    nominal = function(
                        given["y_true"],
                        given["y_pred"],
                        sigma=0.0,
                        estimand="forward",
                        **{n: arguments[n] for n in options if n in arguments},
                    )
            power = k * definition.unit_power
            if isinstance(result, list):
                nominals = (
                    nominal if isinstance(nominal, list) else [None] * len(result)
                )
                result = [
                    _scaled_score(s, power, n)
                    for s, n in zip(result, nominals, strict=True)
                ]
            else:
                result = _scaled_score(result, power, nominal)
            constant = np.ptp(np.asarray(given["sigma"], dtype=float)) == 0.0
            result = _sampling_resolved(definition, result, constant)
            if _not_finite(result):
                check_finite_results(definition.name, (None,) * 3, (np.inf,))
        finally:
            _OVERFLOW_WARNED.reset(token)
        return result

    return scaled
