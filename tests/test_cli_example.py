"""``flydsl-ls example add FILE[::function] [--diff]`` and ``flydsl-ls compile`` on a file
without an example, as a user runs them (a subprocess; nothing is compiled here)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.test_cli import run

FIXTURE = Path(__file__).parent / "compile" / "fixtures" / "copy_builder.py"
SOURCE = FIXTURE.read_text(encoding="utf-8")
TEST_FILE = (
    "import pytest\n\nfrom kernels.copy_builder import build_copy_module\n\n\n"
    '@pytest.mark.parametrize("N, dtype_str", [(2048, "f16"), (1024, "bf16")])\n'
    "def test_copy(N, dtype_str):\n    launch = build_copy_module(N, dtype_str)\n"
)
# what the editor's lens inserts too (tests/server/test_add_example.py): the test's first case
EXAMPLE = '''

# flydsl: example
def build_copy_module_example(device):
    """Written by flydsl-ls from the signature of `build_copy_module`: check the shapes and dtypes."""
    import torch

    launch = build_copy_module(2048, "f16")
    X = torch.empty(256, 2048, dtype=torch.float16, device=device)
    Y = torch.empty(256, 2048, dtype=torch.float16, device=device)
    return launch, (X, Y, 256)
'''
MARKER_LINE = len(SOURCE.splitlines()) + 3
TWO_LAUNCHERS = '''import flydsl.compiler as flyc
import flydsl.expr as fx


@flyc.jit
def launch_first(A: fx.Tensor):
    kernel(A).launch(grid=(1, 1, 1), block=(64, 1, 1))


@flyc.jit
def launch_second(A: fx.Tensor, n: fx.Int32):
    kernel(A).launch(grid=(n, 1, 1), block=(64, 1, 1))
'''


@pytest.fixture
def repository(tmp_path):
    (tmp_path / "kernels").mkdir()
    (tmp_path / "tests").mkdir()
    shutil.copy(FIXTURE, tmp_path / "kernels" / "copy_builder.py")
    (tmp_path / "tests" / "test_copy.py").write_text(TEST_FILE, encoding="utf-8")
    return tmp_path


def test_add_writes_the_editors_example_and_says_where(repository):
    done = run("example", "add", "kernels/copy_builder.py", cwd=repository)
    assert done.returncode == 0, done.stderr
    assert (repository / "kernels" / "copy_builder.py").read_text(encoding="utf-8") == SOURCE + EXAMPLE
    assert done.stdout == (
        f"kernels/copy_builder.py:{MARKER_LINE}: added `# flydsl: example` build_copy_module_example for "
        "build_copy_module (the arguments of a call in the tests)\n"
        "compile it: flydsl-ls compile kernels/copy_builder.py::build_copy_module_example\n"
    )
    again = run("example", "add", "kernels/copy_builder.py", cwd=repository)  # nothing left without one
    assert again.returncode == 2 and "has a `# flydsl: example` already (build_copy_module)" in again.stderr
    assert (repository / "kernels" / "copy_builder.py").read_text(encoding="utf-8") == SOURCE + EXAMPLE


def test_diff_shows_the_example_and_writes_nothing(repository):
    done = run("example", "add", "kernels/copy_builder.py", "--diff", cwd=repository)
    assert done.returncode == 0, done.stderr
    assert (repository / "kernels" / "copy_builder.py").read_text(encoding="utf-8") == SOURCE
    assert done.stdout.startswith("--- a/kernels/copy_builder.py\n+++ b/kernels/copy_builder.py\n")
    added = [line[1:] for line in done.stdout.splitlines(keepends=True) if line.startswith("+") and not line.startswith("+++")]
    assert "".join(added) == EXAMPLE


def test_a_function_is_chosen_with_double_colon(tmp_path):
    path = tmp_path / "two.py"
    path.write_text(TWO_LAUNCHERS, encoding="utf-8")
    done = run("example", "add", "two.py::launch_second", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert path.read_text(encoding="utf-8") == TWO_LAUNCHERS + '''

# flydsl: example
def launch_second_example(device):
    """Written by flydsl-ls from the signature of `launch_second`: check the shapes and dtypes."""
    import torch

    A = torch.empty(256, 1024, dtype=torch.float16, device=device)
    return launch_second, (A, 1024)
'''
    unknown = run("example", "add", "two.py::nope", cwd=tmp_path)
    assert unknown.returncode == 2
    assert "two.py::nope: not a kernel builder or @flyc.jit launcher (those of the file: launch_first, launch_second)" in unknown.stderr


def test_a_file_without_a_launcher_says_why(tmp_path):
    (tmp_path / "helpers.py").write_text(
        "import flydsl.compiler as flyc\n\n\n@flyc.jit\ndef helper(x):\n    return x\n", encoding="utf-8"
    )
    done = run("example", "add", "helpers.py", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("helpers.py: no launcher found: its @flyc.jit function `helper` (line 5) launches no kernel")
    assert run("example", "add", "missing.py", cwd=tmp_path).returncode == 2


def test_compile_without_an_example_says_how_to_add_one(repository):
    done = run("compile", "kernels/copy_builder.py", cwd=repository)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        "kernels/copy_builder.py: no `# flydsl: example` to compile\n"
        "add one for its kernel builder: flydsl-ls example add kernels/copy_builder.py"
        "  (or the editor's \"Add compile example\" lens)\n"
    )
    (repository / "plain.py").write_text("x = 1\n", encoding="utf-8")
    plain = run("compile", "plain.py", cwd=repository)
    assert plain.returncode == 2
    assert plain.stderr == (
        "plain.py: no `# flydsl: example` to compile, and none can be written for it: "
        "no launcher found: no @flyc.jit function in this file\n"
    )
