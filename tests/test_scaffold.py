"""The example "Add a compile example" writes, from source text alone (no compile here:
tests/compile/test_scaffold.py compiles it; tests/server/test_add_example.py drives the server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flydsl_ls.compile.examples import find_examples
from flydsl_ls.compile.scaffold import apply, example_for, scaffold, targets
from flydsl_ls.compile.scaffold_reasons import NoTarget, no_target

FIXTURE = (Path(__file__).parent / "compile" / "fixtures" / "copy_builder.py").read_text(encoding="utf-8")

HEAD = "import flydsl.compiler as flyc\nimport flydsl.expr as fx\n\n\n"


def builder(signature: str, body: str, launcher: str, returns: str = "launch") -> str:
    return (
        f"{HEAD}def build({signature}):\n{body}"
        f"    @flyc.jit\n    def launch({launcher}):\n        kernel(A).launch(grid=(1, 1, 1), block=(64, 1, 1))\n\n"
        f"    return {returns}\n"
    )


def test_the_builder_of_the_fixture_gets_an_example_from_its_signature():
    (target,) = targets(FIXTURE)
    assert (target.name, target.kind, target.has_example) == ("build_copy_module", "builder", False)
    insertion = scaffold(FIXTURE, "build_copy_module")
    assert insertion.text == '''

# flydsl: example
def build_copy_module_example(device):
    """Written by flydsl-ls from the signature of `build_copy_module`: check the shapes and dtypes."""
    import torch

    launch = build_copy_module(1024, "bf16")
    X = torch.empty(256, 1024, dtype=torch.bfloat16, device=device)
    Y = torch.empty(256, 1024, dtype=torch.bfloat16, device=device)
    return launch, (X, Y, 256)
'''
    new = apply(FIXTURE, insertion)
    assert new.startswith(FIXTURE) and [e.name for e in find_examples(new)] == ["build_copy_module_example"]
    assert targets(new)[0].has_example  # its lens goes away


def test_torch_is_imported_in_the_example_unless_the_module_imports_it():
    """A kernel module stays importable without torch: no module-level import is added. One
    that imports torch unconditionally lends it to the example; a guarded import does not
    (``torch`` may be None)."""
    imported = FIXTURE.replace("import flydsl.compiler as flyc\n", "import flydsl.compiler as flyc\nimport torch\n")
    assert scaffold(imported, "build_copy_module").text == '''

# flydsl: example
def build_copy_module_example(device):
    """Written by flydsl-ls from the signature of `build_copy_module`: check the shapes and dtypes."""
    launch = build_copy_module(1024, "bf16")
    X = torch.empty(256, 1024, dtype=torch.bfloat16, device=device)
    Y = torch.empty(256, 1024, dtype=torch.bfloat16, device=device)
    return launch, (X, Y, 256)
'''
    guarded = FIXTURE.replace("import flydsl.expr as fx\n", "import flydsl.expr as fx\n\ntry:\n    import torch\nexcept ImportError:\n    torch = None\n")
    aliased = FIXTURE.replace("import flydsl.expr as fx\n", "import flydsl.expr as fx\nimport torch as th\n")
    for source in (guarded, aliased):
        assert "    import torch\n\n    launch = " in scaffold(source, "build_copy_module").text


def test_asserts_decide_the_shapes():
    text = builder("M: int, N: int", "    assert N % 4096 == 0\n    if M > 64:\n        raise ValueError(M)\n", "A: fx.Tensor")
    assert "launch = build(64, 4096)" in scaffold(text, "build").text


def test_a_launcher_in_a_dict_or_a_tuple_and_its_argument_kinds():
    launcher = "A: fx.Tensor, P: fx.Pointer, m: fx.Int32, s: fx.Float32, tile: fx.Constexpr[int], stream: fx.Stream"
    for returns, access in (('{"launch": launch, "kernel": kernel}', '["launch"]'), ("(launch, 4)", "[0]")):
        text = scaffold(builder("dtype_str: str = 'f16'", "", launcher, returns), "build").text
        assert f"launch = build(){access}" in text
        assert "A = torch.empty(256, 1024, dtype=torch.float16, device=device)" in text
        assert "return launch, (A, flyc.from_c_void_p(fx.Float16, P.data_ptr()), 256, 1.0, 128, fx.Stream(None))" in text
        assert "import flydsl.compiler as flyc" not in text  # the module imports it already


def test_arguments_come_from_a_tests_call_through_loops_and_helpers(tmp_path):
    (tmp_path / "kernels").mkdir()
    (tmp_path / "tests").mkdir()
    path = tmp_path / "kernels" / "copy_builder.py"
    path.write_text(FIXTURE, encoding="utf-8")
    (tmp_path / "tests" / "test_copy.py").write_text(
        "from kernels.copy_builder import build_copy_module\n\n"
        "def run(N, dtype):\n    return build_copy_module(N, dtype)\n\n"
        "def test_all():\n    configs = [(512, 'f32'), (1024, 'bf16')]\n    for N, dtype in configs:\n        run(N, dtype)\n",
        encoding="utf-8",
    )
    insertion = example_for(FIXTURE, "build_copy_module", path)
    assert insertion.from_test and 'launch = build_copy_module(512, "f32")' in insertion.text


def test_a_tests_call_that_fails_the_builders_checks_is_not_taken(tmp_path):
    (tmp_path / "tests").mkdir()
    path = tmp_path / "copy_builder.py"
    path.write_text(FIXTURE, encoding="utf-8")
    (tmp_path / "tests" / "test_copy.py").write_text("build_copy_module(100, 'f16')\n", encoding="utf-8")
    insertion = example_for(FIXTURE, "build_copy_module", path)  # 100 % 256 != 0
    assert not insertion.from_test and 'build_copy_module(1024, "bf16")' in insertion.text


def test_the_arch_comes_from_the_builders_guard():
    text = builder("N: int", '    if not ARCH.startswith("gfx95"):\n        raise RuntimeError("needs CDNA4")\n', "A: fx.Tensor")
    assert "# flydsl: example gfx950\n" in example_for(text, "build").text


def test_what_cannot_be_scaffolded():
    assert targets("def broken(:\n") == []
    assert targets(HEAD + "@flyc.jit\ndef helper(x):\n    return x\n") == []  # a jit helper launches nothing
    with pytest.raises(LookupError):
        scaffold(HEAD + "def plain():\n    pass\n", "plain")
    struct = builder("", "", "A: fx.Tensor, p: Params")
    with pytest.raises(LookupError, match="p: Params"):
        scaffold(struct, "build")


# --- launcher shapes of aiter's and FlyDSL's trees (our own miniatures of them) ------------------
LAUNCH = "        kernel(A).launch(grid=(1, 1, 1), block=(64, 1, 1))\n"


def test_a_launcher_that_launches_through_a_helper_of_its_builder():
    """aiter's mixed_moe_gemm_2stage_common.py: the @flyc.jit launchers (one per branch) call a
    plain function of the builder, which calls ``.launch``."""
    source = (
        f"{HEAD}def build(N: int, shared: bool = False):\n"
        f"    def _launch_impl(A, n, stream):\n        launcher = kernel(A)\n        launcher.launch(grid=(n, 1, 1), block=(64, 1, 1))\n\n"
        f"    if shared:\n\n        @flyc.jit\n        def launch(A: fx.Pointer, B: fx.Pointer, n: fx.Int32, stream: fx.Stream):\n"
        f"            _launch_impl(A, n, stream)\n\n"
        f"    else:\n\n        @flyc.jit\n        def launch(A: fx.Pointer, n: fx.Int32, stream: fx.Stream):\n"
        f"            _launch_impl(A, n, stream)\n\n"
        f"    return launch\n"
    )
    (target,) = targets(source)
    assert (target.name, target.kind) == ("build", "builder")
    text = scaffold(source, "build").text
    assert "launch = build(1024)\n" in text
    assert "return launch, (flyc.from_c_void_p(fx.Float16, A.data_ptr()), 1024, fx.Stream(None))" in text  # the else branch


def test_a_module_level_launcher_that_launches_through_a_module_function():
    source = (
        f"{HEAD}def _go(A, n):\n    kernel(A).launch(grid=(n, 1, 1), block=(64, 1, 1))\n\n\n"
        f"@flyc.jit\ndef launch_copy(A: fx.Tensor, n: fx.Int32):\n    _go(A, n)\n"
    )
    assert [(t.name, t.kind) for t in targets(source)] == [("launch_copy", "launcher")]
    # recursion between helpers ends
    looping = source.replace("    kernel(A).launch(grid=(n, 1, 1), block=(64, 1, 1))\n", "    _go(A, n)\n")
    assert targets(looping) == []


def test_a_wrapper_that_hands_its_launcher_to_another_function():
    """FlyDSL's flash_attn_fp8_gfx950.py, aiter's flash_attn_func_gfx1201.py: the builder
    returns a plain function that passes the launcher to ``_run_compiled``."""
    source = builder("N: int", "", "A: fx.Tensor", "_launch").replace(
        "    return _launch\n",
        "    def _launch(*args):\n        return _run_compiled(launch, *args)\n\n    return _launch\n",
    )
    text = scaffold(source, "build").text
    assert '    launch = wrapper.__closure__[wrapper.__code__.co_freevars.index("launch")].cell_contents\n' in text


def test_a_dispatcher_around_a_wrapper_follows_the_closures():
    source = builder("N: int", "", "A: fx.Tensor", "_dispatch").replace(
        "    return _dispatch\n",
        "    def _launch(*args):\n        return launch(*args)\n\n"
        "    def _pick(n):\n        return _launch\n\n"
        "    def _dispatch(*args):\n        return _pick(args[0])(*args)\n\n    return _dispatch\n",
    )
    assert scaffold(source, "build").text.endswith('''    launch = build(1024)
    # build returns _dispatch, a Python function around the @flyc.jit launcher launch (through _pick, _launch): take that from the closures
    for name in ("_pick", "_launch", "launch"):
        if name in launch.__code__.co_freevars:
            launch = launch.__closure__[launch.__code__.co_freevars.index(name)].cell_contents
    A = torch.empty(256, 1024, dtype=torch.float16, device=device)
    return launch, (A,)
''')


def test_a_builder_that_stores_its_launcher_in_a_module_dict():
    """aiter's fmha_gfx1250/fmha_kernel.py: ``_launch_fns[key] = _launch``, nothing returned."""
    source = builder("causal: bool, lse: bool = False", "    key = (causal, lse)\n    if key in _fns:\n        return\n",
                     "A: fx.Tensor", "None").replace("    return None\n", "    _fns[key] = launch\n")
    source = source.replace(HEAD, HEAD + "_fns = {}\n\n\n")
    assert scaffold(source, "build").text.endswith('''    build(False)
    # build stores the @flyc.jit launcher launch in _fns
    launch = _fns[(False, False)]
    A = torch.empty(256, 1024, dtype=torch.float16, device=device)
    return launch, (A,)
''')


def test_other_jit_decorators_are_not_flydsls():
    source = "import triton\n\n\n@triton.jit\ndef k(x):\n    return x\n"
    assert targets(source) == []
    assert no_target(source) == NoTarget(1, "no launcher found: no @flyc.jit function in this file", kernel_like=False)


def test_why_a_file_gets_no_example():
    assert no_target(FIXTURE) is None
    helpers = HEAD + "@flyc.jit\ndef helper(x):\n    return x\n"
    assert no_target(helpers) == NoTarget(
        6,
        "no launcher found: its @flyc.jit function `helper` (line 6) launches no kernel (no `.launch(...)` in it or "
        "in a function it calls): device-side helpers are compiled by the example of a file that launches them",
    )
    rebound = builder("N: int", "", "A: fx.Tensor", "_guard(_launch)").replace(
        "    return _guard(_launch)\n",
        "    def _launch(*args):\n        return launch(*args)\n\n    _launch = _wrap(_launch)\n    return _guard(_launch)\n",
    )
    assert no_target(rebound).message == (
        "no launcher found: `build` defines the launcher `launch` (line 7) but returns `_guard(_launch)` (line 14): "
        "neither the launcher nor a function whose closure holds it (`_launch = _wrap(_launch)`, line 13, rebinds "
        "the function around it)"
    )
    kept = builder("N: int", "", "A: fx.Tensor", "None").replace("    return None\n", "    _cache.append(launch)\n")
    assert no_target(kept).message == (
        "no launcher found: `build` defines the launcher `launch` (line 7) but neither returns it nor stores it in a "
        "module-level dict"
    )
    host = "class Plan:\n    def run(self):\n        self.plan.launch(grid=1)\n"
    assert no_target(host) == NoTarget(
        3, "no launcher found: `.launch(...)` is called in `Plan` (line 3) from plain Python, not from a @flyc.jit function"
    )


KERNEL_HEAD = "import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom pkg.shim import Wrapped\n\n\n"


def test_a_tensor_gets_the_rank_the_kernel_slices_it_with():
    """`fx.slice(buf, (t, h, None))` on the buffer tensor of Q: Q is 3-D (a 2-D Q fails while
    tracing, `profile mismatch`); `Cache` sliced with 4 coordinates is 4-D, `Out` subscripted
    with 3 is 3-D; `Cos` keeps 2-D, `Pos` (never sliced) its shape by name."""
    source = f"""{HEAD}def build(N: int = 64):
    @flyc.kernel
    def kernel(Q: fx.Tensor, Cos: fx.Tensor, Cache: fx.Tensor, Pos: fx.Tensor, Out: fx.Tensor):
        q_buf = fx.rocdl.make_buffer_tensor(Q)
        row = fx.slice(q_buf, (fx.block_idx.y, fx.block_idx.x, None))
        c = fx.slice(Cos, (0, None))
        fx.slice(Cache, (0, 1, 2, None))
        Out[0, 1, None].store(row.load())

    @flyc.jit
    def launch(q: fx.Tensor, cos: fx.Tensor, cache: fx.Tensor, positions: fx.Tensor, out: fx.Tensor, m: fx.Int32):
        kernel(q, cos, cache, positions, out).launch(grid=(1, 1, 1), block=(64, 1, 1))

    return launch
"""
    text = scaffold(source, "build").text
    assert "q = torch.empty(256, 1, 64, dtype=torch.float16, device=device)" in text
    assert "cos = torch.empty(256, 64, dtype=torch.float32, device=device)" in text
    assert "cache = torch.empty(256, 1, 1, 64, dtype=torch.float16, device=device)" in text
    assert "positions = torch.empty(64, dtype=torch.int32, device=device)" in text
    assert "out = torch.empty(256, 1, 64, dtype=torch.float16, device=device)" in text


SHIM = '''import flydsl.expr as fx
from flydsl._mlir.dialects import fly


class Wrapped:
    def __init__(self, memref, offset=None):
        if offset is None:
            self.rsrc = memref
        else:
            self.base = self.base_of(memref, offset)

    def base_of(self, ptr, offset):
        return fly.extract_aligned_pointer_as_index(None, fx.extract(ptr)[0])
'''

POINTER_KERNEL = f"""{KERNEL_HEAD}def build(N: int = 64):
    @flyc.kernel
    def kernel(a: fx.Pointer, b: fx.Pointer, c: fx.Pointer):
        def resource(ptr):
            return fx.ptrtoint(ptr)

        Wrapped(a, offset=0)
        resource(b)
        fx.ptr_load(c)

    @flyc.jit
    def launch(x: fx.Pointer, y: fx.Pointer, z: fx.Pointer):
        kernel(x, y, z).launch(grid=(1, 1, 1), block=(64, 1, 1))

    return launch
"""


def test_a_pointer_the_kernel_hands_to_extract_aligned_pointer_gets_a_tensor(tmp_path):
    """`x: fx.Pointer` reaches `fly.extract_aligned_pointer_as_index` through a class of another
    module of the repository (its `__init__`, then a method), which takes a memref: a
    `fly.ptr` there does not compile, so the example passes the tensor. `y` goes to
    `fx.ptrtoint` (through the kernel's own helper) and `z` to `fx.ptr_load`: they stay
    pointers."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "tests").mkdir()  # the repository's tests: none call it
    (tmp_path / "pkg" / "shim.py").write_text(SHIM, encoding="utf-8")
    path = tmp_path / "pkg" / "kernel.py"
    path.write_text(POINTER_KERNEL, encoding="utf-8")
    text = example_for(POINTER_KERNEL, "build", path).text
    assert "    # x: fx.Pointer, but the kernel hands it to Wrapped, which takes a memref: a tensor\n" in text
    assert (
        "return launch, (x, flyc.from_c_void_p(fx.Float16, y.data_ptr()), flyc.from_c_void_p(fx.Float16, z.data_ptr()))"
        in text
    )
    relative = POINTER_KERNEL.replace("from pkg.shim import", "from .shim import")
    assert "(x, flyc" in example_for(relative, "build", path).text
    # a helper that looks at the value's type first takes a pointer too
    dispatching = SHIM.replace(
        "        return fly.extract_aligned_pointer_as_index(None, fx.extract(ptr)[0])\n",
        "        if str(fx.extract(ptr)[0].type).startswith('!fly.ptr'):\n            return fx.ptrtoint(ptr)\n"
        "        else:\n            return fly.extract_aligned_pointer_as_index(None, fx.extract(ptr)[0])\n",
    )
    assert dispatching != SHIM
    (tmp_path / "pkg" / "shim.py").write_text(dispatching, encoding="utf-8")
    assert "(flyc.from_c_void_p(fx.Float16, x.data_ptr())," in example_for(POINTER_KERNEL, "build", path).text
    # without the file's path the other module cannot be read: every pointer stays one
    assert "(flyc.from_c_void_p(fx.Float16, x.data_ptr())," in scaffold(POINTER_KERNEL, "build").text


def test_a_convolutions_filter_stride_and_padding_are_small():
    """An assert bounding the weight's bytes once let `kw = 0` through (an empty reduction: the
    example compiled a kernel without its main loop); filter extents get 3, strides and
    paddings 1."""
    source = builder(
        "n, c, d, h, w, k, kt, kh, kw, st, sh, sw, pt, ph, pw, has_bias=False",
        "    assert k * c * kt * kh * kw * 2 < 0xFFFFFF00\n    assert c % 8 == 0\n",
        "A: fx.Tensor",
    )
    assert "launch = build(1024, 1024, 128, 8, 1024, 1024, 3, 3, 3, 1, 1, 1, 1, 1, 1)" in scaffold(source, "build").text
