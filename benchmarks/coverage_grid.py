"""Coverage grid: does every interval hold in each tail? (issue 23; measures only)

A seeded simulation of the whole experiment with a known truth, in the manner
of ``tests/test_error_budget_coverage.py``, for every metric x estimand x
interval source. It changes nothing in the library and uses its public API only
(``sklearn_noisy.metrics.expected_*``). Per replicate it draws a test set of
``n`` samples from a population, the test set's labels around the true values,
an independent new test set, and calls the library once per metric and
estimand; from that one result it reads

* ``label_noise``: ``confidence_interval(0.95)``;
* ``both``: ``confidence_interval(0.95, source="both")`` (``test_set_sampling``);
* ``prediction``: ``prediction_interval(0.95)``;

and, for each, the one-sided ``alternative="less"`` (an upper limit) and
``"greater"`` (a lower limit) intervals at 0.95. ``prediction_interval`` has no
``alternative``: its one-sided limits are the ends of ``prediction_interval(0.90)``,
which is how ``confidence_interval`` builds its own. ``source="sampling"`` is
not in the grid (its target, the sample-averaged estimate, is no observable).

The targets (what each interval is checked against):

==============  ==================================  =============================
source          truth / remeasurement               forward (``y_true`` exact)
==============  ==================================  =============================
label_noise     truth: the metric on THIS test      the metric on one fresh noisy
                set's true labels; remeasurement:   draw around the exact values
                the mean of the metric over fresh   (a prediction-type statement:
                label draws of this test set        "pred" in the table)
                (analytic for MSE, MAE, accuracy;
                else ``--draws`` draws, default 400)
both            the population value of the         the population value of the
                estimand's target                   forward target; "info" only:
                                                    the forward estimate has no
                                                    label noise, its ``"both"``
                                                    interval is no confidence
                                                    interval (user guide)
prediction      the metric of an independent new    the metric of the new test
                test set: against its true values   set on its noisy labels
                (truth), on its noisy labels
                (remeasurement)
==============  ==================================  =============================

The populations (``x ~ N(0, 1)`` for the regressions; the population values are
computed by quadrature over ``x``, closed forms below, and printed at the start
beside a check on one large sample of 2e6):

1. ``gaussian``: true value ``mu = 1.5 x + 0.3``, model ``y_hat = x``, Gaussian
   label noise ``sigma = 0.2 + 0.3 |x|`` (known): truth MSE ``0.34``,
   ``E sigma^2 = 0.13 + 0.12 sqrt(2/pi) = 0.2257``, ``Var mu = 2.25``;
2. ``heavy``: ``mu = x + 0.3 + 0.3 x^2``, ``y_hat = x``, ``sigma = 0.3 + 0.2 |x|``
   (known): the error ``d = 0.3 (1 + x^2)`` is right-skewed, truth MSE
   ``0.09 E(1 + x^2)^2 = 0.54``, ``E sigma^2 = 0.13 + 0.12 sqrt(2/pi)``,
   ``Var mu = 1.18``;
3. ``few``: as 1 with a better model ``y_hat = 1.3 x + 0.2`` (truth MSE 0.05, about
   0.22 x the mean squared standard error 0.2257) and sigma ESTIMATED from 2
   readings: each reading ``mu + sqrt(2) sigma z``, the label is their mean
   (standard error ``sigma``), ``sigma_hat = |r1 - r2| / 2`` its estimated
   standard error, passed with ``sigma_dof=1``. The forward estimand gets the
   exact ``mu`` with ``sigma_hat`` (it takes sigma as given); every target's
   fresh labels use the true ``sigma``;
4. ``binary``: class 1 with probability 0.4, the model right with probability
   0.85, per-sample flips ``q_i ~ U(0, 0.3)`` given to the library: population
   confusion fractions TP 0.34, FN 0.06, FP 0.09, TN 0.51 (truth) and, with
   ``E q = 0.15``, 0.3025, 0.1425, 0.1275, 0.4275 (noisy);
5. ``roc``: classes as 4, scores ``N(1.2 y, 1)``, constant ``q = 0.1``: truth AUC
   ``Phi(1.2 / sqrt 2) = 0.8018``; the noisy labels' AUC mixes the classes
   (P(true 1 | noisy 1) = 0.36/0.42, P(true 1 | noisy 0) = 0.04/0.58).

The ratio metrics' population values are the metrics of the population's
confusion fractions (the limit of large test sets; the bias of a finite test
set counts against the "both" interval).

PASS per cell: two-sided coverage in [93 %, 97 %], each tail (below: target <
low; above: target > high) at most 3.5 %, each one-sided coverage at least
94 %. The Monte Carlo standard error of each coverage is printed (1.5 points
at 200 replicates, 0.5 at 2000); a quick run's verdicts are indicative only.

Cost: the library call per replicate, and the forward estimand's exact
intervals. The metrics without a per-sample-terms rule (R^2, the count ratio
metrics, ROC AUC) bootstrap their sampling variance (200 evaluations):
0.04-1.5 s per call at n = 100 on a loaded 2-core machine, about 10 s per
replicate for all of them. Their ``both`` and ``prediction`` cells therefore
use ``--sampling-replicates`` (quick: 40); every other cell uses
``--replicates``. The forward estimand's ``confidence_interval`` is computed
from the exact distribution: 0.15-0.3 s an interval for MSE, RMSE and R^2,
about 6 s for MAE at n = 100. ``--task-seconds`` (quick: 20) stops a metric x
estimand task early; the ``reps`` column shows how many replicates each cell
got, and the anomalies list names the tasks that were stopped. A full run
(2000 replicates each, n = 100 and 300, no time limit) takes on the order of
days on one core, most of it in the forward MAE; ``--jobs`` spreads the metric
x estimand tasks over processes (data and targets are identical in every task:
common random numbers, seeded by ``--seed``).

Anomalies are counted, not fatal: exceptions of the library call, warnings, a
non-finite estimate or interval end, and an estimate outside its own two-sided
interval (expected where a truth estimate falls beyond the metric's range and
the unified interval ends at the bound).

Usage::

    python benchmarks/coverage_grid.py --quick            # a few minutes
    python benchmarks/coverage_grid.py --quick --only roc
    python benchmarks/coverage_grid.py --jobs 8           # full: 2000 replicates
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
from scipy import integrate
from scipy.special import ndtr

from sklearn_noisy.metrics import (
    expected_accuracy_score,
    expected_balanced_accuracy_score,
    expected_cohen_kappa_score,
    expected_f1_score,
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
#: Metrics whose sampling variance is a per-sample-terms (or delta) rule: cheap.
CHEAP = {"mse", "rmse", "mae", "accuracy"}
POPULATIONS = ("gaussian", "heavy", "few", "binary", "roc")
KIND = {
    "gaussian": "regression",
    "heavy": "regression",
    "few": "regression",
    "binary": "counts",
    "roc": "roc",
}
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
    value, _ = integrate.quad(
        lambda x: f(x) * math.exp(-x * x / 2) / math.sqrt(2 * math.pi),
        -math.inf,
        math.inf,
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


def _label_noise_target(task: Task, data: dict, r: int, rng) -> float:
    pop, name = task.population, task.metric
    exact, pred, noise = data["exact"][r], data["pred"][r], data["noise"][r]
    if task.estimand == "truth":
        return float(metric_value(pop, name, exact, pred))
    if task.estimand == "forward":  # one fresh noisy draw around the exact values
        return float(
            metric_value(pop, name, fresh_labels(pop, exact, noise, rng, 1), pred)[0]
        )
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
    interval, e.g. the forward MAE's, costs seconds). ``check``: also call
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
            "prediction": float(new_metric[r]),
        }
        for source, (two, less, greater) in intervals.items():
            low, high = float(two[0]), float(two[1])
            if not (math.isfinite(low) and math.isfinite(high)):
                note(f"{source}: interval end not finite")
            if not (low - TOL <= score.expected <= high + TOL):
                note(f"{source}: estimate outside its own interval")
            target = targets[source]
            outcome[source].append(
                (
                    target < low - TOL,
                    target > high + TOL,
                    *_one_sided(less, greater, target),
                )
            )
    rows = []
    for source in SOURCES:
        hits = np.array(outcome[source], dtype=float).reshape(-1, 4)
        count = hits.shape[0]
        below, above, less, greater = hits.mean(axis=0) if count else [math.nan] * 4
        coverage = 1.0 - below - above
        rows.append(
            {
                "population": task.population,
                "n": task.n,
                "metric": task.metric,
                "estimand": task.estimand,
                "source": source,
                "replicates": count,
                "coverage": coverage,
                "se": math.sqrt(max(coverage * (1 - coverage), 1e-12) / count)
                if count
                else math.nan,
                "below": below,
                "above": above,
                "less": less,
                "greater": greater,
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
    if row["estimand"] == "forward" and row["source"] == "both":
        return "info"
    if not row["replicates"]:
        return "-"
    reasons = []
    low, high = COVERAGE_BOUNDS
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


def target_label(row: dict) -> str:
    if row["source"] == "label_noise":
        return {
            "truth": "this set, true",
            "remeasurement": "this set, E remeas",
            "forward": "fresh draw (pred)",
        }[row["estimand"]]
    if row["source"] == "both":
        return "population" + (" (not CI)" if row["estimand"] == "forward" else "")
    return "new set, " + ("true" if row["estimand"] == "truth" else "noisy")


def format_table(rows: list[dict]) -> str:
    header = (
        f"{'population':<10}{'n':>4} {'metric':<18}{'estimand':<14}{'source':<12}"
        f"{'target':<22}{'reps':>5}{'cov %':>7}{'SE':>5}{'below':>7}{'above':>7}"
        f"{'less':>7}{'greater':>8}  verdict"
    )
    lines = [header, "-" * len(header)]
    for row in rows:
        pct = {
            key: f"{100 * row[key]:.1f}" if row["replicates"] else "-"
            for key in ("coverage", "se", "below", "above", "less", "greater")
        }
        lines.append(
            f"{row['population']:<10}{row['n']:>4} {row['metric']:<18}"
            f"{row['estimand']:<14}{row['source']:<12}{target_label(row):<22}"
            f"{row['replicates']:>5}{pct['coverage']:>7}{pct['se']:>5}"
            f"{pct['below']:>7}{pct['above']:>7}{pct['less']:>7}{pct['greater']:>8}"
            f"  {verdict(row)}"
        )
    return "\n".join(lines)


def _cell_name(population, n, metric, estimand, source):
    return f"{population} n={n} {metric} {estimand} {source}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="200/40 replicates, n=100, 20 s a task"
    )
    parser.add_argument(
        "--replicates", type=int, help="per cell (quick 200, full 2000)"
    )
    parser.add_argument(
        "--sampling-replicates",
        type=int,
        help="'both'/'prediction' cells of the bootstrap metrics (quick 40, full 2000)",
    )
    parser.add_argument("--n", type=int, nargs="+", help="test-set sizes")
    parser.add_argument("--draws", type=int, default=400, help="re-measurement draws")
    parser.add_argument("--only", help="keep the cells whose name contains this")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--task-seconds",
        type=float,
        help="stop a metric x estimand task after this long (quick 20, full none)",
    )
    args = parser.parse_args(argv)
    replicates = args.replicates or (200 if args.quick else 2000)
    sampling = args.sampling_replicates or (40 if args.quick else 2000)
    sizes = args.n or ([100] if args.quick else [100, 300])
    seconds = args.task_seconds or (20.0 if args.quick else math.inf)
    start = time.perf_counter()

    def wanted(*key):
        return args.only is None or any(
            args.only in _cell_name(*key, source) for source in SOURCES
        )

    tasks = [
        Task(pop, n, metric, est, replicates, sampling, args.draws, args.seed, seconds)
        for pop in POPULATIONS
        for n in sizes
        for metric, function in metric_functions(pop).items()
        for est in ESTIMANDS
        if est in function.estimands and wanted(pop, n, metric, est)
    ]
    print(
        f"coverage grid: {len(tasks)} metric x estimand tasks, {replicates} replicates "
        f"({sampling} for the sampling cells of the bootstrap metrics), n = {sizes}, "
        f"seed {args.seed}"
    )
    print("population values (quadrature / closed form; one sample of 2e6 beside):")
    for pop in dict.fromkeys(task.population for task in tasks):
        print("\n".join(check_population(pop, args.seed)))
    sys.stdout.flush()
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            results = list(pool.map(run_task, tasks))
    else:
        results = []
        for task in tasks:
            results.append(run_task(task))
            print(
                f"  {task.population} n={task.n} {task.metric} {task.estimand}: "
                f"{results[-1][2]:.1f} s",
                file=sys.stderr,
                flush=True,
            )
    rows = [
        row
        for task_rows, _, _ in results
        for row in task_rows
        if args.only is None
        or args.only
        in _cell_name(
            row["population"], row["n"], row["metric"], row["estimand"], row["source"]
        )
    ]
    print(format_table(rows))
    verdicts = [verdict(row) for row in rows]
    print(
        f"\n{sum(v == 'PASS' for v in verdicts)} PASS, "
        f"{sum(v.startswith('FAIL') for v in verdicts)} FAIL, "
        f"{sum(v == 'info' for v in verdicts)} info (of {len(rows)} cells). "
        "cov/below/above: the two-sided 95 % interval (below: target < low); "
        "less/greater: alternative='less' (target <= upper limit) and 'greater' "
        "(target >= lower limit) at 95 %; prediction: the ends of "
        "prediction_interval(0.90). SE: Monte Carlo SE of cov, points."
    )
    notes = [note for _, task_notes, _ in results for note in task_notes]
    if notes:
        print("\nanomalies (counts over replicates):")
        print("\n".join(f"  {note}" for note in notes))
    slowest = sorted(
        zip(tasks, (t for _, _, t in results), strict=True), key=lambda p: -p[1]
    )[:5]
    print(
        "\nslowest tasks: "
        + ", ".join(
            f"{t.population} {t.metric} {t.estimand} {s:.0f} s" for t, s in slowest
        )
    )
    print(f"total {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
