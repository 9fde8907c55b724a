"""Displays of the metrics (scikit-learn's Display API)."""
