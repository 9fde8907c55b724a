"""Input validation shared by the expected metrics.

Every check names the parameter it rejects and says what was expected. None of
them writes into the caller's arrays: conversions return new arrays or read-only
views, and the kernels only ever read from them.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

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

#: Rows processed at a time by the chunked kernels: bounds the temporary memory
#: of every metric to a few arrays of this length, whatever the input size.
CHUNK_SIZE = 1 << 16


def _is_scalar(value: Any) -> bool:
    return isinstance(value, numbers.Real) or (
        isinstance(value, np.ndarray) and value.ndim == 0
    )


def as_float_array(value: Any, *, name: str) -> np.ndarray:
    """Convert ``value`` to a float64 array without copying when it already is one.

    Accepts lists, tuples, numpy arrays, pandas Series and one-column objects.
    Raises a ``TypeError`` naming ``name`` when the values are not numeric.
    """
    if hasattr(value, "to_numpy") and not isinstance(value, np.ndarray):
        value = value.to_numpy()
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged lists and the like
        raise TypeError(
            f"{name} must be array-like of numbers; got {value!r}."
        ) from exc
    if array.dtype.kind not in "biuf":
        raise TypeError(
            f"{name} must hold real numbers; got an array of dtype {array.dtype}."
        )
    return array.astype(np.float64, copy=False)


def check_finite(array: np.ndarray, *, name: str) -> None:
    """Raise ``ValueError`` if ``array`` holds NaN or infinity.

    As scikit-learn does, the common case costs a single sum: only when the sum
    is not finite are the offending entries looked for.
    """
    if array.size == 0:
        return
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.sum(array)
    if np.isfinite(total):
        return
    bad = ~np.isfinite(array)
    if not bad.any():  # the sum overflowed on large finite values
        return
    first = np.argwhere(bad)[0]
    where = tuple(int(i) for i in first) if array.ndim > 1 else int(first[0])
    raise ValueError(
        f"{name} must be finite; it contains {int(bad.sum())} NaN or infinite "
        f"value(s), the first at index {where} ({float(array[tuple(first)])!r})."
    )


def _check_length(array: np.ndarray, n_samples: int, *, name: str) -> None:
    if array.shape[0] != n_samples:
        raise ValueError(
            f"{name} must have one entry per sample: expected length {n_samples}, "
            f"got {array.shape[0]}."
        )


def check_sample_weight(sample_weight: Any, n_samples: int) -> np.ndarray | None:
    """Validate ``sample_weight``: finite, non-negative, one per sample, sum > 0.

    Weights far from 1 (largest outside [1e-100, 1e100]) are returned divided by
    their largest value, which leaves every weighted mean unchanged.
    """
    if sample_weight is None:
        return None
    weight = as_float_array(sample_weight, name="sample_weight")
    if weight.ndim != 1:
        raise ValueError(
            f"sample_weight must be 1-D; got an array of shape {weight.shape}."
        )
    _check_length(weight, n_samples, name="sample_weight")
    check_finite(weight, name="sample_weight")
    if weight.min() < 0:
        raise ValueError("sample_weight must be non-negative.")
    if not weight.sum() > 0:
        raise ValueError("sample_weight must have a positive sum.")
    largest = weight.max()
    if not 1e-100 <= largest <= 1e100:
        # Only ratios of weights matter to a weighted mean; squares of weights
        # this small or large would underflow or overflow in the variance.
        weight = weight / largest
    return weight


def check_sigma(
    sigma: Any,
    shape: tuple[int, ...],
    *,
    name: str = "sigma",
    ensure_finite: bool = True,
) -> Any:
    """Validate the label standard errors.

    Returns a Python float for a scalar (so kernels can skip per-sample work), or
    a float64 array of shape ``(n_samples,)`` (reshaped to ``(n_samples, 1)`` when
    ``shape`` has two dimensions) or ``shape``. ``ensure_finite=False`` skips the
    NaN/inf scan of an array (the caller then checks its results, see
    :func:`check_regression_inputs`).
    """
    if sigma is None:
        raise TypeError(
            f"{name} is required: pass the standard error of each label (a scalar "
            "or one value per sample; 0 means the label is exact)."
        )
    if _is_scalar(sigma):
        value = float(sigma)
        if not np.isfinite(value):
            raise ValueError(f"{name} must be finite; got {value!r}.")
        if value < 0:
            raise ValueError(f"{name} must be non-negative; got {value!r}.")
        return value
    array = as_float_array(sigma, name=name)
    n_samples = shape[0]
    if array.ndim == 0:
        return check_sigma(float(array), shape, name=name)
    if array.ndim > 2 or (array.ndim == 2 and array.shape != shape):
        raise ValueError(
            f"{name} must be a scalar, an array of shape ({n_samples},) or "
            f"{shape}; got shape {array.shape}."
        )
    _check_length(array, n_samples, name=name)
    if ensure_finite:
        check_finite(array, name=name)
    if array.min() < 0:
        raise ValueError(
            f"{name} must be non-negative (0 means an exact label); the smallest "
            f"value is {float(array.min())!r} at index {int(np.argmin(array))}."
        )
    if len(shape) == 2 and array.ndim == 1:
        array = array[:, None]
    return array


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


def check_flip_probability(q: Any, n_samples: int, *, name: str = "q") -> Any:
    """Validate a label-flip probability: a scalar or one value per sample in [0, 1].

    Returns a Python float or a 1-D float64 array.
    """
    if _is_scalar(q):
        value = float(q)
        if not 0.0 <= value <= 1.0:  # also rejects NaN
            raise ValueError(f"{name} must be a probability in [0, 1]; got {value!r}.")
        return value
    array = as_float_array(q, name=name)
    if array.ndim != 1:
        raise ValueError(
            f"{name} must be a scalar or a 1-D array with one flip probability per "
            f"sample; got shape {array.shape}."
        )
    _check_length(array, n_samples, name=name)
    check_finite(array, name=name)
    low, high = array.min(), array.max()
    if low < 0.0 or high > 1.0:
        bad = int(np.argmax((array < 0.0) | (array > 1.0)))
        raise ValueError(
            f"{name} must hold probabilities in [0, 1]; got "
            f"{float(array[bad])!r} at index {bad}."
        )
    return array


def check_transition_matrix(
    transition_matrix: Any, n_classes: int, *, name: str = "transition_matrix"
) -> np.ndarray:
    """Validate a row-stochastic ``(n_classes, n_classes)`` transition matrix.

    ``T[j, k]`` is the probability that a sample whose reference class is the
    ``j``-th label is observed with the ``k``-th label.
    """
    matrix = as_float_array(transition_matrix, name=name)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(
            f"{name} must be a square 2-D array; got shape {matrix.shape}."
        )
    if matrix.shape[0] != n_classes:
        raise ValueError(
            f"{name} must be {n_classes} x {n_classes}, one row and column per label "
            f"in `labels` order; got shape {matrix.shape}."
        )
    check_finite(matrix, name=name)
    if matrix.min() < 0 or matrix.max() > 1:
        raise ValueError(f"{name} entries must be probabilities in [0, 1].")
    row_sums = matrix.sum(axis=1)
    if not np.allclose(row_sums, 1.0, rtol=0, atol=1e-9):
        bad = int(np.argmax(np.abs(row_sums - 1.0)))
        raise ValueError(
            f"{name} must be row-stochastic (each row sums to 1); row {bad} sums to "
            f"{float(row_sums[bad])!r}."
        )
    return matrix


def check_noise_model(q: Any, transition_matrix: Any) -> None:
    """Require exactly one of ``q`` and ``transition_matrix``."""
    if q is None and transition_matrix is None:
        raise TypeError(
            "Pass the label noise: q (a flip probability, scalar or per sample) or "
            "transition_matrix (a row-stochastic K x K matrix)."
        )
    if q is not None and transition_matrix is not None:
        raise TypeError("Pass either q or transition_matrix, not both.")


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
