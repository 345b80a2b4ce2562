"""What the compile commands show and return: the message, the JSON result, the diagnostics
of a compile error. Functions of a :class:`CompileResult`: no server state, no I/O (the IR
and ISA stay files under the service's run folder; only their paths travel).

The JSON result (camelCase, like the rest of LSP) is the contract with the VS Code and
Neovim clients; docs/compile.md, "In the editor", documents it.
"""

from __future__ import annotations

import re
from dataclasses import asdict
from pathlib import Path
from typing import Any

from lsprotocol import types

from flydsl_ls.analysis.model.text import Encoding, LineIndex, Position, Range
from flydsl_ls.compile import CompileResult, IrComparison, KernelOutput, Status
from flydsl_ls.server.edits import lsp_range

SOURCE = "flydsl-ls compile"  # not "flydsl-ls": code actions and suppressions ignore these
ERROR_CODE = "compile-error"
# key in the JSON result -> KernelOutput attribute
FILES = (("mlirFirst", "mlir_first"), ("mlirFinal", "mlir_final"), ("llvm", "llvm_ir"), ("isa", "isa"))


def camel(value: Any) -> Any:
    """snake_case keys to camelCase, recursively; paths to strings, tuples to lists."""
    if isinstance(value, dict):
        return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), str(k)): camel(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [camel(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def _seconds(value: float | None) -> str:
    return f"{value:.2f} s" if value is not None else "?"


# --- one compile ------------------------------------------------------------------------
def kernel_json(kernel: KernelOutput) -> dict:
    files = {key: getattr(kernel, attr) for key, attr in FILES if getattr(kernel, attr) is not None}
    return {
        "name": kernel.name,
        "summary": kernel.resources.summary() if kernel.resources else None,
        "resources": camel(kernel.resources.to_dict()) if kernel.resources else None,
        "mfma": kernel.mfma,
        "files": {key: str(path) for key, path in files.items()},
        "uris": {key: Path(path).as_uri() for key, path in files.items()},
        # per source line, when compiled with line info (docs/compile.md)
        "lines": [camel(line.to_dict()) for line in kernel.lines],
        # what an ISA view needs: each instruction's row in the ISA file and the source lines
        # it belongs to, its own first, then the calls it came from
        "isaRows": [
            {"row": item.row, "lines": [[item.file, item.line], *map(list, item.calls)]}
            for item in kernel.located
            if item.file is not None
        ],
    }


def headline(result: CompileResult) -> str:
    name = Path(result.file).name
    target = f"{name}::{result.example} ({result.arch})" if result.example else f"{name} ({result.arch})"
    status = result.status
    if status is Status.OK:
        # the resources on the first line: a notification shows that line only (VS Code)
        first = result.kernels[0] if result.kernels else None
        resources = f": {first.name}: {first.resources.summary()}" if first and first.resources else ""
        more = f" (+{len(result.kernels) - 1} more kernels)" if len(result.kernels) > 1 else ""
        return f"{target}: compiled in {_seconds(result.seconds)} (total {_seconds(result.total_seconds)}){resources}{more}"
    reason = result.error.message if result.error else status.value
    where = f" at line {result.error.line}" if result.error and result.error.line else ""
    verb = {
        Status.ERROR: "compile failed",
        Status.CRASH: "compiler crashed",
        Status.TIMEOUT: "compile timed out",
        Status.CANCELLED: "compile cancelled",
        Status.UNAVAILABLE: "cannot compile",
    }[status]
    return f"{target}: {verb}{where}: {reason}"


def message(result: CompileResult, *, files: bool = True) -> str:
    """The text of ``window/showMessage`` (several lines; editors show it as a notification)."""
    lines = [headline(result)]
    for kernel in result.kernels:
        res = kernel.resources
        lines.append(f"{kernel.name}: {res.summary() if res else 'no ISA'}")
        if kernel.mfma:
            lines.append(f"  MMA instructions: {', '.join(kernel.mfma)}")
    if files and result.ok and result.kernels:
        lines.append(f"IR and ISA: {result.kernels[0].dump_dir.parent}")
    if result.launch is not None:
        lines.append(f"launch: {result.launch.message}")
        if result.launch.ran and result.launch.seconds is not None:
            lines.append(f"  {result.launch.seconds * 1e3:.3f} ms per launch ({result.launch.runs} runs)")
    return "\n".join(lines)


def message_type(result: CompileResult) -> types.MessageType:
    """Info when it compiled; a warning when it could not be tried (cancelled, or no
    compiler or no example: the editor works, compiling does not); an error when the
    compile itself failed, crashed or timed out."""
    if result.ok:
        return types.MessageType.Info
    if result.status in (Status.CANCELLED, Status.UNAVAILABLE):
        return types.MessageType.Warning
    return types.MessageType.Error


def result_json(command: str, uri: str, result: CompileResult) -> dict:
    error = result.error
    launch = result.launch
    return {
        "command": command,
        "status": result.status.value,
        "ok": result.ok,
        "message": message(result),
        "uri": uri,
        "file": result.file,
        "example": result.example,
        "arch": result.arch,
        "seconds": result.seconds,
        "totalSeconds": result.total_seconds,
        "runDir": str(result.dump_dir) if result.dump_dir else None,
        "kernels": [kernel_json(k) for k in result.kernels],
        "error": camel(asdict(error)) if error else None,
        "launch": camel(asdict(launch)) if launch else None,
        "notes": list(result.notes),
        "shown": None,
    }


# --- a compile error as a diagnostic ---------------------------------------------------
def error_diagnostics(
    result: CompileResult, path: Path | None, text: str, encoding: Encoding
) -> list[types.Diagnostic]:
    """The compile error at the source line it points to, when it points into ``path``
    (whose compiled text was ``text``); else nothing (the message says it all)."""
    error = result.error
    if result.status is not Status.ERROR or error is None or not error.line or not error.file:
        return []
    if path is None or Path(error.file).resolve() != path.resolve():
        return []
    index = LineIndex(text)
    line = error.line - 1
    if not 0 <= line < len(index.lines):
        return []
    content = index.line_text(line)
    end = len(content.rstrip())
    start = index.from_ast(error.line, error.column or 0).column
    indent = len(content) - len(content.lstrip())
    if error.column is None or start >= end:
        start = indent
    rng = lsp_range(Range(Position(line, start), Position(line, max(end, start))), index, encoding)
    kind = "MLIR" if error.kind == "mlir" else "Python" if error.kind in ("python", "example") else error.kind
    return [
        types.Diagnostic(
            range=rng,
            message=f"{error.message}\n(compiling {result.example} for {result.arch}; {kind} error)",
            severity=types.DiagnosticSeverity.Error,
            code=ERROR_CODE,
            source=SOURCE,
            data={"compile": True, "status": result.status.value, "runDir": str(result.dump_dir or "")},
        )
    ]


# --- verify a fix -----------------------------------------------------------------------
def verify_message(
    fix: dict,
    code: str,
    comparison: IrComparison | None,
    before: CompileResult,
    after: CompileResult | None,
) -> str:
    title, applicability = str(fix.get("title", "?")), str(fix.get("applicability", "?"))
    what = f"{code} fix “{title}”" + ("" if f"({applicability})" in title else f" ({applicability})")
    if not before.ok:
        return f"verify {what}: the example does not compile before the fix, nothing to compare.\n{headline(before)}"
    if after is None or not after.ok:
        detail = headline(after) if after else ""
        return f"verify {what}: the example does not compile after the fix.\n{detail}".rstrip()
    assert comparison is not None
    if comparison.identical:
        return (
            f"verify {what}: identical IR for {before.example} ({before.arch}): MLIR (locations stripped), LLVM IR "
            "and ISA are the same before and after the fix."
        )
    isa_same = not any(key.endswith(": isa differs") for key in comparison.differences)
    return (
        f"verify {what}: IR differs for {before.example} ({before.arch}): "
        + "; ".join(comparison.differences)
        + ("; the ISA is the same" if isa_same else "")
    )


def verify_json(
    uri: str,
    code: str,
    fix: dict,
    before: CompileResult,
    after: CompileResult | None,
    comparison: IrComparison | None,
    diff_file: Path | None,
) -> dict:
    if not before.ok or after is None or not after.ok or comparison is None:
        verdict = "failed"
    else:
        verdict = "identical" if comparison.identical else "different"
    return {
        "command": "flydsl-ls.verifyFix",
        "status": verdict,
        "ok": verdict != "failed",
        "identical": verdict == "identical",
        "message": verify_message(fix, code, comparison, before, after),
        "uri": uri,
        "code": code,
        "fix": {"title": fix.get("title"), "applicability": fix.get("applicability")},
        "example": before.example,
        "arch": before.arch,
        "differences": list(comparison.differences) if comparison else [],
        "diffs": dict(comparison.diffs) if comparison else {},
        "diffFile": str(diff_file) if diff_file else None,
        "before": result_json("flydsl-ls.compile", uri, before),
        "after": result_json("flydsl-ls.compile", uri, after) if after else None,
        "shown": None,
    }


def diff_text(comparison: IrComparison) -> str:
    parts = []
    for key, diff in comparison.diffs.items():
        parts.append(f"# {key}\n{diff}")
    return "\n".join(parts)
