"""The ``sklearn-noisy`` command: options, estimator, evaluation and output."""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import importlib.util
import json
import os
import sys
import textwrap
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..utils._validation import TEST_SET_SAMPLING
from ._data import DATASETS, CLIError, _load, _reasons, _split
from ._plan import (
    check_plan_args,
    gain_lines,
    plan_options,
    positive_int,
    write_plan,
)

PROG = "sklearn-noisy"

#: ``--test-set-sampling``'s words for the values of ``test_set_sampling=``.
_SAMPLING_OPTIONS = {"auto": "auto", "true": True, "bootstrap": "bootstrap"}
_SAMPLING_OPTIONS["false"] = False
_SAMPLING_NAMES = {value: name for name, value in _SAMPLING_OPTIONS.items()}

_EPILOG = """\
examples:
  sklearn-noisy evaluate
      embedded wheat-protein data (mean of repeated readings, sigma = their
      standard error), degree-3 polynomial ridge regression, 5-fold CV
  sklearn-noisy evaluate --dataset oxygen_sensor
      embedded oxygen-sensor data, a model better than its labels can resolve
  sklearn-noisy evaluate --data runs.csv --target y --sigma y_err
  sklearn-noisy evaluate --data runs.csv --target y --sigma y_sem --sigma-dof y_dof
  sklearn-noisy evaluate --data runs.csv --repeats r1,r2,r3 --json out.json
  sklearn-noisy evaluate --data runs.csv --target y --sigma 0.3 --groups run \\
      --sigma-shared 0.2
  sklearn-noisy evaluate --data counts.csv --target y --noise poisson
      count labels: each count's variance is the count itself (no --sigma)
  sklearn-noisy evaluate --data labels.csv --target label --q 0.05 \\
      --estimator sklearn.linear_model.LogisticRegression --param C=0.5

--sigma, --sigma-dof and --q take a column name or a number (the same for every
sample). The default model, for the embedded data and a CSV file alike: a
degree-3 polynomial ridge for regression on at most 10 features without missing
cells, else HistGradientBoostingRegressor; HistGradientBoostingClassifier with
--q. The report's first line names it and says why.

The report leads with the truth estimate (the metric against the true values,
with its SD and 95 % interval) where the metric offers one: the number to report
when the labels are measurements. The forward value is the paper's expected
metric if y_true were exact; --estimand forward leads with it.
"""


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line on stderr (exit code 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = _Parser(
        prog=PROG,
        description="Noise-aware evaluation of scikit-learn models: expected "
        "metrics and their variance under known label measurement error.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=_Parser
    )
    commands.required = True
    evaluate = commands.add_parser(
        "evaluate",
        help="cross-validate a model and report its metrics under label noise, per "
        "fold and pooled",
        description="Cross-validate a model and report, per fold and pooled, each "
        "metric's nominal value, its truth estimate (against the true values; "
        "for a metric without one, its remeasurement estimate: the metric on a "
        "fresh measurement of the samples) and its forward value (the paper's, "
        "right only if y_true were exact), with their SDs over the label noise, "
        "and the test-set sampling of the pooled estimates (the error budget).",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    data = evaluate.add_argument_group("data (default: the embedded wheat protein)")
    _add_data_arguments(data)
    data.add_argument(
        "--noise",
        choices=("gaussian", "poisson"),
        help="with --data and --target: poisson for count labels, whose variance "
        "is the count itself (instead of --sigma); metrics mean_squared_error, "
        "root_mean_squared_error, r2 and explained_variance",
    )
    _add_model_arguments(evaluate.add_argument_group("model and evaluation"))
    output = evaluate.add_argument_group("output")
    output.add_argument(
        "--json",
        metavar="PATH",
        help="write all results as JSON (-: to standard output, the table then "
        "goes to stderr)",
    )
    output.add_argument("--plot", metavar="PNG", help="save a plot of the folds")
    output.add_argument(
        "--unit",
        metavar="TEXT",
        help="unit of the target, e.g. 'mg/L', given to the metrics in it (MSE "
        "squared, RMSE, MAE) in the summary, tables and plot (the embedded data: "
        "their own)",
    )
    _add_progress_arguments(output)
    _add_plan_parser(commands)
    return parser


_PLAN_EPILOG = """\
examples:
  sklearn-noisy plan --budget 60
      the embedded wheat-protein data: where to spend 60 more reference
      analyses so that the truth MSE's interval is narrowest
  sklearn-noisy plan --budget 20 --data runs.csv --repeats r1,r2,r3 --id sample
  sklearn-noisy plan --budget 10 --data runs.csv --target y --sigma y_err \\
      --n-readings n --output remeasure.csv
  sklearn-noisy plan --budget 30 --data labels.csv --target label --q 0.1

Standard output (or --output) is a CSV file with one row per sample that gets
readings: index (0 for the first data row), the --id column if given, label,
sigma (q), n_readings (n_annotations) and add_readings (add_annotations). The
expected gain, the label-noise SD and half-width of the truth estimate now,
after the plan and after the same budget spread evenly, goes to standard error.
A sigma estimated from a few readings (the embedded data, --repeats,
--sigma-dof) is pooled: one SD of a reading for all samples, over the square
root of each sample's readings.
"""


def _add_plan_parser(commands: Any) -> None:
    """``plan``: the data and model options of ``evaluate``, and the budget."""
    plan = commands.add_parser(
        "plan",
        help="say which samples to measure again, and how many times, to sharpen "
        "the truth estimate most",
        description="Cross-validate a model as evaluate does and, from its "
        "out-of-fold predictions, plan where to add --budget new readings "
        "(annotations for class labels) so that the label-noise SD of the truth "
        "estimate of --metric is smallest (plan_remeasurement).",
        epilog=_PLAN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    data = plan.add_argument_group("data (default: the embedded wheat protein)")
    _add_data_arguments(data)
    data.add_argument(
        "--id",
        metavar="COL",
        help="a column that names the samples, copied into the plan",
    )
    data.add_argument(
        "--n-readings",
        metavar="COL|NUMBER",
        help="readings each label is the mean of now (with --q: annotations it is "
        "the majority vote of, --q being one annotation's flip probability); "
        "default: the count of --repeats, else --sigma-dof + 1, else 1",
    )
    _add_model_arguments(plan.add_argument_group("model"), scores=False)
    options = plan.add_argument_group("plan and output")
    options.add_argument(
        "--budget",
        type=positive_int,
        required=True,
        metavar="N",
        help="new readings (annotations) to add in total",
    )
    options.add_argument(
        "--metric",
        metavar="NAME",
        help="the metric whose truth estimate to sharpen: mean_squared_error "
        "(default for regression), root_mean_squared_error, or accuracy (binary "
        "labels with --q; the default there)",
    )
    options.add_argument(
        "--output", metavar="CSV", help="write the plan here, not to standard output"
    )
    _add_progress_arguments(options)
    plan.set_defaults(estimand="truth", test_set_sampling="false", unit=None)


def _add_progress_arguments(group: Any) -> None:
    """``--quiet`` and ``--verbose``: the progress lines on stderr."""
    group.add_argument(
        "--quiet", action="store_true", help="no progress lines on stderr"
    )
    group.add_argument(
        "--verbose", action="store_true", help="also joblib's own progress lines"
    )


def _add_data_arguments(data: Any) -> None:
    """The options that choose the data and its label noise."""
    data.add_argument(
        "--dataset",
        choices=DATASETS,
        help="embedded dataset without --data (default: wheat_protein, where the "
        "label noise changes the conclusion; oxygen_sensor: a model better than "
        "its labels can resolve)",
    )
    data.add_argument("--data", metavar="CSV", help="CSV file with a header row")
    data.add_argument("--target", metavar="COL", help="column of the labels")
    data.add_argument(
        "--sigma",
        metavar="COL|NUMBER",
        help="standard error of each regression label: a column or a number",
    )
    data.add_argument(
        "--sigma-dof",
        metavar="COL|NUMBER",
        help="with --sigma: degrees of freedom of sigma when it was estimated from "
        "a few readings (n - 1; inf: known): a column or a number",
    )
    data.add_argument(
        "--groups",
        metavar="COL",
        help="column of each label's batch (calibration run, day): the folds "
        "keep batches whole (GroupKFold)",
    )
    data.add_argument(
        "--sigma-shared",
        metavar="COL|NUMBER",
        help="with --sigma and --groups: SD of an offset shared by the labels of "
        "one batch, a column (equal within a batch) or a number",
    )
    data.add_argument(
        "--q",
        metavar="COL|NUMBER",
        help="flip probability of each class label: a column or a number",
    )
    data.add_argument(
        "--repeats",
        metavar="COL,COL,...",
        help="columns of repeated measurements (empty cells allowed): the label is "
        "their mean, sigma their standard error and sigma's degrees of freedom "
        "n - 1 (summarize_repeats)",
    )
    data.add_argument(
        "--repeat-sigma",
        choices=("sem", "std"),
        default="sem",
        help="with --repeats: standard error of the mean (default) or standard "
        "deviation of one measurement",
    )
    data.add_argument(
        "--instrument-sigma",
        type=float,
        metavar="NUMBER",
        help="with --repeats: standard deviation of one measurement, used for "
        "samples with a single repeat",
    )
    data.add_argument(
        "--min-repeats",
        type=int,
        metavar="N",
        help="with --repeats: fewest readings for a sample's own standard error "
        "(2); samples with fewer use --instrument-sigma",
    )
    data.add_argument(
        "--features",
        metavar="COL,COL,...",
        help="feature columns (default: every column not used for the label or "
        "its noise, except those whose name marks a label, a true value or a "
        "label's noise, such as label_true or flip_probability, copies of the "
        "label and the readings it is the mean of); never the label itself",
    )
    data.add_argument(
        "--drop",
        metavar="COL,COL,...",
        help="columns to leave out of the default features",
    )


def _add_model_arguments(model: Any, *, scores: bool = True) -> None:
    """The options that choose the estimator and the cross-validation (and, with
    ``scores``, what the evaluation reports)."""
    model.add_argument(
        "--estimator",
        metavar="dotted.path.Class",
        help="estimator class, e.g. sklearn.linear_model.Ridge (a bare scikit-learn "
        "class name also works)",
    )
    model.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="name=value",
        help="estimator parameter (repeatable; the value is a Python literal or a "
        "string; pipeline steps as step__name=value)",
    )
    model.add_argument("--cv", type=int, default=5, metavar="N", help="folds (5)")
    if scores:
        model.add_argument(
            "--metrics",
            metavar="a,b",
            help="metric names, e.g. mean_squared_error,r2 (default: a set suited to "
            "the task)",
        )
        model.add_argument(
            "--estimand",
            choices=("auto", "truth", "remeasurement", "forward"),
            default="auto",
            help="which estimate leads the report: auto (truth where the metric offers "
            "it, else remeasurement, else forward; for labels that are measurements), "
            "truth, remeasurement, or forward (only if y_true is exact)",
        )
        model.add_argument(
            "--test-set-sampling",
            choices=_SAMPLING_OPTIONS,
            default=_SAMPLING_NAMES[TEST_SET_SAMPLING],
            help="the test-set sampling part of the error budget: auto (in closed form "
            "where the metric has one, else none), true (else by a bootstrap), "
            "bootstrap (always), false (none); default: %(default)s",
        )
        model.add_argument(
            "--no-test-set-sampling",
            dest="test_set_sampling",
            action="store_const",
            const="false",
            help="the same as --test-set-sampling false",
        )
    model.add_argument("--n-jobs", type=int, default=None, metavar="N")
    model.add_argument(
        "--seed", type=int, default=0, metavar="N", help="seed of folds and model (0)"
    )


def _import_estimator(path: str) -> Any:
    if not all(part.isidentifier() for part in path.split(".")):
        raise CLIError(
            f"--estimator: expected a dotted path such as "
            f"sklearn.linear_model.Ridge or a scikit-learn class name; got {path!r}"
        )
    if "." not in path:
        from sklearn.utils import all_estimators

        found = dict(all_estimators())
        if path not in found:
            raise CLIError(
                f"--estimator: unknown estimator {path!r}; give a dotted path such "
                "as sklearn.linear_model.Ridge"
            )
        return found[path]
    module_name, _, class_name = path.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CLIError(f"--estimator: cannot import {module_name!r}: {exc}") from None
    try:
        return getattr(module, class_name)
    except AttributeError:
        raise CLIError(
            f"--estimator: module {module_name!r} has no {class_name!r}"
        ) from None


def _parse_params(items: Sequence[str]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name.strip():
            raise CLIError(f"--param: expected name=value, got {item!r}")
        try:
            value = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError):
            value = text.strip()
        params[name.strip()] = value
    return params


#: The default regression model is a degree-3 polynomial ridge up to this many
#: features (286 polynomial terms); gradient boosting above.
_POLYNOMIAL_FEATURES = 10


def _default_estimator(task: str, X: Any, seed: int) -> tuple[Any, str]:
    """The default model for ``X`` and the line that names it and says why."""
    from sklearn.ensemble import (
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
    )

    if task == "classification":
        return HistGradientBoostingClassifier(random_state=seed), (
            "model: HistGradientBoostingClassifier, the default for classification "
            "(flexible, handles missing cells); --estimator for another"
        )
    n_features = X.shape[1]
    if n_features > _POLYNOMIAL_FEATURES or np.isnan(X).any():
        why = (
            "with missing cells (which it handles)"
            if np.isnan(X).any()
            else f"on more than {_POLYNOMIAL_FEATURES} features (too many "
            "polynomial terms)"
        )
        return HistGradientBoostingRegressor(random_state=seed), (
            f"model: HistGradientBoostingRegressor, the default for regression {why}; "
            "--estimator for another"
        )
    from sklearn.linear_model import RidgeCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import PolynomialFeatures, StandardScaler

    estimator = make_pipeline(
        StandardScaler(),
        PolynomialFeatures(degree=3),
        RidgeCV(alphas=(1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0, 10.0)),
    )
    return estimator, (
        "model: degree-3 polynomial ridge, the default for regression on at most "
        f"{_POLYNOMIAL_FEATURES} features without missing cells (smooth, stable on "
        "small data); --estimator for another"
    )


def _make_estimator(args: argparse.Namespace, task: str, X: Any) -> tuple[Any, str]:
    """The estimator to cross-validate, and the line that names it and says why."""
    from sklearn.base import is_classifier, is_regressor

    if args.estimator is None:
        estimator, chosen = _default_estimator(task, X, args.seed)
    else:
        chosen = f"model: {args.estimator}, from --estimator"
        cls = _import_estimator(args.estimator)
        if not isinstance(cls, type):
            raise CLIError(f"--estimator: {args.estimator!r} is not a class")
        try:
            estimator = cls()
        except TypeError as exc:
            raise CLIError(
                f"--estimator: cannot create {args.estimator}(): {exc}"
            ) from None
        if not hasattr(estimator, "fit") or not hasattr(estimator, "get_params"):
            raise CLIError(
                f"--estimator: {args.estimator!r} is not a scikit-learn estimator"
            )
    params = _parse_params(args.param)
    seeds = {
        name: args.seed
        for name, value in estimator.get_params().items()
        if (name == "random_state" or name.endswith("__random_state")) and value is None
    }
    try:
        estimator.set_params(**seeds, **params)
    except ValueError as exc:
        raise CLIError(f"--param: {exc}") from None
    if task == "classification" and not is_classifier(estimator):
        raise CLIError(
            f"--q means classification, but {type(estimator).__name__} is not a "
            "classifier"
        )
    if task == "regression" and not is_regressor(estimator):
        raise CLIError(
            f"--sigma/--repeats mean regression, but {type(estimator).__name__} is "
            "not a regressor"
        )
    return estimator, chosen


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Send everything written to stdout (also by worker processes) to stderr."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no real file descriptor (embedded interpreters)
        with contextlib.redirect_stdout(sys.stderr):
            yield
        return
    try:
        os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


#: The seeds numpy accepts: 0 to 2**32 - 1.
_MAX_SEED = 2**32 - 1


def _check_options(args: argparse.Namespace) -> None:
    """Fail before any work on an option value that cannot be used."""
    if args.cv < 2:
        raise CLIError(f"--cv must be at least 2; got {args.cv}")
    if args.n_jobs is not None and args.n_jobs == 0:
        raise CLIError("--n-jobs must not be 0")
    if not 0 <= args.seed <= _MAX_SEED:
        raise CLIError(
            f"--seed must be an integer from 0 to {_MAX_SEED}; got {args.seed}"
        )
    for option in ("json", "plot", "output"):
        path = getattr(args, option, None)
        if path is not None and not (option == "json" and path == "-"):
            _check_writable(path, f"--{option}")
    if (
        getattr(args, "plot", None) is not None
        and importlib.util.find_spec("matplotlib") is None
    ):
        raise CLIError("--plot needs matplotlib: pip install matplotlib")


def _check_writable(path: str, option: str) -> None:
    """Raise a CLIError unless ``path`` can be opened for writing (left as found)."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise CLIError(f"{option}: no such directory: {folder!r}")
    if os.path.isdir(path):
        raise CLIError(f"{option}: {path!r} is a directory; give a file name")
    existed = os.path.exists(path)
    try:
        with open(path, "a" if existed else "x", encoding="utf-8"):
            pass
    except OSError as exc:
        raise CLIError(f"{option}: cannot write to {path!r}: {exc.strerror}") from None
    if not existed:
        os.remove(path)


def _prepare(args: argparse.Namespace) -> dict[str, Any]:
    """Check the options, load the data and print its warnings (no fitting)."""
    _check_options(args)
    loaded = _load(args)
    for note in loaded.get("notes", ()):
        print(f"{PROG}: warning: {note}", file=sys.stderr, flush=True)
    return loaded


def _cross_validate(
    args: argparse.Namespace,
    loaded: dict[str, Any],
    printer: _WarningPrinter,
    scoring: Any,
) -> Any:
    """The fitted NoisyCrossValidator of the model of ``args`` on the data."""
    estimator, loaded["model"] = _make_estimator(args, loaded["task"], loaded["X"])

    from sklearn.model_selection import GroupKFold, KFold, StratifiedKFold

    from ..model_selection import NoisyCrossValidator

    n_samples = loaded["X"].shape[0]
    if args.cv > n_samples:
        raise CLIError(f"--cv {args.cv} exceeds the number of samples ({n_samples})")
    folds = StratifiedKFold if loaded["task"] == "classification" else KFold
    splitter = folds(args.cv, shuffle=True, random_state=args.seed)
    groups = loaded.get("groups")
    if groups is not None:  # batches kept whole (user guide: shared_offsets)
        n_groups = np.unique(groups).size
        if args.cv > n_groups:
            raise CLIError(
                f"--cv {args.cv} exceeds the number of batches in --groups "
                f"({n_groups}): the folds keep batches whole"
            )
        splitter = GroupKFold(args.cv, shuffle=True, random_state=args.seed)
    validator = NoisyCrossValidator(
        estimator,
        scoring=scoring,
        cv=splitter,
        n_jobs=args.n_jobs,
        verbose=0 if args.quiet else (2 if args.verbose else 1),
        error_score="raise",
        estimand=args.estimand,
        test_set_sampling=_SAMPLING_OPTIONS[args.test_set_sampling],
        unit=args.unit or loaded.get("unit"),
    )
    if not args.quiet:
        print(
            f"{PROG}: {loaded['source']}: {n_samples} samples, "
            f"{loaded['X'].shape[1]} features; {args.cv}-fold CV of "
            f"{type(estimator).__name__}",
            file=sys.stderr,
            flush=True,
        )
        _print_columns(loaded)
    noise = (
        {"sigma": loaded["sigma"], "sigma_dof": loaded["sigma_dof"]}
        if loaded["task"] == "regression" and not loaded.get("counts")
        else {"q": loaded["q"]}
        if loaded["task"] == "classification"
        else {}
    )
    if groups is not None:
        noise.update(groups=groups, sigma_shared=loaded.get("sigma_shared"))
    try:
        with _stdout_to_stderr(), _thread_limits(loaded["X"]):
            validator.fit(loaded["X"], loaded["y"], **noise)
    finally:
        printer.flush()
    return validator


def _evaluate(args: argparse.Namespace, printer: _WarningPrinter) -> int:
    loaded = _prepare(args)
    scoring = "default" if args.metrics is None else _check_metrics(args.metrics)
    if loaded.get("counts"):
        scoring = _count_scorers(scoring)
    validator = _cross_validate(args, loaded, printer, scoring)
    table_stream = sys.stderr if args.json == "-" else sys.stdout
    print(loaded["model"], file=table_stream)
    print(str(validator), file=table_stream, flush=True)
    from_repeats = _from_repeats(validator, loaded.get("repeats"))
    if from_repeats:
        print(_repeats_line(from_repeats), file=table_stream, flush=True)
    if args.json is not None:
        _write_json(validator, loaded, args.json, from_repeats)
    if args.plot is not None:
        _save_plot(
            validator,
            args.plot,
            f"{type(validator.estimator).__name__} on {loaded['source']}",
        )
    return 0


def _plan(args: argparse.Namespace, printer: _WarningPrinter) -> int:
    """``plan``: the re-measurement plan on ``evaluate``'s out-of-fold predictions."""
    from ..model_selection import plan_remeasurement

    check_plan_args(args)
    loaded = _prepare(args)
    options, notes = plan_options(args, loaded)  # checked before the fit
    for note in notes:
        print(f"{PROG}: note: {note}", file=sys.stderr, flush=True)
    validator = _cross_validate(args, loaded, printer, [options["metric"]])
    y_pred = np.empty_like(validator.oof_predictions_, shape=loaded["y"].shape)
    y_pred[validator.oof_indices_] = validator.oof_predictions_
    plan = plan_remeasurement(loaded["y"], y_pred, budget=args.budget, **options)
    write_plan(args, loaded, plan, options)
    print(loaded["model"], file=sys.stderr)
    for line in gain_lines(plan, options, loaded.get("unit")):
        print(line, file=sys.stderr)
    return 0


def _print_columns(loaded: dict[str, Any]) -> None:
    """Name the feature columns, and those left out (one line, with the reasons)."""
    print(f"  features: {', '.join(loaded['features'])}", file=sys.stderr)
    if loaded.get("left_out"):
        print(
            f"  left out: {_reasons(loaded['left_out'])}; --features to use them",
            file=sys.stderr,
        )
    sys.stderr.flush()


#: Up to this many data values, native thread pools run one thread: small fits
#: gain nothing from threads and wait long on a busy machine.
_SMALL_DATA = 2_000_000


def _thread_limits(X: Any) -> Any:
    """One native thread (OpenMP, BLAS) for small data; unlimited otherwise."""
    if X.shape[0] * max(X.shape[1], 1) > _SMALL_DATA:
        return contextlib.nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)


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
    validator: Any,
    loaded: dict[str, Any],
    path: str,
    from_repeats: dict[str, Any] | None = None,
) -> None:
    """All results as JSON, to ``path`` (``-``: standard output)."""
    from .. import __version__
    from ..model_selection._report import _json_ready

    payload = validator.to_dict()
    if from_repeats:
        payload["model_or_measurements"]["repeats"] = _json_ready(
            {method: r.to_dict() for method, r in from_repeats.items()}
        )
    payload["data"] = loaded["source"]
    payload["features"] = loaded["features"]
    payload["left_out"] = loaded.get("left_out", {})
    payload["model"] = loaded["model"].removeprefix("model: ")
    payload["sklearn_noisy_version"] = __version__
    text = json.dumps(payload, indent=2, allow_nan=False) + "\n"
    if path == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def _check_metrics(option: str) -> list[str]:
    """The names of ``--metrics``, each a metric or a scorer (checked before work)."""
    from ..metrics import get_metric_names, get_noisy_scorer_names

    names = _split(option)
    if not names:
        raise CLIError("--metrics: give at least one metric name")
    metrics = get_metric_names()
    scorers = get_noisy_scorer_names()
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
    import matplotlib  # there: _check_options looked

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..model_selection import NoisyCVDisplay
    from ..model_selection._report import metric_label

    keys = list(validator.scorers_)
    figure, axes = plt.subplots(
        len(keys),
        1,
        figsize=(6.4, 2.4 * len(keys) + 1.4),
        squeeze=False,
        layout="constrained",
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


def _one_line(message: str) -> str:
    return " ".join(str(message).split())


def _fold_of_caller() -> int | None:
    """The fold (1, 2, ...) whose fit or scoring is running in this thread, if any."""
    from ..model_selection._validation import _fit_and_score_fold

    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is _fit_and_score_fold.__code__:
            return frame.f_locals["split_progress"][0] + 1
        frame = frame.f_back
    return None


class _WarningPrinter:
    """The command line's ``warnings.showwarning``: one line per warning.

    A warning of a fold is held; :meth:`flush` prints it once per message with
    the folds named: ``fold 2, 4: ConvergenceWarning: ...``.
    """

    def __init__(self) -> None:
        self.held: dict[str, list[int]] = {}

    def __call__(
        self, message: Any, category: type, filename: str, lineno: int,
        file: Any = None, line: Any = None,
    ) -> None:  # fmt: skip
        text = f"{category.__name__}: {_one_line(message)}"
        fold = _fold_of_caller()
        if fold is None:
            print(f"{PROG}: warning: {text}", file=sys.stderr)
        elif fold not in self.held.setdefault(text, []):
            self.held[text].append(fold)

    def flush(self) -> None:
        for text, folds in self.held.items():
            names = ", ".join(str(fold) for fold in sorted(folds))
            print(f"{PROG}: warning: fold {names}: {text}", file=sys.stderr)
        self.held.clear()
        sys.stderr.flush()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 success, 2 user error).

    Parameters
    ----------
    argv : sequence of str, default=None
        Arguments without the program name; ``None`` reads ``sys.argv[1:]``.

    Returns
    -------
    code : int
        0 on success, 2 for an error in the input or the options (reported as
        one line on stderr), 1 for an unexpected internal error, 130 when
        interrupted.
    """
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or an argparse error
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    previous = warnings.showwarning
    warnings.showwarning = printer = _WarningPrinter()
    try:
        return {"evaluate": _evaluate, "plan": _plan}[args.command](args, printer)
    except (
        CLIError,
        ValueError,
        TypeError,
        LookupError,
        OSError,
        ImportError,
        ArithmeticError,
    ) as exc:  # the input's or the options' error: one line, exit code 2
        kind = "" if isinstance(exc, CLIError) else f"{type(exc).__name__}: "
        print(f"{PROG} {args.command}: error: {kind}{_one_line(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # never a traceback
        print(
            f"{PROG} {args.command}: internal error: {type(exc).__name__}: "
            f"{_one_line(exc)}",
            file=sys.stderr,
        )
        return 1
    finally:
        warnings.showwarning = previous
        sys.stderr.flush()
