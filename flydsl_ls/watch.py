"""``check --watch``: check, then check again whenever a file changes, until Ctrl-C.

Changes are found by polling (no file-system notification library is a dependency): every
``INTERVAL`` seconds, the modification time and size of each Python file under the paths
and of the ``pyproject.toml`` files that configure them. A run's own ``--fix`` writes are
part of the state it leaves, not a change; an edit made while a run is under way is.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from flydsl_ls import config

INTERVAL = float(os.environ.get("FLYDSL_LS_WATCH_INTERVAL", "0.5"))


def watch(paths: list[Path], files: Callable[[], list[Path]], check: Callable[[], int], out, writes: bool) -> int:
    """Runs ``check`` now and after each change of ``files()`` (the run's Python files) or of
    the configuration of ``paths``; only Ctrl-C ends it (KeyboardInterrupt). ``writes``:
    ``check`` writes fixes, which are not a change."""
    _say(out, "Starting linter in watch mode...")
    while True:
        state = _state(paths, files)  # before the run: a change made while it runs is one
        check()
        if writes:
            state = _state(paths, files)
        _say(out, "Watching for file changes.")
        while True:
            time.sleep(INTERVAL)
            now = _state(paths, files)
            if now != state:
                break
        config.clear_cache()  # a pyproject.toml may be what changed
        _say(out, "File change detected...")


def _say(out, text: str) -> None:
    print(f"[{datetime.now():%H:%M:%S}] {text}", file=out, flush=True)


def _state(paths: list[Path], files: Callable[[], list[Path]]) -> dict[Path, tuple[int, int]]:
    """(mtime, size) of every file a run reads: the Python files and their configuration."""
    try:
        watched = set(files())
    except config.ConfigError:
        watched = set()  # the run says what is wrong; the pyproject.toml is still watched
    for path in paths:
        folder = path.resolve() if path.is_dir() else path.resolve().parent
        watched.update(config_file for f in (folder, *folder.parents) if (config_file := f / "pyproject.toml").is_file())
    state = {}
    for path in watched:
        try:
            stat = path.stat()
        except OSError:
            continue  # gone: its absence is the change
        state[path] = (stat.st_mtime_ns, stat.st_size)
    return state
