"""What a file's `s_waitcnt` calls wait on: the static value of their bitfields, through
the file's constants and helpers (forwarders, encoders), and the helpers kernels import from
a sibling module. Model-layer facts: FLY401 rewrites the bitfields, FLY402 finds the dead
shims (its declared scope asks which defs are ``shim_shaped`` and which names are a
``COUNTER_CONSTANT``)."""

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from flydsl_ls.analysis.model import waitcnt
from flydsl_ls.analysis.model.modules import RELATIVE
from flydsl_ls.analysis.model.project import field_settings
from flydsl_ls.analysis.model.semantic import SemanticModel

WAIT_CALLS = {"fx.rocdl.s_waitcnt", "mlir.rocdl.s_waitcnt"}
COUNTER_PARAMS = {"vmcnt", "lgkmcnt", "expcnt"}
# Names of magic wait-counter constants: _VMCNT_LO_MASK, _LGKMCNT_EXPCNT_BASE, LGKMCNT_0_ONLY.
# (A bare `CNT_` would also take unrelated counts such as aiter's `CNT_SU`.)
COUNTER_CONSTANT = re.compile(r"(?:VM|LGKM|EXP|WAIT)CNT_")
# Helpers kernels import from a sibling module (their body is not in this file).
IMPORTED_FORWARDERS = {"_s_waitcnt"}  # _s_waitcnt(bits) -> s_waitcnt(bits)
IMPORTED_ENCODERS = {"_encode_waitcnt"}  # the legacy vm_lo|exp<<4|lgkm<<8|vm_hi<<14
IMPORTED_VM_ONLY = {"_waitcnt_vm_n"}  # legacy vmcnt(n) with lgkmcnt=63, expcnt=7
_LIMIT = 1 << 64
_DEPTH = 40


# --- static evaluation of wait-counter bitfields ------------------------------------------
@dataclass(frozen=True)
class Value:
    bits: int
    assumed: frozenset = frozenset()  # imported helpers whose body we took on trust


@dataclass(eq=False)
class Helper:
    """A side-effect-free function: assignments, then ``return <int>`` or one wait call."""

    node: ast.FunctionDef
    assigns: list  # (name, expr) in order
    result: ast.expr  # the returned expression, or the wait call's bitfield
    wait: ast.Call | None  # the forwarding s_waitcnt call (forwarders only)
    returns_wait: bool = False
    depends_on_params: bool = False

    @property
    def forwarder(self) -> bool:
        return self.wait is not None

    @property
    def waitcnt_encoder(self) -> bool:
        params = {a.arg for a in _positional(self.node.args) + self.node.args.kwonlyargs}
        return not self.forwarder and (
            "waitcnt" in self.node.name.lower() or bool(params & COUNTER_PARAMS)
        )

    @property
    def shim(self) -> bool:
        """A waitcnt shim: a forwarder whose bitfield comes from its arguments, or an encoder."""
        return (self.forwarder and self.depends_on_params) or self.waitcnt_encoder


@dataclass
class Site:
    """One wait the rule reports: a positional s_waitcnt, or a call of a shim."""

    bits_expr: ast.expr | None
    value: Value | None
    fixable_shape: bool = True  # the call can be replaced by an expression of equal value
    why_not: str = ""


@dataclass
class WaitcntFacts:
    """Per-file facts shared by FLY401 and FLY402 (computed once per model)."""

    model: SemanticModel
    helpers: dict = field(default_factory=dict)  # id(FunctionDef) -> Helper
    _siblings: dict = field(default_factory=dict)  # (module, function) -> (facts, Helper | None) | None
    _sibling_paths: dict = field(default_factory=dict)  # dotted -> the module defining it | None
    _path_of_node: dict = field(default_factory=dict)  # id(called name or attribute) -> the same
    _mentions: dict = field(default_factory=dict)  # (sibling module, words) -> its text has one
    # While `waitcnt_counts` asks "what if this unknown were x": (hole key, x). See hole_key.
    hole: tuple | None = None

    def __post_init__(self):
        for scope in self.model.scopes:  # every def opens a scope: no tree walk needed
            if scope.kind == "function" and isinstance(scope.node, ast.FunctionDef):
                helper = self._shape(scope.node)
                if helper is not None:
                    self.helpers[id(scope.node)] = helper

    # --- helpers ---------------------------------------------------------------------------
    def _shape(self, fn: ast.FunctionDef) -> Helper | None:
        args = fn.args
        if fn.decorator_list or args.vararg or args.kwarg:
            return None
        body = fn.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # docstring
        if not body:
            return None
        assigns = []
        for stmt in body[:-1]:
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
            ):
                assigns.append((stmt.targets[0].id, stmt.value))
            elif (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and stmt.value is not None
            ):
                assigns.append((stmt.target.id, stmt.value))
            else:
                return None
        last = body[-1]
        value = last.value if isinstance(last, (ast.Return, ast.Expr)) else None
        if value is None:
            return None
        if isinstance(value, ast.Call) and self.model.resolve(value.func) in WAIT_CALLS:
            bits = positional_bitfield(value)
            if bits is None or extra_arguments(value):
                return None
            helper = Helper(fn, assigns, bits, value, returns_wait=isinstance(last, ast.Return))
        elif isinstance(last, ast.Return):
            helper = Helper(fn, assigns, value, None)
        else:
            return None
        if not all(int_shaped(e) for e in [helper.result, *(e for _, e in assigns)]):
            return None  # attribute reads, subscripts, ...: not a pure bitfield computation
        helper.depends_on_params = self._depends_on_params(helper)
        return helper

    def _depends_on_params(self, helper: Helper) -> bool:
        params = {a.arg for a in _positional(helper.node.args) + helper.node.args.kwonlyargs}
        tainted = set(params)
        for name, expr in helper.assigns:
            if _names(expr) & tainted:
                tainted.add(name)
            else:
                tainted.discard(name)
        return bool(_names(helper.result) & tainted)

    def helper_called(self, call: ast.Call) -> Helper | None:
        """The local helper ``call`` calls by name (one definition, no shadowing)."""
        if not isinstance(call.func, ast.Name):
            return None
        binding = self.model.binding_of(call.func)
        if binding is None or binding.kind != "def" or len(binding.scope.bindings[binding.name]) != 1:
            return None
        return self.helpers.get(id(binding.node))

    def imported_helper(self, func: ast.expr) -> str | None:
        """``_s_waitcnt``/``_encode_waitcnt``/``_waitcnt_vm_n`` imported from another module."""
        name = _called_name(func)
        if name not in IMPORTED_FORWARDERS | IMPORTED_ENCODERS | IMPORTED_VM_ONLY:
            return None
        return name if self._imported_elsewhere(func) is not None else None

    def _imported_elsewhere(self, func: ast.expr) -> str | None:
        """The dotted path of ``func``, a name or an attribute chain on one, when that name is
        bound by an import and the path is neither FlyDSL itself nor a helper layer we model
        elsewhere ("" when the path is unknown); else None."""
        root = func
        while isinstance(root, ast.Attribute):
            root = root.value
        binding = self.model.binding_of(root) if isinstance(root, ast.Name) else None
        if binding is None or binding.kind != "import":
            return None
        dotted = self.model.dotted(func) or ""
        if dotted.startswith("flydsl") or self.model.resolve(func) is not None:
            return None
        return dotted

    def enclosing_shim_wait(self, call: ast.Call) -> bool:
        """``call`` is the forwarding wait of a shim (reported at the shim's call sites)."""
        return any(h.wait is call and h.shim for h in self.helpers.values())

    # --- sites ------------------------------------------------------------------------------
    def site(self, call: ast.Call) -> Site | None:
        symbol = self.model.resolve(call.func)
        if symbol in WAIT_CALLS:
            bits = positional_bitfield(call)
            if bits is None or self.enclosing_shim_wait(call):
                return None
            if extra_arguments(call):
                return Site(bits, None, False, "it also passes other arguments")
            return Site(bits, self.value(bits))
        helper = self.helper_called(call)
        if helper is not None and helper.forwarder and helper.shim:
            value = self.call_value(helper, call)
            return Site(None, value, True)
        if symbol is not None:  # another FlyDSL API: no helper imported from elsewhere either
            return None
        if self._cannot_be_helper(call.func, ("s_waitcnt",)):  # a shim forwards to s_waitcnt
            return None
        sibling = self.sibling_helper(call.func)
        if sibling is not None:  # defined in a project module we can read
            owner, helper = sibling
            if helper is not None and helper.forwarder and helper.shim:
                return Site(None, self.call_value(helper, call, owner=owner), True)
            return None
        imported = self.imported_helper(call.func)
        if imported in IMPORTED_FORWARDERS | IMPORTED_VM_ONLY:
            if len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
                return Site(None, None, False, "unexpected arguments")
            inner = self.value(call.args[0])
            if inner is None:
                return Site(call.args[0], None)
            bits = inner.bits
            if imported in IMPORTED_VM_ONLY:
                if not 0 <= bits <= 63:
                    return Site(call.args[0], None)
                bits = waitcnt.legacy_encode(vmcnt=bits)
            return Site(call.args[0], Value(bits, inner.assumed | {imported}))
        return None

    def is_encoder_call(self, call: ast.Call) -> bool:
        helper = self.helper_called(call)
        if helper is not None:
            return helper.waitcnt_encoder
        if self.model.resolve(call.func) is not None:  # a FlyDSL API (``_imported_elsewhere``)
            return False
        if self._cannot_be_helper(call.func, tuple(COUNTER_PARAMS)):  # an encoder takes counts
            return False
        sibling = self.sibling_helper(call.func)
        if sibling is not None:
            return sibling[1] is not None and sibling[1].waitcnt_encoder
        return self.imported_helper(call.func) in IMPORTED_ENCODERS

    def sibling_helper(self, func: ast.expr):
        """(facts of its module, Helper or None) for a function imported from a project
        module the project index can read; None when there is no such module to read."""
        path = self._sibling_path(func)
        if path is None:
            return None
        name = _called_name(func)
        if (path, name) in self._siblings:
            return self._siblings[(path, name)]
        self._siblings[(path, name)] = None
        model = self.model.project.index.model_of(path)
        found = None
        if model is not None:
            facts = facts_for(model)
            defs = [s for s in model.tree.body if isinstance(s, ast.FunctionDef) and s.name == name]
            found = (facts, facts.helpers.get(id(defs[-1])) if len(defs) == 1 else None)
        self._siblings[(path, name)] = found
        return found

    def _sibling_asked(self, func: ast.expr) -> bool:
        project = getattr(self.model, "project", None)
        name = _called_name(func)
        return bool(project is not None and name and not (isinstance(func, ast.Name) and self.helper_called_binding(func)))

    def _sibling_path(self, func: ast.expr) -> Path | None:
        """The one project module defining the function ``func`` imports from a sibling
        (asked of each call by FLY401 twice: kept per node)."""
        if id(func) in self._path_of_node:
            return self._path_of_node[id(func)]
        self._path_of_node[id(func)] = found = self._sibling_path_of(func)
        return found

    def _sibling_path_of(self, func: ast.expr) -> Path | None:
        dotted = self._imported_elsewhere(func) if self._sibling_asked(func) else None
        if not dotted:
            return None
        if dotted in self._sibling_paths:
            return self._sibling_paths[dotted]
        name = _called_name(func)
        parts = tuple(p for p in dotted.split(".")[:-1] if p != RELATIVE)
        matches = self.model.project.definers(name, parts) if parts else []
        self._sibling_paths[dotted] = found = matches[0] if len(matches) == 1 else None
        return found

    def _cannot_be_helper(self, func: ast.expr, words: tuple[str, ...]) -> bool:
        """``func`` is neither a helper imported from elsewhere (their names all have
        "waitcnt") nor one of a sibling module whose text has none of ``words``: most calls
        of a file, answered without building the sibling's model. (A sibling spelling
        ``s_waitcnt`` only through a third module's alias is not seen as a shim.)"""
        name = _called_name(func)
        if not name or "waitcnt" in name.lower():
            return False
        path = self._sibling_path(func)
        if path is None:
            return True
        mentioned = self._mentions.get((path, words))
        if mentioned is None:  # a whole module searched: once per module, not per call
            text = self.model.project.index.text_of(path)
            mentioned = self._mentions[path, words] = any(word in text for word in words)
        return not mentioned

    def helper_called_binding(self, name: ast.Name) -> bool:
        binding = self.model.binding_of(name)
        return binding is not None and binding.kind == "def"

    # --- evaluation --------------------------------------------------------------------------
    def value(self, expr: ast.expr, env: dict | None = None, fn=None, depth: int = 0) -> Value | None:
        if depth > _DEPTH:
            return None
        if self.hole is not None and self.hole_key(expr) == self.hole[0]:
            return Value(self.hole[1])
        if isinstance(expr, ast.Constant):
            v = expr.value
            return Value(v) if isinstance(v, int) and not isinstance(v, bool) else None
        if isinstance(expr, ast.Name):
            if env is not None and expr.id in env:
                return env[expr.id]
            return self._name_value(expr, fn, depth)
        if isinstance(expr, ast.BinOp):
            left = self.value(expr.left, env, fn, depth + 1)
            right = self.value(expr.right, env, fn, depth + 1) if left is not None else None
            if right is None:
                return None
            result = _binop(expr.op, left.bits, right.bits)
            return None if result is None else Value(result, left.assumed | right.assumed)
        if isinstance(expr, ast.UnaryOp):
            inner = self.value(expr.operand, env, fn, depth + 1)
            if inner is None:
                return None
            ops = {ast.USub: lambda x: -x, ast.UAdd: lambda x: x, ast.Invert: lambda x: ~x}
            op = ops.get(type(expr.op))
            return None if op is None else Value(op(inner.bits), inner.assumed)
        if isinstance(expr, ast.Call):
            return self._call_value(expr, env, fn, depth)
        if isinstance(expr, ast.Attribute) and COUNTER_CONSTANT.search(expr.attr):
            return self.field_value(expr.attr, depth + 1)
        return None

    def field_value(self, name: str, depth: int = 0) -> Value | None:
        """A magic counter field read through an object (``traits.LGKMCNT_0_ONLY``): the one
        value every place in the project gives a field so named, taken on trust."""
        project = getattr(self.model, "project", None)
        settings = [(self, e) for e in field_settings(self.model, name)]
        if project is not None:
            for path, expr in project.field_settings(name):
                model = project.index.model_of(path)
                if model is None:
                    return None
                settings.append((facts_for(model), expr))
        values = {facts.value(expr, depth=depth + 1) for facts, expr in settings}
        if len(values) != 1 or None in values:
            return None
        (value,) = values
        return Value(value.bits, value.assumed | {"." + name})

    def hole_key(self, expr: ast.expr) -> tuple:
        """What stands for one unknown: a parameter (every read of it), else the expression."""
        if isinstance(expr, ast.Name):
            binding = self.model.binding_of(expr)
            if binding is not None and binding.kind == "param":
                return ("param", id(binding.node))
        return ("node", id(expr))

    def _name_value(self, name: ast.Name, fn, depth: int) -> Value | None:
        binding = self.model.binding_of(name)
        if binding is None or (fn is not None and binding.scope.node is fn):
            return None  # unbound, or a local of the helper not assigned yet
        bindings = self.model.reaching_bindings(name)
        values = []
        for b in bindings:
            # Unpacked targets (``a, b = ...``) carry no value: b.value is None for them.
            if b.kind not in ("assign", "annassign") or b.value is None:
                return None
            v = self.value(b.value, None, None, depth + 1)
            if v is None:
                return None
            values.append(v)
        if not values or len({v.bits for v in values}) != 1:
            return None
        return Value(values[0].bits, frozenset().union(*(v.assumed for v in values)))

    def _call_value(self, call: ast.Call, env, fn, depth: int) -> Value | None:
        helper = self.helper_called(call)
        if helper is not None and not helper.forwarder:
            return self.call_value(helper, call, env, fn, depth)
        sibling = self.sibling_helper(call.func)
        if sibling is not None:
            owner, helper = sibling
            if helper is None or helper.forwarder:
                return None
            return self.call_value(helper, call, env, fn, depth, owner=owner)
        name = self.imported_helper(call.func)
        if name in IMPORTED_ENCODERS:
            params = ("vmcnt", "expcnt", "lgkmcnt")
            bound = _bind(call, list(params), {"vmcnt": 63, "expcnt": 7, "lgkmcnt": 63})
            if bound is None:
                return None
            values = {}
            assumed = frozenset({name})
            for key, expr in bound.items():
                if isinstance(expr, int):
                    values[key] = expr
                    continue
                v = self.value(expr, env, fn, depth + 1)
                if v is None:
                    return None
                values[key] = v.bits
                assumed |= v.assumed
            return Value(waitcnt.legacy_encode(**values), assumed)
        return None

    def call_value(self, helper: Helper, call: ast.Call, env=None, fn=None, depth: int = 0, owner=None):
        """The int a helper returns (or forwards to s_waitcnt) for this call. The arguments
        are evaluated here; defaults and the body in ``owner``, the facts of the module
        defining the helper (this one unless it lives in a sibling module)."""
        owner = owner or self
        node = helper.node
        positional = [a.arg for a in _positional(node.args)]
        defaults = dict(zip(positional[len(positional) - len(node.args.defaults) :], node.args.defaults))
        for arg, default in zip(node.args.kwonlyargs, node.args.kw_defaults):
            if default is not None:
                defaults[arg.arg] = default
        names = positional + [a.arg for a in node.args.kwonlyargs]
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        if len(call.args) > len(positional):
            return None
        local: dict = {}
        given = dict(zip(positional, call.args))
        for keyword in call.keywords:
            if keyword.arg not in names or keyword.arg in given:
                return None
            given[keyword.arg] = keyword.value
        for param in names:
            if param in given:
                v = self.value(given[param], env, fn, depth + 1)
            elif param in defaults:
                v = owner.value(defaults[param], None, None, depth + 1)
            else:
                return None
            if v is None:
                return None
            local[param] = v
        for target, expr in helper.assigns:
            v = owner.value(expr, local, node, depth + 1)
            if v is None:
                return None
            local[target] = v
        return owner.value(helper.result, local, node, depth + 1)


def facts_for(model: SemanticModel) -> WaitcntFacts:
    # Kept on the model (a cycle the collector frees with it). Not a WeakKeyDictionary:
    # its values hold their key, so no entry ever died and every model ever built stayed
    # alive (the server grew ~200 MB per 1,000 edits).
    return model.facts(WaitcntFacts)


def positional_bitfield(call: ast.Call) -> ast.expr | None:
    """The bitfield of the legacy form ``s_waitcnt(bits)`` / ``s_waitcnt(bitfield=bits)``."""
    if call.args:
        return call.args[0]
    for keyword in call.keywords:
        if keyword.arg == "bitfield":
            return keyword.value
    return None


def extra_arguments(call: ast.Call) -> bool:
    others = [k for k in call.keywords if k.arg != "bitfield"]
    positional = len(call.args) + sum(1 for k in call.keywords if k.arg == "bitfield")
    return bool(others) or positional != 1 or any(isinstance(a, ast.Starred) for a in call.args)


def _called_name(func: ast.expr) -> str | None:
    """The last name of a called name or attribute chain (``f`` of ``m.f``)."""
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)


def _positional(args: ast.arguments) -> list:
    return [*args.posonlyargs, *args.args]


_INT_NODES = (
    ast.Constant, ast.Name, ast.Load, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop,
    ast.Call, ast.keyword,
)


def int_shaped(expr: ast.AST) -> bool:
    """Only literals, names, integer operators and calls of named helpers."""
    for node in ast.walk(expr):
        if not isinstance(node, _INT_NODES):
            return False
        if isinstance(node, ast.Call) and not isinstance(node.func, (ast.Name, ast.Attribute)):
            return False
    return True


def shim_shaped(fn: ast.AST) -> bool:
    """Assignments then one return or call, of integer-shaped expressions: what a
    wait-counter shim looks like (a superset of the helpers ``facts_for`` finds, decided
    without resolving a name)."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    if fn.decorator_list or fn.args.vararg or fn.args.kwarg:
        return False
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if not body or not isinstance(body[-1], (ast.Return, ast.Expr)):
        return False
    if not all(isinstance(s, (ast.Assign, ast.AnnAssign)) and s.value is not None for s in body[:-1]):
        return False
    last = body[-1].value
    # A call may be the wait itself (its bitfield is then an argument): any call passes.
    return last is not None and (isinstance(last, ast.Call) or int_shaped(last)) and all(
        int_shaped(s.value) for s in body[:-1]
    )


def _names(expr: ast.AST) -> set:
    return {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}


def _bind(call: ast.Call, params: list, defaults: dict) -> dict | None:
    if any(isinstance(a, ast.Starred) for a in call.args) or len(call.args) > len(params):
        return None
    bound = dict(defaults)
    for param, arg in zip(params, call.args):
        bound[param] = arg
    for keyword in call.keywords:
        if keyword.arg not in params:
            return None
        bound[keyword.arg] = keyword.value
    return bound


def _binop(op: ast.operator, a: int, b: int) -> int | None:
    try:
        if isinstance(op, ast.BitOr):
            r = a | b
        elif isinstance(op, ast.BitAnd):
            r = a & b
        elif isinstance(op, ast.BitXor):
            r = a ^ b
        elif isinstance(op, ast.LShift):
            if not 0 <= b <= 64:
                return None
            r = a << b
        elif isinstance(op, ast.RShift):
            if b < 0:
                return None
            r = a >> b
        elif isinstance(op, ast.Add):
            r = a + b
        elif isinstance(op, ast.Sub):
            r = a - b
        elif isinstance(op, ast.Mult):
            r = a * b
        elif isinstance(op, ast.FloorDiv):
            r = a // b
        elif isinstance(op, ast.Mod):
            r = a % b
        else:
            return None
    except ZeroDivisionError:
        return None
    return r if -_LIMIT < r < _LIMIT else None
