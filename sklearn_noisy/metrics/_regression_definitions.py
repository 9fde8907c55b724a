"""The regression losses, each defined once, as the engines read them.

No engine knows a loss by name: each reads its :class:`RegressionLoss`,
which the registry record points at (``MetricInfo.definition``). The sums are
taken by the accumulators of :mod:`~sklearn_noisy.metrics._regression_kernels`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..utils._validation import MultioutputRules
from ._paired_kernels import (
    absolute_error_difference,
    r2_difference_existence,
    squared_error_difference,
)
from ._percentage_kernels import ZERO_MARGIN, relative_error_terms
from ._regression_kernels import T_MAX, linear_loss_of_negative
from ._truth_regression import (
    mae_remeasurement,
    mse_remeasurement,
    mse_truth,
    r2_remeasurement,
    r2_truth,
    rmse_remeasurement,
    rmse_truth,
)

__all__ = [
    "EXPLAINED_VARIANCE",
    "MEAN_ABSOLUTE_ERROR",
    "MEAN_ABSOLUTE_PERCENTAGE_ERROR",
    "MEAN_SQUARED_ERROR",
    "MEAN_SQUARED_PERCENTAGE_ERROR",
    "R2",
    "ROOT_MEAN_SQUARED_ERROR",
    "ROOT_MEAN_SQUARED_PERCENTAGE_ERROR",
    "RegressionLoss",
]

#: The ``multioutput`` rules of the means of per-sample losses (scikit-learn's).
_MEAN_RULES = MultioutputRules(one_output_weights=False)

#: ``terms(y_true, y_pred, sigma) -> h``, all of shape ``(n_samples, n_outputs)``.
Terms = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class RegressionLoss:
    """One regression loss, as the engines read it.

    Parameters
    ----------
    name : str
        The registry name (``NoisyScore.metric``).
    terms : mapping of str to callable
        Per estimand, ``terms(y_true, y_pred, sigma) -> h``: the per-sample
        terms whose weighted mean is the estimate (user guide:
        :ref:`error_budget`). Absent for a loss that is not such a mean.
    estimands : mapping of str to (callable, str)
        Per non-forward estimand, the kernel ``(y, y_pred, sigma, sigma_dof,
        weight) -> RegressionEstimate`` of
        :mod:`~sklearn_noisy.metrics._truth_regression` and the ``method`` its
        result reports.
    degenerate : str
        The warning where a truth estimate is flagged degenerate, with
        ``{outputs}`` where the flagged outputs go ("" if none can be).
    streamed_difference : callable or None
        ``(sse_a, sse_b, sst, w_total) -> per-output metric(A) − metric(B)``
        from one draw's sums of squared errors of both models and total sum of
        squares (the streamed paired Monte Carlo); None: not streamed.
    multioutput : MultioutputRules
        scikit-learn's ``multioutput`` rules of the metric.
    paired : mapping of str to callable
        Per estimand of a paired difference, ``difference(y, a, b, sigma) ->
        (expected, nominal, variance)`` per sample, summed over the outputs,
        of ``loss(A) − loss(B)`` on the same labels
        (:mod:`~sklearn_noisy.metrics._paired_kernels`); absent: Monte Carlo.
    paired_existence : callable or None
        ``(y, a, b, sigma, weight, output_weights) -> existence`` where the
        moments of a paired difference may not exist
        (:func:`~._paired_kernels.r2_difference_existence`); None: they do.
    range : tuple of float
        The values the metric can take (intervals are clipped to them).
    truth_reason : str or None
        Why the loss has no truth estimand, where it has none and the reason
        is its own (the message then ends "because <truth_reason>").
    centred : bool
        For a fraction of explained variation ``1 - X/Y`` (R²'s engines):
        whether ``X`` sums the squared residuals centred at their weighted mean
        (explained variance) rather than the residuals (R²).
    label : str
        How warnings name the metric (default: its name, in words).
    function_name, doc : str
        The name and docstring of the public function the registry builds
        from the definition (:func:`~._regression.fraction_of_variance`), for
        the fractions of explained variation; "" for the others, whose
        functions are written out.
    """

    name: str
    terms: Mapping[str, Terms] = field(default_factory=dict)
    estimands: Mapping[str, tuple[Callable[..., Any], str]] = field(
        default_factory=dict
    )
    degenerate: str = ""
    streamed_difference: Callable[..., np.ndarray] | None = None
    multioutput: MultioutputRules = _MEAN_RULES
    paired: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    paired_existence: Callable[..., Any] | None = None
    truth_reason: str | None = None
    range: tuple[float, float] = (0.0, math.inf)
    centred: bool = False
    label: str = ""
    function_name: str = ""
    doc: str = ""

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", self.name.replace("_", " "))


def _mean_absolute(y: np.ndarray, y_pred: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``E|d + e| = |d| + 2σ g(|d|/σ)`` with the kernel's linear-loss function."""
    h = np.abs(y - y_pred)
    with np.errstate(divide="ignore", invalid="ignore"):
        u = np.fmax(-h / s, -T_MAX)  # σ = 0: −inf or NaN, then −40: g = 0
    return h + 2.0 * s * linear_loss_of_negative(u, out=np.empty(u.shape))


MEAN_SQUARED_ERROR = RegressionLoss(
    "mean_squared_error",
    terms={
        "forward": lambda y, p, s: np.square(y - p) + np.square(s),
        "truth": lambda y, p, s: np.square(y - p) - np.square(s),
        "remeasurement": lambda y, p, s: np.square(y - p),
    },
    estimands={
        "truth": (mse_truth, "exact"),
        "remeasurement": (mse_remeasurement, "exact"),
    },
    # Against the true values too: the noise adds the same σ² to both models'
    # expected squared errors, and σ⁴ cancels from the variance.
    paired={
        "forward": squared_error_difference,
        "truth": squared_error_difference,
    },
)

ROOT_MEAN_SQUARED_ERROR = RegressionLoss(
    "root_mean_squared_error",
    estimands={
        "truth": (rmse_truth, "delta"),
        "remeasurement": (rmse_remeasurement, "delta"),
    },
    degenerate=(
        "The truth estimate of the MSE is <= 0{outputs}: the label noise "
        "accounts for all of the observed error, so the RMSE against the true "
        "values is reported clipped at 0; its interval's upper end is the "
        "informative number."
    ),
    streamed_difference=lambda sse_a, sse_b, sst, w: (
        np.sqrt(sse_a / w) - np.sqrt(sse_b / w)
    ),
    multioutput=MultioutputRules(one_output_weights=True),
)

MEAN_ABSOLUTE_ERROR = RegressionLoss(
    "mean_absolute_error",
    terms={
        "forward": _mean_absolute,
        "remeasurement": lambda y, p, s: np.abs(y - p),
    },
    estimands={"remeasurement": (mae_remeasurement, "delta")},
    paired={"forward": absolute_error_difference},
    truth_reason="E|e| is analytic in d but |d| has a kink",
)

R2 = RegressionLoss(
    "r2",
    estimands={
        "truth": (r2_truth, "delta"),
        "remeasurement": (r2_remeasurement, "delta"),
    },
    degenerate=(
        "R² against the true values is not estimable{outputs}: the estimated "
        "total sum of squares of the true values is <= 0 (the labels vary no "
        "more than their noise), so the estimate and its variance are NaN."
    ),
    # R²_A − R²_B = (SSE_B − SSE_A) / SST, SST shared
    streamed_difference=lambda sse_a, sse_b, sst, w: (sse_b - sse_a) / sst,
    multioutput=MultioutputRules(variance_weighted=True, one_output_weights=False),
    paired_existence=r2_difference_existence,
    range=(-math.inf, 1.0),
    label="R²",
    function_name="expected_r2_score",
    doc="""\
Expected R² (coefficient of determination), and its variance, under label error.

    Each observed label is ``y_i ~ N(y_true_i, sigma_i²)``, and both sums of
    ``R² = 1 - X/Y`` are built from the noisy labels, so noise lowers R² even on
    average. The moments of ``X/Y`` are computed exactly by quadrature (or by the
    delta method); where they do not exist (too few noisy labels) the result is
    infinite, with a ``UserWarning``. Read more in the
    :ref:`User Guide <formula_r2>`.

    Parameters
    ----------
    {parameters}

    {method}

    {estimand}

    {sigma_dof}

    force_finite : bool, default=True
        scikit-learn's option: 1.0 for perfect predictions and 0.0 for a
        constant ``y_true`` instead of NaN and ``-inf``. The truth and
        remeasurement estimands require ``True``.

    Returns
    -------
    score : NoisyScore or list of NoisyScore
        ``nominal`` is :func:`sklearn.metrics.r2_score` on ``y_true``. Fewer than
        two samples give NaN and an ``UndefinedMetricWarning``, as in
        scikit-learn.

    See Also
    --------
    sklearn.metrics.r2_score : The metric on exact labels.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_noisy.metrics import expected_r2_score
    >>> y_true = np.array([3.0, -0.5, 2.0, 7.0, 4.2, 1.1, 5.5, 0.3])
    >>> y_pred = np.array([2.5, 0.0, 2.0, 8.0, 4.0, 1.5, 5.0, 0.0])
    >>> expected_r2_score(y_true, y_pred, sigma=0.5)
    NoisyScore(metric='r2', expected=0.916235, std=0.03933, nominal=0.957138, \
    n_samples=8, method='exact')
    """,
)

EXPLAINED_VARIANCE = RegressionLoss(
    "explained_variance",
    estimands={
        "truth": (functools.partial(r2_truth, centred=True), "delta"),
        "remeasurement": (functools.partial(r2_remeasurement, centred=True), "delta"),
    },
    degenerate=(
        "The explained variance against the true values is not estimable"
        "{outputs}: the estimated variance of the true values is <= 0 (the "
        "labels vary no more than their noise), so the estimate and its "
        "variance are NaN."
    ),
    multioutput=R2.multioutput,
    range=(-math.inf, 1.0),
    centred=True,
    function_name="expected_explained_variance_score",
    doc="""\
Expected explained variance score, and its variance, under label error.

    Each observed label is ``y_i ~ N(y_true_i, sigma_i²)``. The explained
    variance ``1 - X/Y`` is R² with the residuals centred at their weighted
    mean: ``X = Σ w (d - d̄_w)²``, ``Y = Σ w (y - ȳ_w)²``, both of the noisy
    labels. The moments of ``X/Y`` are computed exactly by quadrature (or by
    the delta method); where they do not exist (too few noisy labels) the
    result is infinite, with a ``UserWarning``. Read more in the
    :ref:`User Guide <formula_explained_variance>`.

    Parameters
    ----------
    {parameters}

    {method}

    {estimand}

    {sigma_dof}

    force_finite : bool, default=True
        scikit-learn's option: 1.0 for perfect predictions (up to a constant)
        and 0.0 for a constant ``y_true`` instead of NaN and ``-inf``. The
        truth and remeasurement estimands require ``True``.

    Returns
    -------
    score : NoisyScore or list of NoisyScore
        ``nominal`` is :func:`sklearn.metrics.explained_variance_score` on
        ``y_true``.

    See Also
    --------
    sklearn.metrics.explained_variance_score : The metric on exact labels.
    expected_r2_score : The same without centring the residuals.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_noisy.metrics import expected_explained_variance_score
    >>> y_true = np.array([3.0, -0.5, 2.0, 7.0, 4.2, 1.1, 5.5, 0.3])
    >>> y_pred = np.array([2.5, 0.0, 2.0, 8.0, 4.0, 1.5, 5.0, 0.0])
    >>> expected_explained_variance_score(y_true, y_pred, sigma=0.5)
    NoisyScore(metric='explained_variance', expected=0.921819, std=0.0382, \
    nominal=0.957559, n_samples=8, method='exact')
    """,
)


def _relative(square: bool) -> Terms:
    """The forward terms ``E[g_i]`` of the relative error ``g`` (or ``g²``).

    Given ``|Y_i| ≥ margin·σ_i`` (the functions' ``zero_margin``). The
    nominal terms, bit for bit, when every label is exact.
    """

    def terms(
        y: np.ndarray, y_pred: np.ndarray, s: np.ndarray, margin: float = ZERO_MARGIN
    ) -> np.ndarray:
        center, mean, _, nominal_terms = relative_error_terms(
            y, y_pred, s, square, margin
        )
        return nominal_terms if not np.any(s > 0.0) else center + mean

    return terms


#: The percentage errors take output weights for a single output.
_PERCENTAGE_RULES = MultioutputRules()
#: Why the percentage errors have no truth estimand (user guide: estimands).
_PERCENTAGE_TRUTH = (
    "no unbiased estimator of E[1/|Y|]-type ratios exists for a Gaussian label in "
    "the denominator"
)

MEAN_ABSOLUTE_PERCENTAGE_ERROR = RegressionLoss(
    "mean_absolute_percentage_error",
    terms={"forward": _relative(square=False)},
    multioutput=_PERCENTAGE_RULES,
    truth_reason=_PERCENTAGE_TRUTH,
)

MEAN_SQUARED_PERCENTAGE_ERROR = RegressionLoss(
    "mean_squared_percentage_error",
    terms={"forward": _relative(square=True)},
    multioutput=_PERCENTAGE_RULES,
    truth_reason=_PERCENTAGE_TRUTH,
)

ROOT_MEAN_SQUARED_PERCENTAGE_ERROR = RegressionLoss(
    "root_mean_squared_percentage_error",
    multioutput=_PERCENTAGE_RULES,
    truth_reason=_PERCENTAGE_TRUTH,
)
