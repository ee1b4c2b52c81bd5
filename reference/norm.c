/*
 * norm.c - the float64 reference kernels of batch_norm (inference form) and of the normalizations over the input's
 * own statistics, layer_norm, group_norm and instance_norm (docs/ops.md), with the error budget of every output
 * element (docs/budgets/elementwise.md for batch_norm, docs/budgets/norm-reduce.md for the others; the derivation
 * of the latter is repeated above norm_group below).
 *
 * y = (x - mean[c]) / sqrt(var[c] + eps) * weight[c] + bias[c], c = dims[1] index of the element. The kernel
 * evaluates the definition directly in float64; it sees float tensors only and must not allocate.
 *
 * Budget. Backends either fold the parameters, s = w / sqrt(var + eps), t = b - mean * s, y = x * s + t, or evaluate
 * directly. Counting roundings (u each, relative to the intermediate's magnitude):
 *   sqrt(var + eps): eps to the format (u, relative to var + eps at most), the add (u), both halved by sqrt, sqrt
 *     itself (u): 2u relative; a reciprocal square root and a multiply instead of a division: one more u;
 *   folded:  s: 2u + 2u = 4u relative; mean * s: 5u |mean s|; t: + u|t|; x * s: 5u |x s|; y: + u|y|;
 *   direct:  x - mean: u|x - mean|; the division or rsqrt-multiply: 3u + u; * w: u; + b: u|y|: 6u |(x - mean) s| + u|y|.
 *   own = 6u |s| (|x| + |mean|) + u |t| + u |y|, which covers both (|x - mean| <= |x| + |mean|).
 * Propagation (first order; parameters usually carry 0): |s| (e_x + e_mean) + e_bias + |x - mean| / sqrt(var + eps)
 *   e_weight + |x - mean| |w| e_var / (2 (var + eps - e_var)^(3/2)) (+inf when e_var reaches var + eps).
 * Storage: u_s (|y| + p + own). Held magnitudes (value plus budget) are used throughout.
 */
#include "reference.h"
#include "elem_util.h"
#include "kernel_util.h"

#include "core/shape.h"

#include <math.h>

par_status par_ref_batch_norm(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    for (int32_t i = 0; i < 5; i++) {
        if (!in[i])
            return par_msgf(msg, PAR_ERROR, "batch_norm: input %d (%s) is required", (int)i, par_batch_norm_inputs[i]);
        if (!is_float(in[i]->dtype))
            return par_msgf(msg, PAR_UNSUPPORTED, "batch_norm: input %d (%s): dtype %s reached the float kernel (only "
                            "f32, f16, f64)", (int)i, par_batch_norm_inputs[i], par_dtype_name(in[i]->dtype));
    }
    const par_rt *x = in[0], *w = in[1], *b = in[2], *mean = in[3], *var = in[4];
    par_rt *y = out[0];
    if (!y || x->rank < 2 || y->numel != x->numel)
        return par_msgf(msg, PAR_ERROR, "batch_norm: input 0 (x) must have rank >= 2 and match the output");
    int64_t ch = x->dims[1];
    for (int32_t i = 1; i < 5; i++)
        if (in[i]->numel != ch)
            return par_msgf(msg, PAR_ERROR, "batch_norm: input %d (%s) has %lld elements, expected %lld", (int)i,
                            par_batch_norm_inputs[i], (long long)in[i]->numel, (long long)ch);
    double eps = par_attr_float(c->n, "eps", 1e-5);
    if (!(eps > 0)) return par_msgf(msg, PAR_ERROR, "batch_norm: attribute 'eps': %g, must be > 0", eps);
    for (int64_t k = 0; k < ch; k++)
        if (!(var->v[k] >= 0))
            return par_msgf(msg, PAR_ERROR, "batch_norm: input 4 (running_var): element %lld is %g, must be >= 0",
                            (long long)k, var->v[k]);
    int64_t inner = 1;
    for (int32_t i = 2; i < x->rank; i++) inner *= x->dims[i];
    const double u = c->prec.u, us = c->prec.u_store, eta3 = par_eta(&c->prec, 3);
    /* One channel's run of inner elements at a time: what depends on the channel alone is computed once for the
     * run, by the same expressions as an element's, so every element gets the same bits. */
    for (int64_t i0 = 0; i0 < x->numel; i0 += inner) {
        int64_t k = (i0 / inner) % ch;
        double ve = var->v[k] + eps, sq = sqrt(ve);
        double s = w->v[k] / sq;
        double em = mean->e[k], ew = w->e[k], eb = b->e[k], ev = var->e[k];
        double wa = fabs(w->v[k]) + ew, pw = ev > 0 && ve - ev > 0 ? 2 * pow(ve - ev, 1.5) : 0;
        /* |s'| over the held parameters */
        double sa = (ew > 0 || ev > 0) ? (ve - ev > 0 ? wa / sqrt(ve - ev) : INFINITY) : fabs(s);
        double t = b->v[k] - mean->v[k] * s;
        double own_x = 6 * u * sa, own_t = u * (fabs(t) + eb + sa * em), own_eta = eta3 * (1 + sa);
        for (int64_t i = i0; i < i0 + inner; i++) {
            double d = x->v[i] - mean->v[k];
            double v = d / sq * w->v[k] + b->v[k];
            double ex = x->e[i];
            double da = fabs(d) + ex + em; /* |x' - mean'| */
            double p = fabs(s) * (ex + em) + eb + da / sq * ew;
            if (ev > 0) p += ve - ev > 0 ? da * wa * ev / pw : INFINITY;
            double own = own_x * (fabs(x->v[i]) + ex + fabs(mean->v[k]) + em) + own_t + u * (fabs(v) + p) +
                         own_eta; /* flushing: x - mean, the product, s */
            double tot = p + own + us * (fabs(v) + p + own);
            y->v[i] = v;
            y->e[i] = (isfinite(v) && tot == tot) ? tot : INFINITY;
        }
    }
    return PAR_OK;
}

/* ---- layer_norm, group_norm, instance_norm -----------------------------------------------------------------------
 * Each group of n elements x_j (core/shape.h, par_norm_geom) is normalized with its own mean m and biased variance
 * v (PyTorch: divisor n): y_j = (x_j - m) r w_k + b_k, r = 1 / sqrt(v + eps), k the weight index of element j.
 *
 * Budget (docs/budgets/norm-reduce.md). The forms covered: the mean as any sum of the n terms then a scaling, or
 * Welford's running mean; the variance two-pass (sum of (x - m')^2), Welford's running M2, or one-pass
 * E[x^2] - m'^2; r as sqrt then a division or reciprocal, or an rsqrt estimate with Newton steps; the output
 * directly ((x - m') r w + b) or folded (x s + t with s = r w, t = b - m' s), with or without fused multiply-adds.
 * A = mean |x_j|, M = max |x_j|, D = max |x_j - m| (held magnitudes: value plus budget), u the arithmetic's unit
 * roundoff, fn = fn_ulps u:
 *   mean      E_m = gamma(n + 2) A + 3u M   (n - 1 additions and the scaling: gamma(n) A; Welford's updates
 *             m_k = m_{k-1} + (x_k - m_{k-1}) / k leave sum_k (k / n) (u |m_k| + 2u |x_k - m_{k-1}| / k)
 *             <= u n A + 2u (A + M))
 *   variance  E_v = gamma(n + 6) (v + m^2) + 6u D^2 + 2 |m| E_m + E_m^2
 *             two-pass: the squares and sum of n terms, gamma(n + 3) v, plus E_m^2 for the rounded mean (the sum of
 *             (d_j - dm)^2 is n v + n dm^2 as sum d_j = 0); Welford: first order, an error in m_{k-1} cancels in the
 *             increment (x_k - m_{k-1})(x_k - m_k), leaving 3u delta_k^2 per step (sum delta_k^2 <= 2n (v + D^2))
 *             and the accumulation u n v; one-pass: gamma(n + 2) (v + m^2) for the mean square, 2 |m| E_m + E_m^2
 *             + u m^2 for m'^2, u v for the subtraction: the cancellation when m^2 >> v is real and budgeted.
 *   r         the held v + eps lies within V = E_v + (propagated) + u eps + u (v + eps) of v + eps; with
 *             L = v + eps - V (L <= 0: unbounded), r' <= r_hi = (1 + (fn_ulps + 2) u) / sqrt(L), and
 *             |r' - r| <= r_hi - r (1/sqrt is convex: the lower end moves it most).
 *   y         |y' - y| <= (e_j + E_m') r_hi |w|' + |x_j - m| (r_hi - r) |w|' + |x_j - m| r e_w + e_b, with |w|' = |w| +
 *             e_w and E_m' the mean's own error plus its propagated part; the final arithmetic 6u r_hi |w|' (|x_j| +
 *             |m|) + u |t| + u |y| (batch_norm's count: both forms); storage u_s (|y| + ...).
 * Propagation of the inputs' budgets e_j (scales s_j; par_prop_bound takes the smaller of the worst case and the
 * probabilistic bound, reference.h): the held mean moves by P(e, s) / n, the held variance by
 * 2 P(|d| e, |d| s) / n + sum e_j^2 / n (exact: var(x + dx) - var(x) = (2/n) sum d_j dx_j + (1/n) sum (dx_j -
 * mean dx)^2), both entering the bounds above.
 * The statistical companion's scale (par_prec.stat_scale; docs/oracle.md, rule 5) counts the same roundings and input
 * errors as independent and mean-zero, by their root-sum-square: sqrt(k) u in place of gamma_k in the mean's and the
 * variance's sums, sqrt(6) u in place of the output's 6u, the inputs' scales without lambda in the held mean and
 * variance, and |y'_j - y_j| as the root-sum-square of its three parts (the element's error, the mean's, r's). */
/* The smallest value a correct backend's held v' + eps can take (docs/budgets/norm-reduce.md, "A floor under the
 * variance"): every form it may use holds a variance v' >= 0 (two-pass and rms_norm sum non-negative squares; each
 * of Welford's increments (x_k - m_{k-1})(x_k - m_k) is a product of two factors of one sign, the rounded m_k lying
 * between m_{k-1} and x_k; the one-pass form clamps at 0), so by monotone rounding fl(v' + eps') >= eps', with eps'
 * eps rounded to the arithmetic and the storage formats (relative u each, and the gradual underflow's half
 * subnormal each where eps lies below their smallest normal). A backend that flushes reads an eps below tau as 0:
 * no floor then. */
static double held_eps_floor(double eps, const par_prec *pr)
{
    if (!(eps > 0)) return 0;
    if (pr->flush > 0 && eps < pr->flush) return 0;
    double lo = eps * (1 - pr->u) * (1 - pr->u_store);
    if (pr->u > 0 && eps < par_fmt_of(pr->u)->tiny) lo -= par_fmt_of(pr->u)->eta;
    if (pr->u_store > 0 && eps < par_fmt_of(pr->u_store)->tiny) lo -= par_fmt_of(pr->u_store)->eta;
    return lo > 0 ? lo : 0;
}

/* Why a normalization's r is unbounded where its eps gives no floor (held_eps_floor under flushing), for the record
 * (par_rt.why_unbounded). */
static const char eps_flushed[] = "eps lies below the arithmetic's smallest normal, so a backend that flushes "
                                  "subnormals may read it as 0, and where the variance's (the mean square's) interval "
                                  "reaches 0, 1 / sqrt is unbounded";

static void note_eps_flushed(par_rt *y, double L, double eps, const par_prec *pr)
{
    if (!(L > 0) && pr->flush > 0 && eps > 0 && eps < pr->flush) y->why_unbounded = eps_flushed;
}

typedef struct norm_params {
    const par_rt *w, *b; /* NULL when absent: weight 1, bias 0 */
} norm_params;

static void norm_group(const par_norm_geom *q, int64_t g, const par_rt *x, const norm_params *np, const par_prec *pr,
                       par_rt *y)
{
    const double u = pr->u, n = (double)q->n;
    const int64_t base = g * q->n;
    const double *xs = par_rt_scales(x);
    double sum = 0, mag = 0, M = 0, se = 0, ss2 = 0, se2 = 0, emax = 0;
    for (int64_t j = 0; j < q->n; j++) {
        double v = x->v[base + j], e = x->e[base + j], a = fabs(v) + e;
        sum += v;
        mag += a;
        if (a > M) M = a;
        se += e;
        ss2 += bmul(xs[base + j], xs[base + j]);
        se2 += bmul(e, e);
        if (e > emax) emax = e;
    }
    const double m = sum / n;
    double var = 0, D = 0, sde = 0, sds2 = 0;
    for (int64_t j = 0; j < q->n; j++) {
        double d = x->v[base + j] - m, sd = fabs(d) * xs[base + j];
        var += d * d;
        if (fabs(d) > D) D = fabs(d);
        sde += bmul(fabs(d), x->e[base + j]);
        sds2 += bmul(sd, sd);
    }
    var /= n;
    /* propagated: the held mean and variance */
    const int stat = pr->stat_scale;
    const double em_in = (stat ? sqrt(ss2) : par_prop_bound(se, ss2)) / n;
    /* the held variance moves by the first-order part, of either sign, and by the second-order part sum (dx_j -
     * mean dx)^2 / n, never negative: only the first can lower it (ev_lo, for L below) */
    const double ev_lo = 2 * (stat ? sqrt(sds2) : par_prop_bound(sde, sds2)) / n, ev_in = ev_lo + se2 / n;
    /* own: mean and variance of the held values */
    /* Flushing (par_eta, zero unless declared): the n - 1 partial sums of the mean and its division flush at most
     * (n - 1) eta / n + eta <= 2 eta; the variance's n differences, n squares and n - 1 sums, divided by n, at most
     * 3 eta; the output's difference flush is scaled by r |w| (sh), its product, scaling and bias add 3 eta. */
    const double gm = stat ? sqrt(n + 2) * u : par_gamma(q->n + 2, u), gv = stat ? sqrt(n + 6) * u : par_gamma(q->n + 6, u);
    const double em = gm * mag / n + 3 * u * M + par_eta(pr, 2), mt = stat ? hypot(em, em_in) : em + em_in;
    const double mh = fabs(m) + em_in, dh = D + emax + em_in, vh = var + ev_in;
    /* the D^2 part is Welford's 3u per step (sum delta_k^2 / n <= 2 (v + D^2)): 6u, not gamma(n + 6) (the budget;
     * the companion's scale keeps its root-sum-square form); and as the running mean's distance to m is at most
     * sqrt(n v / (k - 1)) (Cauchy-Schwarz), D^2 is at most H_{n-1} v, H_{n-1} <= 1 + ln(n - 1) */
    const double gd = stat ? gv : 6 * u, hn = q->n > 1 ? 1 + log(n - 1) : 0;
    /* the own error of a variance computed from held values of variance vx (any vx in [vlo, vh]) */
#define VAR_OWN(vx) (gv * ((vx) + mh * mh) + gd * fmin(dh * dh, hn * (vx)) + 2 * mh * em + em * em + par_eta(pr, 3))
    /* vx - VAR_OWN(vx) grows with vx while gv + gd H < 1: the least computed variance is then at the least held
     * one (docs/budgets/norm-reduce.md, "r") */
    const double vlo = fmax(var - ev_lo, 0), ev = VAR_OWN(vh), ev_least = gv + gd * hn < 1 ? VAR_OWN(vlo) : ev;
#undef VAR_OWN
    const double ve = var + q->eps;
    const double L = fmax(vlo - ev_least + q->eps - u * q->eps - u * (ve + ev + ev_in), held_eps_floor(q->eps, pr));
    const double r = 1.0 / sqrt(ve);
    const double r_hi = L > 0 ? (1 + (pr->fn_ulps + 2) * u) / sqrt(L) : INFINITY;
    note_eps_flushed(y, L, q->eps, pr);
    for (int64_t j = 0; j < q->n; j++) {
        int64_t k = (g % q->per_sample) * q->cpg + j / q->inner;
        double wv = np->w ? np->w->v[k] : 1, ew = np->w ? np->w->e[k] : 0;
        double bv = np->b ? np->b->v[k] : 0, eb = np->b ? np->b->e[k] : 0;
        double xv = x->v[base + j], e = x->e[base + j];
        double d = xv - m, v = d * r * wv + bv;
        double wa = fabs(wv) + ew, sh = bmul(r_hi, wa);
        double dev = stat ? hypot(hypot(bmul(e, sh), bmul(mt, sh)), bmul(fabs(d) * wa, r_hi - r)) + fabs(d) * r * ew + eb
                          : bmul(e + mt, sh) + bmul(fabs(d) * wa, r_hi - r) + fabs(d) * r * ew + eb;
        double own = (stat ? sqrt(6.0) : 6) * u * bmul(sh, fabs(xv) + e + fabs(m) + mt) + u * (fabs(bv) + eb + bmul(fabs(m) + mt, sh)) +
                     u * (fabs(v) + dev) + bmul(par_eta(pr, 1), sh) + par_eta(pr, 3);
        if (q->n == 1 && isfinite(xv)) {
                         /* one finite element: its mean is itself in every form (a sum of one term, divided by 1), so
                          * x - mean is exactly 0 whatever the input's error, and the direct output is b exactly (an
                          * infinite x gives inf - inf = NaN, as the general form above computes). The
                          * folded output x s + (b - m s) computes the same product P = x s twice (equal bits, or
                          * exact in an FMA) and rounds b - P and the sum: |y - b| <= 2 u (|b| + |P|) */
            /* and the variance of one element is exactly 0 in every form (x - m = 0, x^2 - m^2 = 0), so s is
             * within (fn + 2) u of w / sqrt(eps), whatever bound the general statistics above would allow */
            const double s1 = bmul((1 + (pr->fn_ulps + 2) * u) / sqrt(q->eps), wa);
            v = bv, dev = eb;
            own = 2 * u * (bmul(fabs(xv) + e, s1) + fabs(bv) + eb) * (1 + 4 * u) + par_eta(pr, 3);
        }
        y->v[base + j] = v;
        y->e[base + j] = finish(v, dev, own, pr);
    }
}

static par_status norm_kernel(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    const char *op = c->n->op;
    if (!in[0] || !out[0]) return par_msgf(msg, PAR_ERROR, "%s: input 0 (x) is required", op);
    for (int32_t i = 0; i < 3; i++)
        if (in[i] && !is_float(in[i]->dtype))
            return par_msgf(msg, PAR_UNSUPPORTED, "%s: input %d (%s): dtype %s reached the float kernel (only f32, "
                            "f16, f64)", op, (int)i, par_norm_inputs[i], par_dtype_name(in[i]->dtype));
    const par_rt *x = in[0];
    par_rt *y = out[0];
    par_norm_geom q;
    par_status st = par_norm_geom_of(c->n, x->rank, x->dims, &q, msg);
    if (st != PAR_OK) return st;
    if (y->numel != x->numel)
        return par_msgf(msg, PAR_ERROR, "%s: output has %lld elements, input %lld", op, (long long)y->numel,
                        (long long)x->numel);
    int64_t wn = par_shape_numel(q.w_rank, q.w_dims);
    for (int32_t i = 1; i < 3; i++)
        if (in[i] && in[i]->numel != wn)
            return par_msgf(msg, PAR_ERROR, "%s: input %d (%s) has %lld elements, expected %lld", op, (int)i,
                            par_norm_inputs[i], (long long)in[i]->numel, (long long)wn);
    norm_params np = {in[1], in[2]};
    for (int64_t g = 0; g < q.groups; g++) norm_group(&q, g, x, &np, &c->prec, y);
    return PAR_OK;
}

par_status par_ref_layer_norm(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return norm_kernel(c, in, out, msg);
}

par_status par_ref_group_norm(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return norm_kernel(c, in, out, msg);
}

par_status par_ref_instance_norm(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return norm_kernel(c, in, out, msg);
}

/* ---- rms_norm ----------------------------------------------------------------------------------------------------
 * Each group of n elements x_j (the trailing normalized_shape, par_norm_geom as layer_norm's) is scaled by the
 * reciprocal of its root mean square: y_j = x_j r w_j, r = 1 / sqrt(q + eps), q = sum_j x_j^2 / n (PyTorch's
 * F.rms_norm, Llama's RMSNorm). No mean is subtracted, so there is no cancellation anywhere: every term of q is
 * non-negative.
 *
 * Budget (docs/budgets/norm-reduce.md, "rms_norm"), held magnitudes a_j = |x_j| + e_j, Q = sum_j a_j^2 / n:
 *   q         E_q = gamma(n + 1) Q   (n squares, n - 1 additions and the scaling, every term >= 0, in any order
 *             and with or without fused multiply-adds; the same with the division by n folded into eps' scaling)
 *   q's inputs: q(x + dx) - q(x) = (2/n) sum x_j dx_j + (1/n) sum dx_j^2: 2 P(|x| e, |x| s) / n + sum e_j^2 / n
 *   r         as layer_norm's: L = q_lo (1 - gamma(n + 1)) + eps - u eps - u (q + eps + ...), q_lo = q less the
 *             first-order part of q's move (the second-order part only raises q), r_hi = (1 + (fn + 2) u)
 *             / sqrt(L) (L <= 0: unbounded), |r' - r| <= r_hi - r
 *   y         |y' - y| <= e_j r_hi |w|' + |x_j| (r_hi - r) |w|' + |x_j| r e_w; own: the two products x r and (x r)
 *             w (or x (r w)), 2u r_hi |w|' a_j; storage u_s (|y| + ...).
 * Flushing: q's n squares and n - 1 sums and its scaling, divided by n, at most 3 eta; the two products 2 eta. */
par_status par_ref_rms_norm(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    if (!in[0] || !out[0]) return par_msgf(msg, PAR_ERROR, "rms_norm: input 0 (x) is required");
    for (int32_t i = 0; i < 2; i++)
        if (in[i] && !is_float(in[i]->dtype))
            return par_msgf(msg, PAR_UNSUPPORTED, "rms_norm: input %d (%s): dtype %s reached the float kernel (only "
                            "f32, f16, f64)", (int)i, par_norm_inputs[i], par_dtype_name(in[i]->dtype));
    const par_rt *x = in[0], *w = in[1];
    par_rt *y = out[0];
    par_norm_geom q;
    par_status st = par_norm_geom_of(c->n, x->rank, x->dims, &q, msg);
    if (st != PAR_OK) return st;
    if (y->numel != x->numel)
        return par_msgf(msg, PAR_ERROR, "rms_norm: output has %lld elements, input %lld", (long long)y->numel,
                        (long long)x->numel);
    if (w && w->numel != q.n)
        return par_msgf(msg, PAR_ERROR, "rms_norm: input 1 (weight) has %lld elements, expected %lld",
                        (long long)w->numel, (long long)q.n);
    const par_prec *pr = &c->prec;
    const double u = pr->u, n = (double)q.n;
    const double tau = u > 0 ? par_fmt_of(u)->tiny : pr->flush; /* the arithmetic's smallest normal */
    const double *xs = par_rt_scales(x);
    for (int64_t g = 0; g < q.groups; g++) {
        const int64_t base = g * q.n;
        double sq = 0, Q = 0, sxe = 0, sxs2 = 0, se2 = 0;
        for (int64_t j = 0; j < q.n; j++) {
            double v = x->v[base + j], e = x->e[base + j], a = fabs(v) + e, ss = fabs(v) * xs[base + j];
            sq += v * v;
            Q += a * a;
            sxe += bmul(fabs(v), e);
            sxs2 += bmul(ss, ss);
            se2 += bmul(e, e);
        }
        const double qv = sq / n;
        /* the held q moves by the first-order part, of either sign, and by sum dx_j^2 / n, never negative: only the
         * first can lower it (eq_lo, as layer_norm's ev_lo) */
        const double eq_lo = 2 * par_prop_bound(sxe, sxs2) / n, eq_in = eq_lo + se2 / n;
        const double eq = par_gamma(q.n + 1, u) * Q / n + par_eta(pr, 3);
        const double ve = qv + q.eps;
        /* the least computed q: a sum of non-negative terms of the held squares (at least q - eq_lo) rounds to at
         * least 1 - gamma(n + 1) of it (norm-reduce.md, "rms_norm") */
        const double g1 = par_gamma(q.n + 1, u);
        const double qlo = g1 < 1 ? fmax(qv - eq_lo, 0) * (1 - g1) - par_eta(pr, 3) : -INFINITY;
        const double L = fmax(qlo + q.eps - u * q.eps - u * (ve + eq + eq_in), held_eps_floor(q.eps, pr));
        const double r = 1.0 / sqrt(ve);
        const double r_hi = L > 0 ? (1 + (pr->fn_ulps + 2) * u) / sqrt(L) : INFINITY;
        note_eps_flushed(y, L, q.eps, pr);
        for (int64_t j = 0; j < q.n; j++) {
            double wv = w ? w->v[j] : 1, ew = w ? w->e[j] : 0;
            double xv = x->v[base + j], e = x->e[base + j];
            double v = xv * r * wv;
            double wa = fabs(wv) + ew, sh = bmul(r_hi, wa);
            double dev = bmul(e, sh) + bmul(fabs(xv) * wa, r_hi - r) + fabs(xv) * r * ew;
            double own = 2 * u * bmul(sh, fabs(xv) + e) + par_eta(pr, 2);
            y->v[base + j] = v;
            /* whatever the statistics' errors, a held x'_j whose square is a normal number is one of the
             * non-negative terms of the held q', so |x'_j| r' <= sqrt(n / (1 - gamma_{n+1})) (r's and the products'
             * own errors on top); one below sqrt(tau) of the arithmetic gives at most sqrt(tau) r_hi (norm-reduce.md,
             * "rms_norm": a direct bound) */
            const double ymax = bmul(wa * (1 + (pr->fn_ulps + 5) * u),
                                     fmax(sqrt(n / (1 - par_gamma(q.n + 1, u))), bmul(sqrt(tau), r_hi)));
            y->e[base + j] = fmin(finish(v, dev, own, pr), finish(v, fabs(v) + ymax, par_eta(pr, 2), pr));
        }
    }
    return PAR_OK;
}
