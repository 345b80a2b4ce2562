"""The per-document semantic model: what each name is, and the fx type of each value.

Built from the stdlib ``ast`` (fast enough for every keystroke), queried by rules and
hover. ``resolve`` answers "which FlyDSL object is this expression" as a canonical
symbol (see ``modules``); ``type_of`` answers "what fx type does this value have, and
why".
"""

from __future__ import annotations

import ast
import builtins
from functools import cached_property
from typing import TYPE_CHECKING, Callable, TypeVar

from flydsl_ls.analysis.model import fxtypes as T
from flydsl_ls.analysis.model import promotion
from flydsl_ls.analysis.model.fields import CHILD_FIELDS
from flydsl_ls.analysis.model.fxtypes import FxType, join
from flydsl_ls.analysis.model.intbounds import int_bounds
from flydsl_ls.analysis.model.modules import canonical_symbol, is_module
from flydsl_ls.analysis.model.scopes import Binding, Interrupted, Scope, ScopeBuilder, lookup, reaching, release, surely_bound
from flydsl_ls.analysis.model.text import LineIndex

if TYPE_CHECKING:
    from flydsl_ls.analysis.model.project import ProjectView

Facts = TypeVar("Facts")
IntBounds = Callable[[ast.expr], "tuple[int, int] | None"]

# Typed accessors: every release we support returns fx.Int32 from these.
TYPED_INDEX_ACCESSORS = {
    f"{module}.{kind}.{axis}"
    for module in ("fx", "fx.gpu")
    for kind in ("thread_idx", "block_idx", "block_dim", "grid_dim")
    for axis in ("x", "y", "z")
}
RAW_ID_CALLS = {"fx.gpu.thread_id", "fx.gpu.block_id", "mlir.gpu.thread_id", "mlir.gpu.block_id"}

_CALL_RESULT_KINDS = {
    T.LAYOUT: ("make_layout", "make_shape", "make_stride", "make_layout_tv", "make_ordered_layout"),
    T.ATOM: ("make_copy_atom", "make_mma_atom", "make_tiled_copy", "make_tiled_mma", "make_tiled_copy_tv"),
    T.TENSOR: ("make_view", "make_fragment_like", "make_rmem_tensor", "rocdl.make_buffer_tensor"),
}
_RESULT_KIND_OF = {f"fx.{name}": kind for kind, names in _CALL_RESULT_KINDS.items() for name in names}
RANGE_CONSTEXPR = {"fx.range_constexpr", "flyc.range_constexpr"}


# Parameter names kernels give the dialect and shim modules they pass to helpers
# (`def unpack(packed, arith, vector)`); a helper nobody calls takes the module its
# namesakes in the file are passed.
MODULE_PARAMETER_NAMES = frozenset({"arith", "vector", "scf", "buffer_ops", "rocdl", "llvm", "gpu", "memref", "math"})
_UNASKED = object()  # ``binding_of`` has no answer kept for the read


class SemanticModel:
    def __init__(
        self,
        source: str,
        tree: ast.Module,
        package: str | None = None,
        project: ProjectView | None = None,
        stop: Callable[[], bool] | None = None,
    ):
        """``stop``: asked before each statement while the scopes are built; True raises
        ``Interrupted``."""
        self.source = source
        self.tree = tree
        # The rest of the project (sibling modules, callers in other files), if known.
        self.project = project
        self._resolved: dict[int, str | None] = {}
        builder = ScopeBuilder(package, stop)
        try:
            self.module_scope: Scope = builder.build(tree)
        except Interrupted:
            release(builder.scopes)
            raise
        builder.stop = None
        self.scopes = builder.scopes
        self._scope_of_node = builder.scope_of_node
        self._scope_of_def = builder.scope_of_def
        self._path_of_node = builder.path_of_node
        self._loops = builder.loop_entries
        self._calls_by_name = builder.calls_by_name
        self._loads = builder.loads
        self._dotted_cache: dict[int, str | None] = {}
        self._bindings_of: dict[int, Binding | None] = {}  # ``binding_of``'s
        self._binding_types: dict[int, FxType | None] = {}
        self._param_modules: dict[int, str | None] = {}
        self._returned_types: dict[int, FxType] = {}  # id(def) -> what all its returns give
        self._unwraps: dict[int, bool] = {}  # id(def) -> it is a hand-rolled unwrap
        # type_of's answers (the node kept: its id is no other's), given only while no
        # binding's or return's type is being worked out (a cycle's answers are partial).
        self._types: dict[int, tuple[ast.AST, FxType]] = {}
        self._typing = 0
        self._facts: dict[Callable, object] = {}

    @cached_property
    def index(self) -> LineIndex:
        return LineIndex(self.source)

    def dispose(self) -> None:
        """Break the model's reference cycles (scopes and their bindings, per-model
        facts) so that it and its syntax tree are freed at once. Left to the cyclic
        collector, the models of a few keystrokes pile up into a full collection that
        stalls the next one (170 ms on a 6,000-line file). Unusable afterwards."""
        release(self.scopes)
        self.__dict__.clear()

    def facts(self, kind: Callable[[SemanticModel], Facts]) -> Facts:
        """The facts of ``kind`` (a class taking the model) about this model, built on the
        first ask and kept as long as the model: where rules and their support modules
        keep what they work out once per file. Freed by ``dispose`` with the rest."""
        facts = self._facts.get(kind)
        if facts is None:
            facts = self._facts[kind] = kind(self)
        return facts  # type: ignore[return-value]

    # --- names ----------------------------------------------------------------
    def scope_of(self, name: ast.Name) -> Scope | None:
        return self._scope_of_node.get(id(name))

    def binding_of(self, name: ast.Name) -> Binding | None:
        """The binding a read of this tree sees, kept per read: most reads are asked about
        by several rules (579,000 questions of 219,000 reads over the corpus)."""
        key = id(name)
        found = self._bindings_of.get(key, _UNASKED)
        if found is _UNASKED:
            scope = self._scope_of_node.get(key)
            if scope is None:
                return None  # not a read of this tree (kept for those only: their ids stay theirs)
            found = self._bindings_of[key] = lookup(name.id, scope, (name.lineno, name.col_offset))
        return found

    def target_binding(self, name: ast.Name) -> Binding | None:
        """The binding that assigning to ``name`` (a Store) creates."""
        for scope in self.scopes:
            for binding in scope.bindings.get(name.id, ()):
                if binding.node is name:
                    return binding
        return None

    @cached_property
    def _uses(self) -> dict[int, list[ast.Name]]:
        """Reads per binding, every name's (``use_counts``)."""
        uses: dict[int, list[ast.Name]] = {}
        for name in self._loads_by_name:
            uses.update(self._uses_of_name(name))
        return uses

    @cached_property
    def _loads_by_name(self) -> dict[str, list[ast.Name]]:
        by_name: dict[str, list[ast.Name]] = {}
        for name in self._loads:
            by_name.setdefault(name.id, []).append(name)
        return by_name

    def _uses_of_name(self, name: str) -> dict[int, list[ast.Name]]:
        """Reads per binding of ``name``, in the order of the reads. A read counts for every
        binding it may see: `x = a` then `if c: x = b` leaves both values live at a later
        read of x. Worked out per name, as asked: the reads of the names no rule asks about
        (most of a file's 7,000) are never resolved."""
        found = self.__dict__.setdefault("_name_uses", {})
        uses = found.get(name)
        if uses is None:
            uses = found[name] = {}
            for read in self._loads_by_name.get(name, ()):
                for binding in self.reaching_bindings(read):
                    uses.setdefault(id(binding), []).append(read)
        return uses

    def parent_map(self, root: ast.AST) -> dict[int, ast.AST] | SubtreeParents:
        """Child -> parent for the nodes under ``root`` (``root``'s own parent left out).
        One table for the whole tree, built once; a smaller root gets a view of it (maps
        built per function cost a walk each, and nested functions were walked again for
        every enclosing one: a fifth of a check on a 5,000-line builder)."""
        if root is self.tree:
            return self._parents
        views = self.__dict__.setdefault("_parent_views", {})
        view = views.get(id(root))
        if view is None:
            if id(root) in self._parents:
                view = SubtreeParents(self._parents, root)
            else:  # not in this tree (a stub's statement, another file's node)
                view = parent_table(root)
            views[id(root)] = view
        return view

    @cached_property
    def _parents(self) -> dict[int, ast.AST]:
        return self._walked[0]

    def nodes_of(self, kinds: type | tuple[type, ...]) -> list[ast.AST]:
        """The tree's nodes of these types, in ``ast.walk`` order (which is also that of
        any subtree's walk: filter by ``parent_map(root)``)."""
        found = self.__dict__.setdefault("_nodes_of", {})
        if kinds not in found:
            found[kinds] = [node for node in self._walked[1] if isinstance(node, kinds)]
        return found[kinds]

    @cached_property
    def _walked(self) -> tuple[dict[int, ast.AST], list[ast.AST]]:
        return _walk(self.tree)

    def uses_of(self, binding: Binding) -> list[ast.Name]:
        """Every read that resolves to ``binding``."""
        return self._uses_of_name(binding.name).get(id(binding), [])

    @cached_property
    def use_counts(self) -> dict[int, int]:
        """Reads per binding (keyed by ``id(binding)``), counting ``__all__`` entries."""
        counts = {key: len(names) for key, names in self._uses.items()}
        for exported in _dunder_all(self.tree):
            for binding in self.module_scope.bindings.get(exported, ()):
                counts[id(binding)] = counts.get(id(binding), 0) + 1
        return counts

    @cached_property
    def module_imports(self) -> list[tuple[str, Binding]]:
        """(name, binding) of every import bound in the module scope. Read without the
        incremental analysis's recording (``tracking``): imports are in every reduced module,
        so listing them does not depend on the rest of the file."""
        return [
            (name, b)
            for name, bindings in dict.items(self.module_scope.bindings)
            for b in bindings
            if b.kind == "import"
        ]

    def function_scope(self, node: ast.AST) -> Scope | None:
        return self._scope_of_def.get(id(node))

    def calls_to(self, function: ast.FunctionDef) -> list[ast.Call]:
        """The calls in this file that call ``function`` by its name."""
        return [
            call
            for call in self._calls_by_name.get(function.name, ())
            if (callee := self.binding_of(call.func)) is not None and callee.node is function
        ]

    def parents_around(self, name: ast.Name) -> dict[int, ast.AST]:
        """The parent map of the function a read of ``name`` stands in (of the module at
        module level)."""
        scope = self._scope_of_node.get(id(name))
        while scope is not None and scope.kind not in ("function", "module"):
            scope = scope.parent
        return self.parent_map(scope.node if scope is not None else self.tree)

    # --- what an expression refers to -------------------------------------------
    def resolve(self, expr: ast.AST) -> str | None:
        """Canonical FlyDSL symbol of a name or attribute chain (``fx.arith.addf``)."""
        key = id(expr)
        canon = self._resolved.get(key, _UNASKED)  # asked 1.4 million times over the corpus
        if canon is not _UNASKED:
            return canon
        dotted = self.dotted(expr)
        canon = canonical_symbol(dotted) if dotted else None
        if dotted and canon is None and self.project is not None:
            elsewhere = self.project.resolve(dotted)
            canon = canonical_symbol(elsewhere) if elsewhere else None
        self._resolved[key] = canon
        return canon

    def dotted(self, expr: ast.AST) -> str | None:
        """Absolute dotted path of a name or attribute chain, through aliases."""
        key = id(expr)
        known = self._dotted_cache.get(key, _UNASKED)
        if known is not _UNASKED:
            return known
        self._dotted_cache[key] = None  # cycle guard
        result = None
        if isinstance(expr, ast.Name):
            result = self._dotted_name(expr)
        elif isinstance(expr, ast.Attribute):
            base = self.dotted(expr.value)
            result = f"{base}.{expr.attr}" if base else None
        self._dotted_cache[key] = result
        return result

    def _dotted_name(self, name: ast.Name) -> str | None:
        scope = self._scope_of_node.get(id(name))
        if scope is None:
            return None
        binding = self.binding_of(name)  # kept: the rules asked of most names already
        if binding is None:
            if hasattr(builtins, name.id):  # `len` after `from ...dialects.vector import *`
                return None
            for module in _star_modules(scope):
                if canonical_symbol(module):
                    return f"{module}.{name.id}"
            return None
        return self.binding_dotted(binding)

    def may_name_symbol(self, name: ast.Name) -> bool:
        """``resolve`` may give the read ``name`` a symbol other than a module passed in as
        a parameter: it reads an import, an alias of a name or attribute, a function (a
        hand-rolled unwrap), or nothing this file binds (a star import): what
        ``binding_dotted`` follows. Most reads (locals computed, loop variables) are none of
        these: rules looking for an API under any name skip them unresolved."""
        binding = self.binding_of(name)
        if binding is None:
            return True
        kind = binding.kind
        if kind in ("assign", "annassign", "walrus"):
            return isinstance(binding.value, (ast.Name, ast.Attribute))
        return kind in ("import", "def")

    def binding_dotted(self, binding: Binding) -> str | None:
        if binding.kind == "import":
            return binding.dotted
        if binding.kind in ("assign", "annassign", "walrus") and isinstance(
            binding.value, (ast.Name, ast.Attribute)
        ):
            return self.dotted(binding.value)  # alias such as ``_raw = arith._to_raw``
        if binding.kind == "param":
            return self._param_module(binding)
        if binding.kind == "def":
            # Kept per def: each read of a local function asks (10,000 reads over the corpus).
            unwrap = self._unwraps.get(id(binding.node))
            if unwrap is None:
                unwrap = self._unwraps[id(binding.node)] = is_unwrap_idiom(binding.node)
            return HAND_ROLLED_UNWRAP if unwrap else None
        return None

    def _param_module(self, binding: Binding) -> str | None:
        """A module passed in as a parameter: the one every call site agrees on, in this file
        and across the project. A caller that hands on a parameter of its own which cannot
        be resolved does not disagree. A helper nobody calls (exported API) takes the module
        that the file's other parameters of the same name get from their callers."""
        key = id(binding)
        if key in self._param_modules:
            return self._param_modules[key]
        self._param_modules[key] = None  # a cycle of parameters resolves to nothing
        function = binding.scope.node
        result = None
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            passed = self._modules_passed(function, binding)
            if not passed and binding.name in MODULE_PARAMETER_NAMES:
                passed = self._modules_of_namesakes(binding)
            if len(passed) == 1:
                result = passed.pop()
        self._param_modules[key] = result
        return result

    def _modules_passed(self, function: ast.FunctionDef, binding: Binding) -> set[str | None]:
        passed: set[str | None] = set()
        for call in self._calls_by_name.get(function.name, ()):
            callee = self.binding_of(call.func)
            if callee is None or callee.node is not function:
                continue
            arg = _argument_for(call, binding)
            dotted = self.dotted(arg) if arg is not None else None
            canon = canonical_symbol(dotted) if dotted else None
            if canon and is_module(canon):
                passed.add(dotted)
            elif not (isinstance(arg, ast.Name) and self._is_parameter(arg)):
                passed.add(None)
        if self.project is not None and _importable(binding.scope):
            passed |= {_passed_for(args, binding) for args in self.project.module_arguments(function.name)}
        return passed

    def _is_parameter(self, name: ast.Name) -> bool:
        found = self.binding_of(name)
        return found is not None and found.kind == "param"

    def _modules_of_namesakes(self, binding: Binding) -> set[str | None]:
        """The modules the file's callers pass to its other parameters named like ``binding``."""
        found: set[str | None] = set()
        for scope in self._scope_of_def.values():
            for other in scope.bindings.get(binding.name, ()):
                if other is not binding and other.kind == "param":
                    function = other.scope.node
                    if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        found |= {d for d in self._modules_passed(function, other) if d is not None}
        return found

    # --- fx types ---------------------------------------------------------------
    def type_of(self, expr: ast.AST) -> FxType:
        """The fx type ``expr`` gives (FLY103 and FLY301 ask of the same operands: 5,398
        questions, 1,785 distinct, on aiter's 5.7k-line MoE kernel)."""
        if self._typing:
            return self._type_of(expr)
        known = self._types.get(id(expr))
        if known is not None and known[0] is expr:
            return known[1]
        found = self._type_of(expr)
        self._types[id(expr)] = (expr, found)
        return found

    def _type_of(self, expr: ast.AST) -> FxType:
        if isinstance(expr, ast.Constant):
            value = expr.value
            if isinstance(value, bool):
                return FxType(T.PY_BOOL, "literal")
            if isinstance(value, int):
                return FxType(T.PY_INT, "literal")
            if isinstance(value, float):
                return FxType(T.PY_FLOAT, "literal")
            if isinstance(value, str):
                return FxType(T.PY_STR, "literal")
            return T.UNKNOWN_TYPE
        if isinstance(expr, ast.Name):
            if isinstance(expr.ctx, ast.Store):  # the type it gets here
                binding = self.target_binding(expr)
                found = self.binding_type(binding) if binding is not None else None
                return found or T.UNKNOWN_TYPE
            return self._name_type(expr)
        if isinstance(expr, ast.Attribute):
            symbol = self.resolve(expr)
            if symbol in TYPED_INDEX_ACCESSORS:
                return FxType("fx.Int32", ast.unparse(expr), expr.lineno)
            return T.UNKNOWN_TYPE
        if isinstance(expr, ast.Call):
            return self._call_type(expr)
        if isinstance(expr, ast.BinOp):
            return _arith_result(self.type_of(expr.left), self.type_of(expr.right), expr, self._int_bounds)
        if isinstance(expr, ast.UnaryOp):
            return _unary_result(self.type_of(expr.operand), expr)
        if isinstance(expr, ast.Compare):
            return _compare_result([self.type_of(e) for e in (expr.left, *expr.comparators)], expr)
        if isinstance(expr, ast.IfExp):
            return join([self.type_of(expr.body), self.type_of(expr.orelse)])
        return T.UNKNOWN_TYPE

    def reaching_bindings(self, name: ast.Name) -> list[Binding]:
        """Every binding whose value a read of ``name`` may see."""
        scope = self._scope_of_node.get(id(name))
        if scope is None:
            return []
        path = self._path_of_node.get(id(name), ())
        return reaching(name.id, scope, (name.lineno, name.col_offset), path, self._loops)

    def surely_bound(self, name: ast.Name) -> bool:
        """A read of ``name`` in its own scope sees a binding on every path."""
        scope = self._scope_of_node.get(id(name))
        if scope is None:
            return False
        path = self._path_of_node.get(id(name), ())
        return surely_bound(name.id, scope, (name.lineno, name.col_offset), path, self._loops)

    def _name_type(self, name: ast.Name) -> FxType:
        bindings = self.reaching_bindings(name)
        types = [t for t in (self.binding_type(b) for b in bindings) if t is not None]
        if not bindings or not types:
            return T.UNKNOWN_TYPE
        return join(types)

    def binding_type(self, binding: Binding) -> FxType | None:
        """The binding's type; None while it is being computed (a loop-carried cycle)."""
        key = id(binding)
        if key in self._binding_types:
            return self._binding_types[key]
        self._binding_types[key] = None
        self._typing += 1
        try:
            result = self._compute_binding_type(binding)
        finally:
            self._typing -= 1
        self._binding_types[key] = result
        return result

    def _compute_binding_type(self, binding: Binding) -> FxType:
        line = binding.position[0]
        if binding.annotation is not None:
            annotated = self.annotation_type(binding.annotation)
            if annotated.known:
                return FxType(annotated.name, f"annotation {ast.unparse(binding.annotation)}", line)
        if binding.kind in ("assign", "annassign", "walrus") and binding.value is not None:
            inferred = self.type_of(binding.value)
            if inferred.known and inferred.line is None:
                return FxType(inferred.name, inferred.origin, line)
            return inferred
        if binding.kind == "augassign":
            node = binding.value
            target = self._name_type_before(binding)
            return _arith_result(target, self.type_of(node.value), node, self._int_bounds)
        if binding.kind in ("for", "comprehension") and isinstance(binding.iter, ast.Call):
            callee = self.resolve(binding.iter.func)
            if callee in RANGE_CONSTEXPR:
                return FxType(T.PY_INT, "range_constexpr loop variable", line)
            if _is_builtin_range(self, binding.iter) and all(
                self.type_of(a).name == T.PY_INT for a in binding.iter.args
            ):
                return FxType(T.PY_INT, "range over Python ints", line)
        return T.UNKNOWN_TYPE

    def _returned_type(self, func: ast.Name) -> FxType:
        """What a helper of this file returns, when all its returns agree."""
        binding = self.binding_of(func)
        function = binding.node if binding is not None and binding.kind == "def" else None
        if not isinstance(function, ast.FunctionDef) or function.decorator_list:
            return T.UNKNOWN_TYPE
        key = id(function)
        returned = self._returned_types
        if key not in returned:
            returned[key] = T.UNKNOWN_TYPE  # recursion guard
            values = [node.value for node in own_returns(function)]
            if values and all(v is not None for v in values):
                self._typing += 1
                try:
                    kind = join([self.type_of(v) for v in values])
                finally:
                    self._typing -= 1
                if kind.known:
                    kind = FxType(kind.name, f"returned by {function.name}()", kind.line)
                returned[key] = kind
        return returned[key]

    def _name_type_before(self, binding: Binding) -> FxType:
        target = binding.node
        scope = binding.scope
        path = binding.path
        bindings = reaching(
            binding.name, scope, (target.lineno, target.col_offset), path, self._loops
        )
        types = [t for t in (self.binding_type(b) for b in bindings if b is not binding) if t]
        return join(types) if types else T.UNKNOWN_TYPE

    def annotation_type(self, annotation: ast.expr) -> FxType:
        base = annotation.value if isinstance(annotation, ast.Subscript) else annotation
        symbol = self.resolve(base)
        if symbol is None:
            return T.UNKNOWN_TYPE
        name = symbol.removeprefix("fx.")
        if symbol.startswith("fx.") and T.is_numeric_class(name):
            return FxType(symbol)
        if symbol in ("fx.Constexpr", "flyc.Constexpr"):
            return FxType(T.PY_INT if isinstance(annotation, ast.Subscript) else "constexpr")
        if symbol in ("fx.Tensor", "flyc.Tensor"):
            return FxType(T.TENSOR)
        if symbol == "fx.Vector":
            return FxType(T.VECTOR)
        return T.UNKNOWN_TYPE

    def _call_type(self, call: ast.Call) -> FxType:
        func = call.func
        symbol = self.resolve(func)
        line = call.lineno
        if symbol is not None:
            name = symbol.removeprefix("fx.")
            if symbol.startswith("fx.") and T.is_numeric_class(name):
                return FxType(symbol, f"{symbol}(...)", line)
            if symbol in ("fx.Vector", "fx.Vector.filled", "fx.Vector.from_elements"):
                return FxType(T.VECTOR, f"{symbol}(...)", line)
            if symbol == "fx.arith.ArithValue":
                return FxType(T.ARITH_VALUE, "ArithValue(...)", line)
            if symbol in RAW_ID_CALLS:
                return FxType(T.RAW, f"{ast.unparse(func)}(...) returns a raw ir.Value", line)
            if is_raw_op(symbol):
                return FxType(T.RAW, f"raw dialect op {ast.unparse(func)}", line)
            if symbol in _RESULT_KIND_OF:
                return FxType(_RESULT_KIND_OF[symbol], f"{symbol}(...)", line)
            return T.UNKNOWN_TYPE
        if isinstance(func, ast.Name):
            return self._returned_type(func)
        if isinstance(func, ast.Attribute):
            if func.attr == "ir_value" and not call.args:
                # a raw value (a Vector's is itself); a raw value has no ir_value()
                receiver = self.type_of(func.value)
                return T.UNKNOWN_TYPE if receiver.name in (T.RAW, T.ARITH_VALUE) else FxType(T.RAW, ".ir_value()", line)
            if func.attr == "to" and len(call.args) == 1 and not call.keywords:
                return self._converted(func.value, call)
        return T.UNKNOWN_TYPE

    def _int_bounds(self, expr: ast.expr) -> tuple[int, int] | None:
        return int_bounds(self, expr)

    def _converted(self, receiver: ast.expr, call: ast.Call) -> FxType:
        """``v.to(fx.Int32)``: an fx.Int32 for an fx scalar ``v`` (unknown where FlyDSL
        refuses the pair, Index and the floats), a Vector for a Vector; unknown for a ``v``
        of unknown type (a Vector's `.to` keeps it a Vector, a raw value has none)."""
        target = self.resolve(call.args[0])
        if not (target and target.startswith("fx.") and T.is_numeric_class(target[3:])):
            return T.UNKNOWN_TYPE
        kind = self.type_of(receiver)
        cls = _operand_class(kind, receiver, self._int_bounds)
        if cls is None or kind.is_python or kind.is_raw:
            return T.UNKNOWN_TYPE
        found = promotion.answer(f"{{}}.to({target[3:]})", cls)
        if found is None and kind.is_fx_scalar:  # outside the table: Numeric.to builds the target
            return FxType(target, f".to({target})", call.lineno)
        return _traced(found, f".to({target})", call)


# A hand-rolled ``def _raw(v)`` that returns ``v.ir_value()`` or ``v`` is ``_to_raw``.
HAND_ROLLED_UNWRAP = "flydsl.expr.arith._to_raw"


def is_unwrap_idiom(function: ast.AST) -> bool:
    """One parameter; every return gives back either it or its ``.ir_value()``."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    args = function.args
    if len(args.args) != 1 or args.posonlyargs or args.kwonlyargs or args.vararg or args.kwarg:
        return False
    param = args.args[0].arg
    returned = set()
    for node in ast.walk(function):
        if isinstance(node, (ast.FunctionDef, ast.Lambda, ast.ClassDef)) and node is not function:
            return False
        if isinstance(node, ast.Return):
            values = [node.value.body, node.value.orelse] if isinstance(node.value, ast.IfExp) else [node.value]
            for value in values:
                if isinstance(value, ast.Name) and value.id == param:
                    returned.add("same")
                elif (
                    isinstance(value, ast.Call)
                    and not value.args
                    and isinstance(value.func, ast.Attribute)
                    and value.func.attr == "ir_value"
                    and isinstance(value.func.value, ast.Name)
                    and value.func.value.id == param
                ):
                    returned.add("unwrapped")
                else:
                    return False
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.For, ast.While, ast.With, ast.Raise)):
            return False
    return returned == {"same", "unwrapped"}


def own_returns(function: ast.FunctionDef):
    """The return statements of ``function`` itself, not of functions nested in it."""
    stack = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            yield node
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def _dunder_all(tree: ast.Module) -> list[str]:
    names: list[str] = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
                value = stmt.value
                if isinstance(value, (ast.List, ast.Tuple)):
                    names += [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return names


# fx.arith functions that return typed values for typed operands; the rest of the
# module is the raw arith dialect (star-re-exported) or helpers returning raw values.
_TYPED_ARITH = {"max", "min", "maxnumf", "minnumf", "maximumf", "minimumf", "ceildiv", "fastmath"}


def is_raw_op(symbol: str) -> bool:
    module, _, op = symbol.rpartition(".")
    if module.startswith("mlir.ir"):  # types, attributes, locations: `ir.Type.parse(...)`
        return False
    if module.startswith("mlir.") and not is_module(symbol):
        return op[:1].islower()
    return module == "fx.arith" and op[:1].islower() and op not in _TYPED_ARITH


def _star_modules(scope: Scope):
    while scope is not None:
        yield from reversed(scope.star_imports)
        scope = scope.parent


def _passed_for(arguments: dict, param: Binding) -> str | None:
    if param.name in arguments:
        return arguments[param.name]
    return arguments.get(param.param_index)


def _argument_for(call: ast.Call, param: Binding) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == param.name:
            return keyword.value
    index = param.param_index
    if index is not None and index < len(call.args):
        arg = call.args[index]
        return None if isinstance(arg, ast.Starred) else arg
    return None


def _is_builtin_range(model: SemanticModel, call: ast.Call) -> bool:
    return (
        isinstance(call.func, ast.Name)
        and call.func.id == "range"
        and model.binding_of(call.func) is None
    )


def _compare_result(operands: list[FxType], node: ast.AST) -> FxType:
    if all(t.is_python for t in operands):
        return FxType(T.PY_BOOL, "Python comparison")
    if any(t.is_fx_scalar for t in operands) and all(t.is_fx_scalar or t.is_python for t in operands):
        return FxType("fx.Boolean", "comparison of fx values", node.lineno)
    return T.UNKNOWN_TYPE


def _arith_result(left: FxType, right: FxType, node: ast.AST, bounds: IntBounds) -> FxType:
    """Type of ``left <op> right`` following fx operator overloading, as FlyDSL's tracer
    gives it (``promotion``); unknown for what it was not traced on (a raw value, an fx
    class outside the table, an operand of unknown type)."""
    if left.is_python and right.is_python:
        name = T.PY_FLOAT if T.PY_FLOAT in (left.name, right.name) else T.PY_INT
        return FxType(name, "Python arithmetic")
    operands = (node.target, node.value) if isinstance(node, ast.AugAssign) else (node.left, node.right)
    classes = [_operand_class(t, e, bounds) for t, e in zip((left, right), operands)]
    if left.name == T.ARITH_VALUE and classes[1] is None:
        # its operator runs first, and gives an ArithValue whatever the right (a Vector for a
        # Vector, an ArithValue too); an ArithValue on the right of an fx value gives an fx one
        return FxType(T.ARITH_VALUE, "arithmetic on an ArithValue", node.lineno)
    if None in classes or not (left.is_typed or right.is_typed):  # arithmetic on raw values stays raw
        return T.UNKNOWN_TYPE
    found = promotion.result(classes[0], node.op, classes[1])
    typed = left if left.is_typed else right
    return _traced(found, f"arithmetic on {typed.name}", node)


def _unary_result(operand: FxType, node: ast.UnaryOp) -> FxType:
    """``-x``, ``+x``, ``~x``: Python's rules on a Python number (a bool gives an int),
    FlyDSL's tracer on fx values (``-`` refuses a Boolean, ``~`` a float)."""
    if isinstance(node.op, ast.Not):
        return T.UNKNOWN_TYPE
    if operand.is_python:
        return FxType(T.PY_INT, "Python arithmetic") if operand.name == T.PY_BOOL else operand
    cls = _TRACED_CLASSES.get(operand.name) or (operand.name[3:] if operand.is_fx_scalar else None)
    if cls is None:
        return T.UNKNOWN_TYPE
    found = promotion.answer(f"{promotion.SYMBOLS[type(node.op)]} {{}}", cls)
    if operand.is_raw:  # `-v` is an ArithValue, as raw as `v` (which has no `+v`)
        return operand if found not in (None, promotion.RAISES) else T.UNKNOWN_TYPE
    return _traced(found, operand.origin, node)


def _traced(found: str | None, origin: str, node: ast.AST) -> FxType:
    """The model's type for one of ``promotion``'s answers."""
    if found is None or found == promotion.RAISES:
        return T.UNKNOWN_TYPE
    name = _TRACED_NAMES.get(found) or (f"fx.{found}" if T.is_numeric_class(found) else T.UNKNOWN)
    return FxType(name, origin, node.lineno) if name != T.UNKNOWN else T.UNKNOWN_TYPE


_TRACED_NAMES = {"Vector": T.VECTOR, "ArithValue": T.ARITH_VALUE, "int": T.PY_INT, "float": T.PY_FLOAT, "bool": T.PY_BOOL}
_TRACED_CLASSES = {T.VECTOR: "Vector", T.ARITH_VALUE: "ArithValue", T.RAW: "ir.Value"}


def _operand_class(operand: FxType, expr: ast.expr, bounds: IntBounds) -> str | None:
    """How the promotion table names an operand: its fx class, ``Vector``, ``ArithValue``,
    ``ir.Value`` or its Python class (an int's by the values ``bounds`` reads); None for an
    unknown one."""
    if operand.is_fx_scalar:
        return operand.name[3:]
    if operand.is_python:
        return promotion.python_class(operand.name, bounds(expr) if operand.name == T.PY_INT else None)
    return _TRACED_CLASSES.get(operand.name)


def _importable(function: Scope) -> bool:
    """Another file can call this function: it is defined in the module or in its classes,
    not inside another function (asking the project about a nested `compute_tile` built
    the models of every file mentioning the name)."""
    outer = function.parent
    while outer is not None and outer.kind == "class":
        outer = outer.parent
    return outer is not None and outer.kind == "module"


def parent_table(root: ast.AST) -> dict[int, ast.AST]:
    """Child -> parent for every node under ``root``."""
    return _walk(root)[0]


def nodes_under(root: ast.AST) -> list[ast.AST]:
    """``root`` and every node under it, as ``ast.walk`` yields them (but for the shared
    operator and context singletons): ``_walk`` without the parent table, at about half
    its cost."""
    return _walk(root, parents=False)[1]


def _walk(root: ast.AST, parents: bool = True) -> tuple[dict[int, ast.AST], list[ast.AST]]:
    """The parent table of the nodes under ``root`` (left empty unless ``parents``) and
    every node in ``ast.walk`` order, in one walk. The operator and
    context fields hold shared singletons (one ``ast.Load`` for the whole tree): left out."""
    table: dict[int, ast.AST] | None = {} if parents else None
    order: list[ast.AST] = [root]
    for node in order:  # grows as it goes: breadth first, as ast.walk
        for name in CHILD_FIELDS[type(node)]:
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        order.append(item)
                        if table is not None:
                            table[id(item)] = node
            elif isinstance(value, ast.AST):
                order.append(value)
                if table is not None:
                    table[id(value)] = node
    return table if table is not None else {}, order



class SubtreeParents:
    """The part of a whole-tree parent table under one node, read as a dict (``get``,
    ``in``, ``[]``): a node's parent when the node lies under the root."""

    __slots__ = ("_table", "_root", "_inside")

    def __init__(self, table: dict[int, ast.AST], root: ast.AST):
        self._table = table
        self._root = root
        self._inside: dict[int, bool] = {id(root): False}  # node id -> lies strictly under root

    def _under(self, key: int) -> bool:
        inside = self._inside
        known = inside.get(key)
        if known is not None:
            return known
        path = []
        node_id, answer = key, False
        while True:
            parent = self._table.get(node_id)
            if parent is None:
                break
            path.append(node_id)
            if parent is self._root:
                answer = True
                break
            node_id = id(parent)
            known = inside.get(node_id)
            if known is not None:
                answer = known
                break
        for visited in path:
            inside[visited] = answer
        return answer

    def get(self, key: int, default=None):
        return self._table[key] if self._under(key) else default

    def __contains__(self, key: int) -> bool:
        return self._under(key)

    def __getitem__(self, key: int) -> ast.AST:
        if not self._under(key):
            raise KeyError(key)
        return self._table[key]
