"""Tests of the result object :class:`sklearn_noisy.NoisyScore`."""

import dataclasses
import json
import math
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats
from sklearn.metrics import accuracy_score

from sklearn_noisy import ConfidenceInterval, NoisyScore
from sklearn_noisy._noisy_score import METRIC_RANGES
from sklearn_noisy.metrics import (
    expected_accuracy_score,
    expected_mean_squared_error,
    expected_paired_difference,
    monte_carlo_score,
)


def _score(**overrides):
    fields = dict(
        metric="accuracy",
        expected=0.815,
        variance=0.0003,
        nominal=0.85,
        n_samples=500,
    )
    fields.update(overrides)
    return NoisyScore(**fields)


def test_fields_std_and_float():
    score = _score()
    assert score.metric == "accuracy"
    assert score.method == "exact"
    assert score.std == math.sqrt(0.0003)
    assert float(score) == 0.815
    assert score.n_samples == 500


def test_numpy_inputs_are_stored_as_python_numbers():
    score = NoisyScore(
        "mean_squared_error",
        expected=np.float32(1.5),
        variance=np.float64(0.25),
        nominal=np.array(1.25),
        n_samples=np.int64(10),
        method="delta",
    )
    assert type(score.expected) is float and score.expected == 1.5
    assert type(score.variance) is float and type(score.nominal) is float
    assert type(score.n_samples) is int
    assert score.method == "delta"


@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.99, 0.999999])
def test_confidence_interval_is_the_normal_approximation(level):
    score = _score()
    low, high = stats.norm.interval(level, loc=score.expected, scale=score.std)
    interval = score.confidence_interval(level)
    assert isinstance(interval, ConfidenceInterval)
    assert interval.low == pytest.approx(low, rel=1e-13)
    assert interval.high == pytest.approx(high, rel=1e-13)
    assert interval.low < score.expected < interval.high


def test_default_level_and_docstring_numbers():
    interval = _score().confidence_interval()
    assert interval == _score().confidence_interval(0.95)
    assert interval.low == pytest.approx(0.78105, abs=1e-5)
    assert interval.high == pytest.approx(0.84894, abs=1e-5)


def test_zero_and_infinite_variance():
    exact = _score(variance=0.0)
    assert exact.confidence_interval(0.99) == (0.815, 0.815)
    assert exact.std == 0.0
    infinite = _score(metric="r2", variance=math.inf)
    assert infinite.std == math.inf
    # R² never exceeds 1: the unbounded normal interval is clipped there.
    assert infinite.confidence_interval() == (-math.inf, 1.0)
    unknown = _score(metric="custom_metric", variance=math.inf)
    assert unknown.confidence_interval() == (-math.inf, math.inf)
    assert json.loads(json.dumps(infinite.to_dict()))["variance"] == math.inf


@pytest.mark.parametrize("level", [0, 1, -0.5, 1.5, math.nan, "0.95", None])
def test_bad_confidence_level(level):
    with pytest.raises(ValueError, match="confidence_level"):
        _score().confidence_interval(level)


@pytest.mark.parametrize("method", ["analytic", "", None, "EXACT"])
def test_bad_method(method):
    with pytest.raises(ValueError, match="method must be one of"):
        _score(method=method)


def test_repr_is_short_and_readable():
    text = repr(_score())
    assert text == (
        "NoisyScore(metric='accuracy', expected=0.815, std=0.01732, nominal=0.85, "
        "n_samples=500, method='exact', estimand='forward')"
    )
    long = repr(_score(expected=1 / 3, variance=2 / 3, nominal=math.pi))
    assert "expected=0.333333," in long and "nominal=3.14159," in long
    assert len(long) < 150


def test_frozen():
    score = _score()
    with pytest.raises(dataclasses.FrozenInstanceError):
        score.expected = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        score.method = "delta"


def test_pickle_equality_and_hash():
    score = _score(method="monte_carlo")
    clone = pickle.loads(pickle.dumps(score))
    assert clone == score
    assert hash(clone) == hash(score)
    assert clone.confidence_interval() == score.confidence_interval()
    assert _score(expected=0.8) != score


def _same_results():
    """Pairs of results of identical calls: regression, classification, paired."""
    y, a, b = [1.0, 2.0, 3.0, 4.0], [1.1, 2.1, 2.8, 4.2], [1.0, 2.3, 3.1, 3.6]
    calls = [
        lambda: expected_accuracy_score([0, 1], [0, 1], q=0.1),
        lambda: expected_accuracy_score([0, 1, 1], [0, 1, 0], q=0.1, estimand="truth"),
        lambda: expected_mean_squared_error(y, a, sigma=0.1, test_set_sampling=False),
        lambda: expected_mean_squared_error(y, a, sigma=0.1),
        lambda: expected_paired_difference(
            y, a, b, metric="mean_squared_error", sigma=0.1
        ),
        lambda: expected_paired_difference(
            [0, 1, 1, 0], [0, 1, 0, 0], [0, 0, 0, 0], metric="accuracy", q=0.1
        ),
        lambda: monte_carlo_score(
            accuracy_score, [0, 1, 1], [0, 1, 0], q=0.1, n_draws=50, random_state=0
        ),
    ]
    return [(call(), call()) for call in calls]


def test_identical_results_compare_equal_with_nan_fields():
    # Python 3.13's dataclass __eq__ compares field by field (NaN != NaN): the
    # fields that default to NaN must not make identical results unequal.
    pairs = _same_results()
    assert any(math.isnan(first.sampling_variance) for first, _ in pairs)
    for first, second in pairs:
        assert first == second
        assert hash(first) == hash(second)
        restored = pickle.loads(pickle.dumps(first))
        assert restored == first
        assert hash(restored) == hash(first)
        if math.isnan(first.sampling_variance):  # a NaN made anew
            assert dataclasses.replace(first, sampling_variance=float("nan")) == first
        assert first != dataclasses.replace(first, expected=first.expected + 1.0)
    assert len({first for first, _ in pairs}) == len(pairs)


def test_nan_fields_compare_equal_and_hash_alike():
    nan = float("nan")
    first = _score(expected=nan, variance=nan, nominal=nan)
    second = _score(expected=float("nan"), variance=nan, nominal=nan)
    assert first == second
    assert hash(first) == hash(second)
    assert first != _score(expected=0.5, variance=nan, nominal=nan)
    assert first != _score()
    assert _score() != _score(metric="f1")


def test_to_dict_json_round_trip():
    score = _score(method="delta")
    data = score.to_dict()
    assert data == {
        "metric": "accuracy",
        "expected": 0.815,
        "variance": 0.0003,
        "std": math.sqrt(0.0003),
        "nominal": 0.85,
        "n_samples": 500,
        "method": "delta",
        "estimand": "forward",
        "sampling_variance": None,
        "sampling_std": None,
        "sampling_method": None,
        "sampling_dof": None,
    }
    back = json.loads(json.dumps(data))
    assert back == data
    derived = ("std", "sampling_std")
    rebuilt = NoisyScore(**{k: v for k, v in back.items() if k not in derived})
    assert rebuilt == score


def test_confidence_interval_object():
    interval = _score().confidence_interval(0.9)
    low, high = interval  # unpacks as a pair
    assert (interval.low, interval.high) == (low, high) == interval
    assert interval.method == "normal" and math.isnan(interval.content)
    assert repr(interval).endswith("method='normal')")
    clone = pickle.loads(pickle.dumps(interval))
    assert clone == interval and clone.method == "normal"
    with pytest.raises(AttributeError):
        interval.method = "exact"
    with pytest.raises(ValueError, match="method must be one of"):
        ConfidenceInterval(0.0, 1.0, "bootstrap")
    exact = ConfidenceInterval(0.1, 0.2, "exact", 0.97)
    assert pickle.loads(pickle.dumps(exact)).content == 0.97


@pytest.mark.parametrize("method", ["", "Exact", None, "wald"])
def test_bad_interval_method(method):
    with pytest.raises(ValueError, match="method must be one of"):
        _score().confidence_interval(method=method)


def test_exact_needs_a_distribution():
    assert _score().interval_method == "normal"
    with pytest.raises(ValueError, match="exact distribution of accuracy"):
        _score().confidence_interval(method="exact")


class _Fixed:
    """A stand-in distribution: a fixed exact interval, partly out of range."""

    def interval(self, confidence_level):
        return -0.2, 0.9, 0.99


def test_distribution_is_used_clipped_and_ignored_by_comparisons():
    score = _score(distribution=_Fixed())
    assert score.interval_method == "exact"
    interval = score.confidence_interval()
    assert interval == (0.0, 0.9) and interval.method == "exact"
    assert interval.content == 0.99
    assert score.confidence_interval(method="normal") == _score().confidence_interval()
    assert score == _score() and hash(score) == hash(_score())
    assert repr(score) == repr(_score()) and score.to_dict() == _score().to_dict()


@given(
    metric=st.sampled_from(sorted(METRIC_RANGES)),
    expected=st.floats(-5, 5),
    variance=st.one_of(st.floats(0, 100), st.just(math.inf)),
    level=st.floats(0.01, 0.999),
)
def test_normal_intervals_stay_in_range(metric, expected, variance, level):
    score = _score(metric=metric, expected=expected, variance=variance)
    low, high = score.confidence_interval(level)
    low_bound, high_bound = METRIC_RANGES[metric]
    assert low_bound <= low <= high <= high_bound


def test_every_registry_metric_has_a_range():
    from sklearn_noisy._noisy_score import METRIC_RANGES
    from sklearn_noisy.metrics import get_metric_names

    assert set(get_metric_names()) <= set(METRIC_RANGES)


def test_an_interval_wholly_outside_the_range_keeps_a_width():
    from sklearn_noisy._noisy_score import clip_to_range

    # a truth MSE estimate of -0.3 with half-width 0.2: [0, 0.2], not [0, 0]
    assert clip_to_range("mean_squared_error", -0.5, -0.1) == (0.0, 0.2)
    assert clip_to_range("accuracy", 1.1, 1.3) == (0.9, 1.0)
    assert clip_to_range("r2", 0.2, 0.9) == (0.2, 0.9)
    assert clip_to_range("unknown", -5.0, -4.0) == (-5.0, -4.0)
    score = NoisyScore(
        "mean_squared_error", expected=-0.3, variance=0.01, nominal=0.1,
        n_samples=10, estimand="truth",
    )  # fmt: skip
    # The estimate is 3 SDs below the bound: Feldman and Cousins's unified
    # interval is the upper limit 0.42 SD (their Table X, 95 %), not 1.96 SD.
    low, high = score.confidence_interval(0.95)
    assert low == 0.0 and high == pytest.approx(0.0423, abs=5e-5)


def test_invalid_requests_name_what_is_wrong():
    with pytest.raises(ValueError, match="sampling_dof must be positive"):
        _score(sampling_variance=1e-4, sampling_method="delta", sampling_dof=0.0)
    # the label-noise variance is known, not estimated: no Student's t for it
    with pytest.raises(ValueError, match="method='t' is for the intervals with"):
        _score().confidence_interval(0.95, method="t")
    # a result is never equal to another type (NotImplemented, then False)
    assert _score() != 0.815 and _score().__eq__(0.815) is NotImplemented


def test_sampling_interval_with_zero_variance_is_the_point():
    # the accuracy of a test set the sampling cannot move: Wilson's interval
    # of p with an infinite effective sample size is [p, p]
    score = _score(sampling_variance=0.0, sampling_method="per_sample_terms")
    wilson = score.confidence_interval(0.95, method="wilson", source="sampling")
    assert wilson == (0.815, 0.815) and wilson.method == "wilson"


def test_pivot_beyond_its_quantile_grid_falls_back_to_student():
    # the bootstrap-t quantiles are held from 0.5 % to 99.5 %: a 99.9 % interval
    # uses Student's t with the Welch-Satterthwaite degrees of freedom
    pivot = (-3.0, -2.6, -2.2, -1.8, -1.3, 1.2, 1.6, 1.9, 2.3, 2.6)
    score = _score(
        sampling_variance=1e-4,
        sampling_method="bootstrap",
        sampling_dof=20.0,
        sampling_pivot=pivot,
    )
    assert score.confidence_interval(0.95, source="both").method == "bootstrap_t"
    wide = score.confidence_interval(0.999, source="both")
    total = 0.0003 + 1e-4
    dof = 20.0 * (total / 1e-4) ** 2
    half = stats.t.ppf(0.9995, dof) * math.sqrt(total)
    assert wide.method == "t"
    assert wide == pytest.approx((0.815 - half, 0.815 + half), rel=1e-12)
