"""FlyDSL's own kernels (kernels/ at COMMIT) for benchmarks/fix_audit.py.

Each case builds one real kernel configuration with small shapes, the way FlyDSL's tests
(tests/kernels/test_*.py) call the builder, and returns ``(jit_fn, args)`` for a compile-only
``flyc.compile`` on the CPU (tensors on ``device``, which is "cpu"). Imports from the extracted
tree happen inside the case bodies: the extraction root is on sys.path when they run.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = "ROCm/FlyDSL"
MIRROR = "/work/.mirror/ROCm+FlyDSL/repo"  # default, overridable by --mirror
COMMIT = "11c4174d82b7491c2d08d5828a254183f2a8b959"
FLYDSL = "0.5.0"  # the release these kernels are compiled with (the audit venv's)
PATHS = ["kernels"]  # extracted from the commit; the extraction root goes on sys.path
FIX_ROOTS = ["kernels"]  # where flydsl-ls check --fix runs

BOTH = ("gfx942", "gfx950")
GFX950 = ("gfx950",)


def _stream():
    import flydsl.expr as fx

    return fx.Stream(None)


def _t(shape, dtype, device):
    import torch

    return torch.empty(shape, dtype=getattr(torch, dtype) if isinstance(dtype, str) else dtype, device=device)


# -- norms ---------------------------------------------------------------------------------
def layernorm_bf16(device):
    import flydsl.compiler as flyc
    import flydsl.expr as fx

    from kernels.norm.layernorm_kernel import build_layernorm_module

    M, N = 16, 512
    fn = build_layernorm_module(N, "bf16")
    x, g, b, y = _t((M, N), "bfloat16", device), _t((N,), "bfloat16", device), _t((N,), "bfloat16", device), _t((M, N), "bfloat16", device)
    ptr = lambda t: flyc.from_c_void_p(fx.BFloat16, t.data_ptr())  # noqa: E731
    return fn, (ptr(x), ptr(g), ptr(b), ptr(y), M)


def layernorm_f32_tail(device):
    import flydsl.compiler as flyc
    import flydsl.expr as fx

    from kernels.norm.layernorm_kernel import build_layernorm_module

    M, N = 64, 2000
    fn = build_layernorm_module(N, "f32")
    x, g, b, y = _t((M, N), "float32", device), _t((N,), "float32", device), _t((N,), "float32", device), _t((M, N), "float32", device)
    ptr = lambda t: flyc.from_c_void_p(fx.Float32, t.data_ptr())  # noqa: E731
    return fn, (ptr(x), ptr(g), ptr(b), ptr(y), M)


def rmsnorm_bf16(device):
    from kernels.norm.rmsnorm_kernel import build_rmsnorm_module

    M, N = 16, 512
    fn = build_rmsnorm_module(N, "bf16")
    return fn, (_t((M, N), "bfloat16", device), _t((N,), "bfloat16", device), _t((M, N), "bfloat16", device), M)


def rmsnorm_fused_add_dynquant(device):
    from kernels.norm.rmsnorm_kernel import build_fused_add_rmsnorm_dynamicquant_module

    M, N = 16, 1024
    fn = build_fused_add_rmsnorm_dynamicquant_module(N, "bf16")
    x, r, g = _t((M, N), "bfloat16", device), _t((M, N), "bfloat16", device), _t((N,), "bfloat16", device)
    y, r_out, ys = _t((M, N), "int8", device), _t((M, N), "bfloat16", device), _t((M,), "float32", device)
    return fn, (x, r, g, y, r_out, ys, M)


def rmsnorm_bwd_f16(device):
    from kernels.norm.rmsnorm_bwd_kernel import build_rmsnorm_bwd_module

    M, N = 16, 1024
    fn = build_rmsnorm_bwd_module(N, "f16")
    x, w, dy = _t((M, N), "float16", device), _t((N,), "float16", device), _t((M, N), "float16", device)
    rstd, dx, dw = _t((M,), "float32", device), _t((M, N), "float16", device), _t((N,), "float32", device)
    return fn, (x, w, dy, rstd, dx, dw, M)


def softmax_bf16(device):
    from kernels.norm.softmax_kernel import build_softmax_module

    M, N = 32, 1024
    fn = build_softmax_module(M, N, "bf16")
    return fn, (_t((M, N), "bfloat16", device), _t((M, N), "bfloat16", device), M)


def softmax_bwd_f32(device):
    from kernels.norm.softmax_bwd_kernel import build_softmax_bwd_module

    M, N = 32, 1024
    fn = build_softmax_bwd_module(N, "f32")
    return fn, (_t((M, N), "float32", device), _t((M, N), "float32", device), _t((M, N), "float32", device), M)


def topk_gating_softmax(device):
    from kernels.moe.topk_gating_softmax_kernel import build_topk_gating_softmax_module

    tokens, experts, topk = 64, 64, 4
    fn = build_topk_gating_softmax_module(num_experts=experts, topk=topk, dtype_str="bf16", renormalize=True)
    return fn, (
        _t((tokens, experts), "bfloat16", device),
        _t((tokens, topk), "float32", device),
        _t((tokens, topk), "int32", device),
        _t((tokens, topk), "int32", device),
        tokens,
    )


CASES = {
    "norm/layernorm_kernel.py::bf16_16x512": (layernorm_bf16, BOTH),
    "norm/layernorm_kernel.py::f32_64x2000": (layernorm_f32_tail, BOTH),
    "norm/rmsnorm_kernel.py::bf16_16x512": (rmsnorm_bf16, BOTH),
    "norm/rmsnorm_kernel.py::fused_add_dynquant_bf16": (rmsnorm_fused_add_dynquant, BOTH),
    "norm/rmsnorm_bwd_kernel.py::f16_16x1024": (rmsnorm_bwd_f16, BOTH),
    "norm/softmax_kernel.py::bf16_32x1024": (softmax_bf16, BOTH),
    "norm/softmax_bwd_kernel.py::f32_32x1024": (softmax_bwd_f32, BOTH),
    "moe/topk_gating_softmax_kernel.py::e64_top4_bf16": (topk_gating_softmax, BOTH),
}


# -- GEMMs ---------------------------------------------------------------------------------
def _as_i8(t):
    import torch

    return t.view(torch.int8) if "float8" in str(t.dtype) else t


def preshuffle_gemm(in_dtype, M=32, N=1024, K=2048, tile=(32, 64, 512), use_async_copy=False, epilogue="none"):
    def case(device):
        import torch

        from kernels.gemm.preshuffle_gemm import compile_preshuffle_gemm

        tile_m, tile_n, tile_k = tile
        fn = compile_preshuffle_gemm(
            N=N, K=K, tile_m=tile_m, tile_n=tile_n, tile_k=tile_k, in_dtype=in_dtype, out_dtype="bf16",
            use_async_copy=use_async_copy, epilogue=epilogue,
        )
        if in_dtype in ("fp16", "bf16"):
            dt = torch.float16 if in_dtype == "fp16" else torch.bfloat16
            a, b = _t((M, K), dt, device), _t((N, K), dt, device)
            sa, sb = _t((0,), "float32", device), _t((0,), "float32", device)
        else:
            dt = torch.int8
            a, b = _t((M, K), dt, device), _t((N, K), dt, device)
            sa, sb = _t((M,), "float32", device), _t((N,), "float32", device)
        c = _t((M, N), "bfloat16", device)
        bias = _t((N if epilogue.startswith("bias") else 0,), "bfloat16", device)
        return fn, (c.view(-1), a.view(-1), b.view(-1), sa, sb, bias, M, N, _stream())

    return case


def fp8_gemm_4wave(device):
    import flydsl.compiler as flyc

    from kernels.gemm.fp8_gemm_4wave import compile_fp8_gemm_4w

    M, N, K = 256, 256, 1024
    fn = compile_fp8_gemm_4w(K=K, BLOCK_M=64, BLOCK_N=64, use_xcd_remap=True, b_preshuffled=True)
    a, b, c = _t((M * K,), "int8", device), _t((N * K,), "int8", device), _t((M * N,), "bfloat16", device)
    sa, sb = _t((M,), "float32", device), _t((N,), "float32", device)
    return fn, (a, flyc.from_torch_tensor(b), c, flyc.from_torch_tensor(sa), flyc.from_torch_tensor(sb), M, N, _stream())


def fp8_gemm_8wave(device):
    import flydsl.compiler as flyc

    from kernels.gemm.fp8_gemm_8wave import compile_fp8_gemm_8w

    M, N, K = 256, 256, 1024
    fn = compile_fp8_gemm_8w(K=K, BLOCK_M=128, BLOCK_N=256, b_preshuffled=False)
    a, b, c = _t((M * K,), "int8", device), _t((N * K,), "int8", device), _t((M * N,), "bfloat16", device)
    sa, sb = _t((M,), "float32", device), _t((N,), "float32", device)
    return fn, (a, flyc.from_torch_tensor(b), c, flyc.from_torch_tensor(sa), flyc.from_torch_tensor(sb), M, N, _stream())


def fp4_gemm_4wave(device):
    from kernels.gemm.fp4_gemm_4wave import compile_fp4_gemm_4w

    M, N, K = 256, 256, 512
    fn = compile_fp4_gemm_4w(K=K, MN=(M, N))
    a, b = _t((M * K // 2,), "uint8", device), _t((N * K // 2,), "uint8", device)
    c = _t((M * N,), "bfloat16", device)
    sa, sb = _t((M * K // 32,), "uint8", device), _t((N * K // 32,), "uint8", device)
    return fn, (a, b, c, sa, sb, M, N, _stream())


def gemm_a16w16(use_hti=True, split_k=1):
    def case(device):
        import torch

        import flydsl.compiler as flyc

        from kernels.gemm.gemm_a16w16_gfx950 import (
            GEMM_A16W16_DTYPE_BF16,
            gemm_a16w16_gfx950,
            get_split_k_buffers,
            make_gemm_a16w16_param_and_validate,
        )

        m, n, k = 256, 256, 512
        a, b = _t((m, k), "bfloat16", device), _t((k, n), "bfloat16", device)
        out = _t((m, n), "bfloat16", device)
        kwargs = {
            "block_m": 256, "block_n": 256, "block_k": 64, "stages": 2, "split_k": split_k, "m_waves": 2,
            "n_waves": 4, "k_waves": 1, "group_m": 0, "use_half_tile_interleaved": use_hti,
            "a_is_transposed": False, "b_is_transposed": False,
            "in_dtype_id": GEMM_A16W16_DTYPE_BF16, "out_dtype_id": GEMM_A16W16_DTYPE_BF16, "has_bias": False,
        }
        param = make_gemm_a16w16_param_and_validate(m, n, k, kwargs)
        assert param is not None, "unsupported gemm_a16w16 config"
        semaphore, signal = get_split_k_buffers(None, device)
        dyn = lambda t, d: flyc.from_dlpack(t).mark_layout_dynamic(leading_dim=d)  # noqa: E731
        a_arg, b_arg, out_arg = dyn(a, 1), dyn(b, 1), dyn(out, 1)
        del torch
        return gemm_a16w16_gfx950, (out_arg, a_arg, b_arg, a_arg, semaphore, signal, split_k, param)

    return case


def mxfp4_preshuffle(a_dtype="fp4", b_dtype="fp4"):
    def case(device):
        import flydsl.compiler as flyc
        import flydsl.expr as fx

        from kernels.gemm.mxfp4_preshuffle import launch_gemm

        M, N, K, tile_m, tile_n, tile_k = 64, 1024, 1024, 64, 128, 128
        ptr = lambda t: flyc.from_c_void_p(fx.Uint8, t.data_ptr())  # noqa: E731
        a = _t((M * K,), "uint8", device)
        b = _t((N * K,), "uint8", device)
        sa, sb = _t((M * K // 32,), "uint8", device), _t((N * K // 32,), "uint8", device)
        c = _t((M * N,), "bfloat16", device)
        args = (ptr(c), ptr(a), ptr(b), ptr(sa), ptr(sb), M, N, fx.Stream(None), N, K, tile_m, tile_n, tile_k,
                a_dtype, "bf16", b_dtype, 1, -1, -1, -1, -1, -1, -1, 0, 0)
        return launch_gemm, args

    return case


CASES.update({
    "gemm/preshuffle_gemm.py::fp8_32x1024x2048": (preshuffle_gemm("fp8"), BOTH),
    "gemm/preshuffle_gemm.py::bf16_32x1024x2048": (preshuffle_gemm("bf16"), BOTH),
    # the ReLU epilogue: its `.maximumf` (FLY901 -> `fx.max`)
    "gemm/preshuffle_gemm.py::fp8_bias_relu": (preshuffle_gemm("fp8", epilogue="bias_relu"), BOTH),
    "gemm/preshuffle_gemm.py::int8_async_copy": (preshuffle_gemm("int8", use_async_copy=True), GFX950),
    # 16 B loads per thread (tile_n * tile_k * 2 / 4096): the raw s_waitcnt(16) carries into expcnt
    "gemm/preshuffle_gemm.py::bf16_async_copy_16_loads": (preshuffle_gemm("bf16", use_async_copy=True), GFX950),
    "gemm/preshuffle_gemm.py::bf16_bias_relu": (preshuffle_gemm("bf16", epilogue="bias_relu"), BOTH),
    "gemm/fp8_gemm_4wave.py::256x256x1024_preshuffled": (fp8_gemm_4wave, GFX950),
    "gemm/fp8_gemm_8wave.py::256x256x1024": (fp8_gemm_8wave, GFX950),
    "gemm/fp4_gemm_4wave.py::256x256x512": (fp4_gemm_4wave, GFX950),
    "gemm/gemm_a16w16_gfx950.py::bf16_hti_256": (gemm_a16w16(True), GFX950),
    "gemm/gemm_a16w16_gfx950.py::bf16_splitk2": (gemm_a16w16(False, 2), GFX950),
    "gemm/mxfp4_preshuffle.py::fp4_64x1024x1024": (mxfp4_preshuffle("fp4"), GFX950),
    "gemm/mxfp4_preshuffle.py::fp8_a8w8": (mxfp4_preshuffle("fp8", "fp8"), GFX950),
})


# -- MoE -----------------------------------------------------------------------------------
def _fp8_dtype():
    import os

    import torch

    return torch.float8_e4m3fn if os.environ.get("ARCH", "").startswith("gfx95") else torch.float8_e4m3fnuz


def _routing(tokens, experts, topk, tile_m, device):
    padded = tokens * topk + experts * tile_m - topk
    blocks = (padded + tile_m - 1) // tile_m
    ids, weights = _t((padded,), "int32", device), _t((padded,), "float32", device)
    eids, nvalid = _t((blocks,), "int32", device), _t((1,), "int32", device)
    return ids, weights, eids, nvalid, blocks


def moe_gemm_2stage(stage, in_dtype, tile_m=64, tokens=128):
    def case(device):
        import torch

        from kernels.moe.moe_gemm_2stage import compile_moe_gemm1, compile_moe_gemm2

        model_dim, inter_dim, experts, topk = 256, 128, 4, 2
        ids, weights, eids, nvalid, blocks = _routing(tokens, experts, topk, tile_m, device)
        qd = {"fp8": _fp8_dtype(), "int8": torch.int8, "int4": torch.int8}[in_dtype]
        packed = 2 if in_dtype == "int4" else 1
        if stage == 1:
            exe = compile_moe_gemm1(
                model_dim=model_dim, inter_dim=inter_dim, experts=experts, topk=topk, tile_m=tile_m, tile_n=64,
                tile_k=128, doweight_stage1=False, out_dtype="bf16", in_dtype=in_dtype,
            )
            out = _t((tokens, topk, inter_dim), "bfloat16", device)
            x = _t((tokens * model_dim,), qd, device)
            w = _t((experts * 2 * inter_dim * model_dim // packed,), qd, device)
            sx, sw = _t((tokens,), "float32", device), _t((experts * 2 * inter_dim,), "float32", device)
            dims = (inter_dim, model_dim)
        else:
            exe = compile_moe_gemm2(
                model_dim=model_dim, inter_dim=inter_dim, experts=experts, topk=topk, tile_m=tile_m, tile_n=64,
                tile_k=128, doweight_stage2=True, out_dtype="bf16", accumulate=True, in_dtype=in_dtype,
            )
            out = _t((tokens, model_dim), "bfloat16", device)
            x = _t((tokens * topk * inter_dim,), qd, device)
            w = _t((experts * model_dim * inter_dim // packed,), qd, device)
            sx, sw = _t((tokens * topk,), "float32", device), _t((experts * model_dim,), "float32", device)
            dims = (model_dim, inter_dim)
        return exe, (out, x, w, sx, sw, ids, eids, weights, nvalid, tokens, dims[0], dims[1], int(blocks), _stream())

    return case


def mxfp_moe_gemm1(BM=32, use_nt=False, a_dtype="fp4"):
    def case(device):
        import flydsl.expr as fx

        from kernels.moe.mxfp_moe.gemm1 import compile_gemm1_a4w4_port, gemm1_grid

        D_HIDDEN, D_INTER, NE, TOPK, n_tokens = 512, 256, 4, 2, 16
        launch = compile_gemm1_a4w4_port(
            BM, use_nt, False, D_HIDDEN=D_HIDDEN, D_INTER=D_INTER, NE=NE, TOPK=TOPK, BN=256, BK=256,
            interleave=False, xcd_swizzle=0, a_dtype=a_dtype,
        )
        grid = gemm1_grid(n_tokens, BM, NE=NE, TOPK=TOPK, INTER=D_INTER, BN=256)
        buf = _t((64,), "uint8", device).data_ptr()
        return launch, (buf, buf, buf, buf, buf, buf, buf, n_tokens, int(grid), buf, buf, buf, fx.Stream(None))

    return case


def mxfp_moe_gemm2(BM=32, use_nt=False, epilog="atomic"):
    def case(device):
        import flydsl.expr as fx

        from kernels.moe.mxfp_moe.gemm2 import compile_gemm2_a4w4_port

        D_HIDDEN, D_INTER, NE = 512, 256, 4
        launch = compile_gemm2_a4w4_port(
            BM=BM, use_nt=use_nt, NE=NE, N_OUT=D_HIDDEN, epilog=epilog, D_INTER=D_INTER, D_INTER_REAL=None, BN=256,
            BK=256, xcd_swizzle=0,
        )
        buf = _t((64,), "uint8", device).data_ptr()
        max_sorted = 16 * 2 + NE * BM
        return launch, (buf, buf, buf, buf, buf, buf, buf, buf, 16, (max_sorted + BM - 1) // BM, buf, buf, fx.Stream(None))

    return case


def a16wmix_gemm1(w_dtype="mxfp4", BM=32, TILE_N=128):
    def case(device):
        import flydsl.expr as fx

        from kernels.moe.moe_2stage_a16wmix.gemm1 import compile_gemm1_a16w4_port, gemm1_a16w4_grid

        D_HIDDEN, D_INTER, NE, TOPK, n_tokens = 512, 256, 4, 2, 16
        launch = compile_gemm1_a16w4_port(
            BM=BM, D_HIDDEN=D_HIDDEN, D_INTER=D_INTER, NE=NE, TOPK=TOPK, TILE_N=TILE_N, TILE_K=256, act="silu",
            b_cache_mod=2, xcd_swizzle=0, waves_per_eu=None, w_dtype=w_dtype, w_layout="standard", k_wave=1,
        )
        grid = gemm1_a16w4_grid(BM, INTER=D_INTER, TILE_N=TILE_N, max_m_blocks=8)
        buf = _t((64,), "uint8", device).data_ptr()
        return launch, (buf, buf, buf, buf, buf, buf, n_tokens, int(grid), 1.0, 1.0, 1.0, 1.0, float("inf"), buf,
                        fx.Stream(None))

    return case


def a16wmix_gemm2(w_dtype="mxfp4", BM=32, TILE_N=128):
    def case(device):
        import inspect

        import flydsl.expr as fx

        from kernels.moe.moe_2stage_a16wmix.gemm2 import compile_gemm2_a16w4_port

        D_HIDDEN, D_INTER, NE = 512, 256, 4
        launch = compile_gemm2_a16w4_port(
            BM=BM, NE=NE, N_OUT=D_HIDDEN, D_INTER=D_INTER, TILE_N=TILE_N, TILE_K=256, b_cache_mod=2, xcd_swizzle=1,
            waves_per_eu=None, w_dtype=w_dtype, persist=False,
        )
        fn = getattr(launch, "func", None) or getattr(launch, "_func", None) or launch
        params = list(inspect.signature(fn).parameters.values())
        buf = _t((64,), "uint8", device).data_ptr()
        args = []
        for p in params:
            ann = str(p.annotation)
            if "Stream" in ann:
                args.append(fx.Stream(None))
            elif "Int32" in ann:
                args.append(8)
            elif "Float32" in ann:
                args.append(1.0)
            else:
                args.append(buf)
        return launch, tuple(args)

    return case


def _sorting_buffers(tokens, experts, topk, device):
    padded = tokens * topk + experts * 16
    return dict(
        topk_ids=_t((tokens, topk), "int32", device), topk_weights=_t((tokens, topk), "float32", device),
        sorted_ids=_t((padded,), "int32", device), sorted_weights=_t((padded,), "float32", device),
        sorted_eids=_t((padded,), "int32", device), num_valid=_t((2,), "int32", device),
        moe_buf=_t((tokens * 64,), "int32", device), mask=_t((1,), "int32", device),
    )


def moe_sorting_oneshot(device):
    from kernels.moe.moe_sorting_kernel import compile_moe_sorting

    tokens, experts, topk = 16, 8, 2
    launch_oneshot, _, _ = compile_moe_sorting(num_experts=experts, topk=topk, max_tokens=16)
    b = _sorting_buffers(tokens, experts, topk, device)
    return launch_oneshot, (
        b["topk_ids"], b["topk_weights"], b["sorted_ids"], b["sorted_weights"], b["sorted_eids"], b["num_valid"],
        b["moe_buf"], b["mask"], tokens, b["moe_buf"].numel(), 5,
    )


def moe_sorting_multiphase(device):
    from kernels.moe.moe_sorting_kernel import compile_moe_sorting

    tokens, experts, topk, unit = 512, 8, 2, 32
    _, launch_p0v2_p23, _ = compile_moe_sorting(num_experts=experts, topk=topk, unit_size=unit)
    b = _sorting_buffers(tokens, experts, topk, device)
    mesh_stride = ((tokens + unit - 1) // unit) * unit
    ws_mesh_i32 = (experts * mesh_stride + 3) // 4
    workspace = _t((ws_mesh_i32 + experts + 1,), "int32", device)
    return launch_p0v2_p23, (
        b["topk_ids"], workspace, b["topk_weights"], b["sorted_ids"], b["sorted_weights"], b["sorted_eids"],
        b["num_valid"], b["moe_buf"], b["mask"], tokens, mesh_stride, ws_mesh_i32, b["moe_buf"].numel(), experts + 4,
    )


def moe_sorting_oneshot_fused(device):
    """Gating's body (topk_gating_softmax_kernel.py) with its winner callbacks into LDS."""
    from kernels.moe.moe_sorting_kernel import compile_moe_sorting_oneshot_fused

    tokens, experts, topk = 16, 64, 4
    launch = compile_moe_sorting_oneshot_fused(num_experts=experts, topk=topk, dtype_str="bf16", max_tokens=16)
    b = _sorting_buffers(tokens, experts, topk, device)
    return launch, (
        _t((tokens, experts), "bfloat16", device), b["sorted_ids"], b["sorted_weights"], b["sorted_eids"],
        b["num_valid"], b["moe_buf"], b["mask"], tokens, b["moe_buf"].numel(), 5,
    )


CASES.update({
    "moe/moe_gemm_2stage::gemm1_fp8_m64": (moe_gemm_2stage(1, "fp8"), BOTH),
    "moe/moe_gemm_2stage::gemm1_int4_m16": (moe_gemm_2stage(1, "int4", tile_m=16, tokens=8), BOTH),
    "moe/moe_gemm_2stage::gemm2_int8_m64": (moe_gemm_2stage(2, "int8"), BOTH),
    "moe/mxfp_moe::gemm1_a4w4_bm32": (mxfp_moe_gemm1(32, False, "fp4"), GFX950),
    "moe/mxfp_moe::gemm1_a8w4_bm64": (mxfp_moe_gemm1(64, False, "fp8"), GFX950),
    "moe/mxfp_moe::gemm2_atomic_bm32": (mxfp_moe_gemm2(32, False, "atomic"), GFX950),
    "moe/moe_2stage_a16wmix::gemm1_mxfp4": (a16wmix_gemm1("mxfp4"), GFX950),
    "moe/moe_2stage_a16wmix::gemm2_mxfp4": (a16wmix_gemm2("mxfp4"), GFX950),
    "moe/moe_sorting_kernel.py::oneshot_e8_top2": (moe_sorting_oneshot, BOTH),
    "moe/moe_sorting_kernel.py::multiphase_e8_top2": (moe_sorting_multiphase, BOTH),
    "moe/moe_sorting_kernel.py::oneshot_fused_e64_top4_bf16": (moe_sorting_oneshot_fused, BOTH),
})


# -- attention -----------------------------------------------------------------------------
def _bind(jit_fn, *args, **kwargs):
    """(jit_fn, every parameter's value in order): keyword and default arguments made positional."""
    import inspect

    fn = getattr(jit_fn, "func", jit_fn)
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    return jit_fn, tuple(bound.arguments.values())


class _Captured(Exception):
    pass


def _capture(call):
    """Run ``call()`` (a builder's own launch/compile wrapper) until it reaches ``flyc.compile`` or
    a top-level @flyc.jit call; return that (jit_fn, positional args), with the compile hints the
    wrapper had active folded into the jit function. Nothing is compiled or launched here."""
    from flydsl._mlir import ir
    from flydsl.compiler import jit_function as jf
    from flydsl.compiler.kernel_function import CompilationContext

    def grab(func, args, kwargs):
        hints = dict(CompilationContext.get_compile_hints())
        raise _Captured(func, args, kwargs, hints)

    original_compile, original_call = jf._compile_impl, jf.JitFunction.__call__

    def fake_call(self, *args, **kwargs):
        if ir.Context.current is not None:
            return original_call(self, *args, **kwargs)
        grab(self, args, kwargs)

    jf._compile_impl = lambda func, *args, **kwargs: grab(func, args, kwargs)
    jf.JitFunction.__call__ = fake_call
    try:
        call()
    except _Captured as got:
        func, args, kwargs, hints = got.args
    else:
        raise RuntimeError("the wrapper never reached flyc.compile or a @flyc.jit call")
    finally:
        jf._compile_impl, jf.JitFunction.__call__ = original_compile, original_call
    if hints:
        import flydsl.compiler as flyc

        func = flyc.compile[hints](func)
    return _bind(func, *args, **kwargs)


def flash_attn_dense(kind, causal=True, D=128, dtype="bf16"):
    def case(device):
        from kernels.attention import flash_attn_interface as fai

        B, S, H, H_KV = 1, 256, 8, 8
        tdt = {"bf16": "bfloat16", "f16": "float16"}[dtype]
        q, k, v, o = (_t((B, S, H if i in (0, 3) else H_KV, D), tdt, device) for i in range(4))
        if kind == "generic":
            exe = fai._build_dense(H, H_KV, D, causal, dtype, False, 128, 256, "auto", 2, True)
        else:
            exe = fai._build_dense_dualwave(H, H_KV, D, causal, dtype, False, 2, True, True, True, False, True)
        return _capture(lambda: exe.compile(q, k, v, o, B, S))

    return case


def flash_attn_fp8(device):
    import torch

    from kernels.attention import flash_attn_interface as fai

    B, S, H, D = 1, 256, 8, 128
    exe = fai._build_dense_fp8(H, H, True, 2, True, True, True, True)
    q, k, v = (_t((B * S * H * D,), torch.float8_e4m3fn, device) for _ in range(3))
    o = _t((B * S * H * D,), "bfloat16", device)
    one = _t((1,), "float32", device)
    return _capture(lambda: exe.compile(q, k, v, o, B, S, q_descale=one, k_descale=one, v_descale=one))


def swa_gqa(device):
    from kernels.attention.swa_gfx950 import build_gqa_attn

    B, N, H, H_KV, D = 1, 512, 32, 16, 128
    wrapper = build_gqa_attn(ATTN_B=B, ATTN_H=H, ATTN_H_KV=H_KV, ATTN_D=D, sliding_window=(128, 0))
    q, o = _t((B * N * H * D,), "bfloat16", device), _t((B * N * H * D,), "bfloat16", device)
    k, v = _t((B * N * H_KV * D,), "bfloat16", device), _t((B * N * H_KV * D,), "bfloat16", device)
    return _capture(lambda: wrapper.compile(q, k, v, o, H * D, H_KV * D, H_KV * D, H * D, N, N))


CASES.update({
    "attention/flash_attn_generic.py::dense_causal_bf16_d128": (flash_attn_dense("generic"), BOTH),
    "attention/flash_attn_gfx950.py::dualwave_causal_bf16_d128": (flash_attn_dense("dualwave"), GFX950),
    "attention/flash_attn_fp8_gfx950.py::dense_fp8_d128": (flash_attn_fp8, GFX950),
    "attention/swa_gfx950.py::gqa_swa_128_0": (swa_gqa, GFX950),
})


def fused_rope_cache(flash_layout=True, apply_scale=False, D=64):
    """D=64: one element per thread; D=256: four (the fp8 path packs words)."""
    def case(device):
        from kernels.attention.fused_rope_cache_kernel import build_fused_rope_cache_module

        T, Hq, Hkv, bs, max_pos, blocks = 32, 8, 1, 16, 256, 8
        launch = build_fused_rope_cache_module(
            head_dim=D, num_q_heads=Hq, num_kv_heads=Hkv, block_size=bs, is_neox=True, flash_layout=flash_layout,
            dtype_str="bf16", apply_scale=apply_scale, reuse_freqs_front_part=True, pos_dtype="i32",
        )
        q, k, v = _t((T, Hq, D), "bfloat16", device), _t((T, Hkv, D), "bfloat16", device), _t((T, Hkv, D), "bfloat16", device)
        cos, sin = _t((max_pos, D // 2), "bfloat16", device), _t((max_pos, D // 2), "bfloat16", device)
        pos, slots = _t((T,), "int32", device), _t((T,), "int32", device)
        if flash_layout:
            kc, vc = _t((blocks, bs, Hkv, D), "bfloat16", device), _t((blocks, bs, Hkv, D), "bfloat16", device)
        else:
            kc, vc = _t((blocks, Hkv, D // 8, bs, 8), "bfloat16", device), _t((blocks, Hkv, D, bs), "bfloat16", device)
        if apply_scale:
            kc, vc = kc.to(_fp8_dtype()), vc.to(_fp8_dtype())
        ks, vs = _t((1,), "float32", device), _t((1,), "float32", device)
        qo, ko = _t((T, Hq, D), "bfloat16", device), _t((T, Hkv, D), "bfloat16", device)
        return _capture(lambda: launch(q, k, v, pos, cos, sin, slots, kc, vc, qo, ko, T, ks, vs))

    return case


def qk_norm_rope_quant(quant=True, scale_dtype="fp32", q_weighted=False):
    """Each configuration of the builder's flags: the FLY301 boundary that broke e8m0 scales
    sits on one of them. Q in/out and KV out go to `GTensor`, which takes their memref: tensors."""
    def case(device):
        import flydsl.compiler as flyc
        import flydsl.expr as fx

        from kernels.attention.qk_norm_rope_quant import compile_flydsl_qk_norm_rope_quant

        T, H, D, RD, G = 16, 8, 512, 64, 128
        launcher = compile_flydsl_qk_norm_rope_quant(
            num_q_heads=H, head_dim=D, rope_head_dim=RD, quant=quant, group_size=G, scale_dtype=scale_dtype,
            q_weighted=q_weighted,
        )
        ptr = lambda t: flyc.from_c_void_p(fx.Uint8, t.data_ptr())  # noqa: E731
        q, kv, w = _t((T, H, D), "bfloat16", device), _t((T, D), "bfloat16", device), _t((D,), "bfloat16", device)
        cos, sin = _t((256, RD // 2), "bfloat16", device), _t((256, RD // 2), "bfloat16", device)
        pos = _t((T,), "int64", device)
        qo, kvo = _t((T, H, D), "uint8", device), _t((T, D), "uint8", device)
        qs, kvs = _t((T, H, D // G), "float32", device), _t((T, D // G), "float32", device)
        st = flyc.from_torch_tensor
        return _bind(launcher, st(q), ptr(kv), st(w), st(w), st(cos), st(sin), ptr(pos), st(qo), st(kvo), ptr(qs),
                     ptr(kvs), D, T, stream=_stream())

    return case


CASES.update({
    "attention/fused_rope_cache_kernel.py::flash_bf16": (fused_rope_cache(True, False), BOTH),
    "attention/fused_rope_cache_kernel.py::nonflash_fp8cache": (fused_rope_cache(False, True), BOTH),
    "attention/fused_rope_cache_kernel.py::nonflash_bf16": (fused_rope_cache(False, False), BOTH),
    "attention/fused_rope_cache_kernel.py::flash_fp8cache_d256": (fused_rope_cache(True, True, 256), BOTH),
    "attention/fused_rope_cache_kernel.py::nonflash_fp8cache_d256": (fused_rope_cache(False, True, 256), BOTH),
    "attention/qk_norm_rope_quant.py::quant_fp32scale": (qk_norm_rope_quant(True), BOTH),
    "attention/qk_norm_rope_quant.py::quant_e8m0scale": (qk_norm_rope_quant(True, "e8m0"), BOTH),
    "attention/qk_norm_rope_quant.py::bf16": (qk_norm_rope_quant(False), BOTH),
    "attention/qk_norm_rope_quant.py::bf16_q_weighted": (qk_norm_rope_quant(False, q_weighted=True), BOTH),
})


def _by_annotation(jit_fn, device, ints=16):
    """(jit_fn, args) with one placeholder per parameter, chosen by its annotation: a stream, a
    raw device address (fx.Int64), a small int, a float, or a small tensor."""
    import inspect

    import flydsl.expr as fx

    fn = getattr(jit_fn, "func", jit_fn)
    buf = _t((1024,), "int32", device)
    args = []
    for p in inspect.signature(fn).parameters.values():
        ann = str(p.annotation)
        if "Stream" in ann:
            args.append(fx.Stream(None))
        elif "Int64" in ann:
            args.append(buf.data_ptr())
        elif "Float" in ann:
            args.append(1.0)
        elif "Tensor" in ann:
            args.append(buf)
        else:
            args.append(ints)
    return jit_fn, tuple(args)


def pa_decode_tile(block_size=16, num_partitions=1):
    def case(device):
        from kernels.attention.pa_decode_tile import pa_decode_tile as run

        seqs, q_heads, kv_heads, D, blocks, max_blocks = 2, 8, 1, 128, 16, 8
        fp8 = _fp8_dtype()
        out, q = _t((seqs, q_heads, D), "bfloat16", device), _t((seqs, q_heads, D), "bfloat16", device)
        kc = _t((blocks, kv_heads, D // 16, block_size, 16), fp8, device)
        vc = _t((blocks, kv_heads, block_size // 16, D, 16), fp8, device)
        bt, cl = _t((seqs, max_blocks), "int32", device), _t((seqs,), "int32", device)
        return _capture(lambda: run(out, q, kc, vc, bt, cl, 1.0, 1.0, stream=_stream(), num_partitions=num_partitions))

    return case


def pa_decode_sw(device):
    from kernels.attention.pa_decode_swa import compile_pa_decode_sw

    compiled = compile_pa_decode_sw(
        sliding_window=512, max_context_partition_num=4, trans_v=True, query_group_size=8, query_length=1,
        query_input_dtype="bf16", head_dim=128,
    )
    return _by_annotation(compiled["launch"], device)


def pa_decode_sw_reduce(device):
    from kernels.attention.pa_decode_swa import compile_pa_decode_sw_reduce

    compiled = compile_pa_decode_sw_reduce(
        max_context_partition_num=4, query_seq_len=1, query_group_size=8, head_size=128, output_dtype_str="bf16",
    )
    return _by_annotation(compiled["launch"], device)


def pa_decode_metadata(device):
    from kernels.attention.pa_metadata import compile_pa_decode_metadata

    compiled = compile_pa_decode_metadata(trans_v=True, query_group_size=8, head_dim=128, block_size=1024)
    return _by_annotation(compiled["launch"], device)


def mla_decode_fp8(device):
    import os

    from kernels.attention.mla_fwd_decode import _get_lds_size_per_cu  # noqa: F401 - the dispatcher, for the import closure
    from kernels.attention.mla_fwd_decode_m16x8_fp8_fp8 import (
        OCCUPANCY,
        QK_HEAD_DIM,
        V_HEAD_DIM,
        launch_mla_fwd_decode_m16x8_fp8_fp8,
    )

    seqs, heads, pages, partial = 2, 128, 64, 8
    fp8 = _fp8_dtype()
    lds = (160 if os.environ.get("ARCH", "").startswith("gfx95") else 64) * 1024 // OCCUPANCY
    q, kv = _t((seqs * heads, QK_HEAD_DIM), fp8, device), _t((pages, QK_HEAD_DIM), fp8, device)
    idx, indptr, info = _t((pages,), "int32", device), _t((81,), "int32", device), _t((80 * 8,), "int32", device)
    fo, so = _t((seqs * heads, V_HEAD_DIM), "bfloat16", device), _t((partial * heads, V_HEAD_DIM), "float32", device)
    sl = _t((partial * heads,), "float32", device)
    return _bind(launch_mla_fwd_decode_m16x8_fp8_fp8, q, kv, idx, indptr, info, fo, so, sl, 0.04, 80, lds)


def custom_all_reduce(which):
    def case(device):
        from kernels.comm.custom_all_reduce_kernel import make_allreduce_kernels

        fns = make_allreduce_kernels(N=8192, dtype_str="f16", world_size=8, threads=512)
        return _by_annotation(fns[which], device, ints=1)

    return case


def conv3d_bf16(device):
    from kernels.conv.conv3d_implicit import _prep_weight, compile_conv3d_implicit

    n, c, d, h, w, k = 1, 64, 4, 8, 8, 64
    exe = compile_conv3d_implicit(n, c, d, h, w, k, 3, 3, 3, 1, 1, 1, 1, 1, 1, False, 1)
    weight = _t((k, c, 3, 3, 3), "bfloat16", device)
    y, x = _t((n, k, d, h, w), "bfloat16", device), _t((n, d, h, w, c), "bfloat16", device)
    return exe, (y, x, _prep_weight(weight, k, 3, 3, 3, c), _t((1,), "float32", device), _stream())


def conv3d_transpose_bf16(device):
    from kernels.conv.conv3d_implicit import compile_transpose_ncdhw_ndhwc

    n, c, s = 1, 64, 256
    exe = compile_transpose_ncdhw_ndhwc(n, c, s)
    return exe, (_t((n, s, c), "bfloat16", device), _t((n, c, s), "bfloat16", device), _stream())


def conv3d_fp8(device):
    import flydsl.compiler as flyc

    from kernels.conv.conv3d_implicit_fp8 import compile_conv3d_implicit_fp8

    n, c, d, h, w, k = 1, 64, 4, 8, 8, 128
    exe = compile_conv3d_implicit_fp8(n, c, d, h, w, k, 3, 3, 3, 1, 1, 1, 1, 1, 1, False, 1)
    crs = max(256, (c * 27 + 127) // 128 * 128)
    st = flyc.from_torch_tensor
    y = _t((n * k * d * h * w,), "bfloat16", device)
    x, wt = _t((n * d * h * w * c,), "int8", device), _t((k * crs,), "int8", device)
    return exe, (st(y), st(x), st(wt), st(_t((1,), "float32", device)), _stream())


CASES.update({
    "attention/pa_decode_tile.py::bs16_np1": (pa_decode_tile(16, 1), BOTH),
    "attention/pa_decode_swa.py::sw512_np4": (pa_decode_sw, BOTH),
    "attention/pa_decode_swa.py::reduce_np4": (pa_decode_sw_reduce, BOTH),
    "attention/pa_metadata.py::decode_metadata_bs1024": (pa_decode_metadata, BOTH),
    "attention/mla_fwd_decode_m16x8_fp8_fp8.py::h128": (mla_decode_fp8, BOTH),
    "comm/custom_all_reduce_kernel.py::1stage_f16_ws8": (custom_all_reduce("run_1stage_arr"), BOTH),
    "comm/custom_all_reduce_kernel.py::2stage_f16_ws8": (custom_all_reduce("run_2stage_arr"), BOTH),
    "conv/conv3d_implicit.py::bf16_3x3x3": (conv3d_bf16, BOTH),
    "conv/conv3d_implicit.py::transpose_bf16": (conv3d_transpose_bf16, BOTH),
    "conv/conv3d_implicit_fp8.py::fp8_3x3x3": (conv3d_fp8, GFX950),
})


# -- intranode expert-parallel dispatch/combine (mori shmem waits stubbed) -------------------
# Loaded by path, as the tables are: the builders both tables share.
_EP_SPEC = importlib.util.spec_from_file_location("_audit_shared_ep", Path(__file__).with_name("_shared_ep.py"))
_EP = importlib.util.module_from_spec(_EP_SPEC)
_EP_SPEC.loader.exec_module(_EP)


def ep_dispatch(device):
    _EP.mori_stub()
    from kernels.comm.flydsl_dispatch_combine_intranode_kernel import make_dispatch_jit

    return _EP.ep_dispatch(make_dispatch_jit)


def ep_combine(device):
    _EP.mori_stub()
    from kernels.comm.flydsl_dispatch_combine_intranode_kernel import make_combine_jit

    return _EP.ep_combine(make_combine_jit)


CASES.update({
    "comm/flydsl_dispatch_combine_intranode_kernel.py::dispatch_bf16": (ep_dispatch, BOTH),
    "comm/flydsl_dispatch_combine_intranode_kernel.py::combine_bf16_weights": (ep_combine, BOTH),
})


def mega_moe_dispatch(variant):
    return _EP.mega_moe_dispatch(variant, _mega_moe_dispatch_module)


def _mega_moe_dispatch_module():
    from kernels.mega_moe import dispatch

    return dispatch


CASES.update({
    f"mega_moe/dispatch.py::{variant}": (mega_moe_dispatch(variant), GFX950)
    for variant in ("plan", "fixed_slot", "group", "payload")
})


# -- RDNA WMMA (compile with --arch gfx1100) -----------------------------------------------
RDNA3 = ("gfx1100",)


def rdna3_gemm(in_dtype):
    def case(device):
        from kernels.gemm.rdna3_f16_gemm import create_wmma_gemm_module

        M = N = K = 256
        launch, *_ = create_wmma_gemm_module(M, N, K, in_dtype=in_dtype, out_dtype=in_dtype)
        tdt = {"bf16": "bfloat16", "f16": "float16"}[in_dtype]
        c, a, bt = _t((M, N), tdt, device), _t((M, K), tdt, device), _t((N, K), tdt, device)
        return _capture(lambda: launch(c, a, bt, _stream()))

    return case


CASES.update({
    "gemm/rdna3_f16_gemm.py::bf16_256": (rdna3_gemm("bf16"), RDNA3),
    "gemm/rdna3_f16_gemm.py::f16_256": (rdna3_gemm("f16"), RDNA3),
})
