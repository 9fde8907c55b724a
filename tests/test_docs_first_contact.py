"""The checker of shown outputs, and the offline-docs configuration.

The checker (``tests/_first_contact.py``) compares what the README and the
getting-started page show with what their snippets print; these tests make
sure it can fail. The configuration tests check that ``docs/conf.py`` links out
only to inventories it can read, and that ``docs/_ext/noisy_links.py`` turns
names and arXiv ids into links.
"""

from __future__ import annotations

import re
import runpy
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from _first_contact import markdown_blocks, mismatch, outputs, rst_blocks

DOCS = Path(__file__).resolve().parents[1] / "docs"
sys.path.insert(0, str(DOCS / "_ext"))

try:  # the extension is built on Sphinx: the 'docs' extra
    import noisy_links
except ImportError:  # ``.[test]`` alone: its tests skip
    noisy_links = None

PRINTED = "a\nb\nc\nd\n"


@pytest.mark.parametrize(
    "shown",
    [
        "a\nb\nc\nd",
        "a\nb\n...",
        "...\nc\nd",
        "a\n...\nd",
        "...\nb\nc\n...",
        "a\nb\nc\nd\n",
    ],
)
def test_mismatch_accepts_the_printed_lines(shown):
    assert mismatch(shown, PRINTED) is None


@pytest.mark.parametrize(
    "shown",
    ["a\nb\nc", "b\nc\nd", "a\nc\n...", "...\nd\nc", "a\nb\nc\nd\ne", "a\nB\n...", "x"],
)
def test_mismatch_rejects_other_lines(shown):
    assert mismatch(shown, PRINTED) is not None


def test_mismatch_tolerates_only_elapsed_times():
    printed = "[CV 1/5] END n_test=60, total time=0.0143s\nelapsed: 1.2 s\n"
    assert (
        mismatch("[CV 1/5] END n_test=60, total time=0.5s\nelapsed: 30 s", printed)
        is None
    )
    assert mismatch("[CV 1/5] END n_test=61, total time=0.0143s\n...", printed)


def test_blocks_are_paired_with_their_outputs():
    markdown = "x\n```python\nprint(1)\n```\n\n```text\n1\n```\n```bash\nls\n```\n"
    assert outputs(markdown_blocks(markdown)) == [("python", "print(1)\n", "1\n")]
    rst = (
        ".. code-block:: bash\n   :caption: c\n\n   sklearn-noisy evaluate\n\n"
        "text\n\n.. code-block:: text\n\n   out\n     indented\n"
    )
    assert outputs(rst_blocks(rst)) == [
        ("bash", "sklearn-noisy evaluate", "out\n  indented")
    ]


# -- docs/conf.py: intersphinx only where an inventory can be read -----------


def _conf(monkeypatch, setting):
    if setting is None:
        monkeypatch.delenv("SKLEARN_NOISY_DOCS_INTERSPHINX", raising=False)
    else:
        monkeypatch.setenv("SKLEARN_NOISY_DOCS_INTERSPHINX", setting)
    return runpy.run_path(str(DOCS / "conf.py"))


def test_conf_offline_setting_has_no_remote_inventory(monkeypatch):
    namespace = _conf(monkeypatch, "0")
    assert all(
        location is not None
        for _, location in namespace["intersphinx_mapping"].values()
    )
    assert "sphinx-mathjax-offline" in namespace["extensions"]
    assert "sphinx_copybutton" in namespace["extensions"]
    assert namespace["copybutton_prompt_is_regexp"]


def test_conf_links_every_project_when_told_online(monkeypatch):
    namespace = _conf(monkeypatch, "1")
    mapping = namespace["intersphinx_mapping"]
    assert set(mapping) == {"python", "numpy", "scipy", "sklearn"}
    assert mapping["sklearn"][0] == "https://scikit-learn.org/stable/"


def test_conf_probes_hosts_and_keeps_cached_inventories(monkeypatch, tmp_path):
    namespace = _conf(monkeypatch, "0")
    projects = namespace["intersphinx_projects"]
    reachable = {"scikit-learn.org"}
    monkeypatch.setitem(
        projects.__globals__,
        "_reachable",
        lambda url, timeout: any(host in url for host in reachable),
    )
    (tmp_path / "numpy.inv").write_bytes(b"")
    mapping = projects(setting=None, cache=tmp_path)
    assert mapping == {
        "numpy": ("https://numpy.org/doc/stable/", str(tmp_path / "numpy.inv")),
        "sklearn": ("https://scikit-learn.org/stable/", None),
    }
    reachable.clear()
    assert projects(setting=None, cache=tmp_path) == {
        "numpy": ("https://numpy.org/doc/stable/", str(tmp_path / "numpy.inv"))
    }


def test_reachable_answers_quickly_for_a_closed_port():
    namespace = runpy.run_path(str(DOCS / "conf.py"))
    assert namespace["_reachable"]("https://127.0.0.1:9/", 1.0) is False


def test_copybutton_prompt_strips_prompts():

    namespace = runpy.run_path(str(DOCS / "conf.py"))
    prompt = re.compile(namespace["copybutton_prompt_text"])
    for line, code in [(">>> x = 1", "x = 1"), ("... y = 2", "y = 2"), ("$ ls", "ls")]:
        match = prompt.match(line)
        assert match and line[match.end() :] == code
    assert prompt.match("0.725") is None


# -- docs/_ext/noisy_links.py ------------------------------------------------


def _inventory(entries: list[tuple[str, str, str]], project: str) -> bytes:
    header = (
        f"# Sphinx inventory version 2\n# Project: {project}\n# Version: 1\n"
        "# The remainder of this file is compressed using zlib.\n"
    ).encode()
    body = "".join(f"{name} {kind} 1 {uri} -\n" for name, kind, uri in entries)
    return header + zlib.compress(body.encode())


def test_build_index_short_names_are_unique_public_sklearn_names():
    pytest.importorskip("sphinx", reason="the docs extension needs the 'docs' extra")
    item = type("Item", (), {"uri": "u"})
    named = {
        "sklearn": {
            "py:class": {
                "sklearn.model_selection.GridSearchCV": item(),
                "sklearn.a.Twice": item(),
                "sklearn.b.Twice": item(),
                "sklearn._private.Hidden": item(),
                "sklearn.linear_model.NoisyScore": item(),
            },
            "py:function": {"sklearn.model_selection.cross_val_score": item()},
        },
        "numpy": {"py:function": {"numpy.unique": item()}},
        "python": {
            "py:data": {"None": item()},
            "py:module": {"time": item()},
            "py:exception": {"ValueError": item()},
            "py:function": {"json.dumps": item()},
        },
    }
    index = noisy_links.build_index(named, exclude=frozenset({"NoisyScore"}))
    assert "GridSearchCV" in index
    assert "cross_val_score" in index
    assert "numpy.unique" in index
    assert "unique" not in index  # short names: scikit-learn only
    assert "Twice" not in index  # ambiguous
    assert "Hidden" not in index  # private path
    assert "NoisyScore" not in index  # sklearn-noisy's own name
    assert {"ValueError", "json.dumps"} <= set(index)
    assert not {"None", "time"} & set(index)  # undotted: exceptions only
    assert noisy_links._lookup(index, "np.unique") == "u"
    assert noisy_links._lookup(index, "cross_val_score()") == "u"
    assert noisy_links._lookup(index, "GridSearchCV(Ridge())") is None


def test_extension_links_literals_and_arxiv_ids(tmp_path):
    """A small site with a local scikit-learn inventory, built with -W."""
    pytest.importorskip("sphinx", reason="the docs build needs the 'docs' extra")
    source = tmp_path / "src"
    source.mkdir()
    (source / "sklearn.inv").write_bytes(
        _inventory(
            [
                ("sklearn.model_selection.GridSearchCV", "py:class", "gs.html#$"),
                ("sklearn.metrics.mean_squared_error", "py:function", "mse.html#$"),
            ],
            "scikit-learn",
        )
    )
    (source / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(DOCS / '_ext')!r})\n"
        "extensions = ['sphinx.ext.intersphinx', 'noisy_links']\n"
        "intersphinx_mapping = {'sklearn': ('https://sk.example/', 'sklearn.inv')}\n"
        "noisy_links_citations = {'Doe & Roe': 'https://arxiv.org/abs/1234.56789'}\n"
        "noisy_links_exclude = ['mean_squared_error']\n"
    )
    (source / "index.rst").write_text(
        "Title\n=====\n\n.. a comment on Doe & Roe\n\n"
        "Use ``GridSearchCV`` and ``mean_squared_error``, "
        "``sklearn.metrics.mean_squared_error``, ``Unknown``; "
        "Doe & Roe (2020) and Doe & Roe again, arXiv:2209.15588.\n\n"
        ".. code-block:: python\n\n   GridSearchCV\n"
    )
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "-q",
            "-b",
            "html",
            str(source),
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    html = (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
    assert (
        'href="https://sk.example/gs.html#sklearn.model_selection.GridSearchCV"' in html
    )
    assert html.count("https://sk.example/mse.html") == 1  # full name only
    assert html.count('href="https://arxiv.org/abs/1234.56789"') == 1  # first mention
    assert 'href="https://arxiv.org/abs/2209.15588"' in html
    assert "Unknown" in html
    assert html.count("sk.example/gs.html") == 1  # not inside the code block


def test_mismatch_names_the_first_differing_line():
    assert mismatch("a\nB\nc\n...", PRINTED) == "shown 'B'\nprinted 'b'"
    assert mismatch("...\nc\nX", PRINTED) == "shown 'X'\nprinted 'd'"
    assert "'e'" in mismatch("...\nd\ne", PRINTED)
