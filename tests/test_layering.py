"""Layering: adapters use only the public API, and the core's imports run one way (no cycle).

Both checks read the source with `ast`, so they see every import: module-level ones, those
under ``if TYPE_CHECKING:`` and those inside functions (a lazy import is still a dependency).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import itertools
import types
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "core"
ADAPTERS = ROOT / "adapters"

def _modules(base: Path, package: str) -> dict[str, Path]:
    """Every module of ``package`` under ``base``, by dotted name."""
    found = {}
    for path in sorted((base / package).rglob("*.py")):
        parts = path.relative_to(base).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imports(name: str, path: Path) -> Iterator[tuple[str, list[str], int]]:
    """``(module, names, line)`` for every import in ``path``, relative ones resolved.

    ``names`` is empty for ``import module``, else what ``from module import ...`` takes.
    """
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, [], node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield module, [alias.name for alias in node.names], node.lineno


def _private(dotted: str) -> bool:
    return any(part.startswith("_") and part != "__init__" for part in dotted.split("."))


# ------------------------------------------------------------------------ adapters
# The built-in adapters, and the test suite's third-party dialect (held to the same rule).
ADAPTER_MODULES = {name: path for base in (ADAPTERS, ROOT / "tests" / "plugins")
                   for package in sorted(p.name for p in base.iterdir()
                                         if (p / "__init__.py").exists())
                   for name, path in _modules(base, package).items()}


def _moved(module: types.ModuleType, name: str) -> str:
    """``": <module>.<name> is deprecated: use <its new path>"`` for a name that moved."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        getattr(module, name, None)
    moved = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    return f": {moved[0]}" if moved else ""


def _violations(name: str, path: Path) -> Iterator[str]:
    where = f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}"
    for module, names, line in _imports(name, path):
        if module.split(".")[0] != "toolbridge":
            continue
        if _private(module):
            yield f"{where}:{line}: imports the private module {module}"
            continue
        loaded = importlib.import_module(module)
        for imported in names:
            submodule = f"{module}.{imported}"
            if imported not in loaded.__all__ and (_private(submodule) or importlib.util.find_spec(
                    submodule) is None):
                yield (f"{where}:{line}: imports {imported} from {module}, which does not "
                       f"export it (not in its __all__){_moved(loaded, imported)}")
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        chain = []
        while isinstance(node, ast.Attribute):
            chain.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id == "toolbridge" and chain:
            dotted = "toolbridge." + ".".join(reversed(chain))
            if _private(dotted):
                yield f"{where}:{getattr(node, 'lineno', '?')}: uses the private {dotted}"


@pytest.mark.parametrize("name", sorted(ADAPTER_MODULES))
def test_adapters_use_only_the_public_api(name: str) -> None:
    problems = list(_violations(name, ADAPTER_MODULES[name]))
    assert not problems, ("adapters import `toolbridge` and its public submodules only; export "
                          "what a dialect author needs from the right public module:\n"
                          + "\n".join(problems))


# ------------------------------------------------------------------------ core
CORE_MODULES = _modules(CORE, "toolbridge")


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _graph() -> dict[str, dict[str, int]]:
    """Per core module, the core modules importing it runs (with the import's line).

    Importing ``a.b.c`` runs ``a``, ``a.b`` and ``a.b.c``; the packages that hold the importer
    are already being imported, so they are no edge (unless it takes names from one of them).
    """
    graph: dict[str, dict[str, int]] = {name: {} for name in CORE_MODULES}
    for name, path in CORE_MODULES.items():
        inside = {*_ancestors(name), name}
        for module, names, line in _imports(name, path):
            if module not in CORE_MODULES:
                continue
            targets = [f"{module}.{n}" for n in names if f"{module}.{n}" in CORE_MODULES]
            if not names or len(targets) < len(names) or module not in inside:
                targets.append(module)
            targets += [a for a in _ancestors(module) if a not in inside]
            for target in targets:
                if target != name:
                    graph[name].setdefault(target, line)
    return graph


def _cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
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
    return sorted(found)


def _path(graph: dict[str, dict[str, int]], component: list[str]) -> str:
    """One cycle through ``component``, each step with the line of its import."""
    members, start = set(component), component[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier and start not in previous:
        nxt_frontier = []
        for node in frontier:
            for nxt in sorted(graph[node]):
                if nxt in members and nxt not in previous:
                    previous[nxt] = node
                    nxt_frontier.append(nxt)
        frontier = nxt_frontier
    steps = [start]
    while True:
        steps.append(previous[steps[-1]])
        if steps[-1] == start:
            break
    steps.reverse()
    return " -> ".join(f"{a} (line {graph[a][b]})" for a, b in itertools.pairwise(steps)) + (
        f" -> {start}")


def test_a_deprecated_import_is_refused_naming_the_new_path(tmp_path: Path) -> None:
    module = tmp_path / "old_style.py"
    module.write_text("from toolbridge.serve import ScriptedBackend, hold\n")
    assert list(_violations("old_style", module)) == [
        f"{module}:1: imports "
        "ScriptedBackend from toolbridge.serve, which does not export it (not in its __all__): "
        "toolbridge.serve.ScriptedBackend is deprecated: use toolbridge.testing.ScriptedBackend"]


def test_core_imports_have_no_cycles() -> None:
    graph = _graph()
    cycles = [_path(graph, c) for c in _cycles(graph)]
    assert not cycles, "import cycles in the core:\n" + "\n".join(cycles)


def _unit(name: str) -> str:
    """The subpackage (or top-level module) of the core that ``name`` belongs to."""
    return ".".join(name.split(".")[:2])


def test_core_subpackages_import_one_way() -> None:
    """Collapsed to subpackages (and top-level modules), the graph is still acyclic: no
    subpackage imports one that imports it back, even through other modules of theirs."""
    graph: dict[str, dict[str, int]] = {}
    via: dict[tuple[str, str], str] = {}
    for name, targets in _graph().items():
        for target, line in targets.items():
            a, b = _unit(name), _unit(target)
            graph.setdefault(b, {})
            if a != b:
                graph.setdefault(a, {}).setdefault(b, line)
                via.setdefault((a, b), f"{name}:{line} imports {target}")
    cycles = _cycles(graph)
    assert not cycles, "subpackages importing each other:\n" + "\n".join(
        "; ".join(v for (a, b), v in sorted(via.items()) if a in c and b in c) for c in cycles)


def test_the_cycle_finder_finds_cycles() -> None:
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}, "d": {"a": 4}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _path(graph, ["a", "b", "c"]) == "a (line 1) -> b (line 2) -> c (line 3) -> a"


def test_core_never_imports_an_adapter() -> None:
    adapters = {name.split(".")[0] for name in ADAPTER_MODULES}
    found = [f"{name}:{line} imports {module}" for name, path in CORE_MODULES.items()
             for module, _, line in _imports(name, path) if module.split(".")[0] in adapters]
    assert not found, found


def test_the_graph_sees_every_kind_of_import() -> None:
    graph = _graph()
    # under TYPE_CHECKING, function-local, relative from a subpackage, a package's __init__
    assert "toolbridge.plugin._registry" in graph["toolbridge.plugin.hookspecs"]
    assert "toolbridge.store._postgres" in graph["toolbridge.store._open"]
    assert "toolbridge.plugin" in graph["toolbridge.runtime._plan"]
    assert "toolbridge.runtime._journal" in graph["toolbridge.runtime._shared"]
    assert "toolbridge.schema._walk" in graph["toolbridge.schema"]
