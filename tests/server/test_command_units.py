"""Unit tests of the compile commands' pieces that need no server and no compiler:
arguments, the compileTimeout setting, the JSON result and the error diagnostics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from flydsl_ls.compile import CompileError, CompileResult, KernelOutput, KernelResources, Status
from flydsl_ls.server import compile_report
from flydsl_ls.server.app import create_server
from flydsl_ls.server.commands import HANDLERS, Command, parse_arguments
from flydsl_ls.server.settings import DEFAULT_COMPILE_TIMEOUT, EditorSettings, parse


def test_one_enum_drives_advertising_and_routing():
    assert set(HANDLERS) == set(Command)
    assert Command.advertised() == [
        "flydsl-ls.compile",
        "flydsl-ls.launch",
        "flydsl-ls.showIsa",
        "flydsl-ls.verifyFix",
        "flydsl-ls.applyFix",
        "flydsl-ls.fixAll",
        "flydsl-ls.addExample",
        "flydsl-ls.showExample",
        "flydsl-ls.noExample",
        "flydsl-ls.kernelFindings",
        "flydsl-ls.migrateKernel",
        "flydsl-ls.compareWithDisk",
    ]
    server = create_server()
    assert set(server.protocol.fm.commands) == set(Command.advertised())


def test_arguments_positional_and_object():
    t = parse_arguments(["file:///k.py"])
    assert (t.uri, t.example, t.arch) == ("file:///k.py", None, None)
    t = parse_arguments(["file:///k.py", "small", "gfx950"])
    assert (t.example, t.arch) == ("small", "gfx950")
    t = parse_arguments(["file:///k.py", None, "gfx950"])
    assert (t.example, t.arch) == (None, "gfx950")
    t = parse_arguments([{"uri": "file:///k.py", "arch": "gfx942"}])
    assert (t.uri, t.example, t.arch) == ("file:///k.py", None, "gfx942")
    d = {"code": "FLY104", "range": {}}
    t = parse_arguments(["file:///k.py", d, "small"], with_diagnostic=True)
    assert (t.diagnostic, t.example) == (d, "small")
    t = parse_arguments([{"uri": "file:///k.py", "diagnostic": d}], with_diagnostic=True)
    assert t.diagnostic == d


@pytest.mark.parametrize(
    "arguments, with_diagnostic",
    [([], False), ([42], False), (["u", 1], False), (["u", "a", "b", "c"], False), (["u"], True), ([{"uri": "u"}], True)],
)
def test_bad_arguments(arguments, with_diagnostic):
    with pytest.raises(JsonRpcInvalidParams):
        parse_arguments(arguments, with_diagnostic=with_diagnostic)


def test_compile_timeout_setting():
    assert EditorSettings().timeout == DEFAULT_COMPILE_TIMEOUT
    for spelling in ("compileTimeout", "compile-timeout", "compile_timeout"):
        settings, warnings = parse({"flydsl-ls": {spelling: 30}}, "test")
        assert settings.timeout == 30.0 and warnings == []
    for bad in (0, -1, "10", True):
        settings, warnings = parse({"compileTimeout": bad}, "test")
        assert settings.compile_timeout is None and "positive number of seconds" in warnings[0]


def _result(status: Status, error: CompileError | None = None, tmp: Path | None = None) -> CompileResult:
    result = CompileResult(status, "/w/k.py", "small", "gfx942", seconds=0.25, total_seconds=3.5, error=error)
    if status is Status.OK and tmp is not None:
        kdir = tmp / "ir" / "add_kernel_0"
        kdir.mkdir(parents=True)
        (kdir / "22_final_isa.s").write_text("")
        res = KernelResources("add_kernel_0", "gfx942", vgprs=17, sgprs=29, workgroup_size=(256, 1, 1))
        result.kernels = [KernelOutput("add_kernel_0", kdir, isa=kdir / "22_final_isa.s", resources=res)]
        result.dump_dir = tmp
    return result


def test_result_json_is_plain_json(tmp_path):
    data = compile_report.result_json("flydsl-ls.compile", "file:///w/k.py", _result(Status.OK, tmp=tmp_path))
    json.dumps(data)
    assert data["status"] == "ok" and data["ok"] and data["totalSeconds"] == 3.5
    (kernel,) = data["kernels"]
    assert kernel["resources"]["vgprs"] == 17 and kernel["resources"]["workgroupSize"] == [256, 1, 1]
    assert kernel["files"] == {"isa": str(tmp_path / "ir" / "add_kernel_0" / "22_final_isa.s")}
    assert kernel["uris"]["isa"].startswith("file://")
    assert data["message"].startswith(
        "k.py::small (gfx942): compiled in 0.25 s (total 3.50 s): add_kernel_0: VGPRs 17, AGPRs 0, SGPRs 29, "
    )
    assert kernel["lines"] == []  # compiled without line info
    assert "add_kernel_0: VGPRs 17, AGPRs 0, SGPRs 29, LDS 0 B, scratch 0 B" in data["message"]


@pytest.mark.parametrize(
    "status, verb",
    [(Status.ERROR, "compile failed"), (Status.CRASH, "compiler crashed"), (Status.TIMEOUT, "compile timed out"),
     (Status.CANCELLED, "compile cancelled"), (Status.UNAVAILABLE, "cannot compile")],
)
def test_headline_says_what_happened(status, verb):
    text = compile_report.headline(_result(status, CompileError("boom", "crash")))
    assert text == f"k.py::small (gfx942): {verb}: boom"


def test_error_diagnostic_at_the_column_in_client_units(tmp_path):
    path = tmp_path / "k.py"
    text = "x = 1\ny = 'é' + undefined\n"
    column = len("y = 'é' + ".encode("utf-8"))  # Python reports UTF-8 byte columns
    error = CompileError("NameError: name 'undefined' is not defined", "python", str(path), 2, column)
    result = _result(Status.ERROR, error)
    (utf16,) = compile_report.error_diagnostics(result, path, text, "utf-16")
    assert utf16.range == types.Range(types.Position(1, 10), types.Position(1, 19))
    (utf8,) = compile_report.error_diagnostics(result, path, text, "utf-8")
    assert utf8.range == types.Range(types.Position(1, 11), types.Position(1, 20))
    assert utf8.source == "flydsl-ls compile" and utf8.severity == types.DiagnosticSeverity.Error


def test_error_diagnostic_without_column_spans_the_statement(tmp_path):
    path = tmp_path / "k.py"
    error = CompileError("boom", "mlir", str(path), 2, None)
    (diag,) = compile_report.error_diagnostics(_result(Status.ERROR, error), path, "def f():\n    go()  \n", "utf-8")
    assert diag.range == types.Range(types.Position(1, 4), types.Position(1, 8))


def test_no_diagnostic_for_another_file_or_no_line(tmp_path):
    path = tmp_path / "k.py"
    other = CompileError("boom", "python", str(tmp_path / "other.py"), 1, 0)
    assert compile_report.error_diagnostics(_result(Status.ERROR, other), path, "x\n", "utf-8") == []
    lineless = CompileError("boom", "crash")
    assert compile_report.error_diagnostics(_result(Status.CRASH, lineless), path, "x\n", "utf-8") == []
