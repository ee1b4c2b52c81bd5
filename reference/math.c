/*
 * math.c - float64 reference kernels of the unary math ops: abs, neg, floor, ceil, round, sign (exact: a correct
 * backend returns them bit for bit from the held input), exp, log, reciprocal, softplus, softsign, erf, sin and
 * cos, with the error budget of every output element (docs/budgets/elementwise.md, "Unary math", derives each one;
 * docs/ops.md gives their rules at NaN, the infinities and the zeros).
 *
 * Kernels are one loop over the elements and read like docs/ops.md. They see float tensors only; they must not
 * allocate nor read anything but their input.
 *
 * Budget conventions (as activation.c; x: the reference input, e: its budget, u / u_s: arithmetic / storage unit
 * roundoff, fn = fn_ulps * u, the allowance of an elementary function): a backend holds some x' in [x - e, x + e];
 *   exact ops       f monotone (floor, ceil, round, sign: nondecreasing step functions) or 1-Lipschitz and exact
 *                   (abs, neg): the held result lies between f(x - e) and f(x + e), so the budget is the larger
 *                   distance from y to those two (e for abs and neg); no rounding of their own. Where the input's
 *                   interval straddles a step, both sides' answers are within the budget: the element is judged on
 *                   the set of values some held input gives, never "anything".
 *   transcendental  the propagated part P is the exact change of f over the interval where f is monotone (exp, log,
 *                   softplus), else sup |f'| over it times e (softsign, erf, sin, cos), capped by the range of f
 *                   where it is bounded; the own part counts the function's fn relative to the held magnitude
 *                   |y| + P, plus each composed operation (reciprocal: one division; softplus, softsign: below);
 *                   storage u_s (|y| + P + own) is finish()'s.
 * The fn of an elementary function assumes a correct f32 implementation within 4 ulps (fn_ulps = 8 u, reference/rt.c)
 * of the exact result, relative, over the whole f32 range: glibc's and musl's expf, logf, sinf, cosf (under 1 ulp,
 * with exact range reduction for sin and cos), erff (under 2 ulps), SLEEF's u10 functions (1 ulp), XNNPACK's exp
 * and log polynomials (under 2 ulps); a vector sin/cos with a short Cody-Waite reduction that loses the relative
 * accuracy near the zeros at k pi is not correct by this rule and fails there (docs/budgets/elementwise.md).
 */
#include "reference.h"
#include "elem_util.h"

#include <math.h>

typedef enum math_op {
    M_ABS, M_NEG, M_FLOOR, M_CEIL, M_ROUND, M_SIGN, /* exact */
    M_EXP, M_LOG, M_RECIPROCAL, M_SOFTPLUS, M_SOFTSIGN, M_ERF, M_SIN, M_COS,
} math_op;

static const char *const math_names[] = {
    [M_ABS] = "abs", [M_NEG] = "neg", [M_FLOOR] = "floor", [M_CEIL] = "ceil", [M_ROUND] = "round",
    [M_SIGN] = "sign", [M_EXP] = "exp", [M_LOG] = "log", [M_RECIPROCAL] = "reciprocal", [M_SOFTPLUS] = "softplus",
    [M_SOFTSIGN] = "softsign", [M_ERF] = "erf", [M_SIN] = "sin", [M_COS] = "cos",
};

/* sign(x): -1, +1, or x itself for +-0 and NaN (torch.sign, ONNX Sign). */
static double sign_of(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }

/* The monotone nondecreasing step functions: floor, ceil, round half to even (rint in the default rounding mode:
 * torch.round, ONNX Round), sign. */
static double step_of(math_op op, double x)
{
    switch (op) {
    case M_FLOOR: return floor(x);
    case M_CEIL: return ceil(x);
    case M_ROUND: return rint(x);
    default: return sign_of(x);
    }
}

/* softplus(x) = log(1 + e^x) without overflow or cancellation: x + log1p(e^-x) above 0, log1p(e^x) below. */
static double softplus_of(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }

/* The point of [x - e, x + e] closest to 0 (its magnitude): where the even, decreasing-in-|t| derivatives of
 * softsign and erf take their sup. */
static double closest_to_zero(double x, double e)
{
    if (x - e <= 0 && x + e >= 0) return 0;
    return fmin(fabs(x - e), fabs(x + e));
}

/* Value and budget of one element; returns 1 when the element is "anything" (par_mark_any). */
static int math_elem(math_op op, double x, double e, const par_prec *pr, double *yo, double *eo)
{
    const double u = pr->u, fn = pr->fn_ulps * pr->u;
    double y = 0, p = 0, own = 0;
    if (isnan(x)) { /* every op propagates NaN; the interpreter's NaN rule sets the budget (interp.c) */
        *yo = x;
        *eo = INFINITY;
        return 0;
    }
    if (isinf(x) && (op == M_EXP || op == M_SOFTPLUS || op == M_ERF)) {
        /* the limits, exact: exp(-inf) = +0 and exp(inf) = inf, softplus the same, erf(+-inf) = +-1; a held x' is
         * the same infinity (an infinite result's budget is the interpreter's infinity rule) */
        *yo = op == M_ERF ? copysign(1.0, x) : x > 0 ? x : 0.0;
        *eo = e == 0 ? 0 : INFINITY;
        return 0;
    }
    switch (op) {
    case M_ABS:
    case M_NEG: /* exact, and ||x'| - |x|| <= |x' - x|: the input's budget */
        *yo = op == M_ABS ? fabs(x) : -x;
        *eo = e;
        return 0;
    case M_FLOOR:
    case M_CEIL:
    case M_ROUND:
    case M_SIGN: {
        /* Nondecreasing: every held x' gives a value in [f(x - e), f(x + e)]. An exact input (e = 0) gives y
         * exactly, infinities included (the infinities of floor, ceil and round are themselves, sign's +-1). */
        y = step_of(op, x);
        *yo = y;
        *eo = e == 0 ? 0 : (isfinite(x) ? fmax(y - step_of(op, x - e), step_of(op, x + e) - y) : INFINITY);
        return 0;
    }
    case M_EXP: {
        y = exp(x);
        /* increasing: the largest change is at the upper end, exp(x + e) - exp(x) = y expm1(e) */
        p = y * expm1(e);
        /* fn relative; where the result is subnormal, an implementation that builds 2^k from the exponent bits
         * flushes it (XNNPACK's, the softmax exp terms): the underflow allowance, as sigmoid's */
        own = fn * (y + p) + underflow_abs(pr);
        break;
    }
    case M_LOG: {
        y = log(x); /* log(x < 0) = NaN, log(+-0) = -inf, log(+inf) = +inf */
        if (x == 0 || x < 0 || isinf(x)) {
            *yo = y;
            /* exact input: the special value is required; a held x' on either side of 0 may give NaN, -inf or a
             * finite value: anything */
            *eo = e == 0 ? 0 : INFINITY;
            return e > 0 && x + e >= 0 && x - e <= 0;
        }
        if (x - e <= 0) { /* a held x' may be 0 or negative: -inf or NaN, both correct */
            *yo = y;
            *eo = INFINITY;
            return 1;
        }
        p = -log1p(-e / x); /* increasing and concave: the lower end moves it most, log(x) - log(x - e) */
        own = fn * (fabs(y) + p);
        break;
    }
    case M_RECIPROCAL: {
        y = 1.0 / x;
        /* 1 / +-0 = +-inf: the zero's sign is not pinned (docs/oracle.md), so either infinity is right (div) */
        if (x == 0) {
            *yo = y;
            *eo = INFINITY;
            return 1;
        }
        double lo = fabs(x) - e; /* the smallest |x'| a backend may hold */
        p = isinf(x) ? (e == 0 ? 0 : INFINITY) : (lo > 0 ? e / (fabs(x) * lo) : INFINITY);
        own = u * (fabs(y) + p); /* one IEEE division, correctly rounded */
        break;
    }
    case M_SOFTPLUS: {
        y = softplus_of(x);
        /* increasing and convex: the upper end moves it most */
        p = softplus_of(x + e) - y;
        /* log1p(e^x) (x <= 0): exp's fn passes through log1p scaled by E / (1 + E) / log1p(E) <= 1, log1p's fn:
         * 2 fn |y|; the literal log(1 + e^x) (ONNX's definition) rounds 1 + E, an absolute u after the log, plus the
         * same 2 fn |y|; x + log1p(e^-x) (x > 0) adds u |y|, and PyTorch's return of x above 20 is off by
         * log1p(e^-20) < 2.1e-9 < u |y|. exp's underflow (a flushed e^x) passes through the log with gain 1. */
        own = (2 * fn + u) * (fabs(y) + p) + u + underflow_abs(pr);
        break;
    }
    case M_SOFTSIGN: {
        if (isinf(x)) { /* the limits +-1 (x / (1 + |x|) would give inf / inf = NaN: a backend returns the limit) */
            *yo = copysign(1.0, x);
            *eo = e == 0 ? 0 : 2;
            return 0;
        }
        y = x / (1 + fabs(x));
        /* f' = 1 / (1 + |x|)^2, even and decreasing in |x|; |f| < 1 bounds any change by 1 + |y| */
        double t = 1 + closest_to_zero(x, e);
        p = fmin(e / (t * t), 1 + fabs(y));
        own = 2 * u * (fabs(y) + p); /* 1 + |x| (u relative, passed through the quotient), the division */
        break;
    }
    case M_ERF: {
        y = erf(x);
        double t = closest_to_zero(x, e);
        p = fmin(M_2_SQRTPI * exp(-t * t) * e, 1 + fabs(y)); /* erf' = 2 / sqrt(pi) e^(-t^2); |erf| <= 1 */
        own = fn * (fabs(y) + p) + par_eta(pr, 2); /* x * x in the polynomial, x * poly near 0 */
        break;
    }
    case M_SIN:
    case M_COS: {
        y = op == M_SIN ? sin(x) : cos(x); /* sin(+-inf) = cos(+-inf) = NaN */
        if (isinf(x)) {
            *yo = y;
            *eo = INFINITY; /* the NaN rule: NaN required from an exact input */
            return 0;
        }
        /* |f'(x')| = |cos x'| (sin) or |sin x'| (cos) <= |f'(x)| + |x' - x|, and <= 1; |f| <= 1 bounds any change
         * by 1 + |y| (an unbounded input gives a bounded budget) */
        double d = op == M_SIN ? fabs(cos(x)) : fabs(sin(x));
        p = fmin(e * fmin(1.0, d + e), 1 + fabs(y));
        own = fn * (fabs(y) + p);
        break;
    }
    }
    *yo = y;
    *eo = finish(y, p, own, pr);
    return 0;
}

static par_status math_kernel(const par_ref_ctx *c, math_op op, const par_rt *const *in, par_rt *const *out,
                              par_msg *msg)
{
    par_status io = float_unary_io(math_names[op], in, out, msg);
    if (io != PAR_OK) return io;
    const par_rt *x = in[0];
    par_rt *y = out[0];
    for (int64_t i = 0; i < x->numel; i++)
        if (math_elem(op, x->v[i], x->e[i], &c->prec, &y->v[i], &y->e[i])) par_mark_any(c, i);
    return PAR_OK;
}

#define MATH_KERNEL(fname, op)                                                                                         \
    par_status fname(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)                  \
    {                                                                                                                  \
        return math_kernel(c, op, in, out, msg);                                                                       \
    }

MATH_KERNEL(par_ref_abs, M_ABS)
MATH_KERNEL(par_ref_neg, M_NEG)
MATH_KERNEL(par_ref_floor, M_FLOOR)
MATH_KERNEL(par_ref_ceil, M_CEIL)
MATH_KERNEL(par_ref_round, M_ROUND)
MATH_KERNEL(par_ref_sign, M_SIGN)
MATH_KERNEL(par_ref_exp, M_EXP)
MATH_KERNEL(par_ref_log, M_LOG)
MATH_KERNEL(par_ref_reciprocal, M_RECIPROCAL)
MATH_KERNEL(par_ref_softplus, M_SOFTPLUS)
MATH_KERNEL(par_ref_softsign, M_SOFTSIGN)
MATH_KERNEL(par_ref_erf, M_ERF)
MATH_KERNEL(par_ref_sin, M_SIN)
MATH_KERNEL(par_ref_cos, M_COS)
