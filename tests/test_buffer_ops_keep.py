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
