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
label_noise     truth: the metric on THIS test      the metric on fresh noisy
                set's true labels; remeasurement:   draws around the exact values
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
prediction      the metric of an independent new    the metric of new test sets
                test set: against its true values   on their noisy labels
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
   (P(true 1 | noisy 1) = 0.36/0.42, P(true 1 | noisy 0) = 0.04/0.58);
6. ``skewed``: a second heavy-tailed design, log-normal where ``heavy`` is
   quadratic: ``mu = x + 0.6 (e^{0.4 x} - 0.7)``, ``y_hat = x``, ``sigma =
   0.3 e^{x/4}`` (known; log-normal, rising with the error): the error ``d =
   0.6 (e^{0.4 x} - 0.7)`` changes sign at ``x = -0.89`` and has one long
   tail; the truth MSE's per-sample terms ``(y - y_hat)^2 - sigma^2`` have
   skew 6.8 and kurtosis 102 (``heavy``'s: 7.5 and 118). Truth MSE
   ``0.36 (e^{0.32} - 1.4 e^{0.08} + 0.49) = 0.1262``, ``E sigma^2 = 0.09
   e^{1/8} = 0.1020``, ``Var mu = 1 + 0.36 (e^{0.32} - e^{0.16}) + 0.48
   e^{0.08} = 1.593``. Truth and remeasurement only (``POPULATION_ESTIMANDS``:
   the forward estimand's exact intervals cost seconds each).

The ratio metrics' population values are the metrics of the population's
confusion fractions (the limit of large test sets; the bias of a finite test
set counts against the "both" interval).

PASS per cell: two-sided coverage in [93 %, 97 %], each tail (below: target <
low; above: target > high) at most 3.5 %, each one-sided coverage at least
94 %. The Monte Carlo standard error of each coverage is printed (1.5 points
at 200 replicates, 0.5 at 2000); a quick run's verdicts are indicative only.
A forward interval is conditional on its test set: each replicate checks it
against ``--forward-draws`` targets (fresh label draws around the exact values;
new test sets), and the SE of its coverage is that of the mean of the
replicates' hit fractions (clustered by replicate).

Cost: the library call per replicate, and the forward estimand's exact
intervals. R^2, which has no closed-form sampling variance, bootstraps it
(200 evaluations, about 1 s per call at n = 100 on a loaded 2-core machine);
its ``both`` and ``prediction`` cells therefore use ``--sampling-replicates``
(quick: 40); every other cell uses ``--replicates`` (the count metrics and
ROC AUC have closed forms, Takahashi et al.'s and DeLong's: milliseconds a
call, about 10 s per 2000 replicates of a metric x estimand task). The
forward estimand's ``confidence_interval`` is computed from the exact
distribution: 0.01-0.4 s an interval for MSE, RMSE, R^2 and MAE at
n = 100. ``--task-seconds`` (quick: 20) stops a metric x
estimand task early; the ``reps`` column shows how many replicates each cell
got, and the anomalies list names the tasks that were stopped. A full run
(2000 replicates each, n = 100 and 300, no time limit) takes many hours on
one core, most of it in R^2's bootstrap and the forward exact intervals;
``--jobs`` spreads the metric x estimand tasks over processes (data and
targets are identical in every task: common random numbers, seeded by
``--seed``).

Anomalies are counted, not fatal: exceptions of the library call, warnings, a
non-finite estimate or interval end, and an estimate outside its own two-sided
interval (expected where a truth estimate falls beyond the metric's range and
the unified interval ends at the bound).

The simulation is ``tests/_interval_coverage.py``'s, shared with the test
``tests/test_coverage_grid.py`` (full grid with ``--run-slow``); this script
prints the table.

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
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from _interval_coverage import (
    ESTIMANDS,
    POPULATION_ESTIMANDS,
    POPULATIONS,
    SOURCES,
    Task,
    check_population,
    metric_functions,
    run_task,
    verdict,
)


def target_label(row: dict) -> str:
    if row["source"] == "label_noise":
        return {
            "truth": "this set, true",
            "remeasurement": "this set, E remeas",
            "forward": "fresh draws (pred)",
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
        help="'both'/'prediction' cells of R^2 (bootstrap; quick 40, full 2000)",
    )
    parser.add_argument("--n", type=int, nargs="+", help="test-set sizes")
    parser.add_argument("--draws", type=int, default=400, help="re-measurement draws")
    parser.add_argument(
        "--forward-draws",
        type=int,
        default=100,
        help="forward: targets per replicate (fresh label draws, new test sets)",
    )
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
        Task(
            *(pop, n, metric, est, replicates, sampling, args.draws, args.seed),
            seconds,
            forward_draws=args.forward_draws if est == "forward" else 1,
        )
        for pop in POPULATIONS
        for n in sizes
        for metric, function in metric_functions(pop).items()
        for est in POPULATION_ESTIMANDS.get(pop, ESTIMANDS)
        if est in function.estimands and wanted(pop, n, metric, est)
    ]
    print(
        f"coverage grid: {len(tasks)} metric x estimand tasks, {replicates} replicates "
        f"({sampling} for the sampling cells of R^2), n = {sizes}, "
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
        "prediction_interval(0.90). SE: Monte Carlo SE of cov, points (forward: "
        "from the replicates' hit fractions)."
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
