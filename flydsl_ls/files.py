"""Finding Python files, reading them safely, and naming their package."""

from __future__ import annotations

import io
import os
import tokenize
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from flydsl_ls import config

PYTHON_SUFFIXES = (".py", ".pyi")


class UnreadableFile(Exception):
    """The file cannot be read or decoded; the message says why."""


def discover(paths: list[Path], settings_for=config.settings_for) -> Iterator[Path]:
    """Python files under ``paths``; explicitly named files are always included."""
    seen: set[Path] = set()
    for path in paths:
        if path.is_file():
            if path not in seen:
                seen.add(path)
                yield path
            continue
        for folder, dirnames, filenames in os.walk(path):
            here = Path(folder)
            settings = settings_for(here)
            dirnames[:] = sorted(d for d in dirnames if not settings.is_excluded(here / d))
            for name in sorted(filenames):
                candidate = here / name
                if name.endswith(PYTHON_SUFFIXES) and not settings.is_excluded(candidate):
                    if candidate not in seen:
                        seen.add(candidate)
                        yield candidate


def read_source(path: Path) -> str:
    """Decode as Python does (PEP 263 cookie, else UTF-8); newlines kept as written."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise UnreadableFile(f"cannot read: {error.strerror or error}") from error
    return decode_source(raw)


def decode_source(raw: bytes) -> str:
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as error:
        raise UnreadableFile(
            f"cannot decode: {error} (not UTF-8); save it as UTF-8 or declare its encoding"
        ) from error
    try:
        text = raw.decode(encoding)
    except (UnicodeDecodeError, LookupError) as error:
        raise UnreadableFile(
            f"not valid {encoding} text ({error.reason if hasattr(error, 'reason') else error}); "
            "save it as UTF-8 or declare its encoding"
        ) from error
    return text[1:] if text.startswith("\ufeff") else text


def write_source(path: Path, text: str) -> None:
    """Write back in the encoding the file declares (as read_source decoded it)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(path.read_bytes()).readline)
    except (OSError, SyntaxError):
        encoding = "utf-8"
    path.write_bytes(text.encode(encoding))


@lru_cache(maxsize=1024)
def package_of(path: Path) -> str | None:
    """Dotted package of a file, from the ``__init__.py`` files above it."""
    parts: list[str] = []
    folder = path.resolve().parent
    while (folder / "__init__.py").is_file():
        parts.append(folder.name)
        if folder.parent == folder:
            break
        folder = folder.parent
    return ".".join(reversed(parts)) if parts else ""
