import ast

from flydsl_ls.analysis.model.rewrite import fx_alias
from flydsl_ls.analysis.model.semantic import RAW_ID_CALLS
from flydsl_ls.analysis.model.valueflow import Sink, kind_change_blocker, value_kind
from flydsl_ls.analysis.rules.base import Invalid, Rule, Valid


# Why a use stops `fx.Index(...)` from keeping the raw id's meaning.
_CHANGES_UNDER_INDEX = {"comparison": "would compare unsigned (a raw index compares signed)", "/": "would divide as floats"}


class RawThreadId(Rule):
    """
    `gpu.thread_id("x")` and `gpu.block_id("x")` return raw `index`-typed values. Used in
    arithmetic they silently compute in `index`, mixing with typed `fx.Int32` values
    through implicit casts. Wrap the call once, `fx.Int32(gpu.thread_id("x"))`, or use
    the typed accessor `fx.thread_idx.x` (already `fx.Int32`).

    The diagnostic points at the call whose value reaches the arithmetic, directly or
    through a variable. The fix is unsafe: it changes the arithmetic from `index`
    (64-bit) to `i32`, which changes the IR and can overflow where `index` did not.
    Where the id meets values that may be index-typed (a raw operand, or one of unknown
    kind), an i32 id would mix with them (measured on preshuffle_gemm: 2-4 more VGPRs), so
    the fix is `fx.Index(gpu.thread_id("x"))` instead, still unsafe: it keeps the index
    type and the same unsigned ops, and only a Python int operand becomes an i32 constant
    cast to index (folded: FlyDSL's and aiter's preshuffle_gemm keep their LLVM IR and ISA).
    Not where the id reaches a comparison (a raw index compares signed, `fx.Index`
    unsigned), `/` (a float division on an fx integer), or code that cannot be followed.
    `fx.thread_idx.x`, `fx.block_idx.x` and `gpu.thread_idx.x` are never flagged.
    """

    code = "FLY105"
    name = "raw-thread-id"
    summary = '`gpu.thread_id("x")` / `gpu.block_id("x")` used in arithmetic without a type'
    replacement = '`fx.Int32(gpu.thread_id("x"))` or `fx.thread_idx.x`'
    fix_safety = (
        "unsafe (index arithmetic becomes i32; `fx.Index(...)` where it meets index values); "
        "none where the id meets raw builders, `/`, or index values and a comparison or code not followed"
    )
    fix_title = "Wrap in fx.Int32(...)"
    example_before = 'lane = gpu.thread_id("x") % 64'
    example_after = "lane = fx.thread_idx.x % 64"

    def __init__(self, ctx):
        super().__init__(ctx)
        self._reported: set[int] = set()

    def visit_BinOp(self, node: ast.BinOp) -> None:
        self._check(node.left)
        self._check(node.right)

    def visit_Compare(self, node: ast.Compare) -> None:
        for operand in (node.left, *node.comparators):
            self._check(operand)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check(node.target)
        self._check(node.value)

    def _check(self, operand: ast.expr) -> None:
        if isinstance(operand, ast.Call):
            self._flag(operand)
        elif isinstance(operand, ast.Name):  # a load, or an AugAssign target
            # The bindings reaching it are among those of its name where it is bound: most
            # operands (loop indices, parameters, sums) have no call among them.
            owner = self.model.binding_of(operand)
            if owner is None or not any(type(b.value) is ast.Call for b in owner.scope.bindings[operand.id]):
                return
            for binding in self.model.reaching_bindings(operand):
                if isinstance(binding.value, ast.Call):
                    self._flag(binding.value)

    def _flag(self, call: ast.Call) -> None:
        if id(call) in self._reported or self.model.resolve(call.func) not in RAW_ID_CALLS:
            return
        self._reported.add(id(call))
        fx, imports = fx_alias(self.model)
        spelled = ast.unparse(call.func)
        message = (
            f"`{spelled}(...)` returns a raw index value used in arithmetic: "
            f"wrap it once, `{fx}.Int32(...)`, or use `{fx}.thread_idx`/`{fx}.block_idx`"
        )
        # Typed, the value can no longer reach raw builders, and `/` on an fx.Int32 is a
        # float division where the raw index divided as an integer.
        uses = self.value_uses(call, through_operators=True)
        blocker = kind_change_blocker(uses, "fx", operators=("/",))
        if blocker is not None:
            why = "would divide as floats" if blocker.what.rstrip("=") == "/" else "needs the raw value"
            self.report(call, f"{message} (no fix: typed, {blocker.describe()} {why})")
            return
        mixed = self._index_partner(uses)
        if mixed is not None:
            self._keep_index(call, uses, mixed, message)
            return
        self.report(
            call,
            message,
            fix=self.replace(call, f"{fx}.Int32({self.text(call)})", self.fix_title, safe=False, extra=imports),
        )

    def _keep_index(self, call: ast.Call, uses, mixed, message: str) -> None:
        """Where the id meets index values, `fx.Index(...)` types it without changing its type:
        `+ - * // %` and bit operators build the same index ops (both unsigned), only a Python
        int operand becomes an i32 constant cast to index (folded away). Comparisons do not:
        a raw index compares signed, an `fx.Index` unsigned; nor does `/` (a float division)."""
        why = f"{mixed.describe()} may mix it with index values"
        blocker = kind_change_blocker(uses, "fx", operators=("/", "comparison"))
        if blocker is not None:
            change = _CHANGES_UNDER_INDEX[blocker.what.rstrip("=")]
            self.report(call, f"{message} (no fix: typed i32, {why}; typed index, {blocker.describe()} {change})")
            return
        # Code we cannot follow (it might compare, or need a raw value), or a raw-operand
        # `fx.arith` helper: no fix, as for the i32 id.
        unseen = next((u for u in uses if u.sink is not Sink.OPERATOR and self._index_partner([u])), None)
        if unseen is not None:
            self.report(call, f"{message} (no fix: typed i32, {unseen.describe()} may mix it with index values)")
            return
        fx, imports = fx_alias(self.model)
        self.report(
            call,
            f"{message} (unsafe: {why}, so `{fx}.Index(...)` keeps its index type, where `{fx}.Int32` "
            "would move the arithmetic to i32; Python int operands become i32 constants cast to index)",
            fix=self.replace(call, f"{fx}.Index({self.text(call)})", "Wrap in fx.Index(...)", safe=False, extra=imports),
        )

    def _index_partner(self, uses):
        """A use where the id, now i32, would meet index-typed values: a raw operand of an
        operator, an `fx.arith` helper that takes raw operands (`arith.cmpi`), or code we
        cannot follow."""
        for use in uses:
            if use.sink is Sink.PASSED_ON:
                return use
            if use.sink is Sink.ANY_VALUE and (use.symbol or "").startswith("fx.arith."):
                return use
            if use.sink is Sink.OPERATOR and use.other is not None:
                # A raw operand is index-typed; one of unknown kind may be too. Measured on
                # preshuffle_gemm (FlyDSL and aiter): the id typed i32 beside `by_n` cost
                # 2-4 VGPRs, and a wave of occupancy on gfx950.
                if value_kind(self.model.type_of(use.other)) in ("raw", "unknown"):
                    return use
        return None

    VALID = [
        Valid("import flydsl.expr as fx\nlane = fx.thread_idx.x % 64\n"),
        Valid("import flydsl.expr as fx\nfrom flydsl.expr import gpu\nlane = fx.Int32(gpu.thread_id('x')) % 64\n"),
        Valid("from flydsl.expr import gpu\ntid = gpu.thread_id('x')\nprint(tid)\n"),
        Valid("from flydsl.expr import gpu\nlane = gpu.thread_idx.x % 64\n"),
    ]
    INVALID = [
        # Beside a value of unknown kind (maybe an index): typed i32 beside `by_n`,
        # preshuffle_gemm's ids cost 2-4 VGPRs and a wave of occupancy on gfx950, so the
        # fix keeps the index type (FlyDSL's and aiter's preshuffle_gemm: same LLVM IR and ISA).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import gpu\n"
            "def k(by_n):\n    wave = gpu.thread_id('x') // 64\n    return fx.Int32(by_n + wave * 16)\n",
            expected="import flydsl.expr as fx\nfrom flydsl.expr import gpu\n"
            "def k(by_n):\n    wave = fx.Index(gpu.thread_id('x')) // 64\n    return fx.Int32(by_n + wave * 16)\n",
            unsafe=True,
            message="(unsafe: `+` on line 5 may mix it with index values, so `fx.Index(...)` keeps its index type",
        ),
        # ... not where the sum goes to code that cannot be followed (it might compare it,
        # or need the raw value) ...
        Invalid(
            "from flydsl.expr import gpu\n"
            "def k(by_n, emit):\n    wave = gpu.thread_id('x') // 64\n    emit(by_n + wave * 16)\n",
            expected=None,
            message="(no fix: typed i32, `emit` on line 4 may mix it with index values)",
        ),
        # ... and a raw index compares signed, an fx.Index unsigned: no fix.
        Invalid(
            "from flydsl.expr import gpu\n"
            "def k(by_n):\n    row = gpu.thread_id('x') // 4\n    return by_n + row < 64\n",
            expected=None,
            message="(no fix: typed i32, `+` on line 4 may mix it with index values; typed index, "
            "`comparison` on line 4 would compare unsigned (a raw index compares signed))",
        ),
        Invalid(
            "from flydsl.expr import gpu\n"
            "def k():\n    tid = gpu.thread_id('x')\n    warp = tid / 64\n    lane = tid % 64\n",
            expected=None,
            message="no fix: typed, `/` on line 4 would divide as floats",
        ),
        Invalid(
            "from flydsl.expr import gpu\nfrom flydsl._mlir.dialects import memref\n"
            "def k(buf):\n    tid = gpu.thread_id('x')\n    memref.store(buf, [tid * 4])\n",
            expected=None,
            message="no fix: typed, `memref.store` on line 5 needs the raw value",
        ),
        # i32 against an index constant: 'arith.cmpi' op requires the same type (aiter's
        # mixed_moe_gemm_2stage_common.py)
        Invalid(
            "from flydsl.expr import arith, gpu\n"
            "def k():\n    tx = gpu.thread_id('x')\n    row = tx // 4\n"
            "    return arith.cmpi(arith.CmpIPredicate.ult, tx, arith.constant(64, index=True))\n",
            expected=None,
            message="no fix: typed i32, `arith.cmpi` on line 5 may mix it with index values",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import gpu\nlane = gpu.thread_id('x') % 64\n",
            expected="import flydsl.expr as fx\nfrom flydsl.expr import gpu\nlane = fx.Int32(gpu.thread_id('x')) % 64\n",
            unsafe=True,
            line=3,
            column=8,
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import gpu\n"
            "def k():\n    tid = gpu.thread_id('x')\n    row = tid // 4\n    col = tid % 4\n",
            expected="import flydsl.expr as fx\nfrom flydsl.expr import gpu\n"
            "def k():\n    tid = fx.Int32(gpu.thread_id('x'))\n    row = tid // 4\n    col = tid % 4\n",
            unsafe=True,
            line=4,
        ),
        Invalid(
            "from flydsl._mlir.dialects import gpu\nbid = gpu.block_id('x')\nbase = bid * 128\n",
            expected="from flydsl._mlir.dialects import gpu\nimport flydsl.expr as fx\nbid = fx.Int32(gpu.block_id('x'))\nbase = bid * 128\n",
            unsafe=True,
        ),
    ]
