"""FLY201: buffer_ops resources, loads and stores -> buffer tensors/pointers and fx.ptr_load/ptr_store."""

import ast
from dataclasses import dataclass, field

from flydsl_ls.analysis.model.diagnostic import Applicability, Edit, Fix, Severity
from flydsl_ls.analysis.model.rewrite import fx_alias
from flydsl_ls.analysis.model.semantic import is_raw_op
from flydsl_ls.analysis.model.valueflow import (
    Sink,
    fx_result_blocker,
    is_raw_builder,
    kind_change_blocker,
    value_uses,
)
from flydsl_ls.analysis.model.versions import at_least
from flydsl_ls.analysis.rules._buffer_access import (
    LOAD,
    SHIM,
    STORE,
    Access,
    element_bytes,
    file_helper,
    read_access,
)
from flydsl_ls.analysis.rules.base import Callees, Invalid, Rule, Valid

CREATE = SHIM + "create_buffer_resource"
FROM_ADDR = SHIM + "create_buffer_resource_from_addr"
# aiter's `tensor_shim.ptr_rsrc(p)`: `create_buffer_resource_from_addr` of an fx pointer's address.
PTR_RSRC = "shim.tensor_shim.ptr_rsrc"
ORIGINS = (CREATE, FROM_ADDR, PTR_RSRC)
BRIDGE = "fx.rocdl.get_buffer_rsrc"
# fx APIs that take a tensor where the code gave the raw resource; any other consumer
# (fx converters such as `fx.arith._to_raw`, `fx.rocdl.buffer_load_to_lds`) gets the raw one.
TENSOR_APIS = {
    f"fx.{name}"
    for name in (
        "get_iter", "get_layout", "slice", "logical_divide", "zipped_divide", "tiled_divide", "flat_divide",
        "copy", "copy_atom_call", "memref_load", "memref_store", "memref_load_vec", "memref_store_vec",
    )
}
COPY_FORM = (
    "`t = fx.make_view(fx.get_iter(buf), fx.make_layout(shape, stride))` + "
    "`atom = fx.make_copy_atom(fx.rocdl.BufferCopy128b(), dtype)` + `fx.copy(atom, src, dst)`"
)
OTHER_HELPERS = {
    FROM_ADDR: (
        "builds a buffer resource from a raw 64-bit address: build a typed fx pointer "
        "(`fx.inttoptr(fx.PointerType.get(elem, fx.AddressSpace.Global, align), addr)`) and make it a "
        "buffer pointer with `fx.rocdl.make_buffer_ptr(ptr)` (or view it with `fx.make_view(ptr, layout)` "
        "and use `fx.rocdl.make_buffer_tensor(view)`; `num_records_bytes=` for the byte bound)"
    ),
    SHIM + "extract_base_index": (
        "reads a tensor's base address by hand: use `fx.ptrtoint(fx.get_iter(t))`; no fix: that gives an "
        "`i64` where the shim gave an `index`, and its users must take the new type"
    ),
}
UNWRAPS = {"fx.as_ir_value", "fx.arith.unwrap", "fx.arith._to_raw"}
DEFINITIONS = {
    CREATE: "create_buffer_resource(t)",
    FROM_ADDR: "create_buffer_resource_from_addr(addr)",
    PTR_RSRC: "ptr_rsrc(p)",
}
MIGRATE_FIRST = "migrate that to a copy atom + `fx.copy` first (offsets in elements)"
FLOAT_TYPES = ("fx.Float", "fx.BFloat", "fx.TFloat")
TITLE = "Use a buffer tensor/pointer with fx.ptr_load/fx.ptr_store"


@dataclass
class Plan:
    """The fix of one named resource: its definition and every access of it, together."""

    fix: Fix | None = None
    problem: str | None = None  # why there is no fix
    access_problems: dict[int, str] = field(default_factory=dict)  # id(call) -> why that access keeps the shim
    kept: bool = False  # only used by accesses the cleanup guide keeps: noted, not a warning


class BufferOps(Rule):
    """
    The `buffer_ops` helper layer (FlyDSL's `kernels/common/buffer_ops.py`, aiter's
    `aiter/ops/flydsl/kernels/buffer_ops.py`, and the historical `flydsl.expr.buffer_ops`)
    builds raw buffer resources and loads/stores at hand-computed offsets. The modern form
    makes a buffer *tensor* with `fx.rocdl.make_buffer_tensor(t)` (same layout, iterator
    replaced by a buffer descriptor), views it with a layout and moves data with a copy
    atom (`fx.rocdl.BufferCopy128b()` ...) and `fx.copy`.

    The fix rewrites a resource and its loads and stores together (unsafe): a resource named
    in the function, `rsrc = create_buffer_resource(t)` (`max_size=True` and
    `num_records_bytes=` carry over), becomes `rsrc = fx.rocdl.make_buffer_tensor(t)`; with
    `base_byte_offset=o`, a byte buffer pointer rebased as the shim did (a 64-bit GEP),
    `fx.rocdl.make_buffer_ptr(fx.recast_iter(fx.Int8, fx.get_iter(t)) + fx.Int64(o))`;
    `create_buffer_resource_from_addr(addr)` becomes a buffer pointer,
    `fx.rocdl.make_buffer_ptr(fx.inttoptr(fx.PointerType.get(fx.Int32.ir_type,
    fx.AddressSpace.Global, 4), addr))`, typed like the loads and stores that use it. Each
    `buffer_load(rsrc, off, vec_width=V, dtype=D)` becomes
    `fx.ptr_load(fx.recast_iter(D, fx.get_iter(rsrc)) + off)` (`V` = 1) or
    `fx.memref_load_vec(fx.make_view(..., fx.make_layout(V, 1)))` (through a byte pointer,
    `fx.ptr_load(p, fx.Vector[D, V])`; FlyDSL 0.3.1 has no `fx.Vector[...]` and gets
    `fx.Vector.make_type(V, D)`, as FlyDSL's own kernels write it), and
    `buffer_store(v, rsrc, off)` `fx.ptr_store(v, ...)`: on a buffer-descriptor pointer,
    `+ off` scales the element offset by the element size as the shim did, and the load and
    store lower to the same raw buffer instructions (identical ISA on gfx942 with FlyDSL
    0.5.0 and 0.3.1). Offsets that are not known to be `fx.Int32` are wrapped in
    `fx.Int32(...)`, the width the shim casts them to. A load or store the fix cannot
    rewrite takes the tensor's raw resource, `fx.rocdl.get_buffer_rsrc(fx.get_iter(rsrc))`,
    and a later pass rewrites it once it can (so do stores on such a resource already in the
    code); a resource created in place (`buffer_load(create_buffer_resource_from_addr(p),
    ...)`) is rewritten with its access. A tensor resource passed to a helper of the file (a
    nested function, or a private one of the module, only ever called) moves with the
    helper's loads and stores of it and with every resource the helper is called with, in
    one fix. A stored value's element type is read from fx values (unwrapped too), raw arith
    ops and their op classes' `.result`, shim loads, `fx.ptr_load`/`fx.memref_load_vec` of
    a typed pointer, `fx.Vector` built, filled or bitcast with a dtype, and elements and
    slices of those (`v[i]`, `vector.extract`, `vector.extract_strided_slice`); from the
    value flow too: a value carried around a loop (the type its other definitions agree on),
    a builtin `range` loop's variable (the scf.for's i32), what a helper of the file returns
    and a helper's parameter given one type at every call, raw `arith.select` operands and
    `fx.Vector(raw)`. A width that is not a literal but that the code only reaches when it is
    more than 1 (the `else` of a trace-time `if W == 1`, under `W > 1`) goes into the vector
    type as written; `assert W == k` before a use makes `W` k. An element type chosen at trace
    time between floats of one size (`T.bf16 if c else T.f16`, inline or named once) is
    written as that choice, `(fx.BFloat16 if c else fx.Float16)`, where `c` reads the same
    names. The resources a factory of the file makes (a helper only called, returning
    `create_buffer_resource(p)` of its parameter, each result assigned to one name) move
    together, the factory's `return` with them. A helper also given a buffer pointer (a
    rebased resource, or one made from an address) takes pointers: its tensors are passed as
    their iterators, `fx.get_iter(t)`.

    What keeps the shim, with the reason in the message: `mask=`, `soffset_bytes=`,
    `cache_modifier=` and `is_scalar=` (no counterpart on `fx.ptr_load`/`ptr_store`: a load
    with no layout form may stay on buffer_ops, the cleanup guide says, so these are
    reported as information, not warnings), a width that is not
    a literal nor known to be more than 1 (1 loads a scalar, more a vector), an element type that is not an fx numeric
    type, a stored value whose element type the code does not show (the offset is in
    elements of it), an integer scalar load whose value reaches `>>`, `/` or a float
    conversion (unsigned on the shim's `ArithValue`, signed on fx integers and their
    `.ir_value()`); a scalar whose user needs the raw value (a raw builder, code that cannot
    be followed) gets `.ir_value()`; a resource made with `stride=` or `max_size=False`
    without `num_records_bytes=` (which the shim lets win), passed in from elsewhere (a
    public function's parameter, a helper also given resources with no fix or rebased ones),
    rebound, or used other than as a call argument. A resource only used raw gets no fix:
    its consumers must move first; one that only kept loads and stores use stays with them
    (information).

    `create_buffer_resource_from_addr` and `extract_base_index` otherwise get a diagnostic
    with their replacement (`fx.ptrtoint(fx.get_iter(t))` for the latter). The shims' own
    definitions and `rocdl.raw_ptr_buffer_load`/`buffer_load_to_lds` are never flagged.
    """

    code = "FLY201"
    name = "buffer-ops"
    summary = "`buffer_ops.create_buffer_resource/buffer_load/buffer_store` (and bare calls of them)"
    replacement = "`fx.rocdl.make_buffer_tensor` + layout view + copy atom + `fx.copy` (offsets are in elements)"
    fix_safety = (
        "unsafe for a resource built in the function and its loads and stores (buffer tensor/pointer + "
        "`fx.ptr_load`/`fx.ptr_store`), with the file's helpers it is passed to; none for "
        "`mask=`/`soffset_bytes=`/`cache_modifier=`/`is_scalar=` accesses, unknown element types, "
        "`stride=` and resources passed in from elsewhere"
    )
    fix_title = TITLE
    example_before = (
        "rsrc = buffer_ops.create_buffer_resource(A, max_size=True)\n"
        "data = buffer_ops.buffer_load(rsrc, row * K + k, vec_width=4, dtype=fx.Float32)"
    )
    example_after = (
        "rsrc = fx.rocdl.make_buffer_tensor(A)\n"
        "data = fx.memref_load_vec(fx.make_view(fx.recast_iter(fx.Float32, fx.get_iter(rsrc)) + fx.Int32(row * K + k), "
        "fx.make_layout(4, 1)))"
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self._plans: dict[int, Plan] = {}
        self._kept: set[int] = set()  # id() of definitions whose resource the guide keeps
        self._pointer_params: set[int] = set()  # id() of helper parameters given pointers, not tensors

    callees = Callees(prefixes=(SHIM,))

    def visit_Call(self, node: ast.Call) -> None:
        symbol = self.model.resolve(node.func)
        if not symbol or not symbol.startswith(SHIM):
            return
        spelled = ast.unparse(node.func)
        if symbol in (LOAD, STORE):
            verb = "load" if symbol == LOAD else "store"
            in_bytes = any(
                k.arg == "offset_is_bytes" and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in node.keywords
            )
            unit = (
                "its offset is in bytes here (`offset_is_bytes=True`)" if in_bytes
                else "its offset is in ELEMENTS of the dtype (the shim multiplies by sizeof(dtype)), not bytes"
            )
            message = (
                f"`{spelled}(...)` is a hand-addressed buffer {verb}: {unit}. Use a buffer tensor and a copy "
                f"atom: {COPY_FORM}"
            )
            access = read_access(self.model, node, symbol)
            if access.kept:  # the guide's keep-case: noted, not a warning
                self.report(node, f"{message}; no fix: {access.problem}", severity=Severity.INFORMATION)
                return
            self._report(node, message, *self._access_fix(access))
        elif symbol in (CREATE, FROM_ADDR):
            if symbol == CREATE:
                message = (
                    f"`{spelled}(...)` builds a raw buffer resource: use `fx.rocdl.make_buffer_tensor(t)` "
                    "and a copy atom + `fx.copy` (buffer offsets are in elements)"
                )
            else:
                message = f"`{spelled}(...)` {OTHER_HELPERS[symbol]}"
            fix, problem = self._definition_fix(node, symbol)
            if fix is None and id(node) in self._kept:
                self.report(node, f"{message}; no fix: {problem}", severity=Severity.INFORMATION)
                return
            self._report(node, message, fix, problem)
        elif symbol in OTHER_HELPERS:
            self.report(node, f"`{spelled}(...)` {OTHER_HELPERS[symbol]}")

    def _report(self, node: ast.Call, message: str, fix: Fix | None, problem: str | None) -> None:
        if fix is None:
            self.report(node, f"{message}; no fix: {problem}" if problem else message)
        else:
            self.report(node, message, fix=fix)

    # --- a resource's definition ----------------------------------------------------------
    def _definition_fix(self, node: ast.Call, symbol: str) -> tuple[Fix | None, str | None]:
        parent = self.ctx.parent
        if isinstance(parent, ast.Call):
            outer = self.model.resolve(parent.func)
            if outer in (LOAD, STORE):
                access = read_access(self.model, parent, outer)
                if access.rsrc is node:
                    return self._access_fix(access)
        problem = self._definition_problem(node, symbol)
        if problem:
            return None, problem
        fx, imports = fx_alias(self.model)
        if isinstance(parent, ast.Expr):  # built and dropped
            text = self._definition_text(fx, node, symbol, "Int8")
            return self._fix([Edit(self.ctx.range(node), text)], imports), None
        if isinstance(parent, ast.Return) and symbol == CREATE:
            function = self.ctx.enclosing_function()
            calls = self.model.calls_to(function) if isinstance(function, ast.FunctionDef) else []
            if calls and self._factory(calls[0]) is function:
                made = self._factory_calls(function)
                if made is None:
                    return None, f"`{function.name}` makes resources that are not each assigned to one name"
                plan = self._plan(made[0], node, symbol)
                return plan.fix, plan.problem
        named = isinstance(parent, ast.Assign) and len(parent.targets) == 1
        if not (named and isinstance(parent.targets[0], ast.Name)):
            return None, "the resource is used in place (it must be a tensor where it is consumed)"
        binding = self._binding_of(parent)
        if binding is None:
            return None, "the resource is not a local of one function"
        plan = self._plan(binding, node, symbol)
        return plan.fix, plan.problem

    def _definition_problem(self, node: ast.Call, symbol: str) -> str | None:
        what = DEFINITIONS[symbol]
        if len(node.args) != 1 or isinstance(node.args[0], ast.Starred) or (symbol == PTR_RSRC and node.keywords):
            return f"only `{what}` with one argument maps 1:1"
        # The shim ignores `max_size=` when given `num_records_bytes=`, which takes precedence.
        bounded = any(kw.arg == "num_records_bytes" for kw in node.keywords)
        for kw in node.keywords:
            max_size = bounded or (isinstance(kw.value, ast.Constant) and kw.value.value is True)
            if kw.arg == "num_records_bytes" or (symbol == CREATE and kw.arg == "max_size" and max_size):
                continue
            if symbol == CREATE and kw.arg == "base_byte_offset":  # a byte pointer rebased in 64 bits
                continue
            return (
                f"`{kw.arg or '**kwargs'}=` changes the record bound or base (pass `max_size=`/"
                "`num_records_bytes=` to `make_buffer_tensor` by hand)"
            )
        return None

    def _definition_text(self, fx: str, node: ast.Call, symbol: str, dtype: str) -> str:
        bound = next((kw for kw in node.keywords if kw.arg == "num_records_bytes"), None)
        tail = f", num_records_bytes={self.text(bound.value)}" if bound is not None else ""
        if symbol == CREATE and _rebase(node) is not None:
            # The shim's 64-bit GEP of the base: `ptr + fx.Int64(off)` on a byte pointer (the
            # same `getelementptr i8, ..., i64` in the LLVM IR, FlyDSL 0.3.1 and 0.5.0).
            offset = self._rebase_text(fx, _rebase(node))
            base = f"{fx}.recast_iter({fx}.Int8, {fx}.get_iter({self.text(node.args[0])})) + {offset}"
            return f"{fx}.rocdl.make_buffer_ptr({base}{tail})"
        if symbol == CREATE:
            return f"{fx}.rocdl.make_buffer_tensor({self.text(node.args[0])}{tail})"
        if symbol == PTR_RSRC:
            return f"{fx}.rocdl.make_buffer_ptr({self.text(node.args[0])})"
        pointer_type = f"{fx}.PointerType.get({fx}.{dtype}.ir_type, {fx}.AddressSpace.Global, {element_bytes(dtype)})"
        return f"{fx}.rocdl.make_buffer_ptr({fx}.inttoptr({pointer_type}, {self.text(node.args[0])}){tail})"

    def _rebase_text(self, fx: str, offset: ast.expr) -> str:
        if self.model.type_of(offset).name == "fx.Int64":
            text = self.text(offset)
            return text if isinstance(offset, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) else f"({text})"
        return f"{fx}.Int64({self.text(offset)})"

    def _binding_of(self, statement: ast.Assign):
        target = statement.targets[0]
        function = self.ctx.enclosing_function()
        scope = self.model.function_scope(function) if function is not None else None
        bindings = scope.bindings.get(target.id, ()) if scope else ()
        # Other bindings of the name are other resources: each read must reach this one alone.
        return next((b for b in bindings if b.node in (statement, target)), None)

    def _plan(self, binding, create: ast.Call, symbol: str) -> Plan:
        plan = self._plans.get(id(binding))
        if plan is None:
            plan = self._plans[id(binding)] = self._make_plan(binding, create, symbol)
            if plan.kept:
                self._kept.add(id(create))
        return plan

    def _make_plan(self, binding, create: ast.Call, symbol: str) -> Plan:
        """Rewrite the definition and every access; other uses get the raw resource. A tensor
        resource passed to a helper of this file moves with the helper's accesses of it, and
        with every other resource the helper is called with: one fix for them all."""
        return self._component(Plan(), [(binding, create)], [], symbol)

    def _component(self, plan: Plan, resources: list, params: list, symbol: str) -> Plan:
        edits: list[Edit] = []
        work: list = []  # (access, pointer, its element type) of every resource
        replacements: dict[int, tuple[ast.AST, str]] = {}  # raw resources kept, accesses rewritten
        fx, imports = fx_alias(self.model)
        for param, function in params:
            if not self._enqueue_callers(plan, function, param, edits, resources):
                return plan
        while resources or params:
            if resources:
                member, made = resources.pop()
                self._plans[id(member)] = plan
                if not self._enqueue_siblings(plan, member, made, resources):
                    return plan
                found = self._resource_edits(plan, fx, member, made, self.model.resolve(made.func) or symbol)
            else:
                member, function = params.pop()
                self._plans[id(member)] = plan
                found = self._param_edits(plan, fx, member, function)
            if found is None:
                plan.fix = None
                return plan
            more, helpers, accesses, raw = found
            edits += more
            work += accesses
            replacements.update(raw)
            for function, param in helpers:
                if id(param) in self._plans:
                    if self._plans[id(param)] is not plan:  # a component that failed before reaching here
                        return self._joined_failed(plan, self._plans[id(param)])
                    continue
                params.append((param, function))
                if not self._enqueue_callers(plan, function, param, edits, resources):
                    return plan
        plan.fix = self._fix(edits + self._access_edits(fx, work, replacements), imports)
        return plan

    def _enqueue_callers(self, plan: Plan, function, param, edits: list[Edit], resources: list) -> bool:
        """Every resource ``function`` is called with for ``param`` joins the fix (False: one
        cannot, ``plan.problem`` says why)."""
        self._plans[id(param)] = plan
        passed = [(call, self._argument_resource(call, function, param)) for call in self.model.calls_to(function)]
        # A rebased resource is a byte pointer: the helper then takes pointers, and tensors
        # are passed as their iterators.
        pointers = any(not isinstance(o, Edit) and o is not None and self._pointer(o) for _, o in passed)
        if pointers:
            self._pointer_params.add(id(param))
        fx = fx_alias(self.model)[0]
        for call, other in passed:
            if isinstance(other, Edit):  # a buffer tensor's raw resource: the tensor itself
                edits.append(Edit(other.range, f"{fx}.get_iter({other.content})") if pointers else other)
                continue
            if pointers and other is not None and not self._pointer(other):
                arg = _argument(call, function, param)
                edits.append(Edit(self.model.index.node_range(arg), f"{fx}.get_iter({arg.id})"))
            if other is None:
                plan.problem = (
                    f"`{function.name}` is also called at line {call.lineno} with a resource this rule does not build"
                )
                return False
            if id(other) not in self._plans:
                self._plans[id(other)] = plan
                resources.append((other, self._made(other.value)))
            elif self._plans[id(other)] is not plan:
                self._joined_failed(plan, self._plans[id(other)])
                return False
        return True

    def _enqueue_siblings(self, plan: Plan, member, made: ast.Call, resources: list) -> bool:
        """A resource a factory of the file made: every other one it makes joins the fix (its
        `return` changes for all). False: one cannot, ``plan.problem`` says why."""
        value = member.value
        factory = self._factory(value) if isinstance(value, ast.Call) else None
        if factory is None:
            return True
        made_all = self._factory_calls(factory)
        if made_all is None:
            plan.problem = f"`{factory.name}` makes resources that are not each assigned to one name"
            plan.fix = None
            return False
        for other in made_all:
            if id(other) not in self._plans:
                self._plans[id(other)] = plan
                resources.append((other, made))
            elif self._plans[id(other)] is not plan:
                self._joined_failed(plan, self._plans[id(other)])
                return False
        return True

    def _pointer(self, binding) -> bool:
        """The resource ``binding`` names becomes a buffer pointer, not a tensor."""
        made = self._made(binding.value)
        return self.model.resolve(made.func) == FROM_ADDR or _rebase(made) is not None

    def _made(self, value: ast.Call) -> ast.Call:
        """The `create_buffer_resource` call that makes ``value``: itself, or what its factory returns."""
        factory = self._factory(value)
        return factory.body[-1].value if factory is not None else value

    def _factory(self, call: ast.Call) -> ast.FunctionDef | None:
        """The function ``call`` calls when it is a resource factory of this file: a helper
        only called, whose body returns `create_buffer_resource(p)` of a parameter ``p``."""
        function = file_helper(self.model, call.func) if isinstance(call.func, ast.Name) else None
        if function is None or len(self.model.calls_to(function)) != len(self.model.uses_of(self.model.binding_of(call.func))):
            return None  # passed around as a value
        body = [s for s in function.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        made = body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None
        if not (isinstance(made, ast.Call) and self.model.resolve(made.func) == CREATE) or _rebase(made) is not None:
            return None
        params = {a.arg for a in function.args.args}
        if self._definition_problem(made, CREATE) or not (isinstance(made.args[0], ast.Name) and made.args[0].id in params):
            return None
        return function

    def _factory_calls(self, function: ast.FunctionDef):
        """The bindings of the resources a factory makes, `name = factory(...)` in a function
        (None: a call is used otherwise, or ``function`` is no factory)."""
        calls = self.model.calls_to(function)
        if not calls or self._factory(calls[0]) is not function:
            return None
        made = []
        for call in calls:
            binding = self._assigned(call)
            if binding is None:
                return None
            made.append(binding)
        return made

    def _assigned(self, value: ast.Call):
        """The binding of `name = value` in a function, that name's only binding reaching its reads."""
        parents = self.model.parent_map(self.model.tree)
        statement = parents.get(id(value))
        function = parents.get(id(statement))
        while function is not None and not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = parents.get(id(function))
        scope = self.model.function_scope(function) if function is not None else None
        if scope is None or not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
            return None
        target = statement.targets[0]
        if not isinstance(target, ast.Name):
            return None
        return next((b for b in scope.bindings.get(target.id, ()) if b.node is target), None)

    @staticmethod
    def _joined_failed(plan: Plan, other: Plan) -> Plan:
        """``plan`` shares a helper with ``other``, which has no fix: neither has one."""
        plan.fix = None
        plan.problem = "a resource given to the same helper has no fix" + (f": {other.problem}" if other.problem else "")
        return plan

    def _resource_edits(self, plan: Plan, fx: str, binding, create: ast.Call, symbol: str):
        """The edits of one resource's definition and accesses (None: no fix, ``plan.problem``
        says why), and the helpers it is passed to: (function, parameter binding)."""
        if symbol == CREATE and self._definition_problem(create, symbol):
            plan.problem = f"the resource is built with {self._definition_problem(create, symbol)}"
            return None
        tensor = symbol == CREATE and _rebase(create) is None  # else a byte pointer
        parents = self.model.parent_map(binding.scope.node)
        converted: list[Access] = []
        bridged: list[tuple[ast.Name, ast.Call]] = []
        helpers = []
        for use in self.model.uses_of(binding):
            if self.model.reaching_bindings(use) != [binding]:
                plan.problem = "the resource's name is rebound"
                return None
            call = parents.get(id(use))
            if isinstance(call, ast.keyword):  # passed by name
                call = parents.get(id(call))
            if isinstance(call, ast.Call) and use is not call.func:
                consumer = self.model.resolve(call.func) or ""
                if consumer in (LOAD, STORE):
                    access = read_access(self.model, call, consumer)
                    if access.rsrc is use:
                        problem = access.problem or self._read_result(access, parents)
                        if problem is None:
                            converted.append(access)
                            continue
                        plan.access_problems[id(call)] = problem
                elif tensor and consumer in TENSOR_APIS:
                    continue
                elif symbol in (CREATE, FROM_ADDR) and (helper := self._helper_parameter(call, use)) is not None:
                    helpers.append(helper)
                    continue
                bridged.append((use, call))
                continue
            plan.problem = f"the resource is used at line {use.lineno} in a way a tensor may not support"
            return None
        if bridged and not (converted or helpers):
            kept = [read_access(self.model, call, self.model.resolve(call.func) or "") for _, call in bridged
                    if self.model.resolve(call.func) in (LOAD, STORE)]
            if len(kept) == len(bridged) and all(access.kept for access in kept):
                plan.kept = True  # the guide's keep-case: the resource stays with its accesses
                plan.problem = f"every access of the resource stays on buffer_ops: {kept[0].problem}"
                return None
            use, call = bridged[0]
            consumer = self.model.resolve(call.func) or ""
            why = plan.access_problems.get(id(call))
            if consumer.startswith(("fx.", SHIM)) or _takes_raw(consumer):
                plan.problem = (
                    f"the resource is consumed raw by `{ast.unparse(call.func)}` (line {call.lineno})"
                    + (f", which keeps it: {why}" if why else f"; {MIGRATE_FIRST}")
                )
            else:
                plan.problem = (
                    f"the resource is passed to `{ast.unparse(call.func)}` (line {call.lineno}), "
                    "which may need the raw resource"
                )
            return None
        if symbol == CREATE and not tensor:
            pointer, dtype = binding.name, "Int8"
            definition = self._definition_text(fx, create, symbol, "Int8")
        elif symbol != FROM_ADDR:  # a tensor's or pointer's element type is not known here
            pointer, dtype = f"{fx}.get_iter({binding.name})" if tensor else binding.name, None
            definition = self._definition_text(fx, create, symbol, "Int8")
        else:
            # The widest element type: the pointer's alignment, so every access recasts to its own.
            dtype = max((a.dtype for a in converted), key=element_bytes, default="Int8")
            pointer = binding.name
            definition = self._definition_text(fx, create, symbol, dtype)
        raw = {id(use): (use, f"{fx}.rocdl.get_buffer_rsrc({pointer})") for use, _call in bridged}
        work = [(access, pointer, dtype) for access in converted]
        return [Edit(self.ctx.range(create), definition)], helpers, work, raw

    def _param_edits(self, plan: Plan, fx: str, param, function):
        """A helper's resource parameter: every use must be a load or store fx can say."""
        parents = self.model.parent_map(function)
        converted = []
        pointer = param.name if id(param) in self._pointer_params else f"{fx}.get_iter({param.name})"
        bridged: dict[int, tuple[ast.AST, str]] = {}
        for use in self.model.uses_of(param):
            call = parents.get(id(use))
            consumer = (self.model.resolve(call.func) or "") if isinstance(call, ast.Call) else ""
            access = read_access(self.model, call, consumer) if consumer in (LOAD, STORE) else None
            if access is None or access.rsrc is not use or self.model.reaching_bindings(use) != [param]:
                plan.problem = (
                    f"the helper `{function.name}` uses its resource `{param.name}` at line {use.lineno} other than "
                    "as a load's or store's resource"
                )
                return None
            problem = access.problem or self._read_result(access, parents)
            if problem is None:
                converted.append(access)
            else:  # it keeps the shim, on the tensor's raw resource
                plan.access_problems[id(call)] = problem
                bridged[id(use)] = (use, f"{fx}.rocdl.get_buffer_rsrc({pointer})")
        return [], [], [(access, pointer, None) for access in converted], bridged

    def _access_edits(self, fx: str, work: list, replacements) -> list[Edit]:
        """The accesses of every resource of one fix, rendered together: an access inside
        another (a load stored), of another resource, is embedded in the outer one's text."""
        for access, pointer, dtype in sorted(work, key=lambda item: self._size(item[0])):  # inner ones first
            replacements[id(access.call)] = (access.call, self._access_text(fx, access, pointer, dtype, replacements))
        return [Edit(self.model.index.node_range(node), text) for node, text in _outermost(replacements.values())]

    # --- helpers a resource is passed to -----------------------------------------------------
    def _helper_parameter(self, call: ast.Call, use: ast.Name):
        """(function, parameter binding) when ``use`` is passed to a helper this file defines
        and only calls (a nested function, or a private one of the module; plain or
        `@flyc.jit`), else None."""
        callee = self.model.binding_of(call.func) if isinstance(call.func, ast.Name) else None
        function = callee.node if callee is not None and callee.kind == "def" else None
        if not isinstance(function, ast.FunctionDef):
            return None
        # `@flyc.jit` called while tracing runs the function itself (FlyDSL 0.3.1 and 0.5.0)
        if any(self.model.resolve(d) != "flyc.jit" for d in function.decorator_list):
            return None
        if callee.scope.kind == "module":
            if not function.name.startswith("_"):
                return None  # a public function may be called from other files with raw resources
            project = self.model.project
            if project is not None and project.mentioned_elsewhere(function.name):
                return None  # ... and so may a private one another file names
        calls = self.model.calls_to(function)
        if len(calls) != len(self.model.uses_of(callee)):
            return None  # passed around as a value
        args = function.args
        if args.vararg or args.kwarg or args.posonlyargs or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        if use in call.args:
            index = call.args.index(use)
        else:
            index = next((i for i, a in enumerate(args.args) for k in call.keywords if k.value is use and k.arg == a.arg), None)
        if index is None or index >= len(args.args):
            return None
        scope = self.model.function_scope(function)
        name = args.args[index].arg
        param = next((b for b in scope.bindings.get(name, ()) if b.kind == "param"), None) if scope else None
        return (function, param) if param is not None and len(scope.bindings.get(name, ())) == 1 else None

    def _helper_plan(self, param) -> Plan | None:
        """The plan of the resources a helper's parameter is given, when a call of the helper
        passes one this rule builds."""
        if id(param) in self._plans:
            return self._plans[id(param)]
        function = param.scope.node
        calls = self.model.calls_to(function) if isinstance(function, ast.FunctionDef) else []
        eligible = [call for call in calls if self._helper_parameter(call, _argument(call, function, param)) == (function, param)]
        if not calls or len(eligible) != len(calls):
            return None
        arguments = [self._argument_resource(call, function, param) for call in calls]
        resource = next((r for r in arguments if r is not None and not isinstance(r, Edit)), None)
        if resource is not None:
            plan = self._plan(resource, self._made(resource.value), CREATE)
            # a fix that does not reach this helper's accesses is not theirs
            return self._plans.get(id(param), plan if plan.fix is None else None)
        if all(isinstance(r, Edit) for r in arguments):  # only ever given buffer tensors' raw resources
            return self._component(Plan(), [], [(param, function)], CREATE)
        return None

    def _bridged_tensor(self, arg: ast.expr | None) -> ast.Name | None:
        """``t`` of `fx.rocdl.get_buffer_rsrc(fx.get_iter(t))`, ``t`` a buffer tensor named once."""
        if not (isinstance(arg, ast.Call) and self.model.resolve(arg.func) == BRIDGE and len(arg.args) == 1):
            return None
        inner = arg.args[0]
        if not (isinstance(inner, ast.Call) and self.model.resolve(inner.func) == "fx.get_iter" and len(inner.args) == 1):
            return None
        tensor = inner.args[0]
        bindings = self.model.reaching_bindings(tensor) if isinstance(tensor, ast.Name) else []
        value = bindings[0].value if len(bindings) == 1 and bindings[0].kind == "assign" else None
        made = self.model.resolve(value.func) if isinstance(value, ast.Call) else None
        return tensor if made == "fx.rocdl.make_buffer_tensor" else None

    def _argument_resource(self, call: ast.Call, function: ast.FunctionDef, param):
        """The resource binding ``call`` passes for ``param``: a name bound once to
        `create_buffer_resource(t)` in a function; or the edit that passes a buffer tensor
        instead of its raw resource (`fx.rocdl.get_buffer_rsrc(fx.get_iter(t))`)."""
        if any(isinstance(a, ast.Starred) for a in call.args):
            return None
        arg = _argument(call, function, param)
        tensor = self._bridged_tensor(arg)
        if tensor is not None:
            return Edit(self.model.index.node_range(arg), tensor.id)
        if not isinstance(arg, ast.Name):
            return None
        bindings = self.model.reaching_bindings(arg)
        if len(bindings) != 1 or bindings[0].kind != "assign" or bindings[0].scope.kind != "function":
            return None
        value = bindings[0].value
        made = self._made(value) if isinstance(value, ast.Call) else None
        if not (isinstance(made, ast.Call) and self.model.resolve(made.func) in (CREATE, FROM_ADDR)):
            return None  # a tensor, or a buffer pointer (rebased, or from an address)
        statement = self.model.parent_map(bindings[0].scope.node).get(id(value))
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
            return None
        return bindings[0]

    # --- one load or store -----------------------------------------------------------------
    def _access_fix(self, access: Access) -> tuple[Fix | None, str | None]:
        if access.problem:
            return None, access.problem
        rsrc = access.rsrc
        if isinstance(rsrc, ast.Name):
            bindings = self.model.reaching_bindings(rsrc)
            value = bindings[0].value if len(bindings) == 1 and bindings[0].kind == "assign" else None
            origin = self.model.resolve(value.func) if isinstance(value, ast.Call) else None
            made = value
            if origin not in ORIGINS and isinstance(value, ast.Call) and (factory := self._factory(value)):
                origin, made = CREATE, factory.body[-1].value  # what the factory returns
            if origin in ORIGINS and bindings[0].scope.kind == "function":
                statement = self.model.parent_map(bindings[0].scope.node).get(id(value))
                if self._definition_problem(made, origin):
                    return None, f"the resource is built with {self._definition_problem(made, origin)}"
                if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
                    return None, "the resource is not assigned to one name"
                plan = self._plan(bindings[0], made, origin)
                if plan.fix is None or id(access.call) in plan.access_problems:
                    return None, plan.access_problems.get(id(access.call)) or plan.problem
                return plan.fix, None
            if origin == BRIDGE:
                return self._bridged_fix(access, value)
            if len(bindings) == 1 and bindings[0].kind == "param":
                plan = self._helper_plan(bindings[0])
                if plan is not None:
                    if plan.fix is None or id(access.call) in plan.access_problems:
                        return None, plan.access_problems.get(id(access.call)) or plan.problem
                    return plan.fix, None
            where = "a parameter" if bindings and bindings[0].kind == "param" else "code this rule does not follow"
            return None, f"the resource `{rsrc.id}` comes from {where}: make a buffer tensor where the resource is made"
        origin = self.model.resolve(rsrc.func) if isinstance(rsrc, ast.Call) else None
        if origin in ORIGINS:
            problem = self._definition_problem(rsrc, origin)
            if problem:
                return None, f"the resource is built with {problem}"
            fx, imports = fx_alias(self.model)
            if origin == CREATE and _rebase(rsrc) is not None:
                pointer, dtype = self._definition_text(fx, rsrc, origin, "Int8"), "Int8"
            elif origin == CREATE:
                pointer, dtype = f"{fx}.get_iter({self._definition_text(fx, rsrc, origin, 'Int8')})", None
            elif origin == PTR_RSRC:
                pointer, dtype = self._definition_text(fx, rsrc, origin, "Int8"), None
            else:
                pointer, dtype = self._definition_text(fx, rsrc, origin, access.dtype), access.dtype
            return self._single_fix(access, fx, imports, pointer, dtype)
        if origin == BRIDGE:
            return self._bridged_fix(access, rsrc)
        return None, (
            f"the resource `{self.text(rsrc)}` comes from code this rule does not follow: "
            "make a buffer tensor where it is made"
        )

    def _bridged_fix(self, access: Access, bridge: ast.Call) -> tuple[Fix | None, str | None]:
        """A resource taken from a buffer tensor's iterator: use the iterator."""
        pointer = bridge.args[0] if len(bridge.args) == 1 and not bridge.keywords else None
        inner = pointer
        if isinstance(pointer, ast.Call) and self.model.resolve(pointer.func) == "fx.get_iter" and len(pointer.args) == 1:
            inner = pointer.args[0]
        if not isinstance(inner, ast.Name) or len(self.model.reaching_bindings(inner)) != 1:
            return None, "the buffer tensor the resource comes from is not one named value"
        fx, imports = fx_alias(self.model)
        return self._single_fix(access, fx, imports, self.text(pointer), None)

    def _single_fix(self, access, fx, imports, pointer, dtype) -> tuple[Fix | None, str | None]:
        function = self.ctx.enclosing_function()
        problem = self._read_result(access, self.model.parent_map(function or self.model.tree))
        if problem:
            return None, problem
        text = self._access_text(fx, access, pointer, dtype, {})
        return self._fix([Edit(self.model.index.node_range(access.call), text)], imports), None

    def _access_text(self, fx: str, access: Access, pointer: str, base: str | None, replacements) -> str:
        """``base``: the element type of ``pointer``, whose alignment is its size; None when
        unknown (a tensor's or a pointer argument's). Then the access goes through a byte
        pointer: recasting to a wider type than the alignment fails ("alignment must be a
        positive multiple of element byte size"), and a vector load of bytes is not legal."""
        dtype = access.dtype
        size = element_bytes(dtype)
        by_element = size == 1 or (base is not None and element_bytes(base) % size == 0)
        if not by_element:
            dtype, size = "Int8", size if access.width else 1
        if base != dtype or (by_element and access.dtype_text):
            named = self._dtype(fx, access) if by_element else f"{fx}.{dtype}"
            pointer = f"{fx}.recast_iter({named}, {pointer})"
        offset = access.offset
        if self._literal(offset) != 0:
            scale = 1 if by_element else size
            pointer = f"{pointer} + {self._offset_text(fx, offset, scale, replacements)}"
        if not access.load:
            return f"{fx}.ptr_store({self._render(access.data, replacements)}, {pointer})"
        width = access.width_text or access.width
        if by_element and access.width > 1:
            return f"{fx}.memref_load_vec({fx}.make_view({pointer}, {fx}.make_layout({width}, 1)))"
        if access.width > 1:
            return f"{fx}.ptr_load({pointer}, {self._vector_type(fx, self._dtype(fx, access), width)})"
        typed = "" if by_element or access.dtype == "Int8" else f", {self._dtype(fx, access)}"
        return f"{fx}.ptr_load({pointer}{typed})" + (".ir_value()" if access.raw else "")

    def _offset_text(self, fx: str, offset: ast.expr, scale: int, replacements) -> str:
        """The element offset as `fx.Int32` (the width the shim casts it to), times ``scale``."""
        literal = self._literal(offset)
        if literal is not None:
            return str(literal * scale)
        inner = self._unwrapped(offset)
        if inner is not None and self.model.type_of(inner).name == "fx.Int32":
            offset = inner  # `as_ir_value(i)` of an fx.Int32: the pointer takes `i` itself
        text = self._render(offset, replacements)
        if self.model.type_of(offset).name not in ("fx.Int32", "int"):
            text = f"{fx}.Int32({text})"
        elif not isinstance(offset, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
            text = f"({text})"
        return text if scale == 1 else f"{text} * {scale}"

    def _literal(self, expr: ast.expr) -> int | None:
        """The int of `3` or `fx.Int32(3)`."""
        if isinstance(expr, ast.Call) and len(expr.args) == 1 and not expr.keywords:
            if self.model.resolve(expr.func) == "fx.Int32":
                expr = expr.args[0]
        return expr.value if isinstance(expr, ast.Constant) and type(expr.value) is int else None

    def _unwrapped(self, expr: ast.expr) -> ast.expr | None:
        """``x`` of `x.ir_value()`, `fx.as_ir_value(x)`, `unwrap(x)`, `_to_raw(x)`."""
        if not isinstance(expr, ast.Call):
            return None
        if isinstance(expr.func, ast.Attribute) and expr.func.attr == "ir_value":
            return expr.func.value if not expr.args and not expr.keywords else None
        if len(expr.args) == 1 and not expr.keywords and self.model.resolve(expr.func) in UNWRAPS:
            return expr.args[0]
        return None

    @staticmethod
    def _dtype(fx: str, access: Access) -> str:
        """The access's element type as fx code: `fx.Float16`, or the trace-time choice."""
        return access.dtype_text.format(fx=fx) if access.dtype_text else f"{fx}.{access.dtype}"

    def _vector_type(self, fx: str, dtype: str, width: int | str) -> str:
        """`fx.Vector[D, W]`; FlyDSL before 0.5.0 has no subscript, only `fx.Vector.make_type(W, D)`
        (the form FlyDSL's own kernels use; the same buffer instructions on gfx942)."""
        version = self.ctx.options.flydsl_version
        if version and not at_least(version, "0.5.0"):
            return f"{fx}.Vector.make_type({width}, {dtype})"
        return f"{fx}.Vector[{dtype}, {width}]"

    def _read_result(self, access: Access, parents) -> str | None:
        """A scalar load gave an `ArithValue` of no signedness and gives an fx scalar: sets
        ``access.raw`` where a user needs the raw value (`.ir_value()` then gives an
        `ArithValue` again, signed like the fx type), and says why there is no fix where the
        signedness shows: integer `>>` and `/` are unsigned on the shim's value and signed on
        fx integers (and on their `.ir_value()`), and so is a conversion to a float. A vector
        load gives an fx.Vector either way."""
        if not access.load or access.width != 1:
            return None
        uses = [
            use
            for use in value_uses(self.model, access.call, parents, through_operators=True)
            if not (use.sink is Sink.PASSED_ON and (use.symbol or "").startswith(SHIM))  # the shim unwraps fx values
        ]
        if access.dtype.startswith(("Int", "Uint")):
            for use in uses:
                if (
                    (use.sink is Sink.OPERATOR and use.what.rstrip("=") in (">>", "/"))
                    or (use.sink is Sink.ANY_VALUE and (use.symbol or "").startswith(FLOAT_TYPES))
                    or (use.sink is Sink.METHOD and use.what == "to")
                ):
                    return (
                        f"the loaded integer reaches {use.describe()}, unsigned on the shim's `ArithValue` "
                        "and signed on an fx integer"
                    )
        access.raw = (kind_change_blocker(uses, "fx") or fx_result_blocker(uses)) is not None
        return None

    # --- text ------------------------------------------------------------------------------
    def _render(self, node: ast.AST, replacements) -> str:
        """``node``'s source with the replacements that lie inside it applied (or its own: a
        stored load)."""
        own = replacements.get(id(node))
        if own is not None and own[0] is node:
            return own[1]
        index = self.model.index
        rng = index.node_range(node)
        start, end = index.offset(rng.start), index.offset(rng.end)
        text = index.slice(rng)
        inside = []
        for inner, content in replacements.values():
            r = index.node_range(inner)
            lo, hi = index.offset(r.start), index.offset(r.end)
            if start <= lo and hi <= end and (lo, hi) != (start, end):
                inside.append((lo, hi, content))
        for lo, hi, content in sorted(_outermost_spans(inside), reverse=True):
            text = text[: lo - start] + content + text[hi - start :]
        return text

    def _size(self, access: Access) -> int:
        r = self.model.index.node_range(access.call)
        return self.model.index.offset(r.end) - self.model.index.offset(r.start)

    def _fix(self, edits: list[Edit], imports) -> Fix:
        unique = list(dict.fromkeys(edits))  # a factory's `return`: one edit for all it makes
        return Fix(title=f"{self.fix_title} (unsafe)", applicability=Applicability.UNSAFE, edits=(*unique, *imports))

    VALID = [
        Valid("import flydsl.expr as fx\ndef f(A):\n    return fx.rocdl.make_buffer_tensor(A)\n"),
        Valid(
            "from kernels.common import buffer_ops\n"
            "# buffer_ops.create_buffer_resource(A) in a comment\n"
            's = "buffer_ops.buffer_load(rsrc, 0)"\n'
        ),
        Valid(
            # The shim's own definition and its internal calls.
            "def buffer_load(rsrc, offset, vec_width=4, dtype=None):\n    return rsrc\n"
            "def create_buffer_resource(t, max_size=True):\n    return t\n"
            "x = buffer_load(create_buffer_resource(1), 0)\n"
        ),
        Valid(
            "from flydsl.expr import rocdl\n"
            "def f(rsrc, voff, soff, aux, ty):\n"
            "    a = rocdl.raw_ptr_buffer_load(ty, rsrc, voff, soff, aux)\n"
            "    rocdl.buffer_load_to_lds(rsrc, voff)\n"
            "    return a\n"
        ),
    ]
    INVALID = [
        # A byte offset says so (FlyDSL's mega_moe quant.py): no "ELEMENTS" advice.
        Invalid(
            "from kernels.common import buffer_ops\n"
            "def f(rsrc, off, v):\n    buffer_ops.buffer_store(v, rsrc, off, offset_is_bytes=True, mask=None)\n",
            expected=None,
            message="its offset is in bytes here (`offset_is_bytes=True`)",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"
            "def f(A, tid):\n"
            "    rsrc = buffer_ops.create_buffer_resource(A, max_size=True)\n"
            "    tA = fx.make_view(fx.get_iter(rsrc), fx.make_layout(64, 1))\n"
            "    return tA\n",
            expected="import flydsl.expr as fx\n"
            "def f(A, tid):\n"
            "    rsrc = fx.rocdl.make_buffer_tensor(A)\n"
            "    tA = fx.make_view(fx.get_iter(rsrc), fx.make_layout(64, 1))\n"
            "    return tA\n",
            unsafe=True,
            line=4,
            column=12,
        ),
        Invalid(
            # Bare import from aiter's shim, no fx import yet: one is added.
            "from aiter.ops.flydsl.kernels.buffer_ops import buffer_load, create_buffer_resource\n"
            "def f(A, i):\n"
            "    out = create_buffer_resource(A)\n"
            "    return buffer_load(out, i, vec_width=1)\n",
            # The fx import is added; the shim import, now unused, is cleaned up. The default
            # dtype is f32; a value returned to callers not seen stays the raw ArithValue.
            expected="import flydsl.expr as fx\n"
            "def f(A, i):\n"
            "    out = fx.rocdl.make_buffer_tensor(A)\n"
            "    return fx.ptr_load(fx.recast_iter(fx.Int8, fx.get_iter(out)) + fx.Int32(i) * 4, fx.Float32).ir_value()\n",
            unsafe=True,
            count=2,
        ),
        Invalid(
            # Only passed on raw: its consumers must move first (fx converters and
            # fx.rocdl's raw-resource ops included).
            "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"
            "def f(A, lds, voff):\n"
            "    rsrc = buffer_ops.create_buffer_resource(A)\n"
            "    fx.rocdl.buffer_load_to_lds(rsrc, lds, voff)\n",
            message="consumed raw by `fx.rocdl.buffer_load_to_lds` (line 5)",
        ),
        Invalid(
            # A resource and its vector load, together. A tensor's alignment is not known here:
            # the load goes through a byte pointer (a wider recast could fail).
            "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"
            "def f(A, row, K, k):\n"
            "    rsrc = buffer_ops.create_buffer_resource(A, max_size=True)\n"
            "    return buffer_ops.buffer_load(rsrc, row * K + k, vec_width=4, dtype=fx.Float32)\n",
            expected="import flydsl.expr as fx\n"
            "def f(A, row, K, k):\n"
            "    rsrc = fx.rocdl.make_buffer_tensor(A)\n"
            "    return fx.ptr_load(fx.recast_iter(fx.Int8, fx.get_iter(rsrc)) + fx.Int32(row * K + k) * 4, fx.Vector[fx.Float32, 4])\n",
            unsafe=True,
            count=2,
            settings={"flydsl_version": "0.5.0"},
        ),
        Invalid(
            # FlyDSL 0.3.1 has no fx.Vector[dtype, lanes]: the vector load's type is
            # fx.Vector.make_type(lanes, dtype), as FlyDSL's own kernels write it.
            "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"
            "def f(A, tid):\n"
            "    rsrc = buffer_ops.create_buffer_resource(A, max_size=True)\n"
            "    v = buffer_ops.buffer_load(rsrc, tid, vec_width=4, dtype=fx.Int32)\n"
            "    s = buffer_ops.buffer_load(rsrc, tid, vec_width=1, dtype=fx.Int32)\n"
            "    buffer_ops.buffer_store(s, rsrc, 0)\n"
            "    return v\n",
            expected="import flydsl.expr as fx\n"
            "def f(A, tid):\n"
            "    rsrc = fx.rocdl.make_buffer_tensor(A)\n"
            "    v = fx.ptr_load(fx.recast_iter(fx.Int8, fx.get_iter(rsrc)) + fx.Int32(tid) * 4, fx.Vector.make_type(4, fx.Int32))\n"
            "    s = fx.ptr_load(fx.recast_iter(fx.Int8, fx.get_iter(rsrc)) + fx.Int32(tid) * 4, fx.Int32)\n"
            "    fx.ptr_store(s, fx.recast_iter(fx.Int8, fx.get_iter(rsrc)))\n"
            "    return v\n",
            unsafe=True,
            count=4,
            settings={"flydsl_version": "0.3.1"},
        ),
        Invalid(
            # Scalar loads: one feeds a raw builder (unwrapped with .ir_value(), the ArithValue
            # the shim gave), one only operators; a byte-offset store; an `int + 1` store.
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "from kernels.common import buffer_ops\n"
            "def f(A, B, tid):\n"
            "    src = buffer_ops.create_buffer_resource(A)\n"
            "    dst = buffer_ops.create_buffer_resource(B, max_size=True)\n"
            "    x = buffer_ops.buffer_load(src, tid, vec_width=1, dtype=T.i32)\n"
            "    y = buffer_ops.buffer_load(src, tid + 64, vec_width=1, dtype=T.i32)\n"
            "    buffer_ops.buffer_store(arith.addi(x, x), dst, 0, offset_is_bytes=True)\n"
            "    buffer_ops.buffer_store(y + 1, dst, tid)\n",
            expected="import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "def f(A, B, tid):\n"
            "    src = fx.rocdl.make_buffer_tensor(A)\n"
            "    dst = fx.rocdl.make_buffer_tensor(B)\n"
            "    x = fx.ptr_load(fx.recast_iter(fx.Int8, fx.get_iter(src)) + fx.Int32(tid) * 4, fx.Int32).ir_value()\n"
            "    y = fx.ptr_load(fx.recast_iter(fx.Int8, fx.get_iter(src)) + fx.Int32(tid + 64) * 4, fx.Int32)\n"
            "    fx.ptr_store(arith.addi(x, x), fx.recast_iter(fx.Int8, fx.get_iter(dst)))\n"
            "    fx.ptr_store(y + 1, fx.recast_iter(fx.Int8, fx.get_iter(dst)) + fx.Int32(tid) * 4)\n",
            unsafe=True,
            count=6,
        ),
        Invalid(
            # From raw addresses: a pointer typed like its widest access (its alignment), the
            # narrower one recast; a resource made in place moves with its load.
            "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"
            "def f(addr, table, tid):\n"
            "    crfa = buffer_ops.create_buffer_resource_from_addr\n"
            "    counts = crfa(addr)\n"
            "    n = buffer_ops.buffer_load(counts, tid, vec_width=1, dtype=fx.Int32)\n"
            "    buffer_ops.buffer_store(fx.Int64(n), counts, fx.Int32(0))\n"
            "    peer = buffer_ops.buffer_load(crfa(table), tid, vec_width=2, dtype=fx.Int64)\n"
            "    return peer\n",
            expected="import flydsl.expr as fx\n"
            "def f(addr, table, tid):\n"
            "    counts = fx.rocdl.make_buffer_ptr(fx.inttoptr(fx.PointerType.get(fx.Int64.ir_type, fx.AddressSpace.Global, 8), addr))\n"
            "    n = fx.ptr_load(fx.recast_iter(fx.Int32, counts) + fx.Int32(tid))\n"
            "    fx.ptr_store(fx.Int64(n), counts)\n"
            "    peer = fx.memref_load_vec(fx.make_view(fx.rocdl.make_buffer_ptr(fx.inttoptr("
            "fx.PointerType.get(fx.Int64.ir_type, fx.AddressSpace.Global, 8), table)) + fx.Int32(tid), fx.make_layout(2, 1)))\n"
            "    return peer\n",
            unsafe=True,
            count=5,
            settings={"flydsl_version": "0.3.1"},
        ),
        Invalid(
            # Stored values whose element type the code shows: an fx value unwrapped, an arith
            # op class's `.result`, an element or slice of an fx.Vector, what `fx.ptr_load`
            # reads from a typed pointer. With `num_records_bytes=`, the shim ignores `max_size=`.
            "import flydsl.expr as fx\n"
            "from flydsl.expr import arith, vector\n"
            "from flydsl.expr.typing import T\n"
            "from kernels.common import buffer_ops\n"
            "def f(Out, addr, tid, x: fx.Float32, v4):\n"
            "    out = buffer_ops.create_buffer_resource(Out, max_size=False, num_records_bytes=4096)\n"
            "    buffer_ops.buffer_store(x.ir_value(), out, tid)\n"
            "    buffer_ops.buffer_store(arith.TruncIOp(T.i8, x.bitcast(fx.Int32)).result, out, tid)\n"
            "    words = fx.Vector(v4).bitcast(fx.Int32)\n"
            "    buffer_ops.buffer_store(vector.extract(words, static_position=[0], dynamic_position=[]), out, tid)\n"
            "    buffer_ops.buffer_store(vector.extract_strided_slice(T.vec(2, T.i32), words, offsets=[0], sizes=[2], strides=[1]), out, tid)\n"
            "    table = fx.rocdl.make_buffer_ptr(fx.inttoptr(fx.PointerType.get(fx.Int64.ir_type, fx.AddressSpace.Global, 8), addr))\n"
            "    buffer_ops.buffer_store(fx.ptr_load(table + tid), out, tid)\n",
            expected="import flydsl.expr as fx\n"
            "from flydsl.expr import arith, vector\n"
            "from flydsl.expr.typing import T\n"
            "def f(Out, addr, tid, x: fx.Float32, v4):\n"
            "    out = fx.rocdl.make_buffer_tensor(Out, num_records_bytes=4096)\n"
            "    fx.ptr_store(x.ir_value(), fx.recast_iter(fx.Int8, fx.get_iter(out)) + fx.Int32(tid) * 4)\n"
            "    fx.ptr_store(arith.TruncIOp(T.i8, x.bitcast(fx.Int32)).result, fx.recast_iter(fx.Int8, fx.get_iter(out)) + fx.Int32(tid))\n"
            "    words = fx.Vector(v4).bitcast(fx.Int32)\n"
            "    fx.ptr_store(vector.extract(words, static_position=[0], dynamic_position=[]), fx.recast_iter(fx.Int8, fx.get_iter(out)) + fx.Int32(tid) * 4)\n"
            "    fx.ptr_store(vector.extract_strided_slice(T.vec(2, T.i32), words, offsets=[0], sizes=[2], strides=[1]), fx.recast_iter(fx.Int8, fx.get_iter(out)) + fx.Int32(tid) * 4)\n"
            "    table = fx.rocdl.make_buffer_ptr(fx.inttoptr(fx.PointerType.get(fx.Int64.ir_type, fx.AddressSpace.Global, 8), addr))\n"
            "    fx.ptr_store(fx.ptr_load(table + tid), fx.recast_iter(fx.Int8, fx.get_iter(out)) + fx.Int32(tid) * 8)\n",
            unsafe=True,
            count=6,
        ),
        Invalid(
            # Resources passed to helpers of this file (a nested function, a private one of the
            # module) move with the helpers' accesses and every resource the helpers are called
            # with; a store the fix cannot say keeps the shim, on the tensor's raw resource.
            "import flydsl.expr as fx\n"
            "from kernels.common import buffer_ops\n"
            "\n"
            "\n"
            "def _zero(rsrc, idx):\n"
            "    buffer_ops.buffer_store(fx.Vector.filled(4, 0, fx.Int32), rsrc, idx * 4)\n"
            "\n"
            "\n"
            "def kernel(A, B, tid, y):\n"
            "    a = buffer_ops.create_buffer_resource(A, max_size=True)\n"
            "    b = buffer_ops.create_buffer_resource(B)\n"
            "\n"
            "    def load(r, off):\n"
            "        return buffer_ops.buffer_load(r, off, vec_width=1, dtype=fx.Float32)\n"
            "\n"
            "    x = load(a, tid) + load(b, tid)\n"
            "    _zero(a, tid)\n"
            "    buffer_ops.buffer_store(x * y, b, tid)\n",
            expected="import flydsl.expr as fx\n"
            "from kernels.common import buffer_ops\n"
            "\n"
            "\n"
            "def _zero(rsrc, idx):\n"
            "    fx.ptr_store(fx.Vector.filled(4, 0, fx.Int32), fx.recast_iter(fx.Int8, fx.get_iter(rsrc)) + fx.Int32(idx * 4) * 4)\n"
            "\n"
            "\n"
            "def kernel(A, B, tid, y):\n"
            "    a = fx.rocdl.make_buffer_tensor(A)\n"
            "    b = fx.rocdl.make_buffer_tensor(B)\n"
            "\n"
            "    def load(r, off):\n"
            "        return fx.ptr_load(fx.recast_iter(fx.Int8, fx.get_iter(r)) + fx.Int32(off) * 4, fx.Float32)\n"
            "\n"
            "    x = load(a, tid) + load(b, tid)\n"
            "    _zero(a, tid)\n"
            "    buffer_ops.buffer_store(x * y, fx.rocdl.get_buffer_rsrc(fx.get_iter(b)), tid)\n",
            unsafe=True,
            count=5,
        ),
        Invalid(
            # A helper also called with a resource from elsewhere: no fix for any of them.
            "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"
            "def _load(rsrc, i):\n"
            "    return buffer_ops.buffer_load(rsrc, i, vec_width=1, dtype=fx.Int32)\n"
            "def f(A, raw, tid):\n"
            "    a = buffer_ops.create_buffer_resource(A)\n"
            "    return _load(a, tid) + _load(raw, tid)\n",
            count=2,
            message="`_load` is also called at line 7 with a resource this rule does not build",
        ),
        Invalid(
            # A keyword-only resource parameter is not followed (the helper keeps the shim).
            "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"
            "def f(A, tid):\n"
            "    a = buffer_ops.create_buffer_resource(A)\n"
            "    def g(i, *, r):\n"
            "        return buffer_ops.buffer_load(r, i, vec_width=1, dtype=fx.Int32)\n"
            "    return g(tid, r=a)\n",
            count=2,
            message="the resource is passed to `g` (line 7), which may need the raw resource",
        ),
        Invalid(
            # A value bound in both branches of an `if`, alike; a vector unwrapped.
            "import flydsl.expr as fx\n"
            "from kernels.common import buffer_ops\n"
            "def f(Out, tid, a: fx.Int32, b: fx.Int32, ok):\n"
            "    out = buffer_ops.create_buffer_resource(Out)\n"
            "    if ok:\n"
            "        v = a\n"
            "    else:\n"
            "        v = b + 1\n"
            "    buffer_ops.buffer_store(v, out, tid)\n"
            "    buffer_ops.buffer_store(fx.Vector.from_elements([a, b], fx.Int32).ir_value(), out, tid)\n",
            expected="import flydsl.expr as fx\n"
            "def f(Out, tid, a: fx.Int32, b: fx.Int32, ok):\n"
            "    out = fx.rocdl.make_buffer_tensor(Out)\n"
            "    if ok:\n"
            "        v = a\n"
            "    else:\n"
            "        v = b + 1\n"
            "    fx.ptr_store(v, fx.recast_iter(fx.Int8, fx.get_iter(out)) + fx.Int32(tid) * 4)\n"
            "    fx.ptr_store(fx.Vector.from_elements([a, b], fx.Int32).ir_value(), fx.recast_iter(fx.Int8, fx.get_iter(out)) + fx.Int32(tid) * 4)\n",
            unsafe=True,
            count=3,
        ),
        Invalid(
            # A `@flyc.jit` helper (called while tracing, it runs the function itself), also
            # given a buffer tensor's raw resource: that call passes the tensor.
            "import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from kernels.common import buffer_ops\n"
            "\n"
            "\n"
            "@flyc.jit\n"
            "def _bump(rsrc, i):\n"
            "    buffer_ops.buffer_store(fx.Int32(1), rsrc, i)\n"
            "\n"
            "\n"
            "def f(A, B, tid):\n"
            "    a = fx.rocdl.make_buffer_tensor(A)\n"
            "    _bump(fx.rocdl.get_buffer_rsrc(fx.get_iter(a)), tid)\n"
            "    b = buffer_ops.create_buffer_resource(B)\n"
            "    _bump(b, tid)\n",
            expected="import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "\n"
            "\n"
            "@flyc.jit\n"
            "def _bump(rsrc, i):\n"
            "    fx.ptr_store(fx.Int32(1), fx.recast_iter(fx.Int8, fx.get_iter(rsrc)) + fx.Int32(i) * 4)\n"
            "\n"
            "\n"
            "def f(A, B, tid):\n"
            "    a = fx.rocdl.make_buffer_tensor(A)\n"
            "    _bump(a, tid)\n"
            "    b = fx.rocdl.make_buffer_tensor(B)\n"
            "    _bump(b, tid)\n",
            unsafe=True,
            count=2,
        ),
        Invalid(
            # `base_byte_offset=`: the shim's 64-bit GEP of the base is a byte pointer plus an
            # fx.Int64 (`getelementptr i8, ..., i64` either way), made a buffer pointer.
            "import flydsl.expr as fx\n"
            "from flydsl.expr import arith\n"
            "from flydsl.expr.typing import T\n"
            "from kernels.common import buffer_ops\n"
            "def f(A, B, slot, tid, off: fx.Int64):\n"
            "    base = arith.muli(arith.extsi(T.i64, slot), arith.constant(4096, type=T.i64))\n"
            "    a = buffer_ops.create_buffer_resource(A, max_size=True, base_byte_offset=base)\n"
            "    v = buffer_ops.buffer_load(a, tid, vec_width=4, dtype=fx.Float32)\n"
            "    buffer_ops.buffer_store(v, a, tid + 64)\n"
            "    return buffer_ops.buffer_load(buffer_ops.create_buffer_resource(B, base_byte_offset=off), tid, vec_width=1, dtype=fx.Int8)\n",
            expected="import flydsl.expr as fx\n"
            "from flydsl.expr import arith\n"
            "from flydsl.expr.typing import T\n"
            "def f(A, B, slot, tid, off: fx.Int64):\n"
            "    base = arith.muli(arith.extsi(T.i64, slot), arith.constant(4096, type=T.i64))\n"
            "    a = fx.rocdl.make_buffer_ptr(fx.recast_iter(fx.Int8, fx.get_iter(A)) + fx.Int64(base))\n"
            "    v = fx.ptr_load(a + fx.Int32(tid) * 4, fx.Vector.make_type(4, fx.Float32))\n"
            "    fx.ptr_store(v, a + fx.Int32(tid + 64) * 4)\n"
            "    return fx.ptr_load(fx.rocdl.make_buffer_ptr(fx.recast_iter(fx.Int8, fx.get_iter(B)) + off) + fx.Int32(tid)).ir_value()\n",
            unsafe=True,
            count=5,
            settings={"flydsl_version": "0.3.1"},
        ),
        Invalid(
            # A helper also given a resource with no fix: the other resource keeps the shim too
            # (the helper's loads stay raw).
            "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"
            "def f(A, B, tid):\n"
            "    def load(r, i):\n"
            "        return buffer_ops.buffer_load(r, i, vec_width=1, dtype=fx.Int32)\n"
            "    bad = buffer_ops.create_buffer_resource(B, stride=4)\n"
            "    x = load(bad, tid)\n"
            "    good = buffer_ops.create_buffer_resource(A)\n"
            "    return x + load(good, tid)\n",
            count=3,
            expected=None,
            message="the resource is built with `stride=`",
        ),
        Invalid(
            # aiter's ptr_rsrc(p) is a buffer pointer over the fx pointer p.
            "import flydsl.expr as fx\n"
            "from aiter.ops.flydsl.kernels.buffer_ops import buffer_load, buffer_store\n"
            "from aiter.ops.flydsl.kernels.tensor_shim import ptr_rsrc\n"
            "def f(p, q, i):\n"
            "    v = buffer_load(ptr_rsrc(p), i, vec_width=1, dtype=fx.BFloat16)\n"
            "    buffer_store(v, ptr_rsrc(q), i)\n",
            expected="import flydsl.expr as fx\n"
            "def f(p, q, i):\n"
            "    v = fx.ptr_load(fx.recast_iter(fx.Int8, fx.rocdl.make_buffer_ptr(p)) + fx.Int32(i) * 2, fx.BFloat16)\n"
            "    fx.ptr_store(v, fx.recast_iter(fx.Int8, fx.rocdl.make_buffer_ptr(q)) + fx.Int32(i) * 2)\n",
            unsafe=True,
            count=2,
        ),
        Invalid(
            # A store on a buffer tensor's raw resource already in the code uses the tensor.
            "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"
            "def f(Y, tid, v: fx.Float32):\n"
            "    y_buf = fx.rocdl.make_buffer_tensor(Y)\n"
            "    y_rsrc = fx.rocdl.get_buffer_rsrc(fx.get_iter(y_buf))\n"
            "    buffer_ops.buffer_store(v, y_rsrc, fx.as_ir_value(fx.Int32(tid)))\n",
            expected="import flydsl.expr as fx\n"
            "def f(Y, tid, v: fx.Float32):\n"
            "    y_buf = fx.rocdl.make_buffer_tensor(Y)\n"
            "    y_rsrc = fx.rocdl.get_buffer_rsrc(fx.get_iter(y_buf))\n"
            "    fx.ptr_store(v, fx.recast_iter(fx.Int8, fx.get_iter(y_buf)) + fx.Int32(tid) * 4)\n",
            unsafe=True,
        ),
        Invalid(
            # No layout form: the guide lets it stay, and its resource with it (both noted).
            "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"
            "def f(A, tid, ok):\n"
            "    rsrc = buffer_ops.create_buffer_resource(A)\n"
            "    return buffer_ops.buffer_load(rsrc, tid, vec_width=1, dtype=fx.Int32, mask=ok)\n",
            count=2,
            message="no fix: every access of the resource stays on buffer_ops: `mask=` has no counterpart",
        ),
        Invalid(
            # The shim's integer has no signedness: `>>` shifts in zeros; an fx integer's
            # (and its .ir_value()'s) shifts in the sign.
            "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"
            "def f(addr, tid):\n"
            "    enc = buffer_ops.buffer_load(buffer_ops.create_buffer_resource_from_addr(addr), tid, vec_width=1, dtype=fx.Int32)\n"
            "    return enc >> 4\n",
            count=2,
            message="the loaded integer reaches `>>` on line 5, unsigned on the shim's `ArithValue` and signed on an fx integer",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"
            "def f(rsrc, tid):\n"
            "    return buffer_ops.buffer_load(rsrc, tid, vec_width=1, dtype=fx.Int32, soffset_bytes=64)\n",
            message="`soffset_bytes=` has no counterpart on `fx.ptr_load`/`fx.ptr_store`; a load or store with no layout form may stay",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"
            "def f(A, tid, data):\n"
            "    rsrc = buffer_ops.create_buffer_resource(A)\n"
            "    buffer_ops.buffer_store(data, rsrc, tid)\n",
            count=2,
            message="the element type of `data` is not known here",
        ),
        Invalid(
            "from kernels.common import buffer_ops as _bo\n"
            "def f(data, rsrc, off):\n"
            "    _bo.buffer_store(data, rsrc, off)\n",
            expected=None,
            message="ELEMENTS",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"
            "def f(rsrc, tid):\n"
            "    return buffer_ops.buffer_load(rsrc, tid, vec_width=1, dtype=fx.Int32)\n",
            message="comes from a parameter",
        ),
        Invalid(
            "from kernels.common.buffer_ops import buffer_load\n"
            "def f(rsrc, i):\n"
            "    return buffer_load(rsrc, i, vec_width=1)\n",
            expected=None,
            message="fx.make_copy_atom(fx.rocdl.BufferCopy128b(), dtype)",
        ),
        Invalid(
            "from kernels.common import buffer_ops\n"
            "def f(A):\n"
            "    return buffer_ops.create_buffer_resource(A, max_size=False)\n",
            expected=None,
            message="`max_size=`",
        ),
        Invalid(
            "from kernels.common import buffer_ops\n"
            "def f(t):\n"
            "    return buffer_ops.extract_base_index(t)\n",
            expected=None,
            message="fx.ptrtoint(fx.get_iter(t))",
        ),
        Invalid(
            "from aiter.ops.flydsl.kernels import buffer_ops\n"
            "def f(addr, n):\n"
            "    crfa = buffer_ops.create_buffer_resource_from_addr\n"
            "    return crfa(addr, num_records_bytes=n)\n",
            expected=None,
            message="fx.inttoptr",
        ),
        Invalid(
            # A sum carried around a `range` loop has the type its other definitions agree on; the
            # loop's variable is the scf.for's i32.
            "import flydsl.expr as fx\n"
            "from kernels.common import buffer_ops\n"
            "def f(Out, n, step: fx.Int32):\n"
            "    out = buffer_ops.create_buffer_resource(Out)\n"
            "    total = fx.Int32(0)\n"
            "    for i in range(fx.Int32(0), n, 1):\n"
            "        total = total + step\n"
            "        buffer_ops.buffer_store(i, out, i)\n"
            "    buffer_ops.buffer_store(total, out, 0)\n",
            expected="import flydsl.expr as fx\n"
            "def f(Out, n, step: fx.Int32):\n"
            "    out = fx.rocdl.make_buffer_tensor(Out)\n"
            "    total = fx.Int32(0)\n"
            "    for i in range(fx.Int32(0), n, 1):\n"
            "        total = total + step\n"
            "        fx.ptr_store(i, fx.recast_iter(fx.Int8, fx.get_iter(out)) + fx.Int32(i) * 4)\n"
            "    fx.ptr_store(total, fx.recast_iter(fx.Int8, fx.get_iter(out)))\n",
            unsafe=True,
            count=3,
        ),
        Invalid(
            # What a helper of the module returns; a nested helper's parameter given one type at every call.
            "import flydsl.expr as fx\n"
            "from kernels.common import buffer_ops\n"
            "def _widest(v, lane):\n"
            "    return (v > lane).select(v, lane)\n"
            "def f(Out, lane: fx.Int32, x: fx.Int32):\n"
            "    out = buffer_ops.create_buffer_resource(Out)\n"
            "    def put(v, i):\n"
            "        buffer_ops.buffer_store(v, out, i)\n"
            "    put(_widest(x, lane), lane)\n"
            "    put(x + 1, lane + 64)\n",
            expected="import flydsl.expr as fx\n"
            "def _widest(v, lane):\n"
            "    return (v > lane).select(v, lane)\n"
            "def f(Out, lane: fx.Int32, x: fx.Int32):\n"
            "    out = fx.rocdl.make_buffer_tensor(Out)\n"
            "    def put(v, i):\n"
            "        fx.ptr_store(v, fx.recast_iter(fx.Int8, fx.get_iter(out)) + fx.Int32(i) * 4)\n"
            "    put(_widest(x, lane), lane)\n"
            "    put(x + 1, lane + 64)\n",
            unsafe=True,
            count=2,
        ),
        Invalid(
            # A raw select's operands; an element of a raw vector wrapped and bitcast.
            "import flydsl.expr as fx\n"
            "from flydsl.expr import arith\n"
            "from flydsl.expr.typing import T\n"
            "from kernels.common import buffer_ops\n"
            "def f(Out, ok, w, packed):\n"
            "    out = buffer_ops.create_buffer_resource(Out)\n"
            "    w_out = arith.select(ok, arith.constant(0.0, type=T.f32), w)\n"
            "    buffer_ops.buffer_store(w_out, out, 0)\n"
            "    word = fx.Vector(fx.Vector(packed).bitcast(fx.Int32))[0]\n"
            "    buffer_ops.buffer_store(word.ir_value(), out, 1)\n",
            expected="import flydsl.expr as fx\n"
            "from flydsl.expr import arith\n"
            "from flydsl.expr.typing import T\n"
            "def f(Out, ok, w, packed):\n"
            "    out = fx.rocdl.make_buffer_tensor(Out)\n"
            "    w_out = arith.select(ok, arith.constant(0.0, type=T.f32), w)\n"
            "    fx.ptr_store(w_out, fx.recast_iter(fx.Int8, fx.get_iter(out)))\n"
            "    word = fx.Vector(fx.Vector(packed).bitcast(fx.Int32))[0]\n"
            "    fx.ptr_store(word.ir_value(), fx.recast_iter(fx.Int8, fx.get_iter(out)) + 4)\n",
            unsafe=True,
            count=3,
        ),
        Invalid(
            # A width more than 1 only in the `else` of a trace-time `W == 1`, or after `assert W == 8`.
            "import flydsl.expr as fx\n"
            "from flydsl.expr import const_expr\n"
            "from kernels.common import buffer_ops\n"
            "def build(VEC, PAIRS):\n"
            "    def load(A, off):\n"
            "        rsrc = buffer_ops.create_buffer_resource(A)\n"
            "        if const_expr(PAIRS == 1):\n"
            "            v = buffer_ops.buffer_load(rsrc, off, vec_width=1, dtype=fx.Float32)\n"
            "        else:\n"
            "            v = buffer_ops.buffer_load(rsrc, off, vec_width=PAIRS, dtype=fx.Float32)\n"
            "        assert VEC == 8\n"
            "        half = VEC // 2\n"
            "        return v, buffer_ops.buffer_load(rsrc, off, vec_width=half, dtype=fx.Float32)\n"
            "    return load\n",
            expected="import flydsl.expr as fx\n"
            "from flydsl.expr import const_expr\n"
            "def build(VEC, PAIRS):\n"
            "    def load(A, off):\n"
            "        rsrc = fx.rocdl.make_buffer_tensor(A)\n"
            "        if const_expr(PAIRS == 1):\n"
            "            v = fx.ptr_load(fx.recast_iter(fx.Int8, fx.get_iter(rsrc)) + fx.Int32(off) * 4, fx.Float32).ir_value()\n"
            "        else:\n"
            "            v = fx.ptr_load(fx.recast_iter(fx.Int8, fx.get_iter(rsrc)) + fx.Int32(off) * 4, fx.Vector[fx.Float32, PAIRS])\n"
            "        assert VEC == 8\n"
            "        half = VEC // 2\n"
            "        return v, fx.ptr_load(fx.recast_iter(fx.Int8, fx.get_iter(rsrc)) + fx.Int32(off) * 4, fx.Vector[fx.Float32, 4])\n"
            "    return load\n",
            unsafe=True,
            count=4,
        ),
        Invalid(
            # A helper's parameter given different types: its stores keep the shim.
            "import flydsl.expr as fx\n"
            "from kernels.common import buffer_ops\n"
            "def f(Out, lane: fx.Int32, x: fx.Float16):\n"
            "    out = buffer_ops.create_buffer_resource(Out)\n"
            "    def put(v, i):\n"
            "        buffer_ops.buffer_store(v, out, i)\n"
            "    put(x, lane)\n"
            "    put(lane, lane)\n",
            count=2,
            expected=None,
            message="the element type of `v` is not known here",
        ),
        Invalid(
            # `W <= 4` leaves 1 possible: a scalar or a vector load.
            "import flydsl.expr as fx\n"
            "from flydsl.expr import const_expr\n"
            "from kernels.common import buffer_ops\n"
            "def build(VEC):\n"
            "    def load(A, off):\n"
            "        rsrc = buffer_ops.create_buffer_resource(A)\n"
            "        if const_expr(VEC <= 4):\n"
            "            return buffer_ops.buffer_load(rsrc, off, vec_width=VEC, dtype=fx.Float32)\n"
            "        return None\n"
            "    return load\n",
            count=2,
            expected=None,
            message="its width `VEC` is not a literal",
        ),
        Invalid(
            # A nested factory's resources move together (its `return` changes for all); a load
            # of one stored through another is rewritten inside the store.
            "import flydsl.expr as fx\n"
            "from kernels.common import buffer_ops\n"
            "def build(A, B, tid):\n"
            "    def _rsrc(ptr):\n"
            "        return buffer_ops.create_buffer_resource(ptr, max_size=True)\n"
            "    a = _rsrc(A)\n"
            "    b = _rsrc(B)\n"
            "    buffer_ops.buffer_store(buffer_ops.buffer_load(a, tid, vec_width=1, dtype=fx.Int32), b, tid)\n",
            expected="import flydsl.expr as fx\n"
            "def build(A, B, tid):\n"
            "    def _rsrc(ptr):\n"
            "        return fx.rocdl.make_buffer_tensor(ptr)\n"
            "    a = _rsrc(A)\n"
            "    b = _rsrc(B)\n"
            "    fx.ptr_store(fx.ptr_load(fx.recast_iter(fx.Int8, fx.get_iter(a)) + fx.Int32(tid) * 4, fx.Int32), fx.recast_iter(fx.Int8, fx.get_iter(b)) + fx.Int32(tid) * 4)\n",
            unsafe=True,
            count=3,
        ),
        Invalid(
            # A factory whose result is also used in place: none of its resources move.
            "import flydsl.expr as fx\n"
            "from kernels.common import buffer_ops\n"
            "def build(A, B, tid):\n"
            "    def _rsrc(ptr):\n"
            "        return buffer_ops.create_buffer_resource(ptr, max_size=True)\n"
            "    a = _rsrc(A)\n"
            "    return buffer_ops.buffer_load(a, tid, vec_width=1, dtype=fx.Int32) + buffer_ops.buffer_load(_rsrc(B), tid, vec_width=1, dtype=fx.Int32)\n",
            count=3,
            expected=None,
            message="`_rsrc` makes resources that are not each assigned to one name",
        ),
        Invalid(
            # An element type chosen at trace time between floats of one size: the offset scales
            # alike, and the access names the same choice (its condition reads the same names).
            "import flydsl.expr as fx\n"
            "from flydsl.expr.typing import T\n"
            "from kernels.common import buffer_ops\n"
            "def build(dtype_str):\n"
            "    elem_dtype = T.bf16 if dtype_str == \"bf16\" else T.f16\n"
            "    def kernel(X, Y, tid):\n"
            "        x = buffer_ops.create_buffer_resource(X, max_size=True)\n"
            "        y = buffer_ops.create_buffer_resource(Y, max_size=True)\n"
            "        v = buffer_ops.buffer_load(x, tid, vec_width=1, dtype=elem_dtype)\n"
            "        w = buffer_ops.buffer_load(x, tid * 8, vec_width=8, dtype=elem_dtype)\n"
            "        buffer_ops.buffer_store(v, y, tid)\n"
            "        buffer_ops.buffer_store(w, y, tid * 8 + 64)\n"
            "    return kernel\n",
            expected="import flydsl.expr as fx\n"
            "from flydsl.expr.typing import T\n"
            "def build(dtype_str):\n"
            "    elem_dtype = T.bf16 if dtype_str == \"bf16\" else T.f16\n"
            "    def kernel(X, Y, tid):\n"
            "        x = fx.rocdl.make_buffer_tensor(X)\n"
            "        y = fx.rocdl.make_buffer_tensor(Y)\n"
            "        v = fx.ptr_load(fx.recast_iter(fx.Int8, fx.get_iter(x)) + fx.Int32(tid) * 2, (fx.BFloat16 if dtype_str == \"bf16\" else fx.Float16))\n"
            "        w = fx.ptr_load(fx.recast_iter(fx.Int8, fx.get_iter(x)) + fx.Int32(tid * 8) * 2, fx.Vector[(fx.BFloat16 if dtype_str == \"bf16\" else fx.Float16), 8])\n"
            "        fx.ptr_store(v, fx.recast_iter(fx.Int8, fx.get_iter(y)) + fx.Int32(tid) * 2)\n"
            "        fx.ptr_store(w, fx.recast_iter(fx.Int8, fx.get_iter(y)) + fx.Int32(tid * 8 + 64) * 2)\n"
            "    return kernel\n",
            unsafe=True,
            count=6,
        ),
        Invalid(
            # ... but not between sizes.
            "import flydsl.expr as fx\n"
            "from flydsl.expr.typing import T\n"
            "from kernels.common import buffer_ops\n"
            "def build(w_dtype):\n"
            "    w_dt = T.f32 if w_dtype == \"f32\" else T.bf16\n"
            "    def kernel(X, tid):\n"
            "        x = buffer_ops.create_buffer_resource(X, max_size=True)\n"
            "        return buffer_ops.buffer_load(x, tid, vec_width=1, dtype=w_dt)\n"
            "    return kernel\n",
            count=2,
            expected=None,
            message="its element type `w_dt` is not an fx numeric type",
        ),
        Invalid(
            # A helper given a rebased resource (a byte pointer) and a tensor takes pointers: the
            # tensor is passed as its iterator.
            "import flydsl.expr as fx\n"
            "from kernels.common import buffer_ops\n"
            "def f(S, W, slot, tid):\n"
            "    def load(rsrc, off):\n"
            "        return buffer_ops.buffer_load(rsrc, off, vec_width=4, dtype=fx.Float32)\n"
            "    s = buffer_ops.create_buffer_resource(S, max_size=True, base_byte_offset=slot * 4096)\n"
            "    w = buffer_ops.create_buffer_resource(W, max_size=True)\n"
            "    return load(s, tid), load(w, tid)\n",
            expected="import flydsl.expr as fx\n"
            "def f(S, W, slot, tid):\n"
            "    def load(rsrc, off):\n"
            "        return fx.ptr_load(fx.recast_iter(fx.Int8, rsrc) + fx.Int32(off) * 4, fx.Vector.make_type(4, fx.Float32))\n"
            "    s = fx.rocdl.make_buffer_ptr(fx.recast_iter(fx.Int8, fx.get_iter(S)) + fx.Int64(slot * 4096))\n"
            "    w = fx.rocdl.make_buffer_tensor(W)\n"
            "    return load(s, tid), load(fx.get_iter(w), tid)\n",
            unsafe=True,
            count=3,
            settings={"flydsl_version": "0.3.1"},
        ),
        Invalid(
            # Buffer pointers made from raw addresses, given to a `@flyc.jit` helper: it takes
            # pointers (bytes: the helper's own accesses say their element types).
            "import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "from kernels.common import buffer_ops\n"
            "\n"
            "\n"
            "@flyc.jit\n"
            "def _copy_row(src, dst, lane):\n"
            "    v = buffer_ops.buffer_load(src, lane * 4, vec_width=4, dtype=fx.Int32)\n"
            "    buffer_ops.buffer_store(v, dst, lane * 4)\n"
            "\n"
            "\n"
            "def f(a_src, a_dst, lane):\n"
            "    crfa = buffer_ops.create_buffer_resource_from_addr\n"
            "    src = crfa(a_src)\n"
            "    dst = crfa(a_dst)\n"
            "    _copy_row(src, dst, lane)\n",
            expected="import flydsl.compiler as flyc\n"
            "import flydsl.expr as fx\n"
            "\n"
            "\n"
            "@flyc.jit\n"
            "def _copy_row(src, dst, lane):\n"
            "    v = fx.ptr_load(fx.recast_iter(fx.Int8, src) + fx.Int32(lane * 4) * 4, fx.Vector[fx.Int32, 4])\n"
            "    fx.ptr_store(v, fx.recast_iter(fx.Int8, dst) + fx.Int32(lane * 4) * 4)\n"
            "\n"
            "\n"
            "def f(a_src, a_dst, lane):\n"
            "    src = fx.rocdl.make_buffer_ptr(fx.inttoptr(fx.PointerType.get(fx.Int8.ir_type, fx.AddressSpace.Global, 1), a_src))\n"
            "    dst = fx.rocdl.make_buffer_ptr(fx.inttoptr(fx.PointerType.get(fx.Int8.ir_type, fx.AddressSpace.Global, 1), a_dst))\n"
            "    _copy_row(src, dst, lane)\n",
            unsafe=True,
            count=4,
        ),
        Invalid(
            # fused_rope_cache_kernel: an element read from a register tensor of a dtype chosen
            # at build time, and a word from a list of rocdl-packed words (typed by the op's
            # result type); both stores scale their offsets by that size.
            "import flydsl.expr as fx\n"
            "from flydsl.expr import T\n"
            "from kernels.common import buffer_ops\n"
            "def build(dtype_str):\n"
            "    def k(C, P, src, tid, vals):\n"
            "        elem_dtype = fx.BFloat16 if dtype_str == \"bf16\" else fx.Float16\n"
            "        def load(div):\n"
            "            r = fx.make_rmem_tensor(fx.make_layout(1, 1), elem_dtype)\n"
            "            fx.copy(None, div, r)\n"
            "            return fx.memref_load_vec(r)\n"
            "        def pack(xs):\n"
            "            words = []\n"
            "            for i in range(2):\n"
            "                words.append(fx.rocdl.cvt_pk_fp8_f32(T.i32, xs[i], xs[i + 1], 0, False))\n"
            "            return words\n"
            "        c = buffer_ops.create_buffer_resource(C, max_size=True)\n"
            "        buffer_ops.buffer_store(load(src)[0], c, tid)\n"
            "        p = buffer_ops.create_buffer_resource(P, max_size=True)\n"
            "        buffer_ops.buffer_store(pack(vals)[1], p, tid)\n"
            "    return k\n",
            expected="import flydsl.expr as fx\n"
            "from flydsl.expr import T\n"
            "def build(dtype_str):\n"
            "    def k(C, P, src, tid, vals):\n"
            "        elem_dtype = fx.BFloat16 if dtype_str == \"bf16\" else fx.Float16\n"
            "        def load(div):\n"
            "            r = fx.make_rmem_tensor(fx.make_layout(1, 1), elem_dtype)\n"
            "            fx.copy(None, div, r)\n"
            "            return fx.memref_load_vec(r)\n"
            "        def pack(xs):\n"
            "            words = []\n"
            "            for i in range(2):\n"
            "                words.append(fx.rocdl.cvt_pk_fp8_f32(T.i32, xs[i], xs[i + 1], 0, False))\n"
            "            return words\n"
            "        c = fx.rocdl.make_buffer_tensor(C)\n"
            "        fx.ptr_store(load(src)[0], fx.recast_iter(fx.Int8, fx.get_iter(c)) + fx.Int32(tid) * 2)\n"
            "        p = fx.rocdl.make_buffer_tensor(P)\n"
            "        fx.ptr_store(pack(vals)[1], fx.recast_iter(fx.Int8, fx.get_iter(p)) + fx.Int32(tid) * 4)\n"
            "    return k\n",
            unsafe=True,
            count=4,
        ),
        Invalid(
            # A list that is extended, or has items of two types, types none of its items.
            "import flydsl.expr as fx\n"
            "from flydsl.expr import T\n"
            "from kernels.common import buffer_ops\n"
            "def f(P, tid, a, more):\n"
            "    words = [fx.rocdl.cvt_pk_fp8_f32(T.i32, a, a, 0, False)]\n"
            "    words.extend(more)\n"
            "    mixed = [fx.Int32(a), fx.Int8(a)]\n"
            "    p = buffer_ops.create_buffer_resource(P, max_size=True)\n"
            "    buffer_ops.buffer_store(words[0], p, tid)\n"
            "    buffer_ops.buffer_store(mixed[0], p, tid)\n",
            message="the element type of `words[0]` is not known here",
            line=8,
            count=3,
        ),
    ]


def _rebase(create: ast.Call) -> ast.expr | None:
    """The `base_byte_offset=` of a `create_buffer_resource` call, if it is not None."""
    offset = next((kw.value for kw in create.keywords if kw.arg == "base_byte_offset"), None)
    return None if offset is None or (isinstance(offset, ast.Constant) and offset.value is None) else offset


def _argument(call: ast.Call, function: ast.FunctionDef, param) -> ast.expr | None:
    """What ``call`` passes for ``param`` of ``function`` (positionally or by name)."""
    names = [a.arg for a in function.args.args]
    if param.name not in names:
        return None
    index = names.index(param.name)
    if index < len(call.args):
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == param.name), None)


def _takes_raw(symbol: str) -> bool:
    return symbol.startswith(SHIM) or symbol.startswith("mlir.") or is_raw_op(symbol) or is_raw_builder(symbol)


def _outermost_spans(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    return [s for s in spans if not any(o != s and o[0] <= s[0] and s[1] <= o[1] for o in spans)]


def _outermost(replacements) -> list[tuple[ast.AST, str]]:
    """The replacements not inside another one (those embed the inner ones' text)."""
    items = list(replacements)
    spans = {id(node): _span(node) for node, _ in items}

    def inside(a, b):
        (a0, a1), (b0, b1) = spans[id(a)], spans[id(b)]
        return a is not b and b0 <= a0 and a1 <= b1

    return [(node, text) for node, text in items if not any(inside(node, other) for other, _ in items)]


def _span(node: ast.AST) -> tuple[tuple[int, int], tuple[int, int]]:
    return ((node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset))
