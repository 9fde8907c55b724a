"""The forward ``1 - X/Y`` (R², explained variance) under Gaussian label error.

:func:`r2_forward` takes each output's sums once and combines the outputs as
scikit-learn does; :func:`ratio_moments` gives the mean and variance of one
output's ratio or of the variance-weighted ratio ``Σ X_k / Σ Y_k`` of several
outputs, by quadrature over the exponential tilt ``e^{-tY}`` or by the delta
method, and decides which moments exist (user guide: :ref:`formula_r2`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import comb
from sklearn.exceptions import UndefinedMetricWarning

from ...._noisy_score import NoisyScore
from ....utils._arrays import chunk_of
from ....utils._warnings import warn
from ..._definitions.regression import RegressionLoss
from .distributions import output_distributions, r2_distribution
from .estimands import aggregate_outputs, delta_numerator
from .estimands import r2_sums as estimand_r2_sums
from .quadrature import CHUNK_ROWS, SERIES_TERMS, BucketedPowerSums, gauss_kronrod
from .sums import nominal_r2_sums, output_column, r2_from_sums

__all__ = ["delta_ratio", "r2_count_forward", "r2_forward", "ratio_moments"]

#: Labels whose scaled variance ``w (σ/S)²`` is below this are exact for the
#: numerics (see :meth:`_R2Data._tau`).
_TAU_EXACT = 1e-280

# Families q_i of the power sums, and the (k, β) pairs of Σ q τ^k r^β.
_ONE, _W, _WU, _WUU, _WD, _WDU, _WDD = range(7)
_COMBOS = ((0, 1), (0, 2), (1, 1), (1, 2), (1, 3), (2, 2), (2, 3), (3, 3))
_C01, _C02, _C11, _C12, _C13, _C22, _C23, _C33 = range(8)
#: (1 + a)^{−β} = Σ_n C(β+n−1, n) (−a)^n
_BINOM = np.array(
    [
        [
            comb(beta + n - 1, n, exact=True) * (-1.0) ** n
            for n in range(SERIES_TERMS + 1)
        ]
        for beta in (0, 1, 2, 3)
    ]
)
#: log1p(a) = Σ_{n≥1} (−1)^{n−1} a^n / n
_LOG1P = np.array([0.0] + [(-1.0) ** (n - 1) / n for n in range(1, SERIES_TERMS + 1)])
#: Below this ``CV²`` the delta method is exact to double precision and is
#: returned as the exact value (user guide: formula_r2, "Tiny noise").
_CV2_DELTA_EXACT = 1e-15
_X_LOWER = -40.0
_X_CAP = 150.0
_LOG_TINY = -745.0
_EMPTY = (math.inf, -math.inf)


def _extend(bounds: tuple[float, float], values: np.ndarray) -> tuple[float, float]:
    """``(min, max)`` of ``bounds`` and ``values``."""
    if values.size == 0:
        return bounds
    return min(bounds[0], float(values.min())), max(bounds[1], float(values.max()))


def _r2_families(base: np.ndarray) -> np.ndarray:
    """``q = (1, w, wu, wu², wd, wdu, wd²)`` from ``base = (w, u, d)``."""
    w, u, d = base.T
    wu, wd = w * u, w * d
    return np.column_stack([np.ones_like(w), w, wu, wu * u, wd, wd * u, wd * d])


class _R2Integrand:
    """One output's tilted moments at tilts ``t`` (its scaled units).

    ``c`` is the centre of ``Z = X - cY``; ``second``: also the moments of
    ``Z`` (user guide: formula_r2).
    """

    def __init__(self, data: _R2Data, c: float, second: bool) -> None:
        self.sums = BucketedPowerSums(
            data.source,
            data.n,
            SERIES_TERMS + 3,
            _r2_families,
            uniform=data.tau_min == data.tau_max,
            chunk=CHUNK_ROWS,
        )
        self.data, self.tau_max, self.c, self.second = data, data.tau_max, c, second

    def _direct(self, scale: np.ndarray, s: np.ndarray, q: np.ndarray) -> np.ndarray:
        """Per-sample sums ``Σ q τ^k r^β`` (56 columns) and ``Σ log1p(a)``."""
        a = scale[:, None] * s
        r = 1.0 / (1.0 + a)
        tr = (self.tau_max * s) * r
        r2 = r * r
        tr2 = tr * tr
        out = np.empty((scale.size, 7, len(_COMBOS) + 1))
        for index, column in enumerate(
            (r, r2, tr, tr * r, tr * r2, tr2, tr2 * r, tr2 * tr)
        ):
            out[:, :, index] = column @ q
        out[:, 0, -1] = np.log1p(a) @ q[:, _ONE]
        # The other families' last column is not used, but it is summed with
        # the rest: uninitialised memory there could hold NaN or inf.
        out[:, 1:, -1] = 0.0
        return out.reshape(scale.size, -1)

    def _sums(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``T[node, family, combo] = Σ q τ^k r^β`` and ``Σ log1p(a)``."""
        scale = 2.0 * t * self.tau_max
        n_lead, factor = self.sums.split(scale)
        series = factor > 0.0
        power_sums = self.sums.sums  # (n_buckets, 7, n_terms + 4)
        n = np.arange(SERIES_TERMS + 1)
        powers = factor[:, :, None] ** n * series[:, :, None]
        total = np.empty((t.size, 7, len(_COMBOS)))
        tops = self.sums.tops
        for index, (k, beta) in enumerate(_COMBOS):
            weighted = (
                power_sums[:, :, k : k + SERIES_TERMS + 1] * (tops**k)[:, None, None]
            )
            total[:, :, index] = (
                np.einsum("ijn,jfn->if", powers * _BINOM[beta], weighted)
                * self.tau_max**k
            )
        log1p_sum = np.einsum(
            "ijn,jn->i", powers * _LOG1P, power_sums[:, _ONE, : SERIES_TERMS + 1]
        )
        extra = self.sums.direct(scale, n_lead, self._direct, 7 * (len(_COMBOS) + 1))
        extra = extra.reshape(t.size, 7, len(_COMBOS) + 1)
        total += extra[:, :, :-1]
        log1p_sum += extra[:, 0, -1]
        total[:, _W : _WUU + 1, _C01] += self.data.exact_sums
        total[:, _W : _WUU + 1, _C02] += self.data.exact_sums
        return total, log1p_sum

    def tilted(self, t: np.ndarray, log_only: bool = False) -> tuple[np.ndarray, ...]:
        """``(log L, E_t[X], E_t[Z], Var_t[Z])`` at the tilts ``t`` (scaled units).

        ``E_t`` is the expectation under the exponential tilt ``e^{-tY}``;
        ``Z = X - cY``. Only ``log L`` with ``log_only``; ``E_t[Z]`` and
        ``Var_t[Z]`` are None unless ``self.second``.
        """
        T, log1p_sum = self._sums(t)
        s_r = T[:, _W, _C01]
        s_ru = T[:, _WU, _C01]
        ubar = s_ru / s_r
        exponent = T[:, _WUU, _C01] - ubar * s_ru  # Σ w r (u − ū)²
        w_total = float(self.data.n)
        log_l = -0.5 * log1p_sum - 0.5 * np.log(s_r / w_total) - t * exponent
        if log_only:
            return (log_l,)
        gamma = 2.0 * t / s_r

        def xi(combo: int) -> np.ndarray:
            return T[:, _WU, combo] - ubar * T[:, _W, combo]

        def xi2(combo: int) -> np.ndarray:
            return (
                T[:, _WUU, combo]
                - 2.0 * ubar * T[:, _WU, combo]
                + ubar * ubar * T[:, _W, combo]
            )

        def dxi(combo: int) -> np.ndarray:
            return T[:, _WDU, combo] - ubar * T[:, _WD, combo]

        sum_psi = T[:, _ONE, _C11]
        sum_wpsi = T[:, _W, _C11]
        gw2 = gamma * T[:, _W, _C22]  # γ Σ w ψ²
        wv2 = self.data.wdd_total - 4.0 * t * dxi(_C11) + 4.0 * t * t * xi2(_C22)
        tr_wg = sum_psi + gw2
        mean_x = wv2 + tr_wg
        g1 = 1.0 + gamma * sum_wpsi
        centred = self.data.centred
        if centred:  # minus [(Σ w (m − ŷ))² + wᵀGw]/W, Σ w d = 0
            kappa = -2.0 * t * xi(_C11) / w_total
            centring = w_total * kappa * kappa + sum_wpsi * g1 / w_total
            mean_x = mean_x - centring
        if not self.second:
            return log_l, mean_x, None, None
        c = self.c
        cw = c / w_total
        mean_z = (1.0 - c) * tr_wg + cw * sum_wpsi * g1 + wv2 - c * xi2(_C02)
        tr_wgwg = T[:, _ONE, _C22] + 2.0 * gamma * T[:, _W, _C33] + gw2 * gw2
        # A = α diag(w) + β wwᵀ: β = c/W (R²), or −(1 − c)/W (A = (1 − c)C)
        beta = -(1.0 - c) / w_total if centred else cw
        tr_agag = (
            (1.0 - c) ** 2 * tr_wgwg
            + 2.0 * (1.0 - c) * beta * g1 * g1 * T[:, _W, _C22]
            + (beta * sum_wpsi * g1) ** 2
        )
        fvv = (
            T[:, _WDD, _C11]
            - 2.0 * (2.0 * t * dxi(_C22) + c * dxi(_C12))
            + 4.0 * t * t * xi2(_C33)
            + 4.0 * t * c * xi2(_C23)
            + c * c * xi2(_C13)
        )
        fv = T[:, _WD, _C11] - 2.0 * t * xi(_C22) - c * xi(_C12)
        if centred:  # b − κw
            mean_z = mean_z - centring
            fvv = fvv - 2.0 * kappa * fv + kappa * kappa * sum_wpsi
            fv = fv - kappa * sum_wpsi
        var_z = 2.0 * tr_agag + 4.0 * (fvv + (gamma * fv) * fv)
        return log_l, mean_x, mean_z, var_z


class _R2Data:
    """One output's inputs, read block by block, with its counts and delta sums.

    ``w`` is normalised to ``Σ w = M``; labels are scaled by ``S`` and centred
    at the limit of the tilted mean for ``t → ∞`` (user guide: formula_r2).
    """

    def __init__(
        self,
        y_true: np.ndarray,
        y_pred: np.ndarray,
        sigma: Any,
        weight: Any,
        centred: bool = False,
    ) -> None:
        self.y_true, self.y_pred = y_true, y_pred
        self.sigma, self.weight = sigma, weight
        self.centred = centred
        n = y_true.shape[0]
        self.n = n
        self.w_factor = 1.0 if weight is None else n / float(weight.sum())
        self.shift = 0.0
        if centred:
            total = 0.0
            for i in range(0, n, CHUNK_ROWS):
                rows = slice(i, i + CHUNK_ROWS)
                d = y_true[rows] - y_pred[rows]
                total += float(np.sum(d if weight is None else weight[rows] * d))
            self.shift = total / (n if weight is None else float(weight.sum()))
        s_min = self._scan()
        self.n_noisy_num = 0
        if self.n_noisy == 0:
            return
        self._centre(s_min)
        self._delta_sums()

    def _scan(self) -> float:
        """Pass 1: counts, ranges and the scale; returns the smallest ``σ > 0``."""
        y_range = pred_range = exact_range = s_range = _EMPTY
        d_max, n_noisy, n_eff = 0.0, 0, 0
        for i in range(0, self.n, CHUNK_ROWS):
            y, d, s, w = self._block(i)
            positive = w > 0.0
            yp, s_pos = y[positive], s[positive]
            noisy = s_pos > 0.0
            y_range = _extend(y_range, yp)
            pred_range = _extend(pred_range, self.y_pred[i : i + CHUNK_ROWS][positive])
            exact_range = _extend(exact_range, yp[~noisy])
            s_range = _extend(s_range, s_pos[noisy])
            d_max = max(d_max, float(np.abs(d).max()))
            n_eff += int(yp.size)
            n_noisy += int(np.count_nonzero(noisy))
        self.n_noisy, self.n_eff = n_noisy, n_eff
        self.bounded = exact_range[1] > exact_range[0]
        # The constant prediction of every positively weighted sample, if any.
        self.constant_pred = pred_range[0] if pred_range[0] == pred_range[1] else None
        self.ratio_bounded = self._ratio_bounded(*exact_range)
        self.scale = max(y_range[1] - y_range[0], d_max, max(s_range[1], 0.0))
        return s_range[0]

    def rank(self, numeric: bool = False) -> int:
        """The rank of the centred noise (``numeric``: of the labels noisy in
        the numerics)."""
        n_noisy = self.n_noisy_num if numeric else self.n_noisy
        return n_noisy if n_noisy < self.n_eff else self.n_eff - 1

    def _ratio_bounded(self, low: float, high: float) -> bool:
        """Whether ``X/Y`` is bounded although ``Y`` can reach 0, the exact
        labels spanning ``[low, high]`` (user guide: formula_r2)."""
        if self.centred and self.constant_pred is not None:
            return True
        return low == high == self.constant_pred

    def _centre(self, s_min: float) -> None:
        """Pass 2: the numerically exact labels, and the centre."""
        sums = np.zeros(4)  # Σ w ȳ, Σ w over exact; Σ π ȳ, Σ π (π = (σ_min/σ)²)
        tau_range = num_range = _EMPTY
        n_noisy_num = 0
        for i in range(0, self.n, CHUNK_ROWS):
            y, _, s, w = self._block(i)
            tau = self._tau(w, s)
            exact = (w > 0.0) & (tau == 0.0)
            noisy = tau > 0.0
            precision = (s_min / s[noisy]) ** 2
            sums += (
                np.sum(w[exact] * y[exact]),
                w[exact].sum(),
                np.sum(precision * y[noisy]),
                precision.sum(),
            )
            num_range = _extend(num_range, y[exact])
            tau_range = _extend(tau_range, tau[noisy])
            n_noisy_num += int(np.count_nonzero(noisy))
        exact_num = math.isfinite(num_range[0])
        self.centre = sums[0] / sums[1] if exact_num else sums[2] / sums[3]
        self.n_noisy_num = n_noisy_num
        self.bounded_num = num_range[1] > num_range[0]
        self.ratio_bounded_num = self._ratio_bounded(*num_range)
        self.tau_min, self.tau_max = tau_range

    def _delta_sums(self) -> None:
        """Pass 3: the delta-method sums, Σ w d², and the exact labels' sums."""
        n = self.n
        w_total = float(n)
        mean_u = 0.0
        for i in range(0, n, CHUNK_ROWS):
            y, _, _, w = self._block(i)
            mean_u += float(np.sum(w * (y - self.centre)))
        mean_u /= w_total * self.scale
        totals = np.zeros(9)
        exact_sums = np.zeros(3)
        for i in range(0, n, CHUNK_ROWS):
            y, d, s, w = self._block(i)
            u = (y - self.centre) / self.scale
            d = d / self.scale
            tau = self._tau(w, s)
            ub = u - mean_u
            wd, wu, wtb = w * d, w * ub, w * tau
            wdd, wuu = wd * d, wu * ub
            terms = (wdd, wuu, tau, tau * tau, wtb, wtb * tau, wdd * tau, wuu * tau)
            totals += np.stack([*terms, wd * ub * tau]).sum(axis=1)
            exact = tau == 0.0
            we, ue = w[exact], u[exact]
            exact_sums += (we.sum(), np.sum(we * ue), np.sum(we * ue * ue))
        self.wdd_total = float(totals[0])
        self.exact_sums = exact_sums
        self.parts = _delta_parts(totals, w_total, self.centred)

    def _tau(self, w: np.ndarray, s: np.ndarray) -> np.ndarray:
        """``τ = w (σ/S)²`` of a block, flushed to 0 below :data:`_TAU_EXACT`.

        Such a label moves R² by a relative ~τ; subnormal ``τ`` would overflow
        the integrand's ratios to NaN.
        """
        tau = w * (s / self.scale) ** 2
        tau[tau < _TAU_EXACT] = 0.0
        return tau

    def _block(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(ȳ, d, σ, w)`` of block ``i`` (``w`` normalised to ``Σ w = M``)."""
        rows = slice(i, i + CHUNK_ROWS)
        y = self.y_true[rows]
        d = y - self.y_pred[rows] - self.shift  # ``centred``: shifted (X stays)
        s = np.broadcast_to(chunk_of(self.sigma, rows), y.shape)
        w = (
            np.ones(y.shape)
            if self.weight is None
            else self.weight[rows] * self.w_factor
        )
        return y, d, s, w

    def source(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """``(τ/τ_max, base = (w, u, d))`` of the noisy rows ``start:stop``."""
        y, d, s, w = self._block(start)
        tau = self._tau(w, s)
        noisy = tau > 0.0
        u = (y[noisy] - self.centre) / self.scale
        base = np.column_stack([w[noisy], u, d[noisy] / self.scale])
        return np.minimum(tau[noisy] / self.tau_max, 1.0), base


def _delta_parts(
    totals: np.ndarray, w_total: float, centred: bool = False
) -> np.ndarray:
    """``(μ_X, μ_Y, V_X, V_Y, C_XY)``, the moments of the two sums.

    ``totals`` are ``(Σ wd², Σ wũ², Σ τ, Σ τ², Σ wτ, Σ wτ², Σ wd²τ, Σ wũ²τ,
    Σ wdũτ)`` with ``τ = wσ²`` and ``ũ`` centred at the weighted mean (user
    guide: formula_r2, formula_explained_variance for ``centred``).
    """
    wdd, wuu, sum_tau, sum_tau2, sum_wtau, sum_wtau2, wddt, wuut, wdut = totals
    mu_x = wdd + sum_tau
    mu_y = wuu + sum_tau - sum_wtau / w_total
    v_x = 2.0 * sum_tau2 + 4.0 * wddt
    v_y = 2.0 * (sum_tau2 - 2.0 * sum_wtau2 / w_total + (sum_wtau / w_total) ** 2)
    v_y += 4.0 * wuut
    c_xy = 2.0 * (sum_tau2 - sum_wtau2 / w_total) + 4.0 * wdut
    if centred:
        trace = sum_tau2 - 2.0 * sum_wtau2 / w_total + (sum_wtau / w_total) ** 2
        mu_x = mu_x - sum_wtau / w_total
        v_x = 2.0 * trace + 4.0 * wddt
        c_xy = 2.0 * trace + 4.0 * wdut
    return np.array([mu_x, mu_y, v_x, v_y, c_xy])


def delta_ratio(parts: np.ndarray) -> tuple[float, float, float]:
    """Second-order delta ``E[X/Y]``, first-order ``Var[X/Y]``, and ``CV²``.

    ``parts`` as :func:`_delta_parts` returns them; ``CV² = V_X/μ_X² +
    V_Y/μ_Y²`` is the relative size of the terms the delta method leaves out.
    """
    mu_x, mu_y, v_x, v_y, c_xy = (float(value) for value in parts)
    ratio = mu_x / mu_y
    mean = ratio - c_xy / mu_y**2 + mu_x * v_y / mu_y**3
    var = delta_numerator(ratio, v_x, v_y, c_xy) / mu_y**2
    cv2 = v_x / mu_x**2 + v_y / mu_y**2 if mu_x > 0.0 else math.inf
    return mean, max(var, 0.0), cv2


class _Integrand:
    """``[t L E_t[X], t² L (Var_t[Z] + E_t[Z]²)]`` at ``t = eˣ/μ_Y``.

    Summed over the outputs (each at its own scale, ``t β_k``), which stay
    independent under the tilt; the outputs with numerically exact labels add
    the constants ``(X, Y)``.
    """

    def __init__(
        self,
        outputs: list[tuple[float, _R2Data]],
        constants: np.ndarray,
        mu_y: float,
        c: float,
        second: bool,
    ) -> None:
        self.parts = [
            (beta, _R2Integrand(data, c, second))
            for beta, data in outputs
            if data.n_noisy_num > 0
        ]
        x_const, y_const = constants
        self.exact = (x_const, y_const, x_const - c * y_const)
        self.mu_y, self.second = mu_y, second

    def __call__(self, x: np.ndarray, log_only: bool = False) -> np.ndarray:
        t = np.exp(np.asarray(x, dtype=float)) / self.mu_y
        log_l = -t * self.exact[1]
        mean_x = np.full(t.shape, self.exact[0])
        mean_z = np.full(t.shape, self.exact[2])
        var_z = np.zeros(t.shape)
        for beta, part in self.parts:
            moments = part.tilted(t * beta, log_only)
            log_l += moments[0]
            if log_only:
                continue
            mean_x += beta * moments[1]
            if self.second:
                mean_z += beta * moments[2]
                var_z += beta * beta * moments[3]
        if log_only:
            return log_l
        lik = np.exp(np.minimum(log_l, 0.0))
        first = t * lik * mean_x
        if not self.second:
            return first[None, :]
        return np.stack([first, t * t * lik * (var_z + mean_z * mean_z)])


def _upper_limit(
    integrand: _Integrand, tau_min: float, bounded: bool
) -> tuple[float, bool]:
    """The upper limit in ``x`` and whether a power-law tail is added there.

    The limit is where ``L(t)`` underflows, or (``Y`` able to reach 0) where
    every noisy ``2tτ_i ≥ 1e8`` and the integrands follow their power law.
    """
    for block in (
        np.arange(0.0, 12.0, 4.0),
        np.arange(12.0, 40.0, 4.0),
        np.arange(40.0, _X_CAP, 4.0),
    ):
        tiny = integrand(block, log_only=True) < _LOG_TINY
        a_min = 2.0 * np.exp(block) / integrand.mu_y * tau_min
        saturated = (a_min >= 1e8) & (not bounded)
        stop = tiny | saturated
        if stop.any():
            first = int(np.argmax(stop))
            return float(block[first]), bool(saturated[first] and not tiny[first])
    return _X_CAP, not bounded


def _warn_missing(
    what: str, rank: int, label: str, data: _R2Data | None, method: str, prefix: str
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
    """``(E, Var)`` of ``1 - Σ X_k / Σ Y_k`` over the outputs ``columns``.

    ``columns`` holds ``(y_true, y_pred, sigma, X, Y)`` of each output: 1-D
    arrays, ``sigma`` a float or 1-D, and the sums of the labels as given
    (weights normalised to ``Σ w = M``); some label must be noisy. ``nominal``:
    the one output's value where its labels are exact for the numerics; None
    for the variance-weighted ratio of several outputs. A moment that does not
    exist is warned of (``prefix`` names the output).
    """
    noisy: list[_R2Data] = []
    exact, numeric = np.zeros(2), np.zeros(2)  # (X, Y) of the exact outputs
    for y_true, y_pred, sigma, x, y in columns:
        data = _R2Data(y_true, y_pred, sigma, weight, definition.centred)
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
    integrand = _Integrand(outputs, constants, float(total[1]), delta_mean, var_exists)
    if not integrand.parts:  # σ below the double range: exact to ~1e-600
        expected = 1.0 - delta_mean if nominal is None else nominal
        return expected, 0.0 if var_exists else math.inf
    live = [(b, data) for b, data in outputs if data.n_noisy_num > 0]
    upper, power_tail = _upper_limit(
        integrand,
        min(b * data.tau_min for b, data in live),
        constants[1] > 0.0 or any(data.bounded_num for _, data in live),
    )
    n_comp = 2 if var_exists else 1
    atol = np.array(
        [1e-16 * max(abs(delta_mean), 1e-300), 1e-15 * max(delta_var, 1e-300)]
    )
    integrals = gauss_kronrod(
        integrand,
        _X_LOWER,
        upper,
        n_panels=max(4, math.ceil((upper - _X_LOWER) / 2.5)),
        atol=atol[:n_comp],
        rtol=np.array([1e-14, 1e-12])[:n_comp],
    )
    if power_tail:
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
    """``(μ_X, μ_Y, V_X, V_Y, C_XY)`` of one output's counts around ``rate``.

    With the Poisson cumulants ``κ₂ = κ₃ = κ₄ = λ``: ``Var (d + e)² =
    λ(2d + 1)² + 2λ²`` and ``Cov((d + e)², (c + e)²) = λ(2d + 1)(2c + 1) +
    2λ²``, the means' own noise left out of the (co)variances (first order).
    """
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


def r2_count_forward(
    definition: RegressionLoss,
    inputs: tuple[np.ndarray, np.ndarray, Any, np.ndarray | None, Any],
    *,
    method: str,
    force_finite: bool,
) -> NoisyScore | list[NoisyScore]:
    """The forward ``1 - X/Y`` of counts drawn around the exact rates ``y_true``.

    The delta method (:func:`delta_ratio`) on the exact Poisson moments of the
    two sums; ``variance_weighted`` on their sums over the outputs, which are
    independent. Labels with rate 0 are exact: without any noisy one the
    metric is its nominal value.
    """
    y_true, y_pred, _, weight, multioutput = inputs
    name, n_outputs = definition.name, y_true.shape[1]
    nominal, expected, variance, denominators = np.zeros((4, n_outputs))
    parts = np.zeros((n_outputs, 5))
    for j in range(n_outputs):
        x, y, scale = nominal_r2_sums(
            y_true[:, j], y_pred[:, j], weight, centred=definition.centred
        )
        nominal[j] = expected[j] = r2_from_sums(x, y, force_finite=force_finite)
        denominators[j] = y * scale**2
        parts[j] = _count_parts(y_true[:, j], y_pred[:, j], weight, definition.centred)
        if parts[j, 3] > 0.0 and parts[j, 1] > 0.0:
            mean, variance[j], _ = delta_ratio(parts[j])
            expected[j] = 1.0 - mean
    if isinstance(multioutput, str) and multioutput == "variance_weighted":
        averaged = float(
            np.average(
                nominal, weights=denominators if np.any(denominators != 0) else None
            )
        )
        total = parts.sum(axis=0)
        if n_outputs == 1 or not (total[3] > 0.0 and total[1] > 0.0):
            mean, var = expected[0] if n_outputs == 1 else averaged, variance[0]
        else:
            ratio, var, _ = delta_ratio(total)
            mean = 1.0 - ratio
        return NoisyScore(name, mean, var, averaged, y_true.shape[0], "delta")
    return aggregate_outputs(
        name, nominal, expected, variance, y_true.shape[0], multioutput, "delta"
    )


def _has_noise(sigma: Any, weight: np.ndarray | None) -> bool:
    """Whether some positively weighted label of one output is noisy."""
    if isinstance(sigma, float):
        return sigma > 0.0
    noisy = sigma > 0.0
    return bool(np.any(noisy if weight is None else noisy & (weight > 0.0)))


def _offsets_forward(
    definition: RegressionLoss,
    inputs: tuple[np.ndarray, np.ndarray, Any, np.ndarray | None, Any],
    force_finite: bool,
    shared: Any,
) -> NoisyScore | list[NoisyScore]:
    """The forward ``1 - X/Y`` under batch offsets, by the delta method.

    On exact ``y_true`` the truth sums hold ``4 μᵀAΣAμ − 2 tr`` and the floors
    ``2 tr``: the forward (co)variances are their sum with twice the floor, and
    ``E X = 2X − A`` (user guide: :ref:`shared_offsets`).
    """
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
    nominal, expected, variance = np.zeros((3, n_outputs))
    for j in range(n_outputs):
        nominal[j] = r2_from_sums(
            float(sums.sse[j]), float(sums.sst[j]), force_finite=force_finite
        )
        parts = np.array(
            [
                2.0 * sums.sse[j] - sums.sse_truth[j],
                2.0 * sums.sst[j] - sums.sst_truth[j],
                sums.var_sse[j] + 2.0 * sums.floor_sse[j],
                sums.var_sst[j] + 2.0 * sums.floor_sst[j],
                sums.cov[j] + 2.0 * sums.floor_cov[j],
            ]
        )
        mean, var, _ = delta_ratio(parts)
        expected[j], variance[j] = 1.0 - mean, var
    return aggregate_outputs(
        definition.name,
        nominal,
        expected,
        variance,
        y_true.shape[0],
        multioutput,
        "delta",
    )


def r2_forward(
    definition: RegressionLoss,
    inputs: tuple[np.ndarray, np.ndarray, Any, np.ndarray | None, Any],
    *,
    method: str,
    force_finite: bool,
    shared: Any = None,
) -> NoisyScore | list[NoisyScore]:
    """The forward ``1 - X/Y`` of validated inputs, combined as ``multioutput`` says.

    ``definition.centred``: ``X`` of the residuals centred at their weighted
    mean (explained variance), which is 0 for one sample: the metric is then
    its nominal value (scikit-learn's 1.0, or NaN without ``force_finite``).
    One positively weighted sample makes ``Y`` identically 0: a noisy R² is
    then 0 with ``force_finite`` (variance 0), else ``-inf`` (variance NaN).
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
        noisy[j] = _has_noise(sigma_j, weight)
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
        averaged = float(
            np.average(
                nominal, weights=denominators if np.any(denominators != 0) else None
            )
        )
        if not noisy.any():
            return NoisyScore(name, averaged, 0.0, averaged, n_samples)
        # The outputs with Y_k = 0 have weight 0, as in scikit-learn.
        kept = [columns[j] for j in np.flatnonzero(noisy | (denominators != 0))]
        mean, var = ratio_moments(kept, weight, definition, method)
        return NoisyScore(name, mean, var, averaged, n_samples, method)
    if variance_weighted:
        # One output, or one positively weighted sample (every Y_k is 0):
        # scikit-learn's weights are then uniform.
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
