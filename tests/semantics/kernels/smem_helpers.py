import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl._mlir.dialects import memref
from flydsl.compiler.kernel_function import CompilationContext
from flydsl.expr.typing import T
from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr

TILE = 64
allocator = SmemAllocator(None, arch="gfx942", global_sym_name="helpers_smem")
tile_offset = allocator._align(allocator.ptr, 16)
allocator.ptr = tile_offset + TILE * 4


def stage(ptr, v, i):
    """Helpers of the kernel take the LDS pointer (or its memref) as an argument."""
    ptr.store(v, [i])


def read_back(tile, i):
    return memref.load(tile, [i])


@flyc.kernel
def helpers_kernel(X: fx.Tensor, Out: fx.Tensor):
    tid = fx.thread_idx.x
    s_tile = SmemPtr(allocator.get_base(), tile_offset, T.f32, shape=(TILE,))
    stage(s_tile, X[0, tid], tid)
    fx.gpu.barrier()
    tile = s_tile.get()
    Out[tid] = read_back(tile, fx.Index(TILE - 1 - tid).ir_value())


@flyc.jit
def helpers(X: fx.Tensor, Out: fx.Tensor, stream: fx.Stream = fx.Stream(None)):
    allocator.finalized = False
    ctx = CompilationContext.get_current()
    with ir.InsertionPoint(ctx.gpu_module_body):
        allocator.finalize()
    helpers_kernel(X, Out).launch(grid=(1, 1, 1), block=(TILE, 1, 1), stream=stream)


# flydsl: example
def one_tile(device):
    x = torch.randn(1, TILE, dtype=torch.float32, device=device)
    out = torch.empty(TILE, dtype=torch.float32, device=device)
    return helpers, (x, out)
