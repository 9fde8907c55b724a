"""``sklearn-noisy evaluate``: the noise-aware cross-validation and its report."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
import textwrap
from typing import Any

from ._data import CLIError, _split
from ._model import cross_validate, opened, prepare
from ._options import SAMPLING_DEFAULT, SAMPLING_OPTIONS, add_command

_EPILOG = """\
examples:
  sklearn-noisy evaluate
      embedded wheat-protein data, the default model, 5-fold CV
  sklearn-noisy evaluate --data runs.csv --target y --sigma y_err --sigma-dof 4
  sklearn-noisy evaluate --data runs.csv --repeats r1,r2,r3 --json out.json
  sklearn-noisy evaluate --data labels.csv --target label --q 0.05 \\
      --estimator sklearn.linear_model.LogisticRegression --param C=0.5
"""


def add_parser(commands: Any) -> None:
    """The ``evaluate`` subcommand and its options."""
    data, model, output = add_command(
        commands,
        "evaluate",
        "cross-validate a model and report its metrics under label noise, per "
        "fold and pooled",
        _EPILOG,
        ("model and evaluation", "output"),
    )
    data.add_argument(
        "--noise",
        choices=("gaussian", "poisson"),
        help="poisson: count labels in --target, whose variance is the count",
    )
    model.add_argument("--metrics", metavar="a,b", help="metric names (default: a set)")
    model.add_argument(
        "--estimand",
        choices=("auto", "truth", "remeasurement", "forward"),
        default="auto",
        help="the estimate that leads the report (auto: truth where offered)",
    )
    model.add_argument(
        "--test-set-sampling",
        choices=SAMPLING_OPTIONS,
        default=SAMPLING_DEFAULT,
        help="the test-set sampling part of the error budget (%(default)s)",
    )
    model.add_argument(
        "--no-test-set-sampling",
        dest="test_set_sampling",
        action="store_const",
        const="false",
        help="the same as --test-set-sampling false",
    )
    output.add_argument(
        "--json", metavar="PATH", help="write all results as JSON (-: to stdout)"
    )
    output.add_argument("--plot", metavar="PNG", help="save a plot of the folds")
    output.add_argument("--unit", metavar="TEXT", help="unit of the target")


def run(args: argparse.Namespace, printer: Any) -> int:
    """Cross-validate, print the report and write the JSON and the plot."""
    loaded = prepare(args)
    scoring = "default" if args.metrics is None else _check_metrics(args.metrics)
    if loaded.get("counts"):
        scoring = _count_scorers(scoring)
    validator = cross_validate(args, loaded, printer, scoring)
    table_stream = sys.stderr if args.json == "-" else sys.stdout
    print(loaded["model"], file=table_stream)
    summary = _offsets(loaded)
    if summary is not None:
        print(_offsets_line(summary), file=table_stream)
    print(str(validator), file=table_stream, flush=True)
    from_repeats = _from_repeats(validator, loaded.get("repeats"))
    if from_repeats:
        print(_repeats_line(from_repeats), file=table_stream, flush=True)
    if args.json is not None:
        _write_json(validator, loaded, args.json, from_repeats)
    if args.plot is not None:
        title = f"{type(validator.estimator).__name__} on {loaded['source']}"
        _save_plot(validator, args.plot, title)
    return 0


def _offsets(loaded: dict[str, Any]) -> Any:
    """The batch offsets' summary of ``--reference-readings``, or None."""
    from ..preprocessing import BatchOffsetSummary

    summary = loaded.get("sigma_shared")
    return summary if isinstance(summary, BatchOffsetSummary) else None


def _offsets_line(summary: Any) -> str:
    """What ``--reference-readings`` estimated, above the report."""
    return (
        f"batch offsets from --reference-readings: sigma_shared "
        f"{summary.sigma_shared:.4g} (tau² {summary.tau2:.4g} on "
        f"{summary.sigma_shared_dof:.3g} dof, from {summary.n_readings} readings "
        f"in {summary.n_batches} batches; within a batch SD "
        f"{summary.sigma_within:.4g} on {summary.sigma_within_dof} dof); the truth "
        "intervals carry its uncertainty (method 'fiducial')"
    )


def _from_repeats(validator: Any, repeats: Any) -> dict[str, Any]:
    """ICC(1,k) and split-half of the tested labels' repeats, where both exist."""
    if repeats is None or validator.model_or_measurements_ is None:
        return {}
    from ..preprocessing import repeat_reliability

    found = {}
    for method in ("icc", "split_half"):
        with contextlib.suppress(ValueError):  # too few samples with two readings
            found[method] = repeat_reliability(
                repeats[validator.oof_indices_],
                method=method,
                confidence_level=validator.confidence_level,
            )
    return found


def _repeats_line(found: dict[str, Any]) -> str:
    """The reliability from the repeats, below the report's section."""
    names = {"icc": "ICC(1,k)", "split_half": "split-half"}
    parts = [
        f"{names[method]} < {r.ci_high:.4f}"
        if r.limit
        else f"{names[method]} {r.reliability:.4f} [{r.ci_low:.4f}, {r.ci_high:.4f}]"
        for method, r in found.items()
    ]
    return f"  from the repeats (the reliability of their means): {', '.join(parts)}"


def _write_json(
    validator: Any, loaded: dict[str, Any], path: str, from_repeats: dict[str, Any]
) -> None:
    """All results as JSON, to ``path`` (``-``: standard output)."""
    from .. import __version__
    from ..model_selection._report import _json_ready

    payload = validator.to_dict()
    if from_repeats:
        payload["model_or_measurements"]["repeats"] = _json_ready(
            {method: r.to_dict() for method, r in from_repeats.items()}
        )
    summary = _offsets(loaded)
    if summary is not None:
        payload["sigma_shared"] = _json_ready(dataclasses.asdict(summary))
    payload["data"] = loaded["source"]
    payload["features"] = loaded["features"]
    payload["left_out"] = loaded.get("left_out", {})
    payload["model"] = loaded["model"].removeprefix("model: ")
    payload["sklearn_noisy_version"] = __version__
    text = json.dumps(payload, indent=2, allow_nan=False) + "\n"
    with opened(path) as handle:
        handle.write(text)


def _check_metrics(option: str) -> list[str]:
    """The names of ``--metrics``, each a metric or a scorer (checked before work)."""
    from ..metrics import get_metric_names, get_noisy_scorer_names

    names = _split(option)
    if not names:
        raise CLIError("--metrics: give at least one metric name")
    metrics, scorers = get_metric_names(), get_noisy_scorer_names()
    for name in names:
        if name not in metrics and name not in scorers:
            raise CLIError(
                f"--metrics: unknown metric {name!r}; give metric names {metrics} "
                f"or scorer names {scorers}"
            )
    return names


def _count_scorers(scoring: Any) -> dict[str, Any]:
    """The scorers of count labels, ``noise="poisson"`` (before any fit): by
    default the regression defaults whose definitions take ``noise``."""
    from ..metrics import make_noisy_scorer
    from ..metrics._registry import get_metric_info, get_metric_names

    takes = [
        name
        for name in get_metric_names()
        if "noise" in getattr(get_metric_info(name).definition, "options", ())
    ]
    names = scoring
    if scoring == "default":
        names = [n for n in takes if get_metric_info(n).default_targets]
    scorers = {}
    for name in names:
        try:
            scorers[name] = make_noisy_scorer(name, noise="poisson")
        except (TypeError, ValueError):
            raise CLIError(
                f"--metrics: {name!r} does not take count labels (--noise "
                f"poisson); give metric names among {', '.join(takes)}"
            ) from None
    return scorers


def _save_plot(validator: Any, path: str, title: str) -> None:
    import matplotlib  # there: check_options looked

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..model_selection import NoisyCVDisplay
    from ..model_selection._report import metric_label

    keys = list(validator.scorers_)
    size = (6.4, 2.4 * len(keys) + 1.4)
    figure, axes = plt.subplots(
        len(keys), figsize=size, squeeze=False, layout="constrained"
    )
    entries: dict[str, Any] = {}  # one legend for all panels, by label
    for key, ax in zip(keys, axes[:, 0], strict=True):
        display = NoisyCVDisplay.from_cv_results(validator, key, ax=ax, legend=False)
        ax.set_title(metric_label(validator.scorers_[key].metric), fontsize="medium")
        for handle, label in zip(*display.legend_entries(), strict=True):
            entries.setdefault(label, handle)
    figure.suptitle("\n".join(textwrap.wrap(title, 64)), fontsize="medium")
    figure.legend(
        list(entries.values()),
        list(entries),
        loc="outside lower center",
        ncols=2,
        fontsize="small",
    )
    figure.savefig(path, dpi=120)
    plt.close(figure)
