"""Sphinx configuration for the sklearn-noisy documentation.

Build with ``python -m sphinx -W -b html docs docs/_build/html`` (warnings are
errors). The examples gallery under ``docs/examples`` is executed during the
build by sphinx-gallery.
"""

from __future__ import annotations

import os
import warnings
from datetime import date

import sklearn_noisy

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
    "numpydoc",
    "sphinx_gallery.gen_gallery",
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
# objects: intersphinx is not configured because the build runs offline) stay plain
# text instead of failing the -W build.
nitpicky = False

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
html_sidebars = {"index": [], "getting_started": []}
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
