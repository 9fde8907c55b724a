"""expected_accuracy_score: closed forms, scikit-learn at q = 0, Monte Carlo, errata."""

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score

from sklearn_noisy import NoisyScore, expected_accuracy_score

N_DRAWS = 20_000


def draw_labels(rng, k, n_classes, *, q=None, matrix=None, n_draws=N_DRAWS):
    """Observed class indices, shape (n_draws, M), around reference indices k."""
    k = np.asarray(k)
    if matrix is not None:
        cumulative = np.cumsum(matrix, axis=1)[k]  # (M, K)
        u = rng.random((n_draws, k.size, 1))
        return np.minimum((u > cumulative).sum(axis=2), n_classes - 1)
    flip = rng.random((n_draws, k.size)) < np.asarray(q)
    shift = rng.integers(1, n_classes, size=(n_draws, k.size))
    return np.where(flip, (k + shift) % n_classes, k)


def assert_mc_agrees(samples, expected, variance):
    """Mean and variance of MC samples within 5 standard errors."""
    samples = np.asarray(samples, dtype=float)
    n = samples.size
    mean = samples.mean()
    centred = samples - mean
    mc_var = centred.var()
    m4 = np.mean(centred**4)
    se_mean = np.sqrt(mc_var / n)
    se_var = np.sqrt(max(m4 - mc_var**2, 0.0) / n)
    assert abs(mean - expected) <= 5 * se_mean + 1e-12, (mean, expected, se_mean)
    assert abs(mc_var - variance) <= 5 * se_var + 1e-12, (mc_var, variance, se_var)
    return (mean - expected) / max(se_mean, 1e-300)


def weighted_accuracy(obs, pred, weight=None):
    hits = obs == pred
    if weight is None:
        return hits.mean(axis=-1)
    return hits @ weight / weight.sum()


# --------------------------------------------------------------------------- #
# Closed forms and the paper
# --------------------------------------------------------------------------- #
def paper_example():
    y_true = np.r_[np.ones(85), np.zeros(15)].astype(int)
    y_pred = np.ones(100, dtype=int)
    return y_true, y_pred


def test_paper_worked_example():
    y_true, y_pred = paper_example()
    score = expected_accuracy_score(y_true, y_pred, q=0.05, estimand="forward")
    assert isinstance(score, NoisyScore)
    assert score.metric == "accuracy" and score.method == "exact"
    assert score.nominal == pytest.approx(0.85, abs=1e-15)
    assert score.expected == pytest.approx(0.815, abs=1e-15)
    # The paper's E[acc] = a + q(1 - 2a), right when y_true is exact (forward);
    # applied to labels that are themselves noisy it counts the flips twice
    # (erratum E7).
    assert score.expected == pytest.approx(0.85 + 0.05 * (1 - 2 * 0.85), abs=1e-15)
    assert score.n_samples == 100


def test_erratum_e6_variance_is_per_sample_variance_over_m():
    # Paper: Var(acc) = q(1 - q). Correct: q(1 - q)/M (FORMULAS.md E6).
    m, q = 50, 0.2
    y_true = np.r_[np.ones(40), np.zeros(10)].astype(int)
    y_pred = np.ones(m, dtype=int)
    score = expected_accuracy_score(y_true, y_pred, q=q, estimand="forward")
    paper = q * (1 - q)
    assert score.variance == pytest.approx(0.0032, rel=1e-12)
    assert score.variance == pytest.approx(paper / m, rel=1e-12)
    assert paper / score.variance == pytest.approx(m, rel=1e-12)
    rng = np.random.default_rng(6)
    obs = draw_labels(rng, y_true, 2, q=q)
    assert_mc_agrees(weighted_accuracy(obs, y_pred), score.expected, score.variance)
    # the paper's value is 50 times the Monte Carlo variance: far outside 5 SE
    assert abs(weighted_accuracy(obs, y_pred).var() - paper) > 0.1


def test_per_sample_q_closed_form():
    y_true = np.array([0, 1, 1, 0, 1])
    y_pred = np.array([0, 1, 0, 0, 0])
    q = np.array([0.0, 0.1, 0.2, 0.3, 0.5])
    score = expected_accuracy_score(y_true, y_pred, q=q, estimand="forward")
    a = (y_true == y_pred).astype(float)
    expected = np.mean(q + a * (1 - 2 * q))  # the forward formula, per sample
    assert score.expected == pytest.approx(expected, abs=1e-15)
    assert score.variance == pytest.approx(np.sum(q * (1 - q)) / 25, abs=1e-15)


def test_multiclass_uniform_flips_closed_form():
    # K = 3: wrong predictions are observed correct with probability q/2.
    y_true = np.array([0, 1, 2, 2, 1, 0])
    y_pred = np.array([0, 1, 2, 0, 0, 0])
    q = 0.3
    score = expected_accuracy_score(y_true, y_pred, q=q, estimand="forward")
    p = np.where(y_true == y_pred, 1 - q, q / 2)
    assert score.expected == pytest.approx(p.mean(), abs=1e-15)
    assert score.variance == pytest.approx(np.sum(p * (1 - p)) / 36, abs=1e-15)
    # for K > 2 the variance depends on how many samples are correct, not only
    # on q: all correct gives q(1 - q)/M, binary-style
    other = expected_accuracy_score(y_true, y_true, q=q, estimand="forward")
    assert other.variance == pytest.approx(q * (1 - q) / 6, abs=1e-15)
    assert other.variance > score.variance + 1e-3


def test_transition_matrix_closed_form():
    matrix = np.array([[0.8, 0.15, 0.05], [0.1, 0.7, 0.2], [0.0, 0.25, 0.75]])
    y_true = np.array([0, 1, 2, 2, 1, 0, 1])
    y_pred = np.array([0, 1, 2, 0, 2, 1, 1])
    score = expected_accuracy_score(
        y_true, y_pred, transition_matrix=matrix, estimand="forward"
    )
    p = matrix[y_true, y_pred]
    assert score.expected == pytest.approx(p.mean(), abs=1e-15)
    assert score.variance == pytest.approx(np.sum(p * (1 - p)) / 49, abs=1e-15)


def test_binary_transition_matrix_equal_to_q():
    rng = np.random.default_rng(0)
    y_true = rng.integers(0, 2, 200)
    y_pred = rng.integers(0, 2, 200)
    by_q = expected_accuracy_score(y_true, y_pred, q=0.2)
    by_t = expected_accuracy_score(
        y_true, y_pred, transition_matrix=[[0.8, 0.2], [0.2, 0.8]]
    )
    assert by_t.expected == pytest.approx(by_q.expected, abs=1e-14)
    assert by_t.variance == pytest.approx(by_q.variance, abs=1e-15)


# --------------------------------------------------------------------------- #
# scikit-learn at q = 0
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "y_true, y_pred",
    [
        ([0, 1, 1, 0, 1], [0, 1, 0, 0, 1]),
        (["cat", "dog", "dog", "bird"], ["cat", "dog", "bird", "bird"]),
        ([1.0, 2.0, 3.0, 3.0], [1.0, 3.0, 3.0, 3.0]),
        ([True, False, True], [True, True, True]),
        ([-1, 1, 1, -1], [1, 1, 1, -1]),
        ([10, 3000, 10], [10, 10, 10]),
    ],
)
def test_q_zero_equals_sklearn(y_true, y_pred):
    score = expected_accuracy_score(y_true, y_pred, q=0.0)
    reference = accuracy_score(y_true, y_pred)
    assert abs(score.expected - reference) <= 1e-12
    assert abs(score.nominal - reference) <= 1e-12
    assert score.variance == 0.0


def test_q_zero_equals_sklearn_large_random():
    rng = np.random.default_rng(1)
    y_true = rng.integers(0, 7, 200_000)
    y_pred = np.where(rng.random(200_000) < 0.6, y_true, rng.integers(0, 7, 200_000))
    weight = rng.uniform(0.1, 3.0, 200_000)
    for w in (None, weight):
        score = expected_accuracy_score(y_true, y_pred, q=0.0, sample_weight=w)
        reference = accuracy_score(y_true, y_pred, sample_weight=w)
        assert abs(score.expected - reference) <= 1e-12
        assert abs(score.nominal - reference) <= 1e-12
        identity = expected_accuracy_score(
            y_true, y_pred, transition_matrix=np.eye(7), sample_weight=w
        )
        assert abs(identity.expected - reference) <= 1e-12


def test_fast_and_general_label_paths_agree():
    rng = np.random.default_rng(2)
    y_true = rng.integers(0, 5, 1000)
    y_pred = rng.integers(0, 5, 1000)
    q = rng.uniform(0, 0.4, 1000)
    fast = expected_accuracy_score(y_true, y_pred, q=q, estimand="forward")
    general = expected_accuracy_score(
        y_true.astype(str), y_pred.astype(str), q=q, estimand="forward"
    )
    with_labels = expected_accuracy_score(
        y_true, y_pred, q=q, labels=range(5), estimand="forward"
    )
    for other in (general, with_labels):
        assert other.expected == pytest.approx(fast.expected, abs=1e-14)
        assert other.variance == pytest.approx(fast.variance, abs=1e-16)
    # labels can add classes absent from the data: K changes r = q/(K - 1)
    more = expected_accuracy_score(
        y_true, y_pred, q=q, labels=range(6), estimand="forward"
    )
    assert more.expected < fast.expected


# --------------------------------------------------------------------------- #
# Monte Carlo
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("m", [5, 50, 500])
def test_monte_carlo_binary_constant_q(m):
    rng = np.random.default_rng(m)
    y_true = rng.integers(0, 2, m)
    y_pred = np.where(rng.random(m) < 0.8, y_true, 1 - y_true)
    score = expected_accuracy_score(y_true, y_pred, q=0.15, estimand="forward")
    n_draws = 20_000 if m < 500 else 4_000
    obs = draw_labels(rng, y_true, 2, q=0.15, n_draws=n_draws)
    assert_mc_agrees(weighted_accuracy(obs, y_pred), score.expected, score.variance)


def test_monte_carlo_binary_per_sample_q_and_weights():
    rng = np.random.default_rng(10)
    m = 60
    y_true = rng.integers(0, 2, m)
    y_pred = np.where(rng.random(m) < 0.7, y_true, 1 - y_true)
    q = rng.uniform(0.0, 0.45, m)
    q[:5] = 0.0  # exact labels
    weight = rng.uniform(0.2, 2.0, m)
    obs = draw_labels(rng, y_true, 2, q=q)
    for w in (None, weight):
        score = expected_accuracy_score(
            y_true, y_pred, q=q, sample_weight=w, estimand="forward"
        )
        assert_mc_agrees(
            weighted_accuracy(obs, y_pred, w), score.expected, score.variance
        )
    # the weighted variance is Σ w² P(1 - P) / (Σ w)²
    score = expected_accuracy_score(
        y_true, y_pred, q=q, sample_weight=weight, estimand="forward"
    )
    assert score.variance == pytest.approx(
        np.sum(weight**2 * q * (1 - q)) / weight.sum() ** 2, rel=1e-12
    )


@pytest.mark.parametrize("per_sample", [False, True])
def test_monte_carlo_multiclass_uniform_flips(per_sample):
    rng = np.random.default_rng(30 + per_sample)
    m = 40
    y_true = rng.integers(0, 3, m)
    y_pred = np.where(rng.random(m) < 0.6, y_true, rng.integers(0, 3, m))
    q = rng.uniform(0.05, 0.6, m) if per_sample else 0.25
    score = expected_accuracy_score(y_true, y_pred, q=q, estimand="forward")
    obs = draw_labels(rng, y_true, 3, q=q)
    assert_mc_agrees(weighted_accuracy(obs, y_pred), score.expected, score.variance)


def test_monte_carlo_transition_matrix_string_labels():
    rng = np.random.default_rng(40)
    labels = np.array(["low", "mid", "high"])  # T in this (unsorted) order
    matrix = np.array([[0.7, 0.3, 0.0], [0.1, 0.8, 0.1], [0.05, 0.15, 0.8]])
    m = 45
    k = rng.integers(0, 3, m)
    pred = np.where(rng.random(m) < 0.6, k, rng.integers(0, 3, m))
    weight = rng.uniform(0.5, 1.5, m)
    score = expected_accuracy_score(
        labels[k],
        labels[pred],
        transition_matrix=matrix,
        labels=labels,
        sample_weight=weight,
        estimand="forward",
    )
    obs = draw_labels(rng, k, 3, matrix=matrix)
    assert_mc_agrees(
        weighted_accuracy(obs, pred, weight), score.expected, score.variance
    )


def test_labels_order_permutes_transition_matrix():
    matrix = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.1, 0.6]])
    y_true = ["a", "b", "c", "c", "a", "b"]
    y_pred = ["a", "c", "c", "b", "a", "a"]
    sorted_score = expected_accuracy_score(y_true, y_pred, transition_matrix=matrix)
    order = [2, 0, 1]  # labels c, a, b
    permuted = matrix[np.ix_(order, order)]
    other = expected_accuracy_score(
        y_true, y_pred, transition_matrix=permuted, labels=["c", "a", "b"]
    )
    assert other.expected == pytest.approx(sorted_score.expected, abs=1e-15)
    assert other.variance == pytest.approx(sorted_score.variance, abs=1e-15)


# --------------------------------------------------------------------------- #
# Validation, immutability, pickling
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({}, TypeError, "q"),
        ({"q": 0.1, "transition_matrix": np.eye(2)}, TypeError, "not both"),
        ({"q": 1.5}, ValueError, "q must be a probability"),
        ({"q": -0.1}, ValueError, "q must be a probability"),
        ({"q": [0.1, 0.2]}, ValueError, "q must have one entry per sample"),
        ({"q": [0.1, np.nan, 0.1, 0.1]}, ValueError, "q must be finite"),
        ({"transition_matrix": [[0.9, 0.2], [0.1, 0.9]]}, ValueError, "row-stochastic"),
        ({"transition_matrix": np.eye(3)}, ValueError, "2 x 2"),
        ({"q": 0.1, "labels": [0, 1, 1]}, ValueError, "duplicates"),
        ({"q": 0.1, "labels": [0, 2]}, ValueError, "not in `labels`"),
        ({"q": 0.1, "sample_weight": [1, 1, -1, 1]}, ValueError, "sample_weight"),
        ({"q": 0.1, "estimand": "truthy"}, ValueError, "estimand must be one of"),
    ],
)
def test_validation_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        expected_accuracy_score([0, 1, 1, 0], [0, 1, 0, 0], **kwargs)


def test_shape_and_length_errors():
    with pytest.raises(ValueError, match="same number of samples"):
        expected_accuracy_score([0, 1, 1], [0, 1], q=0.1)
    with pytest.raises(ValueError, match="empty"):
        expected_accuracy_score([], [], q=0.1)
    with pytest.raises(ValueError, match="1-D"):
        # 2-D indicator matrices are multilabel targets (subset accuracy, as
        # in scikit-learn: tests/test_sklearn_boundary.py); 3-D is no target
        expected_accuracy_score(np.zeros((3, 2, 2)), np.zeros((3, 2, 2)), q=0.1)


def test_single_class_needs_labels():
    with pytest.raises(ValueError, match="labels"):
        expected_accuracy_score([1, 1, 1], [1, 1, 1], q=0.1, estimand="forward")
    score = expected_accuracy_score(
        [1, 1, 1], [1, 1, 1], q=0.1, labels=[0, 1], estimand="forward"
    )
    assert score.expected == pytest.approx(0.9)
    assert score.variance == pytest.approx(0.09 / 3)
    # a transition matrix fixes the classes itself
    score = expected_accuracy_score(
        ["a", "a"], ["a", "a"], transition_matrix=[[1.0]], estimand="forward"
    )
    assert score.expected == 1.0 and score.variance == 0.0


def test_inputs_not_mutated_and_pandas_accepted():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    y_true = rng.integers(0, 3, 100)
    y_pred = rng.integers(0, 3, 100)
    q = rng.uniform(0, 0.3, 100)
    weight = rng.uniform(0.5, 1.0, 100)
    copies = [a.copy() for a in (y_true, y_pred, q, weight)]
    score = expected_accuracy_score(y_true, y_pred, q=q, sample_weight=weight)
    truth = expected_accuracy_score(
        y_true, y_pred, q=q, sample_weight=weight, estimand="truth"
    )
    for original, copy in zip((y_true, y_pred, q, weight), copies, strict=True):
        np.testing.assert_array_equal(original, copy)
    series = expected_accuracy_score(
        pd.Series(y_true),
        pd.Series(y_pred),
        q=pd.Series(q),
        sample_weight=pd.Series(weight),
    )
    as_list = expected_accuracy_score(
        y_true.tolist(), y_pred.tolist(), q=q.tolist(), sample_weight=weight.tolist()
    )
    assert series.expected == score.expected == as_list.expected
    assert truth.nominal == score.nominal


def test_float32_q_uses_float64_arithmetic():
    rng = np.random.default_rng(4)
    y_true = rng.integers(0, 2, 1000)
    y_pred = rng.integers(0, 2, 1000)
    q = rng.uniform(0, 0.4, 1000).astype(np.float32)
    score32 = expected_accuracy_score(y_true, y_pred, q=q)
    score64 = expected_accuracy_score(y_true, y_pred, q=q.astype(np.float64))
    assert score32.expected == score64.expected
    assert score32.variance == score64.variance


def test_pickle_roundtrip():
    y_true, y_pred = paper_example()
    score = expected_accuracy_score(y_true, y_pred, q=0.05)
    clone = pickle.loads(pickle.dumps(score))
    assert clone == score
    assert (
        pickle.loads(pickle.dumps(expected_accuracy_score)) is expected_accuracy_score
    )


# --------------------------------------------------------------------------- #
# Properties
# --------------------------------------------------------------------------- #
@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=60),
    st.floats(0.0, 1.0),
)
def test_bias_is_q_times_one_minus_two_a(pairs, q):
    y_true = np.array([p[0] for p in pairs])
    y_pred = np.array([p[1] for p in pairs])
    labels = [0, 1]
    score = expected_accuracy_score(
        y_true, y_pred, q=q, labels=labels, estimand="forward"
    )
    a = accuracy_score(y_true, y_pred)
    assert score.expected - a == pytest.approx(q * (1 - 2 * a), abs=1e-12)
    assert score.variance == pytest.approx(q * (1 - q) / len(pairs), abs=1e-15)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 3), st.floats(0.0, 0.7)),
        min_size=2,
        max_size=40,
    ),
    st.randoms(use_true_random=False),
)
def test_invariant_to_sample_order(rows, random):
    y_true = np.array([r[0] for r in rows])
    y_pred = np.array([r[1] for r in rows])
    q = np.array([r[2] for r in rows])
    order = list(range(len(rows)))
    random.shuffle(order)
    labels = [0, 1, 2, 3]
    # q <= 0.7 < (K - 1)/K = 0.75: the truth estimand is defined too
    for estimand in ("forward", "truth"):
        a = expected_accuracy_score(
            y_true, y_pred, q=q, labels=labels, estimand=estimand
        )
        b = expected_accuracy_score(
            y_true[order], y_pred[order], q=q[order], labels=labels, estimand=estimand
        )
        assert b.expected == pytest.approx(a.expected, abs=1e-12)
        assert b.variance == pytest.approx(a.variance, abs=1e-12)
        assert b.nominal == pytest.approx(a.nominal, abs=1e-15)
