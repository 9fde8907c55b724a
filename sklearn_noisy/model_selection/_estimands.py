"""Which estimands a cross-validation reports, which one leads, and what they mean.

The texts here label every number with the question it answers (user guide:
:ref:`estimands`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np

from ..utils._validation import ESTIMANDS

__all__ = [
    "ESTIMAND_CHOICES",
    "QUESTIONS",
    "EstimandPlan",
    "check_cv_estimand",
    "estimand_note",
    "estimand_tables",
    "fold_estimates",
    "plan_estimands",
    "report_this",
]

#: The values of the cross-validator's ``estimand=`` option.
ESTIMAND_CHOICES = ("auto", *ESTIMANDS)

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


#: The order of the estimands in a report.
_ORDER = ("truth", "remeasurement", "forward")


class EstimandPlan(NamedTuple):
    """The estimands reported for one metric.

    ``shown`` in report order, ``lead`` the one that leads and ``requested``
    what ``estimand=`` asked for (``lead`` differs when the metric does not
    offer it). One scorer call computes every shown estimand.
    """

    shown: tuple[str, ...]
    lead: str
    requested: str


def check_cv_estimand(estimand: Any) -> str:
    """Validate the cross-validator's ``estimand=`` option."""
    if not isinstance(estimand, str) or estimand not in ESTIMAND_CHOICES:
        raise ValueError(
            f"estimand must be one of {ESTIMAND_CHOICES}; got {estimand!r}."
        )
    return estimand


def _offered(scorer: Any) -> tuple[str, ...]:
    """The estimands a scorer's metric offers (only its own for a foreign one)."""
    estimands = getattr(scorer, "estimands", None)
    return tuple(estimands) if estimands else (scorer.estimand,)


def plan_estimands(scorer: Any, estimand: str) -> EstimandPlan:
    """The estimands reported for ``scorer`` when ``estimand=`` leads.

    Shown: ``truth`` when offered, the lead, and ``forward``; in that order
    (``remeasurement`` only when it leads or is the scorer's own). With
    ``"auto"`` or ``"truth"`` (labels that are measurements) truth leads; a
    metric without a truth estimate leads with remeasurement, which answers a
    question about the labels as measured, rather than with the paper's
    forward value, which counts the noise twice on such labels.
    """
    offered = _offered(scorer)
    requested = "truth" if estimand == "auto" else estimand
    if requested in offered:
        lead = requested
    elif requested == "truth" and "remeasurement" in offered:
        lead = "remeasurement"
    else:
        lead = "forward"
    if lead not in offered:  # a foreign scorer: its own estimand
        lead = scorer.estimand
    wanted = {"truth", "forward", lead, scorer.estimand}
    shown = tuple(e for e in _ORDER if e in wanted and e in offered)
    return EstimandPlan(shown, lead, requested)


def estimand_note(metric: str, plan: EstimandPlan) -> str | None:
    """Why the lead is not the requested estimand, or None when it is."""
    if plan.lead == plan.requested:
        return None
    return f"{metric} offers no {plan.requested} estimate: {plan.lead} leads instead."


def fold_estimates(
    results: list[dict], key: str, own: str, plan: EstimandPlan, own_scores: list
) -> tuple[dict[str, list], list[str]]:
    """The per-fold scores of every shown estimand of ``key``, and the notes.

    ``own`` is the scorer's own estimand, whose scores are ``own_scores``; the
    others come from the fold results (``None`` where a fold failed). The
    notes say why the requested estimand does not lead, and which estimand
    failed on a fold.
    """
    notes = [estimand_note(key, plan)]
    folds: dict[str, list] = {}
    for estimand in plan.shown:
        if estimand == own:
            folds[estimand] = list(own_scores)
            continue
        scores = [
            None
            if r["fit_error"] is not None
            else r["estimates"].get(key, {}).get(estimand)
            for r in results
        ]
        folds[estimand] = [
            s if s is None or s.estimand == estimand else replace(s, estimand=estimand)
            for s in scores
        ]
        errors = [
            r["estimand_errors"][key, estimand]
            for r in results
            if (key, estimand) in r.get("estimand_errors", {})
        ]
        if errors:
            notes.append(f"{estimand} failed on {len(errors)} fold(s): {errors[0]}")
    return folds, [note for note in notes if note]


def estimand_tables(
    results: list[dict],
    scorers: dict[str, Any],
    plans: dict[str, EstimandPlan],
    fold_scores: dict[str, list],
    cv_results: dict[str, np.ndarray],
) -> tuple[dict[str, dict], dict[str, dict]]:
    """``estimands_`` and ``fold_estimates_``; ``cv_results`` gets ``m_e`` columns.

    For every metric ``m`` and shown estimand ``e``, ``cv_results`` receives
    ``m_e`` and ``m_e_variance`` (NaN where the fold failed).
    """
    estimands, estimates = {}, {}
    for key, scorer in scorers.items():
        folds, notes = fold_estimates(
            results, key, scorer.estimand, plans[key], fold_scores[key]
        )
        for estimand, scores in folds.items():
            cv_results[f"{key}_{estimand}"] = np.array(
                [np.nan if e is None else e.expected for e in scores]
            )
            cv_results[f"{key}_{estimand}_variance"] = np.array(
                [np.nan if e is None else e.variance for e in scores]
            )
        estimates[key] = folds
        estimands[key] = {
            "shown": plans[key].shown,
            "lead": plans[key].lead,
            "notes": notes,
        }
    return estimands, estimates


def report_this(
    lead: str, value: str, interval: str, level: str, truth_offered: bool
) -> str:
    """The one line that says which number of a metric to report.

    ``value`` and ``interval`` are the formatted pooled estimate of ``lead``
    and its interval at ``level`` (e.g. ``"95 %"``).
    """
    if lead == "truth":
        return (
            f"report this: truth {value}, {level} interval {interval} (labels "
            "that are measurements); quote forward only when y_true is exact"
        )
    if lead == "remeasurement":
        which = (
            "samples like these" if "test-set sampling" in interval else "these samples"
        )
        return (
            f"report this: remeasurement {value}, {level} interval {interval} "
            f"(the metric on a fresh measurement of {which})"
        )
    instead = (
        "for labels that are measurements report truth instead"
        if truth_offered
        else "this metric has no truth estimate for labels that are measurements"
    )
    return (
        f"report this: forward {value}, {level} interval {interval}, only if "
        f"y_true is exact (a reference standard or a simulation); {instead}"
    )
