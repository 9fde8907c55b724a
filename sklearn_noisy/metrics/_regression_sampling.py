"""The regression metrics' rules of the test-set sampling variance.

For :func:`~sklearn_noisy.metrics._test_set_sampling.with_test_set_sampling`. Each
function takes the bound arguments of a metric call and its result, and
returns the terms ``h_i`` whose weighted mean is the result (user guide:
:ref:`error_budget`), one per estimand:

======================  ==================  ===================  ==============
metric                  forward             truth                remeasurement
======================  ==================  ===================  ==============
MSE                     ``d² + σ²``         ``d̃² − σ̂²``          ``d̃²``
MAE                     ``|d| + 2σ g(t)``   (none)               ``|d̃|``
accuracy                ``P = T[k, ŷ]``     ``ĉ = T⁻¹[ỹ, ŷ]``    ``o = 1[ỹ = ŷ]``
======================  ==================  ===================  ==============

with ``d = y_true − ŷ`` (``d̃`` when ``y_true`` is a measurement), ``g`` the
normal linear-loss function at ``t = |d|/σ`` (:ref:`formula_mae`); the
forward terms are expectations over the noise, the others the estimates of
one sample. The accuracy's terms are in :mod:`._classification`. The
RMSE's sampling variance follows from the MSE's by the delta method.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._noisy_score import NoisyScore
from ..utils._validation import check_regression_inputs
from ..utils._warnings import quiet
from ._regression_kernels import T_MAX, linear_loss_of_negative

__all__ = ["average_outputs", "mae_terms", "mse_terms", "root_sampling"]


def mse_terms(
    arguments: dict[str, Any], score: NoisyScore
) -> tuple[np.ndarray, np.ndarray | None, float]:
    """The MSE's per-sample terms (table above), output weights applied."""
    d, s, weight, multioutput = _regression_arrays(arguments, "mean_squared_error")
    h = np.square(d)
    estimand = arguments.get("estimand", "forward")
    if estimand == "forward":
        h += np.square(s)
    elif estimand == "truth":
        h -= np.square(s)
    return average_outputs(h, multioutput), weight, 1.0


def _regression_arrays(
    arguments: dict[str, Any], metric: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, Any]:
    """``(d, σ, weight, multioutput)``, ``d = y_true − ŷ`` and σ as 2-D arrays."""
    y_true, y_pred, sigma, weight, multioutput = check_regression_inputs(
        arguments["y_true"],
        arguments["y_pred"],
        sigma=arguments["sigma"],
        sample_weight=arguments.get("sample_weight"),
        multioutput=arguments.get("multioutput", "uniform_average"),
        metric=metric,
    )
    d = y_true - y_pred
    s = np.broadcast_to(np.asarray(sigma, dtype=float), d.shape)
    return d, s, weight, multioutput


def average_outputs(h: np.ndarray, multioutput: Any) -> np.ndarray:
    """The per-sample terms averaged over the outputs as the metric averages."""
    if isinstance(multioutput, str):
        return h.mean(axis=1)
    return h @ multioutput / multioutput.sum()


def mae_terms(
    arguments: dict[str, Any], score: NoisyScore
) -> tuple[np.ndarray, np.ndarray | None, float]:
    """The MAE's per-sample terms (table above), output weights applied.

    Forward: ``E|d + e| = |d| + 2σ g(|d|/σ)`` with the kernel's linear-loss
    function; remeasurement: the observed ``|d̃|``.
    """
    d, s, weight, multioutput = _regression_arrays(arguments, "mean_absolute_error")
    h = np.abs(d)
    if arguments.get("estimand", "forward") == "forward":
        with np.errstate(divide="ignore", invalid="ignore"):
            u = np.fmax(-h / s, -T_MAX)  # σ = 0: −inf or NaN, then −40: g = 0
        h = h + 2.0 * s * linear_loss_of_negative(u, out=np.empty(u.shape))
    return average_outputs(h, multioutput), weight, 1.0


def root_sampling(mean_metric: Callable[..., NoisyScore]) -> Callable[..., Any]:
    """The sampling rule of a root metric (RMSE, RMSPE) by the delta method.

    ``S(√m) ≈ S(m) / (4 m)``: the sampling variance of the mean metric
    ``mean_metric`` of the same estimand (per-sample terms, its own label
    part taken off) over four times its estimate, with its degrees of
    freedom, so that the two agree on what the test set resolves. The hook
    returns None (the bootstrap) for several outputs or a non-positive
    estimate of the mean metric.
    """

    def hook(
        arguments: dict[str, Any], score: NoisyScore
    ) -> tuple[float, str, float] | None:
        if arguments.get("multioutput", "uniform_average") != "uniform_average" or (
            np.ndim(arguments["y_true"]) > 1 and np.shape(arguments["y_true"])[1] > 1
        ):
            return None
        options = ("sigma", "sample_weight", "estimand", "sigma_dof")
        with quiet():  # the root metric's call warned already
            mean = mean_metric(
                arguments["y_true"],
                arguments["y_pred"],
                **{k: arguments[k] for k in options if k in arguments},
                test_set_sampling=True,
            )
        if not mean.expected > 0.0:
            return None
        return (
            mean.sampling_variance / (4.0 * mean.expected),
            "delta",
            mean.sampling_dof,
        )

    return hook
