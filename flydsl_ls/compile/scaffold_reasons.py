"""Why a file gets no "Add compile example": what the CodeLens, ``flydsl-ls example add`` and
``flydsl-ls compile`` say instead, from the syntax tree alone.

``no_target(source)`` is None when ``scaffold.targets`` finds a builder or launcher; else the
line to show it on and the reason, which starts "no launcher found: ". ``kernel_like`` is
False for a file with no ``@flyc.jit`` function and no ``.launch(...)``: the editor says
nothing there.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

from flydsl_ls.compile import scaffold_values as values
from flydsl_ls.compile.scaffold import is_jit, launchers, own_returns, targets


@dataclass(frozen=True)
class NoTarget:
    line: int  # 1-based: the launcher, @flyc.jit function or launch the reason is about
    message: str
    kernel_like: bool = True


def _short(node: ast.AST, limit: int = 60) -> str:
    text = ast.unparse(node)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _top(node: ast.AST, tree: ast.Module) -> ast.AST:
    """The module-level statement ``node`` is in."""
    return next((n for n in tree.body if n.lineno <= node.lineno <= (n.end_lineno or n.lineno)), node)


def _not_handed_out(launcher: ast.FunctionDef, holder: ast.AST) -> str:
    where = f"`{launcher.name}` (line {launcher.lineno})"
    if isinstance(holder, ast.ClassDef):
        return f"the launcher {where} is in class `{holder.name}`: only module-level functions get an example"
    if not isinstance(holder, ast.FunctionDef):
        return f"the launcher {where} is not in a module-level function"
    returns = sorted(own_returns(holder), key=lambda r: r.lineno)
    if not returns:
        return (
            f"`{holder.name}` defines the launcher {where} but neither returns it nor stores it "
            "in a module-level dict"
        )
    own = list(values._own_nodes(holder, nested=False))
    functions = {n.name for n in own if isinstance(n, ast.FunctionDef)}
    rebound = [  # ``_launch = wrap(_launch)``: the returned function's closure is another's
        n for n in own
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
        and any(isinstance(t, ast.Name) and t.id in functions for t in n.targets)
    ]
    shown = ", ".join(f"`{_short(r.value)}` (line {r.lineno})" for r in returns[:2])
    message = (
        f"`{holder.name}` defines the launcher {where} but returns {shown}: neither the launcher "
        "nor a function whose closure holds it"
    )
    if rebound:
        message += f" (`{_short(rebound[0])}`, line {rebound[0].lineno}, rebinds the function around it)"
    return message


@functools.lru_cache(maxsize=8)  # the CodeLens asks again for the same text
def no_target(source: str) -> NoTarget | None:
    """Why ``source`` offers no builder or launcher to write an example for; None when it does
    (or does not parse: the linter reports that)."""
    if targets(source):  # cached: the lens asked for them first
        return None
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    found = launchers(tree)
    if found:
        launcher = found[0]
        return NoTarget(launcher.lineno, "no launcher found: " + _not_handed_out(launcher, _top(launcher, tree)))
    jits = [
        n for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(is_jit(d) for d in n.decorator_list)
    ]
    if jits:
        first = min(jits, key=lambda n: n.lineno)
        if len(jits) > 1:
            what = f"its {len(jits)} @flyc.jit functions (first: `{first.name}`, line {first.lineno}) launch"
            how = "in them or in a function they call"
        else:
            what, how = f"its @flyc.jit function `{first.name}` (line {first.lineno}) launches", "in it or in a function it calls"
        return NoTarget(
            first.lineno,
            f"no launcher found: {what} no kernel (no `.launch(...)` {how}): device-side helpers are "
            "compiled by the example of a file that launches them",
        )
    launches = [
        n for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "launch"
    ]
    if launches:
        call = min(launches, key=lambda n: n.lineno)
        holder = _top(call, tree)
        name = f" in `{holder.name}`" if isinstance(holder, (ast.FunctionDef, ast.ClassDef)) else ""
        return NoTarget(
            call.lineno,
            f"no launcher found: `.launch(...)` is called{name} (line {call.lineno}) from plain Python, "
            "not from a @flyc.jit function",
        )
    return NoTarget(1, "no launcher found: no @flyc.jit function in this file", kernel_like=False)
