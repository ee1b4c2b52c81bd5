/*
 * ops_vec_avx2.c - the cpu backend's elementwise vector kernels for AVX2 + FMA (8 lanes): ops_vec_simd.h compiled
 * with the AVX2 macros below. Built with -mavx2 -mfma (builtin.mk); only called when the CPU has both.
 */
#include <immintrin.h>

#define VF __m256
#define VN 8
#define VNAME(x) avx2_##x

/* Lane mask for the first k (1..7) lanes of a tail. */
static inline __m256i avx2_tail_mask(int64_t k)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

#define VLOAD(p) _mm256_loadu_ps(p)
#define VSTORE(p, v) _mm256_storeu_ps((p), (v))
#define VLOADN(p, k) _mm256_maskload_ps((p), avx2_tail_mask(k))
#define VSTOREN(p, v, k) _mm256_maskstore_ps((p), avx2_tail_mask(k), (v))
#define VSET1(x) _mm256_set1_ps(x)
#define VSET1_BITS(b) _mm256_castsi256_ps(_mm256_set1_epi32((int)(b)))
#define VADD(a, b) _mm256_add_ps((a), (b))
#define VSUB(a, b) _mm256_sub_ps((a), (b))
#define VMUL(a, b) _mm256_mul_ps((a), (b))
#define VDIV(a, b) _mm256_div_ps((a), (b))
#define VFMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define VMAX(a, b) _mm256_max_ps((a), (b))
#define VMIN(a, b) _mm256_min_ps((a), (b))
#define VAND(a, b) _mm256_and_ps((a), (b))
#define VOR(a, b) _mm256_or_ps((a), (b))
#define VROUND(a) _mm256_round_ps((a), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
/* 2^n for integral n in [-126, 127]: n + 127 in the exponent field */
#define VPOW2I(n)                                                                                                  \
    _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23))
/* a < b ? t : f */
#define VSEL_LT(a, b, t, f) _mm256_blendv_ps((f), (t), _mm256_cmp_ps((a), (b), _CMP_LT_OQ))

#include "ops_vec_simd.h"

const cpu_vops *cpu_vops_avx2(void)
{
    return &avx2_vops;
}
