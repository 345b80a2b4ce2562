"""This checkout as it is on disk, copied: for tests that build or clone it (building in the
checkout itself would leave build/ and *.egg-info there; a clone would take HEAD, not the
files as they are)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def copy_checkout(destination: Path) -> Path:
    """The tracked and new (not ignored) files of the checkout, copied into ``destination``."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, destination / name)
    return destination
