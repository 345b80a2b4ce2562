"""Compile FlyDSL examples in a warm worker process; read their IR, ISA and resources.

The public surface, for the CLI and the language server:

- :func:`find_examples` (``examples.py``): the ``# flydsl: example`` functions of a source text.
- :class:`CompileService` (``service.py``): ``compile(file, example, arch, *, launch, source,
  timeout, progress, cancel) -> CompileResult``; ``compile_async`` for asyncio.
- :class:`CompileResult` (``result.py``): status, times, kernels (dump paths, resources), error.
- :func:`parse_isa` (``isa.py``), :func:`find_toolchain` (``toolchain.py``),
  :func:`detect_gpu` (``launch.py``), :func:`compare_results` (``verify.py``).

Nothing here imports torch or flydsl; only the worker process does.
"""

from flydsl_ls.compile.examples import Example, choose_example, find_examples, split_target
from flydsl_ls.compile.isa import IsaReport, KernelResources, parse_isa, parse_isa_file
from flydsl_ls.compile.launch import describe as describe_gpu
from flydsl_ls.compile.launch import detect_gpu
from flydsl_ls.compile.result import (
    CompileError,
    CompileResult,
    GpuCheck,
    KernelOutput,
    LaunchReport,
    Status,
)
from flydsl_ls.compile.service import DEFAULT_ARCH, CompileService
from flydsl_ls.compile.toolchain import Toolchain, find_toolchain
from flydsl_ls.compile.verify import IrComparison, compare_results, strip_locations

__all__ = [
    "DEFAULT_ARCH",
    "CompileError",
    "CompileResult",
    "CompileService",
    "Example",
    "GpuCheck",
    "IrComparison",
    "IsaReport",
    "KernelOutput",
    "KernelResources",
    "LaunchReport",
    "Status",
    "Toolchain",
    "choose_example",
    "compare_results",
    "describe_gpu",
    "detect_gpu",
    "find_examples",
    "find_toolchain",
    "parse_isa",
    "parse_isa_file",
    "split_target",
    "strip_locations",
]
