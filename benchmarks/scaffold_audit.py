"""How often does "Add a compile example" write an example that compiles as inserted?

Run by hand (never under pytest); it prints figures, it asserts nothing.

    nice python benchmarks/scaffold_audit.py                                  # FlyDSL's kernels
    nice python benchmarks/scaffold_audit.py --tree /work/corpus/aiter/aiter/ops/flydsl --package aiter/ops/flydsl
    python benchmarks/scaffold_audit.py --only norm/ --only gemm/ -v

The kernel tree is copied into a scratch folder under its package path (``kernels/`` for
FlyDSL, so ``from kernels.common import ...`` resolves; the scratch root goes on the
worker's ``PYTHONPATH``), with the repository's ``tests/`` beside it when there is one (the
scaffold reads the tests' calls of a builder for its arguments). For every ``.py`` file of
the tree:

- **denominator**: the file defines a launcher, i.e. an ``@flyc.jit`` function that launches
  a kernel (``.launch(...)``, itself or through a plain function it calls), at module level
  or inside a builder. Files without one (helpers,
  ``__init__``) are counted apart;
- **the target**: the first builder or launcher the server offers the action on (its
  CodeLens order: file order), preferring public names (no leading ``_``); a file with a
  launcher but no offer counts as a failure ("not offered");
- the example is made by ``flydsl_ls.compile.scaffold.example_for`` (what the server's code
  action and lens insert), applied to the file in the scratch copy, and compiled with the
  compile service (the same worker as ``flydsl-ls compile``), COMPILE_ONLY on the CPU, for the
  arch on the example's marker (the scaffold names one when the file or function does),
  else ``--arch`` (gfx942). ``ROCM_PATH`` defaults to ``/work/rocm`` for ROCm's
  device bitcode when that folder exists.

It prints one line per file (ok / the error's first line) and the rate; ``--json`` writes
the per-file results.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from flydsl_ls.compile import CompileService  # noqa: E402
from flydsl_ls.compile.examples import find_examples  # noqa: E402
from flydsl_ls.compile.scaffold import apply, example_for, launchers, targets  # noqa: E402
from flydsl_ls.compile.scaffold_reasons import no_target  # noqa: E402

DEVICE_LIBS = Path("/work/rocm")


def has_launcher(source: str) -> bool:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    return bool(launchers(tree))


def primary(found):
    public = [t for t in found if not t.name.startswith("_")]
    return (public or found)[0]


def prepare(scratch: Path, options) -> Path:
    """The kernel tree copied to ``scratch/src/<package>`` (with the tests beside it), the
    scratch root on ``PYTHONPATH`` and ``ROCM_PATH`` set: the package folder."""
    tree = Path(options.tree).resolve()
    tests = Path(options.tests) if options.tests else tree.parent / "tests"
    root = scratch / "src"
    package_dir = root / options.package
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(tree, package_dir, ignore=shutil.ignore_patterns("__pycache__"))
    for parent in package_dir.relative_to(root).parents:  # aiter/ops/flydsl: aiter/ and aiter/ops/ packages
        if parent != Path(".") and not (root / parent / "__init__.py").exists():
            (root / parent / "__init__.py").write_text("")
    if tests.is_dir():
        shutil.copytree(tests, root / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH")) if p)
    if "ROCM_PATH" not in os.environ and DEVICE_LIBS.is_dir():
        os.environ["ROCM_PATH"] = str(DEVICE_LIBS)
    print(f"tree {tree} -> {package_dir}; tests: {tests if tests.is_dir() else 'none'}; "
          f"ROCM_PATH={os.environ.get('ROCM_PATH', '')}", flush=True)
    return package_dir


def insert_example(path: Path, source: str, insertion, default_arch: str):
    """Write the example into the scratch copy: (the example found in the new text, its arch)."""
    new = apply(source, insertion)
    path.write_text(new, encoding="utf-8")
    example = next(e for e in find_examples(new) if e.name == insertion.example)
    return example, example.arch or default_arch


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The tree, tests and compile options this audit shares with others (line_info_audit)."""
    parser.add_argument("--tree", default="/work/corpus/flydsl/kernels", help="the kernel folder")
    parser.add_argument("--package", default="kernels", help="its import path below the scratch root")
    parser.add_argument("--tests", default=None, help="the repository's tests folder (default: TREE/../tests)")
    parser.add_argument("--arch", default="gfx942")
    parser.add_argument("--python", default=None, help="interpreter with flydsl (default: this one)")
    parser.add_argument("--only", action="append", default=[], help="files whose path contains this (repeatable)")
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--keep", default=None, help="scratch folder to use and keep")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_arguments(parser)
    parser.add_argument("--json", default=None, help="write per-file results here")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each example and the whole error")
    options = parser.parse_args()

    scratch = Path(options.keep) if options.keep else Path(tempfile.mkdtemp(prefix="scaffold-audit-"))
    package_dir = prepare(scratch, options)
    files = sorted(p for p in package_dir.rglob("*.py") if not options.only or any(o in str(p) for o in options.only))
    results = []
    service = CompileService(python=options.python, cache=scratch / "cache", default_arch=options.arch,
                             default_timeout=options.timeout, keep_runs=5)
    started = time.perf_counter()
    try:
        for path in files:
            rel = str(path.relative_to(package_dir))
            source = path.read_text(encoding="utf-8")
            if not has_launcher(source):
                results.append({"file": rel, "launcher": False})
                continue
            found = targets(source)
            row = {"file": rel, "launcher": True, "targets": [t.name for t in found]}
            results.append(row)
            if not found:
                row.update(status="not offered", error=no_target(source).message)
                print(f"{rel:60s} not offered: {row['error']}", flush=True)
                continue
            target = primary(found)
            row["target"] = target.name
            try:
                insertion = example_for(source, target.name, path)
            except LookupError as error:
                row.update(status="not offered", error=str(error))
                print(f"{rel:60s} {target.name}: not written: {error}", flush=True)
                continue
            example, arch = insert_example(path, source, insertion, options.arch)
            result = service.compile(path, example.name, arch)
            path.write_text(source, encoding="utf-8")
            error = result.error.message.strip().splitlines()[0][:200] if result.error else ""
            row.update(status=result.status.value, arch=arch, seconds=result.total_seconds, error=error,
                       example_text=insertion.text, tests=insertion.from_test)
            mark = "ok" if result.ok else result.status.value
            print(f"{rel:60s} {target.name} [{arch}{', test args' if insertion.from_test else ''}] {mark}"
                  f" ({result.total_seconds or 0:.1f} s){': ' + error if error else ''}", flush=True)
            if options.verbose:
                print(insertion.text)
                if result.error:
                    print(result.error.message)
    finally:
        service.close()

    kernel_files = [r for r in results if r["launcher"]]
    ok = [r for r in kernel_files if r.get("status") == "ok"]
    offered = [r for r in kernel_files if r.get("status") not in (None, "not offered")]
    print()
    print(f"{len(results)} .py files; {len(kernel_files)} define a kernel launcher "
          f"({len(results) - len(kernel_files)} do not: helpers, __init__)")
    print(f"example offered and written: {len(offered)}/{len(kernel_files)}")
    print(f"compiles as inserted: {len(ok)}/{len(kernel_files)} = {100 * len(ok) / max(1, len(kernel_files)):.0f}% "
          f"of the files with a launcher ({len(ok)}/{max(1, len(offered))} of those offered); "
          f"{sum(1 for r in ok if r.get('tests'))} with a test's arguments; {time.perf_counter() - started:.0f} s")
    kinds: dict[str, int] = {}
    for row in kernel_files:
        if row.get("status") in ("ok", None):
            continue
        error = row.get("error", "")
        kind = (
            "not offered" if row["status"] == "not offered"
            else "import fails (a module not in the tree or not installed)" if error.startswith(("ModuleNotFoundError", "ImportError"))
            else f"{row['status']} (LLVM abort)" if row["status"] == "crash"
            else row["status"] if row["status"] != "error"
            else "error while building or compiling"
        )
        kinds[kind] = kinds.get(kind, 0) + 1
    for kind, count in sorted(kinds.items(), key=lambda item: -item[1]):
        print(f"  {count:3d} {kind}")
    if options.json:
        Path(options.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
