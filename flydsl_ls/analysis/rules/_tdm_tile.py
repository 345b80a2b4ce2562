"""The innermost row of a TDM tile, read off the global view a `make_tdm_atom` copies from:
`fx.make_view(ptr, fx.make_layout(shape, stride))`, optionally in `fx.Tensor(...)`, reached
through local variables and through helpers of the file that return such a view
(`def global_view(base, off, shape, stride): return fx.Tensor(fx.make_view(base + off, ...))`)."""

import ast
from dataclasses import dataclass

from flydsl_ls.analysis.model.semantic import own_returns

_DEPTH = 8
_ELEMENT_BYTES = {
    "fx.Int8": 1, "fx.Uint8": 1, "fx.Float8E4M3FN": 1, "fx.Float8E4M3FNUZ": 1, "fx.Float8E5M2": 1,
    "fx.Int16": 2, "fx.Uint16": 2, "fx.Float16": 2, "fx.BFloat16": 2,
    "fx.Int32": 4, "fx.Uint32": 4, "fx.Float32": 4,
    "fx.Int64": 8, "fx.Uint64": 8, "fx.Float64": 8,
}
_WIDEST = 8


@dataclass(frozen=True)
class Row:
    elements: int | None  # the innermost extent, when it is a Python int
    element_bytes: int | None  # the element size, when the view's pointer says it

    def under(self, limit: int) -> bool | None:
        """Whether the row spans under `limit` bytes: None when a literal extent may span
        either (its element type cannot be read). A runtime extent is a tile size, not a
        narrow row: False."""
        if self.elements is None:
            return False
        if self.element_bytes is not None:
            return self.elements * self.element_bytes < limit
        if self.elements * _WIDEST < limit:
            return True
        return False if self.elements >= limit else None


class _Reader:
    def __init__(self, model):
        self.model = model

    def row(self, tensor: ast.expr) -> Row | None:
        view = self._view(tensor, {}, _DEPTH)
        if view is None:
            return None
        (pointer, pointer_names), (shape, shape_names) = view
        inner = shape.elts[-1] if isinstance(shape, ast.Tuple) and shape.elts else None
        return Row(
            self._int(inner, shape_names, _DEPTH) if inner is not None else None,
            self._element_bytes(pointer, pointer_names, _DEPTH),
        )

    def _value(self, expr: ast.expr, names: dict, depth: int):
        """What a name stands for: a helper's argument, or its one reaching assignment."""
        while isinstance(expr, ast.Name) and depth > 0:
            depth -= 1
            if expr.id in names:
                expr, names = names[expr.id]
                continue
            bindings = self.model.reaching_bindings(expr)
            if len(bindings) != 1 or bindings[0].kind != "assign" or bindings[0].value is None:
                return expr, names
            expr, names = bindings[0].value, {}
        return expr, names

    def _view(self, expr: ast.expr, names: dict, depth: int):
        """(pointer, its names), (shape, its names) of the view `expr` builds, else None."""
        if depth <= 0:
            return None
        expr, names = self._value(expr, names, depth)
        if not isinstance(expr, ast.Call) or any(isinstance(a, ast.Starred) for a in expr.args):
            return None
        symbol = self.model.resolve(expr.func)
        if symbol == "fx.Tensor" and len(expr.args) == 1:
            return self._view(expr.args[0], names, depth - 1)
        if symbol == "fx.make_view" and len(expr.args) == 2:
            layout, layout_names = self._value(expr.args[1], names, depth)
            if (
                isinstance(layout, ast.Call)
                and self.model.resolve(layout.func) == "fx.make_layout"
                and layout.args
            ):
                shape, shape_names = self._value(layout.args[0], layout_names, depth)
                return (expr.args[0], names), (shape, shape_names)
            return None
        return self._helper(expr, names, depth)

    def _helper(self, call: ast.Call, names: dict, depth: int):
        """A function of this file whose every return builds a view: its view, with the
        parameters bound to this call's arguments."""
        if not isinstance(call.func, ast.Name) or call.keywords:
            return None
        binding = self.model.binding_of(call.func)
        function = binding.node if binding is not None and binding.kind == "def" else None
        if not isinstance(function, ast.FunctionDef) or function.decorator_list:
            return None
        params = [a.arg for a in function.args.args]
        if len(call.args) > len(params):
            return None
        inner = {p: (a, names) for p, a in zip(params, call.args)}
        returns = [r.value for r in own_returns(function)]
        if len(returns) != 1 or returns[0] is None:
            return None
        return self._view(returns[0], inner, depth - 1)

    def _int(self, expr: ast.expr, names: dict, depth: int) -> int | None:
        expr, names = self._value(expr, names, depth)
        if isinstance(expr, ast.Constant) and type(expr.value) is int:
            return expr.value
        return None

    def _element_bytes(self, pointer: ast.expr, names: dict, depth: int) -> int | None:
        for _ in range(depth):
            pointer, names = self._value(pointer, names, depth)
            if isinstance(pointer, ast.BinOp) and isinstance(pointer.op, ast.Add):
                pointer = pointer.left
                continue
            if not isinstance(pointer, ast.Call) or not pointer.args:
                return None
            symbol = self.model.resolve(pointer.func)
            if symbol == "fx.add_offset":
                pointer = pointer.args[0]
                continue
            if symbol == "fx.recast_iter":
                return _ELEMENT_BYTES.get(self.model.resolve(pointer.args[0]) or "")
            return None
        return None


def tile_row(model, tensor: ast.expr) -> Row | None:
    """The innermost row of the view `tensor` names, or None when it cannot be followed."""
    return _Reader(model).row(tensor)
