"""Migrate one kernel: every fix (unsafe ones included) whose finding lies in the kernel or in
the helpers only it uses, applied to a fixpoint.

A *kernel* is a module-level ``@flyc.kernel`` or ``@flyc.jit`` function, or a *builder*: a
module-level function that defines one inside (nested functions are part of it). A function
named by the user may also be a nested one (``build_gemm.gemm_kernel`` or ``gemm_kernel``).

The *scope* of a set of roots is their text (decorators included) plus every module-level
function of the same file that is referenced only from inside the scope, repeated until no
helper joins: a helper that another function (or module-level code) also uses is left alone,
since changing it would migrate that function too. Fixes are chosen by their
:class:`~flydsl_ls.actions.fixes.FixKey` (a span of the original text), so a fix found in a
later pass inside text an earlier fix of the scope wrote stays in the scope.

Nothing here compiles: actions/migrate_verify.py compares the compiles before and after.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from flydsl_ls.actions.elsewhere import OtherFiles
from flydsl_ls.actions.fixes import FixOutcome, fix_all, wanted
from flydsl_ls.analysis.model.diagnostic import Diagnostic, Severity
from flydsl_ls.analysis.model.statements import first_line
from flydsl_ls.analysis.model.text import LineIndex, Position

Lint = Callable[[str], list[Diagnostic]]
_DECORATORS = ("kernel", "jit")


@dataclass(frozen=True)
class Kernel:
    name: str  # dotted for a nested function: "build_gemm.gemm_kernel"
    kind: str  # "kernel" | "jit" | "builder" | "function" (a nested function named by the user)
    line: int  # 1-based line of the ``def``
    first_line: int  # 1-based line of its first decorator (or the ``def``)
    last_line: int


@dataclass
class Scope:
    roots: list[Kernel]
    helpers: list[str]  # module-level functions only the roots use
    lines: list[tuple[int, int]]  # 1-based inclusive line ranges of the roots and helpers
    spans: list[tuple[int, int]]  # the same as offsets of the text

    def contains(self, offset: int) -> bool:
        return any(start <= offset < end for start, end in self.spans)


@dataclass
class Migration:
    source: str
    scope: Scope
    text: str  # the migrated source
    outcome: FixOutcome
    before: list[Diagnostic] = field(default_factory=list)  # warning/error findings in scope
    after: list[Diagnostic] = field(default_factory=list)  # the same, in the migrated text

    @property
    def applied(self) -> dict[str, int]:
        return self.outcome.applied

    @property
    def count(self) -> int:
        return self.outcome.count

    @property
    def changed(self) -> bool:
        return self.text != self.source


class UnknownFunction(LookupError):
    """The named function is not in the file (the message lists the kernels there are)."""


def _decorator_kind(node: ast.AST) -> str | None:
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    for decorator in node.decorator_list:
        func = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name in _DECORATORS:
            return name
    return None


def _kernel(node: ast.FunctionDef, name: str, kind: str) -> Kernel:
    return Kernel(name, kind, node.lineno, first_line(node), node.end_lineno or node.lineno)


def _functions(tree: ast.Module) -> list[ast.FunctionDef]:
    return [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def kernels(source: str) -> list[Kernel]:
    """The module-level kernels, launchers and builders of ``source``, in file order."""
    return list(_kernels(source))


@functools.lru_cache(maxsize=8)  # the editor asks again for the same text (lenses, actions)
def _kernels(source: str) -> tuple[Kernel, ...]:
    try:
        module = _module(source)
    except (SyntaxError, ValueError):
        return ()
    return tuple(k for k in (_classify(node) for node in module.functions) if k is not None)


def _classify(node: ast.FunctionDef) -> Kernel | None:
    kind = _decorator_kind(node)
    if kind is not None:
        return _kernel(node, node.name, kind)
    if any(n is not node and _decorator_kind(n) for n in ast.walk(node)):
        return _kernel(node, node.name, "builder")
    return None


def _find(tree: ast.Module, name: str) -> Kernel | None:
    """A function by name: module-level first, else nested (``outer.inner`` or ``inner``)."""
    for node in _functions(tree):
        if node.name == name:
            return _classify(node) or _kernel(node, name, "function")
    outer, _, inner = name.rpartition(".")
    for top in _functions(tree):
        if outer and top.name != outer.split(".")[0]:
            continue
        for node in ast.walk(top):
            if node is not top and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == inner:
                return _kernel(node, f"{top.name}.{node.name}", _decorator_kind(node) or "function")
    return None


class _Module:
    """One parse of a source: its module-level functions and where each is read."""

    def __init__(self, source: str):
        self.tree = ast.parse(source)
        self.functions = _functions(self.tree)
        self.references = _references(self.tree, {node.name for node in self.functions})
        self.index = LineIndex(source)


@functools.lru_cache(maxsize=2)  # the lens and the code action ask on the same text
def _module(source: str) -> _Module:
    """The parse of ``source``, shared (read only) by everything asked about the same text:
    a code action is asked at every move of the cursor."""
    return _Module(source)


def scope_of(source: str, name: str | None = None, module: _Module | None = None) -> Scope:
    """The scope of the function ``name`` (None: of every kernel of the file).
    Raises :class:`UnknownFunction` when there is no such function, or no kernel at all."""
    module = module or _module(source)
    if name is None:
        roots = kernels(source)
        if not roots:
            raise UnknownFunction("no @flyc.kernel, @flyc.jit function or kernel builder in the file")
    else:
        found = _find(module.tree, name)
        if found is None:
            known = ", ".join(k.name for k in kernels(source)) or "none"
            raise UnknownFunction(f"no function `{name}` in the file (its kernels: {known})")
        roots = [found]
    lines = [(k.first_line, k.last_line) for k in roots]
    helpers: list[str] = []
    candidates = {node.name: node for node in module.functions if node.name not in {k.name for k in roots}}
    changed = True
    while changed:
        changed = False
        for helper, node in list(candidates.items()):
            own = (first_line(node), node.end_lineno or node.lineno)
            used = [line for line in module.references.get(helper, []) if not own[0] <= line <= own[1]]
            if used and all(any(a <= line <= b for a, b in lines) for line in used):
                helpers.append(helper)
                lines.append(own)
                del candidates[helper]
                changed = True
    lines.sort()
    index = module.index
    spans = [(index.offset(Position(a - 1, 0)), _line_end(index, b - 1)) for a, b in lines]
    return Scope(roots, helpers, lines, spans)


# A decorator line: the last name of its dotted path, before any call (`@flyc.kernel(...)`).
_DECORATOR_LINE = re.compile(r"^([ \t]*)@[ \t]*(?:[A-Za-z_]\w*[ \t]*\.[ \t]*)*([A-Za-z_]\w*)[ \t]*(?:\(|#|$)", re.M)


def kernel_with_fix_in(text: str, name: str, first: int, line: int, diagnostics: list[Diagnostic]) -> str | None:
    """``name`` when the module-level ``def`` whose statement is ``text`` (from 1-based line
    ``first``, blank and comment lines after it included) holds ``line`` and is a kernel, a
    launcher or a kernel builder with a finding that has a fix in its own lines: ``with_fix``'s
    answer there, read off its decorators' lines with no parse of the file. None when that
    does not decide it (then ``with_fix``)."""
    rows = text.splitlines()
    while rows and (not rows[-1].strip() or rows[-1].startswith("#")):
        rows.pop()  # after the function (its node ends at its last code line)
    last = first + len(rows) - 1
    if not first <= line <= last:
        return None
    if not any(wanted(d.fix, unsafe=True) and first <= d.range.start.line + 1 <= last for d in diagnostics):
        return None
    decorators = [(len(m.group(1)), m.group(2)) for m in _DECORATOR_LINE.finditer(text)]
    if any(indent == 0 and kind in _DECORATORS for indent, kind in decorators):
        return name  # its own decorator (``_classify``)
    if any(indent > 0 and kind in _DECORATORS for indent, kind in decorators):
        return name  # a builder: a decorated function inside
    return None


def with_fix(source: str, diagnostics: list[Diagnostic], line: int | None = None) -> list[Kernel]:
    """The module-level kernels (the one around 1-based ``line``, when given) whose scope has
    a finding with a fix, safe or unsafe; one parse of ``source``."""
    fixable = [d for d in diagnostics if wanted(d.fix, unsafe=True)]
    if not fixable:
        return []
    try:
        module = _module(source)
    except (SyntaxError, ValueError):
        return []
    every = (_classify(node) for node in module.functions)
    chosen = [k for k in every if k is not None and (line is None or k.first_line <= line <= k.last_line)]
    offsets = [module.index.offset(d.range.start) for d in fixable]
    found = []
    for kernel in chosen:
        scope = scope_of(source, kernel.name, module)
        if any(scope.contains(offset) for offset in offsets):
            found.append(kernel)
    return found


@dataclass(frozen=True)
class Tally:
    """The legacy findings (warnings and errors) in a kernel's scope: what to migrate first."""

    total: int
    safe: int  # with a safe fix
    unsafe: int  # with an unsafe one
    by_rule: tuple[tuple[str, int, int], ...]  # (code, findings, fixable), most first

    @property
    def fixable(self) -> int:
        return self.safe + self.unsafe

    def summary(self) -> str:
        """"12 legacy constructs, 9 fixable (5 safe, 4 unsafe)"."""
        head = f"{self.total} legacy construct{'s' if self.total != 1 else ''}"
        if not self.fixable:
            return f"{head}, none fixable"
        return f"{head}, {self.fixable} fixable ({self.safe} safe, {self.unsafe} unsafe)"

    def details(self) -> str:
        """Per rule: "FLY101 ×5 (3 fixable), FLY401 ×2"."""
        return ", ".join(f"{code} ×{n}" + (f" ({f} fixable)" if f else "") for code, n, f in self.by_rule)


def tallies(source: str, diagnostics: list[Diagnostic]) -> list[tuple[Kernel, Tally]]:
    """Each module-level kernel, launcher or builder with legacy findings in its scope (it and
    the helpers only it uses), with their count; one parse of ``source``."""
    legacy = [d for d in diagnostics if d.severity in (Severity.WARNING, Severity.ERROR)]
    if not legacy:
        return []
    try:
        module = _module(source)
    except (SyntaxError, ValueError):
        return []
    offsets = [module.index.offset(d.range.start) for d in legacy]
    found = []
    for kernel in kernels(source):
        scope = scope_of(source, kernel.name, module)
        inside = [d for d, offset in zip(legacy, offsets) if scope.contains(offset)]
        if not inside:
            continue
        rules: dict[str, list[int]] = {}
        safe = unsafe = 0
        for d in inside:
            row = rules.setdefault(d.code, [0, 0])
            row[0] += 1
            if wanted(d.fix, unsafe=False):
                safe += 1
                row[1] += 1
            elif wanted(d.fix, unsafe=True):
                unsafe += 1
                row[1] += 1
        by_rule = tuple(sorted(((c, n, f) for c, (n, f) in rules.items()), key=lambda r: (-r[1], r[0])))
        found.append((kernel, Tally(len(inside), safe, unsafe, by_rule)))
    return found


def _line_end(index: LineIndex, line: int) -> int:
    return index.offset(Position(line, len(index.line_text(line))))


def _references(tree: ast.Module, names: set[str]) -> dict[str, list[int]]:
    """The lines where each of ``names`` is read (the defining ``def`` is not a read)."""
    found: dict[str, list[int]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in names and not isinstance(node.ctx, ast.Store):
            found.setdefault(node.id, []).append(node.lineno)
    return found


def _in_scope(diagnostics: list[Diagnostic], scope: Scope, index: LineIndex) -> list[Diagnostic]:
    return [
        d
        for d in diagnostics
        if d.severity in (Severity.WARNING, Severity.ERROR) and scope.contains(index.offset(d.range.start))
    ]


def migrate(source: str, lint: Lint, name: str | None = None, others: OtherFiles | None = None) -> Migration:
    """Every fix (unsafe included) in the scope of ``name`` (None: every kernel) applied to a
    fixpoint, with the findings in scope before and after. ``others``: where the fixes'
    edits of other files go (without it, such fixes are not applied)."""
    scope = scope_of(source, name)
    before = _in_scope(lint(source), scope, LineIndex(source))
    outcome = fix_all(source, lint, unsafe=True, accept=lambda key: scope.contains(key.start), others=others)
    migration = Migration(source, scope, outcome.text, outcome, before)
    if migration.changed:
        names = [k.name for k in scope.roots] if name is not None else None
        after_scope = _rescope(outcome.text, names, scope)
        migration.after = _in_scope(lint(outcome.text), after_scope, LineIndex(outcome.text))
    else:
        migration.after = list(before)
    return migration


def _rescope(text: str, names: list[str] | None, scope: Scope) -> Scope:
    """The scope in the migrated text: the same roots and helpers, found again by name."""
    tree = ast.parse(text)
    if names is None:
        roots = kernels(text)
    else:
        roots = [k for k in (_find(tree, n) for n in names) if k is not None]
    lines = [(k.first_line, k.last_line) for k in roots]
    lines += [
        (first_line(node), node.end_lineno or node.lineno) for node in _functions(tree) if node.name in scope.helpers
    ]
    index = LineIndex(text)
    spans = [(index.offset(Position(a - 1, 0)), _line_end(index, b - 1)) for a, b in sorted(lines)]
    return Scope(roots, list(scope.helpers), sorted(lines), spans)
