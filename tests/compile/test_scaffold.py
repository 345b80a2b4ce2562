"""The example "Add a compile example" writes compiles as inserted (real FlyDSL, on the CPU).

The builder is tests/compile/fixtures/copy_builder.py, shaped like FlyDSL's own; in a
repository whose tests call it, the example takes that call's arguments.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flydsl_ls.compile.scaffold import apply, example_for

FIXTURE = Path(__file__).parent / "fixtures" / "copy_builder.py"
TEST_FILE = '''import pytest
from kernels.copy_builder import build_copy_module

@pytest.mark.parametrize("N, dtype_str", [(2048, "f16")])
def test_copy(N, dtype_str):
    build_copy_module(N, dtype_str)
'''


@pytest.mark.parametrize("with_tests", [False, True], ids=["from the signature", "from the tests"])
def test_the_scaffolded_example_compiles(service, tmp_path, with_tests):
    (tmp_path / "kernels").mkdir()
    (tmp_path / "tests").mkdir()  # the repository's tests folder: empty, or calling the builder
    if with_tests:
        (tmp_path / "tests" / "test_copy.py").write_text(TEST_FILE, encoding="utf-8")
    path = tmp_path / "kernels" / "copy_builder.py"
    shutil.copy(FIXTURE, path)
    source = path.read_text(encoding="utf-8")
    insertion = example_for(source, "build_copy_module", path)
    assert insertion.from_test is with_tests
    assert ('build_copy_module(2048, "f16")' if with_tests else 'build_copy_module(1024, "bf16")') in insertion.text
    path.write_text(apply(source, insertion), encoding="utf-8")

    result = service.compile(path, insertion.example, "gfx942")

    assert result.ok, result.error
    assert [k.name for k in result.kernels] == ["copy_kernel_0"]


def test_a_kernel_with_relative_imports_compiles(service, tmp_path):
    """FlyDSL's kernels import their siblings (`from .utils import ...`): the worker imports
    such a file as a module of its package, with the folder above the package on sys.path."""
    package = tmp_path / "kernels" / "norm"
    package.mkdir(parents=True)
    (tmp_path / "kernels" / "__init__.py").write_text("", encoding="utf-8")
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "common.py").write_text("ROWS_PER_BLOCK = 4\n", encoding="utf-8")
    source = FIXTURE.read_text(encoding="utf-8").replace("ROWS_PER_BLOCK = 4\n", "from .common import ROWS_PER_BLOCK\n")
    path = package / "copy_builder.py"
    insertion = example_for(source, "build_copy_module", path)
    path.write_text(apply(source, insertion), encoding="utf-8")

    result = service.compile(path, insertion.example, "gfx942")

    assert result.ok, result.error


LAUNCHER = '''    @flyc.jit
    def launch_copy(X: fx.Tensor, Y: fx.Tensor, m_in: fx.Int32, stream: fx.Stream = fx.Stream(None)):
        atom = fx.make_copy_atom(fx.UniversalCopy128b(), element)
'''
# aiter's shapes on our fixture: the launcher launches through a helper of the builder
# (mixed_moe_gemm_2stage_common.py); the builder returns a wrapper that hands the launcher to
# another function (flash_attn_func_gfx1201.py); it stores it in a module-level dict (fmha_gfx1250).
SHAPES = {
    "through a helper": (
        lambda s: s.replace(LAUNCHER, '''    def _launch_copy(X, Y, m_in, stream):
        atom = fx.make_copy_atom(fx.UniversalCopy128b(), element)
''').replace("    return launch_copy\n", '''    @flyc.jit
    def launch_copy(X: fx.Tensor, Y: fx.Tensor, m_in: fx.Int32, stream: fx.Stream = fx.Stream(None)):
        _launch_copy(X, Y, m_in, stream)

    return launch_copy
'''),
        "    launch = build_copy_module(1024, \"bf16\")\n",
    ),
    "a wrapper": (
        lambda s: s.replace("    return launch_copy\n", '''    def _launch(*args):
        return _run(launch_copy, *args)

    return _launch
'''),
        '    launch = wrapper.__closure__[wrapper.__code__.co_freevars.index("launch_copy")].cell_contents\n',
    ),
    "a registry": (
        lambda s: s.replace("ELEMENTS = {", "LAUNCHERS = {}\nELEMENTS = {").replace(
            "    return launch_copy\n", "    LAUNCHERS[(N, dtype_str)] = launch_copy\n"
        ),
        '    launch = LAUNCHERS[(1024, "bf16")]\n',
    ),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_example_of_each_launcher_shape_compiles(service, tmp_path, shape):
    change, taken = SHAPES[shape]
    source = change(FIXTURE.read_text(encoding="utf-8"))
    made = {"through a helper": "        _launch_copy(X, Y, m_in, stream)\n", "a wrapper": "    return _launch\n",
            "a registry": "    LAUNCHERS[(N, dtype_str)] = launch_copy\n"}[shape]
    assert made in source
    path = tmp_path / "copy_builder.py"
    insertion = example_for(source, "build_copy_module", path)
    assert taken in insertion.text
    path.write_text(apply(source, insertion), encoding="utf-8")

    result = service.compile(path, insertion.example, "gfx942")

    assert result.ok, result.error
    assert [k.name for k in result.kernels] == ["copy_kernel_0"]


@pytest.mark.parametrize(
    "builder, kernel",
    [("build_rows_module", "rows_kernel_0"), ("build_address_module", "address_kernel_0")],
    ids=["a 3-D tensor", "a pointer taken as a memref"],
)
def test_examples_give_the_kernel_what_it_slices_and_takes(service, tmp_path, builder, kernel):
    """fixtures/rows_kernels.py: a kernel slicing a tensor with three coordinates (a 2-D one
    fails: `profile mismatch`) and one handing an `fx.Pointer` to fixtures/addr_shim.py, which
    takes its memref (`fly.extract_aligned_pointer_as_index`: a `fly.ptr` there fails)."""
    package = tmp_path / "rows_pkg"  # not `kernels`: the warm worker has imported another one
    package.mkdir()
    (tmp_path / "tests").mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    shutil.copy(FIXTURE.parent / "addr_shim.py", package / "addr_shim.py")
    path = package / "rows_kernels.py"
    shutil.copy(FIXTURE.parent / "rows_kernels.py", path)
    source = path.read_text(encoding="utf-8")
    insertion = example_for(source, builder, path)
    path.write_text(apply(source, insertion), encoding="utf-8")

    result = service.compile(path, insertion.example, "gfx942")

    assert result.ok, result.error
    assert [k.name for k in result.kernels] == [kernel]
