"""Soak: many edits into the real server over stdio, watching its memory.

    python benchmarks/soak.py                        # 10,000 edits into a generated kernel
    python benchmarks/soak.py --edits 2000 --lines 6000 --sample 250

The server (``python -m flydsl_ls serve``, ``diagnosticsDelay: 0``, push diagnostics) gets
the edit series of ``bench_latency.py`` (typing inside function bodies with the syntax
broken half-way, inserting and deleting lines, pasting and cutting a block with non-ASCII
text, changing a module-level constant) over and over; the text comes back to where it
started after every round. Edits go out in bursts: every ``--sync`` edits the client waits
for the diagnostics of the current version (the rest may be skipped as stale, as when
typing fast). Every 100 edits it also asks for a hover and for code actions at a
diagnostic, and every 1,000 edits a second document is opened and closed.

Every ``--sample`` edits (after a sync) it records the server's RSS (``VmRSS``), then prints
the series, the growth from the first sample to the last and a least-squares slope
(MB per 1,000 edits). A measurement, not a test.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_analysis import generate
from bench_latency import Doc, edit_script, flydsl_server, hover_points, machine


def slope(xs: list[float], ys: list[float]) -> float:
    n = len(xs)
    if n < 2:
        return 0.0
    mx, my = sum(xs) / n, sum(ys) / n
    var = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var if var else 0.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=10_000)
    parser.add_argument("--lines", type=int, default=600, help="size of the generated kernel (default 600)")
    parser.add_argument("--sample", type=int, default=500, help="edits between RSS samples (default 500)")
    parser.add_argument("--sync", type=int, default=10, help="wait for diagnostics every N edits (default 10)")
    parser.add_argument("--no-requests", action="store_true", help="edits only: no hover, code actions, second document")
    args = parser.parse_args(argv)

    print(machine())
    with tempfile.TemporaryDirectory(prefix="flydsl-soak-") as tmp:
        root = Path(tmp)
        path = root / "soak_kernel.py"
        text = generate(args.lines)
        path.write_text(text, encoding="utf-8")
        other = root / "other_kernel.py"
        other_text = generate(300)
        client = flydsl_server(root)
        try:
            doc = Doc(path, text)
            mark = client.mark()
            sent = client.notify(
                "textDocument/didOpen",
                {"textDocument": {"uri": doc.uri, "languageId": "python", "version": 1, "text": text}},
            )
            client.wait_published(doc.uri, 1, mark, sent)
            print(f"{args.lines}-line kernel open; RSS {client.rss()['VmRSS']:.0f} MB; {args.edits} edits", flush=True)
            series: list[tuple[int, float, float]] = []
            last_diags: list = []
            edits = itertools.chain.from_iterable(edit_script(doc, 1) for _ in itertools.count())
            start = time.perf_counter()
            done = 0
            for done, (_, _, params) in enumerate(edits, 1):
                mark = client.mark()
                sent = client.notify("textDocument/didChange", params)
                if done % args.sync == 0 or done % args.sample == 0 or done == args.edits:
                    _, published = client.wait_published(doc.uri, doc.version, mark, sent)
                    last_diags = published["diagnostics"]
                if done % 100 == 0 and not args.no_requests:
                    point = hover_points(doc.text, 7)[done // 100 % 7]
                    client.request("textDocument/hover", {"textDocument": {"uri": doc.uri}, "position": point})
                    if last_diags:
                        d = last_diags[done // 100 % len(last_diags)]
                        client.request(
                            "textDocument/codeAction",
                            {"textDocument": {"uri": doc.uri}, "range": d["range"], "context": {"diagnostics": [d]}},
                        )
                if done % 1000 == 0 and not args.no_requests:
                    mark = client.mark()
                    sent = client.notify(
                        "textDocument/didOpen",
                        {"textDocument": {"uri": other.as_uri(), "languageId": "python", "version": 1, "text": other_text}},
                    )
                    client.wait_published(other.as_uri(), 1, mark, sent)
                    client.notify("textDocument/didClose", {"textDocument": {"uri": other.as_uri()}})
                if done % args.sample == 0:
                    rss = client.rss()
                    series.append((done, rss["VmRSS"], time.perf_counter() - start))
                    print(f"  {done:6d} edits  RSS {rss['VmRSS']:7.1f} MB  peak {rss['VmHWM']:7.1f} MB  {series[-1][2]:6.0f} s", flush=True)
                if done >= args.edits:
                    break
            if client.proc.poll() is not None:
                print(f"the server exited with {client.proc.returncode}")
                return 1
        finally:
            client.close()
    if len(series) >= 2:
        first, last = series[0][1], series[-1][1]
        xs = [n / 1000 for n, _, _ in series]
        ys = [r for _, r, _ in series]
        print("RSS series (MB): " + ", ".join(f"{r:.0f}" for r in ys))
        print(
            f"growth: {last - first:+.1f} MB from edit {series[0][0]} to edit {series[-1][0]} "
            f"({(last - first) / first * 100:+.1f}%); slope {slope(xs, ys):+.2f} MB per 1,000 edits; "
            f"min {min(ys):.0f} MB, max {max(ys):.0f} MB; {series[-1][2]:.0f} s in all"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
