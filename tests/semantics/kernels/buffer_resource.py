"""A copy kernel already moved to a buffer tensor + copy atoms, with the legacy resource
it used to load through still built (and now unused): FLY201's make_buffer_tensor case."""

import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from kernels.common import buffer_ops

N = 256


@flyc.kernel
def copy_kernel(A: fx.Tensor, B: fx.Tensor):
    tid = fx.thread_idx.x
    rsrc = buffer_ops.create_buffer_resource(A, max_size=True)
    buf_a = fx.rocdl.make_buffer_tensor(A)
    buf_b = fx.rocdl.make_buffer_tensor(B)
    atom = fx.make_copy_atom(fx.rocdl.BufferCopy32b(), fx.Float32)
    reg = fx.make_rmem_tensor(1, fx.Float32)
    src = fx.slice(fx.logical_divide(buf_a, fx.make_layout(1, 1)), (None, tid))
    dst = fx.slice(fx.logical_divide(buf_b, fx.make_layout(1, 1)), (None, tid))
    fx.copy(atom, src, reg)
    fx.copy(atom, reg, dst)


@flyc.jit
def copy(A: fx.Tensor, B: fx.Tensor, stream: fx.Stream = fx.Stream(None)):
    copy_kernel(A, B).launch(grid=(1, 1, 1), block=(N, 1, 1), stream=stream)


# flydsl: example
def one_block(device):
    a = torch.randn(N, dtype=torch.float32, device=device)
    b = torch.empty(N, dtype=torch.float32, device=device)
    return copy, (a, b)
