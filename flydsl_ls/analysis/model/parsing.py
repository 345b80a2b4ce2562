"""``ast.parse``, robust against a CPython 3.11 bug on deeply nested code."""

from __future__ import annotations

import ast

from flydsl_ls.analysis.model.deep import on_deep_stack


def parse(text: str, filename: str = "<unknown>") -> ast.Module:
    """The module's syntax tree. Deep nesting may make CPython 3.11's AST conversion
    raise ``SystemError: AST constructor recursion depth mismatch`` instead of a
    ``RecursionError`` (gh-106905), depending on how deep the calling stack already is:
    try once more, then on a fresh deep stack, then report it as the ``RecursionError``
    it stands for."""
    try:
        return ast.parse(text, filename=filename)
    except SystemError:
        pass
    try:
        return on_deep_stack(lambda: ast.parse(text, filename=filename))
    except (SystemError, RecursionError) as error:
        raise RecursionError(f"too deeply nested to parse ({error})") from None
