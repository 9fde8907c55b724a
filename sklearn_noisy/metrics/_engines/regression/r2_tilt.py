"""The tilted moments of one output's ``1 - X/Y`` (R², explained variance) under
the exponential tilt ``e^{-tY}``, read block by block, and their sum over the
outputs (user guide: :ref:`formula_r2`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import comb

from ....utils._arrays import chunk_of, weighted_sum
from .quadrature import CHUNK_ROWS, SERIES_TERMS, BucketedPowerSums

__all__ = ["R2Data", "R2Integrand", "SummedIntegrand", "delta_parts"]

#: Labels whose scaled variance ``w (σ/S)²`` is below this are exact for the
#: numerics (subnormal ``τ`` would overflow the integrand's ratios to NaN).
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
_EMPTY = (math.inf, -math.inf)


def _extend(bounds: tuple[float, float], values: np.ndarray) -> tuple[float, float]:
    """``(min, max)`` of ``bounds`` and ``values``."""
    if values.size == 0:
        return bounds
    return min(bounds[0], float(values.min())), max(bounds[1], float(values.max()))


class R2Integrand:
    """One output's tilted moments at tilts ``t``; ``c`` centres ``Z = X - cY``,
    ``second``: also the moments of ``Z``."""

    def __init__(self, data: R2Data, c: float, second: bool) -> None:
        self.sums = BucketedPowerSums(
            data.source,
            data.n,
            SERIES_TERMS + 3,
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
        """``(log L, E_t[X], E_t[Z], Var_t[Z])`` under the tilt ``e^{-tY}``
        (``log L`` alone with ``log_only``; ``Z``'s None unless ``second``)."""
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


class R2Data:
    """One output's inputs read block by block (``Σ w = M``, labels scaled by
    ``S`` and centred at the tilted mean's limit), its counts and delta sums."""

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
                w = None if weight is None else weight[i : i + CHUNK_ROWS]
                total += weighted_sum(
                    y_true[i : i + CHUNK_ROWS] - y_pred[i : i + CHUNK_ROWS], w
                )
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
        """The rank of the centred noise (``numeric``: of the numerics)."""
        n_noisy = self.n_noisy_num if numeric else self.n_noisy
        return n_noisy if n_noisy < self.n_eff else self.n_eff - 1

    def _ratio_bounded(self, low: float, high: float) -> bool:
        """Whether ``X/Y`` is bounded though ``Y`` reaches 0 (exact labels in
        ``[low, high]``)."""
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
        self.parts = delta_parts(totals, w_total, self.centred)

    def _tau(self, w: np.ndarray, s: np.ndarray) -> np.ndarray:
        """``τ = w (σ/S)²`` of a block, 0 below :data:`_TAU_EXACT`."""
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
        """``(τ/τ_max, q = (1, w, wu, wu², wd, wdu, wd²))`` of the noisy rows
        ``start:stop``."""
        y, d, s, w = self._block(start)
        tau = self._tau(w, s)
        noisy = tau > 0.0
        u = (y[noisy] - self.centre) / self.scale
        w, d = w[noisy], d[noisy] / self.scale
        wu, wd = w * u, w * d
        q = np.column_stack([np.ones_like(w), w, wu, wu * u, wd, wd * u, wd * d])
        return np.minimum(tau[noisy] / self.tau_max, 1.0), q


def delta_parts(
    totals: np.ndarray, w_total: float, centred: bool = False
) -> np.ndarray:
    """``(μ_X, μ_Y, V_X, V_Y, C_XY)`` from ``totals = (Σ wd², Σ wũ², Σ τ, Σ τ²,
    Σ wτ, Σ wτ², Σ wd²τ, Σ wũ²τ, Σ wdũτ)``, ``τ = wσ²``."""
    wdd, wuu, sum_tau, sum_tau2, sum_wtau, sum_wtau2, wddt, wuut, wdut = totals
    trace = sum_tau2 - 2.0 * sum_wtau2 / w_total + (sum_wtau / w_total) ** 2
    mu_x = wdd + sum_tau - (sum_wtau / w_total if centred else 0.0)
    mu_y = wuu + sum_tau - sum_wtau / w_total
    v_x = 2.0 * (trace if centred else sum_tau2) + 4.0 * wddt
    v_y = 2.0 * trace + 4.0 * wuut
    c_xy = 2.0 * (trace if centred else sum_tau2 - sum_wtau2 / w_total) + 4.0 * wdut
    return np.array([mu_x, mu_y, v_x, v_y, c_xy])


class SummedIntegrand:
    """``[t L E_t[X], t² L (Var_t[Z] + E_t[Z]²)]`` at ``t = eˣ/μ_Y``, summed
    over the outputs (at ``t β_k``); exact outputs add the constants ``(X, Y)``."""

    def __init__(
        self,
        outputs: list[tuple[float, R2Data]],
        constants: np.ndarray,
        mu_y: float,
        c: float,
        second: bool,
    ) -> None:
        self.parts = [
            (beta, R2Integrand(data, c, second))
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
