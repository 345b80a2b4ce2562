"""A compile that raises, aborts the worker, hangs or is cancelled: reported, and the next works."""

from __future__ import annotations

import threading
import time

from flydsl_ls.compile import Status
from tests.compile.conftest import VECTOR_ADD
from tests.compiler import needs_compiler

pytestmark = needs_compiler

SLEEPY = """\
import time

# flydsl: example
def sleepy(device):
    time.sleep(60)
"""


HOARDERS = {
    "20 GB at once": "# flydsl: example\ndef greedy(device):\n    return bytearray(20 * 2**30)\n",
    "without bound": (
        "# flydsl: example\ndef greedy(device):\n    hoard = []\n    while True:\n"
        "        hoard.append(bytearray(2**28))\n"
    ),
}


def test_an_example_past_the_memory_limit_is_an_error_and_the_worker_serves_on(compile_cache, tmp_path):
    """A worker of its own, allowed 2 GiB: each hoarder gets a MemoryError that says so (not
    the machine's memory, not a dead worker), and a real compile works after it."""
    from flydsl_ls.compile import CompileService

    service = CompileService(cache=compile_cache, default_timeout=120.0, memory_limit=2 * 2**30)
    try:
        for name, text in HOARDERS.items():
            hoarder = tmp_path / "hoarder.py"
            hoarder.write_text(text)
            result = service.compile(hoarder, None, "gfx942")
            assert result.status is Status.ERROR, (name, result.status)
            assert "MemoryError: out of memory: the compile worker may use 2.0 GiB" in result.error.message, name
            assert service.restarts == 0
            _recovers(service)
    finally:
        service.close()


def _recovers(service):
    result = service.compile(VECTOR_ADD, None, "gfx942")
    assert result.status is Status.OK, result.error
    assert result.kernels[0].resources.vgprs > 0


def test_invalid_arch_aborts_worker_then_restarts(service):
    pid = service.worker_pid or service.ping()["pid"]
    restarts = service.restarts
    result = service.compile(VECTOR_ADD, None, "gfx000")
    assert result.status is Status.CRASH
    assert result.error.kind == "crash"
    assert "crashed (SIGABRT)" in result.error.message
    assert "LLVM ERROR" in result.error.message  # the reason, read from the request's log
    assert "restarted" in result.error.message
    assert service.restarts == restarts + 1
    _recovers(service)
    assert service.worker_pid != pid


def test_timeout_kills_and_restarts(service, tmp_path):
    sleepy = tmp_path / "sleepy.py"
    sleepy.write_text(SLEEPY)
    service.ping()  # warm, so the timeout measures the request only
    start = time.monotonic()
    result = service.compile(sleepy, timeout=1.0)
    assert time.monotonic() - start < 15
    assert result.status is Status.TIMEOUT
    assert "timed out after 1 s" in result.error.message and "restarted" in result.error.message
    _recovers(service)


def test_cancel(service, tmp_path):
    sleepy = tmp_path / "sleepy.py"
    sleepy.write_text(SLEEPY)
    service.ping()
    event = threading.Event()
    progress: list[str] = []
    threading.Timer(1.0, event.set).start()
    result = service.compile(sleepy, cancel=event, progress=progress.append)
    assert result.status is Status.CANCELLED
    assert "calling sleepy('cpu')" in progress
    _recovers(service)


def test_service_cancel_method(service, tmp_path):
    sleepy = tmp_path / "sleepy.py"
    sleepy.write_text(SLEEPY)
    service.ping()
    threading.Timer(1.0, service.cancel).start()
    assert service.compile(sleepy).status is Status.CANCELLED
    _recovers(service)


def test_python_error_in_kernel_points_at_its_line(service, tmp_path):
    text = VECTOR_ADD.read_text().replace("reg_b.load())", "undefined_name)")
    line = text.splitlines().index("    reg_c.store(reg_a.load() + undefined_name)") + 1
    bad = tmp_path / "bad_kernel.py"
    bad.write_text(text)
    result = service.compile(bad, None, "gfx942")
    assert result.status is Status.ERROR
    assert result.error.message == "NameError: name 'undefined_name' is not defined"
    assert (result.error.file, result.error.line) == (str(bad), line)
    assert "Traceback" in result.error.detail


def test_error_in_unsaved_source_maps_to_the_file(service):
    """`source=` compiles a buffer's text; the error still points into the file."""
    text = VECTOR_ADD.read_text().replace("tid = fx.thread_idx.x", "tid = fx.no_such_thing")
    line = text.splitlines().index("    tid = fx.no_such_thing") + 1
    result = service.compile(VECTOR_ADD, None, "gfx942", source=text)
    assert result.status is Status.ERROR
    assert "no_such_thing" in result.error.message
    assert (result.error.file, result.error.line) == (str(VECTOR_ADD), line)
    assert str(VECTOR_ADD) in result.error.detail


def test_error_while_importing_the_file(service, tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("import no_such_module_xyz\n\n# flydsl: example\ndef ex(device):\n    pass\n")
    result = service.compile(broken)
    assert result.status is Status.ERROR
    assert result.error.kind == "example"
    assert "No module named 'no_such_module_xyz'" in result.error.message
    assert result.error.line == 1


def test_bad_example_return(service, tmp_path):
    odd = tmp_path / "odd.py"
    odd.write_text("# flydsl: example\ndef ex(device):\n    return 42\n")
    result = service.compile(odd)
    assert result.status is Status.ERROR
    assert "must return (jit_fn, args)" in result.error.message


def test_no_example_does_not_start_anything(service, tmp_path):
    plain = tmp_path / "plain.py"
    plain.write_text("def f(device):\n    pass\n")
    result = service.compile(plain)
    assert result.status is Status.UNAVAILABLE
    assert "flydsl: example" in result.error.message
    missing = service.compile(VECTOR_ADD, "nope")
    assert missing.status is Status.UNAVAILABLE and "examples: small" in missing.error.message
