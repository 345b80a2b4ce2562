"""fix_all names every fix it meets by a FixKey (code, span in the original text), through
its passes; `accept` applies a subset. What `check --fix --verify` bisects over
(actions/fix_verify.py). No compiler needed."""

from __future__ import annotations

from pathlib import Path

from flydsl_ls.actions.fixes import FixKey, Origins, fix_all
from flydsl_ls.checker import linter
from flydsl_ls.config import Settings

UNSAFE_FIXES = Path(__file__).resolve().parent / "semantics" / "fixtures" / "unsafe_fixes.py"


def test_origins_map_offsets_back_through_the_passes():
    origins = Origins()
    # "abcdef" -> pass 1 replaces "cd" (2..4) by "XYZ" -> "abXYZef"
    origins.add([(2, 4, "XYZ")])
    assert [origins.back(o) for o in range(8)] == [0, 1, 2, 2, 2, 4, 5, 6]
    assert [origins.back(o, right=True) for o in range(8)] == [0, 1, 2, 4, 4, 4, 5, 6]
    # pass 2 on "abXYZef": insert "+" at 0 and delete "e" (5..6) -> "+abXYZf"
    origins.add([(0, 0, "+"), (5, 6, "")])
    assert origins.back(1) == 0  # "a"
    assert origins.back(6) == 5  # "f": after the deleted "e"
    assert origins.back(7) == 6  # the end


def test_every_fix_has_one_key_in_every_run_that_reaches_it():
    source = UNSAFE_FIXES.read_text()
    lint = linter(UNSAFE_FIXES, Settings(target_arch="gfx942"))
    full = fix_all(source, lint, unsafe=True)
    assert len(full.found) == 12 and set(full.keys) == set(full.found)
    # the pass-1 keys are the diagnostics' own spans; later ones map back into the original
    spans = {(k.code, source[k.start : k.end]) for k in full.found}
    assert ("FLY101", "ArithValue(n)") in spans and ("FLY104", "fx.Int32(thrice)") in spans
    assert ("FLY104", "fx.Int32(ArithValue(raw) + 1)") in spans  # found in pass 2
    assert full.found[next(k for k in full.found if source[k.start : k.end] == "ArithValue(n)")].startswith("Remove")
    for dropped in full.found:
        rest = fix_all(source, lint, unsafe=True, accept=lambda key, dropped=dropped: key != dropped)
        assert dropped not in rest.keys
        assert set(rest.found) <= set(full.found)  # the same names in every run
    # nothing accepted: nothing applied, every pass-1 fix still found
    none = fix_all(source, lint, unsafe=True, accept=lambda key: False)
    assert none.text == source and not none.keys and len(none.found) == 7


def test_a_fix_enabled_by_another_is_applied_only_with_it():
    source = UNSAFE_FIXES.read_text()
    lint = linter(UNSAFE_FIXES, Settings(target_arch="gfx942"))
    full = fix_all(source, lint, unsafe=True)
    fly105 = next(k for k in full.found if k.code == "FLY105")
    wrap = next(k for k in full.found if source[k.start : k.end] == "fx.Int32(raw_lane)")
    assert isinstance(wrap, FixKey) and wrap.code == "FLY104"
    alone = fix_all(source, lint, unsafe=True, accept={wrap}.__contains__)
    assert alone.text == source  # the redundant wrap exists only once FLY105 is applied
    both = fix_all(source, lint, unsafe=True, accept={wrap, fly105}.__contains__)
    assert set(both.keys) == {wrap, fly105}
    assert "Out[tid] = fx.Int32(quarter) + raw_lane +" in both.text


def test_two_fixes_inserting_at_one_point_wait_for_each_other():
    """FLY301's typed constants on both sides of `base + lo` each added `.ir_value()` at the
    end of the sum in one pass: `(base + lo).ir_value().ir_value()` (aiter's
    fused_compress_attn_hca, which then failed to trace). Two fixes inserting different text
    at one point are applied one per pass; whole lines (imports) still go together."""
    from flydsl_ls.actions.fixes import apply_edits_once
    from flydsl_ls.analysis.model.diagnostic import Applicability, Edit, Fix
    from flydsl_ls.analysis.model.text import Position, Range

    def insert(line: int, column: int, text: str) -> Fix:
        at = Position(line, column)
        return Fix("insert", Applicability.UNSAFE, (Edit(Range(at, at), text),))

    text = "f(a + b)\n"
    once, counts = apply_edits_once(text, [("FLY301", insert(0, 2, "(")), ("FLY301", insert(0, 7, ").ir_value()")),
                                           ("FLY301", insert(0, 7, ".ir_value()"))])
    assert once == "f((a + b).ir_value())\n" and counts == {"FLY301": 2}
    same, counts = apply_edits_once(text, [("FLY301", insert(0, 7, ".x")), ("FLY101", insert(0, 7, ".x"))])
    assert same == "f(a + b.x)\n" and counts == {"FLY301": 1, "FLY101": 1}  # the same text: once
    lines, counts = apply_edits_once(text, [("FLY301", insert(0, 0, "import a\n")), ("FLY101", insert(0, 0, "import b\n"))])
    assert lines == "import a\nimport b\nf(a + b)\n" and counts == {"FLY301": 1, "FLY101": 1}


def test_insertions_at_one_point_of_one_fix_apply_in_the_order_given():
    """An import and a decorator inserted before the same `def`: one edit, import first
    (applied apart, same-point insertions would be ordered by their text)."""
    from flydsl_ls.actions.fixes import apply_fix
    from flydsl_ls.analysis.model.diagnostic import Applicability, Edit, Fix
    from flydsl_ls.analysis.model.text import Position, Range

    at = Range(Position(0, 0), Position(0, 0))
    fix = Fix("t", Applicability.UNSAFE, (Edit(at, "import m\n"), Edit(at, "@m.jit\n"), Edit(at, "import m\n")))
    assert [e.content for e in fix.edits] == ["import m\n@m.jit\n"]
    assert apply_fix("def f():\n    pass\n", fix) == "import m\n@m.jit\ndef f():\n    pass\n"
