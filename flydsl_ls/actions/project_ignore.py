"""The "Disable FLY101 in this project" action: the code added to ``ignore`` of
``[tool.flydsl-ls]`` in ``pyproject.toml``, leaving the rest of the file as written.

The table is created when missing (at the end of the file), the key when the table has
none (right under its header), and an existing list gets the code before its ``]`` in its
own style (one line, or one item a line with the last item's indent and trailing comma).
The result is parsed back: when it does not read as TOML with the code in the table's
``ignore`` (a table spelled as dotted keys, an inline table), there is no action.
"""

from __future__ import annotations

import re
import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from flydsl_ls.config import SECTION

_HEADER = re.compile(r"^\s*\[\s*tool\s*\.\s*(\"flydsl-ls\"|'flydsl-ls'|flydsl-ls)\s*\]\s*(#.*)?$")
_ANY_HEADER = re.compile(r"^\s*\[")
_IGNORE = re.compile(r"^(\s*)(ignore|\"ignore\")\s*=\s*\[")


def title(code: str) -> str:
    return f"Disable {code} in this project (pyproject.toml)"


def disable(text: str, code: str) -> str | None:
    """``text`` of a pyproject.toml with ``code`` ignored project-wide; None when it is
    ignored already or the file cannot be edited safely."""
    try:
        before = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    if code in _ignored(before):
        return None
    lines = text.splitlines(keepends=True)
    header = next((i for i, line in enumerate(lines) if _HEADER.match(line.rstrip("\r\n"))), None)
    newline = "\r\n" if "\r\n" in text else "\n"
    if header is None:
        tail = "" if not text or text.endswith(("\n", "\r")) else newline
        gap = newline if text.strip() else ""
        new = f"{text}{tail}{gap}[tool.{SECTION}]{newline}ignore = [\"{code}\"]{newline}"
    else:
        end = next((i for i in range(header + 1, len(lines)) if _ANY_HEADER.match(lines[i])), len(lines))
        key = next((i for i in range(header + 1, end) if _IGNORE.match(lines[i])), None)
        if key is None:
            line = f"ignore = [\"{code}\"]{newline}"
            new = "".join(lines[: header + 1]) + line + "".join(lines[header + 1 :])
        else:
            offset = sum(len(line) for line in lines[:key])
            new = _extended(text, offset + lines[key].index("[", len(_IGNORE.match(lines[key]).group(1))), code, newline)
            if new is None:
                return None
    try:
        after = tomllib.loads(new)
    except tomllib.TOMLDecodeError:
        return None
    return new if code in _ignored(after) else None


def _ignored(data: dict) -> list:
    table = data.get("tool", {}).get(SECTION, {}) if isinstance(data.get("tool"), dict) else {}
    value = table.get("ignore", []) if isinstance(table, dict) else []
    return value if isinstance(value, list) else []


def _extended(text: str, start: int, code: str, newline: str) -> str | None:
    """The list opening at ``text[start]`` with ``"code"`` added before its ``]``."""
    close = _closing(text, start)
    if close is None:
        return None
    inside = text[start + 1 : close]
    body = "".join(inside[i] for i in _code_positions(inside))
    item = f'"{code}"'
    if "\n" not in inside:  # one line: ["A", "B"] -> ["A", "B", "C"]
        if not body:
            return f"{text[: start + 1]}{item}{text[close:]}"
        stripped = inside.rstrip()
        comma = "" if body.endswith(",") else ","
        space = " " if comma or not stripped.endswith(" ") else ""
        return f"{text[: start + 1]}{stripped}{comma}{space}{item}{inside[len(stripped):]}{text[close:]}"
    # one item a line: the new one after the last item's line, with its indent and a comma
    code_at = _code_positions(inside)
    if not code_at:
        cut = inside.index("\n") + 1
        return f"{text[: start + 1]}{inside[:cut]}    {item},{newline}{inside[cut:]}{text[close:]}"
    last = code_at[-1]
    comma = "" if inside[last] == "," else ","
    line_start = inside.rfind("\n", 0, last) + 1
    indent = re.match(r"[ \t]*", inside[line_start:]).group(0)
    line_end = inside.find("\n", last)
    if line_end < 0:  # the last item shares its line with the `]`
        return f"{text[: start + 1]}{inside[: last + 1]}{comma}{newline}{indent}{item},{newline}{text[close:]}"
    head = inside[: last + 1] + comma + inside[last + 1 : line_end + 1]
    return f"{text[: start + 1]}{head}{indent}{item},{newline}{inside[line_end + 1 :]}{text[close:]}"


def _closing(text: str, start: int) -> int | None:
    """Where the ``]`` closing the ``[`` at ``start`` is, skipping strings and comments."""
    depth, i = 0, start
    while i < len(text):
        c = text[i]
        if c in "\"'":
            end = text.find(c, i + 1)
            if end < 0:
                return None
            i = end
        elif c == "#":
            end = text.find("\n", i)
            if end < 0:
                return None
            i = end
        elif c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def _code_positions(text: str) -> list[int]:
    """Indexes of the characters of ``text`` that are neither blanks nor in a comment."""
    found, quote, comment = [], None, False
    for i, c in enumerate(text):
        if comment:
            comment = c != "\n"
            continue
        if quote:
            quote = None if c == quote else quote
        elif c in "\"'":
            quote = c
        elif c == "#":
            comment = True
            continue
        if not c.isspace():
            found.append(i)
    return found
