"""Stores and loads through the legacy `buffer_ops` shim whose element type or width the code
shows only through the value flow: a sum carried around a `range` loop, the loop's own
variable, what a helper of the module returns, a nested helper's parameter given the same
type at every call, and vector widths known to be more than 1 only in the `else` of a
trace-time `if const_expr(W == 1)` or after `assert W == 8`; resources a nested factory
makes (`make(t)` returns `create_buffer_resource(t)`); an element type chosen at trace time
between two of one size (`T.bf16 if ... else T.f16`); a `@flyc.jit` helper given buffer
pointers made from raw addresses."""

import flydsl.compiler as flyc
import flydsl.expr as fx
import torch
from flydsl.expr import const_expr
from flydsl.expr.typing import T
from kernels.common import buffer_ops

N = 64
PAIRS = len((0, 0))  # ints the linter cannot compute: trace-time constants
VEC = len(range(8))
DTYPE = "bf16"


@flyc.jit
def _widest(v, w):
    return (v > w).select(v, w)


@flyc.jit
def _copy_row(src, dst, lane):
    row = buffer_ops.buffer_load(src, lane * 4, vec_width=4, dtype=fx.Int32)
    buffer_ops.buffer_store(row, dst, lane * 4 + 64)


@flyc.kernel
def flow_kernel(A: fx.Tensor, Out: fx.Tensor, n: fx.Int32, addr: fx.Int64):
    tid = fx.thread_idx.x
    a = buffer_ops.create_buffer_resource(A, max_size=True)
    out = buffer_ops.create_buffer_resource(Out, max_size=True)
    total = fx.Int32(0)
    for i in range(fx.Int32(0), n, 1):
        total = total + i
        buffer_ops.buffer_store(i, out, tid * 8 + i)
    buffer_ops.buffer_store(total, out, tid + 1024)

    def put(v, off):
        buffer_ops.buffer_store(v, out, off)

    put(_widest(total, fx.Int32(tid)), tid + 1100)
    put(fx.Int32(tid) + 1, tid + 1200)
    if const_expr(PAIRS == 1):
        pair = buffer_ops.buffer_load(a, tid, vec_width=1, dtype=fx.Float32)
    else:
        pair = buffer_ops.buffer_load(a, tid * PAIRS, vec_width=PAIRS, dtype=fx.Float32)
    buffer_ops.buffer_store(pair, out, tid * 2 + 1300)
    assert VEC == 8
    half = VEC // 2
    quad = buffer_ops.buffer_load(a, tid * half + 512, vec_width=half, dtype=fx.Float32)
    buffer_ops.buffer_store(quad, out, tid * 4 + 1500)

    def make(t):
        return buffer_ops.create_buffer_resource(t, max_size=True)

    src = make(A)
    dst = make(Out)
    buffer_ops.buffer_store(buffer_ops.buffer_load(src, tid, vec_width=1, dtype=fx.Float32), dst, tid + 1700)
    elem = T.bf16 if DTYPE == "bf16" else T.f16  # chosen at trace time, one size either way
    h = buffer_ops.buffer_load(a, tid, vec_width=1, dtype=elem)
    h8 = buffer_ops.buffer_load(a, tid * 8, vec_width=8, dtype=elem)
    buffer_ops.buffer_store(h, out, tid + 3800)
    buffer_ops.buffer_store(h8, out, tid * 8 + 3900)
    table = buffer_ops.create_buffer_resource_from_addr(addr)
    scratch = buffer_ops.create_buffer_resource_from_addr(addr + 65536)
    _copy_row(table, scratch, tid)


@flyc.jit
def flow(A: fx.Tensor, Out: fx.Tensor, n: fx.Int32, addr: fx.Int64, stream: fx.Stream = fx.Stream(None)):
    flow_kernel(A, Out, n, addr).launch(grid=(1, 1, 1), block=(N, 1, 1), stream=stream)


# flydsl: example
def one_block(device):
    a = torch.randn(1024, dtype=torch.float32, device=device)
    out = torch.zeros(2048, dtype=torch.int32, device=device)
    return flow, (a, out, 4, 0)
