"""The fx type of `a <op> b`, as FlyDSL's own tracer gives it (pure, no AST walking).

FlyDSL promotes like C, not like its operands: `fx.Int16(x) + 1` is an Int32, `fx.Int32(x)
/ 2` a Float32, `fx.Int64(x) * 1.5` a Float64, `fx.Int32(x) + 3000000000` an Int64. The
table (`flydsl_ls/data/fx_promotion.json`) is traced from FlyDSL by
`scripts/build_promotion_table.py`; tests/test_promotion.py traces again and compares.
A Python int that is no literal is taken to fit in 32 bits."""

from __future__ import annotations

import ast
import json
from functools import lru_cache
from importlib import resources

from flydsl_ls.analysis.model.fxtypes import is_numeric_class

SYMBOLS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
    ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
}
_I32 = range(-(2**31), 2**31)
_I64 = range(-(2**63), 2**63)


@lru_cache(maxsize=1)
def _table() -> dict[str, str | dict[str, str]]:
    """Case -> FlyDSL's answer, or {release: answer} where the releases differ."""
    text = resources.files("flydsl_ls.data").joinpath("fx_promotion.json").read_text("utf-8")
    return json.loads(text)["results"]


def python_class(python_type: str, literal: ast.expr) -> str:
    """The table's class of a Python operand: int, int64, int_huge, float or bool."""
    if isinstance(literal, ast.Constant) and type(literal.value) is int:
        value = literal.value
        return "int" if value in _I32 else "int64" if value in _I64 else "int_huge"
    return {"float": "float", "bool": "bool"}.get(python_type, "int")


RAISES = "raises"


def result(left: str, op: ast.operator, right: str) -> str | None:
    """The fx class name (``Float32``) of ``left op right``, each an fx class name or a
    Python class (``python_class``); ``RAISES`` when FlyDSL refuses it (or builds an op
    that does not verify) in some release or the releases disagree; None when the pair is
    not in the table."""
    symbol = SYMBOLS.get(type(op))
    answer = _table().get(f"{left} {symbol} {right}") if symbol else None
    if answer is None:
        return None
    return answer if isinstance(answer, str) and is_numeric_class(answer) else RAISES
