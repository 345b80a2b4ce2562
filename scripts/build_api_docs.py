#!/usr/bin/env python3
"""Build flydsl_ls/data/flydsl_docs.json.gz: the signature and docstring of every public
FlyDSL API, per release, for hover (no jedi, no import of FlyDSL on the request path).

Run by hand (network; ~75 MB per wheel, cached as build_api_table.py caches them):

    python scripts/build_api_docs.py                    # every release of build_api_table.RELEASES
    python scripts/build_api_docs.py --releases 0.3.1 0.5.0 --output /tmp/d.json.gz

For each release the wheel's ``flydsl/**.py`` sources are read with zipfile and replayed by
``flydsl_ls.apitable.Resolver`` (the import semantics the API table uses). Every module a
canonical name stands for (``fx``, ``fx.rocdl``, ``flyc``, ``mlir.rocdl``..., see
``analysis/model/modules.py``) is imported; each public function or class bound in it gets
an entry under its canonical symbol (``fx.make_layout``, ``mlir.rocdl.s_waitcnt``), and so
does each public method a FlyDSL class defines (``fx.Vector.from_elements``; not the
generated MLIR op classes' accessors). An entry keeps one
variant per distinct (signature, docstring) with the releases that have it.
"""

from __future__ import annotations

import argparse
import ast
import copy
import gzip
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from build_api_table import DEFAULT_CACHE, RELEASES, version_key, wheel_for  # noqa: E402

from flydsl_ls.analysis.model.modules import CANONICAL_MODULES  # noqa: E402
from flydsl_ls.apitable import Cls, Func, Module, Resolver, sources_from_wheel  # noqa: E402

GENERATOR = "scripts/build_api_docs.py"
DEFAULT_OUTPUT = REPO / "flydsl_ls" / "data" / "flydsl_docs.json.gz"
MAX_DOC_CHARS = 1500  # a hover shows the start; the rest is in FlyDSL's sources


def module_paths() -> dict[str, str]:
    """Canonical module -> the import path it is read from (FlyDSL's own spelling first)."""
    paths: dict[str, str] = {}
    for path, canon in CANONICAL_MODULES.items():
        if path.startswith("flydsl.") and not canon.startswith("shim."):
            paths.setdefault(canon, path)
    return paths


def signature(name: str, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, method: bool) -> str:
    args = copy.copy(node.args)
    if method:  # drop self / cls, as editors show methods
        if args.posonlyargs:
            args.posonlyargs = args.posonlyargs[1:]
        elif args.args:
            args.args = args.args[1:]
        positional = len(args.posonlyargs) + len(args.args)
        args.defaults = args.defaults[-positional:] if positional else []
    text = f"def {name}({ast.unparse(args)})"
    if getattr(node, "returns", None) is not None:
        text += f" -> {ast.unparse(node.returns)}"
    return text


def docstring(node: ast.AST) -> str:
    if isinstance(node, ast.Lambda):
        return ""
    text = (ast.get_docstring(node) or "").strip()
    return text if len(text) <= MAX_DOC_CHARS else text[:MAX_DOC_CHARS].rstrip() + "\n..."


def entries(resolver: Resolver) -> dict[str, tuple[str, str, str]]:
    """Canonical symbol -> (defining module, signature, docstring) in one release."""
    found: dict[str, tuple[str, str, str]] = {}
    for canon, path in sorted(module_paths().items()):
        module = resolver.lookup(path)
        if not isinstance(module, Module):
            continue
        for name, value in sorted(module.ns.items()):
            if name.startswith("_"):
                continue
            symbol = f"{canon}.{name}"
            if isinstance(value, Func):
                found[symbol] = (value.module, signature(name, value.node, False), docstring(value.node))
            elif isinstance(value, Cls):
                init = value.ns.get("__init__")
                sig = signature(name, init.node, True) if isinstance(init, Func) else f"class {name}"
                found[symbol] = (value.module, sig, docstring(value.node))
                if value.module.startswith("flydsl._mlir"):
                    continue  # generated op classes: their methods are ODS accessors
                for attr, member in sorted(value.ns.items()):
                    if isinstance(member, Func) and not attr.startswith("_"):
                        found[f"{symbol}.{attr}"] = (
                            value.module, signature(attr, member.node, True), docstring(member.node)
                        )
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--releases", nargs="+", default=RELEASES)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="wheel cache directory")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)

    releases = sorted(args.releases, key=version_key)
    docs: dict[str, list[dict]] = {}
    for index, release in enumerate(releases):
        resolver = Resolver(sources_from_wheel(wheel_for(release, args.cache)))
        found = entries(resolver)
        for symbol, (module, sig, doc) in found.items():
            variants = docs.setdefault(symbol, [])
            same = next((v for v in variants if (v["module"], v["signature"], v["doc"]) == (module, sig, doc)), None)
            if same is None:
                variants.append({"releases": [index], "module": module, "signature": sig, "doc": doc})
            else:
                same["releases"].append(index)
        print(f"{release}: {len(found)} APIs", file=sys.stderr)

    table = {"generator": GENERATOR, "releases": releases, "docs": dict(sorted(docs.items()))}
    data = json.dumps(table, separators=(",", ":"), sort_keys=False).encode("utf-8")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    # mtime=0: the same input gives the same bytes
    args.output.write_bytes(gzip.compress(data, compresslevel=9, mtime=0))
    print(f"wrote {args.output}: {len(docs)} symbols, {len(releases)} releases, "
          f"{len(data) // 1024} KiB json, {args.output.stat().st_size // 1024} KiB gzipped")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
