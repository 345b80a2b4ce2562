"""The kind of value a helper's parameter holds, read from the helper's callers (FLY102).

A parameter has no type of its own; when every call of the helper is known (a helper
nested in a kernel, or one no other project file mentions) and each passes a value of the
same kind, the parameter is of that kind.
"""

from __future__ import annotations

import ast

from flydsl_ls.analysis.model.scopes import Binding
from flydsl_ls.analysis.model.semantic import SemanticModel
from flydsl_ls.analysis.model.valueflow import value_kind
from flydsl_ls.analysis.rules.base import call_argument

# Parameters handed on from caller to caller, followed this deep.
_MAX_DEPTH = 3


def parameter_kind(model: SemanticModel, name: ast.Name, depth: int = 0) -> str:
    """"fx", "raw", "python" or "unknown" (see ``value_kind``) for a read of a parameter:
    the kind every caller passes for it."""
    bindings = model.reaching_bindings(name)
    if len(bindings) != 1 or bindings[0].kind != "param" or depth > _MAX_DEPTH:
        return "unknown"
    param = bindings[0]
    function = param.scope.node
    calls = _all_calls(model, function) if param.param_index is not None else None
    if not calls:
        return "unknown"
    kinds = set()
    for call in calls:
        arg = call_argument(call, param.param_index, param.name)
        if arg is None:
            return "unknown"  # the default, or a starred argument
        kind = value_kind(model.type_of(arg))
        if kind == "unknown" and isinstance(arg, ast.Name):
            kind = parameter_kind(model, arg, depth + 1)
        kinds.add(kind)
        if len(kinds) > 1 or "unknown" in kinds:
            return "unknown"
    return kinds.pop()


def parameter_arguments(model: SemanticModel, param: Binding) -> list[ast.expr] | None:
    """What the calls pass for the parameter ``param``, when every call is known and
    passes it (None otherwise)."""
    if param.kind != "param" or param.param_index is None:
        return None
    calls = _all_calls(model, param.scope.node)
    if not calls:
        return None
    arguments = [call_argument(call, param.param_index, param.name) for call in calls]
    return None if any(a is None for a in arguments) else arguments


def _all_calls(model: SemanticModel, function: ast.AST) -> list[ast.Call] | None:
    """The calls of ``function`` when they are all known: it is called by its name only,
    and from this file only (nested, or no other project file mentions its name)."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function.decorator_list:
        return None
    scope = model.function_scope(function)
    outer = scope.parent if scope is not None else None
    if outer is None or outer.kind == "class":
        return None  # a method: its callers are not found by name
    if outer.kind == "module" and (model.project is None or model.project.mentioned_elsewhere(function.name)):
        return None
    definition = next((b for b in outer.bindings.get(function.name, ()) if b.node is function), None)
    if definition is None:
        return None
    calls = model.calls_to(function)
    reads = model.uses_of(definition)
    if len(calls) != len(reads) or any(
        call.keywords and any(k.arg is None for k in call.keywords) for call in calls
    ):
        return None  # also passed as a value, or called with **kwargs
    return calls
