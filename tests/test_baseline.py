"""`check --write-baseline`: today's findings recorded, later runs fail only on new ones."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.test_cli import run

CORPUS = Path("/work/corpus")
REAL = [
    CORPUS / "flydsl/kernels/attention/flash_attn_fp8_gfx950.py",
    CORPUS / "aiter/aiter/ops/flydsl/kernels/gemm_a8w8_gfx1250.py",
    CORPUS / "flydsl/kernels/norm/softmax_kernel.py",
]

LEGACY = (
    "import flydsl.expr as fx\n"
    "from flydsl.expr.arith import ArithValue\n"
    "def f(tid):\n"
    "    t = fx.Int32(tid)\n"
    "    a = ArithValue(t) + 1\n"
    "    b = fx.Int32(fx.Int32(a))\n"
    "    return a, b\n"
)


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.flydsl-ls]\n", encoding="utf-8")
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_written_baseline_passes_and_a_new_line_fails(tmp_path):
    root = project(tmp_path, {"k.py": LEGACY})
    assert run("check", ".", "--no-cache", cwd=root).returncode == 1
    wrote = run("check", ".", "--no-cache", "--write-baseline", cwd=root)
    assert wrote.returncode == 0, wrote.stdout + wrote.stderr
    assert "Wrote 2 findings in 1 file to" in wrote.stdout
    data = json.loads((root / ".flydsl-ls" / "baseline.json").read_text(encoding="utf-8"))
    assert data["files"]["k.py"] == [
        {"code": "FLY101", "line": "a = ArithValue(t) + 1", "count": 1},
        {"code": "FLY104", "line": "b = fx.Int32(fx.Int32(a))", "count": 1},
    ]
    same = run("check", ".", "--no-cache", cwd=root)
    assert same.returncode == 0, same.stdout
    assert same.stdout == "All checks passed! (1 file checked; 2 in the baseline not shown)\n"
    # Lines moved (a comment above, the function re-indented in a class): still baselined.
    moved = "# moved\n\n" + LEGACY.replace("def f(tid):", "def g():\n    pass\ndef f(tid):")
    (root / "k.py").write_text(moved, encoding="utf-8")
    assert run("check", ".", "--no-cache", cwd=root).returncode == 0
    # One new legacy line (a copy of a baselined one counts as new): reported, and the run fails.
    (root / "k.py").write_text(moved.replace("    return a, b\n", "    c = ArithValue(t) + 1\n    return a, b, c\n"), encoding="utf-8")
    new = run("check", ".", "--no-cache", cwd=root)
    assert new.returncode == 1
    (line,) = [x for x in new.stdout.splitlines() if x.startswith("k.py:")]
    assert line.startswith("k.py:11:9: FLY101 ")
    assert "Found 1 error in 1 file checked; 2 in the baseline not shown." in new.stdout
    # --no-baseline reports all of them.
    assert run("check", ".", "--no-cache", "--no-baseline", "-q", cwd=root).stdout.count("\n") == 3


def test_a_fixed_finding_is_said_gone(tmp_path):
    root = project(tmp_path, {"k.py": LEGACY})
    run("check", ".", "--no-cache", "--write-baseline", cwd=root)
    (root / "k.py").write_text(LEGACY.replace("fx.Int32(fx.Int32(a))", "fx.Int32(a)"), encoding="utf-8")
    result = run("check", ".", "--no-cache", cwd=root)
    assert result.returncode == 0
    assert "1 in the baseline not shown; 1 baselined finding gone: `--write-baseline` records it" in result.stdout


def test_baseline_file_flag_and_conflicts(tmp_path):
    root = project(tmp_path, {"k.py": LEGACY})
    wrote = run("check", "k.py", "--no-cache", "--write-baseline", "ci/base.json", cwd=root)
    assert wrote.returncode == 0 and (root / "ci/base.json").is_file()
    assert run("check", "k.py", "--no-cache", cwd=root).returncode == 1  # not the default file
    assert run("check", "k.py", "--no-cache", "--baseline-file", "ci/base.json", cwd=root).returncode == 0
    # a path after the flag is what to check, not the baseline's name
    (root / "sub").mkdir()
    (root / "sub" / "m.py").write_text(LEGACY, encoding="utf-8")
    sub = run("check", "--no-cache", "--write-baseline", "sub", cwd=root)
    assert sub.returncode == 0 and "Wrote 2 findings in 1 file to" in sub.stdout, sub.stdout + sub.stderr
    assert run("check", "sub", "--no-cache", cwd=root).returncode == 0
    bad = run("check", "k.py", "--write-baseline", "--fix", cwd=root)
    assert bad.returncode == 2 and "--write-baseline records findings: use it without --fix" in bad.stderr
    (root / "broken.json").write_text("{", encoding="utf-8")
    broken = run("check", "k.py", "--no-cache", "--baseline-file", "broken.json", cwd=root)
    assert broken.returncode == 2 and "not a flydsl-ls baseline" in broken.stderr


@pytest.mark.skipif(not all(p.is_file() for p in REAL), reason="needs the FlyDSL and aiter kernels in /work/corpus")
def test_baseline_on_real_kernels(tmp_path):
    files = {}
    for path in REAL:
        files[path.name] = path.read_text(encoding="utf-8")
    root = project(tmp_path, files)
    before = run("check", ".", "--no-cache", cwd=root)
    assert before.returncode == 1
    count = sum(1 for line in before.stdout.splitlines() if line.count(":") >= 3 and " FLY" in line)
    assert count > 10
    assert run("check", ".", "--no-cache", "--write-baseline", cwd=root).returncode == 0
    same = run("check", ".", "--no-cache", cwd=root)
    assert same.returncode == 0, same.stdout
    assert f"{count} in the baseline not shown" in same.stdout
    # A new legacy line in a real kernel: the run fails on it alone.
    name = REAL[0].name
    text = files[name]
    anchor = "inv_l = ArithValue(inv_l) * ctx.vd_fp8\n"
    assert anchor in text
    at = text.index(anchor)
    indent = text[text.rindex("\n", 0, at) + 1 : at]
    (root / name).write_text(text[:at] + anchor + indent + "extra = ArithValue(inv_l) * ctx.vd_fp8\n" + indent + text[at + len(anchor):].lstrip(" "), encoding="utf-8")
    new = run("check", ".", "--no-cache", cwd=root)
    assert new.returncode == 1, new.stdout
    reported = [line for line in new.stdout.splitlines() if " FLY" in line and line.startswith(name)]
    assert len(reported) == 1 and " FLY101 " in reported[0], new.stdout
    shutil.rmtree(root / ".flydsl-ls")
