"""The regression metrics' rules of the test-set sampling variance.

For :func:`~sklearn_noisy.metrics._test_set_sampling.with_test_set_sampling`:
:func:`loss_terms` returns the terms ``h_i`` whose weighted mean is the result
(user guide: :ref:`error_budget`), one per estimand, as each loss's definition
(:mod:`~sklearn_noisy.metrics._regression_definitions`) gives them:

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
from ._regression_definitions import RegressionLoss

__all__ = ["average_outputs", "bounded_root", "loss_terms", "root_sampling"]


def loss_terms(definition: RegressionLoss) -> Callable[..., Any]:
    """The test-set sampling rule of a loss: its per-sample terms (table above).

    The terms of the call's estimand (:attr:`RegressionLoss.terms`), averaged
    over the outputs as the metric averages them.
    """

    def terms(
        arguments: dict[str, Any], score: NoisyScore
    ) -> tuple[np.ndarray, np.ndarray | None, float]:
        y_true, y_pred, sigma, weight, multioutput = check_regression_inputs(
            arguments["y_true"],
            arguments["y_pred"],
            sigma=arguments["sigma"],
            sample_weight=arguments.get("sample_weight"),
            multioutput=arguments.get("multioutput", "uniform_average"),
            multioutput_rules=definition.multioutput,
        )
        s = np.broadcast_to(np.asarray(sigma, dtype=float), y_true.shape)
        h = definition.terms[arguments.get("estimand", "forward")](y_true, y_pred, s)
        return average_outputs(h, multioutput), weight, 1.0

    return terms


def average_outputs(h: np.ndarray, multioutput: Any) -> np.ndarray:
    """The per-sample terms averaged over the outputs as the metric averages."""
    if isinstance(multioutput, str):
        return h.mean(axis=1)
    return h @ multioutput / multioutput.sum()


def bounded_root(
    mean: np.ndarray, variance: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Moments of ``√X`` from the mean ``m`` and variance ``v`` of ``X ≥ 0``.

    The delta method, ``E ≈ √m (1 − c/8)`` and ``Var ≈ v/(4m)`` with
    ``c = v/m²``, held inside the sharp bounds that ``m`` and ``v`` put on
    them: ``√m/√(1 + c) ≤ E √X ≤ √m`` (Jensen above; below, the quadratic
    ``√x ≥ 3x/(2√a) − x²/(2a^{3/2})``, tangent at ``a = m(1 + c)``, whose
    bound a two-point law at 0 and ``a`` attains) and ``Var √X =
    m − (E √X)² ≤ m c/(1 + c)``. The delta method is inside both while
    ``c ≤ 3``; beyond, the bound is returned, and ``bounded`` (the third
    array) says so. ``m = 0`` gives 0 and 0.
    """
    mean = np.asarray(mean, dtype=float)
    variance = np.maximum(np.asarray(variance, dtype=float), 0.0)
    positive = mean > 0.0
    safe = np.where(positive, mean, 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        c = np.where(positive, variance / safe / safe, 0.0)
        root = np.sqrt(safe)
        delta = root - variance / (8.0 * safe**1.5)
        lower = root / np.sqrt(1.0 + c)
        delta_variance = variance / (4.0 * safe)
        upper_variance = safe * (c / (1.0 + c))
    bounded = positive & ((delta < lower) | (delta_variance > upper_variance))
    expected = np.where(positive, np.maximum(delta, lower), 0.0)
    root_variance = np.where(positive, np.minimum(delta_variance, upper_variance), 0.0)
    return expected, root_variance, bounded


def root_sampling(mean_metric: Callable[..., NoisyScore]) -> Callable[..., Any]:
    """The sampling rule of a root metric (RMSE, RMSPE) by the delta method.

    ``S(√m) ≈ S(m) / (4 m)`` (at most ``m c/(1 + c)``, ``c = S/m²``:
    :func:`bounded_root`): the sampling variance of the mean metric
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
        options = ("sigma", "sample_weight", "estimand", "sigma_dof", "zero_margin")
        with quiet():  # the root metric's call warned already
            mean = mean_metric(
                arguments["y_true"],
                arguments["y_pred"],
                **{k: arguments[k] for k in options if k in arguments},
                test_set_sampling=True,
            )
        if not mean.expected > 0.0:
            return None
        _, variance, _ = bounded_root(mean.expected, mean.sampling_variance)
        return float(variance), "delta", mean.sampling_dof

    return hook
