"""The package's warnings: where they point, and leaving them out in one thread.

No function of the package changes the process's warning filters, which
:func:`warnings.catch_warnings` swaps for every thread at once. Repeated
internal calls (bootstrap resamples) leave out the package's own warnings
(:func:`warn`) in their own context with :func:`quiet`.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import warnings
from collections.abc import Iterator

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Whether the package's own warnings are left out, in this context only.
_QUIET: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "sklearn_noisy_quiet", default=False
)


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """:func:`warnings.warn` at the user's line, unless inside :func:`quiet`.

    The ``stacklevel`` is that of the first caller outside :mod:`sklearn_noisy`.
    """
    if _QUIET.get():
        return
    frame = sys._getframe(1)  # the caller of warn: stacklevel 2
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Leave out the package's own warnings (:func:`warn`) in this context only.

    Examples
    --------
    >>> from sklearn_noisy.utils._warnings import quiet, warn
    >>> with quiet():
    ...     warn("not shown")
    """
    token = _QUIET.set(True)
    try:
        yield
    finally:
        _QUIET.reset(token)
