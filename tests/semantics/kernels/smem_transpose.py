import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl.expr.typing import T
from flydsl.compiler.kernel_function import CompilationContext
from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr

TILE = 16

allocator = SmemAllocator(None, arch="gfx942", global_sym_name="smem_transpose")
tile_offset = allocator._align(allocator.ptr, 16)
allocator.ptr = tile_offset + TILE * TILE * 4
red_offset = allocator._align(allocator.ptr, 16)
allocator.ptr = red_offset + TILE * 4


@flyc.kernel
def transpose_kernel(A: fx.Tensor, B: fx.Tensor):
    tid = fx.thread_idx.x
    base = allocator.get_base()
    s_tile = SmemPtr(base, tile_offset, T.f32, shape=(TILE, TILE))
    s_red = SmemPtr(base, red_offset, T.f32, shape=(TILE,))
    row = tid // TILE
    col = tid % TILE
    s_tile.store(A[row, col], [row, col])
    fx.gpu.barrier()
    B[row, col] = s_tile.load([col, row])


@flyc.jit
def transpose(A: fx.Tensor, B: fx.Tensor, stream: fx.Stream = fx.Stream(None)):
    allocator.finalized = False
    ctx = CompilationContext.get_current()
    with ir.InsertionPoint(ctx.gpu_module_body):
        allocator.finalize()
    transpose_kernel(A, B).launch(grid=(1, 1, 1), block=(TILE * TILE, 1, 1), stream=stream)


# flydsl: example
def one_tile(device):
    a = torch.randn(TILE, TILE, dtype=torch.float32, device=device)
    b = torch.empty(TILE, TILE, dtype=torch.float32, device=device)
    return transpose, (a, b)
