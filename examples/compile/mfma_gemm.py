"""One 32 x 32 tile of C = A @ B.T on MFMA, with A staged through LDS: a compile example.

A is (32, 32) float16, B is (32, 32) float16 (one row per output column), C is float32.
Four waves (256 threads) tile the 32 x 32 output with 16 x 16 MFMA atoms; the A tile makes
a round trip through 2 KiB of shared memory (LDS) before the MMA, so the ISA shows the LDS
allocation and ds_read/ds_write next to the MFMA instructions.

The MMA atom depends on the target: gfx950 has a 16x16x32 f16 MFMA, gfx942 the 16x16x16 one.

    flydsl-ls compile examples/compile/mfma_gemm.py --arch gfx950 --emit isa
"""

import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl.runtime.device import get_rocm_arch

TILE_M, TILE_N, TILE_K = 32, 32, 32


def mfma_for_target():
    """The f16 MFMA atom with the deepest K the target has."""
    if get_rocm_arch().startswith("gfx950"):
        return fx.rocdl.MFMA(16, 16, 32, fx.Float16)
    return fx.rocdl.MFMA(16, 16, 16, fx.Float16)


@flyc.kernel
def tile_gemm_kernel(A: fx.Tensor, B: fx.Tensor, C: fx.Tensor):
    tid = fx.thread_idx.x
    tile = fx.block_idx.x

    A = fx.rocdl.make_buffer_tensor(A)
    B = fx.rocdl.make_buffer_tensor(B)
    C = fx.rocdl.make_buffer_tensor(C)
    tile_a = fx.slice(fx.zipped_divide(A, (TILE_M, TILE_K)), (None, tile))
    tile_b = fx.slice(fx.zipped_divide(B, (TILE_N, TILE_K)), (None, tile))
    tile_c = fx.slice(fx.zipped_divide(C, (TILE_M, TILE_N)), (None, tile))

    mma = fx.make_mma_atom(mfma_for_target())
    tiled_mma = fx.make_tiled_mma(mma, fx.make_layout((2, 2, 1), (1, 2, 0)))
    my_mma = tiled_mma.thr_slice(tid)

    load_f16 = fx.make_copy_atom(fx.rocdl.BufferCopy16b(), fx.Float16)
    store_f32 = fx.make_copy_atom(fx.rocdl.BufferCopy32b(), fx.Float32)
    lds_f16 = fx.make_copy_atom(fx.UniversalCopy16b(), fx.Float16)
    copy_a = fx.make_tiled_copy_A(load_f16, tiled_mma).get_slice(tid)
    copy_b = fx.make_tiled_copy_B(load_f16, tiled_mma).get_slice(tid)
    copy_c = fx.make_tiled_copy_C(store_f32, tiled_mma).get_slice(tid)

    frag_a = my_mma.make_fragment_A(tile_a)
    frag_b = my_mma.make_fragment_B(tile_b)
    frag_c = my_mma.make_fragment_C(tile_c)

    shared = fx.SharedAllocator().allocate(fx.Array[fx.Float16, TILE_M * TILE_K]).peek()
    lds_a = fx.make_view(shared.ptr, fx.make_layout((TILE_M, TILE_K), (TILE_K, 1)))

    fx.copy(load_f16, copy_a.partition_S(tile_a), copy_a.retile(frag_a))
    fx.copy(lds_f16, copy_a.retile(frag_a), copy_a.partition_D(lds_a))
    fx.gpu.barrier()
    fx.copy(lds_f16, copy_a.partition_S(lds_a), copy_a.retile(frag_a))
    fx.copy(load_f16, copy_b.partition_S(tile_b), copy_b.retile(frag_b))

    frag_c.fill(0)
    fx.gemm(mma, frag_c, frag_a, frag_b, frag_c)
    fx.copy(store_f32, copy_c.retile(frag_c), copy_c.partition_S(tile_c))


@flyc.jit
def tile_gemm(A: fx.Tensor, B: fx.Tensor, C: fx.Tensor, stream: fx.Stream = fx.Stream(None)):
    tile_gemm_kernel(A, B, C).launch(grid=(1, 1, 1), block=(256, 1, 1), stream=stream)


# flydsl: example
def one_tile(device):
    """A single 32 x 32 x 32 tile."""
    a = torch.randn(TILE_M, TILE_K, dtype=torch.float16, device=device)
    b = torch.randn(TILE_N, TILE_K, dtype=torch.float16, device=device)
    c = torch.zeros(TILE_M, TILE_N, dtype=torch.float32, device=device)
    return tile_gemm, (a, b, c)


# flydsl: example gfx950
def one_tile_gfx950(device):
    """The same tile, meant for gfx950 (its 16x16x32 MFMA)."""
    return one_tile(device)
