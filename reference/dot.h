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
    int zinf;      /* a term of an infinite factor and a factor whose budget reaches 0: the held product may be
                    * 0 x Inf = NaN where the ideal one is +-Inf, or the other way round */
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
    } else if ((isinf(w) && ex > 0 && fabs(x) <= ex) || (isinf(x) && ew > 0 && fabs(w) <= ew)) {
        a->zinf = 1;
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
 * backend the same Inf or NaN as the float64 sum, unless an infinite factor meets a factor whose budget reaches 0
 * (zinf: sdpa's probability underflowing to 0 in f16 against a value that overflowed f16), which returns 1 too. */
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
            opmax = par_fmax(opmax, fabs(b->v[o]) + b->e[o]);
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
        double ps = own + bmul(gin, mag) + par_fmin(sqrt(prop2 + fl.sq), bprop) + par_fmin(sqrt(a->ofl.sq), a->flp);
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
    if (y->f) y->f[yi] = par_fmin(par_flush_common(&fl) + par_flush_own_common(a->flp, &a->ofl) + flush_adds, *e);
    /* A factor rounded to bfloat16 overflows to Inf from the midpoint between its largest finite value and 2^128. */
    if (uin > 0 && !(opmax < 0x1.ff8p127)) return 1;
    if (a->zinf) return 1;
    /* The partial sums of the finite terms: at most their reference magnitude plus B (as for the rounding), grown
     * by the sum's rounding; where B is not finite (an infinite input term), the worst case magf. */
    double reach = bprop < INFINITY ? par_fmin(magf, magf0 + bprop + bmul(p->u, prop)) : magf;
    return !(reach * grow * (1 + gk) < par_ovf_arith(p));
}

/*
 * The fast path: several dot products at once, each bit for bit what dot_add and dot_finish give it.
 *
 * dot_add is the definition; the common case spends most of its time on what does not change from term to term. When
 * the arithmetic does not flush (p->flush <= 0), neither operand has flush parts (f NULL) and every value, budget and
 * scale of both operands is below DOT_PLAIN_MAX in magnitude (dot_plain: finite, not NaN), dot_add's per-term tests
 * all go one way:
 * - the flush block and the f block never run;
 * - isfinite(w) && isfinite(x) always holds, so magf and magf0 receive exactly the additions of mag and mag0, in the
 *   same order from the same 0: they equal them bit for bit;
 * - |w| + e(w) and |x| + e(x) are finite (below 2^1001), >= +0 and never -0 (fabs gives +0 or more, and a sum is -0
 *   only when both addends are), so fmax of them (and of opmax, one of them or +0) is a > b ? a : b exactly;
 * - bmul(a, b) is a * b wherever a and b are never NaN nor infinite: every product of operands, budgets and scales
 *   (below 2^1001 each: the product is finite or +-Inf, never NaN), the square of the product w x (+-Inf squared is
 *   +Inf) and of ts (a sum of non-negative terms, finite or +Inf). Only the square of the running sum v keeps bmul:
 *   two products that overflow with opposite signs make it NaN.
 * What remains per term is the same arithmetic on the same operands in the same order (one output's terms are added
 * in dot_add's order; the lanes are other outputs), so each lane's v, mag, mag0, prop, prop2, ps1, ps2, pp2 and opmax
 * are dot_add's bits, and dot_lanes_finish hands dot_finish the dot_acc that dot_add would have built (fl, flp, ofl
 * and sg stay 0 without flushing). tests/test_ref_dot.c compares the two paths bit for bit.
 *
 * DOT_LANES outputs share a term index: the kernels take consecutive outputs (consecutive ow of a conv row, output
 * columns of linear and matmul) whose terms' operands lie at a fixed stride from each other, so the lane loops are
 * straight-line code over fixed-size arrays that the compiler vectorizes.
 */
#define DOT_PLAIN_MAX 0x1p1000
#define DOT_LANES 8

/* The partial dot products of DOT_LANES outputs: dot_acc's fields that the fast path's case can move. */
typedef struct dot_lanes {
    double v[DOT_LANES], mag[DOT_LANES], mag0[DOT_LANES], prop[DOT_LANES], prop2[DOT_LANES];
    double opmax[DOT_LANES], ps1[DOT_LANES], ps2[DOT_LANES], pp2[DOT_LANES];
    int64_t k;
} dot_lanes;

/* Whether t's values, budgets and scales are all below DOT_PLAIN_MAX in magnitude (NaN is not), without flush
 * parts: what the fast path asks of each operand (one pass per kernel call, not one test per term). */
static inline int dot_plain(const par_rt *t)
{
    if (t->f) return 0;
    const double *s = par_rt_scales(t);
    int ok = 1;
    for (int64_t i = 0; i < t->numel; i++)
        ok &= fabs(t->v[i]) < DOT_PLAIN_MAX && fabs(t->e[i]) < DOT_PLAIN_MAX && fabs(s[i]) < DOT_PLAIN_MAX;
    return ok;
}

/* Whether a kernel of operands w and x may take the fast path under p. */
static inline int dot_fast(const par_prec *p, const par_rt *w, const par_rt *x)
{
    return !p->dot_general && !(p->flush > 0) && dot_plain(w) && dot_plain(x);
}

/* The operands of one term for every lane: lane j's value, budget and scale of w at w[j ws], ew[j ws], sw[j ws], and
 * of x at x[j xs], ex[j xs], sx[j xs] (a stride of 0: the operand every lane shares). */
typedef struct dot_terms {
    const double *w, *ew, *sw, *x, *ex, *sx;
    int64_t ws, xs;
} dot_terms;

/* The operands of term (wi, xi) for lanes at strides ws, xs in tensors wt and xt (sw, sx their par_rt_scales). */
static inline dot_terms dot_terms_at(const par_rt *wt, const double *sw, int64_t wi, int64_t ws, const par_rt *xt,
                                     const double *sx, int64_t xi, int64_t xs)
{
    dot_terms t = {wt->v + wi, wt->e + wi, sw + wi, xt->v + xi, xt->e + xi, sx + xi, ws, xs};
    return t;
}

/* The operands of t's first nl lanes copied into buf (6 DOT_LANES doubles), the lanes past nl repeating lane
 * nl - 1's (their results are dropped): for the last outputs of a row or a column, so that nothing outside the
 * operands is read. */
static inline dot_terms dot_terms_pad(dot_terms t, int nl, double *buf)
{
    double *d[6] = {buf, buf + DOT_LANES, buf + 2 * DOT_LANES, buf + 3 * DOT_LANES, buf + 4 * DOT_LANES,
                    buf + 5 * DOT_LANES};
    for (int j = 0; j < DOT_LANES; j++) {
        int64_t l = j < nl ? j : nl - 1;
        d[0][j] = t.w[l * t.ws], d[1][j] = t.ew[l * t.ws], d[2][j] = t.sw[l * t.ws];
        d[3][j] = t.x[l * t.xs], d[4][j] = t.ex[l * t.xs], d[5][j] = t.sx[l * t.xs];
    }
    dot_terms p = {d[0], d[1], d[2], d[3], d[4], d[5], 1, 1};
    return p;
}

#if defined(__GNUC__)
#define DOT_INLINE static inline __attribute__((always_inline))
#else
#define DOT_INLINE static inline
#endif
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define DOT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define DOT_CLONES
#endif

/* One term of every lane: dot_add's lines, less what the fast path's case never runs, and less what dot_finish does
 * not read under the profile: the companion's sums ps1, ps2 and pp2 only with stat (par_prec.stat_scale), opmax only
 * with opm (par_prec.u_in > 0); the fields not added stay 0 and are never read (dot_lanes_kind). The kernels call it
 * with constant strides and kinds where they can, so that the compiler vectorizes the loads too and drops the sums
 * not wanted. */
DOT_INLINE void dot_lanes_add_k(dot_lanes *a, dot_terms t, const int stat, const int opm)
{
    for (int j = 0; j < DOT_LANES; j++) {
        double w = t.w[j * t.ws], ew = t.ew[j * t.ws], sw = t.sw[j * t.ws];
        double x = t.x[j * t.xs], ex = t.ex[j * t.xs], sx = t.sx[j * t.xs];
        double wx = w * x, aw = fabs(w), ax = fabs(x), mw = aw + ew, mx = ax + ex;
        a->v[j] += wx;
        if (stat) {
            a->ps1[j] += fabs(a->v[j]);
            a->ps2[j] += bmul(a->v[j], a->v[j]);
            a->pp2[j] += wx * wx;
        }
        a->mag[j] += mw * mx;
        a->mag0[j] += aw * ax;
        if (opm) {
            double m = mw > mx ? mw : mx; /* fmax, as above */
            a->opmax[j] = a->opmax[j] > m ? a->opmax[j] : m;
        }
        a->prop[j] += aw * ex + ax * ew + ew * ex;
        double ts = aw * sx + ax * sw + sw * sx;
        a->prop2[j] += ts * ts;
    }
    a->k++;
}

/* Every sum of dot_add. */
DOT_INLINE void dot_lanes_add(dot_lanes *a, dot_terms t) { dot_lanes_add_k(a, t, 1, 1); }

/* Which of dot_lanes_add_k's optional sums dot_finish reads under p: bit 0 the companion's (stat), bit 1 opmax. */
static inline int dot_lanes_kind(const par_prec *p) { return (p->stat_scale ? 1 : 0) | (p->u_in > 0 ? 2 : 0); }

/* The first output of the block of lanes that covers outputs [i, i + DOT_LANES) of a run [lo, hi) (i from lo in
 * steps of DOT_LANES): the last block overlaps the one before where the run is long enough (the outputs it computes
 * again get the same bits) rather than take fewer lanes; its lanes are min(DOT_LANES, hi - start). */
static inline int64_t dot_block(int64_t i, int64_t lo, int64_t hi)
{
    return hi - i >= DOT_LANES || hi - lo < DOT_LANES ? i : hi - DOT_LANES;
}

/* dot_finish of lane j (output o's bias, element yi of y): the dot_acc dot_add would have built. */
static inline int dot_lanes_finish(const dot_lanes *a, int j, const par_rt *b, int64_t o, const par_prec *p,
                                   par_rt *y, int64_t yi)
{
    dot_acc d = {0};
    d.v = a->v[j];
    d.mag = d.magf = a->mag[j];
    d.mag0 = d.magf0 = a->mag0[j];
    d.prop = a->prop[j];
    d.prop2 = a->prop2[j];
    d.opmax = a->opmax[j];
    d.ps1 = a->ps1[j];
    d.ps2 = a->ps2[j];
    d.pp2 = a->pp2[j];
    d.k = a->k;
    return dot_finish(&d, b, o, p, y, yi);
}

#endif
