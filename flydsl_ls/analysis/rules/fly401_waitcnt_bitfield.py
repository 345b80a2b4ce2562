import ast

from flydsl_ls.analysis.model import waitcnt
from flydsl_ls.analysis.model.rewrite import fx_alias
from flydsl_ls.analysis.model.statements import delete_statement
from flydsl_ls.analysis.model.waitcnt_counts import counted_wait
from flydsl_ls.analysis.model.waitcnt_facts import (
    COUNTER_CONSTANT,
    WAIT_CALLS,
    Site,
    Value,
    facts_for,
)
from flydsl_ls.analysis.rules._arch import arch_at, why_unknown
from flydsl_ls.analysis.rules.base import Invalid, Rule, Valid


# --- the rule ---------------------------------------------------------------------------
class WaitcntBitfield(Rule):
    """
    A hand-encoded `s_waitcnt` bitfield: `rocdl.s_waitcnt(<int>)` through any alias (the DSL
    `from flydsl.expr import rocdl`, `fx.rocdl.s_waitcnt(bits)`, the raw
    `flydsl._mlir.dialects.rocdl`), the per-kernel shims that forward a bitfield to it
    (`_s_waitcnt(val)`, `wait_vmcnt(n)`: recognised by their body, also in a sibling module
    of the project, and by name when that module cannot be read),
    `_encode_waitcnt(vmcnt=.., lgkmcnt=..)` encoders, and magic
    `*CNT_*` constants such as `LGKMCNT_0_ONLY=0xC07F`. The bit layout differs per arch
    (CDNA gfx942/gfx950: vmcnt [3:0]+[15:14], expcnt [6:4], lgkmcnt [11:8]; RDNA gfx11xx/
    gfx120x: expcnt [2:0], lgkmcnt [9:4], vmcnt [15:10]), so a literal is arch-fragile.

    The fix writes `fx.rocdl.s_waitcnt(vmcnt=.., lgkmcnt=.., expcnt=..)` naming only the
    counters that wait (a counter at its maximum means "no wait"). `s_waitcnt(0)` becomes
    `vmcnt=0, lgkmcnt=0, expcnt=0`: it is never narrowed. The value is evaluated statically
    (literals, constants, bit arithmetic, calls of local side-effect-free helpers); a value
    that flows through an object (`traits.LGKMCNT_0_ONLY`) or a runtime variable gets the
    diagnostic without a fix, and the message names the first value it could not follow
    (an object's attribute, a container element, a build-time parameter).

    The fix is **safe** only when the target arch is known (`target-arch` setting or
    `FLYDSL_GPU_ARCH`) and FlyDSL's own encoder for that arch, given our keywords, returns
    exactly the original bitfield. The legacy encoders set bits FlyDSL never emits: their
    default `lgkmcnt=63` puts ones in bits 13:12, outside CDNA's 4-bit lgkmcnt field, so
    `_encode_waitcnt(vmcnt=0)` is `0x3F70` while `fx.rocdl.s_waitcnt(vmcnt=0)` is `0x0F70`.
    The hardware reads the counter fields only, so the wait is the same, but the immediate in
    the IR differs: that fix is **unsafe**, and so is one that relies on a helper whose module
    flydsl-ls cannot read (its body is then assumed from its name). There is no fix without a known arch,
    for gfx1250 (the keyword form raises there: the message names gfx1250's split waits,
    `fx.rocdl.s_wait_loadcnt`/`s_wait_storecnt`/`s_wait_dscnt`/`s_wait_expcnt`, in 0.3.1 and
    0.5.0, which are themselves not flagged), for other unsupported arches, or when the project's FlyDSL is older
    than 0.3.0 (the keyword form appeared then). Text inside inline-assembly strings is never
    touched. The keyword form picks its encoding from the arch FlyDSL compiles for; the fix
    is exact for the configured one. Tuned attention kernels are scheduler-sensitive: check
    performance after migrating their waits.

    A count handed over whole as the bitfield, `rocdl.s_waitcnt(num_b_loads)` with
    `num_b_loads` a build-time sum, product or quotient, is vmcnt's low field on CDNA only up
    to 15: at 16 the bitfield carries into expcnt and means `vmcnt=0, expcnt=1` (it waits for
    every load), and FlyDSL's own tests build 16 (bf16/fp16 with `tile_n * tile_k` = 32768 and
    async copy). `vmcnt=num_b_loads` would wait for fewer loads there, so the fix decodes the
    fields, `fx.rocdl.s_waitcnt(vmcnt=n % 16, lgkmcnt=n // 256 % 16, expcnt=n // 16 % 8)`: the
    same wait for every count (unsafe: the immediate differs in bits no counter uses), and the
    message says that `vmcnt=n` is what a count of loads in flight means.
    """

    code = "FLY401"
    name = "waitcnt-bitfield"
    summary = "`rocdl.s_waitcnt(<int or constant>)`, `_encode_waitcnt(...)`, `_s_waitcnt(...)`, magic `*CNT_*` constants"
    replacement = "`fx.rocdl.s_waitcnt(vmcnt=, lgkmcnt=, expcnt=)` naming only the counters that wait"
    fix_safety = (
        "safe when the target arch is known and the bitfield decodes exactly; unsafe for a count "
        "(the same immediate only in the counter's range, 0-15 for a raw count); otherwise none"
    )
    fix_title = "Convert to fx.rocdl.s_waitcnt"
    example_before = "rocdl.s_waitcnt(_encode_waitcnt(lgkmcnt=0))"
    example_after = "fx.rocdl.s_waitcnt(lgkmcnt=0)"

    def __init__(self, ctx):
        super().__init__(ctx)
        self.facts = facts_for(self.model)

    def visit_Call(self, node: ast.Call) -> None:
        site = self.facts.site(node)
        if site is not None:
            self._report_site(node, site)
            return
        if self.facts.is_encoder_call(node) and not self._consumed(node):
            value = self.facts.value(node)
            self.report(
                node,
                f"`{_spelled(self, node)}` hand-encodes an s_waitcnt bitfield{self._meaning(value, node)}: "
                "pass the counters to `fx.rocdl.s_waitcnt(vmcnt=, lgkmcnt=, expcnt=)` where it is used",
            )

    def visit_keyword(self, node: ast.keyword) -> None:
        if node.arg is None or not COUNTER_CONSTANT.search(node.arg):
            return
        value = self.facts.value(node.value)
        if value is None:
            return
        self.report(
            node,
            f"magic s_waitcnt bitfield `{node.arg}={self.text(node.value)}`{self._meaning(value, node)} "
            "travels through an object: pass counters to `fx.rocdl.s_waitcnt(...)` where it is used "
            "(no fix: the waits that read it are elsewhere; migrate them, then drop the field)",
        )

    # --- helpers ----------------------------------------------------------------------------
    def _consumed(self, node: ast.Call) -> bool:
        parent = self.ctx.parent
        if isinstance(parent, ast.keyword) and len(self.ctx.parents) > 1:
            parent = self.ctx.parents[-2]
        if isinstance(parent, ast.Call):
            site = self.facts.site(parent)
            if site is not None and site.bits_expr is node:
                return True
            helper = self.facts.helper_called(parent)
            if helper is not None and helper.shim:
                return True
        if isinstance(parent, (ast.Assign, ast.AnnAssign)):
            return True  # reported where the name is used
        function = self.ctx.enclosing_function()
        return function is not None and id(function) in self.facts.helpers

    def _unknown_part(self, root: ast.expr, depth: int = 0) -> str:
        """What in the wait's arguments has no static value, said in words ("" if none is found):
        the first unknown name, attribute or element, followed through assignments."""
        pending = [*root.args, *(k.value for k in root.keywords)] if isinstance(root, ast.Call) else [root]
        while pending:
            expr = pending.pop(0)
            if isinstance(expr, (ast.Attribute, ast.Subscript, ast.Name)) and self.facts.value(expr) is None:
                return self._why_unknown(expr, depth)
            if isinstance(expr, ast.Call):
                pending.extend([*expr.args, *(k.value for k in expr.keywords)])
            elif not isinstance(expr, (ast.Attribute, ast.Subscript, ast.Name)):
                pending.extend(c for c in ast.iter_child_nodes(expr) if isinstance(c, ast.expr))
        return ""

    def _why_unknown(self, expr: ast.expr, depth: int) -> str:
        spelled = self.text(expr)
        if isinstance(expr, ast.Attribute):
            return f"it reads `{spelled}`, an attribute of an object, whose value is not followed"
        if isinstance(expr, ast.Subscript):
            return f"it reads `{spelled}`, an element of a container, whose value is not followed"
        binding = self.model.binding_of(expr)
        kind = binding.kind if binding is not None else None
        if kind == "param":
            return f"it reads the parameter `{spelled}`, known only when the kernel is built"
        if kind in ("for", "comprehension"):
            return f"it reads the loop variable `{spelled}`"
        if kind == "assign" and binding.value is not None and depth < 4:
            inner = self._unknown_part(binding.value, depth + 1)
            if inner:
                return inner if inner.endswith(")") and "(through" in inner else f"{inner} (through `{spelled}`)"
        return f"`{spelled}` has no single constant value here"

    def _meaning(self, value: Value | None, node: ast.AST) -> str:
        if value is None:
            return ""
        found = waitcnt.support(arch_at(self.ctx, node))
        if found is None or found.layout is None:
            return f" ({_hex(value.bits)})"
        decoded = waitcnt.decode(found.layout, value.bits)
        if decoded is None:
            return f" ({value.bits})"
        return f" ({_hex(value.bits)}: `{decoded.keywords or 'no wait'}` on {found.arch})"

    def _what_to_write(self) -> str:
        """The wait to write on the target arch: the keyword form where FlyDSL's `s_waitcnt`
        dispatches (gfx942, gfx950, gfx11xx, gfx120x); gfx1250's split waits there, as the
        keyword form raises (both exist in 0.3.1 and 0.5.0)."""
        found = waitcnt.support(self.ctx.options.target_arch)
        if found is not None and found.arch.startswith("gfx125"):
            return (
                f"write {found.arch}'s split waits for the counters it must drain, `fx.rocdl.s_wait_loadcnt(n)`, "
                "`fx.rocdl.s_wait_storecnt(n)`, `fx.rocdl.s_wait_dscnt(n)`, `fx.rocdl.s_wait_expcnt(n)` "
                f"(`fx.rocdl.s_waitcnt(vmcnt=...)` raises on {found.arch})"
            )
        if found is not None and found.layout is None:
            return (
                f"keep the bitfield on {found.arch}, or write `fx.rocdl.s_waitcnt(vmcnt=, lgkmcnt=, expcnt=)` "
                "where the kernel is built for gfx942, gfx950, gfx11xx or gfx120x (the keyword form raises elsewhere)"
            )
        return "write `fx.rocdl.s_waitcnt(vmcnt=, lgkmcnt=, expcnt=)`"

    def _report_site(self, node: ast.Call, site: Site) -> None:
        spelled = _spelled(self, node)
        head = f"`{spelled}` hand-encodes s_waitcnt counters"
        options = self.ctx.options
        value = site.value
        if value is None and self._report_count(node, site, head):
            return
        if value is None:
            reason = site.why_not or self._unknown_part(node) or "its bitfield cannot be evaluated statically"
            self.report(node, f"{self._what_to_write()}: {head} (no fix: {reason})")
            return
        chosen = waitcnt.plan(value.bits, arch_at(self.ctx, node), options.flydsl_version)
        decoded = chosen.decoded
        if decoded is None:
            reason = why_unknown(self.ctx, chosen.reason)
            self.report(
                node,
                f"{self._what_to_write()}: {head} ({_hex(value.bits)}) (no fix: {reason})",
                note=reason,
            )
            return
        keywords = decoded.keywords
        fx, imports = fx_alias(self.model)
        replacement = f"{fx}.rocdl.s_waitcnt({keywords})"
        meaning = f"`{keywords}`" if keywords else "no wait at all"
        message = f"use `{replacement}`: {head}; on {chosen.arch}, {_hex(value.bits)} is {meaning}"
        if value.bits == 0:
            message += " (it waits for every counter; narrow it by hand only on purpose)"
        caveats = [chosen.reason] if not chosen.safe else []
        caveats += _assumed(value.assumed)
        safe = not caveats
        fixable = site.fixable_shape and self._replaceable(node, site)
        if caveats:
            message += " (unsafe: " + "; ".join(caveats) + ")"
        if not fixable:
            self.report(node, message + " (no automatic fix here)")
            return
        self.report(
            node,
            message,
            fix=self.replace(node, replacement, self.fix_title, safe=safe, extra=imports),
            note=None if safe else "; ".join(caveats),
        )

    def _report_count(self, node: ast.Call, site: Site, head: str) -> bool:
        """A bitfield that counts one unknown (``_waitcnt_vm_n(ctx.NUM_DMA_V)``): the keyword
        form names that unknown. Always unsafe: FlyDSL's keyword form raises on a count past
        the counter's maximum, which the bitfield arithmetic masked."""
        options = self.ctx.options
        arch = arch_at(self.ctx, node)
        found = waitcnt.support(arch)
        chosen = waitcnt.plan(0, arch, options.flydsl_version)
        if found is None or found.layout is None or chosen.decoded is None or not site.fixable_shape:
            return False
        counted = counted_wait(self.facts, node, self.ctx.enclosing_function(), found.layout)
        if counted is None or "\n" in self.text(counted.unknown) or not self._replaceable(node, site):
            return False
        spelled = self.text(counted.unknown)
        fx, imports = fx_alias(self.model)
        replacement = f"{fx}.rocdl.s_waitcnt({counted.keywords(spelled)})"
        top = found.layout.maximum(counted.counter)
        caveats = [f"`{spelled}` is taken to be a count of 0-{top}, which FlyDSL's keyword form checks"]
        if counted.upto is not None:
            # A raw count as the whole bitfield (CDNA: vmcnt[3:0], expcnt[6:4], lgkmcnt[11:8]):
            # 16 and more carry into expcnt and wait for every load. `vmcnt=N` would wait for
            # fewer (a race where the carry drained the queue): the fix decodes the fields.
            past = counted.upto + 1
            n = spelled if isinstance(counted.unknown, (ast.Name, ast.Attribute)) else f"({spelled})"
            replacement = f"{fx}.rocdl.s_waitcnt(vmcnt={n} % 16, lgkmcnt={n} // 256 % 16, expcnt={n} // 16 % 8)"
            caveats = [
                f"the same wait for every count: as a bitfield, {past} and more carry into expcnt "
                f"({past} means `{counted.spill}`), so if `{spelled}` is meant as the number of loads "
                f"in flight, `vmcnt={spelled}` is what the kernel wants, a weaker wait past {counted.upto}; "
                "the immediate differs from the legacy one only in bits no counter uses"
            ]
        if not counted.exact:
            caveats.append("the legacy immediate sets bits outside the counter fields, FlyDSL's does not")
        caveats += _assumed(counted.assumed)
        self.report(
            node,
            f"use `{replacement}`: {head}; on {found.arch}, it waits for `{counted.counter}={spelled}`"
            + "".join(f", `{c}={v}`" for c, v in counted.others.items())
            + " (unsafe: " + "; ".join(caveats) + ")",
            fix=self.replace(node, replacement, self.fix_title, safe=False, extra=(*imports, *self._spent_local(node))),
            note="; ".join(caveats),
        )
        return True

    def _spent_local(self, node: ast.Call) -> tuple:
        """``bits = (n & 0xF) | ...`` read by this wait only: it goes with the wait (the
        generic cleanup keeps it, as arithmetic on a parameter might build IR)."""
        bits = node.args[0] if len(node.args) == 1 else None
        function = self.ctx.enclosing_function()
        binding = self.model.binding_of(bits) if isinstance(bits, ast.Name) else None
        if binding is None or binding.kind != "assign" or binding.scope.node is not function:
            return ()
        reads = [n for n in ast.walk(function) if isinstance(n, ast.Name) and n.id == bits.id]
        statement = self.model.parent_map(function).get(id(binding.value))
        if len(reads) != 2 or len(binding.scope.bindings[bits.id]) != 1 or not isinstance(statement, ast.Assign):
            return ()
        return (delete_statement(self.model, statement),)

    def _replaceable(self, node: ast.Call, site: Site) -> bool:
        if "#" in self.text(node):
            return False  # a comment inside the call would be lost
        if site.bits_expr is not None and self.model.resolve(node.func) in WAIT_CALLS:
            return True
        helper = self.facts.helper_called(node)
        if helper is not None and helper.returns_wait:
            return True
        # A shim returning None: replace it only where its result is discarded.
        return isinstance(self.ctx.parent, ast.Expr)

    VALID = [
        Valid("import flydsl.expr as fx\nfx.rocdl.s_waitcnt(lgkmcnt=0)\n", {"target_arch": "gfx942"}),
        Valid("from flydsl.expr import rocdl\nrocdl.s_waitcnt(vmcnt=0, lgkmcnt=0)\n"),
        # gfx1250 split waits are not legacy.
        Valid(
            "import flydsl.expr as fx\nfx.rocdl.s_wait_loadcnt(0)\nfx.rocdl.s_wait_dscnt(0)\n"
            "fx.rocdl.s_wait_tensorcnt(0)\nfx.rocdl.s_wait_asynccnt(0)\nfx.rocdl.wait_asyncmark(0)\n",
            {"target_arch": "gfx1250"},
        ),
        # Inline assembly text and comments are not calls.
        Valid(
            "from flydsl._mlir.dialects import llvm\n"
            'llvm.InlineAsmOp(None, [], "s_waitcnt lgkmcnt(0)\\n\\ts_barrier", "", has_side_effects=True)\n'
            "# rocdl.s_waitcnt(0)\n"
            'msg = "rocdl.s_waitcnt(0x3F70)"\n',
            {"target_arch": "gfx942"},
        ),
        # Another library's s_waitcnt, and a per-arch encoder called directly.
        Valid("import mylib\nmylib.s_waitcnt(0)\n", {"target_arch": "gfx942"}),
        # A shim's own forwarding call is reported at the shim's call sites, not inside it.
        Valid(
            "from flydsl.expr import rocdl\n\ndef _s_waitcnt(val):\n    rocdl.s_waitcnt(val)\n",
            {"target_arch": "gfx942"},
        ),
        # A reference to the function is not a call.
        Valid("from flydsl.expr import rocdl\nwait = rocdl.s_waitcnt\n", {"target_arch": "gfx942"}),
        # Unrelated counts are not wait-counter constants.
        Valid("CNT_SU = 4\nCOMPUTE_CNT_SU = 4\nf(CNT_SU=4)\n", {"target_arch": "gfx942"}),
    ]
    INVALID = [
        # No arch: flagged, no fix; 0 reads the same on every arch, the message says so.
        Invalid(
            "from flydsl.expr import rocdl\nrocdl.s_waitcnt(0)\n",
            expected=None,
            line=2,
            column=1,
            message="0 waits for every counter on any arch, `vmcnt=0, lgkmcnt=0, expcnt=0`",
        ),
        Invalid(
            "from flydsl.expr import rocdl\nrocdl.s_waitcnt(0xC07F)\n",
            expected=None,
            message="its meaning depends on the arch: set `target-arch`",
        ),
        # s_waitcnt(0) keeps all three counters (never narrowed).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import rocdl\n\n"
            "def k():\n    rocdl.s_waitcnt(0)\n",
            expected="import flydsl.expr as fx\n\n"
            "def k():\n    fx.rocdl.s_waitcnt(vmcnt=0, lgkmcnt=0, expcnt=0)\n",
            line=5,
            column=5,
            settings={"target_arch": "gfx942", "flydsl_version": "0.5.0"},
        ),
        # The fx positional form and the raw dialect (aliased); the fx import is added.
        Invalid(
            "from flydsl._mlir.dialects import rocdl as _rocdl_d\n"
            "_rocdl_d.s_waitcnt(0xC07F)\n_rocdl_d.s_waitcnt(bitfield=0x0F70)\n",
            expected="import flydsl.expr as fx\n"
            "fx.rocdl.s_waitcnt(lgkmcnt=0)\nfx.rocdl.s_waitcnt(vmcnt=0)\n",
            count=2,
            settings={"target_arch": "gfx950"},
        ),
        Invalid(
            "import flydsl.expr as _fx\n_fx.rocdl.s_waitcnt(0xC07F)\n",
            expected="import flydsl.expr as _fx\n_fx.rocdl.s_waitcnt(lgkmcnt=0)\n",
            settings={"target_arch": "gfx942"},
        ),
        # Module constants and a kernel-local encoder, evaluated statically.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import rocdl\n\n"
            "_LGKMCNT_0_ONLY = 0xC07F\nN_LOADS = 3\n\n\n"
            "def _encode_waitcnt(vmcnt=63, expcnt=7, lgkmcnt=63):\n"
            '    """Encode s_waitcnt bitfield for CDNA3 (gfx94x)."""\n'
            "    vm_lo = vmcnt & 0xF\n    vm_hi = (vmcnt >> 4) & 0x3\n"
            "    return vm_lo | (expcnt << 4) | (lgkmcnt << 8) | (vm_hi << 14)\n\n\n"
            "def k():\n    rocdl.s_waitcnt(_LGKMCNT_0_ONLY)\n"
            "    rocdl.s_waitcnt(_encode_waitcnt(lgkmcnt=N_LOADS))\n"
            "    rocdl.s_waitcnt(_encode_waitcnt(vmcnt=63, lgkmcnt=2, expcnt=0))\n",
            expected="import flydsl.expr as fx\n\n"
            "_LGKMCNT_0_ONLY = 0xC07F\nN_LOADS = 3\n\n\n"
            "def _encode_waitcnt(vmcnt=63, expcnt=7, lgkmcnt=63):\n"
            '    """Encode s_waitcnt bitfield for CDNA3 (gfx94x)."""\n'
            "    vm_lo = vmcnt & 0xF\n    vm_hi = (vmcnt >> 4) & 0x3\n"
            "    return vm_lo | (expcnt << 4) | (lgkmcnt << 8) | (vm_hi << 14)\n\n\n"
            "def k():\n    fx.rocdl.s_waitcnt(lgkmcnt=0)\n"
            "    fx.rocdl.s_waitcnt(lgkmcnt=3)\n"
            "    fx.rocdl.s_waitcnt(lgkmcnt=2, expcnt=0)\n",
            line=16,
            count=3,
            settings={"target_arch": "gfx942", "flydsl_version": "0.5.0"},
        ),
        # Legacy lgkmcnt=63 sets bits 13:12 on CDNA: the same hardware wait, another
        # immediate, so the fix is unsafe.
        Invalid(
            "import flydsl.expr as fx\n\n"
            "def _encode_waitcnt(vmcnt=63, expcnt=7, lgkmcnt=63):\n"
            "    vm_lo = vmcnt & 0xF\n    vm_hi = (vmcnt >> 4) & 0x3\n"
            "    return vm_lo | (expcnt << 4) | (lgkmcnt << 8) | (vm_hi << 14)\n\n"
            "fx.rocdl.s_waitcnt(_encode_waitcnt(vmcnt=0))\n",
            expected="import flydsl.expr as fx\n\n"
            "def _encode_waitcnt(vmcnt=63, expcnt=7, lgkmcnt=63):\n"
            "    vm_lo = vmcnt & 0xF\n    vm_hi = (vmcnt >> 4) & 0x3\n"
            "    return vm_lo | (expcnt << 4) | (lgkmcnt << 8) | (vm_hi << 14)\n\n"
            "fx.rocdl.s_waitcnt(vmcnt=0)\n",
            unsafe=True,
            message="bits 13:12",
            settings={"target_arch": "gfx942"},
        ),
        # A local forwarding shim, recognised by its body (with bit arithmetic inside).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import rocdl\n\n"
            "def _s_waitcnt(val):\n    rocdl.s_waitcnt(val)\n\n"
            "def wait_vm(n):\n    bits = (n & 0xF) | 0x0F70 | (((n >> 4) & 0x3) << 14)\n"
            "    rocdl.s_waitcnt(bits)\n\n"
            "_s_waitcnt(0)\nwait_vm(17)\n",
            expected="import flydsl.expr as fx\nfrom flydsl.expr import rocdl\n\n"
            "def _s_waitcnt(val):\n    rocdl.s_waitcnt(val)\n\n"
            "def wait_vm(n):\n    bits = (n & 0xF) | 0x0F70 | (((n >> 4) & 0x3) << 14)\n"
            "    rocdl.s_waitcnt(bits)\n\n"
            "fx.rocdl.s_waitcnt(vmcnt=0, lgkmcnt=0, expcnt=0)\nfx.rocdl.s_waitcnt(vmcnt=17)\n",
            line=11,
            count=2,
            settings={"target_arch": "gfx942"},
        ),
        # A shim imported from a sibling module: its body is assumed, so unsafe.
        Invalid(
            "import flydsl.expr as fx\nfrom .flash_attn_utils import _s_waitcnt\n_s_waitcnt(0)\n",
            expected="import flydsl.expr as fx\nfx.rocdl.s_waitcnt(vmcnt=0, lgkmcnt=0, expcnt=0)\n",
            unsafe=True,
            message="defined in another module",
            settings={"target_arch": "gfx942"},
        ),
        # Values flowing through objects cannot be resolved: diagnostic only.
        Invalid(
            "from flydsl.expr import rocdl\n\ndef k(traits):\n    rocdl.s_waitcnt(traits.LGKMCNT_0_ONLY)\n",
            expected=None,
            message="(no fix: it reads `traits.LGKMCNT_0_ONLY`, an attribute of an object, whose value is not followed)",
            settings={"target_arch": "gfx942"},
        ),
        # A build-time parameter, followed through the assignments that use it; a bitfield
        # built with bit operators is no count.
        Invalid(
            "from flydsl.expr import rocdl\n\n"
            "def build(waits):\n    bits = waits << 8\n\n"
            "    def kernel():\n        rocdl.s_waitcnt(bits)\n\n    return kernel\n",
            expected=None,
            message="(no fix: it reads the parameter `waits`, known only when the kernel is built (through `bits`))",
            settings={"target_arch": "gfx942"},
        ),
        # A raw count as the bitfield (preshuffle_gemm's `s_waitcnt(num_b_loads)`): vmcnt with
        # lgkmcnt=0 and expcnt=0 while the count is 0-15; 16 carries into expcnt (the same
        # immediate only up to 15: unsafe).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import rocdl\n\n"
            "def build(tile_n, threads):\n    loads = tile_n // threads\n\n"
            "    def kernel():\n        rocdl.s_waitcnt(loads)\n\n    return kernel\n",
            expected="import flydsl.expr as fx\n\n"
            "def build(tile_n, threads):\n    loads = tile_n // threads\n\n"
            "    def kernel():\n        fx.rocdl.s_waitcnt(vmcnt=loads % 16, lgkmcnt=loads // 256 % 16, expcnt=loads // 16 % 8)\n\n"
            "    return kernel\n",
            unsafe=True,
            message="the same wait for every count: as a bitfield, 16 and more carry into expcnt (16 means "
            "`vmcnt=0, lgkmcnt=0, expcnt=1`), so if `loads` is meant as the number of loads in flight, "
            "`vmcnt=loads` is what the kernel wants, a weaker wait past 15",
            settings={"target_arch": "gfx942"},
        ),
        Invalid(
            "from flydsl.expr import rocdl\n\n"
            "def _encode_waitcnt(vmcnt=63, lgkmcnt=63):\n"
            "    return (vmcnt & 15) | ((vmcnt >> 4) << 14) | (7 << 4) | ((lgkmcnt & 15) << 8)\n\n"
            "def k(waits, step):\n    rocdl.s_waitcnt(_encode_waitcnt(lgkmcnt=waits[step]))\n",
            expected="import flydsl.expr as fx\n\n"
            "def _encode_waitcnt(vmcnt=63, lgkmcnt=63):\n"
            "    return (vmcnt & 15) | ((vmcnt >> 4) << 14) | (7 << 4) | ((lgkmcnt & 15) << 8)\n\n"
            "def k(waits, step):\n    fx.rocdl.s_waitcnt(lgkmcnt=waits[step])\n",
            unsafe=True,
            message="`waits[step]` is taken to be a count of 0-15, which FlyDSL's keyword form checks",
            settings={"target_arch": "gfx942"},
        ),
        # A count that is no constant, but what the bitfield counts for each value it can
        # take: the keyword names it (unsafe: FlyDSL checks the range the bitfield masked).
        Invalid(
            "import flydsl.expr as fx\nfrom .flash_attn_utils import _waitcnt_vm_n\n\n"
            "def k(ctx):\n    _waitcnt_vm_n(ctx.NUM_DMA_K + ctx.NUM_DMA_V)\n",
            expected="import flydsl.expr as fx\n\n"
            "def k(ctx):\n    fx.rocdl.s_waitcnt(vmcnt=ctx.NUM_DMA_K + ctx.NUM_DMA_V)\n",
            unsafe=True,
            message="`ctx.NUM_DMA_K + ctx.NUM_DMA_V` is taken to be a count of 0-63",
            settings={"target_arch": "gfx942"},
        ),
        # A parameter counted inside the wait's own function; the spent bitfield local goes.
        Invalid(
            "import flydsl.expr as fx\n\n"
            "def wait_lds_barrier(vmcnt=63):\n"
            "    waitcnt = (vmcnt & 0xF) | ((vmcnt & 0x30) << 10) | (7 << 4)\n"
            "    fx.rocdl.s_waitcnt(waitcnt)\n    fx.barrier()\n",
            expected="import flydsl.expr as fx\n\n"
            "def wait_lds_barrier(vmcnt=63):\n"
            "    fx.rocdl.s_waitcnt(vmcnt=vmcnt, lgkmcnt=0)\n    fx.barrier()\n",
            unsafe=True,
            message="it waits for `vmcnt=vmcnt`, `lgkmcnt=0`",
            settings={"target_arch": "gfx942"},
        ),
        # A magic field read through an object: the one value the project gives it.
        Invalid(
            "import flydsl.expr as fx\nfrom .flash_attn_utils import _s_waitcnt\n\n"
            "traits = dict(LGKMCNT_0_ONLY=0xC07F)\n\n"
            "def k(traits):\n    _s_waitcnt(traits.LGKMCNT_0_ONLY)\n",
            expected="import flydsl.expr as fx\n\n"
            "traits = dict(LGKMCNT_0_ONLY=0xC07F)\n\n"
            "def k(traits):\n    fx.rocdl.s_waitcnt(lgkmcnt=0)\n",
            line=4,  # the field's definition is reported too (the waits that read it are elsewhere)
            count=2,
            unsafe=True,
            settings={"target_arch": "gfx942"},
        ),
        # RDNA layout: gfx1100 and gfx1201.
        Invalid(
            "import flydsl.expr as fx\nfx.rocdl.s_waitcnt(0xFC07)\nfx.rocdl.s_waitcnt(0x03F7)\n",
            expected="import flydsl.expr as fx\nfx.rocdl.s_waitcnt(lgkmcnt=0)\nfx.rocdl.s_waitcnt(vmcnt=0)\n",
            count=2,
            settings={"target_arch": "gfx1100"},
        ),
        Invalid(
            "import flydsl.expr as fx\nfx.rocdl.s_waitcnt(0)\n",
            expected="import flydsl.expr as fx\nfx.rocdl.s_waitcnt(vmcnt=0, lgkmcnt=0, expcnt=0)\n",
            settings={"target_arch": "gfx1201"},
        ),
        # Aliases of the function itself, and extra arguments (no fix).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.rocdl import s_waitcnt as _sw\n"
            "_wait = fx.rocdl.s_waitcnt\n_sw(0x0F70)\n_wait(0xC07F)\n",
            expected="import flydsl.expr as fx\n"
            "_wait = fx.rocdl.s_waitcnt\nfx.rocdl.s_waitcnt(vmcnt=0)\nfx.rocdl.s_waitcnt(lgkmcnt=0)\n",
            line=4,
            count=2,
            settings={"target_arch": "gfx942"},
        ),
        Invalid(
            "from flydsl._mlir.dialects import rocdl\nrocdl.s_waitcnt(0, loc=None)\n",
            expected=None,
            message="other arguments",
            settings={"target_arch": "gfx942"},
        ),
        # The arch guard around the wait wins over target-arch (analysis/rules/_arch.py):
        # gfx1250 has no keyword form; after a guard that raises, the arch is gfx950.
        Invalid(
            "import flydsl.expr as fx\n\ndef k(arch):\n    if arch == \"gfx1250\":\n        fx.rocdl.s_waitcnt(0)\n",
            expected=None,
            message="gfx1250",
            settings={"target_arch": "gfx942"},
        ),
        Invalid(
            "import flydsl.expr as fx\n\ndef k(arch):\n    if arch == \"gfx942\":\n        raise ValueError(arch)\n"
            "    fx.rocdl.s_waitcnt(0)\n",
            expected=None,
            message="the arch guards around this code rule out the target arch gfx942",
            settings={"target_arch": "gfx942"},
        ),
        Invalid(
            "import flydsl.expr as fx\n\ndef k(arch):\n    if not arch.startswith(\"gfx95\"):\n"
            "        raise RuntimeError(arch)\n    fx.rocdl.s_waitcnt(0xC07F)\n",
            expected="import flydsl.expr as fx\n\ndef k(arch):\n    if not arch.startswith(\"gfx95\"):\n"
            "        raise RuntimeError(arch)\n    fx.rocdl.s_waitcnt(lgkmcnt=0)\n",
            message="on gfx950",
            settings={"flydsl_version": "0.5.0"},
        ),
        # gfx1250 and older FlyDSL: no fix.
        Invalid(
            "import flydsl.expr as fx\nfx.rocdl.s_waitcnt(0)\n",
            expected=None,
            message="write gfx1250's split waits for the counters it must drain, `fx.rocdl.s_wait_loadcnt(n)`",
            settings={"target_arch": "gfx1250"},
        ),
        Invalid(
            "import flydsl.expr as fx\nfx.rocdl.s_waitcnt(0)\n",
            expected=None,
            message="needs FlyDSL 0.3.0",
            settings={"target_arch": "gfx942", "flydsl_version": "0.2.4"},
        ),
        # A magic constant passed through a traits object.
        Invalid(
            "def make_traits(**kw):\n    return kw\n\ntraits = make_traits(LGKMCNT_0_ONLY=0xC07F)\n",
            expected=None,
            message="`lgkmcnt=0` on gfx942",
            settings={"target_arch": "gfx942"},
        ),
    ]


def _spelled(rule: Rule, node: ast.Call) -> str:
    text = rule.text(node)
    if "\n" in text or len(text) > 60:
        return f"{ast.unparse(node.func)}(...)"
    return text


def _assumed(names: frozenset) -> list[str]:
    """Why a value was taken on trust: a helper of another module, or a field (".NAME")."""
    return [
        f"it reads `{n[1:]}` through an object: the value every place in the project gives `{n[1:]}` is assumed"
        if n.startswith(".")
        else f"`{n}` is defined in another module; its encoding is assumed from its name"
        for n in sorted(names)
    ]


def _hex(bits: int) -> str:
    return f"0x{bits:04X}" if bits >= 0 else str(bits)
