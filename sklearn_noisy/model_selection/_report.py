"""Reports of a fitted :class:`NoisyCrossValidator` (from its public fitted
attributes): the table, dict/JSON, text and HTML."""

from __future__ import annotations

import math
from html import escape
from typing import Any

import numpy as np

from .._noisy_score import METRIC_RANGES, ConfidenceInterval, NoisyScore
from ..metrics import get_metric_info

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
    "samples from their population (below each table); the summary's intervals "
    "cover it and the label noise",
    "< x, > x": "a limit: the interval reaches the metric's bound (as an MSE "
    "against the truth near 0), so no point is shown, only the interval's other end",
}


def _std(variance: float) -> float:
    return math.sqrt(variance) if variance >= 0 else math.nan


def _json_ready(value: Any) -> Any:
    """``value`` with every non-finite float in its dicts and lists as None."""
    if isinstance(value, dict):
        return {key: _json_ready(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_json_ready(item) for item in value]
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    return value


def _as_table(rows: list[dict]) -> Any:
    """A pandas DataFrame of ``rows`` when pandas is installed, else the rows."""
    try:
        import pandas as pd
    except ImportError:
        return rows
    return pd.DataFrame(rows)


def _mean(values: np.ndarray) -> float:
    """Mean of the non-NaN values: ±inf if one is (NaN if both), NaN for none."""
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
    nominal = cv_results[f"{key}_nominal"][done]
    # the label noise of the forward value, the spread compared before #22
    variance = cv_results.get(f"{key}_forward_variance", cv_results[f"{key}_variance"])
    values, mean_noise = nominal[~np.isnan(nominal)], _mean(variance[done])
    s_b2 = math.nan
    if values.size > 1:
        s_b2 = (
            float(np.var(values, ddof=1)) if np.all(np.isfinite(values)) else math.inf
        )
    if math.isnan(s_b2) or math.isnan(mean_noise):
        excess = math.nan
    elif math.isinf(mean_noise):  # the label noise explains any spread
        excess = math.nan if math.isinf(s_b2) else 0.0
    else:
        excess = max(s_b2 - mean_noise, 0.0)
    return {
        "mean_expected": _mean(cv_results[f"{key}_expected"][done]),
        "mean_nominal": _mean(nominal),
        "between_fold_sd": _std(s_b2),
        "mean_label_noise_variance": mean_noise,
        "excess_variance": excess,
        "excess_sd": _std(excess),
    }


def _level(confidence_level: float) -> str:
    """A confidence level as the report writes it: ``"95 %"``."""
    return f"{confidence_level * 100:.4g} %"


def interval(
    metric: str,
    estimand: str,
    estimate: float,
    variance: float,
    level: float,
    score: NoisyScore | None = None,
) -> ConfidenceInterval:
    """The label-noise interval of the tables and plots: ``score``'s own (one
    built from ``estimate`` and ``variance`` without it), normal where the
    score has an exact distribution (:ref:`reading_limits`)."""
    if score is None:
        score = NoisyScore(metric, estimate, variance, math.nan, 0, estimand=estimand)
    method = "normal" if score.interval_method == "exact" else "auto"
    return score.confidence_interval(level, method=method)


def shown(metric: str, estimate: float, low: float, high: float) -> tuple[float, str]:
    """The point shown for an estimate (NaN for a limit) and ``"<"``, ``">"`` or
    ``""``: an interval that reaches the metric's bound is a limit."""
    lower, upper = METRIC_RANGES.get(metric, (-math.inf, math.inf))
    if math.isfinite(lower) and low <= lower:
        return math.nan, "<"
    if math.isfinite(upper) and high >= upper:
        return math.nan, ">"
    return estimate, ""


def _point(
    limit: str, estimate: float, low: float, high: float, decimals: int | None
) -> str:
    """``"< 0.0145"``, ``"> 0.9996"`` or the estimate, as the report writes it."""
    if not limit:
        return _num(estimate, decimals)
    return f"{limit} {_num(high if limit == '<' else low, decimals)}"


def _rows(cv: Any, key: str) -> list[tuple[Any, int, float, dict]]:
    """``(fold, n_test, nominal, entries)`` per fold, then pooled: per estimand
    its estimate, variance, SD, the lead's interval and limit, the sampling SDs."""
    info, results, metric = cv.estimands_[key], cv.cv_results_, cv.scorers_[key].metric
    lead, level = info["lead"], cv.confidence_level
    rows = [
        (
            k + 1,
            int(results["n_test"][k]),
            float(results[f"{key}_nominal"][k]),
            {e: cv.fold_estimates_[key][e][k] for e in info["shown"]},
        )
        for k in range(cv.n_splits_)
    ]
    pooled = cv.pooled_.get(key)
    if pooled is not None:
        scores = {e: cv.pooled_estimates_[key].get(e) for e in info["shown"]}
        rows.append(("pooled", pooled.n_samples, pooled.nominal, scores))
    for fold, *_, entries in rows:
        for estimand, score in entries.items():
            estimate = math.nan if score is None else score.expected
            variance = math.nan if score is None else score.variance
            entry = {"estimate": estimate, "variance": variance, "sd": _std(variance)}
            if estimand == lead:
                ci = interval(metric, estimand, estimate, variance, level, score)
                entry.update(ci_low=ci.low, ci_high=ci.high, ci_method=ci.method)
                entry["limit"] = shown(metric, estimate, *ci)[1]
            if fold == "pooled":  # the test-set sampling: on the pooled row only
                sampling = math.nan if score is None else score.sampling_variance
                entry.update(
                    sampling_sd=_std(sampling), total_sd=_std(variance + sampling)
                )
            if fold == "pooled" and estimand == lead:  # its interval with both
                both, method = (math.nan, math.nan), ""
                if not math.isnan(sampling):
                    both = score.confidence_interval(level, source="both")
                    method = both.method
                entry["both_ci_low"], entry["both_ci_high"] = both
                entry["both_ci_method"] = method
            entries[estimand] = entry
    return rows


#: The pooled lead's test-set sampling columns of the summary (NaN on the folds).
_SAMPLING = ("sampling_sd", "total_sd", "both_ci_low", "both_ci_high")


def _summary_table(cv: Any) -> Any:
    """The rows of :meth:`NoisyCrossValidator.summary`, as a table."""
    table = []
    for key in cv.scorers_:
        lead = cv.estimands_[key]["lead"]
        for fold, n_test, nominal, entries in _rows(cv, key):
            row = {"metric": key, "fold": fold, "n_test": n_test, "nominal": nominal}
            row["estimand"] = lead
            row |= {
                n: entries[lead][n] for n in ("estimate", "sd", "ci_low", "ci_high")
            }
            row["limit"] = entries[lead]["limit"]
            if row["limit"]:  # the point is not shown (the raw one in row[lead])
                row["estimate"] = math.nan
            for estimand, entry in entries.items():
                row[estimand], row[f"{estimand}_sd"] = entry["estimate"], entry["sd"]
            row.update({name: entries[lead].get(name, math.nan) for name in _SAMPLING})
            table.append(row)
    return _as_table(table)


#: A fold's top-level fields in :meth:`to_dict`: its lead's entry fields.
_LEAD_FIELDS = {"expected": "estimate", "variance": "variance", "std": "sd"}
_LEAD_FIELDS |= {"ci_low": "ci_low", "ci_high": "ci_high", "ci_method": "ci_method"}


def _results_dict(cv: Any) -> dict[str, Any]:
    """:meth:`NoisyCrossValidator.to_dict`: all results, JSON-serialisable."""
    results = cv.cv_results_
    folds = [
        {"fold": k + 1, "n_test": int(results["n_test"][k])}
        | {name: float(results[name][k]) for name in ("fit_time", "score_time")}
        | {"metrics": {}}
        for k in range(cv.n_splits_)
    ]
    pooled, metrics = {}, {}
    for key, scorer in cv.scorers_.items():
        info = cv.estimands_[key]
        rows = _rows(cv, key)
        for fold, (_, _, nominal, entries) in zip(folds, rows, strict=False):
            lead = entries[info["lead"]]  # top level: the lead, the others nested
            fold["metrics"][key] = {
                "estimand": info["lead"],
                **{name: lead[field] for name, field in _LEAD_FIELDS.items()},
                "nominal": nominal,
                "estimands": entries,
            }
        score = cv.pooled_.get(key)
        if score is not None:
            entries = rows[-1][3]
            lead = entries[info["lead"]]  # the lead's interval, as nested
            pooled[key] = score.to_dict()
            pooled[key].update({n: lead[n] for n in ("ci_low", "ci_high", "ci_method")})
            pooled[key]["estimands"] = entries
        metrics[key] = {
            "metric": scorer.metric,
            "greater_is_better": bool(scorer.greater_is_better),
            "lead": info["lead"],
            "estimands": list(info["shown"]),
            "notes": list(info["notes"]),
            "report_this": ": ".join(_summary_parts(cv, key, _decimals(rows))),
        }
    return _json_ready(
        {
            "estimator": repr(cv.estimator),
            "n_samples": int(cv.n_samples_),
            "n_splits": int(cv.n_splits_),
            "noise": cv.noise_,
            "confidence_level": float(cv.confidence_level),
            "estimand": cv.estimand,
            "legend": _legend(cv),
            "metrics": metrics,
            "folds": folds,
            "pooled": {key: pooled[key] for key in cv.pooled_},
            "fold_summary": cv.fold_summary_,
            "model_or_measurements": model_or_measurements_dict(cv),
        }
    )


def _decimals(rows: list[tuple[Any, int, float, dict]]) -> int | None:
    """Decimals that give the smallest SD of a metric's rows two significant figures."""
    sds = [e["sd"] for *_, entries in rows for e in entries.values()]
    sds = [sd for sd in sds if math.isfinite(sd) and sd > 0]
    if not sds:
        return None
    return min(max(1 - math.floor(math.log10(min(sds))), 0), 10)


def _num(value: float, decimals: int | None) -> str:
    if not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return f"{value:.4g}" if decimals is None else f"{value:.{decimals}f}"


def _ci_text(low: float, high: float, decimals: int | None) -> str:
    return f"[{_num(low, decimals)}, {_num(high, decimals)}]"


def metric_label(metric: str) -> str:
    """The registry's display name of a metric; else its name with spaces."""
    try:
        return get_metric_info(metric).display_name
    except (KeyError, ValueError):
        return metric.replace("_", " ")


def unit_text(unit: str | None, metric: str) -> str:
    """The unit of ``metric`` for a target in ``unit``: ``"mg/L"``, ``"(mg/L)²"``."""
    try:
        power = getattr(get_metric_info(metric).definition, "unit_power", 0)
    except (KeyError, ValueError):  # a metric of the user's own
        power = 0
    if not unit or not power:
        return ""
    if power == 1:
        return unit
    return f"({unit})²" if any(c in unit for c in " /*·") else f"{unit}²"


#: What each estimand measures, as the summary names it.
_AGAINST = {
    "truth": "against the true values",
    "remeasurement": "on a re-measurement",
    "forward": "forward (y_true exact)",
}


def _summary_parts(cv: Any, key: str, decimals: int | None) -> tuple[str, str]:
    """The name and the value to report of a metric: the pooled lead (or its
    limit), its interval (label noise and test-set sampling) and unit."""
    lead, metric = cv.estimands_[key]["lead"], cv.scorers_[key].metric
    level = _level(cv.confidence_level)
    unit = unit_text(cv.unit, metric)
    unit = f" {unit}" if unit else ""
    name = f"{metric_label(metric)} {_AGAINST[lead]}"
    score = cv.pooled_estimates_.get(key, {}).get(lead)
    if score is None:  # overlapping test sets: no pooled score
        mean = _num(_mean(cv.cv_results_[f"{key}_{lead}"]), decimals)
        return name, f"{mean}{unit} (mean of the folds; no interval: test sets overlap)"
    source = "label_noise" if math.isnan(score.sampling_variance) else "both"
    low, high = score.confidence_interval(cv.confidence_level, source=source)
    point, limit = shown(metric, score.expected, low, high)
    text = f"{_point(limit, point, low, high, decimals)}{unit}"
    if limit:
        text += f" at {level}; not resolved beside the label noise"
    else:
        text += f", {level} interval {_ci_text(low, high, decimals)}"
    if source == "label_noise" and _has_sampling(cv):
        text += " (label noise only)"
    if lead == "forward":
        text += "; valid only if y_true is exact"
    return name, text


def _budget_line(cv: Any, key: str, decimals: int | None) -> str:
    """The pooled lead's error budget: the SD of each source and of both."""
    lead = cv.estimands_[key]["lead"]
    score = cv.pooled_estimates_.get(key, {}).get(lead)
    if score is None or not math.isfinite(score.expected):
        return ""
    variance, sampling = score.variance, score.sampling_variance
    if math.isnan(sampling):
        return ""
    method = score.sampling_method.replace("_", " ")
    if not sampling > 0:
        method += ": the samples vary no more than their label noise explains"
    return (
        f"error budget of the pooled {lead}: SD {_num(_std(variance), decimals)} "
        f"from the label noise, {_num(_std(sampling), decimals)} from the test-set "
        f"sampling ({method}), {_num(_std(variance + sampling), decimals)} both"
    )


def _between_folds_line(summary: dict[str, float], decimals: int | None) -> str:
    """The nominal metric's spread between folds, and the part label noise alone
    explains (never a part larger than the whole)."""
    total = summary["between_fold_sd"]
    noise = _std(summary["mean_label_noise_variance"])
    if math.isnan(total):
        return "between folds: no spread to compare (fewer than two folds scored)"
    head = f"between folds: the nominal metric varies with SD {_num(total, decimals)}"
    if math.isnan(noise):
        return head
    alone = "label noise alone (the labels measured again, same models)"
    if total < noise:
        return (
            f"{head}, less than the {_num(noise, decimals)} that {alone} predicts: "
            "nothing is left to attribute to the splits and refits"
        )
    return (
        f"{head}; {alone} explains SD {_num(noise, decimals)} of it, the splits and "
        f"refits the other {_num(summary['excess_sd'], decimals)} (SDs add in "
        "squares; not a standard error of CV)"
    )


def metric_parts(cv: Any, key: str, rows: list, decimals: int | None) -> list[tuple]:
    """One metric's blocks: its title, its table (columns as (title, width),
    folds then pooled) and its notes, error budget and spread between folds."""
    info, scorer = cv.estimands_[key], cv.scorers_[key]
    lead = info["lead"]
    others = [e for e in info["shown"] if e != lead]
    columns = [("fold", 6), ("n_test", 6), ("nominal", 9), (lead, 9), ("SD", 8)]
    columns.append((f"{_level(cv.confidence_level)} interval", 22))
    columns += [column for e in others for column in ((e, 9), ("SD", 8))]
    cells = []
    for fold, n_test, nominal, entries in rows:
        main = entries[lead]
        low, high = main["ci_low"], main["ci_high"]
        row = [str(fold), str(n_test), _num(nominal, decimals)]
        row += [_point(main["limit"], main["estimate"], low, high, decimals)]
        row += [_num(main["sd"], decimals), _ci_text(low, high, decimals)]
        row += [
            _num(entries[e][f], decimals) for e in others for f in ("estimate", "sd")
        ]
        cells.append(row)
    notes = [f"note: {note}" for note in info["notes"]]
    notes += [_budget_line(cv, key, decimals)]
    notes += [_between_folds_line(cv.fold_summary_[key], decimals)]
    direction = "higher" if scorer.greater_is_better else "lower"
    unit = unit_text(cv.unit, scorer.metric)
    title = f"{key} ({direction} is better)" + (f", in {unit}" if unit else "")
    return [
        ("h", title),
        ("table", (columns, cells)),
        *(("p", f"  {note}") for note in notes if note),
    ]


def _has_sampling(cv: Any) -> bool:
    """Whether any pooled estimate carries its test-set sampling variance."""
    return any(
        not math.isnan(score.sampling_variance)
        for estimates in cv.pooled_estimates_.values()
        for score in estimates.values()
    )


def _legend(cv: Any) -> dict[str, str]:
    """The :data:`QUESTIONS` that the report's quantities answer, in order."""
    shown = {e for info in cv.estimands_.values() for e in info["shown"]}
    shown |= {"nominal", "< x, > x"}
    if _has_sampling(cv):
        shown.add("sampling")
    return {name: text for name, text in QUESTIONS.items() if name in shown}


def header_line(cv: Any) -> str:
    """Folds, samples, the noise and which estimand leads the report."""
    leads = {info["lead"] for info in cv.estimands_.values()}
    wanted = "truth" if cv.estimand == "auto" else cv.estimand
    fallback = "remeasurement, else forward" if wanted == "truth" else "forward"
    lead = (
        leads.pop() if len(leads) == 1 else f"{wanted} where offered, else {fallback}"
    )
    return (
        f"{cv.n_splits_} folds, {cv.n_samples_} samples, label noise: "
        f"{cv.noise_ or 'from the scorers'}; leading estimand: {lead}"
    )


def _advice(labels: Any, r2: float) -> str:
    """One sentence: the model's and the label noise's share of the lost R²."""
    if labels.limit:
        return (
            "the labels' noise may be as large as their spread: no ceiling is "
            "resolved; improve the measurements before comparing models"
        )
    ceiling = labels.r2_ceiling
    noise_gap, model_gap = 1.0 - ceiling, ceiling - r2
    half = labels.noise_variance / 2.0  # σ² halved: twice the readings of a mean
    shrink = 0.5 * labels.label_variance / (labels.label_variance - half)
    raised = labels.r2_ceiling_of(1.0 - (1.0 - labels.reliability) * shrink)
    first = "model" if model_gap > noise_gap else "measurements"
    at = " (at the ceiling within the noise)" if model_gap <= 0.0 else ""
    return (
        f"the model reaches {100 * r2 / ceiling:.1f} % of the ceiling R²{at}; the "
        f"label noise costs {noise_gap:.2g} of R², the model {max(model_gap, 0):.2g}: "
        f"improve the {first} first; halving σ² (e.g. twice the readings) would "
        f"raise the ceiling by {raised - ceiling:.2g}"
    )


def model_or_measurements_dict(cv: Any) -> dict[str, Any] | None:
    """The section's numbers for :meth:`to_dict` (None without σ)."""
    found = getattr(cv, "model_or_measurements_", None)
    if found is None:
        return None
    labels, r = found["labels"], found["correlation"]
    return {
        "labels": labels.to_dict(),
        "model": {
            "r2": found["r2"],
            "correlation": r,
            "corrected_correlation": labels.disattenuate(r),
        },
        "advice": _advice(labels, found["r2"]),
    }


def model_or_measurements_lines(cv: Any) -> list[str]:
    """The report's section "Model or measurements?" (none without σ)."""
    found = getattr(cv, "model_or_measurements_", None)
    if found is None:
        return []
    labels = found["labels"]
    low, high = labels.ci_low, labels.ci_high
    level = _level(labels.confidence_level)
    if labels.limit:
        reliability = f"< {high:.4f} at {level}"
        ceilings = (
            f"R² < {labels.r2_ceiling_of(high):.4f}, correlation < {high**0.5:.4f}"
        )
    else:
        reliability = (
            f"{labels.reliability:.4f}, {level} interval [{low:.4f}, {high:.4f}]"
        )
        ceilings = (
            f"R² {labels.r2_ceiling:.4f} [{labels.r2_ceiling_of(low):.4f}, "
            f"{labels.r2_ceiling_of(high):.4f}], correlation "
            f"{labels.correlation_ceiling:.4f}"
        )
    corrected = labels.disattenuate(found["correlation"])
    corrected = (
        f"1 ({corrected:.4f}: by chance)" if corrected > 1 else f"{corrected:.4f}"
    )
    return [
        "Model or measurements? (the tested labels and out-of-fold predictions)",
        f"  reliability of the labels: {reliability} (the share of their "
        "variance that is signal, 1 − mean σ² / var(y))",
        f"  noise ceiling, a perfect model: {ceilings}",
        f"  this model, nominal: R² {found['r2']:.4f}, correlation "
        f"{found['correlation']:.4f}; noise-corrected correlation {corrected} "
        "(r / √reliability: only the labels carry noise)",
        f"  {_advice(labels, found['r2'])}",
    ]


def _blocks(cv: Any) -> list[tuple[str, Any]]:
    """The report as ``(kind, content)`` blocks for :func:`_text` and
    :func:`_html`: ``"p"``, ``"h"``, ``"ul"``, ``"dl"`` and ``"table"``."""
    rows = {key: _rows(cv, key) for key in cv.scorers_}
    decimals = {key: _decimals(rows[key]) for key in cv.scorers_}
    parts = [_summary_parts(cv, key, decimals[key]) for key in cv.scorers_]
    width = max(len(name) for name, _ in parts) + 2
    level = _level(cv.confidence_level)
    sources = "the label noise and the test-set sampling"
    sources = sources if _has_sampling(cv) else "the label noise only"
    summary = [f"Summary, the numbers to report (pooled; {level} intervals cover "]
    summary[0] += f"{sources}):"
    summary += [f"{name + ':':<{width}}{text}" for name, text in parts]
    legend = f"Legend (SD and {level} interval: label noise only in the tables, "
    legend += "not test-set sampling nor split variability):"
    blocks = [("p", header_line(cv)), ("ul", summary), ("dl", (legend, _legend(cv)))]
    for key in cv.scorers_:
        blocks += metric_parts(cv, key, rows[key], decimals[key])
    title, *section = model_or_measurements_lines(cv) or [""]
    if title:
        blocks += [("h", title), *(("p", line) for line in section)]
    return blocks


def _text(kind: str, content: Any) -> list[str]:
    """One block of :func:`_blocks` as lines of the text report."""
    if kind == "table":
        titles, widths = zip(*content[0], strict=True)
        return [
            " ".join(cell.rjust(w) for cell, w in zip(cells, widths, strict=True))
            for cells in [titles, *content[1]]
        ]
    if kind == "ul":
        return [content[0], *(f"  {line}" for line in content[1:])]
    if kind == "dl":
        items = (f"  {name + ':':<15}{text}" for name, text in content[1].items())
        return ["", content[0], *items]
    return [content] if kind == "p" else ["", content]


def _html(kind: str, content: Any) -> str:
    """One block of :func:`_blocks` as HTML."""
    if kind == "table":
        html = "".join(f"<th>{escape(title)}</th>" for title, _ in content[0])
        html = f"<table><thead><tr>{html}</tr></thead><tbody>"
        for cells in content[1]:
            css = ' class="pooled"' if cells[0] == "pooled" else ""
            html += f"<tr{css}>" + "".join(f"<td>{escape(c)}</td>" for c in cells)
            html += "</tr>"
        return html + "</tbody></table>"
    if kind == "ul":
        items = "".join(f"<li>{escape(line)}</li>" for line in content[1:])
        return f'<p>{escape(content[0])}</p><ul class="report-this">{items}</ul>'
    if kind == "dl":
        title, legend = escape(content[0].rstrip(":")), content[1].items()
        items = "".join(f"<dt>{escape(n)}</dt><dd>{escape(t)}</dd>" for n, t in legend)
        return f"<details open><summary>{title}</summary><dl>{items}</dl></details>"
    if kind == "h":
        return f"<h4>{escape(content)}</h4>"
    return f"<p>{escape(content.strip())}</p>"


def _format_table(cv: Any) -> str:
    """The text report: the summary, a legend, then per metric its folds and pooled."""
    lines = [f"NoisyCrossValidator({cv.estimator!r})"]
    for kind, content in _blocks(cv):
        lines += _text(kind, content)
    return "\n".join(lines)


_STYLE = """<style>
.sklearn-noisy-report table {border-collapse: collapse; margin: 0.3em 0;}
.sklearn-noisy-report th, .sklearn-noisy-report td {
  padding: 0.15em 0.6em; text-align: right; font-variant-numeric: tabular-nums;}
.sklearn-noisy-report thead th {border-bottom: 1px solid currentColor;}
.sklearn-noisy-report tr.pooled td {border-top: 1px solid currentColor;
  font-weight: bold;}
.sklearn-noisy-report ul.report-this {font-weight: bold; margin: 0.2em 0;}
.sklearn-noisy-report h4 {margin: 0.8em 0 0.2em 0;}
.sklearn-noisy-report p, .sklearn-noisy-report dl {margin: 0.2em 0;}
</style>"""


def results_html(cv: Any) -> str:
    """The text report's header, summary, legend, tables and lines as HTML."""
    body = "".join(_html(kind, content) for kind, content in _blocks(cv))
    return f'{_STYLE}<div class="sklearn-noisy-report">{body}</div>'
