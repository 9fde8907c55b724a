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

from .._noisy_score import clip_to_range
from ._estimands import QUESTIONS, report_this

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


def _mean(values: np.ndarray) -> float:
    """Mean of the values that are not NaN: ±inf when one is, NaN for none.

    Infinities of both signs have no mean (NaN); no warning either way.
    """
    values = values[~np.isnan(values)]
    if values.size == 0 or (np.any(values == np.inf) and np.any(values == -np.inf)):
        return math.nan
    if not np.all(np.isfinite(values)):
        return float(values[~np.isfinite(values)][0])
    return float(np.mean(values))


def _fold_summary(
    cv_results: dict[str, np.ndarray], key: str, scores: list
) -> dict[str, float]:
    """Fold mean, between-fold SD and its excess over label noise (NaN-aware)."""
    done = np.array([s is not None for s in scores], dtype=bool)
    expected = cv_results[f"{key}_expected"][done]
    nominal = cv_results[f"{key}_nominal"][done]
    variance = cv_results[f"{key}_variance"][done]
    values = nominal[~np.isnan(nominal)]
    mean_noise = _mean(variance)
    s_b2 = math.nan
    if values.size > 1:
        finite = bool(np.all(np.isfinite(values)))
        s_b2 = float(np.var(values, ddof=1)) if finite else math.inf
    if math.isnan(s_b2) or math.isnan(mean_noise):
        excess = math.nan
    elif math.isinf(mean_noise):  # the label noise explains any spread
        excess = math.nan if math.isinf(s_b2) else 0.0
    else:
        excess = max(s_b2 - mean_noise, 0.0)
    return {
        "mean_expected": _mean(expected),
        "mean_nominal": _mean(nominal),
        "between_fold_sd": math.sqrt(s_b2) if not math.isnan(s_b2) else math.nan,
        "mean_label_noise_variance": mean_noise,
        "excess_variance": excess,
        "excess_sd": math.sqrt(excess) if excess >= 0 else math.nan,
    }


# ------------------------------------------------------------------ helpers
def _level(confidence_level: float) -> str:
    """A confidence level as the report writes it: ``"95 %"``."""
    return f"{confidence_level * 100:.4g} %"


def _interval(
    estimate: float, variance: float, z: float, key: str = ""
) -> tuple[float, float]:
    """``estimate ± z sd`` clipped to the metric's range, without warnings."""
    std = _std(variance)
    if math.isnan(estimate) or math.isnan(std):
        return math.nan, math.nan
    if math.isinf(std):
        return clip_to_range(key, -math.inf, math.inf)
    if math.isinf(estimate):
        return estimate, estimate
    return clip_to_range(key, estimate - z * std, estimate + z * std)


def _fold_estimate(cv: Any, key: str, estimand: str, k: int) -> tuple[float, float]:
    """Estimate and variance of ``estimand`` on fold ``k`` (0-based)."""
    return (
        float(cv.cv_results_[f"{key}_{estimand}"][k]),
        float(cv.cv_results_[f"{key}_{estimand}_variance"][k]),
    )


def _pooled_estimate(cv: Any, key: str, estimand: str) -> tuple[float, float]:
    score = cv.pooled_estimates_.get(key, {}).get(estimand)
    return (math.nan, math.nan) if score is None else (score.expected, score.variance)


def _pooled_sampling(cv: Any, key: str, estimand: str) -> float:
    """The test-set sampling variance of a pooled estimate (NaN without it)."""
    score = cv.pooled_estimates_.get(key, {}).get(estimand)
    return math.nan if score is None else score.sampling_variance


def _both_interval(cv: Any, key: str, estimand: str) -> tuple[float, float]:
    """The pooled interval with both sources (the score's own), NaN without it."""
    score = cv.pooled_estimates_.get(key, {}).get(estimand)
    if score is None or math.isnan(score.sampling_variance):
        return math.nan, math.nan
    return tuple(score.confidence_interval(cv.confidence_level, source="both"))


def _sampling_entries(cv: Any, key: str, estimand: str, lead: bool) -> dict[str, float]:
    """``sampling_sd`` and ``total_sd`` (and the lead's interval with both)."""
    _, variance = _pooled_estimate(cv, key, estimand)
    sampling = _pooled_sampling(cv, key, estimand)
    entry = {"sampling_sd": _std(sampling), "total_sd": _std(variance + sampling)}
    if lead:
        entry["both_ci_low"], entry["both_ci_high"] = _both_interval(cv, key, estimand)
    return entry


def _estimand_entries(
    estimate: float, variance: float, z: float, lead: bool, key: str = ""
) -> dict[str, float]:
    entry = {"estimate": estimate, "variance": variance, "sd": _std(variance)}
    if lead:
        entry["ci_low"], entry["ci_high"] = _interval(estimate, variance, z, key)
    return entry


# ---------------------------------------------------------------- summary()
def _summary_row(
    cv: Any, key: str, fold: Any, n_test: int, nominal: float, values: dict
) -> dict[str, Any]:
    """One row of the summary: the lead estimand first, then every shown one."""
    info = cv.estimands_[key]
    lead = values[info["lead"]]
    row: dict[str, Any] = {
        "metric": key,
        "fold": fold,
        "n_test": n_test,
        "nominal": nominal,
        "estimand": info["lead"],
        "estimate": lead["estimate"],
        "sd": lead["sd"],
        "ci_low": lead["ci_low"],
        "ci_high": lead["ci_high"],
    }
    for estimand in info["shown"]:
        row[estimand] = values[estimand]["estimate"]
        row[f"{estimand}_sd"] = values[estimand]["sd"]
    # the test-set sampling of the lead: on the pooled row only (NaN on folds)
    row.update(
        sampling_sd=math.nan,
        total_sd=math.nan,
        both_ci_low=math.nan,
        both_ci_high=math.nan,
    )
    return row


def _metric_rows(cv: Any, key: str, z: float) -> list[dict[str, Any]]:
    info = cv.estimands_[key]
    rows = []
    for k in range(cv.n_splits_):
        values = {
            e: _estimand_entries(
                *_fold_estimate(cv, key, e, k), z, e == info["lead"], key
            )
            for e in info["shown"]
        }
        n_test = int(cv.cv_results_["n_test"][k])
        nominal = float(cv.cv_results_[f"{key}_nominal"][k])
        rows.append(_summary_row(cv, key, k + 1, n_test, nominal, values))
    pooled = cv.pooled_.get(key)
    if pooled is not None:
        values = {
            e: _estimand_entries(
                *_pooled_estimate(cv, key, e), z, e == info["lead"], key
            )
            for e in info["shown"]
        }
        row = _summary_row(cv, key, "pooled", pooled.n_samples, pooled.nominal, values)
        row.update(_sampling_entries(cv, key, info["lead"], True))
        rows.append(row)
    return rows


def _summary_table(cv: Any) -> Any:
    """The rows of :meth:`NoisyCrossValidator.summary`, as a table."""
    z = _z_value(cv.confidence_level)
    rows = []
    for key in cv.scorers_:
        rows += _metric_rows(cv, key, z)
    return _as_table(rows)


# ------------------------------------------------------------------ to_dict()
def _json_entries(entries: dict[str, dict[str, float]]) -> dict[str, Any]:
    return {
        estimand: {name: _json_number(value) for name, value in entry.items()}
        for estimand, entry in entries.items()
    }


def _fold_dicts(cv: Any, z: float) -> list[dict[str, Any]]:
    folds = []
    for k in range(cv.n_splits_):
        fold = {
            "fold": k + 1,
            "n_test": int(cv.cv_results_["n_test"][k]),
            "fit_time": float(cv.cv_results_["fit_time"][k]),
            "score_time": float(cv.cv_results_["score_time"][k]),
            "metrics": {},
        }
        for key in cv.scorers_:
            info = cv.estimands_[key]
            variance = cv.cv_results_[f"{key}_variance"][k]
            fold["metrics"][key] = {
                "expected": _json_number(cv.cv_results_[f"{key}_expected"][k]),
                "variance": _json_number(variance),
                "std": _json_number(_std(variance)),
                "nominal": _json_number(cv.cv_results_[f"{key}_nominal"][k]),
                "estimands": _json_entries(
                    {
                        e: _estimand_entries(
                            *_fold_estimate(cv, key, e, k), z, e == info["lead"], key
                        )
                        for e in info["shown"]
                    }
                ),
            }
        folds.append(fold)
    return folds


def _pooled_dicts(cv: Any, z: float) -> dict[str, dict[str, Any]]:
    pooled = {}
    for key, score in cv.pooled_.items():
        info = cv.estimands_[key]
        entry = {
            field: _json_number(value) if isinstance(value, float) else value
            for field, value in score.to_dict().items()
        }
        low, high = score.confidence_interval(cv.confidence_level)
        entry["ci_low"], entry["ci_high"] = _json_number(low), _json_number(high)
        entry["estimands"] = _json_entries(
            {
                e: {
                    **_estimand_entries(
                        *_pooled_estimate(cv, key, e), z, e == info["lead"], key
                    ),
                    **_sampling_entries(cv, key, e, e == info["lead"]),
                }
                for e in info["shown"]
            }
        )
        pooled[key] = entry
    return pooled


def _metric_dict(cv: Any, key: str, scorer: Any) -> dict[str, Any]:
    info = cv.estimands_[key]
    return {
        "metric": scorer.metric,
        "greater_is_better": bool(scorer.greater_is_better),
        "lead": info["lead"],
        "estimands": list(info["shown"]),
        "notes": list(info["notes"]),
        "report_this": _report_line(cv, key, _decimals(cv, key)),
    }


def _results_dict(cv: Any) -> dict[str, Any]:
    """:meth:`NoisyCrossValidator.to_dict`: all results, JSON-serialisable."""
    z = _z_value(cv.confidence_level)
    summary = {
        key: {name: _json_number(value) for name, value in values.items()}
        for key, values in cv.fold_summary_.items()
    }
    shown = {e for info in cv.estimands_.values() for e in info["shown"]}
    return {
        "estimator": repr(cv.estimator),
        "n_samples": int(cv.n_samples_),
        "n_splits": int(cv.n_splits_),
        "noise": cv.noise_,
        "confidence_level": float(cv.confidence_level),
        "estimand": cv.estimand,
        "legend": {
            name: text
            for name, text in QUESTIONS.items()
            if name == "nominal"
            or name in shown
            or (name == "sampling" and _has_sampling(cv))
        },
        "metrics": {
            key: _metric_dict(cv, key, scorer) for key, scorer in cv.scorers_.items()
        },
        "folds": _fold_dicts(cv, z),
        "pooled": _pooled_dicts(cv, z),
        "fold_summary": summary,
    }


# --------------------------------------------------------------------- str()
def _decimals(cv: Any, key: str) -> int | None:
    """Decimals that give the smallest SD of a metric two significant figures."""
    info = cv.estimands_[key]
    sds = [_std(_pooled_estimate(cv, key, e)[1]) for e in info["shown"]]
    for k in range(cv.n_splits_):
        sds += [_std(_fold_estimate(cv, key, e, k)[1]) for e in info["shown"]]
    sds = [sd for sd in sds if math.isfinite(sd) and sd > 0]
    if not sds:
        return None
    return min(max(1 - math.floor(math.log10(min(sds))), 0), 10)


def _num(value: float, decimals: int | None) -> str:
    if not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return f"{value:.4g}" if decimals is None else f"{value:.{decimals}f}"


def _ci_text(
    estimate: float, variance: float, z: float, decimals: int | None, key: str = ""
) -> str:
    low, high = _interval(estimate, variance, z, key)
    return f"[{_num(low, decimals)}, {_num(high, decimals)}]"


def _report_line(cv: Any, key: str, decimals: int | None) -> str:
    info = cv.estimands_[key]
    estimate, variance = _pooled_estimate(cv, key, info["lead"])
    where = "pooled"
    if not math.isfinite(estimate):  # overlapping test sets: the fold mean
        values = cv.cv_results_[f"{key}_{info['lead']}"]
        estimate, variance, where = _mean(values), math.nan, "fold mean"
    value = f"{_num(estimate, decimals)} ({where})"
    z = _z_value(cv.confidence_level)
    sampling = _pooled_sampling(cv, key, info["lead"])
    if where == "fold mean":
        interval = "n/a (the test sets overlap)"
    elif math.isnan(sampling):
        interval = (
            _ci_text(estimate, variance, z, decimals, key) + " of the label noise"
        )
    else:
        low, high = _both_interval(cv, key, info["lead"])
        interval = (
            f"[{_num(low, decimals)}, {_num(high, decimals)}] with label noise and "
            "test-set sampling"
        )
    return report_this(
        info["lead"],
        value,
        interval,
        _level(cv.confidence_level),
        "truth" in cv.estimands_[key]["shown"],
    )


def _budget_line(cv: Any, key: str, decimals: int | None) -> str:
    """The pooled lead's error budget: both SDs and the label-noise interval."""
    lead = cv.estimands_[key]["lead"]
    estimate, variance = _pooled_estimate(cv, key, lead)
    sampling = _pooled_sampling(cv, key, lead)
    if math.isnan(sampling) or not math.isfinite(estimate):
        return ""
    method = cv.pooled_estimates_[key][lead].sampling_method.replace("_", " ")
    z = _z_value(cv.confidence_level)
    sampling_text = (
        f"{_num(_std(sampling), decimals)} test-set sampling ({method})"
        if sampling > 0
        else f"0 test-set sampling ({method}; not resolved beside the label noise)"
    )
    return (
        f"error budget of the pooled {lead}: SD {_num(_std(variance), decimals)} "
        f"label noise, {sampling_text}, {_num(_std(variance + sampling), decimals)} "
        "both; "
        f"{_level(cv.confidence_level)} interval, label noise only: "
        f"{_ci_text(estimate, variance, z, decimals, key)}"
    )


def _columns(info: dict[str, Any], level: str) -> list[tuple[str, int]]:
    """The header of a metric block: (title, width) per column."""
    lead = info["lead"]
    columns = [("fold", 6), ("n_test", 6), ("nominal", 9), (lead, 9), ("SD", 8)]
    columns.append((f"{level} interval", 22))
    for estimand in info["shown"]:
        if estimand != lead:
            columns += [(estimand, 9), ("SD", 8)]
    return columns


def _row_cells(
    info: dict[str, Any],
    values: dict[str, tuple[float, float]],
    z: float,
    decimals: int | None,
    key: str = "",
) -> list[str]:
    lead = info["lead"]
    estimate, variance = values[lead]
    cells = [
        _num(estimate, decimals),
        _num(_std(variance), decimals),
        _ci_text(estimate, variance, z, decimals, key),
    ]
    for estimand in info["shown"]:
        if estimand != lead:
            estimate, variance = values[estimand]
            cells += [_num(estimate, decimals), _num(_std(variance), decimals)]
    return cells


def _line(cells: list[str], columns: list[tuple[str, int]]) -> str:
    return " ".join(
        cell.rjust(width) for cell, (_, width) in zip(cells, columns, strict=True)
    )


def metric_parts(cv: Any, key: str, scorer: Any) -> dict[str, Any]:
    """One metric's report: title, column titles, a row of cells per fold and
    the pooled row, and the lines below the table (notes, what to report, the
    spread between folds). The text and the HTML reports render these.
    """
    info = cv.estimands_[key]
    z = _z_value(cv.confidence_level)
    decimals = _decimals(cv, key)
    columns = _columns(info, _level(cv.confidence_level))
    direction = "higher" if scorer.greater_is_better else "lower"
    rows = []
    for k in range(cv.n_splits_):
        values = {e: _fold_estimate(cv, key, e, k) for e in info["shown"]}
        nominal = float(cv.cv_results_[f"{key}_nominal"][k])
        head = [
            str(k + 1),
            str(int(cv.cv_results_["n_test"][k])),
            _num(nominal, decimals),
        ]
        rows.append(head + _row_cells(info, values, z, decimals, key))
    pooled = cv.pooled_.get(key)
    if pooled is not None:
        values = {e: _pooled_estimate(cv, key, e) for e in info["shown"]}
        head = ["pooled", str(pooled.n_samples), _num(pooled.nominal, decimals)]
        rows.append(head + _row_cells(info, values, z, decimals, key))
    summary = cv.fold_summary_[key]
    noise_sd = _std(summary["mean_label_noise_variance"])
    notes = [f"note: {note}" for note in info["notes"]]
    notes.append(_report_line(cv, key, decimals))
    budget = _budget_line(cv, key, decimals)
    if budget:
        notes.append(budget)
    notes.append(
        f"between folds: SD of the nominal metric "
        f"{summary['between_fold_sd']:.2g}, of which label noise alone explains "
        f"{noise_sd:.2g}; "
        f"the rest ({summary['excess_sd']:.2g}) comes from the splits and "
        "refits (not a standard error of CV)"
    )
    return {
        "title": f"{key} ({direction} is better)",
        "columns": columns,
        "rows": rows,
        "notes": notes,
    }


def _metric_block(cv: Any, key: str, scorer: Any) -> list[str]:
    """The lines of one metric: its folds, the pooled row and what to report."""
    parts = metric_parts(cv, key, scorer)
    columns = parts["columns"]
    lines = ["", parts["title"], _line([title for title, _ in columns], columns)]
    lines += [_line(cells, columns) for cells in parts["rows"]]
    lines += [f"  {note}" for note in parts["notes"]]
    return lines


def _has_sampling(cv: Any) -> bool:
    """Whether any pooled estimate carries its test-set sampling variance."""
    return any(
        not math.isnan(score.sampling_variance)
        for estimates in cv.pooled_estimates_.values()
        for score in estimates.values()
    )


def legend_lines(cv: Any) -> list[str]:
    shown = [
        e
        for e in ("truth", "remeasurement", "forward")
        if any(e in info["shown"] for info in cv.estimands_.values())
    ]
    level = _level(cv.confidence_level)
    lines = [
        f"Legend (SD and {level} interval: label noise only in the tables, not "
        "test-set sampling nor split variability):"
    ]
    for name in ["nominal", *shown]:
        lines.append(f"  {name + ':':<15}{QUESTIONS[name]}")
    if _has_sampling(cv):
        lines.append(f"  {'sampling:':<15}{QUESTIONS['sampling']}")
    return lines


def header_line(cv: Any) -> str:
    """Folds, samples, the noise and which estimand leads the report."""
    leads = {info["lead"] for info in cv.estimands_.values()}
    requested = "truth" if cv.estimand == "auto" else cv.estimand
    fallback = "remeasurement, else forward" if requested == "truth" else "forward"
    lead = (
        leads.pop()
        if len(leads) == 1
        else f"{requested} where offered, else {fallback}"
    )
    return (
        f"{cv.n_splits_} folds, {cv.n_samples_} samples, label noise: "
        f"{cv.noise_ or 'from the scorers'}; leading estimand: {lead}"
    )


def _format_table(cv: Any) -> str:
    """Readable text report: a legend, then per metric its folds and pooled row."""
    lines = [
        f"NoisyCrossValidator({cv.estimator!r})",
        header_line(cv),
        *legend_lines(cv),
    ]
    for key, scorer in cv.scorers_.items():
        lines += _metric_block(cv, key, scorer)
    return "\n".join(lines)
