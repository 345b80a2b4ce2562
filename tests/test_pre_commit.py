"""The hooks of .pre-commit-hooks.yaml, run by pre-commit itself as a project would use
them: `repo:` a path to (a copy of) this checkout, `rev:` its commit. pre-commit clones it,
builds a virtual environment and installs flydsl-ls there (its dependencies from PyPI or
pip's cache), then runs the hook on the project's files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.checkout import copy_checkout
from tests.test_cli import CLEAN, LEGACY

GIT = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def git(*args: str, cwd: Path) -> str:
    env = {**os.environ, **GIT}
    return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def hooks_repo(tmp_path_factory) -> tuple[Path, str]:
    """A git repository holding this checkout's files as they are, and its commit."""
    repo = copy_checkout(tmp_path_factory.mktemp("hooks") / "flydsl-ls")
    git("init", "-q", cwd=repo)
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "snapshot", cwd=repo)
    return repo, git("rev-parse", "HEAD", cwd=repo).strip()


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> Path:
    """One pre-commit cache for the module's tests: the hook environment is built once."""
    return tmp_path_factory.mktemp("pre-commit-home")


def project(folder: Path, hooks_repo: tuple[Path, str], hook: str, files: dict[str, str]) -> Path:
    folder.mkdir()
    repo, rev = hooks_repo
    (folder / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {repo}\n    rev: {rev}\n    hooks:\n      - id: {hook}\n"
    )
    # A pinned release, so that results do not depend on the FlyDSL the hook's venv lacks.
    (folder / "requirements.txt").write_text("flydsl==0.5.0\n")
    for name, text in files.items():
        (folder / name).write_text(text)
    git("init", "-q", cwd=folder)
    git("add", "-A", cwd=folder)
    git("commit", "-q", "-m", "kernels", cwd=folder)
    return folder


def pre_commit(folder: Path, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, **GIT, "PRE_COMMIT_HOME": str(home)}
    env.pop("PYTHONPATH", None)  # the hook runs the flydsl-ls pre-commit installed, nothing else
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files", "--color", "never"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=900,
    )


def test_pre_commit_is_installed():
    """The test extra's pre-commit: when it is missing, the tests below fail, never skip."""
    import pre_commit  # noqa: F401


def test_check_hook_fails_on_legacy_code_and_passes_clean_code(tmp_path, hooks_repo, pre_commit_home):
    legacy = project(tmp_path / "legacy", hooks_repo, "flydsl-ls", {"legacy.py": LEGACY, "clean.py": CLEAN})
    done = pre_commit(legacy, pre_commit_home)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "flydsl-ls" in done.stdout and "Failed" in done.stdout
    for finding in ("legacy.py:4:8: FLY101", "legacy.py:5:8: FLY104", "legacy.py:6:5: FLY901"):
        assert finding in done.stdout, done.stdout
    assert "clean.py:" not in done.stdout
    assert (legacy / "legacy.py").read_text() == LEGACY  # the check hook changes nothing
    clean = project(tmp_path / "clean", hooks_repo, "flydsl-ls", {"clean.py": CLEAN})
    done = pre_commit(clean, pre_commit_home)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Passed" in done.stdout


def test_fix_hook_fixes_and_fails_when_it_changed_a_file(tmp_path, hooks_repo, pre_commit_home):
    folder = project(tmp_path / "fix", hooks_repo, "flydsl-ls-fix", {"legacy.py": LEGACY})
    done = pre_commit(folder, pre_commit_home)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "files were modified by this hook" in done.stdout
    fixed = (folder / "legacy.py").read_text()
    assert "ArithValue(tid)" not in fixed and "fx.Int32(fx.Int32(3))" not in fixed
    assert "fx.get(t, 0)" in fixed  # FLY901 has no fix: still reported
    assert "FLY901" in done.stdout
