"""Values for a kernel builder's parameters, chosen from its source alone (never imported).

A value comes from, in order: the parameter's default, then candidates for its name and
annotation (``M`` -> 256, ``dtype_str`` -> the dtype strings the body compares it with,
``tile_k`` -> 64...). A candidate is kept only if every check in the function that it
decides still passes: ``assert`` statements and ``if ...: raise`` conditions, evaluated on
the syntax tree with the module's literal constants and the function's straight-line
assignments (``BLOCK = tile_m * 2``). Anything the evaluator cannot read is ignored.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Iterator
from dataclasses import dataclass

UNKNOWN = object()  # what the evaluator returns for anything it cannot read


class _Default:
    """The value of a parameter whose default is left to the function (it cannot be read)."""

    def __repr__(self) -> str:
        return "DEFAULT"


DEFAULT = _Default()
MAX_EVALUATIONS = 20_000  # bounds the search on a builder with many checks

_BINOPS = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    ast.LShift: operator.lshift, ast.RShift: operator.rshift, ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}
_COMPARES = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b, ast.Is: operator.is_, ast.IsNot: operator.is_not,
}
_CALLS = {"min": min, "max": max, "abs": abs, "int": int, "len": len, "bool": bool, "str": str}

# Preferred dtype strings, most common first: the first one the body accepts is taken.
DTYPE_PREFERENCE = ("bf16", "f16", "fp16", "f32", "fp32", "fp8", "int8", "i8", "fp4", "mxfp4", "float16", "bfloat16")
DTYPE_NAME = re.compile(r"(^|_)(dtype|type)(_str)?$|^dtype|_dtype|dtype_", re.I)


def evaluate(node: ast.AST, env: dict) -> object:
    """The value of a simple expression over ``env``, or UNKNOWN."""
    try:
        return _eval(node, env)
    except Exception:  # noqa: BLE001 - a division by zero, a type error: not readable
        return UNKNOWN


def _eval(node: ast.AST, env: dict) -> object:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        return env.get(node.id, UNKNOWN) if node.id not in ("True", "False", "None") else eval(node.id)  # noqa: S307
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [_eval(e, env) for e in node.elts]
        if any(i is UNKNOWN for i in items):
            return UNKNOWN
        return tuple(items) if not isinstance(node, ast.Set) else set(items)
    if isinstance(node, ast.Dict):  # the keys matter (``x in TABLE``); values may be unknown
        keys = [_eval(k, env) if k is not None else UNKNOWN for k in node.keys]
        if any(k is UNKNOWN for k in keys):
            return UNKNOWN
        return {k: _eval(v, env) for k, v in zip(keys, node.values)}
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _eval(node.left, env), _eval(node.right, env)
        if left is UNKNOWN or right is UNKNOWN:
            return UNKNOWN
        return _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp):
        value = _eval(node.operand, env)
        if value is UNKNOWN:
            return UNKNOWN
        if isinstance(node.op, ast.Not):
            return not value
        if isinstance(node.op, ast.USub):
            return -value
        if isinstance(node.op, ast.UAdd):
            return +value
        return ~value
    if isinstance(node, ast.BoolOp):
        values = [_eval(v, env) for v in node.values]
        if isinstance(node.op, ast.And):
            if any(v is not UNKNOWN and not v for v in values):
                return False
            return UNKNOWN if any(v is UNKNOWN for v in values) else values[-1]
        if any(v is not UNKNOWN and v for v in values):
            return next(v for v in values if v is not UNKNOWN and v)
        return UNKNOWN if any(v is UNKNOWN for v in values) else values[-1]
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env)
        for op, comparator in zip(node.ops, node.comparators):
            right = _eval(comparator, env)
            if left is UNKNOWN or right is UNKNOWN or type(op) not in _COMPARES:
                return UNKNOWN
            if not _COMPARES[type(op)](left, right):
                return False
            left = right
        return True
    if isinstance(node, ast.IfExp):
        test = _eval(node.test, env)
        if test is UNKNOWN:
            return UNKNOWN
        return _eval(node.body if test else node.orelse, env)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CALLS and not node.keywords:
        args = [_eval(a, env) for a in node.args]
        if any(a is UNKNOWN for a in args):
            return UNKNOWN
        return _CALLS[node.func.id](*args)
    if isinstance(node, ast.Subscript):
        value, key = _eval(node.value, env), _eval(node.slice, env)
        if value is UNKNOWN or key is UNKNOWN:
            return UNKNOWN
        return value[key]
    return UNKNOWN


def module_constants(tree: ast.Module) -> dict:
    """``NAME = <literal expression>`` at module level, in order."""
    env: dict = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = evaluate(node.value, env)
            if value is UNKNOWN:
                continue
            for target in targets:
                if isinstance(target, ast.Name):
                    env[target.id] = value
    return env


@dataclass
class Check:
    """A condition the function needs: ``assert test`` (must hold) or ``if test: raise``."""

    test: ast.expr
    must_hold: bool
    names: frozenset[str]

    def fails(self, env: dict) -> bool:
        value = evaluate(self.test, env)
        if value is UNKNOWN:
            return False
        return bool(value) != self.must_hold


def _own_nodes(function: ast.FunctionDef, *, nested: bool) -> Iterator[ast.AST]:
    """The nodes of ``function``'s body; with ``nested``, those of nested functions too."""
    stack = list(reversed(function.body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)) and not nested:
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def checks(function: ast.FunctionDef) -> list[Check]:
    """The asserts and ``if ...: raise`` statements of ``function``'s body and of the decorated
    functions in it (``@flyc.kernel``/``@flyc.jit`` bodies run when the kernel is traced; a
    plain helper checks its own runtime arguments); not those under another ``if`` or loop,
    which hold only on a path the evaluator cannot tell."""
    found = []
    nested = [n for n in _own_nodes(function, nested=True) if isinstance(n, ast.FunctionDef) and n.decorator_list]
    for node in [function, *nested]:
        for statement in node.body:
            if isinstance(statement, ast.Assert):
                found.append(Check(statement.test, True, _names(statement.test)))
            elif isinstance(statement, ast.If) and statement.body and isinstance(statement.body[0], ast.Raise):
                found.append(Check(statement.test, False, _names(statement.test)))
    return found


def _names(node: ast.AST) -> frozenset[str]:
    return frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))


def local_assignments(function: ast.FunctionDef) -> list[tuple[str, ast.expr]]:
    """``name = expr`` statements at the top level of ``function``'s body, in order."""
    found = []
    for node in function.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found.append((node.targets[0].id, node.value))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            found.append((node.target.id, node.value))
    return found


def environment(constants: dict, values: dict, assignments: list[tuple[str, ast.expr]]) -> dict:
    """The module constants, the parameter values, then what the function computes from them."""
    env = {**constants, **{k: v for k, v in values.items() if v is not DEFAULT}}
    for name, expr in assignments:
        value = evaluate(expr, env)
        if value is UNKNOWN:
            env.pop(name, None)  # shadows a constant of the same name with something unknown
        else:
            env[name] = value
    return env


def compared_strings(function: ast.AST, name: str, constants: dict | None = None) -> list[str]:
    """String literals ``name`` is compared with or looked up against in ``function``:
    ``name == "bf16"``, ``name in ("f16", "bf16")``, ``{"f16": ...}[name]``, also through
    module constants (``name in _SCALE_DTYPES``, ``_ELEM[name]``)."""
    found: list[str] = []
    constants = constants or {}

    def add(node: ast.AST) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append(node.value)
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            for e in node.elts:
                add(e)
        elif isinstance(node, ast.Name) and isinstance(constants.get(node.id), (tuple, set, dict)):
            found.extend(s for s in constants[node.id] if isinstance(s, str))

    def is_name(node: ast.AST) -> bool:
        return isinstance(node, ast.Name) and node.id == name

    for node in ast.walk(function):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for i, operand in enumerate(operands):
                if is_name(operand):
                    for other in operands[:i] + operands[i + 1 :]:
                        add(other)
        elif isinstance(node, ast.Subscript) and is_name(node.slice):
            if isinstance(node.value, ast.Dict):
                for key in node.value.keys:
                    if key is not None:
                        add(key)
            else:
                add(node.value)
    return list(dict.fromkeys(found))


def preferred_strings(strings: list[str]) -> list[str]:
    """``strings`` with the common dtypes first."""
    rank = {s: i for i, s in enumerate(DTYPE_PREFERENCE)}
    return sorted(strings, key=lambda s: rank.get(s.lower(), len(rank)))


# Integer candidates by parameter name (lower-cased, without i32_/arg_ prefixes), first match wins.
_INT_CANDIDATES: tuple[tuple[re.Pattern, tuple[int, ...]], ...] = tuple(
    (re.compile(pattern), values)
    for pattern, values in (
        (r"lds", (65536, 163840)),
        # a convolution's filter extents, strides and paddings (``kt, kh, kw``, ``st``, ``pt``):
        # never the dims' sizes, whose product with the others an assert bounds, which left
        # ``kw = 0``, an empty reduction
        (r"^k[thw]$|^kernel_size(_[dthw])?$", (3, 1)),  # not `kd`: a key dim (aiter)
        (r"^s[dthw]$|^strides?(_[dthw])?$", (1, 2)),
        (r"^p[dthw]$|^pad(ding)?(_[dthw])?$", (1, 0)),
        (r"rank$|^pe$|offset$|^seed|_id$", (0, 1)),
        (r"world_size|npes|ngpus|num_ranks|^ws$", (2, 4, 8)),
        (r"topk|top_k|experts_per_token", (2, 4, 1, 8)),
        (r"expert|^ne$|^e$|n_routed", (8, 16, 4, 32, 64, 128)),
        (r"(kv_)?heads?_k|num_kv_heads|kv_heads|h_kv", (1, 2, 4, 8)),
        (r"head_?dim|^d$|head_size|^hd$|rope_dim|rotary_dim", (128, 64, 256)),
        (r"heads?$|^h$|num_heads|nhead|group_size", (8, 16, 4, 2, 32, 64, 1)),
        (r"wave|warp", (4, 2, 8, 1)),
        (r"stages|buffers|unroll|splitk|split_k|k_?batch|^wgm$|group_m|swizzle|cluster", (1, 2, 4, 0, 8)),
        (r"threads|block_threads|^tpb$", (256, 128, 512, 64, 1024)),
        (r"tile_?m|block_?m|^bm$|^tm$|m_tile|mblock|sort_block", (64, 32, 128, 16, 256)),
        (r"tile|block_?[nk]|^b[nk]$|^t[nk]$|[nk]_tile", (128, 64, 256, 32, 512, 16)),
        (r"block_size|page_size|kv_block|blk", (16, 32, 64, 128, 256, 1)),
        (r"^m$|tokens|^batch|^bs$|^b$|seq|^s$|rows|^m_|_m$|ntok|len", (256, 128, 64, 512, 32, 16, 1024)),
        (r"^[nk]$|dim|hidden|inter|^[nk]_|_[nk]$|cols|size|^c$|channels|^w$|^d_", (1024, 512, 2048, 256, 4096, 128, 64)),
        (r"eps|scale", (1, 0)),
    )
)
_GENERIC_INTS = (256, 128, 64, 512, 1024, 32, 16, 8, 4, 2, 1, 0, 2048)
_FLAG = re.compile(r"^(is|has|use|do|enable|with|fuse|fused|apply|need|store|return)_|_is_|_(enabled|flag)$|^(causal|persist|transpose)")


def int_candidates(name: str) -> tuple[int, ...]:
    key = re.sub(r"^(i32|i64|arg|n|num|max|min)_", "", name.lower()) or name.lower()
    for pattern, values in _INT_CANDIDATES:
        if pattern.search(key) or pattern.search(name.lower()):
            return values + tuple(v for v in _GENERIC_INTS if v not in values)
    return _GENERIC_INTS


def annotation_kind(annotation: ast.expr | None) -> str:
    """``int``, ``float``, ``bool``, ``str`` or ``""`` from a builder parameter's annotation."""
    if annotation is None:
        return ""
    text = ast.unparse(annotation)
    for kind in ("bool", "int", "float", "str"):
        if re.search(rf"\b{kind}\b", text):
            return kind
    return ""


@dataclass
class Param:
    name: str
    kind: str  # int | float | bool | str | "" (unknown)
    default: object  # a value, or UNKNOWN when there is none or it cannot be read
    has_default: bool
    keyword_only: bool
    candidates: tuple


def parameters(function: ast.FunctionDef, constants: dict) -> list[Param]:
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = [(a, d, False) for a, d in zip(positional, defaults)]
    pairs += [(a, d, True) for a, d in zip(args.kwonlyargs, args.kw_defaults)]
    params = []
    for arg, default_node, keyword_only in pairs:
        if arg.arg in ("self", "cls"):
            continue
        has_default = default_node is not None
        default = evaluate(default_node, constants) if has_default else UNKNOWN
        kind = annotation_kind(arg.annotation)
        if not kind and has_default and default is not UNKNOWN and default is not None:
            kind = {bool: "bool", int: "int", float: "float", str: "str"}.get(type(default), "")
        candidates = _candidates(function, arg.arg, kind, constants)
        params.append(Param(arg.arg, kind, default, has_default, keyword_only, candidates))
    return params


def is_dtype_name(name: str) -> bool:
    return bool(DTYPE_NAME.search(name))


def _candidates(function: ast.FunctionDef, name: str, kind: str, constants: dict) -> tuple:
    strings = compared_strings(function, name, constants)
    if kind == "str" or is_dtype_name(name) or (strings and kind == ""):
        if is_dtype_name(name) and set(strings) <= {"f32", "fp32"}:  # FlyDSL spells them "bf16", "f16"
            strings = [*strings, "bf16", "f16"]
        return tuple(preferred_strings(list(dict.fromkeys(strings))) or ("",))
    if kind == "bool" or (kind == "" and _FLAG.search(name.lower())):
        return (False, True)
    if kind == "float":
        return (1.0, 0.5)
    if _FLAG.search(name.lower()):  # an int used as a flag: `out_is_f16: Constexpr[int]`
        return (0, 1)
    return int_candidates(name)


def violated(values: dict, constants: dict, function_checks: list[Check], assignments) -> bool:
    """Does a check of the function known under ``values`` fail?"""
    env = environment(constants, values, assignments)
    return any(check.fails(env) for check in function_checks)


_ARCH = re.compile(r"gfx(\d{2,4})", re.I)
_SHORT_ARCH = {"95": "gfx950", "94": "gfx942", "11": "gfx1100", "110": "gfx1100", "12": "gfx1201", "120": "gfx1201"}


def arch_in(text: str) -> str | None:
    """The first arch ``text`` names, family spellings made concrete (``gfx95x`` -> gfx950,
    ``gfx11*`` -> gfx1100, ``gfx120x`` -> gfx1201)."""
    match = _ARCH.search(text)
    if match is None:
        return None
    digits = match.group(1)
    return _SHORT_ARCH.get(digits, f"gfx{digits}")


def guarded_arch(function: ast.FunctionDef) -> str | None:
    """The arch an ``if ...: raise`` or ``assert`` of ``function`` requires, by its condition
    or message (``raise RuntimeError("requires CDNA4 (gfx95x)")``)."""
    for node in _own_nodes(function, nested=True):
        if isinstance(node, ast.If) and node.body and isinstance(node.body[0], ast.Raise):
            # `if not arch.startswith("gfx11"): raise` requires gfx11; `if arch.startswith("gfx11"):
            # raise ...("requires gfx12*")` rules gfx11 out: then only the message's "requires" counts
            message = ast.unparse(node.body[0])
            required = re.search(r"requir\w*\W+(.*)", message, re.I)
            found = (arch_in(ast.unparse(node.test)) if _negative(node.test) else None) or (
                arch_in(required.group(1)) if required else None
            )
        elif isinstance(node, ast.Assert):
            found = arch_in(ast.unparse(node))
        else:
            continue
        if found:
            return found
    return None


def _negative(test: ast.expr) -> bool:
    """``not ...``, ``x not in ...``, ``x != ...``: the raise happens off the named value."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return True
    return isinstance(test, ast.Compare) and all(isinstance(op, (ast.NotIn, ast.NotEq)) for op in test.ops)


def choose(
    params: list[Param], constants: dict, function_checks: list[Check], assignments, fixed: dict | None = None
) -> dict[str, object]:
    """A value per parameter that passes every check it decides (depth-first, defaults
    first). ``fixed`` values (from a test's call) are taken as they are."""
    fixed = dict(fixed or {})
    order = [p for p in params if p.name not in fixed]
    budget = [MAX_EVALUATIONS]

    def options(param: Param) -> list:
        if not param.has_default:
            return list(param.candidates)
        first = param.default if param.default is not UNKNOWN else DEFAULT
        return [first, *(c for c in param.candidates if c != first or type(c) is not type(first))]

    def ok(values: dict, bound: set[str]) -> bool:
        env = environment(constants, values, assignments)
        params_left = {p.name for p in params} - bound
        for check in function_checks:
            budget[0] -= 1
            # decide a check only once all the parameters it names are chosen
            if check.names & params_left:
                continue
            if check.fails(env):
                return False
        return True

    def search(i: int, values: dict) -> dict | None:
        if i == len(order):
            return values
        param = order[i]
        bound = set(fixed) | {p.name for p in order[: i + 1]}
        for value in options(param):
            if budget[0] <= 0:
                break
            values[param.name] = value
            if ok(values, bound):
                found = search(i + 1, values)
                if found is not None:
                    return found
        if budget[0] <= 0 or not options(param):
            values[param.name] = options(param)[0] if options(param) else None
            return search(i + 1, values)
        del values[param.name]
        return None

    start = dict(fixed)
    found = search(0, start)
    if found is None:  # nothing passes every check: the first candidates, as a starting point
        found = dict(fixed)
        for p in order:
            found[p.name] = options(p)[0] if options(p) else None
    return found
