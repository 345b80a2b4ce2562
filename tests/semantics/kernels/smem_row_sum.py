import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl.compiler.kernel_function import CompilationContext
from flydsl.expr.typing import T
from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr

WARP = 64


def build_row_sum(block_threads):
    """One row of `block_threads` float32 values summed by one block through LDS."""
    num_waves = block_threads // WARP
    allocator = SmemAllocator(None, arch="gfx942", global_sym_name="row_sum_smem")
    vals_offset = allocator._align(allocator.ptr, 16)
    allocator.ptr = vals_offset + block_threads * 4
    red_offset = allocator._align(allocator.ptr, 16)
    allocator.ptr = red_offset + num_waves * 4
    count_offset = allocator._align(allocator.ptr, 4)
    allocator.ptr = count_offset + 4

    @flyc.kernel
    def row_sum_kernel(X: fx.Tensor, Out: fx.Tensor):
        tid = fx.thread_idx.x
        bid = fx.block_idx.x
        base = allocator.get_base()
        s_vals = SmemPtr(base, vals_offset, T.f32, shape=(block_threads,))
        s_red = SmemPtr(base, red_offset, T.f32, shape=(num_waves,))
        s_count = SmemPtr(base, count_offset, T.i32, shape=(1,))
        s_red.get()

        def wave_partial(lane, wave):
            acc = fx.Float32(0.0)
            for i in fx.range_constexpr(WARP):
                acc = acc + s_vals.load([wave * WARP + i])
            if lane == 0:
                SmemPtr.store(s_red, acc, [wave])

        s_vals.store(X[bid, tid], [tid])
        fx.gpu.barrier()
        wave_partial(tid % WARP, tid // WARP)
        fx.gpu.barrier()
        total = fx.Float32(0.0)
        for w in fx.range_constexpr(num_waves):
            total = total + SmemPtr.load(s_red, [w])
        s_count.store(fx.Int32(num_waves), [0])
        Out[bid] = total

    @flyc.jit
    def row_sum(X: fx.Tensor, Out: fx.Tensor, stream: fx.Stream = fx.Stream(None)):
        allocator.finalized = False
        ctx = CompilationContext.get_current()
        with ir.InsertionPoint(ctx.gpu_module_body):
            allocator.finalize()
        row_sum_kernel(X, Out).launch(grid=(8, 1, 1), block=(block_threads, 1, 1), stream=stream)

    return row_sum


# flydsl: example
def rows(device):
    x = torch.randn(8, 256, dtype=torch.float32, device=device)
    out = torch.empty(8, dtype=torch.float32, device=device)
    return build_row_sum(256), (x, out)
