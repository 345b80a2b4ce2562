"""``flydsl-ls.migrateKernel [uri, version, name]``: "Migrate this kernel" (the CodeLens of
server/code_lens.py and the ``refactor.rewrite.migrateKernel.flydsl-ls`` code action of
server/code_actions.py), the engine of ``flydsl-ls migrate`` (actions/migrate.py).

Every fix, unsafe ones included, in the kernel ``name`` and the helpers only it uses, to a
fixpoint, linted on the server's analysis thread with the document's settings. In a file
with ``# flydsl: example`` functions the examples are compiled before and after
(actions/migrate_verify.py, in the session's compile worker, off the event loop, with
work-done progress, cancellable, each compile within ``compileTimeout``): the migration is
applied only when every example still compiles and no kernel's LDS or scratch grows; the
verdicts per kernel (identical / ISA-identical / ISA differs) and the resources before ->
after are shown with window/showMessage and returned. When the examples cannot be compiled
(no compiler, none compiles before), nothing is applied and the message says why: the fixes
include unsafe ones. A file without examples is migrated unverified, as the CLI does
without ``--verify``, and the message says how to add an example.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcContentModified, JsonRpcInvalidParams

from flydsl_ls.actions.fix_verify import VerifyAborted
from flydsl_ls.actions.migrate import Migration, UnknownFunction, migrate
from flydsl_ls.actions.migrate_verify import CHECKED, MigrationCheck, not_compiled, verify_migration
from flydsl_ls.checker import check_source
from flydsl_ls.compile import find_examples
from flydsl_ls.server import code_actions
from flydsl_ls.server.work import WorkProgress, cancel_with_request, reporting_compiler, service, show, target_arch, why_not_run

if TYPE_CHECKING:
    from flydsl_ls.server.app import FlyServer
    from flydsl_ls.server.session import Document

MIGRATE_VERIFY_LIMIT = 600.0  # seconds for the compiles of one migration


async def migrate_command(server: FlyServer, arguments: list) -> dict:
    """Migrate, verify when the file has examples, apply with workspace/applyEdit."""
    if len(arguments) != 3 or not isinstance(arguments[2], str):
        raise JsonRpcInvalidParams("expected [uri, version, name]")
    uri, version, name = arguments
    doc = server.session.get(str(uri))
    if doc is None or (version is not None and doc.version != version):
        raise JsonRpcContentModified(code_actions.STALE)
    version, text = doc.version, doc.text
    snap = server.session.snapshot(doc)
    worker = server.worker

    def lint(source: str):
        # on the server's analysis thread, like every other lint, with the snapshot's settings
        return worker.submit(check_source, source, snap.path, snap.settings, snap.project, keep_model=False).result().diagnostics

    try:
        migration = await asyncio.to_thread(migrate, text, lint, name)
    except (UnknownFunction, SyntaxError) as error:
        message = f"migrate {name}: {error}"
        show(server, types.MessageType.Warning, message)
        return {"applied": False, "message": message}
    label = f"Migrate {name}"
    summary = _summary(name, migration)
    if not migration.changed:
        show(server, types.MessageType.Info, summary)
        return {"applied": False, "message": summary, **_counts(migration)}
    check: MigrationCheck | None = None
    if find_examples(text):
        cancel = threading.Event()
        cancel_with_request(server, cancel)
        check, problem = await _verify(server, doc, migration, cancel)
        if check is None or check.status != CHECKED:
            why = problem or "; ".join(check.problems) or "no example compiles before the migration"
            message = "\n".join([f"{summary}: not applied ({why})", *(check.lines() if check else [])])
            show(server, types.MessageType.Warning, message)
            return {"applied": False, "verified": False, "message": message, **_report(check), **_counts(migration)}
    edit = code_actions.text_edit(server, doc, text, migration.text, version)
    result = await code_actions._apply(server, doc, version, edit, label)
    lines = [summary + ("" if result.get("applied") else ": the editor did not apply it")]
    if check is not None:
        lines += check.lines()
        unreached = not_compiled(migration)
        if unreached:
            lines.append(f"no example reaches {', '.join(unreached)}: the fixes there were not compiled")
    else:
        lines.append("not verified: the file has no `# flydsl: example` (the \"Add compile example\" CodeLens adds one)")
    message = "\n".join(lines)
    show(server, types.MessageType.Info, message)
    return {**result, "verified": check is not None, "message": message, **_report(check), **_counts(migration)}


def _summary(name: str, migration: Migration) -> str:
    helpers = migration.scope.helpers
    where = name + (f" and {len(helpers)} helper{'s' if len(helpers) != 1 else ''} only it uses" if helpers else "")
    if not migration.count:
        return f"migrate {where}: nothing to fix ({len(migration.before)} finding(s) in scope without a fix)"
    per_rule = ", ".join(f"{code} {n}" for code, n in sorted(migration.applied.items()))
    return (
        f"migrate {where}: {migration.count} fix{'es' if migration.count != 1 else ''} ({per_rule}); "
        f"findings in scope {len(migration.before)} -> {len(migration.after)}"
    )


def _counts(migration: Migration) -> dict:
    return {
        "fixes": dict(migration.applied),
        "helpers": list(migration.scope.helpers),
        "findings": {"before": len(migration.before), "after": len(migration.after)},
    }


def _report(check: MigrationCheck | None) -> dict:
    if check is None:
        return {}
    kernels = []
    for k in check.kernels:
        item = {"example": k.example, "arch": k.arch, "kernel": k.kernel, "verdict": k.verdict, "resources": k.resources()}
        if k.isa_lines is not None:
            item["isa"] = {"before": k.isa_lines[0], "after": k.isa_lines[1]}
        kernels.append(item)
    return {"status": check.status, "kernels": kernels, "problems": list(check.problems), "compiles": check.compiles}


async def _verify(
    server: FlyServer, doc: Document, migration: Migration, cancel: threading.Event
) -> tuple[MigrationCheck | None, str]:
    """(the compiles' verdicts, "") or (None, why they could not run)."""
    if doc.path is None:
        return None, "the document is not a file: its examples cannot be compiled"
    refused = why_not_run(server, doc.path)
    if refused:
        return None, refused
    compiler = service(server)
    toolchain = await asyncio.to_thread(compiler.toolchain)
    if not toolchain.ok:
        return None, "the examples cannot be compiled: " + toolchain.problem().replace("\n", " ")
    timeout = server.session.editor.timeout
    deadline = time.monotonic() + MIGRATE_VERIFY_LIMIT
    path = doc.path

    def stopped() -> bool:
        return cancel.is_set() or time.monotonic() > deadline

    title = f"Verifying the migration of {doc.path.name}"
    async with WorkProgress(server, title, cancel) as progress:
        compile_text = reporting_compiler(compiler, path, progress, timeout, stopped)
        try:
            check = await asyncio.to_thread(
                verify_migration, migration.source, migration.text, compile_text, target_arch(server, doc)
            )
        except VerifyAborted as error:
            if cancel.is_set():
                return None, "cancelled"
            if time.monotonic() > deadline:
                return None, f"it took more than {MIGRATE_VERIFY_LIMIT:g} s"
            return None, str(error)
        except asyncio.CancelledError:
            cancel.set()
            raise
        progress.end(check.status)
    return check, ""
