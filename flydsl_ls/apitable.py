"""Does a public FlyDSL API name exist in a given FlyDSL source tree? Decided from the syntax
tree only: nothing is imported, nothing is fetched.

The input is a mapping of file path (relative to site-packages, ``flydsl/expr/__init__.py``)
to source text: a wheel's ``*.py`` files (``scripts/build_api_table.py``) or an installed
FlyDSL's (``sources_from_dir``). The resolver replays what ``import flydsl.expr as fx``
and an attribute access ``fx.a.b`` do, statement by statement at module level:

- imports: parents first, a loaded submodule is bound on its parent package, ``from X
  import n`` falls back to the submodule ``X.n``, ``from X import *`` honours ``X.__all__``
  (no ``__all__``: every name not starting with ``_``), a package directory wins over a
  same-named ``.py``;
- a module-level ``__getattr__`` that looks a name up in module-level dicts
  (``_LAZY_MODULES``/``_BACKEND_MODULES``/``_EXTENSION_MODULES``) and imports it with
  ``importlib.import_module(module_name, __name__)``;
- def/class/assignments, ``__all__`` (``=``, ``+=``, ``.extend``, ``.append``, ``+`` of
  lists and of other modules' ``__all__``), ``del``, ``globals().pop/get``, ``globals()[k] =``,
  ``Class.attr = ...``, ``for`` over a literal tuple, ``if TYPE_CHECKING:`` (skipped; other
  ``if``s: both branches), ``try`` (body, then handlers' new names);
- class attributes through the class body, its bases and its metaclass.

Attribute access is exact: ``fx.rocdl.tdm_ops`` exists only if some module that importing
``flydsl.expr``/``fx.rocdl`` runs imports ``flydsl.expr.rocdl.tdm_ops``. A name that
starts with ``flydsl.`` is instead an import path: ``flydsl.expr.rocdl.tdm_ops`` exists
when ``from flydsl.expr.rocdl import tdm_ops`` works.

Names the syntax tree cannot decide (a star import from a compiled extension module, an
attribute of an instance) are reported as missing and listed in ``Resolver.uncertain``.

Name forms: ``fx.a.b`` (attribute chain from ``flydsl.expr``), ``flydsl.a.b`` (import
path), signature forms ``fx.f(k1=, k2=)`` (``fx.f`` is a function, or a class whose
``__init__``, accepts keywords k1, k2) plus the aliases in ``SIGNATURE_FORMS``, and the
``WRAPPER_FORMS`` (``fx.f`` is defined by FlyDSL itself, not re-exported from the raw
MLIR bindings).
"""

from __future__ import annotations

import ast
import re
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from flydsl_ls.analysis.model.parsing import parse

ROOT_ALIASES = {"fx": "flydsl.expr"}

# Named signature forms: name -> (callable, keywords it must accept).
SIGNATURE_FORMS = {
    "fx.rocdl.s_waitcnt(keywords)": ("fx.rocdl.s_waitcnt", ("vmcnt", "lgkmcnt", "expcnt")),
}
# Wrapper forms: name -> (callable, package it must be defined in). The same name can be a
# raw MLIR builder re-exported from flydsl._mlir in older releases (fx.rocdl.sched_barrier
# before 0.3.1 is the ODS builder, which rejects an int mask).
WRAPPER_FORMS = {
    "fx.rocdl.sched_barrier(wrapper)": ("fx.rocdl.sched_barrier", "flydsl.expr"),
    "fx.rocdl.sched_group_barrier(wrapper)": ("fx.rocdl.sched_group_barrier", "flydsl.expr"),
}

_SIGNATURE = re.compile(r"^(?P<callee>[\w.]+)\((?P<args>[^()]*)\)$")


# ---------------------------------------------------------------------------------- values


class Value:
    """What a name is bound to (only as precise as existence checks need)."""


class Opaque(Value):
    """A value the syntax tree does not pin down. ``external``: it comes from outside the
    FlyDSL tree (builtins, stdlib, third party), so it defines no FlyDSL API."""

    def __init__(self, why: str, external: bool = False):
        self.why = why
        self.external = external

    def __repr__(self):
        return f"Opaque({self.why})"


class Const(Value):
    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return f"Const({self.value!r})"


class Func(Value):
    def __init__(self, module: str, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        self.module = module
        self.node = node

    def __repr__(self):
        return f"Func({self.module}.{getattr(self.node, 'name', '<lambda>')}:{self.node.lineno})"

    def accepts_keywords(self, names: Iterable[str]) -> bool:
        a = self.node.args
        params = {p.arg for p in (*a.args, *a.kwonlyargs)}
        return all(n in params for n in names)


class Cls(Value):
    def __init__(self, module: str, node: ast.ClassDef):
        self.module = module
        self.node = node
        self.ns: dict[str, Value] = {}
        self.bases: list[Value] = []
        self.metaclass: Value | None = None

    def __repr__(self):
        return f"Cls({self.module}.{self.node.name}:{self.node.lineno})"


class Module(Value):
    def __init__(self, name: str, path: str | None, is_pkg: bool):
        self.name = name
        self.path = path
        self.is_pkg = is_pkg
        self.ns: dict[str, Value] = {}
        self.opaque_stars: list[str] = []  # star imports whose names are unknown
        self.lazy: dict[str, str] | None = None  # module __getattr__ table: name -> module

    @property
    def package(self) -> str:
        return self.name if self.is_pkg else self.name.rpartition(".")[0]

    def __repr__(self):
        return f"Module({self.name})"


class ExternalModule(Value):
    """A module without Python source in the tree (stdlib, third party, compiled)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"ExternalModule({self.name})"


_MISSING = object()


# -------------------------------------------------------------------------------- sources


def sources_from_wheel(path: str | Path, top: str = "flydsl") -> dict[str, str]:
    """The ``top/**.py`` sources inside a wheel, read with zipfile (no install)."""
    out = {}
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            if info.filename.startswith(top + "/") and info.filename.endswith((".py", ".pyi")):
                out[info.filename] = z.read(info).decode("utf-8", errors="replace")
    return out


def sources_from_dir(site_packages: str | Path, top: str = "flydsl") -> dict[str, str]:
    """The ``top/**.py`` sources under a site-packages directory (no import)."""
    base = Path(site_packages)
    out = {}
    for file in sorted((base / top).rglob("*.py*")):
        if file.suffix not in (".py", ".pyi"):
            continue
        rel = file.relative_to(base).as_posix()
        if "__pycache__" in rel:
            continue
        out[rel] = file.read_text("utf-8", errors="replace")
    return out


# ------------------------------------------------------------------------------- resolver


class Resolver:
    """Answers ``exists(name)`` for one FlyDSL source tree (path -> source text)."""

    def __init__(self, sources: Mapping[str, str]):
        self.sources = dict(sources)
        self._dirs = {p.rsplit("/", i)[0] for p in self.sources for i in range(1, p.count("/") + 1)}
        self.modules: dict[str, Value] = {}  # sys.modules
        self.uncertain: dict[str, str] = {}  # name -> why the tree cannot decide
        self.warnings: list[str] = []
        self._trees: dict[str, ast.Module] = {}
        self._classes: list[Cls] = []
        self._baseline = None
        self._why: str | None = None

    # -- public ---------------------------------------------------------------------------

    def exists(self, name: str) -> bool:
        """Whether ``name`` resolves in a fresh interpreter (no earlier query's imports).
        When it does not and the tree cannot tell, ``uncertain[name]`` says why."""
        root = ROOT_ALIASES.get(name.split(".")[0])
        if root is None:
            self.modules, self._baseline = {}, None
        else:
            self._fresh(root)
        self._why = None
        found = self.lookup(name) is not _MISSING
        if not found and self._why:
            self.uncertain[name] = self._why
        return found

    def _undecided(self, name: str | None, why: str):
        """A lookup on the queried chain (``name`` given) hit something opaque."""
        if name:
            self._why = self._why or why

    def _fresh(self, root: str):
        """The state right after ``import <root>``: computed once, then restored (an
        earlier query may have imported more, or bound lazily loaded modules)."""
        if self._baseline is None or self._baseline[0] != root:
            self.modules, self._classes = {}, []
            self.import_module(root)
            self._baseline = (
                root,
                dict(self.modules),
                [(m, dict(m.ns)) for m in self.modules.values() if isinstance(m, Module)],
                [(c, dict(c.ns)) for c in self._classes],
            )
            return
        _, modules, namespaces, classes = self._baseline
        self.modules = dict(modules)
        for module, ns in namespaces:
            module.ns = dict(ns)
        for cls, ns in classes:
            cls.ns = dict(ns)
        del self._classes[len(classes):]

    def lookup(self, name: str):
        """The value ``name`` denotes in the current import state, or ``_MISSING``."""
        if name in WRAPPER_FORMS:
            callee, package = WRAPPER_FORMS[name]
            value = self.lookup(callee)
            if isinstance(value, (Func, Cls)) and (
                value.module == package or value.module.startswith(package + ".")
            ):
                return value
            return _MISSING
        form = SIGNATURE_FORMS.get(name)
        match = None if form else _SIGNATURE.match(name)
        if form or match:
            callee, keywords = form if form else (
                match["callee"],
                tuple(k.strip().rstrip("=").strip() for k in match["args"].split(",") if k.strip()),
            )
            value = self.lookup(callee)
            if value is _MISSING:
                return _MISSING
            if isinstance(value, Cls):
                value = self._class_attr(value, "__init__", set())
            if isinstance(value, Func) and value.accepts_keywords(keywords):
                return value
            if not isinstance(value, Func):
                self._undecided(name, f"{callee} is {value!r}, not a function")
            return _MISSING
        parts = name.split(".")
        root = ROOT_ALIASES.get(parts[0])
        if root is not None:
            value = self.import_module(root)
            for i, attr in enumerate(parts[1:], 1):
                value = self.getattr(value, attr, ".".join(parts[: i + 1]))
                if value is _MISSING:
                    return _MISSING
            return value
        # an import path: flydsl.a.b -> `from flydsl.a import b` works
        value = self.import_module(parts[0])
        for i, attr in enumerate(parts[1:], 1):
            attr_value = self.getattr(value, attr, ".".join(parts[: i + 1]))
            if attr_value is _MISSING and isinstance(value, Module):
                attr_value = self._import_submodule(value, attr)
            if attr_value is _MISSING:
                return _MISSING
            value = attr_value
        return value

    # -- modules ---------------------------------------------------------------------------

    def _find(self, name: str) -> tuple[str | None, bool] | None:
        base = name.replace(".", "/")
        if f"{base}/__init__.py" in self.sources:
            return f"{base}/__init__.py", True
        if f"{base}/__init__.pyi" in self.sources:  # a compiled package's stub
            return f"{base}/__init__.pyi", True
        if f"{base}.py" in self.sources:
            return f"{base}.py", False
        if f"{base}.pyi" in self.sources:  # a compiled module's stub
            return f"{base}.pyi", False
        if base in self._dirs:  # a namespace package (directory without __init__.py)
            return None, True
        return None

    def import_module(self, name: str) -> Value:
        """``import name``: parents first; the loaded module is bound on its parent."""
        if name in self.modules:
            return self.modules[name]
        parent_name, _, child = name.rpartition(".")
        parent = self.import_module(parent_name) if parent_name else None
        if name in self.modules:  # the parent imported it
            return self.modules[name]
        found = self._find(name)
        if found is None:
            module: Value = ExternalModule(name)
            self.modules[name] = module
        else:
            path, is_pkg = found
            module = Module(name, path, is_pkg)
            self.modules[name] = module
            if path is not None:
                tree = self._trees.get(path)
                if tree is None:
                    tree = self._trees[path] = parse(self.sources[path], filename=path)
                self._exec(tree.body, module, module.ns)
                module.lazy = self._lazy_table(module, tree)
        if isinstance(parent, Module) and isinstance(module, Module):
            parent.ns[child] = module
        return module

    def _import_submodule(self, package: Module, attr: str):
        if not package.is_pkg or self._find(f"{package.name}.{attr}") is None:
            return _MISSING
        return self.import_module(f"{package.name}.{attr}")

    def _lazy_table(self, module: Module, tree: ast.Module) -> dict[str, str] | None:
        """``def __getattr__(name)`` that maps names through module-level dicts and
        imports the result with ``importlib.import_module(x, __name__)``."""
        fn = module.ns.get("__getattr__")
        if not isinstance(fn, Func):
            return None
        tables, imports = [], False
        for node in ast.walk(fn.node):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and isinstance(node.func.value, ast.Name)
                and len(node.args) == 1
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id == fn.node.args.args[0].arg
            ):
                tables.append(node.func.value.id)
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "import_module"
                and len(node.args) == 2
                and isinstance(node.args[1], ast.Name)
                and node.args[1].id == "__name__"
            ):
                imports = True
        out: dict[str, str] = {}
        for table in tables:
            value = module.ns.get(table)
            if isinstance(value, Const) and isinstance(value.value, dict):
                out.update(value.value)
            else:
                self.warnings.append(f"{module.name}.__getattr__: table {table} is {value!r}")
        if not imports or not tables:
            self.warnings.append(f"{module.name}.__getattr__: unrecognised lazy-import shape")
            return None
        return out

    # -- attribute access -----------------------------------------------------------------

    def getattr(self, value, attr: str, name: str | None):
        if isinstance(value, Module):
            if attr in value.ns:
                return value.ns[attr]
            if value.lazy and attr in value.lazy:
                target = _relative(value.lazy[attr], value.name)
                module = self.import_module(target)
                value.ns[attr] = module  # globals()[name] = module
                return module
            if value.opaque_stars:
                self._undecided(name, f"{value.name} star-imports {', '.join(value.opaque_stars)}")
            return _MISSING
        if isinstance(value, Cls):
            found = self._class_attr(value, attr, set(), name)
            return found
        if isinstance(value, Opaque) or isinstance(value, ExternalModule):
            self._undecided(name, f"{(name or '').rpartition('.')[0]} is {value!r}")
            return _MISSING
        self._undecided(name, f"{(name or '').rpartition('.')[0]} is {value!r}")
        return _MISSING

    def _class_attr(self, cls: Cls, attr: str, seen: set, name: str = ""):
        if id(cls) in seen:
            return _MISSING
        seen.add(id(cls))
        if attr in cls.ns:
            return cls.ns[attr]
        for base in [*cls.bases, *([cls.metaclass] if cls.metaclass is not None else [])]:
            if isinstance(base, Cls):
                found = self._class_attr(base, attr, seen, name)
                if found is not _MISSING:
                    return found
            elif name and not (isinstance(base, Opaque) and base.external):
                self._undecided(name, f"{cls!r} derives from {base!r}")
        return _MISSING

    # -- execution of module-level statements ----------------------------------------------

    def _exec(self, body: list[ast.stmt], module: Module, ns: dict, cls: Cls | None = None):
        for stmt in body:
            self._stmt(stmt, module, ns, cls)

    def _bind(self, ns: dict, name: str, value: Value):
        ns[name] = value

    def _stmt(self, stmt: ast.stmt, module: Module, ns: dict, cls: Cls | None):
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                target = self.import_module(alias.name)
                if alias.asname:
                    self._bind(ns, alias.asname, target)
                else:
                    top = alias.name.split(".")[0]
                    self._bind(ns, top, self.modules[top])
        elif isinstance(stmt, ast.ImportFrom):
            self._import_from(stmt, module, ns)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self._bind(ns, stmt.name, Func(module.name, stmt))
        elif isinstance(stmt, ast.ClassDef):
            new = Cls(module.name, stmt)
            self._classes.append(new)
            new.bases = [self._eval(b, module, ns, cls) for b in stmt.bases]
            for kw in stmt.keywords:
                if kw.arg == "metaclass":
                    new.metaclass = self._eval(kw.value, module, ns, cls)
            body_ns: dict = {}
            self._exec(stmt.body, module, body_ns, new)
            new.ns = body_ns
            self._bind(ns, stmt.name, new)
        elif isinstance(stmt, ast.Assign):
            value = self._eval(stmt.value, module, ns, cls)
            for target in stmt.targets:
                self._assign(target, value, module, ns, cls)
        elif isinstance(stmt, ast.AnnAssign):
            if stmt.value is not None:
                self._assign(stmt.target, self._eval(stmt.value, module, ns, cls), module, ns, cls)
        elif isinstance(stmt, ast.AugAssign):
            if isinstance(stmt.target, ast.Name):
                old = ns.get(stmt.target.id)
                rhs = self._eval(stmt.value, module, ns, cls)
                if (
                    isinstance(stmt.op, ast.Add)
                    and isinstance(old, Const)
                    and isinstance(rhs, Const)
                    and isinstance(old.value, (list, tuple))
                    and isinstance(rhs.value, (list, tuple))
                ):
                    ns[stmt.target.id] = Const([*old.value, *rhs.value])
                else:
                    ns[stmt.target.id] = Opaque(ast.unparse(stmt))
                    self._note_all(stmt.target.id, module, cls, stmt)
        elif isinstance(stmt, ast.Delete):
            for target in stmt.targets:
                if isinstance(target, ast.Name):
                    ns.pop(target.id, None)
                elif self._globals_subscript(target) is not None and cls is None:
                    ns.pop(self._globals_subscript(target), None)
        elif isinstance(stmt, ast.Expr):
            self._expr_stmt(stmt, module, ns, cls)
        elif isinstance(stmt, ast.If):
            if self._is_type_checking(stmt.test):
                self._exec(stmt.orelse, module, ns, cls)
            else:
                self._exec(stmt.body, module, ns, cls)
                self._exec(stmt.orelse, module, ns, cls)
        elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
            self._exec(stmt.body, module, ns, cls)
            for handler in stmt.handlers:
                scratch = dict(ns)
                self._exec(handler.body, module, scratch, cls)
                for key, val in scratch.items():
                    ns.setdefault(key, val)
            self._exec(stmt.orelse, module, ns, cls)
            self._exec(stmt.finalbody, module, ns, cls)
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            items = self._eval(stmt.iter, module, ns, cls)
            if isinstance(items, Const) and isinstance(items.value, (list, tuple)):
                for item in items.value:
                    self._assign(stmt.target, Const(item), module, ns, cls)
                    self._exec(stmt.body, module, ns, cls)
            else:
                self._assign(stmt.target, Opaque("loop variable"), module, ns, cls)
                self._exec(stmt.body, module, ns, cls)
            self._exec(stmt.orelse, module, ns, cls)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            for item in stmt.items:
                if item.optional_vars is not None:
                    self._assign(item.optional_vars, Opaque("with target"), module, ns, cls)
            self._exec(stmt.body, module, ns, cls)
        elif isinstance(stmt, (ast.Pass, ast.Global, ast.Nonlocal, ast.Raise, ast.Assert)):
            pass
        else:
            self.warnings.append(
                f"{module.path}:{stmt.lineno}: module-level {type(stmt).__name__} not modelled"
            )

    def _note_all(self, name, module, cls, stmt):
        if name == "__all__" and cls is None:
            where = f"{module.path}:{stmt.lineno}"
            self.warnings.append(f"{where}: __all__ not computable: {ast.unparse(stmt)[:80]}")

    def _assign(self, target: ast.expr, value: Value, module: Module, ns: dict, cls: Cls | None):
        if isinstance(target, ast.Name):
            ns[target.id] = value
            if isinstance(value, Opaque):
                self._note_all(target.id, module, cls, target)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                elt = elt.value if isinstance(elt, ast.Starred) else elt
                self._assign(elt, Opaque("unpacked"), module, ns, cls)
        elif isinstance(target, ast.Attribute):
            owner = self._eval(target.value, module, ns, cls)
            if isinstance(owner, Cls):
                owner.ns[target.attr] = value
            elif isinstance(owner, Module):
                owner.ns[target.attr] = value
        elif isinstance(target, ast.Subscript):
            key = self._globals_subscript(target)
            if key is not None and cls is None:
                ns[key] = value

    def _globals_subscript(self, node: ast.expr) -> str | None:
        if (
            isinstance(node, ast.Subscript)
            and self._is_globals_call(node.value)
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
        ):
            return node.slice.value
        return None

    @staticmethod
    def _is_globals_call(node: ast.expr) -> bool:
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "globals"
            and not node.args
        )

    @staticmethod
    def _is_type_checking(test: ast.expr) -> bool:
        return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
        )

    def _expr_stmt(self, stmt: ast.Expr, module: Module, ns: dict, cls: Cls | None):
        call = stmt.value
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
            return
        method, owner = call.func.attr, call.func.value
        if self._is_globals_call(owner) and cls is None:
            if method == "pop" and call.args:
                key = self._eval(call.args[0], module, ns, cls)
                if isinstance(key, Const) and isinstance(key.value, str):
                    ns.pop(key.value, None)
                else:
                    self.warnings.append(f"{module.path}:{stmt.lineno}: globals().pop of {key!r}")
            elif method in ("update", "__setitem__", "setdefault"):
                self.warnings.append(f"{module.path}:{stmt.lineno}: {ast.unparse(stmt)[:80]}")
            return
        if isinstance(owner, ast.Name) and owner.id == "__all__" and cls is None:
            old = ns.get("__all__")
            arg = self._eval(call.args[0], module, ns, cls) if call.args else None
            if isinstance(old, Const) and isinstance(arg, Const):
                if method == "extend" and isinstance(arg.value, (list, tuple)):
                    ns["__all__"] = Const([*old.value, *arg.value])
                    return
                if method == "append" and isinstance(arg.value, str):
                    ns["__all__"] = Const([*old.value, arg.value])
                    return
                if method == "remove" and isinstance(arg.value, str):
                    ns["__all__"] = Const([n for n in old.value if n != arg.value])
                    return
            ns["__all__"] = Opaque(ast.unparse(stmt))
            self._note_all("__all__", module, cls, stmt)

    def _eval(self, node: ast.expr, module: Module, ns: dict, cls: Cls | None = None) -> Value:
        if isinstance(node, ast.Constant):
            return Const(node.value)
        if isinstance(node, (ast.List, ast.Tuple)):
            items = [self._eval(e, module, ns, cls) for e in node.elts]
            if all(isinstance(i, Const) for i in items):
                values = [i.value for i in items]
                return Const(values if isinstance(node, ast.List) else tuple(values))
            return Opaque("sequence")
        if isinstance(node, ast.Dict):
            keys = [self._eval(k, module, ns, cls) if k is not None else None for k in node.keys]
            vals = [self._eval(v, module, ns, cls) for v in node.values]
            if all(isinstance(i, Const) for i in (*keys, *vals)):
                return Const({k.value: v.value for k, v in zip(keys, vals)})
            return Opaque("dict")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left = self._eval(node.left, module, ns, cls)
            right = self._eval(node.right, module, ns, cls)
            if (
                isinstance(left, Const)
                and isinstance(right, Const)
                and isinstance(left.value, (list, tuple))
                and isinstance(right.value, (list, tuple))
            ):
                return Const([*left.value, *right.value])
            return Opaque(ast.unparse(node)[:60])
        if isinstance(node, ast.Name):
            if cls is not None and node.id in ns:
                return ns[node.id]
            if node.id in module.ns:
                return module.ns[node.id]
            return Opaque(f"builtins.{node.id}", external=True)
        if isinstance(node, ast.Attribute):
            owner = self._eval(node.value, module, ns, cls)
            if isinstance(owner, (Module, Cls)):
                found = self.getattr(owner, node.attr, None)
                if found is not _MISSING:
                    return found
            return Opaque(ast.unparse(node)[:60], external=_is_external(owner))
        if isinstance(node, ast.Subscript):  # Generic[T], ...: the class subscripted
            owner = self._eval(node.value, module, ns, cls)
            return owner if isinstance(owner, Cls) else Opaque(
                ast.unparse(node)[:60], external=_is_external(owner)
            )
        if isinstance(node, ast.Call):
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr == "get"
                and self._is_globals_call(func.value)
                and node.args
            ):
                key = self._eval(node.args[0], module, ns, cls)
                if isinstance(key, Const) and key.value in module.ns:
                    return module.ns[key.value]
                if len(node.args) > 1:
                    return self._eval(node.args[1], module, ns, cls)
                return Const(None)
            return Opaque(f"call {ast.unparse(func)[:40]}")
        if isinstance(node, ast.Lambda):  # `UniversalCopy = lambda bit_size: ...`
            return Func(module.name, node)
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            for value in node.values:
                got = self._eval(value, module, ns, cls)
                if not (isinstance(got, Const) and not got.value):
                    return got
            return got
        return Opaque(type(node).__name__)

    def _import_from(self, stmt: ast.ImportFrom, module: Module, ns: dict):
        if stmt.module == "__future__":
            return
        if stmt.level:
            base = module.package
            for _ in range(stmt.level - 1):
                base = base.rpartition(".")[0]
            source_name = f"{base}.{stmt.module}" if stmt.module else base
        else:
            source_name = stmt.module
        source = self.import_module(source_name)
        for alias in stmt.names:
            if alias.name == "*":
                self._star(source, module, ns)
                continue
            value = _MISSING
            if isinstance(source, Module):
                value = self.getattr(source, alias.name, None)
                if value is _MISSING:
                    value = self._import_submodule(source, alias.name)
                if value is _MISSING and source.is_pkg and not source.opaque_stars:
                    # no attribute and no .py submodule: a compiled extension module
                    value = ExternalModule(f"{source_name}.{alias.name}")
                if value is _MISSING:
                    value = Opaque(f"{source_name}.{alias.name}")
            else:
                value = Opaque(f"{source_name}.{alias.name}", external=_is_external(source))
            ns[alias.asname or alias.name] = value

    def _star(self, source: Value, module: Module, ns: dict):
        if not isinstance(source, Module):
            module.opaque_stars.append(source.name)
            return
        exported = source.ns.get("__all__")
        if exported is None:
            module.opaque_stars.extend(source.opaque_stars)
            for key, val in list(source.ns.items()):
                if not key.startswith("_"):
                    ns[key] = val
            return
        if not (isinstance(exported, Const) and isinstance(exported.value, (list, tuple))):
            self.warnings.append(f"star import of {source.name}: __all__ is {exported!r}")
            module.opaque_stars.append(source.name)
            return
        for key in exported.value:
            value = source.ns.get(key, _MISSING)
            if value is _MISSING:
                value = self._import_submodule(source, key)
            if value is _MISSING:
                if not source.opaque_stars:  # else it comes from there
                    self.warnings.append(f"{source.name}.__all__ lists undefined {key!r}")
                    continue
                value = Opaque(f"{source.name}.{key}")
            ns[key] = value


def _is_external(value) -> bool:
    """Outside the FlyDSL tree: builtins, the standard library, third-party packages."""
    if isinstance(value, ExternalModule):
        return value.name.partition(".")[0] != "flydsl"
    return isinstance(value, Opaque) and value.external


def _relative(name: str, package: str) -> str:
    """``importlib.import_module(name, package)``'s absolute name."""
    if not name.startswith("."):
        return name
    level = len(name) - len(name.lstrip("."))
    base = package
    for _ in range(level - 1):
        base = base.rpartition(".")[0]
    rest = name[level:]
    return f"{base}.{rest}" if rest else base


def available(sources: Mapping[str, str], names: Iterable[str]) -> dict[str, bool]:
    """``{name: exists}`` for one source tree."""
    resolver = Resolver(sources)
    return {name: resolver.exists(name) for name in names}
