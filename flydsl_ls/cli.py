"""``flydsl-ls`` command line, in ruff's conventions.

    flydsl-ls check [PATH ...]   lint files and folders (exit 0 clean, 1 findings, 2 errors)
    flydsl-ls check - --stdin-filename k.py   lint standard input (with --fix: fixed source to stdout)
    flydsl-ls rule FLY101        print a rule's documentation
    flydsl-ls rules              list the rules
    flydsl-ls serve              run the language server on stdio
    flydsl-ls compile FILE       compile a file's `# flydsl: example` (flydsl_ls/compile/cli.py)
    flydsl-ls example add FILE   write one for its kernel builder (flydsl_ls/compile/example_cli.py)
    flydsl-ls migrate FILE[::fn] apply every fix in a kernel and its own helpers (flydsl_ls/migrate_cli.py)
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import gc
import os
import sys
from pathlib import Path
from typing import NoReturn

from flydsl_ls import __version__, baseline, cache, config, output
from flydsl_ls.actions.validate import without_broken_fixes
from flydsl_ls.analysis.model.project import ProjectIndex
from flydsl_ls.analysis.rules import ALL_RULES, lookup_rule, unknown_selectors
from flydsl_ls.files import discover, write_source
from flydsl_ls.analysis.model.sources import UnreadableFile, decode_source, read_source
from flydsl_ls.analysis.model.diagnostic import Severity
from flydsl_ls.runner import FileJob, FileResult, RunTimings, default_jobs, run_jobs, settings_key
from flydsl_ls.setting_values import arch_problem, release_problem

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a process stopped by Ctrl-C
STDIN = Path("-")
# --level: the lowest severity reported (pyright's flag; `information` adds the keep-case notes)
LEVELS = ("error", "warning", "information")
_RANKS = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFORMATION: 2, Severity.HINT: 2}


def _codes(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def _checked(problem):
    """An argparse type: the value, or a usage error (exit 2) saying what is accepted."""

    def value(text: str) -> str:
        why = problem(text)
        if why:
            raise argparse.ArgumentTypeError(why)
        return text

    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="flydsl-ls", description="Migrate legacy FlyDSL kernel code.")
    parser.add_argument("--version", action="version", version=f"flydsl-ls {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = commands.add_parser("check", help="check files and folders for legacy FlyDSL constructs")
    check.add_argument("paths", nargs="*", type=Path, help="files or folders (default: .); `-` reads standard input")
    check.add_argument(
        "--select", type=_codes, metavar="CODES",
        help="rule codes, prefixes or names to enable (comma-separated); replaces the default rules and the "
        "configured `select`/`extend-select`",
    )
    check.add_argument(
        "--extend-select", type=_codes, metavar="CODES",
        help="rule codes, prefixes or names to enable on top of the selected ones, e.g. FLY001 (off by default)",
    )
    check.add_argument("--ignore", type=_codes, metavar="CODES", help="rule codes, prefixes or names to disable (comma-separated)")
    check.add_argument(
        "--exclude", type=_codes, metavar="PATTERNS",
        help="glob patterns of files and folders to skip (comma-separated); replaces the default excludes "
        "(.git, .venv, build, ...) and the configured `exclude`",
    )
    check.add_argument(
        "--extend-exclude", type=_codes, metavar="PATTERNS",
        help="glob patterns to skip on top of the default and configured excludes (comma-separated)",
    )
    check.add_argument(
        "--stdin-filename", type=Path, metavar="PATH",
        help="read the source from standard input and check it as PATH (its settings, per-file-ignores and "
        "excludes; the name in the output); with --fix the fixed source goes to stdout and the findings to stderr",
    )
    check.add_argument(
        "--target-arch", type=_checked(arch_problem), help="AMD GPU arch for arch-dependent rules, e.g. gfx942"
    )
    check.add_argument(
        "--flydsl-version", type=_checked(release_problem), help="the project's FlyDSL release, e.g. 0.3.4.1"
    )
    check.add_argument("--fix", action="store_true", help="apply safe fixes")
    check.add_argument("--unsafe-fixes", action="store_true", help="also apply (with --fix) or show unsafe fixes")
    check.add_argument("--diff", action="store_true", help="print the fixes as a unified diff; change no file")
    check.add_argument("--fix-only", action="store_true", help="apply fixes, report nothing that remains")
    check.add_argument(
        "--verify",
        action="store_true",
        help="with --fix/--diff/--fix-only: compile each file's `# flydsl: example`s before and after, "
        "keep only the fixes that leave the IR unchanged (needs the compile extra)",
    )
    check.add_argument("--output-format", choices=output.FORMATS, default="concise")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even when findings are reported")
    check.add_argument(
        "--level", choices=LEVELS, default="warning",
        help="the lowest severity reported, as pyright's --level: `warning` (default: errors and warnings), "
        "`error`, or `information` (also the keep-case notes)",
    )
    check.add_argument(
        "--statistics", action="store_true",
        help="print only the count of findings per rule (json: a list of {code, name, count, fixable})",
    )
    check.add_argument(
        "--show-fixes", action="store_true",
        help="with --fix: list the fixes applied per file and rule; otherwise: show each finding's fix",
    )
    check.add_argument("--output-file", type=Path, metavar="PATH", help="write the report to PATH instead of stdout")
    check.add_argument(
        "--add-noqa", action="store_true",
        help="add `# noqa: CODE` to each line with a finding (merged into an existing `# noqa`); change nothing else",
    )
    check.add_argument(
        "--write-baseline", nargs="?", const="", default=None, metavar="FILE",
        help="record today's findings (warnings and errors) in the baseline (default: .flydsl-ls/baseline.json in the "
        "project folder; FILE must end in .json) and exit 0; later runs report and fail only on findings it does not hold",
    )
    check.add_argument(
        "--baseline-file", type=Path, metavar="FILE",
        help="the baseline to read (default: .flydsl-ls/baseline.json in the project folder, when it exists)",
    )
    check.add_argument("--no-baseline", action="store_true", help="report every finding, the baselined ones too")
    check.add_argument("--watch", action="store_true", help="check again whenever a file changes (Ctrl-C stops)")
    check.add_argument("-q", "--quiet", action="store_true", help="print findings only, no summary")
    check.add_argument(
        "-j", "--jobs", type=_positive, default=None,
        help="processes that check files, this one among them (default: one per core; 1: this one alone)",
    )
    check.add_argument("--no-cache", action="store_true", help="neither read nor write the result cache")
    check.add_argument(
        "--timings", action="store_true",
        help="print where the run's time went to stderr (workspace facts, each worker's files, models and idle time)",
    )
    check.add_argument(
        "--cache-dir", type=Path,
        help="where to keep the result cache (default: the `cache-dir` setting, else .flydsl-ls-cache "
        "next to the pyproject.toml, else $FLYDSL_LS_CACHE/check or $XDG_CACHE_HOME/flydsl-ls/check)",
    )

    rule = commands.add_parser("rule", help="print a rule's documentation")
    rule.add_argument("code", help="rule code or name, e.g. FLY101")

    commands.add_parser("rules", help="list every rule")

    serve = commands.add_parser("serve", help="run the language server")
    serve.add_argument(
        "--tcp", metavar="HOST:PORT",
        help="listen on TCP instead of stdio (loopback; another host needs --allow-remote)",
    )
    serve.add_argument(
        "--allow-remote", action="store_true",
        help="let --tcp listen beyond loopback: clients can run code as you, so they must "
        "send initializationOptions.token",
    )
    serve.add_argument(
        "--token-file", metavar="FILE",
        help="with --allow-remote: the token clients must send (default: $FLYDSL_LS_TOKEN, else printed at start)",
    )
    serve.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    from flydsl_ls.compile.cli import add_parser as add_compile_parser

    add_compile_parser(commands)
    from flydsl_ls.compile.example_cli import add_parser as add_example_parser

    add_example_parser(commands)
    from flydsl_ls.migrate_cli import add_parser as add_migrate_parser

    add_migrate_parser(commands)
    return parser


def console() -> NoReturn:
    """The ``flydsl-ls`` command."""
    sys.exit(main(exit_at_once=True))


def main(argv: list[str] | None = None, exit_at_once: bool = False) -> int:
    """``exit_at_once``: a check ends without freeing the models it built, which takes seconds
    after a one-process run over a large tree (4 s of 25 over the 213 corpus files)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "check":
            if exit_at_once and not (args.watch or args.verify):
                # One check, then the process ends without freeing anything: the collector
                # would only traverse what lives to the end (a sixth of a warm run over the
                # corpus). --watch and --verify go on, collecting between their checks.
                gc.disable()
            code = run_check(args)
            if exit_at_once:
                _exit_now(code)
            return code
        if args.command == "rule":
            return run_rule(args.code)
        if args.command == "rules":
            return run_rules()
        if args.command == "compile":
            return args.run_compile(args)
        if args.command == "example":
            return args.run_example(args)
        if args.command == "migrate":
            return args.run_migrate(args)
        if args.command == "serve":
            from flydsl_ls.server.app import serve

            return serve(args.tcp, args.log_level, args.allow_remote, args.token_file)
    except KeyboardInterrupt:
        _exit_now(EXIT_INTERRUPTED)
    except BrokenPipeError:
        return EXIT_ERROR
    parser.print_help()
    return EXIT_ERROR


def _exit_now(code: int) -> NoReturn:
    """Stop at once (a check's end, Ctrl-C): what was printed is flushed, the rest is left to
    the system. A normal exit first frees every model the run built."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def _error(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)


def run_check(args) -> int:
    for flag, values in (("--select", args.select), ("--extend-select", args.extend_select), ("--ignore", args.ignore)):
        unknown = unknown_selectors(values or [])
        if unknown:
            _error(f"{flag}: unknown rule selector(s): {', '.join(unknown)}")
            return EXIT_ERROR
    stdin = args.stdin_filename is not None or STDIN in args.paths
    if stdin and (args.add_noqa or args.watch or args.verify or [p for p in args.paths if p != STDIN]):
        _error("standard input is checked alone: no other path, --add-noqa, --watch or --verify")
        return EXIT_ERROR
    if args.add_noqa and (args.fix or args.diff or args.fix_only or args.watch or args.verify):
        _error("--add-noqa only adds comments: use it without --fix, --diff, --fix-only, --watch or --verify")
        return EXIT_ERROR
    if args.write_baseline is not None and (fixing_flags := [
        flag for flag, on in (("--fix", args.fix), ("--diff", args.diff), ("--fix-only", args.fix_only),
                              ("--add-noqa", args.add_noqa), ("--watch", args.watch), ("--no-baseline", args.no_baseline)) if on
    ]):
        _error(f"--write-baseline records findings: use it without {', '.join(fixing_flags)}")
        return EXIT_ERROR
    if args.write_baseline and not args.write_baseline.endswith(".json"):
        # `--write-baseline kernels/`: the path to check, not the baseline's name
        args.paths.append(Path(args.write_baseline))
        args.write_baseline = ""
    paths = args.paths or [Path(".")]
    args.baseline_path = _baseline_path(args, paths)
    overrides = dict(
        select=args.select,
        extend_select=args.extend_select,
        ignore=args.ignore,
        exclude=args.exclude,
        extend_exclude=args.extend_exclude,
        target_arch=args.target_arch,
        flydsl_version=args.flydsl_version,
    )
    fixing = args.fix or args.diff or args.fix_only
    if args.verify and not fixing:
        _error("--verify checks fixes: use it with --fix, --diff or --fix-only")
        return EXIT_ERROR
    with _report_to(args, stdin and fixing) as out:
        if stdin:
            return _check_stdin(args, overrides, fixing, out)
        if args.watch:
            from flydsl_ls.watch import watch

            return watch(
                paths,
                lambda: _discover(paths, overrides),
                lambda: _check_paths(args, paths, overrides, fixing, out),
                out,
                writes=args.fix or args.fix_only,
            )
        return _check_paths(args, paths, overrides, fixing, out)


def _baseline_path(args, paths: list[Path]) -> Path | None:
    """The baseline file the run reads (or writes); None with --no-baseline."""
    if args.no_baseline:
        return None
    if args.write_baseline:
        return Path(args.write_baseline)
    if args.baseline_file is not None:
        return args.baseline_file
    anchor = args.stdin_filename or next((p for p in paths if p != STDIN), Path("."))
    try:
        root = config.settings_for(anchor.resolve()).root
    except config.ConfigError:
        root = None  # said when the files' settings are read
    return baseline.default_path(root)


@contextlib.contextmanager
def _report_to(args, to_stderr: bool):
    """Where the report goes: ``--output-file``, else stdout (stderr when stdout carries the
    fixed source of standard input, as ruff does)."""
    if args.output_file is not None:
        with open(args.output_file, "w", encoding="utf-8") as out:
            yield out
    else:
        yield sys.stderr if to_stderr else sys.stdout


def _check_paths(args, paths, overrides, fixing, out) -> int:
    missing = [p for p in paths if not p.exists()]
    for path in missing:
        _error(f"{path}: no such file or directory")
    if args.add_noqa:
        return _add_noqa_run(args, paths, missing, overrides)
    verifier = None
    if args.verify:
        verifier = _Verifier.create()
        if verifier is None:
            return EXIT_ERROR
    try:
        if verifier is None:
            return _check_run(args, paths, missing, overrides, fixing, out)
        return _check_files(args, paths, missing, overrides, fixing, verifier, out)
    finally:
        if verifier is not None:
            verifier.close()


def _discover(paths: list[Path], overrides: dict) -> list[Path]:
    """The Python files under ``paths``, each folder's settings (with the command line's
    excludes on top) deciding what is skipped."""
    return list(discover([p for p in paths if p.exists()], lambda folder: config.settings_for(folder).with_overrides(**overrides)))


def _no_files() -> int:
    """Every path excluded (or holding no Python file): as ruff, a warning and success."""
    print("warning: No Python files found under the given path(s)", file=sys.stderr)
    return EXIT_CLEAN


def _check_stdin(args, overrides, fixing, out) -> int:
    """``check -`` / ``--stdin-filename``: the source read from standard input, checked as
    that file; with --fix/--fix-only the fixed source goes to stdout, whole."""
    from flydsl_ls.checker import check_source, fix_source

    name = args.stdin_filename
    raw = sys.stdin.buffer.read()
    try:
        source = decode_source(raw)
    except UnreadableFile as error:
        _error(f"{name or '-'}: {error}")
        return EXIT_ERROR
    path = (name or STDIN).resolve()  # without a name: as a file `-` of the current folder
    try:
        (settings,) = _settings_of([path], overrides)
    except config.ConfigError as error:
        _error(str(error))
        return EXIT_ERROR
    shown = name if name is not None else STDIN
    write_back = args.fix or args.fix_only
    if name is not None and settings.is_excluded(path):
        if write_back:
            sys.stdout.write(source)
        return _no_files()
    project = ProjectIndex(files=[])
    fixed: dict[str, int] = {}
    text = source
    if fixing:
        outcome = fix_source(source, path, settings, unsafe=args.unsafe_fixes, project=project)
        fixed = dict(outcome.applied)
        for rejected in outcome.rejected:
            _error(f"{shown}: fix not applied, it would not parse: {rejected}")
        text = outcome.text
        if args.diff:
            name_text = str(shown)
            sys.stdout.writelines(
                difflib.unified_diff(
                    source.splitlines(keepends=True), text.splitlines(keepends=True),
                    fromfile=f"a/{name_text}", tofile=f"b/{name_text}",
                )
            )
        else:
            sys.stdout.write(text)
            sys.stdout.flush()
    result = check_source(text, path, settings, project)
    diagnostics = result.diagnostics
    if not fixing and result.model is not None:
        diagnostics = without_broken_fixes(result.model.index, diagnostics, result.model.tree)  # as check_path does
    failed = len(result.internal_errors)
    for problem in result.internal_errors:
        _error(f"{shown}: internal error: {problem}")
    entries = [(shown, d) for d in ([] if args.diff else diagnostics)]
    args.texts = {shown: text}  # for the baseline: the text checked, not a file
    return _finish(args, entries, fixed, 1, failed, [], out, {shown: fixed})


def _settings_of(files: list[Path], overrides: dict) -> list[config.Settings]:
    """Each file's settings, warning once about each problem in them."""
    warned: set[str] = set()
    found = []
    for path in files:
        settings = config.settings_for(path).with_overrides(**overrides)
        for warning in settings.warnings:
            if warning not in warned:
                warned.add(warning)
                print(f"warning: {warning}", file=sys.stderr)
        found.append(settings)
    return found


def _report_failures(path: Path, error: str | None, internal_errors: list[str]) -> int:
    """Say why a file was skipped, or where its analysis broke; how many failures that is."""
    if error is not None:
        _error(f"{output._display(path)}: {error}; skipped")
        return 1
    for problem in internal_errors:
        _error(f"{output._display(path)}: internal error: {problem}")
    return len(internal_errors)


def _check_run(args, paths, missing, overrides, fixing, out) -> int:
    """check, --fix, --diff, --fix-only: files checked in parallel, results reused from the
    cache (plain check only); output and fixes in the files' order, as one worker gives."""
    files, all_settings, results = _run_files(args, paths, overrides, fixing)
    if files is None:
        return EXIT_ERROR
    if not files and not missing:
        return _no_files()
    fixed: dict[str, int] = {}
    by_file: dict[Path, dict[str, int]] = {}
    final: dict[Path, FileResult] = {}
    for attempt in range(_FIX_PASSES if fixing and not args.diff else 1):
        outside = _settle_other_files(args, files, all_settings, results) if fixing else {}
        writes: list[tuple[Path, str]] = []
        for path, result in zip(files, results):
            if result is None:
                continue  # not checked again in this pass
            final[path] = result
            if result.error is not None:
                continue
            for code, count in result.applied.items():
                fixed[code] = fixed.get(code, 0) + count
                by_file.setdefault(path, {})[code] = by_file.get(path, {}).get(code, 0) + count
            for rejected in result.rejected:
                _error(f"{output._display(path)}: fix not applied, it would not parse: {rejected}")
            if result.fixed is not None:
                if args.diff:
                    _print_diff(path, result.source, result.fixed)
                else:
                    writes.append((path, result.fixed))
        for path, (before, after) in outside.items():  # edited by fixes of the run's files
            if args.diff:
                _print_diff(path, before, after)
            else:
                writes.append((path, after))
        # Written once every file is checked: no worker reads a file half-fixed.
        for path, text in writes:
            write_source(path, text)
        # A fix may enable another in a file that reads this one (a shim left unused by its
        # importers' fixes): those files are fixed again, against the written texts.
        again = _reading(files, final, writes, outside) if writes else set()
        if not again:
            break
        _, _, results = _run_files(args, paths, overrides, fixing, only=again, files=files, all_settings=all_settings)
    entries: list[output.Entry] = []
    checked = failed = 0
    for path in files:
        result = final[path]
        failed += _report_failures(path, result.error, result.internal_errors)
        if result.error is None:
            checked += 1
            by_file.setdefault(path, {})
            entries.extend((path, d) for d in result.diagnostics)
    return _finish(args, entries, fixed, checked, failed, missing, out, by_file)


_FIX_PASSES = 3  # a run's fixes, then up to two more for the files that read fixed ones


def _reading(files: list[Path], results: dict[Path, FileResult], writes, outside) -> set[int]:
    """The run files (indices) whose analysis read a file this pass rewrote: a module it
    imports, a file found by a word that the rewrite removed or added, or any file (the
    workspace-wide questions: who else names this shim)."""
    changed = {path.resolve(): text for path, text in writes}
    before = {path.resolve(): results[path].source for path in files if path.resolve() in changed and results[path].source}
    before.update({path.resolve(): old for path, (old, _) in outside.items()})
    again = set()
    for i, path in enumerate(files):
        consulted = results[path].consulted
        if consulted is None or results[path].error is not None:
            continue
        others = {p for p in changed if p != path.resolve()}
        if not others:
            continue
        if consulted.scanned or consulted.reads & others or any(
            needle in changed[p] or needle in before.get(p, "") for p in others for needle in consulted.needles
        ):
            again.add(i)
    return again


def _print_diff(path: Path, before: str, after: str) -> None:
    name = output._display(path)
    sys.stdout.writelines(
        difflib.unified_diff(
            before.splitlines(keepends=True), after.splitlines(keepends=True), fromfile=f"a/{name}", tofile=f"b/{name}"
        )
    )


def _settle_other_files(args, files, all_settings, results) -> dict[Path, tuple[str, str]]:
    """Merge the edits the files' fixes made to other files (``Fix.elsewhere``), in the
    files' order. A file whose fixes edited one of them differently from an earlier file
    is fixed again here, on the texts as edited so far (its conflicting fixes are then
    stale and skipped whole). A run file edited so is fixed and checked again from its
    edited text, its result replaced. Returns the edited files outside the run:
    path -> (text as read, text after)."""
    from flydsl_ls.actions.elsewhere import OtherFiles, read_or_none
    from flydsl_ls.checker import fix_source

    edited: dict[str, tuple[str, str]] = {}
    project = None
    for i, (path, result) in enumerate(zip(files, results)):
        if result is None or not result.others:
            continue
        if any(p in edited and edited[p][1] != after for p, (_, after) in result.others.items()):
            project = project or ProjectIndex(files=files)
            others = OtherFiles(lambda p: edited[p][1] if p in edited else read_or_none(p))
            outcome = fix_source(result.source, path, all_settings[i], args.unsafe_fixes, project, others)
            result.fixed = outcome.text if outcome.text != result.source else None
            result.applied, result.rejected = dict(outcome.applied), list(outcome.rejected)
            result.others = {p: (edited[p][0] if p in edited else before, after) for p, (before, after) in others.changed().items()}
            result.diagnostics = [] if args.diff else _checked_again(path, outcome.text, all_settings[i], project)
        for p, (before, after) in result.others.items():
            edited[p] = (edited[p][0] if p in edited else before, after)
    if not edited:
        return {}
    project = project or ProjectIndex(files=files)
    in_run = {str(path.resolve()): i for i, path in enumerate(files)}
    outside = {}
    for p, (before, after) in edited.items():
        i = in_run.get(p)
        if i is not None and results[i] is None:  # a later pass that did not check it again
            results[i] = FileResult()
        if i is None or results[i].error is not None:
            outside[Path(p)] = (before, after)
            continue
        # as if checked again: its own fixes on the edited text, then what remains
        outcome = fix_source(after, files[i], all_settings[i], args.unsafe_fixes, project)
        result = results[i]
        result.source, result.fixed = before, outcome.text
        result.applied, result.rejected = dict(outcome.applied), list(outcome.rejected)
        result.diagnostics = [] if args.diff else _checked_again(files[i], outcome.text, all_settings[i], project)
    return outside


def _checked_again(path: Path, text: str, settings, project) -> list:
    from flydsl_ls.checker import check_source

    return check_source(text, path, settings, project).diagnostics


def _run_files(args, paths, overrides, fixing, only: set[int] | None = None, files=None, all_settings=None):
    """The run's files, their settings and results (None, None, None after a configuration
    error, said on stderr). ``only``: check just these of ``files`` again (the others' results
    are None), against the whole project."""
    if files is None:
        try:
            files = _discover(paths, overrides)
            all_settings = _settings_of(files, overrides)
        except config.ConfigError as error:
            _error(str(error))
            return None, None, None
    jobs = [
        FileJob(path, settings, fix=fixing, unsafe=args.unsafe_fixes, diff=args.diff)
        for path, settings in zip(files, all_settings)
    ]
    results: list[FileResult | None] = [None] * len(files)
    stores = _lookup_cache(args, files, all_settings, results) if not fixing and not args.no_cache else None
    missed = [i for i, result in enumerate(results) if result is None and (only is None or i in only)]
    timings = RunTimings()
    done = run_jobs([jobs[i] for i in missed], files, args.jobs or default_jobs(), timings)
    if args.timings:
        _print_timings(timings, done, len(files) - len(missed))
    for i, result in zip(missed, done):
        results[i] = result
    if stores is not None:
        _store_cache(stores, missed, files, results)
    return files, all_settings, results


def _add_noqa_run(args, paths, missing, overrides) -> int:
    """--add-noqa: every file checked (in parallel, as ``check``), then a ``# noqa`` added
    for each line's findings; says how many on stderr, as ruff does."""
    from flydsl_ls.actions.add_noqa import add_noqa

    files, _, results = _run_files(args, paths, overrides, fixing=False)
    if files is None:
        return EXIT_ERROR
    if not files and not missing:
        return _no_files()
    added = failed = 0
    for path, result in zip(files, results):
        failed += _report_failures(path, result.error, result.internal_errors)
        if result.error is not None or not result.diagnostics:
            continue
        try:
            source = read_source(path)
        except UnreadableFile as error:
            failed += _report_failures(path, str(error), [])
            continue
        outcome = add_noqa(source, result.diagnostics)
        for line in outcome.skipped:
            _error(f"{output._display(path)}:{line + 1}: no `# noqa` added: the line ends inside a string or continues")
        if outcome.text != source:
            write_source(path, outcome.text)
        added += outcome.added
    print(f"Added {added} noqa directive{'s' if added != 1 else ''}.", file=sys.stderr)
    return EXIT_ERROR if missing or failed else EXIT_CLEAN


def _print_timings(timings: RunTimings, done: list[FileResult], cached: int) -> None:
    """``--timings``: one ``timings:`` line per fact, to stderr."""

    def say(text: str) -> None:
        print(f"timings: {text}", file=sys.stderr)

    say(f"{len(done)} files checked, {cached} from the cache, {timings.workers} worker(s)")
    if timings.facts is not None:
        facts = timings.facts
        say(f"workspace facts: built 1 time(s) for the run, {len(facts.texts)} files, {facts.seconds:.2f} s")
    by_worker: dict[int, list] = {}
    for result in done:
        if result.timing is not None:
            by_worker.setdefault(result.timing.worker, []).append(result.timing)
    rebuilt = sum(max(t.index.word_indexes for t in times) for times in by_worker.values())
    say(f"workspace facts: built {rebuilt} more time(s) in the workers")
    if timings.scans:
        say(
            f"module calls: scanned once for the run, {timings.scans} files ({timings.passing} pass modules), "
            f"{timings.scan_seconds:.2f} s"
        )
    wall = timings.end - timings.start
    for n, times in enumerate(sorted(by_worker.values(), key=lambda ts: ts[0].start), 1):
        busy = sum(t.end - t.start for t in times)
        last = max(t.index.models for t in times)
        seconds = max(t.index.model_seconds for t in times)
        idle = timings.end - max(t.end for t in times)
        say(
            f"worker {n}: {len(times)} files, busy {busy:.2f} s of {wall:.2f} s, "
            f"{last} module models built ({seconds:.2f} s), idle at the end {idle:.2f} s"
        )


def _lookup_cache(args, files, all_settings, results) -> dict:
    """Fill ``results`` with what the cache still holds; returns what to store the rest with."""
    snapshot = cache.Snapshot(files)
    caches: dict[Path, cache.ResultCache] = {}
    keys: dict[int, tuple[cache.ResultCache, str]] = {}
    for i, (path, settings) in enumerate(zip(files, all_settings)):
        digest = snapshot.hashes[path.resolve()]
        if digest is None:
            continue  # unreadable: the check says why
        folder = args.cache_dir or settings.cache_dir or cache.default_folder(settings.root)
        store = caches.get(folder)
        if store is None:
            store = caches[folder] = cache.ResultCache(folder)
        key = cache.file_key(path.resolve(), digest, settings_key(path, settings))
        results[i] = store.get(path.resolve(), key, snapshot)
        keys[i] = (store, key)
    return {"snapshot": snapshot, "keys": keys, "caches": caches}


def _store_cache(stores: dict, missed: list[int], files: list[Path], results) -> None:
    snapshot = stores["snapshot"]
    for i in missed:
        result = results[i]
        if i not in stores["keys"] or result.error is not None or result.internal_errors:
            continue  # not a result to trust again
        store, key = stores["keys"][i]
        asked = result.consulted
        dependencies = snapshot.dependencies(asked.reads, asked.probes, asked.needles, asked.scanned)
        store.put(files[i].resolve(), key, dependencies, FileResult(diagnostics=result.diagnostics))
    for store in stores["caches"].values():
        store.save()


def _check_files(args, paths, missing, overrides, fixing, verifier, out) -> int:
    """--verify: one file after the other, in this process (one compile worker)."""
    from flydsl_ls.actions.fix_verify import VerifyAborted
    from flydsl_ls.checker import check_path

    entries: list[output.Entry] = []
    fixed: dict[str, int] = {}
    by_file: dict[Path, dict[str, int]] = {}
    checked = failed = 0
    try:
        files = _discover(paths, overrides)
        if not files and not missing:
            return _no_files()
        # Sibling modules and cross-file callers are read from the same run's files.
        project = ProjectIndex(files=files)
        for path, settings in zip(files, _settings_of(files, overrides)):
            report = check_path(path, settings, project)
            failed += _report_failures(path, report.error, report.internal_errors)
            if report.error is not None:
                continue
            checked += 1
            diagnostics = report.diagnostics
            if fixing:
                file_fixed = by_file[path] = {}
                diagnostics = _fix_file(path, report.source, settings, args, file_fixed, project, verifier)
                for code, count in file_fixed.items():
                    fixed[code] = fixed.get(code, 0) + count
            entries.extend((path, d) for d in diagnostics)
    except config.ConfigError as error:
        _error(str(error))
        return EXIT_ERROR
    except VerifyAborted as error:
        _error(f"--verify: {error}")
        return EXIT_ERROR
    return _finish(args, entries, fixed, checked, failed, missing, out, by_file)


def _finish(args, entries, fixed, checked, failed, missing, out, by_file) -> int:
    """Print what was found and fixed to ``out``; the exit code. ``by_file``: the fixes
    applied per file and rule (for --show-fixes)."""
    total_fixed = sum(fixed.values())
    if args.diff or args.fix_only:
        entries = []
    if args.write_baseline is not None:
        return _write_baseline(args, entries, by_file, failed, missing, out)
    entries, baselined, gone = _baselined(args, entries, by_file)
    shown = [entry for entry in entries if _RANKS[entry[1].severity] <= LEVELS.index(args.level)]
    hidden, entries = len(entries) - len(shown), shown
    concise = args.output_format in ("concise", "grouped")  # text for people: the summary follows
    if args.statistics:
        text = output.statistics(entries, args.output_format, args.unsafe_fixes)
    elif concise and args.show_fixes and not (args.fix or args.fix_only):
        text = output.concise_with_fixes(entries)
    else:
        text = output.render(args.output_format, entries)
    if text and not (args.diff and concise and not args.statistics):
        print(text, file=out)
    if concise or (args.statistics and args.output_format != "json"):
        if args.show_fixes and (args.fix or args.fix_only) and total_fixed:
            print(f"\n{output.fix_summary(by_file)}\n", file=out)
        if not args.quiet:
            if args.diff:
                print(f"Would fix {total_fixed} error{'s' if total_fixed != 1 else ''}.", file=sys.stderr)
            elif args.fix_only:
                print(f"Fixed {total_fixed} error{'s' if total_fixed != 1 else ''}.", file=out)
            else:
                _print_summary(
                    entries, checked, errors=failed + len(missing), fixed=total_fixed if args.fix else None, out=out,
                    hidden="; ".join(filter(None, (_hidden_text(hidden, args.level), _baseline_text(baselined, gone)))),
                )
    out.flush()
    if checked == 0 and (failed or missing):
        return EXIT_ERROR
    if missing:
        return EXIT_ERROR
    if args.diff:
        return EXIT_FINDINGS if total_fixed else EXIT_CLEAN
    if any(not _is_note(d) for _, d in entries) and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _is_note(diagnostic) -> bool:
    """A keep-case note (information, or a hint): shown, but neither an error nor a failure."""
    return diagnostic.severity in (Severity.INFORMATION, Severity.HINT)


class _Verifier:
    """``--verify``: one compile worker for the whole run, started on the first file that
    has both fixes and examples."""

    def __init__(self) -> None:
        self.service = None

    @classmethod
    def create(cls) -> _Verifier | None:
        """None (after saying why) when torch, flydsl or ld.lld is missing."""
        from flydsl_ls.compile.toolchain import find_toolchain

        toolchain = find_toolchain()
        if not toolchain.ok:
            _error("--verify compiles the files' examples, but " + toolchain.problem() + "\nno file was changed")
            return None
        return cls()

    def compile(self, path: Path, line_info: bool = False):
        from flydsl_ls.compile.service import CompileService

        if self.service is None:
            self.service = CompileService()
        return lambda text, example, arch: self.service.compile(path, example, arch, source=text, line_info=line_info)

    def close(self) -> None:
        if self.service is not None:
            self.service.close()

    def verify(self, path: Path, source: str, settings, args, project):
        """The file's fixes that keep its examples' IR unchanged; reports the rest on stderr."""
        from flydsl_ls.actions.fix_verify import NO_EXAMPLES, UNVERIFIABLE, verify_fixes
        from flydsl_ls.checker import linter

        lint = linter(path, settings, project)
        outcome = verify_fixes(
            source,
            lint,
            self.compile(path),
            unsafe=args.unsafe_fixes,
            default_arch=settings.target_arch,
            compile_lines=self.compile(path, line_info=True),
        )
        name = output._display(path)
        for dropped in outcome.dropped:
            fix = dropped.fix
            # the line in the file as written (or, with --diff, as it is)
            line, column = (fix.line, fix.column) if args.diff else (dropped.line_after, dropped.column_after)
            print(f"{name}:{line}:{column}: {fix.code} fix not applied: it {dropped.reason}", file=sys.stderr)
        if outcome.status == NO_EXAMPLES or outcome.status == UNVERIFIABLE:
            print(f"warning: {outcome.summary(name)}", file=sys.stderr)
        elif outcome.verified:
            for note in outcome.notes:
                print(f"warning: {name}: example {note}; verified with the others", file=sys.stderr)
            if not args.quiet:
                print(outcome.summary(name), file=sys.stderr)
        return outcome


def _fix_file(path: Path, source: str, settings, args, fixed: dict[str, int], project, verifier=None):
    """Fix one file (or print its diff); returns the diagnostics that remain."""
    from flydsl_ls.checker import check_source, fix_source

    if verifier is not None:
        outcome = verifier.verify(path, source, settings, args, project)
    else:
        outcome = fix_source(source, path, settings, unsafe=args.unsafe_fixes, project=project)
    for code, count in outcome.applied.items():
        fixed[code] = fixed.get(code, 0) + count
    for rejected in outcome.rejected:
        _error(f"{output._display(path)}: fix not applied, it would not parse: {rejected}")
    if outcome.text == source:
        return check_source(source, path, settings, project).diagnostics
    if args.diff:
        name = output._display(path)
        sys.stdout.writelines(
            difflib.unified_diff(
                source.splitlines(keepends=True),
                outcome.text.splitlines(keepends=True),
                fromfile=f"a/{name}",
                tofile=f"b/{name}",
            )
        )
        return []
    write_source(path, outcome.text)
    return check_source(outcome.text, path, settings, project).diagnostics


def _file_lines(args, path: Path) -> list[str]:
    """The lines of a checked file as checked (standard input's text, or the file's after any fix)."""
    given = getattr(args, "texts", {})
    if path in given:
        return baseline.lines_of(given[path])
    try:
        return baseline.lines_of(read_source(path))
    except (OSError, UnreadableFile):
        return []


def _baselined(args, entries, by_file) -> tuple[list[output.Entry], int, int]:
    """The findings the baseline does not hold; how many it held; how many of its entries
    for the checked files are gone (fixed since it was written)."""
    path = args.baseline_path
    if path is None or not (args.baseline_file or path.is_file()) or args.diff or args.fix_only:
        return entries, 0, 0
    try:
        recorded = baseline.load(path)
    except baseline.BaselineError as error:
        _error(str(error))
        raise SystemExit(EXIT_ERROR) from error
    by_path: dict[Path, list] = {}
    for file, d in entries:
        by_path.setdefault(file, []).append(d)
    kept: list[output.Entry] = []
    held = 0
    for file, found in by_path.items():
        new, known = recorded.split(file, found, _file_lines(args, file))
        held += sum(1 for d in known)
        kept.extend((file, d) for d in new)
    kept_ids = {id(d) for _, d in kept}
    entries = [(file, d) for file, d in entries if id(d) in kept_ids]  # in the report's order
    checked = {recorded.name_of(file) for file in by_file}
    gone = max(0, recorded.count(checked) - held)
    return entries, held, gone


def _baseline_text(held: int, gone: int) -> str:
    parts = []
    if held:
        parts.append(f"{held} in the baseline not shown")
    if gone:
        parts.append(f"{gone} baselined finding{'s' if gone != 1 else ''} gone: `--write-baseline` records it")
    return "; ".join(parts)


def _write_baseline(args, entries, by_file, failed, missing, out) -> int:
    """--write-baseline: the checked files' findings replace theirs in the baseline."""
    path = args.baseline_path
    try:
        recorded = baseline.load(path)
    except baseline.BaselineError:
        recorded = baseline.Baseline(path)  # rewritten whole
    by_path: dict[Path, list] = {file: [] for file in by_file}
    for file, d in entries:
        by_path.setdefault(file, []).append(d)
    for file, found in by_path.items():
        recorded.record(file, found, _file_lines(args, file))
    recorded.write()
    total = recorded.count()
    if not args.quiet:
        print(
            f"Wrote {total} finding{'s' if total != 1 else ''} in {len(recorded.files)} file{'s' if len(recorded.files) != 1 else ''} "
            f"to {path}.",
            file=out,
        )
    return EXIT_ERROR if missing or failed else EXIT_CLEAN


def _hidden_text(hidden: int, level: str) -> str:
    """What ``--level`` left out, for the summary ("" when nothing)."""
    if not hidden:
        return ""
    if level == "warning":  # the default: only the keep-case notes
        return f"{hidden} note{'s' if hidden != 1 else ''} not shown: `--level information` shows {'them' if hidden != 1 else 'it'}"
    return f"{hidden} finding{'s' if hidden != 1 else ''} below `--level {level}` not shown"


def _print_summary(
    entries: list[output.Entry], checked: int, errors: int = 0, fixed: int | None = None, out=None, hidden: str = ""
) -> None:
    """``hidden``: what ``--level`` left out (the keep-case notes by default), said, not listed."""
    out = out or sys.stdout
    notes = sum(1 for _, d in entries if _is_note(d))
    also = f" and {notes} note{'s' if notes != 1 else ''} (constructs the guides keep)" if notes else ""
    hidden = f"; {hidden}" if hidden else ""
    if fixed:
        remaining = len(entries) - notes
        print(f"Found {fixed + remaining} error{'s' if fixed + remaining != 1 else ''} ({fixed} fixed, {remaining} remaining){also}{hidden}.", file=out)
        if not entries:
            return
    if not entries:
        files = f"{checked} file{'s' if checked != 1 else ''} checked"
        files += hidden
        if errors:  # never "All checks passed!" when something could not be checked
            print(f"No findings ({files}; {errors} error{'s' if errors != 1 else ''} reported above).", file=out)
        else:
            print(f"All checks passed! ({files})", file=out)
        return
    fixable = sum(1 for _, d in entries if d.fix and d.fix.applicability.value == "safe")
    unsafe = sum(1 for _, d in entries if d.fix and d.fix.applicability.value == "unsafe")
    count = len(entries) - notes
    noun = "error" if count == 1 else "errors"
    if not fixed:
        print(f"Found {count} {noun}{also} in {checked} file{'s' if checked != 1 else ''} checked{hidden}.", file=out)
    if fixable:
        print(f"[*] {fixable} fixable with the `--fix` option", end="", file=out)
        print(f" ({unsafe} hidden fixes can be enabled with the `--unsafe-fixes` option)." if unsafe else ".", file=out)
    elif unsafe:
        print(f"No fixes available ({unsafe} hidden fixes can be enabled with the `--unsafe-fixes` option).", file=out)


def run_rule(code: str) -> int:
    from flydsl_ls.ruledocs import render

    rule = lookup_rule(code)
    if rule is None:
        _error(f"unknown rule `{code}`; `flydsl-ls rules` lists them")
        return EXIT_ERROR
    print(render(rule), end="")
    return EXIT_CLEAN


def run_rules() -> int:
    for rule in ALL_RULES:
        opt_in = "" if rule.default else "  [not in the default set: --extend-select " + rule.code + "]"
        print(f"{rule.code}  {rule.name:<24} {rule.summary}  [fix: {rule.fix_safety}]{opt_in}")
    return EXIT_CLEAN
