"""Shared docstring blocks: one substitution mechanism that survives ``python -OO``.

A docstring marks a shared block with a placeholder line holding ``{name}``
(indented like the text around it, which keeps formatters content) and the
function is decorated with ``@fill_doc(name=BLOCK)``. Under ``python -OO``
docstrings are ``None`` and the decorator leaves them so.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["fill_doc"]

F = TypeVar("F", bound=Callable[..., Any])


def _substitute(doc: str, blocks: dict[str, str]) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group(2)
        if name not in blocks:
            return match.group(0)
        return blocks[name].rstrip("\n")

    # A placeholder alone on its line (the block carries its own indentation)
    # or inline.
    doc = re.sub(r"(?m)^([ \t]*)\{(\w+)\}[ \t]*$", replace, doc)
    missing = [name for name in blocks if "{" + name + "}" in doc]
    if missing:
        raise ValueError(f"Placeholders {missing} must stand alone on a line.")
    return doc


def fill_doc(**blocks: str) -> Callable[[F], F]:
    """Decorator: replace each placeholder line ``{name}`` by ``blocks[name]``.

    Every block is inserted as written (its lines carry their indentation). A
    placeholder without a block is left as it is; under ``python -OO`` the
    docstring is ``None`` and nothing is done.

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
