"""Preparing labels for noise-aware evaluation: repeats and their reliability."""

from ._batches import BatchOffsetSummary, summarize_batches
from ._repeats import RepeatSummary, repeat_reliability, summarize_repeats

__all__ = [
    "BatchOffsetSummary",
    "RepeatSummary",
    "repeat_reliability",
    "summarize_batches",
    "summarize_repeats",
]
