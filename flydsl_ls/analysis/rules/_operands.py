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
from flydsl_ls.analysis.model.valueflow import is_raw_builder, value_kind
from flydsl_ls.analysis.rules._parameter_kind import parameter_arguments

# Methods of a raw or fx value that give an IR value (ArithValue's, and fx numerics' proxies).
_IR_METHODS = {
    "ir_value", "to", "bitcast", "index_cast", "extui", "extsi", "trunci", "extf", "truncf", "shrui",
    "select", "maximumf", "minimumf", "exp2", "rsqrt", "addf", "shuffle_xor", "with_signedness",
}
# Calls that give an IR value whatever they are given.
_IR_CALLS = {"fx.as_ir_value", "fx.gpu.shuffle", "fx.gpu.shuffle_xor", "fx.gpu.shuffle_up", "fx.gpu.shuffle_down",
             "fx.gpu.shuffle_idx"}
# Modules whose every function builds ops (``fx.arith``: DSL helpers and raw ops alike),
# and the buffer_ops shims' loads.
_IR_MODULES = ("fx.arith.", "fx.math.", "fx.rocdl.", "shim.buffer_ops.buffer_load")
_MAX_DEPTH = 6


def surely_ir(model: SemanticModel, expr: ast.expr) -> bool:
    """``expr`` holds an IR value of either kind on every path (so never a Python number)."""
    return _Reader(model).ir(expr, 0)


class _Reader:
    def __init__(self, model: SemanticModel):
        self.model = model
        self.pending: set[int] = set()  # bindings being read: a loop-carried name

    def ir(self, expr: ast.expr, depth: int) -> bool:
        kind = value_kind(self.model.type_of(expr))
        if kind in ("raw", "fx"):
            return True
        if kind == "python" or depth > _MAX_DEPTH:
            return False
        if isinstance(expr, ast.BinOp):
            # An IR value on either side: the other is coerced (a Python number) or the
            # result is an IR value of one kind or the other.
            return self.ir(expr.left, depth + 1) or self.ir(expr.right, depth + 1)
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

    def _call(self, call: ast.Call, depth: int) -> bool:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in _IR_METHODS and self.ir(func.value, depth + 1):
            return True
        symbol = self.model.resolve(func) or ""
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
