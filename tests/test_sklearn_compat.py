"""scikit-learn's private names reach the package through one module only.

``sklearn_noisy/utils/_sklearn_compat.py`` imports every private scikit-learn
name the package uses (a name or a module path part starting with ``_``), so
that a change in scikit-learn is met in one place; the other modules import
them from there.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import sklearn_noisy
from sklearn_noisy.utils import _sklearn_compat

PACKAGE = Path(sklearn_noisy.__file__).resolve().parent
COMPAT = PACKAGE / "utils" / "_sklearn_compat.py"


def _private(name: str) -> bool:
    return any(
        part.startswith("_") and not (part.startswith("__") and part.endswith("__"))
        for part in name.split(".")
    )


def _private_sklearn_uses(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, name)`` of each private scikit-learn name imported or accessed."""
    uses = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] != "sklearn":
                continue
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                if _private(name):
                    uses.append((node.lineno, name))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "sklearn" and _private(alias.name):
                    uses.append((node.lineno, alias.name))
        elif isinstance(node, ast.Attribute):  # sklearn.utils._x.y as an expression
            parts = [node.attr]
            value = node.value
            while isinstance(value, ast.Attribute):
                parts.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id == "sklearn":
                name = ".".join(["sklearn", *reversed(parts)])
                if _private(name):
                    uses.append((node.lineno, name))
    return uses


def test_private_sklearn_names_only_in_compat_module():
    offending = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == COMPAT:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for line, name in _private_sklearn_uses(tree):
            offending.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {name}")
    assert not offending, (
        "import these private scikit-learn names from "
        "sklearn_noisy/utils/_sklearn_compat.py:\n" + "\n".join(offending)
    )


def test_compat_module_imports_private_names():
    """The check above sees the compat module's own imports (it is not vacuous)."""
    tree = ast.parse(COMPAT.read_text(encoding="utf-8"))
    names = {name.rsplit(".", 1)[-1] for _, name in _private_sklearn_uses(tree)}
    assert {"_BaseScorer", "_safe_indexing", "_num_samples"} <= names
    assert set(_sklearn_compat.__all__) - {"SKLEARN_MIN_VERSION", "get_tags"} <= names


@pytest.mark.parametrize(
    "version, release",
    [("1.6.1", (1, 6, 1)), ("1.7", (1, 7, 0)), ("1.8.dev0", (1, 8, 0))],
)
def test_release_parsing(version, release):
    assert _sklearn_compat._release(version) == release
