"""The project's FlyDSL version: the setting, else a pin in the workspace, else the
version installed in the selected interpreter (RULES.md, "Versions")."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# `flydsl==0.3.4.1`, `flydsl>=0.3.1,<0.4`, `flydsl[extra] == 0.5.0 ; python_version...`
_REQUIREMENT = re.compile(
    r"^\s*flydsl\s*(?:\[[^\]]*\])?\s*(?P<spec>(?:[<>=!~]=?|===)\s*[\w.*+!-]+(?:\s*,\s*(?:[<>=!~]=?|===)\s*[\w.*+!-]+)*)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ResolvedVersion:
    version: str
    origin: str  # "setting", "requirements.txt", "installed (/usr/bin/python3)", ...

    def describe(self) -> str:
        return f"FlyDSL {self.version} (from {self.origin})"


def version_from_requirement(line: str) -> str | None:
    """The version a requirement pins: `==` exactly, else the lower bound of `>=`/`~=`."""
    match = _REQUIREMENT.match(line.split("#", 1)[0])
    if not match:
        return None
    clauses = [c.strip() for c in match.group("spec").split(",")]
    for operators in (("==", "==="), (">=", "~=")):
        for clause in clauses:
            for op in operators:
                if clause.startswith(op) and not clause.startswith(op + "="):
                    version = clause[len(op) :].strip()
                    if "*" not in version:
                        return version
    return None


def _from_requirements(path: Path) -> str | None:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        version = version_from_requirement(line)
        if version:
            return version
    return None


def _from_pyproject(path: Path) -> str | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    project = _table(data.get("project"))
    candidates = _list(project.get("dependencies"))
    for extra in _table(project.get("optional-dependencies")).values():
        candidates += _list(extra)
    poetry = _table(_table(_table(data.get("tool")).get("poetry")).get("dependencies"))
    if isinstance(poetry.get("flydsl"), str):
        candidates.append("flydsl" + _poetry_spec(poetry["flydsl"]))
    for requirement in candidates:
        if isinstance(requirement, str):
            version = version_from_requirement(requirement)
            if version:
                return version
    return None


def _table(value) -> dict:
    """A TOML table, or an empty one where the file has something else (never our error)."""
    return value if isinstance(value, dict) else {}


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _poetry_spec(spec: str) -> str:
    spec = spec.strip()
    return spec if spec[:1] in "<>=!~" else f"=={spec.lstrip('^')}"


def _from_setup_py(path: Path) -> str | None:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            version = version_from_requirement(node.value)
            if version:
                return version
    return None


_PIN_FILES = (
    ("requirements*.txt", _from_requirements),
    ("requirements/*.txt", _from_requirements),
    ("pyproject.toml", _from_pyproject),
    ("setup.py", _from_setup_py),
)


_PROJECT_ROOT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg")


@lru_cache(maxsize=256)
def pinned_version(directory: Path) -> ResolvedVersion | None:
    """The nearest pin at or above ``directory``, up to the project's root folder."""
    for folder in (directory, *directory.parents):
        pinned, root = _pin_in(folder)
        if pinned is not None or root:
            return pinned
    return None


@lru_cache(maxsize=256)  # the folders of a tree share their parents: each globbed once
def _pin_in(folder: Path) -> tuple[ResolvedVersion | None, bool]:
    """The pin in ``folder`` itself, and whether it is a project's root folder."""
    for pattern, reader in _PIN_FILES:
        for candidate in sorted(folder.glob(pattern)):
            version = reader(candidate)
            if version:
                return ResolvedVersion(version, str(candidate)), True
    return None, any((folder / marker).exists() for marker in _PROJECT_ROOT_MARKERS)


@lru_cache(maxsize=8)
def installed_version(interpreter: str | None = None) -> ResolvedVersion | None:
    """FlyDSL's version in ``interpreter`` (this process's environment when None)."""
    if interpreter is None:
        found = _version_on_path()
        if found is not None:
            return ResolvedVersion(found, f"installed ({sys.executable})")
        from importlib import metadata  # ~20 ms of a server's first analysis, to import

        try:
            return ResolvedVersion(metadata.version("flydsl"), f"installed ({sys.executable})")
        except metadata.PackageNotFoundError:
            return None
    try:
        done = subprocess.run(
            [interpreter, "-c", "import importlib.metadata as m; print(m.version('flydsl'))"],
            capture_output=True,
            text=True,
            timeout=15,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    version = done.stdout.strip()
    return ResolvedVersion(version, f"installed ({interpreter})") if done.returncode == 0 and version else None


# An installed distribution's metadata folder: `flydsl-0.5.0.dist-info` (what pip writes),
# `flydsl.egg-info` (an old development install).
_METADATA_FOLDER = re.compile(r"flydsl(?:-[^-]+)?\.(dist-info|egg-info)", re.IGNORECASE)


def _version_on_path() -> str | None:
    """The version of the first FlyDSL metadata folder along ``sys.path``, as
    ``importlib.metadata`` finds it, when that is a `dist-info`; None otherwise (other
    layouts: ask it)."""
    for entry in sys.path:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:  # a zip file, a folder gone
            continue
        for name in names:
            match = _METADATA_FOLDER.fullmatch(name)
            if match:
                if match.group(1).lower() != "dist-info":
                    return None
                try:
                    text = (Path(entry or ".") / name / "METADATA").read_text("utf-8", errors="replace")
                except OSError:
                    return None
                found = re.search(r"^Version:[ \t]*(\S+)", text, re.M)
                return found.group(1) if found else None
    return None


def resolve_version(
    setting: str | None, directory: Path | None, interpreter: str | None = None
) -> ResolvedVersion | None:
    if setting:
        return ResolvedVersion(setting, "setting")
    if directory is not None:
        pinned = _pinned_at(directory)
        if pinned is not None:
            return pinned
    return installed_version(interpreter)


@lru_cache(maxsize=256)  # a check asks of each file's folder, twice per file
def _pinned_at(directory: Path) -> ResolvedVersion | None:
    return pinned_version(directory.resolve())


def clear_cache() -> None:
    pinned_version.cache_clear()
    _pin_in.cache_clear()
    _pinned_at.cache_clear()
    installed_version.cache_clear()
