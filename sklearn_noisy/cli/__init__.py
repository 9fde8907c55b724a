"""The ``sklearn-noisy`` command line (also ``python -m sklearn_noisy``).

``sklearn-noisy evaluate`` cross-validates a model and prints, per fold and
pooled, each metric's expected value and its standard deviation over the label
measurement error. With no options it runs on the embedded oxygen-sensor
dataset; ``--data`` reads a CSV file.

Errors in the input (a missing file, an unknown column, non-numeric data, an
unknown estimator, a bad option) print one line on stderr and exit with code 2.
"""

from ._main import main

__all__ = ["main"]
