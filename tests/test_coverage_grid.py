"""The coverage grid of issue 23: does every 95 % interval hold in each tail?

The whole experiment simulated with a known truth (``tests/_interval_coverage.py``,
populations and targets in ``benchmarks/coverage_grid.py``): per cell (metric x
estimand x interval source) the two-sided coverage must be 93-97 %, each tail's
miss at most 3.5 % and each one-sided interval cover at least 94 %. The full grid
runs with ``--run-slow``; the cells that fail today are ``xfail(strict=True)``
with their measured numbers, so they turn into failures when fixed. The default
run checks a few cells with more replicates, against bounds of 5 Monte Carlo
SEs (user guide: verification, "Coverage in each tail"). The full grid takes
about 25 minutes on one loaded core, most of it in the forward estimand's exact
intervals and R²'s bootstrap; its classification cells about 10.
Replicates per cell (seed 0): 2000 (10,000 for the classification
populations), but for the regression populations' forward estimand 60 (40 for
R²'s "prediction" cells). A forward replicate checks its intervals against
FORWARD_DRAWS targets (fresh label draws; new test sets), its coverage SE from
the spread of the replicates' hit fractions. An exact interval on a lattice is
held to the content it states (``verdict``). The second heavy-tailed
population, "skewed" (log-normal errors and σ), has the truth and
remeasurement cells only (``POPULATION_ESTIMANDS``): about 45 s.
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
#: cost 0.01-0.4 s each: those tasks get FORWARD_REPLICATES, and R²'s
#: "prediction" cells (a bootstrap) SAMPLING_REPLICATES. The whole grid at 2000
#: replicates costs about 5 minutes besides the forward tasks. A forward
#: interval is conditional on its test set, and each replicate checks it against
#: FORWARD_DRAWS targets: fresh label draws (label noise) or new test sets
#: (prediction); 1000 (regression) give a coverage SE of 0.1 (label noise, σ
#: known: the exact interval's conditional coverage is 95 %) to 0.7 points.
#: The classification populations' cells
#: are cheap (closed forms): COUNT_REPLICATES, a one-sided coverage's SE 0.22
#: points (at 2000, precision's and specificity's remeasurement label-noise
#: cells covered 93.8 % one-sided, at 10,000 95.0 and 94.9; the forward ROC
#: AUC's prediction cell missed 3.85 % below, at 10,000 2.5 %).
GRID_REPLICATES = 2000
COUNT_REPLICATES = 10_000
SAMPLING_REPLICATES = 40
FORWARD_REPLICATES = 60
FORWARD_DRAWS = {"regression": 1000, "counts": 100, "roc": 100}
SEED = 0

#: The cells that fail today (seed 0, the replicates above): what fails, and
#: the measured coverage, tails and one-sided coverages (%). The forward R²
#: with σ from two readings takes σ̂ as σ (its width is high, E σ̂⁴ = 3 σ⁴); the
#: MSE's, RMSE's and MAE's take ``sigma_dof`` (user guide: :ref:`sigma_dof`).
KNOWN_FAILURES: dict[tuple[str, str, str, str], str] = {
    ("heavy", "r2", "forward", "prediction"): (
        "below: cov 95.6 (SE 1.1), below 3.54, above 0.84, less 96.7, greater "
        "94.3; 40 reps x 1000 targets (was 92.5 %, 7.04 below); seed 1 passes "
        "(2.87 / 0.55), seed 2 not (3.77 / 0.81); over 400 test sets below 2.39 "
        "(seed 0), 3.37 (seed 2), 2.4-2.6 (seeds 5-7)"
    ),
    ("heavy", "r2", "remeasurement", "prediction"): (
        "below,greater: cov 93.4 (SE 0.6), below 6.00, above 0.60, less 97.5, "
        "greater 90.9; 2000 reps"
    ),
    ("heavy", "r2", "truth", "prediction"): (
        "cov<93,below,greater: cov 91.2 (SE 0.6), below 8.40, above 0.40, "
        "less 99.1, greater 88.8; 2000 reps"
    ),
    ("few", "r2", "forward", "label_noise"): (
        "cov>97: cov 97.6 (SE 0.4), below 1.61, above 0.79, less 98.0, "
        "greater 96.1; 60 reps x 1000 targets"
    ),
    ("few", "r2", "forward", "prediction"): (
        "cov>97: cov 99.4 (SE 0.2), below 0.56, above 0.03, less 99.4, "
        "greater 98.9; 40 reps x 1000 targets"
    ),
    ("few", "r2", "truth", "both"): (
        "cov>97: cov 97.4 (SE 0.4), below 0.70, above 1.90, less 95.8, "
        "greater 97.1; 2000 reps"
    ),
    ("skewed", "mae", "remeasurement", "prediction"): (
        "above: cov 93.8 (SE 0.5), below 2.60, above 3.60, less 94.3, greater "
        "95.7; 2000 reps; seeds 1-4 pass: 94.9 %, 2.6 / 2.5; 94.75 %, 2.45 / "
        "2.8; 94.35 %, 2.3 / 3.35; 95.45 %, 2.2 / 2.35 (seed noise, tail SE 0.4)"
    ),
    ("skewed", "r2", "truth", "prediction"): (
        "below: cov 93.0 (SE 0.6), below 5.05, above 1.95; 2000 reps"
    ),
}


@functools.cache
def _grid_rows(population: str, metric: str, estimand: str) -> tuple[dict, list]:
    replicates = sampling = GRID_REPLICATES
    if KIND[population] != "regression":
        replicates = sampling = COUNT_REPLICATES
    elif estimand == "forward":
        replicates, sampling = FORWARD_REPLICATES, SAMPLING_REPLICATES
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
        forward_draws=FORWARD_DRAWS[KIND[population]] if estimand == "forward" else 1,
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
        f"content {100 * row['content']:.1f}, {row['replicates']} replicates"
        + (f" x {row['draws']} targets" if row["draws"] > 1 else "")
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
