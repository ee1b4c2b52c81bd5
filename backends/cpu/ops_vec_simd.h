/*
 * ops_vec_simd.h - the cpu backend's vector elementwise kernels, written once over a small set of macros and
 * compiled three times: by ops_vec_avx2.c (8 lanes, AVX2 + FMA), ops_vec_avx512.c (16 lanes, AVX-512F/DQ) and
 * ops_vec_neon.c (4 lanes, AArch64 Advanced SIMD). The includer defines VF, VN, VLOAD, VSTORE, VLOADN, VSTOREN,
 * VSET1, VADD, VSUB, VMUL, VDIV, VFMA, VMAX, VMIN, VROUND, VPOW2I, VAND, VOR, VSEL_LT and VNAME. Tails use masked
 * loads and stores (NEON: a stack buffer): nothing is read or written past n.
 *
 * Accuracy (u = 2^-24; the oracle allows elementary functions 8u |y|, i.e. 4 ULP, see docs/oracle.md):
 *  - exp(z): z = n ln2 + r with n = round(z log2 e), |r| <= ln2/2 by a two-constant Cody-Waite reduction (exact
 *    with FMA), e^r by its degree-7 Taylor polynomial in Horner form with FMAs (truncation 5e-9 relative), times 2^n
 *    built in the exponent bits. Measured over every float <= 88: at most 0.94 ULP.
 *  - sigmoid(x) = num / (1 + e), e = exp(-|x|), num = 1 (x >= 0) or e (x < 0): the relative error of e enters
 *    scaled by at most 1, plus two roundings; measured over every float: at most 2.40 ULP. Below ln(2^-126) the
 *    result is 0: the true value is under the smallest normal, which the oracle allows absolutely.
 *  - tanh(|x|): below atanh(1/2) = 0.5493, the odd Taylor series to x^17 (truncation 6e-9 relative), evaluated as
 *    x + x^3 P(x^2) where the correction is at most 1/9 of the result; above, 1 - 2 / (exp(2|x|) + 1), whose
 *    cancellation is at most a factor 1 there (d <= 1/2 <= 1 - d), so exp's error and three roundings give under
 *    3.5 ULP (measured over every float: at most 1.59 ULP); from |x| = 9 on, the formula returns exactly 1 as tanh
 *    rounds to 1. The sign is copied back. tests/test_cpu.c asserts at most 4 ULP on every ISA present.
 *  - hardswish x * relu6(x + 3) * (1/6), hardsigmoid relu6(x + 3) * (1/6): formulation (a) of
 *    docs/budgets/elementwise.md.
 * NaN propagates as in PyTorch (docs/ops.md, "NaN and Inf"): VMAX and VMIN return their second operand when one is
 * NaN (x86 maxps/minps), so the data always goes second: VMIN(hi, VMAX(lo, x)).
 */
#include <math.h>

#include "plan.h"

#define VSPLAT(c) VSET1((float)(c))

static inline VF VNAME(vexp)(VF z)
{
    const VF log2e = VSPLAT(1.44269504088896341), ln2_hi = VSPLAT(-0.693145751953125),
             ln2_lo = VSPLAT(-1.428606765330187045e-6);
    const VF n = VROUND(VMUL(z, log2e));
    VF r = VFMA(n, ln2_hi, z);
    r = VFMA(n, ln2_lo, r);
    VF p = VSPLAT(1.0 / 5040.0);
    p = VFMA(p, r, VSPLAT(1.0 / 720.0));
    p = VFMA(p, r, VSPLAT(1.0 / 120.0));
    p = VFMA(p, r, VSPLAT(1.0 / 24.0));
    p = VFMA(p, r, VSPLAT(1.0 / 6.0));
    p = VFMA(p, r, VSPLAT(0.5));
    p = VFMA(p, r, VSPLAT(1.0));
    p = VFMA(p, r, VSPLAT(1.0));
    return VMUL(p, VPOW2I(n));
}

/* ln(2^-126): below it exp and sigmoid are under the smallest normal and return 0. */
#define EXP_LO (-87.33654475f)

static inline VF VNAME(vsigmoid)(VF x)
{
    const VF absmask = VSET1_BITS(0x7fffffff), zero = VSPLAT(0.0), one = VSPLAT(1.0), lo = VSPLAT(EXP_LO);
    const VF z = VMAX(lo, VSUB(zero, VAND(x, absmask))); /* -|x|, kept where 2^n is normal; NaN kept */
    const VF e = VNAME(vexp)(z);
    const VF num = VSEL_LT(x, zero, e, one);
    const VF y = VDIV(num, VADD(one, e));
    return VSEL_LT(x, lo, zero, y);
}

static inline VF VNAME(vtanh)(VF x)
{
    const VF absmask = VSET1_BITS(0x7fffffff), signmask = VSET1_BITS(0x80000000);
    const VF ax = VAND(x, absmask);
    /* small: ax + ax^3 P(ax^2), P the Taylor coefficients of tanh from x^3 to x^17 */
    const VF t = VMUL(ax, ax);
    VF p = VSPLAT(6404582.0 / 10854718875.0);
    p = VFMA(p, t, VSPLAT(-929569.0 / 638512875.0));
    p = VFMA(p, t, VSPLAT(21844.0 / 6081075.0));
    p = VFMA(p, t, VSPLAT(-1382.0 / 155925.0));
    p = VFMA(p, t, VSPLAT(62.0 / 2835.0));
    p = VFMA(p, t, VSPLAT(-17.0 / 315.0));
    p = VFMA(p, t, VSPLAT(2.0 / 15.0));
    p = VFMA(p, t, VSPLAT(-1.0 / 3.0));
    const VF small = VFMA(VMUL(ax, t), p, ax);
    /* large: 1 - 2 / (exp(2 ax) + 1), 2 ax capped at 18 where the result is already 1 */
    const VF e = VNAME(vexp)(VMIN(VSPLAT(18.0), VADD(ax, ax))); /* NaN kept (VMIN) */
    const VF large = VSUB(VSPLAT(1.0), VDIV(VSPLAT(2.0), VADD(e, VSPLAT(1.0))));
    const VF y = VSEL_LT(ax, VSPLAT(0.5493061443), small, large);
    return VOR(y, VAND(x, signmask));
}

#define VEC_UNARY(fname, expr)                                                                                     \
    static void VNAME(fname)(int64_t n, const float *xp, float *yp)                                                \
    {                                                                                                              \
        int64_t i = 0;                                                                                             \
        for (; i + VN <= n; i += VN) {                                                                             \
            const VF x = VLOAD(xp + i);                                                                            \
            VSTORE(yp + i, (expr));                                                                                \
        }                                                                                                          \
        if (i < n) {                                                                                               \
            const VF x = VLOADN(xp + i, n - i);                                                                    \
            VSTOREN(yp + i, (expr), n - i);                                                                        \
        }                                                                                                          \
    }

VEC_UNARY(sigmoid, VNAME(vsigmoid)(x))
VEC_UNARY(tanh_, VNAME(vtanh)(x))
VEC_UNARY(exp_, VSEL_LT(x, VSPLAT(EXP_LO), VSPLAT(0.0), VNAME(vexp)(VMAX(VSPLAT(EXP_LO), x))))
VEC_UNARY(hardswish, VMUL(VMUL(x, VMIN(VSPLAT(6.0), VMAX(VSPLAT(0.0), VADD(x, VSPLAT(3.0))))), VSPLAT(1.0 / 6.0)))
VEC_UNARY(hardsigmoid, VMUL(VMIN(VSPLAT(6.0), VMAX(VSPLAT(0.0), VADD(x, VSPLAT(3.0)))), VSPLAT(1.0 / 6.0)))

static void VNAME(clamp)(int64_t n, const float *xp, float *yp, float lo_, float hi_)
{
    const VF lo = VSET1(lo_), hi = VSET1(hi_);
    int64_t i = 0;
    for (; i + VN <= n; i += VN) VSTORE(yp + i, VMIN(hi, VMAX(lo, VLOAD(xp + i))));
    if (i < n) VSTOREN(yp + i, VMIN(hi, VMAX(lo, VLOADN(xp + i, n - i))), n - i);
}

static void VNAME(scale_shift)(int64_t n, const float *xp, const float *sp, const float *tp, float *yp)
{
    int64_t i = 0;
    for (; i + VN <= n; i += VN) VSTORE(yp + i, VFMA(VLOAD(xp + i), VLOAD(sp + i), VLOAD(tp + i)));
    if (i < n)
        VSTOREN(yp + i, VFMA(VLOADN(xp + i, n - i), VLOADN(sp + i, n - i), VLOADN(tp + i, n - i)), n - i);
}

/* a and b are each a vector (stride 1) or a scalar (stride 0); one loop per operator and shape. */
#define VEC_BINARY_LOOP(VOP)                                                                                       \
    do {                                                                                                           \
        int64_t i = 0;                                                                                             \
        if (sa && sb) {                                                                                            \
            for (; i + VN <= n; i += VN) VSTORE(y + i, VOP(VLOAD(a + i), VLOAD(b + i)));                           \
            if (i < n) VSTOREN(y + i, VOP(VLOADN(a + i, n - i), VLOADN(b + i, n - i)), n - i);                     \
        } else if (sa) {                                                                                           \
            const VF bv = VSET1(b[0]);                                                                             \
            for (; i + VN <= n; i += VN) VSTORE(y + i, VOP(VLOAD(a + i), bv));                                     \
            if (i < n) VSTOREN(y + i, VOP(VLOADN(a + i, n - i), bv), n - i);                                       \
        } else if (sb) {                                                                                           \
            const VF av = VSET1(a[0]);                                                                             \
            for (; i + VN <= n; i += VN) VSTORE(y + i, VOP(av, VLOAD(b + i)));                                     \
            if (i < n) VSTOREN(y + i, VOP(av, VLOADN(b + i, n - i)), n - i);                                       \
        } else {                                                                                                   \
            const VF r = VOP(VSET1(a[0]), VSET1(b[0]));                                                            \
            for (; i + VN <= n; i += VN) VSTORE(y + i, r);                                                         \
            if (i < n) VSTOREN(y + i, r, n - i);                                                                   \
        }                                                                                                          \
    } while (0)

static void VNAME(binary)(cpu_binop op, int64_t n, const float *a, int64_t sa, const float *b, int64_t sb, float *y)
{
    switch (op) {
    case CPU_BIN_ADD: VEC_BINARY_LOOP(VADD); break;
    case CPU_BIN_SUB: VEC_BINARY_LOOP(VSUB); break;
    case CPU_BIN_MUL: VEC_BINARY_LOOP(VMUL); break;
    case CPU_BIN_DIV: VEC_BINARY_LOOP(VDIV); break;
    }
}

static const cpu_vops VNAME(vops) = {
    .binary = VNAME(binary),
    .clamp = VNAME(clamp),
    .sigmoid = VNAME(sigmoid),
    .tanh = VNAME(tanh_),
    .exp = VNAME(exp_),
    .hardswish = VNAME(hardswish),
    .hardsigmoid = VNAME(hardsigmoid),
    .scale_shift = VNAME(scale_shift),
};
