"""Expected regression metrics under Gaussian label error.

The observed label is ``y_i ~ N(y_true_i, sigma_i**2)``, independent across
samples; ``y_pred`` is fixed. Every function returns a
:class:`~sklearn_noisy.NoisyScore` (or a list of them with
``multioutput="raw_values"``). MSE and MAE are closed forms (user guide:
:ref:`formula_mse`, :ref:`formula_mae`), summed by the chunked kernels of
:mod:`~sklearn_noisy.metrics._regression_kernels`; RMSE and R² are exact
one-dimensional quadratures (user guide: :ref:`formula_rmse`,
:ref:`formula_r2`) or their delta-method approximations.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._noisy_score import NoisyScore
from ..utils._arrays import check_finite
from ..utils._docstring import fill_doc
from ..utils._validation import (
    check_estimand,
    check_regression_inputs,
    has_noise,
    supports_estimands,
)
from ..utils._warnings import warn
from ._gaussian_forms import (
    mae_distribution,
    mse_distribution,
    output_distributions,
)
from ._r2_outputs import r2_forward
from ._regression_estimands import (
    ESTIMAND_DOC,
    MAE_REMEASUREMENT_DOC,
    METHOD_DOC,
    REGRESSION_PARAMETERS_DOC,
    SIGMA_DOF_DOC,
    aggregate_outputs,
    check_regression_sigma_dof,
    estimand_score,
)
from ._regression_kernels import (
    absolute_error_kernel,
    accumulate,
    output_column,
    rescaled_squared_error,
    squared_error_kernel,
)
from ._regression_sampling import mae_terms, mse_terms, root_sampling
from ._rmse_quadrature import rmse_moments, rmse_moments_delta, rmse_nominal
from ._test_set_sampling import with_test_set_sampling

__all__ = [
    "expected_mean_absolute_error",
    "expected_mean_squared_error",
    "expected_r2_score",
    "expected_root_mean_squared_error",
]


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
    warn(
        f"{metric} overflowed: the errors or their moments exceed the float64 "
        "range, so part of the result is inf. Rescale y_true, y_pred and sigma.",
        RuntimeWarning,
    )


@with_test_set_sampling(mse_terms)
@supports_estimands("forward", "truth", "remeasurement")
@fill_doc(
    parameters=REGRESSION_PARAMETERS_DOC,
    sigma_dof=SIGMA_DOF_DOC,
    estimand=ESTIMAND_DOC,
)
def expected_mean_squared_error(
    y_true: Any,
    y_pred: Any,
    *,
    sigma: Any,
    sample_weight: Any = None,
    multioutput: Any = "uniform_average",
    estimand: str = "forward",
    sigma_dof: Any = None,
) -> NoisyScore | list[NoisyScore]:
    """Expected mean squared error, and its variance, under Gaussian label error.

    Each observed label is ``y_i ~ N(y_true_i, sigma_i²)``. With
    ``d_i = y_true_i - y_pred_i`` the moments are exact (user guide:
    :ref:`formula_mse`)::

        E[MSE]   = (1/M) Σ (d_i² + σ_i²)
        Var[MSE] = (1/M²) Σ (2σ_i⁴ + 4 d_i² σ_i²)

    Parameters
    ----------
    {parameters}

    {estimand}

    {sigma_dof}

    Returns
    -------
    score : NoisyScore or list of NoisyScore
        ``expected`` and ``variance`` as above, ``nominal`` the classical
        :func:`sklearn.metrics.mean_squared_error` on ``y_true``; ``method`` is
        ``"exact"`` for every estimand.

    See Also
    --------
    sklearn.metrics.mean_squared_error : The metric on exact labels.
    expected_root_mean_squared_error : The same for RMSE.

    Notes
    -----
    With ``estimand="truth"``, ``expected`` is the unbiased
    ``T̂ = Σ w (d̃² - σ̂²) / W`` (``d̃ = y_true - y_pred``); it can be negative.
    Its variance ``Σ w² (4σ²d² + 2σ⁴ (1 + 1/ν)) / W²`` (``d`` the unknown true
    residual, ``ν`` = ``sigma_dof``, ``1/ν = 0`` when σ is known) is estimated
    without bias by ``Σ w² (4σ̂²d̃² - 2σ̂⁴ (ν - 1)/(ν + 2)) / W²`` and floored at
    ``Σ w² 2σ̂⁴ (ν + 1)/(ν + 2) / W²``, the estimate of its lower bound (user
    guide: :ref:`formula_truth`). With ``estimand="remeasurement"``,
    ``expected`` is the nominal MSE, exactly unbiased for
    ``θ_T + Σ w σ² / W``, and its variance ``Σ w² (4σ²d² + 2σ⁴) / W²`` is
    estimated without bias by ``Σ w² (4σ̂²d̃² - 2σ̂⁴ ν/(ν + 2)) / W²``, floored
    at ``Σ w² 2σ̂⁴ ν/(ν + 2) / W²``.

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
    # The kernels' sums are NaN/inf whenever an input is, so the inputs are
    # scanned for NaN/inf only when a result is not finite.
    inputs = check_regression_inputs(
        y_true,
        y_pred,
        sigma=sigma,
        sample_weight=sample_weight,
        multioutput=multioutput,
        metric="mean_squared_error",
        ensure_finite=False,
    )
    y_true, y_pred, sigma, weight, multioutput = inputs
    if estimand != "forward":
        return estimand_score(
            "mean_squared_error",
            estimand,
            inputs,
            sigma_dof,
            check=lambda results: _check_finite_results(
                "mean_squared_error", (y_true, y_pred, sigma), results
            ),
        )
    check_regression_sigma_dof(sigma_dof, y_true.shape[0])
    with np.errstate(invalid="ignore", over="ignore"):  # checked just below
        nominal, expected, variance = accumulate(
            squared_error_kernel, y_true, y_pred, sigma, weight
        )
        if not all(np.isfinite(v).all() for v in (nominal, expected, variance)):
            nominal, expected, variance = rescaled_squared_error(
                y_true, y_pred, sigma, weight
            )
    _check_finite_results(
        "mean_squared_error", (y_true, y_pred, sigma), (nominal, expected, variance)
    )
    return aggregate_outputs(
        "mean_squared_error",
        nominal,
        expected,
        variance,
        y_true.shape[0],
        multioutput,
        distributions=output_distributions(
            mse_distribution, y_true, y_pred, sigma, weight, nominal_mse=nominal
        ),
    )


#: Why the MAE has no truth estimand (user guide: estimands).
_MAE_TRUTH_REASON = "E|e| is analytic in d but |d| has a kink"


@with_test_set_sampling(mae_terms)
@supports_estimands("forward", "remeasurement")
@fill_doc(
    parameters=REGRESSION_PARAMETERS_DOC,
    sigma_dof=SIGMA_DOF_DOC,
    estimand=MAE_REMEASUREMENT_DOC,
)
def expected_mean_absolute_error(
    y_true: Any,
    y_pred: Any,
    *,
    sigma: Any,
    sample_weight: Any = None,
    multioutput: Any = "uniform_average",
    estimand: str = "forward",
    sigma_dof: Any = None,
) -> NoisyScore | list[NoisyScore]:
    """Expected mean absolute error, and its variance, under Gaussian label error.

    Each ``|y_i - y_pred_i|`` is folded normal. With ``t_i = |d_i|/σ_i`` and the
    normal linear-loss function ``g(t) = φ(t) - tΦ(-t)`` the exact moments are
    computed in their stable form (user guide: :ref:`formula_mae`)::

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

    {estimand}

    {sigma_dof}

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
    check_estimand(
        estimand,
        metric="mean_absolute_error",
        supported=expected_mean_absolute_error.estimands,
        reason=_MAE_TRUTH_REASON,
    )
    inputs = check_regression_inputs(
        y_true,
        y_pred,
        sigma=sigma,
        sample_weight=sample_weight,
        multioutput=multioutput,
        metric="mean_absolute_error",
    )
    if estimand != "forward":
        return estimand_score("mean_absolute_error", estimand, inputs, sigma_dof)
    check_regression_sigma_dof(sigma_dof, inputs[0].shape[0])
    y_true, y_pred, sigma, weight, multioutput = inputs
    nominal, expected, variance = accumulate(
        absolute_error_kernel, y_true, y_pred, sigma, weight, parallel=True
    )
    _check_finite_results(
        "mean_absolute_error", (y_true, y_pred, sigma), (nominal, expected, variance)
    )
    return aggregate_outputs(
        "mean_absolute_error",
        nominal,
        expected,
        variance,
        y_true.shape[0],
        multioutput,
        distributions=output_distributions(
            mae_distribution, y_true, y_pred, sigma, weight
        ),
    )


def _squared(values: np.ndarray) -> np.ndarray:
    """``values²`` without a warning where it under- or overflows."""
    with np.errstate(over="ignore", under="ignore"):
        return values * values


def _check_method(method: Any) -> str:
    if not isinstance(method, str) or method not in ("exact", "delta"):
        raise ValueError(f"method must be 'exact' or 'delta'; got {method!r}.")
    return method


@with_test_set_sampling(hook=root_sampling(expected_mean_squared_error))
@supports_estimands("forward", "truth", "remeasurement")
@fill_doc(
    parameters=REGRESSION_PARAMETERS_DOC,
    method=METHOD_DOC,
    estimand=ESTIMAND_DOC,
    sigma_dof=SIGMA_DOF_DOC,
)
def expected_root_mean_squared_error(
    y_true: Any,
    y_pred: Any,
    *,
    sigma: Any,
    sample_weight: Any = None,
    multioutput: Any = "uniform_average",
    method: str = "exact",
    estimand: str = "forward",
    sigma_dof: Any = None,
) -> NoisyScore | list[NoisyScore]:
    """Expected root mean squared error, and its variance, under Gaussian label error.

    Each observed label is ``y_i ~ N(y_true_i, sigma_i²)``; ``RMSE = √MSE`` with
    ``MSE = Σ p_i (y_i - y_pred_i)²`` and ``p_i = w_i / Σ w`` (``1/M`` without
    weights). With ``m = E[MSE]`` (user guide: :ref:`formula_mse`) the exact
    moments follow from one integral (user guide: :ref:`formula_rmse`)::

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

    With ``estimand="truth"``: ``√T̂ + V / (8 T̂^{3/2})`` with ``T̂`` and ``V``
    the truth MSE and its (floored) variance estimate, the second term removing
    the second-order bias of ``√T̂``; variance ``V / (4T̂)`` (delta method,
    ``method="delta"``; both denominators take ``max(T̂, √V)`` so they stay
    finite as ``T̂ → 0``). Where ``T̂ <= 0`` (the label noise accounts for all
    of the observed error) the estimate is 0, never NaN, and a
    ``UserWarning`` says so. With ``estimand="remeasurement"``: the nominal
    RMSE, exactly unbiased for the RMSE of a re-measurement, with the
    delta-method variance ``V / (4 MSE)`` of the remeasurement MSE's ``V``.

    Parameters
    ----------
    {parameters}

    {method}

    {estimand}

    {sigma_dof}

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
    check_estimand(
        estimand,
        metric="root_mean_squared_error",
        supported=expected_root_mean_squared_error.estimands,
    )
    inputs = check_regression_inputs(
        y_true,
        y_pred,
        sigma=sigma,
        sample_weight=sample_weight,
        multioutput=multioutput,
        metric="root_mean_squared_error",
    )
    method = _check_method(method)
    if estimand != "forward":
        return estimand_score("root_mean_squared_error", estimand, inputs, sigma_dof)
    check_regression_sigma_dof(sigma_dof, inputs[0].shape[0])
    y_true, y_pred, sigma, weight, multioutput = inputs
    kernel = rmse_moments if method == "exact" else rmse_moments_delta
    n_outputs = y_true.shape[1]
    nominal, expected, variance = np.empty((3, n_outputs))
    with np.errstate(over="ignore", under="ignore"):  # rmse_nominal rescales
        mse = accumulate(squared_error_kernel, y_true, y_pred, 0.0, weight)[0]
    for j in range(n_outputs):
        # The nominal as scikit-learn computes it, independent of sigma.
        nominal[j] = rmse_nominal(y_true[:, j], y_pred[:, j], weight, float(mse[j]))
        sigma_j = output_column(sigma, j)
        if not has_noise(sigma_j):  # exact labels: no quadrature
            expected[j], variance[j] = nominal[j], 0.0
            continue
        expected[j], variance[j], _ = kernel(
            y_true[:, j], y_pred[:, j], sigma_j, weight
        )
        if variance[j] == 0.0:  # no label noise: exactly the classical metric
            expected[j] = nominal[j]
    return aggregate_outputs(
        "root_mean_squared_error",
        nominal,
        expected,
        variance,
        y_true.shape[0],
        multioutput,
        method,
        distributions=output_distributions(
            mse_distribution,
            y_true,
            y_pred,
            sigma,
            weight,
            nominal_mse=_squared(nominal),
            root=True,
        ),
    )


@with_test_set_sampling()
@supports_estimands("forward", "truth", "remeasurement")
@fill_doc(
    parameters=REGRESSION_PARAMETERS_DOC,
    method=METHOD_DOC,
    estimand=ESTIMAND_DOC,
    sigma_dof=SIGMA_DOF_DOC,
)
def expected_r2_score(
    y_true: Any,
    y_pred: Any,
    *,
    sigma: Any,
    sample_weight: Any = None,
    multioutput: Any = "uniform_average",
    method: str = "exact",
    estimand: str = "forward",
    sigma_dof: Any = None,
    force_finite: bool = True,
) -> NoisyScore | list[NoisyScore]:
    """Expected R² (coefficient of determination), and its variance, under label error.

    Each observed label is ``y_i ~ N(y_true_i, sigma_i²)``, and both sums of
    ``R² = 1 - X/Y`` are built from the noisy labels: ``X = Σ w_i (y_i -
    y_pred_i)²`` and ``Y = Σ w_i (y_i - ȳ_w)²`` around their weighted mean
    ``ȳ_w`` (``w_i = 1`` without weights). Noise therefore lowers R² even on
    average. The exact moments of ``ρ = X/Y`` come from the identities
    (user guide: :ref:`formula_r2`)::

        E[X/Y] = ∫₀^∞ E[X e^{-tY}] dt,      E[Z²/Y²] = ∫₀^∞ t E[Z² e^{-tY}] dt

    with ``Z = X - cY``: under the exponential tilt ``e^{-tY}`` the labels are
    again Gaussian (a diagonal-plus-rank-one covariance, by Sherman–Morrison),
    so both integrands are closed forms in ``O(M)`` (``O(1)`` per quadrature
    node for all but the noisiest samples). The variance is taken centred,
    ``Var[R²] = E[(ρ - c)²] - (E[ρ] - c)²`` with ``c`` close to ``E[ρ]``, and the
    integrals are computed by adaptive Gauss–Kronrod quadrature in ``log t``
    to close to double precision.

    **Existence.** Let ``r`` be the rank of the centred noise: the number of
    noisy labels if some label is exact, else ``M - 1``. ``Y`` can come
    arbitrarily close to 0 unless at least two exact labels (``sigma = 0``)
    have distinct values, and then ``E[R²]`` is finite only if ``r > 2`` and
    ``Var[R²]`` only if ``r > 4`` -- except where the ratio stays bounded:
    when every exact label and every prediction share one value ``v``,
    ``X`` vanishes with ``Y`` and all moments exist. Where the variance does
    not exist, ``variance`` is ``inf`` and a ``UserWarning`` explains why (for
    instance, five samples, all noisy); where the mean does not exist,
    ``expected`` is ``-inf`` too. Where the noise is so small that the
    second-order delta method is exact to double precision (``CV² <=
    1e-15``), its values are returned (the quadrature's integrands cancel
    there).

    With ``method="delta"``: the second-order delta method for the ratio
    ``X/Y``. Its variance is off by -2 % at ``M = 100`` and by -8 % to -18 % at
    ``M = 30``, and it fails at ``M = 10`` with a low signal (-56 %); it
    returns a finite number even where the variance does not exist.

    With ``estimand="truth"``: ``1 - SSÊ / SST̂``, with ``SSÊ = Σ w (d̃² - σ̂²)``
    and ``SST̂ = Σ w (ỹ - ỹ̄_w)² - Σ w σ̂² + Σ w² σ̂² / W`` unbiased for the sums
    of squares of the true values: the *fraction of explainable variance
    explained* (FEVE) of neural-response models fitted to repeated trials.
    It is consistent with bias ``O(1/M)``; its variance is the delta method
    for the ratio with the exact (co)variances of the two Gaussian quadratic
    forms, estimated from the data and floored at the estimate of their
    lower bound (``method="delta"``). Where ``SST̂ <= 0`` (the labels vary no
    more than their noise) R² against the true values is not estimable:
    ``expected`` and ``variance`` are NaN and a ``UserWarning`` says so. With
    ``estimand="remeasurement"``: the nominal R², exactly unbiased for the R²
    of a re-measurement, with the delta-method variance of the ratio.

    ``multioutput`` also takes ``"variance_weighted"`` and ``None`` (the
    uniform average), as scikit-learn's ``r2_score``. Variance-weighted, the
    average is ``1 - Σ_k X_k / Σ_k Y_k`` over the outputs with ``Y_k > 0``;
    under noise its weights are random, and the result is the distribution
    of that ratio, by the same exact quadrature over the independent outputs
    (its moments exist when the ranks summed over the outputs exceed 2 and 4).

    Parameters
    ----------
    {parameters}

    {method}

    {estimand}

    {sigma_dof}

    force_finite : bool, default=True
        scikit-learn's option: 1.0 for perfect predictions and 0.0 for a
        constant ``y_true`` instead of NaN and ``-inf``. Under noise ``Y`` is
        positive almost surely (two positively weighted samples, one noisy),
        so it changes only ``nominal``; with one positively weighted, noisy
        sample R² is 0 (``-inf`` with ``force_finite=False``). The truth and
        remeasurement estimands require ``True``.

    Returns
    -------
    score : NoisyScore or list of NoisyScore
        ``nominal`` is :func:`sklearn.metrics.r2_score` on ``y_true`` (a
        constant ``y_true`` is detected exactly, where scikit-learn's rounded
        weighted mean can leave a tiny total sum of squares and a huge
        negative score). When every label is exact, ``expected`` equals
        ``nominal`` and ``variance`` is 0. Fewer than two samples give NaN
        and an ``UndefinedMetricWarning``, as in scikit-learn.

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

    With five noisy samples the variance of R² is infinite, and a
    ``UserWarning`` says so ("The variance of R² does not exist (it is
    infinite): all 5 labels are noisy..."):

    >>> score = expected_r2_score(y_true[:5], y_pred[:5], sigma=0.5)
    >>> score.variance
    inf
    """
    check_estimand(estimand, metric="r2", supported=expected_r2_score.estimands)
    inputs = check_regression_inputs(
        y_true,
        y_pred,
        sigma=sigma,
        sample_weight=sample_weight,
        multioutput=multioutput,
        metric="r2",
    )
    method = _check_method(method)
    if not isinstance(force_finite, (bool, np.bool_)):
        raise TypeError(f"force_finite must be a bool; got {force_finite!r}.")
    if estimand != "forward":
        if not force_finite or (
            isinstance(inputs[4], str)
            and inputs[4] == "variance_weighted"
            and inputs[0].shape[1] > 1
        ):
            raise ValueError(
                f"estimand={estimand!r} is offered with force_finite=True and "
                "without multioutput='variance_weighted': its estimates of the "
                "sums of squares are not the sums scikit-learn's options refer to."
            )
        return estimand_score("r2", estimand, inputs, sigma_dof)
    check_regression_sigma_dof(sigma_dof, inputs[0].shape[0])
    return r2_forward(inputs, method=method, force_finite=bool(force_finite))
