"""`_operands.surely_ir`: an operand that holds an IR value on every path, never a Python
number (the one left operand that would change an operator's result kind)."""

from __future__ import annotations

import ast

import pytest

from flydsl_ls.analysis.model.semantic import SemanticModel
from flydsl_ls.analysis.model.valueflow import value_uses
from flydsl_ls.analysis.rules._operands import kind_as_it_was, surely_ir, surely_raw

HEAD = (
    "import flydsl.expr as fx\nfrom flydsl.expr import arith, gpu\nfrom flydsl.expr.typing import T\n"
    "from aiter.ops.flydsl.kernels import buffer_ops\n"
)


def _read(body: str) -> bool:
    """surely_ir of the last statement's expression."""
    source = HEAD + body
    tree = ast.parse(source)
    model = SemanticModel(source, tree)
    last = tree.body[-1]
    while isinstance(last, ast.FunctionDef):
        last = last.body[-1]
    return surely_ir(model, last.value)


@pytest.mark.parametrize(
    "body, expected",
    [
        ("x = gpu.block_id('x')\nx\n", True),  # a raw op
        ("def f(v: fx.Float32):\n    return v.ir_value().bitcast(T.i32)\n", True),  # an IR method on a raw value
        ("def f(r):\n    return buffer_ops.buffer_load(r, 0, vec_width=1) & 3\n", True),  # IR op Python
        ("def f(a):\n    return 3 * a\n", False),  # `a` may be a Python number
        ("def f(a):\n    return arith.AddIOp(a, a).result\n", True),
        ("def f(xs):\n    acc = arith.constant(0.0, type=T.f32)\n    for x in xs:\n"
         "        acc = arith.maximumf(acc, x)\n    return acc\n", True),  # every binding, the loop's too
        ("def f(xs, k):\n    acc = 0\n    if k:\n        acc = arith.maximumf(acc, xs)\n    return acc\n", False),
        ("def f(a, b):\n    return fx.gpu.shuffle_xor(a, 1, 64) > b\n", True),  # a comparison picks like `+`
        ("def f(a, b):\n    return a > b\n", False),
        ("def f(a, b):\n    return fx.gpu.shuffle_xor(a, 1, 64) is b\n", False),  # Python's
        ("def f(c, a, b):\n    return c.select(a, b)\n", True),  # a method only IR values have
        ("def f(t):\n    return t.to(3)\n", False),  # ... not one torch tensors have too
    ],
)
def test_surely_ir(body, expected):
    assert _read(body) is expected


def test_a_parameter_every_caller_passes_an_ir_value():
    source = HEAD + "def k():\n    def g(b):\n        return b + 1\n    g(gpu.thread_id('x'))\n    g(gpu.block_id('x'))\n"
    tree = ast.parse(source)
    model = SemanticModel(source, tree)
    inner = tree.body[-1].body[0]
    assert surely_ir(model, inner.body[0].value.left)
    source = source.replace("g(gpu.block_id('x'))", "g(4)")
    tree = ast.parse(source)
    model = SemanticModel(source, tree)
    assert not surely_ir(model, tree.body[-1].body[0].body[0].value.left)


@pytest.mark.parametrize(
    "body, expected",
    [
        ("x = gpu.block_id('x')\nx + 1\n", True),  # raw on the left
        ("def f(v: fx.Int32):\n    return 1 + v.ir_value()\n", True),  # a Python number beside a raw value
        ("def f(v: fx.Int32, r):\n    return v + r.ir_value()\n", False),  # fx on the left
        ("def f(c, p):\n    x = fx.Int32(0)\n    if c:\n        x = arith.constant(3, type=T.i32)\n    return x\n", False),
        ("def f(xs):\n    acc = arith.constant(0.0, type=T.f32)\n    for x in xs:\n"
         "        acc = arith.maximumf(acc, x)\n    return acc\n", True),  # typed like its first operand
    ],
)
def test_surely_raw(body, expected):
    source = HEAD + body
    tree = ast.parse(source)
    model = SemanticModel(source, tree)
    last = tree.body[-1]
    while isinstance(last, ast.FunctionDef):
        last = last.body[-1]
    assert surely_raw(model, last.value) is expected


@pytest.mark.parametrize(
    "line, vector, expected",
    [
        ("fx.Int32(3) * v", False, True),  # an fx value on the left picks fx's operator
        ("fx.gpu.shuffle_xor(w, 1, 64) | v", False, True),  # an IR value of either kind
        ("w | v", False, False),  # `w` may be a Python number: then `v` picks
        ("3 * v", False, False),
        ("v * fx.Int32(3)", False, False),  # the value itself on the left
        ("fx.Float32(2.0) * v", True, False),  # an fx scalar leaves a vector to its own operator
        ("arith.constant(2.0, type=T.f32) * v", True, True),
    ],
)
def test_kind_as_it_was(line, vector, expected):
    """The value's use in `line` (the right operand of its operator) keeps the result's kind."""
    source = HEAD + f"def f(v, w):\n    return {line}\n"
    tree = ast.parse(source)
    model = SemanticModel(source, tree)
    function = tree.body[-1]
    parents = model.parent_map(function)
    name = next(n for n in ast.walk(function.body[0]) if isinstance(n, ast.Name) and n.id == "v")
    use = value_uses(model, name, parents, through_operators=True)[0]
    assert kind_as_it_was(model, use, vector=vector) is expected
