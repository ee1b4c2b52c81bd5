/*
 * kernel_util.h - small helpers shared by the float reference kernels of conv.c, matrix.c and pool.c: the dtype
 * guard of a float kernel, the product of two budget terms, and the int64 arithmetic of their geometry (pairs of
 * attributes in range, floor division).
 *
 * It must not hold any op's semantics or budget rule: those stay with the kernels (and the dot-product accumulator
 * with dot.h). Nothing outside reference/ may include it.
 */
#ifndef PAR_REF_KERNEL_UTIL_H
#define PAR_REF_KERNEL_UTIL_H

#include <math.h>
#include <stdint.h>

#include "reference.h"

#define DIM_LIMIT 2147483647LL /* attribute values beyond this would overflow the index arithmetic */

/* A float kernel sees f32, f16 or f64 tensors only (the interpreter dequantizes around it); NULL (an absent
 * optional input) passes. */
static inline par_status check_float(const par_rt *t, const char *what, par_msg *msg)
{
    if (!t) return PAR_OK;
    if (t->dtype == PAR_DTYPE_F32 || t->dtype == PAR_DTYPE_F16 || t->dtype == PAR_DTYPE_F64) return PAR_OK;
    return par_msgf(msg, PAR_UNSUPPORTED, "%s: dtype %s reached the float kernel (only f32, f16, f64)", what,
                    par_dtype_name(t->dtype));
}

/* Product of two non-negative budget terms. An infinite budget (a division by an interval containing 0 upstream)
 * times an exact zero is unbounded, not NaN: a backend may compute 0 * inf there. */
static inline double bmul(double a, double b)
{
    double r = a * b;
    return r == r ? r : INFINITY;
}

static inline int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* Read an ints2 attribute (each element defaulting to lo) and check each element is in [lo, DIM_LIMIT]. */
static inline par_status read_pair(const par_node *n, const char *name, int64_t lo, int64_t *a, int64_t *b,
                                   par_msg *msg)
{
    int64_t v[2];
    for (int32_t i = 0; i < 2; i++) {
        v[i] = par_attr_ints_at(n, name, i, lo);
        if (v[i] < lo || v[i] > DIM_LIMIT)
            return par_msgf(msg, PAR_ERROR, "attribute '%s': element %d is %lld, must be in [%lld, %lld]", name,
                            (int)i, (long long)v[i], (long long)lo, (long long)DIM_LIMIT);
    }
    *a = v[0];
    *b = v[1];
    return PAR_OK;
}

#endif
