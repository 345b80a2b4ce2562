"""Read an AMDGPU ISA file (``22_final_isa.s``): per-kernel resources and instructions.

Two sources in the same file, both written by LLVM:
- the ``.amdhsa_kernel`` block (``.amdhsa_next_free_vgpr``, ``.amdhsa_accum_offset``,
  ``.amdhsa_group_segment_fixed_size``, ...) and the ``.set .L<kernel>.num_agpr`` lines;
- the ``amdhsa.kernels`` YAML note between ``.amdgpu_metadata`` and ``.end_amdgpu_metadata``
  (``.vgpr_count``, ``.agpr_count``, ``.sgpr_count``, spills, ``.max_flat_workgroup_size``).
The YAML note is preferred where both give a number; it is parsed by hand (no PyYAML).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from flydsl_ls.compile.occupancy import Occupancy, estimate_occupancy

_TARGET = re.compile(r'^\s*\.amdgcn_target\s+"[^"]*-(gfx[0-9a-z]+)')
_KERNEL_BLOCK = re.compile(r"^\s*\.amdhsa_kernel\s+(\S+)")
_DIRECTIVE = re.compile(r"^\s*\.amdhsa_(\w+)\s+(-?\d+)")
_SET = re.compile(r"^\s*\.set\s+\.L(\S+)\.(num_vgpr|num_agpr|numbered_sgpr|private_seg_size),\s*(\d+)")
_YAML_KEY = re.compile(r"^\s*(?:-\s+)?\.(\w+):\s*(.*?)\s*$")
_LABEL = re.compile(r"^[A-Za-z_.$][\w.$]*:")
_MNEMONIC = re.compile(r"^\s+([a-z][a-z0-9_]*)\b")


@dataclass
class KernelResources:
    """What one kernel uses, as the ISA metadata states it."""

    name: str
    arch: str | None = None
    vgprs: int = 0  # architected VGPRs (``.vgpr_count``)
    agprs: int = 0  # accumulation VGPRs (CDNA)
    sgprs: int = 0  # ``.sgpr_count`` (includes VCC/flat-scratch/XNACK reservations)
    lds_bytes: int = 0  # static LDS, ``group_segment_fixed_size``
    scratch_bytes: int = 0  # per-lane private memory, ``private_segment_fixed_size``
    vgpr_spills: int = 0
    sgpr_spills: int = 0
    accum_offset: int | None = None  # first AGPR slot in the unified file (gfx90a+)
    wavefront_size: int = 64
    max_workgroup_size: int | None = None  # ``.max_flat_workgroup_size``
    workgroup_size: tuple[int, int, int] | None = None  # ``.reqd_workgroup_size``
    occupancy: Occupancy | None = None

    @property
    def waves_per_simd(self) -> int | None:
        return self.occupancy.waves_per_simd if self.occupancy else None

    def summary(self) -> str:
        parts = [
            f"VGPRs {self.vgprs}",
            f"AGPRs {self.agprs}",
            f"SGPRs {self.sgprs}",
            f"LDS {self.lds_bytes} B",
            f"scratch {self.scratch_bytes} B",
        ]
        if self.vgpr_spills or self.sgpr_spills:
            parts.append(f"spills v{self.vgpr_spills}/s{self.sgpr_spills}")
        if self.occupancy is not None:
            parts.append(f"occupancy {self.occupancy.waves_per_simd} waves/SIMD ({self.occupancy.limited_by})")
        return ", ".join(parts)

    def to_dict(self) -> dict:
        data = {k: v for k, v in self.__dict__.items() if k != "occupancy"}
        data["occupancy"] = self.occupancy.to_dict() if self.occupancy else None
        return data


@dataclass
class IsaReport:
    arch: str | None
    kernels: list[KernelResources] = field(default_factory=list)
    instructions: list[str] = field(default_factory=list)  # mnemonics in program order

    def opcode_counts(self) -> Counter:
        return Counter(self.instructions)

    def matching(self, prefix: str) -> list[str]:
        """Distinct mnemonics starting with ``prefix`` (e.g. ``v_mfma``), sorted."""
        return sorted({m for m in self.instructions if m.startswith(prefix)})

    @property
    def mfma(self) -> list[str]:
        return self.matching("v_mfma") + self.matching("v_smfmac") + self.matching("v_wmma")


def _int(text: str) -> int | None:
    try:
        return int(text, 0)
    except ValueError:
        return None


def _parse_yaml_kernels(lines: list[str]) -> list[dict]:
    """The ``amdhsa.kernels`` entries, scalar keys only (plus ``reqd_workgroup_size``)."""
    kernels: list[dict] = []
    in_kernels = False
    current: dict | None = None
    item_indent: int | None = None
    pending_list: str | None = None
    for line in lines:
        if not line.strip() or line.strip() in ("---", "..."):
            continue
        if not line.startswith(" "):
            in_kernels = line.startswith("amdhsa.kernels:")
            pending_list = None
            continue
        if not in_kernels:
            continue
        indent = len(line) - len(line.lstrip())
        stripped = line.strip()
        if stripped.startswith("- .") and (item_indent is None or indent <= item_indent):
            item_indent = indent
            current = {}
            kernels.append(current)
        if current is None:
            continue
        if indent > (item_indent or 0) + 2 and not stripped.startswith("- ."):
            # a list element of a nested key (e.g. reqd_workgroup_size values)
            if pending_list and stripped.startswith("- "):
                value = _int(stripped[2:].strip())
                if value is not None:
                    current.setdefault(pending_list, []).append(value)
            continue
        if indent > (item_indent or 0) + 2:
            continue  # a key inside a nested mapping (the .args entries)
        match = _YAML_KEY.match(line)
        if not match:
            continue
        key, value = match.groups()
        pending_list = key if value == "" else None
        if value:
            number = _int(value)
            current[key] = number if number is not None else value.strip("'\"")
    return kernels


def parse_isa(text: str) -> IsaReport:
    arch = None
    directives: dict[str, dict[str, int]] = {}
    sets: dict[str, dict[str, int]] = {}
    instructions: list[str] = []
    yaml_lines: list[str] = []
    current_block: str | None = None
    in_yaml = False
    in_code = False
    for line in text.splitlines():
        if in_yaml:
            if line.strip() == ".end_amdgpu_metadata":
                in_yaml = False
            else:
                yaml_lines.append(line)
            continue
        stripped = line.strip()
        if stripped == ".amdgpu_metadata":
            in_yaml = True
            continue
        match = _TARGET.match(line)
        if match:
            arch = match.group(1)
            continue
        match = _KERNEL_BLOCK.match(line)
        if match:
            current_block = match.group(1)
            directives[current_block] = {}
            continue
        if stripped == ".end_amdhsa_kernel":
            current_block = None
            continue
        if current_block is not None:
            match = _DIRECTIVE.match(line)
            if match:
                directives[current_block][match.group(1)] = int(match.group(2))
            continue
        match = _SET.match(line)
        if match:
            sets.setdefault(match.group(1), {})[match.group(2)] = int(match.group(3))
            continue
        if _LABEL.match(line):
            in_code = not line.startswith(".L") or in_code
            continue
        if stripped.startswith((".section", ".rodata")):
            in_code = False
            continue
        if stripped.startswith(".text"):
            continue
        if in_code:
            match = _MNEMONIC.match(line)
            if match and not stripped.startswith("."):
                instructions.append(match.group(1))

    report = IsaReport(arch=arch, instructions=instructions)
    meta_by_name = {k.get("name"): k for k in _parse_yaml_kernels(yaml_lines)}
    names = list(dict.fromkeys([*directives, *(n for n in meta_by_name if n)]))
    for name in names:
        d = directives.get(name, {})
        s = sets.get(name, {})
        m = meta_by_name.get(name, {})
        wg = m.get("reqd_workgroup_size")
        res = KernelResources(
            name=name,
            arch=arch,
            vgprs=m.get("vgpr_count", s.get("num_vgpr", d.get("next_free_vgpr", 0))),
            agprs=m.get("agpr_count", s.get("num_agpr", 0)),
            sgprs=m.get("sgpr_count", d.get("next_free_sgpr", 0)),
            lds_bytes=m.get("group_segment_fixed_size", d.get("group_segment_fixed_size", 0)),
            scratch_bytes=m.get("private_segment_fixed_size", d.get("private_segment_fixed_size", 0)),
            vgpr_spills=m.get("vgpr_spill_count", 0),
            sgpr_spills=m.get("sgpr_spill_count", 0),
            accum_offset=d.get("accum_offset"),
            wavefront_size=m.get("wavefront_size", 64),
            max_workgroup_size=m.get("max_flat_workgroup_size"),
            workgroup_size=tuple(wg) if isinstance(wg, list) and len(wg) == 3 else None,
        )
        res.occupancy = estimate_occupancy(res)
        report.kernels.append(res)
    return report


def parse_isa_file(path: str | Path) -> IsaReport:
    return parse_isa(Path(path).read_text(encoding="utf-8", errors="replace"))
