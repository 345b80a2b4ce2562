# SPDX-License-Identifier: Apache-2.0
"""Row-wise scaled softmax in current FlyDSL style: `flydsl-ls check` reports nothing here.

Compare with `legacy_kernel.py`: typed accessors instead of `gpu.thread_id("x")`,
operators on fx values instead of ArithValue(...) wrappers, `fx.Index(...)` at the one
index-typed boundary, `fx.max` instead of `.maximumf`, and `.ir_value()` only where a
raw value is really needed.
"""

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl.expr import gpu
from flydsl.expr.typing import as_ir_value

BLOCK_THREADS = 256
WARP_SIZE = 64
ROWS_PER_BLOCK = 4
VEC_WIDTH = 4


def _lane_and_warp():
    tid = fx.thread_idx.x
    return tid % WARP_SIZE, tid // WARP_SIZE


def _row_offset(row: fx.Int32, n_cols: fx.Int32):
    base = fx.Int64(row) * fx.Int64(n_cols)  # a real i32 -> i64 widening
    return fx.Index(base)


def _warp_reduce(acc: fx.Float32, combine):
    for shift in fx.range_constexpr(6):
        peer = fx.shuffle_xor(acc, 1 << shift, WARP_SIZE)
        acc = combine(acc, peer)
    return acc


def _predicate(idx: fx.Int32, limit: fx.Int32):
    return (idx < limit).ir_value()


def _raw_scalar(x: fx.Float32):
    return as_ir_value(x)


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
    also_tid = gpu.thread_idx.x  # the typed accessor of the gpu module
    vec_lane = also_tid % VEC_WIDTH

    row = bid * ROWS_PER_BLOCK + warp
    col0 = tid * VEC_WIDTH + vec_lane
    off = _row_offset(row, n_cols)

    X = fx.rocdl.make_buffer_tensor(X)
    Y = fx.rocdl.make_buffer_tensor(Y)
    thr_layout = fx.make_layout((WARP_SIZE, ROWS_PER_BLOCK), (1, WARP_SIZE))
    val_layout = fx.make_layout((1, VEC_WIDTH), (1, 1))
    copy_atom = fx.make_copy_atom(fx.rocdl.BufferCopy128b(), fx.Float32)
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
        local_max = fx.max(local_max, vals[i])
    row_max = _warp_reduce(local_max, fx.max)

    total = fx.Float32(0.0)
    for i in fx.range_constexpr(VEC_WIDTH):
        e = fx.math.exp2((vals[i] - row_max) * scale)
        vals[i] = e
        total = total + e
    total = _warp_reduce(total, lambda a, b: a + b)

    for i in fx.range_constexpr(VEC_WIDTH):
        vals[i] = vals[i] / total
    frag.store(vals)
    fx.copy(copy_atom, frag, dst)

    if fx.const_expr(False):
        fx.printf("row=%d lane=%d col=%d off=%d", row, lane, col0, off)
        fx.printf("pred %d raw %f", _predicate(tid, n_cols), _raw_scalar(scale))


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
