"""The values a ``target-arch`` or ``flydsl-version`` setting may take.

Shared by ``[tool.flydsl-ls]`` (an error), the CLI's flags (an error) and the editor's
settings (a warning, the value ignored), so all three accept the same values.
"""

from __future__ import annotations

import re

from flydsl_ls.analysis.model.apis import table
from flydsl_ls.analysis.model.arches import KNOWN_ARCHES

# A target id may add features: `gfx942:sramecc+:xnack-`.
_FEATURE = re.compile(r"^[a-z][a-z0-9-]*[+-]$")
# A release number as pip spells one (PEP 440): 0.5.0, v0.3.4.1, 0.6.0rc1, 0.5.0.dev3+g1234.
_RELEASE = re.compile(
    r"^v?\d+(\.\d+)*([-_.]?(a|b|rc|alpha|beta|c|pre|preview)[-_.]?\d*)?"
    r"([-_.]?(post|rev|r)[-_.]?\d*)?([-_.]?dev[-_.]?\d*)?(\+[a-z0-9]+([-_.][a-z0-9]+)*)?$",
    re.IGNORECASE,
)


def arch_problem(value: str) -> str | None:
    """Why ``value`` is not a GPU arch (None when it is one)."""
    name, *features = value.strip().lower().split(":")
    if name in KNOWN_ARCHES and all(_FEATURE.match(feature) for feature in features):
        return None
    return f"unknown GPU arch `{value}`; known arches: {', '.join(KNOWN_ARCHES)}"


def release_problem(value: str) -> str | None:
    """Why ``value`` is not a FlyDSL release number (None when it reads as one). A number
    beyond the known releases is accepted: a newer FlyDSL than this table."""
    if _RELEASE.match(value.strip()):
        return None
    return f"`{value}` is not a FlyDSL release number; known releases: {', '.join(table().releases)}"
