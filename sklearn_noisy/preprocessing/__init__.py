"""Preparing labels for noise-aware evaluation: repeated measurements."""

from ._repeats import RepeatSummary, summarize_repeats

__all__ = ["RepeatSummary", "summarize_repeats"]
