/*
 * attention.c - the float64 reference kernels of the decoder-block ops (docs/ops.md, "Attention"): rope, sdpa and
 * slice_scatter, with the error budget of every output element (docs/budgets/attention.md). The geometry and its
 * checks are core/shape_attention.c's; the kernels walk it. They see float tensors only; the scratch of sdpa (one
 * row of scores and one of probabilities, each with budgets, scales and flush parts) is freed before they return.
 *
 * rope: pair i of a row at position p is (a, b) = (x[2i], x[2i + 1]) interleaved, else (x[i], x[i + D/2]); with
 * c = cos[p, i], s = sin[p, i]: y_a = a c - b s, y_b = b c + a s. Each output is a two-term sum of products:
 * own gamma_2 (|a c| + |b s|) (two products and a sum, or a product and a fused multiply-add), propagated
 * |c| e_a + |s| e_b + |a| e_c + |b| e_s (+ the cross terms), the smaller of that and its probabilistic bound
 * (par_prop_bound: the four terms are a linear combination); storage by finish(). NaN and Inf follow IEEE 754 on
 * the ideal operands (inf * 0 is NaN); a pair whose products may overflow the arithmetic is "anything".
 *
 * sdpa: for query row i of head h (key/value head h / (Hq / Hkv)): t_j = scale (q_i . k_j) + mask[i, j] for the
 * visible keys j (is_causal: j <= i, PyTorch's top-left alignment; the others are exact -inf), p = softmax(t),
 * o_i = sum_j p_j v_j. Budget, in three stages, each the rule of its own op:
 *   scores       the dot product of D terms (dot.h: gamma_D of the held magnitude, the inputs' budgets propagated,
 *                the overflow mark), then the scaling (u |t| plus the scale's own rounding to the arithmetic when
 *                it is not exact in it, times |q . k|) and the mask's addition (u |t| + the mask's budget);
 *   softmax      softmax.c's row budget on the scores with those budgets, scales and flush parts (its bound holds
 *                for every held score within its budget, so a fused kernel's unstored scores and probabilities are
 *                covered, and its storage term covers a decomposed graph that stores them); the probabilities'
 *                scales and flush parts as the interpreter's scale and flush passes give the softmax node of the
 *                decomposed form (the row run on the scores' scales, and on their flush parts);
 *   output       the dot product of Skv terms p_j v_j (dot.h again), p carrying the softmax's budgets: a backend
 *                that divides once at the end (sum_j e^(t_j - m) v_j / sum_j e^(t_j - m)) makes the same relative
 *                errors on the same terms. The streaming form of flash attention rescales the running sum and the
 *                accumulators by c = exp(m_old - m_new) at each new maximum, at most Skv - 1 times: the same
 *                computed c multiplies a term in the numerator and in the denominator, so c's own error cancels
 *                in the ratio, and only the multiplications' roundings remain, (Skv - 1) u relative on each side:
 *                gamma_{2 Skv} of the terms' magnitude sum_j (p_j + e_pj)(|v_j| + e_vj) is added.
 * A row whose keys are all masked (every t_j = -inf) is NaN, as PyTorch's math path gives.
 *
 * slice_scatter: a copy of x with src written over rows [start, start + len) of dimension dim: pure data movement
 * (PAR_OPF_EXACT), each output element carries the budget of the element it copies.
 */
#include "reference.h"
#include "dot.h"
#include "elem_util.h"
#include "softmax.h"

#include "core/shape.h"

#include <stdlib.h>

static par_status float_inputs(const char *op, const par_rt *const *in, int32_t n, par_msg *msg)
{
    for (int32_t i = 0; i < n; i++)
        if (in[i] && !is_float(in[i]->dtype))
            return par_msgf(msg, PAR_UNSUPPORTED, "%s: input %d: dtype %s reached the float kernel (only f32, f16, "
                            "f64)", op, (int)i, par_dtype_name(in[i]->dtype));
    return PAR_OK;
}

/* Budget of one rope output y = f c -+ g s (f the pair's element in place, g its partner; values, budgets e and
 * scales s of each): own gamma_2 (|f c| + |g s|), propagated |c| e_f + |s| e_g + |f| e_c + |g| e_s and the cross
 * terms, or its probabilistic bound. */
static double rope_budget(double y, double f, double ef, double sf, double g, double eg, double sg, double c,
                          double ec, double sc, double s, double es, double ss, const par_prec *pr)
{
    const double mag = bmul(fabs(f) + ef, fabs(c) + ec) + bmul(fabs(g) + eg, fabs(s) + es);
    const double t = bmul(fabs(c), ef) + bmul(fabs(s), eg) + bmul(fabs(f), ec) + bmul(fabs(g), es) + bmul(ef, ec) +
                     bmul(eg, es);
    const double t1 = bmul(fabs(c), sf), t2 = bmul(fabs(s), sg), t3 = bmul(fabs(f), sc), t4 = bmul(fabs(g), ss);
    const double p = par_prop_bound(t, t1 * t1 + t2 * t2 + t3 * t3 + t4 * t4);
    return finish(y, p, bmul(par_gamma(2, pr->u), mag) + par_eta(pr, 2), pr);
}

par_status par_ref_rope(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    par_rope_geom q;
    par_status st = par_rope_geom_of(c->g, c->n, &q, msg);
    if (st == PAR_OK) st = float_inputs("rope", in, 3, msg);
    if (st != PAR_OK) return st;
    const par_rt *x = in[0], *cs = in[1], *sn = in[2];
    par_rt *y = out[0];
    const double *xs = par_rt_scales(x), *css = par_rt_scales(cs), *sns = par_rt_scales(sn);
    const par_prec *pr = &c->prec;
    const int64_t half = q.D / 2;
    for (int64_t r = 0; r < q.rows; r++) {
        const int64_t base = r * q.D, pos = r % q.S;
        for (int64_t i = 0; i < half; i++) {
            const int64_t ia = base + (q.interleaved ? 2 * i : i), ib = base + (q.interleaved ? 2 * i + 1 : i + half);
            const int64_t t = pos * half + i;
            const double a = x->v[ia], b = x->v[ib], cv = cs->v[t], sv = sn->v[t];
            const double ea = x->e[ia], eb = x->e[ib], ec = cs->e[t], es = sn->e[t];
            const double sa = xs[ia], sb = xs[ib], sc = css[t], ss = sns[t];
            /* y_a = a c - b s and y_b = b c + a s: the same four products, paired differently */
            const double ya = a * cv - b * sv, yb = b * cv + a * sv;
            y->e[ia] = rope_budget(ya, a, ea, sa, b, eb, sb, cv, ec, sc, sv, es, ss, pr);
            y->e[ib] = rope_budget(yb, b, eb, sb, a, ea, sa, cv, ec, sc, sv, es, ss, pr);
            /* a product of finite operands may overflow the arithmetic although the ideal sum is finite (docs/ops.md,
             * "NaN and Inf"); infinite operands follow IEEE 754 */
            const double ovf = par_ovf_arith(pr);
            if (isfinite(a) && isfinite(b) && isfinite(cv) && isfinite(sv) &&
                ((fabs(a) + ea) * (fabs(cv) + ec) > ovf || (fabs(b) + eb) * (fabs(sv) + es) > ovf ||
                (fabs(b) + eb) * (fabs(cv) + ec) > ovf || (fabs(a) + ea) * (fabs(sv) + es) > ovf))
                par_mark_any(c, ia), par_mark_any(c, ib);
            y->v[ia] = ya;
            y->v[ib] = yb;
        }
    }
    return PAR_OK;
}

/* One query row's scores (S: value, budget, scale and flush part per key), their softmax (P: the probabilities' value,
 * budget, scale and flush part), then the Dv outputs. */
static void sdpa_row(const par_ref_ctx *c, const par_sdpa_geom *q, const par_rt *const *in, int64_t b, int64_t h,
                     int64_t i, par_rt *S, par_rt *P, par_rt *y)
{
    const par_prec *pr = &c->prec;
    const par_rt *qt = in[0], *kt = in[1], *vt = in[2], *mt = in[3];
    const int64_t hk = h / (q->Hq / q->Hkv);
    const int64_t qrow = ((b * q->Hq + h) * q->Sq + i) * q->D, kv0 = (b * q->Hkv + hk) * q->Skv;
    /* the scale's rounding to the arithmetic (1/sqrt(D) is exact for D a power of 4) */
    const double scale_r = const_rounding(q->scale, pr) / q->scale;
    const int64_t orow = ((b * q->Hq + h) * q->Sq + i) * q->Dv;
    int ovf = 0;
    for (int64_t j = 0; j < q->Skv; j++) {
        if (q->causal && j > i) {
            S->v[j] = -INFINITY, S->e[j] = S->s[j] = 0;
            if (S->f) S->f[j] = 0;
            continue;
        }
        dot_acc a = {0};
        for (int64_t d = 0; d < q->D; d++) dot_add(&a, pr, qt, qrow + d, kt, (kv0 + j) * q->D + d);
        ovf |= dot_finish(&a, NULL, 0, pr, S, j); /* a score's partial sums may overflow: the whole row */
        double t = q->scale * S->v[j];
        /* the scaling's and the mask's roundings, in the budget and (as the mul and add nodes of the decomposed
         * form give them) in the scale; the flush part scales with the score */
        double own = pr->u * fabs(t) + bmul(scale_r, fabs(t));
        double e = q->scale * S->e[j] + own, s = q->scale * S->s[j] + own, f = S->f ? q->scale * S->f[j] : 0;
        int masked = 0; /* an exact -inf of the mask on a finite score: exactly -inf, budget 0 (softmax.c) */
        if (mt) {
            const int64_t mi = b * q->mask_stride[0] + h * q->mask_stride[1] + i * q->mask_stride[2] +
                               j * q->mask_stride[3];
            masked = isinf(mt->v[mi]) && mt->v[mi] < 0 && mt->e[mi] == 0 && isfinite(t);
            t += mt->v[mi];
            e += mt->e[mi] + pr->u * fabs(t);
            s += par_rt_scales(mt)[mi] + pr->u * fabs(t);
            f += mt->f ? mt->f[mi] : 0;
        }
        S->v[j] = t;
        S->e[j] = masked ? 0 : isfinite(t) && e == e ? e : INFINITY;
        S->s[j] = masked ? 0 : fmin(s, S->e[j]);
        if (S->f) S->f[j] = masked ? 0 : fmin(f, S->e[j]);
    }
    /* The probabilities as the softmax node of the decomposed form gets them (docs/budgets/attention.md): the budget
     * from the scores' budgets, scales and flush parts (the first-order bound takes rule 5 over the scales); the
     * scale from the same row run on the scores' scales, without flushing (the interpreter's scale pass); the flush
     * part from the row run on the scores' flush parts without rounding (its flush pass). */
    par_softmax_row(pr, 0, S->v, S->e, S->s, S->f, q->Skv, 1, P->v, P->e);
    par_prec ps = *pr, pf = *pr;
    ps.flush = 0;
    pf.u = pf.u_store = pf.fn_ulps = 0;
    par_softmax_row(&ps, 0, S->v, S->s, NULL, NULL, q->Skv, 1, P->v, P->s);
    if (P->f) par_softmax_row(&pf, 0, S->v, S->f, NULL, NULL, q->Skv, 1, P->v, P->f);
    for (int64_t j = 0; j < q->Skv; j++) {
        P->s[j] = fmin(P->s[j], P->e[j]);
        if (P->f) P->f[j] = fmin(P->f[j], P->e[j]);
    }
    for (int64_t d = 0; d < q->Dv; d++) {
        dot_acc a = {0};
        for (int64_t j = 0; j < q->Skv; j++) dot_add(&a, pr, P, j, vt, (kv0 + j) * q->Dv + d);
        if (dot_finish(&a, NULL, 0, pr, y, orow + d) || ovf) par_mark_any(c, orow + d);
        y->e[orow + d] += bmul(par_gamma(2 * q->Skv, pr->u), a.mag); /* the streaming form's rescalings */
    }
}

par_status par_ref_sdpa(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    par_sdpa_geom q;
    par_status st = par_sdpa_geom_of(c->g, c->n, &q, msg);
    if (st == PAR_OK) st = float_inputs("sdpa", in, 4, msg);
    if (st != PAR_OK) return st;
    par_rt S = {.dtype = PAR_DTYPE_F64, .rank = 1, .dims = {q.Skv}, .numel = q.Skv}, P = S;
    double *buf = malloc((size_t)q.Skv * 8 * sizeof(double));
    if (!buf) return par_msgf(msg, PAR_ERROR, "sdpa: out of memory for a row of %lld scores", (long long)q.Skv);
    S.v = buf, S.e = buf + q.Skv, S.s = buf + 2 * q.Skv, S.f = buf + 3 * q.Skv;
    P.v = buf + 4 * q.Skv, P.e = buf + 5 * q.Skv, P.s = buf + 6 * q.Skv, P.f = buf + 7 * q.Skv;
    if (!(c->prec.flush > 0)) S.f = P.f = NULL; /* flush parts are flushing's alone (docs/oracle.md) */
    for (int64_t b = 0; b < q.B; b++)
        for (int64_t h = 0; h < q.Hq; h++)
            for (int64_t i = 0; i < q.Sq; i++) sdpa_row(c, &q, in, b, h, i, &S, &P, out[0]);
    free(buf);
    return PAR_OK;
}

par_status par_ref_slice_scatter(const par_ref_ctx *c, const par_rt *const *in, par_rt *const *out, par_msg *msg)
{
    par_scatter_geom q;
    par_status st = par_slice_scatter_geom_of(c->g, c->n, &q, msg);
    if (st == PAR_OK) st = float_inputs("slice_scatter", in, 2, msg);
    if (st != PAR_OK) return st;
    const par_rt *x = in[0], *src = in[1];
    par_rt *y = out[0];
    for (int64_t o = 0; o < q.outer; o++)
        for (int64_t r = 0; r < q.extent; r++) {
            const int in_src = r >= q.start && r < q.start + q.len;
            const par_rt *from = in_src ? src : x;
            const int64_t fi = in_src ? (o * q.len + r - q.start) * q.inner : (o * q.extent + r) * q.inner;
            const int64_t yi = (o * q.extent + r) * q.inner;
            for (int64_t k = 0; k < q.inner; k++) {
                y->v[yi + k] = from->v[fi + k];
                y->e[yi + k] = from->e[fi + k];
            }
        }
    return PAR_OK;
}
