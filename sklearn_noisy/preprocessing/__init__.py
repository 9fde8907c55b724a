"""Preparing labels for noise-aware evaluation: repeats and their reliability."""

from ._repeats import RepeatSummary, repeat_reliability, summarize_repeats

__all__ = ["RepeatSummary", "repeat_reliability", "summarize_repeats"]
