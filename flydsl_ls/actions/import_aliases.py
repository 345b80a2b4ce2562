"""Dropping some aliases from one import statement with libcst, which keeps its commas,
parentheses and comments. Imported on first use (see ``imports._removal``)."""

from __future__ import annotations

import libcst as cst


def without_aliases(source: str, names: set[str]) -> str | None:
    """``source`` (one import statement) without the aliases spelled as in ``names``
    (``name`` or ``name as alias``); None when it does not parse."""
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:
        return None
    return module.visit(_DropAliases(names)).code


class _DropAliases(cst.CSTTransformer):
    def __init__(self, names: set[str]):
        self.names = names

    def _keep(self, alias: cst.ImportAlias) -> bool:
        name = cst.helpers.get_full_name_for_node(alias.name)
        text = f"{name} as {alias.asname.name.value}" if alias.asname else name
        return text not in self.names

    def _trim(self, aliases):
        kept = [a for a in aliases if self._keep(a)]
        if kept and kept[-1].comma is not cst.MaybeSentinel.DEFAULT and aliases[-1] not in kept:
            kept[-1] = kept[-1].with_changes(comma=aliases[-1].comma)
        return kept

    def leave_ImportFrom(self, original, updated):
        if isinstance(updated.names, cst.ImportStar):
            return updated
        return updated.with_changes(names=self._trim(list(updated.names)))

    def leave_Import(self, original, updated):
        return updated.with_changes(names=self._trim(list(updated.names)))
