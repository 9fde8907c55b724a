"""The ``sklearn-noisy`` command: its parser, one module per subcommand, and
the handling of errors (one line, exit code 2) and warnings."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from ._data import CLIError
from ._evaluate import add_parser as _add_evaluate
from ._evaluate import run as _evaluate
from ._model import PROG
from ._plan import add_parser as _add_plan
from ._plan import run as _plan

#: The subcommands: the function that adds each one's parser, and its run.
_COMMANDS = {"evaluate": (_add_evaluate, _evaluate), "plan": (_add_plan, _plan)}

#: The exit code after the reader of standard output went away (``| head``):
#: 128 + SIGPIPE, what a shell reports for a tool that SIGPIPE ended, so that
#: ``set -o pipefail`` sees the output was cut short, as with ``cat`` or ``grep``.
_BROKEN_PIPE = 141


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line on stderr (exit code 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _one_line(message: str) -> str:
    return " ".join(str(message).split())


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
        from ..model_selection._validation import CURRENT_FOLD

        text = f"{category.__name__}: {_one_line(message)}"
        fold = CURRENT_FOLD.get()  # the fold whose fit or scoring runs, if any
        if fold is None:
            print(f"{PROG}: warning: {text}", file=sys.stderr)
            return
        fold += 1
        if fold not in self.held.setdefault(text, []):
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
        interrupted, 141 when the reader of standard output went away.
    """
    try:
        return _main(argv)
    except BrokenPipeError:
        # Quiet, as Unix tools are; stdout now points at devnull, so that the
        # interpreter's last flush of it does not fail once more.
        with contextlib.suppress(OSError, ValueError):  # no file descriptor
            stdout = sys.stdout.fileno()
            os.dup2(os.open(os.devnull, os.O_WRONLY), stdout)
        return _BROKEN_PIPE


def _main(argv: Sequence[str] | None) -> int:
    from .. import __version__

    parser = _Parser(
        prog=PROG,
        description="Noise-aware evaluation of scikit-learn models: expected "
        "metrics and their variance under known label measurement error.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=_Parser, required=True
    )
    for add_parser, _ in _COMMANDS.values():
        add_parser(commands)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or an argparse error
        return exc.code
    previous = warnings.showwarning
    warnings.showwarning = printer = _WarningPrinter()
    try:
        return _COMMANDS[args.command][1](args, printer)
    except BrokenPipeError:
        raise
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
