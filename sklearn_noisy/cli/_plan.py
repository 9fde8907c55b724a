"""``sklearn-noisy plan``: where to add readings to sharpen the truth estimate.

The plan is :func:`~sklearn_noisy.model_selection.plan_remeasurement` on the
out-of-fold predictions of ``evaluate``'s cross-validation: a CSV file of the
samples to measure again (standard output or ``--output``), the expected gain
on standard error.
"""

from __future__ import annotations

import argparse
import csv
import sys
from typing import Any

import numpy as np

from ._data import CLIError
from ._model import cross_validate, note, opened, prepare
from ._options import add_command

_EPILOG = """\
examples:
  sklearn-noisy plan --budget 60 > remeasure.csv
  sklearn-noisy plan --budget 20 --data runs.csv --repeats r1,r2,r3 --id sample
  sklearn-noisy plan --budget 30 --data labels.csv --target label --q 0.1

Standard output (or --output): a CSV row per sample that gets readings; the
expected gain goes to standard error.
"""

#: The metric planned without ``--metric``, per task.
_DEFAULT_METRIC = {"regression": "mean_squared_error", "classification": "accuracy"}


def _positive_int(text: str) -> int:
    """``--budget``'s type: an integer >= 1 (argparse reports the error)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"expected a positive integer, the readings to add; got {text!r}"
        )
    return value


def add_parser(commands: Any) -> None:
    """The ``plan`` subcommand: the data and model options of ``evaluate``, and
    the budget."""
    data, _, options = add_command(
        commands,
        "plan",
        "say which samples to measure again, and how many times, to sharpen "
        "the truth estimate most",
        _EPILOG,
        ("model", "plan and output"),
    )
    data.add_argument("--id", metavar="COL", help="column naming the samples")
    data.add_argument(
        "--n-readings",
        metavar="COL|NUMBER",
        help="readings (with --q: annotations) each label holds now",
    )
    options.add_argument(
        "--budget",
        type=_positive_int,
        required=True,
        metavar="N",
        help="new readings (annotations) to add in total",
    )
    options.add_argument(
        "--metric", metavar="NAME", help="the metric whose truth estimate to sharpen"
    )
    options.add_argument(
        "--output", metavar="CSV", help="write the plan here, not to standard output"
    )
    # the options evaluate has and plan has not (a group sets the parser's defaults)
    options.set_defaults(estimand="truth", test_set_sampling="false", unit=None)


def run(args: argparse.Namespace, printer: Any) -> int:
    """The re-measurement plan on ``evaluate``'s out-of-fold predictions."""
    from ..model_selection import plan_remeasurement

    if args.repeats is not None and args.repeat_sigma != "sem":
        raise CLIError(
            "plan needs each label's standard error: --repeat-sigma sem (the default)"
        )
    loaded = prepare(args)
    options, notes, planned = _plan_options(args, loaded)  # checked before the fit
    for text in notes:
        note("note", text)
    validator = cross_validate(args, loaded, printer, [options["metric"]])
    y_pred = np.empty_like(validator.oof_predictions_, shape=loaded["y"].shape)
    y_pred[validator.oof_indices_] = validator.oof_predictions_
    plan = plan_remeasurement(loaded["y"], y_pred, budget=args.budget, **options)
    _write_plan(args, loaded, plan, options, planned)
    print(loaded["model"], file=sys.stderr)
    for line in _gain_lines(plan, options, loaded.get("unit")):
        print(line, file=sys.stderr)
    return 0


def _plan_options(
    args: argparse.Namespace, loaded: dict[str, Any]
) -> tuple[dict[str, Any], list[str], Any]:
    """The keyword arguments of ``plan_remeasurement`` for the data, checked by
    a dry run with a budget of 0 before any fit, notes, and the sigma (q) the
    plan takes (sigma pooled where estimated)."""
    from ..model_selection import plan_remeasurement
    from ..model_selection._planning import pool_sigma

    counts = loaded.get("n_readings")
    dof = loaded.get("sigma_dof")
    if counts is None and dof is not None:
        dof = np.asarray(dof)
        if np.all(np.isfinite(dof)) and np.all(dof == np.round(dof)):
            counts = dof + 1.0  # sigma from n readings: n - 1 degrees of freedom
    notes = []
    if counts is None:
        counts = 1
        notes.append(
            "each label is taken as one reading (annotation); give --n-readings "
            "COL|NUMBER if it is the mean (majority vote) of more"
        )
    regression = loaded["task"] == "regression"
    if regression:
        options = {"sigma": loaded["sigma"], "n_readings": counts}
        if dof is not None:
            options["sigma_dof"] = dof
    else:
        options = {"q": loaded["q"], "n_annotations": counts}
    options["metric"] = args.metric or _DEFAULT_METRIC[loaded["task"]]
    plan_remeasurement(loaded["y"], loaded["y"], budget=0, **options)
    planned, pooled = loaded["sigma" if regression else "q"], None
    if regression and dof is not None:  # the sigma the plan takes, for the CSV
        planned, pooled = pool_sigma(loaded["sigma"], dof, counts)
    if pooled is not None:
        notes.append(
            "sigma was estimated from each sample's few readings: the plan "
            f"takes their pooled SD of one reading, {pooled:.4g}, over the "
            "square root of each sample's readings (on each sample's own "
            "estimate it would chase the samples whose sigma is high by "
            "chance, and promise a gain that re-measuring does not deliver)"
        )
    return options, notes, planned


def _number(value: Any) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _write_plan(
    args: argparse.Namespace, loaded: dict, plan: Any, options: dict, planned: Any
) -> None:
    """The samples that get readings, one CSV row each, in input order, with the
    sigma (q) the plan took."""
    flips = "q" in options
    n = plan.readings.size
    noise = np.broadcast_to(planned, (n,))
    counts = np.broadcast_to(options["n_annotations" if flips else "n_readings"], (n,))
    ids, cells = loaded.get("ids"), loaded.get("cells")
    unit = "annotations" if flips else "readings"
    header = ["index", *([args.id] if ids is not None else []), "label"]
    header += ["q" if flips else "sigma", f"n_{unit}", f"add_{unit}"]
    rows = [
        [
            str(i),
            *([ids[i]] if ids is not None else []),
            cells[i] if cells is not None else _number(loaded["y"][i].item()),
            _number(float(noise[i])),
            str(int(counts[i])),
            str(int(plan.readings[i])),
        ]
        for i in np.flatnonzero(plan.readings).tolist()
    ]
    with opened(args.output, newline="") as handle:
        csv.writer(handle, lineterminator="\n").writerows([header, *rows])


def _gain_lines(plan: Any, options: dict, unit: str | None) -> list[str]:
    """The expected gain, for standard error: SDs and half-widths before, after
    the plan and after the even allocation of the same budget."""
    from ..model_selection._report import metric_label, unit_text

    flips = "q" in options
    what = "annotations" if flips else "readings"
    unit = unit_text(unit, plan.metric)
    touched = int(np.count_nonzero(plan.readings))
    level = f"{100 * plan.confidence_level:g} %"
    lines = [
        f"plan: {plan.n_added} {what} to add, to {touched} of {plan.readings.size} "
        f"samples (budget {plan.budget}), to sharpen {metric_label(plan.metric)} "
        "against the true values",
        f"  its label-noise SD{f', in {unit}' if unit else ''}: "
        f"{plan.std_before:.4g} now, {plan.std_after:.4g} after the plan, "
        f"{plan.std_even:.4g} after the same budget spread evenly",
        f"  its {level} half-width: {plan.half_width_before:.4g} now, "
        f"{plan.half_width_after:.4g} after the plan, {plan.half_width_even:.4g} "
        "spread evenly",
        f"  method: {plan.method}",
    ]
    if plan.n_added < plan.budget:
        why = (
            "annotations go in pairs to an odd count"
            if flips
            else "the other samples have sigma = 0"
        )
        lines.append(f"  {plan.budget - plan.n_added} of the {what} left unused: {why}")
    lines.append(
        "  SDs of the label noise with q known; evaluate's also count the test-set "
        "sampling (not reduced by re-measuring)"
        if flips
        else "  SDs of the label noise with sigma known; evaluate's also count "
        "sigma's own uncertainty (--sigma-dof) and the test-set sampling (not "
        "reduced by re-measuring)"
    )
    return lines
