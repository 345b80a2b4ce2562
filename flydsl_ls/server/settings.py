"""Editor settings as they arrive (initializationOptions, workspace/didChangeConfiguration).

Kept apart from resolved settings: a document's settings are ``[tool.flydsl-ls]`` of the
nearest pyproject.toml (``config.settings_for``) with these on top
(``Settings.with_overrides``), exactly as the CLI puts its flags on top.

Keys may be kebab-case (``target-arch``), camelCase (``targetArch``) or snake_case, flat
or under a ``flydsl-ls`` section. Unknown keys, wrong types, unknown arches and release
numbers that do not read as one are warnings, never errors: the value is ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from typing import Any

from flydsl_ls.analysis.rules import unknown_selectors
from flydsl_ls.setting_values import arch_problem, release_problem

SECTIONS = ("flydsl-ls", "flydsl_ls", "flydslLs", "flydsl")
LOG_LEVELS = {"debug": "debug", "trace": "debug", "info": "info", "warning": "warning", "warn": "warning", "error": "error"}
DEFAULT_DIAGNOSTICS_DELAY = 0.15  # seconds between the last keystroke and a re-lint
MAX_DIAGNOSTICS_DELAY = 10.0
DEFAULT_COMPILE_TIMEOUT = 120.0  # seconds per compile request (flydsl-ls.compile & co.)


@dataclass(frozen=True)
class EditorSettings:
    """One layer of editor settings; None means "not set in this layer"."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    target_arch: str | None = None
    flydsl_version: str | None = None
    log_level: str | None = None
    diagnostics_delay: float | None = None  # seconds
    compile_timeout: float | None = None  # seconds per compile request
    compile_memory_limit: int | None = None  # MiB the compile worker may allocate (0: no limit)
    inlay_hints: bool | None = None  # the inferred types of assigned names (on by default)
    isa_hints: bool | None = None  # after a compile, each source line's instruction counts (off by default)
    trust: bool | None = None  # False: the client says the workspace is untrusted (no code runs)

    def over(self, base: EditorSettings) -> EditorSettings:
        """This layer on top of ``base``."""
        given = {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}
        return replace(base, **given)

    def overrides(self) -> dict[str, Any]:
        """Keyword arguments for ``config.Settings.with_overrides``."""
        return dict(
            select=self.select,
            ignore=self.ignore,
            target_arch=self.target_arch,
            flydsl_version=self.flydsl_version,
        )

    @property
    def delay(self) -> float:
        return DEFAULT_DIAGNOSTICS_DELAY if self.diagnostics_delay is None else self.diagnostics_delay

    @property
    def hints(self) -> bool:
        return self.inlay_hints is not False

    @property
    def isa_counts(self) -> bool:
        return self.isa_hints is True

    @property
    def timeout(self) -> float:
        return DEFAULT_COMPILE_TIMEOUT if self.compile_timeout is None else self.compile_timeout


def _kebab(key: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", str(key)).replace("_", "-").lower()


def section_of(raw: Any) -> dict | None:
    """Our settings inside what a client sent: a ``flydsl-ls`` section, or a flat table."""
    if not isinstance(raw, dict):
        return None
    for name in SECTIONS:
        if isinstance(raw.get(name), dict):
            return raw[name]
    return raw


def parse(raw: Any, source: str) -> tuple[EditorSettings, list[str]]:
    """Settings and the warnings about what was ignored."""
    warnings: list[str] = []
    if raw is None:
        return EditorSettings(), warnings
    table = section_of(raw)
    if table is None:
        warnings.append(f"{source}: settings must be an object, got {type(raw).__name__}; ignored")
        return EditorSettings(), warnings
    values: dict[str, Any] = {}
    for key, value in table.items():
        name = _kebab(key)
        if value is None:
            continue
        if name in ("select", "ignore"):
            codes = _strings(value)
            if codes is None:
                warnings.append(f"{source}: `{key}` must be a list of rule codes; ignored")
                continue
            unknown = unknown_selectors(list(codes))
            if unknown:
                warnings.append(f"{source}: `{key}`: unknown rule selector(s) {', '.join(unknown)}")
            values[name.replace("-", "_")] = tuple(c for c in codes if c not in unknown)
        elif name in ("target-arch", "flydsl-version"):
            if not isinstance(value, str):
                warnings.append(f"{source}: `{key}` must be a string; ignored")
                continue
            problem = (arch_problem if name == "target-arch" else release_problem)(value)
            if value.strip() and problem:
                warnings.append(f"{source}: `{key}`: {problem}; ignored")
                continue
            values[name.replace("-", "_")] = value.strip() or None
        elif name == "log-level":
            level = LOG_LEVELS.get(str(value).lower())
            if level is None:
                warnings.append(f"{source}: `{key}` must be one of debug, info, warning, error; ignored")
                continue
            values["log_level"] = level
        elif name == "diagnostics-delay":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                warnings.append(f"{source}: `{key}` must be a number of milliseconds; ignored")
                continue
            values["diagnostics_delay"] = min(value / 1000.0, MAX_DIAGNOSTICS_DELAY)
        elif name == "compile-timeout":
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                warnings.append(f"{source}: `{key}` must be a positive number of seconds; ignored")
                continue
            values["compile_timeout"] = float(value)
        elif name == "compile-memory-limit":
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                warnings.append(f"{source}: `{key}` must be a whole number of MiB (0: no limit); ignored")
                continue
            values["compile_memory_limit"] = value
        elif name in ("inlay-hints", "isa-hints", "trust"):
            if not isinstance(value, bool):
                warnings.append(f"{source}: `{key}` must be true or false; ignored")
                continue
            values[name.replace("-", "_")] = value
        elif name == "token":
            continue  # remote TCP's token, checked by the protocol before initialize (tcp.py)
        else:
            warnings.append(f"{source}: unknown setting `{key}` ignored")
    return EditorSettings(**values), warnings


def _strings(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    return None
