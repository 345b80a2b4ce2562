import os

import torch

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl._mlir.dialects import memref, vector
from flydsl._mlir.extras import types as _mT
from flydsl.compiler.kernel_function import CompilationContext
from flydsl.expr import arith, const_expr
from flydsl.expr.gpu import lds_space
from flydsl.expr.typing import T
from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr

THREADS = 64


def default_f8_type():
    """The arch's E4M3 fp8 (FNUZ on gfx94x, OCP elsewhere)."""
    if os.environ.get("FLYDSL_GPU_ARCH", "gfx942").startswith("gfx94"):
        return ir.Float8E4M3FNUZType.get()
    return ir.Float8E4M3FNType.get()


def build(tile_m, tile_k, out_bf16, waves_per_eu, k_wave):
    """A GEMM stage's LDS, as a mixed-precision MoE kernel lays it out: an fp8 X tile in
    ping and pong, the epilogue's output over pong, a token table after it, an f32
    reduction scratch over both, and LDS padded to cap occupancy."""
    allocator_pong = SmemAllocator(None, arch="gfx942", global_sym_name="smem0")
    allocator_ping = SmemAllocator(None, arch="gfx942", global_sym_name="smem1")
    x_bytes = tile_m * tile_k
    out_bytes = tile_m * THREADS * 2
    pong_buffer_bytes = max(x_bytes, out_bytes)
    input_elems = x_bytes if tile_k >= 16 else x_bytes // 2

    def x_lds_elem():
        return default_f8_type()

    lds_pong_offset = allocator_pong._align(allocator_pong.ptr, 16)
    allocator_pong.ptr = lds_pong_offset + pong_buffer_bytes
    lds_tid_offset = allocator_pong._align(allocator_pong.ptr, 4)
    allocator_pong.ptr = lds_tid_offset + tile_m * 4
    lds_ping_offset = allocator_ping._align(allocator_ping.ptr, 16)
    allocator_ping.ptr = lds_ping_offset + x_bytes

    if waves_per_eu is not None and waves_per_eu >= 1:
        min_lds = 160 * 1024 // (waves_per_eu + 1) + 1
        pong_sz = allocator_pong._align(allocator_pong.ptr, 128)
        ping_sz = allocator_ping._align(allocator_ping.ptr, 128)
        if pong_sz + ping_sz < min_lds:
            allocator_ping.ptr += min_lds - (pong_sz + ping_sz)

    @flyc.kernel
    def stage_kernel(X: fx.Tensor, Out: fx.Tensor, OutF: fx.Tensor):
        tx = fx.thread_idx.x
        x_elem = x_lds_elem()
        vec16_x = T.vec(16, x_elem)
        base_ptr_pong = allocator_pong.get_base()
        base_ptr_ping = allocator_ping.get_base()
        lds_x_pong = SmemPtr(base_ptr_pong, lds_pong_offset, x_lds_elem(), shape=(input_elems,)).get()
        lds_x_ping = SmemPtr(base_ptr_ping, lds_ping_offset, x_lds_elem(), shape=(input_elems,)).get()
        out_ty = T.bf16 if out_bf16 else T.f16
        lds_out = SmemPtr(base_ptr_pong, lds_pong_offset, out_ty, shape=(tile_m * THREADS,)).get()
        lds_tid = SmemPtr(base_ptr_pong, lds_tid_offset, T.i32, shape=(tile_m,)).get()
        body_lds_x_pong = lds_x_pong
        body_lds_x_ping = lds_x_ping
        if const_expr(k_wave > 1):
            grp_x_bytes = arith.index(x_bytes // k_wave)
            x_view_ty = _mT.memref(input_elems, x_lds_elem(), memory_space=lds_space())
            pong_off = arith.constant(lds_pong_offset, index=True) + grp_x_bytes
            body_lds_x_pong = memref.view(x_view_ty, base_ptr_pong, pong_off, sizes=[])

        def store_x_tile_to_lds(lds_buffer):
            row = arith.index_cast(T.index, arith.unwrap(fx.Int32((tx % tile_m) * tile_k)))
            g = fx.ptr_load(fx.recast_iter(fx.Uint8, fx.get_iter(X)) + tx * 16, result_type=T.vec(16, T.i8))
            vector.store(vector.bitcast(vec16_x, g.ir_value()), lds_buffer, [row])

        def lds_load_x(lds_buffer):
            at = arith.index_cast(T.index, arith.unwrap(fx.Int32(((tx + 1) % tile_m) * tile_k)))
            loaded = vector.load(vec16_x, lds_buffer, [at])
            return vector.bitcast(T.vec(2, T.i64), loaded)

        store_x_tile_to_lds(body_lds_x_pong)
        store_x_tile_to_lds(body_lds_x_ping)
        if tx < tile_m:
            vector.store(vector.from_elements(T.vec(1, T.i32), [arith.unwrap(fx.Int32(tx * 7))]), lds_tid, [arith.index_cast(T.index, arith.unwrap(fx.Int32(tx)))])
        fx.gpu.barrier()
        a = lds_load_x(body_lds_x_pong)
        b = lds_load_x(body_lds_x_ping)
        s = fx.Vector(a) + fx.Vector(b)
        fx.ptr_store(s, fx.recast_iter(fx.Int64, fx.get_iter(Out)) + tx * 2)
        # k-wave reduction scratch: f32 views of both bases
        scr_ty = _mT.memref(THREADS * 4, _mT.f32(), memory_space=lds_space())
        scr_g = memref.view(scr_ty, base_ptr_pong, arith.constant(lds_pong_offset, index=True), sizes=[])
        scr_u = memref.view(scr_ty, base_ptr_ping, arith.constant(lds_ping_offset, index=True), sizes=[])
        fx.gpu.barrier()
        mine = arith.index_cast(T.index, arith.unwrap(fx.Int32(tx * 4)))
        vector.store(fx.Vector.filled(4, 1.5, fx.Float32).ir_value(), scr_g, [mine], alignment=16)
        vector.store(fx.Vector.filled(4, 2.5, fx.Float32).ir_value(), scr_u, [mine], alignment=16)
        fx.gpu.barrier()
        r = vector.load(T.vec(4, T.f32), scr_g, [mine])
        q = vector.load(T.vec(4, T.f32), scr_u, [mine])
        fx.ptr_store(fx.Vector(r) + fx.Vector(q), fx.recast_iter(fx.Float32, fx.get_iter(OutF)) + tx * 4)
        # the epilogue's output over pong, then the token table
        fx.gpu.barrier()
        one = vector.from_elements(T.vec(1, out_ty), [arith.unwrap(fx.Float32(1.0).to(fx.BFloat16 if out_bf16 else fx.Float16))])
        vector.store(one, lds_out, [arith.index_cast(T.index, arith.unwrap(fx.Int32(tx)))])
        fx.gpu.barrier()
        t = memref.load(lds_tid, [arith.index_cast(T.index, arith.unwrap(fx.Int32(tx % tile_m)))])
        fx.ptr_store(fx.Int32(t), fx.recast_iter(fx.Int32, fx.get_iter(OutF)) + tx)

    @flyc.jit
    def launch(X: fx.Tensor, Out: fx.Tensor, OutF: fx.Tensor, stream: fx.Stream = fx.Stream(None)):
        allocator_pong.finalized = False
        allocator_ping.finalized = False
        ctx = CompilationContext.get_current()
        with ir.InsertionPoint(ctx.gpu_module_body):
            allocator_pong.finalize()
            allocator_ping.finalize()
        stage_kernel(X, Out, OutF).launch(grid=(1, 1, 1), block=(THREADS, 1, 1), stream=stream)

    return launch


def _args(device):
    x = torch.zeros(THREADS * 16, dtype=torch.uint8, device=device)
    out = torch.zeros(THREADS * 2, dtype=torch.int64, device=device)
    out_f = torch.zeros(THREADS * 4, dtype=torch.float32, device=device)
    return (x, out, out_f)


# flydsl: example
def padded(device):
    """waves_per_eu=3 pads ping: LDS 3072 + 51200 - 2048 = ... (occupancy capped)."""
    return build(16, 128, True, 3, 1), _args(device)


# flydsl: example
def unpadded(device):
    return build(32, 128, False, None, 1), _args(device)
