"""Benchmark: memory and speed of precision, recall, F1, balanced accuracy, MCC.

Run with ``python benchmarks/bench_prf.py`` (``--quick`` for M = 10⁶ instead of
10⁷ in part 1). Goals (issue 15), checked in one run side by side with
scikit-learn:

1. peak extra memory below one input array (an int64 label array, 80 MB at
   M = 10⁷) for every metric: binary with a constant and a per-sample flip
   probability, and the multiclass macro F1. Measured with
   :mod:`tracemalloc` (numpy reports its allocations to it) around one call,
   the inputs already allocated; scikit-learn's own metric is printed beside;
2. exact binary F1 and MCC (with their variance) at most 0.2 s at M = 10⁵,
   constant and per-sample ``q`` (best of 3);
3. at zero noise the multiclass macro F1, balanced accuracy and MCC sample
   nothing and run at scikit-learn's speed: at most 2× scikit-learn's time at
   M = 10⁵ (they call scikit-learn once, plus validation);
4. for information: the multiclass macro F1 under noise (exact expectation,
   Monte Carlo variance over 1000 redrawn confusion matrices) against
   scikit-learn's plain ``f1_score``.

Prints ratios and PASS/FAIL; exits with status 1 if a goal is missed.
"""

from __future__ import annotations

import sys
import time
import tracemalloc
import warnings

import numpy as np
from sklearn import metrics as skm

from sklearn_noisy.metrics import (
    expected_balanced_accuracy_score,
    expected_f1_score,
    expected_matthews_corrcoef,
    expected_precision_score,
    expected_recall_score,
)

BINARY = {
    "precision": (expected_precision_score, skm.precision_score),
    "recall": (expected_recall_score, skm.recall_score),
    "f1": (expected_f1_score, skm.f1_score),
    "balanced_accuracy": (
        expected_balanced_accuracy_score,
        skm.balanced_accuracy_score,
    ),
    "matthews_corrcoef": (expected_matthews_corrcoef, skm.matthews_corrcoef),
}


#: One int64 label array at M = 10⁷. The working set of the streamed laws is
#: a constant (about 13 MB), so the limit is the goal's at every M.
LIMIT_MB = 80.0


def data(m: int, n_classes: int = 2, seed: int = 0):
    rng = np.random.default_rng(seed)
    y_true = rng.integers(0, n_classes, m)
    y_pred = np.where(rng.random(m) < 0.8, y_true, rng.integers(0, n_classes, m))
    return y_true, y_pred, rng.uniform(0.0, 0.3, m)


def peak_extra(function, *args, **kwargs) -> float:
    """Peak memory allocated during one call, in MB (tracemalloc)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tracemalloc.start()
        function(*args, **kwargs)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return peak / 1e6


def best_time(function, *args, repeats: int = 3, **kwargs) -> float:
    times = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(repeats):
            start = time.perf_counter()
            function(*args, **kwargs)
            times.append(time.perf_counter() - start)
    return min(times)


def bench_memory(m: int) -> bool:
    ok = True
    y_true, y_pred, q_sample = data(m)
    limit = LIMIT_MB
    print(f"1. Peak extra memory at M = {m:,} (limit {limit:.0f} MB, see LIMIT_MB)")
    print(f"   {'metric':>18} {'q':>9} {'ours [MB]':>10} {'sklearn [MB]':>13}  status")
    cases = [(name, q_name) for name in BINARY for q_name in ("0.1", "U(0,0.3)")]
    for name, q_name in cases:
        ours, theirs = BINARY[name]
        q = 0.1 if q_name == "0.1" else q_sample
        used = peak_extra(ours, y_true, y_pred, q=q)
        reference = peak_extra(theirs, y_true, y_pred)
        status = "PASS" if used < limit else "FAIL"
        ok &= used < limit
        print(f"   {name:>18} {q_name:>9} {used:>10.1f} {reference:>13.1f}  {status}")
    y3, p3, _ = data(m, n_classes=3, seed=1)
    used = peak_extra(expected_f1_score, y3, p3, q=0.1, average="macro")
    reference = peak_extra(skm.f1_score, y3, p3, average="macro")
    status = "PASS" if used < limit else "FAIL"
    ok &= used < limit
    label = "f1 macro, K=3"
    print(f"   {label:>18} {'0.1':>9} {used:>10.1f} {reference:>13.1f}  {status}")
    return ok


def bench_binary_speed() -> bool:
    ok = True
    m, limit = 100_000, 0.2
    y_true, y_pred, q_sample = data(m)
    print(f"2. Exact binary F1 and MCC with variance at M = {m:,} (limit {limit} s)")
    for name in ("f1", "matthews_corrcoef"):
        ours, theirs = BINARY[name]
        reference = best_time(theirs, y_true, y_pred)
        for q_name, q in (("0.1", 0.1), ("U(0,0.3)", q_sample)):
            seconds = best_time(ours, y_true, y_pred, q=q)
            status = "PASS" if seconds <= limit else "FAIL"
            ok &= seconds <= limit
            print(
                f"   {name:>18} q={q_name:<9} {seconds:.3f} s  "
                f"(scikit-learn {reference:.4f} s, ratio {seconds / reference:.1f})  "
                f"{status}"
            )
    return ok


def bench_zero_noise() -> bool:
    ok = True
    m, limit = 100_000, 2.0
    y_true, y_pred, _ = data(m, n_classes=4, seed=2)
    print(f"3. Zero noise, 4 classes, M = {m:,}: ratio to scikit-learn (limit {limit})")
    cases = [
        ("f1 macro", expected_f1_score, skm.f1_score, {"average": "macro"}),
        ("balanced_accuracy", *BINARY["balanced_accuracy"], {}),
        ("matthews_corrcoef", *BINARY["matthews_corrcoef"], {}),
    ]
    for name, ours, theirs, options in cases:
        seconds = best_time(ours, y_true, y_pred, q=0.0, **options)
        reference = best_time(theirs, y_true, y_pred, **options)
        ratio = seconds / reference
        status = "PASS" if ratio <= limit else "FAIL"
        ok &= ratio <= limit
        print(
            f"   {name:>18} {seconds:.4f} s vs {reference:.4f} s, "
            f"ratio {ratio:.2f}  {status}"
        )
    return ok


def bench_noisy_macro() -> None:
    m = 100_000
    y_true, y_pred, q_sample = data(m, n_classes=4, seed=3)
    print(f"4. Macro F1 under noise, 4 classes, M = {m:,} (information)")
    reference = best_time(skm.f1_score, y_true, y_pred, average="macro")
    for q_name, q in (("0.1", 0.1), ("U(0,0.3)", q_sample)):
        seconds = best_time(expected_f1_score, y_true, y_pred, q=q, average="macro")
        print(
            f"   q={q_name:<9} {seconds:.3f} s (scikit-learn {reference:.4f} s, "
            f"ratio {seconds / reference:.1f})"
        )


def main() -> int:
    m = 1_000_000 if "--quick" in sys.argv else 10_000_000
    ok = bench_memory(m)
    ok &= bench_binary_speed()
    ok &= bench_zero_noise()
    bench_noisy_macro()
    print("ALL PASS" if ok else "SOME GOALS MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
