"""The truth and remeasurement estimands of the regression metrics, and their results.

:func:`estimand_arrays` runs the kernel of
:mod:`~sklearn_noisy.metrics._truth_regression` (MSE, RMSE, R²) or the
plug-in remeasurement variance of the MAE, warns where the estimate is
degenerate, and returns the per-output arrays that
:mod:`~sklearn_noisy.metrics._regression` combines as ``multioutput`` says
(user guide: :ref:`estimands`, :ref:`formula_truth`), with
:func:`aggregate_outputs`, which every regression metric uses, and the
docstring blocks the metrics share.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._noisy_score import NoisyScore
from ..utils._noise import check_sigma_dof
from ..utils._warnings import warn
from ._regression_definitions import RegressionLoss

__all__ = [
    "ESTIMAND_DOC",
    "MAE_REMEASUREMENT_DOC",
    "METHOD_DOC",
    "REGRESSION_PARAMETERS_DOC",
    "SIGMA_DOF_DOC",
    "aggregate_outputs",
    "check_regression_sigma_dof",
    "estimand_arrays",
    "estimand_score",
]


def check_regression_sigma_dof(sigma_dof: Any, n_samples: int) -> Any:
    """``sigma_dof`` validated, a per-sample array as a column ``(n, 1)``."""
    dof = check_sigma_dof(sigma_dof, n_samples)
    if isinstance(dof, np.ndarray):
        dof = dof[:, None]
    return dof


def _warn_flags(message: str, flag: np.ndarray) -> None:
    """Say where a truth estimate is degenerate (``message`` of the definition)."""
    if not flag.any():
        return
    outputs = "" if flag.size == 1 else f" (outputs {np.flatnonzero(flag).tolist()})"
    warn(message.format(outputs=outputs), UserWarning)


def estimand_arrays(
    definition: RegressionLoss,
    estimand: str,
    y_true: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    sigma_dof: Any,
    weight: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """Per-output ``(nominal, estimate, variance, method)`` of a truth or remeasurement.

    Inputs validated as for the kernels: 2-D ``y_true`` and ``y_pred``, ``sigma``
    a float or columns, ``sigma_dof`` from :func:`check_regression_sigma_dof`.
    Warns (``UserWarning``, the definition's ``degenerate`` message) where a
    truth estimate is degenerate (the RMSE clipped at 0, R² not estimable).
    """
    kernel, method = definition.estimands[estimand]
    result = kernel(y_true, y_pred, sigma, sigma_dof, weight)
    if estimand == "truth":
        _warn_flags(definition.degenerate, result.flag)
        _warn_beyond_range(definition, result.estimate, result.variance)
    return result.nominal, result.estimate, result.variance, method


#: A truth estimate this many SDs outside the metric's range is not chance.
_BEYOND_RANGE_SDS = 3.0


def _warn_beyond_range(
    definition: RegressionLoss, estimate: np.ndarray, variance: np.ndarray
) -> None:
    """Warn where a truth estimate lies several SDs outside the metric's range.

    Chance puts an unbiased estimate a little outside the range when the
    metric is near its bound; several SDs mean the model of the noise is off.
    """
    low, high = definition.range
    with np.errstate(invalid="ignore", divide="ignore"):
        excess = np.fmax(low - estimate, estimate - high) / np.sqrt(variance)
    far = np.asarray(excess > _BEYOND_RANGE_SDS)
    if not far.any():
        return
    worst = float(np.nanmax(np.where(far, excess, np.nan)))
    outputs = "" if far.size == 1 else f" (outputs {np.flatnonzero(far).tolist()})"
    warn(
        f"The {definition.name} against the true values is estimated {worst:.3g} "
        f"SD outside its range [{low:g}, {high:g}]{outputs}: sigma looks "
        "overstated, or the predictions reproduce the noisy labels (features that "
        "contain the label, or its readings)."
    )


def aggregate_outputs(
    metric: str,
    nominal: np.ndarray,
    expected: np.ndarray,
    variance: np.ndarray,
    n_samples: int,
    multioutput: Any,
    method: str = "exact",
    estimand: str = "forward",
    distributions: list[Any] | None = None,
) -> NoisyScore | list[NoisyScore]:
    """Combine per-output results as scikit-learn's ``multioutput`` does.

    The outputs' label errors are taken as independent, so a weighted average
    ``Σ a_k m_k / Σ a_k`` of the outputs has variance ``Σ a_k² V_k / (Σ a_k)²``.
    ``distributions``: the exact distribution of each output's metric, kept
    for one output or ``"raw_values"`` (user guide: exact_intervals).
    """
    dists = distributions or [None] * len(expected)
    if isinstance(multioutput, str) and multioutput == "raw_values":
        return [
            NoisyScore(metric, e, v, m, n_samples, method, estimand, dist)
            for m, e, v, dist in zip(nominal, expected, variance, dists, strict=True)
        ]
    if isinstance(multioutput, str):  # "uniform_average"
        weights = np.ones_like(expected)
    else:
        weights = multioutput
    total = weights.sum()  # non-zero: checked by check_regression_inputs
    return NoisyScore(
        metric,
        expected=float(weights @ expected / total),
        variance=float((weights * weights) @ variance / (total * total)),
        nominal=float(weights @ nominal / total),
        n_samples=n_samples,
        method=method,
        estimand=estimand,
        distribution=dists[0] if len(dists) == 1 else None,
    )


def estimand_score(
    definition: RegressionLoss,
    estimand: str,
    inputs: tuple[np.ndarray, np.ndarray, Any, np.ndarray | None, Any],
    sigma_dof: Any,
    check: Callable[[tuple[np.ndarray, ...]], None] | None = None,
) -> NoisyScore | list[NoisyScore]:
    """The truth or remeasurement result of a loss on validated ``inputs``.

    ``inputs`` as :func:`check_regression_inputs` returns them. ``check``, if
    given, receives the per-output ``(nominal, estimate, variance)`` (for the
    deferred NaN/inf check of the inputs).
    """
    y_true, y_pred, sigma, weight, multioutput = inputs
    dof = check_regression_sigma_dof(sigma_dof, y_true.shape[0])
    with np.errstate(invalid="ignore", over="ignore"):  # the caller's check
        nominal, expected, variance, method = estimand_arrays(
            definition, estimand, y_true, y_pred, sigma, dof, weight
        )
    if check is not None:
        check((nominal, expected, variance))
    return aggregate_outputs(
        definition.name,
        nominal,
        expected,
        variance,
        y_true.shape[0],
        multioutput,
        method,
        estimand,
    )


#: The parameters shared by the regression metrics, for :func:`fill_doc`.
REGRESSION_PARAMETERS_DOC = """\
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
        ``Σ w_i² Var[ℓ_i] / (Σ w_i)²``. Negative weights are accepted at
        ``sigma=0`` only, as scikit-learn accepts them.

    multioutput : {"raw_values", "uniform_average"} or array-like of shape \
(n_outputs,), default="uniform_average"
        How to combine outputs, as in scikit-learn (R² also takes
        ``"variance_weighted"`` and None). ``"raw_values"`` returns a list
        with one :class:`~sklearn_noisy.NoisyScore` per output. Averages
        treat the label errors of different outputs as independent."""


#: The ``method`` parameter of RMSE and R², for :func:`fill_doc`.
METHOD_DOC = """\
    method : {"exact", "delta"}, default="exact"
        ``"exact"``: the exact value by one-dimensional quadrature (below).
        ``"delta"``: the delta-method (Taylor) approximation, reported with
        ``method="delta"``; it is cheaper but inaccurate for small samples or
        strongly unequal ``sigma``. For ``estimand="forward"`` only: the truth
        and remeasurement estimates always use the delta method."""


#: The ``sigma_dof`` parameter of the regression metrics, for ``fill_doc``.
SIGMA_DOF_DOC = """\
    sigma_dof : float or array-like of shape (n_samples,), default=None
        Degrees of freedom of ``sigma`` when it was estimated from the
        readings themselves (``n_i - 1`` for the standard error of the mean
        of ``n_i`` readings; ``inf`` for a sample whose σ is known), as
        :func:`~sklearn_noisy.preprocessing.summarize_repeats` returns them.
        ``None``: σ is known exactly. It only affects
        ``estimand="truth"`` and ``"remeasurement"``, whose variances then
        include σ's own uncertainty (user guide: :ref:`estimands`); the
        forward moments take ``sigma`` as given."""

#: The ``estimand`` parameter of MSE, RMSE and R², for ``fill_doc``.
ESTIMAND_DOC = """\
    estimand : {"forward", "truth", "remeasurement"}, default="forward"
        Which question ``expected`` answers (user guide: :ref:`estimands`).
        ``"forward"``: ``y_true`` is taken as exact and the result is the
        paper's distribution of the metric over labels measured around it,
        as above; right for exact references (a reference standard, a
        simulation's ground truth), not what a re-measurement of noisy labels
        shows. ``"truth"``: ``y_true`` holds noisy measurements of unknown
        true values and ``expected`` estimates the metric against those
        (user guide: :ref:`formula_truth`). ``"remeasurement"``:
        ``expected`` is the nominal metric, exactly unbiased for the metric
        expected when the samples are measured again the same way, and
        ``variance`` estimates its spread over such re-measurements. The
        variances of both are floored at an estimate of their lower bound
        (the part that does not depend on the unknown residuals, ``2σ⁴``
        per sample for the MSE), so they are never negative and give a
        zero-width interval only when every label is exact."""

#: What the MAE's remeasurement estimate is, for its docstring.
MAE_REMEASUREMENT_DOC = """\
    estimand : {"forward", "remeasurement"}, default="forward"
        ``"forward"``: the moments above, ``y_true`` taken as exact.
        ``"remeasurement"``: ``y_true`` holds noisy measurements and
        ``expected`` is the nominal MAE, exactly unbiased for the MAE expected
        when the samples are measured again the same way. Its spread per
        sample is the folded-normal variance ``σ_i² h(t_i)``,
        ``h(t) = 1 - 4 g(t)(t + g(t))``, at the *true* residual
        ``t_i = |d_i|/σ_i``; it is estimated from the observed residual (and
        σ̂) by ``σ̂_i² (h(t̃_i) - h''(t̃_i)/2)``, the plug-in with its
        second-order bias removed: consistent, reported as
        ``method="delta"``. Per sample the SD it implies is within +11 % (at
        ``d = 0``) and -3 % of the true one (the plain plug-in: +25 %); the
        sum is floored at ``Σ w² σ̂² (1 - 2/π) / W²``, the estimate of its
        lower bound. In
        the end-to-end simulation of the user guide's verification page
        (M = 300, 3-8 readings, Ridge out of fold) the MAE's bias was below
        0.03 of its SD and the mean reported SD within 15 % of the actual
        spread. ``"truth"`` is not offered: no unbiased estimator of ``|d|``
        exists (``E|e|`` is analytic in ``d``, ``|d|`` is not)."""
