"""A minimal stand-in for the legacy `kernels.common.buffer_ops` helper layer (written for
these tests; FlyDSL's wheel does not ship the real one). Only what the test kernels call."""

import flydsl.expr as fx


def create_buffer_resource(tensor, max_size=True):
    """The raw buffer resource (!llvm.ptr<8>) of ``tensor``."""
    return fx.rocdl.get_buffer_rsrc(fx.get_iter(fx.rocdl.make_buffer_tensor(tensor, max_size)))
