"""LSP text positions from first principles: lines, UTF-16 columns, code-point offsets.

Shared by the stdio fuzz test (``tests/server/test_fuzz.py``) and the latency benchmark
(``benchmarks/bench_latency.py``). It imports nothing from ``flydsl_ls``: the fuzz test
checks the server's ranges against it, independently of ``flydsl_ls.analysis.model.text``, and
the benchmark speaks only the protocol.
"""

from __future__ import annotations


def split_lines(text: str) -> list[str]:
    """Lines with their terminators; only \\n, \\r\\n and \\r end a line in LSP
    (``str.splitlines`` knows more)."""
    lines, start, i = [], 0, 0
    while i < len(text):
        ch = text[i]
        if ch == "\n" or ch == "\r":
            end = i + 2 if text.startswith("\r\n", i) else i + 1
            lines.append(text[start:end])
            start = i = end
            continue
        i += 1
    lines.append(text[start:])
    return lines


def content(line: str) -> str:
    """A line of ``split_lines`` without its terminator."""
    return line[:-2] if line.endswith("\r\n") else line[:-1] if line.endswith(("\r", "\n")) else line


def utf16_len(s: str) -> int:
    """UTF-16 code units."""
    return sum(2 if ord(ch) > 0xFFFF else 1 for ch in s)


def lsp_position(text: str, offset: int) -> tuple[int, int]:
    """(line, UTF-16 column) of a code-point offset that is not inside a line terminator."""
    base = 0
    for number, line in enumerate(split_lines(text)):
        if offset <= base + len(content(line)):
            return number, utf16_len(text[base:offset])
        base += len(line)
    raise AssertionError(f"offset {offset} beyond the text")
