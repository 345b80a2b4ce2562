"""In-process checks of the pieces the server is built from (no LSP round trip)."""

from __future__ import annotations

import ast

from lsprotocol import types

from flydsl_ls.actions.suppress import suppression_edit
from flydsl_ls.analysis.locate import alias_at, expression_at
from flydsl_ls.analysis.model import SemanticModel
from flydsl_ls.analysis.text import LineIndex, Position, apply_edits
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
