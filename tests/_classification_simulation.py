"""End-to-end simulation of the classification estimands (ESTIMANDS §5).

A known truth: ``M`` samples with true classes ``c``, fixed predictions ``ŷ``
(a fixed classifier's output, right about 75 % of the time, drawn once and
held fixed, and fixed predicted probabilities for Brier and log-loss) and a
known flip model: per-sample ``q_i`` for binary labels, a 3-class ``T``
otherwise. Each replicate draws fresh noisy labels ``c̃`` and computes, with
the library, the truth and the remeasurement estimates and their SDs.

Targets: ``θ_T`` is scikit-learn's metric on the true classes; ``θ_R``, the
metric expected over fresh noisy labels, is the mean of the nominal metric
over ``n_target`` further independent draws (exact enough: its Monte Carlo
error is ``SD/√n_target``).

Run as a script for the table: ``python tests/_classification_simulation.py``.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn import metrics as sk
from sklearn.exceptions import UndefinedMetricWarning

from sklearn_noisy.metrics import (
    expected_accuracy_score,
    expected_balanced_accuracy_score,
    expected_brier_score_loss,
    expected_f1_score,
    expected_log_loss,
    expected_matthews_corrcoef,
    expected_precision_score,
    expected_recall_score,
)
from sklearn_noisy.metrics._engines.counts.estimands import metric_gradient

T3 = np.array([[0.85, 0.10, 0.05], [0.08, 0.80, 0.12], [0.05, 0.15, 0.80]])
SHARES3 = (0.5, 0.3, 0.2)

_PRF = {
    "precision": (expected_precision_score, sk.precision_score),
    "recall": (expected_recall_score, sk.recall_score),
    "f1": (expected_f1_score, sk.f1_score),
}


def _cases(n_classes):
    """``(label, library function, kwargs, scikit-learn function, uses proba)``."""
    averages = ("binary",) if n_classes == 2 else ("micro", "macro", "weighted")
    cases = [("accuracy", expected_accuracy_score, {}, sk.accuracy_score, False)]
    for name, (ours, theirs) in _PRF.items():
        for average in averages:
            extra = {"zero_division": 0}
            if average != "binary":
                extra["labels"] = list(range(n_classes))
            cases.append(
                (
                    f"{name} ({average})",
                    ours,
                    {"average": average},
                    _with(theirs, average=average, **extra),
                    False,
                )
            )
    cases += [
        (
            "balanced_accuracy",
            expected_balanced_accuracy_score,
            {},
            sk.balanced_accuracy_score,
            False,
        ),
        (
            "matthews_corrcoef",
            expected_matthews_corrcoef,
            {},
            sk.matthews_corrcoef,
            False,
        ),
        ("brier_score_loss", expected_brier_score_loss, {}, _brier, True),
        ("log_loss", expected_log_loss, {}, _log_loss, True),
    ]
    return cases


def _with(function, **kwargs):
    def call(y, p):
        return function(y, p, **kwargs)

    return call


def _brier(y, proba):
    if proba.ndim == 1:
        return sk.brier_score_loss(y, proba)
    onehot = np.eye(proba.shape[1])[y]
    return float(np.mean(np.sum((proba - onehot) ** 2, axis=1)))


def _log_loss(y, proba):
    return sk.log_loss(
        y, proba, labels=list(range(2 if proba.ndim == 1 else proba.shape[1]))
    )


def make_setting(n_classes, n_samples, seed):
    """True classes, fixed predictions and probabilities, and the flip model."""
    rng = np.random.default_rng(seed)
    if n_classes == 2:
        true = (rng.random(n_samples) < 0.4).astype(int)
        noise = {"q": rng.uniform(0.0, 0.3, n_samples), "labels": [0, 1]}
    else:
        true = rng.choice(3, n_samples, p=SHARES3)
        noise = {"transition_matrix": T3, "labels": [0, 1, 2]}
    right = rng.random(n_samples) < 0.75
    pred = np.where(
        right, true, (true + rng.integers(1, n_classes, n_samples)) % n_classes
    )
    logits = rng.normal(0.0, 1.0, (n_samples, n_classes))
    logits[np.arange(n_samples), true] += 1.5
    proba = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    if n_classes == 2:
        proba = proba[:, 1]
    return true, pred, proba, noise


def draw_labels(true, noise, rng, n_draws):
    """``n_draws`` independent sets of noisy labels, shape ``(n_draws, M)``."""
    n_samples = true.size
    if "q" in noise:
        flip = rng.random((n_draws, n_samples)) < noise["q"]
        return np.where(flip, 1 - true, true)
    cumulative = np.cumsum(noise["transition_matrix"], axis=1)[true]
    u = rng.random((n_draws, n_samples, 1))
    return np.minimum((u > cumulative[None]).sum(axis=2), cumulative.shape[1] - 1)


def simulate(n_classes=2, n_samples=300, n_replicates=300, n_target=4000, seed=0):
    """Per metric and estimand: bias/spread, reported SD/spread and coverage."""
    true, pred, proba, noise = make_setting(n_classes, n_samples, seed)
    rng = np.random.default_rng(seed + 1)
    replicates = draw_labels(true, noise, rng, n_replicates)
    target_draws = draw_labels(true, noise, rng, n_target)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        for label, ours, kwargs, theirs, uses_proba in _cases(n_classes):
            second = proba if uses_proba else pred
            theta_t = float(theirs(true, second))
            theta_r = _remeasurement_target(
                label, ours, kwargs, second, true, noise, target_draws
            )
            for estimand, target in (("truth", theta_t), ("remeasurement", theta_r)):
                scores = [
                    ours(obs, second, estimand=estimand, **kwargs, **noise)
                    for obs in replicates
                ]
                rows.append(_summary(label, estimand, target, scores))
    return rows


def _remeasurement_target(label, ours, kwargs, second, true, noise, draws):
    """θ_R: exact (forward moments on the true classes) for the per-sample
    losses and accuracy, else the mean nominal metric over the draws."""
    if label in ("accuracy", "brier_score_loss", "log_loss"):
        return ours(true, second, estimand="forward", **noise).expected
    n_classes = len(noise["labels"])
    name = label.split(" ")[0]
    average = kwargs.get("average", "binary")
    cells = draws * n_classes + second[None, :]
    values = [
        metric_gradient(
            name,
            np.bincount(row, minlength=n_classes**2)
            .reshape(n_classes, n_classes)
            .astype(float),
            pos_index=1,
            average=average,
        )[0]
        for row in cells
    ]
    return float(np.mean(values))


def _summary(label, estimand, target, scores):
    estimate = np.array([s.expected for s in scores])
    reported = np.array([s.std for s in scores])
    spread = estimate.std(ddof=1)
    covered = np.abs(estimate - target) <= 1.959963984540054 * reported
    return {
        "metric": label,
        "estimand": estimand,
        "method": scores[0].method,
        "bias/sd": (estimate.mean() - target) / spread,
        "sd ratio": reported.mean() / spread,
        "coverage": covered.mean(),
    }


def format_table(rows):
    header = ("metric", "estimand", "method", "bias/SD", "SD ratio", "cover")
    lines = ["{:<22} {:<14} {:<7} {:>8} {:>9} {:>6}".format(*header)]
    for row in rows:
        lines.append(
            f"{row['metric']:<22} {row['estimand']:<14} {row['method']:<7} "
            f"{row['bias/sd']:>+8.3f} {row['sd ratio']:>9.3f} {row['coverage']:>6.3f}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    n_replicates = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    for n_classes in (2, 3):
        print(f"\n{n_classes} classes, M = 300, {n_replicates} replicates")
        print(format_table(simulate(n_classes, 300, n_replicates)))
