"""FLY203's test cases (run by tests/test_rules.py)."""

from flydsl_ls.analysis.rules.base import Invalid, Valid

VALID = [
    Valid(
        "import flydsl.compiler as flyc\nimport flydsl.expr as fx\n\n"
        "@fx.struct\nclass SharedStorage:\n    red: fx.Array[fx.Float32, 4, 16]\n\n"
        "@flyc.kernel\ndef k(x: fx.Tensor):\n"
        "    lds = fx.SharedAllocator().allocate(SharedStorage).peek()\n"
        "    lds.red.view(fx.make_layout(4, 1))[0] = x[0]\n"
    ),
    Valid(
        # A generic finalize() is not a SmemAllocator's.
        "class Builder:\n    def finalize(self):\n        return 1\n\nallocator = Builder()\nallocator.finalize()\n"
    ),
    Valid(
        "from flydsl.utils.smem_allocator import SMEM_CAPACITY_MAP, check_smem_capacity\n"
        "# allocator = SmemAllocator(None) and SmemPtr(base, 0, T.f32) in a comment\n"
        'doc = "allocator.finalize() emits the global"\n'
        'check_smem_capacity(4096, "gfx942")\n'
    ),
]
INVALID = [
    Invalid(
        # Module-level allocator, two buffers (explicit 16-byte alignment kept), finalize in the launcher.
        'import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl.expr.typing import T\n'
        'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
        '\n'
        'TILE = 16\n'
        'allocator = SmemAllocator(None, arch="gfx942")\n'
        'a_off = allocator._align(allocator.ptr, 16)\n'
        'allocator.ptr = a_off + TILE * TILE * 4\n'
        'b_off = allocator._align(allocator.ptr, 16)\n'
        'allocator.ptr = b_off + TILE * 2\n'
        '\n'
        '\n'
        '@flyc.kernel\n'
        'def k(A: fx.Tensor, B: fx.Tensor):\n'
        '    tid = fx.thread_idx.x\n'
        '    base = allocator.get_base()\n'
        '    smem_a = SmemPtr(base, a_off, T.f32, shape=(TILE, TILE))\n'
        '    smem_b = SmemPtr(base, b_off, T.f16, shape=(TILE,))\n'
        '    smem_a.store(A[tid, 0], [tid, 0])\n'
        '    fx.gpu.barrier()\n'
        '    B[tid] = smem_a.load([0, tid]) + smem_b.load([tid])\n'
        '\n'
        '\n'
        '@flyc.jit\n'
        'def launch(A: fx.Tensor, B: fx.Tensor):\n'
        '    allocator.finalize()\n'
        '    k(A, B).launch(grid=(1, 1, 1), block=(TILE, 1, 1))\n',
        expected='import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        '\n'
        'TILE = 16\n'
        '\n'
        '\n'
        '@fx.struct\n'
        'class SharedStorage:\n'
        '    a: fx.Array[fx.Float32, TILE * TILE, 16]\n'
        '    b: fx.Array[fx.Float16, TILE, 16]\n'
        '\n'
        '\n'
        '@flyc.kernel\n'
        'def k(A: fx.Tensor, B: fx.Tensor):\n'
        '    tid = fx.thread_idx.x\n'
        '    lds = fx.SharedAllocator().allocate(SharedStorage).peek()\n'
        '    smem_a = lds.a.view(fx.make_layout((TILE, TILE), (TILE, 1)))\n'
        '    smem_b = lds.b.view(fx.make_layout(TILE, 1))\n'
        '    fx.memref_store(A[tid, 0], smem_a, (tid, 0))\n'
        '    fx.gpu.barrier()\n'
        '    B[tid] = smem_a[0, tid] + smem_b[tid]\n'
        '\n'
        '\n'
        '@flyc.jit\n'
        'def launch(A: fx.Tensor, B: fx.Tensor):\n'
        '    k(A, B).launch(grid=(1, 1, 1), block=(TILE, 1, 1))\n',
        unsafe=True,
        line=7,
        column=13,
        count=4,
    ),
    Invalid(
        # Builder function: sizes known only at build time, get_base() inline, unbound-method store, cache priming, finalize under an InsertionPoint.
        'import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl._mlir import ir\n'
        'from flydsl.compiler.kernel_function import CompilationContext\n'
        'from flydsl.expr.typing import T\n'
        'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
        '\n'
        '\n'
        'def build(n):\n'
        '    slots = n // 64\n'
        '    allocator = SmemAllocator(None, arch="gfx942")\n'
        '    red_offset = allocator._align(allocator.ptr, 16)\n'
        '    allocator.ptr = red_offset + slots * 4\n'
        '\n'
        '    @flyc.kernel\n'
        '    def k(X: fx.Tensor):\n'
        '        s_red = SmemPtr(allocator.get_base(), red_offset, T.f32, shape=(slots,))\n'
        '        s_red.get()\n'
        '        SmemPtr.store(s_red, X[0], [0])\n'
        '\n'
        '    @flyc.jit\n'
        '    def launch(X: fx.Tensor):\n'
        '        allocator.finalized = False\n'
        '        ctx = CompilationContext.get_current()\n'
        '        with ir.InsertionPoint(ctx.gpu_module_body):\n'
        '            allocator.finalize()\n'
        '        k(X).launch(grid=(1, 1, 1), block=(n, 1, 1))\n'
        '\n'
        '    return launch\n',
        expected='import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        '\n'
        '\n'
        'def build(n):\n'
        '    slots = n // 64\n'
        '\n'
        '    @fx.struct\n'
        '    class SharedStorage:\n'
        '        s_red: fx.Array[fx.Float32, slots, 16]\n'
        '\n'
        '    @flyc.kernel\n'
        '    def k(X: fx.Tensor):\n'
        '        lds = fx.SharedAllocator().allocate(SharedStorage).peek()\n'
        '        s_red = lds.s_red.view(fx.make_layout(slots, 1))\n'
        '        fx.memref_store(X[0], s_red, 0)\n'
        '\n'
        '    @flyc.jit\n'
        '    def launch(X: fx.Tensor):\n'
        '        k(X).launch(grid=(1, 1, 1), block=(n, 1, 1))\n'
        '\n'
        '    return launch\n',
        unsafe=True,
        line=11,
        column=17,
        count=3,
    ),
    Invalid(
        # A `.get()` memref used by raw memref.load/store: the view is indexed instead.
        'import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl._mlir.dialects import memref\n'
        'from flydsl.expr.typing import T\n'
        'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
        '\n'
        'alloc = SmemAllocator(None, arch="gfx942")\n'
        'alloc.ptr = 64 * 4\n'
        '\n'
        '\n'
        '@flyc.kernel\n'
        'def k(X: fx.Tensor, i: fx.Int32):\n'
        '    lds_vals = SmemPtr(alloc.get_base(), 0, T.f32, shape=(64,)).get()\n'
        '    memref.store(X[i], lds_vals, [i])\n'
        '    X[i] = memref.load(lds_vals, [63 - i])\n',
        expected='import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        '\n'
        '\n'
        '@fx.struct\n'
        'class SharedStorage:\n'
        '    vals: fx.Array[fx.Float32, 64]\n'
        '\n'
        '\n'
        '@flyc.kernel\n'
        'def k(X: fx.Tensor, i: fx.Int32):\n'
        '    lds = fx.SharedAllocator().allocate(SharedStorage).peek()\n'
        '    lds_vals = lds.vals.view(fx.make_layout(64, 1))\n'
        '    fx.memref_store(X[i], lds_vals, i)\n'
        '    X[i] = lds_vals[63 - i]\n',
        unsafe=True,
        line=7,
        column=9,
        count=2,
    ),
    Invalid(
        # A ping-pong allocator pair used by one kernel: one struct (FlyDSL allows one
        # SharedAllocator per kernel); two views of one region become an `fx.union`, and
        # `_align` on sizes stays as arithmetic.
        'import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl.expr.typing import T\n'
        'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
        '\n'
        '\n'
        'def build(n):\n'
        '    pong = SmemAllocator(None, arch="gfx942", global_sym_name="smem0")\n'
        '    ping = SmemAllocator(None, arch="gfx942", global_sym_name="smem1")\n'
        '    region = max(n * 4, n * 2)\n'
        '    if pong._align(region, 1024) > 65536:\n'
        '        raise ValueError(n)\n'
        '    x_off = pong._align(pong.ptr, 16)\n'
        '    pong.ptr = x_off + region\n'
        '    tid_off = pong._align(pong.ptr, 4)\n'
        '    pong.ptr = tid_off + n * 4\n'
        '    y_off = ping._align(ping.ptr, 16)\n'
        '    ping.ptr = y_off + n * 4\n'
        '\n'
        '    @flyc.kernel\n'
        '    def k(X: fx.Tensor):\n'
        '        tid = fx.thread_idx.x\n'
        '        s_x = SmemPtr(pong.get_base(), x_off, T.f32, shape=(n,))\n'
        '        s_y = SmemPtr(ping.get_base(), y_off, T.f32, shape=(n,))\n'
        '        s_h = SmemPtr(pong.get_base(), x_off, T.f16, shape=(n,))\n'
        '        s_tid = SmemPtr(pong.get_base(), tid_off, T.i32, shape=(n,))\n'
        '        s_x.store(X[tid], [tid])\n'
        '        s_y.store(s_x.load([tid]), [tid])\n'
        '        s_h.store(X[tid], [tid])\n'
        '        s_tid.store(s_h.load([tid]), [tid])\n'
        '\n'
        '    @flyc.jit\n'
        '    def launch(X: fx.Tensor):\n'
        '        pong.finalize()\n'
        '        ping.finalize()\n'
        '        k(X).launch(grid=(1, 1, 1), block=(n, 1, 1))\n'
        '\n'
        '    return launch\n',
        expected='import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        '\n'
        '\n'
        'def build(n):\n'
        '    region = max(n * 4, n * 2)\n'
        '    if (region + 1024 - 1) // 1024 * 1024 > 65536:\n'
        '        raise ValueError(n)\n'
        '\n'
        '    @fx.union\n'
        '    class SXSHRegion:\n'
        '        s_x: fx.Array[fx.Float32, n, 16]\n'
        '        s_h: fx.Array[fx.Float16, n, 16]\n'
        '\n'
        '    @fx.struct\n'
        '    class SharedStorage:\n'
        '        s_x_s_h: SXSHRegion\n'
        '        s_tid: fx.Array[fx.Int32, n]\n'
        '        s_y: fx.Array[fx.Float32, n, 16]\n'
        '\n'
        '    @flyc.kernel\n'
        '    def k(X: fx.Tensor):\n'
        '        tid = fx.thread_idx.x\n'
        '        lds = fx.SharedAllocator().allocate(SharedStorage)\n'
        '        s_x = lds.s_x_s_h.s_x.peek().view(fx.make_layout(n, 1))\n'
        '        s_y = lds.s_y.peek().view(fx.make_layout(n, 1))\n'
        '        s_h = lds.s_x_s_h.s_h.peek().view(fx.make_layout(n, 1))\n'
        '        s_tid = lds.s_tid.peek().view(fx.make_layout(n, 1))\n'
        '        fx.memref_store(X[tid], s_x, tid)\n'
        '        fx.memref_store(s_x[tid], s_y, tid)\n'
        '        fx.memref_store(X[tid], s_h, tid)\n'
        '        fx.memref_store(s_h[tid], s_tid, tid)\n'
        '\n'
        '    @flyc.jit\n'
        '    def launch(X: fx.Tensor):\n'
        '        k(X).launch(grid=(1, 1, 1), block=(n, 1, 1))\n'
        '\n'
        '    return launch\n',
        unsafe=True,
        line=8,
        column=12,
        count=8,
    ),
    Invalid(
        # LDS used in a body function each kernel calls once: the allocation goes there.
        'import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl.expr.typing import T\n'
        'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
        '\n'
        '\n'
        'def build(n, scaled):\n'
        '    alloc = SmemAllocator(None, arch="gfx942")\n'
        '    alloc.ptr = n * 4\n'
        '\n'
        '    def _emit(X, scale):\n'
        '        s = SmemPtr(alloc.get_base(), 0, T.f32, shape=(n,))\n'
        '        s.store(X[0] * scale, [0])\n'
        '\n'
        '    if scaled:\n'
        '\n'
        '        @flyc.kernel\n'
        '        def k(X: fx.Tensor):\n'
        '            _emit(X, 2.0)\n'
        '\n'
        '    else:\n'
        '\n'
        '        @flyc.kernel\n'
        '        def k(X: fx.Tensor):\n'
        '            _emit(X, 1.0)\n'
        '\n'
        '    @flyc.jit\n'
        '    def launch(X: fx.Tensor):\n'
        '        alloc.finalize()\n'
        '        k(X).launch(grid=(1, 1, 1), block=(n, 1, 1))\n'
        '\n'
        '    return launch\n',
        expected='import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        '\n'
        '\n'
        'def build(n, scaled):\n'
        '    @fx.struct\n'
        '    class SharedStorage:\n'
        '        s: fx.Array[fx.Float32, n]\n'
        '\n'
        '    def _emit(X, scale):\n'
        '        lds = fx.SharedAllocator().allocate(SharedStorage).peek()\n'
        '        s = lds.s.view(fx.make_layout(n, 1))\n'
        '        fx.memref_store(X[0] * scale, s, 0)\n'
        '\n'
        '    if scaled:\n'
        '\n'
        '        @flyc.kernel\n'
        '        def k(X: fx.Tensor):\n'
        '            _emit(X, 2.0)\n'
        '\n'
        '    else:\n'
        '\n'
        '        @flyc.kernel\n'
        '        def k(X: fx.Tensor):\n'
        '            _emit(X, 1.0)\n'
        '\n'
        '    @flyc.jit\n'
        '    def launch(X: fx.Tensor):\n'
        '        k(X).launch(grid=(1, 1, 1), block=(n, 1, 1))\n'
        '\n'
        '    return launch\n',
        unsafe=True,
        line=8,
        column=13,
        count=3,
    ),
    Invalid(
        # The body function is called twice by one kernel: two SharedAllocators, no fix.
        'import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl.expr.typing import T\n'
        'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
        '\n'
        '\n'
        'def build(n, scaled):\n'
        '    alloc = SmemAllocator(None, arch="gfx942")\n'
        '    alloc.ptr = n * 4\n'
        '\n'
        '    def _emit(X, scale):\n'
        '        s = SmemPtr(alloc.get_base(), 0, T.f32, shape=(n,))\n'
        '        s.store(X[0] * scale, [0])\n'
        '\n'
        '    if scaled:\n'
        '\n'
        '        @flyc.kernel\n'
        '        def k(X: fx.Tensor):\n'
        '            _emit(X, 2.0)\n'
        '            _emit(X, 3.0)\n'
        '\n'
        '    else:\n'
        '\n'
        '        @flyc.kernel\n'
        '        def k(X: fx.Tensor):\n'
        '            _emit(X, 1.0)\n'
        '\n'
        '    @flyc.jit\n'
        '    def launch(X: fx.Tensor):\n'
        '        alloc.finalize()\n'
        '        k(X).launch(grid=(1, 1, 1), block=(n, 1, 1))\n'
        '\n'
        '    return launch\n',
        expected=None,
        line=8,
        column=13,
        count=3,
        message="`k` calls `_emit` more than once (line 20)",
    ),
    Invalid(
        # The ping allocator pads LDS under an `if`: the pong allocator, used by the same
        # kernel, is held back too (a kernel's LDS migrates at once).
        'import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl.expr.typing import T\n'
        'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
        '\n'
        '\n'
        'def build(n):\n'
        '    pong = SmemAllocator(None, arch="gfx942", global_sym_name="smem0")\n'
        '    ping = SmemAllocator(None, arch="gfx942", global_sym_name="smem1")\n'
        '    region = max(n * 4, n * 2)\n'
        '    if pong._align(region, 1024) > 65536:\n'
        '        raise ValueError(n)\n'
        '    x_off = pong._align(pong.ptr, 16)\n'
        '    pong.ptr = x_off + region\n'
        '    tid_off = pong._align(pong.ptr, 4)\n'
        '    pong.ptr = tid_off + n * 4\n'
        '    y_off = ping._align(ping.ptr, 16)\n'
        '    ping.ptr += n\n'
        '    if n > 64:\n'
        '        ping.ptr += n\n'
        '    ping.ptr = y_off + n * 4\n'
        '\n'
        '    @flyc.kernel\n'
        '    def k(X: fx.Tensor):\n'
        '        tid = fx.thread_idx.x\n'
        '        s_x = SmemPtr(pong.get_base(), x_off, T.f32, shape=(n,))\n'
        '        s_y = SmemPtr(ping.get_base(), y_off, T.f32, shape=(n,))\n'
        '        s_h = SmemPtr(pong.get_base(), x_off, T.f16, shape=(n,))\n'
        '        s_tid = SmemPtr(pong.get_base(), tid_off, T.i32, shape=(n,))\n'
        '        s_x.store(X[tid], [tid])\n'
        '        s_y.store(s_x.load([tid]), [tid])\n'
        '        s_h.store(X[tid], [tid])\n'
        '        s_tid.store(s_h.load([tid]), [tid])\n'
        '\n'
        '    @flyc.jit\n'
        '    def launch(X: fx.Tensor):\n'
        '        pong.finalize()\n'
        '        ping.finalize()\n'
        '        k(X).launch(grid=(1, 1, 1), block=(n, 1, 1))\n'
        '\n'
        '    return launch\n',
        expected=None,
        line=8,
        column=12,
        count=8,
        message="`ping`, also used by `k`, cannot be migrated (a kernel's LDS migrates at once): line 20: `ping.ptr` is moved under control flow",
    ),
    Invalid(
        # `_align` inside a shape: the struct and the view get the arithmetic, not the
        # allocator that goes away.
        'import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl.expr.typing import T\n'
        'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
        '\n'
        'N = 60\n'
        'alloc = SmemAllocator(None, arch="gfx942")\n'
        'alloc.ptr = alloc._align(N, 64) * 4\n'
        '\n'
        '\n'
        '@flyc.kernel\n'
        'def k(X: fx.Tensor):\n'
        '    s = SmemPtr(alloc.get_base(), 0, T.f32, shape=(alloc._align(N, 64),))\n'
        '    s.store(X[0], [0])\n',
        expected='import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        '\n'
        'N = 60\n'
        '\n'
        '\n'
        '@fx.struct\n'
        'class SharedStorage:\n'
        '    s: fx.Array[fx.Float32, (N + 64 - 1) // 64 * 64]\n'
        '\n'
        '\n'
        '@flyc.kernel\n'
        'def k(X: fx.Tensor):\n'
        '    lds = fx.SharedAllocator().allocate(SharedStorage).peek()\n'
        '    s = lds.s.view(fx.make_layout((N + 64 - 1) // 64 * 64, 1))\n'
        '    fx.memref_store(X[0], s, 0)\n',
        unsafe=True,
        line=7,
        column=9,
        count=2,
    ),
    Invalid(
        # Aliased import; two buffers overlap: no fix.
        'import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl.expr.typing import T\n'
        'from flydsl.utils.smem_allocator import SmemAllocator as LegacyAlloc, SmemPtr\n'
        '\n'
        'alloc = LegacyAlloc(None, arch="gfx942")\n'
        'alloc.ptr = 2048\n'
        '\n'
        '\n'
        '@flyc.kernel\n'
        'def k(X: fx.Tensor, off: fx.Int32):\n'
        '    base = alloc.get_base()\n'
        '    a = SmemPtr(base, 0, T.f32, shape=(256,))\n'
        '    b = SmemPtr(base, 512, T.f32, shape=(256,))\n'
        '    b.store(a.load([0]), [1])\n',
        expected=None,
        line=6,
        column=9,
        count=3,
        message='overlap',
    ),
    Invalid(
        # The SmemPtr is passed to a helper of this file: the helper receives the view.
        'import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl.expr.typing import T\n'
        'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
        '\n'
        'alloc = SmemAllocator(None, arch="gfx942")\n'
        'alloc.ptr = 1024\n'
        '\n'
        '\n'
        'def stage(ptr, v):\n'
        '    ptr.store(v, [0])\n'
        '\n'
        '\n'
        '@flyc.kernel\n'
        'def k(X: fx.Tensor):\n'
        '    s = SmemPtr(alloc.get_base(), 0, T.f32, shape=(256,))\n'
        '    stage(s, X[0])\n',
        expected='import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        '\n'
        '\n'
        'def stage(ptr, v):\n'
        '    fx.memref_store(v, ptr, 0)\n'
        '\n'
        '\n'
        '@fx.struct\n'
        'class SharedStorage:\n'
        '    s: fx.Array[fx.Float32, 256]\n'
        '\n'
        '\n'
        '@flyc.kernel\n'
        'def k(X: fx.Tensor):\n'
        '    lds = fx.SharedAllocator().allocate(SharedStorage).peek()\n'
        '    s = lds.s.view(fx.make_layout(256, 1))\n'
        '    stage(s, X[0])\n',
        unsafe=True,
        line=6,
        column=9,
        count=2,
    ),
    Invalid(
        # The helper is also called with something else: no fix.
        'import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl.expr.typing import T\n'
        'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
        '\n'
        'alloc = SmemAllocator(None, arch="gfx942")\n'
        'alloc.ptr = 1024\n'
        '\n'
        '\n'
        'def stage(ptr, v):\n'
        '    ptr.store(v, [0])\n'
        '\n'
        '\n'
        '@flyc.kernel\n'
        'def k(X: fx.Tensor):\n'
        '    s = SmemPtr(alloc.get_base(), 0, T.f32, shape=(256,))\n'
        '    stage(s, X[0])\n'
        '    stage(X, X[1])\n',
        expected=None,
        line=6,
        column=9,
        count=2,
        message="its call at line 18 passes something else",
    ),
    Invalid(
        # The offset is a kernel argument: no fix.
        'import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl.expr.typing import T\n'
        'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
        '\n'
        'alloc = SmemAllocator(None, arch="gfx942")\n'
        'alloc.ptr = 1024\n'
        '\n'
        '\n'
        '@flyc.kernel\n'
        'def k(X: fx.Tensor, n: fx.Int32):\n'
        '    base = alloc.get_base()\n'
        '    s = SmemPtr(base, n * 4, T.f32, shape=(16,))\n'
        '    s.store(X[0], [0])\n',
        expected=None,
        line=6,
        column=9,
        count=2,
        message='run time',
    ),
    Invalid(
        # get_base() escapes to a helper (raw LDS address arithmetic): no fix.
        'from flydsl._mlir.dialects import vector\n'
        'import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
        '\n'
        'alloc = SmemAllocator(None, arch="gfx942")\n'
        'alloc.ptr = 1024\n'
        '\n'
        '\n'
        'def lds_addr(base):\n'
        '    return base\n'
        '\n'
        '\n'
        '@flyc.kernel\n'
        'def k(X: fx.Tensor, v, i, ty):\n'
        '    addr = lds_addr(alloc.get_base())\n'
        '    view = SmemPtr(alloc.get_base(), 0, ty, shape=(16,)).get()\n'
        '    vector.store(v, view, [i])\n',
        expected=None,
        line=6,
        column=9,
        count=2,
        message='line 16: `alloc.get_base()` is passed to `lds_addr`, which passes the builtin memref on (line 11)',
    ),
    Invalid(
        # The base memref is also viewed by a raw memref.view (aiter's MoE gemm1): deleting
        # it would leave that read undefined, and a view is no builtin memref: no fix.
        'import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl._mlir.dialects import memref\n'
        'from flydsl.expr.typing import T\n'
        'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
        '\n'
        'alloc = SmemAllocator(None, arch="gfx942")\n'
        'alloc.ptr = 1024\n'
        '\n'
        '\n'
        '@flyc.kernel\n'
        'def k(X: fx.Tensor, ty, off):\n'
        '    base = alloc.get_base()\n'
        '    s = SmemPtr(base, 0, T.f32, shape=(16,))\n'
        '    s.store(X[0], [0])\n'
        '    view = memref.view(ty, base, off, sizes=[])\n',
        expected=None,
        line=7,
        column=9,
        count=2,
        message="line 16: the base memref `base` (`alloc.get_base()`) is used by `memref.view`",
    ),
    Invalid(
        # The memref from .get() feeds a raw vector.store: it becomes the field's fx pointer
        # and the store fx.ptr_store at p + i.
        'import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl._mlir.dialects import vector\n'
        'from flydsl.expr.typing import T\n'
        'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
        '\n'
        'alloc = SmemAllocator(None, arch="gfx942")\n'
        'alloc.ptr = 1024\n'
        '\n'
        '\n'
        '@flyc.kernel\n'
        'def k(X: fx.Tensor, v, i):\n'
        '    base = alloc.get_base()\n'
        '    s = SmemPtr(base, 64, T.f32, shape=(16,))\n'
        '    view = s.get()\n'
        '    vector.store(v, view, [i])\n',
        expected='import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        '\n'
        '\n'
        '@fx.struct\n'
        'class SharedStorage:\n'
        '    s: fx.Array[fx.Float32, 16, 64]\n'
        '\n'
        '\n'
        '@flyc.kernel\n'
        'def k(X: fx.Tensor, v, i):\n'
        '    lds = fx.SharedAllocator().allocate(SharedStorage).peek()\n'
        '    view = lds.s.ptr\n'
        '    fx.ptr_store(v, view + i)\n',
        line=7,
        column=9,
        count=2,
        unsafe=True,
        message='the whole kernel at once',
    ),
    Invalid(
        # An index-typed buffer has no fx.Array element class: no fix.
        'import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl.expr.typing import T\n'
        'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
        '\n'
        'alloc = SmemAllocator(None, arch="gfx942")\n'
        'alloc.ptr = 1024\n'
        '\n'
        '\n'
        '@flyc.kernel\n'
        'def k(X: fx.Tensor):\n'
        '    idx = SmemPtr(alloc.get_base(), 0, T.index, shape=(4,))\n'
        '    idx.store(X[0], [0])\n',
        expected=None,
        line=6,
        column=9,
        count=2,
        message='has no fx class',
    ),
    Invalid(
        # A SmemPtr whose base is a parameter; a generic .finalize() is not flagged.
        'from flydsl.utils.smem_allocator import SmemPtr\n'
        '\n'
        '\n'
        'def helper(base, T):\n'
        '    return SmemPtr(base, 0, T.f32, shape=(4,)).get()\n'
        '\n'
        '\n'
        'class Builder:\n'
        '    def finalize(self):\n'
        '        return 1\n'
        '\n'
        '\n'
        'b = Builder()\n'
        'b.finalize()\n',
        expected=None,
        line=5,
        column=12,
        count=1,
        message='does not come from',
    ),
    Invalid(
        # An allocator used only through its LDS address (an LDS-DMA or TDM op takes it), in a
        # helper of this file and in place: a whole-allocator byte array, `.ptr`, fx.ptrtoint.
        'import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl._mlir.dialects import memref\n'
        'from flydsl.expr import arith\n'
        'from flydsl.expr.typing import T\n'
        'from flydsl.utils.smem_allocator import SmemAllocator\n'
        'from tiles import SEGMENT\n'
        '\n'
        '_alloc_k = SmemAllocator(None, arch="gfx950", global_sym_name="smem_k")\n'
        '_alloc_k.ptr = SEGMENT\n'
        '_alloc_v = SmemAllocator(None, arch="gfx950", global_sym_name="smem_v")\n'
        '_alloc_v.ptr = 4096\n'
        '_lds_allocator = _alloc_k\n'
        '\n'
        '\n'
        'def lds_base_i32(memref_base):\n'
        '    return arith.index_cast(T.i32, memref.extract_aligned_pointer_as_index(memref_base))\n'
        '\n'
        '\n'
        '@flyc.kernel\n'
        'def k(X: fx.Tensor):\n'
        '    k_base = lds_base_i32(_alloc_k.get_base())\n'
        '    v_addr = memref.extract_aligned_pointer_as_index(_alloc_v.get_base())\n'
        '    X[0] = k_base + arith.index_cast(T.i32, v_addr)\n'
        '\n'
        '\n'
        '@flyc.jit\n'
        'def launch(X: fx.Tensor):\n'
        '    _alloc_k.finalize()\n'
        '    _alloc_v.finalize()\n'
        '    k(X).launch(grid=(1, 1, 1), block=(64, 1, 1))\n',
        expected='import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl.expr import arith\n'
        'from flydsl.expr.typing import T\n'
        'from tiles import SEGMENT\n'
        '\n'
        '\n'
        'def lds_base_i32(memref_base):\n'
        '    return arith.index_cast(T.i32, fx.Index(fx.ptrtoint(memref_base)))\n'
        '\n'
        '\n'
        '@fx.struct\n'
        'class SharedStorage:\n'
        '    k: fx.Array[fx.Uint8, SEGMENT, 1024]\n'
        '    v: fx.Array[fx.Uint8, 4096, 1024]\n'
        '\n'
        '\n'
        '@flyc.kernel\n'
        'def k(X: fx.Tensor):\n'
        '    lds = fx.SharedAllocator().allocate(SharedStorage).peek()\n'
        '    k_base = lds_base_i32(lds.k.ptr)\n'
        '    v_addr = fx.Index(fx.ptrtoint(lds.v.ptr))\n'
        '    X[0] = k_base + arith.index_cast(T.i32, v_addr)\n'
        '\n'
        '\n'
        '@flyc.jit\n'
        'def launch(X: fx.Tensor):\n'
        '    k(X).launch(grid=(1, 1, 1), block=(64, 1, 1))\n',
        line=9,
        column=12,
        count=4,
        message='the whole kernel at once',
        unsafe=True,
    ),
    Invalid(
        # The base viewed at a run-time byte offset: a typed fx pointer needs its alignment
        # known, so no fix, and the message says why.
        'import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl._mlir import ir\n'
        'from flydsl._mlir.dialects import memref\n'
                'from flydsl.utils.smem_allocator import SmemAllocator\n'
        '\n'
        'alloc = SmemAllocator(None, arch="gfx950")\n'
        'alloc.ptr = 1024\n'
        '\n'
        '\n'
        '@flyc.kernel\n'
        'def k(X: fx.Tensor, i):\n'
        '    scratch = memref.view(ir.MemRefType.get([16], ir.F32Type.get()), alloc.get_base(), i, sizes=[])\n'
        '    memref.store(X[0], scratch, [i])\n',
        expected=None,
        line=7,
        column=9,
        count=1,
        message='line 13: `i` is a parameter of the traced function `k`',
    ),
    Invalid(
        # The memref reaches a function of another module (aiter's c_shuffle_epilog): no fix,
        # and the message names the call (and, in a project, the op it reaches there).
        'import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl.expr.typing import T\n'
        'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
        '\n'
        'from .epilogues import shuffle_out\n'
        '\n'
        'alloc = SmemAllocator(None, arch="gfx950")\n'
        'alloc.ptr = 1024\n'
        '\n'
        '\n'
        '@flyc.kernel\n'
        'def k(X: fx.Tensor):\n'
        '    lds_out = SmemPtr(alloc.get_base(), 0, T.f16, shape=(512,)).get()\n'
        '    body_out = lds_out\n'
        '    shuffle_out(X, lds_out=body_out)\n',
        expected=None,
        line=8,
        column=9,
        count=2,
        message='line 16: the LDS memref `body_out` is passed to `shuffle_out` (from `.epilogues`); a fix edits this file only',
    ),
    Invalid(
        # The memref goes to a function of another module of the project (aiter's
        # c_shuffle_epilog): the same fix gives its LDS load the pointer form beside the old
        # one, so a caller still passing a memref keeps working.
        'import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl._mlir.dialects import vector\n'
        'from flydsl.expr.typing import T\n'
        'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
        '\n'
        'from .epilogues import shuffle_out\n'
        '\n'
        'alloc = SmemAllocator(None, arch="gfx942")\n'
        'out_offset = alloc._align(alloc.ptr, 16)\n'
        'alloc.ptr = out_offset + 512\n'
        '\n'
        '\n'
        '@flyc.kernel\n'
        'def k(Y: fx.Tensor, idx):\n'
        '    lds_out = SmemPtr(alloc.get_base(), out_offset, T.f16, shape=(256,)).get()\n'
        '    vector.store(fx.Vector.filled(4, 1.0, fx.Float16).ir_value(), lds_out, [idx])\n'
        '    shuffle_out(Y, lds_out, idx)\n',
        files={
            "epilogues.py": (
                'import flydsl.expr as fx\n'
                'from flydsl._mlir import ir\n'
                'from flydsl._mlir.dialects import vector\n'
                '\n'
                '\n'
                'def shuffle_out(Y, lds_out, idx):\n'
                '    frag = vector.load(ir.VectorType.get([4], ir.F16Type.get()), lds_out, [idx])\n'
                '    fx.ptr_store(fx.Vector(frag), fx.get_iter(Y))\n'
            ),
        },
        expected=(
            'import flydsl.compiler as flyc\n'
            'import flydsl.expr as fx\n'
            '\n'
            'from .epilogues import shuffle_out\n'
            '\n'
            '\n'
            '@fx.struct\n'
            'class SharedStorage:\n'
            '    out: fx.Array[fx.Float16, 256, 16]\n'
            '\n'
            '\n'
            '@flyc.kernel\n'
            'def k(Y: fx.Tensor, idx):\n'
            '    lds = fx.SharedAllocator().allocate(SharedStorage).peek()\n'
            '    lds_out = lds.out.ptr\n'
            '    fx.ptr_store(fx.Vector.filled(4, 1.0, fx.Float16).ir_value(), lds_out + idx)\n'
            '    shuffle_out(Y, lds_out, idx)\n'
        ),
        expected_files={
            "epilogues.py": (
                'import flydsl.expr as fx\n'
                'from flydsl._mlir import ir\n'
                'from flydsl._mlir.dialects import vector\n'
                '\n'
                '\n'
                'def shuffle_out(Y, lds_out, idx):\n'
                '    frag = (fx.ptr_load(lds_out + idx, result_type=ir.VectorType.get([4], ir.F16Type.get())) '
                'if isinstance(lds_out, fx.Pointer) else vector.load(ir.VectorType.get([4], ir.F16Type.get()), '
                'lds_out, [idx]))\n'
                '    fx.ptr_store(fx.Vector(frag), fx.get_iter(Y))\n'
            ),
        },
        unsafe=True,
        line=9,
        column=9,
        count=2,
    ),
    Invalid(
        # Offsets that are not static (LDS padded under an `if` to cap occupancy, an fp8
        # element type chosen by arch, a base also viewed as f32 scratch by `memref.view`):
        # the old layout is kept, one byte array per allocator sized as `finalize()` sized
        # its global; the bookkeeping stays as arithmetic, each view is a typed pointer at its
        # byte offset; fp8 vectors go through LDS as bytes (no fp8 vector lowers through a
        # pointer on FlyDSL 0.3.1).
        'import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl._mlir.dialects import memref, vector\n'
        'from flydsl._mlir.extras import types as _mT\n'
        'from flydsl.expr import arith\n'
        'from flydsl.expr.gpu import lds_space\n'
        'from flydsl.expr.typing import T\n'
        'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
        'from kernels.kernels_common import default_f8_type\n'
        '\n'
        '\n'
        'def build(n, waves_per_eu):\n'
        '    pong = SmemAllocator(None, arch="gfx942", global_sym_name="smem0")\n'
        '    ping = SmemAllocator(None, arch="gfx942", global_sym_name="smem1")\n'
        '    x_off = pong._align(pong.ptr, 16)\n'
        '    pong.ptr = x_off + n\n'
        '    tid_off = pong._align(pong.ptr, 4)\n'
        '    pong.ptr = tid_off + 64\n'
        '    y_off = ping._align(ping.ptr, 16)\n'
        '    ping.ptr = y_off + n\n'
        '    if waves_per_eu is not None:\n'
        '        cur = pong._align(pong.ptr, 128) + ping._align(ping.ptr, 128)\n'
        '        if cur < 65536 // waves_per_eu:\n'
        '            ping.ptr += 65536 // waves_per_eu - cur\n'
        '\n'
        '    @flyc.kernel\n'
        '    def k(X: fx.Tensor, i):\n'
        '        base_pong = pong.get_base()\n'
        '        base_ping = ping.get_base()\n'
        '        s_x = SmemPtr(base_pong, x_off, default_f8_type(), shape=(n,)).get()\n'
        '        s_y = SmemPtr(base_ping, y_off, default_f8_type(), shape=(n,)).get()\n'
        '        s_tid = SmemPtr(base_pong, tid_off, T.i32, shape=(16,)).get()\n'
        '        vec16 = T.vec(16, default_f8_type())\n'
        '        vector.store(vector.bitcast(vec16, X[i]), s_y, [i])\n'
        '        a = vector.bitcast(T.vec(2, T.i64), vector.load(vec16, s_x, [i]))\n'
        '        vector.store(a, s_tid, [i])\n'
        '        scr = memref.view(_mT.memref(n // 4, T.f32, memory_space=lds_space()), base_ping, arith.constant(y_off, index=True), sizes=[])\n'
        '        vector.store(vector.load(T.vec(4, T.f32), scr, [i]), scr, [i])\n'
        '\n'
        '    @flyc.jit\n'
        '    def launch(X: fx.Tensor):\n'
        '        pong.finalize()\n'
        '        ping.finalize()\n'
        '        k(X, 0).launch(grid=(1, 1, 1), block=(64, 1, 1))\n'
        '\n'
        '    return launch\n',
        expected='import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl._mlir.dialects import vector\n'
        'from flydsl.expr.typing import T\n'
        'from kernels.kernels_common import default_f8_type\n'
        '\n'
        '\n'
        'def build(n, waves_per_eu):\n'
        '    pong_bytes = 0\n'
        '    ping_bytes = 0\n'
        '    x_off = (pong_bytes + 16 - 1) // 16 * 16\n'
        '    pong_bytes = x_off + n\n'
        '    tid_off = (pong_bytes + 4 - 1) // 4 * 4\n'
        '    pong_bytes = tid_off + 64\n'
        '    y_off = (ping_bytes + 16 - 1) // 16 * 16\n'
        '    ping_bytes = y_off + n\n'
        '    if waves_per_eu is not None:\n'
        '        cur = (pong_bytes + 128 - 1) // 128 * 128 + (ping_bytes + 128 - 1) // 128 * 128\n'
        '        if cur < 65536 // waves_per_eu:\n'
        '            ping_bytes += 65536 // waves_per_eu - cur\n'
        '\n'
        '    @fx.struct\n'
        '    class SharedStorage:\n'
        '        pong: fx.Array[fx.Uint8, max(128, (pong_bytes + 127) // 128 * 128), 1024]\n'
        '        ping: fx.Array[fx.Uint8, max(128, (ping_bytes + 127) // 128 * 128), 1024]\n'
        '\n'
        '    @flyc.kernel\n'
        '    def k(X: fx.Tensor, i):\n'
        '        lds = fx.SharedAllocator().allocate(SharedStorage).peek()\n'
        '        s_x = fx.recast_iter(fx.Numeric.from_ir_type(default_f8_type()), lds.pong.ptr + x_off)\n'
        '        s_y = fx.recast_iter(fx.Numeric.from_ir_type(default_f8_type()), lds.ping.ptr + y_off)\n'
        '        s_tid = fx.recast_iter(fx.Int32, lds.pong.ptr + tid_off)\n'
        '        vec16 = T.vec(16, default_f8_type())\n'
        '        fx.ptr_store(X[i], s_y + fx.Int32(i))\n'
        '        a = vector.bitcast(T.vec(2, T.i64), fx.ptr_load(s_x + fx.Int32(i), result_type=fx.T.vec(16, fx.T.i8)).bitcast(fx.Numeric.from_ir_type(default_f8_type())))\n'
        '        fx.ptr_store(a, s_tid + fx.Int32(i))\n'
        '        scr = fx.recast_iter(fx.Float32, lds.ping.ptr + y_off)\n'
        '        fx.ptr_store(fx.ptr_load(scr + fx.Int32(i), result_type=T.vec(4, T.f32)), scr + fx.Int32(i))\n'
        '\n'
        '    @flyc.jit\n'
        '    def launch(X: fx.Tensor):\n'
        '        k(X, 0).launch(grid=(1, 1, 1), block=(64, 1, 1))\n'
        '\n'
        '    return launch\n',
        unsafe=True,
        line=13,
        column=12,
        count=7,
        settings={"flydsl_version": "0.3.1"},
    ),
    Invalid(
        # One region whose size a condition chooses, an fp8 view held in a name and read as
        # `.get()` and `.byte_offset`, an output view that may be None (aiter's mixed-MoE
        # stage 2): one byte array, the offsets as the builder computes them.
        'import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from flydsl._mlir.dialects import memref, vector\n'
        'from flydsl.expr.typing import T\n'
        'from flydsl.utils.smem_allocator import SmemAllocator, SmemPtr\n'
        'from kernels.kernels_common import default_f8_type\n'
        '\n'
        '\n'
        'def build(tile_m, elem_bytes, use_out):\n'
        '    allocator = SmemAllocator(None, arch="gfx942", global_sym_name="smem0")\n'
        '    x_bytes = 2 * tile_m * 64\n'
        '    total = x_bytes + tile_m * 8\n'
        '    total_elems = total if elem_bytes == 1 else total // 2\n'
        '    region_offset = allocator._align(allocator.ptr, 16)\n'
        '    allocator.ptr = region_offset + total_elems * elem_bytes\n'
        '\n'
        '    @flyc.kernel\n'
        '    def k(X: fx.Tensor, i):\n'
        '        base_ptr = allocator.get_base()\n'
        '        lds_x_ptr = SmemPtr(base_ptr, region_offset, default_f8_type(), shape=(total_elems,))\n'
        '        lds_x = lds_x_ptr.get()\n'
        '        lds_out = SmemPtr(base_ptr, lds_x_ptr.byte_offset, T.bf16, shape=(tile_m * 64,)).get() if use_out else None\n'
        '        tid_off = x_bytes\n'
        '        lds_tid = SmemPtr(base_ptr, lds_x_ptr.byte_offset + tid_off, T.i32, shape=(tile_m,)).get()\n'
        '        vector.store(vector.bitcast(T.vec(16, default_f8_type()), X[i]), lds_x, [i])\n'
        '        if lds_out is not None:\n'
        '            vector.store(X[i], lds_out, [i])\n'
        '        memref.store(X[i], lds_tid, [i])\n'
        '\n'
        '    @flyc.jit\n'
        '    def launch(X: fx.Tensor):\n'
        '        allocator.finalize()\n'
        '        k(X, 0).launch(grid=(1, 1, 1), block=(64, 1, 1))\n'
        '\n'
        '    return launch\n',
        expected='import flydsl.compiler as flyc\n'
        'import flydsl.expr as fx\n'
        'from kernels.kernels_common import default_f8_type\n'
        '\n'
        '\n'
        'def build(tile_m, elem_bytes, use_out):\n'
        '    region_bytes = 0\n'
        '    x_bytes = 2 * tile_m * 64\n'
        '    total = x_bytes + tile_m * 8\n'
        '    total_elems = total if elem_bytes == 1 else total // 2\n'
        '    region_offset = (region_bytes + 16 - 1) // 16 * 16\n'
        '    region_bytes = region_offset + total_elems * elem_bytes\n'
        '\n'
        '    @fx.struct\n'
        '    class SharedStorage:\n'
        '        region: fx.Array[fx.Uint8, max(128, (region_bytes + 127) // 128 * 128), 1024]\n'
        '\n'
        '    @flyc.kernel\n'
        '    def k(X: fx.Tensor, i):\n'
        '        lds = fx.SharedAllocator().allocate(SharedStorage).peek()\n'
        '        lds_x = fx.recast_iter(fx.Numeric.from_ir_type(default_f8_type()), lds.region.ptr + region_offset)\n'
        '        lds_out = fx.recast_iter(fx.BFloat16, lds.region.ptr + region_offset) if use_out else None\n'
        '        tid_off = x_bytes\n'
        '        lds_tid = fx.recast_iter(fx.Int32, lds.region.ptr + (region_offset + tid_off))\n'
        '        fx.ptr_store(X[i], lds_x + fx.Int32(i))\n'
        '        if lds_out is not None:\n'
        '            fx.ptr_store(X[i], lds_out + fx.Int32(i))\n'
        '        fx.ptr_store(X[i], lds_tid + fx.Int32(i))\n'
        '\n'
        '    @flyc.jit\n'
        '    def launch(X: fx.Tensor):\n'
        '        k(X, 0).launch(grid=(1, 1, 1), block=(64, 1, 1))\n'
        '\n'
        '    return launch\n',
        unsafe=True,
        line=10,
        column=17,
        count=5,
        settings={"flydsl_version": "0.3.1"},
    ),
]

# The struct view's name is one the kernel neither reads nor binds (`lds`, `lds2` are).
_TAKEN = ("    tid = fx.thread_idx.x\n", "    tid = fx.thread_idx.x\n    lds = tid\n    lds2 = [lds, tid]\n")
INVALID.append(
    Invalid(
        INVALID[0].code.replace(*_TAKEN, 1),
        expected=INVALID[0].expected.replace(*_TAKEN, 1)
        .replace("    lds = fx.SharedAllocator()", "    lds3 = fx.SharedAllocator()")
        .replace(" = lds.", " = lds3."),
        unsafe=INVALID[0].unsafe,
        count=INVALID[0].count,
    )
)
