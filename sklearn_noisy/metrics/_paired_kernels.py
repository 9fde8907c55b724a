"""Exact kernels of the paired difference ``metric(A) − metric(B)``.

Both models are scored on the same noisy labels (user guide:
:ref:`formula_paired`). Every kernel has the signature of
:attr:`~sklearn_noisy.metrics.MetricInfo.paired`::

    paired(y_true, y_pred_a, y_pred_b, *, sigma, q, transition_matrix, labels,
           classes, options) -> (expected, variance, nominal, n_samples) or None

and returns None where the metric options (a scorer's ``metric_kwargs``) or the
labels call for the joint Monte Carlo of
:func:`~sklearn_noisy.metrics.expected_paired_difference`. The caller has
checked that the noise is of the metric's kind (``sigma``, or exactly one of
``q`` and ``transition_matrix``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import ndtr

from ..utils._arrays import chunks
from ..utils._labels import check_classification_labels
from ..utils._noise import FlipNoise
from ..utils._validation import check_regression_inputs
from ._probabilistic import _brier_loss, _check_proba, _log_loss_factory

__all__ = [
    "paired_accuracy",
    "paired_accuracy_truth",
    "paired_brier_score_loss",
    "paired_log_loss",
    "paired_mean_absolute_error",
    "paired_mean_squared_error",
    "paired_mean_squared_error_truth",
    "paired_precision",
    "union_labels",
]

#: The result of a kernel: ``(expected, variance, nominal, n_samples)``.
PairedResult = tuple[float, float, float, int]

_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)
#: Standardised limits are clipped here before squaring (user guide:
#: formula_numerics).
_Z_MAX = 1000.0


def union_labels(*arrays: Any) -> np.ndarray:
    """The sorted union of the labels in ``arrays`` (lists, arrays or Series)."""
    values = [
        np.asarray(v.to_numpy() if hasattr(v, "to_numpy") else v).ravel()
        for v in arrays
    ]
    return np.unique(np.concatenate(values))


# --------------------------------------------------------------------------- #
# Regression: Gaussian label errors
# --------------------------------------------------------------------------- #
def _regression_pair(
    y_true: Any, y_pred_a: Any, y_pred_b: Any, sigma: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Validated 2-D ``y_true``, ``a``, ``b`` and a broadcastable ``sigma``."""
    y, a, s, _, _ = check_regression_inputs(y_true, y_pred_a, sigma=sigma)
    _, b, _, _, _ = check_regression_inputs(y_true, y_pred_b, sigma=sigma)
    return y, a, b, np.broadcast_to(np.asarray(s, dtype=np.float64), y.shape)


def _squared_error_difference(
    y_true: np.ndarray, a: np.ndarray, b: np.ndarray, sigma: np.ndarray
) -> tuple[float, float, float]:
    """MSE_A − MSE_B: ``(b − a)(2y − a − b)`` is linear in y.

    ``E = (1/M) Σ (b−a)(2ȳ − a − b)`` (= ``d_A² − d_B²`` in product form, no
    cancellation) and ``Var = (4/M²) Σ σ² (a − b)²``; the nominal difference on
    ``ȳ`` equals the expectation (user guide: :ref:`formula_paired`).
    """
    n = y_true.size
    gap = b - a
    expected = float(np.sum(gap * ((y_true - a) + (y_true - b)))) / n
    variance = 4.0 * float(np.sum((sigma * gap) ** 2)) / (n * n)
    return expected, variance, expected


def _phi(z: np.ndarray) -> np.ndarray:
    return np.exp(-0.5 * z * z) * _INV_SQRT_2PI


def _clipped_normal_moments(
    mu: np.ndarray, tau: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of ``clip(X, −w, w)`` for ``X ~ N(mu, tau²)``, ``tau > 0``.

    The moments are taken of ``Y = clip(X, −w, w) − k`` with
    ``k = clip(mu, −w, w)`` (user guide: :ref:`formula_paired`): with
    ``m = mu − k``, ``α = (−w − mu)/tau``, ``β = (w − mu)/tau`` and
    ``P = Φ(β) − Φ(α)`` taken from the tail side,

    ``E[Y]  = (−w−k)Φ(α) + (w−k)Φ(−β) + mP + tau(φ(α) − φ(β))``
    ``E[Y²] = (w+k)²Φ(α) + (w−k)²Φ(−β) + m²P + 2m·tau(φ(α) − φ(β))
    + tau²(P + αφ(α) − βφ(β))``

    and ``Var = E[Y²] − E[Y]²``, in which ``E[Y]`` is small where ``E[Y²]`` is.
    Returns ``(E[clip X], Var[clip X])``.
    """
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


def _absolute_error_difference(
    y_true: np.ndarray, a: np.ndarray, b: np.ndarray, sigma: np.ndarray
) -> tuple[float, float, float]:
    """MAE_A − MAE_B through a clipped normal (user guide: :ref:`formula_paired`).

    Per sample ``|y − a| − |y − b| = sgn(b − a)·clip(2(y − c), −w, w)`` with
    ``c = (a + b)/2`` and ``w = |a − b|``, and ``2(y − c) ~ N(2(ȳ − c), 4σ²)``.
    Samples with ``σ = 0`` or ``a = b`` take the branch ``Var = 0``.
    """
    n = y_true.size
    y_true, a, b, sigma = (v.ravel() for v in (y_true, a, b, sigma))
    nominal_terms = np.abs(y_true - a) - np.abs(y_true - b)
    sign = np.sign(b - a)
    w = np.abs(a - b)
    noisy = (sigma > 0.0) & (w > 0.0)
    expected_terms = nominal_terms.copy()
    variance = 0.0
    if noisy.any():
        c = 0.5 * (a[noisy] + b[noisy])
        mean, var = _clipped_normal_moments(
            2.0 * (y_true[noisy] - c), 2.0 * sigma[noisy], w[noisy]
        )
        expected_terms[noisy] = sign[noisy] * mean
        variance = float(np.sum(var)) / (n * n)
    return float(np.sum(expected_terms)) / n, variance, float(np.sum(nominal_terms)) / n


def _regression_kernel(
    difference: Callable[..., tuple[float, float, float]],
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    *,
    sigma: Any,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    classes: Any,
    options: dict[str, Any],
) -> PairedResult | None:
    """The paired kernel of ``difference``; None with metric options."""
    if options:
        return None
    y, a, b, s = _regression_pair(y_true, y_pred_a, y_pred_b, sigma)
    expected, variance, nominal = difference(y, a, b, s)
    return expected, variance, nominal, y.shape[0]


#: MSE_A − MSE_B, exact; None with metric options (left to Monte Carlo).
paired_mean_squared_error = functools.partial(
    _regression_kernel, _squared_error_difference
)
#: MAE_A − MAE_B, exact; None with metric options (left to Monte Carlo).
paired_mean_absolute_error = functools.partial(
    _regression_kernel, _absolute_error_difference
)


# --------------------------------------------------------------------------- #
# Classification: label flips
# --------------------------------------------------------------------------- #
def _encode_pair(
    y_true: Any, y_pred_a: Any, y_pred_b: Any, labels: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(true_index, a_index, b_index, classes)``; default classes: the union."""
    if labels is None:
        labels = union_labels(y_true, y_pred_a, y_pred_b)
    true_index, a_index, classes = check_classification_labels(
        y_true, y_pred_a, labels=labels
    )
    _, b_index, _ = check_classification_labels(y_true, y_pred_b, labels=labels)
    return true_index, a_index, b_index, classes


def paired_accuracy(
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    *,
    sigma: Any,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    classes: Any,
    options: dict[str, Any],
) -> PairedResult | None:
    """acc_A − acc_B, exact (user guide: :ref:`formula_paired`).

    Where the two predictions differ the events "observed label = ŷ_A" and
    "= ŷ_B" are disjoint: ``E = P_A − P_B`` and
    ``Var = P_A(1−P_A) + P_B(1−P_B) + 2 P_A P_B`` (a sum of non-negative terms),
    with ``P_X`` the probability that the label of sample ``i`` is observed as
    ``ŷ_X`` (:meth:`~sklearn_noisy.utils._noise.FlipNoise.probability`). Where
    they agree the difference is 0. None with metric options.
    """
    if options:
        return None
    true_index, a_index, b_index, labels = _encode_pair(
        y_true, y_pred_a, y_pred_b, labels
    )
    n = true_index.size
    noise = FlipNoise.from_params(
        q, transition_matrix, n_samples=n, n_classes=labels.size
    )
    correct_a = int(np.count_nonzero(a_index == true_index))
    correct_b = int(np.count_nonzero(b_index == true_index))
    nominal = (correct_a - correct_b) / n
    differ = a_index != b_index
    if not differ.any():  # also every single-class problem
        return 0.0, 0.0, nominal, n
    p_a = noise.probability(true_index, a_index, slice(None))[differ]
    p_b = noise.probability(true_index, b_index, slice(None))[differ]
    expected = float(np.sum(p_a - p_b)) / n
    per_sample = p_a * (1.0 - p_a) + p_b * (1.0 - p_b) + 2.0 * p_a * p_b
    return expected, float(np.sum(per_sample)) / (n * n), nominal, n


def paired_precision(
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    *,
    sigma: Any,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    classes: Any,
    options: dict[str, Any],
) -> PairedResult | None:
    """Binary precision of A minus that of B, exact.

    Precision is ``TP / n_P`` with ``n_P`` the number of predicted positives,
    which does not depend on the labels (user guide:
    :ref:`formula_binary_counts`). The difference is therefore linear in the
    observed positives: ``Σ_i c_i 1[ỹ_i = pos]`` with
    ``c_i = 1[ŷ_A,i = pos]/n_PA − 1[ŷ_B,i = pos]/n_PB`` (a model without
    predicted positives has precision 0, scikit-learn's default), so
    ``E = Σ c_i π_i`` and ``Var = Σ c_i² π_i (1 − π_i)`` with
    ``π_i = P(ỹ_i = pos)``. None (Monte Carlo) with options other than
    ``pos_label``, with more than two classes, or when ``pos_label`` is not
    one of the classes.
    """
    if not set(options) <= {"pos_label"}:
        return None
    true_index, a_index, b_index, labels = _encode_pair(
        y_true, y_pred_a, y_pred_b, labels
    )
    if labels.size > 2:
        return None
    pos_label = options.get("pos_label", 1)
    matches = [i for i, c in enumerate(labels.tolist()) if c == pos_label]
    if not matches:
        return None
    pos = matches[0]
    n = true_index.shape[0]
    coefficient = np.zeros(n)
    for index, sign in ((a_index, 1.0), (b_index, -1.0)):
        predicted = index == pos
        n_predicted = int(np.count_nonzero(predicted))
        if n_predicted:
            coefficient[predicted] += sign / n_predicted
    noise = FlipNoise.from_params(
        q, transition_matrix, n_samples=n, n_classes=labels.size
    )
    if labels.size < 2:  # one class (the noise is still validated above)
        pi = np.ones(n)
    else:
        pi = noise.probability(true_index, np.full(n, pos), slice(None))
    nominal = float(coefficient @ (true_index == pos))
    expected = float(coefficient @ pi)
    variance = float((coefficient * coefficient) @ (pi * (1.0 - pi)))
    return expected, variance, nominal, n


# --------------------------------------------------------------------------- #
# Brier score and log-loss: per-sample losses of a categorical label
# --------------------------------------------------------------------------- #
def _probabilistic_kernel(
    metric: str,
    y_true: Any,
    proba_a: Any,
    proba_b: Any,
    *,
    sigma: Any,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    classes: Any,
    options: dict[str, Any],
) -> PairedResult | None:
    """Brier score or log-loss of A minus that of B, exact; None with options.

    Both losses are sums of per-sample terms ``L_ij``, the loss of sample ``i``
    if its label is class ``j`` (user guide: :ref:`formula_probabilistic`). The
    per-sample difference ``D_ij = L^A_ij − L^B_ij`` has, with
    ``w_ij = P(label_i = j)``
    (:meth:`~sklearn_noisy.utils._noise.FlipNoise.observation_rows`),
    ``E_i = Σ_j w_ij D_ij`` and ``Var_i = Σ_j w_ij (D_ij − E_i)²`` (centred).
    The loss tables are those of
    :func:`~sklearn_noisy.metrics.expected_brier_score_loss` and
    :func:`~sklearn_noisy.metrics.expected_log_loss` (binary Brier on the
    probability of the larger class, log-loss clipped at the dtype's eps).
    """
    if options:
        return None
    a, eps_a = _check_proba(proba_a)
    b, eps_b = _check_proba(proba_b)
    if a.shape != b.shape:
        raise ValueError(
            "y_pred_a and y_pred_b must have the same shape; got "
            f"{a.shape} and {b.shape}."
        )
    n_classes = 2 if a.ndim == 1 else a.shape[1]
    index = _column_positions(y_true, labels if classes is None else classes, n_classes)
    n = index.shape[0]
    if a.shape[0] != n:
        raise ValueError(
            "y_true and the probabilities must have the same number of samples; "
            f"got {n} and {a.shape[0]}."
        )
    if metric == "brier_score_loss":
        if a.ndim == 2 and n_classes == 2:  # the positive (larger) class column
            a, b = a[:, 1], b[:, 1]
        loss_a = loss_b = _brier_loss
    else:
        loss_a, loss_b = _log_loss_factory(eps_a), _log_loss_factory(eps_b)
    noise = FlipNoise.from_params(
        q, transition_matrix, n_samples=n, n_classes=n_classes
    )
    totals = np.zeros(3)
    for rows in chunks(n):
        k = index[rows]
        difference = loss_a(a[rows]) - loss_b(b[rows])
        weights = noise.observation_rows(k, rows)
        expected = np.einsum("ij,ij->i", weights, difference)
        centred = difference - expected[:, None]
        totals += (
            difference[np.arange(k.shape[0]), k].sum(),
            expected.sum(),
            np.einsum("ij,ij->", weights, centred * centred),
        )
    return totals[1] / n, totals[2] / (n * n), totals[0] / n, n


def _column_positions(y_true: Any, classes: Any, n_classes: int) -> np.ndarray:
    """Each label's column in the probabilities: its position in ``classes``.

    ``classes`` (default: the classes of ``y_true``) must be sorted, as the
    columns of ``predict_proba``, and one per column.
    """
    if classes is None:
        classes = np.unique(np.asarray(y_true))
    classes = np.asarray(classes)
    if classes.size != n_classes:
        raise ValueError(
            f"The probabilities have {n_classes} columns but there are "
            f"{classes.size} classes ({classes.tolist()}); pass classes= in the "
            "order of the columns."
        )
    if np.any(classes[1:] <= classes[:-1]):
        raise ValueError("classes must be sorted, as the columns of predict_proba.")
    index, _, _ = check_classification_labels(y_true, y_true, labels=classes)
    return index


#: Brier score of A minus that of B, exact; None with metric options.
paired_brier_score_loss = functools.partial(_probabilistic_kernel, "brier_score_loss")
#: Log-loss of A minus that of B, exact; None with metric options.
paired_log_loss = functools.partial(_probabilistic_kernel, "log_loss")


# --------------------------------------------------------------------------- #
# The truth estimand: the difference against the true labels
# --------------------------------------------------------------------------- #
def paired_mean_squared_error_truth(
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    *,
    sigma: Any,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    classes: Any,
    options: dict[str, Any],
) -> PairedResult | None:
    """MSE_A − MSE_B against the true values: the nominal difference.

    The label noise adds the same ``σ_i²`` to both models' expected squared
    errors, so the nominal difference ``(1/M) Σ (b−a)(2ỹ − a − b)`` is unbiased
    for the difference against the true values, and its variance
    ``(4/M²) Σ σ_i² (a_i − b_i)²`` is exact: σ⁴ cancels, so σ's own uncertainty
    does not enter (user guide: :ref:`formula_paired`). The same arithmetic
    as the forward kernel.
    """
    return paired_mean_squared_error(
        y_true,
        y_pred_a,
        y_pred_b,
        sigma=sigma,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        classes=classes,
        options=options,
    )


def paired_accuracy_truth(
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    *,
    sigma: Any,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    classes: Any,
    options: dict[str, Any],
) -> PairedResult | None:
    """acc_A − acc_B against the true classes: the difference of de-noised hits.

    ``h_i(j) = T⁻¹[c̃_i, j]`` is unbiased for ``1[c_i = j]`` (user guide:
    :ref:`formula_truth`), so ``D_i = h_i(ŷ_A,i) − h_i(ŷ_B,i)`` is unbiased for
    the difference of the true hits, for any flip model. Per sample
    ``Var D_i = E[D_i²] − δ_i²`` with ``δ_i² = 1[c_i = ŷ_A,i] + 1[c_i = ŷ_B,i]``
    where the predictions differ, so ``D_i² − h_i(ŷ_A,i) − h_i(ŷ_B,i)`` is
    unbiased for it; the sum is reported floored at 0 (binary with ``q``: it is
    the exact ``4q(1 − q)/(1 − 2q)²`` per disagreement). Needs an invertible
    flip model. None with metric options.
    """
    if options:
        return None
    true_index, a_index, b_index, labels = _encode_pair(
        y_true, y_pred_a, y_pred_b, labels
    )
    n = true_index.size
    noise = FlipNoise.from_params(
        q, transition_matrix, n_samples=n, n_classes=labels.size
    )
    nominal = (
        float(
            np.count_nonzero(a_index == true_index)
            - np.count_nonzero(b_index == true_index)
        )
        / n
    )
    differ = np.flatnonzero(a_index != b_index)
    if differ.size == 0:
        return 0.0, 0.0, nominal, n
    inverse = noise.inverse_matrix() if noise.matrix is not None else None
    if inverse is None:
        noise.check_invertible()
    rows = noise.inverse_rows(true_index, slice(None), inverse)[differ]
    hit_a = rows[np.arange(differ.size), a_index[differ]]
    hit_b = rows[np.arange(differ.size), b_index[differ]]
    gap = hit_a - hit_b
    variance = float(np.sum(gap * gap - hit_a - hit_b)) / (n * n)
    return float(np.sum(gap)) / n, max(variance, 0.0), nominal, n
