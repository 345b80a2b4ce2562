"""FLY201's resource + load/store rewrite, compiled with FlyDSL 0.5.0 on the CPU before and
after the fix (gfx942 and gfx950).

``kernels/buffer_access.py`` is ours: loads and stores through a stand-in of the legacy
`buffer_ops` shim (``kernels/common/buffer_ops.py``, same element-offset contract as the
real one). The fix turns the resources into `fx.rocdl.make_buffer_tensor` /
`fx.rocdl.make_buffer_ptr` values and the accesses into `fx.ptr_load`/`fx.ptr_store`:

- a bf16 tensor read as dwords goes through a byte pointer (a tensor's alignment is its
  element size, and `fx.recast_iter` to a wider type fails with "alignment must be a
  positive multiple of element byte size"), a vector through `fx.Vector[dtype, lanes]`;
- a scalar whose user is a raw builder is unwrapped with `.ir_value()` (the ArithValue the
  shim gave);
- a store whose value's element type the code does not show keeps the shim, on the
  tensor's raw resource (`fx.rocdl.get_buffer_rsrc(fx.get_iter(t))`);
- stores of an element or slice of a vector, an arith op class's `.result`, an unwrapped
  fx value and an `fx.ptr_load` of a typed pointer move (their element type is shown), to a
  tensor bounded by `num_records_bytes=` (the shim ignores `max_size=` then);
- resources passed to a helper of the module (`_fill`) and to a nested one (`twice`) move
  with the helpers' accesses; what `twice` returns (a float load times 2.0) is a float.

With FlyDSL 0.3.1 (`fx.Vector.make_type(4, fx.Float32)` for the vector load) the ISA is
identical too (checked by hand, gfx942).

Findings: the ISA is identical (same buffer_load/store instructions, offsets and
registers); only the MLIR differs (`fly.ptr.load/store` on a buffer-descriptor pointer
instead of `rocdl.raw.ptr.buffer.load/store`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from flydsl_ls.compile import compare_results
from tests.compile.conftest import compile_cache, service  # noqa: F401 (fixtures)
from tests.compiler import needs_compiler
from tests.rule_cases import diagnostics, fixed

PATH = Path(__file__).resolve().parent / "kernels" / "buffer_access.py"
SETTINGS = {"flydsl_version": "0.5.0", "target_arch": "gfx942"}

pytestmark = needs_compiler


def migrated() -> str:
    source = PATH.read_text(encoding="utf-8")
    assert sum(d.fix is not None for d in diagnostics("FLY201", source, SETTINGS)) >= 10
    return fixed("FLY201", source, unsafe=True, settings=SETTINGS)


def test_the_rewrite_is_what_we_expect():
    after = migrated()
    for line in (
        "    a = fx.rocdl.make_buffer_tensor(A)\n",
        "    s = fx.ptr_load(fx.recast_iter(fx.Int8, fx.get_iter(a)) + tid * 4, fx.Int32).ir_value()\n",
        "    v = fx.ptr_load(fx.recast_iter(fx.Int8, fx.get_iter(a)) + (tid * 4 + 256) * 4, fx.Vector[fx.Float32, 4])\n",
        "    buffer_ops.buffer_store(arith.addi(s, w), fx.rocdl.get_buffer_rsrc(fx.get_iter(out)), tid)\n",
        "    fx.ptr_store(w, fx.recast_iter(fx.Int8, fx.get_iter(out)) + 4096)\n",
        "    table = fx.rocdl.make_buffer_ptr(fx.inttoptr(fx.PointerType.get(fx.Int32.ir_type, fx.AddressSpace.Global, 4), addr))\n",
        "    fx.ptr_store(n + 1, table + (tid + 64))\n",
        "    bounded = fx.rocdl.make_buffer_tensor(Out, num_records_bytes=8192)\n",
        "    fx.ptr_store(fx.Vector.filled(2, 7, fx.Int32), fx.recast_iter(fx.Int8, fx.get_iter(rsrc)) + fx.Int32(off) * 4)\n",
        "        return fx.ptr_load(fx.recast_iter(fx.Int8, fx.get_iter(r)) + fx.Int32(i) * 4, fx.Float32) * 2.0\n",
        "    fx.ptr_store(half, fx.recast_iter(fx.Int8, fx.get_iter(bounded)) + (tid * 2 + 1600) * 4)\n",
        "    fx.ptr_store(arith.TruncIOp(T.i8, n).result, fx.recast_iter(fx.Int8, fx.get_iter(bounded)) + tid)\n",
        # what the nested helper returns, times a float: a float
        "    fx.ptr_store(twice(scratch, tid) + twice(a, tid), fx.recast_iter(fx.Int8, fx.get_iter(scratch)) + (tid + 2200) * 4)\n",
    ):
        assert line in after, line
    # What is left are the stores whose value's element type is not shown.
    left = diagnostics("FLY201", after, SETTINGS)
    assert [d.fix for d in left] == [None]
    assert "element type of `arith.addi(s, w)`" in left[0].message


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_the_rewrite_compiles_to_the_same_isa(service, arch):  # noqa: F811
    before = service.compile(PATH, "one_block", arch)
    assert before.ok, before.error
    after = service.compile(PATH, "one_block", arch, source=migrated())
    assert after.ok, f"the fixed source does not compile: {after.error}"
    comparison = compare_results(before, after)
    assert "access_kernel_0: isa differs" not in comparison.differences, comparison.differences
    assert "access_kernel_0: mlir-first differs" in comparison.differences


FLOW = Path(__file__).resolve().parent / "kernels" / "buffer_flow.py"


def migrated_flow() -> str:
    source = FLOW.read_text(encoding="utf-8")
    return fixed("FLY201", source, unsafe=True, settings=SETTINGS)


def test_value_flow_shows_element_types_and_widths():
    after = migrated_flow()
    for line in (
        "        fx.ptr_store(i, fx.recast_iter(fx.Int8, fx.get_iter(out)) + fx.Int32(tid * 8 + i) * 4)\n",
        "    fx.ptr_store(total, fx.recast_iter(fx.Int8, fx.get_iter(out)) + (tid + 1024) * 4)\n",
        "        fx.ptr_store(v, fx.recast_iter(fx.Int8, fx.get_iter(out)) + fx.Int32(off) * 4)\n",
        "        pair = fx.ptr_load(fx.recast_iter(fx.Int8, fx.get_iter(a)) + fx.Int32(tid * PAIRS) * 4, fx.Vector[fx.Float32, PAIRS])\n",
        "    quad = fx.ptr_load(fx.recast_iter(fx.Int8, fx.get_iter(a)) + fx.Int32(tid * half + 512) * 4, fx.Vector[fx.Float32, 4])\n",
        "        return fx.rocdl.make_buffer_tensor(t)\n",
        "    fx.ptr_store(fx.ptr_load(fx.recast_iter(fx.Int8, fx.get_iter(src)) + tid * 4, fx.Float32), "
        "fx.recast_iter(fx.Int8, fx.get_iter(dst)) + (tid + 1700) * 4)\n",
        "    h = fx.ptr_load(fx.recast_iter(fx.Int8, fx.get_iter(a)) + tid * 2, "
        '(fx.BFloat16 if DTYPE == "bf16" else fx.Float16))\n',
        "    row = fx.ptr_load(fx.recast_iter(fx.Int8, src) + fx.Int32(lane * 4) * 4, fx.Vector[fx.Int32, 4])\n",
        "    scratch = fx.rocdl.make_buffer_ptr(fx.inttoptr(fx.PointerType.get(fx.Int8.ir_type, fx.AddressSpace.Global, 1), "
        "addr + 65536))\n",
    ):
        assert line in after, line
    assert not diagnostics("FLY201", after, SETTINGS)


@pytest.mark.parametrize("arch", ["gfx942"])
def test_the_value_flow_rewrite_compiles_to_the_same_isa(service, arch):  # noqa: F811
    before = service.compile(FLOW, "one_block", arch)
    assert before.ok, before.error
    after = service.compile(FLOW, "one_block", arch, source=migrated_flow())
    assert after.ok, f"the fixed source does not compile: {after.error}"
    comparison = compare_results(before, after)
    assert "flow_kernel_0: isa differs" not in comparison.differences, comparison.differences
