"""FLY603's thread/value layouts, checked with FlyDSL's own make_layout_tv (0.5.0).

fixtures/tv_layouts.py builds tiled copies over hand-built TV layouts of the shapes the
real kernels use. The rule's unsafe fix rebuilds each from thread and value layouts. Both
texts are run with FlyDSL, `make_tiled_copy(_tv)` caught to return (TV layout, tile): the
fixed layout must map every (thread, value) to the tile element the hand-built one does,
and the tile must be the one passed, for every value of the builders' names.
"""

from __future__ import annotations

import ast
import itertools
import re
import types
from pathlib import Path

import pytest

from flydsl_ls.checker import fix_source
from flydsl_ls.config import Settings
from tests.compiler import needs_compiler

pytestmark = needs_compiler

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "tv_layouts.py"
# builder -> the argument tuples (after the atom) it is run with
RUNS = {
    "cshuffle_waves": [()],
    "channel_major": [(False, 16), (True, 16), (True, 32)],  # 2, 8 and 4 values per thread
    "g2s_rows": [(512, 1), (128, 1), (128, 2), (64, 2), (32, 2)],
    "g2s_constants": [()],
}


@pytest.fixture(scope="module")
def fixed():
    settings = Settings(flydsl_version="0.5.0", select=("FLY603",))
    return fix_source(FIXTURE.read_text(encoding="utf-8"), FIXTURE, settings, unsafe=True)


def test_every_layout_is_rebuilt(fixed):
    assert fixed.applied == {"FLY603": 4}, fixed.applied
    tree = ast.parse(fixed.text)
    calls = {
        node.name: [ast.unparse(c.func) for c in ast.walk(node) if isinstance(c, ast.Call)]
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
    }
    # make_layout_tv's own tile is the one passed, except g2s_rows' (tile_k is not known to
    # be thrs_k * per_thread): there the tile is kept.
    assert "fx.make_tiled_copy_tv" in calls["cshuffle_waves"]
    assert "fx.make_tiled_copy_tv" in calls["channel_major"]
    assert "fx.make_tiled_copy_tv" in calls["g2s_constants"]
    assert "fx.make_layout_tv" in calls["g2s_rows"] and "fx.make_tile" in calls["g2s_rows"]


def _layout(value) -> tuple:
    """(shape, stride) of a static FlyDSL layout, from its type."""
    body = re.fullmatch(r"!fly\.layout<(.*)>", str(value.type)).group(1)
    shape, stride = body.split(":")
    literal = (lambda t: ast.literal_eval(re.sub(r"(\d)\)", r"\1,)", t)))
    return literal(shape), literal(stride)


def _flat(x) -> list:
    return [leaf for item in x for leaf in _flat(item)] if isinstance(x, tuple) else [x]


def _mapping(layout) -> list[list[int]]:
    """tile element of every (thread, value) of a rank-2 (thread, value) layout."""
    shape, stride = layout

    def mode(i):
        points = [0]
        for size, step in zip(_flat((shape[i],)), _flat((stride[i],))):
            points = [p + k * step for k in range(size) for p in points]
        return points

    return [[t + v for v in mode(1)] for t in mode(0)]


def _run(source: str, builder: str, args: tuple):
    """(mapping, tile type) the builder's tiled copy has, built by FlyDSL."""
    import flydsl.expr as real
    from flydsl._mlir import ir
    from flydsl._mlir.dialects import func

    def tiled_copy(atom, tv, tile):
        tile = tile if isinstance(tile, ir.Value) else real.make_tile(*tile)
        return _mapping(_layout(tv)), str(tile.type)

    def tiled_copy_tv(atom, thr, val):
        tile, tv = real.make_layout_tv(thr, val)
        return tiled_copy(atom, tv, tile)

    proxy = types.SimpleNamespace(**{n: getattr(real, n) for n in dir(real) if not n.startswith("_")})
    proxy.make_tiled_copy, proxy.make_tiled_copy_tv = tiled_copy, tiled_copy_tv
    namespace: dict = {}
    exec(compile(source, str(FIXTURE), "exec"), namespace)
    namespace["fx"] = proxy
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            probe = func.FuncOp("probe", ([], []))
            with ir.InsertionPoint(probe.add_entry_block()):
                result = namespace[builder](None, *args)
                func.ReturnOp([])
    return result


@pytest.mark.parametrize("builder,args", [(b, a) for b, runs in RUNS.items() for a in runs])
def test_same_mapping_and_tile(fixed, builder, args):
    before = _run(FIXTURE.read_text(encoding="utf-8"), builder, args)
    after = _run(fixed.text, builder, args)
    (old, old_tile), (new, new_tile) = before, after
    threads, values = len(old), len(old[0])
    assert (len(new), len(new[0])) == (threads, values)
    assert sorted(itertools.chain(*old)) == list(range(threads * values))  # one element per pair
    assert new == old
    assert new_tile == old_tile
