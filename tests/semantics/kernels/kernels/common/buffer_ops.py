"""A minimal stand-in for the legacy `kernels.common.buffer_ops` helper layer (written for
these tests; FlyDSL's wheel does not ship the real one). Only what the test kernels call."""

import flydsl.expr as fx


def create_buffer_resource(tensor, max_size=True, *, num_records_bytes=None):
    """The raw buffer resource (!llvm.ptr<8>) of ``tensor``; ``num_records_bytes`` wins over
    ``max_size``, as in the real shim."""
    if num_records_bytes is not None:
        bounded = fx.rocdl.make_buffer_tensor(tensor, num_records_bytes=num_records_bytes)
        return fx.rocdl.get_buffer_rsrc(fx.get_iter(bounded))
    return fx.rocdl.get_buffer_rsrc(fx.get_iter(fx.rocdl.make_buffer_tensor(tensor, max_size)))


def create_llvm_ptr(value, address_space=0):
    """An `!llvm.ptr<address_space>` at the integer (or index) address ``value``."""
    from flydsl._mlir import ir
    from flydsl._mlir.dialects import arith, llvm

    value = fx.as_ir_value(value)
    if isinstance(value.type, ir.IndexType):
        value = arith.IndexCastOp(ir.IntegerType.get_signless(64), value).result
    return llvm.IntToPtrOp(ir.Type.parse(f"!llvm.ptr<{address_space}>"), value).result


def create_buffer_resource_from_addr(addr):
    """The raw buffer resource over the 64-bit address ``addr``."""
    pointer = fx.inttoptr(fx.PointerType.get(fx.Int8.ir_type, fx.AddressSpace.Global, 1), addr)
    return fx.rocdl.get_buffer_rsrc(fx.rocdl.make_buffer_ptr(pointer))


def buffer_load(rsrc, offset, vec_width=4, dtype=fx.Float32):
    """``vec_width`` elements of ``dtype`` (an fx class) at ELEMENT ``offset``: a raw buffer
    load at ``offset * sizeof(dtype)`` bytes."""
    from flydsl._mlir import ir
    from flydsl._mlir.dialects import rocdl

    element = dtype if isinstance(dtype, ir.Type) else dtype.ir_type  # `T.bf16` or `fx.BFloat16`, as the shim
    result = element if vec_width == 1 else ir.VectorType.get([vec_width], element)
    byte_offset = (fx.Int32(offset) * (element.width // 8)).ir_value()
    return rocdl.RawPtrBufferLoadOp(result, rsrc, byte_offset, fx.Int32(0).ir_value()).result


def buffer_store(data, rsrc, offset, offset_is_bytes=False):
    """A raw buffer store of ``data`` at ELEMENT ``offset`` of its element type (bytes with
    ``offset_is_bytes``)."""
    from flydsl._mlir import ir
    from flydsl._mlir.dialects import rocdl

    value = fx.as_ir_value(data)
    element = value.type.element_type if isinstance(value.type, ir.VectorType) else value.type
    scale = 1 if offset_is_bytes else element.width // 8
    rocdl.RawPtrBufferStoreOp(value, rsrc, (fx.Int32(offset) * scale).ir_value(), fx.Int32(0).ir_value())
