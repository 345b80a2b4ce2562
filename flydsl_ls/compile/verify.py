"""Verify a fix by compiling before and after: identical IR, or the difference.

Compiling the same source twice gives byte-identical dumps, and a behaviour-preserving edit
leaves the MLIR identical once ``loc(...)`` is stripped (lines move) and the ISA identical.
So two :class:`CompileResult` s are compared kernel by kernel on the first MLIR (what the DSL
emitted), the final MLIR and the ISA.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from flydsl_ls.compile.result import CompileResult

_LOC_ALIAS = re.compile(r"^#loc\d*\s*=")
_ISA_DEBUG = re.compile(r"^\s*\.(loc|file)\b")


def strip_locations(mlir: str) -> str:
    """``mlir`` without ``loc(...)`` attachments and ``#locN = ...`` alias lines."""
    out_lines = []
    for line in mlir.splitlines():
        if _LOC_ALIAS.match(line):
            continue
        out_lines.append(_strip_loc_calls(line).rstrip())
    return "\n".join(out_lines) + "\n"


def _strip_loc_calls(line: str) -> str:
    out: list[str] = []
    i = 0
    while True:
        j = line.find("loc(", i)
        if j < 0:
            out.append(line[i:])
            return "".join(out)
        if j > 0 and (line[j - 1].isalnum() or line[j - 1] in "_#."):
            out.append(line[i : j + 4])
            i = j + 4
            continue
        out.append(line[i:j].rstrip(" "))
        depth, k, in_string = 0, j + 3, False
        while k < len(line):
            ch = line[k]
            if in_string:
                if ch == "\\":
                    k += 1
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        i = k + 1


def normalise_isa(isa: str) -> str:
    return "\n".join(line for line in isa.splitlines() if not _ISA_DEBUG.match(line)) + "\n"


@dataclass
class IrComparison:
    identical: bool
    differences: list[str] = field(default_factory=list)  # "kernel: mlir-first differs" ...
    diffs: dict[str, str] = field(default_factory=dict)  # same keys -> unified diff text

    def summary(self) -> str:
        if self.identical:
            return "identical IR: MLIR (locations stripped) and ISA are the same before and after"
        return "IR differs: " + "; ".join(self.differences)


def compare_results(before: CompileResult, after: CompileResult, *, context: int = 3) -> IrComparison:
    """Compare two successful compiles of the same example."""
    if not (before.ok and after.ok):
        failed = "before" if not before.ok else "after"
        return IrComparison(False, [f"the {failed} compile did not succeed"])
    comparison = IrComparison(True)
    names_before = [k.name for k in before.kernels]
    names_after = [k.name for k in after.kernels]
    if names_before != names_after:
        comparison.identical = False
        comparison.differences.append(f"kernels {names_before} became {names_after}")
        return comparison
    for old, new in zip(before.kernels, after.kernels):
        for emit, normalise in (("mlir-first", strip_locations), ("mlir-final", strip_locations), ("isa", normalise_isa)):
            a, b = old.text(emit), new.text(emit)
            if a is None or b is None:
                continue
            a, b = normalise(a), normalise(b)
            if a != b:
                key = f"{old.name}: {emit}"
                comparison.identical = False
                comparison.differences.append(f"{key} differs")
                comparison.diffs[key] = "".join(
                    difflib.unified_diff(
                        a.splitlines(True), b.splitlines(True), f"before/{emit}", f"after/{emit}", n=context
                    )
                )
    return comparison
