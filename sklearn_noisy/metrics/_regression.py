"""Expected regression metrics under Gaussian label error (FORMULAS.md §1, §2, §5, §6).

The observed label is ``y_i ~ N(y_true_i, sigma_i**2)``, independent across
samples; ``y_pred`` is fixed. Every function returns a
:class:`~sklearn_noisy.NoisyScore` (or a list of them with
``multioutput="raw_values"``).
"""

from __future__ import annotations

import functools
import math
import os
import threading
import warnings
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import joblib
import numpy as np
from scipy.special import erfc

from .._noisy_score import NoisyScore
from ..utils._validation import (
    CHUNK_SIZE,
    check_estimand,
    check_finite,
    check_regression_inputs,
    supports_estimands,
)
from ._r2_quadrature import r2_moments
from ._rmse_quadrature import rmse_moments, rmse_moments_delta

__all__ = [
    "expected_mean_absolute_error",
    "expected_mean_squared_error",
    "expected_r2_score",
    "expected_root_mean_squared_error",
]

_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)
_INV_SQRT_2 = 1.0 / np.sqrt(2.0)
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
        n_threads = _cpu_count()
    return max(1, min(n_threads, 4))


@functools.cache
def _cpu_count() -> int:
    """``joblib.cpu_count()`` (it honours cgroup quotas), read once: it is slow."""
    return joblib.cpu_count()


_WORKSPACE = threading.local()


def _work(slot: int, shape: tuple[int, ...]) -> np.ndarray:
    """A reusable float64 work array of ``shape`` for this thread (uninitialised).

    The kernels run chunk after chunk with the same few temporaries; taking them
    from a per-thread pool instead of allocating them afresh for every chunk
    avoids page-faulting new memory each time, which costs as much as the
    arithmetic. Slot 0 holds the chunk ``d`` of :func:`_accumulate`; kernels use
    slots 1 and up. The pool keeps at most a few chunks' worth per thread.
    """
    pool = getattr(_WORKSPACE, "pool", None)
    if pool is None:
        pool = _WORKSPACE.pool = {}
    size = math.prod(shape)
    buffer = pool.get(slot)
    if buffer is None or buffer.size < size:
        buffer = pool[slot] = np.empty(max(size, CHUNK_SIZE))
    return buffer[:size].reshape(shape)


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
    GIL-releasing ufuncs such as ``erfc``). The chunk sums are added in chunk
    order either way, so the result does not depend on the number of threads.
    """
    n_samples, n_outputs = y_true.shape

    def chunk_totals(start: int) -> np.ndarray:
        rows = slice(start, start + CHUNK_SIZE)
        chunk = y_true[rows]
        d = np.subtract(chunk, y_pred[rows], out=_work(0, chunk.shape))
        s = sigma if isinstance(sigma, float) else sigma[rows]
        w = None if weight is None else weight[rows]
        return np.stack(kernel(d, s, w))

    starts = range(0, n_samples, CHUNK_SIZE)
    n_threads = min(_n_threads(), len(starts)) if parallel and len(starts) > 1 else 1
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
    # Σ w d², Σ w σ², Σ (wσ²)² and Σ (wσd)². ``d`` is a chunk temporary and is
    # overwritten (a column of it, strided for several outputs, at a time).
    totals = np.empty((3, d.shape[1]))
    for j, (dj, sj) in enumerate(_columns(d, s)):
        d2 = np.square(dj, out=dj)
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
            ws2 = np.square(sj, out=_work(1, sj.shape))
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


def _check_finite_results(
    metric: str, inputs: tuple[Any, Any, Any], results: tuple[np.ndarray, ...]
) -> None:
    """The deferred NaN/inf check of ``check_regression_inputs(ensure_finite=False)``.

    Sums of squares and products are finite exactly when the inputs are finite
    and nothing overflowed. So only a non-finite result costs a scan of the
    inputs: it raises the usual ``ValueError`` naming the input, or, when the
    inputs are finite, warns that the float64 range was exceeded.
    """
    if all(np.isfinite(values).all() for values in results):
        return
    for name, array in zip(("y_true", "y_pred", "sigma"), inputs, strict=True):
        if isinstance(array, np.ndarray):
            check_finite(array[:, 0] if array.shape[1] == 1 else array, name=name)
    warnings.warn(
        f"{metric} overflowed: the squared errors or sigma**4 exceed the float64 "
        "range, so the result is inf. Rescale y_true, y_pred and sigma.",
        RuntimeWarning,
        stacklevel=3,
    )


def _clip_variance(score: NoisyScore) -> NoisyScore:
    """``score`` with a negative variance estimate replaced by 0."""
    if score.variance >= 0.0:
        return score
    return NoisyScore(
        score.metric, score.expected, 0.0, score.nominal, score.n_samples, score.method
    )


def _linear_loss_of_negative(u: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``g(-u)`` for ``u = -t <= 0`` into ``out``: ``φ(u) + u Φ(u)``.

    ``g(t) = φ(t) − tΦ(−t)`` is the normal linear-loss function (FORMULAS.md
    §2, Part III.1), absolute error ~1e-17, and ``g(40) = 0`` exactly. The tail
    ``Φ(u) = erfc(−u/√2)/2`` is taken from :func:`scipy.special.erfc` directly:
    for ``u <= 0`` that is what :func:`scipy.special.ndtr` computes, at half
    the cost. Uses work slot 3.
    """
    g = np.multiply(u, u, out=out)
    g *= -0.5
    np.exp(g, out=g)
    g *= _INV_SQRT_2PI
    tail = np.multiply(u, -_INV_SQRT_2, out=_work(3, u.shape))
    erfc(tail, out=tail)
    tail *= 0.5
    tail *= u
    g += tail
    return g


def _absolute_error_kernel(
    d: np.ndarray, s: Any, w: np.ndarray | None
) -> tuple[np.ndarray, ...]:
    # With t = |d|/σ (clipped at 40) and G = σ g(t) (FORMULAS.md §2):
    #   E|e| = |d| + 2G,   Var|e| = σ² (1 − 4 g (t + g)) = σ² − 4 G (|d| + G),
    # since σ t = |d| wherever g > 0 (g(40) = 0 exactly). The sums are
    # Σ w|d|, Σ w G, Σ w²σ² and Σ w² G(|d| + G), all of non-negative terms; the
    # variance subtracts the last from the third, which removes at most
    # 1 − 0.363 of it (1 − 4g(t + g) >= 1 − 2/π): no cancellation beyond a
    # factor 2.75 in the relative rounding error. σ = 0 gives t = 40 and G = 0.
    # ``d`` is a chunk temporary and is overwritten.
    totals = np.empty((3, d.shape[1]))
    for j, (dj, sj) in enumerate(_columns(d, s)):
        neg_abs = np.copysign(dj, -1.0, out=dj)  # −|d|
        nominal = -float(neg_abs.sum() if w is None else np.multiply(neg_abs, w).sum())
        if isinstance(sj, float) and sj == 0.0:
            totals[:, j] = nominal, nominal, 0.0
            continue
        # u = −t = max(−|d|/σ, −40); −inf (σ = 0 < |d|) and NaN (σ = |d| = 0)
        # are deliberately replaced by −40 (fmax drops NaN).
        u = _work(1, neg_abs.shape)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            np.divide(neg_abs, sj, out=u)
        np.fmax(u, -_T_MAX, out=u)
        big_g = _linear_loss_of_negative(u, out=_work(2, u.shape))  # g, to G below
        big_g *= sj
        if w is not None:
            weighted_g = np.multiply(big_g, w, out=u)  # u is free from here on
            bias = float(weighted_g.sum())
        else:
            bias = float(big_g.sum())
        # neg_abs <- w² G (|d| + G), in place.
        np.subtract(big_g, neg_abs, out=neg_abs)
        if w is None:
            neg_abs *= big_g
        else:
            neg_abs *= weighted_g
            neg_abs *= w
        removed = 4.0 * float(neg_abs.sum())
        if isinstance(sj, float):
            w2_sum = float(dj.shape[0]) if w is None else float(np.square(w).sum())
            total = sj * sj * w2_sum
        else:
            ws = sj if w is None else np.multiply(w, sj, out=big_g)
            total = float(np.square(ws, out=u).sum())
        totals[:, j] = nominal, nominal + 2.0 * bias, max(total - removed, 0.0)
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


@supports_estimands("forward", "truth")
def expected_mean_squared_error(
    y_true: Any,
    y_pred: Any,
    *,
    sigma: Any,
    sample_weight: Any = None,
    multioutput: Any = "uniform_average",
    estimand: str = "forward",
) -> NoisyScore | list[NoisyScore]:
    """Expected mean squared error, and its variance, under Gaussian label error.

    Each observed label is ``y_i ~ N(y_true_i, sigma_i²)``. With
    ``d_i = y_true_i - y_pred_i`` the moments are exact (FORMULAS.md §1)::

        E[MSE]   = (1/M) Σ (d_i² + σ_i²)
        Var[MSE] = (1/M²) Σ (2σ_i⁴ + 4 d_i² σ_i²)

    Parameters
    ----------
{parameters}

    estimand : {"forward", "truth"}, default="forward"
        ``"forward"``: the MSE observed against labels redrawn around
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
    check_estimand(
        estimand,
        metric="mean_squared_error",
        supported=expected_mean_squared_error.estimands,
    )
    # The measurement kernel's sums are NaN/inf whenever an input is, so its
    # inputs are scanned for NaN/inf only when a result is not finite.
    deferred = estimand == "forward"
    y_true, y_pred, sigma, weight, multioutput = check_regression_inputs(
        y_true,
        y_pred,
        sigma=sigma,
        sample_weight=sample_weight,
        multioutput=multioutput,
        ensure_finite=not deferred,
    )
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
    with np.errstate(invalid="ignore", over="ignore"):  # checked just below
        nominal, expected, variance = _accumulate(
            _squared_error_kernel, y_true, y_pred, sigma, weight
        )
    _check_finite_results(
        "mean_squared_error", (y_true, y_pred, sigma), (nominal, expected, variance)
    )
    return _aggregate_outputs(
        "mean_squared_error", nominal, expected, variance, y_true.shape[0], multioutput
    )


@supports_estimands("forward")
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

    Notes
    -----
    The normal tail ``Φ(-t)`` (:func:`scipy.special.erfc`) dominates the cost.
    Inputs longer than 65536 samples are processed in chunks on up to 4
    threads (``OMP_NUM_THREADS`` if set, else the number of CPUs); the result
    is bit-for-bit the same for any number of threads.

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
    # "    {parameters}" (indented, which keeps ruff's docstring formatter happy)
    # or "{parameters}" at the start of a line.
    _function.__doc__ = _function.__doc__.replace(
        "    {parameters}", "{parameters}"
    ).replace("{parameters}", _REGRESSION_PARAMETERS_DOC)


_METHOD_DOC = """\
    method : {"exact", "delta"}, default="exact"
        ``"exact"``: the exact value by one-dimensional quadrature (below).
        ``"delta"``: the delta-method (Taylor) approximation, reported with
        ``method="delta"``; it is cheaper but inaccurate for small samples or
        strongly unequal ``sigma``."""


def _check_method(method: Any) -> str:
    if not isinstance(method, str) or method not in ("exact", "delta"):
        raise ValueError(f"method must be 'exact' or 'delta'; got {method!r}.")
    return method


def _output_column(values: Any, j: int) -> Any:
    """Column ``j`` of a validated sigma (a float, or 1 or n_outputs columns)."""
    if isinstance(values, float):
        return values
    return values[:, min(j, values.shape[1] - 1)]


def _weighted_block_sum(values: Any, weight: np.ndarray | None) -> float:
    """``Σ w_i v_i`` of a block (pairwise summation, no BLAS dot)."""
    return float(np.sum(values if weight is None else weight * values))


@supports_estimands("forward")
def expected_root_mean_squared_error(
    y_true: Any,
    y_pred: Any,
    *,
    sigma: Any,
    sample_weight: Any = None,
    multioutput: Any = "uniform_average",
    method: str = "exact",
) -> NoisyScore | list[NoisyScore]:
    """Expected root mean squared error, and its variance, under Gaussian label error.

    Each observed label is ``y_i ~ N(y_true_i, sigma_i²)``; ``RMSE = √MSE`` with
    ``MSE = Σ p_i (y_i - y_pred_i)²`` and ``p_i = w_i / Σ w`` (``1/M`` without
    weights). With ``m = E[MSE]`` (FORMULAS.md §1) the exact moments follow from
    one integral (FORMULAS.md §5)::

        b = √m - E[RMSE] = (1/(2√π)) ∫₀^∞ [L(t) - e^{-tm}] t^{-3/2} dt
        L(t) = E e^{-t·MSE} = Π_i (1 + a_i)^{-1/2} exp(-t p_i d_i² / (1 + a_i))
        E[RMSE] = √m - b,        Var[RMSE] = 2√m·b - b²

    where ``d_i = y_true_i - y_pred_i`` and ``a_i = 2tp_iσ_i²``. The integral
    is computed by adaptive Gauss–Kronrod quadrature in ``log t`` to close to
    double precision (it
    agrees with the noncentral-χ result ``scipy.stats.ncx2`` for constant
    ``sigma`` to ~1e-15 in ``E``); the variance form has no cancellation. The
    cost is ``O(M)`` once plus ``O(1)`` per quadrature node for all but the few
    samples with the largest ``p_i σ_i²``. By Jensen's inequality
    ``E[RMSE] ≤ √E[MSE]``.

    With ``method="delta"``: ``E ≈ √m - v/(8 m^{3/2})`` and ``Var ≈ v/(4m)``
    (``v = Var[MSE]``). Its relative error in ``Var`` is about
    ``½·skew(MSE)·CV - (7/8)·CV²`` with ``CV² = v/m²``: +9 % to +18 % at
    ``M = 5``, about 1 % at ``M = 100``, still +6 % at ``M = 1000`` with
    log-normal ``sigma``; the error in ``E`` stays below 1 %.

    Parameters
    ----------
{parameters}

{method}

    Returns
    -------
    score : NoisyScore or list of NoisyScore
        ``nominal`` is :func:`sklearn.metrics.root_mean_squared_error` on
        ``y_true``. When every label is exact, ``expected`` equals ``nominal``
        and ``variance`` is 0. Multiple outputs are averaged after taking the
        root per output, as in scikit-learn.

    See Also
    --------
    sklearn.metrics.root_mean_squared_error : The metric on exact labels.
    expected_mean_squared_error : The same for MSE (closed form).

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_root_mean_squared_error
    >>> y_true = [3.0, -0.5, 2.0, 7.0]
    >>> y_pred = [2.5, 0.0, 2.0, 8.0]
    >>> score = expected_root_mean_squared_error(y_true, y_pred, sigma=0.5)
    >>> score
    NoisyScore(metric='root_mean_squared_error', expected=0.758283, std=0.2236, \
nominal=0.612372, n_samples=4, method='exact')
    >>> round(score.expected**2 + score.variance, 12)  # = E[MSE]
    0.625
    >>> expected_root_mean_squared_error(y_true, y_pred, sigma=0.5, method="delta")
    NoisyScore(metric='root_mean_squared_error', expected=0.758947, std=0.2236, \
nominal=0.612372, n_samples=4, method='delta')
    """
    y_true, y_pred, sigma, weight, multioutput = check_regression_inputs(
        y_true,
        y_pred,
        sigma=sigma,
        sample_weight=sample_weight,
        multioutput=multioutput,
    )
    method = _check_method(method)
    kernel = rmse_moments if method == "exact" else rmse_moments_delta
    n_outputs = y_true.shape[1]
    nominal, expected, variance = np.empty((3, n_outputs))
    for j in range(n_outputs):
        # The kernels also return the nominal RMSE, summed in scaled units.
        expected[j], variance[j], nominal[j] = kernel(
            y_true[:, j], y_pred[:, j], _output_column(sigma, j), weight
        )
        if variance[j] == 0.0:  # no label noise: exactly the classical metric
            expected[j] = nominal[j]
    return _aggregate_outputs(
        "root_mean_squared_error",
        nominal,
        expected,
        variance,
        y_true.shape[0],
        multioutput,
        method,
    )


def _r2_nominal(
    y_true: np.ndarray, y_pred: np.ndarray, weight: np.ndarray | None
) -> float:
    """scikit-learn's ``r2_score`` of one output, block by block.

    ``force_finite`` convention: 1.0 when the residuals are all 0, else 0.0
    when ``y_true`` is constant. A constant ``y_true`` is detected exactly
    (scikit-learn's rounded mean can leave a tiny positive total sum of
    squares there and return a huge negative score).
    """
    n_samples = y_true.shape[0]
    w_total = float(n_samples) if weight is None else float(weight.sum())
    blocks = []
    for i in range(0, n_samples, CHUNK_SIZE):
        rows = slice(i, i + CHUNK_SIZE)
        blocks.append((rows, None if weight is None else weight[rows]))
    scale = 1.0
    for _ in range(2):
        # Squares can overflow for |y| > 1e154: then (and only then) the sums
        # are discarded and taken again in units of max |y|.
        with np.errstate(over="ignore", invalid="ignore"):
            total = sum(_weighted_block_sum(y_true[rows], w) for rows, w in blocks)
            mean = total / w_total / scale
            numerator = denominator = 0.0
            low, high = np.inf, -np.inf
            for rows, w in blocks:
                y = y_true[rows] / scale
                d = y - y_pred[rows] / scale
                numerator += _weighted_block_sum(d * d, w)
                c = y - mean
                denominator += _weighted_block_sum(c * c, w)
                low, high = min(low, float(y.min())), max(high, float(y.max()))
        if np.isfinite(numerator) and np.isfinite(denominator):
            break
        scale = max(float(np.max(np.abs(y_true))), float(np.max(np.abs(y_pred))), 1.0)
    if numerator == 0.0:
        return 1.0
    if denominator == 0.0 or low == high:
        return 0.0
    return 1.0 - numerator / denominator


@supports_estimands("forward")
def expected_r2_score(
    y_true: Any,
    y_pred: Any,
    *,
    sigma: Any,
    sample_weight: Any = None,
    multioutput: Any = "uniform_average",
    method: str = "exact",
) -> NoisyScore | list[NoisyScore]:
    """Expected R² (coefficient of determination), and its variance, under label error.

    Each observed label is ``y_i ~ N(y_true_i, sigma_i²)``, and both sums of
    ``R² = 1 - X/Y`` are built from the noisy labels: ``X = Σ w_i (y_i -
    y_pred_i)²`` and ``Y = Σ w_i (y_i - ȳ_w)²`` around their weighted mean
    ``ȳ_w`` (``w_i = 1`` without weights). Noise therefore lowers R² even on
    average. The exact moments of ``ρ = X/Y`` come from the identities
    (FORMULAS.md §6)::

        E[X/Y] = ∫₀^∞ E[X e^{-tY}] dt,      E[Z²/Y²] = ∫₀^∞ t E[Z² e^{-tY}] dt

    with ``Z = X - cY``: under the exponential tilt ``e^{-tY}`` the labels are
    again Gaussian (a diagonal-plus-rank-one covariance, by Sherman–Morrison),
    so both integrands are closed forms in ``O(M)`` (``O(1)`` per quadrature
    node for all but the noisiest samples). The variance is taken centred,
    ``Var[R²] = E[(ρ - c)²] - (E[ρ] - c)²`` with ``c`` close to ``E[ρ]``, and the
    integrals are computed by adaptive Gauss–Kronrod quadrature in ``log t``
    to close to double precision.

    **Existence.** Let ``r`` be the rank of the centred noise: the number of
    noisy labels if some label is exact, else ``M - 1``. Unless at least two
    exact labels (``sigma = 0``) have distinct values, ``Y`` can come
    arbitrarily close to 0, and then ``E[R²]`` is finite only if ``r > 2`` and
    ``Var[R²]`` only if ``r > 4``. Where the variance does not exist,
    ``variance`` is ``inf`` and a ``UserWarning`` explains why (for instance,
    five samples, all noisy); where the mean does not exist, ``expected`` is
    ``-inf`` too.

    With ``method="delta"``: the second-order delta method for the ratio
    ``X/Y``. Its variance is off by -2 % at ``M = 100`` and by -8 % to -18 % at
    ``M = 30``, and it fails at ``M = 10`` with a low signal (-56 %); it
    returns a finite number even where the variance does not exist.

    Parameters
    ----------
{parameters}

{method}

    Returns
    -------
    score : NoisyScore or list of NoisyScore
        ``nominal`` is :func:`sklearn.metrics.r2_score` on ``y_true``
        (``force_finite`` convention: 1.0 for a constant ``y_true`` predicted
        exactly, else 0.0; the constant is detected exactly, where
        scikit-learn's rounded weighted mean can leave a tiny total sum of
        squares and a huge negative score). When every label is exact,
        ``expected`` equals ``nominal`` and ``variance`` is 0.

    Raises
    ------
    ValueError
        If fewer than two samples have a positive weight: R² is not defined.

    See Also
    --------
    sklearn.metrics.r2_score : The metric on exact labels.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_noisy.metrics import expected_r2_score
    >>> y_true = np.array([3.0, -0.5, 2.0, 7.0, 4.2, 1.1, 5.5, 0.3])
    >>> y_pred = np.array([2.5, 0.0, 2.0, 8.0, 4.0, 1.5, 5.0, 0.0])
    >>> score = expected_r2_score(y_true, y_pred, sigma=0.5)
    >>> score
    NoisyScore(metric='r2', expected=0.916235, std=0.03933, nominal=0.957138, \
n_samples=8, method='exact')

    With five noisy samples the variance of R² is infinite:

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     score = expected_r2_score(y_true[:5], y_pred[:5], sigma=0.5)
    >>> score.variance
    inf
    >>> print(caught[0].message)  # doctest: +ELLIPSIS
    The variance of R² does not exist (it is infinite): all 5 labels are noisy...
    """
    y_true, y_pred, sigma, weight, multioutput = check_regression_inputs(
        y_true,
        y_pred,
        sigma=sigma,
        sample_weight=sample_weight,
        multioutput=multioutput,
    )
    method = _check_method(method)
    n_samples, n_outputs = y_true.shape
    n_positive = n_samples if weight is None else int(np.count_nonzero(weight))
    if n_positive < 2:
        raise ValueError(
            "R² is not defined with fewer than two samples (with a positive "
            f"sample_weight); got {n_positive}."
        )
    nominal, expected, variance = np.empty((3, n_outputs))
    for j in range(n_outputs):
        nominal[j] = _r2_nominal(y_true[:, j], y_pred[:, j], weight)
        result = r2_moments(
            y_true[:, j],
            y_pred[:, j],
            _output_column(sigma, j),
            weight,
            nominal=float(nominal[j]),
            method=method,
        )
        expected[j], variance[j] = result.expected, result.variance
        if result.message is not None:
            prefix = f"Output {j}: " if n_outputs > 1 else ""
            suffix = (
                " The delta method returns a finite number here, which is not "
                "meaningful."
                if method == "delta"
                else ""
            )
            warnings.warn(prefix + result.message + suffix, UserWarning, stacklevel=2)
    return _aggregate_outputs(
        "r2", nominal, expected, variance, n_samples, multioutput, method
    )


for _function in (expected_root_mean_squared_error, expected_r2_score):
    _function.__doc__ = _function.__doc__.replace(
        "{parameters}", _REGRESSION_PARAMETERS_DOC
    ).replace("{method}", _METHOD_DOC)
