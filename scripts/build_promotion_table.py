#!/usr/bin/env python
"""Build flydsl_ls/data/fx_promotion.json: the fx type of `a <op> b` as FlyDSL's own tracer
gives it, for every fx scalar type against Python literals and against every other fx scalar
type. The type model (`analysis/model/promotion.py`) reads it; tests/test_promotion.py
traces again with the installed FlyDSL and checks the table still holds.

    python scripts/build_promotion_table.py            # trace with this interpreter's FlyDSL
    python scripts/build_promotion_table.py --check    # exit 1 if the table differs

Tracing only (COMPILE_ONLY, no device, no linker needed): a few seconds.
"""

import argparse
import json
import os
import sys
from importlib.metadata import version
from pathlib import Path

OUTPUT = Path(__file__).resolve().parent.parent / "flydsl_ls" / "data" / "fx_promotion.json"
TYPES = ("Int8", "Int16", "Int32", "Int64", "Uint8", "Uint16", "Uint32", "Uint64",
         "Float16", "BFloat16", "Float32", "Float64", "Boolean")
OPERATORS = ("+", "-", "*", "/", "//", "%", "**", "<<", ">>", "&", "|", "^")
# The Python operand classes the model tells apart (`promotion.python_class`).
PYTHON = {"int": "2", "int64": "3000000000", "int_huge": "2**70", "float": "1.5", "bool": "True"}


# (No `from __future__ import annotations`: FlyDSL reads the kernel's annotations.)
def trace() -> dict[str, str]:
    """{"Int32 / int": "Float32", "int / Int32": ..., "Int32 * Int64": ..., ...}; "raises"
    where FlyDSL refuses the operation."""
    os.environ.setdefault("COMPILE_ONLY", "1")
    os.environ.setdefault("FLYDSL_GPU_ARCH", "gfx942")
    import torch

    import flydsl.compiler as flyc
    import flydsl.expr as fx

    types = [t for t in TYPES if hasattr(fx, t)]
    seen: dict[str, str] = {}

    def record(key: str, expression: str, names: dict) -> None:
        try:
            seen[key] = type(eval(expression, {}, names)).__name__
        except Exception:  # noqa: BLE001 - FlyDSL refusing the operation is the datum
            seen[key] = "raises"

    @flyc.kernel
    def probe(a: fx.Int32):
        values = {t: (a > 0) if t == "Boolean" else getattr(fx, t)(a) for t in types}
        for op in OPERATORS:
            for t, v in values.items():
                for name, literal in PYTHON.items():
                    record(f"{t} {op} {name}", f"v {op} {literal}", {"v": v})
                    record(f"{name} {op} {t}", f"{literal} {op} v", {"v": v})
                for u, w in values.items():
                    record(f"{t} {op} {u}", f"v {op} w", {"v": v, "w": w})

    @flyc.jit
    def run(a: fx.Int32, stream: fx.Stream = fx.Stream(None)):
        probe(a).launch(grid=(1, 1, 1), block=(64, 1, 1), stream=stream)

    try:
        run(3)
    except Exception:  # noqa: BLE001 - linking is not needed: the trace has run by then
        pass
    if not seen:
        raise SystemExit("the probe kernel was not traced")
    del torch
    return seen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the stored table")
    args = parser.parse_args()
    table = {"flydsl": version("flydsl"), "results": trace()}
    if args.check:
        stored = json.loads(OUTPUT.read_text(encoding="utf-8"))["results"]
        differ = {k: (stored.get(k), v) for k, v in table["results"].items() if stored.get(k) != v}
        for key, (old, new) in sorted(differ.items()):
            print(f"{key}: table {old}, FlyDSL {table['flydsl']} {new}")
        return 1 if differ else 0
    OUTPUT.write_text(json.dumps(table, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(table['results'])} results from FlyDSL {table['flydsl']} -> {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
