/*
 * pool.c - float64 reference kernels of max_pool2d, avg_pool2d, adaptive_avg_pool2d,
 * global_avg_pool2d and the reductions mean, sum and amax (docs/ops.md, PyTorch semantics), with the error budget of
 * every output element (docs/budgets/conv-pool.md, docs/budgets/norm-reduce.md).
 *
 * Plain loops over the definition. The kernels see float tensors only (quantized operands are dequantized around
 * them by the interpreter) and must not allocate memory that outlives the call.
 *
 * Budgets:
 *   max_pool2d is a selection: no rounding. Its budget is the largest budget among the elements of the window that
 *   a backend could select, i.e. those with v + e >= max_i (v_i - e_i) (the backend's max is at least that).
 *   With exact inputs this is 0.
 *   Averages (avg_pool2d, adaptive, global, mean) y = (sum_{i<k} x_i) / d, k real elements, divisor d:
 *     rounding   par_gamma(k + 1, u) * sum (|x_i| + e(x_i)) / d   (k-1 additions, then the scaling: a division,
 *                or a rounded reciprocal and a multiply, at most two roundings)
 *     propagated par_prop_bound(sum e(x_i), sum s(x_i)^2) / d  (reference.h: the smaller of the worst case and
 *                the probabilistic bound; the scale of y takes sqrt(sum s(x_i)^2) / d)
 *     storage    u_store * (|y| + rounding + propagated)
 *   sum y = sum_{i<k} x_i: as an average without the scaling: k - 1 additions,
 *     rounding   par_gamma(k - 1, u) * sum (|x_i| + e(x_i)), the propagated part and the storage as above.
 *   amax and amin are selections over the reduced elements, budgeted as max_pool2d (amin as amax of -x); NaN
 *   propagates (PyTorch).
 *   prod y = prod_{i<k} x_i, k - 1 multiplications in any order (prod_finish; docs/budgets/norm-reduce.md):
 *     rounding   par_gamma(k - 1, u) * prod (|x_i| + e_i)
 *     underflow  each multiplication's eta (par_eta_ops), scaled by at most prod max(1, |x_i| + e_i)
 *     propagated prod (|x_i| + e_i) - prod |x_i|  (every held factor within its budget, all at once)
 *     storage    u_store * (|y| + the above)
 */
#include "reference.h"
#include "kernel_util.h"

#include <math.h>

static par_status check_io(const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    par_status st;
    if (!in[0] || !out[0]) return par_msgf(msg, PAR_ERROR, "input 0 (x) is required");
    if ((st = check_float(in[0], "input 0 (x)", msg)) != PAR_OK) return st;
    return check_float(out[0], "output 0", msg);
}

/* Accumulator of an average: the sum, the magnitude sum (|x| + e(x)), the propagated sum e(x), the sum of the
 * squared scales s(x)^2, and the number of terms k. */
typedef struct avg_acc {
    double sum, mag, prop, prop2;
    par_flush_sum fl; /* the flush parts of the terms (reference.h) */
    double magf; /* mag over the finite terms (dot.h's overflow rule, avg_overflows) */
    /* With flushing (avg_init): tau d, the magnitude below which a term scaled by 1 / d may flush; fls, the scaled
     * terms' flushes (par_flush_term); sg, the held terms' signs, or'ed (par_held_sign) */
    double tau_d, fls;
    par_flush_sum ofl; /* fls signed by the terms' reference signs (par_flush_own_bound) */
    int sg;
    int64_t k;
} avg_acc;

/* An empty accumulator for an average with divisor d (1 for a sum). */
static avg_acc avg_init(const par_prec *p, double d)
{
    avg_acc a = {0};
    a.tau_d = p->flush > 0 ? p->flush * d : 0;
    return a;
}

static void avg_add(avg_acc *a, const par_rt *x, int64_t xi)
{
    a->sum += x->v[xi];
    a->mag += fabs(x->v[xi]) + x->e[xi];
    if (isfinite(x->v[xi])) a->magf += fabs(x->v[xi]) + x->e[xi];
    a->prop += x->e[xi];
    a->prop2 += bmul(par_rt_scales(x)[xi], par_rt_scales(x)[xi]);
    if (x->f) par_flush_add(&a->fl, x->f[xi], par_flush_sign(x->v[xi]), 0);
    if (a->tau_d > 0) {
        /* the term scaled by a rounded 1 / d (two roundings): held within (|x| -+ e)(1 -+ 2u) / d; in units of d */
        const double lo = fmax(fabs(x->v[xi]) - x->e[xi], 0) * (1 - 0x1p-10), hi = (fabs(x->v[xi]) + x->e[xi]) * (1 + 0x1p-10);
        const double t = par_flush_term(a->tau_d, lo, hi);
        if (t > 0) {
            a->fls += t;
            par_flush_add(&a->ofl, t, par_flush_sign(x->v[xi]), 0);
        }
        a->sg |= par_held_sign(x->v[xi], x->e[xi], x->nonneg);
    }
    a->k++;
}

/* Whether a partial sum of the finite terms may overflow the backend's arithmetic although the ideal is finite (the
 * rule of reference/dot.h's dot_finish): then the kernel marks the element "anything" (par_mark_any). */
static int avg_overflows(const avg_acc *a, const par_prec *p)
{
    return !(a->magf * (1 + par_gamma(a->k + 1, p->u)) < par_ovf_arith(p));
}

/* Average of the a->k terms with divisor d: value and budget into y at yi. */
static void avg_finish(const avg_acc *a, double d, const par_prec *p, par_rt *y, int64_t yi)
{
    double sum = a->sum, mag = a->mag, prop = a->prop, prop2 = a->prop2;
    int64_t k = a->k;
    double val = sum / d;
    /* Flushing: the k - 1 partial sums, or k scaled terms and their k - 1 sums, may each flush (eta): a scaled term
     * only where it may lie below tau (par_flush_term, counted in units of d by avg_add), a partial sum only where
     * the held terms' signs are mixed (par_flush_adds), and the final scaling where the result may lie below tau. */
    double flush_own = par_eta_ops(p, (double)k, (double)k); /* gradual: the k scalings only */
    double flush_sys = 0; /* the share of flush_own carried as the flush part f (the scaled terms' is signed) */
    if (p->flush > 0) {
        const double last = par_flush_term(p->flush,
                                           fmax(fabs(sum) - prop - bmul(par_gamma(k, p->u), mag), 0) / d * (1 - 2 * p->u),
                                           (mag + prop) / d * (1 + 4 * p->u));
        flush_sys = par_flush_adds(p, a->sg, (double)(k > 1 ? k - 1 : 0)) + last;
        flush_own = par_flush_own_bound(a->fls, &a->ofl) / d + flush_sys;
        flush_sys += par_flush_own_common(a->fls, &a->ofl) / d;
    }
    double round = bmul(par_gamma(k + 1, p->u), mag / d) + flush_own;
    /* the propagated bound (the flush terms' scale and common part as reference/dot.h), before the division */
    const double bprop = par_prop_bound_flush(prop, prop2, &a->fl);
    if (y->s) { /* own roundings as root-sum-square (k additions and the scaling), as reference/dot.h */
        double ps = bmul(sqrt((double)(k + 1)) * p->u, mag / d) + fmin(sqrt(prop2 + a->fl.sq), bprop) / d +
                    fmin(sqrt(a->ofl.sq), a->fls) / d;
        if (!(p->flush > 0)) ps += flush_own; /* gradual underflow's roundings, as reference/dot.h */
        y->s[yi] = ps + bmul(p->u_store, fabs(val) + ps);
    }
    double pre = round + bprop / d;
    double *v = &y->v[yi], *e = &y->e[yi];
    *v = val;
    *e = pre + bmul(p->u_store, fabs(val) + pre);
    if (y->f) y->f[yi] = fmin(par_flush_common(&a->fl) / d + flush_sys, *e);
}

/* ---- max_pool2d and avg_pool2d ------------------------------------------------------------------------------- */


static par_status pool_kernel_geom(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, int dilated,
                                   int avg, par_pool_geom *q, par_msg *msg)
{
    par_status st = check_io(in, out, msg);
    if (st != PAR_OK) return st;
    if ((st = par_pool2d_geom(c->n, in[0]->rank, in[0]->dims, dilated, avg, q, msg)) != PAR_OK) return st;
    int32_t r;
    int64_t d[4];
    par_pool2d_shape(q, &r, d);
    if (!par_shape_equal(out[0]->rank, out[0]->dims, r, d))
        return par_msgf(msg, PAR_ERROR, "output 0: allocated shape does not match the inferred");
    return PAR_OK;
}

par_status par_ref_max_pool2d(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    par_pool_geom q;
    par_status st = pool_kernel_geom(c, in, out, 1, 0, &q, msg);
    if (st != PAR_OK) return st;
    const par_rt *x = in[0];
    par_rt *y = out[0];
    for (int64_t nc = 0; nc < q.n * q.c; nc++)
        for (int64_t oh = 0; oh < q.oh; oh++)
            for (int64_t ow = 0; ow < q.ow; ow++) {
                /* Pass 1: the max (padding is -inf and never wins; NaN propagates, as PyTorch) and the lower bound
                 * of what a backend's max can be. */
                double m = -INFINITY, lower = -INFINITY;
                int64_t found = 0;
                for (int64_t kh = 0; kh < q.kh; kh++) {
                    int64_t ih = oh * q.sh - q.pt + kh * q.dh;
                    if (ih < 0 || ih >= q.h) continue;
                    for (int64_t kw = 0; kw < q.kw; kw++) {
                        int64_t iw = ow * q.sw - q.pl + kw * q.dw;
                        if (iw < 0 || iw >= q.w) continue;
                        int64_t xi = (nc * q.h + ih) * q.w + iw;
                        double v = x->v[xi];
                        if (v > m || isnan(v)) m = isnan(m) ? m : v;
                        if (v - x->e[xi] > lower) lower = v - x->e[xi];
                        found++;
                    }
                }
                if (!found) return par_msgf(msg, PAR_ERROR, "window of output (%lld, %lld) holds no input element",
                                            (long long)oh, (long long)ow);
                /* Pass 2: the largest budget among the elements a backend could select. */
                double e = 0.0;
                for (int64_t kh = 0; kh < q.kh; kh++) {
                    int64_t ih = oh * q.sh - q.pt + kh * q.dh;
                    if (ih < 0 || ih >= q.h) continue;
                    for (int64_t kw = 0; kw < q.kw; kw++) {
                        int64_t iw = ow * q.sw - q.pl + kw * q.dw;
                        if (iw < 0 || iw >= q.w) continue;
                        int64_t xi = (nc * q.h + ih) * q.w + iw;
                        if ((x->v[xi] + x->e[xi] >= lower || x->v[xi] == m) && x->e[xi] > e) e = x->e[xi];
                    }
                }
                int64_t yi = (nc * q.oh + oh) * q.ow + ow;
                y->v[yi] = m;
                y->e[yi] = e;
            }
    return PAR_OK;
}

par_status par_ref_avg_pool2d(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    par_pool_geom q;
    par_status st = pool_kernel_geom(c, in, out, 0, 1, &q, msg);
    if (st != PAR_OK) return st;
    const par_rt *x = in[0];
    par_rt *y = out[0];
    for (int64_t nc = 0; nc < q.n * q.c; nc++)
        for (int64_t oh = 0; oh < q.oh; oh++)
            for (int64_t ow = 0; ow < q.ow; ow++) {
                /* The window, clipped to the padded extent [-pt, H + pb): its area is the count_include_pad
                 * divisor. Then clipped to the image [0, H): the real elements. */
                int64_t h0 = oh * q.sh - q.pt, w0 = ow * q.sw - q.pl;
                int64_t h1 = h0 + q.kh < q.h + q.pb ? h0 + q.kh : q.h + q.pb;
                int64_t w1 = w0 + q.kw < q.w + q.pr ? w0 + q.kw : q.w + q.pr;
                int64_t area = (h1 - h0) * (w1 - w0);
                if (h0 < 0) h0 = 0;
                if (w0 < 0) w0 = 0;
                if (h1 > q.h) h1 = q.h;
                if (w1 > q.w) w1 = q.w;
                int64_t d = q.count_include_pad ? area : (h1 - h0) * (w1 - w0);
                avg_acc a = avg_init(&c->prec, (double)d);
                for (int64_t ih = h0; ih < h1; ih++)
                    for (int64_t iw = w0; iw < w1; iw++) avg_add(&a, x, (nc * q.h + ih) * q.w + iw);
                if (a.k < 1 || d < 1)
                    return par_msgf(msg, PAR_ERROR, "window of output (%lld, %lld) holds no input element",
                                    (long long)oh, (long long)ow);
                int64_t yi = (nc * q.oh + oh) * q.ow + ow;
                avg_finish(&a, (double)d, &c->prec, y, yi);
                if (avg_overflows(&a, &c->prec)) par_mark_any(c, yi);
            }
    return PAR_OK;
}

/* ---- adaptive_avg_pool2d and global_avg_pool2d ---------------------------------------------------------------- */


/* Window rows [floor(oh*H/OH), ceil((oh+1)*H/OH)), likewise columns (PyTorch's start_index / end_index); the global
 * pool is the case OH = OW = 1. */
static par_status adaptive_kernel(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, int global,
                                  par_msg *msg)
{
    par_status st = check_io(in, out, msg);
    if (st != PAR_OK) return st;
    const par_rt *x = in[0];
    par_rt *y = out[0];
    int32_t r;
    int64_t d[PAR_MAX_RANK];
    if ((st = par_adaptive_pool_shape(c->n, x->rank, x->dims, global, &r, d, msg)) != PAR_OK) return st;
    if (!par_shape_equal(y->rank, y->dims, r, d))
        return par_msgf(msg, PAR_ERROR, "output 0: allocated shape does not match the inferred");
    int64_t h = x->dims[2], w = x->dims[3], oh_n = d[2], ow_n = d[3];
    for (int64_t nc = 0; nc < x->dims[0] * x->dims[1]; nc++)
        for (int64_t oh = 0; oh < oh_n; oh++)
            for (int64_t ow = 0; ow < ow_n; ow++) {
                int64_t h0 = par_floor_div(oh * h, oh_n), h1 = par_ceil_div((oh + 1) * h, oh_n);
                int64_t w0 = par_floor_div(ow * w, ow_n), w1 = par_ceil_div((ow + 1) * w, ow_n);
                avg_acc a = avg_init(&c->prec, (double)((h1 - h0) * (w1 - w0)));
                for (int64_t ih = h0; ih < h1; ih++)
                    for (int64_t iw = w0; iw < w1; iw++) avg_add(&a, x, (nc * h + ih) * w + iw);
                /* the window is never empty: h0 < h1 and w0 < w1, so a.k = (h1 - h0) * (w1 - w0) */
                avg_finish(&a, (double)a.k, &c->prec, y, (nc * oh_n + oh) * ow_n + ow);
                if (avg_overflows(&a, &c->prec)) par_mark_any(c, (nc * oh_n + oh) * ow_n + ow);
            }
    return PAR_OK;
}

par_status par_ref_adaptive_avg_pool2d(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out,
                                       par_msg *msg)
{
    return adaptive_kernel(c, in, out, 0, msg);
}

par_status par_ref_global_avg_pool2d(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out,
                                     par_msg *msg)
{
    return adaptive_kernel(c, in, out, 1, msg);
}

/* ---- mean, sum, amax ------------------------------------------------------------------------------------------ */

typedef enum red_kind { RED_MEAN, RED_SUM, RED_AMAX, RED_AMIN, RED_PROD } red_kind;

/* Accumulator of a product of k factors: the float64 product, the product of the held magnitudes |x| + e(x), of
 * the exact magnitudes, of max(1, |x| + e) (the most the later factors of any order can scale an earlier rounding),
 * and, for an infinite factor, of min(1, |x| - e) over the finite ones (how small a partial product of finite
 * factors may get before the Inf multiplies it). */
typedef struct prod_acc {
    double v, held, exact, grow, shrink;
    int inf;
    int64_t k;
} prod_acc;

static void prod_add(prod_acc *a, const par_rt *x, int64_t xi)
{
    const double v = x->v[xi], e = x->e[xi];
    a->v *= v;
    a->held = bmul(a->held, fabs(v) + e);
    a->exact *= fabs(v);
    a->grow = bmul(a->grow, fmax(1.0, fabs(v) + e));
    if (isinf(v)) a->inf = 1;
    else if (isfinite(v)) a->shrink *= fmin(1.0, fmax(0.0, fabs(v) - e));
    a->k++;
}

/* Value and budget of a product (the derivation: docs/budgets/norm-reduce.md, "prod"); returns 1 when some order of
 * the backend's multiplications may overflow a partial product that the ideal result does not reach, or may
 * underflow a finite partial product to 0 before an infinite factor turns it into NaN: the element is "anything". */
static int prod_finish(const prod_acc *a, const par_prec *p, par_rt *y, int64_t yi)
{
    const double m = (double)(a->k > 1 ? a->k - 1 : 0); /* multiplications */
    const double round = bmul(par_gamma(a->k > 1 ? a->k - 1 : 0, p->u), a->held);
    const double under = bmul(par_eta_ops(p, m, 0), a->grow * (1 + par_gamma(a->k, p->u)));
    const double prop = a->held - a->exact; /* the expansion of prod(|x| + e) - prod |x|: every held change */
    const double pre = round + under + (prop > 0 ? prop : 0);
    y->v[yi] = a->v;
    y->e[yi] = pre + bmul(p->u_store, fabs(a->v) + pre);
    if (y->s) y->s[yi] = y->e[yi]; /* the worst case as the scale: a product's errors are not mean-zero sums */
    if (y->f) y->f[yi] = fmin(under, y->e[yi]);
    if (!(a->grow * (1 + par_gamma(a->k, p->u)) < par_ovf_arith(p))) return 1;
    return a->inf && a->shrink < 0x1p-126;
}

/* The sum of k terms: k - 1 additions (no scaling), else as avg_finish. */
static void sum_finish(const avg_acc *a, const par_prec *p, par_rt *y, int64_t yi)
{
    int64_t k = a->k;
    /* Flushing: each of the k - 1 partial sums may flush (eta) where the held terms' signs are mixed
     * (par_flush_adds). */
    double flush_own = par_eta_ops(p, 0, (double)(k > 1 ? k - 1 : 0)); /* gradual: additions are exact there */
    if (p->flush > 0) flush_own = par_flush_adds(p, a->sg, (double)(k > 1 ? k - 1 : 0));
    double round = bmul(par_gamma(k - 1, p->u), a->mag) + flush_own;
    const double bprop = par_prop_bound_flush(a->prop, a->prop2, &a->fl);
    if (y->s) {
        double ps = bmul(sqrt((double)(k > 1 ? k - 1 : 0)) * p->u, a->mag) + fmin(sqrt(a->prop2 + a->fl.sq), bprop);
        if (!(p->flush > 0)) ps += flush_own; /* gradual underflow's roundings, as reference/dot.h */
        y->s[yi] = ps + bmul(p->u_store, fabs(a->sum) + ps);
    }
    double pre = round + bprop;
    y->v[yi] = a->sum;
    y->e[yi] = pre + bmul(p->u_store, fabs(a->sum) + pre);
    if (y->f) y->f[yi] = fmin(par_flush_common(&a->fl) + flush_own, y->e[yi]);
}

static par_status reduce_kernel(const par_ref_ctx *c, red_kind kind, const par_rt *const *in, par_rt *const *out,
                                par_msg *msg)
{
    par_status st = check_io(in, out, msg);
    if (st != PAR_OK) return st;
    const par_rt *x = in[0];
    par_rt *y = out[0];
    int reduced[PAR_MAX_RANK];
    int32_t yr;
    int64_t yd[PAR_MAX_RANK];
    if ((st = par_mean_shape(c->n, x->rank, x->dims, reduced, &yr, yd, msg)) != PAR_OK) return st;
    if (!par_shape_equal(y->rank, y->dims, yr, yd))
        return par_msgf(msg, PAR_ERROR, "output 0: allocated shape does not match the inferred");
    /* Input strides; the kept and reduced dimensions, each in order. */
    int64_t stride[PAR_MAX_RANK], s = 1;
    for (int32_t i = x->rank - 1; i >= 0; i--) {
        stride[i] = s;
        s *= x->dims[i];
    }
    int32_t kept[PAR_MAX_RANK], red[PAR_MAX_RANK], nk = 0, nr = 0;
    int64_t k = 1;
    for (int32_t i = 0; i < x->rank; i++) {
        if (reduced[i]) {
            red[nr++] = i;
            k *= x->dims[i];
        } else {
            kept[nk++] = i;
        }
    }
    /* amin is amax of -x, negated: the selection and its budget walk the values times sg */
    const int sel = kind == RED_AMAX || kind == RED_AMIN;
    const double sg = kind == RED_AMIN ? -1.0 : 1.0;
    if (sel && k == 0 && y->numel > 0)
        return par_msgf(msg, PAR_ERROR, "%s: the reduced dimensions are empty (no identity; PyTorch's rule)",
                        kind == RED_AMIN ? "amin" : "amax");
    for (int64_t oi = 0; oi < y->numel; oi++) {
        /* Decode oi over the kept dims (row-major) into the base offset of its slice. */
        int64_t base = 0, rem = oi;
        for (int32_t j = nk - 1; j >= 0; j--) {
            base += (rem % x->dims[kept[j]]) * stride[kept[j]];
            rem /= x->dims[kept[j]];
        }
        avg_acc a = avg_init(&c->prec, kind == RED_MEAN ? (double)k : 1.0);
        prod_acc pa = {1.0, 1.0, 1.0, 1.0, 1.0, 0, 0};
        double m = -INFINITY, lower = -INFINITY, e = 0;
        for (int pass = 0; pass < (sel ? 2 : 1); pass++)
            for (int64_t ri = 0; ri < k; ri++) {
                int64_t off = base;
                rem = ri;
                for (int32_t j = nr - 1; j >= 0; j--) {
                    off += (rem % x->dims[red[j]]) * stride[red[j]];
                    rem /= x->dims[red[j]];
                }
                if (kind == RED_PROD) {
                    prod_add(&pa, x, off);
                } else if (!sel) {
                    avg_add(&a, x, off);
                } else if (pass == 0) { /* the max (NaN wins) and the lower bound of what a backend's max can be */
                    double v = sg * x->v[off];
                    if (v > m || isnan(v)) m = isnan(m) ? m : v;
                    if (v - x->e[off] > lower) lower = v - x->e[off];
                } else if ((sg * x->v[off] + x->e[off] >= lower || sg * x->v[off] == m) && x->e[off] > e) {
                    e = x->e[off]; /* the largest budget among the elements a backend could select */
                }
            }
        if (kind == RED_PROD) {
            if (prod_finish(&pa, &c->prec, y, oi)) par_mark_any(c, oi);
            continue;
        }
        if (kind == RED_MEAN) avg_finish(&a, (double)k, &c->prec, y, oi);
        else if (kind == RED_SUM) sum_finish(&a, &c->prec, y, oi);
        else y->v[oi] = sg * m, y->e[oi] = e;
        if (!sel && avg_overflows(&a, &c->prec)) par_mark_any(c, oi);
    }
    return PAR_OK;
}

par_status par_ref_mean(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return reduce_kernel(c, RED_MEAN, in, out, msg);
}

par_status par_ref_sum(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return reduce_kernel(c, RED_SUM, in, out, msg);
}

par_status par_ref_amax(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return reduce_kernel(c, RED_AMAX, in, out, msg);
}

par_status par_ref_amin(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return reduce_kernel(c, RED_AMIN, in, out, msg);
}

par_status par_ref_prod(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    return reduce_kernel(c, RED_PROD, in, out, msg);
}
