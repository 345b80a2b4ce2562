"""The wheel carries what flydsl-ls reads at run time: the FlyDSL API table and the rule
pages that diagnostics link to (file: URLs, see flydsl_ls/data)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from flydsl_ls.analysis.rules import ALL_RULES

REPO = Path(__file__).resolve().parent.parent


def test_the_wheel_ships_the_rule_pages(tmp_path):
    source = tmp_path / "source"  # a copy: building writes build/ and *.egg-info
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "flydsl_ls", source / "flydsl_ls", ignore=shutil.ignore_patterns("__pycache__"))
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(source)],
        capture_output=True, text=True, timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = tmp_path.glob("flydsl_ls-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "flydsl_ls/data/flydsl_api.json" in names
    assert {f"flydsl_ls/data/rules/{rule.code}.md" for rule in ALL_RULES} <= names
