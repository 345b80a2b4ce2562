"""``flydsl-ls compile FILE[::example] [--arch gfx942] [--launch] [--emit mlir|llvm|isa] [--annotate]``.

Exit codes: 0 compiled (a launch that could not run is reported, not an error), 1 the compile
failed, crashed or timed out, 2 nothing to compile (bad arguments, no example, missing
torch/numpy/flydsl/ld.lld, named with its pip install command).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

EMITS = ("mlir", "mlir-first", "llvm", "isa")
EXIT_OK, EXIT_FAILED, EXIT_UNAVAILABLE = 0, 1, 2


def add_parser(subcommands) -> None:
    p = subcommands.add_parser(
        "compile",
        help="compile a `# flydsl: example` of a file (no GPU needed); show resources, IR and ISA",
        description="Compile the example named FILE::NAME (default: the file's first example) "
        "in a worker process and report per-kernel VGPRs, AGPRs, SGPRs, LDS, scratch and "
        "occupancy, plus where the MLIR, LLVM IR and ISA dumps are.",
    )
    p.add_argument("target", metavar="FILE[::example]", help="a Python file, optionally ::example_name")
    p.add_argument("--arch", help="AMD GPU arch, e.g. gfx942 (default: the example's, else gfx942)")
    p.add_argument("--launch", action="store_true", help="also run it on the local ROCm GPU, if there is one")
    p.add_argument("--emit", choices=EMITS, help="print this artifact of every kernel to stdout")
    p.add_argument("--timeout", type=float, default=120.0, metavar="S", help="seconds per request (default 120)")
    p.add_argument("--json", action="store_true", help="print the result as JSON (with each kernel's `lines`)")
    p.add_argument(
        "--annotate", action="store_true",
        help="print the kernel's source lines with the ISA instructions each became and a per-line summary",
    )
    p.add_argument(
        "--no-line-info", dest="line_info", action="store_false",
        help="compile without FlyDSL's debug line tables (no per-line ISA; the instructions are the same)",
    )
    p.add_argument("--list", action="store_true", help="list the file's examples and exit")
    p.add_argument("-v", "--verbose", action="store_true", help="show tracebacks, logs and progress")
    p.set_defaults(run_compile=run)


def _err(message: str) -> None:
    print(message, file=sys.stderr)


def _list(path: Path) -> int:
    from flydsl_ls.compile.examples import find_examples

    examples = find_examples(path.read_text(encoding="utf-8"))
    for ex in examples:
        print(f"{path}:{ex.line}: {ex.name}" + (f"  [{ex.arch}]" if ex.arch else ""))
    if not examples:
        _err(f"{path}: no `# flydsl: example` functions")
    return EXIT_OK if examples else EXIT_UNAVAILABLE


def _no_example(path: Path, file: str) -> bool:
    """Say what to do when the file has no example to compile (before starting a worker)."""
    from flydsl_ls.compile.examples import find_examples
    from flydsl_ls.compile.scaffold_reasons import no_target

    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False  # the service reports it
    if find_examples(source):
        return False
    reason = no_target(source)
    if reason is not None:
        _err(f"{file}: no `# flydsl: example` to compile, and none can be written for it: {reason.message}")
    else:
        _err(f"{file}: no `# flydsl: example` to compile\n"
             f"add one for its kernel builder: flydsl-ls example add {file}"
             "  (or the editor's \"Add compile example\" lens)")
    return True


def _display(path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _report(result, out) -> None:
    status = result.status.value
    timing = f"compile {result.seconds:.2f} s" if result.seconds is not None else ""
    total = f"total {result.total_seconds:.2f} s" if result.total_seconds is not None else ""
    times = ", ".join(t for t in (timing, total) if t)
    example = f"::{result.example}" if result.example else ""
    print(f"{_display(result.file)}{example}  {result.arch}  {status}" + (f"  ({times})" if times else ""), file=out)
    for kernel in result.kernels:
        res = kernel.resources
        print(f"  {kernel.name}: {res.summary() if res else 'no ISA'}", file=out)
        if kernel.mfma:
            print(f"    MMA instructions: {', '.join(kernel.mfma)}", file=out)
        for label, path in (
            ("MLIR (first)", kernel.mlir_first),
            ("MLIR (final)", kernel.mlir_final),
            ("LLVM IR", kernel.llvm_ir),
            ("ISA", kernel.isa),
        ):
            if path:
                print(f"    {label:<13}{path}", file=out)
    if result.launch is not None:
        print(f"launch: {result.launch.message}", file=out)
        if result.launch.ran and result.launch.seconds is not None:
            print(f"  {result.launch.seconds * 1e3:.3f} ms per launch ({result.launch.runs} runs)", file=out)
    for note in result.notes:
        print(f"note: {note}", file=out)


def run(args) -> int:
    from flydsl_ls.compile.examples import split_target
    from flydsl_ls.compile.result import Status
    from flydsl_ls.compile.service import CompileService

    file, example = split_target(args.target)
    path = Path(file)
    if not path.is_file():
        _err(f"error: {file}: no such file")
        return EXIT_UNAVAILABLE
    if args.list:
        return _list(path)
    if not args.json and _no_example(path, file):
        return EXIT_UNAVAILABLE
    progress = (lambda message: _err(f"... {message}")) if args.verbose else None
    with CompileService(default_timeout=args.timeout) as service:
        result = service.compile(
            path, example, args.arch, launch=args.launch, line_info=args.line_info or args.annotate, progress=progress
        )

    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        _report(result, sys.stderr if args.emit else sys.stdout)
    if result.error is not None:
        err = result.error
        where = f"{_display(err.file)}:{err.line}:{(err.column or 0) + 1}: " if err.file and err.line else ""
        _err(f"{where}error: {err.message}")
        if args.verbose and err.detail:
            _err(err.detail)
        if args.verbose and result.log:
            _err(result.log)
    if args.annotate and result.ok:
        from flydsl_ls.compile.annotate import annotate

        for kernel in result.kernels:
            sys.stdout.write(annotate(kernel.name, kernel.lines, len(kernel.instructions), display=_display))
    if args.emit and result.ok:
        for kernel in result.kernels:
            text = kernel.text(args.emit)
            if text is None:
                _err(f"{kernel.name}: no {args.emit} dump")
                continue
            if len(result.kernels) > 1:
                print(f"// ===== {kernel.name} =====")
            sys.stdout.write(text)
    if result.status is Status.OK:
        return EXIT_OK
    if result.status is Status.UNAVAILABLE:
        return EXIT_UNAVAILABLE
    return EXIT_FAILED
