"""The FlyDSL API-by-release table (flydsl_ls/data/flydsl_api.json) and its resolver
(flydsl_ls/apitable.py; the table is built by scripts/build_api_table.py from the wheels)."""

import importlib.metadata
import importlib.util
import json
from importlib import resources
from pathlib import Path

import pytest

from flydsl_ls.apitable import Resolver, sources_from_dir


def _key(version):
    return tuple(int(p) for p in version.split("."))


@pytest.fixture(scope="module")
def table():
    text = resources.files("flydsl_ls.data").joinpath("flydsl_api.json").read_text("utf-8")
    return json.loads(text)


def since(table, name):
    """The first release, asserting the API stays from then on."""
    have = table["apis"][name]
    assert have, f"{name} is in no release"
    start = table["releases"].index(have[0])
    assert have == table["releases"][start:], f"{name} is not contiguous: {have}"
    return have[0]


# -- (b) schema ----------------------------------------------------------------------------


def test_schema(table):
    assert set(table) == {"generator", "releases", "apis"}
    assert table["generator"] == "scripts/build_api_table.py"
    releases = table["releases"]
    assert releases == sorted(releases, key=_key) and len(set(releases)) == len(releases)
    assert releases[0] == "0.2.0" and releases[-1] == "0.5.0"
    for name, have in table["apis"].items():
        assert isinstance(name, str) and isinstance(have, list)
        assert set(have) <= set(releases), name
        assert have == sorted(have, key=_key), name


def test_releases_on_pypi(table):
    assert table["releases"] == [
        "0.2.0", "0.2.1", "0.2.2", "0.2.3", "0.2.4", "0.3.0", "0.3.1", "0.3.2", "0.3.4",
        "0.3.4.1", "0.4.0", "0.4.1", "0.4.2", "0.5.0",
    ]


def test_generator_names_are_tabulated(table):
    import runpy

    script = Path(__file__).resolve().parent.parent / "scripts" / "build_api_table.py"
    names = runpy.run_path(str(script), run_name="build_api_table")["NAMES"]
    assert set(names) == set(table["apis"]), "rerun scripts/build_api_table.py"


# -- (c) facts (DESIGN.md "FlyDSL API by release", checked against the wheels) ---------------


def test_design_facts(table):
    assert since(table, "fx.rocdl.s_waitcnt(keywords)") == "0.3.0"
    assert since(table, "fx.to_llvm_ptr") == "0.3.0"
    assert since(table, "fx.Pointer.llvm_ptr") == "0.3.0"
    # DESIGN.md says 0.3.4.1; the 0.3.4 wheel already defines it (rocdl/cdna5.py:212, in
    # cdna5.__all__); 0.3.2 has only make_tdm_atom.
    assert since(table, "fx.rocdl.cdna5.make_tiled_tdm_atom") == "0.3.4"
    assert since(table, "fx.rocdl.cdna5.tdm_partition") == "0.3.4"
    # DESIGN.md says 0.2.4; 0.2.2's typing.py defines it (l.62) and lists it in __all__.
    assert since(table, "fx.as_ir_value") == "0.2.2"
    for name in (
        "fx.SharedAllocator", "fx.rocdl.make_buffer_tensor", "fx.make_tiled_copy_tv",
        "fx.make_layout_tv", "fx.rocdl.sched_barrier", "fx.Vector.filled",
        "fx.memref_load_vec", "fx.inttoptr", "fx.Vector", "fx.Vector.from_elements",
        "fx.make_view", "fx.get_iter", "fx.make_layout", "fx.make_copy_atom",
        "fx.make_mma_atom", "fx.copy", "fx.gemm", "fx.rocdl.MFMA", "fx.rocdl.WMMA",
        "fx.rocdl.BufferCopyLDS32b", "fx.rocdl.BufferCopyLDS128b", "fx.struct", "fx.Array",
        "fx.range_constexpr", "fx.const_expr", "fx.thread_idx", "fx.block_idx",
        "fx.rocdl.s_waitcnt", "fx.Index", "fx.Int32", "fx.Float32",
    ):
        assert since(table, name) == "0.2.0", name
    # DESIGN.md lists these as present from 0.2.0; on fx's top level they are not: 0.2.0/0.2.1's
    # flydsl/expr/__init__.py star-imports neither .arith nor .math (only fx.arith.maxnumf, the
    # raw builder, exists there), 0.2.2 adds `from .math import *`, arith.__all__ gains maxnumf in
    # 0.2.3 and max/min/ceildiv in 0.3.2.
    assert since(table, "fx.fma") == since(table, "fx.absf") == "0.2.2"
    assert since(table, "fx.maxnumf") == "0.2.3"
    assert since(table, "fx.ceildiv") == since(table, "fx.max") == since(table, "fx.min") == "0.3.2"
    assert since(table, "fx.minnumf") == "0.3.4"
    # fx.rocdl.sched_barrier is the raw ODS builder (no int masks) until the 0.3.1 wrapper.
    assert since(table, "fx.rocdl.sched_barrier(wrapper)") == "0.3.1"
    assert since(table, "fx.gpu.shuffle_xor") == "0.3.0"


def test_deprecated_apis_still_present(table):
    # api_stability.md section 3 declares removal in v0.4; every one is still in 0.5.0.
    for name in (
        "fx.get", "fx.index_cast", "fx.constant_vector", "fx.tdm_ops",
        "fx.rocdl.BufferCopyLDS64b", "fx.Numeric.maximumf", "fx.Numeric.minimumf",
        "fx.Numeric.shrui", "fx.Numeric.addf", "fx.Numeric.exp2", "fx.Numeric.shuffle_xor",
    ):
        assert table["apis"][name][-1] == "0.5.0", name
    assert since(table, "fx.index_cast") == since(table, "fx.constant_vector") == "0.2.2"


def test_lazily_bound_submodule(table):
    # fx.rocdl.tdm_ops is an attribute only once something imported the submodule (e.g.
    # fx.tdm_ops); `from flydsl.expr.rocdl import tdm_ops` always works.
    assert table["apis"]["fx.rocdl.tdm_ops"] == []
    assert since(table, "flydsl.expr.rocdl.tdm_ops") == "0.2.0"


# -- (a) the 0.5.0 column against the installed FlyDSL ----------------------------------------


def _installed():
    try:
        spec = importlib.util.find_spec("flydsl")  # finds the package, imports nothing
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return None, None
    try:
        version = importlib.metadata.version("flydsl")
    except importlib.metadata.PackageNotFoundError:
        return None, None
    return Path(list(spec.submodule_search_locations)[0]).parent, version


def test_table_matches_installed_flydsl(table):
    site, version = _installed()
    if site is None:
        pytest.skip("flydsl is not installed")
    if version not in table["releases"]:
        pytest.skip(f"installed flydsl {version} is not a tabulated release")
    resolver = Resolver(sources_from_dir(site))
    column = {name for name, have in table["apis"].items() if version in have}
    computed = {name for name in table["apis"] if resolver.exists(name)}
    assert computed == column
    assert not resolver.warnings


# -- the resolver on small trees -------------------------------------------------------------


TREE = {
    "flydsl/__init__.py": "",
    "flydsl/expr/__init__.py": (
        "from typing import TYPE_CHECKING\n"
        "from .a import *\n"
        "from .b import *\n"
        "from . import m as m\n"
        "if TYPE_CHECKING:\n"
        "    from . import hidden as hidden\n"
        "_LAZY = {'back': '.back', 'old': '.back.sub'}\n"
        "def __getattr__(name):\n"
        "    module_name = _LAZY.get(name)\n"
        "    if module_name is None:\n"
        "        raise AttributeError(name)\n"
        "    import importlib\n"
        "    module = importlib.import_module(module_name, __name__)\n"
        "    globals()[name] = module\n"
        "    return module\n"
    ),
    "flydsl/expr/a.py": (
        "__all__ = ['f', 'K']\n"
        "__all__ += ['g']\n"
        "def f(x, *, vmcnt=None, lgkmcnt=None): ...\n"
        "def g(): ...\n"
        "def private_but_public(): ...\n"
        "class Base:\n"
        "    def inherited(self): ...\n"
        "class Meta(type):\n"
        "    def from_meta(cls): ...\n"
        "class K(Base, metaclass=Meta):\n"
        "    def method(self): ...\n"
        "    attr = 1\n"
        "K.patched = g\n"
    ),
    "flydsl/expr/b.py": "def h(): ...\n_hidden = 1\nfrom .a import g as g_alias\n",
    "flydsl/expr/m.py": "def exp2(): ...\n",
    "flydsl/expr/m_shadow.py": "",
    "flydsl/expr/hidden.py": "",
    "flydsl/expr/back.py": "def shadowed_by_package(): ...\n",
    "flydsl/expr/back/__init__.py": (
        "from .raw import *\n"
        "from .universal import *\n"
        "from . import arch as arch\n"
        "for _n in ('dropped', 'also_dropped'):\n"
        "    globals().pop(_n, None)\n"
        "del _n\n"
        "_raw_w = globals().get('w')\n"
        "def w(mask, **kw): ...\n"
    ),
    "flydsl/expr/back/raw.py": "def w(mask, *, loc=None): ...\ndef dropped(): ...\n",
    "flydsl/expr/back/universal.py": (
        "from . import leaked_module\nfrom .leaked_module import thing\ndef also_dropped(): ...\n"
    ),
    "flydsl/expr/back/leaked_module.py": "thing = 1\n",
    "flydsl/expr/back/arch.py": "__all__ = ['op']\ndef op(): ...\n",
    "flydsl/expr/back/sub.py": "def lazily_loaded(): ...\n",
}


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("fx.f", True),
        ("fx.g", True),  # __all__ += [...]
        ("fx.private_but_public", False),  # not in a's __all__
        ("fx.h", True),  # b has no __all__: every public name
        ("fx.g_alias", True),
        ("fx._hidden", False),
        ("fx.m.exp2", True),
        ("fx.m_shadow", False),  # a submodule nobody imported is no attribute
        ("fx.hidden", False),  # TYPE_CHECKING-only import
        ("fx.K.method", True),
        ("fx.K.attr", True),
        ("fx.K.inherited", True),
        ("fx.K.from_meta", True),
        ("fx.K.patched", True),
        ("fx.K.missing", False),
        ("fx.back.shadowed_by_package", False),  # back/ (package) wins over back.py
        ("fx.back.w", True),
        ("fx.back.dropped", False),  # globals().pop in a loop over a literal tuple
        ("fx.back.also_dropped", False),
        ("fx.back._n", False),  # del
        ("fx.back.leaked_module", True),  # universal has no __all__: module objects leak
        ("fx.back.thing", True),
        ("fx.back.arch.op", True),
        ("fx.back.sub", False),  # not imported by back/__init__
        ("flydsl.expr.back.sub", True),  # ... but importable
        ("fx.old.lazily_loaded", True),  # lazy table value '.back.sub'
        ("fx.nope", False),
        ("fx.f(vmcnt=, lgkmcnt=)", True),
        ("fx.f(expcnt=)", False),
        ("fx.g(vmcnt=)", False),
    ],
)
def test_resolver(name, expected):
    resolver = Resolver(TREE)
    assert resolver.exists(name) is expected
    assert not resolver.warnings


def test_lazy_import_binds_submodule_on_parent():
    from flydsl_ls.apitable import _MISSING

    resolver = Resolver(TREE)
    assert not resolver.exists("fx.back.sub")  # each exists() starts from a fresh import
    # lookup() continues in the current state: fx.old imports flydsl.expr.back.sub, which
    # binds it on its package, as Python does
    assert resolver.lookup("fx.old") is not _MISSING
    assert resolver.lookup("fx.back.sub") is not _MISSING
    assert not resolver.exists("fx.back.sub")  # and a fresh start forgets it again


def test_wrapper_form():
    from flydsl_ls import apitable

    tree = {
        "flydsl/__init__.py": "",
        "flydsl/expr/__init__.py": "from . import rocdl as rocdl\n",
        "flydsl/expr/rocdl.py": (
            "from .._mlir.dialects.rocdl import *\n"
            "from .._mlir.dialects.rocdl import sched_group_barrier as _raw\n"
            "def sched_group_barrier(mask, size, group_id): ...\n"
        ),
        "flydsl/_mlir/__init__.py": "",
        "flydsl/_mlir/dialects/__init__.py": "",
        "flydsl/_mlir/dialects/rocdl.py": (
            "def sched_barrier(mask, *, loc=None, ip=None): ...\n"
            "def sched_group_barrier(mask, size, group_id, *, loc=None, ip=None): ...\n"
        ),
    }
    assert "fx.rocdl.sched_barrier(wrapper)" in apitable.WRAPPER_FORMS
    resolver = Resolver(tree)
    assert resolver.exists("fx.rocdl.sched_barrier")
    assert not resolver.exists("fx.rocdl.sched_barrier(wrapper)")
    assert resolver.exists("fx.rocdl.sched_group_barrier(wrapper)")


def test_compiled_star_import_is_undecided():
    tree = {
        "flydsl/__init__.py": "",
        "flydsl/expr/__init__.py": "from .._mlir.ir import *\ndef known(): ...\n",
        "flydsl/_mlir/__init__.py": "",
        "flydsl/_mlir/ir.py": "from ._mlir_libs._mlir.ir import *\n",
        "flydsl/_mlir/_mlir_libs/__init__.py": "",
    }
    resolver = Resolver(tree)
    assert resolver.exists("fx.known")
    assert not resolver.exists("fx.Value")
    assert "fx.Value" in resolver.uncertain
    # with the compiled module's stub, it is decided
    tree["flydsl/_mlir/_mlir_libs/_mlir/__init__.pyi"] = ""
    tree["flydsl/_mlir/_mlir_libs/_mlir/ir.pyi"] = "class Value:\n    def owner(self): ...\n"
    resolver = Resolver(tree)
    assert resolver.exists("fx.Value.owner")
    assert not resolver.exists("fx.Other") and "fx.Other" not in resolver.uncertain
