"""ProjectIndex: callers and definers across files, found through its word index, and what
each file asked of the project (the CLI's result cache keys on it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flydsl_ls.analysis.model.project import _WORD, ProjectIndex, _words_of

HELPERS = "def reduce(m, a, b):\n    return m.arith.maximumf(a, b)\n"
KERNEL = "import flydsl.expr as fx\nfrom helpers import reduce\n\n\ndef k(a, b):\n    return reduce(fx, a, b)\n"


def make(tmp_path: Path) -> ProjectIndex:
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "kern.py").write_text(KERNEL)
    (tmp_path / "other.py").write_text("def reduce_all(x):\n    return x\n")
    return ProjectIndex(files=sorted(tmp_path.glob("*.py")))


def test_callers_and_definers_across_files(tmp_path):
    index = make(tmp_path)
    helpers = index.view(tmp_path / "helpers.py", "")
    assert helpers.module_arguments("reduce") == [{0: "flydsl.expr"}]
    assert index.view(tmp_path / "kern.py", "").definers("reduce") == [(tmp_path / "helpers.py").resolve()]
    assert helpers.definers("reduce_all") == [(tmp_path / "other.py").resolve()]  # a word, not a prefix
    asked = index.dependencies(tmp_path / "helpers.py")
    assert asked.needles == {"reduce", "def reduce_all"} and not asked.scanned
    assert index.dependencies(tmp_path / "kern.py").needles == {"def reduce"}


def test_a_file_naming_the_function_but_not_its_module_is_not_scanned_for_callers(tmp_path):
    """A caller imports the function from its module, whose name it spells: a file naming
    only the function (its own `reduce`, numpy's) is not parsed for the question."""
    make(tmp_path)
    (tmp_path / "numeric.py").write_text("import numpy as np\n\n\ndef total(x):\n    return np.add.reduce(x)\n")
    (tmp_path / "dotted.py").write_text("import flydsl.expr as fx\nimport helpers\n\n\ndef q(a, b):\n    return helpers.reduce(fx, a, b)\n")
    index = ProjectIndex(files=sorted(tmp_path.glob("*.py")))
    helpers = index.view(tmp_path / "helpers.py", "")
    assert helpers.module_arguments("reduce") == [{0: "flydsl.expr"}, {0: "flydsl.expr"}]
    assert (tmp_path / "numeric.py").resolve() not in index._scans
    assert (tmp_path / "kern.py").resolve() in index._scans


@pytest.mark.parametrize(
    "text",
    [
        "def reduce(x):\n    return x + 1_000  # x2 y_z\n",
        "éreduce = reduceé\nx—y a\u00a0b c\u2003d e\u2028f 変数=1 _private __dunder__\n",
        "tab\there\x0bvt\x0cff\x1cfs\x85nel \ud800lone surrogate\ufffdreplaced",
        "",
    ],
)
def test_the_word_index_splits_a_text_as_the_word_pattern_does(text):
    assert _words_of(text) == set(_WORD.findall(text))


def test_the_first_questions_search_the_texts_as_the_word_index_answers(tmp_path):
    """A whole word, as the index splits the text: not a prefix, a suffix, nor a part of a
    longer name (Unicode letters are word characters); then, after enough questions, the
    index is built once and answers the same."""
    texts = {
        "a.py": "def reduce(x):\n    return x\n",
        "b.py": "reduce_all = 1\npre_reduce = 2\nmy.reduce(3)\n",
        "c.py": "éreduce = 1\nx = reduceé\n# reduce in a comment\n",
        "d.py": "nothing here\n",
    }
    for name, text in texts.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    words = ["reduce", "reduce_all", "pre_reduce", "éreduce", "reduceé", "comment", "missing"]
    searched = ProjectIndex(files=sorted(tmp_path.glob("*.py")))
    answers = {w: searched._mentioning(w) for w in words}
    assert searched._words is None and searched.stats.word_indexes == 0
    assert answers["reduce"] == [(tmp_path / n).resolve() for n in ("a.py", "b.py", "c.py")]
    assert answers["reduce_all"] == [(tmp_path / "b.py").resolve()] and answers["missing"] == []
    indexed = ProjectIndex(files=sorted(tmp_path.glob("*.py")))
    indexed._word_index()
    assert {w: indexed._mentioning(w) for w in words} == answers
    for _ in range(200):
        searched._mentioning("reduce")
    assert searched.stats.word_indexes == 1 and searched._mentioning("reduce") == answers["reduce"]


def test_callers_definers_and_imports_keep_no_model_of_the_files_read(tmp_path):
    """A server reads most of its workspace for these: it keeps what it found, not models
    (175 models, 262 MB, with the 213 corpus files open, before)."""
    (tmp_path / "lib.py").write_text(
        "from flydsl.expr import arith as A\n"
        "COUNT = 0\n"
        "def bump():\n    global COUNT\n    COUNT = 1\n"
        "def _raw(v):\n    if hasattr(v, 'ir_value'):\n        return v.ir_value()\n    return v\n"
        "def big(x):\n" + "".join(f"    y{i} = x + {i}\n" for i in range(200)) + "    return x\n"
    )
    index = make(tmp_path)
    view = index.view(tmp_path / "kern.py", "")
    assert index.view(tmp_path / "helpers.py", "").module_arguments("reduce") == [{0: "flydsl.expr"}]
    assert view.definers("reduce") == [(tmp_path / "helpers.py").resolve()]
    asked = ["lib.A.maximumf", "lib._raw", "lib.big", "lib.COUNT", "lib.bump", "lib.missing"]
    answers = [view.resolve(dotted) for dotted in asked]
    assert answers[0] == "flydsl.expr.arith.maximumf"  # through the module's import
    assert answers[1] == "flydsl.expr.arith._to_raw"  # a hand-rolled unwrap keeps its body
    assert index._modules == {}  # no whole model kept for any of it
    full = index.model_of((tmp_path / "lib.py").resolve())  # what the whole model says of each name
    whole = []
    for dotted in asked:
        _, name, *rest = dotted.split(".")
        bindings = full.module_scope.bindings.get(name)
        target = full.binding_dotted(bindings[-1]) if bindings else None
        whole.append(".".join([target, *rest]) if target else None)
    assert whole == answers


def test_a_forgotten_file_is_read_again(tmp_path):
    index = make(tmp_path)
    helpers = index.view(tmp_path / "helpers.py", "")
    assert helpers.module_arguments("reduce") == [{0: "flydsl.expr"}]
    (tmp_path / "kern.py").write_text("import flydsl.expr as fx\n")
    index.forget(tmp_path / "kern.py")
    assert helpers.module_arguments("reduce") == []
    (tmp_path / "kern.py").write_text(KERNEL)
    index.forget(tmp_path / "kern.py")
    assert helpers.module_arguments("reduce") == [{0: "flydsl.expr"}]


def test_what_a_file_reads_through_the_index_is_recorded(tmp_path):
    index = make(tmp_path)
    view = index.view(tmp_path / "kern.py", "")
    view.resolve("helpers.reduce")  # a module lookup, then a read of helpers.py
    asked = index.dependencies(tmp_path / "kern.py")
    assert asked.reads == {(tmp_path / "helpers.py").resolve()} and not asked.scanned
    assert view.index is view.index  # the server keys its incremental caches on it
    view.index.model_of((tmp_path / "other.py").resolve())  # as FLY702 reads a definer
    asked = index.dependencies(tmp_path / "kern.py")
    assert asked.reads == {(tmp_path / "helpers.py").resolve(), (tmp_path / "other.py").resolve()}
    assert not asked.scanned
    view.index.all_files()  # as FLY402 reads every other file
    assert index.dependencies(tmp_path / "kern.py").scanned


def test_a_helper_called_from_another_file_has_callers_we_do_not_see(tmp_path):
    """FLY102 reads a module-level helper's parameter kind from its callers only when no other
    project file mentions the helper (it is recorded as asked, for the incremental caches)."""
    from flydsl_ls.checker import check_source
    from flydsl_ls.config import Settings

    helpers = (
        "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
        "def addr(v):\n    return arith.unwrap(v)\n"
        "def k(n: fx.Int32):\n    return addr(n)\n"
    )
    (tmp_path / "helpers.py").write_text(helpers)
    (tmp_path / "other.py").write_text("x = 1\n")
    path = tmp_path / "helpers.py"

    def fix_text() -> str:
        index = ProjectIndex(files=sorted(tmp_path.glob("*.py")))
        [finding] = [d for d in check_source(helpers, path, Settings(), index).diagnostics if d.code == "FLY102"]
        assert "addr" in index.dependencies(path).needles
        return finding.fix.edits[0].content

    assert fix_text() == "v.ir_value()"  # its one caller passes an fx.Int32
    (tmp_path / "other.py").write_text("from helpers import addr\nraw = addr(object())\n")
    assert fix_text() == "fx.as_ir_value(v)"  # a caller elsewhere: the kind is not known


def test_a_private_helper_another_file_names_keeps_its_raw_resource(tmp_path):
    """FLY201 moves a resource into a private helper of its file with the helper's accesses;
    once another project file names that helper (it may pass it a raw resource), the
    helper's parameter stays a resource, and so does what the kernel passes it."""
    from flydsl_ls.checker import check_source
    from flydsl_ls.config import Settings

    kernel = (
        "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"
        "def _zero(rsrc, idx):\n    buffer_ops.buffer_store(fx.Vector.filled(4, 0, fx.Int32), rsrc, idx * 4)\n"
        "def kernel(A, tid):\n    a = buffer_ops.create_buffer_resource(A, max_size=True)\n    _zero(a, tid)\n"
    )
    path = tmp_path / "kern.py"
    path.write_text(kernel)
    (tmp_path / "other.py").write_text("x = 1\n")

    def resource_fix():
        index = ProjectIndex(files=sorted(tmp_path.glob("*.py")))
        found = check_source(kernel, path, Settings(), index).diagnostics
        return next(d for d in found if d.code == "FLY201" and "create_buffer_resource" in d.message).fix

    assert resource_fix() is not None  # the helper's one caller is here: both move
    (tmp_path / "other.py").write_text("from kern import _zero\n_zero(object(), 0)\n")
    assert resource_fix() is None


def test_a_file_being_analysed_is_scanned_from_the_tree_its_analysis_parsed(tmp_path, monkeypatch):
    """While an analysis of kern.py runs, a question that scans kern.py (it calls a sibling's
    helper) reads the tree that analysis parsed; with another text, or after it, a parse."""
    import ast

    from flydsl_ls.analysis.model import project

    index = make(tmp_path)
    kern = (tmp_path / "kern.py").resolve()
    parsed = []
    real = project.parse
    monkeypatch.setattr(project, "parse", lambda source, *a, **k: parsed.append(source) or real(source, *a, **k))
    helpers = index.view(tmp_path / "helpers.py", "")
    with index.lending(kern, KERNEL, ast.parse(KERNEL)):
        assert helpers.module_arguments("reduce") == [{0: "flydsl.expr"}]
    assert parsed == [] and kern in index._scans and not index._lent
    index.forget(kern)
    with index.lending(kern, KERNEL + "\n", ast.parse(KERNEL)):  # not the text on disk
        assert helpers.module_arguments("reduce") == [{0: "flydsl.expr"}]
    assert parsed == [KERNEL]


def test_the_incremental_analysis_lends_the_tree_of_a_whole_parse(tmp_path, monkeypatch):
    from flydsl_ls.analysis.engine import AnalysisRequest
    from flydsl_ls.analysis.incremental import IncrementalAnalyzer

    index = make(tmp_path)
    lent = []
    real = ProjectIndex.lending
    monkeypatch.setattr(ProjectIndex, "lending", lambda self, path, source, tree: lent.append((path, source)) or real(self, path, source, tree))
    analyzer = IncrementalAnalyzer()
    request = AnalysisRequest(KERNEL, path=str(tmp_path / "kern.py"), project=index.view(tmp_path / "kern.py", ""))
    analyzer.analyze(request)
    assert lent == [((tmp_path / "kern.py").resolve(), KERNEL)] and not index._lent
    analyzer.analyze(request.with_source(KERNEL.replace("a, b)\n", "b, a)\n")))  # an edit: no whole parse
    assert len(lent) == 1


def test_definers_read_top_level_defs_from_the_text_without_parsing(tmp_path, monkeypatch):
    """A file whose calls may pass modules is parsed only when its calls are asked for."""
    from flydsl_ls.analysis.model import project

    make(tmp_path)
    (tmp_path / "passing.py").write_text("import flydsl.expr as fx\n\n\ndef scale(x):\n    return reduce(fx, x, x)\n\n\nTEXT = '''\ndef fake():\n'''\n")
    index = ProjectIndex(files=sorted(tmp_path.glob("*.py")))
    parsed = []
    real = project.parse
    monkeypatch.setattr(project, "parse", lambda source, *a, **k: parsed.append(source) or real(source, *a, **k))
    kern = index.view(tmp_path / "kern.py", "")
    assert kern.definers("scale") == [(tmp_path / "passing.py").resolve()]
    assert kern.definers("fake") == []  # a line of a string
    assert parsed == []


def test_definers_in_a_named_module_read_only_the_files_the_path_may_name(tmp_path, monkeypatch):
    """`from pkg.common import f`: the files `pkg/common.py` and `pkg/common/__init__.py`
    (any depth) are read for `def f`, no text of the project is searched, and the question
    is recorded as before (a file gaining `def f` later makes it stale)."""
    (tmp_path / "pkg" / "common").mkdir(parents=True)
    (tmp_path / "pkg" / "common.py").write_text("def f():\n    pass\n")
    (tmp_path / "pkg" / "common" / "__init__.py").write_text("def f():\n    pass\n")
    (tmp_path / "pkg" / "uncommon.py").write_text("def f():\n    pass\n")  # another module's f
    (tmp_path / "kern.py").write_text("from pkg.common import f\n")
    index = ProjectIndex(files=sorted(tmp_path.rglob("*.py")))
    monkeypatch.setattr(index, "_mentioning", lambda word: pytest.fail("searched the texts"))
    kern = index.view(tmp_path / "kern.py", "")
    assert kern.definers("f", ("pkg", "common")) == sorted(
        [(tmp_path / "pkg" / "common.py").resolve(), (tmp_path / "pkg" / "common" / "__init__.py").resolve()]
    )
    assert kern.definers("f", ("common",)) == kern.definers("f", ("pkg", "common"))
    assert kern.definers("f", ("other", "common")) == []
    assert kern.definers("g", ("pkg", "common")) == []
    assert index.dependencies(tmp_path / "kern.py").needles == {"def f", "def g"}


def test_a_lent_model_is_read_by_the_lending_thread_only_until_unlent(tmp_path):
    """A scan of a file being analysed reads the analysis's model of it: only a model of
    the lent text and statements, only in the thread that lent it (another thread's scan
    may run while the analysis disposes it), and not once it is unlent."""
    import ast
    import threading

    from flydsl_ls.analysis.model.semantic import SemanticModel
    from flydsl_ls.analysis.model.sources import package_of

    path = tmp_path / "k.py"
    path.write_text(KERNEL, encoding="utf-8")
    path, source = path.resolve(), KERNEL
    index = ProjectIndex(files=[path])
    tree = ast.parse(source)
    model = SemanticModel(source, tree, package_of(path))
    elsewhere = SemanticModel(source, ast.parse(source), package_of(path))  # the same text, other statements
    with index.lending(path, source, tree):
        index.lend_model(path, package_of(path), elsewhere)
        assert index._lent_to_scan(path, source) == (tree, None)
        index.lend_model(path, package_of(path), model)
        assert index._lent_to_scan(path, source) == (tree, model)
        assert index._lent_to_scan(path, source + "\n") == (None, None)
        seen = []
        reader = threading.Thread(target=lambda: seen.append(index._lent_to_scan(path, source)))
        reader.start()
        reader.join()
        assert seen == [(tree, None)]
        index.unlend_model(path, model)
        assert index._lent_to_scan(path, source) == (tree, None)
    assert index._lent_to_scan(path, source) == (None, None)


def test_a_model_with_a_stub_for_the_docstring_is_lent(tmp_path):
    """The analysis's module stands a chunk no rule visits (the module docstring) in as
    `pass`: its other statements are the lent tree's, so the model is lent."""
    import ast

    from flydsl_ls.analysis.model.semantic import SemanticModel
    from flydsl_ls.analysis.model.sources import package_of

    source = '"""Kernels."""\n' + KERNEL
    path = tmp_path / "k.py"
    path.write_text(source, encoding="utf-8")
    path = path.resolve()
    index = ProjectIndex(files=[path])
    tree = ast.parse(source)
    stubbed = ast.Module(body=[ast.Pass(lineno=1, col_offset=0), ast.Pass(lineno=1, col_offset=5), *tree.body[1:]], type_ignores=[])
    model = SemanticModel(source, stubbed, package_of(path))
    with index.lending(path, source, tree):
        index.lend_model(path, package_of(path), model)
        assert index._lent_to_scan(path, source) == (tree, model)
        index.unlend_model(path, model)
        del stubbed.body[-1]  # a statement that binds a name is missing: not lent
        index.lend_model(path, package_of(path), SemanticModel(source, stubbed, package_of(path)))
        assert index._lent_to_scan(path, source) == (tree, None)


def test_a_path_is_resolved_once_as_given_and_as_resolved(tmp_path, monkeypatch):
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "k.py").write_text("x = 1\n")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    index = ProjectIndex(files=[])
    given, real = tmp_path / "link" / "k.py", tmp_path.resolve() / "real"
    assert index.resolved(given) == real / "k.py"
    monkeypatch.setattr(Path, "resolve", lambda self, strict=False: pytest.fail(f"resolved {self} again"))
    assert index.resolved(given) == index.resolved(real / "k.py") == real / "k.py"
    view = index.view(given, None)
    assert view.path == real / "k.py" and view.root == real


def test_field_settings_are_every_value_given_the_field_in_tree_order():
    """A keyword argument, an assignment to an attribute of that name (once per statement,
    whatever its targets) and a class body's assignment to the name; not a plain name's."""
    import ast

    from flydsl_ls.analysis.model.project import field_settings
    from flydsl_ls.analysis.model.semantic import SemanticModel

    text = (
        "class Traits:\n    VMCNT_0 = 0x3F70\n    other: int = 1\n\n"
        "t = Traits(VMCNT_0=0x0F70)\n"
        "t.VMCNT_0 = o.VMCNT_0 = 0x1F70\n"
        "VMCNT_0 = 5\n"
        "def f(x):\n    x.VMCNT_0: int = 7\n    g(other=2, VMCNT_0=9)\n"
    )
    model = SemanticModel(text, ast.parse(text))
    # In ``ast.walk`` order: the class and the module's assignments first, then what lies deeper.
    assert [ast.unparse(v) for v in field_settings(model, "VMCNT_0")] == ["16240", "8048", "7", "3952", "9"]
    assert [ast.unparse(v) for v in field_settings(model, "other")] == ["1", "2"]
    assert field_settings(model, "missing") == []
