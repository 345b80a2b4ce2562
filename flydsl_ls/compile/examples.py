"""Find the examples a file names, from its tokens and syntax tree (never by importing it).

An example is a module-level function marked with a comment on the line above its
``def`` (or above its first decorator), or on the ``def`` line itself::

    # flydsl: example
    def small(device):
        return jit_fn, (a, b, c)

    def big(device):  # flydsl: example gfx950
        ...

It takes a device string and returns ``(jit_fn, args)``. The optional word after
``example`` is the arch the example is meant for (it overrides the default arch).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass

MARKER = re.compile(r"^#\s*flydsl:\s*example(?:\s+(?P<arch>gfx[0-9a-z]+))?\s*(?:#.*)?$", re.I)


@dataclass(frozen=True)
class Example:
    name: str
    line: int  # 1-based line of the ``def``
    column: int  # 0-based column of the ``def`` (UTF-8 bytes, as in ``ast``)
    arch: str | None = None  # the arch named by the marker, if any
    marker_line: int = 0  # 1-based line of the marker comment


def _marker_comments(source: str) -> dict[int, str | None]:
    """line -> arch (or None) for every ``# flydsl: example`` comment token."""
    found: dict[int, str | None] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                match = MARKER.match(tok.string.strip())
                if match:
                    arch = match.group("arch")
                    found[tok.start[0]] = arch.lower() if arch else None
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass  # the syntax tree below decides whether there is anything to report
    return found


def find_examples(source: str) -> list[Example]:
    """The marked module-level functions of ``source``, in file order.

    A file that does not parse has no examples (the linter reports the syntax error).
    """
    markers = _marker_comments(source)
    if not markers:
        return []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    examples: list[Example] = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        for line in (node.lineno, node.lineno - 1, first - 1):
            if line in markers:
                examples.append(Example(node.name, node.lineno, node.col_offset, markers[line], line))
                break
    return examples


def split_target(target: str) -> tuple[str, str | None]:
    """``"path/file.py::name"`` -> ``("path/file.py", "name")``; no ``::`` -> name None."""
    path, sep, name = target.rpartition("::")
    if not sep:
        return target, None
    return path, name or None


def choose_example(examples: list[Example], name: str | None) -> Example:
    """The example called ``name``, or the only/first one when no name is given.

    Raises ``LookupError`` with a message fit for the user.
    """
    if not examples:
        raise LookupError(
            "no example in this file: mark a module-level function `# flydsl: example` "
            "that takes a device string and returns (jit_fn, args); `flydsl-ls example add FILE` "
            "or the editor's \"Add compile example\" lens writes one for a kernel builder or launcher"
        )
    if name is None:
        return examples[0]
    for example in examples:
        if example.name == name:
            return example
    names = ", ".join(e.name for e in examples)
    raise LookupError(f"no example named `{name}` in this file (examples: {names})")
