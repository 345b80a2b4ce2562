"""What a change did to the ISA by source line (compile/line_diff.py), from made-up
instructions: lines paired through the edit, mnemonics compared, operands ignored."""

from __future__ import annotations

from collections import Counter

from flydsl_ls.compile.line_diff import LineChange, isa_by_line, line_changes
from flydsl_ls.compile.lines import Located
from flydsl_ls.compile.result import CompileResult, KernelOutput, Status

BEFORE = "a = 1\nb = x / 2\nc = 3\nd = 4\n"
AFTER = "# new\na = 1\nb = y\nb2 = x // 2\nc = 3\nd = 4\n"


def _at(file: str, line: int, *texts: str) -> list[Located]:
    return [Located(text, file, line) for text in texts]


def test_unchanged_lines_follow_the_edit_and_operands_do_not_count():
    before = [*_at("k.py", 1, "s_mov_b32 s0, 1"), *_at("k.py", 2, "v_cvt_f32_u32 v1, s0"), *_at("k.py", 3, "v_add_u32 v2, v1, v0"),
              *_at("k.py", 4, "v_mul_f32 v0, v1, v2", "v_add_f32 v3, v0, v1"), *_at("h.py", 9, "ds_read_b32 v1, v2")]
    after = [*_at("k.py", 2, "s_mov_b32 s4, 1"), *_at("k.py", 3, "s_mov_b32 s1, 0"), *_at("k.py", 4, "v_cvt_f32_i32 v1, s0"),
             *_at("k.py", 5, "v_add_u32 v7, v1, v0"), *_at("k.py", 6, "v_add_f32 v3, v0, v1", "v_mul_f32 v0, v1, v2"),
             *_at("h.py", 9, "ds_read_b64 v[1:2], v2"), Located("s_nop 0", None, None)]
    changes = line_changes(before, after, "k.py", BEFORE, AFTER)
    assert [(c.file, c.before, c.after, c.removed, c.added) for c in changes] == [
        ("h.py", (9, 9), (9, 9), Counter({"ds_read_b32": 1}), Counter({"ds_read_b64": 1})),
        # line 2 became lines 3-4: compared as one stretch
        ("k.py", (2, 2), (3, 4), Counter({"v_cvt_f32_u32": 1}), Counter({"s_mov_b32": 1, "v_cvt_f32_i32": 1})),
        ("k.py", (4, 4), (6, 6), Counter(), Counter()),  # same instructions, reordered
    ]  # line 1 -> 2 and 3 -> 5: registers renamed only, not a difference
    assert [c.describe() for c in changes] == [
        "h.py:9: -ds_read_b32, +ds_read_b64",
        "k.py:2 (now 3-4): -v_cvt_f32_u32, +s_mov_b32, +v_cvt_f32_i32",
        "k.py:4 (now 6): the same instructions in another order",
    ]


def test_inserted_and_deleted_lines():
    inserted = LineChange("k.py", (3, 2), (3, 4), Counter(), Counter({"v_nop": 2}))
    assert inserted.describe() == "k.py:3-4 (new lines): +v_nop x2"
    deleted = LineChange("k.py", (5, 5), (6, 5), Counter({"s_nop": 1}), Counter())
    assert deleted.describe() == "k.py:5 (deleted): -s_nop"
    before = _at("k.py", 2, "v_a v0")
    after = _at("k.py", 1, "v_b v0")  # line 1 deleted, line 2 moved up
    assert [c.describe() for c in line_changes(before, after, "k.py", "x\ny\n", "y\n")] == ["k.py:2 (now 1): -v_a, +v_b"]


def test_isa_by_line_names_the_first_few(tmp_path):
    def result(instructions):
        return CompileResult(Status.OK, "k.py", "ex", "gfx942", kernels=[KernelOutput("k_0", tmp_path, located=instructions)])

    before = [item for n in range(1, 6) for item in _at("k.py", n, "v_a v0")]
    after = [item for n in range(1, 6) for item in _at("k.py", n, "v_b v0")]
    text = "".join(f"l{n}\n" for n in range(1, 6))
    assert isa_by_line(result(before), result(after), text, text) == (
        "ISA by source line: k.py:1: -v_a, +v_b; k.py:2: -v_a, +v_b; k.py:3: -v_a, +v_b; 2 more"
    )
    assert isa_by_line(result(before), result(before), text, text) == ""
    assert isa_by_line(result([]), result([]), text, text) == ""  # compiled without line info
