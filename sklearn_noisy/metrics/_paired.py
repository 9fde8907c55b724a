"""Paired difference of a metric between two models scored on the same noisy labels.

Both models are scored against the *same* draw of the labels, so their metrics
are correlated and ``Var[m_A − m_B] ≠ Var[m_A] + Var[m_B]`` (FORMULAS.md §9).
:func:`expected_paired_difference` returns the expected difference and its
exact variance over the label noise:

- mean squared error: linear in the labels, exact in closed form;
- mean absolute error: per sample a clipped normal, exact in closed form;
- accuracy (binary or multiclass, flips ``q`` or a transition matrix): exact;
- binary precision: linear in the labels, exact;
- Brier score and log-loss: sums of per-sample losses of a categorical label,
  exact;
- every other metric (RMSE, R², recall, F1, balanced accuracy, MCC):
  a *joint* Monte Carlo, in which both models are scored on the same label
  draws (:func:`~sklearn_noisy.metrics.monte_carlo_score`);
  ``method="monte_carlo"``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
from scipy.special import ndtr

from .._noisy_score import NoisyScore
from ..utils._labels import check_classification_labels
from ..utils._validation import (
    CHUNK_SIZE,
    check_finite,
    check_flip_probability,
    check_regression_inputs,
    check_transition_matrix,
)

__all__ = ["expected_paired_difference"]

_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)
#: Standardised limits are clipped here before squaring (FORMULAS.md Part III.2).
_Z_MAX = 1000.0


def _phi(z: np.ndarray) -> np.ndarray:
    return np.exp(-0.5 * z * z) * _INV_SQRT_2PI


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
    """MSE_A − MSE_B: ``(b − a)(2y − a − b)`` is linear in y (FORMULAS.md §9).

    ``E = (1/M) Σ (b−a)(2ȳ − a − b)`` (= ``d_A² − d_B²`` in product form, no
    cancellation) and ``Var = (4/M²) Σ σ² (a − b)²``; the nominal difference on
    ``ȳ`` equals the expectation.
    """
    n = y_true.size
    gap = b - a
    expected = float(np.sum(gap * ((y_true - a) + (y_true - b)))) / n
    variance = 4.0 * float(np.sum((sigma * gap) ** 2)) / (n * n)
    return expected, variance, expected


def _clipped_normal_moments(
    mu: np.ndarray, tau: np.ndarray, w: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Mean and variance of ``clip(X, −w, w)`` for ``X ~ N(mu, tau²)``, ``tau > 0``.

    The moments are taken of ``Y = clip(X, −w, w) − k`` with
    ``k = clip(mu, −w, w)`` (FORMULAS.md §9 numerics): with ``m = mu − k``,
    ``α = (−w − mu)/tau``, ``β = (w − mu)/tau`` and ``P = Φ(β) − Φ(α)`` taken
    from the tail side,

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
    """MAE_A − MAE_B through the clipped normal of FORMULAS.md §9.

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


def _accuracy_difference(
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    *,
    q: Any,
    transition_matrix: Any,
    labels: Any,
) -> tuple[float, float, float, int]:
    """acc_A − acc_B, exact (FORMULAS.md §9).

    Where the two predictions differ the events "observed label = ŷ_A" and
    "= ŷ_B" are disjoint: ``E = P_A − P_B`` and
    ``Var = P_A(1−P_A) + P_B(1−P_B) + 2 P_A P_B`` (a sum of non-negative terms),
    with ``P_X = T[k_i, ŷ_X]`` (uniform flips: ``1 − q_i`` on the reference
    class and ``q_i/(K−1)`` on each other one). Where they agree the
    difference is 0.
    """
    if labels is None:
        labels = _union_labels(y_true, y_pred_a, y_pred_b)
    true_index, a_index, classes = check_classification_labels(
        y_true, y_pred_a, labels=labels
    )
    _, b_index, _ = check_classification_labels(y_true, y_pred_b, labels=labels)
    n = true_index.size
    n_classes = classes.size
    correct_a = a_index == true_index
    correct_b = b_index == true_index
    nominal = (int(correct_a.sum()) - int(correct_b.sum())) / n
    differ = a_index != b_index
    if transition_matrix is not None:
        matrix = check_transition_matrix(transition_matrix, n_classes)
        p_a = matrix[true_index, a_index]
        p_b = matrix[true_index, b_index]
    else:
        q = check_flip_probability(q, n)
        q = np.broadcast_to(np.asarray(q, dtype=np.float64), (n,))
        if n_classes < 2:  # a single label: every prediction is that label
            p_a = p_b = np.ones(n)
        else:
            other = q / (n_classes - 1)
            p_a = np.where(correct_a, 1.0 - q, other)
            p_b = np.where(correct_b, 1.0 - q, other)
    p_a, p_b = p_a[differ], p_b[differ]
    expected = float(np.sum(p_a - p_b)) / n
    per_sample = p_a * (1.0 - p_a) + p_b * (1.0 - p_b) + 2.0 * p_a * p_b
    return expected, float(np.sum(per_sample)) / (n * n), nominal, n


def _probabilistic_difference(
    metric: str,
    y_true: Any,
    proba_a: Any,
    proba_b: Any,
    *,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    classes: Any,
) -> tuple[float, float, float, int]:
    """Brier score or log-loss of A minus that of B, exact.

    Both losses are sums of per-sample terms ``L_ij``, the loss of sample ``i``
    if its label is class ``j`` (FORMULAS.md §7). The per-sample difference
    ``D_ij = L^A_ij − L^B_ij`` has, with ``w_ij = P(label_i = j)`` (``T[k_i, j]``,
    or ``1 − q_i`` on the reference class and ``q_i/(K−1)`` elsewhere),
    ``E_i = Σ_j w_ij D_ij`` and ``Var_i = Σ_j w_ij (D_ij − E_i)²`` (centred).
    The loss tables are those of
    :func:`~sklearn_noisy.metrics.expected_brier_score_loss` and
    :func:`~sklearn_noisy.metrics.expected_log_loss` (binary Brier on the
    probability of the larger class, log-loss clipped at the dtype's eps).
    """
    from ._probabilistic import _brier_loss, _check_proba, _log_loss_factory

    a, eps_a = _check_proba(proba_a)
    b, eps_b = _check_proba(proba_b)
    if a.shape != b.shape:
        raise ValueError(
            "y_pred_a and y_pred_b must have the same shape; got "
            f"{a.shape} and {b.shape}."
        )
    if classes is None:
        classes = labels
    if classes is None:
        classes = np.unique(np.asarray(y_true))
    classes = np.asarray(classes)
    n_classes = 2 if a.ndim == 1 else a.shape[1]
    if classes.size != n_classes:
        raise ValueError(
            f"The probabilities have {n_classes} columns but there are "
            f"{classes.size} classes ({classes.tolist()}); pass classes= in the "
            "order of the columns."
        )
    if np.any(classes[1:] <= classes[:-1]):
        raise ValueError("classes must be sorted, as the columns of predict_proba.")
    index, _, _ = check_classification_labels(y_true, y_true, labels=classes)
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
    if transition_matrix is not None:
        matrix = check_transition_matrix(transition_matrix, n_classes)
    else:
        q = check_flip_probability(q, n)
        q = np.broadcast_to(np.asarray(q, dtype=np.float64), (n,))
    totals = np.zeros(3)
    for start in range(0, n, CHUNK_SIZE):
        rows = slice(start, start + CHUNK_SIZE)
        k = index[rows]
        difference = loss_a(a[rows]) - loss_b(b[rows])
        if transition_matrix is not None:
            weights = matrix[k]
        else:
            q_rows = q[rows]
            weights = np.empty(difference.shape)
            weights[:] = (q_rows / (n_classes - 1))[:, None]
            weights[np.arange(k.shape[0]), k] = 1.0 - q_rows
        expected = np.einsum("ij,ij->i", weights, difference)
        centred = difference - expected[:, None]
        totals += (
            difference[np.arange(k.shape[0]), k].sum(),
            expected.sum(),
            np.einsum("ij,ij->", weights, centred * centred),
        )
    return totals[1] / n, totals[2] / (n * n), totals[0] / n, n


def _precision_difference(
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    *,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    pos_label: Any,
) -> tuple[float, float, float, int] | None:
    """Binary precision of A minus that of B, exact; None if not binary.

    Precision is ``TP / n_P`` with ``n_P`` the number of predicted positives,
    which does not depend on the labels (FORMULAS.md §8). The difference is
    therefore linear in the observed positives: ``Σ_i c_i 1[ỹ_i = pos]`` with
    ``c_i = 1[ŷ_A,i = pos]/n_PA − 1[ŷ_B,i = pos]/n_PB`` (a model without
    predicted positives has precision 0, scikit-learn's default), so
    ``E = Σ c_i π_i`` and ``Var = Σ c_i² π_i (1 − π_i)`` with
    ``π_i = P(ỹ_i = pos)``.
    """
    if labels is None:
        labels = _union_labels(y_true, y_pred_a, y_pred_b)
    true_index, a_index, classes = check_classification_labels(
        y_true, y_pred_a, labels=labels
    )
    _, b_index, _ = check_classification_labels(y_true, y_pred_b, labels=labels)
    if classes.size > 2:
        return None  # multiclass: not a binary precision (left to Monte Carlo)
    matches = [i for i, c in enumerate(classes.tolist()) if c == pos_label]
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
    if transition_matrix is not None:
        matrix = check_transition_matrix(transition_matrix, classes.size)
        pi = matrix[true_index, pos]
    else:
        q = check_flip_probability(q, n)
        if classes.size < 2:
            pi = np.where(true_index == pos, 1.0, 0.0)
        else:
            pi = np.where(true_index == pos, 1.0 - np.asarray(q), q)
    nominal = float(coefficient @ (true_index == pos))
    expected = float(coefficient @ pi)
    variance = float((coefficient * coefficient) @ (pi * (1.0 - pi)))
    return expected, variance, nominal, n


def _union_labels(*arrays: Any) -> np.ndarray:
    values = [
        np.asarray(v.to_numpy() if hasattr(v, "to_numpy") else v).ravel()
        for v in arrays
    ]
    return np.unique(np.concatenate(values))


def _monte_carlo_difference(
    scorer: Any,
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    *,
    sigma: Any,
    q: Any,
    transition_matrix: Any,
    labels: Any,
    classes: Any,
    n_draws: int,
    random_state: Any,
) -> NoisyScore:
    """Joint Monte Carlo: both models scored on the same label draws.

    Each draw of the labels is scored for A and for B with the classical metric
    (the scorer's ``nominal`` on noise-free labels, so every option of the scorer
    applies) and the difference is recorded.
    """
    from ._monte_carlo import monte_carlo_score
    from ._scorer import make_noisy_scorer

    plain = make_noisy_scorer(scorer.metric, **dict(scorer.metric_kwargs))
    zero = {"sigma": 0.0} if plain.requires_noise == "sigma" else {"q": 0.0}
    extra = {} if classes is None else {"classes": classes}

    def difference(y: Any, _placeholder: Any) -> float:
        score_a = plain.score_predictions(y, y_pred_a, **zero, **extra)
        score_b = plain.score_predictions(y, y_pred_b, **zero, **extra)
        return score_a.nominal - score_b.nominal

    if plain.requires_noise == "q" and labels is None:
        labels = classes
        if labels is None:
            a, b = np.asarray(y_pred_a), np.asarray(y_pred_b)
            if a.ndim == 1 and b.ndim == 1:
                labels = _union_labels(y_true, a, b)
    n = len(y_true)
    # y_pred is passed through to the callable untouched: an empty 2-D
    # placeholder with one row per sample (the predictions are closed over).
    score = monte_carlo_score(
        difference,
        y_true,
        np.zeros((n, 0)),
        sigma=sigma if plain.requires_noise == "sigma" else None,
        q=q if plain.requires_noise == "q" else None,
        transition_matrix=transition_matrix if plain.requires_noise == "q" else None,
        labels=labels if plain.requires_noise == "q" else None,
        n_draws=n_draws,
        random_state=random_state,
    )
    return dataclasses.replace(score, metric=f"{scorer.metric}_difference")


def expected_paired_difference(
    y_true: Any,
    y_pred_a: Any,
    y_pred_b: Any,
    *,
    metric: Any,
    sigma: Any = None,
    q: Any = None,
    transition_matrix: Any = None,
    labels: Any = None,
    classes: Any = None,
    n_draws: int = 1000,
    random_state: Any = 0,
) -> NoisyScore:
    """Expected difference ``metric(A) − metric(B)`` of two models on the same labels.

    The two models are scored against the same noisy labels, so the label
    noise is shared: the variance of the difference is not the sum of the two
    variances (FORMULAS.md §9). It is exact for

    - ``"mean_squared_error"``: ``MSE_A − MSE_B = (1/M) Σ (b−a)(2y−a−b)`` is
      linear in y, so ``E = (1/M) Σ (d_A² − d_B²)`` and
      ``Var = (4/M²) Σ σ_i² (a_i − b_i)²``: the σ⁴ terms cancel;
    - ``"mean_absolute_error"``: per sample ``|y−a| − |y−b|`` is
      ``±clip(2(y − (a+b)/2), −|a−b|, |a−b|)``, a clipped normal whose two
      moments are closed forms (evaluated centred at the clip of the mean, so
      without cancellation);
    - ``"accuracy"``: where the predictions differ the two "correct" events
      are disjoint, so ``Var = P_A(1−P_A) + P_B(1−P_B) + 2P_A P_B`` per
      disagreement, with ``P = T[k_i, ŷ_i]`` (binary: ``4 q_i(1−q_i)`` when one
      of the two is right);
    - ``"precision"`` (binary): the number of predicted positives does not
      depend on the labels, so the difference is linear in the observed
      positives, ``E = Σ c_i π_i`` and ``Var = Σ c_i² π_i(1−π_i)`` with
      ``c_i = 1[ŷ_A,i = pos]/n_PA − 1[ŷ_B,i = pos]/n_PB``;
    - ``"brier_score_loss"`` and ``"log_loss"``: per sample the difference of
      the two losses is a function ``D_ij`` of the label ``j``, so
      ``E_i = Σ_j P(j) D_ij`` and ``Var_i = Σ_j P(j) (D_ij − E_i)²`` over the
      label distribution of the sample (the loss conventions are those of
      :func:`~sklearn_noisy.metrics.expected_brier_score_loss` and
      :func:`~sklearn_noisy.metrics.expected_log_loss`).

    Every other metric (RMSE, R², recall, F1, balanced accuracy, MCC,
    multiclass precision) goes through a *joint* Monte Carlo:
    :func:`~sklearn_noisy.metrics.monte_carlo_score` redraws the labels
    ``n_draws`` times and scores both models on each draw, which keeps the
    correlation between them. ``method`` is then ``"monte_carlo"`` and the
    result carries the Monte Carlo standard errors of its mean and variance.

    Pairing helps when the models are similar: for binary accuracy with a
    constant ``q`` the ratio of the paired variance to ``Var_A + Var_B`` is
    twice the fraction of samples on which the two models disagree, so it is
    *larger* than 1 above 50 % disagreement.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Best-known labels.

    y_pred_a, y_pred_b : array-like
        The two models' responses: predictions, or class probabilities for
        Brier score and log-loss.

    metric : str or NoisyScorer
        A canonical metric name (``"mean_squared_error"``, ``"accuracy"``, ...)
        or a :class:`~sklearn_noisy.metrics.NoisyScorer`, whose metric options
        (``pos_label``, ``average``, ...) are then used by the Monte Carlo path.

    sigma : float or array-like of shape (n_samples,), default=None
        Standard error of each regression label.

    q : float or array-like of shape (n_samples,), default=None
        Flip probability of each class label (uniform over the other classes).

    transition_matrix : array-like of shape (n_classes, n_classes), default=None
        Row-stochastic label transition matrix in the order of ``labels``.

    labels : array-like, default=None
        The classes (for ``q`` with more than two classes, and for the order of
        ``transition_matrix``); by default the sorted union of the labels in
        ``y_true``, ``y_pred_a`` and ``y_pred_b``.

    classes : array-like, default=None
        The classes in the order of the probability columns, for Brier score
        and log-loss (an estimator's ``classes_``; default: ``labels``, or the
        classes of ``y_true``). For a binary Brier score the larger class is
        the positive one.

    n_draws : int, default=1000
        Label draws of the Monte Carlo path.

    random_state : int, Generator or None, default=0
        Seed of the Monte Carlo path (fixed by default, so that results are
        reproducible).

    Returns
    -------
    score : NoisyScore
        ``metric`` is ``"<metric>_difference"``; ``expected`` and ``variance``
        are the mean and variance of ``metric(A) − metric(B)`` over the label
        noise and ``nominal`` the difference on the labels as given.
        ``method`` is ``"exact"`` or ``"monte_carlo"``.

    See Also
    --------
    sklearn_noisy.model_selection.compare_estimators : Paired comparison of
        cross-validated estimators.

    Examples
    --------
    >>> from sklearn_noisy.metrics import expected_paired_difference
    >>> y = [1.0, 2.0, 3.0, 4.0]
    >>> a = [1.1, 2.1, 2.8, 4.2]
    >>> b = [1.0, 2.3, 3.1, 3.6]
    >>> d = expected_paired_difference(y, a, b, metric="mean_squared_error",
    ...                                sigma=0.5)
    >>> round(d.expected, 6), round(d.variance, 6)  # 4 Σ σ²(a−b)² / M²
    (-0.04, 0.03125)
    >>> expected_paired_difference([0, 1, 1, 0], [0, 1, 0, 0], [0, 0, 0, 0],
    ...                            metric="accuracy", q=0.1)
    NoisyScore(metric='accuracy_difference', expected=0.2, std=0.15, \
nominal=0.25, n_samples=4, method='exact')
    """
    scorer = None
    options: dict[str, Any] = {}
    if hasattr(metric, "score_predictions"):
        scorer = metric
        name = scorer.metric
        options = dict(getattr(scorer, "metric_kwargs", None) or {})
        plain_options = not options
        estimand = getattr(scorer, "estimand", "forward")
        if estimand != "forward":
            raise ValueError(
                "Paired differences are computed for the 'measurement' estimand "
                f"(the metric observed on noisy labels); the scorer uses "
                f"estimand={estimand!r}. Pass a scorer with the default estimand."
            )
    elif isinstance(metric, str):
        name = metric
        plain_options = True
    else:
        raise TypeError(
            "metric must be a metric name such as 'mean_squared_error' or a "
            f"NoisyScorer; got {metric!r}."
        )
    if name in ("mean_squared_error", "mean_absolute_error") and plain_options:
        if q is not None or transition_matrix is not None:
            raise TypeError(f"{name!r} is a regression metric: pass sigma, not q.")
        y, a, b, s = _regression_pair(y_true, y_pred_a, y_pred_b, sigma)
        kernel = (
            _squared_error_difference
            if name == "mean_squared_error"
            else _absolute_error_difference
        )
        expected, variance, nominal = kernel(y, a, b, s)
        return NoisyScore(
            f"{name}_difference", expected, variance, nominal, y.shape[0], "exact"
        )
    if name == "accuracy" and plain_options:
        if sigma is not None:
            raise TypeError("'accuracy' is a classification metric: pass q, not sigma.")
        if (q is None) == (transition_matrix is None):
            raise TypeError("Pass exactly one of q and transition_matrix.")
        expected, variance, nominal, n = _accuracy_difference(
            y_true,
            y_pred_a,
            y_pred_b,
            q=q,
            transition_matrix=transition_matrix,
            labels=labels,
        )
        return NoisyScore("accuracy_difference", expected, variance, nominal, n)
    if name == "precision" and set(options) <= {"pos_label"}:
        if sigma is not None:
            raise TypeError(
                "'precision' is a classification metric: pass q, not sigma."
            )
        if (q is None) == (transition_matrix is None):
            raise TypeError("Pass exactly one of q and transition_matrix.")
        result = _precision_difference(
            y_true,
            y_pred_a,
            y_pred_b,
            q=q,
            transition_matrix=transition_matrix,
            labels=labels,
            pos_label=options.get("pos_label", 1),
        )
        if result is not None:
            expected, variance, nominal, n = result
            return NoisyScore("precision_difference", expected, variance, nominal, n)
    if name in ("brier_score_loss", "log_loss") and plain_options:
        if sigma is not None:
            raise TypeError(f"{name!r} is a classification metric: pass q, not sigma.")
        if (q is None) == (transition_matrix is None):
            raise TypeError("Pass exactly one of q and transition_matrix.")
        expected, variance, nominal, n = _probabilistic_difference(
            name,
            y_true,
            y_pred_a,
            y_pred_b,
            q=q,
            transition_matrix=transition_matrix,
            labels=labels,
            classes=classes,
        )
        return NoisyScore(f"{name}_difference", expected, variance, nominal, n)
    if scorer is None:
        from ._scorer import make_noisy_scorer

        scorer = make_noisy_scorer(name)
    for value, label in ((y_pred_a, "y_pred_a"), (y_pred_b, "y_pred_b")):
        values = np.asarray(value)
        if values.dtype.kind == "f":
            check_finite(values, name=label)
    return _monte_carlo_difference(
        scorer,
        y_true,
        y_pred_a,
        y_pred_b,
        sigma=sigma,
        q=q,
        transition_matrix=transition_matrix,
        labels=labels,
        classes=classes,
        n_draws=n_draws,
        random_state=random_state,
    )
