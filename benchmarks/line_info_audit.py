"""Source <-> ISA per line on real kernels: does line info leave the instructions alone, and
how many of a kernel file's lines get instructions?

Run by hand (never under pytest); it prints figures, it asserts nothing.

    nice python benchmarks/line_info_audit.py                                   # FlyDSL's kernels
    nice python benchmarks/line_info_audit.py --tree /work/corpus/aiter/aiter/ops/flydsl \\
        --package aiter/ops/flydsl --tests /tmp/aiter_tests --python /work/venv031/bin/python

The tree is prepared as ``scaffold_audit.py`` does (a scratch copy, the tests beside it),
and every file that defines a launcher gets the example "Add a compile example" writes. Each
example that compiles is compiled twice, without and with FlyDSL's debug line tables
(``CompileService.compile(line_info=...)``), COMPILE_ONLY on the CPU, for the marker's arch
(else ``--arch``). Per kernel it compares:

- **the instruction stream**: every instruction of the ``.s`` with its operands, in order
  (``flydsl_ls.compile.lines.located``), and the resources (VGPRs, SGPRs, LDS, scratch);
- **coverage**: of the kernel file's lines named by the first MLIR's ``loc(...)``, how many
  get ISA instructions in the line-info compile. Two denominators: the first MLIR of the
  compile without line info (the locations FlyDSL always writes) and that of the compile
  with it (FlyDSL then also gives each statement its own line);
- **where the others go**: of the line-info compile's first-MLIR lines, how many the last
  MLIR still names (the rest folded by FlyDSL's passes: layout algebra, constants, common
  subexpressions), how many the LLVM IR's ``!DILocation``s name (constants have no
  location in LLVM IR), and how many get instructions (the rest folded by LLVM into
  other lines' instructions, or left with no location by its backend).
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from scaffold_audit import add_arguments, has_launcher, insert_example, prepare, primary  # noqa: E402

from flydsl_ls.compile import CompileService  # noqa: E402
from flydsl_ls.compile.lines import located  # noqa: E402
from flydsl_ls.compile.scaffold import example_for, targets  # noqa: E402
from flydsl_ls.compile.service import _chains  # noqa: E402 - the service's reading of them

_LOC = re.compile(r'loc\("([^"]+)":(\d+):\d+\)')


_ALIAS = re.compile(r"^(#loc\d*) = (loc\(.*\))$", re.M)
_REFERENCE = re.compile(r"#loc\d*\b")


def mlir_lines(path: Path | None, file: str) -> set[int]:
    """The lines of ``file`` that the MLIR at ``path`` names in its locations (through its
    ``#loc`` aliases)."""
    if path is None:
        return set()
    text = path.read_text(encoding="utf-8", errors="replace")
    real = os.path.realpath(file)
    aliases = dict(_ALIAS.findall(text))
    found: set[int] = set()
    todo, seen = [text], set()
    while todo:
        chunk = todo.pop()
        found |= {int(line) for name, line in _LOC.findall(chunk) if os.path.realpath(name) == real}
        for reference in _REFERENCE.findall(chunk):
            if reference not in seen and reference in aliases:
                seen.add(reference)
                todo.append(aliases[reference])
    return found


_DIFILE = re.compile(r'(![0-9]+) = !DIFile\(filename: "([^"]*)", directory: "([^"]*)"')
_DISCOPE = re.compile(r"(![0-9]+) = (?:distinct )?!DI(?:Subprogram|LexicalBlock\w*)\(([^\n]*)")
_DILOCATION = re.compile(r"!DILocation\(line: (\d+), column: (\d+), scope: (![0-9]+)")


def llvm_ir_lines(path: Path | None, file: str) -> set[int]:
    """The lines of ``file`` that the LLVM IR at ``path`` names in its ``!DILocation``s,
    with the call lines of the chains the compile worker numbered into their columns."""
    if path is None:
        return set()
    text = path.read_text(encoding="utf-8", errors="replace")
    real = os.path.realpath(file)
    chains = _chains(path.parent.parent.parent) or {}  # the run's folder (ir/<kernel>/<file>)
    files = {key: os.path.join(folder, name) for key, name, folder in _DIFILE.findall(text)}
    scope_file = {}
    for key, fields in _DISCOPE.findall(text):
        found = re.search(r"file: (![0-9]+)", fields)
        if found:
            scope_file[key] = files.get(found.group(1))
    lines = set()
    for line, column, scope in _DILOCATION.findall(text):
        if scope_file.get(scope) and os.path.realpath(scope_file[scope]) == real:
            lines.add(int(line))
        lines.update(frame_line for frame_file, frame_line in chains.get(int(column), [])[1:] if os.path.realpath(frame_file) == real)
    return lines


def host_lines(source: str) -> set[int]:
    """The lines of the ``@flyc.jit`` launchers (decorators included) less those of the
    functions defined in them (a kernel, a device helper): host code, which the first MLIR
    names (the launch) but which never becomes device ISA."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            ast.unparse(d.func if isinstance(d, ast.Call) else d).split(".")[-1] == "jit" for d in node.decorator_list
        ):
            lines.update(range(min(d.lineno for d in node.decorator_list), node.end_lineno + 1))
            for inner in ast.walk(node):
                if inner is not node and isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                    first = min([inner.lineno, *(d.lineno for d in getattr(inner, "decorator_list", []))])
                    lines.difference_update(range(first, inner.end_lineno + 1))
    return lines


def stream(kernel) -> list[str]:
    return [item.text for item in located(kernel.isa.read_text(encoding="utf-8", errors="replace"))] if kernel.isa else []


def resources(kernel) -> tuple:
    r = kernel.resources
    return (r.vgprs, r.agprs, r.sgprs, r.lds_bytes, r.scratch_bytes) if r else ()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_arguments(parser)
    parser.add_argument("--missing", action="store_true", help="print each kernel's lines named by the first MLIR without ISA")
    options = parser.parse_args()
    scratch = Path(options.keep) if options.keep else Path(tempfile.mkdtemp(prefix="line-info-audit-"))
    package_dir = prepare(scratch, options)
    files = sorted(p for p in package_dir.rglob("*.py") if not options.only or any(o in str(p) for o in options.only))
    service = CompileService(python=options.python, cache=scratch / "cache", default_arch=options.arch,
                             default_timeout=options.timeout, keep_runs=4)
    started = time.perf_counter()
    kernels = same = 0
    covered = {"plain": [0, 0], "line info": [0, 0], "device": [0, 0]}
    stages = [0, 0, 0, 0]  # line-info first MLIR's lines: named there, by the last MLIR, by the LLVM IR, with ISA
    seconds = {"plain": 0.0, "line info": 0.0}
    try:
        for path in files:
            source = path.read_text(encoding="utf-8")
            found = targets(source) if has_launcher(source) else []
            if not found:
                continue
            try:
                insertion = example_for(source, primary(found).name, path)
            except LookupError:
                continue
            example, arch = insert_example(path, source, insertion, options.arch)
            plain = service.compile(path, example.name, arch)
            if not plain.ok:
                continue
            lined = service.compile(path, example.name, arch, line_info=True)
            rel = str(path.relative_to(package_dir))
            if not lined.ok:
                print(f"{rel:58s} {arch}: compiles without line info, not with it: {lined.error.message[:120]}")
                continue
            seconds["plain"] += plain.seconds or 0
            seconds["line info"] += lined.seconds or 0
            host = host_lines(path.read_text(encoding="utf-8"))
            for before, after in zip(plain.kernels, lined.kernels):
                kernels += 1
                identical = stream(before) == stream(after) and resources(before) == resources(after)
                same += identical
                with_isa = {line.line for line in after.lines if os.path.realpath(line.file) == os.path.realpath(path)}
                shares = []
                for label, first in (("plain", before.mlir_first), ("line info", after.mlir_first)):
                    named = mlir_lines(first, str(path))
                    hit = len(named & with_isa)
                    covered[label][0] += hit
                    covered[label][1] += len(named)
                    shares.append(f"{hit}/{len(named)}")
                first = mlir_lines(after.mlir_first, str(path))
                for stage, kept in enumerate((first, mlir_lines(after.mlir_final, str(path)),
                                              llvm_ir_lines(after.llvm_ir, str(path)), with_isa)):
                    stages[stage] += len(first & kept)
                device = mlir_lines(before.mlir_first, str(path)) - host
                covered["device"][0] += len(device & with_isa)
                covered["device"][1] += len(device)
                other = sorted({Path(line.file).name for line in after.lines} - {path.name})
                print(f"{rel:58s} {after.name[:28]:28s} {arch} ISA {'identical' if identical else 'DIFFERS'}"
                      f" ({len(stream(after))} instr); lines with ISA / in first MLIR: {shares[0]} (plain MLIR),"
                      f" {shares[1]} (line-info MLIR)" + (f"; also in {', '.join(other)}" if other else ""), flush=True)
                if options.missing:
                    text = path.read_text(encoding="utf-8").splitlines()
                    for number in sorted(mlir_lines(before.mlir_first, str(path)) - with_isa):
                        print(f"    {number:5d} | {text[number - 1].strip()[:100]}")
    finally:
        service.close()

    print()
    print(f"{kernels} kernels compiled both ways: instruction stream and resources identical in {same}")
    against = {"plain": "the plain compile's first MLIR", "line info": "the line-info compile's first MLIR",
               "device": "the plain compile's first MLIR less the @flyc.jit launchers' lines"}
    for label, (hit, named) in covered.items():
        print(f"coverage against {against[label]}: {hit}/{named} = {100 * hit / max(1, named):.0f}% "
              "of the kernel files' lines it names get ISA instructions")
    print(f"the line-info compile's first-MLIR lines ({stages[0]}): the last MLIR names {stages[1]}, the LLVM IR "
          f"{stages[2]}, the ISA has instructions for {stages[3]}")
    print(f"compile seconds (flyc.compile): {seconds['plain']:.1f} without line info, {seconds['line info']:.1f} with;"
          f" whole audit {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
