"""Incremental analysis: the full analysis's result after every edit, for less work.

- From scratch, on every rule case and example, it finds what ``engine.analyze`` finds.
- Over edit sessions (hypothesis): files built from the rules' cases, edited at random
  (typing anywhere, unbalanced brackets, non-ASCII, deleting, duplicating and moving
  lines, renaming names, pasting other cases), its result equals a full analysis of the
  text after each edit, syntax errors included; and over sessions of half-typed
  statements (the recovered analysis of a file that does not parse).
- An edit inside one function re-analyses that function's chunk (and the chunks whose
  analysis asked about it), not the file; its hover model answers like the full model.
"""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flydsl_ls.analysis.engine import AnalysisRequest, analyze
from flydsl_ls.analysis.incremental import IncrementalAnalyzer
from flydsl_ls.analysis.incremental import analyzer as analyzer_module
from flydsl_ls.analysis.model.text import Position
from flydsl_ls.analysis.model.typehints import type_hints
from flydsl_ls.analysis.model.semantic import SemanticModel
from flydsl_ls.analysis.rules.context import AnalysisOptions
from tests.rule_cases import all_cases, options
from tests.test_fix_properties import SETTINGS, SNIPPETS, build, draw_chunks

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))


def same_as_full(analyzer: IncrementalAnalyzer, text: str, opts: AnalysisOptions, early: list | None = None) -> None:
    """The incremental analysis of ``text`` is the full one, whether or not it stages its
    findings (``early`` collects what it hands out first)."""
    full = analyze(AnalysisRequest(text, options=opts))
    mine = analyzer.analyze(AnalysisRequest(text, options=opts), early=(early if early is not None else []).append)
    assert not mine.internal_errors
    if mine.diagnostics != full.diagnostics:
        only_full = [d for d in full.diagnostics if d not in mine.diagnostics]
        only_mine = [d for d in mine.diagnostics if d not in full.diagnostics]
        pytest.fail(f"incremental differs from full.\nonly full: {only_full}\nonly incremental: {only_mine}\n{text}")


@pytest.mark.parametrize(
    ("code", "source", "case_settings"),
    [pytest.param(rule.code, case.code, case.settings, id=f"{rule.code}-{kind}-{i}") for rule, kind, i, case in all_cases()],
)
def test_rule_cases_from_scratch(code, source, case_settings):
    same_as_full(IncrementalAnalyzer(), source, options(case_settings))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_from_scratch_and_line_by_line(path):
    """The example kernels, then each with one line deleted in turn (the analyzer
    carried along), then restored."""
    text = path.read_text(encoding="utf-8")
    analyzer = IncrementalAnalyzer()
    same_as_full(analyzer, text, AnalysisOptions())
    lines = text.splitlines(keepends=True)
    for i in range(0, len(lines), 3):
        same_as_full(analyzer, "".join(lines[:i] + lines[i + 1 :]), AnalysisOptions())
    same_as_full(analyzer, text, AnalysisOptions())


TYPED = ["(", ")", "[", "]", ":", "\n", "\n    ", "    ", "x", " + tid", "é", "'", '"""', "#", "\\", ",", "ArithValue(", "fx.", "_raw(", "VMCNT_0"]
# Suppression comments: FLY001 judges them after every other rule, in both analyses.
TYPED += ["  # noqa: FLY104", "  # flydsl: ignore[FLY101]", "  # noqa", "  # flydsl: ignore", ", FLY999"]


def _edit(text: str, rnd: random.Random) -> str:
    lines = text.splitlines(keepends=True) or [""]
    kind = rnd.random()
    if kind < 0.35:  # type something anywhere
        at = rnd.randrange(len(text) + 1)
        return text[:at] + rnd.choice(TYPED) + text[at:]
    if kind < 0.5:  # delete a few characters
        at = rnd.randrange(len(text) + 1)
        return text[:at] + text[at + rnd.randint(1, 8) :]
    if kind < 0.65:  # delete or duplicate whole lines
        i, n = rnd.randrange(len(lines)), rnd.randint(1, 5)
        if rnd.random() < 0.5:
            del lines[i : i + n]
        else:
            lines[i:i] = lines[i : i + n]
        return "".join(lines)
    if kind < 0.75:  # move a block of lines
        i, n = rnd.randrange(len(lines)), rnd.randint(1, 12)
        block = lines[i : i + n]
        del lines[i : i + n]
        j = rnd.randrange(len(lines) + 1)
        lines[j:j] = block
        return "".join(lines)
    if kind < 0.9:  # rename one occurrence of a name to another name of the file
        names = sorted(set(_identifiers(text)))
        if not names:
            return text
        old, new = rnd.choice(names), rnd.choice(names)
        spots = [i for i in range(len(text)) if text.startswith(old, i)]
        at = rnd.choice(spots)
        return text[:at] + new + text[at + len(old) :]
    # paste another rule case between two top-level statements (or at the end)
    tops = [i for i, line in enumerate(lines) if line[:1].isalpha() or line.startswith("@")] + [len(lines)]
    i = rnd.choice(tops)
    snippet = rnd.choice(SNIPPETS)
    return "".join(lines[:i]) + snippet + ("\n" if not snippet.endswith("\n") else "") + "".join(lines[i:])


def _identifiers(text: str) -> list[str]:
    import re

    return re.findall(r"\b[A-Za-z_]\w*\b", text)


def _sessions(examples: int):
    """Hypothesis settings of an edit-session test: the same draws on every run."""
    return settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )


def _session(seed: int):
    """A session's random source, first text (built from the rules' cases), settings and
    analyzer, the first analysis checked against the full one."""
    rnd = random.Random(seed)
    text = build(draw_chunks(rnd))
    opts = options(rnd.choice(SETTINGS))
    analyzer = IncrementalAnalyzer()
    same_as_full(analyzer, text, opts)
    return rnd, text, opts, analyzer


@_sessions(40)
@given(seed=st.integers(0, 2**32 - 1))
def test_edit_sessions_match_full_analysis(seed):
    rnd, text, opts, analyzer = _session(seed)
    for _ in range(12):
        candidate = _edit(text, rnd)
        # Mostly edits that leave the file parsable, as most keystrokes of a session do.
        for _ in range(10):
            if rnd.random() < 0.25 or _parses(candidate):
                break
            candidate = _edit(text, rnd)
        text = candidate
        same_as_full(analyzer, text, opts)


HALF_TYPED = ["x = ", "foo(", "ArithValue(", "fx.Int32(tid", "return (", "for i in range(", "if x ==", "y = [a,"]


def _half_typed(text: str, rnd: random.Random) -> str:
    """A statement being typed: a half-typed line inserted after a code line at its
    indentation (or one deeper), or a code line cut short."""
    lines = text.splitlines(keepends=True)
    code = [i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")]
    if not code:
        return text + rnd.choice(HALF_TYPED)
    i = rnd.choice(code)
    line = lines[i].rstrip("\r\n")
    indent = line[: len(line) - len(line.lstrip())]
    if rnd.random() < 0.35:
        cut = rnd.randrange(len(indent), len(line) + 1)
        lines[i] = line[:cut] + lines[i][len(line) :]
    else:
        deeper = "    " if rnd.random() < 0.2 else ""
        lines.insert(i + 1, indent + deeper + rnd.choice(HALF_TYPED) + "\n")
    return "".join(lines)


@_sessions(30)
@given(seed=st.integers(0, 2**32 - 1))
def test_half_typed_sessions_match_full_analysis(seed):
    """Typing a statement: broken states (recovered, see analysis/model/recovery.py) one after
    another, each followed by the text it came from or by another edit."""
    rnd, text, opts, analyzer = _session(seed)
    for _ in range(8):
        broken = _half_typed(text, rnd)
        same_as_full(analyzer, broken, opts)
        if rnd.random() < 0.3:  # typing on: another half-typed state of the broken text
            same_as_full(analyzer, _half_typed(broken, rnd), opts)
        text = text if rnd.random() < 0.5 else _edit(text, rnd)
        same_as_full(analyzer, text, opts)


def test_half_typed_sessions_do_recover():
    """The sessions above meet repaired states, not only the syntax error alone."""
    rnd = random.Random(3)
    recovered = 0
    for _ in range(10):
        text = build(draw_chunks(rnd))
        for _ in range(4):
            found = analyze(AnalysisRequest(_half_typed(text, rnd))).diagnostics
            recovered += any(d.code == "FLY000" for d in found) and len(found) > 1
    assert recovered >= 10


def test_crlf_and_non_ascii_sessions():
    text = EXAMPLES[0].read_text(encoding="utf-8").replace("\n", "\r\n")
    text = text.replace("# ", "# é ", 3)
    analyzer = IncrementalAnalyzer()
    same_as_full(analyzer, text, AnalysisOptions())
    rnd = random.Random(7)
    for _ in range(20):
        text = _edit(text, rnd)
        same_as_full(analyzer, text, AnalysisOptions())


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


# --- only what changed -----------------------------------------------------------------
KERNEL_FILE = '''\
import flydsl.expr as fx
from flydsl.expr import arith, rocdl
from flydsl.expr.arith import ArithValue

VMCNT_0 = 0x3F70


def load_{i}(base, stride: fx.Int32):
    tid = fx.thread_idx.x
    row = ArithValue(tid) % 64
    off = arith.index_cast(arith.T.index, base + row * stride)
    rocdl.s_waitcnt(VMCNT_0)
    return off


def scale_{i}(v):
    w = ArithValue(v) * 2
    return fx.Int32(fx.Int32(w))


@fx.kernel
def kernel_{i}(A: fx.Tensor, n: fx.Int32):
    base = fx.Int32(fx.block_idx.x) * 128
    value = load_{i}(base, n)
    return scale_{i}(value)
'''


def _many_functions(count: int) -> str:
    header, _, body = KERNEL_FILE.partition("VMCNT_0 = 0x3F70\n")
    return header + "VMCNT_0 = 0x3F70\n" + "".join(body.format(i=i) for i in range(count))


def test_an_edit_inside_one_function_reanalyses_that_function():
    text = _many_functions(20)
    analyzer = IncrementalAnalyzer()
    same_as_full(analyzer, text, AnalysisOptions())
    assert analyzer.reanalysed > 60  # the first analysis does them all
    edited = text.replace("w = ArithValue(v) * 2\n    return fx.Int32(fx.Int32(w))\n\n\n@fx.kernel\ndef kernel_7",
                          "w = ArithValue(v) * 3\n    return fx.Int32(fx.Int32(w))\n\n\n@fx.kernel\ndef kernel_7")
    assert edited != text
    same_as_full(analyzer, edited, AnalysisOptions())
    # scale_7; kernel_7, which calls it; FLY402's module pass (scale_7 has a shim's shape).
    # Not load_7 (no rule asks who passes its parameters what), nor the other 19 kernels.
    assert analyzer.reanalysed == 3

    # Typing a line into load_3 (its line count changes: everything below moves).
    typed = edited.replace("def load_3(base, stride: fx.Int32):\n", "def load_3(base, stride: fx.Int32):\n    extra = fx.Int32(1)\n")
    same_as_full(analyzer, typed, AnalysisOptions())
    # load_3 and kernel_3, which calls it: the rest moves. Not FLY402's module pass: load_3
    # neighbours scale_3, a shim-shaped def it might delete, but its blank lines at either
    # end, all that pass looks at, are the same.
    assert analyzer.reanalysed == 2

    # Unchanged text: nothing to do.
    same_as_full(analyzer, typed, AnalysisOptions())
    assert analyzer.reanalysed == 0


def test_unused_suppressions_are_judged_on_every_edit_without_redoing_the_file():
    """FLY001 judges the whole file's findings, the reused ones included: a suppression
    becomes unused when an edit removes its finding, and used again when it comes back,
    while only the edited function is analysed again."""
    line = "    return fx.Int32(fx.Int32(w))\n\n\n@fx.kernel\ndef kernel_7"
    text = _many_functions(12).replace(line, line.replace("(w))\n", "(w))  # noqa: FLY104, FLY101\n"))
    analyzer = IncrementalAnalyzer()
    same_as_full(analyzer, text, AnalysisOptions())

    def unused(source: str) -> list[str]:
        same_as_full(analyzer, source, AnalysisOptions())
        return [d.message for d in analyze(AnalysisRequest(source)).diagnostics if d.code == "FLY001"]

    assert unused(text) == ["Unused `noqa` directive (unused: `FLY101`)"]
    fixed = text.replace("fx.Int32(fx.Int32(w))  # noqa", "fx.Int32(w)  # noqa")
    assert unused(fixed) == ["Unused `noqa` directive (unused: `FLY104`, `FLY101`)"]
    assert analyzer.reanalysed <= 3  # scale_7 and what asks about it, not the file
    assert unused(text) == ["Unused `noqa` directive (unused: `FLY101`)"]


def test_dead_shim_deletion_follows_the_blank_lines_of_its_neighbours():
    shim = "def _wait_vmcnt(n):\n    fx.rocdl.s_waitcnt((n & 0xF) | 0x3F70)\n"
    kernel = "@fx.kernel\ndef kernel():\n    x = 1\n    return x\n"
    texts = [
        f"import flydsl.expr as fx\n\n\n{shim}\n\n{kernel}",
        f"import flydsl.expr as fx\n\n\n{shim}\n\n{kernel.replace('x = 1', 'x = 12')}",  # body only
        f"import flydsl.expr as fx\n\n\n{shim}\n\n\n{kernel}",  # one blank line more after
        f"import flydsl.expr as fx\n\n\n{shim}\n# kernel\n{kernel}",  # a comment, not blank
        f"import flydsl.expr as fx\n\n\n{shim}{kernel}",  # no blank line between
        f"import flydsl.expr as fx\n{shim}\n\n{kernel}",  # none before
        f"import flydsl.expr as fx\n\n\n{shim}\n\n",  # only blank lines after
    ]
    analyzer = IncrementalAnalyzer()
    for i, text in enumerate(texts):
        same_as_full(analyzer, text, AnalysisOptions())
        if i == 1:
            assert analyzer.reanalysed == 1  # kernel's chunk; FLY402's pass is reused
    assert any(d.code == "FLY402" and d.fix for d in analyze(AnalysisRequest(texts[0])).diagnostics)


def test_a_changed_module_constant_reanalyses_what_depends_on_it():
    unrelated = "".join(f"\n\ndef unrelated_{i}(x: fx.Int32):\n    return fx.Int32(x) + 1\n" for i in range(5))
    text = _many_functions(10) + unrelated
    analyzer = IncrementalAnalyzer()
    analyzer.analyze(AnalysisRequest(text))
    same_as_full(analyzer, text.replace("VMCNT_0 = 0x3F70", "VMCNT_0 = 0x3F71"), AnalysisOptions())
    # The constant's chunk; the ten load_* reading it; the kernels calling them; FLY402's
    # pass. Not the scale_* (no rule asks who calls them), nor the unrelated five.
    assert analyzer.reanalysed == 1 + 10 + 10 + 1


def test_settings_change_drops_the_cache():
    text = _many_functions(3)
    analyzer = IncrementalAnalyzer()
    analyzer.analyze(AnalysisRequest(text))
    same_as_full(analyzer, text, AnalysisOptions(target_arch="gfx942"))
    assert analyzer.reanalysed > 3


def test_hover_model_answers_like_the_full_model():
    text = _many_functions(4)
    analyzer = IncrementalAnalyzer()
    analyzer.analyze(AnalysisRequest(text))
    full = SemanticModel(text, ast.parse(text))
    names = [n for n in ast.walk(full.tree) if isinstance(n, (ast.Name, ast.Attribute))]
    assert names
    for node in names:
        model = analyzer.model_at(node.lineno - 1)
        twin = _node_at(model.tree, type(node), node.lineno, node.col_offset, node.end_col_offset)
        assert twin is not None
        assert model.resolve(twin) == full.resolve(node)
        assert model.type_of(twin) == full.type_of(node), ast.unparse(node)


def _linted_hints(analyzer: IncrementalAnalyzer, text: str) -> list:
    """The type hints of the whole text, statement by statement, from the analyzer's models
    (as the server computes them for a view inside one statement, server/inlay_hints.py)."""
    found = []
    line, count = 0, len(text.splitlines())
    with analyzer.models_in_use():
        while line < count:  # statement by statement
            first, last, _, _ = analyzer.statement_at(line, text)
            for start, end, model in analyzer.models_of_lines(first, last):
                found += type_hints(model, Position(start, 0), Position(end + 1, 0))
            line = max(line, last) + 1
    return found


@_sessions(8)
@given(seed=st.integers(0, 2**32 - 1))
def test_inlay_hints_from_the_lint_models_match_the_full_model_over_edit_sessions(seed):
    rnd, text, opts, analyzer = _session(seed)
    for _ in range(6):
        candidate = _edit(text, rnd)
        if not _parses(candidate):
            continue
        text = candidate
        analyzer.analyze(AnalysisRequest(text, options=opts))
        assert analyzer.analysed == text
        full = type_hints(SemanticModel(text, ast.parse(text)), Position(0, 0), Position(text.count("\n") + 1, 0))
        assert _linted_hints(analyzer, text) == full, text


def test_after_an_edit_in_one_function_its_hover_model_is_the_lints(monkeypatch):
    """The lint keeps the model it built for the one statement it redid: hover and inlay
    hints there after a keystroke build none."""
    text = _many_functions(6)
    analyzer = IncrementalAnalyzer()
    analyzer.analyze(AnalysisRequest(text))
    edited = text.replace("def load_3(base, stride: fx.Int32):\n", "def load_3(base, stride: fx.Int32):\n    extra = fx.Int32(1)\n")
    assert edited != text
    analyzer.analyze(AnalysisRequest(edited))
    built = []
    monkeypatch.setattr(analyzer_module, "SemanticModel", lambda *a: built.append(a) or SemanticModel(*a))
    line = edited.splitlines().index("    extra = fx.Int32(1)")
    model = analyzer.model_at(line)
    assert model is not None and not built
    target = next(n for n in ast.walk(model.tree) if isinstance(n, ast.Name) and n.id == "extra")
    assert model.type_of(target).name == "fx.Int32"
    analyzer.model_at(0)  # another statement: built now
    assert built


def test_a_function_pasted_far_from_an_lds_migration_does_not_redo_its_plan():
    """FLY203 and FLY402 look up the module-level names they need (a fresh name tried, a
    binding), never list them all: a function pasted elsewhere adds a name, which made the
    incremental analysis redo FLY203's whole-file plan (~0.4 s on aiter's 5.7k-line file)."""
    from flydsl_ls.analysis.rules import lookup_rule

    kernel = next(c for c in lookup_rule("FLY203").INVALID if c.expected).code
    text = kernel.rstrip("\n") + "\n\n\ndef first(x):\n    return x\n\n\ndef second(x):\n    return x\n"
    analyzer = IncrementalAnalyzer()
    same_as_full(analyzer, text, AnalysisOptions())
    pasted = text.replace("def second(x):", "def pasted(x):\n    return x\n\n\ndef second(x):")
    same_as_full(analyzer, pasted, AnalysisOptions())
    assert analyzer.reanalysed <= 2  # it and FLY402's pass (it has a shim's shape); was 3: FLY203's too
    same_as_full(analyzer, text, AnalysisOptions())


def test_keystrokes_in_one_function_keep_the_hover_model_read_in_another(monkeypatch):
    """Each keystroke's model of the edited statement replaces the last keystroke's (which
    can no longer answer) instead of pushing out the model read elsewhere (a 3,000-line
    builder's took ~100 ms to build again)."""
    text = _many_functions(6)
    analyzer = IncrementalAnalyzer()
    analyzer.analyze(AnalysisRequest(text))
    read = next(i for i, t in enumerate(text.splitlines()) if t.startswith("def load_1(")) + 1
    model = analyzer.model_at(read)
    built = []
    monkeypatch.setattr(analyzer_module, "SemanticModel", lambda *a: built.append(a) or SemanticModel(*a))
    source = text
    for n in range(5):  # typing in load_4: each keystroke's lint keeps its own model
        source = source.replace("def load_4(base, stride: fx.Int32):\n", f"def load_4(base, stride: fx.Int32):\n    k{n} = 1\n", 1)
        analyzer.analyze(AnalysisRequest(source))
    assert analyzer.model_at(read) is model and not built


def test_a_hover_model_outlives_edits_that_cannot_change_it(monkeypatch):
    """Kept across an edit below its statement; built again after one above it (its lines
    moved) and after one in code it reads; it answers like the full model each time."""
    text = _many_functions(6)
    analyzer = IncrementalAnalyzer()
    analyzer.analyze(AnalysisRequest(text))
    built = []
    monkeypatch.setattr(analyzer_module, "SemanticModel", lambda *a: built.append(a) or SemanticModel(*a))

    def hover_check(source: str, name: str) -> SemanticModel:
        line = next(i for i, t in enumerate(source.splitlines()) if t.startswith(f"def {name}("))
        model = analyzer.model_at(line + 1)
        full = SemanticModel(source, ast.parse(source))
        for node in (n for n in ast.walk(full.tree) if isinstance(n, ast.Name) and n.lineno in (line + 2, line + 3)):
            twin = _node_at(model.tree, ast.Name, node.lineno, node.col_offset, node.end_col_offset)
            assert twin is not None and model.type_of(twin) == full.type_of(node)
        return model

    first = hover_check(text, "load_2")
    assert len(built) == 1
    below = text.replace("def load_5(base, stride: fx.Int32):\n", "def load_5(base, stride: fx.Int32):\n    extra = 1\n")
    assert below != text
    analyzer.analyze(AnalysisRequest(below))
    assert hover_check(below, "load_2") is first and len(built) == 1
    above = below.replace("def load_1(base, stride: fx.Int32):\n", "def load_1(base, stride: fx.Int32):\n    extra = 1\n")
    assert above != below
    analyzer.analyze(AnalysisRequest(above))
    assert hover_check(above, "load_2") is not first and len(built) == 2


def _node_at(tree, kind, line, col, end_col):
    for node in ast.walk(tree):
        if type(node) is kind and (node.lineno, node.col_offset, node.end_col_offset) == (line, col, end_col):
            return node
    return None


def test_a_new_binder_of_a_name_a_chunk_looked_up_invalidates_its_result():
    # FLY602's fix spells `fx.copy` only while `fx` is the module's flydsl.expr import; a
    # `def fx` added below rebinds it, and the chunk's cached fix must go.
    head = (
        "class Block0:\n    def run(self):\n        from flydsl.expr import copy_atom_call\n"
        "        def load(atom, src, r):\n            copy_atom_call(atom, src, r)\n\n\n"
        "import flydsl.expr as fx\n"
    )
    opts = AnalysisOptions(flydsl_version="0.3.1")
    analyzer = IncrementalAnalyzer()
    same_as_full(analyzer, head, opts)
    same_as_full(analyzer, head + "def fx(thr):\n    return thr\n", opts)


def test_an_import_added_after_the_last_one_stays_there_when_a_line_comes_below_it():
    """A reused result's added import sits where the import chunk ends, not where the
    next chunk starts (a stand-in ``pass`` typed below the imports moved it)."""
    head = "from flydsl._mlir.dialects import math as math_dialect\n"
    body = "def f(a):\n    return math_dialect.ctlz(a)\n"
    analyzer = IncrementalAnalyzer()
    same_as_full(analyzer, head + body, AnalysisOptions())
    same_as_full(analyzer, head + "pass\n" + body, AnalysisOptions())


_TWO_STATEMENTS = (
    "def first(x):\n    if x:\n        return 1\n    return 2\n\n\n"
    "def second(y):\n    z = y + 1\n    return z\n"
)


@pytest.mark.parametrize(
    "old, new, keeps_first",
    [
        # inside the second statement: the first is neither parsed nor cut again
        ("    z = y + 1\n", "    z = y + 2\n    w = z\n", True),
        ("    return z\n", "    return z\n# after\n", True),
        # the second's first line indented: it joins the first's body
        ("def second(y):\n    z = y + 1\n    return z\n", "    def second(y):\n        z = y + 1\n        return z\n", False),
        # lines inserted where the second starts are the first's
        ("def second(y):\n", "# note\ndef second(y):\n", False),
        # a statement start that continues the one before
        ("if x:\n        return 1\n    return 2\n\n\ndef second(y):\n", "if x:\n        return 1\n    return 2\nelse_ = 0\ndef second(y):\n", False),
    ],
)
def test_an_edit_after_a_statements_first_line_cuts_from_that_statement(old, new, keeps_first, monkeypatch):
    from flydsl_ls.analysis.incremental import chunks as chunks_module
    from flydsl_ls.analysis.incremental.chunks import resplit, split
    from flydsl_ls.analysis.model.parsing import parse

    chunks = split(_TWO_STATEMENTS, parse(_TWO_STATEMENTS).body, None)
    edited = _TWO_STATEMENTS.replace(old, new)
    parsed: list[str] = []
    monkeypatch.setattr(chunks_module, "parse", lambda text: parsed.append(text) or parse(text))
    again = resplit(chunks, edited, None)  # None: the caller parses the whole text
    assert ("def first" not in "".join(parsed)) == keeps_first
    whole = split(edited, parse(edited).body, None)
    assert again is not None or not keeps_first
    if again is not None:
        assert [c.text for c in again] == [c.text for c in whole]
        assert (again[0] is chunks[0]) == keeps_first


def test_a_statement_start_turned_into_a_continuation_is_cut_as_a_full_parse_would():
    from flydsl_ls.analysis.incremental.chunks import resplit, split
    from flydsl_ls.analysis.model.parsing import parse

    text = "if a:\n    b = 1\nc = 2\nd = 3\n"
    chunks = split(text, parse(text).body, None)
    for edited in ("if a:\n    b = 1\nelse:\n    c = 2\nd = 3\n", "if a:\n    b = 1\n    c = 2\nd = 3\n"):
        again = resplit(chunks, edited, None)
        assert again is None or [c.text for c in again] == [c.text for c in split(edited, parse(edited).body, None)]


def test_an_edited_helpers_callers_keep_their_findings_until_they_are_analysed_again():
    text = _many_functions(20)
    analyzer = IncrementalAnalyzer()
    same_as_full(analyzer, text, AnalysisOptions())
    before = analyze(AnalysisRequest(text, options=AnalysisOptions())).diagnostics
    edited = text.replace("w = ArithValue(v) * 2\n    return fx.Int32(fx.Int32(w))\n\n\n@fx.kernel\ndef kernel_7",
                          "w = ArithValue(v) * 3\n    y = arith.constant(1)\n    return fx.Int32(fx.Int32(w))\n\n\n@fx.kernel\ndef kernel_7")
    early: list = []
    same_as_full(analyzer, edited, AnalysisOptions(), early)
    assert analyzer.reanalysed == 3  # scale_7, kernel_7, FLY402's module pass, in two steps
    assert len(early) == 1
    full = analyze(AnalysisRequest(edited, options=AnalysisOptions())).diagnostics
    helper = edited.splitlines().index("def scale_7(v):")
    caller = edited.splitlines().index("def kernel_7(A: fx.Tensor, n: fx.Int32):")
    # the helper's findings come first as they are now (the line typed into it among them)
    in_helper = lambda ds: [d for d in ds if helper <= d.range.start.line < caller - 1]
    assert in_helper(early[0].diagnostics) == in_helper(full)
    assert any(d.range.start.line == helper + 2 for d in in_helper(full))
    # below it, the findings of before, one line lower: the caller's among them
    below = lambda ds, first: [(d.code, d.range.start.line) for d in ds if d.range.start.line >= first]
    assert below(early[0].diagnostics, caller - 1) == [(c, line + 1) for c, line in below(before, caller - 2)]
    assert any(caller <= line < caller + 4 for _, line in below(early[0].diagnostics, caller - 1))


def test_an_edit_that_only_its_own_statement_reads_is_analysed_in_one_step():
    text = _many_functions(4)
    analyzer = IncrementalAnalyzer()
    same_as_full(analyzer, text, AnalysisOptions())
    early: list = []
    old = "def kernel_2(A: fx.Tensor, n: fx.Int32):\n    base = fx.Int32(fx.block_idx.x) * 128"
    same_as_full(analyzer, text.replace(old, old.replace("128", "64")), AnalysisOptions(), early)
    assert analyzer.reanalysed == 1 and early == []


def test_a_staged_analysis_stopped_after_its_first_findings_leaves_the_rest_to_the_next():
    text = _many_functions(6)
    analyzer = IncrementalAnalyzer()
    same_as_full(analyzer, text, AnalysisOptions())
    edited = text.replace("w = ArithValue(v) * 2\n    return fx.Int32(fx.Int32(w))\n\n\n@fx.kernel\ndef kernel_3",
                          "w = ArithValue(v) * 3\n    y = arith.constant(1)\n    return fx.Int32(fx.Int32(w))\n\n\n@fx.kernel\ndef kernel_3")
    early: list = []
    stopped = analyzer.analyze(AnalysisRequest(edited, options=AnalysisOptions()), early=early.append, stop=lambda: True)
    assert analyzer.interrupted and len(early) == 1
    assert stopped.diagnostics == early[0].diagnostics
    # the callers left undone are redone by the next analysis, of this text or the next
    same_as_full(analyzer, edited, AnalysisOptions())
    assert not analyzer.interrupted and analyzer.reanalysed == 2  # kernel_3, FLY402's pass
    again = edited.replace("y = arith.constant(1)", "y = arith.constant(2)")
    analyzer.analyze(AnalysisRequest(again, options=AnalysisOptions()), early=early.append, stop=lambda: True)
    assert analyzer.interrupted
    same_as_full(analyzer, again.replace("constant(2)", "constant(3)"), AnalysisOptions())


def test_an_import_lines_model_holds_the_import_not_the_functions_reading_it():
    """Hover on an import reads the alias: its model need not build the file's readers of
    the imported names (most of a kernel file)."""
    text = _many_functions(3)
    analyzer = IncrementalAnalyzer()
    analyzer.analyze(AnalysisRequest(text))
    model = analyzer.model_at(text.splitlines().index("from flydsl.expr.arith import ArithValue"))
    assert "row = ArithValue(tid) % 64" not in model.source  # load_0 stands in as a stub
    assert "ArithValue" in model.module_scope.bindings
    definition = analyzer.model_at(text.splitlines().index("def scale_1(v):"))
    assert "value = load_1(base, n)" in definition.source  # a definition's readers are there


def test_a_range_over_several_statements_has_the_hints_of_the_whole_file():
    text = _many_functions(3) + "\nLANES = fx.Int32(64) * 2\nrow = ArithValue(LANES) % 4\n"
    analyzer = IncrementalAnalyzer()
    analyzer.analyze(AnalysisRequest(text))
    count = len(text.splitlines())
    found = []
    with analyzer.models_in_use():
        for start, end, model in analyzer.models_of_lines(0, count):
            found += type_hints(model, max(Position(0, 0), Position(start, 0)), Position(end + 1, 0))
    full = type_hints(SemanticModel(text, ast.parse(text)), Position(0, 0), Position(count, 0))
    assert found == full and len(full) > 3


def test_a_chunk_that_reads_a_name_is_visited_by_any_rules_and_one_that_reads_none_by_its_own():
    """The node types of a chunk that reads a name are not listed (it holds an ast.Name,
    which the default rules visit): it is analysed whatever rules run. Those of a chunk
    that reads none are, and only rules visiting one of them analyse it."""
    from flydsl_ls.analysis.incremental.chunks import split
    from flydsl_ls.analysis.model.parsing import parse

    text = '"""Kernels."""\nimport os\nx = os.sep\n'
    docstring, imports, reader = split(text, parse(text).body, None)
    assert reader.node_types is None and reader.visited_by(frozenset({ast.Call}))
    assert imports.node_types == frozenset({ast.Import, ast.alias})
    assert docstring.visited_by(frozenset({ast.Constant})) and not docstring.visited_by(frozenset({ast.Call, ast.Name}))


def test_a_tracked_model_records_each_look_up_of_a_module_name_for_the_chunk_asking():
    """A model keeps each read's binding; a reduced module's model records, on each ask,
    the module-level name the look-up reads (found there, or nowhere), as looking it up
    again would: for the chunk asking now."""
    from flydsl_ls.analysis.incremental.tracking import Tracker, TrackedModel
    from flydsl_ls.analysis.model.scopes import lookup

    def look_up(model, name):  # what ``binding_of`` answers, asked afresh
        scope = model.scope_of(name)
        return lookup(name.id, scope, (name.lineno, name.col_offset)) if scope is not None else None

    text = (
        "import os\n\n\ndef f(a):\n    b = a\n    return os.sep, b, missing, [c for c in a]\n\n\n"
        "class K:\n    k = os\n\n    def m(self):\n        global g\n        g = k\n        return g\n"
    )
    tree = ast.parse(text)
    reads = [n for n in ast.walk(tree) if isinstance(n, ast.Name)]
    kept, looked_up = (TrackedModel(text, tree, None, None, Tracker()) for _ in range(2))
    for tracker in (Tracker(), Tracker()):  # the second chunk asks what the first asked
        kept.track(tracker)
        answers = [kept.binding_of(n) for n in reads]
        looked_up.track(expected := Tracker())
        assert [b and (b.name, b.kind) for b in answers] == [
            b and (b.name, b.kind) for b in (look_up(looked_up, n) for n in reads)
        ]
        assert tracker.looked_up == expected.looked_up == {"os", "missing", "g", "k", "a", "c"} - {"a", "c"}
    assert kept.binding_of(reads[0]) is kept.binding_of(reads[0])
