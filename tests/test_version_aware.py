"""Fixes follow the project's pinned FlyDSL: a replacement the release lacks is not offered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flydsl_ls.analysis.model.apis import missing_in, required_apis, table
from tests.test_cli import run

KERNEL = (
    "import flydsl.expr as fx\n"
    "from flydsl.expr import arith, rocdl\n"
    "\n"
    "\n"
    "def kernel(t, a: fx.Int32, b: fx.Int32):\n"
    "    rocdl.s_waitcnt(0)\n"  # FLY401: keyword s_waitcnt from 0.3.0
    "    m = arith.maxsi(a, b)\n"  # FLY301: fx.max from 0.3.2
    "    v = fx.get(t, 0)\n"  # FLY901: declared removal 0.4
    "    fx.printf(m, v)\n"
)
PIN_FILES = {
    "requirements.txt": "torch\nflydsl=={v}\n",
    "pyproject.toml": '[project]\nname = "k"\nversion = "0"\ndependencies = ["flydsl=={v}"]\n',
    "setup.py": 'from setuptools import setup\nsetup(name="k", install_requires=["flydsl=={v}"])\n',
}


def workspace(tmp_path: Path, version: str, pin_file: str = "requirements.txt") -> Path:
    (tmp_path / pin_file).write_text(PIN_FILES[pin_file].format(v=version), encoding="utf-8")
    (tmp_path / "k.py").write_text(KERNEL, encoding="utf-8")
    return tmp_path


def findings(folder: Path, fmt: str = "json"):
    result = run("check", "k.py", "--target-arch", "gfx942", "--output-format", fmt, cwd=folder)
    return json.loads(result.stdout)


def by_code(items: list[dict]) -> dict[str, dict]:
    return {item["code"]: item for item in items}


@pytest.mark.parametrize("pin_file", sorted(PIN_FILES))
def test_pin_0_3_1(tmp_path, pin_file):
    items = by_code(findings(workspace(tmp_path, "0.3.1", pin_file)))
    assert items["FLY401"]["fix"]["applicability"] == "safe"  # keyword s_waitcnt exists
    assert items["FLY301"]["fix"] is None
    assert "`fx.max` is not in FlyDSL 0.3.1; it arrives in FlyDSL 0.3.2" in items["FLY301"]["message"]
    assert "declared removal in FlyDSL 0.4" in items["FLY901"]["message"]


def test_pin_0_3_4_1(tmp_path):
    items = by_code(findings(workspace(tmp_path, "0.3.4.1")))
    assert items["FLY401"]["fix"]["applicability"] == "safe"
    assert items["FLY301"]["fix"]["applicability"] == "unsafe"
    assert items["FLY301"]["fix"]["edits"][0]["content"] == "fx.max(a, b)"
    assert "declared removal in FlyDSL 0.4" in items["FLY901"]["message"]


def test_pin_0_5_0_keeps_apis_past_their_declared_removal_warnings(tmp_path):
    """0.5.0 still has `fx.get` (declared for removal in 0.4): a warning, not an error; it
    is an error only for a release that no longer has the API."""
    folder = workspace(tmp_path, "0.5.0")
    items = by_code(findings(folder))
    assert items["FLY301"]["fix"] is not None
    assert "past its declared removal in FlyDSL 0.4: 0.5.0 still has it, a later release may not" in items["FLY901"]["message"]
    assert items["FLY901"]["message"].startswith("use `fx.get_(...).unpack()` or `IntTuple[...].unpack()`: `fx.get` is deprecated")
    levels = {
        r["ruleId"]: r["level"] for r in findings(folder, "sarif")["runs"][0]["results"]
    }
    assert levels["FLY901"] == "warning" and levels["FLY401"] == "warning"
    assert table().available("fx.get", "0.5.0") is True


def test_pin_before_the_keyword_waitcnt(tmp_path):
    items = by_code(findings(workspace(tmp_path, "0.2.4")))
    assert items["FLY401"]["fix"] is None
    assert "0.3.0" in items["FLY401"]["message"]
    assert items["FLY301"]["fix"] is None


def test_setting_overrides_the_pin(tmp_path):
    folder = workspace(tmp_path, "0.2.4")
    result = run(
        "check", "k.py", "--target-arch", "gfx942", "--flydsl-version", "0.5.0",
        "--output-format", "json", cwd=folder,
    )
    assert by_code(json.loads(result.stdout))["FLY401"]["fix"] is not None


def test_required_apis_of_fix_texts():
    assert required_apis("_fx.rocdl.s_waitcnt(vmcnt=0)", "_fx") == ["fx.rocdl.s_waitcnt(keywords)"]
    assert required_apis("fx.rocdl.s_waitcnt(0)", "fx") == ["fx.rocdl.s_waitcnt"]
    assert required_apis("fx.rocdl.sched_barrier(0)", "fx") == ["fx.rocdl.sched_barrier(wrapper)"]
    assert required_apis("lds = fx.SharedAllocator().allocate(S).peek()", "fx") == ["fx.SharedAllocator"]
    assert required_apis("x.fx.max(a)", "fx") == []  # not the module alias
    assert missing_in("fx.to_llvm_ptr(p)", "fx", "0.2.4") == ("fx.to_llvm_ptr", "0.3.0")
    assert missing_in("fx.to_llvm_ptr(p)", "fx", "0.3.3") is None  # between releases: 0.3.2's table
    assert missing_in("fx.to_llvm_ptr(p)", "fx", None) is None


def test_versions_between_and_after_releases():
    releases = table().releases
    assert table().release_for("0.3.3") == "0.3.2"
    assert table().release_for("9.0") == releases[-1]
    assert table().release_for("0.1.0") is None
    assert table().available("fx.max", "0.1.0") is None  # older than the table: unknown
