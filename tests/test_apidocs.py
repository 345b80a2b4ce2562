"""Hover's API docs table (flydsl_ls/data/flydsl_docs.json.gz): which release stands for a
project's version, and that the table says what the installed FlyDSL's own code says."""

from __future__ import annotations

import inspect
import json
from importlib.metadata import version

import pytest

from flydsl_ls import apidocs
from tests.compiler import require


def test_a_tabulated_release_stands_for_itself_and_others_for_the_newest_before_them():
    releases = apidocs.releases()
    assert releases[0] == "0.2.0" and "0.3.1" in releases and "0.5.0" in releases
    assert apidocs.nearest_release("0.3.1") == "0.3.1"
    assert apidocs.nearest_release("0.3.3") == "0.3.2"
    assert apidocs.nearest_release("9.0") == releases[-1]
    assert apidocs.nearest_release("0.1.0") == "0.2.0"
    assert apidocs.nearest_release(None) == releases[-1]


def test_an_api_is_documented_only_in_the_releases_that_have_it():
    assert apidocs.lookup("fx.max", "0.3.1") is None  # fx.max arrived later
    found = apidocs.lookup("fx.max", "0.5.0")
    assert found is not None and found.release == "0.5.0" and "maximumf" in found.doc
    layout = apidocs.lookup("fx.make_layout", "0.3.1")
    assert layout.signature == "def make_layout(shape, stride)" and layout.module.startswith("flydsl.expr")
    raw = apidocs.lookup("mlir.rocdl.s_waitcnt", "0.5.0")
    assert raw is not None and raw.signature.startswith("def s_waitcnt(bitfield")
    method = apidocs.lookup("fx.Vector.from_elements", "0.5.0")
    assert method is not None and method.signature.startswith("def from_elements(elements")  # no self
    assert apidocs.lookup("fx.no_such_api", "0.5.0") is None



def test_a_symbol_quoted_in_a_docstring_is_not_taken_for_its_entry(monkeypatch):
    """Each lookup decodes its symbol's entry alone, found in the table's text."""
    table = {
        "generator": "test",
        "releases": ["0.1", "0.2"],
        "docs": {
            "fx.a": [{"releases": [0, 1], "module": "m", "signature": "def a()", "doc": 'as {"fx.b":[1]} or ,"fx.b":['}],
            "fx.b": [
                {"releases": [0], "module": "m", "signature": "def b(x)", "doc": ""},
                {"releases": [1], "module": "m", "signature": "def b(x, y)", "doc": ""},
            ],
        },
    }
    monkeypatch.setattr(apidocs, "_text", lambda: json.dumps(table, separators=(",", ":")))
    for cached in (apidocs.releases, apidocs._variants):
        cached.cache_clear()
    try:
        assert apidocs.releases() == ("0.1", "0.2")
        assert apidocs.lookup("fx.b", "0.1").signature == "def b(x)"
        assert apidocs.lookup("fx.b", "0.2").signature == "def b(x, y)"
        assert apidocs.lookup("fx.a", "0.2").doc.startswith("as {")
        assert apidocs.lookup("fx.c", "0.2") is None
    finally:
        for cached in (apidocs.releases, apidocs._variants):
            cached.cache_clear()


@pytest.mark.parametrize("module", ["flydsl.expr", "flydsl.expr.rocdl", "flydsl.compiler"])
def test_the_table_has_the_installed_releases_signatures(module):
    require("comparing the docs table with the installed FlyDSL")
    import importlib

    installed = version("flydsl")
    if installed not in apidocs.releases():
        pytest.fail(f"FlyDSL {installed} is installed but not tabulated: run scripts/build_api_docs.py")
    canon = {"flydsl.expr": "fx", "flydsl.expr.rocdl": "fx.rocdl", "flydsl.compiler": "flyc"}[module]
    namespace = importlib.import_module(module)
    compared = 0
    for name, value in vars(namespace).items():
        if name.startswith("_") or not inspect.isfunction(value):
            continue
        found = apidocs.lookup(f"{canon}.{name}", installed)
        assert found is not None, f"{canon}.{name}"
        real = inspect.signature(inspect.unwrap(value))
        assert found.signature.startswith(f"def {name}("), found
        for parameter in real.parameters.values():
            assert parameter.name in found.signature, (found.signature, str(real))
        doc = (inspect.getdoc(value) or "").strip()
        assert found.doc == (doc if len(doc) <= 1500 else doc[:1500].rstrip() + "\n..."), name
        compared += 1
    assert compared >= 8
