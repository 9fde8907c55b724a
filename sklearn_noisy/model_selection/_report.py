"""Reports of a fitted :class:`NoisyCrossValidator`: table, dict/JSON, text, HTML.

They read only its public fitted attributes; its :meth:`summary`,
:meth:`to_dict`, ``str`` and HTML representation delegate here.
"""

from __future__ import annotations

import math
from html import escape
from typing import Any

import numpy as np
from scipy.special import ndtri

from .._noisy_score import clip_to_range

__all__: list[str] = []

#: The question each reported quantity answers, as the report's legend says it.
QUESTIONS = {
    "nominal": "the metric on the labels as given",
    "truth": "the metric against the true values (the label noise removed)",
    "remeasurement": "the metric expected when these samples are measured again, "
    "the same way",
    "forward": "the paper's expected metric if y_true were exact (then measured "
    "with the given noise); not what a re-measurement shows",
    "sampling": "the spread of the pooled estimate over the draw of the test "
    "samples from their population (below each table); the report-this interval "
    "covers it and the label noise",
}


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


def _pooled(cv: Any, key: str, estimand: str) -> tuple[float, float, float]:
    """Pooled estimate, label-noise and test-set sampling variance (NaN if none)."""
    score = cv.pooled_estimates_.get(key, {}).get(estimand)
    if score is None:
        return math.nan, math.nan, math.nan
    return score.expected, score.variance, score.sampling_variance


def _both_interval(cv: Any, key: str, estimand: str) -> tuple[float, float]:
    """The pooled interval with both sources (the score's own), NaN without it."""
    score = cv.pooled_estimates_.get(key, {}).get(estimand)
    if score is None or math.isnan(score.sampling_variance):
        return math.nan, math.nan
    return tuple(score.confidence_interval(cv.confidence_level, source="both"))


def _rows(cv: Any, key: str) -> list[tuple[Any, int, float, dict]]:
    """``(fold, n_test, nominal, {estimand: (estimate, variance)})`` of each fold
    (numbered from 1), then of the pooled scores (fold ``"pooled"``) if any.
    """
    shown, results = cv.estimands_[key]["shown"], cv.cv_results_
    rows = [
        (
            k + 1,
            int(results["n_test"][k]),
            float(results[f"{key}_nominal"][k]),
            {
                e: (
                    float(results[f"{key}_{e}"][k]),
                    float(results[f"{key}_{e}_variance"][k]),
                )
                for e in shown
            },
        )
        for k in range(cv.n_splits_)
    ]
    pooled = cv.pooled_.get(key)
    if pooled is not None:
        values = {e: _pooled(cv, key, e)[:2] for e in shown}
        rows.append(("pooled", pooled.n_samples, pooled.nominal, values))
    return rows


def _entries(values: dict, z: float, lead: str, key: str) -> dict[str, dict]:
    """Per estimand its estimate, variance and SD, and the lead's interval."""
    entries = {}
    for estimand, (estimate, variance) in values.items():
        entry = {"estimate": estimate, "variance": variance, "sd": _std(variance)}
        if estimand == lead:
            entry["ci_low"], entry["ci_high"] = _interval(estimate, variance, z, key)
        entries[estimand] = entry
    return entries


def _sampling_entries(cv: Any, key: str, estimand: str, lead: bool) -> dict[str, float]:
    """``sampling_sd`` and ``total_sd`` (and the lead's interval with both)."""
    _, variance, sampling = _pooled(cv, key, estimand)
    entry = {"sampling_sd": _std(sampling), "total_sd": _std(variance + sampling)}
    if lead:
        entry["both_ci_low"], entry["both_ci_high"] = _both_interval(cv, key, estimand)
    return entry


def _summary_table(cv: Any) -> Any:
    """The rows of :meth:`NoisyCrossValidator.summary`, as a table."""
    z = _z_value(cv.confidence_level)
    table = []
    for key in cv.scorers_:
        lead = cv.estimands_[key]["lead"]
        for fold, n_test, nominal, values in _rows(cv, key):
            entries = _entries(values, z, lead, key)
            row = {"metric": key, "fold": fold, "n_test": n_test, "nominal": nominal}
            row["estimand"] = lead
            for name in ("estimate", "sd", "ci_low", "ci_high"):
                row[name] = entries[lead][name]
            for estimand, entry in entries.items():
                row[estimand], row[f"{estimand}_sd"] = entry["estimate"], entry["sd"]
            # the test-set sampling of the lead: on the pooled row only
            sampling = _sampling_entries(cv, key, lead, True)
            row.update(
                sampling if fold == "pooled" else dict.fromkeys(sampling, math.nan)
            )
            table.append(row)
    return _as_table(table)


def _json_entries(entries: dict[str, dict[str, float]]) -> dict[str, Any]:
    return {
        estimand: {name: _json_number(value) for name, value in entry.items()}
        for estimand, entry in entries.items()
    }


def _results_dict(cv: Any) -> dict[str, Any]:
    """:meth:`NoisyCrossValidator.to_dict`: all results, JSON-serialisable."""
    z = _z_value(cv.confidence_level)
    results = cv.cv_results_
    folds = [
        {
            "fold": k + 1,
            "n_test": int(results["n_test"][k]),
            "fit_time": float(results["fit_time"][k]),
            "score_time": float(results["score_time"][k]),
            "metrics": {},
        }
        for k in range(cv.n_splits_)
    ]
    pooled, metrics = {}, {}
    for key, scorer in cv.scorers_.items():
        info = cv.estimands_[key]
        rows = _rows(cv, key)
        for k, fold in enumerate(folds):
            variance = results[f"{key}_variance"][k]
            fold["metrics"][key] = {
                "expected": _json_number(results[f"{key}_expected"][k]),
                "variance": _json_number(variance),
                "std": _json_number(_std(variance)),
                "nominal": _json_number(results[f"{key}_nominal"][k]),
                "estimands": _json_entries(_entries(rows[k][3], z, info["lead"], key)),
            }
        score = cv.pooled_.get(key)
        if score is not None:
            entry = {
                field: _json_number(value) if isinstance(value, float) else value
                for field, value in score.to_dict().items()
            }
            low, high = score.confidence_interval(cv.confidence_level)
            entry["ci_low"], entry["ci_high"] = _json_number(low), _json_number(high)
            entries = _entries(rows[-1][3], z, info["lead"], key)
            for estimand, values in entries.items():
                lead = estimand == info["lead"]
                values.update(_sampling_entries(cv, key, estimand, lead))
            entry["estimands"] = _json_entries(entries)
            pooled[key] = entry
        metrics[key] = {
            "metric": scorer.metric,
            "greater_is_better": bool(scorer.greater_is_better),
            "lead": info["lead"],
            "estimands": list(info["shown"]),
            "notes": list(info["notes"]),
            "report_this": _report_line(cv, key, _decimals(cv, key)),
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
        "metrics": metrics,
        "folds": folds,
        "pooled": {key: pooled[key] for key in cv.pooled_},
        "fold_summary": {
            key: {name: _json_number(value) for name, value in values.items()}
            for key, values in cv.fold_summary_.items()
        },
    }


def _decimals(cv: Any, key: str) -> int | None:
    """Decimals that give the smallest SD of a metric two significant figures."""
    sds = [_std(v) for *_, values in _rows(cv, key) for _, v in values.values()]
    sds += [_std(_pooled(cv, key, e)[1]) for e in cv.estimands_[key]["shown"]]
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
    """The line that says which number of the metric to report."""
    info = cv.estimands_[key]
    lead = info["lead"]
    estimate, variance, sampling = _pooled(cv, key, lead)
    value = f"{_num(estimate, decimals)} (pooled)"
    if not math.isfinite(estimate):  # overlapping test sets: the fold mean
        estimate = _mean(cv.cv_results_[f"{key}_{lead}"])
        value = f"{_num(estimate, decimals)} (fold mean)"
        interval = "n/a (the test sets overlap)"
    elif math.isnan(sampling):
        z = _z_value(cv.confidence_level)
        interval = _ci_text(estimate, variance, z, decimals, key)
        interval += " of the label noise"
    else:
        low, high = _both_interval(cv, key, lead)
        interval = (
            f"[{_num(low, decimals)}, {_num(high, decimals)}] with label noise and "
            "test-set sampling"
        )
    head = f"report this: {lead} {value}, {_level(cv.confidence_level)} interval "
    if lead == "truth":
        return (
            f"{head}{interval} (labels that are measurements); quote forward only "
            "when y_true is exact"
        )
    if lead == "remeasurement":
        which = "samples like these" if "sampling" in interval else "these samples"
        return f"{head}{interval} (the metric on a fresh measurement of {which})"
    instead = (
        "for labels that are measurements report truth instead"
        if "truth" in info["shown"]
        else "this metric has no truth estimate for labels that are measurements"
    )
    return (
        f"{head}{interval}, only if y_true is exact (a reference standard or a "
        f"simulation); {instead}"
    )


def _budget_line(cv: Any, key: str, decimals: int | None) -> str:
    """The pooled lead's error budget: both SDs and the label-noise interval."""
    lead = cv.estimands_[key]["lead"]
    estimate, variance, sampling = _pooled(cv, key, lead)
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


def metric_parts(cv: Any, key: str, scorer: Any) -> dict[str, Any]:
    """One metric's report: title, (title, width) of each column, the cells of
    each row (folds, then pooled) and the lines below the table (notes, what
    to report, the spread between folds). The text and HTML reports render it.
    """
    info = cv.estimands_[key]
    lead = info["lead"]
    others = [e for e in info["shown"] if e != lead]
    z = _z_value(cv.confidence_level)
    decimals = _decimals(cv, key)
    columns = [("fold", 6), ("n_test", 6), ("nominal", 9), (lead, 9), ("SD", 8)]
    columns.append((f"{_level(cv.confidence_level)} interval", 22))
    for estimand in others:
        columns += [(estimand, 9), ("SD", 8)]
    rows = []
    for fold, n_test, nominal, values in _rows(cv, key):
        estimate, variance = values[lead]
        cells = [str(fold), str(n_test), _num(nominal, decimals)]
        cells += [_num(estimate, decimals), _num(_std(variance), decimals)]
        cells.append(_ci_text(estimate, variance, z, decimals, key))
        for estimand in others:
            estimate, variance = values[estimand]
            cells += [_num(estimate, decimals), _num(_std(variance), decimals)]
        rows.append(cells)
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
    direction = "higher" if scorer.greater_is_better else "lower"
    title = f"{key} ({direction} is better)"
    return {"title": title, "columns": columns, "rows": rows, "notes": notes}


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
        parts = metric_parts(cv, key, scorer)
        titles, widths = zip(*parts["columns"], strict=True)
        lines += ["", parts["title"]]
        lines += [
            " ".join(cell.rjust(w) for cell, w in zip(cells, widths, strict=True))
            for cells in [titles, *parts["rows"]]
        ]
        lines += [f"  {note}" for note in parts["notes"]]
    return "\n".join(lines)


_STYLE = """<style>
.sklearn-noisy-report table {border-collapse: collapse; margin: 0.3em 0;}
.sklearn-noisy-report th, .sklearn-noisy-report td {
  padding: 0.15em 0.6em; text-align: right; font-variant-numeric: tabular-nums;}
.sklearn-noisy-report thead th {border-bottom: 1px solid currentColor;}
.sklearn-noisy-report tr.pooled td {border-top: 1px solid currentColor;
  font-weight: bold;}
.sklearn-noisy-report .report-this {font-weight: bold;}
.sklearn-noisy-report h4 {margin: 0.8em 0 0.2em 0;}
.sklearn-noisy-report p, .sklearn-noisy-report dl {margin: 0.2em 0;}
</style>"""


def results_html(cv: Any) -> str:
    """The text report's header, legend, tables and lines as an HTML fragment."""
    title, *entries = legend_lines(cv)
    items = []
    for line in entries:
        name, _, text = line.strip().partition(":")
        items.append(f"<dt>{escape(name)}</dt><dd>{escape(text.strip())}</dd>")
    html = [
        _STYLE,
        '<div class="sklearn-noisy-report">',
        f"<p>{escape(header_line(cv))}</p>",
        f"<details open><summary>{escape(title.rstrip(':'))}</summary>"
        f"<dl>{''.join(items)}</dl></details>",
    ]
    for key, scorer in cv.scorers_.items():
        parts = metric_parts(cv, key, scorer)
        head = "".join(f"<th>{escape(title)}</th>" for title, _ in parts["columns"])
        html += [
            f"<h4>{escape(parts['title'])}</h4>",
            f"<table><thead><tr>{head}</tr></thead><tbody>",
        ]
        for cells in parts["rows"]:
            css = ' class="pooled"' if cells[0] == "pooled" else ""
            tds = "".join(f"<td>{escape(cell)}</td>" for cell in cells)
            html.append(f"<tr{css}>{tds}</tr>")
        html.append("</tbody></table>")
        for note in parts["notes"]:
            css = ' class="report-this"' if note.startswith("report this") else ""
            html.append(f"<p{css}>{escape(note)}</p>")
    html.append("</div>")
    return "".join(html)
