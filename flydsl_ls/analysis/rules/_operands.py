"""Is an operand surely an IR value (a raw ``ir.Value``/``ArithValue`` or an fx value),
never a Python number? What an operator gives when a fix turns its right operand fx
depends only on that (FlyDSL 0.3.1 and 0.5.0 alike, tests/test_operand_kinds.py):

| left operand | right operand raw (before) | right operand fx (after) |
|---|---|---|
| ``ArithValue`` | ``ArithValue``, its op | ``ArithValue``, the same op |
| fx value | fx value, fx's op | fx value, the same op |
| Python number | ``ArithValue``, ArithValue's op | fx value, fx's op |

The left operand picks the operator, and an IR value on the left gives a result of the
kind it gave before; only a Python number on the left changes it.
"""

from __future__ import annotations

import ast

from flydsl_ls.analysis.model.semantic import SemanticModel
from flydsl_ls.analysis.model.valueflow import Sink, Use, is_raw_builder, value_kind
from flydsl_ls.analysis.rules._parameter_kind import parameter_arguments

# Methods of a raw or fx value that give an IR value (ArithValue's, and fx numerics' proxies).
_IR_METHODS = {
    "ir_value", "to", "bitcast", "index_cast", "extui", "extsi", "trunci", "extf", "truncf", "shrui",
    "select", "maximumf", "minimumf", "exp2", "rsqrt", "addf", "shuffle_xor", "with_signedness",
}
# Of those, the names Python values have too (torch tensors: `t.to(...)`, `t.exp2()`).
_SHARED_NAMES = {"to", "exp2", "rsqrt"}
# Calls that give an IR value whatever they are given.
_IR_CALLS = {"fx.as_ir_value", "fx.gpu.shuffle", "fx.gpu.shuffle_xor", "fx.gpu.shuffle_up", "fx.gpu.shuffle_down",
             "fx.gpu.shuffle_idx"}
# Modules whose every function builds ops (``fx.arith``: DSL helpers and raw ops alike),
# and the buffer_ops shims' loads.
_IR_MODULES = ("fx.arith.", "fx.math.", "fx.rocdl.", "shim.buffer_ops.buffer_load")
# fx.arith's DSL helpers that give a raw value whatever they get (the raw ops are typed raw).
_RAW_ARITH_HELPERS = {"constant", "index", "index_cast", "unwrap", "_to_raw", "ArithValue"}
_MAX_DEPTH = 6
# Comparisons an IR value overloads (`is`, `in` stay Python's).
_RICH = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def surely_ir(model: SemanticModel, expr: ast.expr) -> bool:
    """``expr`` holds an IR value of either kind on every path (so never a Python number)."""
    return _surely(model, expr, raw=False)


def surely_raw(model: SemanticModel, expr: ast.expr) -> bool:
    """``expr`` holds a raw IR value (an ``ArithValue``) on every path."""
    return _surely(model, expr, raw=True)


class _Answers:
    """``_surely``'s answers about one model's expressions, kept with the model: FLY103 and
    FLY301 ask again of the same operands (837 questions, 304 distinct, on aiter's 5.7k-line
    MoE kernel)."""

    def __init__(self, model: SemanticModel):
        self.found: dict[tuple[int, bool], tuple[ast.expr, bool]] = {}


def _surely(model: SemanticModel, expr: ast.expr, raw: bool) -> bool:
    answers = model.facts(_Answers).found
    known = answers.get((id(expr), raw))
    if known is not None and known[0] is expr:  # the node is held: its id is not another's
        return known[1]
    found = _Reader(model, raw).ir(expr, 0)
    answers[(id(expr), raw)] = (expr, found)
    return found


def kind_as_it_was(model: SemanticModel, use: Use, *, vector: bool = False) -> bool:
    """The value meets an operator on the right of an operand that surely holds an IR value:
    that operand picks the operator, and the result is of the kind it was whatever the
    value's kind (the table above): a fix that changes the value's kind stops there.
    (A left operand the fix changes too is a use of its own, followed on its own.)
    ``vector``: the value is a vector, which an fx scalar on the left hands to the vector's
    own reflected operator (an fx.Vector where it was raw): only a raw left operand keeps it."""
    holder = use.holder
    if use.sink is not Sink.OPERATOR:
        return False
    if isinstance(holder, ast.BinOp):
        right = holder.right
    elif isinstance(holder, ast.Compare) and len(holder.comparators) == 1 and isinstance(holder.ops[0], _RICH):
        right = holder.comparators[0]
    else:
        return False
    return use.node is right and (surely_raw(model, holder.left) if vector else surely_ir(model, holder.left))


# fx functions that type their result like their first operand, in 0.3.1 and 0.5.0 alike
# (`dsl_math_wrap_result`); fx.max/min/ceildiv type it in 0.5.0 whatever they get.
_EXEMPLAR_TYPED = {
    "fx.arith.maximumf", "fx.arith.minimumf", "fx.arith.maxnumf", "fx.arith.minnumf", "fx.arith.shrui",
    "fx.arith.cmpi", "fx.arith.cmpf",
}


class _Reader:
    def __init__(self, model: SemanticModel, raw: bool):
        self.model = model
        self.raw = raw  # raw values only, not either kind
        self.pending: set[int] = set()  # bindings being read: a loop-carried name

    def ir(self, expr: ast.expr, depth: int) -> bool:
        kind = value_kind(self.model.type_of(expr))
        if kind == "raw" or (kind == "fx" and not self.raw):
            return True
        if kind in ("python", "fx") or depth > _MAX_DEPTH:
            return False
        if isinstance(expr, ast.BinOp):
            return self._operator(expr.left, expr.right, depth)
        if isinstance(expr, ast.Compare) and len(expr.comparators) == 1 and isinstance(expr.ops[0], _RICH):
            return self._operator(expr.left, expr.comparators[0], depth)  # (`a < b < c` is Python's `and`)
        if isinstance(expr, ast.UnaryOp):
            return not isinstance(expr.op, ast.Not) and self.ir(expr.operand, depth + 1)
        if isinstance(expr, ast.IfExp):
            return self.ir(expr.body, depth + 1) and self.ir(expr.orelse, depth + 1)
        if isinstance(expr, ast.Call):
            return self._call(expr, depth)
        if isinstance(expr, ast.Attribute) and expr.attr == "result" and isinstance(expr.value, ast.Call):
            return is_raw_builder(self.model.resolve(expr.value.func) or "")  # `arith.AddFOp(a, b).result`
        if isinstance(expr, ast.Name):
            return self._name(expr, depth)
        return False

    def _operator(self, left: ast.expr, right: ast.expr, depth: int) -> bool:
        """A binary operator or a single comparison, which picks its operator alike."""
        if self.raw:
            # The left operand picks the operator: raw on the left, or a Python number beside a raw one.
            kind = value_kind(self.model.type_of(left))
            return self.ir(left, depth + 1) or (kind == "python" and self.ir(right, depth + 1))
        # An IR value on either side: the other is coerced (a Python number) or the
        # result is an IR value of one kind or the other.
        return self.ir(left, depth + 1) or self.ir(right, depth + 1)

    def _call(self, call: ast.Call, depth: int) -> bool:
        func = call.func
        symbol = self.model.resolve(func) or ""
        if self.raw:
            if (isinstance(func, ast.Attribute) and func.attr == "ir_value") or symbol == "fx.as_ir_value":
                return True
            if not symbol and isinstance(func, ast.Attribute) and func.attr in _IR_METHODS and func.attr != "to":
                return self.ir(func.value, depth + 1)  # ArithValue's methods give raw values
            if symbol in _EXEMPLAR_TYPED or symbol.startswith("fx.math."):
                return bool(call.args) and self.ir(call.args[0], depth + 1)
            return symbol.startswith(("fx.rocdl.", "shim.buffer_ops.buffer_load")) or (
                symbol.startswith("fx.arith.") and symbol.rpartition(".")[2] in _RAW_ARITH_HELPERS
            )
        if isinstance(func, ast.Attribute) and func.attr in _IR_METHODS and (
            func.attr not in _SHARED_NAMES or self.ir(func.value, depth + 1)
        ):
            return True  # (a method only IR values have says its receiver is one)
        return symbol in _IR_CALLS or symbol.startswith(_IR_MODULES)

    def _name(self, name: ast.Name, depth: int) -> bool:
        bindings = self.model.reaching_bindings(name)
        checked = False
        for binding in bindings:
            if id(binding) in self.pending:
                continue  # read again in its own loop: the other bindings decide
            checked = True
            self.pending.add(id(binding))
            try:
                if not self._binding(binding, depth):
                    return False
            finally:
                self.pending.discard(id(binding))
        return checked

    def _binding(self, binding, depth: int) -> bool:
        if binding.kind in ("assign", "annassign", "walrus") and binding.value is not None:
            return self.ir(binding.value, depth + 1)
        if binding.kind == "augassign" and binding.value is not None:
            node = binding.value  # `x += v`: IR when v is (or x was)
            return self.ir(node.value, depth + 1) or self.ir(node.target, depth + 1)
        if binding.kind == "param":
            arguments = parameter_arguments(self.model, binding)
            return bool(arguments) and all(self.ir(a, depth + 1) for a in arguments)
        return False
