"""Settings: ``[tool.flydsl-ls]`` in the nearest ``pyproject.toml``, then overrides.

The CLI and the server resolve settings the same way, so editor and CI agree on a
file: pyproject values first, then command-line flags or editor settings on top.
"""

from __future__ import annotations

import fnmatch
import json
import os
import sys
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from flydsl_ls.analysis.rules import Rule, select_rules, unknown_selectors
from flydsl_ls.analysis.rules.context import AnalysisOptions
from flydsl_ls.setting_values import arch_problem, release_problem

SECTION = "flydsl-ls"
DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".hg", ".mypy_cache", ".nox", ".pants.d", ".pytype",
    ".ruff_cache", ".flydsl-ls-cache", ".svn", ".tox", ".venv", "__pypackages__", "_build", "buck-out", "build",
    "dist", "node_modules", "venv", "__pycache__",
)
KNOWN_KEYS = {
    "select", "extend-select", "ignore", "per-file-ignores", "exclude", "extend-exclude", "target-arch",
    "flydsl-version", "cache-dir", "per-file-target-arch",
}
ARCH_ENV = "FLYDSL_GPU_ARCH"


class ConfigError(Exception):
    """A configuration file that cannot be used (unreadable, bad TOML, wrong types)."""


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()  # added to `select` (or to the default rules)
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    per_file_target_arch: tuple[tuple[str, str], ...] = ()  # pattern -> the arch of the files it matches
    exclude: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    default_exclude: bool = True  # skip DEFAULT_EXCLUDE too (`--exclude` replaces both, as in ruff)
    target_arch: str | None = None
    flydsl_version: str | None = None
    root: Path | None = None  # the directory of the pyproject.toml these came from
    cache_dir: Path | None = None  # where `check` keeps its results (relative to root)
    warnings: tuple[str, ...] = field(default=(), compare=False)

    def with_overrides(self, **overrides) -> Settings:
        """Overrides that are None are left alone (flag not given). As in ruff, a given
        ``select`` replaces the configured ``select`` and ``extend-select``, a given
        ``exclude`` the configured ``exclude`` and the default excludes; ``extend_select``
        and ``extend_exclude`` add to the configured ones."""
        given = {k: v for k, v in overrides.items() if v is not None}
        for key in ("select", "extend_select", "ignore", "exclude", "extend_exclude"):
            if key in given:
                given[key] = tuple(given[key])
        if "select" in given or "extend_select" in given:
            configured = () if "select" in given else self.extend_select
            given["extend_select"] = (*configured, *given.get("extend_select", ()))
        if "exclude" in given:
            given["default_exclude"] = False
        if "extend_exclude" in given:
            given["extend_exclude"] = (*self.extend_exclude, *given["extend_exclude"])
        return replace(self, **given)

    def options(self) -> AnalysisOptions:
        arch = self.target_arch or os.environ.get(ARCH_ENV) or None
        return AnalysisOptions(target_arch=arch, flydsl_version=self.flydsl_version)

    def arch_for(self, path: Path | None) -> str | None:
        """The arch a ``per-file-target-arch`` pattern gives the file (the first that matches)."""
        if path is not None:
            for pattern, arch in self.per_file_target_arch:
                if self._matches(path, pattern):
                    return arch
        return None

    def rules_for(self, path: Path | None) -> tuple[type[Rule], ...]:
        ignore = list(self.ignore)
        if path is not None:
            for pattern, codes in self.per_file_ignores:
                if self._matches(path, pattern):
                    ignore.extend(codes)
        return select_rules(list(self.select) if self.select else None, ignore, list(self.extend_select))

    def is_excluded(self, path: Path) -> bool:
        if self.default_exclude and any(part in DEFAULT_EXCLUDE for part in path.parts):
            return True
        return any(self._matches(path, pattern) for pattern in (*self.exclude, *self.extend_exclude))

    def _matches(self, path: Path, pattern: str) -> bool:
        """ruff-style: a glob against the path relative to the root, or the file name."""
        try:
            relative = path.resolve().relative_to(self.root.resolve()) if self.root else path
        except ValueError:
            relative = path
        text = relative.as_posix()
        pattern = pattern.rstrip("/")
        return (
            fnmatch.fnmatch(text, pattern)
            or fnmatch.fnmatch(path.name, pattern)
            or any(fnmatch.fnmatch(part, pattern) for part in relative.parts[:-1])
            or text.startswith(pattern + "/")
        )


def from_mapping(table: dict, root: Path | None, source: str) -> Settings:
    """Settings from a ``[tool.flydsl-ls]`` table; ConfigError naming every wrong value."""
    warnings = []
    problems: list[str] = []
    normalised = {str(k).replace("_", "-"): v for k, v in table.items()}
    for key in sorted(set(normalised) - KNOWN_KEYS):
        warnings.append(f"{source}: unknown setting `{key}` ignored")

    def strings(key: str, value) -> tuple[str, ...]:
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(value)
        hint = f" (write [{json.dumps(value)}])" if isinstance(value, str) else ""
        problems.append(f"`{key}` must be a list of strings, got {_shown(value)}{hint}")
        return ()

    def string(key: str) -> str | None:
        value = normalised.get(key)
        if value is None or value == "":
            return None
        if not isinstance(value, str):
            problems.append(f"`{key}` must be a string, got {_shown(value)}")
            return None
        return value

    lists = {key: strings(key, normalised[key]) for key in ("select", "extend-select", "ignore", "exclude", "extend-exclude") if key in normalised}
    per_file = normalised.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        problems.append(f"`per-file-ignores` must be a table of pattern = [codes], got {_shown(per_file)}")
        per_file = {}
    per_file_ignores = tuple(
        (pattern, strings(f"per-file-ignores.{pattern}", codes)) for pattern, codes in per_file.items()
    )
    per_arch = normalised.get("per-file-target-arch", {})
    if not isinstance(per_arch, dict) or not all(isinstance(v, str) for v in per_arch.values()):
        problems.append(f"`per-file-target-arch` must be a table of pattern = \"gfx...\", got {_shown(per_arch)}")
        per_arch = {}
    for pattern, arch in per_arch.items():
        if arch_problem(arch):
            problems.append(f"`per-file-target-arch.{pattern}`: {arch_problem(arch)}")
    target_arch, flydsl_version = string("target-arch"), string("flydsl-version")
    for key, value, problem in (
        ("target-arch", target_arch, arch_problem),
        ("flydsl-version", flydsl_version, release_problem),
    ):
        if value is not None and problem(value):
            problems.append(f"`{key}`: {problem(value)}")
    selectors = [
        *lists.get("select", ()),
        *lists.get("extend-select", ()),
        *lists.get("ignore", ()),
        *(code for _, codes in per_file_ignores for code in codes),
    ]
    unknown = unknown_selectors(selectors)
    if unknown:
        problems.append(f"unknown rule selector(s): {', '.join(unknown)}")
    cache = string("cache-dir")
    if problems:
        raise ConfigError("\n".join(f"{source}: {problem}" for problem in problems))
    return Settings(
        select=lists.get("select"),
        extend_select=lists.get("extend-select", ()),
        ignore=lists.get("ignore", ()),
        per_file_ignores=per_file_ignores,
        per_file_target_arch=tuple(per_arch.items()),
        exclude=lists.get("exclude", ()),
        extend_exclude=lists.get("extend-exclude", ()),
        target_arch=target_arch,
        flydsl_version=flydsl_version,
        root=root,
        cache_dir=(root / cache if root is not None else Path(cache)) if cache else None,
        warnings=tuple(warnings),
    )


def _shown(value) -> str:
    """A TOML value as the user wrote it, for an error message: `"FLY104"` (a string)."""
    kind = {str: "a string", bool: "a boolean", int: "a number", float: "a number", list: "a list", dict: "a table"}
    return f"{kind.get(type(value), type(value).__name__)} ({value!r})"


def load_pyproject(path: Path) -> Settings | None:
    """Settings from one pyproject.toml; None when it has no [tool.flydsl-ls] table."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read: {error}") from error
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from error
    tool = data.get("tool", {})
    table = tool.get(SECTION) if isinstance(tool, dict) else None  # `tool = 1` has no table of ours
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.{SECTION}] must be a table")
    return from_mapping(table, path.parent, str(path))


@lru_cache(maxsize=256)
def _settings_for_directory(directory: Path) -> Settings:
    for folder in (directory, *directory.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            settings = load_pyproject(candidate)
            if settings is not None:
                return settings
    return Settings()


def settings_for(path: Path) -> Settings:
    """The settings of the nearest pyproject.toml with a [tool.flydsl-ls] table."""
    directory = path if path.is_dir() else path.parent
    return _settings_for_directory(directory.resolve())


def clear_cache() -> None:
    _settings_for_directory.cache_clear()
