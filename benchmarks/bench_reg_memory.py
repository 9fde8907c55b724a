"""Peak extra memory of the regression metrics, every estimand, at M = 10⁷.

Run ``python benchmarks/bench_reg_memory.py`` (``--m`` to change the size).
For MSE, MAE, RMSE and R² with per-sample ``sigma``, for every estimand each
metric offers (and ``method="delta"`` of RMSE and R²), it measures the peak
memory allocated during one call with :mod:`tracemalloc`, after the
per-thread work arrays of the kernels are released so that they count too,
and prints it against the goal of issue 15: below one input array
(``8 B x M``, 80 MB at M = 10⁷), PASS or FAIL. scikit-learn's own metrics
are measured alongside for reference.
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc
import warnings
from collections.abc import Callable

import numpy as np
from sklearn.metrics import (
    mean_absolute_error,
    mean_squared_error,
    r2_score,
    root_mean_squared_error,
)

from sklearn_noisy.metrics import (
    expected_mean_absolute_error,
    expected_mean_squared_error,
    expected_r2_score,
    expected_root_mean_squared_error,
)
from sklearn_noisy.metrics._engines.regression import sums as _regression_kernels


def _peak(function: Callable[[], object]) -> tuple[int, float]:
    """Peak bytes allocated during one call, and its wall time."""
    _regression_kernels._WORKSPACE.__dict__.clear()
    gc.collect()
    tracemalloc.start()
    try:
        start = time.perf_counter()
        function()
        elapsed = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, elapsed


def run(m: int) -> bool:
    """Measure every case; True when all pass."""
    rng = np.random.default_rng(0)
    y_true = rng.normal(0.0, 3.0, m)
    y_pred = y_true + rng.normal(0.0, 1.0, m)
    sigma = rng.uniform(0.1, 2.0, m)
    dof = np.full(m, 4.0)
    goal = y_true.nbytes
    cases: dict[str, Callable[[], object]] = {}
    for name, metric in (
        ("MSE", expected_mean_squared_error),
        ("MAE", expected_mean_absolute_error),
        ("RMSE", expected_root_mean_squared_error),
        ("R2", expected_r2_score),
    ):
        for estimand in metric.estimands:
            cases[f"{name} {estimand}"] = lambda metric=metric, estimand=estimand: (
                metric(y_true, y_pred, sigma=sigma, estimand=estimand, sigma_dof=dof)
            )
        if name in ("RMSE", "R2"):
            cases[f"{name} forward, delta"] = lambda metric=metric: metric(
                y_true, y_pred, sigma=sigma, method="delta"
            )
    # Two outputs of M/2 samples each: the same number of values.
    half = m // 2
    y_true_2 = y_true[: 2 * half].reshape(half, 2)
    y_pred_2 = y_pred[: 2 * half].reshape(half, 2)
    sigma_2 = sigma[: 2 * half].reshape(half, 2)
    cases["R2 variance_weighted (2 outputs)"] = lambda: expected_r2_score(
        y_true_2, y_pred_2, sigma=sigma_2, multioutput="variance_weighted"
    )
    print(
        f"Peak extra memory at M = {m:,} (tracemalloc); goal: below one input "
        f"array, {goal / 2**20:.1f} MiB.\n"
    )
    all_pass = True
    for label, function in cases.items():
        with warnings.catch_warnings():  # e.g. a truth RMSE clipped at 0
            warnings.simplefilter("ignore")
            peak, elapsed = _peak(function)
        ok = peak < goal
        all_pass &= ok
        print(
            f"  {label:<34} {peak / 2**20:9.2f} MiB  {elapsed:7.2f} s  "
            f"{'PASS' if ok else 'FAIL'}"
        )
    print("\nscikit-learn, for reference:")
    for label, function in (
        ("mean_squared_error", lambda: mean_squared_error(y_true, y_pred)),
        ("mean_absolute_error", lambda: mean_absolute_error(y_true, y_pred)),
        ("root_mean_squared_error", lambda: root_mean_squared_error(y_true, y_pred)),
        ("r2_score", lambda: r2_score(y_true, y_pred)),
    ):
        peak, elapsed = _peak(function)
        print(f"  {label:<34} {peak / 2**20:9.2f} MiB  {elapsed:7.2f} s")
    print("\nALL MEMORY GOALS PASS" if all_pass else "\nSOME MEMORY GOALS FAIL")
    return all_pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=10**7, help="number of samples")
    args = parser.parse_args()
    run(args.m)


if __name__ == "__main__":
    main()
