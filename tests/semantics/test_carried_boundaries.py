"""FLY301's raw boundaries inside a dynamic `if`, compiled with FlyDSL 0.5.0 on the CPU
before and after the fix, for every configuration of the fixture's build-time flag.

``kernels/unset_carried.py`` is ours, the shape of FlyDSL's qk_norm_rope_quant.py: a value
bound in one `const_expr` branch only (or set to None first), stored by a raw builder inside
a dynamic `if`. The fix types the constant, so the stored value becomes fx and the store
needs the raw value. `v.ir_value()` there is a method call FlyDSL's rewriter sees: it carries
`v` through the `if`, and on the configuration where `v` is unbound it fails ("Variable(s)
['scale'] initialized as None before a dynamic if/else"). The fix writes
`fx.as_ir_value(v)`, a function call the rewriter does not carry; where the name is None
before on every configuration, there is no fix (the message says why).

Findings (gfx942): all four examples trace and compile after the fix; the ISA is identical;
the first MLIR is identical except `unbound_bits`, whose typed constant is materialised
where it is used (the fix's own "unsafe" note).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from flydsl_ls.compile.verify import normalise_isa, strip_locations
from tests.compile.conftest import compile_cache, service  # noqa: F401 (fixtures)
from tests.compiler import needs_compiler
from tests.rule_cases import diagnostics, fixed

PATH = Path(__file__).resolve().parent / "kernels" / "unset_carried.py"
SETTINGS = {"flydsl_version": "0.5.0", "target_arch": "gfx942"}
EXAMPLES = ("unbound_bits", "unbound_scale", "none_first_bits", "none_first_scale")


def migrated() -> str:
    return fixed("FLY301", PATH.read_text(encoding="utf-8"), unsafe=True, settings=SETTINGS)


def test_the_boundaries_are_function_calls():
    after = migrated()
    for line in (
        "            bits = fx.Int32(7)\n",
        "                buffer_ops.buffer_store(fx.as_ir_value(bits), out, tid)\n",
        "                buffer_ops.buffer_store(fx.as_ir_value(scale), out, tid)\n",
        # inside the `if`, on a call's own result: nothing carried
        "                buffer_ops.buffer_store(fx.Int32(7).ir_value(), out, tid)\n",
        # None before: no fix, the store keeps the raw constant
        "            scale = arith.constant(0.25, type=T.f32)\n",
        "                buffer_ops.buffer_store(scale, out, tid)\n",
    ):
        assert line in after, line
    assert "bits.ir_value()" not in after and "scale.ir_value()" not in after


def test_messages_say_why():
    found = {d.range.start.line + 1: d.message for d in diagnostics("FLY301", PATH.read_text(encoding="utf-8"), SETTINGS)}
    assert "a method call on `bits` would make FlyDSL's rewriter carry it through the `if` on line 28" in found[25]
    assert "no fix: `scale` on line 53 may also hold a Python value" in found[48]


@needs_compiler
@pytest.mark.parametrize("example", EXAMPLES)
def test_every_configuration_traces_and_keeps_the_isa(service, example):
    after = migrated()
    before = service.compile(PATH, example, "gfx942")
    result = service.compile(PATH, example, "gfx942", source=after)
    assert before.ok, before.error
    assert result.ok, f"the fixed kernel does not compile: {result.error}"
    isa = [[normalise_isa(k.text("isa")) for k in r.kernels] for r in (before, result)]
    assert isa[0] == isa[1]
    mlir = [[strip_locations(k.text("mlir-first")) for k in r.kernels] for r in (before, result)]
    assert (mlir[0] == mlir[1]) == (example != "unbound_bits")


@needs_compiler
def test_ir_value_there_would_not_trace(service):
    """The form the fix no longer writes: `bits.ir_value()` / `scale.ir_value()` in the `if`."""
    carried = migrated().replace("fx.as_ir_value(bits)", "bits.ir_value()").replace(
        "fx.as_ir_value(scale)", "scale.ir_value()"
    )
    for example, name in (("unbound_bits", "scale"), ("unbound_scale", "bits")):
        result = service.compile(PATH, example, "gfx942", source=carried)
        assert not result.ok
        assert f"Variable(s) ['{name}'] initialized as None before a dynamic if/else" in result.error.message
