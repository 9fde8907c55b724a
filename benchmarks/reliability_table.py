"""The labels' reliability from σ and from the repeats: the user guide's table.

Measures only (issue 24, "Model or measurements?"). Per setting, ``--reps``
seeded data sets of ``--n`` samples, truth ~ N(0, 1), ``k`` readings each with
noise SD 1 (or 2 to 4 readings, as the embedded data), labels the means:
the mean estimate of the σ-based reliability (σ = the SEM of the readings,
``sigma_dof`` = n_i − 1), ICC(1,k) and the split-half, their Monte Carlo SE and
the coverage of their 95 % intervals of the known truth
``1 / (1 + mean(1/n_i))``. Then the noise ceilings against a perfect model
(n = 300): the mean of (its R² − the R² ceiling), (its correlation − the
correlation ceiling) and (the noise-corrected correlation of a model − its
correlation with the truth), each with its SE.

    PYTHONPATH=. python benchmarks/reliability_table.py --reps 2000
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from sklearn.metrics import r2_score

from sklearn_noisy.metrics import label_reliability
from sklearn_noisy.preprocessing import repeat_reliability, summarize_repeats
from sklearn_noisy.utils._warnings import quiet


def repeats_row(counts: np.ndarray, reps: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    n, k = counts.size, int(counts.max())
    truth = 1.0 / (1.0 + np.mean(1.0 / counts))
    values, covered = [], []
    for _ in range(reps):
        Y = rng.normal(size=(n, 1)) + rng.normal(size=(n, k))
        Y[np.arange(k) >= counts[:, None]] = np.nan
        with quiet():
            s = summarize_repeats(Y)
        found = (
            label_reliability(s.y_mean, sigma=s.sigma, sigma_dof=s.sigma_dof),
            repeat_reliability(Y),
            repeat_reliability(Y, method="split_half"),
        )
        values.append([r.estimate for r in found])
        covered.append([r.ci_low <= truth <= r.ci_high for r in found])
    values, covered = np.array(values), np.mean(covered, axis=0)
    se = values.std(axis=0, ddof=1) / math.sqrt(reps)
    cells = [f"{m:.4f} ± {e:.4f}" for m, e in zip(values.mean(axis=0), se, strict=True)]
    return [f"{truth:.4f}", *cells, *(f"{c:.3f}" for c in covered)]


def ceilings(reps: int, seed: int, n: int = 300) -> list[str]:
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(reps):
        t = rng.normal(size=n)
        sigma = 0.5 * rng.uniform(0.5, 1.5, size=n)
        y = t + rng.normal(size=n) * sigma
        pred = t + rng.normal(scale=0.5, size=n)
        r = label_reliability(y, sigma=sigma)
        rows.append(
            (
                r2_score(y, t) - r.r2_ceiling,
                np.corrcoef(t, y)[0, 1] - r.correlation_ceiling,
                r.disattenuate(np.corrcoef(pred, y)[0, 1]) - np.corrcoef(pred, t)[0, 1],
            )
        )
    rows = np.array(rows)
    se = rows.std(axis=0, ddof=1) / math.sqrt(reps)
    return [f"{m:+.5f} ± {e:.5f}" for m, e in zip(rows.mean(axis=0), se, strict=True)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--n", type=int, default=200)
    args = parser.parse_args()
    head = "k | truth | sigma-based | ICC(1,k) | split-half | coverage s/ICC/split"
    print(head)
    for k in (2, 3, 5, 10):
        row = repeats_row(np.full(args.n, k), args.reps, seed=k)
        print(k, "|", " | ".join(row))
    counts = np.random.default_rng(7).integers(2, 5, size=args.n)
    print("2-4", "|", " | ".join(repeats_row(counts, args.reps, seed=11)))
    print("ceilings (n=300): R2 - ceiling | r - ceiling | corrected - r(truth)")
    print(" | ".join(ceilings(args.reps, seed=1)))


if __name__ == "__main__":
    main()
