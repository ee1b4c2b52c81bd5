/*
 * elem_util.h - helpers shared by the reference kernels of the elementwise family (activation.c, softmax.c,
 * elementwise.c, norm.c, shape.c): the float dtype test, the underflow allowance, the final budget of one element
 * (propagated + own + storage), and the rounding of a constant to the backend's formats.
 *
 * It must not hold any op's semantics or budget derivation: those stay with the kernels (docs/budgets/). Nothing
 * outside reference/ may include it.
 */
#ifndef PAR_REF_ELEM_UTIL_H
#define PAR_REF_ELEM_UTIL_H

#include <math.h>

#include "reference.h"

static inline int is_float(par_dtype t) { return t == PAR_DTYPE_F32 || t == PAR_DTYPE_F16 || t == PAR_DTYPE_F64; }

/* The checks of a one-input float kernel whose output has its input's element count (activations, sqrt, softmax):
 * input 0 and output 0 present, a float dtype (else UNSUPPORTED: a quantized value reached the float kernel), equal
 * element counts. name is the op's, for the message. */
static inline par_status float_unary_io(const char *name, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    if (!in[0] || !out[0]) return par_msgf(msg, PAR_ERROR, "%s: input 0 (x) is required", name);
    if (!is_float(in[0]->dtype))
        return par_msgf(msg, PAR_UNSUPPORTED, "%s: dtype %s reached the float kernel (only f32, f16, f64)", name,
                        par_dtype_name(in[0]->dtype));
    if (in[0]->numel != out[0]->numel)
        return par_msgf(msg, PAR_ERROR, "%s: output has %lld elements, input %lld", name,
                        (long long)out[0]->numel, (long long)in[0]->numel);
    return PAR_OK;
}

/* Underflow of a result that is tiny while its inputs are not (sigmoid of a large negative x, the exp terms of
 * softmax): IEEE gradual underflow errs by at most half the smallest subnormal, and a backend that flushes
 * subnormals to zero by at most the smallest normal number of the format. The allowance is that smallest normal
 * (2^-126 for f32, 2^-14 for f16) of the coarser of the two formats; 0 for the ideal real result (u = 0). */
static inline double underflow_abs(const par_prec *p)
{
    if (p->u == 0 && p->u_store == 0) return p->flush; /* the ideal result (0), or interp.c's flush pass */
    return fmax(par_fmt_of(p->u)->tiny, par_fmt_of(p->u_store)->tiny);
}

/* Budget of a result y with propagated part p and own roundings own: both plus the storage rounding of the held
 * value; infinite when y is not finite or the sum is NaN. */
static inline double finish(double y, double p, double own, const par_prec *pr)
{
    double t = p + own + pr->u_store * (fabs(y) + p + own);
    return (isfinite(y) && t == t) ? t : INFINITY;
}

/* Whether b is exactly representable in the binary format of unit roundoff u (2^-24: f32, 2^-11: f16, 2^-8:
 * bfloat16; par_fmt_of): its significand fits in the format's bits and it is a normal number of the format. */
static inline int exact_in(double b, double u)
{
    return u == 0 || par_fmt_exact(par_fmt_of(u), b);
}

/* Rounding of a constant (a clamp bound, a fill value) to the backend's arithmetic and storage formats: 0 when
 * both hold it exactly (0, infinities, 0.5, 6, ...), else one rounding in each format that does not. */
static inline double const_rounding(double b, const par_prec *pr)
{
    return ((exact_in(b, pr->u) ? 0 : pr->u) + (exact_in(b, pr->u_store) ? 0 : pr->u_store)) * fabs(b);
}

#endif
