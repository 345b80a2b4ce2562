"""What a compile (or launch) request gives back. Plain data, JSON-friendly, no LSP types."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import Enum
from functools import cached_property
from pathlib import Path

from flydsl_ls.compile.isa import IsaReport, KernelResources
from flydsl_ls.compile.lines import Located, SourceLine, by_line


class Status(str, Enum):
    OK = "ok"
    ERROR = "error"  # the example or FlyDSL raised; see ``error``
    CRASH = "crash"  # the worker process died (LLVM abort, SIGABRT, ...); it was restarted
    TIMEOUT = "timeout"  # the request took too long; the worker was killed and restarted
    CANCELLED = "cancelled"
    UNAVAILABLE = "unavailable"  # torch / numpy / flydsl / ld.lld missing, or the example not found


@dataclass
class CompileError:
    message: str
    kind: str = "python"  # python | mlir | llvm | crash | timeout | cancelled | setup | example
    file: str | None = None  # the user's file the line refers to
    line: int | None = None  # 1-based
    column: int | None = None  # 0-based
    detail: str = ""  # traceback or log tail

    def location(self) -> str:
        if self.file and self.line:
            return f"{self.file}:{self.line}:{(self.column or 0) + 1}"
        return ""


@dataclass
class KernelOutput:
    """One GPU kernel of the example: its dumps and resources."""

    name: str
    dump_dir: Path
    mlir_first: Path | None = None  # 00_origin.mlir: what the DSL emitted
    mlir_final: Path | None = None  # last MLIR stage before the binary is made
    llvm_ir: Path | None = None  # 21_llvm_ir.ll
    isa: Path | None = None  # 22_final_isa.s
    resources: KernelResources | None = None
    instructions: list[str] = field(default_factory=list)  # ISA mnemonics, program order
    located: list[Located] = field(default_factory=list)  # every instruction with its lines (line info)

    @cached_property
    def lines(self) -> list[SourceLine]:
        """The instructions by source line (empty when compiled without line info); read
        once ``located`` is set (the compile service sets it as it makes the output)."""
        return by_line(self.located)

    @property
    def mfma(self) -> list[str]:
        return IsaReport(None, [], self.instructions).mfma

    def path(self, emit: str) -> Path | None:
        return {
            "mlir": self.mlir_final,
            "mlir-first": self.mlir_first,
            "mlir-final": self.mlir_final,
            "llvm": self.llvm_ir,
            "isa": self.isa,
        }[emit]

    def text(self, emit: str) -> str | None:
        path = self.path(emit)
        return path.read_text(encoding="utf-8", errors="replace") if path else None


@dataclass
class GpuCheck:
    name: str  # what was checked, e.g. "rocm_agent_enumerator"
    ok: bool
    detail: str


@dataclass
class LaunchReport:
    ran: bool
    checks: list[GpuCheck] = field(default_factory=list)
    seconds: float | None = None  # mean time per launch (synchronised), when it ran
    runs: int = 0
    message: str = ""


@dataclass
class CompileResult:
    status: Status
    file: str
    example: str | None
    arch: str
    seconds: float | None = None  # flyc.compile alone
    total_seconds: float | None = None  # request round trip, including the worker start
    kernels: list[KernelOutput] = field(default_factory=list)
    error: CompileError | None = None
    dump_dir: Path | None = None
    log: str = ""  # what FlyDSL/LLVM printed during the request
    launch: LaunchReport | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    def kernel(self, name: str | None = None) -> KernelOutput:
        if name is None:
            return self.kernels[0]
        return next(k for k in self.kernels if k.name == name)

    def to_dict(self) -> dict:
        def convert(value):
            if isinstance(value, Path):
                return str(value)
            if isinstance(value, Enum):
                return value.value
            if isinstance(value, dict):
                return {k: convert(v) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return [convert(v) for v in value]
            return value

        data = convert(asdict(self))
        for kernel, out in zip(self.kernels, data["kernels"]):
            out.pop("instructions", None)
            out.pop("located", None)
            out["mfma"] = kernel.mfma
            out["lines"] = [line.to_dict() for line in kernel.lines]
        return data
