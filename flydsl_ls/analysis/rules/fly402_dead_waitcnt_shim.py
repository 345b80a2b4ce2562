import ast
import bisect
import re
from dataclasses import dataclass, field

from flydsl_ls.analysis.model.diagnostic import Applicability, Edit, Fix
from flydsl_ls.analysis.model.locate import encloses
from flydsl_ls.analysis.model.statements import shares_lines
from flydsl_ls.analysis.model.text import Position, Range
from flydsl_ls.analysis.model.waitcnt_facts import COUNTER_CONSTANT, facts_for, shim_shaped
from flydsl_ls.analysis.rules.base import Invalid, Rule, Valid
from flydsl_ls.analysis.rules.module_scope import ModuleScope, Neighbours, Readers


@dataclass(eq=False)
class Candidate:
    name: str
    kind: str  # "shim" | "constant"
    stmt: ast.stmt
    binding: object
    body: list  # the statement list holding ``stmt``
    module_level: bool
    uses: list = field(default_factory=list)
    safe: bool = True

    def contains(self, node: ast.AST) -> bool:
        start = (self.stmt.lineno, self.stmt.col_offset)
        end = (self.stmt.end_lineno, self.stmt.end_col_offset)
        return start <= (node.lineno, node.col_offset) and (node.end_lineno, node.end_col_offset) <= end


def _has_counter_constant(text: str) -> bool:
    # The substring first: three times faster over a file than the pattern, which has no
    # literal prefix to skip to.
    return "CNT_" in text and COUNTER_CONSTANT.search(text) is not None


def _may_judge(text: str, statements: list[ast.stmt]) -> bool:
    """Whether a top-level statement may hold a candidate (outside class bodies: a
    shim-shaped def, a binding of a ``*CNT_*`` name) or bind ``__all__``."""
    if (_has_counter_constant(text) or "__all__" in text) and any(
        name == "__all__" or COUNTER_CONSTANT.search(name) for name in _bound_outside_classes(statements)
    ):
        return True
    return "def" in text and any(map(shim_shaped, _defs_outside_classes(statements)))


class DeadWaitcntShim(Rule):
    """
    A per-kernel wait-counter shim left with no use in the file: an `_encode_waitcnt(...)`
    encoder, a `_s_waitcnt(val)`-style helper that forwards a bitfield to `s_waitcnt`, or a
    magic wait-counter constant (`_VMCNT_LO_MASK`, `_LGKMCNT_EXPCNT_BASE`,
    `_LGKMCNT_0_ONLY`: names containing `VMCNT_`, `LGKMCNT_`, `EXPCNT_` or `WAITCNT_`, bound
    to an integer). These become dead once FLY401 has converted their call sites to
    `fx.rocdl.s_waitcnt(vmcnt=, lgkmcnt=, expcnt=)`; the fix deletes their lines (and a
    blank-line run the deletion would leave doubled). A shim used only by other dead shims
    is dead too, so one pass removes the whole family. Comments above a deleted statement
    are kept.

    flydsl-ls sees one file at a time, so a module-level name another module imports looks
    unused here. Only private names (leading underscore) are flagged at module level, plus
    names left out of a literal `__all__`; names listed in `__all__` never are. Even a
    private name can be imported (FlyDSL's `flash_attn_gfx950.py` imports `_s_waitcnt` and
    `_waitcnt_vm_n` from `flash_attn_utils.py`, and the MoE GEMMs call
    `layout_helpers._encode_waitcnt`). When the project is known (the files of a CLI run,
    the editor's workspace), a module-level name another project file mentions counts as
    used and is not flagged; the project may still be partial, so deleting a module-level
    definition stays an **unsafe** fix: check the other modules first. Definitions local to
    a function cannot be reached from elsewhere; deleting those is **safe**, unless a
    module-level dead shim still uses them.
    """

    code = "FLY402"
    name = "dead-waitcnt-shim"
    summary = "`_encode_waitcnt`/`_s_waitcnt` shims and `*CNT_*` constants left with no use"
    replacement = "delete them"
    fix_safety = "safe inside a function; unsafe at module level (another module may import the name)"
    fix_title = "Delete the unused waitcnt shim"
    example_before = "_LGKMCNT_0_ONLY = 0xC07F  # no use left"
    example_after = "# (deleted)"

    # Of the statements reading a candidate's name it only needs which names they read (a
    # use outside the candidates keeps one alive); its deletions only ask which lines
    # around a statement are blank.
    module_scope = ModuleScope(_may_judge, readers=Readers.STUBS, neighbours=Neighbours.BLANK_ENDS)

    def visit_Module(self, node: ast.Module) -> None:
        candidates = self._candidates(node)
        if not candidates:
            return
        by_binding = {id(c.binding): c for c in candidates}
        for name_node in self._loads_named(node, {c.name for c in candidates}):
            binding = self.model.binding_of(name_node)
            candidate = by_binding.get(id(binding)) if binding is not None else None
            if candidate is not None:
                candidate.uses.append(name_node)
        # Names another project file mentions are in use there (the project index, when
        # known, lists the files of the CLI run or the editor's workspace).
        elsewhere = self._mentioned_elsewhere({c.name for c in candidates if c.module_level})
        dead = {c for c in candidates if c.name not in elsewhere or not c.module_level}
        changed = True
        while changed:  # greatest fixpoint: dead unless used from outside dead code
            changed = False
            for c in list(dead):
                if any(not any(d.contains(use) for d in dead) for use in c.uses):
                    dead.discard(c)
                    changed = True
        changed = True
        while changed:  # a safe deletion must not break a dead shim that stays (unsafe)
            changed = False
            for c in dead:
                if c.safe and any(
                    d.contains(use) and not d.safe for use in c.uses for d in dead if d is not c
                ):
                    c.safe = False
                    changed = True
        ordered = sorted(dead, key=lambda c: (c.stmt.lineno, c.stmt.col_offset))
        edits = self._deletions(ordered)
        for c in ordered:
            self._report(c, edits.get(id(c)))

    def _mentioned_elsewhere(self, names: set) -> set:
        """The names another project file's text has as a word (each asked of the project
        index, which answers from its word index and records the question)."""
        project = getattr(self.model, "project", None)
        if project is None:
            return set()
        return {name for name in names if project.mentioned_elsewhere(name)}

    def _loads_named(self, tree: ast.Module, names: set):
        """Every loaded ``Name`` with one of ``names``, visiting only the subtrees whose lines
        mention one of them (a Name's identifier is on its own line, so this misses none)."""
        pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(names))) + r")\b")
        lines = [i + 1 for i, text in enumerate(self.model.index.lines) if pattern.search(text)]
        stack = [tree]
        while stack:
            for child in ast.iter_child_nodes(stack.pop()):
                lineno = getattr(child, "lineno", None)
                if lineno is not None:
                    k = bisect.bisect_left(lines, lineno)
                    if k == len(lines) or lines[k] > child.end_lineno:
                        continue
                if isinstance(child, ast.Name):
                    if isinstance(child.ctx, ast.Load) and child.id in names:
                        yield child
                    continue
                stack.append(child)

    # --- candidates -----------------------------------------------------------------------
    def _candidates(self, module: ast.Module) -> list[Candidate]:
        facts = facts_for(self.model)
        exported, has_all = _exports(module)
        helper_nodes = [h.node for h in facts.helpers.values() if h.shim]
        if not helper_nodes and not _has_counter_constant(self.model.source):
            return []  # no shim, and no `*CNT_*` name for a constant: no statement to walk
        found = []
        for body, stmt in _statements(module):
            if isinstance(stmt, ast.FunctionDef):
                helper = facts.helpers.get(id(stmt))
                if helper is None or not helper.shim:
                    continue
                kind, target = "shim", stmt
            else:
                target = _constant_target(stmt)
                if target is None or not COUNTER_CONSTANT.search(target.id):
                    continue
                if facts.value(stmt.value) is None:
                    continue
                if any(encloses(h, stmt) for h in helper_nodes):
                    continue  # a local of a helper goes with the helper
                kind = "constant"
            name = target.name if isinstance(target, ast.FunctionDef) else target.id
            binding = self._binding_of(target, name)
            if binding is None or binding.scope.kind not in ("module", "function"):
                continue
            if len(binding.scope.bindings.get(name, ())) != 1:
                continue  # rebound somewhere: leave it alone
            module_level = binding.scope.kind == "module"
            if module_level:
                if name in exported:
                    continue
                if not name.startswith("_") and not has_all:
                    continue  # public API of the module
            candidate = Candidate(name, kind, stmt, binding, body, module_level)
            candidate.safe = not module_level
            found.append(candidate)
        return found

    def _binding_of(self, target: ast.AST, name: str):
        """The binding ``target`` (a def, or an assigned name) makes. Each scope is asked for
        ``name`` alone: listing every binding made the incremental analysis redo this rule
        whenever a module-level name came or went."""
        for scope in self.model.scopes:
            for binding in scope.bindings.get(name, ()):
                if binding.node is target:
                    return binding
        return None

    # --- reporting ------------------------------------------------------------------------
    def _report(self, c: Candidate, edit: Edit | None) -> None:
        what = "waitcnt shim" if c.kind == "shim" else "wait-counter constant"
        message = f"`{c.name}` is a {what} with no use left in this file: delete it"
        if c.module_level:
            message += " (unsafe: another module may import it; flydsl-ls checks one file at a time)"
        elif not c.safe:
            message += " (unsafe: a module-level shim that stays until you delete it uses it)"
        anchor = self._name_anchor(c)
        if edit is None:
            self.report(anchor, message + " (no automatic fix: it shares its lines or block)")
            return
        fix = Fix(
            title=self.fix_title if c.safe else f"{self.fix_title} (unsafe)",
            applicability=Applicability.SAFE if c.safe else Applicability.UNSAFE,
            edits=(edit,),
        )
        self.report(anchor, message, fix=fix)

    def _name_anchor(self, c: Candidate) -> ast.AST | Range:
        """The shim's name: a constant's target, or the name after ``def``."""
        if c.kind == "constant":
            return _constant_target(c.stmt)
        line = c.stmt.lineno - 1
        column = self.model.index.line_text(line).find(c.name, c.stmt.col_offset + 3)
        return Range(Position(line, column), Position(line, column + len(c.name)))

    def _deletions(self, ordered: list[Candidate]) -> dict[int, Edit]:
        """One whole-line deletion per candidate. Neighbours deleted together form a group
        (only blank lines between them): each member also takes the blank gap after it, and
        the last takes the blank run after the group when one precedes it too, so the
        surrounding blank lines stay as they were."""
        index = self.model.index
        total = len(index.lines)

        def blank(line: int) -> bool:
            return 0 <= line < total and not index.line_text(line).strip()

        owning = [c for c in ordered if self._owns_lines(c)]
        per_body: dict[int, int] = {}
        for c in owning:
            per_body[id(c.body)] = per_body.get(id(c.body), 0) + 1
        owning = [c for c in owning if per_body[id(c.body)] < len(c.body)]  # keep a block non-empty
        groups: list[list[Candidate]] = []
        for c in owning:
            last = groups[-1][-1] if groups else None
            if (
                last is not None
                and last.body is c.body
                and all(blank(line) for line in range(last.stmt.end_lineno, c.stmt.lineno - 1))
            ):
                groups[-1].append(c)
            else:
                groups.append([c])
        edits: dict[int, Edit] = {}
        for group in groups:
            first_line = group[0].stmt.lineno - 1
            end = group[-1].stmt.end_lineno  # 0-based line after the group
            after = end
            while after < total and blank(after):
                after += 1
            start = first_line
            if after >= total:  # only blank lines follow: drop the blank run before as well
                while start > 0 and blank(start - 1):
                    start -= 1
                tail_end = total
            elif blank(first_line - 1):
                tail_end = after  # the blank run after would double the one before
            else:
                tail_end = end
            for i, c in enumerate(group):
                begin = start if i == 0 else c.stmt.lineno - 1
                stop = group[i + 1].stmt.lineno - 1 if i + 1 < len(group) else tail_end
                edits[id(c)] = Edit(Range(Position(begin, 0), Position(stop, 0)), "")
        return edits

    def _owns_lines(self, c: Candidate) -> bool:
        return not shares_lines(self.model, c.stmt)

    VALID = [
        # Still used.
        Valid(
            "from flydsl.expr import rocdl\n\n_LGKMCNT_0_ONLY = 0xC07F\n\n"
            "def _s_waitcnt(val):\n    rocdl.s_waitcnt(val)\n\n_s_waitcnt(_LGKMCNT_0_ONLY)\n"
        ),
        # Public module-level names (no __all__), and names exported through __all__.
        Valid("LGKMCNT_0_ONLY = 0xC07F\n"),
        Valid("__all__ = ['_VMCNT_LO_MASK']\n_VMCNT_LO_MASK = 0xF\n"),
        # Not waitcnt shims: an int helper unrelated to waits, an unrelated count, a
        # helper with other side effects.
        Valid("def _ceil_div(a, b):\n    return (a + b - 1) // b\n"),
        Valid("_CNT_SU = 4\n_COMPUTE_CNT_SU = 4\n"),
        Valid(
            "from flydsl.expr import rocdl\n\ndef _wait_barrier(val):\n"
            "    rocdl.s_waitcnt(val)\n    rocdl.s_barrier()\n"
        ),
        # Class attributes are reached through instances: not tracked.
        Valid("class Traits:\n    _LGKMCNT_0_ONLY = 0xC07F\n"),
    ]
    INVALID = [
        # Function-local constants and a nested shim: safe, whole lines, blank runs kept single.
        Invalid(
            "import flydsl.expr as fx\n\n\ndef build():\n"
            "    _VMCNT_LO_MASK = 0xF\n"
            "    _LGKMCNT_EXPCNT_BASE = 0x3F70  # vmcnt=0, lgkmcnt=63\n\n"
            "    def wait_vmcnt(n):\n"
            "        val = (n & _VMCNT_LO_MASK) | _LGKMCNT_EXPCNT_BASE\n"
            "        fx.rocdl.s_waitcnt(val)\n\n"
            "    fx.rocdl.s_waitcnt(vmcnt=0)\n",
            expected="import flydsl.expr as fx\n\n\ndef build():\n\n"
            "    fx.rocdl.s_waitcnt(vmcnt=0)\n",
            line=5,
            column=5,
            count=3,
        ),
        # Deleted together, a group keeps the blank lines around it single.
        Invalid(
            "import flydsl.expr as fx\n\n\ndef build():\n    x = 1\n\n"
            "    _VMCNT_LO_MASK = 0xF\n    _LGKMCNT_0_ONLY = 0xC07F\n\n"
            "    def wait_vmcnt(n):\n        fx.rocdl.s_waitcnt((n & _VMCNT_LO_MASK) | 0x3F70)\n\n"
            "    fx.rocdl.s_waitcnt(lgkmcnt=0)\n    return x\n",
            expected="import flydsl.expr as fx\n\n\ndef build():\n    x = 1\n\n"
            "    fx.rocdl.s_waitcnt(lgkmcnt=0)\n    return x\n",
            line=7,
            count=3,
        ),
        # Module level: unsafe (another module may import it).
        Invalid(
            "import flydsl.expr as fx\n\n\n"
            "def _encode_waitcnt(vmcnt=63, expcnt=7, lgkmcnt=63):\n"
            '    """Encode s_waitcnt bitfield for CDNA3 (gfx94x)."""\n'
            "    vm_lo = vmcnt & 0xF\n    vm_hi = (vmcnt >> 4) & 0x3\n"
            "    return vm_lo | (expcnt << 4) | (lgkmcnt << 8) | (vm_hi << 14)\n\n\n"
            "def kernel():\n    fx.rocdl.s_waitcnt(lgkmcnt=0)\n",
            expected="import flydsl.expr as fx\n\n\n"
            "def kernel():\n    fx.rocdl.s_waitcnt(lgkmcnt=0)\n",
            unsafe=True,
            line=4,
            column=5,
            message="another module may import it",
        ),
        # A dead constant at the end of the file takes the blank run before it.
        Invalid(
            "import flydsl.expr as fx\nfx.rocdl.s_waitcnt(lgkmcnt=0)\n\n\n_LGKMCNT_0_ONLY = 0xC07F\n",
            expected="import flydsl.expr as fx\nfx.rocdl.s_waitcnt(lgkmcnt=0)\n",
            unsafe=True,
        ),
        # __all__ present: a public name it does not list is flagged too.
        Invalid(
            "__all__ = ['kernel']\nLGKMCNT_0_ONLY = 0xC07F\n\ndef kernel():\n    pass\n",
            expected="__all__ = ['kernel']\n\ndef kernel():\n    pass\n",
            unsafe=True,
            line=2,
        ),
        # Sharing a line: flagged, no fix.
        Invalid("def build():\n    _VMCNT_X = 3; y = 1\n    return y\n", expected=None),
    ]


def _statements(module: ast.Module):
    """(body, statement) for every statement in module and function bodies (not classes)."""
    stack = [module.body]
    while stack:
        body = stack.pop()
        for stmt in body:
            yield body, stmt
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                stack.append(stmt.body)
            elif isinstance(stmt, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)):
                stack.append(stmt.body)
                if getattr(stmt, "orelse", None):
                    stack.append(stmt.orelse)
            elif isinstance(stmt, ast.Try):
                for block in (stmt.body, stmt.orelse, stmt.finalbody, *(h.body for h in stmt.handlers)):
                    if block:
                        stack.append(block)


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _defs_outside_classes(statements: list[ast.stmt]):
    """Every def among ``statements`` and in their blocks, class bodies left out."""
    stack = [statements]
    while stack:
        for stmt in stack.pop():
            if isinstance(stmt, ast.ClassDef):
                continue
            if isinstance(stmt, _DEFS):
                yield stmt
            for block in ("body", "orelse", "finalbody"):
                stack.append(getattr(stmt, block, None) or [])
            for part in [*getattr(stmt, "handlers", ()), *getattr(stmt, "cases", ())]:
                stack.append(part.body)


def _bound_outside_classes(statements: list[ast.stmt]) -> set[str]:
    """The names ``statements`` bind outside class bodies, and (they may bind outside
    from inside one) every name a ``global`` or ``nonlocal`` declares."""
    names: set[str] = set()
    stack: list[ast.AST] = list(statements)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
            stack.extend([*node.decorator_list, *node.bases, *node.keywords])
            for inner in node.body:
                declared = (d for d in ast.walk(inner) if isinstance(d, (ast.Global, ast.Nonlocal)))
                names.update(name for d in declared for name in d.names)
            continue
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                names.add(node.id)
        elif isinstance(node, (*_DEFS, ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
            if node.name:
                names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            if node.name != "*":
                names.add(node.asname or node.name.split(".")[0])
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
        stack.extend(ast.iter_child_nodes(node))
    return names


def _constant_target(stmt: ast.stmt) -> ast.Name | None:
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0]
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
        return stmt.target
    return None


def _exports(module: ast.Module) -> tuple[set, bool]:
    """Names a module-level ``__all__`` lists (string literals), and whether it has one."""
    names: set = set()
    has_all = False
    for stmt in module.body:
        targets = []
        if isinstance(stmt, ast.Assign):
            targets = stmt.targets
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
            targets = [stmt.target]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and stmt.value is not None:
            has_all = True
            for node in ast.walk(stmt.value):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    names.add(node.value)
    return names, has_all
