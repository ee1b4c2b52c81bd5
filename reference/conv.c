/*
 * conv.c - float64 reference kernels of conv2d and conv_transpose2d (docs/ops.md), with the error budget of every
 * output element (docs/budgets/conv-pool.md). Their geometry and shape inference are core's (core/shape_conv.c).
 *
 * The kernels are plain loops over the definition: no im2col, no blocking, no reordering of the sum beyond what the
 * definition says. conv2d computes the interior of a row (outputs whose every tap is inside the image) DOT_LANES
 * outputs at a time on dot.h's fast path, each output's terms still in the definition's order and its bits those of
 * the definition (conv2d_at), which every other output takes. They see float tensors only (the interpreter
 * dequantizes quantized operands around them), and they must not allocate memory that outlives the call nor read
 * anything but their inputs and the node's attributes.
 *
 * Budget of one output y = b + sum_{i<k} w_i x_i (k = products whose input position is inside the image; padding
 * contributes exact zeros, and adding an exact zero never rounds):
 *   rounding   par_gamma(k + [bias], u) * (sum (|w_i| + e(w_i)) (|x_i| + e(x_i)) + |b| + e(b))
 *   propagated par_prop_bound: the smaller of sum t_i and lambda sqrt(sum ts_i^2), with
 *              t_i = |w_i| e(x_i) + |x_i| e(w_i) + e(w_i) e(x_i) (+ e(b)) and ts_i the same from the scales s
 *   storage    u_store * (|y| + rounding + propagated)
 * The magnitudes in the rounding and storage terms are those of the operands a backend actually holds (reference
 * value plus its budget), which keeps the bound sound at second order. The scale of y is rounding +
 * sqrt(sum ts_i^2) + storage (reference.h, par_prop_bound).
 */
#include "reference.h"
#include "conv_winograd.h"
#include "dot.h"
#include "kernel_util.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

typedef par_status (*geom_fn)(const par_node *, const int64_t *, int32_t, const int64_t *, int32_t, const int64_t *,
                              int32_t, par_conv_geom *, par_msg *);

/* Optional input i: NULL when absent, whether the node lists it as -1 or has fewer inputs (in[] is only valid
 * below n_inputs). */
static const par_rt *opt_input(const par_ref_ctx *c, const par_rt *const *in, int32_t i)
{
    return i < c->n->n_inputs ? in[i] : NULL;
}

/* Resolve the geometry in a kernel and check the output tensor matches it. */
static par_status kernel_geom(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, geom_fn fn,
                              par_conv_geom *q, par_msg *msg)
{
    par_status st;
    if (!in[0] || !in[1] || !out[0]) return par_msgf(msg, PAR_ERROR, "inputs 0 (x) and 1 (weight) are required");
    if ((st = check_float(in[0], "input 0 (x)", msg)) != PAR_OK) return st;
    if ((st = check_float(in[1], "input 1 (weight)", msg)) != PAR_OK) return st;
    const par_rt *b = opt_input(c, in, 2);
    if ((st = check_float(b, "input 2 (bias)", msg)) != PAR_OK) return st;
    if ((st = check_float(out[0], "output 0", msg)) != PAR_OK) return st;
    st = fn(c->n, in[0]->dims, in[0]->rank, in[1]->dims, in[1]->rank, b ? b->dims : NULL, b ? b->rank : 0, q, msg);
    if (st != PAR_OK) return st;
    const par_rt *y = out[0];
    if (y->rank != 4 || y->dims[0] != q->n || y->dims[1] != q->o || y->dims[2] != q->oh || y->dims[3] != q->ow)
        return par_msgf(msg, PAR_ERROR, "output 0: allocated shape does not match the inferred [%lld,%lld,%lld,%lld]",
                        (long long)q->n, (long long)q->o, (long long)q->oh, (long long)q->ow);
    return PAR_OK;
}

/* Output (n, o, oh, ow) of conv2d by the definition: dot_add over its terms in order. */
static void conv2d_at(const par_ref_ctx *c, const par_conv_geom *q, const par_rt *x, const par_rt *w, const par_rt *b,
                      par_rt *y, int64_t n, int64_t o, int64_t oh, int64_t ow)
{
    int64_t cg = q->c / q->groups, og = q->o / q->groups;
    int64_t g0 = (o / og) * cg; /* first input channel of o's group */
    dot_acc a = {0};
    for (int64_t ci = 0; ci < cg; ci++)
        for (int64_t kh = 0; kh < q->kh; kh++) {
            int64_t ih = oh * q->sh - q->pt + kh * q->dh;
            if (ih < 0 || ih >= q->h) continue; /* zero padding */
            for (int64_t kw = 0; kw < q->kw; kw++) {
                int64_t iw = ow * q->sw - q->pl + kw * q->dw;
                if (iw < 0 || iw >= q->w) continue;
                int64_t xi = ((n * q->c + g0 + ci) * q->h + ih) * q->w + iw;
                int64_t wi = ((o * cg + ci) * q->kh + kh) * q->kw + kw;
                dot_add(&a, &c->prec, w, wi, x, xi);
            }
        }
    int64_t yi = ((n * q->o + o) * q->oh + oh) * q->ow + ow;
    if (dot_finish(&a, b, o, &c->prec, y, yi)) par_mark_any(c, yi);
}

/* Outputs (n, o, oh, ow0 .. ow0 + nl - 1) of conv2d on the fast path (dot.h): every one of them has all its kw taps
 * inside the row (the caller's interior), so each lane's terms are conv2d_at's, in its order: the same (ci, kh) rows
 * are skipped for all of them, and lane j reads x at ow0 + j's column, sw further along the row than lane j - 1's.
 * stat and opm: dot_lanes_add_k's sums (constants in each of conv2d_lanes's calls). */
DOT_INLINE void conv2d_lanes_k(const par_ref_ctx *c, const par_conv_geom *q, const par_rt *x, const par_rt *w,
                               const par_rt *b, par_rt *y, int64_t n, int64_t o, int64_t oh, int64_t ow0, int nl,
                               const int stat, const int opm)
{
    int64_t cg = q->c / q->groups, og = q->o / q->groups;
    int64_t g0 = (o / og) * cg;
    const double *sw = par_rt_scales(w), *sx = par_rt_scales(x);
    double buf[6 * DOT_LANES];
    dot_lanes a;
    memset(&a, 0, sizeof a);
    for (int64_t ci = 0; ci < cg; ci++)
        for (int64_t kh = 0; kh < q->kh; kh++) {
            int64_t ih = oh * q->sh - q->pt + kh * q->dh;
            if (ih < 0 || ih >= q->h) continue; /* zero padding, the same row for every lane */
            int64_t xrow = ((n * q->c + g0 + ci) * q->h + ih) * q->w, wrow = ((o * cg + ci) * q->kh + kh) * q->kw;
            for (int64_t kw = 0; kw < q->kw; kw++) {
                dot_terms t = dot_terms_at(w, sw, wrow + kw, 0, x, sx, xrow + ow0 * q->sw - q->pl + kw * q->dw, q->sw);
                if (nl < DOT_LANES) dot_lanes_add_k(&a, dot_terms_pad(t, nl, buf), stat, opm);
                else if (q->sw == 1)
                    dot_lanes_add_k(&a, dot_terms_at(w, sw, t.w - w->v, 0, x, sx, t.x - x->v, 1), stat, opm);
                else dot_lanes_add_k(&a, t, stat, opm);
            }
        }
    for (int j = 0; j < nl; j++) {
        int64_t yi = ((n * q->o + o) * q->oh + oh) * q->ow + ow0 + j;
        if (dot_lanes_finish(&a, j, b, o, &c->prec, y, yi)) par_mark_any(c, yi);
    }
}

/* conv2d_lanes_k with the profile's sums (dot_lanes_kind), built for the wider vector units too (DOT_CLONES). */
DOT_CLONES static void conv2d_lanes(const par_ref_ctx *c, const par_conv_geom *q, const par_rt *x, const par_rt *w,
                                    const par_rt *b, par_rt *y, int64_t n, int64_t o, int64_t oh, int64_t ow0, int nl)
{
    switch (dot_lanes_kind(&c->prec)) {
    case 0: conv2d_lanes_k(c, q, x, w, b, y, n, o, oh, ow0, nl, 0, 0); break;
    case 1: conv2d_lanes_k(c, q, x, w, b, y, n, o, oh, ow0, nl, 1, 0); break;
    case 2: conv2d_lanes_k(c, q, x, w, b, y, n, o, oh, ow0, nl, 0, 1); break;
    default: conv2d_lanes_k(c, q, x, w, b, y, n, o, oh, ow0, nl, 1, 1); break;
    }
}

par_status par_ref_conv2d(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    par_conv_geom q;
    par_status st = kernel_geom(c, in, out, par_conv2d_geom, &q, msg);
    if (st != PAR_OK) return st;
    const par_rt *x = in[0], *w = in[1], *b = opt_input(c, in, 2);
    par_rt *y = out[0];
    /* A backend that declared a Winograd algorithm for this node is judged with its budget (conv_winograd.c). */
    int32_t algo = par_algo_of(&c->prec, c->g, (int32_t)(c->n - c->g->nodes));
    if (algo != PAR_ALGO_DIRECT) return par_ref_conv2d_winograd(c, algo, &q, x, w, b, y, msg);
    /* The interior of a row: the outputs ow whose every tap iw = ow sw - pl + kw dw lies in [0, W), the fast path's
     * lanes (when dot_fast allows it); the others take the definition. */
    int64_t lo = 0, hi = 0;
    if (dot_fast(&c->prec, w, x)) {
        int64_t last = q.w - 1 + q.pl - (q.kw - 1) * q.dw; /* ow sw <= last */
        lo = (q.pl + q.sw - 1) / q.sw;
        hi = last < 0 ? 0 : last / q.sw + 1;
        if (hi > q.ow) hi = q.ow;
        if (hi < lo) hi = lo;
    }
    /* Every output's terms are its own and in its own order, so the order in which the outputs are computed changes
     * no bit: a block of lanes is computed for every output channel before the next block, so that the block's
     * input columns stay in cache while the channels' weights go by. */
    for (int64_t n = 0; n < q.n; n++)
        for (int64_t oh = 0; oh < q.oh; oh++) {
            for (int64_t o = 0; o < q.o; o++) {
                for (int64_t ow = 0; ow < q.ow && ow < lo; ow++) conv2d_at(c, &q, x, w, b, y, n, o, oh, ow);
                for (int64_t ow = hi > lo ? hi : lo; ow < q.ow; ow++) conv2d_at(c, &q, x, w, b, y, n, o, oh, ow);
            }
            for (int64_t ow = lo; ow < hi; ow += DOT_LANES) {
                int64_t ow0 = dot_block(ow, lo, hi);
                for (int64_t o = 0; o < q.o; o++)
                    conv2d_lanes(c, &q, x, w, b, y, n, o, oh, ow0, hi - ow0 < DOT_LANES ? (int)(hi - ow0) : DOT_LANES);
            }
        }
    return PAR_OK;
}

/*
 * conv_transpose2d is defined by scattering: x[n,c,ih,iw] * w[c, o - og0, kh, kw] goes to
 * y[n, o, ih*sh - pt + kh*dh, iw*sw - pl + kw*dw]. The kernel gathers instead, which sums exactly the same
 * products: for output (oh, ow) and kernel tap (kh, kw), the contributing input row is ih = (oh + pt - kh*dh) / sh
 * when that division is exact and 0 <= ih < H. Gathering keeps each output's terms together for its budget.
 */
par_status par_ref_conv_transpose2d(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out,
                                    par_msg *msg)
{
    par_conv_geom q;
    par_status st = kernel_geom(c, in, out, par_conv_transpose2d_geom, &q, msg);
    if (st != PAR_OK) return st;
    const par_rt *x = in[0], *w = in[1], *b = opt_input(c, in, 2);
    par_rt *y = out[0];
    int64_t cg = q.c / q.groups, og = q.o / q.groups;
    for (int64_t n = 0; n < q.n; n++)
        for (int64_t o = 0; o < q.o; o++) {
            int64_t gi = o / og; /* o's group: input channels [gi*cg, (gi+1)*cg), weight column o - gi*og */
            for (int64_t oh = 0; oh < q.oh; oh++)
                for (int64_t ow = 0; ow < q.ow; ow++) {
                    dot_acc a = {0};
                    for (int64_t ci = gi * cg; ci < (gi + 1) * cg; ci++)
                        for (int64_t kh = 0; kh < q.kh; kh++) {
                            int64_t th = oh + q.pt - kh * q.dh;
                            if (th < 0 || th % q.sh != 0 || th / q.sh >= q.h) continue;
                            int64_t ih = th / q.sh;
                            for (int64_t kw = 0; kw < q.kw; kw++) {
                                int64_t tw = ow + q.pl - kw * q.dw;
                                if (tw < 0 || tw % q.sw != 0 || tw / q.sw >= q.w) continue;
                                int64_t iw = tw / q.sw;
                                int64_t xi = ((n * q.c + ci) * q.h + ih) * q.w + iw;
                                int64_t wi = ((ci * og + (o - gi * og)) * q.kh + kh) * q.kw + kw;
                                dot_add(&a, &c->prec, w, wi, x, xi);
                            }
                        }
                    int64_t yi = ((n * q.o + o) * q.oh + oh) * q.ow + ow;
                    if (dot_finish(&a, b, o, &c->prec, y, yi)) par_mark_any(c, yi);
                }
        }
    return PAR_OK;
}
