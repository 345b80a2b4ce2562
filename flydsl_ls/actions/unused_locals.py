"""Locals a fix made unused are deleted, when deleting them cannot change the kernel's IR.

A fix that rewrites ``vector.bitcast(vec_i32_ty, v)`` leaves ``vec_i32_ty = T.vec(4,
T.i32)`` behind with no reader. Such a binding is deleted only when all of this holds:

- it was read before the fixes and nothing reads it after (a local the user already left
  unused is not the fixes' business);
- it is a plain ``name = value`` statement (one target, not ``;``-joined) directly in a
  function body: not a module global another module may import, not a class attribute,
  not a name some scope declares ``global``/``nonlocal``;
- no reader of that name in its scope is left at all (a nested function's read counts),
  and the function has no ``del name`` or ``locals()``/``vars()``/``eval``/``exec``/
  ``dir()`` that could read it without naming it;
- its value builds no IR and has no side effect: a literal, a name, a module attribute
  (``_uw = arith.unwrap``), an MLIR type (``T.i32``, ``T.vec(4, T.i32)``,
  ``ir.VectorType.get([8], bf16)``, ``ir.Type.parse("!llvm.ptr<3>")``), a tuple or list
  of those, or Python arithmetic on them. A call that creates an op (``arith.constant(1)``, ``fx.Int32(v)``) emits IR even
  when its result is unused, so it stays.

Deleting one binding can leave the ones its value read unused (``elem = T.i32`` read only
by ``vec = T.vec(4, elem)``): ``stale_local_edits`` is applied repeatedly, by
``imports.cleanup_edits``, until nothing is left to delete.
"""

from __future__ import annotations

import ast
import re
from collections import Counter

from flydsl_ls.analysis.model.diagnostic import Edit
from flydsl_ls.analysis.model.modules import is_module, split_symbol
from flydsl_ls.analysis.model.scopes import Binding, Scope
from flydsl_ls.analysis.model.semantic import SemanticModel
from flydsl_ls.analysis.model.statements import delete_statement, shares_lines

# Builtins that read a function's locals without naming them.
_LOCALS_READERS = frozenset({"locals", "vars", "eval", "exec", "dir"})
# MLIR type constructors: they return a uniqued type and create no operation.
_TYPE_MODULE = "fx.T"  # flydsl.expr.typing.T and flydsl._mlir.extras.types
_IR_TYPE_GET = re.compile(r"mlir\.ir\.\w+Type\.get\w*")
# Also uniqued types, parsed or built: `ir.Type.parse("!llvm.ptr<3>")`, `llvm.PointerType.get(...)`.
_TYPE_BUILDERS = frozenset({"mlir.ir.Type.parse", "mlir.llvm.PointerType.get"})

def stale_local_edits(old: SemanticModel, new: SemanticModel) -> list[Edit]:
    """Edits on ``new``'s text deleting locals read in ``old`` and read nowhere in ``new``
    (one round: a deletion may make more locals unused)."""
    old_locals = _locals(old)
    found: list[ast.Assign] = []
    for key, bindings in _locals(new).items():
        for binding in bindings:
            if new.use_counts.get(id(binding), 0) or not old_locals.get(key):
                continue
            before = _same_binding(binding, bindings, old_locals[key])
            if before is None or not old.use_counts.get(id(before), 0):
                continue
            stmt = _deletable(new, binding)
            if stmt is not None:
                found.append(stmt)
    return _deletions(new, found)


def _locals(model: SemanticModel) -> dict[tuple[str, str], list[Binding]]:
    """Plain assignments in function scopes, by (enclosing scopes, name)."""
    out: dict[tuple[str, str], list[Binding]] = {}
    for scope in model.scopes:
        if scope.kind != "function":
            continue
        owner = _scope_path(scope)
        for name, bindings in scope.bindings.items():
            for binding in bindings:
                if binding.kind == "assign" and binding.value is not None:
                    out.setdefault((owner, name), []).append(binding)
    return out


def _same_binding(binding: Binding, news: list[Binding], olds: list[Binding]) -> Binding | None:
    """The binding of ``olds`` that ``binding`` is: the n-th with the same value, as it is
    the n-th among ``news`` (one whose value the fixes rewrote has no match)."""
    value = ast.dump(binding.value)
    nth = [b for b in news if ast.dump(b.value) == value].index(binding)
    same = [b for b in olds if ast.dump(b.value) == value]
    return same[nth] if nth < len(same) else None


def _scope_path(scope: Scope | None) -> str:
    parts = []
    while scope is not None:
        parts.append(getattr(scope.node, "name", scope.kind))
        scope = scope.parent
    return ".".join(reversed(parts))


def _deletable(model: SemanticModel, binding: Binding) -> ast.Assign | None:
    scope = binding.scope
    function = scope.node
    stmt = _assignment_of(function, binding.node)
    if stmt is None or len(stmt.targets) != 1 or stmt.targets[0] is not binding.node:
        return None
    if any(binding.name in (s.global_names | s.nonlocal_names) for s in model.scopes):
        return None
    if any(model.use_counts.get(id(b), 0) for b in scope.bindings.get(binding.name, ())):
        return None  # another binding of the name is still read (a branch, a loop)
    if _reads_unnamed(function, binding.name) or not builds_no_ir(model, stmt.value):
        return None
    if shares_lines(model, stmt):
        return None
    return stmt


def _assignment_of(function: ast.AST, target: ast.AST) -> ast.Assign | None:
    """The ``Assign`` directly in ``function``'s own blocks (not a nested def or class) whose
    target is ``target``."""
    for stmt in _own_statements(function):
        if isinstance(stmt, ast.Assign) and any(t is target for t in stmt.targets):
            return stmt
    return None


def _own_statements(function: ast.AST):
    stack = list(getattr(function, "body", ()))
    while stack:
        stmt = stack.pop()
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(stmt, field, None)
            if isinstance(block, list):
                stack.extend(block)  # except handlers and match cases: their bodies next


def _reads_unnamed(function: ast.AST, name: str) -> bool:
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Del):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _LOCALS_READERS:
            return True
    return False


def builds_no_ir(model: SemanticModel, expr: ast.expr) -> bool:
    """Evaluating ``expr`` creates no MLIR operation and has no side effect."""
    if isinstance(expr, (ast.Constant, ast.Name)):
        return True
    if isinstance(expr, ast.Attribute):
        return _module_attribute(model, expr)
    if isinstance(expr, (ast.Tuple, ast.List)):
        return all(builds_no_ir(model, e) for e in expr.elts)
    if isinstance(expr, ast.Starred):
        return builds_no_ir(model, expr.value)
    if isinstance(expr, (ast.BinOp, ast.UnaryOp)):
        operands = [expr.left, expr.right] if isinstance(expr, ast.BinOp) else [expr.operand]
        return all(builds_no_ir(model, e) for e in operands) and model.type_of(expr).is_python
    if isinstance(expr, ast.Call):
        symbol = model.resolve(expr.func)
        if symbol is None or not _is_type_constructor(symbol):
            return False
        return all(builds_no_ir(model, a) for a in expr.args) and all(
            builds_no_ir(model, k.value) for k in expr.keywords
        )
    return False


def _module_attribute(model: SemanticModel, expr: ast.Attribute) -> bool:
    """A module, a module's member (``arith.unwrap``, ``fx.Int32``) or an MLIR type
    (``T.i32``): reading it runs no DSL code. A member's attribute (``fx.thread_idx.x``)
    may be a property that emits an op."""
    symbol = model.resolve(expr)
    if symbol is None:
        return False
    if is_module(symbol) or _is_type_constructor(symbol):
        return True
    module, attribute = split_symbol(symbol)
    return bool(module) and bool(attribute) and "." not in attribute


def _is_type_constructor(symbol: str) -> bool:
    module, _, attribute = symbol.rpartition(".")
    return (
        (module == _TYPE_MODULE and bool(attribute))
        or bool(_IR_TYPE_GET.fullmatch(symbol))
        or symbol in _TYPE_BUILDERS
    )


def _deletions(model: SemanticModel, stmts: list[ast.Assign]) -> list[Edit]:
    """One edit per statement; a block is never emptied in one round (its last statement
    becomes ``pass`` in the next one)."""
    if not stmts:
        return []
    blocks = _blocks(model.tree, stmts)
    taken: Counter = Counter()
    edits = []
    for stmt in sorted(stmts, key=lambda s: (s.lineno, s.col_offset)):
        block = blocks.get(id(stmt))
        if block is None:
            continue
        taken[id(block)] += 1
        if len(block) > 1 and taken[id(block)] == len(block):
            continue
        edits.append(delete_statement(model, stmt))
    return edits


def _blocks(tree: ast.Module, stmts: list[ast.stmt]) -> dict[int, list[ast.stmt]]:
    wanted = {id(s) for s in stmts}
    found: dict[int, list[ast.stmt]] = {}
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list):
                for stmt in block:
                    if id(stmt) in wanted:
                        found[id(stmt)] = block
    return found
