"""The legacy helper layers kernels ship (aiter's kernels/buffer_ops.py, vector.py, ...)
implement the legacy API on the raw dialects: their own bodies are not reported, their
callers are."""

from __future__ import annotations

from flydsl_ls.analysis.engine import AnalysisRequest, analyze
from flydsl_ls.analysis.rules.context import AnalysisOptions

CREATE_PTR = (
    "from flydsl._mlir import ir\nfrom flydsl._mlir.dialects import llvm\n"
    "def create_llvm_ptr(value, address_space=1):\n"
    "    ptr_type = ir.Type.parse(f'!llvm.ptr<{address_space}>')\n"
    "    return llvm.IntToPtrOp(ptr_type, value).result\n"
)


def codes(path: str) -> list[str]:
    return [d.code for d in analyze(AnalysisRequest(CREATE_PTR, options=AnalysisOptions(), path=path)).diagnostics]


def test_a_shim_body_is_not_flagged_where_a_kernel_would_be():
    assert "FLY202" in codes("/proj/aiter/ops/flydsl/kernels/my_kernel.py")
    assert "FLY202" not in codes("/proj/aiter/ops/flydsl/kernels/buffer_ops.py")


GLOBAL_STORE = (
    "from flydsl._mlir.dialects import llvm as _llvm\n"
    "def global_store(value, ptr):\n    _llvm.StoreOp(value, ptr)\n"
)


def test_raw_llvm_memory_ops_in_a_shim_body_are_not_flagged():
    """FLY305 as the other raw-dialect rules: FlyDSL's kernels/common/mem_ops.py
    `global_store` (found wrong in the 2026-12-02 precision sample)."""
    run = lambda path: [d.code for d in analyze(AnalysisRequest(GLOBAL_STORE, options=AnalysisOptions(), path=path)).diagnostics]  # noqa: E731
    assert "FLY305" in run("/proj/kernels/attention/my_kernel.py")
    assert "FLY305" not in run("/proj/kernels/common/mem_ops.py")
    assert "FLY305" not in run("/proj/aiter/ops/flydsl/kernels/buffer_ops.py")
