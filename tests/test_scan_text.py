"""scan_text: what the project index's scan reads from a file's text without parsing it.
Its answers must cover the syntax tree's: a file cleared by ``may_pass_modules`` has no
call that ``_calls_that_may_pass_modules`` finds, and ``top_level_functions`` equals the
tree's top-level ``def``s."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from flydsl_ls.analysis.model import project
from flydsl_ls.analysis.model.project import Scanned, _calls_that_may_pass_modules, scan_source
from flydsl_ls.analysis.model.scan_text import code_text, may_pass_modules, top_level_functions
from flydsl_ls.analysis.model.semantic import nodes_under

ROOT = Path(__file__).resolve().parent.parent

PASSING = {
    "attribute": "import flydsl.expr as fx\nf(x, fx.arith)\n",
    "keyword": "from flydsl.expr import arith\nf(x, k=arith)\n",
    "import alias": "import flydsl.expr.arith as A\nf(A)\n",
    "alias in a parenthesized import": "from flydsl.expr import (\n    vector,\n    arith as A,\n)\nf(A)\n",
    "argument before a comment": "import flydsl.expr as fx\nA = fx.arith\nf(\n    A  # the module\n)\n",
    "value over lines": "import flydsl.expr as fx\nA = (\n    fx\n    .arith\n)\nf(A)\n",
    "chained targets": "import flydsl.expr as fx\nA = B = fx.arith\nf(A)\n",
    "renames": "import flydsl.expr as fx\nA = fx.arith\nB = A\nC = (B)\nf(C)\n",
    "call in an f-string": "import flydsl.expr as fx\ns = f\"{g(fx.arith)}\"\n",
    "continued line": "from flydsl.expr import arith\nf(x, \\\n  arith)\n",
    "call after an import on its line": "import os; from flydsl.expr import arith; f(arith)\n",
    "CRLF": "import flydsl.expr as fx\r\nA = fx.arith\r\nf(A)\r\n",
    "lone CR": "import flydsl.expr as fx\rA = fx.arith\rf(A)\r",
    "decorator factory": "from flydsl.expr import arith\n@register(arith)\ndef f():\n    pass\n",
    "renames written backwards": (
        "import flydsl.expr as fx\n\n\ndef g():\n"
        + "".join(f"    a{i + 1} = a{i}\n" for i in reversed(range(200)))
        + "    a0 = fx.arith\n    f(a200)\n"
    ),
}

CLEARED = {
    "imports": "from flydsl.expr import arith, vector\nimport flydsl.expr.arith, os\nfrom m import (\n    scf,\n)\n",
    "parameters": "def helper(x, arith):\n    return arith.addi(x, x)\n",
    "string and comment": "s = 'f(arith)'\nt = \"\"\"\ng(vector)\n\"\"\"\n# h(scf)\n",
    "values of modules": "import flydsl.expr as fx\nx = fx.arith.constant(1)\nf(x)\n",
    "attribute call": "import flydsl.expr as fx\nf(fx.arith.addi(a, b))\n",
}


@pytest.mark.parametrize("name", PASSING)
def test_a_call_that_may_pass_a_module_is_seen_in_the_text(name):
    source = PASSING[name]
    assert _calls_that_may_pass_modules(nodes_under(ast.parse(source))), "the case must have such a call"
    assert may_pass_modules(code_text(source))


@pytest.mark.parametrize("name", CLEARED)
def test_text_without_such_a_call_is_cleared(name):
    source = CLEARED[name]
    assert not _calls_that_may_pass_modules(nodes_under(ast.parse(source)))
    assert not may_pass_modules(code_text(source))


def test_top_level_functions_are_the_trees():
    source = (
        '"""Module.\n\ndef in_docstring():\n"""\n'
        "import flydsl.expr as fx\n\n"
        "@fx.kernel\ndef kernel():\n    def inner():\n        pass\n\n"
        "async def fetch():\n    pass\n\n"
        "class Shape:\n    def method(self):\n        pass\n\n"
        'TEMPLATE = f"""\ndef in_fstring_{1}():\n"""\n'
        "def \\\n  continued(): pass\n"
    )
    assert top_level_functions(code_text(source)) == {"kernel", "fetch", "continued"}
    assert top_level_functions(code_text(source)) == _tree_functions(source)


def test_only_a_file_that_may_pass_a_module_is_parsed(monkeypatch):
    parsed = []
    real = project.parse
    monkeypatch.setattr(project, "parse", lambda source, *a, **k: parsed.append(source) or real(source, *a, **k))
    cleared = "def reduce(x):\n    return x\nf(reduce)\n"
    assert scan_source(cleared, Path("a.py")) == Scanned([], frozenset({"reduce"}))
    assert parsed == []
    passing = "from flydsl.expr import arith\nfrom .helpers import reduce\ndef g():\n    reduce(arith)\n"
    assert scan_source(passing, Path("b.py")) == Scanned([("helpers.reduce", {0: "flydsl.expr.arith"})], frozenset({"g"}))
    assert parsed == [passing]
    # one that does not parse passes nothing, and has the defs its lines start
    broken = "from flydsl.expr import arith\ndef g(:\n    pass\ndef h():\n    f(arith)\n"
    assert scan_source(broken, Path("c.py")) == Scanned([], frozenset({"g", "h"}))


@pytest.mark.parametrize("folder", ["flydsl_ls", "tests", "examples"])
def test_the_text_covers_the_tree_on_real_files(folder):
    """Every Python file of this repository (our kernels' fixtures, rules, tests): a
    file with a candidate call is never cleared, and the defs agree."""
    files = sorted((ROOT / folder).rglob("*.py"))
    assert files
    cleared = 0
    for path in files:
        source = path.read_text(encoding="utf-8")
        code = code_text(source)
        assert top_level_functions(code) == _tree_functions(source), path
        if _calls_that_may_pass_modules(nodes_under(ast.parse(source))):
            assert may_pass_modules(code), path
        else:
            cleared += not may_pass_modules(code)
    assert cleared  # the filter clears files: it is not "parse everything"


def _tree_functions(source: str) -> frozenset[str]:
    tree = ast.parse(source)
    return frozenset(s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)))


NESTED = {
    "shadowed in a sibling": (
        "from flydsl.expr import arith\nfrom .helpers import helper\n\n\ndef builder():\n"
        "    def unrelated():\n        arith = 1\n        return arith\n\n    helper(arith)\n"
    ),
    "rebound through nonlocal": (
        "from flydsl.expr import arith, vector\nfrom .helpers import helper\n\n\ndef builder():\n"
        "    m = arith\n\n    def rebind():\n        nonlocal m\n        m = vector\n\n    rebind()\n    helper(m)\n"
    ),
    "in a decorator": (
        "from flydsl.expr import arith\nfrom .helpers import helper\n\n\n@helper(arith)\ndef kernel():\n    pass\n"
    ),
}


@pytest.mark.parametrize("name", NESTED)
def test_a_scan_reads_calls_as_the_whole_files_model_does(name):
    """The scan builds its model on the tree cut to the functions holding the calls
    (``project._around``): the calls it finds are the whole tree's."""
    source = NESTED[name]
    assert scan_source(source, Path("k.py")).calls == _whole_file_calls(source)


def test_the_cut_tree_gives_the_whole_trees_calls_on_real_files():
    found = 0
    for path in sorted((ROOT / "flydsl_ls").rglob("*.py")) + sorted((ROOT / "tests").rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        if _calls_that_may_pass_modules(nodes_under(ast.parse(source))):
            found += 1
            assert scan_source(source, path).calls == _whole_file_calls(source, path), path
    assert found


def _whole_file_calls(source: str, path: Path = Path("k.py")) -> list:
    from flydsl_ls.analysis.model.semantic import SemanticModel
    from flydsl_ls.analysis.model.sources import package_of

    tree = ast.parse(source)
    return project._calls_in(SemanticModel(source, tree, package_of(path)), _calls_that_may_pass_modules(nodes_under(tree)))


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_a_global_statement_is_seen_whatever_the_line_endings(newline):
    source = newline.join(["x = 1", "def f():", "    global x", "    x = 2", ""])
    assert project._binds_elsewhere(source)
    assert not project._binds_elsewhere("# global memory" + newline + "global_load(x)" + newline)
    assert project._binds_elsewhere("if a: global x" + newline)
    assert project._binds_elsewhere("y = 1; \f nonlocal x" + newline)
    assert project._binds_elsewhere("global \\" + newline + "    x")
    assert not project._binds_elsewhere("y.global x" + newline + "global" + newline + "xglobal y")


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_the_defs_starting_a_line_whatever_the_line_endings(newline):
    source = newline.join(["def f(x):", "    def inner(): pass", "async  def g():", "  async def h(): pass", "undef k", "x = 1; def_ = 2", "def\tm(): pass", ""])
    assert project._line_def_names(source) == {"f", "g", "m"}
    assert project._line_def_names("def") == frozenset()


@pytest.mark.parametrize("name", NESTED)
def test_a_scan_reading_a_lent_model_finds_what_it_finds_alone(name):
    """The analysis lends its own model of the file (``ProjectIndex.lend_model``): the
    scan reads its nodes and bindings instead of cutting the tree and building a model."""
    from flydsl_ls.analysis.model.semantic import SemanticModel
    from flydsl_ls.analysis.model.sources import package_of

    source, path = NESTED[name], Path("k.py")
    tree = ast.parse(source)
    lent = SemanticModel(source, tree, package_of(path))
    assert scan_source(source, path, tree, lent).calls == scan_source(source, path).calls == _whole_file_calls(source)
