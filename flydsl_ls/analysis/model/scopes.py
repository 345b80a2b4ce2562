"""Scope-aware bindings of one module: imports, assignments, parameters, definitions.

One walk over the stdlib ``ast`` records every scope, every binding and, for each
loaded ``Name``, the scope it is read in. Lookup follows Python's rules (a name
bound anywhere in a function is local to it; class bodies are skipped by nested
functions; ``global``/``nonlocal`` redirect) and picks, among several bindings of
one name in one scope, the last one before the use.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

from flydsl_ls.analysis.model.fields import CHILD_FIELDS
from flydsl_ls.analysis.model.modules import RELATIVE

SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass(eq=False, slots=True)
class Scope:
    kind: str  # module | function | class | lambda | comprehension
    node: ast.AST
    parent: Scope | None
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    global_names: set[str] = field(default_factory=set)
    nonlocal_names: set[str] = field(default_factory=set)
    star_imports: list[str] = field(default_factory=list)  # dotted modules

    def add(self, binding: Binding) -> None:
        self.bindings.setdefault(binding.name, []).append(binding)


@dataclass(eq=False, slots=True)
class Binding:
    name: str
    kind: str  # import | assign | augassign | annassign | param | for | with | def | class | walrus | except | comprehension
    node: ast.AST  # the node that binds
    scope: Scope
    position: tuple[int, int]
    dotted: str | None = None  # imports: absolute dotted path of what was imported
    value: ast.expr | None = None  # assignments: the right-hand side, when the target is this name
    annotation: ast.expr | None = None
    iter: ast.expr | None = None  # for-loop targets: what is iterated
    param_index: int | None = None  # parameters: position in the signature
    path: tuple = ()  # block path of the binding statement (see ScopeBuilder.block_path)


def _pos(node: ast.AST) -> tuple[int, int]:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def release(scopes: list[Scope]) -> None:
    """Break the cycles of a scope tree (scopes and their bindings point at each other), so
    that it and the syntax tree it holds are freed at once, not by a later collection."""
    for scope in scopes:
        scope.bindings = {}
        scope.parent = None


class Interrupted(Exception):
    """A ``stop`` callback said stop (an analysis a newer text made useless)."""


_VISITORS: dict[type, Callable] = {}  # node type -> the ScopeBuilder method visiting it


def _visitor_of(node_type: type) -> Callable:
    visitor = _VISITORS[node_type] = getattr(ScopeBuilder, "visit_" + node_type.__name__, ScopeBuilder.generic_visit)
    return visitor


class ScopeBuilder(ast.NodeVisitor):
    """Builds the scope tree; remembers the scope each loaded name is read in."""

    def __init__(self, package: str | None, stop: Callable[[], bool] | None = None):
        self.package = package  # dotted package of the file, for relative imports
        self.stop = stop  # asked before each statement: True raises ``Interrupted``
        self.module_scope: Scope | None = None
        self.scope: Scope | None = None
        self.scopes: list[Scope] = []
        self.scope_of_node: dict[int, Scope] = {}  # id(Name load / def node) -> scope
        self.scope_of_def: dict[int, Scope] = {}  # id(def node) -> the scope it opens
        self.calls_by_name: dict[str, list[ast.Call]] = {}
        # A statement's place: ((id(body list), index), ...) from the module down. Shared
        # tuples, so recording one per loaded name is cheap. Used for dominance.
        self.block_path: tuple = ()
        self.path_of_node: dict[int, tuple] = {}
        self.loop_entries: set[tuple[int, int]] = set()
        self.loads: list[ast.Name] = []  # every read of a name, for use counts

    # --- scopes ---------------------------------------------------------------
    def build(self, tree: ast.Module) -> Scope:
        self.module_scope = self.scope = Scope("module", tree, None)
        self.scopes.append(self.scope)
        self._visit_body(tree.body)
        return self.module_scope

    def _visit_body(self, stmts: list[ast.stmt]):
        outer = self.block_path
        for index, stmt in enumerate(stmts):
            if self.stop is not None and self.stop():
                raise Interrupted
            self.block_path = (*outer, (id(stmts), index))
            if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
                self.loop_entries.add(self.block_path[-1])
            (_VISITORS.get(type(stmt)) or _visitor_of(type(stmt)))(self, stmt)  # ``visit``, a call fewer
        self.block_path = outer

    def visit_Constant(self, node: ast.Constant) -> None:
        # Nothing to bind or read. NodeVisitor's own visit_Constant looks for the
        # deprecated visit_Num/visit_Str first (an AttributeError per constant).
        pass

    def visit(self, node):
        # NodeVisitor.visit builds the method's name and looks it up for every node.
        visitor = _VISITORS.get(type(node)) or _visitor_of(type(node))
        return visitor(self, node)

    def generic_visit(self, node):
        # ``visit`` written out (a call fewer per node): most nodes are reached from here.
        for name in CHILD_FIELDS[type(node)]:
            value = getattr(node, name, None)
            if isinstance(value, list):
                if value and isinstance(value[0], ast.stmt):
                    self._visit_body(value)
                else:
                    for item in value:
                        if isinstance(item, ast.AST):
                            (_VISITORS.get(type(item)) or _visitor_of(type(item)))(self, item)
            elif isinstance(value, ast.AST):
                (_VISITORS.get(type(value)) or _visitor_of(type(value)))(self, value)

    def _push(self, kind: str, node: ast.AST) -> Scope:
        scope = Scope(kind, node, self.scope)
        self.scopes.append(scope)
        self.scope_of_def[id(node)] = scope
        self.scope = scope
        return scope

    def _bind(
        self, name: str, kind: str, node: ast.AST, at=None,
        dotted=None, value=None, annotation=None, iter=None, param_index=None,  # Binding's fields
    ) -> Binding:
        scope = self.scope
        if kind != "comprehension":
            while scope.kind == "comprehension":  # walrus binds in the enclosing scope
                scope = scope.parent
        if name in scope.global_names:
            scope = self.module_scope
        elif name in scope.nonlocal_names:
            scope = _enclosing_binder(scope, name)
        # Positional: 81,000 bindings over the corpus, each a keyword dictionary fewer.
        binding = Binding(
            name, kind, node, scope, at or _pos(node), dotted, value, annotation, iter, param_index, self.block_path
        )
        scope.add(binding)
        return binding

    # --- definitions ----------------------------------------------------------
    def visit_FunctionDef(self, node):
        for deco in node.decorator_list:
            self.visit(deco)
        self._visit_arguments_outer(node.args)
        if node.returns:
            self.visit(node.returns)
        self._bind(node.name, "def", node)
        outer = self.scope
        self._push("function", node)
        self._bind_arguments(node.args)
        self._visit_body(node.body)
        self.scope = outer

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node):
        self._visit_arguments_outer(node.args)
        outer = self.scope
        self._push("lambda", node)
        self._bind_arguments(node.args)
        self.visit(node.body)
        self.scope = outer

    def visit_ClassDef(self, node):
        for expr in [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]:
            self.visit(expr)
        self._bind(node.name, "class", node)
        outer = self.scope
        self._push("class", node)
        self._visit_body(node.body)
        self.scope = outer

    def _visit_arguments_outer(self, args: ast.arguments):
        for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
            self.visit(default)
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
            if arg is not None and arg.annotation is not None:
                self.visit(arg.annotation)

    def _bind_arguments(self, args: ast.arguments):
        positional = [*args.posonlyargs, *args.args]
        for index, arg in enumerate(positional):
            self._bind(arg.arg, "param", arg, annotation=arg.annotation, param_index=index)
        for arg in [args.vararg, *args.kwonlyargs, args.kwarg]:
            if arg is not None:
                self._bind(arg.arg, "param", arg, annotation=arg.annotation)

    def _visit_comprehension(self, node, elements):
        outer = self.scope
        first = node.generators[0]
        self.visit(first.iter)  # evaluated in the enclosing scope
        self._push("comprehension", node)
        for index, gen in enumerate(node.generators):
            if index:
                self.visit(gen.iter)
            self._bind_target(gen.target, "comprehension", iter_=gen.iter)
            for cond in gen.ifs:
                self.visit(cond)
        for element in elements:
            self.visit(element)
        self.scope = outer

    def visit_ListComp(self, node):
        self._visit_comprehension(node, [node.elt])

    visit_SetComp = visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node):
        self._visit_comprehension(node, [node.key, node.value])

    # --- imports --------------------------------------------------------------
    def visit_Import(self, node):
        for alias in node.names:
            if alias.asname:
                self._bind(alias.asname, "import", alias, dotted=alias.name)
            else:
                top = alias.name.split(".")[0]
                self._bind(top, "import", alias, dotted=top)

    def visit_ImportFrom(self, node):
        module = self._absolute_module(node)
        for alias in node.names:
            if alias.name == "*":
                self.scope.star_imports.append(module)
                continue
            self._bind(alias.asname or alias.name, "import", alias, dotted=f"{module}.{alias.name}")

    def _absolute_module(self, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = None
        if self.package is not None:
            parts = self.package.split(".") if self.package else []
            if node.level - 1 <= len(parts):
                base = ".".join(parts[: len(parts) - (node.level - 1)])
        # Marked relative either way: modules.canonical_symbol then also matches the
        # helper layers kernels vendor by their module name.
        base = f"{RELATIVE}.{base}" if base else RELATIVE
        return f"{base}.{node.module}" if node.module else base

    # --- statements that bind -------------------------------------------------
    def visit_Global(self, node):
        self.scope.global_names.update(node.names)

    def visit_Nonlocal(self, node):
        self.scope.nonlocal_names.update(node.names)

    def visit_Assign(self, node):
        self.visit(node.value)
        for target in node.targets:
            self._bind_target(target, "assign", value=node.value, at=_end(node))

    def visit_AnnAssign(self, node):
        if node.value is not None:
            self.visit(node.value)
        self.visit(node.annotation)
        if isinstance(node.target, ast.Name):
            self._bind(
                node.target.id,
                "annassign",
                node.target,
                at=_end(node),
                value=node.value,
                annotation=node.annotation,
            )
        else:
            self.visit(node.target)

    def visit_AugAssign(self, node):
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self._record_load(node.target)
            self._bind(node.target.id, "augassign", node.target, at=_end(node), value=node)
        else:
            self.visit(node.target)

    def visit_NamedExpr(self, node):
        self.visit(node.value)
        self._bind(node.target.id, "walrus", node.target, at=_end(node), value=node.value)

    def visit_For(self, node):
        self.visit(node.iter)
        self._bind_target(node.target, "for", iter_=node.iter, at=_end(node.iter))
        self._visit_body(node.body)
        self._visit_body(node.orelse)

    visit_AsyncFor = visit_For

    def visit_With(self, node):
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self._bind_target(item.optional_vars, "with", value=None)
        self._visit_body(node.body)

    visit_AsyncWith = visit_With

    def visit_ExceptHandler(self, node):
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self._bind(node.name, "except", node)
        self._visit_body(node.body)

    def _bind_target(self, target, kind, value=None, iter_=None, at=None):
        if isinstance(target, ast.Name):
            self._bind(target.id, kind, target, at=at, value=value, iter=iter_)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:  # unpacking: element values are not tracked
                self._bind_target(element, kind, at=at)
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, kind, at=at)
        else:  # attribute / subscript targets read their base
            self.visit(target)

    # --- reads ------------------------------------------------------------------
    def _record_load(self, node: ast.Name):
        self.loads.append(node)
        self.scope_of_node[id(node)] = self.scope
        self.path_of_node[id(node)] = self.block_path

    def visit_Name(self, node):
        if type(node.ctx) is ast.Load:  # ``_record_load`` written out: most names are reads
            self.loads.append(node)
            self.scope_of_node[id(node)] = self.scope
            self.path_of_node[id(node)] = self.block_path
        elif isinstance(node.ctx, ast.Del):
            pass
        else:  # a Store outside the statements above (e.g. match patterns)
            self._bind(node.id, "assign", node)

    def visit_Call(self, node):
        if isinstance(node.func, ast.Name):
            self.calls_by_name.setdefault(node.func.id, []).append(node)
        self.generic_visit(node)


def lookup(name: str, scope: Scope, position: tuple[int, int]) -> Binding | None:
    """The binding a read of ``name`` at ``position`` in ``scope`` sees, if any."""
    first = scope
    current = scope
    while current is not None:
        if current is first or current.kind != "class":
            if name in current.global_names:
                current = _module_of(current)
                return _pick(current.bindings.get(name), position, current is first)
            bindings = current.bindings.get(name)
            if bindings and name not in current.nonlocal_names:
                # ``_pick`` written out: a call fewer for each of the corpus's 270,000 lookups
                for binding in reversed(bindings):
                    if binding.position <= position:
                        return binding
                return bindings[-1] if current is not first or len(bindings) == 1 else bindings[0]
        current = current.parent
    return None


def unbound_name(base: str, *scopes: Scope | None, taken: frozenset[str] | set[str] = frozenset()) -> str:
    """``base``, else ``base2``, ``base3``...: the first name none of ``scopes`` binds and
    not in ``taken``. Each name tried is looked up, none listed: an incremental analysis
    redoes a rule that lists a module's names whenever any of them comes or goes (a
    function pasted anywhere in the file)."""
    name, n = base, 2
    while name in taken or any(scope is not None and name in scope.bindings for scope in scopes):
        name, n = f"{base}{n}", n + 1
    return name


def star_import_module(name: str, scope: Scope) -> list[str]:
    """Modules star-imported into scopes visible from ``scope`` (innermost first)."""
    modules = []
    current = scope
    while current is not None:
        modules.extend(reversed(current.star_imports))
        current = current.parent
    return modules


def _enclosing_binder(scope: Scope, name: str) -> Scope:
    current = scope.parent
    while current is not None and current.parent is not None:
        if current.kind != "class" and name in current.bindings:
            return current
        current = current.parent
    return scope


def _end(node: ast.AST) -> tuple[int, int]:
    return (node.end_lineno, node.end_col_offset)


def _module_of(scope: Scope) -> Scope:
    while scope.parent is not None:
        scope = scope.parent
    return scope


def _pick(bindings: list[Binding] | None, position, same_scope: bool) -> Binding | None:
    if not bindings:
        return None
    for binding in reversed(bindings):  # the last one (in binding order) made before the read
        if binding.position <= position:
            return binding
    return bindings[-1] if not same_scope or len(bindings) == 1 else bindings[0]


def reaching(
    name: str, scope: Scope, position: tuple[int, int], use_path: tuple, loops: set
) -> list[Binding]:
    """Bindings of ``name`` whose value may be the one read at a use.

    Within the use's own scope: the last binding that dominates the use (its statement
    precedes the use in a block enclosing it) and everything after it that may run
    before the use, plus bindings later in a loop that encloses the use. A read from
    an enclosing scope sees every binding there.
    """
    owner = lookup(name, scope, position)
    if owner is None:
        return []
    bindings = owner.scope.bindings[name]
    if owner.scope is not scope:
        return list(bindings)
    candidates: list[Binding] = []
    on_path = None  # the blocks around the use, needed only for bindings after it
    for binding in bindings:
        if binding.position <= position:
            if _dominates(binding, use_path):
                candidates = [binding]
            else:
                candidates.append(binding)
            continue
        if on_path is None:
            on_path = set(use_path)
        if any(entry in on_path and entry in loops for entry in binding.path):
            candidates.append(binding)  # loop-carried: a later iteration's value
    return candidates


def surely_bound(name: str, scope: Scope, position: tuple[int, int], use_path: tuple, loops: set) -> bool:
    """A read of ``name`` at a use of its own scope sees a binding on every path: one of
    them dominates the use (not one made only in some branch, loop body or handler)."""
    owner = lookup(name, scope, position)
    if owner is None or owner.scope is not scope:
        return False
    return any(
        _dominates(b, use_path) for b in reaching(name, scope, position, use_path, loops)
        if b.position <= position
    )


def _dominates(binding: Binding, use_path: tuple) -> bool:
    if binding.kind == "param" or not binding.path:
        return True
    block, index = binding.path[-1]
    for entry in use_path:
        if entry[0] == block:
            if entry[1] > index:
                return True
            # Same statement: a for/with target covers its body; an assignment does not
            # cover its own right-hand side.
            return entry[1] == index and binding.kind in ("for", "with") and len(use_path) > len(
                binding.path
            )
    return False
