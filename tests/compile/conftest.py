"""Fixtures for the compile engine tests: one warm worker for the whole session.

Whether they can run is decided in one place, tests/compiler.py (skip without the compile
extra, fail under FLYDSL_REQUIRE_COMPILER=1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.compiler import require

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "compile"
VECTOR_ADD = EXAMPLES / "vector_add.py"
MFMA_GEMM = EXAMPLES / "mfma_gemm.py"


@pytest.fixture(scope="session")
def compile_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("flydsl-ls-cache")


@pytest.fixture(scope="session")
def service(compile_cache):
    require("the compile worker")
    from flydsl_ls.compile import CompileService

    svc = CompileService(cache=compile_cache, default_timeout=120.0)
    svc.start()
    yield svc
    svc.close()


@pytest.fixture(scope="session")
def compiled(service):
    """(file name, example, arch) -> CompileResult, each compiled once per session."""
    cache: dict = {}

    def get(path: Path, example: str | None, arch: str | None):
        key = (path, example, arch)
        if key not in cache:
            cache[key] = service.compile(path, example, arch)
        return cache[key]

    return get
