"""Where a value goes: the consumers of an expression's result, followed through the local
names it is assigned to, the containers it is packed in, the helpers it is passed to and the
helpers' returns.

A fix that changes the kind of value an expression produces (a raw ``ir.Value``, an fx
value, a Python scalar) is only as safe as its consumers let it be, as FlyDSL 0.5.0 has it:

- a raw MLIR builder (``arith.maxsi``, ``scf.for_``, ``llvm.AtomicRMWOp``, raw ``rocdl``
  ops) takes only an ``ir.Value`` ("Operand 1 ... must be a Value" for an fx value); an
  ``ArithValue`` and an ``fx.Vector`` are ``ir.Value``s;
- ``ArithValue`` methods (``index_cast``, ``extui``, ``bitcast``...) do not exist on fx
  scalars, and ``.ir_value()`` does not exist on raw values;
- operators differ by kind: an integer ``ArithValue`` divides and shifts unsigned and
  compares signed, ``fx.Int32`` divides ``/`` as floats, ``fx.Index`` compares unsigned;
- the condition of an ``if``/``while`` in a traced function becomes ``scf.if`` when it is an
  IR value and stays Python when it is a Python value;
- fx APIs and the DSL's converters (``fx.Int32(v)``, ``ArithValue(v)``, ``_to_raw(v)``, the
  ``fx.arith`` helpers that unwrap their operands) take either kind.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum

from flydsl_ls.analysis.model import fxtypes as T
from flydsl_ls.analysis.model.fxtypes import FxType
from flydsl_ls.analysis.model.locate import spelled as spelled_callee
from flydsl_ls.analysis.model.semantic import SemanticModel

# fx.arith functions written by the DSL: they unwrap fx operands themselves. The rest of
# fx.arith is the raw arith dialect, star-re-exported.
_ARITH_WRAPPERS = {
    "ArithValue", "_to_raw", "unwrap", "constant", "constant_vector", "index", "index_cast",
    "int_to_fp", "select", "sitofp", "trunc_f", "andi", "xori", "shli", "cmpi", "cmpf", "max",
    "min", "ceildiv", "maxnumf", "minnumf", "maximumf", "minimumf", "shrui", "fastmath",
}
# fx.rocdl functions and classes written by the DSL (flydsl/expr/rocdl/{universal,utils,enum}.py
# in 0.5.0); the rest of fx.rocdl is the raw rocdl dialect, star-re-exported.
_ROCDL_WRAPPERS = {
    "AddressSpace", "BufferAtomic", "BufferAtomicAdd", "BufferAtomicMax", "BufferAtomicMin",
    "BufferAtomicPkAdd", "BufferCopy", "BufferCopy128b", "BufferCopy16b", "BufferCopy32b",
    "BufferCopy64b", "BufferCopy8b", "BufferCopyLDS", "BufferCopyLDS128b", "BufferCopyLDS32b",
    "BufferCopyLDS64b", "MFMA", "SyncScope", "WMMA", "asyncmark", "ballot",
    "buffer_load_to_lds", "cluster_load_async_to_lds", "cvt_pk_f32_fp8", "cvt_pk_fp8_f32",
    "cvt_scalef32_pk_bf16_fp4", "cvt_scalef32_pk_f32_fp4", "cvt_scalef32_pk_fp4_f32",
    "ds_bpermute", "get_buffer_rsrc", "lds_transpose_load", "make_buffer_ptr",
    "make_buffer_tensor", "perm_b32", "rcp", "readfirstlane", "readlane", "s_buffer_load",
    "s_wait_asynccnt", "s_waitcnt", "sched_barrier", "sched_group_barrier", "wait_asyncmark",
    "wave_id",
}
# Methods both an fx scalar and an ArithValue have (fx numerics proxy these).
SHARED_METHODS = {
    "select", "maximumf", "minimumf", "exp2", "shuffle_xor", "shrui", "addf",
}
_OPERATORS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
    ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|",
    ast.BitXor: "^", ast.MatMult: "@", ast.USub: "-", ast.UAdd: "+", ast.Invert: "~",
}
_MAX_DEPTH = 4
# fx.arith helpers whose result is typed like their operands (the others unwrap them and
# give a raw value whatever they get).
_KIND_KEEPING_ARITH = {
    f"{module}.{name}"
    for module in ("fx.arith", "fx")  # `fx.max` is `fx.arith.max` re-exported
    for name in ("max", "min", "maxnumf", "minnumf", "maximumf", "minimumf", "ceildiv", "shrui", "cmpi", "cmpf")
} | {"fx.gpu.shuffle", "fx.gpu.shuffle_xor", "fx.gpu.shuffle_up", "fx.gpu.shuffle_down", "fx.gpu.shuffle_idx"}


def keeps_kind(symbol: str) -> bool:
    """An fx function whose result is of its (first) operand's kind: raw in, raw out."""
    return symbol in _KIND_KEEPING_ARITH or symbol.startswith("fx.math.")


class Sink(Enum):
    RAW_BUILDER = "a raw MLIR builder"
    METHOD = "a method or attribute"
    OPERATOR = "an operator"
    CONDITION = "a Python condition"
    ANY_VALUE = "an fx API or converter"
    PASSED_ON = "code that cannot be followed"
    DISCARDED = "nothing"


@dataclass(frozen=True)
class Use:
    sink: Sink
    node: ast.AST  # the expression standing at the use
    what: str  # the callee, method or operator
    symbol: str | None = None  # the callee's canonical symbol, when resolved
    other: ast.expr | None = None  # an operator's other operand
    value: ast.expr | None = None  # the expression whose value is used (``node`` may pack it)
    holder: ast.AST | None = None  # the operator or call it is an operand of

    def describe(self) -> str:
        """The use in a message: "`scf.for_` on line 12", "a list comprehension on line 40"."""
        if self.what == TOO_FAR:
            return f"code too many calls and assignments away to follow (past line {self.node.lineno})"
        place = _PLACES.get(self.what)
        if place is not None:
            return f"{place} on line {self.node.lineno}"
        return f"`{self.what}` on line {self.node.lineno}"


TOO_FAR = "uses too far away to follow"
# Where a value goes that is no call, name or operator (the syntax node holding it).
_PLACES = {
    "module": "module-level code", "assignment": "an assignment to several targets or an attribute",
    "comprehension": "a comprehension", "ListComp": "a list comprehension", "SetComp": "a set comprehension",
    "DictComp": "a dict comprehension", "GeneratorExp": "a generator expression", "Dict": "a dict",
    "Set": "a set", "Subscript": "a subscript", "Slice": "a slice", "arguments": "a default argument",
    "FormattedValue": "an f-string", "JoinedStr": "an f-string", "Lambda": "a lambda", "Yield": "a yield",
    "YieldFrom": "a yield", "Await": "an await", "For": "a for loop's iterable", "AsyncFor": "a for loop's iterable",
    "With": "a with statement", "AsyncWith": "a with statement", "withitem": "a with statement",
    "List": "a list", "Tuple": "a tuple", "IfExp": "a conditional expression", "Starred": "a starred expression",
    "Raise": "a raise", "Delete": "a del", "AugAssign": "an augmented assignment", "Match": "a match",
}


def value_uses(
    model: SemanticModel,
    expr: ast.expr,
    parents: dict[int, ast.AST],
    *,
    through_operators: bool = False,
    transparent: frozenset[str] = frozenset(),
    stop: Callable[[Use], bool] | None = None,
) -> list[Use]:
    """Every consumer of the value ``expr`` computes; ``parents`` maps the nodes around it
    (``model.parent_map`` of its enclosing function). With ``through_operators``, an
    operator is a use and so are the consumers of its result (a value of the same kind).
    Calls of the ``transparent`` symbols are uses whose result is followed too, as if they
    were not there (a wrapper the same fix pass may drop). A use for which ``stop`` is true
    (an operator, a kind-keeping call, a local helper's argument, a return) is reported and
    its outcome not followed: the caller handles the value where it stands."""
    return _Follower(model, through_operators, transparent, stop).uses(expr, parents, 0)


def kind_change_blocker(uses: list[Use], new: str, *, operators: tuple[str, ...] = ()) -> Use | None:
    """The first use that cannot be traced once the value becomes ``new`` ("fx", "raw"), or
    that would mean something else entirely (``operators``, e.g. ``/`` on an integer that
    becomes an fx integer: a float division)."""
    for use in uses:
        if new == "fx" and use.sink is Sink.RAW_BUILDER:
            return use
        if use.sink is Sink.OPERATOR and use.what.rstrip("=") in operators:
            return use
        if use.sink is Sink.METHOD and use.what not in SHARED_METHODS:
            if new == "fx" and use.what not in ("ir_value", "to"):
                return use
            if new == "raw" and use.what in ("ir_value", "to"):
                return use
    return None


def fx_result_blocker(uses: list[Use]) -> Use | None:
    """For a fix that turns a raw value into an fx one where its consumers cannot all be
    followed: the first use that cannot take an fx value, or whose outcome is not followed
    (code we cannot see, or an `fx.arith` helper, whose result keeps its operand's kind)."""
    blocker = kind_change_blocker(uses, "fx")
    if blocker is not None:
        return blocker
    return next(
        (
            u
            for u in uses
            if u.sink is Sink.PASSED_ON
            or (u.sink is Sink.ANY_VALUE and u.symbol is not None and keeps_kind(u.symbol))
        ),
        None,
    )


def kind_change_hazard(uses: list[Use]) -> Use | None:
    """The first use whose meaning may differ for another kind of value (operators,
    conditions, code we cannot follow)."""
    return next(
        (u for u in uses if u.sink in (Sink.OPERATOR, Sink.CONDITION, Sink.PASSED_ON, Sink.METHOD)),
        None,
    )


def value_kind(kind: FxType) -> str:
    """The kind of a value: "python", "raw" (an ir.Value, ArithValue included), "fx" or "unknown"."""
    if kind.is_python or kind.name == "constexpr":
        return "python"
    if kind.is_raw or kind.name == T.ARITH_VALUE:
        return "raw"
    if kind.is_fx_scalar or kind.name == T.VECTOR:
        return "fx"
    return "unknown"


class _Follower:
    def __init__(self, model: SemanticModel, through_operators: bool, transparent: frozenset[str], stop):
        self.model = model
        self.through_operators = through_operators
        self.transparent = transparent
        self.stop = stop or (lambda use: False)
        self.seen: set[int] = set()

    def uses(self, expr: ast.expr, parents: dict[int, ast.AST], depth: int) -> list[Use]:
        if id(expr) in self.seen:
            return []  # a cycle: its uses are already being followed
        if depth > _MAX_DEPTH:
            return [Use(Sink.PASSED_ON, expr, TOO_FAR, value=expr)]
        self.seen.add(id(expr))
        # The uses met here are uses of ``expr``; those met further on name their own value.
        return [u if u.value is not None else replace(u, value=expr) for u in self._uses(expr, parents, depth)]

    def _uses(self, expr: ast.expr, parents: dict[int, ast.AST], depth: int) -> list[Use]:
        child, parent = expr, parents.get(id(expr))
        while isinstance(parent, (ast.List, ast.Tuple, ast.Starred, ast.keyword)) or (
            isinstance(parent, ast.IfExp) and child is not parent.test
        ):
            child, parent = parent, parents.get(id(parent))  # packed: the container's consumer
        if child is not expr and not isinstance(child, ast.keyword):
            # Beyond a name or a helper, the container is followed, not the value in it.
            packed = Use(Sink.PASSED_ON, child, type(child).__name__, value=expr, holder=parent)
            if not (isinstance(parent, ast.Call) and self.model.resolve(parent.func)) and self.stop(packed):
                return [packed]
        if isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare)):
            what = "comparison" if isinstance(parent, ast.Compare) else _OPERATORS.get(type(parent.op), "operator")
            use = Use(Sink.OPERATOR, child, what, other=_other_operand(parent, child), value=expr, holder=parent)
            if self.through_operators and not isinstance(getattr(parent, "op", None), ast.Not) and not self.stop(use):
                return [use, *self.uses(parent, parents, depth)]
            return [use]
        if isinstance(parent, ast.AugAssign):
            other = parent.target if child is parent.value else parent.value
            use = Use(Sink.OPERATOR, child, _OPERATORS.get(type(parent.op), "operator") + "=", other=other,
                      value=expr, holder=parent)
            if self.through_operators and isinstance(parent.target, ast.Name) and not self.stop(use):
                return [use, *self._bound(parent, parent.target, parents, depth)]  # `x += v` rebinds x
            return [use]
        if isinstance(parent, ast.BoolOp):
            return [Use(Sink.CONDITION, child, "and/or")]
        if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and child is parent.test:
            return [Use(Sink.CONDITION, child, type(parent).__name__.lower())]
        if isinstance(parent, ast.Attribute):
            call = parents.get(id(parent))
            use = Use(Sink.METHOD, child, parent.attr, value=expr, holder=call)
            if (
                self.through_operators and parent.attr in SHARED_METHODS and isinstance(call, ast.Call)
                and call.func is parent and not self.stop(use)
            ):
                return [use, *self.uses(call, parents, depth)]  # `x.maximumf(y)` keeps x's kind
            return [use]
        if isinstance(parent, ast.Subscript) and child is parent.value:
            return [Use(Sink.METHOD, child, "[]")]
        if isinstance(parent, ast.Call) and child is not parent.func:
            return self._argument(parent, child, expr, parents, depth)
        if isinstance(parent, ast.Expr):
            return [Use(Sink.DISCARDED, child, "expression statement")]
        if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and child is parent.value:
            return self._assigned(parent, child, parents, depth)
        if isinstance(parent, ast.Return):
            return self._returned(parent, child, expr, parents, depth)
        return [Use(Sink.PASSED_ON, child, type(parent).__name__ if parent else "module")]

    def _argument(self, call: ast.Call, arg: ast.expr, value: ast.expr, parents, depth) -> list[Use]:
        symbol = self.model.resolve(call.func)
        spelled = spelled_callee(call.func)
        if symbol is not None:
            if is_raw_builder(symbol):
                return [Use(Sink.RAW_BUILDER, arg, spelled, symbol)]
            if symbol.startswith(("fx", "flyc")):
                use = Use(Sink.ANY_VALUE, arg, spelled, symbol, value=value, holder=call)
                if (symbol in self.transparent or (self.through_operators and keeps_kind(symbol))) and not self.stop(use):
                    return [use, *self.uses(call, parents, depth)]  # `fx.maximumf(x, y)` keeps x's kind
                return [use]
        passed = Use(Sink.PASSED_ON, arg, spelled, symbol, value=value, holder=call)
        helper = self._local_function(call)
        if helper is not None and depth < _MAX_DEPTH and not self.stop(passed):
            param = _parameter_for(helper, call, arg)
            scope = self.model.function_scope(helper)
            if param is not None and scope is not None:
                binding = next((b for b in scope.bindings.get(param, ()) if b.kind == "param"), None)
                if binding is not None:
                    inner = self.model.parent_map(helper)
                    found = [u for use in self.model.uses_of(binding) for u in self.uses(use, inner, depth + 1)]
                    return found or [Use(Sink.DISCARDED, arg, spelled)]
        return [passed]

    def _assigned(self, statement, value: ast.expr, parents, depth) -> list[Use]:
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        if len(targets) != 1 or not isinstance(targets[0], ast.Name):
            return [Use(Sink.PASSED_ON, value, "assignment")]
        found = self._bound(value, targets[0], parents, depth)
        if isinstance(statement, ast.NamedExpr):
            found += self.uses(statement, parents, depth + 1)
        return found

    def _bound(self, value: ast.AST, target: ast.Name, parents, depth) -> list[Use]:
        """The uses of the name ``target`` binds to ``value``."""
        binding = self._binding_of_target(target, parents)
        if binding is None or binding.scope.kind not in ("function", "module"):
            return [Use(Sink.PASSED_ON, value, f"{target.id} =")]
        found: list[Use] = []
        local = binding.scope.kind == "function"  # its reads all lie under its function
        scope_parents = self.model.parent_map(binding.scope.node) if local else None
        for use in self.model.uses_of(binding):
            found += self.uses(use, scope_parents or self.model.parents_around(use), depth + 1)
        return found

    def _returned(self, statement: ast.Return, packed: ast.expr, value: ast.expr, parents, depth) -> list[Use]:
        returned = Use(Sink.PASSED_ON, packed, "return", value=value, holder=statement)
        if self.stop(returned):
            return [returned]
        function = parents.get(id(statement))
        while function is not None and not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            function = parents.get(id(function))
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) or function.decorator_list:
            return [returned]
        calls = self.model.calls_to(function)
        if not calls:
            return [returned]
        found: list[Use] = []
        for call in calls:
            found += self.uses(call, self.model.parents_around(call.func), depth + 1)
        return found

    def _binding_of_target(self, target: ast.Name, parents):
        node = parents.get(id(target))
        while node is not None and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            node = parents.get(id(node))
        scope = self.model.function_scope(node) if node is not None else self.model.module_scope
        if scope is None:
            return None
        return next((b for b in scope.bindings.get(target.id, ()) if b.node is target), None)

    def _local_function(self, call: ast.Call) -> ast.FunctionDef | None:
        if not isinstance(call.func, ast.Name):
            return None
        binding = self.model.binding_of(call.func)
        if binding is None or binding.kind != "def" or not isinstance(binding.node, ast.FunctionDef):
            return None
        return binding.node


def is_raw_builder(symbol: str) -> bool:
    """A call into the raw MLIR bindings: its operands must be ir.Values."""
    module, _, name = symbol.rpartition(".")
    if module.startswith("mlir."):
        return True
    if module == "fx.arith":
        return name not in _ARITH_WRAPPERS
    if module == "fx.rocdl":
        return name not in _ROCDL_WRAPPERS
    return False


def _other_operand(operator: ast.AST, operand: ast.AST) -> ast.expr | None:
    if isinstance(operator, ast.BinOp):
        return operator.right if operand is operator.left else operator.left
    if isinstance(operator, ast.Compare):
        return next((e for e in (operator.left, *operator.comparators) if e is not operand), None)
    return None


def _parameter_for(function: ast.FunctionDef, call: ast.Call, arg: ast.expr) -> str | None:
    params = [*function.args.posonlyargs, *function.args.args]
    if isinstance(arg, ast.keyword):
        return arg.arg
    for keyword in call.keywords:
        if keyword.value is arg:
            return keyword.arg
    for index, value in enumerate(call.args):
        if value is arg:
            if isinstance(value, ast.Starred) or index >= len(params):
                return None
            return params[index].arg
    return None
