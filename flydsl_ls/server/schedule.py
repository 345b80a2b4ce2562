"""The server's worker threads, one thread each. The event loop hands them ``Snapshot``s,
never the session or a document (tests/server/test_snapshot.py), and stores what they return.
Created here once; a thread starts on first use, and is not joined at exit (app._exit_now).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

# Lints queue up, and a queued lint of a stale version is skipped. Inlay hints run here too,
# on purpose (inlay_hints.py): two analyses at once would race for the CPU, and for the
# recursion limit a deeply nested file raises (analysis/model/deep.py). Must stay one thread.
LINT = ThreadPoolExecutor(max_workers=1, thread_name_prefix="flydsl-lint")
# Code actions' and CodeLenses' edits and parses, and the lints of a verified fix-all or a
# migration.
ACTIONS = ThreadPoolExecutor(max_workers=1, thread_name_prefix="flydsl-actions")
# Hover's API docs table: tens of ms to load once, off the event loop.
DOCS = ThreadPoolExecutor(max_workers=1, thread_name_prefix="flydsl-docs")
