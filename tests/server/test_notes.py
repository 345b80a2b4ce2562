"""Keep-case notes in the editor: information, never a warning, never struck through."""

from __future__ import annotations

from lsprotocol import types

from tests.server.helpers import diagnostics, lsp, open_doc

KEPT = (
    "from flydsl.expr import arith\n"
    "import flydsl.expr as fx\n"
    "def f(a, b):\n"
    "    x = fx.Int32(fx.Int32(1))\n"
    "    return arith.MulFOp(a, b, fastmath=arith.FastMathFlags.fast).result\n"
)


async def test_a_kept_construct_is_information(spec, workspace):
    (workspace / "kept.py").write_text(KEPT, encoding="utf-8")
    async with lsp(spec, workspace) as client:
        uri = open_doc(client, workspace / "kept.py")
        found = {d.code: d for d in await diagnostics(client, uri, version=1)}
        assert set(found) == {"FLY104", "FLY301"}
        note = found["FLY301"]
        assert note.severity == types.DiagnosticSeverity.Information
        assert not note.tags
        assert found["FLY104"].severity == types.DiagnosticSeverity.Warning
