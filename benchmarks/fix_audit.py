"""Real-corpus fix audit: do flydsl-ls's fixes leave real kernels' compiled IR unchanged?

Run by hand (never under pytest); it prints figures, it asserts nothing.

    python benchmarks/fix_audit.py --cases flydsl                    # gfx942 and gfx950
    python benchmarks/fix_audit.py --cases flydsl --arch gfx950 --only norm/
    python benchmarks/fix_audit.py --cases aiter --python /path/to/venv-flydsl-0.3.1/bin/python
    python benchmarks/fix_audit.py --cases flydsl --only mla --fix-select FLY102   # bisect a rule

For the case table ``benchmarks/audit_cases/<name>.py`` (REPO, MIRROR, COMMIT, PATHS,
FIX_ROOTS, CASES) it:

1. ``git archive``s PATHS at COMMIT from the mirror three times per arch: as is, after
   ``flydsl-ls check --fix --target-arch ARCH`` and after ``... --fix --unsafe-fixes ...``
   run on FIX_ROOTS of the extracted tree (the as-is tree is shared by the arches);
2. counts the fixes each rule applied per file (the same fix loop as the CLI, run dry on the
   as-is tree, and checked against the files the CLI wrote);
3. compiles every case for every arch it supports in every tree, COMPILE_ONLY on the CPU, one
   warm flydsl-ls compile worker per (arch, tree) that imports a generated driver module
   (``_fix_audit_driver.py`` at the extraction root, one ``# flydsl: example`` per case);
4. compares per case the location-free first and final MLIR, the LLVM IR and the ISA of the
   as-is compile with each fixed one and prints identical / differs (artifact, first differing
   line) / fails (the error), then a per-rule summary. A case is attributed to the rules that
   edited any file it imports (static import closure of the extracted tree: best effort).

A case whose as-is compile fails is reported as "baseline fails" and excluded from the counts.
Raw outputs (trees, dumps, fix logs, results.json, diffs) go under ``--keep`` (default
/work/audit/<cases>).
"""

from __future__ import annotations

import argparse
import ast
import difflib
import functools
import importlib.util
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from flydsl_ls.compile import CompileService  # noqa: E402
from flydsl_ls.compile.verify import normalise_isa, strip_locations  # noqa: E402

VARIANTS = ("asis", "safe", "unsafe")
ARTIFACTS = (("mlir-first", strip_locations), ("mlir-final", strip_locations), ("llvm", None), ("isa", normalise_isa))
DRIVER = "_fix_audit_driver.py"
NO_DEVICE_LIBS = "amdgcn bitcode path"  # FlyDSL's error when a kernel needs ROCm's device libraries


def log(*parts) -> None:
    print(*parts, file=sys.stderr, flush=True)


def linter_state() -> str:
    """The flydsl-ls checkout whose fixes are measured: HEAD, and uncommitted edits under flydsl_ls/."""
    repo = HERE.parent
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(repo), "status", "--short", "--", "flydsl_ls"], capture_output=True, text=True
        ).stdout.split("\n")
    except OSError:
        return "unknown (no git)"
    dirty = [line[3:] for line in dirty if line.strip()]
    return f"{head}" + (f" + uncommitted edits in {len(dirty)} files ({', '.join(dirty[:6])}{', ...' if len(dirty) > 6 else ''})" if dirty else " (clean)")


# -- the case table -----------------------------------------------------------------------
def load_cases(name: str):
    path = HERE / "audit_cases" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_audit_cases_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, path


def case_slug(index: int, key: str) -> str:
    return f"case_{index:03d}_" + re.sub(r"\W+", "_", key).strip("_")[:60]


# -- trees --------------------------------------------------------------------------------
def extract(mirror: str, commit: str, paths: list[str], dest: Path, release: str | None = None) -> None:
    """``paths`` of ``commit`` into ``dest``; with ``release``, a pyproject.toml declaring the
    FlyDSL release the tree pins (as its project would), so fixes respect what it has."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    archive = subprocess.run(["git", "--git-dir", mirror, "archive", commit, *paths], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    if release:
        (dest / "pyproject.toml").write_text(f'[tool.flydsl-ls]\nflydsl-version = "{release}"\n')


def snapshot_linter(dest: Path) -> Path:
    """Copy this checkout's flydsl_ls/ (uncommitted edits included) so one run measures one version."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(HERE.parent / "flydsl_ls", dest / "flydsl_ls", ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def linter_env(linter: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(linter), env.get("PYTHONPATH")) if p)
    return env


def run_fix(root: Path, fix_roots: list[str], arch: str, unsafe: bool, select: str | None, logfile: Path, linter: Path) -> str:
    cmd = [sys.executable, "-m", "flydsl_ls", "check", "--fix", "--target-arch", arch, "--exit-zero"]
    if unsafe:
        cmd.append("--unsafe-fixes")
    if select:
        cmd += ["--select", select]
    cmd += [str(root / r) for r in fix_roots]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=root, env=linter_env(linter))
    logfile.write_text(f"$ {' '.join(cmd)}\n(exit {done.returncode})\n{done.stdout}\n--- stderr\n{done.stderr}")
    summary = [line for line in done.stdout.splitlines() if line.startswith("Found ")]
    problems = [line for line in done.stderr.splitlines() if line.strip()]
    return (summary[-1] if summary else "(no summary)") + (f"; stderr: {problems[0]}" if problems else "")


_COUNT_FIXES = """
import json, sys
from pathlib import Path
from flydsl_ls import config
from flydsl_ls.analysis.model.project import ProjectIndex
from flydsl_ls.checker import check_path, fix_source
from flydsl_ls.files import discover

root, arch, unsafe, select, roots = Path(sys.argv[1]), sys.argv[2], sys.argv[3] == "1", sys.argv[4], sys.argv[5:]
files = list(discover([root / r for r in roots]))
project = ProjectIndex(files=files)
codes = [c.strip() for c in select.split(",")] if select else None
out = {}
for path in files:
    settings = config.settings_for(path).with_overrides(select=codes, ignore=None, target_arch=arch, flydsl_version=None)
    report = check_path(path, settings, project)
    if report.error is not None:
        continue
    outcome = fix_source(report.source, path, settings, unsafe=unsafe, project=project)
    if outcome.applied:
        out[str(path.relative_to(root))] = {"applied": dict(outcome.applied), "text": outcome.text}
json.dump(out, sys.stdout)
"""


def fix_counts(root: Path, fix_roots: list[str], arch: str, unsafe: bool, select: str | None, linter: Path) -> dict[str, dict]:
    """Per file (relative to root): {"applied": {code: n}, "text": fixed text}: the CLI's fix loop
    run dry (nothing written) on the as-is tree, with the same flydsl-ls snapshot."""
    cmd = [sys.executable, "-c", _COUNT_FIXES, str(root), arch, "1" if unsafe else "0", select or "", *fix_roots]
    # cwd=linter: `python -c` puts the working directory first on sys.path, which must not be a
    # checkout whose flydsl_ls/ others are editing
    done = subprocess.run(cmd, capture_output=True, text=True, env=linter_env(linter), cwd=linter)
    if done.returncode != 0:
        log(f"fix count failed: {done.stderr.strip().splitlines()[-1:]}")
        return {}
    return json.loads(done.stdout)


# -- import closure (for attribution) ------------------------------------------------------
class ImportGraph:
    def __init__(self, root: Path):
        self.root = root
        self.cache: dict[str, set[str]] = {}

    def module_file(self, dotted: str) -> str | None:
        base = self.root.joinpath(*dotted.split("."))
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return str(candidate.relative_to(self.root))
        return None

    def _packages(self, dotted: str) -> list[str]:
        parts = dotted.split(".")
        return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]

    def targets(self, node, current: str | None) -> list[str]:
        """Dotted module names an import node may load (packages included)."""
        names: list[str] = []
        if isinstance(node, ast.Import):
            for alias in node.names:
                names += self._packages(alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if current is None:
                    return []
                base_parts = current.split(".")
                is_pkg = (self.module_file(current) or "").endswith("__init__.py")
                keep = len(base_parts) - node.level + (1 if is_pkg else 0)
                base = ".".join(base_parts[:keep] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base:
                names += self._packages(base)
            for alias in node.names:
                names.append(f"{base}.{alias.name}" if base else alias.name)
        return [n for n in names if self.module_file(n)]

    def closure(self, modules: list[str]) -> set[str]:
        seen: set[str] = set()
        todo = list(modules)
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            todo += self.imports_of(name)
        return {self.module_file(m) for m in seen if self.module_file(m)}

    def imports_of(self, name: str) -> list[str]:
        if name not in self.cache:
            rel = self.module_file(name)
            found: set[str] = set()
            try:
                tree = ast.parse((self.root / rel).read_text(encoding="utf-8"))
            except (OSError, SyntaxError, TypeError):
                tree = None
            if tree is not None:
                for node in ast.walk(tree):
                    if isinstance(node, (ast.Import, ast.ImportFrom)):
                        found.update(self.targets(node, name))
            self.cache[name] = found
        return list(self.cache[name])


def case_imports(cases_module, fn, graph: ImportGraph) -> set[str]:
    """Files of the extracted tree a case may import: its function's imports, closed over."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    try:
        tree = ast.parse(inspect.getsource(cases_module))
    except (OSError, TypeError, SyntaxError):
        return set()
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    # a case made by a factory (``def gemm(dtype): def case(device): ...``) is walked from the factory
    start = getattr(fn, "__qualname__", getattr(fn, "__name__", "")).split(".")[0]
    modules: set[str] = set()
    seen: set[str] = set()
    todo = [start] if start in functions else []
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for node in ast.walk(functions[name]):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                modules.update(graph.targets(node, None))
            elif isinstance(node, ast.Name) and node.id in functions:
                todo.append(node.id)
    # module-level imports of the cases file that name the tree
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            modules.update(graph.targets(node, None))
    return graph.closure(sorted(modules))


# -- compiling ----------------------------------------------------------------------------
def write_driver(root: Path, cases_path: Path, slugs: dict[str, str]) -> Path:
    lines = [
        '"""Generated by benchmarks/fix_audit.py: one example per audit case."""',
        "import importlib.util as _u",
        f"_spec = _u.spec_from_file_location('_fix_audit_cases', {str(cases_path)!r})",
        "_cases = _u.module_from_spec(_spec)",
        "_spec.loader.exec_module(_cases)",
        "",
    ]
    for key, slug in slugs.items():
        lines += ["", "# flydsl: example", f"def {slug}(device):", f"    return _cases.CASES[{key!r}][0](device)", ""]
    path = root / DRIVER
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def one_line(text: str, limit: int = 300) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    line = lines[-1] if lines else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


_EXC_LINE = re.compile(r"^([\w.]+(Error|Exception|Exit)|LLVM ERROR)\b.*")
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)')


def describe_error(err, detail: str, root: Path) -> str:
    """One line: the innermost frame in the extracted tree, then the exception line."""
    if err is None:
        return "?"
    text = detail or err.message or ""
    lines = text.splitlines()
    exc = [l.strip() for l in lines if _EXC_LINE.match(l.strip())]
    message = exc[-1] if exc else one_line(err.message)
    frames = [(m.group(1), m.group(2)) for m in map(_FRAME.match, lines) if m]
    inside = [(f, n) for f, n in frames if f.startswith(str(root)) and not f.endswith(DRIVER)]
    where = f"{os.path.relpath(inside[-1][0], root)}:{inside[-1][1]}: " if inside else ""
    if not where and err.file and err.line:
        where = f"{err.file}:{err.line}: "
    if len(message) > 300:
        message = message[:297] + "..."
    return where + message


def compile_tree(service: CompileService, driver: Path, slugs: dict[str, str], arch: str, timeout: float, tag: str) -> dict:
    results: dict[str, dict] = {}
    for key, slug in slugs.items():
        started = time.perf_counter()
        result = service.compile(driver, slug, arch, timeout=timeout)
        entry: dict = {"status": result.status.value, "seconds": result.seconds, "total": time.perf_counter() - started}
        if not result.ok and result.error and NO_DEVICE_LIBS in (result.error.message or "") + (result.error.detail or ""):
            # Only the final link failed, for want of ROCm's device bitcode (ocml/ockl) on this
            # machine: the MLIR before the binary is complete and still compared.
            entry["mlir_only"] = True
        if result.ok or entry.get("mlir_only"):
            kernels = []
            for k in result.kernels:
                files = {emit: str(k.path(emit)) if k.path(emit) else None for emit, _ in ARTIFACTS}
                res = k.resources
                resources = {f: getattr(res, f) for f in RESOURCE_FIELDS} if res is not None else None
                kernels.append({"name": k.name, "files": files, "resources": resources})
                keep = {Path(p).name for p in files.values() if p}
                for extra in Path(k.dump_dir).iterdir():  # the per-pass dumps in between: not compared
                    if extra.is_file() and extra.name not in keep:
                        extra.unlink()
            entry["kernels"] = kernels
        if not result.ok:
            err = result.error
            entry["detail"] = (err.detail if err else "") or ""
            entry["error"] = describe_error(err, entry["detail"], driver.parent)
            entry["log_tail"] = "\n".join((result.log or "").splitlines()[-40:])
            # A failed trace can leave FlyDSL's state behind in the worker (0.3.1: later cases
            # fail with "@kernel can only be called inside @jit function"): start afresh.
            service.close()
        results[key] = entry
        state = "ok" if result.ok else f"{result.status.value}: {entry['error']}"
        log(f"  [{tag}] {key}: {state} ({entry['total']:.1f} s)")
    return results


# -- comparing ----------------------------------------------------------------------------
# What a structural fix must not make worse: LDS must not grow, no scratch (spills) may appear.
RESOURCE_FIELDS = ("lds_bytes", "scratch_bytes", "vgprs", "agprs", "sgprs")


def resource_changes(before: dict, after: dict) -> list[str]:
    """One line per kernel whose resources differ between the as-is and the fixed compile;
    a line starts with "WORSE" when LDS grew or scratch appeared or grew."""
    lines = []
    for old, new in zip(before.get("kernels") or [], after.get("kernels") or []):
        a, b = old.get("resources"), new.get("resources")
        if not a or not b or a == b:
            continue
        worse = b["lds_bytes"] > a["lds_bytes"] or b["scratch_bytes"] > a["scratch_bytes"]
        shown = ", ".join(f"{f.replace('_bytes', '')} {a[f]} -> {b[f]}" for f in RESOURCE_FIELDS if a[f] != b[f])
        lines.append(f"{'WORSE ' if worse else ''}{_KERNEL_SUFFIX.sub('', old['name'])}: {shown}")
    return lines


_KERNEL_SUFFIX = re.compile(r"_\d+$")


def read(path: str | None, normalise) -> str | None:
    if not path or not os.path.exists(path):
        return None
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    if normalise is None:
        return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"
    return normalise(text)


_SSA = re.compile(r"%[\w.$-]+")


def canonical_names(text: str) -> str:
    """SSA/LLVM value names renamed %v0, %v1, ... in order of first appearance, per function."""
    out, names = [], {}
    for line in text.splitlines():
        if re.match(r"\s*(func\.func|gpu\.func|llvm\.func|define)\b", line):
            names = {}
        out.append(_SSA.sub(lambda m: names.setdefault(m.group(0), f"%v{len(names)}"), line))
    return "\n".join(out) + "\n"


def compare(before: dict, after: dict) -> tuple[str, str, str]:
    """(verdict, one-line detail, full diff) for one case: identical / differs / fails."""
    mlir_only = bool(before.get("mlir_only"))
    if after["status"] != "ok" and not (mlir_only and after.get("mlir_only")):
        return "fails", after.get("error", after["status"]), after.get("detail", "")
    kb, ka = before["kernels"], after["kernels"]
    names_b = [_KERNEL_SUFFIX.sub("", k["name"]) for k in kb]
    names_a = [_KERNEL_SUFFIX.sub("", k["name"]) for k in ka]
    if names_b != names_a:
        return "differs", f"kernels {names_b} became {names_a}", ""
    first = None  # (detail, diff) of the first difference
    differing: list[str] = []  # every "kernel: artifact" that differs
    unstable: set[str] = set()  # artifacts that differ between as-is compiles of the same source
    controls = [c for c in before.get("controls", []) if c.get("kernels") and len(c["kernels"]) == len(kb)]
    for index, (old, new) in enumerate(zip(kb, ka)):
        for emit, normalise in ARTIFACTS:
            if mlir_only and not emit.startswith("mlir"):
                continue
            a, b = read(old["files"][emit], normalise), read(new["files"][emit], normalise)
            if a is None or b is None:
                continue
            # the same kernel may get another process-wide counter suffix
            a, b = a.replace(old["name"], "@KERNEL@"), b.replace(new["name"], "@KERNEL@")
            if a == b:
                continue
            seen = {a}
            for control in controls:
                ck = control["kernels"][index]
                text = read(ck["files"][emit], normalise)
                if text is not None:
                    seen.add(text.replace(ck["name"], "@KERNEL@"))
            if len(seen) > 1:
                unstable.add(emit)
            if b in seen:
                continue  # the fixed compile matches one of the as-is compiles
            differing.append(f"{old['name']}:{emit}")
            if first is None:
                # MLIR numbers SSA values per function, so one extra op shifts every later name:
                # report the first difference (and the diff) with names canonicalised
                if emit.startswith("mlir") or emit == "llvm":
                    a, b = canonical_names(a), canonical_names(b)
                la, lb = a.splitlines(), b.splitlines()
                i = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
                line = f"line {i + 1}: -{(la[i] if i < len(la) else '<end>').strip()[:160]} | +{(lb[i] if i < len(lb) else '<end>').strip()[:160]}"
                diff = "".join(difflib.unified_diff(a.splitlines(True), b.splitlines(True), f"asis/{emit}", f"fixed/{emit}", n=3))
                first = (f"{old['name']} {emit} {line}", diff)
    note = ""
    if unstable:
        note = f"  (as-is compiles of the same source differ in {', '.join(sorted(unstable))}: nondeterministic)"
    if first is not None and {d.split(":")[-1] for d in differing} <= unstable:
        # only artifacts the as-is source does not reproduce itself differ: not the fix's doing
        return "identical", f"{', '.join(sorted(unstable))} varies between as-is compiles (nondeterministic); the rest is identical", ""
    if first is not None and {d.split(":")[-1] for d in differing} == {"isa"} and not mlir_only:
        # the same LLVM IR went into the backend: an ISA-only difference is the backend's
        # nondeterminism (seen on gfx950: register numbers), whatever the controls happened to show
        return "identical", "isa differs with identical LLVM IR (backend nondeterminism); the rest is identical", ""
    if first is not None:
        kinds = sorted({d.split(":")[-1] for d in differing}, key=[e for e, _ in ARTIFACTS].index)
        same = [e for e, _ in ARTIFACTS if e not in kinds and not (mlir_only and not e.startswith("mlir"))]
        return "differs", f"{first[0]}  [differs: {', '.join(kinds)}; same: {', '.join(same) or '-'}]{note}", first[1]
    if unstable:
        return "identical", note.strip(), ""
    return "identical", "", ""


# -- main ---------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default="flydsl", help="case table: benchmarks/audit_cases/<name>.py (flydsl, aiter)")
    parser.add_argument("--python", default=sys.executable, help="interpreter with the right flydsl for the compile worker")
    parser.add_argument("--arch", default="gfx942,gfx950", help="comma-separated arches (default gfx942,gfx950)")
    parser.add_argument("--only", action="append", help="only cases whose key contains this substring (repeatable)")
    parser.add_argument("--keep", type=Path, help="folder for trees, dumps and results (default /work/audit/<cases>)")
    parser.add_argument("--mirror", help="git dir of the repository (default: the case table's MIRROR)")
    parser.add_argument("--variants", default="safe,unsafe", help="fixed trees to build and compare (safe,unsafe)")
    parser.add_argument("--fix-select", help="pass --select to the fix run (bisect which rule causes a difference)")
    parser.add_argument(
        "--linter", type=Path,
        help="folder holding the flydsl_ls package whose fixes are measured (default: a snapshot of this checkout's, in --keep)",
    )
    parser.add_argument(
        "--bisect", action="store_true",
        help="for each differing/failing case, redo the fixes one rule at a time and compile it again",
    )
    parser.add_argument(
        "--controls", type=int, default=2,
        help="recompile each differing case as is this many times (fresh workers) to tell compiler nondeterminism apart",
    )
    parser.add_argument("--report-only", action="store_true", help="print the report again from --keep's results.json")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per compile")
    parser.add_argument("--diff-lines", type=int, default=0, help="print this many lines of each differing case's diff")
    args = parser.parse_args(argv)

    cases_module, cases_path = load_cases(args.cases)
    mirror = args.mirror or cases_module.MIRROR
    keep = (args.keep or Path("/work/audit") / args.cases).resolve()
    keep.mkdir(parents=True, exist_ok=True)
    arches = [a.strip() for a in args.arch.split(",") if a.strip()]
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    cases = {k: v for k, v in cases_module.CASES.items() if not args.only or any(s in k for s in args.only)}
    slugs_all = {key: case_slug(i, key) for i, key in enumerate(cases_module.CASES)}
    fix_roots = list(cases_module.FIX_ROOTS)
    print(f"fix audit: {cases_module.REPO} @ {cases_module.COMMIT[:12]}, {len(cases)} cases, arches {arches}, python {args.python}")
    print(f"flydsl-ls: {linter_state()}")
    if args.fix_select:
        print(f"fix run restricted to --select {args.fix_select}")

    if args.report_only:
        linter = None
    else:
        linter = args.linter.resolve() if args.linter else snapshot_linter(keep / "linter")
        print(f"fixes by: {linter / 'flydsl_ls'}")
    trees = keep / "trees"
    asis = trees / "asis"
    if args.report_only:
        # recompute the verdicts and the report from a previous run's results.json and dumps
        all_results = json.loads((keep / "results.json").read_text())
        print(f"flydsl-ls of that run: {all_results.get('linter', '?')}")
        graph = ImportGraph(asis)
        imports = {key: case_imports(cases_module, fn, graph) for key, (fn, _) in cases.items()}
        for arch_name, section in all_results["arches"].items():
            rebisect(section, keep, arch_name, slugs_all)
            for variant in variants:
                for key, before in section["results"]["asis"].items():
                    if before["status"] != "ok" and not before.get("mlir_only"):
                        section["verdicts"][variant][key] = ("baseline fails", before.get("error", ""), "")
                    elif key in section["results"][variant]:
                        section["verdicts"][variant][key] = compare(before, section["results"][variant][key])
        report(all_results, cases, imports, variants, keep, args.diff_lines)
        return 0
    extract(mirror, cases_module.COMMIT, list(cases_module.PATHS), asis, cases_module.FLYDSL)
    graph = ImportGraph(asis)
    imports = {key: case_imports(cases_module, fn, graph) for key, (fn, _) in cases.items()}

    all_results: dict = {"commit": cases_module.COMMIT, "fix_select": args.fix_select, "linter": linter_state(), "arches": {}}
    for arch in arches:
        arch_cases = {k: v for k, v in cases.items() if arch in v[1]}
        if not arch_cases:
            continue
        slugs = {k: slugs_all[k] for k in arch_cases}
        section: dict = {"fixes": {}, "fix_summary": {}, "results": {}, "verdicts": {}}
        all_results["arches"][arch] = section
        roots = {"asis": asis}
        for variant in variants:
            root = trees / f"{arch}-{variant}"
            extract(mirror, cases_module.COMMIT, list(cases_module.PATHS), root, cases_module.FLYDSL)
            unsafe = variant == "unsafe"
            counts = fix_counts(asis, fix_roots, arch, unsafe, args.fix_select, linter)
            summary = run_fix(root, fix_roots, arch, unsafe, args.fix_select, keep / f"fix-{arch}-{variant}.log", linter)
            mismatched = [
                rel for rel, entry in counts.items() if (root / rel).read_text(encoding="utf-8") != entry["text"]
            ]
            section["fixes"][variant] = {rel: e["applied"] for rel, e in counts.items()}
            section["fix_summary"][variant] = {"cli": summary, "dry_run_mismatch": mismatched}
            roots[variant] = root
        for variant, root in roots.items():
            driver = write_driver(root, cases_path, slugs)
            if variant != "asis":
                # only the cases that compile as is are worth compiling fixed
                asis_results = section["results"]["asis"]
                ok = {k: s for k, s in slugs.items() if asis_results[k]["status"] == "ok" or asis_results[k].get("mlir_only")}
            else:
                ok = slugs
            log(f"[{arch} {variant}] compiling {len(ok)} cases in {root}")
            with CompileService(
                python=args.python, cache=keep / "runs" / f"{arch}-{variant}", keep_runs=10**6, default_timeout=args.timeout
            ) as service:
                section["results"][variant] = compile_tree(service, driver, ok, arch, args.timeout, f"{arch} {variant}")
        for variant in variants:
            section["verdicts"][variant] = {}
            for key in slugs:
                before = section["results"]["asis"][key]
                if before["status"] != "ok" and not before.get("mlir_only"):
                    section["verdicts"][variant][key] = ("baseline fails", before.get("error", ""), "")
                    continue
                section["verdicts"][variant][key] = compare(before, section["results"][variant][key])
        suspicious = {k for v in variants for k, verdict in section["verdicts"][v].items() if verdict[0] == "differs"}
        if suspicious and args.controls:
            # compile those cases as is again, each time in a fresh worker: a difference the
            # as-is source also shows against itself is the compiler's, not the fix's
            for round_ in range(args.controls):
                with CompileService(
                    python=args.python, cache=keep / "runs" / f"{arch}-asis-control{round_}", keep_runs=10**6,
                    default_timeout=args.timeout,
                ) as service:
                    again = compile_tree(
                        service, write_driver(asis, cases_path, slugs), {k: slugs[k] for k in sorted(suspicious)}, arch,
                        args.timeout, f"{arch} as-is control {round_ + 1}",
                    )
                for key, entry in again.items():
                    section["results"]["asis"][key].setdefault("controls", []).append(entry)
            for variant in variants:
                for key in suspicious:
                    section["verdicts"][variant][key] = compare(section["results"]["asis"][key], section["results"][variant][key])
        if args.bisect:
            section["bisect"] = bisect(args, section, variants, slugs, imports, arch, mirror, cases_module, cases_path, trees, keep, linter)
        (keep / "results.json").write_text(json.dumps(all_results, indent=1, default=str))

    report(all_results, cases, imports, variants, keep, args.diff_lines)
    return 0


def bisect(args, section, variants, slugs, imports, arch, mirror, cases_module, cases_path, trees, keep, linter) -> dict:
    """For every differing or failing case, re-run the fixes one rule at a time (``--select CODE``,
    on the whole tree, same safe/unsafe setting) for each rule that edited a file the case imports,
    and compile the case again: {variant: {case: {code: verdict + detail}}}."""
    out: dict = {}
    for variant in variants:
        todo: dict[str, list[str]] = defaultdict(list)  # rule -> cases
        for key, (verdict, _, _) in section["verdicts"][variant].items():
            if verdict in ("differs", "fails"):
                for code in rules_for(imports.get(key, set()), section["fixes"].get(variant, {})):
                    todo[code].append(key)
        out[variant] = defaultdict(dict)
        for code, keys in sorted(todo.items()):
            root = trees / f"{arch}-{variant}-{code}"
            extract(mirror, cases_module.COMMIT, list(cases_module.PATHS), root, cases_module.FLYDSL)
            run_fix(root, list(cases_module.FIX_ROOTS), arch, variant == "unsafe", code, keep / f"fix-{arch}-{variant}-{code}.log", linter)
            driver = write_driver(root, cases_path, {k: slugs[k] for k in keys})
            log(f"[{arch} {variant} bisect {code}] compiling {len(keys)} cases")
            with CompileService(
                python=args.python, cache=keep / "runs" / f"{arch}-{variant}-{code}", keep_runs=10**6, default_timeout=args.timeout
            ) as service:
                results = compile_tree(service, driver, {k: slugs[k] for k in keys}, arch, args.timeout, f"{arch} {variant} {code}")
            for key in keys:
                section.setdefault("bisect_results", {}).setdefault(variant, {}).setdefault(code, {})[key] = results[key]
                verdict, detail, _ = compare(section["results"]["asis"][key], results[key])
                out[variant][key][code] = f"{verdict}: {detail}" if detail else verdict
    return out


def rebisect(section: dict, keep: Path, arch: str, slugs: dict[str, str]) -> None:
    """Recompute the bisect verdicts of a stored run (results kept, or found again in its run folders)."""
    stored = section.setdefault("bisect_results", {})
    for variant, per_case in section.get("bisect", {}).items():
        for key, outcomes in per_case.items():
            for code in outcomes:
                entry = stored.get(variant, {}).get(code, {}).get(key)
                if entry is None:
                    if outcomes[code].startswith("fails"):
                        continue  # the stored error says it all
                    entry = _entry_from_disk(keep / "runs" / f"{arch}-{variant}-{code}" / "runs", slugs.get(key, "?"))
                if entry is None or not entry.get("kernels"):
                    continue
                verdict, detail, _ = compare(section["results"]["asis"][key], entry)
                outcomes[code] = f"{verdict}: {detail}" if detail else verdict


def _entry_from_disk(runs: Path, slug: str) -> dict | None:
    found = sorted(runs.glob(f"*-{slug}-gfx*")) if runs.is_dir() else []
    if not found:
        return None
    kernels = []
    for kdir in sorted((found[-1] / "ir").iterdir()):
        files = {p.name for p in kdir.iterdir()}
        pick = lambda suffix, first=True: next((str(kdir / f) for f in sorted(files, reverse=not first) if f.endswith(suffix) and "to_binary" not in f), None)  # noqa: E731
        isa = pick(".s")
        name = kdir.name
        kernels.append({"name": name, "files": {"mlir-first": pick(".mlir"), "mlir-final": pick(".mlir", False), "llvm": pick(".ll"), "isa": isa}})
    ok = any(k["files"]["isa"] for k in kernels)
    return {"status": "ok" if ok else "error", "kernels": kernels, "mlir_only": not ok, "error": "(from disk)"}


def rules_for(files: set[str], fixes: dict[str, dict[str, int]]) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for rel in files:
        for code, n in fixes.get(rel, {}).items():
            out[code] += n
    return dict(out)


def report(all_results: dict, cases: dict, imports: dict, variants: list[str], keep: Path, diff_lines: int) -> None:
    diffs_dir = keep / "diffs"
    diffs_dir.mkdir(exist_ok=True)
    for arch, section in all_results["arches"].items():
        print(f"\n=== {arch} ===")
        for variant in variants:
            fixes = section["fixes"].get(variant, {})
            per_rule: dict[str, int] = defaultdict(int)
            for applied in fixes.values():
                for code, n in applied.items():
                    per_rule[code] += n
            summary = section["fix_summary"][variant]
            rules = ", ".join(f"{c} {n}" for c, n in sorted(per_rule.items())) or "none"
            print(f"{variant} fixes on the tree: {sum(per_rule.values())} in {len(fixes)} files ({rules}); CLI: {summary['cli']}")
            if summary["dry_run_mismatch"]:
                print(f"  note: the CLI's fixed text differs from the dry run in {summary['dry_run_mismatch']}")
        width = max((len(k) for k in section["results"]["asis"]), default=10)
        for variant in variants:
            print(f"\n-- {arch}, {variant} fixes --")
            tally: dict[str, int] = defaultdict(int)
            rule_tally: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
            fixes = section["fixes"].get(variant, {})
            for key, (verdict, detail, diff) in section["verdicts"][variant].items():
                tally[verdict] += 1
                touched = rules_for(imports.get(key, set()), fixes)
                if verdict != "baseline fails":
                    for code in touched:
                        rule_tally[code][verdict] += 1
                edited = ", ".join(f"{c}x{n}" for c, n in sorted(touched.items())) or "no fix in its files"
                if section["results"]["asis"][key].get("mlir_only") and verdict != "fails":
                    verdict_shown = verdict + "*"
                else:
                    verdict_shown = verdict
                line = f"{key:<{width}}  {verdict_shown:<14}"
                if verdict == "identical":
                    line += f"  [{edited}]" + (f"  ({detail})" if detail else "")
                elif verdict == "baseline fails":
                    line += f"  {detail}"
                else:
                    line += f"  [{edited}]  {detail}"
                print(line)
                for code, outcome in (section.get("bisect", {}).get(variant, {}).get(key, {}) if verdict in ("differs", "fails") else {}).items():
                    print(f"      {code} alone: {outcome[:400]}")
                if diff:
                    name = re.sub(r"\W+", "_", key)
                    (diffs_dir / f"{arch}-{variant}-{name}.diff").write_text(diff)
                    if diff_lines:
                        print("\n".join("      " + l for l in diff.splitlines()[:diff_lines]))
            resource_lines = []
            for key, before in section["results"]["asis"].items():
                after = section["results"].get(variant, {}).get(key)
                if after is not None:
                    resource_lines += [f"  {key}: {line}" for line in resource_changes(before, after)]
            worse = sum(line.split(": ", 1)[1].startswith("WORSE") for line in resource_lines)
            print(f"resources ({variant} vs as is; LDS, scratch, VGPRs, AGPRs, SGPRs per kernel): "
                  + (f"{len(resource_lines)} kernels changed, {worse} worse (LDS grew or scratch appeared)" if resource_lines else "unchanged"))
            for line in resource_lines:
                print(line)
            if any(r.get("mlir_only") for r in section["results"]["asis"].values()):
                print("  * MLIR only: the final link needs ROCm's device bitcode (ocml/ockl), absent here; first and final MLIR compared")
            counted = {k: v for k, v in tally.items() if k != "baseline fails"}
            print(
                f"{arch} {variant}: "
                + ", ".join(f"{n} {v}" for v, n in sorted(counted.items()))
                + (f" (+{tally['baseline fails']} baseline fails, excluded)" if tally["baseline fails"] else "")
            )
            if rule_tally:
                print(f"per rule ({variant}; a case counts for every rule that edited a file it imports, best effort):")
                for code in sorted(rule_tally):
                    t = rule_tally[code]
                    print(f"  {code}: {t['identical']} identical, {t['differs']} differ, {t['fails']} fail")
            bisected = {
                key: outcomes
                for key, outcomes in section.get("bisect", {}).get(variant, {}).items()
                if section["verdicts"][variant].get(key, ("",))[0] in ("differs", "fails")
            }
            if bisected:
                alone: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
                combined = []
                for key, outcomes in bisected.items():
                    for code, outcome in outcomes.items():
                        alone[code][outcome.split(":")[0]] += 1
                    if outcomes and all(o.startswith("identical") for o in outcomes.values()):
                        combined.append(key)
                print(f"per rule ({variant}, bisected: each rule's fixes alone, on the {len(bisected)} differing/failing cases):")
                for code in sorted(alone):
                    t = alone[code]
                    print(f"  {code} alone: {t['identical']} identical, {t['differs']} differ, {t['fails']} fail")
                if combined:
                    print(f"  only in combination (every rule alone is identical): {', '.join(combined)}")
    print(f"\nraw results: {keep / 'results.json'}; diffs: {diffs_dir}")


if __name__ == "__main__":
    sys.exit(main())
