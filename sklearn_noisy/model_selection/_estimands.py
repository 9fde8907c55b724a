"""Which estimands a cross-validation reports, which one leads, and what they mean.

The texts label every number with the question it answers (:ref:`estimands`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np

from ..utils._validation import ESTIMANDS

__all__ = ["ESTIMAND_CHOICES", "QUESTIONS", "EstimandPlan", "plan_estimands"]

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


class EstimandPlan(NamedTuple):
    """The estimands reported for one metric: ``shown`` in report order, the
    ``lead`` and what ``estimand=`` ``requested``.
    """

    shown: tuple[str, ...]
    lead: str
    requested: str


def plan_estimands(scorer: Any, estimand: str) -> EstimandPlan:
    """The estimands reported for ``scorer`` when ``estimand=`` leads.

    Shown: ``truth`` when offered, the lead, and ``forward``, in that order.
    With ``"auto"`` or ``"truth"`` truth leads; a metric without a truth
    estimate leads with remeasurement, else forward; a foreign scorer with its
    own estimand.
    """
    offered = tuple(getattr(scorer, "estimands", None) or (scorer.estimand,))
    requested = "truth" if estimand == "auto" else estimand
    if requested in offered:
        lead = requested
    elif requested == "truth" and "remeasurement" in offered:
        lead = "remeasurement"
    else:
        lead = "forward"
    if lead not in offered:
        lead = scorer.estimand
    wanted = {"truth", "forward", lead, scorer.estimand}
    order = ("truth", "remeasurement", "forward")
    shown = tuple(e for e in order if e in wanted and e in offered)
    return EstimandPlan(shown, lead, requested)


def estimand_tables(
    results: list[dict],
    scorers: dict[str, Any],
    plans: dict[str, EstimandPlan],
    fold_scores: dict[str, list],
    cv_results: dict[str, np.ndarray],
) -> tuple[dict[str, dict], dict[str, dict]]:
    """``estimands_`` and ``fold_estimates_``; ``cv_results`` gets ``m_e`` columns.

    The notes say why the requested estimand does not lead, and which estimand
    failed on a fold.
    """
    estimands, estimates = {}, {}
    for key, scorer in scorers.items():
        plan = plans[key]
        notes = []
        if plan.lead != plan.requested:
            notes.append(
                f"{key} offers no {plan.requested} estimate: {plan.lead} leads instead."
            )
        folds: dict[str, list] = {}
        for estimand in plan.shown:
            if estimand == scorer.estimand:
                folds[estimand] = list(fold_scores[key])
            else:
                scores = [
                    None
                    if r["fit_error"] is not None
                    else r["estimates"].get(key, {}).get(estimand)
                    for r in results
                ]
                folds[estimand] = [
                    s
                    if s is None or s.estimand == estimand
                    else replace(s, estimand=estimand)
                    for s in scores
                ]
                errors = [
                    r["estimand_errors"][key, estimand]
                    for r in results
                    if (key, estimand) in r["estimand_errors"]
                ]
                if errors:
                    notes.append(
                        f"{estimand} failed on {len(errors)} fold(s): {errors[0]}"
                    )
            cv_results[f"{key}_{estimand}"] = np.array(
                [np.nan if s is None else s.expected for s in folds[estimand]]
            )
            cv_results[f"{key}_{estimand}_variance"] = np.array(
                [np.nan if s is None else s.variance for s in folds[estimand]]
            )
        estimates[key] = folds
        estimands[key] = {"shown": plan.shown, "lead": plan.lead, "notes": notes}
    return estimands, estimates


def report_this(
    lead: str, value: str, interval: str, level: str, truth_offered: bool
) -> str:
    """The line that says which number of a metric to report.

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
