"""Running recursive tree code on input nested deeper than Python's recursion limit.

The parser, the semantic model and the rules walk syntax trees recursively. A valid file
can be deep (a 500-term flat sum is a left-nested chain of 500 `BinOp`s), and its findings
must not be lost to `RecursionError`. Such files are rare, so the normal path keeps the
normal limit; only a walk that ran out of depth is run again here.

The recursion limit is one setting for the whole process: raised while another thread
recurses on a small C stack, that thread can overflow it and kill the process instead of
getting a `RecursionError`. A program with threads (the server) therefore calls
``run_with_deep_stacks`` once at start: every thread then has a large stack and the limit is
raised once, before any of them runs, and never changed again.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

R = TypeVar("R")

_STACK_BYTES = 512 * 1024 * 1024  # virtual: only the pages a deep walk touches are used
_RECURSION_LIMIT = 200_000
_limit_lock = threading.Lock()
_everywhere = False  # run_with_deep_stacks set the process up: every thread is deep


def run_with_deep_stacks(main: Callable[[], R]) -> R:
    """Run ``main`` (a whole program) on a thread with a large stack, after raising the
    recursion limit and the stack size of every thread started later; called before any
    other thread starts. Ctrl-C still ends the program (the thread is a daemon)."""
    global _everywhere
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = main()
        except BaseException as error:  # re-raised in the caller
            outcome["error"] = error

    threading.stack_size(_STACK_BYTES)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), _RECURSION_LIMIT))
    _everywhere = True
    program = threading.Thread(target=run, name="flydsl-ls-main", daemon=True)
    program.start()
    program.join()
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]


def on_deep_stack(fn: Callable[[], R]) -> R:
    """``fn()`` on a thread with a large C stack and a high recursion limit; its result or
    its exception, as if called here. Under ``run_with_deep_stacks`` every thread is one
    already: ``fn()`` here."""
    if _everywhere:
        return fn()
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = fn()
        except BaseException as error:  # re-raised in the caller
            outcome["error"] = error

    with _limit_lock:  # the stack size and recursion limit are process-wide settings
        previous_size = threading.stack_size(_STACK_BYTES)
        try:
            worker = threading.Thread(target=run, name="flydsl-ls-deep")
        finally:
            threading.stack_size(previous_size)
        previous_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(previous_limit, _RECURSION_LIMIT))
        try:
            worker.start()
            worker.join()
        finally:
            sys.setrecursionlimit(previous_limit)
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]
