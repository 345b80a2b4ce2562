"""``flydsl-ls migrate PATH[::function] [--verify] [--diff]``: migrate one kernel (or every
kernel of the file) with all its fixes, unsafe ones included (actions/migrate.py).

``--verify`` compiles the file's ``# flydsl: example`` s before and after in the compile
worker (actions/migrate_verify.py), reports per GPU kernel whether its IR and ISA changed and
its resources before -> after, and writes nothing when an example no longer compiles or a
kernel's LDS or scratch grows. ``--diff`` prints a unified diff and writes nothing.

Exit codes, as ``check``'s: 0 nothing left to migrate in scope, 1 findings left in scope (or,
with ``--diff``, changes to show; or a migration refused by ``--verify``), 2 an error (no
such file or function, a file that does not parse, ``--verify`` without a compiler or an
example).
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def add_parser(subcommands) -> None:
    p = subcommands.add_parser(
        "migrate",
        help="apply every fix (unsafe included) in a kernel and the helpers only it uses",
        description="Apply every fix, unsafe ones included, whose finding lies in FUNCTION (a @flyc.kernel, "
        "a @flyc.jit function or a kernel builder, nested functions included) or in the module-level helpers "
        "only it uses, up to a fixpoint; without ::FUNCTION, in every kernel of the file.",
    )
    p.add_argument("target", metavar="PATH[::function]", help="a Python file, optionally ::function_name")
    p.add_argument(
        "--verify", action="store_true",
        help="compile the file's `# flydsl: example`s before and after; report per kernel and write nothing "
        "if a kernel no longer compiles or its LDS or scratch grows (needs the compile extra)",
    )
    p.add_argument("--diff", action="store_true", help="print the migration as a unified diff; change no file")
    p.add_argument(
        "--target-arch", type=_arch, metavar="ARCH",
        help="arch for arch-dependent rules and for the examples without one on their marker (default: the "
        "`target-arch` setting, else gfx942 for the compiles)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="print only the findings left and the verdicts")
    p.set_defaults(run_migrate=run)


def _arch(text: str) -> str:
    import argparse

    from flydsl_ls.setting_values import arch_problem

    why = arch_problem(text)
    if why:
        raise argparse.ArgumentTypeError(why)
    return text


def _error(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)


def run(args) -> int:
    from flydsl_ls import config, output
    from flydsl_ls.actions.elsewhere import OtherFiles
    from flydsl_ls.actions.migrate import UnknownFunction, migrate
    from flydsl_ls.analysis.model.project import ProjectIndex, package_root
    from flydsl_ls.analysis.model.sources import UnreadableFile, package_of, read_source
    from flydsl_ls.checker import linter
    from flydsl_ls.compile.examples import split_target
    from flydsl_ls.files import write_source

    file, name = split_target(args.target)
    path = Path(file)
    if not path.is_file():
        _error(f"{file}: no such file")
        return EXIT_ERROR
    try:
        source = read_source(path)
        settings = config.settings_for(path).with_overrides(target_arch=args.target_arch)
    except (UnreadableFile, config.ConfigError) as error:
        _error(f"{file}: {error}")
        return EXIT_ERROR
    shown = output._display(path)
    # The project (for helpers of other modules a fix migrates too): the file's package's
    # root. --verify compiles this file only, so it applies no fix that edits another.
    project = ProjectIndex(roots=[package_root(path.resolve(), package_of(path))])
    others = None if args.verify else OtherFiles()
    try:
        migration = migrate(source, linter(path, settings, project), name, others)
    except UnknownFunction as error:
        _error(f"{shown}: {error}")
        return EXIT_ERROR
    except SyntaxError as error:
        _error(f"{shown}:{error.lineno}: does not parse: {error.msg}")
        return EXIT_ERROR
    _summary(shown, name, migration, args.quiet)
    for rejected in migration.outcome.rejected:
        _error(f"{shown}: fix not applied, it would not parse: {rejected}")

    refused = False
    if args.verify and migration.changed:
        status = _verify(path, shown, migration, settings.target_arch)
        if status is None:
            return EXIT_ERROR
        refused = not status
    changed = [(path, source, migration.text)] if migration.changed else []
    changed += [(Path(p), before, after) for p, (before, after) in (others.changed() if others else {}).items()]
    if args.diff:
        for where, before, after in changed:
            name_shown = output._display(where)
            sys.stdout.writelines(
                difflib.unified_diff(
                    before.splitlines(keepends=True), after.splitlines(keepends=True),
                    fromfile=f"a/{name_shown}", tofile=f"b/{name_shown}",
                )
            )
    elif not refused:
        for where, _before, after in changed:
            write_source(where, after)
            if not args.quiet:
                print(f"{output._display(where)}: written", file=sys.stderr)
    left = migration.before if refused else migration.after
    report = output.concise([(path, d) for d in left]) if not args.diff else ""
    if report:
        print(report)
    if args.diff:
        return EXIT_FINDINGS if migration.changed else EXIT_CLEAN
    return EXIT_FINDINGS if left else EXIT_CLEAN


def _summary(shown: str, name: str | None, migration, quiet: bool) -> None:
    if quiet:
        return
    scope = migration.scope
    roots = ", ".join(k.name for k in scope.roots)
    helpers = f" and {len(scope.helpers)} helper{'s' if len(scope.helpers) != 1 else ''} only "
    helpers += f"{'it uses' if len(scope.roots) == 1 else 'they use'} ({', '.join(scope.helpers)})" if scope.helpers else ""
    where = f"{shown}::{name}" if name else shown
    if migration.count:
        per_rule = ", ".join(f"{code} {n}" for code, n in sorted(migration.applied.items()))
        did = f"{migration.count} fix{'es' if migration.count != 1 else ''} ({per_rule})"
    else:
        did = "nothing to fix"
    print(
        f"{where}: {did} in {roots}{helpers if scope.helpers else ''}; "
        f"findings in scope {len(migration.before)} -> {len(migration.after)}",
        file=sys.stderr,
    )


def _verify(path: Path, shown: str, migration, arch: str | None) -> bool | None:
    """Compile before and after and print the verdicts: True to write, False refused, None
    when it could not run (said why)."""
    from flydsl_ls.actions.fix_verify import VerifyAborted
    from flydsl_ls.actions.migrate_verify import CHECKED, NO_EXAMPLES, not_compiled, verify_migration
    from flydsl_ls.compile.service import CompileService
    from flydsl_ls.compile.examples import find_examples
    from flydsl_ls.compile.toolchain import find_toolchain

    if not find_examples(migration.source):
        _error(f"{shown}: --verify compiles the file's `# flydsl: example`s, and it has none; nothing written")
        print(no_example_hint(migration.source, path), file=sys.stderr)
        return None
    toolchain = find_toolchain()
    if not toolchain.ok:
        _error("--verify compiles the file's examples, but " + toolchain.problem() + "\nnothing written")
        return None
    try:
        with CompileService() as service:
            check = verify_migration(
                migration.source, migration.text,
                lambda text, example, arch_: service.compile(path, example, arch_, source=text),
                default_arch=arch,
                compile_lines=lambda text, example, arch_: service.compile(path, example, arch_, source=text, line_info=True),
            )
    except VerifyAborted as error:
        _error(f"--verify: {error}; nothing written")
        return None
    if check.status == NO_EXAMPLES:  # cannot happen: checked above
        return None
    for line in check.lines() + [unreached_note(not_compiled(migration))]:
        if line:
            print(f"{shown}: {line}" if not line.startswith("    ") else line)
    if check.status != CHECKED:
        if not check.problems:
            print(f"{shown}: not written: no example compiles before the migration", file=sys.stderr)
        return False
    return True


def unreached_note(names: list[str]) -> str:
    if not names:
        return ""
    return f"note: no example reaches {', '.join(names)}: the fixes there were not compiled (add an example for it)"


def no_example_hint(source: str, path: Path | None) -> str:
    """What to do about a file without an example: the scaffold's example for its first
    kernel builder or launcher, to paste, or how to write one."""
    from flydsl_ls.compile.scaffold import example_for, targets

    found = targets(source)
    public = [t for t in found if not t.name.startswith("_")] or found
    for target in public:
        try:
            insertion = example_for(source, target.name, path)
        except (LookupError, SyntaxError, ValueError):
            continue
        return (
            f"add a compile example (the editor's \"Add compile example\" CodeLens on `{target.name}` inserts it), "
            f"e.g. this one after line {insertion.line}:\n\n{insertion.text}"
        )
    return (
        "add a compile example: mark a module-level function `# flydsl: example` that takes a device string "
        "and returns (jit_fn, args) (docs/compile.md)"
    )
