"""Finding a `SmemAllocator`'s pattern and planning its migration: which buffers the
kernel views, where, and how each use maps to a layout view. Anything that cannot be
proven raises `Unproven` with the reason the message gives."""

import ast

from flydsl_ls.analysis.model.diagnostic import Edit
from flydsl_ls.analysis.model.rawtypes import fx_type_of_mlir_type
from flydsl_ls.analysis.model.rewrite import fx_alias
from flydsl_ls.analysis.model.scopes import unbound_name
from flydsl_ls.analysis.model.versions import at_least
from flydsl_ls.analysis.rules._control_flow_support import decorator_symbol, is_jit_function
from flydsl_ls.analysis.rules.base import call_argument
from flydsl_ls.analysis.rules.fly203.foreign import ForeignHelpers, module_of_import
from flydsl_ls.analysis.rules.fly203.model import (
    ALLOCATOR,
    BASE_ALIGNMENT,
    ELEMENT_BYTES,
    FUNCTIONS,
    KERNEL_DECORATORS,
    MAX_DEPTH,
    RAW_EXTRACT_POINTER,
    RAW_MEMREF_LOAD,
    RAW_MEMREF_STORE,
    RAW_MEMREF_VIEW,
    RAW_VECTOR_LOAD,
    RAW_VECTOR_STORE,
    SMEM_PTR,
    Buffer,
    Group,
    Unproven,
)
from flydsl_ls.analysis.rules.fly203.offsets import OffsetAlgebra, Poly
from flydsl_ls.analysis.rules.fly203.region import RegionPlan
from flydsl_ls.analysis.rules.fly203.rewrite import Rewriter


class Planner(OffsetAlgebra, RegionPlan, Rewriter):
    def __init__(self, model, ctx, parents, calls):
        self.model = model
        self.ctx = ctx
        self._parents = parents
        self._calls = calls
        self._hosts: set[int] = set()  # id() of kernel body helpers holding the allocation
        self._foreign: ForeignHelpers | None = None  # other modules' helpers being migrated
        self._aliases: set[int] = set()  # id() of names bound to an LDS pointer, followed
        # FlyDSL before 0.5.0 crashes on `pointer + fx.Index` (SIGSEGV, measured on 0.3.1)
        version = getattr(getattr(ctx, "options", None), "flydsl_version", None)
        self._index_offsets_crash = bool(version) and not at_least(version, "0.5.0")
        self.elsewhere: tuple = ()  # the last plan's edits of other files

    def groups(self) -> list[Group]:
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
        owner = next((p for p in self._ancestors(stmt) if isinstance(p, (*FUNCTIONS, ast.Module))), None)
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

    def survey(self, group: Group) -> None:
        """Every use of the allocator must be one we understand; records them on ``group``."""
        if group.reason is not None:
            raise Unproven(group.reason)
        alloc = group.binding
        self._enter(group)
        group.deleted.append(self._alloc_stmt)
        self._foreign_consumers(group)
        uses = self.model.uses_of(alloc)
        # Padding under control flow is the reason worth naming first: the reads of the
        # pointer around it are only there to compute it.
        uses = sorted(uses, key=lambda use: not self._pads(use))
        for use in uses:
            parent = self._parents.get(id(use))
            stmt = self._statement(use)
            attr = parent.attr if isinstance(parent, ast.Attribute) and parent.value is use else None
            if attr == "get_base":
                call = self._parents.get(id(parent))
                if not (isinstance(call, ast.Call) and call.func is parent and not call.args):
                    raise Unproven(f"`{alloc.name}.get_base` is used other than as a call")
                holder = self._parents.get(id(call))
                if isinstance(holder, ast.Assign) and holder.value is call and self._single_name(holder) and self._raw_base(holder):
                    group.base_uses.append(call)  # `base` is only used raw: the field's pointer
                elif isinstance(holder, ast.Assign) and holder.value is call and self._single_name(holder):
                    self._base_name_uses(holder, alloc.name)
                    group.base_stmts.append(holder)
                    group.deleted.append(holder)
                elif isinstance(holder, ast.Call) and self.model.resolve(holder.func) == SMEM_PTR and call_argument(holder, 0, "base_memref") is call:
                    pass
                elif isinstance(holder, ast.Call) and call in holder.args:
                    group.base_uses.append(call)  # its address is taken: followed in plan()
                else:
                    raise Unproven(self._escaping_base(call, alloc.name))
                group.kernel_uses.append(call)
            elif attr == "finalize":
                call = self._parents.get(id(parent))
                if not (isinstance(call, ast.Call) and isinstance(stmt, ast.Expr) and stmt.value is call):
                    raise Unproven(f"the result of `{alloc.name}.finalize()` is used (line {use.lineno})")
                group.deleted.append(stmt)
            elif attr == "finalized" and isinstance(stmt, ast.Assign) and parent in stmt.targets:
                group.deleted.append(stmt)
            elif attr == "_align" and self._pure_align(parent, group):
                group.align_calls.append(self._parents.get(id(parent)))
            elif attr in ("ptr", "_align") and stmt is not None and self._body_of(stmt) is self._alloc_body:
                if isinstance(stmt, (ast.Assign, ast.AugAssign)):
                    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                    if len(targets) != 1:
                        raise Unproven(f"line {stmt.lineno}: multiple assignment of allocator bookkeeping")
                    target = targets[0]
                    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.attr == "ptr" and self._is_allocator(target.value, group):
                        group.deleted.append(stmt)
                        continue
                    if isinstance(stmt, ast.Assign) and isinstance(target, ast.Name):
                        binding = self._binding_of_target(target, stmt)
                        if binding is None:
                            raise Unproven(f"line {stmt.lineno}: cannot follow `{target.id}`")
                        group.offset_names[id(binding)] = stmt
                        group.deleted.append(stmt)
                        continue
                raise Unproven(f"line {stmt.lineno}: `{alloc.name}.{attr}` is used in a way that cannot be mapped")
            elif self._pads(use):
                raise Unproven(
                    f"line {use.lineno}: `{alloc.name}.ptr` is moved under control flow (padding LDS by a "
                    "computed amount, e.g. to cap occupancy): an `@fx.struct` has no field of a run-dependent size"
                )
            elif attr in ("ptr", "_align"):
                where = "inside control flow" if stmt is not None and self._within(stmt, alloc.scope.node) else "outside the allocator's scope"
                raise Unproven(f"`{alloc.name}.{attr}` is read {where} (line {use.lineno}): the offsets are computed, not static")
            elif attr is None and self._dead_alias(use):
                group.deleted.append(stmt)
            else:
                what = f"`{alloc.name}.{attr}`" if attr else f"`{alloc.name}`"
                raise Unproven(f"the allocator escapes: {what} is used at line {use.lineno}")
        group.ptr_calls = [c for c in group.flagged if self.model.resolve(c.func) == SMEM_PTR]
        if group.base_uses and group.ptr_calls:
            raise Unproven(self._escaping_base(group.base_uses[0], alloc.name))
        if not group.ptr_calls and not group.base_uses:
            raise Unproven("no `SmemPtr(...)` views this allocator")
        group.kernel = self._kernel_of([*group.kernel_uses, *group.ptr_calls])

    def _foreign_consumers(self, group: Group) -> None:
        """An LDS memref (`SmemPtr(...).get()`) that reaches a function of another module
        (through names and this file's helpers) blocks the migration before anything else:
        the fix edits this file only, and that function takes the builtin memref."""
        names = []
        for call in group.flagged:
            get = self._parents.get(id(call))
            if self.model.resolve(call.func) == SMEM_PTR and isinstance(get, ast.Attribute) and get.attr == "get":
                names.append(self._parents.get(id(get)))
        bindings = [b for b in map(self._bound_to, names) if b is not None]
        seen: set[int] = set()
        while bindings and len(seen) < 4 * MAX_DEPTH:
            binding = bindings.pop()
            if id(binding) in seen:
                continue
            seen.add(id(binding))
            for use in self.model.uses_of(binding):
                parent = self._parents.get(id(use))
                call = self._parents.get(id(parent)) if isinstance(parent, ast.keyword) else parent
                if not isinstance(call, ast.Call) or call.func is use:
                    alias = self._bound_to(use)  # `body_lds_x = lds_x`
                    if alias is not None:
                        bindings.append(alias)
                    continue
                function = self.model.binding_of(call.func) if isinstance(call.func, ast.Name) else None
                if function is not None and function.kind == "import":
                    if getattr(self.model, "project", None) is not None:
                        # the fix takes that function along, or says why it cannot
                        ForeignHelpers(self).follow(use, call, parent.arg if isinstance(parent, ast.keyword) else None)
                        continue
                    there = self._consumer_elsewhere(
                        function, parent.arg if isinstance(parent, ast.keyword) else call.args.index(use)
                    )
                    raise Unproven(
                        f"line {use.lineno}: the LDS memref `{use.id}` is passed to `{call.func.id}` "
                        f"(from `{self._module_of(function)}`){there}; a fix edits this file only, so that "
                        "function and every kernel calling it move to fx pointers (`fx.ptr_load`/"
                        "`fx.ptr_store`) together, by hand"
                    )
                try:
                    helper = self._helper_param(use)
                except Unproven:
                    helper = None
                if helper is not None:
                    bindings.append(helper[1])

    def _consumer_elsewhere(self, imported, parameter) -> str:
        """Where the imported function hands its LDS parameter (a keyword or a position) to
        an op: ", which hands it to `vector.store` (file:line)", following calls of that
        module's own functions; "" when the project cannot tell."""
        project = getattr(self.model, "project", None)
        found = module_of_import(self.model, imported) if isinstance(imported.node, ast.AST) else None
        if project is None or found is None or parameter is None:
            return ""  # not a project module, or `**kwargs` (no parameter to match)
        path, name = found
        model = project.index.model_of(path)
        functions = {f.name: f for f in getattr(model, "tree", ast.Module(body=[])).body if isinstance(f, FUNCTIONS)}
        for _ in range(MAX_DEPTH):
            function = functions.get(name)
            if function is None:
                return ""
            params = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
            param = next((a.arg for a in params if a.arg == parameter), None) if isinstance(parameter, str) else (
                params[parameter].arg if parameter < len(params) else None
            )
            calls = []
            for node in ast.walk(function):
                if isinstance(node, ast.Call):
                    calls += [(node, i) for i, a in enumerate(node.args) if isinstance(a, ast.Name) and a.id == param]
                    calls += [(node, k.arg) for k in node.keywords if isinstance(k.value, ast.Name) and k.value.id == param]
            if not calls:
                return ""
            # an op (`vector.load_op`) first, then a function of that module to follow
            calls.sort(key=lambda f: (not isinstance(f[0].func, ast.Attribute), ast.unparse(f[0].func) not in functions))
            node, parameter = calls[0]
            callee = ast.unparse(node.func)
            if callee in functions:
                name = callee
                continue
            return f", which hands it to `{callee}` ({path.name}:{node.lineno})"
        return ""

    def _module_of(self, binding) -> str:
        statement = self._statement(binding.node) if isinstance(binding.node, ast.AST) else None
        if isinstance(statement, ast.ImportFrom):
            return "." * statement.level + (statement.module or "")
        return self.model.resolve(ast.Name(id=binding.name)) or binding.name

    def _bound_to(self, expr):
        """The binding of `name = expr` (or `name = expr if c else None`), else None."""
        holder = self._parents.get(id(expr))
        if isinstance(holder, ast.IfExp):
            expr, holder = holder, self._parents.get(id(holder))
        if isinstance(holder, ast.Assign) and holder.value is expr and self._single_name(holder):
            return self._binding_of_target(holder.targets[0], holder)
        return None

    def _dead_alias(self, use: ast.Name) -> bool:
        """`other = allocator` never read: it goes with the allocator."""
        stmt = self._parents.get(id(use))
        if not (isinstance(stmt, ast.Assign) and stmt.value is use and self._single_name(stmt)):
            return False
        binding = self._binding_of_target(stmt.targets[0], stmt)
        private = binding is not None and (binding.scope.kind == "function" or binding.name.startswith("_"))
        return private and not self.model.uses_of(binding)

    def _pads(self, use: ast.Name) -> bool:
        """`allocator.ptr` written outside the allocator's block (under an `if`)."""
        parent = self._parents.get(id(use))
        if not (isinstance(parent, ast.Attribute) and parent.attr == "ptr" and isinstance(parent.ctx, ast.Store)):
            return False
        stmt = self._statement(use)
        return stmt is None or self._body_of(stmt) is not self._alloc_body

    def _escaping_base(self, call: ast.Call, alloc: str) -> str:
        """Why `allocator.get_base()` handed to something other than `SmemPtr` blocks the
        migration, following it into a helper of this file to the op that takes it."""
        spelled = f"`{alloc}.get_base()`"
        try:
            helper = self._helper_param(call)
        except Unproven:
            helper = None
        if helper is not None:
            function, binding, _ = helper
            for use in self.model.uses_of(binding):
                consumer = self._parents.get(id(use))
                if isinstance(consumer, ast.Call) and use in consumer.args:
                    return (
                        f"line {call.lineno}: {spelled} is passed to `{function.name}`, which hands it to "
                        f"`{ast.unparse(consumer.func)}` (line {use.lineno}); that needs the builtin memref, "
                        "and `fx.SharedAllocator` gives fx pointers and views"
                    )
            uses = self.model.uses_of(binding)
            where = f" (line {uses[0].lineno})" if uses else ""
            return (
                f"line {call.lineno}: {spelled} is passed to `{function.name}`, which passes the builtin "
                f"memref on{where}; `fx.SharedAllocator` gives fx pointers and views"
            )
        holder = self._parents.get(id(call))
        what = f"`{ast.unparse(holder.func)}`" if isinstance(holder, ast.Call) else "something other than `SmemPtr(...)`"
        return (
            f"line {call.lineno}: the base memref {spelled} is used by {what}, which needs a builtin "
            "memref; `fx.SharedAllocator` gives fx pointers and views"
        )

    def _raw_base(self, stmt: ast.Assign) -> bool:
        """`base = allocator.get_base()` read, and never by `SmemPtr(base, ...)`."""
        binding = self._binding_of_target(stmt.targets[0], stmt)
        uses = self.model.uses_of(binding) if binding is not None else []
        return bool(uses) and not any(
            isinstance(self._parents.get(id(u)), ast.Call)
            and self.model.resolve(self._parents.get(id(u)).func) == SMEM_PTR
            for u in uses
        )

    def _base_name_uses(self, stmt: ast.Assign, alloc: str) -> None:
        """`base = allocator.get_base()` is deleted: every read of `base` must be a
        `SmemPtr(base, ...)` (the views replace them)."""
        binding = self._binding_of_target(stmt.targets[0], stmt)
        if binding is None:
            raise Unproven(f"line {stmt.lineno}: cannot follow `{stmt.targets[0].id}`")
        for use in self.model.uses_of(binding):
            holder = self._parents.get(id(use))
            if isinstance(holder, ast.keyword):
                holder = self._parents.get(id(holder))
            if isinstance(holder, ast.Call) and self.model.resolve(holder.func) == SMEM_PTR and call_argument(holder, 0, "base_memref") is use:
                continue
            what = ast.unparse(holder.func) if isinstance(holder, ast.Call) else type(holder).__name__
            raise Unproven(
                f"line {use.lineno}: the base memref `{binding.name}` (`{alloc}.get_base()`) is used by "
                f"`{what}`, which needs a builtin memref; `fx.SharedAllocator` gives fx pointers and views"
            )

    def _enter(self, group: Group) -> None:
        """Make ``group`` the allocator the offset algebra reads."""
        self._group = group
        self._alloc_stmt = self._statement(group.binding.node)
        self._alloc_body = self._body_of(self._alloc_stmt)
        self._aligned: dict[str, tuple[Poly, int]] = {}
        self._maxima: dict[str, list[Poly]] = {}

    def _pure_align(self, attr: ast.Attribute, group: Group) -> bool:
        """`allocator._align(x, a)` on a value that is not the bump pointer: plain
        arithmetic, rewritten in place (the allocator goes away)."""
        call = self._parents.get(id(attr))
        if not (isinstance(call, ast.Call) and call.func is attr and self._is_align_call(call)):
            return False
        reads_ptr = any(
            isinstance(n, ast.Attribute) and n.attr == "ptr" and self._is_allocator(n.value, group)
            for n in ast.walk(call.args[0])
        )
        if reads_ptr:
            return False
        stmt = self._statement(call)
        # `off = allocator._align(size, a)` in the allocator's block is bookkeeping when only
        # the offsets read it; decided in plan().
        return not (
            isinstance(stmt, ast.Assign) and stmt.value is call and self._single_name(stmt)
            and self._body_of(stmt) is self._alloc_body
        )

    def plan(self, family: list[Group], struct_name: str) -> tuple[Edit, ...]:
        """One `@fx.struct` for the allocators a kernel uses (a ping-pong pair is two)."""
        kernel = family[0].kernel
        deleted: list[ast.stmt] = []
        rewrites: dict[int, tuple[ast.AST, str]] = {}
        slots: list[list[tuple[Buffer, int | None]]] = []
        taken: set[str] = set()
        self._followed: dict[tuple, tuple] = {}  # (helper, parameter) -> what it receives
        self._pointer_gets: set[int] = set()  # `.get()` calls that became a field's `.ptr`
        self._pure_aligns = [c for g in family for c in g.align_calls]
        self._foreign = ForeignHelpers(self)
        for group in family:
            self._enter(group)
            deleted.extend(group.deleted)
            buffers: list[Buffer] = []
            for call in group.ptr_calls:
                buffer, view_of = self._buffer(call, kernel, buffers, taken)
                self._rewrite_uses(call, buffer, view_of, rewrites, deleted)
            if group.base_uses:
                buffers.append(self._whole_buffer(group, kernel, taken))
                for call in group.base_uses:
                    rewrites[id(call)] = (call, f"\0FIELD:{buffers[-1].name}\0.ptr")
                    holder = self._parents.get(id(call))
                    if isinstance(holder, ast.Assign):  # `base = allocator.get_base()`
                        binding = self._binding_of_target(holder.targets[0], holder)
                        if len(binding.scope.bindings.get(binding.name, ())) != 1:
                            raise Unproven(f"`{binding.name}` (line {holder.lineno}) is bound more than once")
                        for use in self.model.uses_of(binding):
                            self._rewrite_address_use(use, binding.name, rewrites, deleted)
                    else:
                        self._rewrite_address_use(call, self._text(call), rewrites, deleted)
            for stmt in group.offset_names.values():
                binding = self._binding_of_target(stmt.targets[0], stmt)  # a name's assignment (survey)
                for use in self.model.uses_of(binding):
                    if self._inside_any(use, deleted) or self._is_offset_arg(use, group.ptr_calls):
                        continue
                    if self._pure_align_stmt(stmt, group):
                        deleted.remove(stmt)  # still needed: keep it, as arithmetic
                        group.align_calls.append(stmt.value)
                        break
                    raise Unproven(f"`{binding.name}` (an offset) is used at line {use.lineno} outside the SmemPtr calls")
            slots.extend(self._order(buffers))
        self._check_helpers()
        self.elsewhere = self._foreign.edits()
        for group in family:
            for call in group.align_calls:
                if not self._inside_any(call, deleted):
                    rewrites[id(call)] = (call, self._align_text(call))
        # Things left dead: `ctx = CompilationContext.get_current()` only used by finalize.
        deleted = self._with_dead_contexts(deleted)
        fx, import_edits = fx_alias(self.model)
        struct_name = self._fresh(kernel, struct_name)
        unions = {}
        for index, slot in enumerate(slots):
            if len(slot) > 1:
                camel = "".join(p[:1].upper() + p[1:] for p in self._region_field(slot).split("_") if p)
                unions[index] = self._fresh(kernel, f"{camel}Region", taken=set(unions.values()) | {struct_name})
        lds = self._fresh_in_kernel(kernel, "lds")
        paths = self._field_paths(slots, lds)
        edits: list[Edit] = list(import_edits)
        edits.append(self._struct_edit(kernel, struct_name, slots, fx, unions))
        base_stmts = [s for g in family for s in g.base_stmts]
        uses = [n for g in family for n in (*g.kernel_uses, *g.ptr_calls)]
        placed = self._lds_edit(kernel, base_stmts, uses, lds, fx, struct_name, bool(unions))
        for node, text in self._nested(rewrites):
            for name, path in paths.items():
                text = text.replace(f"\0FIELD:{name}\0", path)
            edits.append(Edit(self.ctx.range(node), text.replace("\0FX\0", fx)))
        edits.extend(self._deletions(deleted, skip=placed))
        if placed is not None:
            edits.append(placed[1])
        return tuple(edits)

    def _nested(self, rewrites: dict[int, tuple[ast.AST, str]]) -> list[tuple[ast.AST, str]]:
        """The rewrites as non-overlapping edits: a rewrite inside another (a load in a
        stored value) is applied to the outer one's text, which quotes its source."""
        nodes = {key: node for key, (node, _) in rewrites.items()}
        outer_of: dict[int, int] = {}
        for key, node in nodes.items():
            for ancestor in self._ancestors(node):
                if id(ancestor) in nodes:
                    outer_of[key] = id(ancestor)
                    break
        texts = {key: text for key, (_, text) in rewrites.items()}
        # innermost first: a rewrite is folded into its outer one after its own inner ones
        depth = lambda key: sum(1 for _ in self._ancestors(nodes[key]))
        for key in sorted(outer_of, key=depth, reverse=True):
            outer = outer_of[key]
            source = self.model.index.slice(self.model.index.node_range(nodes[key]))
            if source in texts[outer]:
                texts[outer] = texts[outer].replace(source, texts[key], 1)
            elif texts[key] not in texts[outer]:  # else the outer text quoted it rewritten
                raise Unproven(f"line {nodes[key].lineno}: nested LDS accesses cannot be rewritten together")
        return [(nodes[key], texts[key]) for key in nodes if key not in outer_of]

    def _pure_align_stmt(self, stmt: ast.stmt, group: Group) -> bool:
        value = stmt.value
        return isinstance(value, ast.Call) and self._is_align_call(value) and not any(
            isinstance(n, ast.Attribute) and n.attr == "ptr" and self._is_allocator(n.value, group)
            for n in ast.walk(value.args[0])
        )

    def families(self, groups: list[Group]) -> list[list[Group]]:
        """Surveyed groups, gathered by kernel: a kernel may hold one SharedAllocator, and
        its whole LDS migrates at once, so an allocator that cannot keeps the others of its
        kernel back."""
        by_kernel: dict[int, list[Group]] = {}
        for group in groups:
            if group.reason is None:
                by_kernel.setdefault(id(group.kernel), []).append(group)
        for group in groups:
            if group.reason is None or group.binding is None:
                continue
            for call in group.flagged:
                kernel = self._outer_kernel(call)
                for other in by_kernel.pop(id(kernel), []) if kernel is not None else []:
                    other.reason = (
                        f"`{group.binding.name}`, also used by `{kernel.name}`, cannot be migrated "
                        f"(a kernel's LDS migrates at once): {group.reason}"
                    )
        return list(by_kernel.values())

    def _kernel_of(self, nodes: list[ast.AST]) -> ast.FunctionDef:
        """The function the allocation goes in: the kernel, or a helper that holds the
        kernel's body (called once by each kernel that uses it, so each trace creates one
        SharedAllocator)."""
        hosts = set()
        for node in nodes:
            function = self._outer_kernel(node)
            if function is None:
                function, why = self._kernel_body(node)
                if function is None:
                    raise Unproven(why)
            hosts.add(function)
        if len(hosts) != 1:
            names = ", ".join(sorted(k.name for k in hosts))
            raise Unproven(f"the allocator is shared by several kernels ({names}): migrate them by hand")
        return hosts.pop()

    def _kernel_body(self, node: ast.AST):
        """(the innermost function around ``node`` that only kernels call, once each and
        not in a loop; None and why not)."""
        why = None
        for function in (p for p in self._ancestors(node) if isinstance(p, FUNCTIONS)):
            problem = self._called_once_by_kernels(function)
            if problem is None:
                self._hosts.add(id(function))
                return function, None
            why = why or (
                f"LDS is used in `{function.name}` (line {node.lineno}), not in a `@flyc.kernel`, "
                f"and {problem}: `fx.SharedAllocator` must be created once per kernel"
            )
        owner = self._enclosing_function(node)
        return None, why or (
            f"LDS is used at {'module level' if owner is None else owner.name} (line {node.lineno}), "
            "not in a `@flyc.kernel`: `fx.SharedAllocator` must be created inside the kernel"
        )

    def _called_once_by_kernels(self, function) -> str | None:
        """None when every read of ``function`` is a statement-level call in a
        `@flyc.kernel`, at most one per kernel, outside loops; else what is not."""
        scope = self._scope_at(function)
        binding = next((b for b in scope.bindings.get(function.name, ()) if b.node is function), None) if scope else None
        if binding is None or len(scope.bindings.get(function.name, ())) != 1:
            return f"`{function.name}` is bound more than once"
        uses = self.model.uses_of(binding)
        if not uses:
            return f"`{function.name}` is never called"
        kernels = set()
        for use in uses:
            call = self._parents.get(id(use))
            stmt = self._parents.get(id(call))
            if not (isinstance(call, ast.Call) and call.func is use and isinstance(stmt, ast.Expr)):
                return f"`{function.name}` is used other than called (line {use.lineno})"
            kernel = self._outer_kernel(call)
            if kernel is None:
                return f"`{function.name}` is called outside a kernel (line {use.lineno})"
            if id(kernel) in kernels:
                return f"`{kernel.name}` calls `{function.name}` more than once (line {use.lineno})"
            loops = (ast.For, ast.While, ast.AsyncFor, *FUNCTIONS)
            inner = next(p for p in self._ancestors(call) if isinstance(p, loops))
            if inner is not kernel:
                return f"`{function.name}` is called inside a loop or a nested function (line {use.lineno})"
            kernels.add(id(kernel))
        return None

    def _outer_kernel(self, node: ast.AST):
        kernels = [p for p in self._ancestors(node) if isinstance(p, FUNCTIONS) and self._is_kernel(p)]
        return kernels[-1] if kernels else None

    def _enclosing_function(self, node: ast.AST):
        return next((p for p in self._ancestors(node) if isinstance(p, FUNCTIONS)), None)

    def _is_traced(self, function) -> bool:
        """A @flyc.kernel or @flyc.jit function, a kernel's body helper, or one nested in them."""
        return any(
            isinstance(node, FUNCTIONS) and (is_jit_function(self.model, node) or id(node) in self._hosts)
            for node in self._ancestors(function, inclusive=True)
        )

    def _is_kernel(self, function) -> bool:
        return self._decorated(function, KERNEL_DECORATORS)

    def _decorated(self, function, symbols) -> bool:
        """A decorator of ``function`` (called or not) resolves to one of ``symbols``."""
        return any(decorator_symbol(self.model, d) in symbols for d in function.decorator_list)

    def _buffer(self, call: ast.Call, kernel, buffers: list[Buffer], taken: set[str]):
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
        base, n = name, 2
        while name in taken:
            name, n = f"{base}_{n}", n + 1
        taken.add(name)
        buffer = Buffer(name, offset, dtype, shape, explicit, [call])
        buffers.append(buffer)
        return buffer, self._field_view(buffer, view_of)

    def _assigned(self, expr: ast.expr) -> ast.expr | None:
        """``expr`` through single assignments (`bf16_ty = T.bf16`); None where a name has
        several bindings or one without a value."""
        for _ in range(MAX_DEPTH):
            if not isinstance(expr, ast.Name):
                break
            bindings = self.model.reaching_bindings(expr)
            if len(bindings) != 1 or bindings[0].value is None:
                return None
            expr = bindings[0].value
        return expr

    def _dtype(self, expr: ast.expr) -> str | None:
        """fx class of an MLIR element type expression (`T.f32`, `ir.F16Type.get()`,
        `fx.Float32.ir_type`), following single assignments such as `bf16_ty = T.bf16`."""
        expr = self._assigned(expr)
        if expr is None:
            return None
        found = fx_type_of_mlir_type(self.model, expr)
        if found:
            return found
        if isinstance(expr, ast.Attribute) and expr.attr == "ir_type":
            owner = self.model.resolve(expr.value) or ""
            if owner in ELEMENT_BYTES:
                return owner
        return None

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

    def _whole_buffer(self, group: Group, kernel, taken: set[str]) -> Buffer:
        """The allocator as one byte array, for a base used only through its address: its
        size is the one `allocator.ptr = SIZE`."""
        alloc = group.binding.name
        sizes = [
            s for s in group.deleted
            if isinstance(s, (ast.Assign, ast.AugAssign)) and any(
                isinstance(t, ast.Attribute) and t.attr == "ptr" for t in (s.targets if isinstance(s, ast.Assign) else [s.target])
            )
        ]
        if len(sizes) != 1 or not isinstance(sizes[0], ast.Assign) or any(
            isinstance(n, ast.Name) and self.model.binding_of(n) is group.binding for n in ast.walk(sizes[0].value)
        ):
            raise Unproven(
                f"`{alloc}.get_base()` is used only through its address (line {group.base_uses[0].lineno}): "
                f"migrated when one `{alloc}.ptr = SIZE` sizes it"
            )
        size = sizes[0].value
        self._size(size, size.lineno)
        self._visible_before(size, kernel, size.lineno)
        name = alloc.lstrip("_")
        for prefix in ("lds_alloc_", "smem_alloc_", "allocator_", "alloc_", "lds_", "smem_"):
            rest = name[len(prefix):]
            if name.startswith(prefix) and rest.isidentifier() and not rest[0].isdigit():
                name = rest
                break
        base, n = name, 2
        while name in taken:
            name, n = f"{base}_{n}", n + 1
        taken.add(name)
        return Buffer(name, Poly.const(0), "fx.Uint8", [size], BASE_ALIGNMENT, list(group.base_uses))

    def _rewrite_address_use(self, use, text: str, rewrites, deleted) -> None:
        """An LDS base whose address is taken: `extract_aligned_pointer_as_index(base)`
        becomes `fx.Index(fx.ptrtoint(ptr))` (the same index, from the fx pointer)."""
        call = self._parents.get(id(use))
        if isinstance(call, ast.Call) and not call.keywords and call.args == [use]:
            if self.model.resolve(call.func) in RAW_EXTRACT_POINTER:
                rewrites[id(call)] = (call, f"\0FX\0.Index(\0FX\0.ptrtoint({text}))")
                return
        if isinstance(call, ast.Call) and self.model.resolve(call.func) in RAW_MEMREF_VIEW and len(call.args) == 3 and call.args[1] is use:
            self._rewrite_view_of_base(call, text, rewrites, deleted)
            return
        helper = self._helper_param(use)
        if helper is not None:
            self._follow_into(helper, "address", 0, rewrites, deleted)
            return
        what = ast.unparse(call.func) if isinstance(call, ast.Call) else type(call).__name__
        raise Unproven(
            f"line {use.lineno}: the LDS base `{self._text(use)}` is used by `{what}`, which needs a builtin "
            "memref; `fx.SharedAllocator` gives an fx pointer (`fx.ptrtoint`, `.llvm_ptr`, `fx.ptr_load`)"
        )

    def _rewrite_uses(self, call, buffer, view, rewrites, deleted) -> None:
        self._buffer_at = buffer  # whose `.ptr` a `.get()` handed to raw ops becomes
        holder = self._parents.get(id(call))
        rank = len(buffer.shape)
        if isinstance(holder, ast.Assign) and holder.value is call and self._single_name(holder):
            binding = self._binding_of_target(holder.targets[0], holder)
            if binding is None or len(binding.scope.bindings.get(binding.name, ())) != 1:
                raise Unproven(f"`{holder.targets[0].id}` (line {holder.lineno}) is bound more than once")
            owner = self._parents.get(id(holder))
            if isinstance(owner, FUNCTIONS) and holder in owner.body:
                # Take the view once where the pointer was made (it dominates the rest of
                # the function) and use the name: a view expression rooted at `lds` inside a
                # runtime `if` makes FlyDSL's rewriter treat `lds` as branch state.
                rewrites[id(call)] = (call, view)
                view = holder.targets[0].id
            else:
                deleted.append(holder)
            uses = self.model.uses_of(binding)
            for use in uses:
                self._rewrite_pointer_use(use, view, rank, rewrites, deleted)
            gets = [self._parents.get(id(self._parents.get(id(u)))) for u in uses]
            if id(call) in rewrites and gets and all(id(g) in self._pointer_gets for g in gets):
                del rewrites[id(call)]  # only its fx pointer is used now: no view to take
                deleted.append(holder)
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
        helper = self._helper_param(ptr)
        if helper is not None:
            if inline:
                rewrites[id(ptr)] = (ptr, view)  # the helper receives the view
            self._follow_into(helper, "pointer", rank, rewrites, deleted)
            return
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
                uses = self.model.uses_of(binding)
                if any(self._raw_consumer(use) for use in uses):
                    # Raw ops take a builtin memref, which a view is not: the memref becomes
                    # the field's fx pointer, and every use a pointer op.
                    if rank != 1:
                        raise Unproven(
                            f"line {line}: a rank-{rank} LDS memref used by raw ops: its indices would need "
                            "linearising for `fx.ptr_load`/`fx.ptr_store`"
                        )
                    rewrites[id(call)] = (call, f"\0FIELD:{self._buffer_at.name}\0.ptr")
                    self._pointer_gets.add(id(call))
                    for use in uses:
                        self._rewrite_lds_pointer_use(use, self._text(use), rewrites, deleted)
                    return
                for use in uses:
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

    def _rewrite_view_of_base(self, call: ast.Call, base: str, rewrites, deleted) -> None:
        """`v = memref.view(memref_type, base, byte_offset, sizes=[])`: the same bytes as a
        typed fx pointer, `fx.recast_iter(fx.T, base + byte_offset)`; `v`'s uses become
        pointer loads and stores."""
        line = call.lineno
        sizes = next((k.value for k in call.keywords if k.arg == "sizes"), None)
        if [k.arg for k in call.keywords] != ["sizes"] or not (isinstance(sizes, ast.List) and not sizes.elts):
            raise Unproven(f"line {line}: `memref.view` with dynamic sizes has no fx pointer form")
        element = self._memref_element(call.args[0])
        if element is None:
            raise Unproven(
                f"line {line}: the element type of `{ast.unparse(call.args[0])}` (a `memref.view` of LDS) "
                "cannot be read: its fx class names the `fx.recast_iter`"
            )
        stmt = self._parents.get(id(call))
        if not (isinstance(stmt, ast.Assign) and stmt.value is call and self._single_name(stmt)):
            raise Unproven(f"line {line}: the `memref.view` of LDS is not bound to a name")
        binding = self._binding_of_target(stmt.targets[0], stmt)
        if binding is None or len(binding.scope.bindings.get(binding.name, ())) != 1:
            raise Unproven(f"`{stmt.targets[0].id}` (line {line}) is bound more than once")
        kind = call.args[0]
        if isinstance(kind, ast.Name):  # `scr_ty = T.memref(...)` only named this view's type
            typed = self.model.reaching_bindings(kind)
            if len(typed) == 1 and len(self.model.uses_of(typed[0])) == 1:
                holder = self._statement(typed[0].node)
                if isinstance(holder, ast.Assign) and self._single_name(holder):
                    deleted.append(holder)
        offset = call.args[2]
        if isinstance(offset, ast.Call) and len(offset.args) == 1 and [(k.arg, getattr(k.value, "value", None)) for k in offset.keywords] == [("index", True)]:
            offset = offset.args[0]  # `arith.constant(n, index=True)`: the byte offset n
        # A typed pointer needs its alignment known: a static offset keeps it, a run-time
        # index loses it ("alignment must be a positive multiple of element byte size").
        bytes_at = self._size(offset, line)
        if bytes_at.alignment() % ELEMENT_BYTES[element]:
            raise Unproven(f"line {line}: the byte offset `{ast.unparse(offset)}` is not a multiple of the element size")
        at = base if bytes_at.constant == 0 else f"{base} + {self._factor(offset)}"
        fx_class = "\0FX\0" + element[len("fx"):]  # the module's alias for fx
        rewrites[id(call)] = (call, f"\0FX\0.recast_iter({fx_class}, {at})")
        for use in self.model.uses_of(binding):
            self._rewrite_lds_pointer_use(use, binding.name, rewrites, deleted)

    def _memref_element(self, expr: ast.expr) -> str | None:
        """fx class of the element of a memref type expression (`T.memref(n, T.f32, ...)`,
        `MemRefType.get([n], F32Type.get(), ...)`), following single assignments."""
        expr = self._assigned(expr)
        if expr is None:
            return None
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and len(expr.args) >= 2:
            if expr.func.attr in ("memref", "get"):
                found = self._dtype(expr.args[1])
                return found if found in ELEMENT_BYTES else None
        return None

    def _raw_consumer(self, use) -> bool:
        """``use`` is an operand of a raw op that takes a builtin memref."""
        call = self._parents.get(id(use))
        return isinstance(call, ast.Call) and use in call.args and self.model.resolve(call.func) in (
            RAW_VECTOR_LOAD | RAW_VECTOR_STORE | RAW_EXTRACT_POINTER
        )

    def _rewrite_lds_pointer_use(self, use, text: str, rewrites, deleted) -> None:
        """A use of an LDS memref that is now the field's fx pointer (rank 1): loads and
        stores at `[i]` become `fx.ptr_load(p + i)`/`fx.ptr_store(v, p + i)` (alignment from
        the pointer: ABI on FlyDSL 0.3.1, the field's on 0.5.0), the address `fx.ptrtoint`."""
        call = self._parents.get(id(use))
        line = use.lineno
        if isinstance(call, ast.Compare) and all(isinstance(op, (ast.Is, ast.IsNot)) for op in call.ops):
            return  # `lds_out is None`: a pointer is not None either
        if any(ForeignHelpers._dual(node) for node in self._ancestors(use)):
            return  # already in the pointer form (another kernel's fix, in a helper it shares)
        alias = self._bound_to(use) if isinstance(call, (ast.Assign, ast.IfExp)) else None
        if alias is not None:  # `body_lds_x = lds_x`: the alias is the pointer too
            if id(alias) not in self._aliases:
                self._aliases.add(id(alias))
                for read in self.model.uses_of(alias):
                    self._rewrite_lds_pointer_use(read, alias.name, rewrites, deleted)
            return
        if isinstance(call, ast.Call) and use in call.args:
            symbol = self.model.resolve(call.func)
            keywords = {k.arg for k in call.keywords}
            args = call.args
            if symbol in RAW_EXTRACT_POINTER and args == [use] and not keywords:
                rewrites[id(call)] = (call, f"\0FX\0.Index(\0FX\0.ptrtoint({text}))")
                return
            if symbol in RAW_MEMREF_LOAD | RAW_VECTOR_LOAD and not keywords - {"alignment"}:
                typed = symbol in RAW_VECTOR_LOAD
                if len(args) == 2 + typed and args[typed] is use:
                    at = self._pointer_at(text, args[1 + typed], line)
                    bytes_of = self._byte_vector(args[0], call) if typed else None
                    if bytes_of is not None:
                        # a vector of one-byte floats (fp8) does not lower through a pointer on
                        # FlyDSL 0.3.1: load the bytes and bitcast them (the same instructions)
                        count, element = bytes_of
                        load = f"\0FX\0.ptr_load({at}, result_type=\0FX\0.T.vec({count}, \0FX\0.T.i8))"
                        rewrites[id(call)] = (call, f"{load}.bitcast(\0FX\0.Numeric.from_ir_type({element}))")
                        return
                    result = f", result_type={self._text(args[0])}" if typed else ""
                    rewrites[id(call)] = (call, f"\0FX\0.ptr_load({at}{result})")
                    return
            if symbol in RAW_MEMREF_STORE | RAW_VECTOR_STORE and not keywords - {"alignment"} and len(args) == 3 and args[1] is use:
                stmt = self._parents.get(id(call))
                if isinstance(stmt, ast.Expr) and stmt.value is call:
                    at = self._pointer_at(text, args[2], line)
                    value = args[0]
                    if isinstance(value, ast.Call) and (self.model.resolve(value.func) or "").split(".")[-1] == "bitcast" and (
                        self.model.resolve(value.func) or ""
                    ).startswith(("mlir.vector.", "shim.vector.")) and len(value.args) == 2 and not value.keywords:
                        # the bytes before the bitcast: the same store, and an fp8 vector
                        # does not lower through a pointer on FlyDSL 0.3.1
                        value = value.args[1]
                    rewrites[id(call)] = (call, f"\0FX\0.ptr_store({self._text(value)}, {at})")
                    return
        imported = self._imported_call(use)
        if imported is not None and self._foreign is not None:
            self._foreign.follow(use, *imported, rewrites, deleted)
            return
        helper = self._helper_param(use)
        if helper is not None:
            self._follow_into(helper, "lds pointer", 1, rewrites, deleted)
            return
        if isinstance(call, ast.keyword):
            call = self._parents.get(id(call))
        what = ast.unparse(call.func) if isinstance(call, ast.Call) else type(call).__name__
        where = self._defined_elsewhere(call)
        raise Unproven(
            f"line {line}: the LDS memref `{text}` is used by `{what}`{where}, which needs a builtin memref "
            "where the migration gives an fx pointer, and cannot be followed"
        )

    def _byte_vector(self, kind: ast.expr, at: ast.AST):
        """(count, element) texts when the vector type ``kind`` is `T.vec(count, element)`
        of a one-byte element that may be a float (an fp8 the builder chooses), with both
        readable at ``at``; else None."""
        vec = self._assigned(kind)
        if not (isinstance(vec, ast.Call) and isinstance(vec.func, ast.Attribute) and vec.func.attr == "vec" and len(vec.args) == 2 and not vec.keywords):
            return None
        count, element = vec.args
        if self._element_size(element) != 1 or self._dtype(element) in ("fx.Int8", "fx.Uint8"):
            return None
        if not all(self._reaches(n, at) for e in (count, element) for n in ast.walk(e) if isinstance(n, ast.Name)):
            return None
        return self._text(count), self._text(element)

    def _reaches(self, name: ast.Name, at: ast.AST) -> bool:
        """``name`` (read where a type was built) means the same where ``at`` reads it: bound
        once, in a scope around ``at`` (or a builtin or import)."""
        binding = self.model.binding_of(name)
        if binding is None:
            return name.id in ("int", "len", "max", "min")
        if len(binding.scope.bindings.get(name.id, ())) != 1:
            return False
        owner = binding.scope.node
        return owner is None or isinstance(owner, ast.Module) or any(p is owner for p in self._ancestors(at))

    def _imported_call(self, use):
        """(call, keyword or None) when ``use`` is an argument of a call to an imported name."""
        holder = self._parents.get(id(use))
        keyword = holder.arg if isinstance(holder, ast.keyword) else None
        call = self._parents.get(id(holder)) if isinstance(holder, ast.keyword) else holder
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func is not use):
            return None
        if keyword is None and use not in call.args:
            return None
        binding = self.model.binding_of(call.func)
        return (call, keyword) if binding is not None and binding.kind == "import" else None

    def _defined_elsewhere(self, call) -> str:
        if not isinstance(call, ast.Call):
            return ""
        symbol = self.model.resolve(call.func) or ""
        binding = self.model.binding_of(call.func) if isinstance(call.func, ast.Name) else None
        if binding is not None and binding.kind == "import" and symbol:
            return f" (`{symbol}`, another module)"
        return ""

    def _pointer_at(self, pointer: str, idxs, line: int) -> str:
        """`p + i` for the index list `[i]` (`p` for `[0]`)."""
        self._coord(idxs, 1, line)  # a literal one-element list
        node = idxs.elts[0]
        if isinstance(node, ast.Constant) and node.value == 0:
            return pointer
        kind = self.model.type_of(node)
        if not self._index_offsets_crash or kind.is_python or kind.name in ("fx.Int32", "fx.Int64", "fx.Uint32", "fx.Uint64"):
            return f"{pointer} + {self._factor(node)}"
        # An `fx.Index` offset crashes FlyDSL 0.3.1 (SIGSEGV in fly.infer_int_tuple_type);
        # an i32 one is what the pointer's offset becomes anyway.
        return f"{pointer} + \0FX\0.Int32({self._text(node)})"

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
        helper = self._helper_param(use)
        if helper is not None:
            self._follow_into(helper, "memref", rank, rewrites, [])
            return
        what = ast.unparse(call.func) if isinstance(call, ast.Call) else type(call).__name__
        raise Unproven(
            f"line {line}: the memref from `.get()` is used by `{what}`; a layout view is not a "
            "builtin memref (only `memref.load`/`memref.store` on it can be mapped)"
        )

    # --- pointers and memrefs passed to helpers of this file ----------------------------
    def _helper_param(self, use: ast.expr):
        """(helper, parameter binding, call) when ``use`` is an argument of a call to a
        function defined in this file; None otherwise."""
        parent = self._parents.get(id(use))
        keyword = None
        if isinstance(parent, ast.keyword):
            keyword = parent.arg
            parent = self._parents.get(id(parent))
        if not (isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func is not use):
            return None
        callee = self.model.binding_of(parent.func)
        function = getattr(callee, "node", None)
        if not isinstance(function, FUNCTIONS):
            return None
        if any(isinstance(a, ast.Starred) for a in parent.args) or any(k.arg is None for k in parent.keywords):
            raise Unproven(f"line {use.lineno}: `{function.name}(*args)` receives LDS: which parameter cannot be told")
        args = function.args
        if keyword is not None:
            param = next((a for a in (*args.posonlyargs, *args.args, *args.kwonlyargs) if a.arg == keyword), None)
        else:
            positional = [*args.posonlyargs, *args.args]
            index = next(i for i, a in enumerate(parent.args) if a is use)
            param = positional[index] if index < len(positional) else None
        if param is None:
            raise Unproven(f"line {use.lineno}: `{function.name}` takes LDS through `*args`/`**kwargs`")
        bindings = self.model.function_scope(function).bindings.get(param.arg, ())
        if len(bindings) != 1:
            raise Unproven(f"`{param.arg}` of `{function.name}` (line {function.lineno}) is rebound")
        return function, bindings[0], parent

    def _follow_into(self, helper, kind: str, rank: int, rewrites, deleted) -> None:
        """The helper now receives a layout view: rewrite its parameter's uses, once."""
        function, binding, call = helper
        key = (id(function), binding.name)
        seen = self._followed.get(key)
        if seen is not None:
            if seen[:2] != (kind, rank):
                raise Unproven(
                    f"line {call.lineno}: `{function.name}` receives LDS buffers of different kinds or "
                    f"ranks through `{binding.name}`"
                )
            seen[2].add(id(call))
            return
        self._followed[key] = (kind, rank, {id(call)}, function, binding)
        if len(self._followed) > MAX_DEPTH:
            raise Unproven(f"line {call.lineno}: LDS is passed through too many helpers")
        for use in self.model.uses_of(binding):
            if kind == "pointer":
                self._rewrite_pointer_use(use, binding.name, rank, rewrites, deleted)
            elif kind == "address":
                self._rewrite_address_use(use, binding.name, rewrites, deleted)
            elif kind == "lds pointer":
                self._rewrite_lds_pointer_use(use, binding.name, rewrites, deleted)
            else:
                self._rewrite_memref_use(use, binding.name, rank, rewrites)

    def _check_helpers(self) -> None:
        """A helper whose parameter now takes a view must take one at every call."""
        for kind, _, calls, function, binding in self._followed.values():
            for call in self.model.calls_to(function):
                if id(call) not in calls:
                    raise Unproven(
                        f"`{function.name}` receives an LDS {kind} through `{binding.name}`, but its call "
                        f"at line {call.lineno} passes something else"
                    )

    def _coord(self, idxs, rank: int, line: int) -> str:
        if idxs is None:
            return ", ".join("0" for _ in range(rank))
        if not isinstance(idxs, (ast.List, ast.Tuple)) or any(isinstance(e, ast.Starred) for e in idxs.elts):
            raise Unproven(f"line {line}: the index list `{ast.unparse(idxs)}` is not a literal list")
        if len(idxs.elts) != rank:
            raise Unproven(f"line {line}: {len(idxs.elts)} indices for a rank-{rank} buffer")
        return ", ".join(self._text(e) for e in idxs.elts)

    def _fresh(self, kernel, name: str, taken: set[str] = frozenset()) -> str:
        return unbound_name(name, self._scope_at(kernel), self.model.module_scope, taken=taken)

    def _fresh_in_kernel(self, kernel, name: str) -> str:
        # The names read, bound or taken as parameters anywhere in the kernel's span (its
        # decorators included): the file's list of them, not a walk of a 3,000-line builder.
        start = min((d.lineno, d.col_offset) for d in (kernel, *kernel.decorator_list))
        end = (kernel.end_lineno, kernel.end_col_offset)
        taken = {
            node.id if isinstance(node, ast.Name) else node.arg
            for node in self.model.nodes_of((ast.Name, ast.arg))
            if start <= (node.lineno, node.col_offset) and (node.end_lineno, node.end_col_offset) <= end
        }
        base, n = name, 2
        while name in taken:
            name, n = f"{base}{n}", n + 1
        return name

    @staticmethod
    def _bodies(node):
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                yield body

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

