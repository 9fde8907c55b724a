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
    "check_classification_labels",
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


def _as_label_array(value: Any, *, name: str) -> np.ndarray:
    if hasattr(value, "to_numpy") and not isinstance(value, np.ndarray):
        value = value.to_numpy()
    array = np.asarray(value)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1:
        raise ValueError(
            f"{name} must be a 1-D array of class labels; got shape {array.shape}."
        )
    if array.dtype.kind == "f":
        check_finite(array, name=name)
    return array


def check_classification_labels(
    y_true: Any, y_pred: Any, *, labels: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate class labels and encode them as indices into ``labels``.

    Returns ``(true_index, pred_index, labels)``: ``labels`` is the given label
    list, or the sorted union of the labels in ``y_true`` and ``y_pred``; the
    index arrays give each sample's position in it.
    """
    y_true = _as_label_array(y_true, name="y_true")
    y_pred = _as_label_array(y_pred, name="y_pred")
    if y_true.shape[0] == 0:
        raise ValueError("y_true is empty: at least one sample is required.")
    if y_true.shape[0] != y_pred.shape[0]:
        raise ValueError(
            "y_true and y_pred must have the same number of samples; got "
            f"{y_true.shape[0]} and {y_pred.shape[0]}."
        )
    if labels is None:
        # Numbers mix with numbers, strings (unicode, or the object arrays of
        # pandas) with strings; sorting rejects any other mixture.
        kinds = {y_true.dtype.kind, y_pred.dtype.kind}
        try:
            if len(kinds) > 1 and not (kinds <= set("biuf") or kinds <= set("OU")):
                raise TypeError
            true_classes, true_index = np.unique(y_true, return_inverse=True)
            pred_classes, pred_index = np.unique(y_pred, return_inverse=True)
            classes = np.union1d(true_classes, pred_classes)
        except TypeError as exc:
            raise TypeError(
                f"y_true and y_pred mix label types ({y_true.dtype} and "
                f"{y_pred.dtype}); use one type, e.g. all int or all str."
            ) from exc
        if classes.dtype.kind == "f" and np.any(classes != np.round(classes)):
            raise ValueError(
                "y_true and y_pred must be class labels; got continuous values. "
                "Use the regression metrics with sigma for continuous labels."
            )
        true_index = np.searchsorted(classes, true_classes)[true_index]
        pred_index = np.searchsorted(classes, pred_classes)[pred_index]
        return true_index, pred_index, classes
    classes = np.asarray(labels)
    if classes.ndim != 1 or classes.size == 0:
        raise ValueError("labels must be a non-empty 1-D list of class labels.")
    if np.unique(classes).size != classes.size:
        raise ValueError("labels must not contain duplicates.")
    order = np.argsort(classes, kind="stable")
    sorted_classes = classes[order]
    indices = []
    for name, y in (("y_true", y_true), ("y_pred", y_pred)):
        position = np.searchsorted(sorted_classes, y)
        position = np.minimum(position, sorted_classes.size - 1)
        outside = sorted_classes[position] != y
        if outside.any():
            raise ValueError(
                f"{name} contains labels that are not in `labels`: "
                f"{np.unique(y[outside])[:5].tolist()}."
            )
        indices.append(order[position])
    return indices[0], indices[1], classes
