"""workspace/executeCommand: every command of the server. Compile, launch, show the ISA,
verify a fix by compiling; fix-all (verified by compiling when the file has examples), a
quick fix, "Add a compile example" for clients that do not resolve code actions
(code_actions.py computes their edits); the lenses' messages; "Migrate this kernel"
(migrate.py verifies and reports it); the buffer's examples compiled against the file on
disk's (verified as a migration is).

:class:`Command` drives both what is advertised (``executeCommandProvider``) and the
routing (``HANDLERS``). Every compile runs in the session's one :class:`CompileService`
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
from typing import Any, Awaitable, Callable

from lsprotocol import types
from pygls.exceptions import JsonRpcContentModified, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.uris import to_fs_path

from flydsl_ls.actions.fix_verify import VerifyAborted, VerifyOutcome, verify_fixes
from flydsl_ls.actions.fixes import apply_fix
from flydsl_ls.actions.migrate import UnknownFunction
from flydsl_ls.actions.migrate import migrate as migrate_kernel
from flydsl_ls.actions.migrate_verify import CHECKED, MigrationCheck, not_compiled
from flydsl_ls.analysis.model.diagnostic import Applicability, Diagnostic, Edit, Fix
from flydsl_ls.analysis.model.text import LineIndex, Range
from flydsl_ls.checker import check_source
from flydsl_ls.compile import (
    CompileResult,
    Status,
    choose_example,
    compare_results,
    find_examples,
)
from flydsl_ls.server import code_actions, diagnostics, edits, inlay_hints, migrate, schedule
from flydsl_ls.server import compile_report as report
from flydsl_ls.server.client import Client
from flydsl_ls.server.session import Compiled, Document, Session, Snapshot
from flydsl_ls.server.work import (
    WorkProgress,
    cancel_with_request,
    reporting_compiler,
    service,
    show,
    target_arch,
    why_not_run,
)

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
    NO_EXAMPLE = "flydsl-ls.noExample"  # [reason]: the "No compile example" lens
    KERNEL_FINDINGS = "flydsl-ls.kernelFindings"  # [text]: the lens counting a kernel's findings
    MIGRATE_KERNEL = code_actions.MIGRATE_COMMAND  # the code action's and the CodeLens's (server/migrate.py)
    COMPARE_WITH_DISK = "flydsl-ls.compareWithDisk"  # [uri]: the buffer's examples against the disk's

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


def _source(session: Session, uri: str) -> Source:
    doc = session.get(uri)
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


def _arch(session: Session, source: Source, target: Target) -> str | None:
    """The arch asked for, else the example's marker, else the setting, else gfx942.
    None when there is no such example (the service reports that)."""
    if target.arch:
        return target.arch
    try:
        example = choose_example(find_examples(source.text), target.example)
    except LookupError:
        return None
    doc = source.doc or Document(source.uri, source.text, 0, source.path)
    return example.arch or target_arch(session, doc)


# --- the service, progress and cancellation -----------------------------------------------
async def _compile(
    session: Session, client: Client,
    source: Source,
    target: Target,
    arch: str | None,
    progress: WorkProgress,
    cancel: threading.Event,
    *,
    text: str | None = None,
    launch: bool = False,
    line_info: bool = False,
    label: str = "",
) -> CompileResult:
    report_progress = progress.report if not label else (lambda m: progress.report(f"{label}: {m}"))
    refused = why_not_run(session, client, source.path)
    if refused:
        raise JsonRpcInvalidRequest(refused)
    try:
        return await service(session).compile_async(
            source.path,
            target.example,
            arch,
            launch=launch,
            line_info=line_info,
            source=source.buffer if text is None else text,
            timeout=session.editor.timeout,
            progress=report_progress,
            cancel=cancel,
        )
    except asyncio.CancelledError:
        cancel.set()  # the thread's compile stops at its next poll; its worker restarts
        raise


async def _show_document(session: Session, client: Client, path: Path | None) -> str | None:
    """Ask the client to open ``path``; its URI when it did."""
    if path is None or not session.features.show_document:
        return None
    uri = path.as_uri()
    try:
        shown = await asyncio.wait_for(
            client.request(types.WINDOW_SHOW_DOCUMENT, types.ShowDocumentParams(uri=uri, take_focus=True)),
            SHOW_DOCUMENT_TIMEOUT,
        )
    except Exception as error:
        log.warning("window/showDocument %s failed: %s", uri, error)
        return None
    return uri if shown is None or getattr(shown, "success", True) else None


def _title(verb: str, source: Source, target: Target, arch: str | None) -> str:
    example = target.example or "first example"
    return f"{verb} {source.path.name}::{example}" + (f" for {arch}" if arch else "")


def _update_compile_diagnostics(session: Session, client: Client, source: Source, result: CompileResult) -> None:
    """A successful compile clears the file's compile errors, a failed one replaces them;
    a crash, timeout, cancel or missing toolchain says nothing about the source: kept."""
    if result.status is Status.OK:
        new: list[types.Diagnostic] = []
    elif result.status is Status.ERROR:
        new = report.error_diagnostics(result, source.path, source.text, session.encoding)
    else:
        return
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
        client.notify(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, types.PublishDiagnosticsParams(uri=source.uri, diagnostics=new))
    else:
        doc.published = None  # republish the lint merged with the compile errors
        diagnostics.schedule_lint(session, client, doc, 0)


# --- compile, launch, showIsa ---------------------------------------------------------------
async def _run_compile(session: Session, client: Client, command: Command, arguments: list) -> dict:
    target = parse_arguments(arguments)
    source = _source(session, target.uri)
    arch = _arch(session, source, target)
    launch = command is Command.LAUNCH
    cancel = threading.Event()
    cancel_with_request(client, cancel)
    verb = "Launching" if launch else "Compiling"
    async with WorkProgress(session, client, _title(verb, source, target, arch), cancel) as progress:
        result = await _compile(session, client, source, target, arch, progress, cancel, launch=launch, line_info=True)
        progress.end(result.status.value)
    _update_compile_diagnostics(session, client, source, result)
    if result.ok:
        session.compiled[source.uri] = Compiled(result, source.buffer)  # lenses (code_lens.py), hints (inlay_hints.py)
        if session.editor.isa_counts:
            inlay_hints.refresh(session, client)
    data = report.result_json(command.value, target.uri, result)
    text = data["message"]
    if command is Command.SHOW_ISA and result.ok and result.kernels:
        isa = result.kernels[0].isa
        data["shown"] = await _show_document(session, client, isa)
        if data["shown"] is None:
            text += "\n" + "\n".join(f"ISA of {k.name}: {k.isa}" for k in result.kernels if k.isa)
    show(client, report.message_type(result), text)
    return data


async def compile_command(session: Session, client: Client, arguments: list) -> dict:
    return await _run_compile(session, client, Command.COMPILE, arguments)


async def launch_command(session: Session, client: Client, arguments: list) -> dict:
    return await _run_compile(session, client, Command.LAUNCH, arguments)


async def show_isa_command(session: Session, client: Client, arguments: list) -> dict:
    return await _run_compile(session, client, Command.SHOW_ISA, arguments)


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


async def _find_fix(session: Session, source: Source, diagnostic: dict) -> tuple[str, dict | None, str | None]:
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
        analysis = await diagnostics.analyse(session, doc)
        encoding = session.encoding
        found = diagnostics.find(analysis, data, code, _range(diagnostic.get("range")), encoding) if analysis else None
        if found is not None and found[1].fix is not None and found[1].fix.elsewhere:
            names = ", ".join(Path(group.path).name for group in found[1].fix.elsewhere)
            return code, None, f"{code}'s fix edits {names} too, and a verification compiles this file only"
        if found is not None and found[1].fix is not None and found[1].fix.edits:
            code = found[1].code
            fix = edits.fix_data(found[1].fix, analysis.index, encoding)
    if fix is None:
        return code, None, f"{code or 'this diagnostic'} has no fix to verify"
    return code, fix, None


def _fixed_text(session: Session, text: str, fix: dict) -> str | None:
    """``text`` with the fix (edits in the client's encoding) applied; None if it would not
    parse or the fix data is malformed."""
    index = LineIndex(text)
    encoding = session.encoding
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


async def verify_fix_command(session: Session, client: Client, arguments: list) -> dict:
    target = parse_arguments(arguments, with_diagnostic=True)
    source = _source(session, target.uri)
    code, fix, problem = await _find_fix(session, source, target.diagnostic or {})
    fixed = _fixed_text(session, source.text, fix) if fix is not None else None
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
        show(client, types.MessageType.Warning, f"verify fix: {problem}")
        return {"command": Command.VERIFY_FIX.value, "status": status, "ok": False, "identical": False,
                "message": problem, "uri": target.uri, "code": code}
    arch = _arch(session, source, target)
    cancel = threading.Event()
    cancel_with_request(client, cancel)
    title = _title(f"Verifying the {code} fix:", source, target, arch)
    after = comparison = diff_file = None
    async with WorkProgress(session, client, title, cancel) as progress:
        before = await _compile(session, client, source, target, arch, progress, cancel, text=source.text, label="before")
        if before.ok and not cancel.is_set():
            after = await _compile(session, client, source, target, arch, progress, cancel, text=fixed, label="after")
        if after is not None and after.ok:
            comparison = compare_results(before, after)
            if not comparison.identical and after.dump_dir is not None:
                diff_file = after.dump_dir / "verify-fix.diff"
                diff_file.write_text(report.diff_text(comparison), encoding="utf-8")
        progress.end("identical IR" if comparison and comparison.identical else "done")
    data = report.verify_json(target.uri, code, fix, before, after, comparison, diff_file)
    text = data["message"]
    if diff_file is not None:
        data["shown"] = await _show_document(session, client, diff_file)
        if data["shown"] is None:
            text += f"\ndiff: {diff_file}"
    kind = types.MessageType.Info if data["ok"] else types.MessageType.Error
    show(client, kind, text)
    return data


# --- fix-all, verified by compiling ----------------------------------------------------------
FIX_ALL_VERIFY_LIMIT = 600.0  # seconds for a whole verified fix-all (each compile: compileTimeout)


def _has_examples(text: str) -> bool:
    return bool(code_actions.EXAMPLE_MARKER.search(text)) and bool(find_examples(text))


async def fix_all_command(session: Session, client: Client, arguments: list) -> dict:
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
    doc, analysis = await code_actions.analysis_of(session, arguments[0], arguments[1])
    if not _has_examples(analysis.text):
        return await _fix_all_unverified(session, client, arguments)
    version, text = analysis.version, analysis.text
    name = doc.path.name if doc.path is not None else doc.uri
    cancel = threading.Event()
    cancel_with_request(client, cancel)
    outcome, problem = await _verify_fix_all(session, client, doc, text, cancel)
    if outcome is None and cancel.is_set() and problem == "cancelled":
        message = f"fix-all of {name} cancelled: nothing changed"
        show(client, types.MessageType.Warning, message)
        return {"applied": False, "verified": False, "status": "cancelled", "message": message}
    if outcome is None or not outcome.verified:
        why = problem or (outcome.summary(name) if outcome is not None else "")
        result = await _fix_all_unverified(session, client, arguments)
        message = f"fix-all of {name} not verified ({why}); the safe fixes were applied unverified"
        if not result.get("applied"):
            message = f"fix-all of {name} not verified ({why}); nothing was changed"
        show(client, types.MessageType.Warning, message)
        return {**result, "verified": False, "status": "not verified", "message": message}
    features = session.features
    edit = edits.minimal_edit(doc.uri, version, text, outcome.text, features.encoding, features.document_changes)
    result = await _apply(client, doc, version, edit, code_actions.FIX_ALL_TITLE)
    lines = [outcome.summary(name)]
    lines += [f"{d.fix.code} (line {d.fix.line}) not applied: it {d.reason}" for d in outcome.dropped]
    lines += [f"example {note}; verified with the others" for note in outcome.notes]
    message = "fix-all of " + "\n".join(lines)
    show(client, types.MessageType.Warning if outcome.dropped else types.MessageType.Info, message)
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


async def _fix_all_unverified(session: Session, client: Client, arguments: list) -> dict:
    """Every safe fix of version ``arguments[1]``, sent with workspace/applyEdit."""
    doc, analysis = await code_actions.analysis_of(session, arguments[0], arguments[1])
    edit = await code_actions.fix_all_edit(session, doc, analysis)
    return await _apply(client, doc, analysis.version, edit, code_actions.FIX_ALL_TITLE)


async def _verify_fix_all(
    session: Session, client: Client, doc: Document, text: str, cancel: threading.Event
) -> tuple[VerifyOutcome | None, str]:
    """(the verified fix-all of ``text``, "") or (None, why it could not run)."""
    refused = why_not_run(session, client, doc.path) if doc.path is not None else "the document is not a file"
    if refused:
        return None, refused
    compiler = service(session)
    toolchain = await asyncio.to_thread(compiler.toolchain)
    if not toolchain.ok:
        return None, "the compiler is not installed: " + toolchain.problem().replace("\n", " ")
    lint = _linter(session.snapshot(doc, text))
    timeout = session.editor.timeout
    deadline = time.monotonic() + FIX_ALL_VERIFY_LIMIT
    path = doc.path

    def stopped() -> bool:
        return cancel.is_set() or time.monotonic() > deadline

    title = f"Verifying the fix-all of {doc.path.name if doc.path else doc.uri}"
    async with WorkProgress(session, client, title, cancel) as progress:
        compile_text, compile_lines = reporting_compiler(compiler, path, progress, timeout, stopped)
        try:
            outcome = await asyncio.to_thread(
                verify_fixes,
                text,
                lint,
                compile_text,
                unsafe=False,
                default_arch=target_arch(session, doc),
                cancelled=stopped,
                compile_lines=compile_lines,
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


def _linter(snap: Snapshot) -> Callable[[str], list[Diagnostic]]:
    """Lint a text as the snapshot's document (its path and settings) on the actions thread:
    the many lints of a fix-all or a migration, off the event loop and the lint thread."""

    def lint(source: str) -> list[Diagnostic]:
        job = schedule.ACTIONS.submit(check_source, source, snap.path, snap.settings, snap.project, keep_model=False)
        return job.result().diagnostics

    return lint


# --- the edits of code actions, for clients that do not resolve them ----------------------------
async def _apply(client: Client, doc: Document, version: int, edit: types.WorkspaceEdit | None, label: str) -> dict:
    if doc.version != version:
        raise JsonRpcContentModified(code_actions.STALE)
    if edit is None:
        return {"applied": False, "message": "nothing to change"}
    result = await client.request(types.WORKSPACE_APPLY_EDIT, types.ApplyWorkspaceEditParams(edit=edit, label=label))
    applied = bool(result and result.applied)
    if not applied:
        log.info("%s: the client did not apply the edit: %s", label, getattr(result, "failure_reason", None))
    return {"applied": applied}


async def apply_fix_command(session: Session, client: Client, arguments: list) -> dict:
    """``flydsl-ls.applyFix [uri, version, index]``: the quick fix of diagnostic ``index``
    of that version, sent with workspace/applyEdit."""
    if len(arguments) != 3 or not isinstance(arguments[2], int):
        raise JsonRpcInvalidParams("expected [uri, version, index]")
    uri, version, position = arguments
    doc, analysis = await code_actions.analysis_of(session, uri, version)
    if not 0 <= position < len(analysis.result.diagnostics):
        raise JsonRpcInvalidParams(f"no diagnostic {position} in version {version}")
    fix = analysis.result.diagnostics[position].fix
    edit = await code_actions.quick_fix_edit(session, doc, analysis, position)
    return await _apply(client, doc, version, edit, fix.title if fix else "flydsl-ls fix")


def _named_in(session: Session, arguments: list) -> tuple[Document, str]:
    """``[uri, version, name]``: the document, still at ``version`` (null: any), and the name."""
    if len(arguments) != 3 or not isinstance(arguments[2], str):
        raise JsonRpcInvalidParams("expected [uri, version, name]")
    uri, version, name = arguments
    doc = session.get(str(uri))
    if doc is None or (version is not None and doc.version != version):
        raise JsonRpcContentModified(code_actions.STALE)
    return doc, name


async def add_example_command(session: Session, client: Client, arguments: list) -> dict:
    """``flydsl-ls.addExample [uri, version, name]``: insert the example with workspace/applyEdit
    (``version`` null: the current one)."""
    doc, name = _named_in(session, arguments)
    version = doc.version
    added = await code_actions.add_example_edit(session, doc, name)
    if added is None:
        return {"applied": False, "message": f"no compile example can be written for `{name}`"}
    result = await _apply(client, doc, version, added.edit, code_actions.ADD_EXAMPLE_TITLE.format(name=name))
    if result["applied"]:
        result["shown"] = await code_actions.reveal(session, client, doc.uri, added.line, added.example)
    return result


async def no_example_command(session: Session, client: Client, arguments: list) -> dict:
    """``flydsl-ls.noExample [reason]``: the "No compile example" lens, clicked: say why there
    is none and what to do, in a message (a lens whose command is empty sends "" to the server
    from Neovim)."""
    if len(arguments) != 1 or not isinstance(arguments[0], str):
        raise JsonRpcInvalidParams("expected [reason]")
    show(
        client,
        types.MessageType.Info,
        f"no compile example can be added: {arguments[0]}. Write a `# flydsl: example` function that "
        "returns (launcher, args) by hand where a kernel is launched (docs/compile.md)",
    )
    return {"shown": True}


async def kernel_findings_command(session: Session, client: Client, arguments: list) -> dict:
    """``flydsl-ls.kernelFindings [text]``: the lens counting a kernel's legacy findings,
    clicked: its findings per rule, in a message."""
    if len(arguments) != 1 or not isinstance(arguments[0], str):
        raise JsonRpcInvalidParams("expected [text]")
    show(client, types.MessageType.Info, arguments[0])
    return {"shown": True}


async def show_example_command(session: Session, client: Client, arguments: list) -> dict:
    """``flydsl-ls.showExample [uri, name]``: reveal the example ``name`` (the command of a
    resolved "Add a compile example", run once the client applied its edit)."""
    if len(arguments) != 2 or not isinstance(arguments[1], str):
        raise JsonRpcInvalidParams("expected [uri, name]")
    uri, name = arguments
    doc = session.get(str(uri))
    example = next((e for e in find_examples(doc.text) if e.name == name), None) if doc else None
    if example is None:
        return {"shown": False, "message": f"no example `{name}` in the document"}
    return {"shown": await code_actions.reveal(session, client, doc.uri, example.line - 1, name)}


# --- "Migrate this kernel" ----------------------------------------------------------------------
async def migrate_command(session: Session, client: Client, arguments: list) -> dict:
    """``flydsl-ls.migrateKernel [uri, version, name]``: migrate (server/migrate.py), verify
    when the file has examples, apply with workspace/applyEdit."""
    doc, name = _named_in(session, arguments)
    version, text = doc.version, doc.text
    try:
        migration = await asyncio.to_thread(migrate_kernel, text, _linter(session.snapshot(doc)), name)
    except (UnknownFunction, SyntaxError) as error:
        message = f"migrate {name}: {error}"
        show(client, types.MessageType.Warning, message)
        return {"applied": False, "message": message}
    label = f"Migrate {name}"
    summary = migrate.summary(name, migration)
    if not migration.changed:
        show(client, types.MessageType.Info, summary)
        return {"applied": False, "message": summary, **migrate.counts(migration)}
    check: MigrationCheck | None = None
    if find_examples(text):
        cancel = threading.Event()
        cancel_with_request(client, cancel)
        title = f"Verifying the migration of {doc.path.name if doc.path else doc.uri}"
        check, problem = await migrate.verify(session, client, doc, migration.source, migration.text, cancel, title)
        if check is None or check.status != CHECKED:
            why = problem or "; ".join(check.problems) or "no example compiles before the migration"
            message = "\n".join([f"{summary}: not applied ({why})", *(check.lines() if check else [])])
            show(client, types.MessageType.Warning, message)
            return {"applied": False, "verified": False, "message": message, **migrate.report(check), **migrate.counts(migration)}
    features = session.features
    edit = edits.minimal_edit(doc.uri, version, text, migration.text, features.encoding, features.document_changes)
    result = await _apply(client, doc, version, edit, label)
    lines = [summary + ("" if result.get("applied") else ": the editor did not apply it")]
    if check is not None:
        lines += check.lines()
        unreached = not_compiled(migration)
        if unreached:
            lines.append(f"no example reaches {', '.join(unreached)}: the fixes there were not compiled")
    else:
        lines.append("not verified: the file has no `# flydsl: example` (the \"Add compile example\" CodeLens adds one)")
    message = "\n".join(lines)
    show(client, types.MessageType.Info, message)
    return {**result, "verified": check is not None, "message": message, **migrate.report(check), **migrate.counts(migration)}


# --- the buffer against the file on disk -----------------------------------------------------
async def compare_with_disk_command(session: Session, client: Client, arguments: list) -> dict:
    """``flydsl-ls.compareWithDisk [uri]``: the examples of the file on disk compiled from its
    text and from the open buffer's (actions/migrate_verify.py, as a migration is verified):
    per kernel the verdict, the resources before -> after and, where the ISA differs, which
    source lines' instructions changed. The report is written beside the compile dumps and
    shown (its first line is the message's: VS Code shows no more)."""
    target = parse_arguments(arguments)
    doc = session.get(target.uri)
    if doc is None or doc.path is None:
        raise JsonRpcInvalidParams(f"compareWithDisk compares an open file with the file on disk, not {target.uri}")
    name = doc.path.name

    def said(status: str, text: str, kind=types.MessageType.Warning, **more) -> dict:
        message = f"compare with disk: {text}"
        show(client, kind, message)
        return {"command": Command.COMPARE_WITH_DISK.value, "status": status, "message": message, **more}

    try:
        disk = doc.path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return said("failed", f"cannot read {doc.path}: {error}")
    if disk == doc.text:
        return said("unchanged", f"{name} has no unsaved change", types.MessageType.Info)
    if not find_examples(disk):
        return said("no examples", f"{name} on disk has no `# flydsl: example` to compile (docs/compile.md)")
    cancel = threading.Event()
    cancel_with_request(client, cancel)
    title = f"Comparing {name} with the file on disk"
    check, problem = await migrate.verify(session, client, doc, disk, doc.text, cancel, title, "the unsaved changes")
    if check is None:
        return said("failed", problem)
    lines = [f"{name}, unsaved changes against the file on disk: {line}" for line in check.lines()[:1]]
    lines += check.lines()[1:] or ([] if lines else ["nothing compiled"])
    report_file = service(session).cache / "compare" / f"{doc.path.stem}-against-disk.txt"
    report_file.parent.mkdir(parents=True, exist_ok=True)
    report_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    kind = types.MessageType.Warning if check.problems else types.MessageType.Info
    data = {**said(check.status, "\n".join(lines), kind), **migrate.report(check), "report": str(report_file)}
    data["shown"] = await _show_document(session, client, report_file)
    return data


HANDLERS: dict[Command, Callable[[Session, Client, list], Awaitable[dict]]] = {
    Command.COMPILE: compile_command,
    Command.LAUNCH: launch_command,
    Command.SHOW_ISA: show_isa_command,
    Command.VERIFY_FIX: verify_fix_command,
    Command.APPLY_FIX: apply_fix_command,
    Command.FIX_ALL: fix_all_command,
    Command.ADD_EXAMPLE: add_example_command,
    Command.SHOW_EXAMPLE: show_example_command,
    Command.NO_EXAMPLE: no_example_command,
    Command.KERNEL_FINDINGS: kernel_findings_command,
    Command.MIGRATE_KERNEL: migrate_command,
    Command.COMPARE_WITH_DISK: compare_with_disk_command,
}
