"""The fields of a syntax node that may hold other nodes worth visiting."""

from __future__ import annotations

import re

# Fields holding only the shared operator and context singletons (one ``ast.Load`` for the
# whole tree, ``ast.Add``...): nothing under them binds, reads or is flagged, and skipping
# them saves a third of a walk.
_SINGLETON_FIELDS = frozenset({"ctx", "op", "ops"})
# ASDL's built-in types: a field of one holds a name, a string or a number, never a node.
# Skipping them (a Name's `id`, a Constant's `value`) halves the fields a walk reads.
_SCALAR_TYPES = frozenset({"identifier", "string", "constant", "int"})


class _ChildFields(dict):
    """Node type -> its fields that may hold nodes, but those holding singletons, in
    declaration order. Filled on first use: the walks read it as ``CHILD_FIELDS[type(node)]``,
    a look-up where a call per node cost more."""

    def __missing__(self, node_type: type) -> tuple[str, ...]:
        skipped = _SINGLETON_FIELDS | _scalar_fields(node_type)
        fields = self[node_type] = tuple(f for f in node_type._fields if f not in skipped)
        return fields


CHILD_FIELDS = _ChildFields()


def _scalar_fields(node_type: type) -> frozenset[str]:
    """The fields that ``node_type``'s ASDL signature, its docstring, gives a built-in type
    (`Name(identifier id, expr_context ctx)`: `id`); none when it has no such signature."""
    signature = re.fullmatch(rf"{node_type.__name__}\((.*)\)", (node_type.__doc__ or "").strip())
    if signature is None:
        return frozenset()
    scalar = set()
    for declared in signature.group(1).split(","):
        kind, _, name = declared.strip().rpartition(" ")
        if kind.rstrip("*?") in _SCALAR_TYPES:
            scalar.add(name)
    return frozenset(scalar)
