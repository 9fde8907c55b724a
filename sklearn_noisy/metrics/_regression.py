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

from collections.abc import Callable
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
from ._r2_quadrature import r2_forward
from ._regression_definitions import (
    MEAN_ABSOLUTE_ERROR,
    MEAN_SQUARED_ERROR,
    ROOT_MEAN_SQUARED_ERROR,
    RegressionLoss,
)
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
    rescaled_squared_error_sums,
    squared_error_sums,
)
from ._regression_sampling import loss_terms, root_sampling
from ._rmse_quadrature import rmse_moments, rmse_moments_delta, rmse_nominal
from ._test_set_sampling import with_test_set_sampling

__all__ = [
    "expected_mean_absolute_error",
    "expected_mean_squared_error",
    "expected_root_mean_squared_error",
    "fraction_of_variance",
]


def _validated(
    definition: RegressionLoss,
    estimand: str,
    y_true: Any,
    y_pred: Any,
    sigma: Any,
    sample_weight: Any,
    multioutput: Any,
    *,
    ensure_finite: bool = True,
) -> tuple[np.ndarray, np.ndarray, Any, np.ndarray | None, Any]:
    """``estimand`` checked against the loss's, then the inputs validated."""
    supported = ("forward", *definition.estimands)
    check_estimand(
        estimand,
        metric=definition.name,
        supported=supported,
        reason=definition.truth_reason,
    )
    return check_regression_inputs(
        y_true,
        y_pred,
        sigma=sigma,
        sample_weight=sample_weight,
        multioutput=multioutput,
        multioutput_rules=definition.multioutput,
        ensure_finite=ensure_finite,
    )


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


@with_test_set_sampling(loss_terms(MEAN_SQUARED_ERROR))
@supports_estimands("forward", *MEAN_SQUARED_ERROR.estimands)
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
    ``d_i = y_true_i - y_pred_i`` the moments are exact::

        E[MSE]   = (1/M) Σ (d_i² + σ_i²)
        Var[MSE] = (1/M²) Σ (2σ_i⁴ + 4 d_i² σ_i²)

    Read more in the :ref:`User Guide <formula_mse>` (the truth and
    remeasurement estimands: :ref:`formula_truth`).

    Parameters
    ----------
    {parameters}

    {estimand}

    {sigma_dof}

    Returns
    -------
    score : NoisyScore or list of NoisyScore
        ``nominal`` is :func:`sklearn.metrics.mean_squared_error` on ``y_true``;
        ``method`` is ``"exact"`` for every estimand.

    See Also
    --------
    sklearn.metrics.mean_squared_error : The metric on exact labels.
    expected_root_mean_squared_error : The same for RMSE.

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_mean_squared_error
    >>> y_true = [3.0, -0.5, 2.0, 7.0]
    >>> y_pred = [2.5, 0.0, 2.0, 8.0]
    >>> expected_mean_squared_error(y_true, y_pred, sigma=0.5)
    NoisyScore(metric='mean_squared_error', expected=0.625, std=0.3536, \
    nominal=0.375, n_samples=4, method='exact')
    """
    # The kernels' sums are NaN/inf whenever an input is, so the inputs are
    # scanned for NaN/inf only when a result is not finite.
    inputs = _validated(
        MEAN_SQUARED_ERROR, estimand, y_true, y_pred, sigma, sample_weight,
        multioutput, ensure_finite=False,
    )  # fmt: skip
    y_true, y_pred, sigma, weight, multioutput = inputs
    if estimand != "forward":
        return estimand_score(
            MEAN_SQUARED_ERROR,
            estimand,
            inputs,
            sigma_dof,
            check=lambda results: _check_finite_results(
                MEAN_SQUARED_ERROR.name, (y_true, y_pred, sigma), results
            ),
        )
    check_regression_sigma_dof(sigma_dof, y_true.shape[0])
    with np.errstate(invalid="ignore", over="ignore"):  # checked just below
        moments = squared_error_sums(y_true, y_pred, sigma, weight).forward()
        if not all(np.isfinite(v).all() for v in moments):
            moments = rescaled_squared_error_sums(y_true, y_pred, sigma, weight)
            moments = moments.forward()
    nominal, expected, variance = moments
    _check_finite_results(
        MEAN_SQUARED_ERROR.name, (y_true, y_pred, sigma), (nominal, expected, variance)
    )
    return aggregate_outputs(
        MEAN_SQUARED_ERROR.name,
        nominal,
        expected,
        variance,
        y_true.shape[0],
        multioutput,
        distributions=output_distributions(
            mse_distribution, y_true, y_pred, sigma, weight, nominal_mse=nominal
        ),
    )


@with_test_set_sampling(loss_terms(MEAN_ABSOLUTE_ERROR))
@supports_estimands("forward", *MEAN_ABSOLUTE_ERROR.estimands)
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

    Each ``|y_i - y_pred_i|`` is folded normal; its exact moments are computed in
    a form without cancellation, exact for ``σ_i = 0`` and for very large
    ``|d_i|/σ_i``. Read more in the :ref:`User Guide <formula_mae>`.

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

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_mean_absolute_error
    >>> score = expected_mean_absolute_error([0.0, 1.0], [0.0, 0.0], sigma=1.0)
    >>> round(score.expected, 6), round(score.variance, 6), score.nominal
    (0.982258, 0.250588, 0.5)
    """
    inputs = _validated(
        MEAN_ABSOLUTE_ERROR, estimand, y_true, y_pred, sigma, sample_weight,
        multioutput,
    )  # fmt: skip
    if estimand != "forward":
        return estimand_score(MEAN_ABSOLUTE_ERROR, estimand, inputs, sigma_dof)
    check_regression_sigma_dof(sigma_dof, inputs[0].shape[0])
    y_true, y_pred, sigma, weight, multioutput = inputs
    nominal, expected, variance = accumulate(
        absolute_error_kernel, y_true, y_pred, sigma, weight, parallel=True
    )
    _check_finite_results(
        MEAN_ABSOLUTE_ERROR.name, (y_true, y_pred, sigma), (nominal, expected, variance)
    )
    return aggregate_outputs(
        MEAN_ABSOLUTE_ERROR.name,
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
@supports_estimands("forward", *ROOT_MEAN_SQUARED_ERROR.estimands)
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

    Each observed label is ``y_i ~ N(y_true_i, sigma_i²)``. The exact moments of
    ``RMSE = √MSE`` follow from one integral, computed by quadrature to close to
    double precision; ``method="delta"`` gives the delta-method approximation.
    Read more in the :ref:`User Guide <formula_rmse>`.

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
        ``y_true``. Multiple outputs are averaged after taking the root per
        output, as in scikit-learn.

    See Also
    --------
    sklearn.metrics.root_mean_squared_error : The metric on exact labels.
    expected_mean_squared_error : The same for MSE (closed form).

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_root_mean_squared_error
    >>> y_true = [3.0, -0.5, 2.0, 7.0]
    >>> y_pred = [2.5, 0.0, 2.0, 8.0]
    >>> expected_root_mean_squared_error(y_true, y_pred, sigma=0.5)
    NoisyScore(metric='root_mean_squared_error', expected=0.758283, std=0.2236, \
    nominal=0.612372, n_samples=4, method='exact')
    """
    inputs = _validated(
        ROOT_MEAN_SQUARED_ERROR, estimand, y_true, y_pred, sigma, sample_weight,
        multioutput,
    )  # fmt: skip
    method = _check_method(method)
    if estimand != "forward":
        return estimand_score(ROOT_MEAN_SQUARED_ERROR, estimand, inputs, sigma_dof)
    check_regression_sigma_dof(sigma_dof, inputs[0].shape[0])
    y_true, y_pred, sigma, weight, multioutput = inputs
    kernel = rmse_moments if method == "exact" else rmse_moments_delta
    n_outputs = y_true.shape[1]
    nominal, expected, variance = np.empty((3, n_outputs))
    with np.errstate(over="ignore", under="ignore"):  # rmse_nominal rescales
        sums = squared_error_sums(y_true, y_pred, 0.0, weight)
        mse = sums.d2 / sums.weight
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
        ROOT_MEAN_SQUARED_ERROR.name,
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


def fraction_of_variance(definition: RegressionLoss) -> Callable[..., Any]:
    """The public function of a fraction of explained variation, ``1 - X/Y``.

    R² and the explained variance differ only in ``X``
    (``definition.centred``), so one function body serves both; its name and
    docstring are the definition's (``function_name``, ``doc``). The registry
    builds it from the record's definition.
    """

    def score(
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
        inputs = _validated(
            definition, estimand, y_true, y_pred, sigma, sample_weight, multioutput
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
                    "sums of squares are not the sums scikit-learn's options refer "
                    "to."
                )
            return estimand_score(definition, estimand, inputs, sigma_dof)
        check_regression_sigma_dof(sigma_dof, inputs[0].shape[0])
        return r2_forward(
            definition, inputs, method=method, force_finite=bool(force_finite)
        )

    score.__name__ = score.__qualname__ = definition.function_name
    score.__module__ = "sklearn_noisy.metrics"  # exported there, pickled from there
    score.__doc__ = definition.doc
    score = fill_doc(
        parameters=REGRESSION_PARAMETERS_DOC,
        method=METHOD_DOC,
        estimand=ESTIMAND_DOC,
        sigma_dof=SIGMA_DOF_DOC,
    )(score)
    score = supports_estimands("forward", *definition.estimands)(score)
    return with_test_set_sampling()(score)
