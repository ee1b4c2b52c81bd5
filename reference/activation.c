/*
 * activation.c - shape inference and float64 reference kernels of the pointwise activations: relu, relu6, hardtanh,
 * clamp, leaky_relu, prelu, sigmoid, tanh, hardsigmoid, hardswish, elu, silu, gelu, mish, with the error budget of
 * every output element (docs/budgets/elementwise.md derives each one).
 *
 * Kernels are one loop over the elements and read like docs/ops.md. They see float tensors only (the interpreter
 * dequantizes quantized operands around them); they must not allocate nor read anything but their inputs.
 *
 * Budget conventions (x: the reference input, e: its budget, u / u_s: arithmetic / storage unit roundoff,
 * fn = fn_ulps * u): a backend holds some x' in [x - e, x + e]; the propagated part is sup|f'| over that interval
 * times e (or a Lipschitz constant of f); own roundings are bounded by u times the magnitude of each intermediate,
 * evaluated on the held operands (|x| + e, |y| + p); storage adds u_s (|y| + p + own). Where f is constant on the
 * whole interval (the flat parts of the hard activations) the result is exact and the budget is 0.
 */
#include "reference.h"
#include "elem_util.h"

#include "core/graph.h"

#include <math.h>

typedef enum act_op {
    ACT_CLAMP, /* relu, relu6, hardtanh and clamp: min(max(x, lo), hi) */
    ACT_LEAKY,
    ACT_SIGMOID,
    ACT_TANH,
    ACT_HARDSIGMOID,
    ACT_HARDSWISH,
    ACT_ELU,
    ACT_SILU,
    ACT_GELU,  /* a = 0: the exact form with erf; a = 1: the tanh approximation */
    ACT_MISH,
} act_op;

typedef struct act_params {
    act_op op;
    const char *name;
    double a, b; /* clamp: lo, hi; leaky: negative slope; elu: alpha */
} act_params;

/* What an element's budget needs of the profile alone, computed once a kernel call (unary): the absolute error of
 * one underflowing operation (par_eta), and clamp's bounds rounded to the backend's formats (const_rounding). */
typedef struct act_const {
    double eta;
    double lo_r, hi_r;
} act_const;

/* sup of |f'| for f = sigmoid (g(t) = s(t)(1 - s(t))) or tanh (1 - tanh^2) over [x - e, x + e]: both derivatives
 * are even and decreasing in |t|, so the sup is at the point of the interval closest to 0. */
static double closest_to_zero(double x, double e)
{
    if (x - e <= 0 && x + e >= 0) return 0;
    return fmin(fabs(x - e), fabs(x + e));
}

static double sigmoid(double x) { return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x)); }

/* Hardswish's derivative magnitude sup over [lo, hi]: 0 below -3, (2t + 3)/6 on [-3, 3], 1 above 3. */
static double hardswish_dsup(double lo, double hi)
{
    double s = 0;
    if (hi > 3) s = 1;
    double a = fmax(lo, -3), b = fmin(hi, 3);
    if (a <= b) s = fmax(s, fmax(fabs(2 * a + 3), fabs(2 * b + 3)) / 6);
    return s;
}

/* The sup of |f'| over [lo, hi] for a smooth f whose f' has its extrema at the points crit[] (where f'' = 0) and
 * tends to its limits at +-inf (df handles infinite arguments): the largest of |f'| at both ends and at the
 * critical points inside. */
static double dsup(double (*df)(double), const double *crit, int n_crit, double lo, double hi)
{
    double s = fmax(fabs(df(lo)), fabs(df(hi)));
    for (int i = 0; i < n_crit; i++)
        if (lo <= crit[i] && crit[i] <= hi) s = fmax(s, fabs(df(crit[i])));
    return s;
}

/* silu(x) = x sigmoid(x) and its derivative s(x) (1 + x (1 - s(x))), with the limits 1 at +inf and 0 at -inf. The
 * derivative's extrema are where f'' = s(1 - s)(2 - x tanh(x / 2)) vanishes: x tanh(x / 2) = 2, x = +-2.39935728...
 * (f' = 1.0998 and -0.0998 there). */
static double silu_d(double x)
{
    if (isinf(x)) return x > 0 ? 1 : 0;
    double s = sigmoid(x);
    return s * (1 + x * (1 - s));
}
static const double silu_crit[2] = {-2.3993572805154679, 2.3993572805154679};

/* gelu, exact form: f(x) = x Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2 (erfc keeps the negative tail accurate where
 * 1 + erf(x / sqrt 2) cancels); f'(x) = Phi(x) + x phi(x), limits 1 and 0; f'' = phi(x) (2 - x^2): extrema at
 * x = +-sqrt 2 (f' = 1.12890 and -0.12890). */
static double gelu_phi_cdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
static double gelu_d(double x)
{
    if (isinf(x)) return x > 0 ? 1 : 0;
    return gelu_phi_cdf(x) + x * exp(-0.5 * x * x) / sqrt(2 * M_PI);
}
static const double gelu_crit[2] = {-M_SQRT2, M_SQRT2};

/* gelu, tanh form: z = k (x + 0.044715 x^3), k = sqrt(2 / pi), f(x) = x (1 + tanh z) / 2 = x s(2z) with s the
 * sigmoid (no cancellation in the negative tail); f'(x) = s + 2 x s (1 - s) z'(x), z' = k (1 + 3 0.044715 x^2),
 * limits 1 and 0; the extrema of f' (f'' = 0, solved numerically) are at x = +-1.41850400867 (f' = 1.12899 and
 * -0.12899). */
#define GELU_K 0.79788456080286535588 /* sqrt(2 / pi) */
#define GELU_A 0.044715
static double gelu_tanh_z(double x) { return GELU_K * (x + GELU_A * x * x * x); }
static double gelu_tanh_d(double x)
{
    if (isinf(x)) return x > 0 ? 1 : 0;
    double s = sigmoid(2 * gelu_tanh_z(x));
    return s + 2 * x * s * (1 - s) * GELU_K * (1 + 3 * GELU_A * x * x);
}
static const double gelu_tanh_crit[2] = {-1.4185040087, 1.4185040087};

/* mish(x) = x tanh(softplus(x)), softplus(x) = log(1 + e^x), and its derivative t + x (1 - t^2) s with t =
 * tanh(softplus(x)), s = sigmoid(x) (d softplus / dx = s); the limits 1 at +inf and 0 at -inf. The extrema of f'
 * (f'' = 0, solved numerically in 40-digit arithmetic) are at x = -2.25637639636 (f' = -0.112526) and
 * x = 1.49057117949 (f' = 1.088498). */
static double softplus_of(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }
static double mish_d(double x)
{
    if (isinf(x)) return x > 0 ? 1 : 0;
    double t = tanh(softplus_of(x));
    return t + x * (1 - t * t) * sigmoid(x);
}
static const double mish_crit[2] = {-2.2563763963607931, 1.4905711794854285};

/* The own roundings of mish at x held within e (docs/budgets/elementwise.md, "mish"): softplus's absolute error
 * fn s + (fn + 2u) sp (exp's fn passed through log1p as fn s, in either form; log1p's fn and the addition of
 * x + log1p(e^-x) relative to sp), through tanh' = 1 - t^2, plus tanh's fn and 2u relative to t (which also covers
 * the rational form t = n / (n + 2), n = e^x (e^x + 2)), times |x|; the multiply u|y|; softplus's underflow (e^x
 * below the smallest normal) scaled by |x|. s, sp and t increase with x and 1 - t^2 decreases with sp: each is
 * taken at the end of [x - e, x + e] where it is largest. */
static double mish_own(double x, double e, double ya, const par_prec *pr)
{
    const double u = pr->u, fn = pr->fn_ulps * pr->u, xa = fabs(x) + e;
    double s = sigmoid(x + e), sp = softplus_of(x + e), t = tanh(sp), tl = tanh(softplus_of(x - e));
    double sp_err = fn * s + (fn + 2 * u) * sp;
    return xa * ((1 - tl * tl) * sp_err + (fn + 2 * u) * t) + u * ya + xa * underflow_abs(pr);
}

/* clamp(x, a, b): exact selection. A backend holds some x' in [x - e, x + e], so its result lies in
 * [clamp(x - e), clamp(x + e)]: the budget is the larger distance from y to those ends, e where the interval is
 * inside the bounds and 0 where it saturates entirely (errors do not pass a saturated clamp). A bound the backend
 * may select contributes its own rounding (k->lo_r, k->hi_r). */
static void clamp_elem(const act_params *ap, const act_const *k, double x, double e, double *yo, double *eo)
{
    double lo = ap->a, hi = ap->b;
    double y = x < lo ? lo : x;
    y = y > hi ? hi : y;
    double r = 0;
    if (x - e <= lo + k->lo_r) r = par_fmax(r, k->lo_r);
    if (x + e >= hi - k->hi_r) r = par_fmax(r, k->hi_r);
    double y_lo = par_fmin(par_fmax(x - e, lo), hi), y_hi = par_fmin(par_fmax(x + e, lo), hi);
    double spread = par_fmax(y - y_lo, y_hi - y);
    *yo = y;
    *eo = spread + r == spread + r ? spread + r : INFINITY;
}

/* hardswish off its flat part x * 0: the propagated error *p and the own roundings *own at y. */
static void hardswish_err(double x, double e, double y, double flat_margin, const par_prec *pr, double *p, double *own)
{
    const double u = pr->u, eta = par_eta(pr, 1);
    *p = hardswish_dsup(x - e, x + e) * e;
    double xa = fabs(x) + e, ya = fabs(y) + *p;
    if (x - e > 3 + flat_margin) {
        /* (a) x * 6 then / 6 or * (1/6): three roundings of magnitude |y|; (b) x * 1 is exact. */
        *own = 3 * u * ya;
    } else {
        /* (a) x * relu6(x + 3) / 6: the add's u|x + 3| scaled by |x| / 6, the multiply (magnitude 6|y|, then
         *     / 6), the scaling by 1/6 (2u|y|);
         * (b) x * clamp(x * (1/6) + 1/2, 0, 1): (2u|x| / 6 + u * 1) scaled by |x|, the final multiply u|y|. */
        double own_a = u * xa * (xa + 3) / 6 + 3 * u * ya;
        double own_b = u * xa * (xa / 3 + 1) + u * ya;
        *own = fmax(own_a, own_b) + 2 * eta * (1 + xa); /* x * relu6(x + 3) before / 6; x * (1/6) before * x */
    }
}

/* gelu at a finite x (ap->a 0: the erf form, else the tanh form): the value *y, the propagated error *p and the own
 * roundings *own. */
static void gelu_err(const act_params *ap, double x, double e, const par_prec *pr, double *y, double *p, double *own)
{
    const double u = pr->u, fn = pr->fn_ulps * pr->u, eta = par_eta(pr, 1);
    double xa = fabs(x) + e;
    if (ap->a == 0) {
        *y = x * gelu_phi_cdf(x);
        *p = dsup(gelu_d, gelu_crit, 2, x - e, x + e) * e;
        /* (a) x / 2 (1 + erf(x c)), c = 1/sqrt 2: x c carries 2u (c rounded, the multiply), which moves erf by
         *     erf'(t) 2u|t| (t = x / sqrt 2), times |x| / 2; erf's own fn |erf t| times |x| / 2 (absolute where
         *     1 + erf cancels: x negative); the addition u (1 + erf) |x| / 2 = u|y|; the multiply u|y| (/ 2 is
         *     exact). (b) x erfc(-x c) / 2: fn |y|, the multiply u|y|, the same argument term. Both within: */
        double t = x * M_SQRT1_2, ya = fabs(*y);
        *own = fn * (0.5 * xa * fabs(erf(t)) + ya + *p) + 2 * u * (ya + *p) +
               2 * u * xa * fabs(t) * exp(-t * t) / sqrt(M_PI) + 2 * eta * (1 + xa); /* x c, erf's t * t */
    } else {
        double z = gelu_tanh_z(x), s = sigmoid(2 * z);
        *y = x * s;
        *p = dsup(gelu_tanh_d, gelu_tanh_crit, 2, x - e, x + e) * e;
        /* z: x*x, *x, 0.044715 rounded, *0.044715 (4u on a x^3, the same sign as x: no cancellation), + x (u),
         * k rounded and *k (2u): 7u |z|; through tanh' = 1 - tanh^2 = 4 s (1 - s) times |x| / 2: 14u |x| |z|
         * s (1 - s). (a) x / 2 (1 + tanh z): tanh's fn |tanh z| |x| / 2, the addition u|y|, the multiply u|y|;
         * (b) x sigmoid(2z): the sigmoid's fn + 2u relative and its underflow eta, the multiply u. Both within: */
        double ya = fabs(*y);
        *own = fn * (0.5 * xa * fabs(tanh(z)) + ya + *p) + 3 * u * (ya + *p) + 14 * u * xa * fabs(z) * s * (1 - s) +
               xa * underflow_abs(pr);
    }
}

static void act_elem(const act_params *ap, const act_const *k, double x, double e, const par_prec *pr, double *yo,
                     double *eo)
{
    const double u = pr->u, fn = pr->fn_ulps * pr->u;
    /* Flushing: each intermediate operation that may flush a subnormal adds eta times its gain into y (the flush of
     * the input and of y itself is the interpreter's). Sigmoid and silu count theirs in underflow_abs. */
    const double eta = k->eta;
    double y = 0, p = 0, own = 0;
    if (isnan(x)) { /* every activation propagates NaN (PyTorch; docs/ops.md, "NaN and Inf") */
        *yo = x;
        *eo = INFINITY; /* the interpreter's NaN rule sets the budget (interp.c, nonfinite_rules) */
        return;
    }
    /* A margin beyond which the flat parts of hardsigmoid / hardswish are certain even after the backend's own
     * roundings of x + 3 or x / 6 + 1/2 (a few u relative, 16 u is generous). */
    const double flat_margin = 16 * u * (fabs(x) + 3);
    switch (ap->op) {
    case ACT_CLAMP: clamp_elem(ap, k, x, e, yo, eo); return;
    case ACT_LEAKY: {
        double s = ap->a;
        y = x >= 0 ? x : s * x;
        if (x - e >= 0) { /* positive branch for every held x': a copy */
            *yo = y;
            *eo = e;
            return;
        }
        p = fmax(1.0, fabs(s)) * e; /* Lipschitz constant of the two-branch function */
        own = 2 * u * (fabs(y) + p); /* slope rounded to the arithmetic format, then one multiply */
        break;
    }
    case ACT_SIGMOID: {
        y = sigmoid(x);
        /* s'(t) = s(t) s(-t), evaluated at -|t| so that neither factor is 1 - (a number that rounds to 1): for
         * |t| > 37, 1 - s(|t|) is 0 in double while s'(t) = e^-|t| is what carries the input's error into a tiny
         * result (sigmoid(-55) of an input held within u |x| is off by 55 u relative) */
        double t = closest_to_zero(x, e);
        double sn = sigmoid(-t);
        p = sn * (1 - sn) * e;
        /* exp (fn), 1 + exp(-x) (u), the division (u): relative errors that stay relative through 1/(1 + E). */
        own = (fn + 2 * u) * (fabs(y) + p) + underflow_abs(pr);
        break;
    }
    case ACT_TANH: {
        y = tanh(x);
        double ch = cosh(closest_to_zero(x, e)); /* 1 - tanh^2 = 1 / cosh^2, without 1 - (a number near 1) */
        p = e / (ch * ch);
        own = fn * (fabs(y) + p) + 2 * eta; /* x * x in a polynomial, or exp(2x) in 1 - 2 / (exp(2x) + 1) */
        break;
    }
    case ACT_HARDSIGMOID: {
        y = fmin(fmax(x + 3, 0), 6) / 6;
        if (x + e < -3 - flat_margin || x - e > 3 + flat_margin) { /* flat: exactly 0 or 1 */
            *yo = y;
            *eo = 0;
            return;
        }
        p = e / 6;
        double xa = fabs(x) + e, ya = fabs(y) + p;
        /* (a) relu6(x + 3) / 6 or * (1/6): u|x + 3| / 6 from the add, 2u|y| from the scaling;
         * (b) clamp(x * (1/6) + 1/2, 0, 1): 2u|x| / 6 from 1/6 and the multiply, u|y| from the add. */
        double own_a = u * (xa + 3) / 6 + 2 * u * ya;
        double own_b = 2 * u * xa / 6 + u * ya;
        own = fmax(own_a, own_b) + eta; /* x * (1/6) */
        break;
    }
    case ACT_HARDSWISH: {
        y = x * fmin(fmax(x + 3, 0), 6) / 6;
        if (x + e < -3 - flat_margin) { /* x * 0 */
            *yo = y;
            *eo = 0;
            return;
        }
        hardswish_err(x, e, y, flat_margin, pr, &p, &own);
        break;
    }
    case ACT_SILU: {
        if (isinf(x)) { /* the limits: +inf, and x sigmoid(x) -> -0 at -inf; a held x' is the same infinity */
            *yo = x > 0 ? x : -0.0;
            *eo = x > 0 ? INFINITY : 0;
            return;
        }
        y = x * sigmoid(x);
        p = dsup(silu_d, silu_crit, 2, x - e, x + e) * e;
        /* x * sigmoid(x): sigmoid's own (fn + 2u) relative (exp, the addition, the division) and the multiply's
         * u; x / (1 + exp(-x)): exp's fn passed through 1 / (1 + E), the addition, the division: the same 3u + fn.
         * Sigmoid's underflow (eta, absolute, where it is tiny) is scaled by |x|; where exp(-x) overflows the
         * second form returns -0 for a true |y| below |x| eta. */
        double xa = fabs(x) + e;
        own = (fn + 3 * u) * (fabs(y) + p) + xa * underflow_abs(pr);
        break;
    }
    case ACT_MISH: {
        if (isinf(x)) { /* the limits, +inf and -0 (x tanh(softplus x) -> -0 at -inf), as silu */
            *yo = x > 0 ? x : -0.0;
            *eo = x > 0 ? INFINITY : 0;
            return;
        }
        y = x * tanh(softplus_of(x));
        p = dsup(mish_d, mish_crit, 2, x - e, x + e) * e;
        own = mish_own(x, e, fabs(y) + p, pr);
        break;
    }
    case ACT_GELU: {
        if (isinf(x)) { /* the limits, +inf and -0, as silu */
            *yo = x > 0 ? x : -0.0;
            *eo = x > 0 ? INFINITY : 0;
            return;
        }
        gelu_err(ap, x, e, pr, &y, &p, &own);
        break;
    }
    case ACT_ELU: {
        double alpha = ap->a, aa = fabs(alpha);
        y = x > 0 ? x : alpha * expm1(x);
        if (x - e > 0) { /* positive branch for every held x' */
            *yo = y;
            *eo = e;
            return;
        }
        /* Negative side for x' in [x - e, min(x + e, 0)]: exp(x') <= exp(min(x + e, 0)) =: E,
         * |exp(x') - 1| <= 1 - exp(x - e) =: D. */
        double ehi = exp(fmin(x + e, 0)), d = -expm1(x - e);
        double dsup = aa * ehi;
        if (x + e > 0) dsup = fmax(dsup, 1.0);
        p = dsup * e;
        /* (a) alpha * (exp(x) - 1): exp's fn * E, the subtraction's u * D (cancellation near 0 is real);
         * (b) alpha * expm1(x): fn * D. Both then alpha rounded to the format and one multiply: 2u|alpha| D. */
        own = fmax(aa * (fn * ehi + u * d), fn * aa * d) + 2 * u * aa * d + 2 * eta * (1 + aa); /* exp(x), x * x */
        break;
    }
    }
    *yo = y;
    *eo = finish(y, p, own, pr);
}

static par_status unary(const par_ref_ctx *c, const act_params *ap, const par_rt *const *in, par_rt *const *out,
                        par_msg *msg)
{
    par_status io = float_unary_io(ap->name, in, out, msg);
    if (io != PAR_OK) return io;
    const par_rt *x = in[0];
    par_rt *y = out[0];
    act_const k = {par_eta(&c->prec, 1), 0, 0};
    if (ap->op == ACT_CLAMP) k.lo_r = const_rounding(ap->a, &c->prec), k.hi_r = const_rounding(ap->b, &c->prec);
    for (int64_t i = 0; i < x->numel; i++) {
        act_elem(ap, &k, x->v[i], x->e[i], &c->prec, &y->v[i], &y->e[i]);
        /* hardswish's x * relu6(x + 3) reaches 6 |x| before its division by 6 (PyTorch's order): beyond the
         * arithmetic's largest finite value / 6 a correct backend may hold Inf where the ideal is finite */
        if (ap->op == ACT_HARDSWISH && isfinite(x->v[i]) && x->v[i] + x->e[i] > -3 &&
            !(6 * (fabs(x->v[i]) + x->e[i]) < par_ovf_arith(&c->prec)))
            par_mark_any(c, i);
    }
    return PAR_OK;
}

/* ------------------------------------------------------------------------------------------------------------- */

/* ------------------------------------------------------------------------------------------------------------- */

static par_status clamp_kernel(const par_ref_ctx *c, const char *name, double lo, double hi, const par_rt *const *in,
                               par_rt *const *out, par_msg *msg)
{
    if (!(lo <= hi)) return par_msgf(msg, PAR_ERROR, "%s: lower bound %g above upper bound %g", name, lo, hi);
    act_params ap = {ACT_CLAMP, name, lo, hi};
    par_status st = unary(c, &ap, in, out, msg);
    if (st == PAR_OK && lo >= 0) out[0]->nonneg = 1; /* min(max(x', lo), hi) >= 0 for any held x' */
    return st;
}

par_status par_ref_relu(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return clamp_kernel(c, "relu", 0, INFINITY, in, out, msg);
}

par_status par_ref_relu6(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return clamp_kernel(c, "relu6", 0, 6, in, out, msg);
}

par_status par_ref_hardtanh(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return clamp_kernel(c, "hardtanh", par_attr_float(c->n, "min_val", -1), par_attr_float(c->n, "max_val", 1), in,
                        out, msg);
}

par_status par_ref_clamp(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return clamp_kernel(c, "clamp", par_attr_float(c->n, "min", -INFINITY), par_attr_float(c->n, "max", INFINITY), in,
                        out, msg);
}

par_status par_ref_leaky_relu(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    act_params ap = {ACT_LEAKY, "leaky_relu", par_attr_float(c->n, "negative_slope", 0.01), 0};
    return unary(c, &ap, in, out, msg);
}

par_status par_ref_sigmoid(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    act_params ap = {ACT_SIGMOID, "sigmoid", 0, 0};
    return unary(c, &ap, in, out, msg);
}

par_status par_ref_tanh(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    act_params ap = {ACT_TANH, "tanh", 0, 0};
    return unary(c, &ap, in, out, msg);
}

par_status par_ref_hardsigmoid(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    act_params ap = {ACT_HARDSIGMOID, "hardsigmoid", 0, 0};
    return unary(c, &ap, in, out, msg);
}

par_status par_ref_hardswish(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    act_params ap = {ACT_HARDSWISH, "hardswish", 0, 0};
    return unary(c, &ap, in, out, msg);
}

par_status par_ref_silu(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    act_params ap = {ACT_SILU, "silu", 0, 0};
    return unary(c, &ap, in, out, msg);
}

par_status par_ref_mish(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    act_params ap = {ACT_MISH, "mish", 0, 0};
    return unary(c, &ap, in, out, msg);
}

par_status par_ref_gelu(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    const char *approx = par_attr_str(c->n, "approximate", "none");
    act_params ap = {ACT_GELU, "gelu", strcmp(approx, "tanh") == 0 ? 1 : 0, 0};
    if (strcmp(approx, "none") != 0 && ap.a == 0)
        return par_msgf(msg, PAR_ERROR, "gelu: attribute 'approximate': '%s', expected none or tanh", approx);
    return unary(c, &ap, in, out, msg);
}

par_status par_ref_elu(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    act_params ap = {ACT_ELU, "elu", par_attr_float(c->n, "alpha", 1.0), 0};
    return unary(c, &ap, in, out, msg);
}

/* prelu: x >= 0 ? x : slope[c] * x with c the channel (dims[1]) of the element, or slope[0] for a [1] slope.
 * Writing f(x', s') - f(x, s) = [f(x', s') - f(x', s)] + [f(x', s) - f(x, s)]: the first is nonzero only on the
 * negative side, |s' - s||x'| <= e_s (|x| + e); the second is max(1, |s|) e (Lipschitz). One multiply: u|y'|. */
par_status par_ref_prelu(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    if (!in[0] || !in[1] || !out[0]) return par_msgf(msg, PAR_ERROR, "prelu: inputs 0 (x) and 1 (slope) are required");
    const par_rt *x = in[0], *s = in[1];
    par_rt *y = out[0];
    if (!is_float(x->dtype) || !is_float(s->dtype))
        return par_msgf(msg, PAR_UNSUPPORTED, "prelu: dtypes %s, %s reached the float kernel (only f32, f16, f64)",
                        par_dtype_name(x->dtype), par_dtype_name(s->dtype));
    int64_t channels = s->numel;
    if (y->numel != x->numel || (channels != 1 && (x->rank < 2 || x->dims[1] != channels)))
        return par_msgf(msg, PAR_ERROR, "prelu: input 1 (slope) has %lld elements, x's shape does not match",
                        (long long)channels);
    int64_t inner = 1;
    for (int32_t i = 2; i < x->rank; i++) inner *= x->dims[i];
    const par_prec *pr = &c->prec;
    for (int64_t i = 0; i < x->numel; i++) {
        int64_t ch = channels == 1 ? 0 : (i / inner) % channels;
        double xv = x->v[i], ex = x->e[i], sv = s->v[ch], es = s->e[ch];
        double v = xv >= 0 ? xv : sv * xv;
        y->v[i] = v;
        if (xv - ex >= 0) {
            y->e[i] = ex;
            continue;
        }
        double p = fmax(1.0, fabs(sv)) * ex + es * (fabs(xv) + ex);
        y->e[i] = finish(v, p, pr->u * (fabs(v) + p), pr);
    }
    return PAR_OK;
}
