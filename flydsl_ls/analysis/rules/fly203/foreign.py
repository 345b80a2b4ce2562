"""An LDS memref passed to a function of another project module (a shared epilogue such as
aiter's `c_shuffle_epilog`): the migration hands that function the field's fx pointer, so
the same fix (``Fix.elsewhere``) gives each raw LDS op there a form for it,

    (fx.ptr_load(p + i, result_type=t) if isinstance(p, fx.Pointer) else vector.load_op(t, p, [i]))

chosen at trace time: callers that still pass a builtin memref (the other kernels calling
the helper) trace exactly as before, so no caller has to move with this kernel. An op
already in that form is left alone (the fix is idempotent, and a second kernel's fix
finds nothing left to do there)."""

from __future__ import annotations

import ast
from pathlib import Path

from flydsl_ls.analysis.model.diagnostic import Edit, FileEdits, text_digest
from flydsl_ls.analysis.model.rewrite import fx_alias
from flydsl_ls.analysis.rules.fly203.model import (
    ALLOCATOR,
    FUNCTIONS,
    RAW_EXTRACT_POINTER,
    RAW_MEMREF_LOAD,
    SMEM_PTR,
    Unproven,
)


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
        self._modules: dict[Path, tuple] = {}  # path -> (model, planner, rewrites)
        self._entered: set[tuple] = set()  # (path, function, parameter) followed

    def follow(self, use: ast.Name, call: ast.Call, keyword: str | None, rewrites=None, deleted=None) -> None:
        """``use`` (an LDS memref becoming an fx pointer) is an argument of ``call``, a
        function imported from another project module: give that function's LDS ops on it
        their pointer form. ``rewrites``/``deleted``: the kernel file's plan (None: only
        find out whether it can be done)."""
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
        bindings = other.function_scope(function).bindings.get(param.arg, ())
        if len(bindings) != 1:
            raise Unproven(f"{prefix}, which rebinds `{param.arg}`")
        entry = self._modules.get(path)
        if entry is None:
            sub = Planner(other, _Context(other), other.parent_map(other.tree), {ALLOCATOR: [], SMEM_PTR: []})
            sub._followed, sub._pointer_gets, sub._pure_aligns, sub._aliases = {}, set(), [], set()
            sub._index_offsets_crash = self._planner._index_offsets_crash
            entry = self._modules[path] = (other, sub, {})
        other, sub, foreign_rewrites = entry
        key = (path, function.name, param.arg)
        if key in self._entered:
            self._hand_backs(call, other, sub, function, bindings[0], rewrites, deleted)
            return
        self._entered.add(key)
        taken: list = []  # what the helper's module would delete: nothing may be
        try:
            self._hand_backs(call, other, sub, function, bindings[0], rewrites, deleted)
            for inner in other.uses_of(bindings[0]):
                if self._skipped(sub, inner):
                    continue
                sub._rewrite_lds_pointer_use(inner, param.arg, foreign_rewrites, taken)
        except Unproven as why:
            raise Unproven(f"{prefix}; there: {why}") from None
        if taken:
            raise Unproven(f"{prefix}; there: line {taken[0].lineno} would have to go")

    def _hand_backs(self, call, other, sub, function, binding, rewrites, deleted) -> None:
        for inner in other.uses_of(binding):
            back = self._callback(other, sub, function, inner)
            if back is not None:
                self._hand_back(call, back, inner, rewrites, deleted)

    def _skipped(self, sub, inner: ast.Name) -> bool:
        """`if lds_out is not None`, a hand-back to a callable, or an op already in the
        pointer form (`... if isinstance(p, fx.Pointer) else ...`)."""
        parent = sub._parents.get(id(inner))
        if isinstance(parent, ast.Compare):
            return True
        if isinstance(parent, ast.keyword):
            call = sub._parents.get(id(parent))
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
                node = getattr(sub.model.binding_of(call.func), "node", None)
                if isinstance(node, ast.arg):
                    return True  # handed back (see _hand_backs)
        return any(self._dual(node) for node in sub._ancestors(inner))

    @staticmethod
    def _dual(node) -> bool:
        test = node.test if isinstance(node, ast.IfExp) else None
        return (
            isinstance(test, ast.Call)
            and isinstance(test.func, ast.Name)
            and test.func.id == "isinstance"
            and len(test.args) == 2
            and isinstance(test.args[1], ast.Attribute)
            and test.args[1].attr == "Pointer"
        )

    @staticmethod
    def _callback(other, sub, function, inner: ast.Name):
        """(callable parameter, keyword) when ``inner`` is handed back by keyword to a
        callable the helper receives (`write_row_to_lds(..., lds_out=lds_out)`)."""
        holder = sub._parents.get(id(inner))
        call = sub._parents.get(id(holder)) if isinstance(holder, ast.keyword) else None
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
            return None
        node = getattr(other.binding_of(call.func), "node", None)
        params = (*function.args.args, *function.args.kwonlyargs)
        return (call.func.id, holder.arg) if any(node is a for a in params) else None

    def _hand_back(self, call: ast.Call, back, inner: ast.Name, rewrites, deleted) -> None:
        """The kernel's callable (a function of its file) receives the pointer back: its
        parameter is followed as this file's helpers are."""
        callable_param, keyword = back
        planner = self._planner
        argument = next((k.value for k in call.keywords if k.arg == callable_param), None)
        binding = planner.model.binding_of(argument) if isinstance(argument, ast.Name) else None
        function = getattr(binding, "node", None)
        if not isinstance(function, FUNCTIONS):
            raise Unproven(
                f"line {inner.lineno} hands it back to `{callable_param}`, and line {call.lineno} does not "
                "pass a function of this file there"
            )
        params = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
        param = next((a for a in params if a.arg == keyword), None)
        scoped = planner.model.function_scope(function).bindings.get(keyword, ()) if param is not None else ()
        if len(scoped) != 1:
            raise Unproven(f"line {inner.lineno} hands it back to `{function.name}` as `{keyword}`, which it does not take once")
        if rewrites is not None:  # else only surveyed
            planner._follow_into((function, scoped[0], call), "lds pointer", 1, rewrites, deleted)

    def edits(self) -> tuple[FileEdits, ...]:
        groups = []
        for path, (other, sub, rewrites) in self._modules.items():
            if not rewrites:
                continue
            fx, imports = fx_alias(other)
            edits = list(imports)
            for node, text in sub._nested(rewrites):
                original = other.index.slice(other.index.node_range(node))
                pointer = ast.unparse(_memref_operand(other, node))
                dual = f"({text} if isinstance({pointer}, \0FX\0.Pointer) else {original})"
                edits.append(Edit(other.index.node_range(node), dual.replace("\0FX\0", fx)))
            groups.append(FileEdits(str(path.resolve()), text_digest(other.source), tuple(edits)))
        return tuple(groups)


def _memref_operand(model, call: ast.Call) -> ast.expr:
    """The builtin memref a raw LDS op reads or writes (what the pointer form tests)."""
    symbol = model.resolve(call.func)
    first = symbol in RAW_MEMREF_LOAD or symbol in RAW_EXTRACT_POINTER
    return call.args[0] if first else call.args[1]  # typed vector loads and stores: the second
