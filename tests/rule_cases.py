"""Running a rule's embedded VALID/INVALID cases (shared by the rule tests and hypothesis)."""

from __future__ import annotations

from pathlib import Path

from flydsl_ls.actions.elsewhere import OtherFiles
from flydsl_ls.actions.fixes import fix_all
from flydsl_ls.analysis.engine import AnalysisRequest, analyze
from flydsl_ls.analysis.model.project import ProjectIndex
from flydsl_ls.analysis.rules import ALL_RULES
from flydsl_ls.analysis.rules.context import AnalysisOptions


def options(settings: dict) -> AnalysisOptions:
    return AnalysisOptions(**settings)


def diagnostics(code: str, source: str, settings: dict | None = None, project: CaseProject | None = None):
    where = {} if project is None else project.request()
    result = analyze(AnalysisRequest(source, options=options(settings or {}), **where))
    assert not result.internal_errors, result.internal_errors
    return [d for d in result.diagnostics if d.code == code]


def fixed(
    code: str, source: str, unsafe: bool, settings: dict | None = None, project: CaseProject | None = None
) -> str:
    others = project.others if project is not None else None
    return fix_all(
        source, lambda text: diagnostics(code, text, settings, project), unsafe=unsafe, others=others
    ).text


class CaseProject:
    """A case with other project files (``Invalid.files``): written under ``root/pkg``, the
    case itself as ``pkg/kernel.py``; ``others`` keeps what fixes write to the other files."""

    def __init__(self, root: Path, files: dict[str, str], source: str):
        package = root / "pkg"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("", encoding="utf-8")
        self.path = package / "kernel.py"
        self.path.write_text(source, encoding="utf-8")
        for name, text in files.items():
            (package / name).write_text(text, encoding="utf-8")
        self.package = package
        self.index = ProjectIndex(files=sorted(package.glob("*.py")))
        self.others = OtherFiles()

    def request(self) -> dict:
        path = self.path.resolve()
        return {"package": "pkg", "path": str(path), "project": self.index.view(path, "pkg")}

    def after(self) -> dict[str, str]:
        """The other files' texts after the fixes, by their name in the package."""
        return {Path(p).name: after for p, (_before, after) in self.others.changed().items()}


def all_cases():
    for rule in ALL_RULES:
        for index, case in enumerate(rule.VALID):
            yield rule, "valid", index, case
        for index, case in enumerate(rule.INVALID):
            yield rule, "invalid", index, case
