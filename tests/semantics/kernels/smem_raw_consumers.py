import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl._mlir.dialects import memref, vector
from flydsl.expr import arith
from flydsl.expr.typing import T
from flydsl.compiler.kernel_function import CompilationContext
from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr

THREADS = 64

allocator = SmemAllocator(None, arch="gfx942", global_sym_name="smem_raw")
x_offset = allocator._align(allocator.ptr, 16)
allocator.ptr = x_offset + THREADS * 16
tid_offset = allocator._align(allocator.ptr, 4)
allocator.ptr = tid_offset + THREADS * 4


@flyc.kernel
def raw_consumers_kernel(X: fx.Tensor, Out: fx.Tensor, Tid: fx.Tensor):
    tx = fx.thread_idx.x
    base = allocator.get_base()
    lds_x = SmemPtr(base, x_offset, T.i8, shape=(THREADS * 16,)).get()
    lds_tid = SmemPtr(base, tid_offset, T.i32, shape=(THREADS,)).get()
    vec16 = T.vec(16, T.i8)
    row = arith.index_cast(T.index, arith.unwrap(fx.Int32(tx * 16)))
    g = fx.ptr_load(fx.recast_iter(fx.Uint8, fx.get_iter(X)) + tx * 16, result_type=fx.Vector.make_type(16, fx.Uint8))
    vector.store(g.ir_value(), lds_x, [row])
    tid_vec1 = vector.from_elements(T.vec(1, T.i32), [arith.unwrap(fx.Int32(tx * 7))])
    vector.store(tid_vec1, lds_tid, [arith.index_cast(T.index, arith.unwrap(fx.Int32(tx)))], alignment=4)
    fx.gpu.barrier()
    other = arith.index_cast(T.index, arith.unwrap(fx.Int32(((tx + 1) % THREADS) * 16)))
    loaded = vector.load(vec16, lds_x, [other])
    as_i64 = vector.bitcast(T.vec(2, T.i64), loaded)
    fx.ptr_store(fx.Vector(vector.bitcast(vec16, as_i64)), fx.recast_iter(fx.Uint8, fx.get_iter(Out)) + tx * 16)
    t = memref.load(lds_tid, [arith.index_cast(T.index, arith.unwrap(fx.Int32((tx + 3) % THREADS)))])
    Tid[tx] = fx.Int32(t)


@flyc.jit
def raw_consumers(X: fx.Tensor, Out: fx.Tensor, Tid: fx.Tensor, stream: fx.Stream = fx.Stream(None)):
    allocator.finalized = False
    ctx = CompilationContext.get_current()
    with ir.InsertionPoint(ctx.gpu_module_body):
        allocator.finalize()
    raw_consumers_kernel(X, Out, Tid).launch(grid=(1, 1, 1), block=(THREADS, 1, 1), stream=stream)


# flydsl: example
def exchange(device):
    x = torch.zeros(THREADS * 16, dtype=torch.uint8, device=device)
    out = torch.zeros(THREADS * 16, dtype=torch.uint8, device=device)
    tid = torch.zeros(THREADS, dtype=torch.int32, device=device)
    return raw_consumers, (x, out, tid)
