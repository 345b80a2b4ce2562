"""`check --fix --verify`: fixes kept only when the real compiler gives identical IR.

The fixture kernel (fixtures/verify_kernel.py) has a safe FLY104 fix that keeps the IR and
an unsafe FLY101 fix that changes it (uitofp -> sitofp). The CLI tests run the real
`flydsl-ls` entry as a subprocess; the module tests drive actions.fix_verify with the
session's warm worker. Every test that compiles takes the `service` fixture, which decides
whether compiles can run here (skip, or fail when the compiler is required).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from flydsl_ls.actions.fix_verify import NO_EXAMPLES, VERIFIED, verify_fixes
from flydsl_ls.analysis.model.diagnostic import Applicability, Diagnostic, Edit, Fix
from flydsl_ls.analysis.model.text import LineIndex, Range
from flydsl_ls.checker import check_source, linter
from flydsl_ls.compile import compare_results
from flydsl_ls.compile.toolchain import INSTALL
from flydsl_ls.config import Settings
from tests.compile.conftest import ROOT

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "verify_kernel.py"
UNSAFE_FIXES = ROOT / "tests" / "semantics" / "fixtures" / "unsafe_fixes.py"
DROPPED_FLY101 = (
    "verify_kernel.py:18:12: FLY101 fix not applied: it changed the MLIR of verify_kernel_0 "
    "(example, gfx942): first differing line `"
)


def _run(*args: str, cwd: Path, cache: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    environ = {**os.environ, "FLYDSL_LS_CACHE": str(cache), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "flydsl_ls", *args], capture_output=True, text=True, cwd=cwd, timeout=600, env=environ
    )


def _copy(tmp_path: Path, text: str | None = None) -> Path:
    path = tmp_path / "verify_kernel.py"
    path.write_text(FIXTURE.read_text() if text is None else text)
    return path


def test_fix_verify_keeps_the_fix_with_identical_ir_and_drops_the_one_that_changes_it(service, tmp_path):
    path = _copy(tmp_path)
    proc = _run("check", "--fix", "--unsafe-fixes", "--verify", path.name, cwd=tmp_path, cache=tmp_path / "cache")
    assert proc.returncode == 1, proc.stderr  # the FLY101 finding remains
    text = path.read_text()
    assert "twice = n * 2" in text  # FLY104 kept
    assert "half = ArithValue(n) / 2" in text  # FLY101 dropped
    dropped = [line for line in proc.stderr.splitlines() if "fix not applied" in line]
    assert len(dropped) == 1, proc.stderr
    assert dropped[0].startswith(DROPPED_FLY101), dropped
    assert "arith.sitofp" in dropped[0] and "(was `" in dropped[0] and "arith.uitofp" in dropped[0]
    # which source line's ISA it changed, in the text written (18), and after the fix (17:
    # it also drops the import it leaves unused)
    assert dropped[0].endswith("; ISA by source line: verify_kernel.py:18 (now 17): -v_cvt_f32_u32_e32, +v_cvt_f32_i32_e32")
    assert "verify_kernel.py: fixes verified by compiling example (gfx942): 2 fixes kept, 1 dropped (" in proc.stderr
    assert "verify_kernel.py:18:12: FLY101 `ArithValue(...)`" in proc.stdout  # still reported
    assert "Found 3 errors (2 fixed, 1 remaining)." in proc.stdout


def test_diff_verify_prints_only_the_verified_fixes_and_writes_nothing(service, tmp_path):
    path = _copy(tmp_path)
    before = path.read_text()
    proc = _run("check", "--diff", "--verify", path.name, cwd=tmp_path, cache=tmp_path / "cache")
    assert proc.returncode == 1, proc.stderr  # something would be fixed
    assert path.read_text() == before
    assert "+    twice = n * 2" in proc.stdout and "-    half" not in proc.stdout
    assert "fix not applied" not in proc.stderr
    assert "2 fixes kept, 0 dropped" in proc.stderr and "Would fix 2 errors." in proc.stderr


def test_verify_without_examples_applies_nothing(service, tmp_path):
    path = _copy(tmp_path, FIXTURE.read_text().replace("# flydsl: example\n", ""))
    before = path.read_text()
    proc = _run("check", "--fix", "--verify", path.name, cwd=tmp_path, cache=tmp_path / "cache")
    assert proc.returncode == 1
    assert path.read_text() == before
    assert "warning: no `# flydsl: example` in verify_kernel.py: fixes not verified, none applied" in proc.stderr
    assert "Found 3 errors in 1 file checked." in proc.stdout
    assert not (tmp_path / "cache" / "runs").exists()  # nothing was compiled


def test_verify_without_the_compiler_is_an_error_and_changes_nothing(tmp_path):
    """torch and flydsl made unimportable (a sitecustomize on PYTHONPATH): exit 2, the
    install commands named, the file untouched."""
    blocker = tmp_path / "site"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text("import sys\nsys.modules['torch'] = None\nsys.modules['flydsl'] = None\n")
    path = _copy(tmp_path)
    before = path.read_text()
    env = {"PYTHONPATH": os.pathsep.join([str(blocker), str(ROOT)])}
    proc = _run("check", "--fix", "--verify", path.name, cwd=tmp_path, cache=tmp_path / "cache", env=env)
    assert proc.returncode == 2, proc.stderr
    assert path.read_text() == before
    assert "--verify compiles the files' examples, but compiling FlyDSL kernels" in proc.stderr
    assert "needs torch, flydsl\ninstall with:\n" in proc.stderr
    assert INSTALL["flydsl"] in proc.stderr and INSTALL["torch"] in proc.stderr
    assert "no file was changed" in proc.stderr


def test_verify_needs_a_fix_option(tmp_path):
    path = _copy(tmp_path)
    proc = _run("check", "--verify", path.name, cwd=tmp_path, cache=tmp_path / "cache")
    assert proc.returncode == 2
    assert "--verify checks fixes: use it with --fix, --diff or --fix-only" in proc.stderr


# --- the shared module, with the session's worker --------------------------------------------
def _compiler(service, path: Path):
    return lambda text, example, arch: service.compile(path, example, arch, source=text)


def test_a_fix_that_breaks_the_compile_is_dropped(service):
    """A fix whose text no longer compiles (an extra, deliberately wrong fix next to the
    rules' own): dropped with the compiler's error; the others kept."""
    source = FIXTURE.read_text()
    settings = Settings(target_arch="gfx942")
    rules = linter(FIXTURE, settings)

    def lint(text: str) -> list[Diagnostic]:
        found = rules(text)
        if "fx.Float32(half)" in text:  # offered until applied
            at = LineIndex(text)
            start = text.index("fx.Float32(half)")
            span = Range(at.position_at(start), at.position_at(start + len("fx.Float32")))
            fix = Fix("Use fx.NoSuchType", Applicability.SAFE, (Edit(span, "fx.NoSuchType"),))
            found.append(Diagnostic("FLY999", "a broken fix", span, fix=fix))
        return found

    outcome = verify_fixes(source, lint, _compiler(service, FIXTURE), unsafe=False, default_arch="gfx942")
    assert outcome.status == VERIFIED
    assert [(d.fix.code, d.fix.line) for d in outcome.dropped] == [("FLY999", 20)]
    reason = outcome.dropped[0].reason
    assert reason.startswith("does not compile (example, gfx942): AttributeError: "), reason
    assert "NoSuchType" in reason
    assert "twice = n * 2" in outcome.text and "fx.Float32(half)" in outcome.text
    assert outcome.applied == {"FLY104": 2}


def test_interacting_fixes_the_result_is_the_verified_text(service):
    """unsafe_fixes.py: twelve unsafe fixes, one rule per pass (FLY104s appear only after the
    FLY101 "wrap once at source" fixes). The three that change the IR are dropped, the
    FLY104 that needs the dropped FLY105 is not applied, and the text returned compiles to
    the same IR as the original."""
    source = UNSAFE_FIXES.read_text()
    lint = linter(UNSAFE_FIXES, Settings(target_arch="gfx942"))
    outcome = verify_fixes(source, lint, _compiler(service, UNSAFE_FIXES), unsafe=True, default_arch="gfx942")
    assert outcome.status == VERIFIED and outcome.wanted == 12
    assert [(d.fix.code, d.fix.line) for d in outcome.dropped] == [("FLY101", 17), ("FLY101", 18), ("FLY105", 24)]
    assert all(d.reason.startswith("changed the MLIR of unsafe_kernel_0 (example, gfx942): ") for d in outcome.dropped)
    assert outcome.applied == {"FLY101": 2, "FLY104": 3, "FLY301": 2}
    assert "fx.Int32(raw_lane)" in outcome.text and 'gpu.thread_id("x") % 16' in outcome.text
    assert outcome.compiles <= 16
    before = service.compile(UNSAFE_FIXES, None, "gfx942")
    after = service.compile(UNSAFE_FIXES, None, "gfx942", source=outcome.text)
    assert compare_results(before, after).identical
    remaining = {(d.code, d.range.start.line) for d in check_source(outcome.text, UNSAFE_FIXES, Settings()).diagnostics}
    assert {code for code, _ in remaining} == {"FLY101", "FLY105"}


def test_no_examples_and_nothing_to_fix_compile_nothing(service):
    def refuse(text, example, arch):
        raise AssertionError("nothing should be compiled")

    lint = linter(FIXTURE, Settings())
    no_marker = FIXTURE.read_text().replace("# flydsl: example\n", "")
    outcome = verify_fixes(no_marker, lint, refuse)
    assert outcome.status == NO_EXAMPLES and outcome.text == no_marker and outcome.compiles == 0
    assert outcome.summary("k.py").startswith("no `# flydsl: example` in k.py: fixes not verified, none applied")
    clean = "x = 1\n"
    assert verify_fixes(clean, lint, refuse).text == clean
