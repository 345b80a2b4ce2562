"""Finding the Python files to check, and writing fixed files (and caches) back."""

from __future__ import annotations

import io
import os
import tempfile
import tokenize
from collections.abc import Iterator
from pathlib import Path

from flydsl_ls import config

PYTHON_SUFFIXES = (".py", ".pyi")


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


def write_source(path: Path, text: str) -> None:
    """Write back in the encoding the file declares (as read_source decoded it)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(path.read_bytes()).readline)
    except (OSError, SyntaxError):
        encoding = "utf-8"
    path.write_bytes(text.encode(encoding))


def replace_atomically(path: Path, data: bytes) -> None:
    """``path`` holds ``data``, or what it held: written to a temporary file beside it, then
    renamed over it (a reader never sees half a file). For caches: the file is private (mode
    0600). Raises OSError; nothing is left behind."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
