#!/usr/bin/env python3
"""Build flydsl_ls/data/flydsl_api.json: which FlyDSL release on PyPI has which public API.

Run by hand (network; ~75 MB per wheel), not in CI:

    python scripts/build_api_table.py                 # every final release 0.2.0 .. 0.5.0
    python scripts/build_api_table.py fx.foo 'fx.rocdl.bar(k=)'   # extra names
    python scripts/build_api_table.py --releases 0.3.1 0.5.0 --output /tmp/t.json

For each release it downloads the wheel with ``pip download flydsl==V --no-deps`` into a
cache outside the repository (default ~/.cache/flydsl-ls/wheels), reads the ``flydsl/**.py``
sources inside the wheel with zipfile (no install, no import) and asks
``flydsl_ls.apitable.Resolver`` which of the names below exist (see that module for the
name forms and the import semantics it replays).

The names: every ``fx.*`` API that the rules' fixes and messages suggest, the legacy
spellings the rules recognise, and the deprecated APIs of FlyDSL's docs/api_stability.md
section 3. A name whose absence the syntax tree cannot decide in some release (see
``Resolver.uncertain``) is left out of the table, so the mechanism treats it as unknown.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from flydsl_ls.apitable import Resolver, sources_from_wheel  # noqa: E402

GENERATOR = "scripts/build_api_table.py"
DEFAULT_OUTPUT = REPO / "flydsl_ls" / "data" / "flydsl_api.json"
CACHE_HOME = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
DEFAULT_CACHE = CACHE_HOME / "flydsl-ls" / "wheels"
FIRST, LAST = "0.2.0", "0.5.0"

# The final releases on PyPI between FIRST and LAST (checked against `pip index versions
# flydsl` on every run; dev builds such as 0.3.1.dev804 are not releases).
RELEASES = [
    "0.2.0", "0.2.1", "0.2.2", "0.2.3", "0.2.4",
    "0.3.0", "0.3.1", "0.3.2", "0.3.4", "0.3.4.1",
    "0.4.0", "0.4.1", "0.4.2",
    "0.5.0",
]

NUMERIC = [
    "fx.Numeric", "fx.Boolean", "fx.Index",
    "fx.Int8", "fx.Int16", "fx.Int32", "fx.Int64", "fx.Int128",
    "fx.Uint8", "fx.Uint16", "fx.Uint32", "fx.Uint64", "fx.Uint128",
    "fx.Float16", "fx.BFloat16", "fx.Float32", "fx.Float64", "fx.TFloat32",
    "fx.Float8E4M3", "fx.Float8E4M3FN", "fx.Float8E4M3FNUZ", "fx.Float8E4M3B11FNUZ",
    "fx.Float8E5M2", "fx.Float8E8M0FNU", "fx.Float4E2M1FN",
]

# flydsl.expr.math wrappers that FLY304 suggests as fx.math.<op> (fly304_raw_math.FX_MATH).
FX_MATH = [
    "absf", "ceil", "floor", "trunc", "round", "roundeven", "exp", "exp2", "expm1", "log",
    "log2", "log10", "log1p", "sqrt", "rsqrt", "cbrt", "sin", "cos", "tan", "asin", "acos",
    "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "sincos",
    "absi", "ctlz", "cttz", "ctpop", "powf", "fpowi", "ipowi", "atan2", "copysign", "fma",
    "clampf", "isnan", "isinf", "isfinite", "isnormal",
]

# What the rules' fixes, replacement fields and messages suggest (flydsl_ls/analysis/rules).
SUGGESTED = [
    # types, vectors, pointers
    "fx.Vector", "fx.Vector.filled", "fx.Vector.from_elements", "fx.Vector.bitcast", "fx.Vector.to",
    "fx.Tensor", "fx.Pointer", "fx.Pointer.llvm_ptr", "fx.PointerType", "fx.PointerType.get",
    "fx.AddressSpace", "fx.AddressSpace.Global", "fx.AddressSpace.Shared",
    "fx.T", "fx.Constexpr", "fx.as_ir_value",
    # typed arithmetic (FLY301/303/304)
    "fx.max", "fx.min", "fx.maxnumf", "fx.minnumf", "fx.ceildiv", "fx.fastmath",
    "fx.fma", "fx.absf", "fx.math", *[f"fx.math.{op}" for op in FX_MATH],
    "fx.arith", "fx.arith.shrui", "fx.arith.fastmath",
    # pointers and memory (FLY201/202/305)
    "fx.to_llvm_ptr", "fx.inttoptr", "fx.ptrtoint", "fx.get_iter", "fx.make_view", "fx.add_offset",
    "fx.ptr_load", "fx.ptr_store", "fx.recast_iter", "fx.memref_load_vec", "fx.memref_store_vec",
    "fx.memref_load", "fx.memref_store", "fx.make_ptr", "fx.get_dyn_shared",
    "fx.llvm", "fx.llvm.atomic_add",
    # layouts and atoms (FLY601/602/603)
    "fx.make_layout", "fx.make_layout_tv", "fx.make_shape", "fx.make_stride",
    "fx.make_ordered_layout", "fx.make_identity_layout", "fx.make_composed_layout",
    "fx.make_layout_like", "fx.make_fragment_like", "fx.make_rmem_tensor", "fx.slice",
    "fx.coalesce", "fx.composition", "fx.blocked_product", "fx.raked_product",
    "fx.logical_product", "fx.left_inverse", "fx.right_inverse", "fx.get_",
    "fx.make_tiled_copy", "fx.make_tiled_copy_tv", "fx.make_tiled_copy_A",
    "fx.make_copy_atom", "fx.make_mma_atom", "fx.make_tiled_mma", "fx.mma_make_fragment",
    "fx.copy", "fx.gemm", "fx.copy_atom_call", "fx.mma_atom_call", "fx.printf",
    # rocdl backend (FLY201/204/401/403/601)
    "fx.rocdl", "fx.rocdl.MFMA", "fx.rocdl.WMMA", "fx.rocdl.cdna4", "fx.rocdl.cdna4.MFMA_Scale",
    "fx.rocdl.make_buffer_tensor", "fx.rocdl.BufferCopy32b", "fx.rocdl.BufferCopy128b",
    "fx.rocdl.BufferCopyLDS32b", "fx.rocdl.BufferCopyLDS128b",
    "fx.rocdl.sched_barrier", "fx.rocdl.sched_group_barrier",
    "fx.rocdl.sched_barrier(wrapper)", "fx.rocdl.sched_group_barrier(wrapper)",
    "fx.rocdl.sched_mfma", "fx.rocdl.sched_vmem", "fx.rocdl.sched_dsrd", "fx.rocdl.sched_dswr",
    "fx.rocdl.s_waitcnt", "fx.rocdl.s_waitcnt(keywords)",
    "fx.rocdl.cdna5", "fx.rocdl.cdna5.make_tiled_tdm_atom", "fx.rocdl.cdna5.tdm_partition",
    "fx.rocdl.tdm_ops", "flydsl.expr.rocdl.tdm_ops", "fx.rocdl.s_wait_tensorcnt",
    "fx.rocdl.wave_id",
    # shared memory, structs, control flow, indices (FLY105/203/501/502)
    "fx.SharedAllocator", "fx.struct", "fx.union", "fx.Array",
    "fx.range_constexpr", "fx.const_expr",
    "fx.thread_idx", "fx.block_idx", "fx.block_dim", "fx.grid_dim", "fx.lane_id",
    "fx.gpu", "fx.gpu.shuffle_xor", "fx.gpu.barrier", "fx.gpu.thread_id", "fx.gpu.block_id",
    "fx.gpu.lane_id", "fx.gpu.thread_idx", "fx.barrier",
]

# Legacy spellings the rules recognise (useful to know where they still resolve).
RECOGNISED = [
    "fx.maximumf", "fx.minimumf",
    "fx.arith.ArithValue", "fx.arith.unwrap", "fx.arith._to_raw", "fx.arith.constant",
    "fx.arith.index", "fx.arith.index_cast", "fx.arith.select", "fx.arith.addf",
    "fx.arith.muli", "fx.arith.maximumf", "fx.arith.minimumf", "fx.arith.as_ir_value",
    "fx.arith.constant_vector", "fx.math.math", "fx.utils", "fx.utils.arith",
    "fx.rocdl.llvm", "fx.rocdl.make_tdm_atom", "fx.rocdl.cdna5.make_tdm_atom",
    "fx.rocdl.lane_id", "fx.rocdl.mfma_f32_16x16x32_fp8_fp8",
]

# FlyDSL docs/api_stability.md section 3, "Stable but deprecated" (declared removal v0.4).
DEPRECATED = [
    "fx.get", "fx.index_cast", "fx.constant_vector", "fx.tdm_ops",
    "fx.rocdl.BufferCopyLDS64b",
    "fx.Numeric.maximumf", "fx.Numeric.minimumf", "fx.Numeric.shrui", "fx.Numeric.addf",
    "fx.Numeric.exp2", "fx.Numeric.shuffle_xor",
]

NAMES = list(dict.fromkeys([*NUMERIC, *SUGGESTED, *RECOGNISED, *DEPRECATED]))


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def is_final(version: str) -> bool:
    return re.fullmatch(r"\d+(\.\d+)*", version) is not None


def pypi_releases() -> list[str] | None:
    """Final flydsl releases the configured index knows, from `pip index versions`
    (or, failing that, from `pip download flydsl==<bad>`'s error output)."""
    run = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", "flydsl"],
        capture_output=True, text=True,
    )
    match = re.search(r"Available versions:\s*(.+)", run.stdout)
    if match:
        return sorted((v.strip() for v in match.group(1).split(",")), key=_safe_key)
    run = subprocess.run(
        [sys.executable, "-m", "pip", "download", "flydsl==0.0.0.invalid", "--no-deps",
         "-d", os.devnull],
        capture_output=True, text=True,
    )
    match = re.search(r"\(from versions: ([^)]*)\)", run.stderr)
    if match:
        return sorted((v.strip() for v in match.group(1).split(",")), key=_safe_key)
    return None


def _safe_key(version: str):
    return tuple(int(p) if p.isdigit() else -1 for p in re.split(r"[.]", version))


def wheel_for(version: str, cache: Path) -> Path:
    found = sorted(glob.glob(str(cache / f"flydsl-{version}-*.whl")))
    if not found:
        cache.mkdir(parents=True, exist_ok=True)
        print(f"  downloading flydsl=={version} ...", file=sys.stderr)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", f"flydsl=={version}", "--no-deps",
             "--only-binary=:all:", "-d", str(cache), "-q"],
            check=True,
        )
        found = sorted(glob.glob(str(cache / f"flydsl-{version}-*.whl")))
    if not found:
        raise SystemExit(f"no wheel for flydsl=={version} in {cache}")
    return Path(found[0])


def dump(table: dict) -> str:
    """JSON with one line per API (reviewable diffs)."""
    rows = [f"  {json.dumps(name)}: {json.dumps(have)}" for name, have in table["apis"].items()]
    return (
        "{\n"
        f' "generator": {json.dumps(table["generator"])},\n'
        f' "releases": {json.dumps(table["releases"])},\n'
        ' "apis": {\n' + ",\n".join(rows) + "\n }\n}\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("extra", nargs="*", help="extra API names (fx.a.b, fx.f(k=), flydsl.a.b)")
    parser.add_argument("--releases", nargs="+", help="releases to tabulate (default: PyPI's)")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="wheel cache directory")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--offline", action="store_true", help="do not ask the index for releases")
    args = parser.parse_args(argv)

    releases = args.releases
    if releases is None:
        releases = RELEASES
        if not args.offline:
            on_pypi = pypi_releases()
            if on_pypi is None:
                print("warning: could not list flydsl releases; using RELEASES", file=sys.stderr)
            else:
                in_range = [
                    v for v in on_pypi
                    if is_final(v) and version_key(FIRST) <= version_key(v) <= version_key(LAST)
                ]
                if in_range != RELEASES:
                    print(f"warning: the index lists {in_range}, RELEASES is {RELEASES}",
                          file=sys.stderr)
                releases = in_range
    releases = sorted(releases, key=version_key)
    names = list(dict.fromkeys([*NAMES, *args.extra]))

    apis: dict[str, list[str]] = {name: [] for name in names}
    undecided: dict[str, dict[str, str]] = {}
    for release in releases:
        wheel = wheel_for(release, args.cache)
        resolver = Resolver(sources_from_wheel(wheel))
        present = 0
        for name in names:
            if resolver.exists(name):
                apis[name].append(release)
                present += 1
            elif name in resolver.uncertain:
                undecided.setdefault(name, {})[release] = resolver.uncertain[name]
        print(f"{release}: {present}/{len(names)} present ({wheel.name})", file=sys.stderr)
        for warning in resolver.warnings:
            print(f"  note: {warning}", file=sys.stderr)

    for name, why in sorted(undecided.items()):
        print(f"left out (undecidable from the syntax tree): {name}: {why}", file=sys.stderr)
        del apis[name]

    table = {
        "generator": GENERATOR,
        "releases": releases,
        "apis": dict(sorted(apis.items())),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(dump(table), "utf-8")

    print(f"wrote {args.output} ({len(releases)} releases, {len(table['apis'])} APIs)")
    for name, have in table["apis"].items():
        if have != releases:
            contiguous = have and have == releases[releases.index(have[0]) :]
            span = f"from {have[0]}" if contiguous else have
            print(f"  {name}: {span or 'never'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
