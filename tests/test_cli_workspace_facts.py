"""`flydsl-ls check` computes the workspace-wide facts once per run, not once per file or
per worker, and gives the same output with one worker as with two.

The facts: every file's text and words (the filter of the caller, definer and FLY702
questions) are built once, in the main process, and inherited by the workers; with more
than one worker, the module calls and top-level functions of every file are scanned once
(each file by one worker) before checking. ``--timings`` reports both on stderr.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# FLY402: a module-level waitcnt constant is dead unless another project file reads it.
SHIM = "_LGKMCNT_0_ONLY = 0xC07F\n_VMCNT_0_ONLY = 0x3F70\n"
READER = "from kernels.shim import _LGKMCNT_0_ONLY\nprint(_LGKMCNT_0_ONLY)\n"
# FLY702: a second `_run_compiled` in the workspace.
TENSOR_SHIM = "def _run_compiled(exe, *args):\n    return exe(*args)\n"
MOE = "def _run_compiled(exe, args):\n    return exe(*args)\n"
# Module-parameter callers: helpers.reduce gets its dialect module from kern.py.
HELPERS = "def reduce(m, a, b):\n    return m.arith.maximumf(a, b)\n"
KERNEL = "import flydsl.expr as fx\nfrom kernels.helpers import reduce\n\n\ndef k(a, b):\n    return reduce(fx, a, b)\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    package = tmp_path / "kernels"
    package.mkdir()
    files = {
        "__init__.py": "",
        "shim.py": SHIM,
        "reader.py": READER,
        "tensor_shim.py": TENSOR_SHIM,
        "moe.py": MOE,
        "helpers.py": HELPERS,
        "kern.py": KERNEL,
    }
    for name, text in files.items():
        (package / name).write_text(text)
    return tmp_path


def check(project: Path, jobs: int) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "FLYDSL_GPU_ARCH"}
    result = subprocess.run(
        [sys.executable, "-m", "flydsl_ls", "check", "--no-cache", "--output-format", "json", "--timings", f"-j{jobs}", "kernels"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        env={**environment, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result


def findings(result: subprocess.CompletedProcess) -> set[tuple[str, str, int]]:
    return {(Path(f["filename"]).name, f["code"], f["location"]["row"]) for f in json.loads(result.stdout)}


def timings(result: subprocess.CompletedProcess) -> list[str]:
    return [line.removeprefix("timings: ") for line in result.stderr.splitlines() if line.startswith("timings: ")]


def test_one_worker_and_two_give_the_same_cross_file_findings(project):
    serial, parallel = check(project, 1), check(project, 2)
    assert serial.stdout == parallel.stdout
    found = findings(serial)
    assert ("shim.py", "FLY402", 2) in found  # _VMCNT_0_ONLY: nobody reads it
    assert ("shim.py", "FLY402", 1) not in found  # _LGKMCNT_0_ONLY: reader.py does
    assert ("moe.py", "FLY702", 1) in found and ("tensor_shim.py", "FLY702", 1) not in found
    assert any(name == "helpers.py" and code == "FLY301" for name, code, _ in found)  # fx from kern.py


@pytest.mark.parametrize("jobs", [1, 2])
def test_workspace_facts_are_built_once_per_run(project, jobs):
    lines = timings(check(project, jobs))
    assert "workspace facts: built 1 time(s) for the run, 7 files" in "\n".join(lines)
    assert "workspace facts: built 0 more time(s) in the workers" in lines
    workers = [line for line in lines if line.startswith("worker ")]
    assert workers and sum(int(re.search(r": (\d+) files", line).group(1)) for line in workers) == 7


def test_two_workers_scan_each_file_once(project):
    lines = timings(check(project, 2))
    assert any(line.startswith("module calls: scanned once for the run, 7 files (1 pass modules)") for line in lines)
    # Only kern.py passes a module: no worker builds the model of a file it neither checks
    # nor asks about. Four questions cross files (kern.py imports helpers, helpers' caller is
    # kern.py, reader.py imports shim, shim's constant is read by reader.py); how many of them
    # land on the other worker depends on which worker takes which file (9 or 10 were seen).
    built = sum(int(re.search(r"(\d+) module models built", line).group(1)) for line in lines if line.startswith("worker "))
    assert built <= 7 + 4


def _queue_and_worker(folder: Path, texts: dict[str, str]):
    """The run queue of ``texts`` (name -> text, written to ``folder``), largest first as a
    run orders them, and the index of a worker taking from it; and the paths."""
    import multiprocessing

    from flydsl_ls.analysis.model.project import ProjectIndex
    from flydsl_ls.config import Settings
    from flydsl_ls.runner import FileJob, _Queue

    paths = []
    for name, text in texts.items():
        (folder / name).write_text(text)
        paths.append(folder / name)
    jobs = [FileJob(path, Settings()) for path in paths]
    order = sorted(range(len(jobs)), key=lambda i: -paths[i].stat().st_size)
    queue = _Queue(jobs, order, multiprocessing.get_context(), ProjectIndex(files=paths).workspace_facts())
    worker = ProjectIndex(files=paths)
    worker.keep_trees = True
    return queue, worker, paths


def test_a_worker_takes_the_largest_file_it_parsed_already_else_the_largest(tmp_path):
    sizes = (("small.py", 10), ("large.py", 300), ("middle.py", 100), ("held.py", 50))
    queue, worker, paths = _queue_and_worker(tmp_path, {name: "x = 1\n" * size for name, size in sizes})
    worker.model_of(paths[3].resolve())  # held.py, read for another file's resolution
    worker.trees[paths[0].resolve()] = None  # small.py, kept by the scan
    assert [queue.take(worker) for _ in paths] == [3, 0, 1, 2]  # held, small (kept), then large, middle
    assert queue.take(worker) is None


def test_a_worker_takes_next_the_largest_file_naming_a_large_module_it_parsed(tmp_path):
    """The importers of a large module go to the worker that parsed it (for the first of
    them): the other worker would parse it again for the same names."""
    from flydsl_ls.runner import _SHARED_MODULE_CHARACTERS

    texts = {
        "common.py": "x = 1\n" * (_SHARED_MODULE_CHARACTERS // 6 + 1),  # large
        "helpers.py": "y = 2\n" * 500,  # small: parsed again costs little
        "big.py": "z = 3\n" * 400,
        "user.py": "from common import x\n" + "a = x\n" * 100,
        "user_of_helpers.py": "from helpers import y\n" + "b = y\n" * 200,
    }
    queue, worker, paths = _queue_and_worker(tmp_path, texts)
    taken = queue.take(worker)
    assert paths[taken].name == "common.py"  # the largest
    worker.model_of(paths[taken].resolve())
    worker.model_of(paths[1].resolve())  # helpers.py, read for someone's resolution
    assert [paths[queue.take(worker)].name for _ in range(4)] == ["helpers.py", "user.py", "big.py", "user_of_helpers.py"]


@pytest.mark.parametrize("workers", [1, 2])
def test_the_collector_is_off_while_a_run_builds_and_reads_and_on_after(project, monkeypatch, workers):
    """The main process holds the run's facts and results until it ends: collecting while
    they are built and read (the workers' results) was half its time in a `-j2` run."""
    import gc

    from flydsl_ls.analysis.model.project import ProjectIndex
    from flydsl_ls.config import Settings
    from flydsl_ls.runner import FileJob, run_jobs

    seen = []
    facts = ProjectIndex.workspace_facts

    def workspace_facts(index):
        seen.append(gc.isenabled())
        return facts(index)

    monkeypatch.setattr(ProjectIndex, "workspace_facts", workspace_facts)
    paths = sorted((project / "kernels").glob("*.py"))
    assert gc.isenabled()
    results = run_jobs([FileJob(path, Settings()) for path in paths], paths, workers)
    assert seen == [False]
    assert gc.isenabled()
    assert [r.error for r in results] == [None] * len(paths)
    assert any(d.code == "FLY402" for r in results for d in r.diagnostics)


def test_with_several_workers_this_process_is_one_of_them(project):
    """A `-j2` run forks one worker and checks files here too: no process more to start,
    and no result of this one's pickled and read back. The findings are those of `-j1`."""
    from flydsl_ls.config import Settings
    from flydsl_ls.runner import FileJob, run_jobs

    paths = sorted((project / "kernels").glob("*.py"))
    jobs = [FileJob(path, Settings()) for path in paths]
    alone, together = run_jobs(jobs, paths, 1), run_jobs(jobs, paths, 2)
    assert os.getpid() in {r.timing.worker for r in together}
    assert [r.diagnostics for r in together] == [r.diagnostics for r in alone]
    assert any(r.diagnostics for r in together)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_run_that_the_caller_outlives_frees_the_models_it_built_here(project, monkeypatch, workers):
    """`--watch` and in-process callers run again and again: this process's models go at
    the run's end (frozen with the rest, they stayed for good: 50 MB a `-j2` run and 128 MB
    a `-j1` one over 60 of FlyDSL's kernel files)."""
    import weakref

    from flydsl_ls import runner
    from flydsl_ls.analysis.model.project import ProjectIndex
    from flydsl_ls.config import Settings

    built = []
    model_of = ProjectIndex.model_of

    def recorded(index, path):
        model = model_of(index, path)
        if model is not None:
            built.append(weakref.ref(model))
        return model

    monkeypatch.setattr(ProjectIndex, "model_of", recorded)
    paths = sorted((project / "kernels").glob("*.py"))
    runner.run_jobs([runner.FileJob(path, Settings()) for path in paths], paths, workers)
    assert built and runner._project is None
    assert [ref for ref in built if ref() is not None] == []


def test_a_one_shot_check_runs_without_the_collector_and_an_in_process_one_restores_it(project):
    """The command's process ends without freeing what it built (``_exit_now``): collecting
    meanwhile only traverses what lives to the end. Called in process (``main`` without
    ``exit_at_once``), the caller's collector is left as it was."""
    probe = (
        "import gc, sys\n"
        "import flydsl_ls.cli as cli\n"
        "ending = cli._exit_now\n"
        "cli._exit_now = lambda code: (print('collecting', gc.isenabled()), ending(code))\n"
        "cli.main(['check', '--no-cache', 'kernels'], exit_at_once=True)\n"
    )
    environment = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", probe], cwd=project, capture_output=True, text=True, timeout=300, env=environment, check=False)
    assert done.stdout.splitlines()[-1] == "collecting False", done.stdout + done.stderr
    import gc

    from flydsl_ls.cli import main

    assert gc.isenabled()
    main(["check", "--no-cache", "-j1", str(project / "kernels")])
    assert gc.isenabled()
