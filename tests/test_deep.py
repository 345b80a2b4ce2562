"""Deep recursion in a program with threads (analysis/model/deep.py)."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_under_run_with_deep_stacks_every_thread_recurses_deep_and_the_limit_stays():
    """In its own process: the setting is process-wide."""
    program = textwrap.dedent(
        """
        import sys, threading
        from concurrent.futures import ThreadPoolExecutor
        from flydsl_ls.analysis.model.deep import on_deep_stack, run_with_deep_stacks

        def down(n):
            return 0 if n == 0 else 1 + down(n - 1)

        def main():
            limit = sys.getrecursionlimit()
            with ThreadPoolExecutor(2) as pool:  # threads started later: deep too
                depths = list(pool.map(down, [50_000, 60_000]))
            deep = on_deep_stack(lambda: down(70_000))  # no thread of its own, no change
            assert sys.getrecursionlimit() == limit and threading.active_count() == 2
            return depths + [deep, limit]

        print(run_with_deep_stacks(main))
        """
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:3] == ["[50000,", "60000,", "70000,"]


def test_without_it_a_deep_walk_gets_its_own_thread_and_the_limit_comes_back():
    from flydsl_ls.analysis.model.deep import on_deep_stack

    def down(n):
        return 0 if n == 0 else 1 + down(n - 1)

    limit = sys.getrecursionlimit()
    assert on_deep_stack(lambda: down(30_000)) == 30_000
    assert sys.getrecursionlimit() == limit
