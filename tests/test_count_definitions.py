"""The count-metric definitions: one rule per metric, read by every engine."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import UndefinedMetricWarning
from sklearn.metrics import confusion_matrix

from sklearn_noisy.metrics._definitions.counts import (
    COUNT_METRICS,
    sklearn_from_confusion,
)
from sklearn_noisy.metrics._engines.counts.confusion_draws import draw_moments

RATIOS = ("precision", "recall", "f1")


def _sklearn(metric, y, p, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", UserWarning)
        return COUNT_METRICS[metric].sklearn_function(y, p, **options)


@pytest.mark.parametrize("seed", range(6))
def test_value_is_sklearn_bit_for_bit(seed):
    """Random labels, every average and zero_division: the same bits."""
    rng = np.random.default_rng(seed)
    k = (2, 3, 9)[seed % 3]
    y = rng.integers(0, k, 40)
    p = np.where(rng.random(40) < 0.5, y, rng.integers(0, k, 40))
    classes = np.arange(k)
    cells = confusion_matrix(y, p, labels=classes)
    for metric in RATIOS:
        for average in (None, "micro", "macro", "weighted"):
            for zero in (0.0, 1.0, np.nan):
                options = {"average": average, "zero_division": zero}
                ours = sklearn_from_confusion(metric, cells, classes, **options)
                theirs = _sklearn(metric, y, p, labels=classes, **options)
                np.testing.assert_array_equal(ours, theirs)
    for adjusted in (False, True):
        ours = sklearn_from_confusion(
            "balanced_accuracy", cells, classes, adjusted=adjusted
        )
        assert ours == _sklearn("balanced_accuracy", y, p, adjusted=adjusted)
    assert sklearn_from_confusion("matthews_corrcoef", cells, classes) == _sklearn(
        "matthews_corrcoef", y, p
    )


def test_zero_guards_are_sklearn():
    """The cases where the old copies differed: scikit-learn's value."""
    # One class present: scikit-learn's adjusted balanced accuracy is
    # (recall - 1)/0: -inf below a recall of 1, NaN at 1.
    for y, p in (([0, 0, 0], [0, 1, 1]), ([0, 0, 0], [0, 0, 0])):
        cells = confusion_matrix(y, p, labels=[0, 1])
        ours = sklearn_from_confusion(
            "balanced_accuracy", cells, np.arange(2), adjusted=True
        )
        np.testing.assert_array_equal(
            ours, _sklearn("balanced_accuracy", y, p, adjusted=True)
        )
    # A constant prediction: MCC is 0, in the value and the gradient.
    cells = np.array([[3, 0], [2, 0]])
    assert sklearn_from_confusion("matthews_corrcoef", cells, np.arange(2)) == 0.0
    assert _sklearn("matthews_corrcoef", [0, 0, 0, 1, 1], [0] * 5) == 0.0
    value, gradient = COUNT_METRICS["matthews_corrcoef"].gradient(cells * 1.0)
    assert value == 0.0 and not gradient.any()
    # De-noised counts can make the product under the root negative: 0 too.
    estimated = np.array([[5.0, -1.0], [-2.0, 1.0]])
    assert COUNT_METRICS["matthews_corrcoef"].value(estimated) == 0.0
    # A Monte Carlo draw where the metric is undefined: NaN moments, as the
    # exact algorithm.
    assert np.isnan(draw_moments(np.array([0.5, -np.inf, 0.25]))).all()


@pytest.mark.parametrize(
    "metric", ["precision", "recall", "f1", "balanced_accuracy", "matthews_corrcoef"]
)
@pytest.mark.parametrize("zero", [0.0, 1.0])
def test_affine_form_is_the_value(metric, zero):
    """``α(n) + β(n) TP`` equals the value on every binary matrix."""
    definition = COUNT_METRICS[metric]
    m = 7
    for n_pred_pos in range(m + 1):
        n = np.arange(m + 1)
        alpha, beta = definition.affine(n, n_pred_pos, m, zero_division=zero)
        for observed in range(m + 1):
            for tp in range(
                max(0, n_pred_pos + observed - m), 1 + min(n_pred_pos, observed)
            ):
                fp, fn = n_pred_pos - tp, observed - tp
                cells = np.array([[m - tp - fp - fn, fp], [fn, tp]], dtype=float)
                value = definition.value(
                    cells, average="binary", pos_index=1, zero_division=zero
                )
                affine = alpha[observed] + beta[observed] * tp
                assert affine == pytest.approx(float(value), abs=1e-12)


@pytest.mark.parametrize(
    "metric", ["recall", "f1", "balanced_accuracy", "matthews_corrcoef"]
)
def test_delta_derivatives(metric):
    """The derivatives in (TP, FN) against central differences of the value."""
    definition = COUNT_METRICS[metric]
    n_pos, m, t, f, h = 30.0, 100.0, 12.0, 9.0, 1e-3

    def value(t, f):
        cells = np.array([[m - n_pos - f, n_pos - t], [f, t]])
        return float(definition.value(cells, average="binary", pos_index=1))

    v, d_t, d_f, d_tt, d_ff = definition.delta(t, f, n_pos, m)
    assert v == pytest.approx(value(t, f), rel=1e-12)
    assert d_t == pytest.approx((value(t + h, f) - value(t - h, f)) / (2 * h), rel=1e-6)
    assert d_f == pytest.approx((value(t, f + h) - value(t, f - h)) / (2 * h), rel=1e-6)
    second_t = (value(t + h, f) - 2 * v + value(t - h, f)) / h**2
    second_f = (value(t, f + h) - 2 * v + value(t, f - h)) / h**2
    assert d_tt == pytest.approx(second_t, rel=1e-3, abs=1e-6)
    assert d_ff == pytest.approx(second_f, rel=1e-3, abs=1e-6)


def test_delta_step_at_no_observed_positive():
    """At S = TP + FN = 0 (unreachable from the public functions, which take
    the delta method only with a random S) the step has a floor: F1 = 2TP /
    (TP + FN + n_P) has ∂f/∂TP = 2/n_P and ∂²f/∂TP² = −4/n_P² there."""
    value, d_t, d_f, d_tt, d_ff = COUNT_METRICS["f1"].delta(0.0, 0.0, 3.0, 10.0)
    assert (value, d_f) == (0.0, 0.0)
    assert d_t == pytest.approx(2 / 3, rel=1e-12)
    assert d_tt == pytest.approx(-4 / 9, rel=1e-6)
    assert d_ff == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize(
    "metric",
    sorted(
        set(COUNT_METRICS)
        - {
            "false_positive_rate",
            "false_negative_rate",
            "specificity",
            "negative_predictive_value",
        }
    ),
)
def test_gradient_value_is_the_value(metric):
    """The truth engine's value of a matrix is the definition's value."""
    definition = COUNT_METRICS[metric]
    counts = np.array([[7.0, 2.0, 1.0], [3.0, 6.0, 0.5], [1.0, 2.0, 9.0]])
    averages = (
        ("micro", "macro", "weighted", "binary") if definition.averaged else (None,)
    )
    for average in averages:
        value, _ = definition.gradient(counts, pos_index=1, average=average)
        expected = definition.value(counts, average=average, pos_index=1)
        assert value == pytest.approx(float(expected), rel=1e-12)


@pytest.mark.parametrize("average", [None, "micro", "macro", "weighted"])
def test_rates_value_is_the_nominal_rate(average):
    """The rates' definitions: one class against the rest, the false rates 1 −."""
    from sklearn_noisy.metrics import (
        false_negative_rate,
        false_positive_rate,
        negative_predictive_value,
        specificity_score,
    )

    rng = np.random.default_rng(3)
    y = rng.integers(0, 4, 60)
    p = np.where(rng.random(60) < 0.6, y, rng.integers(0, 4, 60))
    cells = confusion_matrix(y, p, labels=np.arange(4))
    for name, function in (
        ("specificity", specificity_score),
        ("negative_predictive_value", negative_predictive_value),
        ("false_positive_rate", false_positive_rate),
        ("false_negative_rate", false_negative_rate),
    ):
        value = COUNT_METRICS[name].value(cells, average=average)
        expected = function(y, p, average=average, zero_division=0.0)
        np.testing.assert_allclose(value, expected, rtol=1e-14, atol=1e-15)
