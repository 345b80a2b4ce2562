"""`flydsl-ls compile`: listing, errors, and a real compile printing the ISA."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from flydsl_ls.cli import main
from tests.compile.conftest import MFMA_GEMM, ROOT
from tests.compiler import needs_compiler


def test_list(capsys):
    assert main(["compile", str(MFMA_GEMM), "--list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split(": ", 1)[1] for line in out] == ["one_tile", "one_tile_gfx950  [gfx950]"]


def test_missing_file(capsys):
    assert main(["compile", "no/such/file.py"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_no_example(tmp_path, capsys):
    plain = tmp_path / "plain.py"
    plain.write_text("x = 1\n")
    assert main(["compile", str(plain)]) == 2
    assert "flydsl: example" in capsys.readouterr().err


@needs_compiler
def test_compile_emit_isa(tmp_path):
    cmd = [sys.executable, "-m", "flydsl_ls", "compile", f"{MFMA_GEMM}::one_tile", "--arch", "gfx942",
           "--emit", "isa", "--launch"]
    env = {**os.environ, "FLYDSL_LS_CACHE": str(tmp_path)}
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "v_mfma_f32_16x16x16_f16" in proc.stdout  # the ISA itself, on stdout
    assert proc.stdout.lstrip().startswith(".amdgcn_target")
    # the summary goes to stderr when the ISA is on stdout
    assert "tile_gemm_kernel_0: VGPRs" in proc.stderr and "LDS 2048 B" in proc.stderr
    assert "launch: " in proc.stderr


@needs_compiler
def test_compile_json(tmp_path):
    cmd = [sys.executable, "-m", "flydsl_ls", "compile", str(ROOT / "examples/compile/vector_add.py"),
           "--arch", "gfx000", "--json"]
    env = {**os.environ, "FLYDSL_LS_CACHE": str(tmp_path)}
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300, env=env)
    assert proc.returncode == 1
    data = json.loads(proc.stdout)
    assert data["status"] == "crash" and data["error"]["kind"] == "crash"
    assert "error: the compiler process crashed" in proc.stderr
