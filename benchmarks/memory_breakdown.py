"""Where does the server's memory go with the 213 real corpus files open?

Run by hand (never under pytest); it prints figures, it asserts nothing.

    python benchmarks/memory_breakdown.py

The real server (``python -m flydsl_ls serve``) starts with a ``sitecustomize`` (in a scratch
folder, first on its ``PYTHONPATH``; nothing in flydsl-ls knows about it) that answers
SIGUSR1 with a census of what the server holds. The client opens every corpus file back to
back, as ``bench_peers.py`` does, waits for each one's diagnostics, lets the server settle,
reads its RSS and sends the signal. The census walks the objects reachable from the
session's project index, then from each open document's fields, in a fixed order, each
object counted once (``sys.getsizeof``; an object shared by two counts for the first; code,
modules' globals and threads are not walked into): the last analysis (diagnostics and
fixes), ``good_model`` (a whole-file model kept for hover), the incremental analyzer
(chunks, their results, kept models and syntax trees), the diagnostics' JSON cache; then
every other object the collector tracks (modules,
tables, FlyDSL's docs, pygls). RSS minus the census is the interpreter, extension modules
and allocator slack.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_latency import CLIENTS, Client  # noqa: E402
from bench_peers import make_workspace, open_all, tree_rss  # noqa: E402

SITECUSTOMIZE = r'''
import gc, json, os, signal, sys

FIELDS = ("analysis", "good_model", "incremental", "json_cache")


SKIPPED = ("module", "function", "builtin_function_or_method", "method", "code", "frame", "cell",
           "getset_descriptor", "wrapper_descriptor", "method_descriptor", "weakref", "Thread", "Lock", "RLock")


def _census(signum, frame):
    gc.set_debug(gc.DEBUG_SAVEALL)  # garbage waiting for the collector, kept aside to be named
    unreachable = gc.collect()
    kinds = {}
    for o in gc.garbage:
        name = type(o).__module__ + "." + type(o).__qualname__
        kinds[name] = kinds.get(name, 0) + 1
    gc.set_debug(0)
    gc.garbage.clear()
    gc.collect()
    # Not walked into: code and what it reaches (modules' globals), and threads.
    seen = {id(m.__dict__) for m in list(sys.modules.values()) if hasattr(m, "__dict__")}

    def size(root):
        total, stack = 0, [root]
        while stack:
            obj = stack.pop()
            if id(obj) in seen or isinstance(obj, type) or type(obj).__name__ in SKIPPED:
                continue
            seen.add(id(obj))
            total += sys.getsizeof(obj)
            stack.extend(gc.get_referents(obj))
        return total

    documents = [o for o in gc.get_objects() if type(o).__name__ == "Document" and hasattr(o, "incremental")]
    sessions = [o for o in gc.get_objects() if type(o).__name__ == "Session" and hasattr(o, "project")]
    for session in sessions:  # the session's own maps, not what they reach
        seen.add(id(session))
        seen.add(id(session.documents))
    out = {"documents": len(documents), "fields": {f: 0 for f in FIELDS}, "text": 0, "largest": []}
    out["unreachable"] = unreachable
    out["garbage_by_type"] = sorted(kinds.items(), key=lambda kv: -kv[1])[:12]
    # first: every analyzer's view of the project reads the session's index
    out["project"] = sum(size(s.project) for s in sessions) + sum(
        size(getattr(d.incremental, "_project", None)) for d in documents
    )
    out["analyzer"] = {}
    indexes = {id(i): i for i in (getattr(getattr(d.incremental, "_project", None), "_index", None) for d in documents) if i}
    out["models"] = sum(len(i._modules) for i in indexes.values())
    out["model_lines"] = sum(len(m.model.source.splitlines()) for i in indexes.values() for m in i._modules.values() if m.model)
    per_doc = []
    for doc in documents:
        seen.add(id(doc))
        sizes = {}
        for f in FIELDS:
            if f != "incremental":
                sizes[f] = size(getattr(doc, f, None))
                continue
            sizes[f] = 0
            for name, value in vars(doc.incremental).items():  # which part of the analyzer
                part = size(value)
                out["analyzer"][name] = out["analyzer"].get(name, 0) + part
                sizes[f] += part
        sizes["text"] = size(doc.text) + size(doc.__dict__)
        for f in FIELDS:
            out["fields"][f] += sizes[f]
        out["text"] += sizes["text"]
        per_doc.append((sum(sizes.values()), doc.uri.rsplit("/", 1)[-1], len(doc.text.splitlines()), sizes))
    out["largest"] = sorted(per_doc, key=lambda d: -d[0])[:8]
    rest = {}
    seen.add(id(seen))  # not the census's own set
    for o in gc.get_objects():
        found = size(o)
        if found:
            name = type(o).__module__ + "." + type(o).__qualname__
            rest[name] = rest.get(name, 0) + found
    out["rest"] = sum(rest.values())
    out["rest_by_type"] = sorted(rest.items(), key=lambda kv: -kv[1])[:12]
    out["rss_before_trim"] = _rss()
    import ctypes
    ctypes.CDLL("libc.so.6").malloc_trim(0)  # what the C allocator holds free, given back
    out["rss_after_trim"] = _rss()
    with open(os.environ["FLYDSL_LS_BENCH_CENSUS"], "w") as handle:
        json.dump(out, handle)


def _rss():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmRSS"))


if os.environ.get("FLYDSL_LS_BENCH_CENSUS"):
    signal.signal(signal.SIGUSR1, _census)
'''


def mb(n: float) -> str:
    return f"{n / 2**20:7.1f} MB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="flydsl-memory-"))
    root = make_workspace(scratch, sys.executable)
    hook = scratch / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    census_path = scratch / "census.json"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(hook), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
        "FLYDSL_LS_BENCH_CENSUS": str(census_path),
    }
    client = Client([sys.executable, "-m", "flydsl_ls", "serve"], root, env=env)
    client.initialize(root, None, CLIENTS["resolving"])
    opened = open_all(client, root)
    print(
        f"{opened['files']} files open ({opened['missing']} without diagnostics) in "
        f"{opened['all_diagnostics']:.1f} s; RSS {opened['VmRSS']:.0f} MB, peak {opened['VmHWM']:.0f} MB",
        flush=True,
    )
    os.kill(client.pid, signal.SIGUSR1)
    deadline = time.time() + 600
    while not census_path.exists() and time.time() < deadline:
        time.sleep(0.5)
    time.sleep(1.0)  # the census is written at once; let it finish
    census = json.loads(census_path.read_text(encoding="utf-8"))
    print(f"the census's gc.collect() found {census['unreachable']:,} unreachable objects; RSS after the "
          f"census {census['rss_before_trim']:.0f} MB, after malloc_trim(0) {census['rss_after_trim']:.0f} MB")
    client.close()

    rss = opened["VmRSS"] * 2**20
    fields = census["fields"]
    counted = sum(fields.values()) + census["text"] + census["project"] + census["rest"]
    print(f"\n{census['documents']} documents; what the server holds (each object counted once):")
    rows = [
        ("last analysis: diagnostics, fixes (analysis)", fields["analysis"]),
        ("whole-file model for hover (good_model)", fields["good_model"]),
        ("incremental analyzer: chunks, results, kept models and trees", fields["incremental"]),
        ("diagnostics' JSON cache (json_cache)", fields["json_cache"]),
        ("document text and the rest of Document", census["text"]),
        ("project index (cross-file facts)", census["project"]),
        ("everything else the collector tracks (modules, tables, pygls)", census["rest"]),
    ]
    for label, size in rows:
        print(f"  {mb(size)}  {size / rss:5.1%} of RSS  {label}")
    print(f"  {mb(counted)}  {counted / rss:5.1%} of RSS  counted")
    print(f"  {mb(rss - counted)}  {(rss - counted) / rss:5.1%} of RSS  not counted: interpreter, C extensions, allocator slack")
    print("\ncyclic garbage waiting for the collector, by type (objects):")
    for name, count in census["garbage_by_type"]:
        print(f"  {count:10,}  {name}")
    print("\neverything else, by the type of the object it was reached from first:")
    for name, size in census["rest_by_type"]:
        print(f"  {mb(size)}  {name}")
    print(f"\nthe project index holds {census['models']} module models ({census['model_lines']:,} lines)")
    print("\nthe incremental analyzers' parts:")
    for name, size in sorted(census["analyzer"].items(), key=lambda kv: -kv[1])[:8]:
        print(f"  {mb(size)}  {name}")
    print("\nlargest documents (lines: analysis / good_model / incremental / json_cache):")
    for total, name, lines, sizes in census["largest"]:
        parts = " / ".join(f"{sizes[f] / 2**20:.1f}" for f in ("analysis", "good_model", "incremental", "json_cache"))
        print(f"  {total / 2**20:6.1f} MB  {name} ({lines:,} lines): {parts} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
