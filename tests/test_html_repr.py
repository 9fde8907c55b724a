"""Notebook reprs: the cross-validator's report and a NoisyScore as HTML."""

from __future__ import annotations

import re
import warnings
from html import unescape

import numpy as np
import pytest
from sklearn.linear_model import Ridge
from sklearn.model_selection import KFold

from sklearn_noisy import NoisyCrossValidator, NoisyScore


@pytest.fixture(scope="module")
def fitted_cv():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    sigma = rng.uniform(0.1, 0.5, 60)
    y = X @ [1.0, -2.0] + rng.normal(scale=sigma)
    cv = NoisyCrossValidator(Ridge(), scoring=["mean_squared_error", "r2"], cv=KFold(4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return cv.fit(X, y, sigma=sigma)


def _report_tables(html):
    start = html.index('<div class="sklearn-noisy-report">')
    return re.findall(r"<table>.*?</table>", html[start:], flags=re.S)


def test_fitted_report_html_has_the_text_reports_tables(fitted_cv):
    html = fitted_cv._repr_html_()
    tables = _report_tables(html)
    assert len(tables) == 2  # one per metric
    text = str(fitted_cv)
    for table in tables:
        rows = re.findall(r"<tr(?: class=\"pooled\")?>(.*?)</tr>", table, flags=re.S)
        assert len(rows) == 1 + 4 + 1  # header, folds 1-4, pooled
        for row in rows[1:]:
            cells = [unescape(cell) for cell in re.findall(r"<td>(.*?)</td>", row)]
            # the same cells, in the same order, as a line of the text report
            assert re.search(r"\s+".join(map(re.escape, cells)), text)
    # the summary first, its lines as the text report's
    (summary,) = re.findall(r'<ul class="report-this">(.*?)</ul>', html)
    items = [unescape(item) for item in re.findall(r"<li>(.*?)</li>", summary)]
    assert items == [line.strip() for line in text.splitlines()[3:5]]
    assert html.index("report-this") < html.index("<table>")
    assert "Legend (SD and 95 % interval" in html
    assert "<dt>truth</dt>" in html
    bundle = fitted_cv._repr_mimebundle_()
    assert bundle["text/html"].count('<div class="sklearn-noisy-report">') == 1


def test_unfitted_cross_validator_shows_the_diagram_only():
    cv = NoisyCrossValidator(Ridge())
    assert "sklearn-noisy-report" not in cv._repr_html_()
    assert "Ridge" in cv._repr_html_()


def test_noisy_score_html():
    score = NoisyScore(
        "a<b", expected=0.815, variance=0.0003, nominal=0.85, n_samples=500
    )
    html = score._repr_html_()
    low, high = score.confidence_interval(0.95)
    assert f"[{low:.6g}, {high:.6g}] (normal)" in html
    assert "<td style='text-align:right'>0.815</td>" in html
    assert "a&lt;b" in html and "a<b" not in html
