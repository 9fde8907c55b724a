"""Expected precision, recall, F1, balanced accuracy and MCC (FORMULAS.md §8, §4)."""

import itertools
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

from sklearn_noisy import (
    NoisyScore,
    expected_balanced_accuracy_score,
    expected_f1_score,
    expected_matthews_corrcoef,
    expected_precision_score,
    expected_recall_score,
)

FUNCTIONS = {
    "precision": expected_precision_score,
    "recall": expected_recall_score,
    "f1": expected_f1_score,
    "balanced_accuracy": expected_balanced_accuracy_score,
    "matthews_corrcoef": expected_matthews_corrcoef,
}
NONLINEAR = ["recall", "f1", "balanced_accuracy", "matthews_corrcoef"]


def sklearn_metric(name, y_true, y_pred):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # BA: "y_pred contains classes not in y_true"
        if name == "precision":
            return skm.precision_score(y_true, y_pred, zero_division=0)
        if name == "recall":
            return skm.recall_score(y_true, y_pred, zero_division=0)
        if name == "f1":
            return skm.f1_score(y_true, y_pred, zero_division=0)
        if name == "balanced_accuracy":
            return skm.balanced_accuracy_score(y_true, y_pred)
        return skm.matthews_corrcoef(y_true, y_pred)


def metrics_from_counts(tp, fn, n_pos, m):
    """scikit-learn's conventions written out on the counts (vectorised oracle).

    Independent of the library's α/β table; checked against scikit-learn below.
    """
    tp, fn = np.asarray(tp, float), np.asarray(fn, float)
    s = tp + fn
    fp = n_pos - tp
    tn = (m - n_pos) - fn
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(n_pos > 0, tp / max(n_pos, 1), 0.0) * np.ones_like(tp)
        recall = np.where(s > 0, tp / s, 0.0)
        f1 = np.where(2 * tp + fp + fn > 0, 2 * tp / (2 * tp + fp + fn), 0.0)
        rec_pos = np.where(s > 0, tp / s, 0.0)
        rec_neg = np.where(m - s > 0, tn / (m - s), 0.0)
        n_present = (s > 0).astype(float) + (m - s > 0)
        ba = (rec_pos + rec_neg) / n_present
        cov_ytyp = (tp + tn) * m - (s * n_pos + (m - s) * (m - n_pos))
        cov_ypyp = m * m - n_pos**2 - (m - n_pos) ** 2
        cov_ytyt = m * m - s**2 - (m - s) ** 2
        prod = cov_ypyp * cov_ytyt
        mcc = np.where(prod == 0, 0.0, cov_ytyp / np.sqrt(np.where(prod == 0, 1, prod)))
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "balanced_accuracy": ba,
        "matthews_corrcoef": mcc,
    }


def counts(observed, pred):
    observed = np.asarray(observed, bool)
    pred = np.asarray(pred, bool)
    return (observed & pred).sum(-1), (observed & ~pred).sum(-1)


def enumerate_moments(y_true, y_pred, q):
    """Exact E and Var over all 2^M flip patterns (M ≤ 12)."""
    c = np.asarray(y_true, bool)
    pred = np.asarray(y_pred, bool)
    m = c.size
    q = np.broadcast_to(np.asarray(q, float), (m,))
    flips = ((np.arange(2**m)[:, None] >> np.arange(m)) & 1).astype(bool)
    weight = np.prod(np.where(flips, q, 1.0 - q), axis=1)
    tp, fn = counts(c ^ flips, pred)
    values = metrics_from_counts(tp, fn, pred.sum(), m)
    out = {}
    for name, v in values.items():
        mean = weight @ v
        out[name] = (mean, weight @ (v - mean) ** 2)
    return out


def random_case(rng, m, *, per_sample):
    y_true = rng.integers(0, 2, m)
    y_pred = np.where(rng.random(m) < 0.75, y_true, 1 - y_true)
    q = rng.uniform(0.0, 0.4, m) if per_sample else float(rng.uniform(0.02, 0.3))
    return y_true, y_pred, q


# --------------------------------------------------------------------------
# The oracle itself against scikit-learn
# --------------------------------------------------------------------------


def test_count_oracle_matches_sklearn():
    rng = np.random.default_rng(0)
    for trial in range(40):
        m = int(rng.integers(1, 13))
        y_obs = rng.integers(0, 2, m)
        y_pred = rng.integers(0, 2, m)
        if trial % 5 == 0:
            y_obs[:] = trial % 2
        if trial % 7 == 0:
            y_pred[:] = (trial // 7) % 2
        tp, fn = counts(y_obs, y_pred)
        oracle = metrics_from_counts(tp, fn, y_pred.sum(), m)
        for name in FUNCTIONS:
            assert oracle[name] == pytest.approx(
                sklearn_metric(name, y_obs, y_pred), abs=1e-14
            ), (name, y_obs, y_pred)


# --------------------------------------------------------------------------
# Exhaustive enumeration (the strongest test)
# --------------------------------------------------------------------------

EDGE_CASES = [
    ([1, 1, 0, 0, 1], [0, 0, 0, 0, 0], 0.2),  # no predicted positive
    ([1, 1, 1, 1], [1, 1, 1, 1], 0.1),  # a single class present
    ([0, 0, 0], [0, 0, 0], 0.3),
    ([0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1], [0.0, 0.1, 0.2, 0.5, 0.9, 1.0]),
    ([1], [1], 0.25),
    ([0], [1], 0.25),
    ([1, 0, 1, 0], [1, 0, 0, 1], [0.0, 0.0, 1.0, 0.0]),  # all labels certain
    ([1, 0, 1, 0, 1, 1, 0], [1, 1, 0, 0, 1, 0, 0], 1.0),  # every label flips
    ([1, 0, 1, 0, 1, 1, 0], [1, 1, 0, 0, 1, 0, 0], 0.5),
]


@pytest.mark.parametrize("case", range(len(EDGE_CASES)))
def test_edge_cases_by_enumeration(case):
    y_true, y_pred, q = EDGE_CASES[case]
    reference = enumerate_moments(y_true, y_pred, q)
    for name, function in FUNCTIONS.items():
        score = function(y_true, y_pred, q=q, estimand="forward")
        mean, var = reference[name]
        assert score.expected == pytest.approx(mean, abs=1e-12), name
        assert score.variance == pytest.approx(var, abs=1e-12), name
        assert score.method == "exact"


def test_random_cases_by_enumeration():
    rng = np.random.default_rng(12)
    for trial in range(40):
        m = int(rng.integers(1, 13))
        y_true, y_pred, q = random_case(rng, m, per_sample=trial % 2 == 0)
        if trial % 6 == 0:
            y_pred[:] = trial % 4 // 2
        reference = enumerate_moments(y_true, y_pred, q)
        for name, function in FUNCTIONS.items():
            score = function(y_true, y_pred, q=q, estimand="forward")
            mean, var = reference[name]
            assert abs(score.expected - mean) < 1e-12, (name, trial)
            assert abs(score.variance - var) < 1e-12, (name, trial)


def test_enumeration_directly_with_sklearn():
    # A few cases where every outcome is scored by scikit-learn itself.
    rng = np.random.default_rng(5)
    cases = [
        ([1, 0, 1, 1, 0], [1, 0, 0, 1, 1], 0.15),
        ([1, 1, 1, 1], [1, 1, 1, 1], rng.uniform(0, 0.5, 4).tolist()),
        ([0, 0, 1, 0], [0, 0, 0, 0], 0.3),
    ]
    for y_true, y_pred, q in cases:
        m = len(y_true)
        qs = np.broadcast_to(np.asarray(q, float), (m,))
        outcomes = []
        for flips in itertools.product([0, 1], repeat=m):
            f = np.array(flips, bool)
            weight = np.prod(np.where(f, qs, 1 - qs))
            outcomes.append((weight, np.where(f, 1 - np.array(y_true), y_true)))
        for name, function in FUNCTIONS.items():
            values = np.array([sklearn_metric(name, y, y_pred) for _, y in outcomes])
            weights = np.array([w for w, _ in outcomes])
            mean = weights @ values
            score = function(y_true, y_pred, q=q, estimand="forward")
            assert score.expected == pytest.approx(mean, abs=1e-12)
            assert score.variance == pytest.approx(
                weights @ (values - mean) ** 2, abs=1e-12
            )


# --------------------------------------------------------------------------
# q = 0 is scikit-learn
# --------------------------------------------------------------------------


def test_q_zero_equals_sklearn():
    rng = np.random.default_rng(3)
    for trial in range(16):
        m = int(rng.integers(1, 60))
        y_true = rng.integers(0, 2, m)
        y_pred = rng.integers(0, 2, m)
        if trial % 4 == 0:
            y_true[:] = trial % 8 // 4
        if trial % 5 == 0:
            y_pred[:] = 0
        for name, function in FUNCTIONS.items():
            reference = sklearn_metric(name, y_true, y_pred)
            for q in (0.0, np.zeros(m)):
                score = function(y_true, y_pred, q=q, estimand="forward")
                assert abs(score.expected - reference) < 1e-12, (name, trial)
                assert abs(score.nominal - reference) < 1e-12
                assert score.variance == 0.0
            assert (
                abs(
                    function(y_true, y_pred, q=0.2, estimand="forward").nominal
                    - reference
                )
                < 1e-12
            )


def test_q_one_is_the_flipped_metric():
    rng = np.random.default_rng(4)
    y_true = rng.integers(0, 2, 40)
    y_pred = rng.integers(0, 2, 40)
    for name, function in FUNCTIONS.items():
        score = function(y_true, y_pred, q=1.0, estimand="forward")
        assert score.expected == pytest.approx(
            sklearn_metric(name, 1 - y_true, y_pred), abs=1e-12
        )
        assert score.variance == 0.0


# --------------------------------------------------------------------------
# Monte Carlo (M = 10, 50, 500, 5000; constant and per-sample q)
# --------------------------------------------------------------------------


def mc_moments(y_true, y_pred, q, n_draws, seed):
    rng = np.random.default_rng(seed)
    c = np.asarray(y_true, bool)
    pred = np.asarray(y_pred, bool)
    m = c.size
    tp = np.empty(n_draws)
    fn = np.empty(n_draws)
    for start in range(0, n_draws, 500):
        size = min(500, n_draws - start)
        flips = rng.random((size, m)) < q
        tp[start : start + size], fn[start : start + size] = counts(c ^ flips, pred)
    return metrics_from_counts(tp, fn, pred.sum(), m)


def z_scores(draws, expected, variance):
    n = draws.size
    mean = draws.mean()
    centred = draws - mean
    var = centred @ centred / (n - 1)
    m4 = np.mean(centred**4)
    z_mean = (mean - expected) / np.sqrt(var / n) if var > 0 else 0.0
    se_var = np.sqrt(max(m4 - var**2, 0.0) / n)
    z_var = (var - variance) / se_var if se_var > 0 else 0.0
    return z_mean, z_var


@pytest.mark.parametrize("m", [10, 50, 500, 5000])
@pytest.mark.parametrize("per_sample", [False, True])
def test_exact_against_monte_carlo(m, per_sample):
    rng = np.random.default_rng(m + per_sample)
    y_true, y_pred, q = random_case(rng, m, per_sample=per_sample)
    n_draws = 20_000 if m <= 500 else 4_000
    draws = mc_moments(y_true, y_pred, q, n_draws, seed=m)
    for name, function in FUNCTIONS.items():
        score = function(y_true, y_pred, q=q, estimand="forward")
        z_mean, z_var = z_scores(draws[name], score.expected, score.variance)
        assert abs(z_mean) < 5, (name, z_mean)
        assert abs(z_var) < 5, (name, z_var)


# --------------------------------------------------------------------------
# Delta method (FORMULAS.md §8 table, M = 500)
# --------------------------------------------------------------------------


@pytest.mark.parametrize("q", [0.05, 0.2, "per-sample"])
def test_delta_method_accuracy(q):
    rng = np.random.default_rng(500)
    m = 500
    y_true = rng.integers(0, 2, m)
    y_pred = np.where(rng.random(m) < 0.8, y_true, 1 - y_true)
    q = rng.uniform(0.0, 0.3, m) if q == "per-sample" else q
    for name in NONLINEAR:
        exact = FUNCTIONS[name](y_true, y_pred, q=q, estimand="forward")
        delta = FUNCTIONS[name](y_true, y_pred, q=q, method="delta", estimand="forward")
        assert delta.method == "delta"
        # Table: rel. err of E <= 3e-6, of Var 0.3-0.7 % (margin for the setting).
        assert abs(delta.expected / exact.expected - 1) < 1e-5, name
        assert abs(delta.variance / exact.variance - 1) < 0.015, name
    precision = expected_precision_score(
        y_true, y_pred, q=q, method="delta", estimand="forward"
    )
    assert precision == expected_precision_score(
        y_true, y_pred, q=q, estimand="forward"
    )


def test_delta_method_degenerate_cases():
    # No label can flip: the delta method returns the exact metric.
    y_true, y_pred = [1, 0, 1, 1], [1, 1, 0, 1]
    for name in NONLINEAR:
        score = FUNCTIONS[name](
            y_true, y_pred, q=0.0, method="delta", estimand="forward"
        )
        assert score.expected == pytest.approx(sklearn_metric(name, y_true, y_pred))
        assert score.variance == 0.0
    # A single predicted class: MCC is 0 for every labelling.
    score = expected_matthews_corrcoef(
        [1, 0, 1], [1, 1, 1], q=0.1, method="delta", estimand="forward"
    )
    assert (score.expected, score.variance) == (0.0, 0.0)


# --------------------------------------------------------------------------
# Labels, options, estimand, validation
# --------------------------------------------------------------------------


def test_label_values_and_pos_label():
    y_true = np.array(["spam", "ham", "spam", "spam", "ham", "ham"])
    y_pred = np.array(["spam", "spam", "ham", "spam", "ham", "ham"])
    numeric_true = (y_true == "spam").astype(int)
    numeric_pred = (y_pred == "spam").astype(int)
    for name, function in FUNCTIONS.items():
        kwargs = {"pos_label": "spam"} if name in ("precision", "recall", "f1") else {}
        a = function(y_true, y_pred, q=0.2, **{"estimand": "forward", **kwargs})
        b = function(numeric_true, numeric_pred, q=0.2, estimand="forward")
        assert a.expected == pytest.approx(b.expected, abs=1e-14)
        assert a.variance == pytest.approx(b.variance, abs=1e-14)
    # pos_label=0 mirrors the classes.
    a = expected_recall_score(
        numeric_true, numeric_pred, q=0.2, pos_label=0, estimand="forward"
    )
    b = expected_recall_score(
        1 - numeric_true, 1 - numeric_pred, q=0.2, estimand="forward"
    )
    assert a.expected == pytest.approx(b.expected, abs=1e-14)
    # bool labels, pandas Series and lists.
    pd = pytest.importorskip("pandas")
    c = expected_f1_score(
        pd.Series(numeric_true.astype(bool)),
        list(numeric_pred == 1),
        q=0.2,
        pos_label=True,
        estimand="forward",
    )
    d = expected_f1_score(numeric_true, numeric_pred, q=0.2, estimand="forward")
    assert c.expected == pytest.approx(d.expected, abs=1e-14)


def test_transition_matrix_binary():
    rng = np.random.default_rng(9)
    y_true, y_pred, _ = random_case(rng, 9, per_sample=False)
    symmetric = [[0.85, 0.15], [0.15, 0.85]]
    asymmetric = [[0.9, 0.1], [0.3, 0.7]]
    q_asym = np.where(y_true == 1, 0.3, 0.1)
    reference = enumerate_moments(y_true, y_pred, q_asym)
    for name, function in FUNCTIONS.items():
        a = function(y_true, y_pred, transition_matrix=symmetric, estimand="forward")
        b = function(y_true, y_pred, q=0.15, estimand="forward")
        assert a.expected == pytest.approx(b.expected, abs=1e-14)
        assert a.variance == pytest.approx(b.variance, abs=1e-14)
        c = function(
            y_true,
            y_pred,
            transition_matrix=asymmetric,
            labels=[0, 1],
            estimand="forward",
        )
        assert c.expected == pytest.approx(reference[name][0], abs=1e-12)
        assert c.variance == pytest.approx(reference[name][1], abs=1e-12)
    with pytest.raises(ValueError, match="labels"):
        expected_recall_score(
            [1, 1], [1, 1], transition_matrix=asymmetric, estimand="forward"
        )


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**31 - 1),
    m=st.integers(1, 300),
    per_sample=st.booleans(),
)
def test_invariant_to_sample_order(seed, m, per_sample):
    rng = np.random.default_rng(seed)
    y_true, y_pred, q = random_case(rng, m, per_sample=per_sample)
    order = rng.permutation(m)
    q_perm = q[order] if per_sample else q
    for function in FUNCTIONS.values():
        a = function(y_true, y_pred, q=q, estimand="forward")
        b = function(y_true[order], y_pred[order], q=q_perm, estimand="forward")
        assert abs(a.expected - b.expected) < 1e-12
        assert abs(a.variance - b.variance) < 1e-12


def test_precision_truth_estimand():
    rng = np.random.default_rng(21)
    m = 300
    truth = rng.integers(0, 2, m)
    y_pred = np.where(rng.random(m) < 0.8, truth, 1 - truth)
    q = rng.uniform(0.0, 0.35, m)
    target = skm.precision_score(truth, y_pred)
    n_draws = 4000
    estimates = np.empty(n_draws)
    variances = set()
    for k in range(n_draws):
        observed = np.where(rng.random(m) < q, 1 - truth, truth)
        score = expected_precision_score(observed, y_pred, q=q, estimand="truth")
        estimates[k] = score.expected
        variances.add(round(score.variance, 15))
    (variance,) = variances  # label-free: the same for every draw
    z_mean, z_var = z_scores(estimates, target, variance)
    assert abs(z_mean) < 5 and abs(z_var) < 5
    # Closed form against a hand computation, constant q.
    score = expected_precision_score(
        [1, 0, 1, 1], [1, 1, 1, 0], q=0.1, estimand="truth"
    )
    expected = ((1 - 0.1) + (0 - 0.1) + (1 - 0.1)) / 0.8 / 3
    assert score.expected == pytest.approx(expected, abs=1e-15)
    assert score.variance == pytest.approx(3 * 0.09 / 0.64 / 9, abs=1e-15)
    assert score.nominal == pytest.approx(2 / 3)
    # No predicted positive: 0 (zero-division convention).
    empty = expected_precision_score([1, 0], [0, 0], q=0.1, estimand="truth")
    assert (empty.expected, empty.variance) == (0.0, 0.0)


@pytest.mark.parametrize("name", NONLINEAR)
def test_ratio_metrics_offer_truth_and_remeasurement_by_delta(name):
    y_true, y_pred = [0, 1, 1, 0, 1, 0, 1, 1], [0, 1, 0, 0, 1, 1, 1, 1]
    for estimand in ("truth", "remeasurement"):
        score = FUNCTIONS[name](y_true, y_pred, q=0.1, estimand=estimand)
        assert (score.method, score.estimand) == ("delta", estimand)
    remeasurement = FUNCTIONS[name](y_true, y_pred, q=0.1, estimand="remeasurement")
    assert remeasurement.expected == remeasurement.nominal


def test_validation_errors():
    y = [0, 1, 1, 0]
    with pytest.raises(TypeError, match="q"):
        expected_recall_score(y, y, estimand="forward")
    with pytest.raises(TypeError, match="either q or transition_matrix"):
        expected_recall_score(
            y, y, q=0.1, transition_matrix=np.eye(2), estimand="forward"
        )
    with pytest.raises(ValueError, match="q must"):
        expected_recall_score(y, y, q=1.5, estimand="forward")
    with pytest.raises(ValueError, match="one entry per sample"):
        expected_recall_score(y, y, q=[0.1, 0.2], estimand="forward")
    with pytest.raises(ValueError, match="multiclass but average='binary'"):
        expected_f1_score([0, 1, 2], [0, 1, 1], q=0.1, estimand="forward")
    with pytest.raises(ValueError, match="pos_label=1 is not a valid label"):
        expected_precision_score([0, 2, 2], [0, 2, 0], q=0.1, estimand="forward")
    with pytest.raises(ValueError, match="pos_label='yes' is not a valid label"):
        expected_precision_score(
            ["a", "b"], ["a", "b"], q=0.1, pos_label="yes", estimand="forward"
        )
    with pytest.raises(ValueError, match="average must be one of"):
        expected_precision_score(y, y, q=0.1, average="sample", estimand="forward")
    with pytest.raises(ValueError, match="multilabel"):
        expected_precision_score(y, y, q=0.1, average="samples", estimand="forward")
    with pytest.raises(ValueError, match="method must be one of"):
        expected_recall_score(y, y, q=0.1, method="auto", estimand="forward")
    with pytest.raises(ValueError, match="estimand must be one of"):
        expected_precision_score(y, y, q=0.1, estimand="true")
    with pytest.raises(ValueError, match=r"q != 0\.5"):
        expected_precision_score(y, y, q=0.5, estimand="truth")
    with pytest.raises(ValueError, match="invertible transition_matrix"):
        expected_precision_score(
            y, y, transition_matrix=np.full((2, 2), 0.5), estimand="truth"
        )
    with pytest.raises(ValueError, match=r"estimand='remeasurement'.*invertible"):
        expected_recall_score(y, y, q=0.5, estimand="remeasurement")
    with pytest.raises(ValueError, match="method='delta' is available"):
        expected_f1_score(
            y, y, q=0.1, average="macro", method="delta", estimand="forward"
        )
    with pytest.raises(ValueError, match="same number of samples"):
        expected_f1_score([0, 1], [0, 1, 1], q=0.1, estimand="forward")
    with pytest.raises(ValueError, match="empty"):
        expected_mcc_empty()
    with pytest.raises(TypeError, match="mix label types"):
        expected_f1_score(["a", "b"], [0, 1], q=0.1, estimand="forward")
    with pytest.raises(ValueError, match="method='delta' is available"):
        expected_balanced_accuracy_score(
            [0, 1, 2], [0, 1, 1], q=0.1, method="delta", estimand="forward"
        )


def expected_mcc_empty():
    return expected_matthews_corrcoef([], [], q=0.1, estimand="forward")


def test_inputs_not_mutated_and_float32():
    y_true = np.array([1, 0, 1, 1, 0])
    y_pred = np.array([1, 1, 0, 1, 0])
    q = np.array([0.1, 0.2, 0.0, 0.3, 0.05], dtype=np.float32)
    copies = y_true.copy(), y_pred.copy(), q.copy()
    a = expected_f1_score(y_true, y_pred, q=q, estimand="forward")
    b = expected_f1_score(y_true, y_pred, q=q.astype(np.float64), estimand="forward")
    assert a.expected == b.expected and a.variance == b.variance
    for before, after in zip(copies, (y_true, y_pred, q), strict=True):
        np.testing.assert_array_equal(before, after)


def test_pickling():
    import sklearn_noisy.metrics as metrics_module

    y_true, y_pred = [1, 0, 1, 1, 0, 2], [1, 0, 0, 1, 0, 2]
    for name, function in FUNCTIONS.items():
        assert pickle.loads(pickle.dumps(function)) is function
        score = function(y_true[:5], y_pred[:5], q=0.1, estimand="forward")
        assert pickle.loads(pickle.dumps(score)) == score
        assert isinstance(score, NoisyScore) and score.metric == name
        assert getattr(metrics_module, function.__name__) is function
    mc = expected_f1_score(
        y_true,
        y_pred,
        q=0.1,
        average="macro",
        n_draws=20,
        random_state=0,
        estimand="forward",
    )
    restored = pickle.loads(pickle.dumps(mc))
    assert restored.expected == mc.expected and restored.method == "monte_carlo"


# --------------------------------------------------------------------------
# Multiclass: micro (exact) and macro/weighted (Monte Carlo engine)
# --------------------------------------------------------------------------


def independent_draws(y_true, q, classes, n_draws, seed):
    """Observed labels of ``n_draws`` independent flips, one row per draw."""
    rng = np.random.default_rng(seed)
    y_true = np.asarray(y_true)
    k = len(classes)
    index = np.searchsorted(classes, y_true)
    observed = np.empty((n_draws, y_true.size), dtype=np.asarray(classes).dtype)
    for d in range(n_draws):
        flip = rng.random(y_true.size) < q
        shift = rng.integers(1, k, y_true.size)
        observed[d] = np.asarray(classes)[np.where(flip, (index + shift) % k, index)]
    return observed


def independent_mc(metric, y_true, y_pred, q, classes, n_draws, seed):
    values = np.empty(n_draws)
    for d, observed in enumerate(independent_draws(y_true, q, classes, n_draws, seed)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values[d] = metric(observed, y_pred)
    return values


def prf_of_draws(name, average, observed, y_pred, classes):
    """scikit-learn's P/R/F1 (``zero_division=0``) of every row of ``observed``.

    From the per-class counts of all draws at once (every class of
    ``classes`` present in ``y_pred``, so that they are scikit-learn's labels
    in every draw); checked against scikit-learn on the first draws.
    """
    classes = np.asarray(classes)[:, None, None]
    is_true = observed[None] == classes  # (class, draw, sample)
    is_pred = np.asarray(y_pred)[None, None] == classes
    tp = (is_true & is_pred).sum(axis=2).T.astype(float)  # (draw, class)
    n_true = is_true.sum(axis=2).T.astype(float)
    n_pred = np.broadcast_to(is_pred.sum(axis=2).T, tp.shape).astype(float)
    if average == "micro":
        tp, n_true, n_pred = (
            x.sum(axis=1, keepdims=True) for x in (tp, n_true, n_pred)
        )
    numerator, denominator = {
        "precision": (tp, n_pred),
        "recall": (tp, n_true),
        "f1": (2 * tp, n_true + n_pred),
    }[name]
    with np.errstate(divide="ignore", invalid="ignore"):
        per_class = np.where(denominator > 0, numerator / denominator, 0.0)
    if average == "weighted":
        return np.sum(per_class * n_true, axis=1) / n_true.sum(axis=1)
    return per_class.mean(axis=1)


@pytest.mark.parametrize("average", ["macro", "weighted", "micro"])
@pytest.mark.parametrize("name", ["precision", "recall", "f1"])
def test_multiclass_against_independent_monte_carlo(name, average):
    rng = np.random.default_rng(31)
    m = 60
    y_true = rng.integers(0, 3, m)
    y_pred = np.where(rng.random(m) < 0.7, y_true, rng.integers(0, 3, m))
    q = rng.uniform(0.0, 0.3, m)
    sk = {
        "precision": skm.precision_score,
        "recall": skm.recall_score,
        "f1": skm.f1_score,
    }[name]

    def metric(a, b):
        return sk(a, b, average=average, zero_division=0)

    n_draws = 400
    score = FUNCTIONS[name](
        y_true,
        y_pred,
        q=q,
        average=average,
        n_draws=n_draws,
        random_state=1,
        estimand="forward",
    )
    observed = independent_draws(y_true, q, [0, 1, 2], n_draws, 2)
    reference = prf_of_draws(name, average, observed, y_pred, [0, 1, 2])
    assert np.unique(y_pred).size == 3  # scikit-learn's labels: the 3 classes
    for row, value in zip(observed[:20], reference[:20], strict=True):
        assert value == pytest.approx(metric(row, y_pred), rel=1e-12, abs=1e-15)
    assert score.nominal == pytest.approx(metric(y_true, y_pred), abs=1e-12)
    assert score.metric == name
    # The expectation is exact for every average; the variance is exact for
    # the micro averages (the accuracy), the macro precision (independent
    # classes) and the weighted recall (the accuracy), Monte Carlo otherwise.
    exact = average == "micro" or (name, average) in (
        ("precision", "macro"),
        ("recall", "weighted"),
    )
    assert score.method == ("exact" if exact else "monte_carlo")
    z_mean, z_var = z_scores(reference, score.expected, score.variance)
    assert abs(z_mean) < 5 and abs(z_var) < 5
    if average == "micro":
        accuracy = np.where(y_true == y_pred, 1 - q, q / 2)
        assert score.expected == pytest.approx(accuracy.mean(), abs=1e-14)


def test_multiclass_transition_matrix_and_ba_mcc():
    rng = np.random.default_rng(8)
    m = 40
    y_true = rng.integers(0, 3, m)
    y_pred = np.where(rng.random(m) < 0.7, y_true, rng.integers(0, 3, m))
    matrix = np.array([[0.8, 0.1, 0.1], [0.05, 0.9, 0.05], [0.2, 0.2, 0.6]])
    micro = expected_recall_score(
        y_true, y_pred, transition_matrix=matrix, average="micro", estimand="forward"
    )
    p = matrix[y_true, y_pred]
    assert micro.expected == pytest.approx(p.mean(), abs=1e-14)
    assert micro.variance == pytest.approx((p * (1 - p)).sum() / m**2, abs=1e-15)
    for function, sk in (
        (expected_balanced_accuracy_score, skm.balanced_accuracy_score),
        (expected_matthews_corrcoef, skm.matthews_corrcoef),
    ):
        score = function(
            y_true, y_pred, q=0.1, n_draws=60, random_state=0, estimand="forward"
        )
        assert score.method == "monte_carlo"
        assert score.nominal == pytest.approx(sk(y_true, y_pred))
        reference = independent_mc(sk, y_true, y_pred, 0.1, [0, 1, 2], 60, 3)
        se = np.sqrt(score.variance / 60 + reference.var(ddof=1) / 60)
        assert abs(score.expected - reference.mean()) < 5 * se
    # Reproducible.
    options = dict(q=0.1, average="macro", n_draws=20, random_state=4)
    options["estimand"] = "forward"  # the Monte Carlo path
    a, b = (expected_f1_score(y_true, y_pred, **options) for _ in range(2))
    assert a.expected == b.expected
