"""Fixtures shared by every test folder."""

from __future__ import annotations

import pytest

from tests.compiler import require


@pytest.fixture
def compiler(request) -> None:
    """Used through ``tests.compiler.needs_compiler``: skip (or fail when required) without
    the compile extra."""
    require(f"{request.node.name} (compiles kernels)")
