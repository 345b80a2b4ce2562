"""Fixes that edit other project files too (``Fix.elsewhere``): FLY203 migrates a kernel
and the helper of another module it hands its LDS to (tests/fixtures/two_modules, ours),
applied whole or not at all by ``check --fix``, ``--diff`` and ``fix_all``."""

from __future__ import annotations

import shutil
from pathlib import Path

from flydsl_ls.actions.elsewhere import OtherFiles
from flydsl_ls.actions.fixes import apply_fix, fix_all
from flydsl_ls.analysis.model.diagnostic import (
    Applicability,
    Diagnostic,
    Edit,
    FileEdits,
    Fix,
    text_digest,
)
from flydsl_ls.analysis.model.text import Position, Range
from tests.test_cli import run

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "two_modules"
KERNEL_FIXED = (FIXTURE / "kernel.migrated.txt").read_text(encoding="utf-8")
EPILOGUES_FIXED = (FIXTURE / "epilogues.migrated.txt").read_text(encoding="utf-8")


def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    shutil.copytree(FIXTURE / "pkg", root / "pkg")
    return root


def test_fix_migrates_the_kernels_and_the_helper_of_the_other_module_once(tmp_path):
    root = project(tmp_path)
    result = run("check", "--no-cache", "--select", "FLY203", "--fix", "--unsafe-fixes", "pkg", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "6 fixed, 0 remaining" in result.stdout  # kernel.py and legacy_caller.py, 3 findings each
    assert (root / "pkg" / "kernel.py").read_text(encoding="utf-8") == KERNEL_FIXED
    # both kernels' fixes carry the same edits of the helper: applied once
    assert (root / "pkg" / "epilogues.py").read_text(encoding="utf-8") == EPILOGUES_FIXED
    assert "SharedAllocator" in (root / "pkg" / "legacy_caller.py").read_text(encoding="utf-8")
    # the helper's LDS load takes the pointer, and still the memref of a legacy caller
    assert (
        "frag = (fx.ptr_load(lds_out + idx, result_type=ir.VectorType.get([n], ir.F16Type.get())) "
        "if isinstance(lds_out, fx.Pointer) else vector.load(ir.VectorType.get([n], ir.F16Type.get()), "
        "lds_out, [idx]))\n"
    ) in EPILOGUES_FIXED
    again = run("check", "--no-cache", "--select", "FLY203", "--fix", "--unsafe-fixes", "pkg", cwd=root)
    assert "All checks passed" in again.stdout  # idempotent: nothing left, nothing rewritten
    assert (root / "pkg" / "epilogues.py").read_text(encoding="utf-8") == EPILOGUES_FIXED


def test_a_legacy_caller_outside_the_run_is_left_as_it_is(tmp_path):
    # only kernel.py is checked: the helper (a project file it imports) gets its dual form
    root = project(tmp_path)
    legacy = (root / "pkg" / "legacy_caller.py").read_text(encoding="utf-8")
    result = run("check", "--no-cache", "--select", "FLY203", "--fix", "--unsafe-fixes", "pkg/kernel.py", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (root / "pkg" / "kernel.py").read_text(encoding="utf-8") == KERNEL_FIXED
    assert (root / "pkg" / "epilogues.py").read_text(encoding="utf-8") == EPILOGUES_FIXED
    assert (root / "pkg" / "legacy_caller.py").read_text(encoding="utf-8") == legacy


def test_diff_shows_both_files_and_changes_neither(tmp_path):
    root = project(tmp_path)
    before = {p.name: p.read_text(encoding="utf-8") for p in (root / "pkg").glob("*.py")}
    result = run("check", "--no-cache", "--select", "FLY203", "--diff", "--unsafe-fixes", "pkg", cwd=root)
    assert "--- a/pkg/kernel.py" in result.stdout and "--- a/pkg/epilogues.py" in result.stdout
    assert "+    frag = (fx.ptr_load(lds_out + idx" in result.stdout
    assert {p.name: p.read_text(encoding="utf-8") for p in (root / "pkg").glob("*.py")} == before


def test_json_names_the_other_files_a_fix_edits(tmp_path):
    import json

    root = project(tmp_path)
    result = run("check", "--no-cache", "--select", "FLY203", "--output-format", "json", "pkg/kernel.py", cwd=root)
    (first, *_) = json.loads(result.stdout)
    (other,) = first["fix"]["other_files"]
    assert other["filename"] == str((root / "pkg" / "epilogues.py").resolve())
    assert other["edits"][0]["content"].startswith("(fx.ptr_load(lds_out + idx")


def test_without_unsafe_fixes_nothing_is_written(tmp_path):
    root = project(tmp_path)
    run("check", "--no-cache", "--select", "FLY203", "--fix", "pkg", cwd=root)
    assert (root / "pkg" / "epilogues.py").read_text(encoding="utf-8") == (FIXTURE / "pkg" / "epilogues.py").read_text(
        encoding="utf-8"
    )


# --- the machinery, on a fix of our own making ---------------------------------------
OTHER = "def f(x):\n    return x\n"


def _fix(other: Path, digest: str, content: str = "y") -> Fix:
    at = Range(Position(0, 6), Position(0, 7))  # the parameter `x`
    group = FileEdits(str(other), digest, (Edit(at, content), Edit(Range(Position(1, 11), Position(1, 12)), content)))
    return Fix("rename", Applicability.SAFE, (Edit(Range(Position(0, 0), Position(0, 1)), "b"),), (group,))


def _lint(fix: Fix):
    return lambda text: [Diagnostic("FLY999", "m", Range(Position(0, 0), Position(0, 1)), fix=fix)] if text == "a\n" else []


def test_fix_all_applies_the_other_file_with_the_fix(tmp_path):
    other = tmp_path / "o.py"
    other.write_text(OTHER, encoding="utf-8")
    others = OtherFiles()
    outcome = fix_all("a\n", _lint(_fix(other, text_digest(OTHER))), others=others)
    assert outcome.text == "b\n"
    assert others.changed() == {str(other): (OTHER, "def f(y):\n    return y\n")}


def test_a_stale_other_file_edit_skips_the_whole_fix(tmp_path):
    other = tmp_path / "o.py"
    other.write_text(OTHER, encoding="utf-8")
    others = OtherFiles()
    outcome = fix_all("a\n", _lint(_fix(other, text_digest("changed since\n"))), others=others)
    assert outcome.text == "a\n" and not others.changed()


def test_an_other_file_edit_that_breaks_parsing_skips_the_whole_fix(tmp_path):
    other = tmp_path / "o.py"
    other.write_text(OTHER, encoding="utf-8")
    others = OtherFiles()
    outcome = fix_all("a\n", _lint(_fix(other, text_digest(OTHER), content="(")), others=others)
    assert outcome.text == "a\n" and not others.changed()


def test_without_a_place_for_other_files_such_a_fix_is_not_applied(tmp_path):
    other = tmp_path / "o.py"
    other.write_text(OTHER, encoding="utf-8")
    fix = _fix(other, text_digest(OTHER))
    assert fix_all("a\n", _lint(fix)).text == "a\n"
    assert apply_fix("a\n", fix) is None
    assert apply_fix("a\n", fix, OtherFiles()) == "b\n"


def test_the_same_other_file_edits_of_two_fixes_apply_once_and_different_ones_conflict(tmp_path):
    other = tmp_path / "o.py"
    other.write_text(OTHER, encoding="utf-8")
    others = OtherFiles()
    same = _fix(other, text_digest(OTHER))
    assert apply_fix("a\n", same, others) == "b\n"
    assert apply_fix("a\n", same, others) == "b\n"  # already there: only the local part
    assert apply_fix("a\n", _fix(other, text_digest(OTHER), content="z"), others) is None  # computed on the old text
    assert others.changed()[str(other)][1] == "def f(y):\n    return y\n"


def test_migrate_takes_the_helper_of_the_other_module_along(tmp_path):
    root = project(tmp_path)
    result = run("migrate", "pkg/kernel.py::k", cwd=root)
    assert "pkg/epilogues.py: written" in result.stderr, result.stderr
    assert (root / "pkg" / "epilogues.py").read_text(encoding="utf-8") == EPILOGUES_FIXED
    assert "fx.SharedAllocator().allocate(SharedStorage).peek()" in (root / "pkg" / "kernel.py").read_text(encoding="utf-8")
    diff = run("migrate", "--diff", "pkg/kernel.py::k", cwd=project(tmp_path / "again"))
    assert "+++ b/pkg/epilogues.py" in diff.stdout


def test_a_finding_moved_by_an_edit_above_keeps_its_other_file_edits(tmp_path):
    # the incremental analysis shifts a finding below an edited line; the other file did not move
    from flydsl_ls.analysis.incremental.chunk_results import _shift

    fix = _fix(tmp_path / "o.py", text_digest(OTHER))
    moved = _shift(Diagnostic("FLY999", "m", Range(Position(0, 0), Position(0, 1)), fix=fix), lambda line: line + 2)
    assert moved.fix.edits[0].range.start.line == 2
    assert moved.fix.elsewhere == fix.elsewhere


def test_a_fix_that_a_fix_in_another_file_enables_is_applied_in_the_same_run(tmp_path):
    """The importer's wait is migrated first; the shim it leaves unused in the other module
    (FLY402) is deleted in the same `check --fix` run, not in the next one."""
    files = {
        "kern/__init__.py": "",
        "kern/utils.py": "from flydsl.expr import rocdl\n\n\ndef _s_waitcnt(val):\n    rocdl.s_waitcnt(val)\n",
        "kern/attn.py": "import flydsl.expr as fx\nfrom .utils import _s_waitcnt\n\n\ndef body():\n    _s_waitcnt(0xC07F)\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    result = run("check", "--no-cache", "--target-arch", "gfx942", "--fix", "--unsafe-fixes", "kern", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Found 2 errors (2 fixed, 0 remaining)" in result.stdout
    assert (tmp_path / "kern/attn.py").read_text() == "import flydsl.expr as fx\n\n\ndef body():\n    fx.rocdl.s_waitcnt(lgkmcnt=0)\n"
    assert "_s_waitcnt" not in (tmp_path / "kern/utils.py").read_text()


def test_a_second_kernel_of_the_file_plans_on_the_helper_as_the_first_fix_left_it(tmp_path):
    """Two kernels of one file hand LDS to one helper of another module: after the first
    fix edited the helper, the second is planned on the edited text (the run's overlay),
    finds the pointer form there and is applied in the same run (it used to be skipped as
    stale: computed on the disk's text)."""
    root = project(tmp_path)
    kernel = root / "pkg" / "kernel.py"
    text = kernel.read_text(encoding="utf-8")
    second = (
        "\n\nallocator2 = SmemAllocator(None, arch=\"gfx942\", global_sym_name=\"smem1\")\n"
        "lds_two_offset = allocator2._align(allocator2.ptr, 16)\n"
        "allocator2.ptr = lds_two_offset + 64 * 4 * 2\n\n\n"
        "@flyc.kernel\n"
        "def k2(X: fx.Tensor, Y: fx.Tensor):\n"
        "    tx = fx.thread_idx.x\n"
        "    lds_two = SmemPtr(allocator2.get_base(), lds_two_offset, T.f16, shape=(256,)).get()\n"
        "    fx.gpu.barrier()\n"
        "    shuffle_out(Y, tx, lds_two, 4)\n"
    )
    kernel.write_text(text.replace("import shuffle_out", "import shuffle_out, shuffle_rows") + second
                      + "    shuffle_rows(Y, tx, lds_two)\n", encoding="utf-8")
    # a helper only the second kernel uses: its fix edits the module differently (a conflict)
    epilogues = root / "pkg" / "epilogues.py"
    epilogues.write_text(
        epilogues.read_text(encoding="utf-8")
        + "\n\ndef shuffle_rows(Y, tx, lds_rows):\n"
        "    idx = arith.index_cast(ir.IndexType.get(), fx.Int32(tx).ir_value())\n"
        "    fx.ptr_store(fx.Vector(vector.load(ir.VectorType.get([2], ir.F16Type.get()), lds_rows, [idx])), fx.get_iter(Y) + tx)\n",
        encoding="utf-8",
    )
    result = run("check", "--no-cache", "--select", "FLY203", "--fix", "--unsafe-fixes", "pkg/kernel.py", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 remaining" in result.stdout, result.stdout
    fixed = kernel.read_text(encoding="utf-8")
    assert "SmemAllocator" not in fixed and "shuffle_out(Y, tx, lds_two, 4)" in fixed
    helper = epilogues.read_text(encoding="utf-8")
    assert helper.startswith(EPILOGUES_FIXED.rstrip("\n"))
    assert "if isinstance(lds_rows, fx.Pointer) else vector.load(" in helper
