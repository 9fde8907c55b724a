"""Noise-aware cross-validation and paired model comparison."""

__all__: list[str] = []
