"""ruff's command-line conventions, run as a user runs them (a subprocess): standard input,
`# noqa`, rule and path selection, report options, `--add-noqa`, `--watch`, Ctrl-C."""

from __future__ import annotations

import ast
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.test_cli import CLEAN, LEGACY, ROOT, check_json, codes, run, write_config, write_project

ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def run_stdin(text: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, "-m", "flydsl_ls", "check", *args],
        input=text, cwd=cwd, capture_output=True, text=True, timeout=120, env=ENV,
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path)


# --- standard input ------------------------------------------------------------------


def test_stdin_is_checked_as_the_named_file(project):
    (project / "gen").mkdir()
    write_config(project, '[tool.flydsl-ls.per-file-ignores]\n"gen/*" = ["FLY1"]\n')
    named = run_stdin(LEGACY, "--stdin-filename", "legacy.py", cwd=project)
    assert named.returncode == 1
    lines = named.stdout.splitlines()
    assert [line.split(" ")[:2] for line in lines[:3]] == [
        ["legacy.py:4:8:", "FLY101"], ["legacy.py:5:8:", "FLY104"], ["legacy.py:6:5:", "FLY901"]
    ]
    # Its settings are the named file's: per-file-ignores of gen/ apply, and the name is printed.
    ignored = run_stdin(LEGACY, "-", "--stdin-filename", "gen/k.py", "--output-format", "json", cwd=project)
    assert [(i["code"], Path(i["filename"])) for i in json.loads(ignored.stdout)] == [("FLY901", project / "gen" / "k.py")]
    # `-` alone: the name is `-`, the settings the current folder's.
    plain = run_stdin(LEGACY, "-", cwd=project)
    assert plain.stdout.splitlines()[0].startswith("-:4:8: FLY101 [*] ")
    assert plain.returncode == 1


def test_stdin_fix_writes_the_fixed_source_to_stdout(project):
    result = run_stdin(LEGACY, "--fix", "--stdin-filename", "legacy.py", cwd=project)
    fixed = LEGACY.replace("ArithValue(tid)", "tid").replace("fx.Int32(fx.Int32(3))", "fx.Int32(3)")
    fixed = fixed.replace("from flydsl.expr.arith import ArithValue\n", "")
    assert result.stdout == fixed  # the whole source, nothing else
    assert result.stderr.splitlines()[0].startswith("legacy.py:5:5: FLY901 ")
    assert "Found 3 errors (2 fixed, 1 remaining)." in result.stderr
    assert result.returncode == 1
    # Nothing to fix: the source comes back unchanged.
    assert run_stdin(CLEAN, "-", "--fix", cwd=project).stdout == CLEAN


def test_stdin_filename_excluded_by_the_settings(project):
    write_config(project, 'exclude = ["vendored"]\n')
    result = run_stdin(LEGACY, "--stdin-filename", "vendored/k.py", cwd=project)
    assert (result.returncode, result.stdout) == (0, "")
    assert "No Python files found" in result.stderr
    # With --fix, an excluded file comes back as it was: an editor must not lose its buffer.
    assert run_stdin(LEGACY, "--fix", "--stdin-filename", "vendored/k.py", cwd=project).stdout == LEGACY


# --- noqa ------------------------------------------------------------------------------


def test_noqa_comments_suppress_like_flydsl_ignore(project):
    body = LEGACY.replace("ArithValue(tid) % 64\n", "ArithValue(tid) % 64  # noqa: FLY101\n")
    body = body.replace("fx.Int32(fx.Int32(3))\n", "fx.Int32(fx.Int32(3))  # NOQA:E501,FLY104 - keep it\n")
    body = body.replace("fx.get(t, 0)\n", "fx.get(t, 0)  # noqa\n")
    (project / "legacy.py").write_text(body, encoding="utf-8")
    assert check_json("legacy.py", cwd=project)[1] == []
    # Another linter's codes, a file-level `# ruff: noqa` and text in a string suppress nothing.
    other = LEGACY.replace("ArithValue(tid) % 64\n", "ArithValue(tid) % 64  # noqa: E501\n")
    other = other.replace("fx.Int32(fx.Int32(3))\n", "fx.Int32(fx.Int32(3))  # ruff: noqa: FLY104\n")
    other = other.replace("fx.get(t, 0)\n", 'fx.get(t, "# noqa")\n')
    (project / "legacy.py").write_text(other, encoding="utf-8")
    assert [c for _, c, _ in codes(check_json("legacy.py", cwd=project)[1])] == ["FLY101", "FLY104", "FLY901"]


def test_a_finding_over_several_lines_is_suppressed_on_its_first_line(project):
    first = "import flydsl.expr as fx\nw = fx.Int32(  # noqa: FLY104\n    fx.Int32(3))\n"
    last = "import flydsl.expr as fx\nw = fx.Int32(\n    fx.Int32(3))  # noqa: FLY104\n"
    (project / "first.py").write_text(first, encoding="utf-8")
    (project / "last.py").write_text(last, encoding="utf-8")
    _, items = check_json("first.py", "last.py", "--extend-select", "FLY001", cwd=project)
    assert codes(items) == [("last.py", "FLY104", 2), ("last.py", "FLY001", 3)]


# --- unused suppressions (FLY001) -------------------------------------------------------


def test_unused_suppressions_are_opt_in_and_judged_against_the_selected_rules(project):
    body = LEGACY.replace("ArithValue(tid) % 64\n", "ArithValue(tid) % 64  # noqa: FLY101, FLY104\n")
    body = body.replace("fx.get(t, 0)\n", "fx.get(t, 0)  # flydsl: ignore[FLY999, FLY901]\n")
    (project / "legacy.py").write_text(body, encoding="utf-8")
    assert "FLY001" not in run("check", "legacy.py", cwd=project).stdout  # not a default rule
    _, items = check_json("--extend-select", "FLY001", "legacy.py", cwd=project)
    unused = [(i["location"]["row"], i["message"]) for i in items if i["code"] == "FLY001"]
    assert unused == [
        (4, "Unused `noqa` directive (unused: `FLY104`)"),
        (6, "Unused `flydsl: ignore` directive (unknown: `FLY999`)"),
    ]
    # FLY104 not selected: its code is not judged (nothing says whether it would fire).
    _, only = check_json("--select", "FLY101,FLY001", "legacy.py", cwd=project)
    assert [i["message"] for i in only if i["code"] == "FLY001"] == ["Unused `flydsl: ignore` directive (unknown: `FLY999`)"]
    # The same through pyproject, and the safe fix drops what is unused.
    write_config(project, 'extend-select = ["FLY001"]\n')
    result = run("check", "--fix", "--select", "ALL", "legacy.py", cwd=project)
    text = (project / "legacy.py").read_text(encoding="utf-8")
    assert "lane = ArithValue(tid) % 64  # noqa: FLY101\n" in text  # the code still in use stays
    assert "wrap = fx.Int32(3)\n" in text
    assert "fx.get(t, 0)  # flydsl: ignore[FLY901]\n" in text
    assert result.returncode == 0, result.stdout


# --- selection and paths ---------------------------------------------------------------------


def test_extend_select_adds_to_the_selection(project):
    _, items = check_json("--select", "FLY101", "--extend-select", "FLY9", "legacy.py", cwd=project)
    assert [c for _, c, _ in codes(items)] == ["FLY101", "FLY901"]
    # --select on the command line replaces pyproject's select and extend-select.
    write_config(project, 'select = ["FLY104"]\nextend-select = ["FLY9"]\n')
    assert [c for _, c, _ in codes(check_json("legacy.py", cwd=project)[1])] == ["FLY104", "FLY901"]
    assert [c for _, c, _ in codes(check_json("--select", "FLY101", "legacy.py", cwd=project)[1])] == ["FLY101"]
    assert run("check", "--extend-select", "FLY77", "legacy.py", cwd=project).returncode == 2


def test_exclude_replaces_and_extend_exclude_adds(project):
    for folder in (".venv", "third_party", "gen"):
        (project / folder).mkdir()
        (project / folder / "k.py").write_text(LEGACY, encoding="utf-8")
    write_config(project, 'exclude = ["third_party"]\nextend-exclude = ["gen"]\n')

    def folders(*args: str) -> set[str]:
        _, items = check_json(*args, ".", cwd=project)
        return {Path(i["filename"]).parent.name for i in items} - {project.name}

    assert folders() == set()  # the defaults (.venv), exclude and extend-exclude
    # --exclude replaces the defaults and pyproject's exclude; extend-exclude still applies.
    assert folders("--exclude", "legacy.py") == {".venv", "third_party"}
    assert check_json("--extend-exclude", "legacy.py", ".", cwd=project)[1] == []  # on top of all three
    assert run("check", "--extend-exclude", "*.py", ".", cwd=project).stderr == (
        "warning: No Python files found under the given path(s)\n"
    )


# --- report options -------------------------------------------------------------------------


def test_output_file_holds_the_report(project):
    result = run("check", "--output-file", "report.txt", "legacy.py", cwd=project)
    assert (result.returncode, result.stdout) == (1, "")
    report = (project / "report.txt").read_text(encoding="utf-8")
    assert report.startswith("legacy.py:4:8: FLY101 [*] ") and "Found 3 errors in 1 file checked." in report
    run("check", "--output-format", "json", "--output-file", "report.json", "legacy.py", cwd=project)
    assert len(json.loads((project / "report.json").read_text(encoding="utf-8"))) == 3


def test_show_fixes(project):
    shown = run("check", "--show-fixes", "legacy.py", cwd=project)
    lines = shown.stdout.splitlines()
    assert lines[1] == "  fix (safe): Remove the ArithValue wrapper"
    assert lines[3] == "  fix (safe): Remove the redundant wrap"
    assert lines[4].startswith("legacy.py:6:5: FLY901 ") and not lines[5].startswith("  fix")
    fixed = run("check", "--fix", "--show-fixes", "legacy.py", cwd=project)
    assert "\nFixed 2 errors:\n- legacy.py:\n    1 × FLY101 (arith-value-wrapper)\n    1 × FLY104 (redundant-wrap)\n\n" in fixed.stdout


@pytest.mark.parametrize("fmt", ["concise", "json", "github", "sarif"])
def test_statistics_in_every_format(project, fmt):
    (project / "more.py").write_text(LEGACY, encoding="utf-8")
    result = run("check", "--statistics", "--output-format", fmt, ".", cwd=project)
    assert result.returncode == 1
    if fmt == "json":
        assert json.loads(result.stdout) == [
            {"code": "FLY101", "name": "arith-value-wrapper", "count": 2, "fixable": True},
            {"code": "FLY104", "name": "redundant-wrap", "count": 2, "fixable": True},
            {"code": "FLY901", "name": "deprecated-api", "count": 2, "fixable": False},
        ]
        return
    assert result.stdout.splitlines()[:3] == [
        "2\tFLY101\t[*] arith-value-wrapper",
        "2\tFLY104\t[*] redundant-wrap",
        "2\tFLY901\t[ ] deprecated-api",
    ]
    assert "legacy.py" not in result.stdout


# --- add-noqa ------------------------------------------------------------------------------------


def test_add_noqa(project):
    body = LEGACY.replace("fx.Int32(fx.Int32(3))\n", "fx.Int32(fx.Int32(3))  # noqa: E501\n")
    body += 'w = fx.get(t, """x\n""")\n'  # a finding on a line ending inside a string
    (project / "legacy.py").write_text(body, encoding="utf-8")
    result = run("check", "--add-noqa", ".", cwd=project)
    assert result.returncode == 0
    assert "Added 3 noqa directives." in result.stderr
    assert "legacy.py:7: no `# noqa` added" in result.stderr
    text = (project / "legacy.py").read_text(encoding="utf-8")
    assert "lane = ArithValue(tid) % 64  # noqa: FLY101\n" in text
    assert "wrap = fx.Int32(fx.Int32(3))  # noqa: E501, FLY104\n" in text
    assert "v = fx.get(t, 0)  # noqa: FLY901\n" in text
    ast.parse(text)
    _, items = check_json("--extend-select", "FLY001", ".", cwd=project)
    assert codes(items) == [("legacy.py", "FLY901", 7)]  # only the one that could not take a comment
    again = run("check", "--add-noqa", ".", cwd=project)
    assert "Added 0 noqa directives." in again.stderr


# --- watch, Ctrl-C -------------------------------------------------------------------------------


class _Lines:
    """A process's output lines, read on a thread: a test waits for a line with a deadline
    instead of blocking on ``readline`` when the process stays silent."""

    def __init__(self, stream):
        self.queue: queue.Queue[str] = queue.Queue()
        threading.Thread(target=lambda: [self.queue.put(line) for line in stream], daemon=True).start()

    def until(self, marker: str, deadline: float) -> list[str]:
        lines: list[str] = []
        while marker not in "".join(lines[-1:]):
            try:
                lines.append(self.queue.get(timeout=max(deadline - time.monotonic(), 0.01)))
            except queue.Empty:
                raise AssertionError(f"no {marker!r} in {lines}") from None
        return lines


def test_watch_checks_again_when_a_file_changes(project):
    (project / "legacy.py").unlink()
    process = subprocess.Popen(
        [sys.executable, "-m", "flydsl_ls", "check", "--watch", "."],
        cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**ENV, "FLYDSL_LS_WATCH_INTERVAL": "0.1"},
    )
    try:
        deadline, lines = time.monotonic() + 60, _Lines(process.stdout)
        first = lines.until("Watching for file changes.", deadline)
        assert any("All checks passed! (1 file checked)" in line for line in first)
        (project / "clean.py").write_text(LEGACY, encoding="utf-8")
        second = lines.until("Watching for file changes.", deadline)
        assert "File change detected..." in second[0]
        assert any(line.startswith("clean.py:4:8: FLY101 ") for line in second)
        assert any("Found 3 errors in 1 file checked." in line for line in second)
    finally:
        process.terminate()
        _, err = process.communicate(timeout=30)
    assert "Traceback" not in err


def test_ctrl_c_stops_a_parallel_check_at_once(tmp_path):
    """The interrupt a terminal sends (to the whole process group) stops the run the first
    time: exit 130, no traceback from the parent or the workers, no worker left."""
    for i in range(120):
        (tmp_path / f"k{i}.py").write_text(LEGACY * 40, encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "flydsl_ls", "check", "--no-cache", "-j", "2", "."],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV,
        start_new_session=True,  # its own group, as a shell job
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a shell may leave it ignored
    )
    workers: list[str] = []  # one process forked: the run's own is the other worker
    deadline = time.monotonic() + 60
    while not workers and time.monotonic() < deadline:
        time.sleep(0.2)
        found = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True)
        workers = found.stdout.split()
    assert len(workers) == 1, "the worker never started"
    time.sleep(0.5)
    os.killpg(process.pid, signal.SIGINT)
    stopped = time.monotonic()
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130
    assert time.monotonic() - stopped < 10
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert "Found" not in out  # stopped before the report
    time.sleep(0.5)
    assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()]
