"""Hover: the rule behind a legacy API (through aliases), a name's inferred fx type and its
origin, and the signature and docstring of FlyDSL APIs for the project's release (from the
table built ahead of time, ``apidocs``: no parse, no import on the request path)."""

from __future__ import annotations

import ast
import asyncio
import logging

from lsprotocol import types

from flydsl_ls import apidocs
from flydsl_ls.analysis.model.diagnostic import Diagnostic
from flydsl_ls.analysis.model.locate import alias_at, expression_at, nodes_at
from flydsl_ls.analysis.model.modules import canonical_symbol
from flydsl_ls.analysis.model.semantic import SemanticModel
from flydsl_ls.analysis.model.text import Position
from flydsl_ls.analysis.rules import lookup_rule
from flydsl_ls.analysis.rules.fly901_deprecated_api import (
    DEPRECATED_SYMBOLS,
    TDM_OPS,
    TDM_OPS_ALIAS,
    Deprecation,
)
from flydsl_ls.pins import ResolvedVersion, resolve_version
from flydsl_ls.ruledocs import summary_markdown
from flydsl_ls.server import diagnostics as diagnostics_module
from flydsl_ls.server import schedule
from flydsl_ls.server.client import Client
from flydsl_ls.server.edits import lsp_range
from flydsl_ls.server.session import Document, Session

# Rules whose message names the hovered API's own replacement: their one example would be
# about another API (FLY901's is `maximumf`).
_PER_API = {"FLY901"}

log = logging.getLogger(__name__)

WARM_UP_DELAY = 0.1  # seconds between checks for an idle moment (documents.warm_up_when_idle)


async def hover(session: Session, client: Client, params: types.HoverParams) -> types.Hover | None:
    doc = session.get(params.text_document.uri)
    if doc is None:
        return None
    pos = doc.to_position(params.position, session.encoding)
    analysis = doc.analysis
    if doc.early is not None and doc.early.text == doc.text:
        analysis = doc.early  # a staged lint's first findings: the rest is being redone
    if analysis is None:  # dropped (not used for a while) or not linted yet: lint it now
        analysis = await diagnostics_module.analyse(session, doc)
    session.touch(doc)
    # No request holds an incremental model now (each uses one only until its next await):
    # free the ones dropped since the last request.
    doc.incremental.release_models()
    current = analysis is not None and analysis.text == doc.text
    diagnostics = analysis.result.diagnostics if current else []
    model = analysis.result.model if current else None
    models_for = None  # the model answering for another line (see _legacy_sections)
    if model is None:  # an incremental analysis, or text that does not parse now
        model = doc.incremental.model_at(pos.line) if current else None
        if model is not None:
            models_for = doc.incremental.model_at
        else:
            model = doc.good_model
    # The model's lines are the document's (incremental: those of the cursor's statement).
    model_current = model is not None and (model.source == doc.text or models_for is not None)

    sections: list[str] = []
    covering = [d for d in diagnostics if d.range.contains(pos) and d.code != "FLY000"]
    seen_codes: set[str] = set()
    for d in covering:
        if d.code in seen_codes:
            continue
        seen_codes.add(d.code)
        rule = lookup_rule(d.code)
        sections.append(f"{d.message}\n\n{summary_markdown(rule, example=d.code not in _PER_API)}" if rule else d.message)

    expr = symbol = None
    type_line = None
    if model is not None and pos.line < len(model.index.lines):
        expr, symbol, dotted = _symbol_at(model, pos)
        if symbol is not None and not covering:
            sections += _legacy_sections(model, pos, symbol, dotted, diagnostics, seen_codes, models_for, doc.index)
        if isinstance(expr, (ast.Name, ast.Attribute)):
            kind = model.type_of(expr)
            if kind.known:
                type_line = f"`{_source(model, expr)}`: **{kind.describe()}**"
    version = _project_version(session, doc)
    if sections:  # a legacy or deprecated API: say which FlyDSL the advice is for
        sections.append(_version_line(version))
    if type_line:
        sections.insert(0, type_line)
    rng = None
    if model_current and expr is not None:
        rng = lsp_range(model.index.node_range(expr), doc.index, session.encoding)
    model = models_for = None  # not used across the await (see release_models)
    if symbol is not None:
        if session.warm_up_timer is not None:  # this lookup loads the table: no need twice
            session.warm_up_timer.cancel()
            session.warm_up_timer = None
        loop = asyncio.get_running_loop()
        found = await loop.run_in_executor(schedule.DOCS, apidocs.lookup, symbol, version.version if version else None)
        if found is not None:
            sections.append(_api_section(found))
    if not sections:
        return None
    kind = types.MarkupKind.Markdown if session.features.markdown_hover else types.MarkupKind.PlainText
    return types.Hover(
        contents=types.MarkupContent(kind=kind, value="\n\n---\n\n".join(sections)), range=rng
    )


def _symbol_at(model: SemanticModel, pos: Position):
    """The expression under ``pos``, its canonical symbol and its absolute dotted path.
    On an import alias, the imported object."""
    found = alias_at(model.tree, model.index, pos)
    if found is not None:
        statement, alias = found
        if isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
            dotted = f"{statement.module}.{alias.name}"
        else:
            dotted = alias.name
        return None, canonical_symbol(dotted), dotted
    expr = expression_at(model.tree, model.index, pos)
    if expr is None:
        return None, None, None
    return expr, model.resolve(expr), model.dotted(expr)


def _legacy_sections(
    model, pos: Position, symbol, dotted, diagnostics: list[Diagnostic], seen: set[str], models_for=None, lines=None
) -> list[str]:
    """A legacy API under the cursor that no diagnostic covers (an alias, an import):
    FLY901's table, or a diagnostic elsewhere in the file on the same object.

    ``models_for(line)``: with an incremental analysis, ``model`` answers for the cursor's
    top-level statement only, and a diagnostic elsewhere needs the model of its own; those
    are built only for diagnostics that start with the name under the cursor (in ``lines``,
    the document's line index)."""
    entry: Deprecation | None = TDM_OPS if dotted == TDM_OPS_ALIAS else DEPRECATED_SYMBOLS.get(symbol)
    if entry is not None and entry.owner is None:
        rule = lookup_rule("FLY901")
        seen.add("FLY901")
        return [
            f"`{entry.api}` is deprecated (declared removal in FlyDSL {entry.removal}): "
            f"use {entry.replacement}\n\n{summary_markdown(rule, example=False)}"
        ]
    name = _local_name(model, pos) if models_for is not None else None
    if models_for is not None and (not name or lines is None):
        return []
    for d in diagnostics[:500]:
        if d.code in seen:
            continue
        there = model
        if models_for is not None:
            start = d.range.start
            rest = lines.line_text(start.line)[start.column :]
            if not rest.startswith(name) or rest[len(name) : len(name) + 1].isidentifier():
                continue
            there = models_for(start.line)
            if there is None:
                continue
        if any(
            isinstance(node, (ast.Name, ast.Attribute))
            and there.index.node_range(node).start == d.range.start
            and there.resolve(node) == symbol
            for node in nodes_at(there.tree, there.index, d.range.start)
        ):
            rule = lookup_rule(d.code)
            if rule is not None:
                seen.add(d.code)
                return [f"`{symbol}` is a legacy API ({d.code}).\n\n{summary_markdown(rule, example=d.code not in _PER_API)}"]
    return []


def _local_name(model: SemanticModel, pos: Position) -> str | None:
    """The name the code uses for what is under the cursor: an import's bound name, or the
    first name of a dotted expression."""
    found = alias_at(model.tree, model.index, pos)
    if found is not None:
        alias = found[1]
        return alias.asname or alias.name.split(".")[0]
    node = expression_at(model.tree, model.index, pos)
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _project_version(session: Session, doc: Document) -> ResolvedVersion | None:
    setting = session.settings_for(doc).flydsl_version
    return resolve_version(setting, doc.path.parent if doc.path else session.root)


def _version_line(resolved: ResolvedVersion | None) -> str:
    if resolved is None:
        return "Project FlyDSL version: unknown (set `flydsl-version` or pin flydsl in requirements)"
    return f"Project {resolved.describe()}"


def _source(model: SemanticModel, expr: ast.AST) -> str:
    text = model.index.slice(model.index.node_range(expr))
    return text if len(text) < 80 and "\n" not in text else ast.unparse(expr)[:80]


def _api_section(found: apidocs.ApiDoc) -> str:
    parts = [f"`{found.symbol}` ({found.module}, FlyDSL {found.release})"]
    parts.append(f"```python\n{found.signature}\n```")
    if found.doc:
        parts.append(found.doc)
    return "\n\n".join(parts)


def warm_up(session: Session, doc: Document) -> None:
    """Load the docs table in the background, so the first hover is quick."""
    version = _project_version(session, doc)
    schedule.DOCS.submit(apidocs.warm_up, version.version if version else None)
