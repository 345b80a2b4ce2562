import ast

from flydsl_ls.analysis.model.sources import package_of
from flydsl_ls.analysis.rules.base import Invalid, Rule, Valid

FUNCTION = "_run_compiled"
# The copy guide 000 names as the one to reuse.
_PREFERRED = "tensor_shim.py"


class DuplicateRunCompiled(Rule):
    """
    `_run_compiled(exe, *args)` (compile once, cache the `CompiledFunction` on the
    launcher, fast-dispatch after, pop a leaked `ir.Context` on failure) lives in the
    project's `tensor_shim.py`. A second copy in a wrapper module drifts from it: the
    failure recovery and cache attribute diverge (guide §9: "reuse
    tensor_shim._run_compiled; don't add a second copy in wrapper modules"). Import the
    existing one.

    Looks across the workspace (in the CLI: across the paths given): a module-level
    `def _run_compiled` is reported when another project file defines one too. The copy
    kept is the one in `tensor_shim.py`, else the first by path; that file is not
    flagged. Copies with a different signature (aiter's `moe_kernels._run_compiled(exe,
    args)` takes a tuple) are reported with that difference named: keep the callers'
    contract with a thin adapter over the shared function. Without a project (a single
    text) only a repeated definition in the same file is reported. Diagnostic only.
    """

    code = "FLY702"
    name = "duplicate-run-compiled"
    summary = "a second definition of `_run_compiled` in a workspace that already has one"
    replacement = "import the existing one"
    fix_safety = "none"
    deprecated_tag = False
    example_before = "def _run_compiled(exe, *args):\n    ..."
    example_after = "from kernels.tensor_shim import _run_compiled"

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if node.name != FUNCTION or len(self.ctx.parents) != 1:
            return
        earlier = [
            s for s in self.model.tree.body
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == FUNCTION and s.lineno < node.lineno
        ]
        if earlier:
            self.report(node, f"a second definition of `{FUNCTION}` in this file (the first is on line {earlier[0].lineno})")
            return
        project = self.model.project
        if project is None:
            return
        others = project.definers(FUNCTION)
        if not others:
            return
        owner = sorted([project.path, *others], key=lambda p: (p.name != _PREFERRED, str(p)))[0]
        if owner == project.path:
            return
        view = project.index.view(owner, package_of(owner))
        module = view.module_key if view is not None else owner.stem
        message = f"a second definition of `{FUNCTION}`: import the existing one from `{module}`"
        theirs = self._signature_of(project, owner)
        mine = _signature(node)
        if theirs is not None and theirs != mine:
            message += f" (its signature is `{FUNCTION}{theirs}`, this one `{FUNCTION}{mine}`: keep callers' contract with a thin adapter)"
        self.report(node, message)

    def _signature_of(self, project, path):
        model = project.index.model_of(path)
        if model is None:
            return None
        for stmt in model.tree.body:
            if isinstance(stmt, ast.FunctionDef) and stmt.name == FUNCTION:
                return _signature(stmt)
        return None

    VALID = [
        # One file alone has no project: nothing to compare with.
        Valid("def _run_compiled(exe, *args):\n    return exe(*args)\n"),
        Valid("class Runner:\n    def _run_compiled(self, exe):\n        pass\n"),
    ]
    # Across files: tests/test_cli_fly702.py (a single text has no project).
    INVALID = [
        Invalid(
            "def _run_compiled(exe, *args):\n"
            "    return exe(*args)\n"
            "\n"
            "def _run_compiled(exe, args):\n"
            "    return exe(*args)\n",
            line=4,
            message="first is on line 1",
        ),
    ]


def _signature(node: ast.FunctionDef) -> str:
    args = node.args
    parts = [a.arg for a in args.posonlyargs + args.args]
    if args.vararg:
        parts.append(f"*{args.vararg.arg}")
    parts += [a.arg for a in args.kwonlyargs]
    if args.kwarg:
        parts.append(f"**{args.kwarg.arg}")
    return f"({', '.join(parts)})"
