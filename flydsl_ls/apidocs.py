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


@lru_cache(maxsize=1)
def _table() -> dict:
    data = resources.files("flydsl_ls.data").joinpath("flydsl_docs.json.gz").read_bytes()
    return json.loads(gzip.decompress(data))


@lru_cache(maxsize=1)
def releases() -> tuple[str, ...]:
    with _LOCK:
        return tuple(_table()["releases"])


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


@lru_cache(maxsize=2)
def _docs_of(release: str) -> dict[str, tuple[str, str, str]]:
    """symbol -> (module, signature, doc) in ``release``; the rest of the table is dropped."""
    with _LOCK:
        table = _table()
        index = table["releases"].index(release)
        docs = {}
        for symbol, variants in table["docs"].items():
            for variant in variants:
                if index in variant["releases"]:
                    docs[symbol] = (variant["module"], variant["signature"], variant["doc"])
                    break
        _table.cache_clear()  # one release's docs are kept, not all fourteen
        return docs


def lookup(symbol: str, version: str | None) -> ApiDoc | None:
    """The docs of ``symbol`` in the release standing for ``version``; None when that
    release has no such public API."""
    release = nearest_release(version)
    found = _docs_of(release).get(symbol)
    return ApiDoc(symbol, *found, release) if found else None


def warm_up(version: str | None) -> None:
    """Load the table now (tens of ms), so that the first hover does not."""
    lookup("fx", version)
