"""The README and docs/ against the repository: tables without repeated rows, links and
file references that resolve, and a "Command line" block the CLI really has."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").rglob("*.md")),
    ROOT / "benchmarks" / "README.md",
    ROOT / "editors" / "README.md",
]
DOCS = [path for path in DOCS if path.is_file()]
IDS = [path.relative_to(ROOT).as_posix() for path in DOCS]
# The repository's top-level folders: a `backticked/path` under one of them names our file.
# Hidden folders are not (.cache/ holds what .ci/run installs, present or not), except .ci/.
OURS = tuple(f"{p.name}/" for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")) + (".ci/",)
# Paths under those names that are another project's files, said so in the text.
ELSEWHERE = {
    "docs/api_stability.md": "FlyDSL's own docs (FLY901 cites its deprecation list)",
    "scripts/check_typed_arithmetic_usage.py": "FlyDSL's own guard (FLY301 follows it)",
}
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
_TICKED = re.compile(r"`([^`\s]+)`")


def prose(path: Path) -> str:
    """The text outside fenced code blocks (code samples hold paths of the reader's own)."""
    return _FENCE.sub("", path.read_text(encoding="utf-8"))


def tables(text: str) -> list[list[str]]:
    """Each Markdown table's body rows (after the header and its `|---|` line)."""
    found, rows, in_table = [], [], False
    for line in text.splitlines():
        if line.startswith("|"):
            if re.match(r"^\|[\s:|-]+\|$", line):
                in_table, rows = True, []
                found.append(rows)
            elif in_table:
                rows.append(line)
        else:
            in_table = False
    return found


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", prose(path), re.MULTILINE)}


def repeated_keys(rows: list[str]) -> list[str]:
    """The keys that more than one row of a table has. The key is the first cell, or the
    first two (`| FlyDSL | gfx942 |`, `| FlyDSL | gfx950 |`) when most first cells repeat by
    design, and so on."""
    cells = [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]
    for width in range(1, max((len(c) for c in cells), default=1) + 1):
        keys = [" | ".join(c[:width]) for c in cells]
        if 2 * sum(keys.count(key) == 1 for key in keys) > len(keys):
            return sorted({key for key in keys if keys.count(key) > 1})
    return []


@pytest.mark.parametrize("path", DOCS, ids=IDS)
def test_no_table_repeats_a_row(path):
    for rows in tables(prose(path)):
        repeated = repeated_keys(rows)
        assert not repeated, f"{path.name}: rows repeated in one table: {repeated}"


@pytest.mark.parametrize("path", DOCS, ids=IDS)
def test_relative_links_resolve(path):
    broken = []
    for match in _LINK.finditer(prose(path)):
        target = match.group(1) or match.group(2)
        if re.match(r"^[a-z]+:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        resolved = (path.parent / file).resolve() if file else path
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading #{anchor} in {resolved.name}")
    assert not broken, broken


@pytest.mark.parametrize("path", DOCS, ids=IDS)
def test_referenced_files_exist(path):
    """`tests/test_layers.py`, `editors/nvim/...`: a path under one of our folders, or a
    top-level document (DESIGN.md), names a file of this repository."""
    text = prose(path)
    missing = []
    for match in _TICKED.finditer(text):
        name = match.group(1).rstrip("/").split("::")[0].replace("FLYnnn", "FLY101")  # a placeholder
        ours = name.startswith(OURS) and not any(c in name for c in "*<>{}$") and name not in ELSEWHERE
        if ours and not (ROOT / name).exists():
            missing.append(name)
    for match in re.finditer(r"(?<![\w/.-])([A-Z][A-Z_-]+\.md)\b", text):
        if not (ROOT / match.group(1)).exists() and not (path.parent / match.group(1)).exists():
            missing.append(match.group(1))
    assert not missing, f"{path.name} names files the repository does not have: {missing}"


def test_no_reference_to_issues_outside_the_repository():
    """"issue 9" means nothing to a reader of the repository: say what is meant."""
    for path in DOCS:
        found = re.findall(r"\b[Ii]ssue \d+", prose(path))
        assert not found, f"{path.name}: {found}"


def _readme_commands() -> list[list[str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Command line", 1)[1]
    block = re.search(r"```text\n(.*?)```", section, re.DOTALL).group(1)
    return [line.split("  ")[0].split() for line in block.splitlines() if line.startswith("flydsl-ls ")]


def _help(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "flydsl_ls", *args, "--help"], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_readme_command_block_is_the_cli():
    """Every subcommand the CLI has is in the README's block, and each line's options are in
    that subcommand's --help."""
    commands = _readme_commands()
    listed = [words[1] for words in commands]
    available = re.findall(r"^    ([a-z]+)(?:\s|$)", _help(), re.MULTILINE)  # under `COMMAND`
    assert sorted(listed) == sorted(available)
    for words in commands:
        path = [words[1], *(w for w in words[2:3] if re.fullmatch(r"[a-z]+", w))]  # `example add`
        usage = _help(*path)
        for option in (w.strip("[]") for w in words[2:]):
            if option.startswith("-"):
                assert option in usage, f"`{' '.join(words)}`: {option} is not an option of {' '.join(path)}"


def test_readme_check_options_are_the_cli():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Command line", 1)[1].split("\n## ", 1)[0]
    (options_table,) = [rows for rows in tables(section) if rows and rows[0].startswith("| `--")]
    usage = _help("check")
    for row in options_table:
        for option in re.findall(r"`(-[\w-]+)", row.split("|")[1]):
            assert option in usage, f"README's `check` option {option} is not in `flydsl-ls check --help`"


def test_neovim_commands_are_described_once():
    """docs/editors/neovim.md describes each `:Flydsl*` command of the shipped config in one
    place."""
    text = prose(ROOT / "docs" / "editors" / "neovim.md")
    config = (ROOT / "editors/nvim/lsp/flydsl_ls.lua").read_text()
    shipped = re.findall(r"^  (Flydsl\w+) = \{", config, re.MULTILINE)  # the server's commands
    shipped += re.findall(r"create_user_command\(bufnr, '(Flydsl\w+)'", config)  # its own
    assert shipped
    # a row of a table, or elsewhere a synopsis with arguments (`:FlydslCompile [example] [arch]`)
    rows = re.findall(r"^\| `:(Flydsl\w+)", text, re.MULTILINE)
    prose_lines = "\n".join(line for line in text.splitlines() if not line.startswith("|"))
    synopses = re.findall(r"`:(Flydsl\w+) \[[^`]*`", prose_lines)
    assert sorted(rows + synopses) == sorted(shipped), "each command once, every command"


# --- rule pages: each flagged example, fixed by `flydsl-ls check --fix` with the page's settings

_SETTINGS = re.compile(r"^With ((?:`[\w-]+ = \"[^\"]*\"`(?: and )?)+) in `\[tool\.flydsl-ls\]`")
_LABELS = {"Fixed (safe fix):": "safe", "With `--unsafe-fixes` (unsafe fix):": "unsafe", "No fix is offered.": None}


def page_examples(page: Path) -> list[dict]:
    """The page's "Flagged" examples: settings (pyproject lines), code, fix kind, fixed text."""
    section = page.read_text(encoding="utf-8").split("\n## Flagged\n", 1)[1].split("\n## ", 1)[0]
    parts = re.split(r"^```python\n(.*?)^```$", section, flags=re.MULTILINE | re.DOTALL)
    # parts: text, code, text, code, ...: each example is [settings] code label [fixed code]
    examples = []
    i = 1
    while i < len(parts):
        before = parts[i - 1].strip().split("\n\n")[-1]  # the paragraph just above the code
        match = _SETTINGS.match(before)
        settings = re.findall(r"`([\w-]+ = \"[^\"]*\")`", match.group(1)) if match else []
        label = parts[i + 1].strip().splitlines()[0] if parts[i + 1].strip() else ""
        assert label in _LABELS, f"{page.name}: after an example, {label!r}"
        kind = _LABELS[label]
        examples.append(
            {"settings": settings, "code": parts[i], "fix": kind, "fixed": parts[i + 2] if kind else parts[i]}
        )
        i += 4 if kind else 2
    return examples


RULE_PAGES = sorted((ROOT / "docs" / "rules").glob("FLY*.md"))


def test_every_fixable_rule_page_shows_a_fix():
    for page in RULE_PAGES:
        fix_line = re.search(r"^Fix: (.*)$", page.read_text(encoding="utf-8"), re.MULTILINE).group(1)
        fixable = not fix_line.startswith("none")
        shown = [example["fix"] for example in page_examples(page)]
        assert any(shown) == fixable, f"{page.name}: `Fix: {fix_line}`, examples: {shown}"


def test_rule_page_examples_are_what_check_fix_writes(tmp_path):
    """Every "Flagged" example of every page, written to a project with the page's settings
    (and only that rule selected; an opt-in rule, which judges the others' findings (FLY001),
    added to the default rules as its page says), then `flydsl-ls check --fix` (with
    `--unsafe-fixes` where the page says so): each file must read as the page's fixed text,
    or stay as it was where the page says no fix is offered."""
    expected: dict[Path, str] = {}
    for page in RULE_PAGES:
        key = "extend-select" if "Not in the default set: `--extend-select" in page.read_text(encoding="utf-8") else "select"
        for n, example in enumerate(page_examples(page)):
            mode = "safe" if example["fix"] == "safe" else "unsafe"
            folder = tmp_path / mode / f"{page.stem}_{n}"
            folder.mkdir(parents=True)
            (folder / "pyproject.toml").write_text(
                "\n".join(["[tool.flydsl-ls]", f'{key} = ["{page.stem}"]', *example["settings"]]) + "\n"
            )
            (folder / "example.py").write_text(example["code"])
            expected[folder / "example.py"] = example["fixed"]
    for mode, flags in (("safe", ["--fix"]), ("unsafe", ["--fix", "--unsafe-fixes"])):
        done = subprocess.run(
            [sys.executable, "-m", "flydsl_ls", "check", *flags, "--quiet", str(tmp_path / mode)],
            capture_output=True, text=True, timeout=300, cwd=tmp_path,
        )
        assert done.returncode in (0, 1), done.stderr
        assert "error" not in done.stderr, done.stderr
    wrong = {
        f"{path.parent.parent.name}/{path.parent.name}": path.read_text()
        for path, text in expected.items()
        if path.read_text() != text
    }
    assert not wrong, wrong
    assert len(expected) > 2 * len(RULE_PAGES)


def test_no_install_command_assumes_a_published_package():
    """No flydsl-ls package is on PyPI: every install command takes a checkout (`-e .`, a
    path) or a built wheel, in the docs and in what the programs tell the user."""
    published = re.compile(r"pip install [^\n`&;|]*?(?<![\w/.-])[\"']?flydsl-ls(?:\[[\w,]+\])?[\"']?(?![\w/.-])")
    texts = {path: path.read_text(encoding="utf-8") for path in DOCS}
    for folder, pattern in (("flydsl_ls", "*.py"), ("vscode-extension/src", "*.ts"), ("editors", "*.lua")):
        texts.update({path: path.read_text(encoding="utf-8") for path in (ROOT / folder).rglob(pattern)})
    texts[ROOT / "vscode-extension" / "README.md"] = (ROOT / "vscode-extension" / "README.md").read_text()
    found = {str(path.relative_to(ROOT)): published.findall(text) for path, text in texts.items()}
    assert not {path: hits for path, hits in found.items() if hits}
