"""A value the kernel binds in one `const_expr` branch only (or sets to None first), stored
by a raw builder inside a dynamic `if` (a stand-in of the legacy `buffer_ops` shim): the
shape of FlyDSL's qk_norm_rope_quant.py, whose fp32 scale exists only when the scales are
not e8m0. Each builder has one example per configuration of its flag. FLY301 types the
constants; the stores must then not call a method on a name the dynamic `if` does not bind,
or FlyDSL's rewriter carries it through the `if`, and on the configuration where it is
unbound or None the trace fails ("initialized as None before a dynamic if/else")."""

import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl.expr import arith, const_expr
from flydsl.expr.typing import T
from kernels.common import buffer_ops


def build_unbound(use_bits: bool):
    @flyc.kernel
    def unbound_kernel(Out: fx.Tensor, x: fx.Float32):
        tid = fx.thread_idx.x
        out = buffer_ops.create_buffer_resource(Out, max_size=True)
        amax = arith.maximumf(x.ir_value(), x.ir_value())
        if const_expr(use_bits):
            bits = arith.constant(7, type=T.i32)
        else:
            scale = amax * arith.constant(0.5, type=T.f32)
        if tid == 0:
            if const_expr(use_bits):
                buffer_ops.buffer_store(bits, out, tid)
            else:
                buffer_ops.buffer_store(scale, out, tid)

    @flyc.jit
    def run(Out: fx.Tensor, x: fx.Float32, stream: fx.Stream = fx.Stream(None)):
        unbound_kernel(Out, x).launch(grid=(1, 1, 1), block=(64, 1, 1), stream=stream)

    return run


def build_none_first(use_bits: bool):
    @flyc.kernel
    def none_first_kernel(Out: fx.Tensor, x: fx.Float32):
        tid = fx.thread_idx.x
        out = buffer_ops.create_buffer_resource(Out, max_size=True)
        scale = None
        if const_expr(not use_bits):
            scale = arith.constant(0.25, type=T.f32)
        if tid == 0:
            if const_expr(use_bits):
                buffer_ops.buffer_store(arith.constant(7, type=T.i32), out, tid)
            else:
                buffer_ops.buffer_store(scale, out, tid)

    @flyc.jit
    def run(Out: fx.Tensor, x: fx.Float32, stream: fx.Stream = fx.Stream(None)):
        none_first_kernel(Out, x).launch(grid=(1, 1, 1), block=(64, 1, 1), stream=stream)

    return run


def _args(device):
    return (torch.zeros(64, dtype=torch.float32, device=device), 1.5)


# flydsl: example
def unbound_bits(device):
    return build_unbound(True), _args(device)


# flydsl: example
def unbound_scale(device):
    return build_unbound(False), _args(device)


# flydsl: example
def none_first_bits(device):
    return build_none_first(True), _args(device)


# flydsl: example
def none_first_scale(device):
    return build_none_first(False), _args(device)
