"""Common tests: the same checks run over every metric of the registry.

After scikit-learn's ``sklearn/metrics/tests/test_common.py``: one table of
metrics, read from :func:`sklearn_noisy.metrics.get_metric_names` and
:func:`~sklearn_noisy.metrics.get_metric_info`, and shared invariance checks
parametrised over it. A metric added to the registry is tested here without a
line of this file changing (see the contributor page of the documentation).

The checks:

- at zero noise (``sigma=0`` / ``q=0``) ``nominal`` and ``expected`` equal the
  scikit-learn metric and the variance is 0, for every estimand the registry
  lists;
- the order of the samples does not matter;
- integer sample weights equal repeating the samples, and a weight of 0
  leaving the sample out;
- float32 inputs give the float64 result;
- lists, numpy arrays and pandas Series give identical results;
- the result pickles.

The invariance checks run at zero noise, at a constant noise level, with one
noise level per sample (which is permuted, repeated and converted with the
other per-sample inputs) and, for label flips, with a transition matrix. A
check that fails today is listed in ``KNOWN_FAILURES`` and marked
``xfail(strict=True)``: it turns red when fixed.
"""

from __future__ import annotations

import dataclasses
import inspect
import pickle

import numpy as np
import pandas as pd
import pytest

from sklearn_noisy import NoisyScore
from sklearn_noisy.metrics import get_metric_info, get_metric_names
from sklearn_noisy.metrics._definitions.counts import COUNT_METRICS

N_SAMPLES = 40

# The regression data hold labels near 0, where the percentage errors warn
# that scikit-learn's floor sets their moments: expected here, tested in
# tests/test_percentage.py.
pytestmark = pytest.mark.filterwarnings(
    r"ignore:For \d+ label\(s\) the noise reaches 0:UserWarning"
)

#: Every metric of the registry: the table all the checks run over.
METRICS = get_metric_names()

#: Metrics whose ``expected_*`` function has no ``sample_weight`` argument,
#: although their scikit-learn counterparts have one: their exact algorithms
#: work on the distribution of integer counts of samples (Poisson-binomial),
#: which weights would break. ``test_unweighted_metrics_table`` keeps
#: this set equal to what the signatures say, so a metric that gains the
#: argument is tested by ``test_sample_weight_equals_repetition`` at once.
METRICS_WITHOUT_SAMPLE_WEIGHT: set[str] = set()
WEIGHTED_METRICS = [m for m in METRICS if m not in METRICS_WITHOUT_SAMPLE_WEIGHT]

#: Weighted metrics that are not a weighted mean of per-sample terms: their
#: expectation depends on the variance of the noisy metric, which differs
#: between a weight and repeated samples (see
#: ``test_sample_weight_equals_repetition``).
NOT_MEANS_OF_SAMPLE_TERMS = {
    # The regression metrics are such means exactly when the registry says so.
    *(
        name
        for name in METRICS
        if get_metric_info(name).noise == "sigma" and not get_metric_info(name).additive
    ),
    # The count metrics are such means where they are linear in the confusion
    # matrix with a fixed denominator (accuracy, precision, NPV).
    *(
        name
        for name in METRICS
        if name in COUNT_METRICS
        and not COUNT_METRICS[name].fixed_denominator
        and not COUNT_METRICS[name].is_linear("binary")
    ),
    # The ROC AUC is a ratio of weighted pair counts (Monte Carlo with weights).
    "roc_auc",
}

#: Noise settings of the invariance checks: none, one level for every sample,
#: one level per sample, and (label flips only) a transition matrix.
NOISE_LEVELS = ("zero", "constant", "per_sample", "matrix")

#: The transition matrix of the ``"matrix"`` level (rows: true class 0, 1).
TRANSITION_MATRIX = np.array([[0.9, 0.1], [0.25, 0.75]])

#: Known failures, ``(check, noise level)`` -> reason, for every metric of the
#: level's noise kind. Each case is marked ``xfail(strict=True)``, so that the
#: test turns red once the failure is fixed and the entry must go.
KNOWN_FAILURES: dict[tuple[str, str], str] = {}


def _levels(name: str) -> tuple[str, ...]:
    if get_metric_info(name).noise == "flips":
        return NOISE_LEVELS
    return tuple(level for level in NOISE_LEVELS if level != "matrix")


def _cases(metrics: list[str], check: str) -> list:
    """``(metric, noise level)`` parameters of ``check``, known failures marked."""
    cases = []
    for name in metrics:
        for level in _levels(name):
            reason = KNOWN_FAILURES.get((check, level))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            cases.append(pytest.param(name, level, marks=marks, id=f"{name}-{level}"))
    return cases


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


def _noise(name: str, level: str, data: dict) -> dict:
    """The noise keyword arguments of a level.

    ``sigma`` or ``q``: 0, the mean of the per-sample levels, or one level per
    sample; or ``transition_matrix``.
    """
    if level == "matrix":
        return {"transition_matrix": TRANSITION_MATRIX}
    value = {"zero": 0.0, "constant": float(np.mean(data["noise"]))}.get(
        level, data["noise"]
    )
    return {get_metric_info(name).noise_parameter: value}


def _score(name: str, y_true, y_pred, noise: dict, **kwargs) -> NoisyScore:
    info = get_metric_info(name)
    if len(info.estimands) > 1:  # the checks of the forward path
        kwargs = {"estimand": "forward", **kwargs}
    return info.function(y_true, y_pred, **noise, **kwargs)


def _per_sample(name: str, noise: dict, convert) -> dict:
    """``noise`` with ``convert`` applied to a per-sample ``sigma`` or ``q``."""
    key = get_metric_info(name).noise_parameter
    value = noise.get(key)
    if isinstance(value, np.ndarray):
        return {**noise, key: convert(value)}
    return noise


def _score_rows(name: str, data: dict, noise: dict, rows, **kwargs) -> NoisyScore:
    """The metric on the samples ``rows`` (a permutation, repetition or subset)."""
    return _score(
        name,
        data["y_true"][rows],
        data["y_pred"][rows],
        _per_sample(name, noise, lambda value: value[rows]),
        **kwargs,
    )


def _assert_close(
    actual: NoisyScore,
    desired: NoisyScore,
    *,
    fields=("expected", "variance", "nominal"),
    rtol: float = 1e-12,
):
    """``fields`` of the two results agree, and so do the name and the method."""
    assert isinstance(actual, NoisyScore)
    assert (actual.metric, actual.method) == (desired.metric, desired.method)
    for field in fields:
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


@pytest.mark.parametrize(
    "field, value",
    [("noise", "laplace"), ("response_method", "decision_function"),
     ("binary_proba", "column"), ("default_targets", ("multilabel",))],
)  # fmt: skip
def test_a_record_with_an_unknown_choice_is_refused(field, value):
    """A contributor's record naming a noise kind, response method or target
    type the engines do not know fails at import, naming the field."""
    with pytest.raises(ValueError, match=field):
        dataclasses.replace(get_metric_info("accuracy"), **{field: value})


def test_unweighted_metrics_table():
    lacking = {name for name in METRICS if not _accepts(name, "sample_weight")}
    assert lacking == METRICS_WITHOUT_SAMPLE_WEIGHT


def _accepts(name: str, parameter: str) -> bool:
    function = get_metric_info(name).function
    return parameter in inspect.signature(function).parameters


def test_estimands_table():
    """A metric offering more than the measurement estimand has the option."""
    for name in METRICS:
        estimands = get_metric_info(name).estimands
        assert estimands[0] == "forward"
        assert _accepts(name, "estimand") or estimands == ("forward",)


@pytest.mark.parametrize(
    ("name", "estimand"),
    [
        pytest.param(name, estimand, id=f"{name}-{estimand}")
        for name in METRICS
        for estimand in get_metric_info(name).estimands
    ],
)
@pytest.mark.parametrize("zero", ["scalar", "per_sample"])
def test_zero_noise_equals_scikit_learn(name, estimand, zero):
    """Exact labels: both estimands are the scikit-learn metric, variance 0."""
    info = get_metric_info(name)
    data = _dataset(name)
    noise = 0.0 if zero == "scalar" else np.zeros(N_SAMPLES)
    options = {"estimand": estimand} if _accepts(name, "estimand") else {}
    score = _score(
        name, data["y_true"], data["y_pred"], {info.noise_parameter: noise}, **options
    )
    reference = info.sklearn_function(data["y_true"], data["y_pred"])
    np.testing.assert_allclose(score.nominal, reference, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(score.expected, reference, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(score.variance, 0.0, rtol=0, atol=1e-12)
    assert score.n_samples == N_SAMPLES


@pytest.mark.parametrize(("name", "level"), _cases(METRICS, "order"))
def test_sample_order_invariance(name, level):
    data = _dataset(name)
    noise = _noise(name, level, data)
    score = _score(name, data["y_true"], data["y_pred"], noise)
    order = np.random.default_rng(1).permutation(N_SAMPLES)
    permuted = _score_rows(name, data, noise, order)
    _assert_close(permuted, score)
    assert permuted.n_samples == score.n_samples


def _weighted_and_repeated(name: str, level: str) -> tuple[NoisyScore, NoisyScore]:
    """The metric with integer weights, and on the samples repeated as often."""
    data = _dataset(name)
    noise = _noise(name, level, data)
    weight = np.random.default_rng(2).integers(1, 5, size=N_SAMPLES)
    weighted = _score_rows(name, data, noise, slice(None), sample_weight=weight)
    repeated = _score_rows(name, data, noise, np.repeat(np.arange(N_SAMPLES), weight))
    reference = get_metric_info(name).sklearn_function(
        data["y_true"], data["y_pred"], sample_weight=weight
    )
    np.testing.assert_allclose(weighted.nominal, reference, rtol=1e-12)
    assert weighted.n_samples == N_SAMPLES
    return weighted, repeated


@pytest.mark.parametrize(("name", "level"), _cases(WEIGHTED_METRICS, "weights"))
def test_sample_weight_equals_repetition(name, level):
    """A weight ``w`` counts a sample ``w`` times.

    With noise, a weight counts one noisy label ``w`` times, whereas ``w``
    repeated samples carry independent noise: the nominal metric and the
    expectation of a mean of per-sample terms are the same, the variance is
    not (``Σ w² v`` against ``Σ w v``), nor is the expectation of the metrics
    in ``NOT_MEANS_OF_SAMPLE_TERMS``. At zero noise everything is equal.
    """
    weighted, repeated = _weighted_and_repeated(name, level)
    if level == "zero":
        fields = ("expected", "variance", "nominal")
    elif name in NOT_MEANS_OF_SAMPLE_TERMS:
        # Unequal weights make the counts of the ratio metrics non-integer:
        # their method may differ (Monte Carlo against exact).
        np.testing.assert_allclose(weighted.nominal, repeated.nominal, rtol=1e-12)
        return
    else:
        fields = ("expected", "nominal")
    _assert_close(weighted, repeated, fields=fields)


@pytest.mark.parametrize("name", sorted(NOT_MEANS_OF_SAMPLE_TERMS))
def test_not_means_of_sample_terms_table(name):
    """The metrics exempted above do differ between a weight and repetition."""
    weighted, repeated = _weighted_and_repeated(name, "per_sample")
    assert abs(weighted.expected - repeated.expected) > 1e-6


@pytest.mark.parametrize(("name", "level"), _cases(WEIGHTED_METRICS, "zero_weights"))
def test_zero_sample_weight_equals_removal(name, level):
    """A sample of weight 0 is left out (it still counts in ``n_samples``)."""
    data = _dataset(name)
    noise = _noise(name, level, data)
    weight = np.ones(N_SAMPLES)
    weight[::4] = 0.0
    weighted = _score_rows(name, data, noise, slice(None), sample_weight=weight)
    removed = _score_rows(name, data, noise, weight > 0)
    _assert_close(weighted, removed)


@pytest.mark.parametrize(("name", "level"), _cases(METRICS, "float32"))
def test_float32_equals_float64(name, level):
    data = _dataset(name)
    noise = _noise(name, level, data)
    score = _score(name, data["y_true"], data["y_pred"], noise)

    def single(value):
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            return value.astype(np.float32)
        if isinstance(value, float):
            return np.float32(value)
        return value

    noise32 = {key: single(value) for key, value in noise.items()}
    score32 = _score(name, single(data["y_true"]), single(data["y_pred"]), noise32)
    _assert_close(score32, score, rtol=1e-6)
    assert score32.n_samples == score.n_samples


@pytest.mark.parametrize("container", ["list", "series"])
@pytest.mark.parametrize(("name", "level"), _cases(METRICS, "containers"))
def test_lists_arrays_and_series_agree(name, level, container):
    data = _dataset(name)
    noise = _noise(name, level, data)
    score = _score(name, data["y_true"], data["y_pred"], noise)
    convert = list if container == "list" else pd.Series
    converted_noise = _per_sample(name, noise, convert)
    converted = _score(
        name, convert(data["y_true"]), convert(data["y_pred"]), converted_noise
    )
    assert converted == score


@pytest.mark.parametrize(("name", "level"), _cases(METRICS, "pickle"))
def test_result_pickles(name, level):
    data = _dataset(name)
    score = _score(name, data["y_true"], data["y_pred"], _noise(name, level, data))
    restored = pickle.loads(pickle.dumps(score))
    assert restored == score
    assert repr(restored) == repr(score)
