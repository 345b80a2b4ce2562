"""The fields of a syntax node that may hold other nodes worth visiting."""

from __future__ import annotations

# Fields holding only the shared operator and context singletons (one ``ast.Load`` for the
# whole tree, ``ast.Add``...): nothing under them binds, reads or is flagged, and skipping
# them saves a third of a walk.
_SINGLETON_FIELDS = frozenset({"ctx", "op", "ops"})
_FIELDS: dict[type, tuple[str, ...]] = {}  # node type -> ``child_fields``


def child_fields(node_type: type) -> tuple[str, ...]:
    """``node_type``'s fields but those holding singletons, in declaration order."""
    fields = _FIELDS.get(node_type)
    if fields is None:
        fields = _FIELDS[node_type] = tuple(f for f in node_type._fields if f not in _SINGLETON_FIELDS)
    return fields
