import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl._mlir.dialects import memref, vector
from flydsl._mlir.extras import types as _mT
from flydsl.expr import arith
from flydsl.expr.gpu import lds_space
from flydsl.expr.typing import T
from flydsl.compiler.kernel_function import CompilationContext
from flydsl.utils.smem_allocator import SmemAllocator

THREADS = 64
SCRATCH_AT = 256

# A k-split reduction scratch: the allocator's base viewed as f32 at a byte offset
# (`memref.view`), read and written with vector ops; no SmemPtr.
allocator = SmemAllocator(None, arch="gfx942", global_sym_name="smem_scratch")
allocator.ptr = SCRATCH_AT + THREADS * 16


@flyc.kernel
def scratch_kernel(Out: fx.Tensor):
    tx = fx.thread_idx.x
    base = allocator.get_base()
    scr_ty = _mT.memref(THREADS * 4, _mT.f32(), memory_space=lds_space())
    scr = memref.view(scr_ty, base, arith.constant(SCRATCH_AT, index=True), sizes=[])
    acc = fx.Vector.filled(4, 1.5, fx.Float32)
    mine = arith.index_cast(T.index, arith.unwrap(fx.Int32(tx * 4)))
    vector.store(acc.ir_value(), scr, [mine], alignment=16)
    fx.gpu.barrier()
    theirs = arith.index_cast(T.index, arith.unwrap(fx.Int32(((tx + 1) % THREADS) * 4)))
    r = vector.load(T.vec(4, T.f32), scr, [theirs])
    fx.ptr_store(fx.Vector(r), fx.recast_iter(fx.Float32, fx.get_iter(Out)) + tx * 4)


@flyc.jit
def scratch(Out: fx.Tensor, stream: fx.Stream = fx.Stream(None)):
    allocator.finalized = False
    ctx = CompilationContext.get_current()
    with ir.InsertionPoint(ctx.gpu_module_body):
        allocator.finalize()
    scratch_kernel(Out).launch(grid=(1, 1, 1), block=(THREADS, 1, 1), stream=stream)


# flydsl: example
def rotate(device):
    out = torch.zeros(THREADS * 4, dtype=torch.float32, device=device)
    return scratch, (out,)
