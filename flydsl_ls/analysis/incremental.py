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

Rules that judge the whole module (``visit_Module``: FLY203, FLY402) run once per file
on a reduced module of the chunks their policy below names, and are reused likewise.
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import logging
import re
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

from flydsl_ls.analysis.parsing import parse
from flydsl_ls.analysis.chunks import Chunk, resplit, split, unchanged_head
from flydsl_ls.analysis.context import AnalysisOptions
from flydsl_ls.analysis.diagnostic import Diagnostic, Edit, Fix
from flydsl_ls.analysis.engine import SYNTAX_ERROR, FileAnalysis, analyze, finish, run_rules, syntax_error
from flydsl_ls.analysis.model import SemanticModel
from flydsl_ls.analysis.project import ProjectView
from flydsl_ls.analysis.rules import ALL_RULES
from flydsl_ls.analysis.rules.base import Rule
from flydsl_ls.analysis.rules.fly401_waitcnt_bitfield import COUNTER_CONSTANT
from flydsl_ls.analysis.text import LineIndex, Position, Range

log = logging.getLogger(__name__)

_MAX_ROUNDS = 4  # closure growth rounds before analysing against the whole file


class IncrementalAnalyzer:
    """Keeps what one document's last analysis learnt, to redo only what an edit changed."""

    def __init__(self) -> None:
        self.forget()

    def forget(self) -> None:
        """Drop every cache (a document not edited for a while)."""
        self._chunks: list[Chunk] = []
        self._state: _Version | None = None
        self._settings: tuple | None = None
        self._results: dict[tuple, _Result] = {}  # (chunk or rule code) -> result
        self._hover: tuple[object, SemanticModel] | None = None
        self.reanalysed = 0  # chunks (and module rules) analysed by the last call: for tests

    def analyze(
        self,
        source: str,
        *,
        rules: Sequence[type[Rule]] = ALL_RULES,
        options: AnalysisOptions | None = None,
        package: str | None = None,
        path: str | None = None,
        project: ProjectView | None = None,
    ) -> FileAnalysis:
        """What ``engine.analyze`` returns for ``source`` (the model aside: None)."""
        options = options or AnalysisOptions()
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
            self._settings = settings
        try:
            chunks = resplit(self._chunks, source, package) if self._chunks else None
            if chunks is None:
                chunks = self._parse_whole(source, package, path)
        except SyntaxError as error:
            codes = {r.code for r in rules}
            return FileAnalysis([syntax_error(source, error)] if SYNTAX_ERROR in codes else [], None)
        except (ValueError, RecursionError, MemoryError):  # what the full analysis reports
            return analyze(source, rules=rules, options=options, package=package, path=path, project=project)
        self._chunks = chunks
        version = _Version(chunks, self._state)
        self._state = version
        self._hover = None
        job = _Job(version, rules, options, package, path, project, LineIndex(source))
        try:
            diagnostics, errors = self._run(job)
        except (RecursionError, SyntaxError, ValueError) as error:  # a reduced module went wrong
            log.warning("incremental analysis failed (%s); analysing the whole file", error)
            errors = [str(error)]
        if errors:  # a crashing rule stops for the rest of a file: only a full run says where
            self._results.clear()
            return analyze(source, rules=rules, options=options, package=package, path=path, project=project)
        return FileAnalysis(finish(source, diagnostics), None, [])

    def _parse_whole(self, source: str, package: str | None, path: str | None) -> list[Chunk]:
        """The chunks of a source whose edit did not parse on its own. The statements
        before the edit parsed, so the first error is after them: parse from there
        (blank lines keep the numbering), and the whole only when that succeeds."""
        head, offset = unchanged_head(self._chunks, source) if self._chunks else (0, 0)
        if offset:
            lines = sum(c.lines for c in self._chunks[:head])
            parse("\n" * lines + source[offset:], filename=path or "<unknown>")
        tree = parse(source, filename=path or "<unknown>")
        return split(source, tree.body, package, reusable=self._chunks)

    def model_at(self, line: int) -> SemanticModel | None:
        """A model answering, for the top-level statement holding 0-based ``line`` of the
        last source analysed, what the whole file's model would (names, types): for hover."""
        version = self._state
        if version is None or not version.chunks:
            return None
        index = version.chunk_at(line)
        chunk = version.chunks[index]
        if self._hover is not None and self._hover[0] is chunk:
            return self._hover[1]
        cached = self._results.get(("node", chunk))
        # With the chunks reading its names: hover on an import alias or a definition
        # looks at their uses (and the diagnostics there).
        asked = chunk.defines | (cached.asked if cached is not None else frozenset())
        everything = cached.everything if cached is not None else False
        settings = self._settings or ()
        package = settings[2] if len(settings) > 2 else None
        members = version.closure([index], asked, everything)
        text, tree = version.reduced(members)
        model = SemanticModel(text, tree, package, self._project)
        self._hover = (chunk, model)
        return model

    # --- one version ----------------------------------------------------------------
    def _run(self, job: _Job) -> tuple[list[Diagnostic], list[str]]:
        self._project = job.project
        version = job.version
        handled = job.handled_types
        diagnostics: list[Diagnostic] = []
        errors: list[str] = []
        live: dict[tuple, _Result] = {}
        stale = []
        for index, chunk in enumerate(version.chunks):
            if job.node_rules and chunk.node_types & handled:
                key = ("node", chunk)
                result = self._reuse(key, version, lambda r, i=index: version.chunk_closure(i, r.asked, r.everything))
                if result is None:
                    stale.append(index)
                else:
                    live[key] = result
        stale_rules = []
        for rule in job.module_rules:
            policy = POLICIES.get(rule.code, _Everything())
            key = ("module", rule.code)
            result = self._reuse(key, version, lambda r, p=policy: p.key(version, r.asked))
            if result is None:
                stale_rules.append(rule)
            else:
                live[key] = result
        self.reanalysed = len(stale) + len(stale_rules)
        if stale:
            chunk_results, rule_results = self._analyse_chunks(job, stale, stale_rules)
            for index, result in chunk_results.items():
                live[("node", version.chunks[index])] = result
            for code, result in rule_results.items():
                live[("module", code)] = result
        for rule in stale_rules:
            if ("module", rule.code) not in live:
                live[("module", rule.code)] = self._analyse_module_rule(job, rule, POLICIES.get(rule.code, _Everything()))
        for result in live.values():
            diagnostics += result.diagnostics
            errors += result.errors
        self._results = live  # drop results of chunks that are gone
        return diagnostics, errors

    def _reuse(self, key: tuple, version: _Version, members_now) -> _Result | None:
        result = self._results.get(key)
        if result is None:
            return None
        now = tuple(version.chunks) if result.everything else members_now(result)
        if result.members != now:
            return None
        if result.prelude != version.prelude:
            return None
        if result.names is not version.names:  # some module-level name came or went
            if result.presence != version.presence(result.looked_up, result.all_names):
                return None
        return result.moved_to(version)

    def _analyse_chunks(
        self, job: _Job, stale: list[int], rules: list[type[Rule]]
    ) -> tuple[dict[int, _Result], dict[str, _Result]]:
        """Analyse these chunks in one reduced module holding all their closures (each
        chunk's rules still only visit its own statements), and, in the same module
        when it also holds their domains, these whole-module rules."""
        version = job.version
        policies = {rule.code: POLICIES.get(rule.code, _Everything()) for rule in rules}
        domains = _union(p.domain(version, frozenset()) for p in policies.values())
        asked = {i: frozenset() for i in stale}
        everything = dict.fromkeys(stale, False)
        model = None
        for round_ in range(_MAX_ROUNDS + 1):
            last = round_ == _MAX_ROUNDS
            if last:
                everything = dict.fromkeys(stale, True)
            members = _union([domains, *(version.closure([i], asked[i], everything[i]) for i in stale)])
            stand_ins: dict[int, str] = {}
            for policy in policies.values():
                stand_ins.update(policy.stand_ins(version, members))
            shared = _Tracker()  # look-ups answered from caches the chunks share: count for all
            if model is not None:
                model.dispose()
            model, tree = job.reduced_model(members, shared, stand_ins or None)
            statements = version.statements_by_chunk(tree)
            runs = {}
            for i in stale:
                tracker = _Tracker(looked_up=shared.looked_up)
                model.track(tracker)
                found, errors = run_rules(model, job.node_rules, job.options, job.path, statements.get(i, []))
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
            results[i] = _Result.of(found, errors, own, asked[i], everything[i], tracker, version)
        kept = set(map(id, members))
        done = {}
        for rule in rules:
            tracker = _Tracker(looked_up=set(shared.looked_up))
            model.track(tracker)
            found, errors = run_rules(model, [rule], job.options, job.path)
            asked_now = frozenset(tracker.asked)
            policy = policies[rule.code]
            if all(id(c) in kept for c in policy.domain(version, asked_now)):
                tracker.all_names = tracker.all_names or all_names
                key = policy.key(version, asked_now)
                done[rule.code] = _Result.of(found, errors, key, asked_now, False, tracker, version)
        model.dispose()
        return results, done

    def _analyse_module_rule(self, job: _Job, rule: type[Rule], policy: _Policy) -> _Result:
        version = job.version
        asked: frozenset[str] = frozenset()
        for _ in range(_MAX_ROUNDS):
            members = policy.domain(version, asked)
            tracker = _Tracker()
            found, errors = [], []
            if members:
                model, _ = job.reduced_model(members, tracker, policy.stand_ins(version, members))
                found, errors = run_rules(model, [rule], job.options, job.path)
                model.dispose()
            if tracker.all_uses or len(asked) > 64:
                break
            if tracker.asked <= asked:
                return _Result.of(found, errors, policy.key(version, asked), asked, False, tracker, version)
            asked |= tracker.asked
        tracker = _Tracker()
        model, _ = job.reduced_model(tuple(version.chunks), tracker)
        found, errors = run_rules(model, [rule], job.options, job.path)
        model.dispose()
        return _Result.of(found, errors, tuple(version.chunks), asked, True, tracker, version)


# --- one version of the document ------------------------------------------------------
class _Version:
    """The chunks of one source, with what closures need: where each starts, who defines
    and who reads each module-level name. What the previous version computed is carried
    over where the edit cannot have changed it."""

    def __init__(self, chunks: list[Chunk], previous: _Version | None = None):
        self.chunks = chunks
        self.starts: list[int] = []
        line = 0
        for chunk in chunks:
            self.starts.append(line)
            line += chunk.lines
        self.start_of = {id(c): s for c, s in zip(chunks, self.starts)}
        self.definers: dict[str, list[int]] = {}
        self.readers: dict[str, list[int]] = {}
        for i, chunk in enumerate(chunks):
            for name in chunk.defines:
                self.definers.setdefault(name, []).append(i)
            for name in chunk.reads:
                self.readers.setdefault(name, []).append(i)
        self.always = [i for i, c in enumerate(chunks) if c.always or not c.stubbable]
        self.names = frozenset(self.definers)
        # The first def or class: where imports stop counting as the import block.
        self.first_definition = next((i for i, c in enumerate(chunks) if c.kind in ("def", "class")), None)
        # Where an added import goes (rewrite._import_edit): after the last import above the
        # first definition, else at the very top, which is the first chunk's.
        first = self.first_definition if self.first_definition is not None else len(chunks)
        self.prelude = (chunks[0] if chunks else None, *(chunks[i] for i in self.always if i < first))
        self._closures: dict[tuple, tuple[tuple[Chunk, ...], frozenset[int]]] = {}
        if previous is not None:
            if previous.names == self.names:
                self.names = previous.names  # results compare it by identity
            self._closures = previous._still_valid(self)

    def _still_valid(self, new: _Version) -> dict:
        """The closures of this version that are the same in ``new``: when no chunk came,
        went or changed what it defines, those not holding a changed chunk and not asking
        for readers of a name some changed chunk started or stopped reading."""
        if len(self.chunks) != len(new.chunks):
            return {}
        changed = set()
        reads_changed: set[str] = set()
        for i, (a, b) in enumerate(zip(self.chunks, new.chunks)):
            if a is b:
                continue
            if a.defines != b.defines or a.always != b.always or a.stubbable != b.stubbable:
                return {}
            changed.add(i)
            reads_changed |= a.reads ^ b.reads
        return {
            key: value
            for key, value in self._closures.items()
            if not key[2] and not value[1] & changed and not key[1] & reads_changed
        }

    def chunk_closure(self, index: int, asked: frozenset[str], everything: bool) -> tuple[Chunk, ...]:
        """``closure([index], ...)``, remembered (and carried to the next version)."""
        key = (index, asked, everything)
        found = self._closures.get(key)
        if found is None:
            members = self.closure([index], asked, everything)
            indices = frozenset(range(len(self.chunks))) if everything else frozenset(self._indices(index, asked))
            found = self._closures[key] = (members, indices)
        return found[0]

    def _indices(self, index: int, asked: frozenset[str]) -> set[int]:
        start = {index}
        for name in asked:
            start.update(self.readers.get(name, ()))
        return self.forward(start) | set(self.always)

    def chunk_at(self, line: int) -> int:
        return max(bisect.bisect_right(self.starts, line) - 1, 0)

    def closure(self, seeds: Iterable[int], asked: frozenset[str], everything: bool) -> tuple[Chunk, ...]:
        """The chunks a reduced module for ``seeds`` keeps, in file order."""
        if everything:
            return tuple(self.chunks)
        start = set(seeds)
        for name in asked:
            start.update(self.readers.get(name, ()))
        return tuple(self.chunks[i] for i in sorted(self.forward(start) | set(self.always)))

    def forward(self, start: Iterable[int]) -> set[int]:
        """``start`` and, transitively, the chunks defining a name one of them reads or binds."""
        seen = set(start)
        stack = list(seen)
        definers = self.definers
        while stack:
            chunk = self.chunks[stack.pop()]
            for names in (chunk.reads, chunk.defines):
                for name in names:
                    for j in definers.get(name, ()):
                        if j not in seen:
                            seen.add(j)
                            stack.append(j)
        return seen

    def presence(self, looked_up: frozenset[str], all_names: bool):
        """The answers to "is this module-level name bound?" a result depended on."""
        if all_names:
            return self.names
        definers = self.definers
        return frozenset(name for name in looked_up if name in definers)

    def reduced(self, members: tuple[Chunk, ...], stand_ins: dict[int, str] | None = None) -> tuple[str, ast.Module]:
        """The module with every chunk not in ``members`` replaced by its stub (or by
        its text in ``stand_ins``)."""
        keep = set(map(id, members))
        first = self.first_definition
        stand_ins = stand_ins or {}
        text = "".join(
            c.text if id(c) in keep else stand_ins.get(i) or (c.stub if i == first else c.plain_stub)
            for i, c in enumerate(self.chunks)
        )
        return text, parse(text)


    def statements_by_chunk(self, tree: ast.Module) -> dict[int, list[ast.stmt]]:
        """A reduced module's top-level statements, by the chunk they stand in."""
        by_chunk: dict[int, list[ast.stmt]] = {}
        for stmt in tree.body:
            by_chunk.setdefault(self.chunk_at(_first_line(stmt) - 1), []).append(stmt)
        return by_chunk


def _union(closures: Iterable[tuple[Chunk, ...]]) -> tuple[Chunk, ...]:
    seen: dict[int, Chunk] = {}
    for closure in closures:
        for chunk in closure:
            seen.setdefault(id(chunk), chunk)
    return tuple(seen.values())


def _first_line(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", None)
    return min([stmt.lineno, *(d.lineno for d in decorators)]) if decorators else stmt.lineno


@dataclass
class _Job:
    version: _Version
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
        return [r for r in self.rules if r.code != SYNTAX_ERROR and hasattr(r, "visit_Module")]

    @cached_property
    def handled_types(self) -> frozenset[type]:
        return frozenset(
            getattr(ast, attr[len("visit_") :])
            for rule in self.node_rules
            for attr in dir(rule)
            if attr.startswith("visit_") and hasattr(ast, attr[len("visit_") :])
        )

    index: LineIndex

    def reduced_model(
        self, members: tuple[Chunk, ...], tracker: _Tracker, stand_ins: dict[int, str] | None = None
    ) -> tuple[SemanticModel, ast.Module]:
        text, tree = self.version.reduced(members, stand_ins)
        model = _TrackedModel(text, tree, self.package, self.project, tracker)
        if stand_ins is None:
            # Saves a line table per analysis: the lines of members are the real ones, and
            # rules visiting a chunk read no others (whole-module rules, which scan lines
            # for names, get stand-ins and their own table).
            model.__dict__["index"] = self.index
        return model, tree


# --- what a reduced analysis asked ------------------------------------------------------
class _Tracker:
    def __init__(self, looked_up: set[str] | None = None) -> None:
        self.asked: set[str] = set()  # module-level names whose readers were asked for
        self.all_uses = False  # every binding's use count was asked for
        # Module-level names whose binding was looked up.
        self.looked_up: set[str] = looked_up if looked_up is not None else set()
        self.all_names = False  # every module-level name was listed


class _RecordingBindings(dict):
    """The module scope's bindings, recording which names were asked about."""

    def __init__(self, bindings: dict, tracker: _Tracker):
        super().__init__(bindings)
        self._tracker = tracker

    def __contains__(self, name) -> bool:
        self._tracker.looked_up.add(name)
        return super().__contains__(name)

    def __getitem__(self, name):
        self._tracker.looked_up.add(name)
        return super().__getitem__(name)

    def get(self, name, default=None):
        self._tracker.looked_up.add(name)
        return super().get(name, default)

    def _listed(self):
        self._tracker.all_names = True

    def __iter__(self):
        self._listed()
        return super().__iter__()

    def keys(self):
        self._listed()
        return super().keys()

    def items(self):
        self._listed()
        return super().items()

    def values(self):
        self._listed()
        return super().values()

    def __len__(self) -> int:
        self._listed()
        return super().__len__()


class _TrackedModel(SemanticModel):
    """A reduced module's model, recording the questions whose answers lie in chunks
    that read the analysed one: who uses a module-level name, who calls a function."""

    def __init__(self, source, tree, package, project, tracker: _Tracker):
        super().__init__(source, tree, package, project)
        self.module_scope.bindings = _RecordingBindings(self.module_scope.bindings, tracker)
        self.track(tracker)

    def track(self, tracker: _Tracker) -> None:
        """Record into ``tracker`` from now on (one per chunk analysed in this model)."""
        self._tracker = tracker
        self.module_scope.bindings._tracker = tracker

    def uses_of(self, binding):
        if binding.scope is self.module_scope:
            self._tracker.asked.add(binding.name)
        return super().uses_of(binding)

    @property
    def use_counts(self):
        self._tracker.all_uses = True
        return SemanticModel.use_counts.func(self)

    def _param_module(self, binding):
        function = binding.scope.node
        if binding.scope.parent is self.module_scope and isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._tracker.asked.add(function.name)  # its callers pass the argument
        return super()._param_module(binding)


# --- results and how they move ----------------------------------------------------------
@dataclass
class _Result:
    diagnostics: list[Diagnostic]
    errors: list[str]
    members: object  # what the closure was (compared as a whole to the current one)
    asked: frozenset[str]
    everything: bool
    looked_up: frozenset[str]
    all_names: bool
    presence: object
    names: frozenset[str]  # the version's module-level names ``presence`` was taken in
    prelude: tuple  # the version's chunks deciding where an added import goes
    anchors: tuple[tuple[Chunk, int], ...]  # chunks holding its positions, with their starts
    movable: bool  # every position lies in a chunk (so it can follow that chunk)

    @classmethod
    def of(cls, found, errors, members, asked, everything, tracker, version) -> _Result:
        looked_up = frozenset(tracker.looked_up)
        anchors: dict[int, tuple[Chunk, int]] = {}
        movable = True
        for line in _lines(found):
            index = version.chunk_at(line)
            if not version.chunks or not version.starts[index] <= line <= version.starts[index] + version.chunks[index].lines:
                movable = False
                continue
            anchors[index] = (version.chunks[index], version.starts[index])
        return cls(
            found,
            errors,
            members,
            asked,
            everything,
            looked_up,
            tracker.all_names,
            version.presence(looked_up, tracker.all_names),
            version.names,
            version.prelude,
            tuple(anchors[i] for i in sorted(anchors)),
            movable,
        )

    def moved_to(self, version: _Version) -> _Result | None:
        """This result with its positions where its chunks now are; None when one is gone."""
        if not self.movable:
            return None
        deltas = []
        for chunk, start in self.anchors:
            now = version.start_of.get(id(chunk))
            if now is None:
                return None
            deltas.append((start, chunk.lines, now - start))
        if all(delta == 0 for _, _, delta in deltas):
            return self
        starts = [start for start, _, _ in deltas]
        shifts = {delta for _, _, delta in deltas}

        def line(old: int) -> int:
            if len(shifts) == 1:
                return old + deltas[0][2]
            i = bisect.bisect_right(starts, old) - 1
            return old + deltas[max(i, 0)][2]

        moved = [_shift(d, line) for d in self.diagnostics]
        anchors = tuple((chunk, version.start_of[id(chunk)]) for chunk, _ in self.anchors)
        return dataclasses.replace(self, diagnostics=moved, anchors=anchors)


# Messages name lines ("(raw dialect op ..., line 302)"): they move with the text too.
_LINE_REF = re.compile(r"\bline (\d+)\b")


def _lines(diagnostics: list[Diagnostic]) -> Iterable[int]:
    for d in diagnostics:
        for text in (d.message, d.note or ""):
            for match in _LINE_REF.finditer(text):
                yield int(match.group(1)) - 1
        yield d.range.start.line
        yield d.range.end.line
        if d.statement is not None:
            yield d.statement.start.line
            yield d.statement.end.line
        if d.fix is not None:
            for edit in d.fix.edits:
                yield edit.range.start.line
                yield edit.range.end.line


def _shift(d: Diagnostic, line) -> Diagnostic:
    def moved(rng: Range) -> Range:
        start, end = rng
        return Range(Position(line(start.line), start.column), Position(line(end.line), end.column))

    fix = d.fix
    if fix is not None:
        fix = Fix(fix.title, fix.applicability, tuple(Edit(moved(e.range), e.content) for e in fix.edits))
    statement = moved(d.statement) if d.statement is not None else None

    def renumbered(text: str | None) -> str | None:
        if not text or "line " not in text:
            return text
        return _LINE_REF.sub(lambda m: f"line {line(int(m.group(1)) - 1) + 1}", text)

    return Diagnostic(
        d.code, renumbered(d.message), moved(d.range), d.severity, fix, d.deprecated, renumbered(d.note), statement
    )


# --- module rules ---------------------------------------------------------------------
class _Policy:
    """Which chunks a whole-module rule looks at (its *core*, plus what they need), and
    the key its result is reused by."""

    def __init__(self) -> None:
        self._cores: weakref.WeakKeyDictionary[Chunk, bool] = weakref.WeakKeyDictionary()

    def core(self, chunk: Chunk) -> bool:
        raise NotImplementedError

    def core_of(self, version: _Version) -> list[int]:
        cores = self._cores
        found = []
        for i, chunk in enumerate(version.chunks):
            is_core = cores.get(chunk)
            if is_core is None:
                is_core = cores[chunk] = self.core(chunk)
            if is_core:
                found.append(i)
        return found

    def seeds(self, version: _Version, core: list[int]) -> set[int]:
        return set(core)

    def domain(self, version: _Version, asked: frozenset[str]) -> tuple[Chunk, ...]:
        core = self.core_of(version)
        if not core:
            return ()
        # With their neighbours: deleting a statement looks at the lines and statements
        # around it.
        near = {j for i in core for j in (i - 1, i + 1) if 0 <= j < len(version.chunks)}
        return version.closure(self.seeds(version, core) | near, asked, False)

    def key(self, version: _Version, asked: frozenset[str]):
        return self.domain(version, asked)

    def stand_ins(self, version: _Version, members: tuple[Chunk, ...]) -> dict[int, str]:
        """Texts standing in for chunks outside the domain, when not their stubs."""
        return {}


class _Everything(_Policy):
    """A whole-module rule nobody described: it sees the whole file."""

    def domain(self, version: _Version, asked: frozenset[str]) -> tuple[Chunk, ...]:
        return tuple(version.chunks)

    def key(self, version: _Version, asked: frozenset[str]):
        return tuple(version.chunks)


class _SmemAllocator(_Policy):
    """FLY203 follows allocators and what they hand out: the chunks naming SmemAllocator
    or SmemPtr (its own gate), and those reading what they bind, through module-level
    aliases."""

    def core(self, chunk: Chunk) -> bool:
        return "SmemAllocator" in chunk.text or "SmemPtr" in chunk.text

    def seeds(self, version: _Version, core: list[int]) -> set[int]:
        seeds = set(core)
        names = {name for i in core for name in version.chunks[i].defines}
        while names:
            found = {j for name in names for j in version.readers.get(name, ())} - seeds
            seeds |= found
            names = {n for j in found if version.chunks[j].kind == "other" for n in version.chunks[j].defines}
        return seeds


class _DeadWaitcntShim(_Policy):
    """FLY402 judges shims and ``*CNT_*`` constants: the chunks binding such a name or
    holding a shim-shaped def (and ``__all__``). Of the chunks reading those names it only
    needs to know which names they read (a use outside the candidates keeps one alive), so
    they are in its reduced module but only that summary is in its key."""

    def core(self, chunk: Chunk) -> bool:
        return chunk.helper_shaped or "__all__" in chunk.defines or any(COUNTER_CONSTANT.search(n) for n in chunk.bound)

    def stand_ins(self, version: _Version, members: tuple[Chunk, ...]) -> dict[int, str]:
        kept = set(map(id, members))
        return {j: version.chunks[j].reading_stub(sorted(names)) for j, names in self._reads(version).items() if id(version.chunks[j]) not in kept}

    def _reads(self, version: _Version) -> dict[int, set[str]]:
        """The candidates' module-level names each other chunk reads."""
        core = self.core_of(version)
        core_set = set(core)
        reads: dict[int, set[str]] = {}
        for name in {name for i in core for name in version.chunks[i].defines}:
            for j in version.readers.get(name, ()):
                if j not in core_set:
                    reads.setdefault(j, set()).add(name)
        return reads

    def seeds(self, version: _Version, core: list[int]) -> set[int]:
        return set(core)  # the chunks reading their names stand in by reading_stub

    def key(self, version: _Version, asked: frozenset[str]):
        read = frozenset(name for names in self._reads(version).values() for name in names)
        return (self.domain(version, asked), read)


POLICIES: dict[str, _Policy] = {"FLY203": _SmemAllocator(), "FLY402": _DeadWaitcntShim()}
