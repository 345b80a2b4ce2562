import ast

from flydsl_ls.analysis.model.apis import table
from flydsl_ls.analysis.model.diagnostic import Severity
from flydsl_ls.analysis.model.rawtypes import element_type
from flydsl_ls.analysis.model.rewrite import fx_alias
from flydsl_ls.analysis.model.valueflow import (
    Sink,
    is_raw_builder,
    kind_change_blocker,
    value_kind,
)
from flydsl_ls.analysis.model.versions import at_least
from flydsl_ls.analysis.rules import _raw_dialect_support as S
from flydsl_ls.analysis.rules._boundary import raw_boundaries
from flydsl_ls.analysis.rules._control_flow_support import method_call_state
from flydsl_ls.analysis.rules.base import Invalid, Rule, Valid

# op -> (Python operator, operand kind). "sint": signed integer operands only, because
# the operator emits the unsigned op (remui/shrui/divui) on fx.Uint*/fx.Index values.
BINARY = {
    "addf": ("+", "float"),
    "subf": ("-", "float"),
    "mulf": ("*", "float"),
    "divf": ("/", "float"),
    "remf": ("%", "float"),
    "addi": ("+", "int"),
    "subi": ("-", "int"),
    "muli": ("*", "int"),
    "andi": ("&", "int"),
    "ori": ("|", "int"),
    "xori": ("^", "int"),
    "shli": ("<<", "int"),
    "remsi": ("%", "sint"),
    "floordivsi": ("//", "sint"),
    "shrsi": (">>", "sint"),
}
# op -> (fx function, unsigned). fx.max/min/ceildiv pick the signed or unsigned op from
# the operands' fx type; maxnumf keeps its NaN semantics (never fx.max).
EXTREMA = {
    "maximumf": ("max", False),
    "minimumf": ("min", False),
    "maxsi": ("max", False),
    "minsi": ("min", False),
    "maxui": ("max", True),
    "minui": ("min", True),
    "maxnumf": ("maxnumf", False),
    "minnumf": ("minnumf", False),
    "ceildivsi": ("ceildiv", False),
    "ceildivui": ("ceildiv", True),
}
MINNUMF_SINCE = "0.5.0"  # fx.minnumf is new in FlyDSL 0.5.0 (fx.maxnumf is older)
# Unsigned ops with no operator: `//`, `%`, `>>` on fx.Int32 are signed.
UNSIGNED = {"divui": "//", "remui": "%", "shrui": ">>"}
CASTS = {
    "extsi": "`fx.Int64(v)` (or the target fx integer type)",
    "trunci": "the target fx integer type, e.g. `fx.Int32(v)`",
    "sitofp": "`v.to(fx.Float32)` (or the target fx float type)",
    "fptosi": "`v.to(fx.Int32)` (or the target fx integer type)",
    "bitcast": "`v.bitcast(fx.T)`",
    "extui": "`fx.Uint*` values and `.to(...)`",
    "uitofp": "`fx.Uint*` values and `.to(...)`",
    "fptoui": "`.to(fx.Uint*)`",
    "index_castui": "`fx.Index(v)` on `fx.Uint*` values",
}
UNSIGNED_CASTS = {"extui", "uitofp", "fptoui", "index_castui"}
# A scalar bitcast keeps the width: into f32 its source is the one other 32-bit scalar type.
# (f16/bf16/i16 share a width, so a 16-bit source is not known from the target.)
BITCAST_SOURCE = {"fx.Float32": "fx.Int32", "fx.Int32": "fx.Float32", "fx.Float64": "fx.Int64", "fx.Int64": "fx.Float64"}
FLOAT_CASTS = {"trunc_f", "truncf", "extf"}
CMPI = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">="}
CMPI_UNSIGNED = {"ult", "ule", "ugt", "uge"}
CMPI_CODES = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
CMPF = {"OLT": "<", "OLE": "<=", "OGT": ">", "OGE": ">=", "OEQ": "==", "UNE": "!="}
CMPF_CODES = ["AlwaysFalse", "OEQ", "OGT", "OGE", "OLT", "OLE", "ONE", "ORD", "UEQ", "UGT",
              "UGE", "ULT", "ULE", "UNE", "UNO", "AlwaysTrue"]
OP_CLASSES = {
    "AddFOp": "addf", "SubFOp": "subf", "MulFOp": "mulf", "DivFOp": "divf", "RemFOp": "remf",
    "AddIOp": "addi", "SubIOp": "subi", "MulIOp": "muli", "AndIOp": "andi", "OrIOp": "ori",
    "XOrIOp": "xori", "ShLIOp": "shli", "RemSIOp": "remsi", "FloorDivSIOp": "floordivsi",
    "ShRSIOp": "shrsi", "CmpIOp": "cmpi", "CmpFOp": "cmpf", "SelectOp": "select",
    "ConstantOp": "constant", "IndexCastOp": "index_cast", "TruncFOp": "truncf",
    "ExtFOp": "extf", "MaximumFOp": "maximumf", "MinimumFOp": "minimumf",
    "MaxNumFOp": "maxnumf", "MinNumFOp": "minnumf", "MaxSIOp": "maxsi", "MinSIOp": "minsi",
    "MaxUIOp": "maxui", "MinUIOp": "minui", "CeilDivSIOp": "ceildivsi",
    "CeilDivUIOp": "ceildivui", "DivUIOp": "divui", "RemUIOp": "remui", "ShRUIOp": "shrui",
    "NegFOp": "negf", "DivSIOp": "divsi", "ExtSIOp": "extsi", "ExtUIOp": "extui",
    "TruncIOp": "trunci", "SIToFPOp": "sitofp", "UIToFPOp": "uitofp", "FPToSIOp": "fptosi",
    "FPToUIOp": "fptoui", "BitcastOp": "bitcast", "IndexCastUIOp": "index_castui",
}
FLAGGED = (
    set(BINARY) | set(EXTREMA) | set(UNSIGNED) | set(CASTS) | FLOAT_CASTS
    | {"cmpi", "cmpf", "select", "constant", "index_cast", "negf", "divsi"}
)
# FlyDSL's typed API inside flydsl.expr.arith (its __all__ names besides the legacy
# cmp*/max*/min* ones): never flagged.
MODERN = {"max", "min", "ceildiv", "fastmath"}
# FlyDSL's own helpers in flydsl.expr.arith that unwrap fx operands (`_to_raw`/
# `as_ir_value`). Every other name there is the raw builder, which rejects fx values
# (FlyDSL 0.5.0: "'Int32' object has no attribute 'type'").
ACCEPTS_FX_OPERANDS = {"andi", "xori", "shli", "cmpi", "cmpf"}
FASTMATH_NOTE = (
    "the typed form picks up the ambient fastmath (`arith.fastmath(...)` blocks and the "
    "`fastmath`/`fast_fp_math` compile hints), which the raw op ignores"
)


# ArithValue's float casts as methods (`acc.truncf(T.vec(4, T.bf16))`).
_RAW_CAST_METHODS = {"truncf", "extf"}


class RawArith(Rule):
    """
    Raw `arith` dialect ops called from kernel code: through FlyDSL's arith module
    (`from flydsl.expr import arith`, `fx.arith.X`, which star-re-exports the raw
    dialect) or the raw dialect itself (`flydsl._mlir.dialects.arith` under any alias:
    `std_arith`, `_arith_dialect`, ...), including the `*Op` classes
    (`arith.MulFOp(a, b).result`, `from ..._arith_ops_gen import MulFOp as _MulFOp`).

    fx values say the same with Python and typed helpers:
    `arith.addf/mulf/subf/divf(a, b)` and `addi/subi/muli` -> `a + b`, `a * b`, ...;
    `arith.cmpi(CmpIPredicate.slt, a, b)` -> `a < b`; `arith.select(c, t, f)` ->
    `c.select(t, f)`; `arith.trunc_f(T.bf16, v)`/`extf` -> `v.to(fx.BFloat16)`;
    `arith.index_cast(T.i32, v)` -> `fx.Int32(v)`; `arith.constant(42)` -> `fx.Int32(42)`;
    `arith.maximumf/minimumf`, `maxsi/minsi` -> `fx.max`/`fx.min`; `arith.maxnumf` ->
    `fx.maxnumf` (NaN-ignoring: never `fx.max`); `ceildivsi/ceildivui` -> `fx.ceildiv`.
    Like FlyDSL's own guard (`scripts/check_typed_arithmetic_usage.py`), the min/max/
    ceildiv spellings are flagged through either arith module and under any alias
    (`maxsi as raw_max`), while `fx.max`, `fx.min`, `fx.maxnumf`, `fx.ceildiv` and
    `fx.maximumf`/`fx.minimumf` on `flydsl.expr` itself are the typed API.
    `arith.CmpIPredicate.slt`, `arith.FastMathFlags.fast` and `with arith.fastmath(...)`
    are not op calls. ArithValue's own float casts `v.truncf(T.bf16)` / `v.extf(T.f32)` are
    flagged as methods too: into a float vector type `fx.Vector(v).to(fx.BFloat16)` (an
    fx.Vector is an ArithValue, so every consumer takes it), into a float scalar type
    `fx.BFloat16(v)` (the same truncf/extf; unsafe, no fix where the type cannot be read).
    `arith.index_cast(T.index, v)` and `arith.constant(n, index=True)` belong to FLY103;
    `value.maximumf(peer)` to FLY901.

    Fix safety. A fix is safe only where the operator provably emits the same op: a 1:1
    integer operator through FlyDSL's helpers that take fx operands (`arith.andi/xori/
    shli` -> `& ^ <<`; `arith.cmpi` `eq/ne/slt/sle/sgt/sge` -> `== != < <= > >=`, signed
    predicates on signed types), both operands of the same known fx integer type, no
    keywords, and every use of the result accepting the typed value (the operator gives
    `fx.Int32`/`fx.Boolean` where the helper gave a raw value: fine as an `fx.Int32(...)`
    cast, an `arith.select`/`as_ir_value`/`_to_raw` argument, or unused). The raw
    builders (`addi`, `muli`, `remsi`, ... through either module) reject fx operands in
    FlyDSL 0.5.0 (`'Int32' object has no attribute 'type'`): such a call fails when traced,
    so its operator fix is offered as unsafe, with that reason. Float operators are never
    a safe fix: FlyDSL's operators (and `fx.max`, `fx.maxnumf`, `.to(...)`) take the
    ambient fastmath of an `arith.fastmath(...)` block or of the `fastmath`/`fast_fp_math`
    compile hints, which a launcher in another file may set; the raw op does not.
    `fx.max`/`fx.Int32(v)`/`c.select(...)` may fold or coerce static values: unsafe.
    `arith.constant(n, type=T.i32)` -> `fx.Int32(n)` for any `n` not known to be an IR
    value (FlyDSL's `constant` takes only Python numbers), its type read off `type=` (also
    through a local alias, `i32 = T.i32`) or, without it, off `n`'s Python type. Casts
    become the fx constructor that emits the same op: `extsi` -> `fx.Int64(v)` where `v`'s
    type is a signed integer wider than i1 (an fx.Uint* or an i1 is zero-extended),
    `trunci`/`fptosi` -> `fx.Int32(v)`, `sitofp` -> `v.to(fx.Float32)` for a signed
    integer `v`, `bitcast` -> `v.bitcast(fx.Float32)`; a raw `v` whose MLIR type is read
    off its op (or `fx.as_ir_value(x)` of a typed `x`) is first wrapped in that type
    (`fx.Int32(v)`, no op). A scalar bitcast keeps the width, so into f32/i32/f64/i64 a
    source of unknown type is the one other scalar type of that width (`fx.Int32(v)
    .bitcast(fx.Float32)`); 16-bit types are several. `select`'s operands share one type:
    beside a typed scalar (not a Python literal), an operand of unknown type is one too. Its
    result is fx where the condition is: each consumer that took the raw value gets
    `fx.as_ir_value(v)` (either kind), and no fix where an integer result meets `>>` or `/`.
    Calls inside the legacy helper layers themselves (aiter's `kernels/vector.py`,
    `buffer_ops.py`, `tensor_shim.py`, ...) are not reported; their callers are.

    Consumers. Where the typed form surely gives an fx value (`fx.max`, `fx.Int32(...)`,
    `.to(...)`, an operator with an fx left operand), the fix follows the value through the
    names it is assigned to: each consumer that needs the raw value (a raw builder, an
    ArithValue method such as `.type`, code the file does not show, an operator whose left
    operand may be raw) gets `v.ir_value()` right there, in the same fix. Inside a dynamic
    `if`/`for`/`while` on a name the region does not bind, that method call would make
    FlyDSL's rewriter carry the name through the region, and the trace fails where it is None
    or unbound at the region's entry (a name bound in one `const_expr` branch only, FlyDSL's
    qk_norm_rope_quant.py with e8m0 scales): there the consumer gets `fx.as_ir_value(v)`, a
    function call the rewriter does not carry. `select`, whose `cond.select(...)` is such a
    call, has no fix where the condition may be None or unbound there.

    Kept (reported as information, no fix): ops with a non-default `fastmath=`; `cmpf`
    predicates without an operator (`ONE`, `ORD`, `UEQ`, ...); unsigned ops (`divui`,
    `remui`, raw `shrui`, `cmpi` `ult/ule/ugt/uge`, `extui`/`uitofp`/`fptoui`), since `//`, `%`, `>>`, `<` on
    `fx.Int32` are signed (`maxui`/`minui`/`ceildivui` get an unsafe `fx.max`/`fx.min`/
    `fx.ceildiv`, right only with `fx.Uint*` operands); `divsi` (truncating; `//`
    floors). A separate `a * b + c` is never turned into `fx.fma`.
    """

    code = "FLY301"
    name = "raw-arith"
    summary = (
        "raw `arith` ops (`constant`, `mulf/addf/subf`, `trunc_f/extf`, `index_cast` to "
        "i32/i64, `select`, `cmpi/cmpf`, `maximumf/minimumf`, `max*/min*`, `maxnumf`, "
        "`ceildiv*`, `extsi/trunci/sitofp/fptosi/bitcast`) and `*Op(...)` classes"
    )
    replacement = "operators, `.to(fx.T)`, `cond.select(t, f)`, `fx.max/min/maxnumf/ceildiv`, `fx.Int32(v)`"
    fix_safety = (
        "safe for 1:1 integer operator forms of FlyDSL's fx-accepting helpers (andi/xori/shli/cmpi) "
        "with matching fx integer operands; unsafe otherwise; none for kept cases "
        "(fastmath, unsigned, cmpf without operator)"
    )
    fix_title = "Replace with the typed form"
    example_before = "s = arith.addi(row, col)\nm = arith.maximumf(a, b)"
    example_after = "s = row + col\nm = fx.max(a, b)"

    def visit_Call(self, node: ast.Call) -> None:
        symbol = self.model.resolve(node.func)
        if symbol is None:
            self._raw_cast_method(node)
            return
        module, _, op = symbol.rpartition(".")
        if module not in ("fx.arith", "mlir.arith"):
            return
        if S.is_shim_definition(self.ctx.path):
            return
        spelled = self.text(node.func)
        replaced: ast.AST = node
        raw = module == "mlir.arith"
        if op in OP_CLASSES:
            parent = self.ctx.parent
            if not (isinstance(parent, ast.Attribute) and parent.attr == "result" and parent.value is node):
                self.report(
                    node,
                    f"`{spelled}(...)` builds a raw arith op: {self._hint(OP_CLASSES[op])} (no fix: the op "
                    "object itself is used, not its `.result`)",
                )
                return
            replaced, op, raw, spelled = parent, OP_CLASSES[op], True, f"{spelled}(...).result"
        elif op not in FLAGGED or (not raw and op in MODERN):
            return
        if not raw and op == "shrui":
            return  # fx.arith.shrui is FlyDSL's typed shift (the documented replacement)
        if self._owned_by_fly103(node, op, raw):
            return
        if not spelled.endswith(".result"):
            spelled = f"{spelled}(...)"
        fastmath = S.explicit_fastmath(node)
        if fastmath is not None:
            self.report(
                node,
                f"`{spelled}` carries `fastmath={self.text(fastmath.value)}`: keep the explicit op "
                "(operators cannot carry per-op fastmath)",
                severity=Severity.INFORMATION,
            )
            return
        Handler(self, node, replaced, op, raw, spelled).run()

    def _owned_by_fly103(self, node: ast.Call, op: str, raw: bool) -> bool:
        if raw:
            return False
        if op == "index_cast" and node.args:
            return S.scalar_dtype(self.model, node.args[0]) == "fx.Index"
        if op == "constant":
            return any(
                k.arg == "index" and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in node.keywords
            )
        return False

    @staticmethod
    def _hint(op: str) -> str:
        if op in BINARY:
            return f"use the `{BINARY[op][0]}` operator on fx values"
        if op in EXTREMA:
            return f"use `fx.{EXTREMA[op][0]}(a, b)`"
        if op in UNSIGNED:
            return f"unsigned op: `{UNSIGNED[op]}` on fx.Int32 is signed; keep it or use fx.Uint32 operands"
        if op in CASTS:
            return f"use {CASTS[op]}"
        return {
            "cmpi": "use a comparison operator (`a < b`)",
            "cmpf": "use a comparison operator where one exists",
            "select": "use `cond.select(t, f)`",
            "constant": "use `fx.Int32(n)`/`fx.Float32(x)`",
            "index_cast": "use `fx.Int32(v)`/`fx.Int64(v)`/`fx.Index(v)`",
            "negf": "use `-v`",
            "divsi": "no typed operator (`//` floors); keep it",
        }.get(op, "use fx operators and typed helpers")

    def _raw_cast_method(self, node: ast.Call) -> None:
        """``v.truncf(T.bf16)`` / ``v.extf(T.f32)``: ArithValue's own float casts, which fx
        values do not have (no fix: the receiver is raw, its consumers may need it raw)."""
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr in _RAW_CAST_METHODS):
            return
        receiver = func.value
        root = receiver
        while isinstance(root, ast.Attribute):
            root = root.value
        binding = self.model.binding_of(root) if isinstance(root, ast.Name) else None
        module = self.model.resolve(receiver) is not None or (binding is not None and binding.kind == "import")
        if module or S.is_shim_definition(self.ctx.path):
            return  # a module's function (`arith.truncf`, `np.truncf`), or a shim's own code
        if self.model.type_of(receiver).is_fx_scalar:
            return
        message = (
            f"`.{func.attr}(...)` is ArithValue's raw float cast: on an fx scalar or vector "
            "write `v.to(fx.BFloat16)` (the target fx type)"
        )
        fix, why = self._typed_cast_method(node, receiver)
        self.report(func, message + why, fix=fix)

    def _typed_cast_method(self, node: ast.Call, receiver: ast.expr):
        """(fix, message tail) for `v.truncf(T)` / `v.extf(T)`, whose target type says what
        the receiver is. Into a float vector type: `fx.Vector(v).to(fx.E)`, an fx.Vector,
        which is an ArithValue too, so every consumer takes it as before. Into a float
        scalar type: `fx.E(v)` (the same truncf/extf), with `.ir_value()` at the consumers
        that need the raw value. (Traced: the same first MLIR on FlyDSL 0.3.1 and 0.5.0.)"""
        keep = " (no fix: the receiver is a raw value, which has no `.to`, and its consumers may need the raw result)"
        if len(node.args) != 1 or node.keywords or isinstance(node.args[0], ast.Starred):
            return None, keep
        target = node.args[0]
        fx, imports = fx_alias(self.model)
        vector = S.vector_dtype(self.model, target)
        scalar = S.scalar_dtype(self.model, target)
        if vector is not None and vector[0] is not None and S.is_float_type(vector[0]):
            name = vector[0].removeprefix("fx.")
            typed = self.model.type_of(receiver).name == "fx.Vector"
            text = f"{S.receiver(self, receiver) if typed else f'{fx}.Vector({self.text(receiver)})'}.to({fx}.{name})"
            boundaries = None
        elif scalar is not None and S.is_float_type(scalar):
            name = scalar.removeprefix("fx.")
            text = f"{fx}.{name}({self.text(receiver)})"
            boundaries = raw_boundaries(self, node)
            if boundaries.blocker is not None:
                return None, f" (no fix: {boundaries.blocker})"
            if boundaries.wrap_self:
                text += ".ir_value()"
        else:
            return None, keep
        if S.comments_dropped(self, node, [receiver, target]):
            return None, S.COMMENTS_WHY
        note = f"; {boundaries.note}" if boundaries is not None and boundaries.note else ""
        extra = (*imports, *(boundaries.edits if boundaries is not None else ()))
        fix = self.replace(node, text, f"Replace with a cast to {fx}.{name}", safe=False, extra=extra)
        return fix, f" (unsafe: {FASTMATH_NOTE}, and the result is an fx value{note})"

    VALID = [
        # The fixed form of a boundary inside a dynamic `if` on a name bound in one
        # `const_expr` branch only: a function call, nothing for the rewriter to carry.
        Valid(
            "import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import const_expr\n"
            "from flydsl._mlir.dialects import scf\n"
            "@flyc.kernel\ndef k(n: fx.Int32, wide):\n    if const_expr(wide):\n        hi = fx.Int32(8)\n"
            "    if n > 0:\n        if const_expr(wide):\n            scf.for_(0, fx.as_ir_value(hi), 1)\n"
        ),
        # The float casts of fx values, and module functions named like the raw methods.
        Valid("import flydsl.expr as fx\ndef f(v: fx.Float32):\n    return v.to(fx.BFloat16)\n"),
        Valid("import numpy as np\ny = np.truncf(x)\n"),
        # FlyDSL's typed API, and the guard's accepted spellings.
        Valid("import flydsl.expr as fx\nresult = fx.max(a, b)\nresult = fx.min(a, b)\n"),
        Valid("import flydsl.expr as fx\nresult = fx.maxnumf(a, b)\nresult = fx.ceildiv(a, b)\n"),
        Valid("import flydsl.expr as fx\nresult = fx.maximumf(a, b)\n"),
        Valid("from flydsl import expr as typed_fx\nresult = typed_fx.minimumf(a, b)\n"),
        Valid("result = fx.max(a, b)\nresult = (a + b - 1) // b\n"),
        Valid("from flydsl.expr import arith\nm = arith.max(a, b)\nq = arith.ceildiv(a, b)\ns = arith.shrui(x, 3)\n"),
        # Enum access and the fastmath context are not op calls.
        Valid(
            "from flydsl.expr import arith\npred = arith.CmpIPredicate.slt\n"
            "flags = arith.FastMathFlags.fast\nwith arith.fastmath(arith.FastMathFlags.fast):\n    y = x + 1\n"
        ),
        # Text, not calls.
        Valid(
            'from flydsl.expr import arith\n"""arith.addf(a, b) in a docstring"""\n'
            "# arith.maximumf(a, b) in a comment\ns = 'arith.cmpi(slt, a, b)'\n"
        ),
        # FLY103's: index_cast to index, constant(n, index=True). FLY901's: the method form.
        Valid(
            "from flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "off = arith.index_cast(T.index, x)\nn = arith.constant(4, index=True)\n"
        ),
        Valid("import flydsl.expr as fx\ndef f(value: fx.Float32, peer):\n    return value.maximumf(peer)\n"),
        # Not FlyDSL: Python's math/operator modules and an unrelated arith module.
        Valid("import numpy as np\nm = np.maximum(a, b)\nfrom mylib import arith\nx = arith.addf(a, b)\n"),
    ]
    INVALID = [
        # The guard's rejected spellings (legacy through either arith module, any alias).
        Invalid(
            "from flydsl.expr import arith\nresult = arith.maximumf(a, b)\n",
            expected="import flydsl.expr as fx\nresult = fx.max(a, b)\n",
            unsafe=True,
            line=2,
            column=10,
            message="fx.max",
        ),
        Invalid(
            "from flydsl._mlir.dialects import arith as raw\nresult = raw.ceildivui(a, b)\n",
            expected="import flydsl.expr as fx\nresult = fx.ceildiv(a, b)\n",
            unsafe=True,
            message="unsigned",
        ),
        Invalid(
            "from flydsl.expr.arith import maxsi as raw_max\nresult = raw_max(a, b)\n",
            expected="import flydsl.expr as fx\nresult = fx.max(a, b)\n",
            unsafe=True,
        ),
        Invalid(
            "import flydsl.expr.arith as typed_arith\nresult = typed_arith.maxnumf(a, b)\n",
            expected="import flydsl.expr as fx\nresult = fx.maxnumf(a, b)\n",
            unsafe=True,
            message="fx.maxnumf",
        ),
        Invalid(
            "import flydsl.expr as fx\nm = fx.arith.maximumf(a, b)\nn = fx.arith.minimumf(a, b)\n",
            expected="import flydsl.expr as fx\nm = fx.max(a, b)\nn = fx.min(a, b)\n",
            unsafe=True,
            count=2,
        ),
        # FlyDSL 0.3.1 has no fx.max/min: its typed float extrema keep the op's name.
        Invalid(
            "import flydsl.expr as fx\nm = fx.arith.maximumf(a, b)\nn = fx.arith.minimumf(a, b)\n",
            expected="import flydsl.expr as fx\nm = fx.maximumf(a, b)\nn = fx.minimumf(a, b)\n",
            unsafe=True,
            count=2,
            message="FlyDSL 0.3.1 has no `fx.max`; `fx.maximumf` is its typed form",
            settings={"flydsl_version": "0.3.1"},
        ),
        Invalid(
            "import flydsl.expr as fx\nm = fx.arith.maxsi(a, b)\n",
            expected=None,
            message="(no fix: `fx.max` is not in FlyDSL 0.3.1; it arrives in FlyDSL 0.3.2)",
            settings={"flydsl_version": "0.3.1"},
        ),
        # Safe: a 1:1 integer operator on matching fx integer operands, through FlyDSL's
        # helpers that accept fx values (andi/xori/shli, cmpi), the result consumed by a
        # typed cast, arith.select or nothing.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "def f(row: fx.Int32, mask: fx.Int32):\n    return fx.Int32(arith.andi(row, mask))\n",
            expected="import flydsl.expr as fx\n"
            "def f(row: fx.Int32, mask: fx.Int32):\n    return fx.Int32(row & mask)\n",
            line=4,
            column=21,
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.arith import xori, shli\n"
            "def f(a: fx.Uint32, b: fx.Uint32):\n    x = shli(a, b)\n    xori(a, b)\n"
            "    return fx.Uint32(x)\n",
            expected="import flydsl.expr as fx\n"
            "def f(a: fx.Uint32, b: fx.Uint32):\n    x = a << b\n    a ^ b\n"
            "    return fx.Uint32(x)\n",
            count=2,
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "def f(i: fx.Int32, n: fx.Int32, x, y):\n"
            "    return arith.select(arith.cmpi(arith.CmpIPredicate.slt, i, n), x, y)\n",
            expected="import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "def f(i: fx.Int32, n: fx.Int32, x, y):\n"
            "    return arith.select(i < n, x, y)\n",
            count=2,
            message="cond.select",
        ),
        # The raw builders (addi, muli, remsi, ...) reject fx operands: the call fails when
        # traced, so there is no IR to preserve: unsafe, and the message says why.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl._mlir.dialects import arith as std_arith\n"
            "def f(a: fx.Int64, b: fx.Int64):\n"
            "    s = std_arith.muli(a, b)\n    fx.printf('%d', fx.Int64(s))\n",
            expected="import flydsl.expr as fx\n"
            "def f(a: fx.Int64, b: fx.Int64):\n"
            "    s = a * b\n    fx.printf('%d', fx.Int64(s))\n",
            unsafe=True,
            message="rejects fx.Int64 operands",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "def f(a: fx.Int32, b: fx.Int32):\n    fx.Int32(arith.remsi(a, b))\n",
            expected="import flydsl.expr as fx\n"
            "def f(a: fx.Int32, b: fx.Int32):\n    fx.Int32(a % b)\n",
            unsafe=True,
        ),
        # The result is returned to callers the file does not show: they get the raw value.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "def f(a: fx.Int32, b: fx.Int32):\n    return arith.addi(a, b)\n",
            expected="import flydsl.expr as fx\n"
            "def f(a: fx.Int32, b: fx.Int32):\n    return (a + b).ir_value()\n",
            unsafe=True,
        ),
        # ... and a caller in the file that takes fx values gets the fx value.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "def f(a: fx.Int32, b: fx.Int32):\n    return arith.addi(a, b)\n"
            "def g(a: fx.Int32):\n    fx.printf(f(a, a) * 2)\n",
            expected="import flydsl.expr as fx\n"
            "def f(a: fx.Int32, b: fx.Int32):\n    return a + b\n"
            "def g(a: fx.Int32):\n    fx.printf(f(a, a) * 2)\n",
            unsafe=True,
        ),
        # remsi on unsigned fx values: `%` would emit remui. Unknown operand types: unsafe.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "def f(a: fx.Uint32, b: fx.Uint32):\n    arith.remsi(a, b)\n",
            expected="import flydsl.expr as fx\n"
            "def f(a: fx.Uint32, b: fx.Uint32):\n    a % b\n",
            unsafe=True,
        ),
        # Float operators take the ambient fastmath: unsafe even with typed operands.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "def f(a: fx.Float32, b: fx.Float32):\n    arith.addf(a, b)\n",
            expected="import flydsl.expr as fx\n"
            "def f(a: fx.Float32, b: fx.Float32):\n    a + b\n",
            unsafe=True,
            message="fastmath",
        ),
        # *Op classes with .result, the bare _arith_ops_gen import; precedence kept.
        Invalid(
            "from flydsl._mlir.dialects._arith_ops_gen import MulFOp as _MulFOp\n"
            "from flydsl._mlir.dialects import arith as _arith_dialect\n"
            "def f(a, b, c):\n"
            "    x = _MulFOp(a, _arith_dialect.AddFOp(b, c).result).result\n    return -x\n",
            expected="def f(a, b, c):\n    x = a * (b + c)\n    return -x\n",
            unsafe=True,
            count=2,
        ),
        # a*b + c stays two ops: never fx.fma.
        Invalid(
            "from flydsl.expr import arith\n"
            "def f(a, b, c):\n    return arith.addf(arith.mulf(a, b), c)\n",
            expected="def f(a, b, c):\n    return a * b + c\n",
            unsafe=True,
            count=2,
        ),
        Invalid(
            "from flydsl.expr import arith\ndef f(a, b, c):\n    return arith.subi(a, arith.subi(b, c)) * 2\n",
            expected="def f(a, b, c):\n    return (a - (b - c)) * 2\n",
            unsafe=True,
            count=2,
        ),
        # Comparisons, select, casts, constants.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "def f(a, b, x: fx.Float32, y: fx.Float32):\n    c = arith.cmpi(arith.CmpIPredicate.slt, a, b)\n"
            "    return arith.select(c, x, y)\n",
            expected="import flydsl.expr as fx\n"
            "def f(a, b, x: fx.Float32, y: fx.Float32):\n    c = a < b\n    return fx.as_ir_value(c.select(x, y))\n",
            unsafe=True,
            count=2,
        ),
        # ...a raw scalar whose MLIR type is read off its op is a number.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "from flydsl._mlir.dialects import arith as std_arith, llvm\nfrom flydsl.expr.typing import T\n"
            "def f(c, v: fx.Float32, p):\n    zero = std_arith.constant(T.f32, 0.0)\n    llvm.StoreOp(zero, p)\n"
            "    fx.printf(arith.select(c, zero, v))\n",
            # (the constant is typed too, and the raw store gets its `.ir_value()`)
            expected="import flydsl.expr as fx\n"
            "from flydsl._mlir.dialects import llvm\n"
            "def f(c, v: fx.Float32, p):\n    zero = fx.Float32(0.0)\n    llvm.StoreOp(zero.ir_value(), p)\n"
            "    fx.printf(c.select(zero, v))\n",
            unsafe=True,
            count=2,
        ),
        # Boolean.select wraps its operands as fx values: a buffer resource is none.
        Invalid(
            "from flydsl.expr import arith\n"
            "def pick(is_a, a_rsrc, b_rsrc):\n    return arith.select(is_a, a_rsrc, b_rsrc)\n",
            expected=None,
            message="no fix: `a_rsrc` is not known to be a number",
        ),
        # ... but a select's operands share one type: beside an fx.Int32 (or a raw scalar whose
        # type is read off its op), the unknown one is an i32 too (FlyDSL's pa_decode_swa.py).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "def clamp(lane, n: fx.Int32):\n    last = n - 1\n    return fx.Int32(arith.select(lane < n, lane, last))\n",
            expected="import flydsl.expr as fx\n"
            "def clamp(lane, n: fx.Int32):\n    last = n - 1\n    return fx.Int32((lane < n).select(lane, last))\n",
            unsafe=True,
            message="use `cond.select(t, f)` (unsafe: ",
        ),
        Invalid(
            "from flydsl.expr import arith\n"
            "def f(a, b):\n    return arith.cmpi(arith.CmpIPredicate.ult, a, b)\n",
            expected=None,
            message="unsigned",
        ),
        Invalid(
            "from flydsl.expr import arith\n"
            "def f(a, b):\n    return arith.cmpf(arith.CmpFPredicate.ONE, a, b)\n",
            expected=None,
            message="no operator",
        ),
        Invalid(
            "from flydsl.expr import arith\nimport flydsl.expr as fx\n"
            "def f(a: fx.Float32, b: fx.Float32):\n    return arith.cmpf(arith.CmpFPredicate.OGE, a, b)\n",
            expected="import flydsl.expr as fx\n"
            "def f(a: fx.Float32, b: fx.Float32):\n    return (a >= b).ir_value()\n",
            unsafe=True,
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "def f(v: fx.Float32, w, i):\n"
            "    a = arith.trunc_f(T.bf16, v)\n    b = arith.extf(T.f32(), w)\n"
            "    c = arith.index_cast(T.i32, i)\n    fx.printf(a, b, c)\n",
            expected="import flydsl.expr as fx\n"
            "def f(v: fx.Float32, w, i):\n"
            "    a = v.to(fx.BFloat16)\n    b = fx.Float32(w)\n"
            "    c = fx.Int32(i)\n    fx.printf(a, b, c)\n",
            unsafe=True,
            count=3,
        ),
        Invalid(
            "from flydsl.expr import arith\nfrom flydsl._mlir.dialects import arith as std_arith\n"
            "from flydsl.expr.typing import T\n"
            "one = arith.constant(1)\nhalf = arith.constant(0.5, type=T.f16)\n"
            "two = std_arith.constant(T.i64, 2)\n",
            expected="import flydsl.expr as fx\n"
            "one = fx.Int32(1)\nhalf = fx.Float16(0.5)\ntwo = fx.Int64(2)\n",
            unsafe=True,
            count=3,
        ),
        # Kept: explicit fastmath, unsigned division, truncating division.
        Invalid(
            "from flydsl.expr import arith\n"
            "def f(a, b):\n    return arith.MulFOp(a, b, fastmath=arith.FastMathFlags.fast).result\n",
            expected=None,
            message="fastmath",
        ),
        Invalid(
            "from flydsl.expr import arith\ndef f(a, b):\n    return arith.divui(a, b), arith.remui(a, b)\n",
            expected=None,
            count=2,
            message="unsigned",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl._mlir.dialects import arith as std_arith\n"
            "def f(a, b):\n    fx.printf(std_arith.maxnumf(a, b))\n",
            expected="import flydsl.expr as fx\ndef f(a, b):\n    fx.printf(fx.maxnumf(a, b))\n",
            unsafe=True,
            message="fx.maxnumf",
        ),
        # fx.minnumf is new in 0.5.0: no fix for an older or unknown version.
        Invalid(
            "from flydsl.expr import arith\ny = arith.minnumf(a, b)\n",
            expected=None,
            settings={"flydsl_version": "0.3.4.1"},
        ),
        Invalid(
            "from flydsl.expr import arith\ny = arith.minnumf(a, b)\n",
            expected="import flydsl.expr as fx\ny = fx.minnumf(a, b)\n",
            unsafe=True,
            settings={"flydsl_version": "0.5.0"},
        ),
        # A raw index_cast to index is not FLY103's (it handles the fx.arith helper only).
        Invalid(
            "from flydsl._mlir.dialects import arith as std_arith\nfrom flydsl.expr.typing import T\n"
            "def f(v):\n    return std_arith.index_cast(T.index, v)\n",
            expected="import flydsl.expr as fx\ndef f(v):\n    return fx.Index(v).ir_value()\n",
            unsafe=True,
            message="`.ir_value()` at the raw boundaries: line 4",
        ),
        # fx.arith.select unwraps fx operands itself: the operator form may give an fx value,
        # which a raw builder cannot take ("must be a Value"): it gets `fx.as_ir_value(v)`,
        # which takes either kind (the condition's kind decides the result's).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl._mlir.dialects import llvm\n"
            "def f(c, a: fx.Int32, b: fx.Int32, ptr):\n    v = arith.select(c, a, b)\n    llvm.StoreOp(v, ptr)\n",
            expected="import flydsl.expr as fx\nfrom flydsl._mlir.dialects import llvm\n"
            "def f(c, a: fx.Int32, b: fx.Int32, ptr):\n    v = c.select(a, b)\n    llvm.StoreOp(fx.as_ir_value(v), ptr)\n",
            unsafe=True,
            message="`fx.as_ir_value(...)` at the raw boundaries: line 6",
        ),
        # ... but an integer result that meets `>>` (unsigned on ArithValue, signed on fx.Int32)
        # gets none (FlyDSL's pa_decode_swa.py, `udiv_const` in another module does it there).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "def f(c, a: fx.Int32, b: fx.Int32):\n    v = arith.select(c, a, b)\n    fx.printf(v >> 3)\n",
            expected=None,
            message="no fix: the fx value would reach `>>` on line 5",
        ),
        # A typed constant is an fx value: llvm.AtomicRMWOp needs an ir.Value (aiter's
        # moe_route_maps.py), also after arithmetic.
        Invalid(
            "from flydsl.expr import arith\nfrom flydsl.expr.typing import T\nfrom flydsl._mlir.dialects import llvm\n"
            "def f(ptr, v):\n    one = arith.constant(1, type=T.i32)\n"
            "    llvm.AtomicRMWOp(llvm.AtomicBinOp.add, ptr, one + v, llvm.AtomicOrdering.monotonic)\n",
            expected="from flydsl._mlir.dialects import llvm\nimport flydsl.expr as fx\n"
            "def f(ptr, v):\n    one = fx.Int32(1)\n"
            "    llvm.AtomicRMWOp(llvm.AtomicBinOp.add, ptr, (one + v).ir_value(), llvm.AtomicOrdering.monotonic)\n",
            unsafe=True,
        ),
        # With a raw (or unknown) left operand the operator keeps the raw kind: the fx value
        # becomes raw right there, and the result is left as it was.
        Invalid(
            "from flydsl.expr import arith\nfrom flydsl.expr.typing import T\nfrom flydsl._mlir.dialects import llvm\n"
            "def f(ptr, v):\n    one = arith.constant(1, type=T.i32)\n"
            "    llvm.AtomicRMWOp(llvm.AtomicBinOp.add, ptr, v + one, llvm.AtomicOrdering.monotonic)\n"
            "    return one\n",
            expected="from flydsl._mlir.dialects import llvm\nimport flydsl.expr as fx\n"
            "def f(ptr, v):\n    one = fx.Int32(1)\n"
            "    llvm.AtomicRMWOp(llvm.AtomicBinOp.add, ptr, v + one.ir_value(), llvm.AtomicOrdering.monotonic)\n"
            "    return one.ir_value()\n",
            unsafe=True,
        ),
        # A read that may also see a raw value (a loop rebinding the name) takes
        # `fx.as_ir_value(x)`, which gives the raw value of either kind (aiter's
        # fused_compress_attn.py); the loop's op then migrates on the raw value.
        Invalid(
            "from flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "def f(xs):\n    acc = arith.constant(0.0, type=T.f32)\n    for x in xs:\n"
            "        acc = arith.AddFOp(acc, x).result\n    return acc\n",
            expected="import flydsl.expr as fx\n"
            "def f(xs):\n    acc = fx.Float32(0.0)\n    for x in xs:\n"
            "        acc = fx.as_ir_value(acc) + x\n    return fx.as_ir_value(acc)\n",
            unsafe=True,
            count=2,
            message="`fx.as_ir_value(...)` (`acc` on line 6 may hold a raw value too) at the raw boundaries: line 6, line 7",
        ),
        # ... also on the way: `t` is computed from that read.
        Invalid(
            "from flydsl.expr import arith\nfrom flydsl.expr.typing import T\nfrom flydsl._mlir.dialects import llvm\n"
            "def f(xs, ptr):\n    acc = arith.constant(0.0, type=T.f32)\n    for x in xs:\n"
            "        t = acc * 2.0\n        llvm.StoreOp(t, ptr)\n        acc = arith.addf(acc, x)\n",
            expected="from flydsl._mlir.dialects import llvm\nimport flydsl.expr as fx\n"
            "def f(xs, ptr):\n    acc = fx.Float32(0.0)\n    for x in xs:\n"
            "        t = acc * 2.0\n        llvm.StoreOp(fx.as_ir_value(t), ptr)\n        acc = fx.as_ir_value(acc) + x\n",
            unsafe=True,
            count=2,
            message="`fx.as_ir_value(...)` (`acc` on line 7 may hold a raw value too)",
        ),
        # ... but not when the name is rebound in a region the rewriter builds (a dynamic
        # loop in a kernel): the region's result would change type.
        Invalid(
            "import flydsl.compiler as flyc\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "from flydsl._mlir.dialects import llvm\n"
            "@flyc.kernel\ndef k(n, x, ptr):\n    acc = arith.constant(0.0, type=T.f32)\n    for i in range(n):\n"
            "        acc = arith.AddFOp(acc, x).result\n    llvm.StoreOp(acc, ptr)\n",
            expected="import flydsl.compiler as flyc\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "from flydsl._mlir.dialects import llvm\n"
            "@flyc.kernel\ndef k(n, x, ptr):\n    acc = arith.constant(0.0, type=T.f32)\n    for i in range(n):\n"
            "        acc = acc + x\n    llvm.StoreOp(acc, ptr)\n",
            unsafe=True,
            count=2,
            message="no fix: `acc` on line 9 may also hold a raw value there, bound in a region the rewriter builds",
        ),
        # ... nor where another path binds a Python value: `fx.as_ir_value` would make it a
        # constant, and `isinstance(c, int)` would change its answer.
        Invalid(
            "from flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "def f(n, k):\n    c = 0\n    if k:\n        c = arith.index_cast(T.i32, n)\n"
            "    return isinstance(c, int)\n",
            expected=None,
            message="no fix: `c` on line 7 may also hold a Python value or one of unknown kind there",
        ),
        # Bound fx on every other path: the fixed one makes it fx everywhere, and a raw
        # builder gets `.ir_value()` ...
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "from flydsl._mlir.dialects import llvm\n"
            "def f(c, p):\n    x = fx.Int32(0)\n    if c:\n        x = arith.constant(3, type=T.i32)\n"
            "    llvm.StoreOp(x, p)\n",
            expected="import flydsl.expr as fx\nfrom flydsl._mlir.dialects import llvm\n"
            "def f(c, p):\n    x = fx.Int32(0)\n    if c:\n        x = fx.Int32(3)\n"
            "    llvm.StoreOp(x.ir_value(), p)\n",
            unsafe=True,
            message="`.ir_value()` at the raw boundaries: line 9",
        ),
        # ... but code that takes either kind got the fx value on that path, and would get a
        # raw one: no fix.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "from .helpers import use\n"
            "def f(c):\n    x = fx.Int32(0)\n    if c:\n        x = arith.constant(3, type=T.i32)\n    use(x)\n",
            expected=None,
            message="no fix: `x` on line 9 may hold an fx value on another path, which its consumer took as it was",
        ),
        # Where the op itself stands beside a left operand that may be a Python number, the
        # result would turn fx (`3 * fx.Int32(2)`): the other operand goes first.
        Invalid(
            "from flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "def f(v):\n    return v * arith.constant(2, type=T.i32)\n",
            expected=None,
            message="no fix: `*` on line 4 may have a Python number on the left",
        ),
        # An IR value of either kind on the left picks the operator, and the result is of the
        # kind it was (raw here): nothing to add (FlyDSL's qk_norm_rope_quant.py).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "from flydsl._mlir.dialects import llvm\n"
            "def f(v: fx.Float32, p):\n    bits = v.ir_value().bitcast(T.i32)\n"
            "    llvm.StoreOp(bits + arith.constant(7, type=T.i32), p)\n",
            expected="import flydsl.expr as fx\nfrom flydsl.expr.typing import T\n"
            "from flydsl._mlir.dialects import llvm\n"
            "def f(v: fx.Float32, p):\n    bits = v.ir_value().bitcast(T.i32)\n"
            "    llvm.StoreOp(bits + fx.Int32(7), p)\n",
            unsafe=True,
            message="(unsafe: the typed constant is materialised where it is used)",
        ),
        # ArithValue's float cast as a method (FlyDSL's qk_norm_rope_quant, aiter's
        # chunk_gated_delta_h): into a float vector type, the receiver is a vector:
        # `fx.Vector(v).to(...)`, an ArithValue too; into a scalar type, `fx.BFloat16(v)`.
        Invalid(
            "from flydsl.expr.typing import T\ndef f(acc):\n    return acc.truncf(T.vec(4, T.bf16))\n",
            expected="import flydsl.expr as fx\ndef f(acc):\n    return fx.Vector(acc).to(fx.BFloat16)\n",
            unsafe=True,
            line=3,
            column=12,
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr.typing import T\nfrom flydsl._mlir.dialects import llvm\n"
            "def f(v, w: fx.Vector, p):\n    llvm.StoreOp(v.truncf(T.bf16), p)\n    fx.printf(w.extf(T.f32x4))\n",
            expected="import flydsl.expr as fx\nfrom flydsl._mlir.dialects import llvm\n"
            "def f(v, w: fx.Vector, p):\n    llvm.StoreOp(fx.BFloat16(v).ir_value(), p)\n    fx.printf(w.to(fx.Float32))\n",
            unsafe=True,
            count=2,
        ),
        # ... an unreadable target type: no fix.
        Invalid(
            "def f(acc, ty):\n    return acc.truncf(ty)\n",
            expected=None,
            message="no fix: the receiver is a raw value",
        ),
        # fx.Float32 has no `.type` (an ArithValue has).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "def f(a: fx.Float32, b: fx.Float32):\n    return arith.maximumf(a, b).type\n",
            expected="import flydsl.expr as fx\n"
            "def f(a: fx.Float32, b: fx.Float32):\n    return fx.max(a, b).ir_value().type\n",
            unsafe=True,
        ),
        # A multi-line call becomes a one-line call, with no stray parentheses.
        Invalid(
            "from flydsl.expr import arith\ndef f(a, b):\n    return arith.maxsi(\n        a,\n        b,\n    ).ir_value()\n",
            expected="import flydsl.expr as fx\ndef f(a, b):\n    return fx.max(a, b).ir_value()\n",
            unsafe=True,
        ),
        # FlyDSL's constant() takes a Python number (anything else raises when traced): a
        # closure constant under a local type alias is one (aiter's fused_compress_attn.py).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "def f(tid: fx.Int32, ratio):\n    i32 = T.i32\n    fx.printf(tid * arith.constant(ratio, type=i32))\n",
            expected="import flydsl.expr as fx\n"
            "def f(tid: fx.Int32, ratio):\n    fx.printf(tid * fx.Int32(ratio))\n",
            unsafe=True,
        ),
        # ...but without `type=` its type follows the value's Python type; the raw builder's
        # value may be an attribute; an unreadable type.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "def f(n):\n    fx.printf(arith.constant(n))\n",
            expected=None,
            message="no fix: the constant's type follows `n`'s Python type",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl._mlir.dialects import arith as std_arith\nfrom flydsl.expr.typing import T\n"
            "def f(attr):\n    fx.printf(std_arith.constant(T.i32, attr))\n",
            expected=None,
            message="no fix: `attr` may be an MLIR attribute",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "def f(ty):\n    fx.printf(arith.constant(0.0, type=ty))\n",
            expected=None,
            message="no fix: `ty` is not a scalar type that can be read here",
        ),
        # Casts: the fx constructors emit the same signed op (`int_to_int`, `int_to_fp`,
        # `fp_to_int`), a bitcast the same `arith.bitcast`.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "def f(a: fx.Int32, v, x: fx.Float32):\n"
            "    fx.printf(arith.extsi(T.i64, a), arith.trunci(T.i8, v), arith.sitofp(T.f32, a))\n"
            "    fx.printf(arith.bitcast(T.i32, x), arith.fptosi(T.i32, x))\n",
            expected="import flydsl.expr as fx\n"
            "def f(a: fx.Int32, v, x: fx.Float32):\n"
            "    fx.printf(fx.Int64(a), fx.Int8(v), a.to(fx.Float32))\n"
            "    fx.printf(x.bitcast(fx.Int32), fx.Int32(x))\n",
            unsafe=True,
            count=5,
        ),
        # The target type under a local alias of `ir.IntegerType.get_signless(64)` (aiter's fmha).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl._mlir import ir\n"
            "def f(a: fx.Int32):\n    i64 = ir.IntegerType.get_signless(64)\n    fx.printf(arith.extsi(i64, a))\n",
            expected="import flydsl.expr as fx\n"
            "def f(a: fx.Int32):\n    fx.printf(fx.Int64(a))\n",
            unsafe=True,
        ),
        # A raw operand whose MLIR type is read off its op is wrapped in that type (no op).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl._mlir.dialects import arith as std_arith\nfrom flydsl.expr.typing import T\n"
            "def f(bits):\n    word = std_arith.ori(std_arith.constant(T.i32, 1), bits)\n"
            "    fx.printf(std_arith.bitcast(T.f32, word))\n",
            expected="import flydsl.expr as fx\n"
            "def f(bits):\n    word = fx.Int32(1) | bits\n"
            "    fx.printf(fx.Int32(word).bitcast(fx.Float32))\n",
            unsafe=True,
            count=3,
        ),
        # `fx.as_ir_value(v)` has v's type (aiter's fmha_prologue.py).
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "def f(off: fx.Int32):\n    fx.printf(arith.extsi(T.i64, fx.as_ir_value(off)))\n",
            expected="import flydsl.expr as fx\n"
            "def f(off: fx.Int32):\n    fx.printf(fx.Int64(fx.as_ir_value(off)))\n",
            unsafe=True,
        ),
        # A scalar bitcast keeps the width: into f32 from the one other 32-bit type, i32
        # (aiter's mfma_preshuffle_pipeline.py); a 16-bit source is not known.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "def f(bits, h):\n    fx.printf(arith.bitcast(T.f32, bits), arith.bitcast(T.f16, h))\n",
            expected="import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "def f(bits, h):\n    fx.printf(fx.Int32(bits).bitcast(fx.Float32), arith.bitcast(T.f16, h))\n",
            unsafe=True,
            count=2,
            message="`bits` is read as the fx.Int32 a bitcast to fx.Float32 takes",
        ),
        # fx.Int64(v) zero-extends unsigned values and i1, and its op follows v's type.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "def f(u: fx.Uint32, v):\n    fx.printf(arith.extsi(T.i64, u), arith.extsi(T.i64, v))\n",
            expected=None,
            count=2,
            message="no fix: ",
        ),
        # Unsigned casts are kept; a call holding comments is not rewritten.
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\nfrom flydsl.expr.typing import T\n"
            "def f(v):\n    fx.printf(arith.extui(T.i64, v))\n",
            expected=None,
            message="no fix: the fx integer types' casts are signed",
        ),
        Invalid(
            "import flydsl.expr as fx\nfrom flydsl.expr import arith\n"
            "def f(a: fx.Int32, b: fx.Int32):\n    fx.printf(arith.maxsi(a,  # row\n        b))\n",
            expected=None,
            message="no fix: the call holds comments",
        ),
        # Through fx.arith and its raw `arith` attribute; an op object without .result.
        Invalid(
            "import flydsl.expr as fx\ndef f(a, b):\n    return fx.arith.arith.addi(a, b) + fx.arith.muli(a, b)\n",
            expected="def f(a, b):\n    return a + b + a * b\n",
            unsafe=True,
            count=2,
        ),
        Invalid(
            "from flydsl.expr import arith\nop = arith.AddIOp(a, b)\n",
            expected=None,
            message="no fix: the op object itself is used",
        ),
        # A module passed in as a parameter, resolved from the call sites.
        Invalid(
            "from flydsl.expr import arith\nimport flydsl.expr as fx\n"
            "def helper(arith, a, b):\n    return arith.maxsi(a, b)\n"
            "def kernel(x, y):\n    fx.printf(helper(arith, x, y))\n",
            expected="from flydsl.expr import arith\nimport flydsl.expr as fx\n"
            "def helper(arith, a, b):\n    return fx.max(a, b)\n"
            "def kernel(x, y):\n    fx.printf(helper(arith, x, y))\n",
            unsafe=True,
        ),
        # A value bound in one `const_expr` branch only, read by a raw builder inside a
        # dynamic `if` (FlyDSL's qk_norm_rope_quant.py, e8m0 scales): `hi.ir_value()` would
        # make the rewriter carry `hi` through the `if`, unbound (None) when `wide` is off,
        # and the trace fails; `fx.as_ir_value(hi)` is a function call it does not carry.
        Invalid(
            "import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith, const_expr\n"
            "from flydsl.expr.typing import T\nfrom flydsl._mlir.dialects import scf\n"
            "@flyc.kernel\ndef k(n: fx.Int32, wide):\n    if const_expr(wide):\n"
            "        hi = arith.constant(8, type=T.i32)\n    if n > 0:\n        if const_expr(wide):\n"
            "            scf.for_(0, hi, 1)\n",
            expected="import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import const_expr\n"
            "from flydsl._mlir.dialects import scf\n"
            "@flyc.kernel\ndef k(n: fx.Int32, wide):\n    if const_expr(wide):\n"
            "        hi = fx.Int32(8)\n    if n > 0:\n        if const_expr(wide):\n"
            "            scf.for_(0, fx.as_ir_value(hi), 1)\n",
            unsafe=True,
            message="`fx.as_ir_value(...)` (a method call on `hi` would make FlyDSL's rewriter carry it "
            "through the `if` on line 10) at the raw boundaries: line 12",
        ),
        # ... unless a local `fx` hides the converter: no fix.
        Invalid(
            "import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith, const_expr\n"
            "from flydsl.expr.typing import T\nfrom flydsl._mlir.dialects import scf\n"
            "@flyc.kernel\ndef k(n: fx.Int32, wide, fx):\n    if const_expr(wide):\n"
            "        hi = arith.constant(8, type=T.i32)\n    if n > 0:\n        if const_expr(wide):\n"
            "            scf.for_(0, hi, 1)\n",
            expected=None,
            message="the trace would fail, and a local `fx` hides `fx.as_ir_value`",
        ),
        # ... where the method call is the fix itself (`c.select(...)`), no fix.
        Invalid(
            "import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith, const_expr\n"
            "@flyc.kernel\ndef k(a: fx.Int32, b: fx.Int32, x: fx.Float32, y: fx.Float32, masked):\n"
            "    if const_expr(masked):\n        c = a < b\n    if a > 0:\n        if const_expr(masked):\n"
            "            fx.printf(arith.select(c, x, y))\n",
            expected=None,
            message="`c` is bound on some paths only (unbound, None to the rewriter, on the others): "
            "the trace would fail",
        ),
        # ... and where the name is None before (a value is carried, None on some path).
        Invalid(
            "import flydsl.compiler as flyc\nimport flydsl.expr as fx\nfrom flydsl.expr import arith, const_expr\n"
            "@flyc.kernel\ndef k(a: fx.Int32, b: fx.Int32, x: fx.Float32, y: fx.Float32, masked):\n"
            "    c = None\n    if const_expr(masked):\n        c = a < b\n    if a > 0:\n"
            "        if const_expr(masked):\n            fx.printf(arith.select(c, x, y))\n",
            expected=None,
            message="`c` may be None there: the trace would fail",
        ),
    ]


class Handler:
    """One flagged call: picks the replacement, its safety and the message."""

    def __init__(self, rule: RawArith, node: ast.Call, replaced: ast.AST, op: str, raw: bool, spelled: str):
        self.rule = rule
        self.model = rule.model
        self.node = node
        self.replaced = replaced
        self.op = op
        self.raw = raw
        self.spelled = spelled
        self.args = node.args
        self.clean = not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args)

    # --- reporting ----------------------------------------------------------------
    def report(self, message: str, text: str | None = None, prec: int = S.ATOM, *, safe: bool = False,
               title: str | None = None, imports: tuple = (), info: bool = False, fx_result: bool = False,
               given=None) -> None:
        """``fx_result``: the replacement makes an fx value whatever its operands are.
        ``given``: the consumers' boundaries, worked out by the caller."""
        fix = None
        kept = [a for a in self.args if isinstance(a, ast.expr)]
        if given is not None:
            blocker, boundaries = given.blocker, given
        else:
            blocker, boundaries = self._raw_consumer(fx_result) if text is not None else (None, None)
        if blocker is not None:
            message = message.split(" (unsafe: ")[0]  # no fix at all: what would be unsafe is moot
            message += f" (no fix: {blocker})"
            text = None
        extra = imports
        if text is not None and boundaries is not None and boundaries.places:
            # The fx result drops to the raw value at each hard boundary, in the same fix.
            if boundaries.wrap_self and boundaries.unwrap:
                text, prec = f"{boundaries.unwrap}({text})", S.ATOM
            elif boundaries.wrap_self:
                text, prec = f"{text if prec >= S.ATOM else f'({text})'}.ir_value()", S.ATOM
            extra = (*imports, *boundaries.edits)
            if "(unsafe: " in message and message.endswith(")"):
                message = f"{message[:-1]}; {boundaries.note})"
            else:
                message += f" (unsafe: {boundaries.note})"
            safe = False
        if text is not None and S.comments_dropped(self.rule, self.replaced, kept):
            message = f"{message.split(' (unsafe: ')[0]}{S.COMMENTS_WHY}"
        elif text is not None:
            text = S.in_context(text, prec, self.replaced, S.parent_of(self.rule, self.replaced))
            fix = self.rule.replace(self.replaced, text, title or self.rule.fix_title, safe=safe, extra=extra)
        self.rule.report(
            self.node,
            f"`{self.spelled}` is a raw arith op: {message}",
            fix=fix,
            severity=Severity.INFORMATION if info else None,
        )

    def _raw_consumer(self, fx_result: bool):
        """(Why there is no fix, the raw boundaries of the fx result). The operator form may
        give an fx value where the call gave a raw one: an operand is an fx value, or may be
        one because the op unwraps fx operands itself (a raw builder's operands are raw, or
        it would not trace). Types and enums are not operands. Where the result is surely
        fx, each consumer that needs the raw value gets `.ir_value()` in the same fix."""
        operands = [a for a in self.args if isinstance(a, ast.expr) and self.model.resolve(a) is None]
        kinds = {value_kind(self.model.type_of(a)) for a in operands}
        raw_operands = "unknown" not in kinds or is_raw_builder(self.model.resolve(self.node.func) or "")
        if not fx_result and "fx" not in kinds and raw_operands:
            return None, None
        if fx_result or self._operator_gives_fx():
            boundaries = raw_boundaries(self.rule, self.replaced)
            return boundaries.blocker, boundaries
        uses = self.rule.value_uses(self.replaced, through_operators=True)
        blocker = kind_change_blocker(uses, "fx")
        if blocker is None:
            return None, None
        if blocker.sink is not Sink.RAW_BUILDER and blocker.sink is not Sink.METHOD:
            return f"the fx result would go to {blocker.describe()}, which cannot be followed", None
        return f"{blocker.describe()} needs the raw ir.Value, and fx operands give an fx value", None

    def _operator_gives_fx(self) -> bool:
        """The operator form surely gives an fx value: its left operand is fx (fx operators
        coerce the other one), or Python beside fx. An ArithValue on the left would take an
        fx operand and give a raw value."""
        start = 1 if self.op in ("cmpi", "cmpf") else 0
        if not (self.op in BINARY or self.op in ("cmpi", "cmpf", "negf")) or len(self.args) <= start:
            return False
        kinds = [value_kind(self.model.type_of(a)) for a in self.args[start:start + 2]]
        return kinds[0] == "fx" or (kinds == ["python", "fx"])

    def _carried(self, receiver: ast.expr):
        """The state FlyDSL's rewriter would carry for `receiver.method(...)` written here."""
        return method_call_state(self.model, self.rule.ctx.parents, self.node, receiver)

    def fx(self) -> tuple[str, tuple]:
        return fx_alias(self.model)

    def unclean(self, arity: int) -> str:
        """Why a call that is not the plain positional form gets no fix."""
        if not self.clean:
            return " (no fix: the call has keyword or starred arguments, which the typed form does not take)"
        return f" (no fix: the typed form takes {arity} operands, the call has {len(self.args)})"

    # --- dispatch -------------------------------------------------------------------
    def run(self) -> None:
        op = self.op
        if op in BINARY:
            return self.binary()
        if op in EXTREMA:
            return self.extremum()
        if op in UNSIGNED:
            return self.report(
                f"unsigned op: `{UNSIGNED[op]}` on fx.Int32 is signed (it emits the signed op); "
                "keep it, or use fx.Uint32 operands", info=True,
            )
        if op in UNSIGNED_CASTS:
            return self.report(
                f"use {CASTS[op]} (no fix: the fx integer types' casts are signed; keep it, or use "
                "fx.Uint* values)", info=True,
            )
        if op in CASTS:
            return self.cast()
        getattr(self, op if op in ("cmpi", "cmpf", "select", "constant", "index_cast", "negf", "divsi") else "float_cast")()

    def binary(self) -> None:
        symbol, kind = BINARY[self.op]
        if not self.clean or len(self.args) != 2:
            return self.report(f"use the `{symbol}` operator on fx values{self.unclean(2)}")
        left, right = self.args
        text = S.binary(self.rule, symbol, left, right)
        safe, why = self._operator_safety(kind, left, right, self.op)
        self.report(
            f"use `{symbol}` on fx values{why}",
            text,
            S.OPERATOR_PREC[symbol],
            safe=safe,
            title=f"Replace with the `{symbol}` operator",
        )

    def _operator_safety(self, kind: str, left: ast.expr, right: ast.expr, op: str) -> tuple[bool, str]:
        if kind == "float":
            return False, f" (unsafe: {FASTMATH_NOTE})"
        lt, rt = self.model.type_of(left), self.model.type_of(right)
        if not (lt.is_fx_scalar and lt.name == rt.name and S.is_int_type(lt.name)):
            return False, " (unsafe: the operands' fx types are not known to match)"
        if kind == "sint" and not S.is_signed_int_type(lt.name):
            return False, f" (unsafe: on {lt.name} the operator emits the unsigned op)"
        if self.raw or op not in ACCEPTS_FX_OPERANDS:
            return False, (
                f" (unsafe: the raw builder rejects {lt.name} operands, so this call fails when "
                "traced; the operator works, but there is no IR to preserve)"
            )
        if not S.result_uses_accept(self.rule, self.replaced, S.accepts_typed_scalar):
            return False, f" (unsafe: the result becomes {lt.name}, where a raw value was used)"
        return True, ""

    def extremum(self) -> None:
        function, unsigned = EXTREMA[self.op]
        note = " (unsigned: right only with fx.Uint* operands)" if unsigned else ""
        if function == "maxnumf":
            note = " (NaN-ignoring, unlike fx.max)"
        if function == "minnumf" and not at_least(self.rule.ctx.options.flydsl_version, MINNUMF_SINCE):
            return self.report(
                f"use `fx.minnumf(a, b)`{note} (no fix: `fx.minnumf` is new in FlyDSL {MINNUMF_SINCE}, "
                "and this project's release is older or not known)"
            )
        if self.op in ("maximumf", "minimumf") and table().available(f"fx.{function}", self.rule.ctx.options.flydsl_version) is False:
            # Releases before fx.max/min (0.3.1) have the float form under the op's own name.
            note = f" (FlyDSL {self.rule.ctx.options.flydsl_version} has no `fx.{function}`; `fx.{self.op}` is its typed form)"
            function = self.op
        if not self.clean or len(self.args) != 2:
            return self.report(f"use `fx.{function}(a, b)`{note}{self.unclean(2)}", info=unsigned)
        fx, imports = self.fx()
        a, b = (self.rule.text(x) for x in self.args)
        self.report(
            f"use `fx.{function}(a, b)`{note}",
            f"{fx}.{function}({a}, {b})",
            imports=imports,
            title=f"Replace with {fx}.{function}(...)",
            # fx.maximumf/minimumf give what their first operand is (a raw one stays raw).
            fx_result=function not in ("maximumf", "minimumf"),
            info=unsigned,
        )

    def _predicate(self, expr: ast.expr, codes: list[str]) -> str | None:
        if isinstance(expr, ast.Constant) and type(expr.value) is int and 0 <= expr.value < len(codes):
            return codes[expr.value]
        symbol = self.model.resolve(expr) or ""
        head, _, name = symbol.rpartition(".")
        if head.endswith(("CmpIPredicate", "CmpFPredicate")):
            return name
        return None

    def cmpi(self) -> None:
        if not self.clean or len(self.args) != 3:
            return self.report(f"use a comparison operator on fx values{self.unclean(3)}")
        predicate = self._predicate(self.args[0], CMPI_CODES)
        if predicate in CMPI_UNSIGNED:
            return self.report(
                f"unsigned compare `{predicate}`: `<`/`>` on fx.Int32 are signed; keep it, or "
                "compare fx.Uint32 values", info=True,
            )
        if predicate not in CMPI:
            return self.report(
                f"use a comparison operator on fx values (no fix: the predicate `{self.rule.text(self.args[0])}` "
                "cannot be read)"
            )
        symbol = CMPI[predicate]
        left, right = self.args[1], self.args[2]
        lt, rt = self.model.type_of(left), self.model.type_of(right)
        matching = lt.is_fx_scalar and lt.name == rt.name and S.is_int_type(lt.name)
        signed_ok = predicate in ("eq", "ne") or S.is_signed_int_type(lt.name)
        safe, why = False, ""
        if matching and signed_ok:
            safe, why = self._operator_safety("int", left, right, "cmpi")
            why = why.replace(f"becomes {lt.name}", "becomes fx.Boolean")
        else:
            why = " (unsafe: the operands' fx types are not known to match)"
        if not safe and "fx.Boolean" not in why and "rejects" not in why:
            why = why[:-1] + "; the result becomes fx.Boolean instead of a raw i1)"
        self.report(
            f"use `a {symbol} b`{why}",
            S.binary(self.rule, symbol, left, right),
            S.COMPARE,
            safe=safe,
            title=f"Replace with the `{symbol}` operator",
        )

    def cmpf(self) -> None:
        if not self.clean or len(self.args) != 3:
            return self.report(f"use a comparison operator on fx values where one exists{self.unclean(3)}")
        predicate = self._predicate(self.args[0], CMPF_CODES)
        if predicate is not None:
            predicate = predicate.upper() if predicate.upper() in CMPF else predicate
        if predicate not in CMPF:
            return self.report(
                f"predicate `{predicate or self.rule.text(self.args[0])}` has no operator: keep "
                "`arith.cmpf`", info=True,
            )
        symbol = CMPF[predicate]
        self.report(
            f"use `a {symbol} b` (unsafe: {FASTMATH_NOTE}, and the result becomes fx.Boolean)",
            S.binary(self.rule, symbol, self.args[1], self.args[2]),
            S.COMPARE,
            title=f"Replace with the `{symbol}` operator",
        )

    def select(self) -> None:
        if not self.clean or len(self.args) != 3:
            return self.report(f"use `cond.select(t, f)`{self.unclean(3)}")
        cond, true, false = self.args
        state = self._carried(cond)
        if state is not None and state.fails:
            return self.report(f"use `cond.select(t, f)` (no fix: {state.describe()})")
        unknown = next((v for v in (true, false) if not self._known_number(v)), None)
        if unknown is not None and not any(element_type(self.model, v) for v in (true, false)):
            # Boolean.select wraps its operands as fx values: a pointer, a buffer resource or
            # a vector is none (FlyDSL's fp4_gemm_4wave.py: "as_dsl_value cannot wrap ...
            # !llvm.ptr<8>"); a raw scalar whose MLIR type is read off its op is one. Both
            # operands of a select have one type: beside a typed scalar, the other is one too.
            return self.report(
                f"use `cond.select(t, f)` (no fix: `{self.rule.text(unknown)}` is not known to be a "
                "number, and `cond.select` wraps its operands as fx values)"
            )
        text = f"{S.receiver(self.rule, cond)}.select({self.rule.text(true)}, {self.rule.text(false)})"
        carried = f"; {state.describe()}" if state is not None else ""
        # The result is fx where the condition is (raw where it is raw): each consumer that
        # took the raw value, here or in code the file does not show, gets `fx.as_ir_value(v)`,
        # which takes either kind; none where an integer result meets `>>` or `/` here.
        fx, imports = self.fx()
        floats = any(S.is_float_type(element_type(self.model, v) or "") for v in (true, false))
        boundaries = raw_boundaries(
            self.rule, self.replaced, operators=() if floats else (">>", "/"), unwrap=f"{fx}.as_ir_value"
        )
        self.report(
            "use `cond.select(t, f)` (unsafe: a typed condition coerces and may fold its operands, "
            f"and the result may be an fx value{carried})",
            text,
            title="Replace with cond.select(t, f)",
            imports=imports if boundaries.places else (),
            given=boundaries,
        )

    def _known_number(self, value: ast.expr) -> bool:
        return value_kind(self.model.type_of(value)) != "unknown" or element_type(self.model, value) is not None

    def constant(self) -> None:
        value, dtype, why = self._constant_parts()
        if value is None or dtype is None:
            return self.report(f"use a typed constant (`fx.Int32(n)`, `fx.Float32(x)`){why}")
        fx, imports = self.fx()
        name = dtype.removeprefix("fx.")
        self.report(
            f"use `fx.{name}(...)` (unsafe: the typed constant is materialised where it is used)",
            f"{fx}.{name}({self.rule.text(value)})",
            imports=imports,
            title=f"Replace with {fx}.{name}(...)",
            fx_result=True,
        )

    def _constant_parts(self) -> tuple[ast.expr | None, str | None, str]:
        """(value, fx type, why there is no fix). FlyDSL's `constant(value, *, type=None,
        index=False)` takes a Python number (anything else raises when traced), so any value
        not known to be an IR value is one; the raw builder's value may be an attribute."""
        node = self.node
        if any(isinstance(a, ast.Starred) for a in node.args):
            return None, None, self.unclean(1)
        if self.raw:
            if len(node.args) != 2 or node.keywords:
                return None, None, " (no fix: the raw builder is called with other than `(type, value)`)"
            type_expr, value = node.args
        else:
            keywords = {k.arg: k.value for k in node.keywords}
            if len(node.args) != 1 or set(keywords) - {"type", "index"}:
                return None, None, self.unclean(1)
            index = keywords.get("index")
            if index is not None and not (isinstance(index, ast.Constant) and index.value is False):
                return None, None, f" (no fix: `index={self.rule.text(index)}` is decided when traced)"
            value, type_expr = node.args[0], keywords.get("type")
        kind = value_kind(self.model.type_of(value))
        if kind in ("raw", "fx") or (kind == "unknown" and self.raw):
            what = "an MLIR attribute" if self.raw else "an IR value"
            return None, None, f" (no fix: `{self.rule.text(value)}` may be {what}, not a Python number)"
        if type_expr is not None:
            dtype = S.scalar_dtype(self.model, type_expr)
            if dtype is None:
                return None, None, (
                    f" (no fix: `{self.rule.text(type_expr)}` is not a scalar type that can be read here)"
                )
            return value, dtype, ""
        dtype = {"int": "fx.Int32", "float": "fx.Float32", "bool": "fx.Boolean"}.get(self.model.type_of(value).name)
        if dtype is None:
            return None, None, (
                f" (no fix: the constant's type follows `{self.rule.text(value)}`'s Python type (int, float "
                "or bool), which is not known here)"
            )
        return value, dtype, ""

    def index_cast(self) -> None:
        if not self.clean or len(self.args) != 2:
            return self.report("use `fx.Int32(v)`/`fx.Int64(v)`")
        dtype = S.scalar_dtype(self.model, self.args[0])
        if dtype is None or not S.is_int_type(dtype):
            return self.report("use `fx.Int32(v)`/`fx.Int64(v)`/`fx.Index(v)`")
        fx, imports = self.fx()
        name = dtype.removeprefix("fx.")
        self.report(
            f"use `fx.{name}(v)` (unsafe: from a non-index value it is a different cast)",
            f"{fx}.{name}({self.rule.text(self.args[1])})",
            imports=imports,
            title=f"Replace with {fx}.{name}(v)",
            fx_result=True,
        )

    def float_cast(self) -> None:
        if not self.clean or len(self.args) != 2:
            return self.report(f"use `v.to(fx.T)`{self.unclean(2)}")
        type_expr, value = self.args
        dtype = S.scalar_dtype(self.model, type_expr)
        kind = self.model.type_of(value)
        if dtype is None or not S.is_float_type(dtype):
            vector = S.vector_dtype(self.model, type_expr)
            if vector is None or vector[0] is None:
                return self.report(
                    f"use `v.to(fx.T)` (no fix: `{self.rule.text(type_expr)}` is not a float or float vector "
                    "type that can be read here)"
                )
            if kind.name != "fx.Vector":
                return self.report(
                    f"use `v.to(fx.T)` (no fix: a vector cast, and `{self.rule.text(value)}` is not known to be "
                    "an fx.Vector)"
                )
            dtype = vector[0]
        fx, imports = self.fx()
        name = dtype.removeprefix("fx.")
        if kind.is_fx_scalar or kind.name == "fx.Vector":
            state = self._carried(value)
            if state is not None and state.fails:
                return self.report(f"use `v.to(fx.{name})` (no fix: {state.describe()})")
            text = f"{S.receiver(self.rule, value)}.to({fx}.{name})"
        else:
            text = f"{fx}.{name}({self.rule.text(value)})"
        self.report(
            f"use `v.to(fx.{name})` (unsafe: {FASTMATH_NOTE})",
            text,
            imports=imports,
            title=f"Replace with a cast to {fx}.{name}",
            fx_result=True,
        )

    def cast(self) -> None:
        """extsi/trunci/fptosi -> `fx.IntN(v)`, sitofp -> `.to(fx.F)`, bitcast -> `.bitcast(fx.T)`:
        the fx constructors emit the same op (signed: `int_to_int`/`int_to_fp`/`fp_to_int`)
        where the source's type says they would."""
        op, hint = self.op, f"use {CASTS[self.op]}"
        if not self.clean or len(self.args) != 2:
            return self.report(f"{hint}{self.unclean(2)}")
        type_expr, value = self.args
        target = S.scalar_dtype(self.model, type_expr)
        if target is None:
            return self.report(f"{hint} (no fix: `{self.rule.text(type_expr)}` is not a scalar type that can be read here)")
        fx, imports = self.fx()
        name, source = target.removeprefix("fx."), self._source_type(value)
        text, why, read = None, "", ""
        if op == "bitcast" and source is None and target in BITCAST_SOURCE:
            source = BITCAST_SOURCE[target]
            read = f"; `{self.rule.text(value)}` is read as the {source} a bitcast to {target} takes"
        if op in ("trunci", "fptosi", "extsi") and not S.is_signed_int_type(target):
            why = f" (no fix: `fx.{name}(v)` is not an integer truncation or extension)"
        elif op in ("trunci", "fptosi"):  # the source is a wider integer / a float, or it would not trace
            text = f"{fx}.{name}({self.rule.text(value)})"
        elif source is None:
            why = f" (no fix: `{self.rule.text(value)}`'s type is not known, and the fx form's op depends on it)"
        elif op == "extsi":
            if not S.is_signed_int_type(source):
                why = f" (no fix: `fx.{name}(v)` does not sign-extend a {source} value)"
            else:
                text = f"{fx}.{name}({self.rule.text(value)})"
        elif op == "sitofp":
            if not S.is_float_type(target) or not S.is_signed_int_type(source):
                why = f" (no fix: `.to(fx.{name})` converts a {source} value with another op)"
            else:
                text = f"{self._typed(value, source, fx)}.to({fx}.{name})"
        else:  # bitcast
            text = f"{self._typed(value, source, fx)}.bitcast({fx}.{name})"
        if text is None:
            return self.report(f"{hint}{why}")
        form = {"sitofp": f"v.to(fx.{name})", "bitcast": f"v.bitcast(fx.{name})"}.get(op, f"fx.{name}(v)")
        self.report(
            f"use `{form}` (unsafe: the result is an fx value, and a static operand folds{read})",
            text,
            imports=imports,
            title=f"Replace with a typed cast to {fx}.{name}",
            fx_result=True,
        )

    def _source_type(self, value: ast.expr) -> str | None:
        """The fx class of a cast's operand: its fx type, or its raw value's MLIR type."""
        kind = self.model.type_of(value)
        if kind.is_fx_scalar:
            return kind.name
        return element_type(self.model, value) if value_kind(kind) in ("raw", "unknown") else None

    def _typed(self, value: ast.expr, source: str, fx: str) -> str:
        """`value` as an fx scalar: itself, or wrapped in its own type (no op)."""
        if self.model.type_of(value).is_fx_scalar:
            return S.receiver(self.rule, value)
        return f"{fx}.{source.removeprefix('fx.')}({self.rule.text(value)})"

    def negf(self) -> None:
        if not self.clean or len(self.args) != 1:
            return self.report(f"use `-v`{self.unclean(1)}")
        text = f"-{S.operand(self.rule, self.args[0], S.UNARY, True)}"
        self.report(f"use `-v` (unsafe: {FASTMATH_NOTE})", text, S.UNARY, title="Replace with -v")

    def divsi(self) -> None:
        self.report(
            "truncating division has no typed operator (`//` on fx.Int32 floors): keep it, or "
            "use `//` where both operands are non-negative", info=True,
        )
