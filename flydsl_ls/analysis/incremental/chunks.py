"""A module cut into chunks, one per top-level statement, and re-cut after an edit.

A chunk runs from its statement's first line (its first decorator's) to the next
statement's first line, so the blank lines and comments after a statement are its own;
the first chunk also holds whatever precedes the first statement. Statements sharing a
line share a chunk. After an edit, chunks whose text is unchanged at the start and at the
end of the new source are kept (the same objects); only the text between is parsed
again, starting one chunk early so the cut is the one a full parse would make.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from flydsl_ls.analysis.model.parsing import parse
from flydsl_ls.analysis.model.scopes import ScopeBuilder, lookup, release
from flydsl_ls.analysis.model.semantic import nodes_under
from flydsl_ls.analysis.model.text import split_lines

if TYPE_CHECKING:
    from flydsl_ls.analysis.rules.module_scope import ModuleScope

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass(eq=False, frozen=True)
class Chunk:
    """Complete top-level statements and the lines after them. Immutable: a changed text
    is a new chunk, so caches may key on the object."""

    text: str
    lines: int  # line count; a last line without a newline counts
    kind: str  # def | class | import | docstring | gap | other
    name: str | None  # of a def or class
    defines: frozenset[str]  # module-level names it binds (``global`` ones included)
    reads: frozenset[str]  # names it reads from the module scope (or that resolve nowhere)
    node_types: frozenset[type] | None  # those the engine visits in it; None: not listed (``visited_by``)
    always: bool  # every reduced module keeps it (imports, the docstring, star imports)
    cores: frozenset[ModuleScope]  # the whole-module rules' scopes whose core it is

    def visited_by(self, handled: frozenset[type]) -> bool:
        """Whether a handler of ``handled`` (node types) may run on its nodes. A chunk that
        reads a name holds an ``ast.Name``, which the default rules visit: its node types
        are not listed (a walk of every statement, ~20 ms of a first analysis of aiter's
        5.7k-line MoE kernel), and it is visited by any rules."""
        return self.node_types is None or not self.node_types.isdisjoint(handled)

    @cached_property
    def stub(self) -> str:
        """The same lines with the code gone but the names still bound: the first code
        line binds them, the last stays code, blank and comment lines are kept, so a rule
        looking at a neighbouring line sees what it would see in the real text."""
        return self._stubbed(self._binder())

    @cached_property
    def plain_stub(self) -> str:
        """``stub`` binding a def's or class's names by assignment: cheaper to analyse,
        and the same to anyone but a reader of the module's first definition."""
        names = " = ".join([*sorted(self.defines), "None"]) if self.defines else "pass"
        return self._stubbed(names, extra="pass")

    @cached_property
    def blank_ends(self) -> tuple[int, int] | None:
        """Blank lines at its start and at its end (None: all blank), the same in its
        stubs: for a rule asking whether the lines around a statement are blank."""
        rows = [not row.strip() for row in split_lines(self.text)]
        if all(rows):
            return None
        lead = next(i for i, blank in enumerate(rows) if not blank)
        trail = next(i for i, blank in enumerate(reversed(rows)) if not blank)
        return lead, trail

    def known_stub(self, stub: str, start: int) -> list[ast.stmt] | None:
        """The statements of one of its stubs (or of its own text) placed at 0-based line
        ``start``, if parsed there before (``remember_stub``): shared by the reduced
        modules holding it, since nothing changes a syntax tree once parsed."""
        known = self.__dict__.get("_stub_trees", {}).get(stub)
        return known[1] if known is not None and known[0] == start else None

    def remember_stub(self, stub: str, start: int, statements: list[ast.stmt]) -> None:
        self.__dict__.setdefault("_stub_trees", {})[stub] = (start, statements)

    def forget_statements(self) -> None:
        """Drop its own statements (``split`` with a ``base``), keeping its stubs'."""
        self.__dict__.get("_stub_trees", {}).pop(self.text, None)

    def reading_stub(self, names: list[str]) -> str:
        """``plain_stub`` that also reads ``names`` where this chunk does (in a function
        when it is one): for a rule that only asks whether a name is used."""
        stubs = self.__dict__.setdefault("_reading_stubs", {})  # asked on every edit
        key = tuple(names)
        if key not in stubs:
            stubs[key] = self._reading_stub(key)
        return stubs[key]

    def _reading_stub(self, names: tuple[str, ...]) -> str:
        reads = ", ".join(names)
        if self.kind == "def":
            binder = f"def {self.name}(): {reads}"
        elif self.kind == "class":
            binder = f"class {self.name}: {reads}"
        else:
            binder = " = ".join([*sorted(self.defines), f"({reads},)"]) if self.defines else f"({reads},)"
        return self._stubbed(binder)

    def _stubbed(self, binder: str, extra: str | None = None) -> str:
        rows = split_lines(self.text)
        code = [i for i, row in enumerate(rows) if row.strip() and not row.lstrip().startswith("#")]
        if not code:
            return self.text
        last = extra if extra is not None else self._extra_binder()
        first_code, last_code, code_rows = code[0], code[-1], set(code)  # a set: 3,000-line builders
        out = []
        for i, row in enumerate(rows):
            end = row[len(row.rstrip("\r\n")) :]
            if i == first_code:
                out.append(binder + end)
            elif i == last_code:
                out.append(last + end)
            elif i in code_rows:
                out.append(end)
            else:
                out.append(row)
        return "".join(out)

    def _binder(self) -> str:
        if self.kind == "def":
            return f"def {self.name}(): pass"
        if self.kind == "class":
            return f"class {self.name}: pass"
        return " = ".join([*sorted(self.defines), "None"]) if self.defines else "pass"

    def _extra_binder(self) -> str:
        extra = sorted(self.defines - {self.name}) if self.kind in ("def", "class") else []
        return " = ".join([*extra, "None"]) if extra else "pass"

    @property
    def stubbable(self) -> bool:
        """A stub can stand in for it (a one-line def binding more names cannot)."""
        if self.kind not in ("def", "class") or self.defines == {self.name}:
            return True
        rows = [r for r in split_lines(self.text) if r.strip() and not r.lstrip().startswith("#")]
        return len(rows) > 1


def line_count(text: str) -> int:
    return len(split_lines(text))


def split(
    source: str,
    body: list[ast.stmt],
    package: str | None,
    at_start: bool = True,
    reusable: list[Chunk] = (),
    base: int | None = None,
    scopes: Sequence[ModuleScope] = (),
) -> list[Chunk]:
    """The chunks of a parsed text (``body``: its statements, lines counted from 1).
    ``at_start``: the text begins the module; ``reusable``: chunks the text was edited
    from (cut for the same ``scopes``), kept (the same objects) where their text recurs in
    the same order. ``base``: the text was parsed after that many blank lines, standing
    where it stands in the module; its new chunks then keep their statements for the
    reduced modules holding them (``known_stub``), which need not parse the edited chunk
    again, until the analysis of this version is done (``forget_statements``).
    ``scopes``: the whole-module rules' scopes each chunk is judged for."""
    if not body:
        return [make_chunk(source, [], package, first=at_start, scopes=scopes)] if source else []
    shift = base or 0
    offsets = [0, *itertools.accumulate(map(len, split_lines(source)))]
    groups: list[list[ast.stmt]] = []
    for stmt in body:
        if groups and first_line(stmt) <= groups[-1][-1].end_lineno:
            groups[-1].append(stmt)  # shares a line with the previous statement
        else:
            groups.append([stmt])
    chunks = []
    next_reusable = 0
    for i, group in enumerate(groups):
        line = 0 if i == 0 else first_line(group[0]) - 1 - shift  # where it starts in ``source``
        start = offsets[line]
        end = offsets[first_line(groups[i + 1][0]) - 1 - shift] if i + 1 < len(groups) else len(source)
        text = source[start:end]
        first = at_start and i == 0
        same = None
        for k in range(next_reusable, len(reusable)):
            if reusable[k].text == text:
                if (reusable[k].kind == "docstring") == (first and _is_docstring(group)):
                    same = reusable[k]
                    next_reusable = k + 1
                break
        if same is None:
            same = make_chunk(text, group, package, first=first, scopes=scopes)
            if base is not None:
                same.remember_stub(text, base + line, group)
        chunks.append(same)
    return chunks


def resplit(
    old: list[Chunk], source: str, package: str | None, scopes: Sequence[ModuleScope] = ()
) -> list[Chunk] | None:
    """The chunks of ``source``, an edit of the text ``old`` was cut from (for the same
    ``scopes``), reusing every unchanged one; None when the changed part does not parse
    on its own (then neither does the whole, or the edit reached across a chunk
    boundary: parse it all)."""
    head, offset = unchanged_head(old, source)
    if head == len(old) and offset == len(source):
        return old
    tail, end = len(old), len(source)
    while tail > head + 1 and end - len(old[tail - 1].text) >= offset and source.endswith(old[tail - 1].text, 0, end):
        end -= len(old[tail - 1].text)
        tail -= 1
    region = source[offset:end]
    if tail < len(old) and region and not region.endswith(("\n", "\r")):
        return None  # the region's last line runs into the next chunk's first
    base = sum(c.lines for c in old[:head])
    try:
        tree = parse("\n" * base + region)  # where it stands: its statements serve as parsed
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    new = split(region, tree.body, package, at_start=head == 0, reusable=old[head:tail], base=base, scopes=scopes)
    return old[:head] + new + old[tail:]


def unchanged_head(old: list[Chunk], source: str) -> tuple[int, int]:
    """How many chunks ``source`` starts with unchanged, and where they end: from there
    on, ``source`` parses as a module would. Less one (lines inserted after a statement
    are its chunk's, a line at the start of the next statement may continue it: `else:`,
    an indented one, and a last line without a newline may have been continued) unless
    the next chunk's first line, a statement's at column 0, is unchanged too: then the
    statements before end where they ended (an edit in the second of two 3,000-line
    builders parsed both: 90 ms)."""
    head, offset = 0, 0
    while head < len(old) and source.startswith(old[head].text, offset):
        offset += len(old[head].text)
        head += 1
    if head == len(old) and offset == len(source):
        return head, offset
    if 0 < head < len(old):
        first = old[head].text.partition("\n")
        if first[1] and source.startswith(first[0] + "\n", offset):
            return head, offset
    head = max(head - 1, 0)
    return head, sum(len(c.text) for c in old[:head])


def _is_docstring(stmts: list[ast.stmt]) -> bool:
    head = stmts[0]
    return isinstance(head, ast.Expr) and isinstance(head.value, ast.Constant)


def first_line(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", None)
    return min([stmt.lineno, *(d.lineno for d in decorators)]) if decorators else stmt.lineno


def make_chunk(
    text: str, stmts: list[ast.stmt], package: str | None, first: bool, scopes: Sequence[ModuleScope] = ()
) -> Chunk:
    cores = frozenset(scope for scope in scopes if scope.core(text, stmts))
    if not stmts:
        return Chunk(text, line_count(text), "gap", None, frozenset(), frozenset(), frozenset(), True, cores)
    builder = ScopeBuilder(package)
    module = builder.build(ast.Module(body=stmts, type_ignores=[]))
    # Where a read stands picks among one scope's bindings, never another scope's: whether
    # it reads the module is asked once per name and scope (7,186 reads, 3,059 such pairs
    # in aiter's 5.7k-line MoE kernel).
    owners = {}
    for name in builder.loads:
        scope = builder.scope_of_node[id(name)]
        key = (id(scope), name.id)
        if key not in owners:
            owners[key] = lookup(name.id, scope, (name.lineno, name.col_offset))
    reads = {name for (_, name), owner in owners.items() if owner is None or owner.scope is module}
    node_types = None if builder.loads else frozenset().union(*(map(type, nodes_under(stmt)) for stmt in stmts))
    kind, name = _kind(stmts, first)
    imports = any(b.kind == "import" for items in module.bindings.values() for b in items)
    defines = frozenset(module.bindings)
    release(builder.scopes)
    return Chunk(
        text=text,
        lines=line_count(text),
        kind=kind,
        name=name,
        defines=defines,
        reads=frozenset(reads),
        node_types=node_types,
        always=kind in ("import", "docstring") or imports or bool(module.star_imports),
        cores=cores,
    )


def _kind(stmts: list[ast.stmt], first: bool) -> tuple[str, str | None]:
    if len(stmts) == 1 and isinstance(stmts[0], _DEFS):
        return "def", stmts[0].name
    if len(stmts) == 1 and isinstance(stmts[0], ast.ClassDef):
        return "class", stmts[0].name
    if all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in stmts):
        return "import", None
    if first and _is_docstring(stmts):
        return "docstring", None
    return "other", None
