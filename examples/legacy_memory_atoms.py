# SPDX-License-Identifier: Apache-2.0
"""LDS-staged row copy with a one-tile MFMA, in the pre-clean-up pointer and atom style.

Fixture of `flydsl-ls check examples/` for the memory/atom rules: hand-made
`!llvm.ptr` casts (FLY202) and single-atom `*_atom_call`s (FLY602), each flagged line
followed by its rule, next to modern code that must stay quiet. The words
"buffer_ops.create_llvm_ptr(x, address_space=3)" and "fx.copy_atom_call(a, s, d)" in
this docstring are text, not findings.
"""

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl._mlir.dialects import fly
from flydsl._mlir.dialects import llvm as _llvm
from kernels.common import buffer_ops, mem_ops

BLOCK_THREADS = 256
VEC_WIDTH = 4
LDS_ROWS = 64


@fx.struct
class SharedStorage:
    stage: fx.Array[fx.Float32, LDS_ROWS * BLOCK_THREADS, 16]
    flags: fx.Array[fx.Int32, BLOCK_THREADS, 16]


def _stage_base_ptr(lds):
    stage_idx = fx.Index(fx.ptrtoint(lds.stage.ptr))
    return buffer_ops.create_llvm_ptr(stage_idx, address_space=3)  # FLY202: lds.stage.ptr.llvm_ptr (unsafe)


def _flags_ptr(lds):
    return lds.flags.ptr.llvm_ptr  # modern: the backend resolves the address space


def _lane_slot_ptr(lds_base_i32, lane):
    # A byte address computed by hand: no pointer to ask, so no automatic fix.
    addr = fx.Int64(lds_base_i32 + lane * (VEC_WIDTH * 4))
    ptr_ty = ir.Type.parse("!llvm.ptr<3>")
    return _llvm.inttoptr(ptr_ty, fx.as_ir_value(addr))  # FLY202: fx.inttoptr with a typed pointer


def _global_ptr(addr_i64):
    ptr_ty = fx.PointerType.get(fx.Float32.ir_type, fx.AddressSpace.Global, 16)
    return fx.to_llvm_ptr(fx.inttoptr(ptr_ty, addr_i64))  # modern


def _signal_ptr(signal, tile_idx):
    return mem_ops.get_llvm_ptr(signal, tile_idx, 4)  # FLY202: keep the offset math, then .llvm_ptr


def _load_tile(atom, tiles, idx, r):
    fx.copy_atom_call(atom, fx.slice(tiles, (None, idx)), r)  # FLY602: fx.copy (unsafe)


def _store_tile(atom, r, tiles, idx, mask):
    fx.copy_atom_call(atom, r, fx.slice(tiles, (None, idx)), pred=mask)  # FLY602: fx.copy(..., pred=mask)


def _load_tile_ssa(ty, atom, tiles, idx):
    # The SSA-returning primitive is a different operation: kept.
    return fly.copy_atom_call_ssa([ty], atom, fx.slice(tiles, (None, idx)))


@flyc.kernel
def staged_rows_kernel(X: fx.Tensor, Y: fx.Tensor, A: fx.Tensor, B: fx.Tensor, C: fx.Tensor):
    tid = fx.thread_idx.x
    bid = fx.block_idx.x
    lds = fx.SharedAllocator().allocate(SharedStorage).peek()

    stage_ptr = _stage_base_ptr(lds)
    flags_ptr = _flags_ptr(lds)

    atom = fx.make_copy_atom(fx.UniversalCopy128b(), fx.Float32)
    rows = fx.logical_divide(X, fx.make_layout(VEC_WIDTH, 1))
    out_rows = fx.logical_divide(Y, fx.make_layout(VEC_WIDTH, 1))
    r = fx.make_rmem_tensor(VEC_WIDTH, fx.Float32)
    idx = bid * BLOCK_THREADS + tid
    _load_tile(atom, rows, idx, r)
    fx.copy(atom, r, fx.slice(out_rows, (None, idx)))  # modern

    mma = fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 16, fx.Float16))
    frag_a = fx.make_rmem_tensor(4, fx.Float16)
    frag_b = fx.make_rmem_tensor(4, fx.Float16)
    frag_c = fx.make_rmem_tensor(4, fx.Float32)
    fx.copy(atom, fx.slice(fx.logical_divide(A, fx.make_layout(4, 1)), (None, tid)), frag_a)
    fx.copy(atom, fx.slice(fx.logical_divide(B, fx.make_layout(4, 1)), (None, tid)), frag_b)
    fx.mma_atom_call(mma, frag_c, frag_a, frag_b, frag_c)  # FLY602: fx.gemm (unsafe)
    fx.gemm(mma, frag_c, frag_a, frag_b, frag_c)  # modern
