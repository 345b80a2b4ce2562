"""FLY203 across two modules, compiled with FlyDSL 0.5.0 on the CPU (gfx942) before and after
``check --fix --unsafe-fixes pkg/kernel.py`` (tests/fixtures/two_modules, ours): the kernel
moves to SharedAllocator, the epilogue of the other module gets the pointer form of its LDS
load, and a second kernel left legacy still hands it a builtin memref.

Measured: the migrated kernel's ISA is the legacy one (only the IR before it differs: the
struct field's `fly.make_ptr` and `fly.ptr_load` instead of `memref.global` + `vector.load`);
LDS stays 512 B; the legacy caller's IR does not change at all (its branch of the epilogue's
`isinstance` is the old text). The same holds on FlyDSL 0.3.1 (checked by hand: aiter's pin).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from flydsl_ls.compile import compare_results
from tests.compile.conftest import compile_cache, service  # noqa: F401 (fixtures)
from tests.compiler import needs_compiler
from tests.test_cli import run

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "two_modules" / "pkg"
ARCH = "gfx942"

pytestmark = needs_compiler


def test_kernel_migrated_with_its_epilogue_keeps_its_isa_and_the_legacy_caller_its_ir(service, tmp_path):  # noqa: F811
    # the worker keeps imported modules: the fixed copy is another package
    before, after = tmp_path / "before" / "pkg", tmp_path / "after" / "pkg_after"
    shutil.copytree(FIXTURE, before)
    shutil.copytree(FIXTURE, after)
    fixed = run("check", "--no-cache", "--select", "FLY203", "--fix", "--unsafe-fixes", "pkg_after/kernel.py", cwd=after.parent)
    assert "3 fixed, 0 remaining" in fixed.stdout, fixed.stdout + fixed.stderr
    assert "isinstance(lds_out, fx.Pointer)" in (after / "epilogues.py").read_text(encoding="utf-8")
    assert (after / "legacy_caller.py").read_text(encoding="utf-8") == (before / "legacy_caller.py").read_text(encoding="utf-8")

    old = service.compile(before / "kernel.py", "one_tile", ARCH)
    new = service.compile(after / "kernel.py", "one_tile", ARCH)
    assert old.ok, old.error
    assert new.ok, f"the migrated kernel does not compile: {new.error}"
    comparison = compare_results(old, new)
    assert "k_0: isa differs" not in comparison.differences, comparison.diffs.get("k_0: isa")
    assert "k_0: mlir-first differs" in comparison.differences  # a struct field, not a hand-made global
    assert [(k.resources.lds_bytes, k.resources.scratch_bytes) for k in new.kernels] == [(512, 0)]
    assert [(k.resources.lds_bytes, k.resources.scratch_bytes) for k in old.kernels] == [(512, 0)]

    old_legacy = service.compile(before / "legacy_caller.py", "one_tile", ARCH)
    new_legacy = service.compile(after / "legacy_caller.py", "one_tile", ARCH)
    assert new_legacy.ok, f"the legacy caller no longer compiles: {new_legacy.error}"
    assert compare_results(old_legacy, new_legacy).identical
