"""Common tests: the same checks run over every metric of the registry.

After scikit-learn's ``sklearn/metrics/tests/test_common.py``: one table of
metrics, read from :func:`sklearn_noisy.metrics.get_metric_names` and
:func:`~sklearn_noisy.metrics.get_metric_info`, and shared invariance checks
parametrised over it. A metric added to the registry is tested here without a
line of this file changing (see the contributor page of the documentation).

The checks:

- at zero noise (``sigma=0`` / ``q=0``) ``nominal`` and ``expected`` equal the
  scikit-learn metric and the variance is 0;
- the order of the samples does not matter;
- integer sample weights equal repeating the samples, and a weight of 0
  leaving the sample out;
- float32 inputs give the float64 result;
- lists, numpy arrays and pandas Series give identical results;
- the result pickles.

The invariance checks run at zero noise, at a constant noise level and with one
noise level per sample (which is permuted, repeated and converted with the
other per-sample inputs).
"""

from __future__ import annotations

import inspect
import pickle

import numpy as np
import pandas as pd
import pytest

from sklearn_noisy import NoisyScore
from sklearn_noisy.metrics import get_metric_info, get_metric_names

N_SAMPLES = 40

#: Every metric of the registry: the table all the checks run over.
METRICS = get_metric_names()

#: Metrics whose ``expected_*`` function has no ``sample_weight`` argument (their
#: scikit-learn counterparts have one: the exact algorithms of these ratio
#: metrics count unweighted samples). ``test_unweighted_metrics_table`` keeps
#: this set equal to what the signatures say, so a metric that gains the
#: argument is tested by ``test_sample_weight_equals_repetition`` at once.
METRICS_WITHOUT_SAMPLE_WEIGHT = {
    "balanced_accuracy",
    "f1",
    "precision",
    "recall",
    "matthews_corrcoef",
}
WEIGHTED_METRICS = [m for m in METRICS if m not in METRICS_WITHOUT_SAMPLE_WEIGHT]

#: Weighted metrics that are not a weighted mean of per-sample terms: their
#: expectation depends on the variance of the noisy metric, which differs
#: between a weight and repeated samples (see
#: ``test_sample_weight_equals_repetition``).
NOT_MEANS_OF_SAMPLE_TERMS = {"root_mean_squared_error", "r2"}

#: Noise settings of the invariance checks: none, one level for every sample,
#: one level per sample.
NOISE_LEVELS = ("zero", "constant", "per_sample")


def _cases(metrics: list[str]) -> list:
    """``(metric, noise level)`` parameters: every metric at every level."""
    return [
        pytest.param(name, level, id=f"{name}-{level}")
        for name in metrics
        for level in NOISE_LEVELS
    ]


def _dataset(name: str) -> dict:
    """A fixed seeded dataset for the metric's noise kind and response method.

    Returns the per-sample inputs ``y_true``, ``y_pred`` (predictions or the
    probability of class 1) and ``noise`` (one noise level per sample). The
    values are exactly representable in float32, so that float32 and float64
    inputs hold the same numbers.
    """
    info = get_metric_info(name)
    rng = np.random.default_rng(0)
    if info.noise == "sigma":
        y_true = rng.normal(size=N_SAMPLES)
        y_pred = y_true + rng.normal(scale=0.5, size=N_SAMPLES)
        noise = rng.uniform(0.1, 0.6, size=N_SAMPLES)
    else:
        y_true = rng.integers(0, 2, size=N_SAMPLES)
        if info.response_method == "predict_proba":
            y_pred = rng.uniform(0.05, 0.95, size=N_SAMPLES)
        else:
            y_pred = np.where(rng.random(N_SAMPLES) < 0.8, y_true, 1 - y_true)
        noise = rng.uniform(0.0, 0.3, size=N_SAMPLES)
    data = {"y_true": y_true, "y_pred": y_pred, "noise": noise}
    return {
        key: value.astype(np.float32).astype(np.float64)
        if value.dtype.kind == "f"
        else value
        for key, value in data.items()
    }


def _noise_value(level: str, noise: np.ndarray) -> object:
    """The noise argument of a level: 0, the mean level, or one per sample."""
    if level == "zero":
        return 0.0
    if level == "constant":
        return float(np.mean(noise))
    return noise


def _score(name: str, y_true, y_pred, noise, **kwargs) -> NoisyScore:
    info = get_metric_info(name)
    return info.function(y_true, y_pred, **{info.noise_parameter: noise}, **kwargs)


def _assert_scores_close(actual: NoisyScore, desired: NoisyScore, rtol: float):
    assert isinstance(actual, NoisyScore)
    assert (actual.metric, actual.n_samples, actual.method) == (
        desired.metric,
        desired.n_samples,
        desired.method,
    )
    for field in ("expected", "variance", "nominal"):
        np.testing.assert_allclose(
            getattr(actual, field),
            getattr(desired, field),
            rtol=rtol,
            atol=1e-15,
            err_msg=f"{field} differs",
        )


def test_metric_table_is_the_registry():
    assert len(METRICS) == len(set(METRICS)) > 0
    for name in METRICS:
        info = get_metric_info(name)
        assert info.name == name
        assert get_metric_info(info.function) is info


def test_unweighted_metrics_table():
    lacking = {
        name
        for name in METRICS
        if "sample_weight"
        not in inspect.signature(get_metric_info(name).function).parameters
    }
    assert lacking == METRICS_WITHOUT_SAMPLE_WEIGHT


@pytest.mark.parametrize("name", METRICS)
@pytest.mark.parametrize("zero", ["scalar", "per_sample"])
def test_zero_noise_equals_scikit_learn(name, zero):
    info = get_metric_info(name)
    data = _dataset(name)
    noise = 0.0 if zero == "scalar" else np.zeros(N_SAMPLES)
    score = _score(name, data["y_true"], data["y_pred"], noise)
    reference = info.sklearn_function(data["y_true"], data["y_pred"])
    np.testing.assert_allclose(score.nominal, reference, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(score.expected, reference, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(score.variance, 0.0, rtol=0, atol=1e-12)
    assert score.n_samples == N_SAMPLES


@pytest.mark.parametrize(("name", "level"), _cases(METRICS))
def test_sample_order_invariance(name, level):
    data = _dataset(name)
    noise = _noise_value(level, data["noise"])
    score = _score(name, data["y_true"], data["y_pred"], noise)
    order = np.random.default_rng(1).permutation(N_SAMPLES)
    permuted_noise = noise[order] if isinstance(noise, np.ndarray) else noise
    permuted = _score(
        name, data["y_true"][order], data["y_pred"][order], permuted_noise
    )
    _assert_scores_close(permuted, score, rtol=1e-12)


@pytest.mark.parametrize(("name", "level"), _cases(WEIGHTED_METRICS))
def test_sample_weight_equals_repetition(name, level):
    """A weight ``w`` counts a sample ``w`` times.

    With noise, a weight counts one noisy label ``w`` times, whereas ``w``
    repeated samples carry independent noise: the nominal metric and the
    expectation of a mean of per-sample terms are the same, the variance is
    not (``Σ w² v`` against ``Σ w v``), nor is the expectation of the metrics
    in :data:`NOT_MEANS_OF_SAMPLE_TERMS`. At zero noise everything is equal.
    """
    info = get_metric_info(name)
    data = _dataset(name)
    noise = _noise_value(level, data["noise"])
    weight = np.random.default_rng(2).integers(1, 5, size=N_SAMPLES)
    weighted = _score(name, data["y_true"], data["y_pred"], noise, sample_weight=weight)
    repeat = np.repeat(np.arange(N_SAMPLES), weight)
    repeated_noise = noise[repeat] if isinstance(noise, np.ndarray) else noise
    repeated = _score(
        name, data["y_true"][repeat], data["y_pred"][repeat], repeated_noise
    )
    if level == "zero":
        fields = ["expected", "variance", "nominal"]
    elif name in NOT_MEANS_OF_SAMPLE_TERMS:
        fields = ["nominal"]
    else:
        fields = ["expected", "nominal"]
    for field in fields:
        np.testing.assert_allclose(
            getattr(weighted, field),
            getattr(repeated, field),
            rtol=1e-12,
            atol=1e-15,
            err_msg=f"{field} differs",
        )
    np.testing.assert_allclose(
        weighted.nominal,
        info.sklearn_function(data["y_true"], data["y_pred"], sample_weight=weight),
        rtol=1e-12,
    )
    assert (weighted.metric, weighted.method) == (repeated.metric, repeated.method)
    assert weighted.n_samples == N_SAMPLES


@pytest.mark.parametrize("name", sorted(NOT_MEANS_OF_SAMPLE_TERMS))
def test_not_means_of_sample_terms_table(name):
    """The metrics exempted above do differ between a weight and repetition."""
    data = _dataset(name)
    weight = np.random.default_rng(2).integers(1, 5, size=N_SAMPLES)
    weighted = _score(
        name, data["y_true"], data["y_pred"], data["noise"], sample_weight=weight
    )
    repeat = np.repeat(np.arange(N_SAMPLES), weight)
    repeated = _score(
        name, data["y_true"][repeat], data["y_pred"][repeat], data["noise"][repeat]
    )
    assert abs(weighted.expected - repeated.expected) > 1e-6


@pytest.mark.parametrize(("name", "level"), _cases(WEIGHTED_METRICS))
def test_zero_sample_weight_equals_removal(name, level):
    """A sample of weight 0 is left out (it still counts in ``n_samples``)."""
    data = _dataset(name)
    noise = _noise_value(level, data["noise"])
    weight = np.ones(N_SAMPLES)
    weight[::4] = 0.0
    kept = weight > 0
    weighted = _score(name, data["y_true"], data["y_pred"], noise, sample_weight=weight)
    kept_noise = noise[kept] if isinstance(noise, np.ndarray) else noise
    removed = _score(name, data["y_true"][kept], data["y_pred"][kept], kept_noise)
    for field in ("expected", "variance", "nominal"):
        np.testing.assert_allclose(
            getattr(weighted, field),
            getattr(removed, field),
            rtol=1e-12,
            atol=1e-15,
            err_msg=f"{field} differs",
        )


@pytest.mark.parametrize(("name", "level"), _cases(METRICS))
def test_float32_equals_float64(name, level):
    data = _dataset(name)
    noise = _noise_value(level, data["noise"])
    score = _score(name, data["y_true"], data["y_pred"], noise)

    def single(value):
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            return value.astype(np.float32)
        if isinstance(value, float):
            return np.float32(value)
        return value

    score32 = _score(
        name, single(data["y_true"]), single(data["y_pred"]), single(noise)
    )
    _assert_scores_close(score32, score, rtol=1e-6)


@pytest.mark.parametrize("container", ["list", "series"])
@pytest.mark.parametrize(("name", "level"), _cases(METRICS))
def test_lists_arrays_and_series_agree(name, level, container):
    data = _dataset(name)
    noise = _noise_value(level, data["noise"])
    score = _score(name, data["y_true"], data["y_pred"], noise)
    convert = list if container == "list" else pd.Series
    converted_noise = convert(noise) if isinstance(noise, np.ndarray) else noise
    converted = _score(
        name, convert(data["y_true"]), convert(data["y_pred"]), converted_noise
    )
    assert converted == score


@pytest.mark.parametrize(("name", "level"), _cases(METRICS))
def test_result_pickles(name, level):
    data = _dataset(name)
    score = _score(
        name, data["y_true"], data["y_pred"], _noise_value(level, data["noise"])
    )
    restored = pickle.loads(pickle.dumps(score))
    assert restored == score
    assert repr(restored) == repr(score)
