import os

import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl._mlir.dialects import memref, vector
from flydsl.compiler.kernel_function import CompilationContext
from flydsl.expr import arith
from flydsl.expr.typing import T
from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr

THREADS = 64


def default_f8_type():
    """The arch's E4M3 fp8 (FNUZ on gfx94x, OCP elsewhere)."""
    if os.environ.get("FLYDSL_GPU_ARCH", "gfx942").startswith("gfx94"):
        return ir.Float8E4M3FNUZType.get()
    return ir.Float8E4M3FNType.get()


def build(tile_m, elem_bytes, use_out):
    """A second GEMM stage's LDS, as a mixed-precision MoE kernel lays it out: one region
    whose size a condition chooses, an fp8 X tile at its start, the epilogue's output over
    it, and token and weight tables after both, at `lds_x_ptr.byte_offset + ...`."""
    allocator = SmemAllocator(None, arch="gfx942", global_sym_name="smem0")
    lds_x_bytes = 2 * tile_m * 64
    lds_out_bytes = 2 * tile_m * THREADS if use_out else 0
    lds_total_bytes = max(lds_x_bytes, lds_out_bytes) + tile_m * 8
    lds_total_elems = lds_total_bytes if elem_bytes == 1 else lds_total_bytes // 2
    lds_alloc_offset = allocator._align(allocator.ptr, 16)
    allocator.ptr = lds_alloc_offset + lds_total_elems * elem_bytes

    def x_lds_elem():
        return default_f8_type()

    @flyc.kernel
    def stage_kernel(X: fx.Tensor, Out: fx.Tensor, OutW: fx.Tensor):
        tx = fx.thread_idx.x
        x_elem = x_lds_elem()
        vec16_x = T.vec(16, x_elem)
        base_ptr = allocator.get_base()
        lds_x_ptr = SmemPtr(base_ptr, lds_alloc_offset, x_lds_elem(), shape=(lds_total_elems,))
        lds_x = lds_x_ptr.get()
        lds_out = (
            SmemPtr(base_ptr, lds_x_ptr.byte_offset, T.bf16, shape=(tile_m * THREADS,)).get()
            if use_out
            else None
        )
        lds_tid_off = max(lds_x_bytes, lds_out_bytes)
        lds_tid = SmemPtr(base_ptr, lds_x_ptr.byte_offset + lds_tid_off, T.i32, shape=(tile_m,)).get()
        lds_tw_off = lds_tid_off + tile_m * 4
        lds_tw = SmemPtr(base_ptr, lds_x_ptr.byte_offset + lds_tw_off, T.f32, shape=(tile_m,)).get()

        row = arith.index_cast(T.index, arith.unwrap(fx.Int32((tx % tile_m) * 64)))
        g = fx.ptr_load(fx.recast_iter(fx.Uint8, fx.get_iter(X)) + tx * 16, result_type=T.vec(16, T.i8))
        vector.store(vector.bitcast(vec16_x, g.ir_value()), lds_x, [row])
        lane = arith.index_cast(T.index, arith.unwrap(fx.Int32(tx % tile_m)))
        if tx < tile_m:
            memref.store(arith.unwrap(fx.Int32(tx * 3)), lds_tid, [lane])
            memref.store(arith.unwrap(fx.Float32(0.5)), lds_tw, [lane])
        fx.gpu.barrier()
        at = arith.index_cast(T.index, arith.unwrap(fx.Int32(((tx + 1) % tile_m) * 64)))
        loaded = vector.load(vec16_x, lds_x, [at])
        fx.ptr_store(fx.Vector(vector.bitcast(T.vec(2, T.i64), loaded)), fx.recast_iter(fx.Int64, fx.get_iter(Out)) + tx * 2)
        t = memref.load(lds_tid, [lane])
        w = memref.load(lds_tw, [lane])
        fx.ptr_store(fx.Float32(w) * fx.Int32(t).to(fx.Float32), fx.recast_iter(fx.Float32, fx.get_iter(OutW)) + tx)
        if lds_out is not None:
            fx.gpu.barrier()
            one = vector.from_elements(T.vec(1, T.bf16), [arith.unwrap(fx.Float32(1.0).to(fx.BFloat16))])
            vector.store(one, lds_out, [arith.index_cast(T.index, arith.unwrap(fx.Int32(tx)))])

    @flyc.jit
    def launch(X: fx.Tensor, Out: fx.Tensor, OutW: fx.Tensor, stream: fx.Stream = fx.Stream(None)):
        allocator.finalized = False
        ctx = CompilationContext.get_current()
        with ir.InsertionPoint(ctx.gpu_module_body):
            allocator.finalize()
        stage_kernel(X, Out, OutW).launch(grid=(1, 1, 1), block=(THREADS, 1, 1), stream=stream)

    return launch


# flydsl: example
def region(device):
    x = torch.zeros(THREADS * 16, dtype=torch.uint8, device=device)
    out = torch.zeros(THREADS * 2, dtype=torch.int64, device=device)
    out_w = torch.zeros(THREADS, dtype=torch.float32, device=device)
    return build(16, 1, True), (x, out, out_w)
