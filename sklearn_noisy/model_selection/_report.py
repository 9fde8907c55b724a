"""Reporting a fitted :class:`NoisyCrossValidator`: table, dict/JSON and text.

The functions read only the public fitted attributes of the cross-validator
(``cv_results_``, ``fold_scores_``, ``pooled_``, ``fold_summary_``,
``scorers_``, ...); its :meth:`summary`, :meth:`to_dict` and ``str`` delegate
here.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.special import ndtri

__all__: list[str] = []


def _std(variance: float) -> float:
    return math.sqrt(variance) if variance >= 0 else math.nan


def _z_value(confidence_level: float) -> float:
    return float(ndtri(0.5 + confidence_level / 2.0))


def _json_number(value: Any) -> Any:
    """A float for JSON: NaN and infinities become None (strict JSON has neither)."""
    value = float(value)
    return value if math.isfinite(value) else None


def _as_table(rows: list[dict]) -> Any:
    """A pandas DataFrame of ``rows`` when pandas is installed, else the rows."""
    try:
        import pandas as pd
    except ImportError:
        return rows
    return pd.DataFrame(rows)


def _fold_summary(cv_results: dict[str, np.ndarray], key: str) -> dict[str, float]:
    """Fold mean, between-fold SD and its excess over label noise.

    (user guide: :ref:`formula_pooling`)
    """
    expected = cv_results[f"{key}_expected"]
    nominal = cv_results[f"{key}_nominal"]
    variance = cv_results[f"{key}_variance"]
    ok = np.isfinite(expected) & np.isfinite(nominal) & ~np.isnan(variance)
    n_ok = int(ok.sum())
    nan = math.nan
    if n_ok == 0:
        return {
            "mean_expected": nan,
            "mean_nominal": nan,
            "between_fold_sd": nan,
            "mean_label_noise_variance": nan,
            "excess_variance": nan,
            "excess_sd": nan,
        }
    mean_noise = float(np.mean(variance[ok]))
    if n_ok > 1:
        s_b2 = float(np.var(nominal[ok], ddof=1))
        excess = max(s_b2 - mean_noise, 0.0)
        s_b, excess_sd = math.sqrt(s_b2), math.sqrt(excess)
    else:
        s_b = excess = excess_sd = nan
    return {
        "mean_expected": float(np.mean(expected[ok])),
        "mean_nominal": float(np.mean(nominal[ok])),
        "between_fold_sd": s_b,
        "mean_label_noise_variance": mean_noise,
        "excess_variance": excess,
        "excess_sd": excess_sd,
    }


# ---------------------------------------------------------------- summary()
def _fold_rows(cv: Any, key: str, z: float) -> list[dict[str, Any]]:
    rows = []
    for k, score in enumerate(cv.fold_scores_[key]):
        expected = cv.cv_results_[f"{key}_expected"][k]
        std = _std(cv.cv_results_[f"{key}_variance"][k])
        rows.append(
            {
                "metric": key,
                "fold": k,
                "n_test": int(cv.cv_results_["n_test"][k]),
                "expected": float(expected),
                "std": std,
                "ci_low": float(expected - z * std),
                "ci_high": float(expected + z * std),
                "nominal": float(cv.cv_results_[f"{key}_nominal"][k]),
                "method": None if score is None else score.method,
            }
        )
    return rows


def _pooled_row(key: str, pooled: Any, confidence_level: float) -> dict[str, Any]:
    low, high = pooled.confidence_interval(confidence_level)
    return {
        "metric": key,
        "fold": "pooled",
        "n_test": pooled.n_samples,
        "expected": pooled.expected,
        "std": pooled.std,
        "ci_low": low,
        "ci_high": high,
        "nominal": pooled.nominal,
        "method": pooled.method,
    }


def _summary_table(cv: Any) -> Any:
    """The rows of :meth:`NoisyCrossValidator.summary`, as a table."""
    z = _z_value(cv.confidence_level)
    rows = []
    for key in cv.scorers_:
        rows += _fold_rows(cv, key, z)
        pooled = cv.pooled_.get(key)
        if pooled is not None:
            rows.append(_pooled_row(key, pooled, cv.confidence_level))
    return _as_table(rows)


# ------------------------------------------------------------------ to_dict()
def _fold_dicts(cv: Any) -> list[dict[str, Any]]:
    folds = []
    for k in range(cv.n_splits_):
        fold = {
            "fold": k,
            "n_test": int(cv.cv_results_["n_test"][k]),
            "fit_time": float(cv.cv_results_["fit_time"][k]),
            "score_time": float(cv.cv_results_["score_time"][k]),
            "metrics": {},
        }
        for key in cv.scorers_:
            variance = cv.cv_results_[f"{key}_variance"][k]
            fold["metrics"][key] = {
                "expected": _json_number(cv.cv_results_[f"{key}_expected"][k]),
                "variance": _json_number(variance),
                "std": _json_number(_std(variance)),
                "nominal": _json_number(cv.cv_results_[f"{key}_nominal"][k]),
            }
        folds.append(fold)
    return folds


def _pooled_dicts(cv: Any) -> dict[str, dict[str, Any]]:
    pooled = {}
    for key, score in cv.pooled_.items():
        entry = {
            field: _json_number(value) if isinstance(value, float) else value
            for field, value in score.to_dict().items()
        }
        low, high = score.confidence_interval(cv.confidence_level)
        entry["ci_low"], entry["ci_high"] = _json_number(low), _json_number(high)
        pooled[key] = entry
    return pooled


def _results_dict(cv: Any) -> dict[str, Any]:
    """:meth:`NoisyCrossValidator.to_dict`: all results, JSON-serialisable."""
    summary = {
        key: {name: _json_number(value) for name, value in values.items()}
        for key, values in cv.fold_summary_.items()
    }
    return {
        "estimator": repr(cv.estimator),
        "n_samples": int(cv.n_samples_),
        "n_splits": int(cv.n_splits_),
        "noise": cv.noise_,
        "confidence_level": float(cv.confidence_level),
        "metrics": {
            key: {
                "metric": scorer.metric,
                "greater_is_better": bool(scorer.greater_is_better),
            }
            for key, scorer in cv.scorers_.items()
        },
        "folds": _fold_dicts(cv),
        "pooled": _pooled_dicts(cv),
        "fold_summary": summary,
    }


# --------------------------------------------------------------------- str()
def _fmt(value: float, width: int = 11) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "nan".rjust(width)
    return f"{value:{width}.5g}"


def _metric_block(cv: Any, key: str, scorer: Any, header: str) -> list[str]:
    """The lines of one metric: its folds, the pooled row and the fold summary."""
    level = cv.confidence_level
    z = _z_value(level)
    direction = "higher" if scorer.greater_is_better else "lower"
    lines = ["", f"{key} ({direction} is better)", header]
    for k in range(cv.n_splits_):
        expected = float(cv.cv_results_[f"{key}_expected"][k])
        std = _std(float(cv.cv_results_[f"{key}_variance"][k]))
        ci = f"[{expected - z * std:.5g}, {expected + z * std:.5g}]"
        lines.append(
            f"{k:>7} {int(cv.cv_results_['n_test'][k]):>7} {_fmt(expected)} "
            f"{_fmt(std)} {ci:>25} "
            f"{_fmt(float(cv.cv_results_[f'{key}_nominal'][k]))}"
        )
    pooled = cv.pooled_.get(key)
    if pooled is not None:
        low, high = pooled.confidence_interval(level)
        ci = f"[{low:.5g}, {high:.5g}]"
        lines.append(
            f"{'pooled':>7} {pooled.n_samples:>7} {_fmt(pooled.expected)} "
            f"{_fmt(pooled.std)} {ci:>25} {_fmt(pooled.nominal)}"
        )
    summary = cv.fold_summary_[key]
    lines.append(
        f"  between-fold SD {summary['between_fold_sd']:.4g}; label noise "
        f"alone explains SD {_std(summary['mean_label_noise_variance']):.4g}; "
        f"excess SD {summary['excess_sd']:.4g} (not a standard error of CV)"
    )
    return lines


def _format_table(cv: Any) -> str:
    """Readable text report: one block per metric, folds then the pooled row."""
    lines = [
        f"NoisyCrossValidator({cv.estimator!r})",
        f"{cv.n_splits_} folds, {cv.n_samples_} samples, label noise: "
        f"{cv.noise_ or 'from the scorers'}",
    ]
    ci_head = f"{cv.confidence_level:.0%} CI (label noise)"
    header = (
        f"{'fold':>7} {'n_test':>7} {'expected':>11} {'std':>11} {ci_head:>25} "
        f"{'nominal':>11}"
    )
    for key, scorer in cv.scorers_.items():
        lines += _metric_block(cv, key, scorer, header)
    return "\n".join(lines)
