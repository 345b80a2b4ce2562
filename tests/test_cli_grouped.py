"""ruff's `grouped` output format, and `--statistics` grouped per file: which file first."""

from __future__ import annotations

from pathlib import Path

from tests.test_cli import run

A = (
    "import flydsl.expr as fx\n"
    "from flydsl.expr.arith import ArithValue\n"
    "def f(tid):\n"
    "    t = fx.Int32(tid)\n"
    "    a = ArithValue(t) + 1\n"
    "    b = fx.Int32(fx.Int32(a))\n"
    "    c = fx.Int32(fx.Int32(b))\n"
    "    return a, c\n"
)
B = "import flydsl.expr as fx\nx = fx.Int32(fx.Int32(1))\n"


def write(root: Path) -> None:
    (root / "a.py").write_text(A, encoding="utf-8")
    (root / "b.py").write_text(B, encoding="utf-8")


def test_grouped_lists_findings_under_their_file(tmp_path):
    write(tmp_path)
    result = run("check", "a.py", "b.py", "--no-cache", "--output-format", "grouped", cwd=tmp_path)
    assert result.returncode == 1
    body, _, summary = result.stdout.partition("\n\nFound")
    blocks = body.split("\n\n")
    assert blocks[0].splitlines()[0] == "a.py:"
    assert [line.split()[0:2] for line in blocks[0].splitlines()[1:]] == [
        ["5:9", "FLY101"], ["6:9", "FLY104"], ["7:9", "FLY104"], ["7:18", "FLY104"],
    ]
    assert blocks[0].splitlines()[1].startswith("  5:9  FLY101 ")  # positions padded to one width
    assert blocks[1].splitlines() == ["b.py:", "  2:5 FLY104 [*] `fx.Int32(fx.Int32(x))` wraps twice: one wrap is enough"]
    assert summary.startswith(" 5 errors in 2 files checked.")


def test_statistics_grouped_per_file_most_first(tmp_path):
    write(tmp_path)
    result = run("check", ".", "--no-cache", "--statistics", "--output-format", "grouped", cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[:4] == [
        "a.py: 4 findings, 4 fixable (3 safe, 1 unsafe)",
        "  3\tFLY104\t[*] redundant-wrap",
        "  1\tFLY101\t[ ] arith-value-wrapper",
        "",
    ]
    assert lines[4:6] == ["b.py: 1 finding, 1 fixable (1 safe, 0 unsafe)", "  1\tFLY104\t[*] redundant-wrap"]
    assert "Found 5 errors in 2 files checked." in result.stdout
