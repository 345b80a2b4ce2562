"""Cases both trees share: FlyDSL's and aiter's intranode expert-parallel dispatch/combine
kernels and MegaMoE's dispatch helpers, with mori's shmem waits stubbed. Each case table
loads this file by path (the tables themselves are loaded by path) and says how its tree
imports the kernels."""

def mori_stub():
    """mori (ROCm's shmem library) is not installed here: a stand-in ``mori.ir.flydsl`` whose
    waits emit nothing. Compile-only: the kernels' own loads, stores and arithmetic around
    the waits are what the audit compares."""
    import sys
    import types

    if "mori.ir.flydsl" in sys.modules:
        return
    import flydsl.expr as fx

    waits = types.ModuleType("mori.ir.flydsl")

    def wait(addr, value):
        return fx.Int32(0)

    for name in ("int32_wait_until_equals", "int32_wait_until_greater_than", "int64_wait_until_equals", "uint64_wait_until_equals"):
        setattr(waits, name, wait)
    mori, ir = types.ModuleType("mori"), types.ModuleType("mori.ir")
    mori.ir, ir.flydsl = ir, waits
    sys.modules.update({"mori": mori, "mori.ir": ir, "mori.ir.flydsl": waits})


EP = dict(rank=0, npes=2, experts_per_token=2, hidden_dim=256, max_tok_per_rank=16, block_num=2, warp_num_per_block=4)


def ep_dispatch(make_dispatch_jit):
    import torch

    mori_stub()
    fn = make_dispatch_jit(experts_per_rank=4, data_type=torch.bfloat16, **EP)
    return fn, (*[0] * 25, 8)  # 25 raw addresses, the token count


def ep_combine(make_combine_jit):
    import torch

    mori_stub()
    fn = make_combine_jit(data_type=torch.bfloat16, enable_weights=True, **EP)
    return fn, (*[0] * 18, 8)


def mega_moe_dispatch(variant, dispatch_module):
    """MegaMoE's dispatch helpers (``@flyc.jit`` functions stage1's kernel calls) in a kernel of
    their own, with small compile-time configs and raw addresses as arguments."""

    def case(device):
        mori_stub()
        import flydsl.compiler as flyc
        import flydsl.expr as fx

        d = dispatch_module()
        shape = dict(fz_npes=2, fz_epr=4, fz_k=2, fz_mtpr=64, fz_total_experts=8)
        payload = dict(fz_nbytes=512, fz_n_i32=128, fz_scale_n_i32=4, fz_enable_scales=True)

        @flyc.kernel
        def dispatch_kernel(
            addr_disp: fx.Int64, addr_in_tok: fx.Int64, addr_in_idx: fx.Int64, addr_in_wts: fx.Int64,
            addr_in_sc: fx.Int64, cur: fx.Int32, parity: fx.Int32, expected: fx.Int32,
        ):
            slot = fx.Int32(fx.block_idx.x)
            addrs = dict(addr_disp=addr_disp, parity=parity, expected=expected)
            if fx.const_expr(variant == "plan"):
                d.emit_dispatch_plan(
                    num_waves=4, fz_rank=0, fz_tile_m=32, i32_cur_tok=cur, addr_in_idx=addr_in_idx,
                    external_grouping=False, external_counting=False, dispatch_blocks=2, **shape, **addrs,
                )
            elif fx.const_expr(variant == "fixed_slot"):
                d.emit_direct_fixed_slot_payload(
                    num_waves=4, fz_rank=0, fz_cap=64, addr_in_tok=addr_in_tok, addr_in_idx=addr_in_idx,
                    addr_in_wts=addr_in_wts, addr_in_sc=addr_in_sc, i32_cur_tok=cur, dispatch_blocks=2,
                    producer_slot=slot, **shape, **payload, **addrs,
                )
                d.emit_direct_fixed_slot_finalize(
                    fz_npes=2, fz_epr=4, fz_cap=64, fz_mtpr=64, fz_rank=0, fz_tile_m=32, n_tiles=2, **addrs
                )
            elif fx.const_expr(variant == "group"):
                d.emit_dispatch_group(
                    num_waves=4, fz_k=2, fz_total_experts=8, i32_cur_tok=cur, addr_in_idx=addr_in_idx,
                    dispatch_blocks=2, producer_slot=slot, external_counting=False, **addrs,
                )
            else:
                d.emit_dispatch_payload(
                    num_waves=4, fz_epr=4, fz_k=2, fz_mtpr=64, fz_rank=0, fz_total_experts=8, fz_safe_end_i32=128,
                    addr_in_tok=addr_in_tok, addr_in_wts=addr_in_wts, addr_in_sc=addr_in_sc, dispatch_blocks=2,
                    producer_slot=slot, producers_per_destination=fx.Int32(1), chunks_per_destination=fx.Int32(1),
                    **payload, **addrs,
                )

        @flyc.jit
        def launch(
            addr_disp: fx.Int64, addr_in_tok: fx.Int64, addr_in_idx: fx.Int64, addr_in_wts: fx.Int64,
            addr_in_sc: fx.Int64, cur: fx.Int32, parity: fx.Int32, expected: fx.Int32,
            stream: fx.Stream = fx.Stream(None),
        ):
            dispatch_kernel(addr_disp, addr_in_tok, addr_in_idx, addr_in_wts, addr_in_sc, cur, parity, expected).launch(
                grid=(2, 1, 1), block=(256, 1, 1), stream=stream
            )

        return launch, (0, 0, 0, 0, 0, 8, 0, 1)

    return case
