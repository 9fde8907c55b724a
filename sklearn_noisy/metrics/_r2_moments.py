"""The exact moments of R² for one output: existence rules and quadrature.

User guide: :ref:`formula_r2`. The integrands and the data passes are in
:mod:`~sklearn_noisy.metrics._r2_quadrature`; this module decides which
moments exist, picks the upper limit and the power-law tail, and integrates.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._quadrature import gauss_kronrod
from ._r2_quadrature import (
    _CV2_DELTA_EXACT,
    _LOG_TINY,
    _X_CAP,
    _X_LOWER,
    R2Moments,
    _R2Data,
    _R2Integrand,
    make_integrand,
)

__all__ = ["r2_moments"]


def _existence_message(
    n_noisy: int, n_eff: int, rank: int, what: str, label: str = "R²"
) -> str:
    need = 2 if what == "expected value" else 4
    if n_noisy < n_eff:
        why = (
            f"{n_noisy} of the {n_eff} labels are noisy and the exact labels do not "
            "take two distinct values, so the noise has rank "
            f"r = {n_noisy}"
        )
    else:
        why = f"all {n_eff} labels are noisy, so the centred noise has rank r = {rank}"
    return (
        f"The {what} of {label} does not exist (it is infinite): {why}. The total "
        "sum of squares can then come arbitrarily close to 0, and the "
        f"{what} of {label} is finite only when r > {need}. Use more samples, or "
        "include at least two exact labels (sigma = 0) with distinct values."
    )


def r2_moments(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    weight: np.ndarray | None,
    *,
    nominal: float,
    method: str = "exact",
    centred: bool = False,
    label: str = "R²",
) -> R2Moments:
    """``E[R²]``, ``Var[R²]`` (and an existence message) for one output.

    ``y_true``, ``y_pred`` are 1-D (possibly strided) arrays, ``sigma`` a float
    or a 1-D array, ``weight`` None or 1-D. ``nominal`` is scikit-learn's
    ``r2_score`` on ``y_true``; it is returned as the expected value when every
    label is exact. Memory is bounded by the block size. ``centred``: the
    explained variance (the residuals centred at their weighted mean).
    ``label`` names the metric in the warnings.
    """
    data = _R2Data(y_true, y_pred, sigma, weight, centred)
    n_noisy, n_eff = data.n_noisy, data.n_eff
    if n_noisy == 0:
        return R2Moments(nominal, 0.0, None, noisy=False)
    rank = n_noisy if n_noisy < n_eff else n_eff - 1
    bounded = data.bounded or data.ratio_bounded
    mean_exists = bounded or rank > 2
    var_exists = bounded or rank > 4
    if not mean_exists:
        return R2Moments(
            -math.inf,
            math.inf,
            _existence_message(n_noisy, n_eff, rank, "expected value", label),
        )
    message = (
        None
        if var_exists
        else _existence_message(n_noisy, n_eff, rank, "variance", label)
    )
    if method == "delta" or data.cv2 <= _CV2_DELTA_EXACT:
        variance = data.delta_var if var_exists or method == "delta" else math.inf
        return R2Moments(1.0 - data.delta_mean, variance, message)
    if data.n_noisy_num == 0:  # σ below the double range: exact to ~1e-600
        return R2Moments(nominal, 0.0 if var_exists else math.inf, message)

    integrals = _integrate(data, var_exists)
    mean_ratio = float(integrals[0])
    if var_exists:
        variance = float(integrals[1]) - (mean_ratio - data.delta_mean) ** 2
        variance = max(variance, 0.0)
    else:
        variance = math.inf
    return R2Moments(1.0 - mean_ratio, variance, message)


def _upper_limit(
    integrand: _R2Integrand, data: _R2Data, mu_y: float
) -> tuple[float, bool]:
    """The upper limit in ``x`` and whether a power-law tail is added there.

    The limit is where ``L(t)`` underflows, or (``Y`` able to reach 0) where
    every noisy ``2tτ_i ≥ 1e8`` and the integrands follow their power law.
    """
    bounded_num = data.bounded_num
    upper, power_tail = _X_CAP, not bounded_num
    # Scan x in blocks (cheap ones first: for large M the first block ends it).
    for block in (
        np.arange(0.0, 12.0, 4.0),
        np.arange(12.0, 40.0, 4.0),
        np.arange(40.0, _X_CAP, 4.0),
    ):
        log_l = integrand.log_l(block)
        a_min = 2.0 * np.exp(block) / mu_y * data.tau_min
        tiny = log_l < _LOG_TINY
        saturated = (a_min >= 1e8) & (not bounded_num)
        stop = tiny | saturated
        if stop.any():
            first = int(np.argmax(stop))
            upper, power_tail = (
                float(block[first]),
                bool(saturated[first] and not tiny[first]),
            )
            break
    return upper, power_tail


def _integrate(data: _R2Data, var_exists: bool) -> np.ndarray:
    """The integrals of ``E[X/Y]`` and (if it exists) ``E[(X − cY)²/Y²]``."""
    mu_y = data.mu_y
    integrand = make_integrand(data, var_exists, data.delta_mean)
    upper, power_tail = _upper_limit(integrand, data, mu_y)
    n_eff = data.n_eff
    rank_num = data.n_noisy_num if data.n_noisy_num < n_eff else n_eff - 1
    delta_mean, delta_var = data.delta_mean, data.delta_var
    n_comp = 2 if var_exists else 1
    atol = np.array(
        [1e-16 * max(abs(delta_mean), 1e-300), 1e-15 * max(delta_var, 1e-300)]
    )[:n_comp]
    n_panels = max(4, math.ceil((upper - _X_LOWER) / 2.5))
    integrals = gauss_kronrod(
        integrand,
        _X_LOWER,
        upper,
        n_panels=n_panels,
        atol=atol,
        rtol=np.array([1e-14, 1e-12])[:n_comp],
    )
    if power_tail:
        end = integrand(np.array([upper]))[:, 0]
        # Integrands in x = log t: t L E_t[X] ~ t^{1 - r/2} and t² L E_t[Z²] ~
        # t^{2 - r/2}; where X/Y is bounded, E_t[X] and E_t[Z²] fall as 1/t
        # and 1/t² too, and both decay as t^{-r/2}.
        if data.ratio_bounded_num:
            kappa = np.full(n_comp, rank_num / 2.0)
        else:
            kappa = np.array([rank_num / 2.0 - 1.0, rank_num / 2.0 - 2.0])[:n_comp]
        integrals = integrals + np.where(
            kappa > 0, end / np.where(kappa > 0, kappa, 1.0), 0.0
        )
    return integrals
