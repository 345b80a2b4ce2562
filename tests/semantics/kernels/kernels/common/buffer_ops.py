"""A minimal stand-in for the legacy `kernels.common.buffer_ops` helper layer (written for
these tests; FlyDSL's wheel does not ship the real one). Only what the test kernels call."""

import flydsl.expr as fx


def create_buffer_resource(tensor, max_size=True):
    """The raw buffer resource (!llvm.ptr<8>) of ``tensor``."""
    return fx.rocdl.get_buffer_rsrc(fx.get_iter(fx.rocdl.make_buffer_tensor(tensor, max_size)))


def create_llvm_ptr(value, address_space=0):
    """An `!llvm.ptr<address_space>` at the integer (or index) address ``value``."""
    from flydsl._mlir import ir
    from flydsl._mlir.dialects import arith, llvm

    value = fx.as_ir_value(value)
    if isinstance(value.type, ir.IndexType):
        value = arith.IndexCastOp(ir.IntegerType.get_signless(64), value).result
    return llvm.IntToPtrOp(ir.Type.parse(f"!llvm.ptr<{address_space}>"), value).result
