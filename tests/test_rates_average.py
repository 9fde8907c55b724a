"""Specificity, NPV, FPR and FNR with the multiclass averages (one-vs-rest).

Zero noise equals the rates of scikit-learn's ``multilabel_confusion_matrix``
(with sample weights and ``labels``); the exact moments equal a full
enumeration of the labellings of tiny problems; the others agree with seeded
Monte Carlo within 5 standard errors; the truth estimand is unbiased where it
is exact.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import multilabel_confusion_matrix
from sklearn.model_selection import KFold, cross_validate

from sklearn_noisy.metrics import (
    expected_false_negative_rate,
    expected_false_positive_rate,
    expected_negative_predictive_value,
    expected_specificity_score,
    false_negative_rate,
    false_positive_rate,
    make_noisy_scorer,
    negative_predictive_value,
    specificity_score,
)

EXPECTED = {
    "specificity": expected_specificity_score,
    "npv": expected_negative_predictive_value,
    "fpr": expected_false_positive_rate,
    "fnr": expected_false_negative_rate,
}
NOMINAL = {
    "specificity": specificity_score,
    "npv": negative_predictive_value,
    "fpr": false_positive_rate,
    "fnr": false_negative_rate,
}
AVERAGES = [None, "micro", "macro", "weighted"]

# the nominal FNR (and the multilabel rates) call scikit-learn's recall and
# precision with zero_division="warn", which warn as scikit-learn does
pytestmark = pytest.mark.filterwarnings(
    "ignore::sklearn.exceptions.UndefinedMetricWarning"
)


def _counts(confusion):
    """One-vs-rest ``(tn, fp, fn, tp)`` of matrices ``(..., K, K)``, rows true."""
    tp = np.diagonal(confusion, axis1=-2, axis2=-1)
    fp = confusion.sum(-2) - tp
    fn = confusion.sum(-1) - tp
    tn = confusion.sum((-2, -1))[..., None] - tp - fp - fn
    return tn, fp, fn, tp


def _rate(name, tn, fp, fn, tp, average, zero=0.0):
    """The rate of one-vs-rest counts along the last axis (the definitions)."""
    if name in ("fpr", "fnr"):  # complements: an undefined rate is 1 − zero
        base = "specificity" if name == "fpr" else "recall"
        return 1.0 - _rate(base, tn, fp, fn, tp, average, zero)
    num, other = {
        "specificity": (tn, fp),
        "npv": (tn, fn),
        "recall": (tp, fn),
    }[name]
    if average == "micro":
        num, other = num.sum(-1), other.sum(-1)
    den = num + other
    with np.errstate(invalid="ignore", divide="ignore"):
        values = np.where(den > 0, num / np.where(den > 0, den, 1), zero)
    if average == "macro":
        return values.mean(-1)
    if average == "weighted":
        support = tp + fn
        return (values * support).sum(-1) / support.sum(-1)
    return values


def _mcm_rate(name, y, y_pred, average, weight=None, labels=None):
    mcm = multilabel_confusion_matrix(y, y_pred, sample_weight=weight, labels=labels)
    tn, fp, fn, tp = mcm[:, 0, 0], mcm[:, 0, 1], mcm[:, 1, 0], mcm[:, 1, 1]
    if name in ("specificity", "npv") and average in ("micro", None):
        # the library's own order of operations (scikit-learn's micro average)
        other = fp if name == "specificity" else fn
        if average == "micro":
            return tn.sum() / (tn.sum() + other.sum())
        return tn / (tn + other)
    return _rate(name, tn, fp, fn, tp, average)


def _data(m=60, k=3, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, m)
    y_pred = np.where(rng.random(m) < 0.7, y, rng.integers(0, k, m))
    return rng, y, y_pred


def _values(result):
    if isinstance(result, list):
        return np.array([s.expected for s in result]), np.array(
            [s.variance for s in result]
        )
    return result.expected, result.variance


# ----------------------------------------------------------------- zero noise
@pytest.mark.parametrize("name", list(EXPECTED))
@pytest.mark.parametrize("average", AVERAGES)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("labels", [None, [2, 0], [0, 1, 2, 3]])
def test_zero_noise_is_the_multilabel_confusion_matrix_rate(
    name, average, weighted, labels
):
    rng, y, y_pred = _data()
    weight = rng.uniform(0.5, 3.0, y.size) if weighted else None
    reference = _mcm_rate(name, y, y_pred, average, weight, labels)
    options = {"average": average, "sample_weight": weight, "labels": labels}
    result = EXPECTED[name](y, y_pred, q=0.0, **{"estimand": "forward", **options})
    nominal = NOMINAL[name](y, y_pred, **options)
    expected, variance = _values(result)
    if average is None:
        assert len(result) == len(reference)
        assert all(s.nominal == s.expected for s in result)
    else:
        assert result.nominal == result.expected
    np.testing.assert_array_equal(variance, 0.0)
    if name in ("specificity", "npv"):  # the same arithmetic: to the last bit
        np.testing.assert_array_equal(expected, reference)
        np.testing.assert_array_equal(nominal, reference)
    else:  # 1 − rate against FP / (FP + TN): round-off only
        np.testing.assert_allclose(expected, reference, rtol=0, atol=1e-15)
        np.testing.assert_allclose(nominal, reference, rtol=0, atol=1e-15)


def test_string_labels_and_transition_identity():
    _, y, y_pred = _data(k=4)
    names = np.array(["ant", "bee", "cat", "dog"])
    for average in AVERAGES:
        reference = _mcm_rate("specificity", y, y_pred, average)
        result = expected_specificity_score(
            names[y],
            names[y_pred],
            transition_matrix=np.eye(4),
            average=average,
            estimand="forward",
        )
        np.testing.assert_array_equal(_values(result)[0], reference)


# ------------------------------------------------------ exact: enumeration
def _enumerate(name, y_pred, probabilities, average, weight, zero):
    """E and Var over every labelling of a tiny problem."""
    m, k = probabilities.shape
    w = np.ones(m) if weight is None else weight
    labellings = np.array(list(itertools.product(range(k), repeat=m)))
    chance = np.prod(probabilities[np.arange(m), labellings], axis=1)
    confusion = np.zeros((len(labellings), k, k))
    for i in range(m):
        np.add.at(
            confusion, (np.arange(len(labellings)), labellings[:, i], y_pred[i]), w[i]
        )
    values = _rate(name, *_counts(confusion), average, zero)
    values = values.reshape(len(labellings), -1)
    mean = chance @ values
    return mean, chance @ (values - mean) ** 2


def _flip_rows(y, q, k):
    rows = np.repeat((np.asarray(q, float) / (k - 1))[:, None], k, axis=1)
    rows[np.arange(y.size), y] = 1.0 - np.asarray(q, float)
    return rows


@pytest.mark.parametrize("name", ["specificity", "npv"])
@pytest.mark.parametrize("average", AVERAGES)
@pytest.mark.parametrize("noise", ["per-sample", "matrix"])
@pytest.mark.parametrize("zero", [0.0, 1.0])
def test_exact_moments_equal_the_enumeration(name, average, noise, zero):
    rng = np.random.default_rng(5)
    k, m = 3, 6
    y = rng.integers(0, k, m)
    y_pred = np.array([0, 0, 0, 1, 1, 2]) if zero == 0.0 else np.zeros(m, int)
    if noise == "per-sample":
        q = rng.uniform(0.0, 0.5, m)
        rows, options = _flip_rows(y, q, k), {"q": q}
    else:
        matrix = np.array([[0.7, 0.2, 0.1], [0.25, 0.6, 0.15], [0.05, 0.35, 0.6]])
        rows, options = matrix[y], {"transition_matrix": matrix}
    mean, var = _enumerate(name, y_pred, rows, average, None, zero)
    result = EXPECTED[name](
        y,
        y_pred,
        average=average,
        labels=[0, 1, 2],
        zero_division=zero,
        **{"estimand": "forward", **options},
    )
    expected, variance = _values(result)
    np.testing.assert_allclose(expected, mean.squeeze(), rtol=0, atol=1e-13)
    methods = {s.method for s in result} if average is None else {result.method}
    if methods == {"exact"}:
        np.testing.assert_allclose(variance, var.squeeze(), rtol=0, atol=1e-14)
    else:
        assert methods == {"monte_carlo"}
        assert average in ("macro", "weighted")
        assert name == "specificity" or average == "weighted"


@pytest.mark.parametrize("average", AVERAGES)
def test_weighted_npv_is_exact(average):
    rng = np.random.default_rng(11)
    k, m = 3, 6
    y, y_pred = rng.integers(0, k, m), rng.integers(0, k, m)
    q, weight = rng.uniform(0.0, 0.5, m), rng.uniform(0.2, 3.0, m)
    mean, var = _enumerate("npv", y_pred, _flip_rows(y, q, k), average, weight, 0.0)
    result = expected_negative_predictive_value(
        y,
        y_pred,
        q=q,
        average=average,
        sample_weight=weight,
        labels=[0, 1, 2],
        estimand="forward",
    )
    expected, variance = _values(result)
    np.testing.assert_allclose(expected, mean.squeeze(), rtol=0, atol=1e-13)
    if average != "weighted":
        np.testing.assert_allclose(variance, var.squeeze(), rtol=0, atol=1e-14)


# ---------------------------------------------------------------- Monte Carlo
def _simulate(name, y, y_pred, rows, average, weight, n, rng):
    """``n`` values of the rate over labels drawn from ``rows`` (independent code)."""
    m, k = rows.shape
    cumulative = rows.cumsum(axis=1)
    w = np.ones(m) if weight is None else weight
    values = []
    for start in range(0, n, 2000):
        size = min(2000, n - start)
        u = rng.random((size, m, 1))
        z = np.minimum((u > cumulative).sum(axis=2), k - 1)
        flat = (np.arange(size)[:, None] * k + z) * k + y_pred
        confusion = np.bincount(
            flat.ravel(), np.broadcast_to(w, flat.shape).ravel(), size * k * k
        ).reshape(size, k, k)
        values.append(_rate(name, *_counts(confusion), average))
    return np.concatenate(values)


def _check_against_simulation(result, values, n_draws):
    expected, variance = _values(result)
    values = values.reshape(values.shape[0], -1)
    mean, var = values.mean(0), values.var(0, ddof=1)
    centred = values - mean
    se = np.sqrt(var / values.shape[0])
    se_var = np.sqrt((np.mean(centred**4, 0) - var**2) / values.shape[0])
    methods = (
        [s.method for s in result] if isinstance(result, list) else [result.method]
    )
    if "monte_carlo" in methods:  # the library's own draws add their error
        se = np.hypot(se, np.sqrt(var / n_draws))
        se_var = np.hypot(se_var, se_var * np.sqrt(values.shape[0] / n_draws))
    z_e = np.abs(np.squeeze(expected) - np.squeeze(mean)) / np.maximum(
        np.squeeze(se), 1e-300
    )
    z_v = np.abs(np.squeeze(variance) - np.squeeze(var)) / np.maximum(
        np.squeeze(se_var), 1e-300
    )
    assert np.all((z_e < 5) | (np.squeeze(se) == 0)), z_e
    assert np.all((z_v < 5) | (np.squeeze(se_var) == 0)), z_v


def _setting(m, k, noise, seed):
    rng, y, y_pred = _data(m, k, seed)
    if noise == "scalar":
        q = 0.25
        return rng, y, y_pred, _flip_rows(y, np.full(m, q), k), {"q": q}
    if noise == "per-sample":
        q = rng.uniform(0.0, 0.4, m)
        return rng, y, y_pred, _flip_rows(y, q, k), {"q": q}
    matrix = np.full((k, k), 0.1 / (k - 1))
    np.fill_diagonal(matrix, 0.9)
    matrix[0] = np.roll(np.linspace(0.1, 0.3, k), 0) / np.linspace(0.1, 0.3, k).sum()
    return rng, y, y_pred, matrix[y], {"transition_matrix": matrix}


def _monte_carlo_case(name, average, m, k, noise, weighted, n, seed=3):
    rng, y, y_pred, rows, options = _setting(m, k, noise, seed)
    weight = rng.uniform(0.5, 2.0, m) if weighted else None
    n_draws = 20_000
    result = EXPECTED[name](
        y, y_pred, average=average, sample_weight=weight, labels=list(range(k)),
        n_draws=n_draws, random_state=1, **{"estimand": "forward", **options},
    )  # fmt: skip
    values = _simulate(name, y, y_pred, rows, average, weight, n, rng)
    _check_against_simulation(result, values, n_draws)


@pytest.mark.parametrize("name", list(EXPECTED))
@pytest.mark.parametrize("average", ["micro", "macro", "weighted"])
@pytest.mark.parametrize(
    ("m", "k", "noise"),
    [(5, 3, "scalar"), (40, 4, "per-sample"), (30, 3, "matrix")],
)
def test_monte_carlo(name, average, m, k, noise):
    _monte_carlo_case(name, average, m, k, noise, False, 20_000)


@pytest.mark.parametrize("name", ["specificity", "npv"])
@pytest.mark.parametrize("average", [None, "macro", "weighted"])
def test_monte_carlo_sample_weight(name, average):
    _monte_carlo_case(name, average, 25, 3, "per-sample", True, 20_000)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(EXPECTED))
@pytest.mark.parametrize("average", [None, "micro", "macro", "weighted"])
@pytest.mark.parametrize(
    ("m", "k", "noise", "weighted"),
    [
        (5, 4, "per-sample", False),
        (300, 3, "matrix", True),
        (10_000, 4, "scalar", False),
        (10_000, 3, "per-sample", True),
    ],
)
def test_monte_carlo_slow(name, average, m, k, noise, weighted):
    _monte_carlo_case(name, average, m, k, noise, weighted, 4_000)


# -------------------------------------------------------------- properties
@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    k=st.integers(3, 4),
    average=st.sampled_from(AVERAGES),
    name=st.sampled_from(list(EXPECTED)),
)
def test_order_of_the_samples_does_not_matter(seed, k, average, name):
    rng, y, y_pred = _data(m=12, k=k, seed=seed)
    q = rng.uniform(0.0, 0.4, y.size)
    order = rng.permutation(y.size)
    options = {"average": average, "labels": list(range(k))}
    first = EXPECTED[name](y, y_pred, q=q, **{"estimand": "forward", **options})
    second = EXPECTED[name](
        y[order], y_pred[order], q=q[order], **{"estimand": "forward", **options}
    )
    (e1, v1), (e2, v2) = _values(first), _values(second)
    np.testing.assert_allclose(e1, e2, rtol=1e-12, atol=1e-14)
    if average in (None, "micro") or (name == "npv" and average == "macro"):
        np.testing.assert_allclose(v1, v2, rtol=1e-12, atol=1e-14)
    # a scalar q draws the same confusion matrices in any order
    third = EXPECTED[name](y, y_pred, q=0.2, **{"estimand": "forward", **options})
    fourth = EXPECTED[name](
        y[order], y_pred[order], q=0.2, **{"estimand": "forward", **options}
    )
    np.testing.assert_allclose(_values(third)[1], _values(fourth)[1], rtol=1e-12)


# ------------------------------------------------------------------ estimands
@pytest.mark.parametrize(
    ("name", "average"),
    [("specificity", "micro"), ("npv", "micro"), ("npv", "macro"), ("fpr", "micro")],
)
def test_truth_is_unbiased_where_exact(name, average):
    rng, y, y_pred = _data(m=50, k=3, seed=4)
    matrix = np.array([[0.8, 0.15, 0.05], [0.1, 0.8, 0.1], [0.1, 0.2, 0.7]])
    observed = _simulate("npv", y, y_pred, matrix[y], None, None, 1, rng)  # warm rng
    del observed
    cumulative = matrix[y].cumsum(axis=1)
    estimates, variances = [], []
    for _ in range(3000):
        z = np.minimum((rng.random((y.size, 1)) > cumulative).sum(1), 2)
        result = EXPECTED[name](
            z, y_pred, transition_matrix=matrix, average=average, estimand="truth",
            labels=[0, 1, 2],
        )  # fmt: skip
        assert result.method == "exact" and result.estimand == "truth"
        estimates.append(result.expected)
        variances.append(result.variance)
    estimates = np.array(estimates)
    truth = _mcm_rate(name, y, y_pred, average, labels=[0, 1, 2])
    se = estimates.std(ddof=1) / np.sqrt(estimates.size)
    assert abs(estimates.mean() - truth) < 5 * se
    # the variance estimate is unbiased for the spread of the estimate
    assert np.mean(variances) == pytest.approx(estimates.var(ddof=1), rel=0.1)


@pytest.mark.parametrize("name", list(EXPECTED))
@pytest.mark.parametrize("average", ["micro", "macro", "weighted"])
def test_estimands_run_and_remeasurement_is_nominal(name, average):
    _, y, y_pred = _data(m=80, k=3, seed=8)
    matrix = np.array([[0.8, 0.15, 0.05], [0.1, 0.8, 0.1], [0.1, 0.2, 0.7]])
    options = {"transition_matrix": matrix, "average": average, "labels": [0, 1, 2]}
    remeasured = EXPECTED[name](y, y_pred, estimand="remeasurement", **options)
    assert remeasured.expected == remeasured.nominal
    assert remeasured.variance > 0.0
    truth = EXPECTED[name](y, y_pred, estimand="truth", **options)
    assert truth.nominal == remeasured.nominal and truth.variance > 0.0
    assert truth.method == ("exact" if average == "micro" else truth.method)


# --------------------------------------------------------------------- errors
@pytest.mark.parametrize("name", list(EXPECTED))
def test_bad_average_names_average(name):
    _, y, y_pred = _data()
    with pytest.raises(ValueError, match="average must be one of"):
        EXPECTED[name](y, y_pred, q=0.1, average="mean", estimand="forward")
    with pytest.raises(ValueError, match="average must be one of"):
        NOMINAL[name](y, y_pred, average="mean")
    with pytest.raises(ValueError, match="average='samples' is meaningful only"):
        EXPECTED[name](y, y_pred, q=0.1, average="samples", estimand="forward")
    with pytest.raises(ValueError, match=r"average='binary'|average=None"):
        EXPECTED[name](
            y, y_pred, q=0.1, estimand="forward"
        )  # three classes, binary average


def test_other_errors():
    _, y, y_pred = _data()
    with pytest.raises(ValueError, match="method='delta' is available for average="):
        expected_specificity_score(
            y, y_pred, q=0.1, average="macro", method="delta", estimand="forward"
        )
    with pytest.raises(ValueError, match="average=None"):
        expected_negative_predictive_value(
            y, y_pred, q=0.1, average=None, estimand="truth"
        )
    with pytest.raises(ValueError, match="multilabel-indicator but average='binary'"):
        expected_specificity_score(
            np.eye(3, dtype=int), np.eye(3, dtype=int), q=0.1, estimand="forward"
        )


# ---------------------------------------------------------------------- scorer
def test_macro_scorer_in_cross_validate():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(120, 2))
    y = np.digitize(X[:, 0] + 0.5 * rng.normal(size=120), [-0.5, 0.5])
    for metric in ("specificity", "negative_predictive_value"):
        scorer = make_noisy_scorer(metric, q=0.1, average="macro", estimand="forward")
        scores = cross_validate(
            LogisticRegression(), X, y, cv=KFold(3), scoring=scorer
        )["test_score"]
        assert scores.shape == (3,) and np.all((scores > 0.5) & (scores < 1.0))


def test_macro_scorer_in_the_cross_validator_and_a_search():
    from sklearn.model_selection import GridSearchCV, cross_val_predict

    from sklearn_noisy import NoisyCrossValidator

    rng = np.random.default_rng(2)
    X = rng.normal(size=(120, 2))
    y = np.digitize(X[:, 0] + 0.5 * rng.normal(size=120), [-0.5, 0.5])
    scoring = {
        "spec": make_noisy_scorer("specificity", average="macro", estimand="forward"),
        "npv": make_noisy_scorer(
            "negative_predictive_value", average="weighted", estimand="forward"
        ),
    }
    cv = NoisyCrossValidator(LogisticRegression(), scoring=scoring, cv=KFold(3))
    cv.fit(X, y, q=0.1)
    predicted = cross_val_predict(LogisticRegression(), X, y, cv=KFold(3))
    for key, function, average in (
        ("spec", expected_specificity_score, "macro"),
        ("npv", expected_negative_predictive_value, "weighted"),
    ):
        direct = function(y, predicted, q=0.1, average=average)
        assert cv.pooled_[key].expected == pytest.approx(direct.expected, rel=1e-12)
        assert cv.pooled_[key].variance == pytest.approx(direct.variance, rel=1e-12)
    search = GridSearchCV(
        LogisticRegression(),
        {"C": [0.1, 1.0]},
        scoring=make_noisy_scorer(
            "specificity", q=0.1, average="macro", estimand="forward"
        ),
        cv=KFold(3),
    ).fit(X, y)
    assert 0.5 < search.best_score_ < 1.0


# ------------------------------------------------------------ cross-checks
def test_two_classes_macro_specificity_is_balanced_accuracy():
    from sklearn_noisy.metrics import (
        expected_accuracy_score,
        expected_balanced_accuracy_score,
    )

    rng = np.random.default_rng(9)
    y = rng.integers(0, 2, 40)
    y_pred = np.where(rng.random(40) < 0.8, y, 1 - y)
    q = rng.uniform(0.0, 0.3, 40)
    macro = expected_specificity_score(
        y, y_pred, q=q, average="macro", estimand="forward"
    )
    balanced = expected_balanced_accuracy_score(y, y_pred, q=q, estimand="forward")
    assert macro.expected == pytest.approx(balanced.expected, rel=1e-12)
    assert macro.nominal == pytest.approx(balanced.nominal, rel=1e-15)
    micro = expected_specificity_score(
        y, y_pred, q=q, average="micro", estimand="forward"
    )
    accuracy = expected_accuracy_score(y, y_pred, q=q, estimand="forward")
    assert micro.expected == pytest.approx(accuracy.expected, rel=1e-12)
    assert micro.variance == pytest.approx(accuracy.variance, rel=1e-12)


def test_nan_zero_division_leaves_out_undefined_classes():
    rng = np.random.default_rng(12)
    y = rng.integers(0, 3, 30)
    y_pred = np.zeros(30, int)  # NPV_0 is 0/0 in every labelling
    options = {"q": 0.2, "labels": [0, 1, 2], "zero_division": np.nan}
    per_class = expected_negative_predictive_value(
        y,
        y_pred,
        average=None,
        **{"estimand": "forward", **{"estimand": "forward", **options}},
    )
    assert np.isnan(per_class[0].expected) and np.isnan(per_class[0].nominal)
    macro = expected_negative_predictive_value(
        y,
        y_pred,
        average="macro",
        **{"estimand": "forward", **{"estimand": "forward", **options}},
    )
    assert macro.method == "exact"
    # (NPV_1 + NPV_2)/2 = (M + #(observed 0)) / (2M): closed form
    keep = np.where(y == 0, 0.8, 0.1)  # P(observed 0)
    m = y.size
    assert macro.expected == pytest.approx((m + keep.sum()) / (2 * m), rel=1e-14)
    assert macro.variance == pytest.approx(
        np.sum(keep * (1 - keep)) / (4 * m * m), rel=1e-12
    )
    assert macro.nominal == pytest.approx((m + np.sum(y == 0)) / (2 * m), rel=1e-15)


# ------------------------------------------------------------------ multilabel
def _multilabel_data(seed=6, n=40, n_labels=3):
    rng = np.random.default_rng(seed)
    y = (rng.random((n, n_labels)) < 0.4).astype(int)
    y_pred = np.where(rng.random((n, n_labels)) < 0.8, y, 1 - y)
    return rng, y, y_pred


def _multilabel_rate(name, y, y_pred, average, weight=None):
    """The rate from scikit-learn's multilabel confusion matrices."""
    mcm = multilabel_confusion_matrix(
        y, y_pred, sample_weight=weight, samplewise=average == "samples"
    )
    tn, fp, fn, tp = mcm[:, 0, 0], mcm[:, 0, 1], mcm[:, 1, 0], mcm[:, 1, 1]
    if average == "samples":
        values = _rate(name, tn, fp, fn, tp, None)
        return np.average(values, weights=weight)
    return _rate(name, tn, fp, fn, tp, average)


@pytest.mark.parametrize("name", list(EXPECTED))
@pytest.mark.parametrize("average", [None, "micro", "macro", "samples"])
@pytest.mark.parametrize("weighted", [False, True])
def test_multilabel_zero_noise(name, average, weighted):
    rng, y, y_pred = _multilabel_data()
    weight = rng.uniform(0.5, 2.0, y.shape[0]) if weighted else None
    reference = _multilabel_rate(name, y, y_pred, average, weight)
    result = EXPECTED[name](
        y, y_pred, q=0.0, average=average, sample_weight=weight, estimand="forward"
    )
    nominal = NOMINAL[name](y, y_pred, average=average, sample_weight=weight)
    np.testing.assert_allclose(_values(result)[0], reference, rtol=1e-14)
    np.testing.assert_allclose(nominal, reference, rtol=1e-14)


@pytest.mark.parametrize("name", list(EXPECTED))
@pytest.mark.parametrize("average", [None, "micro", "macro", "samples"])
def test_multilabel_monte_carlo(name, average):
    rng, y, y_pred = _multilabel_data(n=12)
    q = rng.uniform(0.0, 0.3, y.shape)  # one per entry
    result = EXPECTED[name](y, y_pred, q=q, average=average, estimand="forward")
    n = 20_000
    observed = np.where(rng.random((n, *y.shape)) < q, 1 - y, y)
    tn = ((observed == 0) & (y_pred == 0)).astype(float)
    fp = ((observed == 0) & (y_pred == 1)).astype(float)
    fn = ((observed == 1) & (y_pred == 0)).astype(float)
    tp = ((observed == 1) & (y_pred == 1)).astype(float)
    if average == "samples":  # per sample over its labels, then the mean
        counts = (a.sum(-1) for a in (tn, fp, fn, tp))
        values = _rate(name, *counts, None).mean(-1)
    else:
        counts = (a.sum(-2) for a in (tn, fp, fn, tp))
        values = _rate(name, *counts, average)
    methods = [s.method for s in result] if average is None else [result.method]
    assert set(methods) == {"exact"}
    _check_against_simulation(result, values, 1)


def test_multilabel_transition_matrix_is_swapped_with_the_entries():
    _, y, y_pred = _multilabel_data()
    matrix = np.array([[0.9, 0.1], [0.3, 0.7]])  # P(0 -> 1) = 0.1, P(1 -> 0) = 0.3
    q = np.where(y == 1, 0.3, 0.1)
    for name in ("specificity", "npv"):
        for average in (None, "micro", "macro", "samples"):
            by_matrix = EXPECTED[name](
                y, y_pred, transition_matrix=matrix, average=average, estimand="forward"
            )
            by_q = EXPECTED[name](y, y_pred, q=q, average=average, estimand="forward")
            np.testing.assert_allclose(
                _values(by_matrix), _values(by_q), rtol=1e-12, atol=1e-15
            )


def test_multilabel_weighted_is_refused_but_fnr():
    _, y, y_pred = _multilabel_data()
    for name in ("specificity", "npv", "fpr"):
        with pytest.raises(ValueError, match="average='weighted' is not offered"):
            EXPECTED[name](y, y_pred, q=0.1, average="weighted", estimand="forward")
    result = expected_false_negative_rate(
        y, y_pred, q=0.0, average="weighted", estimand="forward"
    )
    assert result.expected == pytest.approx(
        _multilabel_rate("fnr", y, y_pred, "weighted")
    )


@pytest.mark.parametrize("metric", ["specificity", "negative_predictive_value"])
@pytest.mark.parametrize("average", ["micro", "macro", "weighted"])
def test_rate_gradient_is_the_derivative(metric, average):
    from sklearn_noisy.metrics._definitions.counts import COUNT_METRICS
    from sklearn_noisy.metrics._engines.counts.multiclass import rate_of_counts

    rate = functools.partial(
        COUNT_METRICS[metric].gradient, average=average, zero_division=0.0
    )
    rng = np.random.default_rng(4)
    counts = rng.integers(1, 20, (4, 4)).astype(float)
    value, gradient = rate(counts)
    tn, fp, fn, tp = _counts(counts)
    reference = rate_of_counts(metric, tn, fp, fn, tp + fn, average=average, zero=0.0)
    assert value == pytest.approx(reference, rel=1e-14)
    step = 1e-6
    for a, b in itertools.product(range(4), repeat=2):
        moved = [counts.copy(), counts.copy()]
        moved[0][a, b] += step
        moved[1][a, b] -= step
        up, down = (rate(c)[0] for c in moved)
        assert gradient[a, b] == pytest.approx((up - down) / (2 * step), abs=1e-8)


def test_nominal_rate_of_one_matrix_is_a_float():
    # Averaged rates of the labels as given are Python floats, as scikit-learn's
    # recall_score returns; per-class (average=None) an array.
    from sklearn_noisy.metrics import (
        false_positive_rate,
        negative_predictive_value,
        specificity_score,
    )

    for rate in (specificity_score, negative_predictive_value, false_positive_rate):
        for average in ("macro", "weighted", "micro"):
            value = rate([0, 1, 2, 2], [0, 2, 2, 1], average=average)
            assert type(value) is float, (rate.__name__, average, type(value))
        assert rate([0, 1, 2, 2], [0, 2, 2, 1], average=None).shape == (3,)
