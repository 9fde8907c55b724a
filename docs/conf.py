"""Sphinx configuration for the sklearn-noisy documentation.

Build with ``python -m sphinx -W -b html docs docs/_build/html`` (warnings are
errors). The examples gallery under ``docs/examples`` is executed during the
build by sphinx-gallery.

The build works offline: MathJax is served from the built site
(sphinx-mathjax-offline), not from a CDN. Links to the documentation of
scikit-learn, numpy, scipy and Python (intersphinx) are made when their
inventories can be read: from ``docs/_intersphinx/<name>.inv`` when such a file
exists, otherwise from the web when the host answers within a second or two.
Unreachable projects are left out, so an offline build stays warning-free; their
names then show as plain code. ``SKLEARN_NOISY_DOCS_INTERSPHINX=0`` skips the web
(the test-suite sets it, for a fast, repeatable build), ``=1`` uses it without
probing.

``python docs/_tools/check_rendering.py docs/_build/html index.html ...`` renders
built pages in headless Chromium and reports horizontal overflow, wrapped lines
of code or printed output, and untypeset formulas (with ``--screenshots DIR``,
PNGs of them).
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import warnings
from datetime import date
from pathlib import Path
from urllib.parse import urlsplit

import sklearn_noisy

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

# -- Project information -----------------------------------------------------

project = "sklearn-noisy"
author = "The sklearn-noisy developers"
copyright = f"{date.today().year}, {author}"
release = sklearn_noisy.__version__
version = ".".join(release.split(".")[:2])

# -- General configuration ---------------------------------------------------

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax copied into the site: math renders offline
    "sphinx.ext.intersphinx",
    "sphinx_copybutton",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "noisy_links",  # docs/_ext: arXiv ids and scikit-learn names become links
    "registry_api",  # docs/_ext: api.rst lists the registry's metric functions
]

templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "**.ipynb_checkpoints",
    "auto_examples/*.ipynb",
    "auto_examples/*.py",
    "auto_examples/*.zip",
    "auto_examples/*.md5",
]
source_suffix = {".rst": "restructuredtext"}
root_doc = "index"
language = "en"
default_role = "literal"

# Cross-references that cannot be resolved (for instance to scikit-learn or numpy
# objects when the build is offline and intersphinx has no inventory) stay plain
# text instead of failing the -W build.
nitpicky = False

# -- Links out: intersphinx --------------------------------------------------

INTERSPHINX_PROJECTS = {
    "python": "https://docs.python.org/3/",
    "numpy": "https://numpy.org/doc/stable/",
    "scipy": "https://docs.scipy.org/doc/scipy/",
    "sklearn": "https://scikit-learn.org/stable/",
}


def _reachable(url: str, timeout: float) -> bool:
    """Whether the host of ``url`` accepts a connection within ``timeout`` s.

    Name resolution ignores socket timeouts, so the probe runs in a daemon
    thread that is abandoned when it has not answered in time.
    """
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    answered: list[bool] = []

    def probe() -> None:
        try:
            socket.create_connection((parts.hostname, port), timeout=timeout).close()
        except OSError:
            return
        answered.append(True)

    thread = threading.Thread(target=probe, daemon=True)
    thread.start()
    thread.join(timeout)
    return bool(answered)


def intersphinx_projects(
    *, setting: str | None = None, cache: Path = HERE / "_intersphinx", timeout=1.5
) -> dict:
    """The ``intersphinx_mapping`` this build can honour.

    A project is included when ``cache/<name>.inv`` exists (read offline) or,
    unless ``setting`` is ``"0"``, when its host answers (``"1"``: no probe).
    """
    mapping = {}
    pending = {}
    for name, url in INTERSPHINX_PROJECTS.items():
        cached = cache / f"{name}.inv"
        if cached.is_file():
            mapping[name] = (url, str(cached))
        elif setting != "0":
            pending[name] = url
    if setting != "1":
        results: dict[str, bool] = {}
        threads = [
            threading.Thread(
                target=lambda n=name, u=url: results.__setitem__(
                    n, _reachable(u, timeout)
                ),
                daemon=True,
            )
            for name, url in pending.items()
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout + 0.5)
        pending = {name: url for name, url in pending.items() if results.get(name)}
    mapping.update({name: (url, None) for name, url in pending.items()})
    return mapping


intersphinx_mapping = intersphinx_projects(
    setting=os.environ.get("SKLEARN_NOISY_DOCS_INTERSPHINX")
)
intersphinx_timeout = 10
intersphinx_disabled_reftypes = ["std:doc"]

# docs/_ext/noisy_links.py: inline literals naming these are never linked out
# (they are sklearn-noisy's own names).
noisy_links_exclude = tuple(
    sorted(
        {
            name
            for module in (sklearn_noisy, *vars(sklearn_noisy).values())
            if getattr(module, "__name__", "").startswith("sklearn_noisy")
            for name in getattr(module, "__all__", ())
        }
    )
)

# docs/_ext/noisy_links.py: the first mention on a page of the source paper's
# authors links to the paper, Michelucci & Venturini (2023), arXiv:2209.15588.
noisy_links_citations = {
    "Michelucci & Venturini": "https://arxiv.org/abs/2209.15588",
}

# -- sphinx-copybutton: copy the code, not the prompts or the output ---------

copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True
copybutton_only_copy_prompt_lines = True
copybutton_remove_prompts = True
copybutton_exclude = ".linenos, .gp, .go"

# -- autodoc / autosummary / numpydoc ----------------------------------------

autosummary_generate = True
autosummary_imported_members = False
autodoc_typehints = "none"  # numpydoc shows the types from the docstrings
autoclass_content = "class"

numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False
# No numpydoc_validation_checks: docstring style is checked by the test-suite's
# doctests and by review, not by making the documentation build fail.

# -- HTML output -------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"sklearn-noisy {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_show_sourcelink = False
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
# The first pages a newcomer reads, the page that explains the printed report
# and the page of verification tables get the full width: no section navigation
# on the left (the examples link to each other at their foot), so that a line of
# code (88 characters at most) and a table's row fit beside the page's table of
# contents.
html_sidebars = {
    "index": [],
    "getting_started": [],
    "user_guide/reading_results": [],
    "user_guide/verification": [],
    "auto_examples/*": [],
}
html_context = {"default_mode": "light"}

# -- sphinx-gallery ----------------------------------------------------------

# Examples draw with matplotlib's non-interactive backend.
os.environ.setdefault("MPLBACKEND", "Agg")

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    # Run every example (the default only runs files named plot_*).
    "filename_pattern": r".*\.py$",
    "plot_gallery": "True",
    "download_all_examples": False,
    "within_subsection_order": "FileNameSortKey",
    "doc_module": ("sklearn_noisy",),
    "backreferences_dir": os.path.join("generated", "backreferences"),
    "reference_url": {"sklearn_noisy": None},
    "remove_config_comments": True,
    "show_memory": False,
    "image_scrapers": ("matplotlib",),
    "matplotlib_animations": False,
    "min_reported_time": 0,
}

# Examples print (and warn) like user code; keep third-party deprecation noise
# raised while executing them out of the documentation.
warnings.filterwarnings("ignore", category=DeprecationWarning, module="pyparsing")
