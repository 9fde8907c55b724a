"""Time two source trees of sklearn_noisy side by side: is the new one slower?

Purpose
-------
A refactor must not slow the library down (issue 10: "``benchmarks/`` show no
slowdown beyond noise (same-run ratios)"). This script times the same public
calls against two checkouts of the package, an *old* and a *new* one, in one
run, so that both see the same machine load, and prints the ratio new/old of
each case.

Usage
-----
::

    python benchmarks/compare_revisions.py --old PATH --new PATH [--rounds N]
                                           [--quick] [--only NAME,...]

``PATH`` is the root of a source tree (the folder that holds ``sklearn_noisy/``).
Both trees are run with the interpreter that runs this script. ``--rounds``
(default 3) is the number of timing rounds of each tree; ``--quick`` uses
M = 10⁵ samples for the large cases instead of 10⁶; ``--only`` reruns the named
cases (comma-separated, as printed in the table), for example the ones that
failed.

How it works
------------
Each round starts one short-lived worker process per tree (this same file with
``--worker``) with ``PYTHONPATH=<tree>``; the worker checks that
``sklearn_noisy.__file__`` lies under that tree, times every case and writes
the times as JSON. The rounds alternate the order old, new / new, old, so that
neither tree always runs first, and the best time of each case over the rounds
is kept (the minimum is the time least disturbed by other processes on a
shared machine). Only public API present in both trees is called, with the
default estimand of each tree (the old tree's ``"measurement"`` is the new
tree's ``"forward"``); the metric calls pass ``test_set_sampling=False``
(the label-noise computation only; the new default adds the sampling part).

The cases:

- large (M = 10⁶, or 10⁵ with ``--quick``): one call of each of expected MSE
  (per-sample and scalar sigma), MAE, RMSE, R², accuracy (per-sample q, scalar
  q, three classes with per-sample q), binary precision / recall / F1 /
  balanced accuracy / MCC (per-sample q), Brier score and log-loss (1-D
  probabilities of the positive class, per-sample q), the confusion matrix
  (per-sample q), and the paired difference for MSE and accuracy.
- small (M = 200, the per-call overhead): the same calls, each timed as the
  mean of ``SMALL_CALLS`` consecutive calls; ``NoisyCrossValidator(Ridge(),
  cv=5).fit`` on 300 samples with per-sample sigma; ``compare_estimators`` of
  two ridges on the same data (default scoring); a scorer from
  ``make_noisy_scorer("mean_squared_error", sigma=0.5)`` called on a fitted
  ridge; ``monte_carlo_score`` of scikit-learn's MSE with 200 draws.

Inside a worker every case gets one untimed warm-up call, then the best of
``REPEATS`` timings; over the rounds the best of the bests is kept.

How to read it
--------------
One line per case: the best time of the old tree, of the new tree, the ratio
new/old and PASS when new/old ≤ 1.15, FAIL otherwise. The 15 % allowance is the
noise of a shared machine between two separate processes: with the same tree
given as both ``--old`` and ``--new`` (an A/A run, worth doing to see the noise
of the day) the ratios stayed between 0.85 and 1.08 on a loaded two-core
machine, the multi-threaded MAE kernel being the noisiest. The small cases
(microseconds per call) measure the Python overhead of validation and dispatch;
the large ones the numerical kernels. The last line says whether every case
passed. A FAIL is first to be rerun (``--only NAME --rounds 7``): a real
slowdown fails again, noise does not; then profile the case in both trees
(``cProfile``) to find the function responsible. The exit status is 1 if a case
fails.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ALLOWANCE = 1.15
LARGE_M = 10**6
QUICK_M = 10**5
SMALL_M = 200
SMALL_CALLS = 100
CV_SAMPLES = 300
REPEATS = 3
WORKFLOW_CALLS = {
    "cv fit": 5,
    "compare_estimators": 2,
    "scorer call": 100,
    "monte carlo 200 draws": 5,
}

Case = Callable[[], object]


def _regression_data(m: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    y_true = rng.normal(0.0, 3.0, m)
    return {
        "y_true": y_true,
        "y_pred": y_true + rng.normal(0.0, 1.0, m),
        "y_pred_b": y_true + rng.normal(0.0, 1.2, m),
        "sigma": rng.uniform(0.1, 2.0, m),
    }


def _classification_data(m: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    c_true = rng.integers(0, 2, m)
    c_pred = np.where(rng.random(m) < 0.85, c_true, 1 - c_true)
    c_pred_b = np.where(rng.random(m) < 0.8, c_true, 1 - c_true)
    k_true = rng.integers(0, 3, m)
    k_pred = np.where(rng.random(m) < 0.8, k_true, rng.integers(0, 3, m))
    proba = np.clip(0.5 + (2 * c_true - 1) * rng.uniform(-0.2, 0.45, m), 0.01, 0.99)
    return {
        "c_true": c_true,
        "c_pred": c_pred,
        "c_pred_b": c_pred_b,
        "k_true": k_true,
        "k_pred": k_pred,
        "proba": proba,
        "q": rng.uniform(0.0, 0.3, m),
    }


def _metric_cases(m: int, seed: int = 0) -> dict[str, Case]:
    """The calls timed at every size, on data of ``m`` samples."""
    from sklearn_noisy import metrics as sm

    r = _regression_data(m, seed)
    c = _classification_data(m, seed + 1)
    y, yp, sigma = r["y_true"], r["y_pred"], r["sigma"]
    t, p, q = c["c_true"], c["c_pred"], c["q"]
    # Both trees compute the same thing: the paper's forward value (the new
    # tree's default estimand is 'auto', its truth estimate) without the
    # test-set sampling part (the new tree's default computes it; both take
    # test_set_sampling=False). The confusion matrix has neither option.
    F = {"estimand": "forward", "test_set_sampling": False}
    return {
        "mse sigma[i]": lambda: sm.expected_mean_squared_error(y, yp, sigma=sigma, **F),
        "mse sigma": lambda: sm.expected_mean_squared_error(y, yp, sigma=0.5, **F),
        "mae": lambda: sm.expected_mean_absolute_error(y, yp, sigma=sigma, **F),
        "rmse": lambda: sm.expected_root_mean_squared_error(y, yp, sigma=sigma, **F),
        "r2": lambda: sm.expected_r2_score(y, yp, sigma=sigma, **F),
        "accuracy q[i]": lambda: sm.expected_accuracy_score(t, p, q=q, **F),
        "accuracy q": lambda: sm.expected_accuracy_score(t, p, q=0.1, **F),
        "accuracy 3-class": lambda: sm.expected_accuracy_score(
            c["k_true"], c["k_pred"], q=q, **F
        ),
        "precision": lambda: sm.expected_precision_score(t, p, q=q, **F),
        "recall": lambda: sm.expected_recall_score(t, p, q=q, **F),
        "f1": lambda: sm.expected_f1_score(t, p, q=q, **F),
        "balanced accuracy": lambda: sm.expected_balanced_accuracy_score(
            t, p, q=q, **F
        ),
        "mcc": lambda: sm.expected_matthews_corrcoef(t, p, q=q, **F),
        "brier": lambda: sm.expected_brier_score_loss(t, c["proba"], q=q, **F),
        "log-loss": lambda: sm.expected_log_loss(t, c["proba"], q=q, **F),
        "confusion matrix": lambda: sm.expected_confusion_matrix(
            t, p, q=q, estimand="forward"
        ),
        "paired mse": lambda: sm.expected_paired_difference(
            y, yp, r["y_pred_b"], metric="mean_squared_error", sigma=sigma, **F
        ),
        "paired accuracy": lambda: sm.expected_paired_difference(
            t, p, c["c_pred_b"], metric="accuracy", q=q, **F
        ),
    }


def _workflow_cases(seed: int = 0) -> dict[str, Case]:
    """Small end-to-end calls: cross-validation, comparison, scorer, Monte Carlo."""
    from sklearn.linear_model import Ridge
    from sklearn.metrics import mean_squared_error

    from sklearn_noisy import NoisyCrossValidator, compare_estimators
    from sklearn_noisy.metrics import make_noisy_scorer, monte_carlo_score

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(CV_SAMPLES, 5))
    y = X @ rng.normal(size=5) + rng.normal(0.0, 0.5, CV_SAMPLES)
    sigma = rng.uniform(0.1, 1.0, CV_SAMPLES)
    fitted = Ridge().fit(X, y)
    scorer = make_noisy_scorer("mean_squared_error", sigma=0.5, estimand="forward")
    r = _regression_data(SMALL_M, seed)
    models = {"ridge": Ridge(), "ridge 10": Ridge(alpha=10.0)}
    return {
        "cv fit": lambda: NoisyCrossValidator(Ridge(), cv=5).fit(X, y, sigma=sigma),
        "compare_estimators": lambda: compare_estimators(
            models, X, y, sigma=sigma, estimand="forward"
        ),
        "scorer call": lambda: scorer(fitted, X, y),
        "monte carlo 200 draws": lambda: monte_carlo_score(
            mean_squared_error,
            r["y_true"],
            r["y_pred"],
            sigma=r["sigma"],
            n_draws=200,
            random_state=0,
        ),
    }


def _per_call(function: Case, calls: int) -> float:
    """Wall time of one call: best of ``REPEATS`` means over ``calls`` calls.

    One untimed call comes first (warm-up: lazy imports, caches).
    """
    function()
    best = np.inf
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(calls):
            function()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def _selected(cases: dict[str, Case], only: set[str] | None) -> dict[str, Case]:
    return {name: case for name, case in cases.items() if not only or name in only}


def _run_worker(tree: str, m: int, only: set[str] | None) -> None:
    """Time every case against the package found on ``sys.path``; print JSON."""
    import sklearn_noisy

    package = Path(sklearn_noisy.__file__).resolve()
    if not package.is_relative_to(Path(tree).resolve()):
        sys.exit(f"worker: sklearn_noisy imported from {package}, not under {tree}")
    times: dict[str, float] = {}
    small = _selected(
        {f"{name} @{SMALL_M}": case for name, case in _metric_cases(SMALL_M).items()},
        only,
    )
    for name, case in small.items():
        times[name] = _per_call(case, SMALL_CALLS)
    for name, case in _selected(_workflow_cases(), only).items():
        times[name] = _per_call(case, WORKFLOW_CALLS[name])
    large = _selected(
        {f"{name} @{_size(m)}": case for name, case in _metric_cases(m).items()}, only
    )
    for name, case in large.items():
        times[name] = _per_call(case, 1)
    json.dump({"file": str(package), "times": times}, sys.stdout)


def _time_tree(tree: Path, m: int, only: str | None) -> dict[str, float]:
    """One round of one tree: start a worker with ``PYTHONPATH=tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, __file__, "--worker", str(tree), "--m", str(m)]
    if only:
        command += ["--only", only]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"worker for {tree} failed:\n{done.stderr}")
    result = json.loads(done.stdout)
    if not Path(result["file"]).is_relative_to(tree):
        sys.exit(f"worker for {tree} imported {result['file']}")
    return result["times"]


def _revision(tree: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(tree), "log", "-1", "--format=%h %s"],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip()[:70] if done.returncode == 0 else "(not a git tree)"


def _report(best: dict[str, dict[str, float]], names: list[str]) -> int:
    """Print the table and the closing line; return the number of failures."""
    print(f"{'case':<28} {'old':>11} {'new':>11} {'new/old':>8}  verdict")
    failed = []
    for name in names:
        old, new = best["old"][name], best["new"][name]
        ratio = new / old
        verdict = "PASS" if ratio <= ALLOWANCE else "FAIL"
        if verdict == "FAIL":
            failed.append(name)
        old_text, new_text = _seconds(old), _seconds(new)
        print(f"{name:<28} {old_text:>11} {new_text:>11} {ratio:>8.3f}  {verdict}")
    if failed:
        print(
            f"FAIL: {len(failed)} of {len(names)} cases slower than new/old = "
            f"{ALLOWANCE}: {', '.join(failed)}"
        )
    else:
        print(f"PASS: all {len(names)} cases within new/old <= {ALLOWANCE}")
    return len(failed)


def _size(m: int) -> str:
    """``m`` as ``1e6`` when it is a power of ten, else as digits."""
    exponent = round(np.log10(m))
    return f"1e{exponent}" if 10**exponent == m else str(m)


def _seconds(value: float) -> str:
    if value < 1e-3:
        return f"{value * 1e6:.1f} µs"
    if value < 1.0:
        return f"{value * 1e3:.2f} ms"
    return f"{value:.3f} s"


def main() -> int:
    """Parse the command line and run the comparison (or one worker)."""
    parser = argparse.ArgumentParser(description="Time two sklearn_noisy trees.")
    parser.add_argument("--old", type=Path, help="root of the old source tree")
    parser.add_argument("--new", type=Path, help="root of the new source tree")
    parser.add_argument("--rounds", type=int, default=3, help="rounds per tree")
    parser.add_argument("--quick", action="store_true", help=f"M = {_size(QUICK_M)}")
    parser.add_argument("--only", help="comma-separated case names to run")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--m", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    only = set(args.only.split(",")) if args.only else None
    if args.worker:
        _run_worker(args.worker, args.m, only)
        return 0
    if args.old is None or args.new is None:
        parser.error("--old and --new are required")
    trees = {"old": args.old.resolve(), "new": args.new.resolve()}
    m = QUICK_M if args.quick else LARGE_M
    for label, tree in trees.items():
        print(f"{label}: {tree}  [{_revision(tree)}]")
    print(
        f"python: {sys.executable}; {args.rounds} rounds per tree, "
        f"large cases at M = {_size(m)}, small ones at M = {SMALL_M}"
    )
    best: dict[str, dict[str, float]] = {"old": {}, "new": {}}
    names: list[str] = []
    for round_index in range(args.rounds):
        order = ("old", "new") if round_index % 2 == 0 else ("new", "old")
        for label in order:
            times = _time_tree(trees[label], m, args.only)
            for name, value in times.items():
                best[label][name] = min(value, best[label].get(name, np.inf))
                if name not in names:
                    names.append(name)
        print(
            f"round {round_index + 1}/{args.rounds} done ({' then '.join(order)})",
            flush=True,
        )
    if not names:
        parser.error(f"no case matches --only {args.only!r}")
    return 1 if _report(best, names) else 0


if __name__ == "__main__":
    sys.exit(main())
