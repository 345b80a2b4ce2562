"""Waves per SIMD from a kernel's register and LDS use (an estimate, as LLVM computes it).

The ISA file does not state occupancy, so it is derived from the counts, with the
per-arch register files and allocation granules of LLVM's AMDGPU backend:

| arch | VGPRs/SIMD lane | granule | max waves/SIMD | LDS per CU |
|---|---|---|---|---|
| gfx90a, gfx940-942 | 512 unified (VGPR + AGPR) | 8 | 8 | 64 KiB |
| gfx950 | 512 unified | 8 | 8 | 160 KiB |
| gfx908 | 256 VGPR + 256 AGPR | 4 | 10 | 64 KiB |
| gfx900/906 | 256 | 4 | 10 | 64 KiB |

SGPRs: 800 per SIMD, granule 16, on all of these. RDNA (gfx10+) is not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flydsl_ls.compile.isa import KernelResources

SIMDS_PER_CU = 4


@dataclass(frozen=True)
class _Arch:
    vgprs: int
    granule: int
    max_waves: int
    lds_bytes: int
    unified: bool  # AGPRs share the VGPR file (gfx90a and later CDNA)


_CDNA3 = _Arch(512, 8, 8, 64 * 1024, True)
_ARCHES = {
    "gfx90a": _CDNA3,
    "gfx940": _CDNA3,
    "gfx941": _CDNA3,
    "gfx942": _CDNA3,
    "gfx950": _Arch(512, 8, 8, 160 * 1024, True),
    "gfx908": _Arch(256, 4, 10, 64 * 1024, False),
    "gfx906": _Arch(256, 4, 10, 64 * 1024, False),
    "gfx900": _Arch(256, 4, 10, 64 * 1024, False),
}


@dataclass(frozen=True)
class Occupancy:
    waves_per_simd: int
    max_waves: int
    limited_by: str  # "VGPRs", "SGPRs", "LDS" or "hardware maximum"
    limits: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "waves_per_simd": self.waves_per_simd,
            "max_waves": self.max_waves,
            "limited_by": self.limited_by,
            "limits": dict(self.limits),
        }


def _align(value: int, granule: int) -> int:
    return max(granule, -(-value // granule) * granule)


def estimate_occupancy(res: KernelResources) -> Occupancy | None:
    """Waves per SIMD for ``res`` on its arch, or None when the arch is not modelled."""
    arch = _ARCHES.get((res.arch or "").split(":")[0])
    if arch is None:
        return None
    limits: dict[str, int] = {}
    if arch.unified:
        total = _align(res.vgprs, 4) + res.agprs if res.agprs else res.vgprs
        limits["VGPRs"] = arch.vgprs // _align(total, arch.granule)
    else:
        limits["VGPRs"] = arch.vgprs // _align(max(res.vgprs, res.agprs), arch.granule)
    limits["SGPRs"] = 800 // _align(res.sgprs, 16)
    if res.lds_bytes > 0:
        threads = 1
        for n in res.workgroup_size or (res.max_workgroup_size or 256, 1, 1):
            threads *= n
        waves_per_group = -(-threads // res.wavefront_size)
        groups = arch.lds_bytes // res.lds_bytes
        limits["LDS"] = (groups * waves_per_group) // SIMDS_PER_CU
    waves = min(arch.max_waves, *limits.values())
    limited_by = "hardware maximum"
    if waves < arch.max_waves:
        limited_by = min(limits, key=lambda k: limits[k])
    return Occupancy(max(waves, 0), arch.max_waves, limited_by, limits)
