import ast

from flydsl_ls.analysis.model.rewrite import fx_alias, replacement_text
from flydsl_ls.analysis.model.valueflow import value_kind
from flydsl_ls.analysis.rules._control_flow_support import call_base, method_call_state
from flydsl_ls.analysis.rules._parameter_kind import parameter_kind
from flydsl_ls.analysis.rules.base import Callees, Invalid, Rule, Valid

# `buffer_ops._unwrap_value` (FlyDSL's and aiter's buffer_ops shims) unwraps as `_to_raw` does:
# `.ir_value()` of an fx value, the raw value of an ArithValue, a raw value as it is.
UNWRAPPERS = {"fx.arith.unwrap", "fx.arith._to_raw", "shim.tensor_shim._to_raw", "shim.buffer_ops._unwrap_value"}


# The head of the rule's kernel cases: a traced function with a static fx value.
_KERNEL = "import flydsl.expr as fx\nimport flydsl.compiler as flyc\n"
_RAW_IMPORT = "from flydsl.expr.arith import _to_raw as _raw\n"
_KERNEL_HEAD = "@flyc.kernel\ndef k(n: fx.Int32):\n    zero = fx.Int32(0)\n"


class RawUnwrap(Rule):
    """
    `arith.unwrap(v)` and `arith._to_raw(v)` turn a typed value into a raw `ir.Value`.
    The typed values say it directly: `v.ir_value()`, and only where a raw value is
    really needed (a raw MLIR builder, an `scf.IfOp` condition).

    Aliases are followed: `from flydsl.expr.arith import _to_raw as _raw`,
    `_to_raw as as_mlir_value`, aiter's `tensor_shim._to_raw`, the buffer_ops shims'
    `_unwrap_value`, or `_raw = arith.unwrap`,
    also when imported from a sibling module of the project. Hand-rolled copies (a
    function of one parameter that returns either it or its `.ir_value()`, such as
    `def _raw(v): return v.ir_value() if hasattr(v, "ir_value") else v`) are `_to_raw`
    too. Helpers that merely share the name (for instance `_raw = as_ir_value`, the
    canonical converter) are not flagged.

    The fix is safe when `v` is an fx value (`_to_raw(v)` is then exactly
    `v.ir_value()`), and when `v` is already raw (the call is the identity). A helper's
    parameter is of the kind every call of the helper passes, when all its calls are
    known (a helper nested in a kernel, or one no other project file mentions). Inside
    a dynamic `if`/`while`/`for` of a traced function, a method call on `v` makes
    FlyDSL's rewriter carry `v` (the `scf.if` gains a result; for a variable of an
    enclosing function the trace fails): there the fix is `fx.as_ir_value(v)`, a
    function call that on an fx value is exactly `v.ir_value()`.

    When the kind of `v` is unknown, `.ir_value()` would fail on a raw value (a
    `vector.extract` result, say) and dropping the call would hand an fx value to a raw
    builder: the fix is then `fx.as_ir_value(v)`, FlyDSL's canonical converter, which
    takes both (the `flydsl.expr` import is added when missing). It is safe after
    FlyDSL's `unwrap`/`_to_raw` and the shims' copy of `_to_raw`: on every value they
    accept, `as_ir_value` returns the same `ir.Value` (FlyDSL 0.3.1 and 0.5.0; for a
    Python scalar, the same constant as `unwrap`), and a function call adds nothing to
    the state FlyDSL's rewriter carries. It is unsafe after a hand-rolled unwrapper, the
    buffer_ops shims' `_unwrap_value` or one imported from elsewhere in the project
    (they hand a Python scalar on as it is), and after `arith.unwrap` on a local `arith`
    (a module passed in: a dynamic region may have carried it). No fix for Python
    scalars (which `unwrap` materialises as constants), when `unwrap` is given
    `type=`/`index=`, or where a local name shadows the `flydsl.expr` alias.
    """

    code = "FLY102"
    name = "raw-unwrap"
    summary = "`arith.unwrap(v)` / `arith._to_raw(v)` (any alias)"
    replacement = "`v.ir_value()`, only where a raw ir.Value is needed"
    fix_safety = (
        "safe for fx and raw values, and `fx.as_ir_value(v)` for values of unknown kind (or that control "
        "flow would carry) after FlyDSL's own unwrappers; unsafe after hand-rolled ones; none for Python "
        "scalars, or where a local name shadows `fx`"
    )
    fix_title = "Replace with v.ir_value()"
    fix_title_either = "Replace with fx.as_ir_value(v)"
    example_before = "cond = arith.unwrap(idx >= limit)"
    example_after = "cond = (idx >= limit).ir_value()"

    callees = Callees(symbols=frozenset(UNWRAPPERS))

    def visit_Call(self, node: ast.Call) -> None:
        symbol = self.model.resolve(node.func)
        if symbol not in UNWRAPPERS:
            return
        spelled = ast.unparse(node.func)
        if len(node.args) != 1 or node.keywords or isinstance(node.args[0], ast.Starred):
            self.report(node, f"`{spelled}(...)` is legacy: use `.ir_value()` on the fx value")
            return
        inner = node.args[0]
        kind = value_kind(self.model.type_of(inner))
        if kind == "unknown" and isinstance(inner, ast.Name):
            kind = parameter_kind(self.model, inner)
        message = f"`{spelled}(v)` is legacy: use `v.ir_value()` where a raw value is needed"
        if kind == "fx":
            receiver = self._receiver(inner)
            state = method_call_state(self.model, self.ctx.parents, node, inner)
            fx, imports = fx_alias(self.model)
            if state is not None and not self._local(fx):
                # The converter is a function call: nothing more for the rewriter to carry,
                # and on an fx value it is exactly `v.ir_value()`.
                self.report(
                    node,
                    f"`{spelled}(v)` is legacy: use `fx.as_ir_value(v)` here, where `.ir_value()` would not do: "
                    f"{state.describe().replace('makes', 'would make', 1)}",
                    fix=self.replace(node, f"{fx}.as_ir_value({self.text(inner)})", self.fix_title_either,
                                     extra=imports),
                )
                return
            if state is not None and state.fails:
                self.report(node, f"{message} (no fix: {state.describe()})")
                return
            self.report(
                node,
                f"{message} (unsafe: {state.describe()})" if state else message,
                fix=self.replace(node, f"{receiver}.ir_value()", self.fix_title, safe=state is None),
            )
        elif kind == "raw":
            text = replacement_text(self.model, inner, node, self.ctx.parent)
            self.report(
                node,
                f"`{spelled}(v)` on a value that is already an ir.Value: drop it",
                fix=self.replace(node, text, "Remove the unwrap"),
            )
        elif kind == "python":
            python = self.model.type_of(inner)  # unknown for a parameter its callers give Python values
            self.report(node, f"{message} (a Python {python.name if python.is_python else 'value'} needs an fx type first)")
        else:
            self._either(node, spelled, inner)

    def _either(self, node: ast.Call, spelled: str, inner: ast.expr) -> None:
        """A value of unknown kind: FlyDSL's converter `fx.as_ir_value` takes both (a raw
        ir.Value has no `.ir_value()`, an fx value must not lose the call)."""
        message = (
            f"`{spelled}(v)` is legacy: `fx.as_ir_value(v)` is FlyDSL's converter for a value that may be "
            "fx or already an ir.Value"
        )
        fx, imports = fx_alias(self.model)
        if self._local(fx):
            self.report(node, f"{message} (no fix: `{fx}` is a local name here, not `flydsl.expr`)")
            return
        fix = f"{fx}.as_ir_value({self.text(inner)})"
        unsafe = self._hand_rolled(node.func)
        if unsafe is None and isinstance(node.func, ast.Attribute):
            base = call_base(node.func)
            if base is not None and self._local(base.id):
                unsafe = f"a dynamic region may no longer carry `{base.id}`, a local the call was a method of"
        if unsafe is None:
            self.report(node, message, fix=self.replace(node, fix, self.fix_title_either, extra=imports))
            return
        self.report(
            node,
            f"{message} (unsafe: {unsafe})",
            fix=self.replace(node, fix, self.fix_title_either, safe=False, extra=imports),
        )

    def _hand_rolled(self, func: ast.expr) -> str | None:
        """Why `fx.as_ir_value` may differ from the callee, or None when the callee is FlyDSL's
        `unwrap`/`_to_raw` (or the shims' copy of `_to_raw`): on every value they take, the
        converter gives the same ir.Value (FlyDSL 0.3.1 and 0.5.0; a Python scalar becomes the
        same constant as `unwrap`'s)."""
        symbol = self.model.resolve(func)
        if symbol in ("fx.arith.unwrap", "shim.tensor_shim._to_raw"):
            return None
        why = (
            f"`{ast.unparse(func)}` is {{}}, which hands a Python scalar on as it is where `as_ir_value` makes it a "
            "constant"
        )
        if symbol == "shim.buffer_ops._unwrap_value":
            return why.format("the buffer_ops shim's unwrapper")
        for _ in range(8):  # aliases in this file, down to FlyDSL's own import
            if isinstance(func, ast.Attribute):
                dotted = self.model.dotted(func)
                return None if dotted and dotted.startswith("flydsl.") else why.format("defined elsewhere in the project")
            binding = self.model.binding_of(func) if isinstance(func, ast.Name) else None
            if binding is None:
                break
            if binding.kind == "import":
                dotted = binding.dotted or ""
                return None if dotted.startswith("flydsl.") else why.format("defined elsewhere in the project")
            if binding.kind == "def":
                return why.format("a hand-rolled unwrapper")
            if binding.kind not in ("assign", "annassign") or not isinstance(binding.value, (ast.Name, ast.Attribute)):
                break
            func = binding.value
        return why.format("not known to be FlyDSL's `_to_raw`")

    def _local(self, name: str) -> bool:
        """``name`` is bound in a function around the finding (it shadows a module-level one)."""
        return any(name in scope.bindings for scope in self._enclosing_scopes())

    def _enclosing_scopes(self):
        for parent in self.ctx.parents:
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                scope = self.model.function_scope(parent)
                if scope is not None:
                    yield scope

    def _receiver(self, inner: ast.expr) -> str:
        text = self.text(inner)
        if isinstance(inner, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
            return text
        return f"({text})"

    VALID = [
        Valid("from flydsl.expr.typing import as_ir_value as _raw\nx = _raw(v)\n"),
        Valid("def _raw(v):\n    return v.value if hasattr(v, 'value') else v\nx = _raw(v)\n"),
        Valid("def _raw(v):\n    return v\nx = _raw(v)\n"),
        Valid("import flydsl.expr as fx\nx = fx.Int32(1).ir_value()\n"),
        Valid("from flydsl.expr.arith import unwrap\n# unwrap(x) in a comment\n"),
    ]
    INVALID = [
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "def f(idx: fx.Int32, limit: fx.Int32):\n    return arith.unwrap(idx >= limit)\n",
            expected="import flydsl.expr as fx\n"
                     "def f(idx: fx.Int32, limit: fx.Int32):\n"
                     "    return (idx >= limit).ir_value()\n",
            message="legacy",
            line=4,
            column=12,
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "def f(idx: fx.Int32):\n    return arith.unwrap(idx + 1)\n",
            expected="import flydsl.expr as fx\n"
                     "def f(idx: fx.Int32):\n"
                     "    return (idx + 1).ir_value()\n",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.arith import _to_raw as _raw\n"
            "x = fx.Float32(1.0)\ny = _raw(x)\n",
            expected="import flydsl.expr as fx\n"
                     "x = fx.Float32(1.0)\n"
                     "y = x.ir_value()\n",
        ),
        # A value of unknown kind: FlyDSL's converter, which takes both (the import added).
        Invalid(
            "from aiter.ops.flydsl.kernels.tensor_shim import _to_raw as as_mlir_value\n"
            "def f(v):\n    return as_mlir_value(v)\n",
            expected="import flydsl.expr as fx\ndef f(v):\n    return fx.as_ir_value(v)\n",
            message="`fx.as_ir_value(v)` is FlyDSL's converter for a value that may be fx or already an ir.Value",
        ),
        # A hand-rolled unwrapper (or the buffer_ops shims') hands a Python scalar on: unsafe.
        Invalid(
            "def _raw(v):\n    return v.ir_value() if hasattr(v, 'ir_value') else v\n"
            "def f(v):\n    return _raw(v)\n",
            expected="import flydsl.expr as fx\ndef _raw(v):\n    return v.ir_value() if hasattr(v, 'ir_value') else v\n"
            "def f(v):\n    return fx.as_ir_value(v)\n",
            unsafe=True,
            message="(unsafe: `_raw` is a hand-rolled unwrapper, which hands a Python scalar on as it is",
        ),
        Invalid(
            "from aiter.ops.flydsl.kernels import buffer_ops\n"
            "def f(v):\n    return buffer_ops._unwrap_value(v)\n",
            expected="import flydsl.expr as fx\ndef f(v):\n    return fx.as_ir_value(v)\n",
            unsafe=True,
            message="is the buffer_ops shim's unwrapper",
        ),
        # `arith` a local (a module passed in): a dynamic region carried it for the method call.
        Invalid(
            "import flydsl.expr as fx\n"
            "def f(arith, v):\n    return arith.unwrap(v)\ndef g(v):\n    return f(fx.arith, v)\n",
            expected="import flydsl.expr as fx\n"
            "def f(arith, v):\n    return fx.as_ir_value(v)\ndef g(v):\n    return f(fx.arith, v)\n",
            unsafe=True,
            message="a dynamic region may no longer carry `arith`",
        ),
        # ... under the module's own alias, or a free one when `fx` is something else; none
        # where a local `fx` would shadow it.
        Invalid(
            "import flydsl.expr as flx\nfrom flydsl.expr import arith\ndef f(v):\n    return arith.unwrap(v)\n",
            expected="import flydsl.expr as flx\ndef f(v):\n    return flx.as_ir_value(v)\n",
        ),
        Invalid(
            "fx = 3\nfrom flydsl.expr import arith\ndef f(v):\n    return arith.unwrap(v)\n",
            expected="fx = 3\nimport flydsl.expr as _fx\ndef f(v):\n    return _fx.as_ir_value(v)\n",
        ),
        Invalid(
            "from flydsl.expr import arith\ndef f(fx, v):\n    return arith.unwrap(v)\n",
            expected=None,
            message="no fix: `fx` is a local name here",
        ),
        # A helper's parameter takes the kind every call passes: fx values...
        Invalid(
            _KERNEL + _RAW_IMPORT + "@flyc.kernel\ndef k(n: fx.Int32):\n"
            "    def addr(v):\n        return _raw(v)\n    a = addr(n)\n    b = addr(v=n + 1)\n",
            expected=_KERNEL + "@flyc.kernel\ndef k(n: fx.Int32):\n"
            "    def addr(v):\n        return v.ir_value()\n    a = addr(n)\n    b = addr(v=n + 1)\n",
        ),
        # ... raw values, also handed on through another helper's parameter...
        Invalid(
            "from flydsl.expr import arith\nfrom flydsl._mlir.dialects import arith as std_arith\n"
            "def f(a, b):\n    def g(v):\n        return arith.unwrap(v)\n"
            "    def h(w):\n        return g(w)\n    return h(std_arith.addi(a, b))\n",
            expected="from flydsl._mlir.dialects import arith as std_arith\n"
            "def f(a, b):\n    def g(v):\n        return v\n"
            "    def h(w):\n        return g(w)\n    return h(std_arith.addi(a, b))\n",
        ),
        # ... Python values, which `unwrap` materialises as constants: no fix...
        Invalid(
            "from flydsl.expr import arith\ndef f():\n    def g(v):\n        return arith.unwrap(v)\n"
            "    return g(4), g(v=5)\n",
            expected=None,
            message="(a Python value needs an fx type first)",
        ),
        # ... but not when the calls disagree, or the helper is also passed as a value.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl._mlir.dialects import arith as std_arith\n"
            "def f(a, b, n: fx.Int32):\n    def g(v):\n        return arith.unwrap(v)\n"
            "    return g(std_arith.addi(a, b)), g(n)\n",
            expected="import flydsl.expr as fx\nfrom flydsl._mlir.dialects import arith as std_arith\n"
            "def f(a, b, n: fx.Int32):\n    def g(v):\n        return fx.as_ir_value(v)\n"
            "    return g(std_arith.addi(a, b)), g(n)\n",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "def f(n: fx.Int32):\n    def g(v):\n        return arith.unwrap(v)\n"
            "    h = g\n    return g(n), h\n",
            expected="import flydsl.expr as fx\n"
            "def f(n: fx.Int32):\n    def g(v):\n        return fx.as_ir_value(v)\n"
            "    h = g\n    return g(n), h\n",
        ),
        # The buffer_ops shims' `_unwrap_value` is `_to_raw` by another name.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "from aiter.ops.flydsl.kernels import buffer_ops\n"
            "def f(slot: fx.Int32):\n    return arith.extsi(T.i64, buffer_ops._unwrap_value(slot))\n",
            expected="import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "def f(slot: fx.Int32):\n    return arith.extsi(T.i64, slot.ir_value())\n",
        ),
        Invalid(
            "from flydsl.expr import arith\n_raw = arith._to_raw\n"
            "from flydsl._mlir.dialects import arith as std_arith\n"
            "def f(a, b):\n    s = std_arith.addi(a, b)\n    return _raw(s)\n",
            expected="from flydsl.expr import arith\n_raw = arith._to_raw\n"
            "from flydsl._mlir.dialects import arith as std_arith\n"
            "def f(a, b):\n    s = std_arith.addi(a, b)\n    return s\n",
        ),
        Invalid(
            "import flydsl.expr as fx\n"
            "def _raw(v):\n"
            '    """Unwrap a DSL value."""\n'
            "    if hasattr(v, 'ir_value'):\n"
            "        return v.ir_value()\n"
            "    return v\n"
            "def f(a: fx.Int32):\n"
            "    return _raw(a)\n",
            expected="import flydsl.expr as fx\n"
            "def _raw(v):\n"
            '    """Unwrap a DSL value."""\n'
            "    if hasattr(v, 'ir_value'):\n"
            "        return v.ir_value()\n"
            "    return v\n"
            "def f(a: fx.Int32):\n"
            "    return a.ir_value()\n",
            line=8,
        ),
        Invalid(
            "from flydsl.expr import arith\nc = arith.unwrap(4, index=True)\n",
            expected=None,
        ),
        # FlyDSL's rewriter carries every name a dynamic region calls a method on:
        # `zero.ir_value()` would give the scf.if a result; the converter, a function call,
        # does not (compiled in tests/semantics/).
        Invalid(
            _KERNEL + _RAW_IMPORT + _KERNEL_HEAD +
            "    if n > 0:\n"
            "        fx.printf(_raw(zero))\n",
            expected=(
            _KERNEL + _KERNEL_HEAD +
            "    if n > 0:\n"
            "        fx.printf(fx.as_ir_value(zero))\n"),
            message="inside the `if` on line 7, a method call on `zero` would make FlyDSL's rewriter carry it",
        ),
        # ... also for a variable of an enclosing function, where the method call would not trace.
        Invalid(
            _KERNEL + _RAW_IMPORT + _KERNEL_HEAD +
            "    def body():\n"
            "        for i in range(n):\n"
            "            fx.printf(_raw(zero))\n"
            "    body()\n",
            expected=(
            _KERNEL + _KERNEL_HEAD +
            "    def body():\n"
            "        for i in range(n):\n"
            "            fx.printf(fx.as_ir_value(zero))\n"
            "    body()\n"),
        ),
        # With `fx` a local name, `.ir_value()` it is (unsafe), and no fix for a closure variable.
        Invalid(
            "import flydsl.compiler as flyc\n" + _RAW_IMPORT +
            "@flyc.kernel\ndef k(n):\n    import flydsl.expr as fx\n    zero = fx.Int32(0)\n"
            "    if n > 0:\n"
            "        fx.printf(_raw(zero))\n"
            "    def body():\n"
            "        for i in range(n):\n"
            "            fx.printf(_raw(zero))\n",
            expected=(
            "import flydsl.compiler as flyc\n" + _RAW_IMPORT +
            "@flyc.kernel\ndef k(n):\n    import flydsl.expr as fx\n    zero = fx.Int32(0)\n"
            "    if n > 0:\n"
            "        fx.printf(zero.ir_value())\n"
            "    def body():\n"
            "        for i in range(n):\n"
            "            fx.printf(_raw(zero))\n"),
            unsafe=True,
            count=2,
            message="(unsafe: inside the `if` on line 7, a method call on `zero` makes",
        ),
        # A compile-time branch, or a region that already calls a method on it: unchanged.
        Invalid(
            _KERNEL + _RAW_IMPORT + _KERNEL_HEAD +
            "    if fx.const_expr(n):\n"
            "        fx.printf(_raw(zero))\n"
            "    while n > 0:\n"
            "        n = zero.to(fx.Int32)\n"
            "        fx.printf(_raw(zero))\n",
            expected=(
            _KERNEL + _KERNEL_HEAD +
            "    if fx.const_expr(n):\n"
            "        fx.printf(zero.ir_value())\n"
            "    while n > 0:\n"
            "        n = zero.to(fx.Int32)\n"
            "        fx.printf(zero.ir_value())\n"),
            count=2,
        ),
    ]
