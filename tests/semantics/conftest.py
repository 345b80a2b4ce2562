"""One warm compile worker for the whole semantics suite (the compile tests' fixture).
These tests compile with FlyDSL: they use ``tests.compiler.needs_compiler``."""

from __future__ import annotations

from tests.compile.conftest import compile_cache, service  # noqa: F401  (fixtures)
