"""Whether the mean and variance of a paired R² difference exist.

Both models are scored on the same noisy labels, so the two R² share the total
sum of squares ``Y = Σ w (y − ȳ_w)²`` (user guide: :ref:`formula_paired`):

    R²_A − R²_B = (SSE_B − SSE_A) / Y = L(y) / Y,
    L(y) = Σ w_i (a_i − b_i)(2 y_i − a_i − b_i),

a ratio of an *affine* function of the labels to the quadratic form of
:mod:`~sklearn_noisy.metrics._r2_quadrature`. ``Y`` vanishes only where every
(positively weighted) label takes one value ``c``; with ``r`` the rank of the
centred noise (the number of noisy labels when some label is exact, else
``M − 1``) and ``ρ`` the distance to that set, ``Y ~ ρ²`` and the moment of
order ``k`` behaves like ``∫ ρ^{r−1} |L|^k / ρ^{2k} dρ``:

- if two exact labels differ, ``Y`` is bounded below: every moment exists;
- if ``L`` is not 0 on the set ``Y = 0``: order ``k`` exists iff ``r > 2k``
  (as for one model's R²); where it does not, the mean is ``±∞`` when ``L``
  has one sign on that set (some labels exact, all equal to ``v``: the sign of
  ``L(v)``; all labels noisy and ``Σ w (a − b) = 0``: the sign of
  ``−Σ w (a² − b²)``) and undefined (NaN) when ``L(c)`` changes sign with ``c``
  (all labels noisy, ``Σ w (a − b) ≠ 0``);
- if ``L`` is 0 on that set but not constant, ``|L| ~ ρ``: order ``k`` exists
  iff ``r > k``, and a mean that does not exist is undefined (NaN, both tails
  diverge);
- if ``L`` is constant 0 the difference is 0 on every draw.

The zero tests are exact: a floating-point sum whose rounding bound cannot
decide its sign is recomputed in rational arithmetic.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from ..utils._arrays import chunks

__all__ = ["DifferenceExistence", "r2_difference_existence"]


class DifferenceExistence:
    """Which moments of the R² difference exist, and what to report otherwise.

    ``mean_exists`` and ``variance_exists`` are booleans; ``expected`` is the
    value to report when the mean does not exist (``±inf`` or NaN) and
    ``message`` says why (None when both exist).
    """

    __slots__ = ("expected", "mean_exists", "message", "variance_exists")

    def __init__(
        self,
        mean_exists: bool,
        variance_exists: bool,
        expected: float = math.nan,
        message: str | None = None,
    ) -> None:
        self.mean_exists = mean_exists
        self.variance_exists = variance_exists
        self.expected = expected
        self.message = message


def _exact_sign(
    w: np.ndarray, a: np.ndarray, b: np.ndarray, kind: str, v: float = 0.0
) -> int:
    """The sign of ``Σ w (a − b) f``, decided exactly.

    ``f`` is 1 (``kind="slope"``), ``a + b`` (``"level"``) or ``2v − a − b``
    (``"point"``). The float sum is used when its error bound (relative
    ``(n + 8) ε`` of ``Σ |terms|``, plus the subnormal range) cannot change
    the sign; otherwise the sum is recomputed with :class:`fractions.Fraction`
    from the inputs.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        terms = w * (a - b)
        if kind == "level":
            terms = terms * (a + b)
        elif kind == "point":
            terms = terms * ((v - a) + (v - b))
        total = float(np.sum(terms))
        magnitude = float(np.sum(np.abs(terms)))
    n = terms.shape[0]
    bound = (n + 8) * float(np.finfo(np.float64).eps) * magnitude + 1e-300 * n
    if math.isfinite(magnitude) and abs(total) > bound:
        return 1 if total > 0 else -1
    exact = Fraction(0)
    point = Fraction(v)
    for wi, ai, bi in zip(w.tolist(), a.tolist(), b.tolist(), strict=True):
        ai, bi = Fraction(ai), Fraction(bi)
        factor = {"slope": 1, "level": ai + bi, "point": 2 * point - ai - bi}[kind]
        exact += Fraction(wi) * (ai - bi) * factor
    return (exact > 0) - (exact < 0)


def _one_output(
    y: np.ndarray, a: np.ndarray, b: np.ndarray, s: np.ndarray, w: np.ndarray
) -> tuple[int | None, float]:
    """``(need, sign)`` of one output's positively weighted samples.

    ``need`` is the factor in the rule "order ``k`` exists iff ``r > need·k``"
    (2 or 1) or None when every moment exists; ``sign`` is the sign of an
    infinite mean, NaN for an undefined one.
    """
    noisy = s > 0.0
    exact_y = y[~noisy]
    if np.count_nonzero(noisy) == 0 or (
        exact_y.size >= 2 and exact_y.min() < exact_y.max()
    ):
        return None, math.nan
    gap = a - b
    moving = bool(np.any(noisy & (gap != 0.0)))  # L depends on the noisy labels
    if exact_y.size:  # every exact label equals v: Y = 0 at one point
        sign = _exact_sign(w, a, b, "point", float(exact_y[0]))
        if sign:
            return 2, float(sign)
        return (1 if moving else None), math.nan
    # all labels noisy: L(c) = 2c Σ w(a−b) − Σ w(a−b)(a+b) along y = c
    if _exact_sign(w, a, b, "slope"):
        return 2, math.nan
    level = _exact_sign(w, a, b, "level")
    if level:
        return 2, float(-level)
    return (1 if bool(np.any(gap != 0.0)) else None), math.nan


def _counts(sigma: np.ndarray, weight: np.ndarray | None) -> tuple[int, int]:
    """Positively weighted labels, and the noisy ones among them (chunked)."""
    n_eff = n_noisy = 0
    for rows in chunks(sigma.shape[0]):
        noisy = sigma[rows] > 0.0
        if weight is None:
            n_eff += noisy.shape[0]
        else:
            positive = weight[rows] > 0.0
            n_eff += int(np.count_nonzero(positive))
            noisy &= positive
        n_noisy += int(np.count_nonzero(noisy))
    return n_eff, n_noisy


def r2_difference_existence(
    y_true: np.ndarray,
    y_pred_a: np.ndarray,
    y_pred_b: np.ndarray,
    sigma: Any,
    weight: np.ndarray | None,
    output_weights: Any = None,
) -> DifferenceExistence:
    """The existence of ``E`` and ``Var`` of ``R²_A − R²_B`` (module docstring).

    ``y_true``, ``y_pred_a``, ``y_pred_b`` are 2-D ``(n_samples, n_outputs)``,
    ``sigma`` a float or an array broadcastable to them, ``weight`` None or
    1-D, ``output_weights`` None (uniform) or the weights of the outputs
    (outputs of weight 0 are left out). Only outputs with a centred-noise rank
    ``r ≤ 4`` are examined sample by sample.
    """
    n, n_outputs = y_true.shape
    sigma = np.broadcast_to(np.asarray(sigma, dtype=np.float64), y_true.shape)
    signs: set[float] = set()
    mean_fails: list[tuple[int, int, int]] = []
    var_fails: list[tuple[int, int, int]] = []
    for j in range(n_outputs):
        if output_weights is not None and np.asarray(output_weights)[j] == 0.0:
            continue
        s = sigma[:, j]
        n_eff, n_noisy = _counts(s, weight)
        rank = n_noisy if n_noisy < n_eff else n_eff - 1
        if n_noisy == 0 or rank > 4:
            continue
        rows = slice(None) if weight is None else np.flatnonzero(weight > 0.0)
        need, sign = _one_output(
            y_true[rows, j],
            y_pred_a[rows, j],
            y_pred_b[rows, j],
            s[rows],
            np.ones(n) if weight is None else weight[rows],
        )
        if need is not None and rank <= need:
            mean_fails.append((j, rank, need))
            signs.add(sign)
        if need is not None and rank <= 2 * need:
            var_fails.append((j, rank, need))
    if not var_fails:
        return DifferenceExistence(True, True)
    expected = math.nan
    if mean_fails and len(signs) == 1 and not math.isnan(next(iter(signs))):
        expected = math.copysign(math.inf, next(iter(signs)))
    fail = mean_fails[0] if mean_fails else var_fails[0]
    message = _message(fail, bool(mean_fails), n_outputs)
    return DifferenceExistence(not mean_fails, False, expected, message)


def _message(fail: tuple[int, int, int], mean: bool, n_outputs: int) -> str:
    j, rank, need = fail
    where = f" (output {j})" if n_outputs > 1 else ""
    what, order = ("expected value", 1) if mean else ("variance", 2)
    if need == 2:
        why = (
            "the shared total sum of squares can come arbitrarily close to 0 while "
            "the difference of the squared errors does not"
        )
    else:
        why = (
            "the shared total sum of squares can come arbitrarily close to 0, and "
            "the difference of the squared errors vanishes there only linearly"
        )
    return (
        f"The {what} of the R² difference does not exist{where}: {why}; "
        f"the noise has rank r = {rank} and the moment of order {order} needs "
        f"r > {need * order}. Use more noisy labels, or include at least two "
        "exact labels (sigma = 0) with distinct values."
    )
