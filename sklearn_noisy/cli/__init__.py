"""The ``sklearn-noisy`` command line (also ``python -m sklearn_noisy``).

Errors in the input print one line on stderr and exit with code 2.
"""

from ._main import main

__all__ = ["main"]
