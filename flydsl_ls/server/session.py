"""All server state: open documents, editor settings, and the client's capabilities reduced
once, at initialize, to the few booleans the handlers need."""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.uris import to_fs_path

from flydsl_ls import baseline, config, pins
from flydsl_ls.analysis.engine import FileAnalysis
from flydsl_ls.analysis.incremental import IncrementalAnalyzer
from flydsl_ls.analysis.model.project import ProjectIndex
from flydsl_ls.analysis.model.semantic import SemanticModel
from flydsl_ls.analysis.model.text import Encoding, LineIndex, Position
from flydsl_ls.scan_store import ScanStore
from flydsl_ls.server import schedule
from flydsl_ls.server.diagnostic_json import FragmentCache
from flydsl_ls.server.log import SHOW_USER
from flydsl_ls.server.settings import EditorSettings

if TYPE_CHECKING:
    from flydsl_ls.config import Settings

log = logging.getLogger(__name__)

# How many documents keep their last analysis (diagnostics, the incremental analyzer's
# per-statement results, the JSON cache) between requests: about 2.5 MB per 1,000 lines
# (tracemalloc, generated 2,000-line kernels). Editing happens in a few files at a time; 200
# open kernels each keeping theirs took 3.5 GB before. A document beyond these re-lints when
# a hover, a code action or a pull of a changed result needs it. At most KEEP_ANALYSED
# documents and KEEP_ANALYSED_LINES lines in all (the most recently used document is always
# kept): eight 3,000-line kernels, or four of 6,000 lines (~60 MB).
KEEP_ANALYSED = 8
KEEP_ANALYSED_LINES = 24_000


@dataclass(frozen=True)
class ClientFeatures:
    encoding: Encoding = "utf-16"
    pull_diagnostics: bool = False  # the client asks (textDocument/diagnostic); do not push
    diagnostic_refresh: bool = False  # workspace/diagnostic/refresh
    code_action_resolve: bool = False  # the client resolves a code action's edit lazily
    apply_edit: bool = False  # workspace/applyEdit (a command can edit the document)
    document_changes: bool = False  # versioned TextDocumentEdits in a WorkspaceEdit
    create_files: bool = False  # a WorkspaceEdit may create a file (resourceOperations "create")
    configuration: bool = False  # workspace/configuration
    markdown_hover: bool = True
    watched_files_registration: bool = False
    work_done_progress: bool = False  # window/workDoneProgress/create
    show_document: bool = False  # window/showDocument
    inlay_hint_refresh: bool = False  # workspace/inlayHint/refresh

    @classmethod
    def from_capabilities(cls, caps: types.ClientCapabilities, encoding: str) -> ClientFeatures:
        text = caps.text_document
        workspace = caps.workspace
        code_action = text.code_action if text else None
        resolve = code_action.resolve_support if code_action else None
        hover = text.hover if text else None
        formats = (hover.content_format if hover else None) or [types.MarkupKind.Markdown]
        edit = workspace.workspace_edit if workspace else None
        watched = workspace.did_change_watched_files if workspace else None
        window = caps.window
        return cls(
            encoding="utf-8" if encoding == types.PositionEncodingKind.Utf8 else "utf-16",
            pull_diagnostics=bool(text and text.diagnostic is not None),
            diagnostic_refresh=bool(
                workspace and workspace.diagnostics and workspace.diagnostics.refresh_support
            ),
            code_action_resolve=bool(resolve and "edit" in (resolve.properties or [])),
            apply_edit=bool(workspace and workspace.apply_edit),
            document_changes=bool(edit and edit.document_changes),
            create_files=bool(edit and edit.document_changes and types.ResourceOperationKind.Create in (edit.resource_operations or [])),
            configuration=bool(workspace and workspace.configuration),
            markdown_hover=types.MarkupKind.Markdown in formats,
            watched_files_registration=bool(watched and watched.dynamic_registration),
            work_done_progress=bool(window and window.work_done_progress),
            show_document=bool(window and window.show_document and window.show_document.support),
            inlay_hint_refresh=bool(workspace and workspace.inlay_hint and workspace.inlay_hint.refresh_support),
        )


@dataclass
class Compiled:
    """A successful compile of a document, kept for its lenses and hints."""

    result: Any  # CompileResult
    text: str  # the text compiled: the hints hold while the document has it
    counts: dict[int, dict[str, int]] | None = None  # 0-based line -> its summary (inlay_hints.py, once)


@dataclass(frozen=True)
class Snapshot:
    """One version of a document as a worker thread sees it, taken on the event loop.

    Work done off the loop (a lint, a quick fix's or fix-all's edit) gets this, never the
    server, the session or the document: their state belongs to the loop, and what the work
    has to report goes back as its return value, which the loop stores. ``project`` is the
    one piece shared with other threads, and is safe to be (analysis/model/project.py)."""

    uri: str
    path: Path | None
    text: str
    version: int
    generation: int  # of the settings
    settings: Settings  # resolved for this document (pyproject.toml, editor settings on top)
    project: ProjectIndex
    encoding: Encoding
    document_changes: bool  # a WorkspaceEdit names the version (``ClientFeatures``)
    index: LineIndex | None = None  # the line table of ``text``, when the document has it
    # The open documents, path (as opened) -> (uri, text, version): a fix's edits of another file are
    # made on its buffer when it is open, on the disk text otherwise.
    open_texts: dict[str, tuple[str, str, int]] = field(default_factory=dict)
    # The project's `.flydsl-ls/baseline.json` (flydsl_ls/baseline.py), when it may have one.
    baseline: Path | None = None


@dataclass
class Analysis:
    """One lint of one document version with one settings generation: lint once, reuse."""

    version: int
    generation: int
    text: str
    result: FileAnalysis
    # Per diagnostic of ``result``, its LSP JSON in the client's encoding up to its ``data``
    # (diagnostics.py): joined, not re-serialized, for every publish or pull.
    fragments: list[str] = field(default_factory=list)
    seconds: float = 0.0  # how long the lint took (the file time bound)
    # Work done for code actions on this version, done once: whether the fix of diagnostic i
    # re-parses; the WorkspaceEdit of its quick fix (None: none); the fix-all edit.
    fix_parses: dict[int, bool] = field(default_factory=dict)
    quick_fix_edits: dict[int, Any] = field(default_factory=dict)
    fix_all_edits: dict[str, Any] = field(default_factory=dict)  # "edit" once computed

    @property
    def result_id(self) -> str:
        return f"{self.version}.{self.generation}"

    @cached_property
    def index(self) -> LineIndex:
        return LineIndex(self.text)


@dataclass
class HintsModel:
    """The whole-file model inlay hints built for ``text`` (inlay_hints.py), kept for the
    next range asked of the same text, as a client asks again when the view scrolls. Read,
    replaced and released on the lint thread only."""

    text: str | None = None  # None: none built
    project_generation: int = 0
    model: SemanticModel | None = None  # None: the text does not parse, even repaired

    def release(self) -> None:
        """Free the model now (megabytes on a large kernel), not by the cyclic collector
        (``SemanticModel.dispose``)."""
        model, self.model, self.text = self.model, None, None
        if model is not None:
            model.dispose()


@dataclass
class Document:
    """An open document. Its text, version and what was published are always kept; the
    heavy state (the last analysis with its syntax tree and model, ``good_model``, the
    JSON cache, the incremental analyzer's caches) only while it is among the session's
    recently used documents (``Session.touch``): the rest re-lint on demand."""

    uri: str
    text: str
    version: int
    path: Path | None
    analysis: Analysis | None = None  # the newest lint, possibly of an older version
    # The first findings of a staged lint (diagnostics.lint), published while the rest is
    # redone: hover reads them; code actions wait for ``analysis`` (a fix of before may
    # rest on what the edit changed).
    early: Analysis | None = None
    good_model: SemanticModel | None = None  # the last model that parsed (hover while typing)
    published: tuple[int, int] | None = None  # (version, generation) last pushed
    linted: tuple[int, int] | None = None  # (version, generation) of the last lint (kept light)
    pending: asyncio.Task | None = None  # the debounced lint waiting to run
    # Reuses the last lint's work for the statements an edit did not touch.
    incremental: IncrementalAnalyzer = field(default_factory=IncrementalAnalyzer)
    # The JSON of the last lints' diagnostics: an unchanged one is not converted again.
    json_cache: FragmentCache = field(default_factory=FragmentCache)
    # A lint took longer than the file time bound: not linted again until saved or reopened.
    too_slow: bool = False
    hints: HintsModel = field(default_factory=HintsModel)

    def forget(self) -> None:
        """Drop the heavy state; the next request that needs it re-lints."""
        self.analysis = self.early = None
        self.good_model = None
        self.json_cache = FragmentCache()
        self.incremental.forget()
        self.incremental.release_models()
        schedule.LINT.submit(self.hints.release)  # the hints model's thread
        self.__dict__.pop("index", None)

    @cached_property
    def index(self) -> LineIndex:
        return LineIndex(self.text)

    def update(self, text: str, version: int) -> None:
        self.text = text
        self.version = version
        self.__dict__.pop("index", None)

    def apply_change(self, change, encoding: Encoding) -> None:
        """One ``contentChanges`` entry: a ranged edit or the whole text."""
        rng = getattr(change, "range", None)
        if rng is None:
            self.text = change.text
        else:
            index = self.index
            start = index.offset(index.from_client(rng.start.line, rng.start.character, encoding))
            end = index.offset(index.from_client(rng.end.line, rng.end.character, encoding))
            if end < start:
                start, end = end, start
            edited = index.edited(start, end, change.text)
            self.text = edited.text
            self.__dict__["index"] = edited
            return
        self.__dict__.pop("index", None)

    def current(self, generation: int) -> Analysis | None:
        a = self.analysis
        if a is not None and a.version == self.version and a.generation == generation:
            return a
        return None

    def to_position(self, pos: types.Position, encoding: Encoding) -> Position:
        return self.index.from_client(pos.line, pos.character, encoding)


@dataclass
class Session:
    features: ClientFeatures = field(default_factory=ClientFeatures)
    documents: dict[str, Document] = field(default_factory=dict)
    init_settings: EditorSettings = field(default_factory=EditorSettings)
    config_settings: EditorSettings = field(default_factory=EditorSettings)
    generation: int = 0  # bumped whenever settings may have changed
    root: Path | None = None
    # Sibling modules and cross-file callers, read from disk (the workspace's files).
    project: ProjectIndex = field(default_factory=ProjectIndex)
    # The CompileService (one warm worker process), created on the first compile command.
    compiler: Any = None
    # uri -> errors of the last compile of that file: kept apart from the lint (like build
    # errors), replaced by the next compile, cleared by a successful one (server/commands.py).
    compile_diagnostics: dict[str, list[types.Diagnostic]] = field(default_factory=dict)
    # uri -> the last successful compile of that file (compile, launch, show ISA commands):
    # its kernels' resources are lenses on their definitions (server/code_lens.py), its
    # lines' instruction counts inlay hints (server/inlay_hints.py).
    compiled: dict[str, Compiled] = field(default_factory=dict)
    # uris of the documents whose heavy state is kept, least recently used first.
    recent: OrderedDict[str, None] = field(default_factory=OrderedDict)
    # The one document that keeps its inlay hints' whole-file model (~11 MB on a 5.7k-line
    # kernel): the last one asked for hints.
    hinted: Document | None = None
    docs_warm: bool = False  # hover's API docs: their loading is scheduled or done
    warm_up_timer: asyncio.TimerHandle | None = None  # their loading, scheduled, not started yet
    _warned: set[str] = field(default_factory=set)

    @property
    def editor(self) -> EditorSettings:
        return self.config_settings.over(self.init_settings)

    @property
    def encoding(self) -> Encoding:
        return self.features.encoding

    def open(self, uri: str, text: str, version: int) -> Document:
        doc = Document(uri, text, version, _path_of(uri))
        self.documents[uri] = doc
        return doc

    def get(self, uri: str) -> Document | None:
        return self.documents.get(uri)

    def close(self, uri: str) -> Document | None:
        doc = self.documents.pop(uri, None)
        self.recent.pop(uri, None)
        if doc is not None:
            if doc is self.hinted:
                self.hinted = None
            if doc.pending is not None:
                doc.pending.cancel()
            doc.forget()
        return doc

    def touch(self, doc: Document) -> None:
        """``doc`` was just linted or asked about: keep its heavy state, and drop that of
        the least recently used documents beyond ``KEEP_ANALYSED`` documents or
        ``KEEP_ANALYSED_LINES`` lines."""
        self.recent[doc.uri] = None
        self.recent.move_to_end(doc.uri)
        lines = {uri: _lines(self.documents.get(uri)) for uri in self.recent}
        count, total = len(lines), sum(lines.values())
        for uri in list(self.recent)[:-1]:  # oldest first; never the one just used
            if count <= KEEP_ANALYSED and total <= KEEP_ANALYSED_LINES:
                break
            old = self.documents.get(uri)
            if old is not None and old.pending is not None and not old.pending.done():
                continue  # its lint may be running on its caches: evicted after it
            del self.recent[uri]
            count, total = count - 1, total - lines[uri]
            if old is not None:
                old.forget()
                if old.path is not None:
                    # The project index keeps the model of a file it read from disk (an
                    # import to resolve, a helper to follow): drop this one's too; it is
                    # read again if a sibling needs it. Not ``forget``: nothing changed, so
                    # every answer and every analysis cache keyed on the index stays.
                    self.project.drop_model(old.path)

    def settings_changed(self) -> None:
        self.generation += 1
        self._warned.clear()  # a problem still there after the change is reported again
        config.clear_cache()
        pins.clear_cache()

    def set_root(self, root: Path | None) -> None:
        self.root = root
        # What it scans of the workspace's files is kept for the next server (scan_store.py).
        self.project = ProjectIndex(roots=[root] if root else [], store=ScanStore(root) if root else None)

    def snapshot(
        self, doc: Document, text: str | None = None, version: int | None = None, index: LineIndex | None = None
    ) -> Snapshot:
        """``doc`` as work on another thread sees it: its current text and version unless
        given (an analysed version), with the settings resolved now, on the loop."""
        if text is None:
            text, version, index = doc.text, doc.version, doc.index
        settings = self.settings_for(doc)
        root = settings.root or self.root
        return Snapshot(
            uri=doc.uri,
            path=doc.path,
            text=text,
            version=doc.version if version is None else version,
            generation=self.generation,
            settings=settings,
            project=self.project,
            encoding=self.encoding,
            document_changes=self.features.document_changes,
            index=index,
            open_texts={
                str(d.path): (d.uri, d.text, d.version) for d in self.documents.values() if d.path is not None
            },
            baseline=baseline.default_path(root) if root is not None else None,
        )

    def settings_for(self, doc: Document) -> Settings:
        """``[tool.flydsl-ls]`` of the nearest pyproject.toml, editor settings on top."""
        anchor = doc.path or (self.root / "untitled.py" if self.root else None)
        base = config.Settings()
        if anchor is not None:
            try:
                base = config.settings_for(anchor)
            except config.ConfigError as error:
                self.warn_once(f"{error}; using defaults")
            except OSError as error:
                self.warn_once(f"cannot read settings for {anchor}: {error}")
            for warning in base.warnings:
                self.warn_once(warning)
        return base.with_overrides(**self.editor.overrides())

    def warn_once(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            log.warning("%s", message, extra=SHOW_USER)


def _lines(doc: Document | None) -> int:
    return doc.text.count("\n") + 1 if doc is not None else 0


def _path_of(uri: str) -> Path | None:
    if not uri.startswith("file:"):
        return None
    try:
        path = to_fs_path(uri)
    except Exception:  # a malformed URI: treat as untitled
        return None
    return Path(path) if path else None
