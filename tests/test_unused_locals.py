"""The fix clean-up deletes the locals the fixes left unused, when that cannot change the IR.

Most cases give ``cleanup_edits`` the text before the fixes and a hand-made "after" (the
use a fix would have rewritten is simply gone), and pin the exact cleaned text; the last
ones go through the CLI with a real fix.
"""

from __future__ import annotations

import pytest

from flydsl_ls.actions.imports import cleanup_edits
from flydsl_ls.analysis.model.text import apply_edits
from tests.test_cli import run

HEAD = (
    "import flydsl.expr as fx\n"
    "from flydsl.expr import arith\n"
    "from flydsl.expr.typing import T\n"
    "from flydsl._mlir import ir\n"
    "from flydsl._mlir.dialects import vector\n"
    "\n"
    "\n"
)


def head_without(*modules: str) -> str:
    """HEAD minus the import lines of ``modules`` (by the name they bind)."""
    lines = HEAD.splitlines(keepends=True)
    return "".join(line for line in lines if not any(line.rstrip().endswith(f"import {m}") for m in modules))


def cleaned(before: str, after: str) -> str:
    text = apply_edits(after, cleanup_edits(before, after))
    # idempotent: cleaning again from the same "before" changes nothing
    assert apply_edits(text, cleanup_edits(before, text)) == text
    return text


def fixed(body_before: str, old_use: str, new_use: str) -> tuple[str, str]:
    """(before, after) of a fix that rewrote ``old_use`` as ``new_use``."""
    before = HEAD + body_before
    assert before.count(old_use) == 1
    return before, before.replace(old_use, new_use)


def test_a_type_chain_is_deleted_to_a_fixpoint_and_its_import_with_it():
    before, after = fixed(
        "def k(v):\n"
        "    elem_ty = T.i32\n"
        "    vec_ty = T.vec(4, elem_ty)  # the vector type\n"
        "    kept = v + 1\n"
        "    return vector.bitcast(vec_ty, kept)\n",
        "vector.bitcast(vec_ty, kept)",
        "kept",
    )
    assert cleaned(before, after) == head_without("T", "vector") + (
        "def k(v):\n"
        "    kept = v + 1\n"
        "    return kept\n"
    )


def test_a_function_alias_an_ir_type_a_literal_and_python_arithmetic_are_deleted():
    before, after = fixed(
        "def k(v):\n"
        "    _uw = arith.unwrap\n"
        "    bf16x8 = ir.VectorType.get([8], ir.BF16Type.get())\n"
        "    n = 4\n"
        "    lanes = n * 2 + 1\n"
        "    return vector.bitcast(bf16x8, _uw(v)), lanes\n",
        "vector.bitcast(bf16x8, _uw(v)), lanes",
        "v",
    )
    assert cleaned(before, after) == head_without("arith", "ir", "vector") + "def k(v):\n    return v\n"


def test_parsed_and_llvm_pointer_types_are_deleted():
    before, after = fixed(
        "def k(v):\n"
        '    lds_ptr_ty = ir.Type.parse("!llvm.ptr<3>")\n'
        "    glb_ptr_ty = llvm.PointerType.get(address_space=1)\n"
        "    return llvm.inttoptr(lds_ptr_ty, v), llvm.inttoptr(glb_ptr_ty, v)\n",
        "llvm.inttoptr(lds_ptr_ty, v), llvm.inttoptr(glb_ptr_ty, v)",
        "v, v",
    )
    before = before.replace("import vector\n", "import llvm, vector\n")
    after = after.replace("import vector\n", "import llvm, vector\n")
    # llvm goes with its last reader; vector was unused before the fix and stays
    assert cleaned(before, after) == head_without("ir") + "def k(v):\n    return v, v\n"


def test_a_multi_line_statement_goes_whole_and_a_lone_one_becomes_pass():
    before, after = fixed(
        "def k(v, c):\n"
        "    vec_ty = T.vec(\n"
        "        4,\n"
        "        T.f32,\n"
        "    )\n"
        "    if c:\n"
        "        i64 = T.i64\n"
        "        v = vector.bitcast(vec_ty, v, i64)\n"
        "    return v\n",
        "        v = vector.bitcast(vec_ty, v, i64)\n",
        "",
    )
    assert cleaned(before, after) == head_without("T", "vector") + (
        "def k(v, c):\n"
        "    if c:\n"
        "        pass\n"
        "    return v\n"
    )


def test_a_block_of_stale_locals_keeps_a_pass():
    before, after = fixed(
        "def k(v, c):\n"
        "    if c:\n"
        "        a = T.i32\n"
        "        b = T.f32\n"
        "        v = vector.bitcast(a, b)\n"
        "    return v\n",
        "        v = vector.bitcast(a, b)\n",
        "",
    )
    assert cleaned(before, after) == head_without("T", "vector") + (
        "def k(v, c):\n"
        "    if c:\n"
        "        pass\n"
        "    return v\n"
    )


REFUSED = {
    "still read elsewhere": (
        "def k(v):\n"
        "    ty = T.i32\n"
        "    a = vector.bitcast(ty, v)\n"
        "    return a, ty\n"
    ),
    "an op-building call": (
        "def k(v):\n"
        "    one = arith.constant(1)\n"
        "    a = vector.bitcast(one, v)\n"
        "    return a\n"
    ),
    "a DSL value from a runtime value": (
        "def k(v):\n"
        "    w = fx.Int32(v)\n"
        "    a = vector.bitcast(w, v)\n"
        "    return a\n"
    ),
    "a property that emits an op": (
        "def k(v):\n"
        "    tid = fx.thread_idx.x\n"
        "    a = vector.bitcast(tid, v)\n"
        "    return a\n"
    ),
    "arithmetic on a runtime value": (
        "def k(v):\n"
        "    w = v * 2\n"
        "    a = vector.bitcast(w, v)\n"
        "    return a\n"
    ),
    "an attribute of an unknown object": (
        "def k(v, t):\n"
        "    s = t.shape\n"
        "    a = vector.bitcast(s, v)\n"
        "    return a\n"
    ),
    "read by a nested function": (
        "def k(v):\n"
        "    ty = T.i32\n"
        "    a = vector.bitcast(ty, v)\n"
        "\n"
        "    def inner():\n"
        "        return ty\n"
        "\n"
        "    return a, inner\n"
    ),
    "a chained assignment": (
        "def k(v):\n"
        "    ty = other = T.i32\n"
        "    a = vector.bitcast(ty, v)\n"
        "    return a\n"
    ),
    "a ;-joined statement": (
        "def k(v):\n"
        "    ty = T.i32; other = 1\n"
        "    a = vector.bitcast(ty, v)\n"
        "    return a, other\n"
    ),
    "a module global": (
        "TY = T.i32\n"
        "\n"
        "\n"
        "def k(v):\n"
        "    a = vector.bitcast(TY, v)\n"
        "    return a\n"
    ),
    "a class attribute": (
        "class K:\n"
        "    ty = T.i32\n"
        "    a = vector.bitcast(ty, 1)\n"
    ),
    "a name the function deletes": (
        "def k(v):\n"
        "    ty = T.i32\n"
        "    a = vector.bitcast(ty, v)\n"
        "    del ty\n"
        "    return a\n"
    ),
    "a function that reads its locals()": (
        "def k(v):\n"
        "    ty = T.i32\n"
        "    a = vector.bitcast(ty, v)\n"
        "    return a, locals()\n"
    ),
    "a name another scope declares nonlocal": (
        "def k(v):\n"
        "    ty = T.i32\n"
        "    a = vector.bitcast(ty, v)\n"
        "\n"
        "    def inner():\n"
        "        nonlocal ty\n"
        "        ty = T.f32\n"
        "\n"
        "    return a, inner\n"
    ),
    "another binding of the name still read": (
        "def k(v, c):\n"
        "    ty = T.i32\n"
        "    a = vector.bitcast(ty, v)\n"
        "    if c:\n"
        "        ty = T.f32\n"
        "    return a, ty\n"
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_local_is_kept(case):
    body = REFUSED[case]
    use = next(line for line in body.splitlines() if "vector.bitcast(" in line)
    before, after = fixed(body, use, use.split(" = ")[0] + " = 0")
    assert cleaned(before, after) == after.replace("from flydsl._mlir.dialects import vector\n", "")


def test_a_local_unused_before_the_fixes_is_kept():
    before, after = fixed(
        "def k(v):\n"
        "    dead = T.f32\n"
        "    ty = T.i32\n"
        "    return vector.bitcast(ty, v)\n",
        "vector.bitcast(ty, v)",
        "v",
    )
    assert cleaned(before, after) == HEAD.replace("from flydsl._mlir.dialects import vector\n", "") + (
        "def k(v):\n"
        "    dead = T.f32\n"
        "    return v\n"
    )


def test_a_local_whose_value_the_fixes_rewrote_is_kept():
    before = HEAD + "def k(v):\n    ty = T.i32\n    return vector.bitcast(ty, v)\n"
    after = HEAD + "def k(v):\n    ty = T.i64\n    return v\n"
    assert cleaned(before, after) == after.replace("from flydsl._mlir.dialects import vector\n", "")


LEGACY = (
    "import flydsl.expr as fx\n"
    "from flydsl.expr import arith\n"
    "\n"
    "\n"
    "def lane_of(v):\n"
    "    _av = arith.ArithValue  # the wrapper, by another name\n"
    "    one = fx.Int32(v)  # unused before the fix: kept\n"
    "    tid = fx.thread_idx.x\n"
    "    lane = _av(tid) % 64\n"
    "    return lane\n"
)


def test_the_cli_deletes_the_alias_its_fix_left_unused(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(LEGACY)
    result = run("check", "--fix", "--unsafe-fixes", "k.py", cwd=tmp_path)
    assert "(1 fixed, 0 remaining)" in result.stdout
    expected = (
        "import flydsl.expr as fx\n"
        "\n"
        "\n"
        "def lane_of(v):\n"
        "    one = fx.Int32(v)  # unused before the fix: kept\n"
        "    tid = fx.thread_idx.x\n"
        "    lane = tid % 64\n"
        "    return lane\n"
    )
    assert path.read_text() == expected
    run("check", "--fix", "--unsafe-fixes", "k.py", cwd=tmp_path)
    assert path.read_text() == expected


def test_the_cli_leaves_locals_alone_when_no_fix_applies(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(LEGACY)
    run("check", "--fix", "k.py", cwd=tmp_path)  # the fix is unsafe: nothing applied
    assert path.read_text() == LEGACY
