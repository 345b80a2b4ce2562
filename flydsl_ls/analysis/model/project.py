"""The project around a file: its sibling modules, read from disk on demand.

Real kernels import their legacy helpers from each other (``from .utils import _raw``,
where ``utils`` took it from ``tensor_shim._to_raw``) and pass dialect modules into
helpers defined in other files. ``ProjectIndex`` follows both, reading each module
once (cached by modification time) and only when a rule asks.

One index is shared by threads in the server (the lint thread, the code-actions thread, and
the event loop, which forgets files that changed on disk). Reads are plain dictionary look-ups,
without a lock: they are on the keystroke path. What a read computes (a model, a file's text,
an answer) is computed outside the lock and stored under it, so a thread never waits for
another's parse; a cache is only ever mutated under the lock, and the structures handed out
(the word index's lists) are replaced, never changed in place. What guards recursion (a
module being read, an answer being computed) is per thread: another thread does not see it
and computes the answer itself. An answer computed while ``forget`` ran is returned but not
stored (it may come from what was forgotten).
"""

from __future__ import annotations

import ast
import bisect
import copy
import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from flydsl_ls.analysis.model.modules import RELATIVE, canonical_symbol, is_module
from flydsl_ls.analysis.model.parsing import parse
from flydsl_ls.analysis.model.scan_text import (
    code_text,
    may_pass_modules,
    module_tails,
    top_level_functions,
)
from flydsl_ls.analysis.model.semantic import SemanticModel, is_unwrap_idiom, nodes_under
from flydsl_ls.analysis.model.sources import UnreadableFile, package_of, read_source

_MAX_DEPTH = 6
_WORD = re.compile(r"\w+")
_NOT_WORD = bytes.maketrans(bytes(range(128)), bytes(c if chr(c).isalnum() or c == ord("_") else ord(" ") for c in range(128)))
_SEARCHES_BEFORE_INDEX = 100
# Searched from their keyword, which the regex engine skips to, with what comes before it
# checked apart: a pattern opening on `^` is tried at every character (4x and 15x the time).
_GLOBAL_KEYWORD = re.compile(r"(?:global|nonlocal)(?=(?:[ \t\f]|\\(?:\r\n?|\n))+\w)")
_DEF_KEYWORD = re.compile(r"def[ \t]+(\w+)")
_ASYNC_PREFIX = re.compile(r"async[ \t]+")


def package_root(path: Path, package: str | None) -> Path:
    """The folder that holds the top-level package of a file in ``package``."""
    return _package_folder(path.resolve(), package)


def _package_folder(resolved: Path, package: str | None) -> Path:
    folder = resolved.parent
    for _ in (package.split(".") if package else []):
        folder = folder.parent
    return folder


@dataclass
class _Module:
    stamp: tuple[int, int]
    model: SemanticModel | None


@dataclass
class Consulted:
    """What the analysis of one file asked of the rest of the project: the CLI's result
    cache keys a file's findings on these."""

    reads: set[Path] = field(default_factory=set)  # modules whose models it read
    probes: dict[tuple, Path | None] = field(default_factory=dict)  # module lookups, what they found
    needles: set[str] = field(default_factory=set)  # it read the files whose text has one of these
    scanned: bool = False  # it may have read any project file (the workspace-wide rules)


@dataclass
class WorkspaceFacts:
    """What the index knows of every project file before any rule asks: the files' texts
    and which words each holds (the filter of the caller, definer and reader questions).
    Built once per CLI run, in the main process, and handed to every worker's index
    (inherited on fork), rather than once per worker."""

    paths: dict[Path, Path]  # as given -> resolved
    texts: dict[Path, str]  # resolved -> text
    words: dict[str, list[Path]]  # word -> the resolved files that have it, in file order
    file_words: dict[Path, set[str]]
    seconds: float = 0.0  # what building them took


@dataclass
class IndexStats:
    """What one index built, for ``check --timings``."""

    word_indexes: int = 0  # times it split every project file into words itself
    models: int = 0  # module models built
    model_seconds: float = 0.0


class ScanKeeper(Protocol):
    """Where ``_scan``'s findings outlive the index (a server's: flydsl_ls/scan_store.py)."""

    def get(self, path: Path, text: str) -> Scanned | None: ...

    def put(self, path: Path, text: str, scanned: Scanned) -> None: ...

    def save(self) -> None: ...


@dataclass
class ProjectIndex:
    """Module models of one project (a CLI run, or a workspace in the server)."""

    files: list[Path] = field(default_factory=list)  # where to look for callers
    roots: list[Path] = field(default_factory=list)  # or: folders whose files are found on first use
    # The texts a fix run has given other files so far (path -> text, or None: the disk's),
    # read instead of the disk's while it runs (``checker.fix_source``).
    overlay: Callable[[Path], str | None] | None = field(default=None, repr=False, compare=False)
    _modules: dict[Path, _Module] = field(default_factory=dict)
    _arguments: dict[str, list[dict]] = field(default_factory=dict)
    _calls: dict[Path, list[tuple[str, dict]]] = field(default_factory=dict)
    _texts: dict[Path, str] = field(default_factory=dict)
    _defs: dict[Path, frozenset[str]] = field(default_factory=dict)  # ``_line_defs``
    _functions_of: dict[Path, frozenset[str]] = field(default_factory=dict)  # ``_functions``
    _paths: dict[Path, Path] = field(default_factory=dict)
    _files: dict[tuple, Path | None] = field(default_factory=dict)
    generation: int = 0  # bumped when what was read may have changed (analysis caches key on it)
    consulted: dict[Path, Consulted] = field(default_factory=dict)  # by the asking file
    _words: dict[str, list[Path]] | None = None  # word -> the files that have it
    _searches: int = 0  # questions ``_mentioning`` answered by searching the texts
    _file_words: dict[Path, set[str]] = field(default_factory=dict)
    _windows: dict[Path, _IndexWindow] = field(default_factory=dict)
    _module_names: tuple[list[Path], dict[str, list[Path]]] | None = None  # ``_named``'s: (files, last name -> files)
    # Held only to mutate the caches above, never while reading a file or calling out.
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    # What this thread is in the middle of: modules being read, answers being computed.
    _local: threading.local = field(default_factory=threading.local, repr=False, compare=False)
    _forgets: int = 0  # bumped by ``forget``: what was computed across one is not stored
    stats: IndexStats = field(default_factory=IndexStats)
    _scanned: dict[Path, Scanned] | None = None
    _scans: dict[Path, Scanned] = field(default_factory=dict)  # ``_scan``'s, read as asked (not adopted)
    _lent: dict[Path, _Lent] = field(default_factory=dict)  # ``lending``
    _headers: dict[Path, SemanticModel | bool] = field(default_factory=dict)  # ``_header_of``'s (False: no parse)
    trees: dict[Path, tuple] = field(default_factory=dict)  # path -> (stamp, text, tree) from ``scan``
    # A check run's index (it checks every file it reads): the trees its scans and headers
    # parse are kept in ``trees`` for the file's model, so each file is parsed once (the
    # corpus was parsed 2.7 times over: 29% of a one-process run).
    keep_trees: bool = False
    store: ScanKeeper | None = field(default=None, repr=False, compare=False)  # scans of earlier servers

    @classmethod
    def with_facts(cls, files: list[Path], facts: WorkspaceFacts | None) -> ProjectIndex:
        """An index over ``files`` that starts from ``facts`` (``workspace_facts`` of the
        same files) instead of reading and splitting every file again."""
        index = cls(files=files)
        if facts is not None:
            index._paths = dict(facts.paths)
            index._texts = dict(facts.texts)
            index._words = facts.words  # shared, not copied: only ``forget`` (the server's) changes it
            index._file_words = dict(facts.file_words)
        return index

    def workspace_facts(self) -> WorkspaceFacts:
        """The texts and word index of every project file (built now if not yet)."""
        start = time.perf_counter()
        self._word_index()
        texts = {path: self._text(path) for path in self._file_words}
        return WorkspaceFacts(dict(self._paths), texts, self._words, self._file_words, time.perf_counter() - start)

    def holds(self, path: Path) -> bool:
        """``path`` (resolved) was parsed here already: its tree is kept, or its model built."""
        if path in self.trees:
            return True
        known = self._modules.get(path)
        return known is not None and known.model is not None

    @property
    def adopted(self) -> bool:
        return self._scanned is not None

    def adopt(self, scanned: dict[Path, Scanned]) -> None:
        """What ``scan`` found in every project file (resolved paths), once for the run:
        the callers and definers questions are then answered without building the model
        of each file they look at in every worker that asks."""
        with self._lock:
            if self._scanned is not None:
                return
            self._scanned = scanned
            for path, found in scanned.items():
                self._calls.setdefault(path, found.calls)

    def _busy(self) -> set:
        busy = getattr(self._local, "busy", None)
        if busy is None:
            busy = self._local.busy = set()
        return busy

    # --- reading modules --------------------------------------------------------
    def model_of(self, path: Path) -> SemanticModel | None:
        edited = self._overlaid(path)
        if edited is not None:
            stamp = ("overlay", len(edited), hash(edited))
        else:
            try:
                stat = path.stat()
            except OSError:
                return None
            stamp = (stat.st_mtime_ns, stat.st_size)
        cached = self._modules.get(path)
        if cached is not None and cached.stamp == stamp:
            return cached.model
        busy = self._busy()
        if ("model", path) in busy:  # guards import cycles
            return None
        busy.add(("model", path))
        start = time.perf_counter()
        kept = self.trees.pop(path, None)
        try:
            if kept is not None and kept[0] == stamp:  # parsed by ``scan`` in this process
                source, tree = kept[1], kept[2]
            else:
                source = edited if edited is not None else read_source(path)
                tree = parse(source)
            model = SemanticModel(source, tree, package_of(path))
        except (UnreadableFile, SyntaxError, ValueError, RecursionError):
            model = None
        finally:
            busy.discard(("model", path))
        if model is not None:
            model.project = self.view(path, package_of(path))
        with self._lock:
            now = self._modules.get(path)
            if now is not None and now.stamp == stamp:
                return now.model  # another thread read it meanwhile: one model for all
            if now is not None or cached is not None:
                self.generation += 1  # changed on disk since it was read
            self._modules[path] = _Module(stamp, model)
            self.stats.models += 1
            self.stats.model_seconds += time.perf_counter() - start
        return model

    def _overlaid(self, path: Path) -> str | None:
        """``path``'s text in the overlay (a fix run's edits), None when it has none."""
        return self.overlay(path) if self.overlay is not None else None

    def _header_of(self, path: Path) -> SemanticModel | None:
        """A model of ``path``'s module-level names only: what resolving an import through it
        reads (``SemanticModel.binding_dotted``). The bodies of functions are left out, so it
        is small, but for those that bind a module name (``global``) or are a hand-rolled
        unwrap, which resolves to ``_to_raw``."""
        known = self._headers.get(path)
        if known is None:
            known = self._read_once(self._headers, path, lambda source: self._header(source, path))
        return known or None  # False: it does not parse

    def _header(self, source: str, path: Path) -> SemanticModel | bool:
        try:
            may_bind_globals = _binds_elsewhere(source)
            if self.keep_trees:
                tree = _cut(self._whole_tree(source, path), lambda f: _read_by_importers(f, may_bind_globals))
            else:
                tree = parse(source)
                _drop_bodies(tree, may_bind_globals)
            model = SemanticModel(source, tree, package_of(path))
        except (SyntaxError, ValueError, RecursionError):
            return False
        model.project = self.view(path, package_of(path))
        return model

    def _whole_tree(self, source: str, path: Path) -> ast.Module:
        """``path``'s tree for ``source``: its model's, or the one kept, else parsed and kept."""
        known = self._modules.get(path)
        if known is not None and known.model is not None and known.model.source == source:
            return known.model.tree
        kept = self.trees.get(path)
        if kept is not None and kept[1] == source:
            return kept[2]
        tree = parse(source)
        try:
            stat = path.stat()
        except OSError:
            return tree
        with self._lock:
            self.trees.setdefault(path, ((stat.st_mtime_ns, stat.st_size), source, tree))
        return tree

    def _read_once(self, cache: dict, path: Path, compute: Callable[[str], Any]) -> Any:
        """``compute`` of ``path``'s text (a fix run's overlay, else the disk's), stored in
        ``cache`` unless the text is the overlay's (the fix run's, for now) or a ``forget``
        ran meanwhile."""
        forgets = self._forgets
        edited = self._overlaid(path)
        found = compute(edited if edited is not None else self._text(path))
        with self._lock:
            if self._forgets == forgets and edited is None:
                found = cache.setdefault(path, found)
        return found

    def view(self, path: Path | None, package: str | None) -> ProjectView | None:
        """What a SemanticModel of ``path`` asks about the rest of the project."""
        return ProjectView(self, self.resolved(path), package) if path is not None else None

    def _module_file(self, root: Path, parts: list[str]) -> Path | None:
        key = (root, *parts)
        found = self._files.get(key, _MISSING)
        if found is _MISSING:
            found = find_module_file(root, parts)
            with self._lock:
                found = self._files.setdefault(key, found)
        return found

    def _consulted(self, path: Path) -> Consulted:
        asked = self.consulted.get(path)
        if asked is None:
            with self._lock:
                asked = self.consulted.setdefault(path, Consulted())
        return asked

    def _record(self, path: Path, probe: tuple | None = None, found: Path | None = None, read: Path | None = None,
                needle: str | None = None) -> None:
        """Note what the analysis of ``path`` asked (under the lock: ``dependencies`` reads it)."""
        asked = self._consulted(path)
        with self._lock:
            if probe is not None:
                asked.probes[probe] = found
            if read is not None:
                asked.reads.add(read)
            if needle is not None:
                asked.needles.add(needle)

    def window(self, path: Path) -> _IndexWindow:
        """The index as the rules of ``path`` see it (one per file: the same object each time)."""
        window = self._windows.get(path)
        if window is None:
            with self._lock:
                window = self._windows.setdefault(path, _IndexWindow(self, path))
        return window

    def dependencies(self, path: Path) -> Consulted:
        """Everything the findings of ``path`` may depend on, through the models it read and
        what those asked in turn (models remember answers: the closure is what counts)."""
        found = Consulted()
        seen: set[Path] = set()
        todo = [self.resolved(path)]
        with self._lock:  # what other threads record meanwhile waits
            while todo:
                current = todo.pop()
                if current in seen:
                    continue
                seen.add(current)
                asked = self.consulted.get(current)
                if asked is None:
                    continue
                found.scanned |= asked.scanned
                found.probes.update(asked.probes)
                found.needles |= asked.needles
                found.reads |= asked.reads
                todo += asked.reads
        return found

    def _resolve(self, dotted: str, root: Path, here: Path, package, depth: int) -> str | None:
        if depth > _MAX_DEPTH:
            return None
        parts = dotted.split(".")
        if parts[0] == RELATIVE:
            parts = parts[1:]
            if not package:  # unknown package: relative to the file's own folder
                root = here.parent
        for cut in range(len(parts) - 1, 0, -1):
            module = self._module_file(root, parts[:cut])
            ok = module is not None and module != here
            self._record(here, probe=(root, *parts[:cut]), found=module, read=module if ok else None)
            if not ok:
                continue
            model = self._header_of(module)
            if model is None:
                return None
            bindings = model.module_scope.bindings.get(parts[cut])
            if not bindings:
                return None
            target = model.binding_dotted(bindings[-1])
            if target is None:
                return None
            result = ".".join([target, *parts[cut + 1 :]])
            if canonical_symbol(result) is None and model.project is not None:
                return model.project.resolve(result, depth + 1) or result
            return result
        return None

    # --- who calls a function, across the project -------------------------------
    def module_arguments(self, view: ProjectView, function: str) -> list[dict]:
        """For each call of ``function`` (defined in the view's file) from another project
        file that passes modules: {position or keyword: dotted module}."""
        self._record(view.path, needle=function)  # the files the text filter lets through
        key = f"{view.module_key}.{function}"
        memo = (view.path, key)  # two files may share a module key (no package): not their answers

        def callers() -> list[dict]:
            found = []
            # Cheap text filters first: a caller names the function, and the module it takes
            # it from (whose last name its import spells: ``_static_dotted`` reads imports
            # only). Only those files are scanned: a first open of aiter's 5.7k-line file
            # scanned 14 (538 ms), 10 now (311 ms).
            module = view.module_key.rsplit(".", 1)[-1]
            for path in self._mentioning(function):
                if path == view.path:
                    continue
                # A caller's import spells the module's last name as a word of its own: the
                # word index says so without searching the whole text (1.7% of a CLI run).
                words = self._file_words.get(path)
                if words is not None:
                    if function not in words or module not in words:
                        continue
                elif function not in (text := self._text(path)) or module not in text:
                    continue
                found += [passed for callee, passed in self._module_calls(path) if callee == key]
            return found

        # [] while resolving the callers' own parameters comes back here
        return self._memo("_arguments", memo, callers)

    def mentioned_elsewhere(self, view: ProjectView, word: str) -> bool:
        """Another project file's text mentions ``word`` (it may call the function so named)."""
        self._record(view.path, needle=word)
        return any(path != view.path and word in self._text(path) for path in self._mentioning(word))

    def field_settings(self, view: ProjectView, name: str) -> list[tuple[Path, ast.expr]]:
        """Every value another project file gives a field ``name``: ``f(name=v)``,
        ``obj.name = v``, ``name = v`` in a class body (a text filter first)."""
        found = []
        for path in self.mentioning(view, name):
            model = self.model_of(path)
            if model is not None:
                found += [(path, value) for value in field_settings(model, name)]
        return found

    def mentioning(self, view: ProjectView, word: str) -> list[Path]:
        """The other project files whose text mentions ``word``."""
        self._record(view.path, needle=word)
        return [path for path in self._mentioning(word) if path != view.path and word in self._text(path)]

    # --- who defines a function, across the project -------------------------------
    def definers(self, view: ProjectView, function: str, module: tuple[str, ...] = ()) -> list[Path]:
        """Other project files with a top-level ``def function``, sorted; with ``module``
        (the parts of a dotted module path), only the files it may name (``_named``). Cheap:
        a text filter first, and only the files that pass it are parsed (``_scan``)."""
        needle = f"def {function}"
        self._record(view.path, needle=needle)
        found = []
        for path in self._named(module) if module else self._mentioning(function):
            if path == view.path or function not in self._line_defs(path):
                continue
            if function in self._functions(path):
                found.append(path)
        return sorted(set(found))

    def _named(self, parts: tuple[str, ...]) -> list[Path]:
        """The project files (resolved, in order) a module path ending in ``parts`` may
        name: ``.../<parts>.py`` or ``.../<parts>/__init__.py``, from a table of the files by
        module name built once, instead of a search of every text (~2 ms a question over
        the 213 corpus files)."""
        files = self.all_files()
        named = self._module_names
        if named is None or named[0] is not files:
            table: dict[str, list[Path]] = {}
            for path in map(self.resolved, files):
                table.setdefault(path.stem, []).append(path)
                if path.name == "__init__.py":
                    table.setdefault(path.parent.name, []).append(path)
            named = self._module_names = (files, table)
        return [
            path
            for path in dict.fromkeys(named[1].get(parts[-1], ()))
            if path.with_suffix("").parts[-len(parts) :] == parts
            or (path.name == "__init__.py" and path.parent.parts[-len(parts) :] == parts)
        ]

    def _mentioning(self, word: str) -> list[Path]:
        """The project files (resolved, in order) whose text has the word ``word``. The first
        questions search the texts (~3 ms each over the 213 corpus files); the next ones read
        the word index, built then (~0.3 s: a server's first analysis, which asks ~45, would
        have waited for it)."""
        if not _WORD.fullmatch(word):
            return [self.resolved(path) for path in self.all_files()]
        words = self._words
        if words is None and self._searches < _SEARCHES_BEFORE_INDEX:
            self._searches += 1  # a count to switch by: a lost update between threads is harmless
            # The word, then no word character: a literal first is searched fast (a look-behind
            # first made each question 50-70 ms for a word in tens of files, not ~3 ms).
            token = re.compile(rf"{re.escape(word)}(?!\w)")
            found = [self.resolved(path) for path in self.all_files()]
            return [path for path in found if word in (text := self._text(path)) and _has_word(text, token)]
        return (words if words is not None else self._word_index()).get(word, [])

    def _word_index(self) -> dict[str, list[Path]]:
        """Word -> the project files (resolved, in order) that have it, built once."""
        words = self._words
        if words is None:
            self.stats.word_indexes += 1
            forgets = self._forgets
            words, file_words = {}, {}
            for path in self.all_files():
                path = self.resolved(path)
                file_words[path] = found = _words_of(self._text(path))
                for w in found:
                    words.setdefault(w, []).append(path)
            with self._lock:
                if self._words is None and self._forgets == forgets:
                    self._words, self._file_words = words, file_words
        return words

    def all_files(self) -> list[Path]:
        if self.roots and not self.files:
            files = [p for root in self.roots for p in _python_files(root)]
            with self._lock:
                if not self.files:
                    self.files = files
        return self.files

    def drop_model(self, path: Path) -> None:
        """Free the model kept of ``path`` (read again if asked): memory only, every answer
        stays, unlike ``forget``."""
        path = self.resolved(path)
        with self._lock:
            self._modules.pop(path, None)

    def dispose(self) -> None:
        """Free every model read, at once (``SemanticModel.dispose`` breaks their cycles): what
        the collector would otherwise find later, or never, once the caller freezes what
        lives. The index is empty afterwards."""
        with self._lock:
            models = [known.model for known in self._modules.values() if known.model is not None]
            models += [header for header in self._headers.values() if header]
            self._modules.clear()
            self._headers.clear()
            self.trees.clear()
        for model in models:
            model.dispose()

    def forget(self, path: Path) -> None:
        """A file changed on disk: drop what was read from it and every caller answer."""
        path = self.resolved(path)
        with self._lock:
            self._forgets += 1
            self.generation += 1
            self._modules.pop(path, None)
            self._scans.pop(path, None)
            self._headers.pop(path, None)
            self._texts.pop(path, None)
            self._defs.pop(path, None)
            self._functions_of.pop(path, None)
            self._calls.pop(path, None)
            self.trees.pop(path, None)
            if self._scanned is not None:
                self._scanned.pop(path, None)  # read from its model again
            self._arguments = {}  # a new dict: a thread storing into the old one loses nothing
            indexed = self._words is not None and path in self._file_words
        if not indexed:
            return
        text = _read_text(path)  # outside the lock: its words as they are now
        with self._lock:
            if self._words is None or path not in self._file_words:
                return
            # New lists, not changed in place, and one assignment per word: readers take no
            # lock, and a word the file still has must never be seen without it (removed,
            # then added back, lost a caller to a reader in between).
            words, old, new = self._words, self._file_words[path], _words_of(text)
            for word in old - new:
                words[word] = [p for p in words[word] if p != path]
            for word in new - old:
                words[word] = [*words.get(word, ()), path]
            self._file_words[path] = new
            self._texts.setdefault(path, text)

    def resolved(self, path: Path) -> Path:
        """``path`` resolved, once per path (as given and as resolved) for the index's life:
        a check asked ~13 times per file (its view, its package root, its dependencies...)."""
        resolved = self._paths.get(path)
        if resolved is None:
            resolved = path.resolve()
            with self._lock:
                self._paths[path] = resolved
                self._paths.setdefault(resolved, resolved)
        return resolved

    def _line_defs(self, path: Path) -> frozenset[str]:
        """The names of the ``def``s starting a line of ``path``'s text: every top-level one
        is among them (a compound statement never follows a ``;``), and a set answers each
        ``definers`` question where searching the text took ~0.7 s of the corpus."""
        names = self._defs.get(path)
        if names is None:
            forgets = self._forgets
            names = _line_def_names(self._text(path))
            with self._lock:
                if self._forgets == forgets:
                    names = self._defs.setdefault(path, names)
        return names

    def _functions(self, path: Path) -> frozenset[str]:
        """``path``'s top-level functions: its scan's when it was scanned, else read from
        its text alone (``definers`` asks of files whose calls no one asked about: their
        scan would parse the 13 corpus files whose calls may pass modules)."""
        known = self._known_scan(path)
        if known is not None:
            return known.functions
        found = self._functions_of.get(path)
        if found is None:
            found = self._read_once(self._functions_of, path, lambda source: top_level_functions(code_text(source)))
        return found

    def _text(self, path: Path) -> str:
        text = self._texts.get(path)
        if text is None:
            forgets = self._forgets
            text = _read_text(path)
            with self._lock:
                if self._forgets == forgets:
                    text = self._texts.setdefault(path, text)
        return text

    def _module_calls(self, path: Path) -> list[tuple[str, dict]]:
        return self._memo("_calls", path, lambda: self._scan(path).calls)

    def _known_scan(self, path: Path) -> Scanned | None:
        """``path``'s scan when there is one already: the CLI's, else one read before."""
        scanned = self._scanned
        if scanned is not None and path in scanned:
            return scanned[path]
        return self._scans.get(path)

    def _scan(self, path: Path) -> Scanned:
        """What ``scan`` finds in ``path``: the CLI's, adopted for the run; else read now and
        kept, with no model of the file kept for it (a server reads most of its workspace
        for callers and definers: 175 whole models, 262 MB, with the 213 corpus files open)."""
        known = self._known_scan(path)
        if known is not None:
            return known
        if self.keep_trees and self.overlay is None:
            return self._read_once(self._scans, path, lambda _source: scan(path, self.trees))
        if self.store is not None and self.overlay is None:
            return self._read_once(self._scans, path, lambda source: self._stored_scan(source, path))
        return self._read_once(self._scans, path, lambda source: scan_source(source, path, *self._lent_to_scan(path, source)))

    def _stored_scan(self, source: str, path: Path) -> Scanned:
        found = self.store.get(path, source)
        if found is None:
            found = scan_source(source, path, *self._lent_to_scan(path, source))
            self.store.put(path, source, found)
        return found

    @contextmanager
    def lending(self, path: Path, source: str, tree: ast.Module) -> Iterator[None]:
        """While an analysis of ``path`` runs, the tree it parsed of ``source``: a scan of the
        same text reads it instead of parsing the file again (a server's first analysis of
        aiter's 5.7k-line MoE kernel scans the file itself, as a caller of its siblings'
        helpers: 70 ms of parsing). Not kept after: the trees of the files only opened
        would hold ~400 MB."""
        with self._lock:
            self._lent[path] = _Lent(source, tree)
        try:
            yield
        finally:
            with self._lock:
                lent = self._lent.get(path)
                if lent is not None and lent.tree is tree:
                    del self._lent[path]

    def lend_model(self, path: Path, package: str | None, model: SemanticModel) -> None:
        """Within ``lending``, the analysis's model of the lent tree's statements (its own
        module, when it holds every chunk but inert ones: a docstring stands in as `pass`),
        to the thread analysing, until ``unlend_model``: a scan of the file reads that
        model's nodes and bindings instead of walking the tree and building a model of its
        own (~60 ms of a server's first analysis of aiter's 5.7k-line MoE kernel). They are
        the nodes and bindings a scan reads in the cut tree it would build (``_around``):
        an inert statement has none."""
        with self._lock:
            lent = self._lent.get(path)
            if lent is not None and package == package_of(path):
                mine, theirs = _active(lent.tree.body), _active(model.tree.body)
                if len(mine) == len(theirs) and all(a is b for a, b in zip(mine, theirs)):
                    lent.model, lent.thread = model, threading.get_ident()

    def unlend_model(self, path: Path, model: SemanticModel) -> None:
        """``model`` is no longer to be read (it is about to be disposed)."""
        with self._lock:
            lent = self._lent.get(path)
            if lent is not None and lent.model is model:
                lent.model = lent.thread = None

    def _lent_to_scan(self, path: Path, source: str) -> tuple[ast.Module | None, SemanticModel | None]:
        """The tree lent for ``source`` (and the model, to the thread that lent it), if any:
        what ``scan_source`` may read."""
        lent = self._lent.get(path)
        if lent is None or lent.source != source:
            return None, None
        model = lent.model
        return lent.tree, model if model is not None and lent.thread == threading.get_ident() else None

    def _memo(self, cache: str, key, compute: Callable[[], list]) -> list:
        """``self.<cache>[key]``, computed once (outside the lock) and stored (under it). []
        when this thread's computing of it comes back to it (a cycle); not stored when a
        ``forget`` ran meanwhile (the answer may come from what was forgotten)."""
        known = getattr(self, cache).get(key)
        if known is not None:
            return known
        busy = self._busy()
        if (cache, key) in busy:
            return []
        busy.add((cache, key))
        forgets = self._forgets
        try:
            value = compute()
        finally:
            busy.discard((cache, key))
        with self._lock:
            if self._forgets == forgets:  # the dict now there: ``forget`` replaces _arguments
                value = getattr(self, cache).setdefault(key, value)
        return value


def _active(statements: list[ast.stmt]) -> list[ast.stmt]:
    """The statements but those that hold no call, import or assignment and bind nothing
    (`pass`, a docstring)."""
    return [s for s in statements if not (type(s) is ast.Pass or (type(s) is ast.Expr and type(s.value) is ast.Constant))]


@dataclass(eq=False)
class _Lent:
    """What an analysis of a file lends the index while it runs (``lending``)."""

    source: str
    tree: ast.Module
    model: SemanticModel | None = None  # ``lend_model``'s, until ``unlend_model``
    thread: int | None = None  # the thread that may read ``model``


@dataclass
class Scanned:
    """What the index asks of a file it does not check, found from its syntax tree."""

    calls: list[tuple[str, dict]] = field(default_factory=list)  # as ``_module_calls``
    functions: frozenset[str] = frozenset()  # its top-level ``def``s (``definers``)


def scan(path: Path, keep: dict | None = None) -> Scanned:
    """``path``'s calls that pass dialect modules, as ``ProjectIndex._module_calls`` finds
    them, and its top-level functions, as ``definers`` reads them (``scan_source``).
    ``keep``: where to leave the text and tree read (by path), for ``ProjectIndex.keep_trees``,
    when it was parsed."""
    try:
        stat = path.stat()
        source = read_source(path)
    except (OSError, UnreadableFile):
        return Scanned()

    def kept(tree: ast.Module) -> None:
        if keep is not None:
            keep[path] = ((stat.st_mtime_ns, stat.st_size), source, tree)

    return _scan_of(source, path, kept)


def scan_source(source: str, path: Path, tree: ast.Module | None = None, model: SemanticModel | None = None) -> Scanned:
    """``scan`` of a text (an unsaved one, or one read already); ``tree``: its syntax tree,
    when one was parsed already (it is only read); ``model``: a model of that tree's
    statements (``ProjectIndex.lend_model``), only read too."""
    return _scan_of(source, path, None, tree, model)


def _scan_of(
    source: str,
    path: Path,
    kept: Callable[[ast.Module], None] | None,
    tree: ast.Module | None = None,
    model: SemanticModel | None = None,
) -> Scanned:
    """The top-level functions from the text (``scan_text``); the calls from the syntax
    tree, parsed only when the text says a call may pass a module (13 of the 213 real
    kernel files), and a module model built only for the files where the tree says one may
    (5 of them), disposed at once: nothing of it is kept. A file that does not parse passes
    nothing. ``kept``: given the tree parsed (the file's own model may be built of it)."""
    if tree is not None:  # what the text says, the tree says exactly
        functions = frozenset(s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)))
    else:
        code = code_text(source)
        functions = top_level_functions(code)
        if not may_pass_modules(code):
            return Scanned([], functions)
        try:
            tree = parse(source)
        except (SyntaxError, ValueError, RecursionError):
            return Scanned([], functions)
    if model is not None:
        return Scanned(_calls_in(model, _calls_that_may_pass_modules(model.nodes_of(_SCANNED))), functions)
    candidates = _calls_that_may_pass_modules(nodes_under(tree))
    if kept is not None:
        kept(tree)  # whole: the model below is built on a cut copy
    if not candidates:
        return Scanned([], functions)
    try:
        model = SemanticModel(source, _around(tree, source, candidates), package_of(path))
    except (SyntaxError, ValueError, RecursionError):
        return Scanned([], functions)  # model_of has no model either
    try:
        return Scanned(_calls_in(model, candidates), functions)
    finally:
        model.dispose()


def _around(tree: ast.Module, source: str, calls: list[ast.Call]) -> ast.Module:
    """``tree`` cut to what names in ``calls`` can resolve through (``_cut``): a function
    holding none of them keeps its signature, its body is dropped. A name read in a call
    resolves in the scopes around it, which are kept whole, and a body binds names only in
    its own scope, but through ``global`` or ``nonlocal`` (the tree is kept whole then).
    Half of aiter's 5.7k-line MoE kernel, whose model is built to read its 24 such calls."""
    if _binds_elsewhere(source):
        return tree
    lines = sorted({call.lineno for call in calls})

    def holds_one(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        at = bisect.bisect_left(lines, function.lineno)
        return at < len(lines) and lines[at] <= (function.end_lineno or function.lineno)

    return _cut(tree, holds_one)


def field_settings(model: SemanticModel, name: str) -> list[ast.expr]:
    """The values ``model``'s tree gives a field ``name`` (see ``ProjectIndex.field_settings``)."""
    return model.facts(_FieldSettings).get(name, [])


class _FieldSettings(dict):
    """Field name -> the values a model's tree gives it, in the tree's order: a keyword
    argument, an assignment to an attribute of that name, a class body's assignment to
    the name. Built in one pass over the tree: searched again for each field asked, it
    was 0.8% of a one-process check of the corpus."""

    def __init__(self, model: SemanticModel):
        super().__init__()
        for node in model.nodes_of((ast.keyword, ast.Assign, ast.AnnAssign, ast.ClassDef)):
            if isinstance(node, ast.keyword):
                if node.arg is not None:
                    self.setdefault(node.arg, []).append(node.value)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                if node.value is not None:
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    self._add({t.attr for t in targets if isinstance(t, ast.Attribute)}, node.value)
            else:
                for stmt in node.body:
                    if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
                        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                        self._add({t.id for t in targets if isinstance(t, ast.Name)}, stmt.value)

    def _add(self, names: set[str], value: ast.expr) -> None:
        for name in names:
            self.setdefault(name, []).append(value)


def _calls_in(model: SemanticModel, candidates: list[ast.Call]) -> list[tuple[str, dict]]:
    """The ``candidates`` (of ``model``'s tree) that pass modules, in their order."""
    calls = []
    for node in candidates:
        passed = _module_arguments(model, node)
        callee = _static_dotted(model, node.func) if passed else None
        if callee:
            calls.append((callee.removeprefix(RELATIVE + "."), passed))
    return calls


_SCANNED = (ast.Call, ast.Import, ast.ImportFrom, ast.Assign)  # what ``_calls_that_may_pass_modules`` reads


def _calls_that_may_pass_modules(nodes: list[ast.AST]) -> list[ast.Call]:
    """The calls among ``nodes`` (a tree's, in ``ast.walk`` order, those of the ``_SCANNED``
    types at least) that may pass a module, in their order (a necessary condition on
    each argument, from the tree alone: every other call passes none). The
    dotted path ``_static_dotted`` gives an argument starts at a name bound by an import or
    by an assignment of a name or attribute; and ``canonical_symbol`` makes it a module only
    when its last part names one (a known module's, submodule's or shim module's last part):
    an attribute argument's own last part, an imported name's import's."""
    tails = module_tails()
    named: set[str] = set()  # names that may stand for a module
    renames: list[tuple[str, str]] = []  # target = name
    calls = []
    for node in nodes:
        kind = type(node)  # (the syntax classes have no subclasses)
        if kind is ast.Call:
            calls.append(node)
        elif kind is ast.Import:
            for alias in node.names:
                if alias.asname:
                    if alias.name.split(".")[-1] in tails:
                        named.add(alias.asname)
                elif alias.name.split(".")[0] in tails:
                    named.add(alias.name.split(".")[0])
        elif kind is ast.ImportFrom:
            named.update(a.asname or a.name for a in node.names if a.name in tails)
        elif kind is ast.Assign:
            value, targets = node.value, [t.id for t in node.targets if isinstance(t, ast.Name)]
            if isinstance(value, ast.Name):
                renames += [(target, value.id) for target in targets]
            elif isinstance(value, ast.Attribute) and value.attr in tails:
                named.update(targets)
    grown = True
    while grown:  # a rename of a name that may stand for a module may too
        grown = False
        for target, source in renames:
            if source in named and target not in named:
                named.add(target)
                grown = True
    return [call for call in calls if any(_may_be_module(value, tails, named) for value in _arguments(call))]


def _arguments(call: ast.Call) -> list[ast.expr]:
    """The values passed by position or keyword (not ``*args``, ``**kwargs``)."""
    return [*call.args, *(k.value for k in call.keywords if k.arg)]


def _may_be_module(value: ast.expr, tails: frozenset[str], named: set[str]) -> bool:
    return isinstance(value, ast.Attribute) and value.attr in tails or isinstance(value, ast.Name) and value.id in named


_MISSING = object()


def _words_of(text: str) -> set[str]:
    r"""The ``\w+`` runs of ``text``: every character no word has (an ASCII one) made a
    space, then split, and only the pieces with other characters searched (half the time of
    ``_WORD.findall`` over the corpus: 0.12 against 0.26 s, before any worker starts)."""
    pieces = set(text.encode("utf-8", "surrogatepass").translate(_NOT_WORD).decode("utf-8", "surrogatepass").split())
    if text.isascii():
        return pieces
    return {word for piece in pieces for word in ((piece,) if piece.isascii() else _WORD.findall(piece))}


def _has_word(text: str, token: re.Pattern) -> bool:
    r"""``token`` (a word and no word character after it) matches where no word character
    precedes: a whole ``\w+`` run, as the word index splits texts."""
    for match in token.finditer(text):
        start = match.start()
        if start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_"):
            return True
    return False


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


_SKIPPED_DIRS = {".git", ".hg", ".venv", "venv", "node_modules", "__pycache__", "build", "dist", ".tox"}
_MAX_FILES = 20_000


def find_module_file(root: Path, parts: list[str]) -> Path | None:
    """The file of module ``parts`` under ``root`` (``a/b.py`` or ``a/b/__init__.py``)."""
    if (root / parts[0]).exists() or (root / f"{parts[0]}.py").exists():
        base = root.joinpath(*parts)
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate.resolve()
    return None


def _drop_bodies(tree: ast.Module, may_bind_globals: bool) -> None:
    """Each function's body replaced by ``pass``, but for those an importer reads
    (``_read_by_importers``). Only statements are walked (a ``def`` or a ``global`` is never
    inside an expression), and a dropped body is not walked: an ``ast.walk`` of each
    function took ~2 s of the corpus."""
    statements: list[ast.AST] = [tree]
    for node in statements:  # grows as it goes
        for child in _inner_statements(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and not _read_by_importers(child, may_bind_globals):
                child.body = [ast.copy_location(ast.Pass(), child.body[0])]
            else:
                statements.append(child)


def _cut(tree: ast.AST, kept: Callable[[ast.FunctionDef | ast.AsyncFunctionDef], bool]) -> ast.AST:
    """``tree`` with the body of each function not ``kept`` replaced by ``pass``, on a copy:
    the statements down to each cut function are copied, the rest is shared with ``tree``,
    which stays whole (a model is built of it too)."""
    copied = None
    for name, value in ast.iter_fields(tree):
        if not (isinstance(value, list) and value and isinstance(value[0], _STATEMENTS)):
            continue
        cut = [_cut_statement(child, kept) for child in value]
        if any(new is not old for new, old in zip(cut, value)):
            copied = copied or copy.copy(tree)
            setattr(copied, name, cut)
    return copied or tree


def _cut_statement(node: ast.AST, kept: Callable[[ast.FunctionDef | ast.AsyncFunctionDef], bool]) -> ast.AST:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not kept(node):
        copied = copy.copy(node)
        copied.body = [ast.copy_location(ast.Pass(), node.body[0])]
        return copied
    return _cut(node, kept)


_STATEMENTS = (ast.stmt, ast.excepthandler, ast.match_case)


def _binds_elsewhere(source: str) -> bool:
    """``source`` may hold a `global` or `nonlocal` statement (or text like one): a function
    body may bind names outside its own scope only through them. The keyword starts its
    line, or follows a `;`, a `:` or a lone `\\r`, with blanks between."""
    if "global" not in source and "nonlocal" not in source:
        return False  # the substrings first: the pattern has no literal prefix to skip to
    for match in _GLOBAL_KEYWORD.finditer(source):
        before = match.start()
        while before > 0 and source[before - 1] in " \t\f":
            before -= 1
        if before == 0 or source[before - 1] in "\n\r;:":
            return True
    return False


def _line_def_names(text: str) -> frozenset[str]:
    """The names of the ``def``s (``async`` ones too) at the start of a line of ``text``,
    whose lines may end in a lone `\\r`."""
    names = set()
    for match in _DEF_KEYWORD.finditer(text):
        start = match.start()
        line = max(text.rfind("\n", 0, start), text.rfind("\r", 0, start)) + 1
        if line == start or _ASYNC_PREFIX.fullmatch(text, line, start):
            names.add(match.group(1))
    return frozenset(names)


def _read_by_importers(function: ast.FunctionDef | ast.AsyncFunctionDef, may_bind_globals: bool) -> bool:
    """What a module-level name resolves to reads this function's body (``_header_of``).
    ``may_bind_globals``: the file's text may hold a ``global`` statement (``_binds_elsewhere``)."""
    if is_unwrap_idiom(function):
        return True
    if not may_bind_globals:
        return False
    statements: list[ast.AST] = [function]
    for node in statements:
        for child in _inner_statements(node):
            if isinstance(child, ast.Global):
                return True
            statements.append(child)
    return False


def _inner_statements(node: ast.AST) -> list[ast.AST]:
    """The statements (and ``except``/``case`` clauses) directly under ``node``."""
    return [c for c in ast.iter_child_nodes(node) if isinstance(c, (ast.stmt, ast.excepthandler, ast.match_case))]


def _python_files(root: Path) -> list[Path]:
    found: list[Path] = []
    for folder, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in _SKIPPED_DIRS and not d.startswith(".")]
        found += [Path(folder) / name for name in filenames if name.endswith(".py")]
        if len(found) > _MAX_FILES:  # a home folder opened as a workspace: stop looking
            break
    return found


def _module_arguments(model: SemanticModel, call: ast.Call) -> dict:
    passed = {}
    arguments = [*enumerate(call.args), *((k.arg, k.value) for k in call.keywords if k.arg)]
    for key, value in arguments:
        dotted = _static_dotted(model, value)
        if dotted and is_module(canonical_symbol(dotted) or ""):
            passed[key] = dotted
    return passed


def _static_dotted(model: SemanticModel, expr: ast.AST, depth: int = 0) -> str | None:
    """Dotted path through imports and aliases only, never through parameters: callers
    are indexed the same way whatever order the project's files are read in."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, ast.Attribute):
        base = _static_dotted(model, expr.value, depth + 1)
        return f"{base}.{expr.attr}" if base else None
    if not isinstance(expr, ast.Name):
        return None
    binding = model.binding_of(expr)
    if binding is None:
        return None
    if binding.kind == "import":
        return binding.dotted
    if binding.kind == "assign" and isinstance(binding.value, (ast.Name, ast.Attribute)):
        return _static_dotted(model, binding.value, depth + 1)
    return None


class _IndexWindow:
    """The index as one file's rules reach for it: a module read through it is recorded as
    read by that file; anything else (listing every file, ...) makes the file depend on
    every project file."""

    def __init__(self, index: ProjectIndex, path: Path):
        self._index, self._path = index, path

    def model_of(self, path: Path) -> SemanticModel | None:
        self._index._record(self._path, read=self._index.resolved(path))
        return self._index.model_of(path)

    def view(self, path: Path | None, package: str | None) -> ProjectView | None:
        if path is not None:
            self._index._record(self._path, read=self._index.resolved(path))
        return self._index.view(path, package)

    def text_of(self, path: Path) -> str:
        """The text ``model_of`` would read (recorded as read, as it is): a filter before
        building a module's model."""
        resolved = self._index.resolved(path)
        self._index._record(self._path, read=resolved)
        edited = self._index._overlaid(resolved)
        return edited if edited is not None else self._index._text(resolved)

    def __getattr__(self, name: str):
        self._index._consulted(self._path).scanned = True
        return getattr(self._index, name)


class ProjectView:
    """One file's window on the project index."""

    def __init__(self, index: ProjectIndex, path: Path, package: str | None):
        self._index = index
        self.path = path  # resolved
        self.package = package
        self.root = _package_folder(path, package)
        try:
            parts = path.with_suffix("").relative_to(self.root).parts
        except ValueError:
            parts = (path.stem,)
        self.module_key = ".".join(parts).removesuffix(".__init__")

    @property
    def index(self) -> _IndexWindow:
        """The whole index, as this file's rules reach for it (what they read is recorded)."""
        return self._index.window(self.path)

    def resolve(self, dotted: str, depth: int = 0) -> str | None:
        """Where a dotted path into another project module really points."""
        return self._index._resolve(dotted, self.root, self.path, self.package, depth)

    def module_arguments(self, function: str) -> list[dict]:
        return self._index.module_arguments(self, function)

    def mentioned_elsewhere(self, word: str) -> bool:
        return self._index.mentioned_elsewhere(self, word)

    def field_settings(self, name: str) -> list[tuple[Path, ast.expr]]:
        return self._index.field_settings(self, name)

    def mentioning(self, word: str) -> list[Path]:
        return self._index.mentioning(self, word)

    def definers(self, function: str, module: tuple[str, ...] = ()) -> list[Path]:
        """Other project files defining a top-level function named ``function`` (in the
        module ``module`` names, when given: ``ProjectIndex.definers``)."""
        return self._index.definers(self, function, module)

    def lending(self, source: str, tree: ast.Module) -> AbstractContextManager[None]:
        """``ProjectIndex.lending`` for this file."""
        return self._index.lending(self.path, source, tree)

    def lend_model(self, package: str | None, model: SemanticModel) -> None:
        """``ProjectIndex.lend_model`` for this file."""
        self._index.lend_model(self.path, package, model)

    def unlend_model(self, model: SemanticModel) -> None:
        """``ProjectIndex.unlend_model`` for this file."""
        self._index.unlend_model(self.path, model)
