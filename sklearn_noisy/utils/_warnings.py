"""Where a warning points: the first frame outside the package."""

from __future__ import annotations

import os
import sys

__all__ = ["find_stack_level"]

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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
