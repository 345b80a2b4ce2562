"""What the FLY203 migration works with: the legacy symbols, fx element classes, and the
records of one allocator's buffers."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flydsl_ls.analysis.rules.fly203.offsets import Poly

ALLOCATOR = "shim.smem_allocator.SmemAllocator"
SMEM_PTR = "shim.smem_allocator.SmemPtr"
KERNEL_DECORATORS = {"flyc.kernel"}
# fx element classes an fx.Array can hold, with their size in bytes.
ELEMENT_BYTES = {
    "fx.Int8": 1, "fx.Uint8": 1, "fx.Int16": 2, "fx.Uint16": 2, "fx.Int32": 4, "fx.Uint32": 4,
    "fx.Int64": 8, "fx.Uint64": 8, "fx.Float16": 2, "fx.BFloat16": 2, "fx.Float32": 4,
    "fx.Float64": 8, "fx.Float8E4M3FN": 1, "fx.Float8E5M2": 1, "fx.Float8E4M3FNUZ": 1,
    "fx.Float8E4M3": 1, "fx.Float8E4M3B11FNUZ": 1, "fx.Float8E8M0FNU": 1,
}
RAW_MEMREF_LOAD = {"mlir.memref.load", "mlir.memref.LoadOp"}
RAW_MEMREF_STORE = {"mlir.memref.store", "mlir.memref.StoreOp"}
RAW_MEMREF_VIEW = {"mlir.memref.view", "mlir.memref.ViewOp"}
# with the shims' wrappers of the same ops (aiter's `vector.load_op`, `vector.store`)
RAW_VECTOR_LOAD = {"mlir.vector.load", "mlir.vector.LoadOp", "mlir.vector.load_op", "shim.vector.load_op"}
RAW_VECTOR_STORE = {"mlir.vector.store", "mlir.vector.StoreOp", "shim.vector.store"}
RAW_EXTRACT_POINTER = {"mlir.memref.extract_aligned_pointer_as_index", "mlir.memref.ExtractAlignedPointerAsIndexOp"}
BASE_ALIGNMENT = 1024  # SmemAllocator.finalize() aligns its global to 1024 bytes
MAX_DEPTH = 12
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)



class Unproven(Exception):
    """The pattern cannot be migrated mechanically; the message says why."""


class Spelled(ast.expr):
    """Text the migration writes where the struct wants an expression (a size it computes)."""

    _fields = ()

    def __init__(self, text: str):
        super().__init__()
        self.text = text



@dataclass
class Buffer:
    name: str  # field name
    offset: Poly
    dtype: str  # fx class
    shape: list[ast.expr]
    explicit_align: int | None
    calls: list[ast.Call] = field(default_factory=list)

    @property
    def elem_bytes(self) -> int:
        return ELEMENT_BYTES[self.dtype]


@dataclass
class Group:
    """One SmemAllocator and everything hanging off it."""

    binding: object
    call: ast.Call
    flagged: list[ast.Call] = field(default_factory=list)
    reason: str | None = None
    edits: tuple = ()
    elsewhere: tuple = ()  # FileEdits of other modules' helpers the fix migrates too
    # What the survey found (Planner.survey):
    deleted: list[ast.stmt] = field(default_factory=list)  # bookkeeping the migration deletes
    offset_names: dict[int, ast.stmt] = field(default_factory=dict)  # id(binding) -> its statement
    base_stmts: list[ast.stmt] = field(default_factory=list)  # `base = allocator.get_base()`
    kernel_uses: list[ast.AST] = field(default_factory=list)  # get_base() calls
    base_uses: list[ast.Call] = field(default_factory=list)  # get_base() handed to an address consumer
    ptr_calls: list[ast.Call] = field(default_factory=list)  # SmemPtr(...) on this allocator
    align_calls: list[ast.Call] = field(default_factory=list)  # `_align(x, a)` not on the bump pointer
    kernel: object = None
    # Kept in its old layout, as one byte array (region.py):
    region: bool = False
    region_ptrs: list[ast.Attribute] = field(default_factory=list)  # `allocator.ptr`, read or set
    region_aligns: list[ast.Call] = field(default_factory=list)  # `allocator._align(x, a)`
    region_views: list[ast.Call] = field(default_factory=list)  # `memref.view(t, base, off, sizes=[])`
    region_holders: dict = field(default_factory=dict)  # id(SmemPtr call) -> `p = SmemPtr(...)` statement

