"""What a rule is: code, name, documentation, test cases, and ``visit_<Node>`` hooks (for
``visit_Call``, the callees it acts on: ``Callees``; tests/test_engine_callees.py checks
that they hide no finding).

A rule's class docstring is its documentation; ``VALID`` and ``INVALID`` are its test
cases (the test suite runs every one, the docs generator prints them). Rules only
query the semantic model; they never match text.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from flydsl_ls.analysis.model.apis import missing_in
from flydsl_ls.analysis.model.diagnostic import Applicability, Diagnostic, Edit, Fix, Severity
from flydsl_ls.analysis.model.rewrite import fx_alias, ungrouped_range
from flydsl_ls.analysis.model.suppression import Directive
from flydsl_ls.analysis.model.text import Range
from flydsl_ls.analysis.model.valueflow import Use, value_uses
from flydsl_ls.analysis.rules.module_scope import ModuleScope

if TYPE_CHECKING:
    from flydsl_ls.analysis.rules.context import RuleContext


@dataclass(frozen=True)
class Callees:
    """The calls a rule's ``visit_Call`` can act on, by the callee's canonical symbol
    (``SemanticModel.resolve``): the engine calls it for those only. A call to anything
    else, or to nothing FlyDSL resolves, is left alone by the rule's own first test. Most
    rules wait for a handful of symbols; asked of every call, they were 14 of the 20 calls
    made for each ``ast.Call``."""

    symbols: frozenset[str] = frozenset()  # these symbols
    modules: frozenset[str] = frozenset()  # any attribute of these modules
    prefixes: tuple[str, ...] = ()  # any symbol that starts so

    def take(self, symbol: str) -> bool:
        return symbol in self.symbols or symbol.rpartition(".")[0] in self.modules or symbol.startswith(self.prefixes)


@dataclass(frozen=True)
class Valid:
    """Code the rule must not flag."""

    code: str
    settings: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Invalid:
    """Code the rule must flag.

    ``expected`` is the exact text after applying this rule's fixes (safe ones, or also
    unsafe ones when ``unsafe``); None means the diagnostic carries no such fix.
    ``line``/``column`` (1-based) locate the first diagnostic; ``count`` is how many.
    """

    code: str
    expected: str | None = None
    unsafe: bool = False
    line: int | None = None
    column: int | None = None
    count: int = 1
    message: str | None = None  # a substring the first message must contain
    settings: dict = field(default_factory=dict)
    # Other files of the case's project (the case is then `pkg/kernel.py`): path in the
    # package -> text; and their exact text after the fixes (a fix that edits them too).
    files: dict = field(default_factory=dict)
    expected_files: dict = field(default_factory=dict)


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]  # one line: what is flagged
    replacement: ClassVar[str]  # what to write instead
    fix_safety: ClassVar[str]  # "safe", "unsafe", "none", or a short qualified phrase
    fix_title: ClassVar[str | None] = None  # the quick fix's human title
    deprecated_tag: ClassVar[bool] = True  # LSP "Deprecated" tag on the diagnostic
    severity: ClassVar[Severity] = Severity.WARNING
    default: ClassVar[bool] = True  # runs when nothing is selected (False: opt-in, as ruff's RUF100)
    example_before: ClassVar[str] = ""
    example_after: ClassVar[str] = ""
    VALID: ClassVar[list[Valid]] = []
    INVALID: ClassVar[list[Invalid]] = []
    # A whole-module rule (``visit_Module``): the part of a file it judges; None, all of it.
    module_scope: ClassVar[ModuleScope | None] = None
    # The calls ``visit_Call`` acts on; None: every call (it reads more than the callee).
    callees: ClassVar[Callees | None] = None
    # ``visit_Name`` acts only on reads that may name a symbol (``may_name_symbol``): the
    # engine hands it no other name (most of a file's names are locals).
    symbol_reads: ClassVar[bool] = False

    def __init__(self, ctx: RuleContext):
        self.ctx = ctx
        self.model = ctx.model

    @classmethod
    def judge_suppressions(
        cls, source: str, findings: list[Diagnostic], selected: set[str], directives: list[Directive]
    ) -> list[Diagnostic]:
        """A rule that judges the file's suppression ``directives`` once every rule has run:
        its findings, given every rule's ``findings`` (before suppression) and the codes of
        the ``selected`` rules. The others judge nothing."""
        return []

    @classmethod
    def explanation(cls) -> str:
        import inspect

        return inspect.cleandoc(cls.__doc__ or "")

    # --- helpers for subclasses -----------------------------------------------
    def report(
        self,
        where: ast.AST | Range,
        message: str,
        *,
        fix: Fix | None = None,
        note: str | None = None,
        severity: Severity | None = None,
        statement: Range | None = None,
    ) -> None:
        """Report ``where`` (a node, or a range for text that is no node of its own).
        ``statement``: the code a fix depends on, when more than the statement around
        ``where`` (a whole function a fix rewrites); the incremental analysis re-checks the
        finding when it changes."""
        if fix is not None:
            fix, message = self._within_release(fix, message)
        severity = severity or self.severity
        at_node = not isinstance(where, Range)
        if fix is None:
            statement = None
        elif statement is None and at_node:
            statement = self.ctx.statement_range(where)
        self.ctx.diagnostics.append(
            Diagnostic(
                code=self.code,
                message=message,
                range=self.ctx.range(where) if at_node else where,
                severity=severity,
                fix=fix,
                # Struck through only where the code is to go: a construct the guides keep
                # (reported as information or a hint) is not deprecated.
                deprecated=self.deprecated_tag and severity in (Severity.WARNING, Severity.ERROR),
                note=note,
                statement=statement,
            )
        )

    def _within_release(self, fix: Fix, message: str) -> tuple[Fix | None, str]:
        """Withhold a fix whose replacement the project's FlyDSL release lacks."""
        version = self.ctx.options.flydsl_version
        if not version:
            return fix, message
        fx = fx_alias(self.model)[0]
        for edit in (*fix.edits, *(e for group in fix.elsewhere for e in group.edits)):
            missing = missing_in(edit.content, fx, version)
            if missing:
                api, release = missing
                since = f"it arrives in FlyDSL {release}" if release else "no release has it"
                return None, f"{message} (no fix: `{api}` is not in FlyDSL {version}; {since})"
        return fix, message

    def replace(
        self, node: ast.AST, content: str, title: str, safe: bool = True, extra: tuple = ()
    ) -> Fix:
        """A fix replacing ``node``'s source span (plus any extra edits), with the grouping
        parentheses around it when the replacement needs none."""
        return Fix(
            title=title if safe else f"{title} (unsafe)",
            applicability=Applicability.SAFE if safe else Applicability.UNSAFE,
            edits=(Edit(ungrouped_range(self.model, node, content), content), *extra),
        )

    def value_uses(
        self, node: ast.expr, *, through_operators: bool = False, transparent: frozenset[str] = frozenset(),
        stop=None,
    ) -> list[Use]:
        """Where the value of ``node`` (in the statement being visited) goes."""
        # The innermost function around the visit that holds ``node`` (a value defined in an
        # enclosing function and read from a closure), else the module: small maps first.
        roots = [p for p in reversed(self.ctx.parents) if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef))]
        parents = next(
            (m for m in map(self.model.parent_map, roots) if id(node) in m), None
        ) or self.model.parent_map(self.model.tree)
        return value_uses(
            self.model, node, parents, through_operators=through_operators, transparent=transparent, stop=stop
        )

    def edit(self, rng: Range, content: str) -> Edit:
        return Edit(rng, content)

    def text(self, node: ast.AST) -> str:
        return self.ctx.segment(node)


def call_argument(call: ast.Call, index: int, keyword: str) -> ast.expr | None:
    """What ``call`` passes for the parameter at position ``index`` named ``keyword``; None
    when it passes nothing there, or a ``*args`` at or before ``index`` hides what it passes."""
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    if any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return None
    return call.args[index] if index < len(call.args) else None
