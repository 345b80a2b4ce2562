"""What of a file a whole-module rule (``visit_Module``) looks at, declared by the rule
itself as its ``module_scope``: the incremental analysis re-runs the rule only when that
part of the file changes (``module_policies`` reads the declaration). A whole-module rule
that declares nothing sees the whole file."""

from __future__ import annotations

import ast
import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass


class Readers(enum.Enum):
    """How the rule needs the top-level statements reading a name its core binds."""

    FOLLOW = "follow"  # in full, and theirs in turn through module-level aliases (``x = core_name``)
    STUBS = "stubs"  # only which of those names they read ("is it used"): stubs reading them


class Neighbours(enum.Enum):
    """How the rule needs the top-level statements just above and below its core."""

    FULL = "full"  # in full (deleting a statement looks at the statements around it)
    BLANK_ENDS = "blank_ends"  # only their blank lines at either end


@dataclass(frozen=True, eq=False)
class ModuleScope:
    """The part of a file a whole-module rule judges.

    ``core`` says whether a top-level statement (with the blank and comment lines after
    it: its text, and its parsed statements, as several sharing a line are one) is one the
    rule judges; it is asked once per statement text, so it must depend on nothing else.
    Besides the core the rule sees what the core's names depend on, its readers and its
    neighbours, as ``readers`` and ``neighbours`` say."""

    core: Callable[[str, Sequence[ast.stmt]], bool]
    readers: Readers = Readers.FOLLOW
    neighbours: Neighbours = Neighbours.FULL
