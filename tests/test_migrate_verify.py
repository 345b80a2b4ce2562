"""`migrate --verify`'s verdicts (actions/migrate_verify.py) from made-up compile results, and
once with the real compiler on our own fixture (tests/semantics/fixtures/unsafe_fixes.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

from flydsl_ls.actions.migrate_verify import (
    CHECKED,
    IDENTICAL,
    ISA_DIFFERS,
    ISA_IDENTICAL,
    NO_EXAMPLES,
    REFUSED,
    UNVERIFIABLE,
    verify_migration,
)
from flydsl_ls.compile import CompileError, CompileResult, KernelOutput, KernelResources, Status
from tests.compiler import needs_compiler
from tests.test_cli import run

REPO = Path(__file__).resolve().parents[1]
BEFORE = "# flydsl: example\ndef ex(device):\n    return None, ()\n"
AFTER = BEFORE + "# migrated\n"


def _kernel(tmp: Path, tag: str, mlir: str, isa: str, lds: int = 0, scratch: int = 0, vgprs: int = 8) -> KernelOutput:
    folder = tmp / tag
    folder.mkdir()
    (folder / "00_origin.mlir").write_text(mlir)
    (folder / "22_final_isa.s").write_text(isa)
    resources = KernelResources("k_0", "gfx942", vgprs=vgprs, sgprs=16, lds_bytes=lds, scratch_bytes=scratch)
    return KernelOutput("k_0", folder, mlir_first=folder / "00_origin.mlir", isa=folder / "22_final_isa.s", resources=resources)


def _compiler(before: CompileResult, after: CompileResult):
    calls = []

    def compile(text: str, example: str, arch: str) -> CompileResult:
        calls.append((example, arch))
        return before if text == BEFORE else after

    compile.calls = calls
    return compile


def _ok(kernel: KernelOutput) -> CompileResult:
    return CompileResult(Status.OK, "k.py", "ex", "gfx942", kernels=[kernel])


def test_identical_isa_identical_and_isa_differs(tmp_path):
    base = _kernel(tmp_path, "a", "%0 = arith.addi loc(#loc1)\n", "v_add_u32 v0, v1, v2\n")
    same = _kernel(tmp_path, "b", "%0 = arith.addi loc(#loc7)\n", "v_add_u32 v0, v1, v2\n")
    check = verify_migration(BEFORE, AFTER, _compiler(_ok(base), _ok(same)))
    assert check.status == CHECKED and [k.verdict for k in check.kernels] == [IDENTICAL]
    assert check.kernels[0].resources() == "VGPRs 8, AGPRs 0, SGPRs 16, LDS 0 B, scratch 0 B, occupancy ?"

    mlir_only = _kernel(tmp_path, "c", "%0 = arith.addi nsw\n", "v_add_u32 v0, v1, v2\n")
    check = verify_migration(BEFORE, AFTER, _compiler(_ok(base), _ok(mlir_only)))
    assert [k.verdict for k in check.kernels] == [ISA_IDENTICAL] and check.kernels[0].isa_lines is None

    isa = _kernel(tmp_path, "d", "%0 = arith.addi nsw\n", "v_add_i32 v0, v1, v2\n", vgprs=6)
    check = verify_migration(BEFORE, AFTER, _compiler(_ok(base), _ok(isa)))
    assert check.ok and [k.verdict for k in check.kernels] == [ISA_DIFFERS]
    assert check.kernels[0].isa_lines == ("v_add_u32 v0, v1, v2", "v_add_i32 v0, v1, v2")
    assert check.kernels[0].resources().startswith("VGPRs 8 -> 6, ")
    assert check.lines() == [
        "ex (gfx942) k_0: ISA differs; VGPRs 8 -> 6, AGPRs 0, SGPRs 16, LDS 0 B, scratch 0 B, occupancy ?",
        "    first differing ISA line: `v_add_i32 v0, v1, v2` (was `v_add_u32 v0, v1, v2`)",
    ]


def test_refused_when_lds_or_scratch_grows(tmp_path):
    base = _kernel(tmp_path, "a", "x\n", "s_endpgm\n", lds=1024)
    grown = _kernel(tmp_path, "b", "x\n", "s_endpgm\n", lds=2048, scratch=16)
    check = verify_migration(BEFORE, AFTER, _compiler(_ok(base), _ok(grown)))
    assert check.status == REFUSED and not check.ok
    assert check.problems == [
        "ex (gfx942) k_0: LDS grows from 1024 B to 2048 B",
        "ex (gfx942) k_0: scratch grows from 0 B to 16 B",
    ]
    shrunk = _kernel(tmp_path, "c", "x\n", "s_endpgm\n", lds=512)
    assert verify_migration(BEFORE, AFTER, _compiler(_ok(base), _ok(shrunk))).ok


def test_refused_when_it_no_longer_compiles_unverifiable_when_it_never_did(tmp_path):
    base = _ok(_kernel(tmp_path, "a", "x\n", "s_endpgm\n"))
    broken = CompileResult(Status.ERROR, "k.py", "ex", "gfx942", error=CompileError("TypeError: bad operand", line=7))
    check = verify_migration(BEFORE, AFTER, _compiler(base, broken))
    assert check.status == REFUSED
    assert check.problems == ["ex (gfx942) no longer compiles: TypeError: bad operand (line 7)"]
    check = verify_migration(BEFORE, AFTER, _compiler(broken, base))
    assert check.status == UNVERIFIABLE and check.compiles == 1  # the "after" is not compiled
    assert verify_migration("x = 1\n", "x = 2\n", _compiler(base, base)).status == NO_EXAMPLES


def test_examples_compile_for_their_marker_arch_else_the_default(tmp_path):
    source = BEFORE + "\n\n# flydsl: example gfx950\ndef ex2(device):\n    return None, ()\n"
    base = _ok(_kernel(tmp_path, "a", "x\n", "s_endpgm\n"))
    compile = _compiler(base, base)
    verify_migration(source, source + "#\n", compile, default_arch="gfx90a")
    assert compile.calls == [("ex", "gfx90a"), ("ex", "gfx90a"), ("ex2", "gfx950"), ("ex2", "gfx950")]


@needs_compiler
def test_migrate_verify_with_the_compiler(tmp_path):
    path = tmp_path / "unsafe_fixes.py"
    shutil.copy(REPO / "tests" / "semantics" / "fixtures" / "unsafe_fixes.py", path)
    result = run("migrate", "unsafe_fixes.py", "--verify", cwd=tmp_path)
    # FLY101 on `ArithValue(n) / 2` turns an unsigned division signed: the ISA says so, and
    # nothing grew, so the migration is written
    assert "example (gfx942) unsafe_kernel_0: ISA differs; " in result.stdout, result.stderr
    assert "first differing ISA line: `v_cvt_f32_i32_e32" in result.stdout
    # and which source lines' ISA: the edited stretch holding the division, before and after
    assert "    ISA by source line (1 differ):\n      unsafe_fixes.py:17-18 (now 15-16): -v_cvt_f32_u32_e32, +v_cvt_f32_i32_e32\n" in result.stdout
    assert "LDS 0 B, scratch 0 B" in result.stdout
    assert "unsafe_fixes.py: written" in result.stderr
    assert result.returncode == 0
    assert "    half = n / 2\n" in path.read_text()


def test_functions_no_example_reaches():
    from flydsl_ls.actions.migrate import migrate
    from flydsl_ls.actions.migrate_verify import not_compiled
    from flydsl_ls.checker import linter
    from flydsl_ls.config import Settings
    from tests.test_cli_migrate import TWO_KERNELS

    source = TWO_KERNELS + "\n\n# flydsl: example\ndef ex(device):\n    return kernel_a, ()\n"
    migration = migrate(source, linter(None, Settings()), None)
    assert migration.count == 6
    # ex reaches kernel_a, and through it _only_a and _shared: kernel_b's fix was not compiled
    assert not_compiled(migration) == ["kernel_b"]
