"""expected_roc_auc_score: exact against enumeration, Monte Carlo, scikit-learn.

The exact moments are checked against a brute-force sum over all 2^M label
draws (M ≤ 10) to 1e-12, the delta method against the exact moments, both
against seeded Monte Carlo within 5 standard errors, and the truth estimand by
simulating the whole experiment (true classes, flips, the estimate against the
AUC on the true classes).
"""

from __future__ import annotations

import itertools
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from sklearn_noisy.metrics import expected_roc_auc_score
from sklearn_noisy.metrics._engines.roc_auc import (
    auc_moments_delta,
    auc_moments_exact,
    centered_ranks,
    tie_groups,
)


def _enumerate(p, scores):
    """Conditional mean and variance of the AUC over all 2^M draws, and P(defined).

    The AUC of each draw by the rank sum, itself checked against scikit-learn
    in ``test_rank_formula_of_the_monte_carlo_is_scikit_learns``.
    """
    draws = np.array(list(itertools.product([0, 1], repeat=p.size)), dtype=bool)
    n = draws.sum(axis=1)
    draws = draws[(n > 0) & (n < p.size)]
    weight = np.prod(np.where(draws, p, 1.0 - p), axis=1)
    auc = _auc_of_draws(draws, centered_ranks(tie_groups(scores)))
    mass = weight.sum()
    mean = (weight * auc).sum() / mass
    return mean, (weight * auc * auc).sum() / mass - mean * mean, mass


def _auc_of_draws(z, ranks):
    """AUC of each row of ``z`` (bool draws) by the rank sum (rows with 2 classes)."""
    n = z.sum(axis=1).astype(float)
    m = z.shape[1]
    u = z @ ranks - n * (n - 1) / 2
    return u / (n * (m - n))


@pytest.mark.parametrize("seed", range(6))
def test_exact_moments_equal_enumeration(seed):
    rng = np.random.default_rng(seed)
    m = 9 if seed % 2 else 7
    p = rng.uniform(0.02, 0.98, m)
    p[0] = 1.0 if seed == 3 else p[0]  # a certain sample
    scores = rng.integers(0, 4, m).astype(float)  # many ties
    exact = auc_moments_exact(p, scores)
    mean, variance, mass = _enumerate(p, scores)
    assert exact.mean == pytest.approx(mean, abs=1e-13)
    assert exact.variance == pytest.approx(variance, abs=1e-13)
    assert exact.p_defined == pytest.approx(mass, abs=1e-14)


def test_rank_formula_of_the_monte_carlo_is_scikit_learns():
    rng = np.random.default_rng(7)
    scores = np.round(rng.normal(size=40), 1)
    ranks = centered_ranks(tie_groups(scores))
    z = rng.random((20, 40)) < 0.4
    expected = [roc_auc_score(row, scores) for row in z]
    np.testing.assert_allclose(_auc_of_draws(z, ranks), expected, rtol=1e-14)


@pytest.mark.parametrize(("m", "q"), [(12, 0.2), (200, "per-sample"), (2000, 0.05)])
def test_forward_moments_agree_with_monte_carlo(m, q):
    rng = np.random.default_rng(m)
    y = rng.integers(0, 2, m)
    scores = np.round(y + rng.normal(size=m), 2)
    q = rng.uniform(0.0, 0.4, m) if q == "per-sample" else q
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        result = expected_roc_auc_score(y, scores, q=q, estimand="forward")
    p = np.where(y == 1, 1.0 - np.asarray(q), np.asarray(q))
    draws = rng.random((20_000, m)) < p
    n = draws.sum(axis=1)
    draws = draws[(n > 0) & (n < m)]
    auc = _auc_of_draws(draws, centered_ranks(tie_groups(scores)))
    se_mean = auc.std() / np.sqrt(auc.size)
    assert abs(result.expected - auc.mean()) < 5 * se_mean
    # standard error of a sample variance: sqrt((m4 - s^4) / n)
    centred = auc - auc.mean()
    se_var = np.sqrt((np.mean(centred**4) - auc.var() ** 2) / auc.size)
    assert abs(result.variance - auc.var()) < 5 * se_var
    assert result.method == "exact"


@pytest.mark.parametrize(("m", "q"), [(300, 0.1), (1500, 0.3)])
def test_delta_method_is_close_to_exact(m, q):
    rng = np.random.default_rng(m)
    y = rng.integers(0, 2, m)
    scores = rng.normal(size=m) + y
    p = np.where(y == 1, 1.0 - q, q)
    exact, delta = auc_moments_exact(p, scores), auc_moments_delta(p, scores)
    sd = np.sqrt(exact.variance)
    assert abs(delta.mean - exact.mean) < 1e-3 * sd
    assert delta.variance == pytest.approx(exact.variance, rel=10.0 / m)


def test_auto_switches_to_delta_for_large_samples():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 20_000)
    scores = rng.normal(size=y.size) + y
    result = expected_roc_auc_score(y, scores, q=0.2, estimand="forward")
    assert result.method == "delta"
    small = expected_roc_auc_score(y[:500], scores[:500], q=0.2, estimand="forward")
    assert small.method == "exact"
    forced = expected_roc_auc_score(
        y[:500], scores[:500], q=0.2, method="delta", estimand="forward"
    )
    assert forced.method == "delta"
    assert forced.expected == pytest.approx(small.expected, abs=1e-3 * small.std)


@pytest.mark.parametrize(
    "convert",
    [list, np.asarray, pd.Series, lambda v: np.asarray(v, dtype=np.float32)],
)
def test_zero_noise_is_scikit_learn(convert):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 50)
    scores = np.round(rng.normal(size=50) + y, 1)
    result = expected_roc_auc_score(
        convert(y), convert(scores), q=0.0, estimand="forward"
    )
    assert result.expected == roc_auc_score(convert(y), convert(scores))
    assert result.nominal == result.expected and result.variance == 0.0
    labels = np.where(y == 1, "sick", "healthy")
    result = expected_roc_auc_score(labels, scores, q=0.0, estimand="forward")
    assert result.expected == roc_auc_score(labels, scores)
    matrix = expected_roc_auc_score(
        y, scores, transition_matrix=np.eye(2), estimand="forward"
    )
    assert matrix.expected == result.expected


def test_transition_matrix_equals_the_flip_probabilities_it_encodes():
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 60)
    scores = rng.normal(size=60) + y
    matrix = [[0.9, 0.1], [0.25, 0.75]]
    q = np.where(y == 1, 0.25, 0.1)
    a = expected_roc_auc_score(y, scores, transition_matrix=matrix, estimand="forward")
    b = expected_roc_auc_score(y, scores, q=q, estimand="forward")
    assert a.expected == pytest.approx(b.expected, rel=1e-13)
    assert a.variance == pytest.approx(b.variance, rel=1e-12)
    # the classes named by labels: the matrix rows follow [negative, positive]
    names = np.where(y == 1, "b", "a")
    c = expected_roc_auc_score(
        names, scores, transition_matrix=matrix, labels=["a", "b"], estimand="forward"
    )
    assert c.expected == pytest.approx(a.expected, rel=1e-13)


def test_one_class_needs_labels_and_warns_when_undefined_often():
    y = [1, 1, 1, 1]
    scores = [0.1, 0.5, 0.7, 0.9]
    with pytest.raises(ValueError, match="Only one class present"):
        expected_roc_auc_score(y, scores, q=0.1, estimand="forward")
    with pytest.warns(UserWarning, match="one class is missing in"):
        result = expected_roc_auc_score(
            y, scores, q=0.1, labels=[0, 1], estimand="forward"
        )
    p = np.full(4, 0.9)
    mean, variance, _ = _enumerate(p, np.asarray(scores))
    assert result.expected == pytest.approx(mean, abs=1e-13)
    assert result.variance == pytest.approx(variance, abs=1e-13)
    assert np.isnan(result.nominal)
    with pytest.raises(ValueError, match="Only one class present"):
        expected_roc_auc_score(y, scores, q=0.0, labels=[0, 1], estimand="forward")


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"y_true": [0, 1, 2], "y_score": [0.1, 0.2, 0.3]}, ValueError, "binary"),
        ({"y_score": [[0.1, 0.9]] * 4}, ValueError, "y_score must be 1-D"),
        ({"y_score": [0.1, 0.2]}, ValueError, "same number of samples"),
        ({"y_score": [0.1, np.nan, 0.3, 0.4]}, ValueError, "y_score"),
        ({"method": "fast"}, ValueError, "method must be one of"),
        ({"estimand": "remeasurement"}, ValueError, "estimand"),
        ({"q": None}, TypeError, "Pass the label noise"),
        ({"q": 1.5}, ValueError, "q"),
        ({"labels": [0, 1, 2]}, ValueError, "labels must list the two classes"),
    ],
)
def test_bad_input(kwargs, error, match):
    arguments = {"y_true": [0, 1, 0, 1], "y_score": [0.1, 0.2, 0.3, 0.4], "q": 0.1}
    arguments.update(kwargs)
    y_true, y_score = arguments.pop("y_true"), arguments.pop("y_score")
    with pytest.raises(error, match=match):
        expected_roc_auc_score(y_true, y_score, **{"estimand": "forward", **arguments})


def test_inputs_are_not_written_and_the_result_pickles():
    y = np.array([0, 1, 0, 1, 1, 0, 1, 0])
    scores = np.array([0.2, 0.8, 0.4, 0.3, 0.9, 0.1, 0.7, 0.5])
    q = np.full(8, 0.1)
    for array in (y, scores, q):
        array.setflags(write=False)
    result = expected_roc_auc_score(y, scores, q=q, estimand="forward")
    assert pickle.loads(pickle.dumps(result)) == result


@given(
    st.lists(st.integers(0, 5), min_size=4, max_size=9),
    st.floats(0.01, 0.45),
    st.randoms(use_true_random=False),
)
def test_invariant_to_order_and_to_monotone_transforms(scores, q, random):
    scores = np.asarray(scores, dtype=float)
    y = np.array([i % 2 for i in range(scores.size)])
    order = list(range(scores.size))
    random.shuffle(order)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        base = expected_roc_auc_score(y, scores, q=q, estimand="forward")
        shuffled = expected_roc_auc_score(
            y[order], scores[order], q=q, estimand="forward"
        )
        monotone = expected_roc_auc_score(
            y, np.exp(scores) * 3.0 - 7.0, q=q, estimand="forward"
        )
    for other in (shuffled, monotone):
        assert other.expected == pytest.approx(base.expected, abs=1e-13)
        assert other.variance == pytest.approx(base.variance, abs=1e-13)


@given(st.floats(1e-6, 0.02))
def test_small_flip_probability_tends_to_the_nominal(q):
    y = np.array([0, 1, 0, 1, 1, 0, 1, 0, 1, 0])
    scores = np.array([0.2, 0.8, 0.4, 0.3, 0.9, 0.1, 0.7, 0.5, 0.6, 0.35])
    result = expected_roc_auc_score(y, scores, q=q, estimand="forward")
    # a single flip moves the AUC by at most 1/min(n+, n-) + ...: linear in q
    assert abs(result.expected - result.nominal) <= 10 * q * 2
    assert result.variance <= 10 * q


def _truth_experiment(m, replicates, seed):
    """Estimates, reported SDs and the true AUCs over simulated experiments."""
    rng = np.random.default_rng(seed)
    estimates, sds, targets = [], [], []
    for _ in range(replicates):
        truth = rng.integers(0, 2, m)
        scores = truth + rng.normal(scale=1.2, size=m)
        q = rng.uniform(0.0, 0.3, m)
        observed = np.where(rng.random(m) < q, 1 - truth, truth)
        result = expected_roc_auc_score(observed, scores, q=q, estimand="truth")
        estimates.append(result.expected)
        sds.append(result.std)
        targets.append(roc_auc_score(truth, scores))
    return np.array(estimates), np.array(sds), np.array(targets)


def _check_truth(m, replicates, seed, coverage_range):
    estimates, sds, targets = _truth_experiment(m, replicates, seed)
    errors = estimates - targets
    assert abs(errors.mean()) < 0.1 * errors.std()
    assert np.mean(sds) == pytest.approx(errors.std(), rel=0.15)
    covered = np.mean(np.abs(errors) <= 1.959964 * sds)
    assert coverage_range[0] <= covered <= coverage_range[1]
    return errors.mean() / errors.std(), np.mean(sds) / errors.std(), covered


def test_truth_estimand_end_to_end_small():
    _check_truth(m=200, replicates=300, seed=11, coverage_range=(0.91, 0.98))


@pytest.mark.slow
def test_truth_estimand_end_to_end_full():
    _check_truth(m=300, replicates=2000, seed=12, coverage_range=(0.93, 0.97))


# --------------------------------------------------------------------------- #
# scikit-learn's options: average, sample_weight, max_fpr, multi_class, labels
# --------------------------------------------------------------------------- #
_ONE_HOT = np.eye(3)[[0, 1, 2, 0]]


def _nominals(result):
    if isinstance(result, list):
        return np.array([_nominals(item) for item in result])
    assert result.variance == 0.0 and result.method == "exact"
    assert result.expected == result.nominal or np.isnan(result.nominal)
    return result.nominal


def _both(function, *args, **kwargs):
    """scikit-learn's and our q=0 value, or the exceptions they raise."""
    values = []
    for call in (roc_auc_score, function):
        extra = {"q": 0.0, "estimand": "forward"} if call is function else {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                value = call(*args, **kwargs, **extra)
            except Exception as exc:  # compared below, type and message
                value = (type(exc), str(exc))
        ours = call is function and not isinstance(value, tuple)
        values.append(_nominals(value) if ours else value)
    return values


@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from(["micro", "macro", "samples", "weighted", None]),
    st.booleans(),
    st.one_of(st.none(), st.sampled_from([0.1, 0.5, 1.0])),
)
def test_multilabel_zero_noise_is_scikit_learn(seed, average, weighted, max_fpr):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, (25, 4))
    scores = np.round(rng.random((25, 4)) + 0.3 * y, 1)
    weight = rng.integers(0, 4, 25) * 0.5 if weighted else None
    reference, value = _both(
        expected_roc_auc_score,
        y,
        scores,
        average=average,
        sample_weight=weight,
        max_fpr=max_fpr,
    )
    if isinstance(reference, tuple):  # the same exception
        assert value == reference
    else:
        np.testing.assert_array_equal(value, reference)


@given(
    st.integers(0, 2**32 - 1),
    st.booleans(),
    st.one_of(st.none(), st.floats(0.01, 1.0)),
)
def test_binary_options_at_zero_noise_are_scikit_learn(seed, weighted, max_fpr):
    rng = np.random.default_rng(seed)
    y = np.r_[0, 1, rng.integers(0, 2, 28)]
    scores = np.round(rng.random(30) + 0.3 * y, 1)
    weight = rng.random(30) if weighted else None
    reference, value = _both(
        expected_roc_auc_score, y, scores, sample_weight=weight, max_fpr=max_fpr
    )
    assert value == reference


@pytest.mark.parametrize("multi_class", ["ovr", "ovo"])
@pytest.mark.parametrize("average", ["macro", "weighted", None])
@pytest.mark.parametrize("options", [{}, {"labels": [0, 1, 2]}, {"weighted": True}])
def test_multiclass_zero_noise_is_scikit_learn(multi_class, average, options):
    rng = np.random.default_rng(4)
    y = rng.integers(0, 3, 50)
    proba = rng.dirichlet([1.0, 1.0, 1.0], 50) + np.eye(3)[y]
    proba /= proba.sum(axis=1, keepdims=True)
    if options.pop("weighted", False):
        options["sample_weight"] = rng.random(50)
    reference, value = _both(
        expected_roc_auc_score,
        y,
        proba,
        multi_class=multi_class,
        average=average,
        **options,
    )
    if isinstance(reference, tuple):
        assert value == reference
    else:
        np.testing.assert_array_equal(value, reference)


@pytest.mark.parametrize(
    ("y_true", "y_score", "options"),
    [
        ([0, 1, 1, 0], [0.1, 0.8, 0.6, 0.3], {"max_fpr": 0.0}),
        ([0, 1, 1, 0], [0.1, 0.8, 0.6, 0.3], {"average": "binary"}),
        ([0, 1, 1, 0], [0.1, 0.8, 0.6, 0.3], {"multi_class": "all"}),
        ([0, 1, 2, 0], _ONE_HOT, {}),
        ([0, 1, 2, 0], _ONE_HOT, {"multi_class": "ovr", "max_fpr": 0.5}),
        (
            [0, 1, 2, 0],
            _ONE_HOT,
            {"multi_class": "ovo", "sample_weight": [1, 2, 1, 1]},
        ),
        (
            [0, 1, 2, 0],
            _ONE_HOT,
            {"multi_class": "ovr", "labels": [0, 2, 1]},
        ),
        (
            [[0, 1], [1, 0], [1, 1]],
            [[0.2, 0.6], [0.7, 0.1], [0.5, 0.5]],
            {"sample_weight": [1, 2]},
        ),
    ],
)
def test_option_errors_are_scikit_learns(y_true, y_score, options):
    reference, value = _both(expected_roc_auc_score, y_true, y_score, **options)
    assert isinstance(reference, tuple) and value == reference


def test_multilabel_averages_under_noise_agree_with_monte_carlo():
    rng = np.random.default_rng(21)
    y = rng.integers(0, 2, (60, 3))
    scores = np.round(y + rng.normal(size=y.shape), 2)
    q = rng.uniform(0.0, 0.3, y.shape)
    draws = np.where(rng.random((20_000, *y.shape)) < q, 1 - y, y).astype(bool)
    positives = draws.sum(axis=1)
    auc = np.stack(
        [_auc_of_draws(draws[:, :, k], centered_ranks(tie_groups(scores[:, k])))
         for k in range(3)],
        axis=1,
    )  # fmt: skip
    assert np.all((positives > 0) & (positives < 60))  # every draw is defined
    weights = {"macro": np.ones_like(positives), "weighted": positives}
    for average, weight in weights.items():
        value = (auc * weight).sum(axis=1) / weight.sum(axis=1)
        result = expected_roc_auc_score(
            y,
            scores,
            q=q,
            average=average,
            n_draws=500,
            random_state=1,
            estimand="forward",
        )
        se = np.sqrt(value.var() / value.size + result.variance / 500)
        assert abs(result.expected - value.mean()) < 5 * se
        assert result.variance == pytest.approx(value.var(), rel=0.2)
        assert result.method == ("exact" if average == "macro" else "monte_carlo")
    # each label of average=None is that label's binary problem
    per_label = expected_roc_auc_score(y, scores, q=q, average=None, estimand="forward")
    for k, score in enumerate(per_label):
        alone = expected_roc_auc_score(
            y[:, k], scores[:, k], q=q[:, k], estimand="forward"
        )
        assert (score.expected, score.variance) == (alone.expected, alone.variance)


def test_noise_with_weights_and_partial_auc():
    rng = np.random.default_rng(8)
    y = rng.integers(0, 2, 80)
    scores = y + rng.normal(size=80)
    plain = expected_roc_auc_score(y, scores, q=0.1, estimand="forward")
    equal = expected_roc_auc_score(
        y, scores, q=0.1, sample_weight=np.full(80, 3.0), estimand="forward"
    )
    assert (equal.expected, equal.variance) == (plain.expected, plain.variance)
    weight = rng.random(80)
    mc = expected_roc_auc_score(
        y, scores, q=0.1, sample_weight=weight, n_draws=300, estimand="forward"
    )
    assert mc.method == "monte_carlo" and mc.n_draws == 300
    assert mc.nominal == roc_auc_score(y, scores, sample_weight=weight)
    again = expected_roc_auc_score(
        y, scores, q=0.1, sample_weight=weight, n_draws=300, estimand="forward"
    )
    assert again.expected == mc.expected  # seeded by random_state=0
    partial_auc = expected_roc_auc_score(
        y, scores, q=0.1, max_fpr=0.2, n_draws=300, estimand="forward"
    )
    assert partial_auc.method == "monte_carlo"
    assert partial_auc.nominal == roc_auc_score(y, scores, max_fpr=0.2)
    with pytest.raises(ValueError, match="estimand='truth' is supported without"):
        expected_roc_auc_score(y, scores, q=0.1, max_fpr=0.2, estimand="truth")
    with pytest.raises(ValueError, match="binary labels only"):
        expected_roc_auc_score(y[:, None] * [1, 1], scores[:, None] * [1, 1],
                               q=0.1, estimand="truth")  # fmt: skip


def test_multiclass_under_noise_agrees_with_monte_carlo():
    """Uniform flips to the other classes, drawn here: each class's one-vs-rest
    AUC within 5 SE; an identity transition matrix is scikit-learn's AUC."""
    rng = np.random.default_rng(5)
    y = rng.integers(0, 3, 40)
    proba = rng.dirichlet(np.ones(3), 40) + np.eye(3)[y]
    proba /= proba.sum(axis=1, keepdims=True)
    shift = rng.integers(1, 3, (4000, 40))
    observed = np.where(rng.random((4000, 40)) < 0.2, (y + shift) % 3, y)
    result = expected_roc_auc_score(
        y, proba, q=0.2, multi_class="ovr", average=None, n_draws=100,
        estimand="forward",
    )  # fmt: skip
    for k, score in enumerate(result):
        ranks = centered_ranks(tie_groups(proba[:, k]))
        draws = _auc_of_draws(observed == k, ranks)
        assert score.method == "monte_carlo"
        se = np.sqrt(draws.var() / draws.size + score.variance / 100)
        assert abs(score.expected - draws.mean()) < 5 * se
    exact = expected_roc_auc_score(
        y, proba, transition_matrix=np.eye(3), multi_class="ovr", estimand="forward"
    )
    assert exact.method == "exact"
    assert exact.expected == roc_auc_score(y, proba, multi_class="ovr")


def test_multilabel_micro_and_samples_are_their_binary_problems():
    rng = np.random.default_rng(21)
    y = rng.integers(0, 2, (30, 4))
    y[:, 0] = 1 - y[:, 1]  # every row holds both classes, as "samples" needs
    scores = np.round(y + rng.normal(size=y.shape), 2)
    q = rng.uniform(0.05, 0.3, y.shape)
    micro = expected_roc_auc_score(y, scores, q=q, average="micro", estimand="forward")
    flat = expected_roc_auc_score(
        y.ravel(), scores.ravel(), q=q.ravel(), estimand="forward"
    )
    assert (micro.expected, micro.variance) == (flat.expected, flat.variance)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a row misses a class often
        samples = expected_roc_auc_score(
            y, scores, q=q, average="samples", estimand="forward"
        )
        rows = [
            expected_roc_auc_score(y[i], scores[i], q=q[i], estimand="forward")
            for i in range(30)
        ]
    assert samples.expected == pytest.approx(np.mean([r.expected for r in rows]))
    assert samples.variance == pytest.approx(sum(r.variance for r in rows) / 900)


def test_truth_without_information_on_both_classes_is_nan():
    with pytest.warns(UserWarning, match="de-noised number of positive-negative"):
        score = expected_roc_auc_score(
            [1, 1, 1, 1], [0.1, 0.2, 0.3, 0.4], q=0.1, labels=[0, 1], estimand="truth"
        )
    assert np.isnan(score.expected) and np.isnan(score.variance)


def test_labels_that_never_hold_both_classes_raise():
    with pytest.raises(ValueError, match="Every draw of the labels has a single"):
        expected_roc_auc_score([0, 1], [0.1, 0.9], q=[0.0, 1.0], estimand="forward")
