"""Where a value goes (analysis/model/valueflow.py): the consumers the fixes consult."""

from __future__ import annotations

import ast

from flydsl_ls.analysis.model.semantic import SemanticModel
from flydsl_ls.analysis.model.valueflow import TOO_FAR, Sink, Use, value_uses

HEAD = (
    "import flydsl.expr as fx\n"
    "from flydsl.expr import arith\n"
    "from flydsl.expr.typing import T\n"
    "from flydsl._mlir.dialects import scf, llvm\n"
)


def uses_of_marked(body: str, through_operators: bool = False):
    """The uses of the value of the call to `mark(...)`'s argument in ``body``."""
    source = HEAD + body
    tree = ast.parse(source)
    model = SemanticModel(source, tree)
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "mark")
    value = call.args[0]
    call_parent = model.parent_map(tree)
    # stand the value where the mark() call stood
    holder = call_parent[id(call)]
    for field, old in ast.iter_fields(holder):
        if old is call:
            setattr(holder, field, value)
        elif isinstance(old, list) and call in old:
            old[old.index(call)] = value
    for cached in ("_walked", "_parents", "_parent_views", "_nodes_of"):  # the tree changed: build the tables again
        model.__dict__.pop(cached, None)
    return [(u.sink, u.what) for u in value_uses(model, value, model.parent_map(tree), through_operators=through_operators)]


def test_followed_through_names_lists_keywords_and_helpers():
    uses = uses_of_marked(
        "def loop(lo, hi):\n"
        "    return scf.for_(lo, hi, 1)\n"
        "def k(n):\n"
        "    hi = mark(arith.index_cast(T.index, n))\n"
        "    loop(0, hi=hi)\n"
        "    llvm.InlineAsmOp(None, [hi], 'x', 'v')\n"
        "    fx.make_layout(hi, 1)\n"
    )
    assert uses == [
        (Sink.RAW_BUILDER, "scf.for_"),
        (Sink.RAW_BUILDER, "llvm.InlineAsmOp"),
        (Sink.ANY_VALUE, "fx.make_layout"),
    ]


def test_returns_are_followed_to_the_callers_in_the_file():
    uses = uses_of_marked(
        "def cast(n):\n"
        "    return mark(arith.index_cast(T.index, n))\n"
        "def k(n):\n"
        "    v = cast(n)\n"
        "    return v.index_cast(T.i32)\n"
    )
    assert uses == [(Sink.METHOD, "index_cast")]


def test_operators_stop_unless_followed_through():
    body = "def k(n):\n    v = mark(arith.index_cast(T.index, n)) + 1\n    scf.for_(0, v, 1)\n"
    assert uses_of_marked(body) == [(Sink.OPERATOR, "+")]
    assert uses_of_marked(body, through_operators=True) == [(Sink.OPERATOR, "+"), (Sink.RAW_BUILDER, "scf.for_")]


def test_augmented_assignments_rebind_the_name_and_are_followed_through():
    # aiter's moe gemm1: `k0 += c` then `crd2idx((k0, ...), layout)`, a helper in another file
    # that casts only raw index values; an fx.Index there crashed FlyDSL 0.3.1.
    body = "def k(base):\n    k0 = base // 64\n    k0 += mark(arith.constant(2, index=True))\n    crd2idx((k0 + 1, 0), None)\n"
    assert uses_of_marked(body) == [(Sink.OPERATOR, "+=")]
    assert uses_of_marked(body, through_operators=True) == [
        (Sink.OPERATOR, "+="),
        (Sink.OPERATOR, "+"),
        (Sink.PASSED_ON, "crd2idx"),
    ]


def test_a_value_rebound_under_a_condition_still_reaches_the_later_reads():
    # aiter's moe gemm1: `k = arith.index(0)`, then `if const_expr(splitk): k = ...`; a nested
    # function reads k. Both values reach that read.
    body = (
        "def k(splitk, bz):\n    base = mark(arith.index(0))\n    if splitk:\n        base = bz * 4\n"
        "    def body():\n        scf.for_(base, 8, 1)\n    body()\n    llvm.InlineAsmOp(None, [base], 'x', 'v')\n"
    )
    assert uses_of_marked(body) == [(Sink.RAW_BUILDER, "scf.for_"), (Sink.RAW_BUILDER, "llvm.InlineAsmOp")]


def test_conditions_returns_without_callers_and_too_long_chains_are_not_followed():
    assert uses_of_marked("def k(n):\n    if mark(n > 1):\n        pass\n") == [(Sink.CONDITION, "if")]
    assert uses_of_marked("def k(n):\n    return mark(n)\n") == [(Sink.PASSED_ON, "return")]
    chain = "def k(n):\n    a = mark(n)\n" + "".join(f"    {b} = {a}\n" for a, b in zip("abcdef", "bcdefg"))
    assert uses_of_marked(chain + "    scf.for_(0, g, 1)\n") == [(Sink.PASSED_ON, "uses too far away to follow")]


def test_uses_read_as_places_in_messages():
    source = HEAD + "def k(n):\n    v = arith.index_cast(T.index, n)\n    return [v for _ in range(2)]\n"
    tree = ast.parse(source)
    model = SemanticModel(source, tree)
    call = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "arith.index_cast")
    (use,) = value_uses(model, call, model.parent_map(tree))
    assert use.describe() == "a list comprehension on line 7"
    far = Use(Sink.PASSED_ON, call, TOO_FAR)
    assert far.describe() == "code too many calls and assignments away to follow (past line 6)"


def test_kind_keeping_fx_functions_are_followed_through():
    # aiter's mixed_moe gemm1: `g = fx.maximumf(x, lim)` (FLY901's form of x.maximumf(lim))
    # then `llvm.call_intrinsic(..., [g * c], ...)`.
    body = "def k(x, lim, c):\n    g = fx.maximumf(mark(x + 0), lim)\n    llvm.call_intrinsic(None, 'f', [g * c], [], [])\n"
    assert uses_of_marked(body, through_operators=True)[-1] == (Sink.RAW_BUILDER, "llvm.call_intrinsic")
    assert uses_of_marked(body) == [(Sink.ANY_VALUE, "fx.maximumf")]


def test_stop_keeps_the_use_where_it_stands_and_names_the_value():
    """With ``stop``, a helper's argument (or an operator) is reported where it stands, its
    outcome not followed; each use names the expression whose value it uses, inside a
    container too (the raw boundaries the fixes hand `.ir_value()`)."""
    source = HEAD + (
        "def loop(lo, hi):\n"
        "    return scf.for_(lo, hi, 1)\n"
        "def k(n):\n"
        "    hi = arith.index_cast(T.index, n)\n"
        "    loop(0, hi)\n"
        "    llvm.InlineAsmOp(None, [hi + 1], 'x', 'v')\n"
    )
    tree = ast.parse(source)
    model = SemanticModel(source, tree)
    value = next(n for n in ast.walk(tree) if isinstance(n, ast.Call) and ast.unparse(n.func) == "arith.index_cast")
    parents = model.parent_map(tree)
    followed = value_uses(model, value, parents, through_operators=True)
    assert [(u.sink, u.what) for u in followed] == [
        (Sink.RAW_BUILDER, "scf.for_"), (Sink.OPERATOR, "+"), (Sink.RAW_BUILDER, "llvm.InlineAsmOp"),
    ]
    stopped = value_uses(
        model, value, parents, through_operators=True, stop=lambda use: use.sink is not Sink.RAW_BUILDER
    )
    assert [(u.sink, u.what, ast.unparse(u.value)) for u in stopped] == [
        (Sink.PASSED_ON, "loop", "hi"), (Sink.OPERATOR, "+", "hi"),
    ]
    packed = followed[-1]
    assert isinstance(packed.node, ast.List) and ast.unparse(packed.value) == "hi + 1"
