"""FLY302's rule cases: what must and must not be flagged, and the fixed text."""

from flydsl_ls.analysis.rules.base import Invalid, Valid

VALID = [
    Valid(
        "import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor, n: fx.Int32):\n"
        "    tid = fx.thread_idx.x\n"
        "    if tid < n:\n"
        "        out[tid] = 1.0\n"
        "    for i in fx.range_constexpr(4):\n"
        "        pass\n"
    ),
    Valid(
        # Text in comments and strings is not code.
        "# with _if_then(scf.IfOp(c)): ... emits scf.for / scf.if\n"
        'doc = "scf.ForOp(lo, hi, step) and scf.YieldOp([])"\n'
    ),
    Valid(
        # An _if_then definition that is never called is not a site.
        "from contextlib import contextmanager\n"
        "from flydsl._mlir import ir\n"
        "from flydsl._mlir.dialects import scf\n"
        "@contextmanager\n"
        "def _if_then(if_op):\n"
        "    with ir.InsertionPoint(if_op.then_block):\n"
        "        yield\n"
    ),
    Valid("class scf:\n    IfOp = staticmethod(lambda c: c)\nscf.IfOp(1)\n"),
]
INVALID = [
    Invalid(
        "import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "from flydsl._mlir.dialects import scf\n"
        "from flydsl.expr import arith\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor, n: fx.Int32):\n"
        "    tid = fx.thread_idx.x\n"
        "    with _if_then(scf.IfOp(arith.unwrap(tid < n))):\n"
        "        out[tid] = 1.0\n"
        "from kernels.common.scf_helpers import _if_then\n",
        # The imports only the raw form used are removed with it.
        expected="import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor, n: fx.Int32):\n"
        "    tid = fx.thread_idx.x\n"
        "    if tid < n:\n"
        "        out[tid] = 1.0\n",
        unsafe=True,
        line=8,
        column=19,
        message="Python `if",
    ),
    Invalid(
        # IfOp bound to a name, then/else blocks through ir.InsertionPoint.
        "import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "from flydsl._mlir import ir\n"
        "from flydsl._mlir.dialects import scf as _scf\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor, n: fx.Int32):\n"
        "    tid = fx.thread_idx.x\n"
        "    in_range = tid < n\n"
        "    if_op = _scf.IfOp(in_range.ir_value(), has_else=True)\n"
        "    with ir.InsertionPoint(if_op.then_block):  # then\n"
        "        out[tid] = 1.0\n"
        "        _scf.YieldOp([])\n"
        "    with ir.InsertionPoint(if_op.else_block):\n"
        "        _scf.YieldOp([])\n",
        expected="import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor, n: fx.Int32):\n"
        "    tid = fx.thread_idx.x\n"
        "    in_range = tid < n\n"
        "    if in_range:  # then\n"
        "        out[tid] = 1.0\n"
        "    else:\n"
        "        pass\n",
        unsafe=True,
        line=9,
    ),
    Invalid(
        # A plain helper gains the Python `if`: it also gets @flyc.jit (FLY501).
        "import flydsl.expr as fx\n"
        "from flydsl._mlir.dialects import scf\n"
        "from flydsl.expr.arith import ArithValue\n"
        "from .common import _if_then\n"
        "\n"
        "def store_if(out: fx.Tensor, i: fx.Int32, n: fx.Int32):\n"
        "    guard = scf.IfOp(ArithValue(i < n))\n"
        "    with _if_then(guard):\n"
        "        out[i] = 0.0\n",
        expected="import flydsl.expr as fx\n"
        "import flydsl.compiler as flyc\n"
        "\n"
        "@flyc.jit\n"
        "def store_if(out: fx.Tensor, i: fx.Int32, n: fx.Int32):\n"
        "    if i < n:\n"
        "        out[i] = 0.0\n",
        unsafe=True,
        message="in a `@flyc.jit` function: raw `scf.IfOp`; FlyDSL rewrites Python control flow only in "
        "`@flyc.kernel`/`@flyc.jit` functions, and `store_if` is neither (guide §5)",
    ),
    Invalid(
        # Loop-carried value: range(..., init=[...]), yield, results.
        "import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "from flydsl._mlir import ir\n"
        "from flydsl._mlir.dialects import scf\n"
        "from flydsl.expr import arith\n"
        "from flydsl.expr.arith import ArithValue\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor):\n"
        "    c0 = arith.constant(0, index=True)\n"
        "    c4 = arith.constant(4, index=True)\n"
        "    c1 = arith.constant(1, index=True)\n"
        "    acc0 = arith.constant(0.0, type=fx.T.f32)\n"
        "    loop = scf.ForOp(c0, c4, c1, [acc0])\n"
        "    with ir.InsertionPoint(loop.body):\n"
        "        i = arith.index_cast(fx.T.i32, loop.induction_variable)\n"
        "        acc = ArithValue(loop.inner_iter_args[0])\n"
        "        scf.YieldOp([acc + 2.0])\n"
        "    out[0] = loop.results[0]\n",
        expected="import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "from flydsl.expr import arith\n"
        "from flydsl.expr.arith import ArithValue\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor):\n"
        "    c0 = arith.constant(0, index=True)\n"
        "    c4 = arith.constant(4, index=True)\n"
        "    c1 = arith.constant(1, index=True)\n"
        "    acc0 = arith.constant(0.0, type=fx.T.f32)\n"
        "    for loop_iv, loop_state in range(c0, c4, c1, init=[acc0]):\n"
        "        i = arith.index_cast(fx.T.i32, loop_iv)\n"
        "        acc = ArithValue(loop_state[0])\n"
        "        loop_results = yield [acc + 2.0]\n"
        "    out[0] = loop_results\n",
        unsafe=True,
        line=13,
        column=12,
        message="init=",
    ),
    Invalid(
        # The induction variable and the state inside the yielded value; a plain helper.
        "import flydsl.compiler as flyc\n"
        "from flydsl._mlir import ir\n"
        "from flydsl._mlir.dialects import scf\n"
        "def row_sum(row, c0, n, c1, acc0):\n"
        "    loop = scf.ForOp(c0, n, c1, [acc0])\n"
        "    with ir.InsertionPoint(loop.body):\n"
        "        scf.YieldOp([loop.inner_iter_args[0] + row[loop.induction_variable]])\n"
        "    return loop.results[0]\n",
        expected="import flydsl.compiler as flyc\n"
        "@flyc.jit\n"
        "def row_sum(row, c0, n, c1, acc0):\n"
        "    for loop_iv, loop_state in range(c0, n, c1, init=[acc0]):\n"
        "        loop_results = yield [loop_state[0] + row[loop_iv]]\n"
        "    return loop_results\n",
        unsafe=True,
    ),
    Invalid(
        # Nothing carried, index bounds from runtime values: range(..., init=[]).
        "import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "from flydsl._mlir import ir\n"
        "from flydsl._mlir.dialects import scf\n"
        "from flydsl.expr import arith\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor, n: fx.Int32):\n"
        "    hi = arith.index_cast(fx.T.index, n)\n"
        "    step = arith.constant(1, index=True)\n"
        "    loop = scf.ForOp(arith.constant(0, index=True), hi, step)\n"
        "    with ir.InsertionPoint(loop.body):\n"
        "        out[arith.index_cast(fx.T.i32, loop.induction_variable)] = 0.0\n"
        "        scf.YieldOp([])\n",
        expected="import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "from flydsl.expr import arith\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor, n: fx.Int32):\n"
        "    hi = arith.index_cast(fx.T.index, n)\n"
        "    step = arith.constant(1, index=True)\n"
        "    for loop_iv, _ in range(arith.constant(0, index=True), hi, step, init=[]):\n"
        "        out[arith.index_cast(fx.T.i32, loop_iv)] = 0.0\n",
        unsafe=True,
    ),
    Invalid(
        # Constant bounds, nothing carried, induction variable unused: range_constexpr.
        "import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "from flydsl._mlir import ir\n"
        "from flydsl._mlir.dialects import scf\n"
        "from flydsl.expr import arith\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor):\n"
        "    c0 = arith.index(0)\n"
        "    loop = scf.ForOp(c0, arith.index(3), arith.index(1))\n"
        "    with ir.InsertionPoint(loop.body):\n"
        "        fx.gpu.barrier()\n"
        "        scf.YieldOp([])\n",
        expected="import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "from flydsl.expr import arith\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor):\n"
        "    c0 = arith.index(0)\n"
        "    for _ in fx.range_constexpr(3):\n"
        "        fx.gpu.barrier()\n",
        unsafe=True,
    ),
    Invalid(
        # A raw i1 from a raw comparison (aiter's `arith.cmpi(...)` conditions): the rewriter
        # dispatches a Python `if` on any ir.Value to scf.if, as the raw op did.
        "import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "from flydsl._mlir import ir\n"
        "from flydsl._mlir.dialects import scf\n"
        "from flydsl.expr import arith\n"
        "@flyc.kernel\n"
        "def k(a, b):\n"
        "    ok = arith.cmpi(arith.CmpIPredicate.ult, a, b)\n"
        "    _if_ok = scf.IfOp(ok, results_=[], has_else=False)\n"
        "    with ir.InsertionPoint(_if_ok.then_block):\n"
        "        fx.gpu.barrier()\n"
        "        scf.YieldOp([])\n",
        expected="import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "from flydsl.expr import arith\n"
        "@flyc.kernel\n"
        "def k(a, b):\n"
        "    ok = arith.cmpi(arith.CmpIPredicate.ult, a, b)\n"
        "    if ok:\n"
        "        fx.gpu.barrier()\n",
        unsafe=True,
    ),
    Invalid(
        # An element of a list of raw conditions built in the function (aiter's
        # small_m_hgemm.py: `tile_actives[tile_i]`).
        "import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "from flydsl._mlir import ir\n"
        "from flydsl._mlir.dialects import scf\n"
        "from flydsl.expr import arith, range_constexpr\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor, n: fx.Int32):\n"
        "    tid = fx.thread_idx.x\n"
        "    actives = [arith.cmpi(arith.CmpIPredicate.ult, tid + t, n) for t in range_constexpr(2)]\n"
        "    for t in range_constexpr(2):\n"
        "        if_t = scf.IfOp(actives[t], results_=[], has_else=False)\n"
        "        with ir.InsertionPoint(if_t.then_block):\n"
        "            out[tid + t] = 0.0\n"
        "            scf.YieldOp([])\n",
        expected="import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "from flydsl.expr import arith, range_constexpr\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor, n: fx.Int32):\n"
        "    tid = fx.thread_idx.x\n"
        "    actives = [arith.cmpi(arith.CmpIPredicate.ult, tid + t, n) for t in range_constexpr(2)]\n"
        "    for t in range_constexpr(2):\n"
        "        if actives[t]:\n"
        "            out[tid + t] = 0.0\n",
        unsafe=True,
    ),
    Invalid(
        # A condition of unknown type (a parameter): a Python `if` might be decided while
        # tracing, so no fix.
        "import flydsl.compiler as flyc\n"
        "from flydsl._mlir.dialects import scf\n"
        "from .common import _if_then\n"
        "@flyc.kernel\n"
        "def k(ok):\n"
        "    with _if_then(scf.IfOp(ok)):\n"
        "        pass\n",
        expected=None,
        message="not known to be an fx boolean or a raw `ir.Value`",
    ),
    Invalid(
        # An op with results: no fix.
        "import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "from flydsl._mlir import ir\n"
        "from flydsl._mlir.dialects import scf\n"
        "@flyc.kernel\n"
        "def k(x: fx.Int32, n: fx.Int32):\n"
        "    if_op = scf.IfOp((x < n).ir_value(), [fx.T.i32], has_else=True)\n"
        "    with ir.InsertionPoint(if_op.then_block):\n"
        "        scf.YieldOp([x.ir_value()])\n"
        "    with ir.InsertionPoint(if_op.else_block):\n"
        "        scf.YieldOp([n.ir_value()])\n"
        "    return if_op.results[0]\n",
        expected=None,
        message="has results",
    ),
    Invalid(
        # The body rebinds a variable defined before it and read after it: a Python `if`
        # would carry it, a local function would not set it: no fix.
        "import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "from flydsl._mlir.dialects import scf\n"
        "from .common import _if_then\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor, x: fx.Int32, n: fx.Int32):\n"
        "    y = x\n"
        "    with _if_then(scf.IfOp((x < n).ir_value())):\n"
        "        y = n\n"
        "    out[0] = y\n",
        expected=None,
        message="rebinds `y` (defined before it), which a Python `if` would carry out as an `scf.if` result; "
        "nor can its body become a local function: `y`, set in it, is read after it (line 10)",
    ),
    Invalid(
        # The body reads a variable and then rebinds it: as a local function it would read
        # an unbound local: no fix.
        "import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "from flydsl._mlir.dialects import scf\n"
        "from .common import _if_then\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor, x: fx.Int32, n: fx.Int32):\n"
        "    y = out\n"
        "    with _if_then(scf.IfOp((x < n).ir_value())):\n"
        "        y[0] = x\n"
        "        y = n\n",
        expected=None,
        message="it reads `y` (line 9) from before it and then rebinds it",
    ),
    Invalid(
        # A local that only the body uses, rebound there (aiter's small_m_hgemm.py reuses an
        # op's name): as a local function the body keeps it to itself.
        "import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "from flydsl._mlir.dialects import scf\n"
        "from .common import _if_then\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor, x: fx.Int32, n: fx.Int32):\n"
        "    v = x + 1\n"
        "    out[0] = v\n"
        "    with _if_then(scf.IfOp((x < n).ir_value())):\n"
        "        v = n + 2\n"
        "        out[1] = v\n",
        expected="import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor, x: fx.Int32, n: fx.Int32):\n"
        "    v = x + 1\n"
        "    out[0] = v\n"
        "    def _then_branch():\n"
        "        v = n + 2\n"
        "        out[1] = v\n"
        "    if x < n:\n"
        "        _then_branch()\n",
        unsafe=True,
    ),
    Invalid(
        # A variable of the enclosing kernel, stored into in the body of a nested helper: a
        # Python `if` would have to carry it (aiter's splitk_hgemm.py: "initialized as
        # None"), so the body becomes a local function the `if` calls (guide §5).
        "import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
        "from flydsl._mlir.dialects import scf\nfrom flydsl.expr import arith\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor, n: fx.Int32):\n"
        "    tid = fx.thread_idx.x\n"
        "    def zero(i: fx.Int32):\n"
        "        with _if_then(scf.IfOp(arith.unwrap(i < n))):\n"
        "            out[i] = 0.0\n"
        "    zero(tid)\n"
        "from kernels.common.scf_helpers import _if_then\n",
        expected="import flydsl.compiler as flyc\nimport flydsl.expr as fx\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor, n: fx.Int32):\n"
        "    tid = fx.thread_idx.x\n"
        "    def zero(i: fx.Int32):\n"
        "        def _then_branch():\n"
        "            out[i] = 0.0\n"
        "        if i < n:\n"
        "            _then_branch()\n"
        "    zero(tid)\n",
        unsafe=True,
    ),
    Invalid(
        # A loop entered with __enter__() and left with __exit__() (aiter's moe_m_tile_map.py):
        # the body between them is indented under the Python `for`.
        "import flydsl.compiler as flyc\n"
        "from flydsl._mlir import ir\n"
        "from flydsl._mlir.dialects import scf\n"
        "def helper(c0, n, c1, init):\n"
        "    loop = scf.ForOp(c0, n, c1, [init])\n"
        "    ip = ir.InsertionPoint(loop.body)\n"
        "    ip.__enter__()\n"
        "    acc = loop.inner_iter_args[0]\n"
        "\n"
        "    scf.YieldOp([acc + loop.induction_variable])\n"
        "    ip.__exit__(None, None, None)\n"
        "    return loop.results[0]\n",
        expected="import flydsl.compiler as flyc\n"
        "@flyc.jit\n"
        "def helper(c0, n, c1, init):\n"
        "    for loop_iv, loop_state in range(c0, n, c1, init=[init]):\n"
        "        acc = loop_state[0]\n"
        "\n"
        "        loop_results = yield [acc + loop_iv]\n"
        "    return loop_results\n",
        unsafe=True,
    ),
    Invalid(
        # Nothing carried, the closing yield dropped, the body indented.
        "import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "from flydsl._mlir import ir\n"
        "from flydsl._mlir.dialects import scf\n"
        "from flydsl.expr import arith\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor, n: fx.Int32):\n"
        "    loop = scf.ForOp(arith.index(0), arith.index_cast(fx.T.index, n), arith.index(1))\n"
        "    loop_ip = ir.InsertionPoint(loop.body)\n"
        "    loop_ip.__enter__()\n"
        "    it = arith.index_cast(fx.T.i32, loop.induction_variable)\n"
        "    out[it] = 0.0\n"
        "    scf.YieldOp([])\n"
        "    loop_ip.__exit__(None, None, None)\n"
        "    out[0] = 1.0\n",
        expected="import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "from flydsl.expr import arith\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor, n: fx.Int32):\n"
        "    for loop_iv, _ in range(arith.index(0), arith.index_cast(fx.T.index, n), arith.index(1), init=[]):\n"
        "        it = arith.index_cast(fx.T.i32, loop_iv)\n"
        "        out[it] = 0.0\n"
        "    out[0] = 1.0\n",
        unsafe=True,
    ),
    Invalid(
        # A local function may hold a `range(..., init=...)` loop: its `yield` is the
        # rewriter's scf.yield (aiter's fused_compress_attn_gfx1250.py).
        "import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "from flydsl._mlir import ir\n"
        "from flydsl._mlir.dialects import scf\n"
        "from flydsl.expr import arith\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor, n: fx.Int32):\n"
        "    def fill(i: fx.Int32):\n"
        "        ok = arith.cmpi(arith.CmpIPredicate.ult, i, n)\n"
        "        _if_ok = scf.IfOp(ok)\n"
        "        with ir.InsertionPoint(_if_ok.then_block):\n"
        "            for j, state in range(0, 4, 1, init=[i]):\n"
        "                acc = yield [state[0] + j]\n"
        "            out[i] = acc\n"
        "            scf.YieldOp([])\n"
        "    fill(fx.thread_idx.x)\n",
        expected="import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "from flydsl.expr import arith\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor, n: fx.Int32):\n"
        "    def fill(i: fx.Int32):\n"
        "        ok = arith.cmpi(arith.CmpIPredicate.ult, i, n)\n"
        "        def _then_ok():\n"
        "            for j, state in range(0, 4, 1, init=[i]):\n"
        "                acc = yield [state[0] + j]\n"
        "            out[i] = acc\n"
        "        if ok:\n"
        "            _then_ok()\n"
        "    fill(fx.thread_idx.x)\n",
        unsafe=True,
    ),
    Invalid(
        # A then block holding a loop entered by hand: the loop's closing yield is not the
        # block's (aiter's moe_m_tile_map.py); both become Python control flow.
        "import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "from flydsl._mlir import ir\n"
        "from flydsl._mlir.dialects import scf\n"
        "from flydsl.expr import arith\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor, n: fx.Int32, m: fx.Int32):\n"
        "    ok = arith.cmpi(arith.CmpIPredicate.ult, n, m)\n"
        "    if_ok = scf.IfOp(ok)\n"
        "    with ir.InsertionPoint(if_ok.then_block):\n"
        "        loop = scf.ForOp(arith.index(0), arith.index_cast(fx.T.index, n), arith.index(1))\n"
        "        loop_ip = ir.InsertionPoint(loop.body)\n"
        "        loop_ip.__enter__()\n"
        "        out[arith.index_cast(fx.T.i32, loop.induction_variable)] = 0.0\n"
        "        scf.YieldOp([])\n"
        "        loop_ip.__exit__(None, None, None)\n"
        "        scf.YieldOp([])\n",
        expected="import flydsl.compiler as flyc\n"
        "import flydsl.expr as fx\n"
        "from flydsl.expr import arith\n"
        "@flyc.kernel\n"
        "def k(out: fx.Tensor, n: fx.Int32, m: fx.Int32):\n"
        "    ok = arith.cmpi(arith.CmpIPredicate.ult, n, m)\n"
        "    if ok:\n"
        "        for loop_iv, _ in range(arith.index(0), arith.index_cast(fx.T.index, n), arith.index(1), init=[]):\n"
        "            out[arith.index_cast(fx.T.i32, loop_iv)] = 0.0\n",
        unsafe=True,
        count=2,
    ),
    Invalid(
        # A plain helper with a Python loop over range(): @flyc.jit would make it an
        # scf.for, so no fix.
        "import flydsl.expr as fx\n"
        "from flydsl._mlir.dialects import scf\n"
        "from flydsl.expr import arith\n"
        "from .common import _if_then\n"
        "def store_rows(out: fx.Tensor, i: fx.Int32, n: fx.Int32):\n"
        "    ok = arith.cmpi(arith.CmpIPredicate.ult, i, n)\n"
        "    with _if_then(scf.IfOp(ok)):\n"
        "        for r in range(4):\n"
        "            out[i * 4 + r] = 0.0\n",
        expected=None,
        message="`store_rows` would need `@flyc.jit`, and its `for` over `range(...)` (line 8)",
    ),
    Invalid(
        # ... or a Python `if` whose branch binds a name read after it.
        "import flydsl.expr as fx\n"
        "from flydsl._mlir.dialects import scf\n"
        "from flydsl.expr import arith\n"
        "from .common import _if_then\n"
        "def store_one(out: fx.Tensor, i: fx.Int32, n: fx.Int32, wide: bool):\n"
        "    if wide:\n"
        "        v = 2.0\n"
        "    else:\n"
        "        v = 1.0\n"
        "    ok = arith.cmpi(arith.CmpIPredicate.ult, i, n)\n"
        "    with _if_then(scf.IfOp(ok)):\n"
        "        out[i] = v\n",
        expected=None,
        message="`v`, set under its `if` on line 6, is read after it (line 12)",
    ),
    Invalid(
        # The insertion point is used for more than entering and leaving: no fix.
        "from flydsl._mlir import ir\n"
        "from flydsl._mlir.dialects import scf\n"
        "def helper(c0, n, c1, init):\n"
        "    loop = scf.ForOp(c0, n, c1, [init])\n"
        "    ip = ir.InsertionPoint(loop.body)\n"
        "    ip.__enter__()\n"
        "    scf.YieldOp([loop.inner_iter_args[0]])\n"
        "    ip.__exit__(None, None, None)\n"
        "    ip.__enter__()\n"
        "    return loop.results[0]\n",
        expected=None,
        count=1,
        message="`ip` is used other than by `__enter__()` and `__exit__()`",
    ),
    Invalid(
        # _if_then on an op built elsewhere (a parameter): reported at the call.
        "from .common import _if_then\n"
        "def body(if_op, out, i):\n"
        "    with _if_then(if_op):\n"
        "        out[i] = 0.0\n",
        expected=None,
        line=3,
        column=10,
    ),
]

# FlyDSL's custom_all_reduce polling loops (6d5b0021), which its maintainers rewrote as
# Python `while` loops (ff196ddf).
_WHILE_HEAD = (
    "import flydsl.compiler as flyc\n"
    "from flydsl._mlir import ir\n"
    "from flydsl._mlir.dialects import scf\n"
    "from flydsl.expr.typing import T\n"
    "def _u(v):\n"
    "    return fx.Uint32(v)\n"
    "def _raw(v):\n"
    "    return v.ir_value() if hasattr(v, 'ir_value') else v\n"
    "@flyc.jit\n"
    "def sync(flag, rsrc, load, inv):\n"
    "    i32 = T.i32\n"
    "    init = load(rsrc)\n"
)
INVALID += [
    Invalid(
        "import flydsl.expr as fx\n" + _WHILE_HEAD
        + "    wait_loop = scf.WhileOp([i32], [init])\n"
        "    cond_block = ir.Block.create_at_start(wait_loop.before, [i32])\n"
        "    body_block = ir.Block.create_at_start(wait_loop.after, [i32])\n"
        "    with ir.InsertionPoint(cond_block):\n"
        "        cur = cond_block.arguments[0]\n"
        "        # Poll until the slot reaches the flag.\n"
        "        should_wait = _u(cur) < flag\n"
        "        scf.ConditionOp(_raw(should_wait), [cur])\n"
        "    with ir.InsertionPoint(body_block):\n"
        "        nxt = load(rsrc)\n"
        "        inv()  # drop stale L1 lines\n"
        "        scf.YieldOp([nxt])\n"
        "    return flag\n",
        expected="import flydsl.expr as fx\n"
        "import flydsl.compiler as flyc\n"
        "def _u(v):\n"
        "    return fx.Uint32(v)\n"
        "def _raw(v):\n"
        "    return v.ir_value() if hasattr(v, 'ir_value') else v\n"
        "@flyc.jit\n"
        "def sync(flag, rsrc, load, inv):\n"
        "    init = load(rsrc)\n"
        "    cur = init\n"
        "    # Poll until the slot reaches the flag.\n"
        "    while _u(cur) < flag:\n"
        "        nxt = load(rsrc)\n"
        "        inv()  # drop stale L1 lines\n"
        "        cur = nxt\n"
        "    return flag\n",
        unsafe=True,
        line=14,
        message="write a Python `while cond:` that reassigns the carried value (the rewriter builds the `scf.while`): raw `scf.WhileOp`",
    ),
    # Indented with tabs: the `while` and the carried assignments keep the lines' own
    # whitespace.
    Invalid(
        "import flydsl.expr as fx\n" + _WHILE_HEAD.replace("    ", "\t")
        + "\twait_loop = scf.WhileOp([i32], [init])\n"
        "\tcond_block = ir.Block.create_at_start(wait_loop.before, [i32])\n"
        "\tbody_block = ir.Block.create_at_start(wait_loop.after, [i32])\n"
        "\twith ir.InsertionPoint(cond_block):\n"
        "\t\tcur = cond_block.arguments[0]\n"
        "\t\tshould_wait = _u(cur) < flag\n"
        "\t\tscf.ConditionOp(_raw(should_wait), [cur])\n"
        "\twith ir.InsertionPoint(body_block):\n"
        "\t\tnxt = load(rsrc)\n"
        "\t\tscf.YieldOp([nxt])\n"
        "\treturn flag\n",
        expected="import flydsl.expr as fx\n"
        "import flydsl.compiler as flyc\n"
        "def _u(v):\n"
        "\treturn fx.Uint32(v)\n"
        "def _raw(v):\n"
        "\treturn v.ir_value() if hasattr(v, 'ir_value') else v\n"
        "@flyc.jit\n"
        "def sync(flag, rsrc, load, inv):\n"
        "\tinit = load(rsrc)\n"
        "\tcur = init\n"
        "\twhile _u(cur) < flag:\n"
        "\t\tnxt = load(rsrc)\n"
        "\t\tcur = nxt\n"
        "\treturn flag\n",
        unsafe=True,
        line=14,
    ),
    # The loop's result read after it: no fix.
    Invalid(
        "import flydsl.expr as fx\n" + _WHILE_HEAD
        + "    wait_loop = scf.WhileOp([i32], [init])\n"
        "    cond_block = ir.Block.create_at_start(wait_loop.before, [i32])\n"
        "    body_block = ir.Block.create_at_start(wait_loop.after, [i32])\n"
        "    with ir.InsertionPoint(cond_block):\n"
        "        cur = cond_block.arguments[0]\n"
        "        scf.ConditionOp(_raw(_u(cur) < flag), [cur])\n"
        "    with ir.InsertionPoint(body_block):\n"
        "        scf.YieldOp([load(rsrc)])\n"
        "    return wait_loop.results[0]\n",
        expected=None,
        message="no fix: `wait_loop` is used outside the loop's blocks (line 22)",
    ),
    # Under a private rewriter that keeps `while` as Python: no fix until it is `@flyc.jit`.
    Invalid(
        "import flydsl.expr as fx\n" + _WHILE_HEAD.replace("@flyc.jit", "@_dsl_if_only")
        + "    wait_loop = scf.WhileOp([i32], [init])\n"
        "    cond_block = ir.Block.create_at_start(wait_loop.before, [i32])\n"
        "    body_block = ir.Block.create_at_start(wait_loop.after, [i32])\n"
        "    with ir.InsertionPoint(cond_block):\n"
        "        cur = cond_block.arguments[0]\n"
        "        scf.ConditionOp(_raw(_u(cur) < flag), [cur])\n"
        "    with ir.InsertionPoint(body_block):\n"
        "        scf.YieldOp([load(rsrc)])\n",
        expected=None,
        message="no fix: `sync` is decorated with `@_dsl_if_only`, which may keep a `while` as Python: decorate it with `@flyc.jit` first",
    ),
    # The carried value handed to a raw builder (aiter's splitk_hgemm): the `while` would
    # give it an fx value, which `arith.CmpIOp` cannot take.
    Invalid(
        "import flydsl.expr as fx\nfrom flydsl.expr import arith\n" + _WHILE_HEAD
        + "    wait_loop = scf.WhileOp([i32], [init])\n"
        "    cond_block = ir.Block.create_at_start(wait_loop.before, [i32])\n"
        "    body_block = ir.Block.create_at_start(wait_loop.after, [i32])\n"
        "    with ir.InsertionPoint(cond_block):\n"
        "        cur = cond_block.arguments[0]\n"
        "        need_wait = arith.CmpIOp(arith.CmpIPredicate.eq, cur, arith.constant(0, type=i32)).result\n"
        "        scf.ConditionOp(need_wait, [cur])\n"
        "    with ir.InsertionPoint(body_block):\n"
        "        scf.YieldOp([load(rsrc)])\n",
        expected=None,
        message="no fix: `cur` reaches `arith.CmpIOp` (line 20), which may need the raw value: the `while` carries it as an fx value",
    ),
    # A condition op whose loop is built elsewhere.
    Invalid(
        "from flydsl._mlir.dialects import scf\n"
        "def cond(ok, cur):\n"
        "    scf.ConditionOp(ok, [cur])\n",
        expected=None,
        message="raw `scf.ConditionOp`; no fix: its `scf.WhileOp` is built elsewhere",
    ),
]
