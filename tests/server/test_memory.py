"""What a long session must not accumulate (issue 9: a soak of 10,000 edits)."""

from __future__ import annotations

import ast
import gc

from lsprotocol import types

from flydsl_ls.actions.imports import cleanup_edits
from flydsl_ls.analysis.engine import AnalysisRequest
from flydsl_ls.analysis.incremental import IncrementalAnalyzer
from flydsl_ls.checker import fix_source
from flydsl_ls.config import Settings
from flydsl_ls.server.app import create_server


def test_handled_notifications_leave_no_bookkeeping_behind():
    # pygls files every handler it runs under an id and only a request's answer took the
    # entry out: one finished future per keystroke stayed alive for good.
    protocol = create_server().protocol
    uri = "file:///not-open.py"
    messages = [
        {"method": types.TEXT_DOCUMENT_DID_CHANGE, "params": {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": "x = 1\n"}]}},
        {"method": types.TEXT_DOCUMENT_DID_CLOSE, "params": {"textDocument": {"uri": uri}}},
        {"method": types.SET_TRACE, "params": {"value": "off"}},
    ]
    for _ in range(100):
        for message in messages:
            protocol.handle_message(protocol.structure_message({"jsonrpc": "2.0", **message}))
    assert protocol._request_futures == {}


# --- cyclic garbage: what the collector would have to find ------------------------------
# The server raises the collector's thresholds (app._tune_garbage_collector), so cycles
# left per request pile up between collections and raise the allocator's high-water mark.
# Models are freed by SemanticModel.dispose instead; these check the paths that build them.

KERNEL = """import flydsl.expr as fx
import flydsl.compiler as flyc
from flydsl.expr import arith

N = 4


def helper(x, y):
    total = x + y * N
    return arith.constant(total)


@flyc.kernel
def kernel(a: fx.Tensor, b: fx.Tensor):
    tid = fx.thread_idx.x
    for i in range(N):
        a[i] = helper(b[i], tid)
    return a
"""


def _cyclic_garbage(run) -> int:
    gc.collect()
    gc.disable()
    try:
        run()
        return gc.collect()
    finally:
        gc.enable()


def test_import_cleanup_of_a_fix_leaves_no_cyclic_garbage():
    after = KERNEL.replace("return arith.constant(total)", "return total")
    cleanup_edits(KERNEL, after)  # warm: first-use caches are not garbage
    assert _cyclic_garbage(lambda: cleanup_edits(KERNEL, after)) == 0


def test_dropped_hover_models_are_released():
    analyzer = IncrementalAnalyzer()
    analyzer.analyze(AnalysisRequest(KERNEL))
    edited = KERNEL.replace("total = x + y * N", "total = x + y * N + 1")
    kept = []

    def session():
        for line in (8, 15, 17):  # three statements: each model replaces the last
            analyzer.model_at(line)
        analyzer.analyze(AnalysisRequest(edited))  # drops the hover model
        kept.append(analyzer.model_at(15))
        analyzer.release_models()

    session()
    assert _cyclic_garbage(session) == 0
    # the model still cached (a later hover may reuse it) is not released
    model = kept[-1]
    assert analyzer.model_at(15) is model
    index = next(n for n in ast.walk(model.tree) if isinstance(n, ast.Attribute) and n.attr == "x")
    assert model.resolve(index) is not None


def test_fix_all_leaves_no_cyclic_garbage():
    # fix-all lints after every pass: each lint's whole-file model is disposed at once
    from tests.server.helpers import KERNEL as FIXABLE

    assert fix_source(FIXABLE, None, Settings(), unsafe=False).count  # it does fix something
    assert _cyclic_garbage(lambda: fix_source(FIXABLE, None, Settings(), unsafe=False)) == 0
