"""Reading Python sources as Python does, and naming the package a file is in."""

from __future__ import annotations

import io
import os
import tokenize
from functools import lru_cache
from pathlib import Path


class UnreadableFile(Exception):
    """The file cannot be read or decoded, or is past the size bound; the message says why."""


# Past this a file is not analysed, by the CLI (bytes read) or the editor (characters): a
# generated or data file, whose tree alone would take gigabytes and minutes. The largest
# real kernel file is 254 kB.
MAX_SOURCE_SIZE = 8_000_000


def file_time_bound() -> float:
    """Seconds the analysis of one file may take: ``$FLYDSL_LS_FILE_TIMEOUT``, else 300.
    ``check`` stops a file past it; the editor stops re-checking it while it is edited."""
    given = os.environ.get("FLYDSL_LS_FILE_TIMEOUT", "")
    try:
        return float(given) if given else 300.0
    except ValueError:
        return 300.0


def too_large(size: int) -> str | None:
    if size <= MAX_SOURCE_SIZE:
        return None
    return f"too large to analyse ({size:,} bytes; the bound is {MAX_SOURCE_SIZE:,}): a generated or data file?"


def read_source(path: Path) -> str:
    """Decode as Python does (PEP 263 cookie, else UTF-8); newlines kept as written."""
    try:
        raw = path.read_bytes()
    except OSError as error:
        raise UnreadableFile(f"cannot read: {error.strerror or error}") from error
    return decode_source(raw)


def decode_source(raw: bytes) -> str:
    problem = too_large(len(raw))
    if problem:
        raise UnreadableFile(problem)
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


@lru_cache(maxsize=4096)  # asked of each file for its model, its header and its check
def package_of(path: Path) -> str | None:
    """Dotted package of a file, from the ``__init__.py`` files above it."""
    return _package_of_folder(path.resolve().parent)


@lru_cache(maxsize=1024)  # a file is asked of as given and resolved: its folder once
def _package_of_folder(folder: Path) -> str:
    parts: list[str] = []
    while (folder / "__init__.py").is_file():
        parts.append(folder.name)
        if folder.parent == folder:
            break
        folder = folder.parent
    return ".".join(reversed(parts)) if parts else ""
