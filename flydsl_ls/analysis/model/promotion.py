"""The type FlyDSL gives an operation on fx values, as its own tracer gives it (pure, no AST
walking).

FlyDSL promotes like C, not like its operands: `fx.Int16(x) + 1` is an Int32, `fx.Int32(x)
/ 2` a Float32, `fx.Int64(x) * 1.5` a Float64, `fx.Int32(x) + 3000000000` an Int64, and
`fx.Int32(x) + ArithValue(v)` an Int32. The table (`flydsl_ls/data/fx_promotion.json`) is
traced from each FlyDSL release we support by `scripts/build_promotion_table.py`;
tests/test_promotion.py traces again and checks the model never types a case otherwise.
A Python int is classed by the values the source gives it (``intbounds``)."""

from __future__ import annotations

import ast
import itertools
import json
from functools import lru_cache
from importlib import resources

SYMBOLS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
    ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
    ast.USub: "-", ast.UAdd: "+", ast.Invert: "~",
}
_I32 = range(-(2**31), 2**31)
_I64 = range(-(2**63), 2**63)
# The operand classes whose element type the model cannot see stand for all their traced
# samples (the first traced against everything, the others against fx scalars and Python
# numbers): FlyDSL's answer for the class is the one type that the samples it does not
# refuse give.
_ELEMENTS = ("f16", "f64", "i64", "index", "i1")
_SAMPLES = {
    "Vector": ("Vector", "Vector_i32"),
    "ArithValue": ("ArithValue", "ArithValue_f32", *(f"ArithValue_{e}" for e in _ELEMENTS)),
    "ir.Value": ("ir.Value", "ir.Value_f32", *(f"ir.Value_{e}" for e in _ELEMENTS)),
    # an int whose value is not known here: any of them
    "int_any": ("int", "int_neg", "int64", "int64_neg", "int_huge"),
}
_ANY_INT = "int_any"
# Answers that are no value: FlyDSL refused the case, or built an op that does not verify.
REFUSED = frozenset({"raises", "invalid IR"})


@lru_cache(maxsize=1)
def _table() -> dict[str, str | dict[str, str]]:
    """Case -> FlyDSL's answer, or {release: answer} where the releases differ."""
    text = resources.files("flydsl_ls.data").joinpath("fx_promotion.json").read_text("utf-8")
    return json.loads(text)["results"]


def python_class(python_type: str, bounds: tuple[int, int] | None) -> str:
    """The table's class of a Python operand: int, int64, int_huge, float or bool; for an int,
    by its ``bounds`` (``intbounds``): ``int_any`` when they are not known or span classes."""
    if python_type in ("float", "bool"):
        return python_type
    if bounds is None:
        return _ANY_INT
    lowest, highest = bounds
    if lowest in _I32 and highest in _I32:
        return "int"
    if lowest in _I64 and highest in _I64 and (lowest >= _I32.stop or highest < _I32.start):
        return "int64"
    return "int_huge" if lowest == highest else _ANY_INT


RAISES = "raises"


def answer(case: str, *classes: str) -> str | None:
    """FlyDSL's answer to ``case`` (``"{} + {}"``, ``"{}.to(Int32)"``) over operands of these
    classes (fx class names such as ``Float32``, ``Vector``, ``ArithValue``, ``ir.Value``,
    or Python classes, ``python_class``): the one type (``Float32``, ``Vector``,
    ``ArithValue``, ``bool``) it gives in every release and for every sample where it gives
    one; ``RAISES`` when it gives none or several; None when the case is not in the table."""
    found: set[str] = set()
    for operands in itertools.product(*(_SAMPLES.get(c, (c,)) for c in classes)):
        traced = _table().get(case.format(*operands))
        if traced is None:
            if all(o == _SAMPLES.get(c, (c,))[0] for o, c in zip(operands, classes)):
                return None
            continue  # a sample traced in fewer cases
        found |= {traced} if isinstance(traced, str) else set(traced.values())
    found -= REFUSED
    return found.pop() if len(found) == 1 else RAISES


def result(left: str, op: ast.operator, right: str) -> str | None:
    """``answer`` for ``left op right``."""
    symbol = SYMBOLS.get(type(op))
    return answer(f"{{}} {symbol} {{}}", left, right) if symbol else None
