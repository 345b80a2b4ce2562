"""The README's quick start: `flydsl-ls check examples/` reports a fixed set of findings.

`examples/legacy_kernel.py` was written for the typed-value rules (FLY1xx), FLY901 and
FLY000; its exact findings for those families are pinned here. Rules of other families
may flag it too (it uses raw `arith` ops, for instance): their tests pin those. By
convention only `examples/legacy_*.py` files have findings; everything else is clean.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
LEGACY = EXAMPLES / "legacy_kernel.py"
MODERN = EXAMPLES / "modern_kernel.py"

# (code, line) of every finding in examples/legacy_kernel.py, in report order.
EXPECTED = [
    ("FLY101", 26),  # _AV(tid) % WARP_SIZE: tid is fx.Int32
    ("FLY103", 34),  # arith.index_cast(T.index, base)
    ("FLY101", 40),  # _AV(std_arith.mulf(...)): raw, wrap at the source
    ("FLY101", 44),  # arith.ArithValue(v): type unknown
    ("FLY901", 50),  # acc.maximumf(peer)
    ("FLY102", 63),  # arith.unwrap(idx < limit)
    ("FLY102", 74),  # as_mlir_value(v) (_to_raw alias)
    ("FLY105", 89),  # gpu.thread_id("x") used in arithmetic
    ("FLY104", 94),  # fx.Int32(bid)
    ("FLY104", 95),  # fx.Int32(fx.Int32(row))
    ("FLY103", 100),  # arith.index(0)
    ("FLY103", 101),  # arith.constant(VEC_WIDTH, index=True)
    ("FLY103", 102),  # fx.index_cast(T.index, col0)
    ("FLY104", 108),  # fx.make_layout(fx.Int32(ROWS_PER_BLOCK), ...)
    ("FLY901", 112),  # fx.rocdl.BufferCopyLDS64b
]
IMPLEMENTED = {"FLY101", "FLY102", "FLY103", "FLY104", "FLY105", "FLY901"}
PINNED = ("FLY0", "FLY1", "FLY9")  # the rule families pinned for legacy_kernel.py


def pinned(items: list[dict]) -> list[tuple[str, int]]:
    return [
        (item["code"], item["location"]["row"])
        for item in items
        if Path(item["filename"]).name == LEGACY.name and item["code"].startswith(PINNED)
    ]


SAFE_FIXES = {34, 50, 63, 74, 94, 95, 102, 108}

# One more fixture per rule family: file -> (code, line) of its findings, in report order.
FAMILIES = {
    "legacy_control_flow.py": [
        ("FLY302", 36),  # scf.ForOp with a carried value -> range(..., init=[...]) + @flyc.jit (unsafe)
        ("FLY501", 44),  # runtime `if` in a plain helper -> @flyc.jit (unsafe)
        ("FLY502", 55),  # const_expr(fx.thread_idx.x == 0)
        ("FLY503", 59),  # ASTRewriter.transform
        ("FLY601", 63),  # raw rocdl.mfma_f32_16x16x16f16: the exact atom, no fix (vectors)
        ("FLY603", 67),  # TV layout built inline in make_tiled_copy
        ("FLY302", 79),  # with _if_then(scf.IfOp(...)) -> `if tid < threshold:` (unsafe)
        ("FLY701", 94),  # a launcher called in a host loop
    ],
    "legacy_memory_atoms.py": [
        ("FLY202", 31),  # buffer_ops.create_llvm_ptr(stage_idx, ...): lds.stage.ptr.llvm_ptr (unsafe)
        ("FLY202", 42),  # _llvm.inttoptr from a raw byte address: no fix
        ("FLY202", 51),  # mem_ops.get_llvm_ptr: offset math stays, no fix
        ("FLY602", 55),  # fx.copy_atom_call -> fx.copy (unsafe)
        ("FLY602", 59),  # fx.copy_atom_call(..., pred=) -> fx.copy(..., pred=) (unsafe)
        ("FLY602", 90),  # fx.mma_atom_call -> fx.gemm (unsafe)
    ],
    "legacy_waitcnt.py": [
        ("FLY402", 22),  # _VMCNT_LO_MASK: used only by a dead shim (unsafe: module level)
        ("FLY402", 36),  # _waitcnt_vm_n: no call left (unsafe: module level)
        ("FLY402", 46),  # a dead local constant (safe)
        ("FLY401", 55),  # rocdl.s_waitcnt(0): all three counters (fix needs --target-arch)
        ("FLY401", 59),  # _encode_waitcnt(lgkmcnt=0): 0xC07F
        ("FLY403", 60),  # rocdl_dialect.sched_group_barrier -> fx.rocdl wrapper (safe)
        ("FLY403", 61),
        ("FLY401", 64),  # _encode_waitcnt(vmcnt=0): 0x3F70, bits 13:12 (unsafe on gfx942)
        ("FLY401", 65),  # _s_waitcnt(_LGKMCNT_0_ONLY)
        ("FLY401", 66),  # a parameter: no fix
    ],
    "legacy_arith.py": [
        ("FLY301", 27),  # std_arith.muli(row, n_cols) -> row * n_cols (unsafe: operand types unknown)
        ("FLY301", 31),  # fx.Int32(arith.andi(lane, ...)) -> `&` (safe)
        ("FLY301", 35),  # arith.remui: kept, unsigned (information, no fix)
        ("FLY301", 39),  # arith.cmpi(slt) -> `<` (unsafe: raw i1 becomes fx.Boolean)
        ("FLY304", 43),  # mlir_math.absf -> fx.absf (unsafe: ambient fastmath)
        ("FLY301", 47),  # arith.maximumf -> fx.max (unsafe)
        ("FLY301", 56),  # arith.mulf -> `*` (unsafe: ambient fastmath)
        ("FLY301", 61),  # MulFOp(..., fastmath=fast): kept (information, no fix)
        ("FLY304", 65),  # mlir_math.fma -> fx.fma (unsafe)
        ("FLY301", 73),  # arith.trunc_f(T.bf16, v) -> fx.BFloat16(v) (unsafe)
        ("FLY303", 77),  # vector.extract on an fx.Vector -> vals[0] (safe)
        ("FLY303", 82),  # vector.bitcast -> fx.Vector(v).bitcast(fx.Int32) (unsafe)
        ("FLY303", 86),  # vector.broadcast -> fx.Vector.filled (unsafe)
        ("FLY303", 90),  # vector.from_elements -> fx.Vector.from_elements (unsafe)
    ],
}


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "flydsl_ls", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def findings(result: subprocess.CompletedProcess) -> list[dict]:
    assert "Traceback" not in result.stderr, result.stderr
    return json.loads(result.stdout)


def test_examples_are_valid_python():
    for path in (LEGACY, MODERN, *(EXAMPLES / name for name in FAMILIES)):
        ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def test_check_examples_reports_exactly_the_expected_findings():
    result = run("check", "examples/", "--output-format", "json", "--level", "information")
    items = findings(result)
    assert result.returncode == 1, result.stderr
    assert pinned(items) == EXPECTED
    flagged = {Path(item["filename"]).name for item in items}
    assert LEGACY.name in flagged
    assert all(name.startswith("legacy_") for name in flagged), flagged


def test_pinned_families_alone():
    selected = run(
        "check", "examples/legacy_kernel.py", "--select", ",".join(PINNED), "--output-format", "json", "--level", "information"
    )
    assert [(i["code"], i["location"]["row"]) for i in findings(selected)] == EXPECTED


def test_family_examples_report_exactly_their_findings():
    for name, expected in FAMILIES.items():
        codes = ",".join(sorted({code for code, _ in expected}))
        items = findings(run("check", f"examples/{name}", "--select", codes, "--output-format", "json", "--level", "information"))
        assert [(item["code"], item["location"]["row"]) for item in items] == expected, name


def test_every_implemented_rule_is_exercised():
    assert {code for code, _ in EXPECTED} == IMPLEMENTED


def test_marker_comments_match_findings():
    """Each flagged line carries a `# FLYnnn: ...` comment naming its rule, and only those."""
    marked = []
    for number, line in enumerate(LEGACY.read_text(encoding="utf-8").splitlines(), start=1):
        match = re.search(r"#\s*(FLY\d{3})\b", line)
        if match:
            marked.append((match.group(1), number))
    assert marked == EXPECTED
    for name, expected in FAMILIES.items():
        text = (EXAMPLES / name).read_text(encoding="utf-8")
        marked = [
            (match.group(1), number)
            for number, line in enumerate(text.splitlines(), start=1)
            if (match := re.search(r"#\s*(FLY\d{3})\b", line))
        ]
        assert marked == expected, name


def test_fix_safety_of_example_findings():
    items = findings(run("check", str(LEGACY), "--select", ",".join(PINNED), "--output-format", "json", "--level", "information"))
    safe = {item["location"]["row"] for item in items if item["fix"] and item["fix"]["applicability"] == "safe"}
    assert safe == SAFE_FIXES


def test_modern_kernel_is_clean():
    result = run("check", "examples/modern_kernel.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "All checks passed!" in result.stdout
    assert findings(run("check", "examples/modern_kernel.py", "--output-format", "json")) == []


def test_concise_output_and_exit_code():
    result = run("check", "examples/")
    assert result.returncode == 1
    lines = [line for line in result.stdout.splitlines() if line.startswith("examples/legacy_kernel.py:")]
    got = [(line.split(": ")[1].split()[0], int(line.split(":")[1])) for line in lines]
    assert [(code, row) for code, row in got if code.startswith(PINNED)] == EXPECTED
    sarif = json.loads(run("check", "examples/", "--output-format", "sarif", "--level", "information").stdout)
    levels = [r["level"] for r in sarif["runs"][0]["results"]]
    errors, notes = sum(level != "note" for level in levels), levels.count("note")
    files = len(list(EXAMPLES.rglob("*.py")))
    # Keep-case notes are shown only when asked (`--level information`), counted apart from the errors.
    assert f"Found {errors} errors in {files} files checked; {notes} notes not shown" in result.stdout
    assert notes > 0
    assert result.stderr == ""
    asked = run("check", "examples/", "--level", "information")
    assert f"Found {errors} errors and {notes} notes (constructs the guides keep) in {files} files checked." in asked.stdout


def test_exit_zero_flag():
    result = run("check", "examples/", "--exit-zero")
    assert result.returncode == 0
