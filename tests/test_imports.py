"""The package's modules import each other without cycles.

Every import counts, at module level or inside a function (a function-level
import only hides a cycle until the function runs); imports under
``if TYPE_CHECKING:`` are for annotations and never run.
"""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "sklearn_noisy"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_nodes(tree: ast.AST):
    """Every node but those under an ``if TYPE_CHECKING:`` block."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.orelse:
                yield child
                yield from _runtime_nodes(child)
            continue
        yield node
        yield from _runtime_nodes(node)


def _import_graph() -> dict[str, set[str]]:
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in paths}
    for name, path in paths.items():
        package = (
            name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        )
        for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                target = ".".join(base + ([node.module] if node.module else []))
                targets = [target] + [f"{target}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            graph[name].update(t for t in targets if t in paths and t != name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles():
    graph = _import_graph()
    assert "sklearn_noisy.metrics._registry" in graph  # the walk found the package
    assert _cycles(graph) == []


def test_the_cycle_check_sees_function_level_imports():
    graph = {"a": {"b"}, "b": set()}
    assert _cycles(graph) == []
    inside = ast.parse("def f():\n    if x:\n        from . import b\n")
    assert any(isinstance(n, ast.ImportFrom) for n in _runtime_nodes(inside))
    typing_only = ast.parse("if TYPE_CHECKING:\n    from . import b\n")
    assert not any(isinstance(n, ast.ImportFrom) for n in _runtime_nodes(typing_only))
    graph["b"].add("a")  # b imports a inside a function: a cycle
    assert _cycles(graph) == [["a", "b"]]
