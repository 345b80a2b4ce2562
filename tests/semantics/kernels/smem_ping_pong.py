import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl.compiler.kernel_function import CompilationContext
from flydsl.expr.typing import T
from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr

LDS_LIMIT = 65536


def build_ping_pong(n):
    """Two LDS stages on a ping-pong allocator pair. The pong region holds the f32 input
    tile first and the f16 output tile later (two views of one region), then a row-index
    table; sizes are rounded with the allocator's `_align`."""
    allocator_pong = SmemAllocator(None, arch="gfx942", global_sym_name="ping_pong_smem0")
    allocator_ping = SmemAllocator(None, arch="gfx942", global_sym_name="ping_pong_smem1")
    x_bytes = n * 4
    out_bytes = 2 * n * 2
    pong_region = max(x_bytes, out_bytes)
    pong_total = allocator_pong._align(pong_region, 128) + n * 4
    if allocator_pong._align(pong_total, 1024) > LDS_LIMIT:
        raise ValueError("the pong stage does not fit in LDS")
    pong_offset = allocator_pong._align(allocator_pong.ptr, 16)
    allocator_pong.ptr = pong_offset + pong_region
    tid_offset = allocator_pong._align(allocator_pong.ptr, 4)
    allocator_pong.ptr = tid_offset + n * 4
    ping_offset = allocator_ping._align(allocator_ping.ptr, 16)
    allocator_ping.ptr = ping_offset + x_bytes

    @flyc.kernel
    def ping_pong_kernel(X: fx.Tensor, Out: fx.Tensor):
        tid = fx.thread_idx.x
        base_pong = allocator_pong.get_base()
        base_ping = allocator_ping.get_base()
        s_x_pong = SmemPtr(base_pong, pong_offset, T.f32, shape=(n,))
        s_x_ping = SmemPtr(base_ping, ping_offset, T.f32, shape=(n,))
        s_out = SmemPtr(base_pong, pong_offset, T.f16, shape=(2 * n,))
        s_tid = SmemPtr(base_pong, tid_offset, T.i32, shape=(n,))
        s_x_pong.store(X[0, tid], [tid])
        s_tid.store(fx.Int32(n - 1 - tid), [tid])
        fx.gpu.barrier()
        s_x_ping.store(s_x_pong.load([n - 1 - tid]) * 2.0, [tid])
        fx.gpu.barrier()
        s_out.store(fx.Float32(s_x_ping.load([tid])).to(fx.Float16), [2 * tid])
        fx.gpu.barrier()
        Out[s_tid.load([tid])] = fx.Float16(s_out.load([2 * tid])).to(fx.Float32)

    @flyc.jit
    def ping_pong(X: fx.Tensor, Out: fx.Tensor, stream: fx.Stream = fx.Stream(None)):
        allocator_pong.finalized = False
        allocator_ping.finalized = False
        ctx = CompilationContext.get_current()
        with ir.InsertionPoint(ctx.gpu_module_body):
            allocator_pong.finalize()
            allocator_ping.finalize()
        ping_pong_kernel(X, Out).launch(grid=(1, 1, 1), block=(n, 1, 1), stream=stream)

    return ping_pong


# flydsl: example
def stages(device):
    x = torch.randn(1, 64, dtype=torch.float32, device=device)
    out = torch.empty(64, dtype=torch.float32, device=device)
    return build_ping_pong(64), (x, out)
