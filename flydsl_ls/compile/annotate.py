"""``flydsl-ls compile --annotate``: the kernel's source lines with the instructions each
one became under it, and a per-line summary (instructions, memory ops, waits, MFMA)."""

from __future__ import annotations

from pathlib import Path

from flydsl_ls.compile.lines import SourceLine

CONTEXT = 2  # source lines shown around the annotated ones; longer gaps are cut


def annotate(kernel_name: str, lines: list[SourceLine], total: int, read=None, display=str) -> str:
    """The text for one kernel: its files in order, each from its first annotated line to its
    last. ``total``: the kernel's instruction count (those on no line are counted apart).
    ``read``: path -> text (default: the file on disk); ``display``: path -> how to name it."""
    read = read or _read
    placed = sum(line.own for line in lines)  # each instruction once, at its own line
    out = [f"== {kernel_name}: {total} instructions, {placed} on {len(lines)} source lines"
           f"{f', {total - placed} on no line' if total > placed else ''}"]
    by_file: dict[str, list[SourceLine]] = {}
    for line in lines:
        by_file.setdefault(line.file, []).append(line)
    for file, annotated in by_file.items():
        source = (read(file) or "").splitlines()
        out.append(f"-- {display(file)}")
        table = {line.line: line for line in annotated}
        shown = sorted({n for line in annotated for n in range(line.line - CONTEXT, line.line + CONTEXT + 1)})
        shown = [n for n in shown if 1 <= n <= max(len(source), max(table))]
        last = None
        for number in shown:
            if last is not None and number > last + 1:
                out.append("     ...")
            last = number
            text = source[number - 1] if number <= len(source) else ""
            out.append(f"{number:5d} | {text}")
            entry = table.get(number)
            if entry is not None:
                out.append(f"      |   {_summary(entry)}")
                out.extend(f"      |     {instruction}" for instruction in entry.isa)
    return "\n".join(out) + "\n"


def _summary(line: SourceLine) -> str:
    counts = line.summary()
    through = f" ({line.through_calls} through calls made here)" if line.through_calls else ""
    parts = [f"{counts['instructions']} instruction{'s' if counts['instructions'] != 1 else ''}{through}"]
    parts += line.counts()
    return "[" + ", ".join(parts) + "]"


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
