# SPDX-License-Identifier: Apache-2.0
"""Row-wise absmax quantisation written against the raw arith/vector/math dialects.

Fixture of `flydsl-ls check examples/` for the raw-dialect rules (raw-arith, raw-vector,
raw-math). Each flagged line carries its rule's marker comment; the modern spellings
next to them stay quiet. Text such as "arith.addf(a, b)" or "mlir_math.fma(a, b, c)" in
this docstring is never a finding.
"""

import math

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir.dialects import arith as std_arith
from flydsl._mlir.dialects import math as mlir_math
from flydsl._mlir.dialects import vector
from flydsl.expr import arith
from flydsl.expr.typing import T

BLOCK_THREADS = 256
VEC_WIDTH = 4
LOG2_VEC = int(math.log2(VEC_WIDTH))  # Python's math module, not the MLIR dialect
FP8_MAX = 448.0


def _row_base(row, n_cols):
    return std_arith.muli(row, n_cols)  # FLY301: row * n_cols (unsafe: operand types unknown)


def _lane_in_vec(lane: fx.Int32):
    return fx.Int32(arith.andi(lane, fx.Int32(VEC_WIDTH - 1)))  # FLY301: `&` (safe: both fx.Int32)


def _wrap_col(col, n_cols):
    return arith.remui(col, n_cols)  # FLY301: kept, unsigned (`%` on fx.Int32 is signed)


def _in_bounds(col, n_cols):
    return arith.cmpi(arith.CmpIPredicate.slt, col, n_cols)  # FLY301: col < n_cols


def _abs(v):
    return mlir_math.absf(v)  # FLY304: fx.absf(v)


def _absmax(acc, v):
    return arith.maximumf(acc, _abs(v))  # FLY301: fx.max(acc, ...), the guard's legacy spelling


def _absmax_typed(acc: fx.Float32, v: fx.Float32):
    # Modern: typed wrappers on flydsl.expr itself (fx.maximumf is accepted too).
    return fx.max(acc, fx.absf(v)), fx.maximumf(acc, v)


def _scale(x, inv_scale):
    return arith.mulf(x, inv_scale)  # FLY301: x * inv_scale (unsafe: ambient fastmath)


def _scale_fast(x, inv_scale):
    # An explicit per-op fastmath has no operator spelling: reported as information.
    return arith.MulFOp(x, inv_scale, fastmath=arith.FastMathFlags.fast).result  # FLY301: kept


def _fused(a, b, c):
    return mlir_math.fma(a, b, c)  # FLY304: fx.fma(a, b, c) keeps the fused rounding


def _unfused(a, b, c):
    return a * b + c  # two roundings: never rewritten into fx.fma


def _to_bf16(v):
    return arith.trunc_f(T.bf16, v)  # FLY301: fx.BFloat16(v)


def _first_lane(vals: fx.Vector):
    first = vector.extract(vals, static_position=[0], dynamic_position=[])  # FLY303: vals[0] (safe)
    return fx.Float32(first)


def _as_words(packed):
    return vector.bitcast(T.i32x4, packed)  # FLY303: fx.Vector(packed).bitcast(fx.Int32)


def _splat_scale(scale: fx.Float32):
    return vector.broadcast(T.f32x4, scale)  # FLY303: fx.Vector.filled(4, scale, fx.Float32)


def _pair(a, b):
    return vector.from_elements(T.vec(2, T.f32), [a, b])  # FLY303: fx.Vector.from_elements


def _modern_lane_ops(vals: fx.Vector, lane: fx.Int32, n_cols: fx.Int32):
    # Modern: indexing, bitcast and filled on fx.Vector; operators on fx.Int32.
    words = vals.bitcast(fx.Int32)
    ones = fx.Vector.filled(VEC_WIDTH, 1.0, fx.Float32)
    col = lane * VEC_WIDTH
    return vals[0], words, ones, fx.ceildiv(n_cols, VEC_WIDTH), col < n_cols


@flyc.kernel
def absmax_kernel(X: fx.Tensor, n_cols: fx.Int32):
    tid = fx.thread_idx.x
    row = fx.block_idx.x
    with arith.fastmath(arith.FastMathFlags.contract):  # a fastmath context, not an op call
        base = _row_base(row, n_cols)
        lane = _lane_in_vec(tid)
        col = _wrap_col(base + tid * VEC_WIDTH, n_cols)
        ok = _in_bounds(col, n_cols)
        pred = arith.CmpIPredicate.slt  # an enum value, not an op call
        fx.printf("row %d lane %d ok %d pred %d", base, lane, ok, pred)
