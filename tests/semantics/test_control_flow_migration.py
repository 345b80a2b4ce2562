"""FLY302 / FLY501 / FLY601 fixes checked with the real compiler (FlyDSL 0.5.0, on the CPU).

The kernels in fixtures/raw_control_flow.py and fixtures/raw_mfma.py are written for these
tests with raw `scf.IfOp` / `_if_then`, `scf.ForOp` loops (with and without carried
values) and a raw `rocdl.mfma_*`. Each is compiled before and after `--unsafe-fixes` of
those rules; the after-version must compile, and each test states whether the MLIR
(locations stripped) is identical or asserts the difference the compiler shows.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from flydsl_ls.checker import fix_source
from flydsl_ls.compile import compare_results
from flydsl_ls.compile.verify import strip_locations
from flydsl_ls.config import Settings
from tests.compile.conftest import compile_cache, service  # noqa: F401  (fixtures)
from tests.compiler import needs_compiler

pytestmark = needs_compiler

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CONTROL_FLOW = FIXTURES / "raw_control_flow.py"
MFMA = FIXTURES / "raw_mfma.py"
CODES = ("FLY302", "FLY501", "FLY601")


def _migrate(path: Path, arch: str = "gfx942"):
    settings = Settings(target_arch=arch, flydsl_version="0.5.0", select=CODES)
    return fix_source(path.read_text(encoding="utf-8"), path, settings, unsafe=True)


@pytest.fixture(scope="module")
def control_flow():
    outcome = _migrate(CONTROL_FLOW)
    return outcome


@pytest.fixture(scope="module")
def pair(service, control_flow):
    cache: dict = {}

    def get(path: Path, example: str, fixed: str, arch: str = "gfx942"):
        key = (path, example, arch)
        if key not in cache:
            before = service.compile(path, example, arch)
            after = service.compile(path, example, arch, source=fixed)
            assert before.ok, before.error
            assert after.ok, f"the fixed kernel does not compile: {after.error}"
            cache[key] = before, after
        return cache[key]

    return get


def _mlir(result, emit="mlir-first") -> str:
    (kernel,) = result.kernels
    return strip_locations(kernel.text(emit))


def test_fixes_applied(control_flow):
    # 5 loops, 7 ifs (FLY302); the plain helpers' @flyc.jit come with the FLY302 fixes.
    assert control_flow.applied == {"FLY302": 12}, control_flow.applied
    text = control_flow.text
    assert "scf.ForOp" not in text and "scf.IfOp" not in text and "with _if_then" not in text
    assert "for loop_iv, loop_state in range(c0, c4, c1, init=[acc0, cnt0]):" in text
    assert "loop_results = yield [acc + arith.constant(2.0, type=fx.T.f32), cnt + step]" in text
    assert "for loop_iv, _ in range(arith.constant(0, index=True), hi, one, init=[]):" in text
    assert "for _ in fx.range_constexpr(3):" in text
    assert "@flyc.jit\ndef store_lane_flag(" in text
    assert "    if in_range:\n        fx.gpu.barrier()\n" in text
    assert (
        "        def _then_low():\n            Out[i] = arith.constant(6.0, type=fx.T.f32)\n"
        "        if low:\n            _then_low()\n"
    ) in text
    assert (
        "    def _then_low():\n        sink.put(tid, arith.constant(7.0, type=fx.T.f32))\n"
        "    if low:\n        _then_low()\n"
    ) in text


def test_carried_loop_identical(pair, control_flow):
    """scf.ForOp with two carried values -> range(..., init=[...]) + yield: identical IR."""
    before, after = pair(CONTROL_FLOW, "carried", control_flow.text)
    comparison = compare_results(before, after)
    assert comparison.identical, comparison.diffs


def test_loop_without_carried_values_identical(pair, control_flow):
    """Runtime index bounds, nothing carried -> range(..., init=[]): identical IR (ordinary
    `range` would have cast the bounds to i32)."""
    before, after = pair(CONTROL_FLOW, "strided", control_flow.text)
    comparison = compare_results(before, after)
    assert comparison.identical, comparison.diffs


def test_constant_loop_is_unrolled(pair, control_flow):
    """Constant bounds, unused induction variable -> range_constexpr: the scf.for is gone and
    its body is repeated three times in the first and final MLIR (the documented difference);
    LLVM unrolls the 3-trip loop of the raw version, so the ISA is identical."""
    before, after = pair(CONTROL_FLOW, "unrolled", control_flow.text)
    old, new = _mlir(before), _mlir(after)
    assert "scf.for" in old and old.count("gpu.barrier") == 1
    assert "scf.for" not in new and new.count("gpu.barrier") == 3
    assert compare_results(before, after).differences == [
        "barrier_loop_kernel_0: mlir-first differs",
        "barrier_loop_kernel_0: mlir-final differs",
        "barrier_loop_kernel_0: llvm differs",  # unrolled in LLVM IR too; the ISA is the same
    ]


def _if_op_lines(mlir: str) -> list[str]:
    return [line.strip() for line in mlir.splitlines() if "scf.if" in line or "scf.yield" in line or "} else {" in line]


def test_guarded_store_carries_the_tensor(pair, control_flow):
    """`with _if_then(scf.IfOp(arith.unwrap(tid < n)))` -> `if tid < n:`. The rewriter carries
    `Out` (subscript-stored in the body) out of the branch: the first MLIR gains an scf.if
    result and an else yielding the same memref. The final MLIR and the ISA are identical."""
    before, after = pair(CONTROL_FLOW, "guarded", control_flow.text)
    assert _if_op_lines(_mlir(before)) == ["scf.if %1 {"]
    assert _if_op_lines(_mlir(after)) == [
        "%2 = scf.if %1 -> (!fly.memref<f32, global, ?:1>) {",
        "scf.yield %arg0 : !fly.memref<f32, global, ?:1>",
        "} else {",
        "scf.yield %arg0 : !fly.memref<f32, global, ?:1>",
    ]
    assert compare_results(before, after).differences == ["guarded_store_kernel_0: mlir-first differs"]


def test_helper_branch_gets_jit(pair, control_flow):
    """IfOp with then/else blocks in a plain helper -> `if`/`else` under `@flyc.jit`. Same
    carried-tensor difference in the first MLIR; final MLIR and ISA identical."""
    before, after = pair(CONTROL_FLOW, "helper", control_flow.text)
    assert _if_op_lines(_mlir(before)) == ["scf.if %1 {", "} else {"]
    assert _if_op_lines(_mlir(after)) == [
        "%2 = scf.if %1 -> (!fly.memref<f32, global, ?:1>) {",
        "scf.yield %arg0 : !fly.memref<f32, global, ?:1>",
        "} else {",
        "scf.yield %arg0 : !fly.memref<f32, global, ?:1>",
    ]
    assert compare_results(before, after).differences == ["helper_branch_kernel_0: mlir-first differs"]


def test_raw_condition_identical(pair, control_flow):
    """`scf.IfOp(arith.cmpi(...))` (a raw i1, aiter's usual form) -> `if in_range:`: the rewriter
    dispatches an ir.Value condition to scf.if; the body carries nothing: identical IR."""
    before, after = pair(CONTROL_FLOW, "raw_cond", control_flow.text)
    comparison = compare_results(before, after)
    assert comparison.identical, comparison.diffs


def test_listed_condition_identical(pair, control_flow):
    """`scf.IfOp(actives[t])` where `actives` is a list of raw comparisons (aiter's
    small_m_hgemm.py `tile_actives`) -> `if actives[t]:`; identical IR."""
    assert "        if actives[t]:\n            fx.gpu.barrier()\n" in control_flow.text
    before, after = pair(CONTROL_FLOW, "listed", control_flow.text)
    comparison = compare_results(before, after)
    assert comparison.identical, comparison.diffs


def test_closure_store_through_local_function_identical(pair, control_flow):
    """A nested helper storing into the kernel's tensor: a Python `if` would have to carry
    `Out` out of the helper (the trace fails), so the body becomes `def _then_low()` and the
    `if` only calls it: nothing carried, identical IR."""
    before, after = pair(CONTROL_FLOW, "closure", control_flow.text)
    comparison = compare_results(before, after)
    assert comparison.identical, comparison.diffs


def test_local_function_with_a_carried_loop_identical(pair, control_flow):
    """The local function may hold a `range(..., init=...)` loop: its `yield` is the
    rewriter's scf.yield, not the function's (aiter's fused_compress_attn_gfx1250.py,
    fmha_kernel.py). Identical IR."""
    assert (
        "        def _then_low():\n"
        "            for j, state in range(0, 4, 1, init=[arith.constant(0.0, type=fx.T.f32)]):\n"
    ) in control_flow.text
    before, after = pair(CONTROL_FLOW, "closure_with_loop", control_flow.text)
    comparison = compare_results(before, after)
    assert comparison.identical, comparison.diffs


def test_method_on_python_object_through_local_function_identical(pair, control_flow):
    """A method call on a Python object (`sink.put(...)`): a Python `if` would try to carry
    `sink` as an scf.if result (it cannot be flattened), so the body becomes a local
    function: identical IR."""
    before, after = pair(CONTROL_FLOW, "python_object", control_flow.text)
    comparison = compare_results(before, after)
    assert comparison.identical, comparison.diffs


def test_entered_loops_identical(pair, control_flow):
    """Loops entered with `ip.__enter__()` and left with `ip.__exit__(...)`, in a kernel (nothing
    carried) and in a plain helper (one carried value, which gains @flyc.jit): the body is
    indented under `for ... in range(..., init=[...])`; identical IR."""
    text = control_flow.text
    assert "@flyc.jit\ndef entered_sum(" in text and ".__enter__()" not in text and ".__exit__(" not in text
    assert (
        "    for loop_iv, loop_state in range(c0, n_idx, c1, init=[acc0]):\n"
        "        step = arith.index_cast(fx.T.i32, loop_iv)\n"
        "        acc = ArithValue(loop_state[0])\n"
        "        loop_results = yield [acc + step]\n"
        "    return ArithValue(loop_results)\n"
    ) in text
    before, after = pair(CONTROL_FLOW, "entered", control_flow.text)
    comparison = compare_results(before, after)
    assert comparison.identical, comparison.diffs


def test_raw_mfma_to_atom(pair):
    """`frag_c.store(rocdl.mfma_f32_16x16x16f16(T.f32x4, [a.load(), b.load(), c.load(), 0, 0, 0]))`
    -> `fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 16, fx.Float16))` + `fx.gemm(...)`. The first
    MLIR differs (the atom on the fragments instead of vector loads + `rocdl.mfma` + store);
    after lowering the final MLIR and the ISA are identical."""
    outcome = _migrate(MFMA)
    assert outcome.applied == {"FLY601": 1}, outcome.applied
    assert "    mma = fx.make_mma_atom(fx.rocdl.MFMA(16, 16, 16, fx.Float16))\n" in outcome.text
    assert "    fx.gemm(mma, frag_c, frag_a, frag_b, frag_c)\n" in outcome.text
    before, after = pair(MFMA, "one_atom", outcome.text)
    assert "rocdl.mfma.f32.16x16x16f16" in _mlir(before)
    assert "rocdl.mfma" not in _mlir(after) and "fly.make_mma_atom" in _mlir(after)
    assert before.kernels[0].mfma == after.kernels[0].mfma == ["v_mfma_f32_16x16x16_f16"]
    assert compare_results(before, after).differences == ["raw_mfma_kernel_0: mlir-first differs"]
