"""An allocator whose offsets are not static (padding under an `if`, sizes chosen by a
condition, a base also viewed raw): migrated as one byte array per allocator that keeps
the old layout. Its bookkeeping stays, as the integer arithmetic it is (`allocator.ptr`
becomes a local, `allocator._align(x, a)` rounds up), and sizes the array the way
`finalize()` sized the global (rounded up to 128 bytes, at least 128, 1024-aligned), so
LDS neither grows nor shrinks and every buffer keeps its byte offset. Each view becomes a
typed pointer at that offset (`fx.recast_iter(fx.T, lds.pong.ptr + off)`), the way
FlyDSL's maintainers reach a shared byte region (`region: fx.Array[fx.Int8, n, 16]` and
`fx.recast_iter`, their MoE port). Mixed into the planner."""

import ast

from flydsl_ls.analysis.rules.base import call_argument
from flydsl_ls.analysis.rules.fly203.foreign import ForeignHelpers
from flydsl_ls.analysis.rules.fly203.model import (
    BASE_ALIGNMENT,
    ELEMENT_BYTES,
    FUNCTIONS,
    MAX_DEPTH,
    RAW_MEMREF_VIEW,
    SMEM_PTR,
    Buffer,
    Group,
    Spelled,
    Unproven,
)
from flydsl_ls.analysis.rules.fly203.offsets import Poly

# Functions returning a one-byte MLIR element type chosen by arch (aiter's fp8): the pointer
# is typed from the value at trace time, `fx.Numeric.from_ir_type(t)`.
BYTE_TYPE_FUNCTIONS = ("default_f8_type",)
FINALIZE_ROUNDING = 128  # finalize() rounds the allocator's size up to this (and to at least it)


class RegionPlan:
    def survey_region(self, group: Group) -> None:
        """The allocator's uses, for a migration that keeps its layout (see the module)."""
        alloc = group.binding
        if alloc is None:
            raise Unproven("the allocator is not assigned to a plain name")
        self._enter(group)
        group.deleted = [self._alloc_stmt]
        group.base_stmts, group.kernel_uses, group.region_ptrs, group.region_aligns, group.region_views = [], [], [], [], []
        self._foreign_consumers(group)
        home = self._enclosing_function(self._alloc_stmt)
        for use in self.model.uses_of(alloc):
            parent = self._parents.get(id(use))
            stmt = self._statement(use)
            attr = parent.attr if isinstance(parent, ast.Attribute) and parent.value is use else None
            call = self._parents.get(id(parent)) if attr else None
            called = isinstance(call, ast.Call) and call.func is parent
            if attr in ("ptr", "_align"):
                if self._enclosing_function(use) is not home:
                    raise Unproven(
                        f"line {use.lineno}: `{alloc.name}.{attr}` is used in another function than the "
                        "allocator's: its bookkeeping cannot become a local there"
                    )
                if attr == "ptr":
                    group.region_ptrs.append(parent)
                elif called and len(call.args) == 2 and not call.keywords:
                    group.region_aligns.append(call)
                else:
                    raise Unproven(f"line {use.lineno}: `{alloc.name}._align` is used other than as `_align(x, a)`")
            elif attr == "get_base" and called and not call.args:
                self._survey_region_base(group, call)
                group.kernel_uses.append(call)
            elif (
                (attr == "finalize" and called and isinstance(stmt, ast.Expr) and stmt.value is call)
                or (attr == "finalized" and isinstance(stmt, ast.Assign) and parent in stmt.targets)
                or (attr is None and self._dead_alias(use))
            ):
                group.deleted.append(stmt)  # `finalize()`, its flag, a never-read alias
            else:
                what = f"`{alloc.name}.{attr}`" if attr else f"`{alloc.name}`"
                raise Unproven(f"the allocator escapes: {what} is used at line {use.lineno}")
        group.ptr_calls = [c for c in group.flagged if self.model.resolve(c.func) == SMEM_PTR]
        group.region_holders = {}
        for call in group.ptr_calls:
            holder = self._parents.get(id(call))
            if isinstance(holder, ast.Assign) and holder.value is call and self._single_name(holder):
                # `p = SmemPtr(...)`, read as `p.get()` and `p.byte_offset`
                binding = self._binding_of_target(holder.targets[0], holder)
                if binding is None or len(binding.scope.bindings.get(binding.name, ())) != 1:
                    raise Unproven(f"`{holder.targets[0].id}` (line {holder.lineno}) is bound more than once")
                for use in self.model.uses_of(binding):
                    attr = self._parents.get(id(use))
                    if isinstance(attr, ast.Attribute) and attr.attr == "byte_offset":
                        continue
                    if not self._get_call(attr):
                        raise Unproven(f"line {use.lineno}: `{binding.name}` is used other than through `.get()` and `.byte_offset`")
                group.region_holders[id(call)] = holder
            elif not self._get_call(holder):
                raise Unproven(f"line {call.lineno}: a `SmemPtr(...)` used other than through `.get()` keeps its layout view")
        if not group.ptr_calls and not group.region_views:
            raise Unproven("no `SmemPtr(...)` views this allocator")
        group.region = True
        group.kernel = self._kernel_of([*group.kernel_uses, *group.ptr_calls])

    def _get_call(self, attr) -> bool:
        """``attr`` is the `.get` of a `.get()` call."""
        used = self._parents.get(id(attr))
        return (
            isinstance(attr, ast.Attribute) and attr.attr == "get" and isinstance(used, ast.Call)
            and used.func is attr and not used.args and not used.keywords
        )

    def _survey_region_base(self, group: Group, call: ast.Call) -> None:
        """`base = allocator.get_base()` read by `SmemPtr(base, ...)` and by
        `memref.view(type, base, offset, sizes=[])` only (or `SmemPtr(allocator.get_base(), ...)`)."""
        holder = self._parents.get(id(call))
        if isinstance(holder, ast.Call) and self.model.resolve(holder.func) == SMEM_PTR and call_argument(holder, 0, "base_memref") is call:
            return
        if not (isinstance(holder, ast.Assign) and holder.value is call and self._single_name(holder)):
            raise Unproven(self._escaping_base(call, group.binding.name))
        binding = self._binding_of_target(holder.targets[0], holder)
        if binding is None or len(binding.scope.bindings.get(binding.name, ())) != 1:
            raise Unproven(f"`{holder.targets[0].id}` (line {holder.lineno}) is bound more than once")
        for use in self.model.uses_of(binding):
            consumer = self._parents.get(id(use))
            if isinstance(consumer, ast.keyword):
                consumer = self._parents.get(id(consumer))
            if isinstance(consumer, ast.Call) and self.model.resolve(consumer.func) == SMEM_PTR and call_argument(consumer, 0, "base_memref") is use:
                continue
            if isinstance(consumer, ast.Call) and self.model.resolve(consumer.func) in RAW_MEMREF_VIEW and len(consumer.args) == 3 and consumer.args[1] is use:
                group.region_views.append(consumer)
                continue
            what = ast.unparse(consumer.func) if isinstance(consumer, ast.Call) else type(consumer).__name__
            raise Unproven(
                f"line {use.lineno}: the base memref `{binding.name}` (`{group.binding.name}.get_base()`) is used by "
                f"`{what}`, which needs a builtin memref; `fx.SharedAllocator` gives fx pointers"
            )
        group.base_stmts.append(holder)
        group.deleted.append(holder)

    def plan_region(self, family: list[Group], struct_name: str):
        """The edits: the bookkeeping as arithmetic, one byte array per allocator, each
        view a pointer into it (its uses pointer loads and stores)."""
        kernel = family[0].kernel
        deleted: list[ast.stmt] = []
        rewrites: dict[int, tuple[ast.AST, str]] = {}
        self._followed, self._pointer_gets, self._pure_aligns = {}, set(), []
        self._foreign = ForeignHelpers(self)
        slots = []
        taken: set[str] = set()
        self._region_view_ids = {id(c) for g in family for c in g.region_views}
        for group in family:
            self._enter(group)
            deleted.extend(s for s in group.deleted if s is not self._alloc_stmt)
            name = self._region_name(group, taken)
            counter = self._fresh(self._alloc_stmt, f"{name}_bytes")
            rewrites[id(self._alloc_stmt)] = (self._alloc_stmt, f"{counter} = 0")
            for attr in group.region_ptrs:
                rewrites[id(attr)] = (attr, counter)
            for call in group.region_aligns:
                rewrites[id(call)] = (call, self._align_text(call))
            size = Spelled(f"max({FINALIZE_ROUNDING}, ({counter} + {FINALIZE_ROUNDING - 1}) // {FINALIZE_ROUNDING} * {FINALIZE_ROUNDING})")
            buffer = Buffer(name, Poly.const(0), "fx.Uint8", [size], BASE_ALIGNMENT, list(group.ptr_calls))
            slots.append([(buffer, BASE_ALIGNMENT)])
            base = f"\0FIELD:{name}\0.ptr"
            for call in group.ptr_calls:
                holder = group.region_holders.get(id(call))
                if holder is None:
                    self._region_view(call, self._parents.get(id(self._parents.get(id(call)))), base, rewrites, deleted)
                    continue
                deleted.append(holder)
                binding = self._binding_of_target(holder.targets[0], holder)
                offset = call_argument(call, 1, "byte_offset")
                for use in self.model.uses_of(binding):
                    attr = self._parents.get(id(use))
                    if attr.attr == "byte_offset":
                        rewrites[id(attr)] = (attr, self._factor(offset))
                    else:
                        self._region_view(call, self._parents.get(id(attr)), base, rewrites, deleted)
            for call in group.region_views:
                self._region_memref_view(call, base, rewrites, deleted)
        self._check_helpers()
        self.elsewhere = self._foreign.edits()
        deleted = self._with_dead_contexts(deleted)
        from flydsl_ls.analysis.model.diagnostic import Edit
        from flydsl_ls.analysis.model.rewrite import fx_alias

        fx, import_edits = fx_alias(self.model)
        struct_name = self._fresh(kernel, struct_name)
        lds = self._fresh_in_kernel(kernel, "lds")
        paths = self._field_paths(slots, lds)
        edits = list(import_edits)
        edits.append(self._struct_edit(kernel, struct_name, slots, fx, {}))
        base_stmts = [s for g in family for s in g.base_stmts]
        uses = [n for g in family for n in (*g.kernel_uses, *g.ptr_calls)]
        placed = self._lds_edit(kernel, base_stmts, uses, lds, fx, struct_name, False)
        for node, text in self._nested(rewrites):
            for field, path in paths.items():
                text = text.replace(f"\0FIELD:{field}\0", path)
            edits.append(Edit(self.ctx.range(node), text.replace("\0FX\0", fx)))
        edits.extend(self._deletions(deleted, skip=placed))
        if placed is not None:
            edits.append(placed[1])
        return tuple(edits)

    def _region_name(self, group: Group, taken: set[str]) -> str:
        name = group.binding.name.lstrip("_")
        for prefix in ("lds_alloc_", "smem_alloc_", "allocator_", "alloc_", "lds_", "smem_"):
            rest = name[len(prefix):]
            if name.startswith(prefix) and rest.isidentifier() and not rest[0].isdigit():
                name = rest
                break
        if name in ("allocator", "alloc", "smem", "lds", "smem_alloc", "lds_alloc"):
            name = "region"  # nothing but the class in the name
        base, n = name, 2
        while name in taken:
            name, n = f"{base}_{n}", n + 1
        taken.add(name)
        return name

    def _region_view(self, call: ast.Call, get: ast.Call, base: str, rewrites, deleted) -> None:
        """`m = SmemPtr(base, off, dtype, shape=...).get()`: `m` becomes the typed pointer at
        `off`, and its uses pointer loads and stores."""
        line = call.lineno
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            raise Unproven(f"line {line}: `SmemPtr(*args)` cannot be read")
        offset = call_argument(call, 1, "byte_offset")
        dtype = call_argument(call, 2, "element_type")
        if offset is None or dtype is None:
            raise Unproven(f"line {line}: `SmemPtr(...)` without an offset or element type")
        rewrites[id(get)] = (get, self._typed_pointer(dtype, base, offset, line))
        self._pointer_gets.add(id(get))
        binding = self._bound_to(get)
        if binding is None:
            raise Unproven(f"line {line}: the LDS memref from `.get()` is not bound to a name")
        for other in binding.scope.bindings.get(binding.name, ()):
            if not self._pointer_value(other.value):
                raise Unproven(f"`{binding.name}` (line {line}) is also bound to something else than an LDS view")
        for use in self.model.uses_of(binding):
            self._rewrite_lds_pointer_use(use, binding.name, rewrites, deleted)

    def _pointer_value(self, value) -> bool:
        """A view this migration makes a pointer (`SmemPtr(...).get()` of the kernel's
        allocators, alone or as `... if c else None`), or None."""
        if isinstance(value, ast.IfExp):
            return self._pointer_value(value.body) and self._pointer_value(value.orelse)
        if isinstance(value, ast.Constant) and value.value is None:
            return True
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "get"):
            return False
        owner = self._assigned(value.func.value)  # `SmemPtr(...).get()` or `p.get()`
        return isinstance(owner, ast.Call) and self.model.resolve(owner.func) == SMEM_PTR

    def _region_memref_view(self, call: ast.Call, base: str, rewrites, deleted) -> None:
        """`v = memref.view(T.memref(n, t), base, off, sizes=[])`: the pointer at `off`."""
        line = call.lineno
        sizes = next((k.value for k in call.keywords if k.arg == "sizes"), None)
        if [k.arg for k in call.keywords] != ["sizes"] or not (isinstance(sizes, ast.List) and not sizes.elts):
            raise Unproven(f"line {line}: `memref.view` with dynamic sizes has no fx pointer form")
        kind = self._assigned(call.args[0])
        if not (isinstance(kind, ast.Call) and isinstance(kind.func, ast.Attribute) and kind.func.attr in ("memref", "get") and len(kind.args) >= 2):
            raise Unproven(f"line {line}: the element type of `{ast.unparse(call.args[0])}` (a `memref.view` of LDS) cannot be read")
        stmt = self._parents.get(id(call))
        if not (isinstance(stmt, ast.Assign) and stmt.value is call and self._single_name(stmt)):
            raise Unproven(f"line {line}: the `memref.view` of LDS is not bound to a name")
        binding = self._binding_of_target(stmt.targets[0], stmt)
        if binding is None:
            raise Unproven(f"line {line}: cannot follow `{stmt.targets[0].id}`")
        offset, extra = self._unwrapped(call.args[2]), None
        if isinstance(offset, ast.BinOp) and isinstance(offset.op, ast.Add) and self._index_constant(offset.left) is not None:
            offset, extra = offset.left, offset.right  # `arith.constant(off, index=True) + run-time bytes`
        static = self._index_constant(offset)
        value = self._assigned(offset) if isinstance(offset, ast.Name) else None
        if static is None and isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add) and self._index_constant(value.left) is not None:
            static, extra = ast.Constant(0), offset  # `off = arith.constant(n, index=True) + bytes`: a byte index
        if static is None:
            raise Unproven(f"line {line}: the byte offset `{ast.unparse(call.args[2])}` of a `memref.view` of LDS cannot be read")
        pointer = self._typed_pointer(kind.args[1], base, static, line, extra)
        rewrites[id(call)] = (call, pointer)
        self._drop_type_names(call.args[0], deleted)
        for use in self.model.uses_of(binding):
            self._rewrite_lds_pointer_use(use, binding.name, rewrites, deleted)

    def _unwrapped(self, expr: ast.expr) -> ast.expr:
        """``expr`` without a trailing `.ir_value()` (the same value, raw; another rule's)."""
        if isinstance(expr, ast.Call) and not expr.args and not expr.keywords and isinstance(expr.func, ast.Attribute) and expr.func.attr == "ir_value":
            return expr.func.value
        return expr

    def _drop_type_names(self, kind: ast.expr, deleted) -> None:
        """`view_ty = T.memref(...)` read only by views that are now pointers goes."""
        if not isinstance(kind, ast.Name):
            return
        typed = self.model.reaching_bindings(kind)
        if len(typed) != 1:
            return
        holder = self._statement(typed[0].node)
        uses = self.model.uses_of(typed[0])
        views = [self._parents.get(id(u)) for u in uses]
        if isinstance(holder, ast.Assign) and self._single_name(holder) and all(
            isinstance(v, ast.Call) and self.model.resolve(v.func) in RAW_MEMREF_VIEW and v.args and v.args[0] is u
            and id(v) in self._region_view_ids for u, v in zip(uses, views)
        ):
            deleted.append(holder)

    def _index_constant(self, expr: ast.expr):
        """n of `arith.constant(n, index=True)` or `fx.Index(n)` (FLY102's form of it); else None."""
        if isinstance(expr, ast.Call) and len(expr.args) == 1 and [(k.arg, getattr(k.value, "value", None)) for k in expr.keywords] == [("index", True)]:
            return expr.args[0]
        if isinstance(expr, ast.Call) and len(expr.args) == 1 and not expr.keywords and self.model.resolve(expr.func) == "fx.Index":
            return expr.args[0]
        return None

    def _typed_pointer(self, dtype: ast.expr, base: str, offset: ast.expr, line: int, extra: ast.expr | None = None) -> str:
        """`fx.recast_iter(fx.T, base + offset)` (`base + offset` for bytes)."""
        known = self._dtype(dtype)
        if known in ELEMENT_BYTES:
            size, element = ELEMENT_BYTES[known], "\0FX\0" + known[len("fx"):]
        elif self._element_size(dtype) is not None:
            # chosen by the builder (an arch's fp8, an output type): its fx class at trace time
            size, element = self._element_size(dtype), f"\0FX\0.Numeric.from_ir_type({self._text(dtype)})"
        else:
            raise Unproven(
                f"line {line}: the element type `{ast.unparse(dtype)}` cannot be read (known: T.f16, T.bf16, "
                "T.f32, T.i8, T.i32, ..., conditionals of them, and the fp8 of `default_f8_type()`)"
            )
        if size > 1 and extra is not None:
            raise Unproven(f"line {line}: a typed pointer at a run-time byte offset has no known alignment")
        if size > 1 and not (self._multiple_of(offset, size) or self._builder_time(offset)):
            raise Unproven(f"line {line}: the byte offset `{ast.unparse(offset)}` is not known to be a multiple of {size}")
        at = base
        literal_zero = isinstance(offset, ast.Constant) and offset.value == 0
        if not literal_zero:
            at += f" + {self._factor(offset)}"
        if extra is not None:  # a run-time byte index (an `fx.Index` crashes FlyDSL 0.3.1's pointer add)
            at += f" + \0FX\0.Int32({self._text(extra)})" if self._index_offsets_crash else f" + {self._factor(extra)}"
        return at if known == "fx.Uint8" else f"\0FX\0.recast_iter({element}, {at})"

    def _multiple_of(self, expr: ast.expr, size: int, depth: int = 0) -> bool:
        """``expr`` is a multiple of ``size`` whatever the builder computes: a literal, or a
        name bound once to one, to `allocator._align(x, a)` with `a` a multiple of it, or to
        a sum or product of such."""
        if depth > MAX_DEPTH:
            return False
        if isinstance(expr, ast.Constant) and type(expr.value) is int:
            return expr.value % size == 0
        if isinstance(expr, ast.Name):
            bindings = self.model.reaching_bindings(expr)
            return len(bindings) == 1 and bindings[0].value is not None and self._multiple_of(bindings[0].value, size, depth + 1)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            return self._multiple_of(expr.left, size, depth + 1) and self._multiple_of(expr.right, size, depth + 1)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
            return self._multiple_of(expr.left, size, depth + 1) or self._multiple_of(expr.right, size, depth + 1)
        if isinstance(expr, ast.Attribute) and expr.attr == "byte_offset" and isinstance(expr.value, ast.Name):
            bindings = self.model.reaching_bindings(expr.value)
            value = bindings[0].value if len(bindings) == 1 else None
            if isinstance(value, ast.Call) and self.model.resolve(value.func) == SMEM_PTR:
                offset = call_argument(value, 1, "byte_offset")
                return offset is not None and self._multiple_of(offset, size, depth + 1)
            return False
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "_align" and len(expr.args) == 2:
            align = expr.args[1]
            return isinstance(align, ast.Constant) and type(align.value) is int and align.value % size == 0
        return False

    def _builder_time(self, expr: ast.expr, depth: int = 0) -> bool:
        """``expr`` is a Python int when the kernel is traced (names the builder binds,
        literals, arithmetic, `int`/`max`/`min`): the typed pointer's alignment is then known,
        and FlyDSL checks it (a misaligned offset, misaligned in the old view too, fails to
        trace rather than miscompile)."""
        if depth > MAX_DEPTH:
            return False
        if isinstance(expr, ast.Constant):
            return type(expr.value) is int
        if isinstance(expr, ast.Attribute) and expr.attr == "byte_offset" and isinstance(expr.value, ast.Name):
            value = self._assigned(expr.value)
            offset = call_argument(value, 1, "byte_offset") if isinstance(value, ast.Call) and self.model.resolve(value.func) == SMEM_PTR else None
            return offset is not None and self._builder_time(offset, depth + 1)
        if isinstance(expr, ast.Name):
            binding = self.model.binding_of(expr)
            if binding is None or binding.kind not in ("assign", "augassign", "param", "import"):
                return False
            owner = binding.scope.node
            if not (isinstance(owner, FUNCTIONS) and self._is_traced(owner)):
                return True
            # bound in the kernel to Python arithmetic of such values
            bindings = self.model.reaching_bindings(expr)
            return len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None and self._builder_time(bindings[0].value, depth + 1)
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
            return self._builder_time(expr.left, depth + 1) and self._builder_time(expr.right, depth + 1)
        if isinstance(expr, ast.IfExp):
            return self._builder_time(expr.body, depth + 1) and self._builder_time(expr.orelse, depth + 1)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in ("int", "max", "min") and not expr.keywords:
            return self.model.binding_of(expr.func) is None and all(self._builder_time(a, depth + 1) for a in expr.args)
        return False

    def _element_size(self, expr: ast.expr, depth: int = 0) -> int | None:
        """Bytes of an MLIR element type the code computes (the largest it may be):
        `default_f8_type()`, a known type, a conditional of such, or a call of this file's
        function returning one; None when it cannot be read."""
        if depth > MAX_DEPTH:
            return None
        known = self._dtype(expr)
        if known in ELEMENT_BYTES:
            return ELEMENT_BYTES[known]
        if isinstance(expr, ast.IfExp):
            sizes = (self._element_size(expr.body, depth + 1), self._element_size(expr.orelse, depth + 1))
            return None if None in sizes else max(sizes)
        if isinstance(expr, ast.Name):
            bindings = self.model.reaching_bindings(expr)
            if len(bindings) == 1 and bindings[0].value is not None:
                return self._element_size(bindings[0].value, depth + 1)
            return None
        if isinstance(expr, ast.Call) and not expr.args and not expr.keywords:
            symbol = self.model.resolve(expr.func) or ""
            if symbol.split(".")[-1] in BYTE_TYPE_FUNCTIONS:
                return 1
            if symbol.startswith("mlir.ir.Float8") and symbol.endswith("Type.get"):
                return 1  # `ir.Float8E4M3FNUZType.get()`
            function = getattr(self.model.binding_of(expr.func), "node", None) if isinstance(expr.func, ast.Name) else None
            if isinstance(function, FUNCTIONS) and not function.args.args:
                returns = [n for n in ast.walk(function) if isinstance(n, ast.Return)]
                sizes = [self._element_size(r.value, depth + 1) if r.value is not None else None for r in returns]
                return max(sizes) if sizes and None not in sizes else None
        return None
