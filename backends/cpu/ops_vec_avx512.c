/*
 * ops_vec_avx512.c - the cpu backend's elementwise vector kernels for AVX-512F/DQ (16 lanes): ops_vec_simd.h
 * compiled with the AVX-512 macros below. Built with -mavx512f -mavx512dq -mfma (builtin.mk); only called when the
 * CPU has them.
 */
#include <immintrin.h>

#define VF __m512
#define VN 16
#define VNAME(x) avx512_##x

#define VMASK(k) ((__mmask16)((1u << (k)) - 1u))
#define VLOAD(p) _mm512_loadu_ps(p)
#define VSTORE(p, v) _mm512_storeu_ps((p), (v))
#define VLOADN(p, k) _mm512_maskz_loadu_ps(VMASK(k), (p))
#define VSTOREN(p, v, k) _mm512_mask_storeu_ps((p), VMASK(k), (v))
#define VSET1(x) _mm512_set1_ps(x)
#define VSET1_BITS(b) _mm512_castsi512_ps(_mm512_set1_epi32((int)(b)))
#define VADD(a, b) _mm512_add_ps((a), (b))
#define VSUB(a, b) _mm512_sub_ps((a), (b))
#define VMUL(a, b) _mm512_mul_ps((a), (b))
#define VDIV(a, b) _mm512_div_ps((a), (b))
#define VFMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define VMAX(a, b) _mm512_max_ps((a), (b))
#define VMIN(a, b) _mm512_min_ps((a), (b))
#define VAND(a, b) _mm512_and_ps((a), (b))
#define VOR(a, b) _mm512_or_ps((a), (b))
#define VROUND(a) _mm512_roundscale_ps((a), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
/* 2^n for integral n in [-126, 127]: n + 127 in the exponent field */
#define VPOW2I(n)                                                                                                  \
    _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23))
/* a < b ? t : f */
#define VSEL_LT(a, b, t, f) _mm512_mask_blend_ps(_mm512_cmp_ps_mask((a), (b), _CMP_LT_OQ), (f), (t))

#include "ops_vec_simd.h"

const cpu_vops *cpu_vops_avx512(void)
{
    return &avx512_vops;
}
