"""Multiclass averages, options and edge cases of P/R/F1/BA/MCC under noise.

The reference is exact enumeration of every observed labelling (``K^M``
patterns) with scikit-learn's own metric on each: exact results must agree to
1e-12, Monte Carlo ones within 5 standard errors.
"""

import itertools
import math
import pickle
import warnings

import numpy as np
import pytest
from sklearn import metrics as skm

from sklearn_noisy import (
    expected_balanced_accuracy_score,
    expected_f1_score,
    expected_matthews_corrcoef,
    expected_precision_score,
    expected_recall_score,
)

OURS = {
    "precision": expected_precision_score,
    "recall": expected_recall_score,
    "f1": expected_f1_score,
    "balanced_accuracy": expected_balanced_accuracy_score,
    "matthews_corrcoef": expected_matthews_corrcoef,
}
THEIRS = {
    "precision": skm.precision_score,
    "recall": skm.recall_score,
    "f1": skm.f1_score,
    "balanced_accuracy": skm.balanced_accuracy_score,
    "matthews_corrcoef": skm.matthews_corrcoef,
}
N_DRAWS = 4000


def observation_rows(y_true, q, k):
    """``P(observed = j | sample i)``, shape (M, K), uniform flips."""
    q = np.broadcast_to(np.asarray(q, float), (len(y_true),))
    rows = np.repeat((q / (k - 1))[:, None], k, axis=1)
    rows[np.arange(len(y_true)), y_true] = 1.0 - q
    return rows


def enumerate_law(name, y_true, y_pred, rows, **options):
    """Exact mean, variance and 4th central moment over all K^M labellings."""
    m, k = rows.shape
    values, weights = [], []
    for pattern in itertools.product(range(k), repeat=m):
        weight = np.prod(rows[np.arange(m), pattern])
        if weight == 0.0:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values.append(THEIRS[name](np.array(pattern), y_pred, **options))
        weights.append(weight)
    values, weights = np.array(values, float), np.array(weights)
    weights /= weights.sum()
    mean = weights @ values
    variance = weights @ (values - mean) ** 2
    return mean, variance, weights @ (values - mean) ** 4


def check_against(score, law, *, exact_mean, exact_variance):
    mean, variance, m4 = law
    if exact_mean:
        assert score.expected == pytest.approx(mean, rel=1e-12, abs=1e-14)
    else:
        assert abs(score.expected - mean) < 5 * math.sqrt(variance / N_DRAWS) + 1e-15
    if exact_variance:
        assert score.variance == pytest.approx(variance, rel=1e-10, abs=1e-15)
    else:
        se_var = math.sqrt(max(m4 - variance**2, 0.0) / N_DRAWS)
        assert abs(score.variance - variance) < 5 * se_var + 1e-15


Y_TRUE = np.array([0, 1, 2, 1, 0])
Y_PRED = np.array([0, 1, 1, 2, 0])
Q = np.array([0.1, 0.25, 0.05, 0.3, 0.15])


@pytest.mark.parametrize("average", ["macro", "weighted", None])
@pytest.mark.parametrize("name", ["precision", "recall", "f1"])
def test_prf_averages_by_enumeration(name, average):
    rows = observation_rows(Y_TRUE, Q, 3)
    score = OURS[name](
        Y_TRUE,
        Y_PRED,
        q=Q,
        average=average,
        n_draws=N_DRAWS,
        random_state=3,
        estimand="forward",
    )
    if average is None:
        assert len(score) == 3
        mean, variance, m4 = enumerate_law(
            name, Y_TRUE, Y_PRED, rows, labels=[0, 1, 2], average=None
        )
        for k, per_class in enumerate(score):
            law = (mean[k], variance[k], m4[k])
            check_against(per_class, law, exact_mean=True, exact_variance=True)
        return
    law = enumerate_law(name, Y_TRUE, Y_PRED, rows, labels=[0, 1, 2], average=average)
    exact_variance = (name, average) in (("precision", "macro"), ("recall", "weighted"))
    assert score.method == ("exact" if exact_variance else "monte_carlo")
    check_against(score, law, exact_mean=True, exact_variance=exact_variance)


@pytest.mark.parametrize("zero_division", [1.0, np.nan])
@pytest.mark.parametrize("name", ["precision", "recall", "f1"])
def test_macro_zero_division_by_enumeration(name, zero_division):
    # Class 2 is never predicted and rarely observed: 0/0 in some draws.
    y_true = np.array([0, 1, 2, 1, 0])
    y_pred = np.array([0, 1, 1, 0, 0])
    q = np.array([0.2, 0.1, 0.3, 0.2, 0.1])
    rows = observation_rows(y_true, q, 3)
    options = {"labels": [0, 1, 2], "average": "macro", "zero_division": zero_division}
    law = enumerate_law(name, y_true, y_pred, rows, **options)
    score = OURS[name](
        y_true,
        y_pred,
        q=q,
        n_draws=N_DRAWS,
        random_state=4,
        **{"estimand": "forward", **options},
    )
    exact_mean = not (math.isnan(zero_division) and name != "precision")
    check_against(score, law, exact_mean=exact_mean, exact_variance=False)


@pytest.mark.parametrize("zero_division", ["warn", 1.0, np.nan])
@pytest.mark.parametrize("name", ["precision", "recall", "f1"])
def test_binary_zero_division_by_enumeration(name, zero_division):
    y_true = np.array([0, 0, 1, 0, 0, 0])
    y_pred = np.array([0, 0, 0, 0, 0, 0]) if name != "recall" else y_true
    q = 0.2
    rows = observation_rows(y_true, q, 2)
    law = enumerate_law(name, y_true, y_pred, rows, zero_division=zero_division)
    score = OURS[name](
        y_true, y_pred, q=q, zero_division=zero_division, estimand="forward"
    )
    if math.isnan(law[0]):
        assert math.isnan(score.expected)
    else:
        check_against(score, law, exact_mean=True, exact_variance=True)


def test_balanced_accuracy_and_mcc_by_enumeration():
    rows = observation_rows(Y_TRUE, Q, 3)
    for name in ("balanced_accuracy", "matthews_corrcoef"):
        score = OURS[name](
            Y_TRUE, Y_PRED, q=Q, n_draws=N_DRAWS, random_state=5, estimand="forward"
        )
        assert score.method == "monte_carlo"
        law = enumerate_law(name, Y_TRUE, Y_PRED, rows)
        check_against(score, law, exact_mean=False, exact_variance=False)


def test_multiclass_balanced_accuracy_exact_mean_when_no_class_can_vanish():
    # One sample of each class is exact (q = 0): every class is always observed.
    y_true = np.array([0, 1, 2, 2, 1, 0])
    y_pred = np.array([0, 2, 2, 1, 1, 0])
    q = np.array([0.0, 0.0, 0.0, 0.3, 0.2, 0.25])
    rows = observation_rows(y_true, q, 3)
    for adjusted in (False, True):
        score = expected_balanced_accuracy_score(
            y_true,
            y_pred,
            q=q,
            adjusted=adjusted,
            n_draws=N_DRAWS,
            random_state=6,
            estimand="forward",
        )
        law = enumerate_law(
            "balanced_accuracy", y_true, y_pred, rows, adjusted=adjusted
        )
        check_against(score, law, exact_mean=True, exact_variance=False)


def test_binary_adjusted_balanced_accuracy():
    y_true = np.array([0, 1, 1, 0, 1, 0, 0])
    y_pred = np.array([0, 1, 0, 0, 1, 1, 0])
    q = np.array([0.0, 0.0, 0.2, 0.3, 0.1, 0.2, 0.25])  # both classes always seen
    rows = observation_rows(y_true, q, 2)
    law = enumerate_law("balanced_accuracy", y_true, y_pred, rows, adjusted=True)
    score = expected_balanced_accuracy_score(
        y_true, y_pred, q=q, adjusted=True, estimand="forward"
    )
    check_against(score, law, exact_mean=True, exact_variance=True)
    # A single observed class has a positive probability: undefined (NaN).
    undefined = expected_balanced_accuracy_score(
        y_true, y_pred, q=0.2, adjusted=True, estimand="forward"
    )
    assert math.isnan(undefined.expected)


@pytest.mark.parametrize("name", list(OURS))
def test_sample_weight_by_enumeration(name):
    y_true = np.array([0, 1, 1, 0, 1, 0])
    y_pred = np.array([0, 1, 0, 0, 1, 1])
    q = np.array([0.1, 0.2, 0.05, 0.3, 0.15, 0.2])
    weight = np.array([0.5, 2.0, 1.0, 3.0, 0.25, 1.5])
    rows = observation_rows(y_true, q, 2)
    law = enumerate_law(name, y_true, y_pred, rows, sample_weight=weight)
    score = OURS[name](
        y_true,
        y_pred,
        q=q,
        sample_weight=weight,
        n_draws=N_DRAWS,
        random_state=7,
        estimand="forward",
    )
    exact = name == "precision"
    assert score.method == ("exact" if exact else "monte_carlo")
    check_against(score, law, exact_mean=exact, exact_variance=exact)
    if name != "precision":
        delta = OURS[name](
            y_true,
            y_pred,
            q=q,
            sample_weight=weight,
            method="delta",
            estimand="forward",
        )
        assert delta.method == "delta"
        assert abs(delta.expected - law[0]) < 0.5 * math.sqrt(law[1])


def test_zero_weights_are_left_out_exactly():
    y_true = np.array([0, 1, 2, 1, 0, 2, 1])
    y_pred = np.array([0, 1, 1, 2, 0, 2, 1])
    weight = np.array([1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    keep = weight > 0
    for name in ("recall", "f1"):
        weighted = OURS[name](
            y_true,
            y_pred,
            q=0.2,
            sample_weight=weight,
            average=None,
            estimand="forward",
        )
        removed = OURS[name](
            y_true[keep],
            y_pred[keep],
            q=0.2,
            labels=[0, 1, 2],
            average=None,
            estimand="forward",
        )
        assert [s.expected for s in weighted] == [s.expected for s in removed]
        assert all(s.method == "exact" and s.n_samples == 7 for s in weighted)
        weighted = OURS[name](
            y_true % 2, y_pred % 2, q=0.2, sample_weight=weight, estimand="forward"
        )
        removed = OURS[name](
            y_true[keep] % 2, y_pred[keep] % 2, q=0.2, estimand="forward"
        )
        assert weighted.method == removed.method == "exact"
        assert weighted.expected == pytest.approx(removed.expected, rel=1e-14)
        assert weighted.n_samples == 7


def test_default_random_state_is_reproducible():
    rng = np.random.default_rng(8)
    y_true = rng.integers(0, 3, 80)
    y_pred = np.where(rng.random(80) < 0.7, y_true, rng.integers(0, 3, 80))
    for name, function in OURS.items():
        options = {"average": "macro"} if name in ("precision", "recall", "f1") else {}
        first = function(y_true, y_pred, q=0.2, **options)
        assert function(y_true, y_pred, q=0.2, **options) == first
        assert pickle.loads(pickle.dumps(first)) == first


def test_exact_multiclass_expectation_does_not_depend_on_the_seed():
    rng = np.random.default_rng(9)
    y_true = rng.integers(0, 4, 300)
    y_pred = np.where(rng.random(300) < 0.6, y_true, rng.integers(0, 4, 300))
    for name in ("precision", "recall", "f1"):
        for average in ("macro", "weighted"):
            a = OURS[name](
                y_true,
                y_pred,
                q=0.1,
                average=average,
                random_state=1,
                estimand="forward",
            )
            b = OURS[name](
                y_true,
                y_pred,
                q=0.1,
                average=average,
                random_state=2,
                estimand="forward",
            )
            assert a.expected == b.expected
    matrix = np.full((4, 4), 0.05) + np.eye(4) * 0.8
    a = expected_f1_score(
        y_true, y_pred, transition_matrix=matrix, average="macro", estimand="forward"
    )
    per_class = expected_f1_score(
        y_true, y_pred, transition_matrix=matrix, average=None, estimand="forward"
    )
    assert a.expected == pytest.approx(np.mean([s.expected for s in per_class]))


def test_balanced_accuracy_delta_with_constant_prediction():
    """Issue 16: y = ŷ = [0]*10 at q = 0.2 gave V = 0 by the delta method."""
    y = [0] * 10
    exact = expected_balanced_accuracy_score(
        y, y, q=0.2, labels=[0, 1], estimand="forward"
    )
    delta = expected_balanced_accuracy_score(
        y, y, q=0.2, labels=[0, 1], method="delta", estimand="forward"
    )
    # The exact law is checked by enumeration in test_precision_recall; by
    # Monte Carlo (20,000 draws) the variance is 0.0238.
    assert delta.variance == pytest.approx(exact.variance, rel=1e-12)
    assert delta.variance == pytest.approx(0.02396, abs=5e-5)


def test_streamed_laws_match_the_one_shot_product():
    """Per-sample q (streamed in chunks) against the same q in one product."""
    from sklearn_noisy.metrics._engines.counts.binary_moments import (
        CountLaws,
        exact_moments,
    )

    rng = np.random.default_rng(10)
    m = 200_000  # several chunks of the streaming kernel
    y_true = rng.integers(0, 2, m)
    y_pred = np.where(rng.random(m) < 0.8, y_true, 1 - y_true)
    q = rng.uniform(0.0, 0.3, m)
    pi = np.where(y_true == 1, 1.0 - q, q)
    reference = exact_moments(("f1",), CountLaws.of(pi, y_pred == 1))["f1"]
    score = expected_f1_score(y_true, y_pred, q=q, estimand="forward")
    assert score.expected == pytest.approx(reference[0], rel=1e-12)
    assert score.variance == pytest.approx(reference[1], rel=1e-9)


@pytest.mark.parametrize("average", ["macro", "weighted", "micro", None])
@pytest.mark.parametrize("name", ["precision", "recall", "f1"])
def test_labels_subset_by_enumeration(name, average):
    """scikit-learn's labels leaving out a present class: averaged over labels,
    the flips still going to every class (an error before)."""
    rows = observation_rows(Y_TRUE, Q, 3)
    options = {"labels": [2, 0], "average": average}
    law = enumerate_law(name, Y_TRUE, Y_PRED, rows, **options)
    score = OURS[name](
        Y_TRUE,
        Y_PRED,
        q=Q,
        n_draws=N_DRAWS,
        random_state=9,
        **{"estimand": "forward", **options},
    )
    if average is None:
        for k, per_class in enumerate(score):
            one = (law[0][k], law[1][k], law[2][k])
            check_against(per_class, one, exact_mean=True, exact_variance=True)
        return
    exact_mean = average == "macro"
    exact_variance = average == "macro" and name == "precision"
    assert score.method == ("exact" if exact_variance else "monte_carlo")
    check_against(score, law, exact_mean=exact_mean, exact_variance=exact_variance)


def test_streamed_and_grouped_poisson_binomial_windows():
    from sklearn_noisy.metrics._engines.counts.poisson_binomial import (
        poisson_binomial_groups,
        poisson_binomial_stream,
        poisson_binomial_window,
    )

    def full(window, n):
        offset, pmf = window
        out = np.zeros(n + 1)
        out[offset : offset + pmf.size] = pmf
        return out

    rng = np.random.default_rng(11)
    p = rng.uniform(0.0, 1.0, 3000)
    p[:50] = 1.0
    p[50:80] = 0.0
    reference = full(poisson_binomial_window(p), p.size)
    pieces = [(p[a : a + 700],) for a in range(0, p.size, 700)]
    (streamed,) = poisson_binomial_stream(pieces)
    np.testing.assert_allclose(full(streamed, p.size), reference, atol=1e-15)
    values, counts = np.array([0.0, 0.2, 0.7, 1.0]), np.array([3, 400, 250, 5])
    grouped = poisson_binomial_groups(values, counts)
    np.testing.assert_allclose(
        full(grouped, counts.sum()),
        full(poisson_binomial_window(np.repeat(values, counts)), counts.sum()),
        atol=1e-15,
    )


@pytest.mark.parametrize("average", ["macro", None])
def test_weighted_multiclass_precision_by_enumeration(average):
    """Weights keep the predicted totals fixed: precision stays exact."""
    weight = np.array([0.5, 2.0, 1.0, 3.0, 0.25])
    rows = observation_rows(Y_TRUE, Q, 3)
    mean, variance, _ = enumerate_law(
        "precision", Y_TRUE, Y_PRED, rows, average=average, sample_weight=weight
    )
    score = expected_precision_score(
        Y_TRUE, Y_PRED, q=Q, average=average, sample_weight=weight, estimand="forward"
    )
    scores = score if average is None else [score]
    assert [s.method for s in scores] == ["exact"] * len(scores)
    np.testing.assert_allclose([s.expected for s in scores], mean, rtol=1e-12)
    np.testing.assert_allclose([s.variance for s in scores], variance, rtol=1e-10)
