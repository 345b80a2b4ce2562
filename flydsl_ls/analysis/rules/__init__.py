"""The rule registry: one module per rule, listed here in code order."""

from __future__ import annotations

from flydsl_ls.analysis.rules.base import Rule
from flydsl_ls.analysis.rules.fly000_syntax_error import SyntaxErrorRule
from flydsl_ls.analysis.rules.fly001_unused_suppression import UnusedSuppression
from flydsl_ls.analysis.rules.fly101_arith_value_wrapper import ArithValueWrapper
from flydsl_ls.analysis.rules.fly102_raw_unwrap import RawUnwrap
from flydsl_ls.analysis.rules.fly103_index_cast import IndexCast
from flydsl_ls.analysis.rules.fly104_redundant_wrap import RedundantWrap
from flydsl_ls.analysis.rules.fly105_raw_thread_id import RawThreadId
from flydsl_ls.analysis.rules.fly201_buffer_ops import BufferOps
from flydsl_ls.analysis.rules.fly202_llvm_ptr_cast import LlvmPtrCast
from flydsl_ls.analysis.rules.fly203 import SmemAllocator
from flydsl_ls.analysis.rules.fly204_tdm_atom import TdmAtom
from flydsl_ls.analysis.rules.fly301_raw_arith import RawArith
from flydsl_ls.analysis.rules.fly302 import RawScf
from flydsl_ls.analysis.rules.fly303_raw_vector import RawVector
from flydsl_ls.analysis.rules.fly304_raw_math import RawMath
from flydsl_ls.analysis.rules.fly305_raw_llvm_memref import RawLlvmMemref
from flydsl_ls.analysis.rules.fly401_waitcnt_bitfield import WaitcntBitfield
from flydsl_ls.analysis.rules.fly402_dead_waitcnt_shim import DeadWaitcntShim
from flydsl_ls.analysis.rules.fly403_raw_sched_barrier import RawSchedBarrier
from flydsl_ls.analysis.rules.fly501_runtime_if_in_helper import RuntimeIfInHelper
from flydsl_ls.analysis.rules.fly502_const_expr_on_runtime import ConstExprOnRuntime
from flydsl_ls.analysis.rules.fly503_private_rewriter import PrivateRewriter
from flydsl_ls.analysis.rules.fly601_raw_mfma import RawMfma
from flydsl_ls.analysis.rules.fly602_atom_call import AtomCall
from flydsl_ls.analysis.rules.fly603_hand_built_tv_layout import HandBuiltTvLayout
from flydsl_ls.analysis.rules.fly701_jit_call_in_loop import JitCallInLoop
from flydsl_ls.analysis.rules.fly702_duplicate_run_compiled import DuplicateRunCompiled
from flydsl_ls.analysis.rules.fly901_deprecated_api import DeprecatedApi

ALL_RULES: tuple[type[Rule], ...] = (
    SyntaxErrorRule,
    UnusedSuppression,
    ArithValueWrapper,
    RawUnwrap,
    IndexCast,
    RedundantWrap,
    RawThreadId,
    BufferOps,
    LlvmPtrCast,
    SmemAllocator,
    TdmAtom,
    RawArith,
    RawScf,
    RawVector,
    RawMath,
    RawLlvmMemref,
    WaitcntBitfield,
    DeadWaitcntShim,
    RawSchedBarrier,
    RuntimeIfInHelper,
    ConstExprOnRuntime,
    PrivateRewriter,
    RawMfma,
    AtomCall,
    HandBuiltTvLayout,
    JitCallInLoop,
    DuplicateRunCompiled,
    DeprecatedApi,
)
SYNTAX_ERROR = SyntaxErrorRule.code  # reported by the engine itself, when a file does not parse
# What runs when nothing is selected: every rule but the opt-in ones (FLY001, as ruff's RUF100).
DEFAULT_RULES: tuple[type[Rule], ...] = tuple(rule for rule in ALL_RULES if rule.default)
BY_CODE: dict[str, type[Rule]] = {rule.code: rule for rule in ALL_RULES}
BY_NAME: dict[str, type[Rule]] = {rule.name: rule for rule in ALL_RULES}


def lookup_rule(selector: str) -> type[Rule] | None:
    return BY_CODE.get(selector.upper()) or BY_NAME.get(selector.lower())


def select_rules(
    select: list[str] | None, ignore: list[str] | None, extend_select: list[str] | None = None
) -> tuple[type[Rule], ...]:
    """Rules chosen by codes, code prefixes (``FLY1``), names or ``ALL``, as in ruff:
    ``select`` (default: the default rules), plus ``extend_select``, less ``ignore``."""
    base = [r for r in ALL_RULES if _matches_any(r, select)] if select else list(DEFAULT_RULES)
    extra = extend_select or []
    chosen = [r for r in ALL_RULES if r in base or _matches_any(r, extra)]
    return tuple(r for r in chosen if not _matches_any(r, ignore or []))


def _matches_any(rule: type[Rule], selectors: list[str]) -> bool:
    for selector in selectors:
        selector = selector.strip()
        if selector.upper() == "ALL" or rule.name == selector.lower():
            return True
        if selector and rule.code.startswith(selector.upper()):
            return True
    return False


def unknown_selectors(selectors: list[str]) -> list[str]:
    known_prefix = [r.code for r in ALL_RULES]
    return [
        s
        for s in selectors
        if s.upper() != "ALL"
        and s.lower() not in BY_NAME
        and not any(code.startswith(s.upper()) for code in known_prefix)
    ]
