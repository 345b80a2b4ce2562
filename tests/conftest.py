"""Fixtures shared by every test folder."""

from __future__ import annotations

import asyncio

import pytest

from tests.compiler import require


@pytest.fixture
def compiler(request) -> None:
    """Used through ``tests.compiler.needs_compiler``: skip (or fail when required) without
    the compile extra."""
    require(f"{request.node.name} (compiles kernels)")


# Ctrl-C during an async test: pytest-asyncio runs the test in an asyncio.Runner, whose
# SIGINT handler cancels the test's task; pytest-lsp reports the cancellation as a failed
# test and the run went on, so Ctrl-C took two presses. The test still ends that way (its
# server shut down by its fixtures), then the run stops, as after any Ctrl-C.
_runner_on_sigint = asyncio.Runner._on_sigint
_interrupted = False


def _on_sigint(runner, signum, frame, main_task):
    global _interrupted
    _interrupted = True
    return _runner_on_sigint(runner, signum, frame, main_task)


asyncio.Runner._on_sigint = _on_sigint


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    result = yield
    if _interrupted:
        raise KeyboardInterrupt
    return result
