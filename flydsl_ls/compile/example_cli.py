"""``flydsl-ls example add FILE[::function] [--diff]``: write the ``# flydsl: example`` the
editor's "Add compile example" writes (``scaffold.example_for``), into the file or as a diff.

Without ``::function``: the first builder or launcher of the file that no example names yet,
public names first. Exit codes: 0 written (or shown), 2 nothing written (no such file, no
launcher found, a function that is not one, an example that cannot be written).
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

EXIT_OK, EXIT_NOTHING = 0, 2


def add_parser(subcommands) -> None:
    p = subcommands.add_parser(
        "example",
        help="write a `# flydsl: example` for a kernel builder or launcher (what the editor's lens writes)",
        description="Write a `# flydsl: example` after a kernel builder or @flyc.jit launcher, with "
        "arguments from the repository's tests or its signature, so that `flydsl-ls compile` and "
        "`--verify` can compile the file.",
    )
    actions = p.add_subparsers(dest="example_action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="insert an example after FILE's builder or launcher")
    add.add_argument("target", metavar="FILE[::function]", help="a Python file, optionally ::builder_or_launcher")
    add.add_argument("--diff", action="store_true", help="print the insertion as a diff; write nothing")
    p.set_defaults(run_example=run)


def _err(message: str) -> None:
    print(message, file=sys.stderr)


def _choose(found, name: str | None, file: str):
    """The target ``name`` (any, even one with an example), else the first without one."""
    if name is not None:
        chosen = next((t for t in found if t.name == name), None)
        if chosen is None:
            names = ", ".join(t.name for t in found) or "none"
            raise LookupError(f"{file}::{name}: not a kernel builder or @flyc.jit launcher (those of the file: {names})")
        return chosen
    free = [t for t in found if not t.has_example]
    if not free:
        raise LookupError(
            f"{file}: every builder and launcher has a `# flydsl: example` already "
            f"({', '.join(t.name for t in found)}); name one ({file}::NAME) to add another"
        )
    return ([t for t in free if not t.name.startswith("_")] or free)[0]


def run(args) -> int:
    from flydsl_ls.compile.examples import find_examples, split_target
    from flydsl_ls.compile.scaffold import apply, example_for, targets
    from flydsl_ls.compile.scaffold_reasons import no_target

    file, name = split_target(args.target)
    path = Path(file)
    if not path.is_file():
        _err(f"error: {file}: no such file")
        return EXIT_NOTHING
    with path.open(encoding="utf-8", newline="") as handle:
        source = handle.read()
    found = targets(source)
    if not found:
        reason = no_target(source)
        _err(f"{file}: {reason.message if reason else 'does not parse'}")
        return EXIT_NOTHING
    try:
        target = _choose(found, name, file)
        insertion = example_for(source, target.name, path)
    except (LookupError, SyntaxError, ValueError) as error:
        _err(f"error: {error}")
        return EXIT_NOTHING
    if "\r\n" in source:  # the file's line ends
        insertion = type(insertion)(**{**insertion.__dict__, "text": insertion.text.replace("\n", "\r\n")})
    new = apply(source, insertion)
    example = next(e for e in find_examples(new) if e.name == insertion.example)
    if args.diff:
        sys.stdout.writelines(
            difflib.unified_diff(
                source.splitlines(keepends=True), new.splitlines(keepends=True), f"a/{file}", f"b/{file}"
            )
        )
        return EXIT_OK
    with path.open("w", encoding="utf-8", newline="") as handle:
        handle.write(new)
    origin = "the arguments of a call in the tests" if insertion.from_test else "arguments chosen from the signature"
    print(f"{file}:{example.marker_line}: added `# flydsl: example` {insertion.example} for {target.name} ({origin})")
    print(f"compile it: flydsl-ls compile {file}::{insertion.example}")
    return EXIT_OK
