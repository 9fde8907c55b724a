"""Preparing labels for noise-aware evaluation: repeated measurements."""

from ._batches import BatchOffsetSummary, summarize_batches
from ._repeats import RepeatSummary, summarize_repeats

__all__ = [
    "BatchOffsetSummary",
    "RepeatSummary",
    "summarize_batches",
    "summarize_repeats",
]
