"""FLY203 "Migrate to SharedAllocator" and FLY201 create_buffer_resource -> make_buffer_tensor,
compiled with FlyDSL 0.5.0 on the CPU before and after the fix.

The kernels under ``kernels/`` are ours (a LDS-staged transpose and a block row-sum on the
legacy `SmemAllocator`/`SmemPtr` path, and a copy kernel still building a legacy buffer
resource). Each test applies the rule's fixes (unsafe included) exactly as
``flydsl-ls check --fix --unsafe-fixes`` would, compiles the result from memory, and states
how the IR changed. A fix whose output does not compile fails here.

Findings (gfx942):
- FLY203 is NOT IR-identical, by design: the legacy path emits one `memref.global` byte array
  (rounded up to 128 B, 1024-aligned) plus `memref.get_global` + `memref.view` + builtin
  `memref.load/store`; after the fix every struct field is its own LDS allocation
  (`fly.make_ptr() {allocAlign, allocBytes}`) viewed with `fly.make_view` and accessed with
  `fly.memref.load/store`. LDS shrinks (1152 -> 1024 B for the transpose, whose second buffer is
  never touched and is dropped; 1152 -> 1044 B for the row sum) and the ISA differs.
- The migrated stores are `fx.memref_store(v, view, i)` calls on views bound once where the
  `SmemPtr` was: the row-sum helper stores under a runtime `if`, which compiles both before
  and after only in that form.
- FLY201 on a dead legacy resource: only the first MLIR differs (the `fly.get_iter` +
  `fly_rocdl.get_buffer_rsrc` pair disappears); the final MLIR and the ISA are identical.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from flydsl_ls.compile import compare_results
from flydsl_ls.compile.verify import strip_locations
from tests.compile.conftest import compile_cache, service  # noqa: F401 (fixtures)
from tests.compiler import needs_compiler
from tests.rule_cases import diagnostics, fixed

KERNELS = Path(__file__).resolve().parent / "kernels"
SETTINGS = {"flydsl_version": "0.5.0", "target_arch": "gfx942"}
ARCH = "gfx942"

pytestmark = needs_compiler


def migrate(code: str, path: Path) -> str:
    source = path.read_text(encoding="utf-8")
    found = diagnostics(code, source, SETTINGS)
    assert found and all(d.fix is not None for d in found), [(d.message, d.note) for d in found]
    after = fixed(code, source, unsafe=True, settings=SETTINGS)
    assert after != source
    assert diagnostics(code, after, SETTINGS) == []  # nothing legacy left for this rule
    return after


def compile_both(service, path: Path, example: str, after: str):  # noqa: F811
    before = service.compile(path, example, ARCH)
    assert before.ok, before.error
    result = service.compile(path, example, ARCH, source=after)
    assert result.ok, f"the fixed source does not compile: {result.error}"
    return before, result


def first_mlir(result) -> str:
    return strip_locations(result.kernels[0].text("mlir-first"))


def test_transpose_migration_compiles_and_moves_lds_to_struct_fields(service):  # noqa: F811
    path = KERNELS / "smem_transpose.py"
    after = migrate("FLY203", path)
    assert "SmemAllocator" not in after and "SmemPtr" not in after and "finalize" not in after
    assert "    s_tile: fx.Array[fx.Float32, TILE * TILE, 16]\n" in after
    assert "lds = fx.SharedAllocator().allocate(SharedStorage).peek()" in after
    before, result = compile_both(service, path, "one_tile", after)
    comparison = compare_results(before, result)
    assert not comparison.identical
    assert comparison.differences == [
        "transpose_kernel_0: mlir-first differs",
        "transpose_kernel_0: mlir-final differs",
        "transpose_kernel_0: llvm differs",
        "transpose_kernel_0: isa differs",
    ]
    old, new = first_mlir(before), first_mlir(result)
    assert "memref.global @smem_transpose : memref<1152xi8" in old and "memref.view" in old
    assert "memref.global" not in new and "memref.view" not in new and "memref.get_global" not in new
    assert "fly.make_ptr() {dictAttrs = {allocAlign = 16 : i64, allocBytes = 1024 : i64}}" in new
    assert "fly.make_ptr() {dictAttrs = {allocAlign = 16 : i64, allocBytes = 64 : i64}}" in new
    assert "fly.memref.store" in new
    assert before.kernels[0].resources.lds_bytes == 1152
    assert result.kernels[0].resources.lds_bytes == 1024  # the untouched s_red buffer is gone


def test_row_sum_migration_in_a_builder_function(service):  # noqa: F811
    path = KERNELS / "smem_row_sum.py"
    after = migrate("FLY203", path)
    # Sizes known only when the builder runs stay symbolic; alignment from _align() is kept.
    assert "        s_vals: fx.Array[fx.Float32, block_threads, 16]\n" in after
    assert "        s_red: fx.Array[fx.Float32, num_waves, 16]\n" in after
    assert "        s_count: fx.Array[fx.Int32, 1]\n" in after
    assert "ctx = CompilationContext" not in after and "InsertionPoint" not in after
    # Views are taken once where the SmemPtr was made, and stores are calls: inside the
    # helper's runtime `if`, `view[i] = v` or a view rooted at `lds` would make FlyDSL's AST
    # rewriter treat `lds` as branch state (it did on FlyDSL's own tests/kernels/test_quant.py).
    assert "        s_red = lds.s_red.view(fx.make_layout(num_waves, 1))\n" in after
    assert "            if lane == 0:\n                fx.memref_store(acc, s_red, wave)\n" in after
    before, result = compile_both(service, path, "rows", after)
    comparison = compare_results(before, result)
    assert not comparison.identical
    new = first_mlir(result)
    for alloc in (
        "allocAlign = 16 : i64, allocBytes = 1024 : i64",
        "allocAlign = 16 : i64, allocBytes = 16 : i64",
        "allocAlign = 4 : i64, allocBytes = 4 : i64",
    ):
        assert f"fly.make_ptr() {{dictAttrs = {{{alloc}}}}}" in new
    assert "memref.view" in first_mlir(before) and "memref.view" not in new
    assert before.kernels[0].resources.lds_bytes == 1152
    assert result.kernels[0].resources.lds_bytes == 1044


def test_dead_buffer_resource_becomes_make_buffer_tensor(service):  # noqa: F811
    path = KERNELS / "buffer_resource.py"
    after = migrate("FLY201", path)
    assert "rsrc = fx.rocdl.make_buffer_tensor(A)" in after
    assert "buffer_ops" not in after  # the shim import is cleaned up
    before, result = compile_both(service, path, "one_block", after)
    comparison = compare_results(before, result)
    assert comparison.differences == ["copy_kernel_0: mlir-first differs"]  # final MLIR and ISA identical
    assert "fly_rocdl.get_buffer_rsrc" in first_mlir(before)
    assert "fly_rocdl.get_buffer_rsrc" not in first_mlir(result)


@pytest.mark.parametrize(
    "use, why",
    [
        # a masked load has no fx form: the guide keeps it, and its resource with it (a note)
        ("buffer_ops.buffer_load(rsrc, tid, vec_width=1, dtype=fx.Float32, mask=tid)", "may stay on buffer_ops"),
        ("fx.rocdl.raw_ptr_buffer_load(ty, rsrc, tid, 0, 0)", "consumed raw"),
    ],
)
def test_no_buffer_tensor_fix_where_the_raw_resource_is_consumed(use, why):
    """make_buffer_tensor returns a tensor, not an !llvm.ptr<8>: offering the fix here would
    produce code that does not compile, so the rule withholds it."""
    source = (
        "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"
        "def body(A, tid, ty):\n"
        "    rsrc = buffer_ops.create_buffer_resource(A, max_size=True)\n"
        f"    return {use}\n"
    )
    found = [d for d in diagnostics("FLY201", source, SETTINGS) if "create_buffer_resource" in d.message]
    assert len(found) == 1 and found[0].fix is None
    assert why in found[0].message


def test_ping_pong_pair_with_a_shared_region_becomes_one_struct_with_a_union(service):  # noqa: F811
    path = KERNELS / "smem_ping_pong.py"
    after = migrate("FLY203", path)
    assert "SmemAllocator" not in after and "SmemPtr" not in after and "finalize" not in after
    # One allocation for the kernel (FlyDSL allows one SharedAllocator per kernel): both
    # allocators' buffers are fields of one struct; the pong region's two views share a union.
    assert after.count("fx.SharedAllocator()") == 1
    assert (
        "    @fx.union\n"
        "    class SXPongSOutRegion:\n"
        "        s_x_pong: fx.Array[fx.Float32, n, 16]\n"
        "        s_out: fx.Array[fx.Float16, 2 * n, 16]\n"
    ) in after
    assert (
        "    class SharedStorage:\n"
        "        s_x_pong_s_out: SXPongSOutRegion\n"
        "        s_tid: fx.Array[fx.Int32, n]\n"
        "        s_x_ping: fx.Array[fx.Float32, n, 16]\n"
    ) in after
    # A peeked struct cannot hold a union: the storage is navigated, each leaf peeked.
    assert "        lds = fx.SharedAllocator().allocate(SharedStorage)\n" in after
    assert "        s_out = lds.s_x_pong_s_out.s_out.peek().view(fx.make_layout(2 * n, 1))\n" in after
    # `_align` on sizes (not on the bump pointer) stays, as the arithmetic it is.
    assert "    pong_total = (pong_region + 128 - 1) // 128 * 128 + n * 4\n" in after
    assert "    if (pong_total + 1024 - 1) // 1024 * 1024 > LDS_LIMIT:\n" in after
    before, result = compile_both(service, path, "stages", after)
    assert not compare_results(before, result).identical
    new = first_mlir(result)
    assert "memref.global" not in new and "memref.view" not in new
    # The union is one allocation as large as its larger member (256 B each here).
    assert new.count("fly.make_ptr()") == 3
    assert before.kernels[0].resources.lds_bytes == 1280  # two globals, 1024 + 256
    assert result.kernels[0].resources.lds_bytes == 768
    assert result.kernels[0].resources.scratch_bytes == 0


def test_allocation_goes_in_the_body_function_each_kernel_calls_once(service):  # noqa: F811
    path = KERNELS / "smem_body_helper.py"
    after = migrate("FLY203", path)
    # `_emit_reverse` runs inside whichever kernel is traced: the allocation goes at its top.
    assert (
        "    def _emit_reverse(X, Out, scale):\n"
        "        tid = fx.thread_idx.x\n"
        "        lds = fx.SharedAllocator().allocate(SharedStorage).peek()\n"
        "        s_row = lds.s_row.view(fx.make_layout(n, 1))\n"
    ) in after
    before, result = compile_both(service, path, "scaled", after)
    assert "memref.global" in first_mlir(before) and "memref.global" not in first_mlir(result)
    assert before.kernels[0].resources.lds_bytes == 256
    assert result.kernels[0].resources.lds_bytes == 256
    assert result.kernels[0].resources.scratch_bytes == 0


def test_helpers_that_take_the_pointer_or_its_memref_receive_the_view(service):  # noqa: F811
    path = KERNELS / "smem_helpers.py"
    after = migrate("FLY203", path)
    assert "def stage(ptr, v, i):\n    \"\"\"Helpers of the kernel take the LDS pointer (or its memref) as an argument.\"\"\"\n    fx.memref_store(v, ptr, i)\n" in after
    assert "def read_back(tile, i):\n    return tile[i]\n" in after
    assert "    stage(s_tile, X[0, tid], tid)\n" in after and "    tile = s_tile\n" in after
    before, result = compile_both(service, path, "one_tile", after)
    new = first_mlir(result)
    assert "memref.view" in first_mlir(before) and "memref.view" not in new
    assert "fly.memref.store" in new and "fly.memref.load" in new
    assert before.kernels[0].resources.lds_bytes == 256
    assert result.kernels[0].resources.lds_bytes == 256
    assert result.kernels[0].resources.scratch_bytes == 0


def test_allocators_used_only_through_their_address_become_byte_array_fields(service):  # noqa: F811
    """aiter's gfx1250 FMHA shape: allocators sized by `alloc.ptr = N`, never viewed, whose
    base goes to `extract_aligned_pointer_as_index` (in a helper) for raw LDS addressing."""
    path = KERNELS / "smem_base_address.py"
    after = migrate("FLY203", path)
    assert "SmemAllocator" not in after and "finalize" not in after and "_first_allocator" not in after
    assert (
        "class SharedStorage:\n"
        "    a: fx.Array[fx.Uint8, SEGMENT, 1024]\n"
        "    b: fx.Array[fx.Uint8, THREADS * 4, 1024]\n"
    ) in after
    assert "    idx = fx.Index(fx.ptrtoint(memref_base))\n" in after
    assert "    a_base = lds_base_i32(lds.a.ptr)\n" in after
    assert "_memref_d" not in after  # the helper's local import went with its last use
    before, result = compile_both(service, path, "rotate", after)
    comparison = compare_results(before, result)
    # The two globals become one struct allocation: the first MLIR differs, the final
    # instruction stream does not (same ds_write/ds_read, same offsets).
    assert comparison.differences == [
        "base_address_kernel_0: mlir-first differs",
        "base_address_kernel_0: mlir-final differs",
        "base_address_kernel_0: llvm differs",
    ]
    assert before.kernels[0].resources.lds_bytes == 1280
    assert result.kernels[0].resources.lds_bytes == 1280


def test_memrefs_handed_to_raw_ops_become_fx_pointers(service):  # noqa: F811
    """aiter's MoE shape: `SmemPtr(...).get()` memrefs used by `vector.store`/`vector.load`
    and `memref.load` (raw ops that take only a builtin memref) become the fields' `.ptr`,
    and the accesses `fx.ptr_store`/`fx.ptr_load` at `p + i`."""
    path = KERNELS / "smem_raw_consumers.py"
    after = migrate("FLY203", path)
    assert "    lds_x = lds.x.ptr\n" in after and "    lds_tid = lds.tid.ptr\n" in after
    assert "    fx.ptr_store(g.ir_value(), lds_x + row)\n" in after
    assert "    loaded = fx.ptr_load(lds_x + other, result_type=vec16)\n" in after
    assert "memref" not in after and "alignment=" not in after
    before, result = compile_both(service, path, "exchange", after)
    # Same instruction stream (ds_write_b128/ds_read_b128 and the b32 pair at offset 1024).
    assert compare_results(before, result).differences == [
        "raw_consumers_kernel_0: mlir-first differs",
        "raw_consumers_kernel_0: mlir-final differs",
        "raw_consumers_kernel_0: llvm differs",
    ]
    assert before.kernels[0].resources.lds_bytes == 1280
    assert result.kernels[0].resources.lds_bytes == 1280


def test_get_base_viewed_at_a_byte_offset_becomes_a_recast_pointer(service):  # noqa: F811
    """aiter's MoE k-split scratch: `memref.view(memref_type, allocator.get_base(),
    arith.constant(off, index=True), sizes=[])` becomes `fx.recast_iter(fx.T, base + off)`
    (a static offset: a run-time one would lose the alignment the typed pointer needs)."""
    path = KERNELS / "smem_base_view.py"
    after = migrate("FLY203", path)
    assert "    allocator: fx.Array[fx.Uint8, SCRATCH_AT + THREADS * 16, 1024]\n" in after
    assert "    base = lds.allocator.ptr\n" in after
    assert "    scr = fx.recast_iter(fx.Float32, base + SCRATCH_AT)\n" in after
    assert "    fx.ptr_store(acc.ir_value(), scr + mine)\n" in after
    assert "scr_ty" not in after and "memref.view(" not in after and "import memref" not in after
    before, result = compile_both(service, path, "rotate", after)
    # Same instructions at the same LDS offset (ds_write_b128/ds_read_b128 offset:256).
    assert compare_results(before, result).differences == [
        "scratch_kernel_0: mlir-first differs",
        "scratch_kernel_0: mlir-final differs",
        "scratch_kernel_0: llvm differs",
    ]
    assert before.kernels[0].resources.lds_bytes == 1280
    assert result.kernels[0].resources.lds_bytes == 1280


@pytest.mark.parametrize("example, lds", [("padded", 41088), ("unpadded", 9216)])
def test_padded_stage_keeps_its_layout_in_byte_arrays(service, example, lds):  # noqa: F811
    """A MoE stage's LDS (aiter's mixed-MoE gemm1, in our words): occupancy padding under an
    `if`, an fp8 X tile whose type the arch chooses, f32 scratch `memref.view`s of the
    bases. Offsets are not static, so the old layout is kept: one byte array per
    allocator, the bookkeeping as arithmetic, views as typed pointers at their offsets."""
    path = KERNELS / "smem_padded_stage.py"
    after = migrate("FLY203", path)
    assert "SmemAllocator" not in after and "SmemPtr" not in after and "finalize" not in after
    assert "            ping_bytes += min_lds - (pong_sz + ping_sz)\n" in after
    assert (
        "    @fx.struct\n"
        "    class SharedStorage:\n"
        "        pong: fx.Array[fx.Uint8, max(128, (pong_bytes + 127) // 128 * 128), 1024]\n"
        "        ping: fx.Array[fx.Uint8, max(128, (ping_bytes + 127) // 128 * 128), 1024]\n"
    ) in after
    assert "        scr_g = fx.recast_iter(fx.Float32, lds.pong.ptr + lds_pong_offset)\n" in after
    # fp8 vectors reach LDS as bytes: stored before the bitcast, loaded as i8 and bitcast
    assert "            fx.ptr_store(g.ir_value(), lds_buffer + row)\n" in after
    assert ".bitcast(fx.Numeric.from_ir_type(x_elem))" in after
    before, result = compile_both(service, path, example, after)
    comparison = compare_results(before, result)
    assert "stage_kernel_0: isa differs" not in comparison.differences  # same instructions
    assert before.kernels[0].resources.lds_bytes == result.kernels[0].resources.lds_bytes == lds
    assert result.kernels[0].resources.scratch_bytes == 0


def test_region_of_a_computed_size_viewed_at_byte_offsets_keeps_its_layout(service):  # noqa: F811
    """A second MoE stage's LDS (aiter's mixed-MoE gemm2, in our words): one region whose
    size a condition chooses, an fp8 view held in a name, tables at
    `lds_x_ptr.byte_offset + off`, an output view that may be None."""
    path = KERNELS / "smem_region_stage.py"
    after = migrate("FLY203", path)
    assert "        region: fx.Array[fx.Uint8, max(128, (region_bytes + 127) // 128 * 128), 1024]\n" in after
    assert "        lds_tid = fx.recast_iter(fx.Int32, lds.region.ptr + (lds_alloc_offset + lds_tid_off))\n" in after
    assert "            fx.recast_iter(fx.BFloat16, lds.region.ptr + lds_alloc_offset)\n            if use_out\n" in after
    before, result = compile_both(service, path, "region", after)
    assert "stage_kernel_0: isa differs" not in compare_results(before, result).differences
    assert before.kernels[0].resources.lds_bytes == result.kernels[0].resources.lds_bytes == 2176
    assert result.kernels[0].resources.scratch_bytes == 0
