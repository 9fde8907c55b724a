"""Peak extra memory of every public ``expected_*`` metric and paired difference.

Run ``python benchmarks/bench_memory.py`` (``--m 1000000`` for a quicker run,
``--only NAME`` for some cases). Each case runs in a fresh subprocess: the
inputs are made, the function is called once on 1,000 samples (so that lazy
imports and caches are not counted), then called on the M samples with
:mod:`tracemalloc` tracing (numpy registers its array allocations with
tracemalloc). The peak traced memory above what was allocated before the call
is the case's *extra* memory; the growth of the process's peak resident set
(``ru_maxrss``) during the call is printed alongside.

The goal (issue 15) is a peak extra memory below one input array,
``8 B x M`` (80 MB at M = 10⁷, float64): each line prints the MB, the ratio to
one input array and PASS or FAIL. The inputs are float64 values, per-sample
``sigma`` and ``q``, int64 binary class labels and 1-D positive-class
probabilities. Paired differences that go through the joint Monte Carlo (RMSE,
R², recall, F1, balanced accuracy, MCC) run 2 draws: their memory does not
depend on the number of draws, but each draw holds a full vector of drawn
labels, so they cannot meet the goal.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

GOAL_M = 10**7

_SINGLE = {
    "mean_squared_error": ("expected_mean_squared_error", "regression"),
    "mean_absolute_error": ("expected_mean_absolute_error", "regression"),
    "root_mean_squared_error": ("expected_root_mean_squared_error", "regression"),
    "r2": ("expected_r2_score", "regression"),
    "accuracy": ("expected_accuracy_score", "labels"),
    "precision": ("expected_precision_score", "labels"),
    "recall": ("expected_recall_score", "labels"),
    "f1": ("expected_f1_score", "labels"),
    "balanced_accuracy": ("expected_balanced_accuracy_score", "labels"),
    "matthews_corrcoef": ("expected_matthews_corrcoef", "labels"),
    "confusion_matrix": ("expected_confusion_matrix", "labels"),
    "brier_score_loss": ("expected_brier_score_loss", "proba"),
    "log_loss": ("expected_log_loss", "proba"),
}
_PAIRED = {
    "mean_squared_error": "regression",
    "mean_absolute_error": "regression",
    "root_mean_squared_error": "regression",
    "r2": "regression",
    "accuracy": "labels",
    "precision": "labels",
    "recall": "labels",
    "f1": "labels",
    "balanced_accuracy": "labels",
    "matthews_corrcoef": "labels",
    "brier_score_loss": "proba",
    "log_loss": "proba",
}
_TRUTH = {"mean_squared_error": "regression", "accuracy": "labels"}


def _cases() -> list[str]:
    return (
        list(_SINGLE)
        + [f"paired:{name}" for name in _PAIRED]
        + [f"paired_truth:{name}" for name in _TRUTH]
    )


def _data(kind: str, m: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    if kind == "regression":
        y = rng.normal(0.0, 3.0, m)
        return {
            "y_true": y,
            "a": y + rng.normal(0.0, 1.0, m),
            "b": y + rng.normal(0.0, 1.2, m),
            "sigma": rng.uniform(0.1, 2.0, m),
        }
    c = rng.integers(0, 2, m)
    data = {"y_true": c, "q": rng.uniform(0.0, 0.3, m)}
    if kind == "labels":
        data["a"] = np.where(rng.random(m) < 0.85, c, 1 - c)
        data["b"] = np.where(rng.random(m) < 0.8, c, 1 - c)
    else:
        data["a"] = np.clip(0.6 * c + 0.2 + 0.1 * rng.normal(size=m), 0.01, 0.99)
        data["b"] = np.clip(0.5 * c + 0.25 + 0.1 * rng.normal(size=m), 0.01, 0.99)
    return data


def _call(case: str) -> tuple[str, Callable[[dict[str, np.ndarray]], Any]]:
    """The input kind of ``case`` and a function of the data that runs it."""
    import sklearn_noisy.metrics as metrics

    kind_name, _, name = case.rpartition(":")
    if not kind_name:
        function_name, kind = _SINGLE[name]
        function = getattr(metrics, function_name)

        def single(d: dict[str, np.ndarray]) -> Any:
            noise = {"sigma": d["sigma"]} if kind == "regression" else {"q": d["q"]}
            return function(d["y_true"], d["a"], **noise)

        return kind, single
    kind = (_PAIRED if kind_name == "paired" else _TRUTH)[name]
    estimand = "truth" if kind_name == "paired_truth" else "forward"

    def paired(d: dict[str, np.ndarray]) -> Any:
        noise = {"sigma": d["sigma"]} if kind == "regression" else {"q": d["q"]}
        return metrics.expected_paired_difference(
            d["y_true"], d["a"], d["b"], metric=name, n_draws=2, estimand=estimand,
            **noise,
        )  # fmt: skip

    return kind, paired


def _measure(case: str, m: int) -> dict[str, float]:
    """Run one case in this process; return its peak extra memory in bytes."""
    kind, run = _call(case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run(_data(kind, 1000, seed=1))  # imports and caches, not counted
        data = _data(kind, m)
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        tracemalloc.start()
        baseline, _ = tracemalloc.get_traced_memory()
        start = time.perf_counter()
        run(data)
        seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "peak": float(peak - baseline),
        "rss": 1024.0 * (rss_after - rss_before),  # ru_maxrss is in KiB on Linux
        "seconds": seconds,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=GOAL_M, help="samples (10**7)")
    parser.add_argument("--only", help="comma-separated cases (default: all)")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # the subprocess side
    args = parser.parse_args(argv)
    if args.one is not None:
        print(json.dumps(_measure(args.one, args.m)))
        return 0
    cases = _cases() if args.only is None else args.only.split(",")
    one_array = 8.0 * args.m
    print(
        f"Peak extra memory at M = {args.m:,} (tracemalloc; goal: below one "
        f"input array, 8 B x M = {one_array / 1e6:.0f} MB)"
    )
    print(f"{'case':<36} {'MB':>9} {'ratio':>7} {'rss MB':>9} {'s':>7}  goal")
    failures = 0
    for case in cases:
        done = subprocess.run(
            [sys.executable, __file__, "--one", case, "--m", str(args.m)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            failures += 1
            last = (done.stderr.strip().splitlines() or ["?"])[-1]
            print(f"{case:<36} ERROR {last}")
            continue
        result = json.loads(done.stdout.strip().splitlines()[-1])
        ratio = result["peak"] / one_array
        verdict = "PASS" if ratio < 1.0 else "FAIL"
        failures += verdict == "FAIL"
        print(
            f"{case:<36} {result['peak'] / 1e6:>9.1f} {ratio:>7.2f} "
            f"{result['rss'] / 1e6:>9.1f} {result['seconds']:>7.2f}  {verdict}",
            flush=True,
        )
    print(f"{len(cases) - failures} of {len(cases)} cases PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
