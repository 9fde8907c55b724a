"""Exact moments of RMSE = √MSE under Gaussian label error.

User guide: :ref:`formula_rmse`.

With ``p_i = w_i / Σ w`` (``1/M`` without weights), ``MSE = Σ p_i e_i²`` and
``e_i ~ N(d_i, σ_i²)``. The identity ``√x = (1/(2√π)) ∫₀^∞ (1 − e^{−tx}) t^{−3/2} dt``
gives, with ``m = E[MSE]``,

    b := √m − E[√MSE] = (1/(2√π)) ∫₀^∞ [L(t) − e^{−tm}] t^{−3/2} dt ≥ 0,
    L(t) = E e^{−t·MSE} = Π_i (1 + a_i)^{−1/2} exp(−t p_i d_i² / (1 + a_i)),
    a_i = 2 t p_i σ_i²,

so that ``E[RMSE] = √m − b`` and ``Var[RMSE] = m − E[RMSE]² = 2√m b − b²`` (no
cancellation). With ``Λ(t) = log L(t) + t m = Σ ½(a_i − log1p a_i) + t p_i d_i²
a_i/(1 + a_i) ≥ 0`` the integrand is ``e^{−tm} expm1(Λ) t^{−3/2}``.

The integral is taken in ``x = log(t m)`` by adaptive Gauss–Kronrod (7/15
points) on panels of ``[−40, 40]``; the part beyond the point where the
rigorous bound ``L(t₀)/√(π t₀)`` of the remaining tail (``L`` decreases) is
negligible is dropped. Each node costs ``O(M)`` in principle. To make it
``O(1)`` for most nodes, the samples are grouped by the size of ``s_i = a_i/A``
(``A = max_i a_i``): the samples with small ``a_i`` enter through the
convergent power series of ``a − log1p(a)`` and ``a/(1 + a)`` (samples with
``a_i ≤ 1/32``), whose
coefficients are power sums ``Σ q_i s_i^n`` computed once; only the few
samples with a large ``a_i`` are evaluated one by one. The machinery
(:class:`~._quadrature.BucketedPowerSums`, :func:`~._quadrature.gauss_kronrod`)
is shared with the R² quadrature.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._quadrature import CHUNK_ROWS, SERIES_TERMS, BucketedPowerSums, gauss_kronrod

__all__ = ["rmse_moments", "rmse_moments_delta", "rmse_nominal"]

_INV_2_SQRT_PI = 0.5 / math.sqrt(math.pi)
#: Below this ``CV² = Var[MSE]/E[MSE]²`` the delta method is exact to double
#: precision (its relative error is of order ``CV``).
_CV2_DELTA_EXACT = 1e-32


def _half_a_minus_log1p(a: np.ndarray) -> np.ndarray:
    """``½(a − log1p a)`` without cancellation (5-term series below 1e-3)."""
    out = np.empty_like(a)
    small = a < 1e-3
    x = a[small]
    out[small] = 0.5 * x * x * (0.5 - x * (1 / 3 - x * (0.25 - x * (0.2 - x / 6))))
    y = a[~small]
    out[~small] = 0.5 * (y - np.log1p(y))
    return out


def _rmse_families(base: np.ndarray) -> np.ndarray:
    """``q = (1, k)`` from ``base = k``."""
    return np.concatenate([np.ones((base.shape[0], 1)), base], axis=1)


class _RMSEIntegrand:
    """``Λ``, ``log L`` and the integrand of ``b/√m`` in ``x = log(t m)`` (``m = 1``).

    ``c_i = 2 p_i σ_i²/m`` and ``k_i = p_i d_i²/m`` for the noisy samples and
    ``k₀ = Σ_exact p_i d_i²/m`` (so ``k₀ + Σ k + Σ c/2 = 1``); at ``t m = eˣ``:
    ``a_i = eˣ c_i``, ``Λ = Σ ½(a_i − log1p a_i) + eˣ Σ k_i a_i/(1 + a_i)`` and
    ``log L = Λ − eˣ``. Where ``Λ > 1`` the integrand is ``L − e^{−eˣ}``; there
    ``log L`` is summed directly, ``−eˣ k₀ + Σ [−½ log1p a_i − eˣ k_i/(1 + a_i)]``
    (for the series samples ``Λ_i − eˣ(k_i + c_i/2)``, with ``Λ_i ≤ a_i ·…``),
    because ``Λ − eˣ`` would cancel when the noisy samples carry most of ``m``.
    """

    def __init__(self, sums: BucketedPowerSums, c_max: float, k_exact: float) -> None:
        self.c_max = c_max
        self.k_exact = k_exact
        self.sums = sums
        n = np.arange(SERIES_TERMS + 1)
        sign = np.where(n % 2 == 0, 1.0, -1.0)
        # ½ Σ_{n≥2} (−1)^n a^n / n   and   Σ_{n≥1} (−1)^{n−1} a^n
        self.log_coef = np.where(n >= 2, 0.5 * sign / np.maximum(n, 1), 0.0)
        self.frac_coef = np.where(n >= 1, -sign, 0.0)
        # Σ_bucket (k_i + c_i/2): the share of m of each bucket.
        self.bucket_m = sums.sums[:, 1, 0] + 0.5 * c_max * (
            sums.tops * sums.sums[:, 0, 1]
        )

    def parts(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(Λ, log L)`` at the nodes ``x``."""
        x = np.asarray(x, dtype=float)
        et = np.exp(x)
        scale = et * self.c_max
        n_lead, factor = self.sums.split(scale)
        series = factor > 0.0
        powers = factor[:, :, None] ** np.arange(SERIES_TERMS + 1)
        lam = np.einsum("kjn,jn->k", powers * self.log_coef, self.sums.sums[:, 0])
        lam += et * np.einsum(
            "kjn,jn->k", powers * self.frac_coef, self.sums.sums[:, 1]
        )
        log_l = lam - et * (self.k_exact + series @ self.bucket_m)

        def direct(a_scale: np.ndarray, s: np.ndarray, q: np.ndarray) -> np.ndarray:
            a = a_scale[:, None] * s
            e = a_scale / self.c_max
            lam_part = _half_a_minus_log1p(a) @ q[:, 0] + e * (
                (a / (1.0 + a)) @ q[:, 1]
            )
            log_part = -0.5 * (np.log1p(a) @ q[:, 0]) - e * (
                (1.0 / (1.0 + a)) @ q[:, 1]
            )
            return np.stack([lam_part, log_part], axis=1)

        extra = self.sums.direct(scale, n_lead, direct, 2)
        return lam + extra[:, 0], log_l + extra[:, 1]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        et = np.exp(x)
        lam, log_l = self.parts(x)
        out = np.empty_like(lam)
        small = lam <= 1.0
        out[small] = np.exp(-et[small]) * np.expm1(lam[small])
        big = ~small
        out[big] = np.exp(np.minimum(log_l[big], 0.0)) - np.exp(-et[big])
        return (out * np.exp(-0.5 * x))[None, :]


class _RMSEData:
    """One output's inputs, read block by block (never copied whole).

    ``scale = max(|d|, σ)`` keeps every square representable (σ ~ 1e-300 or
    1e200). With ``d̃ = d/scale``, ``σ̃ = σ/scale`` and ``p = w/Σw``:
    ``m = Σ p(d̃² + σ̃²)``, ``c = 2pσ̃²/m``, ``k = pd̃²/m``, ``k₀ = Σ_{c=0} k``
    and ``cv2 = Var[MSE]/E[MSE]² = Σ (c²/2 + 2kc)``.
    """

    def __init__(
        self, y_true: np.ndarray, y_pred: np.ndarray, sigma: Any, weight: Any
    ) -> None:
        self.y_true, self.y_pred = y_true, y_pred
        self.sigma, self.weight = sigma, weight
        n = y_true.shape[0]
        self.n = n
        self.scalar = isinstance(sigma, float)
        d_max, s_max = 0.0, sigma if self.scalar else 0.0
        for i in range(0, n, CHUNK_ROWS):
            d = self._d(i)
            d_max = max(d_max, float(d.max()), -float(d.min()))
            if not self.scalar:
                s_max = max(s_max, float(sigma[i : i + CHUNK_ROWS].max()))
        self.scale = max(d_max, s_max)
        self.nominal = 0.0
        if self.scale == 0.0:
            return
        self.w_total = float(n) if weight is None else float(weight.sum())
        sum_d2 = sum_s2 = sum_var = k_exact = 0.0
        c_max, c_min, n_noisy = 0.0, math.inf, 0
        for i in range(0, n, CHUNK_ROWS):
            d2, s2 = self._squares(i)
            noisy = s2 > 0.0
            sum_d2 += float(d2.sum())
            sum_s2 += float(s2.sum())
            sum_var += float(np.sum(s2 * (2.0 * s2 + 4.0 * d2)))
            k_exact += float(d2[~noisy].sum())
            if noisy.any():
                c_max = max(c_max, float(s2[noisy].max()))
                c_min = min(c_min, float(s2[noisy].min()))
                n_noisy += int(np.count_nonzero(noisy))
        m = sum_d2 + sum_s2
        if m == 0.0:  # only zero-weight rows differ from zero: nothing to do
            self.scale = 0.0
            return
        self.m = m
        self.nominal = self.scale * math.sqrt(sum_d2)
        self.k_exact = k_exact / m
        self.cv2 = sum_var / (m * m)
        self.c_max = 2.0 * c_max / m
        self.n_noisy = n_noisy
        self.uniform = c_min == c_max

    def _d(self, i: int) -> np.ndarray:
        return self.y_true[i : i + CHUNK_ROWS] - self.y_pred[i : i + CHUNK_ROWS]

    def _squares(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """``(p d̃², p σ̃²)`` of block ``i``."""
        d2 = self._d(i) / self.scale
        d2 *= d2
        if self.scalar:
            s2 = np.full(d2.shape, (self.sigma / self.scale) ** 2)
        else:
            s2 = self.sigma[i : i + CHUNK_ROWS] / self.scale
            s2 *= s2
        if self.weight is None:
            p = 1.0 / self.n
        else:
            p = self.weight[i : i + CHUNK_ROWS] / self.w_total
        d2 *= p
        s2 *= p
        return d2, s2

    def source(self, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
        """``(s = c/c_max, base = k)`` of the noisy samples of rows ``start:stop``."""
        d2, s2 = self._squares(start)
        d2, s2 = d2[: stop - start], s2[: stop - start]
        noisy = s2 > 0.0
        s = s2[noisy] * (2.0 / (self.m * self.c_max))
        return np.minimum(s, 1.0), (d2[noisy] / self.m)[:, None]


def rmse_moments(
    y_true: np.ndarray, y_pred: np.ndarray, sigma: Any, weight: np.ndarray | None
) -> tuple[float, float, float]:
    """Exact ``(E[RMSE], Var[RMSE], nominal RMSE)`` for one output.

    ``y_true`` and ``y_pred`` are 1-D (possibly strided) arrays, ``sigma`` a
    float or a 1-D array, ``weight`` None or 1-D non-negative weights. Memory
    is bounded by the block size, whatever the number of samples.
    """
    data = _RMSEData(y_true, y_pred, sigma, weight)
    if data.scale == 0.0:
        return 0.0, 0.0, 0.0
    root_m = data.scale * math.sqrt(data.m)
    if data.n_noisy == 0:  # every label exact: no quadrature
        return data.nominal, 0.0, data.nominal
    if data.cv2 < _CV2_DELTA_EXACT:
        # The noise is below double precision against the residuals: the
        # delta method's relative error, of order CV, is below 1e-16 there
        # (and the quadrature's tolerance, a multiple of CV², underflows).
        return rmse_moments_delta(y_true, y_pred, sigma, weight)
    sums = BucketedPowerSums(
        data.source,
        data.n,
        SERIES_TERMS,
        _rmse_families,
        uniform=data.uniform,
        chunk=CHUNK_ROWS,
    )
    integrand = _RMSEIntegrand(sums, data.c_max, data.k_exact)
    # Delta-method b/√m sets the absolute tolerance.
    atol = 1e-15 * (data.cv2 / 8.0)
    # Drop the tail beyond x where L(t)/√(π t) (a bound on it) is negligible.
    upper = 40.0
    for block in (np.arange(0.0, 8.0, 2.0), np.arange(8.0, 40.0, 2.0)):
        log_l = integrand.parts(block)[1]
        small = log_l - 0.5 * block - 0.5 * math.log(math.pi) < math.log(1e-3 * atol)
        if small.any():
            upper = float(block[np.argmax(small)])
            break
    n_panels = max(4, math.ceil((upper + 40.0) / 2.5))
    beta = _INV_2_SQRT_PI * float(
        gauss_kronrod(
            integrand,
            -40.0,
            upper,
            n_panels=n_panels,
            atol=np.array([atol / _INV_2_SQRT_PI]),
        )[0]
    )
    expected = root_m * (1.0 - beta)
    variance = data.scale * data.scale * data.m * beta * (2.0 - beta)
    return expected, variance, data.nominal


def rmse_moments_delta(
    y_true: np.ndarray, y_pred: np.ndarray, sigma: Any, weight: np.ndarray | None
) -> tuple[float, float, float]:
    """Standard delta method: ``E ≈ √m − v/(8 m^{3/2})``, ``Var ≈ v/(4m)``.

    User guide: :ref:`formula_rmse`.
    """
    data = _RMSEData(y_true, y_pred, sigma, weight)
    if data.scale == 0.0:
        return 0.0, 0.0, 0.0
    root_m = data.scale * math.sqrt(data.m)
    expected = root_m * (1.0 - data.cv2 / 8.0)
    # Products of Python floats give inf beyond the float64 range (** raises).
    variance = data.scale * data.scale * (data.m * data.cv2 / 4.0)
    return expected, variance, data.nominal


#: Mean squared errors in this range are summed without scaling: neither the
#: squares nor their sum left the normal float64 range.
_MSE_NORMAL = (1e-290, 1e300)


def rmse_nominal(
    y_true: np.ndarray, y_pred: np.ndarray, weight: np.ndarray | None, mse: float
) -> float:
    """The nominal RMSE of one output: ``√mse`` as scikit-learn computes it.

    ``mse`` is the plain weighted mean of the squared residuals. Where it left
    the normal range (residuals beyond ~1e150 overflow, below ~1e-145 lose
    digits to underflow), the residuals are summed again in units of the
    largest one. ``sigma`` plays no part.
    """
    in_range = _MSE_NORMAL[0] < mse < _MSE_NORMAL[1]
    if in_range or (mse == 0.0 and not np.any(y_true != y_pred)):
        return math.sqrt(mse)
    if mse < 0.0:  # negative sample weights: scikit-learn's sqrt gives NaN
        return math.nan
    n = y_true.shape[0]
    d_max = max(
        float(np.max(np.abs(y_true[i : i + CHUNK_ROWS] - y_pred[i : i + CHUNK_ROWS])))
        for i in range(0, n, CHUNK_ROWS)
    )
    total = 0.0
    for i in range(0, n, CHUNK_ROWS):
        d = (y_true[i : i + CHUNK_ROWS] - y_pred[i : i + CHUNK_ROWS]) / d_max
        d *= d
        total += float(np.sum(d if weight is None else d * weight[i : i + CHUNK_ROWS]))
    w_total = float(n) if weight is None else float(weight.sum())
    return d_max * math.sqrt(total / w_total)
