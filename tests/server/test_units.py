"""In-process checks of the pieces the server is built from (no LSP round trip)."""

from __future__ import annotations

import ast

import pytest
from lsprotocol import types

from flydsl_ls.actions.suppress import suppression_edit
from flydsl_ls.analysis.engine import AnalysisRequest
from flydsl_ls.analysis.model.locate import alias_at, expression_at
from flydsl_ls.analysis.model.semantic import SemanticModel
from flydsl_ls.analysis.model.text import LineIndex, Position, apply_edits
from flydsl_ls.server.protocol import negotiated_encodings
from flydsl_ls.server.settings import DEFAULT_DIAGNOSTICS_DELAY, EditorSettings, parse


def test_settings_accept_every_spelling_and_sections():
    settings, warnings = parse(
        {"flydsl-ls": {"targetArch": "gfx942", "flydsl_version": "0.3.4.1", "select": "FLY1,FLY9", "logLevel": "DEBUG", "diagnosticsDelay": 50}},
        "test",
    )
    assert warnings == []
    assert settings.target_arch == "gfx942"
    assert settings.flydsl_version == "0.3.4.1"
    assert settings.select == ("FLY1", "FLY9")
    assert settings.log_level == "debug"
    assert settings.delay == 0.05
    assert settings.overrides() == dict(select=("FLY1", "FLY9"), ignore=None, target_arch="gfx942", flydsl_version="0.3.4.1")


def test_settings_warn_and_never_raise():
    settings, warnings = parse({"select": 3, "ignore": ["FLY101", "NOPE"], "x": 1, "logLevel": "loud", "diagnosticsDelay": -1}, "s")
    assert settings.select is None and settings.ignore == ("FLY101",)
    assert len(warnings) == 5
    assert parse("nonsense", "s")[1]
    assert parse(None, "s") == (EditorSettings(), [])
    assert EditorSettings().delay == DEFAULT_DIAGNOSTICS_DELAY


def test_an_unknown_arch_or_release_is_a_warning_and_ignored():
    settings, warnings = parse({"targetArch": "gfx999", "flydslVersion": "banana", "compileTimeout": "long"}, "s")
    assert (settings.target_arch, settings.flydsl_version, settings.compile_timeout) == (None, None, None)
    assert len(warnings) == 3
    assert "unknown GPU arch `gfx999`; known arches: " in warnings[0] and "gfx942" in warnings[0]
    assert "`banana` is not a FlyDSL release number; known releases: " in warnings[1] and "0.5.0" in warnings[1]
    settings, warnings = parse({"targetArch": "gfx950:xnack-", "flydslVersion": "0.6.0.dev1"}, "s")
    assert warnings == [] and (settings.target_arch, settings.flydsl_version) == ("gfx950:xnack-", "0.6.0.dev1")


def test_settings_layers():
    base = EditorSettings(select=("FLY1",), target_arch="gfx942")
    top = EditorSettings(target_arch="gfx950")
    merged = top.over(base)
    assert merged.select == ("FLY1",) and merged.target_arch == "gfx950"


def test_utf8_is_chosen_whenever_offered():
    def caps(encodings):
        return types.ClientCapabilities(general=types.GeneralClientCapabilities(position_encodings=encodings))

    assert negotiated_encodings(caps(["utf-16", "utf-8"])) == ["utf-8"]
    assert negotiated_encodings(caps(["utf-32", "utf-16"])) == ["utf-16"]
    assert negotiated_encodings(types.ClientCapabilities()) == ["utf-16"]


def test_suppression_edits():
    source = "x = f(1)\ny = g(2)  # flydsl: ignore[FLY901]\nz = h(\n    3)\nw = 1 + \\\n    2\n"
    add = suppression_edit(source, 0, "FLY101")
    assert apply_edits(source, [add]).startswith("x = f(1)  # flydsl: ignore[FLY101]\n")
    merge = suppression_edit(source, 1, "FLY101")
    assert "y = g(2)  # flydsl: ignore[FLY101, FLY901]\n" in apply_edits(source, [merge])
    assert suppression_edit(source, 1, "FLY901") is None  # already there
    assert suppression_edit(source, 4, "FLY101") is None  # after a backslash
    assert suppression_edit(source, 99, "FLY101") is None
    inside = 's = """\nArithValue(x)\n"""\n'
    assert suppression_edit(inside, 1, "FLY101") is None  # the line ends inside a string


def test_a_suppression_edit_never_breaks_the_parse():
    """No parse is run for the edit (a 3,000-line statement took 40 ms): the comment it
    writes is one the scanner finds outside every string. On every line of the examples and
    of text built to mislead a scanner, the result parses."""
    from pathlib import Path

    tricky = (
        'a = r"\\\\"  # a raw string ending in a backslash\n'
        "b = f'{1}' 'x#y' \"z\\\"#\"\n"
        's = """\n#  a comment in a string\nArithValue(x)\n"""; t = 1\n'
        "u = (1,\n     2)  # noqa: E501\n"
        "v = '''a\\''' + '''#'''  # done\n"
    )
    examples = Path(__file__).resolve().parents[2] / "examples"
    sources = [p.read_text(encoding="utf-8") for p in sorted(examples.rglob("*.py"))] + [tricky]
    offered = 0
    for source in sources:
        ast.parse(source)
        for line in range(source.count("\n")):
            edit = suppression_edit(source, line, "FLY101")
            if edit is not None:
                ast.parse(apply_edits(source, [edit]))
                offered += 1
    assert offered > 100
    assert suppression_edit(tricky, 3, "FLY101") is None  # inside the triple-quoted string
    assert suppression_edit(tricky, 0, "FLY101") is not None


def test_locate():
    source = "import flydsl.expr as fx\nfrom m import ArithValue as _AV\nv = fx.arith.ArithValue(é := 1)\n"
    tree = ast.parse(source)
    index = LineIndex(source)
    assert ast.unparse(expression_at(tree, index, Position(2, 15))) == "fx.arith.ArithValue"
    assert ast.unparse(expression_at(tree, index, Position(2, 8))) == "fx.arith"
    assert ast.unparse(expression_at(tree, index, Position(2, 4))) == "fx"
    assert ast.unparse(expression_at(tree, index, Position(2, 24))) == "é"
    statement, alias = alias_at(tree, index, Position(1, 20))
    assert alias.name == "ArithValue" and alias.asname == "_AV"
    assert alias_at(tree, index, Position(2, 4)) is None
    model = SemanticModel(source, tree)
    assert model.resolve(expression_at(tree, index, Position(2, 15))) == "fx.arith.ArithValue"


def test_suppression_checked_on_the_statement_matches_the_whole_file():
    """code_actions checks an "Ignore" edit on the diagnostic's statement only when it can
    (else on the whole file); on the findings of the examples it is the edit the whole-file
    check gives."""
    import json
    from pathlib import Path

    from flydsl_ls.checker import check_source
    from flydsl_ls.config import Settings
    from flydsl_ls.server.code_actions import _suppression_in_statement
    from flydsl_ls.server.diagnostic_json import FragmentCache, items_json
    from flydsl_ls.server.session import Analysis, ClientFeatures, Document, Session

    examples = Path(__file__).resolve().parents[2] / "examples"
    # a multi-line string ending on a finding's line, and a finding after one
    tricky = '''import flydsl.expr as fx
from flydsl.expr.arith import ArithValue as _AV

def f():
    s = """
    x"""; lane = _AV(fx.thread_idx.x) % 64
    t = ("a", _AV(fx.thread_idx.x) % 64)
    return s, lane, t
'''
    sources = [p.read_text(encoding="utf-8") for p in sorted(examples.glob("legacy_*.py"))] + [tricky]
    checked = 0
    for text in sources:
        result = check_source(text, None, Settings())
        analysis = Analysis(1, 0, text, result)
        analysis.fragments = FragmentCache().fragments(result.diagnostics, analysis.index, "utf-16")
        session = Session(features=ClientFeatures(encoding="utf-16"))
        doc = Document("file:///k.py", text, 1, None)
        for item in json.loads(items_json(analysis.fragments, analysis.version)):
            d = types.Diagnostic(**{k: v for k, v in item.items() if k in ("message", "data", "code")},
                                 range=types.Range(types.Position(**item["range"]["start"]), types.Position(**item["range"]["end"])))
            if d.code == "FLY000":
                continue
            line = d.range.start.line
            fast = _suppression_in_statement(session, doc, analysis, d, line, d.code)
            if fast is not None:  # else the server checks on the whole file
                assert fast == suppression_edit(text, line, d.code), (d.code, line)
                checked += 1
    assert checked > 20


def test_fragment_cache_kept_across_lints_converts_like_a_fresh_one():
    # The cache reuses a diagnostic's JSON by object and its message part by what it
    # shows: over typing, lines moving, a half-typed statement and non-ASCII text before
    # a finding, what it gives must be what a fresh conversion gives.
    import json
    from pathlib import Path

    from pygls.protocol import default_converter

    from flydsl_ls.analysis.engine import analyze
    from flydsl_ls.analysis.incremental import IncrementalAnalyzer
    from flydsl_ls.server.diagnostic_json import FragmentCache
    from flydsl_ls.server.diagnostics import to_lsp

    converter = default_converter()

    text = (Path(__file__).resolve().parents[2] / "examples" / "legacy_kernel.py").read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    body = next(i for i, line in enumerate(lines) if line.startswith("    ") and line.strip()) + 1
    indent = lines[body][: len(lines[body]) - len(lines[body].lstrip())]
    found = analyze(AnalysisRequest(text)).diagnostics[-1].range.start.line  # wide characters before this one
    wide = lines[found][: len(lines[found]) - len(lines[found].lstrip())] + "_ = 'é😀'; " + lines[found].lstrip()
    edits = [
        text,
        "".join(lines[:body] + [f"{indent}x = 1\n"] + lines[body:]),  # a line inserted: all below move
        "".join(lines[:body] + [f"{indent}x = 1 +\n"] + lines[body:]),  # half typed: a syntax error
        "".join(lines[:body] + [f"{indent}x = 1 + 2\n"] + lines[body:]),
        "".join(lines[:found] + [wide] + lines[found + 1 :]),
        text,
    ]
    analyzer = IncrementalAnalyzer()
    caches = {"utf-16": FragmentCache(), "utf-8": FragmentCache()}  # one encoding per session
    for i, source in enumerate(edits):
        diagnostics = analyzer.analyze(AnalysisRequest(source)).diagnostics
        half_typed = any(d.code == "FLY000" for d in diagnostics)
        for encoding, cache in caches.items():
            index = LineIndex(source)
            kept = cache.fragments(diagnostics, index, encoding, prune=not half_typed)
            got = [json.loads(fragment + "null}") for fragment in kept]
            want = [converter.unstructure(to_lsp(d, index, encoding, 0)) | {"data": None} for d in diagnostics]
            assert got == want, (i, encoding)
    assert len(diagnostics) > 5


async def test_docs_warm_up_waits_for_no_lint_pending(monkeypatch):
    import asyncio

    from flydsl_ls.server import diagnostics, documents, hover
    from flydsl_ls.server.app import create_server

    started = []
    monkeypatch.setattr(hover, "warm_up", lambda session, doc: started.append(True))
    monkeypatch.setattr(diagnostics, "schedule_lint", lambda *args: None)  # no lint here
    server = create_server()
    uri = "file:///k.py"
    documents.did_open(server.session, server.client, types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text="import flydsl.expr as fx\n")))
    first = server.session.warm_up_timer.when()
    await asyncio.sleep(0.01)
    change = types.TextDocumentContentChangeWholeDocument("import flydsl.expr as fx\nx = 1\n")

    def edit(version: int) -> None:
        identifier = types.VersionedTextDocumentIdentifier(version=version, uri=uri)
        documents.did_change(server.session, server.client, types.DidChangeTextDocumentParams(identifier, [change]))

    lint = server.session.get(uri).pending = asyncio.get_running_loop().create_future()
    edit(2)
    assert started == [] and server.session.warm_up_timer.when() == first  # not pushed back by edits
    monkeypatch.setattr(hover, "WARM_UP_DELAY", 0.01)
    edit(3)
    await asyncio.sleep(0.3)
    assert started == []  # a lint is pending: checked again
    lint.set_result(None)
    await asyncio.sleep(0.1)
    assert started == [True] and server.session.warm_up_timer is None
    edit(4)
    assert server.session.warm_up_timer is None  # once started, edits do not start it again


async def test_a_hover_needing_the_docs_cancels_the_warm_up(monkeypatch):
    from flydsl_ls import apidocs
    from flydsl_ls.server import diagnostics, documents, hover
    from flydsl_ls.server.app import create_server

    started, asked = [], []
    monkeypatch.setattr(hover, "warm_up", lambda session, doc: started.append(True))
    monkeypatch.setattr(diagnostics, "schedule_lint", lambda *args: None)
    monkeypatch.setattr(apidocs, "lookup", lambda symbol, version: asked.append(symbol))
    server = create_server()
    uri = "file:///k.py"
    text = "import flydsl.expr as fx\nx = fx.Int32(1)\n"
    documents.did_open(server.session, server.client, types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    assert server.session.warm_up_timer is not None
    await hover.hover(server.session, server.client, types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(1, 8)))
    assert asked == ["fx.Int32"] and server.session.warm_up_timer is None and started == []


async def test_a_document_past_the_time_bound_keeps_its_findings_and_waits_for_a_save(monkeypatch):
    """A lint that took longer than FLYDSL_LS_FILE_TIMEOUT: a warning, its findings kept,
    no more lints while the document is edited (nothing waits on it), one more on save."""
    import asyncio

    from flydsl_ls.server import diagnostics, documents
    from flydsl_ls.server.app import create_server

    monkeypatch.setenv("FLYDSL_LS_FILE_TIMEOUT", "0.000001")
    linted = []
    real_lint = diagnostics.lint
    monkeypatch.setattr(diagnostics, "lint", lambda *args: linted.append(1) or real_lint(*args))
    server = create_server()
    warned = []
    monkeypatch.setattr(server.session, "warn_once", warned.append)
    uri = "file:///k.py"
    text = "from flydsl.expr.arith import ArithValue\ndef f(t):\n    return ArithValue(t) + 1\n"
    documents.did_open(server.session, server.client, types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    doc = server.session.get(uri)
    first = await diagnostics.analyse(server.session, doc)
    assert [d.code for d in first.result.diagnostics] == ["FLY101"] and doc.too_slow
    assert len(warned) == 1 and "not checked again until it is saved" in warned[0]
    change = types.TextDocumentContentChangeWholeDocument("\n" + text)
    documents.did_change(server.session, server.client, types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(version=2, uri=uri), [change]))
    count = len(linted)
    assert await diagnostics.analyse(server.session, doc) is first and len(linted) == count
    documents.did_save(server.session, server.client, types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
    assert not doc.too_slow
    await asyncio.sleep(0.3)  # the lint the save scheduled
    assert len(linted) > count


async def test_without_a_workspace_folder_only_open_files_may_run(tmp_path):
    """Single-file mode (Neovim without a root): the compile commands run what the user has
    open in the editor, nothing else; with folders, what lies in them (symlinks resolved)."""
    from flydsl_ls.server import documents
    from flydsl_ls.server.app import create_server
    from flydsl_ls.server.work import why_not_run

    server = create_server()
    opened, other = tmp_path / "open.py", tmp_path / "other.py"
    for path in (opened, other):
        path.write_text("x = 1\n")
    documents.did_open(server.session, server.client, types.DidOpenTextDocumentParams(types.TextDocumentItem(uri=opened.as_uri(), language_id="python", version=1, text="x = 1\n")))
    assert why_not_run(server.session, server.client, opened) is None
    assert "not open in the editor" in why_not_run(server.session, server.client, other)


def test_no_kernel_is_looked_for_outside_a_module_level_function(monkeypatch):
    """"Migrate this kernel" on an import or a constant: the lint's statement there is no
    function, so no kernel holds the line, and the file is not parsed to find one."""
    from flydsl_ls.actions import migrate
    from flydsl_ls.server import code_actions

    monkeypatch.setattr(migrate, "with_fix", lambda *args: pytest.fail("parsed the file"))
    statement = (3, 3, None, "from flydsl.utils.smem_allocator import SmemAllocator\n")
    assert code_actions._migrate_actions("file:///k.py", "...", 1, [], 3, statement) == []
