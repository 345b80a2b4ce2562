"""A rule's documentation page, rendered from its registry entry (CLI, docs/, hover)."""

from __future__ import annotations

from flydsl_ls.analysis.diagnostic import rule_url
from flydsl_ls.analysis.rules.base import Rule


def render(rule: type[Rule]) -> str:
    parts = [
        f"# {rule.name} ({rule.code})",
        "",
        rule.summary + ".",
        "",
        f"Fix: {rule.fix_safety}.",
        "",
        "## What it does",
        "",
        rule.explanation(),
        "",
        "## Replacement",
        "",
        rule.replacement,
    ]
    if rule.example_before:
        parts += ["", "## Example", "", "```python", "# Before", rule.example_before, "# After", rule.example_after, "```"]
    parts += ["", "## Suppression", "", f"`# flydsl: ignore[{rule.code}]` on the line, or `per-file-ignores` in `[tool.flydsl-ls]`."]
    return "\n".join(parts) + "\n"


def summary_markdown(rule: type[Rule]) -> str:
    """Short form for hover: what, replacement, example, link."""
    parts = [f"**{rule.code}** `{rule.name}`: {rule.summary}", "", f"Use instead: {rule.replacement}"]
    if rule.example_before:
        parts += ["", "```python", "# before", rule.example_before, "# after", rule.example_after, "```"]
    parts += ["", f"[{rule.code} documentation]({rule_url(rule.code)})"]
    return "\n".join(parts)
