"""A builder's arguments as the repository's own tests pass them, read from the tests'
syntax trees (never imported).

For a call ``build_softmax_module(M, N, dtype_str)`` in a test file, each argument is
resolved to a literal: directly, or through the names it uses: the first case of the test's
``@pytest.mark.parametrize``, the first element of a ``for`` loop over a literal list, a
literal assignment in the function, a parameter's default, the values a caller in the same
file passes (one level: ``run_test(32, 1024, "bf16")``), or a module constant.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from flydsl_ls.compile import scaffold_values as values
from flydsl_ls.compile.scaffold_values import UNKNOWN

MAX_TEST_FILES = 2000  # a tests folder bigger than this is not read past it
MAX_DEPTH = 2  # how many callers up a name is followed


@dataclass(frozen=True)
class TestCall:
    """A call of the builder in a test: the arguments it resolves to, and the arch the test
    requires when it skips on others (``if "gfx95" not in ARCH: pytest.skip(...)``)."""

    arguments: dict
    arch: str | None


def tests_folders(path: Path) -> list[Path]:
    """The test folders (``tests``, ``test``, ``*_tests`` as aiter's ``op_tests``) of the
    nearest folder above ``path`` that has any: the repository's own tests."""
    for parent in path.resolve().parents:
        try:
            found = sorted(
                p for p in parent.iterdir()
                if p.is_dir() and (p.name in ("tests", "test") or p.name.endswith("_tests"))
            )
        except OSError:
            continue
        if found:
            return found
    return []


class _Module:
    def __init__(self, tree: ast.Module):
        self.tree = tree
        self.constants = values.module_constants(tree)
        self.parents: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
        self.resolving: set[tuple[str, int]] = set()  # (name, function) being resolved: no cycles

    def enclosing(self, node: ast.AST) -> ast.FunctionDef | None:
        while node in self.parents:
            node = self.parents[node]
            if isinstance(node, ast.FunctionDef):
                return node
        return None


def _parametrized(function: ast.FunctionDef, module: _Module) -> dict:
    """name -> the first case of the function's ``pytest.mark.parametrize`` decorators."""
    found = {}
    for decorator in function.decorator_list:
        if not (isinstance(decorator, ast.Call) and ast.unparse(decorator.func).endswith("parametrize")):
            continue
        if len(decorator.args) < 2:
            continue
        names_value = values.evaluate(decorator.args[0], module.constants)
        if isinstance(names_value, str):
            names = [n.strip() for n in names_value.split(",") if n.strip()]
        elif isinstance(names_value, tuple):
            names = list(names_value)
        else:
            continue
        cases = decorator.args[1]
        if not isinstance(cases, (ast.List, ast.Tuple)) or not cases.elts:
            continue
        first = cases.elts[0]
        if isinstance(first, ast.Call) and ast.unparse(first.func).endswith("param"):
            first = ast.Tuple(elts=list(first.args), ctx=ast.Load()) if len(first.args) != 1 else first.args[0]
        case = values.evaluate(first, module.constants)
        if case is UNKNOWN:
            continue
        if len(names) == 1:
            found[names[0]] = case
        elif isinstance(case, tuple) and len(case) == len(names):
            found.update(zip(names, case))
    return found


def _resolve_expr(expr: ast.expr, function: ast.FunctionDef | None, module: _Module, depth: int) -> object:
    env = {}
    for node in ast.walk(expr):
        if isinstance(node, ast.Name) and node.id not in env:
            value = _resolve_name(node.id, function, module, depth, expr)
            if value is not UNKNOWN:
                env[node.id] = value
    return values.evaluate(expr, env)


def _resolve_name(name: str, function: ast.FunctionDef | None, module: _Module, depth: int, at: ast.AST) -> object:
    key = (name, id(function))
    if key in module.resolving:
        return UNKNOWN
    module.resolving.add(key)
    try:
        return _resolve_name_once(name, function, module, depth, at)
    finally:
        module.resolving.discard(key)


def _resolve_name_once(name: str, function: ast.FunctionDef | None, module: _Module, depth: int, at: ast.AST) -> object:
    if function is not None:
        parametrized = _parametrized(function, module)
        if name in parametrized:
            return parametrized[name]
        for node in ast.walk(function):
            if getattr(node, "lineno", 10**9) > getattr(at, "lineno", 0):
                continue
            if isinstance(node, ast.For) and name in _target_names(node.target):
                iterable = _resolve_expr(node.iter, function, module, depth)
                if isinstance(iterable, (tuple, list)) and iterable:
                    bound = _bind(node.target, iterable[0])
                    if name in bound:
                        return bound[name]
            elif isinstance(node, ast.Assign) and any(name in _target_names(t) for t in node.targets):
                value = _resolve_expr(node.value, function, module, depth) if node.value is not at else UNKNOWN
                if value is not UNKNOWN:
                    for target in node.targets:
                        bound = _bind(target, value)
                        if name in bound:
                            return bound[name]
        params = _parameter_nodes(function)
        if name in params:
            index, default = params[name]
            from_callers = _from_callers(function, index, name, module, depth) if depth > 0 else UNKNOWN
            if from_callers is not UNKNOWN:
                return from_callers
            if default is not None:
                return values.evaluate(default, module.constants)
            return UNKNOWN
    return module.constants.get(name, UNKNOWN)


def _target_names(target: ast.expr) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _bind(target: ast.expr, value: object) -> dict:
    if isinstance(target, ast.Name):
        return {target.id: value}
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (tuple, list)) and len(value) == len(target.elts):
        bound = {}
        for element, item in zip(target.elts, value):
            bound.update(_bind(element, item))
        return bound
    return {}


def _parameter_nodes(function: ast.FunctionDef) -> dict[str, tuple[int | None, ast.expr | None]]:
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    found = {a.arg: (i, d) for i, (a, d) in enumerate(zip(positional, defaults))}
    found.update({a.arg: (None, d) for a, d in zip(args.kwonlyargs, args.kw_defaults)})
    return found


def _from_callers(function: ast.FunctionDef, index: int | None, name: str, module: _Module, depth: int) -> object:
    """The first value a call of ``function`` in the same file passes for parameter ``name``."""
    for node in ast.walk(module.tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == function.name):
            continue
        argument = _argument(node, index, name)
        if argument is None:
            continue
        value = _resolve_expr(argument, module.enclosing(node), module, depth - 1)
        if value is not UNKNOWN:
            return value
    return UNKNOWN


def _argument(call: ast.Call, index: int | None, name: str) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    if index is not None and index < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return call.args[index]
    return None


def test_calls(folders: list[Path], builder: str, params: list[values.Param]) -> list[TestCall]:
    """Each call of ``builder`` in the tests, with the arguments it resolves to (parameter ->
    value; unresolved ones left out), the most complete first."""
    found: list[tuple[int, int, TestCall]] = []
    files = [p for folder in folders for p in sorted(folder.rglob("*.py"))][:MAX_TEST_FILES]
    for order, path in enumerate(files):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if builder not in text:
            continue
        try:
            module = _Module(ast.parse(text))
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(module.tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if not ((isinstance(func, ast.Name) and func.id == builder) or (isinstance(func, ast.Attribute) and func.attr == builder)):
                continue
            resolved = _call_arguments(node, params, module)
            if resolved:
                found.append((-len(resolved), order, TestCall(resolved, _required_arch(node, module))))
    found.sort(key=lambda item: (item[0], item[1]))
    return [call for _, _, call in found]


def _required_arch(call: ast.Call, module: _Module) -> str | None:
    """The arch named where the test skips: in an ``if`` around ``pytest.skip`` in the
    function holding the call, in the functions calling that one, or at module level."""
    function = module.enclosing(call)
    scopes: list[ast.AST] = []
    if function is not None:
        scopes.append(function)
        scopes += [
            module.enclosing(n) for n in ast.walk(module.tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == function.name
        ]
    scopes.append(ast.Module(body=[n for n in module.tree.body if isinstance(n, ast.If)], type_ignores=[]))
    for scope in scopes:
        if scope is None:
            continue
        for node in ast.walk(scope):
            if isinstance(node, ast.If) and any(
                isinstance(c, ast.Call) and ast.unparse(c.func).endswith("skip") for b in node.body for c in ast.walk(b)
            ):
                found = values.arch_in(ast.unparse(node))
                if found:
                    return found
    return None


def _call_arguments(call: ast.Call, params: list[values.Param], module: _Module) -> dict:
    function = module.enclosing(call)
    positional = [p for p in params if not p.keyword_only]
    resolved = {}
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return {}
    by_name = {p.name: p for p in params}
    pairs = [(p.name, a) for p, a in zip(positional, call.args)]
    pairs += [(k.arg, k.value) for k in call.keywords if k.arg in by_name]
    for name, argument in pairs:
        value = _resolve_expr(argument, function, module, MAX_DEPTH)
        # None for a parameter whose default is not None: a test helper's "use the default"
        if value is UNKNOWN or (value is None and by_name[name].has_default and by_name[name].default is not None):
            continue
        resolved[name] = value
    return resolved
