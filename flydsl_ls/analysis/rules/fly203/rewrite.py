"""The text of the migration: the `@fx.struct`, the allocation, views and stores, and the
statements the migration deletes. Mixed into the planner, which provides ``model``,
``ctx`` and ``_parents``."""

import ast

from flydsl_ls.analysis.model.diagnostic import Edit
from flydsl_ls.analysis.model.statements import shares_lines
from flydsl_ls.analysis.model.text import Position, Range
from flydsl_ls.analysis.rules.fly203.model import Buffer, Spelled, Unproven


class Rewriter:
    _pure_aligns: list[ast.Call] = []  # `allocator._align(x, a)` calls rewritten as arithmetic

    def _field_view(self, buffer: Buffer, layout: str) -> str:
        return f"\0FIELD:{buffer.name}\0.view({layout})"

    def _view_text(self, shape: list[ast.expr], dtype: str) -> str:
        texts = [self._factor(e) for e in shape]
        if len(shape) == 1:
            return f"\0FX\0.make_layout({self._text(shape[0])}, 1)"
        strides = []
        for i in range(len(shape)):
            rest = texts[i + 1 :]
            strides.append(" * ".join(rest) if rest else "1")
        shape_t = ", ".join(self._text(e) for e in shape)
        return f"\0FX\0.make_layout(({shape_t}), ({', '.join(strides)}))"

    def _text(self, node: ast.expr) -> str:
        """The source of ``node``, with the `allocator._align(...)` calls in it as
        arithmetic (the allocator goes away: text copied into the struct or a view must not
        name it)."""
        if isinstance(node, Spelled):
            return node.text
        if isinstance(node, ast.Constant) and not hasattr(node, "lineno"):
            return repr(node.value)
        text = self.model.index.slice(self.model.index.node_range(node))
        inner = [c for c in self._pure_aligns if any(a is node for a in self._ancestors(c, inclusive=True))]
        for call in sorted(inner, key=lambda c: -sum(1 for _ in self._ancestors(c))):
            text = text.replace(self.model.index.slice(self.model.index.node_range(call)), self._align_text(call), 1)
        return text

    def _factor(self, node: ast.expr) -> str:
        text = self._text(node)
        atomic = isinstance(node, (ast.Name, ast.Constant, ast.Attribute, ast.Call, ast.Subscript))
        product = isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)
        return text if (atomic or product) and "\n" not in text else f"({text})"

    def _align_text(self, call: ast.Call) -> str:
        """`allocator._align(x, a)` as the arithmetic it is: x rounded up to a multiple of a."""
        value, align = (self._factor(a) for a in call.args)
        return f"({value} + {align} - 1) // {align} * {align}"

    def _store_text(self, value: ast.expr, view: str, coord: str, rank: int) -> str:
        # A call, not `view[i] = v`: FlyDSL's AST rewriter treats a subscript assignment
        # inside a runtime `if` as assigning the view's root name (`lds`), which breaks the
        # branch (measured on FlyDSL 0.5.0 with FlyDSL's own tests/kernels/test_quant.py).
        indices = coord if rank == 1 else f"({coord})"
        return f"\0FX\0.memref_store({self._text(value)}, {view}, {indices})"

    def _struct_edit(self, kernel, name: str, slots, fx: str, unions: dict[int, str]) -> Edit:
        """The `@fx.struct` (and an `@fx.union` per shared region) right before the kernel."""
        first = min([kernel.lineno, *(d.lineno for d in kernel.decorator_list)])
        indent = self._indent(first)
        blank = "\n\n" if not indent else "\n"
        if self._postponed_annotations():
            return self._inline_struct_edit(first, indent, blank, name, slots, fx, unions)
        classes = []
        fields = []
        for index, slot in enumerate(slots):
            if len(slot) == 1:
                fields.append(self._field_line(*slot[0], fx))
                continue
            region = unions[index]
            members = [f"{indent}    {self._field_line(b, a, fx)}" for b, a in slot]
            classes.append("\n".join([f"{indent}@{fx}.union", f"{indent}class {region}:", *members]))
            fields.append(f"{self._region_field(slot)}: {region}")
        lines = [f"{indent}@{fx}.struct", f"{indent}class {name}:", *(f"{indent}    {f}" for f in fields)]
        text = "".join(c + "\n" + blank for c in classes) + "\n".join(lines) + "\n" + blank
        start = Position(first - 1, 0)
        return Edit(Range(start, start), text)

    def _postponed_annotations(self) -> bool:
        """`from __future__ import annotations`: a class's field annotations stay strings,
        which `@fx.struct` cannot size (FlyDSL 0.3.1 and 0.5.0)."""
        return any(
            isinstance(s, ast.ImportFrom) and s.module == "__future__" and any(a.name == "annotations" for a in s.names)
            for s in self.model.tree.body
        )

    def _inline_struct_edit(self, first, indent, blank, name, slots, fx, unions) -> Edit:
        """The same struct in the subscript form (`fx.struct["field": type, ...]`), whose
        types are evaluated where it is written."""
        def entries(pairs, depth):
            pad = indent + "    " * depth
            quoted = (self._field_line(b, a, fx).replace(": ", '": ', 1) for b, a in pairs)
            return [f'{pad}"{line},' for line in quoted]

        lines = []
        fields = []
        for index, slot in enumerate(slots):
            if len(slot) == 1:
                fields.extend(entries(slot, 1))
                continue
            region = unions[index]
            lines.extend([f"{indent}{region} = {fx}.union[", *entries(slot, 1), f"{indent}]"])
            fields.append(f'{indent}    "{self._region_field(slot)}": {region},')
        lines.extend([f"{indent}{name} = {fx}.struct[", *fields, f"{indent}]"])
        start = Position(first - 1, 0)
        return Edit(Range(start, start), "\n".join(lines) + "\n" + blank)

    def _field_line(self, buffer: Buffer, align, fx: str) -> str:
        size = " * ".join(self._factor(e) for e in buffer.shape) if len(buffer.shape) > 1 else self._text(buffer.shape[0])
        dtype = buffer.dtype.replace("fx.", f"{fx}.", 1)
        extra = f", {align}" if align else ""
        return f"{buffer.name}: {fx}.Array[{dtype}, {size}{extra}]"

    @staticmethod
    def _region_field(slot) -> str:
        return "_".join(b.name for b, _ in slot)

    def _field_paths(self, slots, lds: str) -> dict[str, str]:
        """How each buffer is reached from the allocation. With a union in the struct the
        storage is navigated unpeeked (`lds.region.member.peek()`): a peeked struct
        cannot hold a union (FlyDSL 0.3.1 and 0.5.0: no `__peek_from_ptr__`)."""
        unpeeked = any(len(slot) > 1 for slot in slots)
        paths = {}
        for slot in slots:
            for buffer, _ in slot:
                if not unpeeked:
                    paths[buffer.name] = f"{lds}.{buffer.name}"
                elif len(slot) == 1:
                    paths[buffer.name] = f"{lds}.{buffer.name}.peek()"
                else:
                    paths[buffer.name] = f"{lds}.{self._region_field(slot)}.{buffer.name}.peek()"
        return paths

    def _indent(self, lineno: int) -> str:
        return self.model.index.indentation(lineno - 1)

    def _lds_edit(self, kernel, base_stmts, uses, lds, fx, struct, unpeeked):
        """(statement replaced or None, edit) placing the allocation at the kernel's top
        level, before the first statement that touches LDS."""
        firsts = []
        for node in uses:
            top = node
            while self._parents.get(id(top)) is not kernel:
                top = self._parents.get(id(top))
            firsts.append(top)
        anchor = min(firsts, key=lambda s: (s.lineno, s.col_offset))
        if isinstance(anchor, (ast.With, ast.AsyncWith)):
            # `with _if_then(if_op):` fills a region of an op an earlier statement built:
            # an allocation just before the `with` would not dominate its uses in there
            # (aiter's gfx1250 FMHA: "operand #0 does not dominate this use").
            body = kernel.body
            docstring = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str)
            anchor = body[1] if docstring and len(body) > 1 else body[0]
        text = f"{lds} = {fx}.SharedAllocator().allocate({struct}){'' if unpeeked else '.peek()'}"
        indent = self._indent(anchor.lineno)
        if anchor in base_stmts and self._line_alone(anchor):
            return anchor, Edit(self._line_range(anchor), f"{indent}{text}\n")
        if anchor in base_stmts:
            return anchor, Edit(self.ctx.range(anchor), text)
        if not self.model.index.line_text(anchor.lineno - 1)[: anchor.col_offset].strip() == "":
            raise Unproven(f"line {anchor.lineno}: the kernel's first LDS statement shares its line")
        start = Position(anchor.lineno - 1, 0)
        return None, Edit(Range(start, start), f"{indent}{text}\n")

    def _with_dead_contexts(self, deleted: list[ast.stmt]) -> list[ast.stmt]:
        """``deleted`` and what it leaves dead, to a fixed point: a `with` whose body all
        goes, an `x = ....get_current()` whose uses all go. Only those kinds are visited
        (from the model's lists, not a walk of the tree per round: on a 3,000-line builder
        the walks took most of a lint)."""
        gone = {id(s) for s in deleted}
        inside = lambda node: any(id(n) in gone for n in self._ancestors(node, inclusive=True))

        def delete(node: ast.stmt) -> None:
            deleted.append(node)
            gone.add(id(node))

        withs = self.model.nodes_of(ast.With)
        currents = [
            node
            for node in self.model.nodes_of(ast.Assign)
            if self._single_name(node)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Attribute)
            and node.value.func.attr == "get_current"
        ]
        changed = True
        while changed:
            changed = False
            for node in withs:
                if id(node) not in gone and all(inside(s) for s in node.body):
                    delete(node)
                    changed = True
            for node in currents:
                if id(node) in gone:
                    continue
                binding = self._binding_of_target(node.targets[0], node)
                uses = self.model.uses_of(binding) if binding else []
                if uses and all(inside(u) for u in uses):
                    delete(node)
                    changed = True
        return deleted

    def _deletions(self, deleted: list[ast.stmt], skip) -> list[Edit]:
        replaced = skip[0] if skip else None
        unique = list(dict.fromkeys(deleted))
        outermost = [s for s in unique if not self._inside_any(self._parents.get(id(s)), unique)]
        outermost_ids = {id(s) for s in outermost}
        holders = {id(self._parents.get(id(s))) for s in outermost}
        edits = []
        spans: list[list[int]] = []  # whole lines to delete: [first, last + 1), 0-based
        # the bodies holding them, in the order of a walk of the tree (the edits' order)
        for node in self.model.nodes_of(ast.AST):  # the tree first
            if id(node) not in holders:
                continue
            for body in self._bodies(node):
                gone = [s for s in body if id(s) in outermost_ids]
                if not gone:
                    continue
                empty = len(gone) == len(body) and not isinstance(node, ast.Module) and replaced not in body
                for index, stmt in enumerate(gone):
                    if stmt is replaced:
                        continue
                    alone = self._line_alone(stmt)
                    if empty and index == 0:
                        if alone:
                            edits.append(Edit(self._line_range(stmt), f"{self._indent(stmt.lineno)}pass\n"))
                        else:
                            edits.append(Edit(self.ctx.range(stmt), "pass"))
                    elif alone:
                        spans.append([stmt.lineno - 1, stmt.end_lineno])
                    else:
                        edits.append(Edit(self.ctx.range(stmt), "pass"))
        merged: list[list[int]] = []
        for span in sorted(spans):
            if merged and span[0] <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], span[1])
            else:
                merged.append(span)
        lines = self.model.index.lines
        blank = lambda i: 0 <= i < len(lines) and lines[i].strip() == ""
        for first, end in merged:
            if blank(first - 1) and (blank(end) or end >= len(lines) - 1):
                while blank(first - 1):
                    first -= 1
            elif first > 0 and lines[first - 1].rstrip().endswith(":") and blank(end):
                while blank(end) and end < len(lines) - 1:  # no blank first line in a body
                    end += 1
            if end < len(lines) - 1 or lines[-1] == "":
                edits.append(Edit(Range(Position(first, 0), Position(end, 0)), ""))
            else:
                last = end - 1
                edits.append(Edit(Range(Position(first, 0), Position(last, len(self.model.index.line_text(last)))), ""))
        return edits

    def _line_alone(self, stmt: ast.stmt) -> bool:
        return not shares_lines(self.model, stmt)

    def _line_range(self, stmt: ast.stmt) -> Range:
        start = Position(stmt.lineno - 1, 0)
        if stmt.end_lineno < len(self.model.index.lines):
            return Range(start, Position(stmt.end_lineno, 0))
        return Range(start, self.ctx.range(stmt).end)
