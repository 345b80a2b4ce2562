"""Fixtures for the compile engine tests: one warm worker for the whole session."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "compile"
VECTOR_ADD = EXAMPLES / "vector_add.py"
MFMA_GEMM = EXAMPLES / "mfma_gemm.py"

_MISSING = [name for name in ("torch", "flydsl", "ziglang") if importlib.util.find_spec(name) is None]
needs_flydsl = pytest.mark.skipif(
    bool(_MISSING),
    reason=f"compile tests need {', '.join(_MISSING)}: pip install -e '.[compile]' (torch==2.13.0 CPU build)",
)


@pytest.fixture(scope="session")
def compile_cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("flydsl-ls-cache")


@pytest.fixture(scope="session")
def service(compile_cache):
    if _MISSING:
        pytest.skip(f"needs {', '.join(_MISSING)}")
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
