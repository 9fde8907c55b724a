"""Seeded coverage simulations of the 95 % intervals (user guide: verification).

Each function builds one fixed problem, computes its interval, redraws the
labels ``n_draws`` times from the noise model and returns the fraction of
draws whose metric falls inside (and below / above) the interval. The metrics
on the draws are computed by independent vectorised formulas, checked against
scikit-learn on the first draws. ``python tests/_interval_coverage.py``
prints the tables of the verification page.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass

import numpy as np
from scipy import integrate
from scipy.special import ndtr
from sklearn import metrics as skm

from sklearn_noisy.metrics import (
    expected_accuracy_score,
    expected_balanced_accuracy_score,
    expected_brier_score_loss,
    expected_cohen_kappa_score,
    expected_f1_score,
    expected_log_loss,
    expected_matthews_corrcoef,
    expected_mean_absolute_error,
    expected_mean_squared_error,
    expected_precision_score,
    expected_r2_score,
    expected_recall_score,
    expected_roc_auc_score,
    expected_root_mean_squared_error,
    expected_specificity_score,
)

COUNT_METRICS = {
    "accuracy": (expected_accuracy_score, skm.accuracy_score),
    "precision": (expected_precision_score, skm.precision_score),
    "recall": (expected_recall_score, skm.recall_score),
    "f1": (expected_f1_score, skm.f1_score),
    "balanced_accuracy": (
        expected_balanced_accuracy_score,
        skm.balanced_accuracy_score,
    ),
    "matthews_corrcoef": (expected_matthews_corrcoef, skm.matthews_corrcoef),
}
LOSS_METRICS = {
    "brier_score_loss": (expected_brier_score_loss, skm.brier_score_loss),
    "log_loss": (expected_log_loss, skm.log_loss),
}
REGRESSION_METRICS = {
    "mean_squared_error": (expected_mean_squared_error, skm.mean_squared_error),
    "root_mean_squared_error": (
        expected_root_mean_squared_error,
        skm.root_mean_squared_error,
    ),
    "mean_absolute_error": (expected_mean_absolute_error, skm.mean_absolute_error),
    "r2": (expected_r2_score, skm.r2_score),
}
#: Flip probabilities of the classification table; "per-sample" draws
#: q_i ~ U(0.02, 0.3).
Q_SETTINGS = (0.02, 0.05, 0.1, 0.3, "per-sample")
#: Tolerance of "inside": the interval ends are atoms computed one way, the
#: draws' metrics another.
_TOL = 1e-9


def classification_problem(q_setting, *, seed=0, n_samples=20):
    """Labels (40 % positive), predictions with 4 errors, and q."""
    rng = np.random.default_rng(seed)
    y_true = (rng.random(n_samples) < 0.4).astype(int)
    y_true[:2] = [0, 1]
    y_pred = y_true.copy()
    y_pred[2:6] = 1 - y_pred[2:6]
    proba = np.clip(0.5 + (y_true - 0.5) * rng.uniform(0.1, 0.9, n_samples), 0.02, 0.98)
    proba[2:6] = 1.0 - proba[2:6]
    if q_setting == "per-sample":
        q = rng.uniform(0.02, 0.3, n_samples)
    else:
        q = float(q_setting)
    return y_true, y_pred, proba, q


def _count_values(name, observed, y_pred):
    """The metric of each row of ``observed`` (scikit-learn's conventions)."""
    pred = y_pred.astype(bool)[None, :]
    obs = observed.astype(bool)
    m = obs.shape[1]
    tp = (obs & pred).sum(axis=1).astype(float)
    s = obs.sum(axis=1).astype(float)
    n_pos = float(pred.sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        if name == "accuracy":
            return (obs == pred).mean(axis=1)
        if name == "precision":
            return tp / n_pos if n_pos else np.zeros_like(tp)
        if name == "recall":
            return np.where(s > 0, tp / s, 0.0)
        if name == "f1":
            return np.where(n_pos + s > 0, 2.0 * tp / (n_pos + s), 0.0)
        tn = (m - n_pos) - (s - tp)
        if name == "balanced_accuracy":
            both = 0.5 * (tp / s + tn / (m - s))
            return np.where(s == 0, tn / m, np.where(s == m, tp / m, both))
        fp, fn = n_pos - tp, s - tp
        denominator = np.sqrt(n_pos * (m - n_pos) * s * (m - s))
        return np.where(denominator > 0, (tp * tn - fp * fn) / denominator, 0.0)


def _loss_values(name, observed, proba):
    if name == "brier_score_loss":
        return ((observed - proba[None, :]) ** 2).mean(axis=1)
    p = np.clip(proba, 1e-15, 1 - 1e-15)[None, :]
    return -(observed * np.log(p) + (1 - observed) * np.log1p(-p)).mean(axis=1)


def _fractions(values, interval):
    below = float(np.mean(values < interval.low - _TOL))
    above = float(np.mean(values > interval.high + _TOL))
    return 1.0 - below - above, below, above


def classification_coverage(name, q_setting, *, n_draws, seed=0, check=20):
    """``(interval, coverage, below, above)`` of one classification setting."""
    y_true, y_pred, proba, q = classification_problem(q_setting, seed=seed)
    rng = np.random.default_rng(seed + 1)
    flips = rng.random((n_draws, y_true.size)) < np.broadcast_to(q, y_true.shape)
    observed = np.where(flips, 1 - y_true, y_true)
    if name in COUNT_METRICS:
        function, reference = COUNT_METRICS[name]
        score = function(y_true, y_pred, q=q, estimand="forward")
        values = _count_values(name, observed, y_pred)
        second = y_pred
    else:
        function, reference = LOSS_METRICS[name]
        score = function(y_true, proba, q=q, estimand="forward")
        values = _loss_values(name, observed, proba)
        second = proba
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for row, value in zip(observed[:check], values[:check], strict=True):
            kwargs = {"labels": [0, 1]} if name == "log_loss" else {}
            expected = reference(row, second, **kwargs)
            assert abs(expected - value) < 1e-12, (name, expected, value)
    interval = score.confidence_interval(0.95)
    return (interval, *_fractions(values, interval))


def regression_problem(n_samples, *, seed=0):
    """Heteroscedastic σ ~ U(0.2, 1.5); y_true ~ N(0, 4); residuals N(0, 0.25)."""
    rng = np.random.default_rng(seed)
    y_true = rng.normal(0.0, 2.0, n_samples)
    y_pred = y_true + rng.normal(0.0, 0.5, n_samples)
    sigma = rng.uniform(0.2, 1.5, n_samples)
    return y_true, y_pred, sigma


def regression_coverage(name, n_samples, *, n_draws, seed=0, method="auto", check=5):
    """``(interval, coverage, below, above)`` of one regression setting."""
    y_true, y_pred, sigma = regression_problem(n_samples, seed=seed)
    function, reference = REGRESSION_METRICS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        score = function(y_true, y_pred, sigma=sigma, estimand="forward")
    rng = np.random.default_rng(seed + 1)
    y = y_true + sigma * rng.standard_normal((n_draws, n_samples))
    error = y - y_pred
    if name == "mean_absolute_error":
        values = np.abs(error).mean(axis=1)
    else:
        values = (error * error).mean(axis=1)
        if name == "root_mean_squared_error":
            values = np.sqrt(values)
        elif name == "r2":
            total = ((y - y.mean(axis=1, keepdims=True)) ** 2).mean(axis=1)
            values = 1.0 - values / total
    for row, value in zip(y[:check], values[:check], strict=True):
        assert abs(reference(row, y_pred) - value) < 1e-9 * max(1.0, abs(value))
    interval = score.confidence_interval(0.95, method=method)
    return (interval, *_fractions(values, interval))


# --------------------------------------------------------------------------
# The coverage grid of issue 23: the whole experiment with a known truth, for
# every metric x estimand x interval source (populations, targets and rules:
# ``benchmarks/coverage_grid.py``, which prints the table; the tests:
# ``tests/test_coverage_grid.py``).

LEVEL = 0.95
COVERAGE_BOUNDS = (0.93, 0.97)
TAIL_MAX = 0.035
ONE_SIDED_MIN = 0.94
#: Tolerance of "inside": interval ends and targets are computed differently.
TOL = 1e-9
ESTIMANDS = ("truth", "remeasurement", "forward")
SOURCES = ("label_noise", "both", "prediction")

REGRESSION = {
    "mse": expected_mean_squared_error,
    "rmse": expected_root_mean_squared_error,
    "mae": expected_mean_absolute_error,
    "r2": expected_r2_score,
}
COUNTS = {
    "accuracy": expected_accuracy_score,
    "precision": expected_precision_score,
    "recall": expected_recall_score,
    "f1": expected_f1_score,
    "balanced_accuracy": expected_balanced_accuracy_score,
    "mcc": expected_matthews_corrcoef,
    "kappa": expected_cohen_kappa_score,
    "specificity": expected_specificity_score,
}
#: Metrics whose sampling variance is a closed form (per-sample terms, the
#: delta method of Takahashi et al., DeLong's): cheap. R² bootstraps.
CHEAP = {"mse", "rmse", "mae", *COUNTS, "roc_auc"}
POPULATIONS = ("gaussian", "heavy", "few", "binary", "roc", "skewed")
KIND = {
    "gaussian": "regression",
    "heavy": "regression",
    "few": "regression",
    "binary": "counts",
    "roc": "roc",
    "skewed": "regression",
}
#: The estimands of a population where not all: the skewed design's forward
#: intervals are exact (seconds each), its truth and remeasurement the point.
POPULATION_ESTIMANDS = {"skewed": ("truth", "remeasurement")}
#: Regression designs: true value, prediction, true label sigma (of x).
DESIGNS = {
    "gaussian": (lambda x: 1.5 * x + 0.3, lambda x: x, lambda x: 0.2 + 0.3 * abs(x)),
    "heavy": (
        lambda x: x + 0.3 + 0.3 * x**2,
        lambda x: x,
        lambda x: 0.3 + 0.2 * abs(x),
    ),
    "few": (
        lambda x: 1.5 * x + 0.3,
        lambda x: 1.3 * x + 0.2,
        lambda x: 0.2 + 0.3 * abs(x),
    ),
    # log-normal error and sigma, rising together: truth terms skew 6.8, kurtosis 102
    "skewed": (
        lambda x: x + 0.6 * (np.exp(0.4 * x) - 0.7),
        lambda x: x,
        lambda x: 0.3 * np.exp(x / 4),
    ),
}
P_POSITIVE, P_RIGHT, Q_MAX, Q_ROC, AUC_SHIFT = 0.4, 0.85, 0.3, 0.1, 1.2


def metric_functions(population: str) -> dict:
    kind = KIND[population]
    if kind == "regression":
        return REGRESSION
    if kind == "counts":
        return COUNTS
    return {"roc_auc": expected_roc_auc_score}


# --------------------------------------------------------------------------
# data


def draw(population: str, rng: np.random.Generator, reps: int, n: int) -> dict:
    """``reps`` test sets of ``n`` samples (rows): exact, noisy, pred, noise."""
    shape = (reps, n)
    kind = KIND[population]
    if kind == "regression":
        mu_f, pred_f, sigma_f = DESIGNS[population]
        x = rng.standard_normal(shape)
        exact, pred, sigma = mu_f(x), pred_f(x), sigma_f(x)
        if population == "few":
            readings = exact[..., None] + math.sqrt(2.0) * sigma[..., None] * (
                rng.standard_normal((*shape, 2))
            )
            noisy = readings.mean(axis=-1)
            given = np.abs(readings[..., 0] - readings[..., 1]) / 2.0
            return _data(exact, noisy, pred, sigma, given, dof=1.0)
        noisy = exact + sigma * rng.standard_normal(shape)
        return _data(exact, noisy, pred, sigma, sigma, dof=None)
    exact = (rng.random(shape) < P_POSITIVE).astype(np.int64)
    if kind == "counts":
        pred = np.where(rng.random(shape) < P_RIGHT, exact, 1 - exact)
        q = rng.uniform(0.0, Q_MAX, shape)
    else:
        pred = rng.normal(AUC_SHIFT * exact, 1.0)  # the scores
        q = np.full(shape, Q_ROC)
    noisy = np.where(rng.random(shape) < q, 1 - exact, exact)
    return _data(exact, noisy, pred, q, q, dof=None)


def _data(exact, noisy, pred, noise, given, dof):
    return {
        "exact": exact,
        "noisy": noisy,
        "pred": pred,
        "noise": noise,
        "given": given,
        "dof": dof,
    }


def fresh_labels(population, exact, noise, rng, size):
    """``size`` fresh label draws (rows) around one test set's exact values."""
    if KIND[population] == "regression":
        return exact + noise * rng.standard_normal((size, exact.size))
    flips = rng.random((size, exact.size)) < noise
    return np.where(flips, 1 - exact, exact)


# --------------------------------------------------------------------------
# the metrics, vectorised over the last axis, independently of the library


def regression_metric(name, y, pred):
    d = y - pred
    if name == "mse":
        return np.mean(d * d, axis=-1)
    if name == "rmse":
        return np.sqrt(np.mean(d * d, axis=-1))
    if name == "mae":
        return np.mean(np.abs(d), axis=-1)
    centred = y - np.mean(y, axis=-1, keepdims=True)
    return 1.0 - np.sum(d * d, axis=-1) / np.sum(centred * centred, axis=-1)


def count_metric(name, tp, fp, fn, tn):
    """scikit-learn's definitions (0 on a zero division) of the counts."""
    total = tp + fp + fn + tn
    with np.errstate(divide="ignore", invalid="ignore"):
        if name == "accuracy":
            value = (tp + tn) / total
        elif name == "precision":
            value = tp / (tp + fp)
        elif name == "recall":
            value = tp / (tp + fn)
        elif name == "specificity":
            value = tn / (tn + fp)
        elif name == "f1":
            value = 2 * tp / (2 * tp + fp + fn)
        elif name == "balanced_accuracy":
            value = 0.5 * (tp / (tp + fn) + tn / (tn + fp))
        elif name == "mcc":
            value = (tp * tn - fp * fn) / np.sqrt(
                (tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)
            )
        else:  # Cohen's kappa
            observed = (tp + tn) / total
            chance = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / total**2
            value = (observed - chance) / (1.0 - chance)
    return np.where(np.isfinite(value), value, 0.0)


def binary_counts(y, pred):
    y, p = y.astype(bool), pred.astype(bool)
    return (
        np.sum(y & p, axis=-1).astype(float),
        np.sum(~y & p, axis=-1).astype(float),
        np.sum(y & ~p, axis=-1).astype(float),
        np.sum(~y & ~p, axis=-1).astype(float),
    )


def roc_auc(y, scores):
    """Mann-Whitney AUC (continuous scores, no ties) over the last axis."""
    ranks = np.argsort(np.argsort(scores, axis=-1), axis=-1) + 1.0
    positives = np.sum(y, axis=-1).astype(float)
    rank_sum = np.sum(y * ranks, axis=-1)
    n = y.shape[-1]
    return (rank_sum - positives * (positives + 1) / 2) / (positives * (n - positives))


def metric_value(population, name, y, pred):
    kind = KIND[population]
    if kind == "regression":
        return regression_metric(name, y, pred)
    if kind == "counts":
        return count_metric(name, *binary_counts(y, pred))
    return roc_auc(y, pred)


# --------------------------------------------------------------------------
# population values


def _normal_mean(f):
    """E f(x), x ~ N(0, 1), over |x| <= 40 (beyond, an exponential f overflows;
    the mass there is below 1e-300); the kink of |x| at 0 a break point."""
    value, _ = integrate.quad(
        lambda x: f(x) * math.exp(-x * x / 2) / math.sqrt(2 * math.pi),
        -40.0,
        40.0,
        points=(0.0,),
        limit=200,
        epsabs=1e-12,
        epsrel=1e-12,
    )
    return value


def _expected_abs(d, s):
    """E|d + s z|, z ~ N(0, 1) (elementwise)."""
    a = d / s
    return s * 2.0 * np.exp(-a * a / 2) / math.sqrt(2 * math.pi) + d * (
        2.0 * ndtr(a) - 1.0
    )


def population_values(population: str) -> dict:
    """``{metric: {"truth": ..., "remeasurement": ...}}``; forward = remeasurement."""
    kind = KIND[population]
    if kind == "regression":
        mu_f, pred_f, sigma_f = DESIGNS[population]
        ed2 = _normal_mean(lambda x: (mu_f(x) - pred_f(x)) ** 2)
        es2 = _normal_mean(lambda x: sigma_f(x) ** 2)
        var_mu = _normal_mean(lambda x: mu_f(x) ** 2) - _normal_mean(mu_f) ** 2
        mae = _normal_mean(
            lambda x: float(_expected_abs(mu_f(x) - pred_f(x), sigma_f(x)))
        )
        values = {
            "mse": {"truth": ed2, "remeasurement": ed2 + es2},
            "rmse": {"truth": math.sqrt(ed2), "remeasurement": math.sqrt(ed2 + es2)},
            "mae": {"truth": _normal_mean(lambda x: abs(mu_f(x) - pred_f(x)))},
            "r2": {
                "truth": 1.0 - ed2 / var_mu,
                "remeasurement": 1.0 - (ed2 + es2) / (var_mu + es2),
            },
        }
        values["mae"]["remeasurement"] = mae
    elif kind == "counts":
        pi, a, q = P_POSITIVE, P_RIGHT, Q_MAX / 2
        tp, fn, fp, tn = pi * a, pi * (1 - a), (1 - pi) * (1 - a), (1 - pi) * a
        noisy = (
            tp * (1 - q) + fp * q,
            fp * (1 - q) + tp * q,
            fn * (1 - q) + tn * q,
            tn * (1 - q) + fn * q,
        )
        values = {
            name: {
                "truth": float(count_metric(name, tp, fp, fn, tn)),
                "remeasurement": float(count_metric(name, *noisy)),
            }
            for name in COUNTS
        }
    else:
        auc = float(ndtr(AUC_SHIFT / math.sqrt(2.0)))
        pi, q = P_POSITIVE, Q_ROC
        pos = pi * (1 - q) / (pi * (1 - q) + (1 - pi) * q)
        neg = pi * q / (pi * q + (1 - pi) * (1 - q))
        # P(score of a noisy positive > score of a noisy negative)
        noisy = (
            pos * neg * 0.5
            + pos * (1 - neg) * auc
            + (1 - pos) * neg * (1 - auc)
            + (1 - pos) * (1 - neg) * 0.5
        )
        values = {"roc_auc": {"truth": auc, "remeasurement": noisy}}
    for entry in values.values():
        entry["forward"] = entry.get("remeasurement", math.nan)
    return values


def check_population(population: str, seed: int, size: int = 2_000_000) -> list:
    """The population values against one sample of ``size``: lines to print."""
    rng = np.random.default_rng([seed, 99, POPULATIONS.index(population)])
    data = draw(population, rng, 1, size)
    lines = []
    for name, entry in population_values(population).items():
        sample = {
            "truth": float(
                metric_value(population, name, data["exact"], data["pred"])[0]
            ),
            "remeasurement": float(
                metric_value(population, name, data["noisy"], data["pred"])[0]
            ),
        }
        cells = "  ".join(
            f"{est[:5]} {entry[est]:.5f} (2e6: {sample[est]:.5f})"
            for est in ("truth", "remeasurement")
        )
        lines.append(f"  {population:<9}{name:<18}{cells}")
    return lines


# --------------------------------------------------------------------------
# one metric x estimand task


@dataclass(frozen=True)
class Task:
    population: str
    n: int
    metric: str
    estimand: str
    replicates: int
    sampling_replicates: int
    draws: int
    seed: int
    seconds: float
    #: Only the label-noise intervals (no test-set sampling): a quick check.
    label_noise_only: bool = False
    #: Forward: targets per replicate (fresh label draws; new test sets), which
    #: measure the same conditional coverage with more trials per interval.
    forward_draws: int = 1


def _call(task: Task, data: dict, r: int, sampling: bool):
    function = metric_functions(task.population)[task.metric]
    y = data["exact" if task.estimand == "forward" else "noisy"][r]
    kind = KIND[task.population]
    kwargs = {"estimand": task.estimand, "test_set_sampling": sampling}
    if kind == "regression":
        kwargs["sigma"] = data["given"][r]
        if data["dof"] is not None:
            kwargs["sigma_dof"] = data["dof"]
    elif kind == "counts":
        kwargs["q"] = data["given"][r]
    else:
        kwargs["q"] = Q_ROC
    return function(y, data["pred"][r], **kwargs)


def _label_noise_target(task: Task, data: dict, r: int, rng) -> float | np.ndarray:
    pop, name = task.population, task.metric
    exact, pred, noise = data["exact"][r], data["pred"][r], data["noise"][r]
    if task.estimand == "truth":
        return float(metric_value(pop, name, exact, pred))
    if task.estimand == "forward":  # fresh noisy draws around the exact values
        labels = fresh_labels(pop, exact, noise, rng, task.forward_draws)
        return metric_value(pop, name, labels, pred)
    # remeasurement: the mean over fresh label draws of this test set
    if name == "mse":
        return float(np.mean((exact - pred) ** 2 + noise**2))
    if name == "mae":
        return float(np.mean(_expected_abs(exact - pred, noise)))
    if name == "accuracy":
        return float(np.mean(np.where(exact == pred, 1.0 - noise, noise)))
    labels = fresh_labels(pop, exact, noise, rng, task.draws)
    return float(np.mean(metric_value(pop, name, labels, pred)))


def _intervals(score, source: str, check: bool) -> tuple:
    """The two-sided interval and the one-sided ones at ``LEVEL`` (as pairs).

    The one-sided limits are read off ``confidence_interval(2 LEVEL - 1)``, as
    ``alternative=`` defines them: one call instead of two (an exact-distribution
    interval, e.g. the forward R²'s, costs up to 0.4 s). ``check``: also call
    ``alternative="less"`` and ``"greater"`` and fail if they differ.
    """
    two = score.confidence_interval(LEVEL, source=source)
    ninety = score.confidence_interval(2 * LEVEL - 1, source=source)
    if check:
        less = score.confidence_interval(LEVEL, source=source, alternative="less")
        greater = score.confidence_interval(LEVEL, source=source, alternative="greater")
        if not (
            math.isclose(less[1], ninety[1], rel_tol=1e-9, abs_tol=1e-12)
            and math.isclose(greater[0], ninety[0], rel_tol=1e-9, abs_tol=1e-12)
        ):
            raise AssertionError(
                f"alternative= differs from the 90 % ends: {less}, {greater}, {ninety}"
            )
    return two, ninety, ninety


def _one_sided(interval_less, interval_greater, target):
    return target <= interval_less[1] + TOL, target >= interval_greater[0] - TOL


def run_task(task: Task) -> tuple[list[dict], list[str], float]:
    """The rows (one per source) of one metric x estimand, its anomalies, time."""
    start = time.perf_counter()
    pop_index = POPULATIONS.index(task.population)
    rng = np.random.default_rng([task.seed, pop_index, task.n])
    data = draw(task.population, rng, task.replicates, task.n)
    new = draw(task.population, rng, task.replicates, task.n)
    target_rng = np.random.default_rng([task.seed, pop_index, task.n, 1])
    population = population_values(task.population)[task.metric][task.estimand]
    new_key = "exact" if task.estimand == "truth" else "noisy"
    new_metric = metric_value(task.population, task.metric, new[new_key], new["pred"])
    new_rng = np.random.default_rng([task.seed, pop_index, task.n, 2])
    # per source: rows of (low, high, below, above, less ok, greater ok)
    outcome = {source: [] for source in SOURCES}
    anomalies: dict[str, int] = {}
    first_error = {}

    def note(kind, message=None):
        anomalies[kind] = anomalies.get(kind, 0) + 1
        if message is not None:
            first_error.setdefault(kind, message)

    n_sampling = (
        task.replicates
        if task.metric in CHEAP
        else min(task.sampling_replicates, task.replicates)
    )
    if task.label_noise_only:
        n_sampling = 0
    for r in range(task.replicates):
        if time.perf_counter() - start > task.seconds:
            note(f"time budget {task.seconds:g} s reached after {r} replicates")
            break
        sampling = r < n_sampling
        target_ln = _label_noise_target(task, data, r, target_rng)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                score = _call(task, data, r, sampling)
                intervals = {"label_noise": _intervals(score, "label_noise", r == 0)}
                if sampling:
                    intervals["both"] = _intervals(score, "both", r == 0)
                    two_sided = score.prediction_interval(LEVEL)
                    ninety = score.prediction_interval(2 * LEVEL - 1)
                    intervals["prediction"] = (two_sided, ninety, ninety)
            for warning in caught:
                note(f"warning {warning.category.__name__}", str(warning.message)[:90])
        except Exception as error:  # counted and reported
            note(f"error {type(error).__name__}", str(error)[:120])
            continue
        if not math.isfinite(score.expected):
            note("estimate not finite")
        targets = {
            "label_noise": target_ln,
            "both": population,
            "prediction": new_metric[r],
        }
        if task.forward_draws > 1 and sampling:  # new test sets, noisy labels
            sets = draw(task.population, new_rng, task.forward_draws, task.n)
            targets["prediction"] = metric_value(
                task.population, task.metric, sets["noisy"], sets["pred"]
            )
        for source, (two, less, greater) in intervals.items():
            low, high = float(two[0]), float(two[1])
            if not (math.isfinite(low) and math.isfinite(high)):
                note(f"{source}: interval end not finite")
            if not (low - TOL <= score.expected <= high + TOL):
                note(f"{source}: estimate outside its own interval")
            target = targets[source]
            outcome[source].append(  # the fractions of the targets
                [
                    *(
                        np.mean(x)
                        for x in (
                            target < low - TOL,
                            target > high + TOL,
                            *_one_sided(less, greater, target),
                        )
                    ),
                    getattr(two, "content", math.nan),  # an exact lattice's
                ]
            )
    rows = []
    for source in SOURCES:
        hits = np.array(outcome[source], dtype=float).reshape(-1, 5)
        count = hits.shape[0]
        content = float(hits[:, 4].mean()) if count else math.nan
        hits = hits[:, :4]
        below, above, less, greater = hits.mean(axis=0) if count else [math.nan] * 4
        # from the counts: 1 − 0.0085 − 0.0215 is 0.9700000000000001
        coverage = (count - hits[:, :2].sum()) / count if count else math.nan
        se = math.sqrt(max(coverage * (1 - coverage), 1e-12) / count) if count else 0
        if task.forward_draws > 1 and count > 1:  # clustered: the replicates'
            se = float(np.std(1.0 - hits[:, :2].sum(axis=1), ddof=1)) / count**0.5
        rows.append(
            {
                "population": task.population,
                "n": task.n,
                "metric": task.metric,
                "estimand": task.estimand,
                "source": source,
                "replicates": count,
                "coverage": coverage,
                "se": se if count else math.nan,
                "draws": task.forward_draws if task.estimand == "forward" else 1,
                "below": below,
                "above": above,
                "less": less,
                "greater": greater,
                "content": content,
            }
        )
    notes = [
        f"{task.population} n={task.n} {task.metric} {task.estimand}: {kind} x{count}"
        + (f" ({first_error[kind]})" if kind in first_error else "")
        for kind, count in anomalies.items()
    ]
    return rows, notes, time.perf_counter() - start


# --------------------------------------------------------------------------
# the table


def verdict(row: dict) -> str:
    """PASS or FAIL with the reasons. An exact interval on a lattice states its
    content (at least the level, often more): where every replicate's did,
    the coverage may reach their mean plus 5 Monte Carlo SEs above 97 % (the
    issue's "or the exact content stated, for lattices")."""
    if row["estimand"] == "forward" and row["source"] == "both":
        return "info"
    if not row["replicates"]:
        return "-"
    reasons = []
    low, high = COVERAGE_BOUNDS
    content = row.get("content", math.nan)
    if math.isfinite(content):
        high = max(high, content + 5 * row["se"])
    if row["coverage"] < low:
        reasons.append("cov<93")
    elif row["coverage"] > high:
        reasons.append("cov>97")
    if row["below"] > TAIL_MAX:
        reasons.append("below")
    if row["above"] > TAIL_MAX:
        reasons.append("above")
    if row["less"] < ONE_SIDED_MIN:
        reasons.append("less")
    if row["greater"] < ONE_SIDED_MIN:
        reasons.append("greater")
    return "PASS" if not reasons else "FAIL " + ",".join(reasons)


def _main(n_draws=200_000):  # pragma: no cover - prints the docs' tables
    print("classification, M = 20: content / coverage (below, above), %")
    for name in (*COUNT_METRICS, *LOSS_METRICS):
        cells = []
        for q in Q_SETTINGS:
            interval, cover, below, above = classification_coverage(
                name, q, n_draws=n_draws
            )
            cells.append(
                f"{100 * interval.content:.1f} / {100 * cover:.1f} "
                f"({100 * below:.1f}, {100 * above:.1f})"
            )
        print(name, *cells, sep=" | ")
    print("regression: exact coverage (below, above) | normal coverage (below, above)")
    for name in REGRESSION_METRICS:
        for m in (8, 20):
            cells = []
            for method in ("auto", "normal"):
                interval, cover, below, above = regression_coverage(
                    name, m, n_draws=n_draws, method=method
                )
                cells.append(
                    f"{interval.method} [{interval.low:.3g}, {interval.high:.3g}] "
                    f"{100 * cover:.1f} ({100 * below:.1f}, {100 * above:.1f})"
                )
            print(name, m, *cells, sep=" | ")


if __name__ == "__main__":  # pragma: no cover
    _main()
