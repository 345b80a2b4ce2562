"""What does `flydsl-ls migrate FILE --verify` do to real kernel files?

Run by hand (never under pytest); it prints figures, it asserts nothing.

    ROCM_PATH=/work/rocm nice python benchmarks/migrate_audit.py --only norm/rmsnorm_kernel.py --only norm/layernorm_kernel.py

As ``scaffold_audit.py`` does, the kernel tree is copied into a scratch folder under its
package path (``kernels/``), with the repository's ``tests/`` beside it. For each file named
by ``--only``: the warning/error findings are counted, the example "Add a compile example"
writes for the file's first public builder or launcher (``scaffold.example_for``) is
inserted (``--every-target``: one for each public builder and launcher), and
``flydsl-ls migrate FILE --verify`` runs on it (a subprocess: its own compile
worker, COMPILE_ONLY, the marker's arch else ``--arch``); then the findings are counted
again. Printed per file: findings before -> after, the migration's summary line, each
kernel's verdict and resources, and whether it was written; ``--json`` keeps it all.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from flydsl_ls import config  # noqa: E402
from flydsl_ls.checker import check_source  # noqa: E402
from flydsl_ls.compile.scaffold import apply, example_for, targets  # noqa: E402


def findings(path: Path) -> int:
    source = path.read_text(encoding="utf-8")
    diagnostics = check_source(source, path, config.settings_for(path), keep_model=False).diagnostics
    return sum(1 for d in diagnostics if d.severity.value in ("warning", "error"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tree", default="/work/corpus/flydsl/kernels", help="the kernel folder")
    parser.add_argument("--package", default="kernels", help="its import path below the scratch root")
    parser.add_argument("--tests", default=None, help="the repository's tests folder (default: TREE/../tests)")
    parser.add_argument("--only", action="append", required=True, help="a file below the tree (repeatable)")
    parser.add_argument("--arch", default="gfx942")
    parser.add_argument(
        "--every-target", action="store_true",
        help="an example for every public builder and launcher the scaffold can write one for (default: the first)",
    )
    parser.add_argument("--python", default=sys.executable, help="interpreter with flydsl (default: this one)")
    parser.add_argument("--keep", default=None, help="scratch folder to use and keep")
    parser.add_argument("--json", default=None, help="write per-file results here")
    options = parser.parse_args()

    tree = Path(options.tree).resolve()
    tests = Path(options.tests) if options.tests else tree.parent / "tests"
    scratch = Path(options.keep) if options.keep else Path(tempfile.mkdtemp(prefix="migrate-audit-"))
    root = scratch / "src"
    package_dir = root / options.package
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(tree, package_dir, ignore=shutil.ignore_patterns("__pycache__"))
    if tests.is_dir():
        shutil.copytree(tests, root / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(REPO)])}
    env.setdefault("FLYDSL_LS_CACHE", str(scratch / "cache"))
    results = []
    for rel in options.only:
        path = package_dir / rel
        source = path.read_text(encoding="utf-8")
        row: dict = {"file": rel, "before": findings(path)}
        results.append(row)
        public = [t for t in targets(source) if not t.name.startswith("_")] or targets(source)
        if not public:
            row["error"] = "no builder or launcher to write an example for"
            print(f"{rel}: {row['error']}", flush=True)
            continue
        with_examples, row["examples"] = source, []
        for target in public if options.every_target else public[:1]:
            try:
                insertion = example_for(with_examples, target.name, path)
            except (LookupError, SyntaxError, ValueError) as error:
                print(f"   no example for {target.name}: {error}", flush=True)
                continue
            with_examples = apply(with_examples, insertion)
            row["examples"].append(insertion.example)
        path.write_text(with_examples, encoding="utf-8")
        proc = subprocess.run(
            [options.python, "-m", "flydsl_ls", "migrate", str(path), "--verify", "--target-arch", options.arch],
            cwd=root, env=env, capture_output=True, text=True, timeout=1800,
        )
        row.update(rc=proc.returncode, stdout=proc.stdout, stderr=proc.stderr, after=findings(path))
        row["written"] = path.read_text(encoding="utf-8") != with_examples
        print(f"== {rel}: findings {row['before']} -> {row['after']}, exit {proc.returncode}, "
              f"{'written' if row['written'] else 'not written'}", flush=True)
        for line in (proc.stderr + proc.stdout).splitlines():
            if ": FLY" in line and line.count(":") >= 3 and not line.startswith(("error", "warning")):
                continue  # the findings left, one a line: counted above
            print(f"   {line}", flush=True)
    if options.json:
        Path(options.json).write_text(json.dumps(results, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
