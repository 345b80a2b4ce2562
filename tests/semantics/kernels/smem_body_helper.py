import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl.compiler.kernel_function import CompilationContext
from flydsl.expr.typing import T
from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr


def build_reverse(n, scaled):
    """One of two kernels (chosen when building) reverses a row through LDS; both run the
    same body function, which is where LDS is used."""
    allocator = SmemAllocator(None, arch="gfx942", global_sym_name="reverse_smem")
    row_offset = allocator._align(allocator.ptr, 16)
    allocator.ptr = row_offset + n * 4

    def _emit_reverse(X, Out, scale):
        tid = fx.thread_idx.x
        base = allocator.get_base()
        s_row = SmemPtr(base, row_offset, T.f32, shape=(n,))
        s_row.store(X[0, tid] * scale, [tid])
        fx.gpu.barrier()
        Out[tid] = s_row.load([n - 1 - tid])

    if scaled:

        @flyc.kernel
        def reverse_kernel(X: fx.Tensor, Out: fx.Tensor):
            _emit_reverse(X, Out, 2.0)

    else:

        @flyc.kernel
        def reverse_kernel(X: fx.Tensor, Out: fx.Tensor):
            _emit_reverse(X, Out, 1.0)

    @flyc.jit
    def reverse(X: fx.Tensor, Out: fx.Tensor, stream: fx.Stream = fx.Stream(None)):
        allocator.finalized = False
        ctx = CompilationContext.get_current()
        with ir.InsertionPoint(ctx.gpu_module_body):
            allocator.finalize()
        reverse_kernel(X, Out).launch(grid=(1, 1, 1), block=(n, 1, 1), stream=stream)

    return reverse


# flydsl: example
def scaled(device):
    x = torch.randn(1, 64, dtype=torch.float32, device=device)
    out = torch.empty(64, dtype=torch.float32, device=device)
    return build_reverse(64, True), (x, out)
