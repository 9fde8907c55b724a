"""Exact moments of the variance-weighted R² of several outputs.

User guide: :ref:`formula_r2`.

scikit-learn's ``multioutput="variance_weighted"`` weights each output's R² by
its total sum of squares ``Y_k``, which makes the average ``1 - X/Y`` with
``X = Σ_k X_k`` and ``Y = Σ_k Y_k`` over the outputs with ``Y_k > 0``. The
outputs' label errors are independent, so under the exponential tilt
``e^{-tY}`` they stay independent:

    E[X/Y]          = ∫₀^∞ Π_k L_k(t) Σ_k E_t[X_k] dt,
    E[(X - cY)²/Y²] = ∫₀^∞ t Π_k L_k(t) [Σ_k Var_t(Z_k) + (Σ_k E_t[Z_k])²] dt

with ``Z_k = X_k - cY_k``; the one-output machinery of
:mod:`~sklearn_noisy.metrics._r2_quadrature` gives ``L_k`` and the tilted
moments of every output at its own scale (``t_k = t S_k²``), and outputs with
exact labels add constants. Existence: ``Y`` can reach 0 only if every
output's ``Y_k`` can; the rank is the sum of the outputs' ranks.
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
    delta_ratio,
    make_integrand,
)
from ._regression_kernels import r2_sums

__all__ = ["r2_variance_weighted_moments"]


def _rank(data: _R2Data, numeric: bool = False) -> int:
    n_noisy = data.n_noisy_num if numeric else data.n_noisy
    return n_noisy if n_noisy < data.n_eff else data.n_eff - 1


class _Combined:
    """The outputs of one variance-weighted R², in units of ``U = E[Y]``."""

    def __init__(
        self, columns: list[tuple[Any, Any, Any]], weight: Any, centred: bool
    ) -> None:
        self.noisy: list[_R2Data] = []
        exact = np.zeros(2)  # X and Y of the outputs with exact labels
        numeric = np.zeros(2)  # and of those whose σ underflows in the numerics
        parts = []
        for y_true, y_pred, sigma in columns:
            data = _R2Data(y_true, y_pred, sigma, weight, centred)
            if data.n_noisy == 0 or data.n_noisy_num == 0:
                x, y = _exact_sums(y_true, y_pred, weight, centred)
                if y > 0.0:  # Y_k = 0: weight 0, as in scikit-learn
                    (exact if data.n_noisy == 0 else numeric)[:] += (x, y)
                if data.n_noisy == 0:
                    continue
            self.noisy.append(data)
            s2 = data.scale * data.scale
            parts.append(data.parts * np.array([s2, s2, s2 * s2, s2 * s2, s2 * s2]))
        total = np.sum(parts, axis=0) + np.array([*exact, 0.0, 0.0, 0.0])
        self.unit = float(total[1])
        self.alpha = np.array([d.scale**2 / self.unit for d in self.noisy])
        self.exact_y = float(exact[1])
        self.constants = (exact + numeric) / self.unit
        unit = self.unit
        self.delta_mean, self.delta_var, self.cv2 = delta_ratio(
            total / np.array([unit, unit, unit**2, unit**2, unit**2])
        )

    def existence(self, numeric: bool = False) -> tuple[bool, bool, int]:
        """``(bounded, all ratio-bounded, rank)`` of ``Y`` near 0."""
        if numeric:
            noisy = [d for d in self.noisy if d.n_noisy_num > 0]
            bounded = self.constants[1] > 0.0 or any(d.bounded_num for d in noisy)
            ratio = all(d.ratio_bounded_num for d in noisy)
        else:
            noisy = self.noisy
            bounded = self.exact_y > 0.0 or any(d.bounded for d in noisy)
            ratio = all(d.ratio_bounded for d in noisy)
        rank = sum(_rank(d, numeric) for d in noisy)
        return bool(bounded), bool(ratio), rank


def _exact_sums(
    y_true: Any, y_pred: Any, weight: Any, centred: bool
) -> tuple[float, float]:
    """``X_k`` and ``Y_k`` of an output with exact labels (weights ``Σ w = M``)."""
    numerator, denominator, scale = r2_sums(y_true, y_pred, weight, centred=centred)
    factor = scale * scale * (1.0 if weight is None else y_true.shape[0] / weight.sum())
    return numerator * factor, denominator * factor


class _Integrand:
    """``[e^x L M_X, e^{2x} L (V_Z + M_Z²)]`` in units of ``U``, at nodes ``x``."""

    def __init__(self, combined: _Combined, second: bool) -> None:
        self.combined = combined
        self.second = second
        c = combined.delta_mean
        self.parts = [
            (alpha, make_integrand(data, second, c))
            for alpha, data in zip(combined.alpha, combined.noisy, strict=True)
            if data.n_noisy_num > 0
        ]
        x_const, y_const = combined.constants
        self.exact = (x_const, y_const, x_const - c * y_const)

    def log_l(self, x: np.ndarray) -> np.ndarray:
        et = np.exp(x)
        log_l = -et * self.exact[1]
        for alpha, integrand in self.parts:
            log_l += integrand.tilted(et * alpha, log_only=True)[0]
        return log_l

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        et = np.exp(x)
        log_l = -et * self.exact[1]
        mean_x = np.full(x.shape, self.exact[0])
        mean_z = np.full(x.shape, self.exact[2])
        var_z = np.zeros(x.shape)
        for alpha, integrand in self.parts:
            moments = integrand.tilted(et * alpha)
            log_l += moments[0]
            mean_x += alpha * moments[1]
            if self.second:
                mean_z += alpha * moments[2]
                var_z += alpha * alpha * moments[3]
        lik = np.exp(np.minimum(log_l, 0.0))
        first = et * lik * mean_x
        if not self.second:
            return first[None, :]
        return np.stack([first, et * et * lik * (var_z + mean_z * mean_z)])


def _upper_limit(integrand: _Integrand, combined: _Combined) -> tuple[float, bool]:
    """Where ``L`` underflows or, if ``Y`` can reach 0, the power law takes over."""
    bounded, _, _ = combined.existence(numeric=True)
    tau_min = [
        alpha * data.tau_min
        for alpha, data in zip(combined.alpha, combined.noisy, strict=True)
        if data.n_noisy_num > 0
    ]
    a_min = 2.0 * min(tau_min)
    for block in (
        np.arange(0.0, 12.0, 4.0),
        np.arange(12.0, 40.0, 4.0),
        np.arange(40.0, _X_CAP, 4.0),
    ):
        tiny = integrand.log_l(block) < _LOG_TINY
        saturated = (a_min * np.exp(block) >= 1e8) & (not bounded)
        stop = tiny | saturated
        if stop.any():
            first = int(np.argmax(stop))
            return float(block[first]), bool(saturated[first] and not tiny[first])
    return _X_CAP, not bounded


def _message(rank: int, what: str, label: str = "R²") -> str:
    need = 2 if what == "expected value" else 4
    return (
        f"The {what} of the variance-weighted {label} does not exist (it is "
        f"infinite): the total sum of squares of all outputs can come "
        f"arbitrarily close to 0, and the noise has rank r = {rank} summed over "
        f"the outputs; the {what} is finite only when r > {need}."
    )


def r2_variance_weighted_moments(
    columns: list[tuple[Any, Any, Any]],
    weight: Any,
    *,
    method: str = "exact",
    centred: bool = False,
    label: str = "R²",
) -> R2Moments:
    """``E`` and ``Var`` of ``1 - Σ X_k / Σ Y_k`` (outputs with ``Y_k > 0``).

    ``columns`` holds ``(y_true, y_pred, sigma)`` of each output, 1-D, as for
    :func:`~sklearn_noisy.metrics._r2_quadrature.r2_moments`; some label
    must be noisy. ``method="delta"``: the second-order delta method for the
    ratio of the two sums. ``centred``: of the explained variance.
    """
    combined = _Combined(columns, weight, centred)
    bounded, ratio_bounded, rank = combined.existence()
    bounded = bounded or ratio_bounded
    if not (bounded or rank > 2):
        return R2Moments(-math.inf, math.inf, _message(rank, "expected value", label))
    var_exists = bounded or rank > 4
    message = None if var_exists else _message(rank, "variance", label)
    if method == "delta" or combined.cv2 <= _CV2_DELTA_EXACT:
        variance = combined.delta_var if var_exists or method == "delta" else math.inf
        return R2Moments(1.0 - combined.delta_mean, variance, message)
    integrand = _Integrand(combined, var_exists)
    if not integrand.parts:  # every noisy σ below the double range
        return R2Moments(1.0 - combined.delta_mean, 0.0, message)
    upper, power_tail = _upper_limit(integrand, combined)
    n_comp = 2 if var_exists else 1
    atol = np.array(
        [
            1e-16 * max(abs(combined.delta_mean), 1e-300),
            1e-15 * max(combined.delta_var, 1e-300),
        ]
    )[:n_comp]
    integrals = gauss_kronrod(
        integrand,
        _X_LOWER,
        upper,
        n_panels=max(4, math.ceil((upper - _X_LOWER) / 2.5)),
        atol=atol,
        rtol=np.array([1e-14, 1e-12])[:n_comp],
    )
    if power_tail:
        _, ratio_num, rank_num = combined.existence(numeric=True)
        end = integrand(np.array([upper]))[:, 0]
        if ratio_num:
            kappa = np.full(n_comp, rank_num / 2.0)
        else:
            kappa = np.array([rank_num / 2.0 - 1.0, rank_num / 2.0 - 2.0])[:n_comp]
        integrals = integrals + np.where(
            kappa > 0, end / np.where(kappa > 0, kappa, 1.0), 0.0
        )
    mean_ratio = float(integrals[0])
    if var_exists:
        variance = max(
            float(integrals[1]) - (mean_ratio - combined.delta_mean) ** 2, 0.0
        )
    else:
        variance = math.inf
    return R2Moments(1.0 - mean_ratio, variance, message)
