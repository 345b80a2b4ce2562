"""What ``flydsl-ls.migrateKernel [uri, version, name]`` (server/commands.py) reports and how it
verifies: "Migrate this kernel" (the CodeLens of server/code_lens.py and the
``refactor.rewrite.migrateKernel.flydsl-ls`` code action of server/code_actions.py), the engine
of ``flydsl-ls migrate`` (actions/migrate.py).

Every fix, unsafe ones included, in the kernel ``name`` and the helpers only it uses, to a
fixpoint, linted on the actions thread (schedule.py) with the document's settings. In a file
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

from flydsl_ls.actions.fix_verify import VerifyAborted
from flydsl_ls.actions.migrate import Migration
from flydsl_ls.actions.migrate_verify import MigrationCheck, verify_migration
from flydsl_ls.server.client import Client
from flydsl_ls.server.session import Document, Session
from flydsl_ls.server.work import WorkProgress, reporting_compiler, service, target_arch, why_not_run

MIGRATE_VERIFY_LIMIT = 600.0  # seconds for the compiles of one migration


def summary(name: str, migration: Migration) -> str:
    helpers = migration.scope.helpers
    where = name + (f" and {len(helpers)} helper{'s' if len(helpers) != 1 else ''} only it uses" if helpers else "")
    if not migration.count:
        return f"migrate {where}: nothing to fix ({len(migration.before)} finding(s) in scope without a fix)"
    per_rule = ", ".join(f"{code} {n}" for code, n in sorted(migration.applied.items()))
    return (
        f"migrate {where}: {migration.count} fix{'es' if migration.count != 1 else ''} ({per_rule}); "
        f"findings in scope {len(migration.before)} -> {len(migration.after)}"
    )


def counts(migration: Migration) -> dict:
    return {
        "fixes": dict(migration.applied),
        "helpers": list(migration.scope.helpers),
        "findings": {"before": len(migration.before), "after": len(migration.after)},
    }


def report(check: MigrationCheck | None) -> dict:
    if check is None:
        return {}
    kernels = []
    for k in check.kernels:
        item = {"example": k.example, "arch": k.arch, "kernel": k.kernel, "verdict": k.verdict, "resources": k.resources()}
        if k.isa_lines is not None:
            item["isa"] = {"before": k.isa_lines[0], "after": k.isa_lines[1]}
        if k.line_changes:
            item["isaByLine"] = [change.describe() for change in k.line_changes]
        kernels.append(item)
    return {"status": check.status, "kernels": kernels, "problems": list(check.problems), "compiles": check.compiles}


async def verify(
    session: Session,
    client: Client,
    doc: Document,
    before: str,
    after: str,
    cancel: threading.Event,
    title: str,
    change: str = "the migration",
) -> tuple[MigrationCheck | None, str]:
    """(the compiles' verdicts on ``before`` -> ``after``, "") or (None, why they could not
    run); where a kernel's ISA differs, which source lines' (two more compiles)."""
    if doc.path is None:
        return None, "the document is not a file: its examples cannot be compiled"
    refused = why_not_run(session, client, doc.path)
    if refused:
        return None, refused
    compiler = service(session)
    toolchain = await asyncio.to_thread(compiler.toolchain)
    if not toolchain.ok:
        return None, "the examples cannot be compiled: " + toolchain.problem().replace("\n", " ")
    timeout = session.editor.timeout
    deadline = time.monotonic() + MIGRATE_VERIFY_LIMIT
    path = doc.path

    def stopped() -> bool:
        return cancel.is_set() or time.monotonic() > deadline

    async with WorkProgress(session, client, title, cancel) as progress:
        compile_text, compile_lines = reporting_compiler(compiler, path, progress, timeout, stopped)
        try:
            check = await asyncio.to_thread(
                verify_migration, before, after, compile_text, target_arch(session, doc), compile_lines, change
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
