"""Input validation shared by the expected metrics.

Every check names the parameter it rejects and says what was expected. None of
them writes into the caller's arrays: conversions return new arrays or read-only
views, and the kernels only ever read from them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._arrays import (
    CHUNK_SIZE,
    as_float_array,
    check_finite,
    check_sample_weight,
)
from ._noise import (
    check_flip_probability,
    check_noise_model,
    check_sigma,
    check_transition_matrix,
)

__all__ = [
    "CHUNK_SIZE",
    "as_float_array",
    "check_estimand",
    "check_finite",
    "check_flip_probability",
    "check_noise_model",
    "check_regression_inputs",
    "check_regression_target",
    "check_sample_weight",
    "check_sigma",
    "check_transition_matrix",
]


def check_regression_target(value: Any, *, name: str) -> np.ndarray:
    """``value`` as a non-empty 1-D or 2-D ``(n_samples, n_outputs)`` float64 array.

    Finiteness is left to the caller (see ``ensure_finite`` of
    :func:`check_regression_inputs`).
    """
    array = as_float_array(value, name=name)
    if array.ndim not in (1, 2):
        raise ValueError(
            f"{name} must be 1-D or 2-D (n_samples, n_outputs); got shape "
            f"{array.shape}."
        )
    if array.shape[0] == 0:
        raise ValueError(f"{name} is empty: at least one sample is required.")
    return array


def check_regression_inputs(
    y_true: Any,
    y_pred: Any,
    *,
    sigma: Any,
    sample_weight: Any = None,
    multioutput: Any = "uniform_average",
    ensure_finite: bool = True,
) -> tuple[np.ndarray, np.ndarray, Any, np.ndarray | None, Any]:
    """Validate the inputs of a regression metric.

    ``ensure_finite=False`` skips the NaN/inf scans of ``y_true``, ``y_pred`` and
    an array ``sigma`` (one pass each). Only for kernels whose sums are
    non-finite whenever an input is: they must then call
    :func:`check_finite` on the three arrays (which raises the usual error),
    as scikit-learn checks finiteness through a single sum.

    Returns ``y_true`` and ``y_pred`` as 2-D float64 arrays ``(n_samples,
    n_outputs)``, ``sigma`` as from :func:`check_sigma`, the sample weights (or
    None) and ``multioutput`` (a string or a float64 array of output weights).
    """
    y_true = check_regression_target(y_true, name="y_true")
    y_pred = check_regression_target(y_pred, name="y_pred")
    if y_true.ndim == 1:
        y_true = y_true[:, None]
    if y_pred.ndim == 1:
        y_pred = y_pred[:, None]
    if y_true.shape[0] != y_pred.shape[0]:
        raise ValueError(
            "y_true and y_pred must have the same number of samples; got "
            f"{y_true.shape[0]} and {y_pred.shape[0]}."
        )
    if y_true.shape[1] != y_pred.shape[1]:
        raise ValueError(
            "y_true and y_pred must have the same number of outputs; got "
            f"{y_true.shape[1]} and {y_pred.shape[1]}."
        )
    if ensure_finite:
        check_finite(y_true, name="y_true")
        check_finite(y_pred, name="y_pred")
    shape = y_true.shape
    sigma = check_sigma(
        sigma, shape if shape[1] > 1 else (shape[0],), ensure_finite=ensure_finite
    )
    if isinstance(sigma, np.ndarray) and sigma.ndim == 1:
        sigma = sigma[:, None]
    weight = check_sample_weight(sample_weight, shape[0])
    multioutput = _check_multioutput(multioutput, shape[1])
    return y_true, y_pred, sigma, weight, multioutput


def _check_multioutput(multioutput: Any, n_outputs: int) -> Any:
    if isinstance(multioutput, str):
        allowed = ("raw_values", "uniform_average")
        if multioutput not in allowed:
            raise ValueError(
                f"multioutput must be one of {allowed} or an array of output "
                f"weights; got {multioutput!r}. ('variance_weighted' is not "
                "supported: its weights would themselves depend on the noise.)"
            )
        return multioutput
    weights = as_float_array(multioutput, name="multioutput")
    if weights.shape != (n_outputs,):
        raise ValueError(
            f"multioutput weights must have shape ({n_outputs},); got {weights.shape}."
        )
    check_finite(weights, name="multioutput")
    return weights


#: The two targets an expected metric can describe (FORMULAS.md §4).
ESTIMANDS = ("measurement", "truth")


def check_estimand(
    estimand: Any,
    *,
    metric: str,
    supports_truth: bool,
    alternative: str | None = None,
    reason: str | None = None,
) -> str:
    """Validate ``estimand`` and return it.

    ``"measurement"`` asks for the metric that will be observed against noisy
    labels whose best-known values are ``y_true``; ``"truth"`` treats ``y_true``
    as single noisy observations and asks for an unbiased estimate of the metric
    against the unknown true labels (FORMULAS.md §4).

    Parameters
    ----------
    estimand : object
        The value passed by the user.
    metric : str
        Metric name, used in the messages.
    supports_truth : bool
        Whether the metric has an unbiased estimator against the true labels.
    alternative : str, optional
        What to use instead when it has not, e.g.
        ``"expected_mean_squared_error(..., estimand='truth')"``.
    reason : str, optional
        Why no unbiased estimator exists; the default names the usual cause.

    Raises
    ------
    ValueError
        For a value other than ``"measurement"`` or ``"truth"``, and for
        ``"truth"`` when ``supports_truth`` is false, with the same wording for
        every metric.
    """
    if not isinstance(estimand, str) or estimand not in ESTIMANDS:
        raise ValueError(f"estimand must be one of {ESTIMANDS}; got {estimand!r}.")
    if estimand == "truth" and not supports_truth:
        if reason is None:
            reason = (
                "its expectation over the label noise is not a linear function "
                "of the per-sample label distributions, so no correction of the "
                "noisy labels can remove the bias"
            )
        instead = "use estimand='measurement'"
        if alternative:
            instead += f" or {alternative}"
        raise ValueError(
            f"{metric} has no unbiased estimator against the true labels because "
            f"{reason}; {instead}."
        )
    return estimand
