"""The forward ``1 - X/Y`` (R², explained variance) of validated inputs.

:func:`r2_forward` takes each output's sums once, runs the moments of
:func:`~sklearn_noisy.metrics._r2_quadrature.ratio_moments` and combines the
outputs as scikit-learn does (user guide: :ref:`formula_r2`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sklearn.exceptions import UndefinedMetricWarning

from .._noisy_score import NoisyScore
from ..utils._warnings import warn
from ._gaussian_forms import output_distributions, r2_distribution
from ._r2_quadrature import ratio_moments
from ._regression_definitions import RegressionLoss
from ._regression_estimands import aggregate_outputs
from ._regression_kernels import output_column, r2_from_sums, r2_sums

__all__ = ["r2_forward"]


def _undefined(name: str, n_samples: int, n_outputs: int, multioutput: Any) -> Any:
    """NaN scores for fewer than two samples, with scikit-learn's warning."""
    warn(
        "R² is not well-defined with fewer than two samples: the result is NaN.",
        UndefinedMetricWarning,
    )
    nan = np.full(n_outputs, math.nan)
    return aggregate_outputs(name, nan, nan, nan, n_samples, multioutput)


def _has_noise(sigma: Any, weight: np.ndarray | None) -> bool:
    """Whether some positively weighted label of one output is noisy."""
    if isinstance(sigma, float):
        return sigma > 0.0
    noisy = sigma > 0.0
    return bool(np.any(noisy if weight is None else noisy & (weight > 0.0)))


def _warn_existence(message: str | None, j: int, n_outputs: int, method: str) -> None:
    """Warn that a moment does not exist (on output ``j``), if it does not."""
    if message is None:
        return
    prefix = f"Output {j}: " if n_outputs > 1 else ""
    suffix = (
        " The delta method returns a finite number here, which is not meaningful."
        if method == "delta"
        else ""
    )
    warn(prefix + message + suffix, UserWarning)


def r2_forward(
    definition: RegressionLoss,
    inputs: tuple[np.ndarray, np.ndarray, Any, np.ndarray | None, Any],
    *,
    method: str,
    force_finite: bool,
) -> NoisyScore | list[NoisyScore]:
    """The forward ``1 - X/Y`` of validated inputs, combined as ``multioutput`` says.

    ``definition.centred``: ``X`` of the residuals centred at their weighted
    mean (explained variance), which is 0 for one sample: the metric is then
    its nominal value (scikit-learn's 1.0, or NaN without ``force_finite``).
    One positively weighted sample makes ``Y`` identically 0: a noisy R² is
    then 0 with ``force_finite`` (variance 0), else ``-inf`` (variance NaN).
    """
    y_true, y_pred, sigma, weight, multioutput = inputs
    name, centred = definition.name, definition.centred
    n_samples, n_outputs = y_true.shape
    if n_samples < 2 and not centred:
        return _undefined(name, n_samples, n_outputs, multioutput)
    n_positive = n_samples if weight is None else int(np.count_nonzero(weight))
    variance_weighted = (
        isinstance(multioutput, str) and multioutput == "variance_weighted"
    )
    combined = variance_weighted and n_outputs > 1 and n_positive > 1
    w_factor = 1.0 if weight is None else n_samples / float(weight.sum())
    nominal, expected, variance, denominators = np.zeros((4, n_outputs))
    noisy = np.zeros(n_outputs, dtype=bool)
    columns = []
    for j in range(n_outputs):
        x, y, scale = r2_sums(y_true[:, j], y_pred[:, j], weight, centred=centred)
        nominal[j] = expected[j] = r2_from_sums(x, y, force_finite=force_finite)
        denominators[j] = y * scale**2
        sigma_j = output_column(sigma, j)
        noisy[j] = _has_noise(sigma_j, weight)
        factor = scale * scale * w_factor  # the sums with Σ w = M
        columns.append((y_true[:, j], y_pred[:, j], sigma_j, x * factor, y * factor))
        if combined or not noisy[j] or (centred and n_positive < 2):
            continue
        if n_positive == 1:
            expected[j], variance[j] = (
                (0.0, 0.0) if force_finite else (-math.inf, math.nan)
            )
            continue
        expected[j], variance[j], message = ratio_moments(
            [columns[j]],
            weight,
            method=method,
            centred=centred,
            label=definition.label,
            nominal=float(nominal[j]),
        )
        _warn_existence(message, j, n_outputs, method)
    if combined:
        averaged = float(
            np.average(
                nominal, weights=denominators if np.any(denominators != 0) else None
            )
        )
        if not noisy.any():
            return NoisyScore(name, averaged, 0.0, averaged, n_samples)
        # The outputs with Y_k = 0 have weight 0, as in scikit-learn.
        mean, var, message = ratio_moments(
            [columns[j] for j in np.flatnonzero(noisy | (denominators != 0))],
            weight,
            method=method,
            centred=centred,
            label=definition.label,
        )
        _warn_existence(message, 0, 1, method)
        return NoisyScore(name, mean, var, averaged, n_samples, method)
    if variance_weighted:
        # One output, or one positively weighted sample (every Y_k is 0):
        # scikit-learn's weights are then uniform.
        multioutput = "uniform_average"
    distributions = (
        output_distributions(
            r2_distribution, y_true, y_pred, sigma, weight, nominal=nominal
        )
        if n_positive > 1 and force_finite and not centred
        else None
    )
    return aggregate_outputs(
        name,
        nominal,
        expected,
        variance,
        n_samples,
        multioutput,
        method,
        distributions=distributions,
    )
