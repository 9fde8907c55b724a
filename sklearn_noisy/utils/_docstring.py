"""Shared docstring blocks, substituted by :func:`fill_doc` (``python -OO`` safe)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def fill_doc(**blocks: str) -> Callable[[F], F]:
    """Decorator: replace each placeholder line ``{name}`` by ``blocks[name]``.

    A block is inserted as written; a placeholder without a block is left as is.

    Examples
    --------
    >>> @fill_doc(params="    x : int\\n        A number.")
    ... def f(x):
    ...     '''Do it.
    ...
    ...     Parameters
    ...     ----------
    ...     {params}
    ...     '''
    >>> print(f.__doc__.splitlines()[4])
        x : int
    """

    def replace(match: re.Match[str]) -> str:
        return blocks.get(match.group(1), match.group(0)).rstrip("\n")

    def decorate(function: F) -> F:
        if function.__doc__ is not None:
            doc = re.sub(r"(?m)^[ \t]*\{(\w+)\}[ \t]*$", replace, function.__doc__)
            missing = [name for name in blocks if "{" + name + "}" in doc]
            if missing:
                raise ValueError(f"Placeholders {missing} must stand alone on a line.")
            function.__doc__ = doc
        return function

    return decorate
