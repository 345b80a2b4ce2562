"""ScanStore: what a server's project index scanned (callers passing modules, top-level
definitions) is read back by the next server of the workspace, while each file's text is
the same; a store that does not load is dropped and written again."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from flydsl_ls.analysis.model import project
from flydsl_ls.analysis.model.project import ProjectIndex
from flydsl_ls.scan_store import ScanStore
from tests.test_project_index import HELPERS, KERNEL


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "helpers.py").write_text(HELPERS)
    (root / "kern.py").write_text(KERNEL)
    return root


def answers(root: Path, store: ScanStore | None) -> tuple:
    index = ProjectIndex(roots=[root], store=store)
    callers = index.view(root / "helpers.py", "").module_arguments("reduce")
    definers = index.view(root / "kern.py", "").definers("reduce")
    if store is not None:
        store.save()
    return callers, definers


def no_scans(monkeypatch) -> list[Path]:
    scanned: list[Path] = []
    real = project.scan_source
    monkeypatch.setattr(project, "scan_source", lambda source, path, *lent: scanned.append(path) or real(source, path, *lent))
    return scanned


def test_the_next_server_answers_from_the_scans_of_the_first(workspace, tmp_path, monkeypatch):
    expected = ([{0: "flydsl.expr"}], [(workspace / "helpers.py").resolve()])
    assert answers(workspace, ScanStore(workspace, tmp_path / "cache")) == expected
    scanned = no_scans(monkeypatch)
    assert answers(workspace, ScanStore(workspace, tmp_path / "cache")) == expected
    assert scanned == []  # nothing scanned: kern.py's scan was kept, helpers.py's defs come from its text
    assert answers(workspace, None) == expected and scanned  # what a server without a store finds


def test_a_file_whose_text_changed_is_scanned_again(workspace, tmp_path, monkeypatch):
    answers(workspace, ScanStore(workspace, tmp_path / "cache"))
    (workspace / "kern.py").write_text(KERNEL.replace("reduce(fx,", "reduce(fx.arith,"))
    scanned = no_scans(monkeypatch)
    callers, _ = answers(workspace, ScanStore(workspace, tmp_path / "cache"))
    assert callers == [{0: "flydsl.expr.arith"}]
    assert scanned == [(workspace / "kern.py").resolve()]


def test_a_store_that_does_not_load_is_dropped_and_written_again(workspace, tmp_path, monkeypatch):
    store = ScanStore(workspace, tmp_path / "cache")
    answers(workspace, store)
    whole = store.file.read_bytes()
    store.file.write_bytes(whole[: len(whole) // 2])  # a server killed while writing, or a bad disk
    scanned = no_scans(monkeypatch)
    assert answers(workspace, ScanStore(workspace, tmp_path / "cache"))[0] == [{0: "flydsl.expr"}]
    assert scanned == [(workspace / "kern.py").resolve()]  # definers read top-level defs from the text
    assert store.file.read_bytes() == whole  # rebuilt as it was
    store.file.write_bytes(b"\x80\x05K\x01.")  # loads, but is not a store: the same
    assert answers(workspace, ScanStore(workspace, tmp_path / "cache"))[0] == [{0: "flydsl.expr"}]
    assert len(scanned) == 2 and store.file.read_bytes() == whole


def test_stores_of_other_builds_are_removed_and_workspaces_are_kept_apart(workspace, tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    old = folder / "0123456789abcdef0123-0123456789abcdef.pickle"
    old.write_bytes(b"an older flydsl-ls's")
    unused = ScanStore(tmp_path / "gone", folder).file  # this build's, for a workspace not opened for 31 days
    unused.write_bytes(b"")
    os.utime(unused, (time.time() - 31 * 24 * 3600,) * 2)
    other = tmp_path / "other"
    other.mkdir()
    (other / "helpers.py").write_text(HELPERS)
    (other / "kern.py").write_text(KERNEL)
    answers(workspace, ScanStore(workspace, folder))
    answers(other, ScanStore(other, folder))
    assert not old.exists() and not unused.exists()
    assert len(list(folder.glob("*.pickle"))) == 2
    assert not list(folder.glob("*.tmp"))  # written through a temporary file, renamed
