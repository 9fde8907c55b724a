"""The accuracy of ``method="delta"`` against the exact algorithm, worst cases included.

Run with ``python benchmarks/delta_accuracy.py``. For recall, F1, balanced
accuracy and MCC it compares the delta method with the exact Poisson-binomial
moments over a grid of sample sizes ``M``, flip probabilities (0.05, 0.2 and
per-sample ``U(0, 0.3)``) and label patterns:

* ``balanced``: half positives, predictions right 80 % of the time;
* ``rare``: 5 % positives (at least one), predictions right 90 % of the time;
* ``one positive``: ``y_true = y_pred = [0]*(M-2) + [1, 0]``, the worst case
  found by the audit of issue 16 (at ``M = 10``, ``q = 0.2``);
* ``all negative``: ``y_true = y_pred = [0]*M``.

It prints, per ``(M, q)``, the largest error of the expectation in units of
the exact standard deviation and the largest relative error of the variance
(with the pattern and metric where it occurs). The table in the docstrings
(``_DELTA_NOTES``) and the user guide is this output. It has no PASS/FAIL: it
measures, it does not check a goal.
"""

from __future__ import annotations

import numpy as np

from sklearn_noisy.metrics import (
    expected_balanced_accuracy_score,
    expected_f1_score,
    expected_matthews_corrcoef,
    expected_recall_score,
)

METRICS = {
    "recall": expected_recall_score,
    "f1": expected_f1_score,
    "balanced_accuracy": expected_balanced_accuracy_score,
    "matthews_corrcoef": expected_matthews_corrcoef,
}
SIZES = (10, 20, 50, 200, 500, 5000)


def patterns(m: int, rng: np.random.Generator) -> dict:
    balanced = rng.integers(0, 2, m)
    rare = (rng.random(m) < 0.05).astype(int)
    rare[0] = 1
    one = np.zeros(m, dtype=int)
    one[-2] = 1
    return {
        "balanced": (balanced, np.where(rng.random(m) < 0.8, balanced, 1 - balanced)),
        "rare": (rare, np.where(rng.random(m) < 0.9, rare, 1 - rare)),
        "one positive": (one, one),
        "all negative": (np.zeros(m, dtype=int), np.zeros(m, dtype=int)),
    }


def errors(function, y_true, y_pred, q) -> tuple[float, float]:
    exact = function(y_true, y_pred, q=q, labels=[0, 1])
    delta = function(y_true, y_pred, q=q, labels=[0, 1], method="delta")
    if exact.variance == 0.0:
        return 0.0, 0.0
    mean_error = abs(delta.expected - exact.expected) / exact.std
    return mean_error, (delta.variance - exact.variance) / exact.variance


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"{'M':>6} {'q':>10} {'max |ΔE|/SD':>12} {'max |ΔVar|/Var':>15}  worst case")
    for m in SIZES:
        cases = patterns(m, rng)
        for q_name in ("0.05", "0.2", "U(0,0.3)"):
            q = rng.uniform(0, 0.3, m) if q_name == "U(0,0.3)" else float(q_name)
            worst_e, worst_v, where = 0.0, 0.0, ""
            for pattern, (y_true, y_pred) in cases.items():
                for name, function in METRICS.items():
                    e, v = errors(function, y_true, y_pred, q)
                    worst_e = max(worst_e, e)
                    if abs(v) > abs(worst_v):
                        worst_v, where = v, f"{name}, {pattern}"
            print(f"{m:>6} {q_name:>10} {worst_e:>12.2g} {worst_v:>+15.1%}  {where}")


if __name__ == "__main__":
    main()
