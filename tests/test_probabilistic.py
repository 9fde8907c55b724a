"""expected_brier_score_loss and expected_log_loss: sklearn at q = 0, Monte Carlo."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss, log_loss

from sklearn_noisy import expected_brier_score_loss, expected_log_loss

EPS = np.finfo(np.float64).eps


def draw_labels(rng, k, n_classes, *, q=None, matrix=None, n_draws=20_000):
    k = np.asarray(k)
    if matrix is not None:
        cumulative = np.cumsum(matrix, axis=1)[k]
        u = rng.random((n_draws, k.size, 1))
        return np.minimum((u > cumulative).sum(axis=2), n_classes - 1)
    flip = rng.random((n_draws, k.size)) < np.asarray(q)
    shift = rng.integers(1, n_classes, size=(n_draws, k.size))
    return np.where(flip, (k + shift) % n_classes, k)


def loss_matrix(metric, proba):
    """L[i, j]: loss of sample i if its label is class j, from the definitions."""
    proba = np.asarray(proba, dtype=float)
    if proba.ndim == 1:
        proba = np.c_[1 - proba, proba]
        halve = True
    else:
        halve = proba.shape[1] == 2
    n_classes = proba.shape[1]
    if metric == "brier":
        onehot = np.eye(n_classes)
        loss = ((proba[:, None, :] - onehot[None, :, :]) ** 2).sum(axis=2)
        return 0.5 * loss if halve else loss
    return -np.log(np.clip(proba, EPS, 1 - EPS))


def mc_metric(losses, obs, weight=None):
    per_draw = np.take_along_axis(losses.T[None, :, :], obs[:, None, :], axis=1)[:, 0]
    if weight is None:
        return per_draw.mean(axis=1)
    return per_draw @ weight / weight.sum()


def assert_mc_agrees(samples, expected, variance):
    n = samples.size
    mean = samples.mean()
    centred = samples - mean
    mc_var = centred.var()
    m4 = np.mean(centred**4)
    se_mean = np.sqrt(mc_var / n)
    se_var = np.sqrt(max(m4 - mc_var**2, 0.0) / n)
    assert abs(mean - expected) <= 5 * se_mean + 1e-12, (mean, expected, se_mean)
    assert abs(mc_var - variance) <= 5 * se_var + 1e-12, (mc_var, variance, se_var)


FUNCTIONS = {"brier": expected_brier_score_loss, "log": expected_log_loss}


# --------------------------------------------------------------------------- #
# scikit-learn at q = 0
# --------------------------------------------------------------------------- #
def sklearn_cases():
    rng = np.random.default_rng(0)
    p = rng.random(200)
    p[:4] = [0.0, 1.0, 0.5, 1e-20]
    y = rng.integers(0, 2, 200)
    y[:4] = [1, 0, 1, 1]  # confident and wrong: clipping matters for log-loss
    p3 = rng.dirichlet([1.0, 2.0, 0.5], 200)
    p3[0] = [1.0, 0.0, 0.0]
    y3 = rng.integers(0, 3, 200)
    y3[0] = 2
    letters = np.array(["ham", "spam"])
    return [
        ("binary 1-D", y, p, {}),
        ("binary 2-D", y, np.c_[1 - p, p], {}),
        ("strings 1-D", letters[y], p, {"brier": {"pos_label": "spam"}}),
        ("pos_label=0", y, 1 - p, {"brier": {"pos_label": 0}, "log": None}),
        ("-1/1", 2 * y - 1, p, {}),
        ("multiclass", y3, p3, {}),
        (
            "multiclass labels",
            np.array(["a", "b", "c"])[y3],
            p3,
            {"both": {"labels": ["a", "b", "c"]}},
        ),
        (
            "missing class",
            np.zeros(3, dtype=int),
            np.array([[0.6, 0.3, 0.1]] * 3),
            {"both": {"labels": [0, 1, 2]}},
        ),
    ]


@pytest.mark.parametrize(
    "metric, case",
    [
        (metric, case)
        for metric in ("brier", "log")
        for case in sklearn_cases()
        if case[3].get(metric, {}) is not None  # None: no such sklearn option
    ],
    ids=lambda value: value if isinstance(value, str) else value[0],
)
def test_q_zero_equals_sklearn(metric, case):
    _, y_true, proba, options = case
    kwargs = dict(options.get("both", {}))
    kwargs.update(options.get(metric, {}))
    reference_fn = brier_score_loss if metric == "brier" else log_loss
    reference = reference_fn(y_true, proba, **kwargs)
    weight = np.linspace(0.5, 2.0, len(y_true))
    weighted_reference = reference_fn(y_true, proba, sample_weight=weight, **kwargs)
    for q in (0.0, np.zeros(len(y_true))):
        score = FUNCTIONS[metric](
            y_true, proba, q=q, **{"estimand": "forward", **kwargs}
        )
        assert abs(score.expected - reference) <= 1e-12
        assert abs(score.nominal - reference) <= 1e-12
        assert score.variance == 0.0
    weighted = FUNCTIONS[metric](
        y_true, proba, q=0.0, sample_weight=weight, **{"estimand": "forward", **kwargs}
    )
    assert abs(weighted.expected - weighted_reference) <= 1e-12
    n_classes = 2 if np.ndim(proba) == 1 else np.shape(proba)[1]
    identity = FUNCTIONS[metric](
        y_true,
        proba,
        transition_matrix=np.eye(n_classes),
        **{"estimand": "forward", **kwargs},
    )
    assert abs(identity.expected - reference) <= 1e-12


def test_log_loss_clips_and_stays_finite():
    score = expected_log_loss([0, 1], [1.0, 0.0], q=0.1, estimand="forward")
    assert np.isfinite(score.expected) and np.isfinite(score.variance)
    max_logit = np.log(1 - EPS) - np.log(EPS)
    # both confidently wrong: observed wrong with probability 0.9
    worst, best = -np.log(EPS), -np.log1p(-EPS)
    assert score.expected == pytest.approx(0.9 * worst + 0.1 * best, rel=1e-12)
    assert score.variance == pytest.approx(2 * max_logit**2 * 0.09 / 4, rel=1e-12)
    # float32 probabilities are clipped at float32's eps, as scikit-learn does
    eps32 = float(np.finfo(np.float32).eps)
    score32 = expected_log_loss(
        [0, 1], np.array([1.0, 0.0], np.float32), q=0.0, estimand="forward"
    )
    assert score32.expected == pytest.approx(-np.log(eps32), rel=1e-6)


def test_binary_closed_forms():
    p = np.array([0.1, 0.9, 0.8, 0.3, 0.5])
    y = np.array([0, 1, 1, 0, 1])
    q = np.array([0.1, 0.0, 0.3, 0.2, 0.05])
    pi = q + y * (1 - 2 * q)
    brier = expected_brier_score_loss(y, p, q=q, estimand="forward")
    assert brier.expected == pytest.approx(np.mean(p**2 + pi * (1 - 2 * p)), rel=1e-14)
    assert brier.variance == pytest.approx(
        np.sum((1 - 2 * p) ** 2 * q * (1 - q)) / 25, rel=1e-12
    )
    logit = np.log(p) - np.log1p(-p)
    log = expected_log_loss(y, p, q=q, estimand="forward")
    assert log.expected == pytest.approx(np.mean(-np.log1p(-p) - pi * logit), rel=1e-14)
    assert log.variance == pytest.approx(np.sum(logit**2 * q * (1 - q)) / 25, rel=1e-12)


# --------------------------------------------------------------------------- #
# Monte Carlo
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("metric", ["brier", "log"])
@pytest.mark.parametrize("setting", ["constant_q", "per_sample_q", "matrix"])
def test_monte_carlo_binary(metric, setting):
    rng = np.random.default_rng(["constant_q", "per_sample_q", "matrix"].index(setting))
    m = 40
    y = rng.integers(0, 2, m)
    p = np.clip(np.where(y == 1, 0.7, 0.3) + rng.normal(0, 0.25, m), 0.0, 1.0)
    weight = rng.uniform(0.5, 2.0, m) if setting == "per_sample_q" else None
    q = matrix = None
    if setting == "constant_q":
        q = 0.2
    elif setting == "per_sample_q":
        q = rng.uniform(0.0, 0.45, m)
    else:
        matrix = np.array([[0.9, 0.1], [0.3, 0.7]])
    score = FUNCTIONS[metric](
        y, p, q=q, transition_matrix=matrix, sample_weight=weight, estimand="forward"
    )
    obs = draw_labels(rng, y, 2, q=q, matrix=matrix)
    assert_mc_agrees(
        mc_metric(loss_matrix(metric, p), obs, weight), score.expected, score.variance
    )


@pytest.mark.parametrize("metric", ["brier", "log"])
@pytest.mark.parametrize("setting", ["constant_q", "per_sample_q", "matrix"])
def test_monte_carlo_multiclass(metric, setting):
    rng = np.random.default_rng(
        10 + ["constant_q", "per_sample_q", "matrix"].index(setting)
    )
    m, n_classes = 35, 4
    k = rng.integers(0, n_classes, m)
    k[:n_classes] = np.arange(n_classes)
    proba = rng.dirichlet(np.ones(n_classes), m)
    proba[np.arange(m), k] += 1.0
    proba /= proba.sum(axis=1, keepdims=True)
    proba[0] = [0.0, 0.0, 0.5, 0.5]  # wrong and certain for class 0: clipped
    weight = rng.uniform(0.5, 2.0, m) if setting == "matrix" else None
    q = matrix = None
    if setting == "constant_q":
        q = 0.3
    elif setting == "per_sample_q":
        q = rng.uniform(0.0, 0.8, m)
    else:
        matrix = rng.dirichlet(np.ones(n_classes), n_classes) + 2 * np.eye(n_classes)
        matrix /= matrix.sum(axis=1, keepdims=True)
    labels = np.array(["w", "x", "y", "z"])
    score = FUNCTIONS[metric](
        labels[k],
        proba,
        q=q,
        transition_matrix=matrix,
        sample_weight=weight,
        estimand="forward",
    )
    obs = draw_labels(rng, k, n_classes, q=q, matrix=matrix)
    assert_mc_agrees(
        mc_metric(loss_matrix(metric, proba), obs, weight),
        score.expected,
        score.variance,
    )


def test_brier_binary_two_columns_equals_one_column():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 50)
    p = rng.random(50)
    q = rng.uniform(0, 0.4, 50)
    for fn in FUNCTIONS.values():
        one = fn(y, p, q=q, estimand="forward")
        two = fn(y, np.c_[1 - p, p], q=q, estimand="forward")
        assert two.expected == pytest.approx(one.expected, rel=1e-12)
        assert two.variance == pytest.approx(one.variance, rel=1e-10)


def test_transition_matrix_follows_labels_order():
    # labels given unsorted: y_proba's columns are sorted (scikit-learn), T is in
    # the order of `labels`
    matrix = np.array([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.05, 0.05, 0.9]])
    y = np.array(["b", "a", "c", "c", "b"])
    proba = np.array(
        [
            [0.2, 0.7, 0.1],
            [0.6, 0.2, 0.2],
            [0.1, 0.1, 0.8],
            [0.3, 0.3, 0.4],
            [0.1, 0.8, 0.1],
        ]
    )
    reference = expected_log_loss(
        y, proba, transition_matrix=matrix, estimand="forward"
    )
    order = [2, 0, 1]  # labels c, a, b
    with pytest.warns(UserWarning, match="sorted"):
        other = expected_log_loss(
            y,
            proba,
            transition_matrix=matrix[np.ix_(order, order)],
            labels=["c", "a", "b"],
            estimand="forward",
        )
    assert other.expected == pytest.approx(reference.expected, rel=1e-14)
    assert other.variance == pytest.approx(reference.variance, rel=1e-14)
    # 1-D Brier: T in `labels` order, positive class pos_label
    y2 = np.array(["no", "yes", "yes", "no"])
    p = np.array([0.2, 0.9, 0.6, 0.4])
    t = np.array([[0.9, 0.1], [0.25, 0.75]])  # rows: no, yes
    a = expected_brier_score_loss(
        y2, p, transition_matrix=t, pos_label="yes", estimand="forward"
    )
    b = expected_brier_score_loss(
        y2,
        p,
        transition_matrix=t[::-1, ::-1],
        pos_label="yes",
        labels=["yes", "no"],
        estimand="forward",
    )
    assert a.expected == pytest.approx(b.expected, rel=1e-14)
    pi = np.where(y2 == "yes", 0.75, 0.1)
    assert a.expected == pytest.approx(np.mean(p**2 + pi * (1 - 2 * p)), rel=1e-14)


# --------------------------------------------------------------------------- #
# Validation, immutability, pickling
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("metric", ["brier", "log"])
def test_validation_errors(metric):
    fn = FUNCTIONS[metric]
    with pytest.raises(ValueError, match="greater than 1"):
        fn([0, 1], [0.5, 1.5], q=0.1, estimand="forward")
    with pytest.raises(ValueError, match="lower than 0"):
        fn([0, 1], [0.5, -0.1], q=0.1, estimand="forward")
    with pytest.raises(ValueError, match="finite"):
        fn([0, 1], [0.5, np.nan], q=0.1, estimand="forward")
    with pytest.raises(ValueError, match="same number of samples"):
        fn([0, 1, 1], [0.5, 0.2], q=0.1, estimand="forward")
    with pytest.raises(ValueError, match="columns"):
        fn([0, 1, 2], [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5]], q=0.1, estimand="forward")
    with pytest.raises(ValueError, match="only one label"):
        fn([1, 1], [[0.5, 0.5], [0.5, 0.5]], q=0.1, estimand="forward")
    with pytest.raises(TypeError):
        fn([0, 1], [0.5, 0.5], estimand="forward")
    with pytest.raises(ValueError, match="estimand"):
        fn([0, 1], [0.5, 0.5], q=0.1, estimand="both")
    with pytest.raises(ValueError, match="q must"):
        fn([0, 1], [0.5, 0.5], q=2.0, estimand="forward")
    with pytest.raises(ValueError, match="2 x 2"):
        fn([0, 1], [0.5, 0.5], transition_matrix=np.eye(3), estimand="forward")
    with pytest.raises(TypeError, match="y_proba"):
        fn([0, 1], ["a", "b"], q=0.1, estimand="forward")


def test_label_specific_errors():
    with pytest.raises(ValueError, match="pos_label"):
        expected_brier_score_loss(["a", "b"], [0.2, 0.8], q=0.1, estimand="forward")
    with pytest.raises(ValueError, match="binary"):
        expected_brier_score_loss([0, 1, 2], [0.2, 0.8, 0.5], q=0.1, estimand="forward")
    with pytest.raises(ValueError, match="only one label"):
        expected_log_loss([1, 1], [0.2, 0.8], q=0.1, estimand="forward")
    with pytest.raises(ValueError, match="labels"):
        expected_brier_score_loss(
            ["a", "a"],
            [0.2, 0.8],
            pos_label="a",
            transition_matrix=np.eye(2),
            estimand="forward",
        )
    # one class present: binary flips need no other label name for Brier
    score = expected_brier_score_loss([0, 0], [0.2, 0.4], q=0.1, estimand="forward")
    assert score.expected == pytest.approx(
        np.mean([0.04, 0.16]) + 0.1 * np.mean([1 - 0.4, 1 - 0.8]), rel=1e-14
    )


def test_unnormalised_rows_warn_like_sklearn():
    with pytest.warns(UserWarning, match="sum to one"):
        expected_log_loss([0, 1, 2], [[0.5, 0.5, 0.5]] * 3, q=0.1, estimand="forward")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        expected_log_loss([0, 1, 2], [[0.2, 0.3, 0.5]] * 3, q=0.1, estimand="forward")


def test_not_mutated_pandas_and_pickle():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(5)
    y = rng.integers(0, 3, 50)
    proba = rng.dirichlet(np.ones(3), 50)
    proba[0] = [1.0, 0.0, 0.0]
    q = rng.uniform(0, 0.5, 50)
    copies = [a.copy() for a in (y, proba, q)]
    for fn in FUNCTIONS.values():
        for estimand in ("forward", "truth"):
            score = fn(y, proba, q=q, estimand=estimand)
            assert pickle.loads(pickle.dumps(score)) == score
        from_pandas = fn(
            pd.Series(y), pd.DataFrame(proba), q=pd.Series(q), estimand="forward"
        )
        assert from_pandas == fn(y, proba, q=q, estimand="forward")
    for a, b in zip((y, proba, q), copies, strict=True):
        np.testing.assert_array_equal(a, b)


def test_registry_records_point_at_the_probabilistic_definitions():
    from sklearn_noisy.metrics import get_metric_info
    from sklearn_noisy.metrics._definitions.probabilistic import (
        BRIER_SCORE_LOSS,
        LOG_LOSS,
    )

    for definition in (BRIER_SCORE_LOSS, LOG_LOSS):
        info = get_metric_info(definition.name)
        assert info.definition is definition
        assert info.paired.args == (definition,)
    # the Brier score alone takes pos_label and scale_by_half
    assert BRIER_SCORE_LOSS.pos_label and BRIER_SCORE_LOSS.scale_by_half
    assert not (LOG_LOSS.pos_label or LOG_LOSS.scale_by_half)


# ------------------------------------------------- label-indicator (2-D) y_true
def _indicator_case(seed=0, n=40, k=4):
    rng = np.random.default_rng(seed)
    y = (rng.random((n, k)) < 0.4).astype(int)
    y[0] = [1, 1, 0, 0][:k] + [0] * (k - 4)  # at least one multilabel row
    return rng, y, rng.random((n, k)), rng.random(n) + 0.1


@pytest.mark.parametrize(
    "metric, options",
    [
        ("brier", {}),
        ("brier", {"weights": True}),
        ("log", {}),
        ("log", {"weights": True}),
        ("log", {"normalize": False}),
    ],
)
def test_label_indicator_q_zero_equals_sklearn(metric, options):
    """A multilabel or one-hot 2-D y_true is scikit-learn's loss at q = 0."""
    ours, theirs = {
        "brier": (expected_brier_score_loss, brier_score_loss),
        "log": (expected_log_loss, log_loss),
    }[metric]
    _, y, proba, weight = _indicator_case()
    kw = dict(options)
    if kw.pop("weights", False):
        kw["sample_weight"] = weight
    onehot = np.eye(3, dtype=int)[np.arange(30) % 3]
    onehot_proba = proba[:30, :3] / proba[:30, :3].sum(axis=1, keepdims=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # rows not summing to one
        for y_true, y_proba in [(y, proba), (onehot, onehot_proba)]:
            if "sample_weight" in kw:
                kw["sample_weight"] = weight[: len(y_true)]
            score = ours(y_true, y_proba, q=0.0, estimand="forward", **kw)
            expected = theirs(y_true, y_proba, **kw)
            assert score.nominal == pytest.approx(expected, rel=1e-14)
            assert score.expected == pytest.approx(expected, rel=1e-14)
            assert score.variance == 0.0
            assert score.n_samples == len(y_true)


@pytest.mark.parametrize("metric", ["brier", "log"])
def test_label_indicator_monte_carlo(metric):
    """Each entry flipped on its own with its row's q: moments and the truth
    estimate agree with a seeded simulation within 5 SE."""
    ours, theirs = {
        "brier": (expected_brier_score_loss, brier_score_loss),
        "log": (expected_log_loss, log_loss),
    }[metric]
    rng, y, proba, weight = _indicator_case(seed=1)
    q = rng.uniform(0.05, 0.2, size=y.shape[0])
    n_draws = 4000
    flips = rng.random((n_draws, *y.shape)) < q[None, :, None]
    observed = np.where(flips, 1 - y, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        draws = np.array([theirs(o, proba, sample_weight=weight) for o in observed])
        score = ours(y, proba, q=q, sample_weight=weight, estimand="forward")
        truths = np.array(
            [
                ours(o, proba, q=q, sample_weight=weight, estimand="truth").expected
                for o in observed[:400]
            ]
        )
        true_value = theirs(y, proba, sample_weight=weight)
    se = draws.std() / np.sqrt(n_draws)
    assert abs(score.expected - draws.mean()) < 5 * se
    # the variance of a sample variance: about var * sqrt(2/n) for near-normal sums
    assert score.variance == pytest.approx(draws.var(), rel=5 * np.sqrt(2 / n_draws))
    assert abs(truths.mean() - true_value) < 5 * truths.std() / np.sqrt(truths.size)


def test_label_indicator_errors():
    _, y, proba, _ = _indicator_case()
    with pytest.raises(ValueError, match="shape of the label-indicator"):
        expected_log_loss(y, proba[:, :3], q=0.1)
    with pytest.raises(ValueError, match="takes q"):
        expected_brier_score_loss(y, proba, transition_matrix=np.eye(2))
    with pytest.raises(ValueError, match="label-indicator matrix of 0 and 1"):
        expected_log_loss(2 * y, proba, q=0.1)


def test_two_label_indicator_and_numeric_classes_as_scikit_learn():
    """A 2-column multilabel y_true is halved as scikit-learn's Brier score; the
    positive class of numeric labels other than {0, 1} is the greater one."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, (20, 2))
    y[:2] = [[1, 1], [0, 0]]
    cases = [(y, rng.uniform(0, 1, (20, 2))), ([2, 5, 5, 2], [0.1, 0.8, 0.6, 0.3])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # rows not summing to one
        for y_true, proba in cases:
            score = expected_brier_score_loss(y_true, proba, q=0.0, estimand="forward")
            expected = brier_score_loss(y_true, proba)
            assert score.expected == pytest.approx(expected, rel=1e-14)


def test_transition_matrix_names_the_positive_class_missing_from_y_true():
    """y_true holds only the negative class: pos_label completes the pair."""
    p = np.array([0.1, 0.2, 0.3])
    matrix = [[0.9, 0.1], [0.2, 0.8]]
    score = expected_brier_score_loss(
        [0, 0, 0], p, transition_matrix=matrix, pos_label=1, estimand="forward"
    )
    closed_form = np.mean(0.9 * p**2 + 0.1 * (1.0 - p) ** 2)
    assert score.expected == pytest.approx(closed_form, rel=1e-14)
