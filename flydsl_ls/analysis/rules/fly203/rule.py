import ast

from flydsl_ls.analysis.rules.base import Rule
from flydsl_ls.analysis.rules.fly203.cases import INVALID, VALID
from flydsl_ls.analysis.rules.fly203.model import ALLOCATOR, SMEM_PTR, Group, Unproven
from flydsl_ls.analysis.rules.fly203.planner import Planner
from flydsl_ls.analysis.rules.module_scope import ModuleScope, Neighbours, Readers


def _names_a_smem_class(text: str, statements) -> bool:
    """The statements it judges: those naming either class (its own gate, see visit_Module)."""
    return "SmemAllocator" in text or "SmemPtr" in text


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
    (row-major), `.load(idx)` with `view[idx]` and `.store(v, idx)` with
    `fx.memref_store(v, view, idx)` (`memref.load/store` on a `.get()` result alike), and
    deletes the allocator, its offset bookkeeping, `get_base()` and `finalize()`. The IR
    differs (one LDS allocation per field instead of a byte array plus `memref.view`), and
    LDS may shrink (untouched buffers and padding go), hence unsafe.

    What it follows. Offsets are integer polynomials over the sizes the builder knows when
    it runs: `allocator._align(x, a)` rounds them up, `max(a, b)` is at least either, so
    buffers are ordered and checked for overlap without the sizes. All the allocators a
    kernel uses (a ping-pong pair) become one struct: FlyDSL allows one `SharedAllocator`
    per kernel. Views of one region with another type (a region reused by a later phase:
    same offset, other dtype or shape) become the members of an `@fx.union` field; the
    struct is then navigated unpeeked (`lds.region.member.peek().view(...)`), since a peeked
    struct cannot hold a union. `_align` on sizes rather than the bump pointer stays, as
    `(x + a - 1) // a * a`. A pointer or its `.get()` memref passed to a function of this
    file is followed into it: the function receives the view, and its parameter's
    loads/stores are rewritten (every call must pass one). LDS used in a body function
    that each kernel calls once (not in a loop) gets the allocation there. An allocator
    built in a builder function and used by the kernel nested in it is the usual case.

    LDS handed to raw ops (aiter's kernels on FlyDSL 0.3.1). Those ops take a builtin memref,
    which a layout view is not, so the buffer is reached through its fx pointer instead (the
    same instructions; FlyDSL's maintainers migrated such kernels this way):
    a `.get()` memref used by `vector.store/load`, `memref.load/store` or
    `memref.extract_aligned_pointer_as_index` becomes `lds.<field>.ptr`, and its accesses at
    `[i]` `fx.ptr_store(v, p + i)`/`fx.ptr_load(p + i, result_type=ty)` (rank 1; the
    `alignment=` goes: the pointer's own alignment is used, ABI on 0.3.1);
    an allocator used only through its base (sized by one `allocator.ptr = SIZE`, no
    `SmemPtr`) becomes one byte array, `fx.Array[fx.Uint8, SIZE, 1024]`, whose `.ptr`
    replaces `get_base()`: `extract_aligned_pointer_as_index(base)` becomes
    `fx.Index(fx.ptrtoint(p))` and `memref.view(T.memref(n, T.f32), base, off, sizes=[])`
    becomes `fx.recast_iter(fx.Float32, p + off)` (a static byte offset: a typed pointer needs
    its alignment known). A never-read private alias of the allocator goes with it. Under
    `from __future__ import annotations` the struct is written `S = fx.struct["field": type,
    ...]` (string annotations cannot be sized). The allocation goes at the kernel's top when
    its first LDS statement is a `with` (`with _if_then(op):` fills a region built earlier).

    LDS handed to a function of another project module (aiter's `c_shuffle_epilog` in
    `mfma_epilogues.py`, `lds_store_16b_xor16` in `mfma_preshuffle_pipeline.py`): the same
    fix edits that module too (a fix that spans files: `check --fix`, `migrate` and the
    editor's quick fix apply both files or neither). Each raw LDS op there on the parameter
    (and in the helpers of that module it passes it to) gets the pointer form beside the old
    one, `(fx.ptr_load(p + i, result_type=ty) if isinstance(p, fx.Pointer) else
    vector.load_op(ty, p, [i]))`, chosen when the kernel is traced: a kernel that still
    passes a builtin memref (any caller, in any file) traces exactly as before, so no caller
    has to be migrated with this one, and a second kernel's fix finds the form there and
    leaves it. A callable the helper hands the pointer back to (`write_row_to_lds(...,
    lds_out=lds_out)`, a function of the kernel's file passed in) is followed like the
    file's own helpers. aiter's `vector` shim (`vector.store`, `vector.load_op`) counts as
    the raw ops it wraps.

    Offsets that are not static keep the old layout (aiter's mixed-MoE stages): LDS padded
    under an `if` to cap occupancy (`allocator.ptr += min_lds - cur_lds`), sizes chosen by a
    condition, an element type the arch chooses (`default_f8_type()`), a base also viewed
    raw (`memref.view(T.memref(n, T.f32), base, off, sizes=[])`), offsets read from
    `p.byte_offset`. Each allocator becomes one byte array sized as `finalize()` sized its
    global, `fx.Array[fx.Uint8, max(128, (pong_bytes + 127) // 128 * 128), 1024]`; its
    bookkeeping stays as the integer arithmetic it is (`allocator.ptr` becomes the local
    `pong_bytes`, `_align` rounds up), so every buffer keeps its byte offset and LDS its
    size (and the occupancy its padding caps); each `.get()` or `memref.view` becomes a
    typed pointer at its offset, `fx.recast_iter(fx.Int32, lds.pong.ptr + tid_off)` (an
    element type the builder chooses: `fx.Numeric.from_ir_type(t)`), used as above. FlyDSL
    0.3.1 lowers no fp8 vector through a pointer: an fp8 vector load reads the bytes and
    bitcasts them (`fx.ptr_load(p + i, result_type=fx.T.vec(n, fx.T.i8)).bitcast(...)`), a
    stored `vector.bitcast(t, v)` stores `v`; and `pointer + fx.Index` crashes it, so on a
    release before 0.5.0 an offset not known to be an int is `fx.Int32(i)`.

    No fix, and the message names the line and what blocks it: offsets computed at run
    time, buffers that overlap without starting together (in their own fields), a memref that
    reaches a function of another module the fix cannot give the pointer form (the message
    names that file's line and op; without a project, e.g. one file on standard input, the
    op it reaches), a raw op with no pointer form here (a rank-2 memref, a run-time `memref.view`
    offset), a pointer stored or passed where it cannot be followed, index lists that are
    not literal, or a dtype with no fx class. The APIs it uses exist in every
    tabulated FlyDSL release (0.2.0 on), aiter's 0.3.1 included; the fix is withheld where
    the project's release lacks one. The pointer forms were compiled on 0.3.1 and 0.5.0.
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
    # It follows allocators and what they hand out: the statements naming them, those
    # reading what they bind (through module-level aliases), and their neighbours in full.
    module_scope = ModuleScope(_names_a_smem_class, readers=Readers.FOLLOW, neighbours=Neighbours.FULL)
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
        "    s_red = lds.s_red.view(fx.make_layout(SLOTS, 1))\n"
        "    fx.memref_store(v, s_red, i)"
    )

    def visit_Module(self, node: ast.Module) -> None:
        if "SmemAllocator" not in self.model.source and "SmemPtr" not in self.model.source:
            return  # neither name is used (so nothing can resolve to them): skip the walks
        # The calls of the two classes, found once for every group (``node`` is the model's tree).
        calls: dict[str, list[ast.Call]] = {ALLOCATOR: [], SMEM_PTR: []}
        for call in self.model.nodes_of(ast.Call):
            symbol = self.model.resolve(call.func)
            if symbol in calls:
                calls[symbol].append(call)
        planner = Planner(self.model, self.ctx, self.model.parent_map(node), calls)
        groups = planner.groups()
        layouts: dict[int, str] = {}  # id(group) -> why its own layout could not be planned
        for group in groups:
            try:
                planner.survey(group)
            except Unproven as why:
                group.reason = layouts[id(group)] = str(why)
                self._keep_layout(planner, [group])
        families = planner.families(groups)
        for family in families:
            name = self._struct_name(family, len(families) > 1)
            try:
                edits = (planner.plan_region if family[0].region else planner.plan)(family, name)
            except Unproven as why:
                for group in family:
                    group.reason = layouts[id(group)] = str(why)
                if not family[0].region and self._keep_layout(planner, family):
                    try:
                        edits = planner.plan_region(family, name)
                    except Unproven as why:
                        for group in family:
                            group.reason = self._both(layouts[id(group)], str(why))
                        continue
                else:
                    continue
            for group in family:
                group.reason = None
                group.edits, group.elsewhere = edits, planner.elsewhere
        findings: dict[int, tuple[ast.Call, str, object]] = {}  # id(call) -> the last verdict
        claimed: set[int] = set()
        for group in groups:
            claimed.update(id(c) for c in group.flagged)
            fix = self.replace_edits(group.edits, group.elsewhere) if group.reason is None else None
            for call in group.flagged:
                findings[id(call)] = (call, self._message(call, group), fix)
        for call in calls[SMEM_PTR]:
            if id(call) not in claimed:
                findings[id(call)] = (
                    call,
                    self._describe(call)
                    + "; no fix: its base memref does not come from a "
                    "`SmemAllocator(...)` of this file",
                    None,
                )
        for call, message, fix in findings.values():
            self._report_in_place(call, message, fix)

    def _keep_layout(self, planner: Planner, family: list[Group]) -> bool:
        """The migration that keeps the old layout (one byte array per allocator), where the
        per-buffer one failed: True when every group of ``family`` can take it; else their
        reasons say why neither can."""
        reasons = {}
        for group in family:
            first = group.reason
            try:
                planner.survey_region(group)
            except Unproven as why:
                reasons[id(group)] = self._both(first, str(why))
            group.reason = first
        if reasons:
            for group in family:
                group.region = False
                group.reason = reasons.get(id(group), group.reason)
            return False
        for group in family:
            group.reason = None
        return True

    @staticmethod
    def _both(first: str, second: str) -> str:
        if first == second:
            return first
        return f"{first}; in its old layout (one byte array per allocator): {second}"

    def _report_in_place(self, call: ast.Call, message: str, fix) -> None:
        """Report ``call`` with the engine's ancestors of it in place (its statement range
        needs them): from here, not from a ``visit_Call``, so that a run of this rule does
        not walk the whole module for a few calls."""
        parents = self.model.parent_map(self.model.tree)
        chain = []
        node = parents.get(id(call))
        while node is not None:
            chain.append(node)
            node = parents.get(id(node))
        around = self.ctx.parents
        saved = around[:]
        around[:] = reversed(chain)
        try:
            self.report(call, message, fix=fix)
        finally:
            around[:] = saved

    def replace_edits(self, edits, elsewhere=()):
        from flydsl_ls.analysis.model.diagnostic import Applicability, Fix

        return Fix(
            title=f"{self.fix_title} (unsafe)",
            applicability=Applicability.UNSAFE,
            edits=tuple(edits),
            elsewhere=tuple(elsewhere),
        )

    @staticmethod
    def _struct_name(family: list[Group], multiple: bool) -> str:
        if not multiple:
            return "SharedStorage"
        name = family[0].binding.name if len(family) == 1 else family[0].kernel.name
        parts = [p for p in name.split("_") if p]
        return "".join(p[:1].upper() + p[1:] for p in parts) + "Storage"

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
        return text + f"; no fix: {group.reason}"

    VALID = VALID
    INVALID = INVALID
