"""Loads and stores through the legacy `buffer_ops` shim (our stand-in under `kernels/`):
FLY201's resource + load/store rewrite. A float tensor read as int and float scalars and
a float vector, a bf16 tensor read as dwords (wider than its alignment: the fix goes
through a byte pointer), an int tensor written by element and by byte offset, and a table
at a raw 64-bit address; stores of values whose element type the code shows (an element and
a slice of a vector, an arith op class's result, an fx value unwrapped, an fx.ptr_load of a
typed pointer) to a resource bounded by `num_records_bytes=`; resources passed to a `@flyc.jit`
helper of the module and to a nested function."""

import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir.dialects import vector
from flydsl.expr import arith
from flydsl.expr.typing import T
from kernels.common import buffer_ops

N = 64


@flyc.jit
def _fill(rsrc, off):
    buffer_ops.buffer_store(fx.Vector.filled(2, 7, fx.Int32), rsrc, off)


@flyc.kernel
def access_kernel(A: fx.Tensor, H: fx.Tensor, Out: fx.Tensor, addr: fx.Int64):
    tid = fx.thread_idx.x
    a = buffer_ops.create_buffer_resource(A, max_size=True)
    h = buffer_ops.create_buffer_resource(H)
    out = buffer_ops.create_buffer_resource(Out, max_size=True)
    s = buffer_ops.buffer_load(a, tid, vec_width=1, dtype=fx.Int32)
    v = buffer_ops.buffer_load(a, tid * 4 + 256, vec_width=4, dtype=fx.Float32)
    w = buffer_ops.buffer_load(h, tid, vec_width=1, dtype=fx.Int32)
    buffer_ops.buffer_store(arith.addi(s, w), out, tid)
    buffer_ops.buffer_store(v, out, tid * 4 + 256)
    buffer_ops.buffer_store(w, out, 4096, offset_is_bytes=True)
    table = buffer_ops.create_buffer_resource_from_addr(addr)
    n = buffer_ops.buffer_load(table, tid, vec_width=1, dtype=fx.Int32)
    buffer_ops.buffer_store(n + 1, table, tid + 64)
    pair = buffer_ops.buffer_load(buffer_ops.create_buffer_resource_from_addr(addr), tid * 2, vec_width=2, dtype=fx.Int64)
    buffer_ops.buffer_store(pair, out, tid * 4 + 1024)
    bounded = buffer_ops.create_buffer_resource(Out, max_size=False, num_records_bytes=8192)
    words = fx.Vector(v).bitcast(fx.Int32)
    buffer_ops.buffer_store(vector.extract(words, static_position=[1], dynamic_position=[]), bounded, tid + 1536)
    half = vector.extract_strided_slice(T.vec(2, T.i32), words, offsets=[2], sizes=[2], strides=[1])
    buffer_ops.buffer_store(half, bounded, tid * 2 + 1600)
    buffer_ops.buffer_store(arith.TruncIOp(T.i8, n).result, bounded, tid, offset_is_bytes=True)
    buffer_ops.buffer_store(fx.Float32(3.0).ir_value(), bounded, tid + 1800)
    scratch = buffer_ops.create_buffer_resource(Out, max_size=True)
    _fill(scratch, tid * 2 + 2048)

    def twice(r, i):
        return buffer_ops.buffer_load(r, i, vec_width=1, dtype=fx.Float32) * 2.0

    buffer_ops.buffer_store(twice(scratch, tid) + twice(a, tid), scratch, tid + 2200)
    buffer_ops.buffer_store(fx.ptr_load(fx.rocdl.make_buffer_ptr(fx.inttoptr(fx.PointerType.get(fx.Int32.ir_type, fx.AddressSpace.Global, 4), addr))), bounded, tid + 1900)


@flyc.jit
def access(A: fx.Tensor, H: fx.Tensor, Out: fx.Tensor, addr: fx.Int64, stream: fx.Stream = fx.Stream(None)):
    access_kernel(A, H, Out, addr).launch(grid=(1, 1, 1), block=(N, 1, 1), stream=stream)


# flydsl: example
def one_block(device):
    a = torch.randn(1024, dtype=torch.float32, device=device)
    h = torch.randn(1024, dtype=torch.bfloat16, device=device)
    out = torch.zeros(2048, dtype=torch.int32, device=device)
    return access, (a, h, out, 0)
