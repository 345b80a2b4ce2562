import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl._mlir.dialects import llvm
from flydsl.expr import arith
from flydsl.expr.typing import T
from flydsl.compiler.kernel_function import CompilationContext
from flydsl.utils.smem_allocator import SmemAllocator

THREADS = 64
SEGMENT = 1024

# Two whole-allocator buffers addressed only through their raw LDS address (as an LDS-DMA
# or TDM op takes it): no SmemPtr view at all.
alloc_a = SmemAllocator(None, arch="gfx942", global_sym_name="smem_a")
alloc_a.ptr = SEGMENT
alloc_b = SmemAllocator(None, arch="gfx942", global_sym_name="smem_b")
alloc_b.ptr = THREADS * 4

_first_allocator = alloc_a  # an alias nothing reads


def lds_base_i32(memref_base):
    from flydsl._mlir.dialects import memref as _memref_d

    idx = _memref_d.extract_aligned_pointer_as_index(memref_base)
    return arith.unwrap(arith.index_cast(T.i32, idx))


def lds_ptr(addr_i32):
    return llvm.inttoptr(ir.Type.parse("!llvm.ptr<3>"), arith.unwrap(addr_i32))


@flyc.kernel
def base_address_kernel(A: fx.Tensor, B: fx.Tensor):
    tid = fx.thread_idx.x
    a_base = lds_base_i32(alloc_a.get_base())
    b_base = lds_base_i32(alloc_b.get_base())
    off = arith.unwrap(fx.Int32(tid * 4))
    v = arith.unwrap(A[tid])
    llvm.store(v, lds_ptr(arith.addi(a_base, off)))
    fx.gpu.barrier()
    w = llvm.load(T.f32, lds_ptr(arith.addi(a_base, arith.unwrap(fx.Int32(((tid + 1) % THREADS) * 4)))))
    llvm.store(w, lds_ptr(arith.addi(b_base, off)))
    fx.gpu.barrier()
    B[tid] = fx.Float32(llvm.load(T.f32, lds_ptr(arith.addi(b_base, off))))


@flyc.jit
def base_address(A: fx.Tensor, B: fx.Tensor, stream: fx.Stream = fx.Stream(None)):
    alloc_a.finalized = False
    alloc_b.finalized = False
    ctx = CompilationContext.get_current()
    with ir.InsertionPoint(ctx.gpu_module_body):
        alloc_a.finalize()
        alloc_b.finalize()
    base_address_kernel(A, B).launch(grid=(1, 1, 1), block=(THREADS, 1, 1), stream=stream)


# flydsl: example
def rotate(device):
    a = torch.randn(THREADS, dtype=torch.float32, device=device)
    b = torch.empty(THREADS, dtype=torch.float32, device=device)
    return base_address, (a, b)
