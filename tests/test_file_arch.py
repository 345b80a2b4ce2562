"""The arch per file: a file's own arch (per-file setting, example, name) over `--target-arch`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flydsl_ls.file_arch import arch_in_name, file_arch
from tests.test_cli import run

WAIT = "import flydsl.expr as fx\n\ndef k():\n    fx.rocdl.s_waitcnt(0)\n"
EXAMPLE = WAIT + "\n\n# flydsl: example gfx1250\ndef small(device):\n    return k, ()\n"


def fly401(root: Path, name: str, *extra: str) -> dict:
    result = run("check", name, "--no-cache", "--select", "FLY401", "--target-arch", "gfx942",
                 "--flydsl-version", "0.5.0", "--output-format", "json", *extra, cwd=root)
    (item,) = json.loads(result.stdout)
    return item


@pytest.mark.parametrize(
    "name, arch",
    [
        ("flash_attn_fp8_gfx950.py", "gfx950"),
        ("gemm_a8w8_256x256_gfx1250.py", "gfx1250"),
        ("gfx1250_cluster.py", "gfx1250"),
        ("fmha_gfx1250/kernel.py", "gfx1250"),
        ("flydsl_gfx950_mi355x.py", "gfx950"),
        ("gemm_gfx942_vs_gfx950.py", None),  # two arches: none
        ("gfx95_helpers.py", None),  # not an arch
        ("kernel.py", None),
    ],
)
def test_arch_in_name(name, arch):
    assert arch_in_name(Path("/x") / name) == arch


def test_the_file_says_before_the_default():
    assert file_arch(Path("k.py"), EXAMPLE, None) == "gfx1250"
    assert file_arch(Path("k_gfx950.py"), EXAMPLE, None) == "gfx1250"  # the example before the name
    assert file_arch(Path("k_gfx950.py"), EXAMPLE, "gfx942") == "gfx942"  # the setting before both
    assert file_arch(Path("k.py"), WAIT, None) is None


def test_target_arch_is_only_the_default(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.flydsl-ls]\n", encoding="utf-8")
    for name in ("k.py", "k_gfx1250.py", "with_example.py", "set.py"):
        (tmp_path / name).write_text(EXAMPLE if name == "with_example.py" else WAIT, encoding="utf-8")
    plain = fly401(tmp_path, "k.py")
    assert plain["fix"]["applicability"] == "safe" and "on gfx942" in plain["message"]
    # gfx1250 has no keyword s_waitcnt: the file's own arch leaves the wait without a fix.
    for name in ("k_gfx1250.py", "with_example.py"):
        item = fly401(tmp_path, name)
        assert item["fix"] is None and "gfx1250" in item["message"], name
    assert fly401(tmp_path, "set.py")["fix"] is not None
    (tmp_path / "pyproject.toml").write_text(
        '[tool.flydsl-ls.per-file-target-arch]\n"set.py" = "gfx1250"\n', encoding="utf-8"
    )
    item = fly401(tmp_path, "set.py")
    assert item["fix"] is None and "gfx1250" in item["message"]
    (tmp_path / "pyproject.toml").write_text('[tool.flydsl-ls.per-file-target-arch]\n"set.py" = "gfx9000"\n', encoding="utf-8")
    bad = run("check", "set.py", "--no-cache", cwd=tmp_path)
    assert bad.returncode == 2 and "per-file-target-arch.set.py" in bad.stderr
