"""The engines: generic consumers of the metric definitions."""
