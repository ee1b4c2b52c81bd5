/*
 * dot.h - the accumulator of a dot product with a bias, shared by the reference kernels of conv2d,
 * conv_transpose2d, linear and matmul: the float64 value, the magnitude of the terms a backend holds, and the
 * propagated input budgets and scales (reference.h, par_prop_bound; docs/budgets/conv-pool.md), and the rounding of
 * the operands on entry where the arithmetic declares it (par_prec.u_in: bfloat16 operands, docs/oracle.md).
 */
#ifndef PAR_REF_DOT_H
#define PAR_REF_DOT_H

#include "reference.h"
#include "kernel_util.h" /* bmul */

/* Accumulator of one dot product: the value and the three parts of its budget. */
typedef struct dot_acc {
    double v;      /* sum of products, float64 */
    double mag;    /* sum of (|w| + e(w)) (|x| + e(x)): magnitude of the terms a backend holds */
    double mag0;   /* sum of |w x|: the magnitude of the reference's terms */
    double prop;   /* propagated input budgets: sum of the terms */
    double prop2;  /* sum of the squares of the same terms from the inputs' scales (par_prop_bound) */
    par_flush_sum fl; /* the flush parts of the terms (par_flush_sum; 0 without flushing) */
    double magf;   /* mag over the terms whose factors are finite: what the backend's partial sums may reach before
                    * an infinite term enters (dot_finish's overflow rule) */
    double magf0;  /* mag0 over the same finite terms */
    double opmax;  /* the largest |operand| + e over the finite factors: an operand rounded to a narrower format
                    * (u_in) may round up to Inf */
    double ps1, ps2; /* sum of |partial sum| and of its square over the terms in the order added, and */
    double pp2;      /* sum of the products' squares: the statistical companion's scale (par_prec.stat_scale) */
    double flp;    /* with flushing: the products' own flushes, par_flush_term of each (0 without flushing), and */
    par_flush_sum ofl; /* the same signed by the products' reference signs (par_flush_own_bound) */
    int sg;        /* the held terms' signs, or'ed (par_held_sign): whether the additions may flush */
    int64_t k;     /* number of terms */
} dot_acc;

static inline void dot_add(dot_acc *a, const par_prec *p, const par_rt *wt, int64_t wi, const par_rt *xt, int64_t xi)
{
    double w = wt->v[wi], ew = wt->e[wi], sw = par_rt_scales(wt)[wi];
    double x = xt->v[xi], ex = xt->e[xi], sx = par_rt_scales(xt)[xi];
    a->v += w * x;
    a->ps1 += fabs(a->v);
    a->ps2 += bmul(a->v, a->v);
    a->pp2 += bmul(w * x, w * x);
    a->mag += bmul(fabs(w) + ew, fabs(x) + ex);
    a->mag0 += bmul(fabs(w), fabs(x));
    if (isfinite(w) && isfinite(x)) {
        a->magf += bmul(fabs(w) + ew, fabs(x) + ex);
        a->magf0 += bmul(fabs(w), fabs(x));
        a->opmax = fmax(a->opmax, fmax(fabs(w) + ew, fabs(x) + ex));
    }
    a->prop += bmul(fabs(w), ex) + bmul(fabs(x), ew) + bmul(ew, ex);
    double ts = bmul(fabs(w), sx) + bmul(fabs(x), sw) + bmul(sw, sx);
    a->prop2 += bmul(ts, ts);
    if (p->flush > 0) {
        /* the held product w~ x~ (1 + d): its magnitude within [lo, hi] (operands rounded on entry included) */
        double gin = (1 + p->u_in) * (1 + p->u_in);
        double lo = bmul(fmax(fabs(w) - ew, 0), fmax(fabs(x) - ex, 0)) * (1 - p->u) / gin;
        double t = par_flush_term(p->flush, lo, bmul(fabs(w) + ew, fabs(x) + ex) * (1 + p->u) * gin);
        if (t > 0) {
            a->flp += t;
            par_flush_add(&a->ofl, t, par_flush_sign(w) * par_flush_sign(x), 0);
        }
        a->sg |= par_sign_mul(par_held_sign(w, ew, wt->nonneg), par_held_sign(x, ex, xt->nonneg));
    }
    if (wt->f || xt->f) {
        double fw = wt->f ? wt->f[wi] : 0, fx = xt->f ? xt->f[xi] : 0;
        par_flush_add(&a->fl, bmul(fabs(w), fx) + bmul(fabs(x), fw), par_flush_sign(w) * par_flush_sign(x),
                      bmul(fw, ex) + bmul(ew, fx));
    }
    a->k++;
}

/* Add the optional bias term and write value and budget. Returns 1 when an intermediate of the backend's sum may
 * overflow (docs/oracle.md, "NaN and Inf policy"): the finite terms' magnitude, grown by the sum's rounding, reaches
 * the arithmetic's largest finite value, so that some order of summation may hold an infinite partial sum (and an
 * opposite one later makes it NaN) although the ideal sum is finite; the caller marks the element (par_mark_any).
 * Below that no partial sum of finite terms overflows in any order, and the infinite terms (an Inf input) give the
 * backend the same Inf or NaN as the float64 sum. */
static inline int dot_finish(const dot_acc *a, const par_rt *b, int64_t o, const par_prec *p, par_rt *y, int64_t yi)
{
    double val = a->v, mag = a->mag, mag0 = a->mag0, prop = a->prop, prop2 = a->prop2;
    par_flush_sum fl = a->fl;
    double magf = a->magf, magf0 = a->magf0, opmax = a->opmax;
    int64_t k = a->k;
    int sg = a->sg;
    if (b) {
        double sb = par_rt_scales(b)[o];
        val += b->v[o];
        mag += fabs(b->v[o]) + b->e[o];
        mag0 += fabs(b->v[o]);
        if (isfinite(b->v[o])) {
            magf += fabs(b->v[o]) + b->e[o];
            magf0 += fabs(b->v[o]);
            opmax = fmax(opmax, fabs(b->v[o]) + b->e[o]);
        }
        prop += b->e[o];
        prop2 += bmul(sb, sb);
        if (b->f) par_flush_add(&fl, b->f[o], par_flush_sign(b->v[o]), 0);
        sg |= par_held_sign(b->v[o], b->e[o], b->nonneg);
        k++;
    }
    /* The propagated bound B (rule 5: the smaller of the worst case and the probabilistic bound). */
    const double bprop = par_prop_bound_flush(prop, prop2, &fl);
    /* Flushing: a product may flush only where its held value may lie below tau (par_flush_term), and the
     * additions only where the held terms' signs are mixed (par_flush_adds: a one-sign sum's partial sums never
     * fall below its largest term), each then at most tau, in any order; under gradual underflow only the k
     * products round there (eta). */
    const double flush_adds = par_flush_adds(p, sg, (double)k);
    double flush_own = p->flush > 0 ? par_flush_own_bound(a->flp, &a->ofl) + flush_adds : par_eta_ops(p, (double)k, (double)k);
    /* The op's own rounding (docs/budgets/conv-pool.md, "Rounding"). The backend sums its held terms
     * w~ x~ = w x + d: each product rounds once, at most u |w~ x~|, together at most u (mag0 + prop) with prop the
     * worst case of sum |d|; each of the k - 1 additions rounds at most u times its partial sum, and a partial sum
     * of held terms is at most its reference terms' magnitude plus its propagated error, which rule 5 bounds by B
     * as it bounds the whole sum's (a sum over fewer terms has a smaller bound of either kind). With the partial
     * sums' own roundings (at most gamma_{k-1} of that), the whole is at most
     * gamma_k (mag0 + B) + u (1 + gamma_k) prop. Counting the held terms' magnitude as mag = mag0 + prop
     * instead (gamma_k mag) puts gamma_k times the worst case of the inputs' errors into every layer's own
     * rounding: in f16 arithmetic (gamma_576 = 0.39) that compounded MobileNetV3's budgets past 65504.
     * Operands rounded on entry (u_in > 0, bfloat16): a product of two rounded factors is w x (1 + d1)(1 + d2), an
     * error of at most (2 u_in + u_in^2) |w x|, and a rounded bias (1 + d) one of u_in |b| (counted the same way,
     * conservatively), on the held terms (mag); the sum of the rounded terms then has the bound above on
     * magnitudes grown by (1 + u_in)^2. With u_in = 0 this is the bound above. */
    double uin = p->u_in, gin = 2 * uin + uin * uin, grow = (1 + uin) * (1 + uin);
    double gk = par_gamma(k, p->u);
    double round = bmul(gk * grow, mag0 + bprop) + bmul(p->u * (1 + gk) * grow, prop) + bmul(gin, mag) + flush_own;
    if (y->s) {
        /* The scale: the root-sum-square of the bounds of the op's own roundings (k - 1 additions, each at most
         * u times its partial sum, and the k products, together at most u times the held terms' magnitude:
         * at most sqrt(k) u (mag0 + B) + u prop), plus the root-sum-square of the propagated scales. */
        double own = bmul(sqrt((double)k) * p->u * grow, mag0 + bprop) + bmul(p->u * grow, prop);
        if (p->stat_scale) {
            /* The companion's scale: each addition rounds at most u times its partial sum, which the held terms
             * put within |S_i| + |b| + B of zero (S_i the reference's partial sums in its order, the bias first or
             * last), and each product at most u times its held term: the root-sum-square of those bounds. */
            double sh = (b ? fabs(b->v[o]) : 0) + bprop;
            own = bmul(p->u * grow, sqrt(a->ps2 + bmul(2 * sh, a->ps1) + bmul((double)k, sh * sh)) + sqrt(a->pp2) + prop);
        }
        /* the propagated scales, and the flush terms' fluctuation (par_flush_sum), within the propagated bound */
        double ps = own + bmul(gin, mag) + fmin(sqrt(prop2 + fl.sq), bprop) + fmin(sqrt(a->ofl.sq), a->flp);
        /* Gradual underflow's roundings (eta each, mean-zero like any rounding) belong to the scale too: without
         * them a linear combination of subnormal data propagated a scale far below its budget, and the next
         * linear combination's probabilistic bound lost them (flushing's are not mean-zero: the flush parts) */
        if (!(p->flush > 0)) ps += flush_own;
        y->s[yi] = ps + bmul(p->u_store, fabs(val) + ps);
    }
    double *v = &y->v[yi], *e = &y->e[yi];
    double pre = round + bprop;
    *v = val;
    *e = pre + bmul(p->u_store, fabs(val) + pre);
    if (y->f) y->f[yi] = fmin(par_flush_common(&fl) + par_flush_own_common(a->flp, &a->ofl) + flush_adds, *e);
    /* A factor rounded to bfloat16 overflows to Inf from the midpoint between its largest finite value and 2^128. */
    if (uin > 0 && !(opmax < 0x1.ff8p127)) return 1;
    /* The partial sums of the finite terms: at most their reference magnitude plus B (as for the rounding), grown
     * by the sum's rounding; where B is not finite (an infinite input term), the worst case magf. */
    double reach = bprop < INFINITY ? fmin(magf, magf0 + bprop + bmul(p->u, prop)) : magf;
    return !(reach * grow * (1 + gk) < par_ovf_arith(p));
}

#endif
