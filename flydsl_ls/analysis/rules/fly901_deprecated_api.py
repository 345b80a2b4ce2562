import ast
from dataclasses import dataclass

from flydsl_ls.analysis.model import apis
from flydsl_ls.analysis.model.diagnostic import Fix, Severity
from flydsl_ls.analysis.model.fxtypes import ARITH_VALUE, VECTOR
from flydsl_ls.analysis.model.rewrite import fx_alias
from flydsl_ls.analysis.model.versions import at_least
from flydsl_ls.analysis.model.statements import shares_lines
from flydsl_ls.analysis.rules import _raw_dialect_support as S
from flydsl_ls.analysis.rules._raw_dialect_support import is_float_type
from flydsl_ls.analysis.rules.base import Invalid, Rule, Valid


@dataclass(frozen=True)
class Deprecation:
    api: str  # as FlyDSL's stability table spells it
    replacement: str
    removal: str  # declared removal release
    owner: str | None = None  # another rule reports this API (with a fix)
    no_fix: str | None = None  # why the replacement is no drop-in edit


CONSTANT_VECTOR_NO_FIX = (
    "it gives a raw vector (a dense `arith.constant` of the MLIR vector type it is passed), and "
    "`fx.Vector.filled` an fx Vector (a `vector.broadcast` of a width and an fx dtype)"
)
# FlyDSL docs/api_stability.md, section 3 ("Stable but deprecated").
DEPRECATED_SYMBOLS = {
    "fx.get": Deprecation(
        "fx.get", "`fx.get_(...).unpack()` or `IntTuple[...].unpack()`", "0.4",
        no_fix="`fx.get` casts the element to `index`, and `fx.get_(...).unpack()` keeps the element's own type",
    ),
    "fx.index_cast": Deprecation("fx.index_cast", "`fx.Index(x)`", "0.4", owner="FLY103"),
    "fx.constant_vector": Deprecation("fx.constant_vector", "`Numeric` and `Vector` member functions (`fx.Vector.filled`)", "0.4", no_fix=CONSTANT_VECTOR_NO_FIX),
    "fx.arith.constant_vector": Deprecation("fx.constant_vector", "`Numeric` and `Vector` member functions (`fx.Vector.filled`)", "0.4", no_fix=CONSTANT_VECTOR_NO_FIX),
    "fx.rocdl.BufferCopyLDS64b": Deprecation(
        "fx.rocdl.BufferCopyLDS64b", "`fx.rocdl.BufferCopyLDS32b`, or `fx.rocdl.BufferCopyLDS128b` on gfx950 (the 64b atom never worked: it now raises)", "0.4",
        no_fix="the other atoms move another width per copy",
    ),
}
TDM_OPS_ALIAS = "flydsl.expr.tdm_ops"
# `fx.rocdl.tdm_ops` only exists once the submodule was imported: name the import.
TDM_OPS = Deprecation(
    "fx.tdm_ops",
    "`from flydsl.expr.rocdl import tdm_ops` (a target-specific, unstable path)",
    "0.4",
    no_fix="only a one-line module-level `from flydsl.expr import tdm_ops` is rewritten; import it from `flydsl.expr.rocdl` by hand",
)
DEPRECATED_METHODS = {
    "maximumf": Deprecation("fx.Numeric.maximumf", "`fx.max(x, y)`", "0.4"),
    "minimumf": Deprecation("fx.Numeric.minimumf", "`fx.min(x, y)`", "0.4"),
    "shrui": Deprecation("fx.Numeric.shrui", "`fx.arith.shrui(x, amount)`", "0.4"),
    "addf": Deprecation(
        "fx.Numeric.addf", "`x + y` inside a `fastmath` context", "0.4",
        no_fix="only `v = x.addf(y, fastmath=fm)` on lines of its own is rewritten (to `x + y` in a `with fx.arith.fastmath(fm):` block)",
    ),
    "exp2": Deprecation("fx.Numeric.exp2", "`fx.math.exp2(x)`", "0.4"),
    "shuffle_xor": Deprecation("fx.Numeric.shuffle_xor", "`fx.gpu.shuffle_xor(x, offset, width)`", "0.4"),
}
# Method names no other library uses on values: flagged even when the receiver's type
# is not inferred (FlyDSL's own guard flags every `.maximumf(` call).
_DISTINCTIVE_METHODS = {"maximumf", "minimumf", "shuffle_xor", "shrui"}
# `x.m(args)` -> `fx.<function>(x, args)`: the same op on the same operands, and the result
# keeps the receiver's kind (a raw value stays raw, an fx value keeps its fx type) as FlyDSL
# 0.5.0 builds them (`fx.gpu.shuffle` preserves the numeric type; `fx.maximumf`/`fx.math.exp2`
# type the result from the IR type, which for floats is the receiver's). Both read the
# ambient `fastmath` as the methods do. Before 0.5.0 `fx.gpu.shuffle` typed its result from
# the IR type (an unsigned receiver came back signed): unsafe there.
METHOD_FUNCTIONS = {
    "maximumf": "maximumf",
    "minimumf": "minimumf",
    "shuffle_xor": "gpu.shuffle_xor",
    "exp2": "math.exp2",
    "shrui": "arith.shrui",
}
_SAFE_SINCE = "0.5.0"
# FlyDSL's docs name `fx.max`/`fx.min` (api_stability.md, check_typed_arithmetic_usage.py);
# they arrive in 0.3.2. On two operands of one fx float type they build the method's own
# `arith.maximumf` with the ambient fastmath, typed the same (traced on 0.5.0). They type a
# raw receiver's result (it comes back fx): a raw or unknown receiver keeps
# `fx.maximumf`/`fx.minimumf`, which keep its kind.
DOCUMENTED = {"maximumf": "max", "minimumf": "min"}
# `x.shrui(a)` -> `fx.arith.shrui(x, a)` builds the same `arith.shrui` in every release
# (0.2.0 to 0.5.0): the result keeps the receiver's fx type (`preserve_numeric_type`), a raw
# receiver stays raw. The method cannot take a Python number as the amount (it has no IR
# value), the function makes it an i32 constant: unsafe then.
_SAFE_ANY_RELEASE = {"shrui"}


_ELEMENTS = {
    "f32": "Float32", "f16": "Float16", "bf16": "BFloat16", "f64": "Float64",
    "i32": "Int32", "i64": "Int64", "i16": "Int16", "i8": "Int8",
}


def _vector_shape(expr: ast.expr) -> tuple[int, str] | None:
    """(n, fx element class) of `T.f32x4` or `T.vec(8, T.f32)`, else None."""
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "T":
        element, _, n = expr.attr.partition("x")
        if n.isdigit() and element in _ELEMENTS:
            return int(n), _ELEMENTS[element]
    if (
        isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "vec"
        and len(expr.args) == 2 and isinstance(expr.args[0], ast.Constant) and type(expr.args[0].value) is int
        and isinstance(expr.args[1], ast.Attribute) and expr.args[1].attr in _ELEMENTS
    ):
        return expr.args[0].value, _ELEMENTS[expr.args[1].attr]
    return None


class DeprecatedApi(Rule):
    """
    FlyDSL's own "stable but deprecated" list (`docs/api_stability.md`, section 3):
    `fx.get`, `fx.index_cast`, `fx.constant_vector`, `fx.tdm_ops`, the `Numeric`
    methods `maximumf`/`minimumf`/`shrui`/`addf`/`exp2`/`shuffle_xor`, and
    `fx.rocdl.BufferCopyLDS64b`. Each still works during its deprecation window and is
    removed no earlier than its declared removal release.

    The diagnostic names the replacement, then the removal release. It is a warning, and
    an error only once the project's FlyDSL release (the `flydsl-version` setting) no longer
    has the API: FlyDSL declares the earliest release that may drop it, and a release past
    that date may still have it (0.5.0 keeps every API declared for removal in 0.4). `fx.index_cast` is
    reported by FLY103, which can fix it.

    The methods `x.maximumf(y)`, `x.minimumf(y)`, `x.shuffle_xor(offset, width)` and
    `x.exp2(...)` become `fx.maximumf(x, y)`, `fx.minimumf(x, y)`,
    `fx.gpu.shuffle_xor(x, offset, width)` and `fx.math.exp2(x, ...)`: the same op on the
    same operands, reading the ambient `fastmath` as the methods do, and a result of the
    receiver's kind (raw stays raw, an fx float stays that fx type). That holds as FlyDSL
    0.5.0 builds them, so the fix is safe there; before 0.5.0 `fx.gpu.shuffle` typed its
    result from the IR type (an unsigned receiver came back signed), so it is unsafe, as it
    is when the project's release is unknown. `x.shrui(a)` becomes `fx.arith.shrui(x, a)`,
    the same op typed the same way in every release: safe when `x` and `a` are known fx or
    raw values (a Python-number amount, which the method cannot take, makes it unsafe).
    `tdm_ops` imported from `flydsl.expr` is imported from `flydsl.expr.rocdl` instead (the
    same module object: safe; the uses stay). `addf`, `fx.get`, `fx.constant_vector` and
    `fx.tdm_ops` have no 1:1 replacement and no fix.
    """

    code = "FLY901"
    name = "deprecated-api"
    summary = "A FlyDSL API on FlyDSL's deprecated list"
    replacement = "the API FlyDSL names for it (see the message)"
    fix_safety = "safe for `.maximumf`/`.minimumf`/`.shuffle_xor`/`.exp2` with FlyDSL 0.5.0+, unsafe before; `.shrui` safe with fx or raw operands; the `tdm_ops` import safe; none for the rest"
    example_before = "m = acc.maximumf(peer)"
    example_after = "m = fx.max(acc, peer)  # acc, peer: fx.Float32"
    symbol_reads = True  # visit_Name: an import or an alias may name the API bare

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._flag_symbol(node)

    def visit_Name(self, node: ast.Name) -> None:
        # A read that may name a symbol (``symbol_reads``): an import, an alias, a def, or
        # no binding of this file's.
        binding = self.model.binding_of(node)
        if binding is None or binding.kind not in ("import", "assign"):
            return  # only an import or an alias can name a deprecated API bare
        self._flag_symbol(node)

    def _flag_symbol(self, node: ast.Name | ast.Attribute) -> None:
        """Flag a name or attribute that names a deprecated API (methods: visit_Call)."""
        if self.model.dotted(node) == TDM_OPS_ALIAS:
            self._flag(node, TDM_OPS, fix=self._tdm_ops_import(node))
            return
        entry = DEPRECATED_SYMBOLS.get(self.model.resolve(node) or "")
        if entry and entry.owner is None:
            advice = self._filled(node) if entry.api == "fx.constant_vector" else None
            self._flag(node, entry, advice=advice)

    def _filled(self, node: ast.AST) -> str | None:
        """`constant_vector(0.0, T.f32x4)` -> `fx.Vector.filled(4, 0.0, fx.Float32)`, as
        FlyDSL's maintainers rewrote it (pa_decode kernels), read off a `T.<elem>x<n>` or
        `T.vec(n, T.<elem>)` type."""
        call = self.ctx.parent
        if not isinstance(call, ast.Call) or call.func is not node or len(call.args) != 2 or call.keywords:
            return None
        value, vector_type = call.args
        shape = _vector_shape(vector_type)
        if shape is None or isinstance(value, ast.Starred):
            return None
        fx, _ = fx_alias(self.model)
        n, element = shape
        return (
            f"`{fx}.Vector.filled({n}, {self.text(value)}, {fx}.{element})` (an fx Vector: "
            "`.ir_value()` where the raw vector is needed)"
        )

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in DEPRECATED_METHODS:
            return
        receiver = func.value
        if self.model.resolve(receiver) is not None or self._is_imported(receiver):
            return  # a module function such as np.exp2, not a Numeric method
        kind = self.model.type_of(receiver)
        if kind.is_typed or kind.is_raw or (not kind.known and self._distinctive(node)):
            if func.attr in DOCUMENTED:
                self._extreme(node, kind)
                return
            fix = self._fastmath_block(node, kind) if func.attr == "addf" else self._function_form(node)
            self._flag(func, DEPRECATED_METHODS[func.attr], fix=fix, whose=self._whose(kind, DEPRECATED_METHODS[func.attr]))

    def _whose(self, kind, entry: Deprecation) -> str | None:
        """Whose method the call is: FlyDSL lists `fx.Numeric`'s; a raw value's is
        ArithValue's (FlyDSL's op results are ArithValues), a vector's `fx.Vector`'s."""
        if kind.is_fx_scalar:
            return None
        if kind.name == VECTOR:
            return "`fx.Vector`'s method"
        if kind.is_raw or kind.name == ARITH_VALUE:
            return "ArithValue's method, on a raw value"
        return f"{self._flydsls(entry.api)}, or ArithValue's method on a raw value"

    def _extreme(self, call: ast.Call, kind) -> None:
        """`x.maximumf(y)`: `fx.max(x, y)` (FlyDSL's spelling) on two values of one fx float
        type where the release has it; else `fx.maximumf(x, y)`, which keeps a raw value
        raw. The message names whose method it is: `fx.Numeric`'s, or ArithValue's on a raw
        value."""
        func = call.func
        entry = DEPRECATED_METHODS[func.attr]
        documented = DOCUMENTED[func.attr]
        has_documented = apis.table().available(f"fx.{documented}", self.ctx.options.flydsl_version)
        operand = call.args[0] if len(call.args) == 1 and not call.keywords else None
        same_type = (
            kind.is_fx_scalar and operand is not None and not isinstance(operand, ast.Starred)
            and self.model.type_of(operand).name == kind.name and is_float_type(kind.name)
        )
        function = documented if same_type and has_documented is not False else func.attr
        fix = self._function_form(call, function)
        fx, _ = fx_alias(self.model)
        receiver, peer = self.text(func.value), ", ".join(self.text(a) for a in call.args) or "y"
        written = f"`{fx}.{function}({receiver}, {peer})`"
        arith_value = kind.is_raw or kind.name == ARITH_VALUE  # FlyDSL's op results are ArithValues
        if function == documented:
            advice = written
        elif kind.is_fx_scalar or kind.name == VECTOR:
            when = "arrives in FlyDSL 0.3.2" if has_documented is False else f"when `{peer}` is a `{kind.name}` too"
            advice = f"{written} (`{fx}.{documented}(...)`, FlyDSL's spelling, {when})"
        else:
            keeps = "keeps a raw value raw" if arith_value else "keeps the value's kind, raw or fx"
            advice = (
                f"{written}, which {keeps} (`{fx}.{documented}`, FlyDSL's spelling, makes the result an fx "
                "value: once the value is wrapped at its source)"
            )
        self._flag(func, entry, fix=fix, advice=advice, whose=self._whose(kind, entry))

    @staticmethod
    def _flydsls(api: str) -> str:
        return f"FlyDSL's `{api}`"

    def _distinctive(self, call: ast.Call) -> bool:
        """A method call no other library makes: a distinctive name, or `x.addf(y,
        fastmath=...)` (MLIR's flags; pa_decode_swa.py's wave reductions)."""
        return call.func.attr in _DISTINCTIVE_METHODS or any(k.arg == "fastmath" for k in call.keywords)

    def _tdm_ops_import(self, node: ast.AST) -> Fix | None:
        """`from flydsl.expr import a, tdm_ops` -> `from flydsl.expr import a` plus
        `from flydsl.expr.rocdl import tdm_ops`: the same module object (FlyDSL re-exports
        it), so every use stays as it is. One edit of the import, the same for every use.
        Only a one-line, module-level import; `fx.tdm_ops` needs no import and gets none."""
        if not isinstance(node, ast.Name):
            return None
        binding = self.model.binding_of(node)
        if binding is None or binding.kind != "import" or not isinstance(binding.node, ast.alias):
            return None
        alias = binding.node
        statement = next(
            (
                stmt
                for stmt in self.model.tree.body
                if isinstance(stmt, ast.ImportFrom) and any(a is alias for a in stmt.names)
            ),
            None,
        )
        if statement is None or statement.module != "flydsl.expr" or statement.level or statement.lineno != statement.end_lineno:
            return None
        rest = [a for a in statement.names if a is not alias]
        moved = f"from flydsl.expr.rocdl import tdm_ops{f' as {alias.asname}' if alias.asname else ''}"
        if rest:
            kept = ", ".join(self.text(a) for a in rest)
            moved = f"from flydsl.expr import {kept}\n{self.model.index.indentation(statement.lineno - 1)}{moved}"
        return self.replace(statement, moved, "Import tdm_ops from flydsl.expr.rocdl")

    def _function_form(self, call: ast.Call, function: str | None = None) -> Fix | None:
        """`x.shuffle_xor(o, w)` -> `fx.gpu.shuffle_xor(x, o, w)` and the like."""
        func = call.func
        function = function or METHOD_FUNCTIONS.get(func.attr)
        if function is None or any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        fx, imports = fx_alias(self.model)
        args = [self.text(func.value), *(self.text(a) for a in call.args), *(f"{k.arg}={self.text(k.value)}" for k in call.keywords)]
        if func.attr in _SAFE_ANY_RELEASE:
            kinds = [self.model.type_of(e) for e in (func.value, *call.args, *(k.value for k in call.keywords))]
            safe = all(k.is_typed or k.is_raw for k in kinds)
        else:
            safe = at_least(self.ctx.options.flydsl_version, _SAFE_SINCE)
        return self.replace(call, f"{fx}.{function}({', '.join(args)})", f"Use {fx}.{function}(...)", safe=safe, extra=imports)

    def _fastmath_block(self, call: ast.Call, kind) -> Fix | None:
        """`w = w.addf(p, fastmath=fm)` -> `with fx.arith.fastmath(fm):` / `w = w + p`: the
        same `arith.addf` with the same flags, and a result of the receiver's kind (fx or
        ArithValue), traced on 0.3.1 and 0.5.0. Safe when the receiver's kind is known."""
        statement = self.ctx.parent
        keywords = call.keywords
        if (
            len(call.args) != 1 or isinstance(call.args[0], ast.Starred)
            or len(keywords) != 1 or keywords[0].arg != "fastmath"
            or not isinstance(statement, ast.Assign) or statement.value is not call or len(statement.targets) != 1
            or shares_lines(self.model, statement)
            or S.comments_dropped(self, statement, [statement.targets[0], call.func.value, call.args[0], keywords[0].value])
        ):
            return None
        fx, imports = fx_alias(self.model)
        outer = self.model.index.indentation(statement.lineno - 1)
        indent = outer + ("\t" if outer.endswith("\t") else "    ")
        added = S.binary(self, "+", call.func.value, call.args[0])
        text = f"with {fx}.arith.fastmath({self.text(keywords[0].value)}):\n{indent}{self.text(statement.targets[0])} = {added}"
        safe = kind.is_typed or kind.is_raw
        return self.replace(statement, text, "Add inside a fastmath block", safe=safe, extra=imports)

    def _is_imported(self, expr: ast.expr) -> bool:
        while isinstance(expr, ast.Attribute):
            expr = expr.value
        if not isinstance(expr, ast.Name):
            return False
        binding = self.model.binding_of(expr)
        return binding is not None and binding.kind == "import"

    def _flag(
        self, node: ast.AST, entry: Deprecation, fix: Fix | None = None, advice: str | None = None, whose: str | None = None
    ) -> None:
        version = self.ctx.options.flydsl_version
        gone = at_least(version, entry.removal) and apis.table().available(entry.api, version) is False
        if not at_least(version, entry.removal):
            status = f"declared removal in FlyDSL {entry.removal}"
        elif gone:
            status = f"removed by FlyDSL {version}, the project's release"
        else:
            # FlyDSL's table gives the earliest removal; the release may still have it.
            status = f"past its declared removal in FlyDSL {entry.removal}: {version} still has it, a later release may not"
        why = f" (no fix: {entry.no_fix})" if fix is None and entry.no_fix else ""
        # What to write first (an editor's problem list cuts long messages at the end), and
        # the code as it is written: `arith.constant_vector` is FlyDSL's `fx.constant_vector`.
        named = entry.api
        if isinstance(node, (ast.Name, ast.Attribute)) and self.text(node) != entry.api:
            method = entry.api.startswith("fx.Numeric.")
            named = self.text(node) + ("(...)" if method else "")
            status = f"{whose or self._flydsls(entry.api)}, {status}"
        self.report(
            node,
            f"use {advice or entry.replacement}: `{named}` is deprecated ({status}){why}",
            severity=Severity.ERROR if gone else Severity.WARNING,
            fix=fix,
        )

    VALID = [
        Valid("import flydsl.expr as fx\nm = fx.max(a, b)\n"),
        Valid("import numpy as np\ny = np.exp2(x)\n"),
        Valid("import flydsl.expr as fx\natom = fx.rocdl.BufferCopyLDS32b()\n"),
        Valid("import math\ny = math.exp2(3)\n"),
        Valid("import flydsl.expr as fx\nt = fx.rocdl.tdm_ops\n"),
        Valid("def f(a, b):\n    return a.addf(b)\n"),  # another library's addf
    ]
    INVALID = [
        Invalid(
            "import flydsl.expr as fx\ndef f(w: fx.Float32, peer, fm):\n    for _ in range(2):\n"
            "        w = w.addf(peer - 1.0, fastmath=fm)  # reduce\n    return w.addf(peer, fastmath=fm)\n",
            expected="import flydsl.expr as fx\ndef f(w: fx.Float32, peer, fm):\n    for _ in range(2):\n"
            "        with fx.arith.fastmath(fm):\n            w = w + (peer - 1.0)  # reduce\n    return w.addf(peer, fastmath=fm)\n",
            count=2,
            unsafe=True,  # `w` is also the loop's own addf result, whose kind is not inferred
            message="use `x + y` inside a `fastmath` context: `w.addf(...)` is deprecated (FlyDSL's `fx.Numeric.addf`, or ArithValue's method on a raw value, declared removal in FlyDSL 0.4)",
        ),
        # `addf` is no distinctive name, but with MLIR's `fastmath=` it is FlyDSL's
        # (pa_decode_swa.py's wave reductions): `+` in a fastmath block builds the same op.
        Invalid(
            "def f(val, c_w, fm):\n    red = val\n    red = red.addf(red.shuffle_xor(1, c_w), fastmath=fm)\n    return red\n",
            expected="import flydsl.expr as fx\ndef f(val, c_w, fm):\n    red = val\n"
            "    with fx.arith.fastmath(fm):\n        red = red + fx.gpu.shuffle_xor(red, 1, c_w)\n    return red\n",
            count=2,
            unsafe=True,
            message="`red.addf(...)` is deprecated (FlyDSL's `fx.Numeric.addf`",
        ),
        # Two values of one fx float type: FlyDSL's `fx.max`, the same `arith.maximumf`.
        Invalid(
            "import flydsl.expr as fx\ndef f(acc: fx.Float32, peer: fx.Float32):\n    return acc.maximumf(peer)\n",
            expected="import flydsl.expr as fx\ndef f(acc: fx.Float32, peer: fx.Float32):\n    return fx.max(acc, peer)\n",
            message="use `fx.max(acc, peer)`: `acc.maximumf(...)` is deprecated (FlyDSL's `fx.Numeric.maximumf`, past its declared removal in FlyDSL 0.4",
            settings={"flydsl_version": "0.5.0"},
        ),
        # The grouping parentheses around the method call go with it (aiter's swiglu clamp
        # `-((-x).maximumf(lim))`); a call's own parentheses stay, and those that part `not` from it.
        Invalid(
            "import flydsl.expr as fx\ndef f(x: fx.Float32, lim: fx.Float32):\n"
            "    return -((-x).maximumf(lim)), g(x.minimumf(lim)), not(x.maximumf(lim))\n",
            expected="import flydsl.expr as fx\ndef f(x: fx.Float32, lim: fx.Float32):\n"
            "    return -fx.max(-x, lim), g(fx.min(x, lim)), not(fx.max(x, lim))\n",
            count=3,
            settings={"flydsl_version": "0.5.0"},
        ),
        # FlyDSL 0.3.1 has no `fx.max`.
        Invalid(
            "import flydsl.expr as fx\ndef f(acc: fx.Float32, peer: fx.Float32):\n    return acc.minimumf(peer)\n",
            expected="import flydsl.expr as fx\ndef f(acc: fx.Float32, peer: fx.Float32):\n    return fx.minimumf(acc, peer)\n",
            unsafe=True,
            message="use `fx.minimumf(acc, peer)` (`fx.min(...)`, FlyDSL's spelling, arrives in FlyDSL 0.3.2)",
            settings={"flydsl_version": "0.3.1"},
        ),
        # ArithValue's own method (pa_decode_swa.py's wave reductions): `fx.max` would make
        # the raw value an fx one.
        Invalid(
            "from flydsl.expr.arith import ArithValue\ndef f(w, p):\n    red = ArithValue(w)\n    return red.maximumf(p)\n",
            expected="from flydsl.expr.arith import ArithValue\nimport flydsl.expr as fx\ndef f(w, p):\n    red = ArithValue(w)\n    return fx.maximumf(red, p)\n",
            message="use `fx.maximumf(red, p)`, which keeps a raw value raw (`fx.max`, FlyDSL's spelling, makes the result an fx value: once the value is wrapped at its source): `red.maximumf(...)` is deprecated (ArithValue's method, on a raw value, past its declared removal",
            settings={"flydsl_version": "0.5.0"},
        ),
        # The block's body is indented as the statement is (a tab-indented function).
        Invalid(
            "import flydsl.expr as fx\ndef f(w: fx.Float32, peer, fm):\n\tw = w.addf(peer, fastmath=fm)\n\treturn w\n",
            expected="import flydsl.expr as fx\ndef f(w: fx.Float32, peer, fm):\n"
            "\twith fx.arith.fastmath(fm):\n\t\tw = w + peer\n\treturn w\n",
            message="`w.addf(...)` is deprecated (FlyDSL's `fx.Numeric.addf`",
        ),
        Invalid(
            "import flydsl.expr as fx\ndef f(acc: fx.Float32, peer):\n    return acc.maximumf(peer)\n",
            message="use `fx.maximumf(acc, peer)` (`fx.max(...)`, FlyDSL's spelling, when `peer` is a `fx.Float32` too): `acc.maximumf(...)` is deprecated",
            line=3,
            column=12,
            expected="import flydsl.expr as fx\ndef f(acc: fx.Float32, peer):\n    return fx.maximumf(acc, peer)\n",
            unsafe=True,
        ),
        Invalid(
            "import flydsl.expr as fx\n"
            "def f(v: fx.Float32, off, width):\n"
            "    peer = v.shuffle_xor(off, width)\n"
            "    return v.exp2(fastmath=fx.arith.FastMathFlags.fast).minimumf(peer)\n",
            expected="import flydsl.expr as fx\n"
            "def f(v: fx.Float32, off, width):\n"
            "    peer = fx.gpu.shuffle_xor(v, off, width)\n"
            "    return fx.minimumf(fx.math.exp2(v, fastmath=fx.arith.FastMathFlags.fast), peer)\n",
            count=3,
            settings={"flydsl_version": "0.5.0"},
        ),
        # A raw receiver (ArithValue's own method) too; fx imported where the file lacks it.
        Invalid(
            "from flydsl.expr.arith import ArithValue\n"
            "def f(w):\n    return ArithValue(w).shuffle_xor(1, 64)\n",
            expected="from flydsl.expr.arith import ArithValue\nimport flydsl.expr as fx\n"
            "def f(w):\n    return fx.gpu.shuffle_xor(ArithValue(w), 1, 64)\n",
            unsafe=True,
        ),
        # shrui: the same op in every release.
        Invalid(
            "import flydsl.expr as fx\ndef f(v: fx.Int32):\n    return v.shrui(fx.Int32(4)) & fx.Int32(15)\n",
            expected="import flydsl.expr as fx\ndef f(v: fx.Int32):\n    return fx.arith.shrui(v, fx.Int32(4)) & fx.Int32(15)\n",
            settings={"flydsl_version": "0.3.1"},
        ),
        # A Python-number amount the method cannot take: unsafe.
        Invalid(
            "import flydsl.expr as fx\ndef f(v: fx.Int32):\n    return v.shrui(2)\n",
            expected="import flydsl.expr as fx\ndef f(v: fx.Int32):\n    return fx.arith.shrui(v, 2)\n",
            unsafe=True,
        ),
        Invalid("import flydsl.expr as fx\natom = fx.rocdl.BufferCopyLDS64b()\n", message="BufferCopyLDS32b"),
        Invalid("import flydsl.expr as fx\nops = fx.tdm_ops.make_tdm_desc\n", column=7),
        Invalid(
            "from flydsl.expr import rocdl, tdm_ops\ndef f(n):\n    tdm_ops.tensor_wait(n)\n    tdm_ops.tensor_wait(0)\n",
            expected="from flydsl.expr import rocdl\nfrom flydsl.expr.rocdl import tdm_ops\ndef f(n):\n    tdm_ops.tensor_wait(n)\n    tdm_ops.tensor_wait(0)\n",
            count=2,
        ),
        Invalid(
            "from flydsl.expr import tdm_ops as tdm\nx = tdm.foo\n",
            expected="from flydsl.expr.rocdl import tdm_ops as tdm\nx = tdm.foo\n",
        ),
        # Not at module level: the message says why there is no fix.
        Invalid(
            "def f():\n    from flydsl.expr import tdm_ops\n    return tdm_ops.foo\n",
            expected=None,
            message="(no fix: only a one-line module-level `from flydsl.expr import tdm_ops` is rewritten",
        ),
        Invalid(
            "import flydsl.expr as fx\nv = fx.get(t, 0)\n",
            message="use `fx.get_(...).unpack()` or `IntTuple[...].unpack()`: `fx.get` is deprecated (declared removal in FlyDSL 0.4) (no fix: `fx.get` casts the element to `index`",
        ),
        Invalid(
            "from flydsl.expr import arith\n"
            "def f(ty):\n    return arith.constant_vector(0.0, ty)\n",
            message="(no fix: it gives a raw vector (a dense `arith.constant`",
        ),
        # Quoted as written, with the replacement FlyDSL's maintainers wrote (pa_decode).
        Invalid(
            "from flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "def f():\n    return arith.constant_vector(0.0, T.f32x4)\n",
            expected=None,
            message="use `fx.Vector.filled(4, 0.0, fx.Float32)` (an fx Vector: `.ir_value()` where the raw vector is needed): `arith.constant_vector` is deprecated (FlyDSL's `fx.constant_vector`, ",
        ),
        Invalid(
            "import flydsl.expr as fx\nv = fx.get(t, 0)\n",
            message="past its declared removal in FlyDSL 0.4: 0.5.0 still has it, a later release may not",
            settings={"flydsl_version": "0.5.0"},
        ),
        Invalid(
            "def f(v):\n    return v.shuffle_xor(1, 64)\n",
            expected="import flydsl.expr as fx\ndef f(v):\n    return fx.gpu.shuffle_xor(v, 1, 64)\n",
            unsafe=True,
        ),
    ]
