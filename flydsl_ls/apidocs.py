"""Signatures and docstrings of FlyDSL's public APIs for one release, read from
``data/flydsl_docs.json.gz`` (built ahead of time by ``scripts/build_api_docs.py`` from the
released wheels). Hover reads them: nothing is imported, no FlyDSL needs to be installed,
and no shared cache can go stale under us."""

from __future__ import annotations

import gzip
import json
import threading
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources


@dataclass(frozen=True)
class ApiDoc:
    symbol: str  # canonical: fx.make_layout, mlir.rocdl.s_waitcnt
    module: str  # where FlyDSL defines it
    signature: str
    doc: str
    release: str  # the release this text is from


_LOCK = threading.Lock()  # a hover and the warm-up may load at once: load once
_DECODER = json.JSONDecoder()


@lru_cache(maxsize=1)
def _text() -> str:
    """The table's JSON (3.4 MB): a lookup decodes its symbol's entry alone. Decoding all
    of it took ~60 ms, which the first hover paid when the warm-up had found no idle
    moment; the text alone takes ~15 ms."""
    with _LOCK:
        data = resources.files("flydsl_ls.data").joinpath("flydsl_docs.json.gz").read_bytes()
        return gzip.decompress(data).decode("utf-8")


@lru_cache(maxsize=1)
def releases() -> tuple[str, ...]:
    text = _text()
    key = '"releases":['  # the table's own list (of names); its entries' lists hold numbers
    return tuple(_DECODER.raw_decode(text, text.index(key + '"') + len(key) - 1)[0])


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in version.split("."))


def nearest_release(version: str | None) -> str:
    """The tabulated release whose docs stand for ``version``: itself, else the newest one
    before it (the oldest if it is older than all); the newest for an unknown version."""
    known = releases()
    if version is None or version in known:
        return version or known[-1]
    older = [r for r in known if _key(r) <= _key(version)]
    return older[-1] if older else known[0]


@lru_cache(maxsize=512)
def _variants(symbol: str) -> list[dict]:
    """The table's entry for ``symbol``: its variants, each with the releases it holds for."""
    text = _text()
    # Only a key has a quote right after the name: in a string a quote is escaped (\").
    needle = json.dumps(symbol) + ":["
    at = text.find(needle)
    return _DECODER.raw_decode(text, at + len(needle) - 1)[0] if at != -1 else []


def lookup(symbol: str, version: str | None) -> ApiDoc | None:
    """The docs of ``symbol`` in the release standing for ``version``; None when that
    release has no such public API."""
    release = nearest_release(version)
    index = releases().index(release)
    for variant in _variants(symbol):
        if index in variant["releases"]:
            return ApiDoc(symbol, variant["module"], variant["signature"], variant["doc"], release)
    return None


def warm_up(version: str | None) -> None:
    """Load the table now (~15 ms), so that the first hover does not."""
    lookup("fx", version)
