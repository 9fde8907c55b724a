"""Exact intervals of the counting metrics, the Brier score and the log-loss."""

import itertools
import math
import pickle
import warnings

import numpy as np
import pytest
from _interval_coverage import (
    COUNT_METRICS,
    LOSS_METRICS,
    Q_SETTINGS,
    _count_values,
    _loss_values,
    classification_coverage,
)
from scipy import stats
from sklearn import metrics as skm

from sklearn_noisy import NoisyScore
from sklearn_noisy.metrics import (
    expected_accuracy_score,
    expected_brier_score_loss,
    expected_confusion_matrix,
    expected_log_loss,
    expected_precision_score,
)
from sklearn_noisy.metrics._engines.counts import distributions as cd
from sklearn_noisy.metrics._engines.counts.distributions import discrete_interval


def _reference_interval(values, probs, level):
    """The equal-tailed interval, written independently of the library."""
    atoms = {}
    for value, prob in zip(values, probs, strict=True):
        key = round(float(value), 10)
        atoms[key] = atoms.get(key, 0.0) + prob
    keys = sorted(atoms)
    mass = np.array([atoms[k] for k in keys])
    mass /= mass.sum()
    half = (1 - level) / 2
    low = next(i for i in range(len(keys)) if mass[: i + 1].sum() > half)
    high = next(i for i in range(len(keys)) if mass[i + 1 :].sum() <= half)
    return keys[low], keys[high], mass[low : high + 1].sum()


def test_discrete_interval_by_hand():
    low, high, content = discrete_interval(
        np.array([2.0, 0.0, 1.0]), np.array([0.08, 0.02, 0.9]), 0.95
    )
    # P(X < 1) = 0.02 <= 0.025 but P(X <= 1) > 0.025; P(X > 1) = 0.08 > 0.025.
    assert (low, high) == (1.0, 2.0)
    assert content == pytest.approx(0.98, abs=1e-15)
    # ties within 1e-12 are one atom
    low, high, content = discrete_interval(
        np.array([0.5, 0.5 + 1e-15, 1.0]), np.array([0.5, 0.48, 0.02]), 0.95
    )
    assert (low, high, content) == (0.5, 0.5, pytest.approx(0.98))


@pytest.mark.parametrize("q", [0.02, 0.1, 0.3])
@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.99])
def test_accuracy_interval_is_binomial_quantiles(q, level):
    """All predictions right, constant q: M·acc ~ Binomial(M, 1 - q)."""
    m = 37
    y = np.r_[np.zeros(20), np.ones(17)].astype(int)
    score = expected_accuracy_score(y, y, q=q, estimand="forward")
    interval = score.confidence_interval(level)
    half = (1 - level) / 2
    k_low, k_high = stats.binom.ppf([half, 1 - half], m, 1 - q)
    assert interval.method == "exact" and score.interval_method == "exact"
    assert interval.low == k_low / m and interval.high == k_high / m
    content = stats.binom.cdf(k_high, m, 1 - q) - stats.binom.cdf(k_low - 1, m, 1 - q)
    assert interval.content == pytest.approx(content, abs=1e-12)
    assert interval.content >= level


def _all_labellings(y_true, q):
    """Every observed labelling of binary ``y_true`` and its probability."""
    flips = np.array(list(itertools.product([0, 1], repeat=y_true.size)), dtype=bool)
    observed = np.where(flips, 1 - y_true, y_true)
    probs = np.prod(np.where(flips, q, 1 - q), axis=1)
    return observed, probs


def _checked(values, observed, metric, second, **kwargs):
    """``values`` after checking some of them against scikit-learn."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for row in range(0, observed.shape[0], max(1, observed.shape[0] // 16)):
            expected = metric(observed[row], second, **kwargs)
            assert abs(expected - values[row]) < 1e-12
    return values


def _enumerated(metric, y_true, y_pred, q):
    """Exact distribution of a metric by enumerating all labellings."""
    observed, probs = _all_labellings(y_true, q)
    values = _count_values(metric, observed, y_pred)
    return _checked(values, observed, COUNT_METRICS[metric][1], y_pred), probs


@pytest.mark.parametrize("metric", list(COUNT_METRICS))
def test_count_intervals_match_enumeration(metric):
    """Per-sample q, M = 9: every labelling enumerated through scikit-learn."""
    rng = np.random.default_rng(7)
    y_true = np.array([1, 1, 1, 0, 0, 0, 0, 1, 0])
    y_pred = np.array([1, 0, 1, 0, 0, 1, 1, 0, 0])
    q = rng.uniform(0.02, 0.4, y_true.size)
    values, probs = _enumerated(metric, y_true, y_pred, q)
    score = COUNT_METRICS[metric][0](y_true, y_pred, q=q, estimand="forward")
    for level in (0.8, 0.95):
        interval = score.confidence_interval(level)
        low, high, content = _reference_interval(values, probs, level)
        assert interval.method == "exact"
        assert interval.low == pytest.approx(low, abs=1e-9)
        assert interval.high == pytest.approx(high, abs=1e-9)
        assert interval.content == pytest.approx(content, abs=1e-12)


@pytest.mark.parametrize("metric", list(LOSS_METRICS))
def test_loss_intervals_match_enumeration(metric):
    rng = np.random.default_rng(8)
    y_true = np.array([1, 0, 0, 1, 1, 0, 1, 0, 1])
    proba = rng.uniform(0.05, 0.95, y_true.size)
    q = rng.uniform(0.0, 0.3, y_true.size)
    q[3] = 0.0  # an exact label: a fixed term
    observed, probs = _all_labellings(y_true, q)
    kwargs = {"labels": [0, 1]} if metric == "log_loss" else {}
    values = _loss_values(metric, observed, proba)
    values = _checked(values, observed, LOSS_METRICS[metric][1], proba, **kwargs)
    score = LOSS_METRICS[metric][0](y_true, proba, q=q, estimand="forward")
    interval = score.confidence_interval(0.9)
    low, high, content = _reference_interval(values, probs, 0.9)
    assert interval.method == "exact"
    assert interval.low == pytest.approx(low, abs=1e-9)
    assert interval.high == pytest.approx(high, abs=1e-9)
    assert interval.content == pytest.approx(content, abs=1e-12)


def test_weighted_loss_and_multiclass_limits():
    rng = np.random.default_rng(9)
    y = rng.integers(0, 2, 9)
    proba = rng.uniform(0.1, 0.9, 9)
    weight = rng.uniform(0.5, 2.0, 9)
    score = expected_brier_score_loss(
        y, proba, q=0.1, sample_weight=weight, estimand="forward"
    )
    # Σ w (o - p)² / W: enumerate
    observed, probs = _all_labellings(y, np.full(9, 0.1))
    values = ((observed - proba) ** 2) @ weight / weight.sum()
    values = _checked(
        values, observed, skm.brier_score_loss, proba, sample_weight=weight
    )
    low, high, _ = _reference_interval(values, probs, 0.95)
    assert score.confidence_interval() == pytest.approx((low, high), abs=1e-9)
    # 3 classes, 20 distinct samples: 3^20 atoms, above the limit: normal
    labels = rng.integers(0, 3, 20)
    proba3 = rng.dirichlet([1, 1, 1], 20)
    score = expected_log_loss(
        labels, proba3, q=0.1, labels=[0, 1, 2], estimand="forward"
    )
    assert score.interval_method == "normal"
    # identical samples share their atoms: 3 classes, 40 identical samples
    same = expected_log_loss(
        np.zeros(40, int),
        np.tile([0.5, 0.3, 0.2], (40, 1)),
        q=0.1,
        labels=[0, 1, 2],
        estimand="forward",
    )
    assert same.interval_method == "exact"
    assert same.confidence_interval().content >= 0.95


def test_large_or_weighted_problems_fall_back_to_normal(monkeypatch):
    rng = np.random.default_rng(10)
    y = rng.integers(0, 2, 50)
    weighted = expected_accuracy_score(
        y, y, q=0.1, sample_weight=rng.random(50) + 0.5, estimand="forward"
    )
    assert weighted.interval_method == "normal"
    assert weighted.confidence_interval().method == "normal"
    with pytest.raises(ValueError, match="exact distribution of accuracy"):
        weighted.confidence_interval(method="exact")
    # 300 distinct probabilities: more than the 64 kept as groups
    y = np.r_[np.zeros(150), np.ones(150)].astype(int)
    q = rng.uniform(0.01, 0.2, 300)
    assert (
        expected_accuracy_score(y, 1 - y, q=q, estimand="forward").interval_method
        == "exact"
    )
    monkeypatch.setattr(cd, "MAX_ACCURACY_SAMPLES", 200)
    assert (
        expected_accuracy_score(y, 1 - y, q=q, estimand="forward").interval_method
        == "normal"
    )
    assert (
        COUNT_METRICS["recall"][0](y, 1 - y, q=q, estimand="forward").interval_method
        == "exact"
    )
    monkeypatch.setattr(cd, "MAX_STORED_SAMPLES", 100)  # per count, TP or FN
    assert (
        COUNT_METRICS["recall"][0](y, 1 - y, q=q, estimand="forward").interval_method
        == "normal"
    )
    # a constant q is kept as two groups, whatever the size
    assert (
        expected_accuracy_score(y, y, q=0.1, estimand="forward").interval_method
        == "exact"
    )
    monkeypatch.setattr(cd, "MAX_GRID_CELLS", 10)
    recall = COUNT_METRICS["recall"][0](y, y, q=0.1, estimand="forward")
    assert recall.interval_method == "normal"


def test_normal_intervals_are_clipped_to_the_range():
    y = np.ones(20, dtype=int)
    score = expected_accuracy_score(y, y, q=0.01, labels=[0, 1], estimand="forward")
    normal = score.confidence_interval(method="normal")
    assert normal.high == 1.0 and normal.method == "normal"
    assert math.isnan(normal.content)
    # the unclipped normal upper end would be above 1
    assert score.expected + 1.96 * score.std > 1.0
    exact = score.confidence_interval()
    assert exact.high == 1.0 and exact.low == 0.95  # Binomial(20, 0.99)
    # a truth estimate at the bound gets Feldman and Cousins's interval, named
    truth = expected_accuracy_score(y, y, q=0.2, estimand="truth", labels=[0, 1])
    interval = truth.confidence_interval()
    assert interval.method == "unified" and interval.high == 1.0
    assert truth.interval_method == "normal"


def test_scores_with_a_distribution_pickle_compare_and_stay_small():
    rng = np.random.default_rng(11)
    y = rng.integers(0, 2, 30)
    score = expected_precision_score(
        y, 1 - y, q=rng.uniform(0.0, 0.3, 30), estimand="forward"
    )
    clone = pickle.loads(pickle.dumps(score))
    assert clone.confidence_interval() == score.confidence_interval()
    assert clone == score and hash(clone) == hash(score)
    derived = ("std", "sampling_std")
    plain = NoisyScore(**{k: v for k, v in score.to_dict().items() if k not in derived})
    assert plain == score  # the distribution does not enter comparisons
    assert "distribution" not in repr(score) and "distribution" not in score.to_dict()
    assert len(pickle.dumps(score)) < 2000


def test_default_coverage_small():
    """Seeded: the exact content is what a simulation measures, and >= 95 %."""
    n_draws = 4000
    for name, q in [("precision", 0.05), ("f1", 0.1), ("log_loss", "per-sample")]:
        interval, cover, below, _ = classification_coverage(name, q, n_draws=n_draws)
        se = math.sqrt(interval.content * (1 - interval.content) / n_draws)
        assert interval.content >= 0.95
        assert abs(cover - interval.content) < 5 * se + 1e-12, (name, cover)
        assert below <= 0.025 + 5 * math.sqrt(0.025 * 0.975 / n_draws)


@pytest.mark.slow
@pytest.mark.parametrize("q", Q_SETTINGS)
@pytest.mark.parametrize("name", [*COUNT_METRICS, *LOSS_METRICS])
def test_full_coverage(name, q):
    """The verification page's table: content >= 95 %, measured = content."""
    n_draws = 200_000
    interval, cover, _, _ = classification_coverage(name, q, n_draws=n_draws)
    se = math.sqrt(interval.content * (1 - interval.content) / n_draws)
    assert interval.method == "exact" and interval.content >= 0.95
    assert abs(cover - interval.content) < 5 * se
    low_bound, high_bound = (-1.0, 1.0) if name == "matthews_corrcoef" else (0.0, 1.0)
    if name in LOSS_METRICS:
        high_bound = math.inf
    assert low_bound <= interval.low <= interval.high <= high_bound


def test_confusion_matrix_cells_are_sums_of_binomials():
    y_true = np.array([0, 1, 1, 0, 2, 2, 1, 0, 0, 1, 2])
    y_pred = np.array([0, 1, 0, 0, 2, 1, 1, 2, 0, 1, 2])
    q = 0.25
    cm = expected_confusion_matrix(y_true, y_pred, q=q, estimand="forward")
    assert cm.interval_method == "exact"
    low, high = cm.confidence_interval(0.9)
    matrix = np.full((3, 3), q / 2) + np.eye(3) * (1 - q - q / 2)
    nominal = skm.confusion_matrix(y_true, y_pred)
    for j, k in itertools.product(range(3), repeat=2):
        pmf = np.ones(1)
        for r in range(3):
            pmf = np.convolve(
                pmf,
                stats.binom.pmf(
                    np.arange(nominal[r, k] + 1), nominal[r, k], matrix[r, j]
                ),
            )
        ref_low, ref_high, _ = _reference_interval(np.arange(pmf.size), pmf, 0.9)
        assert (low[j, k], high[j, k]) == (ref_low, ref_high)
    # per-sample q: normal, clipped to [0, column total]
    cm = expected_confusion_matrix(
        y_true, y_pred, q=np.linspace(0.05, 0.4, 11), estimand="forward"
    )
    assert cm.interval_method == "normal"
    low, high = cm.confidence_interval(0.99)
    assert np.all(low >= 0) and np.all(high <= nominal.sum(axis=0))
    with pytest.raises(ValueError, match="confidence_level"):
        cm.confidence_interval(1.5)
