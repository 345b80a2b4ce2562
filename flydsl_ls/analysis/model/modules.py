"""Module identity: every import path real kernels use, mapped to one canonical name.

Rules match canonical symbols such as ``fx.arith.ArithValue`` or ``mlir.rocdl.s_waitcnt``,
never spellings. Canonical module names:

- ``fx``            flydsl.expr (the modern surface)
- ``fx.arith``      the DSL arith module; it star-re-exports the raw arith dialect
- ``fx.rocdl``      the DSL rocdl package; it star-re-exports the raw rocdl dialect
- ``fx.gpu``        the DSL gpu module (typed ``thread_idx``; raw ``thread_id(...)``)
- ``fx.math``       the DSL math helpers (modern)
- ``mlir.<d>``      a raw MLIR dialect module (arith, scf, vector, llvm, memref, math, gpu, rocdl)
- ``shim.<name>``   legacy helper layers kernels ship: buffer_ops, vector, tensor_shim
- ``flyc``          flydsl.compiler
"""

from __future__ import annotations

from functools import lru_cache

_DIALECTS = ("arith", "scf", "vector", "llvm", "memref", "math", "gpu", "rocdl", "func", "amdgpu")

CANONICAL_MODULES: dict[str, str] = {
    "flydsl.expr": "fx",
    "flydsl.expr.arith": "fx.arith",
    "flydsl.expr.utils.arith": "fx.arith",
    "flydsl.expr.rocdl": "fx.rocdl",
    "flydsl.expr.rocdl.universal": "fx.rocdl",
    "flydsl.expr.gpu": "fx.gpu",
    "flydsl.expr.math": "fx.math",
    "flydsl.expr.typing": "fx",
    "flydsl.expr.numeric": "fx",
    "flydsl.expr.primitive": "fx",
    "flydsl.expr.derived": "fx",
    "flydsl.expr.struct": "fx",
    "flydsl.expr.llvm": "fx.llvm",
    "flydsl.expr.rocdl.tdm_ops": "fx.rocdl.tdm_ops",
    "flydsl.compiler": "flyc",
    "flydsl.compiler.kernel_function": "flyc",
    "flydsl.compiler.jit_function": "flyc",
    "flydsl._mlir.ir": "mlir.ir",
    "flydsl._mlir.extras.types": "fx.T",
    "mlir.ir": "mlir.ir",
    # Historical DSL modules deleted in FlyDSL #880: legacy shims now.
    "flydsl.expr.buffer_ops": "shim.buffer_ops",
    "flydsl.expr.vector": "shim.vector",
    # Helper layers shipped next to kernels (FlyDSL kernels/common, aiter kernels/).
    "kernels.common.buffer_ops": "shim.buffer_ops",
    "aiter.ops.flydsl.kernels.buffer_ops": "shim.buffer_ops",
    "aiter.ops.flydsl.kernels.vector": "shim.vector",
    "kernels.common.tensor_shim": "shim.tensor_shim",
    "aiter.ops.flydsl.kernels.tensor_shim": "shim.tensor_shim",
    "flydsl.utils.smem_allocator": "shim.smem_allocator",
    "flydsl.expr.utils.smem_allocator": "shim.smem_allocator",
    "kernels.common.smem_allocator": "shim.smem_allocator",
    # Pointer/memory helpers: FlyDSL's kernels/common/mem_ops.py, and the modules that
    # held (and re-export) them before: FlyDSL's and aiter's kernels_common.py.
    "kernels.common.mem_ops": "shim.mem_ops",
    "kernels.common.kernels_common": "shim.mem_ops",
    "aiter.ops.flydsl.kernels.kernels_common": "shim.mem_ops",
}
for _d in _DIALECTS:
    for _prefix in ("flydsl._mlir.dialects.", "mlir.dialects.", "_mlir.dialects."):
        CANONICAL_MODULES[_prefix + _d] = f"mlir.{_d}"
        CANONICAL_MODULES[f"{_prefix}_{_d}_ops_gen"] = f"mlir.{_d}"

# Kernel packages vendor their helper layers (aiter's kernels/buffer_ops.py, vector.py,
# tensor_shim.py; FlyDSL's kernels/common/). Reached by a relative import, or inside a
# package with a ``kernels`` folder, they are recognised by the module's own name.
SHIM_MODULE_TAILS = {
    "buffer_ops": "shim.buffer_ops",
    "tensor_shim": "shim.tensor_shim",
    "smem_allocator": "shim.smem_allocator",
    "vector": "shim.vector",
    "mem_ops": "shim.mem_ops",
    "kernels_common": "shim.mem_ops",
}
RELATIVE = "<relative>"  # stands for the package of a relative import we cannot name

# Module objects reachable as attributes of a canonical module (``fx.arith``).
SUBMODULES: dict[str, str] = {
    "fx.arith": "fx.arith",
    "fx.rocdl": "fx.rocdl",
    "fx.gpu": "fx.gpu",
    "fx.math": "fx.math",
    "fx.llvm": "fx.llvm",
    "fx.tdm_ops": "fx.rocdl.tdm_ops",
    "fx.rocdl.tdm_ops": "fx.rocdl.tdm_ops",
    "fx.utils.arith": "fx.arith",
    # flydsl.expr.arith / flydsl.expr.math bind the raw dialect modules as attributes.
    "fx.arith.arith": "mlir.arith",
    "fx.math.math": "mlir.math",
    # The raw llvm dialect leaks onto fx.rocdl (``from .universal import *``) and is
    # bound as ``_llvm`` inside flydsl.expr.llvm.
    "fx.rocdl.llvm": "mlir.llvm",
    "fx.llvm._llvm": "mlir.llvm",
}


def canonical_module(dotted: str) -> str | None:
    """Canonical name of an absolute module path, or None when not FlyDSL-related."""
    if dotted in CANONICAL_MODULES:
        return CANONICAL_MODULES[dotted]
    # A package import such as ``flydsl._mlir.dialects`` followed by ``.arith`` access.
    return None


@lru_cache(maxsize=65536)
def canonical_symbol(dotted: str) -> str | None:
    """Canonical name of ``module.attr.attr`` by its longest known module prefix."""
    parts = dotted.split(".")
    relative = parts[0] == RELATIVE
    if relative:
        parts = parts[1:]
    for cut in range(len(parts), 0, -1):
        canon = CANONICAL_MODULES.get(".".join(parts[:cut]))
        if canon is not None:
            rest = parts[cut:]
            return _descend(canon, rest)
    if relative or "kernels" in parts[:-1]:
        for index, part in enumerate(parts):
            if part in SHIM_MODULE_TAILS:
                return _descend(SHIM_MODULE_TAILS[part], parts[index + 1 :])
    return None


def _descend(canon: str, rest: list[str]) -> str:
    for i, part in enumerate(rest):
        nested = SUBMODULES.get(f"{canon}.{part}")
        if nested is None:
            return ".".join([canon, *rest[i:]])
        canon = nested
    return canon


def is_module(canon: str) -> bool:
    return canon in CANONICAL_MODULES.values() or canon in SUBMODULES.values()


def split_symbol(canon: str) -> tuple[str, str]:
    """(module, attribute path) of a canonical symbol: ``fx.arith.addf`` -> (fx.arith, addf)."""
    best = ""
    for module in _ALL_MODULES:
        if (canon == module or canon.startswith(module + ".")) and len(module) > len(best):
            best = module
    return best, canon[len(best) + 1 :] if best else canon


_ALL_MODULES = frozenset(CANONICAL_MODULES.values()) | frozenset(SUBMODULES.values())
