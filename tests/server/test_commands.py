"""The compile commands and CodeLens over stdio, as Neovim 0.11 and VS Code 1.65 drive them.

One server (and so one warm compile worker) per recorded client for the whole module; each
test looks only at what it caused (messages, shown documents, progress, pushes after its
start). Compiles need the compile extra: without it those tests skip (fail under
FLYDSL_REQUIRE_COMPILER=1), see tests/compiler.py.
"""

from __future__ import annotations

import asyncio
import shutil
import uuid
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types

from flydsl_ls.server.commands import Command
from tests.compiler import needs_compiler, python_without
from tests.server.helpers import CLIENTS, FIXTURES, REPO, change_doc, diagnostics, lsp, open_doc, pulls
from tests.server.helpers import execute as _execute

pytestmark = pytest.mark.asyncio(loop_scope="module")

VECTOR_ADD = REPO / "examples" / "compile" / "vector_add.py"
LEGACY = (FIXTURES / "compile_kernel.py").read_text(encoding="utf-8")
COMPILE_TIMEOUT = 240.0  # the first request also waits for the worker to import torch + flydsl


async def execute(client, command: str, *arguments):
    return await _execute(client, command, *arguments, timeout=COMPILE_TIMEOUT)


SLEEPY = "import time\n\n# flydsl: example\ndef sleepy(device):\n    time.sleep(60)\n"


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def session(request, tmp_path_factory):
    """(client, workspace) with vector_add.py, the legacy fixture and a sleepy example."""
    root = tmp_path_factory.mktemp("ws")
    shutil.copy(VECTOR_ADD, root / "vector_add.py")
    (root / "legacy.py").write_text(LEGACY, encoding="utf-8")
    (root / "sleepy.py").write_text(SLEEPY, encoding="utf-8")
    cache = tmp_path_factory.mktemp("cache")
    env = {"FLYDSL_LS_CACHE": str(cache)}
    async with lsp(request.param, root, env=env, init_options={"compileTimeout": 120}) as client:
        client.spec = request.param  # type: ignore[attr-defined]
        yield client, root


def messages_since(client, count: int) -> list[types.ShowMessageParams]:
    return [m for m in client.messages[count:]]


async def wait_for_log(client, count: int, shown: str) -> None:
    """The shown message is also in the log (after ``count``), at the same severity."""
    text = shown.removeprefix("flydsl-ls: ")
    for _ in range(100):
        logged = [m for m in client.log_messages[count:] if m.message == text]
        if logged:
            kinds = {m.type for m in client.messages if m.message == shown}
            assert {m.type for m in logged} == kinds, (logged, kinds)
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"not logged: {text!r} in {[m.message for m in client.log_messages[count:]]}")


# --- capabilities and CodeLens (no compile) ----------------------------------------------------
async def test_commands_and_code_lens_are_advertised(session):
    client, _ = session
    caps = client.init_result.capabilities
    # The list itself is pinned in test_command_units; here: the server advertises it.
    assert set(caps.execute_command_provider.commands) == set(Command.advertised())
    assert caps.code_lens_provider is not None


async def test_code_lens_titles_and_commands(session):
    client, root = session
    text = LEGACY + "\n\n# flydsl: example gfx950\ndef wide(device):\n    return small(device)\n"
    uri = open_doc(client, root / "legacy.py", text, version=1)
    lenses = await asyncio.wait_for(
        client.text_document_code_lens_async(types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))),
        20,
    )
    titles = [(lens.range.start.line, lens.command.title) for lens in lenses]
    small_line = text.splitlines().index("def small(device):")
    wide_line = text.splitlines().index("def wide(device):")
    kernel_line, run_line = (i for i, line in enumerate(text.splitlines()) if line.startswith("@flyc."))
    assert titles == [
        (small_line, "Compile (gfx942)"),
        (small_line, "Show ISA"),
        (small_line, "Launch"),
        (wide_line, "Compile (gfx950)"),
        (wide_line, "Show ISA"),
        (wide_line, "Launch"),
        # the kernel's scope has fixes, and so has its launcher's (which alone launches it):
        # its legacy findings counted (`check` finds 2 safe FLY104 and an unsafe FLY105), then
        # the migration
        (kernel_line, "3 legacy constructs, 3 fixable (2 safe, 1 unsafe)"),
        (run_line, "3 legacy constructs, 3 fixable (2 safe, 1 unsafe)"),
        (kernel_line, "Migrate this kernel"),
        (run_line, "Migrate this kernel"),
    ]
    summary = lenses[6].command
    assert summary.command == "flydsl-ls.kernelFindings"
    assert list(summary.arguments) == [
        "legacy_kernel: 3 legacy constructs, 3 fixable (2 safe, 1 unsafe): FLY104 ×2 (2 fixable), "
        'FLY105 ×1 (1 fixable); "Migrate this kernel" applies the fixable ones'
    ]
    commands = [(lens.command.command, list(lens.command.arguments)) for lens in lenses[:3]]
    assert commands == [
        ("flydsl-ls.compile", [uri, "small", "gfx942"]),
        ("flydsl-ls.showIsa", [uri, "small", "gfx942"]),
        ("flydsl-ls.launch", [uri, "small", "gfx942"]),
    ]
    assert list(lenses[3].command.arguments) == [uri, "wide", "gfx950"]
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))


async def test_code_lens_arch_follows_the_target_arch_setting(session):
    client, root = session
    uri = open_doc(client, root / "vector_add.py", version=1)
    params = types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    try:
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"flydsl-ls": {"targetArch": "gfx950"}})
        )
        await asyncio.sleep(0.2)  # notifications are handled in order; the lens request follows it
        lenses = await asyncio.wait_for(client.text_document_code_lens_async(params), 20)
        assert lenses[0].command.title == "Compile (gfx950)"
        assert list(lenses[0].command.arguments) == [uri, "small", "gfx950"]
    finally:
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"flydsl-ls": {}}))
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
    lenses = await asyncio.wait_for(client.text_document_code_lens_async(params), 20)
    assert lenses is None  # closed: no lenses


async def test_bad_arguments_are_an_error_not_a_crash(session):
    client, _ = session
    with pytest.raises(Exception, match="document URI"):
        await execute(client, "flydsl-ls.compile", 42)
    caps = client.init_result.capabilities
    assert caps.execute_command_provider is not None  # still serving


async def test_code_outside_the_workspace_or_untrusted_is_not_run(session, tmp_path_factory):
    """The compile commands import the file: only the workspace's files, and only while the
    client does not call the workspace untrusted (setting `trust`). A file that would leave a
    mark if imported: it is refused before any import, also through a symlink."""
    client, root = session
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    mark = elsewhere / "ran"
    hostile = elsewhere / "hostile.py"
    hostile.write_text(f"open({str(mark)!r}, 'w').close()\n\n# flydsl: example\ndef e(device):\n    pass\n")
    link = root / "link.py"
    link.symlink_to(hostile)
    try:
        for uri in (hostile.as_uri(), link.as_uri()):
            with pytest.raises(Exception, match="outside the workspace folders"):
                await execute(client, "flydsl-ls.compile", uri)
        settings = lambda trust: types.DidChangeConfigurationParams(settings={"flydsl-ls": {"trust": trust}})
        client.workspace_did_change_configuration(settings(False))
        await asyncio.sleep(0.3)
        with pytest.raises(Exception, match="not trusted"):
            await execute(client, "flydsl-ls.compile", (root / "vector_add.py").as_uri(), "small", "gfx942")
        uri = open_doc(client, root / "vector_add.py", version=1)
        params = types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
        titles = [lens.command.title for lens in await asyncio.wait_for(client.text_document_code_lens_async(params), 20) or []]
        assert not [t for t in titles if t.startswith(("Compile", "Show ISA", "Launch"))], titles
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
    finally:
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"flydsl-ls": {}}))
        link.unlink()
    assert not mark.exists()


async def test_no_example_is_reported(session):
    client, root = session
    plain = root / "plain.py"
    plain.write_text("def f(device):\n    pass\n")
    count = len(client.messages)
    logged = len(client.log_messages)
    result = await execute(client, "flydsl-ls.compile", plain.as_uri())
    assert result["status"] == "unavailable"
    assert "flydsl: example" in result["message"]
    assert result["message"].startswith("plain.py (gfx942): cannot compile: no example in this file")  # no "::?"
    (shown,) = messages_since(client, count)
    # a warning (the editor works, compiling does not), shown and logged alike
    assert shown.type == types.MessageType.Warning and "cannot compile" in shown.message
    await wait_for_log(client, logged, shown.message)


@needs_compiler
async def test_without_numpy_the_compile_names_the_install_command(tmp_path):
    """A server whose interpreter has everything but numpy (which flydsl imports, and the
    flydsl wheel does not declare): the command answers with the pip command, as
    :FlydslCompile shows it. One client is enough: the answer does not depend on it."""
    python = python_without(("numpy",), tmp_path / "venv")
    root = tmp_path / "ws"
    root.mkdir()
    shutil.copy(VECTOR_ADD, root / "vector_add.py")
    async with lsp(CLIENTS[0], root, python=python, env={"FLYDSL_LS_CACHE": str(tmp_path / "cache")}) as client:
        result = await execute(client, "flydsl-ls.compile", (root / "vector_add.py").as_uri())
        assert result["status"] == "unavailable" and not result["ok"], result["message"]
        assert f"cannot compile: compiling FlyDSL kernels with {python} needs numpy\ninstall with:\n" in result["message"]
        assert "\n  pip install numpy" in result["message"]
        assert result["error"]["kind"] == "setup"
        (shown,) = client.messages
        assert shown.type == types.MessageType.Warning and "pip install numpy" in shown.message
        # the first line stands alone (VS Code's notification shows it); each command has its own line
        assert shown.message.splitlines()[0].endswith(f"cannot compile: compiling FlyDSL kernels with {python} needs numpy")
        assert "\n  pip install numpy" in shown.message
        await wait_for_log(client, 0, shown.message)


# --- compile -----------------------------------------------------------------------------------
@needs_compiler
@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
async def test_compile_vector_add(session, arch):
    client, root = session
    uri = (root / "vector_add.py").as_uri()
    count = len(client.messages)
    tokens = set(client.progress_reports)
    result = await execute(client, "flydsl-ls.compile", uri, None, arch)
    assert result["status"] == "ok", result["message"]
    assert result["ok"] and result["arch"] == arch and result["example"] == "small"
    (kernel,) = result["kernels"]
    assert kernel["name"] == "add_kernel_0"
    res = kernel["resources"]
    assert res["vgprs"] > 0 and res["sgprs"] > 0 and res["agprs"] == 0 and res["ldsBytes"] == 0
    assert res["occupancy"]["wavesPerSimd"] == 8
    assert kernel["summary"].startswith("VGPRs ")
    isa = Path(kernel["files"]["isa"])
    assert isa.is_file() and Path(result["runDir"]) in isa.parents
    text = isa.read_text()
    assert f"amdgcn-amd-amdhsa--{arch}" in text or f"-{arch}" in text
    assert "global_load_dwordx4" in text and "global_store_dwordx4" in text
    assert set(kernel["files"]) == {"mlirFirst", "mlirFinal", "llvm", "isa"}
    # the message: success, time, resources, these on its first line (VS Code shows no more)
    (shown,) = messages_since(client, count)
    assert shown.type == types.MessageType.Info
    first = shown.message.splitlines()[0]
    assert "compiled in" in first and first.endswith(f"add_kernel_0: {kernel['summary']}")
    # compiled with line info: the kernel's source lines and their instructions
    lines = {entry["line"]: entry for entry in kernel["lines"] if entry["file"].endswith("vector_add.py")}
    source = (root / "vector_add.py").read_text().splitlines()
    store = next(n for n, text in enumerate(source, 1) if text.strip() == "fx.copy(float4, reg_c, dst_c)")
    assert [i.split(" ")[0] for i in lines[store]["isa"]] == ["global_store_dwordx4"]
    assert lines[store]["summary"] == {"instructions": 1, "memory": 1, "waits": 0, "mfma": 0}
    # and its resources above the kernel's definition: clicked, its ISA
    open_doc(client, root / "vector_add.py", "\n".join(source) + "\n", 1)
    params = types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    try:
        lenses = await asyncio.wait_for(client.text_document_code_lens_async(params), 20)
    finally:
        client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    (lens,) = [lens for lens in lenses if lens.command.title.startswith("add_kernel_0 (")]
    assert lens.command.title == f"add_kernel_0 ({arch}): {kernel['summary']}"
    assert lens.range.start.line == source.index("def add_kernel(A: fx.Tensor, B: fx.Tensor, C: fx.Tensor, tiled_copy: fx.TiledCopy):")
    assert lens.command.command == "flydsl-ls.showIsa" and list(lens.command.arguments) == [uri, "small", arch]
    # work-done progress: begin ... end on a fresh token
    (token,) = set(client.progress_reports) - tokens
    kinds = [p.kind for p in client.progress_reports[token]]
    assert kinds[0] == "begin" and kinds[-1] == "end"
    assert client.progress_reports[token][0].cancellable


@needs_compiler
async def test_object_arguments_and_unsaved_text(session):
    """``[{"uri", "example", "arch"}]`` works too, and an open buffer is compiled as it is."""
    client, root = session
    uri = open_doc(client, root / "vector_add.py", VECTOR_ADD.read_text().replace("THREADS = 256", "THREADS = 128"), 1)
    try:
        result = await execute(client, "flydsl-ls.compile", {"uri": uri, "example": "small", "arch": "gfx942"})
        assert result["status"] == "ok", result["message"]
        assert result["kernels"][0]["resources"]["workgroupSize"] == [128, 1, 1]
    finally:
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))


@needs_compiler
async def test_show_isa_opens_the_isa_file(session):
    client, root = session
    uri = (root / "vector_add.py").as_uri()
    count = len(client.shown_documents)
    result = await execute(client, "flydsl-ls.showIsa", uri, "small", "gfx942")
    assert result["ok"]
    (shown,) = client.shown_documents[count:]
    isa = result["kernels"][0]["uris"]["isa"]
    assert shown.uri == isa and result["shown"] == isa
    assert shown.uri.endswith("23_final_isa.s")  # with line info: one more MLIR stage (docs/compile.md)


@needs_compiler
async def test_compare_with_disk_shows_the_isa_by_source_line(session):
    """The unsaved buffer's examples against the file on disk's: per kernel the verdict and
    resources, and the source line whose instructions changed (an add made a multiply)."""
    client, root = session
    path = root / "vector_add.py"
    text = path.read_text(encoding="utf-8")
    uri = open_doc(client, path, text, 1)
    try:
        same = await execute(client, "flydsl-ls.compareWithDisk", uri)
        assert same["status"] == "unchanged" and "no unsaved change" in same["message"]
        edited = text.replace("reg_c.store(reg_a.load() + reg_b.load())", "reg_c.store(reg_a.load() * reg_b.load())")
        assert edited != text
        change_doc(client, uri, 2, edited)
        count = len(client.shown_documents)
        result = await execute(client, "flydsl-ls.compareWithDisk", uri)
        assert result["status"] == "checked", result["message"]
        line = edited.splitlines().index("    reg_c.store(reg_a.load() * reg_b.load())") + 1
        assert result["kernels"] and {k["verdict"] for k in result["kernels"]} == {"ISA differs"}
        for kernel in result["kernels"]:
            (said,) = [d for d in kernel["isaByLine"] if d.startswith(f"vector_add.py:{line}: ")]
            assert "-v_pk_add_f32" in said and "+v_pk_mul_f32" in said, said
            assert "VGPRs" in kernel["resources"] and "occupancy" in kernel["resources"]
        assert result["message"].startswith("compare with disk: vector_add.py, unsaved changes against the file on disk: ")
        (shown,) = client.shown_documents[count:]
        report = Path(result["report"])
        assert shown.uri == report.as_uri() and result["shown"] == shown.uri
        assert report.read_text(encoding="utf-8") == result["message"].removeprefix("compare with disk: ") + "\n"
        assert path.read_text(encoding="utf-8") == text  # the file on disk is left alone
    finally:
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))


@needs_compiler
async def test_launch_without_gpu_says_what_is_missing(session):
    client, root = session
    result = await execute(client, "flydsl-ls.launch", (root / "vector_add.py").as_uri())
    assert result["status"] == "ok"
    launch = result["launch"]
    assert launch is not None and launch["ran"] is False
    assert "Compile-only ran" in launch["message"]
    assert any(not check["ok"] for check in launch["checks"])
    assert "launch: " in result["message"]


# --- compile errors as diagnostics ---------------------------------------------------------------
@needs_compiler
async def test_compile_error_becomes_a_diagnostic_then_clears(session):
    client, root = session
    path = root / "legacy.py"
    bad = LEGACY.replace("twice + fx.Int32(lane)", "twice + undefined_name")
    line = bad.splitlines().index("    Out[tid] = twice + undefined_name")
    uri = open_doc(client, path, bad, version=1)
    try:
        await diagnostics(client, uri, 1)  # the lint first
        result = await execute(client, "flydsl-ls.compile", uri)
        assert result["status"] == "error"
        assert result["error"]["line"] == line + 1
        compile_diags = await _compile_diagnostics(client, uri, present=True)
        (diag,) = compile_diags
        column = bad.splitlines()[line].index("undefined_name")  # the traceback's column
        assert (diag.range.start.line, diag.range.start.character) == (line, column)
        assert diag.range.end.line == line
        assert diag.severity == types.DiagnosticSeverity.Error
        assert "undefined_name" in diag.message
        # the lint does not drop it: a change re-lints, the compile error stays
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=LEGACY)],
            )
        )
        lint = await diagnostics(client, uri, 2)
        assert any(d.code == "FLY105" for d in lint)
        assert len(await _compile_diagnostics(client, uri, present=True)) == 1
        # the next successful compile clears it
        result = await execute(client, "flydsl-ls.compile", uri)
        assert result["status"] == "ok", result["message"]
        assert await _compile_diagnostics(client, uri, present=False) == []
    finally:
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))


async def _compile_diagnostics(client, uri: str, present: bool) -> list[types.Diagnostic]:
    """The compile diagnostics the client shows for ``uri`` (pushed: pull clients keep the
    pushed set apart from the pulled one; push clients get them merged with the lint)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 20
    while True:
        pushed = [p for p in client.published if p.uri == uri]
        found = [d for d in (pushed[-1].diagnostics if pushed else []) if d.source == "flydsl-ls compile"]
        if bool(found) == present or loop.time() > deadline:
            if pulls(client):  # never in the pulled lint
                report = await asyncio.wait_for(
                    client.text_document_diagnostic_async(
                        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
                    ),
                    20,
                )
                assert all(d.source != "flydsl-ls compile" for d in report.items)
            return found
        await asyncio.sleep(0.05)


# --- verify a fix --------------------------------------------------------------------------------
async def _lint(client, root, text: str) -> tuple[str, list[types.Diagnostic]]:
    uri = open_doc(client, root / "legacy.py", text, version=1)
    return uri, await diagnostics(client, uri, 1)


@needs_compiler
async def test_verify_safe_fix_gives_identical_ir(session):
    client, root = session
    uri, diags = await _lint(client, root, LEGACY)
    try:
        safe = [d for d in diags if d.code == "FLY104"][0]
        count = len(client.messages)
        result = await execute(client, "flydsl-ls.verifyFix", uri, client.protocol._converter.unstructure(safe))
        assert result["status"] == "identical", result["message"]
        assert result["fix"]["applicability"] == "safe"  # found from data's index
        assert result["identical"] and result["differences"] == []
        assert "identical IR" in result["message"]
        assert result["before"]["ok"] and result["after"]["ok"]
        assert "identical IR" in messages_since(client, count)[-1].message
    finally:
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))


@needs_compiler
async def test_verify_unsafe_fix_reports_the_difference(session):
    """FLY105 `gpu.thread_id("x") % 16` -> `fx.Int32(gpu.thread_id("x")) % 16`: an
    index_cast to i32 appears in the MLIR. Given only its code and range (no data), the
    server finds the fix in its own lint."""
    client, root = session
    uri, diags = await _lint(client, root, LEGACY)
    try:
        unsafe = [d for d in diags if d.code == "FLY105"][0]
        count = len(client.shown_documents)
        diagnostic = {"code": unsafe.code, "range": client.protocol._converter.unstructure(unsafe.range)}
        result = await execute(client, "flydsl-ls.verifyFix", {"uri": uri, "diagnostic": diagnostic})
        assert result["status"] == "different", result["message"]
        assert result["fix"]["applicability"] == "unsafe"
        assert any("mlir-first differs" in d for d in result["differences"])
        assert result["message"].endswith("the ISA is the same")  # known: the thread id is < 64
        diff = "".join(result["diffs"].values())
        assert "+" in diff and "arith.index_cast" in diff
        assert Path(result["diffFile"]).read_text().count("arith.index_cast") >= 1
        (shown,) = client.shown_documents[count:]
        assert shown.uri == Path(result["diffFile"]).as_uri()
    finally:
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))


async def test_verify_fix_of_a_stale_diagnostic_is_refused(session):
    client, root = session
    uri, diags = await _lint(client, root, LEGACY)
    try:
        safe = client.protocol._converter.unstructure([d for d in diags if d.code == "FLY104"][0])
        safe["data"]["version"] = 0
        result = await execute(client, "flydsl-ls.verifyFix", uri, safe)
        assert result["status"] == "failed" and "changed" in result["message"]
    finally:
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))


async def test_verify_fix_without_an_example_says_how_to_add_one(session):
    """Nothing to compile: no "::?", the file named, the marker to add; a warning."""
    client, root = session
    text = "\n".join(line for line in LEGACY.splitlines() if "flydsl: example" not in line) + "\n"
    uri, diags = await _lint(client, root, text)
    try:
        safe = client.protocol._converter.unstructure(next(d for d in diags if d.code == "FLY104"))
        count = len(client.messages)
        result = await execute(client, "flydsl-ls.verifyFix", uri, safe)
        assert result["status"] == "unavailable" and not result["ok"] and result["code"] == "FLY104"
        assert "::?" not in result["message"]
        assert "cannot verify the FLY104 fix by compiling: legacy.py: no example in this file" in result["message"]
        assert "mark a module-level function `# flydsl: example`" in result["message"]
        (shown,) = messages_since(client, count)
        assert shown.type == types.MessageType.Warning and result["message"] in shown.message
    finally:
        client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))


# --- crash, cancel ---------------------------------------------------------------------------------
@needs_compiler
async def test_crash_is_reported_and_the_next_compile_works(session):
    client, root = session
    uri = (root / "vector_add.py").as_uri()
    count = len(client.messages)
    result = await execute(client, "flydsl-ls.compile", uri, "small", "gfx000")
    assert result["status"] == "crash"
    assert "crashed (SIGABRT)" in result["message"] and "restarted" in result["message"]
    (shown,) = messages_since(client, count)
    assert shown.type == types.MessageType.Error and "compiler crashed" in shown.message
    again = await execute(client, "flydsl-ls.compile", uri, "small", "gfx942")
    assert again["status"] == "ok", again["message"]


async def _progress_says(client, text: str, old: set, timeout: float = 60):
    """The token of the new progress (not in ``old``) that reported ``text``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        for token, reports in list(client.progress_reports.items()):
            if token not in old and any(getattr(r, "message", None) == text for r in reports):
                return token
        await asyncio.sleep(0.05)
    raise AssertionError(f"no progress report {text!r}")


@needs_compiler
async def test_cancel_stops_the_compile(session):
    """Neovim: `$/cancelRequest` of the executeCommand; VS Code: the cancel button of its
    progress (`window/workDoneProgress/cancel`). The worker is stopped (and restarted, a few
    seconds each, hence one way per client) and the next compile works."""
    client, root = session
    how = "cancelRequest" if client.spec.startswith("neovim") else "progressCancel"
    uri = (root / "sleepy.py").as_uri()
    msg_id = str(uuid.uuid4())
    count = len(client.messages)
    old = set(client.progress_reports)
    future = asyncio.ensure_future(
        client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command="flydsl-ls.compile", arguments=[uri]),
            msg_id=msg_id,
        )
    )
    token = await _progress_says(client, "calling sleepy('cpu')", old)
    if how == "cancelRequest":
        client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
        with pytest.raises(Exception, match="cancel"):
            await asyncio.wait_for(future, 30)
    else:
        client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
        result = await asyncio.wait_for(future, 30)
        assert result["status"] == "cancelled"
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while not any("cancelled" in m.message for m in messages_since(client, count)) and loop.time() < deadline:
        await asyncio.sleep(0.1)
    assert any("compile cancelled" in m.message for m in messages_since(client, count))
    assert client.progress_reports[token][-1].kind == "end"
    again = await execute(client, "flydsl-ls.compile", (root / "vector_add.py").as_uri())
    assert again["status"] == "ok", again["message"]


@needs_compiler
async def test_compile_timeout_setting(session):
    """`compileTimeout` (seconds) bounds a request; the worker is restarted after it."""
    client, root = session
    if client.spec.startswith("neovim"):
        pytest.skip("one client is enough: each timeout restarts the worker (seconds on a busy machine)")
    settings = lambda seconds: types.DidChangeConfigurationParams(settings={"flydsl-ls": {"compileTimeout": seconds}})
    client.workspace_did_change_configuration(settings(2))
    try:
        result = await execute(client, "flydsl-ls.compile", (root / "sleepy.py").as_uri())
        assert result["status"] == "timeout"
        assert "timed out after 2 s" in result["message"] and "restarted" in result["message"]
    finally:
        client.workspace_did_change_configuration(settings(120))
    again = await execute(client, "flydsl-ls.compile", (root / "vector_add.py").as_uri())
    assert again["status"] == "ok", again["message"]


async def test_an_example_that_hoards_memory_ends_in_a_clear_error_and_the_server_serves_on(session):
    """With `compileMemoryLimit` (MiB) the worker is restarted with that limit; an example
    allocating without bound gets "out of memory", and the next compile works."""
    client, root = session
    hoarder = root / "hoarder.py"
    hoarder.write_text(
        "# flydsl: example\ndef greedy(device):\n    hoard = []\n    while True:\n        hoard.append(bytearray(2**28))\n"
    )
    try:
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"flydsl-ls": {"compileMemoryLimit": 2048}})
        )
        await asyncio.sleep(0.3)
        result = await execute(client, "flydsl-ls.compile", hoarder.as_uri())
        assert result["status"] == "error" and "out of memory" in result["message"], result["message"]
        assert "2.0 GiB" in result["message"]
        again = await execute(client, "flydsl-ls.compile", (root / "vector_add.py").as_uri(), "small", "gfx942")
        assert again["status"] == "ok", again["message"]
    finally:
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"flydsl-ls": {}}))


@needs_compiler
async def test_isa_hints_after_a_compile(session):
    """With `isaHints`, a compile's per-line instruction counts are inlay hints at the lines'
    ends, while the text is the one compiled."""
    client, root = session
    text = (root / "vector_add.py").read_text()
    uri = open_doc(client, root / "vector_add.py", text, 1)
    lines = text.splitlines()
    store = next(n for n, line in enumerate(lines) if line.strip() == "fx.copy(float4, reg_c, dst_c)")
    whole = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=len(lines), character=0))
    params = types.InlayHintParams(text_document=types.TextDocumentIdentifier(uri=uri), range=whole)
    try:
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"flydsl-ls": {"isaHints": True}}))
        result = await execute(client, "flydsl-ls.compile", uri, "small", "gfx942")
        assert result["ok"], result["message"]
        hints = await asyncio.wait_for(client.text_document_inlay_hint_async(params), 20)
        counts = {h.position.line: h for h in hints if "instr" in str(h.label)}
        assert counts[store].label == "1 instr, 1 memory"
        assert counts[store].position.character == len(lines[store]) and counts[store].padding_left
        # edited: the lines may have moved, no counts until the next compile
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text="# edited\n" + text)],
            )
        )
        hints = await asyncio.wait_for(client.text_document_inlay_hint_async(params), 20)
        assert not [h for h in hints if "instr" in str(h.label)]
    finally:
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"flydsl-ls": {}}))
        client.text_document_did_close(types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
