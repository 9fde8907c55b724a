"""Exact moments of R² = 1 − SSE/SST under Gaussian label error.

User guide: :ref:`formula_r2`.

Notation (weights ``w_i``, ``W = Σ w_i``; without weights ``w_i = 1``):
``X = Σ w_i (y_i − ŷ_i)²``, ``Y = Σ w_i (y_i − ȳ_w)²`` with ``ȳ_w`` the weighted
mean of the noisy labels, and ``ρ = X/Y`` so that ``R² = 1 − ρ``. With
``Y = yᵀC y``, ``C = diag(w) − w wᵀ/W``, the identities

    E[X/Y]  = ∫₀^∞ E[X e^{−tY}] dt,        E[Z²/Y²] = ∫₀^∞ t E[Z² e^{−tY}] dt

are evaluated in closed form at every ``t``: under the exponential tilt
``e^{−tY}`` the labels stay Gaussian, with covariance
``G = diag(σ²r) + γ ψψᵀ`` (Sherman–Morrison) where ``r_i = 1/(1 + 2t w_i σ_i²)``,
``ψ_i = w_i σ_i² r_i`` and ``γ = 2t/Σ w r``, and with mean
``m_i = ū + r_i (ȳ_i − ū)``, ``ū = Σ w r ȳ / Σ w r`` (the tilted mean written
without the cancelling ``wᵀu`` sums of the user guide's formula; it is the
same quantity). Then

    L(t) = E e^{−tY} = Π_i (1 + a_i)^{−1/2} (Σ w r / W)^{−1/2} exp(−t Σ w r (ȳ − ū)²)

(the det form ``Π D_i · (1/W) Σ w/D_i``; the exponent is a weighted sum of
squares, so it never cancels), and ``X`` and ``Z = X − cY`` are Gaussian
quadratic forms whose tilted mean and variance are traces and sums over the
structured ``G``. The variance is computed centred: with ``c`` the
delta-method value of ``E[ρ]``,
``Var[ρ] = E[(X − cY)²/Y²] − (E[ρ] − c)²``, which avoids the cancellation of
``E[ρ²] − E[ρ]²``.

All sums over samples have the form ``Σ_i q_i τ_i^k r_i^β`` (``τ = wσ²``,
``q`` a product of ``w``, ``ȳ`` and ``d = ȳ − ŷ``), so the samples with
small ``2tτ_i`` enter through power series whose coefficients are computed
once (:class:`~._quadrature.BucketedPowerSums`), and a node costs
``O(1)`` apart from the few samples with a large ``2tτ_i``.

**Explained variance** (``centred``): ``X = Σ w (d − d̄_w)²`` is the same
quadratic form ``C`` as ``Y``, in the residuals. It does not change when a
constant is added to ``ŷ``, so ``ŷ`` is shifted to make the true residuals'
weighted mean 0; under the tilt ``Σ w (m − ŷ) = −2t Σ w τ r (ȳ − ū)``, and the
centring subtracts ``[(Σ w (m − ŷ))² + wᵀGw]/W`` from ``E_t[X]`` and
``E_t[Z]``, replaces ``diag(w)`` by ``C`` in ``tr((AG)²)`` and ``b`` by
``b − κw`` (``κ = Σ w (m − ŷ)/W``) in ``bᵀGb``.

**Existence.** Let ``r`` be the rank of the centred noise (the number of noisy
samples if some sample is exact, else ``M − 1``). If ``Y`` can reach 0 (fewer
than two exact samples with distinct values), ``E[R²]`` is finite iff
``r > 2`` and ``Var[R²]`` iff ``r > 4``; the integrands then decay like a
power of ``t``, and the quadrature adds the tail analytically.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import comb

from ._quadrature import CHUNK_ROWS, SERIES_TERMS, BucketedPowerSums

__all__ = ["R2Moments", "delta_ratio", "make_integrand"]

#: Labels whose scaled variance ``w (σ/S)²`` is below this are exact for the
#: numerics (far below double precision; see :meth:`_R2Data._tau`).
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
#: Below this ``CV²`` (see :func:`delta_ratio`) the second-order delta
#: method is exact to double precision (its relative error is about ``CV²``),
#: while the quadrature's centred integrands cancel to ``1e-16/CV²``: the
#: delta values are returned as the exact ones.
_CV2_DELTA_EXACT = 1e-15
_X_LOWER = -40.0
_X_CAP = 150.0
_LOG_TINY = -745.0


class R2Moments:
    """Result of :func:`r2_moments` for one output."""

    __slots__ = ("expected", "message", "noisy", "variance")

    def __init__(
        self,
        expected: float,
        variance: float,
        message: str | None,
        *,
        noisy: bool = True,
    ) -> None:
        self.expected = expected
        self.variance = variance
        self.message = message
        self.noisy = noisy  # some positively weighted label is noisy


def _r2_families(base: np.ndarray) -> np.ndarray:
    """``q = (1, w, wu, wu², wd, wdu, wd²)`` from ``base = (w, u, d)``."""
    w, u, d = base[:, 0], base[:, 1], base[:, 2]
    q = np.empty((base.shape[0], 7))
    q[:, _ONE] = 1.0
    q[:, _W] = w
    np.multiply(w, u, out=q[:, _WU])
    np.multiply(q[:, _WU], u, out=q[:, _WUU])
    np.multiply(w, d, out=q[:, _WD])
    np.multiply(q[:, _WD], u, out=q[:, _WDU])
    np.multiply(q[:, _WD], d, out=q[:, _WDD])
    return q


class _R2Integrand:
    """Tilted moments at ``t = eˣ/μ_Y`` (scaled units), vectorised over nodes."""

    def __init__(
        self,
        sums: BucketedPowerSums,
        tau_max: float,
        exact_sums: np.ndarray,
        w_total: float,
        wdd_total: float,
        mu_y: float,
        c: float,
        centred: bool = False,
    ) -> None:
        self.centred = centred
        self.tau_max = tau_max
        self.sums = sums
        self.exact_sums = exact_sums  # Σ over exact samples of (w, wu, wu²)
        self.w_total = w_total
        self.wdd_total = wdd_total
        self.mu_y = mu_y
        self.c = c
        self.second = True

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
        total[:, _W : _WUU + 1, _C01] += self.exact_sums
        total[:, _W : _WUU + 1, _C02] += self.exact_sums
        return total, log1p_sum

    def log_l(self, x: np.ndarray) -> np.ndarray:
        return self.evaluate(np.asarray(x, dtype=float), log_only=True)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.evaluate(np.asarray(x, dtype=float))

    def evaluate(self, x: np.ndarray, log_only: bool = False) -> np.ndarray:
        t = np.exp(x) / self.mu_y
        if log_only:
            return self.tilted(t, log_only=True)[0]
        log_l, mean_x, mean_z, var_z = self.tilted(t)
        lik = np.exp(np.minimum(log_l, 0.0))
        first = t * lik * mean_x
        if not self.second:
            return first[None, :]
        second = t * t * lik * (var_z + mean_z * mean_z)
        return np.stack([first, second])

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
        log_l = -0.5 * log1p_sum - 0.5 * np.log(s_r / self.w_total) - t * exponent
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
        wv2 = self.wdd_total - 4.0 * t * dxi(_C11) + 4.0 * t * t * xi2(_C22)
        tr_wg = sum_psi + gw2
        mean_x = wv2 + tr_wg
        g1 = 1.0 + gamma * sum_wpsi
        w_total = self.w_total
        if self.centred:  # minus [(Σ w (m − ŷ))² + wᵀGw]/W, Σ w d = 0
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
        beta = -(1.0 - c) / w_total if self.centred else cw
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
        if self.centred:  # b − κw
            mean_z = mean_z - centring
            fvv = fvv - 2.0 * kappa * fv + kappa * kappa * sum_wpsi
            fv = fv - kappa * sum_wpsi
        var_z = 2.0 * tr_agag + 4.0 * (fvv + (gamma * fv) * fv)
        return log_l, mean_x, mean_z, var_z


def _delta_parts(
    totals: np.ndarray, w_total: float, centred: bool = False
) -> np.ndarray:
    """``(μ_X, μ_Y, V_X, V_Y, C_XY)``, the moments of the two sums, weighted.

    User guide: :ref:`formula_r2`.

    ``totals`` are the sums ``(Σ wd², Σ wũ², Σ τ, Σ τ², Σ wτ, Σ wτ², Σ wd²τ,
    Σ wũ²τ, Σ wdũτ)`` with ``τ = wσ²`` and ``ũ`` centred at the weighted mean:
    ``μ_X = Σ wd² + Σ τ``, ``μ_Y = Σ wũ² + Σ τ − Σ wτ/W``,
    ``V_X = Σ (2τ² + 4wd²τ)``,
    ``V_Y = 2[Σ τ² − 2 Σ wτ²/W + (Σ wτ/W)²] + 4 Σ wũ²τ`` and
    ``C_XY = 2[Σ τ² − Σ wτ²/W] + 4 Σ wdũτ``. ``centred`` (``d`` centred at
    its weighted mean, ``X`` of matrix ``C`` too): ``X`` takes ``Y``'s forms,
    ``μ_X = Σ wd² + Σ τ − Σ wτ/W``, ``V_X`` and ``C_XY`` the bracket of ``V_Y``
    with ``4 Σ wd²τ`` and ``4 Σ wdũτ``.
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

    ``parts`` as :func:`_delta_parts` returns them. ``CV² = V_X/μ_X² +
    V_Y/μ_Y²`` sets the relative size of the terms the delta method leaves
    out.
    """
    mu_x, mu_y, v_x, v_y, c_xy = (float(value) for value in parts)
    ratio = mu_x / mu_y
    mean = ratio - c_xy / mu_y**2 + mu_x * v_y / mu_y**3
    var = (v_x - 2.0 * ratio * c_xy + ratio * ratio * v_y) / mu_y**2
    cv2 = v_x / mu_x**2 + v_y / mu_y**2 if mu_x > 0.0 else math.inf
    return mean, max(var, 0.0), cv2


class _R2Data:
    """One output's inputs, read block by block (never copied whole).

    ``w`` is normalised to ``Σ w = M``. Labels are scaled by
    ``S = max(spread of y_true, |d|, σ)`` and centred at ū(∞), the limit of the
    tilted mean ``ū = Σ w r ȳ / Σ w r`` for ``t → ∞``: the mean of the exact
    labels if any, else the 1/σ²-weighted mean. The least noisy labels, which
    dominate the exponent ``Σ w r (ȳ − ū)²`` at large ``t``, then sit near 0
    and it does not cancel. "Exact" in the numerics includes σ so small that
    ``(σ/S)²`` underflows: such labels are exact to far below double precision
    (the existence rule still counts them as noisy).
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
        # ``centred``: ŷ shifted by the weighted mean residual (X does not move)
        self.shift = 0.0
        if centred:
            total = 0.0
            for i in range(0, n, CHUNK_ROWS):
                rows = slice(i, i + CHUNK_ROWS)
                d = y_true[rows] - y_pred[rows]
                total += float(np.sum(d if weight is None else weight[rows] * d))
            self.shift = total / (n if weight is None else float(weight.sum()))
        s_min = self._scan()
        if self.n_noisy == 0:
            return
        self._centre(s_min)
        self._delta_sums()

    def _scan(self) -> float:
        """Pass 1: counts for the existence rule, ranges for the scale.

        Returns the smallest positive ``σ`` (of a positively weighted sample).
        """
        d_max = s_max = 0.0
        y_min, y_max, s_min = math.inf, -math.inf, math.inf
        n_noisy = n_eff = n_exact = 0
        exact_min, exact_max = math.inf, -math.inf
        pred_min, pred_max = math.inf, -math.inf
        for i in range(0, self.n, CHUNK_ROWS):
            y, d, s, w = self._block(i)
            positive = w > 0.0
            yp = y[positive]
            if yp.size:
                y_min, y_max = min(y_min, float(yp.min())), max(y_max, float(yp.max()))
                pred = self.y_pred[i : i + CHUNK_ROWS][positive]
                pred_min = min(pred_min, float(pred.min()))
                pred_max = max(pred_max, float(pred.max()))
            d_max = max(d_max, float(np.abs(d).max()))
            s_pos = s[positive]
            if s_pos.size:
                s_max = max(s_max, float(s_pos.max()))
            noisy = s_pos > 0.0
            n_eff += int(yp.size)
            n_noisy += int(np.count_nonzero(noisy))
            if noisy.any():
                s_min = min(s_min, float(s_pos[noisy].min()))
            exact_y = yp[~noisy]
            if exact_y.size:
                n_exact += exact_y.size
                exact_min = min(exact_min, float(exact_y.min()))
                exact_max = max(exact_max, float(exact_y.max()))
        self.n_noisy, self.n_eff = n_noisy, n_eff
        self.bounded = n_exact >= 2 and exact_max > exact_min
        # The constant prediction of every positively weighted sample, if any.
        self.constant_pred = pred_min if pred_min == pred_max else None
        self.ratio_bounded = self._ratio_bounded(n_exact, exact_min, exact_max)
        self.scale = max(y_max - y_min, d_max, s_max)
        return s_min

    def _ratio_bounded(self, n_exact: int, exact_min: float, exact_max: float) -> bool:
        """Whether ``X/Y`` is bounded although ``Y`` can reach 0.

        With the exact labels all equal to ``v`` and every prediction equal to
        ``v`` too, both sums are quadratic forms in ``e = y - v`` without
        linear terms, and ``Y`` is positive definite on the noisy labels (the
        exact ones have ``e = 0``): ``X/Y`` lies between the extreme
        generalised eigenvalues, and every moment of R² exists. ``centred``:
        a constant prediction makes ``X = Y``.
        """
        if self.centred and self.constant_pred is not None:
            return True
        return (
            n_exact >= 1
            and exact_min == exact_max
            and self.constant_pred is not None
            and self.constant_pred == exact_min
        )

    def _centre(self, s_min: float) -> None:
        """Pass 2: the numerically exact labels, and the centre."""
        sums = np.zeros(4)  # Σ w ȳ, Σ w over exact; Σ π ȳ, Σ π (π = (σ_min/σ)²)
        tau_min, tau_max = math.inf, 0.0
        n_noisy_num = 0
        num_min, num_max = math.inf, -math.inf
        n_exact_num = 0
        for i in range(0, self.n, CHUNK_ROWS):
            y, _, s, w = self._block(i)
            tau = self._tau(w, s)
            exact = (w > 0.0) & (tau == 0.0)
            noisy = tau > 0.0
            if exact.any():
                sums[0] += float(np.sum(w[exact] * y[exact]))
                sums[1] += float(w[exact].sum())
                n_exact_num += int(np.count_nonzero(exact))
                num_min = min(num_min, float(y[exact].min()))
                num_max = max(num_max, float(y[exact].max()))
            if noisy.any():
                precision = (s_min / s[noisy]) ** 2
                sums[2] += float(np.sum(precision * y[noisy]))
                sums[3] += float(precision.sum())
                tau_min = min(tau_min, float(tau[noisy].min()))
                tau_max = max(tau_max, float(tau[noisy].max()))
                n_noisy_num += int(np.count_nonzero(noisy))
        self.centre = sums[0] / sums[1] if n_exact_num else sums[2] / sums[3]
        self.n_noisy_num = n_noisy_num
        self.bounded_num = n_exact_num >= 2 and num_max > num_min
        self.ratio_bounded_num = self._ratio_bounded(n_exact_num, num_min, num_max)
        self.tau_min, self.tau_max = tau_min, tau_max

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
            wd = w * d
            wu = w * ub
            wdd = wd * d
            wuu = wu * ub
            wtb = w * tau
            totals += (
                np.sum(wdd),
                np.sum(wuu),
                np.sum(tau),
                np.sum(tau * tau),
                np.sum(wtb),
                np.sum(wtb * tau),
                np.sum(wdd * tau),
                np.sum(wuu * tau),
                np.sum(wd * ub * tau),
            )
            exact = tau == 0.0
            if exact.any():
                we, ue = w[exact], u[exact]
                exact_sums += (we.sum(), np.sum(we * ue), np.sum(we * ue * ue))
        self.wdd_total = float(totals[0])
        self.exact_sums = exact_sums
        self.parts = _delta_parts(totals, w_total, self.centred)
        self.mu_y = float(self.parts[1])
        self.delta_mean, self.delta_var, self.cv2 = delta_ratio(self.parts)

    def _tau(self, w: np.ndarray, s: np.ndarray) -> np.ndarray:
        """``τ = w (σ/S)²`` of a block, with the numerically exact labels at 0.

        ``τ`` below :data:`_TAU_EXACT` (σ below about 1e-140 times the scale) is
        flushed to 0: such a label moves R² by a relative ~τ, and subnormal
        values of ``τ`` would otherwise overflow the integrand's ratios to NaN.
        """
        tau = w * (s / self.scale) ** 2
        tau[tau < _TAU_EXACT] = 0.0
        return tau

    def _block(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(ȳ, d, σ, w)`` of block ``i`` (``w`` normalised to ``Σ w = M``)."""
        rows = slice(i, i + CHUNK_ROWS)
        y = self.y_true[rows]
        d = y - self.y_pred[rows]
        if self.centred:
            d = d - self.shift
        if isinstance(self.sigma, float):
            s = np.full(y.shape, self.sigma)
        else:
            s = self.sigma[rows]
        if self.weight is None:
            w = np.ones(y.shape)
        else:
            w = self.weight[rows] * self.w_factor
        return y, d, s, w

    def source(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """``(τ/τ_max, base = (w, u, d))`` of the noisy rows ``start:stop``."""
        y, d, s, w = self._block(start)
        tau = self._tau(w, s)
        noisy = tau > 0.0
        base = np.empty((int(np.count_nonzero(noisy)), 3))
        base[:, 0] = w[noisy]
        base[:, 1] = (y[noisy] - self.centre) / self.scale
        base[:, 2] = d[noisy] / self.scale
        return np.minimum(tau[noisy] / self.tau_max, 1.0), base


def make_integrand(data: _R2Data, second: bool, c: float) -> _R2Integrand:
    """The tilted moments of one output (``second``: also those of ``Z = X - cY``)."""
    sums = BucketedPowerSums(
        data.source,
        data.n,
        SERIES_TERMS + 3,
        _r2_families,
        uniform=data.tau_min == data.tau_max,
        chunk=CHUNK_ROWS,
    )
    integrand = _R2Integrand(
        sums,
        data.tau_max,
        data.exact_sums,
        float(data.n),
        data.wdd_total,
        data.mu_y,
        c,
        data.centred,
    )
    integrand.second = second
    return integrand
