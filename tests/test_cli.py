"""`flydsl-ls` as a user runs it: a subprocess, its output formats, config and exit codes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from flydsl_ls.analysis.rules import ALL_RULES
from flydsl_ls.data import RULE_PAGES
from tests.rule_pages import installed_page

ROOT = Path(__file__).resolve().parent.parent

HEADER = "import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
# FLY101 (safe fix) at 4:7, FLY104 (safe fix) at 5:7, FLY901 (no fix) at 6:5.
LEGACY = HEADER + (
    "tid = fx.thread_idx.x\n"
    "lane = ArithValue(tid) % 64\n"
    "wrap = fx.Int32(fx.Int32(3))\n"
    "v = fx.get(t, 0)\n"
)
CLEAN = "import flydsl.expr as fx\nlane = fx.thread_idx.x % 64\n"


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, "-m", "flydsl_ls", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in result.stderr, result.stderr
    assert "Traceback" not in result.stdout, result.stdout
    return result


def check_json(*args: str, cwd: Path) -> tuple[subprocess.CompletedProcess, list[dict]]:
    result = run("check", "--output-format", "json", *args, cwd=cwd)
    return result, json.loads(result.stdout)


def codes(items: list[dict]) -> list[tuple[str, str, int]]:
    return [(Path(i["filename"]).name, i["code"], i["location"]["row"]) for i in items]


def write_project(folder: Path) -> Path:
    """legacy.py and clean.py, under a pinned release, so that results do not depend on the
    FlyDSL installed here."""
    (folder / "requirements.txt").write_text("flydsl==0.3.4.1\n", encoding="utf-8")
    (folder / "legacy.py").write_text(LEGACY, encoding="utf-8")
    (folder / "clean.py").write_text(CLEAN, encoding="utf-8")
    return folder


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path)


def write_config(folder: Path, body: str) -> None:
    (folder / "pyproject.toml").write_text(
        '[project]\nname = "kernels"\nversion = "0"\n\n[tool.flydsl-ls]\n' + body, encoding="utf-8"
    )


# --- output formats ---------------------------------------------------------------


def test_concise_format_and_summary(project):
    result = run("check", ".", cwd=project)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[:3] == [
        "legacy.py:4:8: FLY101 [*] `ArithValue(...)` around a value that is already `fx.Int32`: drop the wrapper",
        "legacy.py:5:8: FLY104 [*] `fx.Int32(fx.Int32(x))` wraps twice: one wrap is enough",
        "legacy.py:6:5: FLY901 use `fx.get_(...).unpack()` or `IntTuple[...].unpack()`: `fx.get` is deprecated "
        "(declared removal in FlyDSL 0.4) (no fix: `fx.get` casts the element to "
        "`index`, and `fx.get_(...).unpack()` keeps the element's own type)",
    ]
    assert "Found 3 errors in 2 files checked." in result.stdout
    assert result.stderr == ""


def test_json_schema(project):
    result, items = check_json("legacy.py", cwd=project)
    assert result.returncode == 1
    assert [i["code"] for i in items] == ["FLY101", "FLY104", "FLY901"]
    for item in items:
        assert {"code", "message", "filename", "location", "end_location", "fix", "url"} <= set(item)
        assert Path(item["filename"]).is_absolute()
        assert Path(item["filename"]) == (project / "legacy.py").resolve()
        assert installed_page(item["url"]) == RULE_PAGES / f"{item['code']}.md"
        for key in ("location", "end_location"):
            assert set(item[key]) == {"row", "column"}
            assert item[key]["row"] >= 1 and item[key]["column"] >= 1
    wrapper = items[0]
    assert wrapper["location"] == {"row": 4, "column": 8}
    assert wrapper["end_location"] == {"row": 4, "column": 23}  # 1-based, exclusive: `ArithValue(tid)`
    fix = wrapper["fix"]
    assert fix["applicability"] == "safe"
    assert fix["message"]
    assert fix["edits"] == [
        {"content": "tid", "location": {"row": 4, "column": 8}, "end_location": {"row": 4, "column": 23}}
    ]
    assert items[2]["fix"] is None  # FLY901 has no fix


def test_json_clean_is_empty_list(project):
    result, items = check_json("clean.py", cwd=project)
    assert result.returncode == 0
    assert items == []


def test_github_format(project):
    result = run("check", "--output-format", "github", "legacy.py", cwd=project)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 3
    pattern = re.compile(
        r"^::(warning|error) title=flydsl-ls \((FLY\d{3})\),file=legacy\.py,line=(\d+),col=(\d+),"
        r"endLine=(\d+),endColumn=(\d+)::legacy\.py:\d+:\d+: FLY\d{3} .+$"
    )
    for line in lines:
        assert pattern.match(line), line
    assert lines[0].startswith("::warning title=flydsl-ls (FLY101),file=legacy.py,line=4,col=8,endLine=4,endColumn=23::")


def test_kept_constructs_are_notes_not_warnings(tmp_path):
    # Non-default fastmath: the guide keeps the explicit op, FLY301 says so as information.
    (tmp_path / "k.py").write_text(
        "from flydsl.expr import arith\n"
        "def f(a, b):\n    return arith.MulFOp(a, b, fastmath=arith.FastMathFlags.fast).result\n",
        encoding="utf-8",
    )
    sarif = json.loads(run("check", "--output-format", "sarif", "--level", "information", "k.py", cwd=tmp_path).stdout)
    (result,) = sarif["runs"][0]["results"]
    assert (result["ruleId"], result["level"]) == ("FLY301", "note")
    github = run("check", "--output-format", "github", "--level", "information", "k.py", cwd=tmp_path).stdout
    assert github.startswith("::notice title=flydsl-ls (FLY301)")
    # By default a note is not shown (pyright's `--level`), and it is no error: the run passes.
    concise = run("check", "k.py", cwd=tmp_path)
    assert concise.returncode == 0, concise.stdout
    assert concise.stdout == "All checks passed! (1 file checked; 1 note not shown: `--level information` shows it)\n"
    assert json.loads(run("check", "--output-format", "json", "k.py", cwd=tmp_path).stdout) == []
    # Asked for, it is shown and counted apart; the run still passes.
    asked = run("check", "--level", "information", "k.py", cwd=tmp_path)
    assert asked.returncode == 0, asked.stdout
    assert asked.stdout.startswith("k.py:3:12: FLY301 ")
    assert "Found 0 errors and 1 note (constructs the guides keep) in 1 file checked." in asked.stdout
    (tmp_path / "k.py").write_text(
        (tmp_path / "k.py").read_text(encoding="utf-8") + "import flydsl.expr as fx\nx = fx.Int32(fx.Int32(1))\n",
        encoding="utf-8",
    )
    both = run("check", "k.py", cwd=tmp_path)
    assert both.returncode == 1
    assert "FLY301" not in both.stdout
    assert "Found 1 error in 1 file checked; 1 note not shown: `--level information` shows it." in both.stdout
    asked = run("check", "--level", "information", "k.py", cwd=tmp_path)
    assert "Found 1 error and 1 note (constructs the guides keep) in 1 file checked." in asked.stdout
    # `--level error`: the warning is left out too, and the run passes.
    errors_only = run("check", "--level", "error", "k.py", cwd=tmp_path)
    assert errors_only.returncode == 0, errors_only.stdout
    assert "2 findings below `--level error` not shown" in errors_only.stdout


def test_sarif_format(project):
    result = run("check", "--output-format", "sarif", ".", cwd=project)
    assert result.returncode == 1
    log = json.loads(result.stdout)
    assert log["version"] == "2.1.0"
    assert "sarif-2.1.0" in log["$schema"]
    (sarif_run,) = log["runs"]
    driver = sarif_run["tool"]["driver"]
    assert driver["name"] == "flydsl-ls"
    assert [r["id"] for r in driver["rules"]] == [r.code for r in ALL_RULES]
    assert all(installed_page(r["helpUri"]) == RULE_PAGES / f"{r['id']}.md" for r in driver["rules"])
    assert "informationUri" not in driver  # flydsl-ls has no public web page
    results = sarif_run["results"]
    assert [r["ruleId"] for r in results] == ["FLY101", "FLY104", "FLY901"]
    first = results[0]
    assert first["level"] == "warning"
    assert first["message"]["text"]
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == (project / "legacy.py").resolve().as_uri()
    assert location["region"] == {"startLine": 4, "startColumn": 8, "endLine": 4, "endColumn": 23}


def test_statistics_quiet_and_exit_zero(project):
    stats = run("check", "--statistics", "legacy.py", cwd=project)
    # As ruff prints it: only the table (count, code, fix marker, name), then the summary.
    assert stats.stdout.splitlines()[:3] == [
        "1\tFLY101\t[*] arith-value-wrapper",
        "1\tFLY104\t[*] redundant-wrap",
        "1\tFLY901\t[ ] deprecated-api",
    ]
    assert "legacy.py:" not in stats.stdout
    quiet = run("check", "-q", "legacy.py", cwd=project)
    assert "Found" not in quiet.stdout and quiet.stdout.count("\n") == 3
    assert run("check", "--exit-zero", "legacy.py", cwd=project).returncode == 0


# --- rule selection ---------------------------------------------------------------


@pytest.mark.parametrize(
    "flags,expected",
    [
        (["--select", "FLY101"], ["FLY101"]),
        (["--select", "FLY1"], ["FLY101", "FLY104"]),
        (["--select", "redundant-wrap,deprecated-api"], ["FLY104", "FLY901"]),
        (["--select", "ALL"], ["FLY101", "FLY104", "FLY901"]),
        (["--ignore", "FLY101"], ["FLY104", "FLY901"]),
        (["--ignore", "FLY9"], ["FLY101", "FLY104"]),
        (["--ignore", "arith-value-wrapper,FLY104"], ["FLY901"]),
        (["--select", "FLY1", "--ignore", "FLY104"], ["FLY101"]),
        (["--select", "fly104"], ["FLY104"]),
    ],
)
def test_select_and_ignore(project, flags, expected):
    _, items = check_json(*flags, "legacy.py", cwd=project)
    assert [i["code"] for i in items] == expected


@pytest.mark.parametrize("flag", ["--select", "--ignore"])
def test_unknown_selector_is_a_usage_error(project, flag):
    result = run("check", flag, "FLY101,NOPE", "legacy.py", cwd=project)
    assert result.returncode == 2
    assert "NOPE" in result.stderr
    assert result.stdout == ""


# --- rule / rules -----------------------------------------------------------------


def test_rule_prints_documentation(project):
    result = run("rule", "FLY101", cwd=project)
    assert result.returncode == 0
    assert result.stdout.startswith("# arith-value-wrapper (FLY101)\n")
    assert "## What it does" in result.stdout
    assert "# flydsl: ignore[FLY101]" in result.stdout
    by_name = run("rule", "arith-value-wrapper", cwd=project)
    assert by_name.stdout == result.stdout


def test_unknown_rule_is_exit_2(project):
    result = run("rule", "FLY999", cwd=project)
    assert result.returncode == 2
    assert "FLY999" in result.stderr
    assert result.stdout == ""


def test_rules_lists_every_rule(project):
    result = run("rules", cwd=project)
    assert result.returncode == 0
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines] == [r.code for r in ALL_RULES]
    for rule, line in zip(ALL_RULES, lines):
        assert rule.name in line
        assert line.endswith("[not in the default set: --extend-select FLY001]") == (rule.code == "FLY001")


def test_version_and_help(project):
    version = run("--version", cwd=project)
    assert version.returncode == 0 and version.stdout.startswith("flydsl-ls ")
    bare = run(cwd=project)
    assert bare.returncode == 2
    assert "check" in bare.stdout


# --- configuration ----------------------------------------------------------------


def test_pyproject_select_and_ignore(project):
    write_config(project, 'select = ["FLY1", "FLY9"]\nignore = ["redundant-wrap"]\n')
    _, items = check_json(".", cwd=project)
    assert [i["code"] for i in items] == ["FLY101", "FLY901"]


def test_command_line_overrides_pyproject(project):
    write_config(project, 'select = ["FLY101"]\n')
    _, items = check_json("--select", "FLY104", ".", cwd=project)
    assert [i["code"] for i in items] == ["FLY104"]


def test_pyproject_found_from_a_subfolder_file(project):
    write_config(project, 'ignore = ["FLY9"]\n')
    sub = project / "kernels" / "attention"
    sub.mkdir(parents=True)
    (sub / "k.py").write_text(LEGACY, encoding="utf-8")
    _, items = check_json(str(sub / "k.py"), cwd=ROOT)  # run from elsewhere
    assert [i["code"] for i in items] == ["FLY101", "FLY104"]


def test_nearest_pyproject_wins(project):
    write_config(project, 'select = ["FLY101"]\n')
    sub = project / "pkg"
    sub.mkdir()
    write_config(sub, 'select = ["FLY104"]\n')
    (sub / "k.py").write_text(LEGACY, encoding="utf-8")
    _, items = check_json(".", cwd=project)
    assert sorted(codes(items)) == [("k.py", "FLY104", 5), ("legacy.py", "FLY101", 4)]


def test_pyproject_without_our_table_is_skipped(project):
    write_config(project, 'ignore = ["FLY101"]\n')
    sub = project / "pkg"
    sub.mkdir()
    (sub / "pyproject.toml").write_text('[tool.ruff]\nline-length = 100\n', encoding="utf-8")
    (sub / "k.py").write_text(LEGACY, encoding="utf-8")
    _, items = check_json("pkg", cwd=project)
    assert [i["code"] for i in items] == ["FLY104", "FLY901"]


def test_per_file_ignores(project):
    (project / "gen").mkdir()
    (project / "gen" / "auto.py").write_text(LEGACY, encoding="utf-8")
    write_config(project, '[tool.flydsl-ls.per-file-ignores]\n"legacy.py" = ["FLY101"]\n"gen/*" = ["FLY1", "deprecated-api"]\n')
    _, items = check_json(".", cwd=project)
    assert codes(items) == [("legacy.py", "FLY104", 5), ("legacy.py", "FLY901", 6)]


def test_exclude(project):
    (project / "third_party").mkdir()
    (project / "third_party" / "vendored.py").write_text(LEGACY, encoding="utf-8")
    (project / "old_kernel.py").write_text(LEGACY, encoding="utf-8")
    write_config(project, 'exclude = ["third_party", "old_*.py"]\n')
    result, items = check_json(".", cwd=project)
    assert {Path(i["filename"]).name for i in items} == {"legacy.py"}
    concise = run("check", ".", cwd=project)
    assert "in 2 files checked" in concise.stdout  # legacy.py and clean.py
    # As in ruff, a file named on the command line is checked even when excluded.
    _, explicit = check_json("old_kernel.py", cwd=project)
    assert len(explicit) == 3


def test_default_excludes(project):
    venv = project / ".venv" / "lib"
    venv.mkdir(parents=True)
    (venv / "site.py").write_text(LEGACY, encoding="utf-8")
    _, items = check_json(".", cwd=project)
    assert {Path(i["filename"]).name for i in items} == {"legacy.py"}


def test_flydsl_version_past_a_declared_removal_says_the_release_still_has_it(project):
    write_config(project, 'flydsl-version = "0.5.0"\n')
    _, items = check_json("legacy.py", cwd=project)
    (deprecated,) = [i for i in items if i["code"] == "FLY901"]
    assert "past its declared removal in FlyDSL 0.4: 0.5.0 still has it, a later release may not" in deprecated["message"]
    github = run("check", "--output-format", "github", "legacy.py", cwd=project)
    # 0.5.0 still has `fx.get`: a warning, not an error (an error once the release drops it).
    assert "::warning title=flydsl-ls (FLY901)" in github.stdout
    assert "::warning title=flydsl-ls (FLY101)" in github.stdout
    # The command line wins over pyproject.
    _, older = check_json("--flydsl-version", "0.3.1", "legacy.py", cwd=project)
    (deprecated,) = [i for i in older if i["code"] == "FLY901"]
    assert "declared removal in FlyDSL 0.4" in deprecated["message"]


def test_target_arch_is_accepted(project):
    write_config(project, 'target-arch = "gfx942"\n')
    result = run("check", "legacy.py", cwd=project)
    assert result.returncode == 1
    assert result.stderr == ""
    assert run("check", "--target-arch", "gfx950", "legacy.py", cwd=project).returncode == 1


def test_snake_case_keys_are_accepted(project):
    write_config(project, 'flydsl_version = "0.5.0"\n')
    result, items = check_json("legacy.py", cwd=project)
    assert result.stderr == ""
    assert any("past its declared removal" in i["message"] for i in items)


def test_unknown_config_key_warns_and_runs(project):
    write_config(project, 'select = ["FLY101"]\nline-length = 100\n')
    result = run("check", ".", cwd=project)
    assert result.returncode == 1
    assert "warning:" in result.stderr and "line-length" in result.stderr
    assert result.stderr.count("line-length") == 1  # once, not once per file
    assert "FLY101" in result.stdout


def test_bad_toml_is_exit_2(project):
    (project / "pyproject.toml").write_text("[tool.flydsl-ls\nselect = [\n", encoding="utf-8")
    result = run("check", ".", cwd=project)
    assert result.returncode == 2
    assert "pyproject.toml" in result.stderr and "invalid TOML" in result.stderr


@pytest.mark.parametrize(
    "text",
    [
        'tool = "x"\nproject = 3\n',
        '[project]\ndependencies = "flydsl==0.5.0"\noptional-dependencies = 3\n[tool]\npoetry = 5\n[tool.flydsl-ls]\n',
        "[project]\noptional-dependencies = { dev = 3 }\n[tool.poetry]\ndependencies = []\n",
    ],
)
def test_other_tables_of_odd_shape_are_not_our_error(project, text):
    """pyproject.toml's other tables (project, tool.poetry: read for a FlyDSL pin) may hold
    anything: flydsl-ls reads what it can and checks the files."""
    (project / "pyproject.toml").write_text(text, encoding="utf-8")
    (project / "requirements.txt").unlink()  # so that the pin is looked for in pyproject.toml
    result = run("check", "legacy.py", cwd=project)
    assert result.returncode == 1, result.stderr
    assert "FLY101" in result.stdout
    assert result.stderr == ""


@pytest.mark.parametrize(
    "body,message",
    [
        # every setting of the README's table, given a value of the wrong type
        ("select = 3\n", "`select` must be a list of strings, got a number (3)"),
        ('select = "FLY104"\n', '`select` must be a list of strings, got a string (\'FLY104\') (write ["FLY104"])'),
        ('ignore = "redundant-wrap"\n', "`ignore` must be a list of strings, got a string"),
        ("ignore = [1]\n", "`ignore` must be a list of strings, got a list ([1])"),
        ('exclude = "third_party"\n', "`exclude` must be a list of strings, got a string"),
        ("target-arch = 942\n", "`target-arch` must be a string, got a number (942)"),
        ("flydsl-version = 5\n", "`flydsl-version` must be a string, got a number (5)"),
        ("cache-dir = false\n", "`cache-dir` must be a string, got a boolean (False)"),
        ('per-file-ignores = ["FLY1"]\n', "`per-file-ignores` must be a table of pattern = [codes], got a list"),
        ('[tool.flydsl-ls.per-file-ignores]\n"a.py" = "FLY104"\n', "`per-file-ignores.a.py` must be a list of strings"),
        # values of the right type that name nothing
        ('select = ["FLY1", "BOGUS"]\n', "unknown rule selector(s): BOGUS"),
        ('[tool.flydsl-ls.per-file-ignores]\n"a.py" = ["NOPE"]\n', "NOPE"),
        ('target-arch = "gfx999"\n', "`target-arch`: unknown GPU arch `gfx999`; known arches: gfx900, "),
        ('flydsl-version = "banana"\n', "`flydsl-version`: `banana` is not a FlyDSL release number; known releases: "),
    ],
)
def test_invalid_config_values_are_exit_2(project, body, message):
    write_config(project, body)
    result = run("check", ".", cwd=project)
    assert result.returncode == 2
    assert message in result.stderr
    assert result.stdout == ""


def test_every_config_problem_is_reported_at_once(project):
    write_config(project, 'select = "FLY104"\ntarget-arch = "gfx999"\nflydsl-version = "banana"\n')
    result = run("check", ".", cwd=project)
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if "pyproject.toml" in line]
    assert len(lines) == 3, result.stderr
    assert "gfx942, gfx950" in result.stderr and "0.4.2, 0.5.0" in result.stderr  # what is known


def test_target_ids_and_release_numbers_are_accepted(project):
    write_config(project, 'target-arch = "gfx942:sramecc+:xnack-"\nflydsl-version = "0.6.0rc1"\n')
    result = run("check", "legacy.py", cwd=project)
    assert result.returncode == 1, result.stderr
    assert result.stderr == ""


@pytest.mark.parametrize(
    "flag,value,message",
    [
        ("--target-arch", "gfx999", "unknown GPU arch `gfx999`; known arches: gfx900, "),
        ("--flydsl-version", "banana", "`banana` is not a FlyDSL release number; known releases: 0.2.0, "),
    ],
)
def test_unknown_arch_or_release_on_the_command_line_is_exit_2(project, flag, value, message):
    result = run("check", flag, value, "legacy.py", cwd=project)
    assert result.returncode == 2
    assert f"argument {flag}: {message}" in result.stderr
    assert result.stdout == ""


# --- suppression comments ---------------------------------------------------------


def test_suppression_comments(project):
    source = HEADER + (
        "tid = fx.thread_idx.x\n"
        "a = ArithValue(tid)  # flydsl: ignore[FLY101]\n"  # 4: suppressed by code
        "b = ArithValue(tid)  # flydsl: ignore\n"  # 5: suppressed, bare
        "c = ArithValue(tid)\n"  # 6: reported
        "d = ArithValue(tid)  # flydsl: ignore[FLY104]\n"  # 7: other code, reported
        "e = ArithValue(fx.Int32(fx.Int32(1)))  # flydsl: ignore[FLY101, FLY104]\n"  # 8
        "f = ArithValue(fx.Int32(fx.Int32(1)))  # flydsl: ignore[FLY104]\n"  # 9: FLY101 only
    )
    (project / "s.py").write_text(source, encoding="utf-8")
    _, items = check_json("s.py", cwd=project)
    assert [(i["code"], i["location"]["row"]) for i in items] == [("FLY101", 6), ("FLY101", 7), ("FLY101", 9)]


def test_suppression_text_in_a_string_does_not_suppress(project):
    source = HEADER + 'tid = fx.thread_idx.x\nc = (ArithValue(tid), "# flydsl: ignore")\n'
    (project / "s.py").write_text(source, encoding="utf-8")
    _, items = check_json("s.py", cwd=project)
    assert [(i["code"], i["location"]["row"]) for i in items] == [("FLY101", 4)]


# --- bad input ----------------------------------------------------------------------


def test_syntax_error_gives_one_fly000_the_rest_is_checked_and_the_run_continues(project):
    (project / "broken.py").write_text("import flydsl.expr as fx\n\ndef kernel(:\n    x = fx.Int32(fx.Int32(1))\n", encoding="utf-8")
    result, items = check_json(".", cwd=project)
    assert result.returncode == 1
    broken = [i for i in items if Path(i["filename"]).name == "broken.py"]
    # The broken line stands in as code that parses (recovery): the body is still checked,
    # but nothing on a file that does not parse is offered a fix.
    assert [(i["code"], i["location"]["row"], i["location"]["column"]) for i in broken] == [("FLY000", 3, 12), ("FLY104", 4, 9)]
    assert [i["fix"] for i in broken] == [None, None]
    assert [i["code"] for i in items if Path(i["filename"]).name == "legacy.py"] == ["FLY101", "FLY104", "FLY901"]


def test_syntax_error_even_with_select(project):
    (project / "broken.py").write_text("x = (1,\n", encoding="utf-8")
    _, items = check_json("--select", "FLY000", "broken.py", cwd=project)
    assert [i["code"] for i in items] == ["FLY000"]


NOT_UTF8 = b"\xff\xfeimport flydsl.expr as fx\nx = 1\n"


def test_non_utf8_file_is_reported_and_skipped(project):
    (project / "utf16ish.py").write_bytes(NOT_UTF8)
    result = run("check", ".", cwd=project)
    assert result.returncode == 1  # legacy.py still has findings
    assert "utf16ish.py" in result.stderr and "skipped" in result.stderr
    assert "utf16ish.py" not in result.stdout
    assert "Found 3 errors in 2 files checked." in result.stdout


def test_non_utf8_file_next_to_clean_files_exits_0(project):
    (project / "utf16ish.py").write_bytes(NOT_UTF8)
    result = run("check", "utf16ish.py", "clean.py", cwd=project)
    assert result.returncode == 0
    assert "utf16ish.py" in result.stderr


def test_non_utf8_file_alone_exits_2(project):
    (project / "utf16ish.py").write_bytes(NOT_UTF8)
    result = run("check", "utf16ish.py", cwd=project)
    assert result.returncode == 2
    assert "utf16ish.py" in result.stderr
    assert "All checks passed" not in result.stdout


def test_invalid_utf8_after_the_first_lines(project):
    (project / "late.py").write_bytes(b"x = 1\ny = 2\n# caf\xe9\n")
    result = run("check", "late.py", cwd=project)
    assert result.returncode == 2
    assert "late.py" in result.stderr and "UTF-8" in result.stderr


def test_latin1_file_with_coding_cookie_is_checked(project):
    source = "# -*- coding: latin-1 -*-\nimport flydsl.expr as fx\n# café\nx = 'é' + str(fx.Int32(fx.Int32(1)))\n"
    (project / "latin.py").write_bytes(source.encode("latin-1"))
    result, items = check_json("latin.py", cwd=project)
    assert result.returncode == 1
    assert result.stderr == ""
    # Columns count characters (as ruff's do), not the UTF-8 bytes of `é`.
    assert [(i["code"], i["location"]["row"], i["location"]["column"]) for i in items] == [("FLY104", 4, 15)]


def test_utf8_bom_file_is_checked(project):
    (project / "bom.py").write_bytes(b"\xef\xbb\xbf" + LEGACY.encode("utf-8"))
    _, items = check_json("bom.py", cwd=project)
    assert [(i["code"], i["location"]["row"], i["location"]["column"]) for i in items][0] == ("FLY101", 4, 8)


def test_null_bytes_are_a_syntax_error_not_a_crash(project):
    (project / "nul.py").write_bytes(b"x = 1\x00\n")
    _, items = check_json("nul.py", cwd=project)
    assert [i["code"] for i in items] == ["FLY000"]


def test_missing_path_is_exit_2(project):
    result = run("check", "does_not_exist.py", cwd=project)
    assert result.returncode == 2
    assert "does_not_exist.py" in result.stderr
    assert "All checks passed" not in result.stdout


def test_missing_path_next_to_real_files_still_checks_them(project):
    result = run("check", "does_not_exist", "legacy.py", cwd=project)
    assert result.returncode == 2
    assert "does_not_exist" in result.stderr
    assert "legacy.py:4:8: FLY101" in result.stdout


def test_empty_folder_passes(tmp_path):
    (tmp_path / "empty").mkdir()
    result = run("check", "empty", cwd=tmp_path)
    # As ruff: no "All checks passed! (0 files checked)", a warning, success.
    assert result.returncode == 0
    assert result.stdout == ""
    assert result.stderr == "warning: No Python files found under the given path(s)\n"


def test_default_path_is_the_current_folder(project):
    result = run("check", cwd=project)
    assert result.returncode == 1
    assert "legacy.py:4:8: FLY101" in result.stdout


def test_explicit_non_py_file_is_checked(project):
    (project / "kernel.txt").write_text(LEGACY, encoding="utf-8")
    (project / "notes.md").write_text("ArithValue(x)\n", encoding="utf-8")
    _, items = check_json("kernel.txt", cwd=project)
    assert len(items) == 3
    _, walked = check_json(".", cwd=project)
    assert {Path(i["filename"]).name for i in walked} == {"legacy.py"}


@pytest.mark.parametrize("terms", [500, 5000])
def test_a_deeply_nested_file_is_analysed_and_fixed(tmp_path, terms):
    # A long flat sum is a left-nested chain of BinOps, deeper than Python's recursion
    # limit lets a recursive walk go: its findings must not be lost.
    body = " + ".join(f"x{i}" for i in range(terms))
    (tmp_path / "deep.py").write_text(
        "import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
        f"def f(t: fx.Int32, *x):\n    y = ArithValue(t) + 1\n    return {body}\n",
        encoding="utf-8",
    )
    result, items = check_json("deep.py", cwd=tmp_path)
    assert result.stderr == ""
    assert [(i["code"], i["location"]["row"]) for i in items] == [("FLY101", 4)]
    fixed = run("check", "--fix", "deep.py", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    # the import the fix left unused goes too, however deep the file
    lines = (tmp_path / "deep.py").read_text(encoding="utf-8").splitlines()
    assert lines[:3] == ["import flydsl.expr as fx", "def f(t: fx.Int32, *x):", "    y = t + 1"]


LEGACY_LINE = "from flydsl.expr.arith import ArithValue\ndef f(t):\n    return ArithValue(t) + 1\n"


def test_a_file_past_the_size_bound_is_skipped_with_the_reason(tmp_path):
    """A 10 MB one-line file (its tree alone: gigabytes): skipped at once, the run goes on."""
    (tmp_path / "data.py").write_text("x = [" + ", ".join(["1"] * 3_400_000) + "]\n", encoding="utf-8")
    (tmp_path / "legacy.py").write_text(LEGACY_LINE, encoding="utf-8")
    for jobs in ("1", "2"):
        result, items = check_json("-j", jobs, ".", cwd=tmp_path)
        assert "data.py: too large to analyse (10,200,005 bytes; the bound is 8,000,000)" in result.stderr
        assert "skipped" in result.stderr
        assert [i["code"] for i in items] == ["FLY101"]


def test_a_file_past_the_time_bound_is_skipped_with_the_reason(tmp_path):
    (tmp_path / "data.py").write_text("x = [" + ", ".join(["1"] * 200_000) + "]\n", encoding="utf-8")
    (tmp_path / "legacy.py").write_text(LEGACY_LINE, encoding="utf-8")
    for jobs in ("1", "2"):
        result = subprocess.run(
            [sys.executable, "-m", "flydsl_ls", "check", "--output-format", "json", "-j", jobs, "."],
            cwd=tmp_path, capture_output=True, text=True, timeout=120,
            env={**os.environ, "FLYDSL_LS_FILE_TIMEOUT": "0.05"},
        )
        assert "data.py: took longer than 0.05 s to analyse (FLYDSL_LS_FILE_TIMEOUT)" in result.stderr, result.stderr
        assert "Traceback" not in result.stderr


def test_serve_reports_a_bad_tcp_address_on_stderr(tmp_path):
    # Before a client connects there is no window/logMessage: the error goes to stderr.
    result = run("serve", "--tcp", "nonsense", cwd=tmp_path)
    assert result.returncode == 2
    assert "--tcp expects HOST:PORT" in result.stderr
