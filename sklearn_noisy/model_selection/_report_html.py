"""The report of a fitted :class:`NoisyCrossValidator` as HTML, for notebooks.

The same header, legend, tables and lines as the text report (the parts come
from :mod:`._report`), as HTML tables; :meth:`NoisyCrossValidator._repr_html_`
shows it below scikit-learn's estimator diagram.
"""

from __future__ import annotations

from html import escape
from typing import Any

from ._report import header_line, legend_lines, metric_parts

__all__ = ["results_html"]

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


def _legend_html(cv: Any) -> str:
    title, *entries = legend_lines(cv)
    items = []
    for line in entries:
        name, _, text = line.strip().partition(":")
        items.append(f"<dt>{escape(name)}</dt><dd>{escape(text.strip())}</dd>")
    return (
        f"<details open><summary>{escape(title.rstrip(':'))}</summary>"
        f"<dl>{''.join(items)}</dl></details>"
    )


def _table_html(parts: dict[str, Any]) -> str:
    head = "".join(f"<th>{escape(title)}</th>" for title, _ in parts["columns"])
    body = []
    for cells in parts["rows"]:
        css = ' class="pooled"' if cells[0] == "pooled" else ""
        tds = "".join(f"<td>{escape(cell)}</td>" for cell in cells)
        body.append(f"<tr{css}>{tds}</tr>")
    return (
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def _notes_html(notes: list[str]) -> str:
    lines = []
    for note in notes:
        css = ' class="report-this"' if note.startswith("report this") else ""
        lines.append(f"<p{css}>{escape(note)}</p>")
    return "".join(lines)


def results_html(cv: Any) -> str:
    """The report of a fitted cross-validator as an HTML fragment."""
    html = [
        _STYLE,
        '<div class="sklearn-noisy-report">',
        f"<p>{escape(header_line(cv))}</p>",
        _legend_html(cv),
    ]
    for key, scorer in cv.scorers_.items():
        parts = metric_parts(cv, key, scorer)
        html += [
            f"<h4>{escape(parts['title'])}</h4>",
            _table_html(parts),
            _notes_html(parts["notes"]),
        ]
    html.append("</div>")
    return "".join(html)
