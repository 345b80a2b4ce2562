"""flydsl-ls as a wheel: built from this checkout with `python -m build`, carrying what
flydsl-ls reads at run time (the FlyDSL API table, the rule pages diagnostics link to:
file: URLs, see flydsl_ls/data), installed into a new virtual environment (no system
site-packages, nothing of the checkout on its path), where `flydsl-ls check examples/`
reports what the README says.

The wheel's dependencies come from PyPI (or pip's cache), as for a user.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from flydsl_ls.analysis.rules import ALL_RULES
from tests.checkout import copy_checkout
from tests.test_examples import EXPECTED, pinned

ROOT = Path(__file__).resolve().parent.parent


def _run(command: list, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    import build  # noqa: F401  (the test extra's `build`: when missing, this fails, never skips)

    tmp = tmp_path_factory.mktemp("wheel")
    source = copy_checkout(tmp / "src")
    done = _run([sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp / "dist"), str(source)], tmp)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (built,) = (tmp / "dist").glob("flydsl_ls-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """A new virtual environment with the wheel installed; its bin/ folder."""
    venv = tmp_path_factory.mktemp("venv") / "env"
    done = _run([sys.executable, "-m", "venv", str(venv)], venv.parent)
    assert done.returncode == 0, done.stderr
    bin_dir = venv / ("Scripts" if os.name == "nt" else "bin")
    done = _run([str(bin_dir / "python"), "-m", "pip", "install", "--quiet", str(wheel)], venv.parent)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return bin_dir


def test_wheel_holds_every_module_and_data_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    package = ROOT / "flydsl_ls"
    wanted = {
        path.relative_to(ROOT).as_posix()
        for path in package.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }
    assert "flydsl_ls/data/flydsl_api.json" in wanted and "flydsl_ls/py.typed" in wanted
    assert wanted <= names, sorted(wanted - names)
    assert {f"flydsl_ls/data/rules/{rule.code}.md" for rule in ALL_RULES} <= names
    metadata = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "flydsl-ls = flydsl_ls.cli:console" in zipfile.ZipFile(wheel).read(metadata).decode()


def test_installed_wheel_checks_the_examples(installed, tmp_path):
    python = installed / "python"
    where = _run([str(python), "-c", "import flydsl_ls; print(flydsl_ls.__file__)"], tmp_path)
    assert where.returncode == 0 and Path(where.stdout.strip()).is_relative_to(installed.parent), where
    # The README's command, from the checkout's folder: findings, exit 1.
    done = _run([str(installed / "flydsl-ls"), "check", "examples/", "--output-format", "json"], ROOT)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    items = json.loads(done.stdout)
    assert pinned(items) == EXPECTED
    # The same findings as the checkout itself gives, with the release fixed for both (the
    # installed FlyDSL, which differs between the two environments, would otherwise decide).
    args = ["check", str(ROOT / "examples"), "--output-format", "json", "--flydsl-version", "0.5.0", "--no-cache"]
    from_wheel = _run([str(installed / "flydsl-ls"), *args], tmp_path)
    from_checkout = _run([sys.executable, "-m", "flydsl_ls", *args], tmp_path)

    def found(result):
        items = json.loads(result.stdout)
        return [(Path(i["filename"]).name, i["code"], i["location"]["row"], i["message"]) for i in items]

    assert found(from_wheel) == found(from_checkout) != []


def test_installed_wheel_reads_its_data(installed, tmp_path):
    """The rule pages come from the registry and the releases from the packaged API table."""
    page = _run([str(installed / "flydsl-ls"), "rule", "FLY401"], tmp_path)
    assert page.returncode == 0 and "fx.rocdl.s_waitcnt(vmcnt=0, lgkmcnt=0, expcnt=0)" in page.stdout
    bad = _run([str(installed / "flydsl-ls"), "check", "--flydsl-version", "banana", "."], tmp_path)
    assert bad.returncode == 2 and "known releases: 0.2.0" in bad.stderr and "0.5.0" in bad.stderr
