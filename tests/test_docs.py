"""The documentation: API reference completeness, the rst examples, the build.

The full Sphinx build (with the examples gallery, which executes every example)
runs with ``-W``: any warning, a broken cross-reference or a failing example
fails the test. It needs the ``docs`` extra (sphinx, numpydoc,
pydata-sphinx-theme, sphinx-gallery, matplotlib, pandas).
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import sklearn_noisy

DOCS = Path(__file__).resolve().parents[1] / "docs"
API_RST = DOCS / "api.rst"

_DIRECTIVE = re.compile(r"^\.\. (\S+)::\s*(\S*)")
_OPTION = re.compile(r"^\s+:[\w-]+:")


def _public_modules() -> list:
    """``sklearn_noisy`` and every public subpackage or module with ``__all__``."""
    modules = [sklearn_noisy]
    for info in pkgutil.walk_packages(sklearn_noisy.__path__, "sklearn_noisy."):
        parts = info.name.split(".")[1:]
        if any(part.startswith("_") for part in parts) or "tests" in parts:
            continue
        module = importlib.import_module(info.name)
        if hasattr(module, "__all__"):
            modules.append(module)
    return modules


def _documented_names(text: str) -> list[str]:
    """Fully qualified names listed in the autosummary tables of ``api.rst``."""
    names: list[str] = []
    module = "sklearn_noisy"
    in_autosummary = False
    for line in text.splitlines():
        match = _DIRECTIVE.match(line)
        if match:
            directive, argument = match.groups()
            in_autosummary = directive == "autosummary"
            if directive in ("currentmodule", "module", "py:currentmodule"):
                module = argument
            continue
        if not in_autosummary or not line.strip() or _OPTION.match(line):
            continue
        if not line.startswith((" ", "\t")):
            in_autosummary = False
            continue
        entry = line.strip().lstrip("~")
        names.append(
            entry if entry.startswith("sklearn_noisy.") else f"{module}.{entry}"
        )
    return names


def _resolve(qualified_name: str) -> object:
    module_name, _, attribute = qualified_name.rpartition(".")
    return getattr(importlib.import_module(module_name), attribute)


def test_documented_names_parser():
    text = """
.. currentmodule:: sklearn_noisy.metrics

.. autosummary::
   :toctree: generated/

   expected_mean_squared_error
   ~sklearn_noisy.NoisyScore

Some prose.
   indented prose is not an entry
"""
    assert _documented_names(text) == [
        "sklearn_noisy.metrics.expected_mean_squared_error",
        "sklearn_noisy.NoisyScore",
    ]


def test_api_reference_lists_every_public_name():
    documented = _documented_names(API_RST.read_text(encoding="utf-8"))
    assert documented, "no autosummary entries found in docs/api.rst"
    duplicates = sorted({name for name in documented if documented.count(name) > 1})
    assert not duplicates, f"listed twice in docs/api.rst: {duplicates}"
    documented_objects = {}
    for name in documented:
        try:
            documented_objects[name] = _resolve(name)
        except (ImportError, AttributeError) as exc:
            pytest.fail(f"docs/api.rst lists {name}, which does not import: {exc}")
    missing = []
    for module in _public_modules():
        for name in module.__all__:
            if name.startswith("__"):  # __version__
                continue
            obj = getattr(module, name)
            found = any(
                qualified.rpartition(".")[2] == name and documented is obj
                for qualified, documented in documented_objects.items()
            )
            if not found:
                missing.append(f"{module.__name__}.{name}")
    assert not missing, (
        "public names missing from docs/api.rst (add them to an autosummary "
        f"table): {missing}"
    )


@pytest.mark.parametrize("page", ["index.rst", "getting_started.rst"])
def test_rst_code_examples(page):
    """The ``>>>`` examples of the landing pages print what they say."""
    result = doctest.testfile(
        str(DOCS / page),
        module_relative=False,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        verbose=False,
        report=False,
    )
    assert result.attempted > 0
    assert result.failed == 0, f"{result.failed} doctest failure(s) in docs/{page}"


def test_sphinx_build_without_warnings(tmp_path):
    """``python -m sphinx -W -b html docs <out>``, examples included.

    The sources are copied to a temporary directory without the generated
    folders, so that every example is executed afresh (sphinx-gallery skips
    examples whose output it already has).
    """
    pytest.importorskip("sphinx", reason="the docs build needs the 'docs' extra")
    for module in ("numpydoc", "pydata_sphinx_theme", "sphinx_gallery", "matplotlib"):
        pytest.importorskip(module, reason="the docs build needs the 'docs' extra")
    source = tmp_path / "docs"
    shutil.copytree(
        DOCS,
        source,
        ignore=shutil.ignore_patterns(
            "_build", "auto_examples", "generated", "sg_execution_times.rst"
        ),
    )
    out = tmp_path / "html"
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-q",
            "-b",
            "html",
            str(source),
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**__import__("os").environ, "MPLBACKEND": "Agg"},
    )
    assert completed.returncode == 0, (
        "the documentation build failed (warnings are errors):\n"
        + completed.stderr[-8000:]
    )
    assert (out / "index.html").is_file()
    assert (out / "api.html").is_file()
    assert (out / "user_guide" / "errata.html").is_file()
