"""FLY202's raw-address fixes, compiled with FlyDSL before and after: a hand-made
`!llvm.ptr` from an integer address (`buffer_ops.create_llvm_ptr(a, address_space=N)`,
`llvm.inttoptr(ty, a)`, `llvm.IntToPtrOp(ty, a).result`) becomes
`fx.to_llvm_ptr(fx.inttoptr(fx.PointerType.get(fx.Int8.ir_type, fx.AddressSpace.X), a))`.

The kernel (kernels/llvm_pointers.py, ours) reads and writes LDS and a tensor through such
pointers with raw llvm loads and stores. Findings (gfx942): the first MLIR has
`fly.inttoptr` + `fly.to_llvm_ptr` where `llvm.inttoptr` was (same `!llvm.ptr<N>` result,
so the raw llvm consumers are unchanged); they lower back to the same `llvm.inttoptr`, and
the final MLIR, the LLVM IR and the ISA are identical. The fixes are still unsafe: the
address space is read off the source, and a raw i32 address handed to `create_llvm_ptr`
would be sign-extended by the fix's `fx.Int64(...)`.
"""

from __future__ import annotations

import re
from pathlib import Path

from flydsl_ls.compile import compare_results
from flydsl_ls.compile.verify import strip_locations
from tests.compile.conftest import compile_cache, service  # noqa: F401 (fixtures)
from tests.compiler import needs_compiler
from tests.rule_cases import diagnostics, fixed

KERNELS = Path(__file__).resolve().parent / "kernels"
SETTINGS = {"flydsl_version": "0.5.0", "target_arch": "gfx942"}

pytestmark = needs_compiler


def test_raw_addresses_become_fx_inttoptr_and_lower_to_the_same_code(service):  # noqa: F811
    path = KERNELS / "llvm_pointers.py"
    source = path.read_text(encoding="utf-8")
    found = diagnostics("FLY202", source, SETTINGS)
    assert len(found) == 6 and all(d.fix is not None for d in found), [d.message for d in found]
    after = fixed("FLY202", source, unsafe=True, settings=SETTINGS)
    assert diagnostics("FLY202", after, SETTINGS) == []
    code = after.split('"""', 2)[2]  # below the docstring
    assert "create_llvm_ptr(" not in code and "llvm.inttoptr(" not in code and "IntToPtrOp(" not in code
    assert after.count("fx.AddressSpace.Shared") == 5 and after.count("fx.AddressSpace.Global") == 1
    # the index address is made i64, as create_llvm_ptr did; the fx.Int64 one is not re-wrapped
    assert "fx.Int64(lane_bytes)))\n" in after and "fx.Int64(lane_bytes) + 4))\n" in after

    before = service.compile(path, "example", "gfx942")
    assert before.ok, before.error
    result = service.compile(path, "example", "gfx942", source=after)
    assert result.ok, f"the fixed source does not compile: {result.error}"
    comparison = compare_results(before, result)
    assert comparison.differences == ["pointers_kernel_0: mlir-first differs"]
    old = strip_locations(before.kernels[0].text("mlir-first"))
    new = strip_locations(result.kernels[0].text("mlir-first"))
    assert len(re.findall(r"llvm\.inttoptr", old)) == 6 and "fly.inttoptr" not in old
    assert "llvm.inttoptr" not in new
    assert len(re.findall(r"fly\.inttoptr\(%\w+\) : \(i(32|64)\) -> !fly\.ptr<i8, shared>", new)) == 5
    assert len(re.findall(r"fly\.inttoptr\(%\w+\) : \(i64\) -> !fly\.ptr<i8, global>", new)) == 1
    assert len(re.findall(r"fly\.to_llvm_ptr\(%\w+\) \{llvm_address_space = 3 : i32\}", new)) == 5
    assert len(re.findall(r"fly\.to_llvm_ptr\(%\w+\) \{llvm_address_space = 1 : i32\}", new)) == 1
