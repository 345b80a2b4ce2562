"""A quick fix that edits another project file too (FLY203 migrating a kernel and the
helper of another module it hands its LDS to; tests/fixtures/two_modules, ours): its
WorkspaceEdit has one document edit per file, on the open buffer when there is one."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

from tests.server.helpers import REPO, apply, change_doc, diagnostics, encoding_of, lsp, open_doc
from tests.server.test_protocol import code_actions, resolved

FIXTURE = REPO / "tests" / "fixtures" / "two_modules"
KERNEL_FIXED = (FIXTURE / "kernel.migrated.txt").read_text(encoding="utf-8")
EPILOGUES_FIXED = (FIXTURE / "epilogues.migrated.txt").read_text(encoding="utf-8")


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    shutil.copytree(FIXTURE / "pkg", root / "pkg")
    return root


async def _migrate_action(client, uri, version=1):
    diags = [d for d in await diagnostics(client, uri, version) if d.code == "FLY203"]
    assert diags, "no FLY203 finding"
    actions = await code_actions(client, uri, diags[:1])
    (action,) = [a for a in actions if a.title.startswith("Migrate to SharedAllocator")]
    return await resolved(client, action)


def _edited_uris(edit) -> list[str]:
    if edit.document_changes:
        return [change.text_document.uri for change in edit.document_changes]
    return list((edit.changes or {}).keys())


async def test_the_quick_fix_edits_the_helper_on_disk_too(spec, tmp_path):
    root = _project(tmp_path)
    kernel, epilogues = root / "pkg" / "kernel.py", root / "pkg" / "epilogues.py"
    async with lsp(spec, root) as client:
        uri = open_doc(client, kernel)
        action = await _migrate_action(client, uri)
        encoding = encoding_of(client)
        assert sorted(_edited_uris(action.edit)) == sorted([uri, epilogues.as_uri()])
        if action.edit.document_changes:  # the helper is not open: no version to check against
            (other,) = [c for c in action.edit.document_changes if c.text_document.uri == epilogues.as_uri()]
            assert other.text_document.version is None
        assert apply(kernel.read_text(encoding="utf-8"), action.edit, uri, encoding) == KERNEL_FIXED
        assert apply(epilogues.read_text(encoding="utf-8"), action.edit, epilogues.as_uri(), encoding) == EPILOGUES_FIXED


async def test_an_open_helper_is_edited_at_its_buffer_version(spec, tmp_path):
    root = _project(tmp_path)
    kernel, epilogues = root / "pkg" / "kernel.py", root / "pkg" / "epilogues.py"
    async with lsp(spec, root) as client:
        other_uri = open_doc(client, epilogues, version=7)
        uri = open_doc(client, kernel)
        action = await _migrate_action(client, uri)
        encoding = encoding_of(client)
        if action.edit.document_changes:
            (other,) = [c for c in action.edit.document_changes if c.text_document.uri == other_uri]
            assert other.text_document.version == 7
        assert apply(epilogues.read_text(encoding="utf-8"), action.edit, other_uri, encoding) == EPILOGUES_FIXED


async def test_a_helper_changed_in_its_buffer_withholds_the_whole_fix(spec, tmp_path):
    # the edits were computed on the disk text: on the edited buffer they are stale
    root = _project(tmp_path)
    kernel, epilogues = root / "pkg" / "kernel.py", root / "pkg" / "epilogues.py"
    async with lsp(spec, root) as client:
        changed = epilogues.read_text(encoding="utf-8") + "\n# edited, not saved\n"
        open_doc(client, epilogues, text=changed, version=2)
        uri = open_doc(client, kernel)
        diags = [d for d in await diagnostics(client, uri, 1) if d.code == "FLY203"]
        actions = await code_actions(client, uri, diags[:1])
        migrate = [a for a in actions if a.title.startswith("Migrate to SharedAllocator")]
        assert migrate  # offered (its edit is computed when picked)
        for action in migrate:
            edit = (await resolved(client, action)).edit
            assert edit is None or not any(
                e for change in (edit.document_changes or ()) for e in change.edits
            ) and not any((edit.changes or {}).values())


async def test_after_an_edit_above_the_kernel_the_fix_still_spans_both_files(spec, tmp_path):
    # the incremental analysis moves a finding below an edit: its other-file edits go with it
    root = _project(tmp_path)
    kernel, epilogues = root / "pkg" / "kernel.py", root / "pkg" / "epilogues.py"
    async with lsp(spec, root) as client:
        uri = open_doc(client, kernel)
        await diagnostics(client, uri, 1)
        edited = "# a comment above\n" + kernel.read_text(encoding="utf-8")
        change_doc(client, uri, 2, edited)
        action = await _migrate_action(client, uri, 2)
        encoding = encoding_of(client)
        assert sorted(_edited_uris(action.edit)) == sorted([uri, epilogues.as_uri()])
        assert apply(edited, action.edit, uri, encoding) == "# a comment above\n" + KERNEL_FIXED
        assert apply(epilogues.read_text(encoding="utf-8"), action.edit, epilogues.as_uri(), encoding) == EPILOGUES_FIXED


async def test_the_next_server_reads_the_scans_back_and_rebuilds_a_broken_store(spec, tmp_path):
    """What a server's index scanned of the workspace is kept (flydsl_ls/scan_store.py); the
    next server's findings are the same, and so are those of one whose store was cut short."""
    root = _project(tmp_path)
    kernel, helpers = root / "pkg" / "kernel.py", root / "pkg" / "reducing.py"
    # a helper taking a module from its caller in another file: that file is scanned
    helpers.write_text("def reduce(m, a, b):\n    return m.arith.maximumf(a, b)\n", encoding="utf-8")
    (root / "pkg" / "caller.py").write_text(
        "import flydsl.expr as fx\n\nfrom .reducing import reduce\n\n\ndef k(a, b):\n    return reduce(fx, a, b)\n",
        encoding="utf-8",
    )
    env = {"FLYDSL_LS_CACHE": str(tmp_path / "cache")}
    found = []
    for broken in (False, False, True):
        if broken:
            (store,) = (tmp_path / "cache" / "scans").glob("*.pickle")
            store.write_bytes(store.read_bytes()[:20])
        async with lsp(spec, root, env=env) as client:
            await diagnostics(client, open_doc(client, helpers))
            found.append(sorted((d.code, d.range.start.line) for d in await diagnostics(client, open_doc(client, kernel))))
    (store,) = (tmp_path / "cache" / "scans").glob("*.pickle")
    entries = pickle.loads(store.read_bytes())
    assert str((root / "pkg" / "caller.py").resolve()) in entries  # scanned as the helper's caller
    assert "FLY203" in {code for code, _ in found[0]} and found[0] == found[1] == found[2]
