	.amdgcn_target "amdgcn-amd-amdhsa-unknown-gfx942"
	.amdhsa_code_object_version 6
	.text
	.globl	add_kernel_0
	.p2align	8
	.type	add_kernel_0,@function
add_kernel_0:
	s_load_dwordx2 s[12:13], s[0:1], 0x0
	s_load_dwordx4 s[8:11], s[0:1], 0x10
	s_load_dwordx4 s[4:7], s[0:1], 0x28
	s_load_dwordx2 s[14:15], s[0:1], 0x40
	s_lshl_b32 s20, s2, 2
	s_ashr_i32 s3, s2, 31
	s_waitcnt lgkmcnt(0)
	s_mul_i32 s0, s20, s9
	s_mul_hi_u32 s1, s20, s8
	s_add_i32 s16, s1, s0
	s_lshr_b64 s[0:1], s[2:3], 30
	s_mul_i32 s1, s0, s8
	s_add_i32 s3, s16, s1
	s_mul_i32 s1, s20, s5
	s_mul_hi_u32 s16, s20, s4
	s_add_i32 s1, s16, s1
	s_mul_i32 s16, s0, s4
	s_add_i32 s17, s1, s16
	s_mul_i32 s1, s20, s15
	s_mul_hi_u32 s18, s20, s14
	v_lshrrev_b32_e32 v14, 6, v0
	s_mul_i32 s2, s20, s8
	s_add_i32 s1, s18, s1
	s_mul_i32 s0, s0, s14
	v_mad_u64_u32 v[2:3], s[18:19], s8, v14, 0
	s_add_i32 s1, s1, s0
	v_mov_b32_e32 v4, v3
	s_lshl_b64 s[2:3], s[2:3], 2
	v_mad_u64_u32 v[4:5], s[8:9], s9, v14, v[4:5]
	s_add_u32 s2, s12, s2
	v_mov_b32_e32 v3, v4
	s_addc_u32 s3, s13, s3
	v_lshlrev_b32_e32 v0, 4, v0
	v_lshl_add_u64 v[2:3], v[2:3], 2, s[2:3]
	v_and_b32_e32 v8, 0x3f0, v0
	v_mov_b32_e32 v9, 0
	v_mad_u64_u32 v[0:1], s[2:3], s4, v14, 0
	v_lshl_add_u64 v[10:11], v[2:3], 0, v[8:9]
	v_mov_b32_e32 v2, v1
	s_mul_i32 s16, s20, s4
	v_mad_u64_u32 v[2:3], s[2:3], s5, v14, v[2:3]
	s_lshl_b64 s[2:3], s[16:17], 2
	s_add_u32 s2, s10, s2
	v_mov_b32_e32 v1, v2
	s_addc_u32 s3, s11, s3
	v_lshl_add_u64 v[0:1], v[0:1], 2, s[2:3]
	v_lshl_add_u64 v[12:13], v[0:1], 0, v[8:9]
	global_load_dwordx4 v[0:3], v[10:11], off
	global_load_dwordx4 v[4:7], v[12:13], off
	s_mul_i32 s0, s20, s14
	v_mad_u64_u32 v[10:11], s[2:3], s14, v14, 0
	v_mov_b32_e32 v12, v11
	s_lshl_b64 s[0:1], s[0:1], 2
	v_mad_u64_u32 v[12:13], s[2:3], s15, v14, v[12:13]
	s_add_u32 s0, s6, s0
	v_mov_b32_e32 v11, v12
	s_addc_u32 s1, s7, s1
	v_lshl_add_u64 v[10:11], v[10:11], 2, s[0:1]
	v_lshl_add_u64 v[8:9], v[10:11], 0, v[8:9]
	s_waitcnt vmcnt(0)
	v_pk_add_f32 v[2:3], v[2:3], v[6:7]
	v_pk_add_f32 v[0:1], v[0:1], v[4:5]
	global_store_dwordx4 v[8:9], v[0:3], off
	s_endpgm
.Lfunc_end0:
