"""The analysis packages import one way: model <- rules <- engine <- incremental. Nothing
in analysis/ imports the server, the CLI, the actions or the compile service, and the
incremental package shows the rest of flydsl-ls its analyzer only. In the server package,
only app.py knows the pygls server (handlers get the session and a client, client.py), and
its modules import one another without a cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import flydsl_ls
import flydsl_ls.analysis.incremental as incremental

PACKAGE = Path(flydsl_ls.__file__).parent
ANALYSIS = PACKAGE / "analysis"
SERVER = PACKAGE / "server"
LAYERS = ("model", "rules", "engine", "incremental")  # each may import those before it


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> list[str]:
    """Every flydsl_ls module ``path`` imports, at any depth (``if TYPE_CHECKING`` too)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module)
            found += [f"{node.module}.{a.name}" for a in node.names if is_module(f"{node.module}.{a.name}")]
    return [name for name in found if name.split(".")[0] == "flydsl_ls"]


def is_module(name: str) -> bool:
    """``from package import name`` imports a module (not a function or class)."""
    path = PACKAGE.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or path.is_dir()


def layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[:2] != ["flydsl_ls", "analysis"] or len(parts) < 3 or parts[2] not in LAYERS:
        return None
    return LAYERS.index(parts[2])


def violations(module: str, imports: list[str]) -> list[str]:
    own = layer(module)
    found = []
    for name in imports:
        if name.startswith("flydsl_ls.analysis"):
            other = layer(name)
            if other is None and name != "flydsl_ls.analysis":
                found.append(f"{module} imports {name}, outside the layers")
            elif other is not None and own is not None and other > own:
                found.append(f"{module} ({LAYERS[own]}) imports {name} ({LAYERS[other]})")
        elif not name.startswith(("flydsl_ls.data",)) and name != "flydsl_ls":
            found.append(f"{module} imports {name}, outside analysis/")
    return found


def test_the_checker_sees_a_wrong_way_import():
    assert violations("flydsl_ls.analysis.model.semantic", ["flydsl_ls.analysis.rules.base"])
    assert violations("flydsl_ls.analysis.rules.base", ["flydsl_ls.analysis.engine"])
    assert violations("flydsl_ls.analysis.engine", ["flydsl_ls.server.app"])
    assert not violations("flydsl_ls.analysis.incremental.analyzer", ["flydsl_ls.analysis.engine"])


def test_analysis_imports_one_way():
    files = sorted(ANALYSIS.rglob("*.py"))
    modules = {module_name(f): imported(f) for f in files}
    assert all(layer(m) is not None for m in modules), [m for m in modules if layer(m) is None]
    assert sum(map(len, modules.values())) > 200  # the walk found the imports
    wrong = [v for module, names in modules.items() for v in violations(module, names)]
    assert wrong == []


def test_the_incremental_package_exports_its_analyzer_only():
    assert incremental.__all__ == ["IncrementalAnalyzer"]
    outside = [f for f in PACKAGE.rglob("*.py") if ANALYSIS / "incremental" not in f.parents]
    reaching_in = [
        f"{module_name(f)} imports {name}"
        for f in outside
        for name in imported(f)
        if name.startswith("flydsl_ls.analysis.incremental.")
    ]
    assert reaching_in == []


def server_graph() -> dict[str, set[str]]:
    """Each module of the server package -> the modules of the package it imports."""
    files = {module_name(f): f for f in sorted(SERVER.glob("*.py"))}
    return {module: set(imported(path)) & set(files) - {module} for module, path in files.items()}


def cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of ``graph`` (its modules in order, the first again at the end), or []."""
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str]:
        if module in path:
            return path[path.index(module) :] + [module]
        if module in done:
            return []
        for other in sorted(graph.get(module, ())):
            found = visit(other, path + [module])
            if found:
                return found
        done.add(module)
        return []

    return next((found for module in sorted(graph) if (found := visit(module, []))), [])


def test_the_cycle_finder_sees_a_cycle():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_only_app_knows_the_server():
    graph = server_graph()
    assert len(graph) > 15 and sum(map(len, graph.values())) > 30  # the walk found the modules and imports
    knowing = [module for module, names in graph.items() if "flydsl_ls.server.app" in names]
    assert knowing == []


def test_the_server_package_has_no_import_cycle():
    assert cycle(server_graph()) == []
