"""An LDS memref passed to a function of another project module (a shared epilogue): the
migration gives that function the field's fx pointer, so its raw LDS ops move to
`fx.ptr_load`/`fx.ptr_store` in the same fix (``Fix.elsewhere``). Only when every call of
the function is one the fix migrates: legacy callers elsewhere would be left passing a
builtin memref to pointer ops."""

from __future__ import annotations

import ast
from pathlib import Path

from flydsl_ls.analysis.model.diagnostic import Edit, FileEdits, text_digest
from flydsl_ls.analysis.model.rewrite import fx_alias
from flydsl_ls.analysis.rules.fly203.model import ALLOCATOR, FUNCTIONS, SMEM_PTR, Unproven


class _Context:
    """What the planner asks of a rule context, for the other module."""

    def __init__(self, model):
        self.model = model

    def range(self, node: ast.AST):
        return self.model.index.node_range(node)


def module_of_import(model, imported) -> tuple[Path, str] | None:
    """(file, function name) that ``from .mod import f`` binds, when it is a project file."""
    project = getattr(model, "project", None)
    statement = imported.node
    while statement is not None and not isinstance(statement, ast.stmt):
        statement = model.parent_map(model.tree).get(id(statement))
    if project is None or not isinstance(statement, ast.ImportFrom):
        return None
    name = next((a.name for a in statement.names if (a.asname or a.name) == imported.name), imported.name)
    folder = project.path.parent
    for _ in range(statement.level - 1):
        folder = folder.parent
    parts = (statement.module or "").split(".")
    candidates = [folder.joinpath(*parts[:-1], parts[-1] + ".py"), folder.joinpath(*parts, "__init__.py")] if statement.level else []
    found = [c for c in candidates if c.is_file()][:1] or project.definers(name)[:1]
    return (found[0], name) if found else None


class ForeignHelpers:
    """The other modules' functions one migration hands LDS pointers to, and their edits."""

    def __init__(self, planner):
        self._planner = planner  # of the kernel's file
        self._modules: dict[Path, tuple] = {}  # path -> (model, planner, rewrites, deleted)
        self.calls: dict[int, tuple] = {}  # id(binding of the import) -> ids of the calls followed

    def follow(self, use: ast.Name, call: ast.Call, keyword: str | None) -> None:
        """``use`` (an LDS memref becoming an fx pointer) is an argument of ``call``, a
        function imported from another project module: rewrite that function's uses of it."""
        from flydsl_ls.analysis.rules.fly203.planner import Planner

        model = self._planner.model
        imported = model.binding_of(call.func) if isinstance(call.func, ast.Name) else None
        where = module_of_import(model, imported) if imported is not None and imported.kind == "import" else None
        name = call.func.id if isinstance(call.func, ast.Name) else ast.unparse(call.func)
        prefix = f"line {use.lineno}: the LDS memref `{use.id}` is passed to `{name}`"
        if where is None:
            raise Unproven(f"{prefix}, which is not a function of a project file this fix can edit")
        path, function_name = where
        other = model.project.index.model_of(path)
        function = next(
            (f for f in getattr(other, "tree", ast.Module(body=[])).body if isinstance(f, FUNCTIONS) and f.name == function_name),
            None,
        )
        if function is None:
            raise Unproven(f"{prefix}, whose definition in {path.name} is not a plain function")
        prefix += f" ({path.name}:{function.lineno})"
        params = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
        if keyword is not None:
            param = next((a for a in params if a.arg == keyword), None)
        else:
            position = call.args.index(use)
            positional = [*function.args.posonlyargs, *function.args.args]
            param = positional[position] if position < len(positional) else None
        if param is None:
            raise Unproven(f"{prefix}, which takes it through `*args`/`**kwargs`")
        mentioning = model.project.mentioning(function_name)
        if path.resolve() not in mentioning:
            raise Unproven(
                f"{prefix}, a file outside the files checked: whether other files call it cannot be "
                "told (check the whole project)"
            )
        if len(mentioning) > 1:
            others = ", ".join(p.name for p in mentioning if p != path.resolve())
            raise Unproven(
                f"{prefix}; {others} also mention `{function_name}`, and a caller that keeps its "
                "builtin memref would break: migrate them together, by hand"
            )
        entry = self._modules.get(path)
        if entry is None:
            parents = other.parent_map(other.tree)
            sub = Planner(other, _Context(other), parents, {ALLOCATOR: [], SMEM_PTR: []})
            sub._followed, sub._pointer_gets, sub._pure_aligns = {}, set(), []
            entry = self._modules[path] = (other, sub, {}, [])
        other, sub, rewrites, deleted = entry
        if other.calls_to(function):
            raise Unproven(f"{prefix}, which {path.name} calls too (line {other.calls_to(function)[0].lineno})")
        self.calls.setdefault(id(imported), (imported, set()))[1].add(id(call))
        bindings = other.function_scope(function).bindings.get(param.arg, ())
        if len(bindings) != 1:
            raise Unproven(f"{prefix}, which rebinds `{param.arg}`")
        key = (id(function), param.arg)
        if key in sub._followed:
            return
        sub._followed[key] = ("lds pointer", 1, set(), function, bindings[0])
        try:
            for inner in other.uses_of(bindings[0]):
                if isinstance(sub._parents.get(id(inner)), ast.Compare):  # `if lds_out is not None`
                    continue
                sub._rewrite_lds_pointer_use(inner, param.arg, rewrites, deleted)
            sub._check_helpers()
        except Unproven as why:
            raise Unproven(f"{prefix}; there: {why}") from None

    def check_callers(self) -> None:
        """Every call of a followed function in this file hands it a migrated pointer."""
        model = self._planner.model
        for imported, followed in self.calls.values():
            for use in model.uses_of(imported):
                call = self._planner._parents.get(id(use))
                if isinstance(call, ast.Call) and call.func is use and id(call) not in followed:
                    raise Unproven(
                        f"line {call.lineno}: `{use.id}` is called here without this kernel's LDS: its other "
                        "callers would keep a builtin memref"
                    )

    def edits(self) -> tuple[FileEdits, ...]:
        groups = []
        for path, (other, sub, rewrites, deleted) in self._modules.items():
            if not rewrites:
                continue
            fx, imports = fx_alias(other)
            edits = [*imports, *(Edit(other.index.node_range(n), t.replace("\0FX\0", fx)) for n, t in sub._nested(rewrites))]
            edits.extend(sub._deletions(deleted, skip=None))
            groups.append(FileEdits(str(path.resolve()), text_digest(other.source), tuple(edits)))
        return tuple(groups)
