"""A file's own GPU arch, which its arch-dependent findings (FLY401, FLY601) are judged for.

``target-arch`` (``--target-arch``, ``FLYDSL_GPU_ARCH``) is the default, not an override of
what the file says about itself. In order:

1. a ``[tool.flydsl-ls.per-file-target-arch]`` pattern matching the file;
2. the arch its ``# flydsl: example gfx950`` markers name (when they all name the same one);
3. an arch in its name or its folder's (``flash_attn_fp8_gfx950.py``, ``fmha_gfx1250/``);
4. the default.

Arch guards inside the file narrow this further, per statement (analysis/rules/_arch.py).
"""

from __future__ import annotations

import re
from pathlib import Path

from flydsl_ls.analysis.model.arches import KNOWN_ARCHES

_IN_NAME = re.compile(r"(?<![0-9a-z])(gfx[0-9]{2,4}[a-z]?)(?![0-9a-z])", re.I)
# Comment lines naming an example's arch: read with a pattern, not the tokenizer, since this
# runs on every lint (a line inside a multi-line string that looks so is taken too).
_MARKER_LINE = re.compile(r"^[ \t]*#\s*flydsl:\s*example\s+(gfx[0-9a-z]+)\s*(?:#.*)?$", re.I | re.M)
# What every marker line holds, searched first: a pattern opening on `^` is tried at every
# character, this one only at each `#` (12x faster over the corpus).
_MARKER = re.compile(r"#\s*flydsl:\s*example", re.I)


def file_arch(path: Path | None, source: str | None, configured: str | None) -> str | None:
    """The file's own arch (steps 1-3 above; ``configured``: step 1's value), or None."""
    if configured:
        return configured
    if source is not None and _MARKER.search(source) is not None:
        named = {arch.lower() for arch in _MARKER_LINE.findall(source)} & set(KNOWN_ARCHES)
        if len(named) == 1:
            return named.pop()
    if path is not None:
        return arch_in_name(path)
    return None


def arch_in_name(path: Path) -> str | None:
    """The one known arch named in the file's name, else in its folder's (None for none or two)."""
    for part in (path.stem, path.parent.name):
        named = {m.lower() for m in _IN_NAME.findall(part) if m.lower() in KNOWN_ARCHES}
        if named:
            return named.pop() if len(named) == 1 else None
    return None
