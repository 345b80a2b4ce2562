"""Elementwise C = A + B on (M, N) float32 tensors: a compile example for flydsl-ls.

Each block of 256 threads handles a 4 x 256 tile; every thread moves one float4 (128 bits)
of A and B into registers, adds them and stores one float4 of C.

    flydsl-ls compile examples/compile/vector_add.py --arch gfx942 --emit isa
"""

import torch

import flydsl.compiler as flyc
import flydsl.expr as fx

ROWS_PER_BLOCK = 4
THREADS = 256


@flyc.kernel
def add_kernel(A: fx.Tensor, B: fx.Tensor, C: fx.Tensor, tiled_copy: fx.TiledCopy):
    tid = fx.thread_idx.x
    row_block = fx.block_idx.x
    tile = tiled_copy.tile_mn

    block_a = fx.flat_divide(A, tile)[None, None, row_block, 0]
    block_b = fx.flat_divide(B, tile)[None, None, row_block, 0]
    block_c = fx.flat_divide(C, tile)[None, None, row_block, 0]

    mine = tiled_copy.get_slice(tid)
    src_a = mine.partition_S(block_a)
    src_b = mine.partition_S(block_b)
    dst_c = mine.partition_D(block_c)

    reg_a = fx.make_fragment_like(src_a)
    reg_b = fx.make_fragment_like(src_b)
    reg_c = fx.make_fragment_like(dst_c)

    float4 = fx.make_copy_atom(fx.UniversalCopy128b(), fx.Float32)
    fx.copy(float4, src_a, reg_a)
    fx.copy(float4, src_b, reg_b)
    reg_c.store(reg_a.load() + reg_b.load())
    fx.copy(float4, reg_c, dst_c)


@flyc.jit
def vector_add(A: fx.Tensor, B: fx.Tensor, C: fx.Tensor, stream: fx.Stream = fx.Stream(None)):
    float4 = fx.make_copy_atom(fx.UniversalCopy128b(), fx.Float32)
    threads = fx.make_ordered_layout((ROWS_PER_BLOCK, THREADS // ROWS_PER_BLOCK), order=(1, 0))
    values = fx.make_ordered_layout((1, 4), order=(0, 1))
    tiled_copy = fx.make_tiled_copy_tv(float4, threads, values)
    rows, _ = A.shape.unpack()
    grid = (rows // ROWS_PER_BLOCK, 1, 1)
    add_kernel(A, B, C, tiled_copy).launch(grid=grid, block=(THREADS, 1, 1), stream=stream)


# flydsl: example
def small(device):
    """64 x 256 floats: 16 blocks of 256 threads."""
    a = torch.randn(64, 256, dtype=torch.float32, device=device)
    b = torch.randn(64, 256, dtype=torch.float32, device=device)
    c = torch.empty(64, 256, dtype=torch.float32, device=device)
    return vector_add, (a, b, c)
