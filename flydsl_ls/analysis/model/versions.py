"""FlyDSL release numbers (``0.3.4.1``) as comparable tuples."""

from __future__ import annotations

import functools
import re

_NUMBER = re.compile(r"^\s*v?(\d+(?:\.\d+)*)")


@functools.lru_cache(maxsize=256)  # the same few releases, asked for every fix reported
def parse(version: str | None) -> tuple[int, ...] | None:
    """``"0.3.4.1"`` -> (0, 3, 4, 1); pre-release and local suffixes are ignored."""
    if not version:
        return None
    match = _NUMBER.match(version)
    if not match:
        return None
    return tuple(int(part) for part in match.group(1).split("."))


def at_least(version: str | None, release: str) -> bool:
    parsed, wanted = parse(version), parse(release)
    if parsed is None or wanted is None:
        return False
    width = max(len(parsed), len(wanted))
    return parsed + (0,) * (width - len(parsed)) >= wanted + (0,) * (width - len(wanted))
