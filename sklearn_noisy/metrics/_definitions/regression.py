"""The regression losses, each defined once, as the engines read them.

No engine knows a loss by name: each reads its :class:`RegressionLoss`, which
the registry record points at (``MetricInfo.definition``).
"""

from __future__ import annotations

import functools
import math
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...utils._validation import MultioutputRules
from .._engines.paired import (
    absolute_error_difference,
    r2_difference_existence,
    squared_error_difference,
)
from .._engines.regression.estimands import (
    mae_remeasurement,
    mse_remeasurement,
    mse_truth,
    r2_remeasurement,
    r2_truth,
    rmse_remeasurement,
    rmse_truth,
)
from .._engines.regression.forward_sigma import (
    folded_sigma_hat,
    mae_forward,
    mse_forward,
    rmse_forward,
)
from .._engines.regression.relative_error import ZERO_MARGIN, relative_error_terms
from .._engines.regression.sums import folded_moments, squared_terms

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
    "parameters_doc",
]

#: The ``multioutput`` rules of the means of per-sample losses (scikit-learn's).
_MEAN_RULES = MultioutputRules(one_output_weights=False)
#: The options of the losses that model batch offsets shared by labels (their
#: engines read the noise's ``shared`` part, user guide: :ref:`shared_offsets`).
_OFFSET_OPTIONS = ("sigma_dof", "groups", "sigma_shared", "sigma_shared_dof")
#: ``terms(y_true, y_pred, sigma) -> h``, all of shape ``(n_samples, n_outputs)``.
Terms = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class RegressionLoss:
    """One regression loss, as the engines read it (one comment per field)."""

    #: The registry name (``NoisyScore.metric``).
    name: str
    #: The power of the target's unit in the metric (MSE 2, RMSE and MAE 1;
    #: R², explained variance and the percentage errors 0).
    unit_power: int
    #: Per estimand, ``terms(y_true, y_pred, sigma) -> h``, whose weighted mean
    #: is the estimate (:ref:`error_budget`); empty if the loss is no such mean.
    terms: Mapping[str, Terms] = field(default_factory=dict)
    #: Per estimand, the sign of σ² in the terms ``d² ± σ²`` that the chunked
    #: accumulator takes with its sums (the MSE); empty: the terms apart.
    fused: Mapping[str, float] = field(default_factory=dict)
    #: Per other estimand, the kernel ``(y, y_pred, sigma, sigma_dof, weight) ->
    #: RegressionEstimate`` and the ``method`` its result reports.
    estimands: Mapping[str, tuple[Callable[..., Any], str]] = field(
        default_factory=dict
    )
    #: The forward kernel with σ estimated (``sigma_dof``), as those, and its
    #: ``method``; None: σ̂ is taken as σ (user guide: :ref:`sigma_dof`).
    sigma_hat: tuple[Callable[..., Any], str] | None = None
    #: The warning where a truth estimate is degenerate, with ``{outputs}``.
    degenerate: str = ""
    #: ``(sse_a, sse_b, sst, w_total) -> metric(A) − metric(B)`` per output
    #: (the streamed paired Monte Carlo); None: not streamed.
    streamed_difference: Callable[..., np.ndarray] | None = None
    #: scikit-learn's ``multioutput`` rules of the metric.
    multioutput: MultioutputRules = _MEAN_RULES
    #: Per estimand, ``difference(y, a, b, sigma)`` per sample of a paired
    #: difference; absent: Monte Carlo.
    paired: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    #: Where the moments of a paired difference may not exist; None: they do.
    paired_existence: Callable[..., Any] | None = None
    #: Why the loss has no truth estimand, where the reason is its own.
    truth_reason: str | None = None
    #: The values the metric can take (intervals are clipped to them).
    range: tuple[float, float] = (0.0, math.inf)
    #: ``1 - X/Y`` with ``X`` of the residuals centred (explained variance).
    centred: bool = False
    #: Whether ``y`` and ``ŷ`` are shifted by ``y``'s mean before the sums: the
    #: loss ignores a common offset, and its sums of squares of ``y`` would lose
    #: to it the digits float64 holds (R², explained variance).
    centre_inputs: bool = False
    #: How warnings name the metric (default: its name, in words).
    label: str = ""
    #: The public function's name (default ``expected_<name>``) and docstring.
    function_name: str = ""
    doc: str = ""
    #: The public function's own keywords besides ``estimand``, in order.
    options: tuple[str, ...] = ("sigma_dof",)

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", self.name.replace("_", " "))
        if not self.function_name:
            object.__setattr__(self, "function_name", f"expected_{self.name}")


_PARAMETERS_DOC = """\
    y_true : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Best-known label values: the mean of repeated measurements, or the
        single measured value.

    y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Estimated target values.

    sigma : float or array-like of shape (n_samples,) or (n_samples, n_outputs)
        Standard error of each label, ``sigma_i >= 0``; ``0`` means the label
        is exact. A scalar applies to every sample. Required, except with
        ``noise="poisson"`` where the metric offers it.

    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights: the metric is ``Σ w_i ℓ_i / Σ w_i``, its variance
        ``Σ w_i² Var[ℓ_i] / (Σ w_i)²``. Negative weights only at ``sigma=0``.

    multioutput : {"raw_values", "uniform_average"} or array-like of shape \
(n_outputs,), default="uniform_average"
        How to combine outputs, as in scikit-learn (R² also takes
        ``"variance_weighted"`` and None). ``"raw_values"`` returns a list
        with one :class:`~sklearn_noisy.NoisyScore` per output."""

_OPTION_DOCS = {
    "noise": """\
    noise : {"gaussian", "poisson"}, default="gaussian"
        The label noise. ``"gaussian"``: errors of standard error ``sigma``.
        ``"poisson"``: count labels, ``y_true_i ~ Poisson(λ_i)``, whose
        variance is estimated from the count itself (no ``sigma``); the
        labels must be non-negative whole numbers, except for
        ``estimand="forward"``, where ``y_true`` holds the exact rates
        (user guide: :ref:`poisson_noise`).""",
    "method": """\
    method : {"exact", "delta"}, default="exact"
        ``"exact"``: one-dimensional quadrature. ``"delta"``: the cheaper
        delta-method approximation, inaccurate for small samples or strongly
        unequal ``sigma``. Forward estimand only.""",
    "groups": """\
    groups : array-like of shape (n_samples,), default=None
        The batch of each label (calibration run, instrument, day): labels of
        one batch share an offset ``b_g ~ N(0, sigma_shared_g²)`` on top of
        their own error (user guide: :ref:`shared_offsets`). Needs
        ``sigma_shared``.""",
    "sigma_shared": """\
    sigma_shared : float, dict or array-like of shape (n_samples,), default=None
        The SD of a batch's common offset: one value, ``{batch: SD}`` or one
        value per sample (equal within a batch), or the
        :func:`~sklearn_noisy.preprocessing.summarize_batches` summary that
        estimated it (its truth intervals then follow the estimate's
        uncertainty, ``method="fiducial"``). A remeasurement draws new
        offsets; for one that keeps them, leave out ``groups``.""",
    "sigma_shared_dof": """\
    sigma_shared_dof : float, default=None
        Degrees of freedom of ``sigma_shared²`` when it was estimated, as
        :func:`~sklearn_noisy.preprocessing.summarize_batches` returns them
        (one estimate for every batch when ``sigma_shared`` is one value);
        None: known. The truth variances then include its uncertainty.""",
    "sigma_dof": """\
    sigma_dof : float or array-like of shape (n_samples,), default=None
        Degrees of freedom of ``sigma`` when it was estimated from the
        readings (``n_i - 1`` for the mean of ``n_i``; ``inf``: known), as
        :func:`~sklearn_noisy.preprocessing.summarize_repeats` returns them;
        None: known. The truth and remeasurement variances, and the forward
        MSE's, RMSE's and MAE's intervals, then include σ's own uncertainty
        (user guide: :ref:`sigma_dof`).""",
    "force_finite": """\
    force_finite : bool, default=True
        scikit-learn's option: 1.0 for perfect predictions and 0.0 for a
        constant ``y_true`` instead of NaN and ``-inf``. The truth and
        remeasurement estimands require ``True``.""",
    "zero_margin": """\
    zero_margin : float, default=1.0
        The moments are conditional on every noisy label staying at
        ``|y| >= zero_margin * sigma`` (``method="conditional"`` where the
        left-out draws have a resolvable probability, with a warning above
        1e-9); ``0``: unconditional, with scikit-learn's floor
        ``max(|y|, eps)`` (user guide: :ref:`formula_percentage`).""",
}

_ESTIMAND_DOCS = {
    "forward": '``"forward"``: ``y_true`` is exact and the labels are measured '
    "around it.",
    "truth": '``"truth"``: ``y_true`` holds noisy measurements; the metric '
    "against their true values is estimated.",
    "remeasurement": '``"remeasurement"``: the nominal metric, unbiased for '
    "the metric of the samples measured again the same way.",
    "auto": '``"auto"``: the first offered of truth, remeasurement, forward '
    "(labels are usually measurements).",
}


def _estimand_doc(definition: RegressionLoss) -> str:
    """The ``estimand`` entry of a loss's docstring, from its estimands."""
    offered = ("forward", *definition.estimands)
    text = "Which question ``expected`` answers (user guide: :ref:`estimands`). "
    text += " ".join(_ESTIMAND_DOCS[e] for e in offered)
    text += " " + _ESTIMAND_DOCS["auto"]
    if "truth" not in offered:
        text += ' ``"truth"`` is not offered: no unbiased estimator of it exists.'
    choices = ", ".join(f'"{e}"' for e in ("auto", *offered))
    body = textwrap.fill(text, 80, initial_indent=" " * 8, subsequent_indent=" " * 8)
    return f'    estimand : {{{choices}}}, default="auto"\n{body}'


def parameters_doc(definition: RegressionLoss) -> str:
    """The Parameters section of a loss's public function, from its options."""
    own = definition.options
    blocks = [_PARAMETERS_DOC, _estimand_doc(definition)]
    blocks[1:1] = [_OPTION_DOCS[n] for n in own if n == "method"]
    blocks += [_OPTION_DOCS[n] for n in own if n != "method"]
    return "\n\n".join(blocks)


#: The sign of σ² in the MSE's per-sample terms ``d² ± σ²``, per estimand.
_SQUARED_SIGNS = {"forward": 1.0, "truth": -1.0, "remeasurement": 0.0}


def _squared(sign: float) -> Terms:
    """The MSE's per-sample terms of one estimand (:func:`squared_terms`)."""

    def terms(
        y: np.ndarray, y_pred: np.ndarray, s: np.ndarray, dof: Any = None
    ) -> np.ndarray:
        return squared_terms(np.square(y - y_pred), s, sign)  # σ̂ as it is

    return terms


_SUMMARY = """\
Expected {what}, and its variance, under Gaussian label error.

{how}

    Parameters
    ----------
    {{parameters}}

    Returns
    -------
    score : NoisyScore or list of NoisyScore
{nominal}

    Examples
    --------
    >>> from sklearn_noisy.metrics import {function}
    >>> {call}
    {shown}
"""

#: The examples' data.
_DATA = "[3.0, -0.5, 2.0, 7.0], [2.5, 0.0, 2.0, 8.0], sigma=0.5"
_DATA_8 = """\
[3.0, -0.5, 2.0, 7.0, 4.2, 1.1, 5.5, 0.3],
    ...     [2.5, 0.0, 2.0, 8.0, 4.0, 1.5, 5.0, 0.0], sigma=0.5"""
_PERCENT_DATA = "[10.0, 20.0], [11.0, 18.0], sigma=0.5"
_ROUNDED = """score = {function}(
    ...     {data}, estimand="forward")
    >>> round(score.nominal, 6), round(score.expected, 6), {third}"""


def _doc(function: str, what: str, how: str, ref: str, nominal: str, **example: str):
    """The docstring of a public function (``{parameters}`` filled later).

    ``example``: ``shown`` and either ``data`` (the call is shown whole) or
    ``data`` and ``third`` (nominal, expected and ``third``, rounded).
    """
    data, shown = example["data"], example["shown"]
    if "third" in example:
        call = _ROUNDED.format(function=function, data=data, third=example["third"])
    else:
        call = f'{function}(\n    ...     {data}, estimand="forward")'
    return _SUMMARY.format(
        function=function,
        what=what,
        how=textwrap.fill(
            "Each observed label is ``y_i ~ N(y_true_i, sigma_i²)``, ``y_pred`` "
            f"fixed. {how} Read more in the :ref:`User Guide <{ref}>`.",
            76,
            initial_indent="    ",
            subsequent_indent="    ",
        ),
        nominal=textwrap.fill(
            f"``nominal`` is {nominal} on ``y_true``.",
            80,
            initial_indent=" " * 8,
            subsequent_indent=" " * 8,
        ),
        call=call,
        shown=shown,
    )


MEAN_SQUARED_ERROR = RegressionLoss(
    "mean_squared_error",
    unit_power=2,
    terms={e: _squared(sign) for e, sign in _SQUARED_SIGNS.items()},
    fused=_SQUARED_SIGNS,
    estimands={
        "truth": (mse_truth, "exact"),
        "remeasurement": (mse_remeasurement, "exact"),
    },
    sigma_hat=(mse_forward, "exact"),
    # The noise adds the same σ² to both models: against the true values too.
    paired={
        "forward": squared_error_difference,
        "truth": squared_error_difference,
    },
    doc=_doc(
        "expected_mean_squared_error",
        "mean squared error",
        "The moments are exact (closed form).",
        "formula_mse",
        ":func:`sklearn.metrics.mean_squared_error`",
        data=_DATA,
        shown="NoisyScore(metric='mean_squared_error', expected=0.625, "
        "std=0.3536, nominal=0.375, n_samples=4, method='exact', "
        "estimand='forward', sampling_std=0.2165)",
    ),
    options=(*_OFFSET_OPTIONS, "noise"),
)

ROOT_MEAN_SQUARED_ERROR = RegressionLoss(
    "root_mean_squared_error",
    unit_power=1,
    estimands={
        "truth": (rmse_truth, "delta"),
        "remeasurement": (rmse_remeasurement, "delta"),
    },
    sigma_hat=(rmse_forward, "delta"),
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
    doc=_doc(
        "expected_root_mean_squared_error",
        "root mean squared error",
        "The moments are exact by one-dimensional quadrature; outputs are "
        "averaged after the root, as in scikit-learn.",
        "formula_rmse",
        ":func:`sklearn.metrics.root_mean_squared_error`",
        data=_DATA,
        shown="NoisyScore(metric='root_mean_squared_error', expected=0.758283, "
        "std=0.2236, nominal=0.612372, n_samples=4, method='exact', "
        "estimand='forward', sampling_std=0.1369)",
    ),
    options=("method", *_OFFSET_OPTIONS, "noise"),
)


def _absolute_forward(
    y: np.ndarray, y_pred: np.ndarray, s: np.ndarray, dof: Any = None
) -> np.ndarray:
    """The forward MAE's terms: the folded normal means, or with σ̂ (``dof``)
    their unbiased estimates (:func:`~.forward_sigma.folded_sigma_hat`)."""
    if dof is None:
        return folded_moments(y - y_pred, s)[0]
    return folded_sigma_hat(np.abs(y - y_pred), s, dof)[0]


MEAN_ABSOLUTE_ERROR = RegressionLoss(
    "mean_absolute_error",
    unit_power=1,
    terms={
        "forward": _absolute_forward,
        "remeasurement": lambda y, p, s: np.abs(y - p),
    },
    estimands={"remeasurement": (mae_remeasurement, "delta")},
    sigma_hat=(mae_forward, "delta"),
    paired={"forward": absolute_error_difference},
    truth_reason="E|e| is analytic in d but |d| has a kink",
    doc=_doc(
        "expected_mean_absolute_error",
        "mean absolute error",
        "Each ``|y_i - y_pred_i|`` is folded normal; its moments are exact.",
        "formula_mae",
        ":func:`sklearn.metrics.mean_absolute_error`",
        data="[0.0, 1.0], [0.0, 0.0], sigma=1.0",
        third="round(score.variance, 6)",
        shown="(0.5, 0.982258, 0.250588)",
    ),
    options=_OFFSET_OPTIONS,
)

R2 = RegressionLoss(
    "r2",
    unit_power=0,
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
    centre_inputs=True,
    label="R²",
    function_name="expected_r2_score",
    doc=_doc(
        "expected_r2_score",
        "R² (coefficient of determination)",
        "Noise lowers R² even on average; where its moments do not exist (too "
        "few noisy labels) the result is infinite, with a ``UserWarning``.",
        "formula_r2",
        ":func:`sklearn.metrics.r2_score` (NaN, with an "
        "``UndefinedMetricWarning``, for fewer than two samples)",
        data=_DATA_8,
        shown="NoisyScore(metric='r2', expected=0.916235, std=0.03933, "
        "nominal=0.957138, n_samples=8, method='exact', "
        "estimand='forward', sampling_std=0.01609)",
    ),
    options=("method", *_OFFSET_OPTIONS, "force_finite", "noise"),
)

EXPLAINED_VARIANCE = RegressionLoss(
    "explained_variance",
    unit_power=0,
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
    centre_inputs=True,
    function_name="expected_explained_variance_score",
    doc=_doc(
        "expected_explained_variance_score",
        "explained variance score",
        "It is R² with the residuals centred at their weighted mean; where its "
        "moments do not exist the result is infinite, with a ``UserWarning``.",
        "formula_explained_variance",
        ":func:`sklearn.metrics.explained_variance_score`",
        data=_DATA_8,
        shown="NoisyScore(metric='explained_variance', expected=0.921819, "
        "std=0.0382, nominal=0.957559, n_samples=8, method='exact', "
        "estimand='forward', sampling_std=0.0176)",
    ),
    options=("method", *_OFFSET_OPTIONS, "force_finite", "noise"),
)


def _relative(square: bool) -> Terms:
    """The forward terms ``E[g_i]`` of the relative error ``g`` (or ``g²``)."""

    def terms(
        y: np.ndarray, y_pred: np.ndarray, s: np.ndarray, margin: float = ZERO_MARGIN
    ) -> np.ndarray:
        center, mean, _, nominal_terms = relative_error_terms(
            y, y_pred, s, square, margin
        )
        return nominal_terms if not np.any(s > 0.0) else center + mean

    return terms


_PERCENTAGE = {
    "multioutput": MultioutputRules(),
    "truth_reason": (
        "no unbiased estimator of E[1/|Y|]-type ratios exists for a Gaussian "
        "label in the denominator"
    ),
    "options": ("zero_margin",),
}
_PERCENTAGE_HOW = (
    "The relative error divides by the noisy label, floored at scikit-learn's "
    "``eps``; the moments are computed by quadrature."
)

MEAN_ABSOLUTE_PERCENTAGE_ERROR = RegressionLoss(
    "mean_absolute_percentage_error",
    unit_power=0,
    terms={"forward": _relative(square=False)},
    label="MAPE",
    doc=_doc(
        "expected_mean_absolute_percentage_error",
        "MAPE",
        _PERCENTAGE_HOW,
        "formula_percentage",
        ":func:`sklearn.metrics.mean_absolute_percentage_error`",
        data=_PERCENT_DATA,
        third="round(score.std, 6)",
        shown="(0.1, 0.101478, 0.02933)",
    ),
    **_PERCENTAGE,
)

MEAN_SQUARED_PERCENTAGE_ERROR = RegressionLoss(
    "mean_squared_percentage_error",
    unit_power=0,
    terms={"forward": _relative(square=True)},
    label="MSPE",
    doc=_doc(
        "expected_mean_squared_percentage_error",
        "MSPE",
        _PERCENTAGE_HOW,
        "formula_percentage",
        ":func:`mean_squared_percentage_error`",
        data=_PERCENT_DATA,
        third="score.method",
        shown="(0.01, 0.012023, 'exact')",
    ),
    **_PERCENTAGE,
)

ROOT_MEAN_SQUARED_PERCENTAGE_ERROR = RegressionLoss(
    "root_mean_squared_percentage_error",
    unit_power=0,
    label="RMSPE",
    doc=_doc(
        "expected_root_mean_squared_percentage_error",
        "RMSPE",
        "The root of the MSPE's moments by the delta method, held inside the "
        "bounds they set (``method='delta_bounded'`` where it leaves them).",
        "formula_percentage",
        ":func:`root_mean_squared_percentage_error`",
        data=_PERCENT_DATA,
        third="score.method",
        shown="(0.1, 0.105077, 'delta')",
    ),
    **_PERCENTAGE,
)
