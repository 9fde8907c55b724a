"""Engines of the confusion-matrix (count) metrics."""
