"""The coverage grid of issue 23: does every 95 % interval hold in each tail?

The whole experiment simulated with a known truth (``tests/_interval_coverage.py``,
populations and targets in ``benchmarks/coverage_grid.py``): per cell (metric x
estimand x interval source) the two-sided coverage must be 93-97 %, each tail's
miss at most 3.5 % and each one-sided interval cover at least 94 %. The full grid
runs with ``--run-slow``; the cells that fail today are ``xfail(strict=True)``
with their measured numbers, so they turn into failures when fixed. The default
run checks a few cells with more replicates, against bounds of 5 Monte Carlo
SEs (user guide: verification, "Coverage in each tail").
"""

from __future__ import annotations

import functools
import math

import pytest
from _interval_coverage import (
    ESTIMANDS,
    POPULATIONS,
    SOURCES,
    Task,
    metric_functions,
    run_task,
    verdict,
)

N_SAMPLES = 100
#: Replicates per cell; the bootstrap metrics' "both" and "prediction" cells get
#: SAMPLING_REPLICATES. The forward estimand's exact intervals cost seconds
#: each: those tasks get FORWARD_REPLICATES.
REPLICATES = 200
SAMPLING_REPLICATES = 40
FORWARD_REPLICATES = {"mae": 10, "rmse": 60, "r2": 60, "mse": 60}
SEED = 0

#: The cells that fail today (seed 0, the replicates above): measured
#: coverage, below, above (%), and what fails.
KNOWN_FAILURES: dict[tuple[str, str, str, str], str] = {}


@functools.cache
def _grid_rows(population: str, metric: str, estimand: str) -> tuple[dict, list]:
    replicates = REPLICATES
    if estimand == "forward" and population in ("gaussian", "heavy", "few"):
        replicates = FORWARD_REPLICATES[metric]
    task = Task(
        population,
        N_SAMPLES,
        metric,
        estimand,
        replicates,
        SAMPLING_REPLICATES,
        400,
        SEED,
        math.inf,
    )
    rows, notes, _ = run_task(task)
    return {row["source"]: row for row in rows}, notes


def _cells():
    for population in POPULATIONS:
        for metric, function in metric_functions(population).items():
            for estimand in ESTIMANDS:
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


@pytest.mark.parametrize(("population", "metric", "estimand", "source"), list(_cells()))
def test_coverage_grid(population, metric, estimand, source):
    rows, notes = _grid_rows(population, metric, estimand)
    errors = [note for note in notes if " error " in note]
    assert not errors, errors
    row = rows[source]
    assert verdict(row) == "PASS", f"{verdict(row)}: {_describe(row)}"


#: The default run's cells (label noise only): replicates and the cells
#: checked, with the two-sided coverage and each tail held to 5 Monte Carlo SEs
#: of 95 % / 2.5 %. The Student t interval failed the first (6.0 % above).
TWIN_REPLICATES = 1000
TWIN_CELLS = (
    ("gaussian", "mse", "truth", "label_noise"),
    ("heavy", "rmse", "truth", "label_noise"),
)


@functools.cache
def _twin_rows(population: str, metric: str, estimand: str) -> dict:
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
        label_noise_only=True,
    )
    rows, notes, _ = run_task(task)
    assert not notes, notes
    return {row["source"]: row for row in rows}


@pytest.mark.parametrize(("population", "metric", "estimand", "source"), TWIN_CELLS)
def test_coverage_grid_twin(population, metric, estimand, source):
    row = _twin_rows(population, metric, estimand)[source]
    r = row["replicates"]
    assert r == TWIN_REPLICATES
    se_coverage = math.sqrt(0.95 * 0.05 / r)
    se_tail = math.sqrt(0.025 * 0.975 / r)
    assert abs(row["coverage"] - 0.95) <= 5 * se_coverage, _describe(row)
    assert row["below"] <= 0.025 + 5 * se_tail, _describe(row)
    assert row["above"] <= 0.025 + 5 * se_tail, _describe(row)
