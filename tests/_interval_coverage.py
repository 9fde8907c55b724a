"""Seeded coverage simulations of the 95 % intervals (user guide: verification).

Each function builds one fixed problem, computes its interval, redraws the
labels ``n_draws`` times from the noise model and returns the fraction of
draws whose metric falls inside (and below / above) the interval. The metrics
on the draws are computed by independent vectorised formulas, checked against
scikit-learn on the first draws. ``python tests/_interval_coverage.py``
prints the tables of the verification page.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn import metrics as skm

from sklearn_noisy.metrics import (
    expected_accuracy_score,
    expected_balanced_accuracy_score,
    expected_brier_score_loss,
    expected_f1_score,
    expected_log_loss,
    expected_matthews_corrcoef,
    expected_mean_absolute_error,
    expected_mean_squared_error,
    expected_precision_score,
    expected_r2_score,
    expected_recall_score,
    expected_root_mean_squared_error,
)

COUNT_METRICS = {
    "accuracy": (expected_accuracy_score, skm.accuracy_score),
    "precision": (expected_precision_score, skm.precision_score),
    "recall": (expected_recall_score, skm.recall_score),
    "f1": (expected_f1_score, skm.f1_score),
    "balanced_accuracy": (
        expected_balanced_accuracy_score,
        skm.balanced_accuracy_score,
    ),
    "matthews_corrcoef": (expected_matthews_corrcoef, skm.matthews_corrcoef),
}
LOSS_METRICS = {
    "brier_score_loss": (expected_brier_score_loss, skm.brier_score_loss),
    "log_loss": (expected_log_loss, skm.log_loss),
}
REGRESSION_METRICS = {
    "mean_squared_error": (expected_mean_squared_error, skm.mean_squared_error),
    "root_mean_squared_error": (
        expected_root_mean_squared_error,
        skm.root_mean_squared_error,
    ),
    "mean_absolute_error": (expected_mean_absolute_error, skm.mean_absolute_error),
    "r2": (expected_r2_score, skm.r2_score),
}
#: Flip probabilities of the classification table; "per-sample" draws
#: q_i ~ U(0.02, 0.3).
Q_SETTINGS = (0.02, 0.05, 0.1, 0.3, "per-sample")
#: Tolerance of "inside": the interval ends are atoms computed one way, the
#: draws' metrics another.
_TOL = 1e-9


def classification_problem(q_setting, *, seed=0, n_samples=20):
    """Labels (40 % positive), predictions with 4 errors, and q."""
    rng = np.random.default_rng(seed)
    y_true = (rng.random(n_samples) < 0.4).astype(int)
    y_true[:2] = [0, 1]
    y_pred = y_true.copy()
    y_pred[2:6] = 1 - y_pred[2:6]
    proba = np.clip(0.5 + (y_true - 0.5) * rng.uniform(0.1, 0.9, n_samples), 0.02, 0.98)
    proba[2:6] = 1.0 - proba[2:6]
    if q_setting == "per-sample":
        q = rng.uniform(0.02, 0.3, n_samples)
    else:
        q = float(q_setting)
    return y_true, y_pred, proba, q


def _count_values(name, observed, y_pred):
    """The metric of each row of ``observed`` (scikit-learn's conventions)."""
    pred = y_pred.astype(bool)[None, :]
    obs = observed.astype(bool)
    m = obs.shape[1]
    tp = (obs & pred).sum(axis=1).astype(float)
    s = obs.sum(axis=1).astype(float)
    n_pos = float(pred.sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        if name == "accuracy":
            return (obs == pred).mean(axis=1)
        if name == "precision":
            return tp / n_pos if n_pos else np.zeros_like(tp)
        if name == "recall":
            return np.where(s > 0, tp / s, 0.0)
        if name == "f1":
            return np.where(n_pos + s > 0, 2.0 * tp / (n_pos + s), 0.0)
        tn = (m - n_pos) - (s - tp)
        if name == "balanced_accuracy":
            both = 0.5 * (tp / s + tn / (m - s))
            return np.where(s == 0, tn / m, np.where(s == m, tp / m, both))
        fp, fn = n_pos - tp, s - tp
        denominator = np.sqrt(n_pos * (m - n_pos) * s * (m - s))
        return np.where(denominator > 0, (tp * tn - fp * fn) / denominator, 0.0)


def _loss_values(name, observed, proba):
    if name == "brier_score_loss":
        return ((observed - proba[None, :]) ** 2).mean(axis=1)
    p = np.clip(proba, 1e-15, 1 - 1e-15)[None, :]
    return -(observed * np.log(p) + (1 - observed) * np.log1p(-p)).mean(axis=1)


def _fractions(values, interval):
    below = float(np.mean(values < interval.low - _TOL))
    above = float(np.mean(values > interval.high + _TOL))
    return 1.0 - below - above, below, above


def classification_coverage(name, q_setting, *, n_draws, seed=0, check=20):
    """``(interval, coverage, below, above)`` of one classification setting."""
    y_true, y_pred, proba, q = classification_problem(q_setting, seed=seed)
    rng = np.random.default_rng(seed + 1)
    flips = rng.random((n_draws, y_true.size)) < np.broadcast_to(q, y_true.shape)
    observed = np.where(flips, 1 - y_true, y_true)
    if name in COUNT_METRICS:
        function, reference = COUNT_METRICS[name]
        score = function(y_true, y_pred, q=q, estimand="forward")
        values = _count_values(name, observed, y_pred)
        second = y_pred
    else:
        function, reference = LOSS_METRICS[name]
        score = function(y_true, proba, q=q, estimand="forward")
        values = _loss_values(name, observed, proba)
        second = proba
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for row, value in zip(observed[:check], values[:check], strict=True):
            kwargs = {"labels": [0, 1]} if name == "log_loss" else {}
            expected = reference(row, second, **kwargs)
            assert abs(expected - value) < 1e-12, (name, expected, value)
    interval = score.confidence_interval(0.95)
    return (interval, *_fractions(values, interval))


def regression_problem(n_samples, *, seed=0):
    """Heteroscedastic σ ~ U(0.2, 1.5); y_true ~ N(0, 4); residuals N(0, 0.25)."""
    rng = np.random.default_rng(seed)
    y_true = rng.normal(0.0, 2.0, n_samples)
    y_pred = y_true + rng.normal(0.0, 0.5, n_samples)
    sigma = rng.uniform(0.2, 1.5, n_samples)
    return y_true, y_pred, sigma


def regression_coverage(name, n_samples, *, n_draws, seed=0, method="auto", check=5):
    """``(interval, coverage, below, above)`` of one regression setting."""
    y_true, y_pred, sigma = regression_problem(n_samples, seed=seed)
    function, reference = REGRESSION_METRICS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        score = function(y_true, y_pred, sigma=sigma, estimand="forward")
    rng = np.random.default_rng(seed + 1)
    y = y_true + sigma * rng.standard_normal((n_draws, n_samples))
    error = y - y_pred
    if name == "mean_absolute_error":
        values = np.abs(error).mean(axis=1)
    else:
        values = (error * error).mean(axis=1)
        if name == "root_mean_squared_error":
            values = np.sqrt(values)
        elif name == "r2":
            total = ((y - y.mean(axis=1, keepdims=True)) ** 2).mean(axis=1)
            values = 1.0 - values / total
    for row, value in zip(y[:check], values[:check], strict=True):
        assert abs(reference(row, y_pred) - value) < 1e-9 * max(1.0, abs(value))
    interval = score.confidence_interval(0.95, method=method)
    return (interval, *_fractions(values, interval))


def _main(n_draws=200_000):  # pragma: no cover - prints the docs' tables
    print("classification, M = 20: content / coverage (below, above), %")
    for name in (*COUNT_METRICS, *LOSS_METRICS):
        cells = []
        for q in Q_SETTINGS:
            interval, cover, below, above = classification_coverage(
                name, q, n_draws=n_draws
            )
            cells.append(
                f"{100 * interval.content:.1f} / {100 * cover:.1f} "
                f"({100 * below:.1f}, {100 * above:.1f})"
            )
        print(name, *cells, sep=" | ")
    print("regression: exact coverage (below, above) | normal coverage (below, above)")
    for name in REGRESSION_METRICS:
        for m in (8, 20):
            cells = []
            for method in ("auto", "normal"):
                interval, cover, below, above = regression_coverage(
                    name, m, n_draws=n_draws, method=method
                )
                cells.append(
                    f"{interval.method} [{interval.low:.3g}, {interval.high:.3g}] "
                    f"{100 * cover:.1f} ({100 * below:.1f}, {100 * above:.1f})"
                )
            print(name, m, *cells, sep=" | ")


if __name__ == "__main__":  # pragma: no cover
    _main()
