"""A migration checked by compiling: the file's ``# flydsl: example`` s before and after.

Each example is compiled for its marker's arch (else the target arch, else gfx942) from the
text before and from the text after; every GPU kernel of it gets a verdict:

- ``identical``: MLIR (locations stripped), LLVM IR and ISA the same;
- ``ISA-identical``: the MLIR or LLVM IR changed, the ISA did not;
- ``ISA differs``: with the first differing ISA lines;

and its resources before -> after (VGPRs, SGPRs, LDS, scratch, occupancy, from the ISA
metadata). The migration is *refused* (nothing written) when an example that compiled before
no longer compiles, a kernel disappears, or a kernel's LDS or scratch grows: those are the
unsafe-fix limits of docs/fix-safety.md. Changed register counts are reported, not refused.

Nothing here imports torch or flydsl: ``compile`` is a callable, as in actions/fix_verify.py.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from flydsl_ls.actions.fix_verify import CompileFn, VerifyAborted, compile_targets
from flydsl_ls.actions.migrate import Migration
from flydsl_ls.analysis.model.text import LineIndex, Position
from flydsl_ls.compile.examples import find_examples
from flydsl_ls.compile.isa import KernelResources
from flydsl_ls.compile.line_diff import LineChange, line_changes
from flydsl_ls.compile.result import CompileResult, Status
from flydsl_ls.compile.verify import compare_results

IDENTICAL, ISA_IDENTICAL, ISA_DIFFERS = "identical", "ISA-identical", "ISA differs"

# MigrationCheck.status
CHECKED = "checked"  # compiled before and after, nothing grew: the migration may be written
REFUSED = "refused"  # compiled, and something broke or grew: ``problems`` says what
NO_EXAMPLES = "no examples"
UNVERIFIABLE = "not verified"  # no example compiles before the migration
SHOWN_LINE_CHANGES = 12  # source lines whose ISA differs, listed per kernel


@dataclass
class KernelCheck:
    example: str
    arch: str
    kernel: str
    verdict: str
    isa_lines: tuple[str, str] | None = None  # first differing ISA line (before, after)
    before: KernelResources | None = None
    after: KernelResources | None = None
    line_changes: list[LineChange] = field(default_factory=list)  # ISA by source line, when it differs

    def resources(self) -> str:
        """``VGPRs 32 -> 30, SGPRs 20, LDS 0 B, scratch 0 B, occupancy 8`` (one number when unchanged)."""
        if self.before is None or self.after is None:
            return "no resources (no ISA)"
        parts = []
        for label, unit, get in _RESOURCES:
            a, b = get(self.before), get(self.after)
            parts.append(f"{label} {a}{unit}" if a == b else f"{label} {a}{unit} -> {b}{unit}")
        return ", ".join(parts)


_RESOURCES = (
    ("VGPRs", "", lambda r: r.vgprs),
    ("AGPRs", "", lambda r: r.agprs),
    ("SGPRs", "", lambda r: r.sgprs),
    ("LDS", " B", lambda r: r.lds_bytes),
    ("scratch", " B", lambda r: r.scratch_bytes),
    ("occupancy", "", lambda r: r.waves_per_simd if r.waves_per_simd is not None else "?"),
)


@dataclass
class MigrationCheck:
    status: str
    kernels: list[KernelCheck] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # why it was refused
    notes: list[str] = field(default_factory=list)  # examples that did not compile before
    compiles: int = 0

    @property
    def ok(self) -> bool:
        return self.status == CHECKED

    def lines(self) -> list[str]:
        """The report, one line per kernel, then the problems and notes."""
        out = []
        for k in self.kernels:
            out.append(f"{k.example} ({k.arch}) {k.kernel}: {k.verdict}; {k.resources()}")
            if k.isa_lines is not None:
                before, after = k.isa_lines
                out.append(f"    first differing ISA line: `{after}` (was `{before}`)")
            if k.line_changes:
                out.append(f"    ISA by source line ({len(k.line_changes)} differ):")
                out += [f"      {change.describe()}" for change in k.line_changes[:SHOWN_LINE_CHANGES]]
                if len(k.line_changes) > SHOWN_LINE_CHANGES:
                    out.append(f"      ... {len(k.line_changes) - SHOWN_LINE_CHANGES} more")
        out += [f"not written: {p}" for p in self.problems]
        out += [f"note: {n}" for n in self.notes]
        return out


def _failure(result: CompileResult) -> str:
    error = result.error
    message = error.message if error is not None else result.status.value
    return (message.splitlines() or [result.status.value])[0]


def verify_migration(
    before: str,
    after: str,
    compile: CompileFn,
    default_arch: str | None = None,
    compile_lines: CompileFn | None = None,
    change: str = "the migration",
) -> MigrationCheck:
    """Compile ``before`` and ``after`` for every example of ``before``. ``compile_lines``:
    compiles with line info, to say which source lines' ISA differs where it does (two more
    compiles for such an example; the verdicts come from ``compile``). ``change``: what made
    ``after``, as the messages name it.

    Raises :class:`~flydsl_ls.actions.fix_verify.VerifyAborted` when the compiler is missing
    or a compile was cancelled."""
    targets = compile_targets(before, default_arch)
    if not targets:
        return MigrationCheck(NO_EXAMPLES)
    check = MigrationCheck(CHECKED)

    def run(text: str, example: str, arch: str, compiler: CompileFn = compile) -> CompileResult:
        result = compiler(text, example, arch)
        check.compiles += 1
        if result.status in (Status.CANCELLED, Status.UNAVAILABLE):
            raise VerifyAborted(_failure(result), result.status)
        return result

    compiled = 0
    for example, arch in targets:
        old = run(before, example, arch)
        if not old.ok:
            check.notes.append(f"{example} ({arch}) does not compile before {change}: {_failure(old)}")
            continue
        compiled += 1
        new = run(after, example, arch)
        if not new.ok:
            where = f" (line {new.error.line})" if new.error is not None and new.error.line else ""
            check.problems.append(f"{example} ({arch}) no longer compiles: {_failure(new)}{where}")
            continue
        _compare(check, example, arch, old, new, change)
        if compile_lines is not None and any(k.verdict == ISA_DIFFERS for k in check.kernels if k.example == example and k.arch == arch):
            _lines(check, example, arch, run(before, example, arch, compile_lines), run(after, example, arch, compile_lines), before, after)
    if not compiled:
        check.status = UNVERIFIABLE
    elif check.problems:
        check.status = REFUSED
    return check


def _lines(check: MigrationCheck, example: str, arch: str, old: CompileResult, new: CompileResult, before: str, after: str) -> None:
    if not (old.ok and new.ok):
        return
    located = {k.name: (k.located, other.located) for k in old.kernels for other in new.kernels if other.name == k.name}
    for item in check.kernels:
        if item.example == example and item.arch == arch and item.verdict == ISA_DIFFERS and item.kernel in located:
            item.line_changes = line_changes(*located[item.kernel], old.file, before, after)


def _compare(check: MigrationCheck, example: str, arch: str, old: CompileResult, new: CompileResult, change: str) -> None:
    comparison = compare_results(old, new)
    after = {k.name: k for k in new.kernels}
    for kernel in old.kernels:
        other = after.get(kernel.name)
        if other is None:
            check.problems.append(f"{example} ({arch}): kernel {kernel.name} is gone after {change}")
            continue
        keys = [key for key in comparison.first_lines if key.startswith(f"{kernel.name}: ")]
        isa = f"{kernel.name}: isa"
        if not comparison.identical and not comparison.first_lines:
            verdict = "not compared"  # the kernels' names changed: compare_results stopped there
        elif not keys:
            verdict = IDENTICAL
        elif isa in comparison.first_lines:
            verdict = ISA_DIFFERS
        else:
            verdict = ISA_IDENTICAL
        lines = comparison.first_lines.get(isa)
        isa_lines = (lines[0].strip(), lines[1].strip()) if lines is not None else None
        item = KernelCheck(example, arch, kernel.name, verdict, isa_lines, kernel.resources, other.resources)
        check.kernels.append(item)
        if item.before is not None and item.after is not None:
            for label, value in (("LDS", lambda r: r.lds_bytes), ("scratch", lambda r: r.scratch_bytes)):
                a, b = value(item.before), value(item.after)
                if b > a:
                    check.problems.append(f"{example} ({arch}) {kernel.name}: {label} grows from {a} B to {b} B")
    for name in after:
        if name not in {k.name for k in old.kernels}:
            check.problems.append(f"{example} ({arch}): kernel {name} appears after {change}")


def not_compiled(migration: Migration) -> list[str]:
    """The functions of the scope with an applied fix that no example reaches: not named by
    an example, nor by a module-level function an example reaches (transitively). Their
    fixes were not compiled by ``--verify``."""
    tree = ast.parse(migration.source)
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    todo = [e.name for e in find_examples(migration.source) if e.name in functions]
    reached: set[str] = set()
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo += [n.id for n in ast.walk(functions[name]) if isinstance(n, ast.Name) and n.id in functions]
    index = LineIndex(migration.source)
    starts = [key.start for key in migration.outcome.keys]
    names = [root.name.split(".")[0] for root in migration.scope.roots] + migration.scope.helpers
    found = []
    for name in dict.fromkeys(names):
        node = functions.get(name)
        if node is None or name in reached:
            continue
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        start = index.offset(Position(first - 1, 0))
        end = index.offset(Position((node.end_lineno or node.lineno) - 1, len(index.line_text((node.end_lineno or node.lineno) - 1))))
        if any(start <= offset < end for offset in starts):
            found.append(name)
    return found
