"""Write a ``# flydsl: example`` for a kernel builder or ``@flyc.jit`` launcher, from the
file's syntax tree alone (the file is never imported).

A *launcher* is a module-level ``@flyc.jit`` function that launches a kernel
(``kernel(...).launch(...)``, itself or through plain functions it calls by name). A
*builder* is a module-level function that defines a launcher inside and hands it out: returns
it (alone, in a tuple, or in a dict), returns a plain function whose closure holds it, or
stores it in a module-level dict. ``targets(source)``
lists them; ``example_for(source, name, path)`` returns the example to insert after it (what
the server's code action and CodeLens insert; ``import torch`` only when the module does not
import it itself)::

    # flydsl: example
    def build_softmax_module_example(device):
        import torch

        launch = build_softmax_module(256, 1024, "bf16")
        A = torch.empty(256, 1024, dtype=torch.bfloat16, device=device)
        ...
        return launch, (A, C, 256)

The builder's arguments come from a call of it in the repository's tests whose arguments
resolve to literals (``scaffold_tests``), else from ``scaffold_values.choose``; the launcher's arguments from
its signature: ``fx.Tensor`` -> a torch tensor on ``device`` (dtype from the dtype chosen for
the builder and the parameter's name; rank 2, or the one the kernel slices it with),
``fx.Pointer`` -> a pointer to one (the tensor itself when the kernel needs its memref:
``scaffold_uses``), ``Int32``/``int``
-> an int, ``Float32`` -> a float, ``Stream`` -> ``fx.Stream(None)``, ``Constexpr`` -> a value
chosen as for a builder parameter; parameters with defaults are left out.
"""

from __future__ import annotations

import ast
import functools
import keyword
import re
from dataclasses import dataclass, field
from pathlib import Path

from flydsl_ls.compile import scaffold_tests
from flydsl_ls.compile import scaffold_uses
from flydsl_ls.compile import scaffold_values as values
from flydsl_ls.compile.examples import find_examples
from flydsl_ls.compile.scaffold_values import UNKNOWN


@dataclass(frozen=True)
class Target:
    name: str
    kind: str  # "builder" | "launcher"
    line: int  # 1-based line of the ``def``
    first_line: int  # 1-based line of its first decorator (or the ``def``)
    has_example: bool = False  # a ``# flydsl: example`` of the file names it


@dataclass(frozen=True)
class Insertion:
    """Insert ``text`` at the start of 0-based ``line`` (``line == len(lines)``: at the end)."""

    line: int
    text: str
    example: str  # the new function's name
    arch: str | None = None  # the arch on its marker
    from_test: bool = False  # the builder's arguments come from a test's call


@dataclass
class _Launcher:
    node: ast.FunctionDef
    access: str = ""  # how the builder's result gives it: "", "[0]", '["launch"]'
    wrapper: str | None = None  # the builder returns this plain function, whose closure holds the launcher
    through: tuple[str, ...] = ()  # the functions between the wrapper and the launcher, closure by closure
    registry: tuple[str, ast.expr] | None = None  # the builder stores it in this module-level dict, at this key


_NOT_FLYDSL = {"triton", "tl", "numba", "torch", "jax"}  # their ``jit`` decorators are not FlyDSL's


def is_jit(decorator: ast.expr) -> bool:
    func = decorator.func if isinstance(decorator, ast.Call) else decorator
    if isinstance(func, ast.Attribute):
        return func.attr == "jit" and not (isinstance(func.value, ast.Name) and func.value.id in _NOT_FLYDSL)
    return isinstance(func, ast.Name) and func.id == "jit"


@dataclass
class Scope:
    """The plain functions a launcher can call by name (the module's, its builder's), and what
    is known of each function walked: whether it calls ``.launch`` and the names it calls
    (shared by the scopes of one module: each function is walked once)."""

    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    facts: dict[int, tuple[bool, frozenset[str]]] = field(default_factory=dict)

    def with_functions(self, more: dict[str, ast.FunctionDef]) -> Scope:
        return Scope({**self.functions, **more}, self.facts)

    def walk(self, function: ast.FunctionDef) -> tuple[bool, frozenset[str]]:
        known = self.facts.get(id(function))
        if known is None:
            calls = [n for n in ast.walk(function) if isinstance(n, ast.Call)]
            launches = any(isinstance(c.func, ast.Attribute) and c.func.attr == "launch" for c in calls)
            named = frozenset(c.func.id for c in calls if isinstance(c.func, ast.Name))
            known = self.facts[id(function)] = (launches, named)
        return known


def _launches(function: ast.FunctionDef, scope: Scope | None = None) -> bool:
    """``function`` calls ``.launch(...)``, itself or through plain functions of ``scope`` it
    calls by name (aiter's ``@flyc.jit`` launchers call a helper that launches)."""
    scope = scope or Scope()
    todo, seen = [function], set()
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        launches, named = scope.walk(current)
        if launches:
            return True
        todo += [scope.functions[name] for name in named if name in scope.functions]
    return False


def is_launcher(node: ast.AST, scope: Scope | None = None) -> bool:
    return (
        isinstance(node, ast.FunctionDef)
        and any(is_jit(d) for d in node.decorator_list)
        and _launches(node, scope)
    )


def module_scope(tree: ast.Module) -> Scope:
    """The module's plain functions, which its launchers may call to launch."""
    return Scope({n.name: n for n in tree.body if isinstance(n, ast.FunctionDef) and not n.decorator_list})


def _builder_scope(builder: ast.FunctionDef, scope: Scope) -> Scope:
    return scope.with_functions({
        n.name: n for n in values._own_nodes(builder, nested=False)
        if isinstance(n, ast.FunctionDef) and not n.decorator_list
    })


def launchers(tree: ast.Module) -> list[ast.FunctionDef]:
    """Every launcher of the module: at module level, or in a function (the builders' and
    those no builder hands out)."""
    scope = module_scope(tree)
    found = [n for n in tree.body if is_launcher(n, scope)]
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not any(is_jit(d) for d in node.decorator_list):
            found += _nested_launchers(node, scope)
    return sorted(found, key=lambda n: n.lineno)


def _nested_launchers(builder: ast.FunctionDef, scope: Scope | None = None) -> list[ast.FunctionDef]:
    jits = [
        n for n in ast.walk(builder)
        if n is not builder and isinstance(n, ast.FunctionDef) and any(is_jit(d) for d in n.decorator_list)
    ]
    if not jits:  # most functions of a kernel module: no scope to gather
        return []
    inner = _builder_scope(builder, scope or Scope())
    return [n for n in jits if _launches(n, inner)]


def own_returns(builder: ast.FunctionDef) -> list[ast.Return]:
    """The builder's own ``return`` statements (not those of nested functions)."""
    return [n for n in values._own_nodes(builder, nested=False) if isinstance(n, ast.Return) and n.value is not None]


def _aliases(builder: ast.FunctionDef) -> dict[str, str]:
    """``launch = launch_gemm`` in the builder's own body: name -> the name it stands for."""
    found = {}
    for node in values._own_nodes(builder, nested=False):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node.value.id
    return found


def _returned_launcher_name(ret: ast.Return, names: set[str], aliases: dict[str, str]) -> tuple[str, str] | None:
    """(launcher name, access) when ``ret`` hands out a launcher: alone, in a tuple or a dict."""

    def resolve(node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            name = aliases.get(node.id, node.id)
            return name if name in names else None
        return None

    value = ret.value
    name = resolve(value)
    if name:
        return name, ""
    if isinstance(value, ast.Tuple):
        for i, element in enumerate(value.elts):
            name = resolve(element)
            if name:
                return name, f"[{i}]"
    if isinstance(value, ast.Dict):
        for key, element in zip(value.keys, value.values):
            name = resolve(element)
            if name and isinstance(key, ast.Constant) and isinstance(key.value, str):
                return name, f"[{literal(key.value)}]"
    return None


_MARKER = re.compile(r"flydsl:\s*example", re.IGNORECASE)  # a cheap test before tokenizing


def targets(source: str) -> list[Target]:
    """The builders and launchers of ``source`` an example can be written for, in file order
    (the last few sources' answers are kept: the CodeLens asks again for the same text)."""
    return list(_targets(source))


@functools.lru_cache(maxsize=8)
def _targets(source: str) -> tuple[Target, ...]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return ()
    example_names = {e.name for e in find_examples(source)} if _MARKER.search(source) else set()
    named = {
        n.id if isinstance(n, ast.Name) else n.attr
        for f in tree.body
        if isinstance(f, ast.FunctionDef) and f.name in example_names
        for n in ast.walk(f)
        if isinstance(n, (ast.Name, ast.Attribute))
    }
    found = []
    scope = module_scope(tree)
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        if is_launcher(node, scope):
            kind = "launcher"
        elif not any(is_jit(d) for d in node.decorator_list) and _builder_launcher(node, scope):
            kind = "builder"
        else:
            continue
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        found.append(Target(node.name, kind, node.lineno, first, node.name in named))
    return tuple(found)


def _builder_launcher(builder: ast.FunctionDef, scope: Scope, env: dict | None = None) -> _Launcher | None:
    """The launcher ``builder`` hands out: of its ``return`` statements, the first one not
    inside an ``if`` known false under ``env``; of the launchers of that name, the last one
    defined before it on a path known to run. A builder that returns none of them but stores
    one in a module-level dict (``_launch_fns[key] = _launch``) hands out that one."""
    nested = sorted(_nested_launchers(builder, scope), key=lambda n: n.lineno)
    if not nested:
        return None
    names = {n.name for n in nested}
    wrappers = _wrappers(builder, names)
    returns = [r for r in own_returns(builder) if env is None or _reachable(builder, r, env)]
    for ret in sorted(returns, key=lambda r: r.lineno):
        returned = _returned_launcher_name(ret, names | set(wrappers), _aliases(builder))
        if returned is None:
            continue
        name, access = returned
        if name in wrappers:
            *through, inner = wrappers[name]
            launcher = next(n for n in reversed(nested) if n.name == inner and n.lineno < ret.lineno)
            return _Launcher(launcher, access, name, tuple(through))
        before = [n for n in nested if n.name == name and n.lineno < ret.lineno]
        if env is not None:
            before = [n for n in before if _reachable(builder, n, env)] or before
        chosen = before[-1] if before else next(n for n in nested if n.name == name)
        return _Launcher(chosen, access)
    stored = _stored(builder, names)
    if stored is not None:
        name, registry, key = stored
        chosen = [n for n in nested if n.name == name]
        return _Launcher(chosen[-1], registry=(registry, key))
    return None


def _stored(builder: ast.FunctionDef, launchers: set[str]) -> tuple[str, str, ast.expr] | None:
    """(launcher, dict, key) of ``DICT[key] = launcher`` in the builder's own body, DICT not
    bound in the builder (a module-level registry of built launchers)."""
    local = {
        t.id for n in values._own_nodes(builder, nested=False) if isinstance(n, ast.Assign)
        for t in n.targets if isinstance(t, ast.Name)
    } | {a.arg for a in ast.walk(builder.args) if isinstance(a, ast.arg)}
    for node in values._own_nodes(builder, nested=False):
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in launchers):
            continue
        for target in node.targets:
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id not in local:
                return node.value.id, target.value.id, target.slice
    return None


def _wrappers(builder: ast.FunctionDef, launchers: set[str]) -> dict[str, tuple[str, ...]]:
    """Plain functions defined in ``builder`` whose closure holds one of its launchers: they
    name it (call it, or hand it to ``_run_compiled``), or name another such function. Name ->
    the names to follow closure by closure, the launcher's last. Not those rebound
    (``_launch = wrap(_launch)``: the closure is another's)."""
    rebound = {
        t.id for n in values._own_nodes(builder, nested=False) if isinstance(n, ast.Assign)
        for t in n.targets if isinstance(t, ast.Name)
    }
    named = {
        node.name: list(dict.fromkeys(
            n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
        ))
        for node in values._own_nodes(builder, nested=False)
        if isinstance(node, ast.FunctionDef) and node.name not in launchers | rebound and not node.decorator_list
    }
    found: dict[str, tuple[str, ...]] = {}
    for _ in range(3):  # a dispatcher around a wrapper around the launcher: three deep at most
        for name, names in named.items():
            if name in found:
                continue
            direct = next((n for n in names if n in launchers), None)
            if direct:
                found[name] = (direct,)
                continue
            via = next((n for n in names if n in found and n != name), None)
            if via:
                found[name] = (via, *found[via])
    return found


def _reachable(builder: ast.FunctionDef, node: ast.AST, env: dict) -> bool:
    """False when an ``if`` around ``node`` in the builder is known to be false under ``env``."""
    path = _path_to(builder, node)
    for parent, child in zip(path, path[1:]):
        if isinstance(parent, ast.If):
            test = values.evaluate(parent.test, env)
            if test is UNKNOWN:
                continue
            if (child in parent.body) != bool(test):
                return False
    return True


def _path_to(root: ast.AST, target: ast.AST) -> list[ast.AST]:
    stack = [(root, [root])]
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        for child in ast.iter_child_nodes(node):
            stack.append((child, [*path, child]))
    return []


# --- the launcher's arguments --------------------------------------------------------------------
_TORCH_DTYPES = {
    "bf16": "bfloat16", "bfloat16": "bfloat16", "f16": "float16", "fp16": "float16", "float16": "float16",
    "half": "float16", "f32": "float32", "fp32": "float32", "float32": "float32", "float": "float32",
    "fp8": "int8", "int8": "int8", "i8": "int8", "fp4": "uint8", "mxfp4": "uint8", "int4": "int8",
    "u8": "uint8", "uint8": "uint8", "i32": "int32", "int32": "int32",
}
_FX_ELEMENT = {
    "bfloat16": "BFloat16", "float16": "Float16", "float32": "Float32", "int8": "Int8", "uint8": "Uint8",
    "int32": "Int32", "int64": "Int64",
}
_INDEX_NAME = re.compile(
    r"ids?$|_ids?_|idx|indic|indptr|_map$|map_|mask|lens?$|lengths|position|slot|table|count|num_valid|"
    r"cumsum|offset|tok_map|sorted_e|eids|ctr|flag|bar|sem|signal|seq_?[qk]v?$|cu_?seq",
    re.I,
)
_FLOAT32_NAME = re.compile(r"scale|rstd|mean|lse|weights?_out|sorted_w|topk_w|weights|sums|max_logits|logits|stat|partial|sink|slopes|descale|cos|sin|dweight|dgamma|dbias|\bws\b|workspace|debug", re.I)
_OUTPUT_NAME = re.compile(r"^(c|y|o|out|output|dst|result)($|_)|_out$|^out|output|^arg_c$|^d[xy]$", re.I)
_INPUT_NAME = re.compile(r"^(a|b|x|w|q|k|v|kv|input|src|arg_[abxwq].*|bt?|b_t|query|key|value|kc|vc)$|^arg_(a|b|x|w|q)|cache", re.I)
_SIZE_NAME = re.compile(r"^(i32_|i64_)?(m|m_in|tokens|num_tokens|batch|rows|n_rows|ntok|token_num|tokens_in|m_tokens|num_seqs|batch_size)$", re.I)


@dataclass
class _Dtypes:
    """The torch dtypes the chosen builder arguments imply: the main one, inputs', outputs'."""

    main: str = "float16"
    inputs: str | None = None
    outputs: str | None = None

    @classmethod
    def from_values(cls, chosen: dict) -> _Dtypes:
        found = cls()
        for name, value in chosen.items():
            if not isinstance(value, str) or value.lower() not in _TORCH_DTYPES or not values.is_dtype_name(name):
                continue
            torch_name = _TORCH_DTYPES[value.lower()]
            lowered = name.lower()
            if lowered.startswith(("out", "output")) or "_out" in lowered:
                found.outputs = found.outputs or torch_name
            elif lowered.startswith(("in_", "a_", "input", "x_", "q_", "query", "in")):
                found.inputs = found.inputs or torch_name
            elif lowered.startswith(("w_", "b_", "weight", "kv", "logits", "quant", "scale", "cache")):
                continue
            else:
                found.main = torch_name if found.main == "float16" or lowered in ("dtype", "dtype_str") else found.main
        if found.inputs and found.main == "float16" and not any(
            isinstance(v, str) and n.lower() in ("dtype", "dtype_str") for n, v in chosen.items()
        ):
            found.main = found.outputs or ("bfloat16" if found.inputs in ("int8", "uint8") else found.inputs)
        return found

    def of(self, name: str) -> str:
        if _INDEX_NAME.search(name):
            return "int32"
        if _FLOAT32_NAME.search(name):
            return "float32"
        if _OUTPUT_NAME.search(name):
            return self.outputs or self.main
        if _INPUT_NAME.search(name):
            return self.inputs or self.main
        return self.main


def _annotation_name(annotation: ast.expr | None) -> str:
    """``fx.Tensor`` -> ``Tensor``; ``fx.Constexpr[int]`` -> ``Constexpr``; none -> ``""``."""
    if annotation is None:
        return ""
    node = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.rsplit(".", 1)[-1].split("[")[0]
    return ""


@dataclass
class _Body:
    """The statements of the example being written, and what they need imported."""

    lines: list[str] = field(default_factory=list)
    needs_fx: bool = False
    needs_flyc: bool = False
    names: set[str] = field(default_factory=set)

    def fresh(self, name: str) -> str:
        base = name if name.isidentifier() and not keyword.iskeyword(name) else "arg"
        candidate, n = base, 2
        while candidate in self.names or candidate in ("device", "torch", "fx", "flyc", "launch"):
            candidate, n = f"{base}_{n}", n + 1
        self.names.add(candidate)
        return candidate


def _size(chosen: dict, *names: str, fallback: int) -> int:
    for name in names:
        for key, value in chosen.items():
            if key.lower() == name.lower() and isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value
    return fallback


def _shape(name: str, rows: int, cols: int, rank: int | None) -> str:
    """``rows, cols`` (1-D ``cols`` for vector-like names), or the rank the kernel slices it
    with: ``rows, 1, ..., cols``."""
    if rank is None:
        return f"{cols}" if _is_vector(name) else f"{rows}, {cols}"
    return ", ".join(str(d) for d in [rows, *[1] * (rank - 2), cols][-rank:])


def _launcher_arguments(
    launcher: ast.FunctionDef, chosen: dict, env: dict, body: _Body, uses: dict[str, scaffold_uses.Use] | None = None
) -> list[str]:
    args = launcher.args
    positional = [*args.posonlyargs, *args.args]
    required = positional[: len(positional) - len(args.defaults)]
    constexprs = {a.arg for a in required if _annotation_name(a.annotation) == "Constexpr"}
    constexpr_params = [p for p in values.parameters(launcher, env) if p.name in constexprs]
    constexpr_values = values.choose(
        constexpr_params, env, values.checks(launcher), values.local_assignments(launcher),
        fixed={k: v for k, v in chosen.items() if k in constexprs},
    )
    chosen = {**chosen, **constexpr_values}
    dtypes = _Dtypes.from_values(chosen)
    rows = _size(chosen, "M", "m", "tokens", "num_tokens", "batch", "max_tokens", fallback=256)
    cols = _size(chosen, "N", "n", "model_dim", "hidden_dim", "D_HIDDEN", "hidden", "head_dim", "K", fallback=1024)
    rendered = []
    for arg in required:
        kind = _annotation_name(arg.annotation)
        name = arg.arg
        if kind in ("Tensor", "Pointer") or (not kind and _looks_like_buffer(name)):
            use = (uses or {}).get(name, scaffold_uses.Use())
            dtype = dtypes.of(name)
            var = body.fresh(name)
            shape = _shape(name, rows, cols, use.rank)
            if kind == "Pointer" and use.memref:
                body.lines.append(
                    f"# {name}: fx.Pointer, but the kernel hands it to {use.memref}, which takes a memref: a tensor"
                )
            body.lines.append(f"{var} = torch.empty({shape}, dtype=torch.{dtype}, device=device)")
            if kind == "Pointer" and not use.memref:
                body.needs_fx = body.needs_flyc = True
                rendered.append(f"flyc.from_c_void_p(fx.{_FX_ELEMENT.get(dtype, 'Uint8')}, {var}.data_ptr())")
            else:
                rendered.append(var)
        elif kind == "Int64" and not _SCALAR_NAME.search(name):  # an address: a tensor's
            dtype = dtypes.of(name)
            var = body.fresh(name)
            body.lines.append(f"{var} = torch.empty({rows}, {cols}, dtype=torch.{dtype}, device=device)")
            rendered.append(f"{var}.data_ptr()")
        elif kind == "Stream":
            body.needs_fx = True
            rendered.append("fx.Stream(None)")
        elif kind in ("Float32", "Float64", "float", "Float16", "BFloat16"):
            rendered.append("1.0")
        elif kind in ("Boolean", "bool"):
            rendered.append("False")
        elif kind == "Constexpr":
            rendered.append(literal(constexpr_values.get(name)))
        elif kind in ("Int32", "Int64", "Index", "Uint32", "Int16", "int", "") or _SIZE_NAME.match(name):
            rendered.append(str(_int_argument(name, chosen, rows, cols)))
        else:
            raise LookupError(f"parameter `{name}: {ast.unparse(arg.annotation)}` of {launcher.name}: no value for it")
    return rendered


_SCALAR_NAME = re.compile(r"stride|size|num|len|dim|count|^[mnk]$|^i(32|64)_|^n_|grid|blocks|tiles|seed", re.I)


def _looks_like_buffer(name: str) -> bool:
    """An unannotated launcher parameter that takes a tensor (``Q``, ``output``), not a scalar."""
    if _SCALAR_NAME.search(name):
        return False
    return bool(re.match(r"^[A-Z]", name)) or bool(re.search(r"output|input|tensor|cache|^arg_", name, re.I))


def _is_vector(name: str) -> bool:
    return bool(re.search(r"gamma|beta|bias|weight$|^w$|rstd|mean|scale|sink|slope|^dweight|^dbias|^dgamma|cu_?seq|indptr|positions|mask|num_valid|lens?$|lengths|expert_ids|eids", name, re.I))


def _int_argument(name: str, chosen: dict, rows: int, cols: int) -> int:
    lowered = name.lower()
    stripped = re.sub(r"^(i32|i64)_", "", lowered)
    for key, value in chosen.items():  # the builder's own value for the same name
        if key.lower() in (lowered, stripped) and isinstance(value, int) and not isinstance(value, bool):
            return value
    if _SIZE_NAME.match(name):
        return rows
    if "stride" in lowered or stripped in ("n", "k", "lda", "ldb", "ldc"):
        return cols
    if "grid" in lowered or "blocks" in lowered or "tiles" in lowered:
        return 1
    return values.int_candidates(name)[0]


# --- the example -----------------------------------------------------------------------------------
def _module_aliases(tree: ast.Module) -> tuple[str | None, str | None]:
    """The names ``flydsl.expr`` and ``flydsl.compiler`` are imported as at module level."""
    fx = flyc = None
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "flydsl.expr":
                    fx = alias.asname or fx
                elif alias.name == "flydsl.compiler":
                    flyc = alias.asname or flyc
        elif isinstance(node, ast.ImportFrom) and node.module == "flydsl" and node.level == 0:
            for alias in node.names:
                if alias.name == "expr":
                    fx = alias.asname or "expr"
                elif alias.name == "compiler":
                    flyc = alias.asname or "compiler"
    return fx, flyc


def _imports_torch(tree: ast.Module) -> bool:
    """``import torch`` (unaliased) among the module's own top-level statements."""
    return any(
        isinstance(node, ast.Import) and any(a.name == "torch" and a.asname in (None, "torch") for a in node.names)
        for node in tree.body
    )


def literal(value: object) -> str:
    """Python source for ``value``, strings in double quotes (as the kernels write them)."""
    if isinstance(value, str) and value.isprintable() and '"' not in value and "\\" not in value:
        return f'"{value}"'
    if isinstance(value, tuple):
        return "(" + ", ".join(literal(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return repr(value)


def _call(function: str, params: list[values.Param], chosen: dict) -> str:
    """``function(...)``: required positional parameters positionally, the rest by keyword
    when the chosen value is not the default."""
    parts = []
    by_keyword = False
    for p in params:
        value = chosen.get(p.name, UNKNOWN)
        if value is UNKNOWN or value is values.DEFAULT:
            by_keyword = True
            continue
        if p.has_default and p.default is not UNKNOWN and value == p.default and type(value) is type(p.default):
            by_keyword = True  # left out: later ones must be named
            continue
        if p.keyword_only or by_keyword or p.has_default:
            parts.append(f"{p.name}={literal(value)}")
            by_keyword = True
        else:
            parts.append(literal(value))
    return f"{function}({', '.join(parts)})"


def _example_name(tree: ast.Module, base: str) -> str:
    taken = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    taken |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    name, n = f"{base.lstrip('_')}_example", 2
    while name in taken:
        name, n = f"{base.lstrip('_')}_example_{n}", n + 1
    return name


_RDNA = {"rdna3": "gfx1100", "rdna4": "gfx1201"}


def _arch(node: ast.FunctionDef, path: Path | None, tree: ast.Module) -> str | None:
    """The arch the kernel is written for: named by its file or function (``_gfx950``), by a
    check of the function (``if not arch.startswith("gfx11"): raise ...``), or by the module
    docstring, else its package's, when it names one arch only (``RDNA4 (gfx120x)``); else None."""
    for text in (node.name, path.stem if path else ""):
        found = values.arch_in(text)
        if found:
            return found
    found = values.guarded_arch(node)
    if found:
        return found
    docs = [ast.get_docstring(tree) or ""]
    if path is not None and (path.parent / "__init__.py").is_file():  # its package's docstring
        try:
            docs.append(ast.get_docstring(ast.parse((path.parent / "__init__.py").read_text(encoding="utf-8"))) or "")
        except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
            pass
    for doc in (d.lower() for d in docs):
        named = {values.arch_in(m.group(0)) for m in re.finditer(r"gfx\d+", doc)}
        named |= {arch for word, arch in _RDNA.items() if word in doc.replace(" ", "")}
        if len(named) == 1:
            return named.pop()
    return None


def example_for(source: str, name: str, path: str | Path | None = None) -> Insertion:
    """What "Add a compile example" inserts for ``name`` in ``source`` (the file at ``path``):
    the arguments of the first call of the builder in the repository's tests that resolves,
    else chosen from the signature (``scaffold``)."""
    path = Path(path) if path else None
    tree = ast.parse(source)
    node = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    if node is None:
        raise LookupError(f"no module-level function `{name}`")
    test_call, test_arch = None, None
    if path is not None and not is_launcher(node, module_scope(tree)):
        folders = scaffold_tests.tests_folders(path)
        constants = values.module_constants(tree)
        params = values.parameters(node, constants)
        checks, assignments = values.checks(node), values.local_assignments(node)
        defaults = {p.name: p.default for p in params if p.has_default and p.default is not UNKNOWN}
        calls = scaffold_tests.test_calls(folders, name, params) if folders else []
        # a call that fails the builder's own checks is another builder's configuration
        test_call = next(
            (c for c in calls if not values.violated({**defaults, **c.arguments}, constants, checks, assignments)), None
        )
        # the arch the tests require (they skip on others), even when their arguments are not taken
        test_arch = next((c.arch for c in ([test_call] if test_call else []) + calls if c.arch), None)
    arch = _arch(node, path, tree) or test_arch
    return scaffold(source, name, test_call.arguments if test_call else None, arch=arch, path=path)


def scaffold(
    source: str, name: str, test_arguments: dict | None = None, arch: str | None = None, path: Path | None = None
) -> Insertion:
    """The ``# flydsl: example`` to insert after the builder or launcher ``name``.

    ``test_arguments``: parameter -> value from a test's call of the builder (test_calls),
    taken as they are. Raises ``LookupError`` when ``name`` is not a builder or launcher, or
    one of its launcher's parameters has a type no value can be made for. ``path``: the
    file's, to read the modules of its repository it imports (``scaffold_uses``).
    """
    tree = ast.parse(source)
    node = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    if node is None:
        raise LookupError(f"no module-level function `{name}`")
    constants = values.module_constants(tree)
    scope = module_scope(tree)
    body = _Body(names={"device"})
    if is_launcher(node, scope):
        launcher = _Launcher(node)
        chosen: dict = {}
        env = constants
        call = None
    else:
        if _builder_launcher(node, scope) is None:
            raise LookupError(f"`{name}` neither is a @flyc.jit launcher nor returns one")
        params = values.parameters(node, constants)
        chosen = values.choose(params, constants, values.checks(node), values.local_assignments(node), test_arguments)
        env = values.environment(constants, chosen, values.local_assignments(node))
        launcher = _builder_launcher(node, scope, env)
        call = _call(name, params, chosen) + launcher.access
    if call is not None and launcher.registry:
        body.lines += _from_registry(name, call, launcher, env)
        jit_name = "launch"
    elif call is not None and launcher.wrapper:
        body.lines += _from_closure(name, call, launcher)
        jit_name = "launch"
    elif call is not None:
        body.lines.append(f"launch = {call}")
        jit_name = "launch"
    else:
        jit_name = name
    uses = scaffold_uses.uses(launcher.node, tree, None if launcher.node is node else node, path)
    arguments = _launcher_arguments(launcher.node, chosen, {**constants, **chosen}, body, uses)
    fx_alias, flyc_alias = _module_aliases(tree)
    # torch is imported in the example unless the module imports it unconditionally: a
    # kernel module stays importable without torch (FlyDSL's norm kernels import it in
    # functions, or in a try), so no module-level import is added.
    imports = [] if _imports_torch(tree) else ["import torch"]
    if body.needs_fx and fx_alias != "fx":
        imports.append("import flydsl.expr as fx")
    if body.needs_flyc and flyc_alias != "flyc":
        imports.append("import flydsl.compiler as flyc")
    example = _example_name(tree, name)
    args = ", ".join(arguments) + ("," if len(arguments) == 1 else "")
    lines = [
        "",
        "",
        f"# flydsl: example {arch}" if arch else "# flydsl: example",
        f"def {example}(device):",
        f'    """Written by flydsl-ls from the signature of `{name}`: check the shapes and dtypes."""',
        *(f"    {i}" for i in imports),
        *([""] if imports else []),
        *(f"    {line}" for line in body.lines),
        f"    return {jit_name}, ({args})",
    ]
    text = "\n".join(lines) + "\n"
    source_lines = source.splitlines(keepends=True)
    line = node.end_lineno or node.lineno
    if line >= len(source_lines) and source_lines and not source_lines[-1].endswith(("\n", "\r")):
        text = "\n" + text
    return Insertion(line, text, example, arch, bool(test_arguments))


def _from_closure(name: str, call: str, launcher: _Launcher) -> list[str]:
    """Take the launcher from the closure of the wrapper the builder returns (through the
    functions between them; one another path of the builder returns is passed over)."""
    jit = launcher.node.name
    if not launcher.through:
        return [
            f"wrapper = {call}",
            f"# {name} returns {launcher.wrapper}, a Python function around the @flyc.jit launcher"
            f" {jit}: take that from its closure",
            f'launch = wrapper.__closure__[wrapper.__code__.co_freevars.index("{jit}")].cell_contents',
        ]
    names = ", ".join(f'"{n}"' for n in (*launcher.through, jit))
    return [
        f"launch = {call}",
        f"# {name} returns {launcher.wrapper}, a Python function around the @flyc.jit launcher {jit}"
        f" (through {', '.join(launcher.through)}): take that from the closures",
        f"for name in ({names}):",
        "    if name in launch.__code__.co_freevars:",
        "        launch = launch.__closure__[launch.__code__.co_freevars.index(name)].cell_contents",
    ]


def _from_registry(name: str, call: str, launcher: _Launcher, env: dict) -> list[str]:
    """Call the builder, then take the launcher from the module-level dict it stores it in."""
    registry, key = launcher.registry
    value = values.evaluate(key, env)
    if value is UNKNOWN:  # the entry the call added: the last one
        taken = f"list({registry}.values())[-1]"
    else:
        taken = f"{registry}[{literal(value)}]"
    return [
        call,
        f"# {name} stores the @flyc.jit launcher {launcher.node.name} in {registry}",
        f"launch = {taken}",
    ]


def apply(source: str, insertion: Insertion) -> str:
    """``source`` with ``insertion`` made (what the editor does with the edit)."""
    lines = source.splitlines(keepends=True)
    return "".join(lines[: insertion.line]) + insertion.text + "".join(lines[insertion.line :])
