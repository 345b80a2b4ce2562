"""FLY302 raw-scf: the rule, its `if` and loop migrations, its cases."""

from flydsl_ls.analysis.rules.fly302.rule import RawScf

__all__ = ["RawScf"]
