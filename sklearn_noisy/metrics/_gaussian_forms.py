"""Exact distributions of the regression metrics over Gaussian label error.

With ``y_i = y_true_i + σ_i Z_i`` and the predictions fixed (user guide:
:ref:`exact_intervals`):

* MSE ``= Σ a_i (d_i + σ_i Z_i)²`` (``a_i = w_i / W``) is a weighted sum of
  independent non-central χ² variables with one degree of freedom. With one
  σ and no weights it is ``σ²/M`` times a non-central χ² with ``M``
  degrees of freedom and non-centrality ``Σ d_i²/σ²``
  (:data:`scipy.stats.ncx2`); otherwise its CDF is the Gil-Pelaez inversion
  of its characteristic function.
* RMSE ``= sqrt(MSE)``: its quantiles are the square roots of the MSE's.
* R² ``= 1 - SSE/SST``: ``P(R² <= r) = P(SSE - (1 - r) SST >= 0)``, and
  ``SSE - c SST`` is one quadratic form ``Z'(D + ρ v v')Z + 2 b'Z + k`` in the
  Gaussian labels (a diagonal plus a rank-one matrix, ``ρ = c / W``), whose
  characteristic function the matrix determinant lemma and Sherman–Morrison
  give in ``O(M)``: exact, also where the moments of R² do not exist.
* MAE ``= Σ a_i |d_i + σ_i Z_i|`` is a weighted sum of independent folded
  normals, whose characteristic functions are closed forms in the Faddeeva
  function :func:`scipy.special.wofz`.

The inversion (:func:`gil_pelaez_cdf`) is
``P(X <= x) = 1/2 - (1/π) ∫_0^∞ Im[e^{-iux} φ(u)] / u du``: adaptive
Gauss–Kronrod (:func:`scipy.integrate.quad`) on ``[0, 1]`` in units of the
standard deviation, and QUADPACK's QAWF Fourier-integral routine beyond,
after the linear phase of ``φ`` has been taken out so that what multiplies
the sine and cosine no longer oscillates. Quantiles are found by Brent's
method on the CDF. Only problems with at most :data:`MAX_FORM_SAMPLES` noisy
samples keep what the inversion needs (three floats per noisy sample); larger
ones use the normal approximation, clipped, except the MSE and RMSE with one
σ and no weights (three numbers, any size).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import integrate, optimize
from scipy.special import wofz
from scipy.stats import ncx2

from ._regression_kernels import output_column

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


def _quad(
    function: Callable[[float], float], a: float, b: float, **options: Any
) -> float:
    """:func:`scipy.integrate.quad`'s value, without its ``IntegrationWarning``.

    ``full_output=1`` returns the reason instead of warning; the value is the
    same and ``epsabs`` bounds its error where it matters.
    """
    return float(integrate.quad(function, a, b, full_output=1, **options)[0])


def gil_pelaez_cdf(phi: Callable[[float], complex], y: float) -> float:
    """``P(X - c <= y)`` from ``phi(u) = E exp(iu(X - c))``, for a continuous X.

    ``c`` is the linear phase of the characteristic function of ``X``, so
    that ``phi`` does not oscillate for large ``u``; ``X`` is scaled to a
    standard deviation of about 1.
    """

    def head(u: float) -> float:
        return (phi(u) * complex(math.cos(u * y), -math.sin(u * y))).imag / u

    # The head runs to where e^{-iuy} starts to oscillate, u = 1/|y|, in
    # decades; QAWF takes the rest (its cycles are too long for a small |y|).
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
        cosine = _quad(
            lambda u: phi(u).imag / u,
            split,
            np.inf,
            weight="cos",
            wvar=abs(y),
            limlst=200,
            epsabs=_EPSABS,
        )
        sine = _quad(
            lambda u: phi(u).real / u,
            split,
            np.inf,
            weight="sin",
            wvar=abs(y),
            limlst=200,
            epsabs=_EPSABS,
        )
        tail = cosine - (sine if y > 0.0 else -sine)
    return min(max(0.5 - (total + tail) / math.pi, 0.0), 1.0)


def _finite_range_cdf(phi: Callable[[float], complex], y: float, end: float) -> float:
    """``P(X <= y)`` from ``phi(u) = E exp(iuX)``, negligible beyond ``end``."""

    def integrand(u: float) -> float:
        return (phi(u) * complex(math.cos(u * y), -math.sin(u * y))).imag / u

    total = _quad(integrand, 0.0, end, limit=1000, epsabs=_EPSABS)
    return min(max(0.5 - total / math.pi, 0.0), 1.0)


def _quantile(
    cdf: Callable[[float], float],
    p: float,
    start: float,
    step: float,
    lower: float,
    upper: float,
) -> float:
    """The ``x`` in ``[lower, upper]`` with ``cdf(x) = p``, by Brent's method.

    The bracket grows geometrically from ``start ± step``.
    """
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

    def phi(self, c: float) -> Callable[[float], complex]:
        """``u -> E exp(iu(Q - c))`` (matrix determinant lemma, Sherman–Morrison)."""
        d, rho, v, b, k = self.d, self.rho, self.v, self.b, self.k

        def phi(u: float) -> complex:
            factor = 1.0 - 2j * u * d
            r = 1.0 / factor
            log_det = np.log(factor).sum()
            quadratic = complex((b * b) @ r)
            if rho > 0.0:
                vr = v * r
                rank_one = 1.0 - 2j * u * rho * complex(vr @ v)
                log_det += np.log(rank_one)
                quadratic += 2j * u * rho * complex(vr @ b) ** 2 / rank_one
            log_phi = -0.5 * log_det + 1j * u * (k - c) - 2.0 * u * u * quadratic
            return complex(np.exp(log_phi))

        return phi

    def cdf(self, x: float) -> float:
        """``P(Q <= x)``.

        Where the non-central part damps ``|φ|`` below ``e^{-40}`` before its
        phase becomes linear (a component with ``b_j² / (2 d_j²) > 40``, the
        exponent's limit), the integral is taken over the finite range where
        ``|φ|`` is not negligible, without a shift; otherwise with the shift.
        """
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
        return _finite_range_cdf(self.phi(0.0), x, end)


@dataclass(frozen=True, eq=False, repr=False)
class _Continuous:
    """A continuous metric in units of ``unit``: quantiles of ``cdf`` by Brent.

    ``cdf`` takes the metric divided by ``unit`` (about one standard
    deviation); ``centre`` and ``lower``/``upper`` (the support) are in the same
    units.
    """

    unit: float
    centre: float
    lower: float
    upper: float

    def cdf(self, x: float) -> float:  # pragma: no cover - every subclass has one
        raise NotImplementedError

    def _transform(self, x: float) -> float:
        return x * self.unit

    def interval(self, confidence_level: float) -> tuple[float, float, float]:
        """Equal-tailed exact interval: the ``α/2`` and ``1 - α/2`` quantiles."""
        half = 0.5 * (1.0 - confidence_level)
        low, high = (
            self._transform(
                _quantile(self.cdf, p, self.centre, 2.0, self.lower, self.upper)
            )
            for p in (half, 1.0 - half)
        )
        return low, high, confidence_level


@dataclass(frozen=True, eq=False, repr=False)
class MSEDistribution(_Continuous):
    """MSE, or RMSE with ``root=True``: a quadratic form, or a scaled ncx2.

    ``ncx2_params = (dof, nc, offset)``: the MSE is ``unit`` times a
    non-central χ² plus ``offset`` (the exact labels' share).
    """

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


def _noisy(sigma: Any, weight: np.ndarray | None, n: int) -> np.ndarray:
    """Mask of the samples whose label is noisy and weight positive."""
    mask = np.broadcast_to(np.asarray(sigma, dtype=np.float64) > 0.0, (n,))
    if weight is not None:
        mask = mask & (weight > 0.0)
    return mask


def _weights(n: int, weight: np.ndarray | None) -> np.ndarray:
    return np.full(n, 1.0 / n) if weight is None else weight / weight.sum()


def _too_many_noisy(sigma: Any, weight: np.ndarray | None, n: int) -> bool:
    """Whether more than :data:`MAX_FORM_SAMPLES` labels are noisy."""
    return n > MAX_FORM_SAMPLES and (
        int(np.count_nonzero(_noisy(sigma, weight, n))) > MAX_FORM_SAMPLES
    )


def mse_distribution(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    weight: np.ndarray | None,
    *,
    nominal_mse: float,
    root: bool = False,
) -> MSEDistribution | None:
    """The exact distribution of one output's MSE (RMSE with ``root``), or None.

    1-D ``y_true`` and ``y_pred``, ``sigma`` a float or 1-D, as validated by
    the metric; ``nominal_mse`` the MSE on ``y_true``. With one σ and no
    weights the MSE is ``σ²/M`` times a non-central χ² with ``M`` degrees of
    freedom and non-centrality ``M·nominal_mse/σ²``, at any size. Otherwise
    None when more than :data:`MAX_FORM_SAMPLES` labels are noisy. None when
    no label is noisy.
    """
    n = y_true.shape[0]
    if not (math.isfinite(nominal_mse) and n > 0):
        return None
    if weight is None and isinstance(sigma, float):
        if sigma == 0.0:
            return None
        unit = sigma**2 / n
        nc = nominal_mse / unit if unit > 0.0 else math.inf
        if not nc <= _MAX_NONCENTRALITY:  # σ² underflows, or residuals dwarf it
            return None
        params = (float(n), nc, 0.0)
        return MSEDistribution(unit, n + nc, 0.0, math.inf, None, params, root)
    if _too_many_noisy(sigma, weight, n):
        return None
    a = _weights(n, weight)
    d = y_true - y_pred
    s = np.broadcast_to(np.asarray(sigma, dtype=np.float64), (n,))
    noisy = _noisy(sigma, weight, n)
    if not noisy.any():
        return None
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
    """R² ``= 1 - SSE/SST``: ``P(R² <= r) = P(SSE - (1 - r) SST >= 0)``.

    ``v = wσ``, ``sigma``, ``mu`` (``y_true``) and ``pred`` of the noisy
    samples; ``sums = (W, Σwμ, Σwμ², Σwŷμ, Σwŷ²)`` over all samples. ``unit``
    is 1 (R² is scale-free).
    """

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
        return 1.0 - self.form(c).cdf(0.0)

    def interval(self, confidence_level: float) -> tuple[float, float, float]:
        half = 0.5 * (1.0 - confidence_level)
        low, high = (
            _quantile(self.cdf, p, self.centre, self.step, -math.inf, 1.0)
            for p in (half, 1.0 - half)
        )
        return low, high, confidence_level


def r2_distribution(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    weight: np.ndarray | None,
    *,
    nominal: float,
) -> R2Distribution | None:
    """The exact distribution of one output's R², or None.

    None when no label is noisy or more than :data:`MAX_FORM_SAMPLES` are.
    The search for the quantiles starts at the ``nominal`` R².
    """
    n = y_true.shape[0]
    if _too_many_noisy(sigma, weight, n):
        return None
    w = np.ones(n) if weight is None else weight
    noisy = _noisy(sigma, weight, n)
    if not noisy.any():
        return None
    s = np.broadcast_to(np.asarray(sigma, dtype=np.float64), (n,))
    mu, pred = y_true, y_pred
    sums = (
        float(w.sum()),
        float(w @ mu),
        float(w @ (mu * mu)),
        float(w @ (pred * mu)),
        float(w @ (pred * pred)),
    )
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
    """``u -> Π E exp(iu a_i |d_i + σ_i Z_i|)`` (Faddeeva function ``wofz``).

    With ``t = |d|/σ`` and ``s = aσu``:
    ``E e^{iua|X|} = e^{iua|d| - s²/2} - ½ e^{-t²/2} w((-s + it)/√2)
    + ½ e^{-t²/2} w((s + it)/√2)``, every argument of ``w`` in the upper
    half-plane (no overflow).
    """
    t = np.abs(d) / sigma
    ad = a * np.abs(d)
    damp = 0.5 * np.exp(-0.5 * t * t)
    it = 1j * t * _SQRT_HALF

    def phi(u: float) -> complex:
        su = a * sigma * u
        gauss = np.exp(1j * u * ad - 0.5 * su * su)
        x = su * _SQRT_HALF
        value = gauss + damp * (wofz(x + it) - wofz(-x + it))
        return complex(np.prod(value))

    return phi


@dataclass(frozen=True, eq=False, repr=False)
class MAEDistribution(_Continuous):
    """MAE ``= shift + Σ a_i |d_i + σ_i Z_i|`` over the noisy samples."""

    a: np.ndarray = None  # type: ignore[assignment]
    d: np.ndarray = None  # type: ignore[assignment]
    sigma: np.ndarray = None  # type: ignore[assignment]
    shift: float = 0.0

    def cdf(self, x: float) -> float:
        phi = _folded_phi(self.a / self.unit, self.d, self.sigma)
        return gil_pelaez_cdf(phi, x - self.shift / self.unit)


def mae_distribution(
    y_true: np.ndarray, y_pred: np.ndarray, sigma: Any, weight: np.ndarray | None
) -> MAEDistribution | None:
    """The exact distribution of one output's MAE, or None (as for the MSE)."""
    n = y_true.shape[0]
    if _too_many_noisy(sigma, weight, n):
        return None
    a = _weights(n, weight)
    d = y_true - y_pred
    s = np.broadcast_to(np.asarray(sigma, dtype=np.float64), (n,))
    noisy = _noisy(sigma, weight, n)
    if not noisy.any() or not np.all(np.isfinite(d)):
        return None
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
    """``builder`` applied to each output column (validated 2-D inputs).

    Array ``options`` hold one value per output; other options are passed on.
    """
    n_outputs = y_true.shape[1]
    with np.errstate(all="ignore"):  # each builder checks what it computes
        return _build_all(builder, y_true, y_pred, sigma, weight, n_outputs, options)


def _build_all(
    builder: Callable[..., Any],
    y_true: np.ndarray,
    y_pred: np.ndarray,
    sigma: Any,
    weight: np.ndarray | None,
    n_outputs: int,
    options: dict[str, Any],
) -> list[Any]:
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
        for j in range(n_outputs)
    ]
