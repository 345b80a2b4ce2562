"""Mapping worker errors to the user's line; naming a crash."""

from __future__ import annotations

import signal

from flydsl_ls.compile.errors import from_crash, from_worker, locate


def test_mlir_location_wins_over_traceback():
    error = {
        "stage": "compile",
        "type": "MLIRError",
        "message": 'verification failed\nerror: loc("/src/k.py":42:5): operand type mismatch',
        "frames": [{"file": "/src/k.py", "line": 99, "column": 0, "function": "f"}],
    }
    assert locate(error, "/src/k.py", "/src/k.py") == (42, 4, "mlir")
    made = from_worker(error, "/src/k.py", "/src/k.py")
    assert (made.kind, made.file, made.line, made.column) == ("mlir", "/src/k.py", 42, 4)
    # in a line-info compile the column may be a call chain's number: no column then
    numbered = {**error, "message": 'error: loc(callsite("/src/k.py":42:16390 at "/src/k.py":7:4)): mismatch'}
    assert locate(numbered, "/src/k.py", "/src/k.py") == (42, None, "mlir")


def test_innermost_frame_in_the_file():
    frames = [
        {"file": "/tmp/copy/k.py", "line": 10, "column": 4, "function": "jit"},
        {"file": "/site-packages/flydsl/x.py", "line": 5, "column": 0, "function": "emit"},
        {"file": "/tmp/copy/k.py", "line": 20, "column": 8, "function": "kernel"},
        {"file": "/site-packages/flydsl/y.py", "line": 7, "column": 0, "function": "op"},
    ]
    error = {"stage": "compile", "type": "TypeError", "message": "bad", "frames": frames,
             "traceback": 'File "/tmp/copy/k.py", line 20'}
    made = from_worker(error, "/tmp/copy/k.py", "/src/k.py")  # compiled from an unsaved copy
    assert (made.file, made.line, made.column) == ("/src/k.py", 20, 8)
    assert made.detail == 'File "/src/k.py", line 20'


def test_no_line():
    made = from_worker({"stage": "compile", "type": "RuntimeError", "message": "x", "frames": []}, "/a.py", "/a.py")
    assert made.line is None and made.file is None and made.location() == ""


def test_crash_reason_from_log():
    log = "[flydsl.compile] dump ...\nLLVM ERROR: Cannot select: intrinsic %llvm.amdgcn.mfma\n"
    made = from_crash(-signal.SIGABRT, log, "gfx942")
    assert made.message.startswith("the compiler process crashed (SIGABRT): LLVM ERROR: Cannot select")
    made = from_crash(-signal.SIGABRT, "", "gfx123")
    assert "Is `gfx123` a valid AMD GPU arch" in made.message
    assert "exit code 3" in from_crash(3, "", "gfx942").message
