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

# Read on first use (PEP 562): `check` loads the package for its argument parser only, and
# the service would bring asyncio and subprocess machinery in (20 ms of a run's start-up).
_EXPORTS = {
    "Example": ("flydsl_ls.compile.examples", "Example"),
    "choose_example": ("flydsl_ls.compile.examples", "choose_example"),
    "find_examples": ("flydsl_ls.compile.examples", "find_examples"),
    "split_target": ("flydsl_ls.compile.examples", "split_target"),
    "IsaReport": ("flydsl_ls.compile.isa", "IsaReport"),
    "KernelResources": ("flydsl_ls.compile.isa", "KernelResources"),
    "parse_isa": ("flydsl_ls.compile.isa", "parse_isa"),
    "parse_isa_file": ("flydsl_ls.compile.isa", "parse_isa_file"),
    "describe_gpu": ("flydsl_ls.compile.launch", "describe"),
    "detect_gpu": ("flydsl_ls.compile.launch", "detect_gpu"),
    "CompileError": ("flydsl_ls.compile.result", "CompileError"),
    "CompileResult": ("flydsl_ls.compile.result", "CompileResult"),
    "GpuCheck": ("flydsl_ls.compile.result", "GpuCheck"),
    "KernelOutput": ("flydsl_ls.compile.result", "KernelOutput"),
    "LaunchReport": ("flydsl_ls.compile.result", "LaunchReport"),
    "Status": ("flydsl_ls.compile.result", "Status"),
    "DEFAULT_ARCH": ("flydsl_ls.compile.service", "DEFAULT_ARCH"),
    "CompileService": ("flydsl_ls.compile.service", "CompileService"),
    "Toolchain": ("flydsl_ls.compile.toolchain", "Toolchain"),
    "find_toolchain": ("flydsl_ls.compile.toolchain", "find_toolchain"),
    "IrComparison": ("flydsl_ls.compile.verify", "IrComparison"),
    "compare_results": ("flydsl_ls.compile.verify", "compare_results"),
    "strip_locations": ("flydsl_ls.compile.verify", "strip_locations"),
}


def __getattr__(name: str):
    found = _EXPORTS.get(name)
    if found is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(found[0]), found[1])
    globals()[name] = value
    return value


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
