"""Fix-all properties on generated files (hypothesis).

Files are built from snippets: the VALID and INVALID case sources of every registered
rule (so rules added later are covered without touching this file) plus benign filler,
in random order and number, at module level or indented inside functions, loops,
branches and methods. After applying every safe fix (and, separately, every safe or
unsafe fix) with `fix_all` over `analyze`:

- the result parses, and no rule crashed on the input or on the result;
- fixing the result again changes nothing (idempotent);
- no diagnostic whose fix would have been applied is left (a fix that was offered has
  really removed what it claimed to remove).
"""

from __future__ import annotations

import ast
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flydsl_ls.actions.fixes import fix_all, parses, wanted
from flydsl_ls.analysis.engine import AnalysisRequest, analyze
from flydsl_ls.analysis.rules import ALL_RULES
from tests.rule_cases import all_cases, options

FILLERS = [
    "import flydsl.expr as fx\n\n\ndef modern_max(a: fx.Int32, b: fx.Int32):\n    return fx.max(a, b) + 1\n",
    "# arith.unwrap(v), buffer_ops.create_llvm_ptr(x, address_space=3), rocdl.s_waitcnt(0)\n"
    'NOTE = "fx.copy_atom_call(a, s, d) and ArithValue(x) are only text here"\n',
    'def documented():\n    """fx.index_cast(T.index, v) and arith.index(4) in a docstring."""\n    return None\n',
    "total = 0\nfor i in range(4):\n    total += i * 2\nsquares = [j * j for j in range(total)]\n",
    "import flydsl.expr as fx\n\n\ndef tile_view(t):\n    return fx.make_view(fx.get_iter(t), fx.make_layout(4, 1))\n",
    "class Holder:\n    value = 3\n\n    def get(self):\n        return self.value\n",
]


def _snippets() -> list[str]:
    found: dict[str, None] = {}
    for _rule, _kind, _index, case in all_cases():
        source = case.code
        if "__future__" in source or not parses(source):
            continue
        found.setdefault(source, None)
    found.update(dict.fromkeys(FILLERS))
    return list(found)


def _settings_choices() -> list[dict]:
    seen = {json.dumps({}, sort_keys=True): {}}
    for _rule, _kind, _index, case in all_cases():
        seen.setdefault(json.dumps(case.settings, sort_keys=True), dict(case.settings))
    return list(seen.values())


SNIPPETS = _snippets()
# Invalid cases whose diagnostic carries a fix: the snippets the properties are about.
FIXABLE = list(
    dict.fromkeys(
        case.code
        for _rule, kind, _index, case in all_cases()
        if kind == "invalid" and case.expected is not None and case.code in SNIPPETS
    )
)
SETTINGS = _settings_choices()
UNITS = ["    ", "  ", "\t"]
PLACES = ["module", "function", "if", "for", "method", "nested"]


def _indent(text: str, prefix: str) -> str:
    return "".join(prefix + line if line.strip() else line for line in text.splitlines(keepends=True))


def _place(snippet: str, place: str, unit: str, number: int) -> str:
    """``snippet`` at module level, or as the body of a block of the given kind."""
    if not snippet.endswith("\n"):
        snippet += "\n"
    if place == "module":
        return snippet
    if place == "function":
        return f"def block_{number}(arg):\n" + _indent(snippet, unit)
    if place == "if":
        return f"def block_{number}(flag):\n{unit}if flag:\n" + _indent(snippet, unit * 2)
    if place == "for":
        return f"def block_{number}(n):\n{unit}for step in range(n):\n" + _indent(snippet, unit * 2)
    if place == "method":
        return f"class Block{number}:\n{unit}def run(self):\n" + _indent(snippet, unit * 2)
    return f"def outer_{number}():\n{unit}def inner():\n" + _indent(snippet, unit * 2) + f"{unit}return inner\n"


def build(chunks: list[tuple[str, str, str]]) -> str:
    return "\n\n".join(_place(snippet, place, unit, n) for n, (snippet, place, unit) in enumerate(chunks))


def _lint(settings: dict):
    opts = options(settings)

    def lint(text: str):
        result = analyze(AnalysisRequest(text, options=opts))
        assert not result.internal_errors, result.internal_errors
        return result.diagnostics

    return lint


def check_fix_properties(source: str, settings: dict, unsafe: bool) -> None:
    assert parses(source), source
    lint = _lint(settings)
    lint(source)  # no rule crashes on the input
    outcome = fix_all(source, lint, unsafe=unsafe)
    fixed = outcome.text
    assert parses(fixed), f"fixed text does not parse:\n{fixed}"
    assert not outcome.rejected, outcome.rejected
    left = [f"{d.code} {d.range.start.line + 1}: {d.fix.title}" for d in lint(fixed) if wanted(d.fix, unsafe)]
    assert not left, "diagnostics whose fix should have been applied remain:\n" + "\n".join(left) + f"\n{fixed}"
    again = fix_all(fixed, lint, unsafe=unsafe)
    assert again.text == fixed, f"fixing twice changed the text again:\n{fixed}\n---\n{again.text}"


def draw_chunks(rnd) -> list[tuple[str, str, str]]:
    """Up to 8 snippets, mostly fixable ones, each placed and indented at random.

    Choices come from a ``Random`` seeded by hypothesis: uniform over the registry
    (``sampled_from`` and ``st.randoms`` favour the first, simplest choices) and
    reproducible; a failure reports the seed and the generated file."""
    chunks = []
    for _ in range(rnd.randint(1, 8)):
        pool = FIXABLE if FIXABLE and rnd.random() < 0.7 else SNIPPETS
        chunks.append((rnd.choice(pool), rnd.choice(PLACES), rnd.choice(UNITS)))
    return chunks


@settings(
    max_examples=60,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(seed=st.integers(0, 2**32 - 1), settings_=st.sampled_from(SETTINGS), unsafe=st.booleans())
def test_fix_all_on_generated_files(seed, settings_, unsafe):
    check_fix_properties(build(draw_chunks(random.Random(seed))), settings_, unsafe)


@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
def test_fix_all_on_every_case_at_once(unsafe):
    """Every snippet in one file, each in its own function (deterministic smoke test)."""
    source = build([(snippet, "function", "    ") for snippet in SNIPPETS])
    check_fix_properties(source, {"target_arch": "gfx942", "flydsl_version": "0.5.0"}, unsafe)


def test_snippets_cover_every_fixable_rule():
    """Every rule whose cases carry a fix contributes snippets (the registry is iterated)."""
    fixable = {rule.code for rule, kind, _i, case in all_cases() if kind == "invalid" and case.expected is not None}
    covered = {rule.code for rule, kind, _i, case in all_cases() if case.code in SNIPPETS}
    assert fixable <= covered
    assert {rule.code for rule in ALL_RULES if rule.INVALID} <= covered | {"FLY000"}


def test_builder_places_snippets_in_every_kind_of_block():
    snippet = "import flydsl.expr as fx\nx = fx.Int32(1)\n"
    for place in PLACES:
        for unit in UNITS:
            ast.parse(build([(snippet, place, unit), (snippet, "module", unit)]))
