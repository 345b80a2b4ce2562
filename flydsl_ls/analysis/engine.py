"""Runs the enabled rules over one file in a single walk of its syntax tree."""

from __future__ import annotations

import ast
import dataclasses
import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from flydsl_ls.analysis.model import recovery
from flydsl_ls.analysis.model.deep import on_deep_stack
from flydsl_ls.analysis.model.diagnostic import Diagnostic, Severity
from flydsl_ls.analysis.model.fields import CHILD_FIELDS
from flydsl_ls.analysis.model.parsing import parse
from flydsl_ls.analysis.model.project import ProjectView
from flydsl_ls.analysis.model.scopes import Interrupted
from flydsl_ls.analysis.model.semantic import SemanticModel
from flydsl_ls.analysis.model.suppression import directives, is_suppressed, suppressions
from flydsl_ls.analysis.model.text import LineIndex, Position, Range
from flydsl_ls.analysis.rules import ALL_RULES, SYNTAX_ERROR
from flydsl_ls.analysis.rules.base import Callees, Rule
from flydsl_ls.analysis.rules.context import AnalysisOptions, RuleContext

log = logging.getLogger(__name__)


@dataclass
class FileAnalysis:
    diagnostics: list[Diagnostic]
    model: SemanticModel | None  # None when the file does not parse
    internal_errors: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class AnalysisRequest:
    """One file to analyse: its text, the rules to run, the resolved settings and where it
    sits (its package, its path, the rest of the project). The full analysis (``analyze``)
    and the incremental one (``IncrementalAnalyzer.analyze``) take the same request."""

    source: str
    rules: Sequence[type[Rule]] = ALL_RULES
    options: AnalysisOptions | None = None  # None: the defaults
    package: str | None = None
    path: str | None = None
    project: ProjectView | None = None

    def __post_init__(self) -> None:
        if self.options is None:
            object.__setattr__(self, "options", AnalysisOptions())

    def with_source(self, source: str) -> AnalysisRequest:
        return dataclasses.replace(self, source=source)


def analyze(request: AnalysisRequest, *, model: SemanticModel | None = None) -> FileAnalysis:
    """Diagnostics of one file. ``model`` may be one already built for this exact source."""
    run = functools.partial(_analyze, request, model)
    try:
        return run()
    except RecursionError:
        pass
    try:
        return on_deep_stack(run)  # a deeply nested file: walk it again with room to recurse
    except RecursionError:
        return FileAnalysis([], None, ["file too deeply nested to analyse"])
    except MemoryError:
        return FileAnalysis([], None, ["out of memory analysing the file"])


def _analyze(request: AnalysisRequest, model: SemanticModel | None, judge: bool = True) -> FileAnalysis:
    """``judge=False``: no rule judges the suppressions (``Rule.judge_suppressions``):
    ``request`` is a repaired text standing in for one that does not parse."""
    source = request.source
    codes = {rule.code for rule in request.rules}
    try:
        tree = model.tree if model is not None else parse(source, filename=request.path or "<unknown>")
    except (SyntaxError, ValueError) as error:
        diagnostics = [syntax_error(source, error)] if SYNTAX_ERROR in codes else []
        repaired = recovery.repair(source, error) if isinstance(error, SyntaxError) else None
        if repaired is None:
            return FileAnalysis(diagnostics, None)
        inner = _analyze(request.with_source(repaired.text), None, judge=False)
        return FileAnalysis(finish(source, diagnostics + repaired.kept(inner.diagnostics)), None, inner.internal_errors)
    if model is None:
        model = SemanticModel(source, tree, request.package, request.project)
    diagnostics, errors = run_rules(model, request.rules, request.options, request.path)
    return FileAnalysis(finish(source, diagnostics, request.rules if judge else None), model, errors)


def run_rules(
    model: SemanticModel,
    rules: Sequence[type[Rule]],
    options: AnalysisOptions,
    path: str | None,
    roots: Sequence[ast.stmt] | None = None,
    stop: Callable[[], bool] | None = None,
) -> tuple[list[Diagnostic], list[str]]:
    """Every rule over ``model.tree``, or only over the top-level statements ``roots``
    (visited exactly as in the whole walk); unsuppressed and unsorted. ``stop``: asked
    before each statement; True raises ``Interrupted``."""
    ctx = RuleContext(model, options, path)
    instances = [rule(ctx) for rule in rules if rule.code != SYNTAX_ERROR]
    errors = _run(model.tree, instances, ctx, roots, stop)
    return ctx.diagnostics, errors


def finish(source: str, diagnostics: list[Diagnostic], rules: Sequence[type[Rule]] | None = None) -> list[Diagnostic]:
    """Suppressions applied, duplicates (one finding reached twice) dropped, sorted. With
    ``rules`` (those that ran), a rule judging the suppressions judges them against every
    finding (before suppression) and those rules; its own findings are not suppressed
    (only waived by a comment naming its code, which it reads itself)."""
    found = directives(source)
    unused: list[Diagnostic] = []
    if found and rules is not None:
        selected = {rule.code for rule in rules}
        for rule in rules:
            unused += rule.judge_suppressions(source, diagnostics, selected, found)
    table = suppressions(source, found)
    if table:
        diagnostics = [d for d in diagnostics if not is_suppressed(d.code, d.range.start.line, table)]
    if unused:
        diagnostics = diagnostics + unused
    keys = list(map(Diagnostic.sort_key, diagnostics))
    order = sorted(range(len(keys)), key=keys.__getitem__)  # stable: ties keep their order
    kept: list[Diagnostic] = []
    run_start = 0  # where the run of diagnostics with the last sort key starts in ``kept``
    last = None
    for i in order:
        d, key = diagnostics[i], keys[i]
        if key == last:
            if any(other.identity() == d.identity() for other in kept[run_start:]):
                continue
        else:
            run_start, last = len(kept), key
        kept.append(d)
    return kept


def _run(
    tree: ast.Module, rules: list[Rule], ctx: RuleContext, roots: Sequence[ast.stmt] | None, stop: Callable[[], bool] | None
) -> list[str]:
    # node type -> (rule code, handler); for ast.Call and ast.Name, None: ``picked`` picks them
    dispatch: dict[type, list[tuple[str, Callable]] | None] = {}
    calls: list[tuple[str, Callable, Callees | None]] = []  # the visit_Call handlers, in rule order
    names: list[tuple[str, Callable, bool]] = []  # the visit_Name handlers, and whether symbol reads only
    for rule in rules:
        for node_type, attr in handlers(type(rule)):
            if node_type is ast.Call:
                calls.append((rule.code, getattr(rule, attr), rule.callees))
            elif node_type is ast.Name:
                names.append((rule.code, getattr(rule, attr), rule.symbol_reads))
            else:
                dispatch.setdefault(node_type, []).append((rule.code, getattr(rule, attr)))
    every_call = [(code, handler) for code, handler, _ in calls]
    if any(callees is not None for _, _, callees in calls):
        dispatch[ast.Call] = None
    elif calls:
        dispatch[ast.Call] = every_call
    every_name = [(code, handler) for code, handler, _ in names]
    any_name = [(code, handler) for code, handler, symbols in names if not symbols]
    if any(symbols for _, _, symbols in names):
        dispatch[ast.Name] = None
    elif names:
        dispatch[ast.Name] = every_name
    by_callee: dict[str | None, list[tuple[str, Callable]]] = {}  # the callee's symbol -> its handlers
    resolve = ctx.model.resolve
    may_name_symbol = ctx.model.may_name_symbol
    errors: list[str] = []
    parents = ctx.parents

    def call_handlers(node: ast.Call) -> list[tuple[str, Callable]]:
        try:
            symbol = resolve(node.func)
        except Exception:
            return every_call  # each rule meets the failure itself, as when it resolved alone
        found = by_callee.get(symbol)
        if found is None:
            found = by_callee[symbol] = [
                (code, handler)
                for code, handler, callees in calls
                if callees is None or (symbol is not None and callees.take(symbol))
            ]
        return found

    def name_handlers(node: ast.Name) -> list[tuple[str, Callable]]:
        try:
            symbolic = type(node.ctx) is ast.Load and may_name_symbol(node)
        except Exception:
            return every_name  # each rule meets the failure itself
        return every_name if symbolic else any_name

    picked = {ast.Call: call_handlers, ast.Name: name_handlers}

    def failed(code: str, node: ast.AST, error: Exception) -> None:
        """One broken rule must not hide the others: it is dropped for the rest of the walk."""
        nonlocal every_call, every_name, any_name
        line = getattr(node, "lineno", 0)
        errors.append(f"{code} crashed at line {line}: {type(error).__name__}: {error}")
        log.exception("rule %s failed", code)
        for node_type, found in dispatch.items():
            if found:
                dispatch[node_type] = [h for h in found if h[0] != code]
        calls[:] = [c for c in calls if c[0] != code]
        every_call = [h for h in every_call if h[0] != code]
        by_callee.clear()
        every_name = [h for h in every_name if h[0] != code]
        any_name = [h for h in any_name if h[0] != code]

    def handle(node: ast.AST) -> None:
        found = dispatch.get(type(node), ())
        for code, handler in found if found is not None else picked[type(node)](node):
            try:
                handler(node)
            except Exception as error:
                failed(code, node, error)

    def visit(node: ast.AST) -> None:
        # ``handle`` written out: a call fewer for each of a file's nodes
        node_type = type(node)
        if stop is not None and isinstance(node, ast.stmt) and stop():
            raise Interrupted
        found = dispatch.get(node_type, ())
        for code, handler in found if found is not None else picked[node_type](node):
            try:
                handler(node)
            except Exception as error:
                failed(code, node, error)
        fields = CHILD_FIELDS[node_type]
        if not fields:
            return  # a leaf (half of all nodes are names): no child to be the parent of
        parents.append(node)
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        visit(item)
            elif isinstance(value, ast.AST):
                visit(value)
        parents.pop()

    try:
        if dispatch.keys() <= {ast.Module}:
            handle(tree)  # whole-module rules alone (a module rule's own run): nothing below to visit
        elif roots is None:
            visit(tree)
        else:
            handle(tree)
            parents.append(tree)
            for root in roots:
                visit(root)
            parents.pop()
    finally:
        # ``visit`` refers to itself: a cycle holding the rules, their context and the
        # model until a garbage collection, which the server runs rarely (app.py).
        visit = None  # noqa: F841
    return errors


@functools.cache
def handlers(rule: type[Rule]) -> tuple[tuple[type, str], ...]:
    """(node type, method name) of a rule's ``visit_*`` methods."""
    found = []
    for attr in dir(rule):
        if attr.startswith("visit_"):
            node_type = getattr(ast, attr[len("visit_") :], None)
            if node_type is not None:
                found.append((node_type, attr))
    return tuple(found)


def syntax_error(source: str, error: Exception) -> Diagnostic:
    index = LineIndex(source)
    lineno = getattr(error, "lineno", None) or 1
    offset = getattr(error, "offset", None) or 1
    line = min(max(lineno - 1, 0), len(index.lines) - 1)
    # SyntaxError.offset counts characters (1-based) of the line as decoded.
    column = min(max(offset - 1, 0), len(index.line_text(line)))
    start = Position(line, column)
    end = Position(line, len(index.line_text(line))) if column < len(index.line_text(line)) else start
    message = getattr(error, "msg", None) or str(error)
    return Diagnostic(
        code=SYNTAX_ERROR,
        message=f"SyntaxError: {message}",
        range=Range(start, end),
        severity=Severity.ERROR,
    )
