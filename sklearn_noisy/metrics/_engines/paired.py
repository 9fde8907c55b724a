"""Exact kernels of the paired difference ``metric(A) − metric(B)`` on the same
noisy labels, read in chunks; None where the options call for the joint Monte
Carlo (user guide: :ref:`formula_paired`, :ref:`paired_existence`).

A kernel is called ``kernel(y_true, y_pred_a, y_pred_b, given)``, ``given`` the
call's ``sigma``, ``q``, ``transition_matrix``, ``labels``, ``sample_weight``,
``classes``, metric ``options`` and (regression) ``shared`` batch offsets and
``sigma_dof``."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np
from scipy.special import ndtr

from ...utils._arrays import check_sample_weight, chunk_of, chunks, weighted_totals
from ...utils._labels import (
    _small_int_labels,
    as_label_array,
    check_classification_labels,
)
from ...utils._noise import FlipNoise
from ...utils._validation import check_regression_inputs
from .._definitions.probabilistic import ProbabilisticLoss, _check_proba

__all__ = [
    "absolute_error_difference",
    "flip_pair",
    "pair_classes",
    "paired_accuracy",
    "paired_accuracy_truth",
    "paired_precision",
    "paired_probabilistic",
    "paired_regression",
    "r2_difference_existence",
    "regression_pair",
    "squared_error_difference",
]

#: The result of a kernel: ``(expected, variance, nominal, n_samples)``, and
#: for regression the Satterthwaite degrees of freedom of the variance, and
#: those with the test-set sampling, whose terms hold all but the batches' part.
PairedResult = tuple[float, ...]

_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)
#: Standardised limits are clipped here before squaring (user guide:
#: formula_numerics).
_Z_MAX = 1000.0
#: Gauss–Hermite nodes over a batch offset.
_OFFSET_NODES = 64


def _named(function: Callable[..., Any], name: str, *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` with ``y_pred`` in its errors named ``name``."""
    try:
        return function(*args, **kwargs)
    except (TypeError, ValueError) as exc:
        message = str(exc)
        if "y_pred" not in message:
            raise
        raise type(exc)(message.replace("y_pred", name)) from exc


def pair_classes(
    y_true: Any, y_pred_a: Any, y_pred_b: Any, labels: Any = None
) -> tuple:
    """The three label vectors (1-D, not copied, not empty) and the classes of a
    paired comparison: ``labels``, or the sorted union (checked as scikit-learn
    checks a classification target, chunk by chunk)."""
    y = as_label_array(y_true, name="y_true")
    a = as_label_array(y_pred_a, name="y_pred_a")
    b = as_label_array(y_pred_b, name="y_pred_b")
    if y.shape[0] == 0:
        raise ValueError("y_true is empty: at least one sample is required.")
    if labels is not None:
        check = _named(
            check_classification_labels, "y_pred_a", y[:1], a[:1], labels=labels
        )
        return y, a, b, check[2]
    fast = [_small_int_labels(y, values) for values in (a, b)]
    if fast[0] is not None and fast[1] is not None:
        return y, a, b, np.union1d(fast[0].classes, fast[1].classes)
    classes: np.ndarray | None = None
    for rows in chunks(y.shape[0]):
        for name, values in (("y_pred_a", a), ("y_pred_b", b)):
            found = _named(check_classification_labels, name, y[rows], values[rows])[2]
            classes = found if classes is None else np.union1d(classes, found)
    return y, a, b, classes


def flip_pair(
    y: Any, a: Any, b: Any, given: dict, pos_label: Any = None, binary: bool = False
) -> tuple[Any, ...] | None:
    """``(y, a, b, classes, weight, noise, pos)`` of two models' class labels; None
    unless ``pos_label`` (if given) is a class of two (``binary``), or of one."""
    y, a, b, classes = pair_classes(y, a, b, given["labels"])
    pos = None
    if pos_label is not None:
        matches = [i for i, c in enumerate(classes.tolist()) if c == pos_label]
        if classes.size not in ((2,) if binary else (1, 2)) or not matches:
            return None
        pos = matches[0]
    n = y.shape[0]
    weight = check_sample_weight(given["sample_weight"], n)
    noise = FlipNoise.from_params(
        given["q"], given["transition_matrix"], n_samples=n, n_classes=classes.size
    )
    return y, a, b, classes, weight, noise, pos


def _encode_chunk(
    y: np.ndarray, a: np.ndarray, b: np.ndarray, rows: slice, classes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Class positions of ``y_true``, ``y_pred_a`` and ``y_pred_b`` on a chunk."""
    true_index, a_index, _ = _named(
        check_classification_labels, "y_pred_a", y[rows], a[rows], labels=classes
    )
    _, b_index, _ = _named(
        check_classification_labels, "y_pred_b", y[rows], b[rows], labels=classes
    )
    return true_index, a_index, b_index


def _reduce(
    n: int, weight: np.ndarray | None, terms: Callable, n_outputs: int = 1
) -> PairedResult:
    """The weighted means of per-sample ``terms(rows) -> (expected, nominal,
    variance)`` over the chunks, the variance weighted by ``w²/W²``."""
    totals = np.zeros(3)
    for rows in chunks(n):
        totals += weighted_totals(weight, rows, *terms(rows))
    total = (float(n) if weight is None else float(weight.sum())) * n_outputs
    return totals[0] / total, totals[2] / (total * total), totals[1] / total, n


def regression_pair(
    y_true: Any, a: Any, b: Any, sigma: Any, weight: Any, multioutput: Any = None
) -> tuple[Any, ...]:
    """Validated 2-D ``(y_true, a, b, sigma, weight, multioutput)`` (default
    ``multioutput``: ``"uniform_average"``)."""
    y, a, s, weight, multioutput = _named(
        check_regression_inputs,
        "y_pred_a",
        y_true,
        a,
        sigma=sigma,
        sample_weight=weight,
        multioutput="uniform_average" if multioutput is None else multioutput,
    )
    b = _named(check_regression_inputs, "y_pred_b", y_true, b, sigma=sigma)[1]
    return y, a, b, s, weight, multioutput


def squared_error_difference(
    y_true: np.ndarray, a: np.ndarray, b: np.ndarray, sigma: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-sample ``(expected, nominal, variance)`` of MSE_A − MSE_B, summed over
    the outputs: ``(b − a)(2y − a − b)``, variance ``4 σ² (a − b)²``."""
    gap = b - a
    terms = np.sum(gap * ((y_true - a) + (y_true - b)), axis=1)
    scaled = sigma * gap
    return terms, terms, 4.0 * np.sum(scaled * scaled, axis=1)


def _phi(z: np.ndarray) -> np.ndarray:
    return np.exp(-0.5 * z * z) * _INV_SQRT_2PI


def _clipped_normal_moments(
    mu: np.ndarray, tau: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of ``clip(X, −w, w)``, ``X ~ N(mu, tau²)``, ``tau > 0``,
    around ``clip(mu, −w, w)`` with tail-side probabilities (no cancellation)."""
    k = np.clip(mu, -w, w)
    m = mu - k
    alpha = np.clip((-w - mu) / tau, -_Z_MAX, _Z_MAX)
    beta = np.clip((w - mu) / tau, -_Z_MAX, _Z_MAX)
    lower, upper = ndtr(alpha), ndtr(-beta)  # P(X < −w), P(X > w)
    inside = np.where(
        alpha > 0.0,
        ndtr(-alpha) - upper,
        np.where(beta < 0.0, ndtr(beta) - lower, 1.0 - lower - upper),
    )
    phi_a, phi_b = _phi(alpha), _phi(beta)
    mean_y = (-w - k) * lower + (w - k) * upper + m * inside + tau * (phi_a - phi_b)
    second = (
        (w + k) ** 2 * lower
        + (w - k) ** 2 * upper
        + m * m * inside
        + 2.0 * m * tau * (phi_a - phi_b)
        + tau * tau * (inside + alpha * phi_a - beta * phi_b)
    )
    variance = np.maximum(second - mean_y * mean_y, 0.0)
    return k + mean_y, variance


def absolute_error_difference(
    y_true: np.ndarray, a: np.ndarray, b: np.ndarray, sigma: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-sample ``(expected, nominal, variance)`` of MAE_A − MAE_B, summed over
    the outputs: ``sgn(b − a)·clip(2(y − (a + b)/2), −|a − b|, |a − b|)``."""
    sigma = np.broadcast_to(sigma, y_true.shape)
    nominal = np.abs(y_true - a) - np.abs(y_true - b)
    w = np.abs(a - b)
    noisy = (sigma > 0.0) & (w > 0.0)
    expected, variance = nominal.copy(), np.zeros(y_true.shape)
    if noisy.any():
        c = 0.5 * (a[noisy] + b[noisy])
        mean, var = _clipped_normal_moments(
            2.0 * (y_true[noisy] - c), 2.0 * sigma[noisy], w[noisy]
        )
        expected[noisy] = np.sign(b[noisy] - a[noisy]) * mean
        variance[noisy] = var
    return expected.sum(axis=1), nominal.sum(axis=1), variance.sum(axis=1)


def paired_regression(
    difference: Callable[..., tuple], y_true: Any, a: Any, b: Any, given: dict
) -> PairedResult | None:
    """The kernel of a loss's per-sample ``difference`` (its definition's
    ``paired``), uniform over the outputs, and the degrees of freedom of its
    variance with an estimated σ or τ, alone and with the test-set sampling
    (:ref:`paired_sigma_dof`); None with options. Batch offsets: by
    Gauss–Hermite quadrature over each batch's offset (:ref:`shared_offsets`)."""
    if given["options"]:
        return None
    y, a, b, s, weight, _ = regression_pair(
        y_true, a, b, given["sigma"], given["sample_weight"]
    )
    shared, dof = given["shared"], given.get("sigma_dof")
    # Σ c, Σ c²/ν over the variance's parts c, and over the batches' parts
    spread = np.zeros(3)

    def estimated(c: np.ndarray, nu: Any, batches: bool = False) -> None:
        spread[:] += np.sum(c), np.sum(c * c / nu), batches * np.sum(c * c / nu)

    def own(rows: slice) -> Any:  # σ's degrees of freedom
        return math.inf if dof is None else chunk_of(dof, rows)

    if shared is None:

        def terms(rows: slice) -> tuple[np.ndarray, ...]:
            found = difference(y[rows], a[rows], b[rows], chunk_of(s, rows))
            if dof is not None:
                w2 = 1.0 if weight is None else np.square(weight[rows])
                estimated(w2 * found[2], own(rows))
            return found

        return *_reduce(y.shape[0], weight, terms, y.shape[1]), *_satterthwaite(spread)
    n = y.shape[0]
    w = np.ones(n) if weight is None else weight
    total = float(w.sum()) * y.shape[1]
    tau = np.sqrt(shared.per_sample())[:, None]
    nodes, probabilities = np.polynomial.hermite_e.hermegauss(_OFFSET_NODES)
    probabilities = probabilities / probabilities.sum()
    within = mean = 0.0
    parts = np.zeros(n)  # each sample's share of ``within``
    nu_tau = math.inf if shared.dof is None else shared.dof
    batch = np.zeros((_OFFSET_NODES, shared.n_groups))
    for k, (z, p) in enumerate(zip(nodes, probabilities, strict=True)):
        expected, _, variance = difference(y + tau * z, a, b, s)
        within += p * float(np.square(w) @ variance)
        parts += p * np.square(w) * variance
        batch[k] = shared.group_sum(w * expected)
        mean += p * float(batch[k].sum())
    estimated(parts, own(slice(None)))
    centre = probabilities @ batch
    per_batch = probabilities @ np.square(batch - centre)
    between = float(per_batch.sum())
    # one τ̂² for every batch, or one each
    batches = per_batch.sum(keepdims=True) if shared.common else per_batch
    estimated(batches, nu_tau, batches=True)
    nominal = float(w @ difference(y, a, b, s)[1])
    variance = (within + between) / total**2
    return mean / total, variance, nominal / total, n, *_satterthwaite(spread)


def _satterthwaite(spread: np.ndarray) -> tuple[float, float]:
    """Welch–Satterthwaite's degrees of freedom ``(Σ c)²/Σ c²/ν`` of a variance
    ``Σ c`` whose parts ``c`` are estimated with ``ν`` (inf: none is), and with
    only the batches' parts estimated: the test-set sampling's per-sample terms
    hold σ̂'s part (σ̂² cancels from the truth difference and from its total)."""
    return tuple(  # type: ignore[return-value]
        float(spread[0] ** 2 / s) if s > 0.0 else math.inf for s in spread[1:]
    )


def paired_accuracy(
    y_true: Any, a: Any, b: Any, given: dict, truth: bool = False
) -> PairedResult | None:
    """acc_A − acc_B, exact (``truth``: with the de-noised hits ``T⁻¹``, user
    guide: :ref:`formula_truth`); None with metric options."""
    if given["options"]:
        return None
    y, a, b, classes, weight, flips, _ = flip_pair(y_true, a, b, given)
    if truth:
        flips.check_invertible()
    inverse = flips.inverse_matrix() if truth and flips.matrix is not None else None

    def terms(rows: slice) -> tuple[np.ndarray, ...]:
        true_index, a_index, b_index = _encode_chunk(y, a, b, rows, classes)
        differ = a_index != b_index
        if truth:
            inverse_rows = flips.inverse_rows(true_index, rows, inverse)
            size = np.arange(true_index.shape[0])
            p_a, p_b = inverse_rows[size, a_index], inverse_rows[size, b_index]
            gap = p_a - p_b
            variance = gap * gap - p_a - p_b
        else:
            p_a = flips.probability(true_index, a_index, rows)
            p_b = flips.probability(true_index, b_index, rows)
            variance = p_a * (1.0 - p_a) + p_b * (1.0 - p_b) + 2.0 * p_a * p_b
        hits = (a_index == true_index).astype(np.float64) - (b_index == true_index)
        return np.where(differ, p_a - p_b, 0.0), hits, np.where(differ, variance, 0.0)

    expected, variance, nominal, n = _reduce(y.shape[0], weight, terms)
    return expected, max(float(variance), 0.0) if truth else variance, nominal, n


#: acc_A − acc_B against the true classes (``estimand="truth"``).
paired_accuracy_truth = functools.partial(paired_accuracy, truth=True)


def paired_precision(y_true: Any, a: Any, b: Any, given: dict) -> PairedResult | None:
    """Binary precision of A minus that of B, exact: linear in the observed
    positives. None with options but ``pos_label``, or no binary ``pos_label``."""
    if not set(given["options"]) <= {"pos_label"}:
        return None
    pair = flip_pair(y_true, a, b, given, given["options"].get("pos_label", 1))
    if pair is None:
        return None
    y, a, b, classes, weight, flips, pos = pair
    predicted = np.zeros(2)  # the (weighted) predicted positives of A and B
    for rows in chunks(y.shape[0]):
        _, a_index, b_index = _encode_chunk(y, a, b, rows, classes)
        positive = np.stack((a_index == pos, b_index == pos)).astype(np.float64)
        predicted += positive.sum(1) if weight is None else positive @ weight[rows]
    scale = [1.0 / count if count > 0 else 0.0 for count in predicted]
    totals = np.zeros(3)
    for rows in chunks(y.shape[0]):
        true_index, a_index, b_index = _encode_chunk(y, a, b, rows, classes)
        coefficient = (a_index == pos) * scale[0] - (b_index == pos) * scale[1]
        if weight is not None:
            coefficient *= weight[rows]
        if classes.size < 2:  # one class (the noise is still validated above)
            pi = np.ones(true_index.shape[0])
        else:
            pi = flips.probability(true_index, np.full_like(true_index, pos), rows)
        totals += (
            coefficient @ (true_index == pos).astype(np.float64),
            coefficient @ pi,
            (coefficient * coefficient) @ (pi * (1.0 - pi)),
        )
    return float(totals[1]), float(totals[2]), float(totals[0]), y.shape[0]


def paired_probabilistic(
    definition: ProbabilisticLoss, y_true: Any, proba_a: Any, proba_b: Any, given: dict
) -> PairedResult | None:
    """Brier score or log-loss of A minus that of B, exact; None with options."""
    if given["options"]:
        return None
    (a, eps_a), (b, eps_b) = _check_proba(proba_a), _check_proba(proba_b)
    if a.shape != b.shape:
        raise ValueError(
            "y_pred_a and y_pred_b must have the same shape; got "
            f"{a.shape} and {b.shape}."
        )
    n_classes = 2 if a.ndim == 1 else a.shape[1]
    y = as_label_array(y_true, name="y_true")
    n = y.shape[0]  # as many as the probabilities: checked by the caller
    columns = given["labels"] if given["classes"] is None else given["classes"]
    columns = pair_classes(y, y, y)[3] if columns is None else np.asarray(columns)
    if columns.size != n_classes:
        raise ValueError(
            f"The probabilities have {n_classes} columns but there are "
            f"{columns.size} classes ({columns.tolist()}); pass classes= in the "
            "order of the columns."
        )
    if np.any(columns[1:] <= columns[:-1]):
        raise ValueError("classes must be sorted, as the columns of predict_proba.")
    weight = check_sample_weight(given["sample_weight"], n)
    if definition.pos_label and a.ndim == 2 and n_classes == 2:
        a, b = a[:, 1], b[:, 1]  # the positive (larger) class column
    loss_a, loss_b = definition.loss(eps_a), definition.loss(eps_b)
    noise = FlipNoise.from_params(
        given["q"], given["transition_matrix"], n_samples=n, n_classes=n_classes
    )

    def terms(rows: slice) -> tuple[np.ndarray, ...]:
        k = check_classification_labels(y[rows], y[rows], labels=columns)[0]
        difference = loss_a(a[rows]) - loss_b(b[rows])
        weights = noise.observation_rows(k, rows)
        expected = np.einsum("ij,ij->i", weights, difference)
        centred = difference - expected[:, None]
        return (
            expected,
            difference[np.arange(k.shape[0]), k],
            np.einsum("ij,ij->i", weights, centred * centred),
        )

    return _reduce(n, weight, terms)


class DifferenceExistence(NamedTuple):
    """Which moments of the R² difference exist, else what to report."""

    mean_exists: bool
    variance_exists: bool
    expected: float = math.nan
    message: str | None = None


def _exact_sign(
    w: np.ndarray, a: np.ndarray, b: np.ndarray, kind: str, v: float = 0.0
) -> int:
    """The sign of ``Σ w (a − b) f``, ``f`` 1 (``"slope"``), ``a + b`` (``"level"``)
    or ``2v − a − b`` (``"point"``), exact (rationals where rounding could decide)."""

    def factor(a: Any, b: Any, v: Any) -> Any:
        return 1 if kind == "slope" else a + b if kind == "level" else (v - a) + (v - b)

    with np.errstate(over="ignore", invalid="ignore"):
        terms = w * (a - b) * factor(a, b, v)
        total = float(np.sum(terms))
        magnitude = float(np.sum(np.abs(terms)))
    n = terms.shape[0]
    bound = (n + 8) * float(np.finfo(np.float64).eps) * magnitude + 1e-300 * n
    if math.isfinite(magnitude) and abs(total) > bound:
        return 1 if total > 0 else -1
    exact = Fraction(0)
    for wi, ai, bi in zip(w.tolist(), a.tolist(), b.tolist(), strict=True):
        ai, bi = Fraction(ai), Fraction(bi)
        exact += Fraction(wi) * (ai - bi) * factor(ai, bi, Fraction(v))
    return (exact > 0) - (exact < 0)


def _one_output(
    y: np.ndarray, a: np.ndarray, b: np.ndarray, s: np.ndarray, w: np.ndarray
) -> tuple[int | None, float]:
    """``(need, sign)`` of one output: order ``k`` exists iff ``r > need·k`` (None:
    every order); the sign of an infinite mean (NaN: undefined)."""
    noisy = s > 0.0
    exact_y = y[~noisy]
    varies = exact_y.size >= 2 and exact_y.min() < exact_y.max()
    if not noisy.any() or varies:  # Y is bounded away from 0
        return None, math.nan
    moving = bool(np.any(noisy & (a != b)))  # L depends on the noisy labels
    if exact_y.size:  # every exact label equals v: Y = 0 at one point
        sign = _exact_sign(w, a, b, "point", float(exact_y[0]))
    elif _exact_sign(w, a, b, "slope"):
        # all labels noisy: L(c) = 2c Σ w(a−b) − Σ w(a−b)(a+b) along y = c
        return 2, math.nan
    else:
        sign = -_exact_sign(w, a, b, "level")
    return (2, float(sign)) if sign else ((1 if moving else None), math.nan)


def r2_difference_existence(
    y: Any, a: Any, b: Any, sigma: Any, weight: Any, output_weights: Any = None
) -> DifferenceExistence:
    """Whether ``E`` and ``Var`` of ``R²_A − R²_B`` exist (:ref:`paired_existence`);
    outputs of weight 0 in ``output_weights`` are left out."""
    n, n_outputs = y.shape
    sigma = np.broadcast_to(np.asarray(sigma, dtype=np.float64), y.shape)
    rows = slice(None) if weight is None else np.flatnonzero(weight > 0.0)
    n_eff = n if weight is None else rows.size  # the positively weighted samples
    w = np.ones(n) if weight is None else weight[rows]
    signs, mean_fails, var_fails = set(), [], []  # fails: (output, rank, need)
    for j in range(n_outputs):
        if output_weights is not None and np.asarray(output_weights)[j] == 0.0:
            continue
        n_noisy = int(np.count_nonzero(sigma[rows, j] > 0.0))
        rank = n_noisy if n_noisy < n_eff else n_eff - 1
        if n_noisy == 0 or rank > 4:
            continue
        need, sign = _one_output(*(v[rows, j] for v in (y, a, b, sigma)), w)
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
    j, rank, need = mean_fails[0] if mean_fails else var_fails[0]
    what, order = ("expected value", 1) if mean_fails else ("variance", 2)
    where = f" (output {j})" if n_outputs > 1 else ""
    why = (
        " while the difference of the squared errors does not"
        if need == 2
        else ", and the difference of the squared errors vanishes there only linearly"
    )
    message = (
        f"The {what} of the R² difference does not exist{where}: the shared total "
        f"sum of squares can come arbitrarily close to 0{why}; the noise has rank "
        f"r = {rank} and the moment of order {order} needs r > {need * order}. Use "
        "more noisy labels, or include at least two exact labels (sigma = 0) with "
        "distinct values."
    )
    return DifferenceExistence(not mean_fails, False, expected, message)
