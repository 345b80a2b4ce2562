"""Incremental analysis: after an edit, only the chunks (top-level statements, see
``chunks``) whose analysis can have changed are analysed again; the result is the full
analysis's (tests/test_incremental.py compares them on every edit of a fuzzed session).

A chunk is analysed in a *reduced module*: the file's text with every chunk it cannot
depend on replaced by its stub (same lines, same top-level names, no code). What it can
depend on is found through names: the chunks defining a name it reads or binds, and
theirs in turn; imports and the docstring always; and, when its rules asked who uses one
of its module-level names or calls one of its functions, the chunks reading those names.
The reduced model records such questions (and which module-level names it looked up), so
the closure is grown until the questions are answered from inside it. A result is reused
while its chunk, its closure (the same objects, in the same order) and the answers to
those look-ups are unchanged; its positions move with the chunks they lie in.

Rules that judge the whole module (``visit_Module``) run once per file on a reduced
module of the chunks their policy names, and are reused likewise. A rule declares its
policy (``Rule.module_scope``: which chunks it judges, how it needs their readers and
neighbours); this machinery never names a rule.

Modules: ``chunks`` (cutting the text), ``chunk_graph`` (names, closures, reduced
modules), ``tracking`` (what an analysis asked), ``chunk_results`` (results and how they
move), ``module_policies`` (whole-module rules), this one (deciding what to redo).
"""

from __future__ import annotations

import ast
import dataclasses
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from functools import cached_property

from flydsl_ls.analysis.engine import (
    SYNTAX_ERROR,
    AnalysisRequest,
    FileAnalysis,
    Interrupted,
    analyze,
    finish,
    handlers,
    run_rules,
    syntax_error,
)
from flydsl_ls.analysis.incremental.chunk_graph import ChunkGraph, union
from flydsl_ls.analysis.incremental.chunk_results import ChunkResult
from flydsl_ls.analysis.incremental.chunks import Chunk, resplit, split, unchanged_head
from flydsl_ls.analysis.incremental.module_policies import Policy, policy_for
from flydsl_ls.analysis.incremental.tracking import TrackedModel, Tracker
from flydsl_ls.analysis.model import recovery
from flydsl_ls.analysis.model.diagnostic import Diagnostic
from flydsl_ls.analysis.model.parsing import parse
from flydsl_ls.analysis.model.project import ProjectView
from flydsl_ls.analysis.model.semantic import SemanticModel
from flydsl_ls.analysis.model.text import LineIndex
from flydsl_ls.analysis.rules.base import Rule
from flydsl_ls.analysis.rules.context import AnalysisOptions

log = logging.getLogger(__name__)

_MAX_ROUNDS = 4  # closure growth rounds before analysing against the whole file
_HOVER_MODELS = 3


class IncrementalAnalyzer:
    """Keeps what one document's last analysis learnt, to redo only what an edit changed."""

    def __init__(self) -> None:
        self._retired: list[SemanticModel] = []  # hover models dropped: see release_models
        self.interrupted = False  # the last analysis stopped after its first findings (``analyze``)
        # Held while the lint thread reads models (``models_in_use``): none is disposed then.
        self._in_use = threading.Lock()
        # The kept models are looked up on the event loop and kept by the lint thread.
        self._hovers_lock = threading.Lock()
        self.forget()

    def forget(self) -> None:
        """Drop every cache (a document not edited for a while)."""
        self._chunks: list[Chunk] = []
        self._scopes: tuple = ()  # the module scopes ``_chunks`` were judged for
        self._state: ChunkGraph | None = None
        # (text, ``_state``) once analysed, set at once: read on the event loop (``statement_at``)
        self._analysed: tuple[str, ChunkGraph] | None = None
        self._settings: tuple | None = None
        self._results: dict[tuple, ChunkResult] = {}  # (chunk or rule code) -> result
        self._retire_hovers()
        self.repaired: tuple[int, int] | None = None  # lines stood in for by the last analysis (recovery)
        self.reanalysed = 0  # chunks (and module rules) analysed by the last call: for tests

    def analyze(
        self,
        request: AnalysisRequest,
        *,
        index: LineIndex | None = None,
        early: Callable[[FileAnalysis], None] | None = None,
        stop: Callable[[], bool] | None = None,
        _repairing: bool = False,
    ) -> FileAnalysis:
        """What ``engine.analyze`` returns for ``request`` (the model aside: None);
        ``index``: its source's line table, when the caller has one. ``early``: called
        first with the findings of what the edit changed itself and, for the rest it can
        change only through what that reads (the builders calling an edited helper), their
        last findings, moved; then the returned analysis redoes the rest. Not called when
        there is no such rest. ``stop``, asked while the rest is redone: True leaves it
        for the next analysis and returns ``early``'s findings (``interrupted`` says so):
        the next keystroke need not wait for builders it may change again."""
        self.repaired = None
        self.interrupted = False
        source, rules, options = request.source, request.rules, request.options
        package, path, project = request.package, request.path, request.project
        settings = (
            tuple(r.code for r in rules),
            dataclasses.astuple(options),
            package,
            path,
            id(project.index) if project is not None else None,
            project.index.generation if project is not None else None,
        )
        if settings != self._settings:
            self._results.clear()
            self._retire_hovers()  # they answered for other settings or another project
            self._settings = settings
        scopes = tuple(r.module_scope for r in _module_rules(rules) if r.module_scope is not None)
        if scopes != self._scopes:  # the chunks are judged for the rules' scopes: cut them again
            self._chunks = []
            self._scopes = scopes
        whole = None  # the whole file's tree, when it was parsed
        try:
            editing = bool(self._chunks)
            chunks = resplit(self._chunks, source, package, scopes) if self._chunks else None
            if chunks is None:
                chunks, whole = self._parse_whole(source, package, path, scopes)
        except SyntaxError as error:
            found = [syntax_error(source, error)] if SYNTAX_ERROR in {r.code for r in rules} else []
            repaired = None if _repairing else recovery.repair(source, error, self._check)
            if repaired is None:
                return FileAnalysis(found, None)
            # The repaired text is just another version: only the chunks it changed are redone.
            inner = self.analyze(request.with_source(repaired.text), _repairing=True)
            self.repaired = (repaired.first, repaired.last)
            return FileAnalysis(finish(source, found + repaired.kept(inner.diagnostics)), None, inner.internal_errors)
        except (ValueError, RecursionError, MemoryError):  # what the full analysis reports
            return analyze(request)
        self._chunks = chunks
        self.repaired = None
        version = ChunkGraph(chunks, self._state)
        self._state = version
        self._analysed = None if _repairing else (source, version)
        if index is None or index.text != source:
            index = LineIndex(source)
        job = _Job(version, rules, options, package, path, project, index)
        first = None
        if early is not None and not _repairing:
            first = lambda found: early(FileAnalysis(finish(source, found, rules), None, []))
        lending = project.lending(source, whole) if project is not None and whole is not None else nullcontext()
        try:
            try:
                with lending:
                    diagnostics, errors = self._run(job, first, stop)
            finally:
                # A file's syntax trees are kept while it is edited (~8 MB for 5,700 lines):
                # the next keystroke, hover or inlay hint builds its models without parsing
                # (a hover in a 3,000-line builder parsed it again: ~100 ms). A file only
                # opened keeps none (the 213 real files would hold ~400 MB).
                if not editing:
                    for chunk in chunks:
                        chunk.forget_statements()
        except (RecursionError, SyntaxError, ValueError) as error:  # a reduced module went wrong
            log.warning("incremental analysis failed (%s); analysing the whole file", error)
            errors = [str(error)]
        if errors:  # a crashing rule stops for the rest of a file: only a full run says where
            self._results.clear()
            return analyze(request)
        # A repaired text stands in for one that does not parse: its suppressions are not judged.
        return FileAnalysis(finish(source, diagnostics, None if _repairing else rules), None, [])

    def _parse_whole(
        self, source: str, package: str | None, path: str | None, scopes: tuple
    ) -> tuple[list[Chunk], ast.Module]:
        """The chunks (and tree) of a source whose edit did not parse on its own. The statements
        before the edit parsed, so the first error is after them: parse from there
        (blank lines keep the numbering), and the whole only when that succeeds."""
        head, offset = unchanged_head(self._chunks, source) if self._chunks else (0, 0)
        if offset:
            lines = sum(c.lines for c in self._chunks[:head])
            parse("\n" * lines + source[offset:], filename=path or "<unknown>")
        tree = parse(source, filename=path or "<unknown>")
        return split(source, tree.body, package, reusable=self._chunks, base=0, scopes=scopes), tree

    def _check(self, text: str, first: int) -> None:
        """``parse(text)``'s SyntaxError, for a repair of lines from ``first`` on: the
        chunks before them are unchanged and parsed, so only what follows is parsed
        (blank lines keep the numbering), as in ``_parse_whole``."""
        head, offset = unchanged_head(self._chunks, text) if self._chunks else (0, 0)
        lines = sum(c.lines for c in self._chunks[:head])
        if offset and lines <= first:
            parse("\n" * lines + text[offset:])
        else:
            parse(text)

    def model_at(self, line: int) -> SemanticModel | None:
        """A model answering, for the top-level statement holding 0-based ``line`` of the
        last source analysed, what the whole file's model would (names, types): for hover."""
        version = self._state
        if version is None or not version.chunks:
            return None
        if self.repaired is not None and self.repaired[0] <= line <= self.repaired[1]:
            return None  # a stand-in there, not the user's text
        index = version.chunk_at(line)
        chunk = version.chunks[index]
        cached = self._results.get(("node", chunk))
        # With the chunks reading its names: a function's parameter types may come from
        # its calls. Not an import's or an assignment's (hover on an import reads the
        # alias alone; an assigned name's type is its value's), whose readers may be
        # most of a file (a constant read by every builder).
        readers = chunk.defines if chunk.kind in ("def", "class") else frozenset()
        asked = readers | (cached.asked if cached is not None else frozenset())
        everything = cached.everything if cached is not None else False
        members = version.closure([index], asked, everything)
        with self._hovers_lock:
            for hover in self._hovers:
                if hover.answers(version, chunk, members):
                    self._hovers.remove(hover)
                    self._hovers.append(hover)  # the most recent last
                    return hover.model
        settings = self._settings or ()
        package = settings[2] if len(settings) > 2 else None
        text, tree = version.reduced(members)
        model = SemanticModel(text, tree, package, self._project)
        self._keep(_HoverModel.of(version, chunk, model, members), version)
        return model

    @property
    def analysed(self) -> str | None:
        """The text of the last analysis (None: none, or it stood in for a text not parsed)."""
        analysed = self._analysed
        return analysed[0] if analysed is not None else None

    def statement_at(self, line: int, text: str) -> tuple[int, int, str | None, str] | None:
        """(first line, last line, name of a ``def``, text) of the top-level statement holding
        0-based ``line`` of ``text``, blank lines after it included, when ``text`` is the last
        source analysed (None otherwise): where a request finds its function without parsing
        the file. Safe from the event loop while the lint thread analyses."""
        analysed = self._analysed
        if analysed is None or analysed[0] != text or not analysed[1].chunks:
            return None
        version = analysed[1]
        index = version.chunk_at(line)
        chunk, start = version.chunks[index], version.starts[index]
        return start, start + chunk.lines - 1, chunk.name if chunk.kind == "def" else None, chunk.text

    def models_of_lines(self, first: int, last: int) -> list[tuple[int, int, SemanticModel]] | None:
        """(first line, last line, ``model_at`` there) of each top-level statement from
        0-based ``first`` to ``last`` of the last source analysed that may assign a name:
        not the imports or the docstring, which would cost a model each at the top of a
        file. None when one has no model (a stand-in for lines not parsed). Read them inside
        ``models_in_use`` off the event loop."""
        version = self._state
        if version is None or not version.chunks:
            return None
        found = []
        index = version.chunk_at(first)
        while index < len(version.chunks) and version.starts[index] <= last:
            chunk, start = version.chunks[index], version.starts[index]
            if chunk.kind not in ("import", "docstring", "gap"):
                model = self.model_at(start)
                if model is None:
                    return None
                found.append((start, start + chunk.lines - 1, model))
            index += 1
        return found

    @contextmanager
    def models_in_use(self) -> Iterator[None]:
        """While held, ``release_models`` disposes nothing (another thread reads models)."""
        with self._in_use:
            yield

    def _keep_for_hover(self, version: ChunkGraph, index: int, model, members, asked, everything: bool) -> bool:
        """The model a lint built for the one chunk it redid answers hover (and inlay hints)
        there too, when it holds what ``model_at`` would: the chunk's closure with its own
        names' readers. Saves building that model again after each keystroke."""
        chunk = version.chunks[index]
        kept = set(map(id, members))
        if not all(id(c) in kept for c in version.closure([index], chunk.defines | asked, everything)):
            return False
        model.track(Tracker())  # hover's questions are not the analysis's
        self._keep(_HoverModel.of(version, chunk, model, members), version)
        return True

    def _keep(self, hover: _HoverModel, version: ChunkGraph) -> None:
        """Three models are kept: the statement being edited and the last two read elsewhere
        (a view moving between two large functions). A model that can no longer answer in
        ``version`` goes first: each keystroke's model of the edited statement replaces the
        last one's, rather than pushing out a large function's (~100 ms to build again)."""
        with self._hovers_lock:
            for old in [h for h in self._hovers if not h.current(version)]:
                self._hovers.remove(old)
                self._retired.append(old.model)
            self._hovers.append(hover)
            while len(self._hovers) > _HOVER_MODELS:
                self._retired.append(self._hovers.pop(0).model)

    def _retire_hovers(self) -> None:
        with self._hovers_lock:
            self._retired += [h.model for h in getattr(self, "_hovers", ())]
            self._hovers: list[_HoverModel] = []

    def release_models(self) -> None:
        """Dispose the hover models dropped since the last call (``SemanticModel.dispose``:
        freed now, not by the cyclic collector). Only where none of them can be in use: the
        server calls it on its event loop before a request asks ``model_at`` (requests use a
        model only between two awaits; the analysis never uses one)."""
        if not self._in_use.acquire(blocking=False):
            return  # the lint thread reads some: next time
        try:
            retired, self._retired = self._retired, []
            for model in {id(m): m for m in retired}.values():  # once each (an analysis may race a hover)
                model.dispose()
        finally:
            self._in_use.release()

    # --- one version ----------------------------------------------------------------
    def _run(
        self, job: _Job, early: Callable[[list[Diagnostic]], None] | None = None, stop: Callable[[], bool] | None = None
    ) -> tuple[list[Diagnostic], list[str]]:
        self._project = job.project
        version = job.version
        handled = job.handled_types
        diagnostics: list[Diagnostic] = []
        errors: list[str] = []
        live: dict[tuple, ChunkResult] = {}
        stale = []
        for index, chunk in enumerate(version.chunks):
            if job.node_rules and chunk.visited_by(handled):
                key = ("node", chunk)
                result = self._reuse(key, version, lambda r, i=index: version.chunk_closure(i, r.asked, r.everything))
                if result is None:
                    stale.append(index)
                else:
                    live[key] = result
        stale_rules = []
        for rule in job.module_rules:
            policy = policy_for(rule)
            key = ("module", rule.code)
            result = self._reuse(key, version, lambda r, p=policy: p.key(version, r.asked))
            if result is None:
                stale_rules.append(rule)
            else:
                live[key] = result
        self.reanalysed = len(stale) + len(stale_rules)
        if early is not None and len(stale) + len(stale_rules) > 1:
            # What kept its text but reads what changed: its last findings stand in, moved,
            # while the edited statements are analysed (when none lies in an edited one).
            keys = [("node", version.chunks[i]) for i in stale] + [("module", r.code) for r in stale_rules]
            standing = {key: moved for key in keys if (moved := self._moved(key, version)) is not None}
            if any(kind == "node" for kind, _ in standing):  # readers to redo, not just module passes
                now = [i for i in stale if ("node", version.chunks[i]) not in standing]
                now_rules = [r for r in stale_rules if ("module", r.code) not in standing]
                self._analyse_into(job, live, now, now_rules)
                found = [d for result in (*live.values(), *standing.values()) for d in result.diagnostics]
                early(found)
                rest, rest_rules = [i for i in stale if i not in now], [r for r in stale_rules if r not in now_rules]
                try:
                    self._analyse_into(job, live, rest, rest_rules, stop)
                except Interrupted:
                    # Their results of before stay: they answer for other texts, so the
                    # next analysis redoes them.
                    self._results = {**live, **{key: self._results[key] for key in standing}}
                    self.interrupted = True
                    return found, []
                stale, stale_rules = [], []
        self._analyse_into(job, live, stale, stale_rules)
        for result in live.values():
            diagnostics += result.diagnostics
            errors += result.errors
        self._results = live  # drop results of chunks that are gone
        return diagnostics, errors

    def _moved(self, key: tuple, version: ChunkGraph) -> ChunkResult | None:
        result = self._results.get(key)
        return result.moved_to(version) if result is not None else None

    def _analyse_into(
        self, job: _Job, live: dict, stale: list[int], stale_rules: list[type[Rule]], stop: Callable[[], bool] | None = None
    ) -> None:
        """Analyse these chunks and whole-module rules into ``live``; ``stop``: asked before
        each statement of their model and rule walk (``Interrupted``)."""
        if stop is not None and stop():
            raise Interrupted
        if stale:
            chunk_results, rule_results = self._analyse_chunks(job, stale, stale_rules, stop)
            for index, result in chunk_results.items():
                live[("node", job.version.chunks[index])] = result
            for code, result in rule_results.items():
                live[("module", code)] = result
        for rule in stale_rules:
            if ("module", rule.code) not in live:
                live[("module", rule.code)] = self._analyse_module_rule(job, rule, policy_for(rule))

    def _reuse(self, key: tuple, version: ChunkGraph, members_now) -> ChunkResult | None:
        result = self._results.get(key)
        if result is None:
            return None
        now = tuple(version.chunks) if result.everything else members_now(result)
        if result.members != now:
            return None
        if result.prelude != version.prelude:
            return None
        if result.names is not version.names:  # a module-level name came, went or got another binder
            if result.presence != version.presence(result.looked_up, result.all_names):
                return None
            result.names = version.names  # checked against these names: no need again
        return result.moved_to(version)

    def _analyse_chunks(
        self, job: _Job, stale: list[int], rules: list[type[Rule]], stop: Callable[[], bool] | None = None
    ) -> tuple[dict[int, ChunkResult], dict[str, ChunkResult]]:
        """Analyse these chunks in one reduced module holding all their closures (each
        chunk's rules still only visit its own statements), and, in the same module
        when it also holds their domains, these whole-module rules."""
        version = job.version
        policies = {rule.code: policy_for(rule) for rule in rules}
        domains = union(p.domain(version, frozenset()) for p in policies.values())
        asked = {i: frozenset() for i in stale}
        everything = dict.fromkeys(stale, False)
        model = None
        for round_ in range(_MAX_ROUNDS + 1):
            last = round_ == _MAX_ROUNDS
            if last:
                everything = dict.fromkeys(stale, True)
            members = union([domains, *(version.closure([i], asked[i], everything[i]) for i in stale)])
            stand_ins: dict[int, str] = {}
            for policy in policies.values():
                stand_ins.update(policy.stand_ins(version, members))
            shared = Tracker()  # look-ups answered from caches the chunks share: count for all
            if model is not None:
                job.dispose(model)
            model, tree = job.reduced_model(members, shared, stand_ins or None, stop)
            if not stand_ins and job.project is not None:
                job.project.lend_model(job.package, model)  # read when the file is scanned as a caller
            statements = version.statements_by_chunk(tree)
            runs = {}
            for i in stale:
                tracker = Tracker(looked_up=shared.looked_up)
                model.track(tracker)
                try:
                    found, errors = run_rules(model, job.node_rules, job.options, job.path, statements.get(i, []), stop)
                except Interrupted:
                    job.dispose(model)
                    raise
                runs[i] = (found, errors, tracker)
            grown = False
            for i, (_, _, tracker) in runs.items():
                if tracker.all_uses and not everything[i]:
                    everything[i] = grown = True
                elif not tracker.asked <= asked[i] and not everything[i]:
                    asked[i] |= tracker.asked
                    everything[i] = len(asked[i]) > 64
                    grown = True
            if not grown or last:
                break
            kept = set(map(id, members))
            if all(id(c) in kept for i in stale for c in version.closure([i], asked[i], everything[i])):
                break  # the module analysed already held every closure grown
        all_names = shared.all_names or any(t.all_names for _, _, t in runs.values())
        results = {}
        for i, (found, errors, tracker) in runs.items():
            tracker.all_names = all_names
            own = version.chunk_closure(i, asked[i], everything[i])
            results[i] = ChunkResult.of(found, errors, own, asked[i], everything[i], tracker, version)
        kept = set(map(id, members))
        done = {}
        for rule in rules:
            tracker = Tracker(looked_up=set(shared.looked_up))
            model.track(tracker)
            found, errors = run_rules(model, [rule], job.options, job.path)
            asked_now = frozenset(tracker.asked)
            policy = policies[rule.code]
            if all(id(c) in kept for c in policy.domain(version, asked_now)):
                tracker.all_names = tracker.all_names or all_names
                key = policy.key(version, asked_now)
                done[rule.code] = ChunkResult.of(found, errors, key, asked_now, False, tracker, version)
        # the statement edited: new text, no result of before (the others are its readers)
        edited = [i for i in stale if ("node", version.chunks[i]) not in self._results]
        if len(edited) == 1 and not stand_ins:
            only = edited[0]
            if self._keep_for_hover(version, only, model, members, asked[only], everything[only]):
                job.unlend(model)
                return results, done
        job.dispose(model)
        return results, done

    def _analyse_module_rule(self, job: _Job, rule: type[Rule], policy: Policy) -> ChunkResult:
        version = job.version
        asked: frozenset[str] = frozenset()
        for _ in range(_MAX_ROUNDS):
            members = policy.domain(version, asked)
            tracker = Tracker()
            found, errors = [], []
            if members:
                model, _ = job.reduced_model(members, tracker, policy.stand_ins(version, members))
                found, errors = run_rules(model, [rule], job.options, job.path)
                model.dispose()
            if tracker.all_uses or len(asked) > 64:
                break
            if tracker.asked <= asked:
                return ChunkResult.of(found, errors, policy.key(version, asked), asked, False, tracker, version)
            asked |= tracker.asked
        tracker = Tracker()
        model, _ = job.reduced_model(tuple(version.chunks), tracker)
        found, errors = run_rules(model, [rule], job.options, job.path)
        model.dispose()
        return ChunkResult.of(found, errors, tuple(version.chunks), asked, True, tracker, version)


@dataclass
class _Job:
    version: ChunkGraph
    rules: Sequence[type[Rule]]
    options: AnalysisOptions
    package: str | None
    path: str | None
    project: ProjectView | None

    @cached_property
    def node_rules(self) -> list[type[Rule]]:
        return [r for r in self.rules if r.code != SYNTAX_ERROR and not hasattr(r, "visit_Module")]

    @cached_property
    def module_rules(self) -> list[type[Rule]]:
        return _module_rules(self.rules)

    @cached_property
    def handled_types(self) -> frozenset[type]:
        return frozenset(node_type for rule in self.node_rules for node_type, _ in handlers(rule))

    index: LineIndex

    def unlend(self, model: SemanticModel) -> None:
        if self.project is not None:
            self.project.unlend_model(model)

    def dispose(self, model: SemanticModel) -> None:
        """``model`` freed, and no longer lent to the project (``lend_model``)."""
        self.unlend(model)
        model.dispose()

    def reduced_model(
        self,
        members: tuple[Chunk, ...],
        tracker: Tracker,
        stand_ins: dict[int, str] | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> tuple[SemanticModel, ast.Module]:
        text, tree = self.version.reduced(members, stand_ins)
        model = TrackedModel(text, tree, self.package, self.project, tracker, stop)
        if stand_ins is None:
            # Saves a line table per analysis: the lines of members are the real ones, and
            # rules visiting a chunk read no others (whole-module rules, which scan lines
            # for names, get stand-ins and their own table).
            model.__dict__["index"] = self.index
        return model, tree


@dataclass(frozen=True)
class _HoverModel:
    """The model hover and inlay hints read for one top-level statement, and what it was
    built from: it answers for a later version while that statement, every chunk of its
    reduced module and their lines, and the file's top-level names are the same (an edit
    elsewhere, below it or in code it does not read)."""

    chunk: Chunk
    model: SemanticModel
    members: tuple[Chunk, ...]
    starts: tuple[int, ...]
    names: frozenset

    @classmethod
    def of(cls, version: ChunkGraph, chunk: Chunk, model: SemanticModel, members) -> _HoverModel:
        members = tuple(members)
        return cls(chunk, model, members, tuple(version.start_of[id(c)] for c in members), version.names)

    def answers(self, version: ChunkGraph, chunk: Chunk, needed) -> bool:
        if chunk is not self.chunk or not self.current(version):
            return False
        held = set(map(id, self.members))
        return all(id(c) in held for c in needed)

    def current(self, version: ChunkGraph) -> bool:
        """Built from what ``version`` still has: its names, and every member where it was."""
        if version.names is not self.names:
            return False
        starts = version.start_of
        return all(starts.get(id(c)) == s for c, s in zip(self.members, self.starts))


def _module_rules(rules: Sequence[type[Rule]]) -> list[type[Rule]]:
    return [r for r in rules if r.code != SYNTAX_ERROR and hasattr(r, "visit_Module")]
