import ast
from dataclasses import dataclass, field

from flydsl_ls.analysis.diagnostic import Edit
from flydsl_ls.analysis.rewrite import fx_alias
from flydsl_ls.analysis.rawtypes import fx_type_of_mlir_type
from flydsl_ls.analysis.rules.base import Invalid, Rule, Valid, call_argument
from flydsl_ls.analysis.text import Position, Range

ALLOCATOR = "shim.smem_allocator.SmemAllocator"
SMEM_PTR = "shim.smem_allocator.SmemPtr"
KERNEL_DECORATORS = {"flyc.kernel"}
# fx element classes an fx.Array can hold, with their size in bytes.
ELEMENT_BYTES = {
    "fx.Int8": 1, "fx.Uint8": 1, "fx.Int16": 2, "fx.Uint16": 2, "fx.Int32": 4, "fx.Uint32": 4,
    "fx.Int64": 8, "fx.Uint64": 8, "fx.Float16": 2, "fx.BFloat16": 2, "fx.Float32": 4,
    "fx.Float64": 8, "fx.Float8E4M3FN": 1, "fx.Float8E5M2": 1, "fx.Float8E4M3FNUZ": 1,
    "fx.Float8E4M3": 1, "fx.Float8E4M3B11FNUZ": 1, "fx.Float8E8M0FNU": 1,
}
RAW_MEMREF_LOAD = {"mlir.memref.load", "mlir.memref.LoadOp"}
RAW_MEMREF_STORE = {"mlir.memref.store", "mlir.memref.StoreOp"}
BASE_ALIGNMENT = 1024  # SmemAllocator.finalize() aligns its global to 1024 bytes
_MAX_DEPTH = 12
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


class Unproven(Exception):
    """The pattern cannot be migrated mechanically; the message says why."""


# --- static offsets: integer polynomials over unknown non-negative sizes ------------
class Poly:
    """sum(coef * product(symbols)); symbols stand for sizes known only at build time."""

    def __init__(self, terms=None):
        self.terms = {k: v for k, v in (terms or {}).items() if v}

    @staticmethod
    def const(value: int) -> "Poly":
        return Poly({(): value})

    @staticmethod
    def symbol(name: str) -> "Poly":
        return Poly({(name,): 1})

    @property
    def constant(self) -> int | None:
        if not self.terms:
            return 0
        if set(self.terms) == {()}:
            return self.terms[()]
        return None

    def __add__(self, other):
        terms = dict(self.terms)
        for key, value in other.terms.items():
            terms[key] = terms.get(key, 0) + value
        return Poly(terms)

    def __neg__(self):
        return Poly({k: -v for k, v in self.terms.items()})

    def __sub__(self, other):
        return self + (-other)

    def __mul__(self, other):
        terms: dict = {}
        for ka, va in self.terms.items():
            for kb, vb in other.terms.items():
                key = tuple(sorted(ka + kb))
                terms[key] = terms.get(key, 0) + va * vb
        return Poly(terms)

    def nonnegative(self) -> bool:
        return all(v >= 0 for v in self.terms.values())

    def divisible_by(self, n: int) -> bool:
        return all(v % n == 0 for v in self.terms.values())

    def divided(self, n: int) -> "Poly":
        return Poly({k: v // n for k, v in self.terms.items()})

    def alignment(self) -> int:
        """The largest power of two every value of this polynomial is a multiple of."""
        if not self.terms:
            return BASE_ALIGNMENT
        align = BASE_ALIGNMENT
        while align > 1 and not self.divisible_by(align):
            align //= 2
        return align

    def __eq__(self, other):
        return isinstance(other, Poly) and self.terms == other.terms

    def __hash__(self):
        return hash(tuple(sorted(self.terms.items())))


@dataclass
class Buffer:
    name: str  # field name
    offset: Poly
    dtype: str  # fx class
    shape: list[ast.expr]
    explicit_align: int | None
    calls: list[ast.Call] = field(default_factory=list)

    @property
    def elem_bytes(self) -> int:
        return ELEMENT_BYTES[self.dtype]


@dataclass
class Group:
    """One SmemAllocator and everything hanging off it."""

    binding: object
    call: ast.Call
    flagged: list[ast.Call] = field(default_factory=list)
    reason: str | None = None
    edits: tuple = ()


class SmemAllocator(Rule):
    """
    The legacy LDS path (`flydsl.utils.smem_allocator`) places every buffer by hand: a
    `SmemAllocator` bumps a byte pointer (`allocator.ptr`, `allocator._align(...)`), the
    kernel takes `allocator.get_base()` and views it through `SmemPtr(base, byte_offset,
    dtype, shape=...)`, `.get()`/`.load()`/`.store()`, and the launcher must emit the LDS
    global itself with `allocator.finalize()` inside the GPU module body. FlyDSL 0.5.0 warns
    on both classes. The replacement declares the kernel's LDS as an `@fx.struct` with one
    `fx.Array[dtype, n]` field per buffer and allocates it with
    `fx.SharedAllocator().allocate(S).peek()` inside the kernel; the compiler sizes LDS, so
    there is no `finalize()`, no offsets and no base pointer.

    Flagged: every `SmemAllocator(...)` and `SmemPtr(...)` call, and `.finalize()` whose
    receiver resolves to a `SmemAllocator` (a generic `.finalize()` never is).

    "Migrate to SharedAllocator" (unsafe) is one fix over the whole kernel and its launcher:
    it adds the `@fx.struct` right before the kernel (one field per buffer, in offset order,
    sizes from the shapes; where the offsets imply alignment, e.g. `allocator._align(p, 16)`
    or padding, the field keeps it as `fx.Array[dtype, n, align]`), puts
    `lds = fx.SharedAllocator().allocate(S).peek()` where the kernel first touches LDS,
    replaces each `.get()` with `lds.<field>.view(fx.make_layout(shape, stride))`
    (row-major; a view per use, as the guide recommends), `.load(idx)` with `view[idx]` and
    `.store(v, idx)` with `view[idx] = v` (`memref.load/store` on a `.get()` result alike),
    and deletes the allocator, its offset bookkeeping, `get_base()` and `finalize()`. The
    IR differs (one LDS global per field instead of a byte array plus `memref.view`), and
    buffers may move, hence unsafe.

    No fix, and the message says why, when the pattern cannot be proven: offsets that are
    computed at run time or change under control flow, buffers that overlap (aliasing needs
    an `fx.union` chosen by hand), a pointer or allocator escaping to another function or
    kernel, `.get()` results used by raw ops other than `memref.load/store`, index lists that
    are not literal, or a dtype with no fx class.
    """

    code = "FLY203"
    name = "smem-allocator"
    summary = "`SmemAllocator`, `SmemPtr`, `allocator.finalize()` (receiver resolved to a SmemAllocator)"
    replacement = (
        "`@fx.struct` of `fx.Array[...]` fields + `fx.SharedAllocator().allocate(S).peek()` + "
        "`.view(layout)` (\"Migrate to SharedAllocator\")"
    )
    fix_safety = "unsafe, whole kernel at once"
    fix_title = "Migrate to SharedAllocator"
    example_before = (
        "allocator = SmemAllocator(None, arch=ARCH)\n"
        "red_off = allocator._align(allocator.ptr, 16)\n"
        "allocator.ptr = red_off + SLOTS * 4\n\n"
        "@flyc.kernel\n"
        "def k(x: fx.Tensor):\n"
        "    base = allocator.get_base()\n"
        "    s_red = SmemPtr(base, red_off, T.f32, shape=(SLOTS,))\n"
        "    s_red.store(v, [i])\n"
        "...\n"
        "    with ir.InsertionPoint(ctx.gpu_module_body):\n"
        "        allocator.finalize()"
    )
    example_after = (
        "@fx.struct\n"
        "class SharedStorage:\n"
        "    s_red: fx.Array[fx.Float32, SLOTS, 16]\n\n"
        "@flyc.kernel\n"
        "def k(x: fx.Tensor):\n"
        "    lds = fx.SharedAllocator().allocate(SharedStorage).peek()\n"
        "    lds.s_red.view(fx.make_layout(SLOTS, 1))[i] = v"
    )

    def __init__(self, ctx):
        super().__init__(ctx)
        self._findings: dict[int, tuple[str, object]] = {}

    # --- entry points ---------------------------------------------------------
    def visit_Module(self, node: ast.Module) -> None:
        if "SmemAllocator" not in self.model.source and "SmemPtr" not in self.model.source:
            return  # neither name is used (so nothing can resolve to them): skip the walks
        self._parents = self.model.parent_map(node)
        # One walk: the calls of the two classes, found once for every group.
        self._calls: dict[str, list[ast.Call]] = {ALLOCATOR: [], SMEM_PTR: []}
        for call in ast.walk(node):
            if isinstance(call, ast.Call):
                symbol = self.model.resolve(call.func)
                if symbol in self._calls:
                    self._calls[symbol].append(call)
        groups = self._groups()
        multiple = len(groups) > 1
        claimed: set[int] = set()
        for group in groups:
            try:
                edits = self._plan(group, multiple)
                group.edits = edits
            except Unproven as why:
                group.reason = str(why)
            claimed.update(id(c) for c in group.flagged)
            fix = None
            if group.reason is None:
                fix = self.replace_edits(group.edits)
            for call in group.flagged:
                self._findings[id(call)] = (self._message(call, group), fix)
        for call in self._calls[SMEM_PTR]:
            if id(call) not in claimed:
                self._findings[id(call)] = (
                    self._describe(call)
                    + "; no automatic migration: its base memref does not come from a "
                    "`SmemAllocator(...)` of this file",
                    None,
                )

    def visit_Call(self, node: ast.Call) -> None:
        found = self._findings.get(id(node))
        if found is not None:
            message, fix = found
            self.report(node, message, fix=fix)

    def replace_edits(self, edits):
        from flydsl_ls.analysis.diagnostic import Applicability, Fix

        return Fix(
            title=f"{self.fix_title} (unsafe)",
            applicability=Applicability.UNSAFE,
            edits=tuple(edits),
        )

    # --- messages ---------------------------------------------------------------
    def _describe(self, call: ast.Call) -> str:
        symbol = self.model.resolve(call.func)
        if symbol == ALLOCATOR:
            return (
                "legacy `SmemAllocator` places LDS buffers at hand-computed byte offsets and needs "
                "`finalize()`: declare an `@fx.struct` of `fx.Array` fields and allocate it with "
                "`fx.SharedAllocator().allocate(S).peek()` in the kernel"
            )
        if symbol == SMEM_PTR:
            return (
                "legacy `SmemPtr(base, offset, dtype, shape=...)` views LDS at a byte offset: make the "
                "buffer an `fx.Array` field of an `@fx.struct` and take `.view(fx.make_layout(...))`"
            )
        return (
            "`finalize()` on a `SmemAllocator` emits the LDS global by hand; `fx.SharedAllocator` "
            "sizes LDS itself, so it goes away with the migration"
        )

    def _message(self, call: ast.Call, group: Group) -> str:
        text = self._describe(call)
        if group.reason is None:
            return text + " (fix: Migrate to SharedAllocator, the whole kernel at once)"
        return text + f"; no automatic migration: {group.reason}"

    # --- finding the pattern ----------------------------------------------------------
    def _groups(self) -> list[Group]:
        groups = []
        for node in self._calls[ALLOCATOR]:
            parent = self._parents.get(id(node))
            binding = None
            if (
                isinstance(parent, ast.Assign)
                and parent.value is node
                and len(parent.targets) == 1
                and isinstance(parent.targets[0], ast.Name)
            ):
                scope = self._scope_at(parent)
                if scope is not None:
                    for b in scope.bindings.get(parent.targets[0].id, ()):
                        if b.node is parent or getattr(b, "value", None) is node:
                            binding = b
            group = Group(binding, node, [node])
            if binding is None:
                group.reason = "the allocator is not assigned to a plain name"
            groups.append(group)
        for group in groups:
            if group.binding is None:
                continue
            if len(group.binding.scope.bindings.get(group.binding.name, ())) != 1:
                group.reason = f"`{group.binding.name}` is bound more than once"
            for use in self.model.uses_of(group.binding):
                call = self._method_call(use, "finalize")
                if call is not None:
                    group.flagged.append(call)
            for ptr in self._smem_ptr_calls(group):
                group.flagged.append(ptr)
        return groups

    def _scope_at(self, stmt: ast.stmt):
        owner = next((p for p in self._ancestors(stmt) if isinstance(p, (*_FUNCTIONS, ast.Module))), None)
        if isinstance(owner, ast.Module) or owner is None:
            return self.model.module_scope
        return self.model.function_scope(owner)

    def _method_call(self, name: ast.Name, method: str) -> ast.Call | None:
        attr = self._parents.get(id(name))
        if isinstance(attr, ast.Attribute) and attr.value is name and attr.attr == method:
            call = self._parents.get(id(attr))
            if isinstance(call, ast.Call) and call.func is attr:
                return call
        return None

    def _smem_ptr_calls(self, group: Group) -> list[ast.Call]:
        found = []
        for node in self._calls[SMEM_PTR]:
            base = call_argument(node, 0, "base_memref")
            if base is not None and self._is_base_of(base, group):
                found.append(node)
        return found

    def _is_base_of(self, expr: ast.expr, group: Group) -> bool:
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "get_base":
            return self._is_allocator(expr.func.value, group)
        if isinstance(expr, ast.Name):
            bindings = self.model.reaching_bindings(expr)
            return len(bindings) == 1 and bindings[0].value is not None and self._is_base_of(bindings[0].value, group)
        return False

    def _is_allocator(self, expr: ast.expr, group: Group) -> bool:
        return isinstance(expr, ast.Name) and self.model.binding_of(expr) is group.binding

    # --- the plan -------------------------------------------------------------------
    def _plan(self, group: Group, multiple: bool) -> tuple[Edit, ...]:
        if group.reason is not None:
            raise Unproven(group.reason)
        alloc = group.binding
        alloc_stmt = self._statement(alloc.node)
        self._alloc_stmt = alloc_stmt
        self._alloc_body = self._body_of(alloc_stmt)
        self._group = group
        self._aligned: dict[str, tuple[Poly, int]] = {}
        deleted: list[ast.stmt] = [alloc_stmt]
        offset_names: dict[int, ast.stmt] = {}  # id(binding) of offset variables -> statement
        base_stmts: list[ast.stmt] = []
        kernel_uses: list[ast.AST] = []
        # 1. Every use of the allocator must be one we understand.
        for use in self.model.uses_of(alloc):
            parent = self._parents.get(id(use))
            stmt = self._statement(use)
            attr = parent.attr if isinstance(parent, ast.Attribute) and parent.value is use else None
            if attr == "get_base":
                call = self._parents.get(id(parent))
                if not (isinstance(call, ast.Call) and call.func is parent and not call.args):
                    raise Unproven(f"`{alloc.name}.get_base` is used other than as a call")
                holder = self._parents.get(id(call))
                if isinstance(holder, ast.Assign) and holder.value is call and self._single_name(holder):
                    base_stmts.append(holder)
                    deleted.append(holder)
                elif isinstance(holder, ast.Call) and self.model.resolve(holder.func) == SMEM_PTR and call_argument(holder, 0, "base_memref") is call:
                    pass
                else:
                    raise Unproven(
                        f"the base pointer `{alloc.name}.get_base()` escapes (line {call.lineno}): "
                        "it is used other than by `SmemPtr(...)`"
                    )
                kernel_uses.append(call)
            elif attr == "finalize":
                call = self._parents.get(id(parent))
                if not (isinstance(call, ast.Call) and isinstance(stmt, ast.Expr) and stmt.value is call):
                    raise Unproven(f"the result of `{alloc.name}.finalize()` is used (line {use.lineno})")
                deleted.append(stmt)
            elif attr == "finalized" and isinstance(stmt, ast.Assign) and parent in stmt.targets:
                deleted.append(stmt)
            elif attr in ("ptr", "_align") and stmt is not None and self._body_of(stmt) is self._alloc_body:
                if isinstance(stmt, (ast.Assign, ast.AugAssign)):
                    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                    if len(targets) != 1:
                        raise Unproven(f"line {stmt.lineno}: multiple assignment of allocator bookkeeping")
                    target = targets[0]
                    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.attr == "ptr" and self._is_allocator(target.value, group):
                        deleted.append(stmt)
                        continue
                    if isinstance(stmt, ast.Assign) and isinstance(target, ast.Name):
                        binding = self._binding_of_target(target, stmt)
                        if binding is None:
                            raise Unproven(f"line {stmt.lineno}: cannot follow `{target.id}`")
                        offset_names[id(binding)] = stmt
                        deleted.append(stmt)
                        continue
                raise Unproven(f"line {stmt.lineno}: `{alloc.name}.{attr}` is used in a way that cannot be mapped")
            elif attr in ("ptr", "_align"):
                where = "inside control flow" if stmt is not None and self._within(stmt, alloc.scope.node) else "outside the allocator's scope"
                raise Unproven(f"`{alloc.name}.{attr}` is used {where} (line {use.lineno}): the offsets are computed, not static")
            else:
                what = f"`{alloc.name}.{attr}`" if attr else f"`{alloc.name}`"
                raise Unproven(f"the allocator escapes: {what} is used at line {use.lineno}")
        # 2. The kernel.
        ptr_calls = [c for c in group.flagged if self.model.resolve(c.func) == SMEM_PTR]
        if not ptr_calls:
            raise Unproven("no `SmemPtr(...)` views this allocator")
        kernel = self._kernel_of([*kernel_uses, *ptr_calls])
        # 3. Buffers and their uses.
        buffers: list[Buffer] = []
        rewrites: dict[int, tuple[ast.AST, str]] = {}
        for call in ptr_calls:
            buffer, view_of = self._buffer(call, kernel, buffers)
            self._rewrite_uses(call, buffer, view_of, rewrites, deleted)
        for binding_id, stmt in offset_names.items():
            binding = next(b for b in self._bindings_of_stmt(stmt))
            for use in self.model.uses_of(binding):
                if self._inside_any(use, deleted) or self._is_offset_arg(use, ptr_calls):
                    continue
                raise Unproven(f"`{binding.name}` (an offset) is used at line {use.lineno} outside the SmemPtr calls")
        ordered = self._order(buffers)
        # 4. Things left dead: `ctx = CompilationContext.get_current()` only used by finalize.
        deleted = self._with_dead_contexts(deleted)
        # 5. Text.
        fx, import_edits = fx_alias(self.model)
        struct_name = self._fresh(kernel, self._struct_name(group, multiple))
        lds = self._fresh_in_kernel(kernel, "lds")
        edits: list[Edit] = list(import_edits)
        edits.append(self._struct_edit(kernel, struct_name, ordered, fx))
        placed = self._lds_edit(kernel, base_stmts, [*kernel_uses, *ptr_calls], lds, fx, struct_name, deleted)
        for node, text in rewrites.values():
            edits.append(Edit(self.ctx.range(node), text.replace("\0LDS\0", lds).replace("\0FX\0", fx)))
        edits.extend(self._deletions(deleted, skip=placed))
        if placed is not None:
            edits.append(placed[1])
        return tuple(edits)

    # --- kernels ---------------------------------------------------------------------
    def _kernel_of(self, nodes: list[ast.AST]) -> ast.FunctionDef:
        kernels = set()
        for node in nodes:
            function = self._outer_kernel(node)
            if function is None:
                owner = self._enclosing_function(node)
                name = owner.name if owner is not None else "module level"
                raise Unproven(
                    f"LDS is used in `{name}` (line {node.lineno}), not in a `@flyc.kernel`: "
                    "`fx.SharedAllocator` must be created inside the kernel"
                )
            kernels.add(function)
        if len(kernels) != 1:
            names = ", ".join(sorted(k.name for k in kernels))
            raise Unproven(f"the allocator is shared by several kernels ({names}): migrate them by hand")
        return kernels.pop()

    def _outer_kernel(self, node: ast.AST):
        kernels = [p for p in self._ancestors(node) if isinstance(p, _FUNCTIONS) and self._is_kernel(p)]
        return kernels[-1] if kernels else None

    def _enclosing_function(self, node: ast.AST):
        return next((p for p in self._ancestors(node) if isinstance(p, _FUNCTIONS)), None)

    def _is_traced(self, function) -> bool:
        """A @flyc.kernel or @flyc.jit function, or one nested in it."""
        return any(
            isinstance(node, _FUNCTIONS) and self._decorated(node, ("flyc.kernel", "flyc.jit"))
            for node in self._ancestors(function, inclusive=True)
        )

    def _is_kernel(self, function) -> bool:
        return self._decorated(function, KERNEL_DECORATORS)

    def _decorated(self, function, symbols) -> bool:
        """A decorator of ``function`` (called or not) resolves to one of ``symbols``."""
        return any(
            self.model.resolve(d.func if isinstance(d, ast.Call) else d) in symbols
            for d in function.decorator_list
        )

    # --- one buffer ------------------------------------------------------------------
    def _buffer(self, call: ast.Call, kernel, buffers: list[Buffer]):
        line = call.lineno
        if call.args and any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            raise Unproven(f"line {line}: `SmemPtr(*args)` cannot be read")
        offset_expr = call_argument(call, 1, "byte_offset")
        dtype_expr = call_argument(call, 2, "element_type")
        shape_expr = call_argument(call, 3, "shape")
        if offset_expr is None or dtype_expr is None:
            raise Unproven(f"line {line}: `SmemPtr(...)` without an offset or element type")
        offset, explicit = self._offset(offset_expr, line)
        dtype = self._dtype(dtype_expr)
        if dtype not in ELEMENT_BYTES:
            raise Unproven(
                f"line {line}: the element type `{ast.unparse(dtype_expr)}` has no fx class an "
                "`fx.Array` can hold (known: T.f16, T.bf16, T.f32, T.i8, T.i32, ...)"
            )
        if shape_expr is None or (isinstance(shape_expr, ast.Constant) and shape_expr.value is None):
            shape = [ast.Constant(1)]
            shape_text = None
        elif isinstance(shape_expr, (ast.Tuple, ast.List)) and shape_expr.elts and not any(isinstance(e, ast.Starred) for e in shape_expr.elts):
            shape = list(shape_expr.elts)
            shape_text = True
        else:
            raise Unproven(f"line {line}: the shape `{ast.unparse(shape_expr)}` is not a literal tuple")
        for element in shape:
            self._size(element, line)  # a static size
            if shape_text is not None:
                self._visible_before(element, kernel, line)
        name = self._field_name(call)
        view_of = self._view_text(shape, dtype)
        for existing in buffers:
            same_shape = [self._text(e) for e in existing.shape] == [self._text(e) for e in shape]
            if existing.offset == offset and existing.dtype == dtype and same_shape:
                existing.calls.append(call)
                return existing, self._field_view(existing, view_of)
        taken = {b.name for b in buffers}
        base, n = name, 2
        while name in taken:
            name, n = f"{base}_{n}", n + 1
        buffer = Buffer(name, offset, dtype, shape, explicit, [call])
        buffers.append(buffer)
        return buffer, self._field_view(buffer, view_of)

    def _dtype(self, expr: ast.expr) -> str | None:
        """fx class of an MLIR element type expression (`T.f32`, `ir.F16Type.get()`,
        `fx.Float32.ir_type`), following single assignments such as `bf16_ty = T.bf16`."""
        for _ in range(_MAX_DEPTH):
            if not isinstance(expr, ast.Name):
                break
            bindings = self.model.reaching_bindings(expr)
            if len(bindings) != 1 or bindings[0].value is None:
                return None
            expr = bindings[0].value
        found = fx_type_of_mlir_type(self.model, expr)
        if found:
            return found
        if isinstance(expr, ast.Attribute) and expr.attr == "ir_type":
            owner = self.model.resolve(expr.value) or ""
            if owner in ELEMENT_BYTES:
                return owner
        return None

    def _field_view(self, buffer: Buffer, layout: str) -> str:
        return f"\0LDS\0.{buffer.name}.view({layout})"

    def _view_text(self, shape: list[ast.expr], dtype: str) -> str:
        texts = [self._factor(e) for e in shape]
        if len(shape) == 1:
            return f"\0FX\0.make_layout({self._text(shape[0])}, 1)"
        strides = []
        for i in range(len(shape)):
            rest = texts[i + 1 :]
            strides.append(" * ".join(rest) if rest else "1")
        shape_t = ", ".join(self._text(e) for e in shape)
        return f"\0FX\0.make_layout(({shape_t}), ({', '.join(strides)}))"

    def _text(self, node: ast.expr) -> str:
        if isinstance(node, ast.Constant) and not hasattr(node, "lineno"):
            return repr(node.value)
        return self.model.index.slice(self.model.index.node_range(node))

    def _factor(self, node: ast.expr) -> str:
        text = self._text(node)
        atomic = isinstance(node, (ast.Name, ast.Constant, ast.Attribute, ast.Call, ast.Subscript))
        product = isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)
        return text if (atomic or product) and "\n" not in text else f"({text})"

    def _field_name(self, call: ast.Call) -> str:
        holder = self._parents.get(id(call))
        target = None
        if isinstance(holder, ast.Assign) and holder.value is call and self._single_name(holder):
            target = holder.targets[0].id
        elif isinstance(holder, ast.Attribute) and holder.attr == "get":
            get = self._parents.get(id(holder))
            stmt = self._parents.get(id(get))
            if isinstance(stmt, ast.Assign) and stmt.value is get and self._single_name(stmt):
                target = stmt.targets[0].id
        if target is None:
            return f"buf{call.lineno}"
        for prefix in ("smem_", "lds_"):
            rest = target[len(prefix):]
            if target.startswith(prefix) and rest.isidentifier() and not rest[0].isdigit():
                return rest
        return target

    def _visible_before(self, element: ast.expr, kernel, line: int) -> None:
        """Every name in a shape must be readable where the struct is declared."""
        kernel_scope = self.model.function_scope(kernel)
        for node in ast.walk(element):
            if not isinstance(node, ast.Name):
                continue
            binding = self.model.binding_of(node)
            if binding is None:
                if node.id in ("len", "int", "max", "min"):
                    continue
                raise Unproven(f"line {line}: the size `{node.id}` is not defined in this file")
            scope = binding.scope
            inner = scope
            while inner is not None and inner is not kernel_scope:
                inner = inner.parent
            if inner is kernel_scope:
                raise Unproven(
                    f"line {line}: the size `{node.id}` is bound inside the kernel; the `@fx.struct` "
                    "is declared before it, where it is not visible"
                )
            if scope.kind == "function" and binding.position >= (kernel.lineno, 0):
                raise Unproven(f"line {line}: the size `{node.id}` is bound after the kernel is defined")

    # --- uses of a SmemPtr --------------------------------------------------------------
    def _rewrite_uses(self, call, buffer, view, rewrites, deleted) -> None:
        holder = self._parents.get(id(call))
        rank = len(buffer.shape)
        if isinstance(holder, ast.Assign) and holder.value is call and self._single_name(holder):
            binding = self._binding_of_target(holder.targets[0], holder)
            if binding is None or len(binding.scope.bindings.get(binding.name, ())) != 1:
                raise Unproven(f"`{holder.targets[0].id}` (line {holder.lineno}) is bound more than once")
            owner = self._parents.get(id(holder))
            if isinstance(owner, _FUNCTIONS) and holder in owner.body:
                # Take the view once where the pointer was made (it dominates the rest of
                # the function) and use the name: a view expression rooted at `lds` inside a
                # runtime `if` makes FlyDSL's rewriter treat `lds` as branch state.
                rewrites[id(call)] = (call, view)
                view = holder.targets[0].id
            else:
                deleted.append(holder)
            for use in self.model.uses_of(binding):
                self._rewrite_pointer_use(use, view, rank, rewrites, deleted)
            return
        self._rewrite_pointer_use(call, view, rank, rewrites, deleted, inline=True)

    def _rewrite_pointer_use(self, ptr, view, rank, rewrites, deleted, inline=False) -> None:
        spelled = self._text(ptr) if not inline else "SmemPtr(...)"
        parent = self._parents.get(id(ptr))
        # SmemPtr.load(p, idx) / SmemPtr.store(p, v, idx): the unbound-method spelling.
        if isinstance(parent, ast.Call) and parent.args and parent.args[0] is ptr and isinstance(parent.func, ast.Attribute):
            if self.model.resolve(parent.func.value) == SMEM_PTR and parent.func.attr in ("load", "store", "get"):
                self._rewrite_method(parent, parent.func.attr, parent.args[1:], parent.keywords, view, rank, rewrites, deleted, spelled)
                return
        if isinstance(parent, ast.Attribute) and parent.value is ptr:
            call = self._parents.get(id(parent))
            if isinstance(call, ast.Call) and call.func is parent and parent.attr in ("get", "load", "store"):
                self._rewrite_method(call, parent.attr, call.args, call.keywords, view, rank, rewrites, deleted, spelled)
                return
            stmt = self._parents.get(id(parent))
            if parent.attr == "_view_cache" and isinstance(stmt, ast.Assign) and parent in stmt.targets:
                deleted.append(stmt)
                return
            raise Unproven(f"line {ptr.lineno}: `{spelled}.{parent.attr}` cannot be mapped to a layout view")
        raise Unproven(f"the pointer `{spelled}` escapes at line {ptr.lineno} (passed on or stored)")

    def _rewrite_method(self, call, method, args, keywords, view, rank, rewrites, deleted, spelled) -> None:
        line = call.lineno
        if method == "get":
            if args or keywords:
                raise Unproven(f"line {line}: `.get()` with arguments")
            stmt = self._parents.get(id(call))
            if isinstance(stmt, ast.Expr) and stmt.value is call:
                deleted.append(stmt)  # only primed the view cache
                return
            rewrites[id(call)] = (call, view)
            if isinstance(stmt, ast.Assign) and stmt.value is call and self._single_name(stmt):
                binding = self._binding_of_target(stmt.targets[0], stmt)
                if binding is None or len(binding.scope.bindings.get(binding.name, ())) != 1:
                    raise Unproven(f"`{stmt.targets[0].id}` (line {line}) is bound more than once")
                for use in self.model.uses_of(binding):
                    self._rewrite_memref_use(use, self._text(use), rank, rewrites)
                return
            self._rewrite_memref_use(call, view, rank, rewrites, rewrite_self=False)
            return
        if keywords and any(k.arg not in ("idxs", "val") for k in keywords):
            raise Unproven(f"line {line}: `.{method}(...)` keywords cannot be mapped")
        kw = {k.arg: k.value for k in keywords}
        if method == "load":
            idxs = args[0] if args else kw.get("idxs")
            rewrites[id(call)] = (call, f"{view}[{self._coord(idxs, rank, line)}]")
            return
        value = args[0] if args else kw.get("val")
        idxs = args[1] if len(args) > 1 else kw.get("idxs")
        stmt = self._parents.get(id(call))
        if value is None or not (isinstance(stmt, ast.Expr) and stmt.value is call):
            raise Unproven(f"line {line}: the result of `.store(...)` is used")
        rewrites[id(call)] = (call, self._store_text(value, view, self._coord(idxs, rank, line), rank))

    def _rewrite_memref_use(self, use, view, rank, rewrites, rewrite_self=True) -> None:
        """A builtin memref from `.get()`: only `memref.load/store` on it can be mapped."""
        call = self._parents.get(id(use))
        line = use.lineno
        if isinstance(call, ast.Call) and not call.keywords:
            symbol = self.model.resolve(call.func)
            if symbol in RAW_MEMREF_LOAD and len(call.args) == 2 and call.args[0] is use:
                rewrites[id(call)] = (call, f"{view}[{self._coord(call.args[1], rank, line)}]")
                return
            if symbol in RAW_MEMREF_STORE and len(call.args) == 3 and call.args[1] is use:
                stmt = self._parents.get(id(call))
                if isinstance(stmt, ast.Expr) and stmt.value is call:
                    coord = self._coord(call.args[2], rank, line)
                    rewrites[id(call)] = (call, self._store_text(call.args[0], view, coord, rank))
                    return
        what = ast.unparse(call.func) if isinstance(call, ast.Call) else type(call).__name__
        raise Unproven(
            f"line {line}: the memref from `.get()` is used by `{what}`; a layout view is not a "
            "builtin memref (only `memref.load`/`memref.store` on it can be mapped)"
        )

    def _store_text(self, value: ast.expr, view: str, coord: str, rank: int) -> str:
        # A call, not `view[i] = v`: FlyDSL's AST rewriter treats a subscript assignment
        # inside a runtime `if` as assigning the view's root name (`lds`), which breaks the
        # branch (measured on FlyDSL 0.5.0 with FlyDSL's own tests/kernels/test_quant.py).
        indices = coord if rank == 1 else f"({coord})"
        return f"\0FX\0.memref_store({self._text(value)}, {view}, {indices})"

    def _coord(self, idxs, rank: int, line: int) -> str:
        if idxs is None:
            return ", ".join("0" for _ in range(rank))
        if not isinstance(idxs, (ast.List, ast.Tuple)) or any(isinstance(e, ast.Starred) for e in idxs.elts):
            raise Unproven(f"line {line}: the index list `{ast.unparse(idxs)}` is not a literal list")
        if len(idxs.elts) != rank:
            raise Unproven(f"line {line}: {len(idxs.elts)} indices for a rank-{rank} buffer")
        return ", ".join(self._text(e) for e in idxs.elts)

    # --- offsets -----------------------------------------------------------------------
    def _offset(self, expr: ast.expr, line: int) -> tuple[Poly, int | None]:
        explicit = None
        target = expr
        for _ in range(_MAX_DEPTH):
            if isinstance(target, ast.Name):
                bindings = self.model.reaching_bindings(target)
                if len(bindings) == 1 and bindings[0].value is not None:
                    target = bindings[0].value
                    continue
            break
        if isinstance(target, ast.Call) and self._is_align_call(target):
            explicit = self._static_int(target.args[1], line)
        return self._value(expr, line, 0), explicit

    def _is_align_call(self, call: ast.Call) -> bool:
        func = call.func
        return (
            isinstance(func, ast.Attribute)
            and func.attr == "_align"
            and self._is_allocator(func.value, self._group)
            and len(call.args) == 2
            and not call.keywords
        )

    def _static_int(self, expr: ast.expr, line: int) -> int:
        value = self._value(expr, line, 0).constant
        if value is None:
            raise Unproven(f"line {line}: `{ast.unparse(expr)}` is not a constant")
        return value

    def _size(self, expr: ast.expr, line: int) -> Poly:
        return self._value(expr, line, 0)

    def _value(self, expr: ast.expr, line: int, depth: int) -> Poly:
        if depth > _MAX_DEPTH:
            raise Unproven(f"line {line}: `{ast.unparse(expr)}` is too deep to evaluate")
        if isinstance(expr, ast.Constant) and type(expr.value) is int:
            return Poly.const(expr.value)
        if isinstance(expr, ast.Name):
            bindings = self.model.reaching_bindings(expr)
            if len(bindings) == 1 and bindings[0].kind in ("assign", "annassign") and bindings[0].value is not None:
                return self._value(bindings[0].value, line, depth + 1)
            if len(bindings) == 1 and bindings[0].kind == "param":
                function = bindings[0].scope.node
                if self._is_traced(function):
                    raise Unproven(
                        f"line {line}: `{expr.id}` is a parameter of the traced function "
                        f"`{function.name}`, a run-time value: the offset is computed at run time"
                    )
                return Poly.symbol(f"{expr.id}@{bindings[0].position}")
            if not bindings and self.model.binding_of(expr) is None:
                raise Unproven(f"line {line}: `{expr.id}` is not defined in this file")
            raise Unproven(f"line {line}: `{expr.id}` changes or is computed; the offset is not static")
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.attr == "ptr" and self._is_allocator(expr.value, self._group):
            return self._ptr_at(expr, line, depth)
        if isinstance(expr, ast.BinOp):
            left = self._value(expr.left, line, depth + 1)
            right = self._value(expr.right, line, depth + 1)
            if isinstance(expr.op, ast.Add):
                return left + right
            if isinstance(expr.op, ast.Sub):
                return left - right
            if isinstance(expr.op, ast.Mult):
                return left * right
            if isinstance(expr.op, ast.FloorDiv) and right.constant:
                if left.divisible_by(right.constant):
                    return left.divided(right.constant)
                if left.constant is not None:
                    return Poly.const(left.constant // right.constant)
                if left.nonnegative() and right.constant > 0:
                    return Poly.symbol(f"floordiv@{expr.lineno}:{expr.col_offset}")
        if isinstance(expr, ast.Call) and not expr.keywords:
            if self._is_align_call(expr):
                value = self._value(expr.args[0], line, depth + 1)
                align = self._static_int(expr.args[1], line)
                if align <= 0:
                    raise Unproven(f"line {line}: alignment {align}")
                if value.constant is not None:
                    return Poly.const(-(-value.constant // align) * align)
                if value.divisible_by(align):
                    return value
                # align_up(value, A) = A * t with A * t >= value: a fresh symbol t.
                name = f"align@{expr.lineno}:{expr.col_offset}"
                self._aligned[name] = (value, align)
                return Poly({(name,): align})
            if isinstance(expr.func, ast.Name) and self.model.binding_of(expr.func) is None:
                args = [self._value(a, line, depth + 1) for a in expr.args]
                if expr.func.id == "int" and len(args) == 1:
                    return args[0]
                consts = [a.constant for a in args]
                if expr.func.id in ("max", "min") and args and None not in consts:
                    return Poly.const(max(consts) if expr.func.id == "max" else min(consts))
        raise Unproven(f"line {line}: `{ast.unparse(expr)}` is computed; the offset is not static")

    def _ptr_at(self, read: ast.Attribute, line: int, depth: int) -> Poly:
        """The allocator's bump pointer as seen by ``read``: statements of the allocator's
        block before it (all of them, when read from a nested function)."""
        stmt = self._statement(read)
        body = self._alloc_body
        position = stmt.lineno if stmt is not None and self._body_of(stmt) is body else None
        value = Poly.const(0)
        alloc_index = next(i for i, s in enumerate(body) if s is self._alloc_stmt)
        for current in body[alloc_index + 1 :]:
            if position is not None and current.lineno >= position:
                break
            for node in ast.walk(current):
                if isinstance(node, ast.Attribute) and node.attr == "ptr" and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) and self._is_allocator(node.value, self._group):
                    if node is getattr(current, "target", None) or (isinstance(current, ast.Assign) and node in current.targets):
                        break
                    raise Unproven(f"`{node.value.id}.ptr` changes inside control flow (line {node.lineno})")
            else:
                continue
            if isinstance(current, ast.AugAssign) and isinstance(current.op, ast.Add):
                value = value + self._value(current.value, line, depth + 1)
            elif isinstance(current, ast.Assign):
                value = self._value(current.value, line, depth + 1)
            else:
                raise Unproven(f"line {current.lineno}: the allocator's pointer changes in a way that cannot be followed")
        return value

    # --- ordering and the struct ----------------------------------------------------------
    def _nonnegative(self, poly: Poly, depth: int = 0) -> bool:
        """Provably >= 0, with every size symbol >= 0 and ``A * t >= value`` for each
        ``align_up(value, A)`` symbol ``t`` (used as a lower bound where it is added)."""
        if poly.nonnegative():
            return True
        if depth > _MAX_DEPTH:
            return False
        for key, coef in poly.terms.items():
            if len(key) == 1 and key[0] in self._aligned and coef > 0:
                value, align = self._aligned[key[0]]
                if coef % align == 0:
                    rest = Poly({k: v for k, v in poly.terms.items() if k != key})
                    return self._nonnegative(rest + value * Poly.const(coef // align), depth + 1)
        return False

    def _order(self, buffers: list[Buffer]) -> list[tuple[Buffer, int | None]]:
        def before(a: Buffer, b: Buffer) -> bool:
            diff = b.offset - a.offset
            if self._nonnegative(diff):
                return True
            if self._nonnegative(-diff):
                return False
            raise Unproven(f"the offsets of `{a.name}` and `{b.name}` cannot be ordered statically")

        ordered: list[Buffer] = []
        for buffer in buffers:
            index = len(ordered)
            while index > 0 and not before(ordered[index - 1], buffer):
                index -= 1
            ordered.insert(index, buffer)
        result = []
        end = Poly.const(0)
        for index, buffer in enumerate(ordered):
            size = Poly.const(buffer.elem_bytes)
            for element in buffer.shape:
                size = size * self._size(element, element.lineno if hasattr(element, "lineno") else 0)
            gap = buffer.offset - end
            if index and not self._nonnegative(gap):
                prev = ordered[index - 1]
                raise Unproven(
                    f"`{prev.name}` and `{buffer.name}` overlap in LDS (aliasing buffers need an "
                    "`fx.union` chosen by hand)"
                )
            align = buffer.explicit_align
            if align is None and gap.terms:
                align = min(buffer.offset.alignment(), BASE_ALIGNMENT)
            if align is not None and align <= buffer.elem_bytes:
                align = None
            result.append((buffer, align))
            end = buffer.offset + size
        return result

    def _struct_name(self, group: Group, multiple: bool) -> str:
        if not multiple:
            return "SharedStorage"
        parts = [p for p in group.binding.name.split("_") if p]
        return "".join(p[:1].upper() + p[1:] for p in parts) + "Storage"

    def _fresh(self, kernel, name: str) -> str:
        scope = self._scope_at(kernel)
        taken = set(scope.bindings) | set(self.model.module_scope.bindings)
        base, n = name, 2
        while name in taken:
            name, n = f"{base}{n}", n + 1
        return name

    def _fresh_in_kernel(self, kernel, name: str) -> str:
        taken = set()
        for node in ast.walk(kernel):
            if isinstance(node, ast.Name):
                taken.add(node.id)
            elif isinstance(node, ast.arg):
                taken.add(node.arg)
        base, n = name, 2
        while name in taken:
            name, n = f"{base}{n}", n + 1
        return name

    def _struct_edit(self, kernel, name: str, ordered, fx: str) -> Edit:
        first = min([kernel.lineno, *(d.lineno for d in kernel.decorator_list)])
        indent = self._indent(first)
        lines = [f"{indent}@{fx}.struct", f"{indent}class {name}:"]
        for buffer, align in ordered:
            size = " * ".join(self._factor(e) for e in buffer.shape) if len(buffer.shape) > 1 else self._text(buffer.shape[0])
            dtype = buffer.dtype.replace("fx.", f"{fx}.", 1)
            extra = f", {align}" if align else ""
            lines.append(f"{indent}    {buffer.name}: {fx}.Array[{dtype}, {size}{extra}]")
        blank = "\n\n" if not indent else "\n"
        text = "\n".join(lines) + "\n" + blank
        start = Position(first - 1, 0)
        return Edit(Range(start, start), text)

    def _indent(self, lineno: int) -> str:
        line = self.model.index.line_text(lineno - 1)
        return line[: len(line) - len(line.lstrip())]

    def _lds_edit(self, kernel, base_stmts, uses, lds, fx, struct, deleted):
        """(statement replaced or None, edit) placing the allocation at the kernel's top
        level, before the first statement that touches LDS."""
        firsts = []
        for node in uses:
            top = node
            while self._parents.get(id(top)) is not kernel:
                top = self._parents.get(id(top))
            firsts.append(top)
        anchor = min(firsts, key=lambda s: (s.lineno, s.col_offset))
        text = f"{lds} = {fx}.SharedAllocator().allocate({struct}).peek()"
        indent = self._indent(anchor.lineno)
        if anchor in base_stmts and self._line_alone(anchor):
            return anchor, Edit(self._line_range(anchor), f"{indent}{text}\n")
        if anchor in base_stmts:
            return anchor, Edit(self.ctx.range(anchor), text)
        if not self.model.index.line_text(anchor.lineno - 1)[: anchor.col_offset].strip() == "":
            raise Unproven(f"line {anchor.lineno}: the kernel's first LDS statement shares its line")
        start = Position(anchor.lineno - 1, 0)
        return None, Edit(Range(start, start), f"{indent}{text}\n")

    # --- deleting statements -------------------------------------------------------------
    def _with_dead_contexts(self, deleted: list[ast.stmt]) -> list[ast.stmt]:
        changed = True
        while changed:
            changed = False
            for node in ast.walk(self.model.tree):
                for body in self._bodies(node):
                    if not body or all(self._inside_any(s, deleted) for s in body):
                        if isinstance(node, ast.With) and node not in deleted and body is node.body:
                            deleted.append(node)
                            changed = True
            for node in ast.walk(self.model.tree):
                if isinstance(node, ast.Assign) and node not in deleted and self._single_name(node):
                    if isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "get_current":
                        binding = self._binding_of_target(node.targets[0], node)
                        uses = self.model.uses_of(binding) if binding else []
                        if binding and uses and all(self._inside_any(u, deleted) for u in uses):
                            deleted.append(node)
                            changed = True
        return deleted

    def _deletions(self, deleted: list[ast.stmt], skip) -> list[Edit]:
        replaced = skip[0] if skip else None
        unique = list(dict.fromkeys(deleted))
        outermost = [s for s in unique if not self._inside_any(self._parents.get(id(s)), unique)]
        edits = []
        spans: list[list[int]] = []  # whole lines to delete: [first, last + 1), 0-based
        for node in ast.walk(self.model.tree):
            for body in self._bodies(node):
                gone = [s for s in body if s in outermost]
                if not gone:
                    continue
                empty = len(gone) == len(body) and not isinstance(node, ast.Module) and replaced not in body
                for index, stmt in enumerate(gone):
                    if stmt is replaced:
                        continue
                    alone = self._line_alone(stmt)
                    if empty and index == 0:
                        if alone:
                            edits.append(Edit(self._line_range(stmt), f"{self._indent(stmt.lineno)}pass\n"))
                        else:
                            edits.append(Edit(self.ctx.range(stmt), "pass"))
                    elif alone:
                        spans.append([stmt.lineno - 1, stmt.end_lineno])
                    else:
                        edits.append(Edit(self.ctx.range(stmt), "pass"))
        merged: list[list[int]] = []
        for span in sorted(spans):
            if merged and span[0] <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], span[1])
            else:
                merged.append(span)
        lines = self.model.index.lines
        blank = lambda i: 0 <= i < len(lines) and lines[i].strip() == ""
        for first, end in merged:
            if blank(first - 1) and (blank(end) or end >= len(lines) - 1):
                while blank(first - 1):
                    first -= 1
            elif first > 0 and lines[first - 1].rstrip().endswith(":") and blank(end):
                while blank(end) and end < len(lines) - 1:  # no blank first line in a body
                    end += 1
            if end < len(lines) - 1 or lines[-1] == "":
                edits.append(Edit(Range(Position(first, 0), Position(end, 0)), ""))
            else:
                last = end - 1
                edits.append(Edit(Range(Position(first, 0), Position(last, len(self.model.index.line_text(last)))), ""))
        return edits

    def _line_alone(self, stmt: ast.stmt) -> bool:
        index = self.model.index
        before = index.line_text(stmt.lineno - 1)[: stmt.col_offset]
        after_line = index.line_text(stmt.end_lineno - 1)
        end = self.ctx.range(stmt).end.column
        after = after_line[end:].strip()
        return before.strip() == "" and (after == "" or after.startswith("#"))

    def _line_range(self, stmt: ast.stmt) -> Range:
        start = Position(stmt.lineno - 1, 0)
        if stmt.end_lineno < len(self.model.index.lines):
            return Range(start, Position(stmt.end_lineno, 0))
        return Range(start, self.ctx.range(stmt).end)

    @staticmethod
    def _bodies(node):
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                yield body

    # --- small helpers ----------------------------------------------------------------
    def _ancestors(self, node, inclusive: bool = False):
        """The nodes around ``node``, innermost first (``node`` itself first when ``inclusive``)."""
        if not inclusive:
            node = self._parents.get(id(node))
        while node is not None:
            yield node
            node = self._parents.get(id(node))

    def _statement(self, node: ast.AST) -> ast.stmt | None:
        return next((n for n in self._ancestors(node, inclusive=True) if isinstance(n, ast.stmt)), None)

    def _body_of(self, stmt: ast.stmt):
        parent = self._parents.get(id(stmt))
        if parent is None:
            return None
        for body in self._bodies(parent):
            if any(s is stmt for s in body):
                return body
        return None

    def _within(self, node, ancestor) -> bool:
        return any(p is ancestor for p in self._ancestors(node))

    def _inside_any(self, node, statements) -> bool:
        ids = {id(s) for s in statements}
        return any(id(n) in ids for n in self._ancestors(node, inclusive=True))

    def _is_offset_arg(self, use: ast.Name, ptr_calls) -> bool:
        parent = self._parents.get(id(use))
        if isinstance(parent, ast.keyword) and parent.arg == "byte_offset":
            parent = self._parents.get(id(parent))
            return parent in ptr_calls
        return parent in ptr_calls and call_argument(parent, 1, "byte_offset") is use

    @staticmethod
    def _single_name(stmt: ast.Assign) -> bool:
        return len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)

    def _binding_of_target(self, target: ast.Name, stmt: ast.stmt):
        scope = self._scope_at(stmt)
        for binding in (scope.bindings.get(target.id, ()) if scope else ()):
            if binding.node is stmt or binding.node is target:
                return binding
        return None

    def _bindings_of_stmt(self, stmt):
        scope = self._scope_at(stmt)
        for bindings in scope.bindings.values():
            for binding in bindings:
                if binding.node is stmt or binding.node in getattr(stmt, "targets", ()):
                    yield binding

    VALID = [
        Valid(
            "import flydsl.compiler as flyc\nimport flydsl.expr as fx\n\n"
            "@fx.struct\nclass SharedStorage:\n    red: fx.Array[fx.Float32, 4, 16]\n\n"
            "@flyc.kernel\ndef k(x: fx.Tensor):\n"
            "    lds = fx.SharedAllocator().allocate(SharedStorage).peek()\n"
            "    lds.red.view(fx.make_layout(4, 1))[0] = x[0]\n"
        ),
        Valid(
            # A generic finalize() is not a SmemAllocator's.
            "class Builder:\n    def finalize(self):\n        return 1\n\nallocator = Builder()\nallocator.finalize()\n"
        ),
        Valid(
            "from flydsl.utils.smem_allocator import SMEM_CAPACITY_MAP, check_smem_capacity\n"
            "# allocator = SmemAllocator(None) and SmemPtr(base, 0, T.f32) in a comment\n"
            'doc = "allocator.finalize() emits the global"\n'
            'check_smem_capacity(4096, "gfx942")\n'
        ),
    ]
    INVALID = [
        Invalid(
            # Module-level allocator, two buffers (explicit 16-byte alignment kept), finalize in the launcher.
            'import flydsl.compiler as flyc\n'
            'import flydsl.expr as fx\n'
            'from flydsl.expr.typing import T\n'
            'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
            '\n'
            'TILE = 16\n'
            'allocator = SmemAllocator(None, arch="gfx942")\n'
            'a_off = allocator._align(allocator.ptr, 16)\n'
            'allocator.ptr = a_off + TILE * TILE * 4\n'
            'b_off = allocator._align(allocator.ptr, 16)\n'
            'allocator.ptr = b_off + TILE * 2\n'
            '\n'
            '\n'
            '@flyc.kernel\n'
            'def k(A: fx.Tensor, B: fx.Tensor):\n'
            '    tid = fx.thread_idx.x\n'
            '    base = allocator.get_base()\n'
            '    smem_a = SmemPtr(base, a_off, T.f32, shape=(TILE, TILE))\n'
            '    smem_b = SmemPtr(base, b_off, T.f16, shape=(TILE,))\n'
            '    smem_a.store(A[tid, 0], [tid, 0])\n'
            '    fx.gpu.barrier()\n'
            '    B[tid] = smem_a.load([0, tid]) + smem_b.load([tid])\n'
            '\n'
            '\n'
            '@flyc.jit\n'
            'def launch(A: fx.Tensor, B: fx.Tensor):\n'
            '    allocator.finalize()\n'
            '    k(A, B).launch(grid=(1, 1, 1), block=(TILE, 1, 1))\n',
            expected='import flydsl.compiler as flyc\n'
            'import flydsl.expr as fx\n'
            '\n'
            'TILE = 16\n'
            '\n'
            '\n'
            '@fx.struct\n'
            'class SharedStorage:\n'
            '    a: fx.Array[fx.Float32, TILE * TILE, 16]\n'
            '    b: fx.Array[fx.Float16, TILE, 16]\n'
            '\n'
            '\n'
            '@flyc.kernel\n'
            'def k(A: fx.Tensor, B: fx.Tensor):\n'
            '    tid = fx.thread_idx.x\n'
            '    lds = fx.SharedAllocator().allocate(SharedStorage).peek()\n'
            '    smem_a = lds.a.view(fx.make_layout((TILE, TILE), (TILE, 1)))\n'
            '    smem_b = lds.b.view(fx.make_layout(TILE, 1))\n'
            '    fx.memref_store(A[tid, 0], smem_a, (tid, 0))\n'
            '    fx.gpu.barrier()\n'
            '    B[tid] = smem_a[0, tid] + smem_b[tid]\n'
            '\n'
            '\n'
            '@flyc.jit\n'
            'def launch(A: fx.Tensor, B: fx.Tensor):\n'
            '    k(A, B).launch(grid=(1, 1, 1), block=(TILE, 1, 1))\n',
            unsafe=True,
            line=7,
            column=13,
            count=4,
        ),
        Invalid(
            # Builder function: sizes known only at build time, get_base() inline, unbound-method store, cache priming, finalize under an InsertionPoint.
            'import flydsl.compiler as flyc\n'
            'import flydsl.expr as fx\n'
            'from flydsl._mlir import ir\n'
            'from flydsl.compiler.kernel_function import CompilationContext\n'
            'from flydsl.expr.typing import T\n'
            'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
            '\n'
            '\n'
            'def build(n):\n'
            '    slots = n // 64\n'
            '    allocator = SmemAllocator(None, arch="gfx942")\n'
            '    red_offset = allocator._align(allocator.ptr, 16)\n'
            '    allocator.ptr = red_offset + slots * 4\n'
            '\n'
            '    @flyc.kernel\n'
            '    def k(X: fx.Tensor):\n'
            '        s_red = SmemPtr(allocator.get_base(), red_offset, T.f32, shape=(slots,))\n'
            '        s_red.get()\n'
            '        SmemPtr.store(s_red, X[0], [0])\n'
            '\n'
            '    @flyc.jit\n'
            '    def launch(X: fx.Tensor):\n'
            '        allocator.finalized = False\n'
            '        ctx = CompilationContext.get_current()\n'
            '        with ir.InsertionPoint(ctx.gpu_module_body):\n'
            '            allocator.finalize()\n'
            '        k(X).launch(grid=(1, 1, 1), block=(n, 1, 1))\n'
            '\n'
            '    return launch\n',
            expected='import flydsl.compiler as flyc\n'
            'import flydsl.expr as fx\n'
            '\n'
            '\n'
            'def build(n):\n'
            '    slots = n // 64\n'
            '\n'
            '    @fx.struct\n'
            '    class SharedStorage:\n'
            '        s_red: fx.Array[fx.Float32, slots, 16]\n'
            '\n'
            '    @flyc.kernel\n'
            '    def k(X: fx.Tensor):\n'
            '        lds = fx.SharedAllocator().allocate(SharedStorage).peek()\n'
            '        s_red = lds.s_red.view(fx.make_layout(slots, 1))\n'
            '        fx.memref_store(X[0], s_red, 0)\n'
            '\n'
            '    @flyc.jit\n'
            '    def launch(X: fx.Tensor):\n'
            '        k(X).launch(grid=(1, 1, 1), block=(n, 1, 1))\n'
            '\n'
            '    return launch\n',
            unsafe=True,
            line=11,
            column=17,
            count=3,
        ),
        Invalid(
            # A `.get()` memref used by raw memref.load/store: the view is indexed instead.
            'import flydsl.compiler as flyc\n'
            'import flydsl.expr as fx\n'
            'from flydsl._mlir.dialects import memref\n'
            'from flydsl.expr.typing import T\n'
            'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
            '\n'
            'alloc = SmemAllocator(None, arch="gfx942")\n'
            'alloc.ptr = 64 * 4\n'
            '\n'
            '\n'
            '@flyc.kernel\n'
            'def k(X: fx.Tensor, i: fx.Int32):\n'
            '    lds_vals = SmemPtr(alloc.get_base(), 0, T.f32, shape=(64,)).get()\n'
            '    memref.store(X[i], lds_vals, [i])\n'
            '    X[i] = memref.load(lds_vals, [63 - i])\n',
            expected='import flydsl.compiler as flyc\n'
            'import flydsl.expr as fx\n'
            '\n'
            '\n'
            '@fx.struct\n'
            'class SharedStorage:\n'
            '    vals: fx.Array[fx.Float32, 64]\n'
            '\n'
            '\n'
            '@flyc.kernel\n'
            'def k(X: fx.Tensor, i: fx.Int32):\n'
            '    lds = fx.SharedAllocator().allocate(SharedStorage).peek()\n'
            '    lds_vals = lds.vals.view(fx.make_layout(64, 1))\n'
            '    fx.memref_store(X[i], lds_vals, i)\n'
            '    X[i] = lds_vals[63 - i]\n',
            unsafe=True,
            line=7,
            column=9,
            count=2,
        ),
        Invalid(
            # Aliased import; two buffers overlap: no fix.
            'import flydsl.compiler as flyc\n'
            'import flydsl.expr as fx\n'
            'from flydsl.expr.typing import T\n'
            'from flydsl.utils.smem_allocator import SmemAllocator as LegacyAlloc, SmemPtr\n'
            '\n'
            'alloc = LegacyAlloc(None, arch="gfx942")\n'
            'alloc.ptr = 2048\n'
            '\n'
            '\n'
            '@flyc.kernel\n'
            'def k(X: fx.Tensor, off: fx.Int32):\n'
            '    base = alloc.get_base()\n'
            '    a = SmemPtr(base, 0, T.f32, shape=(256,))\n'
            '    b = SmemPtr(base, 512, T.f32, shape=(256,))\n'
            '    b.store(a.load([0]), [1])\n',
            expected=None,
            line=6,
            column=9,
            count=3,
            message='overlap',
        ),
        Invalid(
            # The SmemPtr is passed to a helper: no fix.
            'import flydsl.compiler as flyc\n'
            'import flydsl.expr as fx\n'
            'from flydsl.expr.typing import T\n'
            'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
            '\n'
            'alloc = SmemAllocator(None, arch="gfx942")\n'
            'alloc.ptr = 1024\n'
            '\n'
            '\n'
            'def stage(ptr, v):\n'
            '    ptr.store(v, [0])\n'
            '\n'
            '\n'
            '@flyc.kernel\n'
            'def k(X: fx.Tensor):\n'
            '    s = SmemPtr(alloc.get_base(), 0, T.f32, shape=(256,))\n'
            '    stage(s, X[0])\n',
            expected=None,
            line=6,
            column=9,
            count=2,
            message='escapes',
        ),
        Invalid(
            # The offset is a kernel argument: no fix.
            'import flydsl.compiler as flyc\n'
            'import flydsl.expr as fx\n'
            'from flydsl.expr.typing import T\n'
            'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
            '\n'
            'alloc = SmemAllocator(None, arch="gfx942")\n'
            'alloc.ptr = 1024\n'
            '\n'
            '\n'
            '@flyc.kernel\n'
            'def k(X: fx.Tensor, n: fx.Int32):\n'
            '    base = alloc.get_base()\n'
            '    s = SmemPtr(base, n * 4, T.f32, shape=(16,))\n'
            '    s.store(X[0], [0])\n',
            expected=None,
            line=6,
            column=9,
            count=2,
            message='run time',
        ),
        Invalid(
            # get_base() escapes to a helper (raw LDS address arithmetic): no fix.
            'from flydsl._mlir.dialects import vector\n'
            'import flydsl.compiler as flyc\n'
            'import flydsl.expr as fx\n'
            'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
            '\n'
            'alloc = SmemAllocator(None, arch="gfx942")\n'
            'alloc.ptr = 1024\n'
            '\n'
            '\n'
            'def lds_addr(base):\n'
            '    return base\n'
            '\n'
            '\n'
            '@flyc.kernel\n'
            'def k(X: fx.Tensor, v, i, ty):\n'
            '    addr = lds_addr(alloc.get_base())\n'
            '    view = SmemPtr(alloc.get_base(), 0, ty, shape=(16,)).get()\n'
            '    vector.store(v, view, [i])\n',
            expected=None,
            line=6,
            column=9,
            count=2,
            message='base pointer `alloc.get_base()` escapes',
        ),
        Invalid(
            # The memref from .get() feeds a raw vector.store: no fix.
            'import flydsl.compiler as flyc\n'
            'import flydsl.expr as fx\n'
            'from flydsl._mlir.dialects import vector\n'
            'from flydsl.expr.typing import T\n'
            'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
            '\n'
            'alloc = SmemAllocator(None, arch="gfx942")\n'
            'alloc.ptr = 1024\n'
            '\n'
            '\n'
            '@flyc.kernel\n'
            'def k(X: fx.Tensor, v, i):\n'
            '    base = alloc.get_base()\n'
            '    s = SmemPtr(base, 64, T.f32, shape=(16,))\n'
            '    view = s.get()\n'
            '    vector.store(v, view, [i])\n',
            expected=None,
            line=7,
            column=9,
            count=2,
            message='not a builtin memref',
        ),
        Invalid(
            # An index-typed buffer has no fx.Array element class: no fix.
            'import flydsl.compiler as flyc\n'
            'import flydsl.expr as fx\n'
            'from flydsl.expr.typing import T\n'
            'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
            '\n'
            'alloc = SmemAllocator(None, arch="gfx942")\n'
            'alloc.ptr = 1024\n'
            '\n'
            '\n'
            '@flyc.kernel\n'
            'def k(X: fx.Tensor):\n'
            '    idx = SmemPtr(alloc.get_base(), 0, T.index, shape=(4,))\n'
            '    idx.store(X[0], [0])\n',
            expected=None,
            line=6,
            column=9,
            count=2,
            message='has no fx class',
        ),
        Invalid(
            # A SmemPtr whose base is a parameter; a generic .finalize() is not flagged.
            'from flydsl.utils.smem_allocator import SmemPtr\n'
            '\n'
            '\n'
            'def helper(base, T):\n'
            '    return SmemPtr(base, 0, T.f32, shape=(4,)).get()\n'
            '\n'
            '\n'
            'class Builder:\n'
            '    def finalize(self):\n'
            '        return 1\n'
            '\n'
            '\n'
            'b = Builder()\n'
            'b.finalize()\n',
            expected=None,
            line=5,
            column=12,
            count=1,
            message='does not come from',
        ),
    ]
