"""FLY601 on raw MFMAs / WMMAs over register values, checked with the real compiler
(FlyDSL 0.5.0).

fixtures/raw_mfma_values.py issues `rocdl.mfma_*` on vectors and packed i64s (f16, fp8
with and without the builder's own FN/FNUZ choice, bf16 through a callable alias, scaled fp4) and `rocdl.wmma_*(...).result` (bf16, compiled
for gfx11 and gfx120x, whose WMMA atoms differ). The unsafe fix replaces each with
`fly.mma_atom_call_ssa([ty], fx.make_mma_atom(<atom>), a, b, c)`. The first MLIR changes
(the atom call instead of `rocdl.mfma`); the atom lowers to the same intrinsic, so each
kernel must issue the same MFMA instructions, and the LLVM IR and ISA must be identical.
The fix runs without a target arch, so the fp8 class is chosen at trace time and the same
fixed text is compiled for gfx942 and gfx950.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from flydsl_ls.checker import fix_source
from flydsl_ls.compile import compare_results
from flydsl_ls.config import Settings
from tests.compiler import needs_compiler

pytestmark = needs_compiler

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "raw_mfma_values.py"
# example -> (arches, the MFMA the kernel issues)
EXAMPLES = {
    "f16": (("gfx942", "gfx950"), "v_mfma_f32_16x16x16_f16"),
    "fp8": (("gfx942", "gfx950"), "v_mfma_f32_16x16x32_fp8_fp8"),
    "fp8_builder": (("gfx942", "gfx950"), "v_mfma_f32_16x16x32_fp8_fp8"),
    "bf16": (("gfx950",), "v_mfma_f32_16x16x32_bf16"),
    "scaled_fp4": (("gfx950",), "v_mfma_scale_f32_16x16x128_f8f6f4"),
    "wmma_bf16": (("gfx1100", "gfx1201"), "v_wmma_f32_16x16x16_bf16"),
}


@pytest.fixture(scope="module")
def fixed():
    settings = Settings(flydsl_version="0.5.0", select=("FLY601",))
    return fix_source(FIXTURE.read_text(encoding="utf-8"), FIXTURE, settings, unsafe=True)


def test_every_raw_mfma_is_fixed(fixed):
    assert fixed.applied == {"FLY601": 6}, fixed.applied
    text = fixed.text
    assert "rocdl.mfma" not in text and "rocdl.wmma" not in text and "mfma_fn" not in text
    assert (
        "acc = fly.mma_atom_call_ssa([T.f32x4], fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 32, "
        'fx.Float8E4M3FN if "gfx95" in get_rocm_arch() else fx.Float8E4M3FNUZ)), '
        "fx.as_ir_value(packs[k]), fx.as_ir_value(packs[1 - k]), fx.as_ir_value(acc))"
    ) in text
    assert "fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 32, FP8)), fx.as_ir_value(packs[1])" in text
    assert (
        "fx.make_mma_atom(fx.rocdl.cdna4.MFMA_Scale(16, 16, 128, fx.Float4E2M1FN, opsel_a=j, opsel_b=2 + j))"
        '.set_value({"scale_a": scales[0], "scale_b": scales[1]})'
    ) in text


@pytest.mark.parametrize(
    "example,arch", [(name, arch) for name, (arches, _) in EXAMPLES.items() for arch in arches]
)
def test_same_instruction_and_isa(service, fixed, example, arch):
    before = service.compile(FIXTURE, example, arch)
    after = service.compile(FIXTURE, example, arch, source=fixed.text)
    assert before.ok, before.error
    assert after.ok, f"the fixed kernel does not compile: {after.error}"
    (old,), (new,) = before.kernels, after.kernels
    assert old.mfma == new.mfma == [EXAMPLES[example][1]]
    raw_op = re.compile(r"rocdl\.(mfma|wmma)")
    assert raw_op.search(old.text("mlir-first")) and not raw_op.search(new.text("mlir-first"))
    assert "fly.mma_atom_call_ssa" in new.text("mlir-first")
    assert compare_results(before, after).differences == [f"{old.name}: mlir-first differs"]
