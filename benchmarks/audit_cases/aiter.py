"""aiter's FlyDSL kernels (aiter/ops/flydsl at COMMIT, flydsl 0.3.1) for benchmarks/fix_audit.py.

Each case calls one of aiter's kernel builders (``aiter/ops/flydsl/kernels/*.py``) with small
shapes the way aiter's own host wrappers do (``aiter/ops/flydsl/*.py``: moe_kernels,
moe_sorting, gemm_kernels, mla_reduce_kernels, linear_attention_*, causal_conv1d_flydsl) and
returns ``(jit_fn, args)`` for a compile-only ``flyc.compile`` on the CPU. Imports from the
extracted tree happen inside the case bodies: the extraction root is on sys.path when they run.

Compile these with an interpreter that has flydsl 0.3.1 (aiter's pin), torch and packaging, e.g.
``--python /work/venv031/bin/python``.

Importing without the rest of aiter
-----------------------------------
Only ``aiter/ops/flydsl`` (and ``aiter/ops/prefill_batch_metadata.py``, torch-only, for
causal_conv1d_flydsl) is extracted, so ``aiter`` and ``aiter.ops`` are namespace packages and
aiter's top-level ``__init__`` (which loads its C++ extensions) never runs. The kernel modules
import each other absolutely (``from aiter.ops.flydsl.kernels import buffer_ops``), which would
run ``aiter/ops/flydsl/__init__.py``; that file only re-exports the host APIs and pulls in
``gemm_kernels`` (``from aiter import logger``), ``qk_norm_rope_quant`` (``aiter.utility.mx_types``
-> ``aiter.jit.core``), ``mqa_logits`` (``aiter.jit``, triton), so :func:`_flydsl_package`
registers the package from its real spec without executing that ``__init__``. Nothing is
stubbed: every module a case uses is aiter's own file, imported normally.

``aiter/jit`` and ``aiter/utility`` are extracted too, for small_m_hgemm.py (chip_info) and the
gfx1250 fused_compress_attn*.py (mx_types -> aiter.jit.core): see :func:`_aiter_jit`. Their fp8
variants still ask aiter's C++ build (hipcc) for a conversion op, so only bf16 ones are cases.

Not importable that way (they need aiter's compiled core, triton or mori):
qk_norm_rope_quant*.py, quant_utils.py, silu_and_mul_fq.py,
moe_fused_route_quant_scatter.py, hgemm_dispatch.py,
mxmoe_dispatcher.py, mxfp4_preshuffle_gfx1250_tdm.py, mqa_logits/{fp8_mqa_logits,
pa_mqa_logits_fp4,pa_mqa_logits_fp4_prefill}.py, flydsl_dispatch_combine_intranode_*.py,
mega_moe/{dispatch,mega_moe_stage1,mega_moe_v2}.py, mega_moe_gfx1250/{combine,dispatch,
mega_moe}.py, and the host wrappers gemm_kernels.py, moe_kernels.py, grouped_moe_gfx1250.py,
batched_gemm_mxfp4.py, linear_attention_prefill_kernels.py.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = "ROCm/aiter"
MIRROR = "/work/.mirror/ROCm+aiter/repo"  # default, overridable by --mirror
COMMIT = "e4048607a535ace3a2b51ded31b1c8c2d45c0879"
FLYDSL = "0.3.1"  # aiter pins flydsl==0.3.1: compile with a venv that has it
# extracted from the commit; the extraction root goes on sys.path.
# prefill_batch_metadata.py (torch only) is imported by causal_conv1d_flydsl.py.
# aiter/jit, aiter/utility, aiter/ops/enum.py: small_m_hgemm.py imports aiter.jit.utils.chip_info,
# fused_compress_attn*.py aiter.utility.mx_types -> aiter.jit.core (see _aiter_jit).
PATHS = [
    "aiter/ops/flydsl",
    "aiter/ops/prefill_batch_metadata.py",
    "aiter/jit",
    "aiter/utility",
    "aiter/ops/enum.py",
]
FIX_ROOTS = ["aiter/ops/flydsl"]  # where flydsl-ls check --fix runs
# never executed by the cases (see _flydsl_package): leave out of the import closure used to
# attribute a case to the rules that edited its files (it imports every host wrapper)
IMPORT_GRAPH_SKIP = ["aiter/ops/flydsl/__init__.py"]

BOTH = ("gfx942", "gfx950")
GFX950 = ("gfx950",)
GFX1250 = ("gfx1250",)  # wave32 kernels; run with --arch gfx1250


# -- helpers --------------------------------------------------------------------------------
def _flydsl_package() -> None:
    """Make ``aiter.ops.flydsl`` importable without running its ``__init__`` (see above)."""
    import importlib.util
    import sys

    if "aiter.ops.flydsl" not in sys.modules:
        spec = importlib.util.find_spec("aiter.ops.flydsl")
        sys.modules["aiter.ops.flydsl"] = importlib.util.module_from_spec(spec)


def _aiter_jit() -> None:
    """Make ``aiter.jit`` importable: its ``core.py`` puts ``aiter/jit/utils`` on sys.path (chip_info
    imports ``build_targets``, ``cpp_extension`` by plain name; small_m_hgemm.py imports chip_info
    directly, so the folder goes on sys.path here too). ``cpp_extension`` reads the ROCm version at
    import (the FlyDSL compile never uses it); the audit's ROCM_PATH only holds device bitcode, so
    ROCM_HOME points at a folder holding just a version file while importing."""
    import importlib.util
    import os
    import sys
    import tempfile
    from pathlib import Path

    root = Path(importlib.util.find_spec("aiter.ops.flydsl").submodule_search_locations[0]).parents[2]
    utils = str(root / "aiter" / "jit" / "utils")
    if utils not in sys.path:
        sys.path.insert(0, utils)
    if "cpp_extension" in sys.modules:
        return
    saved = os.environ.get("ROCM_HOME")
    home = Path(tempfile.mkdtemp(prefix="rocm-version-"))
    (home / ".info").mkdir()
    (home / ".info" / "version").write_text("6.4.0\n")
    os.environ["ROCM_HOME"] = str(home)
    try:
        import cpp_extension  # noqa: F401
    finally:
        if saved is None:
            os.environ.pop("ROCM_HOME", None)
        else:
            os.environ["ROCM_HOME"] = saved


def _t(shape, dtype, device):
    import torch

    return torch.empty(shape, dtype=getattr(torch, dtype) if isinstance(dtype, str) else dtype, device=device)


def _p(device, n=64):
    """An ``fx.Pointer`` argument the way aiter passes one (tensor_shim.ptr_arg, u8)."""
    from aiter.ops.flydsl.kernels.tensor_shim import ptr_arg

    return ptr_arg(_t((n,), "uint8", device))


def _stream():
    import flydsl.expr as fx

    return fx.Stream(None)


# -- MoE sorting (moe_sorting.py -> kernels/moe_sorting_kernel.py) ------------------------------
def _moe_sorting_tensors(device, M, E, topk, model_dim):
    from aiter.ops.flydsl.kernels.moe_sorting_kernel import UNIT_SIZE

    max_pad = M * topk + E * UNIT_SIZE - topk
    max_blocks = (max_pad + UNIT_SIZE - 1) // UNIT_SIZE
    return dict(
        topk_ids=_t((M, topk), "int32", device),
        topk_weights=_t((M, topk), "float32", device),
        sorted_ids=_t((max_pad,), "int32", device),
        sorted_weights=_t((max_pad,), "float32", device),
        sorted_expert_ids=_t((max_blocks,), "int32", device),
        num_valid_ids=_t((2,), "int32", device),
        moe_buf=_t((M, model_dim // 2), "int32", device),  # bf16 (M, model_dim) viewed as i32
        mask=_t((1,), "int32", device),
        local_tokens=_t((1,), "int32", device),
    )


def moe_sorting_oneshot(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.moe_sorting_kernel import UNIT_SIZE, compile_moe_sorting

    M, E, topk, model_dim = 16, 32, 4, 256
    t = _moe_sorting_tensors(device, M, E, topk, model_dim)
    launch_oneshot, _, _ = compile_moe_sorting(num_experts=E, topk=topk, max_tokens=16, unit_size=UNIT_SIZE)
    elems = t["moe_buf"].numel()
    return launch_oneshot, (
        t["topk_ids"], t["topk_weights"], t["sorted_ids"], t["sorted_weights"], t["sorted_expert_ids"],
        t["num_valid_ids"], t["moe_buf"], t["mask"], t["local_tokens"], M, elems, 1 + 8, _stream(),
    )


def moe_sorting_p0v2_p23(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.moe_sorting_kernel import UNIT_SIZE, compile_moe_sorting

    M, E, topk, model_dim = 512, 64, 8, 256
    t = _moe_sorting_tensors(device, M, E, topk, model_dim)
    _, launch_p0v2_p23, _ = compile_moe_sorting(num_experts=E, topk=topk, unit_size=UNIT_SIZE, k4_block=256)
    mesh_stride = ((M + UNIT_SIZE - 1) // UNIT_SIZE) * UNIT_SIZE
    ws_mesh_i32 = (E * mesh_stride + 3) // 4
    workspace = _t((ws_mesh_i32 + E + 1,), "int32", device)
    elems = t["moe_buf"].numel()
    return launch_p0v2_p23, (
        t["topk_ids"], workspace, t["topk_weights"], t["sorted_ids"], t["sorted_weights"],
        t["sorted_expert_ids"], t["num_valid_ids"], t["moe_buf"], t["mask"], t["local_tokens"],
        M, mesh_stride, ws_mesh_i32, elems, E + 8, _stream(),
    )


def moe_sorting_4k_fused(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.moe_sorting_kernel import UNIT_SIZE, compile_moe_sorting

    M, E, topk, model_dim = 4096, 64, 8, 256
    t = _moe_sorting_tensors(device, M, E, topk, model_dim)
    _, _, launch_4k_fused = compile_moe_sorting(num_experts=E, topk=topk, unit_size=UNIT_SIZE, k4_block=256)
    mesh_stride = ((M + UNIT_SIZE - 1) // UNIT_SIZE) * UNIT_SIZE
    ws_mesh_i32 = (E * mesh_stride + 3) // 4
    ws_total = ws_mesh_i32 + E + 1
    workspace = _t((ws_total,), "int32", device)
    elems = t["moe_buf"].numel()
    k2_grid = 80 * 2
    k2_niters = (M * topk + k2_grid * 256 - 1) // (k2_grid * 256)
    return launch_4k_fused, (
        t["topk_ids"], workspace, t["topk_weights"], t["sorted_ids"], t["sorted_weights"],
        t["sorted_expert_ids"], t["num_valid_ids"], t["moe_buf"], t["mask"], t["local_tokens"],
        M, mesh_stride, ws_mesh_i32, elems, ws_total, k2_niters, (ws_total + 1023) // 1024, k2_grid, E + 8,
        _stream(),
    )


# -- MoE 2-stage GEMM (moe_kernels.py -> kernels/mixed_moe_gemm_2stage.py) ---------------------
def _moe_gemm1(device, a_dtype, b_dtype):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.mixed_moe_gemm_2stage import GateMode, compile_mixed_moe_gemm1

    fn = compile_mixed_moe_gemm1(
        model_dim=256, inter_dim=256, experts=8, topk=2, tile_m=32, tile_n=128, tile_k=256,
        doweight_stage1=False, a_dtype=a_dtype, b_dtype=b_dtype, out_dtype="bf16", act="silu",
        waves_per_eu=3, b_nt=2, gate_mode=GateMode("separated"),
    )
    p = lambda: _p(device)  # noqa: E731
    # out, x, w, scale_x, scale_w, sorted_token_ids, expert_ids, sorted_weights, max_token_ids,
    # bias, out_scale_sorted; tokens, inter, k, size_expert_ids; situ/swiglu floats; stream
    return fn, (
        p(), p(), p(), p(), p(), p(), p(), p(), p(), p(), p(),
        16, 256, 256, 8, 4.0, 0.25, 25.0, 0.04, 7.0, _stream(),
    )


def moe_gemm1_fp8_fp4(device):
    return _moe_gemm1(device, "fp8", "fp4")


def moe_gemm1_fp8_fp8(device):
    return _moe_gemm1(device, "fp8", "fp8")


def _moe_gemm2(device, a_dtype, b_dtype):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.mixed_moe_gemm_2stage import compile_mixed_moe_gemm2

    fn = compile_mixed_moe_gemm2(
        model_dim=256, inter_dim=256, experts=8, topk=2, tile_m=32, tile_n=128, tile_k=256,
        doweight_stage2=True, a_dtype=a_dtype, b_dtype=b_dtype, out_dtype="bf16", accumulate=True,
        persist_m=1,
    )
    p = lambda: _p(device)  # noqa: E731
    # out, x, w, scale_x, scale_w, sorted_token_ids, expert_ids, sorted_weights, num_valid_ids,
    # bias; tokens, n, k, size_expert_ids; stream
    return fn, (p(), p(), p(), p(), p(), p(), p(), p(), p(), p(), 16, 256, 256, 8, _stream())


def moe_gemm2_fp8_fp4(device):
    return _moe_gemm2(device, "fp8", "fp4")


def moe_gemm1_fp8_fp4_out_fp8(device):
    """Quantized output (need_sort: the sorted scale writer)."""
    _flydsl_package()
    from aiter.ops.flydsl.kernels.mixed_moe_gemm_2stage import GateMode, compile_mixed_moe_gemm1

    fn = compile_mixed_moe_gemm1(
        model_dim=256, inter_dim=256, experts=8, topk=2, tile_m=32, tile_n=128, tile_k=256,
        doweight_stage1=False, a_dtype="fp8", b_dtype="fp4", out_dtype="fp8", act="silu",
        waves_per_eu=3, b_nt=2, gate_mode=GateMode("separated"),
    )  # fmt: skip
    p = lambda: _p(device)  # noqa: E731
    return fn, (
        p(), p(), p(), p(), p(), p(), p(), p(), p(), p(), p(),
        16, 256, 256, 8, 4.0, 0.25, 25.0, 0.04, 7.0, _stream(),
    )  # fmt: skip


def moe_gemm1_fp8_fp4_split_lds(device):
    """256x256 tiles: the CShuffle output outgrows one LDS buffer and is split over two
    (split_lds_out; mfma_epilogues.c_shuffle_epilog's lds_out_split path)."""
    _flydsl_package()
    from aiter.ops.flydsl.kernels.mixed_moe_gemm_2stage import GateMode, compile_mixed_moe_gemm1

    fn = compile_mixed_moe_gemm1(
        model_dim=512, inter_dim=512, experts=8, topk=2, tile_m=256, tile_n=256, tile_k=256,
        doweight_stage1=False, a_dtype="fp8", b_dtype="fp4", out_dtype="bf16", act="silu",
        waves_per_eu=1, b_nt=2, gate_mode=GateMode("separated"),
    )  # fmt: skip
    p = lambda: _p(device)  # noqa: E731
    return fn, (
        p(), p(), p(), p(), p(), p(), p(), p(), p(), p(), p(),
        16, 512, 512, 8, 4.0, 0.25, 25.0, 0.04, 7.0, _stream(),
    )  # fmt: skip


def moe_gemm2_fp8_fp4_persistent(device):
    _flydsl_package()
    import os

    # persist_m <= 0 sizes the grid with aiter.jit.utils.chip_info.get_cu_num, which reads
    # aiter's CU_NUM override before asking rocminfo (256: an MI355X)
    os.environ.setdefault("CU_NUM", "256")
    _aiter_jit()
    from aiter.ops.flydsl.kernels.mixed_moe_gemm_2stage import compile_mixed_moe_gemm2

    fn = compile_mixed_moe_gemm2(
        model_dim=256, inter_dim=256, experts=8, topk=2, tile_m=32, tile_n=128, tile_k=256,
        doweight_stage2=True, a_dtype="fp8", b_dtype="fp4", out_dtype="bf16", accumulate=True,
        persist_m=0,
    )  # fmt: skip
    p = lambda: _p(device)  # noqa: E731
    return fn, (p(), p(), p(), p(), p(), p(), p(), p(), p(), p(), 16, 256, 256, 8, _stream())


# -- heterogeneous MoE (fhmoe.py: an FP8 shared expert beside FP4 ones) --------------------------
def fhmoe_gemm1_fp8_fp4(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.fhmoe import GateMode, compile_mixed_fhmoe_gemm1

    fn = compile_mixed_fhmoe_gemm1(
        model_dim=256, inter_dim=256, experts=8, topk=2, tile_m=32, tile_n=128, tile_k=256,
        doweight_stage1=False, a_dtype="fp8", b_dtype="fp4", out_dtype="bf16", act="silu",
        waves_per_eu=3, b_nt=2, gate_mode=GateMode("separated"), shared_expert_id=7,
    )  # fmt: skip
    p = lambda: _p(device)  # noqa: E731
    # out, x, w, scale_x, scale_w, shared_w, shared_scale_w, sorted_token_ids, expert_ids,
    # sorted_weights, max_token_ids, bias, out_scale_sorted; the rest as moe_gemm1
    return fn, (
        p(), p(), p(), p(), p(), p(), p(), p(), p(), p(), p(), p(), p(),
        16, 256, 256, 8, 4.0, 0.25, 25.0, 0.04, 7.0, _stream(),
    )  # fmt: skip


def fhmoe_gemm2_fp8_fp4(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.fhmoe import compile_mixed_fhmoe_gemm2

    fn = compile_mixed_fhmoe_gemm2(
        model_dim=256, inter_dim=256, experts=8, topk=2, tile_m=32, tile_n=128, tile_k=256,
        doweight_stage2=True, a_dtype="fp8", b_dtype="fp4", out_dtype="bf16", accumulate=True,
        persist_m=1, shared_expert_id=7,
    )  # fmt: skip
    p = lambda: _p(device)  # noqa: E731
    # out, x, w, scale_x, scale_w, shared_w, shared_scale_w, sorted_token_ids, expert_ids,
    # sorted_weights, num_valid_ids, bias; tokens, n, k, size_expert_ids; stream
    return fn, (p(), p(), p(), p(), p(), p(), p(), p(), p(), p(), p(), p(), 16, 256, 256, 8, _stream())


def moe_gemm2_fp8_fp8(device):
    return _moe_gemm2(device, "fp8", "fp8")


# -- a16w-mix MoE (moe_kernels.py -> kernels/moe_2stage_a16wmix/) ------------------------------
def a16wmix_gemm1_int4(device):
    _flydsl_package()
    from flydsl.runtime.device import get_rocm_arch

    from aiter.ops.flydsl.kernels.moe_2stage_a16wmix.gemm1 import compile_gemm1_a16w4_port

    fn = compile_gemm1_a16w4_port(
        BM=32, D_HIDDEN=256, D_INTER=256, NE=8, TOPK=2, TILE_N=128, TILE_K=128, act="silu",
        b_cache_mod=2, xcd_swizzle=0, waves_per_eu=3, w_dtype="int4", w_layout="standard", k_wave=1,
        use_k16="gfx95" not in str(get_rocm_arch()),
    )
    # x, bq, bscale, eids, cumsum, mind (i64 addresses); ntok, grid; situ/swiglu floats; out; stream
    return fn, (0, 0, 0, 0, 0, 0, 16, 8, 4.0, 0.25, 25.0, 0.04, 7.0, 0, _stream())


# -- dense GEMMs -------------------------------------------------------------------------------
def splitk_hgemm_bf16(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.splitk_hgemm import compile_hgemm_kernel

    fn = compile_hgemm_kernel("bf16", 256, 512, TILE_M=64, TILE_N=128, TILE_K=64, STAGES=2, SPLIT_K=2)
    p = lambda: _p(device)  # noqa: E731
    return fn, (p(), p(), p(), p(), 64, p(), p(), _stream())


def _small_m_hgemm(device, **options):
    _flydsl_package()
    _aiter_jit()
    from aiter.ops.flydsl.kernels.small_m_hgemm import compile_small_m_hgemm_kernel

    fn = compile_small_m_hgemm_kernel("bf16", 256, 512, **options)
    p = lambda: _p(device)  # noqa: E731
    # C, A, B, BIAS, m, semaphore, signal, stream (hgemm_dispatch -> the same launcher as splitk_hgemm)
    return fn, (p(), p(), p(), p(), 8, p(), p(), _stream())


def small_m_hgemm_splitk(device):
    return _small_m_hgemm(device, TILE_N=128, TILE_K=64, SPLIT_K=2, HAS_BIAS=True)


def small_m_hgemm_repeat(device):
    return _small_m_hgemm(device, TILE_N=64, TILE_K=64, BLOCK_N_WARPS=1, N_TILE_REPEAT=2)


def small_m_hgemm_b_to_lds(device):
    return _small_m_hgemm(device, TILE_N=128, TILE_K=64, SPLIT_K=2, B_TO_LDS=True)


def splitk_hgemm_bf16_bias(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.splitk_hgemm import compile_hgemm_kernel

    fn = compile_hgemm_kernel(
        "bf16", 256, 512, TILE_M=64, TILE_N=128, TILE_K=64, STAGES=2, SPLIT_K=1, HAS_BIAS=True
    )
    p = lambda: _p(device)  # noqa: E731
    return fn, (p(), p(), p(), p(), 64, p(), p(), _stream())


def preshuffle_gemm_fp8(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.preshuffle_gemm import compile_preshuffle_gemm

    M, N, K = 32, 256, 512
    fn = compile_preshuffle_gemm(N=N, K=K, tile_m=32, tile_n=128, tile_k=128, in_dtype="fp8", out_dtype="bf16")
    return fn, (
        _t((M * N,), "bfloat16", device), _t((M * K,), "int8", device), _t((N * K,), "int8", device),
        _t((M,), "float32", device), _t((N,), "float32", device), _t((0,), "bfloat16", device),
        M, N, _stream(),
    )


def preshuffle_gemm_int8(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.preshuffle_gemm import compile_preshuffle_gemm

    M, N, K = 32, 256, 512
    fn = compile_preshuffle_gemm(N=N, K=K, tile_m=32, tile_n=128, tile_k=128, in_dtype="int8", out_dtype="bf16")
    return fn, (
        _t((M * N,), "bfloat16", device), _t((M * K,), "int8", device), _t((N * K,), "int8", device),
        _t((M,), "float32", device), _t((N,), "float32", device), _t((0,), "bfloat16", device),
        M, N, _stream(),
    )


def gemm_a8w8_8wave(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.gemm_a8w8_8wave import compile_fp8_gemm_8w

    M, N, K = 256, 256, 1024
    fn = compile_fp8_gemm_8w(K=K, BLOCK_M=256, BLOCK_N=256, b_preshuffled=True, waves_per_eu=2)
    # A, B_T, C, A_scale, B_scale, c_m, c_n, stream (A first, C third)
    return fn, (
        _t((M * K,), "int8", device), _t((N * K,), "int8", device), _t((M * N,), "bfloat16", device),
        _t((M,), "float32", device), _t((N,), "float32", device), M, N, _stream(),
    )


# -- attention-side ------------------------------------------------------------------------------
def _typed_p(device, dtype):
    """A typed ``fx.Pointer`` the way mla_reduce_kernels._pointer_arg passes one."""
    import flydsl.expr as fx

    from aiter.ops.flydsl.kernels.tensor_shim import ptr_arg

    dsl = {"float32": fx.Float32, "bfloat16": fx.BFloat16, "int32": fx.Int32}[dtype]
    return ptr_arg(_t((64,), dtype, device), dsl)


def _mla_reduce(device, **options):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.mla_reduce import Tier, compile_mla_reduce

    fn = compile_mla_reduce(H=16, Dv=512, out_dtype="bf16", tier=Tier.ALL, use_reduce_final_map=True, **options)
    f32, i32 = (lambda: _typed_p(device, "float32")), (lambda: _typed_p(device, "int32"))  # noqa: E731
    # partial_output, partial_lse, reduce_indptr, reduce_partial_map, reduce_final_map,
    # final_output, final_lse; stride_s_o, stride_h_o, num_cu, num_reduce_tile, max_seqlen_q,
    # num_partial_rows, num_final_rows; stream
    return fn, (
        f32(), f32(), i32(), i32(), i32(), _typed_p(device, "bfloat16"), f32(),
        16 * 512, 512, 80, 4, 1, 64, 4, _stream(),
    )


def mla_reduce_all(device):
    return _mla_reduce(device, persistent=False)


def mla_reduce_persistent_lse(device):
    return _mla_reduce(device, persistent=True, output_lse=True)


def mla_reduce_splitk_partial(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.mla_reduce import compile_mla_reduce_splitk

    launch_partial, _ = compile_mla_reduce_splitk(H=16, Dv=512, out_dtype="bf16", K=8)
    f32, i32 = (lambda: _typed_p(device, "float32")), (lambda: _typed_p(device, "int32"))  # noqa: E731
    return launch_partial, (f32(), f32(), i32(), i32(), f32(), f32(), 64, 4 * 8, _stream())


def mla_reduce_splitk_combine(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.mla_reduce import compile_mla_reduce_splitk

    _, launch_combine = compile_mla_reduce_splitk(H=16, Dv=512, out_dtype="bf16", K=8)
    f32, i32 = (lambda: _typed_p(device, "float32")), (lambda: _typed_p(device, "int32"))  # noqa: E731
    return launch_combine, (
        i32(), i32(), f32(), f32(), _typed_p(device, "bfloat16"), f32(), 16 * 512, 512, 4, 4, _stream(),
    )


def gdr_decode_bf16(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.gdr_decode import create_vk_gdr_decode_kernel

    B, S, HK, HV, DK, DV = 2, 1, 4, 8, 128, 128
    q, k = _t((B, S, HK, DK), "bfloat16", device), _t((B, S, HK, DK), "bfloat16", device)
    v = _t((B, S, HV, DV), "bfloat16", device)
    a, b = _t((B, S, HV), "bfloat16", device), _t((B, S, HV), "bfloat16", device)
    dt_bias, A_log = _t((HV,), "bfloat16", device), _t((HV,), "float32", device)
    idx = _t((B,), "int32", device)
    state = _t((B, HV, DV, DK), "float32", device)
    out = _t((B, S, HV, DV), "bfloat16", device)
    fn = create_vk_gdr_decode_kernel(
        "bf16", "f32", "f32", S, HK, HV, DK, DV,
        q.stride(), k.stride(), v.stride(), state.stride(), a.stride(), b.stride(), True,
    )
    return fn, (q, k, v, a, b, dt_bias, A_log, idx, idx, state, out, B, _stream())


def chunk_gated_delta_h(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.chunk_gated_delta_h import compile_chunk_gated_delta_h

    B, T, H, Hg, K, V, BT, BV = 1, 128, 4, 2, 128, 128, 64, 32
    N, NT = 2, (T + BT - 1) // BT + 2
    fn = compile_chunk_gated_delta_h(
        K=K, V=V, BT=BT, BV=BV, H=H, Hg=Hg, USE_G=True, USE_GK=False, USE_INITIAL_STATE=True,
        STORE_FINAL_STATE=True, SAVE_NEW_VALUE=True, IS_VARLEN=True, WU_CONTIGUOUS=True,
        STATE_DTYPE_BF16=False, G_IS_LOG2_SCALED=True,
    )
    k = _t((B, T, Hg, K), "bfloat16", device)
    u = _t((B, H, T, V), "bfloat16", device)
    w = _t((B, H, T, K), "bfloat16", device)
    vn = _t((B, H, T, V), "bfloat16", device)
    g = _t((B, H, T), "float32", device)
    h = _t((B, NT, H, V, K), "bfloat16", device)
    h0, ht = _t((N, H, V, K), "float32", device), _t((N, H, V, K), "float32", device)
    cu, co = _t((N + 1,), "int32", device), _t((N + 1,), "int32", device)
    return fn, (k, u, w, vn, g, g, h, h0, ht, cu, co, T, T, N, (V + BV - 1) // BV, N * H, _stream())


def gdn_prepare(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.gdn_prepare import compile_gdn_prepare

    B, T, H, Hg, K, V, BT = 1, 128, 4, 2, 128, 128, 64
    fn = compile_gdn_prepare(BT=BT, K=K, V=V, is_varlen=False, g_scale=1.4426950408889634)
    k = _t((B * T * Hg * K,), "bfloat16", device)
    v = _t((B * T * H * V,), "bfloat16", device)
    g, beta = _t((B * T * H,), "float32", device), _t((B * T * H,), "float32", device)
    w_bar, u_bar = _t((B * H * T * K,), "bfloat16", device), _t((B * H * T * V,), "bfloat16", device)
    gcs = _t((B * H * T,), "float32", device)
    NT = (T + BT - 1) // BT
    return fn, (k, v, g, beta, k, w_bar, u_bar, gcs, T, H, Hg, NT, B * H, _stream())


def causal_conv1d_bf16(device):
    _flydsl_package()
    from aiter.ops.flydsl.causal_conv1d_flydsl import build_causal_conv1d_flydsl_module

    kd, vd, width, seqlen, batch = 128, 256, 4, 96, 2
    dim = 2 * kd + vd
    fn = build_causal_conv1d_flydsl_module(width, True, True, 64, 64, 256, "bf16")
    x = _t((dim, seqlen), "bfloat16", device)
    w = _t((dim, width), "bfloat16", device)
    bias = _t((dim,), "bfloat16", device)
    cs = _t((batch, dim, width - 1), "bfloat16", device)
    cache_idx, has_init = _t((batch,), "int32", device), _t((batch,), "bool", device)
    qsl = _t((batch + 1,), "int32", device)
    tot = 2
    batch_ptr, chunk_off = _t((tot,), "int32", device), _t((tot,), "int32", device)
    q, k, v = _t((seqlen, kd), "bfloat16", device), _t((seqlen, kd), "bfloat16", device), _t((seqlen, vd), "bfloat16", device)
    tn = fn._tn
    return fn, (
        x, w, bias, cs, cache_idx, has_init, qsl, batch_ptr, chunk_off, q, k, v,
        dim, kd, vd, x.stride(0), x.stride(1), w.stride(0), w.stride(1),
        cs.stride(0), cs.stride(1), cs.stride(2), cache_idx.stride(0),
        q.stride(0), q.stride(1), k.stride(0), k.stride(1), v.stride(0), v.stride(1),
        tot, (dim + tn - 1) // tn, _stream(),
    )


# -- MoE routing helpers (grouped_moe_gfx1250.py and friends) -------------------------------
def moe_m_tile_map(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.moe_m_tile_map import build_moe_m_tile_map_module

    fn = build_moe_m_tile_map_module()
    return fn, (_p(device), _p(device), 16, 64, _stream())


def moe_route_maps(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.moe_route_maps import build_moe_route_maps_module

    fn = build_moe_route_maps_module()
    return fn, (_p(device), _p(device), _p(device), _p(device), 64, 4, 128, 4, _stream())


def moe_topids_to_rows(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.moe_route_maps import build_moe_topids_to_rows_module

    fn = build_moe_topids_to_rows_module()
    return fn, (_p(device), _p(device), _p(device), 64, 128, 4, _stream())


def moe_topids_to_rows_g2l(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.moe_route_maps import build_moe_topids_to_rows_g2l_module

    fn = build_moe_topids_to_rows_g2l_module("bf16")
    p = lambda: _p(device)  # noqa: E731
    return fn, (p(), p(), p(), p(), p(), p(), p(), 64, 128, 8, 4, _stream())


def moe_route_g2l_lds(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.moe_route_maps import build_moe_route_g2l_lds_module

    fn = build_moe_route_g2l_lds_module("bf16")
    p = lambda: _p(device)  # noqa: E731
    return fn, (p(), p(), p(), p(), p(), p(), p(), 64, 128, 8, 4, _stream())


def moe_contiguous_psum(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.moe_contiguous_psum import build_moe_contiguous_psum_module

    fn = build_moe_contiguous_psum_module()
    p = lambda: _p(device)  # noqa: E731
    return fn, (p(), p(), p(), p(), 16, 32, _stream())


def moe_contiguous_psum_remap(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.moe_contiguous_psum import build_moe_contiguous_psum_remap_module

    fn = build_moe_contiguous_psum_remap_module()
    p = lambda: _p(device)  # noqa: E731
    return fn, (p(), p(), p(), p(), p(), 64, 16, 128, 32, p(), _stream())


def moe_contiguous_psum_remap_ep(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.moe_contiguous_psum import build_moe_contiguous_psum_remap_ep_module

    fn = build_moe_contiguous_psum_remap_ep_module()
    p = lambda: _p(device)  # noqa: E731
    return fn, (p(), p(), p(), p(), p(), 16, 128, 32, p(), p(), p(), p(), 4, 64, 256, _stream())


def moe_route_psum_fused(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.moe_contiguous_psum import build_moe_route_psum_fused_module

    fn = build_moe_route_psum_fused_module()
    p = lambda: _p(device)  # noqa: E731
    return fn, (p(), p(), p(), p(), p(), 64, 16, 128, 32, _stream())


def moe_gather_reduce(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.moe_gather_reduce import build_moe_gather_reduce_module

    fn = build_moe_gather_reduce_module(256, 4, out_dtype="bf16")
    p = lambda: _p(device)  # noqa: E731
    return fn, (p(), p(), p(), p(), 16, 128, p(), _stream())


def moe_scatter_copy_token(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.moe_scatter_copy_token import build_moe_scatter_copy_token_module

    fn = build_moe_scatter_copy_token_module(512)
    return fn, (_p(device), _p(device), _p(device), 64, _stream())


def moe_scatter_preshuffle_scale_gather(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.moe_scatter_copy_preshuffle_scale import (
        build_moe_scatter_copy_preshuffle_scale_module,
    )

    fn = build_moe_scatter_copy_preshuffle_scale_module(16, 2, 4, gather=True)
    return fn, (_p(device), _p(device), _p(device), 128, 8, 4, _stream())


def moe_scatter_preshuffle_scale(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.moe_scatter_copy_preshuffle_scale import (
        build_moe_scatter_copy_preshuffle_scale_module,
    )

    fn = build_moe_scatter_copy_preshuffle_scale_module(16, 2, 4, gather=False)
    return fn, (_p(device), _p(device), 128, 8, 4, _stream())


def moe_g2l_lut(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.moe_g2l_lut import build_moe_g2l_lut_module

    fn = build_moe_g2l_lut_module()
    p = lambda: _p(device)  # noqa: E731
    return fn, (p(), p(), p(), p(), p(), 16, 64, 4, _stream())


def moe_reduction_bf16(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.moe_reduce import compile_moe_reduction

    fn = compile_moe_reduction(topk=4, model_dim=256, dtype_str="bf16", use_mask=True, num_experts=16, use_weight=True)
    p = lambda: _p(device)  # noqa: E731
    return fn, (p(), p(), p(), p(), p(), 16, _stream())


def swiglu_and_mul(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.swiglu_and_mul import build_swiglu_and_mul_module

    fn = build_swiglu_and_mul_module(256)
    return fn, (_p(device), _p(device), 16, _stream())


def a16wmix_gemm1_fp4(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.moe_2stage_a16wmix.gemm1 import compile_gemm1_a16w4_port

    fn = compile_gemm1_a16w4_port(
        BM=32, D_HIDDEN=256, D_INTER=256, NE=8, TOPK=2, TILE_N=128, TILE_K=256, act="silu",
        b_cache_mod=2, xcd_swizzle=0, waves_per_eu=3, w_dtype="fp4", w_layout="standard", k_wave=1,
        use_k16=False,
    )
    return fn, (0, 0, 0, 0, 0, 0, 16, 8, 4.0, 0.25, 25.0, 0.04, 7.0, 0, _stream())


def a16wmix_gemm2_int4(device):
    _flydsl_package()
    from flydsl.runtime.device import get_rocm_arch

    from aiter.ops.flydsl.kernels.moe_2stage_a16wmix.gemm2 import compile_gemm2_a16w4_port

    fn = compile_gemm2_a16w4_port(
        BM=32, NE=8, N_OUT=256, D_INTER=256, TILE_N=128, TILE_K=128, xcd_swizzle=0, b_cache_mod=0,
        w_dtype="int4", use_k16="gfx95" not in str(get_rocm_arch()),
    )
    # a, bq, bscale, eids, cumsum, stids, sweights (i64 addresses); M, max_m_blocks, grid; out; stream
    return fn, (0, 0, 0, 0, 0, 0, 0, 16, 8, 8, 0, _stream())


# -- a4w4 MoE (mxfp4_gemm1_kernels.py / mxfp4_gemm2_kernels.py) ----------------------------------
def mxfp4_gemm1_a4w4(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.mxfp4_gemm1 import compile_gemm1_a4w4_port

    fn = compile_gemm1_a4w4_port(64, False, False, D_HIDDEN=1024, D_INTER=512, NE=8, TOPK=2, BN=256, BK=256)
    # aq, ascale, bq, bscale, eids, cumsum, mind (i64); ntok, grid; aqout, ascaleout, hidden (i64); stream
    return fn, (0, 0, 0, 0, 0, 0, 0, 16, 8, 0, 0, 0, _stream())


def mxfp4_gemm2_a4w4(device):
    _flydsl_package()
    from aiter.ops.flydsl.kernels.mxfp4_gemm2 import compile_gemm2_a4w4_port

    fn = compile_gemm2_a4w4_port(BM=32, use_nt=False, NE=8, N_OUT=256, epilog="atomic", D_INTER=256, BN=256, BK=256)
    # aq, ascale, bq, bscale, eids, cumsum, stids, sweights (i64); M, max_m_blocks; out, out_scale; stream
    return fn, (0, 0, 0, 0, 0, 0, 0, 0, 16, 8, 0, 0, _stream())


# -- gfx1201 attention (fmha_kernels.py -> kernels/flash_attn_func_gfx1201.py) ---------------
def flash_attn_func_gfx1201_bf16(device):
    """flydsl_flash_attn_func's kernel (BSHD bf16, causal). The builder returns a launcher
    whose `.compile` closes over the @flyc.jit function; Q/K/V/O are u8 pointers as its
    `_ptr_arg` makes them."""
    _flydsl_package()
    from aiter.ops.flydsl.kernels.flash_attn_func_gfx1201 import build_flash_attn_func_module

    exe = build_flash_attn_func_module(num_heads=2, head_dim=128, causal=True, dtype_str="bf16", waves_per_eu=2, daz=True)
    jit = next(c.cell_contents for c in exe.compile.__closure__ if type(c.cell_contents).__name__ == "JitFunction")
    return jit, (_p(device), _p(device), _p(device), _p(device), 1, 128, _stream())


# -- gfx1250 attention (fmha_kernels.py -> kernels/fmha_gfx1250/fmha_kernel.py) ----------------
def fmha_gfx1250_varlen_d192(device):
    """flash_attn_varlen_d192_gfx1250's launcher (causal, with LSE), called the way that host
    wrapper does: byte strides for q/k/v, element strides for out."""
    _flydsl_package()
    from aiter.ops.flydsl.kernels.fmha_gfx1250 import fmha_kernel as m

    m._ensure_kernel(True, True)
    heads, tokens, bpp = 4, 256, m.BPP
    q = _t((tokens, heads, m.HEAD_DIM_QK), "bfloat16", device)
    k = _t((tokens, heads, m.HEAD_DIM_QK), "bfloat16", device)
    v = _t((tokens, heads, m.HEAD_DIM_V), "bfloat16", device)
    out = _t((tokens, heads, m.HEAD_DIM_V), "bfloat16", device)
    lse = _t((tokens, heads), "float32", device)
    cu = _t((3,), "int32", device)
    return m._launch_fns[(True, True)], (
        out, q, k, v, lse, cu, cu, 0.07,
        q.stride(0) * bpp, k.stride(0) * bpp, v.stride(0) * bpp, out.stride(0),
        q.stride(1) * bpp, k.stride(1) * bpp, v.stride(1) * bpp, out.stride(1),
        1, 128, 128, heads, 2, _stream(),
    )


# -- gfx1250 (wave32) kernels: compiled for gfx1250 only -------------------------------------
# bf16 variants: the fp8 ones ask aiter's C++ build (hipcc) for their conversion op.
def _fca_args(device, *, head_dim, rope, ratio, overlap, state, kpb, kv_cache, tail):
    full = (2 if overlap else 1) * head_dim
    kv_in, score_in = _t((8, full), "bfloat16", device), _t((8, full), "bfloat16", device)
    kv_state, score_state = _t((2, state, full), "float32", device), _t((2, state, full), "float32", device)
    rms = _t((head_dim,), "float32", device)
    cos, sin = _t((64, rope // 2), "bfloat16", device), _t((64, rope // 2), "bfloat16", device)
    bt = _t((2, 4), "int32", device)
    return (
        kv_in, kv_in.stride(0), score_in, score_in.stride(0), _t((4, 4), "int32", device),
        kv_state, kv_state.stride(0), kv_state.stride(1),
        score_state, score_state.stride(0), score_state.stride(1),
        _t((2,), "int32", device), _t((ratio, full), "float32", device), rms, cos, sin,
        kv_cache, kv_cache.stride(0), kv_cache.stride(1), rms, 0,  # cache_scale: fp32 dummy (no quant)
        *tail(cos), bt, bt.stride(0), 4, _stream(),
    )  # fmt: skip


def fused_compress_attn_bf16(device):
    _flydsl_package()
    _aiter_jit()
    from aiter.ops.flydsl.kernels.fused_compress_attn_gfx1250 import (
        compile_flydsl_fused_compress_attn_gfx1250,
    )

    fn = compile_flydsl_fused_compress_attn_gfx1250(
        head_dim=128, rope_head_dim=64, ratio=4, overlap=True, state_size=8, k_per_block=16,
        has_block_table=True, quant=False, use_ue8m0=True, preshuffle=False,
        rms_weight_is_bf16=False, rms_eps=1e-6,
    )  # fmt: skip
    cache = _t((4, 16, 128), "bfloat16", device)
    # k_rope_buff: bf16 dummy (cos) with zero strides, as the host wrapper passes it
    return fn, _fca_args(device, head_dim=128, rope=64, ratio=4, overlap=True, state=8, kpb=16,
                         kv_cache=cache, tail=lambda cos: (cos, 0, 0))  # fmt: skip


def fused_compress_attn_ksplit_bf16(device):
    _flydsl_package()
    _aiter_jit()
    from aiter.ops.flydsl.kernels.fused_compress_attn_gfx1250 import (
        compile_flydsl_fused_compress_attn_ksplit_gfx1250,
    )

    fn = compile_flydsl_fused_compress_attn_ksplit_gfx1250(
        head_dim=128, rope_head_dim=64, ratio=4, overlap=True, state_size=8, k_per_block=16,
        k_split_num_waves=2, quant=False, use_ue8m0=True, preshuffle=False,
        rms_weight_is_bf16=False, rms_eps=1e-6,
    )  # fmt: skip
    cache = _t((4, 16, 128), "bfloat16", device)
    return fn, _fca_args(device, head_dim=128, rope=64, ratio=4, overlap=True, state=8, kpb=16,
                         kv_cache=cache, tail=lambda cos: ())  # fmt: skip


# The HCA compress attention kernels: the gfx1250 and CDNA builders take the same
# settings and their launchers the same arguments.
_HCA_COMPRESS = dict(head_dim=512, ratio=4, state_size=8, k_split_num_waves=2)
_HCA_SCATTER = dict(head_dim=512, rope_head_dim=64, ratio=4, k_per_block=16, rms_weight_is_bf16=False, rms_eps=1e-6)


def _hca_compress_args(device):
    kv_in, score_in = _t((8, 512), "bfloat16", device), _t((8, 512), "bfloat16", device)
    kv_state, score_state = _t((2, 8, 512), "float32", device), _t((2, 8, 512), "float32", device)
    out = _t((4, 512), "float32", device)
    return (
        kv_in, kv_in.stride(0), score_in, score_in.stride(0), _t((4, 4), "int32", device),
        kv_state, kv_state.stride(0), kv_state.stride(1),
        score_state, score_state.stride(0), score_state.stride(1),
        _t((2,), "int32", device), _t((4, 512), "float32", device), out, out.stride(0), 4, _stream(),
    )  # fmt: skip


def _hca_scatter_args(device):
    kvc, cache = _t((4, 512), "float32", device), _t((4, 16, 512), "bfloat16", device)
    krope, bt = _t((4, 16, 64), "bfloat16", device), _t((2, 4), "int32", device)
    return (
        kvc, kvc.stride(0), _t((4, 4), "int32", device), _t((512,), "float32", device),
        _t((64, 32), "bfloat16", device), _t((64, 32), "bfloat16", device),
        cache, cache.stride(0), cache.stride(1), bt, bt.stride(0),
        krope, krope.stride(0), krope.stride(1), 4, _stream(),
    )  # fmt: skip


def hca_compress_forward(device):
    _flydsl_package()
    _aiter_jit()
    from aiter.ops.flydsl.kernels.fused_compress_attn_hca_gfx1250 import (
        compile_hca_compress_forward_gfx1250,
    )

    fn = compile_hca_compress_forward_gfx1250(**_HCA_COMPRESS)
    return fn, _hca_compress_args(device)


def hca_norm_rope_scatter(device):
    _flydsl_package()
    _aiter_jit()
    from aiter.ops.flydsl.kernels.fused_compress_attn_hca_gfx1250 import (
        compile_hca_norm_rope_scatter_gfx1250,
    )

    fn = compile_hca_norm_rope_scatter_gfx1250(**_HCA_SCATTER)
    return fn, _hca_scatter_args(device)


CASES = {
    "kernels/moe_sorting_kernel.py::oneshot_e32_top4_m16": (moe_sorting_oneshot, BOTH),
    "kernels/moe_sorting_kernel.py::p0v2_p23_e64_top8_m512": (moe_sorting_p0v2_p23, BOTH),
    "kernels/moe_sorting_kernel.py::4k_fused_e64_top8_m4096": (moe_sorting_4k_fused, BOTH),
    "kernels/mixed_moe_gemm_2stage.py::gemm1_fp8_fp4": (moe_gemm1_fp8_fp4, GFX950),
    "kernels/mixed_moe_gemm_2stage.py::gemm1_fp8_fp8": (moe_gemm1_fp8_fp8, GFX950),
    "kernels/mixed_moe_gemm_2stage.py::gemm2_fp8_fp4": (moe_gemm2_fp8_fp4, GFX950),
    "kernels/mixed_moe_gemm_2stage.py::gemm2_fp8_fp8": (moe_gemm2_fp8_fp8, GFX950),
    "kernels/mixed_moe_gemm_2stage.py::gemm1_fp8_fp4_out_fp8": (moe_gemm1_fp8_fp4_out_fp8, GFX950),
    "kernels/mixed_moe_gemm_2stage.py::gemm2_fp8_fp4_persistent": (moe_gemm2_fp8_fp4_persistent, GFX950),
    "kernels/mixed_moe_gemm_2stage.py::gemm1_fp8_fp4_t256_split_lds": (moe_gemm1_fp8_fp4_split_lds, GFX950),
    "kernels/fhmoe.py::gemm1_fp8_fp4_shared_fp8": (fhmoe_gemm1_fp8_fp4, GFX950),
    "kernels/fhmoe.py::gemm2_fp8_fp4_shared_fp8": (fhmoe_gemm2_fp8_fp4, GFX950),
    "kernels/moe_2stage_a16wmix/gemm1.py::bf16_int4": (a16wmix_gemm1_int4, BOTH),
    "kernels/moe_2stage_a16wmix/gemm1.py::bf16_fp4": (a16wmix_gemm1_fp4, GFX950),
    "kernels/moe_2stage_a16wmix/gemm2.py::bf16_int4": (a16wmix_gemm2_int4, GFX950),
    "kernels/mxfp4_gemm1.py::a4w4_bm64": (mxfp4_gemm1_a4w4, GFX950),
    "kernels/mxfp4_gemm2.py::a4w4_atomic_bm32": (mxfp4_gemm2_a4w4, GFX950),
    "kernels/splitk_hgemm.py::bf16_n256_k512_splitk2": (splitk_hgemm_bf16, BOTH),
    "kernels/small_m_hgemm.py::bf16_n256_k512_splitk2_bias": (small_m_hgemm_splitk, GFX950),
    "kernels/small_m_hgemm.py::bf16_n256_k512_repeat2": (small_m_hgemm_repeat, GFX950),
    "kernels/small_m_hgemm.py::bf16_n256_k512_splitk2_b_to_lds": (small_m_hgemm_b_to_lds, GFX950),
    "kernels/splitk_hgemm.py::bf16_n256_k512_bias": (splitk_hgemm_bf16_bias, BOTH),
    "kernels/preshuffle_gemm.py::fp8_n256_k512": (preshuffle_gemm_fp8, BOTH),
    "kernels/preshuffle_gemm.py::int8_n256_k512": (preshuffle_gemm_int8, BOTH),
    "kernels/gemm_a8w8_8wave.py::fp8_256x256_k1024": (gemm_a8w8_8wave, GFX950),
    "kernels/mla_reduce.py::all_tiers_h16_dv512": (mla_reduce_all, BOTH),
    "kernels/mla_reduce.py::persistent_lse_h16_dv512": (mla_reduce_persistent_lse, BOTH),
    "kernels/mla_reduce.py::splitk_partial_k8": (mla_reduce_splitk_partial, BOTH),
    "kernels/mla_reduce.py::splitk_combine_k8": (mla_reduce_splitk_combine, BOTH),
    "kernels/gdr_decode.py::bf16_b2_hv8": (gdr_decode_bf16, BOTH),
    "kernels/chunk_gated_delta_h.py::varlen_k128_v128": (chunk_gated_delta_h, GFX950),
    "kernels/gdn_prepare.py::bt64_k128_v128": (gdn_prepare, BOTH),
    "causal_conv1d_flydsl.py::bf16_w4_bias_silu": (causal_conv1d_bf16, BOTH),
    "kernels/moe_m_tile_map.py::m_tile_map": (moe_m_tile_map, BOTH),
    "kernels/moe_route_maps.py::route_maps": (moe_route_maps, BOTH),
    "kernels/moe_route_maps.py::topids_to_rows": (moe_topids_to_rows, BOTH),
    "kernels/moe_route_maps.py::topids_to_rows_g2l_bf16": (moe_topids_to_rows_g2l, BOTH),
    "kernels/moe_route_maps.py::route_g2l_lds_bf16": (moe_route_g2l_lds, BOTH),
    "kernels/moe_contiguous_psum.py::psum": (moe_contiguous_psum, BOTH),
    "kernels/moe_contiguous_psum.py::psum_remap": (moe_contiguous_psum_remap, BOTH),
    "kernels/moe_contiguous_psum.py::psum_remap_ep": (moe_contiguous_psum_remap_ep, BOTH),
    "kernels/moe_contiguous_psum.py::route_psum_fused": (moe_route_psum_fused, BOTH),
    "kernels/moe_gather_reduce.py::bf16_d256_top4": (moe_gather_reduce, BOTH),
    "kernels/moe_scatter_copy_token.py::row512": (moe_scatter_copy_token, BOTH),
    "kernels/moe_scatter_copy_preshuffle_scale.py::gather": (moe_scatter_preshuffle_scale_gather, BOTH),
    "kernels/moe_scatter_copy_preshuffle_scale.py::no_gather": (moe_scatter_preshuffle_scale, BOTH),
    "kernels/moe_g2l_lut.py::g2l": (moe_g2l_lut, BOTH),
    "kernels/moe_reduce.py::bf16_top4_mask_weight": (moe_reduction_bf16, BOTH),
    "kernels/swiglu_and_mul.py::inter256": (swiglu_and_mul, BOTH),
    "kernels/flash_attn_func_gfx1201.py::bf16_h2_d128_causal": (flash_attn_func_gfx1201_bf16, ("gfx1201",)),
    "kernels/fmha_gfx1250/fmha_kernel.py::varlen_d192_causal_lse": (fmha_gfx1250_varlen_d192, ("gfx1250",)),
    "kernels/fused_compress_attn_gfx1250.py::bf16_d128_r4_ovl": (fused_compress_attn_bf16, GFX1250),
    "kernels/fused_compress_attn_gfx1250.py::ksplit2_bf16_d128_r4_ovl": (
        fused_compress_attn_ksplit_bf16,
        GFX1250,
    ),
    "kernels/fused_compress_attn_hca_gfx1250.py::compress_forward_d512_r4": (hca_compress_forward, GFX1250),
    "kernels/fused_compress_attn_hca_gfx1250.py::norm_rope_scatter_d512": (hca_norm_rope_scatter, GFX1250),
}


# -- intranode expert-parallel dispatch/combine (mori shmem waits stubbed) -------------------
# Loaded by path, as the tables are: the builders both tables share.
_EP_SPEC = importlib.util.spec_from_file_location("_audit_shared_ep", Path(__file__).with_name("_shared_ep.py"))
_EP = importlib.util.module_from_spec(_EP_SPEC)
_EP_SPEC.loader.exec_module(_EP)


def ep_dispatch(device):
    _flydsl_package()
    _EP.mori_stub()
    from aiter.ops.flydsl.kernels.flydsl_dispatch_combine_intranode_kernel import make_dispatch_jit

    return _EP.ep_dispatch(make_dispatch_jit)


def ep_combine(device):
    _flydsl_package()
    _EP.mori_stub()
    from aiter.ops.flydsl.kernels.flydsl_dispatch_combine_intranode_kernel import make_combine_jit

    return _EP.ep_combine(make_combine_jit)


CASES.update({
    "kernels/flydsl_dispatch_combine_intranode_kernel.py::dispatch_bf16": (ep_dispatch, BOTH),
    "kernels/flydsl_dispatch_combine_intranode_kernel.py::combine_bf16_weights": (ep_combine, BOTH),
})


def mega_moe_dispatch(variant):
    return _EP.mega_moe_dispatch(variant, _mega_moe_dispatch_module)


def _mega_moe_dispatch_module():
    _flydsl_package()
    from aiter.ops.flydsl.kernels.mega_moe import dispatch

    return dispatch


CASES.update({
    f"kernels/mega_moe/dispatch.py::{variant}": (mega_moe_dispatch(variant), GFX950)
    for variant in ("plan", "fixed_slot", "group", "payload")
})


# -- the CDNA fused compress attention kernels (the gfx1250 ones' launch signatures) ----------
def fused_compress_attn_cdna_bf16(device):
    _flydsl_package()
    _aiter_jit()
    from aiter.ops.flydsl.kernels.fused_compress_attn import compile_flydsl_fused_compress_attn

    fn = compile_flydsl_fused_compress_attn(
        head_dim=128, rope_head_dim=64, ratio=4, overlap=True, state_size=8, k_per_block=16,
        has_block_table=True, use_ue8m0=True, preshuffle=False, rms_weight_is_bf16=False, rms_eps=1e-6,
    )  # fmt: skip
    cache = _t((4, 16, 128), "bfloat16", device)
    return fn, _fca_args(device, head_dim=128, rope=64, ratio=4, overlap=True, state=8, kpb=16,
                         kv_cache=cache, tail=lambda cos: (cos, 0, 0))  # fmt: skip


def hca_cdna_compress_forward(device):
    _flydsl_package()
    _aiter_jit()
    from aiter.ops.flydsl.kernels.fused_compress_attn_hca import compile_hca_compress_forward

    fn = compile_hca_compress_forward(**_HCA_COMPRESS)
    return fn, _hca_compress_args(device)


def hca_cdna_norm_rope_scatter(device):
    _flydsl_package()
    _aiter_jit()
    from aiter.ops.flydsl.kernels.fused_compress_attn_hca import compile_hca_norm_rope_scatter

    fn = compile_hca_norm_rope_scatter(**_HCA_SCATTER)
    return fn, _hca_scatter_args(device)


CASES.update({
    "kernels/fused_compress_attn.py::bf16_d128_r4_ovl": (fused_compress_attn_cdna_bf16, BOTH),
    "kernels/fused_compress_attn_hca.py::compress_forward_d512_r4": (hca_cdna_compress_forward, BOTH),
    "kernels/fused_compress_attn_hca.py::norm_rope_scatter_d512": (hca_cdna_norm_rope_scatter, BOTH),
})
