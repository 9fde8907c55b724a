"""Shared docstring blocks, substituted by :func:`fill_doc` (``python -OO`` safe)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def _substitute(doc: str, blocks: dict[str, str]) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group(2)
        if name not in blocks:
            return match.group(0)
        return blocks[name].rstrip("\n")

    doc = re.sub(r"(?m)^([ \t]*)\{(\w+)\}[ \t]*$", replace, doc)
    missing = [name for name in blocks if "{" + name + "}" in doc]
    if missing:
        raise ValueError(f"Placeholders {missing} must stand alone on a line.")
    return doc


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

    def decorate(function: F) -> F:
        if function.__doc__ is not None:
            function.__doc__ = _substitute(function.__doc__, blocks)
        return function

    return decorate
