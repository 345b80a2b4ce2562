"""A new fx value and its consumers: where a fix that makes a value fx must drop back to
the raw value, `v.ir_value()` right at that use (the migration guide: fx values all the
way, raw "only at a hard boundary with no wrapper, and localize it").

The hard boundaries of a value that becomes fx, followed through the names it is assigned
to (valueflow.py):

- a raw MLIR builder, which takes only an ``ir.Value``;
- an ArithValue method or attribute fx values lack (``.index_cast``, ``.type``, ``[i]``);
- code that cannot be followed: a foreign function, a container, a return or a helper
  whose other uses need the raw value. It received a raw value before, and
  ``v.ir_value()`` keeps exactly that contract (a local helper that takes the fx value as
  well is handed the fx value);
- an operator whose left operand may be a Python number: that would make the result fx
  where it was raw, and given ``v.ir_value()`` the operation is the raw one it was. (After
  a left operand that is an IR value of either kind, or beside the first operand of a
  kind-keeping ``fx.arith`` helper, the result is of the kind it was: nothing to do.)

An fx value on the left of an operator (or beside Python and fx operands) gives an fx
result, whose consumers are followed in turn. Each ``.ir_value()`` is a method call FlyDSL's
rewriter sees: inside a dynamic ``if``/``for``/``while`` on a name defined outside, the name
would become carried state, and the trace fails where it is None at the region's entry (a
name bound in one ``const_expr`` branch only: FlyDSL's qk_norm_rope_quant.py with e8m0
scales). There the boundary is ``fx.as_ir_value(v)`` instead, a function call the rewriter
does not carry, on an fx value the same as ``v.ir_value()``; no fix where a local name hides
the converter's module.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from flydsl_ls.analysis.model.diagnostic import Edit
from flydsl_ls.analysis.model.rewrite import fx_alias
from flydsl_ls.analysis.model.text import Range
from flydsl_ls.analysis.model.valueflow import (
    SHARED_METHODS,
    TOO_FAR,
    Sink,
    Use,
    fx_result_blocker,
    keeps_kind,
    kind_change_blocker,
    value_kind,
    value_uses,
)
from flydsl_ls.analysis.rules._control_flow_support import CarriedState, in_dynamic_region, method_call_state
from flydsl_ls.analysis.rules._operands import surely_ir, surely_raw
from flydsl_ls.analysis.rules._raw_dialect_support import ATOM, precedence

# Methods an fx value has, with the meaning they had on the raw value (or none on it).
_FX_METHODS = {"ir_value", "to"}


@dataclass(frozen=True)
class Boundaries:
    """What the fix needs beside its own edit: ``.ir_value()`` at each hard boundary
    (``edits``, never inside ``replaced``; ``wrap_self`` when ``replaced`` itself stands at
    one), or why there is no fix (``blocker``, a message fragment)."""

    edits: tuple[Edit, ...] = ()
    wrap_self: bool = False
    blocker: str | None = None
    carried: CarriedState | None = None  # a region's carried state the fix changes
    places: tuple[str, ...] = ()  # where `.ir_value()` goes, for the message
    unwrap: str | None = None  # the converter called instead of `.ir_value()` (`fx.as_ir_value`)
    mixed: str = ""  # why the boundaries take the converter, for the message
    converted: tuple[CarriedState, ...] = ()  # `fx.as_ir_value(v)` where `.ir_value()` would be carried

    @property
    def note(self) -> str:
        """The fix's extra edits, for the message ("" when none)."""
        if not self.places:
            return ""
        shown = ", ".join(self.places[:3]) + (", ..." if len(self.places) > 3 else "")
        carried = f"; {self.carried.describe()}" if self.carried else ""
        how = f"`{self.unwrap}(...)`" if self.unwrap else "`.ir_value()`"
        if self.mixed:
            how += f" ({self.mixed})"
        if self.converted and not self.unwrap:
            first = self.converted[0]
            names = ", ".join(dict.fromkeys(f"`{c.name}`" for c in self.converted))
            how = "`fx.as_ir_value(...)`" if len(self.converted) == len(self.places) else f"{how} and `fx.as_ir_value(...)`"
            how += (
                f" (a method call on {names} would make FlyDSL's rewriter carry it through the "
                f"`{type(first.statement).__name__.lower()}` on line {first.statement.lineno})"
            )
        return f"{how} at the raw boundaries: {shown}{carried}"


def raw_boundaries(
    rule,
    replaced: ast.expr,
    *,
    operators: tuple[str, ...] = (),
    transparent: frozenset[str] = frozenset(),
    unwrap: str | None = None,
) -> Boundaries:
    """The hard boundaries of the fx value ``replaced`` will compute (an expression the fix
    turns into one that surely gives an fx value). ``operators``: operators whose meaning
    changes for the new kind (no fix where the value meets one). ``transparent``: wrappers
    the same fix pass may drop, whose result is raw or fx depending on it (no fix through
    one: it goes first). ``unwrap`` (``fx.as_ir_value``): the value may stay raw, so each
    boundary gets ``unwrap(v)``, which takes either kind, instead of ``v.ir_value()``; a
    function call, which FlyDSL's rewriter does not carry."""
    model = rule.model
    uses = rule.value_uses(
        replaced, through_operators=True, transparent=transparent, stop=lambda use: _stops(model, use)
    )
    # Operators the value reaches as an fx value (not those it is made raw for).
    blocker = kind_change_blocker(
        [u for u in uses if u.sink is Sink.OPERATOR and not _stops(model, u)], "fx", operators=operators
    )
    if blocker is not None:
        return Boundaries(blocker=f"the fx value would reach {blocker.describe()}, whose meaning differs for it")
    targets: dict[int, ast.expr] = {}
    taking_either: set[int] = set()  # targets whose consumer took fx values too
    for use in uses:
        if use.sink is Sink.ANY_VALUE and use.symbol in transparent:
            return Boundaries(blocker=f"`{use.what}` on line {use.node.lineno} wraps it again: that wrapper goes first")
        target = _boundary(rule, use)
        if target is replaced and use.sink in (Sink.OPERATOR, Sink.ANY_VALUE):
            # `p + fx.Index(63).ir_value()` says nothing new: the other operand goes first.
            return Boundaries(
                blocker=f"{use.describe()} may have a Python number on the left, which would make the "
                "result fx where it was raw; type that operand first"
            )
        if target is TOO_FAR:
            return Boundaries(blocker=f"the result goes to {use.describe()}")
        if target is not None:
            targets.setdefault(id(target), target)
            if use.sink not in (Sink.RAW_BUILDER, Sink.METHOD):
                taking_either.add(id(target))
    # `acc = fx.Float32(0.0)`, then `acc = raw_op(acc, ...)` in a loop: a read on the way
    # may see the raw value too, and what it computes has no `.ir_value()` (aiter's
    # fused_compress_attn.py). `fx.as_ir_value(x)` gives the raw value of either kind.
    parents = model.parent_map(model.tree)
    rebound = [
        u.value for u in uses if isinstance(u.value, ast.Name) and len(model.reaching_bindings(u.value)) > 1
    ] if targets else []
    for name in rebound:
        # `as_ir_value` gives what the name held before only where it held an IR value on
        # every path (a Python number would become a constant), and a name rebound in a
        # region the rewriter builds would change the region's result type.
        where = f"`{name.id}` on line {name.lineno}"
        if not surely_ir(model, name):
            return Boundaries(blocker=f"{where} may also hold a Python value or one of unknown kind there")
        if any(in_dynamic_region(model, _chain(parents, b.node)) for b in model.reaching_bindings(name)):
            return Boundaries(
                blocker=f"{where} may also hold a raw value there, bound in a region the rewriter builds "
                "(its result would change type)"
            )
    for target in (t for key, t in targets.items() if key in taking_either and rebound):  # in use order, not id order
        # A consumer that takes fx values too got one on another path if the name held one
        # there before: `as_ir_value` would hand it a raw value instead.
        if target is not replaced and not surely_raw(model, target):
            return Boundaries(
                blocker=f"`{rule.text(target)}` on line {target.lineno} may hold an fx value on another path, "
                "which its consumer took as it was"
            )
    mixed = next((name for name in rebound if _may_be_raw(model, name, replaced)), None)
    convert, imports = unwrap, ()
    if convert is None and mixed is not None:
        fx, imports = fx_alias(model)
        convert = f"{fx}.as_ir_value"
    edits: list[Edit] = []
    places: list[str] = []
    carried = None
    converted: list[CarriedState] = []  # boundaries given `fx.as_ir_value(v)` so nothing is carried
    wrap_self = False
    for target in sorted(targets.values(), key=lambda t: (t.lineno, t.col_offset)):
        if not isinstance(getattr(target, "ctx", ast.Load()), ast.Load):
            return Boundaries(blocker=f"`{rule.text(target)}` on line {target.lineno} is not read there")
        places.append(f"line {target.lineno}")
        if target is not replaced and convert is not None:
            edits += _wrap(rule, target, convert)  # a function call: nothing for the rewriter to carry
            continue
        state = None if convert else _state(model, parents, target)
        fx, fx_imports = fx_alias(model)
        if state is not None and target is not replaced and not _shadowed(model, _chain(parents, target), fx):
            # `v.ir_value()` would make the region carry `v`: the converter carries nothing.
            edits += _wrap(rule, target, f"{fx}.as_ir_value")
            converted.append(state)
            imports = imports or fx_imports
            continue
        if state is not None and state.fails:
            hidden = f", and a local `{fx}` hides `{fx}.as_ir_value`" if target is not replaced else ""
            return Boundaries(blocker=state.describe() + hidden)
        carried = carried or state
        if target is replaced:
            wrap_self = True
            continue
        edits += _wrap(rule, target, convert)
    why = ""
    if convert is not None and unwrap is None and edits:
        why = f"`{mixed.id}` on line {mixed.lineno} may hold a raw value too"
    if why or converted:
        edits += imports
    return Boundaries(tuple(edits), wrap_self, None, carried, tuple(places), convert, why, tuple(converted))


def _stops(model, use: Use) -> bool:
    """Handled where it stands: the value is made raw there, or the result is raw as it was
    (or, for a helper and a return, handed on as it is when everything beyond takes an fx
    value)."""
    if use.sink is Sink.OPERATOR or use.sink is Sink.ANY_VALUE:
        return _outcome(model, use) != "fx"
    return use.sink is Sink.PASSED_ON


def _outcome(model, use: Use) -> str:
    """The kind of an operator's (or kind-keeping helper's) result once the value is fx:
    "fx" with the value on the left (fx's operator coerces the other operand) or beside fx
    or Python operands; "kept" (of the kind it was) after a left operand that is an IR value
    of either kind (an ArithValue takes the fx one and gives a raw value, as before; an fx
    value gave an fx value before too), or beside the first operand of a kind-keeping
    helper; else "unknown" (a Python number on the left would make it fx). "any" for a call
    that takes either kind."""
    holder = use.holder
    if use.sink is Sink.ANY_VALUE:
        if use.symbol is None or not keeps_kind(use.symbol):
            return "any"  # an fx API or converter
        # The result is typed like the first operand, whatever the others are: the value
        # there makes it fx; elsewhere it is unwrapped and the result is as it was.
        args = list(getattr(holder, "args", ()))
        return "fx" if args and args[0] is use.node else "kept"
    if isinstance(holder, ast.UnaryOp):
        return "fx"
    single = not isinstance(holder, ast.Compare) or len(holder.comparators) == 1  # two operands
    if isinstance(holder, (ast.BinOp, ast.Compare)) and holder.left is use.node and single:
        return "fx"
    if isinstance(holder, ast.AugAssign) and holder.target is use.node:
        return "fx"  # `v += x`: v is on the left
    other = value_kind(model.type_of(use.other)) if use.other is not None else "unknown"
    if other in ("fx", "python"):
        return "fx"
    if single and use.other is not None and (other == "raw" or surely_ir(model, use.other)):
        # The other operand, on the left, is an IR value: it picks the operator, and the
        # result is of the kind it was (_operands.py).
        return "kept"
    return "unknown"  # a Python number may be on the left


def _boundary(rule, use: Use):
    """The expression to hand on as ``.ir_value()`` for this use, None when the use takes
    the fx value (or TOO_FAR when the use is not followed)."""
    value = use.value
    if use.sink is Sink.RAW_BUILDER:
        return value
    if use.sink is Sink.METHOD:
        return None if use.what in _FX_METHODS or use.what in SHARED_METHODS else value
    if use.sink is Sink.OPERATOR or use.sink is Sink.ANY_VALUE:
        return value if _outcome(rule.model, use) == "unknown" else None
    if use.sink is Sink.PASSED_ON:
        if use.what == TOO_FAR:
            return TOO_FAR
        if isinstance(use.holder, (ast.Call, ast.Return)):
            # A helper of this file, or a return read by its callers: hand on the fx value
            # where everything beyond takes one.
            beyond = value_uses(rule.model, value, rule.model.parent_map(rule.model.tree), through_operators=True)
            if fx_result_blocker(beyond) is None:
                return None
        return value
    return None


def _chain(parents, node: ast.AST) -> list[ast.AST]:
    """The nodes around ``node``, outermost first, ending with ``node``."""
    chain = [node]
    while (node := parents.get(id(node))) is not None:
        chain.append(node)
    return chain[::-1]


def _state(model, parents, target: ast.expr) -> CarriedState | None:
    return method_call_state(model, _chain(parents, target)[:-1], target, target)


def _shadowed(model, chain: list[ast.AST], name: str) -> bool:
    """``name`` is bound in a function around the code (it hides the module-level one)."""
    for node in chain:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            scope = model.function_scope(node)
            if scope is not None and name in scope.bindings:
                return True
    return False


def _may_be_raw(model, value, replaced: ast.expr) -> bool:
    """A name the value reaches that another assignment (not the fixed one) may bind to a
    value that is not surely fx."""
    if not isinstance(value, ast.Name):
        return False
    bindings = model.reaching_bindings(value)
    return len(bindings) > 1 and any(
        b.kind not in ("assign", "annassign", "walrus") or b.value is None
        or (b.value is not replaced and value_kind(model.type_of(b.value)) != "fx")
        for b in bindings
    )


def _wrap(rule, target: ast.expr, unwrap: str | None = None) -> list[Edit]:
    """``target`` -> ``target.ir_value()`` as insertions around it (an edit inside it, the
    fix's own, stays apart); ``unwrap(target)`` (``fx.as_ir_value``) where it may be raw."""
    rng = rule.ctx.range(target)
    end = Range(rng.end, rng.end)
    if unwrap:
        return [Edit(Range(rng.start, rng.start), f"{unwrap}("), Edit(end, ")")]
    if precedence(target) < ATOM or (
        isinstance(target, ast.Constant) and isinstance(target.value, (int, float, complex))
    ):
        return [Edit(Range(rng.start, rng.start), "("), Edit(end, ").ir_value()")]
    return [Edit(end, ".ir_value()")]
