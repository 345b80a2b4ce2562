import ast

from flydsl_ls.analysis.diagnostic import Applicability, Fix
from flydsl_ls.analysis.rawtypes import raw_result_type
from flydsl_ls.analysis.rewrite import fx_alias, replacement_text
from flydsl_ls.analysis.rules.base import Invalid, Rule, Valid

ARITH_VALUE = "fx.arith.ArithValue"


class ArithValueWrapper(Rule):
    """
    `ArithValue(x)` wraps a value so that Python operators work on it. fx values
    (`fx.Int32`, `fx.Float32`, `fx.Vector`, ...) already overload `+ - * / % << >> == <`,
    so the wrapper is noise on them; `ArithValue` itself is deprecated in
    `flydsl.expr.arith` and `flydsl.expr.utils.arith` (both homes are recognised, under
    any alias).

    When `x` is already an fx value the wrapper is dropped (safe). When `x` is a raw
    `ir.Value` (a dialect op result, `gpu.thread_id(...)`, `.ir_value()`), wrap it once
    where it is defined, e.g. `v = fx.Float32(raw)`, instead of at every use. When the
    type of `x` cannot be inferred, dropping the wrapper is offered as an unsafe fix.
    """

    code = "FLY101"
    name = "arith-value-wrapper"
    summary = "`ArithValue(x)` wrapper around a value"
    replacement = "the fx value itself; wrap a raw ir.Value once at its source (`fx.Float32(raw)`)"
    fix_safety = "safe when x is an fx value whose operators provably match ArithValue's, else unsafe"
    fix_title = "Remove the ArithValue wrapper"
    example_before = "acc = ArithValue(val) + peer"
    example_after = "acc = val + peer  # val is already fx.Float32"

    def visit_Call(self, node: ast.Call) -> None:
        if self.model.resolve(node.func) != ARITH_VALUE:
            return
        if len(node.args) != 1 or node.keywords or isinstance(node.args[0], ast.Starred):
            self.report(node, "`ArithValue(...)` is deprecated: use fx typed values")
            return
        inner = node.args[0]
        kind = self.model.type_of(inner)
        text = replacement_text(self.model, inner, node, self.ctx.parent)
        if kind.is_typed:
            hazard = self._operator_hazard(node, kind)
            self.report(
                node,
                f"`ArithValue(...)` around a value that is already `{kind.name}`: drop the wrapper"
                + (f" (unsafe: {hazard})" if hazard else ""),
                fix=self.replace(node, text, self.fix_title, safe=hazard is None),
            )
        elif kind.is_raw:
            where = f" ({kind.origin}, line {kind.line})" if kind.line else ""
            fix, why_not = self._wrap_at_source(inner)
            self.report(
                node,
                f"`ArithValue(...)` around a raw ir.Value{where}: wrap it once at its source "
                f"with an fx type (e.g. `fx.Float32(raw)`){why_not}",
                fix=fix,
            )
        elif kind.known:
            self.report(node, f"`ArithValue(...)` around a {kind.name}: use an fx type instead")
        else:
            self.report(
                node,
                "`ArithValue(...)` is deprecated: fx values already support operators",
                fix=self.replace(node, text, self.fix_title, safe=False),
            )

    def _operator_hazard(self, node: ast.Call, kind) -> str | None:
        """Why dropping the wrapper could change the IR, or None.

        An integer ArithValue has no signedness: `>>` emits `shrui` and `/` `uitofp`, where
        `fx.Int32`/`fx.Int64` emit `shrsi`/`sitofp`; `fx.Uint*` operators are unsigned where
        ArithValue's `%`, `//`, `<` are signed; `fx.Index` makes Python operands i32
        constants plus an `index_cast`. So for integers the result (followed through the
        names it is assigned to) must not reach `>>` or `/` (checked with the real compiler
        in tests/semantics/).
        """
        name = kind.name
        if name == ARITH_VALUE or name.startswith(("fx.Float", "fx.BFloat")):
            return None
        if name.startswith("fx.Uint") or name == "fx.Index":
            return f"`{name}` operators differ from ArithValue's"
        root = self.ctx.enclosing_function() or self.model.tree
        return self._reaches_shift_or_div(node, self.model.parent_map(root), 0)

    def _reaches_shift_or_div(self, expr: ast.expr, parents: dict, depth: int) -> str | None:
        """Why the integer may meet a `>>` or `/`, following it through operators and the
        names it is assigned to; a value that leaves for code we cannot see may too."""
        child, parent = expr, parents.get(id(expr))
        while isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare, ast.AugAssign)):
            if isinstance(getattr(parent, "op", None), (ast.RShift, ast.Div)):
                return "ArithValue's `>>` and `/` are unsigned, fx integers' signed"
            if isinstance(parent, ast.AugAssign):
                return None if child is parent.value else "the value is updated in place"
            if isinstance(parent, ast.Compare):
                return None  # a boolean from here on: signedness of the integer is spent
            child, parent = parent, parents.get(id(parent))
        if isinstance(parent, ast.Expr):
            return None
        if isinstance(parent, ast.Assign) and child is parent.value and len(parent.targets) == 1:
            target = parent.targets[0]
            if isinstance(target, ast.Name) and depth < 4:
                binding = self._binding_of_target(target, parents)
                if binding is None:
                    return "its uses cannot be followed"
                for use in self.model.uses_of(binding):
                    why = self._reaches_shift_or_div(use, parents, depth + 1)
                    if why:
                        return why
                return None
        return "the value is passed on (returned, stored or given to a call), where `>>` or `/` may meet it"

    def _binding_of_target(self, target: ast.Name, parents: dict):
        scope_node = parents.get(id(target))
        while scope_node is not None and not isinstance(scope_node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scope_node = parents.get(id(scope_node))
        scope = self.model.function_scope(scope_node) if scope_node is not None else self.model.module_scope
        if scope is None:
            return None
        return next((b for b in scope.bindings.get(target.id, ()) if b.node is target), None)

    def _wrap_at_source(self, inner: ast.expr):
        """"Wrap once at source": type the raw definition, unwrap every ArithValue use.

        Offered when the value has one definition in this function, its fx type can be
        read off the op, and every use is arithmetic or an ArithValue(...) wrap (a raw
        consumer would then receive an fx value). Unsafe: operators on fx types can
        differ from ArithValue's (signed integer division, for one).
        """
        if not isinstance(inner, ast.Name):
            return None, ""
        bindings = self.model.reaching_bindings(inner)
        if len(bindings) != 1 or bindings[0].kind != "assign":
            return None, " (no fix: the value has more than one definition)"
        binding = bindings[0]
        source = binding.value
        if not isinstance(source, ast.Call) or binding.scope.node is not self.ctx.enclosing_function():
            return None, ""
        fx_type = raw_result_type(self.model, source)
        if fx_type is None:
            return None, " (no fix: its MLIR type cannot be read off the op)"
        parents = self.model.parent_map(binding.scope.node)
        unwraps = []
        for use in self.model.uses_of(binding):
            parent = parents.get(id(use))
            if isinstance(parent, ast.Call) and self.model.resolve(parent.func) == ARITH_VALUE:
                unwraps.append(self.edit(self.ctx.range(parent), use.id))
            elif not isinstance(parent, (ast.BinOp, ast.Compare, ast.UnaryOp, ast.AugAssign)):
                return None, f" (no fix: `{use.id}` is also used as a raw value on line {use.lineno})"
        fx, imports = fx_alias(self.model)
        wrapped = f"{fx}.{fx_type[3:]}({self.text(source)})"
        fix = Fix(
            title="Wrap once at source (unsafe)",
            applicability=Applicability.UNSAFE,
            edits=(self.edit(self.ctx.range(source), wrapped), *unwraps, *imports),
        )
        return fix, ""

    VALID = [
        Valid("import flydsl.expr as fx\nx = fx.Int32(3) + 1\n"),
        Valid("from mylib import ArithValue\ny = ArithValue(x)\n"),
        Valid('from flydsl.expr.arith import ArithValue\ns = "ArithValue(x)"  # ArithValue(x)\n'),
        Valid("from flydsl.expr.arith import ArithValue\nok = isinstance(v, ArithValue)\n"),
    ]
    INVALID = [
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
            "def f(val: fx.Float32, peer):\n    return ArithValue(val) + peer\n",
            expected="import flydsl.expr as fx\n"
                     "def f(val: fx.Float32, peer):\n"
                     "    return val + peer\n",
            line=4,
            column=12,
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.utils.arith import ArithValue as _AV\n"
            "tid = fx.thread_idx.x\nlane = _AV(tid) % 64\n",
            expected="import flydsl.expr as fx\n"
                     "tid = fx.thread_idx.x\n"
                     "lane = tid % 64\n",
            message="already `fx.Int32`",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "a = fx.Int32(1)\nb = fx.Int32(2)\nc = arith.ArithValue(a + b) * 2\n",
            expected="import flydsl.expr as fx\n"
                     "a = fx.Int32(1)\n"
                     "b = fx.Int32(2)\n"
                     "c = (a + b) * 2\n",
        ),
        Invalid(
            "from flydsl.expr import arith\nfrom flydsl._mlir.dialects import arith as std_arith\n"
            "def f(a, b):\n    s = std_arith.addf(a, b)\n    return arith.ArithValue(s) * 2\n",
            expected=None,
            message="cannot be read off the op",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "from flydsl._mlir.dialects import arith as std_arith\n"
            "def f(a: fx.Float32, b: fx.Float32):\n"
            "    s = std_arith.mulf(a, b)  # product\n"
            "    t = arith.ArithValue(s) * 2.0\n"
            "    return arith.ArithValue(s) + t\n",
            expected="import flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import arith as std_arith\n"
            "def f(a: fx.Float32, b: fx.Float32):\n"
            "    s = fx.Float32(std_arith.mulf(a, b))  # product\n"
            "    t = s * 2.0\n"
            "    return s + t\n",
            unsafe=True,
            count=2,
            message="raw ir.Value",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "def f(x):\n"
            "    v = arith.index_cast(T.i32, x)\n"
            "    w = arith.addi(v, v)\n"
            "    return arith.ArithValue(v) * 4\n",
            expected=None,
            message="also used as a raw value on line 6",
        ),
        Invalid(
            "from flydsl.expr.arith import ArithValue\ndef f(v):\n    return ArithValue(v) + 1\n",
            expected="def f(v):\n"
                     "    return v + 1\n",
            unsafe=True,
        ),
        # ArithValue's `>>` is shrui and `/` uitofp; fx.Int32's are shrsi and sitofp
        # (compiled before and after in tests/semantics/): unsafe when the value reaches them.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
            "def f(n: fx.Int32):\n    tid = fx.thread_idx.x\n    lane = ArithValue(tid) % 16\n"
            "    half = ArithValue(n) / 2\n    return lane >> 1, half\n",
            expected="import flydsl.expr as fx\n"
            "def f(n: fx.Int32):\n    tid = fx.thread_idx.x\n    lane = tid % 16\n"
            "    half = n / 2\n    return lane >> 1, half\n",
            unsafe=True,
            count=2,
            message="unsigned",
        ),
        Invalid(
            "import flydsl.expr as fx\ndef f(a: fx.Float32):\n    return fx.arith.ArithValue(a)\n",
            expected="import flydsl.expr as fx\ndef f(a: fx.Float32):\n    return a\n",
        ),
    ]
