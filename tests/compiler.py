"""Whether the tests that compile kernels can run here: the one gate they all use.

They need the ``compile`` extra (torch, numpy, flydsl, and ziglang unless ROCm has an
``ld.lld``), checked exactly as ``flydsl-ls compile`` checks it (``find_toolchain``). Without
it they skip, naming what is missing and the install command; under
``FLYDSL_REQUIRE_COMPILER=1`` (``.ci/run`` sets it after installing the extra) they fail
instead, as ``FLYDSL_REQUIRE_EDITORS=1`` does for the editor tests.

- ``needs_compiler``: a mark (per test, or ``pytestmark``) for tests that compile;
- ``require(what)``: the same check, called where a mark cannot go (a session fixture, a
  module's import, ``module_level=True``);
- ``available(what)``: for tests that check either the compile or the "unavailable" answer
  (the editor end-to-end tests): True or False, but fails when required and missing;
- ``python_without(modules, where)``: an interpreter with everything this one has except
  ``modules``, to test what a compile says when, say, numpy is not installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from flydsl_ls.compile.toolchain import find_toolchain, install_everything

REQUIRE_ENV = "FLYDSL_REQUIRE_COMPILER"
TOOLCHAIN = find_toolchain(create=False)
MISSING: list[str] = list(TOOLCHAIN.missing)  # e.g. ["numpy"] or ["torch", "flydsl", "ld.lld"]


def required() -> bool:
    return os.environ.get(REQUIRE_ENV) == "1"


def _fail(what: str) -> None:
    pytest.fail(f"{what} cannot run, but {REQUIRE_ENV}=1:\n{TOOLCHAIN.problem()}", pytrace=False)


def require(what: str = "this test", *, module_level: bool = False) -> None:
    """Return when compiles can run; else skip, or fail under ``FLYDSL_REQUIRE_COMPILER=1``."""
    if not MISSING:
        return
    if required():
        _fail(what)
    pytest.skip(f"{what} needs {', '.join(MISSING)}: {install_everything()}", allow_module_level=module_level)


def available(what: str) -> bool:
    """Can compiles run? (Fails instead of answering False under ``FLYDSL_REQUIRE_COMPILER=1``.)"""
    if MISSING and required():
        _fail(what)
    return not MISSING


# The fixture is `compiler` in tests/conftest.py, which calls require().
needs_compiler = pytest.mark.usefixtures("compiler")


def python_without(modules: tuple[str, ...], where: Path) -> str:
    """The interpreter of a new virtual environment at ``where`` holding this interpreter's
    installed packages (symlinked) except ``modules`` (their packages, ``.libs`` and
    ``dist-info``): in it those modules are really not installed; nothing is hooked or mocked.
    """
    venv.create(where, with_pip=False, symlinks=True)
    python = where / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()
    target = Path(purelib)
    target.mkdir(parents=True, exist_ok=True)

    def left_out(name: str) -> bool:
        stem = name.split("-")[0] if name.endswith((".dist-info", ".egg-info")) else name
        return any(stem in (m, f"{m}.py", f"{m}.libs") for m in modules)

    for folder in dict.fromkeys(p for p in sys.path if p.endswith(("site-packages", "dist-packages"))):
        if not Path(folder).is_dir():
            continue
        for entry in Path(folder).iterdir():
            dest = target / entry.name
            if not left_out(entry.name) and not (dest.exists() or dest.is_symlink()):
                dest.symlink_to(entry)
    return str(python)
