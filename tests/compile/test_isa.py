"""Reading resources and instructions from an ISA file, and the occupancy estimate."""

from __future__ import annotations

from flydsl_ls.compile.isa import KernelResources, parse_isa
from flydsl_ls.compile.occupancy import estimate_occupancy

# A hand-written ISA file in the layout LLVM emits (directives, .set lines, YAML note).
ISA = """\
\t.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
\t.amdhsa_code_object_version 6
\t.text
\t.globl\tk_0
k_0:
\ts_load_dwordx2 s[4:5], s[0:1], 0x0
.LBB0_1:
\tv_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]
\tv_mfma_f32_32x32x8_f16 a[0:15], v[4:5], v[6:7], a[0:15]
\tds_read_b128 v[8:11], v12
\ts_cbranch_scc1 .LBB0_1
\ts_endpgm
.Lfunc_end0:
\t.size\tk_0, .Lfunc_end0-k_0
\t.section\t.rodata,"a",@progbits
\t.amdhsa_kernel k_0
\t\t.amdhsa_group_segment_fixed_size 40960
\t\t.amdhsa_private_segment_fixed_size 16
\t\t.amdhsa_next_free_vgpr 148
\t\t.amdhsa_next_free_sgpr 30
\t\t.amdhsa_accum_offset 132
\t.end_amdhsa_kernel
\t.text
\t.set .Lk_0.num_vgpr, 130
\t.set .Lk_0.num_agpr, 16
\t.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count:     16
    .args:
      - .address_space:  global
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
    .group_segment_fixed_size: 40960
    .max_flat_workgroup_size: 256
    .name:           k_0
    .private_segment_fixed_size: 16
    .reqd_workgroup_size:
      - 256
      - 1
      - 1
    .sgpr_count:     36
    .sgpr_spill_count: 0
    .vgpr_count:     130
    .vgpr_spill_count: 2
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa--gfx942
...
\t.end_amdgpu_metadata
"""


def test_resources_from_metadata():
    report = parse_isa(ISA)
    assert report.arch == "gfx942"
    (k,) = report.kernels
    assert (k.name, k.vgprs, k.agprs, k.sgprs) == ("k_0", 130, 16, 36)
    assert (k.lds_bytes, k.scratch_bytes, k.vgpr_spills) == (40960, 16, 2)
    assert k.accum_offset == 132
    assert k.workgroup_size == (256, 1, 1) and k.max_workgroup_size == 256


def test_instructions_in_order():
    report = parse_isa(ISA)
    assert report.instructions == [
        "s_load_dwordx2",
        "v_mfma_f32_32x32x8_f16",
        "v_mfma_f32_32x32x8_f16",
        "ds_read_b128",
        "s_cbranch_scc1",
        "s_endpgm",
    ]
    assert report.mfma == ["v_mfma_f32_32x32x8_f16"]
    assert report.opcode_counts()["v_mfma_f32_32x32x8_f16"] == 2


def test_occupancy_limits():
    (k,) = parse_isa(ISA).kernels
    occ = k.occupancy
    # unified file: align4(130) + 16 = 148 -> 152 in granules of 8 -> 512 // 152 = 3 waves
    assert occ.limits["VGPRs"] == 3
    # 64 KiB / 40 KiB = 1 workgroup of 4 waves per CU -> 1 wave per SIMD
    assert occ.limits["LDS"] == 1
    assert (occ.waves_per_simd, occ.limited_by) == (1, "LDS")
    assert "occupancy 1 waves/SIMD (LDS)" in k.summary()


def test_occupancy_per_arch():
    small = dict(name="k", vgprs=24, sgprs=20, workgroup_size=(256, 1, 1))
    assert estimate_occupancy(KernelResources(arch="gfx942", **small)).waves_per_simd == 8
    # gfx950 has 160 KiB of LDS: the 40 KiB kernel fits 4 workgroups -> 4 waves/SIMD
    big_lds = dict(small, lds_bytes=40960)
    assert estimate_occupancy(KernelResources(arch="gfx942", **big_lds)).waves_per_simd == 1
    assert estimate_occupancy(KernelResources(arch="gfx950", **big_lds)).waves_per_simd == 4
    # 256 VGPRs: 512 / 256 = 2 waves on CDNA3; gfx908 keeps VGPRs and AGPRs apart (256 / 256 = 1)
    assert estimate_occupancy(KernelResources(arch="gfx942", **dict(small, vgprs=256))).waves_per_simd == 2
    assert estimate_occupancy(KernelResources(arch="gfx908", **dict(small, vgprs=256))).waves_per_simd == 1
    # RDNA is not modelled: no made-up number
    assert estimate_occupancy(KernelResources(arch="gfx1100", **small)) is None


def test_no_metadata_is_not_an_error():
    report = parse_isa("\t.text\nfoo:\n\ts_endpgm\n")
    assert report.kernels == [] and report.instructions == ["s_endpgm"]
