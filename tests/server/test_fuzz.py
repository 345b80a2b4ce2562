"""Endurance: random edits into the real server over stdio (hypothesis + pytest-lsp).

Each example opens a document, sends a series of ranged didChanges (insertions, deletions,
replacements; unbalanced brackets, non-ASCII including astral-plane characters and
combining marks, huge lines, CRLF and lone CR line ends, NUL), sometimes waiting for the
diagnostics of a version, sometimes asking for hover and code actions. Checked:

- the server never fails: every request is answered without error, it logs no error,
  and it is still serving at the end;
- every published range, and every edit of the code actions offered (resolved), lies
  inside the text of its version, in UTF-16 code units, on code-point boundaries (computed by
  ``tests/lsp_text.py``, independently of ``analysis.text``);
- after the last edit it publishes exactly what the CLI's check (``check_source``, the
  function ``flydsl-ls check`` runs) reports on the final text: code, range and message.

Bounded: a fixed number of examples and edits, derandomized, no deadline.
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types

from flydsl_ls import config
from flydsl_ls.analysis.model.project import ProjectIndex
from flydsl_ls.checker import check_source
from tests.lsp_text import content, lsp_position, split_lines, utf16_len
from tests.server.helpers import KERNEL, TIMEOUT, lsp

SPEC = "visual-studio-code@v1.65.2"  # negotiates UTF-16, the encoding worth checking
EXAMPLES = 25
MAX_EDITS = 15

# --- text in LSP terms (tests/lsp_text.py, not flydsl_ls.analysis.model.text) ----------------------


def boundaries(line: str) -> set[int]:
    """The UTF-16 columns that fall between code points of a line's content."""
    out, column = {0}, 0
    for ch in content(line):
        column += 2 if ord(ch) > 0xFFFF else 1
        out.add(column)
    return out


def check_range(text: str, rng: dict, what: str) -> None:
    lines = split_lines(text)
    start, end = rng["start"], rng["end"]
    for pos in (start, end):
        assert 0 <= pos["line"] < len(lines), f"{what}: line {pos['line']} outside {len(lines)} lines"
        line = lines[pos["line"]]
        assert 0 <= pos["character"] <= utf16_len(content(line)), (
            f"{what}: column {pos['character']} past the end of line {pos['line']} "
            f"({utf16_len(content(line))} UTF-16 units): {content(line)!r}"
        )
        assert pos["character"] in boundaries(line), (
            f"{what}: column {pos['character']} splits a surrogate pair on line {pos['line']}"
        )
    assert (start["line"], start["character"]) <= (end["line"], end["character"]), f"{what}: start after end"


def as_json_range(rng: types.Range) -> dict:
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }


def check_published(text: str, diagnostic: types.Diagnostic) -> None:
    check_range(text, as_json_range(diagnostic.range), f"{diagnostic.code} range")


async def check_action_edits(client, text: str, actions) -> None:
    """Every edit of the code actions offered (resolved, as the editor would when one is
    picked) lies inside ``text``, the version they were asked for; edits of the project's
    pyproject.toml ("Disable FLYnnn in this project") are not in the document."""
    for action in actions or []:
        if not isinstance(action, types.CodeAction):
            continue
        if action.edit is None and action.data is not None:
            try:
                action = await asyncio.wait_for(client.code_action_resolve_async(action), TIMEOUT)
            except Exception:  # e.g. the document moved on (ContentModified)
                continue
        edit = action.edit
        if edit is None:
            continue
        groups = [edits for target, edits in (edit.changes or {}).items() if not target.endswith("/pyproject.toml")] + [
            d.edits
            for d in edit.document_changes or []
            if isinstance(d, types.TextDocumentEdit) and not d.text_document.uri.endswith("/pyproject.toml")
        ]
        for edits in groups:
            for e in edits:
                check_range(text, as_json_range(e.range), f"code action {action.title!r} edit")


def expected(text: str, path: Path, root: Path) -> list[tuple]:
    """What ``flydsl-ls check`` reports on ``text`` at ``path``, in LSP terms."""
    result = check_source(text, path, config.settings_for(path), ProjectIndex(roots=[root]))
    lines = split_lines(text)
    out = []
    for d in result.diagnostics:
        def pos(p):
            # internal columns are code points within the line's content
            line = min(p.line, len(lines) - 1)
            return (line, utf16_len(content(lines[line])[: p.column]))

        message = d.message if not d.note else f"{d.message}\n{d.note}"
        out.append((d.code, pos(d.range.start), pos(d.range.end), message))
    return sorted(out)


def got(diagnostics: list[types.Diagnostic]) -> list[tuple]:
    return sorted(
        (
            d.code,
            (d.range.start.line, d.range.start.character),
            (d.range.end.line, d.range.end.character),
            d.message,
        )
        for d in diagnostics
    )


# --- strategies -------------------------------------------------------------------------------
PIECES = [
    "(", ")", "[", "]", "{", "}", ":", "=", ".", ",", "'", '"', '"""', "#", "\\", " ", "    ", "\t",
    "\n", "\r\n", "\r", "x", "fx", "arith", "_AV(", "fx.Int32(", "arith.ArithValue(", "def f(", "return ",
    "if x:\n    ", "for i in fx.range_constexpr(4):\n        ", "é", "e\u0301", "\u0301", "\u20ac",
    "\U0001d538", "\U0001f600", "\U0001f469\u200d\U0001f4bb", "中文", "\u200b", "\ufeff", "\u2028",
    "\x0c", "\x00", "ß", "ǅ", "\U00010348",
]
HUGE = [
    "x = " + "a" * 12_000,
    "s = '" + "\U0001f600" * 3_000 + "'; z = _AV(s) % 64",
    "c = 1  # " + "e\u0301" * 4_000,
    "v = " + "a + " * 1_500 + "a",
    "w = " + "(" * 120 + "1" + ")" * 120,
    "t = [" + "fx.Int32(1), " * 800 + "]",
]
STATEMENTS = [
    "lane2 = _AV(t\u00efd\U0001d538) % 64  # \u00e9\U0001f600 e\u0301",
    's = "\U0001f600\u4e2d\u0301"; v = arith.ArithValue(s) + 0.0',
    "r = fx.Int32(fx.Int32(1))  # \U0001d538\U0001d539",
    "\U0001d538x = _AV(1) % 2",
    "\u210c = arith.ArithValue(2)",
    'p = "\u2028\x0c\u0085"',
    "q = fx.get(t, 0)  # \ufeff\u200b",
    "pass",
]
snippet = st.one_of(
    st.lists(st.sampled_from(PIECES), min_size=1, max_size=6).map("".join),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=6),
)
position = st.tuples(st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 9))
# Junk breaks the syntax (what typing does); whole lines keep the rules running on the text.
JUNK = ["insert", "insert", "delete", "replace", "huge", "hover", "actions"]
LINES = ["statement", "statement", "statement", "huge line", "delete line", "hover", "actions"]


@st.composite
def edits(draw, kinds):
    kind = draw(st.sampled_from(kinds))
    start = draw(position)
    length = draw(st.integers(0, 60))
    if kind == "huge":
        text = draw(st.sampled_from(HUGE + ["(" * 250]))
    elif kind == "huge line":
        text = draw(st.sampled_from(HUGE))
    elif kind == "statement":
        text = draw(st.sampled_from(STATEMENTS))
    elif kind in ("insert", "replace"):
        text = draw(snippet)
    else:
        text = ""
    wait = draw(st.booleans())
    return kind, start, length, text, wait


edit_series = st.one_of(
    st.lists(edits(JUNK), min_size=1, max_size=MAX_EDITS),
    st.lists(edits(LINES), min_size=1, max_size=MAX_EDITS),
)
NON_ASCII_KERNEL = KERNEL.replace("tid", "t\u00efd\U0001d538").replace(
    "    lane = ", '    s = "\U0001f600e\u0301"; lane = '
)
start_text = st.sampled_from(
    [
        KERNEL,
        NON_ASCII_KERNEL,
        KERNEL.replace("\n", "\r\n"),
        NON_ASCII_KERNEL.replace("\n", "\r\n"),
        "",
        KERNEL.replace("\n", "\r"),
    ]
)


def pick(text: str, point: tuple[int, int, int]) -> tuple[int, int, int]:
    """(line, UTF-16 column, code-point offset) on a code-point boundary; sometimes a column
    past the end of the line, which LSP clamps to the line's end."""
    lines = split_lines(text)
    line = point[0] % len(lines)
    body = content(lines[line])
    index = point[1] % (len(body) + 1)
    column = utf16_len(body[:index])
    if point[2] == 0:
        column = utf16_len(body) + 5  # past the end: clamped
        index = len(body)
    return line, column, sum(len(x) for x in lines[:line]) + index


# --- the test ---------------------------------------------------------------------------------
counter = itertools.count()


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(start=start_text, steps=edit_series)
async def test_random_edits(fuzz_server, start, steps):
    client, root = fuzz_server
    path = root / f"fuzz_{next(counter)}.py"
    uri = path.as_uri()
    texts = {1: start}
    text, version = start, 1
    client.published.clear()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(uri, "python", 1, start))
    )
    try:
        for kind, point, length, new, wait in steps:
            line, column, offset = pick(text, point)
            if kind in ("hover", "actions"):
                pos = types.Position(line, column)
                if kind == "hover":
                    await asyncio.wait_for(
                        client.text_document_hover_async(
                            types.HoverParams(types.TextDocumentIdentifier(uri), pos)
                        ),
                        TIMEOUT,
                    )
                else:
                    current = [p for p in client.published if p.uri == uri]
                    context = list(current[-1].diagnostics[:3]) if current else []
                    actions = await asyncio.wait_for(
                        client.text_document_code_action_async(
                            types.CodeActionParams(
                                types.TextDocumentIdentifier(uri),
                                types.Range(pos, pos),
                                types.CodeActionContext(diagnostics=context),
                            )
                        ),
                        TIMEOUT,
                    )
                    await check_action_edits(client, text, actions)
                continue
            if kind in ("statement", "huge line", "delete line"):
                # a whole line at a line start, indented like the line it goes before
                lines = split_lines(text)
                offset = sum(len(x) for x in lines[:line])
                column = 0
                body = content(lines[line])
                indent = body[: len(body) - len(body.lstrip(" \t"))]
                ending = lines[line][len(body) :] or "\n"
                if kind == "delete line":
                    length, new = len(lines[line]), ""
                else:
                    new = indent + new + ending
            end_offset = offset
            if kind in ("delete", "replace", "delete line") and length:
                # extend over whole code points, never into the middle of "\r\n"
                end_offset = min(offset + length, len(text))
                while end_offset < len(text) and text[end_offset - 1] == "\r" and text[end_offset] == "\n":
                    end_offset += 1
            end_line, end_column = lsp_position(text, end_offset) if end_offset > offset else (line, column)
            text = text[:offset] + new + text[end_offset:]
            version += 1
            texts[version] = text
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                    content_changes=[
                        types.TextDocumentContentChangePartial(
                            range=types.Range(types.Position(line, column), types.Position(end_line, end_column)),
                            text=new,
                        )
                    ],
                )
            )
            if wait:
                await published(client, uri, version)
        final = await published(client, uri, version)
        for params in client.published:
            if params.uri == uri:
                assert params.version in texts, f"published for unknown version {params.version}"
                for diagnostic in params.diagnostics:
                    check_published(texts[params.version], diagnostic)
        assert got(final) == expected(text, path, root)
        errors = [m.message for m in client.log_messages if m.type == types.MessageType.Error]
        assert not errors, errors
    finally:
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))


async def published(client, uri: str, version: int) -> list[types.Diagnostic]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT * 3
    while loop.time() < deadline:
        for params in reversed(client.published):
            if params.uri == uri and params.version == version:
                return list(params.diagnostics)
        await asyncio.sleep(0.01)
    raise AssertionError(f"no diagnostics published for version {version}")


@pytest.fixture
async def fuzz_server(tmp_path: Path):
    root = tmp_path / "fuzz"
    root.mkdir()
    async with lsp(SPEC, root, init_options={"diagnosticsDelay": 0}, pull=False) as client:
        yield client, root
