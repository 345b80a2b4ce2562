"""`flydsl-ls check` over whole trees, cold and cached, beside `ruff check` in the same run.

    python benchmarks/bench_cli.py                            # FlyDSL's kernels + aiter's flydsl ops
    python benchmarks/bench_cli.py PATH [PATH ...]            # other trees
    python benchmarks/bench_cli.py --ruff /tmp/ruff-venv/bin/ruff --runs 5 --cold-runs 2

Times whole processes (interpreter start-up included), output to a file:

- ``ruff no-cache``: ``ruff check --no-cache --select ALL``; ``ruff cached``: the same with
  a filled cache;
- ``cold``: ``flydsl-ls check --no-cache`` (worker per core), each run just after a ruff
  run, whose ratios are printed too (run by run: the host's speed drifts); ``cold -j1``: one process;
  then one more cold run with ``--timings``, whose report (workspace facts built once,
  module calls scanned once, each worker's files, models built and idle time) is printed;
  ``cold+write``: an empty cache, filled by the run;
- ``warm``: every result from the cache; ``warm, 1 edit``: after one file's bytes change
  (a comment appended to the file the most others read), so what depends on it is checked again.

The trees are copied to a temporary folder (an edit must not touch the originals) and
flydsl-ls is run from a byte-compiled copy of its package, so that edits made to the checkout while the
benchmark runs (another rule changing) neither slow the cold runs nor invalidate the warm
ones. The outputs of all flydsl-ls runs over the same bytes are compared; the load average
is printed before and after (the ratios to ruff, measured in the same run, are the figures
to read on a busy machine).

This is a measurement, not a test: nothing here fails on a slow machine.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = [Path("/work/corpus/flydsl/kernels"), Path("/work/corpus/aiter/aiter/ops/flydsl")]


def find_ruff(given: str | None) -> str | None:
    for candidate in (given, shutil.which("ruff"), "/tmp/ruff-venv/bin/ruff", str(Path(sys.executable).parent / "ruff")):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


def timed(command: list[str], env: dict, runs: int, cwd: Path) -> tuple[list[float], bytes]:
    """Wall times of ``runs`` runs and the last one's output. The output goes to a file,
    read after: through a pipe, ruff's 16 MB over the corpus took it 0.59 s instead of 0.54
    (the reader's pace), which flattered the ratios by 8%."""
    times, out = [], b""
    for _ in range(runs):
        with tempfile.TemporaryFile() as sink:
            start = time.perf_counter()
            subprocess.run(command, env=env, cwd=cwd, stdout=sink, stderr=subprocess.DEVNULL, check=False)
            times.append(time.perf_counter() - start)
            sink.seek(0)
            out = sink.read()
    return times, out


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--ruff", help="the ruff executable (default: on PATH, or /tmp/ruff-venv/bin/ruff)")
    parser.add_argument("--runs", type=int, default=5, help="runs of the fast measurements (default 5)")
    parser.add_argument("--cold-runs", type=int, default=2, help="runs of the cold ones (default 2)")
    parser.add_argument("--no-serial", action="store_true", help="skip the one-process cold run")
    args = parser.parse_args()
    paths = args.paths or [p for p in CORPUS if p.is_dir()]
    if not paths:
        parser.error("no paths given and the default corpus is not here")
    ruff = find_ruff(args.ruff)

    scratch = Path(tempfile.mkdtemp(prefix="bench-cli-"))
    try:
        trees = []
        for i, path in enumerate(paths):
            # Under its own name: a package's imports (`from kernels.common import ...`)
            # resolve in the copy as in the tree. Renamed (`0-kernels`), they did not: 100
            # lines of the corpus's output differed, and the run took ~3% less time.
            copy = scratch / "trees" / str(i) / path.name
            shutil.copytree(path, copy, ignore=shutil.ignore_patterns("__pycache__", ".ruff_cache", ".flydsl-ls-cache"))
            trees.append(str(copy.relative_to(scratch)))
        package = scratch / "install"
        shutil.copytree(ROOT / "flydsl_ls", package / "flydsl_ls", ignore=shutil.ignore_patterns("__pycache__"))
        # Byte-compiled, as pip installs it: otherwise every run compiles the package again
        # when the environment says not to write bytecode (~0.2 s a run).
        compileall.compile_dir(package, quiet=1)
        files = sorted(p for t in trees for p in (scratch / t).rglob("*.py"))
        lines = sum(p.read_bytes().count(b"\n") for p in files)
        print(f"{len(files)} files, {lines} lines in {', '.join(map(str, paths))}")
        print(f"before: {load()}")

        env = {**os.environ, "PYTHONPATH": str(package), "FLYDSL_LS_CACHE": str(scratch / "flydsl-ls-cache")}
        env.pop("FLYDSL_GPU_ARCH", None)
        ours = [sys.executable, "-m", "flydsl_ls", "check", *trees]
        rows: list[tuple[str, list[float]]] = []
        outputs: dict[str, bytes] = {}

        if ruff:
            no_cache, _ = timed([ruff, "check", "--no-cache", "--select", "ALL", *trees], env, args.runs, scratch)
            rows.append(("ruff no-cache", no_cache))
            cached_command = [ruff, "check", "--select", "ALL", "--cache-dir", str(scratch / "ruff-cache"), *trees]
            timed(cached_command, env, 1, scratch)
            rows.append(("ruff cached", timed(cached_command, env, args.runs, scratch)[0]))
        else:
            print("ruff not found (--ruff PATH, or pip install ruff into /tmp/ruff-venv): no ruff columns")

        # Each cold run right after a ruff run: this host's speed drifts by a third within
        # minutes, which the medians of two separate series take for a difference.
        cold, paired = [], []
        for _ in range(args.cold_runs):
            if ruff:
                reference = timed([ruff, "check", "--no-cache", "--select", "ALL", *trees], env, 1, scratch)[0][0]
            times, outputs["cold"] = timed([*ours, "--no-cache"], env, 1, scratch)
            cold += times
            if ruff:
                paired.append(times[0] / reference)
        rows.append((f"cold (-j{os.cpu_count()})", cold))
        report = subprocess.run(
            [*ours, "--no-cache", "--timings"], env=env, cwd=scratch, capture_output=True, check=False
        )
        outputs["cold --timings"] = report.stdout
        timing_lines = [line for line in report.stderr.decode().splitlines() if line.startswith("timings:")]
        if not args.no_serial:
            serial, outputs["cold -j1"] = timed([*ours, "--no-cache", "-j1"], env, 1, scratch)
            rows.append(("cold -j1", serial))
        written = []
        for _ in range(args.cold_runs):
            shutil.rmtree(scratch / "flydsl-ls-cache", ignore_errors=True)
            times, outputs["cold+write"] = timed(ours, env, 1, scratch)
            written += times
        rows.append(("cold+write", written))
        warm, outputs["warm"] = timed(ours, env, args.runs, scratch)
        rows.append(("warm", warm))

        # One edit: a comment appended to the file most others read (by name), then back.
        texts = [q.read_text(errors="replace") for q in files]
        edited = max((p for p in files if p.name != "__init__.py"), key=lambda p: sum(p.stem in t for t in texts))
        original = edited.read_bytes()
        edits = []
        for i in range(args.cold_runs):
            edited.write_bytes(original + f"# edit {i}\n".encode())
            edits += timed(ours, env, 1, scratch)[0]
        edited.write_bytes(original)
        rows.append((f"warm, 1 edit ({edited.name})", edits))
        print(f"after:  {load()}")
        print("\none cold run, --timings:", *timing_lines, sep="\n  ")

        base = {name: statistics.median(times) for name, times in rows}
        print(f"\n{'run':<40} {'min s':>8} {'median s':>9} {'vs ruff':>8}")
        for name, times in rows:
            against = ""
            if ruff and not name.startswith("ruff"):
                reference = base["ruff cached"] if name.startswith("warm") else base["ruff no-cache"]
                against = f"{statistics.median(times) / reference:7.1f}x"
            print(f"{name:<40} {min(times):8.2f} {statistics.median(times):9.2f} {against:>8}")
        if paired:
            print(
                f"\ncold vs ruff no-cache, run by run (each cold run just after a ruff run): "
                f"median {statistics.median(paired):.1f}x, {min(paired):.1f}x to {max(paired):.1f}x"
            )
        same = len(set(outputs.values())) == 1
        print(f"\nflydsl-ls outputs identical across cold, -j1, cold+write and warm: {'yes' if same else 'NO'}")
        if ruff:
            print("(warm rows are compared with ruff cached, the others with ruff no-cache)")
        return 0 if same else 1
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
