"""examples/legacy_waitcnt.py with a known arch: which FLY401-403 fixes are safe, and what
`--fix` (safe only) and `--fix --unsafe-fixes` make of it."""

from __future__ import annotations

from pathlib import Path

from flydsl_ls.actions.fixes import fix_all, parses
from flydsl_ls.analysis.engine import AnalysisRequest, analyze
from flydsl_ls.analysis.rules import BY_CODE
from flydsl_ls.analysis.rules.context import AnalysisOptions

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "legacy_waitcnt.py"
CODES = ("FLY401", "FLY402", "FLY403")
RULES = tuple(BY_CODE[code] for code in CODES)
GFX942 = AnalysisOptions(target_arch="gfx942", flydsl_version="0.5.0")


def lint(text: str, options: AnalysisOptions = GFX942):
    result = analyze(AnalysisRequest(text, rules=RULES, options=options))
    assert not result.internal_errors, result.internal_errors
    return result.diagnostics


def test_fix_safety_with_a_known_arch():
    found = {
        (d.code, d.range.start.line + 1): d.fix.applicability.value if d.fix else None
        for d in lint(EXAMPLE.read_text(encoding="utf-8"))
    }
    assert found == {
        ("FLY402", 22): "unsafe",
        ("FLY402", 36): "unsafe",
        ("FLY402", 46): "safe",
        ("FLY401", 55): "safe",
        ("FLY401", 59): "safe",
        ("FLY403", 60): "safe",
        ("FLY403", 61): "safe",
        ("FLY401", 64): "unsafe",
        ("FLY401", 65): "safe",
        ("FLY401", 66): None,
    }


def test_no_waitcnt_fix_without_an_arch():
    diagnostics = lint(EXAMPLE.read_text(encoding="utf-8"), AnalysisOptions())
    assert all(d.fix is None for d in diagnostics if d.code == "FLY401")
    assert any("target-arch" in d.message for d in diagnostics if d.code == "FLY401")


def test_safe_fixes_then_unsafe_fixes():
    source = EXAMPLE.read_text(encoding="utf-8")
    safe = fix_all(source, lint).text
    assert parses(safe)
    changed = [line.strip() for line in safe.splitlines() if line not in source.splitlines()]
    assert changed == [
        "fx.rocdl.s_waitcnt(vmcnt=0, lgkmcnt=0, expcnt=0)  # FLY401: vmcnt=0, lgkmcnt=0, expcnt=0 (never narrowed)",
        "fx.rocdl.s_waitcnt(lgkmcnt=0)  # FLY401: lgkmcnt=0 (safe on gfx942)",
        "fx.rocdl.sched_group_barrier(ds_read_group, 2, 0)  # FLY403: fx.rocdl wrapper (safe)",
        "fx.rocdl.sched_group_barrier(mfma_group, 1, 0)  # FLY403: fx.rocdl wrapper (safe)",
        "fx.rocdl.s_waitcnt(lgkmcnt=0)  # FLY401: a shim and a magic constant -> lgkmcnt=0",
    ]
    assert "_VMCNT_HI_SHIFT" not in safe  # the dead local constant went
    assert "def _waitcnt_vm_n" in safe  # module level: unsafe, kept by --fix
    # _LGKMCNT_0_ONLY is module level: dead now, but only an unsafe fix deletes it.
    assert ("FLY402", "_LGKMCNT_0_ONLY") in {
        (d.code, d.message.split("`")[1]) for d in lint(safe) if d.code == "FLY402"
    }
    assert fix_all(safe, lint).text == safe  # idempotent

    everything = fix_all(source, lint, unsafe=True).text
    assert parses(everything)
    assert fix_all(everything, lint, unsafe=True).text == everything
    remaining = [(d.code, d.range.start.line + 1) for d in lint(everything)]
    assert remaining == [("FLY401", everything.splitlines().index(
        "        rocdl.s_waitcnt(traits_lgkm)  # FLY401: a parameter, no fix") + 1)]
    for gone in ("_encode_waitcnt", "_s_waitcnt", "_waitcnt_vm_n", "_VMCNT_LO_MASK", "_LGKMCNT_0_ONLY"):
        assert gone not in everything, gone
    assert "rocdl_dialect" not in everything  # the raw import went with its last use


def test_shims_defined_in_a_sibling_module(tmp_path):
    """With the project known, an imported shim is evaluated from its real body: the
    forwarder gets a safe fix, a helper that is not a plain forwarder is not flagged."""
    from flydsl_ls.analysis.model.sources import package_of

    files = {
        "kern/__init__.py": "",
        "kern/utils.py": (
            "from flydsl.expr import rocdl\n\n_BASE = 0x0F70\n\n\n"
            "def _s_waitcnt(val):\n    rocdl.s_waitcnt(val)\n\n\n"
            "def _waitcnt_vm_n(n):\n    rocdl.s_waitcnt((n & 0xF) | _BASE)\n\n\n"
            "def _encode_waitcnt(lgkmcnt=15):\n    return 0xC07F & ~0xF00 | (lgkmcnt << 8)\n\n\n"
            "def _s_waitcnt_and_barrier(val):\n    rocdl.s_waitcnt(val)\n    rocdl.s_barrier()\n"
        ),
        "kern/attn.py": (
            "import flydsl.expr as fx\nfrom flydsl.expr import rocdl\n"
            "from .utils import _s_waitcnt, _waitcnt_vm_n, _s_waitcnt_and_barrier\n"
            "from kern import utils as u\n\n"
            "def body():\n    _s_waitcnt(0xC07F)\n    _waitcnt_vm_n(3)\n"
            "    rocdl.s_waitcnt(u._encode_waitcnt(lgkmcnt=2))\n    _s_waitcnt_and_barrier(0)\n"
        ),
    }
    _, path, found = _analysed_with_project(tmp_path, files, "kern/attn.py")
    assert found == [
        (7, "safe", "fx.rocdl.s_waitcnt(lgkmcnt=0)"),
        (8, "safe", "fx.rocdl.s_waitcnt(vmcnt=3)"),
        (9, "safe", "fx.rocdl.s_waitcnt(lgkmcnt=2)"),
    ]
    # Without the project, the known legacy names are taken on trust: unsafe at best.
    alone = analyze(AnalysisRequest(path.read_text(), rules=RULES, options=GFX942, package=package_of(path)))
    assert [(d.range.start.line + 1, d.fix.applicability.value if d.fix else None) for d in alone.diagnostics] == [
        (7, "unsafe"),
        (8, "unsafe"),
        (9, "unsafe"),
    ]


def test_dead_shims_another_project_file_uses_are_kept(tmp_path):
    from flydsl_ls.analysis.model.project import ProjectIndex
    from flydsl_ls.analysis.model.sources import package_of

    files = {
        "kern/__init__.py": "",
        "kern/utils.py": (
            "from flydsl.expr import rocdl\n\n_VMCNT_LO_MASK = 0xF\n_LGKMCNT_0_ONLY = 0xC07F\n\n\n"
            "def _s_waitcnt(val):\n    rocdl.s_waitcnt(val)\n\n\n"
            "def _waitcnt_vm_n(n):\n    rocdl.s_waitcnt((n & _VMCNT_LO_MASK) | 0x0F70)\n"
        ),
        "kern/attn.py": "from .utils import _s_waitcnt, _LGKMCNT_0_ONLY\n\n_s_waitcnt(_LGKMCNT_0_ONLY)\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    index = ProjectIndex(files=sorted(tmp_path.rglob("*.py")))
    path = tmp_path / "kern/utils.py"
    source = path.read_text()

    def flagged(project):
        result = analyze(AnalysisRequest(source, rules=RULES, options=GFX942, package=package_of(path), project=project))
        return [(d.message.split("`")[1], d.fix.applicability.value) for d in result.diagnostics if d.code == "FLY402"]

    # attn.py imports _s_waitcnt and _LGKMCNT_0_ONLY: only the vm-only shim and its mask are dead.
    assert flagged(index.view(path, package_of(path))) == [("_VMCNT_LO_MASK", "unsafe"), ("_waitcnt_vm_n", "unsafe")]
    # One file alone: everything private and unused here is flagged (unsafe).
    assert [name for name, _ in flagged(None)] == ["_VMCNT_LO_MASK", "_LGKMCNT_0_ONLY", "_s_waitcnt", "_waitcnt_vm_n"]


def test_a_magic_field_read_through_an_object_takes_the_value_the_project_gives_it(tmp_path):
    """`traits.LGKMCNT_0_ONLY` gets an (unsafe) fix when every project file that sets a field
    so named sets the same bitfield; none when two files disagree."""
    from flydsl_ls.analysis.model.project import ProjectIndex
    from flydsl_ls.analysis.model.sources import package_of

    kernel = "import flydsl.expr as fx\n\ndef body(traits):\n    fx.rocdl.s_waitcnt(traits.LGKMCNT_0_ONLY)\n"

    def fixes(traits_files: dict) -> list:
        root = tmp_path / str(len(list(tmp_path.iterdir())))
        for name, text in {"kern/__init__.py": "", "kern/attn.py": kernel, **traits_files}.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        path = root / "kern/attn.py"
        view = ProjectIndex(files=sorted(root.rglob("*.py"))).view(path, package_of(path))
        result = analyze(AnalysisRequest(kernel, rules=RULES, options=GFX942, package=package_of(path), project=view))
        return [(d.fix.applicability.value, d.fix.edits[0].content) if d.fix else None for d in result.diagnostics]

    make = "def make(**kw):\n    return kw\n\n"
    agree = {
        "kern/a.py": make + "A = make(LGKMCNT_0_ONLY=0xC07F)\n",
        "kern/b.py": "class T:\n    LGKMCNT_0_ONLY = 0xC07F\n",
    }
    assert fixes(agree) == [("unsafe", "fx.rocdl.s_waitcnt(lgkmcnt=0)")]
    assert fixes({**agree, "kern/c.py": make + "C = make(LGKMCNT_0_ONLY=0x0F70)\n"}) == [None]


def test_sibling_shims_whose_names_do_not_say_waitcnt(tmp_path):
    """A sibling's forwarder or encoder is found by its body, whatever its name; a call of a
    sibling module without `s_waitcnt` or a counter parameter is never one (answered from its
    text, without its model)."""
    files = {
        "kern/__init__.py": "",
        "kern/sync.py": (
            "from flydsl.expr import rocdl\n\n\n"
            "def wait_lds(n):\n    rocdl.s_waitcnt(0xC07F & ~0xF00 | (n << 8))\n\n\n"
            "def lds_bits(lgkmcnt):\n    return 0xC07F & ~0xF00 | (lgkmcnt << 8)\n"
        ),
        "kern/math.py": "def scale(n):\n    return n << 8\n",
        "kern/attn.py": (
            "from flydsl.expr import rocdl\n"
            "from .sync import wait_lds, lds_bits\nfrom .math import scale\n\n"
            "def body():\n    wait_lds(0)\n    rocdl.s_waitcnt(lds_bits(2))\n    scale(3)\n"
        ),
    }
    index, path, found = _analysed_with_project(tmp_path, files, "kern/attn.py")
    assert found == [
        (6, "safe", "fx.rocdl.s_waitcnt(lgkmcnt=0)"),
        (7, "safe", "fx.rocdl.s_waitcnt(lgkmcnt=2)"),
    ]
    # what was read of each sibling, its model or its text, is what the file depends on
    read = index.dependencies(path).reads
    assert {(tmp_path / "kern/sync.py").resolve(), (tmp_path / "kern/math.py").resolve()} <= read
    assert index.stats.models == 1  # sync.py's: math.py's text showed it holds no helper


def _analysed_with_project(root, files: dict[str, str], checked: str):
    """Write ``files`` under ``root`` and analyse ``checked`` with the project index over
    them: (index, its path, [(line, fix applicability, first edit's text)])."""
    from flydsl_ls.analysis.model.project import ProjectIndex
    from flydsl_ls.analysis.model.sources import package_of

    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    index = ProjectIndex(files=sorted(root.rglob("*.py")))
    path = root / checked
    view = index.view(path, package_of(path))
    result = analyze(AnalysisRequest(path.read_text(), rules=RULES, options=GFX942, package=package_of(path), project=view))
    found = [(d.range.start.line + 1, d.fix.applicability.value if d.fix else None, d.fix.edits[0].content if d.fix else None) for d in result.diagnostics]
    return index, path, found
