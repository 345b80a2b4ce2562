# SPDX-License-Identifier: Apache-2.0
"""Guarded row reduction in the pre-clean-up control-flow style.

Fixture of `flydsl-ls check examples/` for the control-flow, MMA and launch rules: raw
`scf` builders (FLY302), a runtime `if` in a plain helper (FLY501), `const_expr` on a
lane id (FLY502), the private AST rewriter (FLY503), a raw MFMA (FLY601), an inline TV
layout (FLY603) and a launcher called in a host loop (FLY701), next to modern code that
must stay quiet. The words "scf.ForOp(lo, hi, step)" and "rocdl.mfma_f32_16x16x16f16"
in this docstring are text, not findings.
"""

from contextlib import contextmanager

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl._mlir.dialects import scf
from flydsl.compiler.ast_rewriter import ASTRewriter
from flydsl.expr import arith, const_expr, rocdl

THREADS = 64
ROWS = 4


@contextmanager
def _if_then(if_op):
    with ir.InsertionPoint(if_op.then_block):
        yield
        scf.YieldOp([])


def _row_sum(row_ptr, n_iters):
    c0 = arith.constant(0, index=True)
    c1 = arith.constant(1, index=True)
    acc0 = arith.constant(0.0, type=fx.T.f32)
    loop = scf.ForOp(c0, n_iters, c1, [acc0])  # FLY302: range(c0, n_iters, c1, init=[acc0]) (unsafe)
    with ir.InsertionPoint(loop.body):
        acc = loop.inner_iter_args[0]
        scf.YieldOp([acc + row_ptr[arith.index_cast(fx.T.i32, loop.induction_variable)]])
    return loop.results[0]


def _store_if_in_range(out, row: fx.Int32, rows: fx.Int32, value):
    if row < rows:  # FLY501: the helper needs @flyc.jit (unsafe)
        out[row] = value


@flyc.jit
def _store_if_lane0(out, value):
    if fx.thread_idx.x == 0:  # modern: a @flyc.jit helper branches at run time
        out[0] = value


def _lane0_only(out, value):
    if const_expr(fx.thread_idx.x == 0):  # FLY502: runtime value in const_expr
        out[0] = value


_lane0_only = ASTRewriter.transform(_lane0_only)  # FLY503: use @flyc.jit


def _tile_mma(a_vec, b_vec, acc_vec):
    return rocdl.mfma_f32_16x16x16f16(fx.T.f32x4, [a_vec, b_vec, acc_vec, 0, 0, 0])  # FLY601: the exact atom


def _row_copy(atom):
    return fx.make_tiled_copy(atom, fx.make_layout(((4, 16), 4), ((64, 1), 16)), (4, 64))  # FLY603


def _row_copy_modern(atom):
    thr = fx.make_layout((4, 16), (16, 1))
    val = fx.make_layout((1, 4), (1, 1))
    return fx.make_tiled_copy_tv(atom, thr, val)  # modern


@flyc.kernel
def reduce_rows_kernel(out: fx.Tensor, rows: fx.Int32, threshold: fx.Int32):
    tid = fx.thread_idx.x
    with _if_then(scf.IfOp(arith.unwrap(tid < threshold))):  # FLY302: `if tid < threshold:` (unsafe)
        out[tid] = 0.0
    if tid < rows:  # modern: Python if in a kernel
        out[tid + THREADS] = 1.0
    for i in fx.range_constexpr(ROWS):  # modern
        _store_if_in_range(out, tid + i, rows, 2.0)


@flyc.jit
def reduce_rows(out: fx.Tensor, rows: fx.Int32, threshold: fx.Int32, stream: fx.Stream = fx.Stream(None)):
    reduce_rows_kernel(out, rows, threshold).launch(grid=(1, 1, 1), block=(THREADS, 1, 1), stream=stream)


def benchmark(out, iters):
    for _ in range(iters):
        reduce_rows(out, ROWS, THREADS)  # FLY701: compile once, then _run_compiled
