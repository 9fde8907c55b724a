"""Expected regression metrics under Gaussian label error.

Every public function is :func:`regression_function` of the loss's
definition (:mod:`~sklearn_noisy.metrics._definitions.regression`) and its
forward engine: one body validates, dispatches the estimands and builds the
result.
"""

from __future__ import annotations

import functools
import inspect
import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from .._noisy_score import NoisyScore
from ..utils._docstring import fill_doc
from ..utils._noise import (
    GaussianNoise,
    PoissonNoise,
    SharedOffsets,
    check_regression_noise,
    check_shared_offsets,
)
from ..utils._validation import (
    check_estimand,
    check_regression_inputs,
    has_noise,
    supports_estimands,
)
from ..utils._warnings import quiet
from ._definitions.regression import (
    MEAN_ABSOLUTE_ERROR,
    MEAN_SQUARED_ERROR,
    ROOT_MEAN_SQUARED_ERROR,
    RegressionLoss,
    parameters_doc,
)
from ._engines.regression.counts import count_mse_forward
from ._engines.regression.distributions import (
    mae_distribution,
    mse_distribution,
    output_distributions,
)
from ._engines.regression.estimands import (
    aggregate_outputs,
    check_regression_sigma_dof,
    estimand_score,
    with_sampling,
)
from ._engines.regression.quadrature import rmse_moments, rmse_nominal
from ._engines.regression.r2 import r2_count_forward, r2_forward
from ._engines.regression.relative_error import ZERO_MARGIN
from ._engines.regression.sums import (
    absolute_error_kernel,
    absolute_error_offsets,
    accumulate,
    bounded_root,
    output_column,
    output_mean,
    rescaled_squared_error_sums,
    squared_error_sums,
)
from ._engines.test_set_sampling import with_test_set_sampling
from ._float_range import at_unit_scale, centred_inputs, check_finite_results

__all__ = [
    "expected_mean_absolute_error",
    "expected_mean_squared_error",
    "expected_root_mean_squared_error",
    "fraction_of_variance",
    "regression_function",
    "shared_offsets",
]


def _check_method(method: Any) -> str:
    if not isinstance(method, str) or method not in ("exact", "delta"):
        raise ValueError(f"method must be 'exact' or 'delta'; got {method!r}.")
    return method


def _check_force_finite(force_finite: Any) -> bool:
    if not isinstance(force_finite, (bool, np.bool_)):
        raise TypeError(f"force_finite must be a bool; got {force_finite!r}.")
    return bool(force_finite)


def _check_zero_margin(zero_margin: Any) -> float:
    """``zero_margin`` as a float ``>= 0``, or the usual errors naming it."""
    if isinstance(zero_margin, bool) or not isinstance(zero_margin, numbers.Real):
        raise TypeError(
            f"zero_margin must be a real number; got {type(zero_margin).__name__}."
        )
    if not (math.isfinite(zero_margin) and zero_margin >= 0.0):
        raise ValueError(
            f"zero_margin must be a finite number >= 0; got {zero_margin!r}."
        )
    return float(zero_margin)


#: Each option's default, check and annotation.
_OPTIONS: dict[str, tuple[Any, Callable[[Any], Any], str]] = {
    "noise": ("gaussian", check_regression_noise, "str"),
    "method": ("exact", _check_method, "str"),
    "sigma_dof": (None, lambda value: value, "Any"),
    "groups": (None, lambda value: value, "Any"),
    "sigma_shared": (None, lambda value: value, "Any"),
    "sigma_shared_dof": (None, lambda value: value, "Any"),
    "force_finite": (True, _check_force_finite, "bool"),
    "zero_margin": (ZERO_MARGIN, _check_zero_margin, "float"),
}


def _check_counts_options(sigma: Any, sigma_dof: Any) -> None:
    """``noise="poisson"`` takes its variances from the counts: no ``sigma``."""
    for name, value in (("sigma", sigma), ("sigma_dof", sigma_dof)):
        if value is not None:
            raise TypeError(
                f"Pass {name} or noise='poisson', not both: with count labels "
                "the variance of each label is estimated from the count itself."
            )


def _count_squared(
    definition: RegressionLoss, inputs: tuple, *, root: bool = False, **_: Any
) -> Any:
    """The forward MSE of counts; with ``root`` the RMSE, the MSE's moments
    through :func:`bounded_root` per output."""
    nominal, expected, variance = count_mse_forward(*inputs[:2], inputs[3])
    method = "exact"
    if root:
        expected, variance = bounded_root(expected, variance)[:2]
        nominal, method = np.sqrt(nominal), "delta"
    n_samples = inputs[0].shape[0]
    return aggregate_outputs(
        definition.name, nominal, expected, variance, n_samples, inputs[4], method
    )


def _sampling_inputs(
    definition: RegressionLoss, arguments: dict[str, Any]
) -> tuple[tuple, np.ndarray, bool]:
    """The checked ``(y_true, y_pred, sigma, weight, multioutput)`` of a call,
    each label's total error SD ``√(σ² + τ_g²)`` (a mean of per-sample terms
    sees only each label's own error, :ref:`shared_offsets`) and whether there
    are batch offsets. Counts (``noise="poisson"``) have ``σ² = y_true``."""
    counts = arguments.get("noise", "gaussian") == "poisson"
    inputs = check_regression_inputs(
        arguments["y_true"],
        arguments["y_pred"],
        sigma=1.0 if counts else arguments["sigma"],
        sample_weight=arguments.get("sample_weight"),
        multioutput=arguments.get("multioutput", "uniform_average"),
        multioutput_rules=definition.multioutput,
    )
    if counts:
        inputs = (inputs[0], inputs[1], np.sqrt(inputs[0]), *inputs[3:])
    s = np.broadcast_to(np.asarray(inputs[2], dtype=float), inputs[0].shape)
    shared = shared_offsets(
        definition,
        arguments.get("sigma"),
        arguments.get("groups"),
        arguments.get("sigma_shared"),
        s.shape[0],
        arguments.get("sigma_shared_dof"),
    )
    if shared is None:
        return inputs, s, False
    return inputs, np.sqrt(np.square(s) + shared.per_sample()[:, None]), True


def shared_offsets(
    definition: RegressionLoss,
    sigma: Any,
    groups: Any,
    sigma_shared: Any,
    n_samples: int,
    sigma_shared_dof: Any = None,
) -> SharedOffsets | None:
    """The batch offsets of a call: ``groups``/``sigma_shared`` or the noise's."""
    if groups is None and sigma_shared is None and sigma_shared_dof is None:
        if not isinstance(sigma, GaussianNoise) or sigma.shared is None:
            return None
    if isinstance(sigma, GaussianNoise) and sigma.shared is not None:
        if groups is not None or sigma_shared is not None or sigma_shared_dof:
            raise TypeError(
                "sigma already carries the batch offsets; do not also pass groups "
                "or sigma_shared."
            )
        shared = sigma.shared
    else:
        shared = check_shared_offsets(groups, sigma_shared, n_samples, sigma_shared_dof)
    if shared is not None and "groups" not in definition.options:
        raise ValueError(
            f"The {definition.label} does not model shared batch offsets "
            "(groups, sigma_shared): its moments are derived for independent "
            "label errors."
        )
    return shared


def _own_label_variance(
    definition: RegressionLoss,
    inputs: tuple,
    total_sigma: np.ndarray,
    estimand: str,
    offsets: bool,
) -> float | None:
    """The label variance the per-sample terms' spread holds, with batch
    offsets: that of independent errors of the same total SD per label (None
    without offsets or for the forward estimand, whose terms hold none)."""
    if not offsets or estimand == "forward":
        return None
    y_true, y_pred, _, weight, multioutput = inputs
    kernel = definition.estimands[estimand][0]
    variance = kernel(y_true, y_pred, total_sigma, None, weight).variance
    if isinstance(multioutput, str):
        return float(variance.mean() / variance.size)
    return float(np.square(multioutput) @ variance / np.sum(multioutput) ** 2)


def _loss_terms(definition: RegressionLoss) -> Callable[..., Any]:
    """The test-set sampling rule of a mean of per-sample terms: the estimand's
    terms averaged over the outputs (:ref:`error_budget`)."""

    def terms(
        arguments: dict[str, Any], score: NoisyScore
    ) -> tuple[np.ndarray, np.ndarray | None, float]:
        inputs, s, offsets = _sampling_inputs(definition, arguments)
        extra = {}
        if "zero_margin" in arguments:
            extra["margin"] = _check_zero_margin(arguments["zero_margin"])
        estimand = arguments.get("estimand", "forward")
        dof = arguments.get("sigma_dof")
        if (
            estimand == "forward"
            and definition.sigma_hat
            and dof is not None
            and not offsets
        ):
            extra["dof"] = check_regression_sigma_dof(dof, s.shape[0])  # σ̂'s terms
        h = definition.terms[estimand](*inputs[:2], s, **extra)
        label = _own_label_variance(definition, inputs, s, estimand, offsets)
        return output_mean(h, inputs[4]), inputs[3], 1.0, None, label

    return terms


def _ratio_terms(definition: RegressionLoss) -> Callable[..., Any]:
    """The sampling rule of R² and explained variance, ``1 − Ā/B̄``: the delta
    method on the per-sample terms ``a_i`` (squared residuals, centred for the
    explained variance) and ``b_i`` (squared deviations of the labels), each
    with ``σ_i²`` added (forward) or taken off (truth) to first order; None (the
    bootstrap) for per-output results or a non-positive ``B̄``.
    """
    shift = {"forward": 1.0, "truth": -1.0, "remeasurement": 0.0}

    def terms(
        arguments: dict[str, Any], score: NoisyScore
    ) -> tuple[np.ndarray, Any, float] | None:
        if isinstance(score, list):
            return None
        inputs, total_sigma, offsets = _sampling_inputs(definition, arguments)
        y_true, y_pred, _, weight, multioutput = inputs
        w = np.ones(y_true.shape[0]) if weight is None else weight
        total = float(w.sum())
        noise = shift[score.estimand] * np.square(total_sigma)
        residual = y_true - y_pred
        if definition.centred:
            residual = residual - w @ residual / total
        a = np.square(residual) + noise
        b = np.square(y_true - w @ y_true / total) + noise
        if isinstance(multioutput, str) and multioutput == "variance_weighted":
            a, b = a.sum(axis=1, keepdims=True), b.sum(axis=1, keepdims=True)
        a_mean, b_mean = w @ a / total, w @ b / total
        if not np.all(b_mean > 0.0):
            return None
        h = -((a - a_mean) - a_mean / b_mean * (b - b_mean)) / b_mean
        label = _own_label_variance(
            definition, inputs, total_sigma, score.estimand, offsets
        )
        # R²'s log pivot, with σ known (σ̂'s own variance is not in the terms)
        # and without batch offsets (their correlation is not either)
        known = a.shape[1] == 1 and arguments.get("sigma_dof") is None and not offsets
        ratio = (a[:, 0], b[:, 0]) if known else None
        h = score.expected + output_mean(h, multioutput)
        return h, weight, 1.0, None, label, ratio

    return terms


def _root_sampling(mean_metric: Callable[..., NoisyScore]) -> Callable[..., Any]:
    """The sampling rule of a root metric: the mean metric's by the delta method
    (None, the bootstrap, for several outputs or a non-positive mean)."""

    def hook(
        arguments: dict[str, Any], score: NoisyScore
    ) -> tuple[float, str, float] | None:
        multioutput = arguments.get("multioutput", "uniform_average")
        if not (isinstance(multioutput, str) and multioutput == "uniform_average") or (
            np.ndim(arguments["y_true"]) > 1 and np.shape(arguments["y_true"])[1] > 1
        ):
            return None
        options = ("sigma", "sample_weight", "estimand", "sigma_dof", "zero_margin")
        options += ("groups", "sigma_shared", "sigma_shared_dof", "noise")
        with quiet():  # the root metric's call warned already
            mean = mean_metric(
                arguments["y_true"],
                arguments["y_pred"],
                **{k: arguments[k] for k in options if k in arguments},
                test_set_sampling=True,
            )
        if score.interval_method == "unified_sqrt":  # the square's pivot too
            factor = score.distribution.factor
            variance = mean.sampling_variance / factor**2 if factor > 0.0 else 0.0
            return variance, "delta", mean.sampling_dof, mean.sampling_pivot
        if not mean.expected > 0.0:
            return None
        _, variance, _ = bounded_root(mean.expected, mean.sampling_variance)
        return float(variance), "delta", mean.sampling_dof

    return hook


def regression_function(
    definition: RegressionLoss,
    engine: Callable[..., NoisyScore | list[NoisyScore]],
    *,
    root_of: Callable[..., NoisyScore] | None = None,
    count_engine: Callable[..., NoisyScore | list[NoisyScore]] | None = None,
    deferred_check: bool = False,
    module: str = "sklearn_noisy.metrics",
) -> Callable[..., Any]:
    """The public function of a regression loss.

    ``engine(definition, inputs, **options)`` computes the forward result
    from validated inputs; the other estimands are the definition's. Name,
    docstring and options are the definition's; ``root_of``: the mean metric
    whose test-set sampling a root metric takes; ``count_engine``: the
    forward result of counts (``noise="poisson"``)
    where the loss offers ``noise``; ``deferred_check``: the
    inputs are scanned for NaN/inf only where a result is not finite.
    """
    own = definition.options

    def score(
        y_true: Any,
        y_pred: Any,
        *,
        sigma: Any = None,
        sample_weight: Any = None,
        multioutput: Any = "uniform_average",
        estimand: str = "auto",
        test_set_sampling: Any = False,
        **options: Any,
    ) -> NoisyScore | list[NoisyScore]:
        unknown = sorted(set(options) - set(own))
        if unknown:
            raise TypeError(
                f"{definition.function_name}() got an unexpected keyword "
                f"argument {unknown[0]!r}."
            )
        estimand = check_estimand(
            estimand,
            metric=definition.name,
            supported=("forward", *definition.estimands),
            reason=definition.truth_reason,
        )
        values = {  # a default needs no check: the common call stays cheap
            name: _OPTIONS[name][1](options[name])
            if name in options
            else _OPTIONS[name][0]
            for name in own
        }
        sigma_dof = values.pop("sigma_dof", None)
        counts = values.pop("noise", "gaussian") == "poisson"
        if counts:
            _check_counts_options(sigma, sigma_dof)
        inputs = check_regression_inputs(
            y_true,
            y_pred,
            sigma=1.0 if counts else sigma,  # counts are noisy labels
            sample_weight=sample_weight,
            multioutput=multioutput,
            multioutput_rules=definition.multioutput,
            ensure_finite=not deferred_check or counts,
        )
        if counts:  # the counts' variances need the labels as given
            noise = PoissonNoise.from_labels(inputs[0], counts=estimand != "forward")
            inputs = (inputs[0], inputs[1], noise, *inputs[3:])
        elif definition.centre_inputs:
            inputs = centred_inputs(definition, inputs)
        shared = shared_offsets(
            definition,
            sigma,
            values.pop("groups", None),
            values.pop("sigma_shared", None),
            inputs[0].shape[0],
            values.pop("sigma_shared_dof", None),
        )
        offsets = {} if shared is None else {"shared": shared}
        if definition.fused and test_set_sampling in ("auto", True) and not counts:
            averaged = inputs[4]
            if shared is None and not (
                isinstance(averaged, str) and averaged == "raw_values"
            ):  # the terms' moments in the same pass as the sums
                offsets["terms"] = (definition.fused[estimand], averaged)
        if counts and shared is not None:
            raise TypeError(
                "noise='poisson' does not model shared batch offsets; pass groups "
                "and sigma_shared with Gaussian label errors (sigma=)."
            )
        dof = None
        if "sigma_dof" in own:
            dof = check_regression_sigma_dof(sigma_dof, inputs[0].shape[0])
        # σ estimated: the forward estimand's own kernel (σ known where ν = ∞)
        sigma_hat = dof is not None and not counts and shared is None
        sigma_hat = sigma_hat and definition.sigma_hat and np.isfinite(dof).any()
        if estimand != "forward" or sigma_hat:
            averaged = inputs[4]
            if not values.get("force_finite", True) or (
                isinstance(averaged, str)
                and averaged == "variance_weighted"
                and inputs[0].shape[1] > 1
            ):
                raise ValueError(
                    f"estimand={estimand!r} is offered with force_finite=True and "
                    "without multioutput='variance_weighted': its estimates of the "
                    "sums of squares are not the sums scikit-learn's options refer "
                    "to."
                )
            check = None
            if deferred_check:
                check = functools.partial(
                    check_finite_results, definition.name, inputs[:3]
                )
            return estimand_score(
                definition, estimand, inputs, sigma_dof, check, **offsets
            )
        if counts:
            return count_engine(definition, inputs, **values)
        return engine(definition, inputs, **values, **offsets)

    keyword = inspect.Parameter.KEYWORD_ONLY
    fields = list(inspect.signature(score).parameters.values())[:-1]
    extra = [
        inspect.Parameter(n, keyword, default=_OPTIONS[n][0], annotation=_OPTIONS[n][2])
        for n in own
    ]
    fields[5:5] = [p for p in extra if p.name == "method"]
    fields += [p for p in extra if p.name != "method"]
    score.__signature__ = inspect.signature(score).replace(parameters=fields)
    score.__name__ = score.__qualname__ = definition.function_name
    score.__module__ = module
    score.__doc__ = definition.doc or None
    score = fill_doc(parameters=parameters_doc(definition))(score)
    score = supports_estimands("forward", *definition.estimands)(score)
    if definition.terms:
        score = with_test_set_sampling(_loss_terms(definition))(score)
    elif root_of is not None:
        score = with_test_set_sampling(hook=_root_sampling(root_of))(score)
    else:
        score = with_test_set_sampling(_ratio_terms(definition), method="delta")(score)
    if "zero_margin" in own:  # the percentage errors: a margin in y's units
        return score
    return at_unit_scale(definition, score)


def _forward_result(
    definition: RegressionLoss,
    inputs: tuple,
    moments: tuple[np.ndarray, np.ndarray, np.ndarray],
    builder: Callable[..., Any] | None,
    method: str = "exact",
    **options: Any,
) -> NoisyScore | list[NoisyScore]:
    """Per-output ``(nominal, expected, variance)`` combined, with each output's
    distribution from ``builder`` (None under batch offsets: the normal
    interval, :ref:`shared_offsets`); a non-finite result is checked."""
    y_true, y_pred, sigma, weight, multioutput = inputs
    check_finite_results(definition.name, inputs[:3], moments[1:])
    distributions = None
    if builder is not None:
        distributions = output_distributions(
            builder, y_true, y_pred, sigma, weight, **options
        )
    return aggregate_outputs(
        definition.name,
        *moments,
        y_true.shape[0],
        multioutput,
        method,
        distributions=distributions,
    )


def _mean_squared(
    definition: RegressionLoss,
    inputs: tuple,
    shared: SharedOffsets | None = None,
    terms: Any = None,
) -> Any:
    """The forward MSE: closed-form sums, rescaled where they overflow."""
    if shared is not None:
        sums = squared_error_sums(*inputs[:4], shared=shared)
        return _forward_result(definition, inputs, sums.forward(), None)
    with np.errstate(invalid="ignore", over="ignore"):  # checked just below
        sums = squared_error_sums(*inputs[:4], terms=terms)
        moments = sums.forward()
        if not np.isfinite(moments[1:]).all():  # the nominal is finite with them
            moments = rescaled_squared_error_sums(*inputs[:4]).forward()
    score = _forward_result(
        definition, inputs, moments, mse_distribution, nominal_mse=moments[0]
    )
    return with_sampling(score, sums.terms, inputs[3])


def _mean_absolute(
    definition: RegressionLoss, inputs: tuple, shared: SharedOffsets | None = None
) -> Any:
    """The forward MAE: folded-normal moments, chunked on a few threads."""
    if shared is not None:
        moments = absolute_error_offsets(*inputs[:4], shared)
        return _forward_result(definition, inputs, moments, None)
    moments = accumulate(absolute_error_kernel, *inputs[:4], parallel=True)
    return _forward_result(definition, inputs, moments, mae_distribution)


def _root_mean_squared(
    definition: RegressionLoss,
    inputs: tuple,
    method: str,
    shared: SharedOffsets | None = None,
) -> Any:
    """The forward RMSE per output by quadrature or the delta method (batch
    offsets: the delta method on the MSE's moments, :func:`bounded_root`)."""
    y_true, y_pred, sigma, weight = inputs[:4]
    if shared is not None:
        nominal, mean, var = squared_error_sums(*inputs[:4], shared=shared).forward()
        expected, variance, _ = bounded_root(mean, var)
        moments = (np.sqrt(nominal), expected, variance)
        return _forward_result(definition, inputs, moments, None, "delta")
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
        expected[j], variance[j] = rmse_moments(
            y_true[:, j], y_pred[:, j], sigma_j, weight, method
        )
        if variance[j] == 0.0:  # no label noise: exactly the classical metric
            expected[j] = nominal[j]
    with np.errstate(over="ignore", under="ignore"):
        nominal_mse = nominal * nominal
    return _forward_result(
        definition,
        inputs,
        (nominal, expected, variance),
        mse_distribution,
        method,
        nominal_mse=nominal_mse,
        root=True,
    )


def fraction_of_variance(definition: RegressionLoss) -> Callable[..., Any]:
    """The public function of a fraction of explained variation, ``1 - X/Y``."""
    return regression_function(definition, r2_forward, count_engine=r2_count_forward)


expected_mean_squared_error = regression_function(
    MEAN_SQUARED_ERROR,
    _mean_squared,
    count_engine=_count_squared,
    deferred_check=True,
    module=__name__,
)
expected_mean_absolute_error = regression_function(
    MEAN_ABSOLUTE_ERROR, _mean_absolute, module=__name__
)
expected_root_mean_squared_error = regression_function(
    ROOT_MEAN_SQUARED_ERROR,
    _root_mean_squared,
    root_of=expected_mean_squared_error,
    count_engine=functools.partial(_count_squared, root=True),
    module=__name__,
)
