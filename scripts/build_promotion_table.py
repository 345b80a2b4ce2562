#!/usr/bin/env python
"""Build flydsl_ls/data/fx_promotion.json: the type FlyDSL's own tracer gives each of a few
thousand expressions on fx values (operators, comparisons, `.to`, `.bitcast`, `.select`,
`.ir_value()`, `fx.max`/`fx.min`, the fx constructors), one answer per FlyDSL release.
The type model (`analysis/model/promotion.py`) reads it; tests/test_promotion.py traces
again with each release and checks the table still holds and that the model never types a
case otherwise.

    python scripts/build_promotion_table.py            # trace with this interpreter's FlyDSL
    PYTHONPATH=.cache/flydsl-0.3.1 python scripts/build_promotion_table.py   # and 0.3.1's
    python scripts/build_promotion_table.py --check    # exit 1 if this release's answers differ

Each run replaces the answers of the release it traces and keeps the others'. The cases are
written out as the body of a real kernel (`probe_source`), so FlyDSL's AST rewriting
(`not x`, ...) applies as in user code, and the model test reads the same source. Tracing
only (COMPILE_ONLY, no device, no linker): 11 s of CPU with 0.5.0, 20 s with 0.3.1.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

OUTPUT = Path(__file__).resolve().parent.parent / "flydsl_ls" / "data" / "fx_promotion.json"

SCALARS = ("Int8", "Int16", "Int32", "Int64", "Uint8", "Uint16", "Uint32", "Uint64", "Index",
           "Float16", "BFloat16", "Float32", "Float64", "Boolean")
# Operand name -> how the probe kernel makes it (`a` an fx.Int32, `f` an fx.Float32 argument).
VALUES = {
    **{t: f"fx.{t}(f)" if t.startswith(("Float", "BFloat")) else f"fx.{t}(a)" for t in SCALARS},
    "Vector": "fx.Vector.filled(4, 1.0, fx.Float32)",
    "Vector_i32": "fx.Vector.filled(4, 1, fx.Int32)",
    "ir.Value": "a.ir_value()",  # a raw value, as a dialect op returns it
    "ir.Value_f32": "f.ir_value()",
    "ArithValue": "fx.arith.ArithValue(a.ir_value())",
    "ArithValue_f32": "fx.arith.ArithValue(f.ir_value())",
}
# Raw values and ArithValues of the other element types, against the fx scalars and Python
# numbers only: an fx operand promotes by the raw value's type (`fx.Float16(x) + v` is a
# Float16 for an f16 `v`, a Float32 for an f32 one).
ELEMENTS = {"f16": "fx.Float16(f)", "f64": "fx.Float64(f)", "i64": "fx.Int64(a)", "index": "fx.Index(a)",
            "i1": "fx.Boolean(a)"}
MORE_RAW = {
    **{f"ir.Value_{e}": f"{made}.ir_value()" for e, made in ELEMENTS.items()},
    **{f"ArithValue_{e}": f"fx.arith.ArithValue({made}.ir_value())" for e, made in ELEMENTS.items()},
}
# The Python operand classes the model tells apart (`promotion.python_class`), as literals.
PYTHON = {"int": "2", "int_neg": "-5", "int64": "3000000000", "int64_neg": "-3000000000",
          "int_huge": str(2**70), "float": "1.5", "bool": "True"}
BINARY = ("+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^")
COMPARE = ("<", "<=", ">", ">=", "==", "!=")
UNARY = ("-", "+", "~", "not ", "abs")


def _spell(operand: str) -> str:
    return PYTHON.get(operand) or "v_" + operand.replace(".", "_")


def cases() -> dict[str, str]:
    """Case key -> the expression the probe kernel evaluates (over `v_<operand>` locals)."""
    found: dict[str, str] = {}
    typed = list(VALUES)
    every = typed + list(PYTHON)
    for op in BINARY + COMPARE:
        for left in every:
            for right in every:
                if left in typed or right in typed:
                    found[f"{left} {op} {right}"] = f"{_spell(left)} {op} {_spell(right)}"
    for operand in typed:
        for op in UNARY:
            found[f"{op.strip()} {operand}"] = f"abs({_spell(operand)})" if op == "abs" else f"{op}{_spell(operand)}"
        found[f"{operand}.ir_value()"] = f"{_spell(operand)}.ir_value()"
        for target in SCALARS:
            for method in ("to", "bitcast"):
                found[f"{operand}.{method}({target})"] = f"{_spell(operand)}.{method}(fx.{target})"
    for target in SCALARS:
        for operand in every:
            found[f"{target}({operand})"] = f"fx.{target}({_spell(operand)})"
    for condition in ("Boolean", "Int32"):
        for yes in SCALARS + ("int", "float"):
            for no in SCALARS + ("int", "float"):
                found[f"{condition}.select({yes}, {no})"] = f"{_spell(condition)}.select({_spell(yes)}, {_spell(no)})"
    for op in BINARY + COMPARE:
        for raw in MORE_RAW:
            for other in SCALARS + tuple(PYTHON):
                found[f"{raw} {op} {other}"] = f"{_spell(raw)} {op} {_spell(other)}"
                found[f"{other} {op} {raw}"] = f"{_spell(other)} {op} {_spell(raw)}"
    for function in ("max", "min"):
        for left in every:
            for right in every:
                if (left in SCALARS or right in SCALARS) and not {left, right} & {"Vector", "Vector_i32"}:
                    found[f"fx.{function}({left}, {right})"] = f"fx.{function}({_spell(left)}, {_spell(right)})"
    return found


def probe_source() -> tuple[str, list[str]]:
    """A module with the probe kernels, each making the operands and then running
    `_r(<index>, lambda: <case>)` for its share of the cases; and the case keys in order.
    Kernels of a few hundred lines: 0.3.1 reads the caller's source position for every op it
    builds, at a cost that grows with the size of the function."""
    keys = list(cases())
    expressions = list(cases().values())
    operands = "".join(f"        {_spell(name)} = {made}\n" for name, made in {**VALUES, **MORE_RAW}.items())
    kernels, launches = [], []
    for start in range(0, len(keys), _PER_KERNEL):
        name = f"probe{start // _PER_KERNEL}"
        body = "".join(
            f"        _r({index}, lambda: {expressions[index]})\n"
            for index in range(start, min(start + _PER_KERNEL, len(keys)))
        )
        kernels.append(f"    @flyc.kernel\n    def {name}(a: fx.Int32, f: fx.Float32):\n{operands}{body}\n")
        launches.append(f"        {name}(a, f).launch(grid=(1, 1, 1), block=(64, 1, 1), stream=stream)\n")
    source = (
        "import flydsl.compiler as flyc\nimport flydsl.expr as fx\n\n\n"
        "def build(_r):\n"
        f"{''.join(kernels)}"
        "    @flyc.jit\n"
        "    def run(a: fx.Int32, f: fx.Float32, stream: fx.Stream = fx.Stream(None)):\n"
        f"{''.join(launches)}\n"
        "    return run\n"
    )
    return source, keys


_PER_KERNEL = 200


def kind(value) -> str:
    """How the table names a traced value's type: the fx class (``Int32``), ``Vector``,
    ``ArithValue`` / ``ir.Value`` (raw), a Python class, or the class's own name."""
    from flydsl._mlir import ir
    from flydsl.expr.numeric import Numeric

    if isinstance(value, Numeric):
        return type(value).__name__
    if type(value).__name__ == "Vector":
        return "Vector"
    if isinstance(value, ir.Value):
        return "ArithValue" if type(value).__name__ == "ArithValue" else "ir.Value"
    if type(value) in (bool, int, float):
        return type(value).__name__
    return "other " + type(value).__name__


def _verifies(value) -> bool:
    """The op that made the value passes MLIR's verifier (an op built with operands of the
    wrong types is caught here, not when it is made)."""
    from flydsl._mlir import ir

    raw = getattr(value, "value", value)
    owner = getattr(raw, "owner", None) if isinstance(raw, ir.Value) else None
    verify = getattr(owner, "verify", None)
    return verify is None or bool(verify())


# (No `from __future__ import annotations` in the probe module: FlyDSL reads its annotations.)
def trace() -> dict[str, str]:
    """{case key: result kind}; "raises" where FlyDSL refuses the expression, "invalid IR"
    where it builds an op that does not verify."""
    os.environ.setdefault("COMPILE_ONLY", "1")
    os.environ.setdefault("FLYDSL_GPU_ARCH", "gfx942")
    import torch  # noqa: F401 - FlyDSL's runtime expects it loaded first

    source, keys = probe_source()
    seen: dict[str, str] = {}

    def record(index: int, expression) -> None:
        try:
            value = expression()
        except Exception:  # noqa: BLE001 - FlyDSL refusing the operation is the datum
            seen[keys[index]] = "raises"
            return
        try:
            valid = _verifies(value)
        except Exception:  # noqa: BLE001
            valid = False
        seen[keys[index]] = kind(value) if valid else "invalid IR"

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fx_probe.py"
        path.write_text(source, encoding="utf-8")
        spec = importlib.util.spec_from_file_location("fx_probe", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        try:
            module.build(record)(3, 1.5)
        except Exception:  # noqa: BLE001 - linking is not needed: the trace has run by then
            pass
    if len(seen) != len(keys):
        raise SystemExit(f"the probe kernel traced {len(seen)} of {len(keys)} cases")
    return seen


def load() -> dict[str, dict[str, str]]:
    """The stored table as {release: {case key: answer}}."""
    if not OUTPUT.exists():
        return {}
    stored = json.loads(OUTPUT.read_text(encoding="utf-8"))
    releases = stored["releases"]
    table: dict[str, dict[str, str]] = {release: {} for release in releases}
    for key, answer in stored["results"].items():
        for release in releases:
            table[release][key] = answer if isinstance(answer, str) else answer[release]
    return table


def save(table: dict[str, dict[str, str]]) -> None:
    """One answer per case where every release agrees, else {release: answer}."""
    releases = sorted(table)
    keys = sorted(set().union(*(table[r] for r in releases)))
    results = {}
    for key in keys:
        answers = {release: table[release].get(key, "absent") for release in releases}
        results[key] = answers[releases[0]] if len(set(answers.values())) == 1 else answers
    stored = {"releases": releases, "cases": len(keys), "results": results}
    OUTPUT.write_text(json.dumps(stored, indent=0, sort_keys=True) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the stored table")
    args = parser.parse_args()
    release, traced = version("flydsl"), trace()
    table = load()
    if args.check:
        stored = table.get(release)
        if stored is None:
            print(f"the table has no answers for FlyDSL {release}")
            return 1
        differ = {k: (stored.get(k), v) for k, v in traced.items() if stored.get(k) != v}
        differ.update({k: (v, None) for k, v in stored.items() if k not in traced})
        for key, (old, new) in sorted(differ.items()):
            print(f"{key}: table {old}, FlyDSL {release} {new}")
        print(f"{len(traced)} cases traced with FlyDSL {release}, {len(differ)} differ from the table")
        return 1 if differ else 0
    table[release] = traced
    save(table)
    print(f"{len(traced)} results from FlyDSL {release} -> {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
