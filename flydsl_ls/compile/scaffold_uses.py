"""What the kernel a launcher launches does with the launcher's parameters, read from the
syntax trees (nothing is imported), so that the example passes what the kernel can take:

- **rank**: a tensor the kernel slices with ``fx.slice(T, (i, j, None))`` or ``T[i, j, None]``
  (itself, or the buffer tensor ``fx.rocdl.make_buffer_tensor(T)``) has as many dimensions
  as coordinates;
  a 2-D tensor there fails while tracing (``profile mismatch``).
- **memref**: a parameter declared ``fx.Pointer`` that reaches
  ``fly.extract_aligned_pointer_as_index`` (directly, or through the functions and classes it
  is handed to: the file's own, or those imported from a module of the same repository)
  needs a tensor's memref: a ``fly.ptr`` there does not compile in flydsl 0.5.0.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from flydsl_ls.analysis.model.locate import spelled_name

MAX_DEPTH = 4  # how many calls deep a parameter is followed
_MEMREF_ONLY = "extract_aligned_pointer_as_index"


@dataclass(frozen=True)
class Use:
    rank: int | None = None  # coordinates the kernel slices it with
    memref: str | None = None  # the call that needs its memref (``GTensor``), when it does


def _is_kernel(node: ast.FunctionDef) -> bool:
    return any(spelled_name(d.func if isinstance(d, ast.Call) else d) == "kernel" for d in node.decorator_list)


def _positional(function: ast.FunctionDef) -> list[str]:
    return [a.arg for a in (*function.args.posonlyargs, *function.args.args)]


def _bound(call: ast.Call, callee: ast.FunctionDef, skip: int = 0) -> dict[str, str]:
    """The callee's parameter -> the caller's name passed to it (plain names only)."""
    names = _positional(callee)[skip:]
    found = {names[i]: arg.id for i, arg in enumerate(call.args) if i < len(names) and isinstance(arg, ast.Name)}
    found.update({k.arg: k.value.id for k in call.keywords if k.arg and isinstance(k.value, ast.Name)})
    return found


class _Definitions:
    """Functions and classes a name can stand for: the module's and the builder's, then those a
    ``from MODULE import NAME`` brings in from a file of the same repository (found from
    ``path`` upwards, or relative to it: ``from .shim import NAME``)."""

    def __init__(self, tree: ast.Module, local: list[ast.AST], path: Path | None):
        self.path = path
        self.names: dict[str, ast.AST] = {}
        for node in [*tree.body, *local]:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                self.names.setdefault(node.name, node)
        self.imports = {
            alias.asname or alias.name: (node.level, node.module or "", alias.name)
            for node in tree.body if isinstance(node, ast.ImportFrom) for alias in node.names
        }
        self.modules: dict[tuple[int, str], ast.Module | None] = {}

    def lookup(self, name: str) -> ast.AST | None:
        if name in self.names:
            return self.names[name]
        if name not in self.imports or self.path is None:
            return None
        level, module, original = self.imports[name]
        tree = self._module(level, module)
        if tree is None:
            return None
        return next((n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == original), None)

    def _module(self, level: int, module: str) -> ast.Module | None:
        """``from kernels.common.x import`` (the first folder above the file that has it) or
        ``from .x import`` (relative to the file's package)."""
        key = (level, module)
        if key not in self.modules:
            self.modules[key] = None
            relative = Path(*module.split(".")) if module else Path()
            parents = self.path.resolve().parents
            if level:
                bases = [parents[level - 1]] if level - 1 < len(parents) else []
            else:
                bases = list(parents)
            for base in bases:
                candidate = (base / relative).with_suffix(".py") if module else base / "__init__.py"
                if candidate.is_file():
                    try:
                        self.modules[key] = ast.parse(candidate.read_text(encoding="utf-8"))
                    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
                        pass
                    break
        return self.modules[key]


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    return next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _calls(node: ast.AST) -> list[ast.Call]:
    """The calls in ``node``, but not under an ``if`` on a value's type (aiter's shim: ``if
    str(raw.type).startswith("!fly.ptr"): ptrtoint(...) else: extract_aligned_...``), which
    takes a pointer too."""
    found, todo = [], [node]
    while todo:
        current = todo.pop()
        if isinstance(current, ast.If) and any(
            isinstance(n, ast.Attribute) and n.attr == "type" for n in ast.walk(current.test)
        ):
            continue
        if isinstance(current, ast.Call):
            found.append(current)
        todo.extend(ast.iter_child_nodes(current))
    return found


def _hands_on(call: ast.Call, param: str, defs: _Definitions, cls: ast.ClassDef | None, depth: int) -> bool:
    """Does ``call`` hand ``param`` on to ``extract_aligned_pointer_as_index``, itself or
    through the function, class (its ``__init__``) or ``self.`` method it calls?"""
    passed = [*call.args, *(k.value for k in call.keywords)]
    if param not in {n.id for a in passed for n in ast.walk(a) if isinstance(n, ast.Name)}:
        return False
    if spelled_name(call.func) == _MEMREF_ONLY:
        return True
    if depth >= MAX_DEPTH:
        return False
    callee, skip, owner = None, 0, None
    if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) and call.func.value.id == "self":
        callee, skip, owner = (_method(cls, call.func.attr) if cls else None), 1, cls
    elif isinstance(call.func, ast.Name):
        found = defs.lookup(call.func.id)
        if isinstance(found, ast.ClassDef):
            callee, skip, owner = _method(found, "__init__"), 1, found
        elif isinstance(found, ast.FunctionDef):
            callee = found
    if callee is None:
        return False
    return any(
        outer == param and any(_hands_on(c, inner, defs, owner, depth + 1) for c in _calls(callee))
        for inner, outer in _bound(call, callee, skip).items()
    )


def _ranks(kernel: ast.FunctionDef) -> dict[str, int]:
    """Kernel parameter -> the number of coordinates ``fx.slice`` or a subscript takes it (or
    its buffer tensor) with; the first one decides."""
    params = set(_positional(kernel))
    alias = {p: p for p in params}
    for node in ast.walk(kernel):
        if (
            isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Call) and spelled_name(node.value.func) == "make_buffer_tensor"
            and node.value.args and isinstance(node.value.args[0], ast.Name) and node.value.args[0].id in params
        ):
            alias.setdefault(node.targets[0].id, node.value.args[0].id)
    found: dict[str, int] = {}
    for node in ast.walk(kernel):
        if isinstance(node, ast.Call) and spelled_name(node.func) == "slice" and len(node.args) == 2:
            tensor, coords = node.args
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):  # T[i, j, None]
            tensor, coords = node.value, node.slice
        else:
            continue
        if isinstance(tensor, ast.Name) and tensor.id in alias and isinstance(coords, ast.Tuple):
            found.setdefault(alias[tensor.id], len(coords.elts))
    return found


def uses(launcher: ast.FunctionDef, tree: ast.Module, builder: ast.FunctionDef | None, path: Path | None) -> dict[str, Use]:
    """Launcher parameter -> what the kernels it calls need of it (only what is known)."""
    local = [n for n in ast.walk(builder or launcher) if n is not builder]
    defs = _Definitions(tree, local, path)
    found: dict[str, Use] = {}
    for call in _calls(launcher):
        kernel = defs.names.get(call.func.id) if isinstance(call.func, ast.Name) else None
        if not (isinstance(kernel, ast.FunctionDef) and _is_kernel(kernel)):
            continue
        for node in ast.walk(kernel):  # the kernel's own helpers
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node is not kernel:
                defs.names.setdefault(node.name, node)
        ranks = _ranks(kernel)
        for inner, outer in _bound(call, kernel).items():
            memref = next((spelled_name(c.func) for c in _calls(kernel) if _hands_on(c, inner, defs, None, 0)), None)
            if inner in ranks or memref:
                found.setdefault(outer, Use(ranks.get(inner), memref))
    return found
