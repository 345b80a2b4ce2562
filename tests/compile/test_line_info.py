"""Source <-> ISA per line: the `.loc` reader, the DWARF inlined calls, the worker's numbered
call chains, and a real compile of a kernel written through helpers."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from flydsl_ls.compile.annotate import annotate
from flydsl_ls.compile.dwarf import inlined_calls
from flydsl_ls.compile.lines import by_line, located
from tests.compile.conftest import ROOT
from tests.compiler import needs_compiler

FIXTURE = ROOT / "tests" / "compile" / "fixtures" / "line_info"
KERNEL = FIXTURE / "add_with_helpers.py"
HELPERS = FIXTURE / "helpers_elsewhere.py"

# The shape FlyDSL's line-info `.s` has (gfx942, DWARF 4), cut down by hand: two files, a
# chain number as a column, a line-0 `.loc`, and two inlined calls (one through
# .debug_ranges, one through low_pc/high_pc).
ISA = """\
\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
\t.text
\t.globl\tkern
kern:
.Lfunc_begin0:
\t.file\t1 "/src" "k.py"
\t.file\t2 "/src" "h.py"
\t.loc\t1 10 4 prologue_end
\ts_load_dword s0, s[0:1], 0x0
.Ltmp0:
\t.loc\t2 5 16384
\tv_add_f32_e32 v0, v1, v2 ; a comment
.Ltmp1:
\t.loc\t1 0 0
\ts_nop 0
.Ltmp2:
\t.loc\t1 11 16384
\tglobal_load_dword v1, v[2:3], off
.Ltmp3:
.Ltmp4:
\t.loc\t1 12 5
\tv_mfma_f32_16x16x16_f16 a[0:3], v[0:1], v[2:3], a[0:3]
.Ltmp5:
\ts_waitcnt vmcnt(0)
\ts_endpgm
.Lfunc_end0:
\t.section\t.debug_abbrev,"",@progbits
\t.byte\t1
\t.byte\t17
\t.byte\t1
\t.byte\t37
\t.byte\t14
\t.byte\t19
\t.byte\t5
\t.byte\t3
\t.byte\t14
\t.byte\t16
\t.byte\t23
\t.byte\t27
\t.byte\t14
\t.byte\t17
\t.byte\t1
\t.byte\t18
\t.byte\t6
\t.byte\t0
\t.byte\t0
\t.byte\t2
\t.byte\t46
\t.byte\t0
\t.byte\t3
\t.byte\t14
\t.byte\t32
\t.byte\t11
\t.byte\t0
\t.byte\t0
\t.byte\t3
\t.byte\t46
\t.byte\t1
\t.byte\t17
\t.byte\t1
\t.byte\t18
\t.byte\t6
\t.byte\t49
\t.byte\t19
\t.byte\t0
\t.byte\t0
\t.byte\t4
\t.byte\t29
\t.byte\t0
\t.byte\t49
\t.byte\t19
\t.byte\t85
\t.byte\t23
\t.byte\t88
\t.byte\t11
\t.byte\t89
\t.byte\t11
\t.byte\t87
\t.byte\t11
\t.byte\t0
\t.byte\t0
\t.byte\t5
\t.byte\t29
\t.byte\t0
\t.byte\t49
\t.byte\t19
\t.byte\t17
\t.byte\t1
\t.byte\t18
\t.byte\t6
\t.byte\t88
\t.byte\t11
\t.byte\t89
\t.byte\t5
\t.byte\t87
\t.byte\t11
\t.byte\t0
\t.byte\t0
\t.byte\t0
\t.section\t.debug_info,"",@progbits
.Lcu_begin0:
\t.long\t.Ldebug_info_end0-.Ldebug_info_start0
.Ldebug_info_start0:
\t.short\t4
\t.long\t.debug_abbrev
\t.byte\t8
\t.byte\t1
\t.long\t.Linfo_string0
\t.short\t2
\t.long\t.Linfo_string1
\t.long\t.Lline_table_start0
\t.long\t.Linfo_string2
\t.quad\t.Lfunc_begin0
\t.long\t.Lfunc_end0-.Lfunc_begin0
\t.byte\t2
\t.long\t.Linfo_string3
\t.byte\t1
\t.byte\t3
\t.quad\t.Lfunc_begin0
\t.long\t.Lfunc_end0-.Lfunc_begin0
\t.long\t42
\t.byte\t4
\t.long\t42
\t.long\t.Ldebug_ranges0
\t.byte\t1
\t.byte\t30
\t.byte\t4
\t.byte\t5
\t.long\t42
\t.quad\t.Ltmp4
\t.long\t.Ltmp5-.Ltmp4
\t.byte\t1
\t.short\t300
\t.byte\t5
\t.byte\t0
\t.byte\t0
.Ldebug_info_end0:
\t.section\t.debug_ranges,"",@progbits
.Ldebug_ranges0:
\t.quad\t.Ltmp0-.Lfunc_begin0
\t.quad\t.Ltmp1-.Lfunc_begin0
\t.quad\t.Ltmp2-.Lfunc_begin0
\t.quad\t.Ltmp3-.Lfunc_begin0
\t.quad\t0
\t.quad\t0
\t.section\t.debug_str,"MS",@progbits,1
.Linfo_string0:
\t.asciz\t"MLIR"
"""
CHAINS = {16384: [["/src/h.py", 5], ["/src/k.py", 12], ["/src/k.py", 30]]}


def test_dwarf_inlined_calls():
    calls = inlined_calls(ISA)
    assert [(c.file, c.line, c.ranges, c.depth) for c in calls] == [
        (1, 30, ((".Ltmp0", ".Ltmp1"), (".Ltmp2", ".Ltmp3")), 0),
        (1, 300, ((".Ltmp4", ".Ltmp5"),), 0),
    ]


def test_dwarf_it_cannot_read_gives_no_calls():
    unknown_form = ISA.replace("\t.byte\t88\n\t.byte\t11\n\t.byte\t89\n\t.byte\t11", "\t.byte\t88\n\t.byte\t99\n\t.byte\t89\n\t.byte\t11")
    assert inlined_calls(unknown_form) == []
    assert inlined_calls("\ts_endpgm\n") == []


def test_each_instruction_gets_its_line_and_its_calls():
    found = located(ISA, CHAINS)
    assert [(i.text, i.file, i.line, i.calls) for i in found] == [
        ("s_load_dword s0, s[0:1], 0x0", "/src/k.py", 10, ()),
        # its chain (numbered as the column) and the DWARF's outermost call
        ("v_add_f32_e32 v0, v1, v2", "/src/h.py", 5, (("/src/k.py", 30), ("/src/k.py", 12))),
        ("s_nop 0", None, None, ()),  # line 0: made up by the compiler
        # column 16384 on another line than the chain's first frame: a real column
        ("global_load_dword v1, v[2:3], off", "/src/k.py", 11, (("/src/k.py", 30),)),
        ("v_mfma_f32_16x16x16_f16 a[0:3], v[0:1], v[2:3], a[0:3]", "/src/k.py", 12, (("/src/k.py", 300),)),
        ("s_waitcnt vmcnt(0)", "/src/k.py", 12, ()),
        ("s_endpgm", "/src/k.py", 12, ()),
    ]


def test_lines_count_their_own_and_their_calls():
    lines = {(line.file, line.line): line for line in by_line(located(ISA, CHAINS))}
    assert list(lines) == [("/src/h.py", 5), ("/src/k.py", 10), ("/src/k.py", 11), ("/src/k.py", 12),
                           ("/src/k.py", 30), ("/src/k.py", 300)]
    call_line = lines[("/src/k.py", 12)]
    assert call_line.isa[0].startswith("v_add_f32") and call_line.own == 3 and call_line.through_calls == 1
    assert call_line.summary() == {"instructions": 4, "memory": 0, "waits": 1, "mfma": 1}
    assert lines[("/src/k.py", 30)].to_dict() == {
        "file": "/src/k.py",
        "line": 30,
        "isa": ["v_add_f32_e32 v0, v1, v2", "global_load_dword v1, v[2:3], off"],
        "through_calls": 2,
        "summary": {"instructions": 2, "memory": 1, "waits": 0, "mfma": 0},
    }


def test_annotate_shows_source_summary_and_instructions():
    sources = {"/src/k.py": "\n".join(f"line {n}" for n in range(1, 40)), "/src/h.py": "a\nb\nc\nd\nhelper\n"}
    text = annotate("kern", by_line(located(ISA, CHAINS)), 7, read=sources.get)
    assert text.splitlines()[0] == "== kern: 7 instructions, 6 on 6 source lines, 1 on no line"
    assert "-- /src/h.py\n    3 | c\n    4 | d\n    5 | helper\n      |   [1 instruction]\n" in text
    assert "   12 | line 12\n      |   [4 instructions (1 through calls made here), 1 wait, 1 MFMA]\n" in text
    assert "     ...\n   28 | line 28" in text  # a long gap is cut


def _stream(kernel) -> list[str]:
    return [item.text for item in located(kernel.text("isa"))]


def _line(result, path, marker: str):
    number = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if marker in text)
    return next((line for line in result.kernels[0].lines if os.path.samefile(line.file, path) and line.line == number), None)


@needs_compiler
def test_helpers_lines_and_their_callers_get_instructions(service):
    plain = service.compile(KERNEL, "small", "gfx942")
    lined = service.compile(KERNEL, "small", "gfx942", line_info=True)
    assert plain.ok and lined.ok, (plain.error, lined.error)
    (before,), (after,) = plain.kernels, lined.kernels
    assert _stream(before) == _stream(after) and len(_stream(after)) > 20  # line info changes no instruction
    assert before.resources.summary() == after.resources.summary()
    assert before.lines == [] and after.lines
    copy = _line(lined, KERNEL, "# COPY LINE")  # in the helper of this file
    assert copy.own and any(i.startswith("global_load_dwordx4") for i in copy.isa)
    load_a = _line(lined, KERNEL, "# LOAD A")  # its caller
    assert load_a.through_calls and any(i.startswith("global_load_dwordx4") for i in load_a.isa)
    add = _line(lined, HELPERS, "# ADD LINE")  # in another module
    assert add.own and any(i.startswith("v_pk_add_f32") for i in add.isa)
    call = _line(lined, KERNEL, "# CALL ADD")
    assert call.through_calls and [i for i in call.isa if "add" in i] == [i for i in add.isa if "add" in i]
    store = _line(lined, KERNEL, "# STORE")
    assert store.own and store.summary()["memory"] == 1


@needs_compiler
def test_compile_json_and_annotate(tmp_path):
    env = {**os.environ, "FLYDSL_LS_CACHE": str(tmp_path)}
    base = [sys.executable, "-m", "flydsl_ls", "compile", f"{KERNEL}::small", "--arch", "gfx942"]
    proc = subprocess.run([*base, "--json"], capture_output=True, text=True, cwd=ROOT, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    (kernel,) = json.loads(proc.stdout)["kernels"]
    helper = [entry for entry in kernel["lines"] if entry["file"].endswith("helpers_elsewhere.py")]
    assert helper and set(helper[0]) == {"file", "line", "isa", "through_calls", "summary"}
    assert any(i.startswith("v_pk_add_f32") for i in helper[0]["isa"])
    proc = subprocess.run([*base, "--annotate"], capture_output=True, text=True, cwd=ROOT, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    call = out.index("add_into(reg_c, reg_a, reg_b)  # CALL ADD")
    assert "through calls made here" in out[call:call + 200] and "v_pk_add_f32" in out[call:call + 400]
    assert "-- tests/compile/fixtures/line_info/helpers_elsewhere.py" in out
    proc = subprocess.run([*base, "--json", "--no-line-info"], capture_output=True, text=True, cwd=ROOT, timeout=300, env=env)
    assert json.loads(proc.stdout)["kernels"][0]["lines"] == []
