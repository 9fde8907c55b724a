"""Shared by the README and docs tests: snippets, their shown output, the real one.

A page shows the output of a snippet in a ``text`` block right after it (a
fenced block in Markdown, a ``.. code-block:: text`` in rst). A line holding
only ``...`` in a shown output stands for lines left out; every other line must
be printed, in that order, exactly, except for elapsed times, which vary.
"""

from __future__ import annotations

import functools
import itertools
import os
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ELISION = "..."

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
_RST_BLOCK = re.compile(r"^\.\. code-block::\s*(\w+)\s*$")
_OPTION = re.compile(r"^\s+:[\w-]+:")
# Wall-clock durations: "total time=0.0143s", "elapsed:    0.1s", "1.2 s".
_DURATION = re.compile(r"\b\d+(\.\d+)?\s?(s|ms|min)\b")


def markdown_blocks(text: str) -> list[tuple[str, str]]:
    """``(language, body)`` of every fenced block of a Markdown text, in order."""
    return [(match.group(1), match.group(2)) for match in _FENCE.finditer(text)]


def rst_blocks(text: str) -> list[tuple[str, str]]:
    """``(language, body)`` of every ``.. code-block::`` of an rst text, in order.

    The body is dedented; directive options (``:caption:``) are left out.
    """
    blocks = []
    lines = text.splitlines()
    for number, line in enumerate(lines):
        match = _RST_BLOCK.match(line)
        if not match:
            continue
        body = []
        for following in lines[number + 1 :]:
            if following.strip() and not following.startswith((" ", "\t")):
                break
            if not body and _OPTION.match(following):
                continue
            body.append(following)
        blocks.append((match.group(1), textwrap.dedent("\n".join(body)).strip("\n")))
    return blocks


def outputs(blocks: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """``(language, snippet, shown output)`` for every block followed by ``text``."""
    return [
        (language, body, shown)
        for (language, body), (next_language, shown) in itertools.pairwise(blocks)
        if next_language == "text" and language != "text"
    ]


def _normalise(text: str) -> list[str]:
    return [_DURATION.sub("<time>", line.rstrip()) for line in text.splitlines()]


def mismatch(shown: str, printed: str) -> str | None:
    """``None`` when ``printed`` has the lines of ``shown``, else the reason.

    Each run of lines between ``...`` lines must appear in ``printed`` as
    consecutive lines, the runs in order; without a leading (trailing) ``...``
    the first (last) run must start (end) the output. Blank lines at either end
    are ignored.
    """
    want = _normalise(shown.strip("\n"))
    have = _normalise(printed.strip("\n"))
    runs: list[list[str]] = [[]]
    for line in want:
        if line.strip() == ELISION:
            runs.append([])
        else:
            runs[-1].append(line)
    anchored_start = bool(runs[0])
    anchored_end = bool(runs[-1])
    position = 0
    for index, run in enumerate(runs):
        if not run:
            continue
        if index == 0 and anchored_start:
            starts = [0] if have[: len(run)] == run else []
        else:
            starts = [
                start
                for start in range(position, len(have) - len(run) + 1)
                if have[start : start + len(run)] == run
            ][:1]
        if not starts:
            return _first_difference(run, have, position, anchored=index == 0)
        position = starts[0] + len(run)
    if anchored_end and position != len(have):
        return f"the output goes on after the shown lines: {have[position:]}"
    return None


def _first_difference(
    run: list[str], have: list[str], position: int, *, anchored: bool
) -> str:
    """The first shown line of ``run`` that the output does not continue with."""
    for start in [position] if anchored else range(position, len(have)):
        if anchored or have[start] == run[0]:
            for shown, printed in zip(run, have[start:], strict=False):
                if shown != printed:
                    return f"shown {shown!r}\nprinted {printed!r}"
            return f"the output ends before the shown line {run[len(have) - start]!r}"
    return f"the shown line {run[0]!r} is not printed (after the lines before it)"


def run_python(snippet: str) -> str:
    """What a snippet prints when run as a script, from the repository root."""
    completed = subprocess.run(
        [sys.executable, "-c", snippet],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env=_environment(),
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    return completed.stdout


def run_command(snippet: str) -> str:
    """Standard output of the ``sklearn-noisy`` command that ends a shell snippet.

    The snippet's set-up (a virtual environment, ``pip install .``) is what the
    test-suite's own environment already is; the command itself runs as
    ``python -m sklearn_noisy.cli`` with the same arguments.
    """
    command = snippet.strip().splitlines()[-1].split("&&")[-1]
    words = shlex.split(command)
    assert Path(words[0]).name == "sklearn-noisy", snippet
    return _command_output(tuple(words[1:]))


@functools.cache
def _command_output(arguments: tuple[str, ...]) -> str:
    """Standard output of ``python -m sklearn_noisy.cli *arguments``, run once.

    The README and the getting-started page show the same command: one run per
    test session serves both (its output only varies in elapsed times, which
    the comparison ignores).
    """
    completed = subprocess.run(
        [sys.executable, "-m", "sklearn_noisy.cli", *arguments],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env=_environment(),
    )
    assert completed.returncode == 0, completed.stderr[-4000:]
    return completed.stdout


def _environment() -> dict:
    path = os.environ.get("PYTHONPATH", "")
    return {
        **os.environ,
        "MPLBACKEND": "Agg",
        "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), path) if p),
    }
