"""The semantic model against the aliasing patterns real FlyDSL code uses (traps.md §1-2)."""

import ast
import textwrap

import pytest

from flydsl_ls.analysis.model.semantic import SemanticModel


def model_of(source: str, package: str | None = None) -> SemanticModel:
    source = textwrap.dedent(source)
    return SemanticModel(source, ast.parse(source), package)


def call_symbols(source: str, package: str | None = None) -> list[str | None]:
    """Canonical symbol of every call's callee, in source order."""
    model = model_of(source, package)
    calls = sorted(
        (n for n in ast.walk(model.tree) if isinstance(n, ast.Call)),
        key=lambda n: (n.lineno, n.col_offset),
    )
    return [model.resolve(c.func) for c in calls]


def name_type(source: str, name: str, occurrence: int = -1) -> str:
    """Inferred type of the last (or given) load of ``name``."""
    model = model_of(source)
    loads = sorted(
        (n for n in ast.walk(model.tree) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)),
        key=lambda n: (n.lineno, n.col_offset),
    )
    return model.type_of(loads[occurrence]).name


@pytest.mark.parametrize(
    "source,expected",
    [
        ("import flydsl.expr as fx\nfx.arith.select(c, a, b)", ["fx.arith.select"]),
        ("import flydsl.expr as _fx\n_fx.rocdl.s_waitcnt(0)", ["fx.rocdl.s_waitcnt"]),
        ("import flydsl.expr as fx_mod\nfx_mod.Int32(1)", ["fx.Int32"]),
        ("import flydsl.expr\nflydsl.expr.Int32(1)", ["fx.Int32"]),
        ("from flydsl import expr as fx\nfx.Int32(1)", ["fx.Int32"]),
        # two arith modules
        ("from flydsl.expr import arith\narith.addf(a, b)", ["fx.arith.addf"]),
        ("from flydsl.expr import arith as _arith_ext\n_arith_ext.index(4)", ["fx.arith.index"]),
        ("from flydsl._mlir.dialects import arith as std_arith\nstd_arith.addf(a, b)", ["mlir.arith.addf"]),
        ("from flydsl._mlir.dialects import arith as _arith_dialect\n_arith_dialect.maxsi(a, b)", ["mlir.arith.maxsi"]),
        ("from flydsl._mlir.dialects._arith_ops_gen import MulFOp as _MulFOp\n_MulFOp(a, b)", ["mlir.arith.MulFOp"]),
        ("from flydsl._mlir import dialects\ndialects.arith.addf(a, b)", ["mlir.arith.addf"]),
        # ArithValue's two homes
        ("from flydsl.expr.arith import ArithValue as _AV\n_AV(x)", ["fx.arith.ArithValue"]),
        ("from flydsl.expr.utils.arith import ArithValue as _ArithValue\n_ArithValue(x)", ["fx.arith.ArithValue"]),
        ("from flydsl.expr.utils import arith as ua\nua.ArithValue(x)", ["fx.arith.ArithValue"]),
        # _to_raw aliases, and the canonical converter that is not legacy
        ("from flydsl.expr.arith import _to_raw as as_mlir_value\nas_mlir_value(x)", ["fx.arith._to_raw"]),
        ("from aiter.ops.flydsl.kernels.tensor_shim import _to_raw as _raw\n_raw(x)", ["shim.tensor_shim._to_raw"]),
        ("from flydsl.expr.typing import as_ir_value as _raw\n_raw(x)", ["fx.as_ir_value"]),
        ("from flydsl.expr import arith\n_raw = arith._to_raw\n_raw(x)", ["fx.arith._to_raw"]),
        # three vectors
        ("from flydsl._mlir.dialects import vector as _vector_dialect\n_vector_dialect.extract(v)", ["mlir.vector.extract"]),
        ("from aiter.ops.flydsl.kernels import buffer_ops, vector\nvector.extract(v)", ["shim.vector.extract"]),
        ("from flydsl.expr.typing import Vector as Vec\nVec(v)", ["fx.Vector"]),
        # two rocdls
        ("from flydsl.expr import rocdl as fly_rocdl\nfly_rocdl.mfma_f32_16x16x16f16(t, ops)", ["fx.rocdl.mfma_f32_16x16x16f16"]),
        ("from flydsl._mlir.dialects import rocdl as _rocdl_d\n_rocdl_d.s_waitcnt(0)", ["mlir.rocdl.s_waitcnt"]),
        # buffer_ops from several places
        ("from kernels.common import buffer_ops as _buffer_ops\n_buffer_ops.buffer_load(r, o)", ["shim.buffer_ops.buffer_load"]),
        ("from aiter.ops.flydsl.kernels.buffer_ops import (\n    create_buffer_resource,\n    buffer_load,\n)\nbuffer_load(r, o)", ["shim.buffer_ops.buffer_load"]),
        ("from flydsl.expr import buffer_ops\nbuffer_ops.create_buffer_resource(t)", ["shim.buffer_ops.create_buffer_resource"]),
        # multi-line parenthesised import
        ("from flydsl._mlir.dialects import (\n    math as mlir_math,\n)\nmlir_math.fma(a, b, c)", ["mlir.math.fma"]),
        # Python math is not a dialect
        ("import math\nmath.ceil(x)", [None]),
        ("import math as host_math\nhost_math.log2(x)", [None]),
        ("from flydsl.expr import math as fmath\nfmath.exp2(x)", ["fx.math.exp2"]),
    ],
)
def test_aliases(source, expected):
    assert call_symbols(source) == expected


def test_function_local_import_is_scoped():
    source = """
    def helper():
        from flydsl._mlir.dialects import vector as _vector_dialect
        return _vector_dialect.extract(v)

    def other():
        return _vector_dialect.extract(v)
    """
    assert call_symbols(source) == ["mlir.vector.extract", None]


def test_local_assignment_shadows_import():
    source = """
    from flydsl.expr import arith
    def f():
        arith = make_something()
        return arith.addf(a, b)
    """
    assert call_symbols(source) == [None, None]


def test_parameter_shadows_module_unless_call_sites_pass_it():
    source = """
    from flydsl.expr import arith
    def helper(arith, x):
        return arith.addf(x, x)
    def unrelated(ops):
        return ops.addf(1, 2)
    helper(arith, 1)
    helper(arith=arith, x=2)
    """
    assert call_symbols(source) == ["fx.arith.addf", None, None, None]


def test_a_module_parameter_nobody_passes_takes_its_namesakes_module():
    # aiter's mfma_preshuffle_pipeline.py: exported helpers `def load_b_pack_k32(buffer_ops,
    # arith, vector, ...)` no file calls, next to helpers whose callers pass the modules; and
    # callers that hand on a parameter of their own.
    source = """
    from flydsl.expr import arith
    def helper(arith, x):
        return arith.addf(x, x)
    def exported(arith):
        return arith.addi(1, 2)
    def inner(arith, x):
        return arith.muli(x, x)
    def outer(arith, x):
        return inner(arith, x)
    def kernel(x):
        helper(arith, x)
        outer(arith, x)
    def other(ops):
        return ops.subi(1, 2)
    """
    assert call_symbols(source) == [
        "fx.arith.addf", "fx.arith.addi", "fx.arith.muli", None, None, None, None,
    ]


def test_parameter_not_resolved_when_call_sites_disagree():
    source = """
    from flydsl.expr import arith
    from flydsl._mlir.dialects import arith as std_arith
    def helper(arith):
        return arith.addf(1, 2)
    helper(arith)
    helper(std_arith)
    """
    assert call_symbols(source)[0] is None


def test_module_parameter_fx_shadow():
    source = """
    import flydsl.expr as fx
    def reduce(fx, a, b):
        return fx.arith.maximumf(a, b)
    def caller(a, b):
        return reduce(fx, a, b)
    """
    assert call_symbols(source)[0] == "fx.arith.maximumf"


def test_relative_imports_with_and_without_package():
    source = "from .buffer_ops import buffer_load\nfrom ..common import tensor_shim\nbuffer_load(r, o)\ntensor_shim._to_raw(v)"
    assert call_symbols(source, package="aiter.ops.flydsl.kernels") == [
        "shim.buffer_ops.buffer_load",
        "shim.tensor_shim._to_raw",
    ]
    assert call_symbols(source, package=None) == [
        "shim.buffer_ops.buffer_load",
        "shim.tensor_shim._to_raw",
    ]


def test_class_body_names_are_not_visible_in_methods():
    source = """
    class K:
        from flydsl.expr import arith
        def m(self):
            return arith.addf(a, b)
    """
    assert call_symbols(source) == [None]


def test_global_statement_and_later_rebinding():
    source = """
    arith = None
    def setup():
        global arith
        from flydsl.expr import arith
    def use():
        return arith.addf(a, b)
    """
    assert call_symbols(source)[-1] == "fx.arith.addf"


def test_nonlocal_rebinding():
    source = """
    def outer():
        arith = None
        def inner():
            nonlocal arith
            from flydsl.expr import arith
        def use():
            return arith.addf(a, b)
    """
    assert call_symbols(source)[-1] == "fx.arith.addf"


def test_star_import():
    assert call_symbols("from flydsl.expr.arith import *\nArithValue(x)") == ["fx.arith.ArithValue"]
    assert call_symbols("from numpy import *\nArithValue(x)") == [None]


def test_comprehension_variable_does_not_leak():
    source = """
    from flydsl.expr import arith
    vals = [arith for arith in range(3)]
    arith.addf(a, b)
    """
    assert call_symbols(source)[-1] == "fx.arith.addf"


# --- types -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source,name,expected",
    [
        ("x = 3\ny = x", "x", "int"),
        ("x = 3.0\ny = x", "x", "float"),
        ("import flydsl.expr as fx\nx = fx.Int32(3)\ny = x", "x", "fx.Int32"),
        ("import flydsl.expr as fx\ndef f(x: fx.Float32):\n    return x", "x", "fx.Float32"),
        ("import flydsl.expr as fx\ndef f(n: fx.Constexpr[int]):\n    return n", "n", "int"),
        ("import flydsl.expr as fx\ntid = fx.thread_idx.x\ny = tid", "tid", "fx.Int32"),
        ("from flydsl.expr import gpu\ntid = gpu.thread_idx.x\ny = tid", "tid", "fx.Int32"),
        ("from flydsl.expr import gpu\ntid = gpu.thread_id('x')\ny = tid", "tid", "ir.Value"),
        ("from flydsl._mlir.dialects import arith\ns = arith.addf(a, b)\ny = s", "s", "ir.Value"),
        ("import flydsl.expr as fx\nfor i in fx.range_constexpr(4):\n    y = i", "i", "int"),
        ("import flydsl.expr as fx\nx = fx.Int32(1) + 2\ny = x", "x", "fx.Int32"),
        ("import flydsl.expr as fx\nx = 2 * fx.Int64(1)\ny = x", "x", "fx.Int64"),
        ("import flydsl.expr as fx\nx = fx.Int32(1) + fx.Int64(2)\ny = x", "x", "fx.Int64"),  # promoted, as FlyDSL does
        ("import flydsl.expr as fx\nx = fx.Int32(1) / 2\ny = x", "x", "fx.Float32"),
        ("import flydsl.expr as fx\nx = fx.Int32(1) + 3000000000\ny = x", "x", "fx.Int64"),
        ("import flydsl.expr as fx\nx = fx.Float32(1) >> 1\ny = x", "x", "unknown"),  # FlyDSL raises
        ("import flydsl.expr as fx\ndef f(v: fx.Float32):\n    x = v.to(fx.BFloat16)\n    return x", "x", "fx.BFloat16"),
        ("import flydsl.expr as fx\ndef f(v: fx.Int32):\n    r = v.ir_value()\n    return r", "r", "ir.Value"),
        ("import flydsl.expr as fx\nv = fx.Vector.filled(4, 0.0, fx.Float32)\ny = v", "v", "fx.Vector"),
        ("from flydsl.expr.arith import ArithValue\nv = ArithValue(x) + 1\ny = v", "v", "ArithValue"),
        ("unknown_thing = make()\ny = unknown_thing", "unknown_thing", "unknown"),
    ],
)
def test_types(source, name, expected):
    assert name_type(source, name) == expected


def test_flow_sensitive_rebinding():
    source = """
    import flydsl.expr as fx
    from flydsl.expr import gpu
    def k():
        tid = gpu.thread_id('x')
        a = tid
        tid = fx.Int32(tid)
        b = tid
    """
    assert name_type(source, "tid", 0) == "ir.Value"
    assert name_type(source, "tid", 1) == "ir.Value"  # the argument of fx.Int32(tid)
    assert name_type(source, "tid", 2) == "fx.Int32"


def test_branches_join_to_unknown_when_they_disagree():
    source = """
    import flydsl.expr as fx
    def k(c):
        x = fx.Int32(1)
        if c:
            x = fx.Int64(2)
        return x
    """
    assert name_type(source, "x") == "unknown"


def test_branches_agree():
    source = """
    import flydsl.expr as fx
    def k(c):
        if c:
            x = fx.Int32(1)
        else:
            x = fx.Int32(2)
        return x
    """
    assert name_type(source, "x") == "fx.Int32"


def test_loop_carried_values():
    source = """
    import flydsl.expr as fx
    def k(v: fx.Float32):
        acc = fx.Float32(0.0)
        for i in fx.range_constexpr(4):
            acc = acc + v
        return acc
    """
    assert name_type(source, "acc", 0) == "fx.Float32"
    assert name_type(source, "acc") == "fx.Float32"


def test_loop_carried_change_of_type_is_unknown():
    source = """
    import flydsl.expr as fx
    def k(v):
        x = fx.Int32(0)
        for i in range(4):
            y = x
            x = make(v)
        return y
    """
    assert name_type(source, "x", 0) == "unknown"


def test_type_origin_is_described():
    model = model_of("import flydsl.expr as fx\nx = fx.Int32(3)\ny = x\n")
    load = [n for n in ast.walk(model.tree) if isinstance(n, ast.Name) and n.id == "x" and isinstance(n.ctx, ast.Load)][0]
    described = model.type_of(load).describe()
    assert "fx.Int32" in described and "line 2" in described


# --- the project around a file -------------------------------------------------------


def _project(tmp_path, files: dict[str, str]):
    from flydsl_ls.analysis.model.project import ProjectIndex

    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return ProjectIndex(files=sorted(tmp_path.rglob("*.py")))


def _symbols_in(index, path):
    model = index.model_of(path.resolve())
    calls = sorted((n for n in ast.walk(model.tree) if isinstance(n, ast.Call)), key=lambda n: (n.lineno, n.col_offset))
    return [model.resolve(c.func) for c in calls]


def test_alias_imported_from_a_sibling_module_two_hops(tmp_path):
    index = _project(
        tmp_path,
        {
            "kern/__init__.py": "",
            "kern/shim.py": "from flydsl.expr.arith import _to_raw\n",
            "kern/utils.py": "from .shim import _to_raw as _raw\n",
            "kern/gemm.py": "from .utils import _raw\nx = _raw(v)\n",
        },
    )
    assert _symbols_in(index, tmp_path / "kern/gemm.py") == ["fx.arith._to_raw"]


def test_hand_rolled_unwrap_in_a_sibling_module(tmp_path):
    index = _project(
        tmp_path,
        {
            "kern/__init__.py": "",
            "kern/common.py": """
                from flydsl._mlir import ir
                def _raw(v):
                    if not isinstance(v, ir.Value) and hasattr(v, "ir_value"):
                        return v.ir_value()
                    return v
            """,
            "kern/gemm1.py": "from .common import _raw\nx = _raw(v)\n",
        },
    )
    assert _symbols_in(index, tmp_path / "kern/gemm1.py") == ["fx.arith._to_raw"]


def test_module_passed_as_parameter_from_another_file(tmp_path):
    index = _project(
        tmp_path,
        {
            "kern/__init__.py": "",
            "kern/pipeline.py": """
                def load_tile(arith, vector, x):
                    return vector.extract(arith.addi(x, x))
            """,
            "kern/gemm.py": """
                from flydsl.expr import arith
                from flydsl._mlir.dialects import vector
                from .pipeline import load_tile
                def kernel(x):
                    return load_tile(arith, vector, x)
            """,
        },
    )
    assert _symbols_in(index, tmp_path / "kern/pipeline.py") == ["mlir.vector.extract", "fx.arith.addi"]


def test_parameter_stays_unknown_without_callers(tmp_path):
    index = _project(tmp_path, {"kern/__init__.py": "", "kern/pipeline.py": "def f(arith):\n    return arith.addi(1, 2)\n"})
    assert _symbols_in(index, tmp_path / "kern/pipeline.py") == [None]


def test_a_nested_function_takes_its_modules_from_its_own_file_only(tmp_path):
    # Another file cannot call a function nested in a builder: a same-named call there (here
    # passing another module) neither decides nor spoils what the parameter is.
    index = _project(
        tmp_path,
        {
            "kern/__init__.py": "",
            "kern/pipeline.py": """
                from flydsl.expr import arith as fa
                def build():
                    def body(arith):
                        return arith.addi(1, 2)
                    return body(fa)
            """,
            "kern/gemm.py": """
                from flydsl._mlir.dialects import vector
                from .pipeline import body
                body(vector)
            """,
        },
    )
    assert _symbols_in(index, tmp_path / "kern/pipeline.py") == ["fx.arith.addi", None]  # addi; body(fa)


def test_a_model_build_stops_when_asked():
    from flydsl_ls.analysis.model.scopes import Interrupted

    source = "def f():\n    x = 1\n    return x\n\ny = f()\n"
    asked = []
    with pytest.raises(Interrupted):
        SemanticModel(source, ast.parse(source), stop=lambda: asked.append(1) or len(asked) > 2)
    assert len(asked) == 3  # before each statement, the function body's among them
    model = SemanticModel(source, ast.parse(source), stop=lambda: False)
    assert {"f", "y"} <= set(model.module_scope.bindings)


def test_a_type_is_the_same_whether_asked_alone_or_after_every_other():
    """Answers are kept, but not those given while a loop-carried binding's type is being
    worked out (partial: `a + w[k]` seen without the loop's own `a`): the first read of
    `a` in the loop once came out `fx.Float32` after a walk of the tree, unknown alone."""
    source = (
        "import flydsl.expr as fx\n\n\ndef f(w, xs, n):\n    a = fx.Float32(0.0)\n"
        "    for k in fx.range_constexpr(n):\n        a = a + w[k] * xs[k]\n"
        "    if n:\n        a = a / (fx.Float32(1.0) + a)\n    return a\n"
    )

    def reads(tree):
        return [n for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "a" and isinstance(n.ctx, ast.Load)]

    alone = []
    for i in range(len(reads(ast.parse(source)))):
        tree = ast.parse(source)
        alone.append(SemanticModel(source, tree, None).type_of(reads(tree)[i]).name)
    tree = ast.parse(source)
    model = SemanticModel(source, tree, None)
    for node in ast.walk(tree):
        if isinstance(node, ast.expr):
            model.type_of(node)
    assert [model.type_of(read).name for read in reads(tree)] == alone


def test_where_a_read_stands_never_moves_its_binding_to_another_scope():
    """What make_chunk asks once per name and scope: the position picks among one scope's
    bindings (globals, nonlocals, class bodies, comprehensions, later bindings)."""
    from flydsl_ls.analysis.model.scopes import ScopeBuilder, lookup

    source = textwrap.dedent(
        """
        import flydsl.expr as fx
        y = 1
        def f(a):
            global g, h
            g = a + y + late
            b = [x + a for x in range(a) if x > b]
            class C:
                a = a + 1
                def m(self):
                    return a + C + self
            def inner():
                nonlocal b
                b = b + h
                return undefined
            return fx, C, inner, b
        late = 2
        h = [late for late in range(3)]
        """
    )
    builder = ScopeBuilder(None)
    builder.build(ast.parse(source))
    reads = builder.loads
    assert len(reads) > 20
    for read in reads:
        scope = builder.scope_of_node[id(read)]
        here = lookup(read.id, scope, (read.lineno, read.col_offset))
        for other in (r for r in reads if r.id == read.id and builder.scope_of_node[id(r)] is scope):
            there = lookup(read.id, scope, (other.lineno, other.col_offset))
            assert (here is None) == (there is None) and (here is None or here.scope is there.scope), read.id


def test_child_fields_leave_out_only_fields_without_nodes():
    """A walk reads only the fields that may hold nodes: the singletons' (`ctx`, `op`) and
    the scalars' of the ASDL signature (a Name's `id`) are skipped, and no node is ever
    found in one (every node of this package's own sources)."""
    from pathlib import Path

    from flydsl_ls.analysis.model.fields import CHILD_FIELDS

    assert CHILD_FIELDS[ast.Name] == ()
    assert CHILD_FIELDS[ast.Attribute] == ("value",)
    assert CHILD_FIELDS[ast.FunctionDef] == ("args", "body", "decorator_list", "returns")
    assert CHILD_FIELDS[ast.ImportFrom] == ("names",)
    assert CHILD_FIELDS[ast.Dict] == ("keys", "values")
    package = Path(__file__).resolve().parent.parent / "flydsl_ls"
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for name in set(node._fields) - set(CHILD_FIELDS[type(node)]) - {"ctx", "op", "ops"}:
                value = getattr(node, name, None)
                held = value if isinstance(value, list) else [value]
                assert not any(isinstance(item, ast.AST) for item in held), (path, type(node).__name__, name)


def test_may_name_symbol_keeps_every_read_that_resolves():
    """``may_name_symbol`` mirrors what ``binding_dotted`` follows: no read it clears
    resolves to a symbol but through a parameter (over every rule case's code)."""
    from tests.rule_cases import all_cases

    checked = 0
    for _rule, _kind, _index, case in all_cases():
        try:
            tree = ast.parse(case.code)
        except SyntaxError:
            continue
        model = SemanticModel(case.code, tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and not model.may_name_symbol(node):
                assert model.binding_of(node).kind == "param" or model.resolve(node) is None, case.code
                checked += 1
    assert checked > 1000
