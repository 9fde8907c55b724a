"""Exact kernels of the paired difference ``metric(A) − metric(B)``.

Both models are scored on the same noisy labels (user guide:
:ref:`formula_paired`). Every kernel has the signature of
:attr:`~sklearn_noisy.metrics.MetricInfo.paired`::

    paired(y_true, y_pred_a, y_pred_b, *, sigma, q, transition_matrix, labels,
           classes, sample_weight, options)
        -> (expected, variance, nominal, n_samples) or None

and returns None where the metric options (a scorer's ``metric_kwargs``) or the
labels call for the joint Monte Carlo of
:func:`~sklearn_noisy.metrics.expected_paired_difference`. The caller has
checked that the noise is of the metric's kind (``sigma``, or exactly one of
``q`` and ``transition_matrix``). With ``sample_weight`` every mean is the
weighted mean, as in scikit-learn, and the variance weighs sample ``i`` by
``w_i² / (Σ w)²``.

Every kernel streams its samples in chunks of
:data:`~sklearn_noisy.utils._arrays.CHUNK_SIZE` rows (the class labels are
encoded chunk by chunk too), so that its temporary memory does not grow with
the number of samples.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.special import ndtr

from ..utils._arrays import check_sample_weight, chunk_of, chunks, weighted_totals
from ..utils._labels import (
    _small_int_labels,
    as_label_array,
    check_classification_labels,
)
from ..utils._noise import FlipNoise
from ..utils._validation import check_regression_inputs
from ._probabilistic_definitions import ProbabilisticLoss, _check_proba

__all__ = [
    "absolute_error_difference",
    "pair_classes",
    "paired_accuracy",
    "paired_accuracy_truth",
    "paired_precision",
    "paired_probabilistic",
    "paired_regression",
    "squared_error_difference",
]

#: The result of a kernel: ``(expected, variance, nominal, n_samples)``.
PairedResult = tuple[float, float, float, int]

_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)
#: Standardised limits are clipped here before squaring (user guide:
#: formula_numerics).
_Z_MAX = 1000.0


def _named(function: Callable[..., Any], name: str, *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)`` with ``y_pred`` in its errors named ``name``."""
    try:
        return function(*args, **kwargs)
    except (TypeError, ValueError) as exc:
        message = str(exc)
        if "y_pred" not in message:
            raise
        raise type(exc)(message.replace("y_pred", name)) from exc


def _label_arrays(
    y_true: Any, y_pred_a: Any, y_pred_b: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three label vectors (1-D, not copied), of one length, not empty."""
    y = as_label_array(y_true, name="y_true")
    a = as_label_array(y_pred_a, name="y_pred_a")
    b = as_label_array(y_pred_b, name="y_pred_b")
    if y.shape[0] == 0:
        raise ValueError("y_true is empty: at least one sample is required.")
    for name, values in (("y_pred_a", a), ("y_pred_b", b)):
        if values.shape[0] != y.shape[0]:
            raise ValueError(
                f"y_true and {name} must have the same number of samples; got "
                f"{y.shape[0]} and {values.shape[0]}."
            )
    return y, a, b


def pair_classes(
    y_true: Any, y_pred_a: Any, y_pred_b: Any, labels: Any = None
) -> np.ndarray:
    """The classes of a paired comparison: ``labels``, or the sorted union.

    Checked as scikit-learn checks a classification target: continuous values
    and mixed label types raise. The union is found chunk by chunk (small
    integer labels without sorting), so no array of the samples' size is made.
    """
    y, a, b = _label_arrays(y_true, y_pred_a, y_pred_b)
    if labels is not None:
        return _named(
            check_classification_labels, "y_pred_a", y[:1], a[:1], labels=labels
        )[2]
    fast = [_small_int_labels(y, values) for values in (a, b)]
    if fast[0] is not None and fast[1] is not None:
        return np.union1d(fast[0].classes, fast[1].classes)
    classes: np.ndarray | None = None
    for rows in chunks(y.shape[0]):
        for name, values in (("y_pred_a", a), ("y_pred_b", b)):
            found = _named(check_classification_labels, name, y[rows], values[rows])[2]
            classes = found if classes is None else np.union1d(classes, found)
    return classes


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


def _total_weight(weight: np.ndarray | None, n: int) -> float:
    return float(n) if weight is None else float(weight.sum())


# --------------------------------------------------------------------------- #
# Regression: Gaussian label errors
# --------------------------------------------------------------------------- #
def _regression_pair(
    y_true: Any, y_pred_a: Any, y_pred_b: Any, sigma: Any, sample_weight: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, Any, np.ndarray | None]:
    """Validated 2-D ``y_true``, ``a``, ``b``, ``sigma`` (float or array), weights."""
    y, a, s, weight, _ = _named(
        check_regression_inputs,
        "y_pred_a",
        y_true,
        y_pred_a,
        sigma=sigma,
        sample_weight=sample_weight,
    )
    _, b, _, _, _ = _named(
        check_regression_inputs, "y_pred_b", y_true, y_pred_b, sigma=sigma
    )
    return y, a, b, s, weight


def squared_error_difference(
    y_true: np.ndarray, a: np.ndarray, b: np.ndarray, sigma: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-sample ``(expected, nominal, variance)`` of MSE_A − MSE_B on a chunk.

    ``(b − a)(2y − a − b)`` is linear in y: the expected term is
    ``(b−a)(2ȳ − a − b)`` (= ``d_A² − d_B²`` in product form, no cancellation),
    equal to the nominal one, and the variance ``4 σ² (a − b)²`` (user guide:
    :ref:`formula_paired`). Summed over the outputs.
    """
    gap = b - a
    terms = np.sum(gap * ((y_true - a) + (y_true - b)), axis=1)
    scaled = sigma * gap
    return terms, terms, 4.0 * np.sum(scaled * scaled, axis=1)


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


def absolute_error_difference(
    y_true: np.ndarray, a: np.ndarray, b: np.ndarray, sigma: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-sample ``(expected, nominal, variance)`` of MAE_A − MAE_B on a chunk.

    Per sample ``|y − a| − |y − b| = sgn(b − a)·clip(2(y − c), −w, w)`` with
    ``c = (a + b)/2`` and ``w = |a − b|``, and ``2(y − c) ~ N(2(ȳ − c), 4σ²)``
    (user guide: :ref:`formula_paired`). Samples with ``σ = 0`` or ``a = b``
    take the branch ``Var = 0``. Summed over the outputs.
    """
    sigma = np.broadcast_to(sigma, y_true.shape)
    nominal = np.abs(y_true - a) - np.abs(y_true - b)
    w = np.abs(a - b)
    noisy = (sigma > 0.0) & (w > 0.0)
    expected = nominal.copy()
    variance = np.zeros(y_true.shape)
    if noisy.any():
        c = 0.5 * (a[noisy] + b[noisy])
        mean, var = _clipped_normal_moments(
            2.0 * (y_true[noisy] - c), 2.0 * sigma[noisy], w[noisy]
        )
        expected[noisy] = np.sign(b[noisy] - a[noisy]) * mean
        variance[noisy] = var
    return expected.sum(axis=1), nominal.sum(axis=1), variance.sum(axis=1)


def paired_regression(
    difference: Callable[..., tuple[np.ndarray, np.ndarray, np.ndarray]],
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    *,
    sigma: Any,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    classes: Any,
    sample_weight: Any,
    options: dict[str, Any],
) -> PairedResult | None:
    """The paired kernel of a loss's ``difference`` terms (its definition's
    ``paired``), chunk by chunk; None with options (left to Monte Carlo).

    The means are uniform over the outputs and weighted over the samples, as
    scikit-learn's ``multioutput="uniform_average"``.
    """
    if options:
        return None
    y, a, b, s, weight = _regression_pair(
        y_true, y_pred_a, y_pred_b, sigma, sample_weight
    )
    n, n_outputs = y.shape
    totals = np.zeros(3)
    for rows in chunks(n):
        expected, nominal, variance = difference(
            y[rows], a[rows], b[rows], chunk_of(s, rows)
        )
        totals += weighted_totals(weight, rows, expected, nominal, variance)
    total = _total_weight(weight, n) * n_outputs
    return totals[0] / total, totals[2] / (total * total), totals[1] / total, n


# --------------------------------------------------------------------------- #
# Classification: label flips
# --------------------------------------------------------------------------- #
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
    sample_weight: Any,
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
    y, a, b = _label_arrays(y_true, y_pred_a, y_pred_b)
    classes = pair_classes(y, a, b, labels)
    n = y.shape[0]
    weight = check_sample_weight(sample_weight, n)
    noise = FlipNoise.from_params(
        q, transition_matrix, n_samples=n, n_classes=classes.size
    )
    totals = np.zeros(3)
    for rows in chunks(n):
        true_index, a_index, b_index = _encode_chunk(y, a, b, rows, classes)
        differ = a_index != b_index
        p_a = noise.probability(true_index, a_index, rows)
        p_b = noise.probability(true_index, b_index, rows)
        hits = (a_index == true_index).astype(np.float64) - (b_index == true_index)
        expected = np.where(differ, p_a - p_b, 0.0)
        variance = np.where(
            differ, p_a * (1.0 - p_a) + p_b * (1.0 - p_b) + 2.0 * p_a * p_b, 0.0
        )
        totals += weighted_totals(weight, rows, hits, expected, variance)
    total = _total_weight(weight, n)
    return totals[1] / total, totals[2] / (total * total), totals[0] / total, n


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
    sample_weight: Any,
    options: dict[str, Any],
) -> PairedResult | None:
    """Binary precision of A minus that of B, exact.

    Precision is ``TP / n_P`` with ``n_P`` the (weighted) number of predicted
    positives, which does not depend on the labels (user guide:
    :ref:`formula_binary_counts`). The difference is therefore linear in the
    observed positives: ``Σ_i c_i 1[ỹ_i = pos]`` with
    ``c_i = w_i (1[ŷ_A,i = pos]/n_PA − 1[ŷ_B,i = pos]/n_PB)`` (a model without
    predicted positives has precision 0, scikit-learn's default), so
    ``E = Σ c_i π_i`` and ``Var = Σ c_i² π_i (1 − π_i)`` with
    ``π_i = P(ỹ_i = pos)``. None (Monte Carlo) with options other than
    ``pos_label``, with more than two classes, or when ``pos_label`` is not
    one of the classes.
    """
    if not set(options) <= {"pos_label"}:
        return None
    y, a, b = _label_arrays(y_true, y_pred_a, y_pred_b)
    classes = pair_classes(y, a, b, labels)
    if classes.size > 2:
        return None
    pos_label = options.get("pos_label", 1)
    matches = [i for i, c in enumerate(classes.tolist()) if c == pos_label]
    if not matches:
        return None
    pos = matches[0]
    n = y.shape[0]
    weight = check_sample_weight(sample_weight, n)
    noise = FlipNoise.from_params(
        q, transition_matrix, n_samples=n, n_classes=classes.size
    )
    predicted = np.zeros(2)  # the (weighted) predicted positives of A and B
    for rows in chunks(n):
        _, a_index, b_index = _encode_chunk(y, a, b, rows, classes)
        positive = np.stack((a_index == pos, b_index == pos))
        if weight is None:
            predicted += np.count_nonzero(positive, axis=1)
        else:
            predicted += positive.astype(np.float64) @ weight[rows]
    scale = [1.0 / count if count > 0 else 0.0 for count in predicted]
    totals = np.zeros(3)
    for rows in chunks(n):
        true_index, a_index, b_index = _encode_chunk(y, a, b, rows, classes)
        coefficient = (a_index == pos) * scale[0] - (b_index == pos) * scale[1]
        if weight is not None:
            coefficient *= weight[rows]
        if classes.size < 2:  # one class (the noise is still validated above)
            pi = np.ones(true_index.shape[0])
        else:
            pi = noise.probability(true_index, np.full_like(true_index, pos), rows)
        totals += (
            coefficient @ (true_index == pos).astype(np.float64),
            coefficient @ pi,
            (coefficient * coefficient) @ (pi * (1.0 - pi)),
        )
    return float(totals[1]), float(totals[2]), float(totals[0]), n


# --------------------------------------------------------------------------- #
# Brier score and log-loss: per-sample losses of a categorical label
# --------------------------------------------------------------------------- #
def paired_probabilistic(
    definition: ProbabilisticLoss,
    y_true: Any,
    proba_a: Any,
    proba_b: Any,
    *,
    sigma: Any,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    classes: Any,
    sample_weight: Any,
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
    y = as_label_array(y_true, name="y_true")
    n = y.shape[0]
    if a.shape[0] != n:
        raise ValueError(
            "y_true and the probabilities must have the same number of samples; "
            f"got {n} and {a.shape[0]}."
        )
    columns = _column_classes(y, labels if classes is None else classes, n_classes)
    weight = check_sample_weight(sample_weight, n)
    if definition.pos_label and a.ndim == 2 and n_classes == 2:
        a, b = a[:, 1], b[:, 1]  # the positive (larger) class column
    loss_a, loss_b = definition.loss(eps_a), definition.loss(eps_b)
    noise = FlipNoise.from_params(
        q, transition_matrix, n_samples=n, n_classes=n_classes
    )
    totals = np.zeros(3)
    for rows in chunks(n):
        k = check_classification_labels(y[rows], y[rows], labels=columns)[0]
        difference = loss_a(a[rows]) - loss_b(b[rows])
        weights = noise.observation_rows(k, rows)
        expected = np.einsum("ij,ij->i", weights, difference)
        centred = difference - expected[:, None]
        totals += weighted_totals(
            weight,
            rows,
            difference[np.arange(k.shape[0]), k],
            expected,
            np.einsum("ij,ij->i", weights, centred * centred),
        )
    total = _total_weight(weight, n)
    return totals[1] / total, totals[2] / (total * total), totals[0] / total, n


def _column_classes(y: np.ndarray, classes: Any, n_classes: int) -> np.ndarray:
    """The classes of the probability columns, checked against their number.

    ``classes`` (default: the classes of ``y_true``, found chunk by chunk) must
    be sorted, as the columns of ``predict_proba``, and one per column.
    """
    classes = pair_classes(y, y, y) if classes is None else np.asarray(classes)
    if classes.size != n_classes:
        raise ValueError(
            f"The probabilities have {n_classes} columns but there are "
            f"{classes.size} classes ({classes.tolist()}); pass classes= in the "
            "order of the columns."
        )
    if np.any(classes[1:] <= classes[:-1]):
        raise ValueError("classes must be sorted, as the columns of predict_proba.")
    return classes


# --------------------------------------------------------------------------- #
# The truth estimand: the difference against the true labels
# --------------------------------------------------------------------------- #
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
    sample_weight: Any,
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
    y, a, b = _label_arrays(y_true, y_pred_a, y_pred_b)
    classes = pair_classes(y, a, b, labels)
    n = y.shape[0]
    weight = check_sample_weight(sample_weight, n)
    noise = FlipNoise.from_params(
        q, transition_matrix, n_samples=n, n_classes=classes.size
    )
    inverse = noise.inverse_matrix() if noise.matrix is not None else None
    if inverse is None:
        noise.check_invertible()
    totals = np.zeros(3)
    for rows in chunks(n):
        true_index, a_index, b_index = _encode_chunk(y, a, b, rows, classes)
        inverse_rows = noise.inverse_rows(true_index, rows, inverse)
        size = np.arange(true_index.shape[0])
        hit_a, hit_b = inverse_rows[size, a_index], inverse_rows[size, b_index]
        differ = a_index != b_index
        gap = np.where(differ, hit_a - hit_b, 0.0)
        variance = np.where(differ, gap * gap - hit_a - hit_b, 0.0)
        hits = (a_index == true_index).astype(np.float64) - (b_index == true_index)
        totals += weighted_totals(weight, rows, hits, gap, variance)
    total = _total_weight(weight, n)
    variance = max(float(totals[2]) / (total * total), 0.0)
    return totals[1] / total, variance, totals[0] / total, n
