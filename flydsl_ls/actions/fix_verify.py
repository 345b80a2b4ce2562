"""Fixes verified by compiling: keep only the fixes that leave every example's IR unchanged.

Shared by ``flydsl-ls check --fix --verify`` and the language server's verified fix-all.

1. Every wanted fix is found and named by a :class:`FixKey` (``fix_all`` applied to a
   fixpoint records every fix it meets, in every pass, with its span mapped back to the
   original text).
2. The file's ``# flydsl: example`` functions are compiled before the fixes (each for its
   marker's arch, else the target arch, else gfx942).
3. A *test* applies a set of fixes: ``fix_all`` again, from the original text, with only
   those keys accepted, so the later passes re-lint the text that set really produces (a
   fix that only appears after another one is applied appears only when that one is in the
   set). The text is compiled for every example and compared with the "before" compile on
   the first and final MLIR (locations stripped), the LLVM IR and the ISA
   (``compile.verify``). A text that does not compile, crashes or times out fails too.
4. First all the fixes are tried (one compile per example); if that fails, the set is
   halved: the first half is tried on top of the fixes known good; a good half joins them,
   a bad half is split again, down to single fixes. Every set ever accepted was compiled
   and compared, so the text returned is one that compiled with identical IR (compiles are
   deterministic), even when fixes interact: a fix is blamed only when adding it alone to
   a set known good fails. Fixes are ordered as found (earlier passes first), so a fix
   joins the good set before the fixes it enables are tried.

Nothing here imports torch or flydsl: ``compile`` is a callable (the CLI's or the server's
:class:`~flydsl_ls.compile.CompileService`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from flydsl_ls.actions.fixes import FixKey, FixOutcome, fix_all
from flydsl_ls.actions.textdiff import minimal_edits
from flydsl_ls.analysis.model.diagnostic import Diagnostic
from flydsl_ls.analysis.model.text import LineIndex
from flydsl_ls.compile.examples import find_examples
from flydsl_ls.compile.result import CompileResult, Status
from flydsl_ls.compile.service import DEFAULT_ARCH
from flydsl_ls.compile.line_diff import isa_by_line
from flydsl_ls.compile.verify import compare_results

# (text, example name, arch) -> the compile of that text
CompileFn = Callable[[str, str, str], CompileResult]
Lint = Callable[[str], list[Diagnostic]]

# VerifyOutcome.status
VERIFIED = "verified"  # the fixes were compiled; ``text`` holds the ones that kept the IR
NOTHING_TO_FIX = "nothing to fix"  # no wanted fix: nothing compiled
NO_EXAMPLES = "no examples"  # fixes exist but nothing to compile them with: none applied
UNVERIFIABLE = "not verified"  # no example compiles before the fixes: none applied

NO_EXAMPLES_HINT = (
    "mark a module-level function `# flydsl: example` that takes a device string and returns (jit_fn, args)"
)


class VerifyAborted(Exception):
    """The compiler is missing or the request was cancelled: nothing can be said."""

    def __init__(self, message: str, status: Status):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class FixRecord:
    key: FixKey
    title: str
    line: int  # 1-based, in the original text
    column: int  # 1-based, code points

    @property
    def code(self) -> str:
        return self.key.code


@dataclass
class Dropped:
    fix: FixRecord
    reason: str  # "changed the MLIR of k_0 (ex, gfx942): first differing line ..." or "does not compile (...): ..."
    line_after: int = 0  # where its finding is in ``VerifyOutcome.text`` (1-based)
    column_after: int = 0


@dataclass
class VerifyOutcome:
    status: str
    text: str  # the source with the kept fixes (the source itself when none is applied)
    applied: dict[str, int] = field(default_factory=dict)  # kept fixes per rule code
    kept: list[FixRecord] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)  # fixes that broke parsing (fix_all)
    targets: list[tuple[str, str]] = field(default_factory=list)  # (example, arch) compiled
    notes: list[str] = field(default_factory=list)  # examples that did not compile before
    wanted: int = 0  # how many fixes there were to verify
    compiles: int = 0
    seconds: float = 0.0

    @property
    def verified(self) -> bool:
        return self.status == VERIFIED

    @property
    def count(self) -> int:
        return sum(self.applied.values())

    def summary(self, name: str) -> str:
        """One line for the user: what was verified, kept and dropped, or why nothing."""
        if self.status == NOTHING_TO_FIX:
            return f"{name}: nothing to fix"
        if self.status == NO_EXAMPLES:
            return f"no `# flydsl: example` in {name}: fixes not verified, none applied ({NO_EXAMPLES_HINT})"
        if self.status == UNVERIFIABLE:
            why = "; ".join(self.notes)
            return f"{name}: no example compiles before the fixes ({why}): fixes not verified, none applied"
        targets = ", ".join(f"{example} ({arch})" for example, arch in self.targets)
        kept = f"{self.count} fix{'es' if self.count != 1 else ''} kept"
        dropped = f"{len(self.dropped)} dropped"
        return (
            f"{name}: fixes verified by compiling {targets}: {kept}, {dropped} "
            f"({self.compiles} compile{'s' if self.compiles != 1 else ''}, {self.seconds:.1f} s)"
        )


def _record(index: LineIndex, key: FixKey, title: str) -> FixRecord:
    position = index.position_at(key.start)
    return FixRecord(key, title, position.line + 1, position.column + 1)


def _forward(source: str, result: str) -> Callable[[int], int]:
    """Maps an offset of ``source`` to ``result`` (through a minimal diff); an offset in a
    changed span maps to the span's start."""
    index = LineIndex(source)
    edits = [
        (index.offset(e.range.start), index.offset(e.range.end), len(e.content)) for e in minimal_edits(source, result)
    ]

    def forward(offset: int) -> int:
        shift = 0
        for start, end, length in edits:
            if offset < start:
                break
            if offset < end:
                return start + shift
            shift += length - (end - start)
        return offset + shift

    return forward


def compile_targets(source: str, default_arch: str | None) -> list[tuple[str, str]]:
    """(example, arch) for each example of ``source``: its marker's arch, else the default."""
    return [(e.name, e.arch or default_arch or DEFAULT_ARCH) for e in find_examples(source)]


def _failure(result: CompileResult) -> str:
    error = result.error
    message = error.message if error is not None else result.status.value
    message = message.splitlines()[0] if message else result.status.value
    where = f" (line {error.line})" if error is not None and error.line else ""
    return f"{message}{where}"


def verify_fixes(
    source: str,
    lint: Lint,
    compile: CompileFn,
    *,
    unsafe: bool = False,
    default_arch: str | None = None,
    codes: set[str] | None = None,
    cancelled: Callable[[], bool] | None = None,
    compile_lines: CompileFn | None = None,
) -> VerifyOutcome:
    """The wanted fixes of ``source`` that keep every example's IR unchanged, applied.
    ``compile_lines``: compiles with line info, to say of each dropped fix which source
    lines' ISA it changes (two more compiles each: the kept fixes, with it and without).

    Raises :class:`VerifyAborted` when the compiler is unavailable or the work is cancelled
    (``cancelled()`` turned true, or a compile came back cancelled)."""
    started = time.perf_counter()
    full = fix_all(source, lint, unsafe=unsafe, codes=codes)
    outcome = VerifyOutcome(NOTHING_TO_FIX, source, rejected=list(full.rejected), wanted=len(full.found))
    if full.text == source:
        return outcome
    targets = compile_targets(source, default_arch)
    if not targets:
        outcome.status = NO_EXAMPLES
        return outcome

    def run(text: str, example: str, arch: str, compiler: CompileFn = compile) -> CompileResult:
        if cancelled is not None and cancelled():
            raise VerifyAborted("cancelled", Status.CANCELLED)
        result = compiler(text, example, arch)
        outcome.compiles += 1
        if result.status in (Status.CANCELLED, Status.UNAVAILABLE):
            raise VerifyAborted(_failure(result), result.status)
        return result

    before: dict[tuple[str, str], CompileResult] = {}
    for example, arch in targets:
        result = run(source, example, arch)
        if result.ok:
            before[(example, arch)] = result
        else:
            outcome.notes.append(f"{example} ({arch}) does not compile: {_failure(result)}")
    outcome.targets = list(before)
    if not before:
        outcome.status = UNVERIFIABLE
        outcome.seconds = time.perf_counter() - started
        return outcome
    outcome.status = VERIFIED

    verdicts: dict[str, str | None] = {source: None}
    order_of_targets = list(before)
    applied_by_set: dict[frozenset[FixKey], FixOutcome] = {}

    def apply(keys: frozenset[FixKey]) -> FixOutcome:
        if keys not in applied_by_set:
            applied_by_set[keys] = fix_all(source, lint, unsafe=unsafe, codes=codes, accept=keys.__contains__)
        return applied_by_set[keys]

    def test(keys: list[FixKey]) -> str | None:
        """None when these fixes keep every example's IR, else why not."""
        text = apply(frozenset(keys)).text
        if text not in verdicts:
            verdict = None
            for target in list(order_of_targets):
                example, arch = target
                new = run(text, example, arch)
                if new.ok:
                    comparison = compare_results(before[target], new)
                    if not comparison.identical:
                        verdict = comparison.first_difference(f"{example}, {arch}")
                else:
                    verdict = f"does not compile ({example}, {arch}): {_failure(new)}"
                if verdict is not None:
                    # the example that failed is likely to fail the next test too: first
                    order_of_targets.remove(target)
                    order_of_targets.insert(0, target)
                    break
            verdicts[text] = verdict
        return verdicts[text]

    def culprits(candidates: list[FixKey], good: list[FixKey], failure: str) -> dict[FixKey, str]:
        """The fixes of ``candidates`` to drop, given that ``good`` passes and
        ``good + candidates`` fails with ``failure``."""
        if len(candidates) == 1:
            return {candidates[0]: failure}
        half = len(candidates) // 2
        first, second = candidates[:half], candidates[half:]
        verdict = test(good + first)
        if verdict is None:
            return culprits(second, good + first, failure)
        bad = culprits(first, good, verdict)
        rest = good + [k for k in first if k not in bad]
        verdict = test(rest + second)
        if verdict is not None:
            bad.update(culprits(second, rest, verdict))
        return bad

    order = list(full.found)
    failure = test(order)
    bad = culprits(order, [], failure) if failure is not None else {}
    final = apply(frozenset(k for k in order if k not in bad))
    index = LineIndex(source)
    outcome.text = final.text
    outcome.applied = dict(final.applied)
    outcome.kept = [_record(index, key, full.found[key]) for key in final.keys]
    outcome.dropped = [Dropped(_record(index, key, full.found[key]), reason) for key, reason in bad.items()]
    outcome.dropped.sort(key=lambda d: (d.fix.line, d.fix.column))
    forward = _forward(source, final.text)
    after = LineIndex(final.text)
    for dropped in outcome.dropped:
        position = after.position_at(forward(dropped.fix.key.start))
        dropped.line_after, dropped.column_after = position.line + 1, position.column + 1
    if compile_lines is not None and bad:
        _say_isa_by_line(outcome, final, apply, order_of_targets[0], compile_lines, run)
    outcome.rejected = sorted(set(outcome.rejected) | set(final.rejected))
    outcome.seconds = time.perf_counter() - started
    return outcome


def _say_isa_by_line(outcome: VerifyOutcome, final: FixOutcome, apply, target, compile_lines, run) -> None:
    """Append to each dropped fix's reason the source lines whose ISA it changes, on top of
    the kept fixes (the first example; its verdicts came from compiles without line info)."""
    example, arch = target
    kept = frozenset(final.keys)
    base = None
    for dropped in outcome.dropped:
        if dropped.reason.startswith("does not compile"):
            continue
        text = apply(kept | {dropped.fix.key}).text
        if text == final.text:
            continue  # it only exists after another dropped fix
        if base is None:
            base = run(final.text, example, arch, compile_lines)
        changed = run(text, example, arch, compile_lines)
        if base.ok and changed.ok:
            said = isa_by_line(base, changed, final.text, text)
            dropped.reason += f"; {said}" if said else ""
