"""Which assigned names get a type hint and which label (analysis/model/typehints.py), on the
cases the server's fixture leaves out; the server's own tests are tests/server/test_inlay_hints.py."""

from __future__ import annotations

import re

import pytest

from flydsl_ls.analysis.model.parsing import parse
from flydsl_ls.analysis.model.semantic import SemanticModel
from flydsl_ls.analysis.model.text import Position
from flydsl_ls.analysis.model.typehints import type_hints

HEAD = (
    "import flydsl.expr as fx\nfrom flydsl.expr import arith, gpu\nfrom flydsl.expr.typing import T\n"
    "from flydsl._mlir import ir\nfrom flydsl._mlir.dialects import arith as std_arith\n"
)


def labels(body: str) -> dict[str, str]:
    source = HEAD + body
    model = SemanticModel(source, parse(source))
    lines = source.splitlines()
    found = {}
    for hint in type_hints(model, Position(0, 0), Position(len(lines), 0)):
        name = re.search(r"\w+$", lines[hint.position.line][: hint.position.column]).group()
        found[name] = hint.label
    return found


@pytest.mark.parametrize(
    "body, expected",
    [
        # fx.arith.constant: the default types of Python literals, `type=` and `index=`
        ("a = arith.constant(1.5)\nb = arith.constant(True)\nc = arith.constant(7)\n",
         {"a": "ir.Value f32", "b": "ir.Value i1", "c": "ir.Value i32"}),
        ("i64 = T.i64\na = arith.constant(3, type=i64)\nb = arith.constant(3, index=flag)\n",
         {"a": "ir.Value i64", "b": "ir.Value"}),
        # the MLIR dialect's own constant takes the type first
        ("a = std_arith.constant(T.f16, 1.0)\nb = std_arith.constant(ir.IndexType.get(), 4)\n",
         {"a": "ir.Value f16", "b": "ir.Value index"}),
        # an operand's type carries through same-type ops, selects and names, not through
        # a name with two definitions that disagree
        ("x = arith.constant(1, type=T.i32)\ny = std_arith.addi(x, x)\nz = arith.select(c, y, x)\n"
         "w = z\nif c:\n    w = arith.index(0)\nv = w\n",
         {"x": "ir.Value i32", "y": "ir.Value i32", "z": "ir.Value i32", "w": "ir.Value index", "v": "ir.Value"}),
        # an fx value unwrapped, and wrapped again
        ("def f(t: fx.Int32):\n    r = t.ir_value()\n    a = arith.ArithValue(r) + 1\n    b = fx.Index(r)\n"
         "    u = arith.unwrap(a)\n",
         {"r": "ir.Value i32", "a": "ArithValue i32", "u": "ir.Value i32"}),
        # `ir` builds types, not values; a builtin is not a dialect op after a star import
        ("from flydsl._mlir.dialects.vector import *\nt = ir.Type.parse('!llvm.ptr')\nn = len(xs)\n"
         "e = extract(v, [], [0])\n",
         {"e": "ir.Value"}),
        # arithmetic: the IR operands' type, when they agree (a Python operand takes it)
        ("def f(x, n: fx.Int32):\n    a = arith.ArithValue(x) + arith.index(1)\n"
         "    b = arith.ArithValue(n) * 2 + arith.ArithValue(n)\n",
         {"a": "ArithValue", "b": "ArithValue i32"}),
        # a comparison of values of unknown type may be of vectors: no element type
        ("m = std_arith.cmpi(p, u, v)\nn = std_arith.cmpi(p, arith.index(0), v)\n",
         {"m": "ir.Value", "n": "ir.Value i1"}),
        # no hint: Python values, unknowns, annotations, the type spelled on the right,
        # layouts; a walrus and a chained assignment get theirs
        ("n = 4\ns = 'x'\nu = helper()\nk: fx.Int32 = fx.thread_idx.x\nf = fx.Float32(1.0)\n"
         "g = f.to(fx.Float32)\nl = fx.make_layout(4, 1)\np = q = fx.block_idx.x\nprint(w := q + 1)\n",
         {"p": "Int32", "q": "Int32", "w": "Int32"}),
        # unpacking: a tuple of the same length only
        ("a, (b, c) = fx.thread_idx.x, (arith.index(0), 1)\nd, e = pair\nf, *g = fx.thread_idx.x, 2, 3\n",
         {"a": "Int32", "b": "ir.Value index"}),
    ],
)
def test_labels(body, expected):
    assert labels(body) == expected


def test_only_the_range_asked_is_walked():
    source = HEAD + "".join(f"v{i} = fx.thread_idx.x\n" for i in range(100))
    model = SemanticModel(source, parse(source))
    first = len(HEAD.splitlines())
    hints = type_hints(model, Position(first + 10, 0), Position(first + 12, 3))
    assert [(h.position.line, h.label) for h in hints] == [(first + line, "Int32") for line in (10, 11, 12)]
    # the end is a position: a hint after it (after `v13`'s name, column 3) is left out
    assert type_hints(model, Position(first + 13, 0), Position(first + 13, 2)) == []
