"""What the project index's scan of a file (``project.scan_source``) learns from its text
alone, without parsing it: the file's top-level functions, and whether any of its calls
may pass a dialect module (the scan parses the file only then).

The scan is asked of every file that mentions a helper the checked file defines or
imports: 188 of the 213 real corpus files in a CLI run, 10 files (311 ms) in a server's
first analysis of aiter's 5.7k-line MoE kernel. Parsing them was 14% of a one-worker run.
This reading costs about a third of a parse (0.4 s against 1.5 s over the corpus), and 13
of the 213 files still need one (5 really pass modules; the others name module-like
parameters or values).

Both answers are sound over-approximations of what the syntax tree says: ``may_pass_modules``
is true of every file in which ``project._calls_that_may_pass_modules`` finds a call (so a
file it clears has none), and ``top_level_functions`` is exactly the tree's top-level
``def``s for a file that parses. They read the code with its comments and string literals
blanked (an f-string is kept: its braces hold code).
"""

from __future__ import annotations

import bisect
import itertools
import re
from functools import lru_cache

from flydsl_ls.analysis.model.modules import CANONICAL_MODULES, SHIM_MODULE_TAILS, SUBMODULES

# Leftmost first, so a quote in a comment and a `#` in a string are read as Python reads them.
_STRING_OR_COMMENT = re.compile(
    r"""#[^\n]*|\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"|'''(?:[^'\\]|\\.|'(?!''))*'''|"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'""",
    re.S,
)
_PREFIX_LETTERS = frozenset("rRbBuUfF")
_GAP = r"(?:\s|\\\n)"  # between two tokens: blanks, newlines, continued lines
_TOP_LEVEL_DEF = re.compile(rf"^\f*(?:async{_GAP}+)?def{_GAP}+([A-Za-z_]\w*)", re.M)
# Patterns start with a literal where they can: the regex engine then skips to it.
_AS = re.compile(rf"as{_GAP}+([A-Za-z_]\w*)")
_IS_NAME = re.compile(rf"={_GAP}*(?:\({_GAP}*)*([A-Za-z_]\w*)(?:\s|\\\n|\))*(?:$|;)", re.M)
_IMPORT = re.compile(r"import\b")
_FROM_MODULE = re.compile(r"[ \t\f]*(?:from[ \t\f]+[\w. \t\f]+)?")
_PLAIN_PARAMETERS = re.compile(r"def\s+\w+\s*\([^()]*\)")  # no call can be in them
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_NOT_ASSIGNMENT = frozenset("=!<>+-*/%&|^@:")  # `==`, `<=`, `+=`, `:=` ...
_AS_PARENTHESES = bytes.maketrans(b"[{]}", b"(())")
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"()[]{}\n")


@lru_cache(maxsize=1)
def module_tails() -> frozenset[str]:
    """The last names of the modules a call may pass (a known module's, submodule's or shim
    module's): ``canonical_symbol`` makes a dotted path a module only when it ends in one."""
    known = [*CANONICAL_MODULES, *SUBMODULES, *SHIM_MODULE_TAILS]
    return frozenset(name.split(".")[-1] for name in known)


def code_text(source: str) -> str:
    """``source`` with newlines made ``\\n``, comments and strings blanked (each its own
    newlines and a space), f-strings kept with each of their lines indented (no line of
    theirs starts at column 0)."""
    source = source.replace("\r\n", "\n").replace("\r", "\n")

    def blank(match: re.Match) -> str:
        start = match.start()
        prefix = start
        while prefix > 0 and source[prefix - 1] in _PREFIX_LETTERS:
            prefix -= 1
        text = match.group()
        if text[0] != "#" and ("f" in source[prefix:start] or "F" in source[prefix:start]):
            return text.replace("\n", "\n ")
        return "\n" * text.count("\n") + " "

    return _STRING_OR_COMMENT.sub(blank, source)


def top_level_functions(code: str) -> frozenset[str]:
    """The names of the ``def``s at column 0 of ``code`` (``code_text``): in a file that
    parses, a line starting a ``def`` there is a top-level statement (no bracket or
    continued line can be open before it)."""
    return frozenset(_TOP_LEVEL_DEF.findall(code))


def may_pass_modules(code: str) -> bool:
    """Some call of ``code`` (``code_text``) may pass a module by position or keyword: a
    word that may name one (a module's last name, or a name an import, an assignment or a
    rename may bind to one) is followed by `,` or `)` outside an import and a plain
    parameter list. Linear in the text (a generated file of 20,000 aliases included)."""
    tails = module_tails()
    named = set(tails)
    for match in _AS.finditer(code):  # `import a.arith as A`, `from m import arith as A`
        before = code[max(0, match.start() - 80) : match.start()]
        if before[-1:].isspace() and _last_word(before) in tails:
            named.add(match.group(1))
    statements = _Statements(code)
    for match in _ends_in_tail().finditer(code):  # `A = x.arith`
        found = statements.assigned(match.start())
        if found is None:
            return True
        named |= found
    renames: dict[str, list[int]] = {}  # `B = A`: A -> where such a statement ends
    for match in _IS_NAME.finditer(code):
        if _is_assignment(code, match.start()):
            renames.setdefault(match.group(1), []).append(match.start() + 1)
    waiting = [name for name in named if name in renames]
    while waiting:
        for end in renames.pop(waiting.pop(), ()):
            found = statements.assigned(end)
            if found is None:
                return True
            new = found - named
            named |= new
            waiting += [name for name in new if name in renames]
    # From the end of the text, up to the first word passed outside the ignored spans.
    passed = (len(code) - match.end(1) for match in _passed_pattern(frozenset(named)).finditer(code[::-1]))
    first = next(passed, None)
    if first is None:
        return False
    ignored = sorted(_imports(code) + [m.span() for m in _PLAIN_PARAMETERS.finditer(code) if _starts_word(code, m.start())])
    starts = [a for a, _ in ignored]
    for position in itertools.chain((first,), passed):
        at = bisect.bisect_right(starts, position) - 1
        if at < 0 or position >= ignored[at][1]:  # the spans do not overlap
            return True
    return False


@lru_cache(maxsize=1)
def _ends_in_tail() -> re.Pattern:
    """A statement ending in an attribute named as a module's last name (`= x.arith`): with
    only those names in it, the engine fails at most dots at once (2x faster over a file
    than matching any attribute there and testing its name)."""
    tails = "|".join(re.escape(tail) for tail in sorted(module_tails(), key=len, reverse=True))
    return re.compile(rf"\.{_GAP}*({tails})(?:\s|\\\n|\))*(?:$|;)", re.M)


@lru_cache(maxsize=64)
def _passed_pattern(named: frozenset[str]) -> re.Pattern:
    """One of ``named`` followed by `,` or `)`, in the reversed text: the pattern then
    starts with a character class, which the regex engine skips to."""
    words = "|".join(re.escape(word[::-1]) for word in sorted(named, key=len, reverse=True))
    return re.compile(rf"[,)](?:\s|\n\\)*({words})(?!\w)")


def _last_word(text: str) -> str | None:
    words = _IDENTIFIER.findall(text.rstrip().removesuffix("\\").rstrip()[-80:])
    return words[-1] if words else None


def _is_assignment(code: str, equals: int) -> bool:
    return equals == 0 or code[equals - 1] not in _NOT_ASSIGNMENT


class _Statements:
    """Where ``code``'s statements start: its lines, the bracket depth at each line's start
    and whether the line before ends in a backslash, counted once (lazily: most files
    never ask)."""

    _MAX_LINES = 2000  # a statement longer than this is not looked into: "may pass"

    def __init__(self, code: str):
        self.code = code
        self._starts: list[int] | None = None
        self._open: list[bool] = []  # the line starts inside brackets or after a backslash

    def assigned(self, end: int) -> set[str] | None:
        """The names before the last assignment `=` of the statement that ``end`` is in: a
        superset of the names it binds (a keyword argument's `=` or a subscript's names may
        come in too). None: the statement is too long to look into."""
        start = self._statement_start(end)
        if start is None:
            return None
        segment = self.code[start:end]
        equals = [i for i, c in enumerate(segment) if c == "=" and _is_assignment(segment, i) and segment[i + 1 : i + 2] != "="]
        return set(_IDENTIFIER.findall(segment[: equals[-1]])) if equals else set()

    def _statement_start(self, position: int) -> int | None:
        starts = self._lines()
        line = bisect.bisect_right(starts, position) - 1
        first = line
        while line > 0 and self._open[line]:
            line -= 1
            if first - line > self._MAX_LINES:
                return None
        return starts[line]

    def _lines(self) -> list[int]:
        if self._starts is None:
            lines = self.code.split("\n")
            # Each line's brackets alone, openers as `(` and closers as `)`: counted from
            # these, the table costs a quarter of counting the six brackets in each line.
            brackets = self.code.encode("utf-8", "surrogatepass").translate(_AS_PARENTHESES, _NOT_BRACKETS).split(b"\n")
            depth, after_backslash = 0, False
            for text, inside in zip(lines, brackets):
                self._open.append(depth > 0 or after_backslash)
                if inside:
                    depth += 2 * inside.count(b"(") - len(inside)
                after_backslash = text.endswith("\\")
            self._starts = [0, *itertools.accumulate(len(text) + 1 for text in lines[:-1])]
        return self._starts


def _imports(code: str) -> list[tuple[int, int]]:
    """The spans of the names imported (``import`` to the statement's end)."""
    spans = []
    for match in _IMPORT.finditer(code):
        start = match.start()
        if not _starts_word(code, start):
            continue
        line_start = code.rfind("\n", 0, start) + 1
        line = code.rfind(";", line_start, start) + 1 or line_start
        if not _FROM_MODULE.fullmatch(code, line, start):
            continue
        end = match.end()
        rest = code[end : end + 1000].lstrip(" \t\f")
        if rest.startswith("("):
            close = code.find(")", end)
            end = close + 1 if close >= 0 else len(code)
        else:
            while True:
                newline = code.find("\n", end)
                semicolon = code.find(";", end, newline if newline >= 0 else len(code))
                if semicolon >= 0:
                    end = semicolon
                    break
                if newline < 0:
                    end = len(code)
                    break
                if code[newline - 1] != "\\":
                    end = newline
                    break
                end = newline + 1
        spans.append((start, end))
    return spans


def _starts_word(code: str, position: int) -> bool:
    return position == 0 or not (code[position - 1].isalnum() or code[position - 1] == "_")
