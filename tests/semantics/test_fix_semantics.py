"""Our fixes, checked with the real FlyDSL compiler: compile a kernel fixture before and
after the fixes and compare the generated code.

SAFE fixes must leave the first MLIR (what the DSL emitted) and the final MLIR identical
once `loc(...)` is stripped, and the LLVM IR and ISA identical. For UNSAFE fixes the tests
state the outcome: identical, or the exact difference the compiler shows.

The fixtures in fixtures/ are small kernels written for these tests.
"""

from __future__ import annotations

import difflib
import re
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

from flydsl_ls.actions.fixes import fix_all
from flydsl_ls.analysis.rules import ALL_RULES
from flydsl_ls.checker import check_source, fix_source
from flydsl_ls.config import Settings
from tests.compiler import needs_compiler

pytestmark = needs_compiler

FIXTURES = Path(__file__).resolve().parent / "fixtures"
REGISTERED = {rule.code for rule in ALL_RULES}

# Fixtures whose legacy sites are partly left on purpose (no safe fix can keep their IR).
KEEPS_LEGACY = {"value_kinds.py"}
# fixture -> (arches, rule codes whose safe fixes it exercises)
SAFE = {
    "typed_values.py": (("gfx942",), {"FLY101", "FLY102", "FLY103", "FLY104"}),
    # gfx942 and gfx950 share the CDNA s_waitcnt layout; both are compiled.
    "waitcnt.py": (("gfx942", "gfx950"), {"FLY401", "FLY402", "FLY403"}),
    "raw_vector.py": (("gfx942",), {"FLY303"}),
    "value_kinds.py": (("gfx942",), {"FLY101", "FLY102"}),
    "deprecated_methods.py": (("gfx942",), {"FLY901"}),
    "comparisons.py": (("gfx942",), {"FLY101"}),
}


def _settings(arch: str) -> Settings:
    try:
        flydsl_version = version("flydsl")
    except PackageNotFoundError:  # pragma: no cover - the module is skipped then
        flydsl_version = None
    return Settings(target_arch=arch, flydsl_version=flydsl_version)


def _lint(path: Path, settings: Settings):
    return lambda text: check_source(text, path, settings).diagnostics


@pytest.fixture(scope="session")
def compile_pair(service):
    """(fixture, arch, fixed text) -> (before, after) results, each compiled once."""
    before_cache: dict = {}
    after_cache: dict = {}

    def get(path: Path, arch: str, fixed: str):
        if (path, arch) not in before_cache:
            before_cache[(path, arch)] = service.compile(path, None, arch)
        key = (path, arch, fixed)
        if key not in after_cache:
            after_cache[key] = service.compile(path, None, arch, source=fixed)
        return before_cache[(path, arch)], after_cache[key]

    return get


def _ok(result, which: str) -> None:
    assert result.ok, f"the {which} compile failed: {result.status}: {result.error and result.error.message}"
    assert result.kernels, f"the {which} compile produced no kernel"


def _texts(result, emit: str) -> list[str]:
    from flydsl_ls.compile.verify import normalise_isa, strip_locations

    normalise = normalise_isa if emit == "isa" else (lambda t: t) if emit == "llvm" else strip_locations
    return [normalise(k.text(emit) or "") for k in result.kernels]


def _changed_lines(before, after, emit: str = "mlir-first") -> tuple[list[str], list[str]]:
    """Lines only in before / only in after (SSA numbering left as it is)."""
    a = "".join(_texts(before, emit)).splitlines()
    b = "".join(_texts(after, emit)).splitlines()
    removed, added = [], []
    for line in difflib.ndiff(a, b):
        if line.startswith("- "):
            removed.append(line[2:].strip())
        elif line.startswith("+ "):
            added.append(line[2:].strip())
    return removed, added


def _ops(lines: list[str]) -> list[str]:
    """`%x = arith.op %a, %b : t` -> `arith.op : t` (names and operands dropped)."""
    out = []
    for line in lines:
        body = line.split("=", 1)[1].strip() if re.match(r"^%[\w#]+(:\d+)? = ", line) else line
        op = body.split(" ", 1)[0]
        out.append(f"{op} : {body.rsplit(':', 1)[1].strip()}" if ":" in body else op)
    return sorted(out)


# --- SAFE fixes: identical IR -------------------------------------------------------------
SAFE_CASES = [(name, arch) for name, (arches, _) in SAFE.items() for arch in arches]


@pytest.mark.parametrize("name,arch", SAFE_CASES, ids=[f"{n[:-3]}-{a}" for n, a in SAFE_CASES])
def test_safe_fixes_leave_the_generated_code_unchanged(compile_pair, name, arch):
    path = FIXTURES / name
    expected = SAFE[name][1] & REGISTERED
    if not expected:
        pytest.skip(f"none of {sorted(SAFE[name][1])} is implemented yet")
    source = path.read_text(encoding="utf-8")
    outcome = fix_source(source, path, _settings(arch), unsafe=False)

    assert outcome.text != source, "the safe fixes changed nothing: this test would prove nothing"
    assert not outcome.rejected, outcome.rejected
    assert expected <= set(outcome.applied), f"expected safe fixes of {sorted(expected)}, got {outcome.applied}"
    if name not in KEEPS_LEGACY:
        remaining = {d.code for d in check_source(outcome.text, path, _settings(arch)).diagnostics}
        assert not (remaining & {"FLY102", "FLY104", "FLY401", "FLY402", "FLY403"} & expected), remaining

    before, after = compile_pair(path, arch, outcome.text)
    _ok(before, "before")
    _ok(after, "after (fixed)")
    assert [k.name for k in before.kernels] == [k.name for k in after.kernels]
    for emit in ("mlir-first", "mlir-final", "llvm", "isa"):
        a, b = _texts(before, emit), _texts(after, emit)
        assert all(a) and all(b), f"no {emit} dump"
        if a != b:
            diff = "".join(difflib.unified_diff("".join(a).splitlines(True), "".join(b).splitlines(True), n=2))
            pytest.fail(f"safe fixes {outcome.applied} changed the {emit} for {arch}:\n{diff}")


# --- UNSAFE fixes: the outcome, stated ----------------------------------------------------
def _unsafe_pair(compile_pair, name: str, code: str, arch: str = "gfx942"):
    if code not in REGISTERED:
        pytest.skip(f"{code} is not implemented yet")
    path = FIXTURES / name
    source = path.read_text(encoding="utf-8")
    settings = _settings(arch)
    outcome = fix_all(source, _lint(path, settings), unsafe=True, codes={code})
    assert outcome.applied.get(code), f"no {code} fix applied to {name}"
    assert outcome.text != source
    before, after = compile_pair(path, arch, outcome.text)
    _ok(before, "before")
    _ok(after, f"after the {code} unsafe fixes")
    return outcome, before, after


def test_fly101_drop_wrapper_before_shift_or_divide_changes_signedness(compile_pair):
    """`ArithValue(n) / 2` and `ArithValue(w) >> 2` on fx.Int32/fx.Int64 (unsafe fixes):
    ArithValue has no sign, so `/` converts with uitofp and `>>` is shrui; on the fx
    integers they are sitofp and shrsi. "Wrap once at source" (`raw = fx.Int32(raw op)`,
    uses unwrapped, a raw builder handed `fx.as_ir_value(raw)`) in the same fixture changes
    nothing."""
    outcome, before, after = _unsafe_pair(compile_pair, "unsafe_fixes.py", "FLY101")
    assert "raw = fx.Int32(arith.index_cast(T.i32, fx.Index(n)))" in outcome.text  # wrap at source
    assert "doubled = arith.addi(fx.as_ir_value(raw), fx.as_ir_value(raw))" in outcome.text
    assert "half = n / 2" in outcome.text and "quarter = w >> 2" in outcome.text
    removed, added = _changed_lines(before, after)
    assert _ops(removed) == ["arith.shrui : i64", "arith.uitofp : i32 to f32", "arith.uitofp : i32 to f32"]
    assert _ops(added) == ["arith.shrsi : i64", "arith.sitofp : i32 to f32", "arith.sitofp : i32 to f32"]
    isa_removed, isa_added = _changed_lines(before, after, "isa")
    assert [line.split()[0] for line in isa_removed] == ["v_cvt_f32_u32_e32"]
    assert [line.split()[0] for line in isa_added] == ["v_cvt_f32_i32_e32"]


def test_fly101_comparisons_and_bitcasts_keep_the_ir(compile_pair):
    """FlyDSL topk_gating_softmax's shapes, every FLY101 fix (unsafe ones too): fx `==` is
    ArithValue's `cmpf oeq`/`cmpi eq`, the results meet an IR value on the left of `|`/`*`
    or a list store that gets `fx.as_ir_value(...)`, and `fx.Int32(v).bitcast(fx.Float32)`
    is the same `arith.bitcast`: the generated code does not change."""
    outcome, before, after = _unsafe_pair(compile_pair, "comparisons.py", "FLY101")
    assert "is_equal = peer_v == wv" in outcome.text
    assert "probs[v] = fx.as_ir_value(is_winner.select(fx.Float32(float(\"-inf\")), probs[v]))" in outcome.text
    assert "Out[index] = fx.Int32(val).bitcast(fx.Float32).ir_value()" in outcome.text
    assert "fx.Int32(k) * n + best_i" in outcome.text and "ArithValue(" not in outcome.text
    for emit in ("mlir-first", "mlir-final", "llvm", "isa"):
        assert _texts(before, emit) == _texts(after, emit), emit


def test_fly401_counted_waits_name_their_count_with_the_same_isa(compile_pair):
    """Waits on a count no constant gives (a build-time count in a vmcnt-only shim, a magic
    field read through an object, a parameter counted in a helper) -> keyword waits naming
    the count (unsafe). The legacy shim's lgkmcnt=63 sets bits 13:12, which FlyDSL's encoder
    leaves clear: the immediates differ in the MLIR, and the ISA is the same."""
    outcome, before, after = _unsafe_pair(compile_pair, "waitcnt_counts.py", "FLY401")
    assert "fx.rocdl.s_waitcnt(vmcnt=plan.NUM_LOADS + 1)" in outcome.text
    assert "fx.rocdl.s_waitcnt(vmcnt=vmcnt, lgkmcnt=0)" in outcome.text
    assert "fx.rocdl.s_waitcnt(lgkmcnt=0)" in outcome.text
    removed, added = _changed_lines(before, after)
    assert _ops(removed) == _ops(added) == ["rocdl.s.waitcnt", "rocdl.s.waitcnt"]
    assert _texts(before, "isa") == _texts(after, "isa")


def test_fly105_typed_thread_id_turns_index_arithmetic_into_i32(compile_pair):
    """`gpu.thread_id("x") % 16` -> `fx.Int32(gpu.thread_id("x")) % 16` (unsafe): the
    index `remui` becomes an `arith.index_cast` to i32 and a signed `remsi`. The thread id
    is known to be in [0, 64), so the ISA stays the same."""
    outcome, before, after = _unsafe_pair(compile_pair, "unsafe_fixes.py", "FLY105")
    assert 'fx.Int32(gpu.thread_id("x")) % 16' in outcome.text
    removed, added = _changed_lines(before, after)
    assert "arith.remui : index" in _ops(removed)
    assert "arith.constant 16 : index" in removed or any("constant 16 : index" in r for r in removed)
    assert "arith.index_cast : index to i32" in _ops(added)
    assert "arith.remsi : i32" in _ops(added)
    assert _texts(before, "isa") == _texts(after, "isa")


def test_fly401_raw_load_count_keeps_its_wait_at_4_and_at_16(compile_pair, service):
    """preshuffle_gemm's `rocdl.s_waitcnt(num_loads)` (build-time counts of 4 and 16 here) ->
    the fields decoded (unsafe: the immediate may differ in bits no counter uses). At 4 and
    at 16 (which carries into expcnt: a wait for every load) every artifact is the same;
    `vmcnt=num_loads` would have waited for fewer loads at 16."""
    outcome, before, after = _unsafe_pair(compile_pair, "preshuffle_shapes.py", "FLY401")
    assert "fx.rocdl.s_waitcnt(vmcnt=num_loads % 16, lgkmcnt=num_loads // 256 % 16, expcnt=num_loads // 16 % 8)" in outcome.text
    path = FIXTURES / "preshuffle_shapes.py"
    sixteen = (service.compile(path, "example_16_loads", "gfx942"), service.compile(path, "example_16_loads", "gfx942", source=outcome.text))
    for result in sixteen:
        _ok(result, "16-load")
    for emit in ("mlir-final", "llvm", "isa"):
        assert _texts(before, emit) == _texts(after, emit), emit
        assert _texts(sixteen[0], emit) == _texts(sixteen[1], emit), f"16 loads: {emit}"


def test_fly105_ids_meeting_index_values_stay_index_typed(compile_pair):
    """Ids meeting a block offset of unknown kind -> `fx.Index(gpu.thread_id("x"))` (unsafe):
    the index `divui`/`remui` stay; only the int operands become i32 constants cast to index,
    which fold: the LLVM IR and the ISA are the same (fx.Int32 made this arithmetic i32 and
    cost preshuffle_gemm registers)."""
    outcome, before, after = _unsafe_pair(compile_pair, "preshuffle_shapes.py", "FLY105")
    assert 'wave_id = fx.Index(gpu.thread_id("x")) // 16' in outcome.text
    removed, added = _changed_lines(before, after)
    # the same ops on index values (renamed), the constants made another way
    assert "arith.divui : index" in _ops(removed) and "arith.remui : index" in _ops(removed)
    ops = lambda lines: sorted(re.sub(r"%[\w#.]+", "%", line) for line in lines if not re.search(r"arith\.(constant|index_cast)", line))  # noqa: E731
    assert ops(removed) == ops(added)
    assert "arith.constant : index" not in _ops(added) and "arith.index_cast : i32 to index" in _ops(added)
    for emit in ("llvm", "isa"):
        assert _texts(before, emit) == _texts(after, emit), emit


def test_fly303_vector_of_a_build_time_element_class_is_unchanged(compile_pair):
    """`vector.from_elements(T.vec(4, out_elem_cls.ir_type), [...])` ->
    `fx.Vector.from_elements([...], out_elem_cls)` (unsafe): the elements are already of that
    class, so nothing is coerced and every artifact is the same."""
    outcome, before, after = _unsafe_pair(compile_pair, "preshuffle_shapes.py", "FLY303")
    assert "fx.Vector.from_elements([as_ir_value(e) for e in elems], out_elem_cls)" in outcome.text
    for emit in ("mlir-first", "mlir-final", "llvm", "isa"):
        assert _texts(before, emit) == _texts(after, emit), emit


def test_fly103_index_constants_are_materialised_differently(compile_pair):
    """`arith.index(4)` / `arith.constant(8, index=True)` -> `fx.Index(4)` / `fx.Index(8)`
    (unsafe): the legacy call emits `arith.constant 4 : index` where it stands and an
    `index_cast` to i32 at the use; fx.Index(4) emits nothing there and an i32 constant at
    the use. The final MLIR and the ISA are the same after folding."""
    outcome, before, after = _unsafe_pair(compile_pair, "typed_values.py", "FLY103")
    assert "four = fx.Index(4)" in outcome.text and "eight = fx.Index(8)" in outcome.text
    removed, added = _changed_lines(before, after)
    assert any(line.endswith("arith.constant 4 : index") for line in removed)
    assert any(line.endswith("arith.constant 8 : index") for line in removed)
    assert any(line.endswith("arith.constant 4 : i32") for line in added)
    assert any(line.endswith("arith.constant 8 : i32") for line in added)
    assert _ops(removed).count("arith.index_cast : index to i32") == 2
    for emit in ("mlir-final", "isa"):
        assert _texts(before, emit) == _texts(after, emit), emit


def test_fly403_hand_made_sched_barrier_becomes_the_rocdl_op_with_the_same_llvm_ir(compile_pair):
    """`llvm.call_intrinsic(None, "llvm.amdgcn.sched.barrier", [mask_val], [], [])` ->
    `fx.rocdl.sched_barrier(mask)` (unsafe): the first MLIR calls the intrinsic through
    `llvm.call_intrinsic` on an i32 constant before and emits `rocdl.sched.barrier` after;
    the LLVM IR and the ISA are the same."""
    outcome, before, after = _unsafe_pair(compile_pair, "sched_barrier.py", "FLY403")
    assert "    fx.rocdl.sched_barrier(mask)\n" in outcome.text and "mask_val" not in outcome.text
    removed, added = _changed_lines(before, after)
    assert any("llvm.call_intrinsic" in line for line in removed)
    assert any("rocdl.sched.barrier" in line for line in added)
    assert _texts(before, "isa") == _texts(after, "isa")
    # the same two barriers reach the backend either way
    for result in (before, after):
        assert "".join(_texts(result, "llvm")).count("call void @llvm.amdgcn.sched.barrier(i32") == 2
    assert _texts(before, "llvm") == _texts(after, "llvm")


def test_fly301_casts_and_typed_constants_emit_the_same_ops(compile_pair):
    """`arith.extsi(T.i64, v)` -> `fx.Int64(v)`, `trunci` -> `fx.Int8(v)`, `fptosi` ->
    `fx.Int32(v)`, `bitcast` -> `fx.Float32(v).bitcast(fx.Int32)`, `sitofp` ->
    `fx.Int32(v).to(fx.Float32)` on raw values whose type is read off their op, and
    `arith.constant(SCALE, type=i32)` -> `fx.Int32(SCALE)` (unsafe: fx results), and on
    operands of unknown type `cond.select(t, typed)`, `fx.Int32(v).bitcast(fx.Float32)`,
    `fx.Vector(v).to(fx.BFloat16)`, `fx.BFloat16(v)`: the constructors emit the same signed
    ops, so only the constant moves to its use."""
    outcome, before, after = _unsafe_pair(compile_pair, "raw_casts.py", "FLY301")
    for fixed in ("wide = fx.Int64(n.ir_value())", "narrow = fx.Int8(n.ir_value())",
                  "back = fx.Int32(x.ir_value())", "bits = fx.Float32(x.ir_value()).bitcast(fx.Int32)",
                  "as_f = fx.Int32(n.ir_value()).to(fx.Float32)", "k = fx.Int32(SCALE)",
                  "picked = (tid < n).select(held[0], n)", "from_bits = fx.Int32(held[0]).bitcast(fx.Float32)",
                  "halves = fx.Vector(vector.broadcast(T.vec(4, T.f32), held[1])).to(fx.BFloat16)",
                  "half = fx.BFloat16(held[1])"):
        assert fixed in outcome.text, fixed
    removed, added = _changed_lines(before, after)
    assert _ops(removed) == _ops(added), (removed, added)
    for emit in ("mlir-final", "llvm", "isa"):
        assert _texts(before, emit) == _texts(after, emit), emit


# --- value kinds: what the fixes refuse, and why ------------------------------------------
def test_unsafe_fixes_on_value_kinds_still_compile_and_refuse_what_cannot_trace(compile_pair):
    """All fixes, unsafe included, on value_kinds.py: the kernel compiles. The `_raw(zero)`s
    in dynamic regions become `fx.as_ir_value(zero)`, which the rewriter does not carry (no
    scf.if gains a result); the hand-rolled unwrapper's call gets the converter too; the
    sites that would not trace keep their legacy spelling; `ArithValue(v).index_cast(T.index)`
    on a value of either kind is `fx.Index(v)`."""
    path = FIXTURES / "value_kinds.py"
    source = path.read_text(encoding="utf-8")
    outcome = fix_all(source, _lint(path, _settings("gfx942")), unsafe=True)
    assert not outcome.rejected
    text = outcome.text
    assert "        Out[tid] = fx.Int32(fx.as_ir_value(zero))\n" in text
    assert "            dst[tid + 64] = fx.Int32(fx.as_ir_value(zero))\n" in text
    assert "    return fx.as_ir_value(v)\n\n\ndef _uw(v):" in text  # unknown kind, FlyDSL's _to_raw
    assert "def hand_rolled(v):\n    return fx.as_ir_value(v)\n" in text  # unsafe
    assert "return fx.Index(v)\n" in text  # either kind: fx.Index index_casts both
    before, after = compile_pair(path, "gfx942", text)
    _ok(before, "before")
    _ok(after, "after the unsafe fixes")
    removed, added = _changed_lines(before, after)
    assert not [line for line in removed + added if "scf.if" in line]


NAIVE_REWRITES = {
    # what a fix that ignored value kinds would write -> what the compiler then says
    ("hi = arith.index_cast(T.index, n)", "hi = fx.Index(n)"): "must be a Value",
    ("dst[tid + 64] = fx.Int32(_raw(zero))", "dst[tid + 64] = fx.Int32(zero.ir_value())"): (
        "Variable(s) ['zero'] initialized as None before a dynamic if/else"
    ),
    ("return ArithValue(v).index_cast(T.index)", "return v.index_cast(T.index)"): (
        "'Int32' object has no attribute 'index_cast'"
    ),
}


@pytest.mark.parametrize("rewrite", list(NAIVE_REWRITES), ids=[new for _, new in NAIVE_REWRITES])
def test_the_rewrites_the_rules_refuse_do_not_trace(service, rewrite):
    """The compiler facts behind value_kinds.py's refusals: each rewrite, alone, breaks the trace."""
    old, new = rewrite
    path = FIXTURES / "value_kinds.py"
    source = path.read_text(encoding="utf-8")
    assert source.count(old) == 1
    result = service.compile(path, None, "gfx942", source=source.replace(old, new))
    assert not result.ok
    assert NAIVE_REWRITES[rewrite] in result.error.message


# --- FLY301: no "safe" operator form ------------------------------------------------------
def test_fly301_offers_no_safe_fix_where_the_raw_call_cannot_compile(service):
    """`arith.addi(a, b)` etc. with fx integer operands: with FlyDSL 0.5.0 such a call never
    compiles (the raw builder reads `a.type`, which fx.Int32 lacks), so rewriting it to `a + b`
    would be a behaviour change, not an IR-preserving one. FLY301 offers no safe fix there."""
    path = FIXTURES / "raw_arith.py"
    source = path.read_text(encoding="utf-8")
    outcome = fix_source(source, path, _settings("gfx942"), unsafe=False)
    assert "FLY301" not in outcome.applied
    before = service.compile(path, None, "gfx942")
    assert not before.ok
    assert "'Int32' object has no attribute 'type'" in before.error.message


def test_every_rule_with_a_safe_fix_is_covered():
    """A rule whose fixes can be safe must appear in a SAFE fixture above (or be FLY301,
    covered by its own test, or FLY001, whose fixes only edit comments)."""
    covered = set().union(*(codes for _, codes in SAFE.values())) | {"FLY301", "FLY001"}
    safe_rules = {r.code for r in ALL_RULES if "safe" in r.fix_safety.replace("unsafe", "")}
    missing = sorted(safe_rules - covered)
    assert not missing, f"rules with safe fixes but no semantics fixture: {missing}"


def test_fly303_strided_slices_reshape_with_the_same_llvm_ir(compile_pair):
    """`vector.extract_strided_slice` halves of an 8-dword vector become
    `fx.Vector(v).reshape((2, 4))[i, None]` (unsafe): the first MLIR slices through a
    `vector.shape_cast` to 2x4 and back, which lowers to the same LLVM IR and ISA."""
    outcome, before, after = _unsafe_pair(compile_pair, "raw_vector_slices.py", "FLY303")
    assert "lo = fx.Vector(dwords).reshape((2, 4))[0, None]" in outcome.text
    assert "hi = fx.Vector(dwords).reshape((2, 4))[1, None]" in outcome.text
    removed, added = _changed_lines(before, after)
    assert _ops(added).count("vector.shape_cast : vector<8xi32> to vector<2x4xi32>") == 2
    assert _ops(added).count("vector.extract_strided_slice : vector<2x4xi32> to vector<1x4xi32>") == 2
    assert _ops(removed).count("vector.extract_strided_slice : vector<8xi32> to vector<4xi32>") == 2
    assert _texts(before, "llvm") == _texts(after, "llvm")
    assert _texts(before, "isa") == _texts(after, "isa")


def test_fly302_raw_while_polling_loop_becomes_a_python_while_with_the_same_code(compile_pair):
    """FlyDSL's custom_all_reduce polling loop (raw `scf.WhileOp` + `scf.ConditionOp` +
    `scf.YieldOp`, an unsigned compare, an L1 invalidation between polls) becomes a Python
    `while` (unsafe): the rewriter builds the same `scf.while`, first MLIR, LLVM IR and ISA
    identical on gfx942."""
    outcome, before, after = _unsafe_pair(compile_pair, "raw_while.py", "FLY302")
    assert "    current_wait_value = initial_wait_value\n" in outcome.text
    assert "    while _u(current_wait_value) < _u(flag):\n" in outcome.text
    assert "        current_wait_value = next_wait_value\n" in outcome.text
    assert "scf.WhileOp(" not in outcome.text and "scf.ConditionOp(" not in outcome.text
    for emit in ("mlir-first", "llvm", "isa"):
        assert _texts(before, emit) == _texts(after, emit), emit
    assert any("scf.while" in t for t in _texts(before, "mlir-first"))
