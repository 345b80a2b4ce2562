"""A baseline to ratchet a migration on, as basedpyright's ``--writebaseline``.

``check --write-baseline`` records the findings of today (warnings and errors; notes never
fail a run) in ``.flydsl-ls/baseline.json``; a later run, in the CLI or the editor, sets
aside the findings the baseline holds and fails only on new ones.

A finding is matched by its file (relative to the baseline's project folder), its rule and
the text of the line it starts on, whitespace-normalised, not by its line number: adding
or removing lines above it, or re-indenting it, keeps it matched. Each (file, rule, text)
holds a count: a legacy line copied elsewhere in the file is a new finding.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from flydsl_ls.analysis.model.diagnostic import Diagnostic, Severity

FOLDER = ".flydsl-ls"
NAME = "baseline.json"
VERSION = 1
_RECORDED = (Severity.ERROR, Severity.WARNING)  # notes never fail a run: nothing to record

Key = tuple[str, str]  # (rule code, line text)
_NEWLINE = re.compile(r"\r\n|\r|\n")


class BaselineError(Exception):
    """A baseline file that cannot be read."""


def default_path(root: Path | None) -> Path:
    """``.flydsl-ls/baseline.json`` in the project folder (the ``pyproject.toml``'s, else ``root``)."""
    return (root or Path.cwd()) / FOLDER / NAME


def lines_of(text: str) -> list[str]:
    """The lines as Python numbers them (not ``str.splitlines``, which also splits at form feeds)."""
    return _NEWLINE.split(text)


def line_key(code: str, line: str) -> Key:
    return code, " ".join(line.split())


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_posix()


@dataclass
class Baseline:
    path: Path
    files: dict[str, Counter] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        """The project folder the recorded paths are relative to: the one holding ``.flydsl-ls``."""
        return self.path.parent.parent if self.path.parent.name == FOLDER else self.path.parent

    def name_of(self, path: Path) -> str:
        return _relative(path, self.root)

    def split(self, path: Path, diagnostics: list[Diagnostic], lines: list[str]) -> tuple[list[Diagnostic], list[Diagnostic]]:
        """(new, baselined) findings of one file; ``lines``: its text's lines."""
        left = Counter(self.files.get(self.name_of(path), {}))
        new, known = [], []
        for d in diagnostics:
            key = _key(d, lines)
            if key is not None and left[key] > 0:
                left[key] -= 1
                known.append(d)
            else:
                new.append(d)
        return new, known

    def record(self, path: Path, diagnostics: list[Diagnostic], lines: list[str]) -> None:
        """Replace the file's entries by these findings."""
        counts = Counter(key for d in diagnostics if (key := _key(d, lines)) is not None)
        name = self.name_of(path)
        if counts:
            self.files[name] = counts
        else:
            self.files.pop(name, None)

    def count(self, names=None) -> int:
        return sum(sum(c.values()) for n, c in self.files.items() if names is None or n in names)

    def write(self) -> None:
        data = {
            "version": VERSION,
            "files": {
                name: [
                    {"code": code, "line": line, "count": n}
                    for (code, line), n in sorted(counts.items())
                ]
                for name, counts in sorted(self.files.items())
            },
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        temporary = self.path.with_name(self.path.name + ".tmp")
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, self.path)


def _key(d: Diagnostic, lines: list[str]) -> Key | None:
    if d.severity not in _RECORDED:
        return None
    line = d.range.start.line
    return line_key(d.code, lines[line] if 0 <= line < len(lines) else "")


def load(path: Path) -> Baseline:
    """The baseline at ``path`` (empty when there is none); BaselineError when unreadable."""
    try:
        stat = path.stat()
    except OSError:
        return Baseline(path)
    files = _parsed(str(path), stat.st_mtime_ns, stat.st_size)
    return Baseline(path, {name: Counter(counts) for name, counts in files.items()})


@lru_cache(maxsize=8)
def _parsed(path: str, _mtime: int, _size: int) -> dict[str, dict[Key, int]]:
    """Read once per version of the file (the editor asks on every lint)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        files = {
            name: {line_key(item["code"], item["line"]): int(item.get("count", 1)) for item in items}
            for name, items in data["files"].items()
        }
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise BaselineError(f"{path}: not a flydsl-ls baseline ({error})") from error
    return files


def as_hints(diagnostics: list[Diagnostic], known: list[Diagnostic]) -> list[Diagnostic]:
    """The editor's view: baselined findings stay (their quick fixes with them) as hints,
    not struck through, saying why they are quiet."""
    from dataclasses import replace

    quiet = {id(d) for d in known}
    return [
        replace(d, severity=Severity.HINT, deprecated=False, message=f"{d.message} (in the baseline)") if id(d) in quiet else d
        for d in diagnostics
    ]
