"""The documentation: API reference completeness, the rst examples, the build.

The full Sphinx build (with the examples gallery, which executes every example)
runs with ``-W``: any warning, a broken cross-reference or a failing example
fails the test. It needs the ``docs`` extra (sphinx, numpydoc,
pydata-sphinx-theme, sphinx-gallery, matplotlib, pandas).
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import pkgutil
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from _first_contact import mismatch, outputs, rst_blocks, run_command

import sklearn_noisy

DOCS = Path(__file__).resolve().parents[1] / "docs"
API_RST = DOCS / "api.rst"


def _registry_api():
    """``docs/_ext/registry_api.py``, which expands the registry's entries."""
    spec = importlib.util.spec_from_file_location(
        "registry_api", DOCS / "_ext" / "registry_api.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _api_text() -> str:
    """``api.rst`` as Sphinx reads it: the registry's functions listed."""
    return _registry_api().expand(API_RST.read_text(encoding="utf-8"))


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
    documented = _documented_names(_api_text())
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


@pytest.mark.parametrize(
    "page",
    [
        "index.rst",
        "getting_started.rst",
        "user_guide/error_budget.rst",
        "user_guide/shared_offsets.rst",
    ],
)
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
    for module in (
        "numpydoc",
        "pydata_sphinx_theme",
        "sphinx_gallery",
        "sphinx_copybutton",
        "sphinx-mathjax-offline",
        "matplotlib",
    ):
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
        # Offline, whatever the machine: no intersphinx inventory is fetched.
        env={
            **__import__("os").environ,
            "MPLBACKEND": "Agg",
            "SKLEARN_NOISY_DOCS_INTERSPHINX": "0",
        },
    )
    assert completed.returncode == 0, (
        "the documentation build failed (warnings are errors):\n"
        + completed.stderr[-8000:]
    )
    assert (out / "index.html").is_file()
    assert (out / "api.html").is_file()
    assert (out / "user_guide" / "errata.html").is_file()
    _check_built_site(out)


def _check_built_site(out: Path) -> None:
    """Math typeset offline, the copy button, the paper linked."""
    assert (out / "_static" / "mathjax" / "tex-chtml.js").is_file()
    getting_started = (out / "getting_started.html").read_text(encoding="utf-8")
    assert 'src="_static/mathjax/tex-chtml.js"' in getting_started
    assert r"\(\sigma_i^2\)" in getting_started  # math left for MathJax to typeset
    for page in out.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "cdn.jsdelivr.net" not in text, f"{page.name} loads from a CDN"
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "copybutton.js" in index
    assert 'href="https://arxiv.org/abs/2209.15588"' in index
    errata = (out / "user_guide" / "errata.html").read_text(encoding="utf-8")
    assert 'href="https://arxiv.org/abs/2209.15588"' in errata


GETTING_STARTED_OUTPUTS = outputs(
    rst_blocks((DOCS / "getting_started.rst").read_text())
)


def test_getting_started_shows_the_main_job_output():
    assert [body for language, body, _ in GETTING_STARTED_OUTPUTS if language == "bash"]
    text = (DOCS / "getting_started.rst").read_text(encoding="utf-8")
    assert "<repository-url>" not in text
    bash = "\n".join(body for language, body in rst_blocks(text) if language == "bash")
    assert "pip install sklearn-noisy" not in bash  # not released yet


@pytest.mark.parametrize(
    ("language", "snippet", "shown"),
    [block for block in GETTING_STARTED_OUTPUTS if block[0] == "bash"],
)
def test_getting_started_command_prints_what_is_shown(language, snippet, shown):
    """The table on the page is what ``sklearn-noisy evaluate`` prints now."""
    printed = run_command(snippet)
    problem = mismatch(shown, printed)
    assert problem is None, (
        "docs/getting_started.rst: the output shown after the command is not what "
        f"it prints: {problem}\n--- it prints ---\n{printed}"
    )


def _python_blocks(page: Path) -> list[str]:
    """The ``.. code-block:: python`` blocks of an rst page, dedented."""
    blocks: list[str] = []
    lines = page.read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines):
        if line.strip() != ".. code-block:: python":
            continue
        body = []
        for following in lines[number + 1 :]:
            if following.strip() and not following.startswith((" ", "\t")):
                break
            body.append(following)
        blocks.append(textwrap.dedent("\n".join(body)).strip() + "\n")
    return blocks


def _contributing_example():
    """The worked example of the contributor page: its function and record."""
    from sklearn_noisy.metrics import _registry

    kernel, record = _python_blocks(DOCS / "contributing.rst")
    namespace: dict = {}
    exec(compile(kernel, "contributing.rst (kernel)", "exec"), namespace)
    function = namespace["expected_zero_one_loss"]
    scope = {**vars(_registry), "expected_zero_one_loss": function}
    (info,) = eval(compile(record, "contributing.rst (record)", "eval"), scope)
    return function, info


def test_contributing_example_is_correct():
    """The example metric is the complement of the expected accuracy."""
    from sklearn.metrics import zero_one_loss

    from sklearn_noisy.metrics import MetricInfo, expected_accuracy_score

    function, info = _contributing_example()
    assert isinstance(info, MetricInfo)
    assert info.function is function
    assert info.sklearn_function is zero_one_loss
    assert info.scorer_name == "neg_expected_zero_one_loss"
    assert (info.noise, info.response_method) == ("flips", "predict")
    rng = np.random.default_rng(0)
    y_true = rng.integers(0, 3, size=200)
    y_pred = np.where(rng.random(200) < 0.7, y_true, rng.integers(0, 3, size=200))
    weight = rng.integers(1, 4, size=200)
    matrix = [[0.8, 0.15, 0.05], [0.1, 0.85, 0.05], [0.0, 0.2, 0.8]]
    for noise in (
        {"q": 0.1},
        {"q": rng.uniform(0, 0.4, size=200)},
        {"transition_matrix": matrix},
    ):
        for sample_weight in (None, weight):
            loss = function(y_true, y_pred, sample_weight=sample_weight, **noise)
            accuracy = expected_accuracy_score(  # forward, as the example's
                y_true, y_pred, sample_weight=sample_weight, estimand="forward", **noise
            )
            assert loss.metric == "zero_one_loss"
            assert loss.n_samples == 200
            np.testing.assert_allclose(loss.expected, 1 - accuracy.expected, rtol=1e-12)
            np.testing.assert_allclose(loss.variance, accuracy.variance, rtol=1e-12)
            np.testing.assert_allclose(loss.nominal, 1 - accuracy.nominal, rtol=1e-12)
            np.testing.assert_allclose(
                loss.nominal,
                zero_one_loss(y_true, y_pred, sample_weight=sample_weight),
                rtol=1e-12,
            )


def test_contributing_example_against_monte_carlo():
    """Mean and variance of the loss over redrawn labels, per-sample q."""
    function, _ = _contributing_example()
    rng = np.random.default_rng(1)
    y_true = rng.integers(0, 3, size=50)
    y_pred = np.where(rng.random(50) < 0.7, y_true, rng.integers(0, 3, size=50))
    q = rng.uniform(0, 0.5, size=50)
    score = function(y_true, y_pred, q=q)
    n_draws = 200_000
    flip = rng.random((n_draws, 50)) < q
    shift = rng.integers(1, 3, size=(n_draws, 50))
    observed = np.where(flip, (y_true + shift) % 3, y_true)
    losses = (observed != y_pred).mean(axis=1)
    assert abs(losses.mean() - score.expected) < 5 * losses.std() / np.sqrt(n_draws)
    np.testing.assert_allclose(losses.var(), score.variance, rtol=0.02)


@pytest.mark.parametrize(
    ("check", "key"),
    [
        ("test_sample_order_invariance", "order"),
        ("test_sample_weight_equals_repetition", "weights"),
        ("test_zero_sample_weight_equals_removal", "zero_weights"),
        ("test_float32_equals_float64", "float32"),
        ("test_lists_arrays_and_series_agree", "containers"),
        ("test_result_pickles", "pickle"),
    ],
)
def test_contributing_example_passes_common_checks(check, key, monkeypatch):
    """Once its record is in the registry, the common tests cover the example.

    The cases listed in ``test_common.KNOWN_FAILURES`` are left out: they fail
    for every metric of their noise kind.
    """
    import test_common

    from sklearn_noisy.metrics import _registry

    _, info = _contributing_example()
    monkeypatch.setitem(_registry._REGISTRY, info.name, info)
    for zero in ("scalar", "per_sample"):
        test_common.test_zero_noise_equals_scikit_learn(info.name, "forward", zero)
    test = getattr(test_common, check)
    for level in test_common._levels(info.name):
        if (key, level) in test_common.KNOWN_FAILURES:
            continue
        if check == "test_lists_arrays_and_series_agree":
            for container in ("list", "series"):
                test(info.name, level, container)
        else:
            test(info.name, level)


def test_no_reference_to_the_missing_formulas_file():
    """Formulas are referenced by their user-guide section, not FORMULAS.md."""
    root = DOCS.parent
    paths = [root / "README.md", *DOCS.rglob("*.rst"), *DOCS.rglob("*.py")]
    paths += sorted((root / "sklearn_noisy").rglob("*.py"))
    found = [
        f"{path.relative_to(root)}:{number}"
        for path in paths
        if not {"_build", "generated", "auto_examples"} & set(path.parts)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "FORMULAS.md" in line
    ]
    assert not found, f"references to FORMULAS.md: {found}"


@pytest.mark.parametrize(
    "page",
    [
        "index.rst",
        "getting_started.rst",
        "user_guide/error_budget.rst",
    ],
)
def test_landing_page_python_blocks_are_doctests(page):
    """Every Python block of a landing page is a ``>>>`` session doctest checks."""
    blocks = [
        body
        for language, body in rst_blocks((DOCS / page).read_text(encoding="utf-8"))
        if language == "python"
    ]
    assert blocks
    assert all(body.lstrip().startswith(">>> ") for body in blocks)


def _css_rules(css: str) -> dict[str, dict[str, str]]:
    """``selector -> {property: value}`` of a flat stylesheet, print rules left out."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    css = re.sub(r"@media print\s*\{(?:[^{}]*\{[^{}]*\})*\s*\}", "", css)
    rules: dict[str, dict[str, str]] = {}
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css):
        declarations = dict(
            (part.split(":", 1)[0].strip(), part.split(":", 1)[1].strip())
            for part in body.split(";")
            if ":" in part
        )
        for selector in selectors.split(","):
            rules.setdefault(" ".join(selector.split()), {}).update(declarations)
    return rules


def test_printed_output_and_value_tables_do_not_wrap():
    """A report's rows stay one line each in the HTML: they scroll, not wrap.

    Printed output (text blocks, the examples' output) keeps its lines as code
    does, inside a box that scrolls; on screen it never wraps (on paper it may).
    Tables of values (``:class: nowrap``) keep each row on one line too.
    ``docs/_tools/check_rendering.py`` measures the result in a browser.
    """
    rules = _css_rules((DOCS / "_static" / "custom.css").read_text(encoding="utf-8"))
    for selector in ("div.highlight-text pre", "div.sphx-glr-script-out pre"):
        assert rules[selector].get("white-space") == "pre", selector
    assert not [s for s, d in rules.items() if d.get("white-space") == "pre-wrap"]
    assert rules[".bd-article pre"]["overflow-x"] == "auto"
    for cell in ("td", "th"):
        assert rules[f".bd-article table.nowrap {cell}"]["white-space"] == "nowrap"
    # the tables of values on the page that explains the report are marked so
    page = (DOCS / "user_guide" / "reading_results.rst").read_text(encoding="utf-8")
    assert ":class: nowrap" in page
