"""What the project index scanned of a workspace's files, kept on disk between servers.

A server's first analysis of a file asks who calls its helpers and who defines the names
it imports: the index scans the files whose text mentions them (``ProjectIndex._scan``:
10 files in the first open of aiter's 5.7k-line MoE kernel, that file itself as a caller of
its siblings' helpers; each file's text is read, and the few whose calls may pass modules
are parsed and modelled). What a scan finds depends only on the file's text and on
flydsl-ls, so the next server of the same workspace reads it back.

One pickle per workspace folder and flydsl-ls build (``cache.build_digest``) under the
user cache, private to flydsl-ls; an entry holds only while its file's text hashes the
same. It is written whole, atomically (a temporary file renamed over it), and one that
does not load is dropped and written again. Writing one removes the others' that are stale.
"""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
import threading
import time
from pathlib import Path

from flydsl_ls.analysis.model.project import Scanned
from flydsl_ls.cache import build_digest
from flydsl_ls.compile.toolchain import cache_dir
from flydsl_ls.files import replace_atomically

log = logging.getLogger(__name__)
_KEPT_SECONDS = 30 * 24 * 3600


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class ScanStore:
    """``ProjectIndex.store`` for a server: ``get`` and ``put`` from any thread, ``save``
    when something new was put."""

    def __init__(self, root: Path, folder: Path | None = None):
        name = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
        self.file = (folder or cache_dir() / "scans") / f"{build_digest()}-{name}.pickle"
        self._entries: dict[str, tuple[bytes, Scanned]] | None = None  # path -> (text digest, scan)
        self._dirty = False
        self._lock = threading.Lock()

    def get(self, path: Path, text: str) -> Scanned | None:
        entry = self._loaded().get(str(path))
        if isinstance(entry, tuple) and len(entry) == 2 and entry[0] == _digest(text) and isinstance(entry[1], Scanned):
            return entry[1]
        return None

    def put(self, path: Path, text: str, scanned: Scanned) -> None:
        entries = self._loaded()
        with self._lock:
            entries[str(path)] = (_digest(text), scanned)
            self._dirty = True

    def save(self) -> None:
        """Write the entries if any was put since they were read (atomically)."""
        with self._lock:
            if not self._dirty or self._entries is None:
                return
            data = pickle.dumps(self._entries, protocol=pickle.HIGHEST_PROTOCOL)
            self._dirty = False
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            replace_atomically(self.file, data)
            _prune(self.file)
        except OSError as error:  # a read-only home or a full disk: every server scans again
            log.warning("cannot keep the project scans in %s: %s", self.file, error)

    def _loaded(self) -> dict[str, tuple[bytes, Scanned]]:
        entries = self._entries
        if entries is None:
            entries = _read(self.file)
            with self._lock:
                if self._entries is None:
                    self._entries = entries
                entries = self._entries
        return entries


def _prune(file: Path) -> None:
    """Remove the stores beside ``file`` of other flydsl-ls builds (never read again) and of
    workspaces no server has opened for a month (temporary folders, among them)."""
    build, month_ago = file.name.split("-")[0], time.time() - _KEPT_SECONDS
    for other in file.parent.glob("*.pickle"):
        try:
            if not other.name.startswith(build + "-") or other.stat().st_mtime < month_ago:
                other.unlink()
        except OSError:
            pass


def _read(file: Path) -> dict[str, tuple[bytes, Scanned]]:
    """The entries of ``file``; none (and the file removed) when it does not load."""
    try:
        data = file.read_bytes()
    except OSError:
        return {}
    try:
        entries = pickle.loads(data)
        if not isinstance(entries, dict):
            raise TypeError(f"a {type(entries).__name__}, not the entries")
    except Exception as error:  # truncated, or not ours: scanned again and rewritten
        log.warning("dropping %s, which does not load: %s", file, error)
        try:
            file.unlink()
        except OSError:
            pass
        return {}
    try:
        os.utime(file)  # in use: not pruned as stale
    except OSError:
        pass
    return entries
