"""The offset algebra: byte offsets and sizes as integer polynomials over the sizes a
builder knows only when it runs, and what `SmemAllocator` bookkeeping (`ptr`, `_align`)
makes of them."""

import ast

from flydsl_ls.analysis.rules.fly203.model import BASE_ALIGNMENT, MAX_DEPTH, Buffer, Unproven


# --- static offsets: integer polynomials over unknown non-negative sizes ------------
class Poly:
    """sum(coef * product(symbols)); symbols stand for sizes known only at build time."""

    def __init__(self, terms=None):
        self.terms = {k: v for k, v in (terms or {}).items() if v}

    @staticmethod
    def const(value: int) -> "Poly":
        return Poly({(): value})

    @staticmethod
    def symbol(name: str) -> "Poly":
        return Poly({(name,): 1})

    @property
    def constant(self) -> int | None:
        if not self.terms:
            return 0
        if set(self.terms) == {()}:
            return self.terms[()]
        return None

    def __add__(self, other):
        terms = dict(self.terms)
        for key, value in other.terms.items():
            terms[key] = terms.get(key, 0) + value
        return Poly(terms)

    def __neg__(self):
        return Poly({k: -v for k, v in self.terms.items()})

    def __sub__(self, other):
        return self + (-other)

    def __mul__(self, other):
        terms: dict = {}
        for ka, va in self.terms.items():
            for kb, vb in other.terms.items():
                key = tuple(sorted(ka + kb))
                terms[key] = terms.get(key, 0) + va * vb
        return Poly(terms)

    def nonnegative(self) -> bool:
        return all(v >= 0 for v in self.terms.values())

    def divisible_by(self, n: int) -> bool:
        return all(v % n == 0 for v in self.terms.values())

    def divided(self, n: int) -> "Poly":
        return Poly({k: v // n for k, v in self.terms.items()})

    def alignment(self) -> int:
        """The largest power of two every value of this polynomial is a multiple of."""
        if not self.terms:
            return BASE_ALIGNMENT
        align = BASE_ALIGNMENT
        while align > 1 and not self.divisible_by(align):
            align //= 2
        return align

    def __eq__(self, other):
        return isinstance(other, Poly) and self.terms == other.terms

    def __hash__(self):
        return hash(tuple(sorted(self.terms.items())))



class OffsetAlgebra:
    """Static values of offset expressions. Mixed into the planner, which provides
    ``model``, ``_group``, ``_alloc_stmt``, ``_alloc_body``, ``_aligned`` (the
    ``align_up`` symbols: name -> (value, alignment)) and ``_maxima`` (``max`` symbols:
    name -> arguments)."""

    def _offset(self, expr: ast.expr, line: int) -> tuple[Poly, int | None]:
        explicit = None
        target = expr
        for _ in range(MAX_DEPTH):
            if isinstance(target, ast.Name):
                bindings = self.model.reaching_bindings(target)
                if len(bindings) == 1 and bindings[0].value is not None:
                    target = bindings[0].value
                    continue
            break
        if isinstance(target, ast.Call) and self._is_align_call(target):
            explicit = self._static_int(target.args[1], line)
        return self._value(expr, line, 0), explicit

    def _is_align_call(self, call: ast.Call) -> bool:
        func = call.func
        return (
            isinstance(func, ast.Attribute)
            and func.attr == "_align"
            and self._is_allocator(func.value, self._group)
            and len(call.args) == 2
            and not call.keywords
        )

    def _static_int(self, expr: ast.expr, line: int) -> int:
        value = self._value(expr, line, 0).constant
        if value is None:
            raise Unproven(f"line {line}: `{ast.unparse(expr)}` is not a constant")
        return value

    def _size(self, expr: ast.expr, line: int) -> Poly:
        return self._value(expr, line, 0)

    def _value(self, expr: ast.expr, line: int, depth: int) -> Poly:
        if depth > MAX_DEPTH:
            raise Unproven(f"line {line}: `{ast.unparse(expr)}` is too deep to evaluate")
        if isinstance(expr, ast.Constant) and type(expr.value) is int:
            return Poly.const(expr.value)
        if isinstance(expr, ast.Name):
            bindings = self.model.reaching_bindings(expr)
            if len(bindings) == 1 and bindings[0].kind in ("assign", "annassign") and bindings[0].value is not None:
                return self._value(bindings[0].value, line, depth + 1)
            if len(bindings) == 1 and bindings[0].kind == "param":
                function = bindings[0].scope.node
                if self._is_traced(function):
                    raise Unproven(
                        f"line {line}: `{expr.id}` is a parameter of the traced function "
                        f"`{function.name}`, a run-time value: the offset is computed at run time"
                    )
                return Poly.symbol(f"{expr.id}@{bindings[0].position}")
            if len(bindings) == 1 and bindings[0].kind == "import" and bindings[0].scope.kind == "module":
                # a constant of another module (e.g. a tile size): fixed when the builder runs
                return Poly.symbol(f"{expr.id}@{bindings[0].position}")
            if not bindings and self.model.binding_of(expr) is None:
                raise Unproven(f"line {line}: `{expr.id}` is not defined in this file")
            raise Unproven(f"line {line}: `{expr.id}` changes or is computed; the offset is not static")
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.attr == "ptr" and self._is_allocator(expr.value, self._group):
            return self._ptr_at(expr, line, depth)
        if isinstance(expr, ast.BinOp):
            left = self._value(expr.left, line, depth + 1)
            right = self._value(expr.right, line, depth + 1)
            if isinstance(expr.op, ast.Add):
                return left + right
            if isinstance(expr.op, ast.Sub):
                return left - right
            if isinstance(expr.op, ast.Mult):
                return left * right
            if isinstance(expr.op, ast.FloorDiv) and right.constant:
                if left.divisible_by(right.constant):
                    return left.divided(right.constant)
                if left.constant is not None:
                    return Poly.const(left.constant // right.constant)
                if left.nonnegative() and right.constant > 0:
                    return Poly.symbol(f"floordiv@{expr.lineno}:{expr.col_offset}")
        if isinstance(expr, ast.Call) and not expr.keywords:
            if self._is_align_call(expr):
                value = self._value(expr.args[0], line, depth + 1)
                align = self._static_int(expr.args[1], line)
                if align <= 0:
                    raise Unproven(f"line {line}: alignment {align}")
                if value.constant is not None:
                    return Poly.const(-(-value.constant // align) * align)
                if value.divisible_by(align):
                    return value
                # align_up(value, A) = A * t with A * t >= value: a fresh symbol t.
                name = f"align@{expr.lineno}:{expr.col_offset}"
                self._aligned[name] = (value, align)
                return Poly({(name,): align})
            if isinstance(expr.func, ast.Name) and self.model.binding_of(expr.func) is None:
                args = [self._value(a, line, depth + 1) for a in expr.args]
                if expr.func.id == "int" and len(args) == 1:
                    return args[0]
                consts = [a.constant for a in args]
                if expr.func.id in ("max", "min") and args and None not in consts:
                    return Poly.const(max(consts) if expr.func.id == "max" else min(consts))
                if expr.func.id == "max" and len(args) > 1:
                    # max(a, b) = m with m >= a and m >= b: a fresh symbol (a region two
                    # phases share is as large as the larger of them).
                    name = f"max@{expr.lineno}:{expr.col_offset}"
                    self._maxima[name] = args
                    return Poly.symbol(name)
        raise Unproven(f"line {line}: `{ast.unparse(expr)}` is computed; the offset is not static")

    def _ptr_at(self, read: ast.Attribute, line: int, depth: int) -> Poly:
        """The allocator's bump pointer as seen by ``read``: statements of the allocator's
        block before it (all of them, when read from a nested function)."""
        stmt = self._statement(read)
        body = self._alloc_body
        position = stmt.lineno if stmt is not None and self._body_of(stmt) is body else None
        value = Poly.const(0)
        alloc_index = next(i for i, s in enumerate(body) if s is self._alloc_stmt)
        for current in body[alloc_index + 1 :]:
            if position is not None and current.lineno >= position:
                break
            for node in ast.walk(current):
                if isinstance(node, ast.Attribute) and node.attr == "ptr" and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) and self._is_allocator(node.value, self._group):
                    if node is getattr(current, "target", None) or (isinstance(current, ast.Assign) and node in current.targets):
                        break
                    raise Unproven(f"`{node.value.id}.ptr` changes inside control flow (line {node.lineno})")
            else:
                continue
            if isinstance(current, ast.AugAssign) and isinstance(current.op, ast.Add):
                value = value + self._value(current.value, line, depth + 1)
            elif isinstance(current, ast.Assign):
                value = self._value(current.value, line, depth + 1)
            else:
                raise Unproven(f"line {current.lineno}: the allocator's pointer changes in a way that cannot be followed")
        return value

    def _nonnegative(self, poly: Poly, depth: int = 0) -> bool:
        """Provably >= 0, with every size symbol >= 0 and ``A * t >= value`` for each
        ``align_up(value, A)`` symbol ``t`` and ``m >= a`` for each ``max(a, ...)`` symbol ``m``
        (lower bounds, used where the symbol is added)."""
        if poly.nonnegative():
            return True
        if depth > MAX_DEPTH:
            return False
        for key, coef in poly.terms.items():
            if len(key) != 1 or coef <= 0:
                continue
            rest = Poly({k: v for k, v in poly.terms.items() if k != key})
            if key[0] in self._aligned:
                value, align = self._aligned[key[0]]
                if coef % align == 0:
                    return self._nonnegative(rest + value * Poly.const(coef // align), depth + 1)
            if key[0] in self._maxima:
                return any(self._nonnegative(rest + arg * Poly.const(coef), depth + 1) for arg in self._maxima[key[0]])
        return False

    def _order(self, buffers: list[Buffer]) -> list[list[tuple[Buffer, int | None]]]:
        def before(a: Buffer, b: Buffer) -> bool:
            diff = b.offset - a.offset
            if self._nonnegative(diff):
                return True
            if self._nonnegative(-diff):
                return False
            raise Unproven(f"the offsets of `{a.name}` and `{b.name}` cannot be ordered statically")

        ordered: list[Buffer] = []
        for buffer in buffers:
            index = len(ordered)
            while index > 0 and not before(ordered[index - 1], buffer):
                index -= 1
            ordered.insert(index, buffer)
        # Slots: buffers at one offset share it (a region reused by another phase, viewed
        # with another type): they become the members of an `fx.union`.
        slots: list[list[tuple[Buffer, int | None]]] = []
        ends: list[Poly] = []  # the end of every buffer placed so far
        for buffer in ordered:
            size = Poly.const(buffer.elem_bytes)
            for element in buffer.shape:
                size = size * self._size(element, element.lineno if hasattr(element, "lineno") else 0)
            shared = slots and slots[-1][0][0].offset == buffer.offset
            before_it = ends[: len(ends) - len(slots[-1])] if shared else ends
            for end, prev in zip(before_it, [b for slot in slots for b, _ in slot]):
                if not self._nonnegative(buffer.offset - end):
                    raise Unproven(
                        f"`{prev.name}` and `{buffer.name}` overlap in LDS (line {buffer.calls[0].lineno}): "
                        "only buffers that start at the same offset can share a region (`fx.union`)"
                    )
            align = buffer.explicit_align
            gap = buffer.offset - (before_it[-1] if before_it else Poly.const(0))
            if align is None and gap.terms:
                align = min(buffer.offset.alignment(), BASE_ALIGNMENT)
            if align is not None and align <= buffer.elem_bytes:
                align = None
            if shared:
                slots[-1].append((buffer, align))
            else:
                slots.append([(buffer, align)])
            ends.append(buffer.offset + size)
        return slots
