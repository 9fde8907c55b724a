"""Expected regression metrics under Gaussian label error (FORMULAS.md §1, §2, §5, §6).

The observed label is ``y_i ~ N(y_true_i, sigma_i**2)``, independent across
samples; ``y_pred`` is fixed. Every function returns a
:class:`~sklearn_noisy.NoisyScore` (or a list of them with
``multioutput="raw_values"``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import ndtr

from .._noisy_score import NoisyScore
from ..utils._validation import CHUNK_SIZE, check_regression_inputs

__all__ = [
    "expected_mean_absolute_error",
    "expected_mean_squared_error",
]

_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)
#: Beyond t = |d|/sigma = 40 the linear-loss function g(t) is below 1e-300.
_T_MAX = 40.0

# A kernel maps a chunk ``d = y_true - y_pred`` of shape (n, n_outputs), the
# matching sigma (a float or an array broadcastable to d) and the chunk weights
# (None or shape (n,)) to the weighted sums over the chunk of the per-sample
# nominal loss, expected loss and loss variance (variance weighted by w**2),
# each of shape (n_outputs,).
_Kernel = Callable[[np.ndarray, Any, "np.ndarray | None"], tuple[np.ndarray, ...]]


def _weighted_sum(values: np.ndarray, weight: np.ndarray | None) -> np.ndarray:
    if weight is None:
        return values.sum(axis=0)
    return weight @ values


def _accumulate(
    kernel: _Kernel,
    y_true: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    weight: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weighted per-output means ``(nominal, expected, variance)`` of a kernel.

    The samples are processed ``CHUNK_SIZE`` rows at a time, so the temporary
    memory does not grow with the input. With weights ``w`` the mean is
    ``Σ w_i x_i / Σ w_i`` and the variance ``Σ w_i² v_i / (Σ w_i)²``.
    """
    n_samples, n_outputs = y_true.shape
    totals = np.zeros((3, n_outputs))
    for start in range(0, n_samples, CHUNK_SIZE):
        rows = slice(start, start + CHUNK_SIZE)
        d = y_true[rows] - y_pred[rows]
        s = sigma if isinstance(sigma, float) else sigma[rows]
        w = None if weight is None else weight[rows]
        totals += np.stack(kernel(d, s, w))
    w_sum = float(n_samples) if weight is None else float(weight.sum())
    nominal = totals[0] / w_sum
    expected = totals[1] / w_sum
    variance = totals[2] / (w_sum * w_sum)
    return nominal, expected, variance


def _aggregate_outputs(
    metric: str,
    nominal: np.ndarray,
    expected: np.ndarray,
    variance: np.ndarray,
    n_samples: int,
    multioutput: Any,
    method: str = "exact",
) -> NoisyScore | list[NoisyScore]:
    """Combine per-output results as scikit-learn's ``multioutput`` does.

    The outputs' label errors are taken as independent, so a weighted average
    ``Σ a_k m_k / Σ a_k`` of the outputs has variance ``Σ a_k² V_k / (Σ a_k)²``.
    """
    if isinstance(multioutput, str) and multioutput == "raw_values":
        return [
            NoisyScore(metric, e, v, m, n_samples, method)
            for m, e, v in zip(nominal, expected, variance, strict=True)
        ]
    if isinstance(multioutput, str):  # "uniform_average"
        weights = np.ones_like(expected)
    else:
        weights = multioutput
    total = weights.sum()
    if not total > 0:
        raise ValueError("multioutput weights must have a positive sum.")
    return NoisyScore(
        metric,
        expected=float(weights @ expected / total),
        variance=float((weights * weights) @ variance / (total * total)),
        nominal=float(weights @ nominal / total),
        n_samples=n_samples,
        method=method,
    )


def _squared_error_kernel(
    d: np.ndarray, s: Any, w: np.ndarray | None
) -> tuple[np.ndarray, ...]:
    # E[e²] = d² + σ²,  Var[e²] = 2σ⁴ + 4d²σ²   (FORMULAS.md §1)
    d2 = d * d
    nominal = _weighted_sum(d2, w)
    if isinstance(s, float):
        s2 = s * s
        w_sum = d.shape[0] if w is None else w.sum()
        w2 = None if w is None else w * w
        w2_sum = d.shape[0] if w is None else w2.sum()
        expected = nominal + s2 * w_sum
        variance = 2.0 * s2 * s2 * w2_sum + 4.0 * s2 * _weighted_sum(d2, w2)
        return nominal, expected, np.broadcast_to(variance, nominal.shape)
    s2 = s * s
    expected = nominal + _weighted_sum(np.broadcast_to(s2, d.shape), w)
    per_sample_var = s2 * (2.0 * s2 + 4.0 * d2)
    variance = _weighted_sum(per_sample_var, None if w is None else w * w)
    return nominal, expected, variance


def _absolute_error_moments(d: np.ndarray, s: Any) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of ``|e|`` for ``e ~ N(d, s²)``, the stable g-form.

    With ``t = |d|/s`` and ``g(t) = φ(t) − tΦ(−t)`` (FORMULAS.md §2, Part III.1):
    ``E|e| = |d| + 2 s g(t)`` and ``Var|e| = s² (1 − 4 g (t + g))``. ``t`` is
    clipped at 40, where ``g < 1e-300``; a sample with ``s = 0`` takes
    ``t = 40`` and so gets ``E = |d|`` and ``Var = 0`` without any division by 0.
    """
    abs_d = np.abs(d)
    s = np.broadcast_to(s, d.shape)
    t = np.full(d.shape, _T_MAX)
    np.divide(abs_d, s, out=t, where=abs_d < _T_MAX * s)
    g = np.exp(-0.5 * t * t) * _INV_SQRT_2PI - t * ndtr(-t)
    mean = abs_d + 2.0 * s * g
    var = s * s * (1.0 - 4.0 * g * (t + g))
    return mean, var


def _absolute_error_kernel(
    d: np.ndarray, s: Any, w: np.ndarray | None
) -> tuple[np.ndarray, ...]:
    mean, var = _absolute_error_moments(d, s)
    nominal = _weighted_sum(np.abs(d), w)
    return nominal, _weighted_sum(mean, w), _weighted_sum(var, None if w is None else w * w)


_REGRESSION_PARAMETERS_DOC = """\
    y_true : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Best-known label values: the mean of repeated measurements, or the
        single measured value.

    y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Estimated target values.

    sigma : float or array-like of shape (n_samples,) or (n_samples, n_outputs)
        Standard error of each label, ``sigma_i >= 0``; ``0`` means the label
        is exact. A scalar applies to every sample.

    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights. The metric is the weighted mean ``Σ w_i ℓ_i / Σ w_i`` of
        the per-sample losses, so its variance is
        ``Σ w_i² Var[ℓ_i] / (Σ w_i)²``.

    multioutput : {"raw_values", "uniform_average"} or array-like of shape \
(n_outputs,), default="uniform_average"
        How to combine outputs, as in scikit-learn. ``"raw_values"`` returns a
        list with one :class:`~sklearn_noisy.NoisyScore` per output. Averages
        treat the label errors of different outputs as independent."""


def expected_mean_squared_error(
    y_true: Any,
    y_pred: Any,
    *,
    sigma: Any,
    sample_weight: Any = None,
    multioutput: Any = "uniform_average",
) -> NoisyScore | list[NoisyScore]:
    """Expected mean squared error, and its variance, under Gaussian label error.

    Each observed label is ``y_i ~ N(y_true_i, sigma_i²)``. With
    ``d_i = y_true_i - y_pred_i`` the moments are exact (FORMULAS.md §1)::

        E[MSE]   = (1/M) Σ (d_i² + σ_i²)
        Var[MSE] = (1/M²) Σ (2σ_i⁴ + 4 d_i² σ_i²)

    Parameters
    ----------
{parameters}

    Returns
    -------
    score : NoisyScore or list of NoisyScore
        ``expected`` and ``variance`` as above, ``nominal`` the classical
        :func:`sklearn.metrics.mean_squared_error` on ``y_true``; ``method`` is
        ``"exact"``.

    See Also
    --------
    sklearn.metrics.mean_squared_error : The metric on exact labels.
    expected_root_mean_squared_error : The same for RMSE.

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_mean_squared_error
    >>> y_true = [3.0, -0.5, 2.0, 7.0]
    >>> y_pred = [2.5, 0.0, 2.0, 8.0]
    >>> score = expected_mean_squared_error(y_true, y_pred, sigma=0.5)
    >>> score
    NoisyScore(metric='mean_squared_error', expected=0.625, std=0.2864, \
nominal=0.375, n_samples=4, method='exact')
    >>> score.variance
    0.08203125
    """
    y_true, y_pred, sigma, weight, multioutput = check_regression_inputs(
        y_true, y_pred, sigma=sigma, sample_weight=sample_weight, multioutput=multioutput
    )
    nominal, expected, variance = _accumulate(
        _squared_error_kernel, y_true, y_pred, sigma, weight
    )
    return _aggregate_outputs(
        "mean_squared_error", nominal, expected, variance, y_true.shape[0], multioutput
    )


def expected_mean_absolute_error(
    y_true: Any,
    y_pred: Any,
    *,
    sigma: Any,
    sample_weight: Any = None,
    multioutput: Any = "uniform_average",
) -> NoisyScore | list[NoisyScore]:
    """Expected mean absolute error, and its variance, under Gaussian label error.

    Each ``|y_i - y_pred_i|`` is folded normal. With ``t_i = |d_i|/σ_i`` and the
    normal linear-loss function ``g(t) = φ(t) - tΦ(-t)`` the exact moments are
    computed in their stable form (FORMULAS.md §2)::

        E|e_i|   = |d_i| + 2σ_i g(t_i)
        Var|e_i| = σ_i² [1 - 4 g(t_i) (t_i + g(t_i))]

    and ``E[MAE] = (1/M) Σ E|e_i|``, ``Var[MAE] = (1/M²) Σ Var|e_i|``. This form
    has no cancellation: it stays exact for ``σ_i = 0`` (``E = |d_i|``, no
    variance) and for ``|d_i|/σ_i`` as large as 1e300 (``Var → σ_i²``), where
    the textbook ``d² + σ² - E²`` returns 0. The source paper prints this
    formula with three errors (σ for μ, a sign, erfc for erf); see
    :ref:`errata`.

    Parameters
    ----------
{parameters}

    Returns
    -------
    score : NoisyScore or list of NoisyScore
        ``nominal`` is :func:`sklearn.metrics.mean_absolute_error` on
        ``y_true``; ``method`` is ``"exact"``.

    See Also
    --------
    sklearn.metrics.mean_absolute_error : The metric on exact labels.

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_mean_absolute_error
    >>> score = expected_mean_absolute_error([0.0, 1.0], [0.0, 0.0], sigma=1.0)
    >>> round(score.expected, 6), round(score.variance, 6)
    (0.982254, 0.250859)
    >>> score.nominal
    0.5
    """
    y_true, y_pred, sigma, weight, multioutput = check_regression_inputs(
        y_true, y_pred, sigma=sigma, sample_weight=sample_weight, multioutput=multioutput
    )
    nominal, expected, variance = _accumulate(
        _absolute_error_kernel, y_true, y_pred, sigma, weight
    )
    return _aggregate_outputs(
        "mean_absolute_error", nominal, expected, variance, y_true.shape[0], multioutput
    )


for _function in (expected_mean_squared_error, expected_mean_absolute_error):
    _function.__doc__ = _function.__doc__.replace(
        "{parameters}", _REGRESSION_PARAMETERS_DOC
    )
