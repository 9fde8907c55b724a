"""Engines of the regression losses."""
