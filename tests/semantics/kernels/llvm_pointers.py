"""Hand-made `!llvm.ptr`s from integer addresses (FLY202's raw-address fixes): LDS pointers
from byte offsets through `buffer_ops.create_llvm_ptr(..., address_space=3)` and raw
`llvm.inttoptr` / `llvm.IntToPtrOp`, and a global pointer into a tensor from its address,
each used by raw llvm loads and stores (which need an `!llvm.ptr`)."""

import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl._mlir.dialects import llvm
from flydsl.expr import arith
from flydsl.expr.typing import T
from kernels.common import buffer_ops

_LDS_PTR = "!llvm.ptr<3>"
_LDS_TYPE = None


def _lds_ptr_t():
    return ir.Type.parse(_LDS_PTR)


def _lds_at(byte_addr):
    global _LDS_TYPE
    if _LDS_TYPE is None:
        _LDS_TYPE = ir.Type.parse("!llvm.ptr<3>")
    return llvm.inttoptr(_LDS_TYPE, fx.as_ir_value(fx.Int64(byte_addr)))


def _global_at(addr_i64):
    return llvm.IntToPtrOp(llvm.PointerType.get(address_space=1), addr_i64).result


@flyc.kernel
def pointers_kernel(Out: fx.Tensor, Src: fx.Tensor):
    tid = fx.thread_idx.x
    lane_bytes = fx.Index(tid) * fx.Index(4)
    # LDS through the helper: an index address (made i64) and an fx.Int64 one
    p_store = buffer_ops.create_llvm_ptr(lane_bytes, address_space=3)
    llvm.StoreOp(fx.as_ir_value(fx.Int32(tid)), p_store, alignment=4)
    fx.gpu.barrier()
    p_next = buffer_ops.create_llvm_ptr(fx.Int64(lane_bytes) + 4, address_space=3)
    nxt = fx.Int32(llvm.LoadOp(T.i32, p_next, alignment=4).result)
    # LDS through raw casts: a helper's type, a lazily set module type, a local type
    raw_off = arith.index_cast(T.i32, fx.as_ir_value(lane_bytes))
    here = fx.Int32(llvm.LoadOp(T.i32, llvm.inttoptr(_lds_ptr_t(), raw_off), alignment=4).result)
    again = fx.Int32(llvm.LoadOp(T.i32, _lds_at(lane_bytes), alignment=4).result)
    lds_ty = ir.Type.parse("!llvm.ptr<3>")
    first = fx.Int32(llvm.LoadOp(T.i32, llvm.IntToPtrOp(lds_ty, fx.as_ir_value(fx.Int64(0))).result, alignment=4).result)
    # global: element tid of Src from the tensor's address
    src_addr = fx.Int64(fx.ptrtoint(fx.get_iter(Src))) + fx.Int64(tid) * 4
    loaded = fx.Int32(llvm.LoadOp(T.i32, _global_at(fx.as_ir_value(src_addr)), alignment=4).result)
    Out[tid] = nxt + here + again + first + loaded


@flyc.jit
def pointers(Out: fx.Tensor, Src: fx.Tensor, stream: fx.Stream = fx.Stream(None)):
    pointers_kernel(Out, Src).launch(grid=(1, 1, 1), block=(64, 1, 1), stream=stream)


# flydsl: example
def example(device):
    out = torch.zeros(64, dtype=torch.int32, device=device)
    src = torch.arange(64, dtype=torch.int32, device=device)
    return pointers, (out, src)
