"""Analysis time per file: ast parse, semantic model build, full check.

    python benchmarks/bench_analysis.py                       # the generated 6,000-line file
    python benchmarks/bench_analysis.py PATH [PATH ...]       # plus these files / folders
    python benchmarks/bench_analysis.py --runs 20 --lines 12000 --cli kernels/

Each step is timed ``--runs`` times per file; min and median are printed in ms.
"full check" is what ``flydsl-ls check`` does per file (parse, model, every rule,
suppressions); "keystroke" is the server's incremental re-analysis after an edit of the
code line nearest the middle of the file. ``--cli`` also times one whole
``python -m flydsl_ls check FILE`` process (interpreter start-up included, as one would
time ``ruff check FILE``).

This is a measurement, not a test: nothing here fails on a slow machine.
"""

from __future__ import annotations

import argparse
import ast
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from flydsl_ls.analysis.engine import AnalysisRequest, analyze
from flydsl_ls.analysis.incremental import IncrementalAnalyzer
from flydsl_ls.analysis.model.semantic import SemanticModel
from flydsl_ls.analysis.model.sources import UnreadableFile, read_source
from flydsl_ls.files import discover

HEADER = '''\
"""Generated benchmark kernel: legacy FlyDSL idioms at realistic density."""

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl._mlir.dialects import arith as std_arith
from flydsl._mlir.dialects import scf
from flydsl.expr import arith, gpu, rocdl
from flydsl.expr.arith import _to_raw as _raw
from flydsl.expr.typing import T
from flydsl.expr.utils.arith import ArithValue as _AV
from kernels.common import buffer_ops

BLOCK_M = 64
BLOCK_N = 128
WARP = 64
VMCNT_0 = 0x3F70
LGKMCNT_0_ONLY = 0xC07F

'''

HELPER = '''\
def _load_tile_{i}(rsrc, base, stride: fx.Int32, n_valid):
    """Tile {i}: ArithValue(x) in a docstring is text."""
    tid = fx.thread_idx.x
    lane = _AV(tid) % WARP
    row = fx.Int32(fx.Int32(lane // 4))
    col = fx.Int32(tid) % 4
    off = arith.index_cast(T.index, base + row * stride + col * {vec})
    acc = fx.Float32(0.0)
    for kk in fx.range_constexpr({unroll}):
        for jj in fx.range_constexpr(2):
            idx = off + arith.index(kk * 2 + jj)
            v = buffer_ops.buffer_load(rsrc, idx, vec_width={vec}, dtype=T.f32)
            raw = std_arith.mulf(_raw(acc), v)
            acc = _AV(raw) + fx.Float32(v)
            if kk % 2 == 0:
                acc = acc.maximumf(fx.Float32(0.0))
    rocdl.s_waitcnt(VMCNT_0)
    pred = arith.unwrap(fx.Int32(row) < n_valid)
    m = std_arith.select(pred, _raw(acc), arith.constant(0.0, type=T.f32))
    return _AV(m) * {scale}


def _store_tile_{i}(rsrc, base, vals, stride: fx.Int32):
    bid = gpu.block_id("x")
    tid = gpu.thread_id("x")
    row0 = bid * BLOCK_M + tid // 4
    step = arith.constant({vec}, index=True)
    for r in fx.range_constexpr({unroll}):
        dst = arith.index_cast(T.index, fx.Int64(row0) * fx.Int64(stride)) + step * r
        val = arith.ArithValue(vals[r])  # legacy wrapper, unknown type
        buffer_ops.buffer_store(_raw(val), rsrc, dst)
    rocdl.s_waitcnt(LGKMCNT_0_ONLY)
    layout = fx.make_layout(fx.Int32(BLOCK_M), fx.Int32({vec}))
    return layout

'''

KERNEL = '''\
@flyc.kernel
def bench_kernel_{i}(A: fx.Tensor, B: fx.Tensor, n: fx.Int32):
    rsrc_a = buffer_ops.create_buffer_resource(A, max_size=True)
    rsrc_b = buffer_ops.create_buffer_resource(B, max_size=True)
    base = fx.Int32(fx.block_idx.x) * BLOCK_N
    vals = []
    for t in fx.range_constexpr({unroll}):
        vals.append(_load_tile_{j}(rsrc_a, base + t, n, n))
    total = vals[0]
    for t in fx.range_constexpr(1, {unroll}):
        total = total + vals[t]
    _store_tile_{j}(rsrc_b, base, vals, n)
    if_op = scf.IfOp(arith.unwrap(total > 0.0))
    with ir.InsertionPoint(if_op.then_block):
        scf.YieldOp([])


@flyc.jit
def launch_{i}(A: fx.Tensor, B: fx.Tensor, n: fx.Int32, stream: fx.Stream = fx.Stream(None)):
    bench_kernel_{i}(A, B, n).launch(grid=(n // BLOCK_N, 1, 1), block=(256, 1, 1), stream=stream)

'''


def generate(lines: int = 6000) -> str:
    """A deterministic kernel-like module of about ``lines`` lines of legacy FlyDSL code."""
    parts = [HEADER]
    count = HEADER.count("\n")
    i = 0
    while count < lines:
        vec, unroll, scale = (1, 2, 4, 8)[i % 4], 2 + i % 3, 0.5 + (i % 7) / 8
        chunk = HELPER.format(i=i, vec=vec, unroll=unroll, scale=scale)
        if i % 3 == 2:
            chunk += KERNEL.format(i=i, j=i - 1, unroll=unroll)
        parts.append(chunk)
        count += chunk.count("\n")
        i += 1
    return "".join(parts)


def timed(fn, runs: int) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return min(samples), statistics.median(samples)


def _keystroke(source: str, runs: int) -> tuple[float, float]:
    """Incremental re-analysis after an edit of the code line nearest the middle of the
    file (a comment typed at its end; the analyzer holds the previous version)."""
    lines = source.splitlines(keepends=True)
    middle = len(lines) // 2
    code = [i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith(("#", "@"))]
    target = min(code, key=lambda i: abs(i - middle)) if code else 0
    analyzer = IncrementalAnalyzer()
    analyzer.analyze(AnalysisRequest(source))
    texts = []
    for k in range(runs + 1):  # alternate two texts, so every run re-analyses
        edited = lines[:]
        edited[target] = edited[target].rstrip("\r\n") + ("  # x" if k % 2 == 0 else "  # y") + "\n"
        texts.append("".join(edited))
    analyzer.analyze(AnalysisRequest(texts[0]))
    samples = []
    for text in texts[1:]:
        start = time.perf_counter()
        analyzer.analyze(AnalysisRequest(text))
        samples.append((time.perf_counter() - start) * 1000)
    return min(samples), statistics.median(samples)


def bench_source(name: str, source: str, runs: int, cli_path: Path | None) -> dict:
    tree = ast.parse(source)
    parse = timed(lambda: ast.parse(source), runs)
    model = timed(lambda: SemanticModel(source, tree), runs)
    check = timed(lambda: analyze(AnalysisRequest(source)), runs)
    result = analyze(AnalysisRequest(source))
    keystroke = _keystroke(source, runs)
    row = {
        "file": name,
        "lines": source.count("\n") + 1,
        "parse": parse,
        "model": model,
        "check": check,
        "keystroke": keystroke,
        "findings": len(result.diagnostics),
        "errors": len(result.internal_errors),
    }
    if cli_path is not None:
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "flydsl_ls", "check", "-q", "--exit-zero", str(cli_path)],
            capture_output=True,
            check=False,
        )
        row["cli"] = (time.perf_counter() - start) * 1000
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, help="extra files or folders to time")
    parser.add_argument("--runs", type=int, default=10, help="runs per step (default 10)")
    parser.add_argument("--lines", type=int, default=6000, help="size of the generated file")
    parser.add_argument("--cli", action="store_true", help="also time one whole CLI process per file")
    parser.add_argument("--write", type=Path, help="save the generated file here and exit")
    args = parser.parse_args(argv)

    generated = generate(args.lines)
    if args.write:
        args.write.write_text(generated, encoding="utf-8")
        print(f"wrote {args.write} ({generated.count(chr(10))} lines)")
        return 0

    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.runs} runs per step; times in ms (min / median)")
    rows = []
    cli_file = None
    if args.cli:
        import tempfile

        cli_file = Path(tempfile.mkdtemp()) / "generated_kernel.py"
        cli_file.write_text(generated, encoding="utf-8")
    rows.append(bench_source(f"<generated {args.lines}-line kernel>", generated, args.runs, cli_file))
    for path in discover([p for p in args.paths if p.exists()]):
        try:
            source = read_source(path)
            ast.parse(source)
        except (UnreadableFile, SyntaxError, ValueError) as error:
            print(f"skipped {path}: {error}", file=sys.stderr)
            continue
        rows.append(bench_source(str(path), source, args.runs, path if args.cli else None))
    for path in args.paths:
        if not path.exists():
            print(f"skipped {path}: no such file or directory", file=sys.stderr)

    header = f"{'file':<48} {'lines':>6} {'parse':>15} {'model':>15} {'check':>15} {'keystroke':>15} {'found':>6}"
    if args.cli:
        header += f" {'cli':>8}"
    print(header)
    for row in rows:
        name = row["file"] if len(row["file"]) <= 48 else "..." + row["file"][-45:]
        line = f"{name:<48} {row['lines']:>6}"
        for step in ("parse", "model", "check", "keystroke"):
            low, mid = row[step]
            line += f" {low:>7.1f}/{mid:>7.1f}"
        line += f" {row['findings']:>6}"
        if "cli" in row:
            line += f" {row['cli']:>8.0f}"
        if row["errors"]:
            line += f"  ({row['errors']} internal errors)"
        print(line)
    if len(rows) > 2:
        total = sum(r["check"][1] for r in rows[1:])
        lines = sum(r["lines"] for r in rows[1:])
        print(f"{len(rows) - 1} given files, {lines} lines: full check {total:.0f} ms (sum of medians)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
