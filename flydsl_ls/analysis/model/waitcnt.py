"""The `s_waitcnt` immediate, per target arch: layouts, decode, encode (pure, no AST).

FlyDSL's keyword form `fx.rocdl.s_waitcnt(vmcnt=, lgkmcnt=, expcnt=)` picks an encoder by
arch (`expr/rocdl/universal.py`): gfx942*/gfx950* -> `cdna3`, gfx11* -> `rdna3`,
gfx120* -> `rdna4`, anything else (gfx1250, gfx90a, ...) raises. The layouts below mirror
those encoders bit for bit (tests/test_waitcnt_encoding.py checks every 16-bit value
against FlyDSL's own code). A counter left out (None) is encoded at its maximum, which
means "do not wait on it".

Used by FLY401 (rewrite a hand-encoded bitfield) and by hover (explain one).
"""

from __future__ import annotations

from dataclasses import dataclass

COUNTERS = ("vmcnt", "lgkmcnt", "expcnt")  # the keyword order we emit
BITFIELD_MAX = 0xFFFF  # FlyDSL's positional form rejects anything else


@dataclass(frozen=True)
class Layout:
    """Where each counter lives in the 16-bit immediate, as (lsb, width) pieces, low first."""

    family: str  # FlyDSL's encoder module: cdna3 | rdna3 | rdna4
    description: str
    fields: dict[str, tuple[tuple[int, int], ...]]

    def maximum(self, counter: str) -> int:
        return (1 << sum(width for _, width in self.fields[counter])) - 1

    @property
    def mask(self) -> int:
        """The bits any counter occupies; FlyDSL's encoder never sets the others."""
        bits = 0
        for pieces in self.fields.values():
            for lsb, width in pieces:
                bits |= ((1 << width) - 1) << lsb
        return bits

    def span(self, counter: str) -> str:
        return "+".join(f"[{lsb + width - 1}:{lsb}]" for lsb, width in self.fields[counter])


CDNA3 = Layout(
    "cdna3",
    "CDNA (gfx942/gfx950): vmcnt [3:0]+[15:14], expcnt [6:4], lgkmcnt [11:8]",
    {"vmcnt": ((0, 4), (14, 2)), "lgkmcnt": ((8, 4),), "expcnt": ((4, 3),)},
)
RDNA3 = Layout(
    "rdna3",
    "RDNA3 (gfx11xx): expcnt [2:0], lgkmcnt [9:4], vmcnt [15:10]",
    {"vmcnt": ((10, 6),), "lgkmcnt": ((4, 6),), "expcnt": ((0, 3),)},
)
RDNA4 = Layout(
    "rdna4",
    "RDNA4 (gfx120x): expcnt [2:0], lgkmcnt [9:4], vmcnt [15:10]",
    {"vmcnt": ((10, 6),), "lgkmcnt": ((4, 6),), "expcnt": ((0, 3),)},
)


@dataclass(frozen=True)
class ArchSupport:
    arch: str
    layout: Layout | None
    reason: str = ""  # why there is no layout


def support(arch: str | None) -> ArchSupport | None:
    """The keyword form's layout for ``arch`` (FlyDSL's dispatch); None when unknown."""
    if not arch or not arch.strip():
        return None
    name = arch.strip().lower()
    if name.startswith(("gfx942", "gfx950")):
        return ArchSupport(name, CDNA3)
    if name.startswith("gfx11"):
        return ArchSupport(name, RDNA3)
    if name.startswith("gfx120"):
        return ArchSupport(name, RDNA4)
    if name.startswith("gfx125"):
        return ArchSupport(
            name,
            None,
            f"FlyDSL's keyword `s_waitcnt` raises on {name} (gfx1250 waits are "
            "`s_wait_loadcnt`/`s_wait_dscnt`/...; check their ordering by hand)",
        )
    return ArchSupport(
        name,
        None,
        f"FlyDSL's keyword `s_waitcnt` supports gfx942, gfx950, gfx11xx and gfx120x only, not {name}",
    )


def encode(layout: Layout, vmcnt=None, lgkmcnt=None, expcnt=None) -> int:
    """What FlyDSL's per-arch encoder emits; ValueError for an out-of-range counter."""
    bits = 0
    for counter, value in zip(COUNTERS, (vmcnt, lgkmcnt, expcnt)):
        top = layout.maximum(counter)
        value = top if value is None else value
        if not isinstance(value, int) or not 0 <= value <= top:
            raise ValueError(f"{counter} must be in [0, {top}] on this target, got {value}")
        shift = 0
        for lsb, width in layout.fields[counter]:
            bits |= ((value >> shift) & ((1 << width) - 1)) << lsb
            shift += width
    return bits


def field_values(layout: Layout, bits: int) -> dict[str, int]:
    """Every counter's value as the hardware reads it (bits outside the fields ignored)."""
    values = {}
    for counter in COUNTERS:
        value, shift = 0, 0
        for lsb, width in layout.fields[counter]:
            value |= ((bits >> lsb) & ((1 << width) - 1)) << shift
            shift += width
        values[counter] = value
    return values


@dataclass(frozen=True)
class Decoded:
    bits: int
    layout: Layout
    waits: dict[str, int]  # counters below their maximum, in COUNTERS order
    stray: int  # set bits outside every counter field (FlyDSL never emits them)

    @property
    def exact(self) -> bool:
        """FlyDSL's encoder, given ``waits`` as keywords, reproduces ``bits`` exactly."""
        return encode(self.layout, **self.waits) == self.bits

    @property
    def keywords(self) -> str:
        return ", ".join(f"{name}={value}" for name, value in self.waits.items())

    @property
    def reencoded(self) -> int:
        return encode(self.layout, **self.waits)


def decode(layout: Layout, bits: int) -> Decoded | None:
    """The keywords naming the counters ``bits`` waits on; None outside 0..0xFFFF."""
    if isinstance(bits, bool) or not isinstance(bits, int) or not 0 <= bits <= BITFIELD_MAX:
        return None
    values = field_values(layout, bits)
    waits = {c: v for c, v in values.items() if v < layout.maximum(c)}
    return Decoded(bits, layout, waits, bits & ~layout.mask & BITFIELD_MAX)


def stray_span(bits: int) -> str:
    """``bits 13:12`` / ``bit 7`` / ``bits 13:12, 7`` for a mask of stray bits."""
    runs: list[tuple[int, int]] = []
    for bit in range(15, -1, -1):
        if bits >> bit & 1:
            if runs and runs[-1][1] == bit + 1:
                runs[-1] = (runs[-1][0], bit)
            else:
                runs.append((bit, bit))
    parts = [f"{hi}:{lo}" if hi != lo else f"{hi}" for hi, lo in runs]
    noun = "bit" if len(parts) == 1 and ":" not in parts[0] else "bits"
    return f"{noun} {', '.join(parts)}"


def describe(bits: int, arch: str | None) -> str:
    """One line for hover: what an immediate waits for on ``arch``."""
    found = support(arch)
    if found is None or found.layout is None:
        layouts = (CDNA3, RDNA3)
        parts = []
        for layout in layouts:
            decoded = decode(layout, bits)
            if decoded is not None:
                parts.append(f"{layout.family}: {decoded.keywords or 'no wait'}")
        return f"s_waitcnt 0x{bits:04X} (arch unknown) " + "; ".join(parts)
    decoded = decode(found.layout, bits)
    if decoded is None:
        return f"s_waitcnt {bits}: not a 16-bit immediate"
    text = f"s_waitcnt 0x{bits:04X} on {found.arch}: {decoded.keywords or 'no wait'}"
    if decoded.stray:
        text += f" ({stray_span(decoded.stray)} outside every counter field)"
    return text


# --- the legacy per-kernel encoders, for helpers whose body lives in another module --------
def legacy_encode(vmcnt: int = 63, expcnt: int = 7, lgkmcnt: int = 63) -> int:
    """The `_encode_waitcnt` kernels shipped: ``vm_lo|(expcnt<<4)|(lgkmcnt<<8)|(vm_hi<<14)``."""
    return (vmcnt & 0xF) | (expcnt << 4) | (lgkmcnt << 8) | (((vmcnt >> 4) & 0x3) << 14)


# --- the fix decision (FLY401 uses exactly this; tests sweep it over every immediate) -------
KEYWORD_SINCE = "0.3.0"  # first FlyDSL release with s_waitcnt(vmcnt=, lgkmcnt=, expcnt=)


@dataclass(frozen=True)
class Plan:
    """What to offer for one immediate: keywords and safety, or why nothing."""

    bits: int
    decoded: Decoded | None  # None: no fix at all (see ``reason``)
    arch: str | None = None
    reason: str = ""  # why there is no fix, or why the fix is unsafe

    @property
    def safe(self) -> bool:
        return self.decoded is not None and self.decoded.exact


def plan(bits: int, arch: str | None, flydsl_version: str | None = None) -> Plan:
    from flydsl_ls.analysis.model.versions import at_least, parse

    if parse(flydsl_version) is not None and not at_least(flydsl_version, KEYWORD_SINCE):
        return Plan(
            bits, None, arch,
            f"the keyword form needs FlyDSL {KEYWORD_SINCE} (project uses {flydsl_version})",
        )
    found = support(arch)
    if found is None and bits == 0:
        # Zero waits on every counter whatever the layout; the keyword form only exists
        # for some arches (FlyDSL raises for the others).
        return Plan(
            bits, None, None,
            "0 waits for every counter on any arch, `vmcnt=0, lgkmcnt=0, expcnt=0`, but FlyDSL has "
            "the keyword form for some arches only: set `target-arch` (or FLYDSL_GPU_ARCH) to get the fix",
        )
    if found is None:
        return Plan(
            bits, None, None,
            "its meaning depends on the arch: set `target-arch` (or FLYDSL_GPU_ARCH) to decode it",
        )
    if found.layout is None:
        return Plan(bits, None, found.arch, found.reason)
    decoded = decode(found.layout, bits)
    if decoded is None:
        return Plan(bits, None, found.arch, f"{bits} is not a 16-bit s_waitcnt immediate")
    reason = ""
    if decoded.stray:
        reason = (
            f"0x{bits:04X} sets {stray_span(decoded.stray)}, outside every counter field of "
            f"{found.layout.description}; FlyDSL encodes `{decoded.keywords or '()'}` as "
            f"0x{decoded.reencoded:04X}: the hardware reads the same wait, but the immediate differs"
        )
    return Plan(bits, decoded, found.arch, reason)
