"""One Ctrl-C stops the test run, also during an async test.

pytest-asyncio's asyncio.Runner answers SIGINT by cancelling the test's task, and pytest-lsp
reports a cancelled request as an error of the test (the inner test below does what it
does), so the run used to go on to the next test. tests/conftest.py stops it there.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

INNER = '''
import asyncio
from pathlib import Path


async def test_waits():
    Path("running").write_text("")
    try:
        await asyncio.sleep(120)
    except asyncio.CancelledError as error:
        raise RuntimeError("request cancelled") from error  # as pytest-lsp reports it


def test_after():
    Path("after").write_text("")
'''


def test_one_sigint_ends_the_run(tmp_path: Path) -> None:
    (tmp_path / "test_inner.py").write_text(INNER, encoding="utf-8")
    # Python keeps SIGINT ignored when it starts so (a child of a shell without job control):
    # the inner run takes Python's own handler back first.
    start = "import signal, runpy; signal.signal(signal.SIGINT, signal.default_int_handler); runpy.run_module('pytest', run_name='__main__')"
    command = [sys.executable, "-c", start, "-q", "-p", "tests.conftest", "-p", "no:cacheprovider",
               "-o", "asyncio_mode=auto", "-o", "asyncio_default_fixture_loop_scope=function", "test_inner.py"]  # fmt: skip
    run = subprocess.Popen(
        command,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (tmp_path / "running").exists():
        assert run.poll() is None and time.monotonic() < deadline, run.communicate()[0]
        time.sleep(0.05)
    run.send_signal(signal.SIGINT)
    output = run.communicate(timeout=60)[0]
    assert run.returncode == pytest.ExitCode.INTERRUPTED, output
    assert not (tmp_path / "after").exists(), output

