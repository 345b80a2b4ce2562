# SPDX-License-Identifier: Apache-2.0
"""Double-buffered LDS tile reduce with hand-encoded waits and raw scheduling barriers.

Fixture of `flydsl-ls check examples/` for the wait/scheduling rules: hand-encoded
`s_waitcnt` bitfields (FLY401), waitcnt shims left with no use (FLY402) and raw
`sched_barrier` builders (FLY403), each flagged line followed by its rule. A bitfield's
meaning depends on the GPU: run `flydsl-ls check --target-arch gfx942` to get FLY401's
fixes (without an arch it reports them with no fix). The text "rocdl.s_waitcnt(0)" in
this docstring, the comment below and the inline-assembly wait are never findings.
"""

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl._mlir.dialects import llvm
from flydsl._mlir.dialects import rocdl as rocdl_dialect
from flydsl.expr import rocdl

BLOCK_THREADS = 256
TILE = 64
_LGKMCNT_0_ONLY = 0xC07F  # lgkmcnt(0) only, in the CDNA layout
_VMCNT_LO_MASK = 0xF  # FLY402: only the dead _waitcnt_vm_n below uses it (unsafe)


def _encode_waitcnt(vmcnt=63, expcnt=7, lgkmcnt=63):
    """The legacy CDNA encoder: lgkmcnt=63 sets bits 13:12, which FlyDSL never emits."""
    vm_lo = vmcnt & 0xF
    vm_hi = (vmcnt >> 4) & 0x3
    return vm_lo | (expcnt << 4) | (lgkmcnt << 8) | (vm_hi << 14)


def _s_waitcnt(val):
    rocdl.s_waitcnt(val)


def _waitcnt_vm_n(n):  # FLY402: no call left in this file (unsafe: module level)
    rocdl.s_waitcnt((n & _VMCNT_LO_MASK) | 0x3F70)


@fx.struct
class SharedStorage:
    tiles: fx.Array[fx.Float32, 2 * TILE * BLOCK_THREADS, 16]


def build_tile_reduce(num_tiles: int):
    _VMCNT_HI_SHIFT = 14  # FLY402: a dead local constant (safe: nothing else can see it)
    ds_read_group = ir.Attribute.parse("#rocdl<sched_group_mask ds_read>")
    mfma_group = ir.Attribute.parse("#rocdl<sched_group_mask mfma_wmma>")

    @flyc.kernel
    def tile_reduce(src: fx.Tensor, dst: fx.Tensor, traits_lgkm: fx.Constexpr[int]):
        lds = fx.SharedAllocator().allocate(SharedStorage).peek()
        tid = fx.thread_idx.x
        acc = fx.Float32(0.0)
        rocdl.s_waitcnt(0)  # FLY401: vmcnt=0, lgkmcnt=0, expcnt=0 (never narrowed)
        for t in fx.range_constexpr(num_tiles):
            stage = t % 2
            lds.tiles[stage * TILE * BLOCK_THREADS + tid] = src[t * BLOCK_THREADS + tid]
            rocdl.s_waitcnt(_encode_waitcnt(lgkmcnt=0))  # FLY401: lgkmcnt=0 (safe on gfx942)
            rocdl_dialect.sched_group_barrier(ds_read_group, 2, 0)  # FLY403: fx.rocdl wrapper (safe)
            rocdl_dialect.sched_group_barrier(mfma_group, 1, 0)  # FLY403: fx.rocdl wrapper (safe)
            acc = acc + lds.tiles[stage * TILE * BLOCK_THREADS + (tid ^ 1)]
            rocdl.sched_barrier(0)  # modern: the DSL module already reaches the wrapper
        rocdl.s_waitcnt(_encode_waitcnt(vmcnt=0))  # FLY401: 0x3F70 -> vmcnt=0 (unsafe: bits 13:12)
        _s_waitcnt(_LGKMCNT_0_ONLY)  # FLY401: a shim and a magic constant -> lgkmcnt=0
        rocdl.s_waitcnt(traits_lgkm)  # FLY401: a parameter, no fix
        # rocdl.s_waitcnt(0) in a comment is text.
        llvm.InlineAsmOp(None, [], "s_waitcnt vmcnt(0)\n\ts_barrier", "", has_side_effects=True)
        fx.rocdl.s_waitcnt(vmcnt=0, lgkmcnt=0)  # modern keyword form
        dst[tid] = acc

    return tile_reduce
