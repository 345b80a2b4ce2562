"""FLY901's `tdm_ops` import fix is safe because `flydsl.expr.tdm_ops` (deprecated) and
`flydsl.expr.rocdl.tdm_ops` are one module object: the fixed import binds the same thing.
Checked in the FlyDSL this venv has (0.5.0) and, when present, aiter's pinned 0.3.1 venv."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.rule_cases import fixed

SAME_MODULE = "import flydsl.expr as fx, flydsl.expr.rocdl.tdm_ops as t; print(fx.tdm_ops is t)"
VENV_031 = "/work/venv031/bin/python"


def test_the_fixed_import_binds_the_same_module():
    fx = pytest.importorskip("flydsl.expr")
    from flydsl.expr.rocdl import tdm_ops

    after = fixed("FLY901", "from flydsl.expr import rocdl, tdm_ops\nw = tdm_ops.tensor_wait\n", unsafe=False)
    assert "from flydsl.expr.rocdl import tdm_ops\n" in after
    assert fx.tdm_ops is tdm_ops


@pytest.mark.skipif(not os.path.exists(VENV_031), reason="no FlyDSL 0.3.1 venv")
def test_the_same_module_in_flydsl_031():
    out = subprocess.run([VENV_031, "-c", SAME_MODULE], capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": ""})
    assert out.stdout.strip() == "True"
