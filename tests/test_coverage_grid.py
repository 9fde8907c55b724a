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
intervals and the bootstrap metrics.
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

#: The cells that fail today (seed 0, the replicates above): what fails, and
#: the measured coverage, tails and one-sided coverages (%). With 40 or fewer
#: replicates a coverage moves in steps of 2.5 points or more, so that many of
#: those cells fail on resolution alone (cov>97 is one miss in 40).
KNOWN_FAILURES: dict[tuple[str, str, str, str], str] = {
    ("gaussian", "mse", "truth", "both"): (
        "above: cov 94.5 (SE 1.6), below 1.5, above 4.0, "
        "less 94.0, greater 96.0; 200 reps"
    ),
    ("gaussian", "mse", "truth", "prediction"): (
        "less: cov 94.5 (SE 1.6), below 2.0, above 3.5, "
        "less 93.5, greater 96.5; 200 reps"
    ),
    ("gaussian", "mse", "forward", "label_noise"): (
        "less,greater: cov 96.7 (SE 2.3), below 1.7, above 1.7, "
        "less 91.7, greater 93.3; 60 reps"
    ),
    ("gaussian", "mse", "forward", "prediction"): (
        "greater: cov 95.0 (SE 2.8), below 1.7, above 3.3, "
        "less 96.7, greater 93.3; 60 reps"
    ),
    ("gaussian", "rmse", "truth", "both"): (
        "above: cov 94.5 (SE 1.6), below 1.5, above 4.0, "
        "less 94.0, greater 96.0; 200 reps"
    ),
    ("gaussian", "rmse", "truth", "prediction"): (
        "less: cov 94.5 (SE 1.6), below 2.0, above 3.5, "
        "less 93.5, greater 96.5; 200 reps"
    ),
    ("gaussian", "rmse", "forward", "label_noise"): (
        "less,greater: cov 96.7 (SE 2.3), below 1.7, above 1.7, "
        "less 91.7, greater 93.3; 60 reps"
    ),
    ("gaussian", "rmse", "forward", "prediction"): (
        "greater: cov 95.0 (SE 2.8), below 1.7, above 3.3, "
        "less 96.7, greater 93.3; 60 reps"
    ),
    ("gaussian", "mae", "forward", "label_noise"): (
        "cov>97,greater: cov 100.0 (SE 0.0), below 0.0, above 0.0, "
        "less 100.0, greater 80.0; 10 reps"
    ),
    ("gaussian", "mae", "forward", "prediction"): (
        "cov>97: cov 100.0 (SE 0.0), below 0.0, above 0.0, "
        "less 100.0, greater 100.0; 10 reps"
    ),
    ("gaussian", "r2", "truth", "both"): (
        "cov<93,below,greater: cov 92.5 (SE 4.2), below 5.0, above 2.5, "
        "less 97.5, greater 90.0; 40 reps"
    ),
    ("gaussian", "r2", "truth", "prediction"): (
        "cov<93,below,greater: cov 85.0 (SE 5.6), below 12.5, above 2.5, "
        "less 97.5, greater 85.0; 40 reps"
    ),
    ("gaussian", "r2", "remeasurement", "label_noise"): (
        "below,greater: cov 93.5 (SE 1.7), below 4.0, above 2.5, "
        "less 97.5, greater 93.0; 200 reps"
    ),
    ("gaussian", "r2", "remeasurement", "both"): (
        "cov<93,below,greater: cov 85.0 (SE 5.6), below 12.5, above 2.5, "
        "less 97.5, greater 87.5; 40 reps"
    ),
    ("gaussian", "r2", "remeasurement", "prediction"): (
        "cov<93,below,greater: cov 92.5 (SE 4.2), below 7.5, above 0.0, "
        "less 100.0, greater 87.5; 40 reps"
    ),
    ("gaussian", "r2", "forward", "label_noise"): (
        "less,greater: cov 93.3 (SE 3.2), below 3.3, above 3.3, "
        "less 93.3, greater 93.3; 60 reps"
    ),
    ("gaussian", "r2", "forward", "prediction"): (
        "cov>97: cov 97.5 (SE 2.5), below 2.5, above 0.0, "
        "less 95.0, greater 95.0; 40 reps"
    ),
    ("heavy", "mse", "truth", "label_noise"): (
        "greater: cov 96.5 (SE 1.3), below 2.5, above 1.0, "
        "less 96.0, greater 92.0; 200 reps"
    ),
    ("heavy", "mse", "truth", "both"): (
        "above,less: cov 94.0 (SE 1.7), below 0.5, above 5.5, "
        "less 91.5, greater 97.5; 200 reps"
    ),
    ("heavy", "mse", "truth", "prediction"): (
        "cov<93,above,less,greater: cov 90.5 (SE 2.1), below 3.0, above 6.5, "
        "less 92.0, greater 92.0; 200 reps"
    ),
    ("heavy", "mse", "remeasurement", "label_noise"): (
        "greater: cov 96.5 (SE 1.3), below 2.5, above 1.0, "
        "less 96.0, greater 92.0; 200 reps"
    ),
    ("heavy", "mse", "remeasurement", "both"): (
        "above,less: cov 93.5 (SE 1.7), below 1.0, above 5.5, "
        "less 91.5, greater 96.5; 200 reps"
    ),
    ("heavy", "mse", "remeasurement", "prediction"): (
        "above,less: cov 94.0 (SE 1.7), below 2.0, above 4.0, "
        "less 90.5, greater 97.5; 200 reps"
    ),
    ("heavy", "rmse", "truth", "label_noise"): (
        "greater: cov 96.5 (SE 1.3), below 2.5, above 1.0, "
        "less 96.0, greater 92.0; 200 reps"
    ),
    ("heavy", "rmse", "truth", "both"): (
        "above,less: cov 94.0 (SE 1.7), below 0.5, above 5.5, "
        "less 91.5, greater 97.5; 200 reps"
    ),
    ("heavy", "rmse", "truth", "prediction"): (
        "cov<93,above,less,greater: cov 90.5 (SE 2.1), below 3.0, above 6.5, "
        "less 92.0, greater 92.0; 200 reps"
    ),
    ("heavy", "rmse", "remeasurement", "label_noise"): (
        "greater: cov 96.0 (SE 1.4), below 3.0, above 1.0, "
        "less 96.0, greater 92.0; 200 reps"
    ),
    ("heavy", "rmse", "remeasurement", "both"): (
        "above,less: cov 93.5 (SE 1.7), below 1.0, above 5.5, "
        "less 91.5, greater 96.5; 200 reps"
    ),
    ("heavy", "rmse", "remeasurement", "prediction"): (
        "above,less: cov 94.0 (SE 1.7), below 2.0, above 4.0, "
        "less 90.5, greater 97.5; 200 reps"
    ),
    ("heavy", "mae", "forward", "label_noise"): (
        "cov>97: cov 100.0 (SE 0.0), below 0.0, above 0.0, "
        "less 100.0, greater 100.0; 10 reps"
    ),
    ("heavy", "mae", "forward", "prediction"): (
        "cov>97: cov 100.0 (SE 0.0), below 0.0, above 0.0, "
        "less 100.0, greater 100.0; 10 reps"
    ),
    ("heavy", "r2", "truth", "label_noise"): (
        "cov>97: cov 97.5 (SE 1.1), below 0.5, above 2.0, "
        "less 95.5, greater 97.5; 200 reps; 2000 reps (seed 0): cov 94.8, below "
        "2.6, above 2.6"
    ),
    ("heavy", "r2", "truth", "both"): (
        "cov<93,below,greater: cov 92.5 (SE 4.2), below 7.5, above 0.0, "
        "less 100.0, greater 92.5; 40 reps"
    ),
    ("heavy", "r2", "truth", "prediction"): (
        "cov<93,below,greater: cov 85.0 (SE 5.6), below 15.0, above 0.0, "
        "less 97.5, greater 82.5; 40 reps"
    ),
    ("heavy", "r2", "remeasurement", "both"): (
        "cov<93,below,greater: cov 92.5 (SE 4.2), below 7.5, above 0.0, "
        "less 100.0, greater 92.5; 40 reps"
    ),
    ("heavy", "r2", "remeasurement", "prediction"): (
        "cov<93,below,greater: cov 90.0 (SE 4.7), below 10.0, above 0.0, "
        "less 100.0, greater 87.5; 40 reps"
    ),
    ("heavy", "r2", "forward", "label_noise"): (
        "cov>97,greater: cov 98.3 (SE 1.7), below 1.7, above 0.0, "
        "less 96.7, greater 93.3; 60 reps"
    ),
    ("heavy", "r2", "forward", "prediction"): (
        "cov>97,greater: cov 97.5 (SE 2.5), below 2.5, above 0.0, "
        "less 100.0, greater 92.5; 40 reps"
    ),
    ("heavy", "r2", "remeasurement", "label_noise"): (
        "cov>97: cov 97.5 (SE 1.1), below 1.0, above 1.5, "
        "less 96.5, greater 96.0; 200 reps; 2000 reps: cov 94.3, below 3.0, above "
        "2.6 (was 4.8, 1.2)"
    ),
    ("few", "mse", "truth", "label_noise"): (
        "greater: cov 96.0 (SE 1.4), below 3.5, above 0.5, "
        "less 99.0, greater 93.0; 200 reps"
    ),
    ("few", "mse", "truth", "both"): (
        "cov>97: cov 98.0 (SE 1.0), below 2.0, above 0.0, "
        "less 99.0, greater 96.0; 200 reps"
    ),
    ("few", "mse", "truth", "prediction"): (
        "below,greater: cov 95.0 (SE 1.5), below 4.5, above 0.5, "
        "less 99.0, greater 91.5; 200 reps"
    ),
    ("few", "mse", "remeasurement", "both"): (
        "cov>97: cov 98.5 (SE 0.9), below 1.0, above 0.5, "
        "less 98.5, greater 95.5; 200 reps"
    ),
    ("few", "mse", "forward", "label_noise"): (
        "cov>97: cov 98.3 (SE 1.7), below 1.7, above 0.0, "
        "less 100.0, greater 96.7; 60 reps"
    ),
    ("few", "mse", "forward", "prediction"): (
        "cov>97: cov 98.3 (SE 1.7), below 0.0, above 1.7, "
        "less 98.3, greater 100.0; 60 reps"
    ),
    ("few", "rmse", "truth", "label_noise"): (
        "greater: cov 96.0 (SE 1.4), below 3.5, above 0.5, "
        "less 99.0, greater 93.0; 200 reps"
    ),
    ("few", "rmse", "truth", "both"): (
        "cov>97: cov 98.0 (SE 1.0), below 2.0, above 0.0, "
        "less 99.0, greater 96.0; 200 reps"
    ),
    ("few", "rmse", "truth", "prediction"): (
        "below,greater: cov 95.0 (SE 1.5), below 4.5, above 0.5, "
        "less 99.0, greater 91.5; 200 reps"
    ),
    ("few", "rmse", "remeasurement", "both"): (
        "cov>97: cov 98.5 (SE 0.9), below 1.0, above 0.5, "
        "less 98.5, greater 95.5; 200 reps"
    ),
    ("few", "rmse", "forward", "label_noise"): (
        "cov>97: cov 98.3 (SE 1.7), below 1.7, above 0.0, "
        "less 100.0, greater 96.7; 60 reps"
    ),
    ("few", "rmse", "forward", "prediction"): (
        "cov>97: cov 98.3 (SE 1.7), below 0.0, above 1.7, "
        "less 96.7, greater 100.0; 60 reps"
    ),
    ("few", "mae", "remeasurement", "label_noise"): (
        "below,greater: cov 94.0 (SE 1.7), below 5.0, above 1.0, "
        "less 95.0, greater 93.0; 200 reps"
    ),
    ("few", "mae", "forward", "label_noise"): (
        "cov<93,above,less: cov 90.0 (SE 9.5), below 0.0, above 10.0, "
        "less 80.0, greater 100.0; 10 reps"
    ),
    ("few", "mae", "forward", "prediction"): (
        "cov<93,above,less: cov 80.0 (SE 12.6), below 0.0, above 20.0, "
        "less 80.0, greater 100.0; 10 reps"
    ),
    ("few", "r2", "truth", "label_noise"): (
        "less: cov 96.5 (SE 1.3), below 0.0, above 3.5, "
        "less 93.5, greater 99.5; 200 reps; 4000 reps: cov 96.45, below 0.05, above "
        "3.50, less 94.4 (2000: was 94.2, 0.05, 5.75, less 91.8)"
    ),
    ("few", "r2", "truth", "both"): (
        "above: cov 95.0 (SE 3.4), below 0.0, above 5.0, "
        "less 95.0, greater 100.0; 40 reps"
    ),
    ("few", "r2", "truth", "prediction"): (
        "above: cov 95.0 (SE 3.4), below 0.0, above 5.0, "
        "less 95.0, greater 100.0; 40 reps"
    ),
    ("few", "r2", "remeasurement", "both"): (
        "cov>97: cov 97.5 (SE 2.5), below 0.0, above 2.5, "
        "less 97.5, greater 100.0; 40 reps"
    ),
    ("few", "r2", "forward", "label_noise"): (
        "cov>97: cov 98.3 (SE 1.7), below 0.0, above 1.7, "
        "less 96.7, greater 100.0; 60 reps"
    ),
    ("few", "r2", "forward", "prediction"): (
        "cov>97: cov 100.0 (SE 0.0), below 0.0, above 0.0, "
        "less 100.0, greater 100.0; 40 reps"
    ),
    ("few", "r2", "remeasurement", "label_noise"): (
        "above: cov 96.0 (SE 1.4), below 0.0, above 4.0, "
        "less 96.0, greater 100.0; 200 reps; 2000 reps: cov 96.5, below 1.1, above "
        "2.4 (was 2.7, 1.5)"
    ),
    ("few", "r2", "remeasurement", "prediction"): (
        "cov>97: cov 97.5 (SE 2.5), below 0.0, above 2.5, "
        "less 97.5, greater 97.5; 40 reps; 2000 reps: cov 95.5, below 2.1, above 2.3 "
        "(was 3.5, 1.1)"
    ),
    ("binary", "accuracy", "truth", "label_noise"): (
        "below,greater: cov 94.5 (SE 1.6), below 4.0, above 1.5, "
        "less 96.0, greater 93.5; 200 reps"
    ),
    ("binary", "accuracy", "truth", "prediction"): (
        "below,greater: cov 93.5 (SE 1.7), below 5.5, above 1.0, "
        "less 96.5, greater 92.5; 200 reps"
    ),
    ("binary", "accuracy", "remeasurement", "prediction"): (
        "greater: cov 94.5 (SE 1.6), below 3.0, above 2.5, "
        "less 95.0, greater 92.5; 200 reps"
    ),
    ("binary", "accuracy", "forward", "prediction"): (
        "cov>97: cov 97.5 (SE 1.1), below 1.5, above 1.0, "
        "less 97.0, greater 95.5; 200 reps"
    ),
    ("binary", "precision", "truth", "label_noise"): (
        "cov<93,below,greater: cov 92.5 (SE 1.9), below 4.0, above 3.5, "
        "less 95.5, greater 91.5; 200 reps"
    ),
    ("binary", "precision", "truth", "both"): (
        "cov>97,greater: cov 97.5 (SE 2.5), below 2.5, above 0.0, "
        "less 100.0, greater 90.0; 40 reps"
    ),
    ("binary", "precision", "truth", "prediction"): (
        "cov<93,below,greater: cov 87.5 (SE 5.2), below 10.0, above 2.5, "
        "less 97.5, greater 82.5; 40 reps"
    ),
    ("binary", "precision", "remeasurement", "label_noise"): (
        "cov<93,below,greater: cov 92.0 (SE 1.9), below 4.5, above 3.5, "
        "less 96.0, greater 93.0; 200 reps"
    ),
    ("binary", "precision", "remeasurement", "both"): (
        "cov>97: cov 97.5 (SE 2.5), below 2.5, above 0.0, "
        "less 100.0, greater 95.0; 40 reps"
    ),
    ("binary", "precision", "remeasurement", "prediction"): (
        "below,greater: cov 95.0 (SE 3.4), below 5.0, above 0.0, "
        "less 100.0, greater 90.0; 40 reps"
    ),
    ("binary", "precision", "forward", "label_noise"): (
        "cov>97: cov 98.5 (SE 0.9), below 0.5, above 1.0, "
        "less 97.0, greater 97.5; 200 reps"
    ),
    ("binary", "precision", "forward", "prediction"): (
        "cov>97,greater: cov 100.0 (SE 0.0), below 0.0, above 0.0, "
        "less 100.0, greater 90.0; 40 reps"
    ),
    ("binary", "recall", "truth", "label_noise"): (
        "above,less: cov 96.0 (SE 1.4), below 0.0, above 4.0, "
        "less 92.0, greater 99.5; 200 reps"
    ),
    ("binary", "recall", "truth", "both"): (
        "cov>97: cov 97.5 (SE 2.5), below 0.0, above 2.5, "
        "less 95.0, greater 97.5; 40 reps"
    ),
    ("binary", "recall", "truth", "prediction"): (
        "less: cov 95.0 (SE 3.4), below 2.5, above 2.5, "
        "less 92.5, greater 95.0; 40 reps"
    ),
    ("binary", "recall", "remeasurement", "prediction"): (
        "cov>97,less,greater: cov 97.5 (SE 2.5), below 0.0, above 2.5, "
        "less 92.5, greater 92.5; 40 reps"
    ),
    ("binary", "recall", "forward", "prediction"): (
        "cov>97: cov 97.5 (SE 2.5), below 0.0, above 2.5, "
        "less 95.0, greater 100.0; 40 reps"
    ),
    ("binary", "f1", "truth", "label_noise"): (
        "below,greater: cov 94.0 (SE 1.7), below 4.0, above 2.0, "
        "less 95.5, greater 93.5; 200 reps"
    ),
    ("binary", "f1", "truth", "both"): (
        "cov>97,greater: cov 97.5 (SE 2.5), below 2.5, above 0.0, "
        "less 100.0, greater 92.5; 40 reps"
    ),
    ("binary", "f1", "truth", "prediction"): (
        "below,greater: cov 95.0 (SE 3.4), below 5.0, above 0.0, "
        "less 100.0, greater 92.5; 40 reps"
    ),
    ("binary", "f1", "remeasurement", "label_noise"): (
        "below,greater: cov 93.5 (SE 1.7), below 4.0, above 2.5, "
        "less 96.0, greater 92.0; 200 reps"
    ),
    ("binary", "f1", "remeasurement", "both"): (
        "below: cov 95.0 (SE 3.4), below 5.0, above 0.0, "
        "less 100.0, greater 95.0; 40 reps"
    ),
    ("binary", "f1", "remeasurement", "prediction"): (
        "cov>97: cov 97.5 (SE 2.5), below 2.5, above 0.0, "
        "less 97.5, greater 95.0; 40 reps"
    ),
    ("binary", "f1", "forward", "prediction"): (
        "cov>97: cov 100.0 (SE 0.0), below 0.0, above 0.0, "
        "less 97.5, greater 100.0; 40 reps"
    ),
    ("binary", "balanced_accuracy", "truth", "both"): (
        "cov>97: cov 97.5 (SE 2.5), below 2.5, above 0.0, "
        "less 97.5, greater 95.0; 40 reps"
    ),
    ("binary", "balanced_accuracy", "truth", "prediction"): (
        "below: cov 95.0 (SE 3.4), below 5.0, above 0.0, "
        "less 97.5, greater 95.0; 40 reps"
    ),
    ("binary", "balanced_accuracy", "remeasurement", "label_noise"): (
        "cov<93,below: cov 93.0 (SE 1.8), below 4.0, above 3.0, "
        "less 96.5, greater 95.0; 200 reps"
    ),
    ("binary", "balanced_accuracy", "remeasurement", "both"): (
        "cov>97: cov 97.5 (SE 2.5), below 2.5, above 0.0, "
        "less 100.0, greater 97.5; 40 reps"
    ),
    ("binary", "balanced_accuracy", "remeasurement", "prediction"): (
        "cov>97: cov 100.0 (SE 0.0), below 0.0, above 0.0, "
        "less 97.5, greater 97.5; 40 reps"
    ),
    ("binary", "balanced_accuracy", "forward", "prediction"): (
        "cov>97: cov 100.0 (SE 0.0), below 0.0, above 0.0, "
        "less 95.0, greater 95.0; 40 reps"
    ),
    ("binary", "mcc", "truth", "both"): (
        "cov>97: cov 97.5 (SE 2.5), below 2.5, above 0.0, "
        "less 97.5, greater 95.0; 40 reps"
    ),
    ("binary", "mcc", "truth", "prediction"): (
        "below: cov 95.0 (SE 3.4), below 5.0, above 0.0, "
        "less 100.0, greater 95.0; 40 reps"
    ),
    ("binary", "mcc", "remeasurement", "label_noise"): (
        "greater: cov 94.0 (SE 1.7), below 3.0, above 3.0, "
        "less 96.0, greater 93.5; 200 reps"
    ),
    ("binary", "mcc", "remeasurement", "both"): (
        "cov>97: cov 97.5 (SE 2.5), below 2.5, above 0.0, "
        "less 100.0, greater 95.0; 40 reps"
    ),
    ("binary", "mcc", "remeasurement", "prediction"): (
        "cov>97: cov 100.0 (SE 0.0), below 0.0, above 0.0, "
        "less 95.0, greater 95.0; 40 reps"
    ),
    ("binary", "mcc", "forward", "prediction"): (
        "cov>97: cov 100.0 (SE 0.0), below 0.0, above 0.0, "
        "less 95.0, greater 95.0; 40 reps"
    ),
    ("binary", "kappa", "truth", "label_noise"): (
        "below,greater: cov 94.0 (SE 1.7), below 4.0, above 2.0, "
        "less 96.0, greater 93.5; 200 reps"
    ),
    ("binary", "kappa", "truth", "both"): (
        "cov>97: cov 97.5 (SE 2.5), below 2.5, above 0.0, "
        "less 97.5, greater 95.0; 40 reps"
    ),
    ("binary", "kappa", "truth", "prediction"): (
        "below,greater: cov 95.0 (SE 3.4), below 5.0, above 0.0, "
        "less 97.5, greater 92.5; 40 reps"
    ),
    ("binary", "kappa", "remeasurement", "both"): (
        "cov>97: cov 97.5 (SE 2.5), below 2.5, above 0.0, "
        "less 100.0, greater 97.5; 40 reps"
    ),
    ("binary", "kappa", "remeasurement", "prediction"): (
        "cov>97: cov 100.0 (SE 0.0), below 0.0, above 0.0, "
        "less 97.5, greater 95.0; 40 reps"
    ),
    ("binary", "kappa", "forward", "prediction"): (
        "cov>97: cov 100.0 (SE 0.0), below 0.0, above 0.0, "
        "less 95.0, greater 95.0; 40 reps"
    ),
    ("binary", "specificity", "truth", "label_noise"): (
        "above: cov 94.0 (SE 1.7), below 2.0, above 4.0, "
        "less 94.5, greater 95.0; 200 reps"
    ),
    ("binary", "specificity", "truth", "both"): (
        "cov>97,greater: cov 97.5 (SE 2.5), below 2.5, above 0.0, "
        "less 97.5, greater 92.5; 40 reps"
    ),
    ("binary", "specificity", "truth", "prediction"): (
        "cov<93,below,greater: cov 92.5 (SE 4.2), below 5.0, above 2.5, "
        "less 97.5, greater 90.0; 40 reps"
    ),
    ("binary", "specificity", "remeasurement", "label_noise"): (
        "cov<93,below: cov 92.5 (SE 1.9), below 4.0, above 3.5, "
        "less 94.5, greater 94.5; 200 reps"
    ),
    ("binary", "specificity", "remeasurement", "both"): (
        "cov>97: cov 100.0 (SE 0.0), below 0.0, above 0.0, "
        "less 100.0, greater 95.0; 40 reps"
    ),
    ("binary", "specificity", "remeasurement", "prediction"): (
        "cov>97,greater: cov 97.5 (SE 2.5), below 2.5, above 0.0, "
        "less 100.0, greater 92.5; 40 reps"
    ),
    ("binary", "specificity", "forward", "prediction"): (
        "below: cov 95.0 (SE 3.4), below 5.0, above 0.0, "
        "less 97.5, greater 95.0; 40 reps"
    ),
    ("roc", "roc_auc", "truth", "both"): (
        "cov<93,below,greater: cov 92.5 (SE 4.2), below 7.5, above 0.0, "
        "less 97.5, greater 90.0; 40 reps"
    ),
    ("roc", "roc_auc", "truth", "prediction"): (
        "cov>97: cov 97.5 (SE 2.5), below 2.5, above 0.0, "
        "less 100.0, greater 95.0; 40 reps"
    ),
    ("roc", "roc_auc", "forward", "label_noise"): (
        "cov<93,below,less,greater: cov 92.5 (SE 1.9), below 4.0, above 3.5, "
        "less 93.5, greater 93.0; 200 reps"
    ),
    ("roc", "roc_auc", "forward", "prediction"): (
        "below,greater: cov 95.0 (SE 3.4), below 5.0, above 0.0, "
        "less 97.5, greater 92.5; 40 reps"
    ),
}


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
