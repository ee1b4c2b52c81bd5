/*
 * softmax.c - float64 reference kernels of softmax and log_softmax along one axis, with the error budget of every
 * output element (docs/budgets/elementwise.md). Shape inference is par_infer_same (activation.c), which also checks
 * the axis. One row is par_softmax_row (softmax.h), shared with the kernels that hold a softmax inside (attention.c).
 *
 * The kernels follow docs/ops.md literally: m = max_j x_j, s = sum_j exp(x_j - m), y_i = exp(x_i - m) / s and
 * (x_i - m) - log s. They see float tensors only; they must not allocate nor read anything but their input.
 *
 * Budget of one row of n elements (x_j with budgets e_j, E = max_j e_j; u, u_s, fn = fn_ulps * u):
 *   upper bounds over the held inputs: each exponent x'_k - x'_j moves by at most e_k + e_j, so
 *     ybar_j = min(1, y_j exp(e_j + E)) bounds softmax_j(x') and dbar_j = |x_j - m| + e_j + E bounds |x'_j - m'|;
 *   relative error of the computed sum: rel_s = fn + u sum_j ybar_j dbar_j + gamma_n
 *     (each term exp(fl(x_j - m)) carries fn plus the subtraction's u|x_j - m| turned relative by exp; the n-term
 *     sum of positive terms adds gamma_n);
 *   softmax own:  ybar_i (u dbar_i + fn + rel_s + 2u) + 2 eta   (2u: the division, or a reciprocal and a multiply;
 *                 eta: underflow of exp and of the stored result, underflow_abs in elem_util.h)
 *   softmax propagation: |dy_i| <= ybar_i (e_i + sum_j ybar_j e_j)   (dy_i/dx_j = y_i (delta_ij - y_j)), or the
 *                 first-order bound around the reference with its remainder (first_order below), the smaller; the
 *                 own terms below then take the held output min(ybar_i, y_i + p_i) in place of ybar_i
 *   log_softmax own: u max(dbar_i, |m| + E + Lbar) + u (|y_i| + p_i) + rel_s / (1 - rel_s) + fn Lbar
 *                 (the two subtractions in either order (x_i - m) - L or x_i - (m + L); log of a sum with relative
 *                 error rel_s is off by at most rel_s / (1 - rel_s); log's own fn relative to L; Lbar = log s + E)
 *   log_softmax propagation: e_i + sum_j ybar_j e_j
 *   storage: u_s (|y| + p + own).
 * An exact -inf input (a masked position) is an exact 0 term: its output is exactly 0 (log_softmax -inf), budget 0,
 * and it is left out of the row's bounds (exact_neg_inf), unless the row holds a NaN: then every output of the row is
 * NaN (PyTorch: the sum is NaN and 0 / NaN is NaN), as the formulas give. A row holding +inf has m = +inf and
 * exp(inf - inf) = NaN: every output NaN, again as the formulas (and PyTorch) give; docs/ops.md, "NaN and Inf".
 */
#include "reference.h"
#include "elem_util.h"
#include "kernel_util.h"
#include "softmax.h"

#include <math.h>

/* An element that is exactly -inf (budget 0) in a row whose max is finite: a masked position (masked_fill with
 * -inf before an attention softmax). Its term exp(-inf - m) is exactly 0 in every arithmetic, its output exactly 0
 * (log_softmax: -inf), and it adds nothing to the row's sum or to the other elements' budgets. Left in the general
 * bounds it would turn them into 0 * inf = NaN for the whole row. */
static int exact_neg_inf(double v, double e, double m) { return isinf(v) && v < 0 && e == 0 && isfinite(m); }

static par_status softmax_common(const par_ref_ctx *c, int log_form, const par_rt *const *in, par_rt *const *out,
                                 par_msg *msg)
{
    const char *name = log_form ? "log_softmax" : "softmax";
    par_status io = float_unary_io(name, in, out, msg);
    if (io != PAR_OK) return io;
    const par_rt *x = in[0];
    par_rt *y = out[0];
    int64_t axis = par_attr_int(c->n, "axis", -1);
    if (axis < 0) axis += x->rank;
    if (axis < 0 || axis >= x->rank)
        return par_msgf(msg, PAR_ERROR, "%s: attribute 'axis': %lld is out of range for rank %d", name,
                        (long long)par_attr_int(c->n, "axis", -1), (int)x->rank);
    int64_t outer = 1, inner = 1, len = x->dims[axis];
    for (int64_t i = 0; i < axis; i++) outer *= x->dims[i];
    for (int64_t i = axis + 1; i < x->rank; i++) inner *= x->dims[i];

    for (int64_t o = 0; o < outer; o++)
        for (int64_t in_i = 0; in_i < inner; in_i++) {
            int64_t base = o * len * inner + in_i;
            par_softmax_row(&c->prec, log_form, x->v + base, x->e + base, x->s ? x->s + base : NULL,
                            x->f ? x->f + base : NULL, len, inner, y->v + base, y->e + base);
        }
    return PAR_OK;
}

/* The propagated bound of softmax output i around the reference, for a row whose inputs move by dx_j, |dx_j| <= e_j
 * <= E (docs/budgets/elementwise.md, "softmax"). Exactly, log y'_i - log y_i = L_i - R with
 * L_i = (1 - y_i) dx_i - sum_{j != i} y_j dx_j (the first-order term, linear in dx) and
 * R = log sum_j y_j exp(dx_j - mu) >= 0, mu = sum_j y_j dx_j: by Hoeffding's lemma (the dx_j - mu lie in an
 * interval of width 2E, and their y-weighted mean is 0) R <= (2E)^2 / 8 = E^2 / 2. |L_i| is at most its worst case
 * (1 - y_i) e_i + sum_{j != i} y_j e_j, and, by rule 5 (Hoeffding's inequality over the inputs' independent
 * mean-zero errors of scales s_j), at most lambda sqrt(((1 - y_i) s_i)^2 + sum_{j != i} (y_j s_j)^2) except with
 * probability 3e-8, plus the same worst case of the flush parts f_j, which are not mean-zero (docs/oracle.md,
 * "Flushed subnormals"). With D the smaller plus E^2 / 2, |y'_i - y_i| = y_i |exp(L_i - R) - 1| <= y_i (exp(D) - 1).
 * The row's sums at the reference: */
typedef struct fo_row {
    double sum_ye, sum_ys2, sum_yf; /* sum_j y_j e_j, sum_j (y_j s_j)^2, sum_j y_j f_j */
    double emax;                    /* E */
    int have_s;                     /* the scales are known (else the worst case alone) */
} fo_row;

static double first_order(double y, double e, double s, double f, const fo_row *r)
{
    double lin = (1 - y) * e + fmax(0, r->sum_ye - y * e);
    if (r->have_s) {
        double rest = fmax(0, r->sum_ys2 - bmul(y * s, y * s)) + bmul((1 - y) * s, (1 - y) * s);
        lin = fmin(lin, PAR_PROP_LAMBDA * sqrt(rest) + (1 - y) * f + fmax(0, r->sum_yf - y * f));
    }
    double d = lin + r->emax * r->emax / 2;
    return d < 700 ? y * expm1(d) : INFINITY;
}

void par_softmax_row(const par_prec *pr, int log_form, const double *xv, const double *xe, const double *xs,
                     const double *xf, int64_t len, int64_t inner, double *yv, double *ye)
{
    const double u = pr->u, fn = pr->fn_ulps * pr->u, eta = underflow_abs(pr);
    const double gam = par_gamma(len, u);
    double m = -INFINITY, emax = 0;
    for (int64_t j = 0; j < len; j++) {
        m = fmax(m, xv[j * inner]);
        emax = fmax(emax, xe[j * inner]);
    }
    double s = 0;
    for (int64_t j = 0; j < len; j++) s += exp(xv[j * inner] - m);
    double lg = log(s);
    /* Bounds over the held inputs: sum ybar_j e_j, sum ybar_j dbar_j. */
    double sum_ye = 0, sum_yd = 0, sum_ye2 = 0, sum_yd2 = 0, sum_y2 = 0; /* and their squares (stat) */
    double sum_y0e = 0, sum_ys2 = 0, sum_yf = 0; /* sum y_j e_j, sum (y_j s_j)^2, sum y_j f_j (first order) */
    for (int64_t j = 0; j < len; j++) {
        if (exact_neg_inf(xv[j * inner], xe[j * inner], m) && !isnan(s)) continue; /* an exact 0 term */
        double yj = exp(xv[j * inner] - m) / s;
        double grow = xe[j * inner] + emax;
        double ybar = grow > 700 ? 1.0 : fmin(1.0, yj * exp(grow));
        double dbar = fabs(xv[j * inner] - m) + xe[j * inner] + emax;
        sum_ye += ybar * xe[j * inner];
        sum_yd += ybar * dbar;
        sum_ye2 += bmul(yj * xe[j * inner], yj * xe[j * inner]);
        sum_yd2 += bmul(yj * dbar, yj * dbar);
        sum_y2 += yj * yj;
        sum_y0e += yj * xe[j * inner];
        if (xs) sum_ys2 += bmul(yj * xs[j * inner], yj * xs[j * inner]);
        if (xf) sum_yf += yj * xf[j * inner];
    }
    const int stat = pr->stat_scale;
    double rel_s = stat ? fn * sqrt(sum_y2) + u * sqrt(sum_yd2) + sqrt((double)len) * u : fn + u * sum_yd + gam;
    for (int64_t j = 0; j < len; j++) {
        int64_t k = j * inner;
        if (exact_neg_inf(xv[k], xe[k], m) && !isnan(s)) { /* exp(-inf) = 0 exactly in any arithmetic */
            yv[k] = log_form ? -INFINITY : 0.0;
            ye[k] = 0;
            continue;
        }
        double d = xv[k] - m, ej = xe[k];
        double grow = ej + emax;
        double yj = exp(d) / s;
        double ybar = grow > 700 ? 1.0 : fmin(1.0, yj * exp(grow));
        double dbar = fabs(d) + ej + emax;
        /* the companion's propagation: the Jacobian's terms other than i, and i's own with 1 - y_i */
        double rest = sqrt(fmax(0, sum_ye2 - bmul(yj * ej, yj * ej)) + bmul((1 - yj) * ej, (1 - yj) * ej));
        if (!log_form && stat) {
            double own = yj * hypot(hypot(u * dbar, fn), hypot(rel_s, 2 * u)) + par_eta(pr, (double)len) + 2 * eta;
            yv[k] = yj;
            ye[k] = finish(yj, yj * rest, own, pr);
        } else if (!log_form) {
            const fo_row fr = {sum_y0e, sum_ys2, sum_yf, emax, xs != NULL};
            /* and the exact softmax of any held inputs lies in [0, 1]: at most max(y, 1 - y) from y */
            double p = fmin(fmin(ybar * (ej + sum_ye), first_order(yj, ej, xs ? xs[k] : 0, xf ? xf[k] : 0, &fr)),
                            fmax(yj, 1 - yj));
            /* flushing: the len - 1 partial sums of the exps (the sum is >= 1); the held output is at most
             * min(ybar, y + p) */
            double own = fmin(ybar, yj + p) * (u * dbar + fn + rel_s + 2 * u + par_eta(pr, (double)len)) + 2 * eta;
            yv[k] = yj;
            ye[k] = finish(yj, p, own, pr);
        } else {
            double v = d - lg;
            double p = stat ? rest : ej + sum_ye;
            double lbar = fabs(lg) + emax;
            double own = u * fmax(dbar, fabs(m) + emax + lbar) + u * (fabs(v) + p) +
                         (rel_s < 0.5 ? rel_s / (1 - rel_s) : INFINITY) + fn * lbar + par_eta(pr, (double)len);
            yv[k] = v;
            ye[k] = finish(v, p, own, pr);
        }
    }
}

par_status par_ref_softmax(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return softmax_common(c, 0, in, out, msg);
}

par_status par_ref_log_softmax(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return softmax_common(c, 1, in, out, msg);
}
