import ast

from flydsl_ls.analysis.model.rewrite import fx_alias
from flydsl_ls.analysis.model.statements import delete_statement
from flydsl_ls.analysis.model.versions import at_least, parse
from flydsl_ls.analysis.rules.base import Callees, Invalid, Rule, Valid

RAW_BARRIERS = {
    "mlir.rocdl.sched_barrier": "sched_barrier",
    "mlir.rocdl.sched_group_barrier": "sched_group_barrier",
}
WRAPPERS_SINCE = "0.2.0"  # fx.rocdl.sched_barrier / sched_group_barrier: every release since
# The same barrier emitted by hand: llvm.call_intrinsic(None, "llvm.amdgcn.sched.barrier", [mask], [], [])
CALL_INTRINSIC = "mlir.llvm.call_intrinsic"
INTRINSICS = {"llvm.amdgcn.sched.barrier": "sched_barrier"}
_ARITH_CONSTANTS = {"fx.arith.constant", "mlir.arith.constant"}
_UNWRAPS = {"fx.arith.unwrap", "fx.arith._to_raw"}


class RawSchedBarrier(Rule):
    """
    The raw ROCDL builders `sched_barrier(mask)` and `sched_group_barrier(mask, size,
    group_id)` from `flydsl._mlir.dialects.rocdl` (any alias, or the `_rocdl_ops_gen`
    module). FlyDSL wraps both as `fx.rocdl.sched_barrier` / `fx.rocdl.sched_group_barrier`
    (`expr/rocdl/__init__.py`), which accept the mask as an int (`0x008`), a keyword string
    (`"mfma_wmma|valu"`) or an `ir.Attribute`; the raw builders accept only an attribute
    (`#rocdl<sched_group_mask ...>`) and raise `TypeError` on an int.

    The fix swaps the callee and keeps every argument as written. It is safe: an attribute
    mask is passed through unchanged, sizes, group ids and `loc=`/`ip=` are forwarded, and
    the op built is the same (FlyDSL 0.5.0, checked by building both under an MLIR
    context). When the mask is visibly an int or a string, the raw call raised, so the
    rewrite changes behaviour (it starts working): that fix is unsafe. Calls through the DSL
    module (`from flydsl.expr import rocdl; rocdl.sched_barrier(0)`, `fx.rocdl.sched_barrier`)
    already reach the wrappers and are not flagged. The wrappers are not in
    `fx.rocdl.__all__`, like every scheduling primitive of the ROCDL backend.

    The same barrier emitted by hand, `llvm.call_intrinsic(None, "llvm.amdgcn.sched.barrier",
    [mask_val], [], [])` (aiter's fmha kernels), is flagged too. Where the mask is an
    `arith.constant` of a Python int (also through `arith.unwrap`, or bound to a local read
    only there, which the fix deletes), the call becomes `fx.rocdl.sched_barrier(mask)`:
    unsafe, as the first MLIR then holds the `rocdl.sched.barrier` op instead of the
    intrinsic call, though the LLVM IR and the ISA are the same (checked with FlyDSL 0.5.0).
    """

    code = "FLY403"
    name = "raw-sched-barrier"
    summary = "raw `rocdl.sched_barrier(...)` / `rocdl.sched_group_barrier(...)` from `flydsl._mlir.dialects`"
    replacement = "`fx.rocdl.sched_barrier(...)` / `fx.rocdl.sched_group_barrier(...)` with the same arguments"
    fix_safety = "safe (unsafe when the mask is an int or string literal, which the raw builder rejects, and for the intrinsic called by hand)"
    fix_title = "Use the fx.rocdl wrapper"
    example_before = "rocdl_dialect.sched_group_barrier(mask_attr, 1, 0)"
    example_after = "fx.rocdl.sched_group_barrier(mask_attr, 1, 0)"

    callees = Callees(symbols=frozenset({CALL_INTRINSIC, *RAW_BARRIERS}))

    def visit_Call(self, node: ast.Call) -> None:
        symbol = self.model.resolve(node.func)
        if symbol == CALL_INTRINSIC:
            self._hand_made(node)
            return
        name = RAW_BARRIERS.get(symbol)
        if name is None:
            return
        spelled = ast.unparse(node.func)
        fx, imports = fx_alias(self.model)
        wrapper = f"{fx}.rocdl.{name}"
        message = f"`{spelled}(...)` is the raw ROCDL builder: use `{wrapper}(...)` (same arguments)"
        version = self.ctx.options.flydsl_version
        if parse(version) is not None and not at_least(version, WRAPPERS_SINCE):
            self.report(node, f"{message}; not offered: FlyDSL {version} predates the wrapper")
            return
        mask = self._mask(node)
        literal = isinstance(mask, ast.Constant) and isinstance(mask.value, (int, str))
        if literal:
            message += " (unsafe: the raw builder rejects a literal mask with TypeError; the wrapper converts it)"
        self.report(
            node,
            message,
            fix=self.replace(node.func, wrapper, f"Use {fx}.rocdl.{name}", safe=not literal, extra=imports),
        )

    def _hand_made(self, node: ast.Call) -> None:
        """``llvm.call_intrinsic(None, "llvm.amdgcn.sched.barrier", [mask], [], [])``: the fix
        passes the mask's Python int to the wrapper (unsafe: another op is built, the
        ``rocdl.sched.barrier`` the wrapper emits, for the same instruction)."""
        intrinsic = node.args[1] if len(node.args) > 1 else None
        if not (isinstance(intrinsic, ast.Constant) and intrinsic.value in INTRINSICS):
            return
        name = INTRINSICS[intrinsic.value]
        fx, imports = fx_alias(self.model)
        wrapper = f"{fx}.rocdl.{name}"
        message = f"`{ast.unparse(node.func)}(..., \"{intrinsic.value}\", ...)` emits the scheduling barrier by hand: use `{wrapper}(mask)`"
        found = self._intrinsic_mask(node)
        if found is None:
            self.report(node, f"{message} (no fix: the mask is not a constant built from a Python int here)")
            return
        mask, dead = found
        extra = (*imports, *((delete_statement(self.model, dead),) if dead is not None else ()))
        fix = self.replace(node, f"{wrapper}({self.text(mask)})", f"Use {wrapper}", safe=False, extra=extra)
        self.report(node, message, fix=fix)

    def _intrinsic_mask(self, node: ast.Call) -> tuple[ast.expr, ast.stmt | None] | None:
        """The Python int behind the single operand (``arith.constant(m, type=T.i32)``, also
        through ``arith.unwrap(...)``), and the assignment that the fix leaves dead when the
        constant is bound to a name read only here."""
        operands = node.args[2] if len(node.args) > 2 else None
        if not (isinstance(operands, ast.List) and len(operands.elts) == 1):
            return None
        value, dead = operands.elts[0], None
        if isinstance(value, ast.Name):
            bindings = self.model.reaching_bindings(value)
            if len(bindings) != 1 or bindings[0].kind != "assign" or bindings[0].value is None:
                return None
            value = bindings[0].value
            statement = self.model.parent_map(bindings[0].scope.node).get(id(bindings[0].node))
            if self.model.uses_of(bindings[0]) == [operands.elts[0]] and isinstance(statement, ast.Assign) and len(statement.targets) == 1:
                dead = statement
        if isinstance(value, ast.Call) and self.model.resolve(value.func) in _UNWRAPS and len(value.args) == 1:
            value = value.args[0]
        if not (isinstance(value, ast.Call) and self.model.resolve(value.func) in _ARITH_CONSTANTS and value.args):
            return None
        mask = value.args[0]
        if isinstance(mask, ast.Constant) and type(mask.value) is int:
            return mask, dead
        if isinstance(mask, ast.Name) and (self.model.type_of(mask).is_python or self._int_parameter(mask)):
            return mask, dead
        return None

    def _int_parameter(self, name: ast.Name) -> bool:
        """A parameter annotated ``int`` or defaulting to an int literal (``mask=0``)."""
        bindings = self.model.reaching_bindings(name)
        if len(bindings) != 1 or bindings[0].kind != "param":
            return False
        arg, function = bindings[0].node, bindings[0].scope.node
        if isinstance(arg.annotation, ast.Name) and arg.annotation.id == "int":
            return True
        args = function.args
        positional = [*args.posonlyargs, *args.args]
        defaults = dict(zip(positional[len(positional) - len(args.defaults):], args.defaults))
        defaults.update((a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None)
        default = defaults.get(arg)
        return isinstance(default, ast.Constant) and type(default.value) is int

    @staticmethod
    def _mask(node: ast.Call) -> ast.expr | None:
        if node.args and not isinstance(node.args[0], ast.Starred):
            return node.args[0]
        for keyword in node.keywords:
            if keyword.arg == "mask":
                return keyword.value
        return None

    VALID = [
        # The DSL module already reaches the wrappers.
        Valid("from flydsl.expr import rocdl\nrocdl.sched_barrier(0)\nrocdl.sched_group_barrier(rocdl.mask_dsrd, 2, 0)\n"),
        Valid("import flydsl.expr as fx\nfx.rocdl.sched_barrier(0)\nfx.rocdl.sched_mfma(2)\n"),
        # Not calls, or not FlyDSL.
        Valid("from flydsl._mlir.dialects import rocdl\nop = rocdl.SchedBarrier\n# rocdl.sched_barrier(0)\n"),
        Valid("import torch\ntorch.sched_barrier(0)\n"),
        # Other intrinsics by hand are not this rule's.
        Valid("from flydsl._mlir.dialects import llvm\nllvm.call_intrinsic(t, 'llvm.amdgcn.cvt.pk.bf16.f32', [a, b], [], [])\n"),
    ]
    INVALID = [
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl._mlir import ir\nfrom flydsl._mlir.dialects import rocdl as rocdl_dialect\n\n"
            "def k():\n    mask = ir.Attribute.parse('#rocdl<sched_group_mask mfma_wmma>')\n"
            "    rocdl_dialect.sched_group_barrier(mask, 1, 0)\n"
            "    rocdl_dialect.sched_barrier(mask=mask, loc=None)\n",
            expected="import flydsl.expr as fx\nfrom flydsl._mlir import ir\n\n"
            "def k():\n    mask = ir.Attribute.parse('#rocdl<sched_group_mask mfma_wmma>')\n"
            "    fx.rocdl.sched_group_barrier(mask, 1, 0)\n"
            "    fx.rocdl.sched_barrier(mask=mask, loc=None)\n",
            line=7,
            column=5,
            count=2,
        ),
        # Imported by name from the generated ops module; the fx import is added.
        Invalid(
            "from flydsl._mlir.dialects._rocdl_ops_gen import sched_barrier as _sb\n_sb(NONE_MASK)\n",
            expected="import flydsl.expr as fx\nfx.rocdl.sched_barrier(NONE_MASK)\n",
        ),
        # A literal int mask made the raw builder raise: the rewrite is unsafe.
        Invalid(
            "import flydsl.expr as _fx\nfrom flydsl._mlir.dialects import rocdl\nrocdl.sched_barrier(0)\n",
            expected="import flydsl.expr as _fx\n_fx.rocdl.sched_barrier(0)\n",
            unsafe=True,
            message="TypeError",
        ),
        # The barrier emitted by hand through the llvm dialect (aiter's fmha kernels); the
        # mask's constant is left unused and goes with the fix.
        Invalid(
            "from flydsl._mlir.dialects import llvm as llvm_dialect\nfrom flydsl.expr import arith\n"
            "from flydsl.expr.typing import T\n\n"
            "def _sched_barrier(mask=0):\n"
            "    mask_val = arith.unwrap(arith.constant(mask, type=T.i32))\n"
            "    llvm_dialect.call_intrinsic(None, \"llvm.amdgcn.sched.barrier\", [mask_val], [], [])\n",
            expected="import flydsl.expr as fx\n\n"
            "def _sched_barrier(mask=0):\n"
            "    fx.rocdl.sched_barrier(mask)\n",
            unsafe=True,
            message="emits the scheduling barrier by hand",
        ),
        Invalid(
            "from flydsl._mlir.dialects import llvm\n"
            "def k(m):\n    llvm.call_intrinsic(None, 'llvm.amdgcn.sched.barrier', [m], [], [])\n",
            expected=None,
            message="no fix: the mask is not a constant built from a Python int here",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl._mlir.dialects import rocdl\nrocdl.sched_barrier(m)\n",
            expected=None,
            message="predates",
            settings={"flydsl_version": "0.1.8"},
        ),
    ]
