"""The GPU arch the code at a node is built for, for the arch-dependent rules (FLY401, FLY601).

The file's own arch (``AnalysisOptions.target_arch``: a per-file setting, its examples'
arch or a ``gfx...`` in its name, else ``--target-arch``; see flydsl_ls/file_arch.py) is
narrowed by the arch guards around the code, as kernels built for several archs write them:

    if arch == "gfx950": ...            if str(arch).startswith("gfx95"): ...
    if "gfx95" in arch: ...             if arch in ("gfx942",): ...
    if is_gfx950: ...                   if const_expr(is_gfx950): ...
    if not gpu_arch.startswith("gfx950"):
        raise RuntimeError(...)         # what follows is gfx950

Inside a guard the arch is the file's when the guard admits it, else the one arch the guard
admits, else unknown (None): code the guard keeps from the file's arch is not judged for it.
"""

from __future__ import annotations

import ast
import re

from flydsl_ls.analysis.model.arches import KNOWN_ARCHES
from flydsl_ls.analysis.model.locate import spelled_name
from flydsl_ls.analysis.rules.context import RuleContext

ALL = frozenset(KNOWN_ARCHES)  # the arches a guard can name
_FLAG = re.compile(r"^_?(?:is|use)_(gfx[0-9a-z]+)$", re.I)  # is_gfx950, _is_gfx12
_ENDS = (ast.Raise, ast.Return, ast.Continue, ast.Break)


def arch_at(ctx: RuleContext, node: ast.AST | None = None) -> str | None:
    """The arch of the code at ``node`` (the node being visited: its ancestors are
    ``ctx.parents``)."""
    default = (ctx.options.target_arch or "").split(":")[0].lower() or None
    allowed = ALL
    chain = [*ctx.parents, node] if node is not None else list(ctx.parents)
    for parent, child in zip(chain, chain[1:]):
        allowed = allowed & _admitted(parent, child)
    if allowed is ALL or allowed == ALL:
        return ctx.options.target_arch
    if default in allowed:
        return ctx.options.target_arch
    return next(iter(allowed)) if len(allowed) == 1 else None


def why_unknown(ctx: RuleContext, reason: str) -> str:
    """A reason that asks for a ``target-arch``, said right where one is set but the guards
    around the code rule it out (code for the other arches of a kernel built for several)."""
    target = ctx.options.target_arch
    if not target or "set `target-arch`" not in reason:
        return reason
    head = reason.split(": set `target-arch`")[0]
    return f"{head}; the arch guards around this code rule out the target arch {target} and name no single other"


def _admitted(parent: ast.AST, child: ast.AST) -> frozenset[str]:
    """The arches ``child`` runs for, as far as ``parent`` says."""
    allowed = ALL
    if isinstance(parent, (ast.If, ast.IfExp)):
        branches = guard(parent.test)
        if branches is not None:
            inside = child in parent.body if isinstance(parent.body, list) else child is parent.body
            if inside:
                allowed = branches[0]
            elif child is not parent.test:
                allowed = branches[1]
    if isinstance(parent, ast.Module):
        return allowed  # a guard at module level stays out: the editor re-analyses statements apart
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and child in block:
            allowed = allowed & _after(block[: block.index(child)])
    return allowed


def _after(statements: list[ast.stmt]) -> frozenset[str]:
    """What earlier statements of a block leave: an ``assert`` guard, or an ``if`` guard whose
    body leaves the block (``raise``/``return``) with no ``else``."""
    allowed = ALL
    for stmt in statements:
        branches = None
        if isinstance(stmt, ast.Assert):
            branches = guard(stmt.test)
            holds = branches[0] if branches else None
        elif isinstance(stmt, ast.If) and not stmt.orelse and stmt.body and isinstance(stmt.body[-1], _ENDS):
            branches = guard(stmt.test)
            holds = branches[1] if branches else None  # past it only where the test was false
        if branches is not None:
            allowed = allowed & holds
    return allowed


def guard(test: ast.expr) -> tuple[frozenset[str], frozenset[str]] | None:
    """The arches for which ``test`` can be true, and those for which it can be false (None
    when it tests no arch)."""
    found = _branches(test)
    return None if found == (ALL, ALL) else found


def _branches(test: ast.expr) -> tuple[frozenset[str], frozenset[str]]:
    if isinstance(test, ast.Call) and spelled_name(test.func) == "const_expr" and len(test.args) == 1:
        return _branches(test.args[0])
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        true, false = _branches(test.operand)
        return false, true
    if isinstance(test, ast.BoolOp):
        parts = [_branches(value) for value in test.values]
        trues, falses = [p[0] for p in parts], [p[1] for p in parts]
        if isinstance(test.op, ast.And):  # true where every part is; false where any is
            return frozenset.intersection(*trues), frozenset.union(*falses)
        return frozenset.union(*trues), frozenset.intersection(*falses)
    exact = _leaf(test)
    return (ALL, ALL) if exact is None else (exact, ALL - exact)


def _leaf(test: ast.expr) -> frozenset[str] | None:
    """The arches for which a single arch test holds."""
    if isinstance(test, ast.Name):
        found = _FLAG.match(test.id)
        return _prefixed((found.group(1).lower(),)) if found else None
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "startswith":
        prefixes = _strings(test.args[0]) if len(test.args) == 1 else None
        return _prefixed(prefixes) if prefixes else None
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, op, right = test.left, test.ops[0], test.comparators[0]
        if isinstance(op, (ast.Eq, ast.NotEq)):
            names = _strings(right) or _strings(left)
            if names and len(names) == 1 and names[0].startswith("gfx"):
                exact = frozenset(a for a in ALL if a == names[0])
                return exact if isinstance(op, ast.Eq) else ALL - exact
        if isinstance(op, (ast.In, ast.NotIn)):
            needle = _strings(left)
            if needle and len(needle) == 1 and needle[0].startswith("gfx") and not _strings(right):
                found = frozenset(a for a in ALL if needle[0] in a)  # "gfx95" in arch
            else:
                names = _strings(right)
                if not names or not all(n.startswith("gfx") for n in names):
                    return None
                found = frozenset(a for a in ALL if a in names)  # arch in ("gfx942",)
            return found if isinstance(op, ast.In) else ALL - found
    return None


def _prefixed(prefixes) -> frozenset[str] | None:
    if not all(p.lower().startswith("gfx") for p in prefixes):
        return None
    return frozenset(a for a in ALL if a.startswith(tuple(p.lower() for p in prefixes)))


def _strings(node: ast.expr) -> tuple[str, ...] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (node.value.lower(),)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and node.elts:
        values = [e.value.lower() for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        return tuple(values) if len(values) == len(node.elts) else None
    return None


