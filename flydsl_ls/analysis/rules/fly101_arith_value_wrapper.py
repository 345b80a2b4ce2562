import ast

from flydsl_ls.analysis.model.diagnostic import Applicability, Fix
from flydsl_ls.analysis.model.fxtypes import VECTOR
from flydsl_ls.analysis.model.rawtypes import element_type, raw_result_type
from flydsl_ls.analysis.model.rewrite import fx_alias, replacement_text
from flydsl_ls.analysis.model.valueflow import (
    SHARED_METHODS,
    Sink,
    fx_result_blocker,
    kind_change_blocker,
    value_uses,
)
from flydsl_ls.analysis.rules._boundary import raw_boundaries
from flydsl_ls.analysis.rules._buffer_access import chosen_class
from flydsl_ls.analysis.rules._operands import kind_as_it_was
from flydsl_ls.analysis.rules._raw_dialect_support import ATOM, is_float_type, precedence
from flydsl_ls.analysis.rules._control_flow_support import method_call_state
from flydsl_ls.analysis.rules.base import Callees, Invalid, Rule, Valid

ARITH_VALUE = "fx.arith.ArithValue"


# `T.<type>` a bitcast goes to -> its fx type; the source taken when unknown (the other
# family of the width); widths.
_BITCAST_TARGETS = {
    "fx.T.f32": "fx.Float32", "fx.T.i32": "fx.Int32", "fx.T.f16": "fx.Float16", "fx.T.bf16": "fx.BFloat16",
    "fx.T.f64": "fx.Float64", "fx.T.i64": "fx.Int64", "fx.T.i16": "fx.Int16",
}
_BITCAST_SOURCES = {
    "fx.Float32": "fx.Int32", "fx.Int32": "fx.Float32", "fx.Float16": "fx.Int16", "fx.BFloat16": "fx.Int16",
    "fx.Float64": "fx.Int64", "fx.Int64": "fx.Float64",
}
_WIDTHS = {
    "fx.Float32": 32, "fx.Int32": 32, "fx.Uint32": 32, "fx.Float16": 16, "fx.BFloat16": 16, "fx.Int16": 16,
    "fx.Uint16": 16, "fx.Float64": 64, "fx.Int64": 64, "fx.Uint64": 64,
}

# Other `ArithValue(...)` wrappers the value meets: this pass may drop them too, so their
# consumers see the value as it comes (aiter's fused_compress_attn_hca: `lane = ArithValue(tid)
# & m` and, further down, `ArithValue(lane) - c` into `arith.maxsi`, both dropped at once).
_OTHER_WRAPPERS = frozenset({ARITH_VALUE})


class ArithValueWrapper(Rule):
    """
    `ArithValue(x)` wraps a value so that Python operators work on it. fx values
    (`fx.Int32`, `fx.Float32`, `fx.Vector`, ...) already overload `+ - * / % << >> == <`,
    so the wrapper is noise on them; `ArithValue` itself is deprecated in
    `flydsl.expr.arith` and `flydsl.expr.utils.arith` (both homes are recognised, under
    any alias).

    When `x` is already an fx value the wrapper is dropped (safe). When `x` is a raw
    `ir.Value` (a dialect op result, `gpu.thread_id(...)`, `.ir_value()`), wrap it once
    where it is defined in the fx class of its MLIR type (`v = fx.Int32(raw)` for an i32,
    `fx.Float32(raw)` for an f32: an fx float refuses an integer value), instead of at every
    use; the message names that class when the op gives it. When the
    type of `x` cannot be inferred, dropping the wrapper is offered as an unsafe fix.
    `ArithValue(x).index_cast(T.index)` is `fx.Index(x)` whatever `x` is, and
    `ArithValue(x).bitcast(T.f32)` is `fx.Int32(x).bitcast(fx.Float32)` (`x.bitcast(...)`
    when `x` is that fx type; `fx.Float32(x)` would convert, not bitcast). The value is
    followed to an operator whose left operand surely holds an IR value: that operand picks
    the operator, so the result is of the kind it was (`is_greater | (ArithValue(a) ==
    ArithValue(b))`, `fx.Int32(k) * ArithValue(n)`). Where the fx value
    also reaches a consumer that needs the raw one (a raw builder, an ArithValue method, code
    the file does not show), that consumer gets `x.ir_value()` in the same (unsafe) fix.
    Where `x` may be either kind and its value reaches raw builders or code the file does
    not show, each of them gets `fx.as_ir_value(v)`, which takes either kind (not where the
    value meets `>>`, `/` or an ArithValue method). No fix where an operator's Python
    literal reads otherwise without the wrapper: ArithValue wraps `3000000000` to an i32
    constant and refuses `1.5` beside an integer, fx integers widen or promote them.
    """

    code = "FLY101"
    name = "arith-value-wrapper"
    summary = "`ArithValue(x)` wrapper around a value"
    replacement = "the fx value itself; wrap a raw ir.Value once at its source in the fx class of its type (`fx.Int32(raw)` for an i32)"
    fix_safety = (
        "safe when x is an fx value whose consumers provably see the same IR (`x.ir_value()` for a raw "
        "builder); unsafe otherwise; none where an fx value could not be traced"
    )
    fix_title = "Remove the ArithValue wrapper"
    example_before = "acc = ArithValue(val) + peer"
    example_after = "acc = val + peer  # val is already fx.Float32"

    callees = Callees(symbols=frozenset({ARITH_VALUE}))

    def visit_Call(self, node: ast.Call) -> None:
        if self.model.resolve(node.func) != ARITH_VALUE:
            return
        if len(node.args) != 1 or node.keywords or isinstance(node.args[0], ast.Starred):
            self.report(node, "`ArithValue(...)` is deprecated: use fx typed values")
            return
        inner = node.args[0]
        kind = self.model.type_of(inner)
        text = replacement_text(self.model, inner, node, self.ctx.parent)
        literal = None if self._wrapped_for_index_cast() else self._literal_hazard(node, inner)
        if literal is not None:
            self.report(node, f"`ArithValue(...)` is deprecated: fx values already support operators (no fix: {literal})")
            return
        bitcast = self._bitcast_types(inner)
        if bitcast is not None:
            self._bitcast(node, inner, kind, *bitcast)
            return
        if kind.is_fx_scalar and self._reports_raw_consumer(node, inner, kind):
            return
        state = self._method_state(node, inner)
        if state is not None and state.fails and (kind.is_typed or not kind.known):
            self.report(node, f"`ArithValue(...)` is deprecated (no fix: unwrapped, {state.describe()})")
            return
        if kind.is_typed:
            hazard = (
                self._operator_hazard(node, kind)
                or self._passed_on(node, kind)
                or (state.describe() if state else None)
            )
            self.report(
                node,
                f"`ArithValue(...)` around a value that is already `{kind.name}`: drop the wrapper"
                + (f" (unsafe: {hazard})" if hazard else ""),
                fix=self.replace(node, text, self.fix_title, safe=hazard is None),
            )
        elif kind.is_raw:
            where = f" ({kind.origin}, line {kind.line})" if kind.line else ""
            fix, why_not = self._wrap_at_source(inner)
            self.report(node, f"{self._wrap_advice(inner)}: `ArithValue(...)` around a raw ir.Value{where}{why_not}", fix=fix)
        elif kind.known:
            self.report(node, f"`ArithValue(...)` around a {kind.name}: use an fx type instead")
        elif self._wrapped_for_index_cast():
            self._index_cast(node, inner, state)
        else:
            # `x` may be an fx value: then raw builders and ArithValue methods cannot take it.
            blocker = fx_result_blocker(self._flow(node))
            message = "`ArithValue(...)` is deprecated: " + (
                f"an index cast is `fx.Index({self.text(inner)})`"
                if self._wrapped_for_index_cast() else "fx values already support operators"
            )
            if blocker is not None:
                if self._unwrap_at_builders(node, text, message, blocker, state):
                    return
                self.report(
                    node,
                    f"{message} (no fix: if `{self.text(inner)}` is an fx value, "
                    f"{blocker.describe()} may not take it without the wrapper)",
                )
                return
            if state is not None:
                message += f" (unsafe: {state.describe()})"
            self.report(node, message, fix=self.replace(node, text, self.fix_title, safe=False))

    def _flow(self, node: ast.Call):
        """Where the wrapper's value goes, up to the operators whose result is of the kind it
        was without it (an IR value on their left picks the operator)."""
        return self.value_uses(
            node, through_operators=True, transparent=_OTHER_WRAPPERS, stop=lambda u: self._kept(node, u)
        )

    def _kept(self, node: ast.Call, use) -> bool:
        """`use` gives a result of the kind it gave with the wrapper (an fx.Vector only after a raw operand)."""
        return kind_as_it_was(self.model, use, vector=self.model.type_of(node.args[0]).name == VECTOR)

    def _unwrap_at_builders(self, node: ast.Call, text: str, message: str, blocker, state=None) -> bool:
        """`x` may be raw or fx, and the value reaches raw builders or code that cannot be
        followed: drop the wrapper and hand each of them `fx.as_ir_value(v)`, which takes
        either kind (the raw value they got before).
        Not where the value meets an ArithValue method fx values lack (`.extui`, `.type`): a
        typed form of the method is the migration there (`.select` both kinds have)."""
        if blocker.sink not in (Sink.RAW_BUILDER, Sink.PASSED_ON):
            return False
        uses = self._flow(node)
        if any(u.sink is Sink.METHOD and u.what not in SHARED_METHODS for u in uses):
            return False
        fx, imports = fx_alias(self.model)
        # ArithValue's `>>` and `/` are unsigned, an fx integer's signed
        signed = () if is_float_type(element_type(self.model, node.args[0]) or "") else (">>", "/")
        boundaries = raw_boundaries(
            self, node, operators=signed, transparent=_OTHER_WRAPPERS, unwrap=f"{fx}.as_ir_value"
        )
        if boundaries.blocker is not None or boundaries.wrap_self:
            return False
        self.report(
            node,
            f"{message} (unsafe: fx operators replace ArithValue's if `{self.text(node.args[0])}` is an fx "
            f"value{''.join('; ' + w for w in (boundaries.note, state.describe() if state else '') if w)})",
            fix=Fix(
                title=f"{self.fix_title} (unsafe)",
                applicability=Applicability.UNSAFE,
                edits=(self.edit(self.ctx.range(node), text), *boundaries.edits, *imports),
            ),
        )
        return True

    def _literal_hazard(self, node: ast.Call, inner: ast.expr) -> str | None:
        """A Python literal the operators read otherwise once unwrapped: ArithValue makes an
        int operand a constant of the value's own type (3000000000 wraps to an i32) and
        refuses a float one beside an integer ("bare signless integer cannot be promoted to
        float"), where fx integers widen to Int64 or promote to Float32 (traced on FlyDSL
        0.3.1 and 0.5.0)."""
        dtype = element_type(self.model, inner) or ""
        for use in self._flow(node):
            if use.sink is not Sink.OPERATOR or use.other is None:
                continue
            literal = use.other.operand if isinstance(use.other, ast.UnaryOp) else use.other
            value = literal.value if isinstance(literal, ast.Constant) else None
            where = f"`{self.text(use.other)}` on line {use.node.lineno}"
            if type(value) is float and dtype and not is_float_type(dtype):
                # (beside a value of unknown type, a float literal says the value is a float)
                return f"ArithValue refuses {where} beside an {dtype} value, and fx promotes it to a float"
            wide = dtype in ("fx.Int64", "fx.Uint64") or is_float_type(dtype)
            if type(value) is int and not -(2**31) <= value < 2**31 and not wide:
                return f"{where} wraps to an i32 constant through ArithValue, and widens to fx.Int64 without it"
        return None

    def _wrapped_for_index_cast(self) -> bool:
        """`ArithValue(x).index_cast(T.index)`: the wrapper is there for the method (guide §1:
        `fx.Index(x)`), not for operators."""
        parents = self.ctx.parents
        if len(parents) < 2 or not (isinstance(parents[-1], ast.Attribute) and parents[-1].attr == "index_cast"):
            return False
        call = parents[-2]
        if not (isinstance(call, ast.Call) and call.func is parents[-1] and len(call.args) == 1):
            return False
        target = call.args[0].func if isinstance(call.args[0], ast.Call) else call.args[0]
        return self.model.resolve(target) in ("fx.T.index", "mlir.ir.IndexType.get")

    def _index_cast(self, node: ast.Call, inner: ast.expr, state) -> None:
        """`ArithValue(x).index_cast(T.index)` -> `fx.Index(x)`, whatever kind `x` is; the
        index value is fx, and its consumers that need the raw value get `.ir_value()`."""
        cast = self.ctx.parents[-2]
        message = f"`ArithValue(...)` is deprecated: an index cast is `fx.Index({self.text(inner)})`"
        boundaries = raw_boundaries(self, cast, transparent=_OTHER_WRAPPERS)
        if boundaries.blocker is not None:
            self.report(node, f"{message} (no fix: {boundaries.blocker})")
            return
        fx, imports = fx_alias(self.model)
        text = f"{fx}.Index({self.text(inner)})" + (".ir_value()" if boundaries.wrap_self else "")
        why = "; ".join(
            w for w in ("fx.Index's operators are unsigned", boundaries.note, state.describe() if state else "") if w
        )
        self.report(
            node,
            f"{message} (unsafe: {why})",
            fix=Fix(
                title=f"Replace with {fx}.Index(...) (unsafe)",
                applicability=Applicability.UNSAFE,
                edits=(self.edit(self.ctx.range(cast), text), *boundaries.edits, *imports),
            ),
        )

    def _bitcast_types(self, inner: ast.expr) -> tuple[str, str] | None:
        """`ArithValue(x).bitcast(T.f32)` (or `fx.Float32.ir_type`): the fx types of `x` and of
        the result, `x`'s read off it or, unknown, taken as the other type of the width (a
        bitcast changes the family: i32 -> f32); None when that is not clear (an i16 bitcast
        to f16 or bf16)."""
        parents = self.ctx.parents
        if len(parents) < 2 or not (isinstance(parents[-1], ast.Attribute) and parents[-1].attr == "bitcast"):
            return None
        call = parents[-2]
        if not (isinstance(call, ast.Call) and call.func is parents[-1] and len(call.args) == 1 and not call.keywords):
            return None
        symbol = self.model.resolve(call.args[0]) or ""
        target = _BITCAST_TARGETS.get(symbol) or symbol.removesuffix(".ir_type")  # (`fx.Int32.ir_type`)
        written = None
        if target not in _WIDTHS and (chosen := chosen_class(self.model, call.args[0], call)) is not None:
            # `T.bf16 if c else T.f16`: floats of one width, so one source type bitcasts to either
            target, written = f"fx.{chosen[0]}", chosen[1]
        if target not in _WIDTHS:
            return None
        source = element_type(self.model, inner) or _BITCAST_SOURCES.get(target)
        if source is None or source == target or _WIDTHS.get(source) != _WIDTHS[target]:
            return None
        return source, target, written

    def _bitcast(self, node: ast.Call, inner: ast.expr, kind, source: str, target: str, written: str | None) -> None:
        """`ArithValue(x).bitcast(T.f32)` -> `fx.Int32(x).bitcast(fx.Float32)` (`x.bitcast(...)`
        when `x` is that fx type): fx numerics' `bitcast` takes an fx type (FlyDSL 0.3.1 and
        0.5.0), and `fx.Int32(x)` of an i32 value builds nothing. The result is fx: its raw
        consumers get `.ir_value()`."""
        cast = self.ctx.parents[-2]
        fx, imports = fx_alias(self.model)
        target_text = written.format(fx=fx)[1:-1] if written else f"{fx}.{target[3:]}"  # (a sole argument)
        typed = kind.name == source
        receiver = self.text(inner) if typed else f"{fx}.{source[3:]}({self.text(inner)})"
        if typed and precedence(inner) < ATOM:
            receiver = f"({receiver})"
        message = f"`ArithValue(...)` is deprecated: a bitcast is `{receiver}.bitcast({target_text})`"
        state = self._method_state(node, inner) if typed else None
        boundaries = raw_boundaries(self, cast, transparent=_OTHER_WRAPPERS)
        blocker = boundaries.blocker or (state.describe() if state is not None and state.fails else None)
        if blocker is not None:
            self.report(node, f"{message} (no fix: {blocker})")
            return
        text = f"{receiver}.bitcast({target_text})" + (".ir_value()" if boundaries.wrap_self else "")
        assumed = element_type(self.model, inner) is None
        why = "; ".join(w for w in (
            f"`{self.text(inner)}` is taken to be of type `{source}`" if assumed else "",
            f"the result is `{target}`, whose operators replace ArithValue's" if not is_float_type(target) else "",
            "the type is chosen when the kernel is built" if written else "",
            boundaries.note, state.describe() if state else "",
        ) if w)
        self.report(
            node,
            message + (f" (unsafe: {why})" if why else ""),
            fix=Fix(
                title=f"Replace with .bitcast({target_text})" + (" (unsafe)" if why else ""),
                applicability=Applicability.UNSAFE if why else Applicability.SAFE,
                edits=(self.edit(self.ctx.range(cast), text), *boundaries.edits, *imports),
            ),
        )

    def _method_state(self, node: ast.Call, inner: ast.expr):
        """What unwrapping `ArithValue(x).method(...)` into `x.method(...)` adds to the state
        FlyDSL's rewriter carries through the control flow around it."""
        parents = self.ctx.parents
        if len(parents) < 2 or not isinstance(parents[-1], ast.Attribute):
            return None
        if not (isinstance(parents[-2], ast.Call) and parents[-2].func is parents[-1]):
            return None
        return method_call_state(self.model, parents, node, inner)

    def _passed_on(self, node: ast.Call, kind) -> str | None:
        """The wrapped value is raw, the unwrapped one fx: code we cannot follow may need raw."""
        if not kind.is_fx_scalar:
            return None
        uses = self._flow(node)
        passed = next((u for u in uses if u.sink is Sink.PASSED_ON), None)
        return f"the value is passed on to {passed.describe()}, which may need the raw value" if passed else None

    def _reports_raw_consumer(self, node: ast.Call, inner: ast.expr, kind) -> bool:
        """An fx scalar wrapped for a raw consumer: `ArithValue(v)` is `v.ir_value()` where
        every use takes a raw value, and dropping it would hand the consumer an fx value."""
        uses = self._flow(node)
        blocker = kind_change_blocker(uses, "fx")
        if blocker is None:
            return False
        message = f"`ArithValue(...)` around a value that is already `{kind.name}`"
        state = method_call_state(self.model, self.ctx.parents, node, inner)
        if state is not None and state.fails:
            self.report(node, f"{message}, for {blocker.describe()} (no fix: {state.describe()})")
            return True
        receiver = self.text(inner) if isinstance(inner, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) else f"({self.text(inner)})"
        if all(u.sink in (Sink.RAW_BUILDER, Sink.ANY_VALUE, Sink.DISCARDED) for u in uses):
            self.report(
                node,
                f"{message}, for {blocker.describe()}: write `{receiver}.ir_value()`"
                + (f" (unsafe: {state.describe()})" if state else ""),
                fix=self.replace(node, f"{receiver}.ir_value()", "Replace with .ir_value()", safe=state is None),
            )
        else:
            # Other uses compute with operators: drop the wrapper, and hand each consumer that
            # needs the raw value `x.ir_value()` (or the operator's result, when fx).
            boundaries = raw_boundaries(self, node, transparent=_OTHER_WRAPPERS)
            if boundaries.blocker is not None:
                self.report(node, f"{message}, for {blocker.describe()} (no fix: {boundaries.blocker})")
                return True
            text = replacement_text(self.model, inner, node, self.ctx.parent)
            hazards = [self._operator_hazard(node, kind) or "fx operators replace ArithValue's", boundaries.note]
            if boundaries.wrap_self:
                text = f"{receiver}.ir_value()"
                hazards.append(state.describe() if state else "")
            self.report(
                node,
                f"{message}: drop the wrapper (unsafe: {'; '.join(h for h in hazards if h)})",
                fix=Fix(
                    title=f"{self.fix_title} (unsafe)",
                    applicability=Applicability.UNSAFE,
                    edits=(self.edit(self.ctx.range(node), text), *boundaries.edits),
                ),
            )
        return True

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
        for use in self._flow(node):
            if use.sink is Sink.OPERATOR and use.what.rstrip("=") in (">>", "/") and not self._kept(node, use):
                return f"ArithValue's `>>` and `/` are unsigned, fx integers' signed ({use.describe()})"
        return None

    def _wrap_advice(self, inner: ast.expr) -> str:
        """What to write: the fx class of the value's own MLIR type (`fx.Float32` refuses an
        integer value: "bare signless integer cannot be promoted to float")."""
        what = f"`{self.text(inner)}`" if isinstance(inner, ast.Name) else "the value"
        fx_type = element_type(self.model, inner)
        if fx_type is not None:
            return f"wrap {what} once at its source as `{fx_type}(...)` and drop the wrapper"
        return (
            f"wrap {what} once at its source in the fx class of its MLIR type (`fx.Int32(...)` for "
            "an i32, `fx.Float32(...)` for an f32, `fx.Index(...)` for an index) and drop the wrapper"
        )

    def _wrap_at_source(self, inner: ast.expr):
        """"Wrap once at source": type the raw definition, unwrap every ArithValue use.

        Offered when the value has one definition in this function, its fx type can be
        read off the op, and every use is arithmetic or an ArithValue(...) wrap (a raw
        consumer would then receive an fx value). Unsafe: operators on fx types can
        differ from ArithValue's (signed integer division, for one).
        """
        if not isinstance(inner, ast.Name):
            return None, " (no fix: the raw value is built inside the wrapper, with no definition to type)"
        bindings = self.model.reaching_bindings(inner)
        if len(bindings) != 1 or bindings[0].kind != "assign":
            return None, " (no fix: the value has more than one definition)"
        binding = bindings[0]
        source = binding.value
        if binding.scope.node is not self.ctx.enclosing_function():
            return None, " (no fix: the value is defined outside this function, whose other uses are not followed)"
        if not isinstance(source, ast.Call):
            return None, " (no fix: the value is not defined by an op call)"
        fx_type = raw_result_type(self.model, source)
        if fx_type is None:
            return None, " (no fix: its MLIR type cannot be read off the op)"
        parents = self.model.parent_map(binding.scope.node)
        fx, imports = fx_alias(self.model)
        unwraps, passed = [], []
        for use in self.model.uses_of(binding):
            parent = parents.get(id(use))
            if isinstance(parent, ast.Call) and self.model.resolve(parent.func) == ARITH_VALUE:
                blocker = kind_change_blocker(value_uses(self.model, parent, parents, through_operators=True), "fx")
                if blocker is not None:
                    return None, f" (no fix: typed, `{use.id}` could not reach {blocker.describe()})"
                unwraps.append(self.edit(self.ctx.range(parent), use.id))
            elif isinstance(parent, ast.keyword) or (isinstance(parent, ast.Call) and use is not parent.func):
                # handed to a call as the raw value it was: `fx.as_ir_value(v)` (a function
                # call, which FlyDSL's rewriter does not carry, unlike `v.ir_value()`)
                unwraps.append(self.edit(self.ctx.range(use), f"{fx}.as_ir_value({use.id})"))
                passed.append(f"line {use.lineno}")
            elif not isinstance(parent, (ast.BinOp, ast.Compare, ast.UnaryOp, ast.AugAssign)):
                return None, f" (no fix: `{use.id}` is also used as a raw value on line {use.lineno})"
        wrapped = f"{fx}.{fx_type[3:]}({self.text(source)})"
        fix = Fix(
            title="Wrap once at source (unsafe)",
            applicability=Applicability.UNSAFE,
            edits=(self.edit(self.ctx.range(source), wrapped), *unwraps, *imports),
        )
        shown = ", ".join(dict.fromkeys(passed))
        return fix, (f" (`{fx}.as_ir_value(...)` where it is passed on raw: {shown})" if passed else "")

    VALID = [
        Valid("import flydsl.expr as fx\nx = fx.Int32(3) + 1\n"),
        Valid("from mylib import ArithValue\ny = ArithValue(x)\n"),
        Valid('from flydsl.expr.arith import ArithValue\ns = "ArithValue(x)"  # ArithValue(x)\n'),
        Valid("from flydsl.expr.arith import ArithValue\nok = isinstance(v, ArithValue)\n"),
    ]
    INVALID = [
        # Two wrappers on one value's way to a raw builder: dropping the first would be fine
        # while the second stands, but one pass drops both (aiter's fused_compress_attn_hca).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.arith import ArithValue\n"
            "def f(tid: fx.Int32, c, z):\n    lane = ArithValue(tid) & c\n    rel = ArithValue(lane) - c\n"
            "    return arith.maxsi(rel, z)\n",
            expected="import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.arith import ArithValue\n"
            "def f(tid: fx.Int32, c, z):\n    lane = ArithValue(tid) & c\n    rel = lane - c\n"
            "    return arith.maxsi(rel, z)\n",
            count=2,
            message="(no fix: `ArithValue` on line 6 wraps it again: that wrapper goes first)",
        ),
        # ... and once that one is gone, the first goes too, with `.ir_value()` at the builder.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.arith import ArithValue\n"
            "def f(tid: fx.Int32, c, z):\n    lane = ArithValue(tid) & c\n    rel = lane - c\n"
            "    return arith.maxsi(rel, z)\n",
            expected="import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "def f(tid: fx.Int32, c, z):\n    lane = tid & c\n    rel = lane - c\n"
            "    return arith.maxsi(rel.ir_value(), z)\n",
            unsafe=True,
            message="`.ir_value()` at the raw boundaries: line 7",
        ),
        # The wrapper is there for the method: an index cast is fx.Index(x).
        Invalid(
            "from flydsl.expr.arith import ArithValue\nfrom flydsl.expr.typing import T\n"
            "def f(safe_idx):\n    return ArithValue(safe_idx).index_cast(T.index)\n",
            expected="import flydsl.expr as fx\ndef f(safe_idx):\n    return fx.Index(safe_idx).ir_value()\n",
            unsafe=True,
            message="`ArithValue(...)` is deprecated: an index cast is `fx.Index(safe_idx)`",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
            "def f(val: fx.Float32, peer, ptr):\n    fx.ptr_store(ArithValue(val) + peer, ptr)\n",
            expected="import flydsl.expr as fx\n"
                     "def f(val: fx.Float32, peer, ptr):\n"
                     "    fx.ptr_store(val + peer, ptr)\n",
            line=4,
            column=18,
        ),
        # Returned from a helper the file never calls: its callers may need the raw value.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
            "def f(val: fx.Float32, peer):\n    return ArithValue(val) + peer\n",
            expected="import flydsl.expr as fx\n"
                     "def f(val: fx.Float32, peer):\n"
                     "    return val + peer\n",
            message="passed on to `return` on line 4",
            unsafe=True,
        ),
        # A raw builder takes `.ir_value()` (what ArithValue calls on an fx value).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
            "from flydsl._mlir.dialects import arith as std_arith\n"
            "def f(a: fx.Int32, b):\n    return fx.Int32(std_arith.maxsi(ArithValue(a), b))\n",
            expected="import flydsl.expr as fx\n"
                     "from flydsl._mlir.dialects import arith as std_arith\n"
                     "def f(a: fx.Int32, b):\n    return fx.Int32(std_arith.maxsi(a.ir_value(), b))\n",
            message="for `std_arith.maxsi` on line 5",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
            "from flydsl._mlir.dialects import scf\n"
            "def f(n: fx.Int32):\n    hi = ArithValue(n) + 1\n    scf.for_(0, hi, 1)\n    return hi * 2\n",
            expected="import flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import scf\n"
            "def f(n: fx.Int32):\n    hi = n + 1\n    scf.for_(0, hi.ir_value(), 1)\n    return (hi * 2).ir_value()\n",
            unsafe=True,
            message="`.ir_value()` at the raw boundaries: line 6, line 7",
        ),
        # Inside a dynamic `if`, `.ir_value()` on a variable of the enclosing function would
        # make the rewriter carry it (the trace fails): that boundary is `fx.as_ir_value(v)`,
        # a function call, which it does not carry.
        Invalid(
            "import flydsl.expr as fx\nimport flydsl.compiler as flyc\nfrom flydsl.expr.arith import ArithValue\n"
            "from flydsl._mlir.dialects import scf\n"
            "@flyc.kernel\ndef k(n: fx.Int32, c):\n    hi = ArithValue(n) + 1\n    def body():\n"
            "        if c > 0:\n            scf.for_(0, hi, 1)\n    body()\n    fx.printf(hi * 2)\n",
            expected="import flydsl.expr as fx\nimport flydsl.compiler as flyc\n"
            "from flydsl._mlir.dialects import scf\n"
            "@flyc.kernel\ndef k(n: fx.Int32, c):\n    hi = n + 1\n    def body():\n"
            "        if c > 0:\n            scf.for_(0, fx.as_ir_value(hi), 1)\n    body()\n    fx.printf(hi * 2)\n",
            unsafe=True,
            message="`fx.as_ir_value(...)` (a method call on `hi` would make FlyDSL's rewriter carry it",
        ),
        # `n` may be an fx.Int32, which has no `index_cast`: fx.Index takes either kind.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\nfrom flydsl.expr.typing import T\n"
            "from flydsl._mlir.dialects import scf\n"
            "def f(n):\n    hi = ArithValue(n).index_cast(T.index)\n    scf.for_(0, hi, 1)\n"
            "    fx.printf(fx.make_layout(ArithValue(n).index_cast(T.index), 1))\n",
            expected="import flydsl.expr as fx\nfrom flydsl._mlir.dialects import scf\n"
            "def f(n):\n    hi = fx.Index(n)\n    scf.for_(0, hi.ir_value(), 1)\n"
            "    fx.printf(fx.make_layout(fx.Index(n), 1))\n",
            unsafe=True,
            count=2,
            message="an index cast is `fx.Index(n)` (unsafe: fx.Index's operators are unsigned; `.ir_value()`",
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
            "from flydsl.expr import arith\nfrom flydsl._mlir.dialects import arith as std_arith\n"
            "def f(a, b):\n    return arith.ArithValue(std_arith.remui(a, b)) * 2\n",
            expected=None,
            message="no fix: the raw value is built inside the wrapper",
        ),
        # The unsigned integer ops keep their operand's type, read here off FlyDSL's
        # constant(n, type=i32) under a local alias (aiter's fused_compress_attn.py).
        Invalid(
            "from flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "def f(s, n):\n    i32 = T.i32\n    ring = arith.remui(s, arith.constant(n, type=i32))\n"
            "    return arith.ArithValue(ring) * 4\n",
            expected="from flydsl.expr import arith\nfrom flydsl.expr.typing import T\nimport flydsl.expr as fx\n"
            "def f(s, n):\n    i32 = T.i32\n    ring = fx.Int32(arith.remui(s, arith.constant(n, type=i32)))\n"
            "    return ring * 4\n",
            unsafe=True,
        ),
        # ... also through `.ir_value()` / `fx.as_ir_value(v)` operands (aiter's
        # fused_compress_attn.py: `arith.remui(ci, fx.Int32(k).ir_value())`).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.arith import ArithValue\n"
            "def f(position, k):\n    s = arith.remui(fx.as_ir_value(position), fx.Int32(k).ir_value())\n"
            "    fx.printf(ArithValue(s) * 4)\n",
            expected="import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "def f(position, k):\n    s = fx.Int32(arith.remui(fx.as_ir_value(position), fx.Int32(k).ir_value()))\n"
            "    fx.printf(s * 4)\n",
            unsafe=True,
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
        # A raw value whose MLIR type cannot be read: the message names the class per type.
        Invalid(
            "from flydsl.expr import arith\nfrom flydsl._mlir.dialects import rocdl\n"
            "def f(ty, a, b, old):\n"
            "    return arith.ArithValue(rocdl.cvt_pk_fp8_f32(ty, a, b, old, False)) + 1\n",
            expected=None,
            message="wrap the value once at its source in the fx class of its MLIR type (`fx.Int32(...)` for an i32, `fx.Float32(...)` for an f32, `fx.Index(...)` for an index) and drop the wrapper",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "def f(x):\n"
            "    v = arith.index_cast(T.i32, x)\n"
            "    w = v.type\n"
            "    return arith.ArithValue(v) * 4\n",
            expected=None,
            message="wrap `v` once at its source as `fx.Int32(...)` and drop the wrapper: `ArithValue(...)` around a raw ir.Value (raw dialect op arith.index_cast, line 5) (no fix: `v` is also used as a raw value on line 6)",
        ),
        # ... but a call it is handed to gets the raw value it had (aiter's fused_compress_attn:
        # `slot_in_block` into buffer loads).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "def f(x):\n"
            "    v = arith.index_cast(T.i32, x)\n"
            "    w = arith.addi(v, v)\n"
            "    return arith.ArithValue(v) * 4\n",
            expected="import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "def f(x):\n"
            "    v = fx.Int32(arith.index_cast(T.i32, x))\n"
            "    w = arith.addi(fx.as_ir_value(v), fx.as_ir_value(v))\n"
            "    return v * 4\n",
            unsafe=True,
            message="`fx.as_ir_value(...)` where it is passed on raw: line 6",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
            "def f(v):\n    fx.printf(ArithValue(v) + 1)\n",
            expected="import flydsl.expr as fx\ndef f(v):\n"
                     "    fx.printf(v + 1)\n",
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
        # `row` may be raw or fx: each consumer that cannot take an fx value (here aiter's
        # buffer_ops helper) gets `fx.as_ir_value(v)`, which takes either kind.
        Invalid(
            "from flydsl.expr.arith import ArithValue\nfrom flydsl.expr import buffer_ops\n"
            "def f(rsrc, row, col):\n    off = ArithValue(row) * 64 + col\n"
            "    return buffer_ops.buffer_load(rsrc, off, vec_width=4)\n",
            expected="from flydsl.expr import buffer_ops\nimport flydsl.expr as fx\n"
            "def f(rsrc, row, col):\n    off = row * 64 + col\n"
            "    return buffer_ops.buffer_load(rsrc, fx.as_ir_value(off), vec_width=4)\n",
            unsafe=True,
            message="`fx.as_ir_value(...)` at the raw boundaries: line 5",
        ),
        # ... not where the value meets `>>` (unsigned on ArithValue, signed on fx.Int32).
        Invalid(
            "from flydsl.expr.arith import ArithValue\nfrom flydsl._mlir.dialects import llvm\n"
            "def f(row, ptr):\n    llvm.StoreOp(ArithValue(row) >> 1, ptr)\n",
            expected=None,
            message="no fix: if `row` is an fx value",
        ),
        # ArithValue wraps a large int literal to an i32 constant and refuses a float one
        # beside an integer; fx integers widen or promote them: no fix.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
            "def f(n: fx.Int32):\n    fx.printf(ArithValue(n) + 3000000000, ArithValue(n) * 1.5)\n",
            expected=None,
            count=2,
            message="no fix: `3000000000` on line 4 wraps to an i32 constant",
        ),
        # The comparison's result meets `is_greater` (an IR value of `peer`'s own kind) on the
        # left of `|`, which picks the operator: the result is of the kind it was, and the
        # select beyond is not followed (FlyDSL's topk_gating_softmax). fx `==` is ArithValue's
        # (cmpf oeq, cmpi eq), on FlyDSL 0.3.1 and 0.5.0.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
            "def f(val, idx, off):\n    peer = fx.gpu.shuffle_xor(val, off, 64)\n    is_greater = peer > val\n"
            "    is_equal = ArithValue(peer) == ArithValue(val)\n    take = is_greater | (is_equal & (idx < 3))\n"
            "    return take.select(peer, val)\n",
            expected="import flydsl.expr as fx\n"
            "def f(val, idx, off):\n    peer = fx.gpu.shuffle_xor(val, off, 64)\n    is_greater = peer > val\n"
            "    is_equal = peer == val\n    take = is_greater | (is_equal & (idx < 3))\n"
            "    return take.select(peer, val)\n",
            unsafe=True,
            count=2,
        ),
        # An fx value on the left: the product is fx with or without the wrapper.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
            "def f(n, k):\n    return fx.Int32(k) * ArithValue(n)\n",
            expected="import flydsl.expr as fx\ndef f(n, k):\n    return fx.Int32(k) * n\n",
            unsafe=True,
        ),
        # The select's result is of its condition's kind, stored where it is not followed: it
        # gets `fx.as_ir_value(...)`, the raw value it was.
        Invalid(
            "from flydsl.expr.arith import ArithValue\n"
            "def f(ci, best, probs, neg):\n    for v in range(4):\n"
            "        is_winner = ArithValue(ci) == ArithValue(best)\n"
            "        probs[v] = is_winner.select(neg, probs[v])\n",
            expected="import flydsl.expr as fx\n"
            "def f(ci, best, probs, neg):\n    for v in range(4):\n"
            "        is_winner = ci == best\n"
            "        probs[v] = fx.as_ir_value(is_winner.select(neg, probs[v]))\n",
            unsafe=True,
            count=2,
            message="`fx.as_ir_value(...)` at the raw boundaries: line 5",
        ),
        # A bitcast goes to an fx type: fx numerics' `bitcast` (`fx.Float32(x)` would convert).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\nfrom flydsl.expr.typing import T\n"
            "def f(v: fx.Int32):\n    fx.printf(ArithValue(v).bitcast(T.f32))\n",
            expected="import flydsl.expr as fx\ndef f(v: fx.Int32):\n    fx.printf(v.bitcast(fx.Float32))\n",
            message="a bitcast is `v.bitcast(fx.Float32)`",
        ),
        # ... of unknown type, taken to hold the integer of the float's width.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\nfrom flydsl.expr.typing import T\n"
            "def f(val):\n    fx.printf(ArithValue(val).bitcast(T.f32))\n",
            expected="import flydsl.expr as fx\n"
            "def f(val):\n    fx.printf(fx.Int32(val).bitcast(fx.Float32))\n",
            unsafe=True,
            message="(unsafe: `val` is taken to be of type `fx.Int32`)",
        ),
        # ... also to an fx type's `ir_type` (aiter's flash_attn_func_gfx1201).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\n"
            "def f(value):\n    return fx.Int32(ArithValue(value).bitcast(fx.Int32.ir_type))\n",
            expected="import flydsl.expr as fx\n"
            "def f(value):\n    return fx.Int32(fx.Float32(value).bitcast(fx.Int32))\n",
            unsafe=True,
            message="a bitcast is `fx.Float32(value).bitcast(fx.Int32)` (unsafe: `value` is taken to be of type",
        ),
        # ... to a float type chosen when the kernel is built, of one width either way
        # (FlyDSL's fused_rope_cache_kernel: an i16 back to bf16 or f16).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\nfrom flydsl.expr.typing import T\n"
            "def build(dtype_str):\n"
            "    def k(peer):\n"
            "        elem_type = T.bf16 if dtype_str == \"bf16\" else T.f16\n"
            "        fx.printf(ArithValue(peer).bitcast(elem_type))\n"
            "    return k\n",
            expected="import flydsl.expr as fx\nfrom flydsl.expr.typing import T\n"
            "def build(dtype_str):\n"
            "    def k(peer):\n"
            "        elem_type = T.bf16 if dtype_str == \"bf16\" else T.f16\n"
            "        fx.printf(fx.Int16(peer).bitcast(fx.BFloat16 if dtype_str == \"bf16\" else fx.Float16))\n"
            "    return k\n",
            unsafe=True,
            message="the type is chosen when the kernel is built",
        ),
        # ... not to a choice between integer and float, or of two widths.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\nfrom flydsl.expr.typing import T\n"
            "def f(peer, wide):\n"
            "    t = T.f32 if wide else T.f16\n"
            "    fx.printf(ArithValue(peer).bitcast(t))\n",
            expected=None,
        ),
        # ... not where the source type is a guess between two (f16 or bf16 to i16).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.arith import ArithValue\nfrom flydsl.expr.typing import T\n"
            "def f(val):\n    fx.printf(ArithValue(val).bitcast(T.i16))\n",
            expected=None,
            message="no fix: if `val` is an fx value, `bitcast` on line 5",
        ),
        Invalid(
            "import flydsl.expr as fx\ndef f(a: fx.Float32):\n    return fx.arith.ArithValue(a)\n",
            expected="import flydsl.expr as fx\ndef f(a: fx.Float32):\n    return a\n",
            unsafe=True,
        ),
    ]
