"""The forward R²'s prediction interval: a bootstrap-t of ``log(1 − R²)``, one
resample against another, widened on the side of a low new R² (user guide:
:ref:`error_budget_new_set`)."""

import math
import pickle

import numpy as np
from _interval_coverage import draw, metric_value
from scipy import stats

from sklearn_noisy.metrics import expected_r2_score

#: Test sets (the coverage grid's heavy-tailed population, n = 100, seed 8) and
#: the new test sets on their noisy labels each interval is checked against.
#: Student's t on the log scale missed 6.06 % below here; this one 2.66 % below,
#: 0.61 % above (a tail's Monte Carlo SE about 0.5 points).
REPLICATES, TARGETS = 100, 4000


def _heavy(seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(100)
    sigma = 0.3 + 0.2 * np.abs(x)
    return x + 0.3 + 0.3 * x**2, x, sigma


def test_forward_prediction_interval_is_the_paired_log_bootstrap_t():
    # 999 resamples (seed 0) of log(Σa/Σb), a = r² + σ², b = (y − ȳ)² + σ²,
    # each studentized by the SD of a/Ā − b/B̄; the pivot −(θ*_{b−1} − θ*_b +
    # s_L Z)/√(s_L² + 2 se*²), s_L = SD/u of the new labels, its lower quantiles
    # times t_ν(p)/z(p), ν = sampling_dof·((V_L + 2V_S)/(2(V_L + V_S)))²
    y, x, sigma = _heavy(4)
    score = expected_r2_score(
        y, x, sigma=sigma, estimand="forward", test_set_sampling=True
    )
    a, b = (y - x) ** 2 + sigma**2, (y - y.mean()) ** 2 + sigma**2
    rng = np.random.default_rng(0)
    index = rng.integers(0, 100, (999, 100))
    theta = np.log(a[index].mean(axis=1) / b[index].mean(axis=1))
    terms = a[index] / a[index].mean(axis=1, keepdims=True)
    terms -= b[index] / b[index].mean(axis=1, keepdims=True)
    se = np.sqrt(np.sum(terms**2, axis=1) / 99.0 / 100.0)
    u = 1.0 - score.expected
    label, sampling = score.variance, score.sampling_variance
    s_label = math.sqrt(label) / u
    z = rng.standard_normal(999)
    pivot = -(np.roll(theta, 1) - theta + s_label * z)
    pivot /= np.sqrt(s_label**2 + 2.0 * se**2)
    q = np.quantile(pivot, [0.025, 0.975])
    nu = score.sampling_dof * ((label + 2 * sampling) / (2 * (label + sampling))) ** 2
    q[0] *= stats.t.ppf(0.025, nu) / stats.norm.ppf(0.025)
    sd = math.sqrt(label + 2.0 * sampling) / u
    interval = score.prediction_interval(0.95)
    assert interval.method == "log_bootstrap_t"
    np.testing.assert_allclose(interval, 1.0 - u * np.exp(-sd * q), rtol=1e-10)
    assert score.expected - interval.low > 1.5 * (interval.high - score.expected)
    again = pickle.loads(pickle.dumps(score)).prediction_interval(0.95)
    np.testing.assert_allclose(again, interval, rtol=1e-12)
    # the truth's and the remeasurement's stay Student's on the log scale
    truth = expected_r2_score(
        y, x, sigma=sigma, estimand="truth", test_set_sampling=True
    )
    assert truth.prediction_interval(0.95).method == "log_complement"


def test_forward_prediction_interval_holds_its_lower_tail():
    rng = np.random.default_rng(8)
    sets = draw("heavy", rng, REPLICATES, 100)
    new = draw("heavy", rng, TARGETS, 100)
    targets = np.sort(metric_value("heavy", "r2", new["noisy"], new["pred"]))
    below = above = 0.0
    for r in range(REPLICATES):
        score = expected_r2_score(
            sets["exact"][r],
            sets["pred"][r],
            sigma=sets["noise"][r],
            estimand="forward",
            test_set_sampling=True,
        )
        low, high = score.prediction_interval(0.95)
        below += np.searchsorted(targets, low) / TARGETS / REPLICATES
        above += (1.0 - np.searchsorted(targets, high, "right") / TARGETS) / REPLICATES
    assert below <= 0.045 and above <= 0.045
