"""workspace/executeCommand: compile, launch, show the ISA, verify a fix by compiling.

:class:`Command` drives both what is advertised (``executeCommandProvider``) and the
routing (``HANDLERS``). Every command runs in the session's one :class:`CompileService`
(a warm worker process, created on the first command, closed at shutdown), off the event
loop, with work-done progress when the client offers it, cancellable by ``$/cancelRequest``
and by the progress's cancel button, within the ``compileTimeout`` setting. The user's file
is imported only here, in the worker, never in the server.

Arguments: positional ``[uri, example?, arch?]`` (verifyFix: ``[uri, diagnostic, example?,
arch?]``) or one object ``{"uri", "example"?, "arch"?, "diagnostic"?}``. The result is the
JSON object built by ``compile_report`` (documented in docs/compile.md, "In the editor").

Compile errors become diagnostics (source ``flydsl-ls compile``) kept in
``Session.compile_diagnostics`` apart from the lint: a pushing client gets them merged into
every lint publish (diagnostics.py), a pulling client gets them pushed on their own (its
pushed and pulled diagnostics are separate collections), so the next lint never drops them.
A successful compile of the file clears them; a failed one replaces them.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.uris import to_fs_path

from flydsl_ls.actions.fix_verify import VerifyAborted, VerifyOutcome, verify_fixes
from flydsl_ls.actions.fixes import apply_fix
from flydsl_ls.analysis.model.diagnostic import Applicability, Edit, Fix
from flydsl_ls.analysis.model.text import LineIndex, Range
from flydsl_ls.checker import check_source
from flydsl_ls.compile import (
    CompileResult,
    Status,
    choose_example,
    compare_results,
    find_examples,
)
from flydsl_ls.server import code_actions, diagnostics, migrate
from flydsl_ls.server import compile_report as report
from flydsl_ls.server.session import Document
from flydsl_ls.server.work import WorkProgress, reporting_compiler, service, target_arch, why_not_run
from flydsl_ls.server.work import cancel_with_request as _cancel_with_request
from flydsl_ls.server.work import show as _show

if TYPE_CHECKING:
    from flydsl_ls.server.app import FlyServer

log = logging.getLogger(__name__)

SHOW_DOCUMENT_TIMEOUT = 10.0


class Command(str, Enum):
    """The commands the server executes; drives the advertised list and the routing."""

    COMPILE = "flydsl-ls.compile"
    LAUNCH = "flydsl-ls.launch"
    SHOW_ISA = "flydsl-ls.showIsa"
    VERIFY_FIX = "flydsl-ls.verifyFix"
    # The edits of code actions, for clients that do not resolve them (code_actions.py).
    APPLY_FIX = code_actions.APPLY_FIX_COMMAND
    FIX_ALL = code_actions.FIX_ALL_COMMAND
    ADD_EXAMPLE = code_actions.ADD_EXAMPLE_COMMAND  # the code action's and the CodeLens's
    SHOW_EXAMPLE = code_actions.SHOW_EXAMPLE_COMMAND  # after a resolved "Add a compile example"
    NO_EXAMPLE = code_actions.NO_EXAMPLE_COMMAND  # the "No compile example" lens
    KERNEL_FINDINGS = code_actions.KERNEL_FINDINGS_COMMAND  # the lens counting a kernel's findings
    MIGRATE_KERNEL = code_actions.MIGRATE_COMMAND  # the code action's and the CodeLens's (server/migrate.py)

    @classmethod
    def advertised(cls) -> list[str]:
        return [command.value for command in cls]


# --- arguments ----------------------------------------------------------------------------
@dataclass
class Target:
    uri: str
    example: str | None = None
    arch: str | None = None
    diagnostic: dict | None = None


def parse_arguments(arguments: list, *, with_diagnostic: bool = False) -> Target:
    """``[uri, (diagnostic,) example?, arch?]`` or ``[{"uri", "diagnostic"?, "example"?, "arch"?}]``."""
    if len(arguments) == 1 and isinstance(arguments[0], dict) and "uri" in arguments[0]:
        given = dict(arguments[0])
    else:
        names = ["uri", "diagnostic", "example", "arch"] if with_diagnostic else ["uri", "example", "arch"]
        if len(arguments) > len(names):
            raise JsonRpcInvalidParams(f"expected at most {len(names)} arguments: {', '.join(names)}")
        given = dict(zip(names, arguments))
    uri = given.get("uri")
    if not isinstance(uri, str) or not uri:
        raise JsonRpcInvalidParams("the first argument must be the document URI")
    for name in ("example", "arch"):
        if given.get(name) is not None and not isinstance(given[name], str):
            raise JsonRpcInvalidParams(f"`{name}` must be a string")
    diagnostic = given.get("diagnostic")
    if with_diagnostic and not isinstance(diagnostic, dict):
        raise JsonRpcInvalidParams("verifyFix needs a diagnostic (its code and range, or its data)")
    return Target(uri, given.get("example") or None, given.get("arch") or None, diagnostic)


@dataclass
class Source:
    """What a command compiles: the open buffer's text (unsaved edits included) or the file."""

    uri: str
    path: Path
    text: str
    doc: Document | None

    @property
    def buffer(self) -> str | None:
        return self.text if self.doc is not None else None  # None: the service reads the file


def _source(server: FlyServer, uri: str) -> Source:
    doc = server.session.get(uri)
    path = doc.path if doc is not None else None
    if path is None and uri.startswith("file:"):
        try:
            fs = to_fs_path(uri)
            path = Path(fs) if fs else None
        except Exception:
            path = None
    if path is None:
        raise JsonRpcInvalidParams(f"only files on disk can be compiled, not {uri}")
    if doc is not None:
        return Source(uri, path, doc.text, doc)
    try:
        return Source(uri, path, path.read_text(encoding="utf-8"), None)
    except OSError as error:
        raise JsonRpcInvalidParams(f"cannot read {path}: {error}") from error


def _arch(server: FlyServer, source: Source, target: Target) -> str | None:
    """The arch asked for, else the example's marker, else the setting, else gfx942.
    None when there is no such example (the service reports that)."""
    if target.arch:
        return target.arch
    try:
        example = choose_example(find_examples(source.text), target.example)
    except LookupError:
        return None
    doc = source.doc or Document(source.uri, source.text, 0, source.path)
    return example.arch or target_arch(server, doc)


# --- the service, progress and cancellation -----------------------------------------------
async def _compile(
    server: FlyServer,
    source: Source,
    target: Target,
    arch: str | None,
    progress: WorkProgress,
    cancel: threading.Event,
    *,
    text: str | None = None,
    launch: bool = False,
    label: str = "",
) -> CompileResult:
    report_progress = progress.report if not label else (lambda m: progress.report(f"{label}: {m}"))
    refused = why_not_run(server, source.path)
    if refused:
        raise JsonRpcInvalidRequest(refused)
    try:
        return await service(server).compile_async(
            source.path,
            target.example,
            arch,
            launch=launch,
            source=source.buffer if text is None else text,
            timeout=server.session.editor.timeout,
            progress=report_progress,
            cancel=cancel,
        )
    except asyncio.CancelledError:
        cancel.set()  # the thread's compile stops at its next poll; its worker restarts
        raise


async def _show_document(server: FlyServer, path: Path | None) -> str | None:
    """Ask the client to open ``path``; its URI when it did."""
    if path is None or not server.session.features.show_document:
        return None
    uri = path.as_uri()
    try:
        shown = await asyncio.wait_for(
            server.window_show_document_async(types.ShowDocumentParams(uri=uri, take_focus=True)),
            SHOW_DOCUMENT_TIMEOUT,
        )
    except Exception as error:
        log.warning("window/showDocument %s failed: %s", uri, error)
        return None
    return uri if shown is None or getattr(shown, "success", True) else None


def _title(verb: str, source: Source, target: Target, arch: str | None) -> str:
    example = target.example or "first example"
    return f"{verb} {source.path.name}::{example}" + (f" for {arch}" if arch else "")


def _update_compile_diagnostics(server: FlyServer, source: Source, result: CompileResult) -> None:
    """A successful compile clears the file's compile errors, a failed one replaces them;
    a crash, timeout, cancel or missing toolchain says nothing about the source: kept."""
    if result.status is Status.OK:
        new: list[types.Diagnostic] = []
    elif result.status is Status.ERROR:
        new = report.error_diagnostics(result, source.path, source.text, server.session.encoding)
    else:
        return
    session = server.session
    old = session.compile_diagnostics.get(source.uri, [])
    if not new and not old:
        return
    if new:
        session.compile_diagnostics[source.uri] = new
    else:
        session.compile_diagnostics.pop(source.uri, None)
    doc = session.get(source.uri)
    if session.features.pull_diagnostics or doc is None:
        # a separate (pushed) collection: the pulled lint never replaces it
        server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=source.uri, diagnostics=new))
    else:
        doc.published = None  # republish the lint merged with the compile errors
        diagnostics.schedule(server, doc, 0)


# --- compile, launch, showIsa ---------------------------------------------------------------
async def _run_compile(server: FlyServer, command: Command, arguments: list) -> dict:
    target = parse_arguments(arguments)
    source = _source(server, target.uri)
    arch = _arch(server, source, target)
    launch = command is Command.LAUNCH
    cancel = threading.Event()
    _cancel_with_request(server, cancel)
    verb = "Launching" if launch else "Compiling"
    async with WorkProgress(server, _title(verb, source, target, arch), cancel) as progress:
        result = await _compile(server, source, target, arch, progress, cancel, launch=launch)
        progress.end(result.status.value)
    _update_compile_diagnostics(server, source, result)
    data = report.result_json(command.value, target.uri, result)
    text = data["message"]
    if command is Command.SHOW_ISA and result.ok and result.kernels:
        isa = result.kernels[0].isa
        data["shown"] = await _show_document(server, isa)
        if data["shown"] is None:
            text += "\n" + "\n".join(f"ISA of {k.name}: {k.isa}" for k in result.kernels if k.isa)
    _show(server, report.message_type(result), text)
    return data


async def compile_command(server: FlyServer, arguments: list) -> dict:
    return await _run_compile(server, Command.COMPILE, arguments)


async def launch_command(server: FlyServer, arguments: list) -> dict:
    return await _run_compile(server, Command.LAUNCH, arguments)


async def show_isa_command(server: FlyServer, arguments: list) -> dict:
    return await _run_compile(server, Command.SHOW_ISA, arguments)


# --- verifyFix --------------------------------------------------------------------------------
def _range(raw: Any) -> types.Range | None:
    try:
        start, end = raw["start"], raw["end"]
        return types.Range(
            types.Position(int(start["line"]), int(start["character"])),
            types.Position(int(end["line"]), int(end["character"])),
        )
    except (KeyError, TypeError, ValueError):
        return None


async def _find_fix(server: FlyServer, source: Source, diagnostic: dict) -> tuple[str, dict | None, str | None]:
    """(code, fix data, problem) for the diagnostic the client sent: the fix it carries, if
    any, else the current lint's diagnostic it stands for (``data["index"]``, or the same
    code and range), its fix in the client's encoding."""
    data = diagnostic.get("data") if isinstance(diagnostic.get("data"), dict) else {}
    code = str(diagnostic.get("code") or "")
    doc = source.doc
    version = data.get("version")
    if doc is not None and isinstance(version, int) and version != doc.version:
        return code, None, "the document changed since this diagnostic was reported; verify the fix again"
    fix = data.get("fix") if isinstance(data.get("fix"), dict) else None
    if fix is None and doc is not None:
        analysis = await diagnostics.analyse(server, doc)
        encoding = server.session.encoding
        found = diagnostics.find(analysis, data, code, _range(diagnostic.get("range")), encoding) if analysis else None
        if found is not None and found[1].fix is not None and found[1].fix.elsewhere:
            names = ", ".join(Path(group.path).name for group in found[1].fix.elsewhere)
            return code, None, f"{code}'s fix edits {names} too, and a verification compiles this file only"
        if found is not None and found[1].fix is not None and found[1].fix.edits:
            code = found[1].code
            fix = diagnostics.fix_data(found[1].fix, analysis.index, encoding)
    if fix is None:
        return code, None, f"{code or 'this diagnostic'} has no fix to verify"
    return code, fix, None


def _fixed_text(server: FlyServer, text: str, fix: dict) -> str | None:
    """``text`` with the fix (edits in the client's encoding) applied; None if it would not
    parse or the fix data is malformed."""
    index = LineIndex(text)
    encoding = server.session.encoding
    try:
        edits = tuple(
            Edit(
                Range(
                    index.from_client(r.start.line, r.start.character, encoding),
                    index.from_client(r.end.line, r.end.character, encoding),
                ),
                str(e["newText"]),
            )
            for e in fix["edits"]
            if (r := _range(e["range"])) is not None
        )
        applicability = Applicability(fix.get("applicability", Applicability.UNSAFE.value))
    except (KeyError, TypeError, ValueError) as error:
        log.debug("malformed fix data: %s", error)
        return None
    if not edits:
        return None
    return apply_fix(text, Fix(str(fix.get("title", "")), applicability, edits))


async def verify_fix_command(server: FlyServer, arguments: list) -> dict:
    target = parse_arguments(arguments, with_diagnostic=True)
    source = _source(server, target.uri)
    code, fix, problem = await _find_fix(server, source, target.diagnostic or {})
    fixed = _fixed_text(server, source.text, fix) if fix is not None else None
    if fix is not None and fixed is None:
        problem = f"the {code} fix does not apply cleanly to the current text"
    status = "failed"
    if problem is None:
        try:
            choose_example(find_examples(source.text), target.example)
        except LookupError as error:  # nothing to compile: say so, and how to add one
            status = "unavailable"
            problem = f"cannot verify the {code} fix by compiling: {source.path.name}: {error} (docs/compile.md)"
    if problem is not None:
        _show(server, types.MessageType.Warning, f"verify fix: {problem}")
        return {"command": Command.VERIFY_FIX.value, "status": status, "ok": False, "identical": False,
                "message": problem, "uri": target.uri, "code": code}
    arch = _arch(server, source, target)
    cancel = threading.Event()
    _cancel_with_request(server, cancel)
    title = _title(f"Verifying the {code} fix:", source, target, arch)
    after = comparison = diff_file = None
    async with WorkProgress(server, title, cancel) as progress:
        before = await _compile(server, source, target, arch, progress, cancel, text=source.text, label="before")
        if before.ok and not cancel.is_set():
            after = await _compile(server, source, target, arch, progress, cancel, text=fixed, label="after")
        if after is not None and after.ok:
            comparison = compare_results(before, after)
            if not comparison.identical and after.dump_dir is not None:
                diff_file = after.dump_dir / "verify-fix.diff"
                diff_file.write_text(report.diff_text(comparison), encoding="utf-8")
        progress.end("identical IR" if comparison and comparison.identical else "done")
    data = report.verify_json(target.uri, code, fix, before, after, comparison, diff_file)
    text = data["message"]
    if diff_file is not None:
        data["shown"] = await _show_document(server, diff_file)
        if data["shown"] is None:
            text += f"\ndiff: {diff_file}"
    kind = types.MessageType.Info if data["ok"] else types.MessageType.Error
    _show(server, kind, text)
    return data


# --- fix-all, verified by compiling ----------------------------------------------------------
FIX_ALL_VERIFY_LIMIT = 600.0  # seconds for a whole verified fix-all (each compile: compileTimeout)


def _has_examples(text: str) -> bool:
    return bool(code_actions.EXAMPLE_MARKER.search(text)) and bool(find_examples(text))


async def fix_all_command(server: FlyServer, arguments: list) -> dict:
    """``flydsl-ls.fixAll [uri, version]``: every safe fix, sent with workspace/applyEdit.

    In a file with ``# flydsl: example`` functions, the examples are compiled before and
    after (actions/fix_verify.py, in the session's compile worker, off the event loop,
    cancellable, each compile within ``compileTimeout`` and the whole within
    FIX_ALL_VERIFY_LIMIT) and only the fixes that keep the IR identical are applied; the
    dropped ones are shown with window/showMessage and returned. When that cannot run (no
    compiler, no example compiles, time limit), the fix-all is applied unverified, as
    without examples, and the message says so. A file without examples: as before."""
    if len(arguments) != 2:
        raise JsonRpcInvalidParams("expected [uri, version]")
    doc, analysis = await code_actions._analysis_of(server, arguments[0], arguments[1])
    if not _has_examples(analysis.text):
        return await code_actions.fix_all_command(server, arguments)
    version, text = analysis.version, analysis.text
    name = doc.path.name if doc.path is not None else doc.uri
    cancel = threading.Event()
    _cancel_with_request(server, cancel)
    outcome, problem = await _verify_fix_all(server, doc, text, cancel)
    if outcome is None and cancel.is_set() and problem == "cancelled":
        message = f"fix-all of {name} cancelled: nothing changed"
        _show(server, types.MessageType.Warning, message)
        return {"applied": False, "verified": False, "status": "cancelled", "message": message}
    if outcome is None or not outcome.verified:
        why = problem or (outcome.summary(name) if outcome is not None else "")
        result = await code_actions.fix_all_command(server, arguments)
        message = f"fix-all of {name} not verified ({why}); the safe fixes were applied unverified"
        if not result.get("applied"):
            message = f"fix-all of {name} not verified ({why}); nothing was changed"
        _show(server, types.MessageType.Warning, message)
        return {**result, "verified": False, "status": "not verified", "message": message}
    edit = code_actions.text_edit(server, doc, text, outcome.text, version)
    result = await code_actions._apply(server, doc, version, edit, code_actions.FIX_ALL_TITLE)
    lines = [outcome.summary(name)]
    lines += [f"{d.fix.code} (line {d.fix.line}) not applied: it {d.reason}" for d in outcome.dropped]
    lines += [f"example {note}; verified with the others" for note in outcome.notes]
    message = "fix-all of " + "\n".join(lines)
    _show(server, types.MessageType.Warning if outcome.dropped else types.MessageType.Info, message)
    return {
        **result,
        "verified": True,
        "status": outcome.status,
        "message": message,
        "kept": [{"code": k.code, "line": k.line, "column": k.column, "title": k.title} for k in outcome.kept],
        "dropped": [
            {"code": d.fix.code, "line": d.fix.line, "column": d.fix.column, "title": d.fix.title, "reason": d.reason}
            for d in outcome.dropped
        ],
        "targets": [{"example": example, "arch": arch} for example, arch in outcome.targets],
        "compiles": outcome.compiles,
        "seconds": round(outcome.seconds, 3),
    }


async def _verify_fix_all(
    server: FlyServer, doc: Document, text: str, cancel: threading.Event
) -> tuple[VerifyOutcome | None, str]:
    """(the verified fix-all of ``text``, "") or (None, why it could not run)."""
    refused = why_not_run(server, doc.path) if doc.path is not None else "the document is not a file"
    if refused:
        return None, refused
    compiler = service(server)
    toolchain = await asyncio.to_thread(compiler.toolchain)
    if not toolchain.ok:
        return None, "the compiler is not installed: " + toolchain.problem().replace("\n", " ")
    snap = server.session.snapshot(doc, text)
    timeout = server.session.editor.timeout
    deadline = time.monotonic() + FIX_ALL_VERIFY_LIMIT
    path = doc.path
    loop_worker = server.worker

    def lint(source: str):
        # on the server's analysis thread, like every other lint, with the snapshot's settings
        job = loop_worker.submit(check_source, source, snap.path, snap.settings, snap.project, keep_model=False)
        return job.result().diagnostics

    def stopped() -> bool:
        return cancel.is_set() or time.monotonic() > deadline

    title = f"Verifying the fix-all of {doc.path.name if doc.path else doc.uri}"
    async with WorkProgress(server, title, cancel) as progress:
        compile_text = reporting_compiler(compiler, path, progress, timeout, stopped)
        try:
            outcome = await asyncio.to_thread(
                verify_fixes,
                text,
                lint,
                compile_text,
                unsafe=False,
                default_arch=target_arch(server, doc),
                cancelled=stopped,
            )
        except VerifyAborted as error:
            if cancel.is_set():
                return None, "cancelled"
            if time.monotonic() > deadline:
                return None, f"it took more than {FIX_ALL_VERIFY_LIMIT:g} s"
            return None, str(error)
        except asyncio.CancelledError:
            cancel.set()
            raise
        progress.end(f"{outcome.count} kept, {len(outcome.dropped)} dropped")
    return outcome, ""


HANDLERS: dict[Command, Callable[[FlyServer, list], Awaitable[dict]]] = {
    Command.COMPILE: compile_command,
    Command.LAUNCH: launch_command,
    Command.SHOW_ISA: show_isa_command,
    Command.VERIFY_FIX: verify_fix_command,
    Command.APPLY_FIX: code_actions.apply_fix_command,
    Command.FIX_ALL: fix_all_command,
    Command.ADD_EXAMPLE: code_actions.add_example_command,
    Command.SHOW_EXAMPLE: code_actions.show_example_command,
    Command.NO_EXAMPLE: code_actions.no_example_command,
    Command.KERNEL_FINDINGS: code_actions.kernel_findings_command,
    Command.MIGRATE_KERNEL: migrate.migrate_command,
}
