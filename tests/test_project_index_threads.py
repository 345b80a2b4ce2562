"""ProjectIndex shared by threads, as in the server: the lint thread, the code-actions thread
and the event loop (``forget`` on a save or a watched-file change) ask and update the same
index at once. Every answer must be the one a single thread gets, and nothing may raise."""

from __future__ import annotations

import random
import sys
import threading
from pathlib import Path

from flydsl_ls.analysis.model.project import ProjectIndex

HELPERS = 6
KERNELS = 6
THREADS = 4
ROUNDS = 60


def write_project(root: Path) -> None:
    """helpers h0..h5, each re-exporting a name of the next (a chain to resolve), and kernels
    passing dialect modules to the helpers' functions (callers to find)."""
    pkg = root / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for i in range(HELPERS):
        lines = ["import flydsl.expr as fx", "from flydsl.expr import arith"]
        if i + 1 < HELPERS:
            lines.append(f"from .h{i + 1} import raw{i + 1} as raw{i}")
        else:
            lines.append("from flydsl.expr.arith import maximumf as raw5")
        lines += [
            "",
            f"def reduce{i}(m, a, b):",
            "    return m.arith.maximumf(a, b)",
            "",
            f"def scale{i}(d, x):",
            "    return d.mulf(x, x)",
            "",
        ]
        (pkg / f"h{i}.py").write_text("\n".join(lines))
    for k in range(KERNELS):
        lines = ["import flydsl.expr as fx", "from flydsl.expr import arith"]
        lines += [f"from .h{i} import reduce{i}, scale{i}" for i in range(HELPERS)]
        lines += ["", f"def kernel{k}(a, b):"]
        lines += [f"    reduce{(k + i) % HELPERS}(fx, a, b)" for i in range(3)]
        lines += [f"    scale{(k * 5 + i) % HELPERS}(arith, a)" for i in range(2)]
        lines.append("    return a")
        (pkg / f"k{k}.py").write_text("\n".join(lines) + "\n")


def questions(root: Path) -> list[tuple]:
    pkg = root / "pkg"
    asked: list[tuple] = []
    for k in range(KERNELS):
        asked += [("resolve", pkg / f"k{k}.py", f"pkg.h{i}.raw{i}") for i in range(HELPERS)]
    for i in range(HELPERS):
        asked += [("arguments", pkg / f"h{i}.py", f"reduce{i}"), ("arguments", pkg / f"h{i}.py", f"scale{i}")]
        asked += [("definers", pkg / f"k{i % KERNELS}.py", f"reduce{i}"), ("model", pkg / f"h{i}.py", "")]
    return asked


def answer(index: ProjectIndex, question: tuple):
    kind, path, what = question
    if kind == "model":
        model = index.model_of(path.resolve())
        return model is not None and sorted(model.module_scope.bindings)
    view = index.view(path, "pkg")
    if kind == "resolve":
        return view.resolve(what)
    if kind == "arguments":
        return sorted(map(repr, view.module_arguments(what)))
    return view.definers(what)


def serial_answers(root: Path) -> dict[tuple, object]:
    index = ProjectIndex(roots=[root])
    return {q: answer(index, q) for q in questions(root)}


def test_threads_get_the_serial_answers(tmp_path):
    write_project(tmp_path)
    expected = serial_answers(tmp_path)
    assert expected[("resolve", tmp_path / "pkg" / "k0.py", "pkg.h0.raw0")] == "flydsl.expr.arith.maximumf"
    assert any(expected[q] for q in expected if q[0] == "arguments")
    asked = questions(tmp_path)
    files = sorted((tmp_path / "pkg").glob("*.py"))
    wrong: list[tuple] = []
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS + 1)

    def ask(seed: int) -> None:
        rng = random.Random(seed)
        try:
            start.wait()
            for _ in range(ROUNDS):
                index = shared[0]
                for q in rng.sample(asked, len(asked)):
                    got = answer(index, q)
                    if got != expected[q]:
                        wrong.append((q, got))
                index.dependencies(files[rng.randrange(len(files))])
        except BaseException as error:  # noqa: BLE001 (reported below)
            errors.append(error)

    def update(seed: int) -> None:
        rng = random.Random(seed)
        try:
            start.wait()
            for i in range(ROUNDS * 20):
                index = shared[0]
                index.forget(files[rng.randrange(len(files))])  # unchanged on disk: same answers
                if i % 200 == 199:
                    index.forget(files[rng.randrange(len(files))])
        except BaseException as error:  # noqa: BLE001
            errors.append(error)

    shared = [ProjectIndex(roots=[tmp_path])]
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # interleave the threads finely
    try:
        threads = [threading.Thread(target=ask, args=(seed,)) for seed in range(THREADS - 1)]
        threads.append(threading.Thread(target=update, args=(99,)))
        for t in threads:
            t.start()
        start.wait()
        for t in threads:
            t.join(timeout=600)
    finally:
        sys.setswitchinterval(switch)
    assert not errors, errors[:3]
    assert not wrong, wrong[:5]
    final = shared[0]
    assert {q: answer(final, q) for q in asked} == expected  # the caches left behind agree too


def test_a_word_index_reader_never_misses_a_file_being_forgotten(tmp_path):
    """``forget`` of a file unchanged on disk: a reader asking who mentions its words (no
    lock taken) sees the file every time, never a list it was removed from for a moment."""
    write_project(tmp_path)
    target = (tmp_path / "pkg" / "k2.py").resolve()
    index = ProjectIndex(roots=[tmp_path])
    index._word_index()  # what the readers read (the first questions search the texts)
    assert target in index._mentioning("scale5")
    missed: list[int] = []
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            if target not in index._mentioning("scale5"):
                missed.append(1)

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    reader = threading.Thread(target=read)
    reader.start()
    try:
        for _ in range(3000):
            index.forget(target)
    finally:
        done.set()
        reader.join()
        sys.setswitchinterval(switch)
    assert not missed
