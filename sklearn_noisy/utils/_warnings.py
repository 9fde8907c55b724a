"""The package's warnings: where they point, and leaving them out in one thread.

No function of the package changes the process's warning filters
(:func:`warnings.catch_warnings` swaps them for every thread at once, so a
library that uses it loses or silences the warnings of other threads). The
package raises its own warnings through :func:`warn`, which a repeated
internal call (a bootstrap resample, the pooled estimate recomputed for its
sampling variance) turns off in its own thread and context with
:func:`quiet`; the calls into scikit-learn and SciPy are made so that they do
not warn.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import warnings
from collections.abc import Iterator

__all__ = ["find_stack_level", "quiet", "warn"]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Whether the package's own warnings are left out, in this context only.
_QUIET: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "sklearn_noisy_quiet", default=False
)


def find_stack_level() -> int:
    """The ``stacklevel`` of the first caller outside :mod:`sklearn_noisy`.

    Passed to :func:`warnings.warn`, it makes the warning point at the user's
    line however deep in the package it is raised and whatever wraps the
    public function (the ``test_set_sampling`` decorator adds a frame), as
    pandas does.

    Examples
    --------
    >>> from sklearn_noisy.utils._warnings import find_stack_level
    >>> find_stack_level() >= 1
    True
    """
    frame = sys._getframe(1)  # the caller of this function: level 1
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """:func:`warnings.warn` at the user's line, unless inside :func:`quiet`.

    Parameters
    ----------
    message : str
        The warning's text.
    category : type of Warning, default=UserWarning
        Its class.

    Examples
    --------
    >>> import warnings
    >>> from sklearn_noisy.utils._warnings import quiet, warn
    >>> with quiet():
    ...     warn("never raised")  # nothing is shown
    """
    if not _QUIET.get():
        warnings.warn(message, category, stacklevel=find_stack_level())


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Leave out the package's own warnings (:func:`warn`) inside the block.

    For internal calls whose warnings the outer call has raised already. It
    sets a context variable, so other threads (and asyncio tasks) still
    warn, and the warning filters are not touched.

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
