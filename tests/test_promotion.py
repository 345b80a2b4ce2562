"""The fx type of `a <op> b`: the model against FlyDSL's own tracer.

The table in flydsl_ls/data/fx_promotion.json is traced from FlyDSL (scripts/
build_promotion_table.py). One test traces again with the installed FlyDSL and compares;
the other checks that the model answers what the table says for every entry."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

from flydsl_ls.analysis.model.semantic import SemanticModel

REPO = Path(__file__).resolve().parent.parent
LITERALS = {"int": "2", "int64": "3000000000", "int_huge": str(2**70), "float": "1.5", "bool": "True"}


def _table() -> dict[str, str]:
    return json.loads(resources.files("flydsl_ls.data").joinpath("fx_promotion.json").read_text("utf-8"))["results"]


def test_the_table_is_what_the_installed_flydsl_traces():
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "build_promotion_table.py"), "--check"],
        capture_output=True, text=True, timeout=300, cwd=REPO,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]


def test_the_model_types_every_operation_as_the_table_does():
    table = _table()
    types = sorted({key.split(" ")[0] for key in table if key.split(" ")[0][0].isupper()})
    params = ", ".join(f"v{t}: fx.{t}" for t in types)
    lines, expected = [], []
    for key, found in table.items():
        left, op, right = key.split(" ")
        operand = lambda name: f"v{name}" if name in types else LITERALS[name]  # noqa: E731
        lines.append(f"    r{len(lines)} = {operand(left)} {op} {operand(right)}\n")
        expected.append((key, "unknown" if found == "raises" else f"fx.{found}"))
    source = f"import flydsl.expr as fx\n\ndef k({params}):\n" + "".join(lines)
    model = SemanticModel(source, ast.parse(source), None)
    function = model.tree.body[1]
    wrong = [
        (key, want, got)
        for (key, want), stmt in zip(expected, function.body)
        if (got := model.type_of(stmt.value).name) != want
    ]
    assert not wrong, wrong[:20]
