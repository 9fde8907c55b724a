"""The option groups that ``evaluate`` and ``plan`` share, and their checks.

Every option is described in the user guide (:ref:`command_line`); the help
strings here are one line each.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import textwrap
from typing import Any

from ..utils._validation import TEST_SET_SAMPLING
from ._data import DATASETS, CLIError

#: ``--test-set-sampling``'s words for the values of ``test_set_sampling=``, and
#: the word of the package's default.
SAMPLING_OPTIONS = {"auto": "auto", "true": True, "bootstrap": "bootstrap"}
SAMPLING_OPTIONS["false"] = False
SAMPLING_DEFAULT = {v: k for k, v in SAMPLING_OPTIONS.items()}[TEST_SET_SAMPLING]

#: The seeds numpy accepts: 0 to 2**32 - 1.
_MAX_SEED = 2**32 - 1


def add_command(
    commands: Any, name: str, summary: str, epilog: str, titles: tuple[str, str]
) -> tuple[Any, Any, Any]:
    """A subcommand's parser (``summary``: its help line) with the shared options:
    its groups of data options, model options and output (``titles``: the last
    two groups' titles)."""
    parser = commands.add_parser(
        name,
        help=summary,
        description=textwrap.fill(summary[0].upper() + summary[1:] + ".", 79),
        epilog=epilog + "\nAll options: the user guide, 'The command line'.\n",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    data = parser.add_argument_group("data (default: the embedded wheat protein)")
    model, output = (parser.add_argument_group(title) for title in titles)
    data.add_argument("--dataset", choices=DATASETS, help="embedded data, no --data")
    for option, metavar, help_text in (
        ("--data", "CSV", "CSV file with a header row"),
        ("--target", "COL", "column of the labels"),
        ("--sigma", "COL|NUMBER", "standard error of each regression label"),
        ("--sigma-dof", "COL|NUMBER", "with --sigma: its degrees of freedom"),
        ("--groups", "COL", "batch of each label; the folds keep batches whole"),
        ("--sigma-shared", "COL|NUMBER", "with --groups: SD of a batch's offset"),
        ("--sigma-shared-dof", "NUMBER", "with --sigma-shared: its degrees of freedom"),
        ("--reference-readings", "CSV", "with --groups: readings giving sigma_shared"),
        ("--q", "COL|NUMBER", "flip probability of each class label"),
        ("--repeats", "COL,COL,...", "repeated readings; the label is their mean"),
        ("--features", "COL,COL,...", "feature columns (default: the others)"),
        ("--drop", "COL,COL,...", "columns left out of the default features"),
    ):
        data.add_argument(option, metavar=metavar, help=help_text)
    data.add_argument(
        "--repeat-sigma",
        choices=("sem", "std"),
        default="sem",
        help="with --repeats: standard error (default) or SD of one reading",
    )
    data.add_argument(
        "--instrument-sigma",
        type=float,
        metavar="NUMBER",
        help="with --repeats: SD of one reading, for samples with too few",
    )
    data.add_argument(
        "--min-repeats",
        type=int,
        metavar="N",
        help="with --repeats: fewest readings for a sample's own sigma (2)",
    )
    model.add_argument(
        "--estimator",
        metavar="dotted.path.Class",
        help="estimator class, e.g. sklearn.linear_model.Ridge",
    )
    model.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="name=value",
        help="estimator parameter, a Python literal or a string (repeatable)",
    )
    for option, default, help_text in (
        ("--cv", 5, "folds (5)"),
        ("--n-jobs", None, "folds in parallel"),
        ("--seed", 0, "seed of folds and model (0)"),
    ):
        model.add_argument(
            option, type=int, default=default, metavar="N", help=help_text
        )
    output.add_argument(
        "--quiet", action="store_true", help="no progress lines on stderr"
    )
    output.add_argument(
        "--verbose", action="store_true", help="also joblib's own progress lines"
    )
    return data, model, output


def check_options(args: argparse.Namespace) -> None:
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
