"""FLY901's `tdm_ops` import fix is safe because `flydsl.expr.tdm_ops` (deprecated) and
`flydsl.expr.rocdl.tdm_ops` are one module object: the fixed import binds the same thing.
Checked here in the FlyDSL the compile extra installs (0.5.0); aiter's pinned 0.3.1 was
checked the same way by hand (a venv with `flydsl==0.3.1`, 2026-12-02: the same object)."""

from __future__ import annotations

from tests.compiler import require
from tests.rule_cases import fixed


def test_the_fixed_import_binds_the_same_module():
    require("the tdm_ops module check")
    import flydsl.expr as fx
    from flydsl.expr.rocdl import tdm_ops

    after = fixed("FLY901", "from flydsl.expr import rocdl, tdm_ops\nw = tdm_ops.tensor_wait\n", unsafe=False)
    assert "from flydsl.expr.rocdl import tdm_ops\n" in after
    assert fx.tdm_ops is tdm_ops
