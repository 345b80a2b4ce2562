"""FLY401's decoding agrees, bit for bit, with FlyDSL's own s_waitcnt encoders.

For every 16-bit immediate and each supported arch: when the rule offers a safe fix, or
our decoder claims an exact decode, FlyDSL's encoder for that arch, given the decoded
keywords, returns the original immediate; otherwise the rule offers no safe fix.
FlyDSL's per-arch encoders (`flydsl.expr.rocdl.cdna3/rdna3/rdna4`) build an MLIR op; we
capture the integer instead by rebinding their module-global `mlir_rocdl`.
"""

from __future__ import annotations

import ast
import types
from unittest import mock

import pytest

from flydsl_ls.analysis.engine import AnalysisRequest, analyze
from flydsl_ls.analysis.model import waitcnt
from flydsl_ls.analysis.model.diagnostic import Applicability
from flydsl_ls.analysis.rules.context import AnalysisOptions
from flydsl_ls.analysis.rules.fly401_waitcnt_bitfield import WaitcntBitfield
from tests.compiler import require

try:
    from flydsl.expr.rocdl import cdna3, rdna3, rdna4, universal
except Exception as error:  # noqa: BLE001
    # skip without the compile extra (fail under FLYDSL_REQUIRE_COMPILER=1); with it, the
    # import failing is an error of its own
    require(f"comparing with FlyDSL's encoders ({type(error).__name__}: {error})", module_level=True)
    raise

ARCHS = ("gfx942", "gfx950", "gfx1100", "gfx1201")
ENCODER_MODULE = {"gfx942": cdna3, "gfx950": cdna3, "gfx1100": rdna3, "gfx1201": rdna4}
_CAPTURE = types.SimpleNamespace(s_waitcnt=lambda bitfield: bitfield)


def _captured(module):
    return mock.patch.object(module, "mlir_rocdl", _CAPTURE)


def _keywords(call_text: str) -> dict:
    call = ast.parse(call_text, mode="eval").body
    assert isinstance(call, ast.Call) and not call.args
    return {k.arg: ast.literal_eval(k.value) for k in call.keywords}


def _rule_fixes(arch: str, values) -> dict[int, tuple]:
    """Run FLY401 once over a file holding `fx.rocdl.s_waitcnt(v)` for each v."""
    values = list(values)
    source = "import flydsl.expr as fx\n" + "".join(f"fx.rocdl.s_waitcnt({v:#06x})\n" for v in values)
    result = analyze(AnalysisRequest(source, rules=(WaitcntBitfield,), options=AnalysisOptions(target_arch=arch, flydsl_version="0.5.0")))
    assert not result.internal_errors, result.internal_errors
    by_value = {}
    for diagnostic in result.diagnostics:
        value = values[diagnostic.range.start.line - 1]  # line 1 is the import
        fix = diagnostic.fix
        if fix is None:
            by_value[value] = (None, None)
        else:
            (edit,) = fix.edits
            assert edit.content.startswith("fx.rocdl.s_waitcnt(")
            by_value[value] = (fix.applicability, _keywords(edit.content))
    assert len(by_value) == len(values)
    return by_value


@pytest.mark.parametrize("arch", ARCHS)
def test_every_immediate_round_trips_through_flydsl(arch):
    """Exhaustive: the decision FLY401 takes (``waitcnt.plan``) for all 65536 immediates."""
    module = ENCODER_MODULE[arch]
    layout = waitcnt.support(arch).layout
    assert layout.family == module.__name__.rsplit(".", 1)[1]
    safe = 0
    with _captured(module):
        for value in range(0x10000):
            chosen = waitcnt.plan(value, arch, "0.5.0")
            decoded = chosen.decoded
            assert decoded is not None and decoded.bits == value
            encoded = module.s_waitcnt(**decoded.waits)
            # Our decoder's claim of exactness is exactly FlyDSL's behaviour.
            assert decoded.exact == (encoded == value), hex(value)
            assert decoded.reencoded == encoded, hex(value)
            if chosen.safe:
                safe += 1
            else:
                # No keywords at all could reproduce it: it has bits FlyDSL never emits...
                assert value & ~layout.mask, hex(value)
                assert chosen.reason
                # ...but the unsafe fix names the counters the hardware reads.
                assert waitcnt.field_values(layout, encoded) == waitcnt.field_values(layout, value)
    # CDNA: bits 7 and 13:12 lie outside the fields (1/8 of values exact); RDNA: bit 3 (1/2).
    assert safe == (0x10000 // 8 if layout.family == "cdna3" else 0x10000 // 2)


@pytest.mark.parametrize("arch", ARCHS)
def test_the_rule_offers_exactly_the_planned_fixes(arch):
    """Through the whole engine (a sample: every 31st immediate, ~2100 per arch): a safe
    fix's own text, fed to FlyDSL's encoder, gives the immediate back; otherwise no safe fix."""
    module = ENCODER_MODULE[arch]
    values = range(0, 0x10000, 31)
    fixes = _rule_fixes(arch, values)
    seen = set()
    with _captured(module):
        for value in values:
            applicability, keywords = fixes[value]
            chosen = waitcnt.plan(value, arch, "0.5.0")
            seen.add(applicability)
            if applicability is Applicability.SAFE:
                assert chosen.safe, hex(value)
                assert module.s_waitcnt(**keywords) == value, (hex(value), keywords)
            else:
                assert not chosen.safe, hex(value)
                assert applicability is Applicability.UNSAFE
                assert keywords == chosen.decoded.waits
    assert seen == {Applicability.SAFE, Applicability.UNSAFE}


@pytest.mark.parametrize("arch", [*ARCHS, "gfx1250", "gfx90a", "gfx1151", "gfx942:sramecc+:xnack-"])
def test_arch_dispatch_matches_flydsl(arch):
    """Our arch -> layout mapping is FlyDSL's keyword dispatch (universal.s_waitcnt)."""
    from flydsl._mlir import ir

    found = waitcnt.support(arch)
    patches = [mock.patch.object(universal, "get_rocm_arch", lambda: arch)] + [
        _captured(m) for m in (cdna3, rdna3, rdna4)
    ]
    with ir.Context(), ir.Location.unknown():
        for patch in patches:
            patch.start()
        try:
            if found.layout is None:
                with pytest.raises(ValueError):
                    universal.s_waitcnt(vmcnt=0)
                return
            for kwargs in ({"vmcnt": 0}, {"lgkmcnt": 0}, {"expcnt": 1, "vmcnt": 33}, {}):
                assert universal.s_waitcnt(**kwargs) == waitcnt.encode(found.layout, **kwargs)
        finally:
            for patch in patches:
                patch.stop()


def _fix_text(source: str, arch: str | None) -> tuple[str | None, Applicability | None]:
    result = analyze(AnalysisRequest(source, rules=(WaitcntBitfield,), options=AnalysisOptions(target_arch=arch)))
    (diagnostic,) = result.diagnostics
    if diagnostic.fix is None:
        return None, None
    return diagnostic.fix.edits[0].content, diagnostic.fix.applicability


@pytest.mark.parametrize(
    "bits,arch,expected,applicability",
    [
        ("0x0F70", "gfx942", "fx.rocdl.s_waitcnt(vmcnt=0)", Applicability.SAFE),
        ("0xC07F", "gfx942", "fx.rocdl.s_waitcnt(lgkmcnt=0)", Applicability.SAFE),
        ("0", "gfx942", "fx.rocdl.s_waitcnt(vmcnt=0, lgkmcnt=0, expcnt=0)", Applicability.SAFE),
        ("0", "gfx950", "fx.rocdl.s_waitcnt(vmcnt=0, lgkmcnt=0, expcnt=0)", Applicability.SAFE),
        ("0", "gfx1100", "fx.rocdl.s_waitcnt(vmcnt=0, lgkmcnt=0, expcnt=0)", Applicability.SAFE),
        ("0x4F71", "gfx942", "fx.rocdl.s_waitcnt(vmcnt=17)", Applicability.SAFE),
        ("0x03F7", "gfx1201", "fx.rocdl.s_waitcnt(vmcnt=0)", Applicability.SAFE),
        ("0xFC07", "gfx1100", "fx.rocdl.s_waitcnt(lgkmcnt=0)", Applicability.SAFE),
        # Legacy _encode_waitcnt(vmcnt=0): bits 13:12 are outside CDNA's lgkmcnt field.
        ("0x3F70", "gfx942", "fx.rocdl.s_waitcnt(vmcnt=0)", Applicability.UNSAFE),
        ("0x3F71", "gfx950", "fx.rocdl.s_waitcnt(vmcnt=1)", Applicability.UNSAFE),
        ("0x0F70", None, None, None),
        ("0x0F70", "gfx1250", None, None),
        ("0x0F70", "gfx90a", None, None),
    ],
)
def test_known_values_through_the_fix_text(bits, arch, expected, applicability):
    source = f"import flydsl.expr as fx\nfx.rocdl.s_waitcnt({bits})\n"
    assert _fix_text(source, arch) == (expected, applicability)


def test_legacy_encoder_matches_the_kernels_formula():
    assert waitcnt.legacy_encode(vmcnt=0) == 0x3F70
    assert waitcnt.legacy_encode(lgkmcnt=0) == 0xC07F
    assert waitcnt.legacy_encode(vmcnt=17, expcnt=0, lgkmcnt=0) == 0x4001
    with _captured(cdna3):
        for lgkmcnt in range(16):  # lgkmcnt <= 15 with default vmcnt/expcnt decodes exactly
            assert cdna3.s_waitcnt(lgkmcnt=lgkmcnt) == waitcnt.legacy_encode(lgkmcnt=lgkmcnt)


def test_describe_for_hover():
    assert waitcnt.describe(0x3F70, "gfx942") == (
        "s_waitcnt 0x3F70 on gfx942: vmcnt=0 (bits 13:12 outside every counter field)"
    )
    assert waitcnt.describe(0xC07F, "gfx950") == "s_waitcnt 0xC07F on gfx950: lgkmcnt=0"
    assert "arch unknown" in waitcnt.describe(0, None)


SNIPPET = '''\
import flydsl.expr as fx
from flydsl._mlir.dialects import rocdl as raw
from flydsl.expr import rocdl

_LGKMCNT_0_ONLY = 0xC07F


def _encode_waitcnt(vmcnt=63, expcnt=7, lgkmcnt=63):
    vm_lo = vmcnt & 0xF
    vm_hi = (vmcnt >> 4) & 0x3
    return vm_lo | (expcnt << 4) | (lgkmcnt << 8) | (vm_hi << 14)


def _s_waitcnt(val):
    rocdl.s_waitcnt(val)


def body(mask):
    rocdl.s_waitcnt(0)
    raw.s_waitcnt(_LGKMCNT_0_ONLY)
    fx.rocdl.s_waitcnt(_encode_waitcnt(lgkmcnt=3))
    _s_waitcnt(RDNA_ZERO_LGKM)
    raw.sched_group_barrier(mask, 1, 0)
    raw.sched_barrier(mask=mask)
'''


@pytest.mark.parametrize("arch", ARCHS)
def test_safe_fixes_build_identical_ir(arch, monkeypatch):
    """Execute the snippet before and after FLY401/FLY403's safe fixes under an MLIR
    context: the printed IR (no locations) is identical."""
    from flydsl._mlir import ir

    from flydsl_ls.actions.fixes import fix_all
    from flydsl_ls.analysis.rules.fly403_raw_sched_barrier import RawSchedBarrier

    monkeypatch.setenv("FLYDSL_GPU_ARCH", arch)
    rdna_zero = 0xFC07 if arch.startswith("gfx1") else 0xC07F  # lgkmcnt=0 in each layout
    before = SNIPPET.replace("RDNA_ZERO_LGKM", hex(rdna_zero))
    options = AnalysisOptions(target_arch=arch, flydsl_version="0.5.0")

    def lint(text):
        return analyze(AnalysisRequest(text, rules=(WaitcntBitfield, RawSchedBarrier), options=options)).diagnostics

    after = fix_all(before, lint).text
    assert "rocdl.s_waitcnt(0)" not in after and "raw.sched" not in after
    if arch.startswith("gfx1"):  # CDNA-layout immediates set RDNA's unused bit 3: not exact
        assert "_encode_waitcnt(lgkmcnt=3)" in after and "raw.s_waitcnt(_LGKMCNT_0_ONLY)" in after
    else:
        assert "fx.rocdl.s_waitcnt(lgkmcnt=3)" in after and "raw.s_waitcnt" not in after
    printed = []
    for text in (before, after):
        namespace: dict = {}
        exec(compile(text, f"<{arch}>", "exec"), namespace)
        with ir.Context(), ir.Location.unknown():
            module = ir.Module.create()
            with ir.InsertionPoint(module.body):
                namespace["body"](ir.Attribute.parse("#rocdl<sched_group_mask ds_read|mfma_wmma>"))
            printed.append(str(module))
    assert printed[0] == printed[1]
    assert printed[0].count("rocdl.s.waitcnt") == 4 and "rocdl.sched.group.barrier" in printed[0]
