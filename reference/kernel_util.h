/*
 * kernel_util.h - small helpers shared by the float reference kernels of conv.c, matrix.c and pool.c: the dtype
 * guard of a float kernel and the product of two budget terms. Their geometry is core's (core/shape.h), included
 * here for them.
 *
 * It must not hold any op's semantics or budget rule: those stay with the kernels (and the dot-product accumulator
 * with dot.h). Nothing outside reference/ may include it.
 */
#ifndef PAR_REF_KERNEL_UTIL_H
#define PAR_REF_KERNEL_UTIL_H

#include <math.h>
#include <stdint.h>

#include "reference.h"
#include "core/shape.h"

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

#endif
