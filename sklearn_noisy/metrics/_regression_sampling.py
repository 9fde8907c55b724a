"""The regression metrics' rules of the test-set sampling variance.

For :func:`~sklearn_noisy.metrics._sampling.with_test_set_sampling`. Each
function takes the bound arguments of a metric call and its result, and
returns the terms ``h_i`` whose weighted mean is the result (user guide:
:ref:`error_budget`), one per estimand:

======================  ==================  ===================  ==============
metric                  forward             truth                remeasurement
======================  ==================  ===================  ==============
MSE                     ``d² + σ²``         ``d̃² − σ̂²``          ``d̃²``
accuracy                ``P = T[k, ŷ]``     ``ĉ = T⁻¹[ỹ, ŷ]``    ``o = 1[ỹ = ŷ]``
======================  ==================  ===================  ==============

with ``d = y_true − ŷ`` (``d̃`` when ``y_true`` is a measurement); the
forward terms are expectations over the noise, the others the estimates of
one sample. The accuracy's terms are in :mod:`._classification`. The
RMSE's sampling variance follows from the MSE's by the delta method.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._noisy_score import NoisyScore
from ..utils._validation import check_regression_inputs
from ._sampling import mean_total_variance, sampling_from_total

__all__ = ["mse_terms", "rmse_sampling"]


def mse_terms(
    arguments: dict[str, Any], score: NoisyScore
) -> tuple[np.ndarray, np.ndarray | None, float]:
    """The MSE's per-sample terms (table above), output weights applied."""
    y_true, y_pred, sigma, weight, multioutput = check_regression_inputs(
        arguments["y_true"],
        arguments["y_pred"],
        sigma=arguments["sigma"],
        sample_weight=arguments.get("sample_weight"),
        multioutput=arguments.get("multioutput", "uniform_average"),
        metric="mean_squared_error",
    )
    h = np.square(y_true - y_pred)
    s2 = np.square(np.broadcast_to(np.asarray(sigma, dtype=float), h.shape))
    estimand = arguments.get("estimand", "forward")
    if estimand == "forward":
        h += s2
    elif estimand == "truth":
        h -= s2
    if isinstance(multioutput, str):
        return h.mean(axis=1), weight, 1.0
    return h @ multioutput / multioutput.sum(), weight, 1.0


def rmse_sampling(
    arguments: dict[str, Any], score: NoisyScore
) -> tuple[float, str] | None:
    """The RMSE's sampling variance by the delta method from the MSE's terms.

    ``V_total(RMSE) ≈ V_total(MSE) / (4 MSE)`` with the MSE estimate of the
    same estimand; None (the bootstrap) for several outputs or a non-positive
    MSE estimate.
    """
    if arguments.get("multioutput", "uniform_average") != "uniform_average" or (
        np.ndim(arguments["y_true"]) > 1 and np.shape(arguments["y_true"])[1] > 1
    ):
        return None
    h, weight, _ = mse_terms({**arguments, "multioutput": "uniform_average"}, score)
    mse = float(np.mean(h) if weight is None else weight @ h / np.sum(weight))
    if not mse > 0.0:
        return None
    total = mean_total_variance(h, weight) / (4.0 * mse)
    return sampling_from_total(total, score), "delta"
