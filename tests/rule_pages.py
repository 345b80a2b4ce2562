"""Rule links are file: URLs of the rule pages installed with flydsl-ls."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname


def installed_page(url: str) -> Path:
    """The page a rule link opens; it exists on disk."""
    parsed = urlparse(url)
    assert parsed.scheme == "file", url
    path = Path(url2pathname(parsed.path))
    assert path.is_file(), url
    return path
