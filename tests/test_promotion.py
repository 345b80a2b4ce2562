"""The type model against FlyDSL's own tracer, on both releases we support.

flydsl_ls/data/fx_promotion.json holds, per FlyDSL release, the type FlyDSL gives each of the
cases `scripts/build_promotion_table.py` writes into its probe kernels. Two tests trace again
(0.5.0 with this interpreter, 0.3.1 from `.cache/flydsl-0.3.1`, which .ci/run installs) and
compare; one checks that the model, reading the same probe source, never gives a case a type
that some release does not produce ("unknown" is always allowed)."""

from __future__ import annotations

import ast
import functools
import importlib.util
import json
import os
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

from flydsl_ls.analysis.model import fxtypes as T
from flydsl_ls.analysis.model.semantic import SemanticModel

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "build_promotion_table.py"
FLYDSL_031 = REPO / ".cache" / "flydsl-0.3.1"  # pip install --no-deps --target (.ci/run)
# What a model type may stand for at run time: a raw value is an ArithValue in both releases,
# and a Vector is an ArithValue (its subclass) and its own raw value.
_RUN_TIME = {T.RAW: {"ir.Value", "ArithValue", "Vector"}, T.ARITH_VALUE: {"ArithValue", "Vector"}, T.VECTOR: {"Vector"},
             T.PY_INT: {"int"}, T.PY_FLOAT: {"float"}, T.PY_BOOL: {"bool"}}


@functools.cache
def _builder():
    spec = importlib.util.spec_from_file_location("build_promotion_table", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _stored() -> dict:
    return json.loads(resources.files("flydsl_ls.data").joinpath("fx_promotion.json").read_text("utf-8"))


def _check(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=600, cwd=REPO, env=env
    )


def test_the_table_is_what_flydsl_0_5_0_traces():
    done = _check({**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "with FlyDSL 0.5.0" in done.stdout, done.stdout[-500:]


def test_the_table_is_what_flydsl_0_3_1_traces():
    # Fails, not skips, without the install: the table's 0.3.1 answers must be checked.
    assert (FLYDSL_031 / "flydsl").is_dir(), (
        f"FlyDSL 0.3.1 is not installed: pip install --no-deps --target {FLYDSL_031} flydsl==0.3.1"
    )
    done = _check({**os.environ, "PYTHONPATH": os.pathsep.join((str(FLYDSL_031), str(REPO)))})
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "with FlyDSL 0.3.1" in done.stdout, done.stdout[-500:]


def test_the_table_has_both_releases_and_enough_cases():
    stored = _stored()
    assert stored["releases"] == ["0.3.1", "0.5.0"]
    assert stored["cases"] == len(stored["results"]) == len(_builder().cases()) >= 500


_REFUSED = {"raises", "invalid IR"}
# The samples of an operand class whose element type the model cannot see (promotion._SAMPLES).
_SAMPLE_CLASS = re.compile(r"\b(Vector|ArithValue|ir\.Value)_(i32|f32|f16|f64|i64|index|i1)\b")


def _fits(model_type: str, answer: str) -> bool:
    if T.is_numeric_class(model_type.removeprefix("fx.")) and model_type.startswith("fx."):
        return answer == model_type[3:]
    return answer in _RUN_TIME.get(model_type, ())


def _wrong(typed: dict[str, str], answers: list[dict[str, str]]) -> list[tuple]:
    """The cases the model gives a type that FlyDSL does not produce. Where FlyDSL refuses a
    case, the model may still type it when the same expression traces to that type for
    another sample of the operand's class (an f32 Vector refuses `<<`, an i32 one does not),
    or when it is a constructor (`fx.Float32(v)` is a Float32 whenever it traces)."""
    produced: dict[str, set[str]] = {}
    for key in typed:
        produced.setdefault(_SAMPLE_CLASS.sub(r"\1", key), set()).update(r[key] for r in answers)
    wrong = []
    for key, got in typed.items():
        if got == T.UNKNOWN:
            continue
        mine = {r[key] for r in answers}
        siblings = produced[_SAMPLE_CLASS.sub(r"\1", key)] - _REFUSED
        constructor = key.partition("(")[0] in _builder().SCALARS and got == "fx." + key.partition("(")[0]
        if any(not _fits(got, a) for a in mine - _REFUSED) or (
            mine & _REFUSED and not constructor and not (siblings and all(_fits(got, a) for a in siblings))
        ):
            wrong.append((key, got, sorted(mine)))
    return wrong


@functools.cache
def _model_answers() -> tuple[dict[str, str], list[dict[str, str]]]:
    """{case key: the model's type} over the probe source, and the table's answers."""
    builder = _builder()
    source, keys = builder.probe_source()
    model = SemanticModel(source, ast.parse(source), None)
    typed = {}
    for call in model.nodes_of(ast.Call):
        if isinstance(call.func, ast.Name) and call.func.id == "_r":
            index, expression = call.args
            typed[keys[index.value]] = model.type_of(expression.body).name
    stored = _stored()
    results = stored["results"]
    answers = [{key: a if isinstance(a, str) else a[r] for key, a in results.items()} for r in stored["releases"]]
    return typed, answers


def test_the_model_never_types_a_case_otherwise_than_flydsl():
    typed, answers = _model_answers()
    assert len(typed) == len(answers[0])
    wrong = _wrong(typed, answers)
    assert not wrong, f"{len(wrong)} cases: {wrong[:25]}"


def test_the_model_types_most_operator_cases():
    """A model that answers "unknown" everywhere passes the test above: it must type the
    operators on fx scalars and Python numbers that both releases agree on."""
    typed, answers = _model_answers()
    builder = _builder()
    scalars = set(builder.SCALARS) | set(builder.PYTHON)
    agreed = [
        key
        for key, answer in answers[0].items()
        if all(release[key] == answer for release in answers)
        and T.is_numeric_class(answer)
        and key.count(" ") == 2
        and {key.split(" ")[0], key.split(" ")[2]} <= scalars
    ]
    untyped = [key for key in agreed if typed[key] == T.UNKNOWN]
    assert len(agreed) > 3000 and not untyped, untyped[:20]


@pytest.mark.parametrize(
    "body, expected",
    [
        # literals, negative ones too, by their value
        ("r = a + 2", "int"), ("r = a + -5", "int"), ("r = a + 3000000000", "int64"),
        ("r = a + -3000000000", "int64"), (f"r = a + {2**70}", "int_huge"), ("r = a * 1.5", "float"),
        ("r = a + True", "bool"),
        # a name bound only to known values, a loop over a range of them, their sums and products
        ("n = 4\nif c:\n    n = -4\nr = a + n", "int"), ("B = 1 << 20\nr = a + B", "int_any"),
        ("for i in fx.range_constexpr(8):\n    r = a + i * 2 - 1", "int"),
        ("for i in range(4, 1 << 40):\n    r = a + i", "int_any"),
        ("r = a + 70000 * 70000", "int64"), ("for i in range(70000):\n    r = a + i * 70000", "int_any"),
        # a parameter, a Constexpr, a call: any int
        ("r = a + n", "int_any"), ("r = a + len(xs)", "int_any"),
    ],
)
def test_python_ints_are_classed_by_the_values_the_source_gives_them(body, expected):
    from flydsl_ls.analysis.model import promotion
    from flydsl_ls.analysis.model.intbounds import int_bounds

    source = "import flydsl.expr as fx\ndef k(a: fx.Int32, n: fx.Constexpr[int], c, xs):\n" + "".join(
        f"    {line}\n" for line in body.splitlines()
    )
    model = SemanticModel(source, ast.parse(source), None)
    operation = [n for n in ast.walk(model.tree) if isinstance(n, ast.BinOp) and isinstance(n.left, ast.Name)
                 and n.left.id == "a"][0]
    python_type = model.type_of(operation.right).name
    bounds = int_bounds(model, operation.right) if python_type == "int" else None
    assert promotion.python_class(python_type, bounds) == expected


def test_an_int_of_unknown_value_leaves_the_type_unknown_where_the_value_decides_it():
    """`a + n` is an Int32 for a small `n` and an Int64 past i32: unknown for a parameter; a
    float stays a Float32 whatever the int."""
    source = (
        "import flydsl.expr as fx\ndef k(a: fx.Int32, f: fx.Float32, n: fx.Constexpr[int]):\n"
        "    r = a + n\n    s = a + 7\n    t = a / n\n    u = fx.Int32(a + n)\n"
    )
    model = SemanticModel(source, ast.parse(source), None)
    body = model.tree.body[1].body
    assert [model.type_of(stmt.value).name for stmt in body] == ["unknown", "fx.Int32", "unknown", "fx.Int32"]
