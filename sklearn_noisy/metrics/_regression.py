"""Expected regression metrics under Gaussian label error (FORMULAS.md §1, §2, §5, §6).

The observed label is ``y_i ~ N(y_true_i, sigma_i**2)``, independent across
samples; ``y_pred`` is fixed. Every function returns a
:class:`~sklearn_noisy.NoisyScore` (or a list of them with
``multioutput="raw_values"``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import joblib
import numpy as np
from scipy.special import ndtr

from .._noisy_score import NoisyScore
from ..utils._validation import CHUNK_SIZE, check_estimand, check_regression_inputs

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


def _n_threads() -> int:
    """Threads for the heavy kernels: ``OMP_NUM_THREADS`` if set, else the CPUs.

    Honouring ``OMP_NUM_THREADS`` keeps joblib workers (which set it) from being
    oversubscribed, as scikit-learn's OpenMP code does. At most 4.
    """
    value = os.environ.get("OMP_NUM_THREADS", "")
    try:
        n_threads = int(value)
    except ValueError:
        n_threads = joblib.cpu_count()
    return max(1, min(n_threads, 4))


def _accumulate(
    kernel: _Kernel,
    y_true: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    weight: np.ndarray | None,
    *,
    parallel: bool = False,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weighted per-output means ``(nominal, expected, variance)`` of a kernel.

    The samples are processed ``CHUNK_SIZE`` rows at a time, so the temporary
    memory does not grow with the input. With weights ``w`` the mean is
    ``Σ w_i x_i / Σ w_i`` and the variance ``Σ w_i² v_i / (Σ w_i)²``.

    ``parallel=True`` runs the chunks on a few threads (for kernels dominated by
    GIL-releasing ufuncs such as ``ndtr``). The chunk sums are added in chunk
    order either way, so the result does not depend on the number of threads.
    """
    n_samples, n_outputs = y_true.shape

    def chunk_totals(start: int) -> np.ndarray:
        rows = slice(start, start + CHUNK_SIZE)
        d = y_true[rows] - y_pred[rows]
        s = sigma if isinstance(sigma, float) else sigma[rows]
        w = None if weight is None else weight[rows]
        return np.stack(kernel(d, s, w))

    starts = range(0, n_samples, CHUNK_SIZE)
    n_threads = min(_n_threads(), len(starts)) if parallel else 1
    if n_threads > 1:
        with ThreadPoolExecutor(n_threads) as executor:
            chunks = executor.map(chunk_totals, starts)
            totals = np.zeros((3, n_outputs))
            for chunk in chunks:
                totals += chunk
    else:
        totals = np.zeros((3, n_outputs))
        for start in starts:
            totals += chunk_totals(start)
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


def _columns(d: np.ndarray, s: Any) -> list[tuple[np.ndarray, Any]]:
    """Split a chunk into 1-D columns ``(d_j, s_j)`` for the per-output kernels."""
    if isinstance(s, float):
        return [(d[:, j], s) for j in range(d.shape[1])]
    last = s.shape[1] - 1  # s has one column, or one per output
    return [(d[:, j], s[:, min(j, last)]) for j in range(d.shape[1])]


# The kernels below reduce with pairwise ``ndarray.sum`` over in-place chunk
# temporaries rather than BLAS dot products: as accurate as the plain sums, and
# free of BLAS thread start-up, which costs more than the arithmetic on chunks of
# this size when the other cores are busy.


def _squared_error_kernel(
    d: np.ndarray, s: Any, w: np.ndarray | None
) -> tuple[np.ndarray, ...]:
    # E[e²] = d² + σ²,  Var[e²] = 2σ⁴ + 4d²σ²   (FORMULAS.md §1), as the sums
    # Σ w d², Σ w σ², Σ (wσ²)² and Σ (wσd)². ``d`` is a fresh chunk temporary
    # and is overwritten.
    totals = np.empty((3, d.shape[1]))
    for j, (dj, sj) in enumerate(_columns(d, s)):
        d2 = np.square(dj)  # dj is a strided view for several outputs
        wd2 = d2 if w is None else np.multiply(d2, w, out=d2)  # w d²
        nominal = float(wd2.sum())
        if isinstance(sj, float):
            s2 = sj * sj
            if w is None:
                w_sum = w2_sum = float(dj.shape[0])
                w2d2 = nominal
            else:
                w_sum = float(w.sum())
                w2_sum = float(np.square(w).sum())
                w2d2 = float(np.multiply(wd2, w, out=wd2).sum())
            expected = nominal + s2 * w_sum
            variance = 2.0 * s2 * s2 * w2_sum + 4.0 * s2 * w2d2
        else:
            ws2 = np.square(sj)
            if w is not None:
                ws2 *= w  # w σ²
            expected = nominal + float(ws2.sum())
            wd2 *= ws2  # w² σ² d²
            ws2 *= ws2  # (w σ²)²
            variance = 2.0 * float(ws2.sum()) + 4.0 * float(wd2.sum())
        totals[:, j] = nominal, expected, variance
    return totals[0], totals[1], totals[2]


def _squared_error_truth_kernel(
    d: np.ndarray, s: Any, w: np.ndarray | None
) -> tuple[np.ndarray, ...]:
    # estimand="truth" (FORMULAS.md §4): d = e is the observed residual. Sums
    # Σ w e², Σ w (e² − σ²) (unbiased for Σ w d_true²) and
    # Σ w² (4σ²e² − 2σ⁴) (unbiased for Σ w² Var, which needs the unknown d).
    totals = np.empty((3, d.shape[1]))
    for j, (ej, sj) in enumerate(_columns(d, s)):
        e2 = np.square(ej)
        s2 = np.broadcast_to(np.square(sj), e2.shape)
        w2 = None if w is None else np.square(w)
        nominal = _weighted_sum(e2, w)
        expected = nominal - _weighted_sum(s2, w)
        variance = _weighted_sum(s2 * (4.0 * e2 - 2.0 * s2), w2)
        totals[:, j] = nominal, expected, variance
    return totals[0], totals[1], totals[2]


def _clip_variance(score: NoisyScore) -> NoisyScore:
    """``score`` with a negative variance estimate replaced by 0."""
    if score.variance >= 0.0:
        return score
    return NoisyScore(
        score.metric, score.expected, 0.0, score.nominal, score.n_samples, score.method
    )


def _absolute_error_moments(d: np.ndarray, s: Any) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of ``|e|`` for ``e ~ N(d, s²)``, the stable g-form.

    With ``t = |d|/s`` and ``g(t) = φ(t) − tΦ(−t)`` (FORMULAS.md §2, Part III.1):
    ``E|e| = |d| + 2 s g(t)`` and ``Var|e| = s² (1 − 4 g (t + g))``. ``t`` is
    clipped at 40, where ``g < 1e-300``; a sample with ``s = 0`` takes
    ``t = 40`` and so gets ``E = |d|`` and ``Var = 0`` exactly.
    """
    abs_d = np.abs(d)
    s = np.broadcast_to(s, abs_d.shape)
    t = _standardised_distance(abs_d, s)
    g = _linear_loss(t)
    mean = abs_d + 2.0 * s * g
    var = s * s * (1.0 - 4.0 * g * (t + g))
    return mean, var


def _standardised_distance(abs_d: np.ndarray, s: Any) -> np.ndarray:
    """``t = min(|d|/s, 40)`` as a new array, with ``t = 40`` where ``s = 0``.

    The quotient is inf (|d| > 0) or NaN (|d| = 0) where ``s = 0``, and may
    overflow for subnormal ``s``; those values are deliberately replaced by the
    clip (``fmin`` drops NaN), so their floating-point warnings are silenced.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        t = np.divide(abs_d, s)
    return np.fmin(t, _T_MAX, out=t)


def _linear_loss(t: np.ndarray) -> np.ndarray:
    """The normal linear-loss function ``g(t) = φ(t) − tΦ(−t)`` for ``t >= 0``.

    Absolute error ~1e-17 (FORMULAS.md Part III.1); ``g(40) = 0`` exactly.
    """
    phi = np.multiply(t, t)
    phi *= -0.5
    np.exp(phi, out=phi)
    phi *= _INV_SQRT_2PI
    tail = np.negative(t)
    ndtr(tail, out=tail)
    tail *= t
    phi -= tail
    return phi


def _absolute_error_kernel(
    d: np.ndarray, s: Any, w: np.ndarray | None
) -> tuple[np.ndarray, ...]:
    # Σ w E|e| = Σ w|d| + 2 Σ w σ g  (two sums of non-negative terms) and
    # Σ w² Var|e| = Σ (wσ)² f  with the per-sample factor f = 1 − 4 g (t + g),
    # 0.363 <= f <= 1: no cancellation anywhere (FORMULAS.md Part III.1).
    totals = np.empty((3, d.shape[1]))
    for j, (dj, sj) in enumerate(_columns(d, s)):
        abs_d = np.abs(dj)
        nominal = float(abs_d.sum() if w is None else np.multiply(w, abs_d).sum())
        if isinstance(sj, float) and sj == 0.0:
            totals[:, j] = nominal, nominal, 0.0
            continue
        t = _standardised_distance(abs_d, sj)
        g = _linear_loss(t)
        # t <- f = 1 − 4 g (t + g), in place.
        t += g
        t *= g
        t *= -4.0
        t += 1.0
        if isinstance(sj, float):
            if w is None:
                bias = sj * float(g.sum())
                variance = sj * sj * float(t.sum())
            else:
                g *= w
                bias = sj * float(g.sum())
                t *= w
                t *= w
                variance = sj * sj * float(t.sum())
        else:
            ws = sj if w is None else np.multiply(w, sj, out=abs_d)
            g *= ws
            bias = float(g.sum())
            t *= ws
            t *= ws
            variance = float(t.sum())
        totals[:, j] = nominal, nominal + 2.0 * bias, variance
    return totals[0], totals[1], totals[2]


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
    estimand: str = "measurement",
) -> NoisyScore | list[NoisyScore]:
    """Expected mean squared error, and its variance, under Gaussian label error.

    Each observed label is ``y_i ~ N(y_true_i, sigma_i²)``. With
    ``d_i = y_true_i - y_pred_i`` the moments are exact (FORMULAS.md §1)::

        E[MSE]   = (1/M) Σ (d_i² + σ_i²)
        Var[MSE] = (1/M²) Σ (2σ_i⁴ + 4 d_i² σ_i²)

    Parameters
    ----------
{parameters}

    estimand : {"measurement", "truth"}, default="measurement"
        ``"measurement"``: the MSE observed against labels redrawn around
        ``y_true``, as above. ``"truth"``: ``y_true`` are single noisy
        measurements of the unknown true values and ``expected`` is the
        unbiased estimate ``MSE_obs - (1/M) Σ σ_i²`` of the MSE against them
        (FORMULAS.md §4); it can be negative. Its variance,
        ``(1/M²) Σ (2σ_i⁴ + 4 d_i² σ_i²)``, needs the unknown true residuals
        ``d_i``: ``variance`` reports its unbiased estimate
        ``V̂ = (1/M²) Σ (4σ_i² e_i² - 2σ_i⁴)`` from the observed residuals
        ``e_i``. ``V̂`` can be negative; it is then clipped at 0, which biases
        it upwards. ``nominal`` is the MSE on ``y_true`` as given.

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
    NoisyScore(metric='mean_squared_error', expected=0.625, std=0.3536, \
nominal=0.375, n_samples=4, method='exact')
    >>> score.variance
    0.125
    """
    y_true, y_pred, sigma, weight, multioutput = check_regression_inputs(
        y_true,
        y_pred,
        sigma=sigma,
        sample_weight=sample_weight,
        multioutput=multioutput,
    )
    check_estimand(estimand, metric="mean_squared_error", supports_truth=True)
    if estimand == "truth":
        nominal, expected, variance = _accumulate(
            _squared_error_truth_kernel, y_true, y_pred, sigma, weight
        )
        result = _aggregate_outputs(
            "mean_squared_error",
            nominal,
            expected,
            variance,
            y_true.shape[0],
            multioutput,
        )
        if isinstance(result, list):
            return [_clip_variance(score) for score in result]
        return _clip_variance(result)
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
    (0.982258, 0.250588)
    >>> score.nominal
    0.5
    """
    y_true, y_pred, sigma, weight, multioutput = check_regression_inputs(
        y_true,
        y_pred,
        sigma=sigma,
        sample_weight=sample_weight,
        multioutput=multioutput,
    )
    nominal, expected, variance = _accumulate(
        _absolute_error_kernel, y_true, y_pred, sigma, weight, parallel=True
    )
    return _aggregate_outputs(
        "mean_absolute_error", nominal, expected, variance, y_true.shape[0], multioutput
    )


for _function in (expected_mean_squared_error, expected_mean_absolute_error):
    _function.__doc__ = _function.__doc__.replace(
        "{parameters}", _REGRESSION_PARAMETERS_DOC
    )
