"""Work done on a worker thread (the lint, inlay hints, a quick fix's edit, the fix-all edit,
hover's API docs) gets an immutable ``Snapshot`` of the document taken on the event loop, never the
server: the server's state belongs to the loop, and what the work reports comes back as its
return value.

Two checks: every call that hands work to a thread in the server package hands one of the
known worker functions, none of which takes the server, the session or a document; and the
real handlers, run in-process with recording executors, pass a frozen Snapshot and nothing
from which the server can be reached."""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.lsp.server import LanguageServer

from flydsl_ls import apidocs
from flydsl_ls.analysis.model.semantic import SemanticModel
from flydsl_ls.scan_store import ScanStore
from flydsl_ls.server import code_actions, code_lens, diagnostics, documents, inlay_hints, schedule
from flydsl_ls.server.app import create_server
from flydsl_ls.server.session import Document, HintsModel, Session, Snapshot
from tests.server.helpers import KERNEL

SERVER_PACKAGE = Path(diagnostics.__file__).parent
# The functions the server runs on its worker threads (the lint, code-actions and docs threads).
WORKER_FUNCTIONS = {
    "lint": diagnostics.lint,
    "_quick_fix_edit": code_actions._quick_fix_edit,
    "_fix_all_edit": code_actions._fix_all_edit,
    "_add_example_edit": code_actions._add_example_edit,
    "lens_targets": code_lens.lens_targets,
    "migrate_targets": code_lens.migrate_targets,
    "_migrate_actions": code_actions._migrate_actions,
    "check_source": None,  # commands._verify_fix_all: the library function, on snapshot fields
    "apidocs.lookup": apidocs.lookup,  # hover's docs, by symbol and release
    "apidocs.warm_up": apidocs.warm_up,  # their loading, before the first hover
    "hints_json": inlay_hints.hints_json,
    "old.dispose": SemanticModel.dispose,  # the inlay hints' model of an older text
    "self.hints.release": HintsModel.release,  # ... or of a document closed or dropped
    "session.hinted.hints.release": HintsModel.release,  # ... or of another document
    "snap.project.store.save": ScanStore.save,  # what a lint scanned, written for the next server
}
LOOP_TYPES = ("FlyServer", "LanguageServer", "Session", "Document")


def _handed_to_threads() -> list[tuple[str, int, str]]:
    """(file, line, function name) of each ``run_in_executor(executor, f, ...)`` and
    ``executor.submit(f, ...)`` in the server package (``asyncio.to_thread`` runs the compile
    service's own methods and the fix verifier, outside this check)."""
    found = []
    for path in sorted(SERVER_PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            if node.func.attr == "run_in_executor" and len(node.args) >= 2:
                target = node.args[1]
            elif node.func.attr == "submit" and node.args:
                target = node.args[0]
            else:
                continue
            name = target.id if isinstance(target, ast.Name) else ast.unparse(target)
            found.append((path.name, node.lineno, name))
    return found


def test_every_worker_function_is_known_and_takes_no_server():
    handed = _handed_to_threads()
    assert len(handed) >= 5  # lint, quick fix, fix-all, fix-all verification, hover's docs (and their warm-up)
    unknown = [h for h in handed if h[2] not in WORKER_FUNCTIONS]
    assert not unknown, f"work handed to a thread that is not a known snapshot function: {unknown}"
    for name, function in WORKER_FUNCTIONS.items():
        if function is None:
            continue
        for parameter in inspect.signature(function).parameters.values():
            annotation = str(parameter.annotation)
            assert not any(t in annotation for t in LOOP_TYPES), (name, parameter)
            assert parameter.name not in ("server", "session", "doc"), (name, parameter)


class RecordingExecutor(ThreadPoolExecutor):
    """A real one-thread executor that keeps what it was handed."""

    def __init__(self):
        super().__init__(max_workers=1)
        self.calls: list[tuple] = []

    def submit(self, fn, /, *args, **kwargs):
        self.calls.append((fn, args, kwargs))
        return super().submit(fn, *args, **kwargs)


def _reaches(value, kinds: tuple[type, ...], depth: int = 0) -> bool:
    """Whether ``value`` is, holds (containers, dataclass fields) or closes over (closure
    cells, bound methods, partials) an instance of ``kinds``."""
    if isinstance(value, kinds):
        return True
    if depth > 4:
        return False
    inner: list = []
    if isinstance(value, (tuple, list, set, frozenset)):
        inner = list(value)
    elif isinstance(value, dict):
        inner = list(value.values())
    elif isinstance(value, functools.partial):
        inner = [value.func, *value.args, *value.keywords.values()]
    elif inspect.ismethod(value):
        inner = [value.__self__]
    elif inspect.isfunction(value):
        inner = [cell.cell_contents for cell in value.__closure__ or ()]
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        inner = [getattr(value, f.name) for f in dataclasses.fields(value)]
    return any(_reaches(v, kinds, depth + 1) for v in inner)


async def test_the_handlers_hand_workers_a_frozen_snapshot(monkeypatch, tmp_path):
    linter, actions = RecordingExecutor(), RecordingExecutor()
    monkeypatch.setattr(schedule, "LINT", linter)
    monkeypatch.setattr(schedule, "ACTIONS", actions)
    monkeypatch.setattr(diagnostics, "schedule_lint", lambda *args: None)  # lint when asked, below
    server = create_server()
    session, client = server.session, server.client
    path = tmp_path / "kernel.py"
    path.write_text(KERNEL)
    uri = path.as_uri()
    item = types.TextDocumentItem(uri=uri, language_id="python", version=1, text=KERNEL)
    documents.did_open(session, client, types.DidOpenTextDocumentParams(item))
    doc = session.get(uri)

    analysis = await diagnostics.analyse(session, doc)
    assert analysis is not None and analysis.version == 1 and analysis.result.diagnostics
    fixable = [i for i, d in enumerate(analysis.result.diagnostics) if d.fix is not None and d.fix.edits]
    assert fixable
    quick = await code_actions.quick_fix_edit(session, doc, analysis, fixable[0])
    whole = await code_actions.fix_all_edit(session, doc, analysis)
    assert quick is not None and whole is not None
    everything = types.Range(types.Position(0, 0), types.Position(30, 0))
    hints = await inlay_hints.inlay_hints(session, client, types.InlayHintParams(types.TextDocumentIdentifier(uri), everything))
    assert ": Int32" in hints.text

    calls = linter.calls + actions.calls
    assert [fn.__name__ for fn, _, _ in calls] == ["lint", "hints_json", "_quick_fix_edit", "_fix_all_edit"]
    for fn, args, kwargs in calls:
        snap = args[0]
        assert isinstance(snap, Snapshot) and (snap.uri, snap.version) == (uri, 1)
        with pytest.raises(dataclasses.FrozenInstanceError):
            snap.version = 2  # type: ignore[misc]
        assert snap.project is session.project  # the one shared, thread-safe index
        assert not any(isinstance(a, (LanguageServer, Session, Document)) for a in args), fn.__name__
        # Nothing handed over leads back to the server (the lint's "still current?" check
        # reads the document's version and the settings generation, no more).
        assert not _reaches((args, kwargs), (LanguageServer,)), fn.__name__
    linter.shutdown()
    actions.shutdown()
