"""`check --fix`, `--unsafe-fixes`, `--diff`, `--fix-only`: what is written, printed and counted."""

from __future__ import annotations

from pathlib import Path

from tests.test_cli import run

LEGACY = (
    "import flydsl.expr as fx\n"
    "from flydsl.expr.arith import ArithValue  # the wrapper\n"
    "from flydsl.expr import arith\n"
    "\n"
    "\n"
    "def lane_of(v):\n"
    "    tid = fx.thread_idx.x\n"
    "    lane = ArithValue(tid) % 64  # keep this comment\n"
    "    other = ArithValue(v) + 1\n"
    "    wrap = fx.Int32(fx.Int32(3))\n"
    "    return fx.make_layout(lane, other), wrap, fx.get(v, 0)\n"
)
SAFE_FIXED = (
    "import flydsl.expr as fx\n"
    "from flydsl.expr.arith import ArithValue  # the wrapper\n"
    "from flydsl.expr import arith\n"
    "\n"
    "\n"
    "def lane_of(v):\n"
    "    tid = fx.thread_idx.x\n"
    "    lane = tid % 64  # keep this comment\n"
    "    other = ArithValue(v) + 1\n"
    "    wrap = fx.Int32(3)\n"
    "    return fx.make_layout(lane, other), wrap, fx.get(v, 0)\n"
)


def write(tmp_path: Path, text: str, name: str = "k.py") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


def test_fix_applies_safe_fixes_and_counts(tmp_path):
    path = write(tmp_path, LEGACY)
    # `from flydsl.expr import arith` is unused before and after: not the fix's business.
    result = run("check", "--fix", "k.py", cwd=tmp_path)
    assert path.read_text() == SAFE_FIXED
    assert "(2 fixed, 2 remaining)" in result.stdout
    assert result.returncode == 1  # FLY101 (unsafe only) and FLY901 remain
    again = run("check", "--fix", "k.py", cwd=tmp_path)
    assert path.read_text() == SAFE_FIXED
    assert "Found 2 errors in 1 file checked." in again.stdout


def test_unused_import_is_only_removed_when_the_fix_made_it_unused(tmp_path):
    path = write(tmp_path, LEGACY)
    run("check", "--fix", "k.py", cwd=tmp_path)
    text = path.read_text()
    assert "from flydsl.expr import arith\n" in text  # was unused before: left alone
    assert "ArithValue  # the wrapper" in text  # still used by the unsafe site


def test_unsafe_fixes_remove_the_last_use_and_its_import(tmp_path):
    path = write(tmp_path, LEGACY)
    result = run("check", "--fix", "--unsafe-fixes", "k.py", cwd=tmp_path)
    text = path.read_text()
    assert "ArithValue" not in text
    assert "    other = v + 1\n" in text
    assert "# keep this comment" in text
    assert "(3 fixed, 1 remaining)" in result.stdout


def test_diff_prints_and_writes_nothing(tmp_path):
    path = write(tmp_path, LEGACY)
    result = run("check", "--diff", "k.py", cwd=tmp_path)
    assert path.read_text() == LEGACY
    assert result.returncode == 1
    assert "--- a/k.py" in result.stdout and "+++ b/k.py" in result.stdout
    assert "-    lane = ArithValue(tid) % 64  # keep this comment" in result.stdout
    assert "+    lane = tid % 64  # keep this comment" in result.stdout
    assert "Would fix 2 errors." in result.stderr
    clean = write(tmp_path, "import flydsl.expr as fx\nx = fx.thread_idx.x\n", "c.py")
    nothing = run("check", "--diff", "c.py", cwd=tmp_path)
    assert nothing.returncode == 0 and nothing.stdout == ""
    assert clean.read_text().startswith("import flydsl")


def test_fix_only_reports_no_remaining_findings(tmp_path):
    path = write(tmp_path, LEGACY)
    result = run("check", "--fix-only", "k.py", cwd=tmp_path)
    assert result.returncode == 0
    assert "Fixed 2 errors." in result.stdout
    assert "FLY901" not in result.stdout
    assert "lane = tid % 64" in path.read_text()


def test_fixing_twice_changes_nothing(tmp_path):
    path = write(tmp_path, LEGACY)
    run("check", "--fix", "--unsafe-fixes", "k.py", cwd=tmp_path)
    once = path.read_text()
    result = run("check", "--fix", "--unsafe-fixes", "k.py", cwd=tmp_path)
    assert path.read_text() == once
    assert "fixed" not in result.stdout


def test_line_endings_and_declared_encoding_survive(tmp_path):
    text = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + LEGACY
    path = tmp_path / "k.py"
    path.write_bytes(text.replace("\n", "\r\n").encode("latin-1"))
    run("check", "--fix", "k.py", cwd=tmp_path)
    raw = path.read_bytes()
    assert b"caf\xe9" in raw  # still latin-1
    assert raw.count(b"\r\n") == raw.count(b"\n")  # CRLF kept everywhere
    assert b"lane = tid % 64" in raw


def test_fixes_of_one_rule_are_decided_on_the_text_the_previous_rules_left(tmp_path):
    """FLY102 drops the unwrap of a raw `arith.select` result; FLY301 would make that result an
    fx value (`cond.select(...)`), which the raw `llvm.StoreOp` cannot take. Applied in one pass,
    the two fixes broke aiter's pa_decode_swa.py; one rule per pass, FLY301 sees the raw builder."""
    source = (
        "from flydsl.expr import arith\n"
        "from flydsl._mlir.dialects import llvm\n"
        "\n"
        "\n"
        "def store_scale(rmax, neg_inf, one, zero, ptr):\n"
        "    scale = arith.select(rmax > neg_inf, one, zero)\n"
        "    llvm.StoreOp(arith.unwrap(scale), ptr)\n"
    )
    path = write(tmp_path, source)
    run("check", "--fix", "--unsafe-fixes", "k.py", cwd=tmp_path)
    assert path.read_text() == source.replace("arith.unwrap(scale)", "scale")
