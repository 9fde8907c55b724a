"""R² of validated inputs: per output, ``force_finite``, and the output average.

:func:`r2_forward` runs the exact (or delta-method) moments of
:mod:`~sklearn_noisy.metrics._r2_moments` on every output and combines them
as scikit-learn's ``r2_score`` does, ``multioutput="variance_weighted"``
included (user guide: :ref:`formula_r2`). It serves every fraction of
explained variation, ``1 - X/Y``: R² and, with the definition's ``centred``
numerator, the explained variance.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sklearn.exceptions import UndefinedMetricWarning

from .._noisy_score import NoisyScore
from ..utils._warnings import warn
from ._gaussian_forms import output_distributions, r2_distribution
from ._r2_moments import r2_moments
from ._r2_variance_weighted import r2_variance_weighted_moments
from ._regression_definitions import RegressionLoss
from ._regression_estimands import aggregate_outputs
from ._regression_kernels import output_column, r2_from_sums, r2_sums

__all__ = ["r2_forward"]


def _undefined(name: str, n_samples: int, n_outputs: int, multioutput: Any) -> Any:
    """NaN scores for fewer than two samples, with scikit-learn's warning."""
    warn(
        "R^2 score is not well-defined with less than two samples.",
        UndefinedMetricWarning,
    )
    nan = np.full(n_outputs, math.nan)
    return aggregate_outputs(name, nan, nan, nan, n_samples, multioutput)


def _single_sample(
    sigma: Any, weight: np.ndarray, force_finite: bool
) -> tuple[float, float] | None:
    """Moments when one sample carries all the weight, or None if it is exact.

    The total sum of squares is then identically 0 and a noisy label makes the
    residual sum of squares positive with probability 1: R² is 0 with
    ``force_finite=True`` (variance 0) and ``-inf`` without (variance NaN).
    """
    index = int(np.flatnonzero(weight)[0])
    noisy = sigma > 0.0 if isinstance(sigma, float) else sigma[index] > 0.0
    if not noisy:
        return None
    return (0.0, 0.0) if force_finite else (-math.inf, math.nan)


def _has_noise(sigma: Any, weight: np.ndarray | None) -> bool:
    """Whether some positively weighted label of one output is noisy."""
    if isinstance(sigma, float):
        return sigma > 0.0
    noisy = sigma > 0.0
    return bool(np.any(noisy if weight is None else noisy & (weight > 0.0)))


def _warn_existence(message: str | None, j: int, n_outputs: int, method: str) -> None:
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
    """
    y_true, y_pred, sigma, weight, multioutput = inputs
    name, centred = definition.name, definition.centred
    n_samples, n_outputs = y_true.shape
    if n_samples < 2 and not centred:
        return _undefined(name, n_samples, n_outputs, multioutput)
    n_positive = n_samples if weight is None else int(np.count_nonzero(weight))
    combined = (
        isinstance(multioutput, str)
        and multioutput == "variance_weighted"
        and n_outputs > 1
        and n_positive > 1
    )
    nominal, expected, variance = np.empty((3, n_outputs))
    sums = np.empty((n_outputs, 3))
    noisy = np.zeros(n_outputs, dtype=bool)
    for j in range(n_outputs):
        sums[j] = r2_sums(y_true[:, j], y_pred[:, j], weight, centred=centred)
        nominal[j] = r2_from_sums(sums[j, 0], sums[j, 1], force_finite=force_finite)
        sigma_j = output_column(sigma, j)
        if centred and n_positive < 2:  # X = Y = 0 whatever the noise
            expected[j], variance[j] = nominal[j], 0.0
            continue
        single = (
            _single_sample(sigma_j, weight, force_finite)
            if n_positive == 1 and weight is not None
            else None
        )
        if single is not None:
            expected[j], variance[j] = single
            noisy[j] = True
            continue
        if combined:  # only the ratio of the sums over the outputs is needed
            noisy[j] = _has_noise(sigma_j, weight)
            continue
        result = r2_moments(
            y_true[:, j],
            y_pred[:, j],
            sigma_j,
            weight,
            nominal=float(nominal[j]),
            method=method,
            centred=centred,
            label=definition.label,
        )
        expected[j], variance[j] = result.expected, result.variance
        noisy[j] = result.noisy
        _warn_existence(result.message, j, n_outputs, method)
    if combined:
        return _variance_weighted(definition, inputs, sums, nominal, noisy, method)
    if isinstance(multioutput, str) and multioutput == "variance_weighted":
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


def _variance_weighted(
    definition: RegressionLoss,
    inputs: tuple[np.ndarray, np.ndarray, Any, np.ndarray | None, Any],
    sums: np.ndarray,
    nominal: np.ndarray,
    noisy: np.ndarray,
    method: str,
) -> NoisyScore:
    """``multioutput="variance_weighted"`` of several outputs.

    scikit-learn weights the outputs' R² by their total sums of squares
    ``Y_k`` (uniformly if all are 0), which makes the average ``1 - Σ X_k /
    Σ Y_k`` over the outputs with ``Y_k > 0``. At zero noise this is computed
    as scikit-learn does; under noise the weights are random too, and the
    moments are those of the ratio of the two sums (exact, or the delta
    method with ``method="delta"``).
    """
    y_true, y_pred, sigma, weight, _ = inputs
    n_samples, n_outputs = y_true.shape
    denominators = sums[:, 1] * sums[:, 2] ** 2
    averaged = float(
        np.average(nominal, weights=denominators if np.any(denominators != 0) else None)
    )
    if not noisy.any():
        return NoisyScore(definition.name, averaged, 0.0, averaged, n_samples)
    columns = [
        (y_true[:, j], y_pred[:, j], output_column(sigma, j))
        for j in range(n_outputs)
        if noisy[j] or denominators[j] != 0.0
    ]
    result = r2_variance_weighted_moments(
        columns,
        weight,
        method=method,
        centred=definition.centred,
        label=definition.label,
    )
    _warn_existence(result.message, 0, 1, method)
    return NoisyScore(
        definition.name, result.expected, result.variance, averaged, n_samples, method
    )
