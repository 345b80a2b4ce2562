"""`flydsl-ls migrate PATH[::function] [--diff] [--verify]`: what is written, printed and
returned, and which functions a migration touches (actions/migrate.py)."""

from __future__ import annotations

import difflib
import shutil
from pathlib import Path

import pytest

from flydsl_ls.actions.migrate import UnknownFunction, kernel_with_fix_in, kernels, scope_of, with_fix
from flydsl_ls.analysis.engine import AnalysisRequest, analyze
from flydsl_ls.analysis.incremental import IncrementalAnalyzer
from tests.test_cli import run

REPO = Path(__file__).resolve().parents[1]
LEGACY = REPO / "examples" / "legacy_kernel.py"
# examples/legacy_kernel.py migrated whole: every fix, unsafe ones included; the FLY901 on
# BufferCopyLDS64b has no fix and stays.
MIGRATED = (REPO / "tests" / "fixtures" / "legacy_kernel.migrated.txt").read_text(encoding="utf-8")

TWO_KERNELS = '''import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl.expr import arith
from flydsl.expr.typing import T


def _shared(v: fx.Int32):
    return arith.index_cast(T.index, v)  # used by both kernels


def _only_a(x: fx.Int32):
    return fx.Int32(fx.Int32(x))  # used by kernel_a only


@flyc.kernel
def kernel_a(Out: fx.Tensor, n: fx.Int32):
    bid = fx.block_idx.x
    row = fx.Int32(bid) * 4
    Out[row] = _only_a(n) + fx.Int32(_shared(n))


@flyc.kernel
def kernel_b(Out: fx.Tensor, n: fx.Int32):
    bid = fx.block_idx.x
    Out[bid] = fx.Int32(fx.Int32(n)) + fx.Int32(_shared(n))
'''
KERNEL_A_MIGRATED = TWO_KERNELS.replace(
    "    return fx.Int32(fx.Int32(x))  # used by kernel_a only\n", "    return x  # used by kernel_a only\n"
).replace("    row = fx.Int32(bid) * 4\n", "    row = bid * 4\n")


@pytest.fixture
def legacy(tmp_path: Path) -> Path:
    path = tmp_path / "legacy_kernel.py"
    shutil.copy(LEGACY, path)
    return path


def test_migrates_the_whole_file_to_the_fixed_text(legacy):
    result = run("migrate", "legacy_kernel.py", cwd=legacy.parent)
    assert legacy.read_text(encoding="utf-8") == MIGRATED
    assert result.returncode == 1  # the FLY901 without a fix is left, and printed
    (left,) = result.stdout.splitlines()
    assert left.startswith("legacy_kernel.py:108:16: FLY901 use `fx.rocdl.BufferCopyLDS32b`")
    assert "`fx.rocdl.BufferCopyLDS64b` is deprecated" in left
    assert "16 fixes (FLY101 3, FLY102 2, FLY103 4, FLY104 3, FLY105 1, FLY301 2, FLY901 1)" in result.stderr
    assert "findings in scope 17 -> 1" in result.stderr
    again = run("migrate", "legacy_kernel.py", cwd=legacy.parent)  # a fixpoint: nothing more
    assert legacy.read_text(encoding="utf-8") == MIGRATED and "nothing to fix" in again.stderr


def test_diff_prints_the_migration_and_writes_nothing(legacy):
    result = run("migrate", "legacy_kernel.py", "--diff", cwd=legacy.parent)
    assert legacy.read_bytes() == LEGACY.read_bytes()
    expected = difflib.unified_diff(
        LEGACY.read_text(encoding="utf-8").splitlines(keepends=True), MIGRATED.splitlines(keepends=True),
        fromfile="a/legacy_kernel.py", tofile="b/legacy_kernel.py",
    )
    assert result.stdout == "".join(expected)
    assert result.returncode == 1  # changes to show, as `check --diff`


def test_a_kernel_and_the_helpers_only_it_uses(tmp_path):
    path = tmp_path / "two.py"
    path.write_text(TWO_KERNELS, encoding="utf-8")
    result = run("migrate", "two.py::kernel_a", cwd=tmp_path)
    # kernel_a and _only_a migrated; _shared (kernel_b uses it too) and kernel_b untouched
    assert path.read_text(encoding="utf-8") == KERNEL_A_MIGRATED
    assert result.returncode == 0, result.stderr  # nothing left in kernel_a's scope
    assert "in kernel_a and 1 helper only it uses (_only_a); findings in scope 3 -> 0" in result.stderr


def test_without_a_function_every_kernel_and_their_shared_helpers(tmp_path):
    path = tmp_path / "two.py"
    path.write_text(TWO_KERNELS, encoding="utf-8")
    result = run("migrate", "two.py", cwd=tmp_path)
    text = path.read_text(encoding="utf-8")
    assert "    return fx.Index(v)  # used by both kernels\n" in text
    assert "    Out[bid] = n + fx.Int32(_shared(n))\n" in text
    assert "arith" not in text.replace("flydsl.expr", "") and "T.index" not in text
    assert result.returncode == 0, result.stderr


def test_scope_of_a_launcher_takes_the_kernel_only_it_launches():
    scope = scope_of(LEGACY.read_text(encoding="utf-8"), "softmax")
    assert [k.name for k in scope.roots] == ["softmax"]
    assert scope.helpers[0] == "softmax_kernel" and "_lane_and_warp" in scope.helpers
    assert [(k.name, k.kind) for k in kernels(LEGACY.read_text(encoding="utf-8"))] == [
        ("softmax_kernel", "kernel"), ("softmax", "jit")
    ]


def test_a_builder_and_a_nested_kernel_by_name():
    source = (
        "import flydsl.compiler as flyc\nimport flydsl.expr as fx\n\n\n"
        "def build(n):\n"
        "    @flyc.kernel\n"
        "    def inner(Out: fx.Tensor):\n"
        "        Out[0] = fx.Int32(fx.Int32(n))\n\n"
        "    @flyc.jit\n"
        "    def launch(Out: fx.Tensor):\n"
        "        inner(Out).launch(grid=(1, 1, 1), block=(64, 1, 1))\n\n"
        "    return launch\n"
    )
    assert [(k.name, k.kind) for k in kernels(source)] == [("build", "builder")]
    assert [k.name for k in scope_of(source, "inner").roots] == ["build.inner"]
    assert scope_of(source, "build.inner").lines == [(6, 8)]
    with pytest.raises(UnknownFunction, match="its kernels: build"):
        scope_of(source, "missing")


def test_unknown_function_and_missing_file(legacy):
    result = run("migrate", "legacy_kernel.py::nope", cwd=legacy.parent)
    assert result.returncode == 2
    assert "no function `nope` in the file (its kernels: softmax_kernel, softmax)" in result.stderr
    assert legacy.read_bytes() == LEGACY.read_bytes()
    assert run("migrate", "absent.py", cwd=legacy.parent).returncode == 2
    (legacy.parent / "bad.py").write_text("def f(:\n")
    result = run("migrate", "bad.py", cwd=legacy.parent)
    assert result.returncode == 2 and "bad.py:1: does not parse" in result.stderr
    (legacy.parent / "plain.py").write_text("x = 1\n")
    result = run("migrate", "plain.py", cwd=legacy.parent)
    assert result.returncode == 2 and "no @flyc.kernel, @flyc.jit function or kernel builder" in result.stderr


def test_verify_without_an_example_says_how_to_add_one(legacy):
    result = run("migrate", "legacy_kernel.py", "--verify", cwd=legacy.parent)
    assert result.returncode == 2
    assert legacy.read_bytes() == LEGACY.read_bytes()
    assert "has none; nothing written" in result.stderr
    # the scaffold's example for the file's launcher, ready to paste
    assert 'the editor\'s "Add compile example" CodeLens on `softmax`' in result.stderr
    assert "# flydsl: example\ndef softmax_example(device):" in result.stderr


def test_the_kernel_around_a_line_from_its_statement_alone_agrees_with_the_parse():
    """"Migrate this kernel" on a line: the lint's top-level statement decides it without a
    parse of the file when a fix lies in the kernel's own lines (a builder, a kernel, a
    launcher); otherwise (a helper, a line after the function, fixes only in its helpers)
    the statement says nothing and the file is parsed (``with_fix``). Over every line of
    these files, and of the 213 real ones (docs/performance.md), the two agree."""
    builder = (
        "import flydsl.compiler as flyc\nimport flydsl.expr as fx\n\n\n"
        "def build(n):\n"
        "    @flyc.kernel\n"
        "    def inner(Out: fx.Tensor):\n"
        "        Out[0] = fx.Int32(fx.Int32(n))\n\n"
        "    return inner\n\n\n# a comment after it\n"
    )
    decided = 0
    for source in (TWO_KERNELS, builder, LEGACY.read_text(encoding="utf-8")):
        diagnostics = analyze(AnalysisRequest(source)).diagnostics
        analyzer = IncrementalAnalyzer()
        analyzer.analyze(AnalysisRequest(source))
        for line in range(source.count("\n")):
            first, _, name, text = analyzer.statement_at(line, source)
            if name is None:
                continue
            found = kernel_with_fix_in(text, name, first + 1, line + 1, diagnostics)
            if found is not None:
                decided += 1
                assert [k.name for k in with_fix(source, diagnostics, line + 1)] == [found], (name, line)
    # the comment after the builder is in its statement, not in the function
    analyzer = IncrementalAnalyzer()
    analyzer.analyze(AnalysisRequest(builder))
    comment = builder.splitlines().index("# a comment after it")
    first, _, name, text = analyzer.statement_at(comment, builder)
    diagnostics = analyze(AnalysisRequest(builder)).diagnostics
    assert name == "build" and kernel_with_fix_in(text, name, first + 1, 8, diagnostics) == "build"
    assert kernel_with_fix_in(text, name, first + 1, comment + 1, diagnostics) is None
    assert decided > 20
