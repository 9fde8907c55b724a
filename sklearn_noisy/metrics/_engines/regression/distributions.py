"""Exact distributions of the MSE, RMSE, R² and MAE over the label noise, by
Gil-Pelaez inversion of their characteristic functions (user guide:
:ref:`exact_intervals`)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import integrate, optimize
from scipy.special import wofz
from scipy.stats import ncx2

from .quadrature import LEGENDRE_64
from .sums import folded_moments, output_column

__all__ = [
    "MAX_FORM_SAMPLES",
    "gil_pelaez_cdf",
    "mae_distribution",
    "mse_distribution",
    "output_distributions",
    "r2_distribution",
]

#: The inversion is offered up to this many noisy samples.
MAX_FORM_SAMPLES = 4096
#: Absolute accuracy asked of each integral (the CDF is a probability).
_EPSABS = 1e-11
_SQRT_HALF = math.sqrt(0.5)
#: The most terms of the midpoint rule before the quadrature takes over.
_MIDPOINT_TERMS = 1 << 12
#: The search for a quantile gives up after this many doublings of its bracket
#: and returns the end of the support (a conservative interval).
_MAX_DOUBLINGS = 48
#: A shift below this (in standard deviations) is the round-off of 0.
_TINY_SHIFT = 1e-9
#: scipy's ncx2 is accurate up to this non-centrality (NaN at 1e12); beyond,
#: the MSE is normal to within its skewness, about 1e-5.
_MAX_NONCENTRALITY = 1e9
#: ``|φ|`` below ``exp(-_DAMPED)`` is negligible (1e-17).
_DAMPED = 40.0
#: The most 64-point Gauss–Legendre panels over a damped form's range before
#: the adaptive quadrature takes over (R²'s forms, one per evaluation: none).
_MAX_PANELS = 64


def _quad(
    function: Callable[[float], float], a: float, b: float, **options: Any
) -> float:
    """:func:`scipy.integrate.quad`'s value, without its ``IntegrationWarning``."""
    return float(integrate.quad(function, a, b, full_output=1, **options)[0])


def _inversion_integrand(
    phi: Callable[[float], complex], y: float
) -> Callable[[float], float]:
    """``u -> Im[e^{-iuy} φ(u)] / u``, the Gil-Pelaez integrand."""

    def integrand(u: float) -> float:
        return (phi(u) * complex(math.cos(u * y), -math.sin(u * y))).imag / u

    return integrand


def gil_pelaez_cdf(phi: Callable[[float], complex], y: float) -> float:
    """``P(X - c <= y)`` from ``phi(u) = E exp(iu(X - c))``, ``X`` of SD about 1
    (the head to ``u = 1/|y|`` in decades, QAWF the oscillating rest)."""
    head = _inversion_integrand(phi, y)
    split = 1.0 if abs(y) < _TINY_SHIFT else max(1.0, 1.0 / abs(y))
    edges = [0.0, *np.geomspace(1.0, split, max(1, math.ceil(math.log10(split))) + 1)]
    total = sum(
        _quad(head, a, b, limit=200, epsabs=_EPSABS)
        for a, b in itertools.pairwise(edges)
        if b > a
    )
    if abs(y) < _TINY_SHIFT:  # no oscillation: the shift is round-off
        tail = _quad(lambda u: phi(u).imag / u, 1.0, np.inf, limit=200, epsabs=_EPSABS)
    else:
        options = {"wvar": abs(y), "limlst": 200, "epsabs": _EPSABS}
        cosine = _quad(
            lambda u: phi(u).imag / u, split, np.inf, weight="cos", **options
        )
        sine = _quad(lambda u: phi(u).real / u, split, np.inf, weight="sin", **options)
        tail = cosine - (sine if y > 0.0 else -sine)
    return min(max(0.5 - (total + tail) / math.pi, 0.0), 1.0)


def _quantile(
    cdf: Callable[[float], float],
    p: float,
    start: float,
    step: float,
    lower: float,
    upper: float,
) -> float:
    """The ``x`` in ``[lower, upper]`` with ``cdf(x) = p`` (Brent), bracket doubling."""
    low, high = max(start - step, lower), min(start + step, upper)
    for _ in range(_MAX_DOUBLINGS):
        if low == lower or cdf(low) <= p:
            break
        step *= 2.0
        low = max(start - step, lower)
    else:  # not bracketed within 2^64 steps: the support's end, conservatively
        return lower
    for _ in range(_MAX_DOUBLINGS):
        if high == upper or cdf(high) >= p:
            break
        step *= 2.0
        high = min(start + step, upper)
    else:
        return upper
    if math.isinf(low) or cdf(low) >= p:
        return low
    if math.isinf(high) or cdf(high) <= p:
        return high
    scale = max(abs(low), abs(high), 1e-300)
    return float(
        optimize.brentq(lambda x: cdf(x) - p, low, high, xtol=1e-11 * scale, rtol=1e-10)
    )


@dataclass(frozen=True, eq=False, repr=False)
class _QuadraticForm:
    """``Q = Z'(diag(d) + ρ v v')Z + 2 b'Z + k``, ``Z`` standard normal, ρ >= 0."""

    d: np.ndarray
    rho: float
    v: np.ndarray
    b: np.ndarray
    k: float
    #: ``φ(u)/u`` and the weights on the nodes ``u`` of each count of panels.
    table: dict = field(default_factory=dict)

    def __getstate__(self) -> dict:  # the table is a cache: not pickled
        return {**self.__dict__, "table": {}}

    def scaled(self, s: float) -> _QuadraticForm:
        return _QuadraticForm(self.d / s, self.rho / s, self.v, self.b / s, self.k / s)

    def shift(self) -> float:
        """The linear phase ``k - b'B⁻¹b`` of the characteristic function."""
        with np.errstate(divide="ignore", invalid="ignore"):
            db = np.where(self.d != 0.0, self.b / self.d, 0.0)
            dv = np.where(self.d != 0.0, self.v / self.d, 0.0)
        correction = float(self.b @ db)
        if self.rho > 0.0:
            denominator = 1.0 + self.rho * float(self.v @ dv)
            if denominator != 0.0:
                correction -= self.rho * float(self.v @ db) ** 2 / denominator
        return self.k - correction

    def phi(self, c: float) -> Callable[[Any], Any]:
        """``u -> E exp(iu(Q - c))`` at a scalar ``u`` or each of an array
        (matrix determinant lemma, Sherman–Morrison)."""
        d, rho, k = self.d, self.rho, self.k
        v, b, b2 = self.v + 0j, self.b + 0j, self.b**2 + 0j  # complex @ real: slow

        def phi(u: Any) -> Any:
            t = np.asarray(u, dtype=np.float64)[..., None]
            factor = 1.0 - 2j * t * d
            r = 1.0 / factor
            log_det = np.log(factor).sum(axis=-1)
            quadratic = r @ b2
            t = t[..., 0]
            if rho > 0.0:
                vr = v * r
                rank_one = 1.0 - 2j * t * rho * (vr @ v)
                log_det = log_det + np.log(rank_one)
                quadratic = quadratic + 2j * t * rho * (vr @ b) ** 2 / rank_one
            values = np.exp(-0.5 * log_det + 1j * t * (k - c) - 2.0 * t * t * quadratic)
            return complex(values) if np.ndim(u) == 0 else values

        return phi

    def _damped_integral(self, x: float, end: float, most: int) -> float | None:
        """``∫_0^end Im[e^{-iux} φ(u)]/u du`` by 64-point Gauss–Legendre panels,
        doubled until two agree to ``_EPSABS`` (``φ`` tabulated once for every
        ``x``); None if they do not within ``most`` panels."""
        nodes, weights = LEGENDRE_64
        previous, panels = math.nan, 2
        while panels < end / 32.0:  # about one panel per 16 (of u) is needed
            panels *= 2
        while panels <= most:
            if panels not in self.table:
                half = 0.5 * end / panels
                u = (half * (2.0 * np.arange(panels)[:, None] + 1.0 + nodes)).ravel()
                parts = np.array_split(u, 1 + u.size * self.d.size // 2**18)
                values = np.concatenate([self.phi(0.0)(part) for part in parts])
                values *= np.tile(half * weights, panels) / u
                self.table[panels] = (u, values)
            u, values = self.table[panels]
            value = float(np.sum((values * np.exp(-1j * x * u)).imag))
            if abs(value - previous) <= _EPSABS:
                return value
            previous, panels = value, 2 * panels
        return None

    def cdf(self, x: float, panels: int = _MAX_PANELS) -> float:
        """``P(Q <= x)``, over a finite range where the non-central part damps
        ``|φ|`` below ``e^{-40}`` (by at most ``panels`` Gauss–Legendre panels,
        else the adaptive quadrature)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            limit = np.where(
                self.d != 0.0,
                self.b**2 / (2.0 * self.d**2),
                np.where(self.b != 0, np.inf, 0.0),
            )
        total = float(limit.sum())
        if total <= _DAMPED:
            c = self.shift()
            return gil_pelaez_cdf(self.phi(c), x - c)
        # |φ(u)| <= exp(-Σ 2u²b²/(1 + 4u²d²)): double the range until that
        # exponent passes _DAMPED (its limit, total, is larger).
        target = min(_DAMPED + 5.0, 0.5 * (_DAMPED + total))
        b2, d2, end = self.b**2, self.d**2, 1.0
        for _ in range(_MAX_DOUBLINGS):
            if float((2.0 * end * end * b2 / (1.0 + 4.0 * end * end * d2)).sum()) >= (
                target
            ):
                break
            end *= 2.0
        total = self._damped_integral(x, end, panels)
        if total is None:  # doubling pieces: one over the long range misses the head
            integrand = _inversion_integrand(self.phi(0.0), x)
            edges = [0.0, *np.geomspace(1.0, end, round(math.log2(end)) + 1)]
            total = sum(
                _quad(integrand, a, b, limit=1000, epsabs=_EPSABS)
                for a, b in itertools.pairwise(edges)
            )
        return min(max(0.5 - total / math.pi, 0.0), 1.0)


@dataclass(frozen=True, eq=False, repr=False)
class _Continuous:
    """A continuous metric in units of ``unit`` (about one SD), its support and
    the ``centre`` its quantiles are searched from by ``step``."""

    unit: float
    centre: float
    lower: float
    upper: float
    step = 2.0

    def _transform(self, x: float) -> float:
        return x * self.unit

    def interval(self, confidence_level: float) -> tuple[float, float, float]:
        """Equal-tailed exact interval: the ``α/2`` and ``1 - α/2`` quantiles."""
        half = 0.5 * (1.0 - confidence_level)
        low, high = (
            self._transform(
                _quantile(self.cdf, p, self.centre, self.step, self.lower, self.upper)
            )
            for p in (half, 1.0 - half)
        )
        return low, high, confidence_level


@dataclass(frozen=True, eq=False, repr=False)
class MSEDistribution(_Continuous):
    """MSE (RMSE with ``root``): a quadratic form, or ``unit`` times a
    non-central χ² ``(dof, nc)`` plus ``offset`` (``ncx2_params``)."""

    form: _QuadraticForm | None = None
    ncx2_params: tuple[float, float] | None = None
    root: bool = False

    def cdf(self, x: float) -> float:
        if self.ncx2_params is not None:
            dof, nc, offset = self.ncx2_params
            return float(ncx2.cdf(x - offset, dof, nc))
        return self.form.cdf(x)

    def _transform(self, x: float) -> float:
        x = max(float(x) * self.unit, 0.0)
        return math.sqrt(x) if self.root else x

    def interval(self, confidence_level: float) -> tuple[float, float, float]:
        if self.ncx2_params is None:
            return super().interval(confidence_level)
        half = 0.5 * (1.0 - confidence_level)
        dof, nc, offset = self.ncx2_params
        low, high = offset + ncx2.ppf([half, 1.0 - half], dof, nc)
        return self._transform(low), self._transform(high), confidence_level


def _noisy(sigma: Any, weight: np.ndarray | None, n: int) -> tuple | None:
    """``(mask, σ)`` of the noisy, positively weighted samples, or None when
    there are none or more than :data:`MAX_FORM_SAMPLES`."""
    s = np.broadcast_to(np.asarray(sigma, dtype=np.float64), (n,))
    for rows in (slice(0, 2 * MAX_FORM_SAMPLES + 1), slice(None)):  # a head first
        mask = (
            s[rows] > 0.0 if weight is None else (s[rows] > 0.0) & (weight[rows] > 0.0)
        )
        count = np.count_nonzero(mask)
        if count > MAX_FORM_SAMPLES:
            return None
    return (mask, s) if count else None


def _weights(n: int, weight: np.ndarray | None) -> np.ndarray:
    return np.full(n, 1.0 / n) if weight is None else weight / weight.sum()


def mse_distribution(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    weight: np.ndarray | None,
    *,
    nominal_mse: float,
    root: bool = False,
) -> MSEDistribution | None:
    """The exact distribution of one output's MSE (RMSE with ``root``), or None
    (no noisy label, or more than :data:`MAX_FORM_SAMPLES` but with one σ)."""
    n = y_true.shape[0]
    if not (math.isfinite(nominal_mse) and n > 0):
        return None
    if weight is None and isinstance(sigma, float):
        if sigma == 0.0:
            return None
        unit = sigma * sigma / n  # inf, not OverflowError, where σ² overflows
        nc = nominal_mse / unit if 0.0 < unit < math.inf else math.inf
        if not nc <= _MAX_NONCENTRALITY:  # σ² under/overflows, or residuals dwarf it
            return None
        params = (float(n), nc, 0.0)
        return MSEDistribution(unit, n + nc, 0.0, math.inf, None, params, root)
    found = _noisy(sigma, weight, n)
    if found is None:
        return None
    noisy, s = found
    a = _weights(n, weight)
    d = y_true - y_pred
    lam = a[noisy] * s[noisy] ** 2
    b = a[noisy] * s[noisy] * d[noisy]
    unit = math.sqrt(float(2.0 * lam @ lam + 4.0 * b @ b))
    if not (0.0 < unit < math.inf):  # σ² underflows or overflows
        return None
    k = float(a @ (d * d))
    centre = (k + float(lam.sum())) / unit
    if np.all(lam == lam[0]):  # equal weights σ²: λ times a non-central χ²
        nc = float((b * b).sum()) / (lam[0] * lam[0])
        if nc <= _MAX_NONCENTRALITY:
            fixed = k - float((b * b).sum()) / lam[0]  # the exact labels
            params = (float(lam.size), nc, max(fixed, 0.0) / lam[0])
            centre *= unit / float(lam[0])
            unit = float(lam[0])
            return MSEDistribution(unit, centre, 0.0, math.inf, None, params, root)
    form = _QuadraticForm(lam, 0.0, np.zeros(lam.size), b, k)
    return MSEDistribution(unit, centre, 0.0, math.inf, form.scaled(unit), None, root)


@dataclass(frozen=True, eq=False, repr=False)
class R2Distribution(_Continuous):
    """R²: ``P(R² <= r) = P(SSE - (1 - r) SST >= 0)``; ``v = wσ`` of the noisy
    samples, ``sums = (W, Σwμ, Σwμ², Σwŷμ, Σwŷ²)`` over all."""

    v: np.ndarray = None  # type: ignore[assignment]
    sigma: np.ndarray = None  # type: ignore[assignment]
    mu: np.ndarray = None  # type: ignore[assignment]
    pred: np.ndarray = None  # type: ignore[assignment]
    sums: tuple[float, float, float, float, float] = (0.0,) * 5
    step: float = 1.0

    def form(self, c: float) -> _QuadraticForm:
        """``SSE - c SST`` as a quadratic form in the standard normal Z."""
        total, s_mu, s_mu2, s_pred_mu, s_pred2 = self.sums
        rho = c / total
        b = self.v * ((1.0 - c) * self.mu - self.pred + rho * s_mu)
        k = (1.0 - c) * s_mu2 - 2.0 * s_pred_mu + s_pred2 + rho * s_mu * s_mu
        d = (1.0 - c) * self.v * self.sigma
        vv = float(self.v @ self.v)
        scale = math.sqrt(
            2.0 * float(d @ d + 2.0 * rho * d @ (self.v * self.v))
            + 2.0 * (rho * vv) ** 2
            + 4.0 * float(b @ b)
        )
        return _QuadraticForm(d, rho, self.v, b, k).scaled(scale)

    def cdf(self, x: float) -> float:
        c = 1.0 - x
        if c == 1.0:  # the diagonal vanishes: move off the singular point
            c = 1.0 - 1e-12
        return 1.0 - self.form(c).cdf(0.0, panels=0)


def r2_distribution(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    weight: np.ndarray | None,
    *,
    nominal: float,
) -> R2Distribution | None:
    """The exact distribution of one output's R², or None (as for the MSE)."""
    n = y_true.shape[0]
    found = _noisy(sigma, weight, n)
    if found is None:
        return None
    noisy, s = found
    w = np.ones(n) if weight is None else weight
    mu, pred = y_true, y_pred
    products = (mu, mu * mu, pred * mu, pred * pred)
    sums = (float(w.sum()), *(float(w @ x) for x in products))
    if not all(math.isfinite(x) for x in sums) or not np.isfinite(s).all():
        return None
    s2 = s[noisy] ** 2
    if not (np.isfinite(s2).all() and np.all(s2 > 0.0)):  # over- or underflow
        return None
    # A first step of the order of the SD of R²: 2 Σ wσ² |d| / SST, at least 0.01.
    sst = sums[2] - sums[1] ** 2 / sums[0]
    guess = 2.0 * math.sqrt(float((w[noisy] * s2) @ (w[noisy] * (s2 + sst / sums[0]))))
    step = min(max(guess / sst, 0.01), 1.0) if sst > 0 else 1.0
    return R2Distribution(
        1.0,
        min(float(nominal), 1.0) if math.isfinite(nominal) else 0.0,
        -math.inf,
        1.0,
        w[noisy] * s[noisy],
        s[noisy].copy(),
        mu[noisy].copy(),
        pred[noisy].copy(),
        sums,
        step,
    )


def _folded_phi(a: np.ndarray, d: np.ndarray, sigma: np.ndarray) -> Callable:
    """``u -> Π E exp(iu a_i |d_i + σ_i Z_i|)`` at each ``u`` of an array,
    closed forms in ``wofz``."""
    t = np.abs(d) / sigma
    ad = a * np.abs(d)
    damp = 0.5 * np.exp(-0.5 * t * t)
    it = 1j * t * _SQRT_HALF

    def phi(u: np.ndarray) -> np.ndarray:
        su = np.multiply.outer(u, a * sigma)
        gauss = np.exp(1j * np.multiply.outer(u, ad) - 0.5 * su * su)
        x = su * _SQRT_HALF
        return np.prod(gauss + damp * (wofz(x + it) - wofz(-x + it)), axis=-1)

    return phi


def _midpoint_cdf(
    phi: Callable[[np.ndarray], np.ndarray], y: float, mean: float
) -> float | None:
    """``P(X <= y)`` for ``X`` a 1-Lipschitz function of standard normals (SD at
    most 1, ``P(|X − mean| > t) <= 2 exp(−t²/2)``): 0 or 1 beyond 40 of them,
    else the Gil-Pelaez integral by the midpoint rule of step ``2π/(|y − mean|
    + 40)``, exact but for that mass (Davies, Biometrika 60, 415, 1973), to where
    ``|φ|`` falls below ``e^{-40}``; None if it does not within
    ``_MIDPOINT_TERMS``."""
    if abs(y - mean) > _DAMPED:
        return 0.0 if y < mean else 1.0
    step = 2.0 * math.pi / (abs(y - mean) + _DAMPED)
    total, chunk = 0.0, 64
    for start in range(0, _MIDPOINT_TERMS, chunk):
        k = np.arange(start, start + chunk) + 0.5
        values = phi(k * step)
        total += float(np.sum((values * np.exp(-1j * step * y * k)).imag / k))
        if np.max(np.abs(values[-8:])) < math.exp(-_DAMPED):
            return min(max(0.5 - total / math.pi, 0.0), 1.0)
    return None


@dataclass(frozen=True, eq=False, repr=False)
class MAEDistribution(_Continuous):
    """MAE ``= shift + Σ a_i |d_i + σ_i Z_i|`` over the noisy samples."""

    a: np.ndarray = None  # type: ignore[assignment]
    d: np.ndarray = None  # type: ignore[assignment]
    sigma: np.ndarray = None  # type: ignore[assignment]
    shift: float = 0.0

    def cdf(self, x: float) -> float:
        a, d, s = self.a / self.unit, self.d, self.sigma
        phi = _folded_phi(a, d, s)
        y = x - self.shift / self.unit
        mean = float(a @ folded_moments(d, s)[0])
        found = _midpoint_cdf(phi, y, mean)
        if found is not None:
            return found
        return gil_pelaez_cdf(lambda u: complex(phi(np.asarray(u))), y)


def mae_distribution(
    y_true: np.ndarray, y_pred: np.ndarray, sigma: Any, weight: np.ndarray | None
) -> MAEDistribution | None:
    """The exact distribution of one output's MAE, or None (as for the MSE)."""
    n = y_true.shape[0]
    found = _noisy(sigma, weight, n)
    if found is None:
        return None
    d = y_true - y_pred
    if not np.all(np.isfinite(d)):
        return None
    noisy, s = found
    a = _weights(n, weight)
    shift = float(a[~noisy] @ np.abs(d[~noisy]))
    an, dn, sn = a[noisy], d[noisy], s[noisy]
    unit = math.sqrt(float((an * sn) @ (an * sn)))
    if not (0.0 < unit < math.inf):
        return None
    centre = (shift + float(an @ np.abs(dn))) / unit
    return MAEDistribution(
        unit, centre, 0.0, math.inf, an.copy(), dn.copy(), sn.copy(), shift
    )


def output_distributions(
    builder: Callable[..., Any],
    y_true: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    weight: np.ndarray | None,
    **options: Any,
) -> list[Any]:
    """``builder`` applied to each output column; array ``options`` per output."""
    with np.errstate(all="ignore"):  # each builder checks what it computes
        return [
            builder(
                y_true[:, j],
                y_pred[:, j],
                output_column(sigma, j),
                weight,
                **{
                    key: float(value[j]) if isinstance(value, np.ndarray) else value
                    for key, value in options.items()
                },
            )
            for j in range(y_true.shape[1])
        ]
