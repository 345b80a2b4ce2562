"""Verify a fix by compiling before and after: identical IR, or the difference.

Compiling the same source twice gives byte-identical dumps, and a behaviour-preserving edit
leaves the MLIR identical once ``loc(...)`` is stripped (lines move) and the ISA identical.
So two :class:`CompileResult` s are compared kernel by kernel on the first MLIR (what the DSL
emitted), the final MLIR, the LLVM IR (``21_llvm_ir.ll``, when the dumps have it; debug
metadata stripped) and the ISA.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from flydsl_ls.compile.result import CompileResult

_LOC_ALIAS = re.compile(r"^#loc\d*\s*=")
_ISA_DEBUG = re.compile(r"^\s*\.(loc|file)\b")
_TMP_LABEL = re.compile(r"^\.L(tmp|func_begin)\d+:")
_SECTION = re.compile(r"^\s*\.section\s+([^,\s]+)")
_LLVM_DBG = re.compile(r",\s*!dbg\s+!\d+")
_LLVM_DEBUG_METADATA = re.compile(r"^!\d+\s*=\s*(distinct\s+)?!DI")
# What each compared artifact is called in messages.
EMIT_NAMES = {"mlir-first": "MLIR", "mlir-final": "final MLIR", "llvm": "LLVM IR", "isa": "ISA"}


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
    """The ISA without what line info adds: ``.loc``/``.file``, the ``.Ltmp`` labels they
    need, and the debug sections (their line numbers move with every edit above them)."""
    out, debug = [], False
    for line in isa.splitlines():
        if match := _SECTION.match(line):
            debug = match.group(1).strip('"').startswith(".debug_")
            if debug:
                continue
        elif line.lstrip().startswith((".text", ".data", ".bss")):
            debug = False
        if debug or _ISA_DEBUG.match(line) or _TMP_LABEL.match(line):
            continue
        out.append(line)
    return "\n".join(out) + "\n"


def normalise_llvm(llvm: str) -> str:
    """LLVM IR without debug locations (``, !dbg !N``) and debug-info metadata lines."""
    out = [_LLVM_DBG.sub("", line).rstrip() for line in llvm.splitlines() if not _LLVM_DEBUG_METADATA.match(line)]
    return "\n".join(out) + "\n"


@dataclass
class IrComparison:
    identical: bool
    differences: list[str] = field(default_factory=list)  # "kernel: mlir-first differs" ...
    diffs: dict[str, str] = field(default_factory=dict)  # same keys -> unified diff text
    # same keys -> (first differing line before, after); "" where one side has no line there
    first_lines: dict[str, tuple[str, str]] = field(default_factory=dict)

    def summary(self) -> str:
        if self.identical:
            return "identical IR: MLIR (locations stripped), LLVM IR and ISA are the same before and after"
        return "IR differs: " + "; ".join(self.differences)

    def first_difference(self, where: str = "") -> str:
        """The first difference in words: ``changed the MLIR of k_0 (where): first differing
        line `...` (was `...`)``; "" when identical."""
        if self.identical:
            return ""
        for key, (before, after) in self.first_lines.items():
            kernel, _, emit = key.partition(": ")
            what = EMIT_NAMES.get(emit, emit)
            if after and before:
                line = f"first differing line `{after.strip()}` (was `{before.strip()}`)"
            elif after:
                line = f"first differing line `{after.strip()}` (added)"
            else:
                line = f"first differing line `{before.strip()}` (removed)"
            return f"changed the {what} of {kernel}{f' ({where})' if where else ''}: {line}"
        return "; ".join(self.differences) + (f" ({where})" if where else "")


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
        for emit, normalise in (
            ("mlir-first", strip_locations),
            ("mlir-final", strip_locations),
            ("llvm", normalise_llvm),
            ("isa", normalise_isa),
        ):
            a, b = old.text(emit), new.text(emit)
            if a is None or b is None:
                continue
            a, b = normalise(a), normalise(b)
            if a != b:
                key = f"{old.name}: {emit}"
                comparison.identical = False
                comparison.differences.append(f"{key} differs")
                comparison.first_lines[key] = _first_lines(a, b)
                comparison.diffs[key] = "".join(
                    difflib.unified_diff(
                        a.splitlines(True), b.splitlines(True), f"before/{emit}", f"after/{emit}", n=context
                    )
                )
    return comparison


def _first_lines(a: str, b: str) -> tuple[str, str]:
    """The first differing line of ``a`` and ``b`` (by a line diff)."""
    old, new = a.splitlines(), b.splitlines()
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            return (old[i1] if i1 < i2 else "", new[j1] if j1 < j2 else "")
    return ("", "")
