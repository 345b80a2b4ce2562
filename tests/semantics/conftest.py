"""One warm compile worker for the whole semantics suite (the compile tests' fixture)."""

from __future__ import annotations

import pytest

from tests.compile.conftest import _MISSING, compile_cache, service  # noqa: F401  (fixtures)

needs_compiler = pytest.mark.skipif(
    bool(_MISSING),
    reason=f"semantics tests compile with FlyDSL and need {', '.join(_MISSING)}: "
    "pip install torch==2.13.0 && pip install -e '.[test,compile]'",
)
