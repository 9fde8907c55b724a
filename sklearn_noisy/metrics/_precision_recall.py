"""Expected precision, recall, F1, balanced accuracy and MCC under label flips.

FORMULAS.md §8. For binary labels, let ``P`` be the samples predicted positive
(``n_P`` of them, ``n_N = M - n_P`` predicted negative). Each observed label is
positive with probability ``π_i`` (``1 - q_i`` if ``y_true_i`` is the positive
label, ``q_i`` otherwise, or ``T[y_true_i, pos_label]`` for a transition matrix).
The true-positive count ``TP`` and the false-negative count ``FN`` are
independent Poisson-binomial variables; ``S = TP + FN`` is the number of
observed positives.

* Precision ``TP / n_P`` is linear in the labels: closed form.
* Given ``S = n``, recall, F1, balanced accuracy and MCC are all affine in TP,
  ``metric = α(n) + β(n) TP``. With the PMFs ``p_T`` and ``p_F`` of TP and FN
  (:mod:`._poisson_binomial`, O(M log² M)) and the convolutions
  ``G_r = ((a - μ_T)^r p_T) * p_F``, ``r = 0, 1, 2``, the mean and the centred
  variance are finite sums over ``n``: exact up to float64 round-off.
* ``method="delta"`` replaces this by the second-order delta method in
  ``(TP, FN)``, accurate for large M (table in each docstring).

Multiclass labels (and ``average`` other than ``"binary"``) go through
:func:`~sklearn_noisy.metrics.monte_carlo_score`, except the micro average,
which equals the accuracy and is exact (FORMULAS.md §3).
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from typing import Any

import numpy as np
from scipy import fft as sp_fft
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import (
    balanced_accuracy_score,
    f1_score,
    matthews_corrcoef,
    precision_score,
    recall_score,
)

from .._noisy_score import NoisyScore
from ..utils._labels import as_label_array, check_classification_labels
from ..utils._validation import (
    check_estimand,
    check_flip_probability,
    check_noise_model,
    check_transition_matrix,
)
from ._poisson_binomial import poisson_binomial_window

__all__ = [
    "expected_balanced_accuracy_score",
    "expected_f1_score",
    "expected_matthews_corrcoef",
    "expected_precision_score",
    "expected_recall_score",
]

_AVERAGES = ("binary", "micro", "macro", "weighted")
_METHODS = ("exact", "delta")
#: Convolutions with a factor shorter than this are computed directly.
_DIRECT_CONVOLUTION_MAX = 64


# --------------------------------------------------------------------------
# The metrics as affine functions of TP given S = n (FORMULAS.md §8 table)
# --------------------------------------------------------------------------


def _safe_reciprocal(denominator: np.ndarray) -> np.ndarray:
    """``1/denominator`` where it is positive, 0 elsewhere (zero-division → 0)."""
    out = np.zeros_like(denominator, dtype=np.float64)
    np.divide(1.0, denominator, out=out, where=denominator > 0)
    return out


def _affine_coefficients(
    metric: str, n: np.ndarray, n_pred_pos: int, n_samples: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(α(n), β(n))`` with ``metric = α(n) + β(n) TP`` given ``S = n``.

    The zero-division conventions are scikit-learn's defaults
    (``zero_division="warn"`` gives 0; balanced accuracy averages only the
    classes present in the observed labels; MCC is 0 when undefined).
    """
    n = np.asarray(n, dtype=np.float64)
    m = float(n_samples)
    n_pos = float(n_pred_pos)
    n_neg = m - n_pos
    zeros = np.zeros_like(n)
    if metric == "precision":
        return zeros, np.full_like(n, 1.0 / n_pos if n_pos > 0 else 0.0)
    if metric == "recall":
        return zeros, _safe_reciprocal(n)
    if metric == "f1":
        return zeros, 2.0 * _safe_reciprocal(n_pos + n)
    if metric == "balanced_accuracy":
        inv_neg = _safe_reciprocal(m - n)  # 1/(M - n), 0 at n = M
        inv_pos = _safe_reciprocal(n)  # 1/n, 0 at n = 0
        alpha = 0.5 * (n_neg - n) * inv_neg
        beta = 0.5 * (inv_pos + inv_neg)
        # Only one class observed: BA is the recall of that class alone.
        alpha = np.where(n == 0, n_neg / m, np.where(n == m, 0.0, alpha))
        beta = np.where(n == 0, 0.0, np.where(n == m, 1.0 / m, beta))
        return alpha, beta
    if metric == "matthews_corrcoef":
        inv_d = _safe_reciprocal(np.sqrt(n_pos * n_neg) * np.sqrt(n * (m - n)))
        return -n_pos * n * inv_d, m * inv_d
    raise ValueError(f"unknown metric {metric!r}")  # pragma: no cover


def _metric_from_counts(
    metric: str, tp: int, n_obs_pos: int, n_pred_pos: int, n_samples: int
) -> float:
    """The metric on one labelling (scikit-learn's value, from the counts)."""
    alpha, beta = _affine_coefficients(
        metric, np.array([float(n_obs_pos)]), n_pred_pos, n_samples
    )
    return float(alpha[0] + beta[0] * tp)


# --------------------------------------------------------------------------
# Exact algorithm and delta method (binary)
# --------------------------------------------------------------------------


def _convolve_moments(
    counts: np.ndarray, p_tp: np.ndarray, p_fn: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``G_r = (counts^r p_tp) * p_fn`` for r = 0, 1, 2 (FFT of p_fn shared)."""
    factors = (p_tp, counts * p_tp, counts * counts * p_tp)
    if min(p_tp.size, p_fn.size) <= _DIRECT_CONVOLUTION_MAX:
        g0, g1, g2 = (np.convolve(f, p_fn) for f in factors)
        return g0, g1, g2
    size = p_tp.size + p_fn.size - 1
    n_fft = sp_fft.next_fast_len(size, real=True)
    spectrum_fn = sp_fft.rfft(p_fn, n_fft)
    g0, g1, g2 = (
        sp_fft.irfft(sp_fft.rfft(f, n_fft) * spectrum_fn, n_fft)[:size] for f in factors
    )
    # G0 and G2 are convolutions of non-negative arrays: clip FFT round-off.
    return np.maximum(g0, 0.0), g1, np.maximum(g2, 0.0)


def _exact_moments(
    metrics: tuple[str, ...], pi: np.ndarray, pred_pos: np.ndarray
) -> dict[str, tuple[float, float]]:
    """Exact ``(E, Var)`` of each metric by the Poisson-binomial algorithm (§8).

    ``p_T``, ``p_F`` and the three convolutions are shared by all ``metrics``.
    TP is centred on its mean ``μ_T`` before the convolutions, so that the
    conditional terms of the variance are of the order of the metric's own
    spread and the centred sum loses no digits.
    """
    n_samples = pi.size
    n_pred_pos = int(np.count_nonzero(pred_pos))
    pi_pos = pi[pred_pos]
    offset_tp, p_tp = poisson_binomial_window(pi_pos)
    offset_fn, p_fn = poisson_binomial_window(pi[~pred_pos])
    mean_tp = float(pi_pos.sum())
    centred = (offset_tp - mean_tp) + np.arange(p_tp.size, dtype=np.float64)
    g0, g1, g2 = _convolve_moments(centred, p_tp, p_fn)
    n = offset_tp + offset_fn + np.arange(g0.size, dtype=np.float64)
    mass = g0.sum()
    results = {}
    for metric in metrics:
        alpha, beta = _affine_coefficients(metric, n, n_pred_pos, n_samples)
        alpha = alpha + beta * mean_tp  # metric = α' + β (TP - μ_T)
        expected = float((alpha @ g0 + beta @ g1) / mass)
        dev = alpha - expected
        variance = float(
            (dev * dev @ g0 + 2.0 * (dev * beta) @ g1 + (beta * beta) @ g2) / mass
        )
        results[metric] = (expected, max(variance, 0.0))
    return results


def _delta_moments(
    metric: str, pi: np.ndarray, var: np.ndarray, pred_pos: np.ndarray
) -> tuple[float, float]:
    """Second-order delta method in (TP, FN) (FORMULAS.md §8).

    ``E ≈ f + ½ (f_TT V_T + f_FF V_F)`` and ``Var ≈ f_T² V_T + f_F² V_F`` at the
    means; TP and FN are independent, so there are no cross terms.
    """
    m = float(pi.size)
    n_pos = float(np.count_nonzero(pred_pos))
    n_neg = m - n_pos
    t = float(pi[pred_pos].sum())
    f = float(pi[~pred_pos].sum())
    v_t = float(var[pred_pos].sum())
    v_f = float(var[~pred_pos].sum())
    s = t + f
    if v_t + v_f == 0.0:  # no label can flip: the metric is deterministic
        return _metric_from_counts(metric, round(t), round(s), int(n_pos), int(m)), 0.0
    if metric == "recall":
        value = t / s
        d_t, d_f = f / s**2, -t / s**2
        d_tt, d_ff = -2.0 * f / s**3, 2.0 * t / s**3
    elif metric == "f1":
        d = n_pos + s
        value = 2.0 * t / d
        d_t, d_f = 2.0 * (n_pos + f) / d**2, -2.0 * t / d**2
        d_tt, d_ff = -4.0 * (n_pos + f) / d**3, 4.0 * t / d**3
    elif metric == "balanced_accuracy":
        u, w = n_neg - f, m - s
        value = 0.5 * (t / s + u / w)
        d_t = 0.5 * (f / s**2 + u / w**2)
        d_f = 0.5 * (-t / s**2 - (n_pos - t) / w**2)
        d_tt = 0.5 * (-2.0 * f / s**3 + 2.0 * u / w**3)
        d_ff = 0.5 * (2.0 * t / s**3 - 2.0 * (n_pos - t) / w**3)
    else:  # matthews_corrcoef
        if n_pos == 0 or n_neg == 0:  # D = 0 for every labelling: MCC = 0
            return 0.0, 0.0
        c = np.sqrt(n_pos * n_neg)
        h = s * (m - s)
        w0 = h**-0.5
        w1 = -0.5 * h**-1.5 * (m - 2.0 * s)
        w2 = 0.75 * h**-2.5 * (m - 2.0 * s) ** 2 + h**-1.5
        num = n_neg * t - n_pos * f
        value = num * w0 / c
        d_t, d_f = (n_neg * w0 + num * w1) / c, (-n_pos * w0 + num * w1) / c
        d_tt = (2.0 * n_neg * w1 + num * w2) / c
        d_ff = (-2.0 * n_pos * w1 + num * w2) / c
    expected = value + 0.5 * (d_tt * v_t + d_ff * v_f)
    variance = d_t * d_t * v_t + d_f * d_f * v_f
    return float(expected), float(variance)


# --------------------------------------------------------------------------
# Input validation
# --------------------------------------------------------------------------


def _check_option(value: Any, allowed: tuple, *, name: str) -> None:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}; got {value!r}.")


def _check_estimand(estimand: Any, metric: str, *, truth_supported: bool) -> None:
    check_estimand(
        estimand,
        metric=metric,
        supports_truth=truth_supported,
        alternative=(
            f"estimand='measurement' gives the expected {metric} you will observe "
            "against noisy labels; unbiased truth estimates exist for precision "
            "and accuracy (expected_precision_score / expected_accuracy_score with "
            "estimand='truth')"
        ),
        reason=(
            f"the {metric} is a ratio of random counts (its denominator depends on "
            "the labels), so no correction of the noisy labels removes its bias "
            "(FORMULAS.md §4)"
        ),
    )


def _distinct_values(y: np.ndarray, skip: np.ndarray) -> np.ndarray:
    """The distinct values of ``y[~skip]`` (at most two of them when numeric)."""
    rest = y[~skip]
    if rest.size == 0:
        return rest
    if y.dtype.kind in "biuf":  # O(M) instead of a sort: min and max suffice
        low, high = rest.min(), rest.max()
        if low == high:
            return np.array([low])
        middle = rest[(rest != low) & (rest != high)]
        return np.array([low, high] if middle.size == 0 else [low, middle[0], high])
    return np.unique(rest)


def _label_kind(y: np.ndarray) -> str:
    return "number" if y.dtype.kind in "biuf" else y.dtype.kind


def _present_labels(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    true_pos: np.ndarray,
    pred_pos: np.ndarray,
    pos_label: Any,
) -> list:
    if _label_kind(y_true) != _label_kind(y_pred):
        raise TypeError(
            f"y_true and y_pred mix label types ({y_true.dtype} and {y_pred.dtype})."
        )
    others = np.union1d(
        _distinct_values(y_true, true_pos), _distinct_values(y_pred, pred_pos)
    ).tolist()
    if true_pos.any() or pred_pos.any():
        return sorted([*others, pos_label])
    return others


def _binary_inputs(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    pos_label: Any,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, Any, np.ndarray | None]:
    """Validate binary inputs.

    Returns ``(true_pos, pred_pos, pi, var, q)``: boolean arrays "is the positive
    label", the probability ``π_i`` that the observed label is positive, the
    per-sample variance ``π_i (1 - π_i)`` (a float for a scalar ``q``) and the
    validated ``q`` (None with a transition matrix).
    """
    check_noise_model(q, transition_matrix)
    y_true = as_label_array(y_true, name="y_true")
    y_pred = as_label_array(y_pred, name="y_pred")
    n_samples = y_true.shape[0]
    if n_samples == 0:
        raise ValueError("y_true is empty: at least one sample is required.")
    if y_pred.shape[0] != n_samples:
        raise ValueError(
            "y_true and y_pred must have the same number of samples; got "
            f"{n_samples} and {y_pred.shape[0]}."
        )
    true_pos = np.asarray(y_true == pos_label, dtype=bool)
    pred_pos = np.asarray(y_pred == pos_label, dtype=bool)
    if true_pos.shape != y_true.shape:  # comparison of incompatible types
        true_pos = np.zeros(n_samples, dtype=bool)
        pred_pos = np.zeros(n_samples, dtype=bool)
    present = _present_labels(y_true, y_pred, true_pos, pred_pos, pos_label)
    if labels is not None:
        labels = np.asarray(labels)
        if labels.ndim != 1 or labels.size == 0:
            raise ValueError("labels must be a non-empty 1-D list of class labels.")
        if labels.size > 2:
            raise ValueError(
                f"average='binary' needs two classes, but labels has {labels.size}; "
                "choose average='macro', 'micro' or 'weighted' for multiclass labels."
            )
        missing = [v for v in present if v not in labels.tolist()]
        if missing:
            raise ValueError(
                f"y_true and y_pred contain labels that are not in `labels`: {missing}."
            )
    if len(present) > 2:
        raise ValueError(
            "Target is multiclass but average='binary'. Please choose another "
            "average setting, one of ['micro', 'macro', 'weighted']; labels found: "
            f"{present[:5]}."
        )
    if len(present) == 2 and pos_label not in present:
        raise ValueError(
            f"pos_label={pos_label!r} is not a valid label. It should be one of "
            f"{present}."
        )
    if transition_matrix is not None:
        classes = present if labels is None else labels.tolist()
        if len(classes) != 2 or pos_label not in classes:
            raise ValueError(
                "With a 2 x 2 transition_matrix pass labels=[negative, positive] "
                f"(the classes of its rows and columns) including pos_label="
                f"{pos_label!r}; found the classes {classes}."
            )
        matrix = check_transition_matrix(transition_matrix, 2)
        pos_index = classes.index(pos_label)
        pi_pos_class = matrix[pos_index, pos_index]
        pi_neg_class = matrix[1 - pos_index, pos_index]
        pi = np.where(true_pos, pi_pos_class, pi_neg_class)
        return true_pos, pred_pos, pi, pi * (1.0 - pi), None
    q = check_flip_probability(q, n_samples)
    pi = np.where(true_pos, 1.0 - q, q)
    return true_pos, pred_pos, pi, q * (1.0 - q), q


def _as_sample_array(value: Any, n_samples: int) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    return np.full(n_samples, float(value))


# --------------------------------------------------------------------------
# Shared driver
# --------------------------------------------------------------------------


def _quiet(metric: Any, /, **kwargs: Any) -> Any:
    """Wrap a scikit-learn metric so that Monte Carlo draws do not warn."""
    return functools.partial(_call_quietly, metric, kwargs)


def _call_quietly(metric: Any, kwargs: dict, y_true: Any, y_pred: Any) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        warnings.simplefilter("ignore", UserWarning)
        return metric(y_true, y_pred, **kwargs)


_SKLEARN_METRICS = {
    "precision": precision_score,
    "recall": recall_score,
    "f1": f1_score,
    "balanced_accuracy": balanced_accuracy_score,
    "matthews_corrcoef": matthews_corrcoef,
}


def _binary_score(
    metric: str,
    y_true: Any,
    y_pred: Any,
    *,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    pos_label: Any,
    method: str,
) -> NoisyScore:
    true_pos, pred_pos, pi, var, _ = _binary_inputs(
        y_true,
        y_pred,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        pos_label=pos_label,
    )
    n_samples = pi.size
    n_pred_pos = int(np.count_nonzero(pred_pos))
    nominal = _metric_from_counts(
        metric,
        int(np.count_nonzero(true_pos & pred_pos)),
        int(np.count_nonzero(true_pos)),
        n_pred_pos,
        n_samples,
    )
    if method == "exact":
        expected, variance = _exact_moments((metric,), pi, pred_pos)[metric]
    else:
        var = _as_sample_array(var, n_samples)
        expected, variance = _delta_moments(metric, pi, var, pred_pos)
    return NoisyScore(metric, expected, variance, nominal, n_samples, method)


def _multiclass_score(
    metric: str,
    y_true: Any,
    y_pred: Any,
    *,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    average: str | None,
    n_draws: int,
    random_state: Any,
) -> NoisyScore:
    """Micro average: exact (it is the accuracy). Otherwise Monte Carlo."""
    check_noise_model(q, transition_matrix)
    true_index, pred_index, classes = check_classification_labels(
        y_true, y_pred, labels=labels
    )
    n_samples = true_index.size
    n_classes = classes.size
    kwargs: dict[str, Any] = {} if average is None else {"average": average}
    if metric in ("precision", "recall", "f1"):
        kwargs["zero_division"] = 0
        if labels is not None:
            kwargs["labels"] = labels
    sk_metric = _SKLEARN_METRICS[metric]
    if average == "micro":
        nominal = float(np.mean(true_index == pred_index))
        correct = true_index == pred_index
        if transition_matrix is not None:
            matrix = check_transition_matrix(transition_matrix, n_classes)
            p_correct = matrix[true_index, pred_index]
        else:
            q = check_flip_probability(q, n_samples)
            if n_classes < 2:
                raise ValueError(
                    "A flip needs another class to flip to, but only one label "
                    f"({classes[0]!r}) is known: pass labels=[...] with every class."
                )
            p_correct = np.where(correct, 1.0 - q, q / (n_classes - 1))
        expected = float(p_correct.mean())
        variance = float((p_correct * (1.0 - p_correct)).sum() / n_samples**2)
        return NoisyScore(metric, expected, variance, nominal, n_samples, "exact")
    from ._monte_carlo import monte_carlo_score

    score = monte_carlo_score(
        _quiet(sk_metric, **kwargs),
        y_true,
        y_pred,
        q=q,
        transition_matrix=transition_matrix,
        labels=classes if labels is None else labels,
        n_draws=n_draws,
        random_state=random_state,
    )
    return dataclasses.replace(score, metric=metric)


def _binary_present_labels(y_true: Any, y_pred: Any, labels: Any) -> list | None:
    """The classes of a binary problem, or None when it is multiclass."""
    if labels is not None:
        labels = np.asarray(labels)
        if labels.ndim != 1 or labels.size == 0:
            raise ValueError("labels must be a non-empty 1-D list of class labels.")
        return labels.tolist() if labels.size <= 2 else None
    y_true = as_label_array(y_true, name="y_true")
    y_pred = as_label_array(y_pred, name="y_pred")
    if y_true.shape[0] == 0:
        raise ValueError("y_true is empty: at least one sample is required.")
    if _label_kind(y_true) != _label_kind(y_pred):
        raise TypeError(
            f"y_true and y_pred mix label types ({y_true.dtype} and {y_pred.dtype})."
        )
    present = np.union1d(
        _distinct_values(y_true, np.zeros(y_true.shape[0], dtype=bool)),
        _distinct_values(y_pred, np.zeros(y_pred.shape[0], dtype=bool)),
    ).tolist()
    return present if len(present) <= 2 else None


def _precision_truth(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    pos_label: Any,
) -> NoisyScore:
    """Unbiased precision against the unknown true labels (FORMULAS.md §4)."""
    if transition_matrix is not None:
        raise ValueError(
            "estimand='truth' for precision is implemented for flip probabilities "
            "q; pass q instead of transition_matrix."
        )
    true_pos, pred_pos, _, _, q = _binary_inputs(
        y_true, y_pred, q=q, transition_matrix=None, labels=labels, pos_label=pos_label
    )
    n_samples = true_pos.size
    n_pred_pos = int(np.count_nonzero(pred_pos))
    q_pos = q if isinstance(q, float) else q[pred_pos]
    if np.any(np.asarray(q_pos) == 0.5):
        raise ValueError(
            "estimand='truth' needs q != 0.5 for every predicted positive: at "
            "q = 0.5 the observed label carries no information about the true one."
        )
    nominal = _metric_from_counts(
        "precision",
        int(np.count_nonzero(true_pos & pred_pos)),
        int(np.count_nonzero(true_pos)),
        n_pred_pos,
        n_samples,
    )
    if n_pred_pos == 0:
        return NoisyScore("precision", 0.0, 0.0, nominal, n_samples, "exact")
    shrink = 1.0 - 2.0 * np.asarray(q_pos, dtype=np.float64)
    observed = true_pos[pred_pos]
    estimate = np.sum((observed - q_pos) / shrink) / n_pred_pos
    variance = np.sum(q_pos * (1.0 - q_pos) / shrink**2)
    if isinstance(q_pos, float):
        variance = variance * n_pred_pos
    variance /= float(n_pred_pos) ** 2
    return NoisyScore("precision", estimate, variance, nominal, n_samples, "exact")


def _prf_score(
    metric: str,
    y_true: Any,
    y_pred: Any,
    *,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    pos_label: Any,
    average: Any,
    method: Any,
    estimand: Any,
    n_draws: int,
    random_state: Any,
) -> NoisyScore:
    _check_option(average, _AVERAGES, name="average")
    _check_option(method, _METHODS, name="method")
    _check_estimand(estimand, metric, truth_supported=metric == "precision")
    if average != "binary" and method == "delta":
        raise ValueError(
            "method='delta' is available for average='binary' only; with "
            f"average={average!r} the result is exact (micro) or Monte Carlo."
        )
    if estimand == "truth":
        if average != "binary":
            raise ValueError(
                "estimand='truth' for precision is available for average='binary' "
                f"only; got average={average!r}."
            )
        return _precision_truth(
            y_true,
            y_pred,
            q=q,
            transition_matrix=transition_matrix,
            labels=labels,
            pos_label=pos_label,
        )
    if average == "binary":
        if metric == "precision":
            return _precision_measurement(
                y_true,
                y_pred,
                q=q,
                transition_matrix=transition_matrix,
                labels=labels,
                pos_label=pos_label,
            )
        return _binary_score(
            metric,
            y_true,
            y_pred,
            q=q,
            transition_matrix=transition_matrix,
            labels=labels,
            pos_label=pos_label,
            method=method,
        )
    return _multiclass_score(
        metric,
        y_true,
        y_pred,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        average=average,
        n_draws=n_draws,
        random_state=random_state,
    )


def _precision_measurement(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    pos_label: Any,
) -> NoisyScore:
    """Closed form: E = Σ_P π_i / n_P, Var = Σ_P π_i (1 - π_i) / n_P²."""
    true_pos, pred_pos, pi, var, _ = _binary_inputs(
        y_true,
        y_pred,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        pos_label=pos_label,
    )
    n_samples = true_pos.size
    n_pred_pos = int(np.count_nonzero(pred_pos))
    tp = int(np.count_nonzero(true_pos & pred_pos))
    nominal = tp / n_pred_pos if n_pred_pos else 0.0
    if n_pred_pos == 0:
        return NoisyScore("precision", 0.0, 0.0, nominal, n_samples, "exact")
    expected = float(pi[pred_pos].sum()) / n_pred_pos
    if isinstance(var, float):
        variance = var / n_pred_pos
    else:
        variance = float(var[pred_pos].sum()) / float(n_pred_pos) ** 2
    return NoisyScore("precision", expected, variance, nominal, n_samples, "exact")


def _ba_mcc_score(
    metric: str,
    y_true: Any,
    y_pred: Any,
    *,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    method: Any,
    estimand: Any,
    n_draws: int,
    random_state: Any,
) -> NoisyScore:
    _check_option(method, _METHODS, name="method")
    _check_estimand(estimand, metric, truth_supported=False)
    check_noise_model(q, transition_matrix)
    classes = _binary_present_labels(y_true, y_pred, labels)
    if classes is None:
        if method == "delta":
            raise ValueError(
                "method='delta' is available for binary labels only; multiclass "
                f"{metric} is computed by Monte Carlo."
            )
        return _multiclass_score(
            metric,
            y_true,
            y_pred,
            q=q,
            transition_matrix=transition_matrix,
            labels=labels,
            average=None,
            n_draws=n_draws,
            random_state=random_state,
        )
    # Balanced accuracy and MCC are symmetric in the two classes: any of them
    # can play the positive one.
    return _binary_score(
        metric,
        y_true,
        y_pred,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        pos_label=classes[-1],
        method=method,
    )


# --------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------

_NOISE_PARAMETERS = """\
    y_true : array-like of shape (n_samples,)
        Best-known labels (the reference labels around which the observed
        labels flip). Any two label values; ``pos_label`` selects the positive
        one.
    y_pred : array-like of shape (n_samples,)
        Predicted labels, held fixed.
    q : float or array-like of shape (n_samples,), default=None
        Probability in [0, 1] that each observed label differs from ``y_true``
        (a constant or one per sample). For multiclass labels a flip is
        uniform over the other ``K - 1`` classes. Exactly one of ``q`` and
        ``transition_matrix`` is required.
    transition_matrix : array-like of shape (n_classes, n_classes), default=None
        Row-stochastic matrix: ``T[j, k]`` is the probability that a sample of
        class ``labels[j]`` is observed as ``labels[k]``. For binary labels pass
        ``labels=[negative, positive]`` unless both classes occur in the data."""

_PRF_PARAMETERS = (
    _NOISE_PARAMETERS
    + """
    labels : array-like, default=None
        The classes, in the order of the rows of ``transition_matrix``; by
        default the sorted labels present in ``y_true`` and ``y_pred``. With
        ``average="macro"`` or ``"weighted"`` it is also passed to the
        scikit-learn metric, as there.
    pos_label : int, float, bool or str, default=1
        The positive class for ``average="binary"``, as in scikit-learn.
    average : {"binary", "micro", "macro", "weighted"}, default="binary"
        ``"binary"``: exact (``method="exact"``). ``"micro"``: equal to the
        accuracy, exact (FORMULAS.md §3). ``"macro"`` and ``"weighted"``:
        Monte Carlo over ``n_draws`` redraws of the labels
        (:func:`~sklearn_noisy.metrics.monte_carlo_score`; ``NoisyScore.method``
        is then ``"monte_carlo"``).
    method : {"exact", "delta"}, default="exact"
        ``"exact"``: the Poisson-binomial algorithm of FORMULAS.md §8.
        ``"delta"``: the second-order delta method in (TP, FN), for very large
        samples (see Notes); binary only.
    estimand : {"measurement", "truth"}, default="measurement"
        ``"measurement"``: the metric observed against labels that flip around
        ``y_true``."""
)

_MC_PARAMETERS = """
    n_draws : int, default=1000
        Monte Carlo redraws, used only where the result is Monte Carlo.
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the Monte Carlo redraws."""

_DELTA_NOTES = """\
    The delta method ignores zero-division events (which matter only for tiny
    M). Its accuracy against the exact algorithm, maximum over recall, F1,
    balanced accuracy and MCC (FORMULAS.md §8, Part V.3c; recall was always the
    worst)::

        M      q                        max rel. err of E   max rel. err of Var
        10     0.2                      3e-3                25 %
        50     0.05 / 0.2               3e-4 / 1e-4         4 % / 5 %
        500    0.05 / 0.2 / per-sample  <= 3e-6             0.3-0.7 %
        5000   0.05 / 0.2               <= 2e-8             <= 0.06 %

    The bias of its expected value was always below 0.011 standard deviations.
    The exact method costs O(M log² M) (about 0.1 s at M = 10⁵ and 1 s at
    M = 10⁶), so the delta method is only needed for M well above 10⁶."""


def _fill(doc: str | None, **blocks: str) -> str | None:
    if doc is None:  # running under python -OO
        return None
    for key, value in blocks.items():
        doc = doc.replace("    {" + key + "}", value)
    return doc


def expected_precision_score(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    pos_label: Any = 1,
    average: str = "binary",
    method: str = "exact",
    estimand: str = "measurement",
    n_draws: int = 1000,
    random_state: Any = None,
) -> NoisyScore:
    """Expected precision, and its variance, under label flips.

    Precision ``TP / n_P`` has a denominator fixed by the predictions, so it is
    linear in the labels and its moments have a closed form (FORMULAS.md §8)::

        E[precision]   = (1/n_P) Σ_{i∈P} π_i
        Var[precision] = (1/n_P²) Σ_{i∈P} π_i (1 - π_i)

    where ``P`` are the ``n_P`` samples predicted positive and ``π_i`` is the
    probability that sample ``i`` is observed positive. With no predicted
    positive the precision is 0, as scikit-learn's default
    ``zero_division="warn"`` returns (no warning is emitted here).

    Parameters
    ----------
    {parameters}
        ``"truth"``: ``y_true`` are single noisy observations and the result is
        the unbiased estimate of the precision against the unknown true labels,
        ``(1/n_P) Σ_{i∈P} (ỹ_i - q_i)/(1 - 2q_i)``, with its exact variance
        ``(1/n_P²) Σ_{i∈P} q_i (1 - q_i)/(1 - 2q_i)²`` (FORMULAS.md §4;
        binary, ``q`` only, ``q_i != 0.5``). The estimate can leave [0, 1].
    {mc_parameters}

    Returns
    -------
    score : NoisyScore
        ``nominal`` is :func:`sklearn.metrics.precision_score` on ``y_true``
        (with ``zero_division=0``, computed from the counts). ``method`` is
        ``"exact"`` (the delta method of a linear metric is exact) or
        ``"monte_carlo"`` for ``average="macro"``/``"weighted"``.

    See Also
    --------
    sklearn.metrics.precision_score : The metric on exact labels.
    expected_recall_score : The expected recall.

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_precision_score
    >>> y_true = [0, 1, 1, 0, 1, 1]
    >>> y_pred = [0, 1, 0, 1, 1, 1]
    >>> expected_precision_score(y_true, y_pred, q=0.1)
    NoisyScore(metric='precision', expected=0.7, std=0.15, nominal=0.75, \
n_samples=6, method='exact')
    >>> expected_precision_score(y_true, y_pred, q=0.1, estimand="truth").expected
    0.8125
    """
    return _prf_score(
        "precision",
        y_true,
        y_pred,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        pos_label=pos_label,
        average=average,
        method=method,
        estimand=estimand,
        n_draws=n_draws,
        random_state=random_state,
    )


def expected_recall_score(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    pos_label: Any = 1,
    average: str = "binary",
    method: str = "exact",
    estimand: str = "measurement",
    n_draws: int = 1000,
    random_state: Any = None,
) -> NoisyScore:
    """Expected recall, and its variance, under label flips.

    Recall ``TP / S`` divides by the number ``S`` of observed positives, which
    itself depends on the labels. Given ``S = n`` it is ``TP / n``, affine in
    TP, so the exact moments are finite sums over the joint law of TP and FN,
    two independent Poisson-binomial counts (FORMULAS.md §8, O(M log² M)).
    With no observed positive the recall is 0, as scikit-learn's default
    ``zero_division="warn"`` returns (no warning is emitted here).

    Parameters
    ----------
    {parameters}
        ``"truth"`` raises ``ValueError``: recall is a ratio of random counts
        and has no unbiased estimator against the unknown true labels.
    {mc_parameters}

    Returns
    -------
    score : NoisyScore
        ``nominal`` is :func:`sklearn.metrics.recall_score` on ``y_true``.
        ``method`` is ``"exact"``, ``"delta"`` or ``"monte_carlo"`` (``average=
        "macro"``/``"weighted"``).

    See Also
    --------
    sklearn.metrics.recall_score : The metric on exact labels.
    expected_f1_score : The expected F1 score.

    Notes
    -----
    {delta_notes}

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_recall_score
    >>> y_true = [0, 1, 1, 0, 1, 1]
    >>> y_pred = [0, 1, 0, 1, 1, 1]
    >>> score = expected_recall_score(y_true, y_pred, q=0.1)
    >>> score
    NoisyScore(metric='recall', expected=0.739034, std=0.1082, nominal=0.75, \
n_samples=6, method='exact')
    >>> expected_recall_score(y_true, y_pred, q=0.1, method="delta").method
    'delta'
    """
    return _prf_score(
        "recall",
        y_true,
        y_pred,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        pos_label=pos_label,
        average=average,
        method=method,
        estimand=estimand,
        n_draws=n_draws,
        random_state=random_state,
    )


def expected_f1_score(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    pos_label: Any = 1,
    average: str = "binary",
    method: str = "exact",
    estimand: str = "measurement",
    n_draws: int = 1000,
    random_state: Any = None,
) -> NoisyScore:
    """Expected F1 score, and its variance, under label flips.

    ``F1 = 2 TP / (n_P + S)``; given the number ``S = n`` of observed positives
    it is affine in TP, so the moments are exact sums over the law of
    (TP, FN) (FORMULAS.md §8, O(M log² M)). When ``n_P + S = 0`` the F1 score is
    0, as scikit-learn's default ``zero_division="warn"`` returns (no warning
    is emitted here).

    Parameters
    ----------
    {parameters}
        ``"truth"`` raises ``ValueError``: F1 is a ratio of random counts and
        has no unbiased estimator against the unknown true labels.
    {mc_parameters}

    Returns
    -------
    score : NoisyScore
        ``nominal`` is :func:`sklearn.metrics.f1_score` on ``y_true``.
        ``method`` is ``"exact"``, ``"delta"`` or ``"monte_carlo"`` (``average=
        "macro"``/``"weighted"``).

    See Also
    --------
    sklearn.metrics.f1_score : The metric on exact labels.

    Notes
    -----
    {delta_notes}

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_f1_score
    >>> y_true = [0, 1, 1, 0, 1, 1]
    >>> y_pred = [0, 1, 0, 1, 1, 1]
    >>> expected_f1_score(y_true, y_pred, q=0.1).expected
    0.7118...
    """
    return _prf_score(
        "f1",
        y_true,
        y_pred,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        pos_label=pos_label,
        average=average,
        method=method,
        estimand=estimand,
        n_draws=n_draws,
        random_state=random_state,
    )


_BA_MCC_PARAMETERS = (
    _NOISE_PARAMETERS
    + """
    labels : array-like, default=None
        The classes, in the order of the rows of ``transition_matrix``; by
        default the sorted labels present in ``y_true`` and ``y_pred``. More
        than two classes make the problem multiclass (Monte Carlo).
    method : {"exact", "delta"}, default="exact"
        ``"exact"``: the Poisson-binomial algorithm of FORMULAS.md §8.
        ``"delta"``: the second-order delta method in (TP, FN), for very large
        samples (see Notes); binary only.
    estimand : {"measurement"}, default="measurement"
        The metric observed against labels that flip around ``y_true``.
        ``"truth"`` raises ``ValueError``: this metric is a ratio of random
        counts and has no unbiased estimator against the unknown true labels."""
    + _MC_PARAMETERS
)


def expected_balanced_accuracy_score(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    method: str = "exact",
    estimand: str = "measurement",
    n_draws: int = 1000,
    random_state: Any = None,
) -> NoisyScore:
    """Expected balanced accuracy, and its variance, under label flips.

    ``BA = ½ (TP/S + TN/(M - S))`` with ``S`` the number of observed positives.
    Given ``S = n`` it is affine in TP, so the moments are exact sums over the
    law of (TP, FN) (FORMULAS.md §8, O(M log² M)). As in scikit-learn, when
    the observed labels hold a single class only that class's recall is
    averaged (``BA = n_N/M`` with no observed positive, ``TP/M`` with no
    observed negative); no warning is emitted. Binary labels are exact;
    multiclass labels are computed by Monte Carlo
    (:func:`~sklearn_noisy.metrics.monte_carlo_score`).

    Parameters
    ----------
    {parameters}

    Returns
    -------
    score : NoisyScore
        ``nominal`` is :func:`sklearn.metrics.balanced_accuracy_score` on
        ``y_true``. ``method`` is ``"exact"``, ``"delta"`` or
        ``"monte_carlo"`` (multiclass).

    See Also
    --------
    sklearn.metrics.balanced_accuracy_score : The metric on exact labels.

    Notes
    -----
    {delta_notes}

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_balanced_accuracy_score
    >>> y_true = [0, 1, 0, 0, 1, 0]
    >>> y_pred = [0, 1, 0, 0, 0, 1]
    >>> expected_balanced_accuracy_score(y_true, y_pred, q=0.0).expected
    0.625
    >>> expected_balanced_accuracy_score(y_true, y_pred, q=0.1).expected
    0.6030...
    """
    return _ba_mcc_score(
        "balanced_accuracy",
        y_true,
        y_pred,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        method=method,
        estimand=estimand,
        n_draws=n_draws,
        random_state=random_state,
    )


def expected_matthews_corrcoef(
    y_true: Any,
    y_pred: Any,
    *,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    method: str = "exact",
    estimand: str = "measurement",
    n_draws: int = 1000,
    random_state: Any = None,
) -> NoisyScore:
    """Expected Matthews correlation coefficient, and its variance, under flips.

    ``MCC = (M·TP - n_P S) / √(n_P n_N S (M - S))`` with ``S`` the number of
    observed positives. Given ``S = n`` it is affine in TP, so the moments are
    exact sums over the law of (TP, FN) (FORMULAS.md §8, O(M log² M)). Where
    the denominator vanishes the MCC is 0, as in scikit-learn. Binary labels
    are exact; multiclass labels are computed by Monte Carlo
    (:func:`~sklearn_noisy.metrics.monte_carlo_score`).

    Parameters
    ----------
    {parameters}

    Returns
    -------
    score : NoisyScore
        ``nominal`` is :func:`sklearn.metrics.matthews_corrcoef` on ``y_true``.
        ``method`` is ``"exact"``, ``"delta"`` or ``"monte_carlo"``
        (multiclass).

    See Also
    --------
    sklearn.metrics.matthews_corrcoef : The metric on exact labels.

    Notes
    -----
    {delta_notes}

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_matthews_corrcoef
    >>> y_true = [1, 1, 1, 0]
    >>> y_pred = [1, 0, 1, 1]
    >>> expected_matthews_corrcoef(y_true, y_pred, q=0.0).expected
    -0.3333...
    >>> expected_matthews_corrcoef(y_true, y_pred, q=0.2).expected
    -0.1914...
    """
    return _ba_mcc_score(
        "matthews_corrcoef",
        y_true,
        y_pred,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        method=method,
        estimand=estimand,
        n_draws=n_draws,
        random_state=random_state,
    )


for _function in (expected_precision_score, expected_recall_score, expected_f1_score):
    _function.__doc__ = _fill(
        _function.__doc__,
        parameters=_PRF_PARAMETERS,
        mc_parameters=_MC_PARAMETERS.lstrip("\n"),
        delta_notes=_DELTA_NOTES,
    )
for _function in (expected_balanced_accuracy_score, expected_matthews_corrcoef):
    _function.__doc__ = _fill(
        _function.__doc__, parameters=_BA_MCC_PARAMETERS, delta_notes=_DELTA_NOTES
    )
del _function
