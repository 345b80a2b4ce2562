"""Compile the shipped examples on the CPU for gfx942 and gfx950 and check the ISA."""

from __future__ import annotations

import pytest

from flydsl_ls.compile import Status, compare_results
from tests.compile.conftest import MFMA_GEMM, VECTOR_ADD
from tests.compiler import needs_compiler

pytestmark = needs_compiler

# The f16 MFMA the example picks per target: gfx950 has the deeper-K 16x16x32 form.
MFMA_BY_ARCH = {"gfx942": "v_mfma_f32_16x16x16_f16", "gfx950": "v_mfma_f32_16x16x32_f16"}


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_mfma_gemm(compiled, arch):
    result = compiled(MFMA_GEMM, "one_tile", arch)
    assert result.status is Status.OK, result.error
    assert result.arch == arch
    (kernel,) = result.kernels
    assert kernel.name == "tile_gemm_kernel_0"
    assert kernel.mfma == [MFMA_BY_ARCH[arch]]
    res = kernel.resources
    assert res.arch == arch
    assert res.vgprs > 0 and res.sgprs > 0
    assert res.lds_bytes == 32 * 32 * 2  # the f16 A tile staged in LDS
    assert res.scratch_bytes == 0 and res.vgpr_spills == 0
    assert res.workgroup_size == (256, 1, 1)
    assert res.occupancy is not None and 1 <= res.waves_per_simd <= 8
    isa = kernel.text("isa")
    assert f'.amdgcn_target "amdgcn-amd-amdhsa-unknown-{arch}"' in isa
    assert "ds_write" in isa and "ds_read" in isa
    assert "s_barrier" in isa
    assert result.seconds is not None and result.seconds < 30


def test_example_arch_marker_is_the_default(compiled):
    result = compiled(MFMA_GEMM, "one_tile_gfx950", None)
    assert result.status is Status.OK, result.error
    assert result.arch == "gfx950"
    assert result.kernels[0].mfma == [MFMA_BY_ARCH["gfx950"]]


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_vector_add(compiled, arch):
    result = compiled(VECTOR_ADD, None, arch)
    assert result.status is Status.OK, result.error
    assert result.example == "small"
    (kernel,) = result.kernels
    assert kernel.name == "add_kernel_0"
    assert kernel.mfma == []
    res = kernel.resources
    assert res.vgprs > 0 and res.agprs == 0 and res.lds_bytes == 0
    assert res.waves_per_simd == 8
    isa = kernel.text("isa")
    assert "global_load_dwordx4" in isa and "global_store_dwordx4" in isa  # one float4 per thread
    assert "v_pk_add_f32" in isa or "v_add_f32" in isa


def test_dumps_are_all_there(compiled):
    result = compiled(VECTOR_ADD, None, "gfx942")
    kernel = result.kernels[0]
    assert kernel.mlir_first.name == "00_origin.mlir"
    assert kernel.mlir_final.suffix == ".mlir" and "to_binary" not in kernel.mlir_final.name
    assert kernel.llvm_ir.name.endswith(".ll") and "define" in kernel.text("llvm")
    assert "gpu.func @add_kernel_0" in kernel.text("mlir-first")
    assert str(VECTOR_ADD) in kernel.text("mlir-first")  # locations point at the user's file
    data = result.to_dict()
    assert data["status"] == "ok" and data["kernels"][0]["resources"]["vgprs"] == kernel.resources.vgprs


def test_each_request_has_a_fresh_dump_dir(service):
    one = service.compile(VECTOR_ADD, None, "gfx942")
    two = service.compile(VECTOR_ADD, None, "gfx942")
    assert one.ok and two.ok
    assert one.dump_dir != two.dump_dir
    assert one.kernels[0].text("isa") == two.kernels[0].text("isa")


def test_verify_fix_identical_ir(service):
    """Moving code down a few lines changes locations only: the IR compares identical."""
    text = VECTOR_ADD.read_text()
    before = service.compile(VECTOR_ADD, "small", "gfx942", source=text)
    moved = text.replace("import torch\n", "import torch\n\n# a comment\n\n", 1)
    after = service.compile(VECTOR_ADD, "small", "gfx942", source=moved)
    comparison = compare_results(before, after)
    assert comparison.identical, comparison.diffs
    assert "identical IR" in comparison.summary()


def test_verify_fix_changed_ir(service):
    text = VECTOR_ADD.read_text()
    before = service.compile(VECTOR_ADD, "small", "gfx942", source=text)
    changed = text.replace("reg_a.load() + reg_b.load()", "reg_a.load() * reg_b.load()")
    after = service.compile(VECTOR_ADD, "small", "gfx942", source=changed)
    comparison = compare_results(before, after)
    assert not comparison.identical
    assert "add_kernel_0: isa differs" in comparison.differences
    assert "v_pk_mul_f32" in comparison.diffs["add_kernel_0: isa"]


async def test_compile_async(service):
    """The asyncio entry point the language server uses: runs off the event loop."""
    progress: list[str] = []
    result = await service.compile_async(VECTOR_ADD, "small", "gfx950", progress=progress.append)
    assert result.ok and result.arch == "gfx950"
    assert progress[-1] == "compiling for gfx950"
