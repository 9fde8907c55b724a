"""Progress of the folds: scikit-learn's ``[CV k/K] END ...`` line per fold, with
the time left, and a live bar on a terminal.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from ._report import _std

__all__ = ["FoldProgress"]

_BAR_WIDTH = 24


def format_seconds(seconds: float) -> str:
    """``"0.4 s"``, ``"12 s"``, ``"3 min 05 s"``, ``"1 h 02 min"``."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def _end_message(result: dict, split_progress: tuple[int, int]) -> str:
    """One progress line per finished fold, like scikit-learn's ``[CV] END``."""
    head = f"[CV {split_progress[0] + 1}/{split_progress[1]}] END"
    if result["fit_error"] is not None:
        body = " fit failed;"
    else:
        parts = []
        for key, score in result["scores"].items():
            if score is None:
                parts.append(f" {key}: failed")
            else:
                name = result["leads"].get(key, "")
                lead = result["estimates"].get(key, {}).get(name)
                score, name = (score, score.estimand) if lead is None else (lead, name)
                parts.append(
                    f" {key}: {name} {score.expected:.4g}±{_std(score.variance):.2g}"
                )
        body = ";".join(parts) + ";"
    total = result["fit_time"] + result["score_time"]
    return f"{head}{body} n_test={result['n_test']}, total time={total:.3g}s"


class FoldProgress:
    """Report finished folds to ``stream`` (standard output by default).

    Parameters
    ----------
    n_folds : int
        The number of folds to run.
    stream : file-like, default=None
        Where to write; ``sys.stdout`` at the time of each write by default.
    """

    def __init__(self, n_folds: int, stream: TextIO | None = None) -> None:
        self.n_folds = n_folds
        self.stream = stream
        self.done = 0
        self.start = time.perf_counter()
        self._bar_shown = False

    def update(self, result: dict[str, Any]) -> None:
        """Print the line of a finished fold (``result`` of one fold)."""
        self.done += 1  # the folds come back in order: this is fold self.done
        elapsed = time.perf_counter() - self.start
        left = self.n_folds - self.done
        timing = format_seconds(elapsed)
        if left:
            timing += f", about {format_seconds(elapsed / self.done * left)} left"
        line = _end_message(result, (self.done - 1, self.n_folds))
        line += f"; elapsed {timing}\n"
        out = sys.stdout if self.stream is None else self.stream
        isatty = getattr(out, "isatty", None)
        if isatty and isatty():
            filled = round(_BAR_WIDTH * self.done / self.n_folds)
            bar = "#" * filled + "." * (_BAR_WIDTH - filled)
            line = f"\r\033[K{line}[{bar}] {self.done}/{self.n_folds} folds, {timing}"
            self._bar_shown = True
        out.write(line)
        out.flush()

    def close(self) -> None:
        """Clear the live bar, if one is shown."""
        if self._bar_shown:
            out = sys.stdout if self.stream is None else self.stream
            out.write("\r\033[K")
            out.flush()
            self._bar_shown = False
