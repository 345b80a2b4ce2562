"""FLY702 looks across the workspace: in the CLI, across the paths given."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SHIM = "def _run_compiled(exe, *args):\n    cf = getattr(exe, '_cf', None)\n    return cf(*args)\n"
WRAPPER = "import torch\n\ndef _run_compiled(exe, args):\n    return exe(*args)\n\ndef launch(exe, a):\n    _run_compiled(exe, (a,))\n"


def check(*paths: Path) -> list[dict]:
    result = subprocess.run(
        [sys.executable, "-m", "flydsl_ls", "check", *map(str, paths), "--select", "FLY702", "--output-format", "json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in result.stderr, result.stderr
    return json.loads(result.stdout)


def test_second_definition_across_two_files(tmp_path):
    package = tmp_path / "kernels"
    package.mkdir()
    (package / "__init__.py").write_text("")
    shim = package / "tensor_shim.py"
    wrapper = package / "moe_kernels.py"
    shim.write_text(SHIM)
    wrapper.write_text(WRAPPER)
    found = check(shim, wrapper)
    assert [(Path(f["filename"]).name, f["location"]["row"]) for f in found] == [("moe_kernels.py", 3)]
    message = found[0]["message"]
    assert "import the existing one from `kernels.tensor_shim`" in message
    assert "`_run_compiled(exe, *args)`" in message and "`_run_compiled(exe, args)`" in message


def test_one_file_alone_reports_nothing(tmp_path):
    wrapper = tmp_path / "moe_kernels.py"
    wrapper.write_text(WRAPPER)
    assert check(wrapper) == []


def test_same_signature_without_tensor_shim(tmp_path):
    one, two = tmp_path / "a_ops.py", tmp_path / "b_ops.py"
    one.write_text(SHIM)
    two.write_text(SHIM)
    found = check(tmp_path)
    assert [(Path(f["filename"]).name, f["location"]["row"]) for f in found] == [("b_ops.py", 1)]
    assert "import the existing one from `a_ops`" in found[0]["message"]
    assert "signature" not in found[0]["message"]
