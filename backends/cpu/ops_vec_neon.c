/*
 * ops_vec_neon.c - the cpu backend's elementwise vector kernels for AArch64 Advanced SIMD with FMA (4 lanes):
 * ops_vec_simd.h compiled with the NEON macros below. NEON is baseline on AArch64; on any other architecture this
 * file compiles to cpu_vops_neon() returning NULL, so a build that includes it everywhere still links.
 * NEON has no masked loads: a tail of 1..3 elements goes through a 4-float stack buffer, reading and writing
 * exactly the tail. vmaxq_f32 / vminq_f32 (FMAX / FMIN) return NaN when either operand is NaN, so the header's
 * "data second" rule holds as on x86. Rounding to an integer is vrndnq_f32 (to nearest, ties to even, as x86's
 * _MM_FROUND_TO_NEAREST_INT) and the conversion vcvtnq_s32_f32, exact for the integral n the header builds 2^n from.
 */
#include <stddef.h>

#include "plan.h"

#if defined(__aarch64__)
#include <arm_neon.h>
#include <string.h>

#define VF float32x4_t
#define VN 4
#define VNAME(x) neon_##x

static inline float32x4_t neon_loadn(const float *p, int64_t k)
{
    float buf[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    memcpy(buf, p, (size_t)k * sizeof(float));
    return vld1q_f32(buf);
}

static inline void neon_storen(float *p, float32x4_t v, int64_t k)
{
    float buf[4];
    vst1q_f32(buf, v);
    memcpy(p, buf, (size_t)k * sizeof(float));
}

#define VLOAD(p) vld1q_f32(p)
#define VSTORE(p, v) vst1q_f32((p), (v))
#define VLOADN(p, k) neon_loadn((p), (k))
#define VSTOREN(p, v, k) neon_storen((p), (v), (k))
#define VSET1(x) vdupq_n_f32(x)
#define VSET1_BITS(b) vreinterpretq_f32_u32(vdupq_n_u32((uint32_t)(b)))
#define VADD(a, b) vaddq_f32((a), (b))
#define VSUB(a, b) vsubq_f32((a), (b))
#define VMUL(a, b) vmulq_f32((a), (b))
#define VDIV(a, b) vdivq_f32((a), (b))
#define VFMA(a, b, c) vfmaq_f32((c), (a), (b)) /* a * b + c, one rounding */
#define VMAX(a, b) vmaxq_f32((a), (b))
#define VMIN(a, b) vminq_f32((a), (b))
#define VAND(a, b) vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b)))
#define VOR(a, b) vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(a), vreinterpretq_u32_f32(b)))
#define VROUND(a) vrndnq_f32(a)
/* 2^n for integral n in [-126, 127]: n + 127 in the exponent field */
#define VPOW2I(n) vreinterpretq_f32_s32(vshlq_n_s32(vaddq_s32(vcvtnq_s32_f32(n), vdupq_n_s32(127)), 23))
/* a < b ? t : f */
#define VSEL_LT(a, b, t, f) vbslq_f32(vcltq_f32((a), (b)), (t), (f))

#include "ops_vec_simd.h"

const cpu_vops *cpu_vops_neon(void)
{
    return &neon_vops;
}
#else
const cpu_vops *cpu_vops_neon(void)
{
    return NULL;
}
#endif
