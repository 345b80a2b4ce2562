"""What an operator gives for each pair of operand kinds, built with the real FlyDSL: the
table `flydsl_ls/analysis/rules/_operands.py` relies on. The left operand picks the
operator (ArithValue's or fx's), and an IR value on the left gives a result of the kind it
gave before a fix turned the right operand fx; only a Python number on the left changes it.

Checked here with the FlyDSL the compile extra installs (0.5.0); aiter's pinned 0.3.1 gave
the same table, op for op (a venv with `flydsl==0.3.1`, 2026-12-02; its
`expr/utils/arith.py` and `expr/numeric.py` operators are the same code).
"""

from __future__ import annotations

import operator

import pytest

from tests.compiler import needs_compiler

pytestmark = needs_compiler

OPS = {"+": operator.add, "*": operator.mul, "//": operator.floordiv, ">>": operator.rshift, "<": operator.lt,
       "==": operator.eq, "|": operator.or_}

# (element type, operator) -> {pair: (result kind, ops emitted)}; "py" is a Python int.
EXPECTED = {
    ("i32", "+"): {"raw op fx": ("raw", "addi"), "fx op raw": ("fx", "addi"), "py op fx": ("fx", "constant addi"),
                   "py op raw": ("raw", "constant addi")},
    ("i32", ">>"): {"raw op fx": ("raw", "shrui"), "fx op raw": ("fx", "shrsi"), "py op fx": ("fx", "constant shrsi"),
                    "py op raw": ("raw", "constant shrui")},
    ("i32", "//"): {"raw op fx": ("raw", "floordivsi"), "fx op raw": ("fx", "floordivsi")},
    ("index", "*"): {"raw op fx": ("raw", "muli"), "fx op raw": ("fx", "muli"),
                     "py op fx": ("fx", "constant index_cast muli"), "py op raw": ("raw", "constant muli")},
    ("index", "<"): {"raw op fx": ("raw", "cmpi slt"), "fx op raw": ("fx", "cmpi ult"),
                     "py op raw": ("raw", "constant cmpi sgt")},
    ("f32", "*"): {"raw op fx": ("raw", "mulf"), "fx op raw": ("fx", "mulf"), "py op fx": ("fx", "constant mulf")},
    # fx `==` is ArithValue's: the same predicate (FLY101 drops `ArithValue(a) == ArithValue(b)`'s wrappers).
    ("f32", "=="): {"raw op fx": ("raw", "cmpf oeq"), "fx op raw": ("fx", "cmpf oeq")},
    ("i32", "=="): {"raw op fx": ("raw", "cmpi eq"), "fx op raw": ("fx", "cmpi eq")},
    ("i1", "|"): {"raw op fx": ("raw", "ori"), "fx op raw": ("fx", "ori")},
}


def _table() -> dict:
    import flydsl.expr as fx
    from flydsl._mlir import ir
    from flydsl._mlir.dialects import func
    from flydsl.expr.typing import T
    from flydsl.expr.utils.arith import ArithValue

    predicates = {("cmpi", 0): "eq", ("cmpi", 2): "slt", ("cmpi", 4): "sgt", ("cmpi", 6): "ult", ("cmpi", 8): "ugt",
                  ("cmpf", 1): "oeq"}
    found = {}
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            function = func.FuncOp("f", ([T.i32, T.i32, T.index, T.index, T.f32, T.f32, ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(1)], []))
            block = function.add_entry_block()
            with ir.InsertionPoint(block):
                a, b, c, d, e, g, h, i = block.arguments
                values = {"i32": (a, fx.Int32(b)), "index": (c, fx.Index(d)), "f32": (e, fx.Float32(g)),
                          "i1": (h, fx.Boolean(i))}
                for (dtype, symbol), pairs in EXPECTED.items():
                    raw, typed = values[dtype]
                    assert isinstance(raw, ArithValue)  # FlyDSL casts every scalar ir.Value
                    operands = {"raw op fx": (raw, typed), "fx op raw": (typed, raw), "py op fx": (3, typed),
                                "py op raw": (3, raw)}
                    for pair in pairs:
                        start = len(list(block.operations))
                        result = OPS[symbol](*operands[pair])
                        emitted = []
                        for op in list(block.operations)[start:]:
                            name = op.name.removeprefix("arith.")
                            emitted.append(name)
                            if "predicate" in op.attributes:
                                emitted.append(predicates[name, int(str(op.attributes["predicate"]).split(":")[0])])
                        kind = "raw" if isinstance(result, ir.Value) else "fx"
                        found[(dtype, symbol, pair)] = (kind, " ".join(emitted))
    return found


@pytest.fixture(scope="module")
def table():
    return _table()


@pytest.mark.parametrize("case", [(k, p) for k, pairs in EXPECTED.items() for p in pairs], ids=str)
def test_left_operand_picks_the_operator(table, case):
    (dtype, symbol), pair = case
    assert table[(dtype, symbol, pair)] == EXPECTED[(dtype, symbol)][pair]


def test_an_ir_value_on_the_left_keeps_the_result_kind(table):
    # The fix turns the right operand fx: raw op raw -> raw op fx, fx op raw -> fx op fx.
    for (dtype, symbol), pairs in EXPECTED.items():
        if "raw op fx" in pairs:
            assert table[(dtype, symbol, "raw op fx")][0] == "raw"
        if "py op fx" in pairs and "py op raw" in pairs:
            # ... while a Python number on the left turns it fx.
            assert (table[(dtype, symbol, "py op raw")][0], table[(dtype, symbol, "py op fx")][0]) == ("raw", "fx")
