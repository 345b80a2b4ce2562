"""The values a ``target-arch`` or ``flydsl-version`` setting may take.

Shared by ``[tool.flydsl-ls]`` (an error), the CLI's flags (an error) and the editor's
settings (a warning, the value ignored), so all three accept the same values.
"""

from __future__ import annotations

import re

from flydsl_ls.analysis.model.apis import table

# The AMDGPU processors of the GCN5/CDNA/RDNA generations FlyDSL's LLVM knows (the
# processor names in its bundled LLVM, plus gfx90a/gfx90c and the gfx940/gfx941 that
# earlier FlyDSL releases accepted). A target id may add features: `gfx942:sramecc+:xnack-`.
KNOWN_ARCHES = (
    "gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909", "gfx90a", "gfx90c",
    "gfx940", "gfx941", "gfx942", "gfx950",
    "gfx1010", "gfx1011", "gfx1012", "gfx1013",
    "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035", "gfx1036",
    "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152", "gfx1153",
    "gfx1200", "gfx1201", "gfx1250", "gfx1251",
)
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
