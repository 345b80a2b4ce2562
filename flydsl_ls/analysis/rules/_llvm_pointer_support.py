"""Reading `!llvm.ptr` types off the source, for the rules on raw llvm pointers (FLY202).

``llvm_address_space`` follows a type expression to the LLVM address-space number it
spells: ``ir.Type.parse("!llvm.ptr<3>")`` (a literal, or a string constant), ``llvm.
PointerType.get(address_space=1)``, a name bound to either (here, in an enclosing
function or at module level: a lazily set global that starts as ``None`` counts), and a
call of an argument-less function of this file that returns one. Anything else (an
f-string, a parameter, a dict entry) is unknown: None.
"""

from __future__ import annotations

import ast
import re

from flydsl_ls.analysis.model.semantic import SemanticModel

# LLVM address space on AMDGPU -> the fx.AddressSpace member that lowers to it (FlyDSL's
# ROCm backend, `llvm_address_space`, 0.3.x to 0.5.0). 5 (private) is fx's Register, which
# fx.inttoptr refuses; 7/8 (buffer) have no fx pointer.
FX_ADDRESS_SPACES = {0: "Generic", 1: "Global", 3: "Shared"}

_PTR_TYPE = re.compile(r"^\s*!llvm\.ptr(?:\s*<\s*(\d+)\s*>)?\s*$")
_PARSE = "mlir.ir.Type.parse"
_POINTER_TYPE_GET = "mlir.llvm.PointerType.get"
_MAX_DEPTH = 6


def llvm_address_space(model: SemanticModel, expr: ast.expr, depth: int = 0) -> int | None:
    """The address space of the `!llvm.ptr` type ``expr`` builds, or None when unknown."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, ast.Name):
        return _bound_space(model, expr, depth)
    if not isinstance(expr, ast.Call) or any(isinstance(a, (ast.Starred)) for a in expr.args):
        return None
    symbol = model.resolve(expr.func)
    if symbol == _PARSE and len(expr.args) == 1 and not expr.keywords:
        text = constant_value(model, expr.args[0], str)
        match = _PTR_TYPE.match(text) if text is not None else None
        return int(match.group(1) or 0) if match else None
    if symbol == _POINTER_TYPE_GET:
        if any(k.arg not in ("address_space", "context") for k in expr.keywords) or len(expr.args) > 1:
            return None
        given = [k.value for k in expr.keywords if k.arg == "address_space"] + expr.args
        return constant_value(model, given[0], int) if given else 0
    if not expr.args and not expr.keywords and isinstance(expr.func, ast.Name):
        returned = _sole_return(model, expr.func)
        return llvm_address_space(model, returned, depth + 1) if returned is not None else None
    return None


def constant_value(model: SemanticModel, expr: ast.expr, kind: type, depth: int = 0):
    """The ``kind`` constant ``expr`` is (a literal, or a name bound only to one), else None."""
    if isinstance(expr, ast.Constant):
        value = expr.value
        return value if isinstance(value, kind) and not isinstance(value, bool) else None
    if isinstance(expr, ast.Name) and depth < _MAX_DEPTH:
        values = {constant_value(model, v, kind, depth + 1) for v in _assigned_values(model, expr)}
        return values.pop() if len(values) == 1 else None
    return None


def _bound_space(model: SemanticModel, name: ast.Name, depth: int) -> int | None:
    values = _assigned_values(model, name)
    set_values = [v for v in values if not (isinstance(v, ast.Constant) and v.value is None)]
    if not set_values:
        return None
    spaces = {llvm_address_space(model, v, depth + 1) for v in set_values}
    return spaces.pop() if len(spaces) == 1 else None


def _assigned_values(model: SemanticModel, name: ast.Name) -> list[ast.expr]:
    """The values every binding a read of ``name`` may see was assigned; [] if one of them
    is not a plain assignment (a parameter, a loop target, an import...)."""
    bindings = model.reaching_bindings(name)
    if not bindings or any(b.kind not in ("assign", "annassign") or b.value is None for b in bindings):
        return []
    return [b.value for b in bindings]


def _sole_return(model: SemanticModel, func: ast.Name) -> ast.expr | None:
    """What a function of this file without parameters returns, when its body is only that."""
    bindings = model.reaching_bindings(func)
    if len(bindings) != 1 or bindings[0].kind != "def":
        return None
    definition = bindings[0].node
    if not isinstance(definition, ast.FunctionDef) or definition.decorator_list:
        return None
    args = definition.args
    if args.args or args.posonlyargs or args.kwonlyargs or args.vararg or args.kwarg:
        return None
    body = definition.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # docstring
    if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
        return body[0].value
    return None
