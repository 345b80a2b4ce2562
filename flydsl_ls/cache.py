"""The ``check`` result cache, as ruff keeps one: a file's findings are reused while
nothing they were computed from has changed.

A finding is reused only when all of these are unchanged: the file's bytes, its package,
the rules enabled for it, the analysis options (target arch, the FlyDSL release the
project declares), flydsl-ls itself (a hash of its package sources, so an edit of a rule
invalidates everything) and the Python version; and, when the file's analysis read other
project files (a sibling module it imports from, callers in other files passing it a
dialect module, the workspace-wide FLY402/FLY702 facts), what it read: the bytes of every
module it read (and their packages), the answer of every module lookup it made, the run
files whose text passes the project index's filter for the callers or definitions it
looked up (a function's name) and their bytes, and, when a rule reached for the whole
index, the bytes of every file of the run.

Entries live in one pickle per cache folder and flydsl-ls build, rewritten atomically at
the end of a run; a stale or unreadable cache file is simply ignored.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import re
import shutil
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from flydsl_ls import __version__
from flydsl_ls.analysis.model.project import find_module_file
from flydsl_ls.analysis.model.sources import package_of
from flydsl_ls.files import replace_atomically

CACHE_FOLDER = ".flydsl-ls-cache"
_ASCII_WORD = re.compile(rb"\w+")
_NOT_ASCII_WORD = bytes.maketrans(bytes(range(256)), bytes(c if _ASCII_WORD.fullmatch(bytes([c])) else 32 for c in range(256)))
_ENTRIES = "entries.pickle"
_PACKAGE = Path(__file__).resolve().parent


@lru_cache(maxsize=1)
def build_digest() -> str:
    """flydsl-ls as it is on disk (its version, every source and data file) and the Python
    that parses the files: a development install is re-keyed by any edit of a rule."""
    digest = hashlib.sha256(f"{__version__}|{sys.version_info[:3]}".encode())
    for path in sorted(_PACKAGE.rglob("*")):
        if path.suffix in (".py", ".json") and "__pycache__" not in path.parts:
            digest.update(path.relative_to(_PACKAGE).as_posix().encode() + b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()[:20]


def default_folder(root: Path | None) -> Path:
    """``.flydsl-ls-cache`` next to the project's pyproject.toml; files outside any project
    share one under the user cache (``$FLYDSL_LS_CACHE``, else ``$XDG_CACHE_HOME/flydsl-ls``)."""
    if root is not None:
        return root / CACHE_FOLDER
    from flydsl_ls.compile.toolchain import cache_dir

    return cache_dir() / "check"


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Dependencies:
    """What a file's findings were computed from besides the file (see the module doc)."""

    modules: tuple[tuple[str, str | None, str | None], ...] = ()  # (path, content hash, package)
    lookups: tuple[tuple[tuple[str, ...], str | None], ...] = ()  # ((root, *parts), found file)
    needles: tuple[tuple[str, str], ...] = ()  # (text, digest of the run files that contain it)
    scanned: bool = False  # it may have read any file of the run
    project: str = ""  # digest of the run's files when it was computed


@dataclass
class Entry:
    key: str
    dependencies: Dependencies
    result: object  # what the CLI keeps of a file's check (picklable)


class Snapshot:
    """The files of one run and their contents, to decide whether an entry still holds."""

    def __init__(self, files: list[Path]):
        self.contents: dict[Path, bytes | None] = {}  # resolved path -> bytes (None: unreadable)
        self.hashes: dict[Path, str | None] = {}
        listing = hashlib.sha256()
        for path in files:
            path = path.resolve()
            try:
                data = path.read_bytes()
            except OSError:
                data = None
            self.contents[path] = data
            self.hashes[path] = content_hash(data) if data is not None else None
            listing.update(f"{path}\0{self.hashes[path]}\n".encode())
        self.project = listing.hexdigest()
        self._elsewhere: dict[Path, str | None] = {}
        self._needles: dict[str, str] = {}
        self._lookups: dict[tuple[str, ...], str | None] = {}
        self._words: dict[bytes, list[Path]] | None = None
        self._modules: dict[str, tuple[str | None, str | None]] = {}

    def hash_of(self, path: Path) -> str | None:
        if path in self.hashes:
            return self.hashes[path]
        if path not in self._elsewhere:
            try:
                self._elsewhere[path] = content_hash(path.read_bytes())
            except OSError:
                self._elsewhere[path] = None
        return self._elsewhere[path]

    def module(self, path: str) -> tuple[str | None, str | None]:
        if path not in self._modules:
            self._modules[path] = (self.hash_of(Path(path)), package_of(Path(path)))
        return self._modules[path]

    def needle(self, text: str) -> str:
        """Which run files the project index may have read for ``text`` (a function's name:
        the files that have it as a word; ``def name``: those that also have that text),
        and what they hold."""
        if text not in self._needles:
            digest = hashlib.sha256()
            for path in self._files_with(text):
                digest.update(f"{path}\0{self.hashes[path]}\n".encode())
            self._needles[text] = digest.hexdigest()
        return self._needles[text]

    def _files_with(self, text: str) -> list[Path]:
        raw = text.encode()
        word = raw.removeprefix(b"def ")
        if not _ASCII_WORD.fullmatch(word):  # not an ASCII identifier: the plain text filter
            return [path for path, data in self.contents.items() if data is not None and raw in data]
        if self._words is None:  # ASCII words are enough: a word of the index has its ASCII run
            self._words = {}
            for path, data in self.contents.items():
                # `\w+` runs of bytes, as ``_ASCII_WORD`` finds them, in a third of its time
                for found in set((data or b"").translate(_NOT_ASCII_WORD).split()):
                    self._words.setdefault(found, []).append(path)
        holding = self._words.get(word, [])
        return holding if raw == word else [path for path in holding if raw in self.contents[path]]

    def dependencies(self, reads, lookups, needles, scanned: bool) -> Dependencies:
        return Dependencies(
            modules=tuple(sorted((str(p), self.hash_of(p), package_of(p)) for p in reads)),
            lookups=tuple(sorted(((str(k[0]), *k[1:]), str(v) if v else None) for k, v in lookups.items())),
            needles=tuple(sorted((n, self.needle(n)) for n in needles)) if not scanned else (),
            scanned=scanned,
            project=self.project,
        )

    def holds(self, dependencies: Dependencies) -> bool:
        same_run = dependencies.project == self.project  # same files, same bytes
        if dependencies.scanned and not same_run:
            return False
        if not same_run and any(self.needle(n) != digest for n, digest in dependencies.needles):
            return False
        for path, digest, package in dependencies.modules:
            if self.module(path) != (digest, package):
                return False
        return all(self.lookup(key) == found for key, found in dependencies.lookups)

    def lookup(self, key: tuple[str, ...]) -> str | None:
        """Where a module lookup leads now (entries share most of theirs: asked once)."""
        if key not in self._lookups:
            found = find_module_file(Path(key[0]), list(key[1:]))
            self._lookups[key] = str(found) if found else None
        return self._lookups[key]


def file_key(path: Path, digest: str, settings_key: tuple) -> str:
    text = repr((str(path), digest, package_of(path), settings_key))
    return hashlib.sha256(text.encode()).hexdigest()


class ResultCache:
    """The entries of one cache folder for this build of flydsl-ls."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.place = folder / build_digest()
        self.entries: dict[str, Entry] = {}
        self.changed = False
        try:
            with open(self.place / _ENTRIES, "rb") as handle:
                loaded = pickle.load(handle)
            if isinstance(loaded, dict):
                self.entries = loaded
        except Exception:  # noqa: BLE001 - missing, truncated, of another build: start afresh
            self.entries = {}

    def get(self, path: Path, key: str, snapshot: Snapshot):
        entry = self.entries.get(str(path))
        if entry is None or entry.key != key or not snapshot.holds(entry.dependencies):
            return None
        return entry.result

    def put(self, path: Path, key: str, dependencies: Dependencies, result) -> None:
        self.entries[str(path)] = Entry(key, dependencies, result)
        self.changed = True

    def save(self) -> None:
        if not self.changed:
            return
        # Entries of files that are gone (a deleted file, a test's temporary folder) go too.
        self.entries = {path: entry for path, entry in self.entries.items() if os.path.exists(path)}
        try:
            self.place.mkdir(parents=True, exist_ok=True)
            _mark(self.folder)
            for other in self.folder.iterdir():  # entries of other flydsl-ls builds
                if other != self.place and (other / _ENTRIES).is_file():
                    shutil.rmtree(other, ignore_errors=True)
            replace_atomically(self.place / _ENTRIES, pickle.dumps(self.entries, protocol=pickle.HIGHEST_PROTOCOL))
        except OSError as error:
            print(f"warning: cannot write the cache in {self.folder}: {error}", file=sys.stderr)


def _mark(folder: Path) -> None:
    """As ruff does: keep the folder out of git and out of backups."""
    ignore = folder / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# Automatically created by flydsl-ls.\n*\n")
    tag = folder / "CACHEDIR.TAG"
    if not tag.exists():
        tag.write_text("Signature: 8a477f597d28d172789f06886806bc55\n")
