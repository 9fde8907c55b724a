"""The forward ``1 - X/Y`` (R², explained variance) under Gaussian label error:
quadrature over the exponential tilt ``e^{-tY}``, or the delta method (user
guide: :ref:`formula_r2`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from sklearn.exceptions import UndefinedMetricWarning

from ...._noisy_score import NoisyScore
from ....utils._warnings import warn
from ..._definitions.regression import RegressionLoss
from .distributions import output_distributions, r2_distribution
from .estimands import aggregate_outputs, delta_numerator
from .estimands import r2_sums as estimand_r2_sums
from .quadrature import tilt_integral
from .r2_tilt import R2Data, SummedIntegrand
from .sums import nominal_r2_sums, output_column, r2_from_sums

__all__ = ["delta_ratio", "r2_count_forward", "r2_forward", "ratio_moments"]

#: Below this ``CV²`` the delta method is exact to double precision and is
#: returned as the exact value (user guide: formula_r2, "Tiny noise").
_CV2_DELTA_EXACT = 1e-15
_X_CAP = 150.0
_LOG_TINY = -745.0


def delta_ratio(parts: np.ndarray) -> tuple[float, float, float]:
    """Second-order delta ``E[X/Y]``, first-order ``Var[X/Y]`` and ``CV² =
    V_X/μ_X² + V_Y/μ_Y²`` of :func:`delta_parts`' moments."""
    mu_x, mu_y, v_x, v_y, c_xy = (float(value) for value in parts)
    ratio = mu_x / mu_y
    mean = ratio - c_xy / mu_y**2 + mu_x * v_y / mu_y**3
    var = delta_numerator(ratio, v_x, v_y, c_xy) / mu_y**2
    cv2 = v_x / mu_x**2 + v_y / mu_y**2 if mu_x > 0.0 else math.inf
    return mean, max(var, 0.0), cv2


def _warn_missing(
    what: str, rank: int, label: str, data: R2Data | None, method: str, prefix: str
) -> None:
    """Warn that the ``what`` of the ratio does not exist (``data``: of one output)."""
    need = 2 if what == "expected value" else 4
    if data is None:
        message = (
            f"The {what} of the variance-weighted {label} does not exist (it is "
            f"infinite): the total sum of squares of all outputs can come "
            f"arbitrarily close to 0, and the noise has rank r = {rank} summed over "
            f"the outputs; the {what} is finite only when r > {need}."
        )
    else:
        why = (
            f"{data.n_noisy} of the {data.n_eff} labels are noisy and the exact "
            "labels do not take two distinct values, so the noise has rank "
            f"r = {data.n_noisy}"
            if data.n_noisy < data.n_eff
            else f"all {data.n_eff} labels are noisy, so the centred noise has "
            f"rank r = {rank}"
        )
        message = (
            f"The {what} of {label} does not exist (it is infinite): {why}. The "
            "total sum of squares can then come arbitrarily close to 0, and the "
            f"{what} of {label} is finite only when r > {need}. Use more samples, "
            "or include at least two exact labels (sigma = 0) with distinct values."
        )
    if method == "delta":
        message += (
            " The delta method returns a finite number here, which is not meaningful."
        )
    warn(prefix + message, UserWarning)


def ratio_moments(
    columns: list[tuple[np.ndarray, np.ndarray, Any, float, float]],
    weight: np.ndarray | None,
    definition: RegressionLoss,
    method: str,
    nominal: float | None = None,
    prefix: str = "",
) -> tuple[float, float]:
    """``(E, Var)`` of ``1 - Σ X_k / Σ Y_k`` over ``columns``, ``(y_true, y_pred,
    sigma, X, Y)`` per output (``Σ w = M``); ``nominal``: one output's value, None
    for several. A moment that does not exist is warned of (``prefix``)."""
    noisy: list[R2Data] = []
    exact, numeric = np.zeros(2), np.zeros(2)  # (X, Y) of the exact outputs
    for y_true, y_pred, sigma, x, y in columns:
        data = R2Data(y_true, y_pred, sigma, weight, definition.centred)
        if data.n_noisy_num == 0 and y > 0.0:  # Y_k = 0: weight 0 (scikit-learn)
            (exact if data.n_noisy == 0 else numeric)[:] += (x, y)
        if data.n_noisy:
            noisy.append(data)
    # In units of the first noisy output's scale: β_k = (S_k/S_0)².
    unit = noisy[0].scale
    outputs = [((data.scale / unit) ** 2, data) for data in noisy]
    total = np.sum(
        [data.parts * np.array([b, b, b * b, b * b, b * b]) for b, data in outputs],
        axis=0,
    ) + np.array([*exact / (unit * unit), 0.0, 0.0, 0.0])
    delta_mean, delta_var, cv2 = delta_ratio(total)
    rank = sum(data.rank() for data in noisy)
    bounded = (
        exact[1] > 0.0
        or any(data.bounded for data in noisy)
        or all(data.ratio_bounded for data in noisy)
    )
    var_exists = bounded or rank > 4
    if not var_exists:
        what = "variance" if bounded or rank > 2 else "expected value"
        one = noisy[0] if nominal is not None else None
        _warn_missing(what, rank, definition.label, one, method, prefix)
        if what == "expected value":
            return -math.inf, math.inf
    if method == "delta" or cv2 <= _CV2_DELTA_EXACT:
        return (
            1.0 - delta_mean,
            delta_var if var_exists or method == "delta" else math.inf,
        )
    constants = (exact + numeric) / (unit * unit)
    integrand = SummedIntegrand(
        outputs, constants, float(total[1]), delta_mean, var_exists
    )
    if not integrand.parts:  # σ below the double range: exact to ~1e-600
        expected = 1.0 - delta_mean if nominal is None else nominal
        return expected, 0.0 if var_exists else math.inf
    live = [(b, data) for b, data in outputs if data.n_noisy_num > 0]
    tau_min = min(b * data.tau_min for b, data in live)
    bounded = constants[1] > 0.0 or any(data.bounded_num for _, data in live)

    def stop(block: np.ndarray) -> np.ndarray:
        """1 where ``L`` underflows, else 2 where every noisy ``2tτ ≥ 1e8`` (the
        integrands follow their power law: a tail is added)."""
        tiny = integrand(block, log_only=True) < _LOG_TINY
        a_min = 2.0 * np.exp(block) / integrand.mu_y * tau_min
        return np.where(tiny, 1, np.where((a_min >= 1e8) & (not bounded), 2, 0))

    n_comp = 2 if var_exists else 1
    atol = np.array(
        [1e-16 * max(abs(delta_mean), 1e-300), 1e-15 * max(delta_var, 1e-300)]
    )
    blocks = tuple(np.arange(*ends, 4.0) for ends in ((0, 12), (12, 40), (40, _X_CAP)))
    integrals, upper, code = tilt_integral(
        integrand,
        stop,
        blocks,
        _X_CAP,
        1 if bounded else 2,
        atol=atol[:n_comp],
        rtol=np.array([1e-14, 1e-12])[:n_comp],
    )
    if code == 2:
        # In x = log t the integrands decay as t^{-κ}: κ = r/2 where X/Y is
        # bounded, else r/2 − 1 and r/2 − 2 (user guide: formula_r2).
        rank_num = sum(data.rank(numeric=True) for _, data in live)
        end = integrand(np.array([upper]))[:, 0]
        if all(data.ratio_bounded_num for _, data in live):
            kappa = np.full(n_comp, rank_num / 2.0)
        else:
            kappa = np.array([rank_num / 2.0 - 1.0, rank_num / 2.0 - 2.0])[:n_comp]
        integrals = integrals + np.where(
            kappa > 0, end / np.where(kappa > 0, kappa, 1.0), 0.0
        )
    mean_ratio = float(integrals[0])
    if not var_exists:
        return 1.0 - mean_ratio, math.inf
    variance = float(integrals[1]) - (mean_ratio - delta_mean) ** 2
    return 1.0 - mean_ratio, max(variance, 0.0)


def _count_parts(
    rate: np.ndarray, y_pred: np.ndarray, weight: np.ndarray | None, centred: bool
) -> np.ndarray:
    """``(μ_X, μ_Y, V_X, V_Y, C_XY)`` of one output's Poisson counts around ``rate``
    (first order, user guide: :ref:`poisson_noise`)."""
    w = np.ones(rate.shape) if weight is None else weight
    total = float(w.sum())
    c = rate - w @ rate / total
    d = rate - y_pred
    if centred:
        d = d - w @ d / total
    noise = w @ rate - (w * w) @ rate / total
    second = 2.0 * rate * rate
    return np.array(
        [
            w @ (d * d) + (noise if centred else w @ rate),
            w @ (c * c) + noise,
            (w * w) @ (rate * np.square(2.0 * d + 1.0) + second),
            (w * w) @ (rate * np.square(2.0 * c + 1.0) + second),
            (w * w) @ (rate * (2.0 * d + 1.0) * (2.0 * c + 1.0) + second),
        ]
    )


def _averaged(nominal: np.ndarray, denominators: np.ndarray) -> float:
    """scikit-learn's variance-weighted average of the outputs' values."""
    weights = denominators if np.any(denominators != 0) else None
    return float(np.average(nominal, weights=weights))


def _delta_forward(
    name: str,
    n_samples: int,
    nominal: np.ndarray,
    parts: np.ndarray,
    multioutput: Any,
    denominators: np.ndarray | None = None,
) -> NoisyScore | list[NoisyScore]:
    """``1 - X/Y`` per output by :func:`delta_ratio` on its ``parts``, combined as
    ``multioutput`` says; ``variance_weighted`` on the sums of the outputs' parts
    (independent). With ``denominators`` (counts), nominal where ``Y`` is exact."""
    expected, variance = nominal.copy(), np.zeros(nominal.size)
    for j, part in enumerate(parts):
        if denominators is None or (part[3] > 0.0 and part[1] > 0.0):
            mean, variance[j], _ = delta_ratio(part)
            expected[j] = 1.0 - mean
    if isinstance(multioutput, str) and multioutput == "variance_weighted":
        averaged = _averaged(nominal, denominators)
        # an output whose Y is exactly 0 has weight 0, as in scikit-learn
        total = parts[parts[:, 1] > 0.0].sum(axis=0)
        if nominal.size == 1 or not (total[3] > 0.0 and total[1] > 0.0):
            mean, var = expected[0] if nominal.size == 1 else averaged, variance[0]
        else:
            ratio, var, _ = delta_ratio(total)
            mean = 1.0 - ratio
        return NoisyScore(name, mean, var, averaged, n_samples, "delta")
    return aggregate_outputs(
        name, nominal, expected, variance, n_samples, multioutput, "delta"
    )


def r2_count_forward(
    definition: RegressionLoss,
    inputs: tuple[np.ndarray, np.ndarray, Any, np.ndarray | None, Any],
    *,
    method: str,
    force_finite: bool,
) -> NoisyScore | list[NoisyScore]:
    """The forward ``1 - X/Y`` of Poisson counts around the exact rates
    ``y_true``, by the delta method."""
    y_true, y_pred, _, weight, multioutput = inputs
    n_outputs = y_true.shape[1]
    nominal, denominators = np.zeros((2, n_outputs))
    parts = np.zeros((n_outputs, 5))
    for j in range(n_outputs):
        x, y, scale = nominal_r2_sums(
            y_true[:, j], y_pred[:, j], weight, centred=definition.centred
        )
        nominal[j] = r2_from_sums(x, y, force_finite=force_finite)
        denominators[j] = y * scale**2
        parts[j] = _count_parts(y_true[:, j], y_pred[:, j], weight, definition.centred)
    return _delta_forward(
        definition.name, y_true.shape[0], nominal, parts, multioutput, denominators
    )


def _offsets_forward(
    definition: RegressionLoss,
    inputs: tuple[np.ndarray, np.ndarray, Any, np.ndarray | None, Any],
    force_finite: bool,
    shared: Any,
) -> NoisyScore | list[NoisyScore]:
    """The forward ``1 - X/Y`` under batch offsets, by the delta method on the
    truth sums and their floors (user guide: :ref:`shared_offsets`)."""
    y_true, y_pred, sigma, weight, multioutput = inputs
    n_outputs = y_true.shape[1]
    if isinstance(multioutput, str) and multioutput == "variance_weighted":
        if n_outputs > 1:
            raise ValueError(
                "multioutput='variance_weighted' is not offered with shared batch "
                "offsets (groups, sigma_shared); use 'uniform_average' or weights."
            )
        multioutput = "uniform_average"
    sums = estimand_r2_sums(
        y_true,
        y_pred,
        sigma,
        None,
        weight,
        centred=definition.centred,
        shared=shared,
        exact_batches=True,
    )
    nominal = np.array(
        [
            r2_from_sums(float(sse), float(sst), force_finite=force_finite)
            for sse, sst in zip(sums.sse, sums.sst, strict=True)
        ]
    )
    parts = np.column_stack(
        [
            2.0 * sums.sse - sums.sse_truth,
            2.0 * sums.sst - sums.sst_truth,
            sums.var_sse + 2.0 * sums.floor_sse,
            sums.var_sst + 2.0 * sums.floor_sst,
            sums.cov + 2.0 * sums.floor_cov,
        ]
    )
    return _delta_forward(definition.name, y_true.shape[0], nominal, parts, multioutput)


def r2_forward(
    definition: RegressionLoss,
    inputs: tuple[np.ndarray, np.ndarray, Any, np.ndarray | None, Any],
    *,
    method: str,
    force_finite: bool,
    shared: Any = None,
) -> NoisyScore | list[NoisyScore]:
    """The forward ``1 - X/Y`` of validated inputs, combined as ``multioutput`` says.

    One sample: NaN (R²) or nominal (explained variance); one positively
    weighted sample: 0 with ``force_finite`` (variance 0), else ``-inf``.
    """
    y_true, y_pred, sigma, weight, multioutput = inputs
    name, centred = definition.name, definition.centred
    n_samples, n_outputs = y_true.shape
    if shared is not None and n_samples > 1:
        return _offsets_forward(definition, inputs, force_finite, shared)
    if n_samples < 2 and not centred:
        warn(
            "R^2 score is not well-defined with less than two samples.",
            UndefinedMetricWarning,
        )
        nan = np.full(n_outputs, math.nan)
        return aggregate_outputs(name, nan, nan, nan, n_samples, multioutput)
    n_positive = n_samples if weight is None else int(np.count_nonzero(weight))
    variance_weighted = (
        isinstance(multioutput, str) and multioutput == "variance_weighted"
    )
    combined = variance_weighted and n_outputs > 1 and n_positive > 1
    w_factor = 1.0 if weight is None else n_samples / float(weight.sum())
    nominal, expected, variance, denominators = np.zeros((4, n_outputs))
    noisy = np.zeros(n_outputs, dtype=bool)
    columns = []
    for j in range(n_outputs):
        x, y, scale = nominal_r2_sums(
            y_true[:, j], y_pred[:, j], weight, centred=centred
        )
        nominal[j] = expected[j] = r2_from_sums(x, y, force_finite=force_finite)
        denominators[j] = y * scale**2
        sigma_j = output_column(sigma, j)
        noisy[j] = np.any(sigma_j > 0.0)  # with a positive weight
        if weight is not None and not isinstance(sigma_j, float):
            noisy[j] = np.any((sigma_j > 0.0) & (weight > 0.0))
        factor = scale * scale * w_factor  # the sums with Σ w = M
        columns.append((y_true[:, j], y_pred[:, j], sigma_j, x * factor, y * factor))
        if combined or not noisy[j] or (centred and n_positive < 2):
            continue
        if n_positive == 1:
            expected[j], variance[j] = (
                (0.0, 0.0) if force_finite else (-math.inf, math.nan)
            )
            continue
        prefix = f"Output {j}: " if n_outputs > 1 else ""
        expected[j], variance[j] = ratio_moments(
            [columns[j]], weight, definition, method, float(nominal[j]), prefix
        )
    if combined:
        averaged = _averaged(nominal, denominators)
        if not noisy.any():
            return NoisyScore(name, averaged, 0.0, averaged, n_samples)
        # The outputs with Y_k = 0 have weight 0, as in scikit-learn.
        kept = [columns[j] for j in np.flatnonzero(noisy | (denominators != 0))]
        mean, var = ratio_moments(kept, weight, definition, method)
        return NoisyScore(name, mean, var, averaged, n_samples, method)
    if variance_weighted:  # one output, or every Y_k is 0: uniform weights
        multioutput = "uniform_average"
    distributions = (
        output_distributions(
            r2_distribution, y_true, y_pred, sigma, weight, nominal=nominal
        )
        if n_positive > 1 and force_finite and not centred
        else None
    )
    return aggregate_outputs(
        name,
        nominal,
        expected,
        variance,
        n_samples,
        multioutput,
        method,
        distributions=distributions,
    )
