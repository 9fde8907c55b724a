"""Utilities shared across sklearn-noisy (input validation)."""
