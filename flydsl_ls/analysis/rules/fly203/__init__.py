"""FLY203 smem-allocator: the rule, its planner, the offset algebra and the rewrite."""

from flydsl_ls.analysis.rules.fly203.rule import SmemAllocator

__all__ = ["SmemAllocator"]
