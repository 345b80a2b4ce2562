# SPDX-License-Identifier: Apache-2.0
"""Row-wise scaled softmax, written the way FlyDSL kernels looked before the fx clean-up.

This file is the fixture of `flydsl-ls check examples/`: it mixes legacy constructs
(each followed by the rule that flags it) with modern code that must stay quiet. The
text "ArithValue(x)" or "arith.unwrap(v)" in this docstring is never a finding.
"""

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir.dialects import arith as std_arith
from flydsl.expr import arith, gpu
from flydsl.expr.arith import _to_raw as as_mlir_value
from flydsl.expr.typing import T
from flydsl.expr.utils.arith import ArithValue as _AV

BLOCK_THREADS = 256
WARP_SIZE = 64
ROWS_PER_BLOCK = 4
VEC_WIDTH = 4
DEBUG = False


def _lane_and_warp():
    tid = fx.thread_idx.x
    lane = _AV(tid) % WARP_SIZE  # FLY101: tid is already fx.Int32 (unsafe fix: lane is returned)
    warp = tid // WARP_SIZE  # modern: typed accessor, plain operator
    return lane, warp


def _row_offset(row, n_cols: fx.Int32):
    # A real cast (i32 -> i64) is not redundant: no finding here.
    base = fx.Int64(row) * fx.Int64(n_cols)
    off = arith.index_cast(T.index, base)  # FLY103: fx.Index(base)
    return off


def _scale_raw(a, b):
    s = std_arith.mulf(a, b)
    return _AV(s) * 2.0  # FLY101: wrap the raw result once at its source, no fix


def _finite_or_zero(v):
    return arith.ArithValue(v) + 0.0  # FLY101: type unknown, unsafe fix


def _warp_reduce_max(acc: fx.Float32):
    for shift in fx.range_constexpr(6):
        peer = fx.shuffle_xor(acc, 1 << shift, WARP_SIZE)
        acc = acc.maximumf(peer)  # FLY901: Numeric.maximumf -> fx.maximumf(acc, peer)
    return acc


def _warp_reduce_sum(acc: fx.Float32):
    for shift in fx.range_constexpr(6):
        peer = fx.shuffle_xor(acc, 1 << shift, WARP_SIZE)
        acc = acc + peer
    return acc


def _predicate(idx: fx.Int32, limit: fx.Int32):
    # "arith.unwrap(...)" in a string is text, not a call.
    return arith.unwrap(idx < limit)  # FLY102: (idx < limit).ir_value()


def _raw_scalar(x: fx.Float32):
    # The canonical converter under the same `_raw` spelling aiter uses: not legacy.
    from flydsl.expr.typing import as_ir_value as _raw

    return _raw(x)


def _to_mlir(v: fx.Float32):
    return as_mlir_value(v)  # FLY102: v.ir_value()


@flyc.kernel
def softmax_kernel(
    X: fx.Tensor,
    Y: fx.Tensor,
    n_cols: fx.Int32,
    scale: fx.Float32,
):
    tid = fx.thread_idx.x
    bid = fx.block_idx.x
    lane, warp = _lane_and_warp()

    # Legacy thread id: a raw index value used in arithmetic.
    raw_tid = gpu.thread_id("x")  # FLY105: raw index value, used in arithmetic below
    vec_lane = raw_tid % VEC_WIDTH
    typed_tid = fx.Int32(gpu.thread_id("x"))  # modern: wrapped once
    col0 = typed_tid * VEC_WIDTH + vec_lane

    row = fx.Int32(bid) * ROWS_PER_BLOCK + warp  # FLY104: bid is already fx.Int32
    row_i = fx.Int32(fx.Int32(row))  # FLY104: wrapped twice
    tid_copy = fx.Int32(tid)  # flydsl: ignore[FLY104]
    wide_tid = fx.Int64(tid)  # a real widening cast: no finding

    off = _row_offset(row_i, n_cols)
    start = arith.index(0)  # FLY103
    stride = arith.constant(VEC_WIDTH, index=True)  # FLY103
    step = fx.index_cast(T.index, col0)  # FLY103 (deprecated fx.index_cast)
    modern_off = fx.Index(col0)  # modern
    narrow = arith.index_cast(T.i32, off)  # an i32 cast is FLY301's business, not FLY103

    X = fx.rocdl.make_buffer_tensor(X)
    Y = fx.rocdl.make_buffer_tensor(Y)
    tile = fx.make_layout(fx.Int32(ROWS_PER_BLOCK), BLOCK_THREADS)  # FLY104: plain int
    thr_layout = fx.make_layout((WARP_SIZE, ROWS_PER_BLOCK), (1, WARP_SIZE))
    val_layout = fx.make_layout((1, VEC_WIDTH), (1, 1))
    copy_atom = fx.make_copy_atom(fx.rocdl.BufferCopy128b(), fx.Float32)
    lds_atom = fx.rocdl.BufferCopyLDS64b()  # FLY901: never worked, use LDS32b/LDS128b
    tile_mn, tv_layout = fx.make_layout_tv(thr_layout, val_layout)
    tiled_copy = fx.make_tiled_copy(copy_atom, tv_layout, tile_mn)
    thr_copy = tiled_copy.get_slice(tid)

    bX = fx.slice(fx.zipped_divide(X, (ROWS_PER_BLOCK, BLOCK_THREADS)), (None, bid))
    bY = fx.slice(fx.zipped_divide(Y, (ROWS_PER_BLOCK, BLOCK_THREADS)), (None, bid))
    src = thr_copy.partition_S(bX)
    dst = thr_copy.partition_D(bY)
    frag = fx.make_fragment_like(src)
    fx.copy(copy_atom, src, frag)

    vals = frag.load()
    local_max = fx.Float32(-3.0e38)
    for i in fx.range_constexpr(VEC_WIDTH):
        local_max = fx.max(local_max, vals[i])  # modern
    row_max = _warp_reduce_max(local_max)

    total = fx.Float32(0.0)
    for i in fx.range_constexpr(VEC_WIDTH):
        e = fx.math.exp2((vals[i] - row_max) * scale)
        vals[i] = e
        total = total + e
    total = _warp_reduce_sum(total)

    for i in fx.range_constexpr(VEC_WIDTH):
        vals[i] = vals[i] / total
    frag.store(vals)
    fx.copy(copy_atom, frag, dst)

    if fx.const_expr(DEBUG):
        # Old code printed ArithValue(x) here; the string below is text, not a call.
        fx.printf("ArithValue(x) row=%d lane=%d", row, lane)
        fx.printf("idx %d %d %d %d %d", start, stride, step, modern_off, narrow)
        fx.printf("tid %d %d", tid_copy, wide_tid)
        fx.printf("raw %f %f", _scale_raw(scale, scale), _finite_or_zero(scale))
        fx.printf("conv %d %f %f", _predicate(tid, n_cols), _raw_scalar(scale), _to_mlir(scale))
        fx.printf("lds %s", lds_atom)


@flyc.jit
def softmax(
    X: fx.Tensor,
    Y: fx.Tensor,
    n_rows: fx.Constexpr[int],
    n_cols: fx.Int32,
    scale: fx.Float32,
    stream: fx.Stream = fx.Stream(None),
):
    grid = (n_rows + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK
    softmax_kernel(X, Y, n_cols, scale).launch(
        grid=(grid, 1, 1), block=(BLOCK_THREADS, 1, 1), stream=stream
    )
