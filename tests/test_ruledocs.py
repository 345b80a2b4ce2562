"""docs/rules/ and its copy in the package (flydsl_ls/data/rules/, which rule links point
to) are generated from the rule registry and must match it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from flydsl_ls import ruledocs
from flydsl_ls.analysis.model.diagnostic import rule_url
from flydsl_ls.analysis.rules import ALL_RULES
from flydsl_ls.data import RULE_PAGES
from tests.rule_pages import installed_page

DOCS = Path(__file__).resolve().parent.parent / "docs" / "rules"


@pytest.mark.parametrize("directory", [DOCS, RULE_PAGES], ids=["docs", "package"])
def test_committed_rule_docs_are_up_to_date(directory):
    problems = ruledocs.stale(directory)
    assert not problems, (
        f"{directory} does not match the rule registry:\n  "
        + "\n  ".join(problems)
        + f"\nRegenerate with `{ruledocs.REGENERATE}` and commit the result."
    )


@pytest.mark.parametrize("rule", ALL_RULES, ids=[r.code for r in ALL_RULES])
def test_page_content(rule):
    page = ruledocs.render(rule)
    assert page.startswith(f"# {rule.name} ({rule.code})\n")
    assert rule.explanation() in page
    assert rule.replacement in page
    assert f"# flydsl: ignore[{rule.code}]" in page
    # Examples come from the rule's own cases, so they are tested code.
    assert "## Flagged" in page
    first_invalid = next(case for case in rule.INVALID if not case.settings)
    assert first_invalid.code.rstrip("\n") in page
    # Fenced blocks are balanced.
    assert page.count("```") % 2 == 0


def test_url_opens_the_installed_page():
    for rule in ALL_RULES:
        page = installed_page(rule_url(rule.code))
        assert page == RULE_PAGES / f"{rule.code}.md"
        assert page.read_text(encoding="utf-8") == (DOCS / f"{rule.code}.md").read_text(encoding="utf-8")


def test_index_links_every_rule():
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    linked = re.findall(r"\[(FLY\d{3})\]\((FLY\d{3})\.md\)", index)
    assert [a for a, b in linked if a == b] == [r.code for r in ALL_RULES]


def test_write_and_check_round_trip(tmp_path):
    # never touch the real README or the package's pages
    isolated = ["--readme", str(tmp_path / "no-README.md"), "--package", str(tmp_path / "package")]
    assert ruledocs.main([str(tmp_path), "--check", *isolated]) == 1
    assert ruledocs.main([str(tmp_path), *isolated]) == 0
    assert ruledocs.stale(tmp_path) == []
    assert ruledocs.main([str(tmp_path), "--check", *isolated]) == 0
    (tmp_path / "FLY999.md").write_text("stale\n", encoding="utf-8")
    (tmp_path / "FLY101.md").write_text("edited by hand\n", encoding="utf-8")
    assert sorted(ruledocs.stale(tmp_path)) == ["FLY101.md: out of date", "FLY999.md: no such rule in the registry"]
    ruledocs.main([str(tmp_path), *isolated])
    assert ruledocs.stale(tmp_path) == []
    assert not (tmp_path / "FLY999.md").exists()
    (tmp_path / "package" / "FLY101.md").write_text("edited by hand\n", encoding="utf-8")
    assert ruledocs.main([str(tmp_path), "--check", *isolated]) == 1  # the package's copy too


def test_readme_rule_table_matches_registry():
    readme = DOCS.parent.parent / "README.md"
    problems = ruledocs.stale(DOCS, readme=readme)
    assert not [p for p in problems if "README" in p], (
        f"{problems}\nRegenerate with `{ruledocs.REGENERATE}` (it also refreshes README.md's rule table)."
    )
    text = readme.read_text(encoding="utf-8")
    for rule in ALL_RULES:
        assert f"| [{rule.code}](docs/rules/{rule.code}.md) | `{rule.name}` |" in text


def test_readme_table_refresh(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# x\n\n{ruledocs.README_BEGIN}\n| stale |\n{ruledocs.README_END}\n\nafter\n", encoding="utf-8")
    assert ruledocs.stale(tmp_path / "rules", readme=readme)[0].endswith("rules table out of date")
    ruledocs.write(tmp_path / "rules", readme=readme)
    text = readme.read_text(encoding="utf-8")
    assert "| stale |" not in text and text.endswith(f"{ruledocs.README_END}\n\nafter\n")
    assert ruledocs.readme_table() in text
    assert ruledocs.stale(tmp_path / "rules", readme=readme) == []
