"""FLY201's keep-case: a buffer_ops load or store with no layout form (mask=, soffset_bytes=,
cache_modifier=, is_scalar=) may stay on the shim, the cleanup guide says: noted as
information, without the Deprecated tag, and with no fix."""

from tests.rule_cases import diagnostics


def test_a_load_with_no_layout_form_is_information_only():
    source = (
        "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"
        "def f(rsrc, tid, ok, data: fx.Int32):\n"
        "    v = buffer_ops.buffer_load(rsrc, tid, vec_width=1, dtype=fx.Int32, mask=ok)\n"
        "    buffer_ops.buffer_store(data, rsrc, tid, cache_modifier=3)\n"
        "    return buffer_ops.buffer_load(rsrc, tid, vec_width=1, dtype=fx.Int32)\n"
    )
    kept, stored, legacy = diagnostics("FLY201", source)
    for d in (kept, stored):
        assert (d.severity.value, d.deprecated, d.fix) == ("information", False, None)
        assert "the cleanup guide keeps it" in d.message
    assert (legacy.severity.value, legacy.deprecated) == ("warning", True)


def test_a_resource_only_its_kept_accesses_use_is_information_too():
    source = (
        "import flydsl.expr as fx\nfrom kernels.common import buffer_ops\n"
        "def f(A, B, tid, ok):\n"
        "    kept = buffer_ops.create_buffer_resource(A)\n"
        "    v = buffer_ops.buffer_load(kept, tid, vec_width=1, dtype=fx.Int32, mask=ok)\n"
        "    raw = buffer_ops.create_buffer_resource(B)\n"
        "    fx.rocdl.buffer_load_to_lds(raw, tid)\n"
        "    return v\n"
    )
    kept, load, raw = diagnostics("FLY201", source)
    assert (kept.severity.value, kept.fix) == ("information", None)
    assert "every access of the resource stays on buffer_ops" in kept.message
    assert load.severity.value == "information"
    # consumed raw by something else: its consumer must move first, a warning
    assert (raw.severity.value, raw.fix) == ("warning", None)
