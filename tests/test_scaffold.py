"""The example "Add a compile example" writes, from source text alone (no compile here:
tests/compile/test_scaffold.py compiles it; tests/server/test_add_example.py drives the server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from flydsl_ls.compile.examples import find_examples
from flydsl_ls.compile.scaffold import apply, example_for, scaffold, targets

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
