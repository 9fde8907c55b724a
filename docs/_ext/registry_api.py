"""Sphinx extension: the API reference lists the metric registry's functions.

In ``api.rst``, a line ``.. registry-functions: sigma`` (or ``flips``) inside
an ``autosummary`` table becomes one entry per ``expected_*`` function of the
registry's metrics of that noise kind, in the registry's order, when the page
is read. A metric added to the registry is then listed without an edit here
or in ``api.rst``; ``tests/test_docs.py`` checks the expanded page.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

from sklearn_noisy.metrics import get_metric_info, get_metric_names

_MARKER = re.compile(r"^([ \t]*)\.\. registry-functions: (\w+)[ \t]*$", re.MULTILINE)


def expand(text: str) -> str:
    """``text`` with every registry marker replaced by the function names."""

    def entries(match: re.Match) -> str:
        indent, noise = match.groups()
        return "\n".join(
            indent + get_metric_info(name).function.__name__
            for name in get_metric_names(noise=noise)
        )

    return _MARKER.sub(entries, text)


def _source_read(app: Any, docname: str, source: list[str]) -> None:
    if docname == "api":
        source[0] = expand(source[0])


def _generate_stubs(app: Any) -> None:
    """The autosummary pages of the registry's functions.

    autosummary finds the entries it generates pages for in the source files
    as they are on disk, before the markers are expanded: the registry's
    entries get theirs here, from a page that lists them.
    """
    from sphinx.ext.autosummary.generate import generate_autosummary_docs

    names = [get_metric_info(name).function.__name__ for name in get_metric_names()]
    page = (
        ".. currentmodule:: sklearn_noisy.metrics\n\n"
        ".. autosummary::\n   :toctree: generated/\n\n"
        + "".join(f"   {name}\n" for name in names)
    )
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp, "registry_functions.rst")
        source.write_text(page, encoding="utf-8")
        generate_autosummary_docs(
            [str(source)],
            output_dir=Path(app.srcdir, "generated"),
            app=app,
            imported_members=app.config.autosummary_imported_members,
            overwrite=app.config.autosummary_generate_overwrite,
        )


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", _generate_stubs)
    app.connect("source-read", _source_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
