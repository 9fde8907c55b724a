"""The coverage grid of issue 23: does every 95 % interval hold in each tail?

The whole experiment simulated with a known truth (``tests/_interval_coverage.py``,
populations and targets in ``benchmarks/coverage_grid.py``): per cell (metric x
estimand x interval source) the two-sided coverage must be 93-97 %, each tail's
miss at most 3.5 % and each one-sided interval cover at least 94 %. The full grid
runs with ``--run-slow``; the cells that fail today are ``xfail(strict=True)``
with their measured numbers, so they turn into failures when fixed. The default
run checks a few cells with more replicates, against bounds of 5 Monte Carlo
SEs (user guide: verification, "Coverage in each tail"). The full grid takes
about 25 minutes on one loaded core, most of it in the forward MAE's exact
intervals and R²'s bootstrap; its classification cells about 4.
Replicates per cell (seed 0): 2000, but for the regression populations'
forward estimand 60 (10 for the MAE; 40 for its "prediction" cells). The
second heavy-tailed population, "skewed" (log-normal errors and σ), has the
truth and remeasurement cells only (``POPULATION_ESTIMANDS``): about 45 s.
"""

from __future__ import annotations

import functools
import math

import pytest
from _interval_coverage import (
    ESTIMANDS,
    KIND,
    POPULATION_ESTIMANDS,
    POPULATIONS,
    SOURCES,
    Task,
    metric_functions,
    population_values,
    run_task,
    verdict,
)

N_SAMPLES = 100
#: Replicates per cell: a tail's Monte Carlo SE is then 0.35 points, a
#: one-sided coverage's 0.49. The forward regression estimand's exact intervals
#: cost seconds each: those tasks get FORWARD_REPLICATES, and their "prediction"
#: cells SAMPLING_REPLICATES. The whole grid at 2000 replicates costs about 5
#: minutes besides the forward tasks.
GRID_REPLICATES = 2000
SAMPLING_REPLICATES = 40
FORWARD_REPLICATES = {"mae": 10, "rmse": 60, "r2": 60, "mse": 60}
SEED = 0

#: The cells that fail today (seed 0, the replicates above): what fails, and
#: the measured coverage, tails and one-sided coverages (%). With 40 or fewer
#: replicates a coverage moves in steps of 2.5 points or more, so that many of
#: those cells fail on resolution alone (cov>97 is one miss in 40). The
#: classification label-noise cells that fail at 2000 replicates give their
#: numbers at 10,000 (seed 0) too, where they pass: a margin of 1-2 SEs.
KNOWN_FAILURES: dict[tuple[str, str, str, str], str] = {
    ("gaussian", "mae", "forward", "label_noise"): (
        "cov>97,greater: cov 100.0 (SE 0.0), below 0.0, above 0.0, less "
        "100.0, greater 80.0; 10 reps"
    ),
    ("gaussian", "mae", "forward", "prediction"): (
        "cov>97: cov 100.0 (SE 0.0), below 0.0, above 0.0, less 100.0, "
        "greater 100.0; 10 reps"
    ),
    ("gaussian", "mse", "forward", "label_noise"): (
        "less,greater: cov 96.7 (SE 2.3), below 1.7, above 1.7, less 91.7, "
        "greater 93.3; 60 reps"
    ),
    ("gaussian", "mse", "forward", "prediction"): (
        "greater: cov 95.0 (SE 2.8), below 1.7, above 3.3, less 96.7, greater "
        "93.3; 60 reps"
    ),
    ("gaussian", "r2", "forward", "label_noise"): (
        "less,greater: cov 93.3 (SE 3.2), below 3.3, above 3.3, less 93.3, "
        "greater 93.3; 60 reps"
    ),
    ("gaussian", "r2", "forward", "prediction"): (
        "cov>97: cov 97.5 (SE 2.5), below 2.5, above 0.0, less 95.0, greater "
        "95.0; 40 reps"
    ),
    ("gaussian", "rmse", "forward", "label_noise"): (
        "less,greater: cov 96.7 (SE 2.3), below 1.7, above 1.7, less 91.7, "
        "greater 93.3; 60 reps"
    ),
    ("gaussian", "rmse", "forward", "prediction"): (
        "greater: cov 95.0 (SE 2.8), below 1.7, above 3.3, less 96.7, greater "
        "93.3; 60 reps"
    ),
    ("heavy", "mae", "forward", "label_noise"): (
        "cov>97: cov 100.0 (SE 0.0), below 0.0, above 0.0, less 100.0, "
        "greater 100.0; 10 reps"
    ),
    ("heavy", "mae", "forward", "prediction"): (
        "cov>97: cov 100.0 (SE 0.0), below 0.0, above 0.0, less 100.0, "
        "greater 100.0; 10 reps"
    ),
    ("heavy", "r2", "forward", "label_noise"): (
        "cov>97,greater: cov 98.3 (SE 1.7), below 1.7, above 0.0, less 96.7, "
        "greater 93.3; 60 reps"
    ),
    ("heavy", "r2", "forward", "prediction"): (
        "cov>97,greater: cov 97.5 (SE 2.5), below 2.5, above 0.0, less 100.0, "
        "greater 92.5; 40 reps"
    ),
    ("heavy", "r2", "remeasurement", "both"): (
        "below,greater: cov 94.6 (SE 0.5), below 4.45, above 0.95, less 95.3, "
        "greater 92.0; 2000 reps"
    ),
    ("heavy", "r2", "remeasurement", "prediction"): (
        "below,greater: cov 93.4 (SE 0.6), below 6.00, above 0.60, less 97.5, "
        "greater 90.9; 2000 reps"
    ),
    ("heavy", "r2", "truth", "both"): (
        "below,greater: cov 93.45 (SE 0.55), below 6.30, above 0.25, less "
        "97.65, greater 90.55; 2000 reps"
    ),
    ("heavy", "r2", "truth", "prediction"): (
        "cov<93,below,greater: cov 91.2 (SE 0.6), below 8.40, above 0.40, "
        "less 99.1, greater 88.8; 2000 reps"
    ),
    ("few", "mae", "forward", "label_noise"): (
        "cov<93,above,less: cov 90.0 (SE 9.5), below 0.0, above 10.0, less "
        "80.0, greater 100.0; 10 reps"
    ),
    ("few", "mae", "forward", "prediction"): (
        "cov<93,above,less: cov 80.0 (SE 12.6), below 0.0, above 20.0, less "
        "80.0, greater 100.0; 10 reps"
    ),
    ("few", "mse", "forward", "label_noise"): (
        "cov>97: cov 98.3 (SE 1.7), below 1.7, above 0.0, less 100.0, greater "
        "96.7; 60 reps"
    ),
    ("few", "mse", "forward", "prediction"): (
        "cov>97: cov 98.3 (SE 1.7), below 0.0, above 1.7, less 98.3, greater "
        "100.0; 60 reps"
    ),
    ("few", "r2", "forward", "label_noise"): (
        "cov>97: cov 98.3 (SE 1.7), below 0.0, above 1.7, less 96.7, greater "
        "100.0; 60 reps"
    ),
    ("few", "r2", "forward", "prediction"): (
        "cov>97: cov 100.0 (SE 0.0), below 0.0, above 0.0, less 100.0, "
        "greater 100.0; 40 reps"
    ),
    ("few", "r2", "truth", "both"): (
        "cov>97: cov 97.4 (SE 0.4), below 0.70, above 1.90, less 95.8, "
        "greater 97.1; 2000 reps"
    ),
    ("few", "rmse", "forward", "label_noise"): (
        "cov>97: cov 98.3 (SE 1.7), below 1.7, above 0.0, less 100.0, greater "
        "96.7; 60 reps"
    ),
    ("few", "rmse", "forward", "prediction"): (
        "cov>97: cov 98.3 (SE 1.7), below 0.0, above 1.7, less 96.7, greater "
        "100.0; 60 reps"
    ),
    ("binary", "precision", "remeasurement", "label_noise"): (
        "less: cov 94.5 (SE 0.5), below 2.70, above 2.85, less 93.8, greater "
        "95.3; 2000 reps; 10000 reps: cov 95.4, below 2.3, above 2.4, less "
        "95.0, greater 95.3 (PASS)"
    ),
    ("binary", "specificity", "remeasurement", "label_noise"): (
        "less: cov 94.8 (SE 0.5), below 2.35, above 2.80, less 93.8, greater "
        "94.5; 2000 reps; 10000 reps: cov 95.4, below 2.1, above 2.5, less "
        "94.9, greater 95.4 (PASS)"
    ),
    ("roc", "roc_auc", "forward", "prediction"): (
        "below: cov 93.7 (SE 0.5), below 3.85, above 2.50, less 95.3, greater "
        "94.2; 2000 reps"
    ),
    ("skewed", "mae", "remeasurement", "prediction"): (
        "above: cov 93.8 (SE 0.5), below 2.60, above 3.60, less 94.3, greater "
        "95.7; 2000 reps; seeds 1 and 2 pass: 94.9 %, 2.6 / 2.5 and 94.75 %, "
        "2.45 / 2.8"
    ),
    ("skewed", "r2", "truth", "both"): (
        "below,greater: cov 94.0 (SE 0.53), below 4.35, above 1.65, less "
        "96.05, greater 92.85; 2000 reps"
    ),
    ("skewed", "r2", "truth", "prediction"): (
        "cov<93,below,greater: cov 92.2 (SE 0.6), below 6.25, above 1.50, "
        "less 96.2, greater 91.6; 2000 reps"
    ),
}


@functools.cache
def _grid_rows(population: str, metric: str, estimand: str) -> tuple[dict, list]:
    replicates = sampling = GRID_REPLICATES
    if KIND[population] == "regression" and estimand == "forward":
        replicates, sampling = FORWARD_REPLICATES[metric], SAMPLING_REPLICATES
    task = Task(
        population,
        N_SAMPLES,
        metric,
        estimand,
        replicates,
        sampling,
        400,
        SEED,
        math.inf,
    )
    rows, notes, _ = run_task(task)
    return {row["source"]: row for row in rows}, notes


def _cells():
    for population in POPULATIONS:
        for metric, function in metric_functions(population).items():
            for estimand in POPULATION_ESTIMANDS.get(population, ESTIMANDS):
                if estimand not in function.estimands:
                    continue
                for source in SOURCES:
                    if estimand == "forward" and source == "both":
                        continue  # no confidence interval (the user guide)
                    key = (population, metric, estimand, source)
                    marks = [pytest.mark.slow]
                    if key in KNOWN_FAILURES:
                        marks.append(
                            pytest.mark.xfail(strict=True, reason=KNOWN_FAILURES[key])
                        )
                    yield pytest.param(*key, marks=marks, id="-".join(key))


def _describe(row: dict) -> str:
    return (
        f"cov {100 * row['coverage']:.1f} % (SE {100 * row['se']:.1f}), below "
        f"{100 * row['below']:.1f}, above {100 * row['above']:.1f}, less "
        f"{100 * row['less']:.1f}, greater {100 * row['greater']:.1f}, "
        f"{row['replicates']} replicates"
    )


def test_skewed_population_values():
    """The quadrature against the log-normal closed forms: the error
    d = 0.6 (e^{0.4 x} - 0.7), sigma = 0.3 e^{x/4}, E e^{a x} = e^{a²/2}."""
    values = population_values("skewed")
    mse = 0.36 * (math.exp(0.32) - 1.4 * math.exp(0.08) + 0.49)
    noisy = mse + 0.09 * math.exp(0.125)
    assert values["mse"]["truth"] == pytest.approx(mse, rel=1e-10)
    assert values["mse"]["remeasurement"] == pytest.approx(noisy, rel=1e-10)
    assert values["rmse"]["truth"] == pytest.approx(math.sqrt(mse), rel=1e-10)
    # Var(x + 0.6 e^{0.4x}): Var e^{ax} = e^{2a²} - e^{a²}, Cov(x, e^{ax}) = a e^{a²/2}
    var_mu = 1.0 + 0.36 * (math.exp(0.32) - math.exp(0.16)) + 0.48 * math.exp(0.08)
    assert values["r2"]["truth"] == pytest.approx(1.0 - mse / var_mu, rel=1e-10)


@pytest.mark.parametrize(("population", "metric", "estimand", "source"), list(_cells()))
def test_coverage_grid(population, metric, estimand, source):
    rows, notes = _grid_rows(population, metric, estimand)
    errors = [note for note in notes if " error " in note]
    assert not errors, errors
    row = rows[source]
    assert verdict(row) == "PASS", f"{verdict(row)}: {_describe(row)}"


#: The default run's cells: replicates and the cells checked, with the
#: two-sided coverage and each tail held to 5 Monte Carlo SEs of 95 % / 2.5 %
#: (a tail above 4.97 % fails). Label noise only but for the prediction cells.
#: Before the skewed intervals: the Student t interval missed 6.0 % above in
#: the first; the symmetric recall truth interval 5.6 % above and the truth ROC
#: AUC's 3.7 % (10,000 replicates), the t prediction interval of the
#: remeasurement accuracy 3.8 % below (2000); before Fieller's interval the
#: recall truth prediction interval covered 97.8 % (2000, seed 0).
TWIN_REPLICATES = 1000
TWIN_CELLS = (
    ("gaussian", "mse", "truth", "label_noise"),
    ("heavy", "rmse", "truth", "label_noise"),
    ("binary", "recall", "truth", "label_noise"),
    ("roc", "roc_auc", "truth", "label_noise"),
    ("binary", "accuracy", "remeasurement", "prediction"),
    ("binary", "recall", "truth", "prediction"),
)


@functools.cache
def _twin_rows(population: str, metric: str, estimand: str, only: bool) -> dict:
    task = Task(
        population,
        N_SAMPLES,
        metric,
        estimand,
        TWIN_REPLICATES,
        TWIN_REPLICATES,
        400,
        SEED + 1,
        math.inf,
        label_noise_only=only,
    )
    rows, notes, _ = run_task(task)
    # a truth estimate beyond the metric's range lies outside its interval,
    # which ends at the bound: expected (benchmarks/coverage_grid.py)
    assert not [note for note in notes if "outside its own" not in note], notes
    return {row["source"]: row for row in rows}


@pytest.mark.parametrize(("population", "metric", "estimand", "source"), TWIN_CELLS)
def test_coverage_grid_twin(population, metric, estimand, source):
    only = source == "label_noise"
    row = _twin_rows(population, metric, estimand, only)[source]
    r = row["replicates"]
    assert r == TWIN_REPLICATES
    se_coverage = math.sqrt(0.95 * 0.05 / r)
    se_tail = math.sqrt(0.025 * 0.975 / r)
    assert abs(row["coverage"] - 0.95) <= 5 * se_coverage, _describe(row)
    assert row["below"] <= 0.025 + 5 * se_tail, _describe(row)
    assert row["above"] <= 0.025 + 5 * se_tail, _describe(row)
