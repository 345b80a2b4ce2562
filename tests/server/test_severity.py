"""Keep-case notes in the editor: information, never a warning, never struck through."""

from __future__ import annotations

from lsprotocol import types

from tests.server.helpers import CLIENTS, diagnostics, lsp, open_doc

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


async def test_baselined_findings_are_hints(workspace):
    """A finding `check --write-baseline` recorded is a hint in the editor (its quick fix
    kept), a new one stays a warning."""
    import subprocess
    import sys

    (workspace / "pyproject.toml").write_text("[tool.flydsl-ls]\n", encoding="utf-8")
    (workspace / "kept.py").write_text(KEPT, encoding="utf-8")
    subprocess.run([sys.executable, "-m", "flydsl_ls", "check", "--no-cache", "--write-baseline"], cwd=workspace, check=True)
    added = KEPT.replace("    return", "    y = fx.Int32(fx.Int32(2))\n    return")
    async with lsp(CLIENTS[0], workspace) as client:
        uri = open_doc(client, workspace / "kept.py", text="# moved\n" + added)
        found = sorted(await diagnostics(client, uri, version=1), key=lambda d: d.range.start.line)
        assert [(d.code, d.range.start.line, d.severity) for d in found] == [
            ("FLY104", 4, types.DiagnosticSeverity.Hint),
            ("FLY104", 5, types.DiagnosticSeverity.Warning),
            ("FLY301", 6, types.DiagnosticSeverity.Information),
        ]
        assert found[0].message.endswith("(in the baseline)") and not found[0].tags
